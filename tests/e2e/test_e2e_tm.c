/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_e2e_tm.c - tag matching (rdmafast/tm.h) against libmlx5 on the
 * device:
 *  - tm_golden/ops: the same list operations posted by libmlx5's
 *    ibv_post_srq_ops() on one TM SRQ and by rf_tm_post_*() on another;
 *    the command QPs' WQEs compared byte for byte (the QPN masked), then
 *    their completions as libmlx5 (ibv_start_poll(), ibv_wc_read_*())
 *    and rf_tm_poll() decode them, field by field.
 *  - tm_e2e/exchange: rdmafast on both ends (sends from an rf_qp, the TM
 *    SRQ's list, receives and completions from rf_tm): an eager message
 *    matched, one unexpected, one untagged, and a rendezvous the device
 *    carries out.
 */
#include "e2e.h"

#include <infiniband/tm_types.h>

enum { NTAGS = 16, NOPS = 16 };

struct tmside {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	uint8_t *buf;
	struct ibv_mr *mr;
	/* rdmafast's TM SRQ */
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct rf_srq srq;
	struct rf_tm tm;
	struct ibv_srq *ibsrq;
};

static void tm_open(struct tmside *s)
{
	struct ibv_device **list;
	int n = 0, rc;

	memset(s, 0, sizeof(*s));
	list = ibv_get_device_list(&n);
	cr_assert(list && n > 0, "no RDMA device (run under build/rfemu)");
	s->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(s->ctx);
	s->pd = ibv_alloc_pd(s->ctx);
	cr_assert_not_null(s->pd);
	cr_assert_eq(ibv_query_port(s->ctx, 1, &s->port), 0);
	s->buf = (uint8_t *)aligned_alloc(4096, E2E_BUF);
	cr_assert_not_null(s->buf);
	memset(s->buf, 0, E2E_BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, E2E_BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(s->mr);
	rc = rf_tm_cq_create_ibv(&s->cq, &s->ibcq, s->ctx, 256, NULL);
	cr_assert_eq(rc, 0, "cq: %s", strerror(-rc));
	rc = rf_tm_srq_create_ibv(&s->tm, &s->srq, &s->ibsrq, s->pd, s->ibcq, 64, NTAGS, NOPS);
	cr_assert_eq(rc, 0, "TM SRQ: %s", strerror(-rc));
	cr_assert_eq(rf_cq_attach(&s->cq, s->tm.sq.qpn, &s->tm.sq, NULL, NULL), 0);
	rf_cq_set_srq(&s->cq, &s->srq);
}

static void tm_close(struct tmside *s)
{
	rf_cq_detach(&s->cq, s->tm.sq.qpn);
	rf_tm_fini_ibv(&s->tm);
	cr_assert_eq(rf_srq_destroy_ibv(&s->srq, s->ibsrq), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&s->cq, s->ibcq), 0);
	ibv_dereg_mr(s->mr);
	free(s->buf);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
}

static void tm_wait(struct tmside *s, struct rf_tm_wc *wc)
{
	long end = e2e_now_ms() + 5000;

	while (!rf_tm_poll(&s->tm, &s->cq, wc))
		cr_assert_lt(e2e_now_ms(), end, "no completion");
}

/* libmlx5's side of tm_golden: its TM SRQ on an extended CQ. */
struct libtm {
	struct ibv_cq_ex *cq;
	struct ibv_srq *srq;
	uint8_t *sq;		/* its command QP's send queue */
};

static void lib_open(struct tmside *s, struct libtm *l)
{
	struct ibv_cq_init_attr_ex ca;
	struct ibv_srq_init_attr_ex sa;
	struct mlx5dv_obj obj;
	struct mlx5dv_qp dv;
	struct ibv_qp *cmd;

	memset(&ca, 0, sizeof(ca));
	ca.cqe = 64;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO;
	l->cq = ibv_create_cq_ex(s->ctx, &ca);
	cr_assert_not_null(l->cq);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 64;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	sa.srq_type = IBV_SRQT_TM;
	sa.pd = s->pd;
	sa.cq = ibv_cq_ex_to_cq(l->cq);
	sa.tm_cap.max_num_tags = NTAGS;
	sa.tm_cap.max_ops = NOPS;
	l->srq = ibv_create_srq_ex(s->ctx, &sa);
	cr_assert_not_null(l->srq);
	cmd = rf_tm_cmd_qp_ibv(l->srq, NTAGS);
	cr_assert_not_null(cmd, "libmlx5's command QP not found");
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = cmd;
	obj.qp.out = &dv;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP), 0);
	l->sq = (uint8_t *)dv.sq.buf;
}

