/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Raw packet (raw Ethernet) QPs as mlx5's create_raw_packet_qp() makes
 * them: CAP_NET_RAW, the SQ in a buffer of its own, the SQ/TIS and RQ/TIR
 * numbers mlx5dv_init_obj() reports, the states a raw QP moves through;
 * and the work queues and indirection tables an RSS QP uses
 * (ibv_create_wq(), ibv_create_rwq_ind_table(); RSS QPs themselves:
 * test_rss.c).
 */
#include <linux/capability.h>
#include <sys/syscall.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "emu_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert(pd && cq);
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(raw_qp, .init = setup, .fini = teardown);

/*
 * Whether this test's process has a capability in its effective set; with
 * `drop`, it has it no more.
 */
static bool cap_effective(unsigned cap, bool drop)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	bool had;

	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	had = d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
	if (drop) {
		d[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
		cr_assert_eq(syscall(SYS_capset, &h, d), 0, "%s", strerror(errno));
	}
	return had;
}

static struct ibv_qp *raw_qp(uint32_t send_wr, uint32_t recv_wr, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = recv_wr ? 1 : 0 },
	};

	return ibv_create_qp(pd, &ia);
}

static struct mlx5dv_qp raw_dv(struct ibv_qp *qp)
{
	struct mlx5dv_qp dv = { .comp_mask = MLX5DV_QP_MASK_RAW_QP_HANDLES };
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_assert_eq(dv.comp_mask, MLX5DV_QP_MASK_RAW_QP_HANDLES);
	return dv;
}

/*
 * uverbs refuses a process without CAP_NET_RAW (EPERM), through
 * ibv_create_qp() and ibv_create_qp_ex(), before it looks at the objects.
 */
Test(raw_qp, needs_cap_net_raw)
{
	struct ibv_qp_init_attr_ex iax = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	if (!cap_effective(CAP_NET_RAW, true))
		cr_log_info("not run with CAP_NET_RAW: the refusal alone is checked");
	errno = 0;
	cr_assert_null(raw_qp(16, 16, NULL));
	cr_expect_eq(errno, EPERM, "%s", strerror(errno));
	errno = 0;
	cr_assert_null(ibv_create_qp_ex(ctx, &iax));
	cr_expect_eq(errno, EPERM, "%s", strerror(errno));
}

/*
 * A QP that sends and receives: an SQ (and its TIS) and an RQ (and its
 * TIR); the QP's number is the SQ's.  libmlx5 put the SQ in a buffer of
 * its own, which the emulator pinned apart from the RQ.
 */
Test(raw_qp, create_and_handles)
{
	struct ibv_qp *qp;
	struct mlx5dv_qp dv;

	if (!cap_effective(CAP_NET_RAW, false))
		cr_skip_test("needs CAP_NET_RAW (root)");
	qp = raw_qp(64, 32, NULL);
	cr_assert(qp, "%s", strerror(errno));
	dv = raw_dv(qp);
	cr_expect_eq(dv.sqn, qp->qp_num);
	cr_expect(dv.tisn && dv.rqn && dv.tirn);
	cr_expect_geq(dv.sq.wqe_cnt, 64);
	cr_expect_geq(dv.rq.wqe_cnt, 32);
	cr_expect(dv.sq.buf && dv.rq.buf);
	/* two buffers: the SQ is not behind the RQ as on other QPs */
	cr_expect_neq((uint8_t *)dv.sq.buf,
		      (uint8_t *)dv.rq.buf + (size_t)dv.rq.wqe_cnt * dv.rq.stride);
	cr_expect_eq(et_qp_state(qp), IBV_QPS_RESET);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/*
 * Without an RQ of its own (on an SRQ) there is no RQ or TIR, and the
 * response says so by its comp_mask: libmlx5 leaves the numbers 0.
 */
Test(raw_qp, no_rq_no_tir)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct mlx5dv_qp dv;

	if (!cap_effective(CAP_NET_RAW, false))
		cr_skip_test("needs CAP_NET_RAW (root)");
	srq = ibv_create_srq(pd, &sa);
	cr_assert(srq);
	qp = raw_qp(16, 0, srq);
	cr_assert(qp, "%s", strerror(errno));
	dv = raw_dv(qp);
	cr_expect_eq(dv.sqn, qp->qp_num);
	cr_expect_neq(dv.tisn, 0);
	cr_expect_eq(dv.rqn, 0);
	cr_expect_eq(dv.tirn, 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

static int move(struct ibv_qp *qp, enum ibv_qp_state st, int extra_mask)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { .qp_state = st, .port_num = 1, .sq_psn = 1,
				 .pkey_index = 0, .qkey = 1 };

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	a.ah_attr.dlid = pa.lid;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | extra_mask);
}

