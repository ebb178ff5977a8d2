/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Queue pairs: creation, mlx5dv_init_obj, the state machine, multicast,
 * async events.
 */
#include <poll.h>

#include "emu_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint16_t lid;

static void setup(void)
{
	struct ibv_port_attr pa;

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cr_assert(pd && cq);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	lid = pa.lid;
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(qp, .init = setup, .fini = teardown);

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = srq ? 0 : 32,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2,
			 .max_inline_data = 64 },
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert(qp, "create_qp(%d): %s", type, strerror(errno));
	return qp;
}

Test(qp, create_types_and_dv)
{
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp *qp = make_qp(types[i], NULL);
		struct mlx5dv_qp dv = { .comp_mask = 0 };
		struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };

		cr_assert_neq(qp->qp_num, 0);
		cr_assert_eq(et_qp_state(qp), IBV_QPS_RESET);
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
		cr_assert(dv.dbrec && dv.sq.buf && dv.rq.buf && dv.bf.reg);
		cr_assert_geq(dv.sq.wqe_cnt, 64);
		cr_assert_eq(dv.sq.stride, 64);
		cr_assert_geq(dv.rq.wqe_cnt, 32);
		cr_assert_geq(dv.rq.stride, 32);
		/* the bfreg is in a mapped UAR page: writable */
		*(volatile uint64_t *)dv.bf.reg = 0;
		cr_assert_eq(ibv_destroy_qp(qp), 0);
	}
}

Test(qp, distinct_qpns_and_bfregs)
{
	struct ibv_qp *a = make_qp(IBV_QPT_RC, NULL), *b = make_qp(IBV_QPT_RC, NULL);
	struct mlx5dv_qp da = { .comp_mask = 0 }, db = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = a, .out = &da } };

	cr_assert_neq(a->qp_num, b->qp_num);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	o.qp.in = b;
	o.qp.out = &db;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	/* the first QPs get dedicated low-latency BlueFlame registers */
	cr_assert_neq(da.bf.reg, db.bf.reg);
	cr_assert_eq(da.bf.size, 256);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
}

Test(qp, rc_state_machine)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr ia;

	/* RESET -> RTR skips INIT */
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* RESET -> INIT without the access flags */
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT), EINVAL);
	/* an attribute that is not allowed on this transition */
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN),
		     EINVAL);
	/* a port that does not exist */
	a.port_num = 3;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL);
	cr_assert_eq(et_qp_state(qp), IBV_QPS_RESET);

	cr_assert_eq(et_qp_to_rts(qp, 0x4242, lid), 0);
	memset(&a, 0, sizeof(a));
	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_RTS);
	cr_assert_eq(a.dest_qp_num, 0x4242);
	cr_assert_eq(a.rq_psn, 0x123);
	cr_assert_eq(a.sq_psn, 0x456);
	cr_assert_eq(a.path_mtu, IBV_MTU_1024);
	cr_assert_eq(a.ah_attr.dlid, lid);
	cr_assert_eq(a.timeout, 14);
	cr_assert_eq(a.retry_cnt, 7);
	cr_assert_eq(a.max_rd_atomic, 4);
	cr_assert_eq(a.max_dest_rd_atomic, 4);
	cr_assert_eq(a.min_rnr_timer, 12);
	cr_assert_eq(ia.cap.max_send_wr >= 64, 1);

	/* RTS -> RTS may change the access flags, not the destination */
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_DEST_QPN), EINVAL);
	/* RTS -> INIT does not exist */
	a.qp_state = IBV_QPS_INIT;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* SQD: mlx5 has no such transition */
	a.qp_state = IBV_QPS_SQD;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);

	/* anything -> ERR -> RESET -> INIT again */
	a.qp_state = IBV_QPS_ERR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert_eq(et_qp_state(qp), IBV_QPS_ERR);
	a.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert_eq(et_qp_state(qp), IBV_QPS_RESET);
	cr_assert_eq(et_qp_to_rts(qp, 0x99, lid), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(qp, uc_state_machine)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UC, NULL);

	cr_assert_eq(et_qp_to_rts(qp, 7, lid), 0);
	cr_assert_eq(et_qp_state(qp), IBV_QPS_RTS);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(qp, ud_state_machine)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_UD, NULL);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	/* UD needs a Q_Key in INIT */
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT), EINVAL);
	a.qkey = 0x11111111;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL, "needs SQ PSN");
	a.sq_psn = 1;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	cr_assert_eq(et_qp_state(qp), IBV_QPS_RTS);
	/* asserting the current state: right, then wrong */
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_RTS;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	a.cur_qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	/* P_Key index beyond the table (128 entries on the ConnectX-6's IB port) */
	qp = make_qp(IBV_QPT_UD, NULL);
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 128;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

