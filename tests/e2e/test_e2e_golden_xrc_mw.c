/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast's WQEs against libmlx5's (golden.h): XRC (every RC op with the
 * XRC segment), RC through ibv_wr_rdma_write() beside ibv_post_send(),
 * and type-1 memory windows bound, rebound and unbound by ibv_bind_mw()
 * against rf_sq_post_bind_mw() with RF_MW_TYPE_1.
 */
#include <fcntl.h>

#include "golden.h"

/*
 * XRC: rdmafast's XRC_SEND QP and libmlx5's, each toward an XRC_RECV QP
 * of its own, both sending to one XRC SRQ (its completions on b's CQ).
 */
Test(e2e_golden_xrc, xrc_matches_libmlx5)
{
	struct gq g;
	struct e2e_opts o;
	struct ibv_xrcd_init_attr xa;
	struct ibv_xrcd *xrcd;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *ibsrq;
	struct ibv_qp_init_attr_ex ra;
	struct ibv_qp *rqa, *rqc;
	struct rf_srq srq;
	struct rf_qp x;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t srqn = 0, p = 0;
	uint8_t msg[40];

	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	e2e_open(&g.e, &o);	/* the context, PD, buffers and CQs */
	a = &g.e.a;
	b = &g.e.b;
	g.ccq = ibv_create_cq(g.e.ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(g.ccq);
	memset(&xa, 0, sizeof(xa));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	xrcd = ibv_open_xrcd(g.e.ctx, &xa);
	cr_assert_not_null(xrcd, "open_xrcd: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 32;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = b->ibcq;
	sa.pd = g.e.pd;
	ibsrq = ibv_create_srq_ex(g.e.ctx, &sa);
	cr_assert_not_null(ibsrq, "xrc srq: %s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(ibsrq, &srqn), 0);
	cr_assert_eq(rf_srq_init_ibv(&srq, ibsrq), 0);
	rf_cq_set_srq(&b->cq, &srq);
	memset(&ra, 0, sizeof(ra));
	ra.qp_type = IBV_QPT_XRC_RECV;
	ra.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ra.xrcd = xrcd;
	rqa = ibv_create_qp_ex(g.e.ctx, &ra);
	rqc = ibv_create_qp_ex(g.e.ctx, &ra);
	cr_assert(rqa && rqc, "xrc recv qp: %s", strerror(errno));

	memset(&qa, 0, sizeof(qa));
	qa.pd = g.e.pd;
	qa.send_cq = a->ibcq;
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.max_send_wr = 16;
	qa.max_send_sge = 4;
	qa.max_inline_data = 64;
	cr_assert_eq(rf_qp_create_ibv(&x, &qa), 0);
	cr_assert_eq(x.kind, RF_QP_XRC);
	cr_assert_eq(rf_cq_attach(&a->cq, x.qpn, &x.sq, NULL, NULL), 0);
	lib_qp(&g, &g.c, IBV_QPT_XRC_SEND, RF_SEND_OPS_DEFAULT);

	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ALL;
	ca.gid_index = -1;
	memset(&peer, 0, sizeof(peer));
	peer.lid = g.e.port.lid;
	if (g.e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(g.e.ctx, 1, 0, &peer.gid), 0);
	}
	peer.qpn = x.qpn;
	cr_assert_eq(rf_xrc_recv_connect_ibv(rqa, &ca, &peer), 0);
	peer.qpn = g.c.qpn;
	cr_assert_eq(rf_xrc_recv_connect_ibv(rqc, &ca, &peer), 0);
	peer.qpn = rqa->qp_num;
	cr_assert_eq(rf_qp_connect_ibv(&x, &ca, &peer), 0);
	peer.qpn = rqc->qp_num;
	cr_assert_eq(rf_qp_connect_ibv(&g.c, &ca, &peer), 0);

	for (uint32_t i = 0; i < 16; i++) {
		struct rf_sge sg = { e2e_addr(b, 32768 + 1024 * i), 1024, b->mr->lkey };

		cr_assert_eq(rf_srq_post(&srq, &sg, 1, i), 0);
	}
	rf_srq_ring(&srq);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x40 + i);
	sq = &x.sq;
	rf_sq_set_xrc_srqn(sq, srqn);
	sge.addr = e2e_addr(a, 0);
	sge.length = 300;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = e2e_addr(b, 4096);
	wr.wr.rdma.rkey = b->mr->rkey;
	wr.imm_data = htobe32(0x0a0b0c0d);

#define XRC_STEP(recv, from, to, what)                                         \
	do {                                                                   \
		rf_sq_ring(sq);                                                \
		cmp(sq, p, &g.c.sq, p, from, to, 0, 0, what);                  \
		p += wqe_bbs(&g.c.sq, p);                                      \
		lib_wait(&g, 1);                                               \
		rf_wait(&a->cq, 1);                                            \
		rf_wait(&b->cq, 2 * (recv));                                   \
	} while (0)

	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send(sq, a->mr->lkey, e2e_addr(a, 0), 300, RF_SEND_SIGNALED, 0),
		     0);
	XRC_STEP(1, 0, 0, "xrc send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_send_imm(sq, a->mr->lkey, e2e_addr(a, 0), 300,
					 RF_BE32(0x0a0b0c0d),
					 RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	XRC_STEP(1, 0, 0, "xrc send_imm");
	LIB(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc write");
	LIB(IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	cr_assert_eq(rf_sq_post_write_imm(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
					  e2e_addr(b, 4096), RF_BE32(0x0a0b0c0d),
					  RF_SEND_SIGNALED | RF_SEND_FENCE, 0), 0);
	XRC_STEP(1, 0, 0, "xrc write_imm");
	LIB(IBV_WR_RDMA_READ, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_read(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
				     e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc read");
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_send_inline(sq, msg, sizeof(msg), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(1, 32 + 4 + sizeof(msg), 128, "xrc send_inline");
	/* atomics: ctrl, XRC, raddr, atomic, data: 5 DS, 2 BBs */
	sge.addr = e2e_addr(a, 8192);
	sge.length = 8;
	wr.wr.atomic.remote_addr = e2e_addr(b, 128);
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = 0x0102030405060708ULL;
	wr.wr.atomic.swap = 0x1112131415161718ULL;
	LIB(IBV_WR_ATOMIC_CMP_AND_SWP, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_cas(sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL,
				    0x1112131415161718ULL, RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc cas");
	LIB(IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_faa(sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL, RF_SEND_SIGNALED, 0),
		     0);
	XRC_STEP(0, 0, 0, "xrc faa");
#undef XRC_STEP
	cr_assert_eq(b->cq.nstale, 0);

	rf_cq_detach(&a->cq, x.qpn);
	rf_qp_destroy_ibv(&x);
	rf_qp_destroy_ibv(&g.c);
	ibv_destroy_qp(rqa);
	ibv_destroy_qp(rqc);
	rf_cq_set_srq(&b->cq, NULL);
	rf_srq_fini_ibv(&srq);
	ibv_destroy_srq(ibsrq);
	ibv_close_xrcd(xrcd);
	ibv_destroy_cq(g.ccq);
	e2e_close(&g.e);
}

/*
 * A window's UMR: rdmafast's at pr, libmlx5's at pl (their indexes apart
 * by rdmafast's fence NOPs), masking the window's key (12..15) and its
 * new tag (71); libmlx5 fences the WQE after its UMR (after_umr: byte
 * 11's fence bits), rdmafast's fenced NOP is checked to follow its own.
 */
static void mw_cmp(struct gq *g, uint32_t pr, uint32_t pl, int after_umr, const char *what)
{
	const struct rf_sq *r = &g->e.a.qp.sq, *l = &g->c.sq;
	uint32_t ds = wqe_byte(l, pl, 7) & 0x3f;

	cr_assert_eq(wqe_byte(r, pr, 7) & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what,
		     wqe_byte(r, pr, 7) & 0x3f, ds);
	for (uint32_t i = 0; i < ds * 16; i++) {
		uint8_t x = wqe_byte(r, pr, i), y = wqe_byte(l, pl, i);

		if ((i >= 1 && i < 3) || (i >= 4 && i < 7) || (i >= 12 && i < 16) || i == 71)
			continue;
		if (i == 11 && after_umr) {
			cr_assert_eq(y & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s", what);
			x &= 0x1f;
			y &= 0x1f;
		}
		cr_assert_eq(x, y, "%s: byte %u differs: rdmafast %#x libmlx5 %#x", what, i, x, y);
	}
	pr += wqe_bbs(r, pr);
	cr_assert_eq(wqe_byte(r, pr, 3), RF_OPCODE_NOP, "%s: no fence NOP", what);
	cr_assert_eq(wqe_byte(r, pr, 11) & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s", what);
}

/*
 * RC through libmlx5's ibv_wr_*() (an RDMA WRITE, against ibv_post_send()
 * too), then type-1 windows: bound, rebound while bound, and unbound
 * (length 0) by ibv_bind_mw() on c and by rf_sq_post_bind_mw() with
 * RF_MW_TYPE_1 on a; each bound window is used by b.
 */
Test(e2e_golden_mw, rc_wr_api_and_type1_windows_match_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_mw_bind mb;
	struct ibv_mw *mwc, *mwa;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t p = 0, pr, pl, acc = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

	gq_open(&g, IBV_QPT_RC, RF_SEND_OPS_DEFAULT | IBV_QP_EX_WITH_BIND_MW |
		IBV_QP_EX_WITH_LOCAL_INV);
	a = &g.e.a;
	b = &g.e.b;
	sq = &a->qp.sq;

	/* ibv_wr_rdma_write() over a slot of 0xa5: its immediate stays */
	memset((void *)rf_sq_wqe(&g.c.sq, p), 0xa5, RF_SEND_WQE_BB);
	memset((void *)rf_sq_wqe(sq, p), 0xa5, RF_SEND_WQE_BB);
	ibv_wr_start(g.cx);
	g.cx->wr_id = 0;
	g.cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(g.cx, b->mr->rkey, e2e_addr(b, 4096));
	ibv_wr_set_sge(g.cx, a->mr->lkey, e2e_addr(a, 0), 512);
	cr_assert_eq(ibv_wr_complete(g.cx), 0);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	for (uint32_t i = 12; i < 16; i++) {
		cr_assert_eq(wqe_byte(&g.c.sq, p, i), 0xa5, "ibv_wr_rdma_write wrote byte %u", i);
		cr_assert_eq(wqe_byte(sq, p, i), 0, "rdmafast left byte %u", i);
	}
	step(&g, &p, 12, 16, 0, "rc ibv_wr_rdma_write");
	/* ibv_post_send() over the same: writes the immediate's 0 */
	memset((void *)rf_sq_wqe(&g.c.sq, p), 0xa5, RF_SEND_WQE_BB);
	request_512(&g, &wr, &sge);
	LIB(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 0, 0, 0, "rc ibv_post_send write");

	/* type-1 windows on a's buffer, one per side */
	mwc = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_1);
	mwa = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_1);
	cr_assert(mwc && mwa, "alloc_mw: %s", strerror(errno));
	pr = pl = p;
	for (int round = 0; round < 3; round++) {
		uint64_t len = round == 2 ? 0 : 8192u >> round;
		uint32_t key = rf_mw_inc_rkey(mwa->rkey);
		uint32_t ra = round == 2 ? RF_MW_TYPE_1 :
			      rf_mw_access_ibv((int)acc) | RF_MW_TYPE_1;
		const char *what[3] = { "type-1 bind", "type-1 rebind", "type-1 unbind" };
		struct rf_wc w;

		memset(&mb, 0, sizeof(mb));
		mb.send_flags = IBV_SEND_SIGNALED;
		if (len) {
			mb.bind_info.mr = a->mr;
			mb.bind_info.addr = e2e_addr(a, 4096 * (size_t)(round + 1));
			mb.bind_info.length = len;
			mb.bind_info.mw_access_flags = acc;
		}
		cr_assert_eq(ibv_bind_mw(g.c.ibqp, mwc, &mb), 0, "ibv_bind_mw: %s",
			     strerror(errno));
		cr_assert_eq(rf_sq_post_bind_mw(sq, mwa->rkey, key, len ? a->mr->lkey : 0,
						len ? e2e_addr(a, 4096 * (size_t)(round + 1)) : 0,
						len, ra, RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
		mw_cmp(&g, pr, pl, round > 0, what[round]);
		pr += wqe_bbs(sq, pr) + 1;
		pl += wqe_bbs(&g.c.sq, pl);
		lib_wait(&g, 1);
		e2e_wait(&a->cq, &w, 1);
		cr_assert_eq(w.status, RF_WC_SUCCESS, "%s: %u", what[round], w.status);
		mwa->rkey = key;	/* as ibv_bind_mw() keeps it */
		if (len) {
			uint64_t at = e2e_addr(a, 4096 * (size_t)(round + 1));

			cr_assert_eq(write_by_b(&g, mwa->rkey, at), RF_WC_SUCCESS,
				     "%s: through rdmafast's window", what[round]);
			cr_assert_eq(write_by_b(&g, mwc->rkey, at + 64), RF_WC_SUCCESS,
				     "%s: through libmlx5's window", what[round]);
		}
	}
	/* unbound: b's write through the window fails (and ends b's QP) */
	cr_assert_neq(write_by_b(&g, mwa->rkey, e2e_addr(a, 4096)), RF_WC_SUCCESS,
		      "unbound window used");
	ibv_dealloc_mw(mwc);
	ibv_dealloc_mw(mwa);
	gq_close(&g);
}


/* Suite e2e_golden_xrc again on RoCE (emulated HCA only): its QPs connected with a GRH. */
Test(e2e_golden_roce, xrc_on_roce, .timeout = 120)
{
	e2e_rerun_on_roce("e2e_golden_xrc/*");
}
