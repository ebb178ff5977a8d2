/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/fleet.c - the data path where real programs live (issue 34): one
 * thread driving many QPs, a DCI writing to many targets, two threads side
 * by side, instead of one QP whose state sits in L1.
 *
 *   rr64, rr1024   a 64-byte RDMA WRITE (one SGE, signaled, rung) posted
 *                  round-robin over 64 or 1,024 RC QPs, one CQ per 16 QPs;
 *                  then, as a row of its own, their CQs polled, 16 CQEs a
 *                  call (per CQE).
 *   dc1024         one DCI writing to 1,024 DC targets, each post to the
 *                  next target, with its own address vector (rdmafast: a
 *                  struct rf_dc_dest each; libmlx5: an ibv_ah each, given
 *                  to mlx5dv_wr_set_dc_addr()). 64 posts a round, so that
 *                  a round fits the DCI's queue; round r takes targets
 *                  64r..64r+63 (mod 1,024).
 *   2threads       two threads, each with 16 QPs and a CQ of its own, each
 *                  posting one write to each of its QPs then polling the
 *                  16 CQEs, on two CPUs at once, against one thread alone:
 *                  a line written by both would make the pair slower. Each
 *                  thread opens the device itself: libmlx5 hands the QPs of
 *                  one context its few BlueFlame registers in turn (12 on
 *                  the emulated HCA: QPs 12 apart share one), and on the
 *                  emulated HCA, where the register is ordinary memory, two
 *                  threads ringing one would share its line, which a real
 *                  device's write-combining register does not.
 *
 * Cold caches. Before every round of the rr and dc rows (never inside
 * one) the harness writes one byte in each 64-byte line of a buffer of
 * bench_fleet_evict bytes, by default twice the L2 (sysconf, at least 4
 * MiB): what a program's own work between two rounds does to L1 and L2.
 * Everything a post or a poll touches then comes from L3 or memory (L3
 * here is shared by the host's other guests; --evict-mb sets the size,
 * e.g. beyond the L3). The 2threads row runs warm.
 *
 * Counted, as the other rows: instructions under callgrind, collection on
 * only around the measured calls, less an empty loop's; with callgrind's
 * cache simulation on (--cache-sim=yes; make bench sets D1 and LL to the
 * L1d and L2 of the Xeon the figures were taken on), the data cache lines
 * each post or CQE misses in the simulated D1 after the eviction: the
 * lines it touches that its round did not bring in already.
 *
 * The device's part is the harness's, as in cqe.c, never measured.
 * UCX is left out: these rows would need an endpoint per QP and the
 * harness's view of each of their queues.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include "bench.h"
#include "bring_up.h"

#define NOINLINE __attribute__((noinline))

enum {
	FLEET_PER_CQ   = 16,	/* QPs per CQ, CQEs per poll call */
	FLEET_MAX      = 1024,
	FLEET_SQ_WRS   = 64,
	FLEET_CQ_DEPTH = 64,	/* 16 CQEs a round, polled each round */
	DC_TARGETS     = 1024,
	DC_ROUND       = 64,	/* DCI posts a round: half its queue */
	ROUND_ITEMS    = 1024,	/* posts or CQEs timed per repetition, at least */
	THREAD_ROUNDS  = 4096,
};

enum fleet_row {
	ROW_RR64_POST, ROW_RR64_POLL, ROW_RR1024_POST, ROW_RR1024_POLL,
	ROW_DC1024_POST, ROW_2THREADS, ROW_COUNT
};

static const char *const row_name[ROW_COUNT] = {
	"rr64_write_sge64", "rr64_poll_16", "rr1024_write_sge64", "rr1024_poll_16",
	"dc1024_write_sge64", "2threads_write_poll",
};

/* The columns of these rows (MLX5_SINGLE_THREADED adds nothing here). */
static const int in_fleet[IMPL_COUNT] = {
	[IMPL_RDMAFAST] = 1, [IMPL_LIBMLX5] = 1, [IMPL_LIBMLX5_WR] = 1,
};

size_t bench_fleet_evict;

struct fleet_cq {
	struct ibv_cq *cq;		/* ibv_cq_ex_to_cq(cqx) for IMPL_LIBMLX5_WR */
	struct ibv_cq_ex *cqx;
	struct mlx5dv_cq dv;
	uint32_t pi, ci;		/* CQEs written, polled */
	struct rf_cq rf;		/* IMPL_RDMAFAST */
	/* the CQ's own records: two threads' polls write no common line */
	struct ibv_wc wc[FLEET_PER_CQ];
	struct rf_wc rwc[FLEET_PER_CQ];
} __attribute__((aligned(64)));

