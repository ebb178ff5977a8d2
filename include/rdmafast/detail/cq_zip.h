/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq_zip.h - compressed CQEs in rf_cq_poll(): a zip's
 * title decoded once, then one record per mini-CQE in a straight loop.
 *
 * The layout (Linux include/linux/mlx5/device.h, struct mlx5_mini_cqe8;
 * the decompression of drivers/net/ethernet/mellanox/mlx5/core/en_rx.c):
 * a title CQE in format 3 whose byte_cnt counts the zip's completions
 * and which carries what they share; the zip takes that many entries
 * from the title on; mini-CQE arrays of eight sit in the entry after the
 * title and then in every eighth entry from it; the other entries are left
 * as they were. The consumer restores ownership of all of them.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CQ_ZIP_H
#define RDMAFAST_DETAIL_CQ_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>
#include <rdmafast/detail/cq.h>
#include <rdmafast/detail/sq_slots.h>
#include <rdmafast/detail/cq_decode.h>

RF_BEGIN_DECLS

/* The mini-CQE array holding mini-CQE i of the zip whose title is at t. */
RF_INLINE const struct rf_mini_cqe8 *rf__cq_zip_arr(const struct rf_cq *cq, uint32_t t,
						    uint32_t i)
{
	uint32_t slot = i < RF_MINI_CQE_PER_SLOT ? 1 : i & ~(uint32_t)(RF_MINI_CQE_PER_SLOT - 1);

	return (const struct rf_mini_cqe8 *)rf_cq_cqe(cq, t + slot);
}

/*
 * The record template of a requester mini-CQE (struct rf_wc bytes 16..31:
 * QPN, src_qp 0, the kind of its WQE opcode, counter 0, sl 0), as the
 * fast path keeps one in cq->req_rec. UMR is refined from the WQE (a
 * bind or a local invalidate), which is why a UMR's template serves that
 * mini-CQE alone.
 */
RF_INLINE rf__v8u16 rf__cq_zip_req_rec(const struct rf_sq *sq, uint32_t qpn, uint8_t wqe_opcode,
				       uint16_t counter)
{
	struct rf__wc_kind k = *rf__wc_req_kind(wqe_opcode);
	struct {
		uint32_t qp_num, src_qp, kind;
		uint16_t wqe_counter;
		uint8_t  sl, rsvd;
	} rec;
	rf__v8u16 v;

	if (RF_UNLIKELY(wqe_opcode == RF_OPCODE_UMR)) {
		const uint8_t *w = (const uint8_t *)rf_sq_wqe(sq, counter + 1U);

		k.opcode = w[16 + 48 - RF_SEND_WQE_BB] & RF_MKEY_CONTEXT_FREE ?
			   RF_WC_LOCAL_INV : RF_WC_BIND_MW;
	}
	rec.qp_num = qpn;
	rec.src_qp = 0;
	rec.kind = rf__wc_kind_word(&k);
	rec.wqe_counter = 0;
	rec.sl = 0;
	rec.rsvd = 0;
	RF_STATIC_ASSERT(sizeof(rec) == sizeof(v), "record tail");
	__builtin_memcpy(&v, &rec, sizeof(v));
	return v;
}

/*
 * One requester record from mini-CQE m: the template, the counter, the
 * WQE's wr_id and, when the opcode fetches (len, a constant), the byte
 * count; imm, undefined for send completions (rf_cq_poll(3)), is left
 * alone.
 * Returns the counter.
 */
RF_INLINE uint16_t rf__cq_zip_req_put(union rf__wc_view *w, const struct rf_mini_cqe8 *m,
				      rf__v8u16 rec, const struct rf_sq_slot *slot,
				      uint32_t mask, int len)
{
	uint16_t c = rf_be16toh(m->u.s_wqe_info.wqe_counter);

	w->v.rec = rec;
	w->wc.wqe_counter = c;
	w->v.wr_id = slot[c & mask].wr_id;
	if (len)
		w->v.byte_len = rf_be32toh(m->byte_cnt);
	return c;
}

