/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.h - the packet counters of the wire and the device model, for tests
 * and debugging (device/stats.c reads them).
 *
 * librfemu.so exports rfemu_dev_stats(); a program running under the
 * emulator finds it with dlsym(RTLD_DEFAULT, "rfemu_dev_stats") (it is not
 * linked against the library, which is preloaded).  The counters cover the
 * whole process (one host) since its first device was opened.
 */
#ifndef RDMAFAST_EMU_WIRE_STATS_H
#define RDMAFAST_EMU_WIRE_STATS_H

#include <stddef.h>
#include <stdint.h>

struct rfemu_dev_stats {
	uint64_t	pkts_tx;	/* packets handed to the fabric */
	uint64_t	pkts_rx;	/* packets that passed the check value */
	uint64_t	drop_fault;	/* lost to RFEMU_DROP or RFEMU_CORRUPT */
	uint64_t	drop_link;	/* lost otherwise: no such host, peer gone, stalled link */
	uint64_t	deferred;	/* found the link full and waited (backpressure) */
	uint64_t	drop_source;	/* not from the connected peer's QPN/LID/GID */
	uint64_t	drop_qkey;	/* UD: Q_Key mismatch */
	uint64_t	backlog_max;	/* most bytes ever waiting for one link */
	uint64_t	rd_outstanding_max;	/* most READ/atomics one QP had unanswered */
	uint64_t	drop_dc_key;	/* DC: a request with another DCT's access key */
	uint64_t	wqe_fetches;	/* send WQEs read from a queue (retransmissions read again) */
	uint64_t	shortcuts;	/* of pkts_tx: delivered on this host past the ring (wire.h) */
	uint64_t	trap_faults;	/* doorbell stores that faulted on a protected page */
	uint64_t	trap_mprotects;	/* mprotect() calls that protected or freed those pages */
	uint64_t	poll_assists;	/* device passes run from applications' empty ibv_poll_cq() */
	uint64_t	trap_stores;	/* of trap_faults: stores the handler wrote and stepped over */
	uint64_t	doorbell_assists;	/* device passes run by those handlers */
	uint64_t	direct;		/* of pkts_tx and pkts_rx: SENDs, WRITEs and READs carried out by their requester (device/grant.c) */
	uint64_t	drop_address;	/* the DLID (InfiniBand) or DGID names no port of the destination QP */
	uint64_t	drop_transport;	/* the BTH opcode's transport is not the destination QP's */
	uint64_t	engine_passes;	/* device passes run by the engine thread */
	uint64_t	peer_checks;	/* direct delivery: responders' processes asked whether they live */
	uint64_t	socket_polls;	/* looks at the wire's sockets (a system call each) */
	uint64_t	trap_sigreturns;	/* of trap_faults: handlers that left through rt_sigreturn (device/resume.c) */
	uint64_t	direct_copies;	/* process_vm_readv()/_writev() calls of direct delivery: a pass's READs to one QP share one */
	uint64_t	eth_frames;	/* frames raw packet QPs sent (device/eth.c) */
	uint64_t	eth_unsteered;	/* of those: no flow rule took them */
	uint64_t	eth_no_recv;	/* a rule took them, its QP had no receive posted */
};

/* Copy min(size, sizeof) bytes of the counters to out; returns 0. */
typedef int rfemu_dev_stats_fn(struct rfemu_dev_stats *out, size_t size);
rfemu_dev_stats_fn rfemu_dev_stats;

#endif /* RDMAFAST_EMU_WIRE_STATS_H */
