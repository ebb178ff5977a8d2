/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The CQ (rdmafast/cq.h, cq_poll.h) in host memory, with CQEs written the
 * way the device writes them: ownership across laps (64- and 128-byte
 * entries), decoding of requester, responder and error CQEs, retirement of
 * SQ basic blocks through selective signaling, RQ and SRQ returns, stale
 * QPNs, scatter-to-CQE copies, the consumer-index record and the arm
 * doorbell.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x1234, CQN = 0x77 };

Test(cq, init_resets_every_entry)
{
	struct rft_cq t;

	memset(&t, 0, sizeof(t));
	cr_assert_eq(rft_cq_init(&t, 8, 128, CQN), 0);
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(rft_cqe(&t, i)->op_own, RF_CQE_INIT_OP_OWN);
		cr_assert_eq(t.buf[i * 128 + 127], RF_CQE_INIT_OP_OWN, "CQE64 is the upper half");
	}
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], 0);
	cr_assert_null(rf_cq_peek(&t.cq));
	rft_cq_fini(&t);
	cr_assert_eq(rft_cq_init(&t, 6, 64, CQN), -EINVAL);
	rft_cq_fini(&t);
	cr_assert_eq(rft_cq_init(&t, 8, 96, CQN), -EINVAL);
	rft_cq_fini(&t);
}

/* Owner parity over several laps, for both entry sizes. */
static void laps(uint32_t cqe_size)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[4];
	uint32_t n = 0;

	cr_assert_eq(rft_cq_init(&t, 4, cqe_size, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 64, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	for (int lap = 0; lap < 5; lap++) {
		for (int k = 0; k < 4; k++, n++) {
			cr_assert_eq(rf_sq_post_write(&s.sq, 1, 2, 3, 4, 5,
						      RF_SEND_SIGNALED, 1000 + n), 0);
			/* not yet written: still the previous lap's owner */
			cr_assert_null(rf_cq_peek(&t.cq), "lap %d entry %d", lap, k);
			rft_cqe_put(&t, n, RF_CQE_REQ, RF_OPCODE_RDMA_WRITE, QPN,
				    (uint16_t)rf_sq_last_pi(&s.sq), 0);
			cr_assert_not_null(rf_cq_peek(&t.cq));
			cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 1);
			cr_assert_eq(wc[0].wr_id, 1000 + n);
			cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
			cr_assert_eq(wc[0].opcode, RF_WC_RDMA_WRITE);
			cr_assert_eq(t.cq.ci, n + 1);
			cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32(n + 1));
			cr_assert_null(rf_cq_peek(&t.cq));
		}
	}
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, owner_parity_over_laps_64)
{
	laps(64);
}

Test(cq, owner_parity_over_laps_128)
{
	laps(128);
}

Test(cq, stale_lap_entry_is_not_consumed)
{
	struct rft_cq t;
	struct rf_wc wc;

	cr_assert_eq(rft_cq_init(&t, 4, 64, CQN), 0);
	/* an entry written with lap 1's owner while we are on lap 0 */
	rft_cqe_put(&t, 4, RF_CQE_REQ, RF_OPCODE_SEND, QPN, 0, 0);
	cr_assert_null(rf_cq_peek(&t.cq));
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 0);
	cr_assert_eq(t.cq.ci, 0);
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], 0, "no CI write when nothing polled");
	rft_cq_fini(&t);
}

