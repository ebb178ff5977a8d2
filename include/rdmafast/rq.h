/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/rq.h - a QP's own receive queue.
 *
 *	rf_rq_post(rq, sg, n, wr_id);     fill the next receive WQE
 *	...
 *	rf_rq_ring(rq);                   publish them: one dbrec store
 *
 * An RQ WQE is an array of max_sge data segments with no header (the
 * stride is a power of two, >= 16). A list shorter than max_sge ends with
 * a terminator entry (byte_count 0, lkey RF_INVALID_LKEY). Receives have
 * no MMIO doorbell: the device reads the RQ counter in the doorbell record
 * when a message arrives.
 *
 * The RQ counter counts WQEs (not BBs) and is free running; slot = counter
 * & (wqe_cnt - 1). Completions name the slot in wqe_counter; the wr_id
 * table is indexed by it, so out-of-order consumption works too.
 *
 * Threading: one thread posts; rf_cq_poll() retires (writes rq->tail).
 * Post and poll from the same thread or serialize them. No locks, no
 * atomics.
 */
#ifndef RDMAFAST_RQ_H
#define RDMAFAST_RQ_H

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

struct rf_rq {
#ifdef RF_CHECKED
	struct rf__chk_rq chk;	/* first: cq.h reaches it by the pointer (checked.h) */
#endif
	uint8_t  *buf;
	uint32_t  head;		/* WQEs posted, free running (written) */
	uint32_t  tail;		/* WQEs completed, free running (written) */
	uint32_t  wqe_mask;	/* wqe_cnt - 1 */
	uint32_t  wqe_shift;	/* log2 of the stride */
	uint32_t  max_sge;	/* data segments that fit a WQE */
	uint32_t  wqe_cnt;
	__be32   *dbrec;	/* &qp_dbrec[RF_RCV_DBR] */
	uint64_t *wr_id;	/* [wqe_cnt] */
};

struct rf_rq_attr {
	void     *buf;		/* mlx5dv_qp.rq.buf */
	uint32_t  wqe_cnt;	/* mlx5dv_qp.rq.wqe_cnt, power of two */
	uint32_t  stride;	/* mlx5dv_qp.rq.stride, power of two >= 16 */
	__be32   *dbrec;	/* mlx5dv_qp.dbrec (the record, not the RQ word) */
	uint64_t *wr_id;	/* wqe_cnt entries, caller-allocated */
};

/* rf_rq_init - returns 0 or -EINVAL on a malformed geometry. Cold. */
static inline RF_COLD int rf_rq_init(struct rf_rq *rq, const struct rf_rq_attr *a)
{
	uint32_t shift = 0;

	if (!a->buf || !a->dbrec || !a->wr_id || !a->wqe_cnt ||
	    (a->wqe_cnt & (a->wqe_cnt - 1)) || a->stride < RF_RECV_WQE_MIN ||
	    (a->stride & (a->stride - 1)))
		return -EINVAL;
	while ((1U << shift) < a->stride)
		shift++;
	__builtin_memset(rq, 0, sizeof(*rq));
	rq->buf = (uint8_t *)a->buf;
	rq->wqe_mask = a->wqe_cnt - 1;
	rq->wqe_shift = shift;
	rq->max_sge = a->stride / sizeof(struct rf_wqe_data_seg);
	rq->wqe_cnt = a->wqe_cnt;
	rq->dbrec = a->dbrec + RF_RCV_DBR;
	rq->wr_id = a->wr_id;
	return 0;
}

/* Receive WQEs that can still be posted. */
RF_INLINE uint32_t rf_rq_space(const struct rf_rq *rq)
{
	return rq->wqe_cnt - (rq->head - rq->tail);
}

/* The receive WQE (its first data segment) in slot idx & mask. */
RF_INLINE struct rf_wqe_data_seg *rf_rq_wqe(const struct rf_rq *rq, uint32_t idx)
{
	return (struct rf_wqe_data_seg *)(rq->buf +
		((size_t)(idx & rq->wqe_mask) << rq->wqe_shift));
}

