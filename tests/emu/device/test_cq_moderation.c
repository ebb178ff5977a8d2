/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * CQ event moderation (ibv_modify_cq()): an armed CQ raises its completion
 * event once cq_count CQEs arrived since the arm, or cq_period us after the
 * first of them, instead of on the first CQE.
 */

#include "dev_test.h"

struct mod {
	struct dt		t;
	struct ibv_comp_channel	*ch;
	struct ibv_cq		*cq;	/* with the channel: a's send CQ */
	struct ibv_qp		*a, *b;	/* a writes into t.buf[1] through b */
};

static void mod_setup(struct mod *m)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
	};
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	dt_setup(&m->t);
	m->ch = ibv_create_comp_channel(m->t.ctx);
	cr_assert(m->ch);
	m->cq = ibv_create_cq(m->t.ctx, 16, NULL, m->ch, 0);
	cr_assert(m->cq);
	ia.send_cq = m->cq;
	ia.recv_cq = m->t.cq[0];
	m->a = ibv_create_qp(m->t.pd, &ia);
	ia.send_cq = ia.recv_cq = m->t.cq[1];
	m->b = ibv_create_qp(m->t.pd, &ia);
	cr_assert(m->a && m->b);
	cr_assert_eq(dt_connect(m->a, m->b->qp_num, m->t.lid, &o), 0);
	cr_assert_eq(dt_connect(m->b, m->a->qp_num, m->t.lid, &o), 0);
}

static void mod_teardown(struct mod *m)
{
	cr_assert_eq(ibv_destroy_qp(m->a), 0);
	cr_assert_eq(ibv_destroy_qp(m->b), 0);
	cr_assert_eq(ibv_destroy_cq(m->cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(m->ch), 0);
	dt_teardown(&m->t);
}

static void moderate(struct mod *m, uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr a = {
		.attr_mask = IBV_CQ_ATTR_MODERATE,
		.moderate = { .cq_count = count, .cq_period = period },
	};

	cr_assert_eq(ibv_modify_cq(m->cq, &a), 0);
}

/* One signaled RDMA write from a, and its CQE polled. */
static void write_one(struct mod *m)
{
	struct ibv_sge s = { (uintptr_t)m->t.buf[0], 8, m->t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)m->t.buf[1], m->t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	dt_post(m->a, &wr);
	wc = dt_poll1(m->cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
}

/* cq_count 4, no period: three CQEs raise nothing, the fourth the event. */
Test(moderation, count)
{
	struct mod m;

	mod_setup(&m);
	moderate(&m, 4, 0);
	cr_assert_eq(ibv_req_notify_cq(m.cq, 0), 0);
	for (int i = 0; i < 3; i++)
		write_one(&m);
	cr_assert(!dt_event_within(m.ch, m.cq, 300), "an event after 3 of 4 CQEs");
	write_one(&m);
	cr_assert(dt_event_within(m.ch, m.cq, 10000), "no event after the 4th CQE");

	/* the count starts again at the next arm */
	cr_assert_eq(ibv_req_notify_cq(m.cq, 0), 0);
	write_one(&m);
	cr_assert(!dt_event_within(m.ch, m.cq, 300), "an event after 1 of 4 CQEs");
	mod_teardown(&m);
}

/*
 * cq_period 4095 us with a count never reached: the event comes from the
 * timer, not before the period has passed since the CQE (which was written
 * after the post); moderation off again, the next CQE fires at once.
 */
Test(moderation, period)
{
	struct mod m;
	struct timespec t0, t1;
	long us;

	mod_setup(&m);
	moderate(&m, 1000, 4095);
	cr_assert_eq(ibv_req_notify_cq(m.cq, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	write_one(&m);
	cr_assert(dt_event_within(m.ch, m.cq, 10000), "the period's timer never fired");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	cr_assert_geq(us, 4095, "event after %ld us, before the 4095 us period", us);

	moderate(&m, 0, 0);
	cr_assert_eq(ibv_req_notify_cq(m.cq, 0), 0);
	write_one(&m);
	cr_assert(dt_event_within(m.ch, m.cq, 10000), "no event without moderation");
	mod_teardown(&m);
}
