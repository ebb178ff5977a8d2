/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_scatter.c - scatter-to-CQE as libmlx5 enables it: small receives
 * (and, on RC QPs that signal everything, READ/atomic responses) travel in
 * the CQE, and libmlx5's ibv_poll_cq copies them into the buffers.
 *
 * Each test peeks at the CQE in the CQ ring (mlx5dv_init_obj) before
 * polling: the format bits of op_own say where the data is, and the target
 * buffer must still be untouched when the data is in the CQE.
 */
#include "dev_test.h"

TestSuite(dev_scatter, .timeout = 30);

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13 + 1);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static struct mlx5dv_cq cq_dv(struct ibv_cq *cq)
{
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = cq, .out = &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	return dv;
}

/* Entry n of cq (its first byte), once the device has written it; not consumed. */
static uint8_t *peek_cqe(struct ibv_cq *cq, uint32_t n)
{
	struct mlx5dv_cq dv = cq_dv(cq);
	uint8_t *e = (uint8_t *)dv.buf + (size_t)(n & (dv.cqe_cnt - 1)) * dv.cqe_size;
	volatile uint8_t *op = e + dv.cqe_size - 1;
	uint64_t end = dt_now_ms() + 5000;

	while ((*op >> 4) == MLX5_CQE_INVALID || (*op & 1) != ((n / dv.cqe_cnt) & 1)) {
		cr_assert_lt(dt_now_ms(), end, "CQE %u not written within 5 s", n);
		usleep(20);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return e;
}

static uint8_t op_own_fmt(struct ibv_cq *cq, const uint8_t *e)
{
	return e[cq_dv(cq).cqe_size - 1] & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64);
}

static void post_send(struct dt *t, enum ibv_wr_opcode op, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge s = { (uintptr_t)t->buf[0], len, t->mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &s, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x1234),
		.wr.rdma = { (uintptr_t)t->buf[1] + 8192, t->mr[1]->rkey },
	};

	dt_post(t->qp[0], &wr);
}

/* A receive of len bytes on qp[1]: where do the data go? */
static uint8_t recv_fmt(struct dt *t, uint32_t len, bool expect_in_cqe)
{
	struct ibv_wc wc;
	uint8_t *e, fmt;

	fill(t->buf[0], len, (uint8_t)len);
	dt_post_recv(t->qp[1], 5, t->buf[1], 4096, t->mr[1]->lkey);
	post_send(t, IBV_WR_SEND, len, 1);
	e = peek_cqe(t->cq[1], 0);
	fmt = op_own_fmt(t->cq[1], e);
	if (expect_in_cqe) {
		cr_assert(all_zero(t->buf[1], 4096), "data went to memory, not the CQE");
		cr_assert_eq(memcmp(e, t->buf[0], len), 0, "CQE bytes 0..%u are not the data", len - 1);
	} else {
		cr_assert_eq(memcmp(t->buf[1], t->buf[0], len), 0, "data not in memory");
	}
	wc = dt_poll1(t->cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, len);
	cr_assert_eq(memcmp(t->buf[1], t->buf[0], len), 0, "ibv_poll_cq did not deliver the data");
	cr_assert(all_zero(t->buf[1] + len, 4096 - len), "wrote past the message");
	cr_assert_eq(dt_poll1(t->cq[0]).status, IBV_WC_SUCCESS);
	return fmt;
}

Test(dev_scatter, recv_32_bytes_in_cqe)
{
	struct dt t;

	dt_setup(&t);
	cr_assert_eq(recv_fmt(&t, 32, true), MLX5_INLINE_SCATTER_32);
	dt_teardown(&t);
}

Test(dev_scatter, recv_1_byte_in_cqe)
{
	struct dt t;

	dt_setup(&t);
	cr_assert_eq(recv_fmt(&t, 1, true), MLX5_INLINE_SCATTER_32);
	dt_teardown(&t);
}

Test(dev_scatter, recv_33_bytes_to_memory)
{
	struct dt t;

	dt_setup(&t);
	cr_assert_eq(recv_fmt(&t, 33, false), 0);
	dt_teardown(&t);
}

/* libmlx5 does not ask for it with MLX5_SCATTER_TO_CQE=0: memory, format 0. */
Test(dev_scatter, disabled_by_env)
{
	struct dt t;

	setenv("MLX5_SCATTER_TO_CQE", "0", 1);
	dt_setup(&t);
	cr_assert_eq(recv_fmt(&t, 16, false), 0);
	dt_teardown(&t);
}

