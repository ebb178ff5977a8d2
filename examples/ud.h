/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * examples/ud.h - one UD endpoint for the datagram examples: device, PD,
 * a registered buffer, a CQ and a UD QP taken over by rdmafast, the QP
 * moved to RTS with a Q_Key (ex_ud_setup), then the TCP exchange of
 * <rdmafast/connect.h> (QPN, LID, GID: ex_ud_info) and an address handle
 * toward the peer, whose 48-byte address vector is what
 * rf_sq_post_ud_send() takes (ex_ud_open does all of it).
 *
 * Include cli.h first.
 */
#ifndef RDMAFAST_EXAMPLES_UD_H
#define RDMAFAST_EXAMPLES_UD_H

#include "cli.h"

struct ex_ud {
	struct ibv_context *ctx;
	struct ibv_pd      *pd;
	struct ibv_cq      *ibcq;
	struct rf_cq        cq;
	struct rf_qp        qp;
	uint8_t            *buf;
	size_t              buf_size;
	struct ibv_mr      *mr;
	struct ibv_ah      *ah;		/* toward the peer's port */
	struct rf_wqe_av    av;		/* ah's address vector */
	struct ibv_port_attr pa;
	uint8_t             port;
	int                 gid_index;
	int                 global;	/* a GRH is sent (RoCE) */
	struct rf_ep_info   peer;
	int                 sock;
};

static inline void ex_ud_close(struct ex_ud *u)
{
	if (u->sock >= 0)
		close(u->sock);
	if (u->ah)
		ibv_destroy_ah(u->ah);
	if (u->qp.ibqp) {
		rf_cq_detach(&u->cq, u->qp.qpn);
		rf_qp_destroy_ibv(&u->qp);
	}
	if (u->ibcq)
		rf_cq_destroy_ibv(&u->cq, u->ibcq);
	if (u->mr)
		ibv_dereg_mr(u->mr);
	free(u->buf);
	if (u->pd)
		ibv_dealloc_pd(u->pd);
	if (u->ctx)
		ibv_close_device(u->ctx);
	memset(u, 0, sizeof(*u));
	u->sock = -1;
}

/* An address vector toward (lid, gid) from our port. */
static inline struct ibv_ah *ex_ud_ah(struct ex_ud *u, uint16_t lid, const uint8_t *gid)
{
	struct ibv_ah_attr aa;

	memset(&aa, 0, sizeof(aa));
	aa.dlid = lid;
	aa.port_num = u->port;
	if (u->global) {
		aa.is_global = 1;
		memcpy(aa.grh.dgid.raw, gid, 16);
		aa.grh.sgid_index = (uint8_t)u->gid_index;
		aa.grh.hop_limit = 64;
	}
	return ibv_create_ah(u->pd, &aa);
}

/*
 * ex_ud_setup - the endpoint as the command line says, with a buffer of
 * buf_size bytes, max_wr send and receive WQEs, Q_Key qkey, its QP at RTS.
 * Returns 0, or -1 after printing what failed (everything released).
 */
