/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/ops.c - the measured operations, one function per implementation
 * and operation, each what an application would write in its loop.
 *
 * Each function runs `calls` operations in a loop, as an application's
 * loop would: it is noinline and called through a pointer once per chunk,
 * the same way for every implementation, and bench_empty_op() (the same
 * loop with nothing in it) measures that harness cost so it can be
 * subtracted. rdmafast's inline posts and polls thus cost what they cost
 * inside a caller's loop, with their arguments in registers; libmlx5 pays
 * its real call per operation. libmlx5 gets its best case: the work
 * requests are built once (bench_prepare_wrs()), as a tuned application
 * would keep them, so the measured call is ibv_post_send() itself.
 */
#include <string.h>

#include "bench.h"

#define NOINLINE __attribute__((noinline))

/* ---- rdmafast ------------------------------------------------------------ */

static NOINLINE void rf_write_sge64(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	uint32_t lkey = b->mr->lkey, rkey = b->rkey;
	uint64_t laddr = (uintptr_t)b->buf, raddr = b->raddr;

	while (calls--) {
		rf_sq_post_write(sq, lkey, laddr, 64, rkey, raddr,
				 RF_SEND_SIGNALED | RF_SEND_RING, 1);
	}
}

static NOINLINE void rf_write_inline8(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	uint32_t rkey = b->rkey;
	uint64_t raddr = b->raddr;
	const uint8_t *data = b->buf;

	while (calls--) {
		rf_sq_post_write_inline(sq, data, 8, rkey, raddr,
					RF_SEND_SIGNALED | RF_SEND_RING, 2);
	}
}

static NOINLINE void rf_send_inline32(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	const uint8_t *data = b->buf;

	while (calls--) {
		rf_sq_post_send_inline(sq, data, 32, RF_SEND_SIGNALED | RF_SEND_RING, 3);
	}
}

static NOINLINE void rf_batch16_write(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	uint32_t lkey = b->mr->lkey, rkey = b->rkey;
	uint64_t laddr = (uintptr_t)b->buf, raddr = b->raddr;
	int i;

	while (calls--) {
		for (i = 0; i < 15; i++)
			rf_sq_post_write(sq, lkey, laddr, 64, rkey, raddr, 0, 4);
		rf_sq_post_write(sq, lkey, laddr, 64, rkey, raddr, RF_SEND_SIGNALED, 4);
		rf_sq_ring(sq);
	}
}

static NOINLINE void rf_poll1(struct bench_qp *b, unsigned calls)
{
	struct rf_cq *cq = &b->rfcq;

	while (calls--)
		rf_cq_poll(cq, b->rwc, 1);	/* also publishes the consumer index */
}

static NOINLINE void rf_poll16(struct bench_qp *b, unsigned calls)
{
	struct rf_cq *cq = &b->rfcq;

	while (calls--)
		rf_cq_poll(cq, b->rwc, 16);
}

/* The same write from a DCI to a DC target: the 48-byte address vector. */
static NOINLINE void rf_dc_write_sge64(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	const struct rf_dc_dest *d = &b->dest;
	uint32_t lkey = b->mr->lkey, rkey = b->rkey;
	uint64_t laddr = (uintptr_t)b->buf, raddr = b->raddr;

	while (calls--) {
		rf_sq_post_dc_write(sq, d, lkey, laddr, 64, rkey, raddr,
				    RF_SEND_SIGNALED | RF_SEND_RING, 5);
	}
}

/* An indirect key laid over 4 regions (4 KLMs), access set: one UMR WQE. */
static NOINLINE void rf_umr_klm4(struct bench_qp *b, unsigned calls)
{
	struct rf_sq *sq = &b->rfqp.sq;
	uint32_t mkey = b->mkey->lkey;
	const struct rf_sge *klm = b->rklm;

	while (calls--) {
		rf_sq_post_mr_list(sq, mkey, RF_MKEY_ACCESS_LOCAL_WRITE |
				   RF_MKEY_ACCESS_REMOTE_READ | RF_MKEY_ACCESS_REMOTE_WRITE,
				   klm, 4, RF_SEND_SIGNALED | RF_SEND_RING, 6);
	}
}

