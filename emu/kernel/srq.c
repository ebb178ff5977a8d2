/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * srq.c - shared receive queues, basic, XRC and tag matching.
 *
 * libmlx5 sizes the ring itself (max_wr + 1 rounded up to a power of two,
 * stride = 16-byte next segment + 16 bytes per SGE, at least 32, power of
 * two) and sends the adjusted max_wr/max_sge; we derive the same geometry
 * so the device model can walk the WQE list, as the kernel's mlx5 srq.c
 * (mlx5_ib_create_srq()) derives it from the same request.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

#define EMU_USER_INDEX_MASK	0xffffffu

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

static uint32_t ilog2(uint32_t v)
{
	uint32_t l = 0;

	while ((1u << (l + 1)) <= v)
		l++;
	return l;
}

struct srq_args {
	uint64_t	user_handle;
	uint32_t	srq_type;
	uint32_t	pd_handle, xrcd_handle, cq_handle;
	uint32_t	max_wr, max_sge;
	uint32_t	max_num_tags;	/* TM */
};

static int create_srq(struct emu_cmd *c, const struct srq_args *a,
		      struct ib_uverbs_create_srq_resp *resp)
{
	struct emu_ctx *ctx = c->ctx;
	struct mlx5_ib_create_srq req = {};
	struct mlx5_ib_create_srq_resp drv = {};
	struct emu_xrcd *xrcd = NULL;
	struct emu_cq *cq = NULL;
	struct emu_pd *pd;
	struct emu_srq *srq;
	uint32_t desc;
	uint64_t ring;
	uint32_t tm_log = 0;
	int ret;

	if (a->srq_type == IBV_SRQT_TM && !EMU_CAP(tag_matching))
		return EOPNOTSUPP;
	if (a->srq_type != IBV_SRQT_BASIC && a->srq_type != IBV_SRQT_XRC &&
	    a->srq_type != IBV_SRQT_TM)
		return EINVAL;
	if (a->srq_type == IBV_SRQT_XRC) {
		xrcd = emu_obj_get_locked(ctx, a->xrcd_handle, EMU_OBJ_XRCD);
		if (!xrcd)
			return EINVAL;
	}
	/* ib_srq_has_cq(): XRC and TM SRQs complete into a CQ of their own */
	if (a->srq_type != IBV_SRQT_BASIC) {
		cq = emu_obj_get_locked(ctx, a->cq_handle, EMU_OBJ_CQ);
		if (!cq)
			return EINVAL;
	}
	pd = emu_obj_get_locked(ctx, a->pd_handle, EMU_OBJ_PD);
	if (!pd)
		return EINVAL;
	if (a->max_wr >= EMU_CAP_POW2(log_max_srq_sz) - 1 ||
	    a->max_sge > emu_cap_max_rq_sge() - 1)
		return EINVAL;

	memcpy(&req, c->drv_in, c->drv_in_len < sizeof(req) ? c->drv_in_len : sizeof(req));
	if (c->drv_in_len < offsetof(struct mlx5_ib_create_srq, uidx) + sizeof(req.uidx))
		return EINVAL;
	/* create_srq_user() in mlx5's srq.c: reserved and trailing bytes zero */
	if (req.reserved0 || req.reserved1)
		return EINVAL;
	for (size_t i = sizeof(req); i < c->drv_in_len; i++)
		if (((const uint8_t *)c->drv_in)[i])
			return EINVAL;
	if (req.flags & ~(uint32_t)MLX5_SRQ_FLAG_SIGNATURE)
		return EINVAL;
	if (req.uidx > EMU_USER_INDEX_MASK)
		return EINVAL;
	/*
	 * mlx5_ib_create_srq(): the list has 2^(ilog2(max_num_tags) + 1)
	 * entries, more than max_num_tags (libmlx5 keeps one back as the
	 * end of its free list), and no more than the device's.  The kernel
	 * checks it once the ring is pinned; the errno is the same.
	 */
	if (a->srq_type == IBV_SRQT_TM) {
		tm_log = a->max_num_tags ? ilog2(a->max_num_tags) + 1 : 0;
		if (tm_log > EMU_CAP(log_tag_matching_list_sz))
			return EINVAL;
	}
	/* pinned as mlx5's create_srq_user() does: the ring, the doorbell page */
	desc = roundup_pow2(16 + 16 * (a->max_sge ? a->max_sge : 1));
	if (desc < 32)
		desc = 32;
	if ((ret = emu_umem_get(0, req.buf_addr,
				(uint64_t)roundup_pow2(a->max_wr + 1) * desc, false, &ring)) ||
	    (ret = emu_db_get(ctx, ring, req.db_addr)) ||
	    (ret = emu_db_map(ctx, req.db_addr)))
		return ret;

