#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# check-includes.sh DIR - the include graph and the names of
# DIR/rdmafast/**/*.h, checked against the visibility rule (rdmafast.h):
#
#   - no header includes itself through others (no cycle);
#   - the layering rules below hold, through any chain of includes;
#   - hw/ holds hardware formats, byte order and barriers: its headers
#     include only hw/ and compiler.h, and define no queue, doorbell or
#     completion-record names (rf_sq_, rf_cq_, rf_rq_, rf_srq_, rf_ring_,
#     rf_bf_, rf_wc_, RF_WC_);
#   - private and detail/ agree: every name a detail/ header defines
#     starts rf__ or RF__, and no header outside detail/ defines one;
#   - detail/ includes compiler.h, version.h, hw/, detail/ and the core
#     public headers ($CORE) only, never an operation header;
#   - no header is over 600 lines;
#   - every <rdmafast/...> include names a header that exists.
#
# Prints every violation with the chain that causes it and exits 1, or
# exits 0 silently. check-includes.sh --self-test checks that each rule
# fails on a tree built to break it.
set -eu

# "HEADER: HEADERS it must not reach", one rule a line.
RULES='
types.h: sq.h cq.h cq_types.h rq.h srq.h
rq.h: sq.h cq.h cq_types.h
srq.h: sq.h cq.h cq_types.h
mad.h: sq.h cq.h cq_types.h
cq.h: sq.h rq.h srq.h
cq_types.h: sq.h rq.h srq.h
doorbell.h: hw/wqe.h
'

# The public headers detail/ may include: the objects (types, doorbell,
# queues, the checked build's hooks) and the verbs glue, whose types the
# machinery works on. Everything else public is an operation header,
# which includes detail/ and is never included by it.
CORE='compiler.h version.h types.h doorbell.h checked.h sq.h sq_slots.h sq_wr.h rq.h srq.h cq_types.h cq.h verbs.h verbs/conn.h'

MAX_LINES=600

