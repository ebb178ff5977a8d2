/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * emu_model.c - end-to-end figures on the emulated HCA, for libmlx5 and
 * for rdmafast driving the same queues, each beside its goal (issue 19).
 *
 *   build/rfemu -- build/bench/emu_model [seconds] [--only NAME]
 *
 * NAME is one of loopback, rtt, rtt-events, bw, read-batch, idle (default:
 * all).
 *
 * 1. loopback     one process, an RC QP pair, 8-byte inline RDMA writes in
 *                 batches of 16 with the last one signaled and one doorbell
 *                 per batch (ibv_post_send of a list, or 16
 *                 rf_sq_post_write_inline and one rf_sq_ring); executed
 *                 WQEs per second over `seconds`.
 * 2. rtt          8-byte RC send ping-pong between two processes (two
 *                 emulated hosts: this program re-executes itself as the
 *                 peer), both busy polling; median and 99th percentile of
 *                 the round trips.
 * 3. rtt-events   the same with both sides sleeping in their completion
 *                 channels between messages (arm, poll once more, wait).
 * 4. bw           two processes, 64 KiB RDMA WRITEs and then READs, eight
 *                 in flight, for seconds/2 each; and READ over WRITE.
 * 5. read-batch   two processes: the peer fills a 1 MiB table with a known
 *                 pattern, registers it and waits; this one reads it by
 *                 64-byte RDMA READs, each at the next 64 bytes (wrapping),
 *                 in batches of 16 with the last one signaled and one
 *                 doorbell per batch (ibv_post_send of a 16-WR chain, or 16
 *                 rf_sq_post_read and one rf_sq_ring), 8 batches in
 *                 flight, for seconds/2 each, in four runs of seconds/4:
 *                 libmlx5, rdmafast, rdmafast, libmlx5; READs per second,
 *                 and rdmafast's against libmlx5's. The last 128 READs' data
 *                 of each run are checked against the pattern (a mismatch
 *                 fails). With --only read-batch, each run's rate and who
 *                 executed its doorbells (read_batch_mode()).
 * 6. idle         a child process with a context, a CQ and a connected RC
 *                 QP, left alone: its CPU time (getrusage) over 3 s, after
 *                 0.5 s to settle, as a share of one CPU.
 *
 * These measure the device model (a software HCA on this machine's cores),
 * not the data path: the difference between the two implementations is
 * lost in it. bench/rfbench.c measures the data path itself. A benchmark,
 * not a test: it prints numbers and never fails on them; it fails only if
 * an operation does (an error completion, a peer that dies). Every wait is
 * bounded: a child that hangs is killed after CHILD_TIMEOUT_S and so is
 * this process (SIGALRM), with its child.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdmafast/verbs.h>

#include "bring_up.h"
#include "wire/stats.h"

enum {
	BATCH		= 16,
	BUF_BYTES	= 1 << 21,
	BW_MSG		= 64 << 10,
	BW_DEPTH	= 8,		/* messages in flight */
	BW_SLOTS	= 16,		/* distinct 64 KiB targets at the peer */
	RD_MSG		= 64,		/* read-batch: bytes per READ */
	RD_TABLE	= 1 << 20,	/* the peer's table */
	RD_DEPTH	= 8,		/* batches of BATCH in flight */
	RD_SLOTS	= RD_DEPTH * BATCH,	/* local 64 B targets, reused in turn */
	RTT_ITERS	= 2000,
	RTT_EV_ITERS	= 1000,
	RTT_WARMUP	= 50,
	CHILD_TIMEOUT_S	= 60,		/* a peer that takes longer is killed */
	WAIT_MS		= 10000,	/* a completion that takes longer is a hang */
};

/* The goals of issue 19, item 4, and of issue 29 for the busy round trip. */
#define GOAL_LOOPBACK_MWQE	10.0	/* >= M WQE/s */
#define GOAL_RTT_US		50.0	/* <= us, median, busy polling: libmlx5 */
#define GOAL_RTT_INLINE_US	30.0	/* <= us, median, busy polling: rdmafast */
#define GOAL_RTT_RATIO		2.5	/* rdmafast <= this times libmlx5 in the same run */
#define GOAL_RTT_EV_US		200.0	/* <= us, median, completion channels */
#define GOAL_READ_WRITE		0.5	/* READ bandwidth >= this share of WRITE's */
#define GOAL_IDLE_PCT		1.0	/* <= % of one CPU */

enum impl { IMPL_LIBMLX5, IMPL_RDMAFAST, IMPL_COUNT };
static const char *const impl_name[] = { "libmlx5", "rdmafast" };

/* What a peer process does (its --peer argument). */
enum mode { MODE_RTT, MODE_RTT_EV, MODE_BW, MODE_IDLE, MODE_READ };

static pid_t peer_pid;		/* the child running, killed if we die */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "emu_model: %s: %s\n", what, strerror(errno));
	if (peer_pid > 0)
		kill(peer_pid, SIGKILL);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "emu_model: timed out\n";

	(void)sig;
	if (peer_pid > 0)
		kill(peer_pid, SIGKILL);
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

