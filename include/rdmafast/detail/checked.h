/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/checked.h - the checks of the checked build (-DRF_CHECKED,
 * rdmafast/checked.h) that need the send queue, the receive queues and the
 * CQ together, and their report: called by the posts (sq_slots.h,
 * detail/sq_post.h, sq_atomic.h) and by rf_cq_poll() (cq_poll.h,
 * detail/cq_decode.h). Without RF_CHECKED it defines nothing.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CHECKED_H
#define RDMAFAST_DETAIL_CHECKED_H

#include <stdint.h>
#ifdef RF_CHECKED
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#endif

#include <rdmafast/compiler.h>
#include <rdmafast/checked.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>

RF_BEGIN_DECLS

#ifdef RF_CHECKED

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

static inline RF_COLD const char *rf__chk_state_name(uint32_t s)
{
	static const char *const n[] = { "an unknown state", "RESET", "INIT", "RTR", "RTS",
					 "SQD", "SQE", "ERROR" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "an unknown state";
}

/* The CQN of the CQ a send queue is attached to, ~0U when none. */
static inline RF_COLD uint32_t rf__chk_sq_cqn(const struct rf_sq *sq)
{
	const struct rf_cq *cq = (const struct rf_cq *)rf__chk_sq(sq)->cq;

	return cq ? cq->cqn : ~0U;
}

/*
 * Signaled WQEs the send queue holds (posted, not retired), counted on
 * the WQEs themselves from ci to pi; stops at max.
 */
static inline RF_COLD uint32_t rf__chk_sq_signaled(const struct rf_sq *sq, uint32_t max)
{
	uint32_t s = rf_sq_ci(sq), n = 0, steps = 0;

	while (s != sq->pi && n < max && steps++ < sq->wqe_cnt) {
		if (rf_sq_wqe(sq, s)->fm_ce_se & RF_WQE_CTRL_CQ_UPDATE)
			n++;
		s = sq->slot[s & sq->wqe_mask].end;
	}
	return n;
}

/*
 * Completions that can still arrive on cq: the signaled WQEs of the send
 * queues attached to it and the receives posted to its receive queues
 * and SRQs (each SRQ once, all of it: any of its receives may complete
 * here).
 */
static inline RF_COLD uint64_t rf__chk_cq_pending(const struct rf_cq *cq, uint32_t max)
{
	uint64_t n = 0;
	uint32_t i, j;

	for (i = 0; i < cq->nqp; i++) {
		const struct rf_cq_qp *q = &cq->qp[i];

		if (q->sq && rf__chk_sq(q->sq)->cq == cq)
			n += rf__chk_sq_signaled(q->sq, max + 1);
		if (q->rq && rf__chk_rq(q->rq)->cq == cq)
			n += q->rq->head - q->rq->tail;
		if (q->srq && q->srq != cq->srq) {
			for (j = 0; j < i && cq->qp[j].srq != q->srq; j++)
				;
			if (j == i)
				n += q->srq->counter - rf__chk_srq(q->srq)->freed;
		}
	}
	if (cq->srq)
		n += cq->srq->counter - rf__chk_srq(cq->srq)->freed;
	return n;
}

/* RF_CHK_CQ_SIZE, for a post to qpn (~0U: a poll). */
static inline RF_COLD void rf__chk_cq_size(const struct rf_cq *cq, uint32_t qpn)
{
	uint64_t n;

	if (!cq)
		return;
	n = rf__chk_cq_pending(cq, cq->cqe_cnt);
	if (n > cq->cqe_cnt)
		rf__chk_fail(RF_CHK_CQ_SIZE, qpn, cq->cqn,
			     "%llu completions can be outstanding on a CQ of %u entries: when "
			     "they arrive unpolled the device overruns it (IBV_EVENT_CQ_ERR) and "
			     "its QPs stall", (unsigned long long)n, cq->cqe_cnt);
}

/* The QP's state as last known, asked again while it is not RTS. */
static inline RF_COLD uint32_t rf__chk_sq_state(struct rf_sq *sq)
{
	struct rf__chk_sq *c = rf__chk_sq(sq);

	if (c->query && c->state != RF__CHK_RTS) {
		int s = c->query(c->query_arg);

		if (s >= 0)
			c->state = RF__CHK_QPS((uint32_t)s);
	}
	return c->state;
}

/* A send post (one-call or rf_sq_reserve()) begins. */
static inline RF_COLD void rf__chk_sq_post(struct rf_sq *sq)
{
	struct rf__chk_sq *c = rf__chk_sq(sq);
	uint32_t s;

	if (!c->cq)
		rf__chk_fail(RF_CHK_NOT_ATTACHED, sq->qpn, ~0U,
			     "send posted to a queue attached to no CQ: rf_cq_poll() would "
			     "drop its completions");
	if (c->state == RF__CHK_RTS || c->state == RF__CHK_QPS_UNKNOWN)
		return;
	s = rf__chk_sq_state(sq);
	if (s >= RF__CHK_RESET && s <= RF__CHK_RTR)
		rf__chk_fail(RF_CHK_QP_STATE, sq->qpn, rf__chk_sq_cqn(sq),
			     "send posted while the QP is in %s: the device ignores it and "
			     "nothing will complete (ibv_post_send() would fail)",
			     rf__chk_state_name(s));
	else if (s == RF__CHK_ERR)
		rf__chk_fail(RF_CHK_QP_ERROR, sq->qpn, rf__chk_sq_cqn(sq),
			     "send posted while the QP is in the error state (an error "
			     "completion was polled, or the QP was moved there): it will "
			     "only complete with RF_WC_WR_FLUSH_ERR");
}

/* A post found no room (-ENOSPC). */
static inline RF_COLD void rf__chk_sq_full(struct rf_sq *sq)
{
	if (!(sq->fm_ce_se & RF_WQE_CTRL_CQ_UPDATE) && !rf__chk_sq_signaled(sq, 1))
		rf__chk_fail(RF_CHK_SIGNALING, sq->qpn, rf__chk_sq_cqn(sq),
			     "-ENOSPC with %u BBs posted and none of them signaled: no "
			     "completion will ever free them, every post will fail",
			     sq->pi - rf_sq_ci(sq));
}

/* A WQE was committed; sq->pi is past it. */
static inline RF_COLD void rf__chk_sq_posted(struct rf_sq *sq, int signaled)
{
	if (signaled)
		rf__chk_cq_size((const struct rf_cq *)rf__chk_sq(sq)->cq, sq->qpn);
	else if (rf_sq_space(sq) == 0 && !rf__chk_sq_signaled(sq, 1))
		rf__chk_fail(RF_CHK_SIGNALING, sq->qpn, rf__chk_sq_cqn(sq),
			     "this unsignaled WQE fills the send queue (%u BBs) and none of "
			     "the WQEs posted is signaled: nothing will complete and every "
			     "later post returns -ENOSPC", sq->wqe_cnt);
}

/* An atomic of size bytes at raddr. */
static inline RF_COLD void rf__chk_atomic(const struct rf_sq *sq, uint64_t raddr,
					  uint32_t size)
{
	if (raddr & (size - 1))
		rf__chk_fail(RF_CHK_ATOMIC_ALIGN, sq->qpn, rf__chk_sq_cqn(sq),
			     "%u-byte atomic posted at remote address 0x%llx: the responder "
			     "refuses it (RF_WC_REM_INV_REQ_ERR) and the QP goes to the error "
			     "state", size, (unsigned long long)raddr);
}

/*
 * A CQE that rf_cq_poll() drops (cq->nstale): expected for a QP detached
 * from this CQ, a broken rule otherwise.
 */
static inline RF_COLD void rf__chk_cq_stale(struct rf_cq *cq, const struct rf_cq_qp *q,
					    uint32_t qpn, int req)
{
	uint32_t i;

	for (i = 0; i < 8; i++)
		if (cq->chk.detached[i] == (qpn | 0x80000000U))
			return;
	if (!q)
		rf__chk_fail(RF_CHK_NOT_ATTACHED, qpn, cq->cqn,
			     "a %s completion for a QP never attached to this CQ was dropped "
			     "(counted in nstale)", req ? "send" : "receive");
	else if (req)
		rf__chk_fail(RF_CHK_NO_RECV_QUEUE, qpn, cq->cqn,
			     "a send completion was dropped (counted in nstale): the QP is "
			     "attached to this CQ with a NULL sq");
	else
		rf__chk_fail(RF_CHK_NO_RECV_QUEUE, qpn, cq->cqn,
			     "a receive completion was dropped (counted in nstale): the QP is "
			     "attached to this CQ with neither rq nor srq (a QP that receives "
			     "through an SRQ is attached with its srq)");
}
/* An error completion polled for q: its QP is in the error state now. */
static inline RF_COLD void rf__chk_cq_error(const struct rf_cq_qp *q)
{
	if (q->sq)
		rf__chk_sq(q->sq)->state = RF__CHK_ERR;
}

/*
 * rf_cq_poll() begins: the consumer index record holds what rdmafast
 * wrote last, unless someone else polled (libmlx5's poll writes its own
 * index there).
 */
static inline RF_COLD void rf__chk_cq_poll_begin(struct rf_cq *cq)
{
	uint32_t rec = rf_be32toh(cq->dbrec[RF_CQ_SET_CI]) & 0xffffff;

	if (rec != cq->chk.ci_written) {
		rf__chk_fail(RF_CHK_SECOND_POLLER, ~0U, cq->cqn,
			     "the CQ's consumer index record says %u, rdmafast wrote %u: "
			     "something else (ibv_poll_cq()?) consumed CQEs of this CQ, whose "
			     "completions are lost or returned twice", rec, cq->chk.ci_written);
		cq->chk.ci_written = rec;
	}
	rf__chk_cq_size(cq, ~0U);
}

/*
 * rf_cq_poll() found nothing: a send queue attached here whose WQEs wait
 * for a ring, with pi and ci still, for RF_CHECKED_IDLE_POLLS empty polls.
 */
static inline RF_COLD void rf__chk_cq_idle(struct rf_cq *cq)
{
	uint32_t i;

	for (i = 0; i < cq->nqp; i++) {
		struct rf_sq *sq = cq->qp[i].sq;
		struct rf__chk_sq *c;

		if (!sq || rf__chk_sq(sq)->cq != cq)
			continue;
		c = rf__chk_sq(sq);
		if (sq->pi == sq->bf_rung_pi - sq->no_bf_bias) {
			c->idle = 0;
			continue;
		}
		if (!c->idle || c->idle_pi != sq->pi || c->idle_ci != rf_sq_ci(sq)) {
			c->idle = 1;
			c->idle_pi = sq->pi;
			c->idle_ci = rf_sq_ci(sq);
			continue;
		}
		if (++c->idle == RF_CHECKED_IDLE_POLLS)
			rf__chk_fail(RF_CHK_NO_RING, sq->qpn, cq->cqn,
				     "%u BBs committed and not rung, %u empty polls since: "
				     "the device has not seen them and they will never complete "
				     "(call rf_sq_ring())",
				     sq->pi - (sq->bf_rung_pi - sq->no_bf_bias), c->idle);
	}
}

#endif /* RF_CHECKED */

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CHECKED_H */