static int lib_op(struct libtm *l, enum ibv_ops_wr_opcode op, uint64_t wr_id, int flags,
		  uint32_t unexp, uint32_t handle, uint64_t tag, uint64_t mask,
		  struct ibv_sge *sge, uint64_t recv_id)
{
	struct ibv_ops_wr wr, *bad = NULL;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.flags = flags;
	wr.tm.unexpected_cnt = unexp;
	wr.tm.handle = handle;
	wr.tm.add.recv_wr_id = recv_id;
	wr.tm.add.sg_list = sge;
	wr.tm.add.num_sge = sge ? 1 : 0;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = mask;
	cr_assert_eq(ibv_post_srq_ops(l->srq, &wr, &bad), 0);
	return (int)wr.tm.handle;
}

/* A libmlx5 completion in rdmafast's terms. */
static void lib_poll(struct libtm *l, struct rf_tm_wc *wc)
{
	struct ibv_poll_cq_attr pa;
	long end = e2e_now_ms() + 5000;
	unsigned int f;
	int ret;

	memset(&pa, 0, sizeof(pa));
	while ((ret = ibv_start_poll(l->cq, &pa)) == ENOENT)
		cr_assert_lt(e2e_now_ms(), end, "no libmlx5 completion");
	cr_assert_eq(ret, 0);
	memset(wc, 0, sizeof(*wc));
	wc->wc.wr_id = l->cq->wr_id;
	wc->wc.status = (uint8_t)l->cq->status;
	wc->wc.opcode = (uint8_t)ibv_wc_read_opcode(l->cq);
	f = ibv_wc_read_wc_flags(l->cq);
	wc->tm_flags = (uint8_t)((f & IBV_WC_TM_SYNC_REQ ? RF_TM_WC_SYNC_REQ : 0) |
				 (f & IBV_WC_TM_MATCH ? RF_TM_WC_MATCH : 0) |
				 (f & IBV_WC_TM_DATA_VALID ? RF_TM_WC_DATA_VALID : 0));
	ibv_end_poll(l->cq);
}

static void expect_same(const struct rf_tm_wc *lib, const struct rf_tm_wc *rf, int i)
{
	cr_assert_eq(rf->wc.wr_id, lib->wc.wr_id, "completion %d: wr_id", i);
	cr_assert_eq(rf->wc.status, lib->wc.status, "completion %d: status", i);
	cr_assert_eq(rf->wc.opcode, lib->wc.opcode, "completion %d: opcode", i);
	cr_assert_eq(rf->tm_flags, lib->tm_flags, "completion %d: flags", i);
}

