/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * conn.c - connection establishment and release: the commands librdmacm
 * sends (rdma_connect, rdma_listen, rdma_accept, rdma_reject,
 * rdma_disconnect, rdma_init_qp_attr, rdma_notify) and what the IB CM
 * messages that two hosts exchange (link.c) do to an id and its events.
 *
 * The exchange is the IB CM's (IBTA 12.6; drivers/infiniband/core/cm.c,
 * cma.c):
 *
 *   active                      passive
 *   CONNECT  -- REQ -->         CONNECT_REQUEST (on the listener, new id)
 *            <-- REP --         ACCEPT
 *   CONNECT_RESPONSE: librdmacm moves its QP to RTR and RTS, then ACCEPT
 *            -- RTU -->         ESTABLISHED
 *   DISCONNECT -- DREQ -->      DISCONNECTED (and the DREP goes back)
 *   DISCONNECTED <-- DREP --
 *   ... TIMEWAIT_EXIT on both after the time wait
 *
 * The kernel's CM never touches a QP that librdmacm created: librdmacm
 * moves it itself with the attributes INIT_QP_ATTR returns.  A host that
 * goes away (its socket closes) is a peer whose kernel destroyed its ids:
 * a REJ before the connection is established, a DREQ after.
 */
#include <errno.h>
#include <string.h>

#include <rdma/ib_user_verbs.h>

#include "internal.h"

enum {
	CM_TIMEWAIT_MS = 200,		/* time wait before TIMEWAIT_EXIT */
	CM_DREQ_TIMEOUT_MS = 2000,	/* a DREQ nobody answers */
	CM_DEFAULT_ACK_TIMEOUT = 19,	/* from the path's packet life time (route.c) */
	CM_MAX_BACKLOG = 1024,		/* net.rdma_ucm.max_backlog */
};

static uint32_t new_psn(void)
{
	static uint32_t x;

	if (!x)
		x = (uint32_t)cm_now_ms() ^ (emu_cfg.host_id << 16) ^ 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x & 0xffffff;
}

static void arm(struct cm_id *id, unsigned ms, int event, int status)
{
	id->timer_ms = cm_now_ms() + ms;
	id->timer_event = event;
	id->timer_status = status;
	cm_link_wake();
}

/* A message from this id, filled with what every message carries. */
static void msg_init(struct cm_msg *m, const struct cm_id *id, int type)
{
	memset(m, 0, sizeof(*m));
	m->type = (uint8_t)type;
	m->from = id->local;
	m->psn = id->psn;
}

/*
 * What a REQ and a REP both carry of the consumer's rdma_conn_param
 * (cma_connect_ib(), cma_accept_ib()): its QP, SRQ, RDMA read resources,
 * RNR retry count, flow control and private data.  Only the REQ carries
 * the retry count, the QP type, the path MTU and the addresses.
 */
static void msg_conn_param(struct cm_msg *m, const struct rdma_ucm_conn_param *p)
{
	m->qpn = p->qp_num;
	m->srq = p->srq;
	m->responder_resources = p->responder_resources;
	m->initiator_depth = p->initiator_depth;
	m->rnr_retry_count = p->rnr_retry_count;
	m->flow_control = p->flow_control;
	cm_msg_private(m, p->private_data, p->private_data_len);
}

static void send_simple(struct cm_id *id, int type, int reason)
{
	struct cm_msg m;

	msg_init(&m, id, type);
	m.reason = (uint8_t)reason;
	(void)cm_link_send(id, &m);
}

/* The event's connection parameters: the peer's view, with private data
 * padded to the message's size as the kernel delivers it. */
