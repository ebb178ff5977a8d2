/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rss.c - RSS raw packet QPs: ibv_create_qp_ex() with
 * IBV_QP_INIT_ATTR_RX_HASH over an indirection table of WQs (wq.c), as
 * mlx5's create_rss_raw_qp_tir() in the kernel's
 * drivers/infiniband/hw/mlx5/qp.c makes one: no queues of its own, a TIR
 * that hashes each frame a flow rule steers to it (Toeplitz over the
 * fields libmlx5's struct mlx5_ib_create_qp_rss selects) and hands it to
 * the WQ the table names for the hash (device/rss.c).  The kernel answers
 * QP number 0 and the TIR's number in the driver response.
 *
 * A request the driver refuses gets the errno it gives; and the caps
 * mlx5_ib_query_device() reports for them.
 */
#include <string.h>

#include <linux/capability.h>
#include <rdma/mlx5-abi.h>

#include "internal.h"

#define RSS_IPV4	(MLX5_RX_HASH_SRC_IPV4 | MLX5_RX_HASH_DST_IPV4)
#define RSS_IPV6	(MLX5_RX_HASH_SRC_IPV6 | MLX5_RX_HASH_DST_IPV6)
#define RSS_TCP		(MLX5_RX_HASH_SRC_PORT_TCP | MLX5_RX_HASH_DST_PORT_TCP)
#define RSS_UDP		(MLX5_RX_HASH_SRC_PORT_UDP | MLX5_RX_HASH_DST_PORT_UDP)

/*
 * A ConnectX-6's general caps for the objects an RSS QP uses, as
 * `ibv_devinfo -v` shows them: log_max_rqt 20, log_max_rqt_size 11
 * (EMU_RSS_MAX_RQT_SIZE, which wq.c enforces), log_max_rq 23.
 */
#define RSS_MAX_RQTS		(1u << 20)
#define RSS_MAX_RQS		(1u << 23)

/*
 * The hash request into tir, checked as create_rss_raw_qp_tir() and
 * process_udata_size() check it.
 */
static int take_request(const void *drv_in, size_t drv_in_len, const struct emu_rwq_ind_tbl *t,
			struct emu_rss_tir *tir, uint32_t *flags)
{
	struct mlx5_ib_create_qp_rss req = { 0 };
	uint64_t fields;
	unsigned l4;

	/* the request up to its flags; what lies past the struct, zeros */
	if (drv_in_len < offsetof(struct mlx5_ib_create_qp_rss, flags) + sizeof(req.flags))
		return EINVAL;
	for (size_t i = sizeof(req); i < drv_in_len; i++)
		if (((const uint8_t *)drv_in)[i])
			return EOPNOTSUPP;
	memcpy(&req, drv_in, drv_in_len < sizeof(req) ? drv_in_len : sizeof(req));
	fields = req.rx_hash_fields_mask;
	if (req.comp_mask)
		return EOPNOTSUPP;
	/*
	 * Of the flags, an RSS QP takes the self-loopback ones of its TIR;
	 * tunnel offloads (and so hashing inner headers, which needs them)
	 * take caps this device reports none of.
	 */
	if ((req.flags & ~(uint32_t)(MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC |
				     MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC)) ||
	    (fields & MLX5_RX_HASH_INNER))
		return EOPNOTSUPP;
	if (req.rx_hash_function != MLX5_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (req.rx_key_len != EMU_RSS_KEY_LEN)
		return EINVAL;	/* the TIR context's rx_hash_toeplitz_key */
	/* no fields: a table of one WQ only, a steering entry that hashes nothing */
	if (!fields && t->size != 1)
		return EINVAL;
	/* one L3 protocol, one L4 protocol (the IPsec SPI counts as one) */
	if ((fields & RSS_IPV4) && (fields & RSS_IPV6))
		return EINVAL;
	l4 = !!(fields & RSS_TCP) + !!(fields & RSS_UDP) + !!(fields & MLX5_RX_HASH_IPSEC_SPI);
	if (l4 > 1)
		return EINVAL;
	tir->fields = fields;
	*flags = req.flags;
	memcpy(tir->key, req.rx_hash_key, EMU_RSS_KEY_LEN);
	return 0;
}

int emu_rss_qp_create(struct emu_cmd *c, struct emu_rwq_ind_tbl *t)
{
	const struct ib_uverbs_ex_create_qp *cmd = c->in;
	struct ib_uverbs_ex_create_qp_resp *resp = c->out;
	struct mlx5_ib_create_qp_resp drv = { 0 };
	struct emu_rss_tir tir = { 0 };
	uint32_t flags = 0;
	struct emu_pd *pd;
	struct emu_qp *qp;
	int ret;

	if (cmd->qp_type == IBV_QPT_RAW_PACKET && !emu_capable(CAP_NET_RAW))
		return EPERM;
	/*
	 * The core's create_qp(): the table is the receive side, so no
	 * receive WRs or SRQ; a send queue would bring a send CQ, which
	 * mlx5's check_qp_attr() refuses an RSS QP.
	 */
	if (cmd->max_recv_wr || cmd->max_recv_sge || cmd->is_srq || cmd->max_send_wr)
		return EINVAL;
	pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);
	if (!pd)
		return EINVAL;
	if (cmd->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	if (cmd->create_flags)
		return EINVAL;
	if (c->drv_out_len < offsetof(struct mlx5_ib_create_qp_resp, bfreg_index) +
			     sizeof(drv.bfreg_index))
		return EINVAL;
	ret = take_request(c->drv_in, c->drv_in_len, t, &tir, &flags);
	if (ret)
		return ret;

	qp = emu_obj_alloc(c->ctx, EMU_OBJ_QP, sizeof(*qp), cmd->user_handle);
	if (!qp)
		return ENOMEM;
	ret = emu_num_alloc_locked(EMU_NUM_TIR, qp, &tir.tirn);
	if (ret) {
		emu_obj_free_locked(&qp->obj);
		return ret;
	}
	qp->type = IBV_QPT_RAW_PACKET;
	qp->pd = pd;
	qp->rss_tbl = t;
	qp->rss = tir;
	qp->mlx5_flags = flags;		/* its TIR's self-loopback (device/eth.c) */
	qp->attr.state = IBV_QPS_RESET;
	pd->obj.usecnt++;
	t->obj.usecnt++;

	resp->base.qp_handle = qp->obj.handle;
	resp->base.qpn = 0;		/* "qpn is reserved for that QP" */
	resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ? c->out_len :
					   sizeof(*resp));
	drv.comp_mask = MLX5_IB_CREATE_QP_RESP_MASK_TIRN;
	drv.tirn = tir.tirn;
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

void emu_rss_qp_destroy_locked(struct emu_qp *qp)
{
	qp->pd->obj.usecnt--;
	qp->rss_tbl->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_TIR, qp->rss.tirn);
	emu_obj_free_locked(&qp->obj);
}

/*
 * mlx5_ib_query_device(): RSS for raw packet QPs, Toeplitz over the outer
 * IPv4/IPv6 addresses and TCP/UDP ports (inner ones need tunnel
 * offloads), tables and WQs as many as the general caps allow.
 */
void emu_rss_caps(struct ib_uverbs_ex_query_device_resp *r, struct mlx5_ib_rss_caps *drv)
{
	r->rss_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	r->rss_caps.max_rwq_indirection_tables = RSS_MAX_RQTS;
	r->rss_caps.max_rwq_indirection_table_size = EMU_RSS_MAX_RQT_SIZE;
	r->max_wq_type_rq = RSS_MAX_RQS;
	drv->rx_hash_function = MLX5_RX_HASH_FUNC_TOEPLITZ;
	drv->rx_hash_fields_mask = RSS_IPV4 | RSS_IPV6 | RSS_TCP | RSS_UDP;
}
