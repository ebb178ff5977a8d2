/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sidr.c - Service ID Resolution (IBTA 12.11): how a UD id "connects".
 * The active side's rdma_connect() sends a SIDR REQ; the listener sees a
 * CONNECT_REQUEST and answers with rdma_accept() (its QPN and Q_Key) or
 * rdma_reject(); the active side gets ESTABLISHED with the remote QPN,
 * Q_Key and the address vector to reach it, or UNREACHABLE with the SIDR
 * status.  No connection remains: the ids stay as they were.
 * (drivers/infiniband/core/cma.c: cma_resolve_ib_udp, cma_sidr_rep_handler,
 * cma_send_sidr_rep.)
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int cm_sidr_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p)
{
	struct cm_msg m;

	if (p->private_data_len > CM_SIDR_REQ_PRIVATE)
		return EINVAL;		/* ib_send_cm_sidr_req() */
	memset(&m, 0, sizeof(m));
	m.type = CM_MSG_SIDR_REQ;
	m.from = id->local;
	m.src = id->src;
	m.dst = id->dst;
	cm_msg_private(&m, p->private_data, p->private_data_len);
	id->state = CM_REQ_SENT;
	if (cm_link_connect(id) || cm_link_send(id, &m)) {
		/* no listener: the remote CM answers SIDR status "unsupported" */
		cm_link_close(id);
		id->state = CM_ROUTE_RESOLVED;
		cm_queue_event(id, RDMA_CM_EVENT_UNREACHABLE, CM_SIDR_UNSUPPORTED);
	}
	return 0;
}

/* The CONNECT_REQUEST of a SIDR REQ: the requester's address vector. */
struct cm_event *cm_sidr_req_event(struct cm_id *l, struct cm_id *c,
				   const struct cm_msg *m)
{
	struct cm_event *ev = cm_event_new(l, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	struct rdma_ucm_ud_param *u;

	if (!ev)
		return NULL;
	u = &ev->resp.param.ud;
	memcpy(u->private_data, m->private_data, CM_SIDR_REQ_PRIVATE);
	u->private_data_len = CM_SIDR_REQ_PRIVATE;
	cm_ah_attr(c, &m->from, &u->ah_attr);
	return ev;
}

void cm_sidr_send_rep(struct cm_id *id, int status, uint32_t qpn, uint32_t qkey,
		      const void *private_data, unsigned len)
{
	struct cm_msg m;

	memset(&m, 0, sizeof(m));
	m.type = CM_MSG_SIDR_REP;
	m.status = (uint8_t)status;
	m.from = id->local;
	m.qpn = qpn;
	m.qkey = qkey;
	cm_msg_private(&m, private_data, len);
	(void)cm_link_send(id, &m);
}

int cm_sidr_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p, uint64_t uid)
{
	if (id->state != CM_REQ_RCVD)
		return EINVAL;
	if (p->private_data_len > CM_SIDR_REP_PRIVATE)
		return EINVAL;		/* ib_send_cm_sidr_rep() */
	id->uid = uid;
	/* cma_set_qkey(): the port space's Q_Key unless AF_IB names one */
	cm_sidr_send_rep(id, CM_SIDR_SUCCESS, p->qp_num,
			 id->src.ss_family == AF_IB && p->qkey ? p->qkey : RDMA_UDP_QKEY,
			 p->private_data, p->private_data_len);
	cm_link_close(id);
	id->state = CM_DEAD;
	return 0;
}

int cm_sidr_reject(struct cm_id *id, const struct rdma_ucm_reject *cmd)
{
	if (id->state != CM_REQ_RCVD)
		return EINVAL;
	if (cmd->private_data_len > CM_SIDR_REP_PRIVATE)
		return EINVAL;
	cm_sidr_send_rep(id, CM_SIDR_REJECT, 0, 0, cmd->private_data,
			 cmd->private_data_len);
	cm_link_close(id);
	id->state = CM_DEAD;
	return 0;
}

void cm_sidr_on_rep(struct cm_id *id, const struct cm_msg *m)
{
	struct cm_event *ev;
	struct rdma_ucm_ud_param *u;

	if (id->state != CM_REQ_SENT || id->qp_type != IBV_QPT_UD)
		return;
	cm_link_close(id);
	id->state = CM_ROUTE_RESOLVED;
	if (m->status != CM_SIDR_SUCCESS) {
		cm_queue_event(id, RDMA_CM_EVENT_UNREACHABLE, m->status);
		return;
	}
	if (!(ev = cm_event_new(id, RDMA_CM_EVENT_ESTABLISHED, 0)))
		return;
	u = &ev->resp.param.ud;
	u->qp_num = m->qpn;
	u->qkey = m->qkey;
	memcpy(u->private_data, m->private_data, CM_SIDR_REP_PRIVATE);
	u->private_data_len = CM_SIDR_REP_PRIVATE;
	cm_ah_attr(id, &m->from, &u->ah_attr);
	id->remote = m->from;
	cm_event_post(ev);
}
