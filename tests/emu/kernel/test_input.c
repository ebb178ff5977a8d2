/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The fake kernel against careless or hostile input: bad pointers and
 * lengths on the command fd, buffers the kernel could not pin, the
 * refusals of drivers/infiniband/core/uverbs_main.c (verify_hdr) and of
 * the mlx5 driver.  Commands are written raw on the context's command fd,
 * after libibverbs opened it, so every field is ours to break.
 */
#define _GNU_SOURCE		/* process_vm_readv() */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>

#include "device/dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
/*
 * A UAR of the context for raw CREATE_CQ/CREATE_QP: libmlx5's context has
 * dynamic UARs only, so each must name one (kernel/ioctl_uar.c).
 */
static uint32_t uar;

static void setup(void)
{
	struct mlx5dv_devx_uar *u;

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cr_assert(pd);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
	u = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	cr_assert(u);
	uar = u->page_id;
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

/* ---- pinning the queues ------------------------------------------------ */

struct create_cq_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core;
	struct mlx5_ib_create_cq drv;
};

struct create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct mlx5_ib_create_cq_resp drv;
};

/* a CQ of 8 CQEs of cqe_size bytes, mlx5 flags besides the UAR's; 0 or the errno */
static int create_cq_raw_as(void *buf, void *db, uint16_t cqe_size, uint32_t flags)
{
	struct create_cq_resp r;
	struct create_cq_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_CQ, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .cqe = 7, .comp_channel = -1 },
		.drv = { .buf_addr = (uintptr_t)buf, .db_addr = (uintptr_t)db, .cqe_size = cqe_size,
			 .flags = MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX | flags,
			 .uar_page_index = uar },
	};
	int ret = cmd_write(&c, sizeof(c));

	if (!ret) {
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_destroy_cq core;
		} d = {
			.hdr = HDR(IB_USER_VERBS_CMD_DESTROY_CQ, sizeof(d),
				   sizeof(struct ib_uverbs_destroy_cq_resp)),
			.core = { .response = (uintptr_t)&r, .cq_handle = r.core.cq_handle },
		};

		cr_assert_eq(cmd_write(&d, sizeof(d)), 0);
	}
	return ret;
}

/* a CQ of 8 64-byte CQEs (512 bytes of ring); 0 or the errno */
static int create_cq_raw(void *buf, void *db)
{
	return create_cq_raw_as(buf, db, 64, 0);
}

/*
 * CQE padding (create_cq_user()): 64-byte CQEs at a 128-byte stride, on
 * 128-byte CQEs only; asked with 64-byte ones it is EOPNOTSUPP, which only
 * a raw command sees (libmlx5 answers EINVAL before sending it).
 */
Test(kin, create_cq_padding_needs_128_byte_cqes)
{
	uint8_t *p = pages();

	cr_assert_eq(create_cq_raw_as(p, p + 2048, 128, MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD), 0);
	cr_assert_eq(create_cq_raw_as(p, p + 2048, 64, MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD),
		     EOPNOTSUPP);
}

Test(kin, create_cq_pins_its_ring)
{
	uint8_t *p = pages();

	cr_assert_eq(create_cq_raw(p, p + 2048), 0, "%s", strerror(errno));
	cr_assert_eq(create_cq_raw(p + 4096, p + 2048), EFAULT, "read-only ring");
	cr_assert_eq(create_cq_raw(p + 8192, p + 2048), EFAULT, "PROT_NONE ring");
	cr_assert_eq(create_cq_raw(p + 12288, p + 2048), EFAULT, "unmapped ring");
	cr_assert_eq(create_cq_raw(p + 4096 - 256, p + 2048), EFAULT, "ring past the end");
	cr_assert_eq(create_cq_raw(p, p + 8192), EFAULT, "PROT_NONE doorbell");
	cr_assert_eq(create_cq_raw(p, p + 12288), EFAULT, "unmapped doorbell");
	cr_assert_eq(create_cq_raw(p, (void *)64), EFAULT, "wild doorbell");
	/* the kernel maps the doorbell page without FOLL_WRITE */
	cr_assert_eq(create_cq_raw(p, p + 4096), 0);
	pages_free(p);
}

struct create_qp_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core;
	struct mlx5_ib_create_qp drv;
};

struct create_qp_resp {
	struct ib_uverbs_create_qp_resp core;
	struct mlx5_ib_create_qp_resp drv;
};

/*
 * CREATE_QP of an RC QP with 16 send and rq_wqe_count receive WQEs of 64
 * bytes, its rings at buf, answered in *r.
 */
