/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq_poll.h - the batch loop of rf_cq_poll(): runs of
 * fast-path CQEs, the rest one by one, the consumer index published once.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CQ_POLL_H
#define RDMAFAST_DETAIL_CQ_POLL_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/cq.h>
#include <rdmafast/detail/cq.h>
#include <rdmafast/detail/sq_slots.h>
#include <rdmafast/detail/cq_decode.h>
#include <rdmafast/detail/cq_zip.h>

RF_BEGIN_DECLS

/*
 * The state of one rf_cq_poll() call. The cursor, want and what the fast
 * path reads per CQE are copied out of the CQ once: the record stores may
 * alias the CQ's fields (and rf_dma_rmb() is a memory clobber), so reading
 * them through cq would reload each one per CQE. They are copied again
 * only after the slow path, which may refill them.
 */
struct rf__cq_batch {
	uint8_t  *p;		/* cq->cur */
	uint64_t  want;
	const struct rf_sq_slot *slot;
	uint32_t  mask;
	/*
	 * The slot retired last, as RF__CQ_SLOT_UNIT * slot (rf__cq_slot()),
	 * or RF__CQ_NONE. Pointer-sized: it indexes.
	 */
	size_t    done;
	rf__v8u16 rec;
	size_t    step;
	uint32_t  left;		/* cq->left */
	uint32_t  used;		/* CQEs consumed */
};

#define RF__CQ_NONE (~(size_t)0)	/* no slot: masks are below 0x8000 */

/*
 * The run's handle on a slot's side-table entry (b->done): the slot in
 * units of 16 / RF__CQ_SLOT_UNIT bytes. The 16-byte entries are out of
 * reach of an address's scale (8 at most), so some multiply is paid per
 * CQE; which form costs least depends on the compiler (make bench-test):
 * gcc turns 2 * slot, multiplied as a 32-bit value (slots are below
 * 0x8000), into an lea in place of a copy of the slot it makes anyway, and
 * the loads scale it by 8 (poll_16 18.8 instructions a CQE, 19.8 in bytes,
 * 20.9 indexing the entries); clang keeps the byte offset, slot * 16, in
 * the loads' base (20.8, 21.8 with 2 * slot).
 */
#if defined(__clang__)
#define RF__CQ_SLOT_UNIT 16
#else
#define RF__CQ_SLOT_UNIT 2
#endif
RF_INLINE const struct rf_sq_slot *rf__cq_slot(const struct rf_sq_slot *t, size_t word)
{
	return (const struct rf_sq_slot *)(const void *)((const uint8_t *)(const void *)t +
							 word * (16 / RF__CQ_SLOT_UNIT));
}

/* Its end; gcc reads it through a 4-byte index of its own (poll_1 39.4, 40.4 through the entry). */
RF_INLINE uint32_t rf__cq_slot_end(const struct rf_sq_slot *t, size_t word)
{
#if RF__CQ_SLOT_UNIT == 2
	return ((const uint32_t *)(const void *)t)[2 * word + 2];
#else
	return rf__cq_slot(t, word)->end;
#endif
}

/*
 * Retire everything up to the end of the WQE the run retired last, b->done
 * of want's send queue (rf__sq_retire_slot() through the CQ's copies of its
 * pieces), through the table the run read its wr_id from: still in a
 * register, where the CQ's copy would be loaded again.
 */
RF_INLINE void rf__cq_req_retire(struct rf_cq *cq, const struct rf__cq_batch *b)
{
	*cq->req_limit = rf__cq_slot_end(b->slot, b->done) + cq->req_bb_max;
}

RF_INLINE void rf__cq_batch_load(struct rf__cq_batch *b, const struct rf_cq *cq)
{
	b->want = cq->want;
	b->slot = cq->req_slot;
	b->mask = cq->req_mask;
	b->rec = cq->req_rec;
}

/*
 * Where a run that took every CQE up to stop leaves the cursor. gcc keeps
 * p in one register through the loop and stores it. clang, when p is live
 * at both exits (unadvanced where a CQE does not match, advanced at stop),
 * keeps it twice, before and after the step, one move more a CQE; computing
 * the cursor from the count at stop costs a shift and an add a run instead
 * (docs/benchmark-history.md, "Figures behind the header comments").
 */