static struct cm_event *conn_event(struct cm_id *id, int event, int status,
				   const struct cm_msg *m, unsigned private_size)
{
	struct cm_event *ev = cm_event_new(id, event, status);
	struct rdma_ucm_conn_param *c;

	if (!ev || !m)
		return ev;
	c = &ev->resp.param.conn;
	memcpy(c->private_data, m->private_data, private_size);
	c->private_data_len = (uint8_t)private_size;
	c->responder_resources = m->initiator_depth;
	c->initiator_depth = m->responder_resources;
	c->flow_control = m->flow_control;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->srq = m->srq;
	c->qp_num = m->qpn;
	return ev;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

int cm_cmd_connect(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_connect cmd;
	struct rdma_ucm_conn_param *p = &cmd.conn_param;
	struct cm_msg m;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (!p->valid)
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	if (id->state != CM_ROUTE_RESOLVED)
		return EINVAL;
	if (id->qp_type == IBV_QPT_UD)
		return cm_sidr_connect(id, p);
	if (p->private_data_len > CM_REQ_PRIVATE)
		return EINVAL;		/* ib_send_cm_req() */
	id->psn = new_psn();
	id->remote_qpn = 0;
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	id->retry_count = p->retry_count;
	id->rnr_retry_count = p->rnr_retry_count;
	id->path_mtu = (uint8_t)cm_port_mtu();
	id->has_conn = true;

	msg_init(&m, id, CM_MSG_REQ);
	msg_conn_param(&m, p);
	m.qp_type = id->qp_type;
	m.retry_count = p->retry_count;
	m.path_mtu = id->path_mtu;
	m.src = id->src;
	m.dst = id->dst;

	id->state = CM_REQ_SENT;
	if (cm_link_connect(id) || cm_link_send(id, &m)) {
		/* nobody listens there: the remote CM's REJ, invalid service ID */
		id->state = CM_DEAD;
		cm_link_close(id);
		cm_event_post(conn_event(id, RDMA_CM_EVENT_REJECTED,
					 CM_REJ_INVALID_SERVICE_ID, NULL, 0));
	}
	return 0;
}

int cm_cmd_listen(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_listen cmd;
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	id->backlog = cmd.backlog > 0 && cmd.backlog < CM_MAX_BACKLOG ?
		      (int)cmd.backlog : CM_MAX_BACKLOG;
	if (id->state == CM_LISTEN)
		return 0;
	/* rdma_listen() of an unbound id binds it to INADDR_ANY */
	if (id->state == CM_IDLE &&
	    (ret = cm_bind_sockaddr(id, (const struct sockaddr *)&any)))
		return ret;
	if (id->state != CM_BOUND)
		return EINVAL;
	if ((ret = cm_link_listen(id)))
		return ret;
	id->state = CM_LISTEN;
	return 0;
}

int cm_cmd_accept(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_accept cmd;
	struct rdma_ucm_conn_param *p = &cmd.conn_param;
	struct cm_msg m;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	if (!p->valid) {
		/* the active side's ACCEPT after CONNECT_RESPONSE: the RTU */
		if (id->state != CM_REP_RCVD)
			return EINVAL;
		send_simple(id, CM_MSG_RTU, 0);
		id->state = CM_ESTABLISHED;
		return 0;
	}
	if (id->qp_type == IBV_QPT_UD)
		return cm_sidr_accept(id, p, cmd.uid);
	if (id->state != CM_REQ_RCVD)
		return EINVAL;
	if (p->private_data_len > CM_REP_PRIVATE)
		return EINVAL;		/* ib_send_cm_rep() */
	id->responder_resources = p->responder_resources;
	id->initiator_depth = p->initiator_depth;
	id->uid = cmd.uid;

	msg_init(&m, id, CM_MSG_REP);
	msg_conn_param(&m, p);
	if (cm_link_send(id, &m)) {
		/* the active host went away meanwhile; its REJ follows */
		id->state = CM_DEAD;
		cm_event_post(conn_event(id, RDMA_CM_EVENT_REJECTED,
					 CM_REJ_CONSUMER_DEFINED, NULL, 0));
		return 0;
	}
	id->state = CM_REP_SENT;
	return 0;
}

int cm_cmd_reject(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_reject cmd;
	struct cm_msg m;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	/* ucma_reject(): consumer-defined unless the ECE reason */
	if (!cmd.reason)
		cmd.reason = CM_REJ_CONSUMER_DEFINED;
	if (cmd.reason != CM_REJ_CONSUMER_DEFINED && cmd.reason != 35)
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	if (id->qp_type == IBV_QPT_UD)
		return cm_sidr_reject(id, &cmd);
	if (cmd.private_data_len > CM_REJ_PRIVATE)
		return EINVAL;		/* ib_send_cm_rej() */
	if (id->state != CM_REQ_RCVD && id->state != CM_REP_RCVD &&
	    id->state != CM_REP_SENT)
		return EINVAL;
	msg_init(&m, id, CM_MSG_REJ);
	m.reason = cmd.reason;
	cm_msg_private(&m, cmd.private_data, cmd.private_data_len);
	(void)cm_link_send(id, &m);
	cm_link_close(id);
	id->state = CM_DEAD;
	return 0;
}

/*
 * rdma_disconnect(): EINVAL without an IB CM id; else a DREQ when
 * established, the DREP already went back when a DREQ came, and in the
 * other states neither can be sent and it still succeeds.
 */
int cm_cmd_disconnect(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_disconnect cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	if (!id->has_conn || id->qp_type == IBV_QPT_UD)
		return EINVAL;
	if (id->state == CM_ESTABLISHED) {
		send_simple(id, CM_MSG_DREQ, 0);
		id->state = CM_DREQ_SENT;
		arm(id, CM_DREQ_TIMEOUT_MS, RDMA_CM_EVENT_DISCONNECTED, 0);
	}
	return 0;
}

/* The address vector from id's port to `to`: RoCE always carries a GRH. */
void cm_ah_attr(const struct cm_id *id, const struct cm_end *to,
		struct ib_uverbs_ah_attr *ah)
{
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	memset(ah, 0, sizeof(*ah));
	ah->dlid = to->lid;
	ah->port_num = id->local.port;
	ah->is_global = eth;
	if (eth) {
		memcpy(ah->grh.dgid, to->gid.raw, 16);
		ah->grh.sgid_index = id->local.gid_index;
		ah->grh.hop_limit = 64;
		ah->grh.traffic_class = id->tos;
	}
}

/*
 * The attributes for each transition of a connected QP, as
 * ib_cm_init_qp_attr() (or cma_ib_init_qp_attr() before there is a
 * connection, and for UD) gives them.
 */
int cm_cmd_init_qp_attr(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr a;
	struct cm_id *id;
	bool ud;
	int ret;

	(void)in_len;
	if (out_len < (int)sizeof(a))
		return ENOSPC;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	if (!id->has_dev)
		return EINVAL;
	ud = id->qp_type == IBV_QPT_UD;
	memset(&a, 0, sizeof(a));
	a.qp_state = cmd.qp_state;
	switch (cmd.qp_state) {
	case IBV_QPS_INIT:
		a.qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a.pkey_index = 0;
		a.port_num = id->local.port;
		if (ud) {
			a.qp_attr_mask |= IBV_QP_QKEY;
			a.qkey = RDMA_UDP_QKEY;
		} else {
			a.qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
			if (id->has_conn)
				a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					(id->responder_resources ? IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_ATOMIC : 0);
		}
		break;
	case IBV_QPS_RTR:
		a.qp_attr_mask = IBV_QP_STATE;
		if (ud)
			break;
		if (!id->has_conn || !id->remote_qpn)
			return EINVAL;
		a.qp_attr_mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN;
		/* cm_init_qp_rtr_attr(): an XRC initiator has no responder */
		if (id->qp_type != IBV_QPT_XRC_SEND)
			a.qp_attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		a.path_mtu = id->path_mtu;
		a.dest_qp_num = id->remote_qpn;
		/*
		 * rdma_init_qp_attr() sets rq_psn to the id's own seq_num,
		 * the PSN its REQ or REP announced (ib_send_cm_req() and
		 * ib_send_cm_rep() take rq_psn from the message they send)
		 */
		a.rq_psn = id->psn;
		a.max_dest_rd_atomic = id->responder_resources;
		a.min_rnr_timer = 0;
		cm_ah_attr(id, &id->remote, &a.ah_attr);
		break;
	case IBV_QPS_RTS:
		a.qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (ud)
			break;
		if (!id->has_conn || !id->remote_qpn)
			return EINVAL;
		/* cm_init_qp_rts_attr(): an XRC target sends only ACKs */
		a.qp_attr_mask |= IBV_QP_TIMEOUT;
		if (id->qp_type != IBV_QPT_XRC_RECV)
			a.qp_attr_mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC;
		/* cm_init_qp_rts_attr(): the peer's starting PSN
		 * (cm_req_handler(), cm_rep_handler()) */
		a.sq_psn = id->remote_psn;
		a.timeout = id->has_ack_timeout ? id->ack_timeout : CM_DEFAULT_ACK_TIMEOUT;
		a.retry_cnt = id->retry_count;
		a.rnr_retry = id->rnr_retry_count;
		a.max_rd_atomic = id->initiator_depth;
		break;
	default:
		return EINVAL;
	}
	return cm_copy_out(cmd.response, &a, sizeof(a));
}

/* rdma_notify() -> ib_cm_notify(): COMM_EST establishes a REP_SENT id early. */
int cm_cmd_notify(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_notify cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	if (!id->has_conn)
		return EINVAL;
	switch (cmd.event) {
	case IBV_EVENT_COMM_EST:
		if (id->state == CM_ESTABLISHED)
			return EISCONN;
		if (id->state != CM_REP_SENT)
			return EINVAL;
		id->state = CM_ESTABLISHED;
		cm_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		return 0;
	case IBV_EVENT_LID_CHANGE:
		return 0;
	default:
		return EINVAL;
	}
}

/* What destroying an id (or its process exiting) sends, as cm_destroy_id(). */
void cm_conn_teardown(struct cm_id *id)
{
	switch (id->state) {
	case CM_REQ_SENT:
		send_simple(id, CM_MSG_REJ, CM_REJ_TIMEOUT);
		break;
	case CM_REQ_RCVD:
	case CM_REP_SENT:
	case CM_REP_RCVD:
		send_simple(id, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED);
		break;
	case CM_ESTABLISHED:
		send_simple(id, CM_MSG_DREQ, 0);
		break;
	default:
		break;
	}
	cm_link_close(id);
}

/* ------------------------------------------------------------------------ */
/* Messages, hang-ups and timers, from link.c's thread                       */

static void disconnected(struct cm_id *id)
{
	id->state = CM_DISCONNECTED;
	cm_queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
	arm(id, CM_TIMEWAIT_MS, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}

static bool listener_takes(const struct cm_id *l, const struct cm_msg *m)
{
	const struct sockaddr *la = (const struct sockaddr *)&l->src;
	const struct sockaddr *d = (const struct sockaddr *)&m->dst;

	if (l->state != CM_LISTEN)
		return false;
	if (cm_addr_any(la))
		return !(l->afonly && la->sa_family != d->sa_family);
	if (la->sa_family != d->sa_family)
		return false;
	if (d->sa_family == AF_INET)
		return ((const struct sockaddr_in *)la)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)d)->sin_addr.s_addr;
	if (d->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)la)->sin6_addr,
			       &((const struct sockaddr_in6 *)d)->sin6_addr, 16);
	return true;
}

