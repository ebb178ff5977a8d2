/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cqe_zip.c - compressed CQEs: on a CQ created with cqe_comp_en, CQEs of
 * one kind that are ready together are written as one session.
 *
 * What a ConnectX writes (the layout the consumers decode: Linux
 * include/linux/mlx5/device.h struct mlx5_mini_cqe8 and the decompression
 * in drivers/net/ethernet/mellanox/mlx5/core/en_rx.c; UCX's
 * uct_ib_mlx5_iface_cqe_unzip(); DPDK's drivers/net/mlx5/mlx5_rx.c):
 *
 *   pi        the title: the first CQE of the session as it would be
 *             written alone, but with format 3 in op_own and the number of
 *             CQEs in the session in byte_cnt;
 *   pi + 1    mini-CQEs 0..7, eight bytes each, over the whole CQE64
 *             (op_own included: this entry has no owner byte);
 *   pi + 8k   mini-CQEs 8k..8k+7, k >= 1;
 *   the rest  of the n entries pi..pi+n-1 is not written at all.
 *
 * The consumer takes what the CQEs share from the title and what differs
 * from the mini-CQE: the byte count always; a requester's WQE counter and
 * WQE opcode; a responder's hash result (HASH: an RSS WQ's hash, else 0),
 * checksum (CSUM: 0, as in this model's CQEs) or
 * checksum and stride index (CSUM_STRIDX: the WQE index). Without a
 * stride index, the responder's WQE counter is the title's plus the
 * mini-CQE's place, so only CQEs with consecutive counters go together.
 * With 128-byte CQEs everything is in the CQE64, the last 64 bytes of the
 * entry. The consumer gives every entry of the session back to the device
 * by rewriting its owner byte.
 *
 * When (RFEMU_CQE_COMPRESS, read at engine start):
 *
 *   auto    (default) CQEs of one kind completed in one engine pass (the
 *           doorbells, packets and timers it found) form a session when
 *           there are two or more, as a ConnectX compresses what is in its
 *           write buffer together;
 *   always  CQEs are held across passes until the engine finds no work,
 *           the session is full (max_num, 64) or 100 us passed: every run
 *           of two or more CQEs of one kind is compressed;
 *   load    as auto, but only while software lags: the CQ still holds
 *           CQEs the doorbell record does not count as consumed;
 *   never   no sessions.
 *
 * A CQE that no session can hold (an error, scatter-to-CQE data, another
 * kind) first writes out what is held, so the order of completions on a
 * CQ is the order in which they were made. A session that would not fit
 * the room software left is written as single CQEs, which overrun where
 * the CQE that does not fit is.
 */
#include <stdlib.h>

#include "device.h"

#define ZIP_HOLD_NS	100000	/* always: the longest a CQE is held */

struct dev_zip {
	struct dev_cq	*dcq;
	struct dev_zip	*next_held;	/* in dev_eng.zip_held while n > 0 */
	uint64_t	since;		/* dev_eng.now when the first was held */
	uint32_t	max;		/* the longest session this CQ takes */
	uint32_t	n;
	struct dev_cqe	held[DEV_ZIP_MAX];
};

void dev_zip_cq_created(struct dev_cq *dcq)
{
	const struct emu_cq *cq = dcq->cq;
	struct dev_zip *z;

	if (!cq->comp_format || dev_eng.zip_mode == EMU_CQE_COMPRESS_NEVER)
		return;
	z = calloc(1, sizeof(*z));
	if (!z)
		return;		/* uncompressed CQEs are valid on any CQ */
	z->dcq = dcq;
	/* a session covers n entries: never more than the ring */
	z->max = cq->cqe_cnt < DEV_ZIP_MAX ? cq->cqe_cnt : DEV_ZIP_MAX;
	dcq->zip = z;
}

static void zip_unlink(struct dev_zip *z)
{
	for (struct dev_zip **pp = &dev_eng.zip_held; *pp; pp = &(*pp)->next_held)
		if (*pp == z) {
			*pp = z->next_held;
			break;
		}
	z->next_held = NULL;
}

/* What was held dies with the CQ: its ring is gone. */
void dev_zip_cq_destroyed(struct dev_cq *dcq)
{
	struct dev_zip *z = dcq->zip;

	if (!z)
		return;
	if (z->n)
		zip_unlink(z);
	dcq->zip = NULL;
	free(z);
}

static bool zip_kind(const struct dev_cqe *c)
{
	if (c->scat_len || c->tm_op)
		return false;	/* the data is in the CQE: no mini-CQE holds it */
	return c->opcode == RF_CQE_REQ ||
	       (c->opcode >= RF_CQE_RESP_WR_IMM && c->opcode <= RF_CQE_RESP_SEND_INV);
}

/* May c follow the held CQEs in their session? */
static bool zip_fits(const struct dev_zip *z, const struct dev_cqe *c)
{
	const struct dev_cqe *t = &z->held[0];

	if (c->opcode != t->opcode || c->qpn != t->qpn || c->uidx != t->uidx ||
	    c->eth != t->eth || c->flow_tag != t->flow_tag || c->rx_drops != t->rx_drops ||
	    c->rss_hash_type != t->rss_hash_type || c->l4_l3_hdr_type != t->l4_l3_hdr_type)
		return false;
	/* the hash is the mini-CQE's in the HASH format, else the title's */
	if (c->rss_hash != t->rss_hash &&
	    z->dcq->cq->comp_format != RF_MINI_CQE_RES_FORMAT_HASH)
		return false;
	if (c->opcode == RF_CQE_REQ)
		return true;	/* counter and WQE opcode are the mini-CQE's */
	/* a responder's title holds all but the byte count and the WQE */
	if (c->rqpn != t->rqpn || c->sl != t->sl || c->g != t->g || c->slid != t->slid ||
	    c->imm != t->imm || c->se != t->se)
		return false;
	return z->dcq->cq->comp_format == RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX ||
	       c->wqe_counter == (uint16_t)(t->wqe_counter + z->n);
}

bool dev_zip_hold(struct dev_cq *dcq, const struct dev_cqe *c)
{
	struct dev_zip *z = dcq->zip;

	if (!zip_kind(c) || dcq->overrun) {
		dev_zip_flush(dcq);
		return false;
	}
	if (z->n && !zip_fits(z, c))
		dev_zip_flush(dcq);
	if (!z->n) {
		z->since = dev_eng.now;
		z->next_held = dev_eng.zip_held;
		dev_eng.zip_held = z;
	}
	z->held[z->n++] = *c;
	if (z->n == z->max)
		dev_zip_flush(dcq);
	return true;
}

/* The eight mini-CQEs of array k of the session, as the entry's CQE64. */
static void zip_array(const struct dev_zip *z, uint32_t k, uint8_t *arr)
{
	bool req = z->held[0].opcode == RF_CQE_REQ;
	bool stridx = z->dcq->cq->comp_format == RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX;
	bool hash = z->dcq->cq->comp_format == RF_MINI_CQE_RES_FORMAT_HASH;

	memset(arr, 0, 64);
	for (uint32_t i = 8 * k; i < z->n && i < 8 * k + 8; i++) {
		struct rf_mini_cqe8 *m = (struct rf_mini_cqe8 *)(void *)arr + (i & 7);
		const struct dev_cqe *c = &z->held[i];

		m->byte_cnt = htobe32(c->byte_cnt);
		if (req) {
			m->u.s_wqe_info.wqe_counter = htobe16(c->wqe_counter);
			m->u.s_wqe_info.s_wqe_opcode = c->wqe_op;
		} else if (stridx) {
			m->u.rx.stride_idx = htobe16(c->wqe_counter);
		} else if (hash) {
			m->u.rx_hash_result = htobe32(c->rss_hash);
		}
	}
}

/* Write the n >= 2 held CQEs as one session at the producer index. */
static void zip_write_session(struct dev_zip *z)
{
	struct dev_cq *dcq = z->dcq;
	const struct emu_cq *cq = dcq->cq;
	const struct dev_cqe *t = &z->held[0];
	uint8_t body[128], arr[64];
	struct rf_cqe64 *e = (struct rf_cqe64 *)(body + cq->cqe_size - 64);
	uint32_t pi = dcq->pi;
	uint8_t op_own;

	/* the arrays first: the title's owner byte vouches for them */
	for (uint32_t k = 0; 8 * k < z->n; k++) {
		uint32_t at = pi + (k ? 8 * k : 1);
		uint8_t *slot = (uint8_t *)(uintptr_t)cq->buf +
				(size_t)(at & (cq->cqe_cnt - 1)) * cq->cqe_size;

		zip_array(z, k, arr);
		if (DEV_UNLIKELY(!dev_copy(slot + cq->cqe_size - 64, arr, sizeof(arr)))) {
			dev_cq_refuse(dcq, t->qpn);
			return;
		}
	}
	op_own = dev_cqe_build(cq, t, body);
	e->byte_cnt = htobe32(z->n);
	op_own = (uint8_t)(op_own | RF_CQE_FORMAT_COMPRESSED << 2);
	if (DEV_UNLIKELY(!dev_cq_put(dcq, pi, body, op_own))) {
		dev_cq_refuse(dcq, t->qpn);
		return;
	}
	dcq->pi = pi + z->n;
	dev_cq_written(dcq, z->n, t->se);
}

/* load: does software still have CQEs to consume on this CQ? */
static bool zip_lagging(const struct dev_cq *dcq)
{
	uint32_t ci;

	if (!dev_load_be32((const void *)(uintptr_t)dcq->cq->dbrec, &ci))
		return false;
	return ((dcq->pi - ci) & 0xffffff) != 0;
}

void dev_zip_flush(struct dev_cq *dcq)
{
	struct dev_zip *z = dcq->zip;
	uint32_t n = z->n;

	if (!n)
		return;
	zip_unlink(z);
	z->n = 0;	/* (the writes below must not hold again) */
	if (n >= 2 && !dcq->overrun && dev_cq_has_room(dcq, n) &&
	    (dev_eng.zip_mode != EMU_CQE_COMPRESS_LOAD || zip_lagging(dcq))) {
		z->n = n;
		zip_write_session(z);
		z->n = 0;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		dev_cq_write_now(dcq, &z->held[i]);
}

void dev_zip_pass_done(bool idle)
{
	struct dev_zip *z = dev_eng.zip_held, *next;

	for (; z; z = next) {
		next = z->next_held;
		if (dev_eng.zip_mode != EMU_CQE_COMPRESS_ALWAYS || idle ||
		    dev_eng.now - z->since >= ZIP_HOLD_NS)
			dev_zip_flush(z->dcq);
	}
}
