#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# tests/asm/check-barriers.sh - read the barriers of the post, ring and poll
# paths (tests/asm/paths.c) in the compiled code of one architecture.
#
#   check-barriers.sh ARCH DISASSEMBLY     ARCH: x86_64 or aarch64
#   check-barriers.sh --self-test ARCH DISASSEMBLY
#
# DISASSEMBLY is objdump -d --no-show-raw-insn of paths.o. The emulator
# cannot find a missing or too weak barrier: it runs on the host's memory
# ordering (x86 TSO, also under qemu-user), so this is what guards them.
# On x86-64 it also counts the 16-byte moves a ringing post stores its WQE
# and its BlueFlame lines with (struct rf__wqe_v16 in detail/wqe_regs.h):
# the same WQE in 8-byte words costs that post about a nanosecond.
# --self-test first doctors the disassembly the way a regression would
# (a weaker dmb, a dropped sfence, an lfence added to the poll) and demands
# that each doctored copy fails, then checks the real one.
set -u

body() {	# body FUNCTION: its instructions, "mnemonic operands" a line
	awk -v f="<$1>:" '$2 == f { p = 1; next } p && NF == 0 { exit }
	    p { sub(/^[ \t]*[0-9a-f]+:[ \t]*/, ""); sub(/[ \t]*\/\/.*/, ""); gsub(/\t/, " ");
	        print }' "$DIS"
}
fences() {	# fences: the fences of the instructions on stdin, one line
	awk '$1 ~ /^(dmb|dsb|isb|sfence|lfence|mfence)$/ { printf "%s%s", s, $0; s = ", " }'
}
barriers() {	# barriers FUNCTION: its fences in address order, one line
	body "$1" | fences
}
# the fences from the entry to the first return: the path the compiler laid
# out first, which for a post that rings itself is BlueFlame from registers
first_path() {
	body "$1" | awk '{ print } $1 == "ret" { exit }' | fences
}
# the 16-byte stores from a register on the path first_path() reads (x86-64)
v16_stores() {
	body "$1" | awk '{ print } $1 == "ret" { exit }' |
	    awk '$1 ~ /^mov(aps|dqa|ups|dqu)$/ && $2 ~ /^%xmm[0-9]+,.*\(/ { n++ } END { print n + 0 }'
}
# barriers and stores, for the order of the doorbell steps (aarch64)
steps() {
	body "$1" | awk '$1 ~ /^(dmb|dsb)$/ { printf "%s%s", s, $1 " " $2; s = ", " }
	    $1 ~ /^st(r|p|ur|64b)/ { printf "%sstore", s; s = ", " }'
}

fail=0
expect() {	# expect WHAT GOT WANT
	if [ "$2" != "$3" ]; then
		echo "check-barriers: $ARCH: $1: got \"$2\", want \"$3\""
		fail=1
	fi
}
expect_match() {	# expect_match WHAT GOT EXTENDED-REGEX
	if ! printf '%s\n' "$2" | grep -Eq "$3"; then
		echo "check-barriers: $ARCH: $1: got \"$2\", want /$3/"
		fail=1
	fi
}

