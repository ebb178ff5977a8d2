/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stress.c - many QPs, several threads, every byte checked, on the
 * emulated HCA (or a ConnectX), through rdmafast's data path only.
 *
 * Each thread is the single producer of its own queues: its own device
 * context (rdmafast takes no lock; a context gives it its own BlueFlame
 * register), a sending QP and a receiving QP of one transport (RC, UC, UD
 * or XRC, in turn over the threads) connected on the same port, and a send
 * and a receive CQ. It posts SENDs of 1..max bytes whose payload is a
 * function of (thread, sequence number) as fast as the send queue takes
 * them, so the queue runs full (each -ENOSPC is counted), keeps the
 * receive queue (or XRC SRQ) full, and checks every receive: length,
 * every byte, and the sequence number. RC and XRC must deliver each
 * message exactly once and in order; UC and UD may lose messages only when
 * the wire loses packets, and what they deliver must be intact and in
 * order. Any error completion, corruption, duplicate, reordering or (RC,
 * XRC) loss fails the run.
 *
 *   stress [-n OPS] [-t THREADS] [-s MAX] [-k rc,uc,ud,xrc] [-T SECONDS]
 *
 * OPS messages in all (default 10^6), split over THREADS (8). With
 * RFEMU_DROP / RFEMU_CORRUPT set (emu/README.md) the RC and XRC queues
 * recover by retransmission; run with -k rc,xrc there.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmafast/rdmafast.h>
#include <rdmafast/verbs.h>

enum { K_RC, K_UC, K_UD, K_XRC, NKIND };
static const char *const kind_name[NKIND] = { "rc", "uc", "ud", "xrc" };

#define GRH      40u		/* UD receives start with the GRH area */
#define NRECV    256u		/* receive WQEs per receiving queue */
#define SQ_WR    64u
#define QKEY     0x11111111u

static struct {
	uint64_t ops;
	unsigned threads;
	uint32_t max;
	unsigned kinds;		/* bit per kind */
	unsigned seconds;
	struct ibv_device *dev;
} opt = { 1000000, 8, 256, 0xf, 300, NULL };

static atomic_bool failed;

struct result {
	uint64_t sent, received, lost, bytes, sq_full;
};

static struct result total[NKIND];
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(t, ...) do { \
	fprintf(stderr, "stress: %s thread %u: ", kind_name[(t)->kind], (t)->id); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	atomic_store(&failed, true); goto out; } while (0)

struct thr {
	unsigned id, kind;
	uint64_t nops;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *mem;			/* send slots, then receive slots */
	struct ibv_cq *ib_scq, *ib_rcq;
	struct rf_cq scq, rcq;
	struct rf_qp sqp, rqp;		/* rqp unused for XRC */
	struct ibv_xrcd *xrcd;
	struct ibv_srq *ib_srq;
	struct ibv_qp *xrc_recv;
	struct rf_srq srq;
	struct ibv_ah *ah;
	struct rf_wqe_av av;
	uint32_t remote_qpn, srqn;
	uint16_t lid;
	uint32_t slot;			/* bytes per slot */
	uint32_t nsend;			/* send slots */
	struct result r;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The byte at offset i of message seq of thread id (offsets 0..7: seq). */
static uint8_t pattern(unsigned id, uint64_t seq, uint32_t i)
{
	uint64_t x = (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)id << 56) ^ (i * 0x100000001b3ull);

	return (uint8_t)(x >> 29);
}

static uint32_t msg_len(uint64_t seq)
{
	return 8 + (uint32_t)((seq * 2654435761u) % (opt.max - 7));
}

static uint8_t *send_slot(const struct thr *t, uint64_t seq)
{
	return t->mem + (size_t)(seq % t->nsend) * t->slot;
}

static uint8_t *recv_slot(const struct thr *t, uint32_t i)
{
	return t->mem + (size_t)(t->nsend + i) * t->slot;
}

static int post_recv(struct thr *t, uint32_t i)
{
	struct rf_sge sg = { (uintptr_t)recv_slot(t, i), t->slot, t->mr->lkey };

	return t->kind == K_XRC ? rf_srq_post(&t->srq, &sg, 1, i) :
				  rf_rq_post(&t->rqp.rq, &sg, 1, i);
}

static void ring_recv(struct thr *t)
{
	if (t->kind == K_XRC)
		rf_srq_ring(&t->srq);
	else
		rf_rq_ring(&t->rqp.rq);
}

