/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_atomic.h - the frame of the atomic posts of sq_atomic.h.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_ATOMIC_H
#define RDMAFAST_DETAIL_SQ_ATOMIC_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/wqe_regs.h>
#include <rdmafast/detail/sq_post.h>

RF_BEGIN_DECLS

/*
 * The frame every atomic shares: [xrc] raddr, an operand segment of
 * opnd_ds DS, then the data segment that receives the fetch_len bytes of
 * the original remote value. Writes all but the operand segment, sets
 * *opnd to where that goes and returns 0; or returns rf__sq_open()'s
 * error (-ENOSPC, or -EINVAL on UD and UC) with nothing written and
 * nothing moved. The caller fills the operand and finishes
 * with rf__sq_end(..., 2 + opnd_ds, ...). The 16-byte operand forms take
 * one BB (two with the XRC segment), the 32-byte masked CS two either way.
 */
RF_INLINE int rf__sq_atomic_begin(struct rf_sq *sq, struct rf__sq_wqe *w, void **opnd,
				  uint32_t opnd_ds, uint32_t lkey, uint64_t laddr,
				  uint32_t fetch_len, uint32_t rkey, uint64_t raddr,
				  uint32_t flags)
{
	uint32_t nbb = opnd_ds > 1 ? 2 : 1 + (sq->tseg_ds != 0);
	struct rf_wqe_raddr_seg *r;
	uint8_t *o;
	int rc;

	RF__CHK(rf__chk_atomic(sq, raddr, fetch_len));
	rc = rf__sq_open(sq, w, nbb, flags, sq->tseg_ds_or_uc != 0);

	if (RF_UNLIKELY(rc))
		return rc;
	r = (struct rf_wqe_raddr_seg *)w->body;
	rf_set_raddr_seg(r, raddr, rkey);
	o = (uint8_t *)(r + 1);
	rf_set_data_seg((struct rf_wqe_data_seg *)(o + opnd_ds * RF_WQE_DS_SIZE),
			fetch_len, lkey, laddr);
	*opnd = o;
	return 0;
}

/*
 * The IB atomics: [xrc] raddr atomic data(8). On RC the WQE is exactly
 * one BB, built in registers (rf__sq_end_bb()).
 */
RF_INLINE int rf__sq_post_atomic(struct rf_sq *sq, uint8_t opcode, uint32_t lkey,
				 uint64_t laddr, uint32_t rkey, uint64_t raddr,
				 uint64_t swap_add, uint64_t compare, uint32_t flags,
				 uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *a;
	int rc;

	if (RF_LIKELY(!sq->tseg_ds_or_uc)) {
		struct rf__wqe_bb bb;

		RF__CHK(rf__chk_atomic(sq, raddr, 8));
		rc = rf__sq_open(sq, &w, 1, flags, 0);
		if (RF_UNLIKELY(rc))
			return rc;
		rf__wqe_bb_raddr(&bb, 2, raddr, rkey);
		rf__wqe_bb_atomic(&bb, 4, swap_add, compare);
		rf__wqe_bb_data(&bb, 6, 8, lkey, laddr);
		rf__sq_end_bb(sq, &w, &bb, 8, 0, opcode, 3, 0, wr_id);
		return 0;
	}
	rc = rf__sq_atomic_begin(sq, &w, &a, 1, lkey, laddr, 8, rkey, raddr, flags);
	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_atomic_seg((struct rf_wqe_atomic_seg *)a, swap_add, compare);
	rf__sq_end(sq, &w, opcode, 0, 3, 0, wr_id);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_ATOMIC_H */
