/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rf_ep (rdmafast/connect.h) grants the peer what rf_ep_attr.access names
 * and nothing more: opened without it, the peer receives no key, the QP
 * allows no remote access, and an RDMA WRITE into the buffer, even with
 * its real key, completes in error. Both sides run in
 * this process: the server in a thread, the client here, over TCP on
 * 127.0.0.1 (e2e_tcp_port() 0 to 9).
 */
#include <pthread.h>

#include <rdmafast/connect.h>

#include "e2e.h"

#define EP_PORT e2e_tcp_port(0)

struct serve {
	struct rf_ep ep;
	struct rf_ep_attr attr;
	uint16_t port;
	int fd;		/* join_main()'s end of a socketpair */
	int ret;
};

static void *serve_main(void *arg)
{
	struct serve *s = (struct serve *)arg;

	s->ret = rf_ep_open(&s->ep, &s->attr);
	if (!s->ret)
		s->ret = rf_ep_connect(&s->ep, NULL, s->port);
	return NULL;
}

/* Bring up a server with sa and a client with ca on port; both connected. */
static void ep_pair(struct serve *s, struct rf_ep *c, const struct rf_ep_attr *sa,
		    const struct rf_ep_attr *ca, uint16_t port)
{
	pthread_t t;
	int ret;

	memset(s, 0, sizeof(*s));
	s->attr = *sa;
	s->port = port;
	cr_assert_eq(pthread_create(&t, NULL, serve_main, s), 0);
	ret = rf_ep_open(c, ca);
	cr_assert_eq(ret, 0, "client open: %s: %s", c->failed, strerror(-ret));
	ret = rf_ep_connect(c, "127.0.0.1", port);
	cr_assert_eq(ret, 0, "client connect: %s: %s", c->failed, strerror(-ret));
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(s->ret, 0, "server: %s: %s", s->ep.failed, strerror(-s->ret));
}

/*
 * An operation the responder's QP does not allow: a remote invalid request
 * NAK on the emulated HCA (as rdma-core's rxe answers an opcode the QP's
 * access flags refuse); a device may call it a remote access error.
 */
static int refused(enum rf_wc_status st)
{
	return st == RF_WC_REM_INV_REQ_ERR || st == RF_WC_REM_ACCESS_ERR;
}

static int qp_access(struct rf_ep *e)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	memset(&at, 0, sizeof(at));
	cr_assert_eq(ibv_query_qp(e->qp.ibqp, &at, IBV_QP_ACCESS_FLAGS, &ia), 0);
	return (int)at.qp_access_flags;
}

/* The client's one-sided op (write 1, read 0) into the server's buf at 0. */
static enum rf_wc_status one_sided(struct rf_ep *c, struct serve *s, int write, uint32_t rkey)
{
	struct rf_wc wc;
	int ret;

	if (write)
		ret = rf_sq_post_write(&c->qp.sq, c->mr->lkey, (uint64_t)(uintptr_t)c->buf, 8,
				       rkey, (uint64_t)(uintptr_t)s->ep.buf,
				       RF_SEND_SIGNALED | RF_SEND_RING, 1);
	else
		ret = rf_sq_post_read(&c->qp.sq, c->mr->lkey, (uint64_t)(uintptr_t)c->buf, 8,
				      rkey, (uint64_t)(uintptr_t)s->ep.buf,
				      RF_SEND_SIGNALED | RF_SEND_RING, 1);
	cr_assert_eq(ret, 0);
	cr_assert_eq(rf_ep_wait(c, &wc, 0), 0);
	cr_assert_eq(wc.wr_id, 1);
	return (enum rf_wc_status)wc.status;
}

/* A message from the client lands in the receive the server posts at buf + 64. */
static void message_goes_through(struct rf_ep *c, struct serve *s)
{
	struct rf_wc wc;

	cr_assert_eq(rf_rq_post_one(&s->ep.qp.rq, s->ep.mr->lkey,
				    (uint64_t)(uintptr_t)(s->ep.buf + 64), 64, 9), 0);
	rf_rq_ring(&s->ep.qp.rq);
	memcpy(c->buf, "message!", 8);
	cr_assert_eq(rf_sq_post_send(&c->qp.sq, c->mr->lkey, (uint64_t)(uintptr_t)c->buf, 8,
				     RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	cr_assert_eq(rf_ep_wait(c, &wc, 0), 0);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "send: %u", wc.status);
	cr_assert_eq(rf_ep_wait(&s->ep, &wc, 0), 0);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "receive: %u", wc.status);
	cr_assert_eq(memcmp(s->ep.buf + 64, "message!", 8), 0);
}

