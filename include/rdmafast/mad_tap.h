/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/mad_tap.h - a tap on a UD QP: every MAD the QP sends or
 * receives that passes a snoop filter (rdmafast/mad.h) is handed to a
 * callback, received ones at poll time (past the 40-byte GRH area), sent
 * ones when their send completes, with the completion's status.
 *
 *	struct rf_mad_snoop_filter f = { RF_MAD_CLASS_CM, 0, 0, 0, { 0 } };
 *	struct rf_mad_tap_send ring[256];    >= the SQ's basic blocks
 *	struct rf_mad_tap tap;
 *
 *	rf_mad_tap_init(&tap, &qp.sq, &f, sizeof(f), ring, 256, show, rbuf, ctx);
 *	rf_mad_tap_post(&tap, &qp.sq, &av, rqpn, qkey, lkey, mad, 256,
 *			RF_SEND_SIGNALED, wr_id);
 *	n = rf_mad_tap_poll(&tap, &cq, wc, 16);   show() runs before it returns
 *
 * The tap is a wrapper, not a hook: rf_sq_post_ud_send() and rf_cq_poll()
 * know nothing of it, so a QP without a tap costs not one instruction
 * more. Sends posted past the tap (rf_sq_post_ud_send() directly) are not
 * seen; polls past it (rf_cq_poll()) skip its callback, and the sends they
 * complete are reported at the next completion the tap sees.
 *
 * Unsignaled sends have no CQE of their own: a send CQE completes every
 * earlier WQE of the queue (rdmafast(7), QUEUE SIZING), so the tap
 * reports those with RF_WC_SUCCESS when a later one completes. An error
 * CQE names the failing WQE; those after it complete with
 * RF_WC_WR_FLUSH_ERR (cancelled), as the device flushes them.
 */
#ifndef RDMAFAST_MAD_TAP_H
#define RDMAFAST_MAD_TAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/types.h>
#include <rdmafast/mad.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_ud.h>
#include <rdmafast/cq.h>
#include <rdmafast/cq_poll.h>

RF_BEGIN_DECLS

/* One MAD the tap hands over. */
struct rf_mad_tap_event {
	const void        *mad;		/* the MAD, in the caller's buffer */
	uint32_t           len;
	enum rf_mad_dir    dir;		/* RF_MAD_SENT or RF_MAD_RECEIVED */
	/* sent: the send's completion status (enum rf_wc_status); received: 0 */
	unsigned           status;
	/*
	 * The completion that brought it: a received MAD's own, or the
	 * send CQE that completed this send (for an unsignaled send, a later
	 * WQE's).
	 */
	const struct rf_wc *wc;
	uint64_t           wr_id;	/* of the send or receive WQE */
};

typedef void rf_mad_tap_fn(void *ctx, const struct rf_mad_tap_event *ev);

/*
 * The buffer a receive completion wrote into (its GRH area first), as the
 * caller posted it: the tap cannot know how wr_id names buffers.
 */
typedef const void *rf_mad_tap_buf_fn(void *ctx, const struct rf_wc *wc);

/* A send the tap saw posted, waiting for its completion. */
struct rf_mad_tap_send {
	const void *mad;
	uint64_t    wr_id;
	uint32_t    len;
	uint16_t    wqe_counter;	/* the WQE's first BB, as the CQE names it */
};

struct rf_mad_tap {
	struct rf_mad_snoop_filter filter;
	rf_mad_tap_fn          *fn;
	rf_mad_tap_buf_fn      *recv_buf;
	void                   *ctx;
	uint32_t                qpn;
	struct rf_mad_tap_send *ring;	/* [ring_mask + 1] */
	uint32_t                ring_mask;
	uint32_t                head;	/* next send posted */
	uint32_t                tail;	/* oldest send not completed */
};

/*
 * rf_mad_tap_init - tap the UD queue sq: MADs that pass filter f (fsize:
 * sizeof(*f)) go to fn(ctx, ...); recv_buf(ctx, wc) names a receive's
 * buffer. ring holds ring_len sends in flight: a power of two no smaller
 * than the queue's basic blocks (every WQE takes at least one), so that
 * it fills only when the queue does. The filter is copied.
 * Returns 0, or -EINVAL: a wrong fsize, not a UD queue, a ring too small
 * or not a power of two, no callback.
 */
