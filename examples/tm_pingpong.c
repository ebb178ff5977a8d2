/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tm_pingpong - an MPI-style tagged exchange on hardware tag matching:
 *
 *   each process has one RC QP whose receives come from a TM SRQ
 *   (rf_tm_srq_create_ibv()): the device matches the tag-matching header
 *   (struct ibv_tmh of <infiniband/tm_types.h>) every message starts with
 *   against the SRQ's tag list, which rdmafast edits (rf_tm_post_add()),
 *   and rf_tm_poll() decodes the completions. The client sends a tagged
 *   message and the server answers with one, --iters times, in turn:
 *
 *   expected eager   the receiver added the tag with its buffer before the
 *                    message came (and waited for the add's completion):
 *                    the device places the data there (RF_TM_WC_MATCH and
 *                    RF_TM_WC_DATA_VALID in one completion)
 *   unexpected eager no entry: the message, header first, lands in an SRQ
 *                    buffer; the receiver matches its tag in software and
 *                    copies the data, as an MPI library does with its
 *                    unexpected queue, and reports how many it handled
 *                    (RF_TM_SYNC) with its next add, without which the
 *                    device stops matching
 *   rendezvous       RNDV_SIZE bytes: the sender sends only the header and
 *                    where its data is (struct ibv_rvh: address, rkey,
 *                    length); the receiver's device, its tag matched,
 *                    READs the data into the tagged buffer (a completion
 *                    with RF_TM_WC_MATCH, then one with RF_TM_WC_DATA_VALID)
 *                    and sends the sender a FIN (an untagged message whose
 *                    header says IBV_TMH_FIN), after which the sender's
 *                    buffer is free again
 *
 * Every message is checked: its kind of completion, its tag, its
 * application context (the iteration), its length and each byte.
 *
 *   server:  tm_pingpong [-d dev] [-p port] [-g gid_idx]
 *   client:  tm_pingpong [options] 127.0.0.1
 *   options: --iters N (round trips)  --size BYTES (the eager messages)
 *
 * Exits 0 only when every message of each kind arrived as that kind, whole.
 */
#include "cli.h"

#include <infiniband/tm_types.h>

enum {
	NTAGS = 16,		/* the tag list */
	NOPS = 16,		/* list operations in flight */
	NBOUNCE = 16,		/* SRQ buffers: unexpected messages and FINs */
	MAX_EAGER = 4096,
	RNDV_SIZE = 256 * 1024,
	HDR = sizeof(struct ibv_tmh),
};

enum kind { EXPECTED, UNEXPECTED, RNDV, NKIND };
static const char *const kind_name[NKIND] = { "expected eager", "unexpected eager",
					      "rendezvous" };

/* The buffer: one MR, the peer may READ the rendezvous source. */
#define OFF_SEND	0				/* header + eager data */
#define OFF_RNDV_SRC	(OFF_SEND + HDR + MAX_EAGER)	/* rendezvous data */
#define OFF_RECV	(OFF_RNDV_SRC + RNDV_SIZE)	/* the eager receive */
#define OFF_RNDV_DST	(OFF_RECV + MAX_EAGER)		/* the rendezvous receive */
#define OFF_BOUNCE	(OFF_RNDV_DST + RNDV_SIZE)	/* NBOUNCE SRQ buffers */
#define BOUNCE_SIZE	(HDR + MAX_EAGER)
#define BUF_SIZE	(OFF_BOUNCE + NBOUNCE * BOUNCE_SIZE)

struct tmpp {
	const struct ex_opts *o;
	int server;
	uint32_t size;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *ibcq;
	struct rf_cq cq;		/* the TM SRQ's CQ, the QP's sends too */
	struct ibv_srq *ibsrq;
	struct rf_srq srq;
	struct rf_tm tm;
	struct rf_qp qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	int sock;
	uint8_t port;
	/* the receive in progress: its iteration and tag, and what came of it */
	long want_it;
	uint64_t want_tag;
	int want_sw;			/* matched in software (no entry) */
	int recv_done, recv_matched;
	uint32_t recv_len, recv_ctx;
	/* the send in progress */
	int send_done, fin_done;
	long ops_done;			/* list operations completed */
	long count[NKIND], errors;
};

static uint8_t pattern(int from_server, long it, uint32_t j)
{
	return (uint8_t)(from_server * 101 + it * 13 + j * 7 + 1);
}

static uint64_t tag_of(int from_server, long it)
{
	return (uint64_t)it << 1 | (uint64_t)from_server;
}

static void bad(struct tmpp *p, long it, const char *what)
{
	if (++p->errors < 8)
		fprintf(stderr, "iteration %ld: %s\n", it, what);
}

static void tmpp_close(struct tmpp *p)
{
	if (p->sock >= 0)
		close(p->sock);
	if (p->qp.ibqp) {
		rf_cq_detach(&p->cq, p->qp.qpn);
		rf_qp_destroy_ibv(&p->qp);
	}
	if (p->ibsrq) {
		rf_cq_detach(&p->cq, p->tm.sq.qpn);
		rf_tm_fini_ibv(&p->tm);
		rf_srq_destroy_ibv(&p->srq, p->ibsrq);
	}
	if (p->ibcq)
		rf_cq_destroy_ibv(&p->cq, p->ibcq);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->buf);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
}