	srq = emu_obj_alloc(ctx, EMU_OBJ_SRQ, sizeof(*srq), a->user_handle);
	if (!srq) {
		emu_db_unmap(ctx, req.db_addr);
		return ENOMEM;
	}
	ret = emu_num_alloc_locked(EMU_NUM_SRQ, srq, &srq->srqn);
	if (ret) {
		emu_obj_free_locked(&srq->obj);
		emu_db_unmap(ctx, req.db_addr);
		return ret;
	}
	emu_pin_charge(&srq->pin, ring);
	srq->type = a->srq_type;
	srq->pd = pd;
	srq->xrcd = xrcd;
	srq->cq = cq;
	srq->uidx = req.uidx;
	srq->tm_list_size = a->srq_type == IBV_SRQT_TM ? 1u << tm_log : 0;
	srq->buf = req.buf_addr;
	srq->dbrec = req.db_addr;
	srq->wqe_cnt = roundup_pow2(a->max_wr + 1);
	srq->wqe_shift = ilog2(desc);
	srq->max_wr = srq->wqe_cnt - 1;
	/*
	 * The SGEs asked, not those the stride holds: mlx5_ib_create_srq()
	 * keeps them as msrq.max_gs, which CREATE_SRQ and QUERY_SRQ
	 * (mlx5_ib_query_srq()) answer.  libmlx5 asks the rounded count.
	 */
	srq->max_sge = a->max_sge;
	pd->obj.usecnt++;
	if (xrcd)
		xrcd->obj.usecnt++;
	if (cq)
		cq->obj.usecnt++;
	emu_dev_srq_created(srq);

	resp->srq_handle = srq->obj.handle;
	resp->max_wr = srq->max_wr;
	resp->max_sge = srq->max_sge;
	resp->srqn = srq->srqn;
	drv.srqn = srq->srqn;
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

int emu_cmd_create_srq(struct emu_cmd *c)
{
	const struct ib_uverbs_create_srq *cmd = c->in;
	struct srq_args a = {
		.user_handle = cmd->user_handle,
		.srq_type = IBV_SRQT_BASIC,
		.pd_handle = cmd->pd_handle,
		.max_wr = cmd->max_wr,
		.max_sge = cmd->max_sge,
	};

	/* srq_limit is ignored at creation (ibv_create_srq(3)) */
	return create_srq(c, &a, c->out);
}

int emu_cmd_create_xsrq(struct emu_cmd *c)
{
	const struct ib_uverbs_create_xsrq *cmd = c->in;
	struct srq_args a = {
		.user_handle = cmd->user_handle,
		.srq_type = cmd->srq_type,
		.pd_handle = cmd->pd_handle,
		.xrcd_handle = cmd->xrcd_handle,
		.cq_handle = cmd->cq_handle,
		.max_wr = cmd->max_wr,
		.max_sge = cmd->max_sge,
		.max_num_tags = cmd->max_num_tags,
	};

	return create_srq(c, &a, c->out);
}

int emu_cmd_modify_srq(struct emu_cmd *c)
{
	const struct ib_uverbs_modify_srq *cmd = c->in;
	struct emu_srq *srq = emu_obj_get_locked(c->ctx, cmd->srq_handle, EMU_OBJ_SRQ);

	if (!srq)
		return EINVAL;
	if (cmd->attr_mask & ~(uint32_t)(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	/* mlx5 cannot resize an SRQ */
	if (cmd->attr_mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	if (cmd->attr_mask & IBV_SRQ_LIMIT) {
		/* the limit must be below the queue size */
		if (cmd->srq_limit >= srq->wqe_cnt)
			return EINVAL;
		/* a non-zero limit arms the one-shot SRQ_LIMIT_REACHED event */
		srq->limit = cmd->srq_limit;
		srq->limit_armed = cmd->srq_limit != 0;
	}
	emu_dev_srq_modified(srq, cmd->attr_mask);
	return 0;
}

int emu_cmd_query_srq(struct emu_cmd *c)
{
	const struct ib_uverbs_query_srq *cmd = c->in;
	struct ib_uverbs_query_srq_resp *resp = c->out;
	struct emu_srq *srq = emu_obj_get_locked(c->ctx, cmd->srq_handle, EMU_OBJ_SRQ);

	if (!srq)
		return EINVAL;
	resp->max_wr = srq->max_wr;
	resp->max_sge = srq->max_sge;
	resp->srq_limit = srq->limit;
	return 0;
}

void emu_srq_destroy_locked(struct emu_srq *srq)
{
	emu_dev_srq_destroyed(srq);
	srq->pd->obj.usecnt--;
	if (srq->xrcd)
		srq->xrcd->obj.usecnt--;
	if (srq->cq)
		srq->cq->obj.usecnt--;
	emu_pin_release(&srq->pin);
	emu_db_unmap(srq->obj.ctx, srq->dbrec);
	emu_num_free_locked(EMU_NUM_SRQ, srq->srqn);
	emu_obj_free_locked(&srq->obj);
}

int emu_cmd_destroy_srq(struct emu_cmd *c)
{
	const struct ib_uverbs_destroy_srq *cmd = c->in;
	struct ib_uverbs_destroy_srq_resp *resp = c->out;
	struct emu_srq *srq = emu_obj_get_locked(c->ctx, cmd->srq_handle, EMU_OBJ_SRQ);

	if (!srq)
		return EINVAL;
	if (srq->obj.usecnt)
		return EBUSY;	/* QPs still receive through it */
	resp->events_reported = srq->async_events -
		emu_evq_reclaim_async(&c->ctx->async, srq->obj.user_handle);
	emu_srq_destroy_locked(srq);
	return 0;
}
