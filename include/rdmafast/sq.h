/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq.h - the send queue: its state and setup, and the doorbell.
 *
 *	c = rf_sq_reserve(sq, nbb);          claim basic blocks (NULL: full)
 *	rf_set_*_seg(...);                    fill the segments after c
 *	rf_sq_commit(sq, c, op, opmod, ds, flags, imm, wr_id);
 *	...more WQEs...
 *	rf_sq_ring(sq);                       one doorbell for the batch
 *
 * or, for the common operations, one call per WQE that does all three
 * steps but the ring: rf_sq_post_write(), _read(), _send(), ... and then
 * rf_sq_ring() once. A single WQE to send at once passes RF_SEND_RING in
 * its flags instead and needs no rf_sq_ring(). The device sees nothing
 * until the ring: it reads WQEs only up to the doorbell record, which the
 * ring writes last, so a WQE being built in place is never visible
 * half-done. The posts build on this header:
 *
 *	sq_slots.h   a WQE by hand: reserve, transport segment, commit; retire
 *	sq_data.h    WRITE, READ, SEND: one buffer, inline payload, SGE lists
 *	sq_atomic.h  compare-and-swap, fetch-and-add, the masked atomics
 *	sq_mw.h      memory windows: bind (type 1 and 2), local invalidate
 *	sq_umr.h     memory keys laid out by UMR: KLM lists, interleaved, signatures
 *	sq_ud.h      UD sends
 *	sq_wr.h      a work request in the ibv_send_wr shape, whatever its opcode
 *	sq_batch.h   work requests posted one at a time or as a list
 *
 * Space is counted in 64-byte basic blocks (BB), not in work requests: a
 * WQE takes 1 to 16 BBs. Each committed WQE records, in the side table
 * entry of the slot of its first BB (struct rf_sq_slot), its wr_id and the
 * producer index just after it. A CQE names the first BB of the last WQE it completes
 * (wqe_counter); since RC/UC/XRC complete in order, that one entry retires
 * every earlier WQE too, signaled or not (rf_sq_retire()). So unsignaled
 * WQEs cost no CQE and no bookkeeping beyond the two stores to its entry.
 *
 * A WQE never straddles the end of the queue: when the next WQE would run
 * past it, rf_sq_reserve() first fills the rest of the queue with 1-BB NOP
 * WQEs (unsignaled), as the Linux mlx5e driver does. That keeps every
 * segment setter and the BlueFlame copy free of wrap tests.
 *
 * Threading: a queue has one producer. Nothing here takes a lock or uses
 * an atomic; two threads posting to one rf_sq must serialize themselves.
 * Retirement (rf_sq_retire(), called by rf_cq_poll()) writes sq->limit,
 * which the producer reads: poll the CQ from the thread that posts, or
 * serialize (rdmafast(7), THREADING). How deep a queue must be for a
 * signaling interval: rdmafast(7), QUEUE SIZING.
 *
 * Errors: posts return 0, -ENOSPC when the queue has no room (nothing was
 * written and no state moved), or -EINVAL for inline data over max_inline,
 * more SGEs than max_sge, a WQE over RF_SEND_WQE_MAX_BB basic blocks, a
 * send, RDMA or atomic post other than rf_sq_post_ud_send() on a UD queue
 * (its body would land where the address vector goes), or a READ or
 * atomic on a UC queue (UC has neither: the device would fail the WQE and
 * move the QP to the error state).
 */
#ifndef RDMAFAST_SQ_H
#define RDMAFAST_SQ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/checked.h>
#include <rdmafast/types.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/detail/sq.h>

RF_BEGIN_DECLS

/* The transport a send queue belongs to: decides the segment after ctrl. */
enum rf_qp_kind {
	RF_QP_RC  = 0,
	RF_QP_UC  = 1,
	RF_QP_XRC = 2,	/* XRC_SEND: a 16-byte XRC segment after ctrl */
	RF_QP_UD  = 3,	/* a 48-byte address vector after ctrl */
	RF_QP_DCI = 4,	/* DC initiator: each WQE's own address vector (sq_dc.h) */
};

/*
 * struct rf_sq - one send queue. Fields are filled by rf_sq_init() (host
 * memory, tests) or rf_qp_init_ibv() (rdmafast/verbs.h) and are
 * read-only afterwards except where noted.
 */
