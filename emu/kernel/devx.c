/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * devx.c - DEVX (mlx5dv_devx_*()): the firmware commands a process passes
 * through mlx5_ib (drivers/infiniband/hw/mlx5/devx.c) to the device, as far
 * as libmlx5 44 sends them for its own verbs: the capability queries of
 * every context (QUERY_HCA_CAP), the mkey of mlx5dv_create_mkey()
 * (CREATE_MKEY) and the two PSVs of a signature one (CREATE_PSV), the
 * reserved QP numbers of mlx5dv_reserved_qpn_alloc() (CREATE_GENERAL_OBJECT
 * of type RESERVED_QPN, reserved_qpn.c), each destroyed with its object,
 * the signature pipelining of a QP (INIT2INIT_QP, QUERY_QP), a DCI
 * stream's reset and a RoCE QP's UDP source port (RTS2RTS_QP).
 *
 * The kernel's checks come first, with its errnos: a command that is not
 * one of its general commands EINVAL on the OTHER method, a command that
 * creates no object EINVAL on OBJ_CREATE, a context opened without
 * MLX5_IB_ALLOC_UCTX_DEVX EINVAL for anything but the whitelisted queries
 * (devx_get_uid()).  Then the emulated firmware answers, as the PRM lays
 * out its mailboxes (rdma-core providers/mlx5/mlx5_ifc.h): a command it
 * does not carry out gets status BAD_OP, bad input BAD_PARAM, and the
 * ioctl EREMOTEIO with the output mailbox copied out, which libmlx5 turns
 * into an errno (mlx5_get_cmd_status_err(): EINVAL for both).
 *
 * Of the DEVX objects only DEVX (OTHER) and DEVX_OBJ (CREATE, DESTROY,
 * and MODIFY and QUERY of a verbs QP) exist: no UMEM, no asynchronous
 * command or event file, no QUERY_EQN or QUERY_UAR, as on a kernel
 * without them (EPROTONOSUPPORT from the framework).  UCX 1.13 probes for
 * the event channel before it builds its queues with DEVX
 * (uct_ib_mlx5_devx_open_device()); without it UCX takes its verbs path,
 * which this emulator runs.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/mlx5_user_ioctl_cmds.h>

#include "caps.h"
#include "internal.h"

/* ---- PRM mailboxes: big-endian dwords, fields by bit offset ------------ */

/* a field of `bits` bits at bit `off` (from the MSB of dword 0), not crossing a dword */
static uint32_t prm_get(const uint8_t *buf, unsigned off, unsigned bits)
{
	const uint8_t *p = buf + off / 32 * 4;
	uint32_t dw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	unsigned shift = 32 - off % 32 - bits;

	return (dw >> shift) & (bits == 32 ? ~0u : (1u << bits) - 1);
}

static void prm_set(uint8_t *buf, unsigned off, unsigned bits, uint32_t v)
{
	uint8_t *p = buf + off / 32 * 4;
	uint32_t dw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	unsigned shift = 32 - off % 32 - bits;
	uint32_t mask = (bits == 32 ? ~0u : (1u << bits) - 1) << shift;

	dw = (dw & ~mask) | ((v << shift) & mask);
	p[0] = (uint8_t)(dw >> 24);
	p[1] = (uint8_t)(dw >> 16);
	p[2] = (uint8_t)(dw >> 8);
	p[3] = (uint8_t)dw;
}

/* A field: its bit offset and width in mlx5_ifc.h's structure. */
#define F(off, bits)	(off), (bits)

/* general_obj_in_cmd_hdr / mbox_out */
#define HDR_OPCODE		F(0x00, 16)
#define HDR_UID			F(0x10, 16)
#define HDR_OP_MOD		F(0x30, 16)
#define HDR_VHCA_TUNNEL_ID	F(0x20, 16)
#define OUT_STATUS		F(0x00, 8)
#define OUT_SYNDROME		F(0x20, 32)
#define MBOX_HDR_SIZE		16	/* bytes of either header */
/* general_obj_in_cmd_hdr's object fields, general_obj_out_cmd_hdr's id */
#define HDR_OBJ_TYPE		F(0x30, 16)
#define HDR_LOG_OBJ_RANGE	F(0x63, 5)
#define OUT_OBJ_ID		F(0x40, 32)

/* query_hca_cap_out: the capability at byte 0x10, 0x1000 bytes */
#define HCA_CAP_OFFSET		0x10
#define HCA_CAP_SIZE		0x1000
/* cmd_hca_cap (the general device caps), offsets inside the capability */
#define CAP_HCA_CAP_2		F(0x020, 1)
#define CAP_LOG_MAX_SRQ_SZ	F(0x080, 8)
#define CAP_LOG_MAX_QP_SZ	F(0x088, 8)
#define CAP_LOG_MAX_QP		F(0x09b, 5)
#define CAP_LOG_MAX_SRQ		F(0x0ab, 5)
#define CAP_LOG_MAX_CQ_SZ	F(0x0c8, 8)
#define CAP_LOG_MAX_CQ		F(0x0db, 5)
#define CAP_LOG_MAX_MKEY	F(0x0ea, 6)
#define CAP_LOG_MAX_KLM_LIST	F(0x11a, 6)
#define CAP_QPC_EXTENSION	F(0x122, 1)
#define CAP_SIG_CRC64_XP10	F(0x147, 1)
#define CAP_SIG_CRC32C		F(0x148, 1)
#define CAP_LOG_MAX_RA_REQ_QP	F(0x14a, 6)
#define CAP_RTS2RTS_UDP_SPORT	F(0x151, 1)
#define CAP_LOG_MAX_RA_RES_QP	F(0x15a, 6)
#define CAP_LOCAL_CA_ACK_DELAY	F(0x1ab, 5)
#define CAP_PORT_TYPE		F(0x1b6, 2)
#define CAP_NUM_PORTS		F(0x1b8, 8)
#define CAP_LOG_MAX_MSG		F(0x1c3, 5)
#define CAP_SIG_BLOCK_4048	F(0x1f0, 1)
#define CAP_CQE_VERSION		F(0x1fc, 4)
#define CAP_DRAIN_SIGERR	F(0x20f, 1)
#define CAP_SHO			F(0x217, 1)
#define CAP_QOS			F(0x21b, 1)
#define CAP_ATOMIC		F(0x21e, 1)
#define CAP_PG			F(0x227, 1)
#define CAP_XRC			F(0x23c, 1)
#define CAP_UD			F(0x23d, 1)
#define CAP_UC			F(0x23e, 1)
#define CAP_RC			F(0x23f, 1)
#define CAP_MAX_WQE_SZ_SQ	F(0x290, 16)
#define CAP_MAX_WQE_SZ_RQ	F(0x2b0, 16)
#define CAP_LOG_MAX_PD		F(0x32b, 5)
/* general_obj_types: 64 bits from 0x400, the bit of type t at 1 << t */
#define CAP_GENERAL_OBJ_TYPE(t)	F(0x400 + 63 - (t), 1)
#define CAP_SIGERR_DOMAIN_TYPE	F(0x480, 1)
#define CAP_LOG_MAX_DCI_STREAMS	F(0x58b, 5)
#define CAP_LOG_MAX_DCI_ERRORED	F(0x593, 5)
#define CAP_CQE_128_ALWAYS	F(0x5bd, 1)
#define CAP_CQE_COMPRESSION_128	F(0x5be, 1)
#define CAP_CQE_COMPRESSION	F(0x5bf, 1)
#define CAP_CQE_COMP_MAX_NUM	F(0x5d0, 16)
/* cmd_hca_cap_2, the second general caps page (op_mod 0x20 << 1) */
#define CAP2_LOG_MAX_NUM_RESERVED_QPN	F(0x08b, 5)
#define CAP2_LOG_RESERVED_QPN_GRANULARITY F(0x093, 5)
#define CAP2_LOG_RESERVED_QPN_MAX_ALLOC	F(0x09b, 5)
/* odp_cap: rc_, uc_, ud_, xrc_ and dc_odp_caps, send ... srq_receive each */
#define ODP_CAP_TRANSPORT_BIT(t, b) F(0x80 + 0x20 * (t) + (b), 1)
#define ODP_CAP_TRANSPORT_BITS	6

