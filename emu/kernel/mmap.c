/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mmap.c - what mmap() of a command fd is refused, as the kernel refuses it.
 *
 * The command fd is a memfd that covers every mlx5 mmap offset, so any
 * mapping of it would succeed; libmlx5's do not need us.  But a mapping
 * the kernel refuses must fail here too, or a program that gets an offset
 * or a flag wrong passes on the emulator and fails on a host.  The rules
 * are those of mlx5_ib_mmap() and uar_mmap() (drivers/infiniband/hw/mlx5/
 * main.c), mlx5_ib_mmap_clock_info_page() there, and the uverbs core's
 * rdma_user_mmap_io() and rdma_user_mmap_entry_get()
 * (drivers/infiniband/core/ib_core_uverbs.c):
 *
 *   every mapping              MAP_SHARED, or EINVAL
 *   UAR (commands 0, 2, 3, 6)  EINVAL on a context with dynamic UARs
 *                              (lib_uar_dyn); one page; an index below
 *                              the context's static UARs (command 6, the
 *                              legacy dynamic ones, has none here)
 *   1 (contiguous pages)       ENOSYS
 *   5 (core clock)             one page, or EINVAL; no PROT_WRITE (EPERM)
 *   7 (clock info)             one page, or EINVAL; index V1, or
 *                              EOPNOTSUPP; no PROT_WRITE or PROT_EXEC (EPERM)
 *   anything else              an rdma_user_mmap_entry: a UAR of
 *                              UAR_OBJ_ALLOC that still exists, or an
 *                              allocated device memory, from its first
 *                              page for exactly its size, or the
 *                              addresses of one of its MEMIC operations
 *                              (ioctl_dm.c), for its size; else EINVAL
 *
 * Command 2 (write-combining) shows the same page as command 0, as on the
 * kernel: the offset is rewritten to the one the device watches.  So is
 * the offset of a UAR page id past 255, whose index goes on in bits 16-23
 * (get_extended_index()): the memfd keeps those pages in a row after the
 * last command's, not gigabytes apart.
 */
#include <sys/mman.h>

#include <rdma/mlx5-abi.h>

#include "internal.h"

#define MMAP_CMD(pgoff)		(((pgoff) >> 8) & 0xff)
/* get_extended_index(): bits 16 and up continue the 8-bit index */
#define MMAP_INDEX(pgoff)	((((pgoff) >> 16) << 8) | ((pgoff) & 0xff))

static bool dm_entry(struct emu_ctx *ctx, uint64_t first, uint64_t pages)
{
	for (uint32_t h = 0; h < ctx->nobjs; h++) {
		const struct emu_obj *o = ctx->objs[h];
		const struct emu_dm *dm = (const struct emu_dm *)o;

		if (o && o->type == EMU_OBJ_DM && dm->first_page == first)
			return dm->pages == pages;
	}
	return false;
}

static int check_locked(struct emu_ctx *ctx, uint64_t pages, int prot, bool shared,
			uint64_t pgoff, bool *ops)
{
	struct emu_dm *dm;
	uint8_t op;

	uint64_t idx = MMAP_INDEX(pgoff);

	switch (MMAP_CMD(pgoff)) {
	case MLX5_IB_MMAP_REGULAR_PAGE:
	case MLX5_IB_MMAP_WC_PAGE:
	case MLX5_IB_MMAP_NC_PAGE:
	case MLX5_IB_MMAP_ALLOC_WC:
		if (ctx->dyn_uar_lib || pages != 1)
			return EINVAL;
		if (MMAP_CMD(pgoff) == MLX5_IB_MMAP_ALLOC_WC)
			idx += ctx->num_uars;	/* past the static ones: none */
		return idx < ctx->num_uars && shared ? 0 : EINVAL;
	case MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES:
		return ENOSYS;
	case MLX5_IB_MMAP_CORE_CLOCK:
		if (pages != 1)
			return EINVAL;
		if (prot & PROT_WRITE)
			return EPERM;
		return shared ? 0 : EINVAL;
	case MLX5_IB_MMAP_CLOCK_INFO:
		if (pages != 1 || !shared)
			return EINVAL;
		if (idx != MLX5_IB_CLOCK_INFO_V1 || !emu_clock_pages_offered())
			return EOPNOTSUPP;
		return prot & (PROT_WRITE | PROT_EXEC) ? EPERM : 0;
	case EMU_MMAP_DEVICE_MEM:
		*ops = emu_dm_ops_entry(ctx, idx, pages, &dm, &op);
		return shared && (*ops || dm_entry(ctx, idx, pages)) ? 0 : EINVAL;
	case EMU_MMAP_DYN_UAR:
		return shared && pages == 1 && idx < UINT32_MAX && emu_uar_is_dyn(ctx, (uint32_t)idx) &&
		       emu_uar_valid_locked(ctx, (uint32_t)idx) ? 0 : EINVAL;
	default:
		return EINVAL;
	}
}

