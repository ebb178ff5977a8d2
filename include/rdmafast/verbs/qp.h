/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/qp.h - QPs created through verbs and taken over by
 * rdmafast, and their way RESET -> INIT -> RTR -> RTS under the
 * connection policy (what a zeroed rf_qp_conn_attr means: verbs/conn.h).
 */
#ifndef RDMAFAST_VERBS_QP_H
#define RDMAFAST_VERBS_QP_H

#include <rdmafast/verbs/ibv.h>
#include <rdmafast/verbs/conn.h>
#include <rdmafast/detail/verbs_qp.h>

RF_BEGIN_DECLS

/*
 * struct rf_qp - a verbs QP taken over by rdmafast: its send queue, its
 * receive queue (when it has one, i.e. no SRQ) and the capabilities the
 * created QP really has (max_inline_data and the SGE counts are what
 * libmlx5 sized the WQEs for; rdmafast enforces them).
 *
 * The send queue comes first: its post-path fields (buf to dbrec, 120
 * bytes) then sit in two cache lines of an rf_qp that starts on a line,
 * which a cold post misses on; after the other fields they took three
 * (docs/benchmark-history.md, round 9). Allocate an rf_qp line-aligned
 * (aligned_alloc(64, ...), an element of a line-aligned array) for that,
 * which also keeps two threads' QPs off each other's lines; the type is
 * not over-aligned, so malloc() and calloc() remain correct, at a line
 * more a cold post in three cases of four.
 */
struct rf_qp {
	struct rf_sq      sq;
	struct ibv_qp    *ibqp;
	uint32_t          qpn;
	uint32_t          kind;		/* enum rf_qp_kind */
	int               has_rq;
	struct ibv_qp_cap cap;
	struct rf_rq      rq;
	/*
	 * What rf_qp_create_ibv() and rf_dci_create_ibv() created the QP on
	 * (NULL otherwise): a thread domain, so that the QP has a bfreg of
	 * its own (rdmafast/doorbell.h), and the parent domain over the PD
	 * that holds it. rf_qp_destroy_ibv() frees them.
	 */
	struct ibv_td    *td;
	struct ibv_pd    *td_pd;
};

/* Everything rf_qp_create_ibv() needs. */
struct rf_qp_init_attr {
	struct ibv_pd  *pd;
	struct ibv_cq  *send_cq;
	struct ibv_cq  *recv_cq;
	struct ibv_srq *srq;		/* NULL: the QP gets its own RQ */
	enum ibv_qp_type qp_type;	/* IBV_QPT_RC, _UC, _UD or _XRC_SEND */
	uint32_t max_send_wr;		/* WQEs of the largest kind you post */
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	/*
	 * IBV_QP_EX_WITH_* operations to size the WQEs for; 0 means every
	 * RC operation rdmafast posts except memory-window bind and local
	 * invalidate, whose 192-byte WQEs would otherwise set the size of
	 * every slot (rdma-core providers/mlx5/verbs.c, _sq_overhead(),
	 * sizes every WQE for the largest operation send_ops_flags allows,
	 * and assumes the window operations when none are given).
	 */
	uint64_t send_ops_flags;
	int sig_all;			/* every WQE signaled */
	/*
	 * Leave scatter-to-CQE on. By default rdmafast creates QPs with
	 * MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE: data lands in the buffers
	 * the WQEs name, so receive buffers may be memory the CPU cannot
	 * write (GPU, indirect mkeys; UCX PR #5188, rdma-core #735), and
	 * polling never copies. rf_cq_poll() handles scattered CQEs either
	 * way (also for QPs created elsewhere with it on).
	 */
	int allow_scatter_to_cqe;
};

#define RF_SEND_OPS_DEFAULT \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)

static inline RF_COLD void rf_qp_fini_ibv(struct rf_qp *qp)
{
	free(qp->sq.slot);
	free(qp->rq.wr_id);
	qp->sq.slot = NULL;
	qp->rq.wr_id = NULL;
}

/*
 * rf_qp_init_ibv - take over a QP nothing was posted to. cap must be the
 * capabilities libibverbs returned at creation (ibv_qp_init_attr.cap after
 * the call), sig_all what the QP was created with. Allocates the side
 * tables; free them with rf_qp_fini_ibv() or rf_qp_destroy_ibv().
 */
