/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Importing a device and its objects (kernel/import.c): ibv_import_device()
 * of another descriptor of a command fd (dup(), SCM_RIGHTS from ourselves)
 * is a second user context on the same ucontext; ibv_import_pd(),
 * ibv_import_mr() and ibv_import_dm() name its objects by handle; work
 * posted with imported objects runs; the objects and the ucontext go when
 * the kernel says.
 */
#define _GNU_SOURCE		/* memfd_create */
#include <sys/mman.h>
#include <sys/socket.h>

#include "dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static uint8_t *buf;
static struct ibv_mr *mr;

enum { BUF = 8192 };

static void setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, BUF);
	cr_assert(pd && buf);
	mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	cr_assert(mr, "reg_mr: %s", strerror(errno));
}

TestSuite(import, .init = setup, .timeout = 60);

/* call, an import, fails with err (errno cleared first: a stale one proves nothing) */
#define ASSERT_REFUSED(call, err) do {					\
		errno = 0;						\
		cr_assert_null(call, #call);				\
		cr_assert_eq(errno, err, #call ": %s", strerror(errno));	\
	} while (0)

static struct ibv_context *import_dup(void)
{
	int fd = dup(ctx->cmd_fd);
	struct ibv_context *ic;

	cr_assert_geq(fd, 0);
	ic = ibv_import_device(fd);
	cr_assert(ic, "import_device: %s", strerror(errno));
	cr_assert_eq(ic->cmd_fd, fd);
	return ic;
}

/* An RDMA WRITE of len bytes at src (lkey) to buf + off (rkey) on qp: it completes on cq. */
static void write_and_check(struct ibv_qp *qp, struct ibv_cq *cq, const uint8_t *src,
			    uint32_t len, uint32_t lkey, size_t off, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)src, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)buf + off, rkey },
	}, *bad;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
	wc = dt_poll1(cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, wr_id);
	cr_assert_eq(memcmp(buf + off, src, len), 0);
}

/*
 * Close the imported context ic (if any), then release the first
 * context's MR, PD and the context itself.
 */