struct side {
	enum impl impl;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;	/* event mode only */
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint16_t lid;
	struct ibv_qp_cap cap;	/* of the last QP made */
	struct rf_cq rcq;	/* rdmafast: the CQ and the QP it drives */
	struct rf_qp rqp;
};

static void open_side(struct side *s, enum impl impl, int events)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;

	memset(s, 0, sizeof(*s));
	s->impl = impl;
	if (!l || !l[0])
		die("no device (run under build/rfemu)");
	s->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (!s->ctx || ibv_query_port(s->ctx, 1, &pa))
		die("open");
	s->lid = pa.lid;
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = calloc(1, BUF_BYTES);
	if (!s->pd || !s->buf)
		die("resources");
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (events && !(s->ch = ibv_create_comp_channel(s->ctx)))
		die("completion channel");
	s->cq = ibv_create_cq(s->ctx, 1024, NULL, s->ch, 0);
	if (!s->mr || !s->cq)
		die("resources");
	if (impl == IMPL_RDMAFAST && rf_cq_init_ibv(&s->rcq, s->cq))
		die("rdmafast CQ take-over");
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

/*
 * Up to 16 READs in flight each way (the device's max_qp_rd_atom). Every
 * QP of a side is made by make_qp(): s->cap is the capabilities of each.
 */
static void connect_qp(struct side *s, struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid)
{
	int ret = bench_rc_bring_up(qp, &s->cap, dqpn, dlid, NULL, 16);

	if (ret) {
		errno = -ret;
		die("connect");
	}
}

/* rdmafast drives qp (nothing posted yet) through the side's CQ. */
static void take_over(struct side *s, struct ibv_qp *qp)
{
	if (rf_qp_init_ibv(&s->rqp, qp, &s->cap, 0) ||
	    rf_cq_attach(&s->rcq, qp->qp_num, &s->rqp.sq, &s->rqp.rq, NULL))
		die("rdmafast take-over");
}

static void close_side(struct side *s)
{
	if (s->qp && s->impl == IMPL_RDMAFAST) {
		rf_cq_detach(&s->rcq, s->qp->qp_num);
		ibv_destroy_qp(s->qp);
		rf_qp_fini_ibv(&s->rqp);
	} else if (s->qp) {
		ibv_destroy_qp(s->qp);
	}
	ibv_destroy_cq(s->cq);
	if (s->ch)
		ibv_destroy_comp_channel(s->ch);
	ibv_dereg_mr(s->mr);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

static void check_status(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "emu_model: completion error (%s)\n", what);
		if (peer_pid > 0)
			kill(peer_pid, SIGKILL);
		exit(1);
	}
}

/*
 * Poll up to 16 completions, all successful; returns how many and, in
 * *recvs, how many of them were receives.
 */
static int poll_some(struct side *s, int *recvs)
{
	int n, r = 0;

	if (s->impl == IMPL_LIBMLX5) {
		struct ibv_wc wc[16];

		n = ibv_poll_cq(s->cq, 16, wc);
		for (int i = 0; i < n; i++) {
			check_status(wc[i].status == IBV_WC_SUCCESS,
				     ibv_wc_status_str(wc[i].status));
			r += wc[i].opcode == IBV_WC_RECV;
		}
	} else {
		struct rf_wc wc[16];

		n = rf_cq_poll(&s->rcq, wc, 16);
		for (int i = 0; i < n; i++) {
			check_status(wc[i].status == RF_WC_SUCCESS, "rdmafast");
			r += wc[i].opcode == RF_WC_RECV;
		}
	}
	if (recvs)
		*recvs = r;
	return n;
}

/*
 * Arm the CQ, poll once more (a CQE that arrived before the arm raises no
 * event), and if that finds nothing sleep until the event.
 */
static int wait_event(struct side *s, int *recvs)
{
	struct pollfd pf = { .fd = s->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n;

	if (s->impl == IMPL_LIBMLX5) {
		if (ibv_req_notify_cq(s->cq, 0))
			die("ibv_req_notify_cq");
	} else {
		rf_cq_arm(&s->rcq, 0);
	}
	n = poll_some(s, recvs);
	if (n)
		return n;
	if (poll(&pf, 1, WAIT_MS) != 1) {
		errno = ETIMEDOUT;
		die("completion event");
	}
	if (s->impl == IMPL_LIBMLX5) {
		if (ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx))
			die("ibv_get_cq_event");
		ibv_ack_cq_events(ev_cq, 1);
	} else if (rf_cq_get_event_ibv(&s->rcq, s->ch)) {
		die("rf_cq_get_event_ibv");
	}
	return poll_some(s, recvs);
}

