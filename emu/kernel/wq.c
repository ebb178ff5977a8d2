/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wq.c - work queues (ibv_create_wq(): an Ethernet receive queue, the
 * firmware's RQ object) and receive WQ indirection tables
 * (ibv_create_rwq_ind_table(), its RQT), the pieces an RSS raw packet QP
 * spreads its frames over.  The extended write() commands, with the
 * checks of ib_uverbs_ex_create_wq() and its siblings in the kernel's
 * drivers/infiniband/core/uverbs_cmd.c and of mlx5_ib_create_wq(),
 * mlx5_ib_modify_wq() and mlx5_ib_create_rwq_ind_table() in
 * drivers/infiniband/hw/mlx5/qp.c.
 *
 * libmlx5 allocates the ring and the doorbell record as for a QP's RQ and
 * posts into it without the kernel.  The device delivers to a WQ the
 * frames an RSS QP (rss.c) over a table naming it hashes there
 * (device/rss.c).
 */
#include <string.h>

#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

#define EMU_USER_INDEX_MASK	0xffffffu

/* the WQ flags (enum ib_wq_flags): each needs an HCA cap this device lacks */
#define EMU_WQ_FLAGS_KNOWN	(IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS | \
				 IBV_WQ_FLAGS_DELAY_DROP | IBV_WQ_FLAGS_PCI_WRITE_END_PADDING)

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* The driver part must be zeros past what the driver knows (ib_is_udata_cleared()). */
static bool drv_tail_clear(const struct emu_cmd *c, size_t known)
{
	for (size_t i = known; i < c->drv_in_len; i++)
		if (((const uint8_t *)c->drv_in)[i])
			return false;
	return true;
}

int emu_cmd_create_wq(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_create_wq *cmd = c->in;
	struct ib_uverbs_ex_create_wq_resp *resp = c->out;
	struct mlx5_ib_create_wq req = {};
	struct mlx5_ib_create_wq_resp drv = {};
	struct emu_ctx *ctx = c->ctx;
	struct emu_pd *pd;
	struct emu_cq *cq;
	struct emu_wq *wq;
	uint64_t ring, size;
	int ret;

	/* ib_uverbs_ex_create_wq() */
	if (cmd->comp_mask)
		return EOPNOTSUPP;
	pd = emu_obj_get_locked(ctx, cmd->pd_handle, EMU_OBJ_PD);
	cq = emu_obj_get_locked(ctx, cmd->cq_handle, EMU_OBJ_CQ);
	if (!pd || !cq)
		return EINVAL;
	/* mlx5_ib_create_wq(): a receive queue is the only kind */
	if (cmd->wq_type != IBV_WQT_RQ)
		return EINVAL;
	/* prepare_user_rq(): the request up to the striding fields, the rest zeros */
	if (c->drv_in_len < offsetof(struct mlx5_ib_create_wq, single_stride_log_num_of_bytes))
		return EINVAL;
	memcpy(&req, c->drv_in, c->drv_in_len < sizeof(req) ? c->drv_in_len : sizeof(req));
	if (!drv_tail_clear(c, sizeof(req)))
		return EOPNOTSUPP;
	/* a striding RQ needs the striding caps, which this device reports none of */
	if (req.comp_mask)
		return EOPNOTSUPP;
	if (cmd->create_flags & ~(uint32_t)EMU_WQ_FLAGS_KNOWN)
		return EINVAL;
	if (cmd->create_flags)
		return EOPNOTSUPP;
	if (req.user_index > EMU_USER_INDEX_MASK)
		return EINVAL;
	/*
	 * set_user_rq_size(): some WRs, and the ring libmlx5 made, a power of
	 * two of WQEs no more than the device's queue holds.
	 */
	if (!cmd->max_wr || cmd->max_wr > EMU_CAP_POW2(log_max_qp_sz) ||
	    !is_pow2(req.rq_wqe_count) || req.rq_wqe_count > EMU_CAP_POW2(log_max_qp_sz) ||
	    req.rq_wqe_shift < 4 || req.rq_wqe_shift > 31)
		return EINVAL;
	if (!req.buf_addr)
		return EINVAL;		/* create_user_rq() */
	size = (uint64_t)req.rq_wqe_count << req.rq_wqe_shift;
	if ((ret = emu_umem_get(0, req.buf_addr, size, false, &ring)) ||
	    (ret = emu_db_get(ctx, ring, req.db_addr)) ||
	    (ret = emu_db_map(ctx, req.db_addr)))
		return ret;

	wq = emu_obj_alloc(ctx, EMU_OBJ_WQ, sizeof(*wq), cmd->user_handle);
	if (!wq) {
		emu_db_unmap(ctx, req.db_addr);
		return ENOMEM;
	}
	ret = emu_num_alloc_locked(EMU_NUM_RQ, wq, &wq->wqn);
	if (ret) {
		emu_obj_free_locked(&wq->obj);
		emu_db_unmap(ctx, req.db_addr);
		return ret;
	}
	emu_pin_charge(&wq->pin, ring);
	wq->pd = pd;
	wq->cq = cq;
	wq->uidx = req.user_index;
	wq->state = IBV_WQS_RESET;
	wq->buf = req.buf_addr;
	wq->dbrec = req.db_addr;
	wq->wqe_cnt = req.rq_wqe_count;
	wq->wqe_shift = req.rq_wqe_shift;
	pd->obj.usecnt++;
	cq->obj.usecnt++;

	/* the core echoes the caps asked: mlx5 changes none */
	resp->wq_handle = wq->obj.handle;
	resp->max_wr = cmd->max_wr;
	resp->max_sge = cmd->max_sge;
	resp->wqn = wq->wqn;
	resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ? c->out_len :
					   sizeof(*resp));
	drv.response_length = (uint32_t)(offsetof(struct mlx5_ib_create_wq_resp, response_length) +
					 sizeof(drv.response_length));
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

