/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The snoop filter of libibumad (rdmafast/mad.h: struct
 * rf_mad_snoop_filter, rf_mad_snoop_match) on every field's "0 is all",
 * the errors and OUI rules and the size check; and the tap
 * (rdmafast/mad_tap.h) on a UD queue, a receive queue and a CQ in host
 * memory, whose CQEs the test writes as the device would.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>
#include <rdmafast/mad_tap.h>

#include "rftest.h"

enum { QPN = 0x2345, CQN = 7 };

/* A 256-byte MAD at p: class, class version, status, attribute, OUI. */
static void put_snoop_mad(uint8_t *p, uint8_t cls, uint8_t ver, uint16_t status,
			  uint16_t attr, uint32_t oui)
{
	memset(p, 0, RF_MAD_LEN);
	p[0] = RF_MAD_BASE_VERSION;
	p[1] = cls;
	p[2] = ver;
	p[3] = RF_MAD_METHOD_GET;
	p[4] = (uint8_t)(status >> 8);
	p[5] = (uint8_t)status;
	p[16] = (uint8_t)(attr >> 8);
	p[17] = (uint8_t)attr;
	p[37] = (uint8_t)(oui >> 16);
	p[38] = (uint8_t)(oui >> 8);
	p[39] = (uint8_t)oui;
}

static struct rf_mad_snoop_filter sf(uint8_t cls, uint8_t ver, uint16_t attr, uint8_t errors,
				     uint32_t oui)
{
	struct rf_mad_snoop_filter f;

	memset(&f, 0, sizeof(f));
	f.mgmt_class = cls;
	f.mgmt_version = ver;
	f.attr_id = attr;
	f.errors = errors;
	f.oui[0] = (uint8_t)(oui >> 16);
	f.oui[1] = (uint8_t)(oui >> 8);
	f.oui[2] = (uint8_t)oui;
	return f;
}

static int rx(const struct rf_mad_snoop_filter *f, const uint8_t *m)
{
	return rf_mad_snoop_match(f, m, RF_MAD_LEN, RF_MAD_RECEIVED, 0);
}

Test(mad_snoop, class_version_attribute_zero_is_all)
{
	uint8_t m[RF_MAD_LEN];
	struct rf_mad_snoop_filter f;

	put_snoop_mad(m, RF_MAD_CLASS_SA, 2, 0, RF_MAD_ATTR_PATH_RECORD, 0);
	f = sf(0, 0, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 1, "everything");
	/* class 0: version and attribute are ignored */
	f = sf(0, 9, 0x77, 0, 0);
	cr_assert_eq(rx(&f, m), 1, "class 0 ignores version and attribute");

	f = sf(RF_MAD_CLASS_SA, 0, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 1);
	f = sf(RF_MAD_CLASS_CM, 0, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 0, "another class");

	f = sf(RF_MAD_CLASS_SA, 2, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 1);
	f = sf(RF_MAD_CLASS_SA, 1, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 0, "another class version");

	f = sf(RF_MAD_CLASS_SA, 0, RF_MAD_ATTR_PATH_RECORD, 0, 0);
	cr_assert_eq(rx(&f, m), 1);
	f = sf(RF_MAD_CLASS_SA, 0, RF_MAD_ATTR_MCMEMBER_RECORD, 0, 0);
	cr_assert_eq(rx(&f, m), 0, "another attribute");
	f = sf(RF_MAD_CLASS_SA, 2, RF_MAD_ATTR_PATH_RECORD, 0, 0);
	cr_assert_eq(rx(&f, m), 1, "all three");

	/* the attribute is compared whole, both bytes */
	put_snoop_mad(m, RF_MAD_CLASS_SA, 2, 0, 0x1035, 0);
	f = sf(RF_MAD_CLASS_SA, 0, RF_MAD_ATTR_PATH_RECORD, 0, 0);
	cr_assert_eq(rx(&f, m), 0, "high byte of the attribute");

	/* shorter than a header: never */
	f = sf(0, 0, 0, 0, 0);
	cr_assert_eq(rf_mad_snoop_match(&f, m, RF_MAD_HDR_LEN, RF_MAD_RECEIVED, 0), 1);
	cr_assert_eq(rf_mad_snoop_match(&f, m, RF_MAD_HDR_LEN - 1, RF_MAD_RECEIVED, 0), 0);
}