/*
 * device_mem_cap (op_mod MLX5_CAP_DEV_MEM): MEMIC and its operations; the
 * two size masks (bit n: 2^n-byte accesses) where rdma-core's
 * tests/test_mlx5_dm_ops.py reads them, bytes 4 and 6 of the page
 */
#define DM_MEMIC		F(0x000, 1)
#define DM_INCREMENT_SIZE_SUP	F(0x020, 8)
#define DM_LOG_MIN_MEMIC_ALLOC	F(0x02b, 5)
#define DM_TEST_AND_SET_SIZE_SUP F(0x030, 8)
#define DM_MEMIC_BAR_SIZE	F(0x080, 32)
#define DM_MAX_MEMIC_SIZE	F(0x0a0, 32)
#define DM_MEMIC_OPERATIONS	F(0x200, 32)

/* qos_cap (op_mod MLX5_CAP_QOS): packet pacing */
#define QOS_PACKET_PACING	F(0x00, 1)
#define QOS_PP_BURST_BOUND	F(0x05, 1)
#define QOS_PP_TYPICAL_SIZE	F(0x06, 1)
#define QOS_PP_UID		F(0x0b, 1)
#define QOS_PP_MAX_RATE		F(0x40, 32)
#define QOS_PP_MIN_RATE		F(0x60, 32)
#define QOS_PP_RATE_TABLE_SIZE	F(0x90, 16)

/*
 * flow_table_nic_cap (op_mod MLX5_CAP_FLOW_TABLE): the packet reformats
 * (flow_action.c), and the flow_table_prop_layout of the NIC receive and
 * transmit tables
 */
#define FT_ENCAP_GENERAL_HEADER	F(0x020, 1)
#define FT_LOG_MAX_REFORMAT	F(0x02b, 5)
#define FT_MAX_ENCAP_HEADER	F(0x036, 10)
#define FT_NIC_RX(off, bits)	F(0x200 + (off), bits)
#define FT_NIC_TX(off, bits)	F(0x800 + (off), bits)
#define FT_PROP_REFORMAT	0x07
#define FT_PROP_DECAP		0x08
/* log_max_packet_reformat_context: 2^16 contexts, which the model does not count */
#define FT_LOG_MAX_REFORMAT_CTX	16

/* create_mkey_in and its mkey context (mkc) at bit 0x80 */
#define MKC(off, bits)		F(0x80 + (off), bits)
#define MKC_FREE		MKC(0x01, 1)
#define MKC_ACCESS_MODE_4_2	MKC(0x03, 3)
#define MKC_UMR_EN		MKC(0x10, 1)
#define MKC_A			MKC(0x11, 1)
#define MKC_RW			MKC(0x12, 1)
#define MKC_RR			MKC(0x13, 1)
#define MKC_LW			MKC(0x14, 1)
#define MKC_LR			MKC(0x15, 1)
#define MKC_ACCESS_MODE_1_0	MKC(0x16, 2)
#define MKC_MKEY_7_0		MKC(0x38, 8)
#define MKC_BSF_EN		MKC(0x61, 1)
#define MKC_EXPECTED_SIGERR	MKC(0x65, 1)
#define MKC_EN_RINVAL		MKC(0x67, 1)
#define MKC_PD			MKC(0x68, 24)
#define MKC_BSF_OCTWORDS	MKC(0x100, 32)
#define MKC_TRANSL_OCTWORDS	MKC(0x1a0, 32)
#define MKC_CRYPTO_EN		MKC(0x1e3, 1)
#define CREATE_MKEY_IN_MKC_END	0x50	/* bytes: the header and the mkey context */
#define CREATE_MKEY_OUT_INDEX	F(0x48, 24)
#define PSV_NUM			F(0x40, 4)	/* create_psv_in.num_psv */
#define PSV_PD			F(0x48, 24)	/* create_psv_in.pd */
#define PSV_OUT_INDEX0		F(0x88, 24)	/* create_psv_out.psv0_index */
#define BSF_OCTWORDS		4	/* the signature BSF: 64 bytes (struct mlx5_bsf) */
/* the QP commands: qpn, and the QP context (qpc) at bit 0xc0 of both */
#define QP_IN_QPN		F(0x48, 24)
#define QP_OPT_PARAM_MASK	F(0x80, 32)	/* init2init_qp_in */
#define QP_IN_QPC_EXT		F(0x40, 1)	/* rts2rts_qp_in: qpc_data_ext present */
#define QP_OPT_PARAM_MASK_95_64	F(0x840, 32)	/* rts2rts_qp_in.opt_param_mask_95_32 */
#define QP_OPT_PARAM_MASK_63_32	F(0x860, 32)
#define QPC_EXT_DCI_STREAM	F(0x890, 16)	/* qpc_data_ext.dci_stream_channel_id */
#define RTS2RTS_QP_IN_EXT_SIZE	((0x880 + 0x20) / 8)	/* to the stream id */
#define RTS2RTS_QP_IN_SIZE	(0x880 / 8)	/* to opt_param_mask_95_32 */
#define QPC(off, bits)		F(0xc0 + (off), bits)
#define QPC_STATE		QPC(0x00, 4)
#define QPC_DRAIN_SIGERR	QPC(0x25, 1)
#define QPC_PD			QPC(0x28, 24)
#define QPC_UDP_SPORT		QPC(0x1d0, 16)	/* primary_address_path.udp_sport */
#define QPC_HW_SQ_WQEBB_COUNTER	QPC(0x5a0, 16)
#define QUERY_QP_OUT_SIZE	(0x880 / 8)	/* query_qp_out without the PAS */
#define OPT_INIT2INIT_DRAIN_SIGERR (1u << 11)
#define OPT_32_DCI_STREAM_CHANNEL_ID (1u << 0)	/* of opt_param_mask_95_32 */
#define OPT_32_UDP_SPORT	(1u << 2)

