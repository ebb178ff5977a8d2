/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * store_probe - what the stores of a one-BB post and its BlueFlame copy
 * cost on this CPU, without the library or the emulator around them
 * (make bench-probe). Each case runs the shape of a ringing post in a loop:
 * the WQE's 48 bytes to a 128-slot queue, the doorbell record, then the
 * same block to one of two 256-byte BlueFlame halves of a page of ordinary
 * memory (what the emulated UAR is), with or without the two sfences of
 * the ring. The inline cases load 8 bytes of payload from a buffer at a
 * chosen page offset and store them after a 4-byte byte count, at 0x24 as
 * an inline WRITE does, or at 0x28 (aligned) for comparison; offset 0 of
 * the buffer 4K-aliases the BlueFlame block and queue slot 0.
 *
 * The fence cases take the ring apart: each sfence alone (before the
 * BlueFlame stores as rf_wc_start(), after them as rf_wc_flush()), a
 * locked instruction or an mfence in the place of the first, and the
 * ring without its doorbell record or without its BlueFlame block.
 *
 * Prints the minimum and the median ns per post over the repetitions: on
 * a shared host the minimum is what the code costs.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64u __attribute__((aligned(1), may_alias));

enum {
	LOAD = 1,		/* payload loaded from src (else a constant) */
	ALIGNED = 2,		/* payload at 0x28 (else 0x24) */
	START = 4,		/* sfence before the BlueFlame stores */
	FLUSH = 8,		/* sfence after them */
	FENCE = START | FLUSH,	/* both: the ring as libmlx5 and rdmafast had it */
	LOCKED = 16,		/* a locked add on the stack instead of START */
	MFENCE = 32,		/* mfence instead of START */
	NO_DBREC = 64,		/* no doorbell record store */
	NO_BF = 128,		/* no BlueFlame block */
};

static uint8_t *sq, *bf, *src;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* What sits before the BlueFlame stores: a fence of some kind, or only the compiler. */
static inline void before_bf(int mode)
{
	if (mode & START)
		__asm__ __volatile__("sfence" ::: "memory");
	else if (mode & LOCKED)
		__asm__ __volatile__("lock addl $0, (%%rsp)" ::: "memory", "cc");
	else if (mode & MFENCE)
		__asm__ __volatile__("mfence" ::: "memory");
	else
		__asm__ __volatile__("" ::: "memory");
}

static inline void after_bf(int mode)
{
	if (mode & FLUSH)
		__asm__ __volatile__("sfence" ::: "memory");
	else
		__asm__ __volatile__("" ::: "memory");
}

/* One block: ctrl, raddr, then the byte count and payload or a data word. */
static inline void block(volatile uint8_t *d, uint32_t pi, uint64_t p, int mode)
{
	volatile uint64_t *q = (volatile uint64_t *)d;

	q[0] = pi;
	q[1] = 8;
	q[2] = 1;
	q[3] = 2;
	*(volatile uint32_t *)(d + 0x20) = 0x80000008U;
	if (mode & LOAD)
		*(volatile u64u *)(d + ((mode & ALIGNED) ? 0x28 : 0x24)) = p;
	else
		q[5] = 3;
}

static __attribute__((noinline)) void run(unsigned n, int mode, size_t soff)
{
	uint8_t *cur = bf;
	uint32_t pi = 0;

	while (n--) {
		uint64_t p = 0;

		if (mode & LOAD) {
			__asm__ __volatile__("" ::: "memory");
			p = *(const u64u *)(src + soff);
		}
		block(sq + ((pi & 127) << 6), pi, p, mode);
		__asm__ __volatile__("" ::: "memory");
		if (!(mode & NO_DBREC))
			*(volatile uint32_t *)(sq + 8192) = pi;		/* dbrec */
		before_bf(mode);
		if (!(mode & NO_BF)) {
			block(cur, pi, p, mode);
			((volatile uint64_t *)cur)[6] = 0;
			((volatile uint64_t *)cur)[7] = 0;
		}
		after_bf(mode);
		cur = (uint8_t *)((uintptr_t)cur ^ 256);
		pi++;
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const struct {
		int mode;
		size_t soff;
		const char *name;
	} c[] = {
		{ FENCE, 0, "8 B data word at 0x28 from a register, sfence x2" },
		{ FENCE | LOAD, 0, "8 B payload at 0x24, buffer offset 0x000, sfence x2" },
		{ FENCE | LOAD, 0x40, "8 B payload at 0x24, buffer offset 0x040, sfence x2" },
		{ FENCE | LOAD, 0x824, "8 B payload at 0x24, buffer offset 0x824, sfence x2" },
		{ FENCE | LOAD | ALIGNED, 0, "8 B payload at 0x28, buffer offset 0x000, sfence x2" },
		{ 0, 0, "8 B data word at 0x28 from a register, no sfence" },
		{ LOAD, 0, "8 B payload at 0x24, buffer offset 0x000, no sfence" },
		{ LOAD, 0x824, "8 B payload at 0x24, buffer offset 0x824, no sfence" },
		{ LOAD | ALIGNED, 0, "8 B payload at 0x28, buffer offset 0x000, no sfence" },
		{ START, 0, "8 B data word, sfence before the BlueFlame block only" },
		{ FLUSH, 0, "8 B data word, sfence after the BlueFlame block only" },
		{ LOCKED, 0, "8 B data word, locked add before the block, no sfence" },
		{ MFENCE, 0, "8 B data word, mfence before the block, no sfence" },
		{ LOCKED | FLUSH, 0, "8 B data word, locked add before, sfence after" },
		{ FENCE | NO_DBREC, 0, "8 B data word, sfence x2, no dbrec store" },
		{ START | NO_DBREC, 0, "8 B data word, sfence before only, no dbrec" },
		{ FENCE | NO_BF, 0, "8 B data word, sfence x2, no BlueFlame block" },
		{ START | NO_BF, 0, "8 B data word, one sfence, no BlueFlame block" },
		{ NO_BF, 0, "8 B data word, no sfence, no BlueFlame block" },
	};
	unsigned reps = argc > 1 ? (unsigned)atoi(argv[1]) : 25, n = 1U << 16, i, r;
	double ns[256];
	cpu_set_t set;

	if (reps < 1 || reps > 256)
		reps = 25;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	sched_setaffinity(0, sizeof(set), &set);
	sq = aligned_alloc(4096, 3 * 4096);
	bf = aligned_alloc(4096, 4096);
	src = aligned_alloc(4096, 4096);
	if (!sq || !bf || !src)
		return 1;
	memset(sq, 0, 3 * 4096);
	memset(bf, 0, 4096);
	memset(src, 1, 4096);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		for (r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			run(n, c[i].mode, c[i].soff);
			ns[r] = (double)(now_ns() - t0) / n;
		}
		qsort(ns, reps, sizeof(ns[0]), cmp);
		printf("%-56s min %5.2f  median %6.2f ns\n", c[i].name, ns[0], ns[reps / 2]);
	}
	return 0;
}
