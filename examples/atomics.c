/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * atomics - a distributed counter: one 64-bit counter in the server's
 * memory, incremented at the same time by both processes with RDMA
 * atomics. The client goes through its QP to the server; the server goes
 * through a loopback QP pair to its own memory, so both increments arrive
 * at the device as network atomics and contend for real (CPU atomics and
 * HCA atomics on the same word are not atomic with each other).
 *
 *   phase 1  fetch-and-add: --iters increments each, 16 in flight. Every
 *            fetched value is a distinct ticket: together the two sides
 *            must have drawn exactly 0 .. 2*iters-1.
 *   phase 2  compare-and-swap: --iters increments each, as a retry loop
 *            (read, try old -> old+1, retry with what the CAS returned).
 *            Contention shows up as retries.
 *
 * Afterwards the counter must be exactly 4 * iters.
 *
 * Byte order: the counter is in host order in the server's memory (like
 * any variable); the fetched value comes back big-endian on devices whose
 * atomic_req_8B_endianness_mode is 0 and in host order on mode-1 devices.
 * The program finds out with a probe fetch of a known value first.
 *
 *   server:  atomics [-d dev] [-p port] [-g gid_idx]
 *   client:  atomics [options] 127.0.0.1      options: --iters N
 */
#include "cli.h"

#define EX_CHECK(expr, what)                                                     \
	do {                                                                     \
		int ex_ret_ = (expr);                                            \
		if (ex_ret_) {                                                   \
			fprintf(stderr, "%s: %s\n", what,                       \
				strerror(ex_ret_ < 0 ? -ex_ret_ : ex_ret_));     \
			return -1;                                               \
		}                                                                \
	} while (0)

enum { WINDOW = 16, RESULTS = 64 };	/* result slots at buf + RESULTS */

struct at {
	struct rf_ep x;
	struct rf_qp lq, lq2;	/* server only: loopback pair lq -> lq2 */
	struct rf_qp *qp;	/* the QP this side posts atomics on */
	uint64_t counter_addr, probe_addr;
	uint32_t rkey;
	int reply_be;
	long errors;
	uint64_t cas_retries;
};

/* Convert a fetched value (see the byte-order note above). */
static uint64_t fetched(const struct at *a, uint64_t raw)
{
	return a->reply_be ? rf_be64toh((__be64)raw) : raw;
}

static uint64_t *result_slot(struct at *a, long k)
{
	return (uint64_t *)(a->x.buf + RESULTS + 8 * (size_t)(k % WINDOW));
}

static uint64_t result_addr(struct at *a, long k)
{
	return (uint64_t)(uintptr_t)result_slot(a, k);
}

/* Wait for one completion (status checked); returns its wr_id or -1. */
static long wait_one(struct at *a)
{
	struct rf_wc wc;

	if (rf_ep_wait(&a->x, &wc, 0))
		return -1;
	if (wc.status != RF_WC_SUCCESS) {
		fprintf(stderr, "atomic failed: status %u vendor %#x\n", wc.status, wc.vendor_err);
		return -1;
	}
	return (long)wc.wr_id;
}

/* Server: a second RC QP pair looping back into our own memory. */
static int loopback_setup(struct at *a, const struct ex_opts *o)
{
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p1, p2;
	struct ibv_port_attr pa;

	memset(&qa, 0, sizeof(qa));
	qa.pd = a->x.pd;
	qa.send_cq = a->x.ibcq;
	qa.recv_cq = a->x.ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 64;
	qa.max_recv_wr = 1;
	EX_CHECK(rf_qp_create_ibv(&a->lq, &qa), "loopback QP");
	EX_CHECK(rf_qp_create_ibv(&a->lq2, &qa), "loopback QP");
	EX_CHECK(rf_cq_attach(&a->x.cq, a->lq.qpn, &a->lq.sq, &a->lq.rq, NULL), "attach");
	EX_CHECK(ibv_query_port(a->x.ctx, (uint8_t)o->ib_port, &pa), "ibv_query_port");
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ATOMIC;	/* lq's atomics on our own buffer */
	ca.port = (uint8_t)o->ib_port;
	ca.gid_index = o->gid_index;
	memset(&p1, 0, sizeof(p1));
	memset(&p2, 0, sizeof(p2));
	p1.qpn = a->lq.qpn;
	p1.lid = pa.lid;
	p2.qpn = a->lq2.qpn;
	p2.lid = pa.lid;
	/* used only where a GRH is sent (RoCE) */
	EX_CHECK(ibv_query_gid(a->x.ctx, (uint8_t)o->ib_port, o->gid_index, &p1.gid),
		 "ibv_query_gid");
	p2.gid = p1.gid;
	EX_CHECK(rf_qp_connect_ibv(&a->lq, &ca, &p2), "loopback connect");
	EX_CHECK(rf_qp_connect_ibv(&a->lq2, &ca, &p1), "loopback connect");
	return 0;
}

