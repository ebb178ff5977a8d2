/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_dm.c - device memory (MEMIC): ibv_alloc_dm(), ibv_free_dm(),
 * ibv_reg_dm_mr(), mlx5's DM_QUERY behind ibv_import_dm() and
 * DM_MAP_OP_ADDR behind mlx5dv_dm_map_op_addr(), as
 * drivers/infiniband/core/uverbs_std_types_dm.c, uverbs_std_types_mr.c and
 * drivers/infiniband/hw/mlx5/dm.c answer them.
 *
 * The device memory is EMU_DM_PAGES pages of the command fd at the
 * MLX5_IB_MMAP_DEVICE_MEM offsets: libmlx5 maps the page index it is given
 * (providers/mlx5/verbs.c dm_mmap()) and copies to and from it itself
 * (ibv_memcpy_to_dm()), and an MR on it points the device model at the
 * same pages in our own view of the fd, so RDMA and atomics from a peer
 * land where ibv_memcpy_from_dm() reads.  Allocation is in whole pages
 * (the firmware's unit is 64 bytes); each context has its own, as each
 * has its own command fd.
 *
 * Which pages are taken is a word in that memfd too, past the last page a
 * DM can map: the children of fork() that allocate on their parent's
 * context (fork.c) share the parent's pool, as they share the device on a
 * host, and take pages from it with compare-and-swap, since each process
 * holds only its own emu_lock.
 *
 * A MEMIC operation's addresses (mlx5dv_dm_map_op_addr()) are a second
 * view of a DM's bytes, through which each access is an atomic operation
 * on them.  No memory can behave so: their mmap offsets (page indexes
 * EMU_DM_PAGES * (1 + op) + the DM's first page, past the DM pages in the
 * same command, as the kernel takes both from MLX5_IB_MMAP_DEVICE_MEM's
 * range) map inaccessible memory, and the device answers each access that
 * faults there (device/memic.c).
 */
#include <stdatomic.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "caps.h"
#include "internal.h"

/* mlx5_ib_reg_dm_mr(): what an MR on MEMIC may allow */
#define DM_MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |	\
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |	\
			 IBV_ACCESS_ZERO_BASED)

static uint8_t *dm_page(const struct emu_ctx *ctx, uint32_t page)
{
	return ctx->map + ((size_t)EMU_MMAP_DEVICE_MEM << 8 | page) * EMU_PAGE_SIZE;
}

/* the context's pool: a bit per page taken, in the page after the last */
static _Atomic uint32_t *dm_pages_used(const struct emu_ctx *ctx)
{
	_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
		       ATOMIC_INT_LOCK_FREE == 2, "shared by processes");
	return (_Atomic uint32_t *)(void *)dm_page(ctx, EMU_DM_PAGES);
}

/* the bits of `pages` pages from `first` in the pool */
static uint32_t page_bits(uint32_t first, uint32_t pages)
{
	_Static_assert(EMU_DM_PAGES == 32, "one bit per page of a u32");
	return (pages == 32 ? ~0u : (1u << pages) - 1) << first;
}

/*
 * Take the first run of `pages` free pages aligned to `align` pages: its
 * first page, or -1.  Another process may take pages meanwhile; then look
 * again.
 */
static int take_pages(const struct emu_ctx *ctx, uint32_t pages, uint32_t align)
{
	_Atomic uint32_t *pool = dm_pages_used(ctx);
	uint32_t used = atomic_load(pool);

	for (;;) {
		uint32_t p = 0;

		while (p + pages <= EMU_DM_PAGES && (used & page_bits(p, pages)))
			p += align;
		if (p + pages > EMU_DM_PAGES)
			return -1;
		if (atomic_compare_exchange_weak(pool, &used, used | page_bits(p, pages)))
			return (int)p;
	}
}

/*
 * UVERBS_METHOD_DM_ALLOC with mlx5's attributes: the MEMIC type only (the
 * steering ICM types need a switchdev e-switch), the length rounded up to
 * whole pages, log_align_req honoured (at most the whole area).
 */