Test(mad_snoop, errors_selects_failed_sends_and_nonzero_status)
{
	uint8_t ok[RF_MAD_LEN], bad[RF_MAD_LEN];
	struct rf_mad_snoop_filter all = sf(0, 0, 0, 0, 0), err = sf(0, 0, 0, 1, 0);

	put_snoop_mad(ok, RF_MAD_CLASS_PERF, 1, 0, 0x12, 0);
	put_snoop_mad(bad, RF_MAD_CLASS_PERF, 1, 0x0100, 0x12, 0);	/* low byte 0 */

	/* without errors: everything, whatever happened to it */
	cr_assert_eq(rf_mad_snoop_match(&all, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_SUCCESS), 1);
	cr_assert_eq(rf_mad_snoop_match(&all, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_WR_FLUSH_ERR), 1);
	cr_assert_eq(rx(&all, bad), 1);

	/* received: only a non-zero status (either byte) */
	cr_assert_eq(rx(&err, ok), 0);
	cr_assert_eq(rx(&err, bad), 1);
	bad[4] = 0;
	bad[5] = 0x1c;
	cr_assert_eq(rx(&err, bad), 1, "status low byte");

	/* sent: only those that completed in error, not cancelled ones */
	cr_assert_eq(rf_mad_snoop_match(&err, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_SUCCESS), 0);
	cr_assert_eq(rf_mad_snoop_match(&err, bad, RF_MAD_LEN, RF_MAD_SENT, RF_WC_SUCCESS), 0,
		     "a sent MAD that completed: not an error, whatever its status");
	cr_assert_eq(rf_mad_snoop_match(&err, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_WR_FLUSH_ERR), 0,
		     "cancelled");
	cr_assert_eq(rf_mad_snoop_match(&err, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_LOC_LEN_ERR), 1);
	cr_assert_eq(rf_mad_snoop_match(&err, ok, RF_MAD_LEN, RF_MAD_SENT, RF_WC_LOC_PROT_ERR), 1);

	/* errors narrows the other fields, it does not replace them */
	err = sf(RF_MAD_CLASS_CM, 0, 0, 1, 0);
	cr_assert_eq(rx(&err, bad), 0, "status set, wrong class");
}

Test(mad_snoop, oui_restricts_vendor_classes_only)
{
	uint8_t m[RF_MAD_LEN];
	struct rf_mad_snoop_filter f;

	f = sf(0, 0, 0, 0, 0x001405);
	for (unsigned cls = RF_MAD_CLASS_VENDOR_OUI_FIRST; cls <= RF_MAD_CLASS_VENDOR_OUI_LAST;
	     cls++) {
		put_snoop_mad(m, (uint8_t)cls, 1, 0, 1, 0x001405);
		cr_assert_eq(rx(&f, m), 1, "class %#x, its OUI", cls);
		put_snoop_mad(m, (uint8_t)cls, 1, 0, 1, 0x001406);
		cr_assert_eq(rx(&f, m), 0, "class %#x, another OUI", cls);
		put_snoop_mad(m, (uint8_t)cls, 1, 0, 1, 0x011405);
		cr_assert_eq(rx(&f, m), 0, "class %#x, first OUI byte", cls);
	}
	/* outside 0x30..0x4f the OUI field is data, not an OUI */
	put_snoop_mad(m, 0x2f, 1, 0, 1, 0x999999);
	cr_assert_eq(rx(&f, m), 1);
	put_snoop_mad(m, 0x50, 1, 0, 1, 0x999999);
	cr_assert_eq(rx(&f, m), 1);
	put_snoop_mad(m, RF_MAD_CLASS_SA, 1, 0, 1, 0x999999);
	cr_assert_eq(rx(&f, m), 1);
	/* with a class: both must hold */
	f = sf(0x31, 0, 0, 0, 0x001405);
	put_snoop_mad(m, 0x31, 1, 0, 1, 0x001405);
	cr_assert_eq(rx(&f, m), 1);
	put_snoop_mad(m, 0x31, 1, 0, 1, 0x002c9);
	cr_assert_eq(rx(&f, m), 0);
	/* OUI 0: every OUI */
	f = sf(0x31, 0, 0, 0, 0);
	cr_assert_eq(rx(&f, m), 1);
	/* a vendor MAD too short to hold its OUI does not pass an OUI filter */
	f = sf(0, 0, 0, 0, 0x0002c9);
	cr_assert_eq(rf_mad_snoop_match(&f, m, RF_MAD_VENDOR_OUI_OFFSET + 3, RF_MAD_RECEIVED, 0), 1);
	cr_assert_eq(rf_mad_snoop_match(&f, m, RF_MAD_VENDOR_OUI_OFFSET + 2, RF_MAD_RECEIVED, 0), 0);
}

