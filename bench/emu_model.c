/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * emu_model.c - end-to-end figures on the emulated HCA, for libmlx5 and
 * for rdmafast driving the same queues.
 *
 *   build/rfemu -- build/bench/emu_model [seconds]
 *
 * 1. Loopback WQE rate: one process, an RC QP pair, 8-byte inline RDMA
 *    writes in batches of 16 with the last one signaled and one doorbell
 *    per batch (ibv_post_send of a list, or 16 rf_sq_post_write_inline and
 *    one rf_sq_ring); counts executed WQEs per second.
 * 2. Ping-pong round trip between two processes (two emulated hosts): this
 *    program re-executes itself as the peer; 8-byte sends, busy polling.
 *
 * These measure the device model (a software HCA on 2 shared cores), not
 * the data path: the difference between the two implementations is lost in
 * it. bench/rfbench.c measures the data path itself. A benchmark, not a
 * test: it prints numbers and never fails on them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdmafast/verbs.h>

#include "connect.h"

#define BATCH 16

enum impl { IMPL_LIBMLX5, IMPL_RDMAFAST };
static const char *const impl_name[] = { "libmlx5", "rdmafast" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "emu_model: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint16_t lid;
	struct ibv_qp_cap cap;	/* of the last QP made */
	struct rf_cq rcq;	/* rdmafast: the CQ and the QP it drives */
	struct rf_qp rqp;
};

static void open_side(struct side *s, int nqps_unused)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	(void)nqps_unused;
	if (!l || !l[0])
		die("no device (run under build/rfemu)");
	s->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (!s->ctx || ibv_query_port(s->ctx, 1, &pa))
		die("open");
	s->lid = pa.lid;
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = calloc(1, 1 << 20);
	s->mr = ibv_reg_mr(s->pd, s->buf, 1 << 20, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	s->cq = ibv_create_cq(s->ctx, 1024, NULL, NULL, 0);
	if (!s->pd || !s->buf || !s->mr || !s->cq)
		die("resources");
}

static struct ibv_qp *make_qp(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 512, .max_recv_wr = 512, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);

	if (!qp)
		die("create_qp");
	s->cap = ia.cap;
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid)
{
	int ret = bench_connect_rc(qp, dqpn, dlid, NULL);

	if (ret) {
		errno = ret;
		die("connect");
	}
}

/* rdmafast takes over the side's CQ and its QP qp (nothing posted yet). */
static void take_over(struct side *s, struct ibv_qp *qp)
{
	if (rf_cq_init_ibv(&s->rcq, s->cq) || rf_qp_init_ibv(&s->rqp, qp, &s->cap, 0) ||
	    rf_cq_attach(&s->rcq, qp->qp_num, &s->rqp.sq, &s->rqp.rq, NULL))
		die("rdmafast take-over");
}

static void close_side(struct side *s, enum impl impl)
{
	if (impl == IMPL_RDMAFAST)
		rf_qp_fini_ibv(&s->rqp);
	ibv_destroy_cq(s->cq);
	ibv_dereg_mr(s->mr);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

static void check_status(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "emu_model: completion error (%s)\n", what);
		exit(1);
	}
}

/* One batch of BATCH inline writes, last one signaled, one doorbell. */
static void post_batch(struct side *s, enum impl impl, struct ibv_qp *qp,
		       struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (impl == IMPL_LIBMLX5) {
		if (ibv_post_send(qp, wr, &bad))
			die("post_send");
		return;
	}
	for (int i = 0; i < BATCH; i++)
		if (rf_sq_post_write_inline(&s->rqp.sq, s->buf, 8, s->mr->rkey,
					    (uintptr_t)s->buf + 4096 + 8 * (uint64_t)i,
					    i == BATCH - 1 ? RF_SEND_SIGNALED : 0, (uint64_t)i))
			die("rf_sq_post_write_inline");
	rf_sq_ring(&s->rqp.sq);
}

/* Poll up to 16 completions; returns how many, all successful. */
static int poll_some(struct side *s, enum impl impl)
{
	int n;

	if (impl == IMPL_LIBMLX5) {
		struct ibv_wc wc[16];

		n = ibv_poll_cq(s->cq, 16, wc);
		for (int i = 0; i < n; i++)
			check_status(wc[i].status == IBV_WC_SUCCESS,
				     ibv_wc_status_str(wc[i].status));
	} else {
		struct rf_wc wc[16];

		n = rf_cq_poll(&s->rcq, wc, 16);
		for (int i = 0; i < n; i++)
			check_status(wc[i].status == RF_WC_SUCCESS, "rdmafast");
	}
	return n;
}

