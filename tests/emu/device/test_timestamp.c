/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Completion timestamps: every CQE carries the device's free-running clock
 * at the moment it was written, which ibv_wc_read_completion_ts() returns
 * raw and ibv_wc_read_completion_wallclock_ns() converts through the clock
 * info page (libmlx5 without a real-time clock).  Each is checked against
 * the core clock register read before the work was posted and after it
 * was polled, and against CLOCK_REALTIME.
 */
#include <time.h>

#include "dev_test.h"

static struct dt t;

/*
 * How old the core clock register may read (it is refreshed at least every
 * RFEMU_IDLE_MAX_US, 1 ms, and on commands), with room for a loaded machine.
 */
#define STALE_CYCLES(khz)	(50 * (uint64_t)(khz))

static void setup(void) { dt_setup(&t); }
static void teardown(void) { dt_teardown(&t); }

TestSuite(dev_ts, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* The core clock, read after a command (which refreshes the register). */
static uint64_t raw_now(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(t.ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_rt_values_ex(t.ctx, &v), 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

enum { SENDS = 8 };

/*
 * SENDS sends from qp[0] to a receive each on qp[1], whose CQ is cqx: the
 * timestamps (raw and wall-clock, as wc_flags asks) of the 2 * SENDS
 * completions polled through cqx, in poll order.
 */
static void run(uint64_t wc_flags, uint64_t *raw, uint64_t *wall)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = wc_flags };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(t.ctx, &ca);
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_qp *a, *b;
	uint64_t end = dt_now_ms() + 10000;
	int n = 0, ret;

	cr_assert(cqx, "ibv_create_cq_ex: %s", strerror(errno));
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(cqx);
	a = ibv_create_qp(t.pd, &ia);
	b = ibv_create_qp(t.pd, &ia);
	cr_assert(a && b);
	cr_assert_eq(dt_connect(a, b->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(b, a->qp_num, t.lid, &o), 0);
	for (int i = 0; i < SENDS; i++)
		dt_post_recv(b, 100 + (uint64_t)i, t.buf[1] + 64 * i, 64, t.mr[1]->lkey);
	for (int i = 0; i < SENDS; i++) {
		struct ibv_sge s = { (uintptr_t)t.buf[0], 16, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};

		dt_post(a, &wr);
		usleep(1000);
	}
	while (n < 2 * SENDS) {
		while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT) {
			cr_assert_lt(dt_now_ms(), end, "%d of %d completions", n, 2 * SENDS);
			usleep(200);
		}
		cr_assert_eq(ret, 0);
		do {
			cr_assert_eq(cqx->status, IBV_WC_SUCCESS);
			if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
				raw[n] = ibv_wc_read_completion_ts(cqx);
			if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
				wall[n] = ibv_wc_read_completion_wallclock_ns(cqx);
			n++;
		} while (n < 2 * SENDS && ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_assert_eq(ibv_destroy_qp(b), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

Test(dev_ts, raw_timestamps_run_at_the_core_clock)
{
	uint64_t raw[2 * SENDS], before, after;
	struct ibv_device_attr_ex ex;

	cr_assert_eq(ibv_query_device_ex(t.ctx, NULL, &ex), 0);
	before = raw_now();
	run(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, raw, NULL);
	after = raw_now() + STALE_CYCLES(ex.hca_core_clock);
	for (int i = 0; i < 2 * SENDS; i++) {
		cr_assert_geq(raw[i], before, "CQE %d: %llu before the posts (%llu)", i,
			      (unsigned long long)raw[i], (unsigned long long)before);
		cr_assert_leq(raw[i], after, "CQE %d: %llu after the polls (%llu)", i,
			      (unsigned long long)raw[i], (unsigned long long)after);
		if (i)
			cr_assert_geq(raw[i], raw[i - 1], "CQE %d written before CQE %d", i, i - 1);
	}
}

Test(dev_ts, wallclock_is_realtime)
{
	uint64_t wall[2 * SENDS], before, after;

	before = realtime_ns();
	run(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, NULL, wall);
	after = realtime_ns();
	for (int i = 0; i < 2 * SENDS; i++) {
		/* 1 ms for the rounding of mult and the two clocks' reads */
		cr_assert_geq(wall[i] + 1000000, before, "CQE %d: %lld ns before the posts", i,
			      (long long)(before - wall[i]));
		cr_assert_leq(wall[i], after + 1000000, "CQE %d: %lld ns after the polls", i,
			      (long long)(wall[i] - after));
	}
}

/* Both at once: libmlx5 converts the raw value it returns. */
Test(dev_ts, raw_and_wallclock_agree)
{
	uint64_t raw[2 * SENDS], wall[2 * SENDS];
	struct mlx5dv_clock_info ci;

	run(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
	    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, raw, wall);
	cr_assert_eq(mlx5dv_get_clock_info(t.ctx, &ci), 0);
	for (int i = 0; i < 2 * SENDS; i++) {
		uint64_t ns = mlx5dv_ts_to_ns(&ci, raw[i]);

		cr_assert_leq(ns - wall[i] + 1, 2, "CQE %d: %llu against %llu", i,
			      (unsigned long long)ns, (unsigned long long)wall[i]);
	}
}