Test(mad_snoop, the_size_must_be_the_structs)
{
	struct rf_mad_snoop_filter f = sf(0, 0, 0, 0, 0);

	cr_assert_eq(sizeof(f), 8);
	cr_assert_eq(rf_mad_snoop_check(&f, sizeof(f)), 0);
	cr_assert_eq(rf_mad_snoop_check(&f, sizeof(f) - 1), -EINVAL);
	cr_assert_eq(rf_mad_snoop_check(&f, sizeof(f) + 8), -EINVAL);
	cr_assert_eq(rf_mad_snoop_check(&f, sizeof(&f) + 1), -EINVAL);
	cr_assert_eq(rf_mad_snoop_check(NULL, sizeof(f)), -EINVAL);
}

/* ---- The tap ---------------------------------------------------------- */

enum { MAX_EV = 16, NRECV = 8 };

struct seen {
	struct rf_mad_tap_event ev[MAX_EV];
	int n;
	uint8_t *rbuf;	/* NRECV receive buffers of RF_UD_GRH_LEN + RF_MAD_LEN */
};

static void on_mad(void *ctx, const struct rf_mad_tap_event *ev)
{
	struct seen *s = (struct seen *)ctx;

	cr_assert(s->n < MAX_EV);
	s->ev[s->n++] = *ev;
}

static const void *recv_buf(void *ctx, const struct rf_wc *wc)
{
	struct seen *s = (struct seen *)ctx;

	return s->rbuf + wc->wr_id * (RF_UD_GRH_LEN + RF_MAD_LEN);
}

struct tap_rig {
	struct rft_sq s;
	struct rft_rq r;
	struct rft_cq c;
	struct rf_mad_tap tap;
	struct rf_mad_tap_send ring[16];
	struct rf_wqe_av av;
	struct seen seen;
	uint8_t mad[8][RF_MAD_LEN];
	uint32_t ci;	/* next CQE index the test writes */
};

static void rig_open(struct tap_rig *g, const struct rf_mad_snoop_filter *f)
{
	memset(g, 0, sizeof(*g));
	cr_assert_eq(rft_sq_init(&g->s, RF_QP_UD, 16, 0, 0, 1, 0, QPN), 0);
	cr_assert_eq(rft_rq_init(&g->r, 16), 0);
	cr_assert_eq(rft_cq_init(&g->c, 16, 64, CQN), 0);
	cr_assert_eq(rf_cq_attach(&g->c.cq, QPN, &g->s.sq, &g->r.rq, NULL), 0);
	g->seen.rbuf = (uint8_t *)rft_zalloc(NRECV * (RF_UD_GRH_LEN + RF_MAD_LEN));
	cr_assert_eq(rf_mad_tap_init(&g->tap, &g->s.sq, f, sizeof(*f), g->ring, 16, on_mad,
				     recv_buf, &g->seen), 0);
}

static void rig_close(struct tap_rig *g)
{
	free(g->seen.rbuf);
	free(g->r.buf);
	rft_cq_fini(&g->c);
	rft_sq_fini(&g->s);
}

/* Post mad[i] through the tap; returns the WQE's first BB. */
static uint16_t rig_post(struct tap_rig *g, int i, uint32_t flags)
{
	uint16_t at = (uint16_t)g->s.sq.pi;

	cr_assert_eq(rf_mad_tap_post(&g->tap, &g->s.sq, &g->av, 1, RF_MAD_QKEY, 0x77, g->mad[i],
				     RF_MAD_LEN, flags, 100 + (uint64_t)i), 0);
	return at;
}

Test(mad_tap, init_refuses_what_it_cannot_tap)
{
	struct tap_rig g;
	struct rf_mad_snoop_filter f = sf(0, 0, 0, 0, 0);
	struct rft_sq rc;
	struct rf_mad_tap t;

	rig_open(&g, &f);
	cr_assert_eq(rf_mad_tap_init(&t, &g.s.sq, &f, sizeof(f) - 1, g.ring, 16, on_mad,
				     recv_buf, NULL), -EINVAL, "filter size");
	cr_assert_eq(rf_mad_tap_init(&t, &g.s.sq, &f, sizeof(f) + 1, g.ring, 16, on_mad,
				     recv_buf, NULL), -EINVAL, "filter size");
	cr_assert_eq(rf_mad_tap_init(&t, &g.s.sq, &f, sizeof(f), g.ring, 8, on_mad,
				     recv_buf, NULL), -EINVAL, "ring smaller than the SQ");
	cr_assert_eq(rf_mad_tap_init(&t, &g.s.sq, &f, sizeof(f), g.ring, 24, on_mad,
				     recv_buf, NULL), -EINVAL, "ring not a power of two");
	cr_assert_eq(rf_mad_tap_init(&t, &g.s.sq, &f, sizeof(f), g.ring, 16, NULL,
				     recv_buf, NULL), -EINVAL, "no callback");
	cr_assert_eq(rft_sq_init(&rc, RF_QP_RC, 16, 0, 0, 1, 0, QPN), 0);
	cr_assert_eq(rf_mad_tap_init(&t, &rc.sq, &f, sizeof(f), g.ring, 16, on_mad,
				     recv_buf, NULL), -EINVAL, "not UD");
	rft_sq_fini(&rc);
	rig_close(&g);
}