static struct create_qp_cmd rc_qp_cmd(struct create_qp_resp *r, void *buf, void *db,
				      uint32_t rq_wqe_count)
{
	return (struct create_qp_cmd){
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_QP, sizeof(struct create_qp_cmd), sizeof(*r)),
		.core = {
			.response = (uintptr_t)r, .pd_handle = pd->handle,
			.send_cq_handle = cq->handle, .recv_cq_handle = cq->handle,
			.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			.max_recv_sge = 1, .qp_type = IBV_QPT_RC,
		},
		.drv = {
			.buf_addr = (uintptr_t)buf, .db_addr = (uintptr_t)db,
			.sq_wqe_count = 16, .rq_wqe_count = rq_wqe_count, .rq_wqe_shift = 6,
			.flags = MLX5_QP_FLAG_UAR_PAGE_INDEX, .bfreg_index = uar,
		},
	};
}

static void destroy_qp_raw(uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp dr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp core;
	} d = {
		.hdr = HDR(IB_USER_VERBS_CMD_DESTROY_QP, sizeof(d), sizeof(dr)),
		.core = { .response = (uintptr_t)&dr, .qp_handle = handle },
	};

	cr_assert_eq(cmd_write(&d, sizeof(d)), 0);
}

/* an RC QP with 16 send and 16 receive WQEs of 64 bytes: 2 KiB of ring */
static int create_qp_raw(void *buf, void *db)
{
	struct create_qp_resp r;
	struct create_qp_cmd c = rc_qp_cmd(&r, buf, db, 16);
	int ret = cmd_write(&c, sizeof(c));

	if (!ret)
		destroy_qp_raw(r.core.qp_handle);
	return ret;
}

Test(kin, create_qp_pins_its_rings)
{
	uint8_t *p = pages();

	cr_assert_eq(create_qp_raw(p, p + 3072), 0, "%s", strerror(errno));
	/* the device only reads the rings: read-only is what the kernel takes */
	cr_assert_eq(create_qp_raw(p + 4096, p + 3072), 0);
	cr_assert_eq(create_qp_raw(p + 8192, p + 3072), EFAULT, "PROT_NONE rings");
	cr_assert_eq(create_qp_raw(p + 12288, p + 3072), EFAULT, "unmapped rings");
	cr_assert_eq(create_qp_raw(p + 4096 + 3072, p + 3072), EFAULT, "SQ past the end");
	cr_assert_eq(create_qp_raw(p, p + 12288), EFAULT, "unmapped doorbell");
	cr_assert_eq(create_qp_raw(p, (void *)8), EFAULT, "wild doorbell");
	pages_free(p);
}

/*
 * What the kernel's mlx5 driver answers of a user QP's caps.  CREATE_QP
 * returns the caps asked (ib_uverbs_create_qp() copies back what the
 * driver left in ib_qp_init_attr), the receive caps zeroed without a
 * receive queue (set_rq_size()); QUERY_QP the receive ring as made (WQEs
 * and stride / 16, less one with a signature), no send WR or SGE count
 * and no inline size (mlx5_ib_query_qp(): those are libmlx5's).  No
 * inline size is refused, 4096 bytes neither: the kernel sizes a user
 * QP's send queue by the sq_wqe_count libmlx5 sends (set_user_buf_size()).
 */
static void query_qp_raw(uint32_t handle, struct ib_uverbs_query_qp_resp *r)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_qp core;
	} q = {
		.hdr = HDR(IB_USER_VERBS_CMD_QUERY_QP, sizeof(q), sizeof(*r)),
		.core = { .response = (uintptr_t)r, .qp_handle = handle,
			  .attr_mask = IBV_QP_CAP },
	};

	memset(r, 0xff, sizeof(*r));
	cr_assert_eq(cmd_write(&q, sizeof(q)), 0, "%s", strerror(errno));
}

Test(kin, query_qp_answers_the_rings)
{
	/* 1024 receive WQEs of 64 bytes, then 16 send WQEBBs, then the doorbell */
	size_t ring = (1024 << 6) + (16 << 6);
	uint8_t *p = mmap(NULL, ring + 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ib_uverbs_query_qp_resp q;
	struct create_qp_resp r;
	struct create_qp_cmd c = rc_qp_cmd(&r, p, p + ring, 1024);

	c.core.max_recv_wr = 1000;
	c.core.max_recv_sge = 3;
	c.core.max_inline_data = 4096;
	cr_assert_neq(p, MAP_FAILED);
	cr_assert(srq);
	memset(&r, 0xff, sizeof(r));
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "%s", strerror(errno));
	cr_expect_eq(r.core.max_send_wr, 16);
	cr_expect_eq(r.core.max_recv_wr, 1000);
	cr_expect_eq(r.core.max_send_sge, 1);
	cr_expect_eq(r.core.max_recv_sge, 3);
	cr_expect_eq(r.core.max_inline_data, 4096);
	query_qp_raw(r.core.qp_handle, &q);
	cr_expect_eq(q.max_send_wr, 0);
	cr_expect_eq(q.max_recv_wr, 1024);
	cr_expect_eq(q.max_send_sge, 0);
	cr_expect_eq(q.max_recv_sge, 4);
	cr_expect_eq(q.max_inline_data, 0);
	destroy_qp_raw(r.core.qp_handle);

	/* a signature takes one SGE's room in each receive WQE */
	c.drv.flags |= MLX5_QP_FLAG_SIGNATURE;
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "%s", strerror(errno));
	query_qp_raw(r.core.qp_handle, &q);
	cr_expect_eq(q.max_recv_wr, 1024);
	cr_expect_eq(q.max_recv_sge, 3);
	destroy_qp_raw(r.core.qp_handle);
	c.drv.flags &= ~(uint32_t)MLX5_QP_FLAG_SIGNATURE;

	/* on an SRQ: no receive queue, 0 and 0 both ways */
	c.core.is_srq = 1;
	c.core.srq_handle = srq->handle;
	c.drv.rq_wqe_count = 0;
	c.drv.rq_wqe_shift = 0;
	memset(&r, 0xff, sizeof(r));
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "%s", strerror(errno));
	cr_expect_eq(r.core.max_recv_wr, 0);
	cr_expect_eq(r.core.max_recv_sge, 0);
	cr_expect_eq(r.core.max_send_wr, 16);
	query_qp_raw(r.core.qp_handle, &q);
	cr_expect_eq(q.max_recv_wr, 0);
	cr_expect_eq(q.max_recv_sge, 0);
	destroy_qp_raw(r.core.qp_handle);

	cr_assert_eq(ibv_destroy_srq(srq), 0);
	munmap(p, ring + 4096);
}

