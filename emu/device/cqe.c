/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cqe.c - writing CQEs, CQ overrun, arming, event moderation and completion
 * events.
 *
 * A CQE is written in two steps, as the HCA's DMA does: the body first, then
 * (after a release fence) the op_own byte that hands the entry to software.
 * libmlx5 checks ownership on op_own alone and reads the body only after its
 * own load barrier, so this order is what makes a half-written CQE invisible.
 */
#include <stdatomic.h>

#include "device.h"

/*
 * The CQ's next entry lent to a grant (grant.c) is taken back before
 * anything else writes, arms or resizes: a message delivered there is
 * counted first.
 */
static inline void cq_take_grant(struct dev_cq *dcq)
{
	if (DEV_UNLIKELY(dcq->grant_qp != NULL))
		dev_grant_take(dcq->grant_qp);
}

static uint8_t *cqe_slot(const struct emu_cq *cq, uint32_t idx)
{
	return (uint8_t *)(uintptr_t)cq->buf +
	       (size_t)(idx & (cq->cqe_cnt - 1)) * cq->cqe_size;
}

void dev_cq_stop_timer(struct dev_cq *dcq)
{
	if (dcq->mod_due)
		dev_eng.cq_timers--;
	dcq->mod_due = 0;
}

static void cq_start_timer(struct dev_cq *dcq, uint64_t due)
{
	if (!dcq->mod_due)
		dev_eng.cq_timers++;
	dcq->mod_due = due;
}

/*
 * Event moderation (ibv_modify_cq()): whether an armed CQ's event must
 * still wait.  It waits until cq_count CQEs arrived since the arm, or
 * cq_period us after the first of them (a timer then fires it); 0 turns
 * either off, both 0 is no moderation.  With no CQE counted the event is
 * for CQEs the arm found already written, which fire it at once.
 */
static bool cq_moderated(struct dev_cq *dcq)
{
	const struct emu_cq *cq = dcq->cq;
	uint64_t due;

	if ((!cq->mod_count && !cq->mod_period) || !dcq->mod_cqes)
		return false;
	if (cq->mod_count && dcq->mod_cqes >= cq->mod_count)
		return false;
	if (!cq->mod_period)
		return true;
	due = dcq->mod_first + (uint64_t)cq->mod_period * 1000;
	if (dev_eng.now >= due)
		return false;
	cq_start_timer(dcq, due);
	return true;
}

/* Fire the arm if a CQE beyond the arm's consumer index may wake it. */
static void cq_try_fire(struct dev_cq *dcq, bool wakes_solicited)
{
	struct emu_cq *cq = dcq->cq;

	if (!cq->armed)
		return;
	if (cq->armed_solicited && !wakes_solicited)
		return;
	if (cq_moderated(dcq))
		return;
	dev_cq_stop_timer(dcq);
	dcq->fired_sn = (uint8_t)cq->arm_sn;
	emu_post_comp_event_locked(cq);	/* clears cq->armed */
	cq->armed = false;
	dev_eng.last_event = dev_eng.now;
}

/* The moderation periods that ended: their CQs' events fire now. */
void dev_cq_timers(void)
{
	for (struct dev_ctx *dc = dev_eng.ctxs; dc; dc = dc->next)
		for (unsigned u = 0; u < dc->nuars; u++)
			for (struct dev_cq *dcq = dc->uar_cqs[u]; dcq; dcq = dcq->next_on_uar)
				if (dcq->mod_due && dev_eng.now >= dcq->mod_due) {
					dev_cq_stop_timer(dcq);
					cq_try_fire(dcq, true);
				}
}

uint64_t dev_cq_next_due(void)
{
	uint64_t t = 0;

	if (!dev_eng.cq_timers)
		return 0;
	for (struct dev_ctx *dc = dev_eng.ctxs; dc; dc = dc->next)
		for (unsigned u = 0; u < dc->nuars; u++)
			for (struct dev_cq *dcq = dc->uar_cqs[u]; dcq; dcq = dcq->next_on_uar)
				if (dcq->mod_due && (!t || dcq->mod_due < t))
					t = dcq->mod_due;
	return t;
}