/*
 * ib_modify_qp_is_ok()'s column for raw packet QPs: the port into INIT
 * and nothing else of the IB attributes (a P_Key, an address, PSNs are
 * EINVAL); RTR and RTS need nothing.  RESET forgets the port.
 */
Test(raw_qp, states)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_qp *qp;

	if (!cap_effective(CAP_NET_RAW, false))
		cr_skip_test("needs CAP_NET_RAW (root)");
	qp = raw_qp(16, 16, NULL);
	cr_assert(qp, "%s", strerror(errno));
	cr_expect_eq(move(qp, IBV_QPS_INIT, 0), EINVAL, "INIT needs the port");
	cr_expect_eq(move(qp, IBV_QPS_INIT, IBV_QP_PORT | IBV_QP_PKEY_INDEX), EINVAL);
	cr_expect_eq(move(qp, IBV_QPS_INIT, IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	cr_assert_eq(move(qp, IBV_QPS_INIT, IBV_QP_PORT), 0);
	cr_expect_eq(move(qp, IBV_QPS_RTR, IBV_QP_AV), EINVAL);
	cr_expect_eq(move(qp, IBV_QPS_RTR, IBV_QP_PATH_MTU), EINVAL);
	cr_assert_eq(move(qp, IBV_QPS_RTR, 0), 0);
	cr_expect_eq(move(qp, IBV_QPS_RTS, IBV_QP_SQ_PSN), EINVAL);
	cr_assert_eq(move(qp, IBV_QPS_RTS, 0), 0);
	cr_assert_eq(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT, &qia), 0);
	cr_expect_eq(qa.qp_state, IBV_QPS_RTS);
	cr_expect_eq(qa.port_num, 1);
	cr_assert_eq(move(qp, IBV_QPS_ERR, 0), 0);
	cr_assert_eq(move(qp, IBV_QPS_RESET, 0), 0);
	cr_assert_eq(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PORT, &qia), 0);
	cr_expect_eq(qa.port_num, 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/*
 * ibv_modify_qp_rate_limit() in RTS takes an entry of the rate table for
 * a rate within the packet pacing caps (EINVAL outside them), 0 lets it
 * go; before RTS the rate is not a legal attribute (EINVAL).
 */
Test(raw_qp, rate_limit)
{
	struct ibv_device_attr_ex ax;
	struct ibv_qp_rate_limit_attr rl = { 0 };
	struct ibv_qp *qp;

	if (!cap_effective(CAP_NET_RAW, false))
		cr_skip_test("needs CAP_NET_RAW (root)");
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	cr_assert(ax.packet_pacing_caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET));
	qp = raw_qp(16, 16, NULL);
	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(move(qp, IBV_QPS_INIT, IBV_QP_PORT), 0);
	rl.rate_limit = ax.packet_pacing_caps.qp_rate_limit_min;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), EINVAL, "in INIT");
	cr_assert_eq(move(qp, IBV_QPS_RTR, 0), 0);
	cr_assert_eq(move(qp, IBV_QPS_RTS, 0), 0);
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	rl.rate_limit = ax.packet_pacing_caps.qp_rate_limit_max + 1;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), EINVAL, "past the largest rate");
	rl.rate_limit = ax.packet_pacing_caps.qp_rate_limit_max;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	rl.rate_limit = 0;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), 0, "no limit");
	rl.rate_limit = ax.packet_pacing_caps.qp_rate_limit_min;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/*
 * The rate limit's mlx5 request (struct mlx5_ib_modify_qp), written by
 * hand as mlx5_ib_modify_qp() reads it: up to ece_options or EINVAL, bytes
 * past it zero, no comp_mask, the burst's reserved half zero (EOPNOTSUPP);
 * a burst or typical packet size without a rate EINVAL.
 */
