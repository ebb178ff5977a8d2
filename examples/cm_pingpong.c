/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cm_pingpong - an RC ping-pong connected with the RDMA connection manager
 * and driven by rdmafast: the way storage engines (NVMe-oF, iSER, Ceph)
 * set up their connections, with rdmafast's data path on the QP that
 * rdma_create_qp() made.
 *
 *   1. rdma_cm: the server listens, the client resolves the address and
 *      the route (and tries again while nobody listens: REJECTED with
 *      "invalid service ID"), both create their QP with rdma_create_qp(), and
 *      rdma_connect()/rdma_accept() bring it to RTS (librdmacm does the
 *      transitions); the client's private data carries its buffer size.
 *   2. rdmafast takes over the QP and its CQ (rdmafast/cm.h) and runs a
 *      SEND/receive ping-pong; every message carries a pattern derived
 *      from its iteration, checked on arrival. One send in 16 is signaled.
 *   3. rdma_disconnect(): DISCONNECTED on both sides.
 *
 *   server:  cm_pingpong [-p port]
 *   client:  cm_pingpong [-p port] [--iters N] [--size BYTES] host
 *
 * Runs unchanged on a real ConnectX (RF_DEVICE=hw in examples/run.sh).
 * Exits 0 only when every message arrived intact.
 */
#include "cli.h"

#include <poll.h>
#include <rdmafast/cm.h>

enum { RX_DEPTH = 32, SQ_DEPTH = 64, SIGNAL_EVERY = 16, CM_WAIT_MS = 30000 };

struct pp {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_cq *ibcq;
	struct ibv_mr *mr;
	struct rf_cq cq;
	struct rf_qp qp;
	uint8_t *buf;		/* RX_DEPTH receive slots, then the send slot */
	uint32_t size;
	long posted, errors;
};

static uint8_t pattern(long iter, long j)
{
	return (uint8_t)(iter * 13 + j);
}

/* The next CM event, which must be `want`, within CM_WAIT_MS: 0, or 1
 * for the rejection of a connection nobody listens for, else -1. */
