/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fake kernel against careless or hostile input: bad pointers and
 * lengths on the command fd, buffers the kernel could not pin, the
 * refusals of drivers/infiniband/core/uverbs_main.c (verify_hdr) and of
 * the mlx5 driver.  Commands are written raw on the context's command fd,
 * after libibverbs opened it, so every field is ours to break.
 */
#include "dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static void setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cr_assert(pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(kin, .init = setup, .fini = teardown);

/* ---- the lock: a command that stats the command fd itself ---------------- */

/* emu_cmd_open_xrcd() called the interposed fstat(), which takes the lock */
Test(kin, open_xrcd_on_the_command_fd, .timeout = 20)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = ctx->cmd_fd,
		.oflags = O_CREAT,
	};
	struct ibv_xrcd *x = ibv_open_xrcd(ctx, &xa), *y;

	cr_assert(x, "ibv_open_xrcd: %s", strerror(errno));
	/* the uverbs inode names one domain, as a file would */
	xa.oflags = 0;
	y = ibv_open_xrcd(ctx, &xa);
	cr_assert(y, "second open: %s", strerror(errno));
	cr_assert_eq(ibv_close_xrcd(y), 0);
	cr_assert_eq(ibv_close_xrcd(x), 0);
}
