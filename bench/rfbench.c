/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rfbench - rdmafast against libmlx5, side by side in one run.
 *
 *   rfbench [-d DEV] [--reps N] [--json FILE] [--svg FILE] [--callgrind PREFIX]
 *           [--require-instr] [--fleet [--evict-mb N]]
 *   rfbench --instr [-d DEV] [--fleet]      (under valgrind --tool=callgrind)
 *
 * Nanoseconds: every operation of every implementation is timed in chunks
 * of BENCH_CHUNK items on one pinned CPU, --reps times (at least 5); the
 * report gives the median and the range over the repetitions, less the
 * harness's own cost (an empty operation measured the same way).
 *
 * Instructions: with --instr the same chunks run once under callgrind, with
 * collection switched on only around the measured calls, and each
 * operation's count is dumped under its name. A later run given
 * --callgrind PREFIX reads those dumps (PREFIX.1, PREFIX.2, ...) and
 * reports instructions per operation, less the empty operation's. With
 * --require-instr rfbench exits 3 when rdmafast misses an instruction
 * limit (or none was read), for tests: the counts are deterministic.
 *
 * With --fleet both also run fleet.c's rows: many QPs, a DCI to many
 * targets, two threads, the caches made cold between rounds by writing a
 * buffer of N MiB (--evict-mb; by default twice the L2).
 *
 * `make bench` does both on the emulated HCA with the device model off
 * (RFEMU_DEVICE=off): the harness writes the CQEs itself (cqe.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "bench.h"

enum { INSTR_CHUNKS = 16, TIME_CHUNKS = 64, MIN_REPS = 5 };

static int is_poll(enum bench_op op)
{
	return op == OP_POLL_1 || op == OP_POLL_16 || op == OP_POLL_16_ZIP;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The polls consumed exactly what the harness wrote, all successful. */
static void check_polled(struct bench_qp *b)
{
	int ok;

	if (b->impl == IMPL_RDMAFAST) {
		ok = b->rwc[0].status == RF_WC_SUCCESS && !rf_cq_peek(&b->rfcq);
	} else if (b->impl == IMPL_UCX) {
		ok = bench_ucx_polled(b) == b->cq_pi - b->cq_ci;
	} else {
		struct ibv_wc wc;

		ok = b->wc[0].status == IBV_WC_SUCCESS && ibv_poll_cq(b->cq, 1, &wc) == 0;
	}
	if (!ok) {
		fprintf(stderr, "rfbench: %s: measured polls left CQEs or failed\n",
			bench_impl_name[b->impl]);
		exit(2);
	}
	b->cq_ci = b->cq_pi;
}

/*
 * Run `chunks` chunks of op and return the nanoseconds spent in the
 * measured calls. With collect, callgrind counts only those calls.
 */
static uint64_t run(struct bench_qp *b, enum bench_op op, bench_fn fn,
		    unsigned width, unsigned chunks, int collect)
{
	bench_fn post1 = bench_op_fn(b->impl, OP_POST_WRITE_SGE64);
	unsigned calls = BENCH_CHUNK / width, c;
	uint64_t total = 0, t0;

	for (c = 0; c < chunks; c++) {
		if (fn != bench_empty_op && is_poll(op)) {
			/* untimed: BENCH_CHUNK signaled WQEs, each completed */
			post1(b, BENCH_CHUNK);
			b->sq_posted += BENCH_CHUNK;
			if (op == OP_POLL_16_ZIP)
				bench_write_zip_cqes(b, BENCH_CHUNK);
			else
				bench_write_cqes(b, BENCH_CHUNK, 1);
		}
		t0 = now_ns();
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		fn(b, calls);
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		total += now_ns() - t0;
		if (fn == bench_empty_op)
			continue;
		if (is_poll(op)) {
			check_polled(b);
		} else {
			b->sq_posted += BENCH_CHUNK;
			bench_complete_posted(b, width);
		}
	}
	return total;
}

static void pin_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("rfbench: sched_setaffinity");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* bench.h; fleet.c reads the cache simulation's misses through it. */
double bench_cg_events(const char *prefix, const char *name, const char *const *want)
{
	char path[4096], line[1024], desc[256];
	unsigned n;

	snprintf(desc, sizeof(desc), "desc: Trigger: Client Request: %s\n", name);
	for (n = 1; n < 10000; n++) {
		FILE *f;
		char *events = NULL;
		int match = 0;
		double sum = -1;

		snprintf(path, sizeof(path), "%s.%u", prefix, n);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f)) {
			if (!strcmp(line, desc)) {
				match = 1;
			} else if (!strncmp(line, "events: ", 8)) {
				free(events);
				events = strdup(line + 8);
			} else if (match && events && !strncmp(line, "totals: ", 8)) {
				char *save, *val = line + 8, *e, *end;
				unsigned found = 0, k;

				sum = 0;
				for (e = strtok_r(events, " \n", &save); e;
				     e = strtok_r(NULL, " \n", &save)) {
					double v = strtod(val, &end);

					val = end;
					for (k = 0; want[k]; k++)
						if (!strcmp(e, want[k])) {
							sum += v;
							found++;
						}
				}
				if (!found)
					sum = -1;
			}
		}
		fclose(f);
		free(events);
		if (match)
			return sum;
	}
	return -1;
}

