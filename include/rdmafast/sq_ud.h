/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_ud.h - sends on a UD queue: the address vector of an address
 * handle after the control segment, then the payload.
 */
#ifndef RDMAFAST_SQ_UD_H
#define RDMAFAST_SQ_UD_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/copy.h>

RF_BEGIN_DECLS

/*
 * rf_sq_post_ud_send - UD SEND: ctrl, the address vector of an address
 * handle (mlx5dv_ah.av, 48 bytes) completed with the remote QPN and Q_Key,
 * then one data segment or, when data is non-NULL, inline payload.
 * -EINVAL on any other queue, nothing written: there the address vector
 * would be read as the segments of a connected WQE.
 */
RF_INLINE int rf_sq_post_ud_send(struct rf_sq *sq, const struct rf_wqe_av *av,
				 uint32_t remote_qpn, uint32_t qkey,
				 const void *data, uint32_t lkey, uint64_t laddr,
				 uint32_t len, __be32 imm, int with_imm,
				 uint32_t flags, uint64_t wr_id)
{
	uint32_t ds = 4;
	struct rf_wqe_ctrl_seg *c;
	uint8_t *p;

	if (RF_UNLIKELY(sq->kind != RF_QP_UD))
		return -EINVAL;
	if (data) {
		if (RF_UNLIKELY(len > sq->max_inline))
			return -EINVAL;
		ds += len ? RF_INLINE_DS(len) : 0;
	} else {
		ds += RF__DS_DATA(len);
	}
	if (RF_UNLIKELY(ds > RF_WQE_MAX_DS))
		return -EINVAL;
	c = rf_sq_reserve(sq, (ds + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB);
	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf_set_datagram_seg((struct rf_wqe_av *)(c + 1), av, remote_qpn, qkey);
	p = (uint8_t *)(c + 1) + sizeof(struct rf_wqe_av);
	if (data) {
		if (len) {
			rf_set_inline_hdr((struct rf_wqe_inline_seg *)p, len);
			rf__copy_inline(p + 4, (const uint8_t *)data, len);
		}
	} else if (len) {
		/*
		 * Only when counted in ds: the segment of a zero-length send
		 * would land in the next BB, another WQE's, or past the
		 * queue's end at its last slot.
		 */
		rf_set_data_seg((struct rf_wqe_data_seg *)p, len, lkey, laddr);
	}
	rf_sq_commit(sq, c, with_imm ? RF_OPCODE_SEND_IMM : RF_OPCODE_SEND, 0,
		     ds, flags, with_imm ? imm : 0, wr_id);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_UD_H */