struct rf_sq {
#ifdef RF_CHECKED
	struct rf__chk_sq chk;	/* first: cq.h reaches it by the pointer (checked.h) */
#endif
	/* hot: every post (read before the WQE stores, see rf__sq_post_rdma1) */
	uint8_t  *buf;		/* BB 0 */
	/*
	 * The side table, one entry per BB slot (types.h). Its entries are
	 * stored as members of a struct that no rf_sq field is, so that the
	 * compilers' alias analysis knows a store to one leaves the queue's
	 * integer fields alone: after a store through a plain uint64_t or
	 * uint32_t pointer a burst of posts reloads them, once per WQE.
	 */
	struct rf_sq_slot *slot;	/* [wqe_cnt] */
	uint32_t  pi;		/* producer index in BBs, free running (written) */
	/*
	 * ci + bb_max, where ci is the producer index after the last WQE
	 * retired (rf_sq_ci()). Kept by rf_sq_retire() instead of ci, so that
	 * the room check of a post is one subtraction from pi instead of
	 * loading pi, ci and bb_max: a WQE of nbb BBs fits when
	 * limit - pi >= nbb (written).
	 */
	uint32_t  limit;
	uint32_t  wqe_mask;	/* wqe_cnt - 1 */
	/*
	 * ctrl bytes 0..7 (opmod_idx_opcode 0, then qpn_ds with DS = 1 +
	 * tseg_ds: ctrl and transport) as the 8-byte word stored: a post
	 * adds its opcode, body DS and WQE index (rf__sq_ctrl_lo()) and
	 * stores the first half of the control segment at once.
	 */
	uint64_t  ctrl_lo;
	/*
	 * ctrl bytes 8..15 (signature 0, DCI id 0, fm_ce_se, imm 0) as the
	 * 8-byte word the post stores, with the queue's fm_ce_se default in
	 * place: a post ORs in its flags (a constant) instead of loading,
	 * merging and shifting the byte (rf__sq_fm_bits()).
	 */
	uint64_t  ctrl_hi;
	uint8_t   fm_ce_se;	/* ORed into every WQE: CQ_UPDATE if sq_sig_all */
	uint8_t   tseg_ds;	/* DS of the transport segment: 0 RC/UC, 1 XRC, 3 UD/DCI */
	uint8_t   kind;		/* enum rf_qp_kind */
	/*
	 * tseg_ds, or 1 on UC: what READ, the atomics and SEND with
	 * invalidate test instead, so that on UC, which has none of them,
	 * they leave the RC path for rf__sq_open(), which refuses them, at
	 * no cost to the RC path.
	 */
	uint8_t   tseg_ds_or_uc;
	uint32_t  tseg_off;	/* 16 + 16 * tseg_ds: where the body starts */
	/* ring */
	/*
	 * pi at the last ring plus no_bf_bias (written). A WQE that starts
	 * at bf_rung_pi is the only one since the last ring and, on a queue
	 * with BlueFlame (no_bf_bias 0), may go by BlueFlame: one compare
	 * for both in an RF_SEND_RING post. Without BlueFlame no_bf_bias is
	 * RF__SQ_NO_BF_BIAS, which pi - rung (at most the queue size) never
	 * reaches: no pi matches.
	 */
	uint32_t  bf_rung_pi;
	uint32_t  no_bf_bias;
	/*
	 * BlueFlame: the register (bf.cur is the half to write next), and
	 * bf_bbs, the basic blocks one half holds (bf.size / 64; 0 without
	 * BlueFlame, when a WQE never "fits" and the doorbell goes to bf.cur,
	 * which then never moves), precomputed so the ring decides with one
	 * compare.
	 */
	struct rf_bf bf;	/* bf.cur written at each ring */
	uint32_t  bf_bbs;	/* bf.size / RF_SEND_WQE_BB */
	__be32   *dbrec;	/* &qp_dbrec[RF_SND_DBR] */
	/* limits and rarely used constants */
	uint32_t  bb_max;	/* at most this many BBs outstanding (pi - ci) */
	__be32    qpn_be;	/* rf_ctrl_qpn(qpn) */
	uint32_t  wqe_cnt;	/* BBs in the queue, a power of two */
	uint8_t  *qend;		/* buf + 64 * wqe_cnt */
	uint32_t  qpn;
	uint32_t  max_inline;	/* payload bytes of one inline segment */
	/*
	 * max_inline + 1 on RC/UC, 0 on queues with a transport segment: an
	 * inline post tests "RC/UC and the payload fits" with one compare,
	 * len < rc_inline_len_below.
	 */
	uint32_t  rc_inline_len_below;
	uint32_t  max_sge;	/* data segments in one WQE */
	struct rf_wqe_xrc_seg xrc;	/* XRC: the segment after ctrl (rf_sq_set_xrc_srqn) */
};

