/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/bring_up.h - bring a benchmark's RC QP from RESET to RTS, connected
 * to dqpn at dlid, with a GRH toward dgid when dgid is not NULL (RoCE), on
 * port 1 at the port's active MTU. Shared by rfbench (bench/setup.c) and
 * emu_model.
 *
 * Through rdmafast's glue (rf_qp_connect_ibv(), its connection policy
 * from enum rf_qp_conn_default), for every implementation, libmlx5's too:
 * the bring-up is not what is measured (rfbench counts the instructions of
 * posting and polling, emu_model the device model), and the same QP state
 * on every side keeps the comparison to what is measured. The DCI of
 * bench_dci_open() is brought up the same way.
 */
#ifndef RFBENCH_BRING_UP_H
#define RFBENCH_BRING_UP_H

#include <string.h>

#include <rdmafast/verbs.h>

/*
 * Returns 0 or -errno. cap: what the QP was created with (ibv_qp_init_attr
 * .cap after the call). rd_atomic is both max_rd_atomic and
 * max_dest_rd_atomic: the READs each side may have in flight towards the
 * other. The QP is not taken over: rdmafast's view of it lives only for
 * the call, so the caller may go on with libibverbs, or take it over.
 */
static inline int bench_rc_bring_up(struct ibv_qp *qp, const struct ibv_qp_cap *cap,
				    uint32_t dqpn, uint16_t dlid, const union ibv_gid *dgid,
				    uint8_t rd_atomic)
{
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct rf_qp tmp;
	int ret;

	memset(&ca, 0, sizeof(ca));
	ca.grh = dgid ? RF_GRH_ALWAYS : RF_GRH_NEVER;
	ca.max_rd_atomic = rd_atomic;
	ca.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	memset(&peer, 0, sizeof(peer));
	peer.qpn = dqpn;
	peer.lid = dlid;
	if (dgid)
		peer.gid = *dgid;
	ret = rf_qp_init_ibv(&tmp, qp, cap, 0);
	if (ret)
		return ret;
	ret = rf_qp_connect_ibv(&tmp, &ca, &peer);
	rf_qp_fini_ibv(&tmp);
	return ret;
}

#endif /* RFBENCH_BRING_UP_H */