check() {
	for f in rf_asm_post rf_asm_ring_db rf_asm_ring_bf rf_asm_post_ring rf_asm_post_inline_ring \
		 rf_asm_post_dc_ring rf_asm_sq_ring rf_asm_poll; do
		[ -n "$(body $f)" ] || { echo "check-barriers: $ARCH: $f not in $DIS"; fail=1; }
	done
	expect "post (no ring) has no barrier" "$(barriers rf_asm_post)" ""
	case $ARCH in
	x86_64)
		# TSO: the DMA barriers are compiler barriers; the WC stores
		# need sfence before (mmio_wc_start), and after
		# (mmio_flush_writes) when they leave a line partly written: the
		# doorbell, not a BlueFlame copy (rf_mmio_flush_lines(), hw/barrier.h).
		expect "doorbell" "$(barriers rf_asm_ring_db)" "sfence, sfence"
		expect "BlueFlame copy" "$(barriers rf_asm_ring_bf)" "sfence"
		expect "post with RF_SEND_RING, BlueFlame from registers" \
			"$(first_path rf_asm_post_ring)" "sfence"
		expect "DCI post with RF_SEND_RING, two BBs from registers" \
			"$(first_path rf_asm_post_dc_ring)" "sfence"
		# one move a DS: ctrl, raddr, data to the queue, then with
		# the zeros that end the line to BlueFlame (DCI: 6 and 8; an
		# inline write: ctrl and raddr, the payload's zeros to BlueFlame)
		expect "post with RF_SEND_RING, 16-byte stores" "$(v16_stores rf_asm_post_ring)" 7
		expect "inline post with RF_SEND_RING, 16-byte stores" \
			"$(v16_stores rf_asm_post_inline_ring)" 5
		expect "inline post with RF_SEND_RING, BlueFlame from registers" \
			"$(first_path rf_asm_post_inline_ring)" "sfence"
		expect "DCI post with RF_SEND_RING, 16-byte stores" \
			"$(v16_stores rf_asm_post_dc_ring)" 14
		expect_match "rf_sq_ring" "$(barriers rf_asm_sq_ring)" '^sfence(, sfence)+$'
		# loads are not reordered with older loads: no lfence
		expect "poll" "$(barriers rf_asm_poll)" ""
		;;
	aarch64)
		# dmb oshst: WQE stores before the dbrec store; dsb st: the
		# dbrec before the MMIO store, and the WC store out (flush).
		expect "doorbell steps" "$(steps rf_asm_ring_db)" \
			"dmb oshst, store, dsb st, store, dsb st, store"
		expect_match "BlueFlame copy starts" "$(steps rf_asm_ring_bf)" \
			'^dmb oshst, store, dsb st, '
		expect_match "BlueFlame copy fences" "$(barriers rf_asm_ring_bf)" \
			'^dmb oshst(, dsb st){3,}$'
		expect_match "BlueFlame copy has the ST64B path" "$(steps rf_asm_ring_bf)" 'store'
		expect_match "BlueFlame copy has the ST64B path" "$(body rf_asm_ring_bf)" '^st64b'
		expect "post with RF_SEND_RING, BlueFlame from registers" \
			"$(first_path rf_asm_post_ring)" "dmb oshst, dsb st, dsb st"
		expect_match "DCI post with RF_SEND_RING, two BBs from registers" \
			"$(barriers rf_asm_post_dc_ring)" '^dmb oshst, dsb st(, (dmb oshst|dsb st))+$'
		expect_match "rf_sq_ring fences" "$(barriers rf_asm_sq_ring)" \
			'^dmb oshst(, (dmb oshst|dsb st))+$'
		# dmb oshld after the owner check, before the CQE body; no dsb
		expect_match "poll fences" "$(barriers rf_asm_poll)" '^dmb oshld(, dmb oshld)*$'
		;;
	*)	echo "check-barriers: no expectations for $ARCH"; fail=1 ;;
	esac
}

self_test=0
[ "${1:-}" = --self-test ] && { self_test=1; shift; }
ARCH=$1 REAL=$2

if [ $self_test = 1 ]; then
	tmp=${TMPDIR:-/tmp}/check-barriers.$$
	case $ARCH in
	x86_64)  set -- '/<rf_asm_ring_db>:/,/^$/{/sfence/{x;s/^/x/;/^x$/{x;d};x}}' \
	                '/<rf_asm_ring_bf>:/,/^$/{/sfence/d}' \
	                '/<rf_asm_post_ring>:/,/^$/{/sfence/d}' \
	                '/<rf_asm_post_dc_ring>:/,/^$/{/sfence/d}' \
	                '/<rf_asm_post_ring>:/,/^$/{/movaps/s/movaps/movq/}' \
	                '/<rf_asm_poll>:/,/^$/{/ret/s/ret/lfence/}' ;;
	aarch64) set -- 's/dmb\toshst/dmb\tishst/' 's/dmb\toshld/dmb\tishld/' \
	                '/<rf_asm_ring_db>:/,/^$/{/dsb/{x;s/^/x/;/^x$/{x;d};x}}' \
	                's/st64b/stp/' 's/dmb\toshld/dsb\tld/' ;;
	esac
	for edit in "$@"; do
		sed "$edit" "$REAL" > "$tmp"
		DIS=$tmp fail=0
		check > /dev/null
		if [ $fail = 0 ]; then
			echo "check-barriers: self-test: $ARCH: the doctored code ($edit) passed"
			rm -f "$tmp"; exit 1
		fi
	done
	rm -f "$tmp"
	echo "check-barriers: self-test: $ARCH: $# doctored disassemblies fail"
fi
DIS=$REAL fail=0
check
[ $fail = 0 ] && echo "check-barriers: $ARCH: post, ring and poll have the expected barriers"
exit $fail