struct create_srq_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core;
	struct mlx5_ib_create_srq drv;
};

struct create_srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct mlx5_ib_create_srq_resp drv;
};

static void destroy_srq_raw(uint32_t handle)
{
	struct ib_uverbs_destroy_srq_resp dr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_srq core;
	} d = {
		.hdr = HDR(IB_USER_VERBS_CMD_DESTROY_SRQ, sizeof(d), sizeof(dr)),
		.core = { .response = (uintptr_t)&dr, .srq_handle = handle },
	};

	cr_assert_eq(cmd_write(&d, sizeof(d)), 0);
}

/* 16 WQEs of 32 bytes: 512 bytes of ring */
static int create_srq_raw(void *buf, void *db)
{
	struct create_srq_resp r;
	struct create_srq_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .pd_handle = pd->handle,
			  .max_wr = 15, .max_sge = 1 },
		.drv = { .buf_addr = (uintptr_t)buf, .db_addr = (uintptr_t)db },
	};
	int ret = cmd_write(&c, sizeof(c));

	if (!ret)
		destroy_srq_raw(r.core.srq_handle);
	return ret;
}

Test(kin, create_srq_pins_its_ring)
{
	uint8_t *p = pages();

	cr_assert_eq(create_srq_raw(p, p + 2048), 0, "%s", strerror(errno));
	cr_assert_eq(create_srq_raw(p + 8192, p + 2048), EFAULT, "PROT_NONE ring");
	cr_assert_eq(create_srq_raw(p + 12288, p + 2048), EFAULT, "unmapped ring");
	cr_assert_eq(create_srq_raw(p + 8192 - 256, p + 2048), EFAULT, "ring past the end");
	cr_assert_eq(create_srq_raw(p, p + 12288), EFAULT, "unmapped doorbell");
	pages_free(p);
}

/*
 * An SRQ's caps as mlx5_ib_create_srq() and mlx5_ib_query_srq() answer
 * them: max_wr the ring less one, max_sge the SGEs asked (msrq.max_gs),
 * not the three a 64-byte WQE holds.  libmlx5 asks the rounded count
 * itself (mlx5_alloc_srq_buf()), so only a raw request tells them apart.
 */
Test(kin, query_srq_answers_the_sges_asked)
{
	uint8_t *p = pages();
	struct ib_uverbs_query_srq_resp q;
	struct create_srq_resp r;
	struct create_srq_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .pd_handle = pd->handle,
			  .max_wr = 10, .max_sge = 2 },
		.drv = { .buf_addr = (uintptr_t)p, .db_addr = (uintptr_t)(p + 3072) },
	};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_srq core;
	} qc = {
		.hdr = HDR(IB_USER_VERBS_CMD_QUERY_SRQ, sizeof(qc), sizeof(q)),
		.core = { .response = (uintptr_t)&q },
	};

	/* 16 WQEs of 64 bytes (16-byte next segment, 2 SGEs, rounded up) */
	memset(&r, 0xff, sizeof(r));
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "%s", strerror(errno));
	cr_expect_eq(r.core.max_wr, 15);
	cr_expect_eq(r.core.max_sge, 2);
	qc.core.srq_handle = r.core.srq_handle;
	memset(&q, 0xff, sizeof(q));
	cr_assert_eq(cmd_write(&qc, sizeof(qc)), 0, "%s", strerror(errno));
	cr_expect_eq(q.max_wr, 15);
	cr_expect_eq(q.max_sge, 2);
	cr_expect_eq(q.srq_limit, 0);
	destroy_srq_raw(r.core.srq_handle);
	pages_free(p);
}

