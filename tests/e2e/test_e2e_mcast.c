/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * UD multicast through rdmafast's data path: rf_sq_post_ud_send() to the
 * address vector of a group's address handle and DestQP 0xFFFFFF reaches
 * a QP attached in this process and one attached in another process, each
 * once, with the GRH naming the group; the sending QP, not attached,
 * receives nothing.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

#define MCAST_QPN	0xffffffu
#define QKEY		0x4d434153u
#define MLID		0xc021

static const union ibv_gid group = {
	.raw = { 0xff, 0x12, 0x60, 0x1b, [12] = 0xe2, 0xe0, 0x00, 0x15 }
};

/* The message `i` of the test, `len` bytes. */
static void fill(uint8_t *p, int i, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		p[j] = (uint8_t)(i * 31 + j);
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = l && l[0] ? ibv_open_device(l[0]) : NULL;

	ibv_free_device_list(l);
	return ctx;
}

/* A UD side of e, at RTS with QKEY. 0 or -errno. */
static int ud_side(struct e2e *e, struct e2e_side *s)
{
	struct e2e_opts o;
	struct rf_qp_conn_attr ca;

	memset(&o, 0, sizeof(o));
	o.type = IBV_QPT_UD;
	e2e_side_open(e, s, &o, NULL);
	memset(&ca, 0, sizeof(ca));
	ca.gid_index = -1;
	ca.qkey = QKEY;
	return rf_qp_connect_ibv(&s->qp, &ca, NULL);
}

static int post_recvs(struct e2e_side *s, int n)
{
	for (int i = 0; i < n; i++)
		if (rf_rq_post_one(&s->qp.rq, s->mr->lkey, e2e_addr(s, 1024u * (unsigned)i),
				   1024, (uint64_t)i))
			return -1;
	rf_rq_ring(&s->qp.rq);
	return 0;
}

/* Did side s receive the two messages of the test from QP src? 0 if so. */
static int check_two(struct e2e_side *s, uint32_t src)
{
	struct rf_wc wc[2];
	uint8_t want[100];
	int got = 0;
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;

	while (got < 2 && e2e_now_ms() < end)
		got += rf_cq_poll(&s->cq, wc + got, 2 - got);
	if (got != 2)
		return 1;
	for (int i = 0; i < 2; i++) {
		const uint8_t *m = s->buf + 1024 * wc[i].wr_id;
		uint32_t len = i ? 24 : 100;

		fill(want, i, len);
		if (wc[i].status != RF_WC_SUCCESS || wc[i].opcode != RF_WC_RECV ||
		    wc[i].wr_id != (uint64_t)i || wc[i].byte_len != 40 + len ||
		    wc[i].src_qp != src || !(wc[i].flags & RF_WC_GRH) ||
		    memcmp(m + 24, group.raw, 16) || memcmp(m + 40, want, len))
			return 2 + i;
	}
	if (e2e_poll_for(&s->cq, wc, 1, 100))
		return 4;	/* one copy each, no more */
	return 0;
}

/* One byte over a pipe, waited for at most E2E_TIMEOUT_MS. */
static int hear(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };
	char c = 0;

	if (poll(&p, 1, E2E_TIMEOUT_MS) != 1 || read(fd, &c, 1) != 1)
		return -1;
	return c;
}

/*
 * The other host: a UD QP attached to the group, receives posted; says
 * 'A' and expects the two messages from QP src (read from the pipe).
 * Exit status 0 when they arrived as they should.
 */
static int member(int in, int out)
{
	struct e2e e;
	uint32_t src;
	int bad;

	memset(&e, 0, sizeof(e));
	e.ctx = open_dev();
	if (!e.ctx || !(e.pd = ibv_alloc_pd(e.ctx)))
		return 10;
	if (ud_side(&e, &e.a) || post_recvs(&e.a, 4))
		return 11;
	if (ibv_attach_mcast(e.a.qp.ibqp, &group, MLID))
		return 12;
	if (write(out, "A", 1) != 1 || read(in, &src, sizeof(src)) != sizeof(src))
		return 13;
	bad = check_two(&e.a, src);
	if (ibv_detach_mcast(e.a.qp.ibqp, &group, MLID))
		return 14;
	e2e_side_close(&e.a);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return bad ? 20 + bad : 0;
}

