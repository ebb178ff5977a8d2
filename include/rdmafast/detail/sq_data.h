/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_data.h - the builders behind the data posts of
 * sq_data.h: one SGE in one basic block, inline payload, SGE lists; the
 * inline gather of rf_sq_post_wr() (sq_batch.h).
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_DATA_H
#define RDMAFAST_DETAIL_SQ_DATA_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_wr.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/copy.h>
#include <rdmafast/detail/wqe_regs.h>
#include <rdmafast/detail/sq_post.h>

RF_BEGIN_DECLS

/*
 * The one-BB posts with one SGE, ctrl [xrc] body, where bb holds the body
 * in words 2..n-1 (RDMA: raddr and data segments; SEND: the data segment):
 * at most 4 DS with the XRC segment, so always one BB. tseg is a constant
 * (rf__sq_post_bb1() tests the queue once). RC/UC stores bb as it is and
 * may ring from it; XRC stores its words after the XRC segment.
 */
RF_INLINE int rf__sq_post_bb1_const_tseg(struct rf_sq *sq, struct rf__sq_wqe *w, int tseg,
				uint8_t opcode, __be32 imm, struct rf__wqe_bb *bb,
				unsigned n, uint32_t ds_body, uint64_t wr_id)
{
	int rc = rf__sq_claim(sq, w, 1, tseg);

	if (RF_UNLIKELY(rc))
		return rc;
	if (!tseg) {
		rf__sq_end_bb(sq, w, bb, n, 0, opcode, ds_body, imm, wr_id);
	} else {
		RF__WQE_STORE((struct rf__wqe_words *)w->body, bb->q + 2, n - 2);
		rf__sq_end(sq, w, opcode, 0, ds_body, imm, wr_id);
	}
	return 0;
}

/*
 * bb is built and the queue loaded (rf__sq_load()) by the caller before
 * the branch on the queue kind, so that a loop of posts does both once,
 * outside the loop, for both copies.
 */
RF_INLINE int rf__sq_post_bb1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
			      struct rf__wqe_bb *bb, unsigned n, uint32_t ds_body,
			      uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;

	rf__sq_load(sq, &w, flags);
	if (RF_LIKELY(!rf__sq_tseg_for(sq, opcode)))
		return rf__sq_post_bb1_const_tseg(sq, &w, 0, opcode, imm, bb, n, ds_body, wr_id);
	return rf__sq_post_bb1_const_tseg(sq, &w, 1, opcode, imm, bb, n, ds_body, wr_id);
}

/*
 * The one-SGE posts when they ring (RF_SEND_RING): on RC/UC the WQE is
 * built in 16-byte registers (struct rf__wqe_v16), v[1..n-1] its body, and
 * stored to the queue and to BlueFlame in one move a DS, half the stores
 * of 8-byte words (struct rf__wqe_v16 explains; bench/store_probe.c, the
 * one-BB cases). bb holds the same body in words for XRC. A post that does
 * not ring keeps the words of rf__sq_post_bb1(): it stores its WQE once,
 * and in a burst of posts clang would reload the queue's fields after
 * every vector store (rf__wqe_store_v16()).
 */
RF_INLINE int rf__sq_post_bb1_v16(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				struct rf__wqe_bb *bb, struct rf__wqe_v16 *v, unsigned n,
				uint32_t ds_body, uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	int rc;

	rf__sq_load(sq, &w, flags);
	if (RF_UNLIKELY(rf__sq_tseg_for(sq, opcode)))
		return rf__sq_post_bb1_const_tseg(sq, &w, 1, opcode, imm, bb, 2 * n, ds_body, wr_id);
	rc = rf__sq_claim(sq, &w, 1, 0);
	if (RF_UNLIKELY(rc))
		return rc;
	rf__sq_end_v16(sq, &w, v, n, opcode, ds_body, imm, wr_id);
	return 0;
}

