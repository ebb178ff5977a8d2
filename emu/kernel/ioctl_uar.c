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
 * Page ids follow a context's static UARs (emu_uar_is_dyn()), at most
 * EMU_MAX_UARS in all: beyond that the firmware is out of UARs (ENOMEM).
 * The kernel keeps no count of the QPs and CQs on a UAR: destroying one in
 * use succeeds and they go on ringing their mapped page, so its id is not
 * given out again before they are gone.  A page id no UAR of this context
 * holds is refused by the firmware at CREATE_QP/CREATE_CQ (EINVAL).
 */
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "internal.h"

int emu_uar_get_locked(struct emu_ctx *ctx, uint32_t page_id)
{
	if (page_id >= EMU_MAX_UARS)
		return EINVAL;
	if (!emu_uar_is_dyn(ctx, page_id))
		return 0;		/* a static UAR: the context's for good */
	if (!ctx->uar_alive[page_id])
		return EINVAL;
	ctx->uar_users[page_id]++;
	return 0;
}

void emu_uar_put_locked(struct emu_ctx *ctx, uint32_t page_id)
{
	if (page_id < EMU_MAX_UARS && emu_uar_is_dyn(ctx, page_id) &&
	    ctx->uar_users[page_id])
		ctx->uar_users[page_id]--;
}

void emu_uar_destroy_locked(struct emu_uar *uar)
{
	uar->obj.ctx->uar_alive[uar->page_id] = false;
	emu_obj_free_locked(&uar->obj);
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
	for (page = ctx->num_uars; page < EMU_MAX_UARS; page++)
		if (!ctx->uar_alive[page] && !ctx->uar_users[page])
			break;
	if (page == EMU_MAX_UARS)
		return ENOMEM;
	if (emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, sizeof(offset)) ||
	    emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, sizeof(length)) ||
	    emu_ioc_out_check(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, sizeof(page)))
		return EFAULT;

	uar = emu_obj_alloc(ctx, EMU_OBJ_UAR, sizeof(*uar), 0);
	if (!uar)
		return ENOMEM;
	ret = emu_ioc_put_new(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, uar->obj.handle);
	if (ret) {
		emu_obj_free_locked(&uar->obj);
		return ret;
	}
	uar->page_id = page;
	uar->alloc_type = (uint32_t)type;
	ctx->uar_alive[page] = true;
	/* a fresh UAR: no doorbell of an earlier owner of the id is left in it */
	memset(emu_uar_page(ctx, EMU_MMAP_DYN_UAR, page), 0, EMU_PAGE_SIZE);

	offset = (((uint64_t)EMU_MMAP_DYN_UAR << 8) | page) * EMU_PAGE_SIZE;
	emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, &offset, sizeof(offset));
	emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, &length, sizeof(length));
	emu_ioc_copy_to(b, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, &page, sizeof(page));
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
