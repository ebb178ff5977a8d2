/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * obj.c - the device's per-object state, kept in step with the command
 * path through the emu_dev_* hooks (all called with emu_lock held).
 */
#include <stdlib.h>
#include <string.h>

#include "device.h"

static struct dev_ctx *dctx_of(const struct emu_obj *o)
{
	return (struct dev_ctx *)o->ctx->dev_priv;
}

/*
 * The context's lists cover UAR page `page`: they grow to the next power of
 * two past it (the watches point into them: rebuilt).  False when out of
 * memory; what would ring there then stays silent.
 */
static bool dctx_fit(struct dev_ctx *dc, uint32_t page)
{
	uint32_t n = dc->nuars ? dc->nuars : 16;
	struct dev_qp **qps;
	struct dev_cq **cqs;

	if (page < dc->nuars)
		return true;
	while (n <= page)
		n *= 2;
	qps = realloc(dc->bf_qps, (size_t)n * EMU_BFREGS_PER_UAR * sizeof(*qps));
	if (!qps)
		return false;
	dc->bf_qps = qps;
	dev_watch_changed();	/* they may have moved */
	cqs = realloc(dc->uar_cqs, (size_t)n * sizeof(*cqs));
	if (!cqs)
		return false;
	dc->uar_cqs = cqs;
	memset(qps + (size_t)dc->nuars * EMU_BFREGS_PER_UAR, 0,
	       (size_t)(n - dc->nuars) * EMU_BFREGS_PER_UAR * sizeof(*qps));
	memset(cqs + dc->nuars, 0, (size_t)(n - dc->nuars) * sizeof(*cqs));
	dc->nuars = n;
	return true;
}

/* ---- CQ ------------------------------------------------------------------- */

void emu_dev_cq_created(struct emu_cq *cq)
{
	struct dev_ctx *dc = dctx_of(&cq->obj);
	struct dev_cq *dcq = calloc(1, sizeof(*dcq));

	if (!dcq || !dc) {
		free(dcq);
		return;		/* a CQ the device cannot serve stays silent */
	}
	dcq->cq = cq;
	dcq->fired_sn = 0xff;
	cq->dev_priv = dcq;
	dev_zip_cq_created(dcq);
	if (dctx_fit(dc, cq->uar_page)) {
		dcq->next_on_uar = dc->uar_cqs[cq->uar_page];
		dc->uar_cqs[cq->uar_page] = dcq;
	}
	dev_watch_changed();
}

void emu_dev_cq_resized(struct emu_cq *cq)
{
	struct dev_cq *dcq = dev_cq_of(cq);
	uint32_t ci = 0;

	if (dcq) {
		dev_cq_resize(dcq);
		return;
	}
	/* an unreadable record reads as 0, never as a fault */
	if (!dev_load_be32((const void *)(uintptr_t)cq->dbrec, &ci))
		ci = 0;
	emu_cq_finish_resize_locked(cq, ci & 0xffffff);
}

uint32_t emu_dev_cq_held(const struct emu_cq *cq)
{
	const struct dev_cq *dcq = dev_cq_of(cq);
	uint8_t ci[4] = {0};

	if (!dcq)
		return 0;
	if (dcq->grant_qp)
		dev_grant_take(dcq->grant_qp);	/* a CQE delivered there is counted */
	/* the record may have been unmapped since it was pinned: then 0 */
	emu_copy_from_user(ci, cq->dbrec, sizeof(ci));
	return (dcq->pi - dev_be32(ci)) & 0xffffff;
}

void emu_dev_cq_destroyed(struct emu_cq *cq)
{
	struct dev_cq *dcq = dev_cq_of(cq);
	struct dev_ctx *dc = dctx_of(&cq->obj);

	if (!dcq)
		return;
	if (dcq->grant_qp)
		dev_grant_take(dcq->grant_qp);
	if (dc && cq->uar_page < dc->nuars)
		for (struct dev_cq **pp = &dc->uar_cqs[cq->uar_page]; *pp; pp = &(*pp)->next_on_uar)
			if (*pp == dcq) {
				*pp = dcq->next_on_uar;
				break;
			}
	dev_cq_stop_timer(dcq);
	cq->dev_priv = NULL;
	dev_zip_cq_destroyed(dcq);
	free(dcq);
	dev_watch_changed();
}

