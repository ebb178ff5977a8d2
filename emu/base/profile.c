/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * profile.c - the caps of each modelled ConnectX (profile.h).
 *
 * Where the cards differ, the values are those that `ibv_devinfo -v` on the
 * real adapters shows, turned back into the firmware caps the kernel derives
 * them from:
 *
 *   ConnectX-5 (0x1017): max_qp 262144, max_pd 16777216, max_res_rd_atom
 *     4194304, board MT_0000000008 (open-mpi/ompi#6137, rapidsai/ucx-py#361,
 *     openucx/ucx#8139); hca_core_clock 78125 kHz (a ConnectX-5 Ex, fw
 *     16.32, in a published RoCE debugging session).
 *   ConnectX-6 (0x101b), firmware 20.37: max_qp 131072, max_pd/max_srq
 *     8388608, max_res_rd_atom 2097152, hca_core_clock 156250 kHz, HDR,
 *     pkey_tbl_len 128, gid_tbl_len 8, port_cap_flags 0xa259e848 and
 *     port_cap_flags2 0x0032 (issue 16; the same limits in openucx/ucx#9212).
 *   ConnectX-6 Dx (0x101d): Ethernet only; on RoCE every mlx5 port reports
 *     pkey_tbl_len 1, gid_tbl_len 255 and port_cap_flags 0x04010000
 *     (openucx/ucx#10420, #10430).
 *   ConnectX-7 (0x1021): NDR, whose active_speed 128 the kernel reports only
 *     with IB_PORT_LINK_SPEED_NDR_SUP in port_cap_flags2
 *     (drivers/infiniband/hw/mlx5/mad.c, mlx5_query_mad_ifc_port(); seen
 *     in openucx/ucx#10298).
 *
 * No public output was found for the object limits and core clock of the
 * ConnectX-6 Dx and ConnectX-7: they take the ConnectX-6's.
 *
 * Packet pacing (PP_CAPS below): mlx5_core logs its rate table at probe,
 * "Rate limit: 127 rates are supported, range: 0Mbps to 97656Mbps" on a
 * 100G ConnectX-5 (fw 16.35), to 24414Mbps on a 25G one and to 195312Mbps
 * on a 200G BlueField-3 (the kernel prints the kbps >> 10), and a 100G
 * RoCE ConnectX's `ibv_devinfo -v` shows qp_rate_limit_min 1kbps and
 * qp_rate_limit_max 100000000kbps: a table of 128 entries, from 1 kbps to
 * the port's speed, which the ConnectX-6 (200G) and ConnectX-7 (400G)
 * take as well.
 *
 * DCI streams (DCS_CAPS below) are on the ConnectX-6 Dx and ConnectX-7
 * only.  The caps came with kernel 5.15 and rdma-core v37 (2021), after
 * the ConnectX-5 and ConnectX-6 generations, and UCX keeps its DCI pools
 * for "older HW generations" beside them (openucx/ucx#8445); no public
 * QUERY_HCA_CAP dump of any card shows the two fields, so which cards have
 * them is this model's choice, and so are the values: 2^8 channels, the
 * most UCX uses (openucx/ucx#10101, "all 256 DCI channels"), and 2^3
 * errored streams, a placeholder (rdma-core's test_mlx5_dc asks for at
 * most 2^3 of either).  MEMIC operations (MEMIC_OPS below) follow the same
 * choice: they came with kernel 5.13 and rdma-core v35 (2021, "RDMA/mlx5:
 * Add support in MEMIC operations"), and no public dump of the device
 * memory caps says which cards set memic_operations.  The board ids
 * of those two and the ConnectX-6 are PSIDs of the MT_ form Mellanox-branded
 * cards report; the numbers themselves are placeholders.  Firmware versions
 * are those of one release (xx.37.1014) for each family's prefix.
 */
#include <stddef.h>

#include "profile.h"

/* The caps that all four share (PRM, QUERY_HCA_CAP general device caps). */
#define COMMON_CAPS							\
	.log_max_qp_sz = 15,		/* max_qp_wr 32768 */		\
	.log_max_cq = 24,						\
	.log_max_cq_sz = 22,		/* max_cqe 4194303 */		\
	.log_max_mkey = 24,		/* max_mr, max_mw */		\
	.log_max_srq = 23,						\
	.log_max_srq_sz = 15,		/* max_srq_wr 32767 */		\
	.log_max_ra_req_qp = 4,		/* max_qp_rd_atom 16 */		\
	.log_max_ra_res_qp = 4,		/* max_qp_init_rd_atom 16 */	\
	.log_max_msg = 30,		/* max_msg_sz 0x40000000 */	\
	.log_max_mcg = 21,						\
	.max_qp_mcg = 240,						\
	.max_wqe_sz_sq = 1024,						\
	.max_wqe_sz_rq = 512,						\
	.local_ca_ack_delay = 16,					\
	.cq_moderation = true,						\
	.pkey_table_len = 128,						\
	.gid_table_len = 8,						\
	.roce_address_table_size = 255,					\
	.vl_cap = 4,							\
	TM_CAPS, PP_CAPS

/*
 * Hardware tag matching came with the ConnectX-5 and every later model has
 * it.  log_tag_matching_list_sz 7 is what max_num_tags 127 (the kernel
 * reports 2^n - 1) turns back into; no public output of the other cards'
 * list size was found, so all four take it.
 */
#define TM_CAPS								\
	.tag_matching = true,						\
	.rndv_offload_rc = true,					\
	.log_tag_matching_list_sz = 7

/* packet pacing: the rates from 1 kbps, 127 entries beside "unlimited" */
#define PP_CAPS								\
	.packet_pacing_min_rate = 1,					\
	.packet_pacing_rate_table_size = 128

/*
 * PortInfo:CapabilityMask of a ConnectX HCA port (IB_PORT_* bits of the
 * kernel's include/rdma/ib_verbs.h), CAP_MASK2_SUP among them, so the
 * kernel also reads CapabilityMask2 (include/rdma/ib_mad.h bits):
 * EX_PORT_INFO_EX 0x2, LINK_WIDTH_2X 0x10, LINK_SPEED_HDR 0x20,
 * LINK_SPEED_NDR 0x400.
 */
#define CX_IB_PORT_CAP_FLAGS	0xa259e848u

/*
 * DCI streams: log_max_dci_stream_channels, log_max_dci_errored_streams
 * (at most 3: kernel.h's EMU_DCI_ERRORED_MAX), and the QP context
 * extension that mlx5dv_dci_stream_id_reset() needs (qpc_extension).
 */
#define DCS_CAPS							\
	.log_max_dci_stream_channels = 8,				\
	.log_max_dci_errored_streams = 3,				\
	.qpc_extension = true

/* MEMIC operations: atomic increment and test-and-set, 1-byte accesses */
#define MEMIC_OPS	.memic_operations = 0x3

#define LINK_EDR	{ .width = 2, .speed = 32, .rate = "100 Gb/sec (4X EDR)" }
#define LINK_HDR	{ .width = 2, .speed = 64, .rate = "200 Gb/sec (4X HDR)" }
#define LINK_NDR	{ .width = 2, .speed = 128, .rate = "400 Gb/sec (4X NDR)" }

static const struct emu_profile profiles[] = {
	{
		.part_id = 0x1017, .name = "ConnectX-5",
		.fw_ver = "16.35.1012", .board_id = "MT_0000000008",
		COMMON_CAPS,
		.log_max_qp = 18, .log_max_pd = 24,
		.device_frequency_khz = 78125,
		.ib_port_cap_flags = CX_IB_PORT_CAP_FLAGS,
		.ib_port_cap_flags2 = 0x0002,		/* EDR: no HDR, no 2X */
		.packet_pacing_max_rate = 100000000,
		.ib_link = LINK_EDR, .eth_link = LINK_EDR,	/* 100GbE: 4 x 25G */
	},
	{
		.part_id = 0x101b, .name = "ConnectX-6",
		.fw_ver = "20.37.1014", .board_id = "MT_0000000223",
		COMMON_CAPS,
		.log_max_qp = 17, .log_max_pd = 23,
		.device_frequency_khz = 156250,
		.ib_port_cap_flags = CX_IB_PORT_CAP_FLAGS,
		.ib_port_cap_flags2 = 0x0032,
		.packet_pacing_max_rate = 200000000,
		.ib_link = LINK_HDR, .eth_link = LINK_HDR,	/* 200GbE: 4 x 50G */
	},
	{
		.part_id = 0x101d, .name = "ConnectX-6 Dx",
		.fw_ver = "22.37.1014", .board_id = "MT_0000000359",
		.eth_only = true,
		COMMON_CAPS, DCS_CAPS, MEMIC_OPS,
		.log_max_qp = 17, .log_max_pd = 23,
		.device_frequency_khz = 156250,
		.packet_pacing_max_rate = 100000000,
		.eth_link = LINK_EDR,				/* 100GbE */
	},
	{
		.part_id = 0x1021, .name = "ConnectX-7",
		.fw_ver = "28.37.1014", .board_id = "MT_0000000838",
		COMMON_CAPS, DCS_CAPS, MEMIC_OPS,
		.log_max_qp = 17, .log_max_pd = 23,
		.device_frequency_khz = 156250,
		.ib_port_cap_flags = CX_IB_PORT_CAP_FLAGS,
		.ib_port_cap_flags2 = 0x0432,
		.packet_pacing_max_rate = 400000000,
		.ib_link = LINK_NDR, .eth_link = LINK_NDR,	/* 400GbE: 4 x 100G */
	},
};

const struct emu_profile *emu_profile_find(uint32_t part_id)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (profiles[i].part_id == part_id)
			return &profiles[i];
	return NULL;
}
