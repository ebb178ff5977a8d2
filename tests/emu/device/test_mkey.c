/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Indirect mkeys (emu/device/mkey.c): mlx5dv_create_mkey() keys configured
 * by UMR WQEs (mlx5dv_wr_mr_list(), mlx5dv_wr_mr_interleaved(),
 * mlx5dv_wr_mkey_configure() and its setters), then used as lkey and as
 * rkey by every opcode: each piece through its entry's own key, the key's
 * bounds and access, local and remote invalidation, with the error CQEs a
 * ConnectX writes when a check fails.
 */
#include "dev_test.h"

static struct dt t;
static struct mlx5dv_mkey *mk[2];

static struct mlx5dv_mkey *new_mkey(uint32_t flags)
{
	struct mlx5dv_mkey_init_attr a = {
		.pd = t.pd, .max_entries = 4,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | flags,
	};
	struct mlx5dv_mkey *k = mlx5dv_create_mkey(&a);

	cr_assert(k, "mlx5dv_create_mkey: %s", strerror(errno));
	return k;
}

static void setup(void)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
		.umr = true, .max_inline_data = 256,
	};

	dt_setup_opts(&t, &o);
	for (int i = 0; i < 2; i++)
		mk[i] = new_mkey(MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE);
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++)
		cr_expect_eq(mlx5dv_destroy_mkey(mk[i]), 0);
	dt_teardown(&t);
}

TestSuite(mkey, .init = setup, .fini = teardown);

static struct ibv_qp_ex *qpx(int i)
{
	return ibv_qp_to_qp_ex(t.qp[i]);
}

static struct mlx5dv_qp_ex *dvx(int i)
{
	return mlx5dv_qp_ex_from_ibv_qp_ex(qpx(i));
}

/* the UMR's completion on side i: its status */
static enum ibv_wc_status umr_done(int i)
{
	cr_assert_eq(ibv_wr_complete(qpx(i)), 0, "wr_complete: %s", strerror(errno));
	return dt_poll1(t.cq[i]).status;
}

/* mk[i] as a list of n (offset, length) pieces of buf[i] */
static void mr_list(int i, struct mlx5dv_mkey *k, uint32_t access, unsigned n,
		    const uint32_t (*piece)[2])
{
	struct ibv_sge sge[4];

	for (unsigned j = 0; j < n; j++)
		sge[j] = (struct ibv_sge){ (uintptr_t)t.buf[i] + piece[j][0], piece[j][1],
					   t.mr[i]->lkey };
	ibv_wr_start(qpx(i));
	qpx(i)->wr_id = 77;
	qpx(i)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_list(dvx(i), k, access, (uint16_t)n, sge);
	cr_assert_eq(umr_done(i), IBV_WC_SUCCESS);
}

/* the two keys as 8 bytes at 0 and 8 at 64 of each side's buffer */
static const uint32_t two[2][2] = { { 0, 8 }, { 64, 8 } };

static void post(int i, enum ibv_wr_opcode op, uint32_t lkey, uint64_t laddr, uint32_t len,
		 uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge s = { laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	dt_post(t.qp[i], &wr);
}

/* SEND gathered through one indirect key, scattered through another */
Test(mkey, send_recv_through_lists)
{
	struct ibv_wc wc;

	mr_list(0, mk[0], IBV_ACCESS_LOCAL_WRITE, 2, two);
	mr_list(1, mk[1], IBV_ACCESS_LOCAL_WRITE, 2, two);
	memset(t.buf[0], 'c', 128);
	memset(t.buf[1], 's', 128);
	dt_post_recv(t.qp[1], 9, NULL, 16, mk[1]->lkey);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 16, 0, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 16);
	for (int b = 0; b < 128; b++)
		cr_expect_eq(t.buf[1][b], (b < 8 || (b >= 64 && b < 72)) ? 'c' : 's',
			     "byte %d", b);
}

/* an interleaved layout: 3 repetitions of 8 bytes from two strided places */
Test(mkey, interleaved)
{
	struct mlx5dv_mr_interleaved il[2] = {
		{ (uintptr_t)t.buf[0], 8, 2, t.mr[0]->lkey },
		{ (uintptr_t)t.buf[0] + 100, 8, 8, t.mr[0]->lkey },
	};
	uint8_t *dst = t.buf[1] + 4096;

	for (int b = 0; b < 200; b++)
		t.buf[0][b] = (uint8_t)b;
	ibv_wr_start(qpx(0));
	qpx(0)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_interleaved(dvx(0), mk[0], IBV_ACCESS_LOCAL_WRITE, 3, 2, il);
	cr_assert_eq(umr_done(0), IBV_WC_SUCCESS);
	dt_post_recv(t.qp[1], 9, dst, 64, t.mr[1]->lkey);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 48, 0, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll1(t.cq[1]).byte_len, 48);
	for (int r = 0; r < 3; r++)
		for (int b = 0; b < 8; b++) {
			cr_expect_eq(dst[16 * r + b], 10 * r + b, "rep %d byte %d", r, b);
			cr_expect_eq(dst[16 * r + 8 + b], 100 + 16 * r + b, "rep %d byte %d", r, b);
		}
	/* past 3 repetitions: the key's length */
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 49, 0, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_LOC_PROT_ERR);
}

