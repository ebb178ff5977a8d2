/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/e2e/golden.h - the WQE oracle of test_e2e_golden_qp.c and
 * test_e2e_golden_xrc_mw.c: rdmafast's WQEs against libmlx5's on the QP
 * types test_e2e_golden.c (RC, which shares the pair and the byte helpers
 * below) and test_e2e_dc.c (DC) leave out. As there: the same request goes to a libmlx5 QP (c, toward d) and to an
 * rdmafast QP (a, toward b) at the same producer index, both are
 * executed, and the WQE bytes are compared.
 *
 * Masked everywhere: the QPN in the control segment (two QPs), bytes
 * past DS * 16, and inline padding past 4 + length. Besides:
 *  - UD: the destination QPN in the address vector (bytes 25..27: b and
 *    d are two QPs). The rest of the 48-byte AV is compared: rdmafast
 *    takes libmlx5's own AV from the AH (rf_ah_av_ibv()), so what is
 *    checked is what both add to it (extended bit, QPN, the Q_Key of the
 *    request, the word after it zeroed) and that the RoCE fields (MAC,
 *    SGID index, UDP source port) pass through unchanged. A Q_Key with
 *    bit 31 set is written as given by both; the device then uses the
 *    QP's (IBA 10.2.4.2).
 *  - XRC: nothing more; the XRC segment (remote SRQ number) is compared.
 *  - type-1 windows: the key in the control segment's immediate and the
 *    new key's tag (byte 71): two windows. libmlx5 fences the WQE after a
 *    UMR, rdmafast posts a fenced NOP (rdmafast/sq_mw.h), as
 *    test_e2e_golden.c documents, so the indexes (bytes 1..2) drift apart.
 *  - ibv_wr_*(): libmlx5's extended post never writes the control
 *    segment's immediate (bytes 12..15) for an op without one: the bytes
 *    of whatever WQE used the slot before stay (rdma-core 44 and HEAD,
 *    providers/mlx5/qp.c, _common_wqe_init_op()). The device ignores
 *    them; ibv_post_send() and rdmafast write 0. Shown by filling the
 *    slot with 0xa5 first; otherwise the bytes are the same.
 *
 * Masked atomics are not compared: libmlx5 has no verb that posts them (no
 * IBV_WR_* or ibv_wr_*() op, and mlx5dv.h only names the opcodes 0x14 and
 * 0x15), so there is no oracle to run. Their layout is checked field by
 * field against the PRM in tests/unit/test_sq.c (sq/atomics: opcode,
 * opmod, each operand and mask, 32- and 64-bit, both kinds) and
 * tests/unit/test_hw_setters.c (hw_setters/golden_masked_atomics).
 */
#ifndef RDMAFAST_TESTS_E2E_GOLDEN_H
#define RDMAFAST_TESTS_E2E_GOLDEN_H

#include "e2e.h"

#define QKEY 0x11112222u

struct gq {
	struct e2e e;		/* a -> b: rdmafast */
	struct rf_qp c, d;	/* c -> d: libmlx5 (rf_qp only to find buffers, connect) */
	struct ibv_qp_ex *cx;	/* c's extended post */
	struct ibv_cq *ccq;	/* c's and d's */
	struct ibv_ah *ah;	/* UD: to this port */
	struct rf_wqe_av av;	/* its AV */
};

/*
 * One libmlx5 QP of type t with the caps of rdmafast's (e2e_side_open()),
 * max_inline bytes of inline data, and with mlx5dv_create_qp() the
 * mlx5dv send ops dv_ops (memory-key UMRs: test_e2e_umr.c) when not 0.
 */
static inline void lib_qp_dv(struct gq *g, struct rf_qp *q, enum ibv_qp_type t, uint64_t ops,
			     uint64_t dv_ops, uint32_t max_inline)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_qp *ibqp;

	memset(&ax, 0, sizeof(ax));
	ax.qp_type = t;
	ax.send_cq = g->ccq;
	ax.recv_cq = g->ccq;
	ax.cap.max_send_wr = 16;
	ax.cap.max_recv_wr = 16;
	ax.cap.max_send_sge = 4;
	ax.cap.max_recv_sge = 4;
	ax.cap.max_inline_data = max_inline;
	ax.pd = g->e.pd;
	if (t == IBV_QPT_XRC_SEND) {
		ax.recv_cq = NULL;
		ax.cap.max_recv_wr = 0;
		ax.cap.max_recv_sge = 0;
	}
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = ops;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	dx.send_ops_flags = dv_ops;
	ibqp = dv_ops ? mlx5dv_create_qp(g->e.ctx, &ax, &dx) : ibv_create_qp_ex(g->e.ctx, &ax);
	cr_assert_not_null(ibqp, "libmlx5 QP: %s", strerror(errno));
	cr_assert_eq(rf_qp_init_ibv(q, ibqp, &ax.cap, 0), 0);
}

