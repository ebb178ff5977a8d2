/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mad_snoop - two processes exchange management datagrams (MADs) of
 * several classes on UD QPs while a tap on each side (rdmafast/mad_tap.h)
 * shows only what its snoop filter selects, libibumad style:
 *
 *   server tap: { class 0 (all), errors }  the MADs that went wrong: the
 *               answer that came back with a non-zero status, the send
 *               that failed; not the cancelled one after it
 *   client tap: { class 0x31, OUI 00:14:05 }  one vendor's MADs of one
 *               vendor class, sent and received; not the same class of
 *               another OUI
 *
 * Each side sends the same script: an SA PathRecord answer, the same with
 * status 0x000c, a CM REQ, a PerformanceManagement Get(PortCounters), a
 * vendor MAD of class 0x31 from OUI 00:14:05 and one from 00:02:c9; then,
 * once both have received all of it, a MAD whose buffer key is wrong (its
 * send fails with a local protection error) and one after it (flushed:
 * the failure put the QP into the error state).
 *
 *   server:  mad_snoop [-d dev] [-p port] [-g gid_idx]
 *   client:  mad_snoop [options] 127.0.0.1
 *
 * Exits 0 only when every MAD arrived intact and each tap reported
 * exactly the MADs its filter selects, no more and no fewer.
 */
#include "cli.h"
#include "ud.h"

enum {
	NGOOD = 6,		/* the script's MADs that go through */
	NSEND = NGOOD + 2,	/* and the failing one and the cancelled one */
	NRECV = 16,
	RSTRIDE = RF_UD_GRH_LEN + RF_MAD_LEN,
	MAX_SEEN = 32,
};

#define QKEY 0x4d414453U	/* "MADS": an application's own MADs, any UD QP */

struct script_mad {
	uint8_t  cls, version, method;
	uint16_t status, attr;
	uint32_t oui;		/* vendor classes only */
	const char *what;
};

static const struct script_mad script[NSEND] = {
	{ RF_MAD_CLASS_SA, 2, RF_MAD_METHOD_GET_RESP, 0, RF_MAD_ATTR_PATH_RECORD, 0,
	  "SA PathRecord answer" },
	{ RF_MAD_CLASS_SA, 2, RF_MAD_METHOD_GET_RESP, 0x000c, RF_MAD_ATTR_PATH_RECORD, 0,
	  "SA PathRecord answer, status 0x000c" },
	{ RF_MAD_CLASS_CM, 2, RF_MAD_METHOD_SEND, 0, RF_MAD_ATTR_CM_REQ, 0, "CM REQ" },
	{ RF_MAD_CLASS_PERF, 1, RF_MAD_METHOD_GET, 0, 0x0012, 0, "PerfMgt Get(PortCounters)" },
	{ 0x31, 1, RF_MAD_METHOD_GET, 0, 0x0010, 0x001405, "vendor 0x31, OUI 00:14:05" },
	{ 0x31, 1, RF_MAD_METHOD_GET, 0, 0x0010, 0x0002c9, "vendor 0x31, OUI 00:02:c9" },
	{ RF_MAD_CLASS_SA, 2, RF_MAD_METHOD_GET, 0, RF_MAD_ATTR_PATH_RECORD, 0,
	  "SA Get, wrong lkey: fails" },
	{ RF_MAD_CLASS_CM, 2, RF_MAD_METHOD_SEND, 0, RF_MAD_ATTR_CM_DREQ, 0,
	  "CM DREQ after the failure: cancelled" },
};

struct snoop {
	struct ex_ud u;
	int server;
	uint8_t *rbuf;		/* NRECV receive slots of RSTRIDE bytes */
	uint8_t *sbuf;		/* NSEND MADs */
	struct rf_mad_tap tap;
	struct rf_mad_tap_send ring[256];
	/* what the tap reported: sent (1) or received (0), script index */
	int seen_dir[MAX_SEEN], seen_idx[MAX_SEEN], nseen;
	int sent, received, flushed, bad_send, errors;
};

/* TID: side (1 server, 2 client) in bits 8..15, script index below. */
static uint64_t tid_of(int server, int i)
{
	return ((uint64_t)(server ? 1 : 2) << 8) | (uint64_t)i;
}

