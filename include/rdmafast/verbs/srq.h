/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/srq.h - SRQs taken over by rdmafast, and their limit event.
 */
#ifndef RDMAFAST_VERBS_SRQ_H
#define RDMAFAST_VERBS_SRQ_H

#include <rdmafast/verbs/ibv.h>

RF_BEGIN_DECLS

/*
 * rf_srq_init_ibv - take over an SRQ (or XRC SRQ) nothing was posted to.
 * Allocates its wr_id table; free it with rf_srq_fini_ibv().
 */
static inline RF_COLD int rf_srq_init_ibv(struct rf_srq *srq, struct ibv_srq *ibsrq)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_srq dv;
	struct rf_srq_attr a;
	int ret;

	ret = rf_device_check_ibv(ibsrq->context);
	if (ret)
		return ret;
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = MLX5DV_SRQ_MASK_SRQN;
	obj.srq.in = ibsrq;
	obj.srq.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ);
	if (ret)
		return rf__ibv_err(ret);
	memset(&a, 0, sizeof(a));
	a.buf = dv.buf;
	/* a fresh libmlx5 SRQ: next[i] = i + 1, head 0, tail = last */
	a.wqe_cnt = dv.tail + 1;
	a.stride = dv.stride;
	a.head = dv.head;
	a.tail = dv.tail;
	a.srqn = (dv.comp_mask & MLX5DV_SRQ_MASK_SRQN) ? dv.srqn : 0;
	a.dbrec = (__be32 *)dv.dbrec;
	a.wr_id = (uint64_t *)calloc(a.wqe_cnt, sizeof(uint64_t));
	if (!a.wr_id)
		return -ENOMEM;
	ret = rf_srq_init(srq, &a);
	if (ret)
		free(a.wr_id);
	return ret;
}

static inline RF_COLD void rf_srq_fini_ibv(struct rf_srq *srq)
{
	free(srq->wr_id);
	srq->wr_id = NULL;
}

/*
 * rf_srq_create_ibv - create an SRQ on pd for at least max_wr receives of
 * max_sge scatter entries each (0: 1), as ibv_create_srq(), and take it
 * over (rf_srq_init_ibv()). *out receives the verbs SRQ, for the QPs
 * (rf_qp_init_attr.srq), rf_srq_arm_limit_ibv() and rf_srq_destroy_ibv().
 * Returns 0 or -errno.
 */
static inline RF_COLD int rf_srq_create_ibv(struct rf_srq *srq, struct ibv_srq **out,
					    struct ibv_pd *pd, uint32_t max_wr,
					    uint32_t max_sge)
{
	struct ibv_srq_init_attr sa;
	struct ibv_srq *ibsrq;
	int ret;

	memset(srq, 0, sizeof(*srq));	/* failed: an SRQ that holds nothing */
	*out = NULL;
	ret = rf_device_check_ibv(pd->context);
	if (ret)
		return ret;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = max_wr;
	sa.attr.max_sge = max_sge ? max_sge : 1;
	errno = 0;
	ibsrq = ibv_create_srq(pd, &sa);
	if (!ibsrq)
		return errno ? -errno : -ENOMEM;
	ret = rf_srq_init_ibv(srq, ibsrq);
	if (ret) {
		ibv_destroy_srq(ibsrq);
		return ret;
	}
	*out = ibsrq;
	return 0;
}

/*
 * rf_srq_destroy_ibv - destroy the verbs SRQ behind srq (ibv_destroy_srq(),
 * which fails with -EBUSY while a QP uses it: destroy the QPs first) and
 * free its wr_id table. Returns 0 or -errno; the table is kept when the
 * SRQ is.
 */
static inline RF_COLD int rf_srq_destroy_ibv(struct rf_srq *srq, struct ibv_srq *ibsrq)
{
	int ret = rf__ibv_err(ibv_destroy_srq(ibsrq));

	if (!ret)
		rf_srq_fini_ibv(srq);
	return ret;
}

/*
 * rf_srq_arm_limit_ibv - arm the SRQ limit: one IBV_EVENT_SRQ_LIMIT_REACHED
 * on the context's async channel when the receives posted to srq and not
 * yet consumed drop below limit (ibv_modify_srq(3), IBV_SRQ_LIMIT). The
 * event disarms it; arm again after refilling. 0 disarms. Returns 0 or
 * -errno (-EINVAL: beyond the kernel's bound, mlx5_ib_modify_srq():
 * below its WQE count for the SRQ).
 */
static inline RF_COLD int rf_srq_arm_limit_ibv(struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a;

	memset(&a, 0, sizeof(a));
	a.srq_limit = limit;
	return rf__ibv_err(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_SRQ_H */