static int dm_alloc(struct emu_ioc *b)
{
	struct emu_ctx *ctx = b->ctx;
	uint64_t length, type = MLX5_IB_UAPI_DM_TYPE_MEMIC, start;
	uint32_t log_align, pages, align;
	uint16_t page_idx;
	struct emu_dm *dm;
	int ret, first;

	if (!ctx->have_context)
		return EINVAL;
	if (emu_ioc_copy_from(b, UVERBS_ATTR_ALLOC_DM_LENGTH, &length, sizeof(length)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_ALLOC_DM_ALIGNMENT, &log_align,
			      sizeof(log_align)))
		return EFAULT;
	ret = emu_ioc_get_const(b, MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE, UINT8_MAX, &type);
	if (ret && ret != ENOENT)
		return ret;
	if (type != MLX5_IB_UAPI_DM_TYPE_MEMIC)
		return EOPNOTSUPP;
	if (!length || length > EMU_DM_SIZE)
		return length ? ENOMEM : EINVAL;
	pages = (uint32_t)((length + EMU_PAGE_SIZE - 1) / EMU_PAGE_SIZE);
	if (log_align >= 32 || (1ull << log_align) > EMU_DM_SIZE)
		return ENOMEM;		/* no such alignment in the area */
	align = log_align > 12 ? 1u << (log_align - 12) : 1;
	first = take_pages(ctx, pages, align);
	if (first < 0)
		return ENOMEM;
	ret = emu_ioc_out_check(b, MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, 8) ||
	      emu_ioc_out_check(b, MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, 2) ? EFAULT : 0;
	dm = ret ? NULL : emu_obj_alloc(ctx, EMU_OBJ_DM, sizeof(*dm), 0);
	if (!dm) {
		emu_dm_pages_release(ctx, (uint32_t)first, pages);
		return ret ? ret : ENOMEM;
	}
	dm->first_page = (uint32_t)first;
	dm->pages = pages;
	dm->length = length;
	memset(dm_page(ctx, dm->first_page), 0, (size_t)pages * EMU_PAGE_SIZE);

	start = (uint64_t)first * EMU_PAGE_SIZE;	/* in the MEMIC BAR */
	page_idx = (uint16_t)first;
	/* handle_alloc_dm_memic(): the first copy that fails frees the DM */
	ret = emu_ioc_put_new_obj(b, UVERBS_ATTR_ALLOC_DM_HANDLE, &dm->obj);
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, &start,
				      sizeof(start));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, &page_idx,
				      sizeof(page_idx));
	emu_dbg("dm %u: %u pages from %u%s\n", dm->obj.handle, pages, dm->first_page,
		ret ? ", not handed back" : "");
	return ret;
}

uint8_t *emu_dm_bytes(const struct emu_ctx *ctx, uint32_t first_page)
{
	return dm_page(ctx, first_page);
}

void emu_dm_pages_release(const struct emu_ctx *ctx, uint32_t first_page, uint32_t pages)
{
	atomic_fetch_and(dm_pages_used(ctx), ~page_bits(first_page, pages));
}

void emu_dm_destroy_locked(struct emu_dm *dm)
{
	/* a MEMIC operation window still mapped keeps the pages (emu_dev_dm_freed()) */
	if (!dm->ops || !emu_dev_dm_freed(dm))
		emu_dm_pages_release(dm->obj.ctx, dm->first_page, dm->pages);
	emu_obj_free_locked(&dm->obj);
}

/* UVERBS_METHOD_DM_FREE: an MR on it keeps it (EBUSY) */
static int dm_free(struct emu_ioc *b)
{
	int ret;
	struct emu_dm *dm = emu_ioc_get_obj(b, UVERBS_ATTR_FREE_DM_HANDLE, EMU_OBJ_DM, &ret);

	if (!dm)
		return ret;
	if (dm->obj.usecnt)
		return EBUSY;
	emu_dm_destroy_locked(dm);
	return 0;
}

/*
 * MLX5_IB_METHOD_DM_QUERY: what ibv_import_dm() maps a DM of the ucontext
 * by: its page index (the one the allocation answered), where it starts in
 * that page (always 0 here: allocations are whole pages) and the length
 * asked for, not the rounded one (mlx5_ib's req_length).
 */