/* Learn the reply byte order from a fetch-and-add of 0 on a known value. */
static int probe(struct at *a)
{
	uint64_t raw;

	*result_slot(a, 0) = 0;
	if (rf_sq_post_faa(&a->qp->sq, a->x.mr->lkey, result_addr(a, 0), a->rkey,
			   a->probe_addr, 0, RF_SEND_SIGNALED, 0))
		return -1;
	rf_sq_ring(&a->qp->sq);
	if (wait_one(a) < 0)
		return -1;
	raw = *result_slot(a, 0);
	if (rf_be64toh((__be64)raw) == 0x0102)
		a->reply_be = 1;
	else if (raw == 0x0102)
		a->reply_be = 0;
	else {
		fprintf(stderr, "probe fetched %#llx: neither byte order of 0x0102\n",
			(unsigned long long)raw);
		return -1;
	}
	return 0;
}

/* Phase 1: iters fetch-and-adds, WINDOW in flight; returns the ticket sum. */
static int phase_faa(struct at *a, long iters, uint64_t *sum)
{
	long posted = 0, done = 0;
	uint64_t prev = 0;
	int first = 1;

	*sum = 0;
	while (done < iters) {
		while (posted < iters && posted - done < WINDOW) {
			if (rf_sq_post_faa(&a->qp->sq, a->x.mr->lkey, result_addr(a, posted),
					   a->rkey, a->counter_addr, 1, RF_SEND_SIGNALED,
					   (uint64_t)posted))
				return -1;
			posted++;
		}
		rf_sq_ring(&a->qp->sq);
		{
			long k = wait_one(a);
			uint64_t t;

			if (k != done)
				return -1;	/* RC completes in order */
			t = fetched(a, *result_slot(a, k));
			/* our own tickets increase; the peer's fall in between */
			if (t >= 2 * (uint64_t)iters || (!first && t <= prev)) {
				if (a->errors++ < 5)
					fprintf(stderr, "bad ticket %llu after %llu\n",
						(unsigned long long)t, (unsigned long long)prev);
			}
			first = 0;
			prev = t;
			*sum += t;
			done++;
		}
	}
	return 0;
}

