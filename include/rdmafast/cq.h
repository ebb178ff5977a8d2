/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq.h - the completion queue: peek, poll, advance, arm.
 *
 * Two levels:
 *
 *   raw     cqe = rf_cq_peek(cq);      next software-owned CQE or NULL
 *           ...read it (hw/cqe.h)...
 *           rf_cq_advance(cq, 1);
 *           rf_cq_update_ci(cq);       once per batch
 *
 *   decoded n = rf_cq_poll(cq, wc, max);  up to max struct rf_wc records;
 *                                     retires SQ/RQ/SRQ slots; updates CI
 *
 * rf_cq_poll() maps a CQE to its queue by QPN through a small table of
 * attached QPs (rf_cq_attach()) with the last match cached, which makes the
 * usual one or two QPs per CQ a single compare. Successful requester CQEs
 * have a faster path still: one compare of the CQE's last 8 bytes (op_own:
 * owned, requester, normal format; sop_drop_qpn: the last requester CQE's
 * QP and WQE opcode) replaces the ownership test, the QPN lookup and the
 * opcode decoding (struct rf_cq, want). Requester CQEs retire SQ
 * basic blocks through the SQ's side table (one CQE retires every earlier
 * unsignaled WQE, rdmafast/sq.h); responder CQEs return the RQ slot's
 * wr_id or put the SRQ WQE back on the free list. CQEs for QPNs that are
 * not attached (a destroyed QP: libmlx5 stops cleaning a CQ once
 * mlx5dv_init_obj() made it DV-owned) are consumed and counted in
 * cq->nstale, never returned.
 *
 * Ownership: rf_cq_init() rewrites every entry to op_own 0xf1 (INVALID,
 * owner 1), so an entry is ours exactly when its owner bit equals the lap
 * parity of ci and the hot path tests only that bit (hw/cqe.h). Take a CQ
 * over before anything completed on it.
 *
 * Scatter-to-CQE: small receives (<= 32 bytes with 64-byte CQEs, <= 64
 * with 128-byte ones) and, on QPs created with sq_sig_all or
 * MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, small READ/atomic responses may
 * arrive inside the CQE instead of the buffer. rf_cq_poll() copies them to
 * where the WQE pointed (slow path, only for such CQEs). rf_cq_peek() users
 * must do it themselves (rf_cqe_format()). Buffers the CPU cannot write
 * (GPU memory) need scatter-to-CQE disabled at QP creation: rdmafast's
 * rf_qp_create_ibv() does that by default (rdmafast/verbs.h).
 *
 * Not supported: compressed CQEs (create CQs without compression; such a
 * CQE is reported as RF_WC_GENERAL_ERR), CQ resize, tag matching.
 *
 * Events: rf_cq_arm() with the CQ's own arm sequence number, and
 * rf_cq_event_ack() after each ibv_get_cq_event(). Never call
 * ibv_req_notify_cq() or ibv_poll_cq() on a CQ rdmafast polls: libmlx5
 * would arm with its own, stale consumer index and events get lost (UCX
 * issue #11728).
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
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/hw/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>

RF_BEGIN_DECLS

/* ---- The decoded completion -------------------------------------------- */

/* Numbered as enum ibv_wc_opcode where libibverbs has the operation. */
enum rf_wc_opcode {
	RF_WC_SEND                = 0,
	RF_WC_RDMA_WRITE          = 1,
	RF_WC_RDMA_READ           = 2,
	RF_WC_COMP_SWAP           = 3,
	RF_WC_FETCH_ADD           = 4,
	RF_WC_BIND_MW             = 5,
	RF_WC_LOCAL_INV           = 6,
	RF_WC_MASKED_COMP_SWAP    = 0x40,	/* no libibverbs equivalent */
	RF_WC_MASKED_FETCH_ADD    = 0x41,
	RF_WC_NOP                 = 0x42,
	RF_WC_RECV                = 128,
	RF_WC_RECV_RDMA_WITH_IMM  = 129,
	RF_WC_UNKNOWN             = 0xff,
};

enum {
	RF_WC_WITH_IMM  = 1 << 0,	/* imm holds the immediate */
	RF_WC_WITH_INV  = 1 << 1,	/* imm holds the invalidated rkey */
	RF_WC_GRH       = 1 << 2,	/* a GRH precedes the data in the buffer */
	RF_WC_SOLICITED = 1 << 3,	/* the sender asked for a solicited event */
	RF_WC_SRQ       = 1 << 4,	/* the receive came from an SRQ */
	RF_WC_SCATTERED = 1 << 5,	/* data arrived in the CQE and was copied */
};

/*
 * struct rf_wc - one completion, 32 bytes.
 * @wr_id:       of the completed WQE (for a requester CQE: the signaled
 *               WQE; earlier unsignaled ones were retired silently)
 * @byte_len:    responder: bytes received (a UD receive includes the 40-byte
 *               GRH area); RDMA READ: bytes read; atomics: 4 or 8. Not
 *               part of other requester completions (sends, writes, NOP,
 *               UMR), as in ibv_wc: rf_cq_poll()'s fast path leaves it
 *               as it was
 * @imm:         responder, RF_WC_WITH_IMM: the immediate in network order,
 *               exactly as the sender passed it; RF_WC_WITH_INV: the
 *               rkey, see rf_wc_inv_rkey(). Not written for requester
 *               completions (like ibv_wc, fields outside an opcode's set
 *               are undefined), which keeps the hot poll short.
 * @qp_num:      local QP
 * @src_qp:      responder only: the sending QP (useful on UD)
 * @status:      enum rf_wc_status (hw/cqe.h), numbered as ibv_wc_status
 * @opcode:      enum rf_wc_opcode
 * @flags:       RF_WC_*
 * @vendor_err:  the vendor syndrome of an error CQE
 * @wqe_counter: requester: first BB of the WQE; RQ: slot; SRQ: WQE index
 * @sl:          responder on IB: the service level (0 for requesters)
 */
struct rf_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	__be32   imm;
	uint32_t qp_num;
	uint32_t src_qp;
	uint8_t  status;
	uint8_t  opcode;
	uint8_t  flags;
	uint8_t  vendor_err;
	uint16_t wqe_counter;
	uint8_t  sl;
	uint8_t  rsvd;
};
RF_STATIC_ASSERT(sizeof(struct rf_wc) == 32, "rf_wc size");
RF_STATIC_ASSERT(offsetof(struct rf_wc, vendor_err) == offsetof(struct rf_wc, status) + 3,
		 "status..vendor_err are copied as one word");