enum {
	CMD_QUERY_HCA_CAP	= 0x100,
	CMD_QUERY_ADAPTER	= 0x101,
	CMD_QUERY_ISSI		= 0x10a,
	CMD_GET_DROPPED_PACKET_LOG = 0x10c,
	CMD_NOP			= 0x10d,
	CMD_CREATE_MKEY		= 0x200,
	CMD_RST2INIT_QP		= 0x502,
	CMD_INIT2RTR_QP		= 0x503,
	CMD_RTR2RTS_QP		= 0x504,
	CMD_RTS2RTS_QP		= 0x505,
	CMD_SQERR2RTS_QP	= 0x506,
	CMD_2ERR_QP		= 0x507,
	CMD_2RST_QP		= 0x50a,
	CMD_QUERY_QP		= 0x50b,
	CMD_SQD_RTS_QP		= 0x50c,
	CMD_INIT2INIT_QP	= 0x50e,
	CMD_CREATE_PSV		= 0x600,
	CMD_SET_FLOW_TABLE_ENTRY = 0x936,
	CMD_QUERY_ESW_FUNCTIONS	= 0x740,
	CMD_QUERY_VPORT_STATE	= 0x750,
	CMD_QUERY_ESW_VPORT_CONTEXT = 0x752,
	CMD_QUERY_NIC_VPORT_CONTEXT = 0x754,
	CMD_QUERY_ROCE_ADDRESS	= 0x760,
	CMD_QUERY_HCA_VPORT_CONTEXT = 0x762,
	CMD_QUERY_VNIC_ENV	= 0x76f,
	CMD_QUERY_VPORT_COUNTER	= 0x770,
	CMD_QUERY_CONG_STATUS	= 0x822,
	CMD_QUERY_CONG_PARAMS	= 0x824,
	CMD_QUERY_CONG_STATISTICS = 0x826,
	CMD_QUERY_LAG		= 0x842,
	CMD_GENERAL_START	= 0xb00,	/* general objects */
	CMD_GENERAL_END		= 0xd00,
	CMD_CREATE_GENERAL_OBJECT = 0xa00,
};

enum { STAT_BAD_OP = 0x2, STAT_BAD_PARAM = 0x3, STAT_BAD_RES = 0x5, STAT_LIM = 0x8,
       STAT_NO_RES = 0xf, STAT_BAD_QP_STATE = 0x10, STAT_BAD_OUTP_LEN = 0x51 };
/* the capability pages (query_hca_cap op_mod >> 1), the general object types */
enum {
	CAP_PAGE_GENERAL = 0x0, CAP_PAGE_ODP = 0x2, CAP_PAGE_NIC_FLOW_TABLE = 0x7, CAP_PAGE_QOS = 0xc,
	CAP_PAGE_DEV_MEM = 0xf,
	CAP_PAGE_GENERAL_2 = 0x20
};
enum { OBJ_TYPE_RESERVED_QPN = 0x2c };
enum { MKC_ACCESS_MODE_KLMS = 0x2 };

/*
 * The syndromes of our refusals: the firmware's are its own, undocumented
 * numbers; these say which check failed.
 */
enum { SYND_UNSUPPORTED = 0x4d0001, SYND_MKEY_MODE = 0x4d0002,
       SYND_MKEY_PD = 0x4d0003, SYND_MKEY_SIZE = 0x4d0004, SYND_MKEY_BSF = 0x4d0005,
       SYND_PSV_PD = 0x4d0006, SYND_QP_STATE = 0x4d0007,
       SYND_DCI_STREAM = 0x4d0008, SYND_RQPN_RANGE = 0x4d0009,
       SYND_RQPN_LIMIT = 0x4d000a, SYND_RQPN_SPACE = 0x4d000b,
       SYND_UDP_SPORT = 0x4d000c };

/* ---- the kernel's classification (devx.c) ------------------------------ */

/* devx_is_whitelist_cmd(): allowed to a context without a DEVX uid */
static bool whitelisted(uint16_t op)
{
	return op == CMD_QUERY_HCA_CAP || op == CMD_QUERY_HCA_VPORT_CONTEXT ||
	       op == CMD_QUERY_ESW_VPORT_CONTEXT || op == CMD_QUERY_ESW_FUNCTIONS;
}

/* devx_is_general_cmd() */
static bool general_cmd(uint16_t op)
{
	if (op >= CMD_GENERAL_START && op < CMD_GENERAL_END)
		return true;
	switch (op) {
	case CMD_QUERY_HCA_CAP: case CMD_QUERY_HCA_VPORT_CONTEXT:
	case CMD_QUERY_ESW_VPORT_CONTEXT: case CMD_QUERY_VPORT_STATE:
	case CMD_QUERY_ADAPTER: case CMD_QUERY_ISSI: case CMD_QUERY_NIC_VPORT_CONTEXT:
	case CMD_QUERY_ROCE_ADDRESS: case CMD_QUERY_VNIC_ENV: case CMD_QUERY_VPORT_COUNTER:
	case CMD_GET_DROPPED_PACKET_LOG: case CMD_NOP: case CMD_QUERY_CONG_STATUS:
	case CMD_QUERY_CONG_PARAMS: case CMD_QUERY_CONG_STATISTICS: case CMD_QUERY_LAG:
	case CMD_QUERY_ESW_FUNCTIONS:
		return true;
	default:
		return false;
	}
}

/*
 * devx_is_obj_create_cmd(): the opcodes that create a firmware object
 * (MKEY, CQ, QP, SRQ, XRC_SRQ, DCT, XRQ, the transport and steering
 * objects, PD, XRCD, a multicast attach, counters, general objects), by
 * the PRM's opcode numbers; SET_FLOW_TABLE_ENTRY only as a create (op_mod
 * 0), CREATE_PSV only of one PSV, which one destroy undoes.
 */
static bool obj_create_cmd(const uint8_t *in, uint16_t op)
{
	switch (op) {
	case 0x200: case 0x400: case 0x500: case 0x700: case 0x705: case 0x710:
	case 0x717: case 0x771: case 0x782: case 0x800: case 0x806: case 0x80e:
	case 0x816: case 0x827: case 0x829: case 0x900: case 0x904: case 0x908:
	case 0x90c: case 0x912: case 0x916: case 0x930: case 0x933: case 0x939:
	case 0x93d: case 0x940:
	case CMD_CREATE_GENERAL_OBJECT:
		return true;
	case CMD_SET_FLOW_TABLE_ENTRY:
		return prm_get(in, HDR_OP_MOD) == 0;
	case CMD_CREATE_PSV:
		return prm_get(in, PSV_NUM) == 1;
	default:
		return false;
	}
}