/* A REQ on a connection accepted on a listener's socket. */
static void on_req(struct cm_id *c, const struct cm_msg *m)
{
	struct cm_id *l = c->listener;
	bool sidr = m->type == CM_MSG_SIDR_REQ;
	struct cm_event *ev;

	if (!l || !listener_takes(l, m) || sidr != (l->qp_type == IBV_QPT_UD)) {
		if (sidr)
			cm_sidr_send_rep(c, CM_SIDR_UNSUPPORTED, 0, 0, NULL, 0);
		else
			send_simple(c, CM_MSG_REJ, CM_REJ_INVALID_SERVICE_ID);
		cm_id_destroy(c);
		return;
	}
	if (l->pending >= l->backlog) {
		/* ucma_event_handler() refuses it; the CM rejects */
		if (sidr)
			cm_sidr_send_rep(c, CM_SIDR_REJECT, 0, 0, NULL, 0);
		else
			send_simple(c, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED);
		cm_id_destroy(c);
		return;
	}
	c->ps = l->ps;
	/*
	 * cma_ib_new_conn_id(): the new id's QP type is the REQ's, the
	 * target of an XRC initiator being an XRC target (cm_req_get_qp_type())
	 */
	c->qp_type = m->qp_type == IBV_QPT_XRC_SEND ? IBV_QPT_XRC_RECV :
		     m->qp_type ? m->qp_type : l->qp_type;
	c->tos = l->tos;
	c->src = m->dst;
	c->dst = m->src;
	c->local = l->local;
	if (!l->has_dev)
		cm_end_of(&c->local, 0, 1);
	c->has_dev = true;
	c->remote = m->from;
	c->remote_qpn = m->qpn;
	c->remote_psn = m->psn;
	c->psn = new_psn();
	c->responder_resources = m->initiator_depth;
	c->initiator_depth = m->responder_resources;
	c->retry_count = m->retry_count;
	c->rnr_retry_count = m->rnr_retry_count;
	c->path_mtu = m->path_mtu < cm_port_mtu() ? m->path_mtu : (uint8_t)cm_port_mtu();
	c->has_conn = true;
	c->state = CM_REQ_RCVD;
	c->file = l->file;
	ev = sidr ? cm_sidr_req_event(l, c, m) :
	     conn_event(l, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m, CM_REQ_PRIVATE);
	if (!ev) {
		if (sidr)
			cm_sidr_send_rep(c, CM_SIDR_REJECT, 0, 0, NULL, 0);
		else
			send_simple(c, CM_MSG_REJ, CM_REJ_CONSUMER_DEFINED);
		cm_id_destroy(c);
		return;
	}
	ev->resp.id = c->handle;
	ev->child = c;
	l->pending++;
	cm_event_post(ev);
}