Test(tm_golden, ops, .timeout = 60)
{
	struct tmside s;
	struct libtm l;
	struct rf_tm_wc lw, rw;
	struct ibv_sge lsge = { 0, 4096, 0 };
	struct rf_sge rsge = { 0, 4096, 0 };
	const struct rf_wqe_ctrl_seg *c;
	int lh[3], rh[3], i, j, ds;

	tm_open(&s);
	lib_open(&s, &l);
	lsge.addr = rsge.addr = (uintptr_t)s.buf + 8192;
	lsge.lkey = rsge.lkey = s.mr->lkey;

	/* add signaled; add empty with a sync; add; del signaled; del; sync */
	lh[0] = lib_op(&l, IBV_WR_TAG_ADD, 1, IBV_OPS_SIGNALED, 0, 0, 0x55, ~0ULL, &lsge, 100);
	rh[0] = rf_tm_post_add(&s.tm, 0x55, ~0ULL, &rsge, 100, RF_TM_SIGNALED, 0, 1);
	lh[1] = lib_op(&l, IBV_WR_TAG_ADD, 2, IBV_OPS_TM_SYNC, 3, 0, 0x1200, 0xff00, NULL, 101);
	rh[1] = rf_tm_post_add(&s.tm, 0x1200, 0xff00, NULL, 101, RF_TM_SYNC, 3, 2);
	lh[2] = lib_op(&l, IBV_WR_TAG_ADD, 3, 0, 0, 0, 0x77, 0xf0f0, &lsge, 102);
	rh[2] = rf_tm_post_add(&s.tm, 0x77, 0xf0f0, &rsge, 102, 0, 0, 3);
	for (i = 0; i < 3; i++)
		cr_assert_eq(rh[i], lh[i], "add %d: entry %d, libmlx5 %d", i, rh[i], lh[i]);
	lib_op(&l, IBV_WR_TAG_DEL, 4, IBV_OPS_SIGNALED, 0, (uint32_t)lh[1], 0, 0, NULL, 0);
	cr_assert_eq(rf_tm_post_del(&s.tm, (uint32_t)rh[1], RF_TM_SIGNALED, 0, 4), 0);
	lib_op(&l, IBV_WR_TAG_DEL, 5, 0, 0, (uint32_t)lh[2], 0, 0, NULL, 0);
	cr_assert_eq(rf_tm_post_del(&s.tm, (uint32_t)rh[2], 0, 0, 5), 0);
	lib_op(&l, IBV_WR_TAG_SYNC, 6, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 9, 0, 0, 0, NULL, 0);
	cr_assert_eq(rf_tm_post_sync(&s.tm, RF_TM_SIGNALED | RF_TM_SYNC, 9, 6), 0);
	/* bad input: nothing written */
	cr_assert_eq(rf_tm_post_del(&s.tm, (uint32_t)rh[2], 0, 0, 7), -EINVAL, "removed already");
	cr_assert_eq(rf_tm_post_del(&s.tm, NTAGS + 1, 0, 0, 7), -EINVAL);
	cr_assert_eq(s.tm.sq.pi, 6);
	rf_tm_ring(&s.tm);

	for (i = 0; i < 6; i++) {
		const uint8_t *a = l.sq + 64 * i, *b = s.tm.sq.buf + 64 * i;

		c = (const struct rf_wqe_ctrl_seg *)a;
		ds = (int)(be32toh(c->qpn_ds) & 0x3f);
		cr_assert_eq(ds, i < 3 ? 4 : 3, "WQE %d: DS %d", i, ds);
		for (j = 0; j < ds * 16; j++) {
			if (j >= 4 && j < 7)
				continue;	/* the QPN: two command QPs */
			cr_assert_eq(b[j], a[j], "WQE %d byte %d: rdmafast 0x%02x, libmlx5 0x%02x",
				     i, j, b[j], a[j]);
		}
	}
	/* add 0, del 1 (removed), sync: the device's count differs (3, 9 reported) */
	for (i = 0; i < 3; i++) {
		lib_poll(&l, &lw);
		tm_wait(&s, &rw);
		expect_same(&lw, &rw, i);
	}
	cr_assert_eq(rw.wc.opcode, RF_WC_TM_SYNC);
	/* del of entry 0, signaled */
	lib_op(&l, IBV_WR_TAG_DEL, 8, IBV_OPS_SIGNALED, 0, (uint32_t)lh[0], 0, 0, NULL, 0);
	cr_assert_eq(rf_tm_post_del(&s.tm, (uint32_t)rh[0], RF_TM_SIGNALED | RF_TM_RING, 0, 8), 0);
	lib_poll(&l, &lw);
	tm_wait(&s, &rw);
	expect_same(&lw, &rw, 3);
	cr_assert_eq(rw.wc.status, RF_WC_SUCCESS);
	cr_assert_eq(rw.wc.opcode, RF_WC_TM_DEL);
	/* the list, full: the same entries handed out, then -ENOSPC */
	for (i = 0; i <= NTAGS; i++) {
		struct ibv_ops_wr wr, *bad = NULL;
		int r;

		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_TAG_ADD;
		wr.tm.add.tag = (uint64_t)i;
		r = ibv_post_srq_ops(l.srq, &wr, &bad);
		rh[0] = rf_tm_post_add(&s.tm, (uint64_t)i, 0, NULL, 0, 0, 0, 0);
		if (r) {
			cr_assert_eq(rh[0], -ENOSPC, "add %d: libmlx5 full, rdmafast %d", i, rh[0]);
			break;
		}
		cr_assert_eq(rh[0], (int)wr.tm.handle);
	}
	cr_assert_eq(i, NTAGS, "full after %d adds", i);

	ibv_destroy_srq(l.srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(l.cq));
	tm_close(&s);
}

/* The sender: an RC QP of rdmafast's, connected to a receiver on the TM SRQ. */
struct tmpair {
	struct tmside s;
	struct ibv_cq *ibscq;
	struct rf_cq scq;
	struct rf_qp snd, rcv;
};

