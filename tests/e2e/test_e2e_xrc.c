/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * XRC through rdmafast: an XRC_SEND QP (rdmafast) targets an XRC SRQ
 * behind an XRC_RECV QP (verbs) by SRQ number; the receive completions
 * arrive on the SRQ's CQ with the XRC_RECV QP's number, which the
 * application never attaches: the CQ routes them to its SRQ
 * (rf_cq_set_srq()).
 */
#include <fcntl.h>

#include "e2e.h"

Test(e2e_xrc, send_write_to_xrc_srq)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_xrcd_init_attr xa;
	struct ibv_xrcd *xrcd;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *ibsrq;
	struct ibv_qp_init_attr_ex ra;
	struct ibv_qp *rqp;
	struct rf_srq srq;
	struct rf_qp sqp;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct rf_wc wc[2];
	uint32_t srqn = 0;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);	/* for the context, PD, buffers and CQs */
	memset(&xa, 0, sizeof(xa));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	xrcd = ibv_open_xrcd(e.ctx, &xa);
	cr_assert_not_null(xrcd, "open_xrcd: %s", strerror(errno));

	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = e.b.ibcq;
	sa.pd = e.pd;
	ibsrq = ibv_create_srq_ex(e.ctx, &sa);
	cr_assert_not_null(ibsrq, "xrc srq: %s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(ibsrq, &srqn), 0);
	cr_assert_eq(rf_srq_init_ibv(&srq, ibsrq), 0);
	rf_cq_set_srq(&e.b.cq, &srq);

	/* the receive side: an XRC_RECV QP in the same domain */
	memset(&ra, 0, sizeof(ra));
	ra.qp_type = IBV_QPT_XRC_RECV;
	ra.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ra.xrcd = xrcd;
	rqp = ibv_create_qp_ex(e.ctx, &ra);
	cr_assert_not_null(rqp, "xrc recv qp: %s", strerror(errno));

	/* the send side: rdmafast's XRC_SEND QP */
	memset(&qa, 0, sizeof(qa));
	qa.pd = e.pd;
	qa.send_cq = e.a.ibcq;
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.max_send_wr = 16;
	qa.max_inline_data = 32;
	cr_assert_eq(rf_qp_create_ibv(&sqp, &qa), 0);
	cr_assert_eq(sqp.kind, RF_QP_XRC);
	cr_assert_eq(sqp.has_rq, 0);
	cr_assert_eq(rf_cq_attach(&e.a.cq, sqp.qpn, &sqp.sq, NULL, NULL), 0);

	/* both sides by the glue: the XRC_RECV QP to RTR, the sender to RTS */
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_WRITE;	/* the sender writes into e.b */
	ca.gid_index = -1;
	memset(&peer, 0, sizeof(peer));
	peer.qpn = sqp.qpn;
	peer.lid = e.port.lid;
	cr_assert_eq(rf_xrc_recv_connect_ibv(rqp, &ca, &peer), 0);
	peer.qpn = rqp->qp_num;
	cr_assert_eq(rf_qp_connect_ibv(&sqp, &ca, &peer), 0);

	{
		struct rf_sge sg = { e2e_addr(&e.b, 0), 512, e.b.mr->lkey };

		cr_assert_eq(rf_srq_post(&srq, &sg, 1, 70), 0);
		rf_srq_ring(&srq);
	}
	memset(e.a.buf, 0x5e, 512);
	rf_sq_set_xrc_srqn(&sqp.sq, srqn);
	cr_assert_eq(rf_sq_post_send(&sqp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 300,
				     RF_SEND_SIGNALED, 1), 0);
	cr_assert_eq(rf_sq_post_write(&sqp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 64,
				      e.b.mr->rkey, e2e_addr(&e.b, 4096), RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&sqp.sq);
	e2e_wait(&e.a.cq, wc, 2);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "xrc send: %u", wc[0].status);
	cr_assert_eq(wc[1].status, RF_WC_SUCCESS, "xrc write: %u", wc[1].status);
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 70);
	cr_assert_eq(wc[0].byte_len, 300);
	cr_assert_eq(wc[0].flags & RF_WC_SRQ, RF_WC_SRQ);
	cr_assert_eq(e.b.buf[299], 0x5e);
	cr_assert_eq(e.b.buf[4096 + 63], 0x5e);
	cr_assert_eq(e.b.cq.nstale, 0);

	rf_cq_detach(&e.a.cq, sqp.qpn);
	rf_qp_destroy_ibv(&sqp);
	ibv_destroy_qp(rqp);
	rf_cq_set_srq(&e.b.cq, NULL);
	rf_srq_fini_ibv(&srq);
	ibv_destroy_srq(ibsrq);
	ibv_close_xrcd(xrcd);
	e2e_close(&e);
}
