/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ctx.c - GET_CONTEXT, QUERY_DEVICE (legacy and extended), QUERY_PORT.
 *
 * The answers are those the kernel's mlx5 driver gives for the device of
 * the profile (base/profile.h), derived from its caps as
 * drivers/infiniband/hw/mlx5/main.c derives them (kernel/caps.h).  The
 * emulator numbers at most EMU_NUM_IDX_MASK objects of each kind per host:
 * beyond that a create fails with ENOMEM, as a real HCA does when its
 * memory runs out long before max_qp.
 */
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

/*
 * The device's free-running clock in kHz (hca_core_clock), the profile's
 * device_frequency_khz: read by QUERY_DEVICE_EX and by the counter of clock.c.
 */
uint32_t emu_core_clock_khz(void)
{
	return EMU_CAP(device_frequency_khz);
}

bool emu_port_valid(const struct emu_ctx *ctx, unsigned port)
{
	(void)ctx;
	return port >= 1 && port <= emu_cfg.num_ports;
}

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

int emu_cmd_get_context(struct emu_cmd *c)
{
	struct emu_ctx *ctx = c->ctx;
	struct ib_uverbs_get_context_resp *resp = c->out;
	struct mlx5_ib_alloc_ucontext_req_v2 req = {};
	struct mlx5_ib_alloc_ucontext_resp drv = {};
	uint32_t total;
	int ret;

	/* one ucontext per open file */
	if (ctx->have_context)
		return EINVAL;
	/*
	 * mlx5_ib_alloc_ucontext(): the v0 request exactly, or v2 at least up
	 * to max_cqe_version; unknown flags, comp_mask and reserved fields
	 * are EOPNOTSUPP.
	 */
	if (c->drv_in_len != sizeof(struct mlx5_ib_alloc_ucontext_req) &&
	    c->drv_in_len < offsetof(struct mlx5_ib_alloc_ucontext_req_v2, max_cqe_version))
		return EINVAL;
	memcpy(&req, c->drv_in, min_sz(c->drv_in_len, sizeof(req)));
	if ((req.flags & ~MLX5_IB_ALLOC_UCTX_DEVX) || req.comp_mask ||
	    req.reserved0 || req.reserved1 || req.reserved2)
		return EOPNOTSUPP;

	/*
	 * Static bfreg scheme (rdma-core providers/mlx5/mlx5.c, the kernel's
	 * drivers/infiniband/hw/mlx5/main.c): round the request up to whole
	 * UARs of 2 usable bfregs; the low-latency ones must leave bfreg 0.
	 */
	total = (req.total_num_bfregs + 1) & ~1u;
	if (!total)
		total = 2;
	if (req.num_low_latency_bfregs > total - 1)
		return EINVAL;
	if (total > 2 * EMU_MAX_STATIC_UARS && !(req.lib_caps & MLX5_LIB_CAP_DYN_UAR))
		return ENOMEM;	/* calc_total_bfregs(), for static UARs only */
	/*
	 * mlx5_ib_devx_create(): a DEVX user context (CREATE_UCTX) for
	 * anyone who asks - libmlx5 asks for every context, and opens one
	 * without only when that fails (devx.c says what DEVX can do here);
	 * set below, once the context exists.
	 */
	ret = emu_evq_open(&ctx->async);
	if (ret)
		return ret;

	emu_fd_watch(ctx->async.user_fd, true);
	/*
	 * A library that allocates its UARs itself (MLX5_LIB_CAP_DYN_UAR,
	 * libmlx5 since rdma-core 30) gets no static ones: tot_bfregs 0, and
	 * every QP and CQ names a UAR of UAR_OBJ_ALLOC (ioctl_uar.c), as
	 * mlx5_ib_alloc_ucontext() does.  Only such a context can be imported
	 * (rdma-core mlx5_set_context()).
	 */
	ctx->dyn_uar_lib = req.lib_caps & MLX5_LIB_CAP_DYN_UAR;
	if (ctx->dyn_uar_lib)
		total = 0;
	ctx->tot_bfregs = total;
	ctx->low_lat_bfregs = total ? req.num_low_latency_bfregs : 0;
	ctx->num_uars = total / 2;
	ret = emu_uar_static_take_locked(ctx, ctx->num_uars);
	if (ret) {
		ctx->num_uars = 0;
		emu_real_close(ctx->async.user_fd);
		emu_evq_close(&ctx->async);
		ctx->async.user_fd = -1;
		return ret;
	}
	ctx->have_context = true;
	if (req.flags & MLX5_IB_ALLOC_UCTX_DEVX)
		ctx->devx_uid = emu_devx_uid_alloc();

	ret = emu_dev_ctx_init(ctx);
	if (ret) {
		emu_uar_ctx_fini_locked(ctx);
		ctx->have_context = false;
		ctx->devx_uid = 0;
		emu_real_close(ctx->async.user_fd);
		emu_evq_close(&ctx->async);
		ctx->async.user_fd = -1;
		return ret;
	}

	resp->async_fd = (uint32_t)ctx->async.user_fd;
	resp->num_comp_vectors = EMU_NUM_COMP_VECTORS;

	drv.qp_tab_size = 1u << 18;
	drv.bf_reg_size = EMU_BF_REG_SIZE;
	drv.tot_bfregs = total;
	drv.cache_line_size = 64;
	drv.max_sq_desc_sz = EMU_CAP(max_wqe_sz_sq);
	drv.max_rq_desc_sz = EMU_CAP(max_wqe_sz_rq);
	drv.max_send_wqebb = EMU_CAP_POW2(log_max_qp_sz);
	drv.max_recv_wr = EMU_CAP_POW2(log_max_qp_sz);
	drv.max_srq_recv_wr = EMU_CAP_POW2(log_max_qp_sz);
	drv.num_ports = (uint16_t)emu_cfg.num_ports;
	drv.cqe_version = req.max_cqe_version >= 1 ? 1 : 0;
	/* CREATE_AH returns the destination MAC, so RoCE needs no ARP */
	drv.cmds_supp_uhw = MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE |
			    MLX5_USER_CMDS_SUPP_UHW_CREATE_AH;
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET)
		drv.eth_min_inline = MLX5_USER_INLINE_MODE_NONE;
	drv.log_uar_size = 12;
	drv.num_uars_per_page = 1;	/* 4 KiB system pages */
	drv.num_dyn_bfregs = 0;
	/* set_ucontext_resp(): the general caps' drain_sigerr (devx.c) is set */
	drv.comp_mask |= MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS;
	/* the clock pages (clock.c), as mlx5_ib_alloc_ucontext() offers them */
	if (emu_clock_pages_offered()) {
		drv.clock_info_versions = 1u << MLX5_IB_CLOCK_INFO_V1;
		drv.comp_mask |= MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET;
		drv.hca_core_clock_offset = EMU_CORE_CLOCK_OFFSET;
		emu_clock_ctx_init_locked(ctx);
	}
	drv.response_length = (uint32_t)min_sz(c->drv_out_len, sizeof(drv));
	memcpy(c->drv_out, &drv, min_sz(c->drv_out_len, sizeof(drv)));
	_Static_assert(sizeof(drv) <= sizeof(ctx->ucontext_resp), "ucontext_resp");
	memcpy(ctx->ucontext_resp, &drv, sizeof(drv));	/* QUERY_CONTEXT's */
	emu_dbg("context: %u bfregs, cqe v%u, async fd %d\n", total,
		drv.cqe_version, ctx->async.user_fd);
	return 0;
}