/* the device's gather list holds 64 pieces: 33 repetitions of 2 are too many */
Test(mkey, pieces_limit)
{
	struct mlx5dv_mr_interleaved il[2] = {
		{ (uintptr_t)t.buf[0], 4, 4, t.mr[0]->lkey },
		{ (uintptr_t)t.buf[0] + 4096, 4, 4, t.mr[0]->lkey },
	};

	ibv_wr_start(qpx(0));
	qpx(0)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_interleaved(dvx(0), mk[0], IBV_ACCESS_LOCAL_WRITE, 33, 2, il);
	cr_assert_eq(umr_done(0), IBV_WC_SUCCESS);
	dt_post_recv(t.qp[1], 9, t.buf[1], 1024, t.mr[1]->lkey);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 256, 0, 0);	/* 64 pieces */
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll1(t.cq[1]).byte_len, 256);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 264, 0, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_LOC_LEN_ERR);
}

/* a receive whose keys map to more than 64 pieces: refused as a bad key */
Test(mkey, recv_pieces_limit)
{
	struct mlx5dv_mr_interleaved il[2] = {
		{ (uintptr_t)t.buf[1], 4, 4, t.mr[1]->lkey },
		{ (uintptr_t)t.buf[1] + 4096, 4, 4, t.mr[1]->lkey },
	};
	struct ibv_sge s[2] = { { 0, 256, mk[1]->lkey },
				{ (uintptr_t)t.buf[1] + 8192, 64, t.mr[1]->lkey } };
	struct ibv_recv_wr wr = { .wr_id = 9, .sg_list = s, .num_sge = 2 }, *bad;

	ibv_wr_start(qpx(1));
	qpx(1)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_interleaved(dvx(1), mk[1], IBV_ACCESS_LOCAL_WRITE, 32, 2, il);
	cr_assert_eq(umr_done(1), IBV_WC_SUCCESS);
	cr_assert_eq(ibv_post_recv(t.qp[1], &wr, &bad), 0);
	post(0, IBV_WR_SEND, t.mr[0]->lkey, (uintptr_t)t.buf[0], 300, 0, 0);
	cr_expect_eq(dt_poll1(t.cq[1]).status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_OP_ERR);
}

/* WRITE and READ across two entries of a remote indirect key, an atomic in one */
Test(mkey, rdma_through_remote_key)
{
	static const uint32_t big[2][2] = { { 0, 1000 }, { 8192, 3096 } };
	uint32_t acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_send_wr wr = { .wr_id = 3, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge s = { (uintptr_t)t.buf[0] + 32768, 8, t.mr[0]->lkey };

	mr_list(1, mk[1], acc, 2, big);
	for (int b = 0; b < 4096; b++)
		t.buf[0][b] = (uint8_t)(b * 7);
	post(0, IBV_WR_RDMA_WRITE, t.mr[0]->lkey, (uintptr_t)t.buf[0], 4096, mk[1]->rkey, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_expect_eq(memcmp(t.buf[1], t.buf[0], 1000), 0);
	cr_expect_eq(memcmp(t.buf[1] + 8192, t.buf[0] + 1000, 3096), 0);
	cr_expect_eq(t.buf[1][1000], 0, "nothing between the entries");

	/* READ it back through a local indirect key of the same shape */
	mr_list(0, mk[0], IBV_ACCESS_LOCAL_WRITE, 2,
		(const uint32_t[][2]){ { 16384, 2000 }, { 24576, 2096 } });
	post(0, IBV_WR_RDMA_READ, mk[0]->lkey, 0, 4096, mk[1]->rkey, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_expect_eq(memcmp(t.buf[0] + 16384, t.buf[0], 2000), 0);
	cr_expect_eq(memcmp(t.buf[0] + 24576, t.buf[0] + 2000, 2096), 0);

	/* FETCH_ADD on the second entry's first 8 bytes (key offset 1000) */
	memset(t.buf[1] + 8192, 0, 8);
	wr.sg_list = &s;
	wr.wr.atomic.remote_addr = 1000;
	wr.wr.atomic.rkey = mk[1]->rkey;
	wr.wr.atomic.compare_add = 5;
	dt_post(t.qp[0], &wr);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_expect_eq(*(uint64_t *)(t.buf[1] + 8192), 5);
}

/* beyond the key's length: the requester's and the responder's errors */
Test(mkey, bounds)
{
	mr_list(0, mk[0], IBV_ACCESS_LOCAL_WRITE, 2, two);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 17, 0, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_LOC_PROT_ERR);
}

Test(mkey, remote_bounds_and_access)
{
	/* the key allows remote reads only */
	mr_list(1, mk[1], IBV_ACCESS_REMOTE_READ, 2, two);
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 1);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_ACCESS_ERR);
}

