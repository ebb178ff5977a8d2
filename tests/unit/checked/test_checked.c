/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The checked build (-DRF_CHECKED, rdmafast/checked.h): one suite per rule
 * of rdmafast(7) that a check sees, each with the misuse that fails
 * silently without it (the call returns 0, the queue hangs or loses
 * completions) and the report it gets instead: the rule, the queue's QPN
 * or CQN and the man page, at the call that broke the rule. Each suite
 * also shows the right use reporting nothing, and the call's result
 * unchanged by the check.
 *
 * Built into the checked unit binary with every other unit test
 * (Makefile: build/tests/checked/rftest), whose report hook below records
 * instead of aborting. Built with -DRF_CHECKED_SKIP=(1 << rule), the suite
 * of that rule fails and no other (make checked-selftest).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "../rftest.h"

#ifndef RF_CHECKED
#error "test_checked.c is built with -DRF_CHECKED"
#endif

enum { QPN = 0x1234, CQN = 0x77, IBV_RESET = 0, IBV_INIT = 1, IBV_RTS = 3 };

/* ---- The report hook: records (the default would abort) ---------------- */

static struct {
	int n;
	int rule[RF_CHK_NRULES];	/* reports per rule */
	struct rf_checked_event last;
	char msg[640];
} rec;

void rf_checked_report(const struct rf_checked_event *ev)
{
	rec.n++;
	if (ev->rule > 0 && ev->rule < RF_CHK_NRULES)
		rec.rule[ev->rule]++;
	rec.last = *ev;
	snprintf(rec.msg, sizeof(rec.msg), "%s", ev->msg);
	rec.last.msg = rec.msg;
}

static void rec_reset(void)
{
	memset(&rec, 0, sizeof(rec));
}

/* Exactly one report since rec_reset(), of rule, naming the queue and the page. */
static void expect_one(enum rf_checked_rule rule, uint32_t qpn, uint32_t cqn)
{
	char q[32];

	cr_assert_eq(rec.n, 1, "reports: %d, wanted 1 of rule %d (last: %s)", rec.n, (int)rule,
		     rec.n ? rec.msg : "none");
	cr_assert_eq(rec.last.rule, rule, "%s", rec.msg);
	cr_assert_eq(rec.last.qpn, qpn, "%s", rec.msg);
	cr_assert_eq(rec.last.cqn, cqn, "%s", rec.msg);
	if (qpn != ~0U) {
		snprintf(q, sizeof(q), "QPN 0x%06x", qpn);
		cr_assert(strstr(rec.msg, q), "%s", rec.msg);
	}
	if (cqn != ~0U) {
		snprintf(q, sizeof(q), "CQN 0x%06x", cqn);
		cr_assert(strstr(rec.msg, q), "%s", rec.msg);
	}
	cr_assert(strstr(rec.msg, rec.last.name), "%s", rec.msg);
	cr_assert(strstr(rec.msg, "rdmafast(7), "), "%s", rec.msg);
	cr_assert(strstr(rec.msg, rec.last.section), "%s", rec.msg);
}

static void expect_none(void)
{
	cr_assert_eq(rec.n, 0, "unexpected report: %s", rec.msg);
}

/* A send queue of wqe_cnt BBs (QPN) attached to a CQ of cqe_cnt entries (CQN). */
struct fix {
	struct rft_sq s;
	struct rft_cq c;
};

static void fix_init(struct fix *f, uint32_t wqe_cnt, uint32_t cqe_cnt, int attach)
{
	cr_assert_eq(rft_sq_init(&f->s, RF_QP_RC, wqe_cnt, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rft_cq_init(&f->c, cqe_cnt, 64, CQN), 0);
	if (attach)
		cr_assert_eq(rf_cq_attach(&f->c.cq, QPN, &f->s.sq, NULL, NULL), 0);
	rec_reset();
}

static void fix_fini(struct fix *f)
{
	rft_sq_fini(&f->s);
	rft_cq_fini(&f->c);
}

/* ---- not-attached -------------------------------------------------------- */

Test(checked_not_attached, post_to_a_queue_attached_to_no_cq)
{
	struct fix f;

	fix_init(&f, 16, 16, 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 1), 0);	/* as unchecked */
	expect_one(RF_CHK_NOT_ATTACHED, QPN, ~0U);
	/* attached, the same post reports nothing */
	cr_assert_eq(rf_cq_attach(&f.c.cq, QPN, &f.s.sq, NULL, NULL), 0);
	rec_reset();
	cr_assert_eq(rf_sq_post_write(&f.s.sq, 1, 0x1000, 8, 2, 0x2000, RF_SEND_SIGNALED, 2), 0);
	expect_none();
	fix_fini(&f);
}

