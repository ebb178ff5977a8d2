/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * umad_test.h - a MAD as a umad file reads and writes it
 * (<rdma/ib_user_mad.h>, with P_Key indexes enabled), and a Get to send:
 * for the tests that talk to /dev/infiniband/umadN.
 */
#ifndef RDMAFAST_TESTS_EMU_UMAD_TEST_H
#define RDMAFAST_TESTS_EMU_UMAD_TEST_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <rdma/ib_user_mad.h>

struct ut_mad {
	struct ib_user_mad_hdr	h;
	uint8_t			mad[256];
};

/* A Get of attr from class to lid on agent, waiting timeout_ms for the answer. */
static inline void ut_get(struct ut_mad *m, uint32_t agent, uint8_t mclass, uint16_t attr,
			  uint16_t lid, uint32_t timeout_ms, uint32_t tid)
{
	memset(m, 0, sizeof(*m));
	m->h.id = agent;
	m->h.timeout_ms = timeout_ms;
	m->h.qpn = htobe32(mclass == 0x01 || mclass == 0x81 ? 0 : 1);	/* SMPs on QP0 */
	m->h.qkey = htobe32(0x80010000);
	m->h.lid = htobe16(lid);
	m->mad[0] = 1;
	m->mad[1] = mclass;
	m->mad[2] = 1;
	m->mad[3] = 0x01;			/* Get */
	m->mad[12] = (uint8_t)(tid >> 24);
	m->mad[13] = (uint8_t)(tid >> 16);
	m->mad[14] = (uint8_t)(tid >> 8);
	m->mad[15] = (uint8_t)tid;
	m->mad[16] = (uint8_t)(attr >> 8);
	m->mad[17] = (uint8_t)attr;
}

#endif /* RDMAFAST_TESTS_EMU_UMAD_TEST_H */
