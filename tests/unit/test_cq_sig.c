/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Signature error CQEs (rdmafast/cq_sig.h) in host memory: rf_cq_poll()
 * returns one as an RF_WC_SIG_ERR record that ends the call, and
 * rf_cq_sig_err() decodes the kept bytes once, as mlx5dv_mkey_check()
 * decodes them (rdma-core providers/mlx5/verbs.c, mlx5_decode_sigerr():
 * reference tag first, then application tag, then the guard, whose width
 * is the domain's); rf_cq_poll_ts() and rf_cq_decode() alike. The bytes
 * are struct mlx5_sigerr_cqe's (providers/mlx5/cq.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x1234, CQN = 0x77, MKEY = 0x12345678 };

static const struct rf_sig_domain dif = { RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512,
					  RF_SIG_T10DIF_REF_REMAP, 0, 0x1234, 0x100, 0 };
static const struct rf_sig_domain crc32c = { RF_SIG_CRC32C, RF_SIG_BLOCK_512, 0, 0, 0, 0,
					     0xffffffff };
static const struct rf_sig_domain crc64 = { RF_SIG_CRC64_XP10, RF_SIG_BLOCK_4096, 0, 0, 0, 0,
					    0 };

/* A signature error CQE at producer index `index`: the bytes a ConnectX writes. */
static struct rf_sig_err_cqe *put_sig(struct rft_cq *t, uint32_t index, uint16_t synd,
				      uint8_t domain, uint64_t exp, uint64_t act, uint64_t off)
{
	struct rf_sig_err_cqe *c = (struct rf_sig_err_cqe *)rft_cqe_put(t, index, RF_CQE_SIG_ERR,
									 0, 0, 0, 0);

	c->expected_trans_sig = rf_htobe32((uint32_t)(exp >> 32));
	c->expected_ref_tag = rf_htobe32((uint32_t)exp);
	c->actual_trans_sig = rf_htobe32((uint32_t)(act >> 32));
	c->actual_ref_tag = rf_htobe32((uint32_t)act);
	c->syndrome = rf_htobe16(synd);
	c->sig_type = RF_SIG_ERR_TYPE_BLOCK;
	c->domain = domain;
	c->mkey = rf_htobe32(MKEY);
	c->sig_err_offset = rf_htobe64(off);
	return c;
}

/* Between two signaled NOPs: its record ends the poll, the NOP after comes next. */
Test(cq_sig, poll_returns_the_record_and_stops_there)
{
	struct rft_cq t;
	struct rft_sq s;
	struct rf_wc wc[4];
	struct rf_sig_err e;

	cr_assert_eq(rft_cq_init(&t, 8, 64, CQN), 0);
	cr_assert_eq(rft_sq_init(&s, RF_QP_RC, 16, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_cq_attach(&t.cq, QPN, &s.sq, NULL, NULL), 0);
	cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 5), 0);
	cr_assert_eq(rf_sq_post_nop(&s.sq, RF_SEND_SIGNALED, 6), 0);
	rft_cqe_put(&t, 0, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 0, 0);
	/* T10-DIF in memory, block 1 (of 520 bytes): guard 0x3f43 << 16 | app 0x1234 */
	put_sig(&t, 1, RF_SIG_ERR_SYND_GUARD, RF_SIG_ERR_DOMAIN_MEMORY,
		0x3f431234ULL << 32 | 0x101, 0xbeef1234ULL << 32 | 0x101, 520);
	rft_cqe_put(&t, 2, RF_CQE_REQ, RF_OPCODE_NOP, QPN, 1, 0);
	memset(wc, 0xa5, sizeof(wc));
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 2, "the record ends the poll");
	cr_assert_eq(wc[0].wr_id, 5);
	cr_assert_eq(wc[1].opcode, RF_WC_SIG_ERR);
	cr_assert_eq(wc[1].status, RF_WC_GENERAL_ERR);
	cr_assert_eq(wc[1].wr_id, 0);
	cr_assert_eq(wc[1].qp_num, 0);
	cr_assert_eq(wc[1].byte_len, 0);
	cr_assert_eq(wc[1].vendor_err, 0);
	cr_assert_eq(t.cq.ci, 2);
	cr_assert_eq(t.dbrec[RF_CQ_SET_CI], rf_htobe32(2));
	/* the entry is the device's again: the decode reads the CQ's copy */
	memset(rft_cqe(&t, 1), 0, 63);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &dif, NULL, &e), 0);
	cr_assert_eq(e.type, RF_SIG_ERR_GUARD);
	cr_assert_eq(e.domain, RF_SIG_ERR_DOMAIN_MEMORY);
	cr_assert_eq(e.mkey, MKEY);
	cr_assert_eq(e.syndrome, RF_SIG_ERR_SYND_GUARD);
	cr_assert_eq(e.expected, 0x3f43);
	cr_assert_eq(e.actual, 0xbeef);
	cr_assert_eq(e.offset, 520);
	/* reported once */
	cr_assert_eq(rf_cq_sig_err(&t.cq, &dif, NULL, &e), 0);
	cr_assert_eq(e.type, RF_SIG_ERR_NONE);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 1);
	cr_assert_eq(wc[0].wr_id, 6);
	cr_assert_eq(rf_sq_space(&s.sq), 16);
	rft_sq_fini(&s);
	rft_cq_fini(&t);
}

