/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tm.c - hardware tag matching: the tag list of a TM SRQ, the list
 * operations software posts on it, the matching of the messages that reach
 * the SRQ's QPs and the rendezvous the device carries out.
 *
 * libmlx5 (mlx5_post_srq_ops() in providers/mlx5/qp.c) posts each
 * operation as a TAG_MATCHING WQE (opcode 0x28) on the SRQ's command QP, an
 * RC QP attached to the SRQ: a control segment, the 32-byte tag-matching
 * segment (struct mlx5_wqe_tm_seg of mlx5dv.h: opcode << 4, flags, entry
 * index, unexpected count, tag, mask) and, for an APPEND, one data segment,
 * the tagged buffer.  The operation's completion, when the segment asks
 * for one, is a CQE of opcode NO_PACKET on the SRQ's CQ with app 1
 * (tag matching), app_op APPEND, REMOVE or NOOP and, in its first bytes,
 * struct mlx5_tm_cqe: success (bit 31) and the device's unexpected count
 * (hw_phase_cnt); handle_tag_matching() of libmlx5's cq.c reads them.
 *
 * A SEND to an RC QP on the SRQ is matched on its first packet
 * (dev_tm_classify(), called by resp.c, which places the data); a matched
 * rendezvous request becomes a READ and then a FIN that the device queues
 * on that QP's send queue itself (dev_tm_rndv_start(), dev_tm_hw_done()).
 */
#include <stdlib.h>

#include <infiniband/tm_types.h>

#include "device.h"

/* struct mlx5_wqe_tm_seg, after the 16-byte control segment */
#define TM_SEG_OFF	16
#define TM_SEG_LEN	32
#define TM_DATA_OFF	(TM_SEG_OFF + TM_SEG_LEN)

/* its opcodes (the upper nibble) and flags (mlx5.h of libmlx5) */
enum { TM_OP_NOP = 0, TM_OP_APPEND = 1, TM_OP_REMOVE = 2 };
#define TM_FLAG_SW_CNT	(1u << 6)
#define TM_FLAG_CQE_REQ	(1u << 7)

/* struct mlx5_tm_cqe: the operation succeeded (MLX5_TMC_SUCCESS) */
#define TM_CQE_SUCCESS	0x80000000u

/* struct ibv_rvh: address, rkey, length */
#define TM_RVH_LEN	16

bool dev_tm_create(struct dev_srq *ds)
{
	uint32_t n = ds->srq->tm_list_size;

	ds->tm = calloc(1, sizeof(*ds->tm) + n * sizeof(ds->tm->e[0]));
	return ds->tm != NULL;
}

/* The SRQ whose list a QP's TAG_MATCHING WQEs operate on, or NULL. */
static struct dev_srq *tm_srq_of(const struct dev_qp *dq)
{
	const struct emu_qp *qp = dq->qp;

	if (qp->type != IBV_QPT_RC || qp->dc || !qp->srq || qp->srq->type != IBV_SRQT_TM ||
	    !qp->srq->dev_priv)
		return NULL;
	return dev_srq_of(qp->srq)->tm ? dev_srq_of(qp->srq) : NULL;
}

/* A NO_PACKET CQE on the SRQ's CQ: the list operation's completion. */
static void tm_op_cqe(struct dev_qp *dq, struct dev_srq *ds, uint32_t wqe, uint8_t app_op,
		      bool ok)
{
	struct dev_cqe c = {
		.opcode = RF_CQE_NO_PACKET,
		.wqe_counter = (uint16_t)wqe,
		.qpn = dq->qpn,
		.uidx = ds->srq->uidx,
		.tm_op = app_op,
	};
	uint32_t success = htobe32(ok ? TM_CQE_SUCCESS : 0);
	uint16_t cnt = htobe16(ds->tm->hw_cnt);

	memcpy(c.tm_head, &success, 4);
	memcpy(c.tm_head + 4, &cnt, 2);
	dev_cq_write(ds->srq->cq, &c);
}

/*
 * Execute the TAG_MATCHING WQE w (len bytes, as fetched) at BB counter wqe
 * of a QP's SQ: 0, or the syndrome of its error CQE.  An operation the
 * device cannot carry out (not a TM SRQ's QP, a segment its DS do not
 * cover, an unknown operation, an index outside the list, an APPEND into
 * an entry in use: a list software has lost track of) is a local QP
 * operation error; removing an entry that is not in the list (consumed
 * meanwhile, or never added) fails in the CQE alone, as libmlx5 expects
 * (IBV_WC_TM_ERR).
 */
