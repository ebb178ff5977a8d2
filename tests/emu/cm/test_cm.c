/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_cm.c - the fake rdma_cm through librdmacm's public API, both ends in
 * this process (one host connecting to itself over loopback): RC
 * connect/accept/disconnect with private data and the QP transitions,
 * reject, no listener, SIDR for UD, multicast joins, timeouts, options,
 * migration, and the failure paths (a peer id destroyed at each step).
 */
#include <fcntl.h>

#include "cm_test.h"

struct pair {
	struct rdma_event_channel *lch, *cch;
	struct rdma_cm_id *listen, *client, *server;
};

/* Connect client to a listener on port, both with QPs, exchanging private data. */
static void pair_connect(struct pair *p, uint16_t port)
{
	struct rdma_conn_param cp = { .private_data = "hello", .private_data_len = 6,
				      .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_conn_param ap = { .private_data = "world!", .private_data_len = 7,
				      .responder_resources = 1, .initiator_depth = 1,
				      .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;

	p->lch = rdma_create_event_channel();
	p->cch = rdma_create_event_channel();
	cr_assert(p->lch && p->cch, "rdma_create_event_channel: %s", strerror(errno));
	p->listen = ct_listen(p->lch, RDMA_PS_TCP, port);
	p->client = ct_resolved(p->cch, RDMA_PS_TCP, "127.0.0.1", port);
	cr_assert(p->client->verbs, "the resolved id has the emulated device");
	ct_create_qp(p->client, IBV_QPT_RC);
	cr_assert_eq(ct_qp_state(p->client->qp), IBV_QPS_INIT);
	cr_assert_eq(rdma_connect(p->client, &cp), 0, "connect: %s", strerror(errno));

	ev = ct_expect(p->lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->listen_id, p->listen);
	cr_assert_eq(ev->param.conn.private_data_len, 56, "REQ private data is 56 bytes");
	cr_assert_str_eq(ev->param.conn.private_data, "hello");
	cr_assert_eq(ev->param.conn.qp_num, p->client->qp->qp_num);
	p->server = ev->id;
	cr_assert(p->server->verbs);
	ct_create_qp(p->server, IBV_QPT_RC);
	cr_assert_eq(rdma_accept(p->server, &ap), 0, "accept: %s", strerror(errno));
	rdma_ack_cm_event(ev);
	cr_assert_eq(ct_qp_state(p->server->qp), IBV_QPS_RTS);

	ev = ct_expect(p->cch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ev->param.conn.private_data_len, 196, "REP private data is 196 bytes");
	cr_assert_str_eq(ev->param.conn.private_data, "world!");
	cr_assert_eq(ev->param.conn.qp_num, p->server->qp->qp_num);
	rdma_ack_cm_event(ev);
	ct_expect_ack(p->lch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ct_qp_state(p->client->qp), IBV_QPS_RTS);
}

static void pair_destroy(struct pair *p)
{
	if (p->server) {
		rdma_destroy_qp(p->server);
		cr_assert_eq(rdma_destroy_id(p->server), 0);
	}
	if (p->client) {
		if (p->client->qp)
			rdma_destroy_qp(p->client);
		cr_assert_eq(rdma_destroy_id(p->client), 0);
	}
	cr_assert_eq(rdma_destroy_id(p->listen), 0);
	rdma_destroy_event_channel(p->lch);
	rdma_destroy_event_channel(p->cch);
}

/* One SEND from `from` to `to` over the connected QPs. */
static void send_one(struct rdma_cm_id *from, struct rdma_cm_id *to)
{
	char sbuf[64] = "over rdma_cm", rbuf[64] = { 0 };
	struct ibv_mr *smr = ibv_reg_mr(from->pd, sbuf, sizeof(sbuf), 0);
	struct ibv_mr *rmr = ibv_reg_mr(to->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge ss = { (uintptr_t)sbuf, sizeof(sbuf), smr->lkey };
	struct ibv_sge rs = { (uintptr_t)rbuf, sizeof(rbuf), rmr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	int n = 0;

	cr_assert_eq(ibv_post_recv(to->qp, &rwr, &rbad), 0);
	cr_assert_eq(ibv_post_send(from->qp, &swr, &sbad), 0);
	for (int i = 0; i < CT_TIMEOUT_MS && !n; i++) {
		n = ibv_poll_cq(to->recv_cq, 1, &wc);
		if (!n)
			usleep(1000);
	}
	cr_assert_eq(n, 1, "no receive completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_str_eq(rbuf, "over rdma_cm");
	for (int i = 0; i < CT_TIMEOUT_MS && ibv_poll_cq(from->send_cq, 1, &wc) == 0; i++)
		usleep(1000);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
}

Test(cm, rc_connect_accept_send_disconnect_timewait)
{
	struct pair p = { 0 };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	pair_connect(&p, 7471);
	cr_assert_eq(ibv_query_qp(p.client->qp, &a, IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_SQ_PSN | IBV_QP_ACCESS_FLAGS, &ia), 0);
	cr_assert_eq(a.dest_qp_num, p.server->qp->qp_num);
	cr_assert(a.qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
	send_one(p.client, p.server);
	send_one(p.server, p.client);

	cr_assert_eq(rdma_disconnect(p.client), 0);
	cr_assert_eq(ct_qp_state(p.client->qp), IBV_QPS_ERR, "librdmacm moved it to ERR");
	ct_expect_ack(p.lch, RDMA_CM_EVENT_DISCONNECTED);
	ct_expect_ack(p.cch, RDMA_CM_EVENT_DISCONNECTED);
	cr_assert_eq(rdma_disconnect(p.server), 0, "answering a DREQ succeeds");
	ct_expect_ack(p.cch, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	ct_expect_ack(p.lch, RDMA_CM_EVENT_TIMEWAIT_EXIT);
	pair_destroy(&p);
}

/* Connections a listener accepted own no port (cma_check_port()): its
 * port can be listened on again while they live (perftest -R does so). */
Test(cm, listen_again_beside_accepted_connections)
{
	struct pair p = { 0 };
	struct rdma_cm_id *again;

	pair_connect(&p, 7486);
	cr_assert_eq(rdma_destroy_id(p.listen), 0);
	p.listen = ct_listen(p.lch, RDMA_PS_TCP, 7486);
	send_one(p.client, p.server);
	cr_assert_eq(rdma_create_id(p.lch, &again, NULL, RDMA_PS_TCP), 0);
	{
		struct sockaddr_in sin = ct_addr("0.0.0.0", 7486);

		cr_assert_eq(rdma_bind_addr(again, (struct sockaddr *)&sin), -1,
			     "but a second listener is refused");
		cr_assert_eq(errno, EADDRNOTAVAIL);
	}
	cr_assert_eq(rdma_destroy_id(again), 0);
	pair_destroy(&p);
}

Test(cm, reject_with_private_data)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l = ct_listen(lch, RDMA_PS_TCP, 7472);
	struct rdma_cm_id *c = ct_resolved(cch, RDMA_PS_TCP, "127.0.0.1", 7472);
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev;
	char big[149] = { 0 };

	ct_create_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	ev = ct_expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(rdma_reject(ev->id, big, sizeof(big)), -1, "149 bytes of REJ data");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_reject(ev->id, "no", 3), 0);
	cr_assert_eq(rdma_destroy_id(ev->id), 0);
	rdma_ack_cm_event(ev);
	ev = ct_expect(cch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, 28, "IB_CM_REJ_CONSUMER_DEFINED");
	cr_assert_eq(ev->param.conn.private_data_len, 148);
	cr_assert_str_eq(ev->param.conn.private_data, "no");
	rdma_ack_cm_event(ev);
	cr_assert_eq(ct_qp_state(c->qp), IBV_QPS_ERR);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(c), 0);
	cr_assert_eq(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(lch);
	rdma_destroy_event_channel(cch);
}

Test(cm, no_listener_is_rejected_invalid_service_id)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *c = ct_resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7473);
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct rdma_cm_event *ev;

	ct_create_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	ev = ct_expect(ch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, 8, "IB_CM_REJ_INVALID_SERVICE_ID");
	rdma_ack_cm_event(ev);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(c), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, request_private_data_limit)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *c = ct_resolved(ch, RDMA_PS_TCP, "127.0.0.1", 7474);
	char pd[57] = { 0 };
	struct rdma_conn_param cp = { .private_data = pd, .private_data_len = 57 };

	ct_create_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), -1, "57 bytes do not fit a REQ");
	cr_assert_eq(errno, EINVAL);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(c), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, peer_destroyed_established_disconnects)
{
	struct pair p = { 0 };

	pair_connect(&p, 7475);
	rdma_destroy_qp(p.server);
	cr_assert_eq(rdma_destroy_id(p.server), 0);
	p.server = NULL;
	ct_expect_ack(p.cch, RDMA_CM_EVENT_DISCONNECTED);
	pair_destroy(&p);
}