RF_INLINE uint32_t rf_wc_inv_rkey(const struct rf_wc *wc)
{
	return rf_be32toh(wc->imm);
}

/* status, opcode, flags, vendor_err: what one table entry supplies. */
struct rf__wc_kind {
	uint8_t status;
	uint8_t opcode;
	uint8_t flags;
	uint8_t vendor_err;
};

/* ---- The CQ ------------------------------------------------------------ */

enum { RF_CQ_MAX_QPS = 16 };

/* The sop_drop_qpn word of no requester CQE (opcode 0xff, QPN 0xffffff). */
#define RF__CQ_NO_SOP 0xffffffffU

/*
 * 16 bytes of a completion record as eight 16-bit lanes (rf_cq.req_rec).
 * The alignment is lowered to 8 so that stores into a struct rf_wc array
 * (8-byte aligned) are unaligned vector stores.
 */
typedef uint16_t rf__v8u16 __attribute__((vector_size(16), aligned(8)));

/*
 * Bytes 56..63 of a CQE64 (sop_drop_qpn, wqe_counter, signature, op_own)
 * as one 8-byte load. The fast path of rf_cq_poll() compares them, with
 * wqe_counter and signature masked off, against rf_cq.want: one compare
 * tests ownership, CQE opcode, format, SE, QPN and WQE opcode. may_alias:
 * the same bytes are written as struct rf_cqe64 fields (tests, emulator).
 */
typedef uint64_t rf__cqe_tail_t __attribute__((may_alias, aligned(8)));

#if RF_LITTLE_ENDIAN
/* op_own is the top byte, sop_drop_qpn (as stored) the low word */
#define RF__CQE_TAIL_OWNER ((uint64_t)RF_CQE_OWNER_MASK << 56)
#define RF__CQE_TAIL_MATCH 0xff000000ffffffffULL
#else
/* op_own is the low byte, sop_drop_qpn the high word */
#define RF__CQE_TAIL_OWNER ((uint64_t)RF_CQE_OWNER_MASK)
#define RF__CQE_TAIL_MATCH 0xffffffff000000ffULL
#endif

/* The tail word's sop_drop_qpn part for a word as stored (rf__cqe_sop_raw()). */
RF_INLINE uint64_t rf__cqe_tail_sop(uint32_t sop_raw)
{
#if RF_LITTLE_ENDIAN
	return sop_raw;
#else
	return (uint64_t)sop_raw << 32;
#endif
}

RF_INLINE uint8_t rf__cqe_tail_op_own(uint64_t t)
{
#if RF_LITTLE_ENDIAN
	return (uint8_t)(t >> 56);
#else
	return (uint8_t)t;
#endif
}

/*
 * wqe_counter from a tail word, in the low 16 bits; the bits above are
 * other bytes of the word: masking with a slot mask or storing 16 bits
 * drops them, so no instruction is spent on zero-extending.
 */
RF_INLINE uint32_t rf__cqe_tail_counter(uint64_t t)
{
#if RF_LITTLE_ENDIAN
	return __builtin_bswap32((uint32_t)(t >> 16));
#else
	return (uint32_t)(t >> 16);
#endif
}

/* A QP whose completions arrive on this CQ, and where its queues are. */
struct rf_cq_qp {
	uint32_t       qpn;	/* ~0 for the "none" sentinel */
	struct rf_sq  *sq;	/* NULL if this CQ is not its send CQ */
	struct rf_rq  *rq;	/* NULL if it has no RQ here */
	struct rf_srq *srq;	/* its SRQ, if it receives through one */
};

/*
 * struct rf_cq - contains a pointer into itself (the match cache): do not
 * copy it after rf_cq_init().
 */
