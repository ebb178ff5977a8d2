/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * counters.c - the ports' traffic counters (counters.h).
 */
#include <stdatomic.h>
#include <string.h>

#include "base.h"
#include "counters.h"

static _Atomic uint64_t local[EMU_MAX_DEVS][EMU_MAX_PORTS][EMU_NUM_CTR];
static _Atomic(_Atomic uint64_t (*)[EMU_MAX_PORTS][EMU_NUM_CTR]) ctr = local;

static _Atomic uint64_t *slot(unsigned d, unsigned p, enum emu_ctr c)
{
	if (d >= EMU_MAX_DEVS || p < 1 || p > EMU_MAX_PORTS || c >= EMU_NUM_CTR)
		return NULL;
	return &atomic_load_explicit(&ctr, memory_order_acquire)[d][p - 1][c];
}

void emu_port_ctr_move(_Atomic uint64_t (*to)[EMU_MAX_PORTS][EMU_NUM_CTR])
{
	for (unsigned d = 0; d < EMU_MAX_DEVS; d++)
		for (unsigned p = 0; p < EMU_MAX_PORTS; p++)
			for (unsigned c = 0; c < EMU_NUM_CTR; c++)
				atomic_store(&to[d][p][c], atomic_load(&local[d][p][c]));
	atomic_store_explicit(&ctr, to, memory_order_release);
}

static void add(unsigned d, unsigned p, enum emu_ctr c, uint64_t n)
{
	_Atomic uint64_t *s = slot(d, p, c);

	if (s)
		atomic_fetch_add_explicit(s, n, memory_order_relaxed);
}

void emu_port_count_n(unsigned d, unsigned p, bool rx, bool mcast, uint64_t pkts,
		      uint64_t octets)
{
	add(d, p, rx ? EMU_CTR_RCV_OCTETS : EMU_CTR_XMIT_OCTETS, octets);
	add(d, p, rx ? EMU_CTR_RCV_PKTS : EMU_CTR_XMIT_PKTS, pkts);
	if (mcast)
		add(d, p, rx ? EMU_CTR_MCAST_RCV : EMU_CTR_MCAST_XMIT, pkts);
	else
		add(d, p, rx ? EMU_CTR_UCAST_RCV : EMU_CTR_UCAST_XMIT, pkts);
}

void emu_port_count(unsigned d, unsigned p, bool rx, bool mcast, uint32_t octets)
{
	emu_port_count_n(d, p, rx, mcast, 1, octets);
}

uint64_t emu_port_ctr(unsigned d, unsigned p, enum emu_ctr c)
{
	_Atomic uint64_t *s = slot(d, p, c);

	return s ? atomic_load_explicit(s, memory_order_relaxed) : 0;
}

void emu_port_ctr_clear(unsigned d, unsigned p, enum emu_ctr c)
{
	_Atomic uint64_t *s = slot(d, p, c);

	if (s)
		atomic_store_explicit(s, 0, memory_order_relaxed);
}

bool emu_port_of_lid(uint16_t lid, unsigned *d, unsigned *p)
{
	for (unsigned i = 0; i < emu_cfg.num_devs; i++)
		for (unsigned j = 0; j < emu_cfg.num_ports; j++)
			if (lid && emu_cfg.dev[i].port[j].lid == lid) {
				*d = i;
				*p = j + 1;
				return true;
			}
	return false;
}

bool emu_port_of_gid(const uint8_t gid[16], unsigned *d, unsigned *p)
{
	for (unsigned i = 0; i < emu_cfg.num_devs; i++)
		for (unsigned j = 0; j < emu_cfg.num_ports; j++) {
			const struct emu_port_id *id = &emu_cfg.dev[i].port[j];

			for (unsigned g = 0; g < id->num_gids; g++)
				if (!memcmp(id->gid[g].raw, gid, 16)) {
					*d = i;
					*p = j + 1;
					return true;
				}
		}
	return false;
}
