#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# run-bounded.sh SECONDS COMMAND [ARG...]
#
# Runs a test binary under timeout(1); if it times out, runs it once more.
#
# Why once more: Criterion forks each test's worker while its runner's
# nanomsg thread may be inside malloc().  glibc's malloc is fork-safe, but
# GCC 12's libasan has no fork handler for its allocator locks, so an
# ASan-built worker can start with a lock held by a thread that no longer
# exists and wait on it forever, at 0% CPU, before its test begins.  It was
# seen in a full .ci/run under load: every frame was Criterion's or
# libasan's.  A hang of our own times out twice and still fails.
set -u
[ $# -ge 2 ] || { echo "usage: $0 SECONDS COMMAND [ARG...]" >&2; exit 2; }
secs=$1
shift
for try in 1 2; do
	rc=0
	timeout "$secs" "$@" || rc=$?
	[ "$rc" = 124 ] && [ "$try" = 1 ] || exit "$rc"
	echo "run-bounded: $1 timed out after $secs s; once more" >&2
done
