/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/tm.h - the tag-matching segment and the CQE tables of
 * tm.h.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/tm.h> and never this file; names, arguments and layout here
 * change without notice.
 */
#ifndef RDMAFAST_DETAIL_TM_H
#define RDMAFAST_DETAIL_TM_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/hw/tm.h>
#include <rdmafast/types.h>

RF_BEGIN_DECLS

/*
 * The whole 32-byte segment, every byte: libmlx5 leaves the bytes an
 * operation does not use as the queue held them (zero on a queue's first
 * lap), which no device reads; rdmafast writes zeros, so a WQE never
 * depends on what was in the slot.
 */
RF_INLINE void rf__tm_set_seg(struct rf_wqe_tm_seg *s, uint32_t op, uint32_t flags,
			      uint32_t index, uint16_t sw_cnt, uint64_t tag, uint64_t mask)
{
	/*
	 * Bytes 0..7 (opcode, flags, index, 0, sw_cnt) as one word: with op
	 * and flags constant, a swapped index and a constant.
	 */
	uint64_t sw = flags & RF_TM_SEG_SW_CNT ? sw_cnt : 0;
	uint64_t w0;

#if RF_LITTLE_ENDIAN
	w0 = (uint64_t)(uint8_t)(op << 4) |
	     (uint64_t)(flags & (RF_TM_SEG_CQE_REQ | RF_TM_SEG_SW_CNT)) << 8 |
	     (uint64_t)__builtin_bswap16((uint16_t)index) << 16 |
	     (uint64_t)__builtin_bswap16((uint16_t)sw) << 48;
#else
	w0 = (uint64_t)(uint8_t)(op << 4) << 56 |
	     (uint64_t)(flags & (RF_TM_SEG_CQE_REQ | RF_TM_SEG_SW_CNT)) << 48 |
	     (uint64_t)(uint16_t)index << 32 | sw;
#endif
	__builtin_memcpy(s, &w0, 8);
	__builtin_memset(s->rsvd1, 0, sizeof(s->rsvd1));
	s->append_tag = rf_htobe64(tag);
	s->append_mask = rf_htobe64(mask);
}

/* A signaled list operation whose completion is to come. */
struct rf__tm_op {
	uint64_t wr_id;
	uint32_t tag;		/* its entry; RF_TM_NIL for a sync */
	uint32_t pi;		/* its WQE's basic block */
};

/* Record a signaled operation at ops[*tail & mask] (libmlx5: its op ring). */
RF_INLINE void rf__tm_op_push(struct rf__tm_op *ops, uint32_t *tail, uint32_t mask,
			      uint64_t wr_id, uint32_t tag, uint32_t pi)
{
	struct rf__tm_op *o = &ops[(*tail)++ & mask];

	o->wr_id = wr_id;
	o->tag = tag;
	o->pi = pi;
}

/*
 * What a tag-matching CQE's app_op means, as libmlx5's cq.c reads it:
 * the record's opcode on a receive CQE and on a NO_PACKET one
 * (RF_WC_UNKNOWN where libmlx5 has none), the RF_TM_WC_* flags, and
 * whether the entry named in app_info is done with (no second CQE to
 * come for it).
 */
struct rf__tm_kind {
	uint8_t recv_opcode;
	uint8_t nopkt_opcode;
	uint8_t tm_flags;
	uint8_t complete;
};

RF_INLINE const struct rf__tm_kind *rf__tm_kind(uint32_t app_op)
{
	/* flags: 1 sync requested, 2 match, 4 data valid (RF_TM_WC_*) */
	static const struct rf__tm_kind t[16] = {
		/* 0x0 */ { RF_WC_RECV, RF_WC_UNKNOWN, 0, 0 },
		/* 0x1 CONSUMED    */ { RF_WC_TM_RECV, RF_WC_TM_RECV, 2, 0 },
		/* 0x2 EXPECTED    */ { RF_WC_TM_RECV, RF_WC_UNKNOWN, 4, 1 },
		/* 0x3 UNEXPECTED  */ { RF_WC_TM_RECV, RF_WC_UNKNOWN, 0, 0 },
		/* 0x4 NO_TAG      */ { RF_WC_TM_NO_TAG, RF_WC_UNKNOWN, 0, 0 },
		/* 0x5 APPEND      */ { RF_WC_RECV, RF_WC_TM_ADD, 0, 0 },
		/* 0x6 REMOVE      */ { RF_WC_RECV, RF_WC_TM_DEL, 0, 0 },
		/* 0x7 NOOP        */ { RF_WC_RECV, RF_WC_TM_SYNC, 0, 0 },
		/* 0x8 */ { RF_WC_RECV, RF_WC_UNKNOWN, 0, 0 },
		/* 0x9 CONSUMED_SW_RNDV     */ { RF_WC_TM_RECV, RF_WC_UNKNOWN, 2, 0 },
		/* 0xa CONSUMED_MSG         */ { RF_WC_TM_RECV, RF_WC_UNKNOWN, 6, 1 },
		/* 0xb CONSUMED_MSG_SW_RNDV */ { RF_WC_TM_RECV, RF_WC_UNKNOWN, 6, 1 },
		/* 0xc COMPLETION_CANCELED  */ { RF_WC_RECV, RF_WC_UNKNOWN, 6, 1 },
		/* 0xd */ { RF_WC_RECV, RF_WC_UNKNOWN, 0, 0 },
		/* 0xe */ { RF_WC_RECV, RF_WC_UNKNOWN, 0, 0 },
		/* 0xf */ { RF_WC_RECV, RF_WC_UNKNOWN, 0, 0 },
	};
	return &t[app_op & 15];
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_TM_H */