/* ctrl [xrc] raddr data: WRITE, WRITE_IMM, READ. */
RF_INLINE int rf__sq_post_rdma1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				uint32_t lkey, uint64_t laddr, uint32_t len,
				uint32_t rkey, uint64_t raddr, uint32_t flags,
				uint64_t wr_id)
{
	struct rf__wqe_bb bb;

	rf__wqe_bb_raddr(&bb, 2, raddr, rkey);
	rf__wqe_bb_data(&bb, 4, len, lkey, laddr);
	if (flags & RF_SEND_RING) {
		struct rf__wqe_v16 v;

		v.v[1] = rf__v16_words(bb.q[2], bb.q[3]);
		v.v[2] = rf__v16_words(bb.q[4], bb.q[5]);
		return rf__sq_post_bb1_v16(sq, opcode, imm, &bb, &v, 3, 1 + RF__DS_DATA(len),
					 flags, wr_id);
	}
	return rf__sq_post_bb1(sq, opcode, imm, &bb, 6, 1 + RF__DS_DATA(len), flags, wr_id);
}

/* ctrl [xrc] data: the SEND family on RC/UC/XRC. */
RF_INLINE int rf__sq_post_send1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				uint32_t lkey, uint64_t laddr, uint32_t len,
				uint32_t flags, uint64_t wr_id)
{
	struct rf__wqe_bb bb;

	rf__wqe_bb_data(&bb, 2, len, lkey, laddr);
	if (flags & RF_SEND_RING) {
		struct rf__wqe_v16 v;

		v.v[1] = rf__v16_words(bb.q[2], bb.q[3]);
		return rf__sq_post_bb1_v16(sq, opcode, imm, &bb, &v, 2, RF__DS_DATA(len), flags,
					 wr_id);
	}
	return rf__sq_post_bb1(sq, opcode, imm, &bb, 4, RF__DS_DATA(len), flags, wr_id);
}

/*
 * Inline posts with a constant tseg (see rf__sq_post_bb1_const_tseg()). The
 * remote address and key come swapped: swapped once in the caller before
 * the branch on tseg, a loop of posts swaps them once, outside the loop
 * (swapped in each branch, gcc swaps them again in every post).
 */
