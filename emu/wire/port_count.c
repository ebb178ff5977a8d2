/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * port_count.c - the port traffic counters (base/counters.h) from the
 * packets on the wire: what a port sends is counted as it leaves
 * (transmit() in wire.c), what it receives as the device takes it
 * (dev_resp_packet()), once per packet whatever becomes of it after, as a
 * port's PMA counts.
 *
 * PortXmitData/PortRcvData count the octets from the LRH to the ICRC
 * (IBA 16.1.3.5): the packet's headers as IBA lays them out, its payload
 * padded to 4 bytes, and the 4-byte ICRC.  On RoCE the same, less the LRH.
 */
#include "wire.h"
#include "base/counters.h"

/* The extended transport headers of each operation (IBA 9.3, 9.4) */
static const uint8_t ext_octets[] = {
	[DOP_SEND_IMM] = 4,		/* ImmDt */
	[DOP_SEND_INV] = 4,		/* IETH */
	[DOP_WRITE] = 16,		/* RETH */
	[DOP_WRITE_IMM] = 20,		/* RETH, ImmDt */
	[DOP_READ] = 16,		/* RETH */
	[DOP_CS] = 28,			/* AtomicETH */
	[DOP_FA] = 28,
	[DOP_MCS] = 28,
	[DOP_MFA] = 28,
	[DOP_READ_RESP] = 4,		/* AETH */
	[DOP_ATOMIC_RESP] = 12,		/* AETH, AtomicAckETH */
	[DOP_ACK] = 4,
	[DOP_NAK] = 4,
};

static bool roce(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
}

static inline uint32_t octets(const struct dev_pkt *p)
{
	uint32_t n = 12 + 4 + ((p->len + 3) & ~3u);	/* BTH, ICRC, padded payload */

	if (!roce())
		n += 8;					/* LRH */
	if (p->flags & DPKT_GRH)
		n += 40;
	if (p->qkey)
		n += 8;					/* DETH: a datagram */
	if (p->op < DEV_ARRAY_SIZE(ext_octets))
		n += ext_octets[p->op];
	return n;
}

/*
 * Packets of the loopback shortcut (wire.h) are counted here per port and
 * added to the shared counters by wire_count_flush(), which
 * wire_poll() calls before anything it delivers can complete them: a
 * run of them then costs four atomic adds per port, not four per packet.
 */
static struct {
	uint64_t	pkts, octets;
} held[EMU_MAX_DEVS][EMU_MAX_PORTS][2];	/* [..][..][rx] */
static bool any_held;

static void count(unsigned d, unsigned port, bool rx, bool mc, uint32_t n, bool later)
{
	if (!later || mc || d >= EMU_MAX_DEVS || port < 1 || port > EMU_MAX_PORTS) {
		emu_port_count(d, port, rx, mc, n);
		return;
	}
	held[d][port - 1][rx].pkts++;
	held[d][port - 1][rx].octets += n;
	any_held = true;
}

void wire_count_flush(void)
{
	if (!any_held)
		return;
	for (unsigned d = 0; d < EMU_MAX_DEVS; d++)
		for (unsigned port = 0; port < EMU_MAX_PORTS; port++)
			for (unsigned rx = 0; rx < 2; rx++) {
				__typeof__(held[0][0][0]) *h = &held[d][port][rx];

				if (!h->pkts)
					continue;
				emu_port_count_n(d, port + 1, rx, false, h->pkts, h->octets);
				h->pkts = h->octets = 0;
			}
	any_held = false;
}

static void count_tx(const struct dev_pkt *p, bool later)
{
	unsigned d = 0, port = 1;

	if (roce())
		emu_port_of_gid(p->sgid, &d, &port);
	else
		emu_port_of_lid(p->slid, &d, &port);
	count(d, port, false, dev_pkt_is_mcast(p, roce()), octets(p), later);
}

void wire_count_tx(const struct dev_pkt *p)
{
	count_tx(p, false);
}

void wire_count_rx(const struct dev_pkt *p, unsigned d, unsigned port)
{
	bool mc = dev_pkt_is_mcast(p, roce());

	if (!port && !(roce() ? emu_port_of_gid(p->dgid, &d, &port) :
			       emu_port_of_lid(p->dlid, &d, &port))) {
		d = 0;
		port = 1;
	}
	count(d, port, true, mc, octets(p), false);
}

void wire_count_tx_later(const struct dev_pkt *p)
{
	count_tx(p, true);
}

void wire_count_loopback(const struct dev_pkt *p, unsigned tx_d, unsigned tx_port,
			     unsigned rx_d, unsigned rx_port)
{
	uint32_t n = octets(p);

	/* never multicast: wire_shortcut_ok() leaves those to the ring */
	if (DEV_UNLIKELY(tx_d >= EMU_MAX_DEVS || rx_d >= EMU_MAX_DEVS ||
			 tx_port - 1 >= EMU_MAX_PORTS || rx_port - 1 >= EMU_MAX_PORTS)) {
		count(tx_d, tx_port, false, false, n, true);
		count(rx_d, rx_port, true, false, n, true);
		return;
	}
	held[tx_d][tx_port - 1][0].pkts++;
	held[tx_d][tx_port - 1][0].octets += n;
	held[rx_d][rx_port - 1][1].pkts++;
	held[rx_d][rx_port - 1][1].octets += n;
	any_held = true;
}
