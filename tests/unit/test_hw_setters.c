/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The segment setters of hw/wqe.h against the bytes rdma-core's own
 * mlx5dv_set_*_seg() produce, over randomized inputs, and against golden
 * bytes (written out from the formats) for segments mlx5dv has no setter
 * for. Every setter must also write every byte of its segment: each test
 * first fills the destination with garbage.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { ROUNDS = 20000 };

Test(hw_setters, ctrl_seg_matches_mlx5dv)
{
	struct rft_rng rng;
	unsigned i;

	rft_rng_seed(&rng, 0xc0ffee);
	for (i = 0; i < ROUNDS; i++) {
		struct rf_wqe_ctrl_seg ours;
		struct mlx5_wqe_ctrl_seg theirs;
		uint16_t pi = (uint16_t)rft_rand32(&rng);
		uint8_t opcode = (uint8_t)rft_rand32(&rng);
		uint8_t opmod = (uint8_t)rft_rand32(&rng);
		uint32_t qpn = rft_rand32(&rng) & 0xffffff;
		uint8_t fm_ce_se = (uint8_t)rft_rand32(&rng);
		uint8_t ds = (uint8_t)(rft_rand32(&rng) % (RF_WQE_MAX_DS + 1));
		uint32_t imm = rft_rand32(&rng);
		long diff;

		/*
		 * mlx5dv_set_ctrl_seg leaves dci_stream_channel_id alone, so
		 * its buffer starts zeroed; ours starts as garbage and must
		 * come out identical anyway.
		 */
		rft_fill(&rng, &ours, sizeof(ours));
		memset(&theirs, 0, sizeof(theirs));
		rf_set_ctrl_seg(&ours, pi, opcode, opmod, rf_ctrl_qpn(qpn),
				fm_ce_se, ds, (__be32)imm);
		mlx5dv_set_ctrl_seg(&theirs, pi, opcode, opmod, qpn, fm_ce_se,
				    ds, 0, imm);
		diff = rft_first_diff(&ours, &theirs, sizeof(ours));
		cr_assert_eq(diff, -1, "round %u: byte %ld differs (pi %#x op %#x "
			     "opmod %#x qpn %#x fm_ce_se %#x ds %u imm %#x)", i,
			     diff, pi, opcode, opmod, qpn, fm_ce_se, ds, imm);
	}
}

Test(hw_setters, data_seg_matches_mlx5dv)
{
	struct rft_rng rng;
	unsigned i;

	rft_rng_seed(&rng, 0xda7a);
	for (i = 0; i < ROUNDS; i++) {
		struct rf_wqe_data_seg ours;
		struct mlx5_wqe_data_seg theirs;
		uint32_t len = rft_rand32(&rng) & 0x7fffffff;
		uint32_t lkey = rft_rand32(&rng);
		uint64_t addr = rft_rand64(&rng);
		long diff;

		rft_fill(&rng, &ours, sizeof(ours));
		rft_fill(&rng, &theirs, sizeof(theirs));
		rf_set_data_seg(&ours, len, lkey, addr);
		mlx5dv_set_data_seg(&theirs, len, lkey, (uintptr_t)addr);
		diff = rft_first_diff(&ours, &theirs, sizeof(ours));
		cr_assert_eq(diff, -1, "round %u: byte %ld differs (len %#x lkey %#x addr %#llx)",
			     i, diff, len, lkey, (unsigned long long)addr);
	}
}

Test(hw_setters, av_matches_mlx5dv_dgram_seg)
{
	struct rft_rng rng;
	unsigned i;

	rft_rng_seed(&rng, 0xab);
	for (i = 0; i < ROUNDS; i++) {
		struct rf_wqe_av ours;
		struct mlx5_wqe_datagram_seg theirs;
		uint8_t rmac[6], rgid[16];
		uint64_t key = rft_rand64(&rng);
		uint32_t dqp = rft_rand32(&rng) & 0xffffff;
		uint8_t ext = rft_rand32(&rng) & 1;
		uint8_t srs = (uint8_t)rft_rand32(&rng), fl = (uint8_t)rft_rand32(&rng);
		uint16_t rlid = (uint16_t)rft_rand32(&rng);
		uint8_t tclass = (uint8_t)rft_rand32(&rng), hop = (uint8_t)rft_rand32(&rng);
		uint32_t gfl = rft_rand32(&rng);
		long diff;

		rft_fill(&rng, rmac, sizeof(rmac));
		rft_fill(&rng, rgid, sizeof(rgid));
		rft_fill(&rng, &ours, sizeof(ours));
		memset(&theirs, 0, sizeof(theirs));	/* leaves reserved0 alone */
		rf_set_av(&ours, key, dqp, ext, srs, fl, rlid, rmac, tclass, hop,
			  gfl, rgid);
		mlx5dv_set_dgram_seg(&theirs, key, dqp, ext, srs, fl, rlid, rmac,
				     tclass, hop, gfl, rgid);
		diff = rft_first_diff(&ours, &theirs, sizeof(ours));
		cr_assert_eq(diff, -1, "round %u: byte %ld differs", i, diff);
	}
}