Test(cq, selective_signaling_retires_earlier_wqes)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc;

	cr_assert_eq(rft_cq_init(&t, 16, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	/* 9 unsignaled (one 2-BB), then a signaled one: 12 BBs in use */
	for (int i = 0; i < 8; i++)
		cr_assert_eq(rf_sq_post_write(&s.sq, 1, 2, 3, 4, 5, 0, (uint64_t)i), 0);
	cr_assert_eq(rf_sq_post_masked_cs64(&s.sq, 1, 2, 3, 4, 5, 6, 7, 8, 0, 8), 0);
	cr_assert_eq(rf_sq_post_read(&s.sq, 1, 2, 64, 4, 5, RF_SEND_SIGNALED, 99), 0);
	cr_assert_eq(rf_sq_space(&s.sq), 16 - 11);
	rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_RDMA_READ, QPN, 10, 64);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 99);
	cr_assert_eq(wc.opcode, RF_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 64);
	cr_assert_eq(wc.qp_num, QPN);
	cr_assert_eq(wc.wqe_counter, 10);
	cr_assert_eq(rf_sq_ci(&s.sq), 11);
	cr_assert_eq(rf_sq_space(&s.sq), 16);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, requester_opcodes)
{
	/* len: the record carries byte_len (READ, atomics; ibv_wc's rule) */
	static const struct { uint8_t wqe; uint8_t wc; uint8_t flags; uint8_t len; } map[] = {
		{ RF_OPCODE_RDMA_WRITE, RF_WC_RDMA_WRITE, 0, 0 },
		{ RF_OPCODE_RDMA_WRITE_IMM, RF_WC_RDMA_WRITE, RF_WC_WITH_IMM, 0 },
		{ RF_OPCODE_SEND, RF_WC_SEND, 0, 0 },
		{ RF_OPCODE_SEND_IMM, RF_WC_SEND, RF_WC_WITH_IMM, 0 },
		{ RF_OPCODE_SEND_INVAL, RF_WC_SEND, 0, 0 },
		{ RF_OPCODE_RDMA_READ, RF_WC_RDMA_READ, 0, 1 },
		{ RF_OPCODE_ATOMIC_CS, RF_WC_COMP_SWAP, 0, 1 },
		{ RF_OPCODE_ATOMIC_FA, RF_WC_FETCH_ADD, 0, 1 },
		{ RF_OPCODE_ATOMIC_MASKED_CS, RF_WC_MASKED_COMP_SWAP, 0, 1 },
		{ RF_OPCODE_ATOMIC_MASKED_FA, RF_WC_MASKED_FETCH_ADD, 0, 1 },
		{ RF_OPCODE_NOP, RF_WC_NOP, 0, 0 },
	};
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[32];
	uint32_t n = sizeof(map) / sizeof(map[0]);

	cr_assert_eq(rft_cq_init(&t, 32, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 32, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	/*
	 * Two CQEs per opcode: the first is decoded the long way and fills the
	 * fast-path cache, the second takes the fast path. Both must agree.
	 */
	for (uint32_t i = 0; i < 2 * n; i++) {
		cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 500 + i), 0);
		rft_cqe_put(&t, i, RF_CQE_REQ, map[i / 2].wqe, QPN, (uint16_t)i, 100 + i);
	}
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 32), (int)(2 * n));
	for (uint32_t i = 0; i < 2 * n; i++) {
		cr_assert_eq(wc[i].wr_id, 500 + i);
		cr_assert_eq(wc[i].opcode, map[i / 2].wc, "wqe opcode %#x", map[i / 2].wqe);
		cr_assert_eq(wc[i].flags, map[i / 2].flags);
		cr_assert_eq(wc[i].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[i].vendor_err, 0);
		cr_assert_eq(wc[i].wqe_counter, i);
		if (map[i / 2].len)
			cr_assert_eq(wc[i].byte_len, 100 + i, "wqe opcode %#x, record %u",
				     map[i / 2].wqe, i);
	}
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32(2 * n), "one CI write for the batch");
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, responder_rq)
{
	struct rft_cq t;
	struct rft_rq r;
	struct rf_wc wc[4];
	struct rf_cqe64 *e;

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_rq_init(&r, 32), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, NULL, &r.rq, NULL), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(rf_rq_post_one(&r.rq, 1, 0x1000, 4096, 300 + (uint64_t)i), 0);
	e = rft_cqe_put(&t, 0, RF_CQE_RESP_SEND_IMM, 0, QPN, 0, 1000);
	e->imm_inval_pkey = RF_BE32(0xdeadbeef);
	e->flags_rqpn = rf_htobe32(0x10000000U | 0x03000000U | 0x5555);	/* GRH, SL 3 */
	e->op_own |= RF_CQE_SE_MASK;
	e = rft_cqe_put(&t, 1, RF_CQE_RESP_WR_IMM, 0, QPN, 1, 0);
	e->imm_inval_pkey = RF_BE32(42);
	e = rft_cqe_put(&t, 2, RF_CQE_RESP_SEND_INV, 0, QPN, 2, 7);
	e->imm_inval_pkey = rf_htobe32(0xabcd0012);
	rft_cqe_put(&t, 3, RF_CQE_RESP_SEND, 0, QPN, 3, 9);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 4);

	cr_assert_eq(wc[0].wr_id, 300);
	cr_assert_eq(wc[0].opcode, RF_WC_RECV);
	cr_assert_eq(wc[0].flags, RF_WC_WITH_IMM | RF_WC_GRH | RF_WC_SOLICITED);
	cr_assert_eq(wc[0].imm, RF_BE32(0xdeadbeef), "immediate passed through");
	cr_assert_eq(wc[0].byte_len, 1000);
	cr_assert_eq(wc[0].src_qp, 0x5555);
	cr_assert_eq(wc[0].sl, 3);
	cr_assert_eq(wc[0].qp_num, QPN);

	cr_assert_eq(wc[1].wr_id, 301);
	cr_assert_eq(wc[1].opcode, RF_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc[1].flags, RF_WC_WITH_IMM);
	cr_assert_eq(wc[1].imm, RF_BE32(42));

	cr_assert_eq(wc[2].wr_id, 302);
	cr_assert_eq(wc[2].flags, RF_WC_WITH_INV);
	cr_assert_eq(rf_wc_inv_rkey(&wc[2]), 0xabcd0012);

	cr_assert_eq(wc[3].wr_id, 303);
	cr_assert_eq(wc[3].flags, 0);
	cr_assert_eq(r.rq.tail, 4);
	cr_assert_eq(rf_rq_space(&r.rq), 8);
	free(r.buf);
	rft_cq_fini(&t);
}