Test(mkey, remote_write_needs_access)
{
	mr_list(1, mk[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 2, two);
	post(0, IBV_WR_RDMA_WRITE, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_ACCESS_ERR);
}

/* each entry through its own key: one whose MR went away fails */
Test(mkey, entry_key_checked)
{
	struct ibv_mr *mr2 = ibv_reg_mr(t.pd, t.buf[0] + 8192, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge[2] = { { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey },
				  { (uintptr_t)t.buf[0] + 8192, 8, 0 } };

	cr_assert(mr2);
	sge[1].lkey = mr2->lkey;
	ibv_wr_start(qpx(0));
	qpx(0)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_list(dvx(0), mk[0], IBV_ACCESS_LOCAL_WRITE, 2, sge);
	cr_assert_eq(umr_done(0), IBV_WC_SUCCESS);
	dt_post_recv(t.qp[1], 9, t.buf[1], 64, t.mr[1]->lkey);
	/* the first entry alone still works */
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 8, 0, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_dereg_mr(mr2), 0);
	post(0, IBV_WR_SEND, mk[0]->lkey, 0, 16, 0, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_LOC_PROT_ERR);
}

/* created free: unusable before any UMR */
Test(mkey, created_free)
{
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 8, mk[1]->rkey, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_ACCESS_ERR);
}

/* mlx5dv_wr_mkey_configure() and its setters; an invalidated key is unusable */
Test(mkey, configure_and_invalidate)
{
	struct ibv_sge sge[2] = { { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey },
				  { (uintptr_t)t.buf[0] + 64, 8, t.mr[0]->lkey } };
	struct mlx5dv_mkey_conf_attr ca = { 0 };
	struct ibv_send_wr inv = { .wr_id = 5, .opcode = IBV_WR_LOCAL_INV,
				   .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	ibv_wr_start(qpx(1));
	qpx(1)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(dvx(1), mk[1], 2, &ca);
	mlx5dv_wr_set_mkey_access_flags(dvx(1), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	sge[0].addr = (uintptr_t)t.buf[1];
	sge[1].addr = (uintptr_t)t.buf[1] + 64;
	sge[0].lkey = sge[1].lkey = t.mr[1]->lkey;
	mlx5dv_wr_set_mkey_layout_list(dvx(1), 2, sge);
	cr_assert_eq(umr_done(1), IBV_WC_SUCCESS);
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 0);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);

	/* local invalidation: LOCAL_INV completes, the key is free again */
	inv.invalidate_rkey = mk[1]->lkey;
	dt_post(t.qp[1], &inv);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.opcode, IBV_WC_LOCAL_INV);
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_ACCESS_ERR);
}

/* SEND_WITH_INV: the receiver's key goes free, reported in its completion */
Test(mkey, remote_invalidate)
{
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	mr_list(1, mk[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, 2, two);
	dt_post_recv(t.qp[1], 9, t.buf[1] + 4096, 64, t.mr[1]->lkey);
	wr.invalidate_rkey = mk[1]->rkey;
	dt_post(t.qp[0], &wr);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect(wc.wc_flags & IBV_WC_WITH_INV);
	cr_expect_eq(wc.invalidated_rkey, mk[1]->rkey);
	post(0, IBV_WR_RDMA_READ, t.mr[0]->lkey, (uintptr_t)t.buf[0], 16, mk[1]->rkey, 0);
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_ACCESS_ERR);
}

/* without MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE the peer may not */
Test(mkey, remote_invalidate_needs_the_flag)
{
	struct mlx5dv_mkey *k = new_mkey(0);
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED };

	mr_list(1, k, IBV_ACCESS_LOCAL_WRITE, 2, two);
	dt_post_recv(t.qp[1], 9, t.buf[1] + 4096, 64, t.mr[1]->lkey);
	wr.invalidate_rkey = k->rkey;
	dt_post(t.qp[0], &wr);
	/* refused as for a window it may not invalidate */
	cr_expect_eq(dt_poll1(t.cq[0]).status, IBV_WC_REM_INV_REQ_ERR);
	cr_expect_eq(dt_poll1(t.cq[1]).status, IBV_WC_LOC_PROT_ERR);
	cr_expect_eq(mlx5dv_destroy_mkey(k), 0);
}

/* a UMR on a key of another PD fails as a bind does */
Test(mkey, umr_other_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(t.ctx);
	struct mlx5dv_mkey_init_attr a = {
		.pd = pd2, .max_entries = 4,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
	};
	struct mlx5dv_mkey *k;
	struct ibv_sge sge = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };

	cr_assert(pd2);
	k = mlx5dv_create_mkey(&a);
	cr_assert(k);
	ibv_wr_start(qpx(0));
	qpx(0)->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mr_list(dvx(0), k, IBV_ACCESS_LOCAL_WRITE, 1, &sge);
	cr_expect_eq(umr_done(0), IBV_WC_MW_BIND_ERR);
	cr_expect_eq(mlx5dv_destroy_mkey(k), 0);
	cr_expect_eq(ibv_dealloc_pd(pd2), 0);
}