/* devx_get_uid(): the uid a command runs under, or a negative errno */
static int cmd_uid(const struct emu_ctx *ctx, uint16_t op)
{
	if (ctx->devx_uid)
		return ctx->devx_uid;
	/* mlx5_ib has a whitelist uid on every device that reports one (ours) */
	if (whitelisted(op))
		return EMU_DEVX_WHITELIST_UID;
	return -EINVAL;
}

static uint16_t next_uid = EMU_DEVX_WHITELIST_UID + 1;

/* mlx5_ib_devx_create(): the uid of a new DEVX ucontext (CREATE_UCTX) */
uint16_t emu_devx_uid_alloc(void)
{
	if (next_uid == 0)
		next_uid = EMU_DEVX_WHITELIST_UID + 1;
	return next_uid++;
}

/* ---- the emulated firmware --------------------------------------------- */

static void fw_status(uint8_t *out, uint8_t status, uint32_t syndrome)
{
	prm_set(out, OUT_STATUS, status);
	prm_set(out, OUT_SYNDROME, syndrome);
}

/* a command the emulated firmware does not carry out */
static int fw_bad_op(uint8_t *out)
{
	fw_status(out, STAT_BAD_OP, SYND_UNSUPPORTED);
	return EREMOTEIO;
}

/* cmd_hca_cap_2: the bounds of a RESERVED_QPN object (reserved_qpn.c) */
static void general_caps_2(uint8_t *cap)
{
	prm_set(cap, CAP2_LOG_MAX_NUM_RESERVED_QPN, EMU_RQPN_LOG_MAX_NUM);
	prm_set(cap, CAP2_LOG_RESERVED_QPN_GRANULARITY, EMU_RQPN_LOG_GRANULARITY);
	prm_set(cap, CAP2_LOG_RESERVED_QPN_MAX_ALLOC, EMU_RQPN_LOG_MAX_ALLOC);
}

/*
 * The ODP caps page: each transport's caps as the verbs report them
 * (odp.c), DC's too, which libmlx5 reads from here alone
 * (mlx5dv_query_device()'s dc_odp_caps).  No ODP for signature mkeys (sig).
 */
static int odp_caps_page(uint8_t *cap)
{
	for (unsigned t = 0; t < EMU_ODP_TRANSPORTS; t++)
		for (unsigned b = 0; b < ODP_CAP_TRANSPORT_BITS; b++)
			prm_set(cap, ODP_CAP_TRANSPORT_BIT(t, b),
				emu_odp_transport_caps[t] >> b & 1);
	return 0;
}

/*
 * The device memory page: the MEMIC that ibv_alloc_dm() hands out
 * (ioctl_dm.c, in 64-byte units) and, on the cards the profile gives them,
 * its operations on 1-byte accesses (device/memic.c).
 */
static void dev_mem_caps(uint8_t *cap)
{
	bool ops = EMU_CAP(memic_operations) != 0;

	prm_set(cap, DM_MEMIC, 1);
	prm_set(cap, DM_LOG_MIN_MEMIC_ALLOC, 6);
	prm_set(cap, DM_MEMIC_BAR_SIZE, EMU_DM_SIZE);
	prm_set(cap, DM_MAX_MEMIC_SIZE, EMU_DM_SIZE);
	prm_set(cap, DM_MEMIC_OPERATIONS, EMU_CAP(memic_operations));
	prm_set(cap, DM_INCREMENT_SIZE_SUP, ops);
	prm_set(cap, DM_TEST_AND_SET_SIZE_SUP, ops);
}

/*
 * The QoS page: packet pacing as pp.c and query_device (ctx.c) serve it,
 * no scheduling elements (the nic_* and esw_* caps 0).
 */
static void qos_caps(uint8_t *cap)
{
	prm_set(cap, QOS_PACKET_PACING, 1);
	prm_set(cap, QOS_PP_BURST_BOUND, 1);
	prm_set(cap, QOS_PP_TYPICAL_SIZE, 1);
	prm_set(cap, QOS_PP_UID, 1);
	prm_set(cap, QOS_PP_MAX_RATE, EMU_CAP(packet_pacing_max_rate));
	prm_set(cap, QOS_PP_MIN_RATE, EMU_CAP(packet_pacing_min_rate));
	prm_set(cap, QOS_PP_RATE_TABLE_SIZE, EMU_CAP(packet_pacing_rate_table_size));
}

/*
 * The NIC flow table page: the packet reformats mlx5dv offers
 * (flow_action.c, device/reformat.c): the general encap on transmit (the
 * L2_TO_L2_TUNNEL the kernel checks encap_general_header for) and the
 * decap on receive; no L3 tunnels.  The rest reads zeros: the kernel's
 * and libmlx5's software steering (sw_owner) stays off.
 */
static void nic_flow_table_caps(uint8_t *cap)
{
	prm_set(cap, FT_ENCAP_GENERAL_HEADER, 1);
	prm_set(cap, FT_LOG_MAX_REFORMAT, FT_LOG_MAX_REFORMAT_CTX);
	prm_set(cap, FT_MAX_ENCAP_HEADER, EMU_REFORMAT_MAX_DATA);
	prm_set(cap, FT_NIC_RX(FT_PROP_REFORMAT, 1), 1);
	prm_set(cap, FT_NIC_RX(FT_PROP_DECAP, 1), 1);
	prm_set(cap, FT_NIC_TX(FT_PROP_REFORMAT, 1), 1);
}

/*
 * QUERY_HCA_CAP: the general device caps the profile sets (the ones the
 * verbs answers derive from, caps.h), the same for op_mod's current and
 * maximum, with the block signature offload the device models (sho and
 * the signature error CQE's domain and type, which libmlx5 44 needs both
 * of, get_hca_sig_caps(); CRC32C beside the basic T10-DIF and CRC32; not
 * CRC64-XP10 nor 4048-byte blocks), one general object type,
 * RESERVED_QPN, with the second general page that bounds it, the ODP page,
 * the NIC flow table page's packet reformats, the QoS page's packet
 * pacing and the device memory page; every other capability page reads
 * zeros, no feature of it present (no eswitch, no LAG, no crypto).
 */