static int make_qp(struct thr *t, struct rf_qp *qp, enum ibv_qp_type type, int recv)
{
	struct rf_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.pd = t->pd;
	a.send_cq = t->ib_scq;
	a.recv_cq = t->ib_rcq;
	a.qp_type = type;
	a.max_send_wr = SQ_WR;
	a.max_recv_wr = recv ? NRECV : 0;
	a.max_send_sge = 1;
	a.max_recv_sge = recv ? 1 : 0;
	a.max_inline_data = 0;
	return rf_qp_create_ibv(qp, &a);
}

/* The XRC receive side: a domain, an XRC SRQ and an XRC receive QP, by the glue. */
static int xrc_recv_side(struct thr *t)
{
	if (rf_xrcd_open_ibv(t->ctx, -1, O_CREAT, &t->xrcd) ||
	    rf_xrc_srq_create_ibv(t->ctx, t->pd, t->xrcd, t->ib_rcq, NRECV, 1,
				  &t->ib_srq, &t->srqn) ||
	    rf_srq_init_ibv(&t->srq, t->ib_srq))
		return -EIO;
	rf_cq_set_srq(&t->rcq, &t->srq);
	return rf_xrc_recv_qp_create_ibv(t->ctx, t->xrcd, &t->xrc_recv);
}

static int setup(struct thr *t)
{
	static const enum ibv_qp_type type[NKIND] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND };
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct ibv_port_attr pa;
	size_t len;

	t->ctx = ibv_open_device(opt.dev);
	if (!t->ctx || ibv_query_port(t->ctx, 1, &pa))
		return -1;
	t->lid = pa.lid;
	t->pd = ibv_alloc_pd(t->ctx);
	if (!t->pd ||
	    rf_cq_create_ibv(&t->scq, &t->ib_scq, t->ctx, 2 * SQ_WR, NULL, 64) ||
	    rf_cq_create_ibv(&t->rcq, &t->ib_rcq, t->ctx, 2 * NRECV, NULL, 64))
		return -1;
	if (make_qp(t, &t->sqp, type[t->kind], 0) ||
	    rf_cq_attach(&t->scq, t->sqp.qpn, &t->sqp.sq, NULL, NULL))
		return -1;
	/*
	 * A send slot must not be rewritten while its WQE is outstanding: at
	 * most one WQE per basic block is, and a post refused with -ENOSPC
	 * has already filled its slot, hence one slot more than BBs.
	 */
	t->nsend = t->sqp.sq.wqe_cnt + 1;
	t->slot = (opt.max + GRH + 63) & ~63u;
	len = (size_t)(t->nsend + NRECV) * t->slot;
	t->mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!t->mem)
		return -1;
	memset(t->mem, 0, len);
	t->mr = ibv_reg_mr(t->pd, t->mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!t->mr)
		return -1;
	memset(&ca, 0, sizeof(ca));
	ca.gid_index = -1;
	ca.qkey = QKEY;
	ca.timeout = 8;		/* ~1 ms: quick recovery on a lossy wire */
	memset(&peer, 0, sizeof(peer));
	peer.lid = t->lid;
	if (t->kind == K_XRC) {
		peer.qpn = t->sqp.qpn;
		if (xrc_recv_side(t) || rf_xrc_recv_connect_ibv(t->xrc_recv, &ca, &peer))
			return -1;
		t->remote_qpn = t->xrc_recv->qp_num;
		rf_sq_set_xrc_srqn(&t->sqp.sq, t->srqn);
	} else {
		if (make_qp(t, &t->rqp, type[t->kind], 1) ||
		    rf_cq_attach(&t->rcq, t->rqp.qpn, NULL, &t->rqp.rq, NULL))
			return -1;
		t->remote_qpn = t->rqp.qpn;
		peer.qpn = t->sqp.qpn;
		if (rf_qp_connect_ibv(&t->rqp, &ca, &peer))
			return -1;
	}
	peer.qpn = t->remote_qpn;
	if (rf_qp_connect_ibv(&t->sqp, &ca, &peer))
		return -1;
	if (t->kind == K_UD) {
		struct ibv_ah_attr aa = { .dlid = t->lid, .port_num = 1 };

		t->ah = ibv_create_ah(t->pd, &aa);
		if (!t->ah || rf_ah_av_ibv(t->ah, &t->av))
			return -1;
	}
	for (uint32_t i = 0; i < NRECV; i++)
		if (post_recv(t, i))
			return -1;
	ring_recv(t);
	return 0;
}

