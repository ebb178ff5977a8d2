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
#include <rdmafast/detail/copy.h>
#include <rdmafast/detail/sq_post.h>
#include <rdmafast/detail/wqe_regs.h>

RF_BEGIN_DECLS

/*
 * struct rf_dc_dest - a DC target as a DCI's WQEs name it: the address
 * vector of the path to it with the DCT number and the DCT's access key
 * in place, in one of the two forms a DCI WQE may carry, and the control
 * segment bits the target's WQEs get (the DCI stream). Build it with
 * rf_dc_dest_init() or rf_dc_dest_init_compact(); the fields are
 * rdmafast's.
 *
 *	48 bytes  dqp_dct = dctn | MLX5_EXTENDED_UD_AV: the full AV (GRH,
 *	          RoCE MAC and GID), what libmlx5 writes
 *	16 bytes  dqp_dct = dctn: bytes 0..15 only (key, DCT, SL and rate,
 *	          DLID), for an InfiniBand path without GRH: 32 bytes less per
 *	          WQE, so a one-SGE WRITE or READ is one BB (UCX's
 *	          uct_ib_mlx5_base_av in src/uct/ib/mlx5/ib_mlx5.h)
 *
 * The device tells the forms apart by the extended bit; the WQE's DS
 * counts the AV's 1 or 3 DS. A post tests the form once and then runs
 * the straight-line code of that form, where the WQE's size and layout
 * are constants.
 */
struct rf_dc_dest {
	struct rf_wqe_av av;	/* compact: bytes 16..47 zero, never sent */
	uint64_t ctrl_hi;	/* ctrl bytes 8..15 ORed into every WQE: the stream id */
	uint32_t av_ds;		/* 3 or 1 */
};

/* The 8-byte word of ctrl bytes 8..15 with dci_stream_channel_id (bytes 9..10) = id. */
RF_INLINE uint64_t rf__sq_dci_stream_bits(uint16_t id)
{
#if RF_LITTLE_ENDIAN
	return (uint64_t)(RF_FORCE uint16_t)rf_htobe16(id) << 8;
#else
	return (uint64_t)id << 40;
#endif
}

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

/*
 * The frame of every DCI post: room for ctrl, an address vector of av_ds
 * DS (3 or 1, a constant) and body_ds more DS; the stream id joined to
 * the flags and, for the compact AV, 2 DS less than sq->ctrl_lo counts.
 * Returns 0, -EINVAL (not a DCI) or -ENOSPC.
 */