Test(cq, responder_srq_returns_wqe_to_free_list)
{
	struct rft_cq t;
	struct rf_srq srq;
	struct rf_srq_attr a;
	uint8_t *buf = (uint8_t *)rft_zalloc(4 * 32);
	uint64_t wr_id[4];
	__be32 db = 0;
	struct rf_wc wc;

	for (int i = 0; i < 4; i++)
		((struct rf_wqe_srq_next_seg *)(buf + 32 * i))->next_wqe_index =
			rf_htobe16((uint16_t)(i + 1));
	memset(&a, 0, sizeof(a));
	a.buf = buf; a.wqe_cnt = 4; a.stride = 32; a.head = 0; a.tail = 3;
	a.dbrec = &db; a.wr_id = wr_id;
	cr_assert_eq(rf_srq_init(&srq, &a), 0);
	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	/* the QP is not attached: the CQ's SRQ takes its receives (XRC) */
	rf_cq_set_srq(&t.cq, &srq);
	for (int i = 0; i < 3; i++) {
		struct rf_sge sg = { 0x1000u * (i + 1), 64, 5 };

		cr_assert_eq(rf_srq_post(&srq, &sg, 1, 700 + (uint64_t)i), 0);
	}
	cr_assert(rf_srq_full(&srq));
	rft_cqe_put(&t, 0, RF_CQE_RESP_SEND, 0, 0x999, 1, 64);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 701);
	cr_assert_eq(wc.flags, RF_WC_SRQ);
	cr_assert_eq(wc.wqe_counter, 1);
	/* WQE 1 linked after the old tail 3 and now the tail */
	cr_assert_eq(srq.tail, 1);
	cr_assert_eq(rf_be16toh(((struct rf_wqe_srq_next_seg *)(buf + 3 * 32))->next_wqe_index), 1);
	cr_assert(!rf_srq_full(&srq));
	/* attached QP with an SRQ: same path, through the fast decode */
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, NULL, NULL, &srq), 0);
	rft_cqe_put(&t, 1, RF_CQE_RESP_SEND, 0, QPN, 0, 64);
	rft_cqe_put(&t, 2, RF_CQE_RESP_SEND, 0, QPN, 0, 64);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 700);
	cr_assert_eq(srq.tail, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);	/* cached match this time */
	free(buf);
	rft_cq_fini(&t);
}

