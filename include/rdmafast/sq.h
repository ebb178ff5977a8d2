/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq.h - the send queue: build WQEs in place, commit, ring.
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
 * half-done.
 *
 * Space is counted in 64-byte basic blocks (BB), not in work requests: a
 * WQE takes 1 to 16 BBs. Each committed WQE records, in two side tables
 * indexed by the slot of its first BB, its wr_id and the producer index
 * just after it. A CQE names the first BB of the last WQE it completes
 * (wqe_counter); since RC/UC/XRC complete in order, that one entry retires
 * every earlier WQE too, signaled or not (rf_sq_retire()). So unsignaled
 * WQEs cost no CQE and no bookkeeping beyond the two table stores.
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
 * serialize.
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
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/hw/doorbell.h>
#include <rdmafast/hw/wqe.h>

RF_BEGIN_DECLS

/* ---- Flags of a post: the control segment's fm_ce_se bits, as is -------- */

enum {
	RF_SEND_SIGNALED  = RF_WQE_CTRL_CQ_UPDATE,	/* write a CQE on success */
	RF_SEND_SOLICITED = RF_WQE_CTRL_SOLICITED,	/* solicited event at the peer */
	RF_SEND_FENCE     = RF_WQE_CTRL_FENCE,		/* wait for earlier READ/atomics */
};

/*
 * In a post's flags: ring right after this WQE, as post + rf_sq_ring()
 * would. The RC/UC/XRC one-call posts do it themselves: when the WQE is
 * the only one since the last ring and fits a BlueFlame half (the usual
 * "post one, send it now"), they copy it to the register at once from
 * what they hold; otherwise they ring the 8-byte doorbell of their WQE,
 * which they know without rf_sq_ring()'s search. rf_sq_commit() (and so
 * the UD send, NOP, bind and invalidate posts) calls rf_sq_ring(). Not a
 * control-segment bit: RF__SEND_FM masks it off.
 */
#define RF_SEND_RING 0x20000U
#define RF__SEND_FM  0xffU	/* the flags that go into fm_ce_se */

/* The transport a send queue belongs to: decides the segment after ctrl. */
enum rf_qp_kind {
	RF_QP_RC  = 0,
	RF_QP_UC  = 1,
	RF_QP_XRC = 2,	/* XRC_SEND: a 16-byte XRC segment after ctrl */
	RF_QP_UD  = 3,	/* a 48-byte address vector after ctrl */
};

/* A gather/scatter entry; same layout as struct ibv_sge. */
struct rf_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * Side-table entries (struct rf_sq). Wrapped in structs so that the
 * compiler knows a store to one does not alias an rf_sq field of the same
 * integer type: after a plain uint64_t or uint32_t array store it reloads
 * the queue's fields, in a burst of posts once per WQE.
 */
struct rf__sq_wr_id { uint64_t v; };
struct rf__sq_end { uint32_t v; };

/*
 * struct rf_sq - one send queue. Fields are filled by rf_sq_init() (host
 * memory, tests) or rf_qp_init_ibv() (rdmafast/verbs.h) and are
 * read-only afterwards except where noted.
 */
struct rf_sq {
	/* hot: every post (read before the WQE stores, see rf__sq_post_rdma1) */
	uint8_t  *buf;		/* BB 0 */
	/*
	 * The side tables, one entry per BB slot for the WQE starting there:
	 * its wr_id, and the producer index just after it. Two arrays rather
	 * than one of pairs: the slot index then addresses both with the
	 * scale of a load or store (8 and 4), with no multiply into a
	 * pointer, in every post and every CQE.
	 */
	struct rf__sq_wr_id *wr_id;	/* [wqe_cnt] */
	struct rf__sq_end   *wqe_end;	/* [wqe_cnt] */
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
	uint8_t   tseg_ds;	/* DS of the transport segment: 0 RC/UC, 1 XRC, 3 UD */
	uint8_t   kind;		/* enum rf_qp_kind */
	/*
	 * tseg_ds, but 1 on UC: what READ and the atomics test instead, so
	 * that on UC, which has neither, they leave the RC path for
	 * rf__sq_open(), which refuses them, at no cost to the RC path.
	 */
	uint8_t   rd_tseg;
	uint32_t  tseg_off;	/* 16 + 16 * tseg_ds: where the body starts */
	/* ring */
	/*
	 * pi at the last ring plus no_bf (written). A WQE that starts at
	 * bf_pi is the only one since the last ring and, on a queue with
	 * BlueFlame (no_bf 0), may go by BlueFlame: one compare for both in
	 * an RF_SEND_RING post. Without BlueFlame no_bf is 0x80000000, which
	 * pi - rung (at most the queue size) never reaches: no pi matches.
	 */
	uint32_t  bf_pi;
	uint32_t  no_bf;
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
	 * inline post tests "RC/UC and the payload fits" with one compare.
	 */
	uint32_t  inline_rc_lim;
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
	uint64_t *wr_id;	/* wqe_cnt entries, caller-allocated */
	uint32_t *wqe_end;	/* wqe_cnt entries, caller-allocated; rf_sq_init() clears it */
};

/*
 * ctrl bytes 8..15 with fm_ce_se = fm (and the rest 0), as the 8-byte word
 * stored: fm is byte 11.
 */
RF_INLINE uint64_t rf__sq_fm_bits(uint32_t fm)
{
#if RF_LITTLE_ENDIAN
	return (uint64_t)fm << 24;
#else
	return (uint64_t)fm << 32;
#endif
}

/*
 * ctrl bytes 0..7 as the 8-byte word stored: opmod_idx_opcode (opmod, the
 * WQE index pi & 0xffff, opcode), then qpn_ds plus ds_add DS units. A post
 * adds rf__sq_ctrl_lo(0, pi, opcode, opmod, ds) to sq->ctrl_lo: with the
 * opcode, opmod and DS constant, that is the index swapped into place
 * (three instructions) and one add. Adding is exact: the parts do not
 * overlap and the DS byte never carries (at most 63).
 */
RF_INLINE uint64_t rf__sq_ctrl_lo(__be32 qpn_ds, uint32_t pi, uint8_t opcode,
				  uint8_t opmod, uint32_t ds_add)
{
#if RF_LITTLE_ENDIAN
	uint64_t idx = pi & 0xffffU;	/* bytes 1..2 once swapped from 5..6 */

	return ((uint64_t)(RF_FORCE uint32_t)qpn_ds << 32) +
	       (((uint64_t)ds_add << 56) | ((uint32_t)opcode << 24) | opmod) +
	       __builtin_bswap64(idx << 40);
#else
	return (RF_FORCE uint32_t)qpn_ds + ds_add +
	       ((uint64_t)(((uint32_t)opmod << 24) | ((uint32_t)(uint16_t)pi << 8) |
			   opcode) << 32);
#endif
}