Test(cm, listener_destroyed_with_request_pending_rejects)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l = ct_listen(lch, RDMA_PS_TCP, 7476);
	struct rdma_cm_id *c = ct_resolved(cch, RDMA_PS_TCP, "127.0.0.1", 7476);
	struct rdma_conn_param cp = { .retry_count = 7 };
	struct pollfd pf = { .fd = lch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	ct_create_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	cr_assert_eq(poll(&pf, 1, CT_TIMEOUT_MS), 1, "CONNECT_REQUEST queued");
	/* never read: destroying the listener takes it back and rejects */
	cr_assert_eq(rdma_destroy_id(l), 0);
	ev = ct_expect(cch, RDMA_CM_EVENT_REJECTED);
	cr_assert_eq(ev->status, 28);
	rdma_ack_cm_event(ev);
	ct_expect_none(lch, 100);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(c), 0);
	rdma_destroy_event_channel(lch);
	rdma_destroy_event_channel(cch);
}

Test(cm, ud_sidr_established_with_qpn_and_qkey)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l = ct_listen(lch, RDMA_PS_UDP, 7477);
	struct rdma_cm_id *c = ct_resolved(cch, RDMA_PS_UDP, "127.0.0.1", 7477);
	struct rdma_conn_param cp = { .private_data = "sidr", .private_data_len = 5 };
	struct rdma_conn_param ap = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *s;

	ct_create_qp(c, IBV_QPT_UD);
	cr_assert_eq(ct_qp_state(c->qp), IBV_QPS_RTS, "librdmacm brings UD QPs to RTS");
	cr_assert_eq(rdma_connect(c, &cp), 0);
	ev = ct_expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_str_eq(ev->param.ud.private_data, "sidr");
	s = ev->id;
	ct_create_qp(s, IBV_QPT_UD);
	ap.qp_num = s->qp->qp_num;
	cr_assert_eq(rdma_accept(s, &ap), 0);
	rdma_ack_cm_event(ev);
	ev = ct_expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ev->param.ud.qp_num, s->qp->qp_num);
	cr_assert_eq(ev->param.ud.qkey, RDMA_UDP_QKEY);
	cr_assert_eq(ev->param.ud.ah_attr.port_num, 1);
	rdma_ack_cm_event(ev);
	ct_expect_none(lch, 100);
	rdma_destroy_qp(s);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(s), 0);
	cr_assert_eq(rdma_destroy_id(c), 0);
	cr_assert_eq(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(lch);
	rdma_destroy_event_channel(cch);
}

