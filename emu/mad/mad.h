/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mad.h - management datagrams as the subnet answers them: the MAD
 * layout (IBA 13.4, 14.2.1 SMPs, 16.1 performance management), the agents
 * this host's ports run (sma.c: SMA; pma.c: PMA) and the fabric's one
 * switch, which runs the subnet manager (sma.c).  Pure functions of a
 * request: umad.c routes MADs to them and queues what they answer.
 */
#ifndef RDMAFAST_EMU_KERNEL_MAD_H
#define RDMAFAST_EMU_KERNEL_MAD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define EMU_MAD_SIZE		256
#define EMU_MAD_HDR		24	/* IB_MGMT_MAD_HDR: the common header */
#define EMU_SMP_DATA		64	/* where an SMP's attribute starts */
#define EMU_PMA_DATA		64	/* ... and a PerfMgt attribute (40 reserved) */

/* Management classes (IBA 13.4.4, <rdma/ib_mad.h>) */
enum {
	EMU_MCLASS_SUBN_LID	= 0x01,
	EMU_MCLASS_SUBN_ADM	= 0x03,
	EMU_MCLASS_PERF		= 0x04,
	EMU_MCLASS_DEVICE_MGMT	= 0x06,
	EMU_MCLASS_DEVICE_ADM	= 0x10,
	EMU_MCLASS_BIS		= 0x12,
	EMU_MCLASS_VENDOR2_LO	= 0x30,
	EMU_MCLASS_VENDOR2_HI	= 0x4f,
	EMU_MCLASS_SUBN_DR	= 0x81,
};

/* Methods */
enum {
	EMU_METHOD_GET		= 0x01,
	EMU_METHOD_SET		= 0x02,
	EMU_METHOD_SEND		= 0x03,
	EMU_METHOD_TRAP_REPRESS	= 0x07,
	EMU_METHOD_RESP		= 0x80,
	EMU_METHOD_GET_RESP	= 0x81,
};

/* MAD status (IBA 13.4.7): bad version, method, method+attribute, value */
enum {
	EMU_MAD_STATUS_BAD_VERSION	= 0x0004,
	EMU_MAD_STATUS_BAD_METHOD	= 0x0008,
	EMU_MAD_STATUS_BAD_ATTR		= 0x000c,
	EMU_MAD_STATUS_BAD_VALUE	= 0x001c,
	EMU_SMP_DIRECTION		= 0x8000,	/* DR SMPs: on the way back */
};

/* The SMP's directed-route fields (IBA 14.2.1.2) */
#define EMU_SMP_HOP_PTR		6
#define EMU_SMP_HOP_CNT		7
#define EMU_SMP_DR_SLID		32
#define EMU_SMP_DR_DLID		34
#define EMU_SMP_INITIAL_PATH	128
#define EMU_SMP_RETURN_PATH	192
#define EMU_PERMISSIVE_LID	0xffff

/* The switch of the modelled fabric: every host port is cabled to it. */
#define EMU_SWITCH_LID		1	/* also the SM's: sm_lid of every port */

static inline uint16_t emu_mad_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t emu_mad_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void emu_mad_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void emu_mad_put32(uint8_t *p, uint32_t v)
{
	emu_mad_put16(p, (uint16_t)(v >> 16));
	emu_mad_put16(p + 2, (uint16_t)v);
}

static inline void emu_mad_put64(uint8_t *p, uint64_t v)
{
	emu_mad_put32(p, (uint32_t)(v >> 32));
	emu_mad_put32(p + 4, (uint32_t)v);
}

static inline uint16_t emu_mad_attr(const uint8_t *mad)
{
	return emu_mad_get16(mad + 16);
}

static inline uint32_t emu_mad_attr_mod(const uint8_t *mad)
{
	return emu_mad_get32(mad + 20);
}

struct emu_host_rec;

/*
 * The answers.  Each takes a request (EMU_MAD_SIZE bytes) that reached
 * port d/p of the host whose published record is h (subnet.h), this one
 * or another, and fills resp with the GetResp, returning true; false when
 * that agent sends no response (a method that has none).
 */
bool emu_sma_answer(const struct emu_host_rec *h, unsigned d, unsigned p,
		    const uint8_t *req, uint8_t *resp);
/* not const: a Set clears h's counters */
bool emu_pma_answer(struct emu_host_rec *h, unsigned d, unsigned p,
		    const uint8_t *req, uint8_t *resp);
/* The switch's SMA (and SM: SMInfo), reached on its port 0 or by route. */
bool emu_switch_answer(const uint8_t *req, uint8_t *resp);
/*
 * What a node answers to a Get or Set of a class no agent takes: the
 * request back as a GetResp with "method/attribute unsupported"
 * (the kernel's generate_unmatched_resp(), mad.c); false otherwise.
 */
bool emu_mad_unmatched(const uint8_t *req, uint8_t *resp);
/* The start of every answer: the request as a GetResp with status. */
void emu_mad_reply(const uint8_t *req, uint8_t *resp, uint16_t status);

#endif /* RDMAFAST_EMU_KERNEL_MAD_H */