static void build(uint8_t *m, int server, int i)
{
	const struct script_mad *s = &script[i];
	uint64_t tid = tid_of(server, i);

	memset(m, 0, RF_MAD_LEN);
	m[0] = RF_MAD_BASE_VERSION;
	m[1] = s->cls;
	m[2] = s->version;
	m[3] = s->method;
	m[4] = (uint8_t)(s->status >> 8);
	m[5] = (uint8_t)s->status;
	for (int b = 0; b < 8; b++)
		m[8 + b] = (uint8_t)(tid >> (56 - 8 * b));
	m[16] = (uint8_t)(s->attr >> 8);
	m[17] = (uint8_t)s->attr;
	if (s->cls >= RF_MAD_CLASS_VENDOR_OUI_FIRST && s->cls <= RF_MAD_CLASS_VENDOR_OUI_LAST) {
		m[RF_MAD_VENDOR_OUI_OFFSET] = (uint8_t)(s->oui >> 16);
		m[RF_MAD_VENDOR_OUI_OFFSET + 1] = (uint8_t)(s->oui >> 8);
		m[RF_MAD_VENDOR_OUI_OFFSET + 2] = (uint8_t)s->oui;
	}
	for (int b = 40; b < RF_MAD_LEN; b++)	/* payload: checked on arrival */
		m[b] = (uint8_t)(b * 7 + i * 13 + (server ? 1 : 2));
}

/* The script index of a MAD from side `server`, or -1. */
static int index_of(const uint8_t *m, int server)
{
	uint64_t tid = 0;

	for (int b = 0; b < 8; b++)
		tid = tid << 8 | m[8 + b];
	for (int i = 0; i < NSEND; i++)
		if (tid == tid_of(server, i))
			return i;
	return -1;
}

static const void *recv_buf(void *ctx, const struct rf_wc *wc)
{
	struct snoop *p = (struct snoop *)ctx;

	return p->rbuf + wc->wr_id * RSTRIDE;
}

static void on_mad(void *ctx, const struct rf_mad_tap_event *ev)
{
	struct snoop *p = (struct snoop *)ctx;
	const uint8_t *m = (const uint8_t *)ev->mad;
	int sent = ev->dir == RF_MAD_SENT;
	int i = index_of(m, sent ? p->server : !p->server);

	printf("  tap: %-8s %-40s class 0x%02x status 0x%04x", sent ? "sent" : "received",
	       i >= 0 ? script[i].what : "(not in the script)", m[1], (m[4] << 8) | m[5]);
	if (sent)
		printf("  completion: %s", rf_wc_status_str(ev->status));
	printf("\n");
	if (p->nseen < MAX_SEEN) {
		p->seen_dir[p->nseen] = sent;
		p->seen_idx[p->nseen] = i;
	}
	p->nseen++;
}

