/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * DC through rdmafast: rdmafast's DCI WQEs against the ones libmlx5 writes
 * with ibv_wr_*() and mlx5dv_wr_set_dc_addr() for the same request (as
 * test_e2e_golden.c does for RC: both DCIs at the same producer index,
 * both executed against one DCT, bytes compared with the QPN masked), the
 * DCI stream id against mlx5dv_wr_set_dc_addr_stream(), the 16-byte
 * compact address vector executed by the device (and a WQE whose AV
 * claims more than its DS cover refused), a batch of DCI WQEs with one
 * doorbell and one CQE, and a DCI in error reset and reused with
 * rf_dci_reset_ibv(); all of it again on RoCE (suite e2e_dc_roce).
 */
#include "e2e.h"

#define KEY 0x5eed0000cafef00dull

struct dc {
	struct e2e e;
	struct ibv_srq *srq;
	struct ibv_cq *dcq;	/* the DCT's, polled with ibv_poll_cq() */
	struct ibv_qp *dct;
	struct ibv_ah *ah;
	struct rf_dc_dest dest;
	struct rf_qp a;		/* rdmafast's DCI, completions on e.a.cq */
	struct ibv_qp *c;	/* libmlx5's DCI */
	struct ibv_qp_ex *cx;
	struct mlx5dv_qp_ex *cdv;
	struct ibv_cq *ccq;
};

static void dc_open(struct dc *d)
{
	struct e2e_opts o;
	struct ibv_srq_init_attr sa;
	struct ibv_ah_attr aa;
	struct rf_qp_conn_attr ca;
	struct rf_wqe_av av;
	struct rf_qp_init_attr qa;
	int rc;

	memset(&o, 0, sizeof(o));
	e2e_open(&d->e, &o);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 64;
	sa.attr.max_sge = 1;
	d->srq = ibv_create_srq(d->e.pd, &sa);
	d->dcq = ibv_create_cq(d->e.ctx, 64, NULL, NULL, 0);
	d->ccq = ibv_create_cq(d->e.ctx, 64, NULL, NULL, 0);
	cr_assert(d->srq && d->dcq && d->ccq);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ALL;	/* the DCIs write, read and do atomics */
	rc = rf_dct_create_ibv(d->e.pd, d->srq, d->dcq, KEY, &ca, &d->dct);
	cr_assert_eq(rc, 0, "DCT: %s", strerror(-rc));

	memset(&aa, 0, sizeof(aa));
	aa.dlid = d->e.port.lid;
	aa.port_num = 1;
	if (d->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		aa.is_global = 1;
		aa.grh.hop_limit = 64;
		cr_assert_eq(ibv_query_gid(d->e.ctx, 1, 0, &aa.grh.dgid), 0);
	}
	d->ah = ibv_create_ah(d->e.pd, &aa);
	cr_assert_not_null(d->ah);
	cr_assert_eq(rf_ah_av_ibv(d->ah, &av), 0);
	rf_dc_dest_init(&d->dest, &av, d->dct->qp_num, KEY);

	memset(&qa, 0, sizeof(qa));
	qa.pd = d->e.pd;
	qa.send_cq = d->e.a.ibcq;
	qa.max_send_wr = 16;
	qa.max_send_sge = 1;
	qa.max_inline_data = 64;
	rc = rf_dci_create_ibv(&d->a, &qa);
	cr_assert_eq(rc, 0, "DCI: %s", strerror(-rc));
	cr_assert_eq(d->a.kind, RF_QP_DCI);
	cr_assert_eq(rf_dci_connect_ibv(&d->a, &ca), 0);
	cr_assert_eq(rf_cq_attach(&d->e.a.cq, d->a.qpn, &d->a.sq, NULL, NULL), 0);

	/* libmlx5's DCI, sized the same way */
	{
		struct ibv_qp_init_attr_ex ax;
		struct mlx5dv_qp_init_attr dx;
		struct rf_qp tmp;

		memset(&ax, 0, sizeof(ax));
		ax.qp_type = IBV_QPT_DRIVER;
		ax.send_cq = d->ccq;
		ax.recv_cq = d->ccq;
		ax.pd = d->e.pd;
		ax.cap.max_send_wr = 16;
		ax.cap.max_send_sge = 1;
		ax.cap.max_inline_data = 64;
		ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ax.send_ops_flags = RF_SEND_OPS_DEFAULT;
		memset(&dx, 0, sizeof(dx));
		dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
		dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
		d->c = mlx5dv_create_qp(d->e.ctx, &ax, &dx);
		cr_assert_not_null(d->c, "%s", strerror(errno));
		d->cx = ibv_qp_to_qp_ex(d->c);
		d->cdv = mlx5dv_qp_ex_from_ibv_qp_ex(d->cx);
		/* only to connect it: nothing is posted through tmp */
		cr_assert_eq(rf_qp_init_ibv(&tmp, d->c, &ax.cap, 0), 0);
		cr_assert_eq(tmp.sq.wqe_cnt, d->a.sq.wqe_cnt);
		cr_assert_eq(rf_dci_connect_ibv(&tmp, &ca), 0);
		rf_qp_fini_ibv(&tmp);
	}
}