/* Connect a and b, two RC QPs of s's context. */
static void tm_connect(struct tmside *s, struct rf_qp *a, struct rf_qp *b)
{
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pa, pb;

	memset(&pa, 0, sizeof(pa));
	memset(&pb, 0, sizeof(pb));
	pa.qpn = a->qpn;
	pa.psn = 0x100;
	pa.lid = s->port.lid;
	pb.qpn = b->qpn;
	pb.psn = 0x200;
	pb.lid = s->port.lid;
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ALL;
	ca.gid_index = -1;
	if (s->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(s->ctx, 1, 0, &pa.gid), 0);
		pb.gid = pa.gid;
	}
	ca.timeout = 14;
	ca.retry_cnt = 7;
	ca.psn = pa.psn;
	cr_assert_eq(rf_qp_connect_ibv(a, &ca, &pb), 0);
	ca.psn = pb.psn;
	cr_assert_eq(rf_qp_connect_ibv(b, &ca, &pa), 0);
}

/* An RC QP of 16 WRs and one SGE on send_cq/recv_cq, on srq if not NULL. */
static void tm_qp(struct tmside *s, struct rf_qp *q, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct rf_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.pd = s->pd;
	qa.send_cq = qa.recv_cq = cq;
	qa.srq = srq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 16;
	qa.max_recv_wr = 16;
	qa.max_send_sge = 1;
	qa.max_recv_sge = 1;
	rc = rf_qp_create_ibv(q, &qa);
	cr_assert_eq(rc, 0, "QP: %s", strerror(-rc));
}

static void pair_open(struct tmpair *p)
{
	tm_open(&p->s);
	cr_assert_eq(rf_cq_create_ibv(&p->scq, &p->ibscq, p->s.ctx, 64, NULL, 0), 0);
	tm_qp(&p->s, &p->snd, p->ibscq, NULL);
	cr_assert_eq(rf_cq_attach(&p->scq, p->snd.qpn, &p->snd.sq, &p->snd.rq, NULL), 0);
	tm_qp(&p->s, &p->rcv, p->s.ibcq, p->s.ibsrq);
	cr_assert_eq(rf_cq_attach(&p->s.cq, p->rcv.qpn, &p->rcv.sq, NULL, &p->s.srq), 0);
	tm_connect(&p->s, &p->snd, &p->rcv);
}

static void pair_close(struct tmpair *p)
{
	rf_cq_detach(&p->s.cq, p->rcv.qpn);
	rf_cq_detach(&p->scq, p->snd.qpn);
	rf_qp_destroy_ibv(&p->rcv);
	rf_qp_destroy_ibv(&p->snd);
	rf_cq_destroy_ibv(&p->scq, p->ibscq);
	tm_close(&p->s);
}

/* SEND from buf[0..): a header (op, tag, ctx), then len bytes i + seed or an RVH. */
static void pair_send(struct tmpair *p, uint8_t op, uint64_t tag, uint32_t ctxv, uint32_t len,
		      uint8_t seed, const struct ibv_rvh *rvh)
{
	struct ibv_tmh *h = (struct ibv_tmh *)p->s.buf;
	uint32_t n = sizeof(*h), i;
	struct rf_wc wc;

	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->tag = htobe64(tag);
	h->app_ctx = htobe32(ctxv);
	if (rvh) {
		memcpy(h + 1, rvh, sizeof(*rvh));
		n += sizeof(*rvh);
	} else {
		for (i = 0; i < len; i++)
			p->s.buf[n + i] = (uint8_t)(i + seed);
		n += len;
	}
	cr_assert_eq(rf_sq_post_send(&p->snd.sq, p->s.mr->lkey, (uintptr_t)p->s.buf, n,
				     RF_SEND_SIGNALED | RF_SEND_RING, 0x5e9d), 0);
	e2e_wait(&p->scq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "the send: %s", rf_wc_status_str(wc.status));
}

