/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_rd_atomic.c - max_rd_atomic / max_dest_rd_atomic.
 *
 * A requester has at most max_rd_atomic READ/atomic requests unanswered
 * (mlx5 rounds it up to a power of two); the WQEs behind a held-back one
 * wait in order.  The responder keeps one resource per request as the
 * replay cache, so a lost atomic response is answered again from it and
 * the atomic never runs twice.  The lossy tests set RFEMU_DROP before the
 * device opens (the engine reads it when it starts; Criterion runs each
 * test in a process of its own).
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include "wire_test.h"

TestSuite(dev_rd_atomic, .timeout = 60);

#define NFA	256

struct pair {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq[2];
	struct ibv_qp		*qp[2];
	uint8_t			*buf[2];
	struct ibv_mr		*mr[2];
};

/* Two QPs of this host connected with the given limits on both sides. */
static void pair_setup(struct pair *p, uint8_t rd_atomic, size_t bytes)
{
	struct ibv_port_attr pa;
	/*
	 * 4.096 us * 2^12 = 17 ms a try: a lost packet costs that much, and
	 * an engine descheduled for a while (a loaded machine, qemu-user)
	 * is not mistaken for a dead peer, which 1 ms tries were (seven of
	 * them exhausted: RETRY_EXC_ERR, seen once under qemu).
	 */
	struct wt_conn c = { .max_rd_atomic = rd_atomic, .max_dest_rd_atomic = rd_atomic,
			     .timeout = 12, .retry_cnt = 7 };

	memset(p, 0, sizeof(*p));
	p->ctx = et_open();
	cr_assert_eq(ibv_query_port(p->ctx, 1, &pa), 0);
	p->pd = ibv_alloc_pd(p->ctx);
	cr_assert(p->pd);
	for (int i = 0; i < 2; i++) {
		p->cq[i] = ibv_create_cq(p->ctx, 2 * NFA, NULL, NULL, 0);
		cr_assert(p->cq[i]);
		p->buf[i] = aligned_alloc(4096, bytes);
		cr_assert(p->buf[i]);
		memset(p->buf[i], 0, bytes);
		p->mr[i] = ibv_reg_mr(p->pd, p->buf[i], bytes, DT_ACC_ALL);
		cr_assert(p->mr[i]);
		p->qp[i] = wt_create_qp(p->pd, p->cq[i], NFA);
	}
	for (int i = 0; i < 2; i++) {
		c.dqpn = p->qp[!i]->qp_num;
		c.dlid = pa.lid;
		cr_assert_eq(wt_connect(p->qp[i], &c), 0, "connect: %s", strerror(errno));
	}
}

static void pair_teardown(struct pair *p)
{
	for (int i = 0; i < 2; i++)
		cr_expect_eq(ibv_destroy_qp(p->qp[i]), 0);
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(ibv_dereg_mr(p->mr[i]), 0);
		cr_expect_eq(ibv_destroy_cq(p->cq[i]), 0);
		free(p->buf[i]);
	}
	cr_expect_eq(ibv_dealloc_pd(p->pd), 0);
	cr_expect_eq(ibv_close_device(p->ctx), 0);
}

/*
 * NFA fetch-and-adds of 1 posted at once to one counter: every one
 * completes, the counter ends at exactly NFA, and the values fetched are
 * 0..NFA-1 each once (no atomic executed twice or lost).
 */
static void fetch_add_storm(uint8_t rd_atomic, unsigned limit)
{
	struct pair p;
	uint64_t *counter, *fetched;
	struct ibv_wc wc[NFA];
	uint8_t seen[NFA] = { 0 };
	int got;

	pair_setup(&p, rd_atomic, 64 * 1024);
	counter = (uint64_t *)p.buf[1];
	fetched = (uint64_t *)p.buf[0];
	for (uint32_t i = 0; i < NFA; i++) {
		struct ibv_sge s = { (uintptr_t)&fetched[i], 8, p.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { (uintptr_t)counter, 1, 0, p.mr[1]->rkey },
		};

		dt_post(p.qp[0], &wr);
	}
	got = dt_poll(p.cq[0], wc, NFA, 30000);
	for (int i = 0; i < got; i++)
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "atomic %d of %d: status %d",
			     i, NFA, wc[i].status);
	cr_assert_eq(got, NFA, "%d of %d atomics completed", got, NFA);
	cr_assert_eq(*counter, NFA, "counter %llu", (unsigned long long)*counter);
	for (uint32_t i = 0; i < NFA; i++) {
		cr_assert_lt(fetched[i], NFA);
		cr_assert_eq(seen[fetched[i]]++, 0, "value %llu fetched twice",
			     (unsigned long long)fetched[i]);
	}
	cr_assert_leq(wt_stats().rd_outstanding_max, limit);
	pair_teardown(&p);
}

Test(dev_rd_atomic, fetch_add_256_depth_16)
{
	fetch_add_storm(16, 16);
}

/* Lost responses: each is answered again from the responder's cache. */
Test(dev_rd_atomic, fetch_add_256_lossy)
{
	setenv("RFEMU_FAULT_SEED", "4242", 1);
	setenv("RFEMU_DROP", "0.05", 1);
	fetch_add_storm(16, 16);
}

