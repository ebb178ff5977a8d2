/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The device clock: the core clock register page behind
 * ibv_query_rt_values_ex(), the clock info page behind
 * mlx5dv_get_clock_info() and mlx5dv_ts_to_ns(), and how the kernel keeps
 * the latter (shift and mult from hca_core_clock, the 41-bit mask, the
 * advance once per overflow period).  The rate is read from the device,
 * never assumed.
 */
#include <sys/mman.h>
#include <time.h>

#include <rdma/mlx5-abi.h>

#include "emu_test.h"

/*
 * How old the register may read: the device refreshes it at least every
 * RFEMU_IDLE_MAX_US (1 ms) and on commands; the rest is room for a loaded
 * machine. A wrong rate or origin is off by far more.
 */
#define STALE_NS	50000000ULL

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t core_clock_khz(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ex;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	cr_assert_neq(ex.hca_core_clock, 0);
	return ex.hca_core_clock;
}

static uint64_t raw_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	cr_assert_eq(ibv_query_rt_values_ex(ctx, &v), 0, "ibv_query_rt_values_ex");
	cr_assert_eq(v.comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	cr_assert_eq(v.raw_clock.tv_sec, 0);
	return (uint64_t)v.raw_clock.tv_nsec;
}

static uint32_t ilog2(uint64_t v)
{
	uint32_t r = 0;

	while (v >>= 1)
		r++;
	return r;
}

/* the kernel's mlx5_ptp_shift_constant() */
static uint32_t shift_for(uint64_t khz)
{
	uint32_t a = ilog2(khz) + 16, b = ilog2(4294 * khz);

	return a < b ? a : b;
}

/* clocksource_khz2mult(), as the kernel's mlx5_timecounter_init() uses it */
static uint32_t khz2mult(uint64_t khz, uint32_t shift)
{
	return (uint32_t)(((1000000ULL << shift) + khz / 2) / khz);
}

/* The period after which the kernel advances the page, in cycles. */
static uint64_t overflow_cycles(uint32_t mult)
{
	uint64_t c = (~0ULL >> 1) / mult, m = ((1ULL << 41) - 1) / 3;

	return c < m ? c : m;
}

Test(clock, query_rt_values_reads_the_core_clock)
{
	struct ibv_context *ctx = et_open();
	struct mlx5dv_clock_info ci;
	struct ibv_port_attr pa;
	uint64_t t0, t1, raw, ns;

	cr_assert_eq(mlx5dv_get_clock_info(ctx, &ci), 0);
	/* between two readings of CLOCK_REALTIME once converted */
	t0 = realtime_ns();
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);	/* a command: fresh register */
	raw = raw_clock(ctx);
	t1 = realtime_ns();
	ns = mlx5dv_ts_to_ns(&ci, raw);
	cr_assert_geq(ns + STALE_NS, t0, "raw clock %llu is %lld ns before the call",
		      (unsigned long long)raw, (long long)(t0 - ns));
	cr_assert_leq(ns, t1 + 1000000, "raw clock is %lld ns after the call",
		      (long long)(ns - t1));
	/* only RAW_CLOCK is known (mlx5_query_rt_values()) */
	{
		struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK << 1 };

		cr_assert_eq(ibv_query_rt_values_ex(ctx, &v), EINVAL);
	}
	cr_assert_eq(ibv_close_device(ctx), 0);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Between two readings the counter advanced at hca_core_clock. */
