/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mmap() of the command fd, refused where the kernel's mlx5_ib_mmap()
 * refuses it (emu/kernel/mmap.c): libmlx5 44 asks for dynamic UARs, so
 * the legacy UAR offsets are EINVAL; the clock pages are read-only, one
 * page, shared; a UAR of UAR_OBJ_ALLOC and a device memory map from their
 * own offset for their own size, shared, and (device memory) not once freed.
 */
#include <sys/mman.h>

#include <infiniband/mlx5dv.h>
#include <rdma/mlx5-abi.h>

#include "emu_test.h"

static struct ibv_context *ctx;

static void setup(void)
{
	ctx = et_open();
}

static void teardown(void)
{
	ibv_close_device(ctx);
}

TestSuite(mmap, .init = setup, .fini = teardown, .timeout = 60);

/* offset of command cmd, index idx (both < 256) */
static off_t mmap_off(unsigned cmd, unsigned idx)
{
	return (off_t)((cmd << 8) | idx) * 4096;
}

/* mmap()'s errno, 0 if it mapped (and the mapping is gone again) */
static int try_map(size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, ctx->cmd_fd, off);

	if (p == MAP_FAILED)
		return errno;
	cr_assert_eq(munmap(p, len), 0);
	return 0;
}

#define RW	(PROT_READ | PROT_WRITE)

Test(mmap, legacy_uar_offsets_on_a_dynamic_uar_context)
{
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(MLX5_IB_MMAP_REGULAR_PAGE, 0)), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(MLX5_IB_MMAP_WC_PAGE, 0)), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(MLX5_IB_MMAP_NC_PAGE, 1)), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(MLX5_IB_MMAP_ALLOC_WC, 0)), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES, 0)),
		     ENOSYS);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, mmap_off(4, 0)), EINVAL);
}

Test(mmap, clock_pages_are_one_read_only_shared_page)
{
	off_t clk = mmap_off(MLX5_IB_MMAP_CORE_CLOCK, 0);
	off_t info = mmap_off(MLX5_IB_MMAP_CLOCK_INFO, MLX5_IB_CLOCK_INFO_V1);

	cr_assert_eq(try_map(4096, PROT_READ, MAP_SHARED, clk), 0);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, clk), EPERM);
	cr_assert_eq(try_map(8192, PROT_READ, MAP_SHARED, clk), EINVAL);
	cr_assert_eq(try_map(4096, PROT_READ, MAP_PRIVATE, clk), EINVAL);

	cr_assert_eq(try_map(4096, PROT_READ, MAP_SHARED, info), 0);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, info), EPERM);
	cr_assert_eq(try_map(4096, PROT_READ | PROT_EXEC, MAP_SHARED, info), EPERM);
	cr_assert_eq(try_map(4096, PROT_READ, MAP_PRIVATE, info), EINVAL);
	cr_assert_eq(try_map(4096, PROT_READ, MAP_SHARED, info + 4096), EOPNOTSUPP);
}

/* Destroyed, it maps no more: tests/emu/device/test_uar.c, alloc_destroy_raw. */
Test(mmap, a_dynamic_uar_maps_from_its_offset_for_one_page)
{
	struct mlx5dv_devx_uar *u = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
	off_t off;

	cr_assert(u, "devx_alloc_uar: %s", strerror(errno));
	off = (off_t)u->mmap_off;
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, off), 0);
	cr_assert_eq(try_map(8192, RW, MAP_SHARED, off), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_PRIVATE, off), EINVAL);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, off + 4096), EINVAL, "a UAR no one allocated");
	mlx5dv_devx_free_uar(u);	/* libmlx5 keeps the UAR for reuse */
}

/*
 * The emulator gives a context's first device memory the first MEMIC page
 * (kernel/ioctl_dm.c); libmlx5 maps it from MLX5_IB_MMAP_DEVICE_MEM with
 * that page index, for the whole allocation.
 */
Test(mmap, device_memory_maps_whole_from_its_first_page)
{
	struct ibv_dm *dm = ibv_alloc_dm(ctx, &(struct ibv_alloc_dm_attr){ .length = 8192 });
	off_t off = mmap_off(MLX5_IB_MMAP_DEVICE_MEM, 0);

	cr_assert(dm, "alloc_dm: %s", strerror(errno));
	cr_assert_eq(try_map(8192, RW, MAP_SHARED, off), 0);
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, off), EINVAL, "part of a device memory");
	cr_assert_eq(try_map(4096, RW, MAP_SHARED, off + 4096), EINVAL, "from its second page");
	cr_assert_eq(try_map(8192, RW, MAP_PRIVATE, off), EINVAL);
	cr_assert_eq(ibv_free_dm(dm), 0);
	cr_assert_eq(try_map(8192, RW, MAP_SHARED, off), EINVAL, "a freed device memory still maps");
}