Test(mad_tap, sends_reported_at_their_completion_with_status)
{
	struct tap_rig g;
	struct rf_mad_snoop_filter f = sf(0, 0, 0, 0, 0);
	struct rf_wc wc[4];
	uint16_t at[5];

	rig_open(&g, &f);
	for (int i = 0; i < 5; i++)
		put_snoop_mad(g.mad[i], RF_MAD_CLASS_CM, 2, 0, RF_MAD_ATTR_CM_REQ, 0);
	/* two unsignaled sends, then a signaled one: nothing until its CQE */
	at[0] = rig_post(&g, 0, 0);
	at[1] = rig_post(&g, 1, 0);
	at[2] = rig_post(&g, 2, RF_SEND_SIGNALED);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 0);
	cr_assert_eq(g.seen.n, 0, "reported before the send completed");
	rft_cqe_put(&g.c, g.ci++, RF_CQE_REQ, RF_OPCODE_SEND, QPN, at[2], 0);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 1);
	cr_assert_eq(g.seen.n, 3, "the CQE completes the unsignaled sends before it");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(g.seen.ev[i].dir, RF_MAD_SENT);
		cr_assert_eq(g.seen.ev[i].mad, g.mad[i], "in posting order");
		cr_assert_eq(g.seen.ev[i].len, RF_MAD_LEN);
		cr_assert_eq(g.seen.ev[i].status, RF_WC_SUCCESS);
		cr_assert_eq(g.seen.ev[i].wr_id, 100 + (uint64_t)i);
	}

	/* an error CQE for the next, a flush for the one after it */
	g.seen.n = 0;
	at[3] = rig_post(&g, 3, RF_SEND_SIGNALED);
	at[4] = rig_post(&g, 4, 0);
	rft_cqe_put_err(&g.c, g.ci++, RF_CQE_REQ_ERR, RF_OPCODE_SEND, QPN, at[3],
			RF_CQE_SYNDROME_LOCAL_LENGTH_ERR, 0x68);
	rft_cqe_put_err(&g.c, g.ci++, RF_CQE_REQ_ERR, RF_OPCODE_SEND, QPN, at[4],
			RF_CQE_SYNDROME_WR_FLUSH_ERR, 0);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 2);
	cr_assert_eq(g.seen.n, 2);
	cr_assert_eq(g.seen.ev[0].mad, g.mad[3]);
	cr_assert_eq(g.seen.ev[0].status, RF_WC_LOC_LEN_ERR);
	cr_assert_eq(g.seen.ev[1].mad, g.mad[4]);
	cr_assert_eq(g.seen.ev[1].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(g.tap.head, g.tap.tail, "nothing left in flight");
	rig_close(&g);
}

Test(mad_tap, errors_filter_on_the_tap)
{
	struct tap_rig g;
	struct rf_mad_snoop_filter f = sf(0, 0, 0, 1, 0);
	struct rf_wc wc[4];
	uint16_t at[3];

	rig_open(&g, &f);
	for (int i = 0; i < 3; i++)
		put_snoop_mad(g.mad[i], RF_MAD_CLASS_PERF, 1, 0, 0x12, 0);
	at[0] = rig_post(&g, 0, RF_SEND_SIGNALED);
	at[1] = rig_post(&g, 1, RF_SEND_SIGNALED);
	at[2] = rig_post(&g, 2, 0);
	rft_cqe_put(&g.c, g.ci++, RF_CQE_REQ, RF_OPCODE_SEND, QPN, at[0], 0);
	rft_cqe_put_err(&g.c, g.ci++, RF_CQE_REQ_ERR, RF_OPCODE_SEND, QPN, at[1],
			RF_CQE_SYNDROME_LOCAL_PROT_ERR, 0);
	rft_cqe_put_err(&g.c, g.ci++, RF_CQE_REQ_ERR, RF_OPCODE_SEND, QPN, at[2],
			RF_CQE_SYNDROME_WR_FLUSH_ERR, 0);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 3);
	cr_assert_eq(g.seen.n, 1, "only the failed send, not the good or the cancelled one");
	cr_assert_eq(g.seen.ev[0].mad, g.mad[1]);
	cr_assert_eq(g.seen.ev[0].status, RF_WC_LOC_PROT_ERR);
	rig_close(&g);
}

