/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * counters.h - the traffic counters of each emulated port, as a port's
 * PMA keeps them (IBA 16.1.3.5 PortCounters, 16.1.4.11
 * PortCountersExtended): the wire counts what leaves a port, the device
 * what arrives; the PMA (mad/pma.c) and sysfs ports/N/counters/ read
 * them, of this host and of others (subnet/ports.c).  Relaxed atomics: a reader takes no lock, and the counters of one
 * packet need not be seen together.
 */
#ifndef RDMAFAST_EMU_BASE_COUNTERS_H
#define RDMAFAST_EMU_BASE_COUNTERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"

enum emu_ctr {
	EMU_CTR_XMIT_OCTETS,	/* LRH to ICRC, as PortXmitData counts (x4) */
	EMU_CTR_RCV_OCTETS,
	EMU_CTR_XMIT_PKTS,
	EMU_CTR_RCV_PKTS,
	EMU_CTR_UCAST_XMIT,
	EMU_CTR_UCAST_RCV,
	EMU_CTR_MCAST_XMIT,
	EMU_CTR_MCAST_RCV,
	EMU_NUM_CTR
};

/* One packet of octets bytes sent (rx false) or received on port d/p. */
void emu_port_count(unsigned d, unsigned p, bool rx, bool mcast, uint32_t octets);
/* pkts packets of octets bytes in all, at once */
void emu_port_count_n(unsigned d, unsigned p, bool rx, bool mcast, uint64_t pkts,
		      uint64_t octets);
uint64_t emu_port_ctr(unsigned d, unsigned p, enum emu_ctr c);
/* A PMA Set of PortCounters(Extended): the selected counter back to 0. */
void emu_port_ctr_clear(unsigned d, unsigned p, enum emu_ctr c);

/*
 * Where they live: a table of this process until the host publishes its
 * ports (subnet/ports.c), then that record, which other hosts' PMAs read.
 * Counts made before the move are carried over.
 */
void emu_port_ctr_move(_Atomic uint64_t (*to)[EMU_MAX_PORTS][EMU_NUM_CTR]);

/* Which of this host's ports has lid (InfiniBand) or gid; false if none. */
bool emu_port_of_lid(uint16_t lid, unsigned *d, unsigned *p);
bool emu_port_of_gid(const uint8_t gid[16], unsigned *d, unsigned *p);

#endif /* RDMAFAST_EMU_BASE_COUNTERS_H */
