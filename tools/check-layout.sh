#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# check-layout.sh - the folders of emu/ depend on each other as a DAG.
#
#   tools/check-layout.sh SRCDIR OBJECT...  e.g. emu build/emu/*/*.o
#   tools/check-layout.sh --self-test       the checker finds cycles it is shown
#
# Two graphs between the folders SRCDIR/*/ are checked, and each must be
# acyclic (an object's folder is the directory it is in):
#
#  includes  folder A -> B when a file of A includes a header of B
#            (#include "B/x.h", found in SRCDIR, or "x.h" beside the file);
#  links     folder A -> B when an object of A leaves a symbol
#            undefined (nm -u) that an object of B defines
#            (nm --defined-only).  A symbol that A defines itself is no edge,
#            weak defaults included: the kernel's weak emu_dev_* hooks are
#            its own, the device model above overrides them.  A C library
#            name counts like any other: inside librfemu.so a call to
#            close() lands in interpose/'s close(), so a folder below it
#            that calls close() depends on interpose/; those folders call
#            the C library through base/'s emu_real_* (base/real.h).
#
# On success it prints each graph's edges, lowest folders first; on a cycle
# it prints the cycle with the header or symbol behind each edge and fails.
# Cycles between files of one folder are allowed, but for one: a folder's
# engine.c (the loop that calls its neighbours' passes) defines nothing its
# neighbours call; what they share with it lies beneath them (device/state.c).
set -eu

CC=${CC:-cc}
NM=${NM:-nm}

die() { echo "check-layout: $*" >&2; exit 2; }

# Edges "from to why" on stdin.  Prints the cycle and returns 1 if there is
# one, else prints the edges in dependency order.
check_graph() {
	kind=$1
	awk -v kind="$kind" '
	{
		if (!($1 in nodes)) { nodes[$1]; nnodes++ }
		if (!($2 in nodes)) { nodes[$2]; nnodes++ }
		key = $1 SUBSEP $2
		if ($1 != $2 && !(key in why)) {
			why[key] = $3
			adj[$1] = adj[$1] " " $2
		}
	}
	function dfs(u,    n, i, vs, v, j, path) {
		color[u] = 1; stack[++depth] = u
		n = split(adj[u], vs, " ")
		for (i = 1; i <= n; i++) {
			v = vs[i]
			if (color[v] == 1) {
				for (j = 1; stack[j] != v; j++) ;
				path = ""
				for (; j <= depth; j++)
					path = path stack[j] " -> "
				printf "check-layout: %s cycle: %s%s\n", kind, path, v
				for (j = 1; stack[j] != v; j++) ;
				for (; j < depth; j++)
					printf "    %s -> %s: %s\n", stack[j], stack[j + 1], why[stack[j], stack[j + 1]]
				printf "    %s -> %s: %s\n", u, v, why[u, v]
				return 1
			}
			if (!color[v] && dfs(v)) return 1
		}
		color[u] = 2; depth--
		return 0
	}
	END {
		for (u in nodes)
			if (!color[u] && dfs(u)) exit 1
		for (k in why) {
			split(k, p, SUBSEP)
			deps[p[1]] = deps[p[1]] " " p[2]
		}
		# lowest first: a folder after everything it depends on
		while (ndone < nnodes) {
			for (u in nodes) {
				if (u in done) continue
				n = split(deps[u], vs, " "); ok = 1
				for (i = 1; i <= n; i++) if (!(vs[i] in done)) ok = 0
				if (!ok) continue
				done[u]; ndone++
				line = deps[u] == "" ? " (none)" : deps[u]
				printf "check-layout: %s: %s ->%s\n", kind, u, line
			}
		}
	}'
}