/* Two in a row, on 128-byte entries, the second past the wrap: one a poll. */
Test(cq_sig, one_record_a_poll)
{
	struct rft_cq t;
	struct rf_wc wc[4];
	struct rf_sig_err e;

	cr_assert_eq(rft_cq_init(&t, 2, 128, CQN), 0);
	rf_cq_advance(&t.cq, 1);
	put_sig(&t, 1, RF_SIG_ERR_SYND_REFTAG | RF_SIG_ERR_SYND_GUARD, RF_SIG_ERR_DOMAIN_WIRE,
		0x11112222ULL << 32 | 0x100, 0x33334444ULL << 32 | 0x777, 0);
	put_sig(&t, 2, RF_SIG_ERR_SYND_APPTAG, RF_SIG_ERR_DOMAIN_WIRE,
		0x11112222ULL << 32 | 0x100, 0x33334444ULL << 32 | 0x100, 4096);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 1);
	cr_assert_eq(wc[0].opcode, RF_WC_SIG_ERR);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &crc32c, &dif, &e), 0);
	cr_assert_eq(e.type, RF_SIG_ERR_REFTAG, "the reference tag before the guard");
	cr_assert_eq(e.expected, 0x100);
	cr_assert_eq(e.actual, 0x777);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 1);
	cr_assert_eq(wc[0].opcode, RF_WC_SIG_ERR);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &crc32c, &dif, &e), 0);
	cr_assert_eq(e.type, RF_SIG_ERR_APPTAG);
	cr_assert_eq(e.expected, 0x2222);
	cr_assert_eq(e.actual, 0x4444);
	cr_assert_eq(e.offset, 4096);
	cr_assert_eq(rf_cq_poll(&t.cq, wc, 4), 0);
	rft_cq_fini(&t);
}

/* The guard's width is the failing domain's: 16 bits, 32, 64. */
Test(cq_sig, guard_width_from_the_domain)
{
	struct rft_cq t;
	struct rf_sig_err e;
	struct rf_cqe64 *c;

	cr_assert_eq(rft_cq_init(&t, 4, 64, CQN), 0);
	c = (struct rf_cqe64 *)put_sig(&t, 0, RF_SIG_ERR_SYND_GUARD, RF_SIG_ERR_DOMAIN_MEMORY,
				       0x74e93f07ULL << 32 | 0x01020304,
				       0x74e93f06ULL << 32 | 0x05060708, 0);
	cr_assert_eq(rf_cqe_sig_err(c, &dif, NULL, &e), 0);
	cr_assert_eq(e.expected, 0x74e9);
	cr_assert_eq(e.actual, 0x74e9);
	cr_assert_eq(rf_cqe_sig_err(c, &crc32c, NULL, &e), 0);
	cr_assert_eq(e.expected, 0x74e93f07);
	cr_assert_eq(e.actual, 0x74e93f06);
	cr_assert_eq(rf_cqe_sig_err(c, &crc64, NULL, &e), 0);
	cr_assert_eq(e.expected, 0x74e93f0701020304ULL);
	cr_assert_eq(e.actual, 0x74e93f0605060708ULL);
	rft_cq_fini(&t);
}

