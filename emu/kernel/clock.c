/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * clock.c - the HCA's free-running clock and the two pages through which
 * libmlx5 reads it.
 *
 * The counter.  A ConnectX counts at hca_core_clock kHz (QUERY_DEVICE_EX;
 * here emu_core_clock_khz(), the device profile) from its reset.  Ours is
 * CLOCK_MONOTONIC scaled to that rate: it never steps back, and a CQE
 * written later carries a larger value than one written before.
 *
 * The core clock page, mmap command MLX5_IB_MMAP_CORE_CLOCK (5).  The
 * kernel (drivers/infiniband/hw/mlx5/main.c, mlx5_ib_mmap()) maps the page
 * of the initialization segment that starts at internal_timer_h (offset
 * 0x1000, so hca_core_clock_offset is 0), read-only; libmlx5's
 * mlx5_read_clock() (providers/mlx5/verbs.c) reads internal_timer_h, _l and
 * _h again, big-endian, for ibv_query_rt_values_ex().  A register reads
 * the live counter, memory cannot: every engine round (at most
 * RFEMU_IDLE_MAX_US apart) and every command store the counter there.  The
 * two words go in one aligned 8-byte store, so a reader that sees the same
 * high word twice holds a consistent pair.
 *
 * The clock info page, MLX5_IB_MMAP_CLOCK_INFO (7) at index
 * MLX5_IB_CLOCK_INFO_V1: struct mlx5_ib_clock_info of <rdma/mlx5-abi.h>,
 * kept as drivers/net/ethernet/mellanox/mlx5/core/lib/clock.c keeps it.
 * A timecounter over 41-bit cycles (the mask), with the shift of
 * mlx5_ptp_shift_constant() and mult = clocksource_khz2mult(khz, shift),
 * starts at CLOCK_REALTIME; the overflow
 * work advances it (cycles, nsec, frac) once per overflow period, the time
 * after which cycles * mult would no longer fit 63 bits, inside the
 * seqlock that mlx5dv_get_clock_info() retries on: sign has
 * MLX5_IB_CLOCK_INFO_KERNEL_UPDATING set while the fields change, and
 * ends 2 higher.  mlx5dv_ts_to_ns() of a CQE timestamp is then
 * CLOCK_REALTIME nanoseconds.  Here the advance happens on the first
 * engine round or command after the period has passed; with no engine
 * (RFEMU_DEVICE=off) and no command for two periods, the conversion of a
 * fresh timestamp overflows, as it would on a host whose kernel stopped
 * running its work queue.
 *
 * The timecounter is one per process (every emulated device counts the
 * same time); each context has its own pair of pages in its command fd.
 * Everything here runs under emu_lock.
 */
#include <endian.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/mlx5-abi.h>

#include "internal.h"

#define CLOCK_MASK	((1ULL << 41) - 1)	/* CLOCKSOURCE_MASK(41) */
#define CLOCK_HZ	250			/* Debian's CONFIG_HZ */

static struct {
	bool		started;
	uint32_t	shift;
	uint32_t	mult;
	uint64_t	overflow_cycles;
	uint64_t	overflow_period;	/* as the kernel stores it: jiffies */
	uint64_t	cycle_last;		/* masked */
	uint64_t	nsec;
	uint64_t	frac;
} tc;

uint64_t emu_clock_cycles(void)
{
	uint64_t khz = emu_core_clock_khz();
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* kHz * 1000 per second; each term stays far below 2^64 */
	return (uint64_t)ts.tv_sec * khz * 1000 + (uint64_t)ts.tv_nsec * khz / 1000000;
}

bool emu_clock_pages_offered(void)
{
	/* mlx5_ib_alloc_ucontext(): no core clock where a page exceeds 4 KiB */
	return sysconf(_SC_PAGESIZE) <= (long)EMU_PAGE_SIZE;
}

/* cyclecounter_cyc2ns() with its fractional carry */
static uint64_t cyc2ns(uint64_t cycles, uint64_t *frac)
{
	uint64_t ns = cycles * tc.mult + *frac;

	*frac = ns & ((1ULL << tc.shift) - 1);
	return ns >> tc.shift;
}

static uint32_t ilog2(uint64_t v)
{
	return 63u - (uint32_t)__builtin_clzll(v);
}

/*
 * mlx5_ptp_shift_constant(): adjustments of 1 scaled ppm (ilog2(kHz) + 16),
 * unless a millisecond of cycles times mult would then pass 32 bits.
 */
