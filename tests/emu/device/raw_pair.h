/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fixture of the flow steering tests (test_raw_flow.c,
 * test_flow_matcher.c, test_packet_reformat.c): one context with RAW_NQP
 * raw packet QPs (2 unless the test says), each with its CQ, QP 0 sending
 * and the others taking the frames of their own context (the
 * self-loopback flags), one MR over a buffer of each.
 */
#ifndef RAW_PAIR_H
#define RAW_PAIR_H

#include <infiniband/mlx5dv.h>

#include "dev_test.h"

#ifndef RAW_NQP
#define RAW_NQP		2
#endif

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq[RAW_NQP];
static struct ibv_qp *qp[RAW_NQP];
static struct ibv_mr *mr;
static uint8_t buf[RAW_NQP][8192];

static void raw_pair_setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(pd && mr);
	for (int i = 0; i < RAW_NQP; i++) {
		cq[i] = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		cr_assert(cq[i]);
		qp[i] = dt_raw_qp(pd, cq[i], i ? DT_SELF_LB : 0);
	}
}

static void raw_pair_teardown(void)
{
	for (int i = 0; i < RAW_NQP; i++) {
		if (qp[i])
			cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
		cr_assert_eq(ibv_destroy_cq(cq[i]), 0);
	}
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* A broadcast frame of len bytes from src, by QP 0, which completes */
static inline void raw_pair_send(const uint8_t src[6], uint32_t len)
{
	uint8_t *f = buf[0];
	struct ibv_sge sge = { (uintptr_t)f, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	memset(f, 0xff, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;				/* a local experimental EtherType */
	f[13] = 0xb5;
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(i * 13);
	cr_assert_eq(ibv_post_send(qp[0], &wr, &bad), 0);
	wc = dt_poll1(cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
}

/* A receive of 4096 bytes on QP 1, into buf[1] cleared */
static inline void raw_pair_post_recv(void)
{
	struct ibv_sge sge = { (uintptr_t)buf[1], 4096, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(buf[1], 0, 4096);
	cr_assert_eq(ibv_post_recv(qp[1], &wr, &bad), 0);
}

#endif
