/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_post.h - the frame every one-call post shares: open a
 * WQE (room, padding, the transport segment), close it (control segment,
 * side table, the ring that RF_SEND_RING asks for).
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_POST_H
#define RDMAFAST_DETAIL_SQ_POST_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>
#include <rdmafast/detail/wqe_regs.h>
#ifdef RF_CHECKED
#include <rdmafast/detail/checked.h>
#endif

RF_BEGIN_DECLS

/*
 * A WQE being built by a one-call post, kept in registers. The one-call
 * posts read everything they need from *sq first (rf__sq_load(),
 * rf__sq_claim()), then
 * write the segments, then the control segment, the side table and the
 * queue state last (rf__sq_end()). In that order no rf_sq field has to be
 * loaded again after a WQE store, and rf_sq_ring() right after a post
 * gets pi from the store the compiler just made.
 */
struct rf__sq_wqe {
	uint8_t *buf;		/* sq->buf */
	struct rf_wqe_ctrl_seg *c;
	uint8_t *body;		/* after ctrl and transport segment */
	struct rf_sq_slot *slot;	/* sq->slot, then the WQE's entry in it */
	uint32_t pi;
	uint32_t nbb;
	uint64_t ctrl_lo;	/* sq->ctrl_lo: qpn_ds with ctrl and transport DS */
	uint64_t fm_bits;	/* sq->ctrl_hi | rf__sq_fm_bits(flags) */
	int      ring;		/* RF_SEND_RING (a constant at most call sites) */
};

/*
 * The field a post of this opcode (a constant) tests to take the RC path
 * (0) or the one with a transport segment: tseg_ds_or_uc for what UC does
 * not have (READ, the atomics, SEND with invalidate: IBA 9.7.3, no UC opcode
 * for them), tseg_ds for the rest.
 */
RF_INLINE uint8_t rf__sq_tseg_for(const struct rf_sq *sq, uint8_t opcode)
{
	return rf_opcode_fetches(opcode) || opcode == RF_OPCODE_SEND_INVAL ?
	       sq->tseg_ds_or_uc : sq->tseg_ds;
}

/*
 * Where a post loads sq->ctrl_lo: with the fields of rf__sq_load() (gcc),
 * or in rf__sq_claim() (clang). Loaded early, gcc adds the post's opcode
 * and DS to it once, outside a loop of posts, and keeps the sum in a
 * register (fewer instructions per WQE of a burst than loaded late);
 * clang adds the queue's word as a memory operand when it is loaded late,
 * and loaded early runs out of registers and shuffles them, in a burst and
 * more still in a post with RF_SEND_RING (docs/benchmark-history.md,
 * "Figures behind the header comments").
 */
#if defined(__clang__)
#define RF__SQ_CTRL_LO_LATE 1
#else
#define RF__SQ_CTRL_LO_LATE 0
#endif

/*
 * The fields a post stores through, loaded into *w before any test: a
 * loop of posts (a burst before one ring) then loads them once, outside
 * the loop. Loaded after a test, they sit in a block the loop may skip,
 * and compilers do not hoist loads out of such blocks: each post reloaded
 * them. The fields the post only compares or adds with (limit, wqe_mask,
 * ctrl_lo, the queue kind) are read where they are used, as operands of
 * those instructions; kept in registers across a loop they would crowd
 * out the caller's own values.
 */
RF_INLINE void rf__sq_load(const struct rf_sq *sq, struct rf__sq_wqe *w, uint32_t flags)
{
	w->buf = sq->buf;
	w->slot = sq->slot;
#if !RF__SQ_CTRL_LO_LATE
	w->ctrl_lo = sq->ctrl_lo;
#endif
	w->fm_bits = sq->ctrl_hi | rf__sq_fm_bits(flags & RF__SEND_FM);
	w->ring = (flags & RF_SEND_RING) != 0;
}

/* Point *w (after rf__sq_load()) at the WQE in slot idx and its entry. */
RF_INLINE void rf__sq_place(struct rf__sq_wqe *w, uint32_t idx)
{
	size_t off = rf__sq_slot_off(idx);

	w->c = rf__sq_wqe_at(w->buf, off);
	w->slot = rf__sq_slot_at(w->slot, off);
}

