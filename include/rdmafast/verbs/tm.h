/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/tm.h - TM SRQs taken over by rdmafast: the SRQ, its
 * command QP and its tag list (rdmafast/tm.h).
 */
#ifndef RDMAFAST_VERBS_TM_H
#define RDMAFAST_VERBS_TM_H

#include <rdmafast/verbs/ibv.h>
#include <rdmafast/verbs/srq.h>
#include <rdmafast/verbs/cq.h>
#include <rdmafast/tm.h>
#include <rdmafast/detail/verbs_qp.h>
#include <rdmafast/detail/verbs_cq.h>

RF_BEGIN_DECLS

/*
 * rf_tm_cmd_qp_ibv - the command QP libmlx5 created for the TM SRQ ibsrq
 * of ntags tags, or NULL. libmlx5 posts ibv_post_srq_ops() there and has
 * no accessor for it: the pointer sits in its private struct mlx5_srq
 * (cmd_qp, providers/mlx5/mlx5.h), which begins with the verbs SRQ. It
 * is found without that struct's offsets, by its contents: the private
 * part holds the doorbell record pointer that mlx5dv_init_obj() reports
 * (db), then a bool, a 16-bit and an int field and cmd_qp, then tm_list,
 * tm_head and tm_tail (the layout of rdma-core 17 through 50). The
 * pointer is taken only when the words after it are a fresh list's
 * (tm_head == tm_list, tm_tail == tm_list + ntags entries of 40 bytes)
 * and the QP it names is an RC QP of this context on this SRQ: a libmlx5
 * laid out otherwise gives NULL, never a wrong QP. Reads stay inside the
 * private struct (it is over 256 bytes after the verbs SRQ). 64-bit only.
 */
static inline RF_COLD struct ibv_qp *rf_tm_cmd_qp_ibv(struct ibv_srq *ibsrq, uint32_t ntags)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_srq dv;
	const uintptr_t *w = (const uintptr_t *)(void *)(ibsrq + 1);
	uintptr_t db;
	size_t i, n = 256 / sizeof(uintptr_t);

	if (sizeof(void *) != 8 || !ntags)
		return NULL;
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.srq.in = ibsrq;
	obj.srq.out = &dv;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ))
		return NULL;
	db = (uintptr_t)dv.dbrec;
	for (i = 0; i + 5 < n; i++) {
		struct ibv_qp *qp;

		if (w[i] != db)
			continue;
		/* db; custom_db, counter, wq_sig; cmd_qp; tm_list, tm_head, tm_tail */
		if (!w[i + 2] || !w[i + 3] || w[i + 4] != w[i + 3] ||
		    w[i + 5] != w[i + 3] + (uintptr_t)ntags * 40)
			return NULL;
		qp = (struct ibv_qp *)w[i + 2];
		if (qp->context != ibsrq->context || qp->srq != ibsrq ||
		    qp->qp_type != IBV_QPT_RC)
			return NULL;
		return qp;
	}
	return NULL;
}

/*
 * rf_tm_init_ibv - take over the command QP and the tag list of a TM SRQ
 * created with tm_cap.max_num_tags = ntags, before any list operation;
 * srq must already be taken over (rf_srq_init_ibv()). Allocates the
 * tables; free them with rf_tm_fini_ibv(). Completions of the list
 * operations come on the SRQ's CQ: attach the command QP there
 * (rf_cq_attach(cq, tm->sq.qpn, &tm->sq, NULL, NULL)) for its error
 * CQEs, and name the SRQ (rf_cq_set_srq()). Returns 0, -EPROTONOSUPPORT
 * when the command QP cannot be found, or -errno.
 */
static inline RF_COLD int rf_tm_init_ibv(struct rf_tm *tm, struct rf_srq *srq,
					 struct ibv_srq *ibsrq, uint32_t ntags)
{
	struct ibv_qp *cmd = rf_tm_cmd_qp_ibv(ibsrq, ntags);
	struct mlx5dv_qp dv;
	struct rf_tm_attr a;
	int ret;

