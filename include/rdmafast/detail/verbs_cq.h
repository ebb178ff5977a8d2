/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/verbs_cq.h - the machinery of verbs/cq.h and verbs/tm.h:
 * a verbs CQ taken over as mlx5dv reports it, and created through mlx5dv.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_VERBS_CQ_H
#define RDMAFAST_DETAIL_VERBS_CQ_H

#include <errno.h>
#include <string.h>

#include <rdmafast/compiler.h>
#include <rdmafast/cq.h>
#include <rdmafast/detail/verbs_ibv.h>

RF_BEGIN_DECLS

/*
 * rf_cq_init_ibv() on a CQ of a context already checked (mlx5dv drives
 * it): the CQ as mlx5dv reports it, taken over. Returns 0 or -errno.
 */
static inline RF_COLD int rf__cq_init_dv_ibv(struct rf_cq *cq, struct ibv_cq *ibcq)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dv;
	struct rf_cq_attr a;
	int ret;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.cq.in = ibcq;
	obj.cq.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
	if (ret)
		return rf__ibv_err(ret);
	memset(&a, 0, sizeof(a));
	a.buf = dv.buf;
	a.cqe_cnt = dv.cqe_cnt;
	a.cqe_size = dv.cqe_size;
	a.dbrec = (__be32 *)dv.dbrec;
	a.uar = dv.cq_uar;
	a.cqn = dv.cqn;
	return rf_cq_init(cq, &a);
}

/*
 * The tail verbs/cq.h's and verbs/tm.h's mlx5dv CQ helpers share, on a
 * context they checked: mlx5dv_create_cq() with the attributes they
 * filled, taken over by rdmafast, destroyed again if that fails. Returns
 * 0 or -errno.
 */
static inline RF_COLD int rf__cq_create_dv_ibv(struct rf_cq *cq, struct ibv_cq **out,
					       struct ibv_context *ctx,
					       struct ibv_cq_init_attr_ex *ax,
					       struct mlx5dv_cq_init_attr *dx)
{
	struct ibv_cq_ex *cx;
	int ret;

	errno = 0;
	cx = mlx5dv_create_cq(ctx, ax, dx);
	if (!cx)
		return errno ? -errno : -ENOMEM;
	ret = rf__cq_init_dv_ibv(cq, ibv_cq_ex_to_cq(cx));
	if (ret) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cx));
		return ret;
	}
	*out = ibv_cq_ex_to_cq(cx);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_VERBS_CQ_H */
