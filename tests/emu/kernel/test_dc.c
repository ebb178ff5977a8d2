/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Dynamically Connected QPs through libmlx5's public API: mlx5dv_create_qp()
 * of a DCT (an SRQ and a receive CQ, its number only at INIT->RTR) and of a
 * DCI (an RC-like send queue), their transitions as the kernel's mlx5 qp.c
 * allows them, query and destroy, and what mlx5dv_query_device() answers.
 */
#include "emu_test.h"
#include "prm_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;

static void setup(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert(pd && cq);
	srq = ibv_create_srq(pd, &sa);
	cr_assert(srq);
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(dc, .init = setup, .fini = teardown);

static struct ibv_qp *create_dc(enum mlx5dv_dc_type type, uint64_t key, struct ibv_srq *s)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER,
		.send_cq = cq, .recv_cq = cq, .srq = s, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = type == MLX5DV_DCTYPE_DCI ? 16 : 0,
			 .max_send_sge = type == MLX5DV_DCTYPE_DCI ? 1 : 0 },
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = type, .dct_access_key = key },
	};

	return mlx5dv_create_qp(ctx, &a, &dv);
}

static int dct_to_rtr(struct ibv_qp *qp, uint32_t access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access,
	};
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;	/* RoCE needs a GRH; on IB it is allowed */
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_MIN_RNR_TIMER);
}

Test(dc, dct_number_at_rtr_and_its_transitions)
{
	struct ibv_qp *dct = create_dc(MLX5DV_DCTYPE_DCT, 0x1122334455667788ull, srq);
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr ia;

	cr_assert(dct, "%s", strerror(errno));
	cr_assert_eq(dct->qp_num, 0, "a DCT is numbered when it reaches RTR");
	cr_assert_eq(ibv_query_qp(dct, &a, IBV_QP_STATE, &ia), EINVAL, "queried in RTR only");
	/* INIT takes exactly access, P_Key index and port */
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT),
		     EINVAL, "access flags are required");
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY), EINVAL, "no Q_Key");
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL, "RESET->RTR");
	cr_assert_eq(dct_to_rtr(dct, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC), 0, "%s", strerror(errno));
	cr_assert_neq(dct->qp_num, 0, "libmlx5 read the DCT number from the response");

	/*
	 * mlx5_ib_dct_query_qp(): the attributes asked, of those a DCT has;
	 * any other in the mask is EINVAL, as is a DCT not in RTR.
	 */
	memset(&a, 0xff, sizeof(a));
	cr_assert_eq(ibv_query_qp(dct, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PATH_MTU |
				  IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_RTR);
	cr_assert_eq(a.port_num, 1);
	cr_assert_eq(a.path_mtu, IBV_MTU_1024);
	cr_assert_eq(a.min_rnr_timer, 12);
	cr_assert_eq(a.qp_access_flags, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert_eq(a.pkey_index, 0, "not asked: 0");
	cr_assert_eq(a.dest_qp_num, 0);
	cr_assert_eq(a.ah_attr.is_global, 0);
	cr_assert_eq(ibv_query_qp(dct, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, &ia), EINVAL);

	/* a DCT has no further states: not RTS, not ERR, not back to RESET */
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL);
	a.qp_state = IBV_QPS_ERR;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL);
	a.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(dct, &a, IBV_QP_STATE), EINVAL);
	cr_assert_eq(ibv_destroy_qp(dct), 0);
}

Test(dc, dct_needs_an_srq)
{
	errno = 0;
	cr_assert_null(create_dc(MLX5DV_DCTYPE_DCT, 1, NULL));
	cr_assert_eq(errno, EINVAL);
}

Test(dc, two_dcts_get_two_numbers)
{
	struct ibv_qp *d1 = create_dc(MLX5DV_DCTYPE_DCT, 1, srq);
	struct ibv_qp *d2 = create_dc(MLX5DV_DCTYPE_DCT, 2, srq);

	cr_assert(d1 && d2);
	cr_assert_eq(dct_to_rtr(d1, IBV_ACCESS_REMOTE_WRITE), 0);
	cr_assert_eq(dct_to_rtr(d2, IBV_ACCESS_REMOTE_WRITE), 0);
	cr_assert_neq(d1->qp_num, d2->qp_num);
	cr_assert_eq(ibv_destroy_qp(d1), 0);
	cr_assert_eq(ibv_destroy_qp(d2), 0);
}

static int dci_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
}

static int dci_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU);
}

static int dci_rts(struct ibv_qp *qp, uint32_t extra)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.sq_psn = 0x42, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | extra);
}

enum { RTS2RTS_QP = 0x505, QUERY_QP = 0x50b };
#define QP_QPN			0x48, 24
#define QP_OPT_MASK_95_32	0x860, 32
#define OPT_32_UDP_SPORT	(1u << 2)

/* a QP command (QUERY_QP, RTS2RTS_QP setting udp_sport) through DEVX on a verbs QP, naming qpn */
static int devx_qp_cmd(struct ibv_qp *qp, uint16_t op, uint32_t qpn)
{
	uint32_t in[0x880 / 32] = { 0 }, out[0x880 / 32];

	prm_set(in, OPCODE, op);
	prm_set(in, QP_QPN, qpn);
	prm_set(in, QP_OPT_MASK_95_32, OPT_32_UDP_SPORT);
	return op == QUERY_QP ? mlx5dv_devx_qp_query(qp, in, sizeof(in), out, sizeof(out)) :
				mlx5dv_devx_qp_modify(qp, in, sizeof(in), out, sizeof(out));
}