/*
 * rf_sq_init - set up sq over a send queue nobody has posted to yet.
 * Returns 0, or -EINVAL when wqe_cnt is not a power of two or a table or
 * the buffer is missing. Cold: once per queue.
 */
static inline RF_COLD int rf_sq_init(struct rf_sq *sq, const struct rf_sq_attr *a)
{
	if (!a->buf || !a->dbrec || !a->wr_id || !a->wqe_end ||
	    a->wqe_cnt < 2 || (a->wqe_cnt & (a->wqe_cnt - 1)) ||
	    a->wqe_cnt > 0x8000 || a->kind > RF_QP_UD)
		return -EINVAL;
	__builtin_memset(sq, 0, sizeof(*sq));
	if (rf_bf_init(&sq->bf, a->bf_reg, a->bf_size))
		return -EINVAL;
	sq->buf = (uint8_t *)a->buf;
	sq->wqe_mask = a->wqe_cnt - 1;
	/*
	 * Every slot may be in flight: the side tables tell exactly where each
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
	sq->tseg_ds = a->kind == RF_QP_XRC ? 1 : a->kind == RF_QP_UD ? 3 : 0;
	sq->rd_tseg = a->kind == RF_QP_UC ? 1 : sq->tseg_ds;
	sq->ctrl_lo = rf__sq_ctrl_lo(sq->qpn_be | rf_htobe32(1U + sq->tseg_ds), 0, 0, 0, 0);
	sq->tseg_off = RF_WQE_DS_SIZE * (1U + sq->tseg_ds);
	sq->wr_id = (struct rf__sq_wr_id *)a->wr_id;
	sq->wqe_end = (struct rf__sq_end *)a->wqe_end;
	/*
	 * rf_sq_last_pi() relies on no entry naming an end not yet reached:
	 * 0 never is once anything is posted (pi wraps to 0 only after
	 * every slot has been written).
	 */
	__builtin_memset(a->wqe_end, 0, (size_t)a->wqe_cnt * sizeof(*a->wqe_end));
	sq->dbrec = a->dbrec + RF_SND_DBR;
	sq->bf_bbs = a->bf_size / RF_SEND_WQE_BB;
	sq->no_bf = a->bf_size ? 0 : 0x80000000U;
	sq->bf_pi = sq->no_bf;	/* rung at 0 */
	sq->qend = sq->buf + (size_t)a->wqe_cnt * RF_SEND_WQE_BB;
	sq->wqe_cnt = a->wqe_cnt;
	sq->qpn = a->qpn;
	/* no WQE holds more, and the inline sizes then cannot overflow */
	sq->max_inline = a->max_inline < RF_WQE_MAX_DS * RF_WQE_DS_SIZE ?
			 a->max_inline : RF_WQE_MAX_DS * RF_WQE_DS_SIZE;
	sq->inline_rc_lim = sq->tseg_ds ? 0 : sq->max_inline + 1;
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
 * The control segment as the posts store it: bytes 0..7 (opmod_idx_opcode,
 * qpn_ds) and 8..15 (signature 0, DCI id 0, fm_ce_se, imm), one 8-byte
 * store each.
 * Stores go through this union rather than memcpy: a memcpy store may
 * alias anything, which made the compiler reload every rf_sq field after
 * it (and in a batch, in every iteration); a union member store only
 * aliases what the union contains, and reads through struct
 * rf_wqe_ctrl_seg stay ordered with it because that struct is a member.
 */
union rf__ctrl_view {
	struct rf_wqe_ctrl_seg seg;
	struct {
		uint64_t lo;	/* rf__sq_ctrl_lo() */
		uint64_t hi;	/* rf__sq_ctrl_hi() */
	} q;
	uint64_t bb[8];	/* a WQE built in registers (rf__sq_end_bb()) */
};

/* Bytes 8..15 of a control segment: rf__sq_fm_bits() and imm (bytes 12..15). */
RF_INLINE uint64_t rf__sq_ctrl_hi(uint64_t fm_bits, __be32 imm)
{
#if RF_LITTLE_ENDIAN
	return ((uint64_t)(RF_FORCE uint32_t)imm << 32) | fm_bits;
#else
	return fm_bits | (RF_FORCE uint32_t)imm;
#endif
}

/* Fill a control segment as rf_set_ctrl_seg() does, in two stores. */
RF_INLINE void rf__sq_set_ctrl(struct rf_wqe_ctrl_seg *c, uint32_t pi, uint8_t opcode,
			       uint8_t opmod, __be32 qpn_ds, uint64_t fm_bits, __be32 imm)
{
	union rf__ctrl_view *v = (union rf__ctrl_view *)c;

	v->q.lo = rf__sq_ctrl_lo(qpn_ds, pi, opcode, opmod, 0);
	v->q.hi = rf__sq_ctrl_hi(fm_bits, imm);
}

/* Record a WQE of nbb BBs in the side table and move pi past it. */
RF_INLINE void rf__sq_advance(struct rf_sq *sq, uint32_t nbb, uint64_t wr_id)
{
	uint32_t pi = sq->pi, idx = pi & sq->wqe_mask;

	sq->wr_id[idx].v = wr_id;
	sq->wqe_end[idx].v = pi + nbb;
	sq->pi = pi + nbb;
}

/* Cold half of rf_sq_reserve(): fill up to the queue end with NOPs. */
static inline RF_COLD void rf__sq_pad(struct rf_sq *sq, uint32_t pad)
{
	while (pad--) {
		struct rf_wqe_ctrl_seg *c = rf_sq_wqe(sq, sq->pi);

		/* unsignaled, unfenced */
		rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_NOP, 0,
				sq->qpn_be | RF_BE32(1), 0, 0);
		rf__sq_advance(sq, 1, 0);
	}
}

/* BBs of NOP padding a WQE of nbb BBs needs before it (usually 0). */
RF_INLINE uint32_t rf__sq_pad_need(const struct rf_sq *sq, uint32_t nbb)
{
	uint32_t room = sq->wqe_cnt - (sq->pi & sq->wqe_mask);

	/* a 1-BB WQE always fits: with a constant nbb this folds to 0 */
	return nbb > 1 && RF_UNLIKELY(nbb > room) ? room : 0;
}

/*
 * True when a WQE of nbb BBs (and its padding) fits now. pi never passes
 * limit, so limit - pi is the free space; for a 1-BB WQE this is
 * "limit != pi".
 */
RF_INLINE int rf__sq_room(const struct rf_sq *sq, uint32_t nbb)
{
	return sq->limit - sq->pi >= rf__sq_pad_need(sq, nbb) + nbb;
}

