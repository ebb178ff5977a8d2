/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * DEVX (emu/kernel/devx.c): a DEVX user context for every context
 * libmlx5 opens, QUERY_HCA_CAP answered from the device's caps (the
 * general and ODP pages), the mkeys of mlx5dv_create_mkey() (CREATE_MKEY
 * through DEVX_OBJ_CREATE) and the PSVs of its signature keys
 * (CREATE_PSV), and everything else refused as mlx5_ib and the firmware
 * refuse it: the kernel's checks with their errnos, the firmware's with
 * EREMOTEIO and a status in the output mailbox.  Also the QPs of
 * mlx5dv_create_qp() with the UMR send operations, which post on such
 * mkeys, and those with signature pipelining (INIT2INIT_QP and QUERY_QP of
 * a verbs QP), and a RoCE QP's UDP source port (RTS2RTS_QP,
 * mlx5dv_modify_qp_udp_sport()).
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#include "emu_test.h"
#include "prm_test.h"

ET_CTX_PD_SUITE(devx);

/* mlx5_ifc.h: create_mkey_in's mkc */
#define MKC_FREE	0x81, 1
#define MKC_UMR_EN	0x90, 1
#define MKC_LR		0x95, 1
#define MKC_ACCESS_1_0	0x96, 2
#define MKC_BSF_EN	0xe1, 1
#define MKC_PD		0xe8, 24
#define MKC_BSF_OCTWORDS 0x180, 32
#define MKC_CRYPTO_EN	0x263, 1
#define MKC_OCTWORDS	0x220, 32
#define MKEY_INDEX	0x48, 24
/* cmd_hca_cap fields */
#define CAP_LOG_MAX_QP_SZ	CAP(0x088, 8)
#define CAP_LOG_MAX_MSG		CAP(0x1c3, 5)
#define CAP_PORT_TYPE		CAP(0x1b6, 2)
#define CAP_NUM_PORTS		CAP(0x1b8, 8)
#define CAP_MAX_WQE_SZ_SQ	CAP(0x290, 16)
#define CAP_SHO			CAP(0x217, 1)
#define CAP_SIGERR_DOMAIN	CAP(0x480, 1)
#define CAP_SIG_CRC32C		CAP(0x148, 1)
#define CAP_RTS2RTS_UDP_SPORT	CAP(0x151, 1)
#define CAP_PG			CAP(0x227, 1)
#define CAP_SIG_CRC64_XP10	CAP(0x147, 1)
#define CAP_SIG_BLOCK_4048	CAP(0x1f0, 1)
#define CAP_DRAIN_SIGERR	CAP(0x20f, 1)
#define CAP_GENERAL_OBJ_TYPES	CAP(0x420, 32)	/* the low half of the 64 bits at 0x400 */
#define CAP_CQE_128_ALWAYS	CAP(0x5bd, 1)
#define CAP_CQE_COMPRESSION_128	CAP(0x5be, 1)
#define CAP_CQE_COMPRESSION	CAP(0x5bf, 1)
#define CAP_CQE_COMP_MAX_NUM	CAP(0x5d0, 16)
/* odp_cap: rc_, uc_, ud_, xrc_, dc_odp_caps, send ... srq_receive in IBV_ODP_SUPPORT_* order */
#define ODP_CAP_BIT(t, b)	CAP(0x80 + 0x20 * (t) + (b), 1)

enum { CREATE_MKEY = 0x200, CREATE_CQ = 0x400,
       QUERY_LAG = 0x842, RTR2RTS_QP = 0x504, RTS2RTS_QP = 0x505, CREATE_PSV = 0x600, SET_FTE = 0x936 };
#define NUM_PSV		0x40, 4
#define PSV_PD		0x48, 24
#define PSV0_INDEX	0x88, 24

/* the capability of one op_mod: 0, or the errno */
static int query_cap(struct ibv_context *c, uint16_t op_mod, uint32_t *out, size_t out_len)
{
	uint32_t in[4] = { 0 };

	prm_set(in, OPCODE, QUERY_HCA_CAP);
	prm_set(in, OP_MOD, op_mod);
	memset(out, 0xff, out_len);
	return mlx5dv_devx_general_cmd(c, in, sizeof(in), out, out_len);
}

/* libmlx5 opens every context with DEVX; with the flag it is asked for */
Test(devx, contexts_are_devx)
{
	struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c2;
	static uint32_t out[0x1010 / 4];

	cr_assert(list && list[0]);
	c2 = mlx5dv_open_device(list[0], &attr);
	ibv_free_device_list(list);
	cr_assert(c2, "mlx5dv_open_device(DEVX): %s", strerror(errno));
	cr_expect_eq(query_cap(c2, 1, out, sizeof(out)), 0);
	cr_assert_eq(ibv_close_device(c2), 0);
}

