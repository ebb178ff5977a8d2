/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/srq.h - a shared receive queue.
 *
 * An SRQ WQE is a 16-byte "next" segment followed by data segments. The
 * free WQEs form a linked list through next_wqe_index, which the device
 * follows as it consumes receives: software posts at head and moves head
 * along the link; the tail WQE is a sentinel that is never filled, so
 * head == tail means full. When a receive's completion is polled, its WQE
 * goes back on the list by linking it after the tail (libmlx5 v44
 * semantics). libmlx5 starts with next[i] = i + 1, head 0, tail last
 * (mlx5dv_srq.head/.tail), which rf_srq_init() takes as given.
 *
 * The doorbell record holds the 16-bit count of WQEs posted.
 *
 * Threading: one thread posts and polls the CQs whose completions return
 * WQEs (rf_cq_poll() calls rf_srq_free()), or they serialize. An SRQ fed by
 * several CQs polled from several threads needs the caller's lock around
 * rf_cq_poll. No locks or atomics here.
 */
#ifndef RDMAFAST_SRQ_H
#define RDMAFAST_SRQ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/checked.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>	/* struct rf_sge */

RF_BEGIN_DECLS

struct rf_srq {
#ifdef RF_CHECKED
	struct rf__chk_srq chk;	/* first: cq.h reaches it by the pointer (checked.h) */
#endif
	uint8_t  *buf;
	uint32_t  head;		/* next WQE to fill (written) */
	uint32_t  tail;		/* sentinel at the end of the free list (written) */
	uint32_t  counter;	/* WQEs posted, free running (written) */
	uint32_t  wqe_shift;	/* log2 of the stride */
	uint32_t  max_sge;
	uint32_t  wqe_cnt;
	uint32_t  srqn;
	__be32   *dbrec;
	uint64_t *wr_id;	/* [wqe_cnt], by WQE index */
};

struct rf_srq_attr {
	void     *buf;		/* mlx5dv_srq.buf */
	uint32_t  wqe_cnt;	/* WQEs in the buffer (tail + 1 when fresh) */
	uint32_t  stride;	/* mlx5dv_srq.stride, power of two >= 32 */
	uint32_t  head;		/* mlx5dv_srq.head */
	uint32_t  tail;		/* mlx5dv_srq.tail */
	uint32_t  srqn;
	__be32   *dbrec;	/* mlx5dv_srq.dbrec */
	uint64_t *wr_id;	/* wqe_cnt entries, caller-allocated */
};

/* rf_srq_init - returns 0 or -EINVAL on a malformed geometry. Cold. */
static inline RF_COLD int rf_srq_init(struct rf_srq *srq, const struct rf_srq_attr *a)
{
	uint32_t shift = 0;

	if (!a->buf || !a->dbrec || !a->wr_id || a->wqe_cnt < 2 ||
	    a->head >= a->wqe_cnt || a->tail >= a->wqe_cnt ||
	    a->stride < 2 * RF_WQE_DS_SIZE || (a->stride & (a->stride - 1)))
		return -EINVAL;
	while ((1U << shift) < a->stride)
		shift++;
	__builtin_memset(srq, 0, sizeof(*srq));
	srq->buf = (uint8_t *)a->buf;
	srq->head = a->head;
	srq->tail = a->tail;
	srq->wqe_shift = shift;
	srq->max_sge = a->stride / RF_WQE_DS_SIZE - 1;
	srq->wqe_cnt = a->wqe_cnt;
	srq->srqn = a->srqn;
	srq->dbrec = a->dbrec;
	srq->wr_id = a->wr_id;
	return 0;
}

/* The SRQ WQE with index idx (its next segment). */
RF_INLINE struct rf_wqe_srq_next_seg *rf_srq_wqe(const struct rf_srq *srq, uint32_t idx)
{
	return (struct rf_wqe_srq_next_seg *)(srq->buf + ((size_t)idx << srq->wqe_shift));
}

/* True when no WQE can be posted until a completion returns one. */
RF_INLINE int rf_srq_full(const struct rf_srq *srq)
{
	return srq->head == srq->tail;
}

