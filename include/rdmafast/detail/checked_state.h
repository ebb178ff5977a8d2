/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/checked_state.h - what the checked build (-DRF_CHECKED,
 * rdmafast/checked.h) keeps in each queue, and RF__CHK(), the statement
 * that only it compiles. The queue structs are built from these (sq.h,
 * rq.h, srq.h, cq_types.h); the checks that read them are in
 * detail/checked.h.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CHECKED_STATE_H
#define RDMAFAST_DETAIL_CHECKED_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>

RF_BEGIN_DECLS

/*
 * Per-queue state that only the checked build keeps. The send, receive
 * and shared receive queues hold theirs as their first member, so that
 * cq.h, which sees none of those structs, reaches it through the pointer
 * it has (rf__chk_sq() and friends; NULL stays NULL).
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

#ifdef RF_CHECKED

/* RF__CHK(x): x in the checked build, nothing otherwise. */
#define RF__CHK(x) x

/* qpn attached again: its CQEs are no longer expected stale. */
static inline RF_COLD void rf__chk_cq_undetach(struct rf__chk_cq *c, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < 8; i++)
		if (c->detached[i] == (qpn | 0x80000000U))
			c->detached[i] = 0;
}

/*
 * qpn leaves the CQ cq (whose state is c), its send and receive queues'
 * states sq and rq with it (NULL: none; a queue attached to another CQ
 * since keeps that): its CQEs may still arrive (flushes).
 */
static inline RF_COLD void rf__chk_cq_detach(struct rf__chk_cq *c, const void *cq,
					     struct rf__chk_sq *sq, struct rf__chk_rq *rq,
					     uint32_t qpn)
{
	if (sq && sq->cq == cq)
		sq->cq = NULL;
	if (rq && rq->cq == cq)
		rq->cq = NULL;
	c->detached[c->ndetached++ & 7] = qpn | 0x80000000U;
}

#else

#define RF__CHK(x) ((void)0)

#endif /* RF_CHECKED */

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CHECKED_STATE_H */
