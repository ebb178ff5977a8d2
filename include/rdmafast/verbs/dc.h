/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/dc.h - the Dynamically Connected transport: DC targets
 * and initiators created, connected and reset.
 */
#ifndef RDMAFAST_VERBS_DC_H
#define RDMAFAST_VERBS_DC_H

#include <rdmafast/verbs/ibv.h>
#include <rdmafast/verbs/qp.h>

RF_BEGIN_DECLS

/*
 * ---- Dynamically Connected transport ------------------------------------
 * A DC target (DCT) receives from any DCI that knows its number and access
 * key, through an SRQ into one CQ; a DC initiator (DCI) is a send queue
 * whose every WQE names its target (rdmafast/sq_dc.h). Created with
 * mlx5dv_create_qp(3), IBV_QPT_DRIVER and MLX5DV_QP_INIT_ATTR_MASK_DC.
 */

/*
 * rf_dct_create_ibv - a DCT receiving through srq into cq, reachable with
 * dc_key, brought to RTR on l's port (its number exists from then on:
 * (*out)->qp_num). l's access, mtu, min_rnr_timer, gid_index and grh
 * apply as to rf_qp_connect_ibv(): access 0 lets the initiators send only;
 * name RF_ACCESS_REMOTE_* for RDMA. Returns 0 or -errno.
 */
static inline RF_COLD int rf_dct_create_ibv(struct ibv_pd *pd, struct ibv_srq *srq,
					    struct ibv_cq *cq, uint64_t dc_key,
					    const struct rf_qp_conn_attr *l, struct ibv_qp **out)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_port_attr pa;
	struct ibv_qp_attr at;
	struct ibv_qp *qp;
	struct rf_qp_conn_attr c;
	int ret;

	ret = rf__qp_conn_begin(pd->context, l, &c, &pa);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = IBV_QPT_DRIVER;
	ax.send_cq = cq;
	ax.recv_cq = cq;
	ax.srq = srq;
	ax.pd = pd;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
	dx.dc_init_attr.dct_access_key = dc_key;
	qp = mlx5dv_create_qp(pd->context, &ax, &dx);
	if (!qp)
		return errno ? -errno : -ENOMEM;

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = c.port;
	at.qp_access_flags = (unsigned int)c.access;	/* 0: no remote access */
	ret = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (!ret) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		at.path_mtu = c.mtu;
		at.min_rnr_timer = c.min_rnr_timer;
		rf__qp_conn_path(&at.ah_attr, &c, &pa, NULL);
		ret = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_MIN_RNR_TIMER);
	}
	if (ret) {
		ibv_destroy_qp(qp);
		return rf__ibv_err(ret);
	}
	*out = qp;
	return 0;
}

/*
 * rf_dci_create_ibv - create a DCI (a->qp_type is ignored, a->srq and the
 * receive sizes too: a DCI receives nothing) and take it over as an
 * RF_QP_DCI queue for rdmafast/sq_dc.h. Returns 0 or -errno.
 */
static inline RF_COLD int rf_dci_create_ibv(struct rf_qp *qp, const struct rf_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_qp *ibqp;
	struct ibv_pd *pad;
	struct ibv_td *td;
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = rf_device_check_ibv(a->pd->context);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = IBV_QPT_DRIVER;
	ax.send_cq = a->send_cq;
	ax.recv_cq = a->recv_cq ? a->recv_cq : a->send_cq;
	ax.sq_sig_all = a->sig_all;
	ax.cap.max_send_wr = a->max_send_wr;
	ax.cap.max_send_sge = a->max_send_sge ? a->max_send_sge : 1;
	ax.cap.max_inline_data = a->max_inline_data;
	/* a bfreg of its own, as rf_qp_create_ibv() */
	pad = rf__qp_td_ibv(a->pd, &td);
	ax.pd = pad ? pad : a->pd;
	/* sized for every RC operation (MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI) */
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = a->send_ops_flags ? a->send_ops_flags : RF_SEND_OPS_DEFAULT;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	ibqp = mlx5dv_create_qp(a->pd->context, &ax, &dx);
	ret = ibqp ? rf_qp_init_ibv(qp, ibqp, &ax.cap, a->sig_all) :
		     errno ? -errno : -ENOMEM;
	if (ret) {
		if (ibqp)
			ibv_destroy_qp(ibqp);
		rf__qp_td_free_ibv(pad, td);
		return ret;
	}
	if (!pad)
		rf__sq_bf_off(&qp->sq);
	qp->td = td;
	qp->td_pd = pad;
	return 0;
}

/*
 * rf_dci_connect_ibv - move a DCI RESET -> INIT -> RTR -> RTS (the kernel's
 * modify_dci_qp_is_ok(): port, MTU, then timeout, retries, rd_atomic, PSN).
 * Its targets come with each WQE: no peer. Returns 0 or -errno.
 */
static inline RF_COLD int rf_dci_connect_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	struct rf_qp_conn_attr c;
	int ret;

	ret = rf__qp_conn_begin(qp->ibqp->context, l, &c, &pa);
	if (ret)
		return ret;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = c.port;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = c.mtu;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_PATH_MTU);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = c.psn & 0xffffff;
	at.timeout = c.timeout;
	at.retry_cnt = c.retry_cnt;
	at.rnr_retry = c.rnr_retry;
	at.max_rd_atomic = c.max_rd_atomic;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	return rf__ibv_err(ret);
}

/*
 * rf_dci_reset_ibv - bring a DCI in error back for reuse, as UCX's DC
 * transport does with a DCI whose WQE failed: after its flush completions
 * were polled (every WQE posted has completed, rf_sq_ci() == pi), move it
 * to RESET, restart the send queue from slot 0 as the device does, and
 * connect it again with l. Returns 0 or -errno; -EBUSY while WQEs are
 * still outstanding.
 */
static inline RF_COLD int rf_dci_reset_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l)
{
	struct ibv_qp_attr at;
	struct rf_sq_attr sa;
	struct rf_sq *sq = &qp->sq;
	int ret;

	if (qp->kind != RF_QP_DCI)
		return -EINVAL;
	if (rf_sq_ci(sq) != sq->pi)
		return -EBUSY;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE);
	if (ret)
		return rf__ibv_err(ret);
	memset(&sa, 0, sizeof(sa));
	sa.buf = sq->buf;
	sa.wqe_cnt = sq->wqe_cnt;
	sa.dbrec = sq->dbrec - RF_SND_DBR;
	sa.bf_reg = sq->bf.reg;
	sa.bf_size = (uint32_t)sq->bf.size;
	sa.qpn = sq->qpn;
	sa.max_inline = qp->cap.max_inline_data;
	sa.max_sge = qp->cap.max_send_sge;
	sa.kind = RF_QP_DCI;
	sa.sig_all = sq->fm_ce_se != 0;
	sa.slot = sq->slot;
	{
#ifdef RF_CHECKED
		struct rf__chk_sq chk = *rf__chk_sq(sq);	/* what the glue set, attached */
#endif
		ret = rf_sq_init(sq, &sa);
		RF__CHK(*rf__chk_sq(sq) = chk);
	}
	if (ret)
		return ret;
	return rf_dci_connect_ibv(qp, l);
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_DC_H */