/*
 * Eight requester records from a whole mini-CQE array of one WQE opcode:
 * straight-line code. Returns the last record's counter.
 */
RF_INLINE uint16_t rf__cq_zip_req8(union rf__wc_view *w, const struct rf_mini_cqe8 *m,
				   rf__v8u16 rec, const struct rf_sq_slot *slot,
				   uint32_t mask, int len)
{
	/*
	 * The empty asm between the records (no instruction) keeps each
	 * record's loads beside its stores: hoisted together, the eight
	 * counters and wr_ids did not fit the registers and were spilled.
	 */
#define RF__ZIP_PUT(k)								\
	rf__cq_zip_req_put(w + (k), m + (k), rec, slot, mask, len);		\
	__asm__ __volatile__("" ::: "memory")
	RF__ZIP_PUT(0);
	RF__ZIP_PUT(1);
	RF__ZIP_PUT(2);
	RF__ZIP_PUT(3);
	RF__ZIP_PUT(4);
	RF__ZIP_PUT(5);
	RF__ZIP_PUT(6);
#undef RF__ZIP_PUT
	return rf__cq_zip_req_put(w + 7, m + 7, rec, slot, mask, len);
}

/* Do the mini-CQEs m[1..7] carry WQE opcode op, as m[0] does? */
RF_INLINE int rf__cq_zip_same_op(const struct rf_mini_cqe8 *m, uint8_t op)
{
	return ((m[1].u.s_wqe_info.s_wqe_opcode ^ op) | (m[2].u.s_wqe_info.s_wqe_opcode ^ op) |
		(m[3].u.s_wqe_info.s_wqe_opcode ^ op) | (m[4].u.s_wqe_info.s_wqe_opcode ^ op) |
		(m[5].u.s_wqe_info.s_wqe_opcode ^ op) | (m[6].u.s_wqe_info.s_wqe_opcode ^ op) |
		(m[7].u.s_wqe_info.s_wqe_opcode ^ op)) == 0;
}

/*
 * Records for requester mini-CQEs i..end of the zip whose title is at
 * ci t, then the send queue retired up to the last of them. The record
 * template is made when the WQE opcode changes (for each UMR); a whole
 * array of one opcode is eight straight copies of the record code, the
 * rest is taken one by one.
 */
RF_INLINE union rf__wc_view *rf__cq_zip_req(struct rf_cq *cq, struct rf_sq *sq, uint32_t qpn,
					    uint32_t t, uint32_t i, uint32_t end,
					    union rf__wc_view *w)
{
	const struct rf_sq_slot *slot = sq->slot;
	uint32_t mask = sq->wqe_mask, rec_op = 0x100;
	uint16_t counter = 0;
	rf__v8u16 rec = { 0, 0, 0, 0, 0, 0, 0, 0 };
	int len = 0;

	do {
		const struct rf_mini_cqe8 *m = rf__cq_zip_arr(cq, t, i) +
					       (i & (RF_MINI_CQE_PER_SLOT - 1));
		/* from this array: up to its end or the last record wanted */
		uint32_t k = RF_MINI_CQE_PER_SLOT - (i & (RF_MINI_CQE_PER_SLOT - 1));

		k = end - i < k ? end - i : k;
		i += k;
		do {
			uint8_t op = m->u.s_wqe_info.s_wqe_opcode;

			if (RF_UNLIKELY(op != rec_op)) {
				rec = rf__cq_zip_req_rec(sq, qpn, op,
							 rf_be16toh(m->u.s_wqe_info.wqe_counter));
				len = rf_opcode_fetches(op);
				rec_op = op == RF_OPCODE_UMR ? 0x100 : op;
			}
			if (k == RF_MINI_CQE_PER_SLOT && rec_op == op && rf__cq_zip_same_op(m, op)) {
				counter = len ? rf__cq_zip_req8(w, m, rec, slot, mask, 1) :
						rf__cq_zip_req8(w, m, rec, slot, mask, 0);
				w += RF_MINI_CQE_PER_SLOT;
				break;
			}
			counter = len ? rf__cq_zip_req_put(w, m, rec, slot, mask, 1) :
					rf__cq_zip_req_put(w, m, rec, slot, mask, 0);
			w++;
			m++;
		} while (--k);
	} while (i < end);
	rf__sq_retire_slot(sq, counter & mask);
	return w;
}

