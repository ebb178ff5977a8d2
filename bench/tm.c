/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/tm.c - hardware tag matching, rdmafast (rdmafast/tm.h) against
 * libmlx5 (ibv_post_srq_ops(), an extended CQ), on a TM SRQ of each:
 *
 *   tm_add_del   a tag added with its buffer and removed, each rung, no
 *                completion asked (per list operation): rf_tm_post_add()
 *                and rf_tm_post_del(); ibv_post_srq_ops() once for each,
 *                the removal naming the handle the add returned
 *   tm_poll_msg  one matched eager message's completion decoded (app TM,
 *                CONSUMED_MSG): wr_id, status, opcode, flags, tag and
 *                length, as an MPI library reads them: rf_tm_poll();
 *                ibv_start_poll(), ibv_wc_read_*() and ibv_tm_info
 *
 * As for the other rows the harness plays the device: it writes the CQEs
 * (the device model is off), and between the measured chunks it retires
 * the command queue with a signaled sync whose completion it writes and
 * polls, unmeasured. Each implementation has its own context, so that
 * its TM SRQ is libmlx5's first user index (0), which the CQEs name.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include <infiniband/tm_types.h>

#include "bench.h"

enum {
	TM_NTAGS = 64,		/* the list: a chunk of messages' entries */
	TM_OPS = 256,		/* list operations in flight: the command queue */
	TM_CHUNK = 64,		/* operations or CQEs a measured chunk covers */
	TM_CQ_DEPTH = 256,
};

enum tm_op { TM_ADD_DEL, TM_POLL_MSG, TM_OP_COUNT };
static const char *const tm_op_name[TM_OP_COUNT] = { "tm_add_del", "tm_poll_msg" };
/*
 * rdmafast's instructions per operation, held where they were when the
 * rows came (gcc 12, x86-64: 101.1 and 213.3; libmlx5 223.9 and 310.4)
 * and lowered with them (97.6 and 185.4, round 7), so that nothing
 * regresses; clang gets 10% more, as for the other rows.
 */
static const double tm_instr_cap[TM_OP_COUNT] = { 98, 186 };

struct bench_tm {
	enum bench_impl impl;		/* IMPL_RDMAFAST or IMPL_LIBMLX5 */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq_ex *cqx;		/* libmlx5's */
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct mlx5dv_cq dvcq;		/* the ring the harness writes */
	uint32_t cq_pi;
	/* rdmafast's objects */
	struct rf_cq rfcq;
	struct rf_srq rfsrq;
	struct rf_tm tm;
	/* the operations, built once */
	struct ibv_ops_wr add, del, sync;
	struct ibv_sge sge;
	uint32_t handle[TM_CHUNK];	/* the entries of the messages to come */
	uint64_t sink;			/* what the polls read, kept */
	unsigned bad;
};

static void tm_close(struct bench_tm *t)
{
	if (t->impl == IMPL_RDMAFAST && t->srq) {
		rf_cq_detach(&t->rfcq, t->tm.sq.qpn);
		rf_tm_fini_ibv(&t->tm);
		rf_srq_fini_ibv(&t->rfsrq);
	}
	if (t->srq)
		ibv_destroy_srq(t->srq);
	if (t->cq)
		ibv_destroy_cq(t->cq);
	bench_mem_close(t->ctx, t->pd, t->buf, t->mr);
	memset(t, 0, sizeof(*t));
}

