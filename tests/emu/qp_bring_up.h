/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qp_bring_up.h - RESET -> INIT -> RTR -> RTS of a QP with plain
 * libibverbs, for what tests the emulated HCA rather than rdmafast: the
 * emulator's tests and the programs they start (tests/emu/), and the fuzz
 * harness that links the emulator in (fuzz/emu_harness.h). Those must run
 * a libmlx5 program with no rdmafast in it, so this header includes nothing
 * of rdmafast; a program that uses rdmafast connects with its glue
 * (rf_qp_connect_ibv() and the others of <rdmafast/verbs.h>) instead.
 *
 * Nothing here is a policy: every attribute is the caller's (what the test
 * wants the device to see), and a field left 0 is programmed as 0, except
 * port and mtu. Where a caller writes 16, 12, 14 or 7 it states what its
 * test needs, not rdmafast's defaults (enum rf_qp_conn_default in
 * <rdmafast/verbs/conn.h>, which nothing here may include). Which
 * attributes each transition carries follows the QP type (IBA table 94,
 * and ib_modify_qp_is_ok() in Linux):
 *
 *   INIT  port, P_Key 0, and the Q_Key (UD) or the access flags (others)
 *   RTR   UD: nothing; others: path, MTU, destination QPN, RQ PSN, and for
 *         a responder (RC, XRC target) max_dest_rd_atomic, min_rnr_timer
 *   RTS   SQ PSN; a requester (RC, XRC initiator) also timeout, retry_cnt,
 *         rnr_retry, max_rd_atomic; an XRC target the timeout
 */
#ifndef RDMAFAST_TESTS_QP_BRING_UP_H
#define RDMAFAST_TESTS_QP_BRING_UP_H

#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

struct qpu_conn {
	uint8_t      port;		/* 0: port 1 */
	enum ibv_mtu mtu;		/* 0: IBV_MTU_1024 */
	uint32_t     dqpn;
	uint16_t     dlid;
	const union ibv_gid *dgid;	/* non-NULL: a GRH from sgid_index, hop limit 1 */
	uint8_t      sgid_index;
	uint32_t     flow_label;	/* of the GRH */
	uint8_t      sl;
	int          access;		/* qp_access_flags (not UD) */
	uint32_t     qkey;		/* UD */
	uint32_t     rq_psn;
	uint32_t     sq_psn;
	uint8_t      max_dest_rd_atomic;	/* responder */
	uint8_t      min_rnr_timer;		/* responder */
	uint8_t      max_rd_atomic;		/* requester */
	uint8_t      timeout;			/* requester, XRC target */
	uint8_t      retry_cnt;			/* requester */
	uint8_t      rnr_retry;			/* requester */
	int          reset_first;	/* to RESET first, from whatever state the QP is in */
	int          rtr_only;		/* stop at RTR */
};

/* Returns 0, or the errno value of the transition refused. */
static inline int qpu_bring_up(struct ibv_qp *qp, const struct qpu_conn *c)
{
	enum ibv_qp_type t = qp->qp_type;
	int ud = t == IBV_QPT_UD;
	int responder = t == IBV_QPT_RC || t == IBV_QPT_XRC_RECV;
	int requester = t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND;
	struct ibv_qp_attr a;
	int mask, ret;

	memset(&a, 0, sizeof(a));
	if (c->reset_first) {
		a.qp_state = IBV_QPS_RESET;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		if (ret)
			return ret;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = c->port ? c->port : 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (ud) {
		a.qkey = c->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = c->access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (!ud) {
		a.path_mtu = c->mtu ? c->mtu : IBV_MTU_1024;
		a.dest_qp_num = c->dqpn;
		a.rq_psn = c->rq_psn;
		a.ah_attr.dlid = c->dlid;
		a.ah_attr.sl = c->sl;
		a.ah_attr.port_num = c->port ? c->port : 1;
		if (c->dgid) {
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = *c->dgid;
			a.ah_attr.grh.sgid_index = c->sgid_index;
			a.ah_attr.grh.flow_label = c->flow_label;
			a.ah_attr.grh.hop_limit = 1;
		}
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (responder) {
			a.max_dest_rd_atomic = c->max_dest_rd_atomic;
			a.min_rnr_timer = c->min_rnr_timer;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret || c->rtr_only)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (requester) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = c->max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	} else if (t == IBV_QPT_XRC_RECV) {
		a.timeout = c->timeout;
		mask |= IBV_QP_TIMEOUT;
	}
	return ibv_modify_qp(qp, &a, mask);
}

#endif /* RDMAFAST_TESTS_QP_BRING_UP_H */