static int query_hca_cap(const uint8_t *in, uint8_t *out, size_t out_len)
{
	uint16_t type = (uint16_t)(prm_get(in, HDR_OP_MOD) >> 1);
	uint8_t *cap = out + HCA_CAP_OFFSET;

	if (out_len < HCA_CAP_OFFSET + HCA_CAP_SIZE) {
		fw_status(out, STAT_BAD_OUTP_LEN, 0);
		return EREMOTEIO;
	}
	if (type == CAP_PAGE_ODP)
		return odp_caps_page(cap);
	if (type == CAP_PAGE_GENERAL_2)
		general_caps_2(cap);
	if (type == CAP_PAGE_QOS)
		qos_caps(cap);
	if (type == CAP_PAGE_DEV_MEM)
		dev_mem_caps(cap);
	if (type == CAP_PAGE_NIC_FLOW_TABLE)
		nic_flow_table_caps(cap);
	if (type != CAP_PAGE_GENERAL)
		return 0;
	prm_set(cap, CAP_LOG_MAX_SRQ_SZ, EMU_CAP(log_max_srq_sz));
	prm_set(cap, CAP_LOG_MAX_QP_SZ, EMU_CAP(log_max_qp_sz));
	prm_set(cap, CAP_LOG_MAX_QP, EMU_CAP(log_max_qp));
	prm_set(cap, CAP_LOG_MAX_SRQ, EMU_CAP(log_max_srq));
	prm_set(cap, CAP_LOG_MAX_CQ_SZ, EMU_CAP(log_max_cq_sz));
	prm_set(cap, CAP_LOG_MAX_CQ, EMU_CAP(log_max_cq));
	prm_set(cap, CAP_LOG_MAX_MKEY, EMU_CAP(log_max_mkey));
	prm_set(cap, CAP_LOG_MAX_KLM_LIST, EMU_DEVX_LOG_MAX_KLM);
	prm_set(cap, CAP_QPC_EXTENSION, EMU_CAP(qpc_extension));
	prm_set(cap, CAP_LOG_MAX_RA_REQ_QP, EMU_CAP(log_max_ra_req_qp));
	prm_set(cap, CAP_LOG_MAX_RA_RES_QP, EMU_CAP(log_max_ra_res_qp));
	prm_set(cap, CAP_LOCAL_CA_ACK_DELAY, EMU_CAP(local_ca_ack_delay));
	/* port_type: 0 InfiniBand, 1 Ethernet */
	prm_set(cap, CAP_PORT_TYPE, emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET);
	prm_set(cap, CAP_NUM_PORTS, emu_cfg.num_ports);
	prm_set(cap, CAP_LOG_MAX_MSG, EMU_CAP(log_max_msg));
	prm_set(cap, CAP_CQE_VERSION, 1);
	prm_set(cap, CAP_ATOMIC, 1);
	prm_set(cap, CAP_PG, 1);	/* page faults: ODP (odp_caps_page()) */
	/* a RoCE v2 QP's UDP source port set in RTS (rts2rts_qp()) */
	prm_set(cap, CAP_RTS2RTS_UDP_SPORT, emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET);
	prm_set(cap, CAP_XRC, 1);
	prm_set(cap, CAP_UD, 1);
	prm_set(cap, CAP_UC, 1);
	prm_set(cap, CAP_RC, 1);
	prm_set(cap, CAP_MAX_WQE_SZ_SQ, EMU_CAP(max_wqe_sz_sq));
	prm_set(cap, CAP_MAX_WQE_SZ_RQ, EMU_CAP(max_wqe_sz_rq));
	prm_set(cap, CAP_LOG_MAX_PD, EMU_CAP(log_max_pd));
	prm_set(cap, CAP_LOG_MAX_DCI_STREAMS, EMU_CAP(log_max_dci_stream_channels));
	prm_set(cap, CAP_LOG_MAX_DCI_ERRORED, EMU_CAP(log_max_dci_errored_streams));
	/* what query_device's cqe_comp_caps, CQE_128B_COMP and CQE_128B_PAD say (ctx.c) */
	prm_set(cap, CAP_CQE_128_ALWAYS, 1);
	prm_set(cap, CAP_CQE_COMPRESSION, 1);
	prm_set(cap, CAP_CQE_COMPRESSION_128, 1);
	prm_set(cap, CAP_CQE_COMP_MAX_NUM, EMU_CQE_COMP_MAX_NUM);
	prm_set(cap, CAP_SHO, 1);
	prm_set(cap, CAP_QOS, 1);	/* the QoS page: packet pacing */
	prm_set(cap, CAP_SIGERR_DOMAIN_TYPE, 1);
	prm_set(cap, CAP_SIG_CRC32C, 1);
	prm_set(cap, CAP_SIG_CRC64_XP10, 0);
	prm_set(cap, CAP_SIG_BLOCK_4048, 0);
	/* a failed check may stop the SQ (device/sq.c): MLX5DV_QP_CREATE_SIG_PIPELINING */
	prm_set(cap, CAP_DRAIN_SIGERR, 1);
	prm_set(cap, CAP_GENERAL_OBJ_TYPE(OBJ_TYPE_RESERVED_QPN), 1);
	prm_set(cap, CAP_HCA_CAP_2, 1);
	return 0;
}

/* The PD a command names: one of this ucontext's (the firmware checks its uid). */
static struct emu_pd *ctx_pd(const struct emu_ctx *ctx, uint32_t pdn)
{
	struct emu_pd *pd = emu_num_lookup_locked(EMU_NUM_PD, pdn);

	return pd && pd->obj.ctx == ctx ? pd : NULL;
}

/*
 * CREATE_MKEY: the key mlx5dv_create_mkey() asks for and nothing else -
 * access mode KLMs, created free with UMR enabled, on a PD of this
 * ucontext's uid (the firmware checks the PD's uid), with room for at
 * most 2^log_max_klm_list_size entries; the UMR WQEs of the QPs set it up
 * (device/).  A signature context (bsf_en) has the size of the one BSF
 * the device models, the signature one (libmlx5: bsf_octword_size 4); a
 * crypto one (crypto_en), a direct key (MTT, which needs a UMEM) or a KSM
 * one is BAD_PARAM here.
 */
static int create_mkey(struct emu_ioc *b, uint8_t *in, size_t in_len, uint8_t *out,
		       struct emu_obj **out_obj)
{
	struct emu_ctx *ctx = b->ctx;
	unsigned mode;
	uint32_t entries, idx;
	struct emu_mkey *mk;
	struct emu_pd *pd;
	int ret;