/* The member on the other host, when e2e_mcast started it. */
Test(e2e_mcast_member, run)
{
	const char *dir = getenv("RF_E2E_MCAST_DIR");
	char to[PATH_MAX], from[PATH_MAX];
	int in, out, ret;

	if (!dir)
		cr_skip_test("the other host of e2e_mcast, which runs it");
	snprintf(to, sizeof(to), "%s/to", dir);
	snprintf(from, sizeof(from), "%s/from", dir);
	/* O_RDWR: a FIFO opened so never waits for the other end */
	in = open(to, O_RDWR);
	out = open(from, O_RDWR);
	cr_assert(in >= 0 && out >= 0, "the FIFOs in %s: %s", dir, strerror(errno));
	ret = member(in, out);
	cr_assert_eq(ret, 0, "member: step %d", ret);
}

Test(e2e_mcast, one_copy_to_each_member_of_every_host)
{
	char dir[] = "/tmp/rf-e2e-mcast-XXXXXX", to[64], from[64];
	int hear_fd, say_fd, st = -1;
	struct ibv_ah_attr aa;
	struct rf_wqe_av av;
	struct rf_wc wc;
	struct ibv_ah *ah;
	struct e2e e;
	pid_t pid;

	/* Criterion's runner closes inherited descriptors: FIFOs by name */
	cr_assert_not_null(mkdtemp(dir));
	snprintf(to, sizeof(to), "%s/to", dir);
	snprintf(from, sizeof(from), "%s/from", dir);
	cr_assert_eq(mkfifo(to, 0600), 0);
	cr_assert_eq(mkfifo(from, 0600), 0);
	say_fd = open(to, O_RDWR);
	hear_fd = open(from, O_RDWR);
	cr_assert(hear_fd >= 0 && say_fd >= 0);
	/*
	 * The other host: this binary again, running e2e_mcast_member alone.
	 * It must exec: a child that only forks shares this host's identity.
	 */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RF_E2E_MCAST_DIR", dir, 1);
		unsetenv("BXFI_MAP");	/* a fresh Criterion runner */
		execl("/proc/self/exe", "rfe2e", "--filter", "e2e_mcast_member/*", "--jobs", "1",
		      (char *)NULL);
		_exit(127);
	}

	memset(&e, 0, sizeof(e));
	e.ctx = open_dev();
	cr_assert_not_null(e.ctx, "no RDMA device (run under build/rfemu)");
	e.pd = ibv_alloc_pd(e.ctx);
	cr_assert_not_null(e.pd);
	cr_assert_eq(ibv_query_port(e.ctx, 1, &e.port), 0);
	cr_assert_eq(ud_side(&e, &e.a), 0);	/* sends, not attached */
	cr_assert_eq(ud_side(&e, &e.b), 0);	/* attached, here */
	cr_assert_eq(post_recvs(&e.a, 4), 0);
	cr_assert_eq(post_recvs(&e.b, 4), 0);
	cr_assert_eq(ibv_attach_mcast(e.b.qp.ibqp, &group, MLID), 0);

	memset(&aa, 0, sizeof(aa));
	aa.dlid = MLID;
	aa.port_num = 1;
	aa.is_global = 1;
	aa.grh.dgid = group;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(e.pd, &aa);
	cr_assert_not_null(ah, "create_ah: %s", strerror(errno));
	cr_assert_eq(rf_ah_av_ibv(ah, &av), 0);

	cr_assert_eq(hear(hear_fd), 'A', "the other host did not attach");
	cr_assert_eq(write(say_fd, &e.a.qp.qpn, sizeof(e.a.qp.qpn)),
		     (ssize_t)sizeof(e.a.qp.qpn));
	/* from a buffer, then inline: each WQE one datagram to the group */
	fill(e.a.buf + 8192, 0, 100);
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, MCAST_QPN, QKEY, NULL, e.a.mr->lkey,
					e2e_addr(&e.a, 8192), 100, 0, 0, 0, 1), 0);
	fill(e.a.buf + 9216, 1, 24);
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, MCAST_QPN, QKEY, e.a.buf + 9216, 0, 0,
					24, 0, 0, RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "send: %u", wc.status);
	cr_assert_eq(wc.wr_id, 2);

	st = check_two(&e.b, e.a.qp.qpn);
	cr_assert_eq(st, 0, "the member on this host: check %d", st);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the member on the other host: %#x", st);
	cr_assert_eq(e2e_poll_for(&e.a.cq, &wc, 1, 100), 0, "the sender is no member");

	cr_assert_eq(ibv_detach_mcast(e.b.qp.ibqp, &group, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	e2e_side_close(&e.a);
	e2e_side_close(&e.b);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	close(hear_fd);
	close(say_fd);
	unlink(to);
	unlink(from);
	rmdir(dir);
}