static int dm_query(struct emu_ioc *b)
{
	int ret;
	struct emu_dm *dm = emu_ioc_get_obj(b, MLX5_IB_ATTR_QUERY_DM_REQ_HANDLE,
					    EMU_OBJ_DM, &ret);
	uint16_t page_idx;
	uint64_t start = 0;

	if (!dm)
		return ret;
	page_idx = (uint16_t)dm->first_page;
	/* in the kernel's order, the first copy that fails ends it */
	ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_QUERY_DM_RESP_PAGE_INDEX, &page_idx,
			      sizeof(page_idx));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_QUERY_DM_RESP_START_OFFSET,
				      &start, sizeof(start));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_QUERY_DM_RESP_LENGTH,
				      &dm->length, sizeof(dm->length));
	return ret;
}

/*
 * MLX5_IB_METHOD_DM_MAP_OP_ADDR (mlx5_ib's dm.c): the page index of op's
 * addresses for the DM, made on the first call and answered again after;
 * an operation the device memory caps do not offer (memic_operations, op
 * past its 32 bits too) EOPNOTSUPP.  The page index is copied out first;
 * an entry whose copies fail is not kept.
 */
static int dm_map_op_addr(struct emu_ioc *b)
{
	int ret;
	struct emu_dm *dm = emu_ioc_get_obj(b, MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_HANDLE,
					    EMU_OBJ_DM, &ret);
	uint64_t start = 0;	/* DMs start on a page */
	uint16_t page_idx;
	uint8_t op;

	if (!dm)
		return ret;
	if (emu_ioc_copy_from(b, MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_OP, &op, sizeof(op)))
		return EFAULT;
	if (op >= 32 || !(EMU_CAP(memic_operations) & 1u << op))
		return EOPNOTSUPP;
	_Static_assert(EMU_DM_PAGES * 3 <= 0xff, "an index of the command's first 256");
	page_idx = (uint16_t)(EMU_DM_PAGES * (1u + op) + dm->first_page);
	ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_PAGE_INDEX, &page_idx,
			      sizeof(page_idx));
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_START_OFFSET, &start,
				      sizeof(start));
	if (!ret)
		dm->ops |= (uint8_t)(1u << op);
	return ret;
}

/* The DM and operation whose addresses page index idx maps; false if none. */
bool emu_dm_ops_entry(struct emu_ctx *ctx, uint64_t idx, uint64_t pages, struct emu_dm **dmp,
		      uint8_t *op)
{
	if (idx < EMU_DM_PAGES || idx >= EMU_DM_PAGES * 3)
		return false;
	*op = (uint8_t)(idx / EMU_DM_PAGES - 1);
	for (uint32_t h = 0; h < ctx->nobjs; h++) {
		struct emu_dm *dm = (struct emu_dm *)ctx->objs[h];

		if (dm && dm->obj.type == EMU_OBJ_DM && dm->first_page == idx % EMU_DM_PAGES &&
		    (dm->ops & 1u << *op)) {
			*dmp = dm;
			return dm->pages == pages;
		}
	}
	return false;
}

/*
 * UVERBS_METHOD_DM_MR_REG: a zero-based MR on [offset, offset + length) of
 * the device memory (uverbs_std_types_mr.c, then mlx5_ib_reg_dm_mr()).
 */
static int dm_mr_reg(struct emu_ioc *b)
{
	struct emu_pd *pd;
	struct emu_dm *dm;
	struct emu_mr *mr;
	uint64_t offset, length, access;
	int ret;

	pd = emu_ioc_get_obj(b, UVERBS_ATTR_REG_DM_MR_PD_HANDLE, EMU_OBJ_PD, &ret);
	if (!pd)
		return ret;
	dm = emu_ioc_get_obj(b, UVERBS_ATTR_REG_DM_MR_DM_HANDLE, EMU_OBJ_DM, &ret);
	if (!dm)
		return ret;
	if (emu_ioc_copy_from(b, UVERBS_ATTR_REG_DM_MR_OFFSET, &offset, sizeof(offset)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_REG_DM_MR_LENGTH, &length, sizeof(length)))
		return EFAULT;
	ret = emu_ioc_get_flags(b, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, &access);
	if (ret)
		return ret;
	if (!(access & IBV_ACCESS_ZERO_BASED))
		return EINVAL;
	ret = emu_mr_access_check((uint32_t)access);
	if (ret)
		return ret;
	if (offset > dm->length || length > dm->length - offset)
		return EINVAL;
	if (access & ~DM_MR_ACCESS)
		return EINVAL;
	if (emu_ioc_out_check(b, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, 4))
		return EFAULT;

	ret = emu_mr_create_locked(b->ctx, pd,
				   (uint64_t)(uintptr_t)dm_page(b->ctx, dm->first_page) + offset,
				   0, length, (uint32_t)access, &mr);
	if (ret)
		return ret;
	mr->dm = dm;
	dm->obj.usecnt++;
	/* the MR is made: a key that cannot be copied out deregisters it */
	ret = emu_ioc_put_new_obj(b, UVERBS_ATTR_REG_DM_MR_HANDLE, &mr->obj);
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &mr->lkey,
				      sizeof(mr->lkey));
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, &mr->rkey,
				      sizeof(mr->rkey));
	return ret;
}