Test(raw_qp, rate_limit_request)
{
	struct ib_uverbs_ex_modify_qp_resp r;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_modify_qp core;
		struct mlx5_ib_modify_qp drv;
		uint64_t past;
	} c = { .hdr = { .command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				    IB_USER_VERBS_EX_CMD_MODIFY_QP,
			 .in_words = sizeof(c.core) / 8, .out_words = sizeof(r) / 8 },
		.ex = { .response = (uintptr_t)&r, .provider_in_words = sizeof(c.drv) / 8 },
		.core = { .base.attr_mask = IBV_QP_RATE_LIMIT, .rate_limit = 1000 },
		.drv = { .burst_info = { .max_burst_sz = 4000, .typical_pkt_sz = 1000 } } };
	size_t len = sizeof(c) - sizeof(c.past);
	struct ibv_qp *qp;

	_Static_assert(sizeof(c.drv) == 16, "up to ece_options");
	if (!cap_effective(CAP_NET_RAW, false))
		cr_skip_test("needs CAP_NET_RAW (root)");
	qp = raw_qp(16, 16, NULL);
	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(move(qp, IBV_QPS_INIT, IBV_QP_PORT), 0);
	cr_assert_eq(move(qp, IBV_QPS_RTR, 0), 0);
	cr_assert_eq(move(qp, IBV_QPS_RTS, 0), 0);
	c.core.base.qp_handle = qp->handle;
	cr_expect_eq(write(ctx->cmd_fd, &c, len), (ssize_t)len, "%s", strerror(errno));
	c.core.rate_limit = 0;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, len), -1);
	cr_expect_eq(errno, EINVAL, "a burst without a rate");
	c.core.rate_limit = 1000;
	c.drv.comp_mask = 1;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, len), -1);
	cr_expect_eq(errno, EOPNOTSUPP, "comp_mask");
	c.drv.comp_mask = 0;
	c.drv.burst_info.reserved = 1;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, len), -1);
	cr_expect_eq(errno, EOPNOTSUPP, "burst_info.reserved");
	c.drv.burst_info.reserved = 0;
	c.ex.provider_in_words = 1;		/* short of ece_options */
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, len - 8), -1);
	cr_expect_eq(errno, EINVAL, "a short request");
	c.ex.provider_in_words = 3;		/* past the struct: zeros only */
	c.past = 1;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, sizeof(c)), -1);
	cr_expect_eq(errno, EOPNOTSUPP, "non-zero bytes past the request");
	c.past = 0;
	cr_expect_eq(write(ctx->cmd_fd, &c, sizeof(c)), (ssize_t)sizeof(c), "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

/* ---- work queues and indirection tables -------------------------------- */

static struct ibv_wq *make_wq(void)
{
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 16, .max_sge = 1,
				       .pd = pd, .cq = cq };
	struct ibv_wq *wq = ibv_create_wq(ctx, &wa);

	cr_assert(wq, "create_wq: %s", strerror(errno));
	return wq;
}

static int wq_move(struct ibv_wq *wq, enum ibv_wq_state st)
{
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = st };

	return ibv_modify_wq(wq, &a);
}

/*
 * A WQ is an RQ of the firmware: RST->RDY, RDY->ERR, back to RST; RST->ERR
 * and ERR->RDY are refused (EINVAL), as is a current state that is not
 * the WQ's.  Two WQs get two numbers.
 */
Test(raw_qp, wq_states)
{
	struct ibv_wq *wq = make_wq(), *wq2 = make_wq();
	/* libmlx5 checks an asserted state itself only on the way to RDY */
	struct ibv_wq_attr to_err = { .attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE,
				      .wq_state = IBV_WQS_ERR, .curr_wq_state = IBV_WQS_RDY };

	cr_expect_neq(wq->wq_num, wq2->wq_num);
	cr_expect_eq(wq_move(wq, IBV_WQS_ERR), EINVAL);
	cr_expect_eq(ibv_modify_wq(wq, &to_err), EINVAL, "it is in RST, not RDY");
	cr_assert_eq(wq_move(wq, IBV_WQS_RDY), 0);
	cr_assert_eq(wq_move(wq, IBV_WQS_RDY), 0);
	cr_assert_eq(ibv_modify_wq(wq, &to_err), 0);
	cr_expect_eq(wq_move(wq, IBV_WQS_RDY), EINVAL);
	cr_assert_eq(wq_move(wq, IBV_WQS_RESET), 0);
	cr_assert_eq(ibv_destroy_wq(wq), 0);
	cr_assert_eq(ibv_destroy_wq(wq2), 0);
}