/* QUERY_HCA_CAP: the general and ODP caps as the verbs report them, other pages zeros */
Test(devx, query_hca_cap)
{
	static uint32_t out[0x1010 / 4];
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION |
						  MLX5DV_CONTEXT_MASK_DC_ODP_CAPS };
	struct ibv_device_attr_ex dx;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	uint32_t odp[5];

	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &dx), 0);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	for (uint16_t cur = 0; cur < 2; cur++) {
		cr_assert_eq(query_cap(ctx, cur, out, sizeof(out)), 0);
		cr_expect_eq(prm_get(out, STATUS), 0);
		cr_expect_eq(1u << prm_get(out, CAP_LOG_MAX_QP_SZ), (uint32_t)da.max_qp_wr);
		cr_expect_eq(1ull << prm_get(out, CAP_LOG_MAX_MSG), pa.max_msg_sz);
		cr_expect_eq(prm_get(out, CAP_NUM_PORTS), da.phys_port_cnt);
		cr_expect_eq(prm_get(out, CAP_PORT_TYPE),
			     pa.link_layer == IBV_LINK_LAYER_ETHERNET ? 1u : 0u);
		cr_expect_geq(prm_get(out, CAP_MAX_WQE_SZ_SQ), 512u);
		/* block signature: T10-DIF, CRC32 and CRC32C, not CRC64 nor 4048-byte blocks */
		cr_expect_eq(prm_get(out, CAP_SHO), 1);
		cr_expect_eq(prm_get(out, CAP_SIGERR_DOMAIN), 1);
		cr_expect_eq(prm_get(out, CAP_SIG_CRC32C), 1);
		cr_expect_eq(prm_get(out, CAP_SIG_CRC64_XP10), 0);
		cr_expect_eq(prm_get(out, CAP_SIG_BLOCK_4048), 0);
		/* signature pipelining: a failed check drains the SQ */
		cr_expect_eq(prm_get(out, CAP_DRAIN_SIGERR), 1);
		/* no general object type below 32 (RESERVED_QPN, 0x2c: test_reserved_qpn.c) */
		cr_expect_eq(prm_get(out, CAP_GENERAL_OBJ_TYPES), 0);
		/* CQE compression as mlx5dv_query_device() reports it */
		cr_expect_eq(prm_get(out, CAP_CQE_COMPRESSION), 1);
		cr_expect_eq(prm_get(out, CAP_CQE_COMPRESSION_128),
			     !!(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP));
		cr_expect_eq(prm_get(out, CAP_CQE_128_ALWAYS),
			     !!(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD));
		cr_expect_eq(prm_get(out, CAP_CQE_COMP_MAX_NUM), dv.cqe_comp_caps.max_num);
		/* page faults (ODP); a RoCE QP's UDP source port */
		cr_expect_eq(prm_get(out, CAP_PG), 1);
		cr_expect_eq(prm_get(out, CAP_RTS2RTS_UDP_SPORT),
			     pa.link_layer == IBV_LINK_LAYER_ETHERNET ? 1u : 0u);
	}
	/*
	 * The ODP page (op_mod 2 << 1): each transport's caps as
	 * ibv_query_device_ex() reports them, and DC's as mlx5dv_query_device()
	 * (which reads them from this page): all but plain receives
	 */
	cr_expect(dv.comp_mask & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS);
	cr_expect_eq(dv.dc_odp_caps, IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |
		     IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV);
	odp[0] = dx.odp_caps.per_transport_caps.rc_odp_caps;
	odp[1] = dx.odp_caps.per_transport_caps.uc_odp_caps;
	odp[2] = dx.odp_caps.per_transport_caps.ud_odp_caps;
	odp[3] = dx.xrc_odp_caps;
	odp[4] = dv.dc_odp_caps;
	for (uint16_t cur = 0; cur < 2; cur++) {
		cr_assert_eq(query_cap(ctx, 2 << 1 | cur, out, sizeof(out)), 0);
		cr_expect_eq(prm_get(out, STATUS), 0);
		for (unsigned t = 0; t < 5; t++)
			for (unsigned b = 0; b < 32; b++)
				cr_expect_eq(prm_get(out, ODP_CAP_BIT(t, b)), odp[t] >> b & 1,
					     "transport %u, bit %u", t, b);
	}
	/* another page (atomic, op_mod 3 << 1): the device has none of its features */
	cr_assert_eq(query_cap(ctx, 3 << 1 | 1, out, sizeof(out)), 0);
	cr_expect_eq(prm_get(out, STATUS), 0);
	for (size_t i = 4; i < sizeof(out) / sizeof(out[0]); i++)
		cr_expect_eq(out[i], 0);
	/* a mailbox too short for the page: the firmware's BAD_OUTP_LEN */
	cr_expect_eq(query_cap(ctx, 1, out, 64), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), 0x51);
}

/* the OTHER method: the kernel's list of general commands, the firmware's BAD_OP */
Test(devx, general_cmd_refusals)
{
	uint32_t in[4] = { 0 }, out[64];

	prm_set(in, OPCODE, RTS2RTS_QP);	/* not a general command: mlx5_ib refuses */
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out)), EINVAL);
	prm_set(in, OPCODE, QUERY_LAG);	/* general, not carried out here */
	memset(out, 0, sizeof(out));
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out)), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_OP);
	cr_expect_neq(prm_get(out, SYNDROME), 0);
	/* mailboxes shorter than a header: the attribute's minimum size */
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, 8, out, sizeof(out)), EINVAL);
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, 8), EINVAL);
}