#define MAND		EMU_IOC_MANDATORY
#define NEW(id)		{ id, EMU_IOC_NEW, MAND, 0, 0 }
#define IDR(id)		{ id, EMU_IOC_IDR, MAND, 0, 0 }
#define IN(id, t, fl)	{ id, EMU_IOC_PTR_IN, fl, sizeof(t), sizeof(t) }
#define OUT(id, t)	{ id, EMU_IOC_PTR_OUT, MAND, sizeof(t), sizeof(t) }

const struct emu_ioc_method emu_ioc_dm_methods[] = {
	{ UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, dm_alloc, false, {
		NEW(UVERBS_ATTR_ALLOC_DM_HANDLE),
		IN(UVERBS_ATTR_ALLOC_DM_LENGTH, uint64_t, MAND),
		IN(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, uint32_t, MAND),
		/* mlx5_ib's additions */
		OUT(MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, uint64_t),
		OUT(MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, uint16_t),
		IN(MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE, uint64_t, 0) } },	/* CONST_IN */
	{ UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE, dm_free, false, {
		IDR(UVERBS_ATTR_FREE_DM_HANDLE) } },
	{ UVERBS_OBJECT_DM, MLX5_IB_METHOD_DM_QUERY, dm_query, false, {
		IDR(MLX5_IB_ATTR_QUERY_DM_REQ_HANDLE),
		OUT(MLX5_IB_ATTR_QUERY_DM_RESP_START_OFFSET, uint64_t),
		OUT(MLX5_IB_ATTR_QUERY_DM_RESP_PAGE_INDEX, uint16_t),
		OUT(MLX5_IB_ATTR_QUERY_DM_RESP_LENGTH, uint64_t) } },
	{ UVERBS_OBJECT_DM, MLX5_IB_METHOD_DM_MAP_OP_ADDR, dm_map_op_addr, false, {
		IDR(MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_HANDLE),
		IN(MLX5_IB_ATTR_DM_MAP_OP_ADDR_REQ_OP, uint8_t, MAND),
		OUT(MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_START_OFFSET, uint64_t),
		OUT(MLX5_IB_ATTR_DM_MAP_OP_ADDR_RESP_PAGE_INDEX, uint16_t) } },
	{ UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG, dm_mr_reg, false, {
		NEW(UVERBS_ATTR_REG_DM_MR_HANDLE),
		IN(UVERBS_ATTR_REG_DM_MR_OFFSET, uint64_t, MAND),
		IN(UVERBS_ATTR_REG_DM_MR_LENGTH, uint64_t, MAND),
		IDR(UVERBS_ATTR_REG_DM_MR_PD_HANDLE),
		/* UVERBS_ATTR_FLAGS_IN: a u32 or a u64 */
		{ UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, EMU_IOC_PTR_IN, MAND, 4, 8 },
		IDR(UVERBS_ATTR_REG_DM_MR_DM_HANDLE),
		OUT(UVERBS_ATTR_REG_DM_MR_RESP_LKEY, uint32_t),
		OUT(UVERBS_ATTR_REG_DM_MR_RESP_RKEY, uint32_t) } },
};

const size_t emu_ioc_dm_methods_count = EMU_ARRAY_SIZE(emu_ioc_dm_methods);
