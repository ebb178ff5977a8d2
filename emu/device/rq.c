/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rq.c - receive WQEs: the QP's RQ ring and shared receive queues.
 *
 * Receive queues have no MMIO doorbell: software only bumps the counter in
 * the doorbell record, and the HCA reads it when a message needs a buffer.
 * So does the model - receives are fetched lazily, at the first packet of a
 * message that consumes one.
 */
#include "device.h"

/* The 16-bit counter of a receive doorbell record; false if unreadable. */
static bool dbrec_counter(uint64_t dbrec, uint32_t *v)
{
	if (!dev_load_be32((const void *)(uintptr_t)dbrec, v))
		return false;
	*v &= 0xffff;
	return true;
}

/*
 * Receive WQEs the record says are posted beyond `taken`: -1 when the
 * record is unreadable or further ahead than the queue holds (a jump, or a
 * counter moved backwards) - a work queue catastrophic error, as for the SQ.
 */
static int32_t rq_avail(uint64_t dbrec, uint32_t taken, uint32_t size)
{
	uint32_t db;

	if (!dbrec_counter(dbrec, &db))
		return -1;
	return dev_db_avail(db, taken, size);
}

/*
 * A QP that can no longer get receives from its SRQ: to ERR with
 * IBV_EVENT_QP_FATAL (its flush then raises QP_LAST_WQE_REACHED).  A DCT
 * keeps its state: the kernel's mlx5 driver forwards no such event for a
 * DCT, and what a ConnectX does with one is not public.
 */
static void srq_fail_qp(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;

	if (!qp->dc && qp->attr.state != IBV_QPS_ERR && qp->attr.state != IBV_QPS_RESET)
		dev_qp_fatal(dq, IBV_EVENT_QP_FATAL);
}

/*
 * A work queue catastrophic error.  On an SRQ (issue 35, defect 10):
 * IBV_EVENT_SRQ_ERR, then every QP associated with the SRQ to ERR with
 * IBV_EVENT_QP_FATAL, as the IBA's SRQ catastrophic error (11.6.3.1) and
 * NVIDIA's manual for IBV_EVENT_SRQ_ERR describe it (DESIGN-device.md).
 * Left in RTS they would answer every SEND with an RNR NAK, and a
 * requester with rnr_retry 7 would retry forever.  dq, the QP whose
 * message found the SRQ broken, may be an XRC target, which no SRQ is
 * associated with: it fails as well.
 */
static void rq_catastrophic(struct dev_qp *dq, struct emu_srq *srq)
{
	if (srq) {
		struct dev_srq *ds = dev_srq_of(srq);

		if (!ds->failed) {
			ds->failed = true;
			emu_post_async_event_locked(srq->obj.ctx, &srq->obj, 0,
						    IBV_EVENT_SRQ_ERR);
			for (struct dev_qp *q = dev_eng.qps; q; q = q->next)
				if (q->qp->srq == srq)
					srq_fail_qp(q);
		}
		srq_fail_qp(dq);
		return;
	}
	if (dq->qp->attr.state != IBV_QPS_ERR)
		dev_qp_fatal(dq, IBV_EVENT_QP_FATAL);
}

/*
 * Fetch the data segments of a receive WQE of `stride` bytes at wqe (after
 * `skip` bytes of SRQ next segment) into r->buf; false on a fault.
 */
static bool rq_fetch(struct dev_rwqe *r, const uint8_t *wqe, uint32_t stride, uint32_t skip)
{
	uint32_t n = stride > skip ? stride - skip : 0;

	if (n > sizeof(r->buf))
		n = sizeof(r->buf);
	r->wqe = r->buf;
	r->nseg = n / 16;
	return dev_copy(r->buf, wqe + skip, n);
}

bool dev_rq_take(struct dev_qp *dq, struct emu_srq *srq, struct dev_rwqe *r)
{
	if (srq) {
		struct dev_srq *ds = dev_srq_of(srq);
		uint32_t next;

		/* its head lent to a grant (grant.c): a message delivered there first */
		if (ds->grant_qp)
			dev_grant_take(ds->grant_qp);
		if (!dev_srq_peek(dq, srq, r, &next))
			return false;
		ds->head = next;
		ds->taken++;
		dev_srq_check_limit(srq);
		return true;
	}
	if (!dev_rq_peek(dq, r))
		return false;
	dq->rq_ci++;
	return true;
}

bool dev_srq_peek(struct dev_qp *dq, struct emu_srq *srq, struct dev_rwqe *r, uint32_t *next)
{
	struct dev_srq *ds = dev_srq_of(srq);
	uint32_t stride = 1u << srq->wqe_shift;
	uint8_t *wqe;
	uint8_t link[4];
	int32_t avail;

	if (ds->failed) {
		srq_fail_qp(dq);	/* attached, or an XRC target, since */
		return false;
	}
	avail = rq_avail(srq->dbrec, ds->taken, srq->wqe_cnt);
	if (avail < 0) {
		rq_catastrophic(dq, srq);
		return false;
	}
	if (!avail)
		return false;
	/*
	 * The SRQ is a linked list: software fills wqe[head] and moves head
	 * along next_wqe_index; the device follows the same links.  Each take
	 * is one step, bounded by the record's count.
	 */
	wqe = (uint8_t *)(uintptr_t)srq->buf + (size_t)ds->head * stride;
	if (!dev_copy(link, wqe, sizeof(link)) || !rq_fetch(r, wqe, stride, 16)) {
		rq_catastrophic(dq, srq);
		return false;
	}
	r->idx = ds->head;
	r->srq = srq;
	*next = dev_be16(link + 2) & (srq->wqe_cnt - 1);
	return true;
}