	/* devx_handle_mkey_create(): the whole mkey context */
	if (in_len < CREATE_MKEY_IN_MKC_END)
		return EINVAL;
	mode = prm_get(in, MKC_ACCESS_MODE_1_0) | prm_get(in, MKC_ACCESS_MODE_4_2) << 2;
	entries = prm_get(in, MKC_TRANSL_OCTWORDS);
	if (mode != MKC_ACCESS_MODE_KLMS || !prm_get(in, MKC_UMR_EN) ||
	    !prm_get(in, MKC_FREE) || prm_get(in, MKC_CRYPTO_EN)) {
		fw_status(out, STAT_BAD_PARAM, SYND_MKEY_MODE);
		return EREMOTEIO;
	}
	if (prm_get(in, MKC_BSF_EN) && prm_get(in, MKC_BSF_OCTWORDS) != BSF_OCTWORDS) {
		fw_status(out, STAT_BAD_PARAM, SYND_MKEY_BSF);
		return EREMOTEIO;
	}
	pd = ctx_pd(ctx, prm_get(in, MKC_PD));
	if (!pd) {
		fw_status(out, STAT_BAD_RES, SYND_MKEY_PD);
		return EREMOTEIO;
	}
	if (!entries || entries > 1u << EMU_DEVX_LOG_MAX_KLM) {
		fw_status(out, STAT_BAD_PARAM, SYND_MKEY_SIZE);
		return EREMOTEIO;
	}
	mk = emu_obj_alloc(ctx, EMU_OBJ_MKEY, sizeof(*mk), 0);
	if (!mk)
		return ENOMEM;
	mk->ent = calloc(entries, sizeof(*mk->ent));
	ret = mk->ent ? emu_num_alloc_locked(EMU_NUM_MKEY, mk, &idx) : ENOMEM;
	if (ret) {
		free(mk->ent);
		emu_obj_free_locked(&mk->obj);
		return ret;
	}
	mk->pd = pd;
	pd->obj.usecnt++;
	mk->key = idx << 8 | prm_get(in, MKC_MKEY_7_0);
	mk->max_entries = entries;
	mk->umr_en = true;
	mk->free = true;
	mk->rinval = prm_get(in, MKC_EN_RINVAL);
	mk->bsf = prm_get(in, MKC_BSF_EN);
	mk->sigerr_expected = (uint8_t)prm_get(in, MKC_EXPECTED_SIGERR);
	mk->access = (prm_get(in, MKC_LW) ? IBV_ACCESS_LOCAL_WRITE : 0) |
		     (prm_get(in, MKC_RW) ? IBV_ACCESS_REMOTE_WRITE : 0) |
		     (prm_get(in, MKC_RR) ? IBV_ACCESS_REMOTE_READ : 0) |
		     (prm_get(in, MKC_A) ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	prm_set(out, CREATE_MKEY_OUT_INDEX, idx);
	*out_obj = &mk->obj;
	emu_dbg("devx mkey %#x: %u entries, pd %u\n", mk->key, entries, pd->pdn);
	return 0;
}

void emu_mkey_destroy_locked(struct emu_mkey *mk)
{
	mk->pd->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_MKEY, mk->key >> 8);
	if (mk->sig)
		free(mk->sig->img);
	free(mk->sig);
	free(mk->ent);
	emu_obj_free_locked(&mk->obj);
}

/*
 * CREATE_PSV of one PSV (the kernel lets no other number through) on a
 * PD of this ucontext: its index in psv0_index.  Its signature is what
 * the SET_PSV WQEs set (device/mkey.c).
 */
static int create_psv(struct emu_ioc *b, const uint8_t *in, uint8_t *out,
		      struct emu_obj **out_obj)
{
	struct emu_pd *pd = ctx_pd(b->ctx, prm_get(in, PSV_PD));
	struct emu_psv *psv;
	int ret;

	if (!pd) {
		fw_status(out, STAT_BAD_RES, SYND_PSV_PD);
		return EREMOTEIO;
	}
	psv = emu_obj_alloc(b->ctx, EMU_OBJ_PSV, sizeof(*psv), 0);
	if (!psv)
		return ENOMEM;
	ret = emu_num_alloc_locked(EMU_NUM_PSV, psv, &psv->psvn);
	if (ret) {
		emu_obj_free_locked(&psv->obj);
		return ret;
	}
	psv->pd = pd;
	pd->obj.usecnt++;
	prm_set(out, PSV_OUT_INDEX0, psv->psvn);
	*out_obj = &psv->obj;
	return 0;
}

/* DESTROY_PSV, which the kernel sends when the object goes */
void emu_psv_destroy_locked(struct emu_psv *psv)
{
	psv->pd->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_PSV, psv->psvn);
	emu_obj_free_locked(&psv->obj);
}

/*
 * CREATE_GENERAL_OBJECT of a RESERVED_QPN: 2^log_obj_range numbers, a
 * range the second caps page allows (BAD_PARAM otherwise); past the
 * function's limit LIM (libmlx5: ENOMEM), without a free range NO_RES
 * (EAGAIN).  The object id is the first number.
 */
static int create_reserved_qpn(struct emu_ioc *b, const uint8_t *in, uint8_t *out,
			       struct emu_obj **out_obj)
{
	unsigned log_n = prm_get(in, HDR_LOG_OBJ_RANGE);
	struct emu_rqpn *r;
	int ret;

	if (log_n < EMU_RQPN_LOG_GRANULARITY || log_n > EMU_RQPN_LOG_MAX_ALLOC) {
		fw_status(out, STAT_BAD_PARAM, SYND_RQPN_RANGE);
		return EREMOTEIO;
	}
	ret = emu_rqpn_create_locked(b->ctx, log_n, &r);
	if (ret == EDQUOT)
		fw_status(out, STAT_LIM, SYND_RQPN_LIMIT);
	else if (ret == ENOSPC)
		fw_status(out, STAT_NO_RES, SYND_RQPN_SPACE);
	if (ret == EDQUOT || ret == ENOSPC)
		return EREMOTEIO;
	if (ret)
		return ret;
	prm_set(out, OUT_OBJ_ID, r->first);
	*out_obj = &r->obj;
	return 0;
}

/*
 * The QP commands a verbs QP takes through DEVX (mlx5dv_devx_qp_modify()
 * and _query()), as libmlx5 44 sends them: INIT2INIT_QP setting the QP
 * context's drain_sigerr (mlx5_modify_qp_drain_sigerr(), for
 * MLX5DV_QP_CREATE_SIG_PIPELINING) and QUERY_QP for the state and the SQ's
 * hardware WQEBB counter (mlx5dv_qp_cancel_posted_send_wrs()), and
 * RTS2RTS_QP resetting a DCI stream in error (mlx5dv_dci_stream_id_reset())
 * or setting the UDP source port (mlx5dv_modify_qp_udp_sport()).
 * The other state transitions and optional parameters go through
 * ibv_modify_qp(); here they are BAD_OP and BAD_PARAM.
 */
static bool qp_modify_cmd(uint16_t op)
{
	switch (op) {
	case CMD_RST2INIT_QP: case CMD_INIT2RTR_QP: case CMD_RTR2RTS_QP:
	case CMD_RTS2RTS_QP: case CMD_SQERR2RTS_QP: case CMD_2ERR_QP:
	case CMD_2RST_QP: case CMD_SQD_RTS_QP: case CMD_INIT2INIT_QP:
		return true;
	default:
		return false;
	}
}

static int init2init_qp(struct emu_qp *qp, const uint8_t *in, size_t in_len, uint8_t *out)
{
	uint32_t opt = prm_get(in, QP_OPT_PARAM_MASK);

	if (in_len < (0xc0 + 0x740) / 8 || (opt & ~OPT_INIT2INIT_DRAIN_SIGERR)) {
		fw_status(out, STAT_BAD_PARAM, SYND_UNSUPPORTED);
		return EREMOTEIO;
	}
	if (qp->attr.state != IBV_QPS_INIT) {
		fw_status(out, STAT_BAD_QP_STATE, SYND_QP_STATE);
		return EREMOTEIO;
	}
	if (opt & OPT_INIT2INIT_DRAIN_SIGERR)
		qp->drain_sigerr = prm_get(in, QPC_DRAIN_SIGERR);
	return 0;
}

