/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * input.h - a libFuzzer input read a byte at a time, zeros past its end,
 * so that every input, however short, is a whole run (cq_decode.c,
 * rf_api.c).
 */
#ifndef RDMAFAST_FUZZ_INPUT_H
#define RDMAFAST_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t take(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

#endif /* RDMAFAST_FUZZ_INPUT_H */
