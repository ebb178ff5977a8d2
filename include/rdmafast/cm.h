/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cm.h - rdmafast over the QPs the RDMA connection manager
 * creates. Storage engines, NVMe-oF and iSER targets and most middleware
 * connect with librdmacm (rdma_resolve_addr, rdma_connect/rdma_accept,
 * rdma_create_qp) rather than with a TCP exchange; this takes over the QP
 * and CQs rdma_create_qp() made, so that the data path is rdmafast's:
 *
 *	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, ... };
 *	rdma_create_qp(id, pd, &qa);          librdmacm: QP in INIT
 *	rf_cq_init_cm(&rcq, NULL, id);        rdmafast owns its CQ
 *	rf_qp_init_cm(&rqp, id, &qa, &rcq, NULL);  and the QP, attached to it
 *	rdma_connect(id, ...) / rdma_accept(id, ...)
 *	...ESTABLISHED: post with rf_sq_post_*() on rqp.sq, poll rcq...
 *	rdma_disconnect(id);                   librdmacm moves the QP to ERR
 *	rf_qp_fini_cm(&rqp, &rcq, NULL);       detached, side tables freed
 *	rdma_destroy_qp(id);
 *	rf_cq_destroy_ibv(&rcq, cq);
 *
 * librdmacm moves the QP through INIT, RTR and RTS itself (with
 * rdma_init_qp_attr()) and to ERR on disconnect or reject; those are
 * control-path ibv_modify_qp() calls that do not touch the queues, so they
 * may happen while rdmafast owns them. What must not happen is a verbs
 * post or poll on the same QP or CQ (rdmafast(7), DO NOT MIX): once taken
 * over, a CQ that rdma_create_qp() created for you (qa.send_cq NULL) is
 * rdmafast's like any other, and rf_cq_get_event_ibv() reads its channel
 * (id->send_cq_channel). Nothing here calls librdmacm: the header needs
 * <rdma/rdma_cma.h> for struct rdma_cm_id only, and adds no library to
 * link. Manual: rf_verbs(3).
 */
#ifndef RDMAFAST_CM_H
#define RDMAFAST_CM_H

#include <errno.h>

#include <rdma/rdma_cma.h>

#include <rdmafast/verbs.h>

RF_BEGIN_DECLS

/*
 * rf_qp_init_cm - take over id->qp, created by rdma_create_qp(id, pd, attr)
 * and not posted to, and attach it to the rdmafast CQs that own its CQs
 * (rf_cq_init_cm(), or earlier rf_cq_init_ibv() of CQs the QPs share):
 * requester completions to send_cq, receives to recv_cq (NULL: send_cq).
 * attr is the one rdma_create_qp() was given, after the call: its cap is
 * what the QP really got (rdma_create_qp() writes it back), its sq_sig_all
 * what it was created with. Returns 0, -EINVAL if the id has no QP,
 * -ENOSPC if a CQ has RF_CQ_MAX_QPS attached, or what rf_qp_init_ibv()
 * returns (-EPROTONOSUPPORT on a device that is not mlx5). Undo with
 * rf_qp_fini_cm() before rdma_destroy_qp().
 */
static inline RF_COLD int rf_qp_init_cm(struct rf_qp *qp, const struct rdma_cm_id *id,
					const struct ibv_qp_init_attr *attr,
					struct rf_cq *send_cq, struct rf_cq *recv_cq)
{
	int ret;

	if (!id || !id->qp || !attr || !send_cq)
		return -EINVAL;
	ret = rf_qp_init_ibv(qp, id->qp, &attr->cap, attr->sq_sig_all);
	if (ret)
		return ret;
	if (!recv_cq || recv_cq == send_cq) {
		ret = rf_cq_attach(send_cq, qp->qpn, &qp->sq, qp->has_rq ? &qp->rq : NULL, NULL);
	} else {
		ret = rf_cq_attach(send_cq, qp->qpn, &qp->sq, NULL, NULL);
		if (!ret)
			ret = rf_cq_attach(recv_cq, qp->qpn, NULL,
					   qp->has_rq ? &qp->rq : NULL, NULL);
	}
	if (ret)
		rf_qp_fini_ibv(qp);
	return ret;
}

/*
 * rf_qp_fini_cm - what rf_qp_init_cm() did, undone: qp detached from the
 * CQs it was attached to (the same send_cq and recv_cq) and its side
 * tables freed. The QP itself is librdmacm's: rdma_destroy_qp() next.
 */
static inline RF_COLD void rf_qp_fini_cm(struct rf_qp *qp, struct rf_cq *send_cq,
					 struct rf_cq *recv_cq)
{
	if (send_cq)
		rf_cq_detach(send_cq, qp->qpn);
	if (recv_cq && recv_cq != send_cq)
		rf_cq_detach(recv_cq, qp->qpn);
	rf_qp_fini_ibv(qp);
}

/*
 * rf_cq_init_cm - take over the CQs of id's QP: send into send, receive
 * into recv. When the QP has one CQ for both (the usual case), pass recv
 * NULL or equal to send: it is taken over once. Returns 0, -EINVAL if the
 * id has no QP, or what rf_cq_init_ibv() returns.
 */
static inline RF_COLD int rf_cq_init_cm(struct rf_cq *send, struct rf_cq *recv,
					const struct rdma_cm_id *id)
{
	int ret;

	if (!id || !id->qp || !send)
		return -EINVAL;
	ret = rf_cq_init_ibv(send, id->qp->send_cq);
	if (ret || id->qp->recv_cq == id->qp->send_cq || !recv || recv == send)
		return ret;
	return rf_cq_init_ibv(recv, id->qp->recv_cq);
}

RF_END_DECLS

#endif /* RDMAFAST_CM_H */