/* ---- libmlx5, classic verbs (also with MLX5_SINGLE_THREADED=1) ----------- */

static inline void ib_post(struct bench_qp *b, enum bench_op op, unsigned calls)
{
	struct ibv_qp *qp = b->qp;
	struct ibv_send_wr *wr = &b->wr[op][0], *bad;

	while (calls--)
		ibv_post_send(qp, wr, &bad);
}

static NOINLINE void ib_write_sge64(struct bench_qp *b, unsigned calls)
{
	ib_post(b, OP_POST_WRITE_SGE64, calls);
}

static NOINLINE void ib_write_inline8(struct bench_qp *b, unsigned calls)
{
	ib_post(b, OP_POST_WRITE_INLINE8, calls);
}

static NOINLINE void ib_send_inline32(struct bench_qp *b, unsigned calls)
{
	ib_post(b, OP_POST_SEND_INLINE32, calls);
}

static NOINLINE void ib_batch16_write(struct bench_qp *b, unsigned calls)
{
	ib_post(b, OP_POST_BATCH16_WRITE, calls);
}

static NOINLINE void ib_poll1(struct bench_qp *b, unsigned calls)
{
	struct ibv_cq *cq = b->cq;

	while (calls--)
		ibv_poll_cq(cq, 1, b->wc);
}

static NOINLINE void ib_poll16(struct bench_qp *b, unsigned calls)
{
	struct ibv_cq *cq = b->cq;

	while (calls--)
		ibv_poll_cq(cq, 16, b->wc);
}

/* ---- libmlx5, extended API: ibv_wr_* and ibv_cq_ex ---------------------- */

static NOINLINE void wr_write_sge64(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;

	while (calls--) {
		ibv_wr_start(q);
		q->wr_id = 1;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, b->rkey, b->raddr);
		ibv_wr_set_sge(q, b->mr->lkey, (uintptr_t)b->buf, 64);
		ibv_wr_complete(q);
	}
}

static NOINLINE void wr_write_inline8(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;

	while (calls--) {
		ibv_wr_start(q);
		q->wr_id = 2;
		q->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		ibv_wr_rdma_write(q, b->rkey, b->raddr);
		ibv_wr_set_inline_data(q, b->buf, 8);
		ibv_wr_complete(q);
	}
}

static NOINLINE void wr_send_inline32(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;

	while (calls--) {
		ibv_wr_start(q);
		q->wr_id = 3;
		q->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		ibv_wr_send(q);
		ibv_wr_set_inline_data(q, b->buf, 32);
		ibv_wr_complete(q);
	}
}

static NOINLINE void wr_batch16_write(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;
	int i;

	while (calls--) {
		ibv_wr_start(q);
		for (i = 0; i < 16; i++) {
			q->wr_id = 4;
			q->wr_flags = i == 15 ? IBV_SEND_SIGNALED : 0;
			ibv_wr_rdma_write(q, b->rkey, b->raddr);
			ibv_wr_set_sge(q, b->mr->lkey, (uintptr_t)b->buf, 64);
		}
		ibv_wr_complete(q);
	}
}

/* A DCI takes work requests only this way: every libmlx5 column runs it. */
static NOINLINE void wr_dc_write_sge64(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;

	while (calls--) {
		ibv_wr_start(q);
		q->wr_id = 5;
		q->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(q, b->rkey, b->raddr);
		mlx5dv_wr_set_dc_addr(b->dvqpx, b->ah, b->dctn, b->dc_key);
		ibv_wr_set_sge(q, b->mr->lkey, (uintptr_t)b->buf, 64);
		ibv_wr_complete(q);
	}
}

/* Memory-key UMRs go only this way too (mlx5dv_wr_*()): every libmlx5 column. */
static NOINLINE void wr_umr_klm4(struct bench_qp *b, unsigned calls)
{
	struct ibv_qp_ex *q = b->qpx;

	while (calls--) {
		ibv_wr_start(q);
		q->wr_id = 6;
		q->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		mlx5dv_wr_mr_list(b->dvqpx, b->mkey, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 4, b->klm);
		ibv_wr_complete(q);
	}
}