Test(tm_e2e, exchange, .timeout = 60)
{
	struct tmpair p;
	struct rf_tm_wc wc;
	struct rf_sge sge = { 0, 4096, 0 };
	struct ibv_rvh rvh;
	struct rf_wc sw[2];
	uint32_t i;
	int h;

	pair_open(&p);
	sge.lkey = p.s.mr->lkey;
	/* eager, expected: in the tagged buffer, the header in the CQE */
	sge.addr = (uintptr_t)p.s.buf + 8192;
	h = rf_tm_post_add(&p.s.tm, 0x55, ~0ULL, &sge, 100, RF_TM_RING, 0, 0);
	cr_assert_geq(h, 0);
	pair_send(&p, IBV_TMH_EAGER, 0x55, 0xc0ffee, 100, 1, NULL);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(wc.tm_flags, RF_TM_WC_MATCH | RF_TM_WC_DATA_VALID);
	cr_assert_eq(wc.wc.wr_id, 100);
	cr_assert_eq(wc.wc.byte_len, 100);
	cr_assert_eq(wc.tag, 0x55);
	cr_assert_eq(wc.app_ctx, 0xc0ffee);
	for (i = 0; i < 100; i++)
		cr_assert_eq(p.s.buf[8192 + i], (uint8_t)(i + 1), "byte %u", i);
	cr_assert_eq(p.s.tm.tag[h].expect, 0, "the entry is free again");

	/* eager, unexpected: no entry; the whole message in an SRQ buffer */
	cr_assert_eq(rf_srq_post_one(&p.s.srq, p.s.mr->lkey, (uintptr_t)p.s.buf + 16384, 4096,
				     200), 0);
	cr_assert_eq(rf_srq_post_one(&p.s.srq, p.s.mr->lkey, (uintptr_t)p.s.buf + 20480, 4096,
				     201), 0);
	rf_srq_ring(&p.s.srq);
	pair_send(&p, IBV_TMH_EAGER, 0x66, 7, 50, 3, NULL);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(wc.tm_flags, 0);
	cr_assert_eq(wc.wc.wr_id, 200);
	cr_assert_eq(wc.wc.byte_len, sizeof(struct ibv_tmh) + 50);
	cr_assert(wc.wc.flags & RF_WC_SRQ);
	cr_assert_eq(be64toh(((struct ibv_tmh *)(p.s.buf + 16384))->tag), 0x66);
	cr_assert_eq(p.s.tm.unexp_in, 1);
	for (i = 0; i < 50; i++)
		cr_assert_eq(p.s.buf[16384 + sizeof(struct ibv_tmh) + i], (uint8_t)(i + 3));
	/* untagged */
	pair_send(&p, IBV_TMH_NO_TAG, 0, 0, 10, 5, NULL);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_NO_TAG);
	cr_assert_eq(wc.wc.wr_id, 201);
	/* handled: report it, so the device matches again */
	cr_assert_eq(rf_tm_post_sync(&p.s.tm, RF_TM_SYNC | RF_TM_SIGNALED | RF_TM_RING, 1, 9), 0);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_SYNC);
	cr_assert_eq(wc.wc.wr_id, 9);

	/* a del that loses the race with its message: TM_ERR, the entry freed once */
	sge.addr = (uintptr_t)p.s.buf + 8192;
	h = rf_tm_post_add(&p.s.tm, 0x77, ~0ULL, &sge, 300, RF_TM_RING, 1, 0);
	cr_assert_geq(h, 0);
	pair_send(&p, IBV_TMH_EAGER, 0x77, 0, 8, 0, NULL);
	cr_assert_eq(rf_tm_post_del(&p.s.tm, (uint32_t)h, RF_TM_SIGNALED | RF_TM_RING, 0, 11), 0);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(wc.wc.wr_id, 300);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_DEL);
	cr_assert_eq(wc.wc.status, RF_WC_TM_ERR);
	cr_assert_eq(wc.wc.wr_id, 11);
	cr_assert_eq(p.s.tm.tag[h].expect, 0);
	cr_assert_eq(p.s.tm.tail, (uint32_t)h, "back on the free list, once");

	/* rendezvous: matched, the device READs the sender's buffer, FIN */
	cr_assert_eq(rf_rq_post_one(&p.snd.rq, p.s.mr->lkey, (uintptr_t)p.s.buf + 60000, 64, 0xf1),
		     0);
	rf_rq_ring(&p.snd.rq);
	for (i = 0; i < 3000; i++)
		p.s.buf[1024 + i] = (uint8_t)(i * 7);
	sge.addr = (uintptr_t)p.s.buf + 32768;
	h = rf_tm_post_add(&p.s.tm, 0x42, ~0ULL, &sge, 500, RF_TM_RING, 0, 0);
	cr_assert_geq(h, 0);
	rvh.va = htobe64((uintptr_t)p.s.buf + 1024);
	rvh.rkey = htobe32(p.s.mr->rkey);
	rvh.len = htobe32(3000);
	pair_send(&p, IBV_TMH_RNDV, 0x42, 0xabc, 0, 0, &rvh);
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(wc.tm_flags, RF_TM_WC_MATCH);
	cr_assert_eq(wc.wc.wr_id, 500);
	cr_assert_eq(wc.tag, 0x42);
	cr_assert_eq(wc.app_ctx, 0xabc);
	cr_assert_eq(p.s.tm.tag[h].expect, 1, "the data's completion is to come");
	tm_wait(&p.s, &wc);
	cr_assert_eq(wc.wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(wc.tm_flags, RF_TM_WC_DATA_VALID);
	cr_assert_eq(wc.wc.wr_id, 500);
	cr_assert_eq(wc.wc.byte_len, 3000);
	for (i = 0; i < 3000; i++)
		cr_assert_eq(p.s.buf[32768 + i], (uint8_t)(i * 7), "byte %u", i);
	cr_assert_eq(p.s.tm.tag[h].expect, 0);
	e2e_wait(&p.scq, sw, 1);	/* the FIN */
	cr_assert_eq(sw[0].opcode, RF_WC_RECV);
	cr_assert_eq(sw[0].wr_id, 0xf1);
	cr_assert_eq(p.s.buf[60000], IBV_TMH_FIN);
	pair_close(&p);
}