/* 16 bytes of mini-CQEs, loaded at any alignment */
typedef uint64_t rf__v2u64_any __attribute__((vector_size(16), may_alias, aligned(1)));

/* The mini-CQE array of a zip entry e entries after its title (no wrap). */
RF_INLINE const struct rf_mini_cqe8 *rf__cq_zip_arr_at(const struct rf_cqe64 *title, size_t step,
						       uint32_t e)
{
	return (const struct rf_mini_cqe8 *)(const void *)((const uint8_t *)title + e * step);
}

/*
 * Do the n mini-CQEs (n a multiple of eight) of the zip whose title is
 * at title all carry WQE opcode op? Two mini-CQEs per 16-byte load, XORed
 * with op in both opcode bytes and ORed together; the other bytes are
 * masked off once at the end: half the instructions of a test per mini-CQE.
 */
RF_INLINE int rf__cq_zip_all_op(const struct rf_cqe64 *title, size_t step, uint32_t n, uint8_t op)
{
	const uint64_t at_op = (uint64_t)0xff << 8 * offsetof(struct rf_mini_cqe8,
							      u.s_wqe_info.s_wqe_opcode);
	const rf__v2u64_any want = { at_op / 0xff * op, at_op / 0xff * op };
	const rf__v2u64_any *a = (const rf__v2u64_any *)(const void *)rf__cq_zip_arr_at(title, step, 1);
	rf__v2u64_any diff = (a[0] ^ want) | (a[1] ^ want) | (a[2] ^ want) | (a[3] ^ want);
	uint32_t e;

	/* the first array in entry 1, the others in entries 8, 16, ... */
	for (e = RF_MINI_CQE_PER_SLOT; e < n; e += RF_MINI_CQE_PER_SLOT) {
		a = (const rf__v2u64_any *)(const void *)rf__cq_zip_arr_at(title, step, e);
		diff |= (a[0] ^ want) | (a[1] ^ want) | (a[2] ^ want) | (a[3] ^ want);
	}
	return ((diff[0] | diff[1]) & at_op) == 0;
}

/* Does WQE opcode op (< 32) fetch (rf_opcode_fetches())? One shift of a constant. */
RF_INLINE int rf__cq_zip_fetches(uint8_t op)
{
	const uint32_t fetching = 1U << RF_OPCODE_RDMA_READ | 1U << RF_OPCODE_ATOMIC_CS |
				  1U << RF_OPCODE_ATOMIC_FA | 1U << RF_OPCODE_ATOMIC_MASKED_CS |
				  1U << RF_OPCODE_ATOMIC_MASKED_FA;

	return fetching >> op & 1;
}

/*
 * The record template of requester WQE opcode op other than UMR, as
 * rf__cq_zip_req_rec() makes it: the QPN and the kind word, built in a
 * register.
 */
RF_INLINE rf__v8u16 rf__cq_zip_req_rec_plain(uint32_t qpn, uint8_t op)
{
	typedef uint64_t v2u64 __attribute__((vector_size(16)));
	v2u64 v = { qpn, rf__wc_kind_word(rf__wc_req_kind(op)) };
	rf__v8u16 rec;

	__builtin_memcpy(&rec, &v, sizeof(rec));
	return rec;
}

/*
 * The owner bytes of n entries from the title on (n a multiple of eight,
 * short of the CQ end) set to own, eight stores a turn at fixed offsets
 * (step a constant at each call).
 */
RF_INLINE void rf__cq_zip_restore(uint8_t *p, uint8_t own, uint32_t n, size_t step)
{
	uint8_t *end = p + n * step;

	do {
		p[0] = own;
		p[step] = own;
		p[2 * step] = own;
		p[3 * step] = own;
		p[4 * step] = own;
		p[5 * step] = own;
		p[6 * step] = own;
		p[7 * step] = own;
		p += 8 * step;
	} while (p != end);
}