/*
 * Seeds that lose the response of an atomic while later ones arrive: the
 * later responses must not complete past the gap (each of these ended in
 * RETRY_EXC_ERR when they did).
 */
Test(dev_rd_atomic, fetch_add_256_lossy_seed_7919)
{
	setenv("RFEMU_FAULT_SEED", "7919", 1);
	setenv("RFEMU_DROP", "0.05", 1);
	fetch_add_storm(16, 16);
}

Test(dev_rd_atomic, fetch_add_256_lossy_seed_23757)
{
	setenv("RFEMU_FAULT_SEED", "23757", 1);
	setenv("RFEMU_DROP", "0.05", 1);
	fetch_add_storm(16, 16);
}

/* Depth 5 is 8 on mlx5 (rounded up to a power of two). */
Test(dev_rd_atomic, fetch_add_256_depth_5_lossy)
{
	setenv("RFEMU_FAULT_SEED", "777", 1);
	setenv("RFEMU_DROP", "0.05", 1);
	fetch_add_storm(5, 8);
}

/*
 * 64 READs of 16 KiB with max_rd_atomic 2, and behind READ i a WRITE that
 * sends what READ i-2 fetched.  READ i must wait until READ i-2 is
 * answered, and the WRITE behind it waits too (in order), so every WRITE
 * carries data that had arrived; without the limit it would send the bytes
 * of a buffer still empty.  All complete in order, and never were more than
 * two READs unanswered.
 */
Test(dev_rd_atomic, reads_depth_2_in_order)
{
	enum { N = 64, LEN = 16 * 1024, D = 2, NWC = 2 * N - D };
	struct pair p;
	struct ibv_wc wc[NWC];
	struct ibv_sge sge[NWC];
	struct ibv_send_wr wr[NWC];
	int n = 0, got;

	pair_setup(&p, D, 2 * N * LEN);
	for (uint32_t i = 0; i < N * LEN; i++)
		p.buf[1][i] = (uint8_t)(i * 13 + (i >> 10) + 1);
	/* one chain, one doorbell: the device sees every WQE at once */
	memset(wr, 0, sizeof(wr));
	for (uint32_t i = 0; i < N; i++) {
		sge[n] = (struct ibv_sge){ (uintptr_t)p.buf[0] + i * LEN, LEN, p.mr[0]->lkey };
		wr[n].opcode = IBV_WR_RDMA_READ;
		wr[n].wr.rdma.remote_addr = (uintptr_t)p.buf[1] + i * LEN;
		n++;
		if (i < D)
			continue;
		sge[n] = (struct ibv_sge){ (uintptr_t)p.buf[0] + (i - D) * LEN, 8, p.mr[0]->lkey };
		wr[n].opcode = IBV_WR_RDMA_WRITE;
		wr[n].wr.rdma.remote_addr = (uintptr_t)p.buf[1] + (N + i) * LEN;
		n++;
	}
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.rkey = p.mr[1]->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	dt_post(p.qp[0], wr);
	got = dt_poll(p.cq[0], wc, NWC, 30000);
	cr_assert_eq(got, NWC, "%d of %d completed", got, NWC);
	for (int i = 0; i < got; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "wr %d: status %d", i, wc[i].status);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i, "out of order");
	}
	cr_assert(!memcmp(p.buf[0], p.buf[1], N * LEN), "READ data differs");
	for (uint32_t i = D; i < N; i++)
		cr_assert(!memcmp(p.buf[1] + (N + i) * LEN, p.buf[1] + (i - D) * LEN, 8),
			  "WRITE %u left before READ %u was answered", i, i - D);
	{
		uint64_t m = wt_stats().rd_outstanding_max;

		cr_assert(m >= 1 && m <= D, "%llu READs outstanding at once",
			  (unsigned long long)m);
	}
	pair_teardown(&p);
}

/*
 * A responder given no responder resources (max_dest_rd_atomic 0) has
 * READ and atomic access taken off its QP context, whatever access flags
 * it was given (set_qpc_atomic_flags() of the kernel's mlx5 qp.c): a
 * WRITE to it lands, a READ is refused as by a QP without the flag.
 */
Test(dev_rd_atomic, no_responder_resources_no_reads)
{
	struct pair p;
	struct ibv_sge s;
	struct ibv_send_wr wr = { .num_sge = 1, .sg_list = &s, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	pair_setup(&p, 0, 4096);
	memset(p.buf[0], 0x5a, 64);
	s = (struct ibv_sge){ (uintptr_t)p.buf[0], 64, p.mr[0]->lkey };
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1];
	wr.wr.rdma.rkey = p.mr[1]->rkey;
	dt_post(p.qp[0], &wr);
	cr_assert_eq(dt_poll(p.cq[0], &wc, 1, 10000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "WRITE: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(p.buf[1][63], 0x5a);

	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	s.addr = (uintptr_t)p.buf[0] + 1024;
	dt_post(p.qp[0], &wr);
	cr_assert_eq(dt_poll(p.cq[0], &wc, 1, 10000), 1);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "READ: %s",
		     ibv_wc_status_str(wc.status));
	pair_teardown(&p);
}