/*
 * The vendor syndrome (wc.vendor_err) a ConnectX writes beside each error
 * syndrome.  Its meaning is firmware-internal and undocumented; these are
 * values real adapters reported in public logs for the same error, so that
 * code that prints or matches them sees what it would see on hardware:
 *
 *   0x05 WR flush           0xf9  linux-nvme/nvme-cli#3268 (mlx5 kernel
 *                                 dump), accelio/accelio#181
 *   0x15 retry exceeded     0x81  openucx/ucx#2973, openucx/ucx#5634,
 *                                 openucx/ucx#1880
 *   0x13 remote access      0x88  NVIDIA developer forum, "ConnectX-2 CQE
 *                                 remote access error ... vendor syndrome 0x88"
 *   0x14 remote operation   0x89  openucx/ucx#5472
 *   0x12 remote inv. req.   0x8a  charmplusplus/charm#2532
 *   0x04 local protection   0x53 requester (Juniper/warp17#81 CQE dump; a
 *                                 ConnectX-6/7 showed 0x52 in FDio/csit#3988),
 *                           0x32 responder (openucx/ucx#7801, #9167)
 *   0x02 local QP operation 0xd6  openucx/ucx#11444 ("0x02/0xd6 is
 *                                 RDE_MAL_WQE", a malformed WQE)
 *
 * For the others no public report was found; the values below are this
 * model's own choice (in the same 0x8x remote / 0x5x-0x6x local ranges) and
 * are only meant to be non-zero and distinct per error.
 */
uint8_t dev_vendor_syndrome(uint8_t opcode, uint8_t syndrome)
{
	switch (syndrome) {
	case RF_CQE_SYNDROME_LOCAL_LENGTH_ERR:		return 0x69;	/* chosen */
	case RF_CQE_SYNDROME_LOCAL_QP_OP_ERR:		return 0xd6;
	case RF_CQE_SYNDROME_LOCAL_PROT_ERR:
		return opcode == RF_CQE_RESP_ERR ? 0x32 : 0x53;
	case RF_CQE_SYNDROME_WR_FLUSH_ERR:		return 0xf9;
	case RF_CQE_SYNDROME_MW_BIND_ERR:		return 0x6b;	/* chosen */
	case RF_CQE_SYNDROME_BAD_RESP_ERR:		return 0x8c;	/* chosen */
	case RF_CQE_SYNDROME_LOCAL_ACCESS_ERR:		return 0x6a;	/* chosen */
	case RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:	return 0x8a;
	case RF_CQE_SYNDROME_REMOTE_ACCESS_ERR:		return 0x88;
	case RF_CQE_SYNDROME_REMOTE_OP_ERR:		return 0x89;
	case RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:	return 0x81;
	case RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR:		return 0x82;	/* chosen */
	default:					return 0;
	}
}

/*
 * A QP that completes to a CQ in error goes to the error state with
 * IBV_EVENT_QP_FATAL, as on a ConnectX: its completions cannot be
 * delivered, and a waiter must not hang on a QP that looks healthy.
 */
static void cq_error_qp(uint32_t qpn)
{
	struct emu_qp *qp = emu_qp_by_qpn_locked(qpn);
	struct dev_qp *dq = qp ? dev_qp_of(qp) : NULL;

	if (dq && !qp->opened && qp->attr.state != IBV_QPS_ERR &&
	    qp->attr.state != IBV_QPS_RESET)
		dev_qp_fatal(dq, IBV_EVENT_QP_FATAL);
}

void dev_cq_fail(struct dev_cq *dcq)
{
	if (dcq->overrun)
		return;
	cq_take_grant(dcq);
	dcq->overrun = true;
	emu_post_async_event_locked(dcq->cq->obj.ctx, &dcq->cq->obj, 0, IBV_EVENT_CQ_ERR);
}

/*
 * May n more entries be written from the producer index on?  The consumer
 * index in the doorbell record says how far software has read; a CQ
 * created with IGNORE_OVERRUN trusts software.  A record that cannot be
 * read counts as a full CQ.
 */
bool dev_cq_has_room(const struct dev_cq *dcq, uint32_t n)
{
	const struct emu_cq *cq = dcq->cq;
	uint32_t ci;

	if (cq->flags & IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN)
		return true;
	if (DEV_UNLIKELY(!dev_load_be32((const void *)(uintptr_t)cq->dbrec, &ci)))
		return false;
	return ((dcq->pi + n - 1 - ci) & 0xffffff) < cq->cqe_cnt;
}

/*
 * The entry of c, every byte of it (stale data from the last lap never
 * leaks), into body (cqe_size bytes, the CQE64 last); returns its op_own
 * without the owner bit.
 */