/* The completion record the other pollers fill: read the same fields. */
static inline void wr_read(struct bench_qp *b, struct ibv_wc *wc)
{
	struct ibv_cq_ex *cq = b->cqx;

	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	wc->qp_num = ibv_wc_read_qp_num(cq);
}

static NOINLINE void wr_poll1(struct bench_qp *b, unsigned calls)
{
	struct ibv_poll_cq_attr attr = { 0 };

	while (calls--)
		if (ibv_start_poll(b->cqx, &attr) == 0) {
			wr_read(b, b->wc);
			ibv_end_poll(b->cqx);
		}
}

static NOINLINE void wr_poll16(struct bench_qp *b, unsigned calls)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int i;

	while (calls--)
		if (ibv_start_poll(b->cqx, &attr) == 0) {
			i = 0;
			do
				wr_read(b, &b->wc[i]);
			while (++i < 16 && ibv_next_poll(b->cqx) == 0);
			ibv_end_poll(b->cqx);
		}
}

NOINLINE void bench_empty_op(struct bench_qp *b, unsigned calls)
{
	while (calls--)
		__asm__ __volatile__("" : : "r"(b) : "memory");
}

static const bench_fn table[IMPL_COUNT][OP_COUNT] = {
	[IMPL_RDMAFAST] = { rf_write_sge64, rf_write_inline8, rf_send_inline32,
			    rf_batch16_write, rf_poll1, rf_poll16, rf_dc_write_sge64,
			    rf_poll16, rf_umr_klm4 },
	[IMPL_LIBMLX5] = { ib_write_sge64, ib_write_inline8, ib_send_inline32,
			   ib_batch16_write, ib_poll1, ib_poll16, wr_dc_write_sge64,
			   NULL, wr_umr_klm4 },
	[IMPL_LIBMLX5_ST] = { ib_write_sge64, ib_write_inline8, ib_send_inline32,
			      ib_batch16_write, ib_poll1, ib_poll16, wr_dc_write_sge64,
			      NULL, wr_umr_klm4 },
	[IMPL_LIBMLX5_WR] = { wr_write_sge64, wr_write_inline8, wr_send_inline32,
			      wr_batch16_write, wr_poll1, wr_poll16, wr_dc_write_sge64,
			      NULL, wr_umr_klm4 },
};

bench_fn bench_op_fn(enum bench_impl impl, enum bench_op op)
{
	return impl == IMPL_UCX ? bench_ucx_op_fn(op) : table[impl][op];
}

void bench_prepare_wrs(struct bench_qp *b)
{
	static const struct {
		enum ibv_wr_opcode opcode;
		unsigned len, flags;
	} shape[] = {
		[OP_POST_WRITE_SGE64] = { IBV_WR_RDMA_WRITE, 64, IBV_SEND_SIGNALED },
		[OP_POST_WRITE_INLINE8] = { IBV_WR_RDMA_WRITE, 8,
					    IBV_SEND_SIGNALED | IBV_SEND_INLINE },
		[OP_POST_SEND_INLINE32] = { IBV_WR_SEND, 32,
					    IBV_SEND_SIGNALED | IBV_SEND_INLINE },
		[OP_POST_BATCH16_WRITE] = { IBV_WR_RDMA_WRITE, 64, 0 },
	};
	unsigned op, i;

	memset(b->wr, 0, sizeof(b->wr));
	for (op = 0; op <= OP_POST_BATCH16_WRITE; op++) {
		unsigned n = bench_op_width((enum bench_op)op);

		for (i = 0; i < n; i++) {
			struct ibv_send_wr *wr = &b->wr[op][i];

			b->sge[op][i].addr = (uintptr_t)b->buf;
			b->sge[op][i].length = shape[op].len;
			b->sge[op][i].lkey = b->mr->lkey;
			wr->wr_id = op + 1;
			wr->sg_list = &b->sge[op][i];
			wr->num_sge = 1;
			wr->opcode = shape[op].opcode;
			wr->send_flags = shape[op].flags;
			wr->wr.rdma.remote_addr = b->raddr;
			wr->wr.rdma.rkey = b->rkey;
			wr->next = i + 1 < n ? &b->wr[op][i + 1] : NULL;
		}
		if (n > 1)
			b->wr[op][n - 1].send_flags |= IBV_SEND_SIGNALED;
	}
}