/*
 * The usual zip, taken whole: requester completions of the QP the CQ
 * matched last, from the zip's start, in whole arrays of one WQE
 * opcode below 32 (every opcode but UMR, 0x25, which is refined from its
 * WQE). The caller checked the rest: a requester title,
 * nothing of the zip taken yet (cq->zip_done 0), n a multiple of
 * eight, and room for it before the CQ end and in the caller's array.
 * The title, the opcode and the QP are checked once; each array is then
 * eight straight copies of the record code, and the owner bytes are
 * restored at constant offsets from the title. Returns where the records
 * end, or NULL, having written nothing, when the zip is not such a
 * one (rf__cq_zip() then takes it the general way).
 */
RF_INLINE union rf__wc_view *rf__cq_zip_whole(struct rf_cq *cq, const struct rf_cqe64 *title,
					      size_t step, uint32_t n, union rf__wc_view *w)
{
	const struct rf_mini_cqe8 *m = rf__cq_zip_arr_at(title, step, 1);
	const struct rf_cq_qp *q = cq->last;
	uint8_t op = m->u.s_wqe_info.s_wqe_opcode;
	const struct rf_sq_slot *slot;
	struct rf_sq *sq = q->sq;
	const uint8_t *blk = (const uint8_t *)title, *end = blk + n * step;
	uint8_t own = (uint8_t)(RF_CQE_INVALID << 4 | (title->op_own & RF_CQE_OWNER_MASK));
	union rf__wc_view *w0 = w;
	rf__v8u16 rec;
	uint32_t mask;
	uint16_t counter;

	if (q->qpn != (rf_be32toh(title->sop_drop_qpn) & 0xffffff) || !sq ||
	    op >= 32 || !rf__cq_zip_all_op(title, step, n, op))
		return NULL;
	slot = sq->slot;
	mask = sq->wqe_mask;
	rec = rf__cq_zip_req_rec_plain(q->qpn, op);
	/* the first array sits in entry 1, the others in entries 8, 16, ... */
	if (rf__cq_zip_fetches(op)) {
		do {
			counter = rf__cq_zip_req8(w, m, rec, slot, mask, 1);
			w += RF_MINI_CQE_PER_SLOT;
			blk += RF_MINI_CQE_PER_SLOT * step;
			m = (const struct rf_mini_cqe8 *)(const void *)blk;
		} while (blk != end);
	} else {
		do {
			counter = rf__cq_zip_req8(w, m, rec, slot, mask, 0);
			w += RF_MINI_CQE_PER_SLOT;
			blk += RF_MINI_CQE_PER_SLOT * step;
			m = (const struct rf_mini_cqe8 *)(const void *)blk;
		} while (blk != end);
	}
	rf__sq_retire_slot(sq, counter & mask);
	/* the zip's entries are in the lap of its title (no wrap) */
	if (step == 64)
		rf__cq_zip_restore((uint8_t *)(uintptr_t)&title->op_own, own, n, 64);
	else
		rf__cq_zip_restore((uint8_t *)(uintptr_t)&title->op_own, own, n, 128);
	return w0 + n;
}

/*
 * Records from the zip whose title is the entry at ci t, from
 * mini-CQE cq->zip_done on, into w..wend. When the zip ends, its
 * entries are handed back (ownership restored) and *consumed is their
 * count; when wend comes first, cq->zip_done remembers where to resume and
 * *consumed is 0: the cursor stays on the title. Returns where the records
 * end.
 */
static inline union rf__wc_view *rf__cq_zip(struct rf_cq *cq, const struct rf_cqe64 *title,
					    uint32_t t, union rf__wc_view *w,
					    union rf__wc_view *wend, uint32_t *consumed)
{
	uint32_t n = rf_be32toh(title->byte_cnt);
	uint32_t sop;
	uint32_t qpn;
	uint8_t opcode = rf_cqe_opcode(title->op_own);
	uint32_t i = cq->zip_done, end;
	struct rf_cq_qp *q = cq->last;
	const struct rf_mini_cqe8 *arr;

