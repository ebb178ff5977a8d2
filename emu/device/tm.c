/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tm.c - hardware tag matching: the tag list of a TM SRQ and the list
 * operations software posts on it.
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
 */
#include <stdlib.h>

#include "device.h"

/* struct mlx5_wqe_tm_seg, after the 16-byte control segment */
#define TM_SEG_OFF	16
#define TM_SEG_LEN	32
#define TM_DATA_OFF	(TM_SEG_OFF + TM_SEG_LEN)

/* its opcodes (the upper nibble) and flags (mlx5.h of libmlx5) */
enum { TM_OP_NOP = 0, TM_OP_APPEND = 1, TM_OP_REMOVE = 2 };
#define TM_FLAG_SW_CNT	(1u << 6)
#define TM_FLAG_CQE_REQ	(1u << 7)

/* the CQE's app and app_op (providers/mlx5/cq.c) */
#define TM_CQE_SUCCESS	0x80000000u

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
