/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hardware tag matching (Documentation/tag_matching.md of rdma-core): the
 * TM caps, TM SRQs and the command QP libmlx5 creates for each, the tag
 * list operations of ibv_post_srq_ops(), through libibverbs and libmlx5
 * alone.
 */
#include <infiniband/tm_types.h>

#include "dev_test.h"

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

/* One completion of the TM CQ, as ibv_start_poll() and its readers give it. */
struct tm_wc {
	uint64_t		wr_id;
	enum ibv_wc_status	status;
	enum ibv_wc_opcode	opcode;
	unsigned		wc_flags;
	uint32_t		byte_len;
	struct ibv_wc_tm_info	tm;
};

static void tm_poll(struct tm_wc *wc)
{
	struct ibv_poll_cq_attr pa = {};
	uint64_t end = dt_now_ms() + 5000;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT)
		cr_assert_lt(dt_now_ms(), end, "no completion");
	cr_assert_eq(ret, 0);
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->wc_flags = ibv_wc_read_wc_flags(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	memset(&wc->tm, 0, sizeof(wc->tm));
	if (wc->wc_flags & IBV_WC_TM_MATCH)
		ibv_wc_read_tm_info(cq, &wc->tm);
	ibv_end_poll(cq);
}

static void tm_no_more(void)
{
	struct ibv_poll_cq_attr pa = {};

	usleep(20000);
	cr_assert_eq(ibv_start_poll(cq, &pa), ENOENT, "an unexpected completion");
}

/* Post one list operation; returns ibv_post_srq_ops()'s answer. */
static int tm_op(struct ibv_srq *srq, struct ibv_ops_wr *wr)
{
	struct ibv_ops_wr *bad = NULL;

	return ibv_post_srq_ops(srq, wr, &bad);
}

static uint32_t tm_add(struct ibv_srq *srq, uint64_t tag, uint64_t mask, struct ibv_sge *sge,
		       uint64_t recv_id, int flags, uint32_t unexp)
{
	struct ibv_ops_wr wr = {
		.wr_id = 0xadd0000 + recv_id, .opcode = IBV_WR_TAG_ADD, .flags = flags,
		.tm = { .unexpected_cnt = unexp,
			.add = { .recv_wr_id = recv_id, .sg_list = sge, .num_sge = sge ? 1 : 0,
				 .tag = tag, .mask = mask } },
	};

	cr_assert_eq(tm_op(srq, &wr), 0);
	return wr.tm.handle;
}

static void tm_del(struct ibv_srq *srq, uint32_t handle, uint64_t id, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = id, .opcode = IBV_WR_TAG_DEL, .flags = flags, .tm = { .handle = handle },
	};

	cr_assert_eq(tm_op(srq, &wr), 0);
}

/* ADD, DEL and SYNC complete on the SRQ's CQ as libmlx5 decodes them */
Test(tm, list_operations)
{
	struct ibv_srq *srq = tm_srq(16, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_ops_wr sync = { .wr_id = 77, .opcode = IBV_WR_TAG_SYNC,
				   .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC };
	char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr ? mr->lkey : 0 };
	struct tm_wc wc;
	uint32_t h[2];

	cr_assert(srq && mr, "%s", strerror(errno));
	h[0] = tm_add(srq, 0x1111, ~0ull, &sge, 1, IBV_OPS_SIGNALED, 0);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
	cr_assert_eq(wc.wr_id, 0xadd0001);
	cr_assert_eq(wc.wc_flags & IBV_WC_TM_SYNC_REQ, 0, "in step: 0 unexpected both sides");
	/* unsignaled: no completion; an empty buffer is allowed */
	h[1] = tm_add(srq, 0x2222, ~0ull, NULL, 2, 0, 0);
	cr_assert_neq(h[0], h[1]);
	tm_no_more();
	tm_del(srq, h[1], 5, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_DEL);
	cr_assert_eq(wc.wr_id, 5);
	tm_del(srq, h[0], 6, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 6);

	/*
	 * software says 3 unexpected messages were handled, the device saw
	 * none: the entry added with that count completes asking for a sync
	 */
	sync.tm.unexpected_cnt = 3;
	cr_assert_eq(tm_op(srq, &sync), 0);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_SYNC);
	cr_assert_eq(wc.wr_id, 77);
	h[0] = tm_add(srq, 0x3333, ~0ull, &sge, 3, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 3);
	tm_poll(&wc);
	cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
	cr_assert(wc.wc_flags & IBV_WC_TM_SYNC_REQ,
		  "the device's count (0) is not the entry's (3): sync asked");
	/* in step again */
	h[1] = tm_add(srq, 0x4444, ~0ull, &sge, 4, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 0);
	tm_poll(&wc);
	cr_assert_eq(wc.wc_flags & IBV_WC_TM_SYNC_REQ, 0);
	tm_del(srq, h[0], 8, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	tm_del(srq, h[1], 9, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);

	/* removing an entry that is not in the list fails in the CQE (last:
	 * libmlx5 then frees its entry once more) */
	tm_del(srq, h[1], 10, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_TM_ERR);
	cr_assert_eq(wc.opcode, IBV_WC_TM_DEL);
	cr_assert_eq(wc.wr_id, 10);
	tm_no_more();
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/*
 * A full list: libmlx5 refuses the next ADD itself; emptied, the list takes
 * max_num_tags entries again, the device following libmlx5's free list.
 */
Test(tm, list_full)
{
	enum { N = 31 };
	struct ibv_srq *srq = tm_srq(N, 64, ibv_cq_ex_to_cq(cq));
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD };
	uint32_t h[N];
	struct tm_wc wc;

	cr_assert(srq, "%s", strerror(errno));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++)
			h[i] = tm_add(srq, (uint64_t)i, ~0ull, NULL, (uint64_t)i,
				      i == N - 1 ? IBV_OPS_SIGNALED : 0, 0);
		cr_assert_eq(tm_op(srq, &wr), ENOMEM, "list full");
		tm_poll(&wc);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "round %d: %d", round, wc.status);
		cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
		/* removed in another order than added */
		for (int i = 0; i < N; i++) {
			tm_del(srq, h[(i * 7) % N], (uint64_t)i, IBV_OPS_SIGNALED);
			tm_poll(&wc);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "round %d del %d", round, i);
		}
	}
	tm_no_more();
	cr_assert_eq(ibv_destroy_srq(srq), 0);
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