static double loopback_rate(double secs, enum impl impl)
{
	struct side s;
	struct ibv_qp *a, *b;
	struct ibv_send_wr wr[BATCH];
	struct ibv_sge sge = { 0, 8, 0 };
	uint64_t done = 0;
	double t0, t1;
	int outstanding = 0;

	open_side(&s, 2);
	a = make_qp(&s);
	if (impl == IMPL_RDMAFAST)
		take_over(&s, a);
	b = make_qp(&s);
	connect_qp(a, b->qp_num, s.lid);
	connect_qp(b, a->qp_num, s.lid);
	sge.addr = (uintptr_t)s.buf;
	sge.lkey = s.mr->lkey;
	for (int i = 0; i < BATCH; i++) {
		wr[i] = (struct ibv_send_wr){
			.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < BATCH ? &wr[i + 1] : NULL,
			.send_flags = IBV_SEND_INLINE | (i == BATCH - 1 ? IBV_SEND_SIGNALED : 0),
			.wr.rdma = { (uintptr_t)s.buf + 4096 + 8 * (uint64_t)i, s.mr->rkey },
		};
	}
	t0 = now_s();
	t1 = t0;
	while (t1 - t0 < secs) {
		/* keep up to 16 batches (256 WQEs) in flight */
		for (; outstanding < 16; outstanding++)
			post_batch(&s, impl, a, wr);
		int n = poll_some(&s, impl);

		done += (uint64_t)n * BATCH;
		outstanding -= n;
		if ((done & 0xfff) == 0)
			t1 = now_s();
	}
	while (outstanding) {
		int n = poll_some(&s, impl);

		outstanding -= n;
		done += (uint64_t)n * BATCH;
	}
	t1 = now_s();
	if (impl == IMPL_RDMAFAST)
		rf_cq_detach(&s.rcq, a->qp_num);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	close_side(&s, impl);
	return (double)done / (t1 - t0) / 1e6;
}

struct pp {
	struct ibv_sge sge;
	struct ibv_recv_wr rwr;
	struct ibv_send_wr swr;
	int recvs, sends;
};

static void pp_post_recv(struct side *s, enum impl impl, struct pp *p)
{
	struct ibv_recv_wr *rbad;

	if (impl == IMPL_LIBMLX5) {
		if (ibv_post_recv(s->qp, &p->rwr, &rbad))
			die("post_recv");
		return;
	}
	if (rf_rq_post_one(&s->rqp.rq, s->mr->lkey, (uintptr_t)s->buf, 8, 0))
		die("rf_rq_post_one");
	rf_rq_ring(&s->rqp.rq);
}

static void pp_send(struct side *s, enum impl impl, struct pp *p)
{
	struct ibv_send_wr *bad;

	if (impl == IMPL_LIBMLX5) {
		if (ibv_post_send(s->qp, &p->swr, &bad))
			die("post_send");
		return;
	}
	if (rf_sq_post_send_inline(&s->rqp.sq, s->buf, 8, RF_SEND_SIGNALED, 0))
		die("rf_sq_post_send_inline");
	rf_sq_ring(&s->rqp.sq);
}

/* Drain completions: count receives (reposting them) and sends. */
static void pp_drain(struct side *s, enum impl impl, struct pp *p)
{
	int n, k, recv;

	if (impl == IMPL_LIBMLX5) {
		struct ibv_wc wc[4];

		n = ibv_poll_cq(s->cq, 4, wc);
		for (k = 0; k < n; k++) {
			check_status(wc[k].status == IBV_WC_SUCCESS,
				     ibv_wc_status_str(wc[k].status));
			recv = wc[k].opcode == IBV_WC_RECV;
			p->recvs += recv;
			p->sends += !recv;
			if (recv)
				pp_post_recv(s, impl, p);
		}
	} else {
		struct rf_wc wc[4];

		n = rf_cq_poll(&s->rcq, wc, 4);
		for (k = 0; k < n; k++) {
			check_status(wc[k].status == RF_WC_SUCCESS, "rdmafast");
			recv = wc[k].opcode == RF_WC_RECV;
			p->recvs += recv;
			p->sends += !recv;
			if (recv)
				pp_post_recv(s, impl, p);
		}
	}
}

