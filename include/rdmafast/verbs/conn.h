/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/conn.h - the connection policy, written here once: what
 * one side tells the other, what a peer may do, and what a zeroed
 * rf_qp_conn_attr means for every QP kind the glue connects (RC, UC,
 * XRC, DC: verbs/qp.h, xrc.h, dc.h). Included through rdmafast/verbs.h.
 */
#ifndef RDMAFAST_VERBS_CONN_H
#define RDMAFAST_VERBS_CONN_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/detail/verbs_ibv.h>	/* libibverbs */

RF_BEGIN_DECLS

/* What one side tells the other to connect (exchanged out of band). */
struct rf_qp_peer {
	uint32_t      qpn;
	uint32_t      psn;	/* first packet sequence number, 24 bits */
	uint16_t      lid;
	union ibv_gid gid;	/* used when the connection is global */
};

/* Whether a connection carries a GRH (rf_qp_conn_attr.grh). */
enum rf_qp_grh {
	RF_GRH_AUTO   = 0,	/* exactly when the port is RoCE (Ethernet), which needs it */
	RF_GRH_ALWAYS = 1,	/* also on InfiniBand (routing between subnets) */
	RF_GRH_NEVER  = 2,
};

/*
 * What a peer may do through a QP (rf_qp_conn_attr.access) or with a key
 * you send it (rf_ep_attr.access): these, or the IBV_ACCESS_REMOTE_* flags
 * they stand for, or-ed. Nothing is granted that is not named, as with
 * ibv_reg_mr() and ibv_modify_qp(): with RF_ACCESS_REMOTE_NONE a peer can
 * only send you messages (into the receives you post); an RDMA WRITE,
 * READ or atomic of its completes in error at the peer (a remote invalid
 * request when the QP refuses it, a remote access error when the key
 * does) and takes both QPs to the error state.
 */
#define RF_ACCESS_REMOTE_NONE   0
#define RF_ACCESS_REMOTE_WRITE  IBV_ACCESS_REMOTE_WRITE
#define RF_ACCESS_REMOTE_READ   IBV_ACCESS_REMOTE_READ
#define RF_ACCESS_REMOTE_ATOMIC IBV_ACCESS_REMOTE_ATOMIC
#define RF_ACCESS_REMOTE_ALL \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * The local side of a connection. A zeroed struct is a working RC
 * connection on port 1, on InfiniBand (no GRH) as on RoCE (a GRH from
 * GID 0), over which the peer may send messages and nothing more (access);
 * each field's 0 is the default named beside it.
 */
struct rf_qp_conn_attr {
	uint8_t   port;		/* 0: RF_QP_DEFAULT_PORT */
	/*
	 * The source GID of the GRH, when there is one (0: GID 0). A
	 * negative index means no GRH, as RF_GRH_NEVER (kept for callers
	 * written before grh existed).
	 */
	int       gid_index;
	uint32_t  grh;		/* enum rf_qp_grh; 0: RF_GRH_AUTO */
	enum ibv_mtu mtu;	/* 0: the port's active MTU */
	uint32_t  psn;		/* our first PSN */
	uint8_t   sl;
	/* each 0 below: enum rf_qp_conn_default */
	uint8_t   max_rd_atomic;	/* reads/atomics in flight, RC */
	uint8_t   min_rnr_timer;
	uint8_t   timeout;		/* local ACK timeout */
	uint8_t   retry_cnt;
	uint8_t   rnr_retry;		/* 0: the default unless rnr_retry_set */
	int       rnr_retry_set;	/* nonzero: rnr_retry as given, even 0 */
	/*
	 * RF_ACCESS_REMOTE_* (IBV_ACCESS_REMOTE_*) the peer may use through
	 * this QP: 0, RF_ACCESS_REMOTE_NONE, allows none. The QP's remote
	 * access and the key's must both allow an operation. On UC, read
	 * and atomic are dropped (UC has neither).
	 */
	int       access;
	uint32_t  qkey;			/* UD */
};

/*
 * The connection policy: what a zeroed field of struct rf_qp_conn_attr
 * stands for, for every QP kind the glue connects (RC, UC, XRC, DC).
 */
enum rf_qp_conn_default {
	RF_QP_DEFAULT_PORT          = 1,
	RF_QP_DEFAULT_MAX_RD_ATOMIC = 16,	/* a ConnectX's max_qp_rd_atom */
	RF_QP_DEFAULT_MIN_RNR_TIMER = 12,	/* 0.64 ms (IBA table 45) */
	RF_QP_DEFAULT_TIMEOUT       = 14,	/* 4.096 us << 14: about 67 ms */
	RF_QP_DEFAULT_RETRY_CNT     = 7,
	RF_QP_DEFAULT_RNR_RETRY     = 7,	/* 7: retry forever */
	RF_QP_DEFAULT_HOP_LIMIT     = 64
};

/*
 * rf_qp_conn_grh - whether the connection described by l sends a GRH on
 * a port like pa (ibv_query_port()): the GID choice of rf_qp_connect_ibv()
 * (rf_qp_conn_attr.grh, gid_index). When it does, each side must send the
 * other its GID at l->gid_index (rf_qp_peer.gid); when not, the LID is
 * the address.
 */
static inline RF_COLD int rf_qp_conn_grh(const struct rf_qp_conn_attr *l,
					 const struct ibv_port_attr *pa)
{
	if (l->gid_index < 0 || l->grh == RF_GRH_NEVER)
		return 0;
	return l->grh == RF_GRH_ALWAYS || pa->link_layer == IBV_LINK_LAYER_ETHERNET;
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_CONN_H */