/* ---- memory registration: get_user_pages(FOLL_WRITE) -------------------- */

Test(kin, reg_mr_needs_writable_pages_for_write_access)
{
	uint8_t *p = pages();
	const int writes[] = { IBV_ACCESS_LOCAL_WRITE,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
			       IBV_ACCESS_MW_BIND };
	struct ibv_mr *mr;

	for (size_t i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		errno = 0;
		cr_assert_null(ibv_reg_mr(pd, p + 4096, 4096, writes[i]), "access %#x", writes[i]);
		cr_assert_eq(errno, EFAULT, "access %#x", writes[i]);
		/* a range that only starts writable */
		errno = 0;
		cr_assert_null(ibv_reg_mr(pd, p, 8192, writes[i]));
		cr_assert_eq(errno, EFAULT);
	}
	/* read-only access to read-only pages is what they are for */
	mr = ibv_reg_mr(pd, p + 4096, 4096, IBV_ACCESS_REMOTE_READ);
	cr_assert(mr, "%s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	/* PROT_NONE pages cannot be pinned at all */
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p + 8192, 4096, IBV_ACCESS_REMOTE_READ));
	cr_assert_eq(errno, EFAULT);
	pages_free(p);
}

Test(kin, rereg_mr_needs_writable_pages_for_write_access)
{
	uint8_t *p = pages();
	struct ibv_mr *mr = ibv_reg_mr(pd, p + 4096, 4096, IBV_ACCESS_REMOTE_READ);

	cr_assert(mr, "%s", strerror(errno));
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, p, 4096, 0), 0);
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), 0, "%s", strerror(errno));
	/* moving a writable MR onto read-only or PROT_NONE pages */
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, p + 4096,
				  4096, 0), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EFAULT);
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
				  IBV_REREG_MR_CHANGE_ACCESS, NULL, p + 8192, 4096,
				  IBV_ACCESS_REMOTE_READ), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	pages_free(p);
}

struct resize_cq_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core;
	struct mlx5_ib_resize_cq drv;
};

Test(kin, resize_cq_pins_the_new_ring)
{
	uint8_t *p = pages();
	struct ib_uverbs_resize_cq_resp r;
	struct resize_cq_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_RESIZE_CQ, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .cq_handle = cq->handle, .cqe = 63 },
		.drv = { .cqe_size = 64 },
	};

	/* 64 CQEs of 64 bytes: one page */
	c.drv.buf_addr = (uintptr_t)(p + 4096);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EFAULT, "read-only ring");
	c.drv.buf_addr = (uintptr_t)(p + 8192);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EFAULT, "PROT_NONE ring");
	c.drv.buf_addr = (uintptr_t)(p + 12288);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EFAULT, "unmapped ring");
	c.drv.buf_addr = (uintptr_t)(p + 2048);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EFAULT, "ring past the end");
	/* the CQ is as it was */
	cr_assert_eq(ibv_resize_cq(cq, 16), 0, "%s", strerror(errno));
	pages_free(p);
}

/*
 * The RESIZE CQE goes into the old ring, which the kernel keeps pinned: a
 * process that unmapped it meanwhile sees nothing, and nothing faults.
 */
Test(kin, resize_cq_after_its_ring_was_unmapped)
{
	uint8_t *p = pages();
	uint8_t *ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct create_cq_resp r;
	struct create_cq_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_CQ, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .cqe = 7, .comp_channel = -1 },
		.drv = { .buf_addr = (uintptr_t)ring, .db_addr = (uintptr_t)(p + 2048), .cqe_size = 64,
			 .flags = MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX, .uar_page_index = uar },
	};
	struct ib_uverbs_resize_cq_resp rr;
	struct resize_cq_cmd rc = {
		.hdr = HDR(IB_USER_VERBS_CMD_RESIZE_CQ, sizeof(rc), sizeof(rr)),
		.core = { .response = (uintptr_t)&rr, .cqe = 63 },
		.drv = { .buf_addr = (uintptr_t)p, .cqe_size = 64 },
	};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq core;
	} d = {
		.hdr = HDR(IB_USER_VERBS_CMD_DESTROY_CQ, sizeof(d),
			   sizeof(struct ib_uverbs_destroy_cq_resp)),
		.core = { .response = (uintptr_t)&r },
	};

	cr_assert_neq(ring, MAP_FAILED);
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0, "%s", strerror(errno));
	cr_assert_eq(munmap(ring, 4096), 0);
	rc.core.cq_handle = r.core.cq_handle;
	cr_assert_eq(cmd_write(&rc, sizeof(rc)), 0);
	cr_assert_eq(rr.cqe, 63);
	d.core.cq_handle = r.core.cq_handle;
	cr_assert_eq(cmd_write(&d, sizeof(d)), 0);
	pages_free(p);
}

/* ---- RESIZE_CQ ------------------------------------------------------------ */

