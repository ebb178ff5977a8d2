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
 * BlueFlame stores as rf_mmio_wc_start(), after them as
 * rf_mmio_flush_writes()), a locked instruction or an mfence in the place
 * of the first, and the ring without its doorbell record or without its
 * BlueFlame block.
 *
 * The DC cases run a DCI write's shape: ctrl, the 48-byte address vector
 * (loaded from a caller's struct), raddr and one data segment, 96 bytes,
 * two BBs of a 64-WQE queue, then two 64-byte BlueFlame lines. The queue
 * is written as the post's segments (8-byte ctrl words, the AV in 16-byte
 * moves, the raddr and data segments in 8- and 4-byte pieces, one 8-byte
 * store across their boundary), as 8-byte words, or as 16-byte moves;
 * the BlueFlame lines are copied back from the queue in 16-byte loads, or
 * written from the registers the queue was written from.
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
typedef uint32_t u32u __attribute__((aligned(1), may_alias));
typedef long long v16 __attribute__((vector_size(16), may_alias));

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

/* The DC cases: how the queue is written, where the BlueFlame lines come from. */
enum {
	DC_SEGS = 0,		/* the post's segment stores */
	DC_WORDS = 1,		/* 8-byte words */
	DC_V16 = 2,		/* 16-byte moves */
	DC_FROM_REGS = 4,	/* BlueFlame from registers (else copied from the queue) */
	DC_NO_FENCE = 8,	/* no sfence before the BlueFlame lines */
	DC_NO_AV = 16,		/* no AV: the one-BB RC WQE, one BlueFlame line */
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

/* A DC target's address vector, 48 bytes in the caller's memory. */
static v16 dc_av[3];

/* The 96-byte DCI WQE to w: ctrl (c0, c1), the AV, raddr (r0, r1), data (d0, d1). */
static inline void dc_wqe(volatile uint8_t *w, uint64_t c0, uint64_t c1, const v16 *av,
			  uint64_t r0, uint64_t r1, uint64_t d0, uint64_t d1, int mode)
{
	volatile uint64_t *q = (volatile uint64_t *)w;
	volatile v16 *v = (volatile v16 *)w;

	unsigned b = (mode & DC_NO_AV) ? 1 : 4;	/* the raddr segment, in 16 bytes */

	if (mode & DC_V16) {
		v[0] = (v16){ (long long)c0, (long long)c1 };
		if (b == 4) {
			v[1] = av[0];
			v[2] = av[1];
			v[3] = av[2];
		}
		v[b] = (v16){ (long long)r0, (long long)r1 };
		v[b + 1] = (v16){ (long long)d0, (long long)d1 };
		return;
	}
	q[0] = c0;
	q[1] = c1;
	if (mode & DC_WORDS) {
		const uint64_t *a = (const uint64_t *)av;

		if (b == 4) {
			q[2] = a[0];
			q[3] = a[1];
			q[4] = a[2];
			q[5] = a[3];
			q[6] = a[4];
			q[7] = a[5];
		}
		q[2 * b] = r0;
		q[2 * b + 1] = r1;
		q[2 * b + 2] = d0;
		q[2 * b + 3] = d1;
		return;
	}
	if (b == 4) {
		v[1] = av[0];
		v[2] = av[1];
		v[3] = av[2];
	}
	/* as gcc 12 stores rf_set_raddr_seg() and rf_set_data_seg() */
	w += 16 * b;
	*(volatile uint64_t *)w = r0;
	*(volatile u32u *)(w + 0x8) = (uint32_t)r1;
	*(volatile u64u *)(w + 0xc) = (r1 >> 32) | (d0 << 32);
	*(volatile u32u *)(w + 0x14) = (uint32_t)(d0 >> 32);
	*(volatile uint64_t *)(w + 0x18) = d1;
}

static __attribute__((noinline)) void run_dc(unsigned n, int mode)
{
	uint8_t *cur = bf;
	uint32_t pi = 0;

	while (n--) {
		uint8_t *w = sq + ((pi & 127) << 6);
		volatile v16 *s = (volatile v16 *)w, *d = (volatile v16 *)cur;
		unsigned bbs = (mode & DC_NO_AV) ? 1 : 2;

		dc_wqe(w, pi, 8, dc_av, 1, 2, 0x4000000000ULL, 3, mode);
		__asm__ __volatile__("" ::: "memory");
		*(volatile uint32_t *)(sq + 8192) = pi + bbs;		/* dbrec */
		if (mode & DC_NO_FENCE)
			__asm__ __volatile__("" ::: "memory");
		else
			__asm__ __volatile__("sfence" ::: "memory");
		if (mode & DC_FROM_REGS) {
			dc_wqe(cur, pi, 8, dc_av, 1, 2, 0x4000000000ULL, 3, mode);
			/* the last line's 16 or 32 bytes after the WQE */
			if (bbs == 2)
				d[6] = (v16){ 0, 0 };
			d[4 * bbs - 1] = (v16){ 0, 0 };
		} else {
			unsigned i;

			for (i = 0; i < 4 * bbs; i++)
				d[i] = s[i];
		}
		__asm__ __volatile__("" ::: "memory");
		cur = (uint8_t *)((uintptr_t)cur ^ 256);
		pi += bbs;
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
	static const struct {
		int mode;
		const char *name;
	} dc[] = {
		{ DC_SEGS, "DC: segment stores, BlueFlame copied from the queue" },
		{ DC_WORDS, "DC: 8-byte words, BlueFlame copied from the queue" },
		{ DC_V16, "DC: 16-byte moves, BlueFlame copied from the queue" },
		{ DC_SEGS | DC_FROM_REGS, "DC: segment stores, BlueFlame from registers" },
		{ DC_WORDS | DC_FROM_REGS, "DC: 8-byte words, BlueFlame from registers" },
		{ DC_V16 | DC_FROM_REGS, "DC: 16-byte moves, BlueFlame from registers" },
		{ DC_SEGS | DC_NO_FENCE, "DC: segments, copied from the queue, no sfence" },
		{ DC_WORDS | DC_FROM_REGS | DC_NO_FENCE, "DC: words, from registers, no sfence" },
		{ DC_V16 | DC_NO_FENCE, "DC: 16-byte moves, copied from the queue, no sfence" },
		{ DC_V16 | DC_FROM_REGS | DC_NO_FENCE, "DC: 16-byte moves, from registers, no sfence" },
		{ DC_NO_AV | DC_WORDS | DC_FROM_REGS, "1 BB, no AV: 8-byte words, from registers" },
		{ DC_NO_AV | DC_V16 | DC_FROM_REGS, "1 BB, no AV: 16-byte moves, from registers" },
		{ DC_NO_AV | DC_V16, "1 BB, no AV: 16-byte moves, copied from the queue" },
		{ DC_NO_AV | DC_WORDS | DC_FROM_REGS | DC_NO_FENCE, "1 BB: words, from registers, no sfence" },
		{ DC_NO_AV | DC_V16 | DC_FROM_REGS | DC_NO_FENCE, "1 BB: 16-byte moves, from registers, no sfence" },
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
	for (i = 0; i < sizeof(dc) / sizeof(dc[0]); i++) {
		for (r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			run_dc(n, dc[i].mode);
			ns[r] = (double)(now_ns() - t0) / n;
		}
		qsort(ns, reps, sizeof(ns[0]), cmp);
		printf("%-56s min %5.2f  median %6.2f ns\n", dc[i].name, ns[0], ns[reps / 2]);
	}
	return 0;
}
