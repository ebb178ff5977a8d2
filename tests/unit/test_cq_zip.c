/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Compressed CQEs (rdmafast/cq_poll.h, cq.h's rf_cq_zip_*): zips
 * built byte by byte as a ConnectX writes them (a title in format 3, the
 * mini-CQE arrays in the entry after it and every eighth one, the other
 * entries untouched), for requester and responder completions in every
 * mini-CQE format, on 64- and 128-byte CQEs, wrapping the CQ end, cut by
 * the record count, mixed with normal CQEs, and at the raw level. Each
 * zip's records are compared with those of the same completions
 * written uncompressed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x1234, CQN = 0x77 };

/*
 * Write a zip of n completions at producer index `index`: title from
 * e (a normal CQE of the first completion), mini-CQEs m[0..n).
 */
static void zip_put(struct rft_cq *t, uint32_t index, const struct rf_cqe64 *e,
		    const struct rf_mini_cqe8 *m, uint32_t n)
{
	struct rf_cqe64 *title = rft_cqe(t, index);
	uint32_t i;

	for (i = 0; i < n; i += RF_MINI_CQE_PER_SLOT) {
		uint32_t slot = i ? i : 1;
		uint32_t k = n - i < RF_MINI_CQE_PER_SLOT ? n - i : RF_MINI_CQE_PER_SLOT;

		memcpy(rft_cqe(t, index + slot), m + i, k * sizeof(*m));
	}
	memcpy(title, e, 63);
	title->byte_cnt = rf_htobe32(n);
	title->op_own = (uint8_t)((e->op_own & 0xf0) | (RF_CQE_FORMAT_COMPRESSED << 2) |
				  ((index / t->cqe_cnt) & 1));
}

static void wc_eq(const struct rf_wc *a, const struct rf_wc *b, int fetches)
{
	cr_assert_eq(a->wr_id, b->wr_id);
	if (fetches)
		cr_assert_eq(a->byte_len, b->byte_len);
	cr_assert_eq(a->imm, b->imm);
	cr_assert_eq(a->qp_num, b->qp_num);
	cr_assert_eq(a->src_qp, b->src_qp);
	cr_assert_eq(a->status, b->status);
	cr_assert_eq(a->opcode, b->opcode);
	cr_assert_eq(a->flags, b->flags);
	cr_assert_eq(a->wqe_counter, b->wqe_counter);
	cr_assert_eq(a->sl, b->sl);
}

/*
 * Requester: n signaled WQEs (WRITE, READ alternating, or all of the
 * opcode one_op) complete as one zip starting at CQ entry `start` (the
 * CQ's ci is moved there first with NOP completions), polled max records
 * at a time; then one normal CQE. The same run without compression gives
 * the reference records.
 */