	/* a whole zip of arrays, short of the CQ end and of wend */
	if (opcode == RF_CQE_REQ && i == 0 && n % RF_MINI_CQE_PER_SLOT == 0 &&
	    n - 1 < cq->cqe_cnt - (t & cq->cqe_mask) && n <= (size_t)(wend - w)) {
		union rf__wc_view *whole = rf__cq_zip_whole(cq, title, cq->cqe_size, n, w);

		if (RF_LIKELY(whole != NULL)) {
			*consumed = n;
			return whole;
		}
	}
	sop = rf_be32toh(title->sop_drop_qpn);
	qpn = sop & 0xffffff;
	arr = rf__cq_zip_arr(cq, t, i);
	if (RF_UNLIKELY(n - 2 > cq->cqe_cnt - 2)) {
		/* no zip is this long (or short): the title alone, loudly */
		w += rf__cq_poll_slow(cq, (struct rf_cqe64 *)(uintptr_t)title, &w->wc);
		n = 1;
		goto consumed;
	}
	if (q->qpn != qpn)
		q = rf__cq_lookup(cq, qpn);
	end = (size_t)(wend - w) < n - i ? i + (uint32_t)(wend - w) : n;

	if (opcode == RF_CQE_REQ && q && q->sq) {
		if (i != end)
			w = rf__cq_zip_req(cq, q->sq, qpn, t, i, end, w);
		i = end;
	} else if (opcode >= RF_CQE_RESP_WR_IMM && opcode <= RF_CQE_RESP_SEND_INV &&
		   q && (q->srq || q->rq)) {
		uint32_t rqpn = rf_be32toh(title->flags_rqpn);
		uint16_t first = rf_be16toh(title->wqe_counter);
		struct rf__wc_kind k = *rf__wc_resp_kind(opcode);
		uint32_t kind;
		uint8_t sl = (uint8_t)((rqpn >> 24) & 0xf);

		k.flags |= (title->op_own & RF_CQE_SE_MASK) ? RF_WC_SOLICITED : 0;
		k.flags |= ((rqpn >> 28) & 3) == RF_CQE_GRH_IN_BUF ? RF_WC_GRH : 0;
		k.flags |= q->srq ? RF_WC_SRQ : 0;
		kind = rf__wc_kind_word(&k);
		for (; i < end; i++) {
			const struct rf_mini_cqe8 *m;
			uint16_t counter;

			if ((i & (RF_MINI_CQE_PER_SLOT - 1)) == 0 && i)
				arr = rf__cq_zip_arr(cq, t, i);
			m = arr + (i & (RF_MINI_CQE_PER_SLOT - 1));
			counter = cq->zip_stridx ? rf_be16toh(m->u.rx.stride_idx) :
				  (uint16_t)(first + i);
			if (q->srq) {
				if (RF_UNLIKELY(counter >= q->srq->wqe_cnt)) {
					cq->nstale++;	/* corrupt index: do not touch the list */
					continue;
				}
				w->w.wr_id = rf_srq_free(q->srq, counter);
			} else {
				w->w.wr_id = rf_rq_retire(q->rq, counter);
			}
			w->w.byte_len = rf_be32toh(m->byte_cnt);
			w->w.imm = title->imm_inval_pkey;
			w->w.qp_num = qpn;
			w->w.src_qp = rqpn & 0xffffff;
			w->w.tail = rf__wc_tail_word(kind, counter, sl);
			w++;
		}
	} else {
		/* a QP not attached here, or a kind no zip has: dropped */
		cq->nstale += n - i;
		i = n;
	}
	if (i != n) {
		cq->zip_done = i;	/* resume here: the cursor stays on the title */
		*consumed = 0;
		return w;
	}
consumed:
	cq->zip_done = 0;
	rf__cq_restore_owner(cq, t, n);
	*consumed = n;
	return w;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CQ_ZIP_H */
