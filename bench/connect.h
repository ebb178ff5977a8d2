/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/connect.h - bring a benchmark's RC QP from RESET to RTS, connected
 * to dqpn at dlid (InfiniBand) or dgid (RoCE, when dgid is not NULL), on
 * port 1 at the port's active MTU. Shared by rfbench and emu_model.
 */
#ifndef RFBENCH_CONNECT_H
#define RFBENCH_CONNECT_H

#include <string.h>

#include <infiniband/verbs.h>

/*
 * Returns 0 or the failing ibv_* call's error. rd_atomic is both
 * max_rd_atomic and max_dest_rd_atomic: the READs each side may have in
 * flight towards the other.
 */
static inline int bench_connect_rc_rd(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid,
				      const union ibv_gid *dgid, uint8_t rd_atomic)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr a;
	int ret;

	ret = ibv_query_port(qp->context, 1, &port);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	if (dgid) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.grh.dgid = *dgid;
	}
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The same with one READ in flight each way. */
static inline int bench_connect_rc(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid,
				   const union ibv_gid *dgid)
{
	return bench_connect_rc_rd(qp, dqpn, dlid, dgid, 1);
}

#endif /* RFBENCH_CONNECT_H */
