/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/verbs_qp.h - the machinery of verbs/qp.h, xrc.h, dc.h
 * and tm.h: a verbs QP's send queue as mlx5dv reports it, a connection's
 * attributes resolved to what is programmed, its address vector.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_VERBS_QP_H
#define RDMAFAST_DETAIL_VERBS_QP_H

#include <stdint.h>
#include <string.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/verbs_ibv.h>
#include <rdmafast/verbs/conn.h>

RF_BEGIN_DECLS

/*
 * The QP ibqp as mlx5dv reports it (*dv), and its send queue's place in
 * *sa (buffer, size, doorbell record, BlueFlame register, QPN; the rest
 * zero, for the caller). -EPROTONOSUPPORT when the send queue's WQE basic
 * block is not the 64 bytes rdmafast builds; a QP without a send queue
 * (wqe_cnt 0) is the caller's to refuse. Returns 0 or -errno.
 */
static inline RF_COLD int rf__qp_dv_ibv(struct ibv_qp *ibqp, struct mlx5dv_qp *dv,
					struct rf_sq_attr *sa)
{
	struct mlx5dv_obj obj;
	int ret;

	memset(&obj, 0, sizeof(obj));
	memset(dv, 0, sizeof(*dv));
	memset(sa, 0, sizeof(*sa));	/* zero on every return */
	obj.qp.in = ibqp;
	obj.qp.out = dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP);
	if (ret)
		return rf__ibv_err(ret);
	if (dv->sq.wqe_cnt && dv->sq.stride != RF_SEND_WQE_BB)
		return -EPROTONOSUPPORT;
	sa->buf = dv->sq.buf;
	sa->wqe_cnt = dv->sq.wqe_cnt;
	sa->dbrec = (__be32 *)dv->dbrec;
	sa->bf_reg = dv->bf.reg;
	sa->bf_size = dv->bf.size;
	sa->qpn = ibqp->qp_num;
	return 0;
}

/*
 * A parent domain over pd with a thread domain of its own (*td), for one
 * QP to be created on: libmlx5 gives such a QP the thread domain's bfreg,
 * one no other QP rings (providers/mlx5/verbs.c: mlx5_alloc_td() takes a
 * bfreg of a UAR page of its own, mlx5_attach_dedicated_uar(); create_qp()
 * uses it instead of mlx5_get_qp_uar(), which past the dedicated quota,
 * MLX5_NUM_LOW_LAT_UUARS, 4 by default, hands one bfreg to several QPs).
 * rdmafast's BlueFlame toggle is the queue's own (struct rf_bf), so a
 * queue that rings BlueFlame must be alone on its bfreg. NULL when the
 * provider has no thread domains or no UAR left (then *td is NULL too).
 */
static inline RF_COLD struct ibv_pd *rf__qp_td_ibv(struct ibv_pd *pd, struct ibv_td **td)
{
	struct ibv_td_init_attr ta;
	struct ibv_parent_domain_init_attr pa;
	struct ibv_pd *pad;

	memset(&ta, 0, sizeof(ta));
	*td = ibv_alloc_td(pd->context, &ta);
	if (!*td)
		return NULL;
	memset(&pa, 0, sizeof(pa));
	pa.pd = pd;
	pa.td = *td;
	pad = ibv_alloc_parent_domain(pd->context, &pa);
	if (!pad) {
		ibv_dealloc_td(*td);
		*td = NULL;
	}
	return pad;
}

/*
 * rf__qp_td_free_ibv - free what rf__qp_td_ibv() gave, once the QP on it
 * is destroyed (a thread domain a parent domain holds is EBUSY).
 */
static inline RF_COLD void rf__qp_td_free_ibv(struct ibv_pd *pad, struct ibv_td *td)
{
	if (pad)
		ibv_dealloc_pd(pad);
	if (td)
		ibv_dealloc_td(td);
}

/*
 * rf__sq_bf_off - ring sq with the 8-byte doorbell only, at a place that
 * never moves: what a queue that may share its bfreg with others does
 * (libmlx5 rings bfreg 0, which every QP shares, that way and without a
 * lock). Only before the first post.
 */
static inline RF_COLD void rf__sq_bf_off(struct rf_sq *sq)
{
	(void)rf_bf_init(&sq->bf, sq->bf.reg, 0);	/* size 0 never fails */
	sq->bf_bbs = 0;
	sq->no_bf_bias = RF__SQ_NO_BF_BIAS;
	sq->bf_rung_pi = sq->no_bf_bias;
}

/*
 * rf__qp_conn_begin - l as it will be programmed: every zero that stands
 * for a default replaced by it (access, 0 for none, is as given), the
 * MTU by the active MTU of the port, which is queried into *pa. Returns
 * 0 or -errno.
 */
static inline RF_COLD int rf__qp_conn_begin(struct ibv_context *ctx,
					    const struct rf_qp_conn_attr *l,
					    struct rf_qp_conn_attr *c, struct ibv_port_attr *pa)
{
	int ret;

	*c = *l;
	if (!c->port)
		c->port = RF_QP_DEFAULT_PORT;
	memset(pa, 0, sizeof(*pa));
	ret = ibv_query_port(ctx, c->port, pa);
	if (ret)
		return rf__ibv_err(ret);
	if (!c->mtu)
		c->mtu = pa->active_mtu;
	if (!c->max_rd_atomic)
		c->max_rd_atomic = RF_QP_DEFAULT_MAX_RD_ATOMIC;
	if (!c->min_rnr_timer)
		c->min_rnr_timer = RF_QP_DEFAULT_MIN_RNR_TIMER;
	if (!c->timeout)
		c->timeout = RF_QP_DEFAULT_TIMEOUT;
	if (!c->retry_cnt)
		c->retry_cnt = RF_QP_DEFAULT_RETRY_CNT;
	if (!c->rnr_retry_set && !c->rnr_retry)
		c->rnr_retry = RF_QP_DEFAULT_RNR_RETRY;
	return 0;
}

/*
 * The address vector of a connection c (resolved) on a port like pa,
 * toward peer (NULL for a DC target, whose peers name themselves).
 */
static inline RF_COLD void rf__qp_conn_path(struct ibv_ah_attr *ah, const struct rf_qp_conn_attr *c,
					    const struct ibv_port_attr *pa,
					    const struct rf_qp_peer *peer)
{
	ah->port_num = c->port;
	ah->sl = c->sl;
	if (peer)
		ah->dlid = peer->lid;
	if (rf_qp_conn_grh(c, pa)) {
		ah->is_global = 1;
		if (peer)
			ah->grh.dgid = peer->gid;
		ah->grh.sgid_index = (uint8_t)c->gid_index;
		ah->grh.hop_limit = RF_QP_DEFAULT_HOP_LIMIT;
	}
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_VERBS_QP_H */