uint8_t dev_tm_execute(struct dev_qp *dq, const uint8_t *w, uint32_t len, uint32_t wqe)
{
	struct dev_srq *ds = tm_srq_of(dq);
	const uint8_t *seg = w + TM_SEG_OFF;
	struct dev_tm_entry *x;
	struct dev_tm *tm;
	uint16_t index;
	uint8_t op, flags;
	bool ok = true;

	if (!ds || len < TM_DATA_OFF)
		return RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	/* a message lent out while none could match is settled first */
	if (ds->grant_qp)
		dev_grant_take(ds->grant_qp);
	tm = ds->tm;
	op = seg[0] >> 4;
	flags = seg[1];
	index = dev_be16(seg + 2);
	if (op > TM_OP_REMOVE || (op == TM_OP_APPEND && len < TM_DATA_OFF + 16) ||
	    (op != TM_OP_NOP && index >= ds->srq->tm_list_size))
		return RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (op == TM_OP_APPEND && tm->e[tm->next].valid)
		return RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	/* software reports the unexpected messages it has handled */
	if (flags & TM_FLAG_SW_CNT)
		tm->sw_cnt = dev_be16(seg + 6);
	switch (op) {
	case TM_OP_APPEND:
		x = &tm->e[tm->next];
		x->tag = dev_be64(seg + 16);
		x->mask = dev_be64(seg + 24);
		x->bc = dev_be32(w + TM_DATA_OFF);
		x->lkey = dev_be32(w + TM_DATA_OFF + 4);
		x->addr = dev_be64(w + TM_DATA_OFF + 8);
		x->valid = true;
		x->seq = tm->seq++;
		tm->next = index;
		break;
	case TM_OP_REMOVE:
		ok = tm->e[index].valid;
		tm->e[index].valid = false;
		break;
	}
	if (flags & TM_FLAG_CQE_REQ)
		tm_op_cqe(dq, ds, wqe, op == TM_OP_APPEND ? DEV_TM_APPEND :
				       op == TM_OP_REMOVE ? DEV_TM_REMOVE : DEV_TM_NOOP, ok);
	return 0;
}

/*
 * Could a tagged message reaching the SRQ now match an entry?  Not while
 * software has unexpected messages unreported, nor with no entry in the
 * list: then every tagged message is unexpected, and a requester may
 * deliver it directly (grant.c publish()).
 */
bool dev_tm_can_match(const struct dev_srq *ds)
{
	const struct dev_tm *tm = ds->tm;

	if (!tm || tm->hw_cnt != tm->sw_cnt)
		return false;
	for (uint32_t i = 0; i < ds->srq->tm_list_size; i++)
		if (tm->e[i].valid)
			return true;
	return false;
}

/*
 * The first packet of a SEND to an RC QP on a TM SRQ: what the device
 * makes of the tag-matching header the message starts with (struct ibv_tmh
 * of <infiniband/tm_types.h>, kept in dq->recv_tmh for the CQE).  An eager
 * message is matched against the valid entries, the earliest appended
 * whose mask lets its tag equal the message's winning, provided software
 * has handled every unexpected message so far (sw_cnt == hw_cnt: while it
 * has not, an entry could overtake a message it ought to match first, and
 * every message is unexpected); the entry is consumed and copied to
 * dq->recv_tm_buf.  A rendezvous request is matched the same way when the
 * device can take it over: one packet that holds the rendezvous header
 * (struct ibv_rvh) after the TMH, on a QP with room on its send queue for
 * the READ and the FIN (dev_tm_rndv_start()); else it is unexpected, for
 * software to READ.  A message with any other opcode, or too short to hold
 * the header, has no tag.
 */
uint8_t dev_tm_classify(struct dev_qp *dq, struct emu_srq *srq, const struct dev_pkt *p)
{
	struct dev_tm *tm = dev_srq_of(srq)->tm;
	struct dev_tm_entry *best = NULL;
	uint64_t tag;

	memset(dq->recv_tmh, 0, sizeof(dq->recv_tmh));
	if (p->dma_len < DEV_TMH_LEN || p->len < DEV_TMH_LEN)
		return DEV_TM_NO_TAG;
	memcpy(dq->recv_tmh, p->payload, DEV_TMH_LEN);
	if (p->payload[0] != IBV_TMH_EAGER && p->payload[0] != IBV_TMH_RNDV)
		return DEV_TM_NO_TAG;
	if (tm->hw_cnt != tm->sw_cnt)
		return DEV_TM_UNEXPECTED;
	if (p->payload[0] == IBV_TMH_RNDV &&
	    (!(p->flags & DPKT_FIRST) || !(p->flags & DPKT_LAST) ||
	     p->len < DEV_TMH_LEN + TM_RVH_LEN || !dq->hw ||
	     dq->ent_tail - dq->ent_head + 2 > dq->ent_mask + 1u))
		return DEV_TM_UNEXPECTED;
	tag = dev_be64(p->payload + 8);
	for (uint32_t i = 0; i < srq->tm_list_size; i++) {
		struct dev_tm_entry *x = &tm->e[i];

		if (x->valid && !((x->tag ^ tag) & x->mask) && (!best || x->seq < best->seq))
			best = x;
	}
	if (!best)
		return DEV_TM_UNEXPECTED;
	best->valid = false;
	dq->recv_tm_idx = (uint16_t)(best - tm->e);
	dq->recv_tm_buf = *best;
	return p->payload[0] == IBV_TMH_EAGER ? DEV_TM_CONSUMED_MSG : DEV_TM_CONSUMED;
}