bool dev_rq_peek(struct dev_qp *dq, struct dev_rwqe *r)
{
	struct emu_qp *qp = dq->qp;
	uint32_t slot;
	int32_t avail;

	if (!qp->rq_wqe_cnt)
		return false;
	avail = rq_avail(qp->dbrec, dq->rq_ci, qp->rq_wqe_cnt);
	if (avail < 0) {
		rq_catastrophic(dq, NULL);
		return false;
	}
	if (!avail)
		return false;
	slot = dq->rq_ci & (qp->rq_wqe_cnt - 1);
	if (!rq_fetch(r, (uint8_t *)(uintptr_t)qp->rq_buf + ((size_t)slot << qp->rq_wqe_shift),
		      1u << qp->rq_wqe_shift, 0)) {
		rq_catastrophic(dq, NULL);
		return false;
	}
	r->idx = dq->rq_ci & 0xffff;
	r->srq = NULL;
	return true;
}

/*
 * A work queue is an RQ without a QP: the same ring and doorbell record,
 * its counter its own.  A record out of reach or ahead of the ring, or a
 * WQE that faults, moves the WQ to ERR (the RQ's error state).
 */
bool dev_wq_take(struct emu_wq *wq, struct dev_rwqe *r)
{
	int32_t avail = rq_avail(wq->dbrec, wq->rq_ci, wq->wqe_cnt);
	uint32_t slot = wq->rq_ci & (wq->wqe_cnt - 1);

	if (!avail)
		return false;
	if (avail < 0 || !rq_fetch(r, (uint8_t *)(uintptr_t)wq->buf + ((size_t)slot << wq->wqe_shift),
				   1u << wq->wqe_shift, 0)) {
		wq->state = IBV_WQS_ERR;
		return false;
	}
	r->idx = wq->rq_ci & 0xffff;
	r->srq = NULL;
	wq->rq_ci++;
	return true;
}

/* A fault here leaves no data segments: the message fails its length check. */
void dev_rq_locate(struct dev_qp *dq, struct emu_srq *srq, uint32_t idx,
		   struct dev_rwqe *r)
{
	bool ok;

	if (srq) {
		uint32_t stride = 1u << srq->wqe_shift;

		ok = rq_fetch(r, (uint8_t *)(uintptr_t)srq->buf + (size_t)idx * stride, stride, 16);
	} else {
		struct emu_qp *qp = dq->qp;

		ok = rq_fetch(r, (uint8_t *)(uintptr_t)qp->rq_buf +
			      ((size_t)(idx & (qp->rq_wqe_cnt - 1)) << qp->rq_wqe_shift),
			      1u << qp->rq_wqe_shift, 0);
	}
	if (!ok)
		r->nseg = 0;
	r->idx = idx;
	r->srq = srq;
}

/* IBV_EVENT_SRQ_LIMIT_REACHED fires once when the posted count drops below. */
void dev_srq_check_limit(struct emu_srq *srq)
{
	struct dev_srq *ds = dev_srq_of(srq);
	uint32_t avail;

	int32_t n;

	if (!srq->limit || !srq->limit_armed)
		return;
	n = rq_avail(srq->dbrec, ds->taken, srq->wqe_cnt);
	if (n < 0)
		return;
	avail = (uint32_t)n;
	if (avail < srq->limit) {
		srq->limit_armed = false;
		emu_post_async_event_locked(srq->obj.ctx, &srq->obj, 0,
					    IBV_EVENT_SRQ_LIMIT_REACHED);
	}
}

/*
 * A QP in ERR completes every posted receive with WR_FLUSH_ERR, including
 * those posted after it entered ERR (the engine calls this again then).
 * Receives of an SRQ belong to the SRQ and are not flushed; the QP reports
 * IBV_EVENT_QP_LAST_WQE_REACHED instead.
 */
void dev_rq_flush(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;
	struct dev_cqe c = {
		.opcode = RF_CQE_RESP_ERR,
		.syndrome = RF_CQE_SYNDROME_WR_FLUSH_ERR,
		.qpn = dq->qpn,
		.uidx = qp->uidx,
	};

	dev_grant_take(dq);	/* a message delivered directly is settled first */
	dq->recv_busy = false;
	if (qp->srq || qp->type == IBV_QPT_XRC_RECV) {
		if (!dq->last_wqe_sent && qp->srq) {
			dq->last_wqe_sent = true;
			emu_post_async_event_locked(qp->obj.ctx, &qp->obj, 0,
						    IBV_EVENT_QP_LAST_WQE_REACHED);
		}
		return;
	}
	if (!qp->recv_cq || !qp->rq_wqe_cnt)
		return;
	/* at most a queue's worth; a record further ahead flushes nothing */
	for (int32_t n = rq_avail(qp->dbrec, dq->rq_ci, qp->rq_wqe_cnt); n > 0; n--) {
		c.wqe_counter = (uint16_t)dq->rq_ci;
		dev_cq_write(qp->recv_cq, &c);
		dq->rq_ci++;
	}
}
