/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pma.c - the performance management agent of each port (IBA 16.1):
 * ClassPortInfo, PortCounters and PortCountersExtended, from the counters
 * the wire and the device of that host keep (base/counters.h) in its
 * published record (subnet/ports.c), which its sysfs ports/N/counters/
 * shows too.  A Set clears the counters its
 * CounterSelect names and answers as a Get (perfquery -R).  Error
 * counters read 0: nothing on the emulated link corrupts a symbol.
 * PortSelect is echoed, not obeyed: mlx5 answers for the port the MAD
 * came in on (the kernel's mlx5 mad.c, process_pma_cmd()).
 */
#include "kernel/kernel.h"
#include "mad.h"
#include "subnet/subnet.h"

enum {
	ATTR_CLASS_PORT_INFO	= 0x0001,
	ATTR_PORT_COUNTERS	= 0x0012,
	ATTR_PORT_COUNTERS_EXT	= 0x001d,
};

/* ClassPortInfo:CapabilityMask (IBA 16.1.2): 64-bit counters, PortXmitWait */
#define PMA_CAP_EXT_WIDTH	(1u << 9)
#define PMA_CAP_XMIT_WAIT	(1u << 12)

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint64_t get(struct emu_host_rec *h, unsigned d, unsigned p, unsigned c)
{
	return atomic_load_explicit(&h->ctr[d][p - 1][c], memory_order_relaxed);
}

static void clear(struct emu_host_rec *h, unsigned d, unsigned p, unsigned c)
{
	atomic_store_explicit(&h->ctr[d][p - 1][c], 0, memory_order_relaxed);
}

/* PortCounters: CounterSelect bits 12-15 name the data and packet counters */
static void port_counters(uint8_t *pc, struct emu_host_rec *h, unsigned d, unsigned p,
			  bool set)
{
	static const enum emu_ctr sel[4] = {
		EMU_CTR_XMIT_OCTETS, EMU_CTR_RCV_OCTETS, EMU_CTR_XMIT_PKTS, EMU_CTR_RCV_PKTS,
	};
	uint16_t mask = emu_mad_get16(pc + 2);

	for (unsigned i = 0; set && i < 4; i++)
		if (mask & (1u << (12 + i)))
			clear(h, d, p, sel[i]);
	memset(pc + 4, 0, 40);
	/* the data counters count 4-byte words; all saturate at 32 bits */
	emu_mad_put32(pc + 24, sat32(get(h, d, p, EMU_CTR_XMIT_OCTETS) / 4));
	emu_mad_put32(pc + 28, sat32(get(h, d, p, EMU_CTR_RCV_OCTETS) / 4));
	emu_mad_put32(pc + 32, sat32(get(h, d, p, EMU_CTR_XMIT_PKTS)));
	emu_mad_put32(pc + 36, sat32(get(h, d, p, EMU_CTR_RCV_PKTS)));
}

/* PortCountersExtended: CounterSelect bit i names the i-th 64-bit counter */
static void port_counters_ext(uint8_t *pc, struct emu_host_rec *h, unsigned d,
			      unsigned p, bool set)
{
	uint16_t mask = emu_mad_get16(pc + 2);

	memset(pc + 4, 0, 68);
	for (unsigned c = 0; c < EMU_NUM_CTR; c++) {
		uint64_t v;

		if (set && (mask & (1u << c)))
			clear(h, d, p, c);
		v = get(h, d, p, c);
		if (c == EMU_CTR_XMIT_OCTETS || c == EMU_CTR_RCV_OCTETS)
			v /= 4;
		emu_mad_put64(pc + 8 + 8 * c, v);
	}
}

bool emu_pma_answer(struct emu_host_rec *h, unsigned d, unsigned p,
		    const uint8_t *req, uint8_t *resp)
{
	uint8_t *data = resp + EMU_PMA_DATA;
	bool set = req[3] == EMU_METHOD_SET;

	if (req[3] & EMU_METHOD_RESP || req[3] == EMU_METHOD_TRAP_REPRESS)
		return false;
	if (req[2] != 1) {
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VERSION);
		return true;
	}
	if (req[3] != EMU_METHOD_GET && !set) {
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_METHOD);
		return true;
	}
	emu_mad_reply(req, resp, 0);
	switch (emu_mad_attr(req)) {
	case ATTR_CLASS_PORT_INFO:
		if (set) {
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
			break;
		}
		memset(data, 0, 72);
		data[0] = 1;				/* BaseVersion */
		data[1] = 1;				/* ClassVersion */
		emu_mad_put16(data + 2, PMA_CAP_EXT_WIDTH | PMA_CAP_XMIT_WAIT);
		emu_mad_put32(data + 4, 18);		/* RespTimeValue */
		break;
	case ATTR_PORT_COUNTERS:
		port_counters(data, h, d, p, set);
		break;
	case ATTR_PORT_COUNTERS_EXT:
		port_counters_ext(data, h, d, p, set);
		break;
	default:
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
		break;
	}
	return true;
}