/* Wait until the device has written CQE n of a CQ on its first lap. */
static void wait_cqe(struct ibv_cq *c, unsigned n)
{
	struct mlx5dv_cq dv;
	struct mlx5dv_obj o = { .cq = { .in = c, .out = &dv } };
	uint64_t end = dt_now_ms() + 5000;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	for (;;) {
		volatile uint8_t *op_own = (uint8_t *)dv.buf + (n + 1) * dv.cqe_size - 1;

		if (*op_own >> 4 != MLX5_CQE_INVALID)
			return;
		cr_assert_lt(dt_now_ms(), end, "CQE %u never came", n);
		usleep(1000);
	}
}

/* mlx5 firmware refuses a ring smaller than the CQEs waiting in it */
Test(kin, resize_cq_below_what_it_holds)
{
	struct dt t;
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc[10];

	dt_setup(&t);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	for (int i = 0; i < 10; i++) {
		wr.wr_id = (uint64_t)i;
		dt_post(t.qp[0], &wr);
	}
	wait_cqe(t.cq[0], 9);
	errno = 0;
	cr_assert_eq(ibv_resize_cq(t.cq[0], 4), EINVAL, "10 CQEs into a ring of 8");
	cr_assert_eq(ibv_resize_cq(t.cq[0], 10), 0, "%s", strerror(errno));
	cr_assert_eq(t.cq[0]->cqe, 15);
	cr_assert_eq(dt_poll(t.cq[0], wc, 10, 2000), 10);
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i);
	}
	/* consumed: now it may shrink */
	cr_assert_eq(ibv_resize_cq(t.cq[0], 2), 0, "%s", strerror(errno));
	dt_teardown(&t);
}

/* ---- what else the kernel refuses ---------------------------------------- */

Test(kin, create_qp_types_the_kernel_does_not_know)
{
	uint8_t *p = pages();
	struct create_qp_resp r;
	struct create_qp_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_CREATE_QP, sizeof(c), sizeof(r)),
		.core = {
			.response = (uintptr_t)&r, .pd_handle = pd->handle,
			.send_cq_handle = cq->handle, .recv_cq_handle = cq->handle,
			.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			.max_recv_sge = 1, .qp_type = 0x50,
		},
		.drv = {
			.buf_addr = (uintptr_t)p, .db_addr = (uintptr_t)(p + 3072),
			.sq_wqe_count = 16, .rq_wqe_count = 16, .rq_wqe_shift = 6,
			.flags = MLX5_QP_FLAG_UAR_PAGE_INDEX, .bfreg_index = uar,
		},
	};

	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.qp_type = IBV_QPT_DRIVER;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "a driver QP needs a DC kind");
	c.drv.flags = MLX5_QP_FLAG_TYPE_DCI | MLX5_QP_FLAG_DCI_STREAM;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "no DCI streams");
	c.drv.flags = MLX5_QP_FLAG_TYPE_DCT;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "a DCT has no rings (and needs an SRQ)");
	c.drv.flags = MLX5_QP_FLAG_TYPE_DCI;
	c.core.qp_type = IBV_QPT_RC;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL, "DC flags only on driver QPs");
	pages_free(p);
}

/*
 * CREATE_QP of a DCI with DCI streams, as libmlx5 sends it, with counts
 * libmlx5 itself would refuse: beyond either cap, the kernel refuses too
 * (the QP context fields the firmware bounds by them: BAD_PARAM, EINVAL).
 * Suite kin_dcs runs as a card with DCI streams (kin_cards below).
 */
TestSuite(kin_dcs, .init = setup, .fini = teardown);

static int create_streams_dci(uint8_t *p, uint8_t log_streams, uint8_t log_errored)
{
	struct create_qp_resp r;
	struct create_qp_cmd c = rc_qp_cmd(&r, p, p + 3072, 0);
	int ret;

	c.core.qp_type = IBV_QPT_DRIVER;
	c.core.max_recv_wr = c.core.max_recv_sge = 0;
	c.drv.flags |= MLX5_QP_FLAG_TYPE_DCI | MLX5_QP_FLAG_DCI_STREAM;
	c.drv.dci_streams.log_num_concurent = log_streams;
	c.drv.dci_streams.log_num_errored = log_errored;
	ret = cmd_write(&c, sizeof(c));
	if (!ret)
		destroy_qp_raw(r.core.qp_handle);
	return ret;
}

Test(kin_dcs, dci_stream_counts_beyond_the_caps)
{
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS };
	uint8_t *p = pages(), s, e;

	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	s = dv.dci_streams_caps.max_log_num_concurent;
	e = dv.dci_streams_caps.max_log_num_errored;
	et_need(s && e, "DCI streams");
	cr_assert_eq(create_streams_dci(p, s, e), 0);
	cr_assert_eq(create_streams_dci(p, (uint8_t)(s + 1), e), EINVAL);
	cr_assert_eq(create_streams_dci(p, s, (uint8_t)(e + 1)), EINVAL);
	cr_assert_eq(create_streams_dci(p, 0xff, 0xff), EINVAL);
	pages_free(p);
}

