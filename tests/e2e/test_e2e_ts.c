/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Completion timestamps through rdmafast: CQs from rf_cq_create_ts_ibv()
 * polled with rf_cq_poll_ts() (and with rf_cq_poll() between), each stamp
 * between the core clock read before the posts and after the polls, in
 * the order the device wrote them, and CLOCK_REALTIME once converted with
 * mlx5dv_ts_to_ns().
 */
#include <time.h>
#include <unistd.h>

#include "e2e.h"

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* The core clock, fresh: a command first, then the register. */
static uint64_t raw_now(struct e2e *e)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(e->ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_rt_values_ex(e->ctx, &v), 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t khz(struct e2e *e)
{
	struct ibv_device_attr_ex ex;

	cr_assert_eq(ibv_query_device_ex(e->ctx, NULL, &ex), 0);
	return ex.hca_core_clock;
}

static int poll_ts_for(struct rf_cq *cq, struct rf_wc_ts *w, int n)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int got = 0;

	while (got < n) {
		got += rf_cq_poll_ts(cq, w + got, n - got);
		cr_assert(e2e_now_ms() < end, "timeout: %d of %d completions", got, n);
	}
	return got;
}

enum { N = 8 };

Test(e2e_ts, stamps_from_the_core_clock)
{
	struct e2e_opts o = { .timestamps = 1 };
	struct rf_wc_ts sa[N], sb[N];
	struct mlx5dv_clock_info ci;
	struct e2e e;
	uint64_t before, after, t0, t1;

	e2e_open(&e, &o);
	for (int i = 0; i < N; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 64 * (size_t)i),
					    64, 500 + (uint64_t)i), 0);
	rf_rq_ring(&e.b.qp.rq);
	t0 = realtime_ns();
	before = raw_now(&e);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 16,
					     RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)i), 0);
		usleep(500);
	}
	poll_ts_for(&e.a.cq, sa, N);
	poll_ts_for(&e.b.cq, sb, N);
	/* the register is refreshed every millisecond or so: room for a loaded machine */
	after = raw_now(&e) + 50 * khz(&e);
	t1 = realtime_ns();
	cr_assert_eq(mlx5dv_get_clock_info(e.ctx, &ci), 0);
	for (int i = 0; i < N; i++) {
		const struct rf_wc_ts *w[2] = { &sa[i], &sb[i] };

		cr_assert_eq(sa[i].wc.wr_id, (uint64_t)i);
		cr_assert_eq(sb[i].wc.wr_id, 500 + (uint64_t)i);
		cr_assert_eq(sb[i].wc.opcode, RF_WC_RECV);
		for (int k = 0; k < 2; k++) {
			uint64_t ns = mlx5dv_ts_to_ns(&ci, w[k]->ts);

			cr_assert_eq(w[k]->wc.status, RF_WC_SUCCESS);
			cr_assert(w[k]->ts >= before && w[k]->ts <= after,
				  "%s %d: %llu outside %llu..%llu", k ? "recv" : "send", i,
				  (unsigned long long)w[k]->ts, (unsigned long long)before,
				  (unsigned long long)after);
			cr_assert(ns + 1000000 >= t0 && ns <= t1 + 1000000,
				  "%s %d: %llu ns outside the realtime %llu..%llu", k ? "recv" : "send",
				  i, (unsigned long long)ns, (unsigned long long)t0,
				  (unsigned long long)t1);
		}
		if (i) {
			cr_assert_geq(sa[i].ts, sa[i - 1].ts);
			cr_assert_geq(sb[i].ts, sb[i - 1].ts);
		}
		/* the receive completes after its send left, which completes after its ACK */
		cr_assert_leq(sb[i].ts, sa[i].ts);
	}
	e2e_close(&e);
}

/* rf_cq_poll() and rf_cq_poll_ts() take turns on one CQ. */
Test(e2e_ts, the_two_polls_share_a_cq)
{
	struct e2e_opts o = { .timestamps = 1 };
	struct rf_wc_ts w[2];
	struct rf_wc wc[2];
	struct e2e e;

	e2e_open(&e, &o);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
					      e.b.mr->rkey, e2e_addr(&e.b, 8 * (size_t)i),
					      RF_SEND_SIGNALED, (uint64_t)i), 0);
	rf_sq_ring(&e.a.qp.sq);
	for (int i = 0; i < 8; i += 4) {
		e2e_wait(&e.a.cq, wc, 2);
		poll_ts_for(&e.a.cq, w, 2);
		cr_assert_eq(wc[0].wr_id, (uint64_t)i);
		cr_assert_eq(wc[1].wr_id, (uint64_t)i + 1);
		cr_assert_eq(w[0].wc.wr_id, (uint64_t)i + 2);
		cr_assert_eq(w[1].wc.wr_id, (uint64_t)i + 3);
		cr_assert_eq(w[1].wc.opcode, RF_WC_RDMA_WRITE);
		cr_assert_geq(w[1].ts, w[0].ts);
	}
	cr_assert_eq(rf_cq_poll_ts(&e.a.cq, w, 2), 0);
	cr_assert_eq(rf_sq_ci(&e.a.qp.sq), e.a.qp.sq.pi, "every WQE retired");
	e2e_close(&e);
}

/* Real-time stamps only where the device has a real-time clock. */
Test(e2e_ts, real_time_needs_the_device_clock)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct mlx5dv_context dv;
	struct ibv_cq *ibcq = NULL;
	struct rf_cq cq;
	int rc;

	cr_assert(list && list[0]);
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(ctx);
	memset(&dv, 0, sizeof(dv));
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	rc = rf_cq_create_ts_ibv(&cq, &ibcq, ctx, 16, NULL, 0, 1);
	if (dv.flags & MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS)
		cr_assert_eq(rc, 0, "real-time CQ: %s", strerror(-rc));
	else
		cr_assert_eq(rc, -EOPNOTSUPP, "a real-time CQ without the clock: %d", rc);
	if (!rc)
		cr_assert_eq(ibv_destroy_cq(ibcq), 0);
	rc = rf_cq_create_ts_ibv(&cq, &ibcq, ctx, 16, NULL, 0, 0);
	cr_assert_eq(rc, 0, "free-running CQ: %s", strerror(-rc));
	if (!rc)
		cr_assert_eq(ibv_destroy_cq(ibcq), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}
