/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/bench.h - rfbench: rdmafast against libmlx5 on the same QP types,
 * sizes and machine, in the same run.
 *
 * Each implementation gets its own device context, CQ and RC QP. The
 * device model stays idle (RFEMU_DEVICE=off): the harness plays the
 * device's part itself, the same way for every implementation, and that
 * part is never measured. Posts fill the send queue; between measured
 * chunks the harness writes the requester CQEs the HCA would write
 * (cqe.c) and lets the implementation poll them, which frees the queue.
 * Polls are measured on CQEs the harness wrote beforehand.
 */
#ifndef RFBENCH_BENCH_H
#define RFBENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <rdmafast/verbs.h>

/* Operations measured, in report order. */
enum bench_op {
	OP_POST_WRITE_SGE64,	/* RDMA write, one 64-byte SGE, signaled, rung */
	OP_POST_WRITE_INLINE8,	/* RDMA write, 8 bytes inline, signaled, rung */
	OP_POST_SEND_INLINE32,	/* send, 32 bytes inline, signaled, rung */
	OP_POST_BATCH16_WRITE,	/* 16 one-SGE writes, last signaled, one ring */
	OP_POLL_1,		/* one ready CQE into a completion record */
	OP_POLL_16,		/* a batch of 16 ready CQEs */
	OP_POST_DC_WRITE_SGE64,	/* DCI: RDMA write to a DCT, one 64-byte SGE, signaled, rung */
	OP_POLL_16_ZIP,		/* the same as one zip of compressed CQEs (rdmafast only) */
	OP_POST_UMR_KLM4,	/* UMR: an indirect key over 4 regions, access set, signaled, rung */
	OP_COUNT
};

/* Implementations, in report order. */
enum bench_impl {
	IMPL_RDMAFAST,
	IMPL_LIBMLX5,		/* ibv_post_send / ibv_poll_cq, default locking */
	IMPL_LIBMLX5_ST,	/* the same with MLX5_SINGLE_THREADED=1 */
	IMPL_LIBMLX5_WR,	/* ibv_wr_* on ibv_qp_ex, ibv_cq_ex polling */
	IMPL_UCX,		/* UCX's UCT rc_mlx5 transport (ucx.c) */
	IMPL_COUNT
};

extern const char *const bench_op_name[OP_COUNT];
extern const char *const bench_impl_name[IMPL_COUNT];

/*
 * The DC operations run on a DCI of their own (bench_dci_open()): libmlx5
 * posts to a DCI only through ibv_wr_* with mlx5dv_wr_set_dc_addr(), so
 * its three columns all measure that, on contexts opened as for the
 * other rows (default locking, MLX5_SINGLE_THREADED, ibv_cq_ex).
 */
static inline int bench_op_is_dc(enum bench_op op)
{
	return op == OP_POST_DC_WRITE_SGE64;
}

/*
 * The UMR operation runs on a QP of mlx5dv_create_qp() with the UMR send
 * ops and a key of mlx5dv_create_mkey() (bench_umr_open()): libmlx5 posts
 * memory-key UMRs only through mlx5dv_wr_mr_list() and its kin, so its
 * three columns all measure that.
 */
static inline int bench_op_is_umr(enum bench_op op)
{
	return op == OP_POST_UMR_KLM4;
}

/* WQEs (or CQEs) one call of an operation covers. */
static inline unsigned bench_op_width(enum bench_op op)
{
	return op == OP_POST_BATCH16_WRITE || op == OP_POLL_16 || op == OP_POLL_16_ZIP ? 16 : 1;
}

enum {
	BENCH_SQ_WRS   = 128,	/* send queue depth in work requests */
	BENCH_CHUNK    = 64,	/* WQEs or CQEs per measured chunk (fits the SQ) */
	BENCH_CQ_DEPTH = 1024,
	BENCH_BUF      = 1 << 16,
};

/* One implementation's resources and the state the harness keeps for it. */
struct bench_qp {
	enum bench_impl impl;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;			/* BENCH_BUF bytes, registered */
	struct ibv_cq *cq;		/* ibv_cq_ex_to_cq(cqx) for IMPL_LIBMLX5_WR */
	struct ibv_cq_ex *cqx;		/* IMPL_LIBMLX5_WR only */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;		/* IMPL_LIBMLX5_WR only */
	struct mlx5dv_qp dvqp;		/* the queues, for the harness */
	struct mlx5dv_cq dvcq;
	uint32_t uidx;			/* libmlx5's user index of the QP */
	uint32_t wqe_bbs;		/* BBs per WQE: 1 on the RC QP, 2 on the DCI, 3 or
					   4 (rdmafast: the UMR and its fence NOP) on the UMR QP */

