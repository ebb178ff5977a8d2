/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/report.c - the results as a table, as JSON and as an SVG chart.
 */
#include <stdio.h>

#include "bench.h"

static void fmt_instr(char *s, size_t n, double v)
{
	if (v < 0)
		snprintf(s, n, "-");
	else
		snprintf(s, n, "%.1f", v);
}

void bench_report_table(struct bench_result r[OP_COUNT][IMPL_COUNT])
{
	unsigned op, impl;

	printf("%-20s %-11s %9s %9s %17s %9s %9s\n", "operation", "impl",
	       "instr/op", "ns/op", "ns min..max", "instr ×", "ns ×");
	for (op = 0; op < OP_COUNT; op++) {
		const struct bench_result *base = &r[op][IMPL_LIBMLX5];

		for (impl = 0; impl < IMPL_COUNT; impl++) {
			const struct bench_result *o = &r[op][impl];
			char in[32], ix[32], nx[32], range[40];

			if (o->ns_per_op < 0 && o->instr_per_op < 0)
				continue;	/* not measured (poll_16_zip: rdmafast only) */
			fmt_instr(in, sizeof(in), o->instr_per_op);
			if (o->instr_per_op > 0 && base->instr_per_op > 0)
				snprintf(ix, sizeof(ix), "%.2f", o->instr_per_op / base->instr_per_op);
			else
				snprintf(ix, sizeof(ix), "-");
			snprintf(range, sizeof(range), "%.1f..%.1f", o->ns_min, o->ns_max);
			if (base->ns_per_op > 0)
				snprintf(nx, sizeof(nx), "%.2f", o->ns_per_op / base->ns_per_op);
			else
				snprintf(nx, sizeof(nx), "-");
			printf("%-20s %-11s %9s %9.1f %17s %9s %9s\n",
			       impl ? "" : bench_op_name[op], bench_impl_name[impl], in,
			       o->ns_per_op, range, ix, nx);
		}
	}
	printf("(instr × and ns ×: relative to libmlx5 ibv_post_send/ibv_poll_cq; per operation,\n"
	       " harness cost subtracted; poll_16_zip: one zip of 16 compressed CQEs, which\n"
	       " libmlx5 cannot decode, per CQE; ucx_rc_mlx5: uct_ep_put_zcopy, uct_ep_put_short,\n"
	       " uct_ep_am_short (8-byte header + 24 bytes), one uct_iface_progress per CQE;\n"
	       " post_umr_klm4: libmlx5's mlx5dv_wr_mr_list() in every column, rdmafast's\n"
	       " rf_sq_post_mr_list() with its fence NOP)\n");
}

/*
 * The goals rdmafast is held to (README, "Benchmarks"), checked here.
 * Instructions: limits at what the data path measured when the goals were
 * re-based on its floors (gcc, x86-64, this harness), so that nothing
 * regresses (lowered as the data path got cheaper: the batch from 28 at
 * 26.5; the posts by one and poll_16 to 19 with one sfence a BlueFlame
 * ring and the poll's registers, round 4; the DC post from 87 at 70.5,
 * the one-SGE post from 51 at 46.5 and the 8-byte inline post from 53 at
 * 51.4, rung from 16-byte registers, round 5; the 4-KLM UMR at its first
 * 156.4, issue 33, and from 157 at 132.4, its KLMs straight-line, round 7);
 * time: a quarter of libmlx5's for every operation.
 * *instr_met: every instruction limit is met.
 */
static int goal(const char *what, double value, double limit)
{
	int met = value >= 0 && value <= limit;

	printf("  %-58s %8.2f <= %8.2f  %s\n", what, value, limit, met ? "met" : "MISSED");
	return met;
}

int bench_report_goals(struct bench_result r[OP_COUNT][IMPL_COUNT], int *instr_met)
{
	static const double instr_cap[OP_COUNT] = {
		[OP_POST_WRITE_SGE64]	= 47,
		[OP_POST_WRITE_INLINE8]	= 52,
		[OP_POST_SEND_INLINE32]	= 52,
		[OP_POST_BATCH16_WRITE]	= 27,
		[OP_POLL_1]		= 40,
		[OP_POLL_16]		= 19,
		[OP_POST_DC_WRITE_SGE64] = 71,
		/* OP_POLL_16_ZIP: fewer than poll_16, below */
		[OP_POST_UMR_KLM4]	= 133,
	};
	/*
	 * Built by clang, the data path is held to gcc's limits plus 10%:
	 * users build with either.
	 */
#if defined(__clang__)
	const double cc_slack = 1.1;
	const char *cc = "clang: gcc's limits + 10%";
#else
	const double cc_slack = 1.0;
	const char *cc = "gcc";
#endif
	char what[128];
	unsigned op;
	int all = 1;

	*instr_met = 1;
	printf("goals (x86-64, %s):\n", cc);
	for (op = 0; op < OP_COUNT; op++) {
		const struct bench_result *rf = &r[op][IMPL_RDMAFAST];
		const struct bench_result *ib = &r[op][IMPL_LIBMLX5];

		if (rf->instr_per_op >= 0 && op != OP_POLL_16_ZIP) {
			snprintf(what, sizeof(what), "%s: instructions per op", bench_op_name[op]);
			*instr_met &= goal(what, rf->instr_per_op, instr_cap[op] * cc_slack);
		}
		if (op == OP_POLL_16_ZIP) {
			/*
			 * A zip carries in 8 bytes per CQE what a normal CQE
			 * carries in 64: its decoding must cost less than that of
			 * the uncompressed batch, or compression does not pay.
			 */
			const struct bench_result *plain = &r[OP_POLL_16][IMPL_RDMAFAST];

			if (rf->instr_per_op >= 0 && plain->instr_per_op >= 0)
				all &= goal("poll_16_zip: instructions per CQE, < poll_16's",
					    rf->instr_per_op, plain->instr_per_op - 0.01);
			continue;	/* no libmlx5 time to compare with */
		}
		snprintf(what, sizeof(what), "%s: ns, 1/4 of libmlx5", bench_op_name[op]);
		all &= goal(what, rf->ns_per_op, ib->ns_per_op / 4);
		/* UCX's rc_mlx5, where it was measured: a quarter of its posts */
		if (op != OP_POLL_1 && op != OP_POLL_16 && rf->instr_per_op >= 0 &&
		    r[op][IMPL_UCX].instr_per_op >= 0) {
			snprintf(what, sizeof(what), "%s: instructions, 1/4 of UCX's",
				 bench_op_name[op]);
			all &= goal(what, rf->instr_per_op, r[op][IMPL_UCX].instr_per_op / 4);
		}
	}
	all &= *instr_met;
	printf("goals: %s\n", all ? "all met" : "some missed");
	return all;
}