static void dc_close(struct dc *d)
{
	rf_cq_detach(&d->e.a.cq, d->a.qpn);
	cr_assert_eq(rf_qp_destroy_ibv(&d->a), 0);
	cr_assert_eq(ibv_destroy_qp(d->c), 0);
	cr_assert_eq(ibv_destroy_qp(d->dct), 0);
	cr_assert_eq(ibv_destroy_ah(d->ah), 0);
	cr_assert_eq(ibv_destroy_srq(d->srq), 0);
	cr_assert_eq(ibv_destroy_cq(d->dcq), 0);
	cr_assert_eq(ibv_destroy_cq(d->ccq), 0);
	e2e_close(&d->e);
}

static void srq_recv(struct dc *d, size_t off)
{
	struct ibv_sge s = { e2e_addr(&d->e.b, off), 1024, d->e.b.mr->lkey };
	struct ibv_recv_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &s;
	wr.num_sge = 1;
	cr_assert_eq(ibv_post_srq_recv(d->srq, &wr, &bad), 0);
}

/*
 * Compare rdmafast's and libmlx5's WQE at pi: the DS it covers, the QPN
 * masked, and from pad on (the don't-care padding after an inline payload;
 * -1: none).
 */
static void compare(struct dc *d, uint32_t pi, int pad, const char *what)
{
	struct mlx5dv_qp dv;
	struct mlx5dv_obj obj;
	const uint8_t *r = (const uint8_t *)rf_sq_wqe(&d->a.sq, pi), *l;
	uint32_t ds, n;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.qp.in = d->c;
	obj.qp.out = &dv;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	l = (const uint8_t *)dv.sq.buf + (size_t)(pi & (dv.sq.wqe_cnt - 1)) * 64;
	ds = l[7] & 0x3f;
	cr_assert_eq(r[7] & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what, r[7] & 0x3f, ds);
	n = ds * 16;
	for (uint32_t i = 0; i < n; i++) {
		if (i >= 4 && i < 7)
			continue;	/* QPN */
		if (pad >= 0 && i >= (uint32_t)pad)
			continue;
		cr_assert_eq(r[i], l[i], "%s: byte %u differs: rdmafast %#x libmlx5 %#x",
			     what, i, r[i], l[i]);
	}
}

static void drain(struct dc *d, int receives)
{
	struct ibv_wc wc[4];
	struct rf_wc rw;
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int got = 0;

	while (got < 1) {
		int k = ibv_poll_cq(d->ccq, 1, wc);

		cr_assert_geq(k, 0);
		if (k)
			cr_assert_eq(wc[0].status, IBV_WC_SUCCESS, "libmlx5 DCI: %s",
				     ibv_wc_status_str(wc[0].status));
		got += k;
		cr_assert(e2e_now_ms() < end, "libmlx5 DCI timeout");
	}
	e2e_wait(&d->e.a.cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "rdmafast DCI: %u", rw.status);
	for (got = 0; got < 2 * receives;) {
		int k = ibv_poll_cq(d->dcq, 4, wc);

		cr_assert_geq(k, 0);
		for (int i = 0; i < k; i++) {
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[i].qp_num, d->dct->qp_num, "the DCT is named");
		}
		got += k;
		cr_assert(e2e_now_ms() < end, "DCT timeout");
	}
}

#define START()                                                                \
	do {                                                                   \
		ibv_wr_start(d.cx);                                            \
		d.cx->wr_id = 0;                                               \
		d.cx->wr_flags = IBV_SEND_SIGNALED;                            \
	} while (0)
#define FINISH() cr_assert_eq(ibv_wr_complete(d.cx), 0)
#define TO() mlx5dv_wr_set_dc_addr(d.cdv, d.ah, d.dct->qp_num, KEY)
#define SGE(off, len) ibv_wr_set_sge(d.cx, a->mr->lkey, e2e_addr(a, off), len)

