/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_batch.h - the inline form of a work request's gather list,
 * for rf_sq_post_wr().
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_BATCH_H
#define RDMAFAST_DETAIL_SQ_BATCH_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_wr.h>
#include <rdmafast/detail/sq_data.h>

RF_BEGIN_DECLS

/* Gather the SGE list into a stack buffer for an inline post. */
static inline int rf__sq_post_wr_inline(struct rf_sq *sq, const struct rf_sq_wr *wr,
					uint8_t opcode, int has_raddr)
{
	uint8_t buf[RF_INLINE_MAX_LEN];
	uint32_t i, len = 0;

	/* check the total before reading any of it */
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > sq->max_inline - len ||
		    wr->sg_list[i].length > sizeof(buf) - len)
			return -EINVAL;
		len += wr->sg_list[i].length;
	}
	for (i = 0, len = 0; i < wr->num_sge; i++) {
		__builtin_memcpy(buf + len, (const void *)(uintptr_t)wr->sg_list[i].addr,
				 wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	return rf__sq_post_inline(sq, opcode, wr->imm, has_raddr, wr->rkey,
				  wr->remote_addr, buf, len,
				  wr->flags & ~RF_SEND_INLINE, wr->wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_BATCH_H */