/* Phase 2: iters compare-and-swap increments, one at a time. */
static int phase_cas(struct at *a, long iters)
{
	uint64_t expect = 0;

	for (long i = 0; i < iters; i++) {
		for (;;) {
			uint64_t got;

			if (rf_sq_post_cas(&a->qp->sq, a->x.mr->lkey, result_addr(a, 0), a->rkey,
					   a->counter_addr, expect, expect + 1,
					   RF_SEND_SIGNALED, 0))
				return -1;
			rf_sq_ring(&a->qp->sq);
			if (wait_one(a) < 0)
				return -1;
			got = fetched(a, *result_slot(a, 0));
			if (got == expect) {	/* our swap happened */
				expect++;
				break;
			}
			a->cas_retries++;
			expect = got;		/* somebody else was faster */
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18517, 0, 1, NULL, 500, 8, 0, 0, 0, 0, NULL };
	struct at a;
	uint64_t my_sum = 0, peer_sum = 0, want, wire;
	volatile uint64_t *counter;
	int ret;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	memset(&a, 0, sizeof(a));
	/* the client's atomics land on the server's buffer; nothing on the client's */
	if (ex_start(&a.x, &o, 4096, 64, 0, o.host ? 0 : RF_ACCESS_REMOTE_ATOMIC, 0))
		return 1;
	counter = (volatile uint64_t *)a.x.buf;	/* meaningful on the server */
	if (o.host) {
		a.qp = &a.x.qp;
		a.counter_addr = a.x.peer.addr;
		a.probe_addr = a.x.peer.addr + 8;
		a.rkey = a.x.peer.rkey;
	} else {
		if (loopback_setup(&a, &o)) {
			rf_ep_close(&a.x);
			return 1;
		}
		a.qp = &a.lq;
		a.counter_addr = (uint64_t)(uintptr_t)a.x.buf;
		a.probe_addr = a.counter_addr + 8;
		a.rkey = a.x.mr->rkey;
		counter[0] = 0;
		counter[1] = 0x0102;	/* the probe word */
	}
	ret = rf_tcp_sync(a.x.sock, 'I', 0);		/* counter initialized */
	if (!ret)
		ret = probe(&a);
	if (!ret)
		ret = rf_tcp_sync(a.x.sock, '1', 0);
	if (!ret)
		ret = phase_faa(&a, o.iters, &my_sum);
	if (!ret) {	/* exchange ticket sums: together 0 + 1 + ... + 2n-1 */
		wire = htobe64(my_sum);
		ret = rf_tcp_xfer(a.x.sock, &wire, 8, 0, 0);
		if (!ret)
			ret = rf_tcp_xfer(a.x.sock, &wire, 8, 1, 0);
		peer_sum = be64toh(wire);
		want = (uint64_t)o.iters * (2 * (uint64_t)o.iters - 1);
		if (!ret && my_sum + peer_sum != want) {
			fprintf(stderr, "tickets sum to %llu, want %llu\n",
				(unsigned long long)(my_sum + peer_sum), (unsigned long long)want);
			a.errors++;
		}
	}
	if (!ret)
		ret = rf_tcp_sync(a.x.sock, '2', 0);
	if (!ret && !o.host && *counter != 2 * (uint64_t)o.iters) {
		fprintf(stderr, "after fetch-and-add: counter %llu, want %llu\n",
			(unsigned long long)*counter, 2 * (unsigned long long)o.iters);
		a.errors++;
	}
	/* nobody starts phase 2 before the server has checked phase 1 */
	if (!ret)
		ret = rf_tcp_sync(a.x.sock, 'C', 0);
	if (!ret)
		ret = phase_cas(&a, o.iters);
	if (!ret)
		ret = rf_tcp_sync(a.x.sock, '3', 0);
	if (!ret && !o.host && *counter != 4 * (uint64_t)o.iters) {
		fprintf(stderr, "after compare-and-swap: counter %llu, want %llu\n",
			(unsigned long long)*counter, 4 * (unsigned long long)o.iters);
		a.errors++;
	}
	/* the server's verdict decides both exit codes */
	if (!ret) {
		uint8_t ok = a.errors ? 0 : 1, peer_ok = 0;

		ret = rf_tcp_xfer(a.x.sock, &ok, 1, 0, 0);
		if (!ret)
			ret = rf_tcp_xfer(a.x.sock, &peer_ok, 1, 1, 0);
		if (!ret && !peer_ok)
			a.errors++;
	}
	if (ret)
		fprintf(stderr, "failed: %s\n", ret < 0 ? strerror(-ret) : "error");
	printf("%s: %ld fetch-and-add + %ld compare-and-swap increments, replies %s\n",
	       o.host ? "client" : "server", o.iters, o.iters,
	       a.reply_be ? "big-endian" : "in host order");
	if (!o.host)
		printf("  counter = %llu (want %llu)\n", (unsigned long long)*counter,
		       4 * (unsigned long long)o.iters);
	printf("  CAS retries under contention: %llu\n", (unsigned long long)a.cas_retries);
	printf("  %s\n", !ret && !a.errors ? "all checks passed" : "FAILED");
	if (!o.host) {
		rf_cq_detach(&a.x.cq, a.lq.qpn);
		rf_qp_destroy_ibv(&a.lq);
		rf_qp_destroy_ibv(&a.lq2);
	}
	rf_ep_close(&a.x);
	return !ret && !a.errors ? 0 : 1;
}