static inline void lib_qp(struct gq *g, struct rf_qp *q, enum ibv_qp_type t, uint64_t ops)
{
	lib_qp_dv(g, q, t, ops, 0, 64);
}

/* The connection attributes of g's QPs of type t, and the peer of QP qpn on this port. */
static inline void gq_conn_attr(struct gq *g, enum ibv_qp_type t, struct rf_qp_conn_attr *ca)
{
	memset(ca, 0, sizeof(*ca));
	ca->access = t == IBV_QPT_UC ? RF_ACCESS_REMOTE_WRITE : RF_ACCESS_REMOTE_ALL;
	ca->gid_index = g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET ? 0 : -1;
	ca->qkey = QKEY;
}

static inline void gq_peer(struct gq *g, uint32_t qpn, struct rf_qp_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->qpn = qpn;
	p->lid = g->e.port.lid;
	if (g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET)
		cr_assert_eq(ibv_query_gid(g->e.ctx, 1, 0, &p->gid), 0);
}

/*
 * e2e's pair a -> b of type t, and libmlx5's c -> d beside it (UD: both
 * pairs at RTS with QKEY, and an AH to this port).
 */
static inline void gq_open(struct gq *g, enum ibv_qp_type t, uint64_t ops)
{
	struct e2e_opts o;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pc, pd;
	int ud = t == IBV_QPT_UD;

	memset(g, 0, sizeof(*g));
	memset(&o, 0, sizeof(o));
	o.type = t;
	if (ud) {
		/* e2e_open() connects RC-style: open the sides alone */
		struct ibv_device **l = ibv_get_device_list(NULL);

		cr_assert(l && l[0]);
		g->e.ctx = ibv_open_device(l[0]);
		ibv_free_device_list(l);
		cr_assert_not_null(g->e.ctx);
		g->e.pd = ibv_alloc_pd(g->e.ctx);
		cr_assert_not_null(g->e.pd);
		e2e_query_port(&g->e);
		e2e_side_open(&g->e, &g->e.a, &o, NULL);
		e2e_side_open(&g->e, &g->e.b, &o, NULL);
	} else {
		e2e_open(&g->e, &o);
	}
	g->ccq = ibv_create_cq(g->e.ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(g->ccq);
	lib_qp(g, &g->c, t, ops);
	lib_qp(g, &g->d, t, ops);
	g->cx = ibv_qp_to_qp_ex(g->c.ibqp);
	cr_assert_not_null(g->cx);

	gq_conn_attr(g, t, &ca);
	gq_peer(g, g->c.qpn, &pc);
	gq_peer(g, g->d.qpn, &pd);
	cr_assert_eq(rf_qp_connect_ibv(&g->c, &ca, ud ? NULL : &pd), 0);
	cr_assert_eq(rf_qp_connect_ibv(&g->d, &ca, ud ? NULL : &pc), 0);
	if (ud) {
		struct ibv_ah_attr aa;

		cr_assert_eq(rf_qp_connect_ibv(&g->e.a.qp, &ca, NULL), 0);
		cr_assert_eq(rf_qp_connect_ibv(&g->e.b.qp, &ca, NULL), 0);
		memset(&aa, 0, sizeof(aa));
		aa.dlid = g->e.port.lid;
		aa.port_num = 1;
		if (g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
			aa.is_global = 1;
			aa.grh.hop_limit = 64;
			aa.grh.dgid = pc.gid;
		}
		g->ah = ibv_create_ah(g->e.pd, &aa);
		cr_assert_not_null(g->ah, "create_ah: %s", strerror(errno));
		cr_assert_eq(rf_ah_av_ibv(g->ah, &g->av), 0);
	}
}

static inline void gq_close(struct gq *g)
{
	if (g->ah)
		ibv_destroy_ah(g->ah);
	rf_qp_destroy_ibv(&g->c);
	rf_qp_destroy_ibv(&g->d);
	ibv_destroy_cq(g->ccq);
	e2e_close(&g->e);
}

/* Byte i of the WQE that starts at index pi, across the queue's wrap. */
static inline uint8_t wqe_byte(const struct rf_sq *sq, uint32_t pi, uint32_t i)
{
	return ((const uint8_t *)rf_sq_wqe(sq, pi + i / RF_SEND_WQE_BB))[i % RF_SEND_WQE_BB];
}

/* The WQE's size in BBs, from its DS. */
static inline uint32_t wqe_bbs(const struct rf_sq *sq, uint32_t pi)
{
	return ((wqe_byte(sq, pi, 7) & 0x3fU) * 16 + RF_SEND_WQE_BB - 1) / RF_SEND_WQE_BB;
}

/*
 * Compare rdmafast's WQE at r[pr] with libmlx5's at l[pl]: the DS, then
 * every byte it covers except the QPN and [from1, to1), [from2, to2).
 */
static inline void cmp(const struct rf_sq *r, uint32_t pr, const struct rf_sq *l, uint32_t pl,
		uint32_t from1, uint32_t to1, uint32_t from2, uint32_t to2, const char *what)
{
	uint32_t ds = wqe_byte(l, pl, 7) & 0x3f;

	cr_assert_eq(wqe_byte(r, pr, 7) & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what,
		     wqe_byte(r, pr, 7) & 0x3f, ds);
	for (uint32_t i = 0; i < ds * 16; i++) {
		if ((i >= 4 && i < 7) || (i >= from1 && i < to1) || (i >= from2 && i < to2))
			continue;
		cr_assert_eq(wqe_byte(r, pr, i), wqe_byte(l, pl, i),
			     "%s: byte %u differs: rdmafast %#x libmlx5 %#x", what, i,
			     wqe_byte(r, pr, i), wqe_byte(l, pl, i));
	}
}

/* n successful completions on libmlx5's CQ. */
static inline void lib_wait(struct gq *g, int n)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	struct ibv_wc wc;

	while (n > 0) {
		int k = ibv_poll_cq(g->ccq, 1, &wc);

		cr_assert_geq(k, 0);
		if (k)
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "libmlx5 side: %s",
				     ibv_wc_status_str(wc.status));
		n -= k;
		cr_assert(e2e_now_ms() < end, "libmlx5 side timeout");
	}
}

