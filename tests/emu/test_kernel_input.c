/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fake kernel against careless or hostile input: bad pointers and
 * lengths on the command fd, buffers the kernel could not pin, the
 * refusals of drivers/infiniband/core/uverbs_main.c (verify_hdr) and of
 * the mlx5 driver.  Commands are written raw on the context's command fd,
 * after libibverbs opened it, so every field is ours to break.
 */
#include <stddef.h>
#include <sys/mman.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

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

/* write() a command; 0 or the errno */
static int cmd_write(const void *buf, size_t len)
{
	ssize_t n = write(ctx->cmd_fd, buf, len);

	if (n < 0)
		return errno;
	cr_assert_eq((size_t)n, len);
	return 0;
}

/* Pages: [0] read-write, [1] read-only, [2] PROT_NONE, [3] unmapped. */
static uint8_t *pages(void)
{
	uint8_t *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(mprotect(p + 4096, 4096, PROT_READ), 0);
	cr_assert_eq(mprotect(p + 8192, 4096, PROT_NONE), 0);
	cr_assert_eq(munmap(p + 12288, 4096), 0);
	return p;
}

static void pages_free(uint8_t *p)
{
	munmap(p, 3 * 4096);
}

#define HDR(cmd, in, out)						\
	((struct ib_uverbs_cmd_hdr){ .command = (cmd),			\
		.in_words = (uint16_t)((in) / 4), .out_words = (uint16_t)((out) / 4) })

struct alloc_pd_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core;
};

struct alloc_pd_resp {
	struct ib_uverbs_alloc_pd_resp core;
	struct mlx5_ib_alloc_pd_resp drv;
};

static int alloc_pd_raw(uint64_t resp_addr, uint32_t *handle)
{
	struct alloc_pd_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(c), sizeof(struct alloc_pd_resp)),
		.core.response = resp_addr,
	};
	int ret = cmd_write(&c, sizeof(c));

	if (!ret && handle)
		*handle = ((struct alloc_pd_resp *)(uintptr_t)resp_addr)->core.pd_handle;
	return ret;
}

static void dealloc_pd_raw(uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dealloc_pd core;
	} c = {
		.hdr = HDR(IB_USER_VERBS_CMD_DEALLOC_PD, sizeof(c), 0),
		.core.pd_handle = handle,
	};

	cr_assert_eq(cmd_write(&c, sizeof(c)), 0);
}

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

/* ---- copy_from_user / copy_to_user ------------------------------------- */

Test(kin, header_at_a_wild_address)
{
	cr_assert_eq(cmd_write((void *)8, 16), EFAULT);
	cr_assert_eq(cmd_write((void *)-4096L, 16), EFAULT);
}

Test(kin, command_running_into_an_unreadable_page)
{
	uint8_t *q = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at = q + 4096 - sizeof(struct ib_uverbs_cmd_hdr);
	struct alloc_pd_resp r;
	struct alloc_pd_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(c), sizeof(r)),
		.core.response = (uintptr_t)&r,
	};

	/* the header readable, the request behind it PROT_NONE */
	cr_assert_neq(q, MAP_FAILED);
	memcpy(at, &c, sizeof(c));
	cr_assert_eq(mprotect(q + 4096, 4096, PROT_NONE), 0);
	cr_assert_eq(write(ctx->cmd_fd, at, sizeof(c)), -1);
	cr_assert_eq(errno, EFAULT);
	/* a read-only command is fine: the kernel only reads it */
	cr_assert_eq(mprotect(q, 8192, PROT_READ), 0);
	cr_assert_eq(write(ctx->cmd_fd, at, sizeof(c)), (ssize_t)sizeof(c),
		     "%s", strerror(errno));
	dealloc_pd_raw(r.core.pd_handle);
	munmap(q, 8192);
}

