/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rf_cq_poll_ts() (rdmafast/cq_ts.h) in host memory: over several laps of
 * requester, responder, error and stale-QPN CQEs it writes the records
 * rf_cq_poll() writes, byte for byte, each with the timestamp of its own
 * CQE, and leaves the CQ, its consumer index and the queues it retires
 * into where rf_cq_poll() leaves them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x1234, CQN = 0x77, STALE_QPN = 0x4444 };

/* A CQ with one QP: its send queue and receive queue. */
struct world {
	struct rft_cq t;
	struct rft_sq s;
	struct rft_rq r;
};

static void world_init(struct world *w)
{
	cr_assert_eq(rft_cq_init(&w->t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&w->s, RF_QP_RC, 64, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rft_rq_init(&w->r, 32), 0);
	cr_assert_eq(rf_cq_attach(&w->t.cq, QPN, &w->s.sq, &w->r.rq, NULL), 0);
}

static void world_fini(struct world *w)
{
	free(w->r.buf);
	rft_sq_fini(&w->s);
	rft_cq_fini(&w->t);
}

static uint64_t stamp(uint32_t pi)
{
	return 0x0123456789a00000ULL + (uint64_t)pi * 1013;
}

/*
 * Round k writes four CQEs from producer index pi: a signaled RDMA write,
 * a CQE of a destroyed QP, a receive, an error of a signaled NOP.
 */
static uint32_t round_put(struct world *w, uint32_t pi, uint64_t k)
{
	struct rf_cqe64 *e;

	cr_assert_eq(rf_sq_post_write(&w->s.sq, 1, 2, 3, 4, 5, RF_SEND_SIGNALED, 100 * k), 0);
	e = rft_cqe_put(&w->t, pi, RF_CQE_REQ, RF_OPCODE_RDMA_WRITE, QPN,
			(uint16_t)rf_sq_last_pi(&w->s.sq), 0);
	e->timestamp = rf_htobe64(stamp(pi));
	pi++;
	e = rft_cqe_put(&w->t, pi, RF_CQE_REQ, RF_OPCODE_SEND, STALE_QPN, 0, 0);
	e->timestamp = rf_htobe64(stamp(pi));
	pi++;
	cr_assert_eq(rf_rq_post_one(&w->r.rq, 1, 0x1000, 4096, 100 * k + 1), 0);
	rf_rq_ring(&w->r.rq);
	e = rft_cqe_put(&w->t, pi, RF_CQE_RESP_SEND, 0, QPN, (uint16_t)(k & 0xffff), 77);
	e->timestamp = rf_htobe64(stamp(pi));
	pi++;
	cr_assert_eq(rf_sq_post_nop(&w->s.sq, RF_SEND_SIGNALED, 100 * k + 2), 0);
	rft_cqe_put_err(&w->t, pi, RF_CQE_REQ_ERR, RF_OPCODE_NOP, QPN,
			(uint16_t)rf_sq_last_pi(&w->s.sq), RF_CQE_SYNDROME_WR_FLUSH_ERR, 0xf9);
	/* an error CQE has no timestamp field: whatever is there is returned */
	return pi + 1;
}

/*
 * Every field rf_cq_poll() defines; a send completion's byte_len and imm
 * are not among them (struct rf_wc), and its fast path leaves them alone.
 */
static void same_record(const struct rf_wc *a, const struct rf_wc *b, uint64_t k, int i)
{
	int send = a->opcode < RF_WC_RECV;

	cr_assert(a->wr_id == b->wr_id && a->qp_num == b->qp_num && a->status == b->status &&
		  a->opcode == b->opcode && a->flags == b->flags &&
		  a->vendor_err == b->vendor_err && a->wqe_counter == b->wqe_counter &&
		  a->sl == b->sl && (send || (a->byte_len == b->byte_len &&
					      a->imm == b->imm && a->src_qp == b->src_qp)),
		  "round %llu record %d differs", (unsigned long long)k, i);
}

Test(cq_ts, the_records_of_rf_cq_poll_and_their_stamps)
{
	struct world a, b;
	uint32_t pi = 0;

	world_init(&a);
	world_init(&b);
	for (uint64_t k = 0; k < 6; k++) {	/* 24 CQEs: three laps of 8 */
		struct rf_wc wc[4];
		struct rf_wc_ts wts[4];
		uint32_t p0 = pi;
		int got_a = 0, got_b = 0, r;

		round_put(&a, p0, k);
		pi = round_put(&b, p0, k);
		/* two records a call: cut after the stale CQE and in the middle */
		while ((r = rf_cq_poll(&a.t.cq, wc + got_a, 2)) > 0)
			got_a += r;
		while ((r = rf_cq_poll_ts(&b.t.cq, wts + got_b, 2)) > 0)
			got_b += r;
		cr_assert_eq(got_a, 3, "round %llu", (unsigned long long)k);
		cr_assert_eq(got_b, 3, "round %llu", (unsigned long long)k);
		for (int i = 0; i < 3; i++)
			same_record(&wc[i], &wts[i].wc, k, i);
		cr_assert_eq(wts[0].wc.wr_id, 100 * k);
		cr_assert_eq(wts[0].ts, stamp(p0), "the write's stamp");
		cr_assert_eq(wts[1].wc.wr_id, 100 * k + 1);
		cr_assert_eq(wts[1].ts, stamp(p0 + 2), "the receive's, past the stale CQE");
		cr_assert_eq(wts[2].wc.status, RF_WC_WR_FLUSH_ERR);
		cr_assert_eq(a.t.cq.ci, pi);
		cr_assert_eq(b.t.cq.ci, pi);
		cr_assert_eq(b.t.dbrec[RF_CQ_SET_CI], rf_htobe32(pi));
		cr_assert_eq(b.t.cq.nstale, a.t.cq.nstale);
		cr_assert_eq(rf_sq_space(&b.s.sq), rf_sq_space(&a.s.sq), "retired alike");
		cr_assert_eq(rf_rq_space(&b.r.rq), rf_rq_space(&a.r.rq));
		cr_assert_null(rf_cq_peek(&b.t.cq));
	}
	world_fini(&a);
	world_fini(&b);
}

Test(cq_ts, an_empty_cq_writes_nothing)
{
	struct world w;
	struct rf_wc_ts wts[2];

	world_init(&w);
	w.t.dbrec[RF_CQ_SET_CI] = RF_BE32(0x12345678);
	memset(wts, 0xab, sizeof(wts));
	cr_assert_eq(rf_cq_poll_ts(&w.t.cq, wts, 2), 0);
	cr_assert_eq(w.t.dbrec[RF_CQ_SET_CI], RF_BE32(0x12345678), "no doorbell-record write");
	cr_assert_eq(wts[0].ts, 0xababababababababULL);
	cr_assert_eq(rf_cq_poll_ts(&w.t.cq, wts, 0), 0);
	world_fini(&w);
}
