/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq_decode.h - one CQE into one struct rf_wc: the opcode
 * tables, the QP lookup, scatter-to-CQE, the slow path, and the requester
 * fast path's cache refill.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CQ_DECODE_H
#define RDMAFAST_DETAIL_CQ_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>
#include <rdmafast/detail/cq.h>
#include <rdmafast/detail/copy.h>
#ifdef RF_CHECKED
#include <rdmafast/detail/checked.h>
#endif

RF_BEGIN_DECLS

/* status, opcode, flags, vendor_err: what one table entry supplies. */
struct rf__wc_kind {
	uint8_t status;
	uint8_t opcode;
	uint8_t flags;
	uint8_t vendor_err;
};

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
 * A signature error CQE: its record (RF_WC_SIG_ERR, status
 * RF_WC_GENERAL_ERR, no WQE: the one that moved the data completes on
 * its own), its bytes kept in the CQ for rf_cq_sig_err() (the poll that
 * returns the record ends with it, so the next one cannot overwrite it).
 */
static inline RF_COLD int rf__cq_sig_err(struct rf_cq *cq, const struct rf_cqe64 *cqe,
					 struct rf_wc *wc)
{
	__builtin_memcpy(&cq->sig_err, cqe, sizeof(cq->sig_err));
	cq->sig_err_stop = 1;
	__builtin_memset(wc, 0, sizeof(*wc));
	wc->status = RF_WC_GENERAL_ERR;
	wc->opcode = RF_WC_SIG_ERR;
	return 1;
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

	if (opcode == RF_CQE_SIG_ERR)
		return rf__cq_sig_err(cq, cqe, wc);
	if (opcode == RF_CQE_INVALID || opcode == RF_CQE_RESIZE_CQ)
		return 0;	/* not a work completion */

	if (fmt == RF_CQE_FORMAT_COMPRESSED) {
		/* a zip of mini-CQEs: not supported, make it loud */
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
		RF__CHK(rf__chk_cq_stale(cq, q, qpn, req));
		cq->nstale++;
		return 0;
	}

	if (opcode == RF_CQE_REQ_ERR || opcode == RF_CQE_RESP_ERR) {
		const struct rf_err_cqe *e = (const struct rf_err_cqe *)cqe;

		k = req ? *rf__wc_req_kind(sop >> 24) : *rf__wc_resp_kind(RF_CQE_RESP_SEND);
		k.status = (uint8_t)rf_cqe_syndrome_to_wc_status(e->syndrome);
		RF__CHK(rf__chk_cq_error(q));
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
	cq->req_limit = &sq->limit;
	cq->req_slot = sq->slot;
	cq->req_bb_max = sq->bb_max;
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

	/* errors, INVALID/SIG_ERR (opcode >= 8) and any inline/zipped format */
	if (RF_UNLIKELY(op_own & 0x8c))
		return rf__cq_poll_slow(cq, cqe, wc);
	/*
	 * Another QP than the last one seen: the usual case on a CQ that 16
	 * QPs share, each with a CQE in turn (rfbench --fleet's rr rows), so
	 * found here rather than by the slow path (about 250 instructions a
	 * CQE instead of the 120 of libmlx5's poll, issue 34). Unknown ones
	 * (stale, routed through the CQ's SRQ) still go the slow way.
	 */
	if (RF_UNLIKELY(q->qpn != qpn)) {
		q = rf__cq_lookup(cq, qpn);
		if (RF_UNLIKELY(!q))
			return rf__cq_poll_slow(cq, cqe, wc);
	}

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

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CQ_DECODE_H */