/* Poll through the tap until `sends` sends and `recvs` receives completed. */
static int wait_for(struct snoop *p, int sends, int recvs)
{
	long end = ex_now_us() + 10L * 1000 * 1000;
	struct rf_wc wc[8];

	while (p->sent < sends || p->received < recvs) {
		int n = rf_mad_tap_poll(&p->tap, &p->u.cq, wc, 8);

		for (int k = 0; k < n; k++) {
			if ((wc[k].opcode & RF_WC_RECV) && wc[k].status == RF_WC_WR_FLUSH_ERR) {
				/* the failed send put the QP in error: receives flushed */
				p->flushed++;
			} else if (wc[k].opcode & RF_WC_RECV) {
				const uint8_t *m = p->rbuf + wc[k].wr_id * RSTRIDE + RF_UD_GRH_LEN;
				uint8_t want[RF_MAD_LEN];
				int i = index_of(m, !p->server);

				if (wc[k].status != RF_WC_SUCCESS || i < 0 ||
				    wc[k].byte_len != RSTRIDE) {
					p->errors++;
				} else {
					build(want, !p->server, i);
					p->errors += memcmp(m, want, RF_MAD_LEN) != 0;
				}
				p->received++;
			} else {
				if (wc[k].status != RF_WC_SUCCESS)
					p->bad_send++;
				p->sent++;
			}
		}
		if (ex_now_us() > end) {
			fprintf(stderr, "timed out: %d/%d sends, %d/%d receives\n", p->sent,
				sends, p->received, recvs);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/* Did the tap report exactly (dir, idx) pairs want[0..n), in any order? */
static int reported_exactly(const struct snoop *p, const int (*want)[2], int n)
{
	if (p->nseen != n)
		return 0;
	for (int w = 0; w < n; w++) {
		int found = 0;

		for (int s = 0; s < p->nseen; s++)
			found += p->seen_dir[s] == want[w][0] && p->seen_idx[s] == want[w][1];
		if (found != 1)
			return 0;
	}
	return 1;
}

static int run(struct snoop *p)
{
	/* server: the errors; client: one vendor class of one OUI */
	struct rf_mad_snoop_filter f = { 0, 0, 0, 1, { 0, 0, 0 } };
	struct rf_mad_snoop_filter v = { 0x31, 0, 0, 0, { 0x00, 0x14, 0x05 } };
	static const int want_server[][2] = { { 0, 1 }, { 1, 6 } };
	static const int want_client[][2] = { { 1, 4 }, { 0, 4 } };
	int ret;

	ret = rf_mad_tap_init(&p->tap, &p->u.qp.sq, p->server ? &f : &v, sizeof(f), p->ring,
			      256, on_mad, recv_buf, p);
	if (ret)
		return ret;
	printf("%s: tap on UD QP %#x: %s\n", p->server ? "server" : "client", p->u.qp.qpn,
	       p->server ? "{ class 0 (all), errors }" : "{ class 0x31, OUI 00:14:05 }");
	for (uint64_t s = 0; s < NRECV; s++) {
		ret = rf_rq_post_one(&p->u.qp.rq, p->u.mr->lkey,
				     (uint64_t)(uintptr_t)(p->rbuf + s * RSTRIDE), RSTRIDE, s);
		if (ret)
			return ret;
	}
	rf_rq_ring(&p->u.qp.rq);
	ret = rf_tcp_sync(p->u.sock, 'G', 0);	/* receives posted on both sides */
	if (ret)
		return ret;
	for (int i = 0; i < NSEND; i++)
		build(p->sbuf + i * RF_MAD_LEN, p->server, i);
	for (int i = 0; i < NGOOD && !ret; i++)
		ret = rf_mad_tap_post(&p->tap, &p->u.qp.sq, &p->u.av, p->u.peer.qpn, QKEY,
				      p->u.mr->lkey, p->sbuf + i * RF_MAD_LEN, RF_MAD_LEN,
				      RF_SEND_SIGNALED, (uint64_t)i);
	rf_sq_ring(&p->u.qp.sq);
	if (!ret)
		ret = wait_for(p, NGOOD, NGOOD);
	/* both have everything: now break our send queue */
	if (!ret)
		ret = rf_tcp_sync(p->u.sock, 'F', 0);
	if (!ret)
		ret = rf_mad_tap_post(&p->tap, &p->u.qp.sq, &p->u.av, p->u.peer.qpn, QKEY,
				      p->u.mr->lkey ^ 0x00ffff00U,	/* no such key */
				      p->sbuf + 6 * RF_MAD_LEN, RF_MAD_LEN, RF_SEND_SIGNALED, 6);
	if (!ret)
		ret = rf_mad_tap_post(&p->tap, &p->u.qp.sq, &p->u.av, p->u.peer.qpn, QKEY,
				      p->u.mr->lkey, p->sbuf + 7 * RF_MAD_LEN, RF_MAD_LEN,
				      RF_SEND_SIGNALED, 7);
	rf_sq_ring(&p->u.qp.sq);
	if (!ret)
		ret = wait_for(p, NSEND, NGOOD);
	if (!ret)
		ret = rf_tcp_sync(p->u.sock, 'D', 0);
	if (ret)
		return ret;
	if (p->bad_send != 2) {
		fprintf(stderr, "%d sends failed, expected 2 (the bad key and the flushed one)\n",
			p->bad_send);
		p->errors++;
	}
	if (!(p->server ? reported_exactly(p, want_server, 2)
			: reported_exactly(p, want_client, 2))) {
		fprintf(stderr, "the tap reported %d MADs, not exactly the 2 its filter selects\n",
			p->nseen);
		p->errors++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 1, 0, 0, 0, 0, 0, NULL };
	struct snoop p;
	int ret;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	memset(&p, 0, sizeof(p));
	p.server = o.host == NULL;
	if (ex_ud_open(&p.u, &o, NRECV * RSTRIDE + NSEND * RF_MAD_LEN, 64, QKEY))
		return 1;
	p.rbuf = p.u.buf;
	p.sbuf = p.u.buf + NRECV * RSTRIDE;
	ret = run(&p);
	if (ret)
		fprintf(stderr, "%s\n", strerror(-ret));
	printf("%s: %d MADs sent (%d failed), %d received (%d receives flushed), "
	       "%d reported by the tap\n  %s (%d bad)\n", p.server ? "server" : "client",
	       p.sent, p.bad_send, p.received, p.flushed, p.nseen, !ret && !p.errors ? "all checks passed" : "FAILED",
	       p.errors);
	ex_ud_close(&p.u);
	return !ret && !p.errors ? 0 : 1;
}