/* ---- 1. loopback WQE rate -------------------------------------------------- */

/* One batch of BATCH inline writes, last one signaled, one doorbell. */
static void post_batch(struct side *s, struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (s->impl == IMPL_LIBMLX5) {
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

static uint64_t loopback_wqes[IMPL_COUNT];	/* executed, for --only loopback */

static double loopback_rate(double secs, enum impl impl)
{
	struct side s;
	struct ibv_qp *a, *b;
	struct ibv_send_wr wr[BATCH];
	struct ibv_sge sge = { 0, 8, 0 };
	uint64_t done = 0;
	double t0, t1;
	int outstanding = 0;

	open_side(&s, impl, 0);
	a = make_qp(&s);
	if (impl == IMPL_RDMAFAST)
		take_over(&s, a);
	b = make_qp(&s);
	connect_qp(&s, a, b->qp_num, s.lid);
	connect_qp(&s, b, a->qp_num, s.lid);
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
			post_batch(&s, a, wr);
		int n = poll_some(&s, NULL);

		done += (uint64_t)n * BATCH;
		outstanding -= n;
		if ((done & 0xfff) == 0)
			t1 = now_s();
	}
	while (outstanding) {
		int n = poll_some(&s, NULL);

		outstanding -= n;
		done += (uint64_t)n * BATCH;
	}
	t1 = now_s();
	loopback_wqes[impl] = done;
	s.qp = a;
	ibv_destroy_qp(b);
	close_side(&s);
	return (double)done / (t1 - t0) / 1e6;
}

/* ---- two processes: the peer and the exchange ------------------------------ */

/* What each side tells the other: its QP, and where the other may write. */
struct peer_msg {
	uint64_t addr;
	uint32_t qpn, rkey, lid, pad;
};

static void xfer(int rfd, int wfd, const void *out, void *in, size_t n)
{
	if (write(wfd, out, n) != (ssize_t)n || read(rfd, in, n) != (ssize_t)n)
		die("exchange with the peer");
}

/* Open, make the QP, swap details over the pipes, connect, sync. */
static void side_up(struct side *s, enum impl impl, int events, int rfd, int wfd,
		    struct peer_msg *peer)
{
	struct peer_msg mine;
	char c = 0;

	open_side(s, impl, events);
	s->qp = make_qp(s);
	if (impl == IMPL_RDMAFAST)
		take_over(s, s->qp);
	mine = (struct peer_msg){ (uintptr_t)s->buf, s->qp->qp_num, s->mr->rkey, s->lid, 0 };
	xfer(rfd, wfd, &mine, peer, sizeof(mine));
	connect_qp(s, s->qp, peer->qpn, (uint16_t)peer->lid);
	/* both QPs ready to receive before either sends */
	xfer(rfd, wfd, &c, &c, 1);
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (s->impl == IMPL_LIBMLX5) {
		if (ibv_post_recv(s->qp, &wr, &bad))
			die("post_recv");
		return;
	}
	if (rf_rq_post_one(&s->rqp.rq, s->mr->lkey, (uintptr_t)s->buf, 8, 0))
		die("rf_rq_post_one");
	rf_rq_ring(&s->rqp.rq);
}

static void post_send8(struct side *s)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE }, *bad;

	if (s->impl == IMPL_LIBMLX5) {
		if (ibv_post_send(s->qp, &wr, &bad))
			die("post_send");
		return;
	}
	if (rf_sq_post_send_inline(&s->rqp.sq, s->buf, 8, RF_SEND_SIGNALED, 0))
		die("rf_sq_post_send_inline");
	rf_sq_ring(&s->rqp.sq);
}

/* Take completions (busy, or sleeping on events) until want_r receives and want_s sends. */
static void await(struct side *s, int events, long *recvs, long *sends, long want_r, long want_s)
{
	double deadline = now_s() + WAIT_MS / 1000.0;
	unsigned spins = 0;

	while (*recvs < want_r || *sends < want_s) {
		int r, n = events ? wait_event(s, &r) : poll_some(s, &r);

		for (int i = 0; i < r; i++)
			post_recv(s);
		*recvs += r;
		*sends += n - r;
		if (!n && !(++spins & 0xffff) && now_s() > deadline) {
			errno = ETIMEDOUT;
			die("completion");
		}
	}
}

/*
 * The ping-pong: the initiator sends and waits for its send's completion
 * and the answer; the peer answers each message. With rtt_us, the
 * initiator's round trips after the warm-up are stored there.
 */