static int tm_open(struct bench_tm *t, enum bench_impl impl, const char *dev)
{
	struct ibv_srq_init_attr_ex sa;
	struct mlx5dv_obj obj;
	int ret;

	memset(t, 0, sizeof(*t));
	t->impl = impl;
	t->ctx = bench_open_dev(dev);
	if (!t->ctx)
		return -ENODEV;
	ret = bench_mem_open(t->ctx, &t->pd, &t->buf, &t->mr);
	if (ret)
		return ret;
	if (impl == IMPL_RDMAFAST) {
		ret = rf_tm_cq_create_ibv(&t->rfcq, &t->cq, t->ctx, TM_CQ_DEPTH, NULL);
		if (!ret)
			ret = rf_tm_srq_create_ibv(&t->tm, &t->rfsrq, &t->srq, t->pd, t->cq, 64,
						   TM_NTAGS, TM_OPS);
		if (!ret)
			ret = rf_cq_attach(&t->rfcq, t->tm.sq.qpn, &t->tm.sq, NULL, NULL);
		if (ret)
			return ret;
		rf_cq_set_srq(&t->rfcq, &t->rfsrq);
	} else {
		struct ibv_cq_init_attr_ex ca;

		memset(&ca, 0, sizeof(ca));
		ca.cqe = TM_CQ_DEPTH;
		ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO;
		t->cqx = ibv_create_cq_ex(t->ctx, &ca);
		if (!t->cqx)
			return -errno;
		t->cq = ibv_cq_ex_to_cq(t->cqx);
		memset(&sa, 0, sizeof(sa));
		sa.attr.max_wr = 64;
		sa.attr.max_sge = 1;
		sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
		sa.srq_type = IBV_SRQT_TM;
		sa.pd = t->pd;
		sa.cq = t->cq;
		sa.tm_cap.max_num_tags = TM_NTAGS;
		sa.tm_cap.max_ops = TM_OPS;
		t->srq = ibv_create_srq_ex(t->ctx, &sa);
		if (!t->srq)
			return -errno;
	}
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = t->cq;
	obj.cq.out = &t->dvcq;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ))
		return -EPROTONOSUPPORT;
	t->sge.addr = (uintptr_t)t->buf;
	t->sge.length = 4096;
	t->sge.lkey = t->mr->lkey;
	t->add.opcode = IBV_WR_TAG_ADD;
	t->add.tm.add.recv_wr_id = 7;
	t->add.tm.add.sg_list = &t->sge;
	t->add.tm.add.num_sge = 1;
	t->add.tm.add.tag = 0x1234;
	t->add.tm.add.mask = ~0ULL;
	t->del.opcode = IBV_WR_TAG_DEL;
	t->sync.opcode = IBV_WR_TAG_SYNC;
	t->sync.flags = IBV_OPS_SIGNALED;
	t->sync.wr_id = 99;
	return 0;
}

/*
 * The CQE the device writes for a list operation's completion (NO_PACKET,
 * app_op op, struct mlx5_tm_cqe: success) or a matched eager message
 * (RESP_SEND, CONSUMED_MSG, the entry in app_info, the TMH first), body
 * first and the owner byte last.
 */
static void tm_cqe(struct bench_tm *t, uint8_t op, uint16_t entry)
{
	uint32_t n = t->dvcq.cqe_cnt;
	uint8_t *slot = (uint8_t *)t->dvcq.buf + (size_t)(t->cq_pi & (n - 1)) * t->dvcq.cqe_size;
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(slot + t->dvcq.cqe_size - 64);
	uint8_t opcode = op == RF_CQE_TM_CONSUMED_MSG ? RF_CQE_RESP_SEND : RF_CQE_NO_PACKET;

	memset(cqe, 0, sizeof(*cqe) - 1);
	if (op == RF_CQE_TM_CONSUMED_MSG) {
		struct ibv_tmh h = { .opcode = IBV_TMH_EAGER, .app_ctx = htobe32(5),
				     .tag = htobe64(0x1234) };

		memcpy(cqe, &h, sizeof(h));
		cqe->byte_cnt = htobe32(256);
	} else {
		uint32_t ok = htobe32(RF_CQE_TM_OP_SUCCESS);

		memcpy(cqe, &ok, 4);
	}
	cqe->app = RF_CQE_APP_TM;
	cqe->app_op = op;
	cqe->app_info = htobe16(entry);
	cqe->srqn_uidx = htobe32(0);	/* the context's first user index: the SRQ */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cqe->op_own = (uint8_t)(opcode << 4 | ((t->cq_pi / n) & 1));
	t->cq_pi++;
}

