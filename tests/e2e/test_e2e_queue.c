/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Queue behaviour end to end: several laps of the SQ, RQ and CQ with
 * doorbell batching and selective signaling; error completions (remote
 * access error, RNR retries exhausted, flush); CQ arming and events
 * through a completion channel; an SRQ.
 */
#include "e2e.h"

/*
 * Writes in batches of 8 with one ring, every 8th signaled, until the SQ
 * (and the CQs) went round at least three times; each write lands a
 * distinct pattern that is checked.
 */
Test(e2e_queue, laps_batching_selective_signaling)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[8];
	uint32_t n, laps, total = 0;

	memset(&o, 0, sizeof(o));
	o.max_send_wr = 16;
	o.cqe = 16;
	e2e_open(&e, &o);
	laps = 4 * e.a.qp.sq.wqe_cnt;
	for (n = 0; n < laps; n += 8) {
		for (uint32_t k = 0; k < 8; k++) {
			uint32_t i = n + k;
			uint64_t *src = (uint64_t *)(e.a.buf + 8 * (i % 4096));

			*src = 0x5a5a000000000000ULL | i;
			cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey,
						      (uint64_t)(uintptr_t)src, 8, e.b.mr->rkey,
						      e2e_addr(&e.b, 8 * (i % 4096)),
						      k == 7 ? RF_SEND_SIGNALED : 0, i), 0);
		}
		rf_sq_ring(&e.a.qp.sq);
		e2e_wait(&e.a.cq, wc, 1);
		cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "at %u: status %u", n, wc[0].status);
		cr_assert_eq(wc[0].wr_id, n + 7);
		cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max);
		total++;
	}
	for (n = 0; n < laps && n < 4096; n++)
		cr_assert_eq(*(uint64_t *)(e.b.buf + 8 * n), 0x5a5a000000000000ULL | n);
	cr_assert_geq(e.a.qp.sq.pi, 3 * e.a.qp.sq.wqe_cnt);
	cr_assert_geq(e.a.cq.ci, total);
	e2e_close(&e);
}

/* A full SQ: as many 1-BB WQEs as there are BBs, then -ENOSPC, then drain. */
Test(e2e_queue, full_sq_then_drain)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[1];
	uint32_t i;

	memset(&o, 0, sizeof(o));
	o.max_send_wr = 8;
	e2e_open(&e, &o);
	for (i = 0; i < e.a.qp.sq.bb_max - 1; i++)
		cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
					      e.b.mr->rkey, e2e_addr(&e.b, 0), 0, i), 0);
	cr_assert_eq(rf_sq_post_nop(&e.a.qp.sq, RF_SEND_SIGNALED, 999), 0);
	cr_assert_eq(rf_sq_post_nop(&e.a.qp.sq, 0, 1000), -ENOSPC);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].wr_id, 999);
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max);
	e2e_close(&e);
}

/* Receives over three laps of the RQ, ping-ponging sends. */
Test(e2e_queue, rq_laps)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[4];
	uint32_t laps;

	memset(&o, 0, sizeof(o));
	o.cqe = 16;	/* so the CQs go round too */
	e2e_open(&e, &o);
	laps = 3 * e.b.qp.rq.wqe_cnt + 5;
	if (laps < 3 * e.b.cq.cqe_cnt + 5)
		laps = 3 * e.b.cq.cqe_cnt + 5;
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 64 * i),
					    64, i), 0);
	rf_rq_ring(&e.b.qp.rq);
	for (uint32_t i = 0; i < laps; i++) {
		*(uint32_t *)e.a.buf = i;
		cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 4,
					     RF_SEND_SIGNALED, i), 0);
		rf_sq_ring(&e.a.qp.sq);
		e2e_wait(&e.a.cq, wc, 1);
		cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
		e2e_wait(&e.b.cq, wc, 1);
		cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[0].wr_id, i, "receives complete in order");
		cr_assert_eq(*(uint32_t *)(e.b.buf + 64 * (i % 4)), i);
		/* repost the consumed buffer */
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey,
					    e2e_addr(&e.b, 64 * (i % 4)), 64, i + 4), 0);
		rf_rq_ring(&e.b.qp.rq);
	}
	cr_assert_geq(e.b.cq.ci, 3 * e.b.cq.cqe_cnt);
	cr_assert_geq(e.b.qp.rq.head, 3 * e.b.qp.rq.wqe_cnt);
	e2e_close(&e);
}