static void pingpong_run(struct side *s, int events, int iters, int initiator, double *rtt_us)
{
	long recvs = 0, sends = 0;

	for (int i = 0; i < 4; i++)
		post_recv(s);
	for (int i = 0; i < iters + RTT_WARMUP; i++) {
		double t0 = now_s();

		if (!initiator)
			await(s, events, &recvs, &sends, i + 1, i);
		post_send8(s);
		if (initiator) {
			await(s, events, &recvs, &sends, i + 1, i + 1);
			if (rtt_us && i >= RTT_WARMUP)
				rtt_us[i - RTT_WARMUP] = (now_s() - t0) * 1e6;
		}
	}
	await(s, events, &recvs, &sends, iters + RTT_WARMUP, iters + RTT_WARMUP);
}

/*
 * The bandwidth run: BW_DEPTH signaled 64 KiB WRITEs or READs in flight to
 * the peer's buffer for secs; returns MB/s (10^6 bytes).
 */
static double bw_run(struct side *s, const struct peer_msg *peer, int read, double secs)
{
	long posted = 0, done = 0, sends = 0, recvs = 0;
	double t0 = now_s(), t1 = t0;

	while (t1 - t0 < secs || done < posted) {
		while (t1 - t0 < secs && posted - done < BW_DEPTH) {
			uint64_t off = (uint64_t)(posted % BW_SLOTS) * BW_MSG;
			uint64_t laddr = (uintptr_t)s->buf + off;

			if (s->impl == IMPL_LIBMLX5) {
				struct ibv_sge sge = { laddr, BW_MSG, s->mr->lkey };
				struct ibv_send_wr wr = {
					.sg_list = &sge, .num_sge = 1,
					.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
					.send_flags = IBV_SEND_SIGNALED,
					.wr.rdma = { peer->addr + off, peer->rkey },
				}, *bad;

				if (ibv_post_send(s->qp, &wr, &bad))
					die("post_send");
			} else {
				int ret = read ?
					rf_sq_post_read(&s->rqp.sq, s->mr->lkey, laddr, BW_MSG,
							peer->rkey, peer->addr + off,
							RF_SEND_SIGNALED, 0) :
					rf_sq_post_write(&s->rqp.sq, s->mr->lkey, laddr, BW_MSG,
							 peer->rkey, peer->addr + off,
							 RF_SEND_SIGNALED, 0);

				if (ret)
					die("rf_sq_post");
				rf_sq_ring(&s->rqp.sq);
			}
			posted++;
		}
		await(s, 0, &recvs, &sends, 0, done + 1);
		done = sends;
		t1 = now_s();
	}
	return (double)done * BW_MSG / (t1 - t0) / 1e6;
}

/* The read-batch table: word w (8 bytes) of the peer's table holds rd_pattern(w). */
static uint64_t rd_pattern(uint64_t w)
{
	return (w + 1) * 0x9e3779b97f4a7c15ull ^ 0x5244524f57000000ull;
}

/* READ number i: where it reads at the peer, and where it lands here. */
static uint64_t rd_remote_off(uint64_t i)
{
	return i * RD_MSG % RD_TABLE;
}

static uint64_t rd_local_off(uint64_t i)
{
	return i % RD_SLOTS * RD_MSG;
}

/* for --only read-batch: READs posted and completed, and over how long (s) */
static uint64_t rd_reads[IMPL_COUNT];
static double rd_secs[IMPL_COUNT];

/*
 * One batch of BATCH 64-byte READs from number first on, the last one
 * signaled, one doorbell. wr and sge are the prepared libibverbs chain
 * (opcode, keys, lengths, links, flags); the addresses are set here.
 */
static void post_read_batch(struct side *s, const struct peer_msg *peer, uint64_t first,
			    struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct ibv_send_wr *bad;

	if (s->impl == IMPL_LIBMLX5) {
		for (int k = 0; k < BATCH; k++) {
			sge[k].addr = (uintptr_t)s->buf + rd_local_off(first + (uint64_t)k);
			wr[k].wr.rdma.remote_addr = peer->addr + rd_remote_off(first + (uint64_t)k);
			wr[k].wr_id = first + (uint64_t)k;
		}
		if (ibv_post_send(s->qp, wr, &bad))
			die("post_send");
		return;
	}
	for (int k = 0; k < BATCH; k++) {
		uint64_t i = first + (uint64_t)k;

		if (rf_sq_post_read(&s->rqp.sq, s->mr->lkey, (uintptr_t)s->buf + rd_local_off(i),
				    RD_MSG, peer->rkey, peer->addr + rd_remote_off(i),
				    k == BATCH - 1 ? RF_SEND_SIGNALED : 0, i))
			die("rf_sq_post_read");
	}
	rf_sq_ring(&s->rqp.sq);
}

/*
 * The read-batch run: batches of BATCH READs, RD_DEPTH in flight, for secs,
 * then every one in flight completed; returns READs per second. The data
 * of the last RD_SLOTS READs (each in its own local slot) must be the
 * table's: a run that read nothing, or the wrong bytes, fails.
 */
