/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq_state.h - the CQ's own state set back, for cq.h and
 * the poll: the requester fast path emptied (at take-over, attach and
 * detach), the entries a zip covered handed back to the hardware's lap.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CQ_STATE_H
#define RDMAFAST_DETAIL_CQ_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/cq_types.h>
#include <rdmafast/detail/cq.h>

RF_BEGIN_DECLS

/*
 * Empty the requester fast path (want keeps its owner bit). No want is
 * unmatchable: a CQ holds whatever was written into it, and a CQE with
 * WQE opcode 0xff and QPN 0xffffff (which no device writes) matches the
 * empty one. So its targets are harmless instead of NULL or a detached
 * queue: a record of RF_WC_GENERAL_ERR, and a one-slot queue of the CQ's
 * own (none_*) for the retirement to read and write. This costs the fast
 * path nothing, which a test for the empty want in it would not.
 */
RF_INLINE void rf__cq_req_forget(struct rf_cq *cq)
{
	struct {
		uint32_t qp_num, src_qp;
		uint8_t  status, opcode, flags, vendor_err;
		uint16_t wqe_counter;
		uint8_t  sl, rsvd;
	} rec = { 0xffffff, 0, RF_WC_GENERAL_ERR, RF_WC_UNKNOWN, 0, 0, 0, 0, 0 };

	RF_STATIC_ASSERT(sizeof(rec) == 16, "record tail");
	__builtin_memcpy(&cq->req_rec, &rec, sizeof(rec));
	cq->want = rf__cq_want_none(cq->want);
	cq->req_limit = &cq->none_limit;
	cq->req_slot = &cq->none_slot;
	cq->req_mask = 0;
	cq->req_len = 0;
	cq->req_bb_max = 0;
}

/* n owner bytes step apart set to own (step a constant at each call). */
RF_INLINE void rf__cq_restore_run(uint8_t *p, uint8_t own, uint32_t n, size_t step)
{
	for (; n >= 8; n -= 8, p += 8 * step) {
		p[0] = own;
		p[step] = own;
		p[2 * step] = own;
		p[3 * step] = own;
		p[4 * step] = own;
		p[5 * step] = own;
		p[6 * step] = own;
		p[7 * step] = own;
	}
	for (; n; n--, p += step)
		*p = own;
}

/*
 * Give n entries from ci on back to the hardware's lap: op_own INVALID
 * with the owner bit of the lap each entry is in, as a completed entry
 * has after this lap (rf_cq_poll() does the same at the end of a
 * zip).
 */
RF_INLINE void rf__cq_restore_owner(const struct rf_cq *cq, uint32_t ci, uint32_t n)
{
	uint8_t *p = (uint8_t *)&rf_cq_cqe(cq, ci)->op_own;
	uint8_t *end = (uint8_t *)&rf_cq_cqe(cq, cq->cqe_mask)->op_own;
	uint8_t own = (uint8_t)(RF_CQE_INVALID << 4 | ((ci >> cq->log_n) & RF_CQE_OWNER_MASK));
	size_t step = cq->cqe_size;

	/*
	 * The usual case: short of the ring's end, eight stores a turn. The
	 * owner bytes are an entry apart, so no wider store covers two; with
	 * the entry size a constant in each arm every store is one
	 * instruction at a fixed offset (a variable step costs an address
	 * computation per store).
	 */
	if (RF_LIKELY(n <= cq->cqe_cnt - (ci & cq->cqe_mask))) {
		if (step == 64)
			rf__cq_restore_run(p, own, n, 64);
		else
			rf__cq_restore_run(p, own, n, 128);
		return;
	}
	/* a walk by the entry size; the owner bit flips past the last entry */
	while (n--) {
		*p = own;
		if (RF_UNLIKELY(p == end)) {
			p = (uint8_t *)&rf_cq_cqe(cq, 0)->op_own;
			own ^= RF_CQE_OWNER_MASK;
		} else {
			p += cq->cqe_size;
		}
	}
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CQ_STATE_H */
