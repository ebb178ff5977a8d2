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
#include "e2e.h"

struct golden {
	struct e2e e;
	struct rf_qp c, d;	/* c: libmlx5 posts; d: its peer (libmlx5 too) */
	struct ibv_cq *ccq;
};

static void golden_open(struct golden *g)
{
	struct e2e_opts o;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qc, *qd;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pc, pd;

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
	cr_assert_eq(rf_qp_connect_ibv(&g->c, &ca, &pd), 0);
	cr_assert_eq(rf_qp_connect_ibv(&g->d, &ca, &pc), 0);
}

static void golden_close(struct golden *g)
{
	rf_qp_destroy_ibv(&g->c);
	rf_qp_destroy_ibv(&g->d);
	ibv_destroy_cq(g->ccq);
	e2e_close(&g->e);
}

/* Compare the WQEs at index pi of a (rdmafast) and c (libmlx5). */
static void compare(struct golden *g, uint32_t pi, int inline_len, const char *what)
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

static void drain(struct golden *g, int n)
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
	struct golden g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct e2e_side *a, *b;
	uint32_t pi = 0;
	uint8_t msg[40];

	golden_open(&g);
	a = &g.e.a;
	b = &g.e.b;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);

	/* receives for the sends below, on both responders */
	for (int i = 0; i < 4; i++) {
		struct ibv_sge rs = { e2e_addr(b, 32768 + 1024u * i), 1024, b->mr->lkey };

		memset(&rwr, 0, sizeof(rwr));
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		cr_assert_eq(ibv_post_recv(g.d.ibqp, &rwr, &rbad), 0);
		cr_assert_eq(rf_rq_post_one(&b->qp.rq, b->mr->lkey,
					    e2e_addr(b, 36864 + 1024u * i), 1024, 0), 0);
	}
	rf_rq_ring(&b->qp.rq);

#define LIBMLX5_POST(op, fl)                                                   \
	do {                                                                   \
		wr.opcode = (op);                                              \
		wr.send_flags = (fl);                                          \
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);          \
	} while (0)

	sge.addr = e2e_addr(a, 0);
	sge.length = 512;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = e2e_addr(b, 4096);
	wr.wr.rdma.rkey = b->mr->rkey;

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
	golden_close(&g);
}
