/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq.h - the words the CQ's requester fast path compares and
 * stores: the last 8 bytes of a CQE as one load, and 16 bytes of a
 * completion record as eight 16-bit lanes.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CQ_H
#define RDMAFAST_DETAIL_CQ_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/cqe.h>

RF_BEGIN_DECLS

/* The sop_drop_qpn word of no requester CQE (opcode 0xff, QPN 0xffffff). */
#define RF__CQ_NO_SOP 0xffffffffU

/*
 * 16 bytes of a completion record as eight 16-bit lanes (rf_cq.req_rec).
 * The alignment is lowered to 8 so that stores into a struct rf_wc array
 * (8-byte aligned) are unaligned vector stores.
 */
typedef uint16_t rf__v8u16 __attribute__((vector_size(16), aligned(8)));

/*
 * Bytes 56..63 of a CQE64 (sop_drop_qpn, wqe_counter, signature, op_own)
 * as one 8-byte load. The fast path of rf_cq_poll() compares them, with
 * wqe_counter and signature masked off, against rf_cq.want: one compare
 * tests ownership, CQE opcode, format, SE, QPN and WQE opcode. may_alias:
 * the same bytes are written as struct rf_cqe64 fields (tests, emulator).
 */
typedef uint64_t rf__cqe_tail_t __attribute__((may_alias, aligned(8)));

#if RF_LITTLE_ENDIAN
/* op_own is the top byte, sop_drop_qpn (as stored) the low word */
#define RF__CQE_TAIL_OWNER ((uint64_t)RF_CQE_OWNER_MASK << 56)
#define RF__CQE_TAIL_MATCH 0xff000000ffffffffULL
#else
/* op_own is the low byte, sop_drop_qpn the high word */
#define RF__CQE_TAIL_OWNER ((uint64_t)RF_CQE_OWNER_MASK)
#define RF__CQE_TAIL_MATCH 0xffffffff000000ffULL
#endif

/* The tail word's sop_drop_qpn part for a word as stored (rf__cqe_sop_raw()). */
RF_INLINE uint64_t rf__cqe_tail_sop(uint32_t sop_raw)
{
#if RF_LITTLE_ENDIAN
	return sop_raw;
#else
	return (uint64_t)sop_raw << 32;
#endif
}

RF_INLINE uint8_t rf__cqe_tail_op_own(uint64_t t)
{
#if RF_LITTLE_ENDIAN
	return (uint8_t)(t >> 56);
#else
	return (uint8_t)t;
#endif
}

/*
 * wqe_counter from a tail word, in the low 16 bits; the bits above are
 * other bytes of the word: masking with a slot mask or storing 16 bits
 * drops them, so no instruction is spent on zero-extending.
 */
RF_INLINE uint32_t rf__cqe_tail_counter(uint64_t t)
{
#if RF_LITTLE_ENDIAN
	return __builtin_bswap32((uint32_t)(t >> 16));
#else
	return (uint32_t)(t >> 16);
#endif
}

/* want with the requester fast path emptied, its owner bit kept. */
RF_INLINE uint64_t rf__cq_want_none(uint64_t want)
{
	return (want & RF__CQE_TAIL_OWNER) | rf__cqe_tail_sop(RF__CQ_NO_SOP);
}

/* The sop_drop_qpn word of a CQE as stored (for rf_cq.want). */
RF_INLINE uint32_t rf__cqe_sop_raw(const struct rf_cqe64 *cqe)
{
	return (RF_FORCE uint32_t)cqe->sop_drop_qpn;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CQ_H */
