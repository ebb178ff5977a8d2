/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/unit/rftest.h - helpers shared by the unit tests.
 */
#ifndef RDMAFAST_TESTS_RFTEST_H
#define RDMAFAST_TESTS_RFTEST_H

#include <stdint.h>
#include <string.h>

/*
 * A small deterministic PRNG (xorshift64*), so randomized tests are
 * reproducible: a failure prints the seed, and the same seed replays it.
 */
struct rft_rng {
	uint64_t s;
};

static inline void rft_rng_seed(struct rft_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t rft_rand64(struct rft_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t rft_rand32(struct rft_rng *r)
{
	return (uint32_t)(rft_rand64(r) >> 32);
}

static inline void rft_fill(struct rft_rng *r, void *p, size_t n)
{
	uint8_t *b = (uint8_t *)p;

	while (n--)
		*b++ = (uint8_t)rft_rand64(r);
}

/* Index of the first differing byte, or -1 when equal. */
static inline long rft_first_diff(const void *a, const void *b, size_t n)
{
	const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

/*
 * ---- Queue fixtures (sq.h, rq.h, srq.h, cq.h) in plain host memory ------
 *
 * Everything the device would own is ordinary memory here: the queue
 * buffers, the doorbell records, and a fake UAR page (4 KiB, BlueFlame
 * registers at 0x800, the CQ doorbell at 0x20) whose bytes the tests read
 * back to see what a ring or an arm wrote.
 */
#include <stdlib.h>
#include <rdmafast/rdmafast.h>

static inline void *rft_zalloc(size_t n)
{
	size_t sz = (n + 4095) & ~(size_t)4095;
	void *p = aligned_alloc(4096, sz);

	if (p)
		memset(p, 0, sz);
	return p;
}

struct rft_sq {
	struct rf_sq sq;
	uint8_t *buf;
	struct rf_sq_slot *slot;	/* the side table */
	uint8_t *uar;		/* fake UAR page */
	__be32 dbrec[2];
};

/*
 * The memory of a send queue of wqe_cnt BBs for QPN qpn, bfreg at
 * uar+0x800, and the attributes that describe it (rft_sq_init()).
 */
static inline void rft_sq_attr(struct rft_sq *t, struct rf_sq_attr *a, uint32_t kind,
			       uint32_t wqe_cnt, uint32_t bf_size, uint32_t max_inline,
			       uint32_t max_sge, uint32_t sig_all, uint32_t qpn)
{
	memset(t, 0, sizeof(*t));
	t->buf = (uint8_t *)rft_zalloc((size_t)wqe_cnt * 64);
	t->slot = (struct rf_sq_slot *)rft_zalloc(wqe_cnt * sizeof(*t->slot));
	t->uar = (uint8_t *)rft_zalloc(4096);
	memset(a, 0, sizeof(*a));
	a->buf = t->buf;
	a->wqe_cnt = wqe_cnt;
	a->dbrec = t->dbrec;
	a->bf_reg = t->uar + RF_BF_REG_OFFSET;
	a->bf_size = bf_size;
	a->qpn = qpn;
	a->max_inline = max_inline;
	a->max_sge = max_sge;
	a->kind = kind;
	a->sig_all = sig_all;
	a->slot = t->slot;
}

/* A send queue of wqe_cnt BBs for QPN 0x1234 (or qpn), bfreg at uar+0x800. */
static inline int rft_sq_init(struct rft_sq *t, uint32_t kind, uint32_t wqe_cnt,
			      uint32_t bf_size, uint32_t max_inline,
			      uint32_t max_sge, uint32_t sig_all, uint32_t qpn)
{
	struct rf_sq_attr a;

	rft_sq_attr(t, &a, kind, wqe_cnt, bf_size, max_inline, max_sge, sig_all, qpn);
	return rf_sq_init(&t->sq, &a);
}

static inline void rft_sq_fini(struct rft_sq *t)
{
	free(t->buf);
	free(t->slot);
	free(t->uar);
}

/*
 * A receive queue of 8 WQEs of stride bytes. The buffer starts as garbage
 * (0xee) and the SQ word of the doorbell record as a sentinel, so tests see
 * what a post wrote and what it left alone.
 */
struct rft_rq {
	struct rf_rq rq;
	uint8_t *buf;
	uint64_t wr_id[8];
	__be32 dbrec[2];
};

static inline int rft_rq_init(struct rft_rq *t, uint32_t stride)
{
	struct rf_rq_attr a;

	memset(t, 0, sizeof(*t));
	t->buf = (uint8_t *)rft_zalloc(8 * stride);
	if (!t->buf)
		return -1;
	memset(t->buf, 0xee, 8 * stride);
	t->dbrec[RF_SND_DBR] = RF_BE32(0x5a5a);
	memset(&a, 0, sizeof(a));
	a.buf = t->buf;
	a.wqe_cnt = 8;
	a.stride = stride;
	a.dbrec = t->dbrec;
	a.wr_id = t->wr_id;
	return rf_rq_init(&t->rq, &a);
}

struct rft_cq {
	struct rf_cq cq;
	uint8_t *buf;
	uint8_t *uar;
	uint32_t cqe_cnt, cqe_size;
	__be32 dbrec[2];
};

static inline int rft_cq_init(struct rft_cq *t, uint32_t cqe_cnt, uint32_t cqe_size,
			      uint32_t cqn)
{
	struct rf_cq_attr a;

	memset(t, 0, sizeof(*t));
	t->buf = (uint8_t *)rft_zalloc((size_t)cqe_cnt * cqe_size);
	t->uar = (uint8_t *)rft_zalloc(4096);
	t->cqe_cnt = cqe_cnt;
	t->cqe_size = cqe_size;
	t->dbrec[0] = RF_BE32(0x12345678);
	t->dbrec[1] = RF_BE32(0x12345678);
	memset(&a, 0, sizeof(a));
	a.buf = t->buf;
	a.cqe_cnt = cqe_cnt;
	a.cqe_size = cqe_size;
	a.dbrec = t->dbrec;
	a.uar = t->uar;
	a.cqn = cqn;
	return rf_cq_init(&t->cq, &a);
}

static inline void rft_cq_fini(struct rft_cq *t)
{
	free(t->buf);
	free(t->uar);
}

/* The CQE64 of entry (index & mask), as the device would address it. */
static inline struct rf_cqe64 *rft_cqe(struct rft_cq *t, uint32_t index)
{
	return (struct rf_cqe64 *)(t->buf + (size_t)(index & (t->cqe_cnt - 1)) * t->cqe_size +
				   t->cqe_size - 64);
}

/*
 * Write a CQE as the device does at producer index `index`: the body, then
 * op_own last with the owner bit of that index's lap.
 */
static inline struct rf_cqe64 *rft_cqe_put(struct rft_cq *t, uint32_t index,
					   uint8_t cqe_opcode, uint8_t wqe_opcode,
					   uint32_t qpn, uint16_t wqe_counter,
					   uint32_t byte_cnt)
{
	struct rf_cqe64 *e = rft_cqe(t, index);
	uint32_t lap = index / t->cqe_cnt;

	memset(e, 0, 63);
	e->sop_drop_qpn = rf_htobe32(((uint32_t)wqe_opcode << 24) | qpn);
	e->wqe_counter = rf_htobe16(wqe_counter);
	e->byte_cnt = rf_htobe32(byte_cnt);
	e->signature = 0;
	e->op_own = (uint8_t)((cqe_opcode << 4) | (lap & 1));
	return e;
}

/* An error CQE (REQ_ERR / RESP_ERR) at producer index `index`. */
static inline struct rf_cqe64 *rft_cqe_put_err(struct rft_cq *t, uint32_t index,
					       uint8_t cqe_opcode, uint8_t wqe_opcode,
					       uint32_t qpn, uint16_t wqe_counter,
					       uint8_t syndrome, uint8_t vendor)
{
	struct rf_cqe64 *e = rft_cqe_put(t, index, cqe_opcode, wqe_opcode, qpn,
					 wqe_counter, 0);
	struct rf_err_cqe *x = (struct rf_err_cqe *)e;

	x->syndrome = syndrome;
	x->vendor_err_synd = vendor;
	return e;
}

#endif /* RDMAFAST_TESTS_RFTEST_H */