/* the objects and methods this kernel leaves out, as one without them */
Test(devx, absent_objects)
{
	static char buf[4096] __attribute__((aligned(4096)));
	uint32_t eqn;

	errno = 0;
	cr_expect(!mlx5dv_devx_umem_reg(ctx, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	cr_expect_eq(errno, EPROTONOSUPPORT, "%s", strerror(errno));
	/* UCX's probe: without the event channel it takes its verbs path */
	errno = 0;
	cr_expect(!mlx5dv_devx_create_event_channel(ctx, 1));
	cr_expect_eq(errno, EPROTONOSUPPORT, "%s", strerror(errno));
	cr_expect_eq(mlx5dv_devx_query_eqn(ctx, 0, &eqn), EPROTONOSUPPORT);
}

/* OBJ_CREATE: CREATE_MKEY of the kind mlx5dv_create_mkey() asks for */
static struct mlx5dv_devx_obj *create_mkey(uint32_t *in, size_t in_len, uint32_t *out,
					   size_t out_len)
{
	memset(out, 0, out_len);
	return mlx5dv_devx_obj_create(ctx, in, in_len, out, out_len);
}

static void mkey_in(uint32_t *in, size_t len, uint32_t pdn)
{
	memset(in, 0, len);
	prm_set(in, OPCODE, CREATE_MKEY);
	prm_set(in, MKC_ACCESS_1_0, 2);	/* KLMs */
	prm_set(in, MKC_FREE, 1);
	prm_set(in, MKC_UMR_EN, 1);
	prm_set(in, MKC_LR, 1);
	prm_set(in, MKC_PD, pdn);
	prm_set(in, MKC_OCTWORDS, 4);
}

Test(devx, obj_create)
{
	uint32_t in[0x110 / 4], out[4];
	struct mlx5dv_obj o = { .pd = { .in = pd, .out = &(struct mlx5dv_pd){ 0 } } };
	struct mlx5dv_devx_obj *obj;
	uint32_t pdn;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	pdn = o.pd.out->pdn;
	mkey_in(in, sizeof(in), pdn);
	obj = create_mkey(in, sizeof(in), out, sizeof(out));
	cr_assert(obj, "CREATE_MKEY: %s", strerror(errno));
	cr_expect_neq(prm_get(out, MKEY_INDEX), 0);
	/* the PD is in use */
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_assert_eq(mlx5dv_devx_obj_destroy(obj), 0);

	/* a direct (MTT) key, which needs a UMEM: BAD_PARAM */
	prm_set(in, MKC_ACCESS_1_0, 1);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	/* not free, or without UMR: nothing could configure it */
	mkey_in(in, sizeof(in), pdn);
	prm_set(in, MKC_UMR_EN, 0);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	/* a PD that is not this context's (no such pdn) */
	mkey_in(in, sizeof(in), pdn + 0x1000);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_RES);
	/* more entries than log_max_klm_list_size */
	mkey_in(in, sizeof(in), pdn);
	prm_set(in, MKC_OCTWORDS, 1u << 20);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	/* a vhca_tunnel_id (the header's bits 0x20-0x2f): mlx5_ib refuses */
	mkey_in(in, sizeof(in), pdn);
	prm_set(in, 0x20, 16, 1);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EINVAL);
	/* shorter than the mkey context: mlx5_ib refuses */
	mkey_in(in, sizeof(in), pdn);
	cr_expect(!create_mkey(in, 0x40, out, sizeof(out)));
	cr_expect_eq(errno, EINVAL);
	/* another object: the firmware's BAD_OP */
	memset(in, 0, sizeof(in));
	prm_set(in, OPCODE, CREATE_CQ);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_OP);
	/* a command that creates nothing: mlx5_ib refuses */
	prm_set(in, OPCODE, QUERY_HCA_CAP);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EINVAL);
	/* CREATE_PSV of two PSVs: mlx5_ib lets only one through */
	prm_set(in, OPCODE, CREATE_PSV);
	prm_set(in, NUM_PSV, 2);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EINVAL);
	/* SET_FLOW_TABLE_ENTRY creates only with op_mod 0 */
	memset(in, 0, sizeof(in));
	prm_set(in, OPCODE, SET_FTE);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	prm_set(in, OP_MOD, 1);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EINVAL);
}

/* mlx5dv_create_mkey(): an indirect key, its lkey = rkey = index << 8 */
Test(devx, create_mkey)
{
	struct mlx5dv_mkey_init_attr a = {
		.pd = pd, .max_entries = 3,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
	};
	struct mlx5dv_mkey *mk, *mk2;

	mk = mlx5dv_create_mkey(&a);
	cr_assert(mk, "mlx5dv_create_mkey: %s", strerror(errno));
	cr_expect_eq(a.max_entries, 4);	/* rounded up to 4 */
	cr_expect_eq(mk->lkey, mk->rkey);
	cr_expect_eq(mk->lkey & 0xff, 0);
	a.create_flags |= MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE;
	mk2 = mlx5dv_create_mkey(&a);
	cr_assert(mk2, "mlx5dv_create_mkey(REMOTE_INVALIDATE): %s", strerror(errno));
	cr_expect_neq(mk2->lkey, mk->lkey);
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_expect_eq(mlx5dv_destroy_mkey(mk2), 0);
	cr_expect_eq(mlx5dv_destroy_mkey(mk), 0);

	/* a signature key: two PSVs and the key, all on the PD */
	a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			 MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	mk = mlx5dv_create_mkey(&a);
	cr_assert(mk, "mlx5dv_create_mkey(BLOCK_SIGNATURE): %s", strerror(errno));
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_expect_eq(mlx5dv_destroy_mkey(mk), 0);
	/* no crypto engine: libmlx5 refuses a crypto key itself */
	a.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO;
	errno = 0;
	cr_expect(!mlx5dv_create_mkey(&a));
	cr_expect_eq(errno, EOPNOTSUPP, "%s", strerror(errno));
}