Test(mad_tap, receives_past_the_grh_at_poll_time)
{
	struct tap_rig g;
	struct rf_mad_snoop_filter f = sf(RF_MAD_CLASS_SA, 0, 0, 0, 0);
	struct rf_wc wc[4];
	const size_t stride = RF_UD_GRH_LEN + RF_MAD_LEN;

	rig_open(&g, &f);
	for (uint64_t i = 0; i < 4; i++)
		cr_assert_eq(rf_rq_post_one(&g.r.rq, 0x77, (uint64_t)(uintptr_t)(g.seen.rbuf +
					    i * stride), (uint32_t)stride, i), 0);
	memset(g.seen.rbuf, 0xee, RF_UD_GRH_LEN);	/* a GRH is not a MAD */
	put_snoop_mad(g.seen.rbuf + RF_UD_GRH_LEN, RF_MAD_CLASS_SA, 2, 0,
		      RF_MAD_ATTR_PATH_RECORD, 0);
	put_snoop_mad(g.seen.rbuf + stride + RF_UD_GRH_LEN, RF_MAD_CLASS_CM, 2, 0,
		      RF_MAD_ATTR_CM_REQ, 0);
	put_snoop_mad(g.seen.rbuf + 2 * stride + RF_UD_GRH_LEN, RF_MAD_CLASS_SA, 2, 0x0c,
		      RF_MAD_ATTR_PATH_RECORD, 0);
	rft_cqe_put(&g.c, g.ci++, RF_CQE_RESP_SEND, 0, QPN, 0, (uint32_t)stride);
	rft_cqe_put(&g.c, g.ci++, RF_CQE_RESP_SEND, 0, QPN, 1, (uint32_t)stride);
	/* a datagram too short for a MAD header after the GRH */
	rft_cqe_put(&g.c, g.ci++, RF_CQE_RESP_SEND, 0, QPN, 2, RF_UD_GRH_LEN + 8);
	/* a receive of another QP on the same CQ: not the tap's */
	rft_cqe_put(&g.c, g.ci++, RF_CQE_RESP_SEND, 0, QPN + 1, 3, (uint32_t)stride);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 3, "the stale CQE is consumed");
	cr_assert_eq(g.seen.n, 1, "only the SA MAD");
	cr_assert_eq(g.seen.ev[0].dir, RF_MAD_RECEIVED);
	cr_assert_eq((const uint8_t *)g.seen.ev[0].mad, g.seen.rbuf + RF_UD_GRH_LEN,
		     "past the GRH");
	cr_assert_eq(g.seen.ev[0].len, RF_MAD_LEN);
	cr_assert_eq(g.seen.ev[0].wr_id, 0);
	cr_assert_eq(g.seen.ev[0].wc->byte_len, stride);
	rig_close(&g);
}

Test(mad_tap, plain_poll_skips_the_tap_and_the_next_completion_catches_up)
{
	struct tap_rig g;
	struct rf_mad_snoop_filter f = sf(0, 0, 0, 0, 0);
	struct rf_wc wc[4];
	uint16_t at[2];

	rig_open(&g, &f);
	put_snoop_mad(g.mad[0], RF_MAD_CLASS_CM, 2, 0, 1, 0);
	put_snoop_mad(g.mad[1], RF_MAD_CLASS_CM, 2, 0, 1, 0);
	at[0] = rig_post(&g, 0, RF_SEND_SIGNALED);
	at[1] = rig_post(&g, 1, RF_SEND_SIGNALED);
	rft_cqe_put(&g.c, g.ci++, RF_CQE_REQ, RF_OPCODE_SEND, QPN, at[0], 0);
	cr_assert_eq(rf_cq_poll(&g.c.cq, wc, 4), 1);
	cr_assert_eq(g.seen.n, 0, "rf_cq_poll() knows nothing of the tap");
	rft_cqe_put(&g.c, g.ci++, RF_CQE_REQ, RF_OPCODE_SEND, QPN, at[1], 0);
	cr_assert_eq(rf_mad_tap_poll(&g.tap, &g.c.cq, wc, 4), 1);
	cr_assert_eq(g.seen.n, 2);
	cr_assert_eq(g.seen.ev[0].mad, g.mad[0]);
	cr_assert_eq(g.seen.ev[1].mad, g.mad[1]);
	rig_close(&g);
}
