/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The verbs glue's own promises: a zeroed rf_qp_conn_attr is a working
 * connection (a GRH exactly where the port needs one) that grants the peer
 * no remote access, and rf_cq_destroy_ibv() refuses a CQ that still
 * routes a QP.
 */
#include "e2e.h"

/*
 * Where a post's fields of struct rf_sq (buf to dbrec) fall in an rf_qp
 * that starts on a cache line: in two lines, which a cold post misses on
 * (struct rf_qp's comment). The checked build puts its own state first
 * in rf_sq and is not held to it.
 */
#ifndef RF_CHECKED
#define POST_FIRST_BYTE (offsetof(struct rf_qp, sq) + offsetof(struct rf_sq, buf))
#define POST_LAST_BYTE (offsetof(struct rf_qp, sq) + offsetof(struct rf_sq, dbrec) + \
			sizeof(((struct rf_sq *)0)->dbrec) - 1)
RF_STATIC_ASSERT(POST_LAST_BYTE / 64 - POST_FIRST_BYTE / 64 == 1,
		 "a post's fields of a line-aligned rf_qp in two lines");
#endif

/*
 * Connect a's QP to b's and back with a zeroed conn attr (but the PSNs and
 * access, which connect_zeroed() leaves 0).
 */
static void connect_access(struct e2e *e, struct rf_qp *a, struct rf_qp *b, int access)
{
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pa, pb;

	memset(&pa, 0, sizeof(pa));
	memset(&pb, 0, sizeof(pb));
	pa.qpn = a->qpn;
	pa.psn = 0x10;
	pa.lid = e->port.lid;
	pb.qpn = b->qpn;
	pb.psn = 0x20;
	pb.lid = e->port.lid;
	cr_assert_eq(ibv_query_gid(e->ctx, 1, 0, &pa.gid), 0);
	pb.gid = pa.gid;
	memset(&ca, 0, sizeof(ca));
	ca.access = access;
	ca.psn = pa.psn;
	cr_assert_eq(rf_qp_connect_ibv(a, &ca, &pb), 0);
	ca.psn = pb.psn;
	cr_assert_eq(rf_qp_connect_ibv(b, &ca, &pa), 0);
}

static void connect_zeroed(struct e2e *e, struct rf_qp *a, struct rf_qp *b)
{
	connect_access(e, a, b, 0);
}

static int qp_is_global(struct rf_qp *qp)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp->ibqp, &at, IBV_QP_AV, &ia), 0);
	return at.ah_attr.is_global;
}

Test(e2e_verbs, zeroed_conn_attr_grh_only_where_the_port_needs_it)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp qa, qb;
	struct rf_qp_init_attr ia;
	struct rf_wc wc;
	int eth;

	e2e_open(&e, &o);
	eth = e.port.link_layer == IBV_LINK_LAYER_ETHERNET;
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = e.a.ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	cr_assert_eq(rf_qp_create_ibv(&qa, &ia), 0);
	ia.send_cq = e.b.ibcq;
	cr_assert_eq(rf_qp_create_ibv(&qb, &ia), 0);
	cr_assert_eq(rf_cq_attach(&e.a.cq, qa.qpn, &qa.sq, &qa.rq, NULL), 0);
	connect_zeroed(&e, &qa, &qb);
	cr_assert_eq(qp_is_global(&qa), eth, "GRH %d on a %s port", qp_is_global(&qa),
		     eth ? "RoCE" : "InfiniBand");
	cr_assert_eq(qp_is_global(&qb), eth);

	/* and the connection carries messages */
	cr_assert_eq(rf_cq_attach(&e.b.cq, qb.qpn, &qb.sq, &qb.rq, NULL), 0);
	cr_assert_eq(rf_rq_post_one(&qb.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 8), 0);
	rf_rq_ring(&qb.rq);
	memcpy(e.a.buf, "zeroed", 6);
	cr_assert_eq(rf_sq_post_send(&qa.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 6,
				     RF_SEND_SIGNALED | RF_SEND_RING, 7), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "status %u", wc.status);
	cr_assert_eq(wc.wr_id, 7);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "status %u", wc.status);
	cr_assert_eq(wc.wr_id, 8);
	cr_assert_eq(memcmp(e.b.buf, "zeroed", 6), 0);

	rf_cq_detach(&e.a.cq, qa.qpn);
	rf_cq_detach(&e.b.cq, qb.qpn);
	rf_qp_destroy_ibv(&qa);
	rf_qp_destroy_ibv(&qb);
	e2e_close(&e);
}