#if defined(__clang__)
#define RF__CQ_RUN_CURSOR_FROM_COUNT 1
#else
#define RF__CQ_RUN_CURSOR_FROM_COUNT 0
#endif

/*
 * Write the records of fast-path CQEs from b->p on, stopping at stop (the
 * caller bounds it by the buffer end) or before the first CQE that is not
 * one. Returns where the records end. len (a constant: cq->req_len, tested
 * by the caller once per run, from the CQ rather than copied into the
 * batch: a copy took a register through the whole poll, which gcc then
 * found for the cursor's step by spilling it in every poll) says whether the records carry byte_len; when they do not,
 * nothing but the tail word is read from the CQE.
 */
RF_INLINE union rf__wc_view *rf__cq_run(struct rf__cq_batch *b, union rf__wc_view *w,
					union rf__wc_view *stop, int len)
{
	union rf__wc_view *w0 = w;
	uint8_t *p = b->p;

	do {
		struct rf_cqe64 *cqe = (struct rf_cqe64 *)p;
		/* one load: op_own comes with the fields it vouches for */
		uint64_t x = *(volatile const rf__cqe_tail_t *)&cqe->sop_drop_qpn ^ b->want;
		uint32_t counter;

		/* the counter and signature bits of want are 0: x keeps them */
		if (RF_UNLIKELY(x & RF__CQE_TAIL_MATCH)) {
			b->p = p;
			return w;
		}
		counter = rf__cqe_tail_counter(x);
		w->v.rec = b->rec;
		w->wc.wqe_counter = (uint16_t)counter;
		b->done = (counter & b->mask) * RF__CQ_SLOT_UNIT;	/* 32-bit, as above */
		w->v.wr_id = rf__cq_slot(b->slot, b->done)->wr_id;
		if (len) {
			rf_dma_rmb();	/* owner byte before byte_cnt */
			w->v.byte_len = rf_be32toh(cqe->byte_cnt);
		}
		p += b->step;
	} while (++w != stop);
	b->p = RF__CQ_RUN_CURSOR_FROM_COUNT ? b->p + (size_t)(stop - w0) * b->step : p;
	return w;
}

/*
 * Where a run from w may stop: n records, or the buffer end. (<=, not <:
 * with left >= 1 the compilers then know that a run for one record stops
 * at wend and drop its loop.)
 */
RF_INLINE union rf__wc_view *rf__cq_stop(const struct rf__cq_batch *b, union rf__wc_view *w,
					 union rf__wc_view *wend)
{
	return (size_t)(wend - w) <= b->left ? wend : w + b->left;
}

/*
 * After a run that ended early or at the buffer end: stop at a hardware
 * owned CQE, decode one that is not fast-path, wrap, run again.
 */