/*
 * tm_oracle/messages: the same messages to a receiver on rdmafast's TM SRQ
 * and to one on libmlx5's, with the same entries and receives on each:
 * the two CQEs are the same bytes (but for the QPNs, the user index and
 * the timestamp) and rf_tm_poll() decodes them as libmlx5's extended poll
 * does, field by field (tag and context where libmlx5 reports a match).
 */
struct tmoracle {
	struct tmside s;
	struct libtm l;
	struct ibv_cq *ibscq;
	struct rf_cq scq;
	struct rf_qp snd[2], rcv[2];	/* [0] to rdmafast's SRQ, [1] to libmlx5's */
	struct mlx5dv_cq lcq;		/* libmlx5's CQ buffer, for its CQE bytes */
	uint32_t lci;			/* CQEs libmlx5 polled */
};

static void lib_poll_tm(struct tmoracle *o, struct rf_tm_wc *wc)
{
	struct ibv_poll_cq_attr pa;
	long end = e2e_now_ms() + 5000;
	struct ibv_wc_tm_info ti;
	unsigned int f;
	int ret;

	memset(&pa, 0, sizeof(pa));
	while ((ret = ibv_start_poll(o->l.cq, &pa)) == ENOENT)
		cr_assert_lt(e2e_now_ms(), end, "no libmlx5 completion");
	cr_assert_eq(ret, 0);
	memset(wc, 0, sizeof(*wc));
	wc->wc.wr_id = o->l.cq->wr_id;
	wc->wc.status = (uint8_t)o->l.cq->status;
	wc->wc.opcode = (uint8_t)ibv_wc_read_opcode(o->l.cq);
	wc->wc.byte_len = ibv_wc_read_byte_len(o->l.cq);
	f = ibv_wc_read_wc_flags(o->l.cq);
	wc->tm_flags = (uint8_t)((f & IBV_WC_TM_SYNC_REQ ? RF_TM_WC_SYNC_REQ : 0) |
				 (f & IBV_WC_TM_MATCH ? RF_TM_WC_MATCH : 0) |
				 (f & IBV_WC_TM_DATA_VALID ? RF_TM_WC_DATA_VALID : 0));
	if (f & IBV_WC_TM_MATCH) {
		ibv_wc_read_tm_info(o->l.cq, &ti);
		wc->tag = ti.tag;
		wc->app_ctx = ti.priv;
	}
	ibv_end_poll(o->l.cq);
	o->lci++;
}