Test(checked_not_attached, completion_of_a_qp_never_attached)
{
	struct fix f;
	struct rf_wc wc;

	fix_init(&f, 16, 16, 0);
	rft_cqe_put(&f.c, 0, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);	/* dropped, as unchecked */
	cr_assert_eq(f.c.cq.nstale, 1);
	expect_one(RF_CHK_NOT_ATTACHED, QPN, CQN);
	/* detached: its late completions are expected and dropped silently */
	cr_assert_eq(rf_cq_attach(&f.c.cq, QPN, &f.s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_cq_detach(&f.c.cq, QPN), 0);
	rec_reset();
	rft_cqe_put(&f.c, 1, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);
	cr_assert_eq(f.c.cq.nstale, 2);
	expect_none();
	fix_fini(&f);
}

/* ---- no-recv-queue ------------------------------------------------------- */

Test(checked_no_recv_queue, srq_receive_on_a_qp_attached_without_srq)
{
	struct fix f;
	struct rf_wc wc;

	fix_init(&f, 16, 16, 1);	/* rf_cq_attach(cq, qpn, &sq, NULL, NULL) */
	rft_cqe_put(&f.c, 0, RF_CQE_RESP_SEND, 0, QPN, 0, 64);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);	/* lost, as unchecked */
	cr_assert_eq(f.c.cq.nstale, 1);
	expect_one(RF_CHK_NO_RECV_QUEUE, QPN, CQN);
	cr_assert(strstr(rec.msg, "srq"), "%s", rec.msg);
	fix_fini(&f);
}

Test(checked_no_recv_queue, send_completion_on_a_qp_attached_without_sq)
{
	struct fix f;
	struct rft_rq r;
	struct rf_wc wc;

	fix_init(&f, 16, 16, 0);
	cr_assert_eq(rft_rq_init(&r, 16), 0);
	cr_assert_eq(rf_cq_attach(&f.c.cq, QPN, NULL, &r.rq, NULL), 0);
	rft_cqe_put(&f.c, 0, RF_CQE_REQ, RF_OPCODE_SEND, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);
	expect_one(RF_CHK_NO_RECV_QUEUE, QPN, CQN);
	/* a receive goes to the rq: nothing to report */
	rec_reset();
	cr_assert_eq(rf_rq_post_one(&r.rq, 1, 0x1000, 64, 9), 0);
	rft_cqe_put(&f.c, 1, RF_CQE_RESP_SEND, 0, QPN, 0, 64);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 9);
	expect_none();
	free(r.buf);
	fix_fini(&f);
}

/* ---- qp-state and qp-error ------------------------------------------------ */

/* What the verbs glue asks ibv_query_qp() for (rf_qp_init_ibv()). */
static int fake_state;
static int fake_queries;

static int fake_query(const void *arg)
{
	(void)arg;
	fake_queries++;
	return fake_state;
}

static void fake_glue(struct rf_sq *sq, int ibv_state)
{
	fake_state = ibv_state;
	fake_queries = 0;
	rf__chk_sq(sq)->query = fake_query;
	rf__chk_sq(sq)->query_arg = NULL;
	rf__chk_sq(sq)->state = RF__CHK_QPS(0);	/* as rf_qp_init_ibv() leaves it */
}

Test(checked_qp_state, post_in_reset_then_in_rts)
{
	struct fix f;

	fix_init(&f, 16, 16, 1);
	fake_glue(&f.s.sq, IBV_RESET);
	cr_assert_eq(rf_sq_post_send(&f.s.sq, 1, 0x1000, 8, RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	expect_one(RF_CHK_QP_STATE, QPN, CQN);
	cr_assert(strstr(rec.msg, "RESET"), "%s", rec.msg);
	rec_reset();
	fake_state = IBV_INIT;
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, 0, 2), 0);
	expect_one(RF_CHK_QP_STATE, QPN, CQN);
	cr_assert(strstr(rec.msg, "INIT"), "%s", rec.msg);
	/* connected: no report, and once RTS is known no more questions */
	rec_reset();
	fake_state = IBV_RTS;
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 3), 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 4), 0);
	expect_none();
	cr_assert_eq(fake_queries, 3);
	fix_fini(&f);
}

