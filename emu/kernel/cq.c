/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cq.c - completion channels and completion queues.
 *
 * libmlx5 allocates the CQE ring and its doorbell record in process memory
 * and passes their addresses in the mlx5 part of CREATE_CQ; the device
 * model writes CQEs there directly.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

#define CQE_OPCODE_RESIZE	5

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

/* ---- completion channels ----------------------------------------------- */

struct emu_channel *emu_channel_by_fd_locked(struct emu_ctx *ctx, int fd)
{
	for (struct emu_channel *ch = ctx->channels; ch; ch = ch->next)
		if (ch->evq.user_fd == fd)
			return ch;
	return NULL;
}

/*
 * A channel lives while the process holds its fd or a CQ uses it.
 * usecnt counts the CQs; user_fd == -1 means the fd was closed.
 */
void emu_channel_put_locked(struct emu_channel *ch)
{
	struct emu_channel **pp;

	if (ch->usecnt || ch->evq.user_fd >= 0)
		return;
	for (pp = &ch->ctx->channels; *pp; pp = &(*pp)->next)
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	emu_evq_close(&ch->evq);
	free(ch);
}

int emu_cmd_create_comp_channel(struct emu_cmd *c)
{
	struct ib_uverbs_create_comp_channel_resp *resp = c->out;
	struct emu_channel *ch = calloc(1, sizeof(*ch));
	int ret;

	if (!ch)
		return ENOMEM;
	ret = emu_evq_open(&ch->evq);
	if (ret) {
		free(ch);
		return ret;
	}
	ch->ctx = c->ctx;
	ch->next = c->ctx->channels;
	c->ctx->channels = ch;
	emu_fd_watch(ch->evq.user_fd, true);
	resp->fd = (uint32_t)ch->evq.user_fd;
	return 0;
}

/* ---- CQ ---------------------------------------------------------------- */

static int create_cq(struct emu_cmd *c, uint64_t user_handle, uint32_t cqe,
		     uint32_t comp_vector, int32_t channel_fd, uint32_t flags,
		     struct ib_uverbs_create_cq_resp *resp)
{
	struct mlx5_ib_create_cq req = {};
	struct mlx5_ib_create_cq_resp drv = {};
	struct emu_channel *ch = NULL;
	struct emu_cq *cq;
	uint32_t entries, uar_page;
	uint64_t ring;
	int ret;

	if (c->drv_in_len < offsetof(struct mlx5_ib_create_cq, flags))
		return EINVAL;
	memcpy(&req, c->drv_in, c->drv_in_len < sizeof(req) ? c->drv_in_len : sizeof(req));

	if (comp_vector >= EMU_NUM_COMP_VECTORS)
		return EINVAL;
	/* not a completion channel of this context: lookup_get_fd_uobject()'s EBADF */
	if (channel_fd >= 0) {
		ch = emu_channel_by_fd_locked(c->ctx, channel_fd);
		if (!ch)
			return EBADF;
	}
	/* mlx5: one entry is kept free, the ring is a power of two */
	if (cqe < 1 || cqe > EMU_CAP_POW2(log_max_cq_sz) - 1)
		return EINVAL;
	entries = roundup_pow2(cqe + 1);
	if (req.cqe_size != 64 && req.cqe_size != 128)
		return EINVAL;
	if (req.reserved0 || req.reserved1)
		return EINVAL;
	if (req.flags & ~(MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD |
			  MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX |
			  MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS))
		return EINVAL;
	/* a capability this device does not announce */
	if (req.flags & MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS)
		return EOPNOTSUPP;
	/*
	 * CQE compression as mlx5's create_cq_user(): only cqe_comp_en == 1
	 * enables it, and mini_cqe_res_format_to_hw() takes exactly one format
	 * (two bits are no case of its switch: EINVAL).
	 */
	if (req.cqe_comp_en == 1 &&
	    req.cqe_comp_res_format != MLX5_IB_CQE_RES_FORMAT_HASH &&
	    req.cqe_comp_res_format != MLX5_IB_CQE_RES_FORMAT_CSUM &&
	    req.cqe_comp_res_format != MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX)
		return EINVAL;
	/*
	 * Padding, after compression as in create_cq_user(): only on 128-byte
	 * CQEs, and only on a device with cqe_128_always (which this one has,
	 * ctx.c); 64-byte CQEs are EOPNOTSUPP (libmlx5 refuses them first,
	 * with EINVAL, so only a raw command gets here).
	 */
	if ((req.flags & MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD) && req.cqe_size != 128)
		return EOPNOTSUPP;
	/*
	 * The arm doorbell's UAR: the one named, else static UAR 0, which a
	 * context of dynamic UARs has none of (mlx5's create_cq_user()).
	 */
	uar_page = (req.flags & MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX) ?
		   req.uar_page_index : 0;
	if (!(req.flags & MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX) && c->ctx->dyn_uar_lib)
		return EINVAL;
	if (!emu_uar_valid_locked(c->ctx, uar_page))
		return EINVAL;
	/*
	 * Pinned as mlx5's create_cq_user() does: the ring with
	 * IB_ACCESS_LOCAL_WRITE (the device writes CQEs there), the doorbell
	 * record's page without FOLL_WRITE (mlx5_ib_db_map_user()).
	 */
	if ((ret = emu_umem_get(0, req.buf_addr, (uint64_t)entries * req.cqe_size, true,
				&ring)) ||
	    (ret = emu_db_get(c->ctx, ring, req.db_addr)) ||
	    (ret = emu_db_map(c->ctx, req.db_addr)))
		return ret;