static inline RF_COLD int rf_qp_init_ibv(struct rf_qp *qp, struct ibv_qp *ibqp,
					 const struct ibv_qp_cap *cap, int sig_all)
{
	struct mlx5dv_qp dv;
	struct rf_sq_attr sa;
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = rf_device_check_ibv(ibqp->context);
	if (ret)
		return ret;
	ret = rf__qp_dv_ibv(ibqp, &dv, &sa);
	if (ret)
		return ret;
	qp->ibqp = ibqp;
	qp->qpn = ibqp->qp_num;
	qp->cap = *cap;
	switch (ibqp->qp_type) {
	case IBV_QPT_RC:       qp->kind = RF_QP_RC;  break;
	case IBV_QPT_UC:       qp->kind = RF_QP_UC;  break;
	case IBV_QPT_UD:       qp->kind = RF_QP_UD;  break;
	case IBV_QPT_XRC_SEND: qp->kind = RF_QP_XRC; break;
	/* mlx5's driver QPs are DC: a DCI has a send queue, a DCT none */
	case IBV_QPT_DRIVER:
		if (!dv.sq.wqe_cnt)
			return -EPROTONOSUPPORT;
		qp->kind = RF_QP_DCI;
		break;
	default:               return -EPROTONOSUPPORT;
	}

	sa.max_inline = cap->max_inline_data;
	sa.max_sge = cap->max_send_sge;
	sa.kind = qp->kind;
	sa.sig_all = (uint32_t)sig_all;
	/* calloc() aligns the side table as struct rf_sq_slot asks: 16 bytes */
	sa.slot = (struct rf_sq_slot *)calloc(dv.sq.wqe_cnt ? dv.sq.wqe_cnt : 1,
					      sizeof(struct rf_sq_slot));
	if (!sa.slot)
		return -ENOMEM;
	ret = rf_sq_init(&qp->sq, &sa);
	if (ret) {
		free(sa.slot);
		return ret;
	}
#ifdef RF_CHECKED
	/* the checked build asks the QP's state until it is RTS (rdmafast/checked.h) */
	rf__chk_sq(&qp->sq)->query = rf__chk_qp_state_ibv;
	rf__chk_sq(&qp->sq)->query_arg = ibqp;
	rf__chk_sq(&qp->sq)->state = RF__CHK_QPS(0);	/* asked at the first post */
#endif
	if (dv.rq.wqe_cnt) {
		struct rf_rq_attr ra;

		memset(&ra, 0, sizeof(ra));
		ra.buf = dv.rq.buf;
		ra.wqe_cnt = dv.rq.wqe_cnt;
		ra.stride = dv.rq.stride;
		ra.dbrec = (__be32 *)dv.dbrec;
		ra.wr_id = (uint64_t *)calloc(dv.rq.wqe_cnt, sizeof(uint64_t));
		if (!ra.wr_id) {
			rf_qp_fini_ibv(qp);
			return -ENOMEM;
		}
		ret = rf_rq_init(&qp->rq, &ra);
		if (ret) {
			free(ra.wr_id);
			rf_qp_fini_ibv(qp);
			return ret;
		}
		qp->has_rq = 1;
	}
	return 0;
}

/*
 * rf_qp_create_ibv - create a QP sized for what rdmafast will post (send
 * ops flags given, so libmlx5 reports the real max_inline_data and sizes
 * the SQ from the WQEs actually used) and take it over. Returns 0 or
 * -errno; -EPROTONOSUPPORT for a device that is not mlx5.
 */
static inline RF_COLD int rf_qp_create_ibv(struct rf_qp *qp, const struct rf_qp_init_attr *a)
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
	ax.qp_type = a->qp_type;
	ax.send_cq = a->send_cq;
	ax.recv_cq = a->recv_cq ? a->recv_cq : a->send_cq;
	ax.srq = a->srq;
	ax.sq_sig_all = a->sig_all;
	ax.cap.max_send_wr = a->max_send_wr;
	ax.cap.max_recv_wr = a->srq ? 0 : a->max_recv_wr;
	ax.cap.max_send_sge = a->max_send_sge ? a->max_send_sge : 1;
	ax.cap.max_recv_sge = a->srq ? 0 : (a->max_recv_sge ? a->max_recv_sge : 1);
	ax.cap.max_inline_data = a->max_inline_data;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = a->send_ops_flags ? a->send_ops_flags : RF_SEND_OPS_DEFAULT;
	if (a->qp_type == IBV_QPT_UD || a->qp_type == IBV_QPT_UC)
		ax.send_ops_flags &= IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				     (a->qp_type == IBV_QPT_UC ?
				      IBV_QP_EX_WITH_RDMA_WRITE |
				      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM : 0);
	if (a->qp_type == IBV_QPT_XRC_SEND) {
		ax.cap.max_recv_wr = 0;
		ax.cap.max_recv_sge = 0;
		ax.recv_cq = NULL;
		ax.srq = NULL;
	}

	/* a bfreg of its own; else the PD alone, and doorbells only */
	pad = rf__qp_td_ibv(a->pd, &td);
	ax.pd = pad ? pad : a->pd;

	ibqp = NULL;
	if (!a->allow_scatter_to_cqe) {
		memset(&dx, 0, sizeof(dx));
		dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
		dx.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
		ibqp = mlx5dv_create_qp(a->pd->context, &ax, &dx);
	}
	/*
	 * Without the flag (asked for, or refused by an old provider or
	 * kernel): the plain extended create. rf_cq_poll() copies scattered
	 * data, so this is still correct for CPU memory.
	 */
	if (!ibqp)
		ibqp = ibv_create_qp_ex(a->pd->context, &ax);
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