static double read_batch_run(struct side *s, const struct peer_msg *peer, double secs)
{
	struct ibv_send_wr wr[BATCH];
	struct ibv_sge sge[BATCH];
	uint64_t posted = 0, done = 0;
	double t0, t1, deadline;
	unsigned spins = 0;
	int outstanding = 0;

	for (int k = 0; k < BATCH; k++) {
		sge[k] = (struct ibv_sge){ 0, RD_MSG, s->mr->lkey };
		wr[k] = (struct ibv_send_wr){
			.sg_list = &sge[k], .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			.next = k + 1 < BATCH ? &wr[k + 1] : NULL,
			.send_flags = k == BATCH - 1 ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { peer->addr, peer->rkey },
		};
	}
	memset(s->buf, 0, RD_SLOTS * RD_MSG);
	t0 = now_s();
	t1 = t0;
	deadline = t0 + secs + WAIT_MS / 1000.0;
	while (t1 - t0 < secs || outstanding) {
		for (; t1 - t0 < secs && outstanding < RD_DEPTH; outstanding++) {
			post_read_batch(s, peer, posted, wr, sge);
			posted += BATCH;
		}
		int n = poll_some(s, NULL);

		done += (uint64_t)n * BATCH;
		outstanding -= n;
		if (n || !(++spins & 0x3f)) {
			t1 = now_s();
			if (t1 > deadline) {
				errno = ETIMEDOUT;
				die("READ completion");
			}
		}
	}
	if (done != posted) {
		errno = EPROTO;
		die("READ completions miscounted");
	}
	for (uint64_t i = done > RD_SLOTS ? done - RD_SLOTS : 0; i < done; i++) {
		const uint8_t *got = s->buf + rd_local_off(i);

		for (uint64_t w = 0; w < RD_MSG / 8; w++) {
			uint64_t v, want = rd_pattern(rd_remote_off(i) / 8 + w);

			memcpy(&v, got + 8 * w, 8);
			if (v != want) {
				fprintf(stderr, "emu_model: READ %llu (table offset %llu) word %llu: "
					"0x%016llx, the table holds 0x%016llx\n",
					(unsigned long long)i, (unsigned long long)rd_remote_off(i),
					(unsigned long long)w, (unsigned long long)v,
					(unsigned long long)want);
				if (peer_pid > 0)
					kill(peer_pid, SIGKILL);
				exit(1);
			}
		}
	}
	rd_reads[s->impl] = done;
	rd_secs[s->impl] = t1 - t0;	/* longer than secs if completions stalled */
	return (double)done / (t1 - t0);
}

/* The idle host: its CPU share over the window, as % of one CPU. */
static double idle_run(struct side *s)
{
	struct rusage r0, r1;
	double t0, t1, cpu;

	/* connected to itself: a live QP on a watched bfreg, nothing posted */
	s->qp = make_qp(s);
	connect_qp(s, s->qp, s->qp->qp_num, s->lid);
	usleep(500 * 1000);	/* past the engine's hot window after the setup */
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_s();
	usleep(3000 * 1000);
	getrusage(RUSAGE_SELF, &r1);
	t1 = now_s();
	cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
		       r0.ru_stime.tv_sec) +
	      (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
		       r0.ru_stime.tv_usec) * 1e-6;
	return cpu / (t1 - t0) * 100;
}

/* The peer's side of each mode, in the child; reports a figure back when it has one. */
static int peer_main(enum mode mode, enum impl impl, int rfd, int wfd, int iters)
{
	struct side s;
	struct peer_msg peer;
	char c = 0;
	double v;

	alarm(CHILD_TIMEOUT_S);
	if (mode == MODE_IDLE) {
		open_side(&s, impl, 0);
		v = idle_run(&s);
		xfer(rfd, wfd, &v, &v, sizeof(v));
		close_side(&s);
		return 0;
	}
	side_up(&s, impl, mode == MODE_RTT_EV, rfd, wfd, &peer);
	if (mode == MODE_READ) {
		/* the table, then nothing: the device answers the READs */
		for (uint64_t w = 0; w < RD_TABLE / 8; w++) {
			uint64_t v = rd_pattern(w);

			memcpy(s.buf + 8 * w, &v, 8);
		}
		xfer(rfd, wfd, &c, &c, 1);	/* the table is ready */
		xfer(rfd, wfd, &c, &c, 1);	/* the initiator is done */
	} else if (mode == MODE_BW)
		xfer(rfd, wfd, &c, &c, 1);	/* the initiator is done */
	else
		pingpong_run(&s, mode == MODE_RTT_EV, iters, 0, NULL);
	close_side(&s);
	return 0;
}