RF_INLINE union rf__wc_view *rf__cq_poll_more(struct rf_cq *cq, struct rf__cq_batch *b,
					      union rf__wc_view *w, union rf__wc_view *stop,
					      union rf__wc_view *wend)
{
	for (;;) {
		union rf__wc_view *w0;

		if (w != stop) {
			/* read again rather than kept from the run: one load on
			 * this path instead of a register (or spill) on the fast one */
			struct rf_cqe64 *cqe = (struct rf_cqe64 *)b->p;
			uint64_t t = *(volatile const rf__cqe_tail_t *)&cqe->sop_drop_qpn;

			if ((t ^ b->want) & RF__CQE_TAIL_OWNER)
				break;	/* hardware owned: nothing more */
			rf_dma_rmb();	/* owner byte before the CQE body */
			if (b->done != RF__CQ_NONE) {
				rf__cq_req_retire(cq, b);
				b->done = RF__CQ_NONE;
			}
			if (RF_UNLIKELY(rf_cqe_format(cqe->op_own) == RF_CQE_FORMAT_COMPRESSED)) {
				uint32_t k;

				w = rf__cq_zip(cq, cqe, cq->ci + b->used, w, wend, &k);
				if (!k)
					break;	/* wend inside the zip */
				b->used += k;
				if (k < b->left) {
					b->p += (size_t)k * b->step;
					b->left -= k;
				} else {	/* the zip wrapped the CQ end */
					b->p = cq->buf + ((size_t)(k - b->left) << cq->cqe_shift);
					b->left = cq->cqe_cnt - (k - b->left);
					b->want ^= RF__CQE_TAIL_OWNER;
					cq->want ^= RF__CQE_TAIL_OWNER;
				}
			} else {
				w += rf__cq_decode(cq, cqe, cqe->op_own, &w->wc);
				rf__cq_batch_load(b, cq);
				b->p += b->step;
				b->used++;
				b->left--;
			}
		}
		if (b->left == 0) {
			b->p = cq->buf;
			b->left = cq->cqe_cnt;
			b->want ^= RF__CQE_TAIL_OWNER;
			cq->want ^= RF__CQE_TAIL_OWNER;
		}
		/*
		 * A signature error record ends the poll, its details kept in
		 * the CQ (rf__cq_sig_err()): tested here, in memory, rather
		 * than after the decode, where a value kept across it took
		 * gcc a register that rf_cq_poll()'s callers' loops then
		 * spilled (2 instructions a poll_1, make bench).
		 */
		if (RF_UNLIKELY(cq->sig_err_stop)) {
			cq->sig_err_stop = 0;
			break;
		}
		if (w == wend)
			break;
		stop = rf__cq_stop(b, w, wend);
		w0 = w;
		w = cq->req_len ? rf__cq_run(b, w, stop, 1) : rf__cq_run(b, w, stop, 0);
		b->used += (uint32_t)(w - w0);
		b->left -= (uint32_t)(w - w0);
	}
	return w;
}

/*
 * Retire the last fast-path slot and publish the cursor and the consumer
 * index after consuming used CQEs.
 */
RF_INLINE void rf__cq_poll_end(struct rf_cq *cq, const struct rf__cq_batch *b, uint32_t used)
{
	uint32_t ci = cq->ci + used;

	if (b->done != RF__CQ_NONE)
		rf__cq_req_retire(cq, b);
	cq->ci = ci;
	cq->cur = b->p;
	cq->left = b->left;
	rf_cq_update_ci(cq);
}

/* rf_cq_poll() (cq_poll.h tells how), without the checked build's checks. */
RF_INLINE int rf__cq_poll(struct rf_cq *cq, struct rf_wc *wc, int n)
{
	struct rf__cq_batch b;
	union rf__wc_view *w = (union rf__wc_view *)wc, *wend, *stop;

	if (RF_UNLIKELY(n <= 0))
		return 0;
	b.p = cq->cur;
	b.step = cq->cqe_size;
	b.left = cq->left;
	b.done = RF__CQ_NONE;
	rf__cq_batch_load(&b, cq);
	if (b.left == 0)
		__builtin_unreachable();	/* rf_cq.left; lets n = 1 fold */
	wend = w + n;
	/*
	 * The usual call: n fast-path CQEs short of the buffer end. It ends
	 * on its own copy of the bookkeeping, where the count is n and a slot
	 * to retire is known to exist.
	 */
	stop = rf__cq_stop(&b, w, wend);
	w = cq->req_len ? rf__cq_run(&b, w, stop, 1) : rf__cq_run(&b, w, stop, 0);
	/* left - n, not left - (w - wc): n is usually a constant, w - wc a register */
	if (RF_LIKELY(w == wend && b.left != (uint32_t)n)) {
		b.left -= (uint32_t)n;
		rf__cq_poll_end(cq, &b, (uint32_t)n);
		return n;
	}
	b.left -= (uint32_t)(w - (union rf__wc_view *)wc);
	b.used = (uint32_t)(w - (union rf__wc_view *)wc);
	w = rf__cq_poll_more(cq, &b, w, stop, wend);
	if (!b.used && w == (union rf__wc_view *)wc)
		return 0;	/* (a zip resumed and cut again consumes no entry) */
	rf__cq_poll_end(cq, &b, b.used);
	return (int)(w - (union rf__wc_view *)wc);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CQ_POLL_H */