/* Destroy the verbs QP (detach it from its CQs first) and free the tables. */
static inline RF_COLD int rf_qp_destroy_ibv(struct rf_qp *qp)
{
	int ret = qp->ibqp ? rf__ibv_err(ibv_destroy_qp(qp->ibqp)) : 0;

	rf_qp_fini_ibv(qp);
	qp->ibqp = NULL;
	if (!ret)	/* a QP that lives on still holds its domains */
		rf__qp_td_free_ibv(qp->td_pd, qp->td);
	qp->td = NULL;
	qp->td_pd = NULL;
	return ret;
}

/*
 * rf_qp_connect_ibv - move the QP RESET -> INIT -> RTR -> RTS toward peer
 * (RC, UC, XRC_SEND; UD ignores peer). Returns 0 or -errno.
 */
static inline RF_COLD int rf_qp_connect_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l,
					    const struct rf_qp_peer *peer)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	struct rf_qp_conn_attr c;
	int rc_like = qp->kind == RF_QP_RC || qp->kind == RF_QP_XRC;
	int mask, ret;

	ret = rf__qp_conn_begin(qp->ibqp->context, l, &c, &pa);
	if (ret)
		return ret;

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.pkey_index = 0;
	at.port_num = c.port;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->kind == RF_QP_UD) {
		at.qkey = c.qkey;
		mask |= IBV_QP_QKEY;
	} else {
		/* what the caller named, nothing more (0: no remote access) */
		at.qp_access_flags = (unsigned int)c.access &
			(qp->kind == RF_QP_UC ?
			 ~(unsigned int)(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC) : ~0U);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	if (ret)
		return rf__ibv_err(ret);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->kind != RF_QP_UD) {
		at.path_mtu = c.mtu;
		at.dest_qp_num = peer->qpn;
		at.rq_psn = peer->psn & 0xffffff;
		rf__qp_conn_path(&at.ah_attr, &c, &pa, peer);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		/* responder resources: RC only (an XRC initiator has none) */
		if (qp->kind == RF_QP_RC) {
			at.max_dest_rd_atomic = c.max_rd_atomic;
			at.min_rnr_timer = c.min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	if (ret)
		return rf__ibv_err(ret);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = c.psn & 0xffffff;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc_like) {
		at.timeout = c.timeout;
		at.retry_cnt = c.retry_cnt;
		at.rnr_retry = c.rnr_retry;
		at.max_rd_atomic = c.max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	RF__CHK(rf__chk_sq(&qp->sq)->state = ret ? RF__CHK_QPS(0) : RF__CHK_RTS);
	return rf__ibv_err(ret);
}


/*
 * IBV_ACCESS_* flags of a window bind to the mkey context's access bits (and
 * RF_MW_ZERO_BASED), as libmlx5 sets them (providers/mlx5/qp.c,
 * get_umr_mr_flags()): no local read, which a window, a remote key only,
 * has no use for.
 */
static inline RF_COLD uint32_t rf_mw_access_ibv(int ibv_access)
{
	return ((ibv_access & IBV_ACCESS_LOCAL_WRITE) ? RF_MKEY_ACCESS_LOCAL_WRITE : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_READ) ? RF_MKEY_ACCESS_REMOTE_READ : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_WRITE) ? RF_MKEY_ACCESS_REMOTE_WRITE : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_ATOMIC) ? RF_MKEY_ACCESS_ATOMIC : 0) |
	       ((ibv_access & IBV_ACCESS_ZERO_BASED) ? RF_MW_ZERO_BASED : 0);
}

/* The 48-byte address vector of an address handle, for rf_sq_post_ud_send(). */
static inline RF_COLD int rf_ah_av_ibv(struct ibv_ah *ah, struct rf_wqe_av *av)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_ah dv;
	int ret;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.ah.in = ah;
	obj.ah.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
	if (ret)
		return rf__ibv_err(ret);
	RF_STATIC_ASSERT(sizeof(*dv.av) == sizeof(*av), "mlx5_wqe_av is 48 bytes");
	memcpy(av, dv.av, sizeof(*av));
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_QP_H */
