/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_uar.c - UARs allocated one at a time: MLX5_IB_OBJECT_UAR's
 * UAR_OBJ_ALLOC and UAR_OBJ_DESTROY, as drivers/infiniband/hw/mlx5/main.c
 * answers them, and the page ids CREATE_QP and CREATE_CQ name.
 *
 * libmlx5 (rdma-core providers/mlx5/verbs.c mlx5_alloc_dyn_uar()) asks for
 * one when it needs a doorbell page: a non-cached one at context creation
 * for CQ arms and mlx5dv_devx_alloc_uar(NC), BlueFlame ones for its QPs
 * (when GET_CONTEXT gave no static bfregs, ctx.c) and for each thread
 * domain (ibv_alloc_td(), mlx5dv_devx_alloc_uar(BF)).  The answer is the
 * page id the firmware gave (a UAR index) and where to mmap the page: the
 * kernel hands out rdma_user_mmap_entry offsets from
 * MLX5_IB_MMAP_OFFSET_START, command 9, index first free; here the index is
 * the page id itself, so the page is EMU_MMAP_DYN_UAR/page_id of the
 * command fd and the device model finds it from the id alone.
 *
 * Page ids follow a context's static UARs (emu_uar_is_dyn()), numbered
 * from there first free first, in a table that grows with the highest one
 * (emu_ctx.uar_slots).  UARs are the device's: the static ones of every
 * context and the dynamic ones together are at most EMU_DEV_UARS, and
 * beyond that the firmware is out of UARs (ENOMEM from ALLOC_UAR, for
 * UAR_OBJ_ALLOC and for GET_CONTEXT's static ones alike).  The mmap offset
 * of a page id past 255 carries its bits 8-15 in the offset's bits 16-23,
 * as mlx5_entry_to_mmap_offset() encodes an entry's index (mmap.c maps it).
 * The kernel keeps no count of the QPs and CQs on a UAR: destroying one in
 * use succeeds and they go on ringing their mapped page, so its id is not
 * given out again before they are gone.  A page id no UAR of this context
 * holds is refused by the firmware at CREATE_QP/CREATE_CQ (EINVAL).
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "internal.h"

/* UAR pages each device of this host has given out (emu_lock) */
static uint32_t dev_uars[EMU_MAX_DEVS];

static struct emu_uar_slot *slot_of(const struct emu_ctx *ctx, uint32_t page_id)
{
	if (!emu_uar_is_dyn(ctx, page_id) || page_id - ctx->num_uars >= ctx->uar_cap)
		return NULL;
	return &ctx->uar_slots[page_id - ctx->num_uars];
}

/* a page id no UAR and no QP or CQ holds any more goes back to the device */
static void slot_release(const struct emu_ctx *ctx, const struct emu_uar_slot *s)
{
	if (!s->alive && !s->users)
		dev_uars[ctx->dev_index]--;
}

bool emu_uar_valid_locked(const struct emu_ctx *ctx, uint32_t page_id)
{
	const struct emu_uar_slot *s = slot_of(ctx, page_id);

	return page_id < ctx->num_uars || (s && s->alive);
}

int emu_uar_get_locked(struct emu_ctx *ctx, uint32_t page_id)
{
	struct emu_uar_slot *s = slot_of(ctx, page_id);

	if (!emu_uar_valid_locked(ctx, page_id))
		return EINVAL;
	if (s)
		s->users++;	/* a static UAR is the context's for good */
	return 0;
}

void emu_uar_put_locked(struct emu_ctx *ctx, uint32_t page_id)
{
	struct emu_uar_slot *s = slot_of(ctx, page_id);

	if (s && s->users) {
		s->users--;
		slot_release(ctx, s);
	}
}

void emu_uar_destroy_locked(struct emu_uar *uar)
{
	struct emu_ctx *ctx = uar->obj.ctx;
	struct emu_uar_slot *s = slot_of(ctx, uar->page_id);

	s->alive = false;
	slot_release(ctx, s);
	emu_obj_free_locked(&uar->obj);
}

/* allocate_uars() of mlx5_ib_alloc_ucontext(): the static scheme's pages */
int emu_uar_static_take_locked(struct emu_ctx *ctx, uint32_t num_uars)
{
	if (num_uars > EMU_DEV_UARS - dev_uars[ctx->dev_index])
		return ENOMEM;
	dev_uars[ctx->dev_index] += num_uars;
	return 0;
}

/*
 * The uverbs file's release, after its objects: a QP or CQ put its page
 * back, a UAR released its own; what is left is the static pages (taken
 * with the context), and the table.
 */
void emu_uar_ctx_fini_locked(struct emu_ctx *ctx)
{
	uint32_t held = ctx->have_context ? ctx->num_uars : 0;

	for (uint32_t i = 0; i < ctx->uar_cap; i++)
		held += ctx->uar_slots[i].alive || ctx->uar_slots[i].users;
	dev_uars[ctx->dev_index] -= held;
	free(ctx->uar_slots);
	ctx->uar_slots = NULL;
	ctx->uar_cap = 0;
}

/* The first page id no UAR, QP or CQ holds, the table grown to it; ENOMEM */
static int page_find(struct emu_ctx *ctx, uint32_t *page)
{
	struct emu_uar_slot *t;
	uint32_t i, cap;

	if (dev_uars[ctx->dev_index] >= EMU_DEV_UARS)
		return ENOMEM;	/* the firmware's, at ALLOC_UAR */
	for (i = 0; i < ctx->uar_cap; i++)
		if (!ctx->uar_slots[i].alive && !ctx->uar_slots[i].users)
			break;
	if (i == ctx->uar_cap) {
		cap = ctx->uar_cap ? 2 * ctx->uar_cap : 16;
		if (cap > EMU_DEV_UARS)
			cap = EMU_DEV_UARS;
		t = realloc(ctx->uar_slots, cap * sizeof(*t));
		if (!t)
			return ENOMEM;
		memset(t + ctx->uar_cap, 0, (cap - ctx->uar_cap) * sizeof(*t));
		ctx->uar_slots = t;
		ctx->uar_cap = cap;
	}
	*page = ctx->num_uars + i;
	return 0;
}

/* mlx5_entry_to_mmap_offset() of index page at command 9 */
static uint64_t page_offset(uint32_t page)
{
	return ((uint64_t)(page >> 8) << 16 | (uint64_t)EMU_MMAP_DYN_UAR << 8 | (page & 0xff)) *
	       EMU_PAGE_SIZE;
}

/* UAR_OBJ_ALLOC: the next page id that no UAR, QP or CQ holds */
static int uar_alloc(struct emu_ioc *b)
{
	struct emu_ctx *ctx = b->ctx;
	struct emu_uar *uar;
	uint64_t type;
	uint64_t offset;
	uint32_t page, length = EMU_PAGE_SIZE;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	/* uverbs_get_const() of an enum: an int */
	ret = emu_ioc_get_const(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, INT32_MAX, &type);
	if (ret)
		return ret;
	if (type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF && type != MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC)
		return EOPNOTSUPP;
	ret = page_find(ctx, &page);
	if (ret)
		return ret;
	if (emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, sizeof(offset)) ||
	    emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, sizeof(length)) ||
	    emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, sizeof(page)))
		return EFAULT;

	uar = emu_obj_alloc(ctx, EMU_OBJ_UAR, sizeof(*uar), 0);
	if (!uar)
		return ENOMEM;
	uar->page_id = page;
	uar->alloc_type = (uint32_t)type;
	slot_of(ctx, page)->alive = true;
	dev_uars[ctx->dev_index]++;
	/* a fresh UAR: no doorbell of an earlier owner of the id is left in it */
	memset(emu_uar_page(ctx, EMU_MMAP_DYN_UAR, page), 0, EMU_PAGE_SIZE);

	/* the UAR is made: an answer that cannot be copied out frees it */
	offset = page_offset(page);
	ret = emu_ioc_put_new_obj(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, &uar->obj);
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, &offset,
				      sizeof(offset));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, &page, sizeof(page));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, &length,
				      sizeof(length));
	if (ret)
		return ret;
	emu_dbg("uar %u: page %u, %s\n", uar->obj.handle, page,
		type == MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF ? "BlueFlame" : "non-cached");
	return 0;
}

/* UAR_OBJ_DESTROY: mmap_obj_cleanup(), whoever still rings the page */
static int uar_destroy(struct emu_ioc *b)
{
	int ret;
	struct emu_uar *uar = emu_ioc_get_obj(b, MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE,
					      EMU_OBJ_UAR, &ret);

	if (!uar)
		return ret;
	emu_uar_destroy_locked(uar);
	return 0;
}

#define MAND	EMU_IOC_MANDATORY

const struct emu_ioc_method emu_ioc_uar_methods[] = {
	{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC, uar_alloc, false, {
		{ MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		/* UVERBS_ATTR_CONST_IN: a u64 inline */
		{ MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, EMU_IOC_PTR_IN, MAND, 8, 8 },
		{ MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, EMU_IOC_PTR_OUT, MAND, 4, 4 },
		{ MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, EMU_IOC_PTR_OUT, MAND, 4, 4 },
		{ MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, EMU_IOC_PTR_OUT, MAND, 8, 8 } } },
	{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY, uar_destroy, false, {
		{ MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 } } },
};

const size_t emu_ioc_uar_methods_count = EMU_ARRAY_SIZE(emu_ioc_uar_methods);