static struct ibv_qp_attr query(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	memset(&a, 0xee, sizeof(a));
	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_MAX_QP_RD_ATOMIC |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH, &ia), 0);
	return a;
}

/*
 * QUERY_QP answers the QP context, as mlx5_ib_query_qp() reads it back,
 * not the attributes MODIFY_QP was given: the access flags the kernel
 * programs (remote ones only; READ and atomic only with responder
 * resources, set_qpc_atomic_flags()), the READ/atomic depths as the
 * powers of two of log_sra_max / log_rra_max (1 before any), a UD QP's
 * MTU of 4096 past RESET, no path of a UD QP, no GRH fields of a path
 * without one.
 */
Test(qp, query_answers_the_context)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	union ibv_gid gid = { .raw = { 0xfe, 0x80, [15] = 7 } };
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp_attr q;
	int all = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	q = query(qp);
	cr_expect_eq(q.max_rd_atomic, 1, "log_sra_max 0 in a fresh context");
	cr_expect_eq(q.max_dest_rd_atomic, 1);
	cr_expect_eq(q.ah_attr.port_num, 0, "no path before a port");

	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	q = query(qp);
	cr_expect_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE,
		     "no responder resources yet: WRITE alone, not 0x%x", q.qp_access_flags);
	cr_expect_eq(q.ah_attr.port_num, 1, "the path's port");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = 0x77;
	a.max_dest_rd_atomic = 3;
	a.min_rnr_timer = 12;
	a.ah_attr = (struct ibv_ah_attr){ .dlid = lid, .sl = 2, .src_path_bits = 0, .port_num = 1,
					   .is_global = 0, .grh = { .dgid = gid, .hop_limit = 9,
								    .traffic_class = 5 } };
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER), 0);
	q = query(qp);
	cr_expect_eq(q.qp_access_flags, all, "the flags given at INIT, now with resources");
	cr_expect_eq(q.max_dest_rd_atomic, 4, "3 rounded up");
	cr_expect_eq(q.path_mtu, IBV_MTU_2048);
	cr_expect_eq(q.ah_attr.dlid, lid);
	cr_expect_eq(q.ah_attr.sl, 2);
	cr_expect_eq(q.ah_attr.is_global, 0);
	cr_expect_eq(q.ah_attr.grh.hop_limit, 0, "a path without a GRH keeps none");
	cr_expect_eq(q.ah_attr.grh.dgid.global.interface_id, 0);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.max_rd_atomic = 5;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC), 0);
	cr_expect_eq(query(qp).max_rd_atomic, 8, "5 rounded up");

	/* RTS -> RTS: the flags are programmed again, with the depth of RTR */
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	q = query(qp);
	cr_expect_eq(q.max_rd_atomic, 8);
	cr_expect_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_READ);
	a.qp_access_flags = all;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
	cr_expect_eq(query(qp).qp_access_flags, all);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	/* UD: the driver's MTU past RESET, no path */
	qp = make_qp(IBV_QPT_UD, NULL);
	cr_expect_eq(query(qp).path_mtu, 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY), 0);
	q = query(qp);
	cr_expect_eq(q.path_mtu, IBV_MTU_4096);
	cr_expect_eq(q.port_num, 1);
	cr_expect_eq(q.ah_attr.port_num, 0, "a UD QP has no path");
	cr_expect_eq(q.qkey, 0x11111111);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(qp, post_through_libmlx5)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);
	static char buf[256];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_r;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad_s;
	struct mlx5dv_qp dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };

	cr_assert(mr);
	cr_assert_eq(et_qp_to_rts(qp, 5, lid), 0);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_assert_eq(ibv_post_recv(qp, &rwr, &bad_r), 0);
	cr_assert_eq(ibv_post_send(qp, &swr, &bad_s), 0);
	/* libmlx5 rang: both producer counters are in the doorbell record */
	cr_assert_eq(be32toh(dv.dbrec[0]), 1);
	cr_assert_eq(be32toh(dv.dbrec[1]), 1);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/*
 * The receive caps come back as the ring libmlx5 made, as the kernel's
 * mlx5_ib_query_qp() reads them: 1000 WRs of 3 SGEs are a ring of 1024
 * WQEs of 64 bytes, four SGEs each (rdma-core tests/utils.py,
 * full_rq_bad_flow(), posts max_recv_wr + 1 and expects ENOMEM).  The
 * send caps are libmlx5's own, the same on create and on query.
 */