static uint64_t fw_ver_u64(void)
{
	unsigned a = 0, b = 0, d = 0;

	sscanf(emu_cfg.fw_ver, "%u.%u.%u", &a, &b, &d);
	return ((uint64_t)a << 32) | ((uint64_t)(b & 0xffff) << 16) | (d & 0xffff);
}

/* mlx5_ib_query_device(): every limit from a cap */
void emu_device_attr(unsigned dev_index, struct ib_uverbs_query_device_resp *r)
{
	r->fw_ver = fw_ver_u64();
	r->node_guid = htobe64(emu_cfg.dev[dev_index].node_guid);
	r->sys_image_guid = htobe64(emu_cfg.sys_image_guid);
	r->max_mr_size = ~0ULL;
	r->page_size_cap = ~(uint64_t)(EMU_PAGE_SIZE - 1);
	r->vendor_id = 0x02c9;
	r->vendor_part_id = emu_cfg.vendor_part_id;
	r->hw_ver = 0;
	r->max_qp = EMU_CAP_POW2(log_max_qp);
	r->max_qp_wr = EMU_CAP_POW2(log_max_qp_sz);
	r->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			      IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_XRC | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	r->max_sge = emu_cap_max_sge();
	r->max_sge_rd = EMU_MAX_SGE_RD;
	r->max_cq = EMU_CAP_POW2(log_max_cq);
	r->max_cqe = EMU_CAP_POW2(log_max_cq_sz) - 1;
	r->max_mr = EMU_CAP_POW2(log_max_mkey);
	r->max_pd = EMU_CAP_POW2(log_max_pd);
	r->max_qp_rd_atom = EMU_CAP_POW2(log_max_ra_req_qp);
	r->max_qp_init_rd_atom = EMU_CAP_POW2(log_max_ra_res_qp);
	r->max_res_rd_atom = r->max_qp_rd_atom * r->max_qp;
	r->atomic_cap = IBV_ATOMIC_HCA;
	r->max_mw = EMU_CAP_POW2(log_max_mkey);
	r->max_mcast_grp = EMU_CAP_POW2(log_max_mcg);
	r->max_mcast_qp_attach = EMU_CAP(max_qp_mcg);
	r->max_total_mcast_qp_attach = r->max_mcast_qp_attach * r->max_mcast_grp;
	r->max_ah = 0x7fffffff;
	r->max_srq = EMU_CAP_POW2(log_max_srq);
	r->max_srq_wr = EMU_CAP_POW2(log_max_srq_sz) - 1;
	r->max_srq_sge = emu_cap_max_rq_sge() - 1;
	/* the cap, whatever the link layer (pkey_tbl_len is 1 on RoCE) */
	r->max_pkeys = EMU_CAP(pkey_table_len);
	r->local_ca_ack_delay = EMU_CAP(local_ca_ack_delay);
	r->phys_port_cnt = (uint8_t)emu_cfg.num_ports;
}