/* CREATE_PSV: one PSV on a PD of the context, its index out; DESTROY_PSV with its object */
Test(devx, create_psv)
{
	struct ibv_context *c2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct mlx5dv_obj o = { .pd = { .in = pd, .out = &(struct mlx5dv_pd){ 0 } } };
	struct mlx5dv_devx_obj *p1, *p2;
	uint32_t in[4] = { 0 }, out[8], pdn, i1;

	cr_assert(pd2);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	pdn = o.pd.out->pdn;
	prm_set(in, OPCODE, CREATE_PSV);
	prm_set(in, NUM_PSV, 1);
	prm_set(in, PSV_PD, pdn);
	p1 = create_mkey(in, sizeof(in), out, sizeof(out));
	cr_assert(p1, "CREATE_PSV: %s", strerror(errno));
	i1 = prm_get(out, PSV0_INDEX);
	cr_expect_neq(i1, 0);
	p2 = create_mkey(in, sizeof(in), out, sizeof(out));
	cr_assert(p2, "CREATE_PSV: %s", strerror(errno));
	cr_expect_neq(prm_get(out, PSV0_INDEX), i1);
	/* the PD is in use until both go */
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_expect_eq(mlx5dv_devx_obj_destroy(p1), 0);
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_expect_eq(mlx5dv_devx_obj_destroy(p2), 0);
	/* another context's PD, or none: the firmware's BAD_RES */
	o.pd.in = pd2;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	for (int k = 0; k < 2; k++) {
		prm_set(in, PSV_PD, k ? 0 : o.pd.out->pdn);
		errno = 0;
		cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
		cr_expect_eq(errno, EREMOTEIO, "%s", strerror(errno));
		cr_expect_eq(prm_get(out, STATUS), STAT_BAD_RES);
	}
	/* a context that goes takes its PSVs, then its PD */
	prm_set(in, PSV_PD, o.pd.out->pdn);
	cr_assert(mlx5dv_devx_obj_create(c2, in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(ibv_dealloc_pd(pd2), EBUSY);
	cr_assert_eq(ibv_close_device(c2), 0);
}

/* a context that goes takes its mkeys with it, before its PDs */
Test(devx, mkey_teardown)
{
	struct ibv_context *c2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct mlx5dv_mkey_init_attr a = {
		.pd = pd2, .max_entries = 4,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
	};

	cr_assert(pd2);
	cr_assert(mlx5dv_create_mkey(&a));
	cr_assert(mlx5dv_create_mkey(&a));
	cr_assert_eq(ibv_close_device(c2), 0);
}

/* mlx5dv_create_qp() with the UMR send operations: created as libmlx5 sizes it */
Test(devx, umr_qp)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 512 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |
			     MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
		.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST | MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
				  MLX5DV_QP_EX_WITH_MKEY_CONFIGURE,
	};
	struct ibv_qp *qp;
	struct mlx5dv_qp_ex *dq;

	cr_assert(cq);
	qp = mlx5dv_create_qp(ctx, &qa, &dv);
	cr_assert(qp, "mlx5dv_create_qp: %s", strerror(errno));
	dq = mlx5dv_qp_ex_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp));
	cr_assert(dq);
	cr_expect(dq->wr_mr_list && dq->wr_mr_interleaved && dq->wr_mkey_configure);
	cr_expect_geq(qa.cap.max_inline_data, 512u);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* query_qp_out / init2init_qp_in: the QP context at bit 0xc0 */
#define QP_QPN		0x48, 24
#define QP_OPT_MASK	0x80, 32
#define QPC_STATE	0xc0, 4
#define QPC_DRAIN_SIGERR 0xe5, 1
#define QPC_PD		0xe8, 24
#define QPC_HW_SQ_WQEBB	0x660, 16
enum { QUERY_QP = 0x50b, INIT2INIT_QP = 0x50e, OPT_DRAIN_SIGERR = 1 << 11,
       STAT_BAD_QP_STATE = 0x10 };

static int qp_cmd(struct ibv_qp *qp, bool modify, uint16_t op, uint32_t qpn, uint32_t opt,
		  uint32_t *out, size_t out_len)
{
	uint32_t in[0x800 / 32] = { 0 };

	prm_set(in, OPCODE, op);
	prm_set(in, QP_QPN, qpn);
	prm_set(in, QP_OPT_MASK, opt);
	prm_set(in, QPC_DRAIN_SIGERR, 1);
	memset(out, 0, out_len);
	return modify ? mlx5dv_devx_qp_modify(qp, in, sizeof(in), out, out_len) :
			mlx5dv_devx_qp_query(qp, in, sizeof(in), out, out_len);
}

/*
 * MLX5DV_QP_CREATE_SIG_PIPELINING: the ucontext says SQD->RTS (the caps'
 * drain_sigerr), and libmlx5 sets drain_sigerr by INIT2INIT_QP through
 * DEVX after RESET->INIT; QUERY_QP reads it back.  The kernel's checks of
 * a QP's DEVX commands and the firmware's refusals.
 */