Test(clock, the_register_counts_at_hca_core_clock)
{
	struct ibv_context *ctx = et_open();
	uint64_t khz = core_clock_khz(ctx), m[4], a, b, lo, hi;
	struct ibv_port_attr pa;

	m[0] = monotonic_ns();
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	a = raw_clock(ctx);
	m[1] = monotonic_ns();
	usleep(200000);
	m[2] = monotonic_ns();
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	b = raw_clock(ctx);
	m[3] = monotonic_ns();
	lo = (m[2] - m[1] - STALE_NS) * khz / 1000000;
	hi = (m[3] - m[0] + STALE_NS) * khz / 1000000 + 1;
	cr_assert(b - a >= lo && b - a <= hi, "%llu cycles in %llu..%llu ns at %llu kHz",
		  (unsigned long long)(b - a), (unsigned long long)(m[2] - m[1]),
		  (unsigned long long)(m[3] - m[0]), (unsigned long long)khz);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

Test(clock, the_register_runs_without_commands)
{
	struct ibv_context *ctx = et_open();
	uint64_t a = raw_clock(ctx), b = a, prev = a;

	/* no command between the reads: only the device moves it */
	for (int i = 0; i < 500 && b == a; i++) {
		usleep(10000);
		b = raw_clock(ctx);
		cr_assert_geq(b, prev, "the counter went back");
		prev = b;
	}
	cr_assert_gt(b, a, "the core clock register stood still for 5 s");
	cr_assert_eq(ibv_close_device(ctx), 0);
}

Test(clock, info_page_as_the_kernel_keeps_it)
{
	struct ibv_context *ctx = et_open();
	uint64_t khz = core_clock_khz(ctx);
	struct mlx5dv_context dv = {
		.comp_mask = MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE |
			     MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK,
	};
	struct mlx5dv_clock_info ci;
	const struct mlx5_ib_clock_info *page;
	long psz = sysconf(_SC_PAGESIZE);

	cr_assert_eq(mlx5dv_get_clock_info(ctx, &ci), 0, "mlx5dv_get_clock_info");
	cr_assert_eq(ci.shift, shift_for(khz), "shift %u for %llu kHz", ci.shift,
		     (unsigned long long)khz);
	cr_assert_eq(ci.mask, (1ULL << 41) - 1);
	cr_assert_eq(ci.mult, khz2mult(khz, ci.shift), "mult %u for %llu kHz", ci.mult,
		     (unsigned long long)khz);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert(dv.comp_mask & MLX5DV_CONTEXT_MASK_CLOCK_INFO_UPDATE);
	cr_assert_neq(dv.max_clock_info_update_nsec, 0);
	cr_assert(dv.comp_mask & MLX5DV_CONTEXT_MASK_HCA_CORE_CLOCK);
	cr_assert(dv.hca_core_clock);

	/* the page itself, mapped as libmlx5 maps it: a settled seqlock */
	page = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, ctx->cmd_fd,
		    (off_t)((MLX5_IB_MMAP_CLOCK_INFO << 8) | MLX5_IB_CLOCK_INFO_V1) * psz);
	cr_assert_neq(page, MAP_FAILED);
	cr_assert_eq(page->sign & MLX5_IB_CLOCK_INFO_KERNEL_UPDATING, 0);
	cr_assert_eq(page->mult, ci.mult);
	cr_assert_eq(page->shift, ci.shift);
	cr_assert_eq(page->mask, ci.mask);
	cr_assert_eq(page->overflow_period, dv.max_clock_info_update_nsec);
	cr_assert_eq(munmap((void *)page, (size_t)psz), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * The overflow work: once a period has passed the page holds a later
 * (cycles, nsec) pair, the same conversion of a timestamp taken before
 * (within rounding), and a correct one of a fresh timestamp.
 */
Test(clock, info_page_advances_each_overflow_period, .timeout = 60)
{
	struct ibv_context *ctx = et_open();
	struct mlx5dv_clock_info a, b;
	uint64_t khz = core_clock_khz(ctx), ms, then, t0, t1, ns;
	struct ibv_port_attr pa;

	cr_assert_eq(mlx5dv_get_clock_info(ctx, &a), 0);
	ms = overflow_cycles(a.mult) / khz;
	then = raw_clock(ctx);
	b = a;
	for (uint64_t waited = 0; b.last_cycles == a.last_cycles && waited < ms + 20000;
	     waited += 100) {
		usleep(100000);
		cr_assert_eq(mlx5dv_get_clock_info(ctx, &b), 0);
	}
	cr_assert_neq(b.last_cycles, a.last_cycles, "no advance within %llu ms",
		      (unsigned long long)ms + 20000);
	cr_assert_geq(((b.last_cycles - a.last_cycles) & a.mask), overflow_cycles(a.mult),
		      "advanced before the period ended");
	cr_assert_gt(b.nsec, a.nsec);
	/* an old timestamp converts the same through either page */
	cr_assert_leq(mlx5dv_ts_to_ns(&b, then) - mlx5dv_ts_to_ns(&a, then) + 1, 2);
	t0 = realtime_ns();
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	ns = mlx5dv_ts_to_ns(&b, raw_clock(ctx));
	t1 = realtime_ns();
	cr_assert_geq(ns + STALE_NS, t0);
	cr_assert_leq(ns, t1 + 1000000);
	cr_assert_eq(ibv_close_device(ctx), 0);
}