	cq = emu_obj_alloc(c->ctx, EMU_OBJ_CQ, sizeof(*cq), user_handle);
	if (!cq) {
		emu_db_unmap(c->ctx, req.db_addr);
		return ENOMEM;
	}
	ret = emu_num_alloc_locked(EMU_NUM_CQ, cq, &cq->cqn);
	if (ret) {
		emu_obj_free_locked(&cq->obj);
		emu_db_unmap(c->ctx, req.db_addr);
		return ret;
	}
	emu_pin_charge(&cq->pin, ring);
	cq->buf = req.buf_addr;
	cq->dbrec = req.db_addr;
	cq->cqe_cnt = entries;
	cq->cqe_size = req.cqe_size;
	cq->cqe_pad = req.flags & MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD;
	cq->comp_format = req.cqe_comp_en == 1 ? req.cqe_comp_res_format : 0;
	cq->flags = flags;
	cq->uar_page = (uint16_t)uar_page;
	emu_uar_get_locked(c->ctx, uar_page);
	cq->uar = emu_uar_page(c->ctx, EMU_MMAP_REGULAR, cq->uar_page);
	cq->comp_vector = comp_vector;
	cq->channel = ch;
	if (ch)
		ch->usecnt++;
	emu_dev_cq_created(cq);

	resp->cq_handle = cq->obj.handle;
	resp->cqe = entries - 1;
	drv.cqn = cq->cqn;
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

int emu_cmd_create_cq(struct emu_cmd *c)
{
	const struct ib_uverbs_create_cq *cmd = c->in;

	return create_cq(c, cmd->user_handle, cmd->cqe, cmd->comp_vector,
			 cmd->comp_channel, 0, c->out);
}

int emu_cmd_create_cq_ex(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_create_cq *cmd = c->in;
	struct ib_uverbs_ex_create_cq_resp *resp = c->out;
	int ret;

	if (cmd->comp_mask || cmd->reserved)
		return EINVAL;
	if (cmd->flags & ~(IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION |
			   IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN))
		return EOPNOTSUPP;
	ret = create_cq(c, cmd->user_handle, cmd->cqe, cmd->comp_vector,
			cmd->comp_channel, cmd->flags, &resp->base);
	if (!ret)
		resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ?
						   c->out_len : sizeof(*resp));
	return ret;
}

/*
 * The RESIZE CQE goes into pages the device pinned; if the process has
 * unmapped them since, nobody can see it, and nothing faults: the writes
 * are copy_to_user()s, the body first and op_own last (two copies, in that
 * order, as the hardware orders them).
 */
void emu_cq_finish_resize_locked(struct emu_cq *cq, uint32_t pi)
{
	uint64_t cqe64 = cq->buf + (uint64_t)(pi & (cq->cqe_cnt - 1)) * cq->cqe_size +
			 cq->cqe_size - 64;
	uint8_t body[63] = {0};
	uint8_t op_own = (uint8_t)(CQE_OPCODE_RESIZE << 4 | ((pi / cq->cqe_cnt) & 1));

	if (!emu_copy_to_user(cqe64, body, sizeof(body)))
		emu_copy_to_user(cqe64 + 63, &op_own, 1);
	cq->buf = cq->resize_buf;
	cq->cqe_cnt = cq->resize_cqe_cnt;
	cq->cqe_size = cq->resize_cqe_size;
	cq->resize_buf = 0;
	cq->resize_cqe_cnt = 0;
	cq->resize_cqe_size = 0;
}