/*
 * One QP and what the harness keeps for it. Line-aligned, as a program
 * keeping one connection per element would: the 2threads row's halves
 * then share no line of the array. rdmafast's rf_qp first, on the line,
 * as struct rf_qp asks (a post's fields of it in two lines).
 */
struct fleet_qp {
	struct rf_qp rf;		/* IMPL_RDMAFAST */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;		/* IMPL_LIBMLX5_WR */
	struct fleet_cq *cq;
	struct mlx5dv_qp dv;
	uint32_t uidx, posted, done;	/* WQEs posted, completed */
	struct ibv_sge sge;		/* IMPL_LIBMLX5: the request, built once */
	struct ibv_send_wr wr;
} __attribute__((aligned(64)));

struct fleet {
	enum bench_impl impl;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint64_t raddr;
	uint32_t lkey, rkey;
	unsigned nqp, ncq;
	struct fleet_qp *qp;
	struct fleet_cq *cq;
};

/* The DC targets of one implementation's DCI. */
struct dc_targets {
	struct ibv_ah *ah[DC_TARGETS];
	struct rf_dc_dest *dest;	/* [DC_TARGETS], line-aligned */
	unsigned next;
};

struct fleet_result {
	double ns, ns_min, ns_max;	/* per post, CQE, or post and its CQE */
	double instr, lines;		/* < 0: not measured */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- the eviction between rounds ----------------------------------------- */

static void evict(void)
{
	static volatile uint8_t *buf;
	size_t i;

	if (!bench_fleet_evict) {
		long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

		bench_fleet_evict = l2 > (2 << 20) ? 2 * (size_t)l2 : 4 << 20;
	}
	if (!buf) {
		buf = aligned_alloc(4096, bench_fleet_evict);
		if (!buf) {
			perror("rfbench: the eviction buffer");
			exit(1);
		}
	}
	for (i = 0; i < bench_fleet_evict; i += 64)
		buf[i]++;
}

/* ---- setup --------------------------------------------------------------- */

static int fleet_cq_open(struct fleet *f, struct fleet_cq *c)
{
	struct mlx5dv_obj obj;

	c->cq = bench_cq_create(f->ctx, f->impl, FLEET_CQ_DEPTH, &c->cqx);
	if (!c->cq)
		return -errno;
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = c->cq;
	obj.cq.out = &c->dv;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ))
		return -EPROTONOSUPPORT;
	return f->impl == IMPL_RDMAFAST ? rf_cq_init_ibv(&c->rf, c->cq) : 0;
}

/* An RC QP on CQ c at RTS, connected to itself, as bench_qp_open()'s. */
static int fleet_qp_open(struct fleet *f, struct fleet_qp *q, struct fleet_cq *c,
			 uint16_t lid, const union ibv_gid *gid)
{
	struct ibv_qp_init_attr_ex qa;
	struct mlx5dv_obj obj;
	int ret;

	bench_rc_attr(&qa, f->pd, c->cq, FLEET_SQ_WRS);
	q->qp = ibv_create_qp_ex(f->ctx, &qa);
	if (!q->qp)
		return -errno;
	q->cq = c;
	/* libmlx5 hands out user indexes from 0, in creation order, per context */
	q->uidx = (uint32_t)(q - f->qp);
	if (f->impl == IMPL_LIBMLX5_WR)
		q->qpx = ibv_qp_to_qp_ex(q->qp);
	ret = bench_rc_bring_up(q->qp, &qa.cap, q->qp->qp_num, lid, gid, 1);
	if (ret)
		return ret;
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = q->qp;
	obj.qp.out = &q->dv;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP))
		return -EPROTONOSUPPORT;
	q->sge.addr = (uintptr_t)f->buf;
	q->sge.length = 64;
	q->sge.lkey = f->lkey;
	q->wr.wr_id = 1;
	q->wr.sg_list = &q->sge;
	q->wr.num_sge = 1;
	q->wr.opcode = IBV_WR_RDMA_WRITE;
	q->wr.send_flags = IBV_SEND_SIGNALED;
	q->wr.wr.rdma.remote_addr = f->raddr;
	q->wr.wr.rdma.rkey = f->rkey;
	if (f->impl != IMPL_RDMAFAST)
		return 0;
	ret = rf_qp_init_ibv(&q->rf, q->qp, &qa.cap, 0);
	return ret ? ret : rf_cq_attach(&c->rf, q->qp->qp_num, &q->rf.sq, NULL, NULL);
}