void cm_on_msg(struct cm_id *id, const struct cm_msg *m)
{
	switch (m->type) {
	case CM_MSG_REQ:
	case CM_MSG_SIDR_REQ:
		if (id->state == CM_IDLE && id->listener)
			on_req(id, m);
		break;
	case CM_MSG_SIDR_REP:
		cm_sidr_on_rep(id, m);
		break;
	case CM_MSG_REP:
		if (id->state != CM_REQ_SENT)
			break;
		id->remote = m->from;
		id->remote_qpn = m->qpn;
		id->remote_psn = m->psn;
		/* cm_rep_handler(): the peer's resources, seen from here */
		id->initiator_depth = m->responder_resources;
		id->responder_resources = m->initiator_depth;
		id->rnr_retry_count = m->rnr_retry_count;
		id->state = CM_REP_RCVD;
		cm_event_post(conn_event(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m,
					 CM_REP_PRIVATE));
		break;
	case CM_MSG_RTU:
		if (id->state != CM_REP_SENT)
			break;
		id->state = CM_ESTABLISHED;
		cm_queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
		break;
	case CM_MSG_REJ:
		if (id->state != CM_REQ_SENT && id->state != CM_REP_RCVD &&
		    id->state != CM_REP_SENT && id->state != CM_REQ_RCVD)
			break;
		id->state = CM_DEAD;
		cm_link_close(id);
		cm_event_post(conn_event(id, RDMA_CM_EVENT_REJECTED, m->reason, m,
					 CM_REJ_PRIVATE));
		break;
	case CM_MSG_DREQ:
		if (id->state != CM_ESTABLISHED && id->state != CM_DREQ_SENT &&
		    id->state != CM_REP_SENT)
			break;
		send_simple(id, CM_MSG_DREP, 0);
		disconnected(id);
		break;
	case CM_MSG_DREP:
		if (id->state == CM_DREQ_SENT)
			disconnected(id);
		break;
	}
}

