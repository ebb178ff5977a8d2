/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq_poll.h - completions decoded: struct rf_wc records, and the
 * WQEs they complete retired.
 *
 *	n = rf_cq_poll(cq, wc, max);   up to max records; retires SQ/RQ/SRQ
 *	                               slots; updates the CI once
 *
 * rf_cq_poll() maps a CQE to its queue by QPN through a small table of
 * attached QPs (rf_cq_attach()) with the last match cached, which makes the
 * usual one or two QPs per CQ a single compare. Successful requester CQEs
 * have a faster path still: one compare of the CQE's last 8 bytes (op_own:
 * owned, requester, normal format; sop_drop_qpn: the last requester CQE's
 * QP and WQE opcode) replaces the ownership test, the QPN lookup and the
 * opcode decoding (struct rf_cq, want). Requester CQEs retire SQ
 * basic blocks through the SQ's side table (one CQE retires every earlier
 * unsignaled WQE, rdmafast/sq.h); responder CQEs return the RQ slot's
 * wr_id or put the SRQ WQE back on the free list. CQEs for QPNs that are
 * not attached (a destroyed QP: libmlx5 stops cleaning a CQ once
 * mlx5dv_init_obj() made it DV-owned) are consumed and counted in
 * cq->nstale, never returned.
 *
 * Scatter-to-CQE: small receives (<= 32 bytes with 64-byte CQEs, <= 64
 * with 128-byte ones) and, on QPs created with sq_sig_all or
 * MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE, small READ/atomic responses may
 * arrive inside the CQE instead of the buffer. rf_cq_poll() copies them to
 * where the WQE pointed (slow path, only for such CQEs). rf_cq_peek() users
 * must do it themselves (rf_cqe_format()). Buffers the CPU cannot write
 * (GPU memory) need scatter-to-CQE disabled at QP creation: rdmafast's
 * rf_qp_create_ibv() does that by default (rdmafast/verbs.h).
 *
 * Compressed CQEs (a CQ created with MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
 * rf_cq_create_zip_ibv()): a zip's title is decoded once, then each
 * mini-CQE becomes a record in a straight loop, requester (WQE counter and
 * opcode from the mini-CQE) or responder (byte count from it, the WQE from
 * the title's counter plus its place, or from stride_idx in CSUM_STRIDX),
 * and the entries the zip covered are handed back with their
 * ownership restored. A zip larger than n is resumed by the next
 * call. rf_cq_decode() takes single CQEs only: a title there is an
 * RF_WC_GENERAL_ERR record; peek users read zips with
 * rf_cq_zip_len(), rf_cq_zip_mini() and rf_cq_zip_advance().
 *
 * Not supported: CQ resize, tag matching.
 */
#ifndef RDMAFAST_CQ_POLL_H
#define RDMAFAST_CQ_POLL_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/cq.h>
#include <rdmafast/detail/cq_decode.h>
#include <rdmafast/detail/cq_poll.h>
#ifdef RF_CHECKED
#include <rdmafast/detail/checked.h>
#endif

RF_BEGIN_DECLS

/*
 * rf_cq_decode - turn the CQE that rf_cq_peek() returned into *wc and
 * retire its WQE(s). Returns 1, or 0 when the CQE carried no work
 * completion (a stale QPN); either way the caller then advances past
 * it. A signature error CQE is an RF_WC_SIG_ERR record (cq_sig.h).
 */
RF_INLINE int rf_cq_decode(struct rf_cq *cq, struct rf_cqe64 *cqe, struct rf_wc *wc)
{
	int got = rf__cq_decode(cq, cqe, cqe->op_own, wc);

	cq->sig_err_stop = 0;	/* one CQE: no batch to end */
	return got;
}

/*
 * rf_cq_poll - decode up to n completions into wc[0..), retire the WQEs
 * they complete, and update the CQ's consumer index once. Returns how many
 * records were written (0 when the CQ is empty). Error CQEs are records
 * like any other (wc->status != RF_WC_SUCCESS). A signature error CQE is
 * an RF_WC_SIG_ERR record, the last of the call (rdmafast/cq_sig.h).
 *
 * The fast path is a successful requester CQE in the normal format whose
 * sop_drop_qpn word equals the cached one: its tail word, counter and
 * signature masked off, equals cq->want, so one 8-byte load, an XOR and a
 * test establish ownership, the kind of CQE, the QP and the WQE opcode,
 * and the counter comes from the same register. Such CQEs are taken in
 * runs bounded once by the buffer end and n (rf__cq_run()); unless the
 * WQE opcode is a READ or an atomic, nothing else is read from them. The
 * send queue's consumer index is written once, after the loop, for the
 * last CQE retired this way (every earlier WQE is retired with it).
 * Everything else goes through rf_cq_decode().
 */
RF_INLINE int rf_cq_poll(struct rf_cq *cq, struct rf_wc *wc, int n)
{
#ifdef RF_CHECKED
	/* the checked build's: the same poll between two checks */
	int k;

	rf__chk_cq_poll_begin(cq);
	k = rf__cq_poll(cq, wc, n);
	if (!k)
		rf__chk_cq_idle(cq);
	return k;
#else
	return rf__cq_poll(cq, wc, n);
#endif
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_POLL_H */