/* Device, PD, buffer, the TM SRQ on its CQ, the QP on the SRQ. */
static int setup(struct tmpp *p)
{
	struct rf_qp_init_attr qa;
	int ret;

	p->ctx = rf_device_open_ibv(p->o->dev, &ret);
	if (!p->ctx)
		return ret;
	ret = rf_device_check_ibv(p->ctx);
	if (ret)
		return ret;
	p->pd = ibv_alloc_pd(p->ctx);
	p->buf = (uint8_t *)aligned_alloc(4096, (BUF_SIZE + 4095) & ~(size_t)4095);
	if (!p->pd || !p->buf)
		return -ENOMEM;
	memset(p->buf, 0, BUF_SIZE);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!p->mr)
		return errno ? -errno : -ENOMEM;
	/* libmlx5 wants a TM SRQ's CQ extended: rf_tm_cq_create_ibv() */
	ret = rf_tm_cq_create_ibv(&p->cq, &p->ibcq, p->ctx, 256, NULL);
	if (ret)
		return ret;
	ret = rf_tm_srq_create_ibv(&p->tm, &p->srq, &p->ibsrq, p->pd, p->ibcq, NBOUNCE,
				   NTAGS, NOPS);
	if (ret)
		return ret;
	/* the list operations' error CQEs, and the SRQ's receives */
	ret = rf_cq_attach(&p->cq, p->tm.sq.qpn, &p->tm.sq, NULL, NULL);
	if (ret)
		return ret;
	rf_cq_set_srq(&p->cq, &p->srq);
	memset(&qa, 0, sizeof(qa));
	qa.pd = p->pd;
	qa.send_cq = p->ibcq;
	qa.recv_cq = p->ibcq;
	qa.srq = p->ibsrq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 16;
	qa.max_send_sge = 1;
	ret = rf_qp_create_ibv(&p->qp, &qa);
	if (!ret)
		ret = rf_cq_attach(&p->cq, p->qp.qpn, &p->qp.sq, NULL, &p->srq);
	if (ret)
		return ret;
	/* every SRQ buffer posted: unexpected messages and FINs land there */
	for (uint32_t s = 0; s < NBOUNCE && !rf_srq_full(&p->srq); s++) {
		ret = rf_srq_post_one(&p->srq, p->mr->lkey,
				      (uint64_t)(uintptr_t)(p->buf + OFF_BOUNCE + s * BOUNCE_SIZE),
				      BOUNCE_SIZE, s);
		if (ret)
			return ret;
	}
	rf_srq_ring(&p->srq);
	return 0;
}