Test(cq, error_cqes)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rft_rq r;
	struct rf_wc wc[4];

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rft_rq_init(&r, 16), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, &r.rq, NULL), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(rf_sq_post_write(&s.sq, 1, 2, 3, 4, 5, 0, 40 + (uint64_t)i), 0);
	cr_assert_eq(rf_rq_post_one(&r.rq, 1, 2, 3, 77), 0);
	/* unsignaled WQE 1 fails remotely: it reports, and frees 0..1 */
	rft_cqe_put_err(&t, 0, RF_CQE_REQ_ERR, RF_OPCODE_RDMA_WRITE, QPN, 1,
			RF_CQE_SYNDROME_REMOTE_ACCESS_ERR, 0x88);
	/* the rest flush */
	rft_cqe_put_err(&t, 1, RF_CQE_REQ_ERR, RF_OPCODE_RDMA_WRITE, QPN, 3,
			RF_CQE_SYNDROME_WR_FLUSH_ERR, 0);
	rft_cqe_put_err(&t, 2, RF_CQE_RESP_ERR, 0, QPN, 0,
			RF_CQE_SYNDROME_WR_FLUSH_ERR, 0);
	rft_cqe_put_err(&t, 3, RF_CQE_REQ_ERR, 0, QPN, 3, 0x42, 0x1);	/* unknown */
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 4);
	cr_assert_eq(wc[0].status, RF_WC_REM_ACCESS_ERR);
	cr_assert_eq(wc[0].vendor_err, 0x88);
	cr_assert_eq(wc[0].wr_id, 41);
	cr_assert_eq(wc[0].opcode, RF_WC_RDMA_WRITE);
	cr_assert_eq(wc[1].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[1].wr_id, 43);
	cr_assert_eq(rf_sq_ci(&s.sq), 4);
	cr_assert_eq(wc[2].status, RF_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[2].wr_id, 77);
	cr_assert_eq(wc[2].opcode, RF_WC_RECV);
	cr_assert_eq(r.rq.tail, 1);
	cr_assert_eq(wc[3].status, RF_WC_GENERAL_ERR);
	cr_assert_eq(wc[3].vendor_err, 1);
	free(r.buf);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, stale_qpn_is_dropped)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[4];

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 5), 0);
	rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_SEND, 0x4444, 0, 0);	/* destroyed QP */
	rft_cqe_put(&t, 1, RF_CQE_RESP_SEND, 0, 0x4445, 0, 0);
	rft_cqe_put(&t, 2, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 5);
	cr_assert_eq(t.cq.nstale, 2);
	cr_assert_eq(t.cq.ci, 3);
	/* detach: further CQEs of the QP are dropped too */
	cr_assert_eq(rf_cq_detach(&t.cq, QPN), 0);
	cr_assert_eq(rf_cq_detach(&t.cq, QPN), -ENOENT);
	rft_cqe_put(&t, 3, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 0);
	cr_assert_eq(t.cq.nstale, 3);
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32(4), "consumed all the same");
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

/*
 * A CQE equal to the empty fast-path word (WQE opcode 0xff, QPN 0xffffff)
 * on a fresh CQ and after a detach: found by fuzz/cq_decode.c, it used to
 * take the fast path through a NULL (or the detached queue's) side table.
 */
Test(cq, forged_empty_fast_path_word)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[2];

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	rft_cqe_put(&t, 0, RF_CQE_REQ, 0xff, 0xffffff, 3, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 2), 1);
	cr_assert_eq(wc[0].status, RF_WC_GENERAL_ERR);
	cr_assert_eq(wc[0].opcode, RF_WC_UNKNOWN);
	cr_assert_eq(wc[0].qp_num, 0xffffff);
	cr_assert_eq(t.cq.ci, 1);

	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 5), 0);
	rft_cqe_put(&t, 1, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 2), 1);
	cr_assert_eq(rf_cq_detach(&t.cq, QPN), 0);
	cr_assert_eq(rf_sq_post_nop(&s.sq, 0, 6), 0);
	rft_cqe_put(&t, 2, RF_CQE_REQ, 0xff, 0xffffff, 1, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 2), 1);
	cr_assert_eq(wc[0].status, RF_WC_GENERAL_ERR);
	cr_assert_eq(rf_sq_space(&s.sq), 15, "the detached queue retired nothing");
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

/*
 * A UMR CQE naming the queue's last BB: the mkey context is read from the
 * next BB with the wrap, not past the buffer (found by fuzz/cq_decode.c;
 * AddressSanitizer in the san build sees the old read).
 */
