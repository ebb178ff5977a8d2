/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq.h - the completion queue: take it over, route its QPs'
 * completions, peek and advance, arm for events.
 *
 *	cqe = rf_cq_peek(cq);      next software-owned CQE or NULL
 *	...read it (hw/cqe.h)...
 *	rf_cq_advance(cq, 1);
 *	rf_cq_update_ci(cq);       once per batch
 *
 * That is the raw level. cq_poll.h decodes CQEs into struct rf_wc records
 * and retires the WQEs they complete: rf_cq_poll().
 *
 * Ownership: rf_cq_init() rewrites every entry to op_own 0xf1 (INVALID,
 * owner 1), so an entry is ours exactly when its owner bit equals the lap
 * parity of ci and the hot path tests only that bit (hw/cqe.h). Take a CQ
 * over before anything completed on it.
 *
 * Events: rf_cq_arm() with the CQ's own arm sequence number, and
 * rf_cq_event_ack() after each ibv_get_cq_event(). libibverbs must neither
 * poll nor arm a CQ rdmafast polls: rdmafast(7), DO NOT MIX.
 *
 * Threading: one thread polls a CQ (and, through retirement, writes the
 * attached queues' consumer indexes; see sq.h). No locks, no atomics.
 */
#ifndef RDMAFAST_CQ_H
#define RDMAFAST_CQ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/checked.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/cq_types.h>	/* struct rf_cq */
#include <rdmafast/detail/cq.h>
#include <rdmafast/detail/cq_state.h>

RF_BEGIN_DECLS

struct rf_cq_attr {
	void     *buf;		/* mlx5dv_cq.buf */
	uint32_t  cqe_cnt;	/* mlx5dv_cq.cqe_cnt, power of two */
	uint32_t  cqe_size;	/* mlx5dv_cq.cqe_size: 64 or 128 */
	__be32   *dbrec;	/* mlx5dv_cq.dbrec */
	void     *uar;		/* mlx5dv_cq.cq_uar (NULL: no arming) */
	uint32_t  cqn;
	/*
	 * The mini-CQE format the CQ was created with (mlx5dv_cq_init_attr's
	 * cqe_comp_res_format: one RF_MINI_CQE_RES_FORMAT_* bit), or 0 for
	 * a CQ without compression. Only CSUM_STRIDX changes the decoding.
	 */
	uint32_t  mini_format;
};

/*
 * rf_cq_init - take over a CQ on which nothing has completed yet: reset
 * every entry to RF_CQE_INIT_OP_OWN, ci to 0 and the CI record to 0.
 * Returns 0 or -EINVAL. Cold.
 */
static inline RF_COLD int rf_cq_init(struct rf_cq *cq, const struct rf_cq_attr *a)
{
	uint32_t i, log_n = 0;

	if (!a->buf || !a->dbrec || !a->cqe_cnt ||
	    (a->cqe_cnt & (a->cqe_cnt - 1)) ||
	    (a->cqe_size != 64 && a->cqe_size != 128))
		return -EINVAL;
	while ((1U << log_n) < a->cqe_cnt)
		log_n++;
	__builtin_memset(cq, 0, sizeof(*cq));
	cq->buf = (uint8_t *)a->buf + a->cqe_size - sizeof(struct rf_cqe64);
	cq->cqe_mask = a->cqe_cnt - 1;
	cq->cqe_cnt = a->cqe_cnt;
	cq->cqe_shift = a->cqe_size == 128 ? 7 : 6;
	cq->cqe_size = a->cqe_size;
	cq->left = a->cqe_cnt;
	cq->dbrec = a->dbrec;
	cq->uar = (uint8_t *)a->uar;
	cq->cqn = a->cqn;
	cq->log_n = log_n;
	cq->zip_stridx = a->mini_format == RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX;
	cq->none.qpn = ~0U;
	cq->last = &cq->none;
	cq->cur = cq->buf;
	rf__cq_req_forget(cq);	/* lap 0: owner 0 */
	for (i = 0; i < a->cqe_cnt; i++) {
		struct rf_cqe64 *e = (struct rf_cqe64 *)(cq->buf + ((size_t)i << cq->cqe_shift));

		e->op_own = RF_CQE_INIT_OP_OWN;
		e->signature = 0xff;
	}
	rf_dma_wmb();	/* entries reset before the device learns ci */
	a->dbrec[RF_CQ_SET_CI] = 0;
	a->dbrec[RF_CQ_ARM_DB] = 0;
	return 0;
}

/*
 * rf_cq_attach - route completions of QP qpn: requester CQEs to sq, receive
 * CQEs to srq if given, else to rq. Any of them may be NULL. Attaching a
 * QPN again replaces its entry. Returns 0 or -ENOSPC (RF_CQ_MAX_QPS).
 */
static inline int rf_cq_attach(struct rf_cq *cq, uint32_t qpn, struct rf_sq *sq,
			       struct rf_rq *rq, struct rf_srq *srq)
{
	uint32_t i;

	for (i = 0; i < cq->nqp && cq->qp[i].qpn != qpn; i++)
		;
	if (i == RF_CQ_MAX_QPS)
		return -ENOSPC;
	cq->qp[i].qpn = qpn & 0xffffff;
	cq->qp[i].sq = sq;
	cq->qp[i].rq = rq;
	cq->qp[i].srq = srq;
	if (i == cq->nqp)
		cq->nqp++;
#ifdef RF_CHECKED
	if (sq)
		rf__chk_sq(sq)->cq = cq;
	if (rq)
		rf__chk_rq(rq)->cq = cq;
	rf__chk_cq_undetach(&cq->chk, qpn & 0xffffff);
#endif
	cq->last = &cq->none;
	rf__cq_req_forget(cq);
	return 0;
}

/*
 * rf_cq_detach - stop routing qpn (before destroying the QP). CQEs that
 * still arrive for it are dropped and counted in nstale. Returns 0 or
 * -ENOENT.
 */
static inline int rf_cq_detach(struct rf_cq *cq, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < cq->nqp; i++) {
		if (cq->qp[i].qpn == qpn) {
			RF__CHK(rf__chk_cq_detach(&cq->chk, cq, rf__chk_sq(cq->qp[i].sq),
						  rf__chk_rq(cq->qp[i].rq), qpn));
			cq->qp[i] = cq->qp[--cq->nqp];
			cq->last = &cq->none;
			rf__cq_req_forget(cq);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * rf_cq_set_srq - receive completions of QPs that are not attached (XRC
 * target QPs, which the application never sees) return WQEs to srq.
 */
static inline void rf_cq_set_srq(struct rf_cq *cq, struct rf_srq *srq)
{
	cq->srq = srq;
}

/*
 * rf_cq_peek - the CQE at ci if software owns it, else NULL. Consumes
 * nothing. After a non-NULL return the whole CQE may be read: the owner
 * byte is ordered before the body (rf_dma_rmb()). The owner bit must
 * equal the lap parity of ci, which want carries (rf_cq_init() made
 * unwritten entries look hardware-owned).
 */
RF_INLINE struct rf_cqe64 *rf_cq_peek(const struct rf_cq *cq)
{
	struct rf_cqe64 *cqe = (struct rf_cqe64 *)cq->cur;
	uint8_t o = *(volatile uint8_t *)&cqe->op_own;

	if ((o ^ rf__cqe_tail_op_own(cq->want)) & RF_CQE_OWNER_MASK)
		return NULL;
	rf_dma_rmb();	/* owner byte before the CQE body */
	return cqe;
}

/*
 * rf_cq_advance - consume n CQEs (peeked or skipped). The cursor and its
 * lap parity are recomputed from ci: the raw level pays a mask and shift
 * here so that rf_cq_poll() pays none.
 */
RF_INLINE void rf_cq_advance(struct rf_cq *cq, uint32_t n)
{
	uint32_t ci = cq->ci + n;

	cq->ci = ci;
	cq->cur = (uint8_t *)rf_cq_cqe(cq, ci);
	cq->left = cq->cqe_cnt - (ci & cq->cqe_mask);
	cq->want = (cq->want & ~RF__CQE_TAIL_OWNER) |
		   (ci & cq->cqe_cnt ? RF__CQE_TAIL_OWNER : 0);
}

/*
 * Compressed CQEs at the raw level. A CQE that rf_cq_peek() returned with
 * rf_cqe_format(op_own) == RF_CQE_FORMAT_COMPRESSED is the title of a
 * zip of rf_cq_zip_len() completions: the title carries what they
 * share (QPN, CQE opcode, flags_rqpn, imm, and for responders the first
 * wqe_counter), each mini-CQE what differs (byte count, and the WQE
 * counter and opcode of a requester, or the responder's hash, checksum
 * or stride index). The zip occupies that many entries from the
 * title on; the device writes the title and the mini-CQE arrays only (in
 * the entries after the title, 1, 8, 16, ...), whose bytes overwrite the
 * owner bits. rf_cq_zip_advance() consumes it: it restores ownership
 * of every entry the zip covered, so the next lap sees them as the
 * hardware's, then advances past them.
 */
RF_INLINE uint32_t rf_cq_zip_len(const struct rf_cqe64 *title)
{
	return rf_be32toh(title->byte_cnt);
}

/*
 * The i-th mini-CQE (0 <= i < rf_cq_zip_len()) of the zip whose
 * title is at ci: eight to an entry, in the entry after the title, then in
 * every eighth entry from the title on.
 */
RF_INLINE const struct rf_mini_cqe8 *rf_cq_zip_mini(const struct rf_cq *cq, uint32_t i)
{
	uint32_t slot = i < RF_MINI_CQE_PER_SLOT ? 1 : i & ~(uint32_t)(RF_MINI_CQE_PER_SLOT - 1);

	return (const struct rf_mini_cqe8 *)rf_cq_cqe(cq, cq->ci + slot) +
	       (i & (RF_MINI_CQE_PER_SLOT - 1));
}

/*
 * Consume the zip whose title is at ci (see above). A title whose
 * count no zip can have (below 2, above the CQ's entries) is consumed
 * alone.
 */
RF_INLINE void rf_cq_zip_advance(struct rf_cq *cq)
{
	uint32_t n = rf_cq_zip_len(rf_cq_cqe(cq, cq->ci));

	if (n - 2 > cq->cqe_cnt - 2)
		n = 1;

	rf__cq_restore_owner(cq, cq->ci, n);
	cq->zip_done = 0;
	rf_cq_advance(cq, n);
}

/*
 * rf_cq_update_ci - tell the device how far software has consumed, so it
 * may reuse those entries. Once per batch is enough; the CQ must never
 * hold more completions than entries either way.
 */
RF_INLINE void rf_cq_update_ci(struct rf_cq *cq)
{
	*(volatile __be32 *)&cq->dbrec[RF_CQ_SET_CI] = rf_htobe32(cq->ci & 0xffffff);
	RF__CHK(cq->chk.ci_written = cq->ci & 0xffffff);
}

/*
 * rf_cq_arm - request one completion event on the CQ's channel: for the
 * next CQE (solicited 0) or the next solicited/error one (solicited 1),
 * counted from the current ci. Poll again after arming: a CQE that arrived
 * before the arm raises no event. The arm word goes to the doorbell record
 * and, with the CQN, in one 8-byte MMIO store to the UAR's CQ doorbell.
 */
RF_INLINE void rf_cq_arm(struct rf_cq *cq, int solicited)
{
	uint32_t ci = cq->ci & 0xffffff;
	uint32_t word = ((cq->arm_sn & 3) << 28) |
			(solicited ? RF_CQ_DB_REQ_NOT_SOL : RF_CQ_DB_REQ_NOT) | ci;
	__be32 db[2];
	uint64_t v;

	db[0] = rf_htobe32(word);
	db[1] = rf_htobe32(cq->cqn);
	__builtin_memcpy(&v, db, sizeof(v));
	cq->dbrec[RF_CQ_SET_CI] = rf_htobe32(ci);
	RF__CHK(cq->chk.ci_written = ci);
	*(volatile __be32 *)&cq->dbrec[RF_CQ_ARM_DB] = db[0];
	rf_mmio_wc_start();	/* dbrec stores before the MMIO store */
	rf_mmio_write64(cq->uar + RF_CQ_DOORBELL, v);
	rf_mmio_flush_writes();	/* the arm leaves the CPU now */
}

/*
 * rf_cq_event_ack - count an event received with ibv_get_cq_event() for
 * this CQ: the next arm must carry the next sequence number. (Still call
 * ibv_ack_cq_events() as verbs requires.)
 */
RF_INLINE void rf_cq_event_ack(struct rf_cq *cq)
{
	cq->arm_sn++;
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_H */