uint8_t dev_cqe_build(const struct emu_cq *cq, const struct dev_cqe *c, uint8_t *body)
{
	struct rf_cqe64 *e = (struct rf_cqe64 *)(body + cq->cqe_size - 64);
	bool err = c->opcode == RF_CQE_REQ_ERR || c->opcode == RF_CQE_RESP_ERR;
	uint8_t fmt = 0;

	memset(body, 0, cq->cqe_size);
	if (err) {
		struct rf_err_cqe *x = (struct rf_err_cqe *)e;

		x->srqn = htobe32(c->uidx & 0xffffff);
		x->vendor_err_synd = c->vendor ? c->vendor :
				     dev_vendor_syndrome(c->opcode, c->syndrome);
		x->syndrome = c->syndrome;
		x->s_wqe_opcode_qpn = htobe32((uint32_t)c->wqe_op << 24 |
					      (c->qpn & 0xffffff));
	} else {
		e->slid = htobe16(c->slid);
		e->flags_rqpn = htobe32((uint32_t)(c->g & 3) << 28 |
					(uint32_t)(c->sl & 0xf) << 24 |
					(c->rqpn & 0xffffff));
		e->srqn_uidx = htobe32(c->uidx & 0xffffff);
		e->imm_inval_pkey = c->imm;
		e->byte_cnt = htobe32(c->byte_cnt);
		e->timestamp = htobe64(emu_clock_cycles());	/* at the write */
		e->sop_drop_qpn = c->eth ?
				  htobe32((uint32_t)c->rx_drops << 24 | (c->flow_tag & 0xffffff)) :
				  htobe32((uint32_t)c->wqe_op << 24 | (c->qpn & 0xffffff));
		e->l4_hdr_type_etc = c->l4_l3_hdr_type;
		e->rss_hash_result = htobe32(c->rss_hash);
		e->rss_hash_type = c->rss_hash_type;
	}
	e->wqe_counter = htobe16(c->wqe_counter);
	e->signature = 0;
	/* a signature error: its own layout after the first 16 bytes */
	if (c->opcode == RF_CQE_SIG_ERR) {
		memset(e, 0, 62);
		memcpy((uint8_t *)e + 16, c->raw, 46);
	}
	/* tag matching: struct mlx5_tm_cqe or the matched message's TMH first */
	if (c->tm_op && !err) {
		memcpy(e, c->tm_head, sizeof(c->tm_head));
		e->app = DEV_CQE_APP_TM;
		e->app_op = c->tm_op;
		e->app_info = htobe16(c->tm_info);
	}
	/*
	 * Scatter-to-CQE: 32 bytes of data replace the first half of the
	 * CQE64 (the fields there, SLID, flags_rqpn ..., are lost, as on a
	 * ConnectX); 64 bytes go into the first half of a 128-byte entry.
	 */
	if (c->scat_len && !err) {
		if (c->scat_max == 64 && cq->cqe_size == 128) {
			memcpy(body, c->scat, c->scat_len);
			fmt = RF_INLINE_SCATTER_64;
		} else if (c->scat_len <= 32) {
			memset(e, 0, 32);
			memcpy(e, c->scat, c->scat_len);
			fmt = RF_INLINE_SCATTER_32;
		}
	}
	return (uint8_t)(c->opcode << 4 | fmt | (c->se ? RF_CQE_SE_MASK : 0));
}

/*
 * Hand the entry at producer index pi to software: the body, then (after
 * a release fence: the body is visible before ownership changes hands)
 * op_own with the owner bit of pi's lap.  False if the ring went away.
 */
bool dev_cq_put(struct dev_cq *dcq, uint32_t pi, const uint8_t *body, uint8_t op_own)
{
	const struct emu_cq *cq = dcq->cq;
	uint8_t *slot = cqe_slot(cq, pi);
	uint8_t own = (uint8_t)(op_own | ((pi / cq->cqe_cnt) & 1));

	if (DEV_UNLIKELY(!dev_copy(slot, body, cq->cqe_size - 1u)))
		return false;
	atomic_thread_fence(memory_order_release);
	return dev_copy(slot + cq->cqe_size - 1u, &own, 1);
}

/* The CQ cannot take this CQE (overrun, or its ring went away). */
void dev_cq_refuse(struct dev_cq *dcq, uint32_t qpn)
{
	dev_cq_fail(dcq);
	cq_error_qp(qpn);
}

/*
 * n entries up to dcq->pi were written: arms.  "Next completion" fires on
 * any CQE, "solicited" on a CQE of a solicited message or on an error (IB
 * spec o11-?, and what mlx5 does).
 */
void dev_cq_written(struct dev_cq *dcq, uint32_t n, bool wakes_solicited)
{
	if (wakes_solicited)
		dcq->last_event_pi = dcq->pi;
	/* moderation counts CQEs from the first one's time (now, not the
	 * iteration's: a period never ends early) */
	if (!dcq->mod_cqes && dcq->cq->mod_period)
		dcq->mod_first = dev_now_ns();
	dcq->mod_cqes += n;
	cq_try_fire(dcq, wakes_solicited);
}