static int fw_refuse(uint8_t *out, uint8_t status, uint32_t syndrome)
{
	fw_status(out, status, syndrome);
	return EREMOTEIO;
}

/*
 * RTS2RTS_QP with optional parameters of opt_param_mask_95_32 only:
 * - the QP context extension's dci_stream_channel_id: the stream leaves
 *   error, its next WQEs run (device/sq.c).  A stream not in error, or a
 *   QP without streams, is BAD_PARAM, as rdma-core's test_mlx5_dc expects
 *   of a reset of a good stream.
 * - the primary path's udp_sport (mlx5dv_modify_qp_udp_sport()), on a QP
 *   that has one (emu_qp_has_udp_sport()), else BAD_PARAM.  It only feeds the
 *   ECMP hashing of a real fabric; the emulated wire has no UDP header, so
 *   QUERY_QP is all that sees it.
 * Everything is checked before anything changes.
 */
static int rts2rts_qp(struct emu_qp *qp, const uint8_t *in, size_t in_len, uint8_t *out)
{
	const uint32_t known = OPT_32_DCI_STREAM_CHANNEL_ID | OPT_32_UDP_SPORT;
	bool stream, sport;
	uint32_t opt;

	if (in_len < RTS2RTS_QP_IN_SIZE || prm_get(in, QP_OPT_PARAM_MASK) ||
	    prm_get(in, QP_OPT_PARAM_MASK_95_64))
		return fw_refuse(out, STAT_BAD_PARAM, SYND_UNSUPPORTED);
	opt = prm_get(in, QP_OPT_PARAM_MASK_63_32);
	stream = opt & OPT_32_DCI_STREAM_CHANNEL_ID;
	sport = opt & OPT_32_UDP_SPORT;
	if (!opt || (opt & ~known) ||
	    (stream && (in_len < RTS2RTS_QP_IN_EXT_SIZE || !prm_get(in, QP_IN_QPC_EXT))))
		return fw_refuse(out, STAT_BAD_PARAM, SYND_UNSUPPORTED);
	if (qp->attr.state != IBV_QPS_RTS)
		return fw_refuse(out, STAT_BAD_QP_STATE, SYND_QP_STATE);
	if (sport && !emu_qp_has_udp_sport(qp))
		return fw_refuse(out, STAT_BAD_PARAM, SYND_UDP_SPORT);
	if (stream) {
		uint16_t id = (uint16_t)prm_get(in, QPC_EXT_DCI_STREAM);
		unsigned i = 0;

		while (i < qp->dci_n_errored && qp->dci_errored[i] != id)
			i++;
		if (!qp->dci_streams || i == qp->dci_n_errored)
			return fw_refuse(out, STAT_BAD_PARAM, SYND_DCI_STREAM);
		memmove(&qp->dci_errored[i], &qp->dci_errored[i + 1],
			(size_t)(qp->dci_n_errored - i - 1) * sizeof(qp->dci_errored[0]));
		qp->dci_n_errored--;
	}
	if (sport)
		qp->udp_sport = (uint16_t)prm_get(in, QPC_UDP_SPORT);
	return 0;
}

/* the qpc state of an ibv_qp_state: RST, INIT, RTR, RTS, SQER (4), SQD (5), ERR */
static uint32_t qpc_state(enum ibv_qp_state st)
{
	switch (st) {
	case IBV_QPS_SQE:	return 4;
	case IBV_QPS_SQD:	return 5;
	case IBV_QPS_ERR:	return 6;
	default:		return (uint32_t)st;	/* RESET 0 ... RTS 3 */
	}
}

/*
 * QUERY_QP: the state, the PD, drain_sigerr, the primary path's UDP source
 * port and the SQ's hardware counter
 */
static int query_qp(const struct emu_qp *qp, uint8_t *out, size_t out_len)
{
	if (out_len < QUERY_QP_OUT_SIZE) {
		fw_status(out, STAT_BAD_OUTP_LEN, 0);
		return EREMOTEIO;
	}
	prm_set(out, QPC_STATE, qpc_state(qp->attr.state));
	prm_set(out, QPC_DRAIN_SIGERR, qp->drain_sigerr);
	prm_set(out, QPC_UDP_SPORT, qp->udp_sport);
	if (qp->pd)
		prm_set(out, QPC_PD, qp->pd->pdn);
	prm_set(out, QPC_HW_SQ_WQEBB_COUNTER, emu_dev_qp_sq_counter(qp));
	return 0;
}

/* ---- the methods -------------------------------------------------------- */

/* the command mailbox of `id` (ALLOC_AND_COPY), and an output one as long as `out_id` */
static int mailboxes(struct emu_ioc *b, uint16_t id, uint16_t out_id, uint8_t **in,
		     size_t *in_len, uint8_t **out, size_t *out_len)
{
	const struct ib_uverbs_attr *o = emu_ioc_get(b, out_id);
	void *buf;
	int ret = emu_ioc_dup(b, id, &buf, in_len);

	if (ret)
		return ret;
	*in = buf;
	*out_len = o->len;
	*out = calloc(1, o->len);
	if (!*out) {
		free(buf);
		return ENOMEM;
	}
	return 0;
}

/*
 * The output mailbox back to the caller after the firmware ran: on
 * success, and on a firmware refusal (EREMOTEIO, the status inside).
 */
static int copy_out(struct emu_ioc *b, uint16_t id, const uint8_t *out, size_t len, int ret)
{
	int ret2;

	if (ret && ret != EREMOTEIO)
		return ret;
	ret2 = emu_ioc_copy_to(b, id, out, len);
	return ret2 ? ret2 : ret;
}

/* The mailboxes done with: the output back to the caller (copy_out()), both freed. */
static int mailboxes_done(struct emu_ioc *b, uint16_t out_id, uint8_t *in, uint8_t *out,
			  size_t out_len, int ret)
{
	ret = copy_out(b, out_id, out, out_len, ret);
	free(in);
	free(out);
	return ret;
}

/* MLX5_IB_METHOD_DEVX_OTHER (mlx5dv_devx_general_cmd()) */
static int devx_other(struct emu_ioc *b)
{
	uint8_t *in, *out;
	size_t in_len, out_len;
	uint16_t op;
	int ret, uid;

	ret = mailboxes(b, MLX5_IB_ATTR_DEVX_OTHER_CMD_IN, MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT,
			&in, &in_len, &out, &out_len);
	if (ret)
		return ret;
	op = (uint16_t)prm_get(in, HDR_OPCODE);
	uid = cmd_uid(b->ctx, op);
	if (uid < 0)
		ret = -uid;
	else if (!general_cmd(op))
		ret = EINVAL;
	else if (op == CMD_QUERY_HCA_CAP)
		ret = query_hca_cap(in, out, out_len);
	else
		ret = fw_bad_op(out);
	return mailboxes_done(b, MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT, in, out, out_len, ret);
}