/* The copy-out honours several SGEs and the immediate survives. */
Test(dev_scatter, recv_imm_multi_sge)
{
	struct dt t;
	struct ibv_sge r[2];
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = r, .num_sge = 2 }, *rbad;
	struct ibv_wc wc;
	uint8_t *e;

	dt_setup(&t);
	r[0] = (struct ibv_sge){ (uintptr_t)t.buf[1], 10, t.mr[1]->lkey };
	r[1] = (struct ibv_sge){ (uintptr_t)t.buf[1] + 1000, 100, t.mr[1]->lkey };
	fill(t.buf[0], 30, 7);
	cr_assert_eq(ibv_post_recv(t.qp[1], &rwr, &rbad), 0);
	post_send(&t, IBV_WR_SEND_WITH_IMM, 30, 1);
	e = peek_cqe(t.cq[1], 0);
	cr_assert_eq(op_own_fmt(t.cq[1], e), MLX5_INLINE_SCATTER_32);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 30);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc.imm_data), 0x1234);
	cr_assert_eq(memcmp(t.buf[1], t.buf[0], 10), 0);
	cr_assert_eq(memcmp(t.buf[1] + 1000, t.buf[0] + 10, 20), 0);
	cr_assert(all_zero(t.buf[1] + 10, 990));
	dt_teardown(&t);
}

/* RDMA write with immediate places data in memory: never in the CQE. */
Test(dev_scatter, write_imm_not_scattered)
{
	struct dt t;
	struct ibv_wc wc;

	dt_setup(&t);
	fill(t.buf[0], 16, 3);
	dt_post_recv(t.qp[1], 5, t.buf[1], 64, t.mr[1]->lkey);
	post_send(&t, IBV_WR_RDMA_WRITE_WITH_IMM, 16, 1);
	cr_assert_eq(op_own_fmt(t.cq[1], peek_cqe(t.cq[1], 0)), 0);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(memcmp(t.buf[1] + 8192, t.buf[0], 16), 0);
	cr_assert(all_zero(t.buf[1], 64), "the receive buffer was written");
	dt_teardown(&t);
}

/* Receives through an SRQ: libmlx5 finds the buffer behind the next segment. */
Test(dev_scatter, recv_srq)
{
	struct dt t;
	struct ibv_srq *srq;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_sge s;
	struct ibv_recv_wr rwr = { .wr_id = 77, .sg_list = &s, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	/* the default pair, then its receiving QP replaced by one on an SRQ */
	dt_setup(&t);
	srq = ibv_create_srq(t.pd, &sa);
	cr_assert(srq);
	o.srq = srq;
	ibv_destroy_qp(t.qp[1]);
	t.qp[1] = dt_create_qp(&t, 1, &o);
	o.srq = NULL;
	ibv_destroy_qp(t.qp[0]);
	t.qp[0] = dt_create_qp(&t, 0, &o);
	cr_assert_eq(dt_connect(t.qp[0], t.qp[1]->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(t.qp[1], t.qp[0]->qp_num, t.lid, &o), 0);
	s = (struct ibv_sge){ (uintptr_t)t.buf[1] + 512, 256, t.mr[1]->lkey };
	cr_assert_eq(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
	fill(t.buf[0], 24, 9);
	post_send(&t, IBV_WR_SEND, 24, 1);
	cr_assert_eq(op_own_fmt(t.cq[1], peek_cqe(t.cq[1], 0)), MLX5_INLINE_SCATTER_32);
	cr_assert(all_zero(t.buf[1] + 512, 256));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.byte_len, 24);
	cr_assert_eq(memcmp(t.buf[1] + 512, t.buf[0], 24), 0);
	cr_assert_eq(ibv_destroy_qp(t.qp[1]), 0);
	t.qp[1] = NULL;
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	dt_teardown(&t);
}

/* UC responders scatter too (the kernel enables it for RC and UC). */
Test(dev_scatter, uc_recv)
{
	struct dt t;
	struct dt_qp_opts o = { .type = IBV_QPT_UC };

	dt_setup_opts(&t, &o);
	cr_assert_eq(recv_fmt(&t, 8, true), MLX5_INLINE_SCATTER_32);
	dt_teardown(&t);
}

/* 128-byte CQEs: up to 64 bytes, in the first half of the entry. */
Test(dev_scatter, cqe128_scatter64)
{
	struct dt t;
	struct ibv_cq_init_attr_ex ca = { .cqe = 64 };
	struct mlx5dv_cq_init_attr da = {
		.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 128,
	};
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_cq_ex *cqx;
	struct ibv_cq *old;
	uint8_t *e;
	struct ibv_wc wc;

	dt_setup(&t);
	cqx = mlx5dv_create_cq(t.ctx, &ca, &da);
	cr_assert(cqx, "mlx5dv_create_cq: %s", strerror(errno));
	ibv_destroy_qp(t.qp[1]);
	ibv_destroy_qp(t.qp[0]);
	old = t.cq[1];
	t.cq[1] = ibv_cq_ex_to_cq(cqx);
	cr_assert_eq(cq_dv(t.cq[1]).cqe_size, 128);
	t.qp[0] = dt_create_qp(&t, 0, &o);
	t.qp[1] = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(t.qp[0], t.qp[1]->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(t.qp[1], t.qp[0]->qp_num, t.lid, &o), 0);

	fill(t.buf[0], 64, 5);
	dt_post_recv(t.qp[1], 5, t.buf[1], 4096, t.mr[1]->lkey);
	post_send(&t, IBV_WR_SEND, 64, 1);
	e = peek_cqe(t.cq[1], 0);
	cr_assert_eq(op_own_fmt(t.cq[1], e), MLX5_INLINE_SCATTER_64);
	cr_assert_eq(memcmp(e, t.buf[0], 64), 0, "first half of the entry is not the data");
	cr_assert(all_zero(t.buf[1], 4096));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 64);
	cr_assert_eq(memcmp(t.buf[1], t.buf[0], 64), 0);

	/* 65 bytes do not fit */
	fill(t.buf[0], 65, 6);
	dt_post_recv(t.qp[1], 6, t.buf[1] + 1024, 1024, t.mr[1]->lkey);
	post_send(&t, IBV_WR_SEND, 65, 2);
	e = peek_cqe(t.cq[1], 1);
	cr_assert_eq(op_own_fmt(t.cq[1], e), 0);
	cr_assert_eq(dt_poll1(t.cq[1]).status, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(t.buf[1] + 1024, t.buf[0], 65), 0);
	cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 5000), 1);
	cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 5000), 1);

	cr_assert_eq(ibv_destroy_qp(t.qp[1]), 0);
	cr_assert_eq(ibv_destroy_qp(t.qp[0]), 0);
	t.qp[0] = t.qp[1] = NULL;
	cr_assert_eq(ibv_destroy_cq(t.cq[1]), 0);
	t.cq[1] = old;
	dt_teardown(&t);
}