static inline RF_COLD int rf_mad_tap_init(struct rf_mad_tap *t, const struct rf_sq *sq,
					  const struct rf_mad_snoop_filter *f, size_t fsize,
					  struct rf_mad_tap_send *ring, uint32_t ring_len,
					  rf_mad_tap_fn *fn, rf_mad_tap_buf_fn *recv_buf,
					  void *ctx)
{
	if (rf_mad_snoop_check(f, fsize) || sq->kind != RF_QP_UD || !fn || !recv_buf ||
	    !ring || ring_len < sq->wqe_mask + 1 || (ring_len & (ring_len - 1)))
		return -EINVAL;
	t->filter = *f;
	t->fn = fn;
	t->recv_buf = recv_buf;
	t->ctx = ctx;
	t->qpn = sq->qpn;
	t->ring = ring;
	t->ring_mask = ring_len - 1;
	t->head = 0;
	t->tail = 0;
	return 0;
}

/*
 * rf_mad_tap_post - rf_sq_post_ud_send() of the len bytes at mad
 * (registered under lkey), remembered for the tap. Same arguments and
 * returns; the MAD buffer must stay as it is until the send completes.
 */
static inline int rf_mad_tap_post(struct rf_mad_tap *t, struct rf_sq *sq,
				  const struct rf_wqe_av *av, uint32_t remote_qpn,
				  uint32_t qkey, uint32_t lkey, const void *mad, uint32_t len,
				  uint32_t flags, uint64_t wr_id)
{
	struct rf_mad_tap_send *s = &t->ring[t->head & t->ring_mask];
	uint16_t counter = (uint16_t)sq->pi;
	int ret;

	if (RF_UNLIKELY(t->head - t->tail > t->ring_mask))
		return -ENOSPC;
	ret = rf_sq_post_ud_send(sq, av, remote_qpn, qkey, NULL, lkey,
				 (uint64_t)(uintptr_t)mad, len, 0, 0, flags, wr_id);
	if (ret)
		return ret;
	s->mad = mad;
	s->wr_id = wr_id;
	s->len = len;
	s->wqe_counter = counter;
	t->head++;
	return 0;
}

/*
 * rf_mad_tap_scan - hand over the MADs of n completion records just
 * polled (those of the tap's QP; others are left alone). A send CQE
 * completes the sends posted up to its WQE: the earlier ones with
 * RF_WC_SUCCESS, its own with the CQE's status. A CQE naming no send the
 * tap remembers (one posted past it) completes nothing.
 */
static inline void rf_mad_tap_scan(struct rf_mad_tap *t, const struct rf_wc *wc, int n)
{
	struct rf_mad_tap_event ev;
	int i;

	for (i = 0; i < n; i++) {
		const struct rf_wc *w = &wc[i];
		uint32_t k;

		if (w->qp_num != t->qpn)
			continue;
		ev.wc = w;
		if (w->opcode & RF_WC_RECV) {
			ev.mad = rf_ud_mad(w, t->recv_buf(t->ctx, w), &ev.len);
			ev.dir = RF_MAD_RECEIVED;
			ev.status = 0;
			ev.wr_id = w->wr_id;
			if (ev.mad && rf_mad_snoop_match(&t->filter, ev.mad, ev.len, ev.dir, 0))
				t->fn(t->ctx, &ev);
			continue;
		}
		for (k = t->tail; k != t->head; k++)
			if (t->ring[k & t->ring_mask].wqe_counter == w->wqe_counter)
				break;
		if (k == t->head)
			continue;
		ev.dir = RF_MAD_SENT;
		while (t->tail != k + 1) {
			const struct rf_mad_tap_send *s = &t->ring[t->tail & t->ring_mask];

			t->tail++;
			ev.mad = s->mad;
			ev.len = s->len;
			ev.status = t->tail == k + 1 ? w->status : (unsigned)RF_WC_SUCCESS;
			ev.wr_id = s->wr_id;
			if (rf_mad_snoop_match(&t->filter, ev.mad, ev.len, ev.dir, ev.status))
				t->fn(t->ctx, &ev);
		}
	}
}

/*
 * rf_mad_tap_poll - rf_cq_poll(), then rf_mad_tap_scan() over what it
 * returned (the callback runs before this returns). Returns what
 * rf_cq_poll() returned.
 */
static inline int rf_mad_tap_poll(struct rf_mad_tap *t, struct rf_cq *cq, struct rf_wc *wc,
				  int n)
{
	int got = rf_cq_poll(cq, wc, n);

	rf_mad_tap_scan(t, wc, got);
	return got;
}

RF_END_DECLS

#endif /* RDMAFAST_MAD_TAP_H */