/*
 * The kernel's checks of an object command (devx_obj_create(), _modify(),
 * _query()): no VHCA tunnel, a uid to run under, and a command of the
 * method's kind for that object (kind_ok); 0 or the errno.
 */
static int obj_cmd_checks(const struct emu_ioc *b, const uint8_t *in, uint16_t op,
			  bool kind_ok)
{
	int uid = cmd_uid(b->ctx, op);

	if (prm_get(in, HDR_VHCA_TUNNEL_ID))
		return EINVAL;
	if (uid < 0)
		return -uid;
	return kind_ok ? 0 : EINVAL;
}

/* MLX5_IB_METHOD_DEVX_OBJ_CREATE (mlx5dv_devx_obj_create()) */
static int devx_obj_create(struct emu_ioc *b)
{
	struct emu_obj *o = NULL;
	uint8_t *in, *out;
	size_t in_len, out_len;
	uint16_t op;
	int ret;

	ret = mailboxes(b, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN,
			MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT, &in, &in_len, &out, &out_len);
	if (ret)
		return ret;
	op = (uint16_t)prm_get(in, HDR_OPCODE);
	ret = obj_cmd_checks(b, in, op, obj_create_cmd(in, op));
	if (!ret && op == CMD_CREATE_MKEY)
		ret = create_mkey(b, in, in_len, out, &o);
	else if (!ret && op == CMD_CREATE_PSV)
		ret = create_psv(b, in, out, &o);
	else if (!ret && op == CMD_CREATE_GENERAL_OBJECT &&
		 prm_get(in, HDR_OBJ_TYPE) == OBJ_TYPE_RESERVED_QPN)
		ret = create_reserved_qpn(b, in, out, &o);
	else if (!ret)
		ret = fw_bad_op(out);
	if (!ret) {
		ret = emu_ioc_put_new_obj(b, MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, o);
		if (!ret)
			ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT, out,
					      out_len);
	} else {
		ret = copy_out(b, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT, out, out_len, ret);
	}
	free(in);
	free(out);
	return ret;
}

/*
 * MLX5_IB_METHOD_DEVX_OBJ_DESTROY (mlx5dv_devx_obj_destroy()): the
 * destroy command the kernel built at creation runs.  A handle of another
 * kind of object is the framework's EINVAL.
 */
static int devx_obj_destroy(struct emu_ioc *b)
{
	static const enum emu_obj_type devx_types[] = {
		EMU_OBJ_MKEY, EMU_OBJ_PSV, EMU_OBJ_RESERVED_QPN,
	};
	struct emu_obj *o = NULL;
	int ret = EINVAL;

	for (size_t i = 0; !o && ret == EINVAL && i < EMU_ARRAY_SIZE(devx_types); i++)
		o = emu_ioc_get_obj(b, MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE, devx_types[i], &ret);
	if (!o)
		return ret;
	emu_obj_destroy_locked(o);
	return 0;
}

/*
 * MLX5_IB_METHOD_DEVX_OBJ_MODIFY and _QUERY on a QP (devx_obj_modify(),
 * devx_obj_query()): the kernel checks the uid, that the opcode modifies
 * (queries) an object, and that the command names the object of the
 * handle (devx_is_valid_obj_id(): the QP's number), EINVAL otherwise.
 * A DCT is named as the object CREATE_DCT made, so no QP command is
 * ever its own: all are EINVAL (its DCT commands are not modelled).
 * Handles of the other objects this emulator creates through DEVX (mkeys,
 * PSVs) are EINVAL: no command modifies or queries them here.
 */
static int devx_obj_cmd(struct emu_ioc *b, bool modify)
{
	uint16_t h = modify ? MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE :
		     MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE;
	uint16_t in_id = modify ? MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN :
			 MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN;
	uint16_t out_id = modify ? MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT :
			  MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT;
	struct emu_qp *qp;
	uint8_t *in, *out;
	size_t in_len, out_len;
	uint16_t op;
	int ret;

	qp = emu_ioc_get_obj(b, h, EMU_OBJ_QP, &ret);
	if (!qp)
		return ret;
	ret = mailboxes(b, in_id, out_id, &in, &in_len, &out, &out_len);
	if (ret)
		return ret;
	op = (uint16_t)prm_get(in, HDR_OPCODE);
	ret = obj_cmd_checks(b, in, op, (modify ? qp_modify_cmd(op) : op == CMD_QUERY_QP) &&
				     qp->dc != EMU_DC_DCT && prm_get(in, QP_IN_QPN) == qp->qpn);
	if (!ret && op == CMD_INIT2INIT_QP)
		ret = init2init_qp(qp, in, in_len, out);
	else if (!ret && op == CMD_RTS2RTS_QP)
		ret = rts2rts_qp(qp, in, in_len, out);
	else if (!ret && op == CMD_QUERY_QP)
		ret = query_qp(qp, out, out_len);
	else if (!ret)
		ret = fw_bad_op(out);
	return mailboxes_done(b, out_id, in, out, out_len, ret);
}

static int devx_obj_modify(struct emu_ioc *b)
{
	return devx_obj_cmd(b, true);
}

static int devx_obj_query(struct emu_ioc *b)
{
	return devx_obj_cmd(b, false);
}

#define MAND		EMU_IOC_MANDATORY
/* UVERBS_ATTR_PTR_IN/OUT_SZ with UVERBS_ATTR_MIN_SIZE(a mailbox header) */
#define MBOX_IN(id)	{ id, EMU_IOC_PTR_IN, MAND, MBOX_HDR_SIZE, UINT16_MAX }
#define MBOX_OUT(id)	{ id, EMU_IOC_PTR_OUT, MAND, MBOX_HDR_SIZE, UINT16_MAX }

const struct emu_ioc_method emu_ioc_devx_methods[] = {
	{ MLX5_IB_OBJECT_DEVX, MLX5_IB_METHOD_DEVX_OTHER, devx_other, false, {
		MBOX_IN(MLX5_IB_ATTR_DEVX_OTHER_CMD_IN),
		MBOX_OUT(MLX5_IB_ATTR_DEVX_OTHER_CMD_OUT) } },
	{ MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_CREATE, devx_obj_create, false, {
		{ MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		MBOX_IN(MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN),
		MBOX_OUT(MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT) } },
	{ MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY, devx_obj_destroy, false, {
		{ MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 } } },
	{ MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_MODIFY, devx_obj_modify, false, {
		{ MLX5_IB_ATTR_DEVX_OBJ_MODIFY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 },
		MBOX_IN(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_IN),
		MBOX_OUT(MLX5_IB_ATTR_DEVX_OBJ_MODIFY_CMD_OUT) } },
	{ MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_QUERY, devx_obj_query, false, {
		{ MLX5_IB_ATTR_DEVX_OBJ_QUERY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 },
		MBOX_IN(MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_IN),
		MBOX_OUT(MLX5_IB_ATTR_DEVX_OBJ_QUERY_CMD_OUT) } },
};

const size_t emu_ioc_devx_methods_count = EMU_ARRAY_SIZE(emu_ioc_devx_methods);
