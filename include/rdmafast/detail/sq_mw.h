/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_mw.h - the fence NOP that follows each UMR WQE of
 * sq_mw.h.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_MW_H
#define RDMAFAST_DETAIL_SQ_MW_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>

RF_BEGIN_DECLS

/* The small-fenced NOP that follows a UMR (room was checked with it). */
RF_INLINE void rf__sq_umr_fence(struct rf_sq *sq)
{
	struct rf_wqe_ctrl_seg *c = rf__sq_begin(sq, 1);

	rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_NOP, 0, sq->qpn_be | RF_BE32(1),
			rf__sq_fm_bits(RF_WQE_CTRL_INITIATOR_SMALL_FENCE), 0);
	rf__sq_advance(sq, 1, 0);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_MW_H */