static int cm_wait(struct pp *p, enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct pollfd pf = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pf, 1, CM_WAIT_MS) != 1 || rdma_get_cm_event(p->ch, &ev)) {
		fprintf(stderr, "cm_pingpong: no %s\n", rdma_event_str(want));
		return -1;
	}
	if (ev->event == RDMA_CM_EVENT_REJECTED && ev->status == 8 /* invalid service ID */) {
		rdma_ack_cm_event(ev);
		return 1;
	}
	if (ev->event != want) {
		fprintf(stderr, "cm_pingpong: %s (status %d), not %s\n",
			rdma_event_str(ev->event), ev->status, rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

static int post_recv(struct pp *p, uint64_t slot)
{
	return rf_rq_post_one(&p->qp.rq, p->mr->lkey,
			      (uint64_t)(uintptr_t)(p->buf + slot * p->size), p->size, slot);
}

/* The QP on id, its CQ and buffers, taken over by rdmafast. */
static int setup(struct pp *p)
{
	struct ibv_qp_init_attr qa;
	size_t len = (size_t)(RX_DEPTH + 1) * p->size;

	p->ibcq = ibv_create_cq(p->id->verbs, RX_DEPTH + SQ_DEPTH, NULL, NULL, 0);
	p->buf = calloc(1, len);
	if (!p->ibcq || !p->buf)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = p->ibcq;
	qa.recv_cq = p->ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = SQ_DEPTH;
	qa.cap.max_recv_wr = RX_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(p->id, NULL, &qa)) {
		perror("rdma_create_qp");
		return -1;
	}
	p->mr = ibv_reg_mr(p->id->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr || rf_cq_init_cm(&p->cq, NULL, p->id) ||
	    rf_qp_init_cm(&p->qp, p->id, &qa, &p->cq, NULL)) {
		fprintf(stderr, "cm_pingpong: cannot take over the QP\n");
		return -1;
	}
	for (uint64_t s = 0; s < RX_DEPTH; s++)
		if (post_recv(p, s))
			return -1;
	rf_rq_ring(&p->qp.rq);
	return 0;
}

static int send_iter(struct pp *p, long iter)
{
	uint8_t *tx = p->buf + (size_t)RX_DEPTH * p->size;
	uint32_t flags = RF_SEND_RING;

	for (uint32_t j = 0; j < p->size; j++)
		tx[j] = pattern(iter, j);
	if (++p->posted % SIGNAL_EVERY == 0 || rf_sq_space(&p->qp.sq) < 2 * SIGNAL_EVERY)
		flags |= RF_SEND_SIGNALED;
	return rf_sq_post_send(&p->qp.sq, p->mr->lkey, (uint64_t)(uintptr_t)tx, p->size,
			       flags, (uint64_t)iter);
}

/* Wait for the receive of iteration iter, check it, give the slot back. */
static int recv_iter(struct pp *p, long iter)
{
	struct rf_wc wc[8];
	long t0 = ex_now_us();

	for (;;) {
		int n = rf_cq_poll(&p->cq, wc, 8);

		for (int i = 0; i < n; i++) {
			uint8_t *rx;

			if (wc[i].status != RF_WC_SUCCESS) {
				fprintf(stderr, "cm_pingpong: completion status %u\n",
					wc[i].status);
				return -1;
			}
			if (wc[i].opcode != RF_WC_RECV)
				continue;	/* a signaled send */
			rx = p->buf + wc[i].wr_id * p->size;
			for (uint32_t j = 0; j < p->size; j++)
				if (rx[j] != pattern(iter, j)) {
					p->errors++;
					break;
				}
			if (post_recv(p, wc[i].wr_id))
				return -1;
			rf_rq_ring(&p->qp.rq);
			return 0;
		}
		if (ex_now_us() - t0 > CM_WAIT_MS * 1000L) {
			fprintf(stderr, "cm_pingpong: iteration %ld never arrived\n", iter);
			return -1;
		}
	}
}

static int serve(struct pp *p, const struct ex_opts *o)
{
	struct sockaddr_in6 any;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;

	memset(&any, 0, sizeof(any));
	any.sin6_family = AF_INET6;
	any.sin6_port = htons((uint16_t)o->port);
	if (rdma_create_id(p->ch, &p->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(p->listen, (struct sockaddr *)&any) ||
	    rdma_listen(p->listen, 1)) {
		perror("cm_pingpong: listen");
		return -1;
	}
	if (cm_wait(p, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return -1;
	p->id = ev->id;
	memcpy(&p->size, ev->param.conn.private_data, sizeof(p->size));
	rdma_ack_cm_event(ev);
	if (!p->size || p->size > (1u << 20) || setup(p))
		return -1;
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	if (rdma_accept(p->id, &cp)) {
		perror("rdma_accept");
		return -1;
	}
	return cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

static void teardown(struct pp *p);

/* One attempt: 0 connected, 1 nobody listens (yet), -1 failed. */
static int connect_once(struct pp *p, struct sockaddr *dst)
{
	struct rdma_conn_param cp;

	if (rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(p->id, NULL, dst, 2000) ||
	    cm_wait(p, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(p->id, 2000) ||
	    cm_wait(p, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) || setup(p))
		return -1;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = &p->size;	/* the server sizes its slots from it */
	cp.private_data_len = sizeof(p->size);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(p->id, &cp)) {
		perror("rdma_connect");
		return -1;
	}
	return cm_wait(p, RDMA_CM_EVENT_ESTABLISHED, NULL);
}

/* Connect to the server, retrying while it does not listen yet (about
 * 30 s), as the TCP examples retry their connect(). */
static int connect_to(struct pp *p, const struct ex_opts *o)
{
	struct sockaddr_storage dst;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&dst;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst;
	char addr[64];
	int ret;

	memset(&dst, 0, sizeof(dst));
	if (ex_resolve(o->host, addr, sizeof(addr)))
		return -1;
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)o->port);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)o->port);
	} else {
		return -1;
	}
	for (int attempt = 0; attempt < 300; attempt++) {
		struct rdma_event_channel *ch = p->ch;
		uint32_t size = p->size;
		struct timespec nap = { 0, 100 * 1000 * 1000 };

		if ((ret = connect_once(p, (struct sockaddr *)&dst)) <= 0)
			return ret;
		/* start again from nothing but the channel */
		p->ch = NULL;
		teardown(p);
		memset(p, 0, sizeof(*p));
		p->ch = ch;
		p->size = size;
		nanosleep(&nap, NULL);
	}
	fprintf(stderr, "cm_pingpong: nobody listens on port %d\n", o->port);
	return -1;
}

static void teardown(struct pp *p)
{
	if (p->mr)
		rf_qp_fini_cm(&p->qp, &p->cq, NULL);
	if (p->id && p->id->qp)
		rdma_destroy_qp(p->id);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->ibcq)
		rf_cq_destroy_ibv(&p->cq, p->ibcq);
	free(p->buf);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->listen)
		rdma_destroy_id(p->listen);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
}

int main(int argc, char **argv)
{
	struct ex_opts o = { .port = 18515, .iters = 1000, .size = 64 };
	struct pp p;
	long t0, i;
	int ret = 1;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	memset(&p, 0, sizeof(p));
	p.size = (uint32_t)(o.size > 0 ? o.size : 1);
	p.ch = rdma_create_event_channel();
	if (!p.ch) {
		perror("rdma_create_event_channel");
		return 1;
	}
	if (o.host ? connect_to(&p, &o) : serve(&p, &o))
		goto out;
	t0 = ex_now_us();
	for (i = 0; i < o.iters; i++) {
		if (o.host ? send_iter(&p, i) || recv_iter(&p, i)
			   : recv_iter(&p, i) || send_iter(&p, i))
			goto out;
	}
	printf("cm_pingpong %s: %ld round trips of %u bytes, %.1f us each, %ld bad\n",
	       o.host ? "client" : "server", o.iters, p.size,
	       o.iters ? (double)(ex_now_us() - t0) / (double)o.iters : 0.0, p.errors);
	/* the client disconnects; each side sees DISCONNECTED */
	if (o.host && rdma_disconnect(p.id))
		goto out;
	if (cm_wait(&p, RDMA_CM_EVENT_DISCONNECTED, NULL))
		goto out;
	ret = p.errors ? 1 : 0;
out:
	teardown(&p);
	return ret;
}
