/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fault.c - fault injection, so programs can test their error handling.
 *
 * Read once when the device model starts.  Probabilities are per packet
 * (0..1); every packet, loopback included, passes the injector once.
 *
 *   RFEMU_DROP=P                     lose a packet (request, response or ACK)
 *   RFEMU_CORRUPT=P                  flip a bit; the receiver's check drops it
 *   RFEMU_DELAY_US=N                 hold packets back N microseconds
 *   RFEMU_DELAY_FRAC=P               ... only this share of them (default 1)
 *   RFEMU_FORCE_RNR=P                a receive-consuming request finds no
 *                                    receive WQE (RNR NAK on RC/XRC)
 *   RFEMU_FORCE_REMOTE_ACCESS_ERR=P  an RDMA/atomic request fails its rkey
 *                                    check (NAK, REM_ACCESS_ERR, QPs to ERR)
 *   RFEMU_FAULT_SEED=N               seed of the generator (reproducible runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wire.h"

struct wire_fault wire_fault;
static uint64_t rng_state;

static double env_prob(const char *name)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	if (*end || v < 0 || v > 1) {
		fprintf(stderr, "rfemu: ignoring %s=%s (want 0..1)\n", name, s);
		return 0;
	}
	return v;
}

void wire_fault_load(void)
{
	const char *s;

	wire_fault.drop = env_prob("RFEMU_DROP");
	wire_fault.corrupt = env_prob("RFEMU_CORRUPT");
	wire_fault.force_rnr = env_prob("RFEMU_FORCE_RNR");
	wire_fault.force_rae = env_prob("RFEMU_FORCE_REMOTE_ACCESS_ERR");
	s = getenv("RFEMU_DELAY_US");
	wire_fault.delay_us = s ? (uint32_t)strtoul(s, NULL, 0) : 0;
	wire_fault.delay_frac = getenv("RFEMU_DELAY_FRAC") ? env_prob("RFEMU_DELAY_FRAC") : 1.0;
	wire_fault.any = wire_fault.drop > 0 || wire_fault.corrupt > 0 || wire_fault.delay_us;
	s = getenv("RFEMU_FAULT_SEED");
	rng_state = s ? strtoull(s, NULL, 0) : (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
	if (!rng_state)
		rng_state = 1;
}

/* xorshift64*: only the engine thread draws, so no locking. */
bool wire_fault_hit(double p)
{
	uint64_t x = rng_state;

	if (p <= 0)
		return false;
	if (p >= 1)
		return true;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53 < p;
}

/* FNV-1a over 8-byte words: the packets' check value, not cryptography. */
uint64_t dev_hash(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (; n >= 8; n -= 8, b += 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}
