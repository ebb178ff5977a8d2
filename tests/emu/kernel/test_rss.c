/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The hash request of an RSS raw packet QP (ibv_create_qp_ex() with
 * IBV_QP_INIT_ATTR_RX_HASH over an indirection table of WQs): the errno
 * mlx5's create_rss_raw_qp_tir() gives each request a ConnectX refuses,
 * and EOPNOTSUPP for one it would take, as this device hashes nothing
 * (rss_caps 0).
 */
#include <rdma/mlx5-abi.h>

#include "emu_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_wq *wqs[2];
static struct ibv_rwq_ind_table *one, *two;	/* tables of 1 and 2 WQs */
static uint8_t key[40];

static void setup(void)
{
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 16, .max_sge = 1 };

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert(pd && cq);
	wa.pd = pd;
	wa.cq = cq;
	for (int i = 0; i < 2; i++) {
		wqs[i] = ibv_create_wq(ctx, &wa);
		cr_assert(wqs[i], "%s", strerror(errno));
	}
	one = ibv_create_rwq_ind_table(ctx, &(struct ibv_rwq_ind_table_init_attr){
		.log_ind_tbl_size = 0, .ind_tbl = wqs });
	two = ibv_create_rwq_ind_table(ctx, &(struct ibv_rwq_ind_table_init_attr){
		.log_ind_tbl_size = 1, .ind_tbl = wqs });
	cr_assert(one && two, "%s", strerror(errno));
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_rwq_ind_table(one), 0);
	cr_assert_eq(ibv_destroy_rwq_ind_table(two), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_wq(wqs[i]), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(rss, .init = setup, .fini = teardown);

/* The errno of creating an RSS QP over t that hashes fields with fn and a key of key_len. */
static int rss_qp_errno(struct ibv_rwq_ind_table *t, uint8_t fn, uint8_t key_len, uint64_t fields)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd, .rwq_ind_tbl = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = fn, .rx_hash_key_len = key_len,
				  .rx_hash_key = key, .rx_hash_fields_mask = fields },
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(ctx, &ia);
	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	if (errno == EPERM)
		cr_skip_test("raw packet QPs need CAP_NET_RAW");
	return errno;
}

#define TOEPLITZ	IBV_RX_HASH_FUNC_TOEPLITZ

/* What a ConnectX takes, this device (no RSS) refuses as not supported. */
Test(rss, a_request_mlx5_takes_is_not_supported)
{
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4 |
				  IBV_RX_HASH_DST_IPV4), EOPNOTSUPP);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV6 |
				  IBV_RX_HASH_DST_PORT_UDP | IBV_RX_HASH_SRC_PORT_UDP),
		     EOPNOTSUPP);
	/* no fields: a steering entry, over a table of one WQ only */
	cr_expect_eq(rss_qp_errno(one, TOEPLITZ, 40, 0), EOPNOTSUPP);
}

/* Toeplitz, with the TIR's 40-byte key, is the one hash function. */
Test(rss, toeplitz_with_a_40_byte_key_only)
{
	cr_expect_eq(rss_qp_errno(two, 0, 40, IBV_RX_HASH_SRC_IPV4), EOPNOTSUPP);
	cr_expect_eq(rss_qp_errno(two, 2, 40, IBV_RX_HASH_SRC_IPV4), EOPNOTSUPP);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 39, IBV_RX_HASH_SRC_IPV4), EINVAL);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 0, IBV_RX_HASH_SRC_IPV4), EINVAL);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 128, IBV_RX_HASH_SRC_IPV4), EINVAL);
	/* libmlx5's own check: more than its request's 128 bytes */
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 129, IBV_RX_HASH_SRC_IPV4), EINVAL);
}

/* One L3 and one L4 protocol; some field unless the table has one WQ. */
Test(rss, field_combinations_mlx5_refuses)
{
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, 0), EINVAL);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4 |
				  IBV_RX_HASH_DST_IPV6), EINVAL);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_PORT_TCP |
				  IBV_RX_HASH_DST_PORT_UDP), EINVAL);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_DST_PORT_UDP |
				  IBV_RX_HASH_IPSEC_SPI), EINVAL);
}

/* Inner headers need tunnel offloads, which this device does not have. */
Test(rss, inner_fields_need_tunnel_offloads)
{
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_INNER |
				  IBV_RX_HASH_SRC_IPV4), EOPNOTSUPP);
}

/* The extended write() CREATE_QP of an RSS QP over t, with the hash request req. */
static int rss_qp_write_errno(struct ibv_rwq_ind_table *t, const struct mlx5_ib_create_qp_rss *req)
{
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct mlx5_ib_create_qp_resp drv;
	} r;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_create_qp core;
		struct mlx5_ib_create_qp_rss drv;
	} c = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP,
			.in_words = sizeof(c.core) / 8, .out_words = sizeof(r.core) / 8,
		},
		.ex = {
			.response = (uintptr_t)&r, .provider_in_words = sizeof(c.drv) / 8,
			.provider_out_words = sizeof(r.drv) / 8,
		},
		.core = {
			.pd_handle = pd->handle, .qp_type = IBV_QPT_RAW_PACKET,
			.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE,
			.rwq_ind_tbl_handle = t->ind_tbl_handle,
		},
		.drv = *req,
	};

	cr_assert_eq(sizeof(c.drv) % 8, 0);
	cr_assert_eq(sizeof(r.drv) % 8, 0);
	return write(ctx->cmd_fd, &c, sizeof(c)) < 0 ? errno : 0;
}

/* libibverbs asks by ioctl(); the write() form of CREATE_QP checks the same. */
Test(rss, the_write_form_checks_the_same)
{
	struct mlx5_ib_create_qp_rss req = {
		.rx_hash_fields_mask = MLX5_RX_HASH_SRC_IPV4,
		.rx_hash_function = MLX5_RX_HASH_FUNC_TOEPLITZ, .rx_key_len = 40,
	};

	cr_assert_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4), EOPNOTSUPP);
	cr_expect_eq(rss_qp_write_errno(two, &req), EOPNOTSUPP);
	req.rx_key_len = 16;
	cr_expect_eq(rss_qp_write_errno(two, &req), EINVAL);
	req.rx_key_len = 40;
	req.rx_hash_fields_mask |= MLX5_RX_HASH_SRC_IPV6;
	cr_expect_eq(rss_qp_write_errno(two, &req), EINVAL);
	req.rx_hash_fields_mask = MLX5_RX_HASH_SRC_IPV4;
	req.comp_mask = 1;
	cr_expect_eq(rss_qp_write_errno(two, &req), EOPNOTSUPP);
}