/* One completion of the TM CQ, unmeasured: its wr_id, or -1 if none or failed. */
static int64_t tm_poll_one(struct bench_tm *t)
{
	if (t->impl == IMPL_RDMAFAST) {
		struct rf_tm_wc wc;

		if (!rf_tm_poll(&t->tm, &t->rfcq, &wc) || wc.wc.status != RF_WC_SUCCESS)
			return -1;
		return (int64_t)wc.wc.wr_id;
	} else {
		struct ibv_poll_cq_attr pa = { 0 };
		int64_t id;

		if (ibv_start_poll(t->cqx, &pa))
			return -1;
		id = t->cqx->status == IBV_WC_SUCCESS ? (int64_t)t->cqx->wr_id : -1;
		ibv_end_poll(t->cqx);
		return id;
	}
}

/* Retire the command queue: a signaled sync, its CQE written and polled. */
static void tm_retire(struct bench_tm *t)
{
	struct ibv_ops_wr *bad;

	if (t->impl == IMPL_RDMAFAST)
		t->bad += rf_tm_post_sync(&t->tm, RF_TM_SIGNALED | RF_TM_RING, 0, 99) != 0;
	else
		t->bad += ibv_post_srq_ops(t->srq, &t->sync, &bad) != 0;
	tm_cqe(t, RF_CQE_TM_NOOP, 0);
	t->bad += tm_poll_one(t) != 99;
}

/* ---- the measured loops ---------------------------------------------------- */

static __attribute__((noinline)) void rf_tm_add_del(struct bench_tm *t, unsigned calls)
{
	struct rf_tm *tm = &t->tm;
	struct rf_sge sge = { t->sge.addr, t->sge.length, t->sge.lkey };

	while (calls--) {
		int h = rf_tm_post_add(tm, 0x1234, ~0ULL, &sge, 7, RF_TM_RING, 0, 0);

		rf_tm_post_del(tm, (uint32_t)h, RF_TM_RING, 0, 0);
	}
}

static __attribute__((noinline)) void ib_tm_add_del(struct bench_tm *t, unsigned calls)
{
	struct ibv_ops_wr *bad;

	while (calls--) {
		ibv_post_srq_ops(t->srq, &t->add, &bad);
		t->del.tm.handle = t->add.tm.handle;
		ibv_post_srq_ops(t->srq, &t->del, &bad);
	}
}

static __attribute__((noinline)) void rf_tm_poll_msg(struct bench_tm *t, unsigned calls)
{
	struct rf_tm_wc wc;
	uint64_t s = 0;

	while (calls--)
		if (rf_tm_poll(&t->tm, &t->rfcq, &wc))
			s += wc.wc.wr_id + wc.wc.status + wc.wc.opcode + wc.tm_flags + wc.tag +
			     wc.wc.byte_len;
	t->sink += s;
}

static __attribute__((noinline)) void ib_tm_poll_msg(struct bench_tm *t, unsigned calls)
{
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *cq = t->cqx;
	uint64_t s = 0;

	while (calls--)
		if (ibv_start_poll(cq, &pa) == 0) {
			struct ibv_wc_tm_info ti;

			ibv_wc_read_tm_info(cq, &ti);
			s += cq->wr_id + cq->status + ibv_wc_read_opcode(cq) +
			     ibv_wc_read_wc_flags(cq) + ti.tag + ibv_wc_read_byte_len(cq);
			ibv_end_poll(cq);
		}
	t->sink += s;
}

typedef void (*tm_fn)(struct bench_tm *t, unsigned calls);

