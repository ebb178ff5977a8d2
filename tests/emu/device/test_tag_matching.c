/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hardware tag matching (Documentation/tag_matching.md of rdma-core): the
 * TM caps, TM SRQs and the command QP libmlx5 creates for each, through
 * libibverbs and libmlx5 alone.
 */
#include <infiniband/tm_types.h>

#include "emu_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq_ex *cq;	/* a TM SRQ needs an extended CQ (libmlx5) */
static struct ibv_device_attr_ex dattr;

static void setup(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO,
	};

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq_ex(ctx, &ca);
	cr_assert(pd && cq, "%s", strerror(errno));
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &dattr), 0);
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(tm, .init = setup, .fini = teardown);

static struct ibv_srq *tm_srq(uint32_t max_num_tags, uint32_t max_ops, struct ibv_cq *on)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = pd,
		.cq = on,
		.tm_cap = { .max_num_tags = max_num_tags, .max_ops = max_ops },
	};

	return ibv_create_srq_ex(ctx, &sa);
}

/* mlx5_ib_query_device() from log_tag_matching_list_sz 7 and log_max_qp_sz 15 */
Test(tm, caps)
{
	cr_assert_eq(dattr.tm_caps.max_num_tags, 127);
	cr_assert_eq(dattr.tm_caps.max_ops, 32768, "the SQ depth of the command QP");
	cr_assert_eq(dattr.tm_caps.max_sge, 1);
	cr_assert_eq(dattr.tm_caps.flags, IBV_TM_CAP_RC);
	cr_assert_eq(dattr.tm_caps.max_rndv_hdr_size, 64);
}

Test(tm, create_and_destroy)
{
	struct ibv_srq *srq = tm_srq(dattr.tm_caps.max_num_tags, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_srq_attr a = {};
	uint32_t srqn = 0;

	cr_assert(srq, "%s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(srq, &srqn), 0);
	cr_assert_neq(srqn, 0);
	cr_assert_eq(ibv_query_srq(srq, &a), 0);
	cr_assert_geq(a.max_wr, 64);
	/* the CQ and PD are in use by the SRQ and its command QP */
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), EBUSY);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	/* the smallest list */
	srq = tm_srq(1, 1, ibv_cq_ex_to_cq(cq));
	cr_assert(srq, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

Test(tm, bad_attributes)
{
	struct ibv_cq *plain = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	/* a list of 2^(ilog2(n) + 1) entries must fit the device's 128 */
	errno = 0;
	cr_assert_null(tm_srq(dattr.tm_caps.max_num_tags + 1, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tm_srq(4096, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	/* libibverbs: no list */
	errno = 0;
	cr_assert_null(tm_srq(0, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	/* libmlx5: TM completions are read from an extended CQ only */
	cr_assert(plain);
	errno = 0;
	cr_assert_null(tm_srq(16, 16, plain));
	cr_assert_eq(errno, EINVAL);
	/*
	 * more operations than the command QP's SQ can hold (libmlx5's
	 * unwinding of the SRQ does not keep create_qp()'s errno)
	 */
	cr_assert_null(tm_srq(16, dattr.tm_caps.max_ops + 1, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(ibv_destroy_cq(plain), 0);
}

/* An RC QP receives through a TM SRQ; the SRQ is busy while it does */
Test(tm, qp_on_tm_srq)
{
	struct ibv_srq *srq = tm_srq(32, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_qp_init_attr qa = {
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq), .srq = srq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp;

	cr_assert(srq, "%s", strerror(errno));
	qp = ibv_create_qp(pd, &qa);
	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/*
 * On RoCE no TM SRQ can be made: libmlx5 connects the command QP to itself
 * by LID alone, and mlx5_set_path() refuses a RoCE path without a GRH.
 */
TestSuite(tm_roce, .init = setup, .fini = teardown);

Test(tm_roce, no_command_qp_without_grh)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		cr_skip_test("run by tm::on_roce");
	cr_assert_eq(dattr.tm_caps.max_num_tags, 127, "the caps are the device's");
	cr_assert_null(tm_srq(16, 16, ibv_cq_ex_to_cq(cq)));
}

Test(tm, on_roce, .timeout = 60)
{
	et_rerun_on_roce("tm_roce/*");
}