static int qp_access(struct rf_qp *qp)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	memset(&at, 0, sizeof(at));
	cr_assert_eq(ibv_query_qp(qp->ibqp, &at, IBV_QP_ACCESS_FLAGS, &ia), 0);
	return (int)at.qp_access_flags;
}

/*
 * A zeroed conn attr grants nothing, as ibv_modify_qp() with access 0: the
 * QPs say so, and a WRITE with a key that allows it is refused by the QP
 * (a remote invalid request NAK on the emulated HCA, as rdma-core's rxe
 * answers an opcode the QP refuses; a device may report a remote access
 * error); what is named is granted.
 */
Test(e2e_verbs, zeroed_conn_attr_grants_no_remote_access)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp qa, qb, qc;
	struct rf_qp_init_attr ia;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p;
	struct rf_wc wc;

	e2e_open(&e, &o);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = e.a.ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	cr_assert_eq(rf_qp_create_ibv(&qa, &ia), 0);
	ia.send_cq = e.b.ibcq;
	cr_assert_eq(rf_qp_create_ibv(&qb, &ia), 0);
	cr_assert_eq(rf_cq_attach(&e.a.cq, qa.qpn, &qa.sq, &qa.rq, NULL), 0);
	connect_zeroed(&e, &qa, &qb);
	cr_assert_eq(qp_access(&qa), 0, "access %#x", qp_access(&qa));
	cr_assert_eq(qp_access(&qb), 0, "access %#x", qp_access(&qb));

	/* e.b.mr's key allows remote write; qb does not */
	memset(e.b.buf, 0, 64);
	memcpy(e.a.buf, "refused", 7);
	cr_assert_eq(rf_sq_post_write(&qa.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 7, e.b.mr->rkey,
				      e2e_addr(&e.b, 0), RF_SEND_SIGNALED | RF_SEND_RING, 7), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert(wc.status == RF_WC_REM_INV_REQ_ERR || wc.status == RF_WC_REM_ACCESS_ERR,
		  "status %u", wc.status);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(e.b.buf[0], 0, "the refused write landed");

	/* what is named is what the QP gets */
	ia.send_cq = e.a.ibcq;
	cr_assert_eq(rf_qp_create_ibv(&qc, &ia), 0);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_READ;
	memset(&p, 0, sizeof(p));
	p.qpn = qb.qpn;
	p.lid = e.port.lid;
	cr_assert_eq(ibv_query_gid(e.ctx, 1, 0, &p.gid), 0);
	cr_assert_eq(rf_qp_connect_ibv(&qc, &ca, &p), 0);
	cr_assert_eq(qp_access(&qc), IBV_ACCESS_REMOTE_READ, "access %#x", qp_access(&qc));

	rf_cq_detach(&e.a.cq, qa.qpn);
	rf_qp_destroy_ibv(&qa);
	rf_qp_destroy_ibv(&qb);
	rf_qp_destroy_ibv(&qc);
	e2e_close(&e);
}

Test(e2e_verbs, grh_never_and_always)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp qa, qb;
	struct rf_qp_init_attr ia;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p;

	e2e_open(&e, &o);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = e.a.ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	cr_assert_eq(rf_qp_create_ibv(&qa, &ia), 0);
	cr_assert_eq(rf_qp_create_ibv(&qb, &ia), 0);
	memset(&p, 0, sizeof(p));
	p.lid = e.port.lid;
	cr_assert_eq(ibv_query_gid(e.ctx, 1, 0, &p.gid), 0);
	memset(&ca, 0, sizeof(ca));
	ca.grh = RF_GRH_ALWAYS;
	p.qpn = qb.qpn;
	cr_assert_eq(rf_qp_connect_ibv(&qa, &ca, &p), 0);
	cr_assert_eq(qp_is_global(&qa), 1);
	if (e.port.link_layer != IBV_LINK_LAYER_ETHERNET) {
		ca.grh = RF_GRH_NEVER;
		p.qpn = qa.qpn;
		cr_assert_eq(rf_qp_connect_ibv(&qb, &ca, &p), 0);
		cr_assert_eq(qp_is_global(&qb), 0);
	}
	rf_qp_destroy_ibv(&qa);
	rf_qp_destroy_ibv(&qb);
	e2e_close(&e);
}