# folder of an include of file $1 with quoted name $2, relative to $src
include_folder() {
	f=$1 h=$2 d=$(dirname "$1")
	if [ -e "$d/$h" ]; then p="$d/$h"
	elif [ -e "$src/$h" ]; then p="$src/$h"
	else echo "check-layout: $f: cannot find \"$h\"" >&2; return 1
	fi
	p=$(realpath -m "$p"); r=$(realpath -m "$src")
	case $p in "$r"/*/*) ;; *) return 0 ;; esac
	p=${p#"$r"/}; echo "${p%%/*}"
}

include_edges() {
	for f in "$src"/*/*.c "$src"/*/*.h; do
		[ -e "$f" ] || continue
		from=$(basename "$(dirname "$f")")
		echo "$from $from -"
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		while read -r h; do
			if to=$(include_folder "$f" "$h"); then
				[ -z "$to" ] || echo "$from $to ${f#"$src"/}:#include\"$h\""
			else
				echo "! unresolved"	# include_folder said which
			fi
		done
	done
}

link_edges() {
	tmp=$1; shift
	: > "$tmp/defs"; : > "$tmp/undefs"
	for o in "$@"; do
		dir=$(basename "$(dirname "$o")")
		echo "$dir $dir -"
		$NM --defined-only -g "$o" | awk -v d="$dir" 'NF == 3 { print $3, d }' >> "$tmp/defs"
		$NM -u "$o" | awk -v d="$dir" 'NF == 2 { print $2, d }' >> "$tmp/undefs"
	done
	sort -u -o "$tmp/defs" "$tmp/defs"
	sort -u -o "$tmp/undefs" "$tmp/undefs"
	# undefined symbol, user folder, defining folder
	join "$tmp/undefs" "$tmp/defs" > "$tmp/uses"
	awk 'FILENAME == ARGV[1] { own[$1, $2]; next }
	     !(($1, $2) in own) { print $2, $3, $1 }' "$tmp/defs" "$tmp/uses"
}

# A folder's engine.o and what its neighbours take from it: "user sym".
engine_uses() {
	for e in "$@"; do
		[ "$(basename "$e")" = engine.o ] || continue
		$NM --defined-only -g "$e" | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/engine"
		for o in "$@"; do
			[ "$o" != "$e" ] && [ "$(dirname "$o")" = "$(dirname "$e")" ] || continue
			$NM -u "$o" | awk 'NF == 2 { print $2 }' | sort -u |
				comm -12 - "$tmp/engine" | sed "s|^|${o#"$(dirname "$(dirname "$o")")"/} |"
		done
	done
}

run() {
	src=$1; shift
	[ -d "$src" ] || die "no $src"
	for o in "$@"; do [ -e "$o" ] || die "no $o (build first)"; done
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	st=0
	include_edges > "$tmp/inc"
	grep -q '^!' "$tmp/inc" && st=1
	grep -v '^!' "$tmp/inc" | check_graph includes || st=1
	link_edges "$tmp" "$@" > "$tmp/link"
	check_graph links < "$tmp/link" || st=1
	engine_uses "$@" > "$tmp/up"
	if [ -s "$tmp/up" ]; then
		sed 's/^\([^ ]*\) \(.*\)/check-layout: \1 calls up into its engine.c: \2/' "$tmp/up"
		st=1
	fi
	rm -rf "$tmp"; trap - EXIT
	return $st
}

# A two-folder tree: a/ above b/; with cyc=inc or link b/ reaching back into
# a/, with cyc=libc through a C library name that a/ interposes.
self_test_tree() {
	t=$1 cyc=$2
	mkdir -p "$t/src/a" "$t/src/b" "$t/obj/a" "$t/obj/b"
	printf '#include "b/b.h"\nint a_top(void) { return b_low(); }\nint a_back(void) { return 1; }\n' > "$t/src/a/a.c"
	printf 'int b_low(void);\n' > "$t/src/b/b.h"
	if [ "$cyc" = inc ]; then
		printf '#include "a/a.h"\n' >> "$t/src/b/b.h"; : > "$t/src/a/a.h"
	fi
	if [ "$cyc" = engine ]; then	# b/engine.c, and b/b.c calling into it
		printf 'int b_low(void);\nint b_pass(void) { return 0; }\nint b_loop(void) { return b_low(); }\n' > "$t/src/b/engine.c"
		printf 'int b_pass(void);\nint b_low(void) { return b_pass(); }\n' > "$t/src/b/b.c"
	elif [ "$cyc" = link ]; then
		printf 'int a_back(void);\nint b_low(void) { return a_back(); }\n' > "$t/src/b/b.c"
	elif [ "$cyc" = libc ]; then
		printf 'int close(int fd) { return fd; }\n' >> "$t/src/a/a.c"
		printf '#include <unistd.h>\nint b_low(void) { return close(0); }\n' > "$t/src/b/b.c"
	else
		printf 'int b_low(void) { return 0; }\n' > "$t/src/b/b.c"
	fi
	for f in a/a b/b b/engine; do
		[ -e "$t/src/$f.c" ] || continue
		$CC -c -I"$t/src" -o "$t/obj/$f.o" "$t/src/$f.c" || die "self-test: $CC failed"
	done
}

self_test() {
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	for c in none inc link libc engine; do
		rm -rf "${t:?}"/*
		self_test_tree "$t" $c
		if run "$t/src" "$t/obj"/*/*.o > "$t/out" 2>&1; then r=pass; else r=fail; fi
		want=fail; [ $c = none ] && want=pass
		if [ $r != $want ]; then
			cat "$t/out" >&2
			die "self-test: a tree with cycle '$c' should $want, it did $r"
		fi
	done
	rm -rf "$t"; trap - EXIT
	echo "check-layout: self-test passed (a clean tree passes, include, link and interposed-libc cycles and a call up into a folder's engine fail)"
}

case ${1:-} in
--self-test) self_test ;;
"" | -*) die "usage: $0 SRCDIR OBJECT... | --self-test" ;;
*) [ $# -ge 2 ] || die "usage: $0 SRCDIR OBJECT... | --self-test"; run "$@" ;;
esac