/* One message to each receiver; their completions compared. */
static void oracle_step(struct tmoracle *o, const char *what, uint32_t n, struct rf_tm_wc *rw)
{
	struct rf_tm_wc lw;
	struct rf_wc sw;
	const uint8_t *lc, *rc;
	int i, j;

	for (i = 0; i < 2; i++) {
		cr_assert_eq(rf_sq_post_send(&o->snd[i].sq, o->s.mr->lkey, (uintptr_t)o->s.buf, n,
					     RF_SEND_SIGNALED | RF_SEND_RING, 0x5e9d), 0);
		e2e_wait(&o->scq, &sw, 1);
		cr_assert_eq(sw.status, RF_WC_SUCCESS, "%s: the send", what);
	}
	lib_poll_tm(o, &lw);
	tm_wait(&o->s, rw);
	lc = (const uint8_t *)o->lcq.buf + (size_t)((o->lci - 1) & (o->lcq.cqe_cnt - 1)) *
	     o->lcq.cqe_size + o->lcq.cqe_size - 64;
	rc = (const uint8_t *)rf_cq_cqe(&o->s.cq, o->s.cq.ci - 1);
	for (j = 0; j < 64; j++) {
		/* the sender's QPN, user index, timestamp, the receiver's QPN */
		if ((j >= 25 && j < 28) || (j >= 32 && j < 36) || (j >= 48 && j < 56) ||
		    (j >= 57 && j < 60))
			continue;
		cr_assert_eq(rc[j], lc[j], "%s: CQE byte %d: 0x%02x, libmlx5's 0x%02x", what, j,
			     rc[j], lc[j]);
	}
	cr_assert_eq(rw->wc.wr_id, lw.wc.wr_id, "%s: wr_id", what);
	cr_assert_eq(rw->wc.status, lw.wc.status, "%s: status", what);
	cr_assert_eq(rw->wc.opcode, lw.wc.opcode, "%s: opcode", what);
	cr_assert_eq(rw->wc.byte_len, lw.wc.byte_len, "%s: byte_len", what);
	cr_assert_eq(rw->tm_flags, lw.tm_flags, "%s: flags", what);
	if (lw.tm_flags & RF_TM_WC_MATCH) {
		cr_assert_eq(rw->tag, lw.tag, "%s: tag", what);
		cr_assert_eq(rw->app_ctx, lw.app_ctx, "%s: app_ctx", what);
	}
}

/* The next completion of each, no message: the rendezvous' second. */
static void oracle_next(struct tmoracle *o, const char *what, struct rf_tm_wc *rw)
{
	struct rf_tm_wc lw;

	lib_poll_tm(o, &lw);
	tm_wait(&o->s, rw);
	cr_assert_eq(rw->wc.wr_id, lw.wc.wr_id, "%s: wr_id", what);
	cr_assert_eq(rw->wc.status, lw.wc.status, "%s: status", what);
	cr_assert_eq(rw->wc.opcode, lw.wc.opcode, "%s: opcode", what);
	cr_assert_eq(rw->wc.byte_len, lw.wc.byte_len, "%s: byte_len", what);
	cr_assert_eq(rw->tm_flags, lw.tm_flags, "%s: flags", what);
}

static void oracle_header(struct tmoracle *o, uint8_t op, uint64_t tag, uint32_t ctxv)
{
	struct ibv_tmh *h = (struct ibv_tmh *)o->s.buf;

	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->tag = htobe64(tag);
	h->app_ctx = htobe32(ctxv);
}