Test(e2e_verbs, cq_destroy_refuses_while_a_qp_is_attached_or_alive)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_cq cq;
	struct ibv_cq *ibcq = NULL;
	struct rf_qp qp;
	struct rf_qp_init_attr ia;

	e2e_open(&e, &o);
	memset(&cq, 0, sizeof(cq));	/* the analyzer cannot see that a failed assert ends the test */
	cr_assert_eq(rf_cq_create_ibv(&cq, &ibcq, e.ctx, 64, NULL, 0), 0);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	cr_assert_eq(rf_qp_create_ibv(&qp, &ia), 0);
	cr_assert_eq(rf_cq_attach(&cq, qp.qpn, &qp.sq, &qp.rq, NULL), 0);

	/* the verbs layer refuses while the QP exists */
	cr_assert_eq(rf_cq_detach(&cq, qp.qpn), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&cq, ibcq), -EBUSY, "the QP still uses it");
	/* rdmafast refuses while a QP is attached, even one already destroyed */
	cr_assert_eq(rf_cq_attach(&cq, qp.qpn, &qp.sq, &qp.rq, NULL), 0);
	cr_assert_eq(rf_qp_destroy_ibv(&qp), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&cq, ibcq), -EBUSY, "still attached");
	cr_assert_eq(rf_cq_detach(&cq, qp.qpn), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&cq, ibcq), 0);
	cr_assert_null(cq.dbrec, "a destroyed CQ is marked dead");
	e2e_close(&e);
}

/*
 * libmlx5 gives a QP a bfreg of its own up to a quota (4 by default), then
 * hands one bfreg to several (rdma-core providers/mlx5/verbs.c,
 * mlx5_get_qp_uar()): 24 QPs are past it. rdmafast toggles the BlueFlame
 * halves per queue, so each queue it creates must ring a register no other
 * QP rings: RC QPs and DCIs alike, each on a thread domain of its own.
 */
Test(e2e_verbs, every_created_qp_rings_a_bfreg_of_its_own)
{
	enum { NQP = 24 };
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp qp[NQP];
	struct ibv_cq *cq;
	struct rf_qp_init_attr ia;
	int i, j;

	e2e_open(&e, &o);
	cq = ibv_create_cq(e.ctx, 64, NULL, NULL, 0);
	cr_assert(cq);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	for (i = 0; i < NQP; i++) {
		cr_assert_eq(i % 4 == 3 ? rf_dci_create_ibv(&qp[i], &ia) :
			     rf_qp_create_ibv(&qp[i], &ia), 0, "QP %d", i);
		cr_assert_eq(qp[i].sq.bf.size, 256, "QP %d rings BlueFlame", i);
		cr_assert(qp[i].td && qp[i].td_pd, "QP %d", i);
		for (j = 0; j < i; j++)
			cr_assert_neq(qp[i].sq.bf.reg, qp[j].sq.bf.reg,
				      "QP %d rings QP %d's bfreg", i, j);
	}
	for (i = 0; i < NQP; i++) {
		cr_assert_eq(rf_qp_destroy_ibv(&qp[i]), 0);
		cr_assert_null(qp[i].td);
	}
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	e2e_close(&e);
}