/* What libmlx5 posts for UD: the AH's AV, ext bit | remote QPN, the Q_Key. */
Test(hw_setters, datagram_seg_from_ah_av)
{
	struct rf_wqe_av ah_av, seg;
	struct rft_rng rng;
	uint8_t *b = (uint8_t *)&seg;

	rft_rng_seed(&rng, 7);
	rft_fill(&rng, &ah_av, sizeof(ah_av));
	ah_av.dqp_dct = 0;			/* an AH carries neither */
	rft_fill(&rng, &seg, sizeof(seg));
	rf_set_datagram_seg(&seg, &ah_av, 0x123456, 0x11223344);

	cr_expect_eq(b[0], 0x11); cr_expect_eq(b[1], 0x22);
	cr_expect_eq(b[2], 0x33); cr_expect_eq(b[3], 0x44);
	cr_expect_eq(b[4] | b[5] | b[6] | b[7], 0);
	cr_expect_eq(b[8], 0x80); cr_expect_eq(b[9], 0x12);
	cr_expect_eq(b[10], 0x34); cr_expect_eq(b[11], 0x56);
	cr_expect_eq(memcmp(b + 12, (uint8_t *)&ah_av + 12, 36), 0,
		     "bytes 12..47 are the AH's address vector");
}

static void expect_bytes(const void *seg, const uint8_t *want, size_t n,
			 const char *what)
{
	long diff = rft_first_diff(seg, want, n);

	cr_expect_eq(diff, -1, "%s: byte %ld is %#x, want %#x", what, diff,
		     diff < 0 ? 0 : ((const uint8_t *)seg)[diff],
		     diff < 0 ? 0 : want[diff]);
}

/* The word encoders of one-BB WQEs: the bytes of the segment setters. */
Test(hw_setters, bb_words_match_setters)
{
	struct rft_rng rng;
	unsigned i;

	rft_rng_seed(&rng, 0xbb);
	for (i = 0; i < ROUNDS; i++) {
		struct rf__wqe_bb bb;
		struct {
			struct rf_wqe_raddr_seg r;
			struct rf_wqe_atomic_seg a;
			struct mlx5_wqe_data_seg d;
		} want;
		uint64_t raddr = rft_rand64(&rng), addr = rft_rand64(&rng);
		uint64_t swap = rft_rand64(&rng), cmp = rft_rand64(&rng);
		uint32_t rkey = rft_rand32(&rng), lkey = rft_rand32(&rng);
		uint32_t len = rft_rand32(&rng) & 0x7fffffff;
		long diff;

		rft_fill(&rng, &want, sizeof(want));
		rf_set_raddr_seg(&want.r, raddr, rkey);
		rf_set_atomic_seg(&want.a, swap, cmp);
		mlx5dv_set_data_seg(&want.d, len, lkey, (uintptr_t)addr);
		rf__wqe_bb_raddr(&bb, 0, raddr, rkey);
		rf__wqe_bb_atomic(&bb, 2, swap, cmp);
		rf__wqe_bb_data(&bb, 4, len, lkey, addr);
		diff = rft_first_diff(bb.q, &want, sizeof(want));
		cr_assert_eq(diff, -1, "round %u: byte %ld differs", i, diff);
	}
}

Test(hw_setters, golden_raddr_atomic)
{
	struct rf_wqe_raddr_seg r;
	struct rf_wqe_atomic_seg a;
	static const uint8_t want_r[16] = {
		1, 2, 3, 4, 5, 6, 7, 8, 0xa, 0xb, 0xc, 0xd, 0, 0, 0, 0 };
	static const uint8_t want_a[16] = {
		0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
		0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27 };

	memset(&r, 0xee, sizeof(r));
	rf_set_raddr_seg(&r, 0x0102030405060708ULL, 0x0a0b0c0d);
	expect_bytes(&r, want_r, sizeof(want_r), "raddr");

	memset(&a, 0xee, sizeof(a));
	rf_set_atomic_seg(&a, 0x1011121314151617ULL, 0x2021222324252627ULL);
	expect_bytes(&a, want_a, sizeof(want_a), "atomic");
}

