/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast's WQEs against libmlx5's (golden.h): UC (WRITE, WRITE with
 * immediate, SEND, SEND with immediate, inline SEND) and UD (SEND, with
 * immediate, the QP's Q_Key, inline, and through ibv_wr_send()) on
 * InfiniBand, and UD again on RoCE (e2e_rerun_on_roce(), suite
 * e2e_golden_roce, which re-runs the RC and XRC golden suites too).
 */
#include "golden.h"

Test(e2e_golden_qp, uc_matches_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t p = 0;
	uint8_t msg[40];

	gq_open(&g, IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	a = &g.e.a;
	b = &g.e.b;
	sq = &a->qp.sq;
	cr_assert_eq(sq->kind, RF_QP_UC);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);
	receives(&g, 4);
	request_512(&g, &wr, &sge);
	wr.imm_data = htobe32(0x11223344);

	LIB(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 0, 0, 0, "uc write");
	LIB(IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_write_imm(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
					  e2e_addr(b, 4096), RF_BE32(0x11223344),
					  RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	step(&g, &p, 0, 0, 1, "uc write_imm");
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send(sq, a->mr->lkey, e2e_addr(a, 0), 512, RF_SEND_SIGNALED, 0),
		     0);
	step(&g, &p, 0, 0, 1, "uc send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send_imm(sq, a->mr->lkey, e2e_addr(a, 0), 512,
					 RF_BE32(0x11223344), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 0, 0, 1, "uc send_imm");
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_send_inline(sq, msg, sizeof(msg), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 16 + 4 + sizeof(msg), 64, 1, "uc send_inline");
	cr_assert_eq(memcmp(b->buf + 49152 + 3 * 1024, msg, sizeof(msg)), 0);
	gq_close(&g);
}

/* UD: rdmafast's a -> b beside libmlx5's c -> d, one AH for both. */
static void ud_step(struct gq *g, uint32_t *p, uint32_t pad, const char *what)
{
	/* the AV's destination QPN (bytes 25..27): b and d */
	rf_sq_ring(&g->e.a.qp.sq);
	cmp(&g->e.a.qp.sq, *p, &g->c.sq, *p, 16 + 9, 16 + 12, pad, 128, what);
	*p += wqe_bbs(&g->c.sq, *p);
	lib_wait(g, 2);
	rf_wait(&g->e.a.cq, 1);
	rf_wait(&g->e.b.cq, 1);
}

Test(e2e_golden_ud, ud_matches_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t p = 0;
	uint8_t msg[24];

	gq_open(&g, IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	a = &g.e.a;
	b = &g.e.b;
	sq = &a->qp.sq;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x61 + i);
	receives(&g, 6);
	sge.addr = e2e_addr(a, 0);
	sge.length = 100;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = g.ah;
	wr.wr.ud.remote_qpn = g.d.qpn;
	wr.wr.ud.remote_qkey = QKEY;
	wr.imm_data = htobe32(0x55667788);

	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 128, "ud send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, RF_BE32(0x55667788), 1,
					RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	ud_step(&g, &p, 128, "ud send_imm");
	/* bit 31 of the Q_Key: the device takes the sending QP's (QKEY) */
	wr.wr.ud.remote_qkey = 0x80000000u;
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, 0x80000000u, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 128, "ud send, the QP's Q_Key");
	wr.wr.ud.remote_qkey = QKEY;
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, msg, 0, 0, sizeof(msg), 0, 0,
					RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 16 + 48 + 4 + sizeof(msg), "ud send_inline");
	cr_assert_eq(memcmp(b->buf + 49152 + 3 * 1024 + RF_UD_GRH_LEN, msg, sizeof(msg)), 0);

	/* ibv_wr_*(): the same WQE, but for the immediate's stale bytes */
	memset((void *)rf_sq_wqe(&g.c.sq, p), 0xa5, 2 * RF_SEND_WQE_BB);
	memset((void *)rf_sq_wqe(sq, p), 0xa5, 2 * RF_SEND_WQE_BB);
	ibv_wr_start(g.cx);
	g.cx->wr_id = 0;
	g.cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(g.cx);
	ibv_wr_set_ud_addr(g.cx, g.ah, g.d.qpn, QKEY);
	ibv_wr_set_sge(g.cx, a->mr->lkey, e2e_addr(a, 0), 100);
	cr_assert_eq(ibv_wr_complete(g.cx), 0);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	for (uint32_t i = 12; i < 16; i++) {
		cr_assert_eq(wqe_byte(&g.c.sq, p, i), 0xa5, "libmlx5 ibv_wr_send wrote byte %u", i);
		cr_assert_eq(wqe_byte(sq, p, i), 0, "rdmafast left byte %u", i);
	}
	rf_sq_ring(sq);
	cmp(sq, p, &g.c.sq, p, 16 + 9, 16 + 12, 12, 16, "ud ibv_wr_send");
	lib_wait(&g, 2);
	rf_wait(&a->cq, 1);
	rf_wait(&b->cq, 1);
	gq_close(&g);
}

/* Suite e2e_golden_ud again on RoCE (emulated HCA only): the AV's GRH and MAC. */
Test(e2e_golden_roce, ud_on_roce, .timeout = 120)
{
	e2e_rerun_on_roce("e2e_golden_ud/*");
}
