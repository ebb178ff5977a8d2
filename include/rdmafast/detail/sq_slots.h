/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_slots.h - a send queue's slots: room, NOP padding at the
 * queue end, recording a WQE and retiring up to one; the fence NOP after a
 * memory-window UMR.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_SLOTS_H
#define RDMAFAST_DETAIL_SQ_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq.h>

RF_BEGIN_DECLS

/*
 * Record the WQE of nbb BBs at c, the one at pi, in the side table and
 * move pi past it. Its entry's offset is found from c's, a quarter of it
 * (rf__sq_wqe_at()): where c was just made by rf_sq_wqe(), the compilers
 * see that this is the offset c was made from and spend no instruction.
 */
RF_INLINE void rf__sq_advance(struct rf_sq *sq, const struct rf_wqe_ctrl_seg *c,
			      uint32_t nbb, uint64_t wr_id)
{
	struct rf_sq_slot *s = rf__sq_slot_at(sq->slot,
					      (size_t)((const uint8_t *)c - sq->buf) / 4);
	uint32_t pi = sq->pi;

	s->wr_id = wr_id;
	s->end = pi + nbb;
	sq->pi = pi + nbb;
}

/* Cold half of rf_sq_reserve(): fill up to the queue end with NOPs. */
static inline RF_COLD void rf__sq_pad(struct rf_sq *sq, uint32_t pad)
{
	while (pad--) {
		struct rf_wqe_ctrl_seg *c = rf_sq_wqe(sq, sq->pi);

		/* unsignaled, unfenced */
		rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_NOP, 0,
				sq->qpn_be | RF_BE32(1), 0, 0);
		rf__sq_advance(sq, c, 1, 0);
	}
}

/* BBs of NOP padding a WQE of nbb BBs needs before it (usually 0). */
RF_INLINE uint32_t rf__sq_pad_need(const struct rf_sq *sq, uint32_t nbb)
{
	uint32_t room = sq->wqe_cnt - (sq->pi & sq->wqe_mask);

	/* a 1-BB WQE always fits: with a constant nbb this folds to 0 */
	return nbb > 1 && RF_UNLIKELY(nbb > room) ? room : 0;
}

/*
 * True when a WQE of nbb BBs (and its padding) fits now. pi never passes
 * limit, so limit - pi is the free space; for a 1-BB WQE this is
 * "limit != pi".
 */
RF_INLINE int rf__sq_room(const struct rf_sq *sq, uint32_t nbb)
{
	return sq->limit - sq->pi >= rf__sq_pad_need(sq, nbb) + nbb;
}

/* After rf__sq_room(): pad if needed, return the WQE's control segment. */
RF_INLINE struct rf_wqe_ctrl_seg *rf__sq_begin(struct rf_sq *sq, uint32_t nbb)
{
	uint32_t pad = rf__sq_pad_need(sq, nbb);

	if (RF_UNLIKELY(pad))
		rf__sq_pad(sq, pad);
	return rf_sq_wqe(sq, sq->pi);
}

/*
 * rf_sq_ring() where the caller knows that more than one WQE waits and
 * that c is the last one committed: no BlueFlame then, the doorbell is
 * c's, and neither needs the side table (rf_sq_last_pi()'s search).
 */
RF_INLINE void rf__sq_ring_db(struct rf_sq *sq, const struct rf_wqe_ctrl_seg *c)
{
	rf_ring_db(sq->dbrec, &sq->bf, sq->pi, c);
	sq->bf_rung_pi = sq->pi + sq->no_bf_bias;
}

/* Retire everything up to the end of the WQE recorded in slot idx. */
RF_INLINE void rf__sq_retire_slot(struct rf_sq *sq, size_t idx)
{
	sq->limit = sq->slot[idx].end + sq->bb_max;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_SLOTS_H */