/*
 * rf_srq_post - fill the WQE at head with sg[0..n) and move head along the
 * free list. The next segment is left as is: the link is the list. Returns
 * 0, -ENOSPC when full, -EINVAL when n > max_sge. Invisible to the device
 * until rf_srq_ring().
 */
RF_INLINE int rf_srq_post(struct rf_srq *srq, const struct rf_sge *sg, uint32_t n,
			  uint64_t wr_id)
{
	struct rf_wqe_srq_next_seg *w;
	struct rf_wqe_data_seg *d;
	uint32_t i, used = 0;

	if (RF_UNLIKELY(n > srq->max_sge))
		return -EINVAL;
	if (RF_UNLIKELY(srq->head == srq->tail))
		return -ENOSPC;
	w = rf_srq_wqe(srq, srq->head);
	d = (struct rf_wqe_data_seg *)(w + 1);
	for (i = 0; i < n; i++)
		if (sg[i].length)
			rf_set_data_seg(&d[used++], sg[i].length, sg[i].lkey, sg[i].addr);
	if (used < srq->max_sge)
		rf_set_recv_terminator(&d[used]);
	srq->wr_id[srq->head] = wr_id;
	srq->head = rf_be16toh(w->next_wqe_index);
	srq->counter++;
	return 0;
}

/*
 * rf_srq_post_one - the one-buffer receive, without the list walk: as
 * rf_srq_post() with one entry (len 0: no scatter entry). Returns 0 or
 * -ENOSPC when full.
 */
RF_INLINE int rf_srq_post_one(struct rf_srq *srq, uint32_t lkey, uint64_t addr,
			      uint32_t len, uint64_t wr_id)
{
	struct rf_wqe_srq_next_seg *w;
	struct rf_wqe_data_seg *d;

	if (RF_UNLIKELY(srq->head == srq->tail))
		return -ENOSPC;
	w = rf_srq_wqe(srq, srq->head);
	d = (struct rf_wqe_data_seg *)(w + 1);
	/* as rf_rq_post_one(): byte_count 0 would mean 2 GiB, so no entry */
	rf_set_data_seg(d, len, len ? lkey : (uint32_t)RF_INVALID_LKEY, addr);
	if (srq->max_sge > 1)
		rf_set_recv_terminator(d + 1);
	srq->wr_id[srq->head] = wr_id;
	srq->head = rf_be16toh(w->next_wqe_index);
	srq->counter++;
	return 0;
}

/* rf_srq_ring - publish every receive posted so far. */
RF_INLINE void rf_srq_ring(struct rf_srq *srq)
{
	rf_dma_wmb();	/* receive WQE stores before the dbrec store */
	rf_dbrec_set(srq->dbrec, srq->counter);
}

/*
 * rf_srq_post_batch - post wr[0..n) in order, stopping at the first that
 * fails (-ENOSPC: no free WQE; -EINVAL: too many entries), then ring once
 * if anything was posted: one ibv_post_srq_recv() with a list. Returns
 * how many were posted, exactly; *err, if not NULL, receives the failure
 * or 0.
 */
static inline int rf_srq_post_batch(struct rf_srq *srq, const struct rf_recv_wr *wr, int n,
				    int *err)
{
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		rc = rf_srq_post(srq, wr[i].sg_list, wr[i].num_sge, wr[i].wr_id);
		if (rc)
			break;
	}
	if (i)
		rf_srq_ring(srq);
	if (err)
		*err = rc;
	return i;
}

/*
 * rf_srq_free - return WQE idx (a completion's wqe_counter) to the free
 * list: link it after the tail and make it the new tail. Returns its wr_id.
 * The device only follows links up to what the dbrec counter allows, and
 * the old tail was never handed to it, so relinking needs no barrier.
 */
RF_INLINE uint64_t rf_srq_free(struct rf_srq *srq, uint16_t idx)
{
	rf_srq_wqe(srq, srq->tail)->next_wqe_index = rf_htobe16(idx);
	srq->tail = idx;
	RF__CHK(rf__chk_srq(srq)->freed++);
	return srq->wr_id[idx];
}

RF_END_DECLS

#endif /* RDMAFAST_SRQ_H */
