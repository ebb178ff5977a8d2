/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire.h - the fabric between the device's QPs (wire.c): the packet format,
 * the loopback ring and the Unix-socket wire to other hosts, and the faults
 * injected on it (fault.c).
 *
 * The wire knows packets, not QPs: it routes by destination QPN's host and
 * hands what arrives to the callback given to wire_open().
 */
#ifndef RDMAFAST_EMU_WIRE_H
#define RDMAFAST_EMU_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "wire/packet.h"
#include "wire/stats.h"

#define DEV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DEV_UNLIKELY(x)		__builtin_expect(!!(x), 0)
#define DEV_LIKELY(x)		__builtin_expect(!!(x), 1)

/*
 * Payload bytes per wire packet.  Not the IB path MTU (which only limits UD
 * here): a large MTU keeps the per-packet cost of the socket wire low while
 * still exercising segmentation, PSN ranges and partial retransmission.
 */
#define WIRE_MTU		(32u * 1024)

/* ------------------------------------------------------------------------ */
/* The wire (wire.c)                                                        */

/* What the wire calls back into, inside wire_poll(). */
struct wire_ops {
	/* every packet that arrives intact, from this host or another */
	void (*deliver)(const struct dev_pkt *p);
	/* a link drained below its room: requesters held back may go on */
	void (*room)(void);
};

/*
 * Open the wire.  now is the caller's clock (ns), read when a packet is
 * delayed or a link's progress is timed.
 */
int wire_open(const struct wire_ops *ops, const uint64_t *now);
void wire_close(void);
void wire_forget(void);		/* wire_close() leaving the listener's name */
/* An fd that polls readable when a socket has a packet (the idle engine sleeps on it). */
int wire_wait_fd(void);
/* When the wire needs a pass (ns): a delayed packet due, a connect to retry; 0 if none. */
uint64_t wire_next_due(void);
/*
 * Room for a packet of payload bytes (at most WIRE_MTU; else NULL):
 * in the loopback ring where a local packet stays, else a staging buffer.
 * Fill it, then wire_send() before the next wire_alloc().
 */
struct dev_pkt *wire_alloc(uint32_t payload);
void wire_send(struct dev_pkt *p);
/*
 * The loopback shortcut.  May p, a header filled as for wire_send(), be
 * handed to its destination by the caller at once instead of through the
 * loopback ring?  Only when that is what the ring would do next: p goes to
 * this host and not to a multicast group, nothing queued locally is ahead
 * of it (the ring and this host's backlog are empty), and nothing on the
 * wire could alter it (no fault injection configured).
 * RFEMU_LOOPBACK_SHORTCUT=0 says never.  The caller that takes it delivers
 * p itself and then calls wire_shortcut_sent(), which counts p in the
 * wire's statistics as sent and received, as the ring would have; its port
 * counters are the caller's (wire_count_loopback(), or
 * wire_count_tx_later() when the receiver counts its arrival).
 */
bool wire_shortcut_ok(const struct dev_pkt *p);
void wire_shortcut_sent(void);
/*
 * The port counters (port_count.c): a packet leaving this host (by its
 * source LID or GID), one arriving at port d/port (port 0: the port its
 * DLID or DGID names, else the first).
 */
void wire_count_tx(const struct dev_pkt *p);
void wire_count_rx(const struct dev_pkt *p, unsigned d, unsigned port);
/*
 * The same for the loopback shortcut's packets, added to the counters in
 * one go by wire_count_flush() (from wire_poll()): one that leaves
 * (its receiver counts its arrival), or one that leaves port tx_d/tx_port
 * (the port of the QP that sent it, which its source address names) and
 * arrives at port rx_d/rx_port.
 */
void wire_count_tx_later(const struct dev_pkt *p);
void wire_count_loopback(const struct dev_pkt *p, unsigned tx_d, unsigned tx_port,
			     unsigned rx_d, unsigned rx_port);
void wire_count_flush(void);
/*
 * Deliver queued packets (loopback ring, delayed, and the sockets if asked:
 * that costs a syscall); returns count.
 */
unsigned wire_poll(bool sockets);
/*
 * May a requester send to dst_qpn's host now?  False while that link's
 * backlog is long (backpressure); the wire calls ops->room when it drains.
 * Responses never ask: they always go (into the backlog if need be).
 */
bool wire_room(uint32_t dst_qpn);
/*
 * Every packet sent to a host gets the next number of that host's link;
 * wire_ticket() is the number of the last one, and wire_left() says
 * whether packet `ticket` has left (or was lost): it is no longer waiting in
 * this host's backlog.
 */
uint64_t wire_ticket(uint32_t dst_qpn);
bool wire_left(uint32_t dst_qpn, uint64_t ticket);

/* The counters (stats.h): the wire's, and the device's drops by source and Q_Key. */
extern struct rfemu_dev_stats wire_stats;

/* ------------------------------------------------------------------------ */
/* Fault injection (fault.c)                                                */

struct wire_fault {
	double			drop;		/* RFEMU_DROP: probability per packet */
	double			corrupt;	/* RFEMU_CORRUPT */
	uint32_t		delay_us;	/* RFEMU_DELAY_US: added latency */
	double			delay_frac;	/* RFEMU_DELAY_FRAC: share delayed (1) */
	double			force_rnr;	/* RFEMU_FORCE_RNR */
	double			force_rae;	/* RFEMU_FORCE_REMOTE_ACCESS_ERR */
	bool			any;
};

extern struct wire_fault wire_fault;
void wire_fault_load(void);
bool wire_fault_hit(double p);
uint64_t dev_hash(const void *p, size_t n);

#endif /* RDMAFAST_EMU_WIRE_H */
