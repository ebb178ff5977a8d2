/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * srq_pingpong - NQP RC connections into one shared receive queue, kept
 * fed by its limit event:
 *
 *   the server creates one SRQ and NQP RC QPs that take their receives
 *   from it, fills it, and arms its limit (rf_srq_arm_limit_ibv()); it
 *   never posts a receive per message. When the receives left drop below
 *   the limit, the device raises IBV_EVENT_SRQ_LIMIT_REACHED on the async
 *   channel (rf_async_event_ibv()); the server refills the SRQ from the
 *   buffers its completions gave back, and arms the limit again.
 *   The client sends --iters messages on each of its NQP QPs, round after
 *   round; when the SRQ runs dry its sends wait in RNR retries until the
 *   refill (rnr_retry 7: forever).
 *
 * Every message carries its QP's index and sequence number in a pattern
 * checked on arrival; each QP's messages must arrive in order and the
 * completion must name the QP they were sent to.
 *
 *   server:  srq_pingpong [-d dev] [-p port] [-g gid_idx]
 *   client:  srq_pingpong [options] 127.0.0.1
 *   options: --iters N (per QP)  --size BYTES
 *
 * Exits 0 only when every message arrived intact and in order, and the
 * server refilled the SRQ from the limit event at least once.
 */
#include "cli.h"

enum {
	NQP = 4,
	SRQ_WR = 32,	/* receives the SRQ holds (one more slot is its sentinel) */
	SRQ_LIMIT = 8,	/* the event fires below this */
};

struct srqpp {
	const struct ex_opts *o;
	int server;
	uint32_t size;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct ibv_srq *ibsrq;		/* server */
	struct rf_srq srq;
	struct rf_qp qp[NQP];
	uint8_t *buf;
	struct ibv_mr *mr;
	int sock;
	uint8_t port;
	/* server: receive buffer slots not posted, a stack */
	uint32_t free_slot[SRQ_WR + 1], nfree;
	uint32_t nslots;
	long next_seq[NQP];
	long received, errors, refills, events;
};

static uint8_t pattern(int q, long seq, uint32_t j)
{
	return (uint8_t)(q * 31 + seq * 7 + j * 3 + 1);
}