Test(e2e_ep, opened_without_access_the_peer_can_only_send)
{
	struct rf_ep_attr a;
	struct serve s;
	struct rf_ep c;

	memset(&a, 0, sizeof(a));
	ep_pair(&s, &c, &a, &a, EP_PORT);
	/* nothing to use was sent, nothing is allowed */
	cr_assert_eq(c.peer.rkey, 0);
	cr_assert_eq(c.peer.addr, 0);
	cr_assert_eq(c.peer.size, 0);
	cr_assert_eq(qp_access(&s.ep), 0, "QP access %#x", qp_access(&s.ep));

	message_goes_through(&c, &s);

	/* a WRITE, even with the buffer's real key, is refused */
	memcpy(c.buf, "written!", 8);
	cr_assert(refused(one_sided(&c, &s, 1, s.ep.mr->rkey)));
	cr_assert_eq(s.ep.buf[0], 0, "the refused write landed");
	rf_ep_close(&c);
	rf_ep_close(&s.ep);
}

Test(e2e_ep, the_peer_gets_what_access_names_and_no_more)
{
	struct rf_ep_attr sa, ca;
	struct serve s;
	struct rf_ep c;

	memset(&sa, 0, sizeof(sa));
	memset(&ca, 0, sizeof(ca));
	sa.access = RF_ACCESS_REMOTE_WRITE;
	ep_pair(&s, &c, &sa, &ca, (uint16_t)(EP_PORT + 1));
	cr_assert_eq(c.peer.rkey, s.ep.mr->rkey);
	cr_assert_eq(c.peer.addr, (uint64_t)(uintptr_t)s.ep.buf);
	cr_assert_eq(c.peer.size, s.ep.buf_size);
	cr_assert_eq(s.ep.peer.size, 0, "the client granted nothing");
	cr_assert_eq(qp_access(&s.ep), IBV_ACCESS_REMOTE_WRITE);
	cr_assert_eq(qp_access(&c), 0);

	memcpy(c.buf, "written!", 8);
	cr_assert_eq(one_sided(&c, &s, 1, c.peer.rkey), RF_WC_SUCCESS);
	cr_assert_eq(memcmp(s.ep.buf, "written!", 8), 0);
	/* no read was asked for */
	cr_assert(refused(one_sided(&c, &s, 0, c.peer.rkey)));
	rf_ep_close(&c);
	rf_ep_close(&s.ep);
}

Test(e2e_ep, access_takes_remote_flags_only)
{
	struct rf_ep_attr a;
	struct rf_ep e;

	memset(&a, 0, sizeof(a));
	a.access = IBV_ACCESS_MW_BIND;
	cr_assert_eq(rf_ep_open(&e, &a), -EINVAL);
	cr_assert_not_null(e.failed);
	rf_ep_close(&e);
	a.access = 0;
	a.qp_access = IBV_ACCESS_ZERO_BASED;
	cr_assert_eq(rf_ep_open(&e, &a), -EINVAL);
	rf_ep_close(&e);
}

static void *join_main(void *arg)
{
	struct serve *s = (struct serve *)arg;

	s->ret = rf_ep_open(&s->ep, &s->attr);
	if (!s->ret)
		s->ret = rf_ep_join(&s->ep, s->fd);
	return NULL;
}

/*
 * rf_ep_join() over the two ends of a socketpair (no TCP port): each side
 * learns the other's QP and buffer, a message and a granted WRITE go
 * through, and each endpoint keeps its end as sock (rf_ep_close() closes
 * it).
 */
Test(e2e_ep, joins_over_a_socket_of_its_own)
{
	struct rf_ep_attr sa, ca;
	struct serve s;
	struct rf_ep c;
	pthread_t t;
	int sv[2], ret;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&s, 0, sizeof(s));
	memset(&ca, 0, sizeof(ca));
	memset(&sa, 0, sizeof(sa));
	sa.access = RF_ACCESS_REMOTE_WRITE;
	s.attr = sa;
	s.fd = sv[0];
	cr_assert_eq(pthread_create(&t, NULL, join_main, &s), 0);
	ret = rf_ep_open(&c, &ca);
	cr_assert_eq(ret, 0, "client open: %s: %s", c.failed, strerror(-ret));
	ret = rf_ep_join(&c, sv[1]);
	cr_assert_eq(ret, 0, "client join: %s: %s", c.failed, strerror(-ret));
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(s.ret, 0, "server: %s: %s", s.ep.failed, strerror(-s.ret));
	cr_assert_eq(c.sock, sv[1]);
	cr_assert_eq(s.ep.sock, sv[0]);
	cr_assert_eq(c.peer.qpn, s.ep.qp.qpn);
	cr_assert_eq(s.ep.peer.qpn, c.qp.qpn);
	cr_assert_eq(c.peer.rkey, s.ep.mr->rkey);

	message_goes_through(&c, &s);
	memcpy(c.buf, "written!", 8);
	cr_assert_eq(one_sided(&c, &s, 1, c.peer.rkey), RF_WC_SUCCESS);
	cr_assert_eq(memcmp(s.ep.buf, "written!", 8), 0);

	rf_ep_close(&c);
	rf_ep_close(&s.ep);
}
