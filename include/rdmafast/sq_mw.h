/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_mw.h - memory windows: bind (type 1 and 2) and local
 * invalidate, by UMR WQE.
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
 *
 * Type-1 windows (ibv_alloc_mw(IBV_MW_TYPE_1)) are bound by the same WQE
 * with RF_MW_TYPE_1 in the access bits: bound to no QP, and rebound
 * without a check that the window is free, as libmlx5's ibv_bind_mw()
 * posts them.
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
#include <rdmafast/detail/sq_mw.h>

RF_BEGIN_DECLS

/*
 * In rf_sq_post_bind_mw()'s access, beside the RF_MKEY_ACCESS_* bits: a
 * zero-based window, which the peer addresses from 0 (its offset) rather
 * than by virtual address (IBV_ACCESS_ZERO_BASED; rf_mw_access_ibv()).
 */
#define RF_MW_ZERO_BASED	(1u << 8)
/*
 * In rf_sq_post_bind_mw()'s access: the window is type 1 (any QP of the
 * PD may use it; rebinding needs no unbind). Not with RF_MW_ZERO_BASED,
 * which libmlx5's ibv_bind_mw() refuses for type 1 as well.
 */
#define RF_MW_TYPE_1		(1u << 9)

/* The next rkey of a memory window: same index, tag (low byte) + 1. */
RF_INLINE uint32_t rf_mw_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00U) | ((rkey + 1) & 0xffU);
}

/*
 * rf_sq_post_bind_mw - bind the memory window mw_rkey (its current key)
 * to [addr, addr + len) of the MR lkey, with key new_rkey (same index,
 * new tag) and access RF_MKEY_ACCESS_* bits, and RF_MW_ZERO_BASED for a
 * window addressed from 0 (verbs.h: rf_mw_access_ibv()). A type-2
 * window is bound for remote access through this QP only; RF_MW_TYPE_1
 * in access binds a type-1 window (any QP of the PD). The MR must allow
 * binding (IBV_ACCESS_MW_BIND). 3 BBs, plus 1 for the fence NOP.
 * len 0 frees the window instead, as libmlx5 does: a type-1 window is
 * unbound, a type-2 one invalidated (as rf_sq_post_local_inv(), which
 * checks that it is bound to this QP); 2 BBs plus the NOP.
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
	int t1 = (access & RF_MW_TYPE_1) != 0;

	if (RF_UNLIKELY(len > 0x80000000ULL || (new_rkey >> 8) != (mw_rkey >> 8) ||
			sq->kind == RF_QP_UD || (t1 && (access & RF_MW_ZERO_BASED))))
		return -EINVAL;
	if (RF_UNLIKELY(!len))
		return rf__sq_post_umr_free(sq, mw_rkey, (uint8_t)new_rkey, !t1, flags, wr_id);
	/* the bind (3 BBs) and the fence NOP, possibly after padding */
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 3) + 3 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 3);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	/* type 1: no check that the window is free, no bound QPN */
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET |
			    (t1 ? 0 : RF_UMR_CTRL_FLAG_CHECK_FREE), RF_UMR_KLM_OCTOWORDS(1),
			    RF_UMR_MKEY_MASK_BIND | (t1 ? 0 : RF_UMR_MKEY_MASK_QPN));
	m = (struct rf_wqe_mkey_context_seg *)(u + 1);
	/* zero based: the mkey starts at 0, the KLM still names the memory */
	rf_set_mkey_context_seg(m, 0, (uint8_t)access,
				(t1 ? RF_MKEY_NO_QPN : sq->qpn << 8) | (new_rkey & 0xff),
				(access & RF_MW_ZERO_BASED) ? 0 : addr, len);
	k = (struct rf_wqe_umr_klm_seg *)(m + 1);
	rf_set_umr_klm_seg(k, (uint32_t)len, lkey, addr);
	__builtin_memset(k + 1, 0, 3 * sizeof(*k));	/* the KLM block is 64 bytes */
	/* XRC queues carry no XRC segment on UMRs (as libmlx5) */
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 12, flags & ~RF_SEND_RING, rf_htobe32(mw_rkey),
		     wr_id);
	rf__sq_umr_fence(sq, flags & RF_SEND_RING);
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
	if (RF_UNLIKELY(sq->kind == RF_QP_UD))
		return -EINVAL;
	return rf__sq_post_umr_free(sq, rkey, 0, 1, flags, wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_MW_H */
