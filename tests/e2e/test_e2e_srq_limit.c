/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The SRQ limit through the verbs glue: rf_srq_arm_limit_ibv() arms it
 * (a limit beyond the kernel's bound refused), the device raises one
 * IBV_EVENT_SRQ_LIMIT_REACHED, read with rf_async_event_ibv(), when the
 * receives left drop below it, not before and not twice; refilling and
 * arming again brings the next.
 */
#include "e2e.h"

struct srq_rig {
	struct e2e e;
	struct ibv_srq *ibsrq;
	struct rf_srq srq;
	struct rf_qp rcv, snd;	/* rcv takes its receives from the SRQ */
};

static void rig_open(struct srq_rig *r)
{
	struct e2e_opts o;
	struct ibv_srq_init_attr sa;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pr, ps;

	memset(&o, 0, sizeof(o));
	e2e_open(&r->e, &o);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	r->ibsrq = ibv_create_srq(r->e.pd, &sa);
	cr_assert_not_null(r->ibsrq);
	cr_assert_eq(rf_srq_init_ibv(&r->srq, r->ibsrq), 0);

	memset(&qa, 0, sizeof(qa));
	qa.pd = r->e.pd;
	qa.send_cq = r->e.b.ibcq;
	qa.recv_cq = r->e.b.ibcq;
	qa.srq = r->ibsrq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 8;
	cr_assert_eq(rf_qp_create_ibv(&r->rcv, &qa), 0);
	cr_assert_eq(rf_cq_attach(&r->e.b.cq, r->rcv.qpn, &r->rcv.sq, NULL, &r->srq), 0);
	qa.send_cq = r->e.a.ibcq;
	qa.recv_cq = r->e.a.ibcq;
	qa.srq = NULL;
	qa.max_recv_wr = 1;
	cr_assert_eq(rf_qp_create_ibv(&r->snd, &qa), 0);
	cr_assert_eq(rf_cq_attach(&r->e.a.cq, r->snd.qpn, &r->snd.sq, &r->snd.rq, NULL), 0);

	memset(&pr, 0, sizeof(pr));
	memset(&ps, 0, sizeof(ps));
	pr.qpn = r->rcv.qpn;
	pr.psn = 0x10;
	pr.lid = r->e.port.lid;
	ps.qpn = r->snd.qpn;
	ps.psn = 0x20;
	ps.lid = r->e.port.lid;
	memset(&ca, 0, sizeof(ca));
	ca.gid_index = -1;
	if (r->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(r->e.ctx, 1, 0, &pr.gid), 0);
		ps.gid = pr.gid;
	}
	ca.psn = pr.psn;
	cr_assert_eq(rf_qp_connect_ibv(&r->rcv, &ca, &ps), 0);
	ca.psn = ps.psn;
	cr_assert_eq(rf_qp_connect_ibv(&r->snd, &ca, &pr), 0);
}

static void rig_close(struct srq_rig *r)
{
	rf_cq_detach(&r->e.a.cq, r->snd.qpn);
	rf_cq_detach(&r->e.b.cq, r->rcv.qpn);
	rf_qp_destroy_ibv(&r->snd);
	rf_qp_destroy_ibv(&r->rcv);
	rf_srq_fini_ibv(&r->srq);
	ibv_destroy_srq(r->ibsrq);
	e2e_close(&r->e);
}

static void post_recvs(struct srq_rig *r, int n)
{
	for (int i = 0; i < n; i++) {
		struct rf_sge sg = { e2e_addr(&r->e.b, 1024 + 64 * (size_t)i), 64, r->e.b.mr->lkey };

		cr_assert_eq(rf_srq_post(&r->srq, &sg, 1, (uint64_t)i), 0);
	}
	rf_srq_ring(&r->srq);
}

/* One SEND from snd into the SRQ, both completions reaped. */
static void one_message(struct srq_rig *r)
{
	struct rf_wc wc[1];

	cr_assert_eq(rf_sq_post_send(&r->snd.sq, r->e.a.mr->lkey, e2e_addr(&r->e.a, 0), 16,
				     RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&r->e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	e2e_wait(&r->e.b.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert(wc[0].flags & RF_WC_SRQ);
}

static void expect_limit_event(struct srq_rig *r)
{
	struct ibv_async_event ev;
	int ret;

	memset(&ev, 0, sizeof(ev));
	ret = rf_async_event_ibv(r->e.ctx, &ev, 2000);
	cr_assert_eq(ret, 0, "no event: %s", strerror(-ret));
	cr_assert_eq(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED, "%s",
		     ibv_event_type_str(ev.event_type));
	cr_assert_eq(ev.element.srq, r->ibsrq);
}

static void expect_no_event(struct srq_rig *r)
{
	struct ibv_async_event ev;

	cr_assert_eq(rf_async_event_ibv(r->e.ctx, &ev, 100), -EAGAIN);
}

Test(e2e_srq_limit, arm_fire_once_refill_rearm)
{
	struct srq_rig r;
	struct ibv_srq_attr at;

	rig_open(&r);
	/*
	 * The kernel's bound (mlx5_ib_modify_srq()): below its WQE count,
	 * which counts the max_wr libmlx5 passes (the ring with its
	 * sentinel) plus one, rounded up to a power of two
	 */
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 4 * r.srq.wqe_cnt), -EINVAL);
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 1U << 20), -EINVAL);

	post_recvs(&r, 4);
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 4), 0, "4 left: not below 4");
	expect_no_event(&r);
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 2), 0);
	cr_assert_eq(ibv_query_srq(r.ibsrq, &at), 0);
	cr_assert_eq(at.srq_limit, 2);
	expect_no_event(&r);
	one_message(&r);
	one_message(&r);	/* 2 left: not below 2 */
	expect_no_event(&r);
	one_message(&r);	/* 1 left */
	expect_limit_event(&r);
	one_message(&r);	/* 0 left: the event was one-shot */
	expect_no_event(&r);

	/* refill from the event, arm again: the next drain brings the next */
	post_recvs(&r, 3);
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 2), 0);
	expect_no_event(&r);
	one_message(&r);
	one_message(&r);
	expect_limit_event(&r);

	/* 0 disarms */
	post_recvs(&r, 3);
	cr_assert_eq(rf_srq_arm_limit_ibv(r.ibsrq, 0), 0);
	one_message(&r);
	one_message(&r);
	one_message(&r);
	expect_no_event(&r);
	rig_close(&r);
}