Test(cq, umr_cqe_at_last_bb_stays_in_queue)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc;

	cr_assert_eq(rft_cq_init(&t, 2, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 64, 0, 64, 4, 0, QPN), 0);	/* 4 KiB: no slack */
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	s.buf[0] = RF_MKEY_CONTEXT_FREE;	/* BB 0 follows BB 63 */
	rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_UMR, QPN, 63, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.opcode, RF_WC_LOCAL_INV);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, many_qps_and_attach_limit)
{
	struct rft_cq t;
	struct rft_sq s[3];
	struct rf_wc wc[8];

	cr_assert_eq(rft_cq_init(&t, 16, 64, CQN), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rft_sq_init(&s[i], RF_QP_RC, 8, 256, 64, 1, 0, 0x100u + i), 0);
		cr_assert_eq(rf_cq_attach(&t.cq, 0x100u + i, &s[i].sq, NULL, NULL), 0);
		cr_assert_eq(rf_sq_post_nop(&s[i].sq, RF_SEND_SIGNALED, 10u * i), 0);
	}
	/* interleaved completions of three QPs */
	rft_cqe_put(&t, 0, RF_CQE_REQ, 0, 0x102, 0, 0);
	rft_cqe_put(&t, 1, RF_CQE_REQ, 0, 0x100, 0, 0);
	rft_cqe_put(&t, 2, RF_CQE_REQ, 0, 0x101, 0, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 8), 3);
	cr_assert_eq(wc[0].wr_id, 20);
	cr_assert_eq(wc[1].wr_id, 0);
	cr_assert_eq(wc[2].wr_id, 10);
	for (uint32_t q = 3; q < RF_CQ_MAX_QPS; q++)
		cr_assert_eq(rf_cq_attach(&t.cq, 0x200 + q, NULL, NULL, NULL), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, 0x999, NULL, NULL, NULL), -ENOSPC);
	cr_assert_eq(rf_cq_attach(&t.cq, 0x101, &s[1].sq, NULL, NULL), 0, "re-attach replaces");
	for (int i = 0; i < 3; i++)
		rft_sq_fini(&s[i]);
	rft_cq_fini(&t);
}

Test(cq, scatter_to_cqe_responder)
{
	struct rft_cq t;
	struct rft_rq r;
	struct rf_wc wc;
	uint8_t a[16], b[64];
	struct rf_sge sg[2];
	struct rf_cqe64 *e;

	cr_assert_eq(rft_cq_init(&t, 8, 128, CQN), 0);
	cr_assert_eq(rft_rq_init(&r, 64), 0);	/* 4 data segments per WQE */
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, NULL, &r.rq, NULL), 0);
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	sg[0].addr = (uint64_t)(uintptr_t)a; sg[0].length = sizeof(a); sg[0].lkey = 1;
	sg[1].addr = (uint64_t)(uintptr_t)b; sg[1].length = sizeof(b); sg[1].lkey = 1;
	cr_assert_eq(rf_rq_post(&r.rq, sg, 2, 1), 0);
	cr_assert_eq(rf_rq_post(&r.rq, sg, 2, 2), 0);
	/* 24 bytes in the CQE64 itself (SCATTER_32) */
	e = rft_cqe_put(&t, 0, RF_CQE_RESP_SEND, 0, QPN, 0, 24);
	for (int i = 0; i < 24; i++)
		((uint8_t *)e)[i] = (uint8_t)(0x40 + i);
	e->op_own |= RF_INLINE_SCATTER_32;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.byte_len, 24);
	cr_assert_eq(wc.flags, RF_WC_SCATTERED);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(a[i], 0x40 + i);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(b[i], 0x50 + i);
	cr_assert_eq(b[8], 0);
	/* 60 bytes in the first half of the 128-byte entry (SCATTER_64) */
	e = rft_cqe_put(&t, 1, RF_CQE_RESP_SEND, 0, QPN, 1, 60);
	for (int i = 0; i < 60; i++)
		((uint8_t *)e - 64)[i] = (uint8_t)(0x80 + i);
	e->op_own |= RF_INLINE_SCATTER_64;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 2);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(a[i], 0x80 + i);
	for (int i = 0; i < 44; i++)
		cr_assert_eq(b[i], 0x80 + 16 + i);
	free(r.buf);
	rft_cq_fini(&t);
}

/*
 * Byte counts larger than the CQE can hold, and the 64-byte format on a
 * 64-byte CQ (the half before entry 0 is outside the buffer): no more than
 * the entry holds is copied. Found by fuzz/cq_decode.c (it read past the
 * CQ buffer).
 */