/*
 * rf_rq_post - post one receive scattering into sg[0..n) (n <= max_sge).
 * Zero-length entries are skipped. Returns 0, -ENOSPC when the RQ is full,
 * -EINVAL when n > max_sge. Invisible to the device until rf_rq_ring().
 */
RF_INLINE int rf_rq_post(struct rf_rq *rq, const struct rf_sge *sg, uint32_t n,
			 uint64_t wr_id)
{
	struct rf_wqe_data_seg *d;
	uint32_t i, used = 0;

	if (RF_UNLIKELY(n > rq->max_sge))
		return -EINVAL;
	if (RF_UNLIKELY(rq->head - rq->tail >= rq->wqe_cnt))
		return -ENOSPC;
	d = rf_rq_wqe(rq, rq->head);
	for (i = 0; i < n; i++)
		if (sg[i].length)
			rf_set_data_seg(&d[used++], sg[i].length, sg[i].lkey, sg[i].addr);
	if (used < rq->max_sge)
		rf_set_recv_terminator(&d[used]);
	rq->wr_id[rq->head & rq->wqe_mask] = wr_id;
	rq->head++;
	return 0;
}

/* rf_rq_post_one - the one-buffer receive, without the list walk. */
RF_INLINE int rf_rq_post_one(struct rf_rq *rq, uint32_t lkey, uint64_t addr,
			     uint32_t len, uint64_t wr_id)
{
	struct rf_wqe_data_seg *d;

	if (RF_UNLIKELY(rq->head - rq->tail >= rq->wqe_cnt))
		return -ENOSPC;
	d = rf_rq_wqe(rq, rq->head);
	/*
	 * A zero-length receive has no scatter entry, as in rf_rq_post():
	 * byte_count 0 would mean 2 GiB to the device (PRM, data segment),
	 * so the invalid lkey makes the entry the list's terminator.
	 */
	rf_set_data_seg(d, len, len ? lkey : (uint32_t)RF_INVALID_LKEY, addr);
	if (rq->max_sge > 1)
		rf_set_recv_terminator(d + 1);
	rq->wr_id[rq->head & rq->wqe_mask] = wr_id;
	rq->head++;
	return 0;
}

/* rf_rq_ring - publish every receive posted so far (dbrec[RF_RCV_DBR]). */
RF_INLINE void rf_rq_ring(struct rf_rq *rq)
{
	rf_dma_wmb();	/* receive WQE stores before the dbrec store */
	rf_dbrec_set(rq->dbrec, rq->head);
}

/*
 * rf_rq_post_batch - post wr[0..n) in order, stopping at the first that
 * fails (-ENOSPC: the queue is full; -EINVAL: too many entries), then
 * ring once if anything was posted: one ibv_post_recv() with a list.
 * Returns how many were posted, exactly; *err, if not NULL, receives the
 * failure or 0.
 */
static inline int rf_rq_post_batch(struct rf_rq *rq, const struct rf_recv_wr *wr, int n,
				   int *err)
{
	int i, rc = 0;

	for (i = 0; i < n; i++) {
		rc = rf_rq_post(rq, wr[i].sg_list, wr[i].num_sge, wr[i].wr_id);
		if (rc)
			break;
	}
	if (i)
		rf_rq_ring(rq);
	if (err)
		*err = rc;
	return i;
}

/*
 * rf_rq_retire - a CQE reported the receive in slot wqe_counter: free one
 * WQE and return its wr_id.
 */
RF_INLINE uint64_t rf_rq_retire(struct rf_rq *rq, uint16_t wqe_counter)
{
	rq->tail++;
	return rq->wr_id[wqe_counter & rq->wqe_mask];
}

RF_END_DECLS

#endif /* RDMAFAST_RQ_H */