RF_INLINE int rf__sq_post_inline_t(struct rf_sq *sq, int tseg, uint8_t opcode,
				   __be32 imm, int has_raddr, __be32 rkey,
				   __be64 raddr, const void *data, uint32_t len,
				   uint32_t flags, uint64_t wr_id)
{
	/* on RC/UC (tseg 0) the sizes below fold for a constant len */
	uint32_t tds = tseg ? sq->tseg_ds : 0;
	uint32_t body, nbb;
	struct rf__sq_wqe w;
	uint8_t *p;
	int rc;

	/* libmlx5 and UCX leave an empty inline segment out of the WQE */
	body = (has_raddr ? 1 : 0) + (len ? RF_INLINE_DS(len) : 0);
	if (RF_UNLIKELY(1 + tds + body > RF_WQE_MAX_DS))
		return -EINVAL;
	nbb = (1 + tds + body + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB;
	rc = rf__sq_open(sq, &w, nbb, flags, tseg);
	if (RF_UNLIKELY(rc))
		return rc;
	/* RC/UC, a constant length, one BB: built in registers */
	if (RF__INLINE_FROM_REGS && !tseg && __builtin_constant_p(len) && len &&
	    16 * (1 + has_raddr) + 4 + len <= RF_SEND_WQE_BB) {
		struct rf__wqe_bb bb;
		unsigned i = 2;

		if (has_raddr) {
			bb.q[2] = (RF_FORCE uint64_t)raddr;
			bb.q[3] = rf__wqe_word(rkey, 0);
			i = 4;
		}
		rf__wqe_bb_inline(&bb, data, len);
		if (w.ring) {
			/* ctrl and raddr in 16-byte moves (rf__sq_post_bb1_v16()) */
			struct rf__wqe_v16 v;

			if (has_raddr)
				v.v[1] = rf__v16_words((RF_FORCE uint64_t)raddr,
						       rf__wqe_word(rkey, 0));
			rf__sq_end_v16_inline(sq, &w, &v, i / 2, &bb, len, opcode, body,
					      imm, wr_id);
			return 0;
		}
		rf__sq_end_bb(sq, &w, &bb, i, len, opcode, body, imm, wr_id);
		return 0;
	}
	p = (uint8_t *)w.body;
	if (has_raddr) {
		struct rf_wqe_raddr_seg *r = (struct rf_wqe_raddr_seg *)p;

		r->raddr = raddr;
		r->rkey = rkey;
		r->reserved = 0;
		p += sizeof(*r);
	}
	if (len) {
		rf_set_inline_hdr((struct rf_wqe_inline_seg *)p, len);
		rf__copy_inline(p + sizeof(struct rf_wqe_inline_seg),
				(const uint8_t *)data, len);
	}
	rf__sq_end(sq, &w, opcode, 0, body, imm, wr_id);
	return 0;
}

/*
 * Inline posts: ctrl [xrc] [raddr] inline(4 + len). has_raddr is a
 * constant at every call site.
 */
RF_INLINE int rf__sq_post_inline(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				 int has_raddr, uint32_t rkey, uint64_t raddr,
				 const void *data, uint32_t len, uint32_t flags,
				 uint64_t wr_id)
{
	__be32 rkey_be = rf_htobe32(rkey);
	__be64 raddr_be = rf_htobe64(raddr);

	if (RF_LIKELY(len < sq->rc_inline_len_below))
		return rf__sq_post_inline_t(sq, 0, opcode, imm, has_raddr, rkey_be,
					    raddr_be, data, len, flags, wr_id);
	/* RC/UC over max_inline, or any queue over it */
	if (RF_UNLIKELY(!sq->tseg_ds || len > sq->max_inline))
		return -EINVAL;
	return rf__sq_post_inline_t(sq, 1, opcode, imm, has_raddr, rkey_be,
				    raddr_be, data, len, flags, wr_id);
}

/*
 * Scatter/gather posts: ctrl [xrc] [raddr] data x n, without the
 * zero-length entries (a data segment of length 0 means 2 GiB).
 */
RF_INLINE int rf__sq_post_sg(struct rf_sq *sq, uint8_t opcode, __be32 imm,
			     int has_raddr, uint32_t rkey, uint64_t raddr,
			     const struct rf_sge *sg, uint32_t n, uint32_t flags,
			     uint64_t wr_id)
{
	uint32_t i, body, nbb;
	struct rf__sq_wqe w;
	struct rf_wqe_data_seg *d;
	uint8_t *p;
	int rc;

	if (RF_UNLIKELY(n > sq->max_sge))
		return -EINVAL;
	body = has_raddr ? 1 : 0;
	for (i = 0; i < n; i++)
		body += sg[i].length != 0;
	if (RF_UNLIKELY(1 + sq->tseg_ds + body > RF_WQE_MAX_DS))
		return -EINVAL;
	nbb = (1 + sq->tseg_ds + body + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB;
	rc = rf__sq_open(sq, &w, nbb, flags, rf__sq_tseg_for(sq, opcode) != 0);
	if (RF_UNLIKELY(rc))
		return rc;
	p = (uint8_t *)w.body;
	if (has_raddr) {
		rf_set_raddr_seg((struct rf_wqe_raddr_seg *)p, raddr, rkey);
		p += sizeof(struct rf_wqe_raddr_seg);
	}
	d = (struct rf_wqe_data_seg *)p;
	for (i = 0; i < n; i++)
		if (sg[i].length)
			rf_set_data_seg(d++, sg[i].length, sg[i].lkey, sg[i].addr);
	rf__sq_end(sq, &w, opcode, 0, body, imm, wr_id);
	return 0;
}

/*
 * Gather the SGE list into a stack buffer for an inline post
 * (rf_sq_post_wr(), sq_batch.h).
 */
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

#endif /* RDMAFAST_DETAIL_SQ_DATA_H */