/* After rf__sq_room(): pad if needed, return the WQE's control segment. */
RF_INLINE struct rf_wqe_ctrl_seg *rf__sq_begin(struct rf_sq *sq, uint32_t nbb)
{
	uint32_t pad = rf__sq_pad_need(sq, nbb);

	if (RF_UNLIKELY(pad))
		rf__sq_pad(sq, pad);
	return rf_sq_wqe(sq, sq->pi);
}

/*
 * rf_sq_reserve - claim nbb contiguous basic blocks (1..RF_SEND_WQE_MAX_BB)
 * for the next WQE and return its control segment, or NULL when the queue
 * has no room for it (then nothing moved). If the WQE would cross the queue
 * end, the BBs up to the end are first committed as NOPs. The WQE must be
 * committed with rf_sq_commit() before the next reserve.
 */
RF_INLINE struct rf_wqe_ctrl_seg *rf_sq_reserve(struct rf_sq *sq, uint32_t nbb)
{
	if (RF_UNLIKELY(!rf__sq_room(sq, nbb)))
		return NULL;
	return rf__sq_begin(sq, nbb);
}

/*
 * rf_sq_tseg - write the transport segment that follows the control
 * segment on XRC queues and return where the next segment goes. On RC/UC
 * the XRC bytes are stored too and then overwritten by the next segment:
 * one 16-byte store instead of a branch on the queue kind. UD posts write
 * their address vector themselves (rf_sq_post_ud_send()).
 */
RF_INLINE void *rf_sq_tseg(const struct rf_sq *sq, struct rf_wqe_ctrl_seg *c)
{
	*(struct rf_wqe_xrc_seg *)(c + 1) = sq->xrc;
	return (uint8_t *)c + sq->tseg_off;
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

	while (sq->wqe_end[s & sq->wqe_mask].v != pi && --n)
		s--;
	return s;
}

/*
 * rf_sq_ring - tell the device about every WQE committed since the last
 * ring. A single WQE that fits one BlueFlame half is copied through the
 * BlueFlame register (the device needs no DMA read); otherwise, or when the
 * QP has no BlueFlame (bf.size 0), the 8-byte doorbell of the last WQE.
 * Barriers: WQE stores before the dbrec, dbrec before the MMIO stores, and
 * the write-combining buffer flushed after them (hw/doorbell.h).
 *
 * "Single WQE": the WQE that starts at rung, the pi at the last ring
 * (bf_pi less no_bf), ends at pi. It fits when its size pi - rung is
 * 1..bf_bbs, one unsigned compare. Neither the test nor the doorbell needs
 * a "last WQE" stored by every post: the side table tells (rf_sq_last_pi()).
 */
RF_INLINE void rf_sq_ring(struct rf_sq *sq)
{
	uint32_t pi = sq->pi;
	uint32_t rung = sq->bf_pi - sq->no_bf;

	if (RF_UNLIKELY(pi == rung))
		return;
	if (sq->wqe_end[rung & sq->wqe_mask].v == pi && pi - rung - 1 < sq->bf_bbs)
		rf_ring_bf(sq->dbrec, &sq->bf, pi, rf_sq_wqe(sq, rung), pi - rung);
	else
		rf_ring_db(sq->dbrec, &sq->bf, pi, rf_sq_wqe(sq, rf_sq_last_pi(sq)));
	sq->bf_pi = pi + sq->no_bf;
}

/*
 * A WQE being built by a one-call post, kept in registers. The one-call
 * posts read everything they need from *sq first (rf__sq_open()), then
 * write the segments, then the control segment, the side table and the
 * queue state last (rf__sq_end()). In that order no rf_sq field has to be
 * loaded again after a WQE store, and rf_sq_ring() right after a post
 * gets pi from the store the compiler just made.
 */
struct rf__sq_wqe {
	struct rf_wqe_ctrl_seg *c;
	uint8_t *body;		/* after ctrl and transport segment */
	struct rf__sq_wr_id *wr_id;	/* sq->wr_id */
	struct rf__sq_end   *wqe_end;	/* sq->wqe_end */
	size_t   idx;		/* pi & wqe_mask (pointer-sized: it indexes) */
	uint32_t pi;
	uint32_t nbb;
	uint64_t ctrl_lo;	/* sq->ctrl_lo: qpn_ds with ctrl and transport DS */
	uint64_t fm_bits;	/* sq->ctrl_hi | rf__sq_fm_bits(flags) */
	int      ring;		/* RF_SEND_RING (a constant at most call sites) */
};

/*
 * The field a post of this opcode (a constant) tests to take the RC path
 * (0) or the one with a transport segment: rd_tseg for READ and the
 * atomics, which UC does not have, tseg_ds for the rest.
 */
RF_INLINE uint8_t rf__sq_tseg_for(const struct rf_sq *sq, uint8_t opcode)
{
	return rf_opcode_fetches(opcode) ? sq->rd_tseg : sq->tseg_ds;
}

/*
 * Claim nbb BBs for a one-call post: 0 with *w filled, padding done and,
 * with tseg, the transport segment written; -ENOSPC when the queue has no
 * room, -EINVAL for tseg on a queue other than XRC, nothing written and
 * nothing moved either way. tseg is 0 for a queue without a transport
 * segment (RC/UC; the caller tested rf__sq_tseg_for(), so the body offset
 * is a constant) or 1: XRC. What else arrives with tseg is refused here,
 * for every one-call post: UD, whose address vector their body cannot
 * follow (UD sends go through rf_sq_post_ud_send()), and UC for READ and
 * the atomics (rd_tseg).
 *
 * Every field is loaded before the room test, unconditionally: a loop of
 * posts (a burst before one ring) then loads them once, outside the loop.
 * Loaded after the test, they sit in a block the loop may exit before, and
 * compilers do not hoist loads out of such blocks, so each post reloaded
 * half a dozen fields.
 */
RF_INLINE int rf__sq_open(struct rf_sq *sq, struct rf__sq_wqe *w, uint32_t nbb,
			  uint32_t flags, int tseg)
{
	uint32_t pi = sq->pi, mask = sq->wqe_mask;
	uint8_t *buf = sq->buf;

	if (tseg && RF_UNLIKELY(sq->kind != RF_QP_XRC))
		return -EINVAL;
	w->wr_id = sq->wr_id;
	w->wqe_end = sq->wqe_end;
	w->ctrl_lo = sq->ctrl_lo;
	w->fm_bits = sq->ctrl_hi | rf__sq_fm_bits(flags & RF__SEND_FM);
	w->ring = (flags & RF_SEND_RING) != 0;
	if (RF_UNLIKELY(!rf__sq_room(sq, nbb)))
		return -ENOSPC;
	if (RF_UNLIKELY(rf__sq_pad_need(sq, nbb))) {
		w->c = rf__sq_begin(sq, nbb);	/* pads: pi moved */
		pi = sq->pi;
	} else {
		w->c = (struct rf_wqe_ctrl_seg *)(buf + ((size_t)(pi & mask) << RF_SEND_WQE_SHIFT));
	}
	w->idx = pi & mask;
	w->pi = pi;
	w->nbb = nbb;
	if (tseg) {
		*(struct rf_wqe_xrc_seg *)(w->c + 1) = sq->xrc;
		w->body = (uint8_t *)w->c + sq->tseg_off;
	} else {
		w->body = (uint8_t *)(w->c + 1);
	}
	return 0;
}