/*
 * A table holds its WQs (EBUSY to destroy them), the CQ and PD are held by
 * the WQs; a table past IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE is EINVAL.  An
 * RSS QP over the table is EOPNOTSUPP: no RSS on this device (rss_caps 0).
 */
Test(raw_qp, ind_table_holds_its_wqs)
{
	struct ibv_wq *wqs[2] = { make_wq(), make_wq() };
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 1, .ind_tbl = wqs };
	struct ibv_rwq_ind_table *t;
	static uint8_t key[40];
	static struct ibv_wq *many[2u << IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE];
	struct ibv_qp_init_attr_ex iax = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(key), .rx_hash_key = key,
				  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 },
	};
	struct ibv_device_attr_ex ax;

	t = ibv_create_rwq_ind_table(ctx, &ta);
	cr_assert(t, "%s", strerror(errno));
	cr_expect_neq(t->ind_tbl_num, 0);
	cr_expect_eq(ibv_destroy_wq(wqs[0]), EBUSY);
	cr_expect_eq(ibv_destroy_cq(cq), EBUSY);
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	cr_expect_eq(ax.rss_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	if (cap_effective(CAP_NET_RAW, false)) {
		struct ibv_qp *rss;

		iax.rwq_ind_tbl = t;
		rss = ibv_create_qp_ex(ctx, &iax);
		cr_assert(rss, "%s", strerror(errno));
		cr_expect_eq(ibv_destroy_rwq_ind_table(t), EBUSY, "an RSS QP holds it");
		cr_assert_eq(ibv_destroy_qp(rss), 0);
	}
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
	for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
		many[i] = wqs[0];
	ta.log_ind_tbl_size = IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE + 1;
	ta.ind_tbl = many;
	errno = 0;
	cr_expect_null(ibv_create_rwq_ind_table(ctx, &ta));
	cr_expect_neq(errno, 0);
	cr_assert_eq(ibv_destroy_wq(wqs[0]), 0);
	cr_assert_eq(ibv_destroy_wq(wqs[1]), 0);
}

/*
 * uverbs answers a comp_mask in DESTROY_WQ and DESTROY_RWQ_IND_TBL with
 * EOPNOTSUPP (ib_uverbs_ex_destroy_wq(), ..._rwq_ind_table()), and the
 * object stays.
 */
Test(raw_qp, destroy_comp_mask_is_eopnotsupp)
{
	struct ibv_wq *wq = make_wq();
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0, .ind_tbl = &wq };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(ctx, &ta);
	struct ib_uverbs_ex_destroy_wq_resp r;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_destroy_rwq_ind_table core;
	} dt = { .hdr = { .command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				     IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL,
			  .in_words = sizeof(dt.core) / 8 } };
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_destroy_wq core;
	} dw = { .hdr = { .command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				     IB_USER_VERBS_EX_CMD_DESTROY_WQ,
			  .in_words = sizeof(dw.core) / 8, .out_words = sizeof(r) / 8 } };

	cr_assert(t, "%s", strerror(errno));
	dt.core.comp_mask = 1;
	dt.core.ind_tbl_handle = t->ind_tbl_handle;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &dt, sizeof(dt)), -1);
	cr_expect_eq(errno, EOPNOTSUPP, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
	dw.ex.response = (uintptr_t)&r;
	dw.core.comp_mask = 1;
	dw.core.wq_handle = wq->handle;
	errno = 0;
	cr_expect_eq(write(ctx->cmd_fd, &dw, sizeof(dw)), -1);
	cr_expect_eq(errno, EOPNOTSUPP, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_wq(wq), 0);
}