static int post_one(struct thr *t, uint64_t seq)
{
	uint32_t len = msg_len(seq), i;
	uint8_t *p = send_slot(t, seq);
	/* one CQE per 16 WQEs retires the 15 before it (sq.h) */
	uint32_t flags = (seq % 16 == 15) ? RF_SEND_SIGNALED : 0;

	memcpy(p, &seq, 8);
	for (i = 8; i < len; i++)
		p[i] = pattern(t->id, seq, i);
	if (t->kind == K_UD)
		return rf_sq_post_ud_send(&t->sqp.sq, &t->av, t->remote_qpn, QKEY, NULL,
					  t->mr->lkey, (uintptr_t)p, len, 0, 0, flags, seq);
	return rf_sq_post_send(&t->sqp.sq, t->mr->lkey, (uintptr_t)p, len, flags, seq);
}

static void *run(void *arg)
{
	struct thr *t = arg;
	uint64_t seq = 0, expect = 0, deadline;
	uint64_t idle_since = 0;
	int reliable = t->kind == K_RC || t->kind == K_XRC, nop = 0;
	struct rf_wc wc[32];

	if (setup(t))
		FAIL(t, "setup failed: %s", strerror(errno));
	deadline = now_ms() + 1000ull * opt.seconds;
	while (expect < t->nops && !atomic_load(&failed)) {
		int n, posted = 0;

		/*
		 * Send while the queue takes it and the receiver has room:
		 * the unreliable transports would otherwise drop for want of
		 * a receive, which is not what is measured here.
		 */
		while (seq < t->nops && seq - expect < NRECV - SQ_WR) {
			int rc = post_one(t, seq);

			if (rc == -ENOSPC) {
				t->r.sq_full++;
				break;
			}
			if (rc)
				FAIL(t, "post %llu: %d", (unsigned long long)seq, rc);
			seq++;
			posted++;
		}
		if (posted)
			rf_sq_ring(&t->sqp.sq);
		/* the last WQEs may be unsignaled: a signaled NOP retires them */
		if (seq == t->nops && !nop &&
		    rf_sq_post_nop(&t->sqp.sq, RF_SEND_SIGNALED | RF_SEND_RING, ~0ull) == 0)
			nop = 1;
		while ((n = rf_cq_poll(&t->scq, wc, 32)) > 0)
			for (int k = 0; k < n; k++)
				if (wc[k].status != RF_WC_SUCCESS)
					FAIL(t, "send completion status %u (vendor 0x%x)",
					     wc[k].status, wc[k].vendor_err);
		n = rf_cq_poll(&t->rcq, wc, 32);
		for (int k = 0; k < n; k++) {
			uint32_t slot = (uint32_t)wc[k].wr_id, len, off;
			const uint8_t *p = recv_slot(t, slot);
			uint64_t got;

			if (wc[k].status != RF_WC_SUCCESS)
				FAIL(t, "receive completion status %u", wc[k].status);
			off = t->kind == K_UD ? GRH : 0;
			len = wc[k].byte_len - off;
			memcpy(&got, p + off, 8);
			if (got < expect || got >= seq)
				FAIL(t, "message %llu received, expected %llu (sent %llu): %s",
				     (unsigned long long)got, (unsigned long long)expect,
				     (unsigned long long)seq, got < expect ? "duplicate or reordered" :
				     "never sent");
			if (got != expect && reliable)
				FAIL(t, "message %llu lost", (unsigned long long)expect);
			t->r.lost += got - expect;
			expect = got + 1;
			if (len != msg_len(got))
				FAIL(t, "message %llu: %u bytes, sent %u", (unsigned long long)got,
				     len, msg_len(got));
			for (uint32_t i = 8; i < len; i++)
				if (p[off + i] != pattern(t->id, got, i))
					FAIL(t, "message %llu byte %u corrupt", (unsigned long long)got, i);
			t->r.received++;
			t->r.bytes += len;
			if (post_recv(t, slot))
				FAIL(t, "receive repost");
		}
		if (n > 0) {
			ring_recv(t);
			idle_since = 0;
		} else if (!posted) {
			uint64_t ms = now_ms();

			if (ms > deadline)
				FAIL(t, "time out: %llu of %llu received",
				     (unsigned long long)expect, (unsigned long long)t->nops);
			/* an unreliable transport's last messages may be gone */
			if (!reliable && seq == t->nops) {
				if (!idle_since)
					idle_since = ms;
				else if (ms - idle_since > 2000) {
					t->r.lost += t->nops - expect;
					break;
				}
			}
			sched_yield();
		}
	}
	t->r.sent = seq;
out:
	pthread_mutex_lock(&total_lock);
	total[t->kind].sent += t->r.sent;
	total[t->kind].received += t->r.received;
	total[t->kind].lost += t->r.lost;
	total[t->kind].bytes += t->r.bytes;
	total[t->kind].sq_full += t->r.sq_full;
	pthread_mutex_unlock(&total_lock);
	return NULL;
}

