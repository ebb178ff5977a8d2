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

static uint32_t dbrec_counter(uint64_t dbrec)
{
	return dev_be32((const void *)(uintptr_t)dbrec) & 0xffff;
}

bool dev_rq_take(struct dev_qp *dq, struct emu_srq *srq, struct dev_rwqe *r)
{
	if (srq) {
		struct dev_srq *ds = dev_srq_of(srq);
		uint32_t stride = 1u << srq->wqe_shift;
		uint8_t *wqe;

		if (((dbrec_counter(srq->dbrec) - ds->taken) & 0xffff) == 0)
			return false;
		/*
		 * The SRQ is a linked list: software fills wqe[head] and moves
		 * head along next_wqe_index; the device follows the same links.
		 */
		wqe = (uint8_t *)(uintptr_t)srq->buf + (size_t)ds->head * stride;
		r->idx = ds->head;
		r->wqe = wqe + 16;
		r->nseg = (stride - 16) / 16;
		r->srq = srq;
		ds->head = dev_be16(wqe + 2) & (srq->wqe_cnt - 1);
		ds->taken++;
		dev_srq_check_limit(srq);
		return true;
	}
	{
		struct emu_qp *qp = dq->qp;
		uint32_t slot;

		if (!qp->rq_wqe_cnt ||
		    ((dbrec_counter(qp->dbrec) - dq->rq_ci) & 0xffff) == 0)
			return false;
		slot = dq->rq_ci & (qp->rq_wqe_cnt - 1);
		r->wqe = (uint8_t *)(uintptr_t)qp->rq_buf +
			 ((size_t)slot << qp->rq_wqe_shift);
		r->nseg = (1u << qp->rq_wqe_shift) / 16;
		r->idx = dq->rq_ci & 0xffff;
		r->srq = NULL;
		dq->rq_ci++;
		return true;
	}
}

void dev_rq_locate(struct dev_qp *dq, struct emu_srq *srq, uint32_t idx,
		   struct dev_rwqe *r)
{
	if (srq) {
		uint32_t stride = 1u << srq->wqe_shift;

		r->wqe = (uint8_t *)(uintptr_t)srq->buf + (size_t)idx * stride + 16;
		r->nseg = (stride - 16) / 16;
	} else {
		struct emu_qp *qp = dq->qp;

		r->wqe = (uint8_t *)(uintptr_t)qp->rq_buf +
			 ((size_t)(idx & (qp->rq_wqe_cnt - 1)) << qp->rq_wqe_shift);
		r->nseg = (1u << qp->rq_wqe_shift) / 16;
	}
	r->idx = idx;
	r->srq = srq;
}

/* IBV_EVENT_SRQ_LIMIT_REACHED fires once when the posted count drops below. */
void dev_srq_check_limit(struct emu_srq *srq)
{
	struct dev_srq *ds = dev_srq_of(srq);
	uint32_t avail;

	if (!srq->limit || !srq->limit_armed)
		return;
	avail = (dbrec_counter(srq->dbrec) - ds->taken) & 0xffff;
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
	while (((dbrec_counter(qp->dbrec) - dq->rq_ci) & 0xffff) != 0) {
		c.wqe_counter = (uint16_t)dq->rq_ci;
		dev_cq_write(qp->recv_cq, &c);
		dq->rq_ci++;
	}
}