# defs FILE: the names FILE defines at file scope, one a line: macros
# (but those it takes back with #undef: lent to another header while it
# is read), tags, typedefs, functions (the return type on the name's
# line, as every header here writes them) and enum constants of RF_ or
# RF__.
defs() {
	awk '
	/^[ \t]*\/\*/ && !/\*\// { c = 1 }
	c { if (/\*\//) c = 0; next }
	/^#[ \t]*define[ \t]/ {
		n = $0; sub(/^#[ \t]*define[ \t]+/, "", n); sub(/[^A-Za-z0-9_].*/, "", n)
		mac[n] = 1; next }
	/^#[ \t]*undef[ \t]/ {
		n = $0; sub(/^#[ \t]*undef[ \t]+/, "", n); sub(/[^A-Za-z0-9_].*/, "", n)
		delete mac[n]; next }
	/^(struct|union|enum)[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\{/ { print $2; next }
	/^typedef/ {
		n = $0; sub(/;.*/, "", n); sub(/__attribute__.*/, "", n); sub(/\).*/, "", n)
		gsub(/[^A-Za-z0-9_]+/, " ", n); k = split(n, w, " "); print w[k]; next }
	/^[A-Za-z_]/ && !/^(RF_BEGIN_DECLS|RF_END_DECLS|RF_STATIC_ASSERT|extern)/ && /\(/ {
		n = $0; gsub(/__attribute__\(\(([^()]|\([^()]*\))*\)\)/, "", n)
		if (n !~ /\(/)
			next	# attributes alone: the name is on the next line
		sub(/\(.*/, "", n); gsub(/\*/, " ", n); k = split(n, w, /[ \t]+/)
		if (w[k] ~ /^[A-Za-z_][A-Za-z0-9_]*$/) print w[k]; next }
	/^\t(RF_|RF__)[A-Z0-9_]*[ \t]*=/ { n = $1; sub(/=.*/, "", n); print n }
	END { for (n in mac) print n }
	' "$1" | grep -v '^RDMAFAST_' | sort -u
}

check() {
	dir=$1
	[ -d "$dir/rdmafast" ] || { echo "check-includes: no $dir/rdmafast" >&2; return 2; }
	find "$dir/rdmafast" -name '*.h' | sort | while read -r f; do
		h=${f#"$dir"/rdmafast/}
		printf 'F %s %s\n' "$h" "$(wc -l <"$f")"
		defs "$f" | sed "s|^|D $h |"
		sed -n 's|^[ 	]*#[ 	]*include[ 	]*[<"]rdmafast/\([^>"]*\)[>"].*|\1|p' "$f" |
			sed "s|^|E ${f#"$dir"/rdmafast/} |"
	done | awk -v rules="$RULES" -v core="$CORE" -v max="$MAX_LINES" '
	BEGIN {
		nc = split(core, w, " ")
		for (i = 1; i <= nc; i++)
			iscore[w[i]] = 1
	}
	$1 == "F" {
		known[$2] = 1; order[++nf] = $2
		if ($3 + 0 > max + 0) {
			printf "check-includes: %s has %d lines: split it (at most %d)\n", $2, $3, max
			bad = 1
		}
		next
	}
	$1 == "D" {
		priv = $3 ~ /^(rf__|RF__)/
		if ($2 ~ /^detail\// && !priv) {
			printf "check-includes: %s defines %s: every name under detail/ is private (rf__, RF__)\n", $2, $3
			bad = 1
		} else if ($2 !~ /^detail\// && priv) {
			printf "check-includes: %s defines %s: private names (rf__, RF__) live under detail/\n", $2, $3
			bad = 1
		} else if ($2 ~ /^hw\// && $3 ~ /^(rf_(sq|cq|rq|srq|ring|bf|wc)_|rf_wc$|RF_WC_)/) {
			printf "check-includes: %s defines %s: hw/ holds formats, byte order and barriers, not queues, doorbells or completion records\n", $2, $3
			bad = 1
		}
		next
	}
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
				} else if (n ~ /^detail\// && m !~ /^(hw|detail)\// && !(m in iscore)) {
					printf "check-includes: %s includes %s: detail/ includes hw/, detail/ and the core public headers only, never an operation header\n", n, m
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
		rest=${spec#*=}
		for inc in $(echo "${rest%%=*}" | tr , ' '); do
			echo "#include <rdmafast/$inc>" >>"$root/rdmafast/$h"
		done
		case $rest in *=*)	# =NAMES: functions it defines
			for fn in $(echo "${rest#*=}" | tr , ' '); do
				echo "static inline int $fn(void) { return 0; }" >>"$root/rdmafast/$h"
			done ;;
		esac
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
	ok='compiler.h= hw/wqe.h=compiler.h doorbell.h=compiler.h types.h=hw/wqe.h sq.h=types.h,doorbell.h,detail/sq.h cq.h=types.h rq.h=types.h srq.h=types.h mad.h=types.h detail/sq.h=hw/wqe.h=rf__sq_x detail/sq_post.h=sq.h=rf__sq_post sq_data.h=sq.h,detail/sq_post.h=rf_sq_post_write'
	tree "$t" $ok && expect pass 'a layered tree'
	tree "$t" $ok sq_data.h=sq.h,sq_batch.h sq_batch.h=sq_data.h && expect fail 'a two-header cycle'
	tree "$t" $ok detail/a.h=detail/b.h detail/b.h=detail/c.h detail/c.h=detail/a.h && expect fail 'a three-header cycle'
	tree "$t" compiler.h= sq.h=compiler.h post.h=sq.h rq.h=post.h && expect fail 'rq.h pulling in sq.h through another header'
	tree "$t" compiler.h= sq.h=compiler.h srq.h=sq.h && expect fail 'srq.h including sq.h'
	tree "$t" compiler.h= cq.h=compiler.h mad.h=cq.h && expect fail 'mad.h including cq.h'
	tree "$t" compiler.h= cq.h=compiler.h types.h=cq.h && expect fail 'types.h including cq.h'
	tree "$t" compiler.h= rq.h=compiler.h cq.h=rq.h && expect fail 'cq.h including rq.h'
	tree "$t" compiler.h= hw/wqe.h=compiler.h doorbell.h=hw/wqe.h && expect fail 'doorbell.h including hw/wqe.h'
	tree "$t" $ok sq_dc.h=sq.h=rf__sq_dc_new && expect fail 'a private name defined in a public header'
	tree "$t" $ok detail/sq_new.h=sq.h=rf_sq_helper && expect fail 'a public name defined under detail/'
	tree "$t" $ok && printf 'static inline __attribute__((format(printf, 1, 2)))\nvoid rf__sq_log(const char *f, ...) {}\n' >>"$t/rdmafast/detail/sq.h" &&
		expect pass 'a private function under detail/, its attributes on the line before'
	tree "$t" $ok && printf 'static inline __attribute__((format(printf, 1, 2)))\nvoid rf_sq_log(const char *f, ...) {}\n' >>"$t/rdmafast/detail/sq.h" &&
		expect fail 'a public function under detail/, its attributes on the line before'
	tree "$t" $ok && printf '#define htobe32(x) (x)\n#undef htobe32\n' >>"$t/rdmafast/detail/sq.h" &&
		expect pass 'a macro lent under detail/ and taken back'
	tree "$t" $ok && printf '#define htobe32(x) (x)\n' >>"$t/rdmafast/detail/sq.h" &&
		expect fail 'a macro of another namespace kept under detail/'
	tree "$t" $ok hw/cqe.h=compiler.h=rf_wc_status_str && expect fail 'a completion-record name in hw/'
	tree "$t" $ok hw/ring.h=compiler.h=rf_ring_db && expect fail 'a doorbell ring in hw/'
	tree "$t" $ok detail/sq_more.h=sq_data.h && expect fail 'detail/ including an operation header'
	tree "$t" $ok && seq 601 | sed 's|^|/* |; s|$| */|' >>"$t/rdmafast/sq.h" && expect fail 'a header over 600 lines'
	tree "$t" compiler.h= sq.h=compiler.h hw/wqe.h=sq.h && expect fail 'hw/ including a queue'
	tree "$t" compiler.h= sq.h=compiler.h,gone.h && expect fail 'an include of a missing header'
	echo "check-includes self-test: every rule fails when broken"
}

case ${1:-} in
--self-test) self_test ;;
'') echo "usage: $0 DIR | --self-test" >&2; exit 2 ;;
*) check "$1" ;;
esac