/*
 * Write the control segment, record the WQE, advance pi; ds_body
 * excludes ctrl and transport. With bb, the WQE is one BB built in
 * registers: words 2..n-1 of bb hold its body, then with inl an inline
 * segment of inl payload bytes at word n; the control segment goes to
 * words 0 and 1 before it is all stored to the queue, and a BlueFlame ring
 * writes the register from bb too (rf_ring_bf_bb()). bb, n and inl are
 * constants at every call site.
 */
RF_INLINE void rf__sq_close(struct rf_sq *sq, const struct rf__sq_wqe *w,
			    struct rf_wqe_bb *bb, unsigned n, uint32_t inl,
			    uint8_t opcode, uint8_t opmod, uint32_t ds_body,
			    __be32 imm, uint64_t wr_id)
{
	union rf__ctrl_view *v = (union rf__ctrl_view *)w->c;
	/* sq->ctrl_lo carries qpn_ds: add the rest (rf__sq_ctrl_lo()) */
	uint64_t lo = w->ctrl_lo + rf__sq_ctrl_lo(0, w->pi, opcode, opmod, ds_body);
	uint64_t hi = rf__sq_ctrl_hi(w->fm_bits, imm);

	if (bb) {
		bb->q[0] = lo;
		bb->q[1] = hi;
		RF__BB_STORE(v->bb, bb->q, n);
		if (inl)
			rf_wqe_bb_store_inline((uint8_t *)w->c, bb, n, inl);
	} else {
		v->q.lo = lo;
		v->q.hi = hi;
	}
	w->wr_id[w->idx].v = wr_id;
	w->wqe_end[w->idx].v = w->pi + w->nbb;
	sq->pi = w->pi + w->nbb;
	/*
	 * RF_SEND_RING (a constant): alone since the last ring and small
	 * enough, the WQE goes out by BlueFlame here, from what the post
	 * holds; anything else is rf_sq_ring()'s to decide.
	 */
	if (w->ring && RF_LIKELY(w->pi == sq->bf_pi && (w->nbb == 1 || w->nbb <= sq->bf_bbs))) {
		if (bb)
			rf_ring_bf_bb(sq->dbrec, &sq->bf, w->pi + 1, bb, n, inl);
		else
			rf_ring_bf(sq->dbrec, &sq->bf, w->pi + w->nbb, w->c, w->nbb);
		sq->bf_pi = w->pi + w->nbb;	/* no_bf is 0 here */
		return;
	}
	/* earlier WQEs wait too, no BlueFlame, or too big: this WQE's doorbell */
	if (w->ring) {
		rf_ring_db(sq->dbrec, &sq->bf, w->pi + w->nbb, w->c);
		sq->bf_pi = w->pi + w->nbb + sq->no_bf;
	}
}

/* rf__sq_close() for a WQE written to the queue segment by segment. */
RF_INLINE void rf__sq_end(struct rf_sq *sq, const struct rf__sq_wqe *w, uint8_t opcode,
			  uint8_t opmod, uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, NULL, 0, 0, opcode, opmod, ds_body, imm, wr_id);
}

/*
 * rf__sq_close() for a one-BB WQE built in bb: words 0..n-1, then with inl
 * an inline segment of inl payload bytes at word n.
 */
RF_INLINE void rf__sq_end_bb(struct rf_sq *sq, const struct rf__sq_wqe *w,
			     struct rf_wqe_bb *bb, unsigned n, uint32_t inl,
			     uint8_t opcode, uint32_t ds_body, __be32 imm, uint64_t wr_id)
{
	rf__sq_close(sq, w, bb, n, inl, opcode, 0, ds_body, imm, wr_id);
}

/*
 * rf_sq_commit - finish the WQE reserved at c: fill its control segment
 * and record it. ds is the WQE size in 16-byte units including ctrl (and
 * the transport segment; it must fit the BBs reserved). flags are RF_SEND_*
 * bits; the queue's default (signal all) is added. imm is the immediate in
 * network order, rf_htobe32(rkey) for SEND_INVAL or UMR, or 0. Invisible to
 * the device until rf_sq_ring(), which RF_SEND_RING in flags calls.
 */
RF_INLINE void rf_sq_commit(struct rf_sq *sq, struct rf_wqe_ctrl_seg *c,
			    uint8_t opcode, uint8_t opmod, uint32_t ds,
			    uint32_t flags, __be32 imm, uint64_t wr_id)
{
	uint64_t fm_bits = sq->ctrl_hi | rf__sq_fm_bits(flags & RF__SEND_FM);

	RF_ASSERT(ds >= 1 && ds <= RF_WQE_MAX_DS);
	RF_ASSERT((void *)c == (void *)rf_sq_wqe(sq, sq->pi));
	rf__sq_set_ctrl(c, sq->pi, opcode, opmod, sq->qpn_be | rf_htobe32(ds),
			fm_bits, imm);
	rf__sq_advance(sq, (ds + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB, wr_id);
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);
}

/* Retire everything up to the end of the WQE recorded in slot idx. */
RF_INLINE void rf__sq_retire_slot(struct rf_sq *sq, size_t idx)
{
	sq->limit = sq->wqe_end[idx].v + sq->bb_max;
}

/*
 * rf_sq_retire - a CQE (success or error) reported the WQE whose first BB
 * is wqe_counter: free it and every WQE before it, and return its wr_id.
 */
RF_INLINE uint64_t rf_sq_retire(struct rf_sq *sq, uint16_t wqe_counter)
{
	size_t idx = wqe_counter & sq->wqe_mask;

	rf__sq_retire_slot(sq, idx);
	return sq->wr_id[idx].v;
}

/* ---- One-call posts: reserve + segments + commit (no ring) ------------ */

/* DS of a one-data-segment body: none for length 0 (0 would mean 2 GiB). */
#define RF__DS_DATA(len) ((uint32_t)((len) != 0))

/*
 * The one-BB posts with one SGE, ctrl [xrc] body, where bb holds the body
 * in words 2..n-1 (RDMA: raddr and data segments; SEND: the data segment):
 * at most 4 DS with the XRC segment, so always one BB. tseg is a constant
 * (rf__sq_post_bb1() tests the queue once). RC/UC stores bb as it is and
 * may ring from it; XRC stores its words after the XRC segment.
 */