/* Where mlx5dv_mkey_check() returns EINVAL; the error stays to be read. */
Test(cq_sig, undecodable_is_einval)
{
	struct rft_cq t;
	struct rf_sig_err e;
	struct rf_sig_err_cqe *c;
	struct rf_wc wc;

	cr_assert_eq(rft_cq_init(&t, 4, 64, CQN), 0);
	c = put_sig(&t, 0, RF_SIG_ERR_SYND_GUARD, RF_SIG_ERR_DOMAIN_WIRE, 1, 2, 0);
	cr_assert_eq(rf_cqe_sig_err((struct rf_cqe64 *)c, &dif, NULL, &e), -EINVAL,
		     "the wire has no signature");
	c->domain = 2;
	cr_assert_eq(rf_cqe_sig_err((struct rf_cqe64 *)c, &dif, &dif, &e), -EINVAL);
	c->domain = RF_SIG_ERR_DOMAIN_WIRE | 0xf8;	/* bits 7:3 are not the domain */
	cr_assert_eq(rf_cqe_sig_err((struct rf_cqe64 *)c, NULL, &dif, &e), 0);
	c->sig_type = RF_SIG_ERR_TYPE_TRANSACTION;
	cr_assert_eq(rf_cqe_sig_err((struct rf_cqe64 *)c, NULL, &dif, &e), -EINVAL);
	c->sig_type = RF_SIG_ERR_TYPE_BLOCK;
	c->syndrome = rf_htobe16(0x7ff);
	cr_assert_eq(rf_cqe_sig_err((struct rf_cqe64 *)c, NULL, &dif, &e), -EINVAL);
	cr_assert_eq(rf_cqe_sig_err(rft_cqe_put(&t, 1, RF_CQE_REQ, 0, QPN, 0, 0), &dif, &dif,
				    &e), -EINVAL, "not a signature error CQE");
	cr_assert_eq(rf_cq_poll(&t.cq, &wc, 1), 1);
	cr_assert_eq(rf_cq_sig_err(&t.cq, NULL, &dif, &e), -EINVAL);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &dif, &dif, &e), -EINVAL, "kept after -EINVAL");
	rft_cq_fini(&t);
}

/* rf_cq_poll_ts() and rf_cq_decode(): the same record, the same end. */
Test(cq_sig, poll_ts_and_decode)
{
	struct rft_cq t;
	struct rf_wc_ts wts[4];
	struct rf_wc wc;
	struct rf_sig_err e;
	struct rf_cqe64 *c;

	cr_assert_eq(rft_cq_init(&t, 4, 64, CQN), 0);
	put_sig(&t, 0, RF_SIG_ERR_SYND_REFTAG, RF_SIG_ERR_DOMAIN_MEMORY, 5, 6, 512);
	put_sig(&t, 1, RF_SIG_ERR_SYND_REFTAG, RF_SIG_ERR_DOMAIN_MEMORY, 7, 8, 1024);
	cr_assert_eq(rf_cq_poll_ts(&t.cq, wts, 4), 1);
	cr_assert_eq(wts[0].wc.opcode, RF_WC_SIG_ERR);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &dif, NULL, &e), 0);
	cr_assert_eq(e.expected, 5);
	cr_assert_eq(e.offset, 512);
	c = rf_cq_peek(&t.cq);
	cr_assert(c);
	cr_assert_eq(rf_cq_decode(&t.cq, c, &wc), 1);
	cr_assert_eq(wc.opcode, RF_WC_SIG_ERR);
	cr_assert_eq(wc.status, RF_WC_GENERAL_ERR);
	rf_cq_advance(&t.cq, 1);
	rf_cq_update_ci(&t.cq);
	cr_assert_eq(rf_cq_sig_err(&t.cq, &dif, NULL, &e), 0);
	cr_assert_eq(e.actual, 8);
	cr_assert_eq(e.offset, 1024);
	rft_cq_fini(&t);
}