void cm_on_hangup(struct cm_id *id)
{
	cm_link_close(id);
	switch (id->state) {
	case CM_IDLE:		/* accepted on a listener, no REQ came */
		if (id->listener && !id->visible)
			cm_id_destroy(id);
		break;
	case CM_REQ_SENT:
	case CM_REP_RCVD:
	case CM_REP_SENT:
	case CM_REQ_RCVD:
		id->state = CM_DEAD;
		cm_event_post(conn_event(id, RDMA_CM_EVENT_REJECTED,
					 CM_REJ_CONSUMER_DEFINED, NULL, 0));
		break;
	case CM_ESTABLISHED:
	case CM_DREQ_SENT:
		disconnected(id);
		break;
	default:
		break;
	}
}

void cm_on_timer(struct cm_id *id)
{
	int event = id->timer_event;

	id->timer_ms = 0;
	switch (event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		if (id->state != CM_ADDR_QUERY)
			return;
		id->state = CM_BOUND;
		cm_queue_event(id, event, id->timer_status);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:	/* DREQ timed out */
		if (id->state == CM_DREQ_SENT) {
			cm_link_close(id);
			disconnected(id);
		}
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		cm_link_close(id);
		cm_queue_event(id, event, 0);
		break;
	default:
		cm_queue_event(id, event, id->timer_status);
		break;
	}
}

/* A connection on a listener's socket: an id that waits for its REQ. */
void cm_on_accept(struct cm_id *l, int sock)
{
	struct cm_id *c = cm_id_alloc(l->file, l->ps, l->qp_type);

	if (!c) {
		emu_real_close(sock);
		return;
	}
	c->listener = l;
	cm_link_adopt(c, sock);
}
