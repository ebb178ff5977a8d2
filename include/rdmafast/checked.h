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
 * queue structs carry a little state of their own (struct rf__chk_*), so
 * all translation units of a program must agree on RF_CHECKED.
 *
 * rdmafast(7), CHECKED BUILD lists the rules, and what no check can see.
 */
#ifndef RDMAFAST_CHECKED_H
#define RDMAFAST_CHECKED_H

#include <stdint.h>

#include <rdmafast/compiler.h>

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
 * Per-queue state that only the checked build keeps. The send, receive
 * and shared receive queues hold theirs as their first member, so that
 * cq.h, which sees none of those structs, reaches it through the pointer
 * it has (rf__chk_sq() and friends).
 */
enum {
	RF__CHK_QPS_UNKNOWN = 0,	/* not queried (a queue over host memory) */
	RF__CHK_QPS_BASE = 1		/* + enum ibv_qp_state: RESET 1 ... ERR 7 */
};
#define RF__CHK_QPS(ibv_state) (RF__CHK_QPS_BASE + (ibv_state))
enum { RF__CHK_RESET = 1, RF__CHK_INIT, RF__CHK_RTR, RF__CHK_RTS, RF__CHK_SQD,
       RF__CHK_SQE, RF__CHK_ERR };

struct rf__chk_sq {
	const void *cq;		/* the CQ its requester CQEs go to (rf_cq_attach()) */
	uint32_t state;		/* RF__CHK_*, what was last known */
	uint32_t idle;		/* empty polls with unrung WQEs (rf__chk_cq_idle()) */
	uint32_t idle_pi;	/* pi and ci at the first of them */
	uint32_t idle_ci;
	/* the verbs glue's way to ask the QP's state (rf_qp_init_ibv()) */
	int (*query)(const void *arg);
	const void *query_arg;
};

struct rf__chk_rq {
	const void *cq;		/* the CQ its receive CQEs go to */
};

struct rf__chk_srq {
	uint32_t freed;		/* WQEs returned by completions */
};

struct rf__chk_cq {
	uint32_t ci_written;	/* what rdmafast last wrote to the CI record */
	uint32_t ndetached;
	uint32_t detached[8];	/* the last QPNs detached: their CQEs are expected stale */
};

#define rf__chk_sq(sq)  ((struct rf__chk_sq *)(void *)(sq))
#define rf__chk_rq(rq)  ((struct rf__chk_rq *)(void *)(rq))
#define rf__chk_srq(s)  ((struct rf__chk_srq *)(void *)(s))

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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* RF__CHK(x): x in the checked build, nothing otherwise. */
#define RF__CHK(x) x

/*
 * The program's report hook, if it defines one (a weak reference: without
 * a definition its address is NULL and the default below reports).
 */
__attribute__((weak)) void rf_checked_report(const struct rf_checked_event *ev);

/* The default report: the message on stderr, then abort(). */
static inline RF_COLD void rf__chk_report(const struct rf_checked_event *ev)
{
	if (rf_checked_report) {
		rf_checked_report(ev);
		return;
	}
	fprintf(stderr, "%s\n", ev->msg);
	abort();
}

static inline RF_COLD void rf__chk_rule(int rule, const char **name, const char **text,
					const char **section)
{
	static const struct { const char *name, *text, *section; } t[RF_CHK_NRULES] = {
		{ "", "", "" },
		{ "not-attached",
		  "attach every QP to the CQ its completions arrive on (rf_cq_attach()) before posting",
		  "rdmafast(7), DO NOT MIX" },
		{ "no-recv-queue",
		  "a QP's receive completions need its rq or its srq in rf_cq_attach(), its "
		  "requester completions its sq",
		  "rdmafast(7), DO NOT MIX" },
		{ "qp-state",
		  "post sends only once the QP is in RTS (rf_qp_connect_ibv())",
		  "rdmafast(7), OTHER RULES" },
		{ "qp-error",
		  "a QP in the error state executes nothing: its WQEs complete flushed",
		  "rdmafast(7), OTHER RULES" },
		{ "no-ring",
		  "the device sees nothing before rf_sq_ring() (or RF_SEND_RING)",
		  "rdmafast(7), DESCRIPTION" },
		{ "signaling",
		  "only a signaled WQE frees send-queue space: signal at least one WQE per "
		  "queue's worth",
		  "rdmafast(7), QUEUE SIZING" },
		{ "atomic-align",
		  "an atomic's remote address is aligned to its size (8 bytes; 4 for the "
		  "32-bit masked ones)",
		  "rdmafast(7), OTHER RULES" },
		{ "second-poller",
		  "one poller per CQ: never ibv_poll_cq() a CQ rdmafast polls",
		  "rdmafast(7), DO NOT MIX" },
		{ "cq-size",
		  "a CQ must never hold more CQEs than entries: size it for the signaled "
		  "sends and posted receives of every QP attached",
		  "rdmafast(7), QUEUE SIZING" },
	};
	*name = t[rule].name;
	*text = t[rule].text;
	*section = t[rule].section;
}

/*
 * Report a broken rule: fmt says what happened at this queue. qpn and
 * cqn ~0U when not known.
 */
static inline RF_COLD __attribute__((format(printf, 4, 5)))
void rf__chk_fail(int rule, uint32_t qpn, uint32_t cqn, const char *fmt, ...)
{
	struct rf_checked_event ev;
	char what[256], msg[640];
	const char *text;
	int n = 0;
	va_list ap;

	if (RF_CHECKED_SKIP & (1U << rule))
		return;
	rf__chk_rule(rule, &ev.name, &text, &ev.section);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	n = snprintf(msg, sizeof(msg), "rdmafast:");
	if (qpn != ~0U)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, " QPN 0x%06x", qpn);
	if (cqn != ~0U && n < (int)sizeof(msg))
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, " CQN 0x%06x", cqn);
	if (n < (int)sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s [rule %s: %s; see %s]",
			 what, ev.name, text, ev.section);
	ev.rule = (enum rf_checked_rule)rule;
	ev.qpn = qpn;
	ev.cqn = cqn;
	ev.msg = msg;
	rf__chk_report(&ev);
}

#else

#define RF__CHK(x) ((void)0)

#endif /* RF_CHECKED */

RF_END_DECLS

#endif /* RDMAFAST_CHECKED_H */
