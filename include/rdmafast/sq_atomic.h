/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_atomic.h - one call per atomic WQE: 8-byte compare-and-swap
 * and fetch-and-add, and the masked 4- and 8-byte forms.
 *
 * The remote operand at raddr must be naturally aligned (8 bytes; 4 for the
 * 32-bit masked forms) and is in the target's host order, as for its CPU.
 * The original remote value lands at laddr (lkey). Its byte order depends
 * on the device: big-endian when the HCA's atomic_req_8B_endianness_mode
 * is 0 (the IB convention, most ConnectX; convert with rf_be64toh()), host
 * order when it is 1. Probe once with a fetch-and-add of 0 on a known
 * value if you cannot know (examples/atomics.c does).
 *
 * Each call returns 0, -ENOSPC or -EINVAL (UD and UC queues have no
 * atomics: sq.h, Errors) and rings only with RF_SEND_RING.
 */
#ifndef RDMAFAST_SQ_ATOMIC_H
#define RDMAFAST_SQ_ATOMIC_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq_post.h>
#include <rdmafast/detail/sq_atomic.h>

RF_BEGIN_DECLS

/* rf_sq_post_cas - 8-byte compare-and-swap: if *raddr == compare, swap. */
RF_INLINE int rf_sq_post_cas(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			     uint32_t rkey, uint64_t raddr, uint64_t compare,
			     uint64_t swap, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_atomic(sq, RF_OPCODE_ATOMIC_CS, lkey, laddr, rkey, raddr,
				  swap, compare, flags, wr_id);
}

/* rf_sq_post_faa - 8-byte fetch-and-add. */
RF_INLINE int rf_sq_post_faa(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			     uint32_t rkey, uint64_t raddr, uint64_t add,
			     uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_atomic(sq, RF_OPCODE_ATOMIC_FA, lkey, laddr, rkey, raddr,
				  add, 0, flags, wr_id);
}

/*
 * Masked ("extended") atomics. The QP must be in extended atomic mode
 * (the kernel picks it from the HCA's capabilities). Compare-and-swap
 * replaces the bits of swap_mask when the bits of compare_mask match;
 * fetch-and-add stops carries at the set bits of field_boundary.
 */
RF_INLINE int rf_sq_post_masked_cs32(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr,
				     uint32_t compare, uint32_t compare_mask,
				     uint32_t swap, uint32_t swap_mask,
				     uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 4, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_cs32_seg((struct rf_wqe_masked_cs32_seg *)m, swap, compare, swap_mask,
			       compare_mask);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_4B, 3, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_cs64(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr,
				     uint64_t compare, uint64_t compare_mask,
				     uint64_t swap, uint64_t swap_mask,
				     uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 2, lkey, laddr, 8, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_cs64_seg((struct rf_wqe_masked_cs64_seg *)m, swap, compare, swap_mask,
			       compare_mask);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_8B, 4, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_fa32(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr, uint32_t add,
				     uint32_t field_boundary, uint32_t flags,
				     uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 4, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_fa32_seg((struct rf_wqe_masked_fa32_seg *)m, add, field_boundary);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_4B, 3, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_fa64(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr, uint64_t add,
				     uint64_t field_boundary, uint32_t flags,
				     uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 8, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_fa64_seg((struct rf_wqe_masked_fa64_seg *)m, add, field_boundary);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_8B, 3, 0, wr_id);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_ATOMIC_H */
