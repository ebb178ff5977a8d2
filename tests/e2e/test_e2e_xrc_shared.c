/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * XRC shared between processes through the verbs glue: rf_xrcd_open_ibv()
 * with the kernel's O_CREAT / O_EXCL rules and errors; an XRC SRQ and its
 * number; an XRC receive QP created in one process, opened in another
 * (rf_xrc_recv_qp_open_ibv()), kept alive by that process after its
 * creator destroyed it, and released with rf_qp_close_opened_ibv(), where
 * ibv_destroy_qp() would kill the process on rdma-core 44.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx;

	cr_assert(l && l[0], "no RDMA device (run under build/rfemu)");
	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	cr_assert_not_null(ctx);
	return ctx;
}

static int tmpfile_fd(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/rf-xrcd-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	return fd;
}

Test(e2e_xrc_shared, open_xrcd_flags_and_errors)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_xrcd *a, *b, *c, *x;
	char path[64];
	int fd = tmpfile_fd(path, sizeof(path)), fd2;

	cr_assert_eq(rf_xrcd_open_ibv(ctx, 1000, O_CREAT, &x), -EBADF, "no such fd");
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, 0, &x), -EAGAIN, "no domain yet, no O_CREAT");
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, O_CREAT | O_EXCL, &a), 0);
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, O_CREAT | O_EXCL, &x), -EINVAL, "exists");
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, O_CREAT, &b), 0, "exists: opened");
	/* another descriptor of the same file names the same domain */
	fd2 = open(path, O_RDONLY);
	cr_assert_geq(fd2, 0);
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd2, 0, &c), 0);
	cr_assert_eq(rf_xrcd_open_ibv(ctx, -1, 0, &x), 0, "a private domain");
	cr_assert_eq(ibv_close_xrcd(x), 0);
	cr_assert_eq(ibv_close_xrcd(c), 0);
	cr_assert_eq(ibv_close_xrcd(b), 0);
	cr_assert_eq(ibv_close_xrcd(a), 0);
	/* the last close ended the domain: the file has none again */
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, 0, &x), -EAGAIN);
	close(fd2);
	close(fd);
	unlink(path);
	ibv_close_device(ctx);
}

/* One byte over a pipe, bounded. */
static void say(int fd, char c)
{
	cr_assert_eq(write(fd, &c, 1), 1);
}

static char hear(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c = 0;

	cr_assert_eq(poll(&p, 1, E2E_TIMEOUT_MS), 1, "the other process is silent");
	cr_assert_eq(read(fd, &c, 1), 1);
	return c;
}

/*
 * The second process: open the domain by the file, open the receive QP
 * by number, keep it while the creator destroys its own, release it.
 * Exit status 0 when every step did what it should.
 */
static int opener(const char *path, int in, int out)
{
	struct ibv_context *ctx;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp, *none;
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;
	uint32_t qpn;
	int fd, bad = 0;

	if (read(in, &qpn, sizeof(qpn)) != sizeof(qpn))
		return 10;
	ctx = open_dev();
	fd = open(path, O_RDONLY);
	if (fd < 0 || rf_xrcd_open_ibv(ctx, fd, 0, &xrcd))
		return 11;
	if (rf_xrc_recv_qp_open_ibv(ctx, xrcd, qpn, &qp))
		return 12;
	bad |= rf_xrc_recv_qp_open_ibv(ctx, xrcd, qpn ^ 0x800000, &none) == 0;	/* no such QP */
	say(out, 'O');			/* opened: the creator destroys its handle */
	if (hear(in) != 'D')
		return 13;
	/* alive through our handle */
	bad |= ibv_query_qp(qp, &at, IBV_QP_STATE, &ia) != 0;
	bad |= rf_qp_close_opened_ibv(qp) != 0;
	/* the last reference is gone, and so is the QP */
	bad |= rf_xrc_recv_qp_open_ibv(ctx, xrcd, qpn, &none) == 0;
	ibv_close_xrcd(xrcd);
	close(fd);
	ibv_close_device(ctx);
	return bad ? 14 : 0;
}

Test(e2e_xrc_shared, recv_qp_created_here_opened_there)
{
	int to_child[2], to_parent[2], st = -1;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *rqp;
	uint32_t srqn = 0, qpn;
	char path[64];
	int fd = tmpfile_fd(path, sizeof(path));
	pid_t pid;

	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(pipe(to_parent), 0);
	/* fork before either opens the device: each is a host of its own */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(opener(path, to_child[0], to_parent[1]));

	ctx = open_dev();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(pd && cq);
	cr_assert_eq(rf_xrcd_open_ibv(ctx, fd, O_CREAT | O_EXCL, &xrcd), 0);
	cr_assert_eq(rf_xrc_srq_create_ibv(ctx, pd, xrcd, cq, 16, 1, &srq, &srqn), 0);
	cr_assert_neq(srqn, 0);
	cr_assert_eq(rf_xrc_recv_qp_create_ibv(ctx, xrcd, &rqp), 0);
	qpn = rqp->qp_num;
	cr_assert_eq(write(to_child[1], &qpn, sizeof(qpn)), (ssize_t)sizeof(qpn));
	cr_assert_eq(hear(to_parent[0]), 'O');
	cr_assert_eq(ibv_destroy_qp(rqp), 0, "the creator's handle");
	say(to_child[1], 'D');
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the opener: status %#x", st);

	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_close_xrcd(xrcd), 0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	close(fd);
	unlink(path);
}
