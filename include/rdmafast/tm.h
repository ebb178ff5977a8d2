/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/tm.h - hardware tag matching on a TM SRQ (ibv_create_srq_ex()
 * with IBV_SRQT_TM): the tag list operations, and their completions and
 * the messages' decoded.
 *
 *	h = rf_tm_post_add(tm, tag, mask, &sge, recv_wr_id, flags, 0, wr_id);
 *	rf_tm_post_del(tm, h, flags, 0, wr_id);
 *	rf_tm_ring(tm);
 *	rf_srq_post_one(tm->srq, ...);	unexpected and untagged messages
 *	n = rf_tm_poll(tm, cq, &twc);	the SRQ's CQ
 *
 * The device matches the first packet of a SEND that starts with a
 * tag-matching header (struct ibv_tmh) against a list of tagged buffers.
 * Software edits the list with TAG_MATCHING WQEs on the SRQ's command QP,
 * one basic block each (ctrl, struct rf_wqe_tm_seg and, for an add, the
 * buffer's data segment), as libmlx5's ibv_post_srq_ops() does, and keeps
 * the list's free entries itself: an add fills the entry the device holds
 * as next and names the following free one in the segment, so rdmafast's
 * free list must walk as libmlx5's does (rf_tm_init() starts it as a
 * fresh SRQ's). An entry returns to the free list when its last expected
 * completion is polled: the add's or remove's (if signaled) and the
 * message's.
 *
 * Completions come on the SRQ's CQ, which rf_tm_poll() reads: struct
 * rf_tm_wc is struct rf_wc (unchanged, 32 bytes: the common poll's
 * stores stay one cache line per two records) and the header's tag and
 * application context, which do not fit it. CQEs that are not tag
 * matching (requester CQEs of QPs sharing the CQ, errors) go through
 * rf_cq_decode(). A CQ with TM completions must not be read by
 * rf_cq_poll(), which would take a matched message for an SRQ receive.
 *
 * Sync: the device counts the unexpected messages it delivered; software
 * reports how many it has handled (RF_TM_SYNC with unexp_cnt) and the
 * device matches only while the two agree. RF_TM_WC_SYNC_REQ in a
 * completion says they differ (libmlx5: IBV_WC_TM_SYNC_REQ).
 *
 * Threading: one thread posts and polls, as for an SRQ (srq.h).
 */
#ifndef RDMAFAST_TM_H
#define RDMAFAST_TM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/hw/tm.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>
#include <rdmafast/cq_poll.h>
#include <rdmafast/detail/tm.h>

RF_BEGIN_DECLS

/* Flags of a list operation: the segment's flag bits, and the ring. */
enum {
	RF_TM_SIGNALED = RF_TM_SEG_CQE_REQ,	/* a completion (IBV_OPS_SIGNALED) */
	RF_TM_SYNC     = RF_TM_SEG_SW_CNT,	/* report unexp_cnt (IBV_OPS_TM_SYNC) */
	RF_TM_RING     = 0x20000,		/* RF_SEND_RING: ring after it */
	RF_TM_MAX_SYNC_DIFF = 0x3fff,		/* unexpected unreported before SYNC_REQ */
};

/* The end of the free list; the entry of no entry (a sync's). */
#define RF_TM_NIL 0xffffffffU

/* rf_tm_wc.tm_flags, as ibv_wc_read_wc_flags() reports them for TM CQEs. */
enum {
	RF_TM_WC_SYNC_REQ   = 1 << 0,	/* report the unexpected count (RF_TM_SYNC) */
	RF_TM_WC_MATCH      = 1 << 1,	/* the message matched an entry */
	RF_TM_WC_DATA_VALID = 1 << 2,	/* its data is in the entry's buffer */
};

/* rf_tm_decode() moves the CQE's SE bit into place with one shift. */
RF_STATIC_ASSERT(RF_WC_SOLICITED == RF_CQE_SE_MASK << 2, "SE bit to RF_WC_SOLICITED");

/* One entry of the tag list as software tracks it. */
struct rf_tm_tag {
	uint64_t wr_id;		/* the add's recv_wr_id: its messages' completions */
	uint64_t addr;		/* the tagged buffer (scatter-to-CQE lands here) */
	uint32_t size;
	uint32_t next;		/* free list link; RF_TM_NIL */
	uint32_t phase_cnt;	/* unexpected count reported when it was added */
	int32_t  expect;	/* completions to come; 0 when free */
};

struct rf_tm {
	struct rf_sq      sq;	/* the command QP's send queue */
	struct rf_srq    *srq;	/* the SRQ: unexpected and untagged messages */
	struct rf_tm_tag *tag;	/* [ntags + 1] */
	struct rf__tm_op *op;	/* [sq.wqe_cnt]: the signaled operations to complete */
	uint32_t head;		/* first free entry (written) */
	uint32_t tail;		/* last free entry (written) */
	uint32_t op_head;	/* next op to complete (written) */
	uint32_t op_tail;	/* next op to record (written) */
	uint32_t unexp_in;	/* unexpected messages polled (written) */
	uint32_t unexp_out;	/* the count last reported (written) */
	uint32_t ntags;		/* tm_cap.max_num_tags */
};

struct rf_tm_attr {
	struct rf_sq_attr sq;	/* the command QP's (kind RF_QP_RC, sig_all 0) */
	struct rf_srq    *srq;
	uint32_t          ntags;	/* tm_cap.max_num_tags of the SRQ */
	struct rf_tm_tag *tag;	/* ntags + 1 entries, caller-allocated */
	struct rf__tm_op *op;	/* sq.wqe_cnt entries, caller-allocated (rf_tm_op_size) */
};

/* rf_tm_op_size - bytes of the operation table of a command queue of wqe_cnt BBs. */
RF_INLINE size_t rf_tm_op_size(uint32_t wqe_cnt)
{
	return (size_t)wqe_cnt * sizeof(struct rf__tm_op);
}

/* rf_tm_wc - a completion of a CQ with TM SRQ completions. */
struct rf_tm_wc {
	struct rf_wc wc;	/* opcode RF_WC_TM_*, status RF_WC_TM_* among others */
	uint64_t tag;		/* the message's tag (struct ibv_tmh), host order */
	uint32_t app_ctx;	/* its application context, host order */
	uint8_t  tm_flags;	/* RF_TM_WC_* */
	uint8_t  rsvd[3];
};

/*
 * rf_tm_init - set up tm over a fresh TM SRQ's command QP and its list of
 * ntags entries (entry i links to i + 1, the last one is the list's
 * end). Returns 0 or -EINVAL. Cold.
 */
static inline RF_COLD int rf_tm_init(struct rf_tm *tm, const struct rf_tm_attr *a)
{
	uint32_t i;
	int ret;

	if (!a->srq || !a->tag || !a->op || !a->ntags || a->ntags >= 0xffff ||
	    a->sq.kind != RF_QP_RC || a->sq.sig_all)
		return -EINVAL;
	ret = rf_sq_init(&tm->sq, &a->sq);
	if (ret)
		return ret;
	tm->srq = a->srq;
	tm->tag = a->tag;
	tm->op = a->op;
	for (i = 0; i <= a->ntags; i++) {
		__builtin_memset(&a->tag[i], 0, sizeof(a->tag[i]));
		a->tag[i].next = i < a->ntags ? i + 1 : RF_TM_NIL;
	}
	tm->head = 0;
	tm->tail = a->ntags;
	tm->op_head = 0;
	tm->op_tail = 0;
	tm->unexp_in = 0;
	tm->unexp_out = 0;
	tm->ntags = a->ntags;
	return 0;
}

/*
 * rf_tm_post_add - add a tagged buffer (sg, NULL or of length 0: none) for
 * messages whose tag equals tag where mask has ones. Its messages'
 * completions carry recv_wr_id; the add's own, if RF_TM_SIGNALED, wr_id.
 * RF_TM_SYNC reports unexp_cnt. Returns the entry (for rf_tm_post_del(),
 * as ibv_ops_wr.tm.handle), -ENOSPC when the queue or the list is full
 * (nothing written). The device sees it at rf_tm_ring() (or RF_TM_RING).
 */
RF_INLINE int rf_tm_post_add(struct rf_tm *tm, uint64_t tag, uint64_t mask,
			     const struct rf_sge *sg, uint64_t recv_wr_id, uint32_t flags,
			     uint16_t unexp_cnt, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_data_seg *d;
	struct rf_tm_tag *t = &tm->tag[tm->head];
	uint32_t h = tm->head;

	if (RF_UNLIKELY(t->next == RF_TM_NIL))
		return -ENOSPC;
	c = rf_sq_reserve(&tm->sq, 1);
	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf__tm_set_seg((struct rf_wqe_tm_seg *)(c + 1), RF_TM_OPCODE_APPEND, flags, t->next,
		       unexp_cnt, tag, mask);
	d = (struct rf_wqe_data_seg *)((uint8_t *)c + 48);
	if (sg && sg->length) {
		rf_set_data_seg(d, sg->length, sg->lkey, sg->addr);
		t->addr = sg->addr;
		t->size = sg->length;
	} else {
		/* no buffer: data for it fails (LOC_LEN_ERR), never lands */
		rf_set_recv_terminator(d);
		t->addr = 0;
		t->size = 0;
	}
	tm->head = t->next;
	t->next = RF_TM_NIL;
	t->wr_id = recv_wr_id;
	if (flags & RF_TM_SYNC)
		tm->unexp_out = unexp_cnt;
	t->phase_cnt = tm->unexp_out & 0xffff;
	t->expect = 1;
	if (flags & RF_TM_SIGNALED) {
		rf__tm_op_push(tm->op, &tm->op_tail, tm->sq.wqe_mask, wr_id, h, tm->sq.pi);
		t->expect = 2;
	}
	rf_sq_commit(&tm->sq, c, RF_OPCODE_TAG_MATCHING, 0, 4, flags & RF_TM_RING, 0, wr_id);
	return (int)h;
}

/* Put entry h back on the free list when no completion is to come for it. */
RF_INLINE void rf_tm_release(struct rf_tm *tm, uint32_t h)
{
	if (!--tm->tag[h].expect) {
		tm->tag[h].next = RF_TM_NIL;
		tm->tag[tm->tail].next = h;
		tm->tail = h;
	}
}

/*
 * rf_tm_post_del - remove entry h from the list (an entry whose message
 * arrived meanwhile is not removed: the completion says RF_WC_TM_ERR).
 * Returns 0, -ENOSPC when the queue is full, -EINVAL when h is no entry
 * in the device's list (nothing written).
 */
RF_INLINE int rf_tm_post_del(struct rf_tm *tm, uint32_t h, uint32_t flags,
			     uint16_t unexp_cnt, uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c;

	if (RF_UNLIKELY(h >= tm->ntags + 1 || tm->tag[h].expect <= 0))
		return -EINVAL;
	c = rf_sq_reserve(&tm->sq, 1);
	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf__tm_set_seg((struct rf_wqe_tm_seg *)(c + 1), RF_TM_OPCODE_REMOVE, flags, h,
		       unexp_cnt, 0, 0);
	if (flags & RF_TM_SYNC)
		tm->unexp_out = unexp_cnt;
	if (flags & RF_TM_SIGNALED) {
		rf__tm_op_push(tm->op, &tm->op_tail, tm->sq.wqe_mask, wr_id, h, tm->sq.pi);
		tm->tag[h].expect++;
	} else {
		rf_tm_release(tm, h);
	}
	rf_sq_commit(&tm->sq, c, RF_OPCODE_TAG_MATCHING, 0, 3, flags & RF_TM_RING, 0, wr_id);
	return 0;
}

/*
 * rf_tm_post_sync - no list change: report unexp_cnt (with RF_TM_SYNC)
 * and, signaled, learn the device's count. Returns 0 or -ENOSPC.
 */
RF_INLINE int rf_tm_post_sync(struct rf_tm *tm, uint32_t flags, uint16_t unexp_cnt,
			      uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c = rf_sq_reserve(&tm->sq, 1);

	if (RF_UNLIKELY(!c))
		return -ENOSPC;
	rf__tm_set_seg((struct rf_wqe_tm_seg *)(c + 1), RF_TM_OPCODE_NOP, flags, 0,
		       unexp_cnt, 0, 0);
	if (flags & RF_TM_SYNC)
		tm->unexp_out = unexp_cnt;
	if (flags & RF_TM_SIGNALED)
		rf__tm_op_push(tm->op, &tm->op_tail, tm->sq.wqe_mask, wr_id, RF_TM_NIL,
			       tm->sq.pi);
	rf_sq_commit(&tm->sq, c, RF_OPCODE_TAG_MATCHING, 0, 3, flags & RF_TM_RING, 0, wr_id);
	return 0;
}

/* rf_tm_ring - hand the device every list operation posted so far. */
RF_INLINE void rf_tm_ring(struct rf_tm *tm)
{
	rf_sq_ring(&tm->sq);
}

/*
 * rf_tm_decode - one tag-matching CQE of cq (app RF_CQE_APP_TM) into wc,
 * as libmlx5's handle_tag_matching() and the ibv_wc_read_*() of an
 * extended CQ read it: wr_id from the entry (a matched message), the
 * operation (a list completion) or the SRQ WQE (unexpected, untagged),
 * entries and WQEs retired. Returns 1.
 */
RF_INLINE int rf_tm_decode(struct rf_tm *tm, const struct rf_cq *cq,
			   const struct rf_cqe64 *cqe, struct rf_tm_wc *wc)
{
	const struct rf__tm_kind *k = rf__tm_kind(cqe->app_op);
	uint32_t opcode = rf_cqe_opcode(cqe->op_own);
	uint32_t rqpn = rf_be32toh(cqe->flags_rqpn);
	uint32_t len = rf_be32toh(cqe->byte_cnt);
	uint32_t fmt = rf_cqe_format(cqe->op_own);
	uint16_t counter = rf_be16toh(cqe->wqe_counter);
	uint8_t status = RF_WC_SUCCESS, flags = 0, tmf = k->tm_flags;
	uint64_t wr_id = 0, tag;
	uint32_t h, ctx;

	switch (cqe->app_op) {
	case RF_CQE_TM_CONSUMED_MSG_SW_RNDV:
	case RF_CQE_TM_CONSUMED_SW_RNDV:
	case RF_CQE_TM_MSG_COMPLETION_CANCELED:
		status = RF_WC_TM_RNDV_INCOMPLETE;
		/* fall through */
	case RF_CQE_TM_CONSUMED_MSG:
	case RF_CQE_TM_CONSUMED:
	case RF_CQE_TM_EXPECTED:
		h = rf_be16toh(cqe->app_info);
		if (h > tm->ntags || tm->tag[h].expect <= 0) {
			status = RF_WC_GENERAL_ERR;	/* an entry never added */
			break;
		}
		wr_id = tm->tag[h].wr_id;
		if (k->complete)
			rf_tm_release(tm, h);
		/* the data in the 64 bytes before the CQE64 (128-byte CQEs) */
		if (fmt == RF_CQE_FORMAT_SCATTER_64) {
			if (len > tm->tag[h].size || cq->cqe_size != 128)
				status = RF_WC_LOC_LEN_ERR;
			else
				rf__copy_inline((uint8_t *)(uintptr_t)tm->tag[h].addr,
						(const uint8_t *)cqe - 64, len);
		}
		break;
	case RF_CQE_TM_REMOVE:
		if (!(rf_be32toh(((const struct rf_cqe_tm_op *)cqe)->success) &
		      RF_CQE_TM_OP_SUCCESS))
			status = RF_WC_TM_ERR;
		/* fall through */
	case RF_CQE_TM_APPEND:
	case RF_CQE_TM_NOOP: {
		const struct rf__tm_op *o;

		if (tm->op_head == tm->op_tail) {
			status = RF_WC_GENERAL_ERR;	/* no operation asked for it */
			break;
		}
		o = &tm->op[tm->op_head++ & tm->sq.wqe_mask];
		if (o->tag != RF_TM_NIL) {
			uint16_t hw = rf_be16toh(((const struct rf_cqe_tm_op *)cqe)->hw_phase_cnt);

			rf_tm_release(tm, o->tag);
			/* removed: the message's completion will not come */
			if (cqe->app_op == RF_CQE_TM_REMOVE && status == RF_WC_SUCCESS)
				rf_tm_release(tm, o->tag);
			if (hw != tm->tag[o->tag].phase_cnt)
				tmf |= RF_TM_WC_SYNC_REQ;
		}
		(void)rf_sq_retire(&tm->sq, (uint16_t)o->pi);
		wr_id = o->wr_id;
		break;
	}
	case RF_CQE_TM_UNEXPECTED:
		if (++tm->unexp_in - tm->unexp_out > RF_TM_MAX_SYNC_DIFF)
			tmf |= RF_TM_WC_SYNC_REQ;
		/* fall through */
	case RF_CQE_TM_NO_TAG:
		if (counter >= tm->srq->wqe_cnt) {
			status = RF_WC_GENERAL_ERR;	/* corrupt: keep the list */
			break;
		}
		if (fmt == RF_CQE_FORMAT_SCATTER_32 || fmt == RF_CQE_FORMAT_SCATTER_64) {
			uint32_t n = len;
			const uint8_t *src = rf__cq_scat_src(cq, cqe, fmt, &n);

			rf__scatter((const struct rf_wqe_data_seg *)
				    (rf_srq_wqe(tm->srq, counter) + 1),
				    tm->srq->max_sge, src, n);
			flags |= RF_WC_SCATTERED;
		}
		wr_id = rf_srq_free(tm->srq, counter);
		flags |= RF_WC_SRQ;
		break;
	default:
		status = RF_WC_GENERAL_ERR;
		break;
	}
	/* without branches: the responder's table (0 for NO_PACKET), SE moved into place */
	flags |= rf__wc_resp_kind(opcode)->flags & (RF_WC_WITH_IMM | RF_WC_WITH_INV);
	flags |= ((rqpn >> 28) & 3) == RF_CQE_GRH_IN_BUF ? RF_WC_GRH : 0;
	flags |= (uint8_t)((cqe->op_own & RF_CQE_SE_MASK) << 2);
	__builtin_memcpy(&ctx, (const uint8_t *)cqe + 4, 4);
	__builtin_memcpy(&tag, (const uint8_t *)cqe + 8, 8);
	wc->wc.wr_id = wr_id;
	wc->wc.byte_len = len;
	wc->wc.imm = cqe->imm_inval_pkey;
	wc->wc.qp_num = rf_be32toh(cqe->sop_drop_qpn) & 0xffffff;
	wc->wc.src_qp = rqpn & 0xffffff;
	wc->wc.status = status;
	wc->wc.opcode = opcode == RF_CQE_NO_PACKET ? k->nopkt_opcode :
			opcode == RF_CQE_RESP_WR_IMM ? (uint8_t)RF_WC_RECV_RDMA_WITH_IMM :
			k->recv_opcode;
	wc->wc.flags = flags;
	wc->wc.vendor_err = 0;
	wc->wc.wqe_counter = counter;
	wc->wc.sl = (uint8_t)((rqpn >> 24) & 0xf);
	wc->wc.rsvd = 0;
	wc->tag = rf_be64toh((RF_FORCE __be64)tag);
	wc->app_ctx = rf_be32toh((RF_FORCE __be32)ctx);
	wc->tm_flags = tmf;
	wc->rsvd[0] = wc->rsvd[1] = wc->rsvd[2] = 0;
	return 1;
}

/*
 * rf_tm_poll - the next completion of cq, the TM SRQ's CQ, into *wc: a
 * tag-matching CQE by rf_tm_decode(), any other by rf_cq_decode() (tag,
 * app_ctx and tm_flags 0). Returns 1, or 0 when the CQ holds none.
 * Updates the consumer index after each.
 */
RF_INLINE int rf_tm_poll(struct rf_tm *tm, struct rf_cq *cq, struct rf_tm_wc *wc)
{
	struct rf_cqe64 *cqe;
	int got = 0;

	while (!got && (cqe = rf_cq_peek(cq)) != NULL) {
		uint8_t op = rf_cqe_opcode(cqe->op_own);

		/* the others (errors, requesters sharing the CQ) out of the way */
		if (RF_LIKELY(cqe->app == RF_CQE_APP_TM && !rf_cqe_is_err_or_zipped(cqe->op_own) &&
			      op != RF_CQE_REQ)) {
			got = rf_tm_decode(tm, cq, cqe, wc);
		} else {
			got = rf_cq_decode(cq, cqe, &wc->wc);
			wc->tag = 0;
			wc->app_ctx = 0;
			wc->tm_flags = 0;
			wc->rsvd[0] = wc->rsvd[1] = wc->rsvd[2] = 0;
		}
		rf_cq_advance(cq, 1);
		rf_cq_update_ci(cq);
	}
	return got;
}

RF_END_DECLS

#endif /* RDMAFAST_TM_H */