int emu_cmd_query_device(struct emu_cmd *c)
{
	emu_device_attr(c->ctx->dev_index, c->out);
	return 0;
}

int emu_cmd_query_device_ex(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_query_device *cmd = c->in;
	struct ib_uverbs_ex_query_device_resp *r = c->out;
	struct mlx5_ib_query_device_resp drv = {};

	if (cmd->comp_mask || cmd->reserved)
		return EINVAL;
	emu_device_attr(c->ctx->dev_index, &r->base);
	r->timestamp_mask = (1ULL << 63) - 1;
	r->hca_core_clock = emu_core_clock_khz();
	r->device_cap_flags_ex = r->base.device_cap_flags;
	if (EMU_CAP(cq_moderation)) {
		r->cq_moderation_caps.max_cq_moderation_count = EMU_MAX_CQ_COUNT;
		r->cq_moderation_caps.max_cq_moderation_period = EMU_MAX_CQ_PERIOD;
	}
	r->max_dm_size = EMU_DM_SIZE;	/* MEMIC, ioctl_dm.c */
	emu_odp_caps(r);
	/*
	 * mlx5_ib_query_device(): the list holds 2^log_tag_matching_list_sz
	 * entries, one kept back; max_ops is the SQ depth of the command QP
	 * that posts the list operations; a tagged buffer is one SGE
	 * (MLX5_TM_MAX_SGE); the rendezvous flag and header size (64,
	 * MLX5_TM_MAX_RNDV_MSG_SIZE) only with rndv_offload_rc.
	 */
	if (EMU_CAP(tag_matching)) {
		r->tm_caps.max_num_tags = EMU_CAP_POW2(log_tag_matching_list_sz) - 1;
		r->tm_caps.max_ops = EMU_CAP_POW2(log_max_qp_sz);
		r->tm_caps.max_sge = EMU_TM_MAX_SGE;
		if (EMU_CAP(rndv_offload_rc)) {
			r->tm_caps.flags = IBV_TM_CAP_RC;
			r->tm_caps.max_rndv_hdr_size = EMU_TM_MAX_RNDV_HDR;
		}
	}
	r->response_length = (uint32_t)min_sz(c->out_len, sizeof(*r));

	/*
	 * mlx5 part: no TSO, MPW; RSS as rss.c reports it. CQE compression as
	 * mlx5_ib_query_device() reports a ConnectX-6 (cqe_compression_max_num
	 * 64; HASH and CSUM always, CSUM_STRIDX with mini_cqe_resp_stride_index),
	 * on 128-byte CQEs too (cqe_compression_128: CQE_128B_COMP), which
	 * create_cq_user() refuses without that cap and the device model
	 * compresses (device/cqe_zip.c). cqe_128_always (CQE_128B_PAD): a CQ
	 * of 128-byte CQEs may ask for 64-byte ones at a 128-byte stride
	 * (cq.c).
	 * dci_streams_caps: the two general caps as they read, 0 on a device
	 * without DCI streams (base/profile.c).
	 */
	/* mlx5_ib_query_device() sets it whatever the HCA: DCTs take scatter-to-CQE */
	drv.flags = MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT |
		    MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_COMP |
		    MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_PAD;
	drv.cqe_comp_caps.max_num = EMU_CQE_COMP_MAX_NUM;
	drv.cqe_comp_caps.supported_format = MLX5_IB_CQE_RES_FORMAT_HASH |
					     MLX5_IB_CQE_RES_FORMAT_CSUM |
					     MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX;
	/*
	 * Packet pacing as mlx5_ib_query_device() derives it from the QoS
	 * caps (devx.c's page): the rates of the rate table (pp.c), for raw
	 * packet QPs, with burst and typical packet sizes.  The table is
	 * there for mlx5dv_pp_alloc() and raw packet QPs' rate limits.
	 */
	drv.packet_pacing_caps.qp_rate_limit_min = EMU_CAP(packet_pacing_min_rate);
	drv.packet_pacing_caps.qp_rate_limit_max = EMU_CAP(packet_pacing_max_rate);
	drv.packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	drv.packet_pacing_caps.cap_flags = MLX5_IB_PP_SUPPORT_BURST;
	emu_rss_caps(r, &drv.rss_caps);
	drv.dci_streams_caps.max_log_num_concurent = EMU_CAP(log_max_dci_stream_channels);
	drv.dci_streams_caps.max_log_num_errored = EMU_CAP(log_max_dci_errored_streams);
	drv.response_length = (uint32_t)min_sz(c->drv_out_len, sizeof(drv));
	memcpy(c->drv_out, &drv, min_sz(c->drv_out_len, sizeof(drv)));
	return 0;
}

