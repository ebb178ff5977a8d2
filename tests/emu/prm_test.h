/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prm_test.h - the PRM mailboxes of DEVX commands, for the tests that
 * write them by hand: big-endian dwords, a field named by its bit offset
 * and width in rdma-core's providers/mlx5/mlx5_ifc.h, and the header
 * fields every command and answer has.
 */
#ifndef RDMAFAST_TESTS_PRM_TEST_H
#define RDMAFAST_TESTS_PRM_TEST_H

#include <stdint.h>

/* a field of `bits` bits at bit `off` (from the MSB of dword 0), not crossing a dword */
static inline uint32_t prm_get(const void *buf, unsigned off, unsigned bits)
{
	const uint8_t *p = (const uint8_t *)buf + off / 32 * 4;
	uint32_t dw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];

	return (dw >> (32 - off % 32 - bits)) & (bits == 32 ? ~0u : (1u << bits) - 1);
}

static inline void prm_set(void *buf, unsigned off, unsigned bits, uint32_t v)
{
	uint8_t *p = (uint8_t *)buf + off / 32 * 4;
	uint32_t dw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	unsigned shift = 32 - off % 32 - bits;
	uint32_t mask = (bits == 32 ? ~0u : (1u << bits) - 1) << shift;

	dw = (dw & ~mask) | ((v << shift) & mask);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(dw >> (24 - 8 * i));
}

/* the input header (opcode, op_mod) and the output one (status, syndrome) */
#define OPCODE		0x00, 16
#define OP_MOD		0x30, 16
#define STATUS		0x00, 8
#define SYNDROME	0x20, 32
/* a field of the capability query_hca_cap_out carries at byte 0x10 */
#define CAP(off, bits)	0x80 + (off), bits

enum { QUERY_HCA_CAP = 0x100 };
enum {
	STAT_BAD_OP = 0x2, STAT_BAD_PARAM = 0x3, STAT_BAD_RES = 0x5, STAT_LIM = 0x8,
	STAT_NO_RES = 0xf,
};

#endif /* RDMAFAST_TESTS_PRM_TEST_H */