/* Start the peer (a new process image is a new emulated host). */
static void peer_start(enum mode mode, enum impl impl, int iters, int *rfd, int *wfd)
{
	int to_peer[2], from_peer[2];

	if (pipe(to_peer) || pipe(from_peer))
		die("pipe");
	peer_pid = fork();
	if (peer_pid < 0)
		die("fork");
	if (peer_pid == 0) {
		char m[8], i[8], r[16], w[16], n[16];

		close(to_peer[1]);
		close(from_peer[0]);
		snprintf(m, sizeof(m), "%d", (int)mode);
		snprintf(i, sizeof(i), "%d", (int)impl);
		snprintf(r, sizeof(r), "%d", to_peer[0]);
		snprintf(w, sizeof(w), "%d", from_peer[1]);
		snprintf(n, sizeof(n), "%d", iters);
		execl("/proc/self/exe", "emu_model", "--peer", m, i, r, w, n, (char *)NULL);
		_exit(127);
	}
	close(to_peer[0]);
	close(from_peer[1]);
	*rfd = from_peer[0];
	*wfd = to_peer[1];
}

/* Wait for the peer, at most CHILD_TIMEOUT_S; kill it if it is late. */
static void peer_wait(int rfd, int wfd)
{
	double end = now_s() + CHILD_TIMEOUT_S;
	int status = 0;
	pid_t r;

	while ((r = waitpid(peer_pid, &status, WNOHANG)) == 0 && now_s() < end)
		usleep(1000);
	if (r == 0) {
		kill(peer_pid, SIGKILL);
		waitpid(peer_pid, &status, 0);
	}
	peer_pid = 0;
	close(rfd);
	close(wfd);
	if (r != 0 && WIFEXITED(status) && !WEXITSTATUS(status))
		return;
	errno = ECHILD;
	die("peer");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median and 99th percentile of the round trips, in us. */
static void rtt(enum impl impl, int events, double *median, double *p99)
{
	int iters = events ? RTT_EV_ITERS : RTT_ITERS, rfd, wfd;
	double *t = calloc((size_t)iters, sizeof(*t));
	struct side s;
	struct peer_msg peer;

	if (!t)
		die("calloc");
	peer_start(events ? MODE_RTT_EV : MODE_RTT, impl, iters, &rfd, &wfd);
	side_up(&s, impl, events, rfd, wfd, &peer);
	pingpong_run(&s, events, iters, 1, t);
	close_side(&s);
	peer_wait(rfd, wfd);
	qsort(t, (size_t)iters, sizeof(*t), cmp_double);
	*median = t[iters / 2];
	*p99 = t[iters * 99 / 100];
	free(t);
}

/* WRITE and READ bandwidth to a peer, MB/s. */
static void bandwidth(enum impl impl, double secs, double *write_mbs, double *read_mbs)
{
	struct side s;
	struct peer_msg peer;
	int rfd, wfd;
	char c = 0;

	peer_start(MODE_BW, impl, 0, &rfd, &wfd);
	side_up(&s, impl, 0, rfd, wfd, &peer);
	*write_mbs = bw_run(&s, &peer, 0, secs);
	*read_mbs = bw_run(&s, &peer, 1, secs);
	xfer(rfd, wfd, &c, &c, 1);
	close_side(&s);
	peer_wait(rfd, wfd);
}

/* 64-byte READs in batches of 16 from a peer's table, READs per second. */
static double read_batch(enum impl impl, double secs)
{
	struct side s;
	struct peer_msg peer;
	int rfd, wfd;
	char c = 0;
	double rate;

	peer_start(MODE_READ, impl, 0, &rfd, &wfd);
	side_up(&s, impl, 0, rfd, wfd, &peer);
	xfer(rfd, wfd, &c, &c, 1);	/* the peer's table is filled */
	rate = read_batch_run(&s, &peer, secs);
	xfer(rfd, wfd, &c, &c, 1);
	close_side(&s);
	peer_wait(rfd, wfd);
	return rate;
}

/*
 * Who executed a read-batch run's doorbells, per batch, from the emulator's
 * counters (rfemu_dev_stats(); nothing on hardware): the run's rate follows
 * from it. A doorbell fault executes its batch in the thread that rang
 * (one fault a batch, 8-12 us each on a 2-vCPU VM); an engine that spins
 * on a CPU of its own takes a stream of them, and libmlx5's empty polls run
 * the device themselves; both of those execute several batches a pass
 * (docs/emu-measurements.md, "Batched READs: which thread executes them").
 */
static char rd_modes[4][128];	/* one line a run, printed after the rows */

static void read_batch_mode(unsigned run, enum impl impl, const struct rfemu_dev_stats *a,
			    const struct rfemu_dev_stats *b)
{
	double batches = (double)rd_reads[impl] / BATCH;

	if (batches <= 0)
		return;
	snprintf(rd_modes[run - 1], sizeof(rd_modes[0]),
		 "  (run %u, %s: %.3f M READ/s; a batch: %.2f doorbell faults, "
		 "%.2f engine passes, %.2f poll passes)\n",
		 run, impl_name[impl], (double)rd_reads[impl] / rd_secs[impl] / 1e6,
		 (double)(b->trap_faults - a->trap_faults) / batches,
		 (double)(b->engine_passes - a->engine_passes) / batches,
		 (double)(b->poll_assists - a->poll_assists) / batches);
}

/*
 * The batched READs of both implementations, secs each, in four runs in
 * the order A B B A: a load that changes during them (a 2-core VM shared
 * with other work) moves both figures alike.  One run of each, seconds
 * apart, gave rdmafast/libmlx5 ratios from 0.74 to 1.30 for one tree.
 */
static void read_batches(double secs, double *rate, bool modes)
{
	static const enum impl order[] = { IMPL_LIBMLX5, IMPL_RDMAFAST, IMPL_RDMAFAST,
					   IMPL_LIBMLX5 };
	rfemu_dev_stats_fn *stats = (rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	uint64_t reads[IMPL_COUNT] = { 0 };
	double t[IMPL_COUNT] = { 0 };

	for (unsigned k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		struct rfemu_dev_stats a = { 0 }, b = { 0 };

		if (stats)
			stats(&a, sizeof(a));
		read_batch(order[k], secs / 2);
		if (stats && modes) {
			stats(&b, sizeof(b));
			read_batch_mode(k + 1, order[k], &a, &b);
		}
		reads[order[k]] += rd_reads[order[k]];
		t[order[k]] += rd_secs[order[k]];
	}
	for (int i = 0; i < IMPL_COUNT; i++) {
		rd_reads[i] = reads[i];
		rd_secs[i] = t[i];
		rate[i] = t[i] > 0 ? (double)reads[i] / t[i] : 0;
	}
}

static double idle_cpu(void)
{
	int rfd, wfd;
	double v = -1;

	peer_start(MODE_IDLE, IMPL_LIBMLX5, 0, &rfd, &wfd);
	xfer(rfd, wfd, &v, &v, sizeof(v));
	peer_wait(rfd, wfd);
	return v;
}

/* ---- report ---------------------------------------------------------------- */

/* met: 1 met, 0 MISSED, -1 none (a reference the other row is measured against) */
static void row(const char *what, const char *impl, const char *fig, const char *goal, int met)
{
	printf("  %-34s %-9s %-26s %-18s %s\n", what, impl, fig, goal,
	       met < 0 ? "-" : met ? "met" : "MISSED");
}

enum {
	RUN_LOOPBACK = 1, RUN_RTT = 2, RUN_RTT_EV = 4, RUN_BW = 8, RUN_IDLE = 16,
	RUN_READ = 32, RUN_ALL = 63
};

static unsigned parse_only(const char *s)
{
	static const struct { const char *name; unsigned bit; } t[] = {
		{ "loopback", RUN_LOOPBACK }, { "rtt", RUN_RTT }, { "rtt-events", RUN_RTT_EV },
		{ "bw", RUN_BW }, { "read-batch", RUN_READ }, { "idle", RUN_IDLE },
	};

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].name))
			return t[i].bit;
	fprintf(stderr, "usage: emu_model [seconds] [--only loopback|rtt|rtt-events|bw|read-batch|idle]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double secs = 2.0, rate[IMPL_COUNT], med[IMPL_COUNT], p99[IMPL_COUNT];
	double emed[IMPL_COUNT], ep99[IMPL_COUNT], wbw[IMPL_COUNT], rbw[IMPL_COUNT], idle = 0;
	double rd[IMPL_COUNT];
	unsigned run = 0;
	char fig[64], goal[32];
	int i;

	if (argc == 7 && !strcmp(argv[1], "--peer"))
		return peer_main((enum mode)atoi(argv[2]), (enum impl)atoi(argv[3]),
				 atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc)
			run |= parse_only(argv[++i]);
		else if (atof(argv[i]) > 0)
			secs = atof(argv[i]);
		else
			parse_only("");
	}
	if (!run)
		run = RUN_ALL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)(5 * secs) + 5 * CHILD_TIMEOUT_S);

	for (i = 0; i < IMPL_COUNT; i++) {
		if (run & RUN_LOOPBACK)
			rate[i] = loopback_rate(secs, (enum impl)i);
		if (run & RUN_RTT)
			rtt((enum impl)i, 0, &med[i], &p99[i]);
		if (run & RUN_RTT_EV)
			rtt((enum impl)i, 1, &emed[i], &ep99[i]);
		if (run & RUN_BW)
			bandwidth((enum impl)i, secs / 2, &wbw[i], &rbw[i]);
	}
	if (run & RUN_READ)
		read_batches(secs / 2, rd, run == RUN_READ);
	if (run & RUN_IDLE)
		idle = idle_cpu();

	printf("end to end on the emulated HCA (the device model, not the data path; goals of issues 19 and 29):\n");
	for (i = 0; i < IMPL_COUNT && (run & RUN_LOOPBACK); i++) {
		snprintf(fig, sizeof(fig), "%.2f M WQE/s", rate[i]);
		snprintf(goal, sizeof(goal), ">= %.0f M WQE/s", GOAL_LOOPBACK_MWQE);
		row("loopback write, 8 B inline x16", impl_name[i], fig, goal,
		    rate[i] >= GOAL_LOOPBACK_MWQE);
		/* the count that instructions per WQE are taken over (docs/emu-measurements.md) */
		if (run == RUN_LOOPBACK)
			printf("  (%s: %llu WQEs executed)\n", impl_name[i],
			       (unsigned long long)loopback_wqes[i]);
	}
	for (i = 0; i < IMPL_COUNT && (run & RUN_RTT); i++) {
		snprintf(fig, sizeof(fig), "%.1f us (p99 %.1f)", med[i], p99[i]);
		if (i == IMPL_LIBMLX5) {
			snprintf(goal, sizeof(goal), "<= %.0f us median", GOAL_RTT_US);
			row("2-process 8 B RC RTT, busy poll", impl_name[i], fig, goal,
			    med[i] <= GOAL_RTT_US);
			continue;
		}
		/* it polls its CQ itself: the emulator must serve it as well */
		snprintf(goal, sizeof(goal), "<= %.0f us, <= %.1fx", GOAL_RTT_INLINE_US,
			 GOAL_RTT_RATIO);
		snprintf(fig, sizeof(fig), "%.1f us (p99 %.1f) = %.1fx", med[i], p99[i],
			 med[IMPL_LIBMLX5] > 0 ? med[i] / med[IMPL_LIBMLX5] : 0);
		row("2-process 8 B RC RTT, busy poll", impl_name[i], fig, goal,
		    med[i] <= GOAL_RTT_INLINE_US && med[i] <= GOAL_RTT_RATIO * med[IMPL_LIBMLX5]);
	}
	for (i = 0; i < IMPL_COUNT && (run & RUN_RTT_EV); i++) {
		snprintf(fig, sizeof(fig), "%.1f us (p99 %.1f)", emed[i], ep99[i]);
		snprintf(goal, sizeof(goal), "<= %.0f us median", GOAL_RTT_EV_US);
		row("2-process 8 B RC RTT, events", impl_name[i], fig, goal,
		    emed[i] <= GOAL_RTT_EV_US);
	}
	for (i = 0; i < IMPL_COUNT && (run & RUN_BW); i++) {
		snprintf(fig, sizeof(fig), "%.0f / %.0f MB/s = %.2f", rbw[i], wbw[i],
			 wbw[i] > 0 ? rbw[i] / wbw[i] : 0);
		snprintf(goal, sizeof(goal), "READ >= %.1f WRITE", GOAL_READ_WRITE);
		row("2-process 64 KiB READ / WRITE x8", impl_name[i], fig, goal,
		    rbw[i] >= GOAL_READ_WRITE * wbw[i]);
	}
	for (i = 0; i < IMPL_COUNT && (run & RUN_READ); i++) {
		if (i == IMPL_LIBMLX5)
			snprintf(fig, sizeof(fig), "%.3f M READ/s", rd[i] / 1e6);
		else
			snprintf(fig, sizeof(fig), "%.3f M READ/s = %.2fx", rd[i] / 1e6,
				 rd[IMPL_LIBMLX5] > 0 ? rd[i] / rd[IMPL_LIBMLX5] : 0);
		row("2-process 64 B READ x16 batches", impl_name[i], fig,
		    i == IMPL_LIBMLX5 ? "(the reference)" : "rdmafast >= libmlx5",
		    i == IMPL_LIBMLX5 ? -1 : rd[i] >= rd[IMPL_LIBMLX5]);
		if (run == RUN_READ)
			printf("  (%s: %llu READs in %.2f s, the last %d checked against the table)\n",
			       impl_name[i], (unsigned long long)rd_reads[i], rd_secs[i], RD_SLOTS);
	}
	for (i = 0; i < (int)(sizeof(rd_modes) / sizeof(rd_modes[0])) && run == RUN_READ; i++)
		fputs(rd_modes[i], stdout);
	if (run & RUN_IDLE) {
		snprintf(fig, sizeof(fig), "%.2f %% of a CPU", idle);
		snprintf(goal, sizeof(goal), "<= %.0f %%", GOAL_IDLE_PCT);
		row("idle host (context, CQ, RC QP)", "-", fig, goal, idle <= GOAL_IDLE_PCT);
	}
	return 0;
}