/* The initiator pings, the peer pongs; both count their completions. */
static void pp_run(struct side *s, enum impl impl, int iters, int initiator,
		   double *rtt_us)
{
	struct pp p = {
		.sge = { (uintptr_t)s->buf, 8, s->mr->lkey },
	};
	double t0 = 0;

	p.rwr = (struct ibv_recv_wr){ .sg_list = &p.sge, .num_sge = 1 };
	p.swr = (struct ibv_send_wr){ .sg_list = &p.sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	for (int i = 0; i < 4; i++)
		pp_post_recv(s, impl, &p);
	for (int i = 0; i < iters + 1; i++) {
		if (i == 1)
			t0 = now_s();	/* round 0 warms up */
		if (!initiator)
			while (p.recvs <= i)
				pp_drain(s, impl, &p);
		pp_send(s, impl, &p);
		if (initiator)
			while (p.recvs <= i || p.sends <= i)
				pp_drain(s, impl, &p);
	}
	while (p.sends < iters + 1)
		pp_drain(s, impl, &p);
	if (rtt_us)
		*rtt_us = (now_s() - t0) / iters * 1e6;
}

/* One side of the ping-pong: make the QP, exchange over the pipes, run. */
static void pp_side(enum impl impl, int rfd, int wfd, int iters, int initiator,
		    double *rtt_us)
{
	struct side s;
	uint32_t msg[2], mine[2];

	open_side(&s, 1);
	s.qp = make_qp(&s);
	if (impl == IMPL_RDMAFAST)
		take_over(&s, s.qp);
	mine[0] = s.qp->qp_num;
	mine[1] = s.lid;
	if (write(wfd, mine, sizeof(mine)) != sizeof(mine) ||
	    read(rfd, msg, sizeof(msg)) != sizeof(msg))
		die("exchange");
	connect_qp(s.qp, msg[0], (uint16_t)msg[1]);
	/* both QPs ready to receive before either sends */
	if (write(wfd, msg, 1) != 1 || read(rfd, msg, 1) != 1)
		die("sync");
	pp_run(&s, impl, iters, initiator, rtt_us);
	if (impl == IMPL_RDMAFAST)
		rf_cq_detach(&s.rcq, s.qp->qp_num);
	ibv_destroy_qp(s.qp);
	close_side(&s, impl);
}

static double pingpong(const char *self, enum impl impl, int iters)
{
	int to_peer[2], from_peer[2], status;
	double rtt;
	pid_t pid;

	if (pipe(to_peer) || pipe(from_peer))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		char r[16], w[16], n[16], m[4];

		snprintf(r, sizeof(r), "%d", to_peer[0]);
		snprintf(w, sizeof(w), "%d", from_peer[1]);
		snprintf(n, sizeof(n), "%d", iters);
		snprintf(m, sizeof(m), "%d", (int)impl);
		/* exec, not just fork: a new process image is a new emulated host */
		execl(self, self, "--peer", r, w, n, m, (char *)NULL);
		_exit(127);
	}
	pp_side(impl, from_peer[0], to_peer[1], iters, 1, &rtt);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("peer");
	close(to_peer[0]);
	close(to_peer[1]);
	close(from_peer[0]);
	close(from_peer[1]);
	return rtt;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 && strcmp(argv[1], "--peer") ? atof(argv[1]) : 2.0;
	double rate[2], rtt[2];
	int impl;

	if (argc == 6 && !strcmp(argv[1], "--peer")) {
		pp_side((enum impl)atoi(argv[5]), atoi(argv[2]), atoi(argv[3]),
			atoi(argv[4]), 0, NULL);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (secs <= 0)
		secs = 2.0;
	for (impl = 0; impl < 2; impl++) {
		rate[impl] = loopback_rate(secs, (enum impl)impl);
		rtt[impl] = pingpong("/proc/self/exe", (enum impl)impl, 300);
	}
	printf("end to end (on the emulated HCA these measure the device model, not the data path):\n");
	printf("%-10s %28s %32s\n", "impl", "loopback write rate (8 B)", "2-process ping-pong (8 B RC)");
	for (impl = 0; impl < 2; impl++)
		printf("%-10s %21.2f M WQE/s %24.1f us RTT\n", impl_name[impl], rate[impl], rtt[impl]);
	return 0;
}