/* Exchange QP details over TCP, connect, wait until both can receive. */
static int connect_qp(struct tmpp *p, const char *addr)
{
	struct rf_qp_conn_attr ca;
	struct rf_ep_info peer;
	int ret;

	p->sock = addr ? rf_tcp_connect(addr, (uint16_t)p->o->port, 0)
		       : rf_tcp_serve((uint16_t)p->o->port, 0);
	if (p->sock < 0)
		return p->sock;
	memset(&ca, 0, sizeof(ca));
	ca.port = p->port;
	ca.gid_index = p->o->gid_index;
	ca.access = RF_ACCESS_REMOTE_READ;	/* the peer's device READs a rendezvous' data */
	ret = rf_ep_connect_qp(p->sock, &p->qp, &ca, NULL, &peer, 0);
	return ret ? ret : rf_ep_ready(p->sock, 0);
}

/*
 * An SRQ buffer's message (header first): an unexpected message is matched
 * against the receive in progress in software; a FIN ends the rendezvous
 * send in progress. The buffer goes back to the SRQ.
 */
static int bounce(struct tmpp *p, long it, const struct rf_tm_wc *wc)
{
	const uint8_t *m = p->buf + OFF_BOUNCE + wc->wc.wr_id * BOUNCE_SIZE;
	const struct ibv_tmh *h = (const struct ibv_tmh *)m;
	uint32_t len = wc->wc.byte_len >= HDR ? wc->wc.byte_len - HDR : 0;

	if (wc->wc.opcode == RF_WC_TM_NO_TAG) {
		if (h->opcode != IBV_TMH_FIN || be64toh(h->tag) != tag_of(p->server, it))
			bad(p, it, "an untagged message that is no FIN of ours");
		p->fin_done = 1;
	} else if (!p->want_sw || h->opcode != IBV_TMH_EAGER ||
		   be64toh(h->tag) != p->want_tag || len > MAX_EAGER) {
		bad(p, it, "an unexpected message no receive wants");
	} else {
		memcpy(p->buf + OFF_RECV, m + HDR, len);
		p->recv_len = len;
		p->recv_ctx = be32toh(h->app_ctx);
		p->recv_done = 1;
	}
	return rf_srq_post_one(&p->srq, p->mr->lkey, (uint64_t)(uintptr_t)m, BOUNCE_SIZE,
			       wc->wc.wr_id);
}

/* One completion of the CQ, if any, acted on. */
static int progress(struct tmpp *p, long it)
{
	struct rf_tm_wc wc;
	int ret = 0;

	if (!rf_tm_poll(&p->tm, &p->cq, &wc))
		return 0;
	if (wc.wc.status != RF_WC_SUCCESS) {
		fprintf(stderr, "iteration %ld: completion %u: %s\n", it, wc.wc.opcode,
			rf_wc_status_str(wc.wc.status));
		p->errors++;
		return -EIO;
	}
	switch (wc.wc.opcode) {
	case RF_WC_SEND:
		p->send_done = 1;
		break;
	case RF_WC_TM_ADD:
		p->ops_done++;
		break;
	case RF_WC_TM_RECV:
		if (!wc.tm_flags) {		/* unexpected: in an SRQ buffer */
			ret = bounce(p, it, &wc);
			rf_srq_ring(&p->srq);
			break;
		}
		/* the entry's recv_wr_id; the tag where the header is (the match) */
		if (p->want_sw || wc.wc.wr_id != (uint64_t)p->want_it ||
		    ((wc.tm_flags & RF_TM_WC_MATCH) && wc.tag != p->want_tag))
			bad(p, it, "a message matched an entry not added for it");
		if (wc.tm_flags & RF_TM_WC_MATCH) {
			p->recv_matched = 1;
			p->recv_ctx = wc.app_ctx;
		}
		if (wc.tm_flags & RF_TM_WC_DATA_VALID) {
			p->recv_len = wc.wc.byte_len;
			p->recv_done = 1;
		}
		break;
	case RF_WC_TM_NO_TAG:
		ret = bounce(p, it, &wc);
		rf_srq_ring(&p->srq);
		break;
	default:
		bad(p, it, "a completion of an unexpected kind");
		break;
	}
	return ret;
}