static void req_zip_op(uint32_t cqe_cnt, uint32_t cqe_size, uint32_t start, uint32_t n,
			   int max, uint8_t one_op)
{
	struct rf_wc got[80], ref[80];
	int zipped;

	/* fields a requester record does not define (imm, src_qp, byte_len
	 * but for READ/atomics) stay as the caller left them */
	memset(got, 0, sizeof(got));
	memset(ref, 0, sizeof(ref));

	for (zipped = 0; zipped < 2; zipped++) {
		struct rft_cq t;
		struct rft_sq s;
		struct rf_mini_cqe8 m[64];
		struct rf_wc *wc = zipped ? got : ref;
		struct rf_cqe64 e;
		uint32_t i, pi = 0, got_n = 0;

		cr_assert_eq(rft_cq_init(&t, cqe_cnt, cqe_size, CQN), 0);
		cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 128, 0, 64, 4, 0, QPN), 0);
		cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
		for (i = 0; i < start; i++) {	/* bring ci to start */
			struct rf_wc w;

			cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 1), 0);
			rft_cqe_put(&t, pi, RF_CQE_REQ, RF_OPCODE_NOP, QPN,
				    (uint16_t)rf_sq_last_pi(&s.sq), 0);
			cr_assert_eq(rf_cq_poll(&t.cq, &w, 1), 1);
			pi++;
		}
		for (i = 0; i < n; i++) {
			uint8_t op = one_op ? one_op : i & 1 ? RF_OPCODE_RDMA_READ : RF_OPCODE_RDMA_WRITE;

			if (op == RF_OPCODE_RDMA_READ)
				cr_assert_eq(rf_sq_post_read(&s.sq, 0x1000, 5, 0x2000, 6, 64,
							     RF_SEND_SIGNALED, 100 + i), 0);
			else
				cr_assert_eq(rf_sq_post_write(&s.sq, 0x1000, 5, 0x2000, 6, 64,
							      RF_SEND_SIGNALED, 100 + i), 0);
			m[i].u.s_wqe_info.wqe_counter = rf_htobe16((uint16_t)rf_sq_last_pi(&s.sq));
			m[i].u.s_wqe_info.s_wqe_opcode = op;
			m[i].u.s_wqe_info.reserved = 0;
			m[i].byte_cnt = rf_htobe32(op == RF_OPCODE_RDMA_READ ? 64 : 0);
			if (!zipped) {
				rft_cqe_put(&t, pi + i, RF_CQE_REQ, op, QPN,
					    (uint16_t)rf_sq_last_pi(&s.sq),
					    rf_be32toh(m[i].byte_cnt));
			}
		}
		if (zipped) {
			memcpy(&e, rft_cqe(&t, pi), sizeof(e));	/* whatever was there */
			e.sop_drop_qpn = rf_htobe32((uint32_t)RF_OPCODE_RDMA_WRITE << 24 | QPN);
			e.op_own = RF_CQE_REQ << 4;
			zip_put(&t, pi, &e, m, n);
		}
		cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 999), 0);
		rft_cqe_put(&t, pi + n, RF_CQE_REQ, RF_OPCODE_NOP, QPN,
			    (uint16_t)rf_sq_last_pi(&s.sq), 0);
		while (got_n < n + 1) {
			int k = rf_cq_poll(&t.cq, wc + got_n, max);

			cr_assert_gt(k, 0, "zipped %d: stuck at %u of %u", zipped, got_n, n + 1);
			got_n += (uint32_t)k;
		}
		cr_assert_eq(got_n, n + 1);
		cr_assert_eq(rf_cq_poll(&t.cq, wc + got_n, 4), 0);
		cr_assert_eq(t.cq.ci, start + n + 1, "a zip takes n entries");
		cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32((start + n + 1) & 0xffffff));
		cr_assert_eq(rf_sq_space(&s.sq), 128, "every WQE retired");
		cr_assert_eq(wc[n].wr_id, 999);
		/* ownership restored: a whole lap later none of them is ours */
		for (i = 0; i < cqe_cnt; i++) {
			uint32_t ci = start + n + 1 + i;

			cr_assert(!rf_cqe_sw_owned(rft_cqe(&t, ci)->op_own, ci, t.cq.log_n),
					  "entry %u looks written", ci);
		}
		rft_sq_fini(&s);
		rft_cq_fini(&t);
	}
	for (uint32_t i = 0; i <= n; i++)
		wc_eq(&got[i], &ref[i], 1);
}

static void req_zip(uint32_t cqe_cnt, uint32_t cqe_size, uint32_t start, uint32_t n,
			int max)
{
	req_zip_op(cqe_cnt, cqe_size, start, n, max, 0);
}

Test(cq_zip, requester_one_array)
{
	req_zip(32, 64, 0, 5, 16);
}

Test(cq_zip, requester_three_arrays)
{
	req_zip(64, 64, 0, 20, 16);
}

/*
 * Whole arrays of one WQE opcode take the unrolled path of the decoder:
 * READs (with byte counts) and WRITEs (without), the third array part
 * full, cut by the record count inside and across arrays, and wrapping
 * the end.
 */