Test(e2e_dc, dci_wqes_match_libmlx5)
{
	struct dc d;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t pi = 0;
	uint8_t msg[40];

	dc_open(&d);
	a = &d.e.a;
	b = &d.e.b;
	sq = &d.a.sq;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);
	for (int i = 0; i < 12; i++)
		srq_recv(&d, 32768 + 1024u * (unsigned)i);

	START(); ibv_wr_rdma_write(d.cx, b->mr->rkey, e2e_addr(b, 4096)); TO(); SGE(0, 512); FINISH();
	cr_assert_eq(rf_sq_post_dc_write(sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 512,
					 b->mr->rkey, e2e_addr(b, 4096),
					 RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "write");
	pi += 2;	/* ctrl, address vector, raddr, data: 96 bytes */
	drain(&d, 0);

	START(); ibv_wr_rdma_write_imm(d.cx, b->mr->rkey, e2e_addr(b, 4096), htobe32(0x1234));
	TO(); SGE(0, 64); FINISH();
	cr_assert_eq(rf_sq_post_dc_write_imm(sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 64,
					     b->mr->rkey, e2e_addr(b, 4096), RF_BE32(0x1234),
					     RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "write_imm");
	pi += 2;
	drain(&d, 1);

	START(); ibv_wr_rdma_read(d.cx, b->mr->rkey, e2e_addr(b, 4096)); TO(); SGE(8192, 256); FINISH();
	cr_assert_eq(rf_sq_post_dc_read(sq, &d.dest, a->mr->lkey, e2e_addr(a, 8192), 256,
					b->mr->rkey, e2e_addr(b, 4096),
					RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "read");
	pi += 2;
	drain(&d, 0);

	START(); ibv_wr_send(d.cx); TO(); SGE(0, 100); FINISH();
	cr_assert_eq(rf_sq_post_dc_send(sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 100,
					RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "send");
	pi += 2;
	drain(&d, 1);

	START(); ibv_wr_send_imm(d.cx, htobe32(7)); TO(); SGE(0, 100); FINISH();
	cr_assert_eq(rf_sq_post_dc_send_imm(sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 100,
					    RF_BE32(7), RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "send_imm");
	pi += 2;
	drain(&d, 1);

	START(); ibv_wr_atomic_fetch_add(d.cx, b->mr->rkey, e2e_addr(b, 0), 5);
	TO(); SGE(16384, 8); FINISH();
	cr_assert_eq(rf_sq_post_dc_faa(sq, &d.dest, a->mr->lkey, e2e_addr(a, 16384),
					     b->mr->rkey, e2e_addr(b, 0), 5,
					     RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "fetch_add");
	pi += 2;
	drain(&d, 0);

	START(); ibv_wr_atomic_cmp_swp(d.cx, b->mr->rkey, e2e_addr(b, 8), 0, 9);
	TO(); SGE(16392, 8); FINISH();
	cr_assert_eq(rf_sq_post_dc_cas(sq, &d.dest, a->mr->lkey, e2e_addr(a, 16392),
					    b->mr->rkey, e2e_addr(b, 8), 0, 9,
					    RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, -1, "cmp_swap");
	pi += 2;
	drain(&d, 0);

	START(); ibv_wr_rdma_write(d.cx, b->mr->rkey, e2e_addr(b, 4096)); TO();
	ibv_wr_set_inline_data(d.cx, msg, 20); FINISH();
	cr_assert_eq(rf_sq_post_dc_write_inline(sq, &d.dest, msg, 20, b->mr->rkey,
						e2e_addr(b, 4096),
						RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, 16 + 48 + 16 + 4 + 20, "write_inline");
	pi += 2;
	drain(&d, 0);

	START(); ibv_wr_send(d.cx); TO(); ibv_wr_set_inline_data(d.cx, msg, 40); FINISH();
	cr_assert_eq(rf_sq_post_dc_send_inline(sq, &d.dest, msg, 40,
					       RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	compare(&d, pi, 16 + 48 + 4 + 40, "send_inline");
	pi += 2;
	drain(&d, 1);

	/* the DCI stream id in ctrl bytes 9..10; the rest as without it */
	START(); ibv_wr_rdma_write(d.cx, b->mr->rkey, e2e_addr(b, 4096));
	mlx5dv_wr_set_dc_addr_stream(d.cdv, d.ah, d.dct->qp_num, KEY, 0x0102);
	SGE(0, 64); FINISH();
	rf_dc_dest_set_stream(&d.dest, 0x0102);
	cr_assert_eq(rf_sq_post_dc_write(sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 4096),
					 RF_SEND_SIGNALED | RF_SEND_RING, 0), 0);
	rf_dc_dest_set_stream(&d.dest, 0);
	cr_assert_eq(rf_sq_wqe(sq, pi)->dci_stream_channel_id[0], 1);
	cr_assert_eq(rf_sq_wqe(sq, pi)->dci_stream_channel_id[1], 2);
	compare(&d, pi, -1, "write_stream");
	drain(&d, 0);

	/* both atomics ran twice, once from each DCI */
	cr_assert_eq(*(uint64_t *)b->buf, 10);
	dc_close(&d);
}

/* The compact form of the test's destination, or NULL on RoCE (a GRH is needed). */
static struct rf_dc_dest *compact(struct dc *d, struct rf_dc_dest *c)
{
	struct rf_wqe_av av;
	int rc;

	memset(&av, 0, sizeof(av));	/* the analyzer does not see cr_assert stop */
	cr_assert_eq(rf_ah_av_ibv(d->ah, &av), 0);
	rc = rf_dc_dest_init_compact(c, &av, d->dct->qp_num, KEY);
	if (d->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		cr_assert_eq(rc, -EINVAL, "RoCE: no compact AV");
		return NULL;
	}
	cr_assert_eq(rc, 0);
	return c;
}

Test(e2e_dc, compact_av_runs_every_kind_of_body)
{
	struct dc d;
	struct rf_dc_dest cd, *c;
	struct e2e_side *a, *b;
	struct ibv_wc wc[4];
	struct rf_wc rw;
	struct rf_sq *sq;

	dc_open(&d);
	a = &d.e.a;
	b = &d.e.b;
	sq = &d.a.sq;
	c = compact(&d, &cd);
	if (!c) {
		dc_close(&d);
		return;
	}
	for (int i = 0; i < 256; i++)
		a->buf[i] = (uint8_t)(i * 3 + 1);
	memset(b->buf, 0, 8192);
	*(uint64_t *)(b->buf + 8192) = 100;
	srq_recv(&d, 32768);

	cr_assert_eq(rf_sq_post_dc_write(sq, c, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 0),
					 RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	cr_assert_eq(sq->pi, 1, "a one-SGE write is one BB");
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "write: %u", rw.status);
	cr_assert_eq(memcmp(b->buf, a->buf, 64), 0);

	cr_assert_eq(rf_sq_post_dc_read(sq, c, a->mr->lkey, e2e_addr(a, 4096), 64,
					b->mr->rkey, e2e_addr(b, 0),
					RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "read: %u", rw.status);
	cr_assert_eq(memcmp(a->buf + 4096, a->buf, 64), 0);

	cr_assert_eq(rf_sq_post_dc_faa(sq, c, a->mr->lkey, e2e_addr(a, 8192),
				       b->mr->rkey, e2e_addr(b, 8192), 5,
				       RF_SEND_SIGNALED | RF_SEND_RING, 3), 0);
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "fetch_add: %u", rw.status);
	cr_assert_eq(*(uint64_t *)(a->buf + 8192), 100);
	cr_assert_eq(*(uint64_t *)(b->buf + 8192), 105);

	cr_assert_eq(rf_sq_post_dc_send_inline(sq, c, "compact", 7,
					       RF_SEND_SIGNALED | RF_SEND_RING, 4), 0);
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "send: %u", rw.status);
	{
		long end = e2e_now_ms() + E2E_TIMEOUT_MS;
		int k;

		while ((k = ibv_poll_cq(d.dcq, 1, wc)) == 0)
			cr_assert(e2e_now_ms() < end, "DCT timeout");
		cr_assert_eq(k, 1);
		cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
		cr_assert_eq(wc[0].qp_num, d.dct->qp_num);
		cr_assert_eq(wc[0].byte_len, 7);
		cr_assert_eq(memcmp(b->buf + 32768, "compact", 7), 0);
	}
	dc_close(&d);
}

Test(e2e_dc, av_claiming_more_than_its_ds_is_refused)
{
	struct dc d;
	struct rf_dc_dest cd, *c;
	struct e2e_side *a, *b;
	struct rf_wc rw;

	dc_open(&d);
	a = &d.e.a;
	b = &d.e.b;
	c = compact(&d, &cd);
	if (!c) {
		dc_close(&d);
		return;
	}
	/* the extended bit on a 16-byte AV: the WQE's 4 DS end before its raddr */
	c->av.dqp_dct |= RF_BE32(RF_EXTENDED_UD_AV);
	memset(b->buf, 0, 64);
	memset(a->buf, 0x44, 64);
	cr_assert_eq(rf_sq_post_dc_write(&d.a.sq, c, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 0),
					 RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_LOC_QP_OP_ERR, "status %u", rw.status);
	cr_assert_eq(b->buf[0], 0, "nothing was written");
	dc_close(&d);
}

Test(e2e_dc, batch_of_both_forms_one_doorbell_one_cqe)
{
	struct dc d;
	struct rf_dc_dest cd, *c;
	struct e2e_side *a, *b;
	struct rf_wc rw;
	struct rf_sq *sq;
	int i;

	dc_open(&d);
	a = &d.e.a;
	b = &d.e.b;
	sq = &d.a.sq;
	c = compact(&d, &cd);
	for (i = 0; i < 1024; i++)
		a->buf[i] = (uint8_t)(i ^ 0x5a);
	memset(b->buf, 0, 1024);
	/* 8 unsignaled writes of 128 bytes, the forms alternating, the last signaled */
	for (i = 0; i < 8; i++)
		cr_assert_eq(rf_sq_post_dc_write(sq, c && i % 2 ? c : &d.dest, a->mr->lkey,
						 e2e_addr(a, 128u * (unsigned)i), 128,
						 b->mr->rkey, e2e_addr(b, 128u * (unsigned)i),
						 i == 7 ? RF_SEND_SIGNALED : 0, (uint64_t)i), 0);
	rf_sq_ring(sq);
	e2e_wait(&a->cq, &rw, 1);
	cr_assert_eq(rw.status, RF_WC_SUCCESS, "%u", rw.status);
	cr_assert_eq(rw.wr_id, 7, "one CQE, for the last");
	cr_assert_eq(rf_sq_ci(sq), sq->pi, "and it retired all eight");
	cr_assert_eq(memcmp(b->buf, a->buf, 1024), 0);
	cr_assert_null(rf_cq_peek(&a->cq));
	dc_close(&d);
}

Test(e2e_dc, dci_in_error_is_reset_and_reused)
{
	struct dc d;
	struct rf_dc_dest bad;
	struct rf_qp_conn_attr ca;
	struct rf_wqe_av av;
	struct rf_wc wc;
	struct e2e_side *a, *b;

	dc_open(&d);
	a = &d.e.a;
	b = &d.e.b;
	memset(&ca, 0, sizeof(ca));
	ca.timeout = 8;
	ca.retry_cnt = 1;
	cr_assert_eq(rf_dci_reset_ibv(&d.a, &ca), 0, "a fresh DCI resets too");
	cr_assert_eq(rf_ah_av_ibv(d.ah, &av), 0);
	rf_dc_dest_init(&bad, &av, d.dct->qp_num, KEY + 1);

	memset(b->buf, 0, 64);
	memset(a->buf, 0x77, 64);
	cr_assert_eq(rf_sq_post_dc_write(&d.a.sq, &bad, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 0),
					 RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	cr_assert_eq(rf_sq_post_dc_write(&d.a.sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 0),
					 RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	cr_assert_eq(rf_dci_reset_ibv(&d.a, &ca), -EBUSY, "WQEs outstanding");
	e2e_wait(&a->cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_RETRY_EXC_ERR, "wrong DC key: %u", wc.status);
	cr_assert_eq(wc.wr_id, 1);
	e2e_wait(&a->cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(b->buf[0], 0, "nothing was written");

	cr_assert_eq(rf_dci_reset_ibv(&d.a, &ca), 0);
	cr_assert_eq(rf_sq_post_dc_write(&d.a.sq, &d.dest, a->mr->lkey, e2e_addr(a, 0), 64,
					 b->mr->rkey, e2e_addr(b, 0),
					 RF_SEND_SIGNALED | RF_SEND_RING, 3), 0);
	e2e_wait(&a->cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(memcmp(b->buf, a->buf, 64), 0);
	dc_close(&d);
}

/*
 * Suite e2e_dc again on RoCE (emulated HCA only): the DCIs' address vector
 * carries the GRH and the destination MAC, compared with libmlx5's bytes,
 * and the compact form is refused.
 */
Test(e2e_dc_roce, on_roce, .timeout = 120)
{
	e2e_rerun_on_roce("e2e_dc/*");
}
