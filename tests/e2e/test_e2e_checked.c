/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Misuse on a real verbs stack (the emulated HCA or a ConnectX), built
 * both ways: unchecked, each case fails silently as issue 30 met it (the
 * post returns 0 and nothing completes, a completion comes back twice, an
 * atomic fails only at completion); in the checked build (-DRF_CHECKED,
 * make test's build/tests/e2e-checked/rfe2e) the same calls are reported
 * where they happen, and then behave the same.
 *
 * Also the checked build's report hook for the whole e2e suite: a report
 * that a test did not announce with E2E_CHECKED_EXPECT() aborts, as the
 * default does; an announced one is counted (e2e_checked_count()).
 */
#include "e2e.h"

#ifdef RF_CHECKED
static unsigned expected;
static int reports[RF_CHK_NRULES];
static char last[640];

void rf_checked_report(const struct rf_checked_event *ev)
{
	if (!(expected & (1U << ev->rule))) {
		fprintf(stderr, "%s\n", ev->msg);
		abort();
	}
	reports[ev->rule]++;
	snprintf(last, sizeof(last), "%s", ev->msg);
}

void e2e_checked_expect(enum rf_checked_rule rule)
{
	expected |= 1U << rule;
}

int e2e_checked_count(enum rf_checked_rule rule)
{
	return reports[rule];
}

const char *e2e_checked_last(void)
{
	return last;
}
#endif

/* A QP created and attached, but never connected: still in RESET. */
Test(e2e_checked, post_to_a_qp_in_reset)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_qp qp;
	struct rf_qp_init_attr qa;
	struct rf_wc wc;

	e2e_open(&e, &o);
	memset(&qa, 0, sizeof(qa));
	qa.pd = e.pd;
	qa.send_cq = e.a.ibcq;
	qa.recv_cq = e.a.ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 16;
	qa.max_recv_wr = 4;
	qa.max_send_sge = 1;
	qa.max_recv_sge = 1;
	cr_assert_eq(rf_qp_create_ibv(&qp, &qa), 0);
	cr_assert_eq(rf_cq_attach(&e.a.cq, qp.qpn, &qp.sq, &qp.rq, NULL), 0);
	E2E_CHECKED_EXPECT(RF_CHK_QP_STATE);
	cr_assert_eq(rf_sq_post_write(&qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, e.b.mr->rkey,
				      e2e_addr(&e.b, 0), RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	E2E_CHECKED_ASSERT(RF_CHK_QP_STATE, "RESET");
	cr_assert_eq(e2e_poll_for(&e.a.cq, &wc, 1, 200), 0, "a QP in RESET completes nothing");
	cr_assert_eq(rf_cq_detach(&e.a.cq, qp.qpn), 0);
	cr_assert_eq(rf_qp_destroy_ibv(&qp), 0);
	e2e_close(&e);
}

/* ibv_poll_cq() on the CQ rdmafast polls: DO NOT MIX. */
Test(e2e_checked, ibv_poll_cq_on_a_cq_rdmafast_polls)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct ibv_wc vwc;
	struct rf_wc wc[2];
	long end;
	int k = 0;

	e2e_open(&e, &o);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey, e2e_addr(&e.b, 0), RF_SEND_SIGNALED | RF_SEND_RING,
				      77), 0);
	end = e2e_now_ms() + E2E_TIMEOUT_MS;
	while ((k = ibv_poll_cq(e.a.ibcq, 1, &vwc)) == 0)
		cr_assert(e2e_now_ms() < end, "no completion");
	cr_assert_eq(k, 1);
	E2E_CHECKED_EXPECT(RF_CHK_SECOND_POLLER);
	/* the completion libmlx5 took comes back to rdmafast too */
	cr_assert_eq(rf_cq_poll(&e.a.cq, wc, 2), 1);
	cr_assert_eq(wc[0].wr_id, 77);
	E2E_CHECKED_ASSERT(RF_CHK_SECOND_POLLER, "ibv_poll_cq");
	e2e_close(&e);
}

/* A fetch-and-add at a misaligned address: refused at completion only. */
Test(e2e_checked, misaligned_fetch_and_add)
{
	struct e2e_opts o = { 0 };
	struct e2e e;
	struct rf_wc wc;

	e2e_open(&e, &o);
	E2E_CHECKED_EXPECT(RF_CHK_ATOMIC_ALIGN);
	cr_assert_eq(rf_sq_post_faa(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), e.b.mr->rkey,
				    e2e_addr(&e.b, 4), 1, RF_SEND_SIGNALED | RF_SEND_RING, 5), 0);
	E2E_CHECKED_ASSERT(RF_CHK_ATOMIC_ALIGN, "atomic");
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_neq(wc.status, RF_WC_SUCCESS, "the responder refuses it");
	e2e_close(&e);
}