Test(hw_setters, golden_masked_atomics)
{
	struct rf_wqe_masked_cs32_seg cs32;
	struct rf_wqe_masked_cs64_seg cs64;
	struct rf_wqe_masked_fa32_seg fa32;
	struct rf_wqe_masked_fa64_seg fa64;
	static const uint8_t want_cs32[16] = {
		0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4 };
	static const uint8_t want_cs64[32] = {
		0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
		0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4 };
	static const uint8_t want_fa32[16] = {
		0xde, 0xad, 0xbe, 0xef, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t want_fa64[16] = {
		0, 0, 0, 0, 0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	memset(&cs32, 0xee, sizeof(cs32));
	rf_set_masked_cs32_seg(&cs32, 1, 2, 3, 4);
	expect_bytes(&cs32, want_cs32, 16, "masked cs32");

	memset(&cs64, 0xee, sizeof(cs64));
	rf_set_masked_cs64_seg(&cs64, 1, 2, 3, 4);
	expect_bytes(&cs64, want_cs64, 32, "masked cs64");

	memset(&fa32, 0xee, sizeof(fa32));
	rf_set_masked_fa32_seg(&fa32, 0xdeadbeef, 0x80000000);
	expect_bytes(&fa32, want_fa32, 16, "masked fa32");

	memset(&fa64, 0xee, sizeof(fa64));
	rf_set_masked_fa64_seg(&fa64, 9, ~0ULL);
	expect_bytes(&fa64, want_fa64, 16, "masked fa64");

	cr_expect_eq(RF_OPMOD_EXT_ATOMIC_4B, 8 | (2 - 2));
	cr_expect_eq(RF_OPMOD_EXT_ATOMIC_8B, 8 | (3 - 2));
}

Test(hw_setters, golden_xrc_inline_terminator_srq_next)
{
	struct rf_wqe_xrc_seg x;
	struct rf_wqe_inline_seg in;
	struct rf_wqe_data_seg t;
	struct rf_wqe_srq_next_seg n;
	static const uint8_t want_x[16] = { 0, 0xab, 0xcd, 0xef };
	static const uint8_t want_in[4] = { 0x80, 0, 0x01, 0x23 };
	static const uint8_t want_t[16] = { 0, 0, 0, 0, 0, 0, 1, 0 };
	static const uint8_t want_n[16] = { 0, 0, 0x12, 0x34 };

	memset(&x, 0xee, sizeof(x));
	rf_set_xrc_seg(&x, 0xabcdef);
	expect_bytes(&x, want_x, 16, "xrc");

	memset(&in, 0xee, sizeof(in));
	rf_set_inline_hdr(&in, 0x123);
	expect_bytes(&in, want_in, 4, "inline header");

	memset(&t, 0xee, sizeof(t));
	rf_set_recv_terminator(&t);
	expect_bytes(&t, want_t, 16, "receive terminator");

	memset(&n, 0xee, sizeof(n));
	rf_set_srq_next_seg(&n, 0x1234);
	expect_bytes(&n, want_n, 16, "srq next");

	cr_expect_eq(RF_INLINE_DS(1), 1);
	cr_expect_eq(RF_INLINE_DS(12), 1);
	cr_expect_eq(RF_INLINE_DS(13), 2);
	cr_expect_eq(RF_INLINE_DS(28), 2);
	cr_expect_eq(RF_INLINE_DS(29), 3);
	cr_expect_eq(RF_WQE_BBS(1), 1);
	cr_expect_eq(RF_WQE_BBS(4), 1);
	cr_expect_eq(RF_WQE_BBS(5), 2);
	cr_expect_eq(RF_WQE_BBS(12), 3);
}

/*
 * The type-2 bind WQE body libmlx5 builds (rdma-core providers/mlx5/qp.c,
 * set_umr_control_seg() and set_umr_mkey_seg()), byte by byte.
 */
Test(hw_setters, golden_umr_bind)
{
	struct rf_wqe_umr_ctrl_seg u;
	struct rf_wqe_mkey_context_seg m;
	struct rf_wqe_umr_klm_seg k;
	uint8_t want_u[48] = { 0xb0, 0, 0, 0, 0, 4, 0, 0,
			       0, 0, 0, 0, 0x20, 0x3c, 0x60, 0x41 };
	uint8_t want_m[64] = { 0, 0, 0x30, 0, 0x00, 0x12, 0x34, 0x57,
			       0, 0, 0, 0, 0, 0, 0, 0,
			       0, 0, 0, 0, 0, 0, 0x10, 0,	/* start 0x1000 */
			       0, 0, 0, 0, 0, 0, 0x20, 0 };	/* len 0x2000 */
	uint8_t want_k[16] = { 0, 0, 0x20, 0, 0xaa, 0xbb, 0xcc, 0xdd,
			       0, 0, 0, 0, 0, 0, 0x10, 0 };

	memset(&u, 0xee, sizeof(u));
	rf_set_umr_ctrl_seg(&u, RF_UMR_CTRL_FLAG_INLINE | RF_UMR_CTRL_FLAG_CHECK_FREE |
			    RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET,
			    RF_UMR_KLM_OCTOWORDS(1),
			    RF_UMR_MKEY_MASK_BIND | RF_UMR_MKEY_MASK_QPN);
	expect_bytes(&u, want_u, 48, "umr ctrl");

	memset(&m, 0xee, sizeof(m));
	rf_set_mkey_context_seg(&m, 0, RF_MKEY_ACCESS_REMOTE_WRITE |
				RF_MKEY_ACCESS_REMOTE_READ,
				(0x1234U << 8) | 0x57, 0x1000, 0x2000);
	expect_bytes(&m, want_m, 64, "mkey context");

	memset(&k, 0xee, sizeof(k));
	rf_set_umr_klm_seg(&k, 0x2000, 0xaabbccdd, 0x1000);
	expect_bytes(&k, want_k, 16, "klm");
}