struct rf_cq {
	/*
	 * hot: rf_cq_poll(). cur, left and want's owner bit are ci's entry,
	 * kept so that the poll never derives them from ci (mask, variable
	 * shift, parity): move ci only with rf_cq_poll() or rf_cq_advance().
	 */
	uint8_t   *cur;		/* the CQE64 at ci (written) */
	/*
	 * The tail word (rf__cqe_tail_t, counter and signature 0) that the
	 * next CQE has on the requester fast path: op_own exactly the lap
	 * parity of ci (owned, opcode REQ, normal format, no SE) and the
	 * sop_drop_qpn word, as stored (WQE opcode and QPN), of the last
	 * requester CQE decoded the long way, with everything that word
	 * implies in req_*. A CQE matching it needs no QPN lookup, no opcode
	 * table, no UMR or missing-SQ test. Each QP usually posts one or a
	 * few opcodes, so the compare mostly hits; a miss costs the long way
	 * once and refills it. The sop part is RF__CQ_NO_SOP when empty. The
	 * owner bit flips at each wrap (written).
	 */
	uint64_t   want;
	/*
	 * For want's QP: its send queue, and that queue's wr_id table and
	 * wqe_mask, copied so that a batch loads them before its first CQE
	 * (they do not change after rf_sq_init(); attach a queue again if it
	 * is initialized again while attached). (written)
	 */
	struct rf_sq *req_sq;
	const struct rf__sq_wr_id *req_wr_id;
	uint16_t   req_mask;	/* < 0x8000 (rf_sq_init()), which the type tells the compiler */
	/*
	 * Whether want's WQE opcode reports a byte count (READ, atomics):
	 * only then does the fast path read byte_cnt (rf__cq_run()).
	 */
	uint16_t   req_len;
	uint32_t   ci;		/* consumer index, free running (written) */
	/*
	 * Bytes 16..31 of the record for want's sop (qp_num, src_qp 0, status,
	 * opcode, flags, vendor_err, wqe_counter 0, sl 0): the fast path
	 * stores all 16 bytes at once, then the counter.
	 */
	rf__v8u16  req_rec;
	size_t     cqe_size;	/* 64 or 128: the step to the next CQE64 (pointer-sized: one add) */
	/*
	 * Entries from cur to the end of the buffer, 1..cqe_cnt: a run of
	 * CQEs is bounded once by the smaller of this and the records wanted,
	 * instead of testing for the wrap at every CQE (written).
	 */
	uint32_t   left;
	uint8_t   *buf;		/* the CQE64 of entry 0: entry + cqe_size - 64 */
	__be32    *dbrec;	/* mlx5dv_cq.dbrec: [RF_CQ_SET_CI], [RF_CQ_ARM_DB] */
	uint32_t   cqe_mask;	/* cqe_cnt - 1 */
	uint32_t   cqe_cnt;
	uint32_t   cqe_shift;	/* 6 or 7 */
	uint32_t   nqp;
	struct rf_cq_qp *last;	/* last matched QP (written) */
	/* arming */
	uint8_t   *uar;		/* mlx5dv_cq.cq_uar */
	uint32_t   cqn;
	uint32_t   arm_sn;	/* 2-bit arm sequence number, counts events (written) */
	uint32_t   log_n;	/* log2(cqe_cnt) */
	uint64_t   nstale;	/* CQEs of unattached QPs dropped (written) */
	struct rf_srq *srq;	/* receives of unattached QPs go here (XRC), or NULL */
	struct rf_cq_qp none;
	struct rf_cq_qp qp[RF_CQ_MAX_QPS];
	/* what the empty fast path retires into (rf__cq_req_forget()) */
	struct rf_sq none_sq;
	struct rf__sq_wr_id none_wr_id;
	struct rf__sq_end none_end;
};

/*
 * Empty the requester fast path (want keeps its owner bit). A CQE can
 * still match the empty want (WQE opcode 0xff, QPN 0xffffff: no device
 * writes it, but a CQ holds whatever was written into it), so the fast
 * path's targets then are the CQ's own one-slot dummy queue and a record
 * of RF_WC_GENERAL_ERR, never NULL or a detached queue.
 */
RF_INLINE void rf__cq_req_forget(struct rf_cq *cq)
{
	struct {
		uint32_t qp_num, src_qp;
		struct rf__wc_kind kind;
		uint16_t wqe_counter;
		uint8_t  sl, rsvd;
	} rec = { 0xffffff, 0, { RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0 }, 0, 0, 0 };

	RF_STATIC_ASSERT(sizeof(rec) == 16, "record tail");
	__builtin_memcpy(&cq->req_rec, &rec, sizeof(rec));
	cq->want = (cq->want & RF__CQE_TAIL_OWNER) | rf__cqe_tail_sop(RF__CQ_NO_SOP);
	cq->req_sq = &cq->none_sq;
	cq->req_wr_id = &cq->none_wr_id;
	cq->req_mask = 0;
	cq->req_len = 0;
}