RF_INLINE int rf__sq_post_bb1_t(struct rf_sq *sq, int tseg, uint8_t opcode, __be32 imm,
				struct rf_wqe_bb *bb, unsigned n, uint32_t ds_body,
				uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	int rc = rf__sq_open(sq, &w, 1, flags, tseg);

	if (RF_UNLIKELY(rc))
		return rc;
	if (!tseg) {
		rf__sq_end_bb(sq, &w, bb, n, 0, opcode, ds_body, imm, wr_id);
	} else {
		RF__BB_STORE(((union rf__ctrl_view *)w.body)->bb, bb->q + 2, n - 2);
		rf__sq_end(sq, &w, opcode, 0, ds_body, imm, wr_id);
	}
	return 0;
}

/*
 * bb is built by the caller before the branch on the queue kind, so that
 * a loop of posts builds its loop-invariant words once for both copies.
 */
RF_INLINE int rf__sq_post_bb1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
			      struct rf_wqe_bb *bb, unsigned n, uint32_t ds_body,
			      uint32_t flags, uint64_t wr_id)
{
	if (RF_LIKELY(!rf__sq_tseg_for(sq, opcode)))
		return rf__sq_post_bb1_t(sq, 0, opcode, imm, bb, n, ds_body, flags, wr_id);
	return rf__sq_post_bb1_t(sq, 1, opcode, imm, bb, n, ds_body, flags, wr_id);
}

/* ctrl [xrc] raddr data: WRITE, WRITE_IMM, READ. */
RF_INLINE int rf__sq_post_rdma1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				uint32_t lkey, uint64_t laddr, uint32_t len,
				uint32_t rkey, uint64_t raddr, uint32_t flags,
				uint64_t wr_id)
{
	struct rf_wqe_bb bb;

	rf_wqe_bb_raddr(&bb, 2, raddr, rkey);
	rf_wqe_bb_data(&bb, 4, len, lkey, laddr);
	return rf__sq_post_bb1(sq, opcode, imm, &bb, 6, 1 + RF__DS_DATA(len), flags, wr_id);
}

/*
 * rf_sq_post_write - RDMA WRITE of len bytes at laddr (lkey) to raddr
 * (rkey). flags: RF_SEND_*. A zero length writes nothing and still
 * completes.
 */
RF_INLINE int rf_sq_post_write(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			       uint32_t len, uint32_t rkey, uint64_t raddr,
			       uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_WRITE, 0, lkey, laddr, len,
				 rkey, raddr, flags, wr_id);
}

/*
 * rf_sq_post_write_imm - RDMA WRITE with immediate: consumes a receive at
 * the responder, which gets imm (network order, passed through untouched).
 */
RF_INLINE int rf_sq_post_write_imm(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				   uint32_t len, uint32_t rkey, uint64_t raddr,
				   __be32 imm, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_WRITE_IMM, imm, lkey, laddr,
				 len, rkey, raddr, flags, wr_id);
}

/* rf_sq_post_read - RDMA READ of len bytes at raddr (rkey) into laddr. */
RF_INLINE int rf_sq_post_read(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			      uint32_t len, uint32_t rkey, uint64_t raddr,
			      uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_READ, 0, lkey, laddr, len,
				 rkey, raddr, flags, wr_id);
}

/* ctrl [xrc] data: the SEND family on RC/UC/XRC. */
RF_INLINE int rf__sq_post_send1(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				uint32_t lkey, uint64_t laddr, uint32_t len,
				uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_bb bb;

	rf_wqe_bb_data(&bb, 2, len, lkey, laddr);
	return rf__sq_post_bb1(sq, opcode, imm, &bb, 4, RF__DS_DATA(len), flags, wr_id);
}

/* rf_sq_post_send - SEND of len bytes at laddr (lkey). */
RF_INLINE int rf_sq_post_send(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			      uint32_t len, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND, 0, lkey, laddr, len, flags, wr_id);
}

/* rf_sq_post_send_imm - SEND with immediate (imm in network order). */
RF_INLINE int rf_sq_post_send_imm(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				  uint32_t len, __be32 imm, uint32_t flags,
				  uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND_IMM, imm, lkey, laddr, len,
				 flags, wr_id);
}

/* rf_sq_post_send_inv - SEND that invalidates inv_rkey at the responder. */
RF_INLINE int rf_sq_post_send_inv(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				  uint32_t len, uint32_t inv_rkey, uint32_t flags,
				  uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND_INVAL, rf_htobe32(inv_rkey),
				 lkey, laddr, len, flags, wr_id);
}

/*
 * Copy inline payload into the WQE. A constant length becomes a few moves;
 * otherwise 8-byte chunks and a tail, with an empty asm in the loop so the
 * compiler cannot turn it back into a call to memcpy (no calls on the data
 * path). The WQE never wraps, so the destination is contiguous.
 */
RF_INLINE void rf__copy_inline(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	if (__builtin_constant_p(len)) {
		__builtin_memcpy(dst, src, len);
		return;
	}
	while (len >= 8) {
		__builtin_memcpy(dst, src, 8);
		__asm__("" : "+r"(dst), "+r"(src));
		dst += 8;
		src += 8;
		len -= 8;
	}
	if (len & 4) {
		__builtin_memcpy(dst, src, 4);
		dst += 4;
		src += 4;
	}
	if (len & 2) {
		__builtin_memcpy(dst, src, 2);
		dst += 2;
		src += 2;
	}
	if (len & 1)
		*dst = *src;
}

/*
 * An inline payload written from registers lands at unaligned addresses of
 * the BlueFlame register (it follows a 4-byte header). x86 write-combining
 * memory takes that; elsewhere such a WQE is copied out of the queue in
 * aligned 16-byte moves, as a BlueFlame page mapped as device memory (arm64
 * without write combining) faults on unaligned stores.
 */
#if defined(__x86_64__) || defined(__i386__)
#define RF__INLINE_FROM_REGS 1
#else
#define RF__INLINE_FROM_REGS 0
#endif

/*
 * Inline posts with a constant tseg (see rf__sq_post_bb1_t()). The
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
		struct rf_wqe_bb bb;
		unsigned i = 2;

		if (has_raddr) {
			bb.q[2] = (RF_FORCE uint64_t)raddr;
			bb.q[3] = rf_wqe_word(rkey, 0);
			i = 4;
		}
		rf_wqe_bb_inline(&bb, data, len);
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
 * constant at every call site. The payload is copied into the WQE, so the
 * buffer needs no memory registration and may be reused on return.
 */
