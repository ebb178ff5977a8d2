/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/cq_zip.h - compressed CQEs in rf_cq_poll(): a session's
 * title decoded once, then one record per mini-CQE in a straight loop.
 *
 * The layout (Linux include/linux/mlx5/device.h, struct mlx5_mini_cqe8;
 * the decompression of drivers/net/ethernet/mellanox/mlx5/core/en_rx.c):
 * a title CQE in format 3 whose byte_cnt counts the session's completions
 * and which carries what they share; the session takes that many entries
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

/* The mini-CQE array holding mini-CQE i of the session whose title is at t. */
RF_INLINE const struct rf_mini_cqe8 *rf__cq_zip_arr(const struct rf_cq *cq, uint32_t t,
						    uint32_t i)
{
	uint32_t slot = i < RF_MINI_CQE_PER_SLOT ? 1 : i & ~(uint32_t)(RF_MINI_CQE_PER_SLOT - 1);

	return (const struct rf_mini_cqe8 *)rf_cq_cqe(cq, t + slot);
}

/* A requester mini-CQE's record kind: the WQE opcode's, UMR refined. */
RF_INLINE uint32_t rf__cq_zip_req_kind(const struct rf_sq *sq, uint8_t wqe_opcode,
				       uint16_t counter)
{
	struct rf__wc_kind k = *rf__wc_req_kind(wqe_opcode);

	if (RF_UNLIKELY(wqe_opcode == RF_OPCODE_UMR)) {
		const uint8_t *w = (const uint8_t *)rf_sq_wqe(sq, counter + 1U);

		k.opcode = w[16 + 48 - RF_SEND_WQE_BB] & RF_MKEY_CONTEXT_FREE ?
			   RF_WC_LOCAL_INV : RF_WC_BIND_MW;
	}
	return rf__wc_kind_word(&k);
}

/*
 * Records from the session whose title is the entry at ci t, from
 * mini-CQE cq->zip_done on, into w..wend. When the session ends, its
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
	uint32_t sop = rf_be32toh(title->sop_drop_qpn);
	uint32_t qpn = sop & 0xffffff;
	uint8_t opcode = rf_cqe_opcode(title->op_own);
	uint32_t i = cq->zip_done, end;
	struct rf_cq_qp *q = cq->last;
	const struct rf_mini_cqe8 *arr = rf__cq_zip_arr(cq, t, i);

	if (RF_UNLIKELY(n - 2 > cq->cqe_cnt - 2)) {
		/* no session is this long (or short): the title alone, loudly */
		w += rf__cq_poll_slow(cq, (struct rf_cqe64 *)(uintptr_t)title, &w->wc);
		n = 1;
		goto consumed;
	}
	if (q->qpn != qpn)
		q = rf__cq_lookup(cq, qpn);
	end = (size_t)(wend - w) < n - i ? i + (uint32_t)(wend - w) : n;

	if (opcode == RF_CQE_REQ && q && q->sq) {
		struct rf_sq *sq = q->sq;
		const struct rf__sq_wr_id *wr_id = sq->wr_id;
		uint32_t mask = sq->wqe_mask, counter = 0;
		/* the kind of the last WQE opcode seen: a session mostly has one */
		uint32_t last_op = 0x100, kind = 0;

		for (; i < end; i++, w++) {
			const struct rf_mini_cqe8 *m;
			uint32_t op;

			if ((i & (RF_MINI_CQE_PER_SLOT - 1)) == 0 && i)
				arr = rf__cq_zip_arr(cq, t, i);
			m = arr + (i & (RF_MINI_CQE_PER_SLOT - 1));
			counter = rf_be16toh(m->u.s_wqe_info.wqe_counter);
			op = m->u.s_wqe_info.s_wqe_opcode;
			if (RF_UNLIKELY(op != last_op || op == RF_OPCODE_UMR)) {
				kind = rf__cq_zip_req_kind(sq, (uint8_t)op, (uint16_t)counter);
				last_op = op;
			}
			w->w.wr_id = wr_id[counter & mask].v;
			w->w.byte_len = rf_be32toh(m->byte_cnt);
			w->w.imm = 0;
			w->w.qp_num = qpn;
			w->w.src_qp = 0;
			w->w.tail = rf__wc_tail_word(kind, (uint16_t)counter, 0);
		}
		if (end != cq->zip_done)
			rf__sq_retire_slot(sq, counter & mask);
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
		/* a QP not attached here, or a kind no session has: dropped */
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