static void teardown(struct thr *t)
{
	if (t->sqp.ibqp)
		rf_qp_destroy_ibv(&t->sqp);
	if (t->rqp.ibqp)
		rf_qp_destroy_ibv(&t->rqp);
	if (t->xrc_recv)
		ibv_destroy_qp(t->xrc_recv);
	if (t->ib_srq) {
		ibv_destroy_srq(t->ib_srq);
		rf_srq_fini_ibv(&t->srq);
	}
	if (t->xrcd)
		ibv_close_xrcd(t->xrcd);
	if (t->ah)
		ibv_destroy_ah(t->ah);
	if (t->ib_scq)
		ibv_destroy_cq(t->ib_scq);
	if (t->ib_rcq)
		ibv_destroy_cq(t->ib_rcq);
	if (t->mr)
		ibv_dereg_mr(t->mr);
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	if (t->ctx)
		ibv_close_device(t->ctx);
	free(t->mem);
}

static unsigned parse_kinds(const char *s)
{
	unsigned m = 0;

	for (unsigned k = 0; k < NKIND; k++)
		if (strstr(s, kind_name[k]))
			m |= 1u << k;
	return m;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct thr *t;
	pthread_t *tid;
	unsigned kinds[NKIND], nk = 0;
	uint64_t t0, ms, all = 0, lost = 0;
	int c;

	while ((c = getopt(argc, argv, "n:t:s:k:T:")) != -1) {
		switch (c) {
		case 'n': opt.ops = strtoull(optarg, NULL, 0); break;
		case 't': opt.threads = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': opt.max = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'k': opt.kinds = parse_kinds(optarg); break;
		case 'T': opt.seconds = (unsigned)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: stress [-n OPS] [-t THREADS] [-s MAX] "
				"[-k rc,uc,ud,xrc] [-T SECONDS]\n");
			return 2;
		}
	}
	if (opt.max < 16 || opt.max > 4096 - GRH || !opt.threads || !opt.kinds) {
		fprintf(stderr, "stress: bad arguments\n");
		return 2;
	}
	for (unsigned k = 0; k < NKIND; k++)
		if (opt.kinds & (1u << k))
			kinds[nk++] = k;
	list = ibv_get_device_list(NULL);
	if (!list || !list[0]) {
		fprintf(stderr, "stress: no RDMA device (run under build/rfemu)\n");
		return 1;
	}
	opt.dev = list[0];
	t = calloc(opt.threads, sizeof(*t));
	tid = calloc(opt.threads, sizeof(*tid));
	if (!t || !tid)
		return 1;
	t0 = now_ms();
	for (unsigned i = 0; i < opt.threads; i++) {
		t[i].id = i;
		t[i].kind = kinds[i % nk];
		t[i].nops = opt.ops / opt.threads + (i < opt.ops % opt.threads);
		if (pthread_create(&tid[i], NULL, run, &t[i]))
			return 1;
	}
	for (unsigned i = 0; i < opt.threads; i++)
		pthread_join(tid[i], NULL);
	ms = now_ms() - t0 + 1;
	for (unsigned i = 0; i < opt.threads; i++)
		teardown(&t[i]);
	ibv_free_device_list(list);

	printf("%-4s %10s %10s %8s %12s %8s\n", "", "sent", "received", "lost", "bytes", "sq full");
	for (unsigned k = 0; k < NKIND; k++) {
		if (!(opt.kinds & (1u << k)))
			continue;
		printf("%-4s %10llu %10llu %8llu %12llu %8llu\n", kind_name[k],
		       (unsigned long long)total[k].sent, (unsigned long long)total[k].received,
		       (unsigned long long)total[k].lost, (unsigned long long)total[k].bytes,
		       (unsigned long long)total[k].sq_full);
		all += total[k].received;
		lost += total[k].lost;
	}
	printf("stress: %llu messages verified in %.1f s (%.0f/s), %llu lost (UC/UD only), %u threads\n",
	       (unsigned long long)all, ms / 1000.0, all * 1000.0 / ms, (unsigned long long)lost,
	       opt.threads);
	free(t);
	free(tid);
	if (atomic_load(&failed))
		return 1;
	for (unsigned k = 0; k < NKIND; k++)
		if ((opt.kinds & (1u << k)) && !total[k].sq_full) {
			fprintf(stderr, "stress: %s never filled its send queue\n", kind_name[k]);
			return 1;
		}
	return 0;
}