Test(cq_zip, requester_arrays_of_one_opcode)
{
	req_zip_op(64, 64, 0, 20, 16, RF_OPCODE_RDMA_READ);
	req_zip_op(64, 64, 0, 20, 16, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 128, 5, 24, 16, RF_OPCODE_RDMA_WRITE);
	req_zip_op(32, 64, 3, 19, 5, RF_OPCODE_RDMA_READ);
	req_zip_op(32, 64, 20, 17, 9, RF_OPCODE_RDMA_WRITE);
}

/*
 * Whole zips (a multiple of eight, short of the CQ end and of the
 * record count, of the QP matched last) take the short path of
 * rf_cq_poll(): one opcode check for the zip, eight straight records
 * per array, the owner bytes restored at fixed offsets. WRITEs and READs
 * (byte counts), 64- and 128-byte CQEs, a zip that ends exactly at
 * the CQ end (the owner bit flips after it); and those that must leave
 * it: mixed opcodes, a zip that wraps the end, a record count that
 * cuts it, the first zip after the attach (no QP matched yet).
 */
Test(cq_zip, requester_whole_zips)
{
	req_zip_op(64, 64, 1, 16, 16, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 64, 1, 16, 16, RF_OPCODE_RDMA_READ);
	req_zip_op(64, 128, 5, 24, 32, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 128, 2, 8, 8, RF_OPCODE_RDMA_READ);
	req_zip_op(32, 64, 16, 16, 16, RF_OPCODE_RDMA_READ);
	req_zip_op(16, 128, 8, 8, 8, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 64, 1, 16, 16, 0);
	req_zip_op(32, 64, 20, 16, 16, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 64, 1, 16, 15, RF_OPCODE_RDMA_WRITE);
	req_zip_op(64, 64, 0, 16, 16, RF_OPCODE_RDMA_WRITE);
}

Test(cq_zip, requester_wraps_the_end_64)
{
	req_zip(16, 64, 11, 12, 16);
}

Test(cq_zip, requester_wraps_the_end_128)
{
	req_zip(16, 128, 13, 9, 16);
}

Test(cq_zip, requester_cut_by_the_record_count)
{
	req_zip(32, 64, 3, 19, 3);
	req_zip(32, 128, 30, 17, 1);
}

/*
 * Responder: n receives of one QP as a zip at entry start, in mini
 * format fmt; through an RQ, or an SRQ whose WQEs are taken in a shuffled
 * order (only CSUM_STRIDX can name those). Reference: the same CQEs
 * uncompressed.
 */