/*
 * Requester side: with sq_sig_all the kernel enables it on RC QPs, so a
 * small READ and an atomic complete with their data in the CQE (64-byte
 * CQEs: rdma-core 44 mis-copies 128-byte ones, fixed by rdma-core PR #1743).
 */
Test(dev_scatter, requester_read_atomic_sig_all)
{
	struct dt t;
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
		.sq_sig_all = 1,
	};
	struct ibv_sge s;
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &s, .num_sge = 1 };
	struct ibv_wc wc;
	uint64_t *target, *result;
	uint8_t *e;

	dt_setup_opts(&t, &o);
	fill(t.buf[1], 32, 11);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0] + 256, 32, t.mr[0]->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	e = peek_cqe(t.cq[0], 0);
	cr_assert_eq(op_own_fmt(t.cq[0], e), MLX5_INLINE_SCATTER_32);
	cr_assert(all_zero(t.buf[0] + 256, 32), "READ data went to memory");
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 32);
	cr_assert_eq(memcmp(t.buf[0] + 256, t.buf[1], 32), 0);

	target = (uint64_t *)(t.buf[1] + 1024);
	result = (uint64_t *)(t.buf[0] + 1024);
	*target = 0x1111222233334444ull;
	s = (struct ibv_sge){ (uintptr_t)result, 8, t.mr[0]->lkey };
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = t.mr[1]->rkey;
	wr.wr.atomic.compare_add = 5;
	dt_post(t.qp[0], &wr);
	e = peek_cqe(t.cq[0], 1);
	cr_assert_eq(op_own_fmt(t.cq[0], e), MLX5_INLINE_SCATTER_32);
	cr_assert_eq(*result, 0);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_assert_eq(*result, 0x1111222233334444ull);
	cr_assert_eq(*target, 0x1111222233334449ull);

	/* a READ larger than 32 bytes: memory, as usual */
	fill(t.buf[1] + 2048, 33, 12);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0] + 2048, 33, t.mr[0]->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 2048;
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	e = peek_cqe(t.cq[0], 2);
	cr_assert_eq(op_own_fmt(t.cq[0], e), 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(t.buf[0] + 2048, t.buf[1] + 2048, 33), 0);
	dt_teardown(&t);
}

/*
 * t with both CQs padded (MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD: 64-byte CQEs at
 * a 128-byte stride) and its QPs made again on them.
 */