/* Progress until *flag is set: 0, or -ETIMEDOUT after 10 s. */
static int wait_for(struct tmpp *p, long it, const int *flag, const long *count, long n)
{
	long end = ex_now_us() + 10L * 1000 * 1000;
	int ret = 0;

	while (!ret && (flag ? !*flag : *count < n)) {
		ret = progress(p, it);
		if (!ret && ex_now_us() > end)
			ret = -ETIMEDOUT;
	}
	return ret;
}

/*
 * Get ready for the peer's message of iteration it: for an expected eager
 * message and a rendezvous, add its tag with the buffer it goes to, and
 * wait for the add's completion (the entry is in the device's list before
 * the peer can send); for an unexpected one, nothing the device sees. The
 * add reports the unexpected messages handled so far.
 */
static int post_recv(struct tmpp *p, long it, enum kind k)
{
	struct rf_sge sge;
	long want = p->ops_done + 1;
	int h;

	p->want_it = it;
	p->want_tag = tag_of(!p->server, it);
	p->want_sw = k == UNEXPECTED;
	p->recv_done = p->recv_matched = 0;
	p->recv_len = p->recv_ctx = 0;
	memset(p->buf + (k == RNDV ? OFF_RNDV_DST : OFF_RECV), 0,
	       k == RNDV ? RNDV_SIZE : p->size);
	if (k == UNEXPECTED)
		return 0;
	sge.addr = (uint64_t)(uintptr_t)(p->buf + (k == RNDV ? OFF_RNDV_DST : OFF_RECV));
	sge.length = k == RNDV ? RNDV_SIZE : MAX_EAGER;
	sge.lkey = p->mr->lkey;
	h = rf_tm_post_add(&p->tm, p->want_tag, ~0ULL, &sge, (uint64_t)it,
			   RF_TM_SIGNALED | RF_TM_SYNC | RF_TM_RING,
			   (uint16_t)p->tm.unexp_in, (uint64_t)it);
	if (h < 0)
		return h;
	return wait_for(p, it, NULL, &p->ops_done, want);
}

/* Wait for the message of iteration it and check it. */
static int check_recv(struct tmpp *p, long it, enum kind k)
{
	const uint8_t *m = p->buf + (k == RNDV ? OFF_RNDV_DST : OFF_RECV);
	uint32_t len = k == RNDV ? RNDV_SIZE : p->size;
	int ret = wait_for(p, it, &p->recv_done, NULL, 0);

	if (ret)
		return ret;
	if (k != UNEXPECTED && !p->recv_matched)
		bad(p, it, "not matched by the device");
	if (p->recv_len != len || p->recv_ctx != (uint32_t)it)
		bad(p, it, "wrong length or context");
	for (uint32_t j = 0; j < len && j < p->recv_len; j++)
		if (m[j] != pattern(!p->server, it, j)) {
			bad(p, it, "wrong data");
			break;
		}
	p->count[k]++;
	return 0;
}

/*
 * Send the message of iteration it: the header and the data eagerly, or
 * the header and where the data is (rendezvous), which is done when the
 * FIN came back.
 */