static int cmp_reg(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/*
 * The same a thousand times on one context: 1024 thread domains are 512
 * UAR pages of UAR_OBJ_ALLOC, far more than the 256 an 8-bit mmap index
 * reaches (the kernel's dynamic UARs have extended offsets; a ConnectX-6
 * has 8192 UAR pages). Each QP rings a register of its own, and the first
 * and the last carry traffic, to each other.
 */
Test(e2e_verbs, a_thousand_qps_each_ring_a_bfreg_of_their_own)
{
	enum { NQP = 1024 };
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp *qp = (struct rf_qp *)calloc(NQP, sizeof(*qp));
	void **reg = (void **)calloc(NQP, sizeof(*reg));
	struct rf_cq cq;
	struct ibv_cq *ibcq = NULL;
	struct rf_qp_init_attr ia;
	struct rf_wc wc;
	int i;

	cr_assert(qp && reg);
	e2e_open(&e, &o);
	memset(&cq, 0, sizeof(cq));
	cr_assert_eq(rf_cq_create_ibv(&cq, &ibcq, e.ctx, 64, NULL, 0), 0);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 2;
	ia.max_recv_wr = 1;
	for (i = 0; i < NQP; i++) {
		cr_assert_eq(rf_qp_create_ibv(&qp[i], &ia), 0, "QP %d", i);
		cr_assert(qp[i].td, "QP %d has no thread domain", i);
		cr_assert_eq(qp[i].sq.bf.size, 256, "QP %d rings BlueFlame", i);
		reg[i] = qp[i].sq.bf.reg;
	}
	qsort(reg, NQP, sizeof(*reg), cmp_reg);
	for (i = 1; i < NQP; i++)
		cr_assert_neq(reg[i], reg[i - 1], "two QPs ring %p", reg[i]);

	connect_access(&e, &qp[0], &qp[NQP - 1], RF_ACCESS_REMOTE_WRITE);
	for (i = 0; i < 2; i++) {
		struct rf_qp *q = i ? &qp[NQP - 1] : &qp[0];

		cr_assert_eq(rf_cq_attach(&cq, q->qpn, &q->sq, NULL, NULL), 0);
		e.a.buf[i] = (uint8_t)(0xb0 + i);
		cr_assert_eq(rf_sq_post_write(&q->sq, e.a.mr->lkey, e2e_addr(&e.a, (size_t)i), 1,
					      e.b.mr->rkey, e2e_addr(&e.b, (size_t)i),
					      RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)i), 0);
		e2e_wait(&cq, &wc, 1);
		cr_assert_eq(wc.status, RF_WC_SUCCESS, "QP %d: status %u", i, wc.status);
		cr_assert_eq(e.b.buf[i], 0xb0 + i);
		cr_assert_eq(rf_cq_detach(&cq, q->qpn), 0);
	}
	for (i = 0; i < NQP; i++)
		cr_assert_eq(rf_qp_destroy_ibv(&qp[i]), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&cq, ibcq), 0);
	e2e_close(&e);
	free(qp);
	free(reg);
}

/*
 * When no thread domain can be had (here: the device's UAR pages run out,
 * taken by UARs of mlx5dv_devx_alloc_uar(), two registers to a page, as
 * thread domains take them), the QP is created on the PD alone and its
 * bfreg may be shared - here it is, with the 16 QPs of libmlx5's own
 * before: it rings the 8-byte doorbell only, at a place that never moves,
 * and still works.
 */
