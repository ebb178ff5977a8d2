/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * packet.h - the packet format of the emulated fabric (wire.c).
 *
 * One header per packet, in host byte order (every host runs on this
 * machine), followed by the payload.  It stands for the IBA headers a real
 * packet carries: LRH (SL, SLID, DLID), GRH (SGID, DGID, flow label,
 * traffic class, hop limit), BTH (opcode and its transport, destination QP,
 * PSN, solicited event), DETH (Q_Key, source QP), RETH, AtomicETH, AETH (NAK
 * codes), ImmDt/IETH, XRCETH and DCETH.  A header of its own (no rdmafast
 * or device-model types) so that tests and fuzz targets can build packets
 * and write them to a host's wire socket as a hostile peer would.
 */
#ifndef RDMAFAST_EMU_WIRE_PACKET_H
#define RDMAFAST_EMU_WIRE_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum dev_op {
	/* requests, requester -> responder */
	DOP_SEND = 1,
	DOP_SEND_IMM,
	DOP_SEND_INV,
	DOP_WRITE,
	DOP_WRITE_IMM,
	DOP_READ,
	DOP_CS,		/* IB compare-and-swap, 8 bytes */
	DOP_FA,		/* IB fetch-and-add, 8 bytes */
	DOP_MCS,	/* masked compare-and-swap, 4 or 8 bytes */
	DOP_MFA,	/* masked fetch-and-add, 4 or 8 bytes */
	/* responses, responder -> requester */
	DOP_READ_RESP,
	DOP_ATOMIC_RESP,
	DOP_ACK,
	DOP_NAK,
};

enum {
	DPKT_FIRST	= 1 << 0,
	DPKT_LAST	= 1 << 1,
	DPKT_SE		= 1 << 2,	/* solicited event */
	DPKT_GRH	= 1 << 3,	/* sgid/dgid/flow/tclass/hop are valid */
	DPKT_CRC	= 1 << 4,	/* crc covers the packet: verify it */
	/*
	 * Multicast from a QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
	 * (the QPC's block_lb_mc): no copy for the sender's own port.
	 */
	DPKT_MC_NO_LB	= 1 << 5,
	/*
	 * RoCE v1: the frame carries the GRH itself (ethertype 0x8915), not
	 * an IP and UDP header as RoCE v2 does; the sender's GID type (its
	 * source GID index) decides.
	 */
	DPKT_ROCE_V1	= 1 << 6,
	/*
	 * A DC request: an RC packet that carries the DC extended header
	 * (dc_key, dc_conn), as mlx5's DC transport frames it.  Only a DCT
	 * takes one; a DCT takes nothing else.
	 */
	DPKT_DCETH	= 1 << 7,
};

/*
 * The transport a packet belongs to: the upper three bits of its BTH
 * opcode (IBA 9.2, Table 38).  A responder drops a packet whose transport
 * is not its QP's.  Zero is RC, as in the opcode.
 */
enum dev_tp {
	DTP_RC		= 0,	/* 000 */
	DTP_UC		= 1,	/* 001 */
	DTP_RD		= 2,	/* 010 */
	DTP_UD		= 3,	/* 011 */
	DTP_CNP		= 4,	/* 100 */
	DTP_XRC		= 5,	/* 101 */
};

/*
 * Multicast, the destination QP of every packet to a group (IBA 9.2: the
 * BTH's DestQP is 0xFFFFFF with a multicast DLID).
 */
#define DEV_MCAST_QPN		0xffffffu

/* NAK codes, in the spirit of the AETH syndrome */
enum {
	DNAK_SEQ = 1,		/* PSN sequence error: go back to psn */
	DNAK_RNR,		/* receiver not ready: retry after rnr_timer */
	DNAK_INV_REQ,		/* -> REMOTE_INVAL_REQ_ERR */
	DNAK_REM_ACCESS,	/* -> REMOTE_ACCESS_ERR */
	DNAK_REM_OP,		/* -> REMOTE_OP_ERR */
};

/*
 * Header of every packet.  Host byte order: both ends run on this machine.
 * Request packets of one message share raddr/rkey/dma_len (the RETH) and
 * carry their own offset, so any packet can be placed on its own.
 */
struct dev_pkt {
	uint32_t		size;		/* header + payload */
	uint8_t			op;		/* enum dev_op */
	uint8_t			flags;		/* DPKT_* */
	uint8_t			opmod;		/* masked atomics: 8 | log2(size) - 2 */
	uint8_t			sl;
	uint32_t		src_qpn;
	uint32_t		dst_qpn;
	uint32_t		psn;
	uint8_t			nak;		/* DNAK_* */
	uint8_t			rnr_timer;	/* DNAK_RNR: the responder's min_rnr_timer */
	uint16_t		slid;
	uint16_t		pkey_index;
	uint8_t			hop_limit;
	uint8_t			tclass;
	uint32_t		imm;		/* raw, as in the WQE (network order) */
	uint32_t		xrc_srqn;
	uint32_t		qkey;
	uint32_t		flow_label;
	uint32_t		rkey;
	uint64_t		raddr;
	uint32_t		dma_len;	/* whole message */
	uint32_t		offset;		/* of this payload within the message */
	uint32_t		len;		/* payload bytes after the header */
	uint16_t		dlid;		/* LRH DLID, on InfiniBand (multicast: the MLID) */
	uint8_t			tp;		/* enum dev_tp */
	uint8_t			pad;
	uint64_t		atomic[4];	/* swap|add, compare, swap_mask, compare_mask */
	uint8_t			sgid[16];
	uint8_t			dgid[16];
	/*
	 * DC requests: the access key the DCT must hold, and the DCI's
	 * connection (a number new at every connect, and its first PSN), by
	 * which the DCT keeps one responder context per initiator as the
	 * hardware's DC connect does.
	 */
	uint64_t		dc_key;
	uint32_t		dc_conn;
	uint32_t		dc_conn_psn;
	uint64_t		crc;		/* DPKT_CRC: hash of everything after it */
	uint8_t			payload[];
};

/*
 * Zero a packet's header.  In pieces of at most 64 bytes, which compilers
 * store inline: a memset of the whole header becomes `rep stosq` on x86-64
 * (gcc's generic tuning), several times slower for one header, and the
 * engine clears one for every packet it builds.
 */
static inline void dev_pkt_clear(struct dev_pkt *p)
{
	enum { HDR = offsetof(struct dev_pkt, payload) };
	char *h = (char *)p;
	size_t off;

	for (off = 0; off + 64 <= HDR; off += 64)
		memset(h + off, 0, 64);
	memset(h + off, 0, HDR - off);
}

/*
 * Is p addressed to a multicast group?  On InfiniBand by its DLID
 * (0xC000-0xFFFE, IBA 4.1.1; 0xFFFF is the permissive LID), on RoCE by a
 * multicast DGID: ff00::/8, or IPv4-mapped 224.0.0.0/4 for RoCE v2 over
 * IPv4 (the kernel's rdma_is_multicast_addr()).
 */
static inline int dev_pkt_is_mcast(const struct dev_pkt *p, int roce)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *g = p->dgid;
	int i, v4 = 1;

	if (!roce)
		return p->dlid >= 0xc000 && p->dlid != 0xffff;
	if (!(p->flags & DPKT_GRH))
		return 0;
	for (i = 0; i < 12; i++)
		v4 &= g[i] == v4mapped[i];
	return g[0] == 0xff || (v4 && (g[12] & 0xf0) == 0xe0);
}

#endif /* RDMAFAST_EMU_WIRE_PACKET_H */