/* Everything rf_sq_init() needs; verbs.h fills it from mlx5dv_qp. */
struct rf_sq_attr {
	void     *buf;		/* mlx5dv_qp.sq.buf, 64-byte aligned */
	uint32_t  wqe_cnt;	/* mlx5dv_qp.sq.wqe_cnt, power of two */
	__be32   *dbrec;	/* mlx5dv_qp.dbrec (the record, not the SQ word) */
	void     *bf_reg;	/* mlx5dv_qp.bf.reg */
	uint32_t  bf_size;	/* mlx5dv_qp.bf.size, 0 = doorbell only */
	uint32_t  qpn;
	uint32_t  max_inline;	/* ibv_qp_cap.max_inline_data of the created QP */
	uint32_t  max_sge;	/* ibv_qp_cap.max_send_sge */
	uint32_t  kind;		/* enum rf_qp_kind */
	uint32_t  sig_all;	/* nonzero: every WQE signaled (sq_sig_all) */
	/* wqe_cnt entries, caller-allocated, 16-byte aligned; rf_sq_init() clears them */
	struct rf_sq_slot *slot;
};

/*
 * rf_sq_init - set up sq over a send queue nobody has posted to yet.
 * Returns 0, or -EINVAL when wqe_cnt is not a power of two, the buffer is
 * missing, or the side table is missing or not 16-byte aligned. Cold: once
 * per queue.
 */
static inline RF_COLD int rf_sq_init(struct rf_sq *sq, const struct rf_sq_attr *a)
{
	if (!a->buf || !a->dbrec || !a->slot || ((uintptr_t)a->slot & 15) ||
	    a->wqe_cnt < 2 || (a->wqe_cnt & (a->wqe_cnt - 1)) ||
	    a->wqe_cnt > 0x8000 || a->kind > RF_QP_DCI)
		return -EINVAL;
	__builtin_memset(sq, 0, sizeof(*sq));
	if (rf_bf_init(&sq->bf, a->bf_reg, a->bf_size))
		return -EINVAL;
	sq->buf = (uint8_t *)a->buf;
	sq->wqe_mask = a->wqe_cnt - 1;
	/*
	 * Every slot may be in flight: the side table tells exactly where each
	 * WQE ends, so no slack is needed for the CQE naming a WQE's first BB.
	 * The 16-bit dbrec counter would alias at 65536 outstanding BBs, which
	 * the 0x8000 cap above rules out.
	 */
	sq->bb_max = a->wqe_cnt;
	sq->limit = sq->bb_max;
	sq->qpn_be = rf_ctrl_qpn(a->qpn);
	sq->fm_ce_se = a->sig_all ? RF_WQE_CTRL_CQ_UPDATE : 0;
	sq->ctrl_hi = rf__sq_fm_bits(sq->fm_ce_se);
	sq->kind = (uint8_t)a->kind;
	sq->tseg_ds = a->kind == RF_QP_XRC ? 1 : a->kind >= RF_QP_UD ? 3 : 0;
	sq->tseg_ds_or_uc = a->kind == RF_QP_UC ? 1 : sq->tseg_ds;
	sq->ctrl_lo = rf__sq_ctrl_lo(sq->qpn_be | rf_htobe32(1U + sq->tseg_ds), 0, 0, 0, 0);
	sq->tseg_off = RF_WQE_DS_SIZE * (1U + sq->tseg_ds);
	sq->slot = a->slot;
	/*
	 * rf_sq_last_pi() relies on no entry naming an end not yet reached:
	 * 0 never is once anything is posted (pi wraps to 0 only after
	 * every slot has been written).
	 */
	__builtin_memset(a->slot, 0, (size_t)a->wqe_cnt * sizeof(*a->slot));
	sq->dbrec = a->dbrec + RF_SND_DBR;
	sq->bf_bbs = a->bf_size / RF_SEND_WQE_BB;
	sq->no_bf_bias = a->bf_size ? 0 : RF__SQ_NO_BF_BIAS;
	sq->bf_rung_pi = sq->no_bf_bias;	/* rung at 0 */
	sq->qend = sq->buf + (size_t)a->wqe_cnt * RF_SEND_WQE_BB;
	sq->wqe_cnt = a->wqe_cnt;
	sq->qpn = a->qpn;
	/* no WQE holds more, and the inline sizes then cannot overflow */
	sq->max_inline = a->max_inline < RF_WQE_MAX_DS * RF_WQE_DS_SIZE ?
			 a->max_inline : RF_WQE_MAX_DS * RF_WQE_DS_SIZE;
	sq->rc_inline_len_below = sq->tseg_ds ? 0 : sq->max_inline + 1;
	sq->max_sge = a->max_sge;
	rf_set_xrc_seg(&sq->xrc, 0);
	return 0;
}