/* Total instructions callgrind dumped under `name`, or -1. */
static double cg_total(const char *prefix, const char *name)
{
	static const char *const ir[] = { "Ir", NULL };

	return bench_cg_events(prefix, name, ir);
}

static void usage(void)
{
	fprintf(stderr, "usage: rfbench [-d DEV] [--reps N] [--json FILE] [--svg FILE]\n"
			"               [--callgrind PREFIX] [--require-instr] [--instr]\n"
			"               [--fleet [--evict-mb N]]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	static struct bench_qp qp[IMPL_COUNT], dci[IMPL_COUNT], umr[IMPL_COUNT];
	static int avail[IMPL_COUNT];
	static struct bench_result res[OP_COUNT][IMPL_COUNT];
	const char *dev = NULL, *json = NULL, *svg = NULL, *cg = NULL;
	unsigned reps = 7, op, impl, r;
	int instr = 0, require_instr = 0, instr_met = 0, fleet = 0, i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-d") && i + 1 < argc)
			dev = argv[++i];
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--svg") && i + 1 < argc)
			svg = argv[++i];
		else if (!strcmp(argv[i], "--callgrind") && i + 1 < argc)
			cg = argv[++i];
		else if (!strcmp(argv[i], "--instr"))
			instr = 1;
		else if (!strcmp(argv[i], "--require-instr"))
			require_instr = 1;
		else if (!strcmp(argv[i], "--fleet"))
			fleet = 1;
		else if (!strcmp(argv[i], "--evict-mb") && i + 1 < argc)
			bench_fleet_evict = (size_t)atoi(argv[++i]) << 20;
		else
			usage();
	}
	if (reps < MIN_REPS)
		reps = MIN_REPS;

	pin_cpu();
	for (impl = 0; impl < IMPL_COUNT; impl++) {
		if (impl == IMPL_UCX) {
			/* a peer, not the subject: without it its columns read "-" */
			avail[impl] = !bench_ucx_open(&qp[impl], dev);
			printf("rfbench: ucx_rc_mlx5: %s\n", avail[impl] ? bench_ucx_build() :
			       "not available, its columns read \"-\"");
			continue;
		}
		avail[impl] = 1;
		ret = bench_qp_open(&qp[impl], (enum bench_impl)impl, dev);
		if (!ret)
			ret = bench_dci_open(&dci[impl], (enum bench_impl)impl, dev);
		if (!ret)
			ret = bench_umr_open(&umr[impl], (enum bench_impl)impl, dev);
		if (ret) {
			fprintf(stderr, "rfbench: %s: setup failed: %s\n",
				bench_impl_name[impl], strerror(-ret));
			return 1;
		}
	}

	if (instr) {
		char name[128];

		for (op = 0; op < OP_COUNT; op++) {
			for (impl = 0; impl < IMPL_COUNT; impl++) {
				unsigned w = bench_op_width((enum bench_op)op);

				if (!avail[impl] ||
				    !bench_op_fn((enum bench_impl)impl, (enum bench_op)op))
					continue;	/* (libmlx5 cannot decode zips) */
				CALLGRIND_ZERO_STATS;
				run(bench_op_is_dc((enum bench_op)op) ? &dci[impl] :
				    bench_op_is_umr((enum bench_op)op) ? &umr[impl] : &qp[impl],
				    (enum bench_op)op,
				    bench_op_fn((enum bench_impl)impl, (enum bench_op)op),
				    w, INSTR_CHUNKS, 1);
				snprintf(name, sizeof(name), "%s/%s", bench_op_name[op],
					 bench_impl_name[impl]);
				CALLGRIND_DUMP_STATS_AT(name);
			}
		}
		CALLGRIND_ZERO_STATS;
		run(&qp[0], OP_COUNT, bench_empty_op, 1, INSTR_CHUNKS, 1);
		CALLGRIND_DUMP_STATS_AT("empty");
		bench_tm_instr(dev);
		if (fleet)
			bench_fleet_instr(dci, avail, dev);
	} else {
		double empty_ns = 0, empty_ir = -1, samples[64];
		unsigned items = TIME_CHUNKS * BENCH_CHUNK;

		for (r = 0; r < reps && r < 64; r++)
			samples[r] = (double)run(&qp[0], OP_COUNT, bench_empty_op, 1,
						 TIME_CHUNKS, 0) / items;
		qsort(samples, r, sizeof(double), cmp_double);
		empty_ns = samples[r / 2];
		if (cg)
			empty_ir = cg_total(cg, "empty") / (INSTR_CHUNKS * BENCH_CHUNK);

		for (op = 0; op < OP_COUNT; op++) {
			unsigned w = bench_op_width((enum bench_op)op);
			double calls_per_item = 1.0 / w;

			for (impl = 0; impl < IMPL_COUNT; impl++) {
				struct bench_result *o = &res[op][impl];
				bench_fn fn = avail[impl] ? bench_op_fn((enum bench_impl)impl,
									(enum bench_op)op) : NULL;
				struct bench_qp *q = bench_op_is_dc((enum bench_op)op) ? &dci[impl] :
						     bench_op_is_umr((enum bench_op)op) ? &umr[impl] :
						     &qp[impl];
				char name[128];

				if (!fn) {
					o->ns_per_op = o->ns_min = o->ns_max = o->instr_per_op = -1;
					continue;
				}
				for (r = 0; r < reps && r < 64; r++) {
					double ns = (double)run(q, (enum bench_op)op, fn,
								w, TIME_CHUNKS, 0) / items;

					samples[r] = ns - empty_ns * calls_per_item;
				}
				qsort(samples, r, sizeof(double), cmp_double);
				o->ns_per_op = samples[r / 2];
				o->ns_min = samples[0];
				o->ns_max = samples[r - 1];
				o->instr_per_op = -1;
				snprintf(name, sizeof(name), "%s/%s", bench_op_name[op],
					 bench_impl_name[impl]);
				if (cg && empty_ir >= 0) {
					double t = cg_total(cg, name);

					if (t >= 0)
						o->instr_per_op = t / (INSTR_CHUNKS * BENCH_CHUNK) -
								  empty_ir * calls_per_item;
				}
			}
		}
		bench_report_table(res);
		bench_report_goals(res, &instr_met);
		bench_tm_report(dev, reps, cg, empty_ns, empty_ir, &instr_met);
		if (require_instr && !cg)
			instr_met = 0;	/* nothing to check without the counts */
		if (json && bench_report_json(json, res))
			return 1;
		if (svg && bench_report_svg(svg, res))
			return 1;
		if (fleet)
			bench_fleet_report(dci, avail, dev, reps, cg);
	}
	for (impl = 0; impl < IMPL_COUNT; impl++) {
		if (impl != IMPL_UCX) {
			bench_qp_close(&umr[impl]);
			bench_qp_close(&dci[impl]);
		}
		bench_qp_close(&qp[impl]);
	}
	return require_instr && !instr_met ? 3 : 0;
}