/* n successful completions on an rdmafast CQ. */
static inline void rf_wait(struct rf_cq *cq, int n)
{
	struct rf_wc w;

	for (int i = 0; i < n; i++) {
		e2e_wait(cq, &w, 1);
		cr_assert_eq(w.status, RF_WC_SUCCESS, "rdmafast side: %u", w.status);
	}
}

/* k receives of 1024 bytes on b (rdmafast) and on d (libmlx5). */
static inline void receives(struct gq *g, int k)
{
	struct e2e_side *b = &g->e.b;

	for (int i = 0; i < k; i++) {
		struct ibv_sge rs = { e2e_addr(b, 32768 + 1024u * (uint32_t)i), 1024,
				      b->mr->lkey };
		struct ibv_recv_wr rwr, *rbad;

		memset(&rwr, 0, sizeof(rwr));
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		cr_assert_eq(ibv_post_recv(g->d.ibqp, &rwr, &rbad), 0);
		cr_assert_eq(rf_rq_post_one(&b->qp.rq, b->mr->lkey,
					    e2e_addr(b, 49152 + 1024u * (uint32_t)i), 1024, 0), 0);
	}
	rf_rq_ring(&b->qp.rq);
}

/*
 * libmlx5's request of the corpus: 512 bytes of a's buffer, to b's at
 * 4096 for the one-sided ops; opcode and flags are the post's.
 */
static inline void request_512(struct gq *g, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	sge->addr = e2e_addr(&g->e.a, 0);
	sge->length = 512;
	sge->lkey = g->e.a.mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = e2e_addr(&g->e.b, 4096);
	wr->wr.rdma.rkey = g->e.b.mr->rkey;
}

/*
 * A signaled RDMA WRITE of the first 64 bytes of b's buffer by b to raddr
 * with rkey (a window's, a memory key's over a's buffer); its status.
 */
static inline uint32_t write_by_b(struct gq *g, uint32_t rkey, uint64_t raddr)
{
	struct rf_wc w;

	cr_assert_eq(rf_sq_post_write(&g->e.b.qp.sq, g->e.b.mr->lkey, e2e_addr(&g->e.b, 0), 64,
				      rkey, raddr, RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	e2e_wait(&g->e.b.cq, &w, 1);
	return w.status;
}

/* rdmafast rings, then both WQEs at *p are compared, executed and retired. */
static inline void step(struct gq *g, uint32_t *p, uint32_t from, uint32_t to, int recv,
		 const char *what)
{
	rf_sq_ring(&g->e.a.qp.sq);
	cmp(&g->e.a.qp.sq, *p, &g->c.sq, *p, from, to, 0, 0, what);
	*p += wqe_bbs(&g->c.sq, *p);
	lib_wait(g, 1 + recv);
	rf_wait(&g->e.a.cq, 1);
	rf_wait(&g->e.b.cq, recv);
}

#define LIB(op, fl)                                                            \
	do {                                                                   \
		wr.opcode = (op);                                              \
		wr.send_flags = (fl);                                          \
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);          \
	} while (0)

#endif /* RDMAFAST_TESTS_E2E_GOLDEN_H */