static void resp_zip(uint32_t cqe_size, uint32_t fmt, int use_srq, uint32_t start,
			 uint32_t n)
{
	struct rf_wc got[40], ref[40];
	int zipped;

	for (zipped = 0; zipped < 2; zipped++) {
		struct rft_cq t;
		struct rft_rq r;
		struct rf_srq srq;
		struct rf_srq_attr sa;
		uint8_t *sbuf = (uint8_t *)rft_zalloc(32 * 32);
		uint64_t swr[32];
		__be32 sdb = 0;
		struct rf_mini_cqe8 m[32];
		struct rf_wc *wc = zipped ? got : ref;
		struct rf_cqe64 e;
		struct rf_cq_attr a;
		uint32_t i, got_n = 0;

		memset(&t, 0, sizeof(t));
		t.buf = (uint8_t *)rft_zalloc(16 * cqe_size);
		t.uar = (uint8_t *)rft_zalloc(4096);
		t.cqe_cnt = 16;
		t.cqe_size = cqe_size;
		memset(&a, 0, sizeof(a));
		a.buf = t.buf; a.cqe_cnt = 16; a.cqe_size = cqe_size; a.dbrec = t.dbrec;
		a.cqn = CQN; a.mini_format = fmt;
		cr_assert_eq(rf_cq_init(&t.cq, &a), 0);
		for (i = 0; i < 32; i++)
			((struct rf_wqe_srq_next_seg *)(sbuf + 32 * i))->next_wqe_index =
				rf_htobe16((uint16_t)(i + 1));
		memset(&sa, 0, sizeof(sa));
		sa.buf = sbuf; sa.wqe_cnt = 32; sa.stride = 32; sa.head = 0; sa.tail = 31;
		sa.dbrec = &sdb; sa.wr_id = swr;
		cr_assert_eq(rf_srq_init(&srq, &sa), 0);
		cr_assert_eq(rft_rq_init(&r, 32), 0);
		cr_assert_eq(rf_cq_attach(&t.cq, QPN, NULL, use_srq ? NULL : &r.rq,
					  use_srq ? &srq : NULL), 0);
		for (i = 0; i < 8 && !use_srq; i++)
			cr_assert_eq(rf_rq_post_one(&r.rq, 1, 0x1000, 4096, 300 + i), 0);
		for (i = 0; i < 31 && use_srq; i++) {
			struct rf_sge sg = { 0x1000, 64, 5 };

			cr_assert_eq(rf_srq_post(&srq, &sg, 1, 700 + (uint64_t)i), 0);
		}
		t.cq.ci = start;	/* as if start entries had been consumed */
		rf_cq_advance(&t.cq, 0);
		for (i = start; i < start + 16; i++)	/* as the previous lap left them */
			rft_cqe(&t, i)->op_own = (uint8_t)(0xf0 | (((i >> 4) & 1) ^ 1));
		for (i = 0; i < n; i++) {
			uint16_t wqe = use_srq ? (uint16_t)((i * 7) % 31) : (uint16_t)(start + i);
			struct rf_cqe64 *c;

			m[i].byte_cnt = rf_htobe32(10 + i);
			if (fmt == RF_MINI_CQE_RES_FORMAT_HASH) {
				m[i].u.rx_hash_result = rf_htobe32(0xabc00000U + i);
			} else {
				m[i].u.rx.checksum = rf_htobe16((uint16_t)(0x5a00 + i));
				m[i].u.rx.stride_idx = rf_htobe16(wqe);
			}
			if (!zipped) {
				c = rft_cqe_put(&t, start + i, RF_CQE_RESP_SEND_IMM, 0, QPN, wqe, 10 + i);
				c->imm_inval_pkey = RF_BE32(0xfeed);
				c->flags_rqpn = rf_htobe32(0x10000000U | 0x02000000U | 0x4321);
			}
		}
		if (zipped) {
			memset(&e, 0, sizeof(e));
			e.sop_drop_qpn = rf_htobe32(QPN);
			e.wqe_counter = rf_htobe16(use_srq ? 0 : (uint16_t)start);
			e.imm_inval_pkey = RF_BE32(0xfeed);
			e.flags_rqpn = rf_htobe32(0x10000000U | 0x02000000U | 0x4321);
			e.op_own = RF_CQE_RESP_SEND_IMM << 4;
			zip_put(&t, start, &e, m, n);
		}
		rft_cqe_put(&t, start + n, RF_CQE_RESP_SEND, 0, QPN,
			    use_srq ? 30 : (uint16_t)(start + n), 1);
		while (got_n < n + 1) {
			int k = rf_cq_poll(&t.cq, wc + got_n, 5);

			cr_assert_gt(k, 0, "zipped %d: stuck at %u of %u", zipped, got_n, n + 1);
			got_n += (uint32_t)k;
		}
		cr_assert_eq(rf_cq_poll(&t.cq, wc, 1), 0, "the zip's entries are not ours");
		cr_assert_eq(t.cq.ci, start + n + 1);
		for (i = 0; i < 16; i++) {
			uint32_t ci = start + n + 1 + i;

			cr_assert(!rf_cqe_sw_owned(rft_cqe(&t, ci)->op_own, ci, t.cq.log_n),
				  "entry %u looks written", ci);
		}
		free(sbuf);
		free(r.buf);
		rft_cq_fini(&t);
	}
	for (uint32_t i = 0; i <= n; i++)
		wc_eq(&got[i], &ref[i], 1);
}