int bench_report_json(const char *path, struct bench_result r[OP_COUNT][IMPL_COUNT])
{
	FILE *f = fopen(path, "w");
	unsigned op, impl;
	const char *sep = "";

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "[\n");
	for (op = 0; op < OP_COUNT; op++)
		for (impl = 0; impl < IMPL_COUNT; impl++) {
			const struct bench_result *o = &r[op][impl];

			if (o->ns_per_op < 0 && o->instr_per_op < 0)
				continue;
			fprintf(f, "%s  {\"op\": \"%s\", \"impl\": \"%s\", ", sep,
				bench_op_name[op], bench_impl_name[impl]);
			if (o->instr_per_op < 0)
				fprintf(f, "\"instr_per_op\": null, ");
			else
				fprintf(f, "\"instr_per_op\": %.2f, ", o->instr_per_op);
			fprintf(f, "\"ns_per_op\": %.2f, \"ns_min\": %.2f, \"ns_max\": %.2f}",
				o->ns_per_op, o->ns_min, o->ns_max);
			sep = ",\n";
		}
	fprintf(f, "\n]\n");
	return fclose(f);
}

static const char *const color[IMPL_COUNT] = {
	"#2a9d8f", "#e76f51", "#f4a261", "#8d99ae", "#6a4c93",
};

/* One panel: a group of bars per operation, one bar per implementation. */
static void svg_panel(FILE *f, double y0, const char *title, int instr,
		      struct bench_result r[OP_COUNT][IMPL_COUNT])
{
	const double left = 70, width = 860, height = 200, group = width / OP_COUNT;
	const double bar = group / (IMPL_COUNT + 1);
	double max = 0;
	unsigned op, impl;

	for (op = 0; op < OP_COUNT; op++)
		for (impl = 0; impl < IMPL_COUNT; impl++) {
			double v = instr ? r[op][impl].instr_per_op : r[op][impl].ns_per_op;

			if (v > max)
				max = v;
		}
	if (max <= 0)
		max = 1;
	fprintf(f, "<text x='%g' y='%g' font-size='15' font-weight='bold'>%s</text>\n",
		left, y0 - 12, title);
	fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#333'/>\n",
		left, y0 + height, left + width, y0 + height);
	for (op = 0; op < OP_COUNT; op++) {
		double gx = left + op * group + bar / 2;

		for (impl = 0; impl < IMPL_COUNT; impl++) {
			double v = instr ? r[op][impl].instr_per_op : r[op][impl].ns_per_op;
			double h = v > 0 ? v / max * height : 0;
			double x = gx + impl * bar;

			fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'>"
				"<title>%s %s: %.1f</title></rect>\n", x, y0 + height - h,
				bar - 2, h, color[impl], bench_op_name[op], bench_impl_name[impl], v);
			if (v > 0)
				fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' text-anchor='middle'>%.0f</text>\n",
					x + (bar - 2) / 2, y0 + height - h - 3, v);
		}
		fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>%s</text>\n",
			gx + IMPL_COUNT * bar / 2, y0 + height + 16, bench_op_name[op]);
	}
}

int bench_report_svg(const char *path, struct bench_result r[OP_COUNT][IMPL_COUNT])
{
	FILE *f = fopen(path, "w");
	unsigned impl;

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='960' height='620' "
		   "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n");
	svg_panel(f, 50, "Instructions per operation (callgrind; lower is better)", 1, r);
	svg_panel(f, 340, "Nanoseconds per operation (median; lower is better)", 0, r);
	for (impl = 0; impl < IMPL_COUNT; impl++) {
		fprintf(f, "<rect x='%u' y='592' width='14' height='14' fill='%s'/>"
			"<text x='%u' y='604' font-size='12'>%s</text>\n", 70 + impl * 160,
			color[impl], 90 + impl * 160, bench_impl_name[impl]);
	}
	fprintf(f, "</svg>\n");
	return fclose(f);
}