Test(cq, scatter_to_cqe_byte_count_bounded)
{
	struct rft_cq t;
	struct rft_rq r;
	struct rf_wc wc;
	uint8_t a[64];
	struct rf_cqe64 *e;

	cr_assert_eq(rft_cq_init(&t, 2, 64, CQN), 0);
	cr_assert_eq(rft_rq_init(&r, 16), 0);	/* one data segment per WQE */
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, NULL, &r.rq, NULL), 0);
	memset(a, 0, sizeof(a));
	cr_assert_eq(rf_rq_post_one(&r.rq, 1, (uintptr_t)a, sizeof(a), 1), 0);
	cr_assert_eq(rf_rq_post_one(&r.rq, 1, (uintptr_t)a, sizeof(a), 2), 0);
	e = rft_cqe_put(&t, 0, RF_CQE_RESP_SEND, 0, QPN, 0, 1000);
	memset(e, 0x41, 32);
	e->op_own |= RF_INLINE_SCATTER_32;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 1);
	cr_assert_eq(wc.byte_len, 1000, "reported as the CQE says");
	cr_assert_eq(a[31], 0x41);
	cr_assert_eq(a[32], 0, "nothing past the 32 bytes a CQE64 holds");
	memset(a, 0, sizeof(a));
	e = rft_cqe_put(&t, 1, RF_CQE_RESP_SEND, 0, QPN, 1, 60);
	e->op_own |= RF_INLINE_SCATTER_64;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 2);
	cr_assert_eq(a[0], 0, "a 64-byte CQ has no 64-byte scatter half");
	free(r.buf);
	rft_cq_fini(&t);
}

Test(cq, scatter_to_cqe_requester_read)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc;
	uint8_t dst[32];
	uint64_t old = 0;
	struct rf_cqe64 *e;

	memset(dst, 0, sizeof(dst));
	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 64, 4, 1, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_sq_post_read(&s.sq, 1, (uint64_t)(uintptr_t)dst, 20, 2, 3, 0, 8), 0);
	cr_assert_eq(rf_sq_post_faa(&s.sq, 1, (uint64_t)(uintptr_t)&old, 2, 3, 1, 0, 9), 0);
	e = rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_RDMA_READ, QPN, 0, 20);
	for (int i = 0; i < 20; i++)
		((uint8_t *)e)[i] = (uint8_t)(i + 1);
	e->op_own |= RF_INLINE_SCATTER_32;
	e = rft_cqe_put(&t, 1, RF_CQE_REQ, RF_OPCODE_ATOMIC_FA, QPN, 1, 8);
	memcpy(e, "\x00\x00\x00\x00\x00\x00\x01\x02", 8);
	e->op_own |= RF_INLINE_SCATTER_32;
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.wr_id, 8);
	cr_assert_eq(wc.flags, RF_WC_SCATTERED);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(dst[i], i + 1);
	cr_assert_eq(dst[20], 0);
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(wc.opcode, RF_WC_FETCH_ADD);
	cr_assert_eq(rf_be64toh((__be64)old), 0x0102);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, raw_peek_advance_update_ci)
{
	struct rft_cq t;
	struct rf_cqe64 *e;

	cr_assert_eq(rft_cq_init(&t, 4, 64, CQN), 0);
	for (uint32_t i = 0; i < 3; i++)
		rft_cqe_put(&t, i, RF_CQE_REQ, RF_OPCODE_SEND, QPN, (uint16_t)i, i);
	for (uint32_t i = 0; i < 3; i++) {
		e = rf_cq_peek(&t.cq);
		cr_assert_not_null(e);
		cr_assert_eq(e, rft_cqe(&t, i));
		cr_assert_eq(rf_be32toh(e->byte_cnt), i);
		cr_assert_eq(rf_cq_peek(&t.cq), e, "peek consumes nothing");
		rf_cq_advance(&t.cq, 1);
	}
	cr_assert_null(rf_cq_peek(&t.cq));
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], 0, "not before update_ci");
	rf_cq_update_ci(&t.cq);
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], RF_BE32(3));
	/* 24 bits only */
	t.cq.ci = 0x12345678;
	rf_cq_update_ci(&t.cq);
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], RF_BE32(0x345678));
	rft_cq_fini(&t);
}