Test(devx, sig_pipelining_qp)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |
			     MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |
				MLX5DV_QP_CREATE_SIG_PIPELINING,
		.send_ops_flags = MLX5DV_QP_EX_WITH_MKEY_CONFIGURE,
	};
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct mlx5dv_pd dpd;
	struct mlx5dv_obj o = { .pd = { .in = pd, .out = &dpd } };
	static uint32_t out[0x880 / 32];
	struct ibv_qp *qp;

	cr_assert(cq);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	qp = mlx5dv_create_qp(ctx, &qa, &dv);
	cr_assert(qp, "mlx5dv_create_qp(SIG_PIPELINING): %s", strerror(errno));
	/* in RESET: INIT2INIT meets the wrong state */
	cr_expect_eq(qp_cmd(qp, true, INIT2INIT_QP, qp->qp_num, OPT_DRAIN_SIGERR, out, 64),
		     EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_QP_STATE);
	cr_assert_eq(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(qp_cmd(qp, false, QUERY_QP, qp->qp_num, 0, out, sizeof(out)), 0);
	cr_expect_eq(prm_get(out, STATUS), 0);
	cr_expect_eq(prm_get(out, QPC_STATE), 1);	/* INIT */
	cr_expect_eq(prm_get(out, QPC_DRAIN_SIGERR), 1, "libmlx5's INIT2INIT");
	cr_expect_eq(prm_get(out, QPC_PD), dpd.pdn);
	cr_expect_eq(prm_get(out, QPC_HW_SQ_WQEBB), 0);
	/* the kernel: another QP's number, a command of another kind */
	cr_expect_eq(qp_cmd(qp, false, QUERY_QP, qp->qp_num + 1, 0, out, sizeof(out)), EINVAL);
	cr_expect_eq(qp_cmd(qp, false, INIT2INIT_QP, qp->qp_num, 0, out, sizeof(out)), EINVAL);
	cr_expect_eq(qp_cmd(qp, true, QUERY_QP, qp->qp_num, 0, out, sizeof(out)), EINVAL);
	cr_expect_eq(qp_cmd(qp, true, CREATE_MKEY, qp->qp_num, 0, out, sizeof(out)), EINVAL);
	/*
	 * the firmware: another transition (ibv_modify_qp()'s), another
	 * parameter; RTS2RTS carries out only a DCI stream's reset and a UDP
	 * source port (RTS: devx_roce::udp_sport)
	 */
	cr_expect_eq(qp_cmd(qp, true, RTR2RTS_QP, qp->qp_num, 0, out, 64), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_OP);
	cr_expect_eq(qp_cmd(qp, true, RTS2RTS_QP, qp->qp_num, 0, out, 64), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(qp_cmd(qp, true, INIT2INIT_QP, qp->qp_num, 1, out, 64), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(qp_cmd(qp, false, QUERY_QP, qp->qp_num, 0, out, 64), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), 0x51);	/* BAD_OUTP_LEN */
	/* drain_sigerr cleared and read back */
	cr_assert_eq(mlx5dv_devx_qp_modify(qp, (uint32_t[0x800 / 32]){ 0 }, 0x800 / 8, out, 64),
		     EINVAL, "opcode 0: not a modify command");
	{
		uint32_t in[0x800 / 32] = { 0 };

		prm_set(in, OPCODE, INIT2INIT_QP);
		prm_set(in, QP_QPN, qp->qp_num);
		prm_set(in, QP_OPT_MASK, OPT_DRAIN_SIGERR);
		cr_expect_eq(mlx5dv_devx_qp_modify(qp, in, sizeof(in), out, 64), 0);
	}
	cr_assert_eq(qp_cmd(qp, false, QUERY_QP, qp->qp_num, 0, out, sizeof(out)), 0);
	cr_expect_eq(prm_get(out, QPC_DRAIN_SIGERR), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* ---- a RoCE QP's UDP source port (mlx5dv_modify_qp_udp_sport()) -------- */

/* rts2rts_qp_in: opt_param_mask_95_32's low half; the path's port in the QP context */
#define QP_OPT_MASK_63_32	0x860, 32
#define QPC_UDP_SPORT		0x290, 16
#define RTS2RTS_IN_DW		((0x880 + 0x600) / 32)	/* to the end of qpc_data_ext */
enum { OPT_32_UDP_SPORT = 1 << 2 };

/* RTS2RTS_QP through DEVX with the two masks and a UDP source port */
static int rts2rts(struct ibv_qp *qp, uint32_t opt_31_0, uint32_t opt_63_32, uint16_t sport,
		   uint32_t *out)
{
	uint32_t in[RTS2RTS_IN_DW] = { 0 };

	prm_set(in, OPCODE, RTS2RTS_QP);
	prm_set(in, QP_QPN, qp->qp_num);
	prm_set(in, QP_OPT_MASK, opt_31_0);
	prm_set(in, QP_OPT_MASK_63_32, opt_63_32);
	prm_set(in, QPC_UDP_SPORT, sport);
	memset(out, 0, 64);
	return mlx5dv_devx_qp_modify(qp, in, sizeof(in), out, 64);
}

/* QUERY_QP's udp_sport, and the state it reads */
static uint32_t query_sport(struct ibv_qp *qp, uint32_t *state)
{
	static uint32_t out[0x880 / 32];

	cr_assert_eq(qp_cmd(qp, false, QUERY_QP, qp->qp_num, 0, out, sizeof(out)), 0);
	*state = prm_get(out, QPC_STATE);
	return prm_get(out, QPC_UDP_SPORT);
}

/*
 * The port the kernel writes into a new RoCE v2 path (mlx5_set_path()):
 * rdma_flow_label_to_udp_sport() of the flow label, or of
 * rdma_calc_flow_label(local, remote QPN) when the label is 0.
 */
static uint16_t path_sport(uint32_t label, uint32_t lqpn, uint32_t rqpn)
{
	if (!label) {
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		label = (uint32_t)v & 0xfffff;
	}
	return (uint16_t)(0xc000 | ((label & 0x3fff) ^ ((label & 0xfc000) >> 14)));
}

/* The first GID of port 1 of the type, its index */
static uint8_t gid_of_type(enum ibv_gid_type type, union ibv_gid *gid)
{
	struct ibv_gid_entry e;

	for (uint32_t i = 0; ibv_query_gid_ex(ctx, 1, i, &e, 0) == 0; i++)
		if (e.gid_type == type) {
			*gid = e.gid;
			return (uint8_t)i;
		}
	cr_assert_fail("no GID of type %d", type);
	return 0;
}

static struct ibv_qp *make_qp(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	cr_assert(qp, "create QP: %s", strerror(errno));
	return qp;
}

TestSuite(devx_roce, .init = et_suite_setup, .fini = et_suite_teardown);

/* suite devx_roce on RoCE: this binary again with RFEMU_LINK_LAYER=eth */
Test(devx, udp_sport_on_roce, .timeout = 120)
{
	test_rerun_on_roce("devx_roce/*");
}

/*
 * A RoCE v2 RC QP in RTS takes a UDP source port by RTS2RTS_QP, QUERY_QP
 * reads it back and the QP's traffic goes on; the firmware refuses it in
 * another state, with another optional parameter, on a QP without a UDP
 * path (RoCE v1 GID, UD); libmlx5 itself before RTS and on UD.  Each new
 * RoCE v2 path starts with the port the kernel derives (path_sport()).
 */
Test(devx_roce, udp_sport)
{
	struct qpu_conn c = { .mtu = IBV_MTU_1024, .rnr_retry = 7, .retry_cnt = 7,
			      .timeout = 14, .access = IBV_ACCESS_LOCAL_WRITE, .rtr_only = 1 };
	struct ibv_cq *cq;
	struct ibv_qp *qp[2], *v1, *ud;
	union ibv_gid gid2, gid1;
	static uint32_t out[64 / 4];
	static char buf[64];
	struct ibv_mr *mr;
	struct ibv_sge sge = { (uintptr_t)buf, 32, 0 }, rsge = { (uintptr_t)(buf + 32), 32, 0 };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc[2];
	struct ibv_port_attr pa;
	uint32_t state;
	uint8_t v2;
	int n = 0;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		cr_skip_test("InfiniBand: devx::udp_sport_on_roce runs this on RoCE");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(cq && mr);
	sge.lkey = rsge.lkey = mr->lkey;
	for (int i = 0; i < 2; i++)
		qp[i] = make_qp(cq, IBV_QPT_RC);
	v1 = make_qp(cq, IBV_QPT_RC);
	ud = make_qp(cq, IBV_QPT_UD);
	c.sgid_index = v2 = gid_of_type(IBV_GID_TYPE_ROCE_V2, &gid2);
	c.dgid = &gid2;
	c.dqpn = qp[1]->qp_num;
	/* RTR: libmlx5 wants RTS, and so does the firmware */
	cr_assert_eq(qpu_bring_up(qp[0], &c), 0, "to RTR: %s", strerror(errno));
	cr_expect_eq(mlx5dv_modify_qp_udp_sport(qp[0], 55555), EOPNOTSUPP);
	cr_expect_eq(rts2rts(qp[0], 0, OPT_32_UDP_SPORT, 55555, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_QP_STATE);
	c.rtr_only = 0;
	c.reset_first = 1;
	cr_assert_eq(qpu_bring_up(qp[0], &c), 0, "to RTS: %s", strerror(errno));
	c.dqpn = qp[0]->qp_num;
	cr_assert_eq(qpu_bring_up(qp[1], &c), 0, "to RTS: %s", strerror(errno));
	cr_expect_eq(query_sport(qp[0], &state), path_sport(0, qp[0]->qp_num, qp[1]->qp_num),
		     "the kernel's port of the path");
	cr_expect_eq(query_sport(qp[1], &state), path_sport(0, qp[1]->qp_num, qp[0]->qp_num));

	/* in RTS */
	cr_assert_eq(mlx5dv_modify_qp_udp_sport(qp[0], 55555), 0);
	cr_expect_eq(query_sport(qp[0], &state), 55555);
	cr_expect_eq(state, 3, "still RTS");
	cr_expect_eq(query_sport(qp[1], &state), path_sport(0, qp[1]->qp_num, qp[0]->qp_num),
		     "the peer's own");
	cr_assert_eq(mlx5dv_modify_qp_udp_sport(qp[0], 0xc001), 0);
	cr_expect_eq(query_sport(qp[0], &state), 0xc001);

	/* another parameter with it, or in the other masks: BAD_PARAM, nothing changed */
	cr_expect_eq(rts2rts(qp[0], 0, OPT_32_UDP_SPORT | 1u << 3, 7, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(rts2rts(qp[0], 1u << 11, OPT_32_UDP_SPORT, 7, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(rts2rts(qp[0], 0, 0, 7, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(query_sport(qp[0], &state), 0xc001);

	/* a RoCE v1 path has no UDP header: the firmware's BAD_PARAM, libmlx5's EINVAL */
	c.sgid_index = gid_of_type(IBV_GID_TYPE_ROCE_V1, &gid1);
	c.dgid = &gid1;
	c.dqpn = qp[1]->qp_num;
	cr_assert_eq(qpu_bring_up(v1, &c), 0, "v1 to RTS: %s", strerror(errno));
	cr_expect_eq(mlx5dv_modify_qp_udp_sport(v1, 55555), EINVAL);
	cr_expect_eq(rts2rts(v1, 0, OPT_32_UDP_SPORT, 55555, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_expect_eq(query_sport(v1, &state), 0);
	/* UD: libmlx5 does not ask; the firmware has no path to set */
	c.qkey = 0x11111111;
	cr_assert_eq(qpu_bring_up(ud, &c), 0, "UD to RTS: %s", strerror(errno));
	cr_expect_eq(mlx5dv_modify_qp_udp_sport(ud, 55555), EOPNOTSUPP);
	cr_expect_eq(rts2rts(ud, 0, OPT_32_UDP_SPORT, 55555, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);

	/* the traffic goes on */
	cr_assert_eq(ibv_post_recv(qp[1], &rwr, &rbad), 0);
	strcpy(buf, "with the new source port");
	sge.length = (uint32_t)strlen(buf) + 1;
	cr_assert_eq(ibv_post_send(qp[0], &swr, &sbad), 0);
	for (int ms = 0; n < 2 && ms < 5000; ms++) {
		n += ibv_poll_cq(cq, 2 - n, wc + n);
		if (n < 2)
			usleep(1000);
	}
	cr_assert_eq(n, 2);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(wc[i].status, IBV_WC_SUCCESS, "wr %llu: %s",
			     (unsigned long long)wc[i].wr_id, ibv_wc_status_str(wc[i].status));
	cr_expect_str_eq(buf + 32, "with the new source port");

	/* a new path (RESET and up again) has the kernel's port again: of its flow label */
	cr_assert_eq(qpu_bring_up(qp[0], &(struct qpu_conn){ .mtu = IBV_MTU_1024,
		.dgid = &gid2, .sgid_index = v2, .dqpn = qp[1]->qp_num,
		.flow_label = 0x12345, .reset_first = 1 }), 0);
	cr_expect_eq(query_sport(qp[0], &state), 0xe341, "0x2345 ^ 0x12345 >> 14");
	cr_assert_eq(qpu_bring_up(qp[0], &(struct qpu_conn){ .mtu = IBV_MTU_1024,
		.dgid = &gid2, .sgid_index = v2, .dqpn = qp[1]->qp_num,
		.reset_first = 1 }), 0);
	cr_expect_eq(query_sport(qp[0], &state), path_sport(0, qp[0]->qp_num, qp[1]->qp_num));

	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
	cr_assert_eq(ibv_destroy_qp(v1), 0);
	cr_assert_eq(ibv_destroy_qp(ud), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* On InfiniBand the caps say no, libmlx5 does not ask, the firmware refuses */
Test(devx, udp_sport_not_on_infiniband)
{
	struct ibv_port_attr pa;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	static uint32_t out[64 / 4];

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_INFINIBAND)
		cr_skip_test("RoCE: suite devx_roce");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
	qp = make_qp(cq, IBV_QPT_RC);
	cr_assert_eq(et_qp_to_rts(qp, qp->qp_num, pa.lid), 0);
	cr_expect_eq(mlx5dv_modify_qp_udp_sport(qp, 55555), EOPNOTSUPP);
	cr_expect_eq(rts2rts(qp, 0, OPT_32_UDP_SPORT, 55555, out), EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* ---- hostile mailboxes and handles -------------------------------------- */

/* three pages: readable and writable, read-only, none */
static uint8_t *pages(void)
{
	uint8_t *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(p != MAP_FAILED);
	cr_assert_eq(mprotect(p + 4096, 4096, PROT_READ), 0);
	cr_assert_eq(mprotect(p + 8192, 4096, PROT_NONE), 0);
	return p;
}

/* mailboxes the process cannot read or write: EFAULT, nothing done */
Test(devx, mailboxes_out_of_reach)
{
	uint8_t *p = pages(), *rw = p, *ro = p + 4096, *none = p + 8192;
	uint32_t in[4] = { 0 }, out[0x1020 / 4];

	prm_set(in, OPCODE, QUERY_HCA_CAP);
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, none, 16, out, sizeof(out)), EFAULT);
	/* a header that runs into the page of none */
	memcpy(ro - 8, in, 8);
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, none - 8, 16, out, sizeof(out)), EFAULT);
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), none, 64), EFAULT);
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), ro, 0x1010), EFAULT);
	/* the output straddling into read-only memory */
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), ro - 0x800, 0x1010),
		     EFAULT);
	/* unaligned, in and out */
	memcpy(rw + 1, in, sizeof(in));
	cr_expect_eq(mlx5dv_devx_general_cmd(ctx, rw + 1, 16, (uint8_t *)out + 3, 0x1010), 0);
	cr_assert_eq(munmap(p, 3 * 4096), 0);
}

/* a CREATE_MKEY whose output cannot be written: EFAULT, the key undone */
Test(devx, mkey_output_unwritable)
{
	uint8_t *p = pages();
	uint32_t in[0x110 / 4];
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct mlx5dv_obj o = { .pd = { .in = pd2, .out = &(struct mlx5dv_pd){ 0 } } };

	cr_assert(pd2);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	mkey_in(in, sizeof(in), o.pd.out->pdn);
	errno = 0;
	cr_expect(!mlx5dv_devx_obj_create(ctx, in, sizeof(in), p + 4096, 16));
	cr_expect_eq(errno, EFAULT, "%s", strerror(errno));
	errno = 0;
	cr_expect(!mlx5dv_devx_obj_create(ctx, p + 8192 - 0x40, sizeof(in), p, 16));
	cr_expect_eq(errno, EFAULT, "%s", strerror(errno));
	/* no key holds the PD */
	cr_expect_eq(ibv_dealloc_pd(pd2), 0);
	cr_assert_eq(munmap(p, 3 * 4096), 0);
}

/* a PD of another context, translation sizes at and past the limits, a BSF */
Test(devx, mkey_pd_and_sizes)
{
	struct ibv_context *c2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct mlx5dv_obj o = { .pd = { .in = pd2, .out = &(struct mlx5dv_pd){ 0 } } };
	struct mlx5dv_devx_obj *obj;
	uint32_t in[0x110 / 4], out[4], pdn;

	cr_assert(pd2);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	mkey_in(in, sizeof(in), o.pd.out->pdn);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_RES);
	o.pd.in = pd;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	pdn = o.pd.out->pdn;
	for (uint32_t n = 0; n < 3; n++) {
		uint32_t oct[] = { 0, (1u << 16) + 1, 0xffffffffu };

		mkey_in(in, sizeof(in), pdn);
		prm_set(in, MKC_OCTWORDS, oct[n]);
		cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)), "%#x", oct[n]);
		cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM, "%#x", oct[n]);
	}
	/* a signature context (bsf_en) of the signature BSF's 4 octowords only */
	prm_set(in, MKC_OCTWORDS, 4);
	prm_set(in, MKC_BSF_EN, 1);
	for (uint32_t n = 0; n < 3; n++) {
		uint32_t bsf[] = { 0, 8, 4 };

		prm_set(in, MKC_BSF_OCTWORDS, bsf[n]);
		obj = create_mkey(in, sizeof(in), out, sizeof(out));
		if (n < 2) {
			cr_expect(!obj, "bsf_octword_size %u", bsf[n]);
			cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM, "%u", bsf[n]);
		} else {
			cr_assert(obj, "bsf_octword_size 4: %s", strerror(errno));
			cr_expect_eq(mlx5dv_devx_obj_destroy(obj), 0);
		}
	}
	/* a crypto context: no crypto engine */
	prm_set(in, MKC_CRYPTO_EN, 1);
	cr_expect(!create_mkey(in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_PARAM);
	prm_set(in, MKC_CRYPTO_EN, 0);
	prm_set(in, MKC_BSF_EN, 0);
	prm_set(in, MKC_BSF_OCTWORDS, 0);
	prm_set(in, MKC_OCTWORDS, 1u << 16);
	obj = create_mkey(in, sizeof(in), out, sizeof(out));
	cr_expect(obj, "%s", strerror(errno));
	if (obj)
		cr_expect_eq(mlx5dv_devx_obj_destroy(obj), 0);
	cr_expect_eq(ibv_dealloc_pd(pd2), 0);
	cr_expect_eq(ibv_close_device(c2), 0);
}

