/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/tm.h - the formats of hardware tag matching: the segment of
 * a TAG_MATCHING WQE (opcode 0x28, hw/wqe.h) and what a CQE of a TM SRQ
 * carries (app, app_op, the operation's result), as mlx5dv.h and
 * libmlx5's cq.c (rdma-core 44) define them.
 */
#ifndef RDMAFAST_HW_TM_H
#define RDMAFAST_HW_TM_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>

RF_BEGIN_DECLS

/* ---- Tag-matching segment (32 bytes), after ctrl in a TAG_MATCHING WQE --- */

/*
 * One operation on a TM SRQ's tag list, posted on the SRQ's command QP
 * (struct mlx5_wqe_tm_seg of mlx5dv.h). The operation is the upper nibble
 * of opcode. APPEND fills the entry the device holds as its next free one
 * and names in index the entry software will hand it next (the device
 * keeps no free list of its own); a data segment, the tagged buffer,
 * follows. REMOVE clears entry index; NOP only carries the flags.
 */
enum {
	RF_TM_OPCODE_NOP    = 0x0,
	RF_TM_OPCODE_APPEND = 0x1,
	RF_TM_OPCODE_REMOVE = 0x2,
	RF_TM_SEG_SW_CNT    = 1 << 6,	/* sw_cnt: unexpected messages software handled */
	RF_TM_SEG_CQE_REQ   = 1 << 7,	/* a completion for this operation */
};

struct rf_wqe_tm_seg {
	uint8_t opcode;			/* [7:4] RF_TM_OPCODE_* */
	uint8_t flags;			/* RF_TM_SEG_* */
	__be16  index;
	uint8_t rsvd0[2];
	__be16  sw_cnt;
	uint8_t rsvd1[8];
	__be64  append_tag;
	__be64  append_mask;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_tm_seg) == 32, "tm seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_tm_seg, index) == 2, "tm seg index");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_tm_seg, sw_cnt) == 6, "tm seg sw_cnt");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_tm_seg, append_tag) == 16, "tm seg tag");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_tm_seg, append_mask) == 24, "tm seg mask");

/* ---- Tag matching: app, app_op and the first 16 bytes of the CQE -------- */

/*
 * A CQE with app RF_CQE_APP_TM belongs to a TM SRQ. Its app_op says what
 * happened; for a matched message app_info is the tag list entry. The
 * first 16 bytes of the CQE hold either the message's tag-matching header
 * (struct ibv_tmh: opcode, app context, tag; a receive) or, for a list
 * operation's NO_PACKET CQE, struct rf_cqe_tm_op.
 */
enum {
	RF_CQE_APP_TM = 1,
	RF_CQE_TM_CONSUMED              = 0x1,	/* matched; the data follows later */
	RF_CQE_TM_EXPECTED              = 0x2,	/* the data of a match has arrived */
	RF_CQE_TM_UNEXPECTED            = 0x3,	/* tagged, unmatched: in an SRQ WQE */
	RF_CQE_TM_NO_TAG                = 0x4,	/* untagged: in an SRQ WQE */
	RF_CQE_TM_APPEND                = 0x5,	/* list operations */
	RF_CQE_TM_REMOVE                = 0x6,
	RF_CQE_TM_NOOP                  = 0x7,
	RF_CQE_TM_CONSUMED_SW_RNDV      = 0x9,	/* matched rendezvous left to software */
	RF_CQE_TM_CONSUMED_MSG          = 0xa,	/* matched and complete */
	RF_CQE_TM_CONSUMED_MSG_SW_RNDV  = 0xb,
	RF_CQE_TM_MSG_COMPLETION_CANCELED = 0xc,	/* rendezvous data failed */
};

/* rf_cqe_tm_op.success (host order): the operation succeeded */
#define RF_CQE_TM_OP_SUCCESS 0x80000000U

struct rf_cqe_tm_op {
	__be32  success;		/* RF_CQE_TM_OP_SUCCESS */
	__be16  hw_phase_cnt;		/* the device's count of unexpected messages */
	uint8_t rsvd[10];
};
RF_STATIC_ASSERT(sizeof(struct rf_cqe_tm_op) == 16, "tm op cqe size");

RF_END_DECLS

#endif /* RDMAFAST_HW_TM_H */