/* ---- QP ------------------------------------------------------------------- */

static bool qp_has_sq(const struct emu_qp *qp)
{
	return qp->type != IBV_QPT_XRC_RECV && qp->sq_wqe_cnt && !qp->opened;
}

void emu_dev_qp_created(struct emu_qp *qp)
{
	struct dev_ctx *dc = dctx_of(&qp->obj);
	struct dev_qp *dq;
	uint32_t n = qp->sq_wqe_cnt ? qp->sq_wqe_cnt : 1;

	if (qp->opened || !dc)
		return;		/* a handle on another host's XRC target QP */
	dq = calloc(1, sizeof(*dq));
	if (!dq)
		return;
	/*
	 * On a TM SRQ the device queues rendezvous READs and their FINs of
	 * its own (tm.c), whatever the SQ software asked for (none, often):
	 * room for DEV_TM_HW_ENTS more entries.
	 */
	if (qp->srq && qp->srq->type == IBV_SRQT_TM)
		while (n < (qp->sq_wqe_cnt + DEV_TM_HW_ENTS))
			n <<= 1;
	dq->ent = calloc(n, sizeof(*dq->ent));
	/* only QPs with requester scatter-to-CQE hold response data for CQEs */
	if (qp->scat_req)
		dq->scat = calloc(n, sizeof(*dq->scat));
	/* on a TM SRQ, the device queues rendezvous READs of its own (tm.c) */
	if (qp->srq && qp->srq->type == IBV_SRQT_TM)
		dq->hw = calloc(n, sizeof(*dq->hw));
	if (!dq->ent || (qp->scat_req && !dq->scat) ||
	    (qp->srq && qp->srq->type == IBV_SRQT_TM && !dq->hw)) {
		free(dq->ent);
		free(dq->scat);
		free(dq->hw);
		free(dq);
		return;
	}
	dq->ent_mask = n - 1;
	dq->qp = qp;
	dq->qpn = qp->qpn;
	dq->dctx = dc;
	/* a DCI's connections are numbered from a point a recreated QPN will not repeat */
	dq->dc_conn = (uint32_t)dev_now_ns();
	qp->dev_priv = dq;
	dq->next = dev_eng.qps;
	dev_eng.qps = dq;
	dev_eng.nqps++;
	if (qp_has_sq(qp) && dctx_fit(dc, qp->bfreg / EMU_BFREGS_PER_UAR)) {
		dq->next_on_bf = dc->bf_qps[qp->bfreg];
		dc->bf_qps[qp->bfreg] = dq;
		dev_watch_changed();
	}
}

void dev_qp_fatal(struct dev_qp *dq, enum ibv_event_type ev)
{
	struct emu_qp *qp = dq->qp;

	if (qp->attr.state != IBV_QPS_ERR)
		emu_qp_set_state_locked(qp, IBV_QPS_ERR);
	if (ev)
		emu_post_async_event_locked(qp->obj.ctx, &qp->obj, 0, ev);
}

void emu_dev_qp_modified(struct emu_qp *qp, enum ibv_qp_state old, uint32_t mask)
{
	struct dev_qp *dq = dev_qp_of(qp);
	enum ibv_qp_state st = qp->attr.state;

	if (!dq)
		return;
	dev_grant_take(dq);	/* what it lent was for the state it left */
	if (st == IBV_QPS_RESET) {
		dev_sq_reset(dq);
		return;
	}
	if (mask & IBV_QP_RQ_PSN)
		dq->epsn = qp->attr.rq_psn & DEV_PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		dq->next_psn = qp->attr.sq_psn & DEV_PSN_MASK;
	if (mask & IBV_QP_RETRY_CNT || (st == IBV_QPS_RTS && old != IBV_QPS_RTS))
		dq->retry_left = qp->attr.retry_cnt;
	if (mask & IBV_QP_RNR_RETRY || (st == IBV_QPS_RTS && old != IBV_QPS_RTS))
		dq->rnr_left = qp->attr.rnr_retry;
	if (dq->sig_drain && st != IBV_QPS_SQD &&
	    !(st == IBV_QPS_RTS && old == IBV_QPS_RTS)) {
		/*
		 * Out of the drain after a failed signature check (SQD->RTS,
		 * or to ERR): the WQEs rung meanwhile are fetched now, or
		 * flushed.
		 */
		dq->sig_drain = false;
		dq->sq_rung = true;
	}
	if (st == IBV_QPS_ERR && old != IBV_QPS_ERR) {
		/* flush from the engine, in order with the CQEs it writes */
		dq->flush_rq = true;
		dq->recv_busy = false;
		dev_qp_set_busy(dq);
		dev_kick();
	} else if (st == IBV_QPS_RTS && dq->sq_rung) {
		/* WQEs rung before RTS run now */
		dev_qp_set_busy(dq);
		dev_kick();
	}
}

