/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_dc.h - the frames of the DCI posts of sq_dc.h: the
 * claim of a WQE with the target's address vector, and the three forms
 * every DCI post is (one buffer, inline data, an atomic).
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_DC_H
#define RDMAFAST_DETAIL_SQ_DC_H

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

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_DC_H */