RF_INLINE int rf__sq_post_inline(struct rf_sq *sq, uint8_t opcode, __be32 imm,
				 int has_raddr, uint32_t rkey, uint64_t raddr,
				 const void *data, uint32_t len, uint32_t flags,
				 uint64_t wr_id)
{
	__be32 rkey_be = rf_htobe32(rkey);
	__be64 raddr_be = rf_htobe64(raddr);

	if (RF_LIKELY(len < sq->inline_rc_lim))
		return rf__sq_post_inline_t(sq, 0, opcode, imm, has_raddr, rkey_be,
					    raddr_be, data, len, flags, wr_id);
	/* RC/UC over max_inline, or any queue over it */
	if (RF_UNLIKELY(!sq->tseg_ds || len > sq->max_inline))
		return -EINVAL;
	return rf__sq_post_inline_t(sq, 1, opcode, imm, has_raddr, rkey_be,
				    raddr_be, data, len, flags, wr_id);
}

/* rf_sq_post_write_inline - RDMA WRITE of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_write_inline(struct rf_sq *sq, const void *data,
				      uint32_t len, uint32_t rkey, uint64_t raddr,
				      uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_RDMA_WRITE, 0, 1, rkey, raddr,
				  data, len, flags, wr_id);
}

/* rf_sq_post_write_imm_inline - the same with an immediate. */
RF_INLINE int rf_sq_post_write_imm_inline(struct rf_sq *sq, const void *data,
					  uint32_t len, uint32_t rkey,
					  uint64_t raddr, __be32 imm,
					  uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_RDMA_WRITE_IMM, imm, 1, rkey,
				  raddr, data, len, flags, wr_id);
}

/* rf_sq_post_send_inline - SEND of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_send_inline(struct rf_sq *sq, const void *data,
				     uint32_t len, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_SEND, 0, 0, 0, 0, data, len,
				  flags, wr_id);
}

/* rf_sq_post_send_imm_inline - SEND with immediate, payload inline. */
RF_INLINE int rf_sq_post_send_imm_inline(struct rf_sq *sq, const void *data,
					 uint32_t len, __be32 imm,
					 uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_SEND_IMM, imm, 0, 0, 0, data,
				  len, flags, wr_id);
}

/*
 * Scatter/gather posts: ctrl [xrc] [raddr] data x n. Zero-length entries
 * are dropped, as libmlx5 does (a data segment of length 0 means 2 GiB).
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

/* rf_sq_post_send_sg - SEND gathering n entries (at most max_sge). */
RF_INLINE int rf_sq_post_send_sg(struct rf_sq *sq, const struct rf_sge *sg,
				 uint32_t n, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_SEND, 0, 0, 0, 0, sg, n, flags, wr_id);
}

/* rf_sq_post_send_imm_sg - SEND with immediate gathering n entries. */
RF_INLINE int rf_sq_post_send_imm_sg(struct rf_sq *sq, const struct rf_sge *sg,
				     uint32_t n, __be32 imm, uint32_t flags,
				     uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_SEND_IMM, imm, 0, 0, 0, sg, n,
			      flags, wr_id);
}

/* rf_sq_post_write_sg - RDMA WRITE gathering n entries to raddr. */
RF_INLINE int rf_sq_post_write_sg(struct rf_sq *sq, const struct rf_sge *sg,
				  uint32_t n, uint32_t rkey, uint64_t raddr,
				  uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE, 0, 1, rkey, raddr, sg, n,
			      flags, wr_id);
}

/* rf_sq_post_read_sg - RDMA READ from raddr scattering into n entries. */
RF_INLINE int rf_sq_post_read_sg(struct rf_sq *sq, const struct rf_sge *sg,
				 uint32_t n, uint32_t rkey, uint64_t raddr,
				 uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_RDMA_READ, 0, 1, rkey, raddr, sg, n,
			      flags, wr_id);
}

/*
 * ---- Atomics ------------------------------------------------------------
 * The remote operand at raddr must be naturally aligned (8 bytes; 4 for the
 * 32-bit masked forms) and is in the target's host order, as for its CPU.
 * The original remote value lands at laddr (lkey). Its byte order depends
 * on the device: big-endian when the HCA's atomic_req_8B_endianness_mode
 * is 0 (the IB convention, most ConnectX; convert with rf_be64toh()), host
 * order when it is 1. Probe once with a fetch-and-add of 0 on a known
 * value if you cannot know (examples/atomics.c does).
 */

/*
 * The frame every atomic shares: [xrc] raddr, an operand segment of
 * opnd_ds DS, then the data segment that receives the fetch_len bytes of
 * the original remote value. Writes all but the operand segment, sets
 * *opnd to where that goes and returns 0; or returns rf__sq_open()'s
 * error (-ENOSPC, or -EINVAL on UD and UC) with nothing written and
 * nothing moved. The caller fills the operand and finishes
 * with rf__sq_end(..., 2 + opnd_ds, ...). The 16-byte operand forms take
 * one BB (two with the XRC segment), the 32-byte masked CS two either way.
 */
RF_INLINE int rf__sq_atomic_begin(struct rf_sq *sq, struct rf__sq_wqe *w, void **opnd,
				  uint32_t opnd_ds, uint32_t lkey, uint64_t laddr,
				  uint32_t fetch_len, uint32_t rkey, uint64_t raddr,
				  uint32_t flags)
{
	uint32_t nbb = opnd_ds > 1 ? 2 : 1 + (sq->tseg_ds != 0);
	struct rf_wqe_raddr_seg *r;
	uint8_t *o;
	int rc = rf__sq_open(sq, w, nbb, flags, sq->rd_tseg != 0);

	if (RF_UNLIKELY(rc))
		return rc;
	r = (struct rf_wqe_raddr_seg *)w->body;
	rf_set_raddr_seg(r, raddr, rkey);
	o = (uint8_t *)(r + 1);
	rf_set_data_seg((struct rf_wqe_data_seg *)(o + opnd_ds * RF_WQE_DS_SIZE),
			fetch_len, lkey, laddr);
	*opnd = o;
	return 0;
}

/*
 * The IB atomics: [xrc] raddr atomic data(8). On RC the WQE is exactly
 * one BB, built in registers (rf__sq_end_bb()).
 */
RF_INLINE int rf__sq_post_atomic(struct rf_sq *sq, uint8_t opcode, uint32_t lkey,
				 uint64_t laddr, uint32_t rkey, uint64_t raddr,
				 uint64_t swap_add, uint64_t compare, uint32_t flags,
				 uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *a;
	int rc;

	if (RF_LIKELY(!sq->rd_tseg)) {
		struct rf_wqe_bb bb;

		rc = rf__sq_open(sq, &w, 1, flags, 0);
		if (RF_UNLIKELY(rc))
			return rc;
		rf_wqe_bb_raddr(&bb, 2, raddr, rkey);
		rf_wqe_bb_atomic(&bb, 4, swap_add, compare);
		rf_wqe_bb_data(&bb, 6, 8, lkey, laddr);
		rf__sq_end_bb(sq, &w, &bb, 8, 0, opcode, 3, 0, wr_id);
		return 0;
	}
	rc = rf__sq_atomic_begin(sq, &w, &a, 1, lkey, laddr, 8, rkey, raddr, flags);
	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_atomic_seg((struct rf_wqe_atomic_seg *)a, swap_add, compare);
	rf__sq_end(sq, &w, opcode, 0, 3, 0, wr_id);
	return 0;
}