Test(kin_cards, connectx7_dci_streams, .timeout = 60)
{
	et_rerun_as("0x1021", NULL, "kin_dcs/*");
}

struct create_qp_ex_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex;
	struct ib_uverbs_ex_create_qp core;
	struct mlx5_ib_create_qp drv;
};

Test(kin, create_qp_ex_reserved_field)
{
	uint8_t *p = pages();
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct mlx5_ib_create_qp_resp drv;
	} r;
	struct create_qp_ex_cmd c = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_QP,
			.in_words = sizeof(c.core) / 8, .out_words = sizeof(r.core) / 8,
		},
		.ex = {
			.response = (uintptr_t)&r, .provider_in_words = sizeof(c.drv) / 8,
			.provider_out_words = sizeof(r.drv) / 8,
		},
		.core = {
			.pd_handle = pd->handle, .send_cq_handle = cq->handle,
			.recv_cq_handle = cq->handle, .max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 1, .max_recv_sge = 1, .qp_type = IBV_QPT_RC,
			.reserved = 1,
		},
		.drv = {
			.buf_addr = (uintptr_t)p, .db_addr = (uintptr_t)(p + 3072),
			.sq_wqe_count = 16, .rq_wqe_count = 16, .rq_wqe_shift = 6,
			.flags = MLX5_QP_FLAG_UAR_PAGE_INDEX, .bfreg_index = uar,
		},
	};

	cr_assert_eq(sizeof(c.drv) % 8, 0);
	cr_assert_eq(sizeof(r.drv) % 8, 0);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	pages_free(p);
}

Test(kin, privileged_qkey)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x80010000 };
	const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_modify_qp(qp, &a, mask), EPERM, "the GSI's Q_Key");
	a.qkey = 0x7fffffff;
	cr_assert_eq(ibv_modify_qp(qp, &a, mask), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
}

Test(kin, rereg_mr_unknown_flags)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ib_uverbs_rereg_mr_resp r;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr core;
	} c = {
		.hdr = HDR(IB_USER_VERBS_CMD_REREG_MR, sizeof(c), sizeof(r)),
		.core = { .response = (uintptr_t)&r, .mr_handle = mr->handle,
			  .flags = IBV_REREG_MR_CHANGE_ACCESS | 1u << 5,
			  .access_flags = IBV_ACCESS_LOCAL_WRITE },
	};

	cr_assert(mr);
	cr_assert_eq(cmd_write(&c, sizeof(c)), EOPNOTSUPP);
	c.core.flags = 0;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.flags = IBV_REREG_MR_CHANGE_ACCESS;
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/*
 * Rules that need two ports: this binary again, with RFEMU_PORTS=2, running
 * only the kin2 suite (whose tests skip on a one-port device).
 */
Test(kin, two_port_rules, .timeout = 60)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_PORTS", "2", 1);
		/* a fresh Criterion runner, not one of this runner's workers */
		unsetenv("BXFI_MAP");
		execl("/proc/self/exe", "test_kernel_input", "--filter", "kin2/*",
		      "--jobs", "1", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

static struct ibv_context *ctx2;

static void setup2(void)
{
	struct ibv_device_attr da;

	ctx2 = et_open();
	cr_assert_eq(ibv_query_device(ctx2, &da), 0);
	if (da.phys_port_cnt < 2) {
		ibv_close_device(ctx2);
		cr_skip_test("one port: run by kin::two_port_rules");
	}
}

static void teardown2(void)
{
	cr_assert_eq(ibv_close_device(ctx2), 0);
}

TestSuite(kin2, .init = setup2, .fini = teardown2);

/* modify_qp() in uverbs_cmd.c: the path's port is the QP's */
Test(kin2, path_port_is_the_qp_port)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx2);
	struct ibv_cq *cq2 = ibv_create_cq(ctx2, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq2, .recv_cq = cq2, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rts = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;

	cr_assert(pd2 && cq2);
	qp = ibv_create_qp(pd2, &ia);
	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = qp->qp_num,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .dlid = 1, .port_num = 2 },
	};
	cr_assert_eq(ibv_modify_qp(qp, &a, rtr), EINVAL, "RTR on another port than INIT's");
	a.ah_attr.port_num = 1;
	cr_assert_eq(ibv_modify_qp(qp, &a, rtr), 0, "%s", strerror(errno));
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.max_rd_atomic = 1, .alt_port_num = 1, .alt_timeout = 14,
		.alt_ah_attr = { .dlid = 2, .port_num = 2 },
	};
	cr_assert_eq(ibv_modify_qp(qp, &a, rts | IBV_QP_ALT_PATH), EINVAL,
		     "alternate port and path disagree");
	a.alt_port_num = 2;
	cr_assert_eq(ibv_modify_qp(qp, &a, rts | IBV_QP_ALT_PATH), 0, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq2), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
}