/*
 * mlx5_ib_modify_wq(): MODIFY_RQ from the state asserted (or the real one)
 * to the state asked.  The firmware's RQ moves RST->RDY, RDY->RDY,
 * RDY->ERR and from any state to RST; it refuses the rest, and a current
 * state that is not the RQ's, as a bad parameter (EINVAL).
 */
static bool wq_move_ok(enum ibv_wq_state cur, enum ibv_wq_state next)
{
	if (next == IBV_WQS_RESET)
		return true;
	if (cur == IBV_WQS_RESET)
		return next == IBV_WQS_RDY;
	if (cur == IBV_WQS_RDY)
		return next == IBV_WQS_RDY || next == IBV_WQS_ERR;
	return false;
}

int emu_cmd_modify_wq(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_modify_wq *cmd = c->in;
	struct mlx5_ib_modify_wq req = {};
	struct emu_wq *wq;
	enum ibv_wq_state cur, next;

	/* ib_uverbs_ex_modify_wq() */
	if (!cmd->attr_mask ||
	    cmd->attr_mask > (IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE | IBV_WQ_ATTR_FLAGS))
		return EINVAL;
	wq = emu_obj_get_locked(c->ctx, cmd->wq_handle, EMU_OBJ_WQ);
	if (!wq)
		return EINVAL;
	/* mlx5_ib_modify_wq(): its request whole, nothing it does not know */
	if (c->drv_in_len < sizeof(req))
		return EINVAL;
	memcpy(&req, c->drv_in, sizeof(req));
	if (req.comp_mask || req.reserved || !drv_tail_clear(c, sizeof(req)))
		return EOPNOTSUPP;
	if ((cmd->attr_mask & IBV_WQ_ATTR_FLAGS) && (cmd->flags_mask & cmd->flags))
		return EOPNOTSUPP;	/* every WQ flag needs a cap */
	cur = (cmd->attr_mask & IBV_WQ_ATTR_CURR_STATE) ? cmd->curr_wq_state : wq->state;
	next = (cmd->attr_mask & IBV_WQ_ATTR_STATE) ? cmd->wq_state : cur;
	if (cur > IBV_WQS_ERR || next > IBV_WQS_ERR)
		return EINVAL;
	if (cur != wq->state || !wq_move_ok(cur, next))
		return EINVAL;
	if (next == IBV_WQS_RESET) {
		wq->rq_ci = 0;	/* libmlx5 starts its ring over, as the RQ does */
		wq->rx_drops = 0;
	}
	wq->state = next;
	return 0;
}

void emu_wq_destroy_locked(struct emu_wq *wq)
{
	wq->pd->obj.usecnt--;
	wq->cq->obj.usecnt--;
	emu_pin_release(&wq->pin);
	emu_db_unmap(wq->obj.ctx, wq->dbrec);
	emu_num_free_locked(EMU_NUM_RQ, wq->wqn);
	emu_obj_free_locked(&wq->obj);
}

