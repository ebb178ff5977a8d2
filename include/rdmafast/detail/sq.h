/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq.h - the send queue's encodings: the control segment
 * as the two 8-byte words the posts store, the mask of the post flags that
 * are control-segment bits, the DS of a data body.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_H
#define RDMAFAST_DETAIL_SQ_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>

RF_BEGIN_DECLS

#define RF__SEND_FM  0xffU	/* the post flags that go into fm_ce_se */

/*
 * struct rf_sq's no_bf_bias on a queue without BlueFlame: added to
 * bf_rung_pi, it puts that index out of reach of any pi (pi - rung is at
 * most the queue size, 0x8000), so no WQE ever matches it and goes by
 * BlueFlame.
 */
#define RF__SQ_NO_BF_BIAS 0x80000000U

/*
 * Where a slot's side-table entry and its WQE are, from one offset: the
 * entry's, idx * 16 (rf__sq_slot_off()); the WQE's is 4 times that, the
 * scale of an address, no instruction. Indexing the 16-byte entries by idx
 * takes a shift an address cannot do (it scales by 8 at most), and the
 * compilers, left to themselves, shift idx by 4 for the entry and again by
 * 6 for the WQE: one instruction more wherever both are touched (every
 * post, the ring). The empty asm hands them the offset as it is.
 */
RF_INLINE size_t rf__sq_slot_off(uint32_t idx)
{
	size_t off = (size_t)idx * sizeof(struct rf_sq_slot);

	__asm__("" : "+r"(off));
	return off;
}

RF_INLINE struct rf_sq_slot *rf__sq_slot_at(struct rf_sq_slot *table, size_t off)
{
	return (struct rf_sq_slot *)(void *)((uint8_t *)table + off);
}

RF_INLINE struct rf_wqe_ctrl_seg *rf__sq_wqe_at(uint8_t *buf, size_t off)
{
	RF_STATIC_ASSERT(RF_SEND_WQE_BB == 4 * sizeof(struct rf_sq_slot), "a scale of 4");
	return (struct rf_wqe_ctrl_seg *)(void *)(buf + off * 4);
}

/* DS of a one-data-segment body: none for length 0 (0 would mean 2 GiB). */
#define RF__DS_DATA(len) ((uint32_t)((len) != 0))

/*
 * ctrl bytes 8..15 with fm_ce_se = fm (and the rest 0), as the 8-byte word
 * stored: fm is byte 11.
 */
RF_INLINE uint64_t rf__sq_fm_bits(uint32_t fm)
{
#if RF_LITTLE_ENDIAN
	return (uint64_t)fm << 24;
#else
	return (uint64_t)fm << 32;
#endif
}

/*
 * ctrl bytes 0..7 as the 8-byte word stored: opmod_idx_opcode (opmod, the
 * WQE index pi & 0xffff, opcode), then qpn_ds plus ds_add DS units. A post
 * adds rf__sq_ctrl_lo(0, pi, opcode, opmod, ds) to sq->ctrl_lo: with the
 * opcode, opmod and DS constant, that is the index swapped into place
 * (three instructions) and one add. Adding is exact: the parts do not
 * overlap and the DS byte never carries (at most 63).
 */
RF_INLINE uint64_t rf__sq_ctrl_lo(__be32 qpn_ds, uint32_t pi, uint8_t opcode,
				  uint8_t opmod, uint32_t ds_add)
{
#if RF_LITTLE_ENDIAN
	uint64_t idx = pi & 0xffffU;	/* bytes 1..2 once swapped from 5..6 */

	return ((uint64_t)(RF_FORCE uint32_t)qpn_ds << 32) +
	       (((uint64_t)ds_add << 56) | ((uint32_t)opcode << 24) | opmod) +
	       __builtin_bswap64(idx << 40);
#else
	return (RF_FORCE uint32_t)qpn_ds + ds_add +
	       ((uint64_t)(((uint32_t)opmod << 24) | ((uint32_t)(uint16_t)pi << 8) |
			   opcode) << 32);
#endif
}

/*
 * A WQE's basic block as the posts store it: eight 8-byte words, the
 * control segment in w0 (opmod_idx_opcode, qpn_ds) and w1 (signature,
 * DCI id, fm_ce_se, imm), then the body.
 *
 * Named members of a struct that no rf_sq field is, rather than an array
 * or a union, because of how the compilers' type-based alias analysis
 * tells a WQE store from a queue field: clang types a store through a
 * union as char, which may alias anything, and a store to an element of an
 * array member as a bare uint64_t, which may alias the queue's uint64_t
 * fields; a named member keeps the path "struct rf__wqe_words, offset"
 * that no rf_sq field has. gcc tells them apart either way. After a store
 * that may alias the queue, a burst of posts reloads the queue's fields
 * in every post.
 * Reading a WQE back goes through memcpy (rf_ring_db()), or follows a
 * compiler barrier (the rings): both are ordered with these stores.
 */
struct rf__wqe_words {
	uint64_t w0, w1, w2, w3, w4, w5, w6, w7;
};

/*
 * Store words 0..n-1 of q to v, or words 2..n-1 only (_BODY) (n a
 * constant, 2 <= n <= 8), straight-line: a loop left to gcc -O2 stays a
 * loop and puts q in memory.
 */
#define RF__WQE_STORE_BODY(v, q, n)				\
	do {							\
		if ((n) > 2) (v)->w2 = (q)[2];			\
		if ((n) > 3) (v)->w3 = (q)[3];			\
		if ((n) > 4) (v)->w4 = (q)[4];			\
		if ((n) > 5) (v)->w5 = (q)[5];			\
		if ((n) > 6) (v)->w6 = (q)[6];			\
		if ((n) > 7) (v)->w7 = (q)[7];			\
	} while (0)

#define RF__WQE_STORE(v, q, n)					\
	do {							\
		(v)->w0 = (q)[0];				\
		(v)->w1 = (q)[1];				\
		RF__WQE_STORE_BODY(v, q, n);			\
	} while (0)

/* Bytes 8..15 of a control segment: rf__sq_fm_bits() and imm (bytes 12..15). */
RF_INLINE uint64_t rf__sq_ctrl_hi(uint64_t fm_bits, __be32 imm)
{
#if RF_LITTLE_ENDIAN
	return ((uint64_t)(RF_FORCE uint32_t)imm << 32) | fm_bits;
#else
	return fm_bits | (RF_FORCE uint32_t)imm;
#endif
}

/* Fill a control segment as rf_set_ctrl_seg() does, in two stores. */
RF_INLINE void rf__sq_set_ctrl(struct rf_wqe_ctrl_seg *c, uint32_t pi, uint8_t opcode,
			       uint8_t opmod, __be32 qpn_ds, uint64_t fm_bits, __be32 imm)
{
	struct rf__wqe_words *v = (struct rf__wqe_words *)c;

	v->w0 = rf__sq_ctrl_lo(qpn_ds, pi, opcode, opmod, 0);
	v->w1 = rf__sq_ctrl_hi(fm_bits, imm);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_H */
