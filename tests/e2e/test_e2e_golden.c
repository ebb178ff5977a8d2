/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast's WQEs against libmlx5's own: the same request is posted with
 * ibv_post_send() on a QP that libmlx5 drives (c, connected to d) and with
 * rf_sq_post_*() on an rdmafast QP (a, connected to b), both at the same
 * producer index, and the WQE bytes are compared. Both are executed, so
 * the comparison is of WQEs the device accepted.
 *
 * Bytes that legitimately differ, and are masked:
 *  - qpn_ds bits [31:8]: the QP number (two different QPs);
 *  - everything past DS * 16 bytes: not part of the WQE (libmlx5 leaves
 *    old bytes there, rdmafast may leave the XRC placeholder or the
 *    unused data segment of a zero-length op);
 *  - inline segments past 4 + length: padding to 16 bytes, don't-care.
 */
#include "golden.h"	/* struct gq, its close and the byte helpers */

static void golden_open(struct gq *g)
{
	struct e2e_opts o;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qc, *qd;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pc, pd;

	memset(g, 0, sizeof(*g));
	memset(&o, 0, sizeof(o));
	o.max_inline = 64;
	e2e_open(&g->e, &o);
	g->ccq = ibv_create_cq(g->e.ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(g->ccq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = g->ccq;
	ia.recv_cq = g->ccq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	qc = ibv_create_qp(g->e.pd, &ia);
	cr_assert_not_null(qc);
	/* only to find the SQ buffer and connect: nothing is posted through it */
	cr_assert_eq(rf_qp_init_ibv(&g->c, qc, &ia.cap, 0), 0);
	qd = ibv_create_qp(g->e.pd, &ia);
	cr_assert_not_null(qd);
	cr_assert_eq(rf_qp_init_ibv(&g->d, qd, &ia.cap, 0), 0);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ALL;	/* writes, reads and atomics */
	ca.gid_index = -1;
	memset(&pc, 0, sizeof(pc));
	memset(&pd, 0, sizeof(pd));
	pc.qpn = g->c.qpn;
	pc.lid = g->e.port.lid;
	pd.qpn = g->d.qpn;
	pd.lid = g->e.port.lid;
	if (g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;	/* RoCE: a GRH (RFEMU_LINK_LAYER=eth) */
		cr_assert_eq(ibv_query_gid(g->e.ctx, 1, 0, &pc.gid), 0);
		pd.gid = pc.gid;
	}
	cr_assert_eq(rf_qp_connect_ibv(&g->c, &ca, &pd), 0);
	cr_assert_eq(rf_qp_connect_ibv(&g->d, &ca, &pc), 0);
}

/* Compare the WQEs at index pi of a (rdmafast) and c (libmlx5). */
static void compare(struct gq *g, uint32_t pi, int inline_len, const char *what)
{
	const uint8_t *r = (const uint8_t *)rf_sq_wqe(&g->e.a.qp.sq, pi);
	const uint8_t *l = (const uint8_t *)rf_sq_wqe(&g->c.sq, pi);
	uint32_t ds = l[7] & 0x3f, n;
	int inl_at = -1;

	cr_assert_eq(r[7] & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what, r[7] & 0x3f, ds);
	n = ds * 16;
	if (inline_len >= 0) {
		/* find the inline header (bit 31 of a 16-byte aligned word) */
		for (uint32_t off = 16; off < n; off += 16)
			if (l[off] & 0x80) {
				inl_at = (int)off;
				break;
			}
		cr_assert_geq(inl_at, 0, "%s: no inline segment", what);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (i >= 4 && i < 7)
			continue;	/* QPN */
		if (inl_at >= 0 && i >= (uint32_t)inl_at + 4 + (uint32_t)inline_len)
			continue;	/* inline padding */
		cr_assert_eq(r[i], l[i], "%s: byte %u differs: rdmafast %#x libmlx5 %#x",
			     what, i, r[i], l[i]);
	}
}

static void drain(struct gq *g, int n)
{
	struct ibv_wc wc[8];
	struct rf_wc rw[8];
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int got = 0;

	while (got < n) {
		int k = ibv_poll_cq(g->ccq, 8, wc);

		cr_assert_geq(k, 0);
		for (int i = 0; i < k; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "libmlx5 side: %s",
				     ibv_wc_status_str(wc[i].status));
		got += k;
		cr_assert(e2e_now_ms() < end, "libmlx5 side timeout");
	}
	e2e_wait(&g->e.a.cq, rw, 1);
	cr_assert_eq(rw[0].status, RF_WC_SUCCESS, "rdmafast side: %u", rw[0].status);
}

Test(e2e_golden, wqes_match_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	uint32_t pi = 0;
	uint8_t msg[40];

	golden_open(&g);
	a = &g.e.a;
	b = &g.e.b;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);

	/* receives for the sends below, on both responders */
	receives(&g, 4);

#define LIBMLX5_POST(op, fl)                                                   \
	do {                                                                   \
		wr.opcode = (op);                                              \
		wr.send_flags = (fl);                                          \
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);          \
	} while (0)

	request_512(&g, &wr, &sge);

	/* RDMA WRITE */
	LIBMLX5_POST(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(&a->qp.sq, a->mr->lkey, e2e_addr(a, 0), 512,
				      b->mr->rkey, e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "write");
	drain(&g, 1);

	/* RDMA WRITE with immediate, solicited and fenced */
	wr.imm_data = htobe32(0x11223344);
	LIBMLX5_POST(IBV_WR_RDMA_WRITE_WITH_IMM,
		     IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE);
	cr_assert_eq(rf_sq_post_write_imm(&a->qp.sq, a->mr->lkey, e2e_addr(a, 0), 512,
					  b->mr->rkey, e2e_addr(b, 4096),
					  RF_BE32(0x11223344),
					  RF_SEND_SIGNALED | RF_SEND_SOLICITED | RF_SEND_FENCE,
					  0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "write_imm");
	drain(&g, 2);	/* the requester's and d's receive */
	{
		struct rf_wc w;

		e2e_wait(&b->cq, &w, 1);
	}

	/* RDMA READ */
	LIBMLX5_POST(IBV_WR_RDMA_READ, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_read(&a->qp.sq, a->mr->lkey, e2e_addr(a, 0), 512,
				     b->mr->rkey, e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "read");
	drain(&g, 1);

	/* SEND and SEND with immediate */
	LIBMLX5_POST(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send(&a->qp.sq, a->mr->lkey, e2e_addr(a, 0), 512,
				     RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "send");
	drain(&g, 2);
	LIBMLX5_POST(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send_imm(&a->qp.sq, a->mr->lkey, e2e_addr(a, 0), 512,
					 RF_BE32(0x11223344), RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "send_imm");
	drain(&g, 2);

	/* inline SEND and WRITE */
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIBMLX5_POST(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	/* RF_SEND_RING: the post rings itself (BlueFlame), same WQE */
	cr_assert_eq(rf_sq_post_send_inline(&a->qp.sq, msg, sizeof(msg),
					    RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&g, pi++, (int)sizeof(msg), "send_inline");
	drain(&g, 2);
	sge.length = 8;
	LIBMLX5_POST(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_write_inline(&a->qp.sq, msg, 8, b->mr->rkey,
					     e2e_addr(b, 4096), RF_SEND_SIGNALED | RF_SEND_RING,
					     0), 0);
	compare(&g, pi++, 8, "write_inline8");
	drain(&g, 1);

	/* atomics */
	sge.addr = e2e_addr(a, 8192);
	sge.length = 8;
	sge.lkey = a->mr->lkey;
	wr.wr.atomic.remote_addr = e2e_addr(b, 128);
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = 0x0102030405060708ULL;
	wr.wr.atomic.swap = 0x1112131415161718ULL;
	LIBMLX5_POST(IBV_WR_ATOMIC_CMP_AND_SWP, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_cas(&a->qp.sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL,
				    0x1112131415161718ULL, RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "cas");
	drain(&g, 1);
	LIBMLX5_POST(IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_faa(&a->qp.sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL,
				    RF_SEND_SIGNALED, 0), 0);
	rf_sq_ring(&a->qp.sq);
	compare(&g, pi++, -1, "faa");
	drain(&g, 1);
#undef LIBMLX5_POST
	gq_close(&g);
}

/*
 * Compare rdmafast's WQE at index pr with libmlx5's at pl, each read across
 * its queue's wrap, skipping the QPN (bytes 4..6), the WQE index (1..2)
 * when the two stand at different indexes, a UMR's bound QPN and key, and
 * [from, to): a key each QP has its own of, or inline padding.
 */
static void compare_at(struct gq *g, uint32_t pr, uint32_t pl, uint32_t from, uint32_t to,
		       int after_umr, const char *what)
{
	const struct rf_sq *r = &g->e.a.qp.sq, *l = &g->c.sq;
	uint32_t ds = wqe_byte(l, pl, 7) & 0x3f;
	int umr = wqe_byte(l, pl, 3) == RF_OPCODE_UMR;

	cr_assert_eq(wqe_byte(r, pr, 7) & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what,
		     wqe_byte(r, pr, 7) & 0x3f, ds);
	if (after_umr) {
		/* the fence after a UMR: on this WQE (libmlx5), on a NOP before it (rdmafast) */
		cr_assert_eq(wqe_byte(l, pl, 11) & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s", what);
		cr_assert_eq(wqe_byte(r, pr - 1, 3), RF_OPCODE_NOP, "%s", what);
		cr_assert_eq(wqe_byte(r, pr - 1, 11) & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s",
			     what);
		cr_assert_eq(wqe_byte(r, pr, 11) & 0xe0, 0, "%s", what);
	}
	for (uint32_t i = 0; i < ds * 16; i++) {
		if ((i >= 4 && i < 7) || (i >= from && i < to))
			continue;
		if (pr != pl && (i == 1 || i == 2))
			continue;	/* each WQE's own index (padding moved one) */
		if (umr && i >= 16 + 48 + 4 && i < 16 + 48 + 8)
			continue;	/* mkey context: the window's QPN and key tag */
		if (after_umr && i == 11) {
			cr_assert_eq(wqe_byte(r, pr, i) & 0x1f, wqe_byte(l, pl, i) & 0x1f, "%s", what);
			continue;
		}
		cr_assert_eq(wqe_byte(r, pr, i), wqe_byte(l, pl, i),
			     "%s: byte %u differs: rdmafast %#x libmlx5 %#x", what, i,
			     wqe_byte(r, pr, i), wqe_byte(l, pl, i));
	}
}

/*
 * The posts test_e2e_golden's first test leaves out: SGE lists, send with
 * invalidate, memory-window binds (type 2) and local invalidation, and an
 * inline SEND that meets the end of the queue.
 *
 * Bytes masked besides the QPN: a bind's and an invalidation's key (the
 * control segment's immediate, bytes 12..15) and the bound QPN and key tag
 * in the mkey context (bytes 68..71): two windows, one per QP.
 *
 * Documented differences: after a UMR, libmlx5 fences the next WQE and
 * rdmafast writes a fenced NOP (rdmafast/detail/sq_slots.h); libmlx5 splits a WQE at the end of the queue and
 * goes on at its start (providers/mlx5/qp.c); rdmafast never does, it
 * fills the rest of the queue with NOPs and writes the WQE whole at the
 * start (rdmafast(7)). So WQEs are compared wherever each begins.
 */
Test(e2e_golden, sge_lists_windows_and_wrap_match_libmlx5)
{
	struct gq g;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg[3];
	struct rf_sge rsg[3];
	struct e2e_side *a, *b;
	struct ibv_mw *mwc, *mwa, *mwd, *mwb;
	uint32_t pr = 0, pl = 0;	/* next WQE index: rdmafast, libmlx5 */
	int after_umr = 0;
	uint8_t msg[60];

	golden_open(&g);
	a = &g.e.a;
	b = &g.e.b;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x50 + i);
	receives(&g, 8);

#define BOTH_DONE(what, from, to, ndrain)                                      \
	do {                                                                   \
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);          \
		rf_sq_ring(&a->qp.sq);                                         \
		while (wqe_byte(&a->qp.sq, pr, 3) == RF_OPCODE_NOP)           \
			pr++;	/* rdmafast's padding before the wrap */      \
		compare_at(&g, pr, pl, from, to, after_umr, what);             \
		after_umr = wqe_byte(&g.c.sq, pl, 3) == RF_OPCODE_UMR;          \
		pr += wqe_bbs(&a->qp.sq, pr);                                  \
		pl += wqe_bbs(&g.c.sq, pl);                                    \
		drain(&g, ndrain);                                             \
	} while (0)

	/* SGE lists of three entries, one of them empty (both drop it) */
	for (int i = 0; i < 3; i++) {
		sg[i].addr = e2e_addr(a, 1000u * (uint32_t)i);
		sg[i].length = i == 1 ? 0 : 100u + (uint32_t)i;
		sg[i].lkey = a->mr->lkey;
		rsg[i].addr = sg[i].addr;
		rsg[i].length = sg[i].length;
		rsg[i].lkey = sg[i].lkey;
	}
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sg;
	wr.num_sge = 3;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_SEND;
	cr_assert_eq(rf_sq_post_send_sg(&a->qp.sq, rsg, 3, RF_SEND_SIGNALED, 0), 0);
	BOTH_DONE("send_sg", 0, 0, 2);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = e2e_addr(b, 8192);
	wr.wr.rdma.rkey = b->mr->rkey;
	cr_assert_eq(rf_sq_post_write_sg(&a->qp.sq, rsg, 3, b->mr->rkey, e2e_addr(b, 8192),
					 RF_SEND_SIGNALED, 0), 0);
	BOTH_DONE("write_sg", 0, 0, 1);
	wr.opcode = IBV_WR_RDMA_READ;
	cr_assert_eq(rf_sq_post_read_sg(&a->qp.sq, rsg, 3, b->mr->rkey, e2e_addr(b, 8192),
					RF_SEND_SIGNALED, 0), 0);
	BOTH_DONE("read_sg", 0, 0, 1);

	/* type 2 windows: bound on the requesters (a, c) and on the responders */
	mwc = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_2);
	mwa = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_2);
	mwd = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_2);
	mwb = ibv_alloc_mw(g.e.pd, IBV_MW_TYPE_2);
	cr_assert(mwc && mwa && mwd && mwb, "alloc_mw: %s", strerror(errno));
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mwc;
	wr.bind_mw.rkey = ibv_inc_rkey(mwc->rkey);
	wr.bind_mw.bind_info.mr = a->mr;
	wr.bind_mw.bind_info.addr = e2e_addr(a, 4096);
	wr.bind_mw.bind_info.length = 8192;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	cr_assert_eq(rf_sq_post_bind_mw(&a->qp.sq, mwa->rkey, rf_mw_inc_rkey(mwa->rkey),
					a->mr->lkey, e2e_addr(a, 4096), 8192,
					rf_mw_access_ibv(IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_REMOTE_READ),
					RF_SEND_SIGNALED, 0), 0);
	BOTH_DONE("bind_mw", 12, 16, 1);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = ibv_inc_rkey(mwc->rkey);
	cr_assert_eq(rf_sq_post_local_inv(&a->qp.sq, rf_mw_inc_rkey(mwa->rkey), RF_SEND_SIGNALED,
					  0), 0);
	BOTH_DONE("local_inv", 12, 16, 1);

	/* SEND with invalidate of a window each responder bound */
	{
		struct ibv_send_wr bw;
		struct rf_wc w;

		memset(&bw, 0, sizeof(bw));
		bw.opcode = IBV_WR_BIND_MW;
		bw.send_flags = IBV_SEND_SIGNALED;
		bw.bind_mw.mw = mwd;
		bw.bind_mw.rkey = ibv_inc_rkey(mwd->rkey);
		bw.bind_mw.bind_info.mr = b->mr;
		bw.bind_mw.bind_info.addr = e2e_addr(b, 4096);
		bw.bind_mw.bind_info.length = 4096;
		bw.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		cr_assert_eq(ibv_post_send(g.d.ibqp, &bw, &bad), 0);
		cr_assert_eq(rf_sq_post_bind_mw(&b->qp.sq, mwb->rkey, rf_mw_inc_rkey(mwb->rkey),
						b->mr->lkey, e2e_addr(b, 4096), 4096,
						rf_mw_access_ibv(IBV_ACCESS_REMOTE_WRITE),
						RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
		lib_wait(&g, 1);
		e2e_wait(&b->cq, &w, 1);
		cr_assert_eq(w.status, RF_WC_SUCCESS, "b's bind: %u", w.status);
	}
	memset(&wr, 0, sizeof(wr));
	sg[0].length = 64;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = ibv_inc_rkey(mwd->rkey);
	cr_assert_eq(rf_sq_post_send_inv(&a->qp.sq, a->mr->lkey, sg[0].addr, 64,
					 rf_mw_inc_rkey(mwb->rkey), RF_SEND_SIGNALED, 0), 0);
	BOTH_DONE("send_inv", 12, 16, 2);

	/*
	 * An inline SEND of 60 bytes (2 BBs) posted when one BB is left
	 * before the end of each queue: filled with 1-BB WRITEs first.
	 */
	memset(&wr, 0, sizeof(wr));
	sg[0].length = 8;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = e2e_addr(b, 8192);
	wr.wr.rdma.rkey = b->mr->rkey;
	while ((pl & g.c.sq.wqe_mask) != g.c.sq.wqe_mask) {
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);
		pl++;
		lib_wait(&g, 1);
	}
	while ((pr & a->qp.sq.wqe_mask) != a->qp.sq.wqe_mask) {
		struct rf_wc w;

		cr_assert_eq(rf_sq_post_write(&a->qp.sq, a->mr->lkey, sg[0].addr, 8, b->mr->rkey,
					      e2e_addr(b, 8192), RF_SEND_SIGNALED | RF_SEND_RING,
					      0), 0);
		pr++;
		e2e_wait(&a->cq, &w, 1);
	}
	sg[0].addr = (uint64_t)(uintptr_t)msg;
	sg[0].length = sizeof(msg);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);
	cr_assert_eq(rf_sq_post_send_inline(&a->qp.sq, msg, sizeof(msg),
					    RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	/* rdmafast: a NOP in the last BB, the SEND at the start */
	cr_assert_eq(wqe_byte(&a->qp.sq, pr, 3), RF_OPCODE_NOP, "no NOP before the wrap");
	cr_assert_eq(wqe_bbs(&a->qp.sq, pr), 1);
	compare_at(&g, pr + 1, pl, 16 + 4 + sizeof(msg), 128, 0, "send_inline across the wrap");
	cr_assert_eq((pl + 1) & g.c.sq.wqe_mask, 0, "libmlx5 did not split the WQE");
	drain(&g, 2);
#undef BOTH_DONE

	ibv_dealloc_mw(mwc);
	ibv_dealloc_mw(mwa);
	ibv_dealloc_mw(mwd);
	ibv_dealloc_mw(mwb);
	gq_close(&g);
}

/* Suite e2e_golden again on RoCE (emulated HCA only): both pairs connected with a GRH. */
Test(e2e_golden_roce, rc_on_roce, .timeout = 120)
{
	e2e_rerun_on_roce("e2e_golden/*");
}