void dev_cq_write_now(struct dev_cq *dcq, const struct dev_cqe *c)
{
	uint8_t body[128];
	uint8_t op_own;
	bool err = c->opcode == RF_CQE_REQ_ERR || c->opcode == RF_CQE_RESP_ERR;

	cq_take_grant(dcq);
	if (DEV_UNLIKELY(dcq->overrun)) {
		if (c->opcode != RF_CQE_RESIZE_CQ)
			cq_error_qp(c->qpn);
		return;
	}
	if (DEV_UNLIKELY(!dev_cq_has_room(dcq, 1))) {
		dev_cq_refuse(dcq, c->qpn);
		return;
	}
	/*
	 * The entry is built here and copied into the ring through the fault
	 * guard (the ring is application memory).
	 */
	op_own = dev_cqe_build(dcq->cq, c, body);
	if (DEV_UNLIKELY(!dev_cq_put(dcq, dcq->pi, body, op_own))) {
		dev_cq_refuse(dcq, c->qpn);	/* the CQ buffer went away */
		return;
	}
	dcq->pi++;
	if (c->opcode != RF_CQE_RESIZE_CQ)
		dev_cq_written(dcq, 1, c->se || err);
}

/*
 * A CQ created with compression may hold the CQE back to write it in a
 * session with the next ones (cqe_zip.c).
 */
void dev_cq_write(struct emu_cq *cq, const struct dev_cqe *c)
{
	struct dev_cq *dcq = dev_cq_of(cq);

	if (DEV_UNLIKELY(!dcq))
		return;
	if (dcq->zip && dev_zip_hold(dcq, c))
		return;
	dev_cq_write_now(dcq, c);
}

/*
 * An arm request: sn<<28 | cmd | ci.  A request whose sn equals the sn of
 * the arm that already fired is stale (it raced with the event and libmlx5
 * has not yet counted that event); hardware drops it, so do we.
 */
void dev_cq_arm_doorbell(struct dev_cq *dcq, uint32_t word)
{
	struct emu_cq *cq = dcq->cq;
	uint8_t sn = (word >> 28) & 3;
	bool sol = (word & (1u << 24)) != 0;
	uint32_t ci = word & 0xffffff;

	cq_take_grant(dcq);
	dcq->last_arm_word = word;
	if (dcq->overrun || sn == dcq->fired_sn)
		return;
	if (cq->armed && cq->arm_sn == sn && (!sol || cq->armed_solicited) &&
	    cq->armed_solicited == sol)
		return;		/* the same request seen twice */
	/* a pending "next completion" arm is not weakened to "solicited" */
	if (cq->armed && !cq->armed_solicited)
		sol = false;
	cq->armed = true;
	cq->armed_solicited = sol;
	cq->arm_sn = sn;
	/* moderation counts the CQEs from the arm on */
	dcq->mod_cqes = 0;
	dev_cq_stop_timer(dcq);

	/* CQEs already written beyond ci fire the arm at once. */
	if (sol) {
		if (dev_psn_diff(dcq->last_event_pi & 0xffffff, ci) > 0)
			cq_try_fire(dcq, true);
	} else if (dev_psn_diff(dcq->pi & 0xffffff, ci) > 0) {
		cq_try_fire(dcq, false);
	}
}

/*
 * The arm doorbell register is shared by every CQ on the UAR page, so a
 * second arm can overwrite the first before the engine looks.  The doorbell
 * record holds each CQ's last arm word as well: re-reading it after any arm
 * doorbell on the page recovers the overwritten ones.
 */
void dev_cq_check_arms(struct dev_cq *dcq)
{
	uint32_t word;

	if (!dev_load_be32((const uint8_t *)(uintptr_t)dcq->cq->dbrec + 4, &word))
		return;		/* unreadable record: no arm can be seen */

	/*
	 * Only a changed word is a new request: a never-armed CQ's record
	 * reads 0, which is also a valid first arm, and only the doorbell
	 * itself (it names the CQN) can tell the two apart.
	 */
	if (word == dcq->last_arm_word)
		return;
	dcq->last_arm_word = word;
	dev_cq_arm_doorbell(dcq, word);
}

/*
 * RESIZE_CQ: libmlx5 copies the unpolled CQEs into the new ring up to a
 * RESIZE CQE it expects in the old one; the kernel (kernel/cq.c) writes
 * that marker at our producer index and switches rings.  The marker takes
 * one index.
 */
void dev_cq_resize(struct dev_cq *dcq)
{
	cq_take_grant(dcq);
	if (dcq->zip)
		dev_zip_flush(dcq);	/* what was held goes into the old ring */
	emu_cq_finish_resize_locked(dcq->cq, dcq->pi);
	dcq->pi++;
}