Test(kin, response_that_cannot_be_written)
{
	uint8_t *p = pages();
	struct alloc_pd_resp r;
	uint32_t h = 0;

	cr_assert_eq(alloc_pd_raw(8, NULL), EFAULT);
	cr_assert_eq(alloc_pd_raw((uintptr_t)(p + 4096), NULL), EFAULT, "read-only");
	cr_assert_eq(alloc_pd_raw((uintptr_t)(p + 8192), NULL), EFAULT, "PROT_NONE");
	cr_assert_eq(alloc_pd_raw((uintptr_t)(p + 12288), NULL), EFAULT, "unmapped");
	/* the driver part running past the writable page */
	cr_assert_eq(alloc_pd_raw((uintptr_t)(p + 4096 - sizeof(r.core)), NULL), EFAULT);
	/* nothing was left behind: the PD table is as before */
	cr_assert_eq(alloc_pd_raw((uintptr_t)&r, &h), 0);
	dealloc_pd_raw(h);
	pages_free(p);
}

/* ---- verify_hdr() -------------------------------------------------------- */

Test(kin, legacy_sizes)
{
	struct alloc_pd_resp r;
	struct alloc_pd_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(c), sizeof(r)),
		.core.response = (uintptr_t)&r,
	};

	cr_assert_eq(cmd_write(&c, 7), EINVAL, "shorter than a header");
	c.hdr.in_words++;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "in_words is not the length");
	c.hdr.in_words = sizeof(c.hdr) / 4;
	cr_assert_eq(cmd_write(&c, sizeof(c.hdr)), ENOSPC, "no request");
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = 0;
	cr_assert_eq(cmd_write(&c, sizeof(c)), ENOSPC, "response too small");
	c.hdr.command = 200;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EOPNOTSUPP);
	c.hdr.command = 1u << 20;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "unknown flag");
}

struct query_device_ex_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex;
	struct ib_uverbs_ex_query_device core;
	uint64_t more;
};

Test(kin, extended_sizes)
{
	struct ib_uverbs_ex_query_device_resp r;
	struct query_device_ex_cmd c = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				   IB_USER_VERBS_EX_CMD_QUERY_DEVICE,
			.in_words = sizeof(c.core) / 8,
			.out_words = sizeof(r) / 8,
		},
		.ex.response = (uintptr_t)&r,
	};
	size_t len = offsetof(struct query_device_ex_cmd, more);

	cr_assert_eq(cmd_write(&c, len), 0, "%s", strerror(errno));
	/* the short response the kernel accepts: up to response_length */
	c.hdr.out_words = (offsetof(struct ib_uverbs_ex_query_device_resp, response_length) + 4) / 8;
	cr_assert_eq(cmd_write(&c, len), 0);
	c.hdr.out_words--;
	cr_assert_eq(cmd_write(&c, len), ENOSPC);
	c.hdr.out_words = sizeof(r) / 8;
	/* a response size without an address, and an address without a size */
	c.ex.response = 0;
	cr_assert_eq(cmd_write(&c, len), EINVAL);
	c.ex.response = (uintptr_t)&r;
	c.hdr.out_words = 0;
	cr_assert_eq(cmd_write(&c, len), EINVAL);
	c.hdr.out_words = sizeof(r) / 8;
	c.ex.cmd_hdr_reserved = 1;
	cr_assert_eq(cmd_write(&c, len), EINVAL);
	c.ex.cmd_hdr_reserved = 0;
	/* a request shorter than the kernel needs, and a longer one */
	c.hdr.in_words = 0;
	cr_assert_eq(cmd_write(&c, len - sizeof(c.core)), ENOSPC);
	c.hdr.in_words = sizeof(c.core) / 8 + 1;
	c.more = 0;
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "zeros past the request are fine");
	c.more = 1;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EOPNOTSUPP, "unknown non-zero fields");
	/* the response pointer is wild */
	c.hdr.in_words = sizeof(c.core) / 8;
	c.ex.response = 16;
	cr_assert_eq(cmd_write(&c, len), EFAULT);
}
