/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * emu_model.c - how fast is the emulated HCA's device model?
 *
 *   build/rfemu -- build/bench/emu_model [seconds]
 *
 * 1. Loopback WQE rate: one process, an RC QP pair, 8-byte inline RDMA
 *    writes posted by libmlx5's ibv_post_send in lists of 16 with the last
 *    one signaled; counts executed WQEs per second.
 * 2. Ping-pong round trip between two processes (two emulated hosts): this
 *    program re-executes itself as the peer; 8-byte sends, busy polling.
 *
 * A benchmark, not a test: it prints numbers and never fails on them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BATCH 16

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
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dqpn;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

static void loopback_rate(double secs)
{
	struct side s;
	struct ibv_qp *a, *b;
	struct ibv_send_wr wr[BATCH], *bad;
	struct ibv_sge sge = { 0, 8, 0 };
	struct ibv_wc wc[16];
	uint64_t posted = 0, done = 0;
	double t0, t1;
	int outstanding = 0;

	open_side(&s, 2);
	a = make_qp(&s);
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
		while (outstanding < 16) {
			if (ibv_post_send(a, wr, &bad))
				die("post_send");
			posted += BATCH;
			outstanding++;
		}
		int n = ibv_poll_cq(s.cq, 16, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "emu_model: completion error %s\n",
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			done += BATCH;
			outstanding--;
		}
		if ((done & 0xfff) == 0)
			t1 = now_s();
	}
	while (outstanding) {
		int n = ibv_poll_cq(s.cq, 16, wc);

		outstanding -= n;
		done += (uint64_t)n * BATCH;
	}
	t1 = now_s();
	printf("loopback RDMA write (8 B inline, 1 CQE per %d): %.2f M WQEs/s (%llu WQEs in %.2f s)\n",
	       BATCH, (double)done / (t1 - t0) / 1e6, (unsigned long long)done, t1 - t0);
	(void)posted;
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(s.cq);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	free(s.buf);
}

/* Drain completions: count receives (reposting them) and sends. */
static void pp_drain(struct side *s, struct ibv_recv_wr *rwr, int *recvs, int *sends)
{
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(s->cq, 4, wc);

	for (int k = 0; k < n; k++) {
		if (wc[k].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "emu_model: %s\n", ibv_wc_status_str(wc[k].status));
			exit(1);
		}
		if (wc[k].opcode == IBV_WC_RECV) {
			(*recvs)++;
			if (ibv_post_recv(s->qp, rwr, &rbad))
				die("post_recv");
		} else {
			(*sends)++;
		}
	}
}

/* The initiator pings, the peer pongs; both count their completions. */
static void pp_run(struct side *s, int iters, int initiator, double *rtt_us)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;
	int recvs = 0, sends = 0;
	double t0 = 0;

	for (int i = 0; i < 4; i++)
		if (ibv_post_recv(s->qp, &rwr, &rbad))
			die("post_recv");
	for (int i = 0; i < iters + 1; i++) {
		if (i == 1)
			t0 = now_s();	/* round 0 warms up */
		if (!initiator)
			while (recvs <= i)
				pp_drain(s, &rwr, &recvs, &sends);
		if (ibv_post_send(s->qp, &wr, &bad))
			die("post_send");
		if (initiator)
			while (recvs <= i || sends <= i)
				pp_drain(s, &rwr, &recvs, &sends);
	}
	while (sends < iters + 1)
		pp_drain(s, &rwr, &recvs, &sends);
	if (rtt_us)
		*rtt_us = (now_s() - t0) / iters * 1e6;
}

static int peer_main(int rfd, int wfd, int iters)
{
	struct side s;
	uint32_t msg[2];

	open_side(&s, 1);
	s.qp = make_qp(&s);
	msg[0] = s.qp->qp_num;
	msg[1] = s.lid;
	if (write(wfd, msg, sizeof(msg)) != sizeof(msg) ||
	    read(rfd, msg, sizeof(msg)) != sizeof(msg))
		die("exchange");
	connect_qp(s.qp, msg[0], (uint16_t)msg[1]);
	if (write(wfd, msg, 1) != 1 || read(rfd, msg, 1) != 1)
		die("sync");
	pp_run(&s, iters, 0, NULL);
	ibv_destroy_qp(s.qp);
	ibv_destroy_cq(s.cq);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	free(s.buf);
	return 0;
}

static void pingpong(const char *self, int iters)
{
	int to_peer[2], from_peer[2];
	uint32_t msg[2];
	struct side s;
	double rtt;
	pid_t pid;

	if (pipe(to_peer) || pipe(from_peer))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		char r[16], w[16], n[16];

		snprintf(r, sizeof(r), "%d", to_peer[0]);
		snprintf(w, sizeof(w), "%d", from_peer[1]);
		snprintf(n, sizeof(n), "%d", iters);
		/* exec, not just fork: a new process image is a new emulated host */
		execl(self, self, "--peer", r, w, n, (char *)NULL);
		_exit(127);
	}
	open_side(&s, 1);
	s.qp = make_qp(&s);
	if (read(from_peer[0], msg, sizeof(msg)) != sizeof(msg))
		die("exchange");
	connect_qp(s.qp, msg[0], (uint16_t)msg[1]);
	msg[0] = s.qp->qp_num;
	msg[1] = s.lid;
	if (write(to_peer[1], msg, sizeof(msg)) != sizeof(msg) ||
	    read(from_peer[0], msg, 1) != 1)
		die("exchange");
	if (write(to_peer[1], msg, 1) != 1)
		die("sync");
	pp_run(&s, iters, 1, &rtt);
	printf("ping-pong between two processes (8 B RC send, busy poll): %.1f us round trip (%d iterations)\n",
	       rtt, iters);
	ibv_destroy_qp(s.qp);
	ibv_destroy_cq(s.cq);
	ibv_dereg_mr(s.mr);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	free(s.buf);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 && strcmp(argv[1], "--peer") ? atof(argv[1]) : 2.0;

	if (argc == 5 && !strcmp(argv[1], "--peer"))
		return peer_main(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	loopback_rate(secs > 0 ? secs : 2.0);
	pingpong("/proc/self/exe", 300);
	return 0;
}