static inline int ex_ud_setup(struct ex_ud *u, const struct ex_opts *o, size_t buf_size,
			      uint32_t max_wr, uint32_t qkey)
{
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	const char *what = "opening the RDMA device";
	int ret;

	memset(u, 0, sizeof(*u));
	u->sock = -1;
	u->port = (uint8_t)(o->ib_port ? o->ib_port : 1);
	u->gid_index = o->gid_index;
	u->ctx = rf_device_open_ibv(o->dev, &ret);
	if (!u->ctx)
		goto fail;
	what = "setting up the device (PD, buffer, CQ, QP)";
	ret = rf_device_check_ibv(u->ctx);
	if (ret)
		goto fail;
	ret = ibv_query_port(u->ctx, u->port, &u->pa);	/* 0 or an errno */
	if (ret) {
		ret = -ret;
		goto fail;
	}
	u->global = u->pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	ret = -ENOMEM;
	u->pd = ibv_alloc_pd(u->ctx);
	u->buf_size = (buf_size + 4095) & ~(size_t)4095;
	u->buf = (uint8_t *)aligned_alloc(4096, u->buf_size);
	if (!u->pd || !u->buf)
		goto fail;
	memset(u->buf, 0, u->buf_size);
	u->mr = ibv_reg_mr(u->pd, u->buf, u->buf_size, IBV_ACCESS_LOCAL_WRITE);
	if (!u->mr)
		goto fail;
	ret = rf_cq_create_ibv(&u->cq, &u->ibcq, u->ctx, (int)(2 * max_wr + 16), NULL, 0);
	if (ret)
		goto fail;
	memset(&qa, 0, sizeof(qa));
	qa.pd = u->pd;
	qa.send_cq = u->ibcq;
	qa.recv_cq = u->ibcq;
	qa.qp_type = IBV_QPT_UD;
	qa.max_send_wr = max_wr;
	qa.max_recv_wr = max_wr;
	ret = rf_qp_create_ibv(&u->qp, &qa);
	if (!ret)
		ret = rf_cq_attach(&u->cq, u->qp.qpn, &u->qp.sq, &u->qp.rq, NULL);
	if (ret)
		goto fail;
	memset(&ca, 0, sizeof(ca));
	ca.port = u->port;
	ca.qkey = qkey;
	ret = rf_qp_connect_ibv(&u->qp, &ca, NULL);
	if (ret)
		goto fail;
	return 0;

fail:
	ex_perror(what, ret);
	ex_ud_close(u);
	return -1;
}

/* What this endpoint tells a peer: its QPN, LID and (RoCE) GID. 0 or -errno. */
static inline int ex_ud_info(struct ex_ud *u, struct rf_ep_info *me)
{
	union ibv_gid g;

	memset(me, 0, sizeof(*me));
	me->qpn = u->qp.qpn;
	me->lid = u->pa.lid;
	if (!u->global)
		return 0;
	if (ibv_query_gid(u->ctx, u->port, u->gid_index, &g))
		return errno ? -errno : -ENOMEM;
	memcpy(me->gid, g.raw, sizeof(me->gid));
	return 0;
}

/*
 * ex_ud_open - ex_ud_setup(), then serve or connect, exchange QP details
 * and make the address handle toward the peer. Returns 0, or -1 after
 * printing what failed (everything released).
 */
static inline int ex_ud_open(struct ex_ud *u, const struct ex_opts *o, size_t buf_size,
			     uint32_t max_wr, uint32_t qkey)
{
	struct rf_ep_info me;
	const char *what = "ibv_query_gid";
	char addr[64];
	int ret;

	if (o->host && ex_resolve(o->host, addr, sizeof(addr))) {
		fprintf(stderr, "%s: no such host\n", o->host);
		return -1;
	}
	if (ex_ud_setup(u, o, buf_size, max_wr, qkey))
		return -1;
	ret = ex_ud_info(u, &me);
	if (ret)
		goto fail;
	what = o->host ? "connecting to the server" : "waiting for a client";
	u->sock = o->host ? rf_tcp_connect(addr, (uint16_t)o->port, 0)
			  : rf_tcp_serve((uint16_t)o->port, 0);
	if (u->sock < 0) {
		ret = u->sock;
		goto fail;
	}
	what = "exchanging QP details";
	ret = rf_ep_exchange(u->sock, &me, &u->peer, 0);
	if (ret)
		goto fail;
	what = "creating the address handle";
	u->ah = ex_ud_ah(u, (uint16_t)u->peer.lid, u->peer.gid);
	if (!u->ah) {
		ret = errno ? -errno : -ENOMEM;
		goto fail;
	}
	ret = rf_ah_av_ibv(u->ah, &u->av);
	if (ret)
		goto fail;
	return 0;

fail:
	ex_perror(what, ret);
	ex_ud_close(u);
	return -1;
}

#endif /* RDMAFAST_EXAMPLES_UD_H */