uint16_t emu_dev_qp_sq_counter(const struct emu_qp *qp)
{
	const struct dev_qp *dq = dev_qp_of(qp);

	/* the WQEs fetched: in SQD, the BB of the first one that waits */
	return dq ? (uint16_t)dq->sq_next : 0;
}

static void unlink_qp(struct dev_qp **head, struct dev_qp *dq, size_t link_off)
{
	for (struct dev_qp **pp = head; *pp;
	     pp = (struct dev_qp **)((uint8_t *)*pp + link_off))
		if (*pp == dq) {
			*pp = *(struct dev_qp **)((uint8_t *)dq + link_off);
			return;
		}
}

void emu_dev_qp_destroyed(struct emu_qp *qp)
{
	struct dev_qp *dq = dev_qp_of(qp);
	struct dev_ctx *dc = dq ? dq->dctx : NULL;

	if (!dq)
		return;
	dev_grant_forget(dq);
	dev_sq_direct_forget(dq);
	if (dq->deadline)
		dev_eng.timers--;
	if (dq->rnr_until)
		dev_eng.timers--;
	unlink_qp(&dev_eng.qps, dq, offsetof(struct dev_qp, next));
	if (dq->busy)
		unlink_qp(&dev_eng.busy, dq, offsetof(struct dev_qp, next_busy));
	if (dq->ack_pending)
		unlink_qp(&dev_eng.acks, dq, offsetof(struct dev_qp, next_ack));
	if (dc && qp_has_sq(qp) && qp->bfreg < dc->nuars * EMU_BFREGS_PER_UAR) {
		unlink_qp(&dc->bf_qps[qp->bfreg], dq, offsetof(struct dev_qp, next_on_bf));
		dev_watch_changed();
	}
	dev_dct_conns_free(dq);
	dev_eng.nqps--;
	qp->dev_priv = NULL;
	free(dq->ent);
	free(dq->scat);
	free(dq->hw);
	free(dq);
}

/* ---- SRQ ------------------------------------------------------------------ */

void emu_dev_srq_created(struct emu_srq *srq)
{
	struct dev_srq *ds = calloc(1, sizeof(*ds));

	if (!ds)
		return;
	ds->srq = srq;
	if (srq->type == IBV_SRQT_TM && !dev_tm_create(ds)) {
		free(ds);
		return;
	}
	srq->dev_priv = ds;
}

void emu_dev_srq_modified(struct emu_srq *srq, uint32_t mask)
{
	if (!srq->dev_priv)
		return;
	if (dev_srq_of(srq)->grant_qp)
		dev_grant_take(dev_srq_of(srq)->grant_qp);
	if (mask & IBV_SRQ_LIMIT) {
		srq->limit_armed = srq->limit != 0;
		dev_srq_check_limit(srq);
	}
}

void emu_dev_srq_destroyed(struct emu_srq *srq)
{
	if (srq->dev_priv && dev_srq_of(srq)->grant_qp)
		dev_grant_take(dev_srq_of(srq)->grant_qp);
	if (srq->dev_priv)
		free(dev_srq_of(srq)->tm);
	free(srq->dev_priv);
	srq->dev_priv = NULL;
}

/* ---- MR ------------------------------------------------------------------- */

/*
 * A grant's scatter entries were resolved through the MRs as they were,
 * and an MR lent to one-sided requests is named in the host's table: its
 * entry goes and every grant is taken back before one is deregistered or
 * changed.
 */
void emu_dev_mr_dereg(struct emu_mr *mr)
{
	dev_grant_mr_gone(mr);
}
