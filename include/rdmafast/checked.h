/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/checked.h - the checked build: compiled with -DRF_CHECKED (in
 * every translation unit of the program), the data path catches the
 * misuse that otherwise fails silently (a post that returns 0 and never
 * completes, completions counted in nstale, a queue stuck on -ENOSPC) at
 * the call that broke the rule, and reports it with the queue (QPN, CQN),
 * the rule and where rdmafast(7) states it.
 *
 * The report goes to rf_checked_report() when the program defines one
 * (it is declared weak here: defined nowhere, it is NULL); otherwise the
 * message goes to stderr and abort() follows, as in UCX's assertion
 * builds. A program (or a test) defines its own to record, log or
 * continue instead: when it returns, the call goes on as it would
 * without the check.
 *
 * Without RF_CHECKED this header declares the vocabulary only and every
 * check compiles to nothing: no field, no instruction (make bench and
 * make asm-test hold the unchecked data path to that). With it, the
 * queue structs carry a little state of their own (struct rf__chk_*,
 * detail/checked_state.h), so all translation units of a program must
 * agree on RF_CHECKED.
 *
 * rdmafast(7), CHECKED BUILD lists the rules, and what no check can see.
 */
#ifndef RDMAFAST_CHECKED_H
#define RDMAFAST_CHECKED_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/detail/checked_state.h>	/* what the queue structs carry */

RF_BEGIN_DECLS

/* The rules a checked build checks (struct rf_checked_event.rule). */
enum rf_checked_rule {
	RF_CHK_NOT_ATTACHED = 1,	/* a QP's queue posted or completing with no rf_cq_attach() */
	RF_CHK_NO_RECV_QUEUE,		/* receive CQE of a QP attached without rq or srq (or
					 * requester CQE without sq) */
	RF_CHK_QP_STATE,		/* send posted to a QP in RESET, INIT or RTR */
	RF_CHK_QP_ERROR,		/* send posted to a QP in the error state */
	RF_CHK_NO_RING,			/* WQEs committed and never rung while the CQ is polled */
	RF_CHK_SIGNALING,		/* the send queue full of unsignaled WQEs */
	RF_CHK_ATOMIC_ALIGN,		/* an atomic's remote address not naturally aligned */
	RF_CHK_SECOND_POLLER,		/* the CQ's consumer index moved by someone else */
	RF_CHK_CQ_SIZE,			/* more completions possible than the CQ has entries */
	RF_CHK_NRULES
};

/*
 * One report. msg is the whole message, one line:
 * "rdmafast: QPN 0x000123: <what happened> [rule <name>: <the rule>; see
 * rdmafast(7), <SECTION>]". qpn and cqn are ~0U when the report has none.
 * The strings live until the hook returns.
 */
struct rf_checked_event {
	enum rf_checked_rule rule;
	const char *name;	/* short name: "not-attached", "qp-state", ... */
	const char *section;	/* "rdmafast(7), DO NOT MIX" */
	uint32_t qpn;
	uint32_t cqn;
	const char *msg;
};

/*
 * Empty polls before a send queue with committed, unrung WQEs and nothing
 * rung to wait for is reported (RF_CHK_NO_RING).
 */
#ifndef RF_CHECKED_IDLE_POLLS
#define RF_CHECKED_IDLE_POLLS (1U << 20)
#endif

/* Rules left unchecked: a bit mask of 1 << RF_CHK_* (to test the tests). */
#ifndef RF_CHECKED_SKIP
#define RF_CHECKED_SKIP 0U
#endif

#ifdef RF_CHECKED
/*
 * The program's report hook, if it defines one (a weak reference: without
 * a definition its address is NULL and the default reports).
 */
__attribute__((weak)) void rf_checked_report(const struct rf_checked_event *ev);
#endif

RF_END_DECLS

#endif /* RDMAFAST_CHECKED_H */