Test(checked_qp_error, post_after_an_error_completion)
{
	struct fix f;
	struct rf_wc wc;

	fix_init(&f, 16, 16, 1);
	cr_assert_eq(rf_sq_post_write(&f.s.sq, 1, 0x1000, 8, 2, 0x2000, RF_SEND_SIGNALED, 7), 0);
	rft_cqe_put_err(&f.c, 0, RF_CQE_REQ_ERR, RF_OPCODE_RDMA_WRITE, QPN, 0,
			RF_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x88);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, RF_WC_REM_ACCESS_ERR);
	expect_none();
	/* the QP is in the error state now: the post is accepted, as unchecked */
	cr_assert_eq(rf_sq_post_write(&f.s.sq, 1, 0x1000, 8, 2, 0x2000, RF_SEND_SIGNALED, 8), 0);
	expect_one(RF_CHK_QP_ERROR, QPN, CQN);
	/* with the glue's question: the QP brought back to RTS reports nothing */
	fake_glue(&f.s.sq, IBV_RTS);
	rf__chk_sq(&f.s.sq)->state = RF__CHK_ERR;
	rec_reset();
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 9), 0);
	expect_none();
	fix_fini(&f);
}

/* ---- no-ring --------------------------------------------------------------- */

Test(checked_no_ring, polling_for_wqes_never_rung)
{
	struct fix f;
	struct rf_wc wc[4];
	uint32_t i;

	fix_init(&f, 16, 16, 1);
	cr_assert_eq(rf_sq_post_send(&f.s.sq, 1, 0x1000, 8, RF_SEND_SIGNALED, 1), 0);
	for (i = 0; i < RF_CHECKED_IDLE_POLLS + 10; i++)
		cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 0);
	expect_one(RF_CHK_NO_RING, QPN, CQN);
	cr_assert(strstr(rec.msg, "rf_sq_ring"), "%s", rec.msg);
	/* rung, the same wait reports nothing */
	rf_sq_ring(&f.s.sq);
	rec_reset();
	for (i = 0; i < 2 * RF_CHECKED_IDLE_POLLS; i++)
		cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 0);
	expect_none();
	fix_fini(&f);
}

/* ---- signaling ---------------------------------------------------------------- */

Test(checked_signaling, queue_filled_with_unsignaled_wqes)
{
	struct fix f;
	int i;

	fix_init(&f, 16, 16, 1);
	for (i = 0; i < 15; i++)
		cr_assert_eq(rf_sq_post_nop(&f.s.sq, 0, (uint64_t)i), 0);
	expect_none();
	/* the 16th fills the queue: nothing can ever complete */
	cr_assert_eq(rf_sq_post_write(&f.s.sq, 1, 0x1000, 8, 2, 0x2000, 0, 15), 0);
	expect_one(RF_CHK_SIGNALING, QPN, CQN);
	rec_reset();
	/* and the next post, signaled or not, sees -ENOSPC, as unchecked */
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 16), -ENOSPC);
	expect_one(RF_CHK_SIGNALING, QPN, CQN);
	cr_assert(strstr(rec.msg, "-ENOSPC"), "%s", rec.msg);
	fix_fini(&f);
}

Test(checked_signaling, one_signaled_wqe_in_the_queue_is_enough)
{
	struct fix f;
	int i;

	fix_init(&f, 16, 16, 1);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 0), 0);
	for (i = 1; i < 16; i++)
		cr_assert_eq(rf_sq_post_nop(&f.s.sq, 0, (uint64_t)i), 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, 0, 16), -ENOSPC);	/* until it completes */
	expect_none();
	fix_fini(&f);
}

/* ---- atomic-align -------------------------------------------------------------- */