int emu_cmd_resize_cq(struct emu_cmd *c)
{
	const struct ib_uverbs_resize_cq *cmd = c->in;
	struct ib_uverbs_resize_cq_resp *resp = c->out;
	struct mlx5_ib_resize_cq req = {};
	struct emu_cq *cq;
	uint32_t entries;
	uint64_t ring;
	int ret;

	cq = emu_obj_get_locked(c->ctx, cmd->cq_handle, EMU_OBJ_CQ);
	if (!cq)
		return EINVAL;
	if (c->drv_in_len < sizeof(req))
		return EINVAL;
	memcpy(&req, c->drv_in, sizeof(req));
	if (cmd->cqe < 1 || cmd->cqe > EMU_CAP_POW2(log_max_cq_sz) - 1)
		return EINVAL;
	if (req.reserved0 || req.reserved1)
		return EINVAL;
	if (req.cqe_size != 64 && req.cqe_size != 128)
		return EINVAL;
	entries = roundup_pow2(cmd->cqe + 1);
	resp->cqe = entries - 1;
	/* same size: nothing to do, libmlx5 does not swap buffers either */
	if (entries == cq->cqe_cnt)
		return 0;
	/*
	 * The firmware refuses a ring too small for the CQEs the CQ holds
	 * (MODIFY_CQ fails and mlx5_ib_resize_cq() returns its EINVAL): they
	 * are what libmlx5 copies into the new ring.
	 */
	if (emu_dev_cq_held(cq) > entries - 1)
		return EINVAL;
	/* the new ring is pinned as the first (resize_user()) */
	ret = emu_umem_get(0, req.buf_addr, (uint64_t)entries * req.cqe_size, true, &ring);
	if (ret)
		return ret;
	/* and the old one let go once the CQ moved (mlx5_ib_resize_cq()) */
	emu_pin_release(&cq->pin);
	emu_pin_charge(&cq->pin, ring);
	cq->resize_buf = req.buf_addr;
	cq->resize_cqe_cnt = entries;
	cq->resize_cqe_size = req.cqe_size;
	emu_dev_cq_resized(cq);
	return 0;
}

/*
 * ibv_modify_cq(): event moderation, as ib_uverbs_ex_modify_cq() and
 * mlx5_ib_modify_cq() check it.  The device model reads the two values on
 * the next CQE or arm.
 */
int emu_cmd_modify_cq(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_modify_cq *cmd = c->in;
	struct emu_cq *cq;

	if (!cmd->attr_mask || cmd->reserved)
		return EINVAL;
	if (cmd->attr_mask > IBV_CQ_ATTR_MODERATE)	/* the kernel's IB_CQ_MODERATE */
		return EOPNOTSUPP;
	cq = emu_obj_get_locked(c->ctx, cmd->cq_handle, EMU_OBJ_CQ);
	if (!cq)
		return EINVAL;
	if (!EMU_CAP(cq_moderation))
		return EOPNOTSUPP;
	if (cmd->attr.cq_period > EMU_MAX_CQ_PERIOD)
		return EINVAL;
	cq->mod_count = cmd->attr.cq_count;
	cq->mod_period = cmd->attr.cq_period;
	return 0;
}

void emu_cq_destroy_locked(struct emu_cq *cq)
{
	emu_dev_cq_destroyed(cq);
	emu_uar_put_locked(cq->obj.ctx, cq->uar_page);
	if (cq->channel) {
		cq->channel->usecnt--;
		emu_channel_put_locked(cq->channel);
	}
	emu_pin_release(&cq->pin);
	emu_db_unmap(cq->obj.ctx, cq->dbrec);
	emu_num_free_locked(EMU_NUM_CQ, cq->cqn);
	emu_obj_free_locked(&cq->obj);
}

int emu_cmd_destroy_cq(struct emu_cmd *c)
{
	const struct ib_uverbs_destroy_cq *cmd = c->in;
	struct ib_uverbs_destroy_cq_resp *resp = c->out;
	struct emu_cq *cq = emu_obj_get_locked(c->ctx, cmd->cq_handle, EMU_OBJ_CQ);

	if (!cq)
		return EINVAL;
	/* QPs and XRC SRQs completing to it keep it */
	if (cq->obj.usecnt)
		return EBUSY;
	/* report only what the process read: libibverbs waits for as many acks */
	resp->comp_events_reported = cq->comp_events -
		(cq->channel ? emu_evq_reclaim_comp(&cq->channel->evq,
						    cq->obj.user_handle) : 0);
	resp->async_events_reported = cq->async_events -
		emu_evq_reclaim_async(&c->ctx->async, cq->obj.user_handle);
	emu_cq_destroy_locked(cq);
	return 0;
}
