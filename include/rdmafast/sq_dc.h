/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_dc.h - posts on a DC initiator (DCI, RF_QP_DCI): every RC
 * operation, each WQE naming its own target. After the control segment
 * comes the destination's address vector with the DCT number and the DC
 * access key (as mlx5dv_wr_set_dc_addr(3) writes it), then the segments
 * of the RC WQE: remote address, atomic operands, data or inline payload.
 *
 * The destination is prepared once (rf_dc_dest_init(), or
 * rf_dc_dest_init_compact() for the 16-byte AV) and passed to every post,
 * so a post copies 48 or 16 prepared bytes and computes nothing for the
 * address. Each call returns 0, -ENOSPC or -EINVAL (sq.h, Errors),
 * with nothing written unless 0, and rings only with RF_SEND_RING; a WQE
 * of up to bf_bbs basic blocks (ctrl + 48-byte address vector + at most 2
 * more segments: 2 BBs; with the 16-byte AV, 1 BB) then goes out by
 * BlueFlame when it is alone.
 */
#ifndef RDMAFAST_SQ_DC_H
#define RDMAFAST_SQ_DC_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq_dc.h>

RF_BEGIN_DECLS

/*
 * rf_dc_dest_init - the destination (DCT dctn, access key dc_key) reached
 * by the path of an address handle's AV (mlx5dv_ah.av, see rf_ah_av_ibv()
 * in rdmafast/verbs.h), the 48-byte form libmlx5 writes
 * (mlx5_send_wr_set_dc_addr() in rdma-core providers/mlx5/qp.c), stream 0.
 */
RF_INLINE void rf_dc_dest_init(struct rf_dc_dest *d, const struct rf_wqe_av *ah_av,
			       uint32_t dctn, uint64_t dc_key)
{
	d->av = *ah_av;
	d->av.dqp_dct |= rf_htobe32(dctn | RF_EXTENDED_UD_AV);
	d->av.key.dc_key = rf_htobe64(dc_key);
	d->ctrl_hi = 0;
	d->av_ds = 3;
}

/*
 * rf_dc_dest_init_compact - the same destination in the 16-byte form.
 * Returns 0, or -EINVAL when the path needs more than bytes 0..15 of the
 * AV: a GRH (a global address handle, always on RoCE), a MAC or a GID.
 */
static inline int rf_dc_dest_init_compact(struct rf_dc_dest *d, const struct rf_wqe_av *ah_av,
				      uint32_t dctn, uint64_t dc_key)
{
	const uint8_t *tail = (const uint8_t *)ah_av + 16;
	unsigned i, any = 0;

	for (i = 0; i < sizeof(*ah_av) - 16; i++)
		any |= tail[i];
	if (any || (ah_av->dqp_dct & rf_htobe32(RF_EXTENDED_UD_AV)))
		return -EINVAL;
	rf_dc_dest_init(d, ah_av, dctn, dc_key);
	d->av.dqp_dct &= ~rf_htobe32(RF_EXTENDED_UD_AV);
	d->av_ds = 1;
	return 0;
}

/*
 * rf_dc_dest_set_stream - the DCI stream (mlx5dv_wr_set_dc_addr_stream(3))
 * of every WQE to d from now on: dci_stream_channel_id in the control
 * segment. Meaningful on a DCI created with DCI streams
 * (mlx5dv_create_qp(3), MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS), where it
 * is below 2^log_num_concurent; 0 otherwise.
 */
RF_INLINE void rf_dc_dest_set_stream(struct rf_dc_dest *d, uint16_t stream_id)
{
	d->ctrl_hi = rf__sq_dci_stream_bits(stream_id);
}

/* rf_sq_post_dc_write - RDMA WRITE of len bytes at laddr (lkey) to raddr (rkey) at d. */
RF_INLINE int rf_sq_post_dc_write(struct rf_sq *sq, const struct rf_dc_dest *d,
				  uint32_t lkey, uint64_t laddr, uint32_t len,
				  uint32_t rkey, uint64_t raddr, uint32_t flags,
				  uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_RDMA_WRITE, 0, 1, lkey, laddr, len,
			       rkey, raddr, flags, wr_id);
}

/* rf_sq_post_dc_write_imm - the same, consuming a receive of d's SRQ with imm. */
RF_INLINE int rf_sq_post_dc_write_imm(struct rf_sq *sq, const struct rf_dc_dest *d,
				      uint32_t lkey, uint64_t laddr, uint32_t len,
				      uint32_t rkey, uint64_t raddr, __be32 imm,
				      uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_RDMA_WRITE_IMM, imm, 1, lkey, laddr,
			       len, rkey, raddr, flags, wr_id);
}