/* rf_sq_post_cas - 8-byte compare-and-swap: if *raddr == compare, swap. */
RF_INLINE int rf_sq_post_cas(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			     uint32_t rkey, uint64_t raddr, uint64_t compare,
			     uint64_t swap, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_atomic(sq, RF_OPCODE_ATOMIC_CS, lkey, laddr, rkey, raddr,
				  swap, compare, flags, wr_id);
}

/* rf_sq_post_faa - 8-byte fetch-and-add. */
RF_INLINE int rf_sq_post_faa(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			     uint32_t rkey, uint64_t raddr, uint64_t add,
			     uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_atomic(sq, RF_OPCODE_ATOMIC_FA, lkey, laddr, rkey, raddr,
				  add, 0, flags, wr_id);
}

/*
 * Masked ("extended") atomics. The QP must be in extended atomic mode
 * (the kernel picks it from the HCA's capabilities). Compare-and-swap
 * replaces the bits of swap_mask when the bits of compare_mask match;
 * fetch-and-add stops carries at the set bits of field_boundary.
 */
RF_INLINE int rf_sq_post_masked_cs32(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr,
				     uint32_t compare, uint32_t compare_mask,
				     uint32_t swap, uint32_t swap_mask,
				     uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 4, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_cs32_seg((struct rf_wqe_masked_cs32_seg *)m, swap, compare, swap_mask,
			       compare_mask);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_4B, 3, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_cs64(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr,
				     uint64_t compare, uint64_t compare_mask,
				     uint64_t swap, uint64_t swap_mask,
				     uint32_t flags, uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 2, lkey, laddr, 8, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_cs64_seg((struct rf_wqe_masked_cs64_seg *)m, swap, compare, swap_mask,
			       compare_mask);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_8B, 4, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_fa32(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr, uint32_t add,
				     uint32_t field_boundary, uint32_t flags,
				     uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 4, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_fa32_seg((struct rf_wqe_masked_fa32_seg *)m, add, field_boundary);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_4B, 3, 0, wr_id);
	return 0;
}

RF_INLINE int rf_sq_post_masked_fa64(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				     uint32_t rkey, uint64_t raddr, uint64_t add,
				     uint64_t field_boundary, uint32_t flags,
				     uint64_t wr_id)
{
	struct rf__sq_wqe w;
	void *m;
	int rc = rf__sq_atomic_begin(sq, &w, &m, 1, lkey, laddr, 8, rkey, raddr, flags);

	if (RF_UNLIKELY(rc))
		return rc;
	rf_set_masked_fa64_seg((struct rf_wqe_masked_fa64_seg *)m, add, field_boundary);
	rf__sq_end(sq, &w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_8B, 3, 0, wr_id);
	return 0;
}

/*
 * rf_sq_post_nop - a WQE that does nothing. Signaled, it reports that
 * everything before it completed; with RF_SEND_FENCE it also waits for
 * earlier READs and atomics.
 */
RF_INLINE int rf_sq_post_nop(struct rf_sq *sq, uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c = rf_sq_reserve(sq, 1);

	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf_sq_commit(sq, c, RF_OPCODE_NOP, 0, 1, flags, 0, wr_id);
	return 0;
}

/*
 * rf_sq_post_ud_send - UD SEND: ctrl, the address vector of an address
 * handle (mlx5dv_ah.av, 48 bytes) completed with the remote QPN and Q_Key,
 * then one data segment or, when data is non-NULL, inline payload.
 * The queue must be a UD queue.
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

	RF_ASSERT(sq->kind == RF_QP_UD);
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
	} else {
		rf_set_data_seg((struct rf_wqe_data_seg *)p, len, lkey, laddr);
	}
	rf_sq_commit(sq, c, with_imm ? RF_OPCODE_SEND_IMM : RF_OPCODE_SEND, 0,
		     ds, flags, with_imm ? imm : 0, wr_id);
	return 0;
}

/*
 * ---- Memory windows: type-2 bind and local invalidate (UMR WQEs) --------
 *
 * Both are UMR WQEs (opcode 0x25) that rewrite the window's mkey context.
 * A WQE after them must not start before the UMR finished (libmlx5 puts
 * the "initiator small fence" on the next WQE). rdmafast posts an
 * unsignaled NOP carrying that fence right after the UMR instead: the
 * send queue stalls at a fenced WQE, so everything behind the NOP waits
 * as well, and the hot posts need no "fence pending" state. Cost: one
 * extra BB per bind or invalidate.
 *
 * The window's key changes on every bind: pass rf_mw_inc_rkey(old) as
 * new_rkey and give the peer the new key once the bind completed.
 */

/* The next rkey of a memory window: same index, tag (low byte) + 1. */
RF_INLINE uint32_t rf_mw_inc_rkey(uint32_t rkey)
{
	return (rkey & 0xffffff00U) | ((rkey + 1) & 0xffU);
}

/* The small-fenced NOP that follows a UMR (room was checked with it). */
RF_INLINE void rf__sq_umr_fence(struct rf_sq *sq)
{
	struct rf_wqe_ctrl_seg *c = rf__sq_begin(sq, 1);

	rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_NOP, 0, sq->qpn_be | RF_BE32(1),
			rf__sq_fm_bits(RF_WQE_CTRL_INITIATOR_SMALL_FENCE), 0);
	rf__sq_advance(sq, 1, 0);
}

/*
 * rf_sq_post_bind_mw - bind type-2 memory window mw_rkey (its current
 * key) to [addr, addr + len) of the MR lkey, for remote access through
 * this QP only, with key new_rkey (same index, new tag) and access
 * RF_MKEY_ACCESS_* bits (verbs.h: rf_mw_access_ibv()). The MR must allow
 * binding (IBV_ACCESS_MW_BIND). 3 BBs, plus 1 for the fence NOP.
 */