/* raw DEVX_OBJ ioctls: a destroyed handle, another type's handle */
Test(devx, destroy_raw_handles)
{
	struct mlx5dv_obj o = { .pd = { .in = pd, .out = &(struct mlx5dv_pd){ 0 } } };
	uint32_t in[0x110 / 4], out[4];
	struct et_call c;
	struct ib_uverbs_attr *h;
	uint32_t handle;
	int ret;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	mkey_in(in, sizeof(in), o.pd.out->pdn);
	et_call_init(&c, MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_CREATE);
	h = et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, 0, 0);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN, sizeof(in), (uintptr_t)in);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT, sizeof(out), (uintptr_t)out);
	cr_assert_eq(et_call_on(ctx->cmd_fd, &c), 0);
	handle = (uint32_t)h->data;
	cr_expect_eq(ibv_dealloc_pd(pd), EBUSY);
	for (int i = 0; i < 2; i++) {
		et_call_init(&c, MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY);
		et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE, 0, handle);
		ret = et_call_on(ctx->cmd_fd, &c);
		cr_expect_eq(ret, i ? ENOENT : 0, "destroy %d: %s", i, strerror(ret));
	}
	/* the PD's handle is not a DEVX object's */
	et_call_init(&c, MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE, 0, pd->handle);
	cr_expect_eq(et_call_on(ctx->cmd_fd, &c), EINVAL);
}