Test(cq_zip, responder_hash_rq)
{
	resp_zip(64, RF_MINI_CQE_RES_FORMAT_HASH, 0, 0, 7);
}

Test(cq_zip, responder_csum_rq_wraps)
{
	resp_zip(64, RF_MINI_CQE_RES_FORMAT_CSUM, 0, 12, 8);
	resp_zip(128, RF_MINI_CQE_RES_FORMAT_CSUM, 0, 30, 2);
}

Test(cq_zip, responder_csum_stridx_srq)
{
	resp_zip(64, RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX, 1, 5, 10);
	resp_zip(128, RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX, 1, 9, 14);
}

/* A title whose count no zip has is one loud record. */
Test(cq_zip, impossible_count_is_reported)
{
	struct rft_cq t;
	struct rf_wc wc;
	struct rf_cqe64 *e;

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	e = rft_cqe_put(&t, 0, RF_CQE_REQ, 0, QPN, 0, 9);	/* > 8 entries */
	e->op_own |= RF_CQE_FORMAT_COMPRESSED << 2;
	e = rft_cqe_put(&t, 1, RF_CQE_REQ, 0, QPN, 0, 1);	/* < 2 */
	e->op_own |= RF_CQE_FORMAT_COMPRESSED << 2;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, RF_WC_GENERAL_ERR);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.status, RF_WC_GENERAL_ERR);
	cr_assert_eq(t.cq.ci, 2);
	rft_cq_fini(&t);
}

/* A zip of a QP not attached is consumed whole and counted. */
Test(cq_zip, stale_zip_is_dropped)
{
	struct rft_cq t;
	struct rf_wc wc;
	struct rf_mini_cqe8 m[3];
	struct rf_cqe64 e;

	memset(m, 0, sizeof(m));
	memset(&e, 0, sizeof(e));
	e.sop_drop_qpn = rf_htobe32(0x999);
	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	zip_put(&t, 0, &e, m, 3);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 0);
	cr_assert_eq(t.cq.ci, 3);
	cr_assert_eq(t.cq.nstale, 3);
	rft_cq_fini(&t);
}

/* The raw level: peek the title, read its mini-CQEs, hand it back. */
Test(cq_zip, raw_peek_zip)
{
	struct rft_cq t;
	struct rf_mini_cqe8 m[10];
	struct rf_cqe64 e, *c;
	uint32_t i;

	for (i = 0; i < 10; i++) {
		m[i].u.s_wqe_info.wqe_counter = rf_htobe16((uint16_t)i);
		m[i].u.s_wqe_info.s_wqe_opcode = RF_OPCODE_SEND;
		m[i].byte_cnt = 0;
	}
	memset(&e, 0, sizeof(e));
	e.sop_drop_qpn = rf_htobe32(QPN);
	cr_assert_eq(rft_cq_init(&t, 16, 128, CQN), 0);
	zip_put(&t, 0, &e, m, 10);
	c = rf_cq_peek(&t.cq);
	cr_assert_not_null(c);
	cr_assert_eq(rf_cqe_format(c->op_own), RF_CQE_FORMAT_COMPRESSED);
	cr_assert_eq(rf_cq_zip_len(c), 10);
	for (i = 0; i < 10; i++)
		cr_assert_eq(rf_be16toh(rf_cq_zip_mini(&t.cq, i)->u.s_wqe_info.wqe_counter), i);
	rf_cq_zip_advance(&t.cq);
	cr_assert_eq(t.cq.ci, 10);
	cr_assert_null(rf_cq_peek(&t.cq));
	for (i = 0; i < 10; i++)
		cr_assert_eq(rft_cqe(&t, i)->op_own, RF_CQE_INVALID << 4, "entry %u", i);
	rft_cq_fini(&t);
}
