/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rc.c - reliability of RC and XRC: acknowledgements, NAKs, the
 * transport retry timer and RNR back-off, as IBA chapter 9.7 describes.
 *
 * Go-back-N: the responder accepts only the expected PSN; a gap earns one
 * sequence NAK; duplicates are re-acknowledged (READs and atomics are
 * answered again, atomics from a replay cache so they are not re-executed).
 * The requester retransmits from the first unacknowledged PSN when the
 * timer (4.096 us * 2^timeout) expires, at most retry_cnt times, and after
 * an RNR NAK waits the responder's min_rnr_timer, at most rnr_retry times
 * (7 = forever).  A NAK or a response also acknowledges every earlier PSN.
 */
#include "device.h"

uint64_t dev_rc_timeout_ns(uint8_t timeout)
{
	return timeout ? 4096ull << (timeout > 31 ? 31 : timeout) : 0;
}

/* IBA table 45, in units of 10 us; code 0 is the longest. */
static const uint16_t rnr_10us[32] = {
	0 /* 655.36 ms, below */, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48,
	64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
	6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint64_t dev_rnr_delay_ns(uint8_t timer)
{
	uint64_t u = timer ? rnr_10us[timer & 31] : 65536;

	return u * 10000;
}

/*
 * The entries that may have packets out: up to ent_emit, and the entry at
 * ent_emit too once part of it went out (a message longer than the window
 * is emitted in pieces, ACKs for its first pieces coming meanwhile).
 */
static uint32_t ent_out_end(const struct dev_qp *dq)
{
	if (dq->ent_emit != dq->ent_tail && dq->ent[dq->ent_emit & dq->ent_mask].sent)
		return dq->ent_emit + 1;
	return dq->ent_emit;
}

/* Does e wait for an ACK or a response? */
static bool ent_waits(const struct dev_ent *e)
{
	return e->state == DENT_SENT || (e->state == DENT_NEW && e->sent > e->acked);
}

void dev_rc_timer_start(struct dev_qp *dq)
{
	if (!dq->deadline && dq->qp->attr.timeout) {
		dq->deadline = dev_eng.now + dev_rc_timeout_ns(dq->qp->attr.timeout);
		dev_eng.timers++;
	}
}

static void arm_timer(struct dev_qp *dq)
{
	uint64_t t = dev_rc_timeout_ns(dq->qp->attr.timeout);
	bool waiting = false;

	for (uint32_t i = dq->ent_head, end = ent_out_end(dq); i != end; i++)
		if (ent_waits(&dq->ent[i & dq->ent_mask])) {
			waiting = true;
			break;
		}
	if (waiting && t) {
		if (!dq->deadline)
			dev_eng.timers++;
		dq->deadline = dev_eng.now + t;
	} else if (dq->deadline) {
		dq->deadline = 0;
		dev_eng.timers--;
	}
}

/*
 * Go back to psn: every earlier PSN has arrived (each caller knows it from
 * an ACK, a NAK or the count of packets acknowledged).
 */
void dev_rc_rewind(struct dev_qp *dq, uint32_t psn)
{
	uint32_t i, end = ent_out_end(dq);

	for (i = dq->ent_head; i != end; i++) {
		struct dev_ent *e = &dq->ent[i & dq->ent_mask];
		int32_t d;

		if (e->flags & DENTF_LOCAL || e->state == DENT_DONE)
			continue;
		d = dev_psn_diff(psn, e->psn);
		if (d < 0 || (uint32_t)d < e->npkt) {
			/*
			 * READs are asked for whole again, other messages
			 * resent from the PSN on.  A READ keeps the responses
			 * it has: the rest may still come from the first
			 * answer, or from the second, whichever arrives.
			 */
			e->sent = (e->flags & DENTF_RESP) || d < 0 ? 0 : (uint32_t)d;
			e->acked = e->sent;
			e->state = DENT_NEW;
			break;
		}
	}
	if (i == end)
		return;
	dq->ent_emit = i;
	for (i++; i != dq->ent_tail; i++) {
		struct dev_ent *e = &dq->ent[i & dq->ent_mask];

		if (e->flags & DENTF_LOCAL || e->state == DENT_DONE)
			continue;
		e->sent = 0;
		e->acked = 0;
		e->state = DENT_NEW;
	}
	dq->pkts_out = 0;
	dev_qp_set_busy(dq);
}

/*
 * READ/atomic e lost a response: ask again from the first missing one.
 * Once: the responses already on their way past the gap would each tell
 * the same, and every extra request restarts the responder's answer (a
 * storm on a long READ); the next expected response, or the timer, allows
 * the next one.
 */
static void rd_ask_again(struct dev_qp *dq, const struct dev_ent *e)
{
	if (dq->rd_retry)
		return;
	dq->rd_retry = true;
	dev_rc_rewind(dq, e->psn);
}

/* Packets of e up to its n-th acknowledged: those out leave the window. */
static void ack_pkts(struct dev_qp *dq, const struct dev_ent *e, uint32_t n)
{
	uint32_t out = (n < e->sent ? n : e->sent);

	out = out > e->acked ? out - e->acked : 0;
	dq->pkts_out -= dq->pkts_out < out ? dq->pkts_out : out;
}

/*
 * Everything up to and including psn has arrived.  A READ/atomic inside
 * that range without its response lost the response: ask again.  A WRITE
 * or SEND partly inside it has that part acknowledged: its packets leave
 * the window, and a retransmission starts after them.
 */
static void ack_upto(struct dev_qp *dq, uint32_t psn)
{
	for (uint32_t i = dq->ent_head, end = ent_out_end(dq); i != end; i++) {
		struct dev_ent *e = &dq->ent[i & dq->ent_mask];
		uint32_t n;

		if (e->state == DENT_DONE)
			continue;
		if (dev_psn_diff(psn, e->psn + e->npkt - 1) < 0) {
			if (dev_psn_diff(psn, e->psn) < 0)
				return;
			if (e->flags & DENTF_RESP) {
				rd_ask_again(dq, e);
				return;
			}
			n = (uint32_t)dev_psn_diff(psn, e->psn) + 1;
			if (n > e->acked) {
				ack_pkts(dq, e, n);
				e->acked = n;
				if (e->sent < n)
					e->sent = n;	/* arrived: not sent again */
			}
			return;
		}
		if (e->flags & DENTF_RESP) {
			rd_ask_again(dq, e);
			return;
		}
		ack_pkts(dq, e, e->npkt);
		e->state = DENT_DONE;
	}
}

/*
 * The requester's READ/atomic limit (max_rd_atomic, the initiator depth; mlx5's
 * log_sra_max): requests sent whose responses have not all arrived.
 */
unsigned dev_rc_rd_unanswered(const struct dev_qp *dq)
{
	unsigned n = 0;

	for (uint32_t i = dq->ent_head; i != dq->ent_emit; i++) {
		const struct dev_ent *e = &dq->ent[i & dq->ent_mask];

		if ((e->flags & DENTF_RESP) && e->state == DENT_SENT)
			n++;
	}
	return n;
}

bool dev_rc_rd_slot(const struct dev_qp *dq)
{
	unsigned n = dev_rc_rd_unanswered(dq), max = dev_rd_atomic_limit(dq->qp->attr.max_rd_atomic);

	if (n > wire_stats.rd_outstanding_max)
		wire_stats.rd_outstanding_max = n;
	return n < max;
}

static struct dev_ent *ent_of_psn(struct dev_qp *dq, uint32_t psn)
{
	for (uint32_t i = dq->ent_head, end = ent_out_end(dq); i != end; i++) {
		struct dev_ent *e = &dq->ent[i & dq->ent_mask];
		int32_t d;

		if (e->flags & DENTF_LOCAL)
			continue;
		d = dev_psn_diff(psn, e->psn);
		if (d >= 0 && (uint32_t)d < e->npkt)
			return e;
	}
	return NULL;
}

static uint8_t nak_syndrome(uint8_t nak)
{
	switch (nak) {
	case DNAK_INV_REQ:	return RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR;
	case DNAK_REM_ACCESS:	return RF_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	default:		return RF_CQE_SYNDROME_REMOTE_OP_ERR;
	}
}

/*
 * Does a READ/atomic before e still wait for a response?  ack_upto() has
 * asked for it again (or had, rd_retry), and e's response is dropped.
 */
static bool rd_missing_before(const struct dev_qp *dq, const struct dev_ent *e)
{
	for (uint32_t i = dq->ent_head; &dq->ent[i & dq->ent_mask] != e; i++) {
		const struct dev_ent *x = &dq->ent[i & dq->ent_mask];

		if ((x->flags & DENTF_RESP) && x->state != DENT_DONE)
			return true;
	}
	return false;
}

void dev_rc_on_response(struct dev_qp *dq, const struct dev_pkt *p)
{
	struct emu_qp *qp = dq->qp;
	struct dev_ent *e;

	if (qp->attr.state != IBV_QPS_RTS && qp->attr.state != IBV_QPS_SQD)
		return;

	switch (p->op) {
	case DOP_ACK:
		ack_upto(dq, p->psn);
		break;
	case DOP_READ_RESP:
	case DOP_ATOMIC_RESP:
		e = ent_of_psn(dq, p->psn);
		if (!e || e->state != DENT_SENT)
			break;		/* a late duplicate */
		ack_upto(dq, (e->psn - 1) & DEV_PSN_MASK);
		/*
		 * The response of a later request while an earlier READ or
		 * atomic is unanswered: its response was lost, ack_upto() has
		 * asked for it again (rd_ask_again()), and this one is dropped as an HCA drops
		 * responses past a gap (they come again after the retry).
		 * Completing it would free an initiator-depth slot, letting
		 * more requests than max_dest_rd_atomic past the unanswered one
		 * reach the responder, whose replay cache would then no longer
		 * hold it: its retries would go unanswered to RETRY_EXC_ERR.
		 */
		if (e->state != DENT_SENT || rd_missing_before(dq, e))
			break;
		/*
		 * A response of another kind than its request (READ data for a
		 * WRITE or SEND, an atomic ACK for a READ ...) is what the IBA
		 * calls a bad response: the requester fails the WQE.
		 */
		if (!(e->flags & DENTF_RESP) ||
		    (p->op == DOP_READ_RESP) != (e->op == RF_OPCODE_RDMA_READ)) {
			e->syndrome = RF_CQE_SYNDROME_BAD_RESP_ERR;
			e->state = DENT_DONE;
			break;
		}
		if ((uint32_t)dev_psn_diff(p->psn, e->psn) != e->resp_next) {
			/* past a gap: one is lost, ask from it; before: a duplicate */
			if ((uint32_t)dev_psn_diff(p->psn, e->psn) > e->resp_next)
				rd_ask_again(dq, e);
			break;
		}
		dq->rd_retry = false;
		dev_rc_read_resp_scatter(dq, e, p);
		e->resp_next++;
		if (e->syndrome || (p->flags & DPKT_LAST) || e->resp_next == e->npkt) {
			e->state = DENT_DONE;
			if (dq->pkts_out)
				dq->pkts_out--;
		}
		break;
	case DOP_NAK:
		ack_upto(dq, (p->psn - 1) & DEV_PSN_MASK);
		e = ent_of_psn(dq, p->psn);
		if (!e || e->state == DENT_DONE)
			break;
		if (p->nak == DNAK_SEQ) {
			dev_rc_rewind(dq, p->psn);
		} else if (p->nak == DNAK_RNR) {
			if (qp->attr.rnr_retry != 7 && dq->rnr_left-- <= 0) {
				e->syndrome = RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR;
				e->state = DENT_DONE;
				break;
			}
			dev_rc_rewind(dq, p->psn);
			if (!dq->rnr_until)
				dev_eng.timers++;
			dq->rnr_until = dev_eng.now + dev_rnr_delay_ns(p->rnr_timer);
		} else {
			e->syndrome = nak_syndrome(p->nak);
			e->state = DENT_DONE;
		}
		break;
	default:
		return;
	}
	/* progress resets the retry budget (IBA o9-?: per unacknowledged PSN) */
	dq->retry_left = qp->attr.retry_cnt;
	if (p->op != DOP_NAK || p->nak != DNAK_RNR)
		dq->rnr_left = qp->attr.rnr_retry;
	arm_timer(dq);
	dev_qp_set_busy(dq);
}

static void timer_expired(struct dev_qp *dq)
{
	struct dev_ent *e = NULL;

	for (uint32_t i = dq->ent_head, end = ent_out_end(dq); i != end; i++) {
		struct dev_ent *x = &dq->ent[i & dq->ent_mask];

		if (ent_waits(x)) {
			e = x;
			break;
		}
	}
	dq->deadline = 0;
	dev_eng.timers--;
	if (!e)
		return;
	if (dq->retry_left-- <= 0) {
		e->syndrome = RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
		e->state = DENT_DONE;
		dev_qp_set_busy(dq);
		return;
	}
	/* go back N: from the first PSN not known to have arrived */
	dq->rd_retry = false;
	dev_rc_rewind(dq, (e->psn + ((e->flags & DENTF_RESP) ? 0 : e->acked)) & DEV_PSN_MASK);
	dq->deadline = dev_eng.now + dev_rc_timeout_ns(dq->qp->attr.timeout);
	dev_eng.timers++;
}

void dev_rc_timers(void)
{
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next) {
		if (dq->rnr_until && dev_eng.now >= dq->rnr_until)
			dev_qp_set_busy(dq);	/* sq_emit clears it */
		if (dq->deadline && dev_eng.now >= dq->deadline)
			timer_expired(dq);
	}
}

/* The idle engine sleeps no longer than this. */
uint64_t dev_rc_next_deadline(void)
{
	uint64_t t = 0;

	if (!dev_eng.timers)
		return 0;
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next) {
		if (dq->rnr_until && (!t || dq->rnr_until < t))
			t = dq->rnr_until;
		if (dq->deadline && (!t || dq->deadline < t))
			t = dq->deadline;
	}
	return t;
}