static tm_fn tm_fn_of(enum bench_impl impl, enum tm_op op)
{
	if (op == TM_ADD_DEL)
		return impl == IMPL_RDMAFAST ? rf_tm_add_del : ib_tm_add_del;
	return impl == IMPL_RDMAFAST ? rf_tm_poll_msg : ib_tm_poll_msg;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* TM_CHUNK entries added, unsignaled, and the queue retired: messages may come. */
static void tm_add_entries(struct bench_tm *t)
{
	struct rf_sge sge = { t->sge.addr, t->sge.length, t->sge.lkey };
	struct ibv_ops_wr *bad;

	for (unsigned i = 0; i < TM_CHUNK; i++) {
		if (t->impl == IMPL_RDMAFAST) {
			int h = rf_tm_post_add(&t->tm, 0x1234, ~0ULL, &sge, 7, 0, 0, 0);

			t->bad += h < 0;
			t->handle[i] = (uint32_t)h;
		} else {
			t->bad += ibv_post_srq_ops(t->srq, &t->add, &bad) != 0;
			t->handle[i] = t->add.tm.handle;
		}
	}
	tm_retire(t);
}

/*
 * chunks chunks of op, each TM_CHUNK operations; the nanoseconds in the
 * measured calls. With collect, callgrind counts only those.
 */
static uint64_t tm_run(struct bench_tm *t, enum tm_op op, unsigned chunks, int collect)
{
	tm_fn fn = tm_fn_of(t->impl, op);
	uint64_t total = 0, t0;

	for (unsigned c = 0; c < chunks; c++) {
		unsigned calls = op == TM_ADD_DEL ? TM_CHUNK / 2 : TM_CHUNK;

		if (op == TM_POLL_MSG) {
			tm_add_entries(t);
			for (unsigned i = 0; i < TM_CHUNK; i++)
				tm_cqe(t, RF_CQE_TM_CONSUMED_MSG, (uint16_t)t->handle[i]);
		}
		t0 = now_ns();
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		fn(t, calls);
		if (collect)
			CALLGRIND_TOGGLE_COLLECT;
		total += now_ns() - t0;
		if (op == TM_ADD_DEL)
			tm_retire(t);
		else if (tm_poll_one(t) != -1)
			t->bad++;	/* a CQE left: a poll failed */
	}
	if (t->bad) {
		fprintf(stderr, "rfbench: %s: %s: a post failed or a completion was wrong\n",
			tm_op_name[op], bench_impl_name[t->impl]);
		exit(2);
	}
	return total;
}

static const enum bench_impl tm_impls[] = { IMPL_RDMAFAST, IMPL_LIBMLX5 };
#define TM_NIMPL (sizeof(tm_impls) / sizeof(tm_impls[0]))

void bench_tm_instr(const char *dev)
{
	struct bench_tm t;
	char name[128];

	for (unsigned i = 0; i < TM_NIMPL; i++) {
		if (tm_open(&t, tm_impls[i], dev)) {
			fprintf(stderr, "rfbench: %s: no TM SRQ, its tm rows left out\n",
				bench_impl_name[tm_impls[i]]);
			tm_close(&t);
			continue;
		}
		for (unsigned op = 0; op < TM_OP_COUNT; op++) {
			CALLGRIND_ZERO_STATS;
			tm_run(&t, (enum tm_op)op, 16, 1);
			snprintf(name, sizeof(name), "%s/%s", tm_op_name[op],
				 bench_impl_name[tm_impls[i]]);
			CALLGRIND_DUMP_STATS_AT(name);
		}
		tm_close(&t);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_tm_report(const char *dev, unsigned reps, const char *cg, double empty_ns,
		    double empty_ir, int *instr_met)
{
	static const char *const ir[] = { "Ir", NULL };
	struct bench_result res[TM_OP_COUNT][TM_NIMPL];
	double samples[64];
	struct bench_tm t;
	int all = 1;

	for (unsigned i = 0; i < TM_NIMPL; i++) {
		int ok = !tm_open(&t, tm_impls[i], dev);

		for (unsigned op = 0; op < TM_OP_COUNT; op++) {
			struct bench_result *o = &res[op][i];
			/* calls of the loop per operation: add_del does two a call */
			double calls = op == TM_ADD_DEL ? 0.5 : 1.0;
			char name[128];
			unsigned r;

			o->ns_per_op = o->ns_min = o->ns_max = o->instr_per_op = -1;
			if (!ok)
				continue;
			for (r = 0; r < reps && r < 64; r++)
				samples[r] = (double)tm_run(&t, (enum tm_op)op, 64, 0) /
					     (64.0 * TM_CHUNK) - empty_ns * calls;
			qsort(samples, r, sizeof(double), cmp_double);
			o->ns_per_op = samples[r / 2];
			o->ns_min = samples[0];
			o->ns_max = samples[r - 1];
			snprintf(name, sizeof(name), "%s/%s", tm_op_name[op],
				 bench_impl_name[tm_impls[i]]);
			if (cg && empty_ir >= 0) {
				double v = bench_cg_events(cg, name, ir);

				if (v >= 0)
					o->instr_per_op = v / (16.0 * TM_CHUNK) - empty_ir * calls;
			}
		}
		tm_close(&t);
	}
	printf("\n%-20s %-11s %9s %9s %17s %9s %9s\n", "tag matching", "impl", "instr/op",
	       "ns/op", "ns min..max", "instr ×", "ns ×");
	for (unsigned op = 0; op < TM_OP_COUNT; op++) {
		const struct bench_result *base = &res[op][1];

		for (unsigned i = 0; i < TM_NIMPL; i++) {
			const struct bench_result *o = &res[op][i];
			char in[32] = "-", ix[32] = "-", nx[32] = "-", range[40];

			if (o->ns_per_op < 0)
				continue;
			if (o->instr_per_op >= 0)
				snprintf(in, sizeof(in), "%.1f", o->instr_per_op);
			if (o->instr_per_op > 0 && base->instr_per_op > 0)
				snprintf(ix, sizeof(ix), "%.2f", o->instr_per_op / base->instr_per_op);
			if (base->ns_per_op > 0)
				snprintf(nx, sizeof(nx), "%.2f", o->ns_per_op / base->ns_per_op);
			snprintf(range, sizeof(range), "%.1f..%.1f", o->ns_min, o->ns_max);
			printf("%-20s %-11s %9s %9.1f %17s %9s %9s\n", i ? "" : tm_op_name[op],
			       bench_impl_name[tm_impls[i]], in, o->ns_per_op, range, ix, nx);
		}
	}
	printf("(per list operation, rung, no completion: rf_tm_post_add/_del, ibv_post_srq_ops;\n"
	       " per matched message's completion: rf_tm_poll, ibv_start_poll with ibv_wc_read_*)\n");
	printf("goals (x86-64, tag matching):\n");
	for (unsigned op = 0; op < TM_OP_COUNT; op++) {
		const struct bench_result *rf = &res[op][0], *ib = &res[op][1];
		char what[96];
		int met;

		if (rf->instr_per_op >= 0) {
#if defined(__clang__)
			double cap = tm_instr_cap[op] * 1.1;	/* as bench_report_goals() */
#else
			double cap = tm_instr_cap[op];
#endif
			met = rf->instr_per_op <= cap;
			snprintf(what, sizeof(what), "%s: instructions per op", tm_op_name[op]);
			printf("  %-58s %8.2f <= %8.2f  %s\n", what, rf->instr_per_op, cap,
			       met ? "met" : "MISSED");
			*instr_met &= met;
			all &= met;
		}
		if (rf->ns_per_op >= 0 && ib->ns_per_op > 0) {
			met = rf->ns_per_op <= ib->ns_per_op / 4;
			snprintf(what, sizeof(what), "%s: ns, 1/4 of libmlx5", tm_op_name[op]);
			printf("  %-58s %8.2f <= %8.2f  %s\n", what, rf->ns_per_op,
			       ib->ns_per_op / 4, met ? "met" : "MISSED");
			all &= met;
		}
	}
	return all;
}