Test(e2e_verbs, a_qp_without_a_thread_domain_rings_doorbells_only)
{
	enum { NQP = 64, NPLAIN = 16, NHOG = 2 * 8192 };
	struct mlx5dv_devx_uar **hog = (struct mlx5dv_devx_uar **)calloc(NHOG, sizeof(*hog));
	int nhog = 0;
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp *qp = (struct rf_qp *)calloc(NQP, sizeof(*qp));
	struct ibv_qp *plain[NPLAIN];
	struct ibv_qp_init_attr pa;
	struct rf_cq cq;
	struct ibv_cq *ibcq = NULL;
	struct rf_qp_init_attr ia;
	struct rf_wc wc;
	uint8_t *reg;
	int i, n = 0;

	cr_assert(qp);
	e2e_open(&e, &o);
	memset(&cq, 0, sizeof(cq));
	cr_assert_eq(rf_cq_create_ibv(&cq, &ibcq, e.ctx, 64, NULL, 0), 0);
	memset(&ia, 0, sizeof(ia));
	ia.pd = e.pd;
	ia.send_cq = ibcq;
	ia.qp_type = IBV_QPT_RC;
	ia.max_send_wr = 2;
	ia.max_recv_wr = 1;
	memset(&pa, 0, sizeof(pa));
	pa.send_cq = ibcq;
	pa.recv_cq = ibcq;
	pa.qp_type = IBV_QPT_RC;
	pa.cap.max_send_wr = 1;
	pa.cap.max_recv_wr = 1;
	pa.cap.max_send_sge = 1;
	pa.cap.max_recv_sge = 1;
	for (i = 0; i < NPLAIN; i++)
		cr_assert(plain[i] = ibv_create_qp(e.pd, &pa), "plain QP %d", i);
	cr_assert(hog);
	while (nhog < NHOG && (hog[nhog] = mlx5dv_devx_alloc_uar(e.ctx, MLX5DV_UAR_ALLOC_TYPE_BF)))
		nhog++;
	cr_assert_lt(nhog, NHOG, "the UAR pages never ran out");
	while (n < NQP && (n < 2 || qp[n - 1].td)) {
		cr_assert_eq(rf_qp_create_ibv(&qp[n], &ia), 0, "QP %d", n);
		n++;
	}
	cr_assert_null(qp[n - 1].td, "the UAR pages never ran out");
	cr_assert_null(qp[n - 1].td_pd);
	cr_assert_eq(qp[n - 1].sq.bf.size, 0);
	cr_assert_eq(qp[n - 1].sq.bf_bbs, 0);

	/* it works, with a doorbell that stays where it is */
	connect_access(&e, &qp[n - 2], &qp[n - 1], RF_ACCESS_REMOTE_WRITE);
	cr_assert_eq(rf_cq_attach(&cq, qp[n - 1].qpn, &qp[n - 1].sq, NULL, NULL), 0);
	reg = qp[n - 1].sq.bf.cur;
	for (i = 0; i < 2; i++) {
		e.a.buf[i] = (uint8_t)(0xa0 + i);
		cr_assert_eq(rf_sq_post_write(&qp[n - 1].sq, e.a.mr->lkey, e2e_addr(&e.a, (size_t)i),
					      1, e.b.mr->rkey, e2e_addr(&e.b, (size_t)i),
					      RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)i), 0);
		e2e_wait(&cq, &wc, 1);
		cr_assert_eq(wc.status, RF_WC_SUCCESS, "status %u", wc.status);
		cr_assert_eq(e.b.buf[i], 0xa0 + i);
		cr_assert_eq(qp[n - 1].sq.bf.cur, reg, "the doorbell moved");
	}
	cr_assert_eq(rf_cq_detach(&cq, qp[n - 1].qpn), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(rf_qp_destroy_ibv(&qp[i]), 0);
	for (i = 0; i < NPLAIN; i++)
		cr_assert_eq(ibv_destroy_qp(plain[i]), 0);
	while (nhog)
		mlx5dv_devx_free_uar(hog[--nhog]);
	cr_assert_eq(rf_cq_destroy_ibv(&cq, ibcq), 0);
	e2e_close(&e);
	free(qp);
	free(hog);
}

/* The static assertion above, and an rf_qp that is what it says. */
Test(e2e_verbs, a_posts_fields_of_an_aligned_qp_sit_in_two_lines)
{
#ifdef RF_CHECKED
	cr_skip_test("the checked build puts its own state first in struct rf_sq");
#else
	struct rf_qp *qp = (struct rf_qp *)aligned_alloc(64, sizeof(*qp) + 63 - (sizeof(*qp) + 63) % 64);
	uintptr_t first, last;

	cr_assert_not_null(qp);
	first = (uintptr_t)&qp->sq.buf;
	last = (uintptr_t)(&qp->sq.dbrec + 1) - 1;
	cr_assert_eq(last / 64 - first / 64, 1, "lines %zu..%zu", (size_t)(first / 64 % 64),
		     (size_t)(last / 64 % 64));
	free(qp);
#endif
}
