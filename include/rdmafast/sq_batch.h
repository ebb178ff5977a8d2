/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_batch.h - work requests in the ibv_post_send shape: one struct
 * per WQE, whatever its opcode, posted one at a time or as a list that
 * rings once. A switch on the opcode picks the one-call post: for the
 * hot path, call that post directly.
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
#include <rdmafast/sq_slots.h>
#include <rdmafast/sq_data.h>
#include <rdmafast/sq_atomic.h>
#include <rdmafast/detail/sq_data.h>

RF_BEGIN_DECLS

enum rf_wr_opcode {
	RF_WR_SEND = 0,
	RF_WR_SEND_IMM,
	RF_WR_SEND_INV,
	RF_WR_WRITE,
	RF_WR_WRITE_IMM,
	RF_WR_READ,
	RF_WR_CAS,		/* 8 bytes: compare_add = compare, swap */
	RF_WR_FAA,		/* 8 bytes: compare_add = add */
	RF_WR_MASKED_CS32,	/* compare_add/compare_mask, swap/swap_mask */
	RF_WR_MASKED_CS64,
	RF_WR_MASKED_FA32,	/* compare_add = add, swap_mask = field boundary */
	RF_WR_MASKED_FA64,
	RF_WR_NOP,
};

/*
 * One work request for rf_sq_post_batch(). Atomics use sg_list[0] as the
 * result buffer.
 */
struct rf_sq_wr {
	uint64_t wr_id;
	const struct rf_sge *sg_list;
	uint32_t num_sge;
	uint32_t opcode;	/* enum rf_wr_opcode */
	uint32_t flags;		/* RF_SEND_* | RF_SEND_INLINE */
	__be32   imm;		/* SEND_IMM / WRITE_IMM */
	uint32_t rkey;
	uint32_t inv_rkey;	/* SEND_INV */
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint64_t compare_mask;
	uint64_t swap_mask;
};

/* Post one work request; the generic (switching) path. */
static inline int rf_sq_post_wr(struct rf_sq *sq, const struct rf_sq_wr *wr)
{
	uint32_t fl = wr->flags & ~RF_SEND_INLINE;
	int inl = (wr->flags & RF_SEND_INLINE) != 0;
	const struct rf_sge *s = wr->sg_list;

	switch (wr->opcode) {
	case RF_WR_SEND:
		return inl ? rf__sq_post_gather_inline(sq, RF_OPCODE_SEND, wr->imm, 0,
								     wr->rkey, wr->remote_addr, s,
								     wr->num_sge, fl, wr->wr_id)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND, 0, 0, 0, 0, s,
					    wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_IMM:
		return inl ? rf__sq_post_gather_inline(sq, RF_OPCODE_SEND_IMM, wr->imm, 0,
								     wr->rkey, wr->remote_addr, s,
								     wr->num_sge, fl, wr->wr_id)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND_IMM, wr->imm, 0, 0, 0,
					    s, wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_INV:
		return rf__sq_post_sg(sq, RF_OPCODE_SEND_INVAL,
				      rf_htobe32(wr->inv_rkey), 0, 0, 0, s,
				      wr->num_sge, fl, wr->wr_id);
	case RF_WR_WRITE:
		return inl ? rf__sq_post_gather_inline(sq, RF_OPCODE_RDMA_WRITE, wr->imm, 1,
								     wr->rkey, wr->remote_addr, s,
								     wr->num_sge, fl, wr->wr_id)
			   : rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE, 0, 1, wr->rkey,
					    wr->remote_addr, s, wr->num_sge, fl,
					    wr->wr_id);
	case RF_WR_WRITE_IMM:
		return inl ? rf__sq_post_gather_inline(sq, RF_OPCODE_RDMA_WRITE_IMM, wr->imm, 1,
								     wr->rkey, wr->remote_addr, s,
								     wr->num_sge, fl, wr->wr_id)
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
