/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_mw.h - memory windows: type-2 bind and local invalidate, by
 * UMR WQE.
 *
 * Both are UMR WQEs (opcode 0x25) that rewrite the window's mkey context.
 * A WQE after them must not start before the UMR finished (libmlx5 puts
 * the "initiator small fence" on the next WQE). rdmafast posts an
 * unsignaled NOP carrying that fence right after the UMR instead: the
 * send queue stalls at a fenced WQE, so everything behind the NOP waits
 * as well, and the hot posts need no "fence pending" state. Cost: one
 * extra BB per bind or invalidate.
 *
 * The window's key changes on every bind: pass rf_mw_inc_rkey(old) as
 * new_rkey and give the peer the new key once the bind completed.
 */
#ifndef RDMAFAST_SQ_MW_H
#define RDMAFAST_SQ_MW_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/detail/sq_slots.h>

RF_BEGIN_DECLS

/*
 * In rf_sq_post_bind_mw()'s access, beside the RF_MKEY_ACCESS_* bits: a
 * zero-based window, which the peer addresses from 0 (its offset) rather
 * than by virtual address (IBV_ACCESS_ZERO_BASED; rf_mw_access_ibv()).
 */
#define RF_MW_ZERO_BASED	(1u << 8)

/* The next rkey of a memory window: same index, tag (low byte) + 1. */
RF_INLINE uint32_t rf_mw_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00U) | ((rkey + 1) & 0xffU);
}

/*
 * rf_sq_post_bind_mw - bind type-2 memory window mw_rkey (its current
 * key) to [addr, addr + len) of the MR lkey, for remote access through
 * this QP only, with key new_rkey (same index, new tag) and access
 * RF_MKEY_ACCESS_* bits, and RF_MW_ZERO_BASED for a window addressed from
 * 0 (verbs.h: rf_mw_access_ibv()). The MR must allow
 * binding (IBV_ACCESS_MW_BIND). 3 BBs, plus 1 for the fence NOP.
 * -EINVAL on a UD queue: windows are bound to connected QPs (IBA 10.6.7).
 */
static inline int rf_sq_post_bind_mw(struct rf_sq *sq, uint32_t mw_rkey, uint32_t new_rkey,
				     uint32_t lkey, uint64_t addr, uint64_t len,
				     uint32_t access, uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_ctrl_seg *u;
	struct rf_wqe_mkey_context_seg *m;
	struct rf_wqe_umr_klm_seg *k;

	if (RF_UNLIKELY(len > 0x80000000ULL || (new_rkey >> 8) != (mw_rkey >> 8) ||
			sq->kind == RF_QP_UD))
		return -EINVAL;
	/* the bind (3 BBs) and the fence NOP, possibly after padding */
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 3) + 3 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 3);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_CHECK_FREE |
			    RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET, RF_UMR_KLM_OCTOWORDS(1),
			    RF_UMR_MKEY_MASK_BIND | RF_UMR_MKEY_MASK_QPN);
	m = (struct rf_wqe_mkey_context_seg *)(u + 1);
	/* zero based: the mkey starts at 0, the KLM still names the memory */
	rf_set_mkey_context_seg(m, 0, (uint8_t)access,
				(sq->qpn << 8) | (new_rkey & 0xff),
				(access & RF_MW_ZERO_BASED) ? 0 : addr, len);
	k = (struct rf_wqe_umr_klm_seg *)(m + 1);
	rf_set_umr_klm_seg(k, (uint32_t)len, lkey, addr);
	__builtin_memset(k + 1, 0, 3 * sizeof(*k));	/* the KLM block is 64 bytes */
	/* XRC queues carry no XRC segment on UMRs (as libmlx5) */
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 12, flags & ~RF_SEND_RING, rf_htobe32(mw_rkey),
		     wr_id);
	rf__sq_umr_fence(sq);
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);		/* the UMR and its fence NOP */
	return 0;
}

/*
 * rf_sq_post_local_inv - invalidate rkey (a memory window's, or a
 * memory key's) locally; remote access with it fails afterwards. 2 BBs,
 * plus 1 for the fence NOP. -EINVAL on a UD queue, as for the bind.
 */
static inline int rf_sq_post_local_inv(struct rf_sq *sq, uint32_t rkey, uint32_t flags,
				       uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_ctrl_seg *u;

	if (RF_UNLIKELY(sq->kind == RF_QP_UD))
		return -EINVAL;
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 2) + 2 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 2);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET |
			    RF_UMR_CTRL_FLAG_CHECK_QPN, 0, RF_UMR_MKEY_MASK_INVALIDATE);
	rf_set_mkey_context_seg((struct rf_wqe_mkey_context_seg *)(u + 1),
				RF_MKEY_CONTEXT_FREE, 0, RF_MKEY_NO_QPN, 0, 0);
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 8, flags & ~RF_SEND_RING, rf_htobe32(rkey), wr_id);
	rf__sq_umr_fence(sq);
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);		/* the UMR and its fence NOP */
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_MW_H */