int emu_cmd_destroy_wq(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_destroy_wq *cmd = c->in;
	struct ib_uverbs_ex_destroy_wq_resp *resp = c->out;
	struct emu_wq *wq;

	if (cmd->comp_mask)
		return EOPNOTSUPP;	/* ib_uverbs_ex_destroy_wq() */
	wq = emu_obj_get_locked(c->ctx, cmd->wq_handle, EMU_OBJ_WQ);
	if (!wq)
		return EINVAL;
	if (wq->obj.usecnt)
		return EBUSY;	/* an indirection table still names it */
	resp->events_reported = wq->async_events -
		emu_evq_reclaim_async(&c->ctx->async, wq->obj.user_handle);
	resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ? c->out_len :
					   sizeof(*resp));
	emu_wq_destroy_locked(wq);
	return 0;
}

/* ---- receive WQ indirection tables ------------------------------------- */

int emu_cmd_create_rwq_ind_tbl(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_create_rwq_ind_table *cmd = c->in;
	struct ib_uverbs_ex_create_rwq_ind_table_resp *resp = c->out;
	struct emu_rwq_ind_tbl *t;
	size_t handles, expected;
	uint32_t n;
	int ret;

	/*
	 * ib_uverbs_ex_create_rwq_ind_table(): the handles follow the
	 * command, 2^log of them (one is padded to 8 bytes); more bytes must
	 * be zeros.
	 */
	if (cmd->comp_mask)
		return EOPNOTSUPP;
	if (cmd->log_ind_tbl_size > IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE)
		return EINVAL;
	n = 1u << cmd->log_ind_tbl_size;
	expected = (n == 1 ? 2 : n) * sizeof(uint32_t);
	handles = c->in_len - sizeof(*cmd);
	if (handles < expected)
		return EINVAL;
	for (size_t i = sizeof(*cmd) + expected; i < c->in_len; i++)
		if (((const uint8_t *)c->in)[i])
			return EOPNOTSUPP;
	for (uint32_t i = 0; i < n; i++)
		if (!emu_obj_get_locked(c->ctx, cmd->wq_handles[i], EMU_OBJ_WQ))
			return EINVAL;
	/*
	 * mlx5_ib_create_rwq_ind_table(): a driver request of zeros only, and
	 * no more entries than the device's RQT takes (log_max_rqt_size,
	 * the max_rwq_indirection_table_size of rss_caps)
	 */
	if (!drv_tail_clear(c, 0))
		return EOPNOTSUPP;
	if (n > EMU_RSS_MAX_RQT_SIZE)
		return EINVAL;

	t = emu_obj_alloc(c->ctx, EMU_OBJ_RWQ_IND_TBL, sizeof(*t) + n * sizeof(t->wq[0]), 0);
	if (!t)
		return ENOMEM;
	ret = emu_num_alloc_locked(EMU_NUM_RQT, t, &t->rqtn);
	if (ret) {
		emu_obj_free_locked(&t->obj);
		return ret;
	}
	t->size = n;
	for (uint32_t i = 0; i < n; i++) {
		t->wq[i] = emu_obj_get_locked(c->ctx, cmd->wq_handles[i], EMU_OBJ_WQ);
		t->wq[i]->obj.usecnt++;
	}
	resp->ind_tbl_handle = t->obj.handle;
	resp->ind_tbl_num = t->rqtn;
	resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ? c->out_len :
					   sizeof(*resp));
	return 0;
}

void emu_rwq_ind_tbl_destroy_locked(struct emu_rwq_ind_tbl *t)
{
	for (uint32_t i = 0; i < t->size; i++)
		t->wq[i]->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_RQT, t->rqtn);
	emu_obj_free_locked(&t->obj);
}

int emu_cmd_destroy_rwq_ind_tbl(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_destroy_rwq_ind_table *cmd = c->in;
	struct emu_rwq_ind_tbl *t;

	if (cmd->comp_mask)
		return EOPNOTSUPP;	/* ib_uverbs_ex_destroy_rwq_ind_table() */
	t = emu_obj_get_locked(c->ctx, cmd->ind_tbl_handle, EMU_OBJ_RWQ_IND_TBL);
	if (!t)
		return EINVAL;
	if (t->obj.usecnt)
		return EBUSY;	/* an RSS QP (rss.c) still spreads over it */
	emu_rwq_ind_tbl_destroy_locked(t);
	return 0;
}