Test(checked_atomic_align, fetch_and_add_at_a_misaligned_address)
{
	struct fix f;

	fix_init(&f, 16, 16, 1);
	cr_assert_eq(rf_sq_post_faa(&f.s.sq, 1, 0x1000, 2, 0x2004, 1, RF_SEND_SIGNALED, 1), 0);
	expect_one(RF_CHK_ATOMIC_ALIGN, QPN, CQN);
	cr_assert(strstr(rec.msg, "0x2004"), "%s", rec.msg);
	rec_reset();
	cr_assert_eq(rf_sq_post_cas(&f.s.sq, 1, 0x1000, 2, 0x2002, 0, 1, RF_SEND_SIGNALED, 2), 0);
	expect_one(RF_CHK_ATOMIC_ALIGN, QPN, CQN);
	rec_reset();
	cr_assert_eq(rf_sq_post_masked_fa64(&f.s.sq, 1, 0x1000, 2, 0x200c, 1, 0,
					    RF_SEND_SIGNALED, 3), 0);
	expect_one(RF_CHK_ATOMIC_ALIGN, QPN, CQN);
	/* aligned to their size: nothing */
	rec_reset();
	cr_assert_eq(rf_sq_post_faa(&f.s.sq, 1, 0x1000, 2, 0x2008, 1, RF_SEND_SIGNALED, 4), 0);
	cr_assert_eq(rf_sq_post_masked_fa32(&f.s.sq, 1, 0x1000, 2, 0x2004, 1, 0,
					    RF_SEND_SIGNALED, 5), 0);
	expect_none();
	fix_fini(&f);
}

/* ---- second-poller ------------------------------------------------------------- */

Test(checked_second_poller, ibv_poll_cq_moved_the_consumer_index)
{
	struct fix f;
	struct rf_wc wc[4];

	fix_init(&f, 16, 16, 1);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 1), 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 2), 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&f.s.sq);
	rft_cqe_put(&f.c, 0, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 1);
	rft_cqe_put(&f.c, 1, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 1, 0);
	rft_cqe_put(&f.c, 2, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 2, 0);
	/* libmlx5's ibv_poll_cq() takes a CQE from its own index 0 on and
	 * writes its index to the CI record */
	f.c.dbrec[RF_CQ_SET_CI] = rf_htobe32(2);
	cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 2);	/* returned again, as unchecked */
	expect_one(RF_CHK_SECOND_POLLER, ~0U, CQN);
	/* rdmafast alone: no report */
	rec_reset();
	rft_cqe_put(&f.c, 3, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 2, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 1);
	cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 0);
	rf_cq_arm(&f.c.cq, 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, wc, 4), 0);
	expect_none();
	fix_fini(&f);
}

/* ---- cq-size ------------------------------------------------------------------- */

Test(checked_cq_size, more_signaled_sends_than_cq_entries)
{
	struct fix f;
	int i;

	fix_init(&f, 16, 4, 1);
	for (i = 0; i < 4; i++)
		cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, (uint64_t)i), 0);
	expect_none();
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 4), 0);	/* the 5th */
	expect_one(RF_CHK_CQ_SIZE, QPN, CQN);
	fix_fini(&f);
}

Test(checked_cq_size, more_receives_than_cq_entries)
{
	struct fix f;
	struct rft_rq r;
	struct rf_wc wc;
	int i;

	fix_init(&f, 16, 4, 0);
	cr_assert_eq(rft_rq_init(&r, 16), 0);
	cr_assert_eq(rf_cq_attach(&f.c.cq, QPN, &f.s.sq, &r.rq, NULL), 0);
	for (i = 0; i < 4; i++)
		cr_assert_eq(rf_rq_post_one(&r.rq, 1, 0x1000, 64, (uint64_t)i), 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);
	expect_none();
	/* a fifth receive: seen at the next poll (rq.h does not see the CQ) */
	cr_assert_eq(rf_rq_post_one(&r.rq, 1, 0x1000, 64, 4), 0);
	cr_assert_eq(rf_cq_poll(&f.c.cq, &wc, 1), 0);
	expect_one(RF_CHK_CQ_SIZE, ~0U, CQN);
	free(r.buf);
	fix_fini(&f);
}

/* ---- the message, whole ------------------------------------------------------- */

Test(checked_not_attached, message_names_queue_rule_and_page)
{
	struct fix f;

	fix_init(&f, 16, 16, 0);
	cr_assert_eq(rf_sq_post_nop(&f.s.sq, RF_SEND_SIGNALED, 1), 0);
	cr_assert_str_eq(rec.msg,
		"rdmafast: QPN 0x001234: send posted to a queue attached to no CQ: rf_cq_poll() "
		"would drop its completions [rule not-attached: attach every QP to the CQ its "
		"completions arrive on (rf_cq_attach()) before posting; see rdmafast(7), "
		"DO NOT MIX]");
	fix_fini(&f);
}
