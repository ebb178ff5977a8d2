/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RSS raw packet QPs (ibv_create_qp_ex() with IBV_QP_INIT_ATTR_RX_HASH
 * over an indirection table of WQs): the errno mlx5's
 * create_rss_raw_qp_tir() gives each request a ConnectX refuses, the QP
 * one it takes makes, and the RSS caps.  Their traffic is
 * tests/emu/device/test_rss.c's.
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

/* What a ConnectX takes makes a QP: number 0, no queues, its table held. */
Test(rss, a_request_mlx5_takes_makes_a_qp)
{
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4 |
				  IBV_RX_HASH_DST_IPV4), 0);
	cr_expect_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV6 |
				  IBV_RX_HASH_DST_PORT_UDP | IBV_RX_HASH_SRC_PORT_UDP), 0);
	/* no fields: a steering entry, over a table of one WQ only */
	cr_expect_eq(rss_qp_errno(one, TOEPLITZ, 40, 0), 0);
}

/*
 * The QP holds its table and its PD; it has no state to move or query
 * (libmlx5 answers EOPNOTSUPP itself, the kernel's mlx5 ENOSYS).
 */
Test(rss, the_qp_holds_its_table_and_has_no_state)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd, .rwq_ind_tbl = two,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = TOEPLITZ, .rx_hash_key_len = 40,
				  .rx_hash_key = key, .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_init_attr qia;
	struct ib_uverbs_query_qp_resp qr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_qp cmd;
	} q = {
		.hdr = { .command = IB_USER_VERBS_CMD_QUERY_QP, .in_words = sizeof(q) / 4,
			 .out_words = sizeof(qr) / 4 },
		.cmd = { .response = (uintptr_t)&qr, .attr_mask = IBV_QP_STATE },
	};
	struct ibv_qp *qp;

	cr_assert_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4), 0);
	qp = ibv_create_qp_ex(ctx, &ia);
	cr_assert(qp, "%s", strerror(errno));
	q.cmd.qp_handle = qp->handle;
	cr_expect_eq(qp->qp_num, 0);
	cr_expect_eq(ibv_destroy_rwq_ind_table(two), EBUSY);
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_expect_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), EOPNOTSUPP);
	cr_expect_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &qia), EOPNOTSUPP);
	cr_expect_eq(write(ctx->cmd_fd, &q, sizeof(q)), -1);
	cr_expect_eq(errno, ENOSYS, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/* The RSS caps of a ConnectX-6 without tunnel offloads. */
Test(rss, caps)
{
	struct ibv_device_attr_ex ax;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	cr_expect_eq(ax.rss_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	cr_expect_eq(ax.rss_caps.max_rwq_indirection_tables, 1u << 20);
	cr_expect_eq(ax.rss_caps.max_rwq_indirection_table_size, 1u << 11);
	cr_expect_eq(ax.rss_caps.rx_hash_function, IBV_RX_HASH_FUNC_TOEPLITZ);
	cr_expect_eq(ax.rss_caps.rx_hash_fields_mask, 0xff, "IPv4/IPv6 addresses, TCP/UDP ports");
	cr_expect_eq(ax.max_wq_type_rq, 1u << 23);
}

/*
 * A table takes at most 2^log_max_rqt_size entries, the
 * max_rwq_indirection_table_size the caps report: mlx5_ib_create_rwq_ind_table()
 * refuses more (EINVAL), though uverbs would take up to 2^13.
 */
Test(rss, a_table_past_the_caps_size_is_refused)
{
	static struct ibv_wq *ents[1u << 12];
	struct ibv_device_attr_ex ax;
	struct ibv_rwq_ind_table *t;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
		ents[i] = wqs[i % 2];
	t = ibv_create_rwq_ind_table(ctx, &(struct ibv_rwq_ind_table_init_attr){
		.log_ind_tbl_size = 11, .ind_tbl = ents });
	cr_assert(t, "%s", strerror(errno));
	cr_expect_eq(1u << 11, ax.rss_caps.max_rwq_indirection_table_size);
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
	t = ibv_create_rwq_ind_table(ctx, &(struct ibv_rwq_ind_table_init_attr){
		.log_ind_tbl_size = 12, .ind_tbl = ents });
	cr_expect_null(t, "2^12 entries, past the caps");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	if (t)
		cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
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

/*
 * The extended write() CREATE_QP of an RSS QP over t, with the hash request
 * req; the QP it makes, destroyed by write() too.
 */
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
	struct ib_uverbs_destroy_qp_resp dr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp cmd;
	} d = {
		.hdr = { .command = IB_USER_VERBS_CMD_DESTROY_QP,
			 .in_words = sizeof(d) / 4, .out_words = sizeof(dr) / 4 },
		.cmd = { .response = (uintptr_t)&dr },
	};

	if (write(ctx->cmd_fd, &c, sizeof(c)) < 0)
		return errno;
	d.cmd.qp_handle = r.core.base.qp_handle;
	cr_assert_eq(write(ctx->cmd_fd, &d, sizeof(d)), (ssize_t)sizeof(d), "%s", strerror(errno));
	return 0;
}

/* libibverbs asks by ioctl(); the write() form of CREATE_QP checks the same. */
Test(rss, the_write_form_checks_the_same)
{
	struct mlx5_ib_create_qp_rss req = {
		.rx_hash_fields_mask = MLX5_RX_HASH_SRC_IPV4,
		.rx_hash_function = MLX5_RX_HASH_FUNC_TOEPLITZ, .rx_key_len = 40,
	};

	cr_assert_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4), 0);
	cr_expect_eq(rss_qp_write_errno(two, &req), 0);
	req.rx_key_len = 16;
	cr_expect_eq(rss_qp_write_errno(two, &req), EINVAL);
	req.rx_key_len = 40;
	req.rx_hash_fields_mask |= MLX5_RX_HASH_SRC_IPV6;
	cr_expect_eq(rss_qp_write_errno(two, &req), EINVAL);
	req.rx_hash_fields_mask = MLX5_RX_HASH_SRC_IPV4;
	req.comp_mask = 1;
	cr_expect_eq(rss_qp_write_errno(two, &req), EOPNOTSUPP);
}

/* Closing the device with an RSS QP alive ends it before its table, WQs and PD. */
Test(rss, close_with_an_rss_qp_alive)
{
	struct ibv_context *c2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct ibv_cq *cq2 = ibv_create_cq(c2, 16, NULL, NULL, 0);
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
				       .pd = pd2, .cq = cq2 };
	struct ibv_wq *w = ibv_create_wq(c2, &wa);
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(c2,
		&(struct ibv_rwq_ind_table_init_attr){ .log_ind_tbl_size = 0, .ind_tbl = &w });
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd2, .rwq_ind_tbl = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = TOEPLITZ, .rx_hash_key_len = 40,
				  .rx_hash_key = key },
	};

	cr_assert(pd2 && cq2 && w && t, "%s", strerror(errno));
	cr_assert_eq(rss_qp_errno(two, TOEPLITZ, 40, IBV_RX_HASH_SRC_IPV4), 0);
	cr_assert(ibv_create_qp_ex(c2, &ia), "%s", strerror(errno));
	cr_assert_eq(ibv_close_device(c2), 0);
}