/* a channel fd that is not a completion channel of this context is EBADF */
Test(kin, create_cq_with_a_foreign_channel)
{
	struct ibv_context *other = et_open();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(other), *mine;
	struct ibv_cq *c;

	cr_assert(ch);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 4, NULL, ch, 0));
	cr_assert_eq(errno, EBADF, "another context's channel: %s", strerror(errno));
	mine = ibv_create_comp_channel(ctx);
	cr_assert(mine);
	c = ibv_create_cq(ctx, 4, NULL, mine, 0);
	cr_assert(c, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_cq(c), 0);
	cr_assert_eq(ibv_destroy_comp_channel(mine), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
	cr_assert_eq(ibv_close_device(other), 0);
}


struct get_context_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core;
	struct mlx5_ib_alloc_ucontext_req_v2 drv;
};

/* mlx5_ib_alloc_ucontext(): request sizes, flags, reserved fields */
Test(kin, get_context_driver_request)
{
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	struct {
		struct ib_uverbs_get_context_resp core;
		struct mlx5_ib_alloc_ucontext_resp drv;
	} r;
	struct get_context_cmd c = {
		.hdr = HDR(IB_USER_VERBS_CMD_GET_CONTEXT, sizeof(c), sizeof(r)),
		.core.response = (uintptr_t)&r,
		.drv = { .total_num_bfregs = 4, .num_low_latency_bfregs = 1, .max_cqe_version = 1 },
	};
	const size_t v0 = sizeof(c.hdr) + sizeof(c.core) + sizeof(struct mlx5_ib_alloc_ucontext_req);
	ssize_t n;

	cr_assert_geq(fd, 0, "%s", strerror(errno));
	c.drv.flags = 2;
	cr_assert_eq(write(fd, &c, sizeof(c)), -1);
	cr_assert_eq(errno, EOPNOTSUPP, "an unknown flag: %s", strerror(errno));
	c.drv.flags = 0;
	c.drv.reserved1 = 1;
	cr_assert_eq(write(fd, &c, sizeof(c)), -1);
	cr_assert_eq(errno, EOPNOTSUPP, "reserved: %s", strerror(errno));
	c.drv.reserved1 = 0;
	c.drv.comp_mask = 1;
	cr_assert_eq(write(fd, &c, sizeof(c)), -1);
	cr_assert_eq(errno, EOPNOTSUPP, "comp_mask: %s", strerror(errno));
	c.drv.comp_mask = 0;
	/* between the v0 and the v2 request */
	c.hdr.in_words = (uint16_t)((v0 + 4) / 4);
	cr_assert_eq(write(fd, &c, v0 + 4), -1);
	cr_assert_eq(errno, EINVAL);
	c.hdr.in_words = sizeof(c) / 4;
	c.drv.flags = MLX5_IB_ALLOC_UCTX_DEVX;	/* a DEVX user context (devx.c) */
	n = write(fd, &c, sizeof(c));
	cr_assert_eq(n, (ssize_t)sizeof(c), "%s", strerror(errno));
	cr_assert_eq(close(fd), 0);
	cr_assert_eq(close((int)r.core.async_fd), 0);
}

Test(kin, create_srq_reserved_fields)
{
	uint8_t *p = pages();
	struct create_srq_resp r;
	struct {
		struct create_srq_cmd c;
		uint64_t more;
	} x = {
		.c = {
			.hdr = HDR(IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(struct create_srq_cmd), sizeof(r)),
			.core = { .response = (uintptr_t)&r, .pd_handle = pd->handle,
				  .max_wr = 15, .max_sge = 1 },
			.drv = { .buf_addr = (uintptr_t)p, .db_addr = (uintptr_t)(p + 2048),
				 .reserved1 = 1 },
		},
	};

	cr_assert_eq(cmd_write(&x.c, sizeof(x.c)), EINVAL, "reserved1");
	x.c.drv.reserved1 = 0;
	x.c.hdr.in_words = sizeof(x) / 4;
	x.more = 1;
	cr_assert_eq(cmd_write(&x, sizeof(x)), EINVAL, "non-zero bytes past the request");
	x.more = 0;
	cr_assert_eq(cmd_write(&x, sizeof(x)), 0, "%s", strerror(errno));
	destroy_srq_raw(r.core.srq_handle);
	pages_free(p);
}

/*
 * Where seccomp forbids process_vm_readv/writev (containers without
 * CAP_SYS_PTRACE), the mappings decide: the same answers. A forked child
 * installs such a filter and exits with the number of the first check
 * that failed. The mappings are asked one by one (PROCMAP_QUERY), or,
 * where the kernel has no such ioctl (before 6.11: ENOTTY, which the
 * second test's filter answers for it), read from /proc/self/maps.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* PROCMAP_QUERY: _IOWR('f', 17, 104 bytes), include/uapi/linux/fs.h */
#define VMA_QUERY_IOCTL	0xc0686611u