/*
 * Claim nbb BBs for a one-call post after rf__sq_load(): 0 with *w filled,
 * padding done and, with tseg, the transport segment written; -ENOSPC
 * when the queue has no room, -EINVAL for tseg on a queue other than XRC,
 * nothing written and nothing moved either way. tseg is 0 for a queue
 * without a transport segment (RC/UC; the caller tested rf__sq_tseg_for(),
 * so the body offset is a constant) or 1: XRC. What else arrives with
 * tseg is refused here, for every one-call post: UD, whose address vector
 * their body cannot follow (UD sends go through rf_sq_post_ud_send()),
 * and UC for READ and the atomics (tseg_ds_or_uc).
 */
RF_INLINE int rf__sq_claim(struct rf_sq *sq, struct rf__sq_wqe *w, uint32_t nbb, int tseg)
{
	uint32_t pi = sq->pi;

	RF__CHK(rf__chk_sq_post(sq));
	if (tseg && RF_UNLIKELY(sq->kind != RF_QP_XRC))
		return -EINVAL;
	if (RF_UNLIKELY(!rf__sq_room(sq, nbb))) {
		RF__CHK(rf__chk_sq_full(sq));
		return -ENOSPC;
	}
	if (RF_UNLIKELY(rf__sq_pad_need(sq, nbb))) {
		rf__sq_begin(sq, nbb);	/* pads: pi moved */
		pi = sq->pi;
	}
	rf__sq_place(w, pi & sq->wqe_mask);
	w->pi = pi;
	w->nbb = nbb;
#if RF__SQ_CTRL_LO_LATE
	w->ctrl_lo = sq->ctrl_lo;
#endif
	if (tseg) {
		/* as two typed stores: a struct copy is a memcpy, which may alias sq */
		struct rf__wqe_words *x = (struct rf__wqe_words *)(w->c + 1);

		x->w0 = rf__wqe_word(sq->xrc.xrc_srqn, 0);
		x->w1 = 0;
		w->body = (uint8_t *)w->c + sq->tseg_off;
	} else {
		w->body = (uint8_t *)(w->c + 1);
	}
	return 0;
}

/* rf__sq_load() and rf__sq_claim(): the start of every one-call post. */
RF_INLINE int rf__sq_open(struct rf_sq *sq, struct rf__sq_wqe *w, uint32_t nbb,
			  uint32_t flags, int tseg)
{
	rf__sq_load(sq, w, flags);
	return rf__sq_claim(sq, w, nbb, tseg);
}

/*
 * Write the control segment, record the WQE, advance pi; ds_body
 * excludes ctrl and transport. With bb, the WQE is one BB built in
 * registers: words 2..n-1 of bb hold its body, then with inl an inline
 * segment of inl payload bytes at word n; the control segment goes to
 * words 0 and 1 before it is all stored to the queue, and a BlueFlame ring
 * writes the register from bb too (rf__ring_bf_bb()). With vw instead, the
 * WQE is built as n 16-byte words, v[1..n-1] its body (struct rf__wqe_v16:
 * up to two BBs), then with inl an inline segment at word n whose payload
 * bb holds (one BB); the control segment goes to v[0], and a BlueFlame
 * ring writes them (rf__ring_bf_v16()). bb, vw, n and inl are constants at
 * every call site.
 */