/* What QUERY_PORT answers; the sysfs port files are written from it too. */
void emu_port_attr(unsigned dev_index, unsigned port_num,
		   struct ib_uverbs_query_port_resp *r)
{
	const struct emu_port_id *id = &emu_cfg.dev[dev_index].port[port_num - 1];
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
	const struct emu_link *link = eth ? &emu_cfg.profile->eth_link :
					    &emu_cfg.profile->ib_link;

	/*
	 * mlx5_query_hca_port() on InfiniBand: PortInfo as the firmware
	 * answers it.  mlx5_query_port_roce() on Ethernet: CM and IP-based
	 * GIDs only, one P_Key, the RoCE address table.  port_cap_flags2
	 * (EMU_CAP(ib_port_cap_flags2)) has no place in this legacy response;
	 * libibverbs reports it 0 unless it queries the port by ioctl.
	 */
	r->port_cap_flags = eth ? IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS :
			    EMU_CAP(ib_port_cap_flags);
	r->max_msg_sz = EMU_CAP_POW2(log_max_msg);
	r->gid_tbl_len = emu_cap_gid_tbl_len();
	r->pkey_tbl_len = (uint16_t)emu_cap_pkey_tbl_len();
	r->lid = id->lid;
	r->sm_lid = eth ? 0 : 1;
	r->state = IBV_PORT_ACTIVE;
	r->max_mtu = IBV_MTU_4096;
	/* RoCE: the netdev's 1500-byte MTU allows 1024-byte IB payloads */
	r->active_mtu = eth ? IBV_MTU_1024 : IBV_MTU_4096;
	r->lmc = 0;
	r->max_vl_num = eth ? 0 : EMU_CAP(vl_cap);
	r->subnet_timeout = eth ? 0 : 18;
	r->active_width = link->width;
	r->active_speed = link->speed;
	r->phys_state = 5;		/* LinkUp */
	r->link_layer = emu_cfg.link_layer;
	r->flags = eth ? IB_UVERBS_QPF_GRH_REQUIRED : 0;
}

int emu_cmd_query_port(struct emu_cmd *c)
{
	const struct ib_uverbs_query_port *cmd = c->in;

	if (!emu_port_valid(c->ctx, cmd->port_num))
		return EINVAL;
	emu_port_attr(c->ctx->dev_index, cmd->port_num, c->out);
	return 0;
}
