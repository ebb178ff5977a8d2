/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * profile.h - the ConnectX models the emulated HCA can be.
 *
 * A profile holds what the firmware reports to the kernel's mlx5 driver
 * (the QUERY_HCA_CAP fields of the PRM, named as in the kernel's
 * include/linux/mlx5/mlx5_ifc.h), not what libibverbs finally shows: the
 * fake kernel (kernel/ctx.c) derives the verbs answers from these caps the
 * way drivers/infiniband/hw/mlx5/main.c does (mlx5_ib_query_device(),
 * mlx5_query_hca_port(), mlx5_query_port_roce()), so the two stay
 * consistent the way they are on hardware.
 *
 * RFEMU_PART_ID selects the profile (base/config.c); emu_cfg.profile points
 * at it.  Every other layer reads device facts from here, e.g. the core
 * clock for timestamps: emu_cfg.profile->device_frequency_khz.
 */
#ifndef RDMAFAST_EMU_BASE_PROFILE_H
#define RDMAFAST_EMU_BASE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

/* One link as the port reports it (IB_WIDTH_*, IB_SPEED_* encodings). */
struct emu_link {
	uint8_t		width;		/* active_width: 2 = 4X */
	uint8_t		speed;		/* active_speed: 32 EDR, 64 HDR, 128 NDR */
	const char	*rate;		/* sysfs ports/N/rate */
};

struct emu_profile {
	uint16_t	part_id;	/* PCI device id = vendor_part_id */
	const char	*name;
	const char	*fw_ver;	/* default RFEMU_FW_VER */
	const char	*board_id;	/* default RFEMU_BOARD_ID (the PSID) */
	bool		eth_only;	/* no InfiniBand link layer at all */

	/* general device caps (log2 where the PRM field is) */
	uint8_t		log_max_qp;
	uint8_t		log_max_qp_sz;
	uint8_t		log_max_cq;
	uint8_t		log_max_cq_sz;
	uint8_t		log_max_mkey;
	uint8_t		log_max_pd;
	uint8_t		log_max_srq;
	uint8_t		log_max_srq_sz;
	uint8_t		log_max_ra_req_qp;
	uint8_t		log_max_ra_res_qp;
	uint8_t		log_max_msg;
	uint8_t		log_max_mcg;
	uint16_t	max_qp_mcg;
	uint16_t	max_wqe_sz_sq;	/* bytes */
	uint16_t	max_wqe_sz_rq;	/* bytes */
	uint8_t		local_ca_ack_delay;
	uint32_t	device_frequency_khz;	/* hca_core_clock: the ONE place */
	bool		cq_moderation;
	uint16_t	pkey_table_len;	/* entries (the cap decoded) */
	uint16_t	gid_table_len;	/* entries on InfiniBand */
	uint16_t	roce_address_table_size;	/* GID entries on RoCE */
	uint8_t		vl_cap;		/* max_vl_num: 4 = VL0-7 */
	/* tag matching (the XRQ of the PRM): a TM SRQ's list of tagged buffers */
	bool		tag_matching;
	bool		rndv_offload_rc;	/* rendezvous on RC QPs */
	uint8_t		log_tag_matching_list_sz;
	/* DCI streams: the channels one DCI may have, and how many may be in error */
	uint8_t		log_max_dci_stream_channels;
	uint8_t		log_max_dci_errored_streams;
	/* the QP context extension (qpc_ext) of QP commands: a stream's reset */
	bool		qpc_extension;
	/*
	 * MEMIC operations (the device memory caps page): bit 0 atomic
	 * increment, bit 1 test-and-set, each on 1-byte accesses
	 * (mlx5dv_dm_map_op_addr(), kernel/ioctl_dm.c, device/memic.c)
	 */
	uint8_t		memic_operations;
	/*
	 * Packet pacing (the QoS caps page): the rates a rate limit entry
	 * may have, in kbps, and the entries of the device's table (the
	 * first is the firmware's "unlimited").  Every modelled card has it,
	 * with burst and typical packet sizes and entries under a uid.
	 */
	uint32_t	packet_pacing_min_rate;
	uint32_t	packet_pacing_max_rate;
	uint16_t	packet_pacing_rate_table_size;

	/* InfiniBand PortInfo as the firmware answers it */
	uint32_t	ib_port_cap_flags;
	uint16_t	ib_port_cap_flags2;
	struct emu_link	ib_link;
	struct emu_link	eth_link;
};

/* The kernel's MLX5_MAX_CQ_COUNT / MLX5_MAX_CQ_PERIOD (cq.c, mlx5_ib.h). */
#define EMU_MAX_CQ_COUNT	0xffff
#define EMU_MAX_CQ_PERIOD	0xfff	/* us */

/* The profile of a part id, or NULL if none is modelled. */
const struct emu_profile *emu_profile_find(uint32_t part_id);

/* The default part: a ConnectX-6. */
#define EMU_DEFAULT_PART_ID	0x101b

#endif /* RDMAFAST_EMU_BASE_PROFILE_H */
