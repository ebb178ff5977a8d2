/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * msg.h - the messages two hosts' connection managers exchange (link.c),
 * one per SOCK_SEQPACKET record of a connection's socket pair.  Apart from
 * internal.h, which depends on the kernel's <rdma/rdma_user_cm.h>, so that
 * a test can play a peer host beside librdmacm's <rdma/rdma_cma.h> (the two
 * headers declare the same enumerators).
 */
#ifndef RDMAFAST_EMU_CM_MSG_H
#define RDMAFAST_EMU_CM_MSG_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

/* RDMA_MAX_PRIVATE_DATA of <rdma/rdma_user_cm.h> (internal.h checks it) */
#define CM_MSG_PRIVATE_MAX	256

/* What the route of a connection or a resolution leads to. */
struct cm_end {
	uint64_t		node_guid;	/* big-endian, as the kernel reports it */
	union ibv_gid		gid;
	uint16_t		lid;		/* 0 on Ethernet */
	uint8_t			port;		/* 1-based */
	uint8_t			dev;
	uint8_t			gid_index;
};

/* The MADs of the IB CM (IBTA 12.6) that the emulated CM models. */
enum cm_msg_type { CM_MSG_REQ = 1, CM_MSG_REP, CM_MSG_RTU, CM_MSG_REJ,
		   CM_MSG_DREQ, CM_MSG_DREP, CM_MSG_SIDR_REQ, CM_MSG_SIDR_REP };

/* Private data a consumer may put into each message (IBTA 12.6: the MAD's
 * private data less the 36-byte IP header rdma_cm puts into a REQ). */
enum {
	CM_REQ_PRIVATE	= 92 - 36,
	CM_REP_PRIVATE	= 196,
	CM_REJ_PRIVATE	= 148,
	CM_REJ_INVALID_SERVICE_ID = 8,		/* IB_CM_REJ_INVALID_SERVICE_ID */
	CM_REJ_CONSUMER_DEFINED = 28,		/* IB_CM_REJ_CONSUMER_DEFINED */
	CM_REJ_TIMEOUT = 1,			/* IB_CM_REJ_TIMEOUT */
	CM_SIDR_REQ_PRIVATE = 216 - 36,
	CM_SIDR_REP_PRIVATE = 136,
	CM_SIDR_SUCCESS = 0,			/* enum ib_cm_sidr_status */
	CM_SIDR_UNSUPPORTED = 1,
	CM_SIDR_REJECT = 2,
};

struct cm_msg {
	uint8_t			type;
	uint8_t			reason;		/* REJ */
	uint8_t			private_len;
	uint8_t			responder_resources, initiator_depth;
	uint8_t			retry_count, rnr_retry_count, srq, flow_control;
	uint8_t			path_mtu;
	uint32_t		qpn, psn;
	uint32_t		qkey;		/* SIDR REP */
	uint8_t			status;		/* SIDR REP */
	uint8_t			qp_type;	/* REQ: the active QP's (IBTA 12.7.8,
						 * transport service type) */
	struct cm_end		from;		/* the sender's port */
	struct sockaddr_storage	src, dst;	/* REQ: the addresses, active side's view */
	uint8_t			private_data[CM_MSG_PRIVATE_MAX];
};

/* The consumer's private data into m: len is at most the message type's
 * CM_*_PRIVATE, checked by the command (data may be NULL when len is 0). */
static inline void cm_msg_private(struct cm_msg *m, const void *data, unsigned len)
{
	m->private_len = (uint8_t)len;
	if (len)
		memcpy(m->private_data, data, len);
}

#endif /* RDMAFAST_EMU_CM_MSG_H */