static void fleet_close(struct fleet *f)
{
	unsigned i;

	for (i = 0; f->qp && i < f->nqp; i++) {
		if (f->impl == IMPL_RDMAFAST && f->qp[i].rf.ibqp)
			rf_qp_fini_ibv(&f->qp[i].rf);
		if (f->qp[i].qp)
			ibv_destroy_qp(f->qp[i].qp);
	}
	for (i = 0; f->cq && i < f->ncq; i++)
		if (f->cq[i].cq)
			ibv_destroy_cq(f->cq[i].cq);
	bench_mem_close(f->ctx, f->pd, f->buf, f->mr);
	free(f->qp);
	free(f->cq);
	memset(f, 0, sizeof(*f));
}

/* nqp QPs on a context of their own, one CQ per FLEET_PER_CQ of them. */
static int fleet_open(struct fleet *f, enum bench_impl impl, const char *dev, unsigned nqp)
{
	struct ibv_port_attr port;
	union ibv_gid gid;
	unsigned i;
	int roce, ret;

	memset(f, 0, sizeof(*f));
	f->impl = impl;
	f->ctx = bench_open_dev(dev);
	if (!f->ctx)
		return -ENODEV;
	ret = bench_mem_open(f->ctx, &f->pd, &f->buf, &f->mr);
	if (ret)
		return ret;
	f->qp = aligned_alloc(64, nqp * sizeof(*f->qp));
	f->ncq = (nqp + FLEET_PER_CQ - 1) / FLEET_PER_CQ;
	f->cq = aligned_alloc(64, f->ncq * sizeof(*f->cq));
	if (!f->qp || !f->cq)
		return -ENOMEM;
	memset(f->qp, 0, nqp * sizeof(*f->qp));
	memset(f->cq, 0, f->ncq * sizeof(*f->cq));
	f->lkey = f->mr->lkey;
	f->rkey = f->mr->rkey;
	f->raddr = (uintptr_t)f->buf + BENCH_BUF / 2;
	if (ibv_query_port(f->ctx, 1, &port))
		return -EINVAL;
	roce = port.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (roce && ibv_query_gid(f->ctx, 1, 0, &gid))
		return -EINVAL;
	for (i = 0; i < f->ncq; i++) {
		ret = fleet_cq_open(f, &f->cq[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nqp; i++, f->nqp++) {
		ret = fleet_qp_open(f, &f->qp[i], &f->cq[i / FLEET_PER_CQ],
				    roce ? 0 : port.lid, roce ? &gid : NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/* Targets for the DCI b: an AH each (another DLID), rdmafast's AV from it. */
static int dc_targets_open(struct dc_targets *t, struct bench_qp *b)
{
	struct ibv_ah_attr aa;
	struct rf_wqe_av av;
	unsigned i;
	uint16_t lid;
	int ret;

	memset(t, 0, sizeof(*t));
	t->dest = aligned_alloc(64, DC_TARGETS * sizeof(*t->dest));
	if (!t->dest)
		return -ENOMEM;
	if (bench_ah_attr(b->ctx, &aa))
		return -EINVAL;
	lid = aa.dlid;
	for (i = 0; i < DC_TARGETS; i++) {
		/* on RoCE the targets differ by flow label, on IB by DLID */
		aa.dlid = (uint16_t)(lid + i);
		aa.grh.flow_label = i;
		t->ah[i] = ibv_create_ah(b->pd, &aa);
		if (!t->ah[i])
			return -errno;
		if (b->impl != IMPL_RDMAFAST)
			continue;
		ret = rf_ah_av_ibv(t->ah[i], &av);
		if (ret)
			return ret;
		rf_dc_dest_init(&t->dest[i], &av, b->dctn + i, b->dc_key + i);
	}
	return 0;
}

static void dc_targets_close(struct dc_targets *t)
{
	unsigned i;

	for (i = 0; i < DC_TARGETS; i++)
		if (t->ah[i])
			ibv_destroy_ah(t->ah[i]);
	free(t->dest);
}

/* ---- the measured operations -------------------------------------------- */

/* One signaled 64-byte write to each of n QPs from q: what the rr rows time. */
static NOINLINE void rf_rr_post(struct fleet *f, struct fleet_qp *q, unsigned n)
{
	uint32_t lkey = f->lkey, rkey = f->rkey;
	uint64_t laddr = (uintptr_t)f->buf, raddr = f->raddr;
	struct fleet_qp *end = q + n;

	for (; q < end; q++)
		rf_sq_post_write(&q->rf.sq, lkey, laddr, 64, rkey, raddr,
				 RF_SEND_SIGNALED | RF_SEND_RING, 1);
}

static NOINLINE void ib_rr_post(struct fleet *f, struct fleet_qp *q, unsigned n)
{
	struct fleet_qp *end = q + n;
	struct ibv_send_wr *bad;

	(void)f;
	for (; q < end; q++)
		ibv_post_send(q->qp, &q->wr, &bad);
}

static NOINLINE void wr_rr_post(struct fleet *f, struct fleet_qp *q, unsigned n)
{
	uint32_t lkey = f->lkey, rkey = f->rkey;
	uint64_t laddr = (uintptr_t)f->buf, raddr = f->raddr;
	struct fleet_qp *end = q + n;

	for (; q < end; q++) {
		struct ibv_qp_ex *x = q->qpx;

		ibv_wr_start(x);
		x->wr_id = 1;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, rkey, raddr);
		ibv_wr_set_sge(x, lkey, laddr, 64);
		ibv_wr_complete(x);
	}
}

/* One poll of up to 16 CQEs on each of n CQs from c; the CQEs polled. */
static NOINLINE unsigned rf_rr_poll(struct fleet_cq *c, unsigned n)
{
	struct fleet_cq *end = c + n;
	unsigned got = 0;

	for (; c < end; c++)
		got += (unsigned)rf_cq_poll(&c->rf, c->rwc, FLEET_PER_CQ);
	return got;
}

static NOINLINE unsigned ib_rr_poll(struct fleet_cq *c, unsigned n)
{
	struct fleet_cq *end = c + n;
	unsigned got = 0;

	for (; c < end; c++)
		got += (unsigned)ibv_poll_cq(c->cq, FLEET_PER_CQ, c->wc);
	return got;
}

/* The fields the other pollers' records hold, as ops.c's wr_poll16(). */
static NOINLINE unsigned wr_rr_poll(struct fleet_cq *c, unsigned n)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct fleet_cq *end = c + n;
	unsigned got = 0;

	for (; c < end; c++) {
		struct ibv_cq_ex *x = c->cqx;
		struct ibv_wc *wc = c->wc;

		if (ibv_start_poll(x, &attr))
			continue;
		do {
			wc->wr_id = x->wr_id;
			wc->status = x->status;
			wc->opcode = ibv_wc_read_opcode(x);
			wc->byte_len = ibv_wc_read_byte_len(x);
			wc->qp_num = ibv_wc_read_qp_num(x);
			got++;
		} while (++wc < c->wc + FLEET_PER_CQ && ibv_next_poll(x) == 0);
		ibv_end_poll(x);
	}
	return got;
}

/* The DCI's posts to n targets from t->next. */
static NOINLINE void rf_dc_post(struct bench_qp *b, struct dc_targets *t, unsigned n)
{
	struct rf_sq *sq = &b->rfqp.sq;
	uint32_t lkey = b->mr->lkey, rkey = b->rkey;
	uint64_t laddr = (uintptr_t)b->buf, raddr = b->raddr;
	const struct rf_dc_dest *d = t->dest + t->next, *end = d + n;

	for (; d < end; d++)
		rf_sq_post_dc_write(sq, d, lkey, laddr, 64, rkey, raddr,
				    RF_SEND_SIGNALED | RF_SEND_RING, 5);
}

static NOINLINE void wr_dc_post(struct bench_qp *b, struct dc_targets *t, unsigned n)
{
	struct ibv_qp_ex *q = b->qpx;
	uint32_t lkey = b->mr->lkey, rkey = b->rkey, dctn = b->dctn + t->next;
	uint64_t laddr = (uintptr_t)b->buf, raddr = b->raddr, key = b->dc_key + t->next;
	struct ibv_ah **ah = t->ah + t->next, **end = ah + n;

	for (; ah < end; ah++) {
		ibv_wr_start(q);
		q->wr_id = 5;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, rkey, raddr);
		mlx5dv_wr_set_dc_addr(b->dvqpx, *ah, dctn++, key++);
		ibv_wr_set_sge(q, lkey, laddr, 64);
		ibv_wr_complete(q);
	}
}

/* The loop alone, for the harness's cost per item. */
static NOINLINE void empty_loop(struct fleet_qp *q, unsigned n)
{
	struct fleet_qp *end = q + n;

	for (; q < end; q++)
		__asm__ __volatile__("" : : "r"(q) : "memory");
}

/* ---- the device's part and the rounds ------------------------------------ */

static void post_n(struct fleet *f, struct fleet_qp *q, unsigned n)
{
	if (f->impl == IMPL_RDMAFAST)
		rf_rr_post(f, q, n);
	else if (f->impl == IMPL_LIBMLX5)
		ib_rr_post(f, q, n);
	else
		wr_rr_post(f, q, n);
}

static unsigned poll_n(struct fleet *f, struct fleet_cq *c, unsigned n)
{
	if (f->impl == IMPL_RDMAFAST)
		return rf_rr_poll(c, n);
	return f->impl == IMPL_LIBMLX5 ? ib_rr_poll(c, n) : wr_rr_poll(c, n);
}

/* A CQE for the WQE each of n QPs from q posted last. */
static void complete_n(struct fleet *f, struct fleet_qp *q, unsigned n)
{
	struct fleet_qp *end = q + n;

	for (; q < end; q++) {
		bench_req_cqe(f->impl, &q->cq->dv, &q->cq->pi, &q->dv, q->qp->qp_num,
			      q->uidx, q->posted);
		q->done = ++q->posted;
	}
}

/* Poll n CQs from c: each had 16 CQEs written, all successful. */
static void check_polled(struct fleet *f, struct fleet_cq *c, unsigned n, unsigned got)
{
	unsigned want = 0, i;
	int ok;

	for (i = 0; i < n; i++) {
		want += c[i].pi - c[i].ci;
		c[i].ci = c[i].pi;
	}
	if (f->impl == IMPL_RDMAFAST)
		ok = c[n - 1].rwc[0].status == RF_WC_SUCCESS;
	else
		ok = c[n - 1].wc[0].status == IBV_WC_SUCCESS;
	if (got != want || !ok) {
		fprintf(stderr, "rfbench: %s: polled %u of %u CQEs, or failed\n",
			bench_impl_name[f->impl], got, want);
		exit(2);
	}
}

/*
 * `rounds` rounds of a row on fleet f (rr rows) or the DCI b (dc row), the
 * caches made cold before each; the nanoseconds in the measured calls.
 * With collect, callgrind counts only those calls.
 */
static uint64_t run_rounds(enum fleet_row row, struct fleet *f, struct bench_qp *b,
			   struct dc_targets *t, unsigned rounds, int collect)
{
	uint64_t total = 0, t0;
	unsigned r, got = 0;

	for (r = 0; r < rounds; r++) {
		int poll = row == ROW_RR64_POLL || row == ROW_RR1024_POLL;

		if (poll) {
			post_n(f, f->qp, f->nqp);	/* untimed */
			complete_n(f, f->qp, f->nqp);
		}
		evict();
		t0 = now_ns();
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		if (row == ROW_DC1024_POST) {
			if (b->impl == IMPL_RDMAFAST)
				rf_dc_post(b, t, DC_ROUND);
			else
				wr_dc_post(b, t, DC_ROUND);
		} else if (poll) {
			got = poll_n(f, f->cq, f->ncq);
		} else {
			post_n(f, f->qp, f->nqp);
		}
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		total += now_ns() - t0;
		if (row == ROW_DC1024_POST) {
			t->next = (t->next + DC_ROUND) % DC_TARGETS;
			b->sq_posted += DC_ROUND;
			bench_complete_posted(b, 1);
		} else if (poll) {
			check_polled(f, f->cq, f->ncq, got);
		} else {
			complete_n(f, f->qp, f->nqp);
			check_polled(f, f->cq, f->ncq, poll_n(f, f->cq, f->ncq));
		}
	}
	return total;
}

/* ---- two threads ---------------------------------------------------------- */

struct half {
	struct fleet *f;	/* its 16 QPs and their CQ */
	int cpu;		/* pinned there, or -1 */
	pthread_barrier_t *go;
	int collect;
	uint64_t ns;
};

/* One thread's rounds: a write to each of its QPs, then its CQ polled. */
static void *half_run(void *arg)
{
	struct half *h = arg;
	struct fleet *f = h->f;
	struct fleet_qp *q = f->qp;
	struct fleet_cq *c = f->cq;
	unsigned r, rounds = h->collect ? THREAD_ROUNDS / 64 : THREAD_ROUNDS, got;
	uint64_t t0, ns = 0;	/* h->ns once, at the end: no line of h[] shared */

	if (h->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	if (h->go)
		pthread_barrier_wait(h->go);
	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		if (h->collect)
			CALLGRIND_TOGGLE_COLLECT;
		post_n(f, q, FLEET_PER_CQ);
		if (h->collect)
			CALLGRIND_TOGGLE_COLLECT;
		ns += now_ns() - t0;
		complete_n(f, q, FLEET_PER_CQ);
		t0 = now_ns();
		if (h->collect)
			CALLGRIND_TOGGLE_COLLECT;
		got = poll_n(f, c, 1);
		if (h->collect)
			CALLGRIND_TOGGLE_COLLECT;
		ns += now_ns() - t0;
		check_polled(f, c, 1, got);
	}
	h->ns = ns;
	return NULL;
}

/* ns per write and its CQE of one thread: alone, or of two at once (the slower). */
static double threads_run(struct fleet *f[2], int two)
{
	struct half h[2];
	pthread_t th[2];
	pthread_barrier_t go;
	int i, n = two ? 2 : 1, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	double worst = 0;

	pthread_barrier_init(&go, NULL, (unsigned)n);
	for (i = 0; i < n; i++) {
		h[i] = (struct half){ .f = f[i], .cpu = ncpu >= 2 ? i : -1, .go = &go };
		if (pthread_create(&th[i], NULL, half_run, &h[i])) {
			perror("rfbench: pthread_create");
			exit(1);
		}
	}
	for (i = 0; i < n; i++) {
		double ns;

		pthread_join(th[i], NULL);
		ns = (double)h[i].ns / (THREAD_ROUNDS * FLEET_PER_CQ);
		if (ns > worst)
			worst = ns;
	}
	pthread_barrier_destroy(&go);
	return worst;
}

/* ---- the rows -------------------------------------------------------------- */

static unsigned row_qps(enum fleet_row row)
{
	switch (row) {
	case ROW_RR64_POST: case ROW_RR64_POLL:		return 64;
	case ROW_RR1024_POST: case ROW_RR1024_POLL:	return 1024;
	case ROW_2THREADS:				return FLEET_PER_CQ;	/* each */
	default:					return 0;
	}
}

/* Items (posts or CQEs) one round covers, and rounds per repetition. */
static unsigned row_items(enum fleet_row row)
{
	return row == ROW_DC1024_POST ? DC_ROUND : row_qps(row);
}

static unsigned row_rounds(enum fleet_row row)
{
	unsigned n = row_items(row);

	return n >= ROUND_ITEMS ? 1 : ROUND_ITEMS / n;
}

/* What one loop iteration covers: a post, or a poll of 16 CQEs. */
static unsigned row_per_iter(enum fleet_row row)
{
	return row == ROW_RR64_POLL || row == ROW_RR1024_POLL ? FLEET_PER_CQ : 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Each row's fleet or DCI, for one implementation at a time; an rr post
 * row leaves its fleet open for the poll row after it.
 */
struct row_env {
	struct fleet f, f2;	/* f2: the 2threads row's second thread */
	struct dc_targets t;
	struct bench_qp *b;
};

static int row_open(struct row_env *e, enum fleet_row row, enum bench_impl impl,
		    struct bench_qp dci[IMPL_COUNT], const char *dev)
{
	int ret;

	if (e->f.ctx && e->f.impl == impl && e->f.nqp == row_qps(row))
		return 0;	/* the post row's */
	if (e->f.ctx)
		fleet_close(&e->f);
	memset(e, 0, sizeof(*e));
	if (row == ROW_DC1024_POST) {
		e->b = &dci[impl];
		ret = dc_targets_open(&e->t, e->b);
	} else {
		ret = fleet_open(&e->f, impl, dev, row_qps(row));
		if (!ret && row == ROW_2THREADS)
			ret = fleet_open(&e->f2, impl, dev, row_qps(row));
	}
	if (ret)
		fprintf(stderr, "rfbench: %s: %s: setup failed: %s\n", row_name[row],
			bench_impl_name[impl], strerror(-ret));
	return ret;
}

static void row_close(struct row_env *e, enum fleet_row row)
{
	if (row == ROW_DC1024_POST)
		dc_targets_close(&e->t);
	else if (row != ROW_RR64_POST && row != ROW_RR1024_POST)
		fleet_close(&e->f);
	if (e->f2.ctx)
		fleet_close(&e->f2);
}

void bench_fleet_instr(struct bench_qp dci[IMPL_COUNT], const int avail[IMPL_COUNT],
		       const char *dev)
{
	static struct fleet_qp none[FLEET_MAX];
	struct row_env e;
	unsigned row, impl;
	char name[128];

	memset(&e, 0, sizeof(e));
	for (impl = 0; impl < IMPL_COUNT; impl++)
		for (row = 0; row < ROW_COUNT; row++) {
			if (!in_fleet[impl] || !avail[impl] ||
			    row_open(&e, (enum fleet_row)row, (enum bench_impl)impl, dci, dev))
				continue;
			CALLGRIND_ZERO_STATS;
			if (row == ROW_2THREADS) {
				/* one after the other: the counts, not the sharing */
				struct half h[2] = {
					{ .f = &e.f, .cpu = -1, .collect = 1 },
					{ .f = &e.f2, .cpu = -1, .collect = 1 },
				};

				half_run(&h[0]);
				half_run(&h[1]);
			} else {
				run_rounds((enum fleet_row)row, &e.f, e.b, &e.t,
					   row_rounds((enum fleet_row)row), 1);
			}
			snprintf(name, sizeof(name), "fleet/%s/%s", row_name[row],
				 bench_impl_name[impl]);
			CALLGRIND_DUMP_STATS_AT(name);
			row_close(&e, (enum fleet_row)row);
		}
	/* the loop's own cost per iteration, cold as the rounds */
	evict();
	CALLGRIND_ZERO_STATS;
	CALLGRIND_TOGGLE_COLLECT;
	empty_loop(none, FLEET_MAX);
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS_AT("fleet/empty");
}

/* Instructions and D1 misses per item from the dumps. */
static void read_counts(const char *cg, enum fleet_row row, enum bench_impl impl,
			struct fleet_result *o)
{
	static const char *const ir[] = { "Ir", NULL };
	static const char *const d1[] = { "D1mr", "D1mw", NULL };
	double items = (double)row_items(row) * row_rounds(row), per_iter = row_per_iter(row);
	double t, empty = bench_cg_events(cg, "fleet/empty", ir) / FLEET_MAX;
	char name[128];

	o->instr = o->lines = -1;
	if (row == ROW_2THREADS) {
		/* both threads' rounds, collected: a post and a poll per item */
		items = 2.0 * (THREAD_ROUNDS / 64) * FLEET_PER_CQ;
		per_iter = 16.0 / 17;	/* 16 posts and one poll call per 16 items */
	}
	snprintf(name, sizeof(name), "fleet/%s/%s", row_name[row], bench_impl_name[impl]);
	t = bench_cg_events(cg, name, ir);
	if (t >= 0 && empty >= 0)
		o->instr = t / items - empty / per_iter;
	t = bench_cg_events(cg, name, d1);
	if (t >= 0)
		o->lines = t / items;
}

/* v with prec decimals, or "-" when negative (not measured). */
static void fmt(char *s, size_t n, double v, int prec)
{
	if (v < 0)
		snprintf(s, n, "-");
	else
		snprintf(s, n, "%.*f", prec, v);
}

static void report_table(struct fleet_result r[ROW_COUNT][IMPL_COUNT])
{
	unsigned row, impl;

	printf("\n%-20s %-11s %9s %9s %17s %9s %9s %9s\n", "cold, many QPs", "impl",
	       "instr/op", "ns/op", "ns min..max", "lines/op", "instr ×", "ns ×");
	for (row = 0; row < ROW_COUNT; row++) {
		const struct fleet_result *base = &r[row][IMPL_LIBMLX5];

		for (impl = 0; impl < IMPL_COUNT; impl++) {
			const struct fleet_result *o = &r[row][impl];
			char in[32], li[32], ix[32], nx[32], range[40];

			if (!in_fleet[impl])
				continue;
			if (o->ns < 0) {
				printf("%-20s %-11s %9s\n", impl ? "" : row_name[row],
				       bench_impl_name[impl], "-");
				continue;
			}
			fmt(in, sizeof(in), o->instr, 1);
			fmt(li, sizeof(li), o->lines, 2);
			fmt(ix, sizeof(ix), o->instr > 0 && base->instr > 0 ?
			    o->instr / base->instr : -1, 2);
			fmt(nx, sizeof(nx), base->ns > 0 ? o->ns / base->ns : -1, 2);
			snprintf(range, sizeof(range), "%.1f..%.1f", o->ns_min, o->ns_max);
			printf("%-20s %-11s %9s %9.1f %17s %9s %9s %9s\n",
			       impl ? "" : row_name[row], bench_impl_name[impl], in, o->ns,
			       range, li, ix, nx);
		}
	}
	printf("(per post; poll rows per CQE; 2threads per write and its CQE, the slower of\n"
	       " two threads at once, warm; lines/op: D1 misses in callgrind's simulated\n"
	       " caches after the eviction (%zu KiB written between rounds); ucx_rc_mlx5: not\n"
	       " driven over many endpoints, \"-\")\n", bench_fleet_evict >> 10);
}

static int goal(const char *what, double value, double limit)
{
	int met = value >= 0 && value <= limit;

	printf("  %-58s %8.2f <= %8.2f  %s\n", what, value, limit, met ? "met" : "MISSED");
	return met;
}

int bench_fleet_report(struct bench_qp dci[IMPL_COUNT], const int avail[IMPL_COUNT],
		       const char *dev, unsigned reps, const char *cg)
{
	static struct fleet_result res[ROW_COUNT][IMPL_COUNT];
	double samples[64], alone[IMPL_COUNT] = { 0 }, timer;
	struct row_env e;
	struct fleet *two[2] = { &e.f, &e.f2 };
	unsigned row, impl, r;
	char what[128];
	int all = 1;

	/* the clock read around each round, taken off as the empty op is */
	for (r = 0; r < reps && r < 64; r++) {
		uint64_t t0 = now_ns(), t1 = now_ns();

		samples[r] = (double)(t1 - t0);
	}
	qsort(samples, r, sizeof(double), cmp_double);
	timer = samples[r / 2];

	memset(&e, 0, sizeof(e));
	for (impl = 0; impl < IMPL_COUNT; impl++)
		for (row = 0; row < ROW_COUNT; row++) {
			struct fleet_result *o = &res[row][impl];
			double items = (double)row_items((enum fleet_row)row) *
				       row_rounds((enum fleet_row)row);

			o->ns = o->instr = o->lines = -1;
			if (!in_fleet[impl] || !avail[impl] ||
			    row_open(&e, (enum fleet_row)row, (enum bench_impl)impl, dci, dev))
				continue;
			for (r = 0; r < reps && r < 64; r++) {
				if (row == ROW_2THREADS) {
					samples[r] = threads_run(two, 1) - 2 * timer / FLEET_PER_CQ;
					continue;
				}
				samples[r] = ((double)run_rounds((enum fleet_row)row, &e.f, e.b,
								 &e.t, row_rounds((enum fleet_row)row), 0) -
					      timer * row_rounds((enum fleet_row)row)) / items;
			}
			qsort(samples, r, sizeof(double), cmp_double);
			o->ns = samples[r / 2];
			o->ns_min = samples[0];
			o->ns_max = samples[r - 1];
			if (row == ROW_2THREADS) {
				for (r = 0; r < reps && r < 64; r++)
					samples[r] = threads_run(two, 0) - 2 * timer / FLEET_PER_CQ;
				qsort(samples, r, sizeof(double), cmp_double);
				alone[impl] = samples[r / 2];
			}
			if (cg)
				read_counts(cg, (enum fleet_row)row, (enum bench_impl)impl, o);
			row_close(&e, (enum fleet_row)row);
		}
	report_table(res);

	printf("goals, cold and many (x86-64):\n");
	for (row = 0; row < ROW_COUNT; row++) {
		const struct fleet_result *rf = &res[row][IMPL_RDMAFAST];

		snprintf(what, sizeof(what), "%s: ns, 1/4 of libmlx5", row_name[row]);
		all &= goal(what, rf->ns, res[row][IMPL_LIBMLX5].ns / 4);
		snprintf(what, sizeof(what), "%s: ns, 1/4 of libmlx5 ibv_wr", row_name[row]);
		all &= goal(what, rf->ns, res[row][IMPL_LIBMLX5_WR].ns / 4);
		if (rf->lines >= 0 && res[row][IMPL_LIBMLX5].lines >= 0) {
			snprintf(what, sizeof(what), "%s: lines, fewer than libmlx5's",
				 row_name[row]);
			all &= goal(what, rf->lines, res[row][IMPL_LIBMLX5].lines - 0.01);
		}
	}
	/*
	 * Nothing shared: a line written by both threads would cost a
	 * transfer between the cores (tens of ns) per post, several times a
	 * post's whole time; half a post more is the noise of a shared host.
	 */
	snprintf(what, sizeof(what), "%s: rdmafast, ns of two at once / one alone",
		 row_name[ROW_2THREADS]);
	all &= goal(what, res[ROW_2THREADS][IMPL_RDMAFAST].ns / alone[IMPL_RDMAFAST], 1.5);
	printf("  (one thread alone: rdmafast %.1f ns, libmlx5 %.1f ns, libmlx5_wr %.1f ns)\n",
	       alone[IMPL_RDMAFAST], alone[IMPL_LIBMLX5], alone[IMPL_LIBMLX5_WR]);
	printf("goals, cold and many: %s\n", all ? "all met" : "some missed");
	return all;
}