static uint32_t shift_for(uint64_t khz)
{
	uint32_t a = ilog2(khz) + 16, b = ilog2((0xffffffffULL / 1000000) * khz);

	return a < b ? a : b;
}

static void tc_start(void)
{
	uint64_t khz = emu_core_clock_khz();
	struct timespec rt;
	uint64_t frac = 0;

	clock_gettime(CLOCK_REALTIME, &rt);
	tc.shift = shift_for(khz);
	/* clocksource_khz2mult() */
	tc.mult = (uint32_t)(((1000000ULL << tc.shift) + khz / 2) / khz);
	/* mlx5_init_overflow_period() */
	tc.overflow_cycles = (~0ULL >> 1) / tc.mult;
	if (tc.overflow_cycles > CLOCK_MASK / 3)
		tc.overflow_cycles = CLOCK_MASK / 3;
	tc.overflow_period = cyc2ns(tc.overflow_cycles, &frac) / (1000000000 / CLOCK_HZ);
	tc.cycle_last = emu_clock_cycles() & CLOCK_MASK;
	tc.nsec = (uint64_t)rt.tv_sec * 1000000000 + (uint64_t)rt.tv_nsec;
	tc.frac = 0;
	tc.started = true;
}

static struct mlx5_ib_clock_info *info_page(const struct emu_ctx *ctx)
{
	return (struct mlx5_ib_clock_info *)
		emu_uar_page(ctx, EMU_MMAP_CLOCK_INFO, MLX5_IB_CLOCK_INFO_V1);
}

/* mlx5_update_clock_info_page(): the fields between two sign stores */
static void info_publish(const struct emu_ctx *ctx)
{
	struct mlx5_ib_clock_info *ci = info_page(ctx);
	_Atomic uint32_t *sign = (_Atomic uint32_t *)&ci->sign;
	uint32_t s = atomic_load_explicit(sign, memory_order_acquire);

	atomic_store_explicit(sign, s | MLX5_IB_CLOCK_INFO_KERNEL_UPDATING,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);	/* smp_store_mb() */
	ci->cycles = tc.cycle_last;
	ci->mult = tc.mult;
	ci->nsec = tc.nsec;
	ci->frac = tc.frac;
	ci->shift = tc.shift;
	ci->mask = CLOCK_MASK;
	ci->overflow_period = tc.overflow_period;
	atomic_store_explicit(sign, s + MLX5_IB_CLOCK_INFO_KERNEL_UPDATING * 2,
			      memory_order_release);
}

/* internal_timer_h, internal_timer_l: big-endian, one store */
static void register_store(const struct emu_ctx *ctx, uint64_t cycles)
{
	uint32_t words[2] = { htobe32((uint32_t)(cycles >> 32)), htobe32((uint32_t)cycles) };
	uint64_t v;

	memcpy(&v, words, sizeof(v));
	atomic_store_explicit((_Atomic uint64_t *)(void *)
			      (emu_uar_page(ctx, EMU_MMAP_CORE_CLOCK, 0) +
			       EMU_CORE_CLOCK_OFFSET), v, memory_order_relaxed);
}

void emu_clock_ctx_init_locked(struct emu_ctx *ctx)
{
	if (!emu_clock_pages_offered())
		return;
	if (!tc.started)
		tc_start();
	info_publish(ctx);
	register_store(ctx, emu_clock_cycles());
}

void emu_clock_tick_locked(void)
{
	uint64_t now;
	bool advance = false;

	if (!tc.started)
		return;		/* no context yet */
	now = emu_clock_cycles();
	/*
	 * mlx5_timestamp_overflow(): timecounter_read(), then the page.  A
	 * late tick advances in steps of one period, each of which fits the
	 * multiplication.
	 */
	while (((now - tc.cycle_last) & CLOCK_MASK) >= tc.overflow_cycles) {
		uint64_t step = (now - tc.cycle_last) & CLOCK_MASK;

		if (step >= 2 * tc.overflow_cycles)
			step = tc.overflow_cycles;
		tc.nsec += cyc2ns(step, &tc.frac);
		tc.cycle_last = (tc.cycle_last + step) & CLOCK_MASK;
		advance = true;
	}
	for (struct emu_ctx *c = emu_ctx_first_locked(); c; c = c->next) {
		if (!c->have_context)
			continue;
		if (advance)
			info_publish(c);
		register_store(c, now);
	}
}
