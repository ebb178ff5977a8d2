/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * emu_harness.h - what the fuzz targets that link the emulator in
 * (device_wqe.c, wire_packet.c) share: a check that aborts naming the
 * failed condition, one device with a PD, a CQ and a registered region
 * between two guard areas (harness_open), QPs brought up on loopback
 * (harness_bring_up), the device run until an input's work is done
 * (harness_settle), the CQ reaped and the guards checked after each
 * input, and the seed writing of LLVMFuzzerInitialize() (harness_init).
 *
 * Build with -D_GNU_SOURCE (program_invocation_short_name names the target).
 */
#ifndef RDMAFAST_FUZZ_EMU_HARNESS_H
#define RDMAFAST_FUZZ_EMU_HARNESS_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "../tests/emu/qp_bring_up.h"

#define MR_LEN    (64 * 1024)
#define GUARD_LEN 4096
#define GUARD_PAT 0x5c

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s: check failed: %s (%s:%d)\n", \
		program_invocation_short_name, #c, __FILE__, __LINE__); \
	abort(); } } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;		/* guard | MR | guard */
	uint16_t lid;		/* port 1's: every QP pair is connected on loopback */
} H;

/* The first device, a PD, a CQ of ncqe entries and MR_LEN registered bytes
 * (every access) between two guard areas of GUARD_PAT. */
static void harness_open(int ncqe)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr port;

	CHECK(list && list[0]);
	H.ctx = ibv_open_device(list[0]);
	CHECK(H.ctx);
	ibv_free_device_list(list);
	CHECK(ibv_query_port(H.ctx, 1, &port) == 0);
	H.lid = port.lid;
	H.pd = ibv_alloc_pd(H.ctx);
	H.cq = ibv_create_cq(H.ctx, ncqe, NULL, NULL, 0);
	H.mem = malloc(MR_LEN + 2 * GUARD_LEN);
	CHECK(H.pd && H.cq && H.mem);
	memset(H.mem, GUARD_PAT, MR_LEN + 2 * GUARD_LEN);
	H.mr = ibv_reg_mr(H.pd, H.mem + GUARD_LEN, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(H.mr);
}

/*
 * RESET -> INIT -> RTR -> RTS toward dqpn on our own port (RTR only for a
 * responder-only XRC target), whatever state the last input left the QP
 * in. The emulator's plain-verbs bring-up (tests/emu/qp_bring_up.h), with
 * short timers: retransmissions stay within an input. Returns 0, or -1 if
 * a transition was refused.
 */
static inline int harness_bring_up(struct ibv_qp *qp, enum ibv_qp_type type, uint32_t dqpn)
{
	const struct qpu_conn c = {
		.reset_first = 1, .rtr_only = type == IBV_QPT_XRC_RECV,
		.dqpn = dqpn, .dlid = H.lid, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = 0x11111111,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.max_rd_atomic = 4,
		.timeout = 1,		/* 8 us */
		.retry_cnt = 1, .rnr_retry = 0,
	};

	CHECK(qp->qp_type == type);
	return qpu_bring_up(qp, &c) ? -1 : 0;
}

/* From the emulator (emu/kernel/kernel.h), linked in. */
bool emu_dev_poll_assist(void);
void emu_lock_acquire(void);
void emu_lock_release(void);

static inline uint64_t harness_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * Run the device in this thread, as a program polling through
 * ibv_poll_cq() does (emu_dev_poll_assist(), emu/device/engine.c): the
 * engine thread's own pass, without waking that thread and waiting for it
 * (which held these targets to a few hundred inputs a second). Until
 * taken(arg) holds and two passes in a row found nothing more to do, or
 * limit_ns has passed (an input nothing takes: a wild bfreg offset, a
 * packet that is not framed). A try that finds the engine in a pass of its
 * own counts as a quiet one; the lock taken at the end waits that pass out.
 */
static inline void harness_settle(bool (*taken)(void *), void *arg, uint64_t limit_ns)
{
	uint64_t t0 = harness_now_ns();
	int quiet = 0;

	while (quiet < 2 || !taken(arg)) {
		if (emu_dev_poll_assist()) {
			quiet = 0;
			continue;
		}
		if (harness_now_ns() - t0 > limit_ns)
			break;
		if (++quiet > 2)
			sched_yield();
	}
	emu_lock_acquire();
	emu_lock_release();
}

/* Every completion so far, each of a status libibverbs defines. */
static inline void harness_reap(void)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(H.cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			CHECK(wc[i].status <= IBV_WC_TM_RNDV_INCOMPLETE);
	CHECK(n == 0);
}

/* Nothing was written outside the registered region. */
static void harness_check_guards(void)
{
	static uint8_t pat[GUARD_LEN];

	if (pat[0] != GUARD_PAT)
		memset(pat, GUARD_PAT, sizeof(pat));
	/* memcmp(), not a loop: the coverage counts of 8 KiB of compares a run */
	CHECK(memcmp(H.mem, pat, GUARD_LEN) == 0);
	CHECK(memcmp(H.mem + GUARD_LEN + MR_LEN, pat, GUARD_LEN) == 0);
}

/*
 * LLVMFuzzerInitialize()'s part: setup(), then with FUZZ_WRITE_SEEDS=DIR
 * write_seeds(DIR) and exit instead of fuzzing (fuzz/README.md).
 */
static void harness_init(void (*setup)(void), void (*write_seeds)(const char *dir))
{
	const char *seeds = getenv("FUZZ_WRITE_SEEDS");

	setup();
	if (seeds) {
		write_seeds(seeds);
		exit(0);
	}
}

#endif /* RDMAFAST_FUZZ_EMU_HARNESS_H */
