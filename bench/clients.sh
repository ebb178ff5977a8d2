#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# bench/clients.sh - real clients on the emulated HCA (issue 29: "the
# emulated HCA as fast for programs that poll their own CQs").
#
#   make bench-clients                       (RF_BUILD=build bench/clients.sh)
#   RF_BUILD=build bench/clients.sh
#
# Each pair of processes runs under build/rfemu (one emulated host each) and
# talks over 127.0.0.1 only, the server started first:
#
#   ucx_perftest (ucx-utils), UCT: rc_mlx5 am_lat, rc_mlx5 put_lat,
#       dc_mlx5 put_lat                 (UCX polls its CQs inline)
#   ucx_perftest, UCP over rc_mlx5 with hardware tag matching
#       (UCX_RC_MLX5_TM_ENABLE=y: a TM SRQ, the tag list on its command QP,
#       rendezvous READs by the device): tag_lat and tag_bw at eager sizes
#       (8 B, 4 KiB) and a rendezvous one (64 KiB), each beside the same
#       run with UCX's software tag matching
#   ib_send_lat, ib_write_lat (perftest), 8 bytes: their twins, which poll
#       through ibv_poll_cq()
#   an 8-byte MPI ping-pong (bench/mpi_pingpong.c, Open MPI) between two
#       ranks, --mca pml ucx with UCX_TLS=rc_x, and its twin --mca pml ob1
#       --mca btl openib,self; openmpi-bin is installed with apt-get if
#       missing and we are root, else the MPI rows are skipped; then
#       the ping-pong with tag matching on (-x UCX_RC_MLX5_TM_ENABLE=y),
#       and bench/mpi_tags.c, tagged messages of 8 B to 1 MiB received
#       expected and unexpected with every byte checked (its failure is a
#       client's failure)
#
# and prints two tables: each figure (median one-way latency, us), its twin,
# the ratio and issue 29's goal (at most 2x the twin), "met" or "MISSED";
# then the tag-matching runs beside the same without it (no goal).
# Exit status: 0 when every measurement ran (a missed goal is reported, not
# a failure), 1 when a client failed (its stderr's tail is printed), 2 on a
# usage error.
#
# Environment: RF_BUILD (build), RFEMU (the launcher, $RF_BUILD/rfemu),
# RFEMU_STATE_DIR (a temporary one, removed at exit, if unset), ITERS
# (2000), WARMUP (200), TIMEOUT (120 s for each client), PORT_BASE (13337).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RF_BUILD:-build}
case $B in /*) ;; *) B=$ROOT/$B ;; esac
RFEMU=${RFEMU:-$B/rfemu}
ITERS=${ITERS:-2000}
WARMUP=${WARMUP:-200}
TIMEOUT=${TIMEOUT:-120}
PORT=${PORT_BASE:-13337}
SIZE=8

for v in ITERS WARMUP TIMEOUT PORT; do
	case ${!v} in ''|*[!0-9]*) echo "clients.sh: $v must be a number" >&2; exit 2 ;; esac
done
if [ ! -x "$RFEMU" ]; then
	echo "clients.sh: $RFEMU not built (make emu)" >&2
	exit 2
fi
if ! command -v timeout >/dev/null; then
	echo "clients.sh: timeout(1) missing (coreutils)" >&2
	exit 2
fi

# Our own children only: every server and client is started in the
# background and its pid noted; at exit those still alive are stopped.
PIDS=()
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rf-clients.XXXXXX") || exit 2
OWN_STATE=""
if [ -z "${RFEMU_STATE_DIR:-}" ]; then
	OWN_STATE=$(mktemp -d "${TMPDIR:-/tmp}/rfemu-clients.XXXXXX") || exit 2
	export RFEMU_STATE_DIR=$OWN_STATE
fi
# stop PID...: each is a timeout(1) we started, which leads a process group
# of its own (the client and what it started); TERM to those groups, KILL
# after 5 s. Only pids not yet reaped come here, so none is anybody else's.
stop() {
	local p alive
	for p in "$@"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
	done
	for _ in $(seq 50); do
		alive=0
		for p in "$@"; do
			kill -0 -- "-$p" 2>/dev/null && alive=1
		done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	for p in "$@"; do
		kill -KILL -- "-$p" 2>/dev/null
	done
}
cleanup() {
	local p
	if [ "${#PIDS[@]}" -gt 0 ]; then
		stop "${PIDS[@]}"
		for p in "${PIDS[@]}"; do
			wait "$p" 2>/dev/null
		done
	fi
	PIDS=()
	rm -rf "$WORK"
	[ -n "$OWN_STATE" ] && rm -rf "$OWN_STATE"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAILED=0
declare -A VAL      # figure name -> median one-way latency (us)
FAILS=()            # the failures in order, "name: why"

# A TCP port nobody listens on, from PORT upwards.
next_port() {
	PORT=$((PORT + 1))
	while ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q .; do
		PORT=$((PORT + 1))
	done
}

# Wait until something listens on port $1 (up to 15 s) or pid $2 ends.
wait_listen() {
	for _ in $(seq 150); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Run "$@" in the background under timeout, output to $LOG.out/.err;
# sets LASTPID. reap PID waits for it and forgets it (its pid may then be
# reused by anyone: only pids not yet reaped are ever signalled).
start() {
	local log=$1
	shift
	timeout -k 5 "$TIMEOUT" "$@" >"$log.out" 2>"$log.err" </dev/null &
	LASTPID=$!
	PIDS+=("$LASTPID")
}

reap() {
	local rc p keep=()
	wait "$1"; rc=$?
	for p in "${PIDS[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
	PIDS=("${keep[@]}")
	return "$rc"
}

# The tail of a failed side's output, indented.
tail_of() {
	local t
	t=$({ tail -n 6 "$1.err"; tail -n 3 "$1.out"; } 2>/dev/null)
	[ -n "$t" ] || t="(no output)"
	printf '%s\n' "$t" | sed 's/^/        /'
}

fail() {
	local name=$1 why=$2
	shift 2
	FAILS+=("$name: $why")
	FAILED=1
	echo "clients.sh: $name: $why" >&2
	local log
	for log in "$@"; do
		echo "    ${log##*/}:" >&2
		tail_of "$log" >&2
	done
}