static void srqpp_close(struct srqpp *p)
{
	if (p->sock >= 0)
		close(p->sock);
	for (int q = 0; q < NQP; q++)
		if (p->qp[q].ibqp) {
			rf_cq_detach(&p->cq, p->qp[q].qpn);
			rf_qp_destroy_ibv(&p->qp[q]);
		}
	if (p->ibsrq)
		rf_srq_destroy_ibv(&p->srq, p->ibsrq);
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

/* Device, PD, buffer, CQ, (server) the SRQ, the NQP QPs. */
static int setup(struct srqpp *p)
{
	size_t len = (size_t)(SRQ_WR + 1 + NQP) * p->size;
	struct rf_qp_init_attr qa;
	int ret;

	p->ctx = rf_device_open_ibv(p->o->dev, &ret);
	if (!p->ctx)
		return ret;
	ret = rf_device_check_ibv(p->ctx);
	if (ret)
		return ret;
	p->pd = ibv_alloc_pd(p->ctx);
	len = (len + 4095) & ~(size_t)4095;
	p->buf = (uint8_t *)aligned_alloc(4096, len);
	if (!p->pd || !p->buf)
		return -ENOMEM;
	memset(p->buf, 0, len);
	p->mr = ibv_reg_mr(p->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return errno ? -errno : -ENOMEM;
	ret = rf_cq_create_ibv(&p->cq, &p->ibcq, p->ctx, 4 * SRQ_WR + 4 * NQP, NULL, 0);
	if (ret)
		return ret;
	if (p->server) {
		ret = rf_srq_create_ibv(&p->srq, &p->ibsrq, p->pd, SRQ_WR, 1);
		if (ret)
			return ret;
		/* one buffer per WQE the SRQ can hold (all but its sentinel) */
		p->nslots = p->srq.wqe_cnt - 1;
		if (p->nslots > SRQ_WR + 1)
			p->nslots = SRQ_WR + 1;
		for (uint32_t s = 0; s < p->nslots; s++)
			p->free_slot[p->nfree++] = s;
	}
	for (int q = 0; q < NQP; q++) {
		memset(&qa, 0, sizeof(qa));
		qa.pd = p->pd;
		qa.send_cq = p->ibcq;
		qa.recv_cq = p->ibcq;
		qa.srq = p->ibsrq;
		qa.qp_type = IBV_QPT_RC;
		qa.max_send_wr = 16;
		qa.max_recv_wr = p->server ? 0 : 1;
		ret = rf_qp_create_ibv(&p->qp[q], &qa);
		if (!ret)
			ret = rf_cq_attach(&p->cq, p->qp[q].qpn, &p->qp[q].sq,
					   p->qp[q].has_rq ? &p->qp[q].rq : NULL,
					   p->server ? &p->srq : NULL);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Exchange QP details over TCP and connect QP q to the peer's QP q
 * (rf_ep_connect_qp(): the LID, the GID when the port needs a GRH, a
 * random first PSN), then wait until both sides' QPs can receive.
 */
static int connect_all(struct srqpp *p, const char *addr)
{
	struct rf_qp_conn_attr ca;
	int ret;

	p->sock = addr ? rf_tcp_connect(addr, (uint16_t)p->o->port, 0)
		       : rf_tcp_serve((uint16_t)p->o->port, 0);
	if (p->sock < 0)
		return p->sock;
	memset(&ca, 0, sizeof(ca));
	ca.port = p->port;
	ca.gid_index = p->o->gid_index;
	for (int q = 0; q < NQP; q++) {
		struct rf_ep_info peer;

		ret = rf_ep_connect_qp(p->sock, &p->qp[q], &ca, NULL, &peer, 0);
		if (ret)
			return ret;
	}
	return rf_ep_ready(p->sock, 0);
}

/* Server: post a receive for every free buffer, then arm the limit again. */
static int refill(struct srqpp *p)
{
	while (p->nfree && !rf_srq_full(&p->srq)) {
		uint32_t s = p->free_slot[--p->nfree];
		int ret = rf_srq_post_one(&p->srq, p->mr->lkey,
					  (uint64_t)(uintptr_t)(p->buf + (size_t)s * p->size),
					  p->size, s);

		if (ret)
			return ret;
	}
	rf_srq_ring(&p->srq);
	return rf_srq_arm_limit_ibv(p->ibsrq, SRQ_LIMIT);
}

static int qp_index(const struct srqpp *p, uint32_t qpn)
{
	for (int q = 0; q < NQP; q++)
		if (p->qp[q].qpn == qpn)
			return q;
	return -1;
}

static int serve(struct srqpp *p)
{
	long total = (long)NQP * p->o->iters;
	long end = ex_now_us() + 60L * 1000 * 1000;
	struct rf_wc wc[16];
	int ret = refill(p);

	if (ret)
		return ret;
	ret = rf_tcp_sync(p->sock, 'G', 0);	/* receives posted: the client may send */
	while (!ret && p->received < total) {
		int n = rf_cq_poll(&p->cq, wc, 16);

		for (int k = 0; k < n; k++) {
			const uint8_t *m = p->buf + wc[k].wr_id * p->size;
			int q = qp_index(p, wc[k].qp_num);
			long seq = q >= 0 ? p->next_seq[q]++ : -1;
			int bad = wc[k].status != RF_WC_SUCCESS || q < 0 ||
				  !(wc[k].flags & RF_WC_SRQ) || wc[k].byte_len != p->size;

			for (uint32_t j = 0; !bad && j < p->size; j++)
				bad = m[j] != pattern(q, seq, j);
			p->errors += bad;
			if (bad && p->errors < 5)
				fprintf(stderr, "bad message on QP %#x (status %u)\n",
					wc[k].qp_num, wc[k].status);
			p->free_slot[p->nfree++] = (uint32_t)wc[k].wr_id;
			p->received++;
		}
		if (n == 0) {
			struct ibv_async_event ev;

			memset(&ev, 0, sizeof(ev));
			ret = rf_async_event_ibv(p->ctx, &ev, 1);
			if (ret == -EAGAIN) {
				ret = ex_now_us() > end ? -ETIMEDOUT : 0;
				continue;
			}
			if (ret)
				break;
			p->events++;
			if (ev.event_type != IBV_EVENT_SRQ_LIMIT_REACHED ||
			    ev.element.srq != p->ibsrq) {
				fprintf(stderr, "unexpected async event: %s\n",
					ibv_event_type_str(ev.event_type));
				p->errors++;
				continue;
			}
			ret = refill(p);
			p->refills++;
		}
	}
	if (!ret)
		ret = rf_tcp_sync(p->sock, 'D', 0);
	return ret;
}

static int send_all(struct srqpp *p)
{
	struct rf_wc wc[16];
	int ret = rf_tcp_sync(p->sock, 'G', 0);

	for (long seq = 0; !ret && seq < p->o->iters; seq++) {
		long end = ex_now_us() + 30L * 1000 * 1000;
		int done = 0;

		for (int q = 0; q < NQP && !ret; q++) {
			uint8_t *m = p->buf + (size_t)q * p->size;

			for (uint32_t j = 0; j < p->size; j++)
				m[j] = pattern(q, seq, j);
			ret = rf_sq_post_send(&p->qp[q].sq, p->mr->lkey, (uint64_t)(uintptr_t)m,
					      p->size, RF_SEND_SIGNALED | RF_SEND_RING,
					      (uint64_t)seq);
		}
		while (!ret && done < NQP) {
			int n = rf_cq_poll(&p->cq, wc, 16);

			for (int k = 0; k < n; k++) {
				if (wc[k].status != RF_WC_SUCCESS) {
					fprintf(stderr, "send on QP %#x: %s\n", wc[k].qp_num,
						rf_wc_status_str(wc[k].status));
					p->errors++;
				}
				done++;
			}
			if (ex_now_us() > end)
				ret = -ETIMEDOUT;
		}
	}
	if (!ret)
		ret = rf_tcp_sync(p->sock, 'D', 0);
	return ret;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 200, 64, 0, 0, 0, 0, NULL };
	struct srqpp p;
	char addr[64];
	int ret;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	if (o.size < 1 || o.size > 4096) {
		fprintf(stderr, "--size: 1 to 4096 bytes\n");
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
		srqpp_close(&p);
		return 1;
	}
	ret = connect_all(&p, o.host ? addr : NULL);
	if (!ret)
		ret = p.server ? serve(&p) : send_all(&p);
	if (ret)
		fprintf(stderr, "%s\n", strerror(-ret));
	if (p.server) {
		printf("server: %d RC QPs into SRQ %#x (%u receives, limit %d): %ld messages of %u "
		       "bytes, %ld limit events, %ld refills\n", NQP, p.srq.srqn, p.nslots,
		       SRQ_LIMIT, p.received, p.size, p.events, p.refills);
		if (!ret && !p.refills) {
			fprintf(stderr, "the SRQ was never refilled from its limit event\n");
			p.errors++;
		}
	} else {
		printf("client: %d RC QPs, %ld messages of %u bytes each\n", NQP, o.iters, p.size);
	}
	printf("  %s (%ld bad)\n", !ret && !p.errors ? "all checks passed" : "FAILED", p.errors);
	srqpp_close(&p);
	return !ret && !p.errors ? 0 : 1;
}