Test(cq, arm_word_and_mmio_bytes)
{
	struct rft_cq t;
	const uint8_t *db;

	cr_assert_eq(rft_cq_init(&t, 8, 64, 0xabcdef), 0);
	db = t.uar + RF_CQ_DOORBELL;
	t.cq.ci = 0x1000005;
	rf_cq_arm(&t.cq, 0);
	/* sn 0, cmd REQ_NOT, ci & 0xffffff */
	cr_assert_eq(t.dbrec[RF_CQ_ARM_DB], RF_BE32(0x000005));
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], RF_BE32(0x000005));
	{
		const uint8_t want[8] = { 0x00, 0x00, 0x00, 0x05, 0x00, 0xab, 0xcd, 0xef };

		cr_assert_eq(memcmp(db, want, 8), 0);
	}
	rf_cq_event_ack(&t.cq);
	rf_cq_arm(&t.cq, 1);
	{
		const uint8_t want[8] = { 0x11, 0x00, 0x00, 0x05, 0x00, 0xab, 0xcd, 0xef };

		cr_assert_eq(memcmp(db, want, 8), 0);
		cr_assert_eq(t.dbrec[RF_CQ_ARM_DB], RF_BE32(0x11000005));
	}
	/* sn is two bits: after 4 events it is 0 again */
	rf_cq_event_ack(&t.cq);
	rf_cq_event_ack(&t.cq);
	rf_cq_event_ack(&t.cq);
	rf_cq_arm(&t.cq, 0);
	cr_assert_eq(db[0], 0x00);
	rf_cq_event_ack(&t.cq);
	rf_cq_event_ack(&t.cq);
	rf_cq_event_ack(&t.cq);
	rf_cq_arm(&t.cq, 0);
	cr_assert_eq(db[0], 0x30);
	rft_cq_fini(&t);
}

Test(cq, umr_completions_tell_bind_from_invalidate)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[2];

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_sq_post_bind_mw(&s.sq, 0x100, 0x101, 1, 0x1000, 64, 0,
					RF_SEND_SIGNALED, 31), 0);
	cr_assert_eq(rf_sq_post_local_inv(&s.sq, 0x101, RF_SEND_SIGNALED, 32), 0);
	rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_UMR, QPN, 0, 0);
	rft_cqe_put(&t, 1, RF_CQE_REQ, RF_OPCODE_UMR, QPN, 4, 0);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 2), 2);
	cr_assert_eq(wc[0].wr_id, 31);
	cr_assert_eq(wc[0].opcode, RF_WC_BIND_MW);
	cr_assert_eq(wc[1].wr_id, 32);
	cr_assert_eq(wc[1].opcode, RF_WC_LOCAL_INV);
	cr_assert_eq(rf_sq_ci(&s.sq), 6, "the fence NOP after the invalidate is still out");
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

/*
 * Batches of every size over many laps, mixing fast-path requester CQEs
 * with CQEs that take the long way (a new WQE opcode, receives, stale
 * QPNs) and with raw peek/decode/advance, checked against a model: the
 * poll's cursor, lap parity and cached requester word must follow ci
 * through every wrap, in runs that end at the buffer end, at n, or at a
 * CQE that is not fast-path.
 */
