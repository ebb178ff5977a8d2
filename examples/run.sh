#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# examples/run.sh - the two-process showcase on the emulated HCA.
#
# Runs each example as a server and a client process under build/rfemu
# (the emulated ConnectX; set RF_DEVICE=hw to use a real device instead),
# prints both sides' reports, and exits non-zero if any side failed.
#
#   make run                       (RF_BUILD=build sh examples/run.sh)
#   make examples-run              (the same with --all: every example)
#   make examples-checked-run      (--all on the checked build, -DRF_CHECKED)
#   RF_BUILD=build sh examples/run.sh [--all]
set -u

ALL=0
[ "${1:-}" = --all ] && ALL=1

B=${RF_BUILD:-build}
EX=${RF_EXAMPLES:-$B/examples}	# RF_EXAMPLES: the programs' folder (the checked build's)
if [ "${RF_DEVICE:-emu}" = hw ]; then
	RUN=""
else
	RUN="$B/rfemu --"
	if [ ! -x "$B/rfemu" ]; then
		echo "run.sh: $B/rfemu not built (make emu)" >&2
		exit 1
	fi
fi
# RF_PORT_BASE: the first port less one.  Else below Linux's ephemeral
# ports (ip_local_port_range, 32768 up): a client's connect() retries take
# those, and one that held a server's port made its bind() EADDRINUSE.
PORT=${RF_PORT_BASE:-$(( 10000 + $$ % 20000 ))}
LOG=$(mktemp -d "${TMPDIR:-/tmp}/rdmafast-run.XXXXXX")
trap 'rm -rf "$LOG"' EXIT
failed=0

# pair NAME ARGS...: server in the background, client in the foreground,
# each bounded by a timeout; both outputs are shown, server first.
pair() {
	name=$1
	shift
	PORT=$((PORT + 1))
	echo "==> $name $*"
	timeout 120 $RUN "$EX/$name" -p "$PORT" "$@" > "$LOG/$name.server" 2>&1 &
	spid=$!
	timeout 120 $RUN "$EX/$name" -p "$PORT" "$@" 127.0.0.1 > "$LOG/$name.client" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	sed 's/^/    /' "$LOG/$name.server"
	sed 's/^/    /' "$LOG/$name.client"
	if [ "$src" -ne 0 ] || [ "$crc" -ne 0 ]; then
		echo "    !! $name failed (server exit $src, client exit $crc)"
		failed=$((failed + 1))
	fi
	echo
}

# group NAME CLIENTS ARGS...: one server, CLIENTS clients at once.
group() {
	name=$1
	n=$2
	shift 2
	PORT=$((PORT + 1))
	echo "==> $name $* (one server, $n clients)"
	timeout 120 $RUN "$EX/$name" -p "$PORT" --window "$n" "$@" > "$LOG/$name.server" 2>&1 &
	spid=$!
	cpids=""
	for i in $(seq "$n"); do
		timeout 120 $RUN "$EX/$name" -p "$PORT" "$@" 127.0.0.1 > "$LOG/$name.client$i" 2>&1 &
		cpids="$cpids $!"
	done
	bad=0
	for p in $cpids; do
		wait "$p" || bad=1
	done
	wait "$spid" || bad=1
	sed 's/^/    /' "$LOG/$name.server"
	for i in $(seq "$n"); do
		sed 's/^/    /' "$LOG/$name.client$i"
	done
	if [ "$bad" -ne 0 ]; then
		echo "    !! $name failed"
		failed=$((failed + 1))
	fi
	echo
}

echo "rdmafast examples: two processes each (dc_pingpong: four), on $([ -n "$RUN" ] && echo "the emulated HCA ($B/rfemu)" || echo "real hardware")"
echo
# Latency: RDMA WRITE with immediate, then SEND/receive, then the same
# inline and sleeping in the completion channel (CQ arming, events).
pair rc_pingpong --iters 200 --size 64
pair rc_pingpong --iters 100 --size 32 --inline --events
# Throughput: doorbell batching and selective signaling, writes and reads.
pair rc_bw --iters 4000 --size 4096 --batch 16
# A counter in the server's memory, incremented by both processes with
# fetch-and-add and compare-and-swap.
pair atomics --iters 200
# Dynamically Connected: one DCT and one DCI per process, three clients
# reaching the server's DCT while its one DCI answers each in turn.
group dc_pingpong 3 --iters 200
# Four RC QPs into one SRQ, refilled only from its limit event.
pair srq_pingpong --iters 200
# MPI-style tagged messages on hardware tag matching: eager ones the
# device matched and ones it did not, and rendezvous the device READs.
pair tm_pingpong --iters 60 --size 64
# MADs of several classes on UD QPs, each side's tap printing only what
# its snoop filter selects (errors only; one vendor class of one OUI).
pair mad_snoop
# UD datagrams through an address handle, answered one by one.
pair ud_pingpong --iters 100
# A memory window granted onto part of a buffer, written through, revoked
# (invalidated; bound again with a new tag): the next write is refused.
pair mw_grant
# A storage-style write through a T10-DIF signature key: protection added
# on the way, checked at the target, a corrupted block reported.
pair umr_dif
# Connected with the RDMA connection manager (librdmacm), then a SEND
# ping-pong with rdmafast on the QP rdma_create_qp() made.
pair cm_pingpong --iters 200 --size 64

# --all (make examples-run): the examples of more than two processes.
if [ "$ALL" = 1 ]; then
	# Four XRC client processes into the two XRC SRQs of each of two
	# server processes that share one XRC domain through a file.
	pair xrc_pingpong --iters 100
	# UD multicast: three client processes attached to one group, each
	# receiving every message the server sends to it once; on InfiniBand,
	# then on RoCE v2 (the emulated ports as Ethernet).
	group ud_pingpong 3 --mcast --iters 100
	if [ -n "$RUN" ]; then
		ib_run=$RUN
		RUN="$B/rfemu -l eth --"
		echo "(RoCE v2)"
		group ud_pingpong 3 --mcast --iters 100
		RUN=$ib_run
	fi
fi

if [ "$failed" -ne 0 ]; then
	echo "run.sh: $failed example run(s) FAILED"
	exit 1
fi
echo "run.sh: every example passed its checks"