Test(cm, ud_sidr_without_listener_is_unreachable)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *c = ct_resolved(ch, RDMA_PS_UDP, "127.0.0.1", 7478);
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;

	cr_assert_eq(rdma_connect(c, &cp), 0);
	ev = ct_expect(ch, RDMA_CM_EVENT_UNREACHABLE);
	cr_assert_eq(ev->status, 1, "IB_SIDR_UNSUPPORTED");
	rdma_ack_cm_event(ev);
	cr_assert_eq(rdma_destroy_id(c), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, multicast_join_and_leave)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in src = ct_addr("127.0.0.1", 0), grp = ct_addr("224.0.0.7", 0);
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	int ctx;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), 0);
	cr_assert_eq(rdma_resolve_addr(id, (struct sockaddr *)&src,
				       (struct sockaddr *)&grp, 2000), 0);
	ct_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ct_create_qp(id, IBV_QPT_UD);
	cr_assert_eq(rdma_join_multicast(id, (struct sockaddr *)&grp, &ctx), 0,
		     "join: %s", strerror(errno));
	ev = ct_expect(ch, RDMA_CM_EVENT_MULTICAST_JOIN);
	cr_assert_eq(ev->param.ud.private_data, &ctx, "the join's context");
	cr_assert_eq(ev->param.ud.qp_num, 0xffffff);
	cr_assert(ev->param.ud.ah_attr.is_global);
	cr_assert_eq(ev->param.ud.ah_attr.grh.dgid.raw[0], 0xff, "a multicast GID");
	rdma_ack_cm_event(ev);
	cr_assert_eq(rdma_leave_multicast(id, (struct sockaddr *)&grp), 0);
	cr_assert_eq(rdma_leave_multicast(id, (struct sockaddr *)&grp), -1);
	cr_assert_eq(errno, EADDRNOTAVAIL);
	rdma_destroy_qp(id);
	cr_assert_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, unreachable_address_times_out)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = ct_addr("192.0.2.1", 7479);	/* TEST-NET-1 */
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 50), 0);
	ev = ct_expect(ch, RDMA_CM_EVENT_ADDR_ERROR);
	cr_assert_eq(ev->status, -ETIMEDOUT);
	rdma_ack_cm_event(ev);
	cr_assert_null(id->verbs, "no device was found for it");
	/* bound again after the error: a reachable destination resolves */
	dst = ct_addr("127.0.0.1", 7479);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	ct_expect_ack(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	cr_assert_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, bind_conflicts_and_non_local_address)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in any = ct_addr("0.0.0.0", 7480), lo = ct_addr("127.0.0.1", 7480);
	struct sockaddr_in far = ct_addr("192.0.2.1", 7481);
	struct rdma_cm_id *a, *b;
	int one = 1;

	cr_assert_eq(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&lo), 0);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&lo), -1, "bound already");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&lo), -1);
	cr_assert_eq(errno, EADDRINUSE);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&any), -1);
	cr_assert_eq(errno, EADDRNOTAVAIL, "wildcard beside a specific address");
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&far), -1);
	cr_assert_eq(errno, EADDRNOTAVAIL, "not an address of this machine");
	cr_assert_eq(rdma_destroy_id(b), 0);
	/* both with REUSEADDR share the port */
	cr_assert_eq(rdma_destroy_id(a), 0);
	cr_assert_eq(rdma_create_id(ch, &a, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_create_id(ch, &b, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_set_option(a, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)), 0);
	cr_assert_eq(rdma_set_option(b, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)), 0);
	cr_assert_eq(rdma_bind_addr(a, (struct sockaddr *)&lo), 0);
	cr_assert_eq(rdma_bind_addr(b, (struct sockaddr *)&lo), 0);
	cr_assert_eq(rdma_destroy_id(a), 0);
	cr_assert_eq(rdma_destroy_id(b), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, options)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *ud;
	uint8_t tos = 32, timeout = 12;
	int one = 1;
	long wrong = 1;

	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_create_id(ch, &ud, NULL, RDMA_PS_UDP), 0);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1), 0);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &one, sizeof(one)), 0);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &wrong, sizeof(wrong)), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1), 0);
	cr_assert_eq(rdma_set_option(ud, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1), -1,
		     "ACK timeout is for RC");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one)), -1);
	cr_assert_eq(errno, ENOSYS);
	cr_assert_eq(rdma_set_option(id, 7, 0, &one, sizeof(one)), -1);
	cr_assert_eq(errno, ENOSYS);
	/* AFONLY only before binding */
	{
		struct sockaddr_in lo = ct_addr("127.0.0.1", 0);

		cr_assert_eq(rdma_bind_addr(id, (struct sockaddr *)&lo), 0);
		cr_assert_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
					     &one, sizeof(one)), -1);
		cr_assert_eq(errno, EINVAL);
	}
	cr_assert_eq(rdma_destroy_id(id), 0);
	cr_assert_eq(rdma_destroy_id(ud), 0);
	rdma_destroy_event_channel(ch);
}

