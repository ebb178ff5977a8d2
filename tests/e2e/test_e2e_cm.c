/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_e2e_cm.c - rdmafast over QPs that rdma_cm created (rdmafast/cm.h):
 * two ids of this process connect through librdmacm (the server's buffer
 * address and rkey travel in the accept's private data), rdmafast takes
 * over both QPs and their CQs, RDMA WRITEs into the server's buffer and
 * SENDs to its receive queue, and after rdma_disconnect() the receives
 * left in the queue come back flushed through rf_cq_poll().
 */
#include <arpa/inet.h>

#include <rdmafast/cm.h>

#include "e2e.h"

struct cm_side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct rf_qp qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

struct cm_offer {
	uint64_t addr;
	uint32_t rkey;
};

static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	cr_assert_eq(poll(&p, 1, E2E_TIMEOUT_MS), 1, "no %s", rdma_event_str(t));
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0);
	cr_assert_eq(ev->event, t, "%s, wanted %s", rdma_event_str(ev->event), rdma_event_str(t));
	return ev;
}

/* The QP on s->id with rdmafast owning it and a CQ of ours. */
static void take_over(struct cm_side *s)
{
	struct ibv_qp_init_attr qa;
	int rc;

	s->buf = (uint8_t *)aligned_alloc(4096, E2E_BUF);
	cr_assert_not_null(s->buf);
	memset(s->buf, 0, E2E_BUF);
	s->mr = ibv_reg_mr(s->id->pd, s->buf, E2E_BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	cr_assert_not_null(s->mr);
	rc = rf_cq_create_ibv(&s->cq, &s->ibcq, s->id->verbs, 64, NULL, 0);
	cr_assert_eq(rc, 0, "cq: %s", strerror(-rc));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->ibcq;
	qa.recv_cq = s->ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	cr_assert_eq(rf_qp_init_cm(&s->qp, s->id, &qa, &s->cq, NULL), -EINVAL,
		     "no QP on the id yet");
	cr_assert_eq(rdma_create_qp(s->id, NULL, &qa), 0, "rdma_create_qp: %s", strerror(errno));
	rc = rf_qp_init_cm(&s->qp, s->id, &qa, &s->cq, NULL);
	cr_assert_eq(rc, 0, "rf_qp_init_cm: %s", strerror(-rc));
	cr_assert(s->qp.has_rq);
	cr_assert_eq(s->qp.qpn, s->id->qp->qp_num);
}

static uint64_t at(const struct cm_side *s, size_t off)
{
	return (uint64_t)(uintptr_t)(s->buf + off);
}

static void close_side(struct cm_side *s)
{
	rf_qp_fini_cm(&s->qp, &s->cq, NULL);
	rdma_destroy_qp(s->id);
	cr_assert_eq(rf_cq_destroy_ibv(&s->cq, s->ibcq), 0);
	ibv_dereg_mr(s->mr);
	free(s->buf);
	cr_assert_eq(rdma_destroy_id(s->id), 0);
}

Test(e2e_cm, rdmafast_on_the_qp_rdma_create_qp_made, .timeout = 120)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7495) };
	struct cm_side c = { 0 }, s = { 0 };
	struct rdma_cm_id *listen;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7,
				      .responder_resources = 1, .initiator_depth = 1 };
	struct cm_offer offer, got;
	struct rf_wc wc[4];
	static const char msg[] = "rdmafast over rdma_cm";

	s.ch = rdma_create_event_channel();
	c.ch = rdma_create_event_channel();
	cr_assert(s.ch && c.ch, "rdma_create_event_channel: %s", strerror(errno));
	cr_assert_eq(rdma_create_id(s.ch, &listen, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_bind_addr(listen, (struct sockaddr *)&sin), 0);
	cr_assert_eq(rdma_listen(listen, 1), 0);

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	cr_assert_eq(rdma_create_id(c.ch, &c.id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&sin, 2000), 0);
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	cr_assert_eq(rdma_resolve_route(c.id, 2000), 0);
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	take_over(&c);
	cr_assert_eq(rdma_connect(c.id, &cp), 0);

	ev = expect(s.ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	s.id = ev->id;
	rdma_ack_cm_event(ev);
	take_over(&s);
	/* a receive posted by rdmafast before the connection exists */
	cr_assert_eq(rf_rq_post_one(&s.qp.rq, s.mr->lkey, at(&s, 4096), 64, 7), 0);
	cr_assert_eq(rf_rq_post_one(&s.qp.rq, s.mr->lkey, at(&s, 8192), 64, 8), 0);
	rf_rq_ring(&s.qp.rq);
	offer.addr = at(&s, 0);
	offer.rkey = s.mr->rkey;
	cp.private_data = &offer;
	cp.private_data_len = sizeof(offer);
	cr_assert_eq(rdma_accept(s.id, &cp), 0, "accept: %s", strerror(errno));
	ev = expect(c.ch, RDMA_CM_EVENT_ESTABLISHED);
	memcpy(&got, ev->param.conn.private_data, sizeof(got));
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(expect(s.ch, RDMA_CM_EVENT_ESTABLISHED));
	cr_assert_eq(got.rkey, s.mr->rkey);

	/* WRITE into the server's buffer at the offered address, then a SEND */
	memcpy(c.buf, msg, sizeof(msg));
	cr_assert_eq(rf_sq_post_write(&c.qp.sq, c.mr->lkey, at(&c, 0), sizeof(msg),
				      got.rkey, got.addr, RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&c.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_str_eq((char *)s.buf, msg, "the WRITE landed");
	cr_assert_eq(rf_sq_post_send(&c.qp.sq, c.mr->lkey, at(&c, 0), sizeof(msg),
				     RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	e2e_wait(&s.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, RF_WC_RECV);
	cr_assert_eq(wc[0].wr_id, 7);
	cr_assert_eq(wc[0].byte_len, sizeof(msg));
	cr_assert_str_eq((char *)s.buf + 4096, msg);
	e2e_wait(&c.cq, wc, 1);
	cr_assert_eq(wc[0].wr_id, 2);

	/* librdmacm moves the server's QP to ERR on disconnect: its last
	 * receive comes back flushed through rdmafast's poll */
	cr_assert_eq(rdma_disconnect(c.id), 0);
	rdma_ack_cm_event(expect(s.ch, RDMA_CM_EVENT_DISCONNECTED));
	cr_assert_eq(rdma_disconnect(s.id), 0);
	e2e_wait(&s.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[0].wr_id, 8);
	rdma_ack_cm_event(expect(c.ch, RDMA_CM_EVENT_DISCONNECTED));

	close_side(&c);
	close_side(&s);
	cr_assert_eq(rdma_destroy_id(listen), 0);
	rdma_destroy_event_channel(c.ch);
	rdma_destroy_event_channel(s.ch);
}