static void expect_query_caps(struct ibv_qp *qp, const struct ibv_qp_cap *made,
			      uint32_t recv_wr, uint32_t recv_sge)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	memset(&a, 0xff, sizeof(a));
	memset(&ia, 0xff, sizeof(ia));
	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_CAP, &ia), 0);
	cr_expect_eq(a.cap.max_recv_wr, recv_wr);
	cr_expect_eq(a.cap.max_recv_sge, recv_sge);
	cr_expect_eq(made->max_recv_wr, recv_wr);
	cr_expect_eq(made->max_recv_sge, recv_sge);
	cr_expect_eq(a.cap.max_send_wr, made->max_send_wr);
	cr_expect_eq(a.cap.max_send_sge, made->max_send_sge);
	cr_expect_eq(a.cap.max_inline_data, made->max_inline_data);
	cr_expect_eq(memcmp(&ia.cap, &a.cap, sizeof(a.cap)), 0);
}

Test(qp, query_answers_the_rings)
{
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);

	cr_assert(srq);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = types[i],
			.cap = { .max_send_wr = 10, .max_recv_wr = 1000,
				 .max_send_sge = 1, .max_recv_sge = 3 },
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);

		cr_assert(qp, "create_qp(%d): %s", types[i], strerror(errno));
		cr_expect_geq(ia.cap.max_send_wr, 10);
		cr_expect_eq(ia.cap.max_send_sge, 1);
		expect_query_caps(qp, &ia.cap, 1024, 4);
		cr_assert_eq(ibv_destroy_qp(qp), 0);

		/* on an SRQ the QP has no receive queue: 0 and 0 */
		ia.srq = srq;
		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
		if (types[i] == IBV_QPT_RC) {
			qp = ibv_create_qp(pd, &ia);
			cr_assert(qp, "%s", strerror(errno));
			expect_query_caps(qp, &ia.cap, 0, 0);
			cr_assert_eq(ibv_destroy_qp(qp), 0);
		}
	}
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/*
 * Inline data up to what a WQE of max_sq_desc_sz (the device's
 * max_wqe_sz_sq, 1024 bytes) holds: libmlx5 sizes the WQE and refuses a
 * larger one itself, the kernel takes what it sizes (ib_write_lat -I 800
 * and rdma-core's test_mlx5_mkey create such QPs on a ConnectX).
 */
Test(qp, inline_up_to_the_wqe)
{
	enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = types[i],
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = 800 },
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);

		cr_assert(qp, "create_qp(%d) with 800 inline: %s", types[i], strerror(errno));
		cr_expect_geq(ia.cap.max_inline_data, 800);
		expect_query_caps(qp, &ia.cap, 16, 1);
		cr_assert_eq(ibv_destroy_qp(qp), 0);

		/* more than a 1024-byte WQE holds: libmlx5 refuses it */
		ia.cap.max_inline_data = 1024;
		errno = 0;
		cr_assert_null(ibv_create_qp(pd, &ia));
		cr_expect_eq(errno, EINVAL);
	}
}

Test(qp, busy_dependencies)
{
	struct ibv_qp *qp = make_qp(IBV_QPT_RC, NULL);

	cr_assert_eq(ibv_destroy_cq(cq), EBUSY);
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(qp, bad_create)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 1u << 20, .max_recv_wr = 1 },
		.qp_type = IBV_QPT_RC,
	};

	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_neq(errno, 0);
}

Test(qp, multicast)
{
	struct ibv_qp *ud = make_qp(IBV_QPT_UD, NULL), *rc = make_qp(IBV_QPT_RC, NULL);
	union ibv_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, [15] = 1 } };
	union ibv_gid ucast = { .raw = { 0xfe, 0x80, [15] = 1 } };
	union ibv_gid v4group = { .raw = { [10] = 0xff, 0xff, 239, 1, 2, 3 } };
	union ibv_gid v4host = { .raw = { [10] = 0xff, 0xff, 10, 1, 2, 3 } };

	cr_assert_eq(ibv_attach_mcast(ud, &mgid, 0xc001), 0);
	cr_assert_eq(ibv_attach_mcast(ud, &mgid, 0xc001), 0, "twice is fine");
	cr_assert_eq(ibv_attach_mcast(rc, &mgid, 0xc001), EINVAL, "RC has no multicast");
	cr_assert_eq(ibv_attach_mcast(ud, &ucast, 0xc001), EINVAL, "not a multicast GID");
	cr_assert_eq(ibv_attach_mcast(ud, &mgid, 0x10), EINVAL, "unicast LID");
	/* rdma_is_multicast_addr(): an IPv4-mapped group is one, a host is not */
	cr_assert_eq(ibv_attach_mcast(ud, &v4group, 0xc002), 0);
	cr_assert_eq(ibv_detach_mcast(ud, &v4group, 0xc002), 0);
	cr_assert_eq(ibv_attach_mcast(ud, &v4host, 0xc002), EINVAL, "IPv4 unicast");
	/* attached QPs cannot be destroyed */
	cr_assert_eq(ibv_destroy_qp(ud), EBUSY);
	cr_assert_eq(ibv_detach_mcast(ud, &mgid, 0xc001), 0);
	cr_assert_eq(ibv_detach_mcast(ud, &mgid, 0xc001), EINVAL, "not attached");
	cr_assert_eq(ibv_destroy_qp(ud), 0);
	cr_assert_eq(ibv_destroy_qp(rc), 0);
}

