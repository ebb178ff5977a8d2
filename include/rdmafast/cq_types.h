/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq_types.h - the completion queue's object: struct rf_cq and
 * the table of QPs it routes, and where its entries are. Apart from the
 * operations (cq.h, which includes it) so that rdmafast's private
 * machinery of the CQ (detail/) may build on the struct that those
 * operations use it for. Include rdmafast/cq.h.
 */
#ifndef RDMAFAST_CQ_TYPES_H
#define RDMAFAST_CQ_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/checked.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/cq.h>

RF_BEGIN_DECLS

/* The queues a CQ retires into (sq.h, rq.h, srq.h): pointers only here. */
struct rf_sq;
struct rf_rq;
struct rf_srq;

/*
 * The QPs one CQ routes (rf_cq_attach(): -ENOSPC beyond). The table is
 * in struct rf_cq and a CQE of another QP than the last one's scans it,
 * about 7.5 instructions an entry (callgrind): more QPs would slow every
 * interleaved CQE. Past it: receives through an SRQ on a CQ that names it
 * (rf_cq_set_srq()) need no attachment; sends go to CQs of up to this
 * many QPs each. rdmafast(7), QUEUE SIZING.
 */
enum { RF_CQ_MAX_QPS = 16 };

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
	 * For want's QP: what retiring its send queue's slots touches (the
	 * queue's limit, side table and bb_max: rf__sq_retire_slot()), and
	 * that queue's wqe_mask, copied so that a batch
	 * loads them before its first CQE (they do not change after
	 * rf_sq_init(); attach a queue again if it is initialized again
	 * while attached). Pieces rather than the struct rf_sq, which this
	 * header does not see (written).
	 */
	uint32_t  *req_limit;
	const struct rf_sq_slot *req_slot;
	uint16_t   req_mask;	/* < 0x8000 (rf_sq_init()), which the type tells the compiler */
	/*
	 * Whether want's WQE opcode reports a byte count (READ, atomics):
	 * only then does the fast path read byte_cnt (rf__cq_run()).
	 */
	uint16_t   req_len;
	uint32_t   req_bb_max;
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
	/*
	 * Compressed CQEs: mini-CQEs of the zip whose title is at ci
	 * already returned by rf_cq_poll() (0 outside a zip; written).
	 * A zip cut short by the record count keeps the cursor on its
	 * title, so the next poll's first compare misses and resumes it.
	 */
	uint32_t   zip_done;
	/* responder mini-CQEs name the WQE in stride_idx (CSUM_STRIDX) */
	uint32_t   zip_stridx;
	struct rf_srq *srq;	/* receives of unattached QPs go here (XRC), or NULL */
	struct rf_cq_qp none;
	struct rf_cq_qp qp[RF_CQ_MAX_QPS];
	/* what the empty fast path retires into (rf__cq_req_forget()) */
	struct rf_sq_slot none_slot;
	uint32_t   none_limit;
	/*
	 * The signature error CQE of the last RF_WC_SIG_ERR record, copied
	 * before its entry went back to the device, for rf_cq_sig_err();
	 * op_own is 0 once that has read it (written).
	 */
	struct rf_sig_err_cqe sig_err;
	uint32_t   sig_err_stop;	/* rf_cq_poll() ends after its record (written) */
#ifdef RF_CHECKED
	struct rf__chk_cq chk;
#endif
};

/* The CQE64 of the entry at consumer index ci. */
RF_INLINE struct rf_cqe64 *rf_cq_cqe(const struct rf_cq *cq, uint32_t ci)
{
	return (struct rf_cqe64 *)(cq->buf + ((size_t)(ci & cq->cqe_mask) << cq->cqe_shift));
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_TYPES_H */