RF_INLINE void rf__sq_close(struct rf_sq *sq, const struct rf__sq_wqe *w,
			    struct rf__wqe_bb *bb, struct rf__wqe_v16 *vw, unsigned n,
			    uint32_t inl, uint8_t opcode, uint8_t opmod, uint32_t ds_body,
			    __be32 imm, uint64_t wr_id)
{
	struct rf__wqe_words *v = (struct rf__wqe_words *)w->c;
	/* sq->ctrl_lo carries qpn_ds: add the rest (rf__sq_ctrl_lo()) */
	uint64_t lo = w->ctrl_lo + rf__sq_ctrl_lo(0, w->pi, opcode, opmod, ds_body);
	uint64_t hi = rf__sq_ctrl_hi(w->fm_bits, imm);

	/* a WQE in 16-byte words stored as 8-byte words: see rf__wqe_store_v16() */
	int words = !w->ring;

	if (vw) {
		vw->v[0] = rf__v16_words(lo, hi);
		/* with words, the control segment is stored below, as words */
		rf__wqe_store_v16(w->c, vw->v, (unsigned)words, n, words);
		if (inl)
			rf__wqe_bb_store_inline((uint8_t *)w->c, bb, 2 * n, inl);
	} else if (bb) {
		bb->q[0] = lo;
		bb->q[1] = hi;
		RF__WQE_STORE_BODY(v, bb->q, n);
		if (inl)
			rf__wqe_bb_store_inline((uint8_t *)w->c, bb, n, inl);
	}
	/*
	 * Outside the if: with a store of each word in both arms, clang
	 * merges the pair into one store without a type, which may alias
	 * the queue (a burst of posts then reloads it in every post).
	 */
	if (!vw || words) {
		v->w0 = lo;
		v->w1 = hi;
	}
	w->slot->wr_id = wr_id;
	w->slot->end = w->pi + w->nbb;
	sq->pi = w->pi + w->nbb;
	RF__CHK(rf__chk_sq_posted(sq, (w->fm_bits & rf__sq_fm_bits(RF_WQE_CTRL_CQ_UPDATE)) != 0));
	/*
	 * RF_SEND_RING (a constant): alone since the last ring and small
	 * enough, the WQE goes out by BlueFlame here, from what the post
	 * holds; anything else is rf_sq_ring()'s to decide.
	 */
	if (w->ring && RF_LIKELY(w->pi == sq->bf_rung_pi && (w->nbb == 1 || w->nbb <= sq->bf_bbs))) {
		if (vw)
			rf__ring_bf_v16(sq->dbrec, &sq->bf, w->pi + w->nbb, vw, n, bb, inl, w->c);
		else if (bb)
			rf__ring_bf_bb(sq->dbrec, &sq->bf, w->pi + 1, bb, n, inl);
		else
			rf_ring_bf(sq->dbrec, &sq->bf, w->pi + w->nbb, w->c, w->nbb);
		sq->bf_rung_pi = w->pi + w->nbb;	/* no_bf_bias is 0 here */
		return;
	}
	/* earlier WQEs wait too, no BlueFlame, or too big: this WQE's doorbell */
	if (w->ring) {
		rf_ring_db(sq->dbrec, &sq->bf, w->pi + w->nbb, w->c);
		sq->bf_rung_pi = w->pi + w->nbb + sq->no_bf_bias;
	}
}

/* rf__sq_close() for a WQE written to the queue segment by segment. */
RF_INLINE void rf__sq_end(struct rf_sq *sq, const struct rf__sq_wqe *w, uint8_t opcode,
			  uint8_t opmod, uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, NULL, NULL, 0, 0, opcode, opmod, ds_body, imm, wr_id);
}

/*
 * rf__sq_close() for a one-BB WQE built in bb: words 0..n-1, then with inl
 * an inline segment of inl payload bytes at word n.
 */
RF_INLINE void rf__sq_end_bb(struct rf_sq *sq, const struct rf__sq_wqe *w,
			     struct rf__wqe_bb *bb, unsigned n, uint32_t inl,
			     uint8_t opcode, uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, bb, NULL, n, inl, opcode, 0, ds_body, imm, wr_id);
}

/*
 * rf__sq_close() for a WQE of up to two BBs built as n 16-byte words in
 * vw (v[1..n-1] its body, n a constant).
 */
RF_INLINE void rf__sq_end_v16(struct rf_sq *sq, const struct rf__sq_wqe *w,
			      struct rf__wqe_v16 *vw, unsigned n, uint8_t opcode,
			      uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, NULL, vw, n, 0, opcode, 0, ds_body, imm, wr_id);
}

/*
 * rf__sq_end_v16() for a one-BB WQE whose 16-byte words v[1..n-1] end in
 * an inline segment of inl payload bytes (a constant) at v[n], its payload
 * loaded into bb (rf__wqe_bb_inline()).
 */
RF_INLINE void rf__sq_end_v16_inline(struct rf_sq *sq, const struct rf__sq_wqe *w,
				     struct rf__wqe_v16 *vw, unsigned n,
				     struct rf__wqe_bb *bb, uint32_t inl, uint8_t opcode,
				     uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, bb, vw, n, inl, opcode, 0, ds_body, imm, wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_POST_H */
