/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_batch.h - work requests (struct rf_sq_wr, sq_wr.h) posted one
 * at a time or as a list that rings once, the shape of ibv_post_send(). A
 * switch on the opcode picks the one-call post: on a hot path, call that
 * post directly.
 */
#ifndef RDMAFAST_SQ_BATCH_H
#define RDMAFAST_SQ_BATCH_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_wr.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/sq_data.h>
#include <rdmafast/sq_atomic.h>
#include <rdmafast/detail/sq_data.h>

RF_BEGIN_DECLS

/* Post one work request; the generic (switching) path. */
static inline int rf_sq_post_wr(struct rf_sq *sq, const struct rf_sq_wr *wr)
{
	uint32_t fl = wr->flags & ~RF_SEND_INLINE;
	int inl = (wr->flags & RF_SEND_INLINE) != 0;
	const struct rf_sge *s = wr->sg_list;

	switch (wr->opcode) {
	case RF_WR_SEND:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_SEND, 0)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND, 0, 0, 0, 0, s,
					    wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_IMM:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_SEND_IMM, 0)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND_IMM, wr->imm, 0, 0, 0,
					    s, wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_INV:
		return rf__sq_post_sg(sq, RF_OPCODE_SEND_INVAL,
				      rf_htobe32(wr->inv_rkey), 0, 0, 0, s,
				      wr->num_sge, fl, wr->wr_id);
	case RF_WR_WRITE:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_RDMA_WRITE, 1)
			   : rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE, 0, 1, wr->rkey,
					    wr->remote_addr, s, wr->num_sge, fl,
					    wr->wr_id);
	case RF_WR_WRITE_IMM:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_RDMA_WRITE_IMM, 1)
			   : rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE_IMM, wr->imm, 1,
					    wr->rkey, wr->remote_addr, s,
					    wr->num_sge, fl, wr->wr_id);
	case RF_WR_READ:
		return rf__sq_post_sg(sq, RF_OPCODE_RDMA_READ, 0, 1, wr->rkey,
				      wr->remote_addr, s, wr->num_sge, fl, wr->wr_id);
	case RF_WR_NOP:
		return rf_sq_post_nop(sq, fl, wr->wr_id);
	default:
		break;
	}
	/* atomics: exactly one result buffer */
	if (wr->num_sge != 1 || inl)
		return -EINVAL;
	switch (wr->opcode) {
	case RF_WR_CAS:
		return rf_sq_post_cas(sq, s->lkey, s->addr, wr->rkey, wr->remote_addr,
				      wr->compare_add, wr->swap, fl, wr->wr_id);
	case RF_WR_FAA:
		return rf_sq_post_faa(sq, s->lkey, s->addr, wr->rkey, wr->remote_addr,
				      wr->compare_add, fl, wr->wr_id);
	case RF_WR_MASKED_CS32:
		return rf_sq_post_masked_cs32(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr,
					      (uint32_t)wr->compare_add,
					      (uint32_t)wr->compare_mask,
					      (uint32_t)wr->swap,
					      (uint32_t)wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_CS64:
		return rf_sq_post_masked_cs64(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr, wr->compare_add,
					      wr->compare_mask, wr->swap,
					      wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_FA32:
		return rf_sq_post_masked_fa32(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr,
					      (uint32_t)wr->compare_add,
					      (uint32_t)wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_FA64:
		return rf_sq_post_masked_fa64(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr, wr->compare_add,
					      wr->swap_mask, fl, wr->wr_id);
	default:
		return -EINVAL;
	}
}

/*
 * rf_sq_post_batch - post wr[0..n) in order, stopping at the first that
 * fails, then ring once if anything was posted: the equivalent of one
 * ibv_post_send() call with a list. Returns how many were posted (0..n);
 * *err, if not NULL, receives the failure (-ENOSPC, -EINVAL) or 0.
 * Unlike the rf_sq_post_* calls, this rings.
 */
static inline int rf_sq_post_batch(struct rf_sq *sq, const struct rf_sq_wr *wr,
				   int n, int *err)
{
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		rc = rf_sq_post_wr(sq, &wr[i]);
		if (rc)
			break;
	}
	if (i)
		rf_sq_ring(sq);
	if (err)
		*err = rc;
	return i;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_BATCH_H */