Test(e2e_queue, remote_access_error_then_flush)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[4];
	int got;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	/* unsignaled good write, a write with a bad rkey, then two more */
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey, e2e_addr(&e.b, 0), 0, 1), 0);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey ^ 0x5500, e2e_addr(&e.b, 0), 0, 2), 0);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey, e2e_addr(&e.b, 0), RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_REM_ACCESS_ERR, "status %u", wc[0].status);
	cr_assert_eq(wc[0].wr_id, 2, "the failing WQE reports, signaled or not");
	cr_assert_eq(wc[0].qp_num, e.a.qp.qpn);
	/* the QP is in error: what follows is flushed */
	got = e2e_poll_for(&e.a.cq, wc, 4, 2000);
	cr_assert_geq(got, 1);
	cr_assert_eq(wc[got - 1].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[got - 1].wr_id, 3);
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max, "everything retired");
	e2e_close(&e);
}

Test(e2e_queue, rnr_retry_exhausted)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[1];

	memset(&o, 0, sizeof(o));
	o.rnr_retry_zero = 1;
	e2e_open(&e, &o);
	/* no receive posted at b */
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, 0, 7), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_RNR_RETRY_EXC_ERR, "status %u", wc[0].status);
	cr_assert_eq(wc[0].wr_id, 7);
	e2e_close(&e);
}

Test(e2e_queue, receive_flush_after_error)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_qp_attr at;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 21), 0);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 64), 64, 22), 0);
	rf_rq_ring(&e.b.qp.rq);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_ERR;
	cr_assert_eq(ibv_modify_qp(e.b.qp.ibqp, &at, IBV_QP_STATE), 0);
	e2e_wait(&e.b.cq, wc, 2);
	cr_assert_eq(wc[0].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[0].wr_id, 21);
	cr_assert_eq(wc[1].wr_id, 22);
	cr_assert_eq(rf_rq_space(&e.b.qp.rq), e.b.qp.rq.wqe_cnt);
	e2e_close(&e);
}

/* Wait up to ms for the channel's fd to become readable. */
static int chan_ready(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };

	return poll(&p, 1, ms) == 1;
}

Test(e2e_queue, arm_and_events)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	o.with_channel = 1;
	e2e_open(&e, &o);
	for (int round = 0; round < 6; round++) {
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64,
					    (uint64_t)round), 0);
		rf_rq_ring(&e.b.qp.rq);
		rf_cq_arm(&e.b.cq, round & 1);	/* solicited-only on odd rounds */
		cr_assert_eq(rf_cq_poll(&e.b.cq, wc, 1), 0);
		cr_assert(!chan_ready(e.ch, 50), "no event before a completion");
		if (round & 1)
			cr_assert_eq(rf_sq_post_send_imm(&e.a.qp.sq, e.a.mr->lkey,
							 e2e_addr(&e.a, 0), 8, RF_BE32(round),
							 RF_SEND_SOLICITED, 0), 0);
		else
			cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey,
						     e2e_addr(&e.a, 0), 8, 0, 0), 0);
		rf_sq_ring(&e.a.qp.sq);
		cr_assert(chan_ready(e.ch, E2E_TIMEOUT_MS), "event in round %d", round);
		cr_assert_eq(rf_cq_get_event_ibv(&e.b.cq, e.ch), 0);
		e2e_wait(&e.b.cq, wc, 1);
		cr_assert_eq(wc[0].wr_id, (uint64_t)round);
		if (round & 1)
			cr_assert_eq(wc[0].flags & RF_WC_SOLICITED, RF_WC_SOLICITED);
	}
	cr_assert_eq(e.b.cq.arm_sn, 6);
	/* not armed: a completion raises no event */
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 77), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, 0, 0), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert(!chan_ready(e.ch, 100));
	e2e_close(&e);
}