Test(tm_oracle, messages, .timeout = 60)
{
	struct tmoracle o;
	struct mlx5dv_obj obj;
	struct rf_tm_wc rw;
	struct ibv_rvh rvh;
	struct ibv_sge lsge;
	struct ibv_recv_wr rwr, *bad;
	struct rf_sge rsge;
	uint32_t i;
	int h;

	memset(&o, 0, sizeof(o));
	tm_open(&o.s);
	lib_open(&o.s, &o.l);
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = ibv_cq_ex_to_cq(o.l.cq);
	obj.cq.out = &o.lcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(rf_cq_create_ibv(&o.scq, &o.ibscq, o.s.ctx, 64, NULL, 0), 0);
	for (i = 0; i < 2; i++) {
		tm_qp(&o.s, &o.snd[i], o.ibscq, NULL);
		cr_assert_eq(rf_cq_attach(&o.scq, o.snd[i].qpn, &o.snd[i].sq, &o.snd[i].rq,
					  NULL), 0);
	}
	tm_qp(&o.s, &o.rcv[0], o.s.ibcq, o.s.ibsrq);
	cr_assert_eq(rf_cq_attach(&o.s.cq, o.rcv[0].qpn, &o.rcv[0].sq, NULL, &o.s.srq), 0);
	tm_qp(&o.s, &o.rcv[1], ibv_cq_ex_to_cq(o.l.cq), o.l.srq);
	tm_connect(&o.s, &o.snd[0], &o.rcv[0]);
	tm_connect(&o.s, &o.snd[1], &o.rcv[1]);

	/* entries: 0x55 eager, 0x42 rendezvous; each side its own buffers */
	rsge = (struct rf_sge){ (uintptr_t)o.s.buf + 8192, 4096, o.s.mr->lkey };
	lsge = (struct ibv_sge){ (uintptr_t)o.s.buf + 12288, 4096, o.s.mr->lkey };
	h = rf_tm_post_add(&o.s.tm, 0x55, ~0ULL, &rsge, 100, RF_TM_RING, 0, 0);
	cr_assert_eq(h, lib_op(&o.l, IBV_WR_TAG_ADD, 0, 0, 0, 0, 0x55, ~0ULL, &lsge, 100));
	rsge.addr += 8192;
	lsge.addr += 8192;
	h = rf_tm_post_add(&o.s.tm, 0x42, ~0ULL, &rsge, 500, RF_TM_RING, 0, 0);
	cr_assert_eq(h, lib_op(&o.l, IBV_WR_TAG_ADD, 0, 0, 0, 0, 0x42, ~0ULL, &lsge, 500));
	/* receives for the unexpected and the untagged */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(rf_srq_post_one(&o.s.srq, o.s.mr->lkey,
					     (uintptr_t)o.s.buf + 32768 + 4096 * i, 4096, 200 + i),
			     0);
		lsge = (struct ibv_sge){ (uintptr_t)o.s.buf + 40960 + 4096 * i, 4096,
					 o.s.mr->lkey };
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 200 + i;
		rwr.sg_list = &lsge;
		rwr.num_sge = 1;
		cr_assert_eq(ibv_post_srq_recv(o.l.srq, &rwr, &bad), 0);
	}
	rf_srq_ring(&o.s.srq);

	oracle_header(&o, IBV_TMH_EAGER, 0x55, 0xc0ffee);
	for (i = 0; i < 100; i++)
		o.s.buf[sizeof(struct ibv_tmh) + i] = (uint8_t)i;
	oracle_step(&o, "eager, expected", sizeof(struct ibv_tmh) + 100, &rw);
	cr_assert_eq(rw.wc.opcode, RF_WC_TM_RECV);
	cr_assert_eq(rw.tm_flags, RF_TM_WC_MATCH | RF_TM_WC_DATA_VALID);
	oracle_header(&o, IBV_TMH_EAGER, 0x66, 1);
	oracle_step(&o, "eager, unexpected", sizeof(struct ibv_tmh) + 20, &rw);
	cr_assert_eq(rw.wc.wr_id, 200);
	oracle_header(&o, IBV_TMH_NO_TAG, 0, 0);
	oracle_step(&o, "untagged", sizeof(struct ibv_tmh) + 4, &rw);
	cr_assert_eq(rw.wc.opcode, RF_WC_TM_NO_TAG);
	/* handled: both report it, so that the devices match again */
	cr_assert_eq(rf_tm_post_sync(&o.s.tm, RF_TM_SYNC | RF_TM_RING, 1, 0), 0);
	lib_op(&o.l, IBV_WR_TAG_SYNC, 0, IBV_OPS_TM_SYNC, 1, 0, 0, 0, NULL, 0);

	/* rendezvous: the match, then the data the device READ */
	for (i = 0; i < 2; i++) {
		cr_assert_eq(rf_rq_post_one(&o.snd[i].rq, o.s.mr->lkey,
					    (uintptr_t)o.s.buf + 60000 + 64 * i, 64, 0xf1), 0);
		rf_rq_ring(&o.snd[i].rq);
	}
	for (i = 0; i < 3000; i++)
		o.s.buf[1024 + i] = (uint8_t)(i * 7);
	oracle_header(&o, IBV_TMH_RNDV, 0x42, 0xabc);
	rvh.va = htobe64((uintptr_t)o.s.buf + 1024);
	rvh.rkey = htobe32(o.s.mr->rkey);
	rvh.len = htobe32(3000);
	memcpy(o.s.buf + sizeof(struct ibv_tmh), &rvh, sizeof(rvh));
	oracle_step(&o, "rendezvous, matched", sizeof(struct ibv_tmh) + sizeof(rvh), &rw);
	cr_assert_eq(rw.tm_flags, RF_TM_WC_MATCH);
	oracle_next(&o, "rendezvous, data", &rw);
	cr_assert_eq(rw.tm_flags, RF_TM_WC_DATA_VALID);
	cr_assert_eq(rw.wc.byte_len, 3000);

	for (i = 0; i < 2; i++) {
		rf_qp_destroy_ibv(&o.snd[i]);
		rf_qp_destroy_ibv(&o.rcv[i]);
	}
	rf_cq_destroy_ibv(&o.scq, o.ibscq);
	ibv_destroy_srq(o.l.srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(o.l.cq));
	rf_cq_detach(&o.s.cq, o.rcv[0].qpn);
	tm_close(&o.s);
}