/* XRC: the remote XRC SRQ that the following WQEs target. */
static inline void rf_sq_set_xrc_srqn(struct rf_sq *sq, uint32_t srqn)
{
	rf_set_xrc_seg(&sq->xrc, srqn);
}

/* Basic blocks free right now. */
RF_INLINE uint32_t rf_sq_space(const struct rf_sq *sq)
{
	return sq->limit - sq->pi;
}

/* The consumer index: every BB before it is retired (free running). */
RF_INLINE uint32_t rf_sq_ci(const struct rf_sq *sq)
{
	return sq->limit - sq->bb_max;
}

/* The WQE (control segment) in slot pi & mask. */
RF_INLINE struct rf_wqe_ctrl_seg *rf_sq_wqe(const struct rf_sq *sq, uint32_t pi)
{
	return (struct rf_wqe_ctrl_seg *)(sq->buf +
		((size_t)(pi & sq->wqe_mask) << RF_SEND_WQE_SHIFT));
}

/*
 * rf_sq_last_pi - where the last WQE committed starts (its wqe_counter in
 * a CQE, modulo 2^16), found in the side table rather than stored by
 * every post: the entry whose end is pi, searched back from pi - 1. An
 * entry left from an earlier lap never matches: a WQE that started a lap
 * or more before slot j ends at or before j, so before pi. At most
 * RF_SEND_WQE_MAX_BB steps, one for a one-BB WQE. Only meaningful after
 * at least one commit.
 */
RF_INLINE uint32_t rf_sq_last_pi(const struct rf_sq *sq)
{
	uint32_t pi = sq->pi, s = pi - 1, n = RF_SEND_WQE_MAX_BB;

	while (sq->slot[s & sq->wqe_mask].end != pi && --n)
		s--;
	return s;
}

/*
 * rf_sq_ring - tell the device about every WQE committed since the last
 * ring. A single WQE that fits one BlueFlame half is copied through the
 * BlueFlame register (the device needs no DMA read); otherwise, or when the
 * QP has no BlueFlame (bf.size 0), the 8-byte doorbell of the last WQE.
 * Barriers: WQE stores before the dbrec, dbrec before the MMIO stores, and
 * the write-combining buffer flushed after them (doorbell.h).
 *
 * "Single WQE": the WQE that starts at rung, the pi at the last ring
 * (bf_rung_pi less no_bf_bias), ends at pi. It fits when its size
 * pi - rung is 1..bf_bbs, one unsigned compare. Neither the test nor the doorbell needs
 * a "last WQE" stored by every post: the side table tells (rf_sq_last_pi()).
 */
RF_INLINE void rf_sq_ring(struct rf_sq *sq)
{
	uint32_t pi = sq->pi;
	uint32_t rung = sq->bf_rung_pi - sq->no_bf_bias;
	size_t off;

	if (RF_UNLIKELY(pi == rung))
		return;
	off = rf__sq_slot_off(rung & sq->wqe_mask);
	if (rf__sq_slot_at(sq->slot, off)->end == pi && pi - rung - 1 < sq->bf_bbs)
		rf_ring_bf(sq->dbrec, &sq->bf, pi, rf__sq_wqe_at(sq->buf, off), pi - rung);
	else
		rf_ring_db(sq->dbrec, &sq->bf, pi, rf_sq_wqe(sq, rf_sq_last_pi(sq)));
	sq->bf_rung_pi = pi + sq->no_bf_bias;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_H */