Test(e2e_queue, solicited_arm_ignores_unsolicited)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	o.with_channel = 1;
	e2e_open(&e, &o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64,
					    (uint64_t)i), 0);
	rf_rq_ring(&e.b.qp.rq);
	rf_cq_arm(&e.b.cq, 1);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, 0, 0), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert(!chan_ready(e.ch, 200), "unsolicited completion raised an event");
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				     RF_SEND_SOLICITED, 0), 0);
	rf_sq_ring(&e.a.qp.sq);
	cr_assert(chan_ready(e.ch, E2E_TIMEOUT_MS));
	cr_assert_eq(rf_cq_get_event_ibv(&e.b.cq, e.ch), 0);
	e2e_wait(&e.b.cq, wc, 1);
	e2e_close(&e);
}

Test(e2e_queue, srq_receives)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_srq_init_attr sa;
	struct ibv_srq *ibsrq;
	struct rf_srq srq;
	struct rf_qp qp2;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pa, pb;
	struct rf_wc wc[4];
	uint32_t n;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 2;
	ibsrq = ibv_create_srq(e.pd, &sa);
	cr_assert_not_null(ibsrq);
	cr_assert_eq(rf_srq_init_ibv(&srq, ibsrq), 0);
	/* a second QP on b's side that receives through the SRQ */
	memset(&qa, 0, sizeof(qa));
	qa.pd = e.pd;
	qa.send_cq = e.b.ibcq;
	qa.recv_cq = e.b.ibcq;
	qa.srq = ibsrq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 8;
	cr_assert_eq(rf_qp_create_ibv(&qp2, &qa), 0);
	cr_assert_eq(qp2.has_rq, 0);
	cr_assert_eq(rf_cq_attach(&e.b.cq, qp2.qpn, &qp2.sq, NULL, &srq), 0);
	/* re-point a at qp2 */
	{
		struct ibv_qp_attr at;

		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RESET;
		cr_assert_eq(ibv_modify_qp(e.a.qp.ibqp, &at, IBV_QP_STATE), 0);
	}
	memset(&ca, 0, sizeof(ca));
	ca.gid_index = -1;
	memset(&pa, 0, sizeof(pa));
	memset(&pb, 0, sizeof(pb));
	pa.qpn = e.a.qp.qpn;
	pa.lid = e.port.lid;
	pb.qpn = qp2.qpn;
	pb.lid = e.port.lid;
	cr_assert_eq(rf_qp_connect_ibv(&e.a.qp, &ca, &pb), 0);
	cr_assert_eq(rf_qp_connect_ibv(&qp2, &ca, &pa), 0);

	/* more messages than SRQ WQEs: needs the free list to work */
	for (uint32_t i = 0; i < 3; i++) {
		struct rf_sge sg = { e2e_addr(&e.b, 256 * i), 256, e.b.mr->lkey };

		cr_assert_eq(rf_srq_post(&srq, &sg, 1, i), 0);
	}
	rf_srq_ring(&srq);
	for (n = 0; n < 4 * srq.wqe_cnt; n++) {
		*(uint32_t *)e.a.buf = 0xabc00000u | n;
		cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 4,
					     RF_SEND_SIGNALED, n), 0);
		rf_sq_ring(&e.a.qp.sq);
		e2e_wait(&e.a.cq, wc, 1);
		cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "send %u: %u", n, wc[0].status);
		e2e_wait(&e.b.cq, wc, 1);
		cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[0].flags & RF_WC_SRQ, RF_WC_SRQ);
		cr_assert_eq(wc[0].qp_num, qp2.qpn);
		cr_assert_eq(*(uint32_t *)(e.b.buf + 256 * (wc[0].wr_id % 3)), 0xabc00000u | n);
		{
			struct rf_sge sg = { e2e_addr(&e.b, 256 * (wc[0].wr_id % 3)), 256,
					     e.b.mr->lkey };

			cr_assert_eq(rf_srq_post(&srq, &sg, 1, wc[0].wr_id + 3), 0);
			rf_srq_ring(&srq);
		}
	}
	rf_cq_detach(&e.b.cq, qp2.qpn);
	rf_qp_destroy_ibv(&qp2);
	rf_srq_fini_ibv(&srq);
	ibv_destroy_srq(ibsrq);
	e2e_close(&e);
}