/* rf_sq_post_dc_read - RDMA READ of len bytes at raddr (rkey) at d into laddr. */
RF_INLINE int rf_sq_post_dc_read(struct rf_sq *sq, const struct rf_dc_dest *d,
				 uint32_t lkey, uint64_t laddr, uint32_t len,
				 uint32_t rkey, uint64_t raddr, uint32_t flags,
				 uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_RDMA_READ, 0, 1, lkey, laddr, len,
			       rkey, raddr, flags, wr_id);
}

/* rf_sq_post_dc_send - SEND of len bytes at laddr (lkey) into a receive of d's SRQ. */
RF_INLINE int rf_sq_post_dc_send(struct rf_sq *sq, const struct rf_dc_dest *d,
				 uint32_t lkey, uint64_t laddr, uint32_t len,
				 uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_SEND, 0, 0, lkey, laddr, len, 0, 0,
			       flags, wr_id);
}

/* rf_sq_post_dc_send_imm - SEND with immediate (imm in network order). */
RF_INLINE int rf_sq_post_dc_send_imm(struct rf_sq *sq, const struct rf_dc_dest *d,
				     uint32_t lkey, uint64_t laddr, uint32_t len,
				     __be32 imm, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_SEND_IMM, imm, 0, lkey, laddr, len,
			       0, 0, flags, wr_id);
}

/* rf_sq_post_dc_send_inv - SEND that invalidates inv_rkey at d. */
RF_INLINE int rf_sq_post_dc_send_inv(struct rf_sq *sq, const struct rf_dc_dest *d,
				     uint32_t lkey, uint64_t laddr, uint32_t len,
				     uint32_t inv_rkey, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc1(sq, d, RF_OPCODE_SEND_INVAL, rf_htobe32(inv_rkey), 0,
			       lkey, laddr, len, 0, 0, flags, wr_id);
}

/* rf_sq_post_dc_write_inline - RDMA WRITE of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_dc_write_inline(struct rf_sq *sq, const struct rf_dc_dest *d,
					 const void *data, uint32_t len, uint32_t rkey,
					 uint64_t raddr, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc_inline(sq, d, RF_OPCODE_RDMA_WRITE, 0, 1, rkey, raddr,
				     data, len, flags, wr_id);
}

/* rf_sq_post_dc_send_inline - SEND of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_dc_send_inline(struct rf_sq *sq, const struct rf_dc_dest *d,
					const void *data, uint32_t len, uint32_t flags,
					uint64_t wr_id)
{
	return rf__sq_post_dc_inline(sq, d, RF_OPCODE_SEND, 0, 0, 0, 0, data, len,
				     flags, wr_id);
}

/* rf_sq_post_dc_send_imm_inline - SEND with immediate, payload inline. */
RF_INLINE int rf_sq_post_dc_send_imm_inline(struct rf_sq *sq, const struct rf_dc_dest *d,
					    const void *data, uint32_t len, __be32 imm,
					    uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc_inline(sq, d, RF_OPCODE_SEND_IMM, imm, 0, 0, 0, data,
				     len, flags, wr_id);
}

/* rf_sq_post_dc_faa - 8-byte fetch-and-add of add at raddr; the old value to laddr. */
RF_INLINE int rf_sq_post_dc_faa(struct rf_sq *sq, const struct rf_dc_dest *d,
				      uint32_t lkey, uint64_t laddr, uint32_t rkey,
				      uint64_t raddr, uint64_t add, uint32_t flags,
				      uint64_t wr_id)
{
	return rf__sq_post_dc_atomic(sq, d, RF_OPCODE_ATOMIC_FA, lkey, laddr, rkey, raddr,
				     add, 0, flags, wr_id);
}

/* rf_sq_post_dc_cas - 8-byte compare-and-swap at raddr; the old value to laddr. */
RF_INLINE int rf_sq_post_dc_cas(struct rf_sq *sq, const struct rf_dc_dest *d,
				     uint32_t lkey, uint64_t laddr, uint32_t rkey,
				     uint64_t raddr, uint64_t compare, uint64_t swap,
				     uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_dc_atomic(sq, d, RF_OPCODE_ATOMIC_CS, lkey, laddr, rkey, raddr,
				     swap, compare, flags, wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_DC_H */