RF_INLINE int rf__sq_dc_claim(struct rf_sq *sq, struct rf__sq_wqe *w,
			      const struct rf_dc_dest *d, uint32_t av_ds,
			      uint32_t body_ds, uint32_t flags)
{
	uint32_t nbb = (1 + av_ds + body_ds + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB;
	int rc;

	if (RF_UNLIKELY(sq->kind != RF_QP_DCI))
		return -EINVAL;
	rc = rf__sq_open(sq, w, nbb, flags, 0);
	if (RF_UNLIKELY(rc))
		return rc;
	w->fm_bits |= d->ctrl_hi;
	w->ctrl_lo -= rf__sq_ctrl_lo(0, 0, 0, 0, 3 - av_ds);
	return 0;
}

/* rf__sq_dc_claim(), the AV written: returns the body, or NULL with *rc set. */
RF_INLINE uint8_t *rf__sq_dc_open(struct rf_sq *sq, struct rf__sq_wqe *w,
				  const struct rf_dc_dest *d, uint32_t av_ds,
				  uint32_t body_ds, uint32_t flags, int *rc)
{
	*rc = rf__sq_dc_claim(sq, w, d, av_ds, body_ds, flags);
	if (RF_UNLIKELY(*rc))
		return NULL;
	if (av_ds == 3) {
		*(struct rf_wqe_av *)(w->c + 1) = d->av;
	} else {
		struct rf__wqe_words *x = (struct rf__wqe_words *)(w->c + 1);
		uint64_t key, rest;

		__builtin_memcpy(&key, &d->av, 8);
		__builtin_memcpy(&rest, (const uint8_t *)&d->av + 8, 8);
		x->w0 = key;	/* typed stores: a memcpy may alias sq */
		x->w1 = rest;
	}
	return (uint8_t *)(w->c + 1) + RF_WQE_DS_SIZE * av_ds;
}

/*
 * One buffer (lkey, laddr, len): SEND-like without raddr, RDMA with it.
 * A zero length carries no data segment, as libmlx5's ibv_wr_set_sge().
 * The WQE is built in 16-byte registers (struct rf__wqe_v16): ctrl, the AV
 * loaded from d (av_ds words, a constant), raddr, data; stored to the
 * queue once and rung from the registers. The data words are stored even
 * for a zero length, beyond the DS, where the WQE's last BB has room for
 * them: always, but for a SEND of nothing with the 48-byte AV (ctrl and AV
 * fill its one BB). The raddr and data words come built (rdma_seg,
 * data_seg) from rf__sq_post_dc1().
 */
RF_INLINE int rf__sq_dc1_form(struct rf_sq *sq, const struct rf_dc_dest *d,
			      uint32_t av_ds, uint8_t opcode, __be32 imm, int rdma,
			      rf__v16r rdma_seg, rf__v16r data_seg, uint32_t len,
			      uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	struct rf__wqe_v16 v;
	const uint8_t *av = (const uint8_t *)&d->av;
	uint32_t ds = (uint32_t)(rdma != 0) + RF__DS_DATA(len);
	unsigned n = 2 + av_ds + (rdma != 0);
	int rc = rf__sq_dc_claim(sq, &w, d, av_ds, ds, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	v.v[1] = rf__v16_load(av);
	if (av_ds == 3) {
		v.v[2] = rf__v16_load(av + 16);
		v.v[3] = rf__v16_load(av + 32);
	}
	if (rdma)
		v.v[1 + av_ds] = rdma_seg;
	v.v[n - 1] = data_seg;
	if (av_ds == 3 && !rdma && !len)
		rf__sq_end_v16(sq, &w, &v, 4, opcode, 0, imm, wr_id);
	else
		rf__sq_end_v16(sq, &w, &v, n, opcode, ds, imm, wr_id);
	return 0;
}

/*
 * The segments are built before the test of the AV form: a loop of posts
 * then builds them once, outside the loop, for both forms (the form is
 * read from d in every post, which the WQE stores may alias).
 */
RF_INLINE int rf__sq_post_dc1(struct rf_sq *sq, const struct rf_dc_dest *d,
			      uint8_t opcode, __be32 imm, int rdma, uint32_t lkey,
			      uint64_t laddr, uint32_t len, uint32_t rkey,
			      uint64_t raddr, uint32_t flags, uint64_t wr_id)
{
	rf__v16r r = rf__v16_words(rf__wqe_word_be64(raddr), rf__wqe_word(rf_htobe32(rkey), 0));
	rf__v16r data = rf__v16_words(rf__wqe_word(rf_htobe32(len), rf_htobe32(lkey)),
				      rf__wqe_word_be64(laddr));

	if (d->av_ds == 1)
		return rf__sq_dc1_form(sq, d, 1, opcode, imm, rdma, r, data, len, flags,
				       wr_id);
	return rf__sq_dc1_form(sq, d, 3, opcode, imm, rdma, r, data, len, flags, wr_id);
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

/*
 * Inline payload of len bytes (at most max_inline) after the address
 * vector and, for a WRITE, the remote address: the buffer may be reused
 * on return. A zero length carries no inline segment, as libmlx5.
 */
RF_INLINE int rf__sq_dc_inline_form(struct rf_sq *sq, const struct rf_dc_dest *d,
				    uint32_t av_ds, uint8_t opcode, __be32 imm, int rdma,
				    uint32_t rkey, uint64_t raddr, const void *data,
				    uint32_t len, uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	uint32_t ds;
	uint8_t *p;
	int rc;

	if (RF_UNLIKELY(len > sq->max_inline))
		return -EINVAL;
	ds = (uint32_t)(rdma != 0) + (len ? RF_INLINE_DS(len) : 0);
	if (RF_UNLIKELY(1 + av_ds + ds > RF_WQE_MAX_DS))
		return -EINVAL;
	p = rf__sq_dc_open(sq, &w, d, av_ds, ds, flags, &rc);
	if (RF_UNLIKELY(!p))
		return rc;
	if (rdma) {
		rf_set_raddr_seg((struct rf_wqe_raddr_seg *)p, raddr, rkey);
		p += RF_WQE_DS_SIZE;
	}
	if (len) {
		/* a queue end inside the payload: rf__sq_open() padded, it cannot wrap */
		rf_set_inline_hdr((struct rf_wqe_inline_seg *)p, len);
		rf__copy_inline(p + 4, (const uint8_t *)data, len);
	}
	rf__sq_end(sq, &w, opcode, 0, ds, imm, wr_id);
	return 0;
}

RF_INLINE int rf__sq_post_dc_inline(struct rf_sq *sq, const struct rf_dc_dest *d,
				    uint8_t opcode, __be32 imm, int rdma,
				    uint32_t rkey, uint64_t raddr, const void *data,
				    uint32_t len, uint32_t flags, uint64_t wr_id)
{
	if (d->av_ds == 1)
		return rf__sq_dc_inline_form(sq, d, 1, opcode, imm, rdma, rkey, raddr,
					     data, len, flags, wr_id);
	return rf__sq_dc_inline_form(sq, d, 3, opcode, imm, rdma, rkey, raddr, data,
				     len, flags, wr_id);
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

/*
 * The IB atomics at d: raddr, operands, and the data segment that
 * receives the 8 bytes of the original value (laddr, lkey).
 */
RF_INLINE int rf__sq_dc_atomic_form(struct rf_sq *sq, const struct rf_dc_dest *d,
				    uint32_t av_ds, uint8_t opcode, uint32_t lkey,
				    uint64_t laddr, uint32_t rkey, uint64_t raddr,
				    uint64_t swap_add, uint64_t compare, uint32_t flags,
				    uint64_t wr_id)
{
	struct rf__sq_wqe w;
	int rc;
	uint8_t *p;

	RF__CHK(rf__chk_atomic(sq, raddr, 8));
	p = rf__sq_dc_open(sq, &w, d, av_ds, 3, flags, &rc);
	if (RF_UNLIKELY(!p))
		return rc;
	rf_set_raddr_seg((struct rf_wqe_raddr_seg *)p, raddr, rkey);
	rf_set_atomic_seg((struct rf_wqe_atomic_seg *)(p + RF_WQE_DS_SIZE), swap_add, compare);
	rf_set_data_seg((struct rf_wqe_data_seg *)(p + 2 * RF_WQE_DS_SIZE), 8, lkey, laddr);
	rf__sq_end(sq, &w, opcode, 0, 3, 0, wr_id);
	return 0;
}

RF_INLINE int rf__sq_post_dc_atomic(struct rf_sq *sq, const struct rf_dc_dest *d,
				    uint8_t opcode, uint32_t lkey, uint64_t laddr,
				    uint32_t rkey, uint64_t raddr, uint64_t swap_add,
				    uint64_t compare, uint32_t flags, uint64_t wr_id)
{
	if (d->av_ds == 1)
		return rf__sq_dc_atomic_form(sq, d, 1, opcode, lkey, laddr, rkey, raddr,
					     swap_add, compare, flags, wr_id);
	return rf__sq_dc_atomic_form(sq, d, 3, opcode, lkey, laddr, rkey, raddr,
				     swap_add, compare, flags, wr_id);
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
