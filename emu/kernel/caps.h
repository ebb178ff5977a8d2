/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * caps.h - the verbs limits the kernel derives from the device's caps.
 *
 * One derivation for what QUERY_DEVICE/QUERY_PORT advertise (ctx.c) and
 * what the create and modify commands enforce (qp.c, cq.c, srq.c), written
 * as drivers/infiniband/hw/mlx5/main.c (mlx5_ib_query_device(),
 * mlx5_query_hca_port(), mlx5_query_port_roce()) computes them from the
 * firmware caps of base/profile.h.
 */
#ifndef RDMAFAST_EMU_KERNEL_CAPS_H
#define RDMAFAST_EMU_KERNEL_CAPS_H

#include "base/base.h"

#define EMU_CAP(field)		(emu_cfg.profile->field)
#define EMU_CAP_POW2(field)	(1u << emu_cfg.profile->field)

/* sizeof the mlx5 ctrl, remote address and data segments */
#define EMU_CTRL_SEG_SZ		16
#define EMU_RADDR_SEG_SZ	16
#define EMU_DATA_SEG_SZ		16

/* Receive SGEs: a receive WQE of data segments only. */
static inline uint32_t emu_cap_max_rq_sge(void)
{
	return EMU_CAP(max_wqe_sz_rq) / EMU_DATA_SEG_SZ;
}

/* Send SGEs: at most 512 bytes of WQE behind a ctrl and a raddr segment. */
static inline uint32_t emu_cap_max_sq_sge(void)
{
	uint32_t desc = EMU_CAP(max_wqe_sz_sq) < 512 ? EMU_CAP(max_wqe_sz_sq) : 512;

	return (desc - EMU_CTRL_SEG_SZ - EMU_RADDR_SEG_SZ) / EMU_DATA_SEG_SZ;
}

/* max_sge: the smaller of the two */
static inline uint32_t emu_cap_max_sge(void)
{
	uint32_t rq = emu_cap_max_rq_sge(), sq = emu_cap_max_sq_sge();

	return rq < sq ? rq : sq;
}

/* MLX5_MAX_SGE_RD: the send SGEs of a 512-byte WQE */
#define EMU_MAX_SGE_RD	((512 - EMU_CTRL_SEG_SZ - EMU_RADDR_SEG_SZ) / EMU_DATA_SEG_SZ)

/* Tag matching: MLX5_TM_MAX_SGE and MLX5_TM_MAX_RNDV_MSG_SIZE of mlx5_ib.h */
#define EMU_TM_MAX_SGE		1
#define EMU_TM_MAX_RNDV_HDR	64

/* cqe_compression_max_num: the most CQEs one compressed session holds */
#define EMU_CQE_COMP_MAX_NUM	64

/* P_Key table entries: the cap on InfiniBand, one on RoCE */
static inline uint32_t emu_cap_pkey_tbl_len(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 1 : EMU_CAP(pkey_table_len);
}

/* GID table entries: the cap on InfiniBand, the RoCE address table on RoCE */
static inline uint32_t emu_cap_gid_tbl_len(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ?
	       EMU_CAP(roce_address_table_size) : EMU_CAP(gid_table_len);
}

#endif /* RDMAFAST_EMU_KERNEL_CAPS_H */
