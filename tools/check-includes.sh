#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# check-includes.sh DIR - the include graph of DIR/rdmafast/**/*.h, checked:
#
#   - no header includes itself through others (no cycle);
#   - the layering rules below hold, through any chain of includes;
#   - hw/ holds hardware formats: its headers include only hw/ and
#     compiler.h;
#   - every <rdmafast/...> include names a header that exists.
#
# Prints every violation with the chain that causes it and exits 1, or
# exits 0 silently. check-includes.sh --self-test checks that each rule
# fails on a tree built to break it.
set -eu

# "HEADER: HEADERS it must not reach", one rule a line.
RULES='
types.h: sq.h cq.h rq.h srq.h
rq.h: sq.h cq.h
srq.h: sq.h cq.h
mad.h: sq.h cq.h
cq.h: sq.h rq.h srq.h
hw/doorbell.h: hw/wqe.h
'

check() {
	dir=$1
	[ -d "$dir/rdmafast" ] || { echo "check-includes: no $dir/rdmafast" >&2; return 2; }
	find "$dir/rdmafast" -name '*.h' | sort | while read -r f; do
		printf 'F %s\n' "${f#"$dir"/rdmafast/}"
		sed -n 's|^[ 	]*#[ 	]*include[ 	]*[<"]rdmafast/\([^>"]*\)[>"].*|\1|p' "$f" |
			sed "s|^|E ${f#"$dir"/rdmafast/} |"
	done | awk -v rules="$RULES" '
	$1 == "F" { known[$2] = 1; order[++nf] = $2; next }
	$1 == "E" { adj[$2, ++deg[$2]] = $3; next }

	# Depth-first search from n, reporting each back edge as a cycle.
	function visit(n,   i, m, k, s) {
		state[n] = 1
		stack[++sp] = n
		for (i = 1; i <= deg[n]; i++) {
			m = adj[n, i]
			if (!(m in known))
				continue
			if (state[m] == 1) {
				for (k = sp; stack[k] != m; k--)
					;
				s = stack[k]
				for (k++; k <= sp; k++)
					s = s " -> " stack[k]
				printf "check-includes: cycle: %s -> %s\n", s, m
				bad = 1
			} else if (!state[m]) {
				visit(m)
			}
		}
		sp--
		state[n] = 2
	}

	# The chain from a to b ("a -> ... -> b"), or "" when b is out of reach.
	function chain(a, b,   q, head, tail, n, i, m, s) {
		split("", from)
		split("", seen)
		head = tail = 1
		q[1] = a
		seen[a] = 1
		while (head <= tail) {
			n = q[head++]
			if (n == b) {
				s = b
				while (n != a) {
					n = from[n]
					s = n " -> " s
				}
				return s
			}
			for (i = 1; i <= deg[n]; i++) {
				m = adj[n, i]
				if (!(m in seen)) {
					seen[m] = 1
					from[m] = n
					q[++tail] = m
				}
			}
		}
		return ""
	}

	END {
		for (i = 1; i <= nf; i++) {
			n = order[i]
			for (j = 1; j <= deg[n]; j++) {
				m = adj[n, j]
				if (!(m in known)) {
					printf "check-includes: %s includes rdmafast/%s, which does not exist\n", n, m
					bad = 1
				} else if (n ~ /^hw\// && m !~ /^hw\// && m != "compiler.h") {
					printf "check-includes: %s includes %s: hw/ holds hardware formats and includes only hw/ and compiler.h\n", n, m
					bad = 1
				}
			}
		}
		for (i = 1; i <= nf; i++)
			if (!state[order[i]])
				visit(order[i])
		nr = split(rules, line, "\n")
		for (i = 1; i <= nr; i++) {
			if (line[i] == "")
				continue
			nw = split(line[i], w, /[: ]+/)
			if (!(w[1] in known))
				continue
			for (j = 2; j <= nw; j++) {
				if (w[j] == "")
					continue
				s = chain(w[1], w[j])
				if (s != "") {
					printf "check-includes: %s must not pull in %s: %s\n", w[1], w[j], s
					bad = 1
				}
			}
		}
		exit bad
	}'
}

# A tree with headers NAME=INCLUDES..., for the self-test.
tree() {
	root=$1
	shift
	rm -rf "$root"
	mkdir -p "$root/rdmafast/hw"
	for spec in "$@"; do
		h=${spec%%=*}
		mkdir -p "$(dirname "$root/rdmafast/$h")"
		: >"$root/rdmafast/$h"
		for inc in $(echo "${spec#*=}" | tr , ' '); do
			echo "#include <rdmafast/$inc>" >>"$root/rdmafast/$h"
		done
	done
}

expect() {	# expect pass|fail DESCRIPTION, on the tree in $t
	if check "$t" >"$t.out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" != "$1" ]; then
		echo "check-includes self-test: $2: expected $1, got $got" >&2
		cat "$t.out" >&2
		return 1
	fi
}

self_test() {
	base=$(mktemp -d)
	trap 'rm -rf "$base"' EXIT
	t=$base/inc
	# $ok is split into words on purpose: one header a word
	ok='compiler.h= hw/wqe.h=compiler.h hw/doorbell.h=compiler.h types.h=hw/wqe.h sq.h=types.h,hw/doorbell.h cq.h=types.h rq.h=types.h srq.h=types.h mad.h=types.h'
	tree "$t" $ok && expect pass 'a layered tree'
	tree "$t" $ok sq_data.h=sq.h,sq_batch.h sq_batch.h=sq_data.h && expect fail 'a two-header cycle'
	tree "$t" $ok detail/a.h=detail/b.h detail/b.h=detail/c.h detail/c.h=detail/a.h && expect fail 'a three-header cycle'
	tree "$t" compiler.h= sq.h=compiler.h post.h=sq.h rq.h=post.h && expect fail 'rq.h pulling in sq.h through another header'
	tree "$t" compiler.h= sq.h=compiler.h srq.h=sq.h && expect fail 'srq.h including sq.h'
	tree "$t" compiler.h= cq.h=compiler.h mad.h=cq.h && expect fail 'mad.h including cq.h'
	tree "$t" compiler.h= cq.h=compiler.h types.h=cq.h && expect fail 'types.h including cq.h'
	tree "$t" compiler.h= rq.h=compiler.h cq.h=rq.h && expect fail 'cq.h including rq.h'
	tree "$t" compiler.h= hw/wqe.h=compiler.h hw/doorbell.h=hw/wqe.h && expect fail 'hw/doorbell.h including hw/wqe.h'
	tree "$t" compiler.h= sq.h=compiler.h hw/wqe.h=sq.h && expect fail 'hw/ including a queue'
	tree "$t" compiler.h= sq.h=compiler.h,gone.h && expect fail 'an include of a missing header'
	echo "check-includes self-test: every rule fails when broken"
}

case ${1:-} in
--self-test) self_test ;;
'') echo "usage: $0 DIR | --self-test" >&2; exit 2 ;;
*) check "$1" ;;
esac