	/* the harness's view of the device */
	uint32_t sq_done;		/* WQEs completed (each wqe_bbs BBs) */
	uint32_t sq_posted;		/* WQEs posted */
	uint32_t cq_pi;			/* CQEs written */
	uint32_t cq_ci;			/* CQEs polled */
	uint32_t bb_next;		/* IMPL_UCX: the next WQE's first BB (sizes vary) */

	/* rdmafast's own queue objects (IMPL_RDMAFAST) */
	struct rf_qp rfqp;
	struct rf_cq rfcq;

	/* a DCI's target (bench_dci_open()): the path and the DCT */
	struct ibv_ah *ah;
	struct mlx5dv_qp_ex *dvqpx;	/* libmlx5's DCI */
	struct rf_dc_dest dest;		/* rdmafast's DCI */
	uint32_t dctn;
	uint64_t dc_key;

	/* the UMR QP's key (bench_umr_open()) and the 4 regions it maps */
	struct mlx5dv_mkey *mkey;
	struct ibv_sge klm[4];
	struct rf_sge rklm[4];

	/* payloads and completion records */
	uint64_t raddr;
	uint32_t rkey;
	struct ibv_sge sge[OP_POLL_1][16];
	struct ibv_send_wr wr[OP_POLL_1][16];	/* prebuilt, per post op */
	struct ibv_wc wc[16];
	struct rf_wc rwc[16];

	struct bench_ucx *ucx;		/* IMPL_UCX: UCT's objects (ucx.c) */
};

/* The device named dev (NULL: the first), opened; NULL on failure. */
struct ibv_context *bench_open_dev(const char *dev);
/* A PD and BENCH_BUF bytes registered in it for local and remote access. */
int bench_mem_open(struct ibv_context *ctx, struct ibv_pd **pd, uint8_t **buf,
		   struct ibv_mr **mr);
/* The same closed, with the context; NULLs are skipped. */
void bench_mem_close(struct ibv_context *ctx, struct ibv_pd *pd, uint8_t *buf,
		     struct ibv_mr *mr);
/* The path to port 1 of ctx itself (a GRH on RoCE); 0 or -1. */
int bench_ah_attr(struct ibv_context *ctx, struct ibv_ah_attr *aa);
/* A CQ of depth entries, polled as impl polls: *cqx for IMPL_LIBMLX5_WR. */
struct ibv_cq *bench_cq_create(struct ibv_context *ctx, enum bench_impl impl, int depth,
			       struct ibv_cq_ex **cqx);
/* The RC QP of every row: the opcodes posted, one SGE, 64 B inline, on cq. */
void bench_rc_attr(struct ibv_qp_init_attr_ex *qa, struct ibv_pd *pd, struct ibv_cq *cq,
		   uint32_t max_send_wr);
int bench_qp_open(struct bench_qp *b, enum bench_impl impl, const char *dev);
/* The same with a DCI instead of the RC QP, for the DC operations. */
int bench_dci_open(struct bench_qp *b, enum bench_impl impl, const char *dev);
/* The same with an RC QP that posts memory-key UMRs, and its key. */
int bench_umr_open(struct bench_qp *b, enum bench_impl impl, const char *dev);
void bench_qp_close(struct bench_qp *b);

/*
 * The device's part (cqe.c): complete every posted WQE up to sq_posted
 * with requester CQEs (one per signaled WQE, as the HCA would), then let
 * the implementation poll them so its queue has room again.
 */
void bench_complete_posted(struct bench_qp *b, unsigned per_cqe);
/* Write n requester CQEs, one per WQE, for WQEs posted and not completed. */
void bench_write_cqes(struct bench_qp *b, unsigned n, unsigned per_cqe);
/* n requester completions (n a multiple of 16) as zips of 16 mini-CQEs. */
void bench_write_zip_cqes(struct bench_qp *b, unsigned n);
/* Poll everything written (unmeasured) with the implementation's poller. */
void bench_drain(struct bench_qp *b);
/*
 * One requester CQE in the CQ cq (*pi: CQEs written) for the WQE that
 * starts in BB idx of the send queue q, of QP qpn (libmlx5's user index
 * uidx), after checking that the WQE is there.
 */