static void close_both(struct ibv_context *ic)
{
	if (ic)
		cr_assert_eq(ibv_close_device(ic), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * Unimport the PD and MR of the imported context ic (unimporting sends
 * nothing: the objects stay the first context's), close it, then release
 * the first context's MR, PD and the context itself.
 */
static void unimport_and_close(struct ibv_context *ic, struct ibv_pd *ipd, struct ibv_mr *imr)
{
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	close_both(ic);
}

static uint32_t pdn(struct ibv_pd *p)
{
	struct mlx5dv_pd dv = { 0 };
	struct mlx5dv_obj o = { .pd = { .in = p, .out = &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	return dv.pdn;
}

Test(import, device_pd_mr_and_work_with_them)
{
	struct ibv_context *ic = import_dup();
	struct ibv_port_attr pa;
	struct ibv_pd *ipd;
	struct ibv_mr *imr, *src;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	static uint8_t sbuf[512];
	const struct dt_qp_opts o = { .type = IBV_QPT_RC, .timeout = 14,
				      .retry_cnt = 7, .rnr_retry = 7 };

	/* the same device, queried through the imported context */
	cr_assert_eq(ibv_query_port(ic, 1, &pa), 0);
	cr_assert_eq(pa.state, IBV_PORT_ACTIVE);

	ipd = ibv_import_pd(ic, pd->handle);
	cr_assert(ipd, "import_pd: %s", strerror(errno));
	cr_assert_eq(ipd->handle, pd->handle);
	cr_assert_eq(ipd->context, ic);
	cr_assert_eq(pdn(ipd), pdn(pd));
	imr = ibv_import_mr(ipd, mr->handle);
	cr_assert(imr, "import_mr: %s", strerror(errno));
	cr_assert_eq(imr->lkey, mr->lkey);
	cr_assert_eq(imr->rkey, mr->rkey);
	cr_assert_eq(imr->length, (size_t)BUF);
	cr_assert_null(imr->addr);	/* ibv_import_mr(3): not applicable */

	/* an MR registered through the import is on the same PD */
	src = ibv_reg_mr(ipd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(src, "reg_mr on the imported PD: %s", strerror(errno));
	/*
	 * A CQ of the imported context (its async file in the attributes);
	 * the QPs it completes must be that user context's too, as libmlx5
	 * finds them in its own tables, so the work below uses one of the first.
	 */
	cq = ibv_create_cq(ic, 16, NULL, NULL, 0);
	cr_assert(cq, "create_cq on the import: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	a = ibv_create_qp(pd, &qa);
	b = ibv_create_qp(pd, &qa);
	cr_assert(a && b, "create_qp: %s", strerror(errno));
	struct ibv_port_attr p0;

	cr_assert_eq(ibv_query_port(ctx, 1, &p0), 0);
	cr_assert_eq(dt_connect(a, b->qp_num, p0.lid, &o), 0);
	cr_assert_eq(dt_connect(b, a->qp_num, p0.lid, &o), 0);

	/* WRITE from the MR of the imported PD with the imported MR's rkey */
	memset(sbuf, 0xc3, sizeof(sbuf));
	write_and_check(a, cq, sbuf, sizeof(sbuf), src->lkey, 100, imr->rkey, 5);

	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_assert_eq(ibv_destroy_qp(b), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dereg_mr(src), 0);
	unimport_and_close(ic, ipd, imr);
}

/*
 * QPs and an SRQ on the imported context itself: libibverbs sends their
 * creation only by ioctl there (QP_CREATE, SRQ_CREATE), and work on them
 * completes through the imported context's CQ.
 */
Test(import, qps_and_an_srq_on_the_imported_context)
{
	struct ibv_context *ic = import_dup();
	struct ibv_pd *ipd = ibv_import_pd(ic, pd->handle);
	struct ibv_mr *imr;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_port_attr pa;
	const struct dt_qp_opts o = { .type = IBV_QPT_RC, .timeout = 14,
				      .retry_cnt = 7, .rnr_retry = 7 };

	cr_assert(ipd, "import_pd: %s", strerror(errno));
	imr = ibv_import_mr(ipd, mr->handle);
	cr_assert(imr, "import_mr: %s", strerror(errno));
	cq = ibv_create_cq(ic, 16, NULL, NULL, 0);
	cr_assert(cq, "create_cq: %s", strerror(errno));
	srq = ibv_create_srq(ipd, &(struct ibv_srq_init_attr){
		.attr = { .max_wr = 8, .max_sge = 1 } });
	cr_assert(srq, "create_srq on the import: %s", strerror(errno));
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
	};
	a = ibv_create_qp(ipd, &qa);
	cr_assert(a, "create_qp on the import: %s", strerror(errno));
	b = ibv_create_qp(ipd, &qa);
	cr_assert(b, "create_qp on the import: %s", strerror(errno));
	cr_assert_eq(a->context, ic);
	cr_assert_eq(ibv_query_port(ic, 1, &pa), 0);
	cr_assert_eq(dt_connect(a, b->qp_num, pa.lid, &o), 0);
	cr_assert_eq(dt_connect(b, a->qp_num, pa.lid, &o), 0);

	/* from the imported MR (the first 256 bytes of buf) to its second page */
	memset(buf, 0x5a, 256);
	write_and_check(a, cq, buf, 256, imr->lkey, 4096, imr->rkey, 9);

	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_assert_eq(ibv_destroy_qp(b), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	unimport_and_close(ic, ipd, imr);
}

/*
 * Both user contexts destroy the same objects: the kernel's rules (EBUSY
 * while in use, ENOENT once gone), and the ucontext outlives the first
 * descriptor while another is open.
 */
Test(import, destroy_order)
{
	struct ibv_context *ic = import_dup();
	struct ibv_pd *ipd = ibv_import_pd(ic, pd->handle);
	struct ibv_mr *imr = ibv_import_mr(ipd, mr->handle);
	struct ibv_pd *p2;

	cr_assert(ipd && imr);
	cr_assert_eq(ibv_dealloc_pd(ipd), EBUSY);	/* the MR is on it */
	cr_assert_eq(ibv_dereg_mr(imr), 0);		/* gone for both */
	cr_assert_eq(ibv_dereg_mr(mr), ENOENT);

	/* the first context goes; the file, and the PD on it, stay */
	cr_assert_eq(ibv_close_device(ctx), 0);
	p2 = ibv_alloc_pd(ic);
	cr_assert(p2, "alloc_pd after the first close: %s", strerror(errno));
	cr_assert_eq(ibv_dealloc_pd(p2), 0);
	cr_assert_eq(ibv_dealloc_pd(ipd), 0);
	cr_assert_eq(ibv_close_device(ic), 0);
}

/* handles the kernel does not know, or of another type */
Test(import, bad_handles)
{
	struct ibv_context *ic = import_dup();
	struct ibv_pd *ipd;

	ASSERT_REFUSED(ibv_import_pd(ic, 4000), ENOENT);
	ASSERT_REFUSED(ibv_import_pd(ic, mr->handle), EINVAL);
	ipd = ibv_import_pd(ic, pd->handle);
	cr_assert(ipd);
	ASSERT_REFUSED(ibv_import_mr(ipd, 4000), ENOENT);
	ASSERT_REFUSED(ibv_import_mr(ipd, pd->handle), EINVAL);
	ibv_unimport_pd(ipd);
	close_both(ic);
}

/*
 * ibv_import_dm(): mlx5's DM_QUERY gives the page and the length asked for,
 * so the import maps the same device memory, and no more of it.
 */
Test(import, device_memory)
{
	struct ibv_alloc_dm_attr a = { .length = 4096 };
	struct ibv_context *ic = import_dup();
	uint8_t in[64], out[64];
	struct ibv_dm *first, *dm, *idm;

	first = ibv_alloc_dm(ctx, &a);	/* so that dm is not at page 0 */
	a.length = 5000;
	dm = ibv_alloc_dm(ctx, &a);
	cr_assert(first && dm, "alloc_dm: %s", strerror(errno));
	for (unsigned i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(ibv_memcpy_to_dm(dm, 4096, in, sizeof(in)), 0);
	idm = ibv_import_dm(ic, dm->handle);
	cr_assert(idm, "import_dm: %s", strerror(errno));
	cr_assert_eq(idm->handle, dm->handle);
	cr_assert_eq(ibv_memcpy_from_dm(out, idm, 4096, sizeof(out)), 0);
	cr_assert_arr_eq(out, in, sizeof(in));
	/* its last 8 bytes (copies are of whole 4-byte words) */
	cr_assert_eq(ibv_memcpy_to_dm(idm, 4992, in, 8), 0);
	cr_assert_eq(ibv_memcpy_from_dm(out, dm, 4992, 8), 0);
	cr_assert_arr_eq(out, in, 8);
	/* the length asked for, not the page it was rounded to */
	cr_assert_eq(ibv_memcpy_from_dm(out, idm, 4996, 8), EFAULT);

	ASSERT_REFUSED(ibv_import_dm(ic, 4000), ENOENT);
	ASSERT_REFUSED(ibv_import_dm(ic, pd->handle), EINVAL);
	ibv_unimport_dm(idm);
	cr_assert_eq(ibv_free_dm(dm), 0);
	cr_assert_eq(ibv_free_dm(first), 0);
	close_both(ic);
}

/* a descriptor received over SCM_RIGHTS from ourselves */
Test(import, fd_over_scm_rights)
{
	int sv[2], fd;
	char c = 'x';
	union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct ibv_context *ic;
	struct ibv_pd *ipd;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&u, 0, sizeof(u));
	CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &ctx->cmd_fd, sizeof(int));
	cr_assert_eq(sendmsg(sv[0], &m, 0), 1);
	m.msg_controllen = sizeof(u.b);
	cr_assert_eq(recvmsg(sv[1], &m, 0), 1);
	memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	cr_assert_neq(fd, ctx->cmd_fd);
	close(sv[0]);
	close(sv[1]);

	ic = ibv_import_device(fd);
	cr_assert(ic, "import_device: %s", strerror(errno));
	ipd = ibv_import_pd(ic, pd->handle);
	cr_assert(ipd);
	cr_assert_eq(pdn(ipd), pdn(pd));
	ibv_unimport_pd(ipd);
	close_both(ic);
}

/* what is no command fd of this process: libibverbs' EINVAL */
Test(import, not_a_command_fd)
{
	int p[2], mfd = memfd_create("not-uverbs", 0);

	cr_assert_eq(pipe(p), 0);
	ASSERT_REFUSED(ibv_import_device(p[0]), EINVAL);
	/* a memfd like the one another process's command fd is */
	cr_assert_geq(mfd, 0);
	ASSERT_REFUSED(ibv_import_device(mfd), EINVAL);
	close(p[0]);
	close(p[1]);
	close(mfd);
	close_both(NULL);
}