Test(cm, ack_timeout_reaches_the_qp)
{
	struct rdma_event_channel *lch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *l = ct_listen(lch, RDMA_PS_TCP, 7482);
	struct rdma_cm_id *c = ct_resolved(cch, RDMA_PS_TCP, "127.0.0.1", 7482);
	struct rdma_conn_param cp = { .retry_count = 5, .rnr_retry_count = 3 };
	struct rdma_cm_event *ev;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint8_t timeout = 11;

	cr_assert_eq(rdma_set_option(c, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, 1), 0);
	ct_create_qp(c, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(c, &cp), 0);
	ev = ct_expect(lch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->param.conn.retry_count, 5);
	ct_create_qp(ev->id, IBV_QPT_RC);
	cr_assert_eq(rdma_accept(ev->id, &(struct rdma_conn_param){ .rnr_retry_count = 6 }), 0);
	struct rdma_cm_id *s = ev->id;
	rdma_ack_cm_event(ev);
	ct_expect_ack(cch, RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(ibv_query_qp(c->qp, &a, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY, &ia), 0);
	cr_assert_eq(a.timeout, 11);
	cr_assert_eq(a.retry_cnt, 5);
	cr_assert_eq(a.rnr_retry, 6, "the passive side's RNR retry count");
	rdma_destroy_qp(s);
	rdma_destroy_qp(c);
	cr_assert_eq(rdma_destroy_id(s), 0);
	cr_assert_eq(rdma_destroy_id(c), 0);
	cr_assert_eq(rdma_destroy_id(l), 0);
	rdma_destroy_event_channel(lch);
	rdma_destroy_event_channel(cch);
}

Test(cm, nonblocking_channel_and_migrate)
{
	struct rdma_event_channel *a = rdma_create_event_channel();
	struct rdma_event_channel *b = rdma_create_event_channel();
	struct sockaddr_in dst = ct_addr("127.0.0.1", 7483);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	cr_assert_eq(fcntl(a->fd, F_SETFL, fcntl(a->fd, F_GETFL) | O_NONBLOCK), 0);
	cr_assert_eq(rdma_get_cm_event(a, &ev), -1);
	cr_assert_eq(errno, EAGAIN, "nothing queued on a non-blocking channel");
	cr_assert_eq(rdma_create_id(a, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	/* the queued ADDR_RESOLVED moves with the id */
	cr_assert_eq(rdma_migrate_id(id, b), 0);
	ct_expect_none(a, 50);
	ct_expect_ack(b, RDMA_CM_EVENT_ADDR_RESOLVED);
	cr_assert_eq(rdma_notify(id, IBV_EVENT_COMM_EST), -1, "no connection to notify");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(a);
	rdma_destroy_event_channel(b);
}

Test(cm, devices_and_unacked_events_on_destroy)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in dst = ct_addr("127.0.0.1", 7484);
	struct ibv_context **devs;
	struct rdma_cm_id *id;
	int n = 0;

	devs = rdma_get_devices(&n);
	cr_assert(devs);
	cr_assert_eq(n, 1, "the emulated mlx5_0");
	cr_assert_str_eq(ibv_get_device_name(devs[0]->device), "mlx5_0");
	rdma_free_devices(devs);
	cr_assert_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	cr_assert_eq(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	/* never fetched: DESTROY_ID takes it back and does not wait for it */
	cr_assert_eq(rdma_destroy_id(id), 0);
	ct_expect_none(ch, 50);
	rdma_destroy_event_channel(ch);
}

/* On RoCE the port's IPv4 RoCE GID is an address of this host too. */
Test(cm, roce_gid_address_names_the_port)
{
	struct ibv_context **devs = rdma_get_devices(NULL);
	struct ibv_port_attr pa;
	union ibv_gid gid;
	char ip[INET_ADDRSTRLEN];
	struct pair p = { 0 };

	cr_assert(devs && devs[0]);
	cr_assert_eq(ibv_query_port(devs[0], 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
		rdma_free_devices(devs);
		cr_skip_test("InfiniBand: run by cm_roce::everything_on_roce");
	}
	/* the IPv4-mapped RoCE v2 GID, index 3 (index 2 is its RoCE v1 twin) */
	cr_assert_eq(ibv_query_gid(devs[0], 1, 3, &gid), 0);
	rdma_free_devices(devs);
	cr_assert(inet_ntop(AF_INET, &gid.raw[12], ip, sizeof(ip)));
	p.lch = rdma_create_event_channel();
	p.cch = rdma_create_event_channel();
	p.listen = ct_listen(p.lch, RDMA_PS_TCP, 7485);
	p.client = ct_resolved(p.cch, RDMA_PS_TCP, ip, 7485);
	cr_assert_eq(memcmp(p.client->route.addr.addr.ibaddr.dgid.raw, gid.raw, 16), 0,
		     "the route leads to that GID");
	cr_assert_eq(rdma_destroy_id(p.client), 0);
	p.client = NULL;
	pair_destroy(&p);
}

/*
 * Every test of the cm suite again on RoCE: this binary with
 * RFEMU_LINK_LAYER=eth (a fresh runner, not one of this runner's workers).
 */
Test(cm_roce, everything_on_roce, .timeout = 240)
{
	test_rerun_on_roce("cm/*");
}