struct rf_cq_attr {
	void     *buf;		/* mlx5dv_cq.buf */
	uint32_t  cqe_cnt;	/* mlx5dv_cq.cqe_cnt, power of two */
	uint32_t  cqe_size;	/* mlx5dv_cq.cqe_size: 64 or 128 */
	__be32   *dbrec;	/* mlx5dv_cq.dbrec */
	void     *uar;		/* mlx5dv_cq.cq_uar (NULL: no arming) */
	uint32_t  cqn;
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
	cq->none.qpn = ~0U;
	cq->last = &cq->none;
	cq->cur = cq->buf;
	cq->none_sq.wr_id = &cq->none_wr_id;
	cq->none_sq.wqe_end = &cq->none_end;
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

/* The CQE64 of the entry at consumer index ci. */
RF_INLINE struct rf_cqe64 *rf_cq_cqe(const struct rf_cq *cq, uint32_t ci)
{
	return (struct rf_cqe64 *)(cq->buf + ((size_t)(ci & cq->cqe_mask) << cq->cqe_shift));
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
 * rf_cq_update_ci - tell the device how far software has consumed, so it
 * may reuse those entries. Once per batch is enough; the CQ must never
 * hold more completions than entries either way.
 */
RF_INLINE void rf_cq_update_ci(struct rf_cq *cq)
{
	*(volatile __be32 *)&cq->dbrec[RF_CQ_SET_CI] = rf_htobe32(cq->ci & 0xffffff);
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
	*(volatile __be32 *)&cq->dbrec[RF_CQ_ARM_DB] = db[0];
	rf_wc_start();	/* dbrec stores before the MMIO store */
	rf_mmio_write64(cq->uar + RF_CQ_DOORBELL, v);
	rf_wc_flush();	/* the arm leaves the CPU now */
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

/* ---- Decoding ---------------------------------------------------------- */

/*
 * Requester: the completed WQE's opcode (CQE byte 56), & 0x1f, to the
 * record's kind. UMR (0x25) lands on slot 5 and is refined from the WQE.
 */
RF_INLINE const struct rf__wc_kind *rf__wc_req_kind(uint32_t wqe_opcode)
{
	static const struct rf__wc_kind t[32] = {
		/* 0x00 NOP         */ { 0, RF_WC_NOP, 0, 0 },
		/* 0x01 SEND_INVAL  */ { 0, RF_WC_SEND, 0, 0 },
		/* 0x02 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x03 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x04 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x05 = UMR & 0x1f */ { 0, RF_WC_BIND_MW, 0, 0 },
		/* 0x06 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x07 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x08 RDMA_WRITE     */ { 0, RF_WC_RDMA_WRITE, 0, 0 },
		/* 0x09 RDMA_WRITE_IMM */ { 0, RF_WC_RDMA_WRITE, RF_WC_WITH_IMM, 0 },
		/* 0x0a SEND           */ { 0, RF_WC_SEND, 0, 0 },
		/* 0x0b SEND_IMM       */ { 0, RF_WC_SEND, RF_WC_WITH_IMM, 0 },
		/* 0x0c */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x0d */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x0e */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x0f */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x10 RDMA_READ  */ { 0, RF_WC_RDMA_READ, 0, 0 },
		/* 0x11 ATOMIC_CS  */ { 0, RF_WC_COMP_SWAP, 0, 0 },
		/* 0x12 ATOMIC_FA  */ { 0, RF_WC_FETCH_ADD, 0, 0 },
		/* 0x13 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x14 MASKED_CS  */ { 0, RF_WC_MASKED_COMP_SWAP, 0, 0 },
		/* 0x15 MASKED_FA  */ { 0, RF_WC_MASKED_FETCH_ADD, 0, 0 },
		/* 0x16 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x17 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x18 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x19 */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1a */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1b */ { 0, RF_WC_LOCAL_INV, 0, 0 },
		/* 0x1c */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1d */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1e */ { 0, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1f */ { 0, RF_WC_UNKNOWN, 0, 0 },
	};
	return &t[wqe_opcode & 0x1f];
}

/* Responder: CQE opcode (0..7) to the record's kind. */
RF_INLINE const struct rf__wc_kind *rf__wc_resp_kind(uint32_t cqe_opcode)
{
	static const struct rf__wc_kind t[8] = {
		/* 0 REQ (not here) */ { RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0 },
		/* 1 RESP_WR_IMM    */ { 0, RF_WC_RECV_RDMA_WITH_IMM, RF_WC_WITH_IMM, 0 },
		/* 2 RESP_SEND      */ { 0, RF_WC_RECV, 0, 0 },
		/* 3 RESP_SEND_IMM  */ { 0, RF_WC_RECV, RF_WC_WITH_IMM, 0 },
		/* 4 RESP_SEND_INV  */ { 0, RF_WC_RECV, RF_WC_WITH_INV, 0 },
		/* 5 RESIZE_CQ      */ { RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0 },
		/* 6 NO_PACKET (TM) */ { RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0 },
		/* 7                */ { RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0 },
	};
	return &t[cqe_opcode & 7];
}

/* Find the attachment of qpn; NULL when none. */
static inline struct rf_cq_qp *rf__cq_lookup(struct rf_cq *cq, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < cq->nqp; i++) {
		if (cq->qp[i].qpn == qpn) {
			cq->last = &cq->qp[i];
			return &cq->qp[i];
		}
	}
	return NULL;
}

/*
 * Scatter len bytes from src into a list of data segments (an RQ, SRQ or
 * send WQE's), stopping at the terminator, at max entries or when done.
 */
static inline RF_COLD void rf__scatter(const struct rf_wqe_data_seg *d, uint32_t max,
				       const uint8_t *src, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < max && len; i++) {
		uint32_t n = rf_be32toh(d[i].byte_count);

		if (d[i].lkey == RF_BE32(RF_INVALID_LKEY))
			break;
		if (n > len)
			n = len;
		rf__copy_inline((uint8_t *)(uintptr_t)rf_be64toh(d[i].addr), src, n);
		src += n;
		len -= n;
	}
}

/*
 * Requester scatter-to-CQE: a READ or atomic response carried in the CQE.
 * Parse the completed send WQE (still in the SQ: its slot is retired only
 * by this very CQE) for its local data segments.
 */
static inline RF_COLD void rf__cq_scatter_req(const struct rf_sq *sq, uint16_t counter,
					      const uint8_t *src, uint32_t len)
{
	const struct rf_wqe_ctrl_seg *c = rf_sq_wqe(sq, counter);
	uint32_t ds = rf_be32toh(c->qpn_ds) & 0x3f;
	uint8_t op = (uint8_t)rf_be32toh(c->opmod_idx_opcode);
	uint8_t opmod = (uint8_t)(rf_be32toh(c->opmod_idx_opcode) >> 24);
	uint32_t skip = 1 + sq->tseg_ds + 1;	/* ctrl [tseg] raddr */

	if (op == RF_OPCODE_ATOMIC_CS || op == RF_OPCODE_ATOMIC_FA ||
	    op == RF_OPCODE_ATOMIC_MASKED_FA)
		skip += 1;
	else if (op == RF_OPCODE_ATOMIC_MASKED_CS)
		skip += opmod == RF_OPMOD_EXT_ATOMIC_8B ? 2 : 1;
	else if (op != RF_OPCODE_RDMA_READ)
		return;
	if (ds > skip)
		rf__scatter((const struct rf_wqe_data_seg *)c + skip, ds - skip, src, len);
}

/* Receive side of a success CQE: return the WQE, then any scattered data. */
RF_INLINE uint64_t rf__cq_resp_retire(struct rf_cq_qp *q, uint16_t counter,
				      uint8_t *flags)
{
	if (q->srq) {
		*flags |= RF_WC_SRQ;
		return rf_srq_free(q->srq, counter);
	}
	return rf_rq_retire(q->rq, counter);
}

/*
 * Where the scatter-to-CQE data of a CQE in format fmt sits, and how many
 * of len bytes can be there: 32 in the CQE64, 64 in the half before it on
 * 128-byte CQEs only. A larger byte count, or the 64-byte format on a
 * 64-byte CQ, is a CQE no device writes: copy no more than the entry
 * holds.
 */
static inline RF_COLD const uint8_t *rf__cq_scat_src(const struct rf_cq *cq,
						     const struct rf_cqe64 *cqe,
						     uint32_t fmt, uint32_t *len)
{
	uint32_t max = fmt == RF_CQE_FORMAT_SCATTER_32 ? 32 : cq->cqe_size == 128 ? 64 : 0;

	if (*len > max)
		*len = max;
	return max == 64 ? (const uint8_t *)cqe - 64 : (const uint8_t *)cqe;
}

/*
 * The slow path: error, compressed, scatter-to-CQE and unusual CQEs, and
 * QPNs missing from the cache. Returns 1 when wc was filled, 0 when the
 * CQE was consumed without a record.
 */
static inline RF_COLD int rf__cq_poll_slow(struct rf_cq *cq, struct rf_cqe64 *cqe,
					   struct rf_wc *wc)
{
	uint8_t op_own = cqe->op_own;
	uint8_t opcode = rf_cqe_opcode(op_own);
	uint32_t sop = rf_be32toh(cqe->sop_drop_qpn);
	uint32_t qpn = sop & 0xffffff;
	uint16_t counter = rf_be16toh(cqe->wqe_counter);
	uint32_t byte_cnt = rf_be32toh(cqe->byte_cnt);
	uint32_t fmt = rf_cqe_format(op_own);
	int req = opcode == RF_CQE_REQ || opcode == RF_CQE_REQ_ERR;
	struct rf_cq_qp *q;
	struct rf__wc_kind k;

	if (opcode == RF_CQE_SIG_ERR || opcode == RF_CQE_INVALID ||
	    opcode == RF_CQE_RESIZE_CQ)
		return 0;	/* not a work completion */

	if (fmt == RF_CQE_FORMAT_COMPRESSED) {
		/* a mini-CQE session: not supported, make it loud */
		__builtin_memset(wc, 0, sizeof(*wc));
		wc->status = RF_WC_GENERAL_ERR;
		wc->opcode = RF_WC_UNKNOWN;
		wc->qp_num = qpn;
		return 1;
	}

	q = rf__cq_lookup(cq, qpn);
	if (!q && !req && cq->srq) {
		cq->none.srq = cq->srq;	/* route through the CQ's SRQ */
		q = &cq->none;
	}
	if (!q || (req && !q->sq) || (!req && !q->srq && !q->rq)) {
		cq->nstale++;
		return 0;
	}

	if (opcode == RF_CQE_REQ_ERR || opcode == RF_CQE_RESP_ERR) {
		const struct rf_err_cqe *e = (const struct rf_err_cqe *)cqe;

		k = req ? *rf__wc_req_kind(sop >> 24) : *rf__wc_resp_kind(RF_CQE_RESP_SEND);
		k.status = (uint8_t)rf_cqe_syndrome_to_wc_status(e->syndrome);
		k.vendor_err = e->vendor_err_synd;
		k.flags = 0;
		byte_cnt = 0;
	} else if (req) {
		k = *rf__wc_req_kind(sop >> 24);
	} else {
		k = *rf__wc_resp_kind(opcode);
		if (op_own & RF_CQE_SE_MASK)
			k.flags |= RF_WC_SOLICITED;
		if (((rf_be32toh(cqe->flags_rqpn) >> 28) & 3) == RF_CQE_GRH_IN_BUF)
			k.flags |= RF_WC_GRH;
	}

	if (req) {
		/* UMR: a memory-window bind or a local invalidate; the mkey
		 * context (byte 16 + 48, the WQE's second BB) says which (a
		 * freed mkey is an invalidate). The BB is addressed with the
		 * wrap, as a CQE may name the queue's last BB. */
		if ((sop >> 24) == RF_OPCODE_UMR) {
			const uint8_t *w = (const uint8_t *)rf_sq_wqe(q->sq, counter + 1U);

			k.opcode = w[16 + 48 - RF_SEND_WQE_BB] & RF_MKEY_CONTEXT_FREE ?
				   RF_WC_LOCAL_INV : RF_WC_BIND_MW;
		}
		if (fmt != RF_CQE_FORMAT_NORMAL && opcode == RF_CQE_REQ) {
			uint32_t len = byte_cnt;
			const uint8_t *src = rf__cq_scat_src(cq, cqe, fmt, &len);

			rf__cq_scatter_req(q->sq, counter, src, len);
			k.flags |= RF_WC_SCATTERED;
		}
		wc->wr_id = rf_sq_retire(q->sq, counter);
		wc->src_qp = 0;
		wc->imm = 0;
		wc->sl = 0;
	} else {
		if (fmt != RF_CQE_FORMAT_NORMAL && opcode != RF_CQE_RESP_ERR) {
			uint32_t len = byte_cnt;
			const uint8_t *src = rf__cq_scat_src(cq, cqe, fmt, &len);

			if (q->srq && counter < q->srq->wqe_cnt)
				rf__scatter((const struct rf_wqe_data_seg *)
					    (rf_srq_wqe(q->srq, counter) + 1),
					    q->srq->max_sge, src, len);
			else if (!q->srq)
				rf__scatter(rf_rq_wqe(q->rq, counter), q->rq->max_sge,
					    src, len);
			k.flags |= RF_WC_SCATTERED;
		}
		if (q->srq && counter >= q->srq->wqe_cnt) {
			cq->nstale++;	/* corrupt index: do not touch the list */
			return 0;
		}
		wc->wr_id = rf__cq_resp_retire(q, counter, &k.flags);
		wc->src_qp = rf_be32toh(cqe->flags_rqpn) & 0xffffff;
		wc->imm = cqe->imm_inval_pkey;
		wc->sl = (uint8_t)((rf_be32toh(cqe->flags_rqpn) >> 24) & 0xf);
	}
	__builtin_memcpy(&wc->status, &k, sizeof(k));
	wc->byte_len = byte_cnt;
	wc->qp_num = qpn;
	wc->wqe_counter = counter;
	wc->rsvd = 0;
	return 1;
}

/*
 * A completion record as the fast path stores it: wr_id, byte_len,
 * qp_num and bytes 24..31 (status, opcode, flags, vendor_err,
 * wqe_counter, sl, rsvd) as one 8-byte store. Through this union rather
 * than memcpy or byte stores, which may alias anything and made the
 * compiler reload the CQ's fields after every record; reads through
 * struct rf_wc stay ordered with these stores (it is a member).
 */
union rf__wc_view {
	struct rf_wc wc;
	struct {
		uint64_t wr_id;
		uint32_t byte_len;
		__be32   imm;
		uint32_t qp_num;
		uint32_t src_qp;
		uint64_t tail;
	} w;
	struct {
		uint64_t  wr_id;
		uint32_t  byte_len;
		__be32    imm;
		rf__v8u16 rec;	/* bytes 16..31 */
	} v;
};
RF_STATIC_ASSERT(sizeof(union rf__wc_view) == sizeof(struct rf_wc), "wc view size");
RF_STATIC_ASSERT(offsetof(struct rf_wc, wqe_counter) == 16 + 2 * 6, "wc counter is lane 6");

/* Bytes 24..31 of a record: a kind word (struct rf__wc_kind), counter, sl. */
RF_INLINE uint64_t rf__wc_tail_word(uint32_t kind, uint16_t counter, uint8_t sl)
{
#if RF_LITTLE_ENDIAN
	return kind | ((uint64_t)counter << 32) | ((uint64_t)sl << 48);
#else
	return ((uint64_t)kind << 32) | ((uint64_t)counter << 16) | ((uint64_t)sl << 8);
#endif
}

RF_INLINE uint32_t rf__wc_kind_word(const struct rf__wc_kind *k)
{
	uint32_t w;

	__builtin_memcpy(&w, k, sizeof(w));
	return w;
}

/* The common tail of a record: byte count, QPN, counter (+ sl, rsvd). */
RF_INLINE void rf__wc_tail(struct rf_wc *wc, const struct rf_cqe64 *cqe, uint32_t qpn,
			   uint16_t counter, uint32_t kind, uint8_t sl)
{
	union rf__wc_view *v = (union rf__wc_view *)wc;

	v->w.byte_len = rf_be32toh(cqe->byte_cnt);
	v->w.qp_num = qpn;
	v->w.tail = rf__wc_tail_word(kind, counter, sl);
}

/* The sop_drop_qpn word of a CQE as stored (for rf_cq.want). */
RF_INLINE uint32_t rf__cqe_sop_raw(const struct rf_cqe64 *cqe)
{
	return (RF_FORCE uint32_t)cqe->sop_drop_qpn;
}

/* Remember a requester CQE's sop word for the fast path (struct rf_cq). */
RF_INLINE void rf__cq_req_fill(struct rf_cq *cq, uint32_t sop_raw, uint32_t qpn,
			       uint32_t kind, struct rf_sq *sq)
{
	struct {
		uint32_t qp_num, src_qp, kind;
		uint16_t wqe_counter;
		uint8_t  sl, rsvd;
	} rec = { qpn, 0, kind, 0, 0, 0 };

	RF_STATIC_ASSERT(sizeof(rec) == 16, "record tail");
	__builtin_memcpy(&cq->req_rec, &rec, sizeof(rec));
	cq->want = (cq->want & RF__CQE_TAIL_OWNER) | rf__cqe_tail_sop(sop_raw);
	cq->req_sq = sq;
	cq->req_wr_id = sq->wr_id;
	cq->req_mask = (uint16_t)sq->wqe_mask;
	/*
	 * Only READ (bytes read) and the atomics (the fetched size) carry a
	 * byte count in struct rf_wc; for the others it is not part of the
	 * completion, as in ibv_wc, and the fast path leaves the field alone.
	 */
	cq->req_len = (uint16_t)rf_opcode_fetches(
		(uint8_t)(rf_be32toh((RF_FORCE __be32)sop_raw) >> 24));
}

/* rf_cq_decode with the op_own byte already read by the peek. */
RF_INLINE int rf__cq_decode(struct rf_cq *cq, struct rf_cqe64 *cqe, uint8_t op_own,
			    struct rf_wc *wc)
{
	uint32_t sop = rf_be32toh(cqe->sop_drop_qpn);
	uint32_t qpn = sop & 0xffffff;
	uint16_t counter = rf_be16toh(cqe->wqe_counter);
	struct rf_cq_qp *q = cq->last;

	/* errors, INVALID/SIG_ERR (opcode >= 8) and any inline/zipped format,
	 * and QPs other than the last one seen */
	if (RF_UNLIKELY(op_own & 0x8c) || RF_UNLIKELY(q->qpn != qpn))
		return rf__cq_poll_slow(cq, cqe, wc);

	if (RF_LIKELY(op_own < 0x10)) {			/* RF_CQE_REQ */
		uint32_t kind = rf__wc_kind_word(rf__wc_req_kind(sop >> 24));
		struct rf_sq *sq = q->sq;

		if (RF_UNLIKELY(!sq || (sop >> 24) == RF_OPCODE_UMR))
			return rf__cq_poll_slow(cq, cqe, wc);
		/* the next CQE with this word takes the fast path */
		rf__cq_req_fill(cq, rf__cqe_sop_raw(cqe), qpn, kind, sq);
		((union rf__wc_view *)wc)->w.wr_id = rf_sq_retire(sq, counter);
		rf__wc_tail(wc, cqe, qpn, counter, kind, 0);
	} else {
		const struct rf__wc_kind *k = rf__wc_resp_kind(op_own >> 4);
		uint32_t rqpn = rf_be32toh(cqe->flags_rqpn);
		struct rf__wc_kind kk = *k;

		if (RF_UNLIKELY(op_own >= 0x50 || (!q->srq && !q->rq)))
			return rf__cq_poll_slow(cq, cqe, wc);
		kk.flags |= (op_own & RF_CQE_SE_MASK) ? RF_WC_SOLICITED : 0;
		kk.flags |= ((rqpn >> 28) & 3) == RF_CQE_GRH_IN_BUF ? RF_WC_GRH : 0;
		if (q->srq && RF_UNLIKELY(counter >= q->srq->wqe_cnt))
			return rf__cq_poll_slow(cq, cqe, wc);
		((union rf__wc_view *)wc)->w.wr_id = rf__cq_resp_retire(q, counter, &kk.flags);
		((union rf__wc_view *)wc)->w.imm = cqe->imm_inval_pkey;
		((union rf__wc_view *)wc)->w.src_qp = rqpn & 0xffffff;
		rf__wc_tail(wc, cqe, qpn, counter, rf__wc_kind_word(&kk),
			    (uint8_t)((rqpn >> 24) & 0xf));
	}
	return 1;
}

/*
 * rf_cq_decode - turn the CQE that rf_cq_peek() returned into *wc and
 * retire its WQE(s). Returns 1, or 0 when the CQE carried no work
 * completion (stale QPN, SIG_ERR); either way the caller then advances
 * past it.
 */
RF_INLINE int rf_cq_decode(struct rf_cq *cq, struct rf_cqe64 *cqe, struct rf_wc *wc)
{
	return rf__cq_decode(cq, cqe, cqe->op_own, wc);
}

/*
 * The state of one rf_cq_poll() call. The cursor, want and what the fast
 * path reads per CQE are copied out of the CQ once: the record stores may
 * alias the CQ's fields (and rf_dma_rmb() is a memory clobber), so reading
 * them through cq would reload each one per CQE. They are copied again
 * only after the slow path, which may refill them.
 */
struct rf__cq_batch {
	uint8_t  *p;		/* cq->cur */
	uint64_t  want;
	const struct rf__sq_wr_id *wr_id;
	uint32_t  mask;
	uint32_t  len;		/* cq->req_len */
	/* the slot retired last (pointer-sized: it indexes), or RF__CQ_NONE */
	size_t    done;
	rf__v8u16 rec;
	size_t    step;
	uint32_t  left;		/* cq->left */
	uint32_t  used;		/* CQEs consumed */
};

#define RF__CQ_NONE (~(size_t)0)	/* no slot: masks are below 0x8000 */

RF_INLINE void rf__cq_batch_load(struct rf__cq_batch *b, const struct rf_cq *cq)
{
	b->want = cq->want;
	b->wr_id = cq->req_wr_id;
	b->mask = cq->req_mask;
	b->len = cq->req_len;
	b->rec = cq->req_rec;
}

/*
 * Write the records of fast-path CQEs from b->p on, stopping at stop (the
 * caller bounds it by the buffer end) or before the first CQE that is not
 * one. Returns where the records end. len (a constant: b->len, tested by
 * the caller once per run) says whether the records carry byte_len; when
 * they do not, nothing but the tail word is read from the CQE.
 */
RF_INLINE union rf__wc_view *rf__cq_run(struct rf__cq_batch *b, union rf__wc_view *w,
					union rf__wc_view *stop, int len)
{
	do {
		struct rf_cqe64 *cqe = (struct rf_cqe64 *)b->p;
		/* one load: op_own comes with the fields it vouches for */
		uint64_t x = *(volatile const rf__cqe_tail_t *)&cqe->sop_drop_qpn ^ b->want;
		uint32_t counter;

		/* the counter and signature bits of want are 0: x keeps them */
		if (RF_UNLIKELY(x & RF__CQE_TAIL_MATCH))
			break;
		counter = rf__cqe_tail_counter(x);
		w->v.rec = b->rec;
		w->wc.wqe_counter = (uint16_t)counter;
		b->done = counter & b->mask;
		w->v.wr_id = b->wr_id[b->done].v;
		if (len) {
			rf_dma_rmb();	/* owner byte before byte_cnt */
			w->v.byte_len = rf_be32toh(cqe->byte_cnt);
		}
		b->p += b->step;
	} while (++w != stop);
	return w;
}

/*
 * Where a run from w may stop: n records, or the buffer end. (<=, not <:
 * with left >= 1 the compilers then know that a run for one record stops
 * at wend and drop its loop.)
 */
RF_INLINE union rf__wc_view *rf__cq_stop(const struct rf__cq_batch *b, union rf__wc_view *w,
					 union rf__wc_view *wend)
{
	return (size_t)(wend - w) <= b->left ? wend : w + b->left;
}

/*
 * After a run that ended early or at the buffer end: stop at a hardware
 * owned CQE, decode one that is not fast-path, wrap, run again.
 */
RF_INLINE union rf__wc_view *rf__cq_poll_more(struct rf_cq *cq, struct rf__cq_batch *b,
					      union rf__wc_view *w, union rf__wc_view *stop,
					      union rf__wc_view *wend)
{
	for (;;) {
		union rf__wc_view *w0;

		if (w != stop) {
			/* read again rather than kept from the run: one load on
			 * this path instead of a register (or spill) on the fast one */
			struct rf_cqe64 *cqe = (struct rf_cqe64 *)b->p;
			uint64_t t = *(volatile const rf__cqe_tail_t *)&cqe->sop_drop_qpn;

			if ((t ^ b->want) & RF__CQE_TAIL_OWNER)
				break;	/* hardware owned: nothing more */
			rf_dma_rmb();	/* owner byte before the CQE body */
			if (b->done != RF__CQ_NONE) {
				rf__sq_retire_slot(cq->req_sq, b->done);
				b->done = RF__CQ_NONE;
			}
			w += rf_cq_decode(cq, cqe, &w->wc);
			rf__cq_batch_load(b, cq);
			b->p += b->step;
			b->used++;
			b->left--;
		}
		if (b->left == 0) {
			b->p = cq->buf;
			b->left = cq->cqe_cnt;
			b->want ^= RF__CQE_TAIL_OWNER;
			cq->want ^= RF__CQE_TAIL_OWNER;
		}
		if (w == wend)
			break;
		stop = rf__cq_stop(b, w, wend);
		w0 = w;
		w = b->len ? rf__cq_run(b, w, stop, 1) : rf__cq_run(b, w, stop, 0);
		b->used += (uint32_t)(w - w0);
		b->left -= (uint32_t)(w - w0);
	}
	return w;
}

/*
 * Retire the last fast-path slot and publish the cursor and the consumer
 * index after consuming used CQEs.
 */
RF_INLINE void rf__cq_poll_end(struct rf_cq *cq, const struct rf__cq_batch *b, uint32_t used)
{
	uint32_t ci = cq->ci + used;

	if (b->done != RF__CQ_NONE)
		rf__sq_retire_slot(cq->req_sq, b->done);
	cq->ci = ci;
	cq->cur = b->p;
	cq->left = b->left;
	rf_cq_update_ci(cq);
}

/*
 * rf_cq_poll - decode up to n completions into wc[0..), retire the WQEs
 * they complete, and update the CQ's consumer index once. Returns how many
 * records were written (0 when the CQ is empty). Error CQEs are records
 * like any other (wc->status != RF_WC_SUCCESS).
 *
 * The fast path is a successful requester CQE in the normal format whose
 * sop_drop_qpn word equals the cached one: its tail word, counter and
 * signature masked off, equals cq->want, so one 8-byte load, an XOR and a
 * test establish ownership, the kind of CQE, the QP and the WQE opcode,
 * and the counter comes from the same register. Such CQEs are taken in
 * runs bounded once by the buffer end and n (rf__cq_run()); unless the
 * WQE opcode is a READ or an atomic, nothing else is read from them. The
 * send queue's consumer index is written once, after the loop, for the
 * last CQE retired this way (every earlier WQE is retired with it).
 * Everything else goes through rf_cq_decode().
 */
RF_INLINE int rf_cq_poll(struct rf_cq *cq, struct rf_wc *wc, int n)
{
	struct rf__cq_batch b;
	union rf__wc_view *w = (union rf__wc_view *)wc, *wend, *stop;

	if (RF_UNLIKELY(n <= 0))
		return 0;
	b.p = cq->cur;
	b.step = cq->cqe_size;
	b.left = cq->left;
	b.done = RF__CQ_NONE;
	rf__cq_batch_load(&b, cq);
	if (b.left == 0)
		__builtin_unreachable();	/* rf_cq.left; lets n = 1 fold */
	wend = w + n;
	/*
	 * The usual call: n fast-path CQEs short of the buffer end. It ends
	 * on its own copy of the bookkeeping, where the count is n and a slot
	 * to retire is known to exist.
	 */
	stop = rf__cq_stop(&b, w, wend);
	w = b.len ? rf__cq_run(&b, w, stop, 1) : rf__cq_run(&b, w, stop, 0);
	b.left -= (uint32_t)(w - (union rf__wc_view *)wc);
	if (RF_LIKELY(w == wend && b.left != 0)) {
		rf__cq_poll_end(cq, &b, (uint32_t)n);
		return n;
	}
	b.used = (uint32_t)(w - (union rf__wc_view *)wc);
	w = rf__cq_poll_more(cq, &b, w, stop, wend);
	if (!b.used)
		return 0;
	rf__cq_poll_end(cq, &b, b.used);
	return (int)(w - (union rf__wc_view *)wc);
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_H */
