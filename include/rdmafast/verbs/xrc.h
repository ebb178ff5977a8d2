/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/xrc.h - XRC domains shared between processes through a
 * file, XRC SRQs, and XRC receive QPs created, opened and connected.
 */
#ifndef RDMAFAST_VERBS_XRC_H
#define RDMAFAST_VERBS_XRC_H

#include <rdmafast/verbs/ibv.h>
#include <rdmafast/verbs/qp.h>
#include <rdmafast/verbs/opened_qp.h>

RF_BEGIN_DECLS

/*
 * rf_xrcd_open_ibv - open the XRC domain of the file open as fd, shared by
 * every process that opens the same file (its inode names the domain), or
 * a domain of our own with fd -1. oflags: O_CREAT creates the file's
 * domain if it has none; O_CREAT | O_EXCL insists on creating it. The
 * domain lives while any process has it open. Returns 0 and *out, or the
 * kernel's errors (ib_uverbs_open_xrcd()): -EBADF for an fd that is not
 * open, -EAGAIN when the file has no domain and O_CREAT is not given,
 * -EINVAL for O_EXCL when it has one.
 */
static inline RF_COLD int rf_xrcd_open_ibv(struct ibv_context *ctx, int fd, int oflags,
					   struct ibv_xrcd **out)
{
	struct ibv_xrcd_init_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = fd;
	a.oflags = oflags;
	errno = 0;
	*out = ibv_open_xrcd(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}

/*
 * rf_xrc_srq_create_ibv - an XRC SRQ of the domain, its receive
 * completions on cq, with max_wr receives of max_sge entries; *srqn is
 * the number XRC senders name it by (rf_sq_set_xrc_srqn()). Take it over
 * with rf_srq_init_ibv(). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_srq_create_ibv(struct ibv_context *ctx, struct ibv_pd *pd,
						struct ibv_xrcd *xrcd, struct ibv_cq *cq,
						uint32_t max_wr, uint32_t max_sge,
						struct ibv_srq **out, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = IBV_SRQT_XRC;
	a.xrcd = xrcd;
	a.cq = cq;
	a.pd = pd;
	errno = 0;
	*out = ibv_create_srq_ex(ctx, &a);
	if (!*out)
		return errno ? -errno : -ENOMEM;
	ret = rf__ibv_err(ibv_get_srq_num(*out, srqn));
	if (ret) {
		ibv_destroy_srq(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * rf_xrc_recv_qp_create_ibv - an XRC receive QP (XRC_RECV, the target of
 * one XRC_SEND QP) in the domain: no queues of its own, the receives come
 * from whichever XRC SRQ of the domain a message names. Connect it with
 * rf_xrc_recv_connect_ibv(). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_qp_create_ibv(struct ibv_context *ctx,
						    struct ibv_xrcd *xrcd, struct ibv_qp **out)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	errno = 0;
	*out = ibv_create_qp_ex(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}

/*
 * rf_xrc_recv_qp_open_ibv - register with XRC receive QP qpn, created by
 * any process in the same domain (ibv_open_qp(3)): the QP then lives
 * until its creator destroyed it and every process that opened it
 * released it (rf_qp_close_opened_ibv()). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_qp_open_ibv(struct ibv_context *ctx,
						  struct ibv_xrcd *xrcd, uint32_t qpn,
						  struct ibv_qp **out)
{
	struct ibv_qp_open_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	a.qp_num = qpn;
	a.xrcd = xrcd;
	a.qp_type = IBV_QPT_XRC_RECV;
	errno = 0;
	*out = ibv_open_qp(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}


/*
 * rf_xrc_recv_connect_ibv - move an XRC receive QP RESET -> INIT -> RTR
 * toward the XRC_SEND QP peer (its receive side is all it has; the sender
 * goes to RTS with rf_qp_connect_ibv()). l as for rf_qp_connect_ibv():
 * port, GRH, MTU, PSN (unused here), access (0: none, the sender may only
 * send; RF_ACCESS_REMOTE_* for RDMA into this domain's memory),
 * min_rnr_timer. Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_connect_ibv(struct ibv_qp *rqp,
						  const struct rf_qp_conn_attr *l,
						  const struct rf_qp_peer *peer)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	struct rf_qp_conn_attr c;
	int ret;

	ret = rf__qp_conn_begin(rqp->context, l, &c, &pa);
	if (ret)
		return ret;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = c.port;
	at.qp_access_flags = (unsigned int)c.access;	/* 0: no remote access */
	ret = ibv_modify_qp(rqp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = c.mtu;
	at.dest_qp_num = peer->qpn;
	at.rq_psn = peer->psn & 0xffffff;
	at.max_dest_rd_atomic = c.max_rd_atomic;
	at.min_rnr_timer = c.min_rnr_timer;
	rf__qp_conn_path(&at.ah_attr, &c, &pa, peer);
	return rf__ibv_err(ibv_modify_qp(rqp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_XRC_H */