static int send_msg(struct tmpp *p, long it, enum kind k)
{
	struct ibv_tmh *h = (struct ibv_tmh *)(p->buf + OFF_SEND);
	uint8_t *src = p->buf + (k == RNDV ? OFF_RNDV_SRC : OFF_SEND + HDR);
	uint32_t len = k == RNDV ? RNDV_SIZE : p->size, n = HDR;
	int ret;

	for (uint32_t j = 0; j < len; j++)
		src[j] = pattern(p->server, it, j);
	memset(h, 0, sizeof(*h));
	h->opcode = k == RNDV ? IBV_TMH_RNDV : IBV_TMH_EAGER;
	h->app_ctx = htobe32((uint32_t)it);
	h->tag = htobe64(tag_of(p->server, it));
	if (k == RNDV) {
		struct ibv_rvh rvh;

		rvh.va = htobe64((uint64_t)(uintptr_t)src);
		rvh.rkey = htobe32(p->mr->rkey);
		rvh.len = htobe32(len);
		memcpy(h + 1, &rvh, sizeof(rvh));
		n += sizeof(rvh);
	} else {
		n += len;
	}
	p->send_done = 0;
	p->fin_done = k != RNDV;
	ret = rf_sq_post_send(&p->qp.sq, p->mr->lkey, (uint64_t)(uintptr_t)h, n,
			      RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)it);
	if (!ret)
		ret = wait_for(p, it, &p->send_done, NULL, 0);
	if (!ret)
		ret = wait_for(p, it, &p->fin_done, NULL, 0);
	return ret;
}

static int run(struct tmpp *p)
{
	int ret = rf_tcp_sync(p->sock, 'G', 0);

	/* the server is ready for the first ping before it says so */
	if (!ret && p->server)
		ret = post_recv(p, 0, EXPECTED);
	if (!ret)
		ret = rf_tcp_sync(p->sock, 'R', 0);
	for (long it = 0; !ret && it < p->o->iters; it++) {
		enum kind k = (enum kind)(it % NKIND);
		enum kind next = (enum kind)((it + 1) % NKIND);

		if (p->server) {
			ret = check_recv(p, it, k);
			if (!ret && it + 1 < p->o->iters)
				ret = post_recv(p, it + 1, next);
			if (!ret)
				ret = send_msg(p, it, k);
		} else {
			ret = post_recv(p, it, k);
			if (!ret)
				ret = send_msg(p, it, k);
			if (!ret)
				ret = check_recv(p, it, k);
		}
	}
	if (!ret)
		ret = rf_tcp_sync(p->sock, 'D', 0);
	return ret;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 60, 64, 0, 0, 0, 0, NULL };
	struct tmpp p;
	char addr[64];
	int ret;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	if (o.size < 1 || o.size > MAX_EAGER) {
		fprintf(stderr, "--size: 1 to %d bytes\n", MAX_EAGER);
		return 2;
	}
	memset(&p, 0, sizeof(p));
	p.sock = -1;
	p.o = &o;
	p.server = o.host == NULL;
	p.size = (uint32_t)o.size;
	p.port = (uint8_t)(o.ib_port ? o.ib_port : 1);
	if (o.host && ex_resolve(o.host, addr, sizeof(addr))) {
		fprintf(stderr, "%s: no such host\n", o.host);
		return 1;
	}
	ret = setup(&p);
	if (ret) {
		ex_perror("setting up the device", ret);
		tmpp_close(&p);
		return 1;
	}
	ret = connect_qp(&p, o.host ? addr : NULL);
	if (!ret)
		ret = run(&p);
	if (ret)
		fprintf(stderr, "%s\n", strerror(-ret));
	printf("%s: TM SRQ %#x (%d tags): received %ld %s of %u bytes, %ld %s, %ld %s of %d "
	       "bytes; %u unexpected\n", p.server ? "server" : "client", p.srq.srqn, NTAGS,
	       p.count[EXPECTED], kind_name[EXPECTED], p.size, p.count[UNEXPECTED],
	       kind_name[UNEXPECTED], p.count[RNDV], kind_name[RNDV], RNDV_SIZE,
	       p.tm.unexp_in);
	if (!ret && p.count[EXPECTED] + p.count[UNEXPECTED] + p.count[RNDV] != o.iters) {
		fprintf(stderr, "messages missing\n");
		p.errors++;
	}
	printf("  %s (%ld bad)\n", !ret && !p.errors ? "all checks passed" : "FAILED", p.errors);
	tmpp_close(&p);
	return !ret && !p.errors ? 0 : 1;
}