/* One BB of WQE: the control segment and two more of 16 bytes. */
static void hw_ctrl(uint8_t *w, uint8_t opcode, uint32_t qpn)
{
	uint32_t v = htobe32(opcode);

	memcpy(w, &v, 4);
	v = htobe32(qpn << 8 | 3);
	memcpy(w + 4, &v, 4);
}

/*
 * A rendezvous request matched an entry (dev_tm_classify()): the device
 * READs the sender's buffer, as the request's struct ibv_rvh names it
 * (address, rkey, length), into the tagged buffer, on the receiving QP's
 * send queue (Documentation/tag_matching.md: the TM SRQ uses the QP's SQ
 * for its READs; the tagged buffer is checked as the READ's scatter list,
 * against the QP's PD).  False when the data cannot fit the buffer.
 */
bool dev_tm_rndv_start(struct dev_qp *dq, const struct dev_pkt *p)
{
	const struct dev_tm_entry *x = &dq->recv_tm_buf;
	const uint8_t *rvh = p->payload + DEV_TMH_LEN;
	struct dev_hw_wqe h;
	uint64_t a = htobe64(x->addr);
	uint32_t v;

	memset(&h, 0, sizeof(h));
	h.len = dev_be32(rvh + 12);
	if (h.len > x->bc)
		return false;
	hw_ctrl(h.wqe, RF_OPCODE_RDMA_READ, dq->qpn);
	memcpy(h.wqe + 16, rvh, 12);		/* remote address and rkey, big-endian */
	v = htobe32(h.len);
	memcpy(h.wqe + 32, &v, 4);
	v = htobe32(x->lkey);
	memcpy(h.wqe + 36, &v, 4);
	memcpy(h.wqe + 40, &a, 8);
	memcpy(h.tmh, dq->recv_tmh, sizeof(h.tmh));
	h.tm_idx = dq->recv_tm_idx;
	return dev_sq_push_hw(dq, &h);
}

/*
 * A WQE the device queued finished.  The rendezvous READ: the FIN goes to
 * the sender (a SEND of the request's TMH with opcode IBV_TMH_FIN, which
 * tells it its buffer is free) and the tag's second completion is written,
 * app_op EXPECTED (libmlx5: IBV_WC_TM_DATA_VALID; no header in it); a READ
 * that failed, or was flushed, completes the tag as canceled
 * (IBV_WC_TM_RNDV_INCOMPLETE).  The FIN needs nothing more.
 */
void dev_tm_hw_done(struct dev_qp *dq, struct dev_ent *e)
{
	const struct dev_hw_wqe *h = &dq->hw[e - dq->ent];
	struct emu_srq *srq = dq->qp->srq;
	struct dev_cqe c = {
		.opcode = RF_CQE_RESP_SEND,
		.qpn = dq->qpn,
		.rqpn = dq->qp->attr.dest_qp_num,
		.tm_op = e->syndrome ? DEV_TM_CANCELED : DEV_TM_EXPECTED,
		.tm_info = h->tm_idx,
		.byte_cnt = h->len,
	};
	struct dev_hw_wqe fin;
	uint32_t v = htobe32(RF_INLINE_SEG | DEV_TMH_LEN);

	if (e->op != RF_OPCODE_RDMA_READ || !srq || !srq->cq)
		return;
	if (!e->syndrome) {
		memset(&fin, 0, sizeof(fin));
		hw_ctrl(fin.wqe, RF_OPCODE_SEND, dq->qpn);
		memcpy(fin.wqe + 16, &v, 4);
		memcpy(fin.wqe + 20, h->tmh, DEV_TMH_LEN);
		fin.wqe[20] = IBV_TMH_FIN;
		dev_sq_push_hw(dq, &fin);
	}
	c.uidx = srq->uidx;
	dev_cq_write(srq->cq, &c);
}