/*
 * The kernel names a DCT by the object CREATE_DCT made
 * (devx_is_valid_obj_id()): a QP command with the DCT's own number is not
 * its own, EINVAL before any firmware runs.  A DCI is a QP: QUERY_QP answers.
 */
Test(dc, devx_qp_commands_not_on_a_dct)
{
	struct ibv_qp *dct = create_dc(MLX5DV_DCTYPE_DCT, 7, srq);
	struct ibv_qp *dci = create_dc(MLX5DV_DCTYPE_DCI, 0, NULL);

	cr_assert(dct && dci, "%s", strerror(errno));
	cr_assert_eq(dct_to_rtr(dct, IBV_ACCESS_REMOTE_WRITE), 0);
	cr_expect_eq(devx_qp_cmd(dct, QUERY_QP, dct->qp_num), EINVAL, "QUERY_QP");
	cr_expect_eq(devx_qp_cmd(dct, RTS2RTS_QP, dct->qp_num), EINVAL, "RTS2RTS_QP");
	cr_assert_eq(dci_init(dci), 0);
	cr_assert_eq(dci_rtr(dci), 0);
	cr_assert_eq(dci_rts(dci, 0), 0);
	cr_expect_eq(devx_qp_cmd(dci, QUERY_QP, dci->qp_num), 0, "QUERY_QP of a DCI");
	cr_expect_eq(devx_qp_cmd(dci, QUERY_QP, dct->qp_num), EINVAL, "the DCT's number");
	cr_expect_eq(devx_qp_cmd(dci, RTS2RTS_QP, dci->qp_num), EREMOTEIO,
		     "a DCI has no path: the firmware's BAD_PARAM");
	cr_assert_eq(ibv_destroy_qp(dct), 0);
	cr_assert_eq(ibv_destroy_qp(dci), 0);
}

Test(dc, dci_transitions_as_modify_dci_qp_is_ok)
{
	struct ibv_qp *dci = create_dc(MLX5DV_DCTYPE_DCI, 0, NULL);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct mlx5dv_qp dv = {};
	struct mlx5dv_obj o = { .qp = { .in = dci, .out = &dv } };
	struct ibv_qp_init_attr ia;

	cr_assert(dci, "%s", strerror(errno));
	cr_assert_neq(dci->qp_num, 0);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_assert(dv.sq.buf && dv.sq.wqe_cnt >= 16 && dv.bf.reg, "a DCI has a send queue");
	/* INIT: P_Key index and port, no access flags (a DCI is no responder) */
	cr_assert_eq(ibv_modify_qp(dci, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), EINVAL);
	cr_assert_eq(dci_init(dci), 0);
	/* RTR: the MTU; no destination QPN or PSN, the WQE names the target */
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	cr_assert_eq(ibv_modify_qp(dci, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN),
		     EINVAL);
	cr_assert_eq(ibv_modify_qp(dci, &a, IBV_QP_STATE), EINVAL, "the MTU is required");
	cr_assert_eq(dci_rtr(dci), 0);
	cr_assert_eq(dci_rts(dci, IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL, "no responder resources");
	cr_assert_eq(dci_rts(dci, 0), 0, "%s", strerror(errno));
	cr_assert_eq(ibv_query_qp(dci, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_RTS);
	cr_assert_eq(a.sq_psn, 0x42);
	cr_assert_eq(a.timeout, 14);

	/* error, reset and reuse, as a DCI pool does */
	a.qp_state = IBV_QPS_ERR;
	cr_assert_eq(ibv_modify_qp(dci, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(dci, &a, IBV_QP_STATE), 0);
	cr_assert_eq(dci_init(dci), 0);
	cr_assert_eq(dci_rtr(dci), 0);
	cr_assert_eq(dci_rts(dci, 0), 0);
	cr_assert_eq(ibv_destroy_qp(dci), 0);
}

Test(dc, dci_streams_beyond_the_caps)
{
	struct ibv_qp *qp;

	/* one stream: libmlx5 sends MLX5_QP_FLAG_DCI_STREAM, the kernel refuses it */
	cr_assert_null(et_streams_dci(ctx, pd, cq, 0, 0), "no DCI streams on this device");
	cr_assert_eq(errno, EINVAL);
	/* more than the caps: libmlx5 refuses before asking */
	cr_assert_null(et_streams_dci(ctx, pd, cq, 2, 0));
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(et_streams_dci(ctx, pd, cq, 0, 1));
	cr_assert_eq(errno, EINVAL);
	/* and without the streams mask the same DCI is created */
	qp = create_dc(MLX5DV_DCTYPE_DCI, 0, NULL);
	cr_assert_not_null(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(dc, query_device_dc_caps)
{
	struct mlx5dv_context c = {
		.comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_DCI_STREAMS,
	};

	cr_assert_eq(mlx5dv_query_device(ctx, &c), 0);
	cr_assert(c.comp_mask & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS);
	/* a ConnectX-6's, from the ODP caps page: all but plain receives (test_odp.c) */
	cr_assert_eq(c.dc_odp_caps, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
		     IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	cr_assert(c.comp_mask & MLX5DV_CONTEXT_MASK_DCI_STREAMS);
	cr_assert_eq(c.dci_streams_caps.max_log_num_concurent, 0);
	cr_assert_eq(c.dci_streams_caps.max_log_num_errored, 0);
}