static void setup_padded(struct dt *t, const struct dt_qp_opts *o)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64 };
	struct mlx5dv_cq_init_attr da = {
		.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
		.flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD, .cqe_size = 128,
	};

	dt_setup_opts(t, o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(t->qp[i]), 0);
	for (int i = 0; i < 2; i++) {
		struct ibv_cq_ex *cqx = mlx5dv_create_cq(t->ctx, &ca, &da);

		cr_assert(cqx, "mlx5dv_create_cq: %s", strerror(errno));
		cr_assert_eq(ibv_destroy_cq(t->cq[i]), 0);
		t->cq[i] = ibv_cq_ex_to_cq(cqx);
		cr_assert_eq(cq_dv(t->cq[i]).cqe_size, 128);
	}
	for (int i = 0; i < 2; i++)
		t->qp[i] = dt_create_qp(t, i, o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(t->qp[i], t->qp[!i]->qp_num, t->lid, o), 0);
}

/*
 * A padded CQ takes no data in the model: the kernel programs
 * scatter-to-CQE by its 128-byte stride, but the device writes 64-byte
 * CQEs there, and the model leaves the first half empty
 * (emu/DESIGN-device.md), so a receive and a READ small enough for the CQE
 * land in their buffers, and the CQE64 is at the end of the entry, where
 * libmlx5 reads it.
 */
Test(dev_scatter, padded_cq_takes_no_data)
{
	struct dt t;
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
		.sq_sig_all = 1,
	};
	struct ibv_wc wc;
	uint8_t *e;

	setup_padded(&t, &o);
	cr_assert_eq(recv_fmt(&t, 16, false), 0);
	e = peek_cqe(t.cq[1], 0);
	cr_assert(all_zero(e, 64), "data in the padding");

	/* post_send()'s READ: 8 bytes from buf[1] + 8192 into buf[0] */
	fill(t.buf[1] + 8192, 8, 9);
	post_send(&t, IBV_WR_RDMA_READ, 8, 3);
	e = peek_cqe(t.cq[0], 1);
	cr_assert_eq(op_own_fmt(t.cq[0], e), 0);
	cr_assert(all_zero(e, 64), "data in the padding");
	cr_assert_eq(memcmp(t.buf[0], t.buf[1] + 8192, 8), 0, "READ data not in memory");
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(wc.byte_len, 8);
	dt_teardown(&t);
}

/* Without sq_sig_all (and without the ALLOW flag) READ data go to memory. */
Test(dev_scatter, requester_off_without_sig_all)
{
	struct dt t;
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};

	dt_setup(&t);
	fill(t.buf[1], 16, 2);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 16, t.mr[0]->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	cr_assert_eq(op_own_fmt(t.cq[0], peek_cqe(t.cq[0], 0)), 0);
	cr_assert_eq(memcmp(t.buf[0], t.buf[1], 16), 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	dt_teardown(&t);
}

/*
 * MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE without sq_sig_all: a signaled
 * READ uses the CQE, an unsignaled one (no CQE to carry it) uses memory.
 */
Test(dev_scatter, requester_allow_flag)
{
	struct dt t;
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = NULL, .recv_cq = NULL, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr da = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE,
	};
	struct ibv_sge s[2];
	struct ibv_send_wr wr[2];
	struct ibv_send_wr *bad;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	uint8_t *e;

	dt_setup(&t);
	ia.send_cq = ia.recv_cq = t.cq[0];
	ia.pd = t.pd;
	qp = mlx5dv_create_qp(t.ctx, &ia, &da);
	cr_assert(qp, "mlx5dv_create_qp: %s", strerror(errno));
	ibv_destroy_qp(t.qp[0]);
	t.qp[0] = qp;
	ibv_destroy_qp(t.qp[1]);
	t.qp[1] = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(t.qp[0], t.qp[1]->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(t.qp[1], t.qp[0]->qp_num, t.lid, &o), 0);

	fill(t.buf[1], 16, 4);
	for (int i = 0; i < 2; i++) {
		s[i] = (struct ibv_sge){ (uintptr_t)t.buf[0] + 512 * (uint64_t)i, 16, t.mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = (uint64_t)i, .sg_list = &s[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ, .next = i ? NULL : &wr[1],
			.send_flags = i ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
		};
	}
	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0);
	e = peek_cqe(t.cq[0], 0);
	cr_assert_eq(op_own_fmt(t.cq[0], e), MLX5_INLINE_SCATTER_32);
	cr_assert_eq(memcmp(t.buf[0], t.buf[1], 16), 0, "unsignaled READ must use memory");
	cr_assert(all_zero(t.buf[0] + 512, 16), "signaled READ went to memory");
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(memcmp(t.buf[0] + 512, t.buf[1], 16), 0);
	dt_teardown(&t);
}