static inline int rf_sq_post_bind_mw(struct rf_sq *sq, uint32_t mw_rkey, uint32_t new_rkey,
				     uint32_t lkey, uint64_t addr, uint64_t len,
				     uint32_t access, uint32_t flags, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_ctrl_seg *u;
	struct rf_wqe_mkey_context_seg *m;
	struct rf_wqe_umr_klm_seg *k;

	if (RF_UNLIKELY(len > 0x80000000ULL || (new_rkey >> 8) != (mw_rkey >> 8)))
		return -EINVAL;
	/* the bind (3 BBs) and the fence NOP, possibly after padding */
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 3) + 3 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 3);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_CHECK_FREE |
			    RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET, RF_UMR_KLM_OCTOWORDS(1),
			    RF_UMR_MKEY_MASK_BIND | RF_UMR_MKEY_MASK_QPN);
	m = (struct rf_wqe_mkey_context_seg *)(u + 1);
	rf_set_mkey_context_seg(m, 0, (uint8_t)access,
				(sq->qpn << 8) | (new_rkey & 0xff), addr, len);
	k = (struct rf_wqe_umr_klm_seg *)(m + 1);
	rf_set_umr_klm_seg(k, (uint32_t)len, lkey, addr);
	__builtin_memset(k + 1, 0, 3 * sizeof(*k));	/* the KLM block is 64 bytes */
	/* XRC queues carry no XRC segment on UMRs (as libmlx5) */
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 12, flags & ~RF_SEND_RING, rf_htobe32(mw_rkey),
		     wr_id);
	rf__sq_umr_fence(sq);
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);		/* the UMR and its fence NOP */
	return 0;
}

/*
 * rf_sq_post_local_inv - invalidate rkey (a memory window's, or a
 * memory key's) locally; remote access with it fails afterwards. 2 BBs,
 * plus 1 for the fence NOP.
 */
static inline int rf_sq_post_local_inv(struct rf_sq *sq, uint32_t rkey, uint32_t flags,
				       uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_ctrl_seg *u;

	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, 2) + 2 + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, 2);
	u = (struct rf_wqe_umr_ctrl_seg *)(c + 1);
	rf_set_umr_ctrl_seg(u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET |
			    RF_UMR_CTRL_FLAG_CHECK_QPN, 0, RF_UMR_MKEY_MASK_INVALIDATE);
	rf_set_mkey_context_seg((struct rf_wqe_mkey_context_seg *)(u + 1),
				RF_MKEY_CONTEXT_FREE, 0, RF_MKEY_NO_QPN, 0, 0);
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, 8, flags & ~RF_SEND_RING, rf_htobe32(rkey), wr_id);
	rf__sq_umr_fence(sq);
	if (flags & RF_SEND_RING)
		rf_sq_ring(sq);		/* the UMR and its fence NOP */
	return 0;
}

/* ---- Work-request batches (the ibv_post_send shape) -------------------- */

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

/* Flag of struct rf_sq_wr only: copy the gather list into the WQE. */
#define RF_SEND_INLINE 0x10000U

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

/* Post one work request; the generic (switching) path. */
static inline int rf_sq_post_wr(struct rf_sq *sq, const struct rf_sq_wr *wr)
{
	uint32_t fl = wr->flags & ~RF_SEND_INLINE;
	int inl = (wr->flags & RF_SEND_INLINE) != 0;
	const struct rf_sge *s = wr->sg_list;

	switch (wr->opcode) {
	case RF_WR_SEND:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_SEND, 0)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND, 0, 0, 0, 0, s,
					    wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_IMM:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_SEND_IMM, 0)
			   : rf__sq_post_sg(sq, RF_OPCODE_SEND_IMM, wr->imm, 0, 0, 0,
					    s, wr->num_sge, fl, wr->wr_id);
	case RF_WR_SEND_INV:
		return rf__sq_post_sg(sq, RF_OPCODE_SEND_INVAL,
				      rf_htobe32(wr->inv_rkey), 0, 0, 0, s,
				      wr->num_sge, fl, wr->wr_id);
	case RF_WR_WRITE:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_RDMA_WRITE, 1)
			   : rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE, 0, 1, wr->rkey,
					    wr->remote_addr, s, wr->num_sge, fl,
					    wr->wr_id);
	case RF_WR_WRITE_IMM:
		return inl ? rf__sq_post_wr_inline(sq, wr, RF_OPCODE_RDMA_WRITE_IMM, 1)
			   : rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE_IMM, wr->imm, 1,
					    wr->rkey, wr->remote_addr, s,
					    wr->num_sge, fl, wr->wr_id);
	case RF_WR_READ:
		return rf__sq_post_sg(sq, RF_OPCODE_RDMA_READ, 0, 1, wr->rkey,
				      wr->remote_addr, s, wr->num_sge, fl, wr->wr_id);
	case RF_WR_NOP:
		return rf_sq_post_nop(sq, fl, wr->wr_id);
	default:
		break;
	}
	/* atomics: exactly one result buffer */
	if (wr->num_sge != 1 || inl)
		return -EINVAL;
	switch (wr->opcode) {
	case RF_WR_CAS:
		return rf_sq_post_cas(sq, s->lkey, s->addr, wr->rkey, wr->remote_addr,
				      wr->compare_add, wr->swap, fl, wr->wr_id);
	case RF_WR_FAA:
		return rf_sq_post_faa(sq, s->lkey, s->addr, wr->rkey, wr->remote_addr,
				      wr->compare_add, fl, wr->wr_id);
	case RF_WR_MASKED_CS32:
		return rf_sq_post_masked_cs32(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr,
					      (uint32_t)wr->compare_add,
					      (uint32_t)wr->compare_mask,
					      (uint32_t)wr->swap,
					      (uint32_t)wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_CS64:
		return rf_sq_post_masked_cs64(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr, wr->compare_add,
					      wr->compare_mask, wr->swap,
					      wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_FA32:
		return rf_sq_post_masked_fa32(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr,
					      (uint32_t)wr->compare_add,
					      (uint32_t)wr->swap_mask, fl, wr->wr_id);
	case RF_WR_MASKED_FA64:
		return rf_sq_post_masked_fa64(sq, s->lkey, s->addr, wr->rkey,
					      wr->remote_addr, wr->compare_add,
					      wr->swap_mask, fl, wr->wr_id);
	default:
		return -EINVAL;
	}
}

/*
 * rf_sq_post_batch - post wr[0..n) in order, stopping at the first that
 * fails, then ring once if anything was posted: the equivalent of one
 * ibv_post_send() call with a list. Returns how many were posted (0..n);
 * *err, if not NULL, receives the failure (-ENOSPC, -EINVAL) or 0.
 * Unlike the rf_sq_post_* calls, this rings.
 */
static inline int rf_sq_post_batch(struct rf_sq *sq, const struct rf_sq_wr *wr,
				   int n, int *err)
{
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		rc = rf_sq_post_wr(sq, &wr[i]);
		if (rc)
			break;
	}
	if (i)
		rf_sq_ring(sq);
	if (err)
		*err = rc;
	return i;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_H */