	memset(tm, 0, sizeof(*tm));
	if (!cmd)
		return -EPROTONOSUPPORT;
	memset(&a, 0, sizeof(a));
	ret = rf__qp_dv_ibv(cmd, &dv, &a.sq);
	if (ret)
		return ret;
	if (!dv.sq.wqe_cnt)
		return -EPROTONOSUPPORT;
	a.sq.max_sge = 1;
	a.sq.kind = RF_QP_RC;
	a.srq = srq;
	a.ntags = ntags;
	/* one block: the side table (calloc() aligns it), the ops, the tags */
	a.sq.slot = (struct rf_sq_slot *)calloc(1, (size_t)dv.sq.wqe_cnt *
						sizeof(struct rf_sq_slot) +
						rf_tm_op_size(dv.sq.wqe_cnt) +
						(ntags + 1) * sizeof(struct rf_tm_tag));
	if (!a.sq.slot)
		return -ENOMEM;
	a.op = (struct rf__tm_op *)(void *)(a.sq.slot + dv.sq.wqe_cnt);
	a.tag = (struct rf_tm_tag *)(void *)((uint8_t *)a.op + rf_tm_op_size(dv.sq.wqe_cnt));
	ret = rf_tm_init(tm, &a);
	if (ret)
		free(a.sq.slot);
	return ret;
}

static inline RF_COLD void rf_tm_fini_ibv(struct rf_tm *tm)
{
	free(tm->sq.slot);
	tm->sq.slot = NULL;
}

/*
 * rf_tm_cq_create_ibv - rf_cq_create_ibv() for the CQ of a TM SRQ, which
 * libmlx5 wants extended (ibv_create_cq_ex(); mlx5_create_srq_ex()
 * refuses another with EINVAL). Returns 0 or -errno.
 */
static inline RF_COLD int rf_tm_cq_create_ibv(struct rf_cq *cq, struct ibv_cq **out,
					      struct ibv_context *ctx, int ncqe,
					      struct ibv_comp_channel *channel)
{
	struct ibv_cq_init_attr_ex ax;
	struct mlx5dv_cq_init_attr dx;
	int ret;

	memset(cq, 0, sizeof(*cq));
	*out = NULL;
	ret = rf_device_check_ibv(ctx);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	memset(&dx, 0, sizeof(dx));
	ax.cqe = (uint32_t)ncqe;
	ax.channel = channel;
	ax.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO;
	return rf__cq_create_dv_ibv(cq, out, ctx, &ax, &dx);
}

/*
 * rf_tm_srq_create_ibv - create a TM SRQ on pd whose completions go to cq
 * (ibv_create_srq_ex(), IBV_SRQT_TM) for max_wr receives of one entry,
 * ntags tags and max_ops outstanding list operations, and take over the
 * SRQ and its command QP. *out receives the verbs SRQ. Returns 0 or
 * -errno.
 */
static inline RF_COLD int rf_tm_srq_create_ibv(struct rf_tm *tm, struct rf_srq *srq,
					       struct ibv_srq **out, struct ibv_pd *pd,
					       struct ibv_cq *cq, uint32_t max_wr,
					       uint32_t ntags, uint32_t max_ops)
{
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *ibsrq;
	int ret;

	memset(srq, 0, sizeof(*srq));
	memset(tm, 0, sizeof(*tm));
	*out = NULL;
	ret = rf_device_check_ibv(pd->context);
	if (ret)
		return ret;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = max_wr;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	sa.srq_type = IBV_SRQT_TM;
	sa.pd = pd;
	sa.cq = cq;
	sa.tm_cap.max_num_tags = ntags;
	sa.tm_cap.max_ops = max_ops;
	errno = 0;
	ibsrq = ibv_create_srq_ex(pd->context, &sa);
	if (!ibsrq)
		return errno ? -errno : -ENOMEM;
	ret = rf_srq_init_ibv(srq, ibsrq);
	if (!ret) {
		ret = rf_tm_init_ibv(tm, srq, ibsrq, ntags);
		if (ret)
			rf_srq_fini_ibv(srq);
	}
	if (ret) {
		ibv_destroy_srq(ibsrq);
		return ret;
	}
	*out = ibsrq;
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_TM_H */
