/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What a user sees when a queue is sized wrong, as rdmafast(7) (QUEUE
 * SIZING) tells it: a signaling interval longer than the send queue stalls
 * for good, and a CQ that gets more CQEs than entries overruns with
 * IBV_EVENT_CQ_ERR.
 */
#include "e2e.h"

Test(e2e_sizing, interval_longer_than_the_queue_never_completes)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_wc wc;
	uint32_t posted = 0, room;

	o.max_send_wr = 16;
	e2e_open(&e, &o);
	room = rf_sq_space(&e.a.qp.sq);
	cr_assert_gt(room, 0);
	E2E_CHECKED_EXPECT(RF_CHK_SIGNALING);
	/* "signal every 1000th": the queue fills with unsignaled WQEs */
	while (rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, e.b.mr->rkey,
				e2e_addr(&e.b, 0), 0, posted) == 0)
		posted++;
	cr_assert_eq(posted, room, "one-BB writes fill every block");
	E2E_CHECKED_ASSERT(RF_CHK_SIGNALING, "-ENOSPC");
	rf_sq_ring(&e.a.qp.sq);
	cr_assert_eq(e2e_poll_for(&e.a.cq, &wc, 1, 300), 0, "nothing asked for a CQE");
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), 0);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey, e2e_addr(&e.b, 0), RF_SEND_SIGNALED, 0),
		     -ENOSPC, "not even a signaled WQE fits any more");
	e2e_close(&e);
}

Test(e2e_sizing, cq_smaller_than_its_completions_overruns)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct ibv_async_event ev;
	uint32_t i, n;

	o.cqe = 4;
	o.max_send_wr = 64;
	e2e_open(&e, &o);
	n = e.a.cq.cqe_cnt + 4;
	cr_assert_leq(n, rf_sq_space(&e.a.qp.sq));
	E2E_CHECKED_EXPECT(RF_CHK_CQ_SIZE);
	/* every WQE signaled, nobody polls */
	for (i = 0; i < n; i++)
		cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
					      e.b.mr->rkey, e2e_addr(&e.b, 0), RF_SEND_SIGNALED,
					      i), 0);
	rf_sq_ring(&e.a.qp.sq);
	E2E_CHECKED_ASSERT(RF_CHK_CQ_SIZE, "entries");
	{
		struct pollfd p = { e.ctx->async_fd, POLLIN, 0 };

		cr_assert_eq(poll(&p, 1, E2E_TIMEOUT_MS), 1, "no async event");
	}
	memset(&ev, 0, sizeof(ev));	/* the analyzer cannot see that a failed assert ends the test */
	cr_assert_eq(ibv_get_async_event(e.ctx, &ev), 0);
	cr_assert_eq(ev.event_type, IBV_EVENT_CQ_ERR, "event %d", ev.event_type);
	cr_assert_eq(ev.element.cq, e.a.ibcq);
	ibv_ack_async_event(&ev);
	e2e_close(&e);
}
