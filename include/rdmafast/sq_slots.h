/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_slots.h - a WQE built by hand: claim its basic blocks, write
 * its segments (hw/wqe.h), commit it; retire it when a CQE reports it.
 * rf_sq_post_nop() is the smallest such WQE.
 */
#ifndef RDMAFAST_SQ_SLOTS_H
#define RDMAFAST_SQ_SLOTS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>
#ifdef RF_CHECKED
#include <rdmafast/detail/checked.h>
#endif

RF_BEGIN_DECLS

/*
 * rf_sq_reserve - claim nbb contiguous basic blocks (1..RF_SEND_WQE_MAX_BB)
 * for the next WQE and return its control segment, or NULL when the queue
 * has no room for it (then nothing moved). If the WQE would cross the queue
 * end, the BBs up to the end are first committed as NOPs. The WQE must be
 * committed with rf_sq_commit() before the next reserve.
 */
RF_INLINE struct rf_wqe_ctrl_seg *rf_sq_reserve(struct rf_sq *sq, uint32_t nbb)
{
	RF__CHK(rf__chk_sq_post(sq));
	if (RF_UNLIKELY(!rf__sq_room(sq, nbb))) {
		RF__CHK(rf__chk_sq_full(sq));
		return NULL;
	}
	return rf__sq_begin(sq, nbb);
}

/*
 * rf_sq_tseg - write the transport segment that follows the control
 * segment on XRC queues and return where the next segment goes. On RC/UC
 * the XRC bytes are stored too and then overwritten by the next segment:
 * one 16-byte store instead of a branch on the queue kind. UD posts write
 * their address vector themselves (rf_sq_post_ud_send()).
 */
RF_INLINE void *rf_sq_tseg(const struct rf_sq *sq, struct rf_wqe_ctrl_seg *c)
{
	*(struct rf_wqe_xrc_seg *)(c + 1) = sq->xrc;
	return (uint8_t *)c + sq->tseg_off;
}

/*
 * rf_sq_commit - finish the WQE reserved at c: fill its control segment
 * and record it. ds is the WQE size in 16-byte units including ctrl (and
 * the transport segment; it must fit the BBs reserved). flags are RF_SEND_*
 * bits; the queue's default (signal all) is added. imm is the immediate in
 * network order, rf_htobe32(rkey) for SEND_INVAL or UMR, or 0. Invisible to
 * the device until rf_sq_ring(), which RF_SEND_RING in flags calls.
 */
RF_INLINE void rf_sq_commit(struct rf_sq *sq, struct rf_wqe_ctrl_seg *c,
			    uint8_t opcode, uint8_t opmod, uint32_t ds,
			    uint32_t flags, __be32 imm, uint64_t wr_id)
{
	uint64_t fm_bits = sq->ctrl_hi | rf__sq_fm_bits(flags & RF__SEND_FM);

	RF_ASSERT(ds >= 1 && ds <= RF_WQE_MAX_DS);
	RF_ASSERT((void *)c == (void *)rf_sq_wqe(sq, sq->pi));
	rf__sq_set_ctrl(c, sq->pi, opcode, opmod, sq->qpn_be | rf_htobe32(ds),
			fm_bits, imm);
	rf__sq_advance(sq, c, (ds + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB, wr_id);
	RF__CHK(rf__chk_sq_posted(sq, (fm_bits & rf__sq_fm_bits(RF_WQE_CTRL_CQ_UPDATE)) != 0));
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);
}

/*
 * rf_sq_retire - a CQE (success or error) reported the WQE whose first BB
 * is wqe_counter: free it and every WQE before it, and return its wr_id.
 */
RF_INLINE uint64_t rf_sq_retire(struct rf_sq *sq, uint16_t wqe_counter)
{
	size_t idx = wqe_counter & sq->wqe_mask;

	rf__sq_retire_slot(sq, idx);
	return sq->slot[idx].wr_id;
}

/*
 * rf_sq_post_nop - a WQE that does nothing. Signaled, it reports that
 * everything before it completed; with RF_SEND_FENCE it also waits for
 * earlier READs and atomics.
 */
RF_INLINE int rf_sq_post_nop(struct rf_sq *sq, uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c = rf_sq_reserve(sq, 1);

	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf_sq_commit(sq, c, RF_OPCODE_NOP, 0, 1, flags, 0, wr_id);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_SLOTS_H */
