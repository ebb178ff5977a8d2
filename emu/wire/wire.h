/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire.h - the fabric between the device's QPs (wire.c): the packet format,
 * the loopback ring and the Unix-socket wire to other hosts, and the faults
 * injected on it (fault.c).
 *
 * The wire knows packets, not QPs: it routes by destination QPN's host and
 * hands what arrives to the callback given to dev_wire_open().
 */
#ifndef RDMAFAST_EMU_WIRE_H
#define RDMAFAST_EMU_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define DEV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DEV_UNLIKELY(x)		__builtin_expect(!!(x), 0)
#define DEV_LIKELY(x)		__builtin_expect(!!(x), 1)

/*
 * Payload bytes per wire packet.  Not the IB path MTU (which only limits UD
 * here): a large MTU keeps the per-packet cost of the socket wire low while
 * still exercising segmentation, PSN ranges and partial retransmission.
 */
#define DEV_WIRE_MTU		(32u * 1024)

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */

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
};

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
	uint32_t		pad;
	uint64_t		atomic[4];	/* swap|add, compare, swap_mask, compare_mask */
	uint8_t			sgid[16];
	uint8_t			dgid[16];
	uint64_t		crc;		/* DPKT_CRC: hash of everything after it */
	uint8_t			payload[];
};

/* ------------------------------------------------------------------------ */
/* The wire (wire.c)                                                        */

/*
 * Open the wire.  Every packet that arrives intact, from this host or
 * another, is handed to deliver (the device's responder) inside
 * dev_wire_poll(); now is the caller's clock (ns), read when a packet is
 * delayed.
 */
int dev_wire_open(void (*deliver)(const struct dev_pkt *p), const uint64_t *now);
void dev_wire_close(void);
/* An fd that polls readable when a socket has a packet (the idle engine sleeps on it). */
int dev_wire_wait_fd(void);
/* When the first delayed packet is due (ns), 0 if none. */
uint64_t dev_wire_next_due(void);
/*
 * Reserve room for a packet to dst_qpn's host; NULL when the path is
 * congested (local ring full).  Fill it, then dev_wire_send().
 */
struct dev_pkt *dev_wire_alloc(uint32_t payload);
void dev_wire_send(struct dev_pkt *p);
/*
 * Deliver queued packets (loopback ring, delayed, and the sockets if asked:
 * that costs a syscall); returns count.
 */
unsigned dev_wire_poll(bool sockets);
bool dev_wire_local_room(uint32_t payload);

/* Packet counts, for a debugger. */
struct dev_wire_stats {
	uint64_t		pkts_tx, pkts_rx, pkts_dropped;
};
extern struct dev_wire_stats dev_wire_stats;

/* ------------------------------------------------------------------------ */
/* Fault injection (fault.c)                                                */

struct dev_fault {
	double			drop;		/* RFEMU_DROP: probability per packet */
	double			corrupt;	/* RFEMU_CORRUPT */
	uint32_t		delay_us;	/* RFEMU_DELAY_US: added latency */
	double			delay_frac;	/* RFEMU_DELAY_FRAC: share delayed (1) */
	double			force_rnr;	/* RFEMU_FORCE_RNR */
	double			force_rae;	/* RFEMU_FORCE_REMOTE_ACCESS_ERR */
	bool			any;
};

extern struct dev_fault dev_fault;
void dev_fault_load(void);
bool dev_fault_hit(double p);
uint64_t dev_hash(const void *p, size_t n);

#endif /* RDMAFAST_EMU_WIRE_H */
