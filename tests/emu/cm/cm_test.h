/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cm_test.h - fixtures for the rdma_cm tests: event expectations with a
 * deadline, and an RC pair connected through librdmacm in one process
 * (a process is one host: its two ids connect over loopback as two hosts'
 * would, through the listener's socket).
 */
#ifndef RDMAFAST_TESTS_EMU_CM_TEST_H
#define RDMAFAST_TESTS_EMU_CM_TEST_H

#include <arpa/inet.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include "emu_test.h"

/* Generous: the machine is shared; nothing here asserts on speed. */
#define CT_TIMEOUT_MS	20000

static inline struct sockaddr_in ct_addr(const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	cr_assert_eq(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

/* The next event on ch, which must be `type`, within CT_TIMEOUT_MS. */
static inline struct rdma_cm_event *ct_expect(struct rdma_event_channel *ch,
					      enum rdma_cm_event_type type)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	cr_assert_eq(poll(&p, 1, CT_TIMEOUT_MS), 1, "no event (waiting for %s)",
		     rdma_event_str(type));
	cr_assert_eq(rdma_get_cm_event(ch, &ev), 0, "rdma_get_cm_event: %s",
		     strerror(errno));
	cr_assert_eq(ev->event, type, "got %s (status %d), wanted %s",
		     rdma_event_str(ev->event), ev->status, rdma_event_str(type));
	return ev;
}

static inline void ct_expect_ack(struct rdma_event_channel *ch,
				 enum rdma_cm_event_type type)
{
	rdma_ack_cm_event(ct_expect(ch, type));
}

/* Nothing queued on ch for ms milliseconds. */
static inline void ct_expect_none(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, ms), 0, "an unexpected event is queued");
}

static inline struct rdma_cm_id *ct_listen(struct rdma_event_channel *ch,
					   enum rdma_port_space ps, uint16_t port)
{
	struct sockaddr_in sin = ct_addr("0.0.0.0", port);
	struct rdma_cm_id *id;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, ps), 0);
	cr_assert_eq(rdma_bind_addr(id, (struct sockaddr *)&sin), 0,
		     "bind: %s", strerror(errno));
	cr_assert_eq(rdma_listen(id, 8), 0, "listen: %s", strerror(errno));
	return id;
}

/* An id on ch whose route to ip:port is resolved. */
static inline struct rdma_cm_id *ct_resolved(struct rdma_event_channel *ch,
					     enum rdma_port_space ps,
					     const char *ip, uint16_t port)
{
	struct sockaddr_in dst = ct_addr(ip, port);
	struct rdma_cm_id *id;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, ps), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0,
		     "resolve_addr: %s", strerror(errno));
	ct_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	cr_assert_eq(rdma_resolve_route(id, 2000), 0);
	ct_expect_ack(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	return id;
}

static inline void ct_create_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};

	cr_assert_eq(rdma_create_qp(id, NULL, &a), 0, "rdma_create_qp: %s",
		     strerror(errno));
}

static inline enum ibv_qp_state ct_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

#endif /* RDMAFAST_TESTS_EMU_CM_TEST_H */