int emu_mmap_check(int fd, size_t len, int prot, int flags, off_t *off, bool *ops)
{
	uint64_t pgoff = (uint64_t)*off / EMU_PAGE_SIZE;
	uint64_t pages = ((uint64_t)len + EMU_PAGE_SIZE - 1) / EMU_PAGE_SIZE;
	/* MAP_SHARED_VALIDATE is MAP_SHARED with its flags checked */
	bool shared = (flags & MAP_SHARED) != 0;
	struct emu_ctx *ctx;
	int ret = 0;

	*ops = false;
	/* what mmap() itself refuses before the driver sees it, it refuses */
	if (!len || *off < 0 || (uint64_t)*off % EMU_PAGE_SIZE)
		return 0;
	emu_lock_acquire();
	ctx = emu_ctx_by_fd_locked(fd);
	if (ctx)
		ret = check_locked(ctx, pages, prot, shared, pgoff, ops);
	else if ((ctx = emu_ctx_inherited_by_fd_locked(fd)))
		/* a child of fork(): device memory is shared, the rest the parent's */
		ret = MMAP_CMD(pgoff) == EMU_MMAP_DEVICE_MEM ?
		      check_locked(ctx, pages, prot, shared, pgoff, ops) : EIO;
	emu_lock_release();
	if (!ret && MMAP_CMD(pgoff) == MLX5_IB_MMAP_WC_PAGE)
		*off -= (off_t)((MLX5_IB_MMAP_WC_PAGE - MLX5_IB_MMAP_REGULAR_PAGE) << 8) *
			EMU_PAGE_SIZE;
	/* a UAR page id past 255: where the memfd keeps it (kernel.h) */
	if (!ret && ctx && MMAP_CMD(pgoff) == EMU_MMAP_DYN_UAR)
		*off = (off_t)((((uint64_t)EMU_MMAP_DYN_UAR << 8) + MMAP_INDEX(pgoff)) *
			       EMU_PAGE_SIZE);
	return ret;
}

int emu_memic_ops_mapped(int fd, off_t off, void *addr, size_t len)
{
	uint64_t pgoff = (uint64_t)off / EMU_PAGE_SIZE;
	uint64_t pages = ((uint64_t)len + EMU_PAGE_SIZE - 1) / EMU_PAGE_SIZE;
	struct emu_dm *dm = NULL;
	struct emu_ctx *ctx;
	uint8_t op = 0;
	int ret;

	emu_lock_acquire();
	ctx = emu_ctx_by_fd_locked(fd);
	if (!ctx)
		ctx = emu_ctx_inherited_by_fd_locked(fd);
	/* freed since emu_mmap_check(): the addresses answer nothing */
	if (ctx && emu_dm_ops_entry(ctx, MMAP_INDEX(pgoff), pages, &dm, &op))
		ret = emu_dev_memic_mapped(ctx, dm->first_page, op,
					   emu_dm_bytes(ctx, dm->first_page), dm->length, addr, len);
	else
		ret = emu_dev_memic_mapped(ctx, 0, op, NULL, 0, addr, len);
	emu_lock_release();
	return ret;
}