void bench_req_cqe(enum bench_impl impl, const struct mlx5dv_cq *cq, uint32_t *pi,
		   const struct mlx5dv_qp *q, uint32_t qpn, uint32_t uidx, uint32_t idx);

/*
 * UCX's rc_mlx5 (ucx.c): an RC endpoint connected to itself, its send queue
 * and send CQ found for the harness. Fails (the report shows "-") without
 * UCX or its rc_mlx5 transport on the device.
 */
int bench_ucx_open(struct bench_qp *b, const char *dev);
void bench_ucx_close(struct bench_qp *b);
void bench_ucx_progress(struct bench_qp *b);	/* one unmeasured progress call */
unsigned bench_ucx_polled(struct bench_qp *b);	/* completions since the last call */
const char *bench_ucx_build(void);

/*
 * The measured operations (ops.c): fn(b, calls) runs `calls` operations in
 * a loop; one operation covers bench_op_width(op) items.
 */
typedef void (*bench_fn)(struct bench_qp *b, unsigned calls);
bench_fn bench_op_fn(enum bench_impl impl, enum bench_op op);
bench_fn bench_ucx_op_fn(enum bench_op op);	/* NULL where UCT has no such call */
void bench_empty_op(struct bench_qp *b, unsigned calls);	/* the harness's own cost */
void bench_prepare_wrs(struct bench_qp *b);

/* Results */
struct bench_result {
	double instr_per_op;	/* < 0: not measured */
	double ns_per_op, ns_min, ns_max;
};

void bench_report_table(struct bench_result r[OP_COUNT][IMPL_COUNT]);
/*
 * Prints each goal with its value; returns 1 when all are met, and sets
 * *instr_met to 1 when the instruction limits are (deterministic, unlike
 * the times on a shared host).
 */
int bench_report_goals(struct bench_result r[OP_COUNT][IMPL_COUNT], int *instr_met);
int bench_report_json(const char *path, struct bench_result r[OP_COUNT][IMPL_COUNT]);
int bench_report_svg(const char *path, struct bench_result r[OP_COUNT][IMPL_COUNT]);

/*
 * Where real programs live (fleet.c): posts round-robin over many QPs,
 * their CQs polled, a DCI posting to many targets, two threads, with
 * the caches made cold between rounds. bench_fleet_instr() runs the rows
 * once under callgrind, bench_fleet_report() times them and prints their
 * table and goals, with the counts of the dumps at cg when given. dci:
 * main's DCIs (bench_dci_open()), avail: which implementations opened.
 */
/*
 * rfbench.c: callgrind's totals dumped (PREFIX.1, PREFIX.2, ...) under
 * name, the events named in want (NULL-ended: "Ir", "D1mr", ...) summed;
 * -1 when no dump has the name or the events.
 */
double bench_cg_events(const char *prefix, const char *name, const char *const *want);
extern size_t bench_fleet_evict;	/* bytes written between rounds; 0: twice the L2 */
void bench_fleet_instr(struct bench_qp dci[IMPL_COUNT], const int avail[IMPL_COUNT],
		       const char *dev);
int bench_fleet_report(struct bench_qp dci[IMPL_COUNT], const int avail[IMPL_COUNT],
		       const char *dev, unsigned reps, const char *cg);

/*
 * Hardware tag matching (tm.c): a tag added and removed, and a matched
 * message's completion decoded, rdmafast against libmlx5, each on a TM
 * SRQ of a context of its own. bench_tm_instr() runs them once under
 * callgrind; bench_tm_report() times them, prints their table and goals
 * (the counts read from the dumps at cg, less empty_ir a call; the time
 * less empty_ns a call) and clears *instr_met when an instruction limit
 * is missed. Returns 1 when every goal is met.
 */
void bench_tm_instr(const char *dev);
int bench_tm_report(const char *dev, unsigned reps, const char *cg, double empty_ns,
		    double empty_ir, int *instr_met);

#endif /* RFBENCH_BENCH_H */
