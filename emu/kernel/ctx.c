/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ctx.c - GET_CONTEXT, QUERY_DEVICE (legacy and extended), QUERY_PORT.
 *
 * The answers describe a ConnectX-6-like HCA.  Limits are bounded by what
 * the emulator can number (EMU_NUM_IDX_MASK objects of each kind per host).
 */
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/mlx5-abi.h>

#include "internal.h"

#define EMU_MAX_WR		(1u << 15)
#define EMU_MAX_SGE		30
#define EMU_MAX_RD_ATOM		16
#define EMU_LOG_MAX_CQ_SZ	22

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
	if (total > 2 * EMU_MAX_UARS)
		return ENOMEM;
	if (req.num_low_latency_bfregs > total - 1)
		return EINVAL;
	/* mlx5_ib_devx_create(): this device has no DEVX user context */
	if (req.flags & MLX5_IB_ALLOC_UCTX_DEVX)
		return EINVAL;

	ret = emu_evq_open(&ctx->async);
	if (ret)
		return ret;

	emu_fd_watch(ctx->async.user_fd, true);
	ctx->tot_bfregs = total;
	ctx->low_lat_bfregs = req.num_low_latency_bfregs;
	ctx->num_uars = total / 2;
	ctx->have_context = true;

	ret = emu_dev_ctx_init(ctx);
	if (ret) {
		ctx->have_context = false;
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
	drv.max_sq_desc_sz = 1024;
	drv.max_rq_desc_sz = 512;
	drv.max_send_wqebb = EMU_MAX_WR;
	drv.max_recv_wr = EMU_MAX_WR;
	drv.max_srq_recv_wr = EMU_MAX_WR;
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

static void fill_device(const struct emu_ctx *ctx, struct ib_uverbs_query_device_resp *r)
{
	r->fw_ver = fw_ver_u64();
	r->node_guid = htobe64(emu_cfg.dev[ctx->dev_index].node_guid);
	r->sys_image_guid = htobe64(emu_cfg.sys_image_guid);
	r->max_mr_size = ~0ULL;
	r->page_size_cap = ~(uint64_t)(EMU_PAGE_SIZE - 1);
	r->vendor_id = 0x02c9;
	r->vendor_part_id = emu_cfg.vendor_part_id;
	r->hw_ver = 0;
	r->max_qp = EMU_NUM_IDX_MASK;
	r->max_qp_wr = EMU_MAX_WR;
	r->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			      IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT |
			      IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
			      IBV_DEVICE_XRC | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	r->max_sge = EMU_MAX_SGE;
	r->max_sge_rd = EMU_MAX_SGE;
	r->max_cq = EMU_NUM_IDX_MASK;
	r->max_cqe = (1u << EMU_LOG_MAX_CQ_SZ) - 1;
	r->max_mr = EMU_NUM_IDX_MASK;
	r->max_pd = EMU_NUM_IDX_MASK;
	r->max_qp_rd_atom = EMU_MAX_RD_ATOM;
	r->max_res_rd_atom = EMU_MAX_RD_ATOM * EMU_NUM_IDX_MASK;
	r->max_qp_init_rd_atom = EMU_MAX_RD_ATOM;
	r->atomic_cap = IBV_ATOMIC_HCA;
	r->max_mw = EMU_NUM_IDX_MASK;
	r->max_mcast_grp = 1u << 21;
	r->max_mcast_qp_attach = 240;
	r->max_total_mcast_qp_attach = 240u << 21;
	r->max_ah = 0x7fffffff;
	r->max_srq = EMU_NUM_IDX_MASK;
	r->max_srq_wr = EMU_MAX_WR - 1;
	r->max_srq_sge = 31;
	r->max_pkeys = 1;
	r->local_ca_ack_delay = 16;
	r->phys_port_cnt = (uint8_t)emu_cfg.num_ports;
}

int emu_cmd_query_device(struct emu_cmd *c)
{
	fill_device(c->ctx, c->out);
	return 0;
}

int emu_cmd_query_device_ex(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_query_device *cmd = c->in;
	struct ib_uverbs_ex_query_device_resp *r = c->out;
	struct mlx5_ib_query_device_resp drv = {};

	if (cmd->comp_mask || cmd->reserved)
		return EINVAL;
	fill_device(c->ctx, &r->base);
	r->timestamp_mask = (1ULL << 63) - 1;
	r->hca_core_clock = 1000000;	/* kHz */
	r->device_cap_flags_ex = r->base.device_cap_flags;
	r->max_dm_size = EMU_DM_SIZE;	/* MEMIC, ioctl_dm.c */
	r->response_length = (uint32_t)min_sz(c->out_len, sizeof(*r));

	/*
	 * mlx5 part: no TSO, RSS, packet pacing, MPW, DCI streams. CQE compression as
	 * mlx5_ib_query_device() reports a ConnectX-6 (cqe_compression_max_num
	 * 64; HASH and CSUM always, CSUM_STRIDX with mini_cqe_resp_stride_index).
	 */
	drv.cqe_comp_caps.max_num = 64;
	drv.cqe_comp_caps.supported_format = MLX5_IB_CQE_RES_FORMAT_HASH |
					     MLX5_IB_CQE_RES_FORMAT_CSUM |
					     MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX;
	drv.response_length = (uint32_t)min_sz(c->drv_out_len, sizeof(drv));
	memcpy(c->drv_out, &drv, min_sz(c->drv_out_len, sizeof(drv)));
	return 0;
}

int emu_cmd_query_port(struct emu_cmd *c)
{
	const struct ib_uverbs_query_port *cmd = c->in;
	struct ib_uverbs_query_port_resp *r = c->out;
	const struct emu_port_id *id;
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	if (!emu_port_valid(c->ctx, cmd->port_num))
		return EINVAL;
	id = &emu_cfg.dev[c->ctx->dev_index].port[cmd->port_num - 1];

	r->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_VENDOR_CLASS_SUP |
			    IBV_PORT_DEVICE_MGMT_SUP |
			    (eth ? IBV_PORT_IP_BASED_GIDS : IBV_PORT_CAP_MASK2_SUP);
	r->max_msg_sz = 1u << 30;
	r->gid_tbl_len = id->num_gids;
	r->pkey_tbl_len = 1;
	r->lid = id->lid;
	r->sm_lid = eth ? 0 : 1;
	r->state = IBV_PORT_ACTIVE;
	r->max_mtu = IBV_MTU_4096;
	/* RoCE: the netdev's 1500-byte MTU allows 1024-byte IB payloads */
	r->active_mtu = eth ? IBV_MTU_1024 : IBV_MTU_4096;
	r->lmc = 0;
	r->max_vl_num = eth ? 0 : 4;
	r->subnet_timeout = eth ? 0 : 18;
	r->active_width = 2;		/* 4X */
	r->active_speed = 32;		/* EDR: 4X = 100 Gb/s */
	r->phys_state = 5;		/* LinkUp */
	r->link_layer = emu_cfg.link_layer;
	r->flags = eth ? IB_UVERBS_QPF_GRH_REQUIRED : 0;
	return 0;
}
