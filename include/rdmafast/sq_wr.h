/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_wr.h - one work request in the ibv_send_wr shape: the
 * opcode, the gather list and every operand in one struct, whatever the
 * opcode (sq_batch.h posts it).
 */
#ifndef RDMAFAST_SQ_WR_H
#define RDMAFAST_SQ_WR_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/types.h>

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

RF_END_DECLS

#endif /* RDMAFAST_SQ_WR_H */
