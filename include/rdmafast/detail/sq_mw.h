/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_mw.h - the fence NOP that follows each UMR WQE of
 * sq_mw.h, and the UMR that frees a window (invalidate, unbind).
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_MW_H
#define RDMAFAST_DETAIL_SQ_MW_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>

RF_BEGIN_DECLS

/*
 * Post the small-fenced NOP that follows a UMR (room was checked with it)
 * and, when ring, ring both: the NOP is the last WQE and at least two wait,
 * so no BlueFlame, and the doorbell is the NOP's (rf__sq_ring_db()).
 */
RF_INLINE void rf__sq_umr_fence(struct rf_sq *sq, uint32_t ring)
{
	struct rf_wqe_ctrl_seg *c = rf__sq_begin(sq, 1);

	rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_NOP, 0, sq->qpn_be | RF_BE32(1),
			rf__sq_fm_bits(RF_WQE_CTRL_INITIATOR_SMALL_FENCE), 0);
	rf__sq_advance(sq, c, 1, 0);
	if (ring)
		rf__sq_ring_db(sq, c);
}

/*
 * A UMR that frees the mkey context of key (the window's current key),
 * writing tag into its key (local invalidate: 0), checking that the
 * window is bound to this QP when check_qpn: what libmlx5 posts for a
 * local invalidate and for a bind of length 0. 2 BBs and the fence NOP.
 */
static inline int rf__sq_post_umr_free(struct rf_sq *sq, uint32_t key, uint8_t tag,
				       uint8_t check_qpn, uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_ctrl_seg *u;

	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 2) + 2 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 2);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET |
			    (check_qpn ? RF_UMR_CTRL_FLAG_CHECK_QPN : 0), 0,
			    check_qpn ? RF_UMR_MKEY_MASK_INVALIDATE :
			    RF_UMR_MKEY_MASK_FREE | RF_UMR_MKEY_MASK_MKEY);
	rf_set_mkey_context_seg((struct rf_wqe_mkey_context_seg *)(u + 1),
				RF_MKEY_CONTEXT_FREE, 0, RF_MKEY_NO_QPN | tag, 0, 0);
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 8, flags & ~RF_SEND_RING, rf_htobe32(key), wr_id);
	rf__sq_umr_fence(sq, flags & RF_SEND_RING);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_MW_H */