static int forbid_process_vm(bool vma_query_too)
{
#ifdef __x86_64__
	const uint32_t arch = AUDIT_ARCH_X86_64;
#else
	const uint32_t arch = AUDIT_ARCH_AARCH64;
#endif
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 2),
		/* the request's low word (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, VMA_QUERY_IOCTL, 2, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, vma_query_too ? SECCOMP_RET_ERRNO | ENOTTY
							: SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void run_without_process_vm_calls(bool vma_query_too)
{
	uint8_t *p = pages();
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct alloc_pd_resp r;
		uint32_t h = 0;
		uint8_t b;
		struct iovec l = { &b, 1 }, rv = { &b, 1 };
		int fd = open("/proc/self/maps", O_RDONLY);
		uint64_t q[13] = { sizeof(q) };

		if (forbid_process_vm(vma_query_too))
			_exit(77);	/* no seccomp filters here (qemu-user) */
		/* a context of its own: the parent's would refuse write() */
		ctx = et_open();
		if (!(pd = ibv_alloc_pd(ctx)))
			_exit(13);
		if (process_vm_readv(getpid(), &l, 1, &rv, 1, 0) != -1 || errno != EPERM)
			_exit(11);
		if (vma_query_too &&
		    (fd < 0 || ioctl(fd, VMA_QUERY_IOCTL, q) != -1 || errno != ENOTTY))
			_exit(12);
		if (cmd_write((void *)8, 16) != EFAULT)
			_exit(1);
		if (alloc_pd_raw((uintptr_t)(p + 4096), NULL) != EFAULT)
			_exit(2);
		if (alloc_pd_raw((uintptr_t)(p + 8192), NULL) != EFAULT)
			_exit(3);
		if (alloc_pd_raw((uintptr_t)&r, &h) != 0)
			_exit(4);
		dealloc_pd_raw(h);
		if (ibv_reg_mr(pd, p + 4096, 4096, IBV_ACCESS_LOCAL_WRITE) || errno != EFAULT)
			_exit(5);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "status %#x", status);
	pages_free(p);
	if (WEXITSTATUS(status) == 77)
		cr_skip_test("seccomp filters cannot be installed here");
	cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed", WEXITSTATUS(status));
}

Test(kin, without_process_vm_calls)
{
	run_without_process_vm_calls(false);
}

Test(kin, without_process_vm_calls_or_vma_queries)
{
	run_without_process_vm_calls(true);
}
#endif

/*
 * A fork while another thread holds the emulator's lock (here: a thread
 * issuing commands without pause) must leave the child a lock it can take:
 * every child's first command on the parent's context answers (a query,
 * served there: emu/README.md "Hosts and fork()").
 */
static _Atomic int fork_stop;

static void *fork_hammer(void *arg)
{
	struct ibv_port_attr pa;

	(void)arg;
	while (!atomic_load(&fork_stop))
		ibv_query_port(ctx, 1, &pa);
	return NULL;
}

Test(kin, fork_while_the_lock_is_held, .timeout = 120)
{
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, fork_hammer, NULL), 0);
	/* 40: each fork costs a second under qemu-user; without the fix the
	 * first few already hang */
	for (int i = 0; i < 40; i++) {
		int status;
		pid_t pid = fork();

		cr_assert_geq(pid, 0);
		if (pid == 0) {
			struct ibv_device_attr da;

			alarm(5);	/* a child stuck on the lock dies of SIGALRM */
			_exit(ibv_query_device(ctx, &da) == 0 ? 0 : 1);
		}
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			  "fork %d: child status %#x", i, status);
	}
	atomic_store(&fork_stop, 1);
	pthread_join(t, NULL);
}

/* ib_uverbs_ex_modify_cq(): the request alone, no response */
Test(kin, modify_cq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_modify_cq core;
	} c = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_MODIFY_CQ,
			.in_words = sizeof(c.core) / 8,
		},
		.core = { .cq_handle = cq->handle, .attr_mask = 1, .attr = { 16, 100 } },
	};

	cr_assert_eq(cmd_write(&c, sizeof(c)), 0);
	c.core.reserved = 1;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.reserved = 0;
	c.core.attr_mask = 2;		/* beyond IB_CQ_MODERATE */
	cr_assert_eq(cmd_write(&c, sizeof(c)), EOPNOTSUPP);
	c.core.attr_mask = 0;
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.attr_mask = 1;
	c.core.cq_handle = 0x7777;	/* no such CQ */
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.cq_handle = cq->handle;
	c.core.attr.cq_period = 4096;	/* > MLX5_MAX_CQ_PERIOD */
	cr_assert_eq(cmd_write(&c, sizeof(c)), EINVAL);
	c.core.attr.cq_period = 0;
	cr_assert_eq(cmd_write(&c, sizeof(c)), 0);
	/* a response would be a size without the kernel's room for one */
	c.hdr.in_words--;
	cr_assert_eq(cmd_write(&c, sizeof(c) - 8), ENOSPC);
}