# run_pair NAME PARSER PROG ARGS...: the server "rfemu -- PROG ARGS -p PORT",
# then the client "rfemu -- PROG 127.0.0.1 ARGS -p PORT"; PARSER reads the
# client's output and prints the median one-way latency. PAIR_ENV, if set,
# holds VAR=VALUE words both sides run with (env(1)).
PAIR_ENV=()
run_pair() {
	local name=$1 parse=$2 prog=$3
	shift 3
	local tag=${name//[^A-Za-z0-9_]/_}
	local s=$WORK/$tag.server c=$WORK/$tag.client
	if ! command -v "$prog" >/dev/null; then
		fail "$name" "$prog not installed (make deps)"
		return
	fi
	next_port
	start "$s" "$RFEMU" -- env "${PAIR_ENV[@]}" "$prog" "$@" -p "$PORT"
	local spid=$LASTPID
	if ! wait_listen "$PORT" "$spid"; then
		stop "$spid"
		reap "$spid"
		fail "$name" "server did not listen on 127.0.0.1:$PORT" "$s"
		return
	fi
	start "$c" "$RFEMU" -- env "${PAIR_ENV[@]}" "$prog" 127.0.0.1 "$@" -p "$PORT"
	local cpid=$LASTPID crc src
	reap "$cpid"; crc=$?
	# The server ends with the client; give it a few seconds, no more.
	for _ in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$spid" 2>/dev/null && stop "$spid"
	reap "$spid"; src=$?
	if [ "$crc" -ne 0 ]; then
		fail "$name" "client exited $crc$( [ "$crc" = 124 ] && echo " (timeout ${TIMEOUT}s)")" "$c" "$s"
		return
	fi
	local v
	v=$("$parse" "$c.out")
	if [ -z "$v" ]; then
		fail "$name" "no latency in the client's output" "$c" "$s"
		return
	fi
	VAL[$name]=$v
	[ "$src" -ne 0 ] && echo "clients.sh: $name: server exited $src after the client finished" >&2
}

# ucx_perftest -f: the last line of numbers, "iterations median average ...".
parse_ucx() {
	awk '/^ *[0-9]+ +[0-9.]+ +[0-9.]+/ { v = $2 } END { if (v != "") print v }' "$1"
}

# perftest: the t_typical[usec] column (the median) of the result line.
parse_perftest() {
	awk '/t_typical/ { for (i = 1; i <= NF; i++) if ($i ~ /^t_typical/) col = i; next }
	     col && /^ *[0-9]+ +[0-9]+ / { print $col; exit }' "$1"
}

parse_mpi() {
	awk '/^mpi_pingpong:/ { for (i = 1; i < NF; i++) if ($i == "median_us") print $(i + 1) }' "$1"
}

UCT=(-d mlx5_0:1 -s "$SIZE" -n "$ITERS" -w "$WARMUP" -f)
PERF=(-d mlx5_0 -i 1 -s "$SIZE" -n "$ITERS" -F)

run_pair "ucx rc_mlx5 am_lat"  parse_ucx ucx_perftest -t am_lat  -x rc_mlx5 "${UCT[@]}"
run_pair "ucx rc_mlx5 put_lat" parse_ucx ucx_perftest -t put_lat -x rc_mlx5 "${UCT[@]}"
run_pair "ucx dc_mlx5 put_lat" parse_ucx ucx_perftest -t put_lat -x dc_mlx5 "${UCT[@]}"
run_pair "ib_send_lat"         parse_perftest ib_send_lat  "${PERF[@]}"
run_pair "ib_write_lat"        parse_perftest ib_write_lat "${PERF[@]}"

# Hardware tag matching (UCP's tag API over rc_mlx5): each run with the
# offload on and off. UCX posts a receive of 1024 bytes or more
# (UCX_TM_THRESH) to the device's list; 8 B messages meet none and are
# unexpected, 4 KiB ones are matched eagerly, 64 KiB ones by rendezvous.
TM_ROWS=()
for t in "tag_lat 8" "tag_lat 4096" "tag_lat 65536" "tag_bw 4096" "tag_bw 65536"; do
	set -- $t
	for tm in y n; do
		PAIR_ENV=(UCX_TLS=rc_x,self UCX_NET_DEVICES=mlx5_0:1 UCX_RC_MLX5_TM_ENABLE=$tm)
		run_pair "ucx $1 $2 tm=$tm" parse_ucx ucx_perftest -t "$1" -s "$2" \
			-n "$ITERS" -w "$WARMUP" -f
	done
	TM_ROWS+=("ucx $1 $2 tm=y|ucx $1 $2 tm=n")
done
PAIR_ENV=()

# --- MPI -------------------------------------------------------------------
MPI=1
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "clients.sh: installing openmpi-bin libopenmpi-dev (apt-get)" >&2
		{ timeout 600 apt-get update -qq &&
		  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq \
			openmpi-bin libopenmpi-dev; } >"$WORK/apt.log" 2>&1 ||
			tail -n 5 "$WORK/apt.log" >&2
	fi
	if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
		echo "clients.sh: Open MPI (openmpi-bin, libopenmpi-dev) is not installed and could not be: MPI rows skipped" >&2
		MPI=0
	fi
fi

run_mpi() {
	local name=$1
	shift
	local log=$WORK/${name//[^A-Za-z0-9_]/_}
	start "$log" "$RFEMU" -- mpirun --allow-run-as-root --oversubscribe --bind-to none \
		-np 2 "$@" "$WORK/mpi_pingpong" "$ITERS" "$WARMUP" "$SIZE"
	local pid=$LASTPID rc
	reap "$pid"; rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name" "mpirun exited $rc$( [ "$rc" = 124 ] && echo " (timeout ${TIMEOUT}s)")" "$log"
		return
	fi
	local v
	v=$(parse_mpi "$log.out")
	if [ -z "$v" ]; then
		fail "$name" "no latency in mpi_pingpong's output" "$log"
		return
	fi
	VAL[$name]=$v
}

if [ "$MPI" = 1 ]; then
	if ! mpicc -O2 -o "$WORK/mpi_pingpong" "$ROOT/bench/mpi_pingpong.c" 2>"$WORK/mpicc.err"; then
		fail "mpi pml ucx" "mpicc failed"
		tail -n 5 "$WORK/mpicc.err" >&2
	else
		# Each rank is its own emulated host: mpirun runs under rfemu and
		# its ranks inherit the emulator.
		run_mpi "mpi pml ucx" --mca pml ucx --mca btl '^openib' -x UCX_TLS=rc_x
		run_mpi "mpi ob1 openib" --mca pml ob1 --mca btl openib,self \
			--mca btl_openib_allow_ib 1 --mca btl_openib_warn_no_device_params_found 0
		run_mpi "mpi pml ucx tm" --mca pml ucx --mca btl '^openib' -x UCX_TLS=rc_x \
			-x UCX_RC_MLX5_TM_ENABLE=y
		TM_ROWS+=("mpi pml ucx tm|mpi pml ucx")
	fi
	if ! mpicc -O2 -o "$WORK/mpi_tags" "$ROOT/bench/mpi_tags.c" 2>"$WORK/mpicc.err"; then
		fail "mpi tags tm" "mpicc failed"
		tail -n 5 "$WORK/mpicc.err" >&2
	else
		log=$WORK/mpi_tags
		start "$log" "$RFEMU" -- mpirun --allow-run-as-root --oversubscribe --bind-to none \
			-np 2 --mca pml ucx --mca btl '^openib' -x UCX_TLS=rc_x \
			-x UCX_RC_MLX5_TM_ENABLE=y "$WORK/mpi_tags"
		pid=$LASTPID
		reap "$pid"; rc=$?
		if [ "$rc" -ne 0 ] || ! grep -q "^mpi_tags: [0-9]* messages checked, 0 bad" "$log.out"; then
			fail "mpi tags tm" "mpirun exited $rc" "$log"
		else
			TAGS_OK=$(grep -m1 "^mpi_tags:" "$log.out")
		fi
	fi
fi

# --- the table -------------------------------------------------------------
ROWS=("ucx rc_mlx5 am_lat|ib_send_lat"
      "ucx rc_mlx5 put_lat|ib_write_lat"
      "ucx dc_mlx5 put_lat|ib_write_lat")
[ "$MPI" = 1 ] && ROWS+=("mpi pml ucx|mpi ob1 openib")

echo
echo "Real clients on the emulated HCA, $SIZE B, median one-way latency (us), $ITERS iterations"
printf '%-22s %10s  %-16s %10s  %7s  %-8s %s\n' figure us twin "twin us" ratio goal result
for r in "${ROWS[@]}"; do
	f=${r%%|*} t=${r#*|}
	fv=${VAL[$f]:-} tv=${VAL[$t]:-}
	ratio=- res=
	if [ -n "$fv" ] && [ -n "$tv" ]; then
		ratio=$(awk -v a="$fv" -v b="$tv" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
		res=$(awk -v a="$fv" -v b="$tv" 'BEGIN { print (a <= 2 * b) ? "met" : "MISSED" }')
	else
		res="not measured"
	fi
	printf '%-22s %10s  %-16s %10s  %7s  %-8s %s\n' "$f" "${fv:--}" "$t" "${tv:--}" \
		"$ratio" "<= 2x" "$res"
done
for r in "${ROWS[@]}"; do
	f=${r%%|*} t=${r#*|}
	fv=${VAL[$f]:-} tv=${VAL[$t]:-}
	[ -n "$fv" ] && [ -n "$tv" ] && awk -v a="$fv" -v b="$tv" 'BEGIN { exit !(b > a) }' &&
		echo "note: $t ($tv us) was slower than $f: its goal is met by the twin's slowness"
done
if [ "$MPI" = 0 ]; then
	echo "(MPI rows skipped: Open MPI not installed)"
fi

echo
echo "Hardware tag matching (UCX_RC_MLX5_TM_ENABLE=y) beside UCX's software matching, median one-way latency (us; tag_bw: per message), $ITERS iterations"
printf '%-26s %10s  %-26s %10s  %7s\n' figure us "without TM" us ratio
for r in "${TM_ROWS[@]}"; do
	f=${r%%|*} t=${r#*|}
	fv=${VAL[$f]:-} tv=${VAL[$t]:-}
	ratio=-
	[ -n "$fv" ] && [ -n "$tv" ] &&
		ratio=$(awk -v a="$fv" -v b="$tv" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')
	printf '%-26s %10s  %-26s %10s  %7s\n' "$f" "${fv:--}" "$t" "${tv:--}" "$ratio"
done
[ -n "${TAGS_OK:-}" ] && echo "$TAGS_OK (bench/mpi_tags.c, pml ucx with tag matching)"
for k in "${FAILS[@]}"; do
	echo "failed: $k"
done
cpu() { grep -m1 "^$1" /proc/cpuinfo | sed 's/.*: //'; }
echo "host: $(cpu 'model name') (family $(cpu 'cpu family') model $(cpu 'model[[:space:]]*:')), $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$FAILED"