/*
 * A group holds max_mcast_qp_attach QPs of a device, across its contexts;
 * one more is ENOMEM (the firmware's "limits exceeded").  Another group,
 * or a member attached again (also under another LID), takes no place.
 */
Test(qp, multicast_group_is_bounded)
{
	union ibv_gid mgid = { .raw = { 0xff, 0x12, 0x40, 0x1b, [15] = 2 } };
	union ibv_gid other = { .raw = { 0xff, 0x12, 0x40, 0x1b, [15] = 3 } };
	struct ibv_device_attr da;
	struct ibv_context *ctx2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx2);
	struct ibv_cq *cq2 = ibv_create_cq(ctx2, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq2, .recv_cq = cq2, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp **qp;
	int n;

	cr_assert(pd2 && cq2);
	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	n = da.max_mcast_qp_attach;
	cr_assert_gt(n, 0);
	qp = calloc((size_t)n + 1, sizeof(*qp));
	cr_assert(qp);
	/* half in a second context of the device: the table is the HCA's */
	for (int i = 0; i <= n; i++) {
		qp[i] = i % 2 ? ibv_create_qp(pd2, &ia) : make_qp(IBV_QPT_UD, NULL);
		cr_assert(qp[i], "QP %d: %s", i, strerror(errno));
	}
	for (int i = 0; i < n; i++)
		cr_assert_eq(ibv_attach_mcast(qp[i], &mgid, 0xc003), 0, "QP %d", i);
	cr_expect_eq(ibv_attach_mcast(qp[n], &mgid, 0xc003), ENOMEM, "one past the limit");
	cr_expect_eq(ibv_attach_mcast(qp[0], &mgid, 0xc003), 0, "a member again");
	cr_expect_eq(ibv_attach_mcast(qp[0], &mgid, 0xc004), 0, "a member under another LID");
	cr_expect_eq(ibv_attach_mcast(qp[n], &other, 0xc005), 0, "another group");
	cr_assert_eq(ibv_detach_mcast(qp[1], &mgid, 0xc003), 0);
	cr_expect_eq(ibv_attach_mcast(qp[n], &mgid, 0xc003), 0, "a place freed");
	cr_expect_eq(ibv_attach_mcast(qp[1], &mgid, 0xc003), ENOMEM, "and taken");

	cr_assert_eq(ibv_detach_mcast(qp[0], &mgid, 0xc004), 0);
	cr_assert_eq(ibv_detach_mcast(qp[n], &other, 0xc005), 0);
	for (int i = 0; i <= n; i++) {
		if (i != 1)
			cr_assert_eq(ibv_detach_mcast(qp[i], &mgid, 0xc003), 0, "QP %d", i);
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
	}
	free(qp);
	cr_assert_eq(ibv_destroy_cq(cq2), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	cr_assert_eq(ibv_close_device(ctx2), 0);
}

Test(qp, address_handle)
{
	struct ibv_ah_attr aa = { .dlid = lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct mlx5dv_ah dv;
	struct mlx5dv_obj o = { .ah = { .in = ah, .out = &dv } };

	cr_assert(ah, "%s", strerror(errno));
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_AH), 0);
	cr_assert(dv.av);
	cr_assert_eq(be16toh(dv.av->rlid), lid);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* A QP on an SRQ entering ERR reports IBV_EVENT_QP_LAST_WQE_REACHED. */
Test(qp, async_event_last_wqe)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event ev;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	cr_assert(srq);
	qp = make_qp(IBV_QPT_RC, srq);
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert_eq(poll(&p, 1, 5000), 1);
	cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);	/* blocking read */
	cr_assert_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	cr_assert_eq(ev.element.qp, qp);
	/* destroy waits for the ack: give it */
	ibv_ack_async_event(&ev);
	cr_assert_eq(ibv_destroy_srq(srq), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/* An event never read does not hold up destroy (it is taken back). */
Test(qp, unread_event_reclaimed)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	cr_assert(srq);
	qp = make_qp(IBV_QPT_RC, srq);
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(poll(&p, 1, 0), 0, "the event went with the QP");
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}