static void mixed_batches(uint32_t cqe_size, uint64_t seed)
{
	enum { CNT = 8, STEPS = 400 };
	struct exp { uint64_t wr_id; uint32_t byte_len; uint16_t counter; uint8_t opcode; int rec; uint32_t sq_end; };
	struct rft_cq t;
	struct rft_sq s;
	struct rft_rq r;
	struct rft_rng g;
	struct exp q[CNT];
	struct rf_wc wc[12];
	uint32_t pi = 0, ci = 0, sq_ci = 0;
	uint64_t id = 1;

	rft_rng_seed(&g, seed);
	cr_assert_eq(rft_cq_init(&t, CNT, cqe_size, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 64, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rft_rq_init(&r, 16), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, &r.rq, NULL), 0);
	for (int step = 0; step < STEPS; step++) {
		uint32_t k = rft_rand32(&g) % (CNT - (pi - ci) + 1);

		/* the device completes k more */
		for (; k; k--, pi++) {
			struct exp *e = &q[pi % CNT];
			uint32_t kind = rft_rand32(&g) % 16;

			if (kind < 11) {	/* requester: mostly writes, some sends */
				int send = kind >= 9;

				for (uint32_t u = rft_rand32(&g) % 3; u; u--)
					cr_assert_eq(rf_sq_post_write(&s.sq, 1, 2, 3, 4, 5, 0, 0), 0);
				if (send)
					cr_assert_eq(rf_sq_post_send(&s.sq, 1, 2, 3,
								     RF_SEND_SIGNALED, id), 0);
				else
					cr_assert_eq(rf_sq_post_write(&s.sq, 1, 2, 3, 4, 5,
								      RF_SEND_SIGNALED, id), 0);
				e->counter = (uint16_t)rf_sq_last_pi(&s.sq);
				e->opcode = send ? RF_WC_SEND : RF_WC_RDMA_WRITE;
				e->sq_end = s.sq.pi;
				rft_cqe_put(&t, pi, RF_CQE_REQ,
					    send ? RF_OPCODE_SEND : RF_OPCODE_RDMA_WRITE, QPN,
					    e->counter, (uint32_t)id * 3);
			} else if (kind < 14) {	/* receive */
				e->counter = (uint16_t)r.rq.head;
				cr_assert_eq(rf_rq_post_one(&r.rq, 1, 2, 3, id), 0);
				e->opcode = RF_WC_RECV;
				e->sq_end = 0;
				rft_cqe_put(&t, pi, RF_CQE_RESP_SEND, 0, QPN, e->counter,
					    (uint32_t)id * 3);
			} else {		/* a destroyed QP's: consumed, no record */
				e->rec = 0;
				e->sq_end = 0;
				rft_cqe_put(&t, pi, RF_CQE_REQ, RF_OPCODE_RDMA_WRITE, 0x4444,
					    0, 0);
				continue;
			}
			e->rec = 1;
			e->wr_id = id;
			e->byte_len = (uint32_t)id * 3;
			id++;
		}
		if (rft_rand32(&g) % 8 == 0) {
			/* the raw level, one CQE, in between polls */
			struct rf_cqe64 *cqe = rf_cq_peek(&t.cq);
			struct exp *e = &q[ci % CNT];

			if (ci == pi) {
				cr_assert_null(cqe);
				continue;
			}
			cr_assert_not_null(cqe, "seed %llu step %d", (unsigned long long)seed, step);
			cr_assert_eq(rf_cq_decode(&t.cq, cqe, wc), e->rec);
			if (e->rec)
				cr_assert_eq(wc[0].wr_id, e->wr_id);
			if (e->sq_end)
				sq_ci = e->sq_end;
			rf_cq_advance(&t.cq, 1);
			rf_cq_update_ci(&t.cq);
			ci++;
		} else {
			int n = 1 + (int)(rft_rand32(&g) % 12), got = 0;

			cr_assert_eq(rf_cq_poll(&t.cq, wc, n) >= 0, 1);
			/* the model: consume until n records or no CQE left */
			for (; ci != pi && got < n; ci++) {
				struct exp *e = &q[ci % CNT];

				if (e->sq_end)
					sq_ci = e->sq_end;
				if (!e->rec)
					continue;
				cr_assert_eq(wc[got].wr_id, e->wr_id, "seed %llu step %d rec %d",
					     (unsigned long long)seed, step, got);
				cr_assert_eq(wc[got].status, RF_WC_SUCCESS);
				cr_assert_eq(wc[got].opcode, e->opcode);
				if (e->opcode == RF_WC_RECV)	/* not part of a write's or send's */
					cr_assert_eq(wc[got].byte_len, e->byte_len);
				cr_assert_eq(wc[got].wqe_counter, e->counter);
				cr_assert_eq(wc[got].qp_num, QPN);
				cr_assert_eq(wc[got].flags, 0);
				got++;
			}
			cr_assert_eq(t.cq.ci, ci, "seed %llu step %d", (unsigned long long)seed, step);
			if (ci)
				cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32(ci & 0xffffff));
		}
		cr_assert_eq(rf_sq_ci(&s.sq), sq_ci, "seed %llu step %d", (unsigned long long)seed, step);
		cr_assert_eq(rf_cq_peek(&t.cq) != NULL, ci != pi);
	}
	cr_assert_gt(t.cq.nstale, 0);
	free(r.buf);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

Test(cq, mixed_batches_over_laps_64)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		mixed_batches(64, seed);
}

Test(cq, mixed_batches_over_laps_128)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		mixed_batches(128, seed);
}
