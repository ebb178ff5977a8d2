/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_umr.h: memory-key UMRs against a model of what libmlx5's
 * mlx5dv_wr_mr_list(), mlx5dv_wr_mr_interleaved() and
 * mlx5dv_wr_mkey_configure() with its setters write (rdma-core 44,
 * providers/mlx5/qp.c), built here field by field in mlx5dv.h's own
 * structs, over random inputs; the signature block's BSF and SET_PSV
 * WQEs field by field; the errors, with nothing written. The same WQEs
 * against libmlx5's own, on its send queue: tests/e2e/test_e2e_umr.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

#define QPN 0x1234u
#define MKEY 0x00abcd17u

static uint8_t *wqe(struct rft_sq *t, uint32_t pi)
{
	return t->buf + (size_t)(pi & (t->sq.wqe_cnt - 1)) * 64;
}

/*
 * libmlx5's memory-key UMR at pi, in ref (4 BB-aligned 64-byte blocks
 * of 16 BBs): ctrl, UMR control, mkey context, then the translations
 * either as KLMs (sge) or as a repeat block (ent), padded to 64 bytes.
 * Returns the DS.
 */
static unsigned model(uint8_t *ref, uint32_t pi, uint32_t access_ibv, int keep,
		      const struct rf_sge *sge, const struct rf_umr_interleaved *ent,
		      uint32_t n, uint32_t repeat, uint8_t fm_ce_se)
{
	struct mlx5_wqe_ctrl_seg *c = (struct mlx5_wqe_ctrl_seg *)ref;
	struct mlx5_wqe_umr_ctrl_seg *u = (struct mlx5_wqe_umr_ctrl_seg *)(c + 1);
	struct mlx5_wqe_mkey_context_seg *m = (struct mlx5_wqe_mkey_context_seg *)(u + 1);
	uint8_t *x = (uint8_t *)(m + 1);
	uint64_t mask = MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN;
	uint64_t len = 0;
	unsigned xlat, ds;

	memset(ref, 0, 16 * 64);
	if (!keep) {
		mask |= MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
			MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC;
		m->access_flags =
			(access_ibv & IBV_ACCESS_REMOTE_ATOMIC ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC : 0) |
			(access_ibv & IBV_ACCESS_REMOTE_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE : 0) |
			(access_ibv & IBV_ACCESS_REMOTE_READ ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ : 0) |
			(access_ibv & IBV_ACCESS_LOCAL_WRITE ? MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE : 0);
	}
	if (sge) {
		struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)x;

		for (uint32_t i = 0; i < n; i++) {
			d[i].addr = htobe64(sge[i].addr);
			d[i].lkey = htobe32(sge[i].lkey);
			d[i].byte_count = htobe32(sge[i].length);
			len += sge[i].length;
		}
		xlat = n * 16;
	} else {
		struct mlx5_wqe_umr_repeat_block_seg *rb = (struct mlx5_wqe_umr_repeat_block_seg *)x;
		struct mlx5_wqe_umr_repeat_ent_seg *eb = (struct mlx5_wqe_umr_repeat_ent_seg *)(rb + 1);
		uint64_t bc = 0;

		rb->op = htobe32(0x400);
		rb->num_ent = htobe16((uint16_t)n);
		rb->repeat_count = htobe32(repeat);
		for (uint32_t i = 0; i < n; i++) {
			bc += ent[i].bytes_count;
			eb[i].va = htobe64(ent[i].addr);
			eb[i].byte_count = htobe16((uint16_t)ent[i].bytes_count);
			eb[i].stride = htobe16((uint16_t)(ent[i].bytes_count + ent[i].bytes_skip));
			eb[i].memkey = htobe32(ent[i].lkey);
		}
		rb->byte_count = htobe32((uint32_t)bc);
		len = bc * repeat;
		xlat = (n + 1) * 16;
	}
	m->qpn_mkey = htobe32(0xffffff00 | (MKEY & 0xff));
	m->len = htobe64(len);
	u->flags = MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	u->mkey_mask = htobe64(mask);
	u->klm_octowords = htobe16((uint16_t)(((xlat + 63) & ~63u) / 16));
	ds = 1 + 3 + 4 + ((xlat + 63) & ~63u) / 16;
	mlx5dv_set_ctrl_seg(c, (uint16_t)pi, MLX5_OPCODE_UMR, 0, QPN, fm_ce_se, (uint8_t)ds, 0,
			    htobe32(MKEY));
	return ds;
}

static void cmp_wqe(struct rft_sq *t, uint32_t pi, const uint8_t *ref, unsigned ds,
		    const char *what, unsigned round)
{
	for (unsigned i = 0; i < ds * 16; i++) {
		uint8_t got = wqe(t, pi + i / 64)[i % 64];

		cr_assert_eq(got, ref[i], "%s %u: byte %u rdmafast %#x model %#x", what, round, i,
			     got, ref[i]);
	}
}

/* The fence NOP after a UMR at pi. */
static void check_fence_nop(struct rft_sq *t, uint32_t pi)
{
	uint8_t *w = wqe(t, pi);

	cr_assert_eq(w[3], MLX5_OPCODE_NOP, "a NOP follows the UMR");
	cr_assert_eq(w[7] & 0x3f, 1);
	cr_assert_eq(w[11], MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE, "fenced, unsignaled");
}

static uint32_t rand_access(struct rft_rng *r, uint32_t *ibv)
{
	static const int bits[4] = { IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_READ,
				     IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_ATOMIC };
	static const uint32_t ours[4] = { RF_MKEY_ACCESS_LOCAL_WRITE, RF_MKEY_ACCESS_REMOTE_READ,
					  RF_MKEY_ACCESS_REMOTE_WRITE, RF_MKEY_ACCESS_ATOMIC };
	uint32_t a = 0, k = rft_rand32(r);

	*ibv = 0;
	for (int i = 0; i < 4; i++)
		if (k & (1u << i)) {
			*ibv |= (uint32_t)bits[i];
			a |= ours[i];
		}
	return a;
}

/*
 * KLM lists of 1 to RF_UMR_MAX_KLM entries and interleaved layouts of 1
 * to RF_UMR_MAX_INTERLEAVED (in turn), access set or kept, signaled or
 * not, across the queue's wrap.
 */
Test(umr, mr_list_and_interleaved_match_libmlx5_model)
{
	struct rft_sq t;
	struct rft_rng r;
	uint8_t ref[16 * 64];
	struct rf_sge sge[RF_UMR_MAX_KLM];
	struct rf_umr_interleaved ent[RF_UMR_MAX_KLM];	/* filled as far as sge */

	rft_rng_seed(&r, 0x5eed0033);
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 64, 256, 64, 4, 0, QPN), 0);
	for (unsigned round = 0; round < 4000; round++) {
		int list = round & 1, keep = rft_rand32(&r) % 4 == 0;
		uint32_t n = 1 + rft_rand32(&r) % (list ? RF_UMR_MAX_KLM : RF_UMR_MAX_INTERLEAVED);
		uint32_t ibv, access = rand_access(&r, &ibv), pi, ds;
		uint32_t flags = rft_rand32(&r) & 1 ? RF_SEND_SIGNALED : 0;
		uint32_t repeat = rft_rand32(&r);

		if (keep)
			access |= RF_UMR_ACCESS_KEEP;
		for (uint32_t i = 0; i < n; i++) {
			sge[i].addr = ent[i].addr = rft_rand64(&r);
			sge[i].length = rft_rand32(&r) >> 2;
			sge[i].lkey = ent[i].lkey = rft_rand32(&r);
			ent[i].bytes_count = sge[i].length % 0x8000;
			ent[i].bytes_skip = rft_rand32(&r) % 0x8000;
		}
		memset(t.buf, 0xa5, 64 * 64);	/* every byte must be written */
		if (list)
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, access, sge, n, flags, round), 0);
		else
			cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, access, repeat, ent, n,
							       flags, round), 0);
		/* the UMR's index, after any padding */
		pi = t.sq.pi - 1 - (2 + (n + (list ? 3 : 4)) / 4);
		ds = model(ref, pi, ibv, keep, list ? sge : NULL, list ? NULL : ent, n, repeat,
			   (uint8_t)flags);
		cmp_wqe(&t, pi, ref, ds, list ? "mr_list" : "mr_interleaved", round);
		check_fence_nop(&t, t.sq.pi - 1);
		cr_assert_eq(t.slot[pi & 63].wr_id, round);
		rf_sq_retire(&t.sq, (uint16_t)(t.sq.pi - 1));
	}
	rft_sq_fini(&t);
}

/*
 * Post the list UMR of plain_umr() with access into b, and WQE 0 (that
 * plain UMR) into a with b's WQE index: where a and b then differ is what
 * access adds.
 */
static void umr_beside_plain(struct rft_sq *t, uint32_t access, uint8_t *a, uint8_t *b)
{
	struct rf_sge sge = { 0x1000, 4096, 0x77 };
	uint32_t at = t->sq.pi;

	cr_assert_eq(rf_sq_post_mr_list(&t->sq, MKEY, access, &sge, 1, 0, 1), 0);
	memcpy(b, wqe(t, at), 192);
	memcpy(a, wqe(t, 0), 192);
	a[1] = b[1];
	a[2] = b[2];	/* the WQE index */
}

/* t, its WQE 0 a one-SGE list UMR with local write. */
static void plain_umr(struct rft_sq *t)
{
	struct rf_sge sge = { 0x1000, 4096, 0x77 };

	cr_assert_eq(rft_sq_init(t, RF_QP_RC, 16, 256, 64, 4, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_mr_list(&t->sq, MKEY, RF_MKEY_ACCESS_LOCAL_WRITE, &sge, 1, 0, 1), 0);
}

/* RF_UMR_BSF_DISABLE adds the BSF's bit to the mask, and nothing else. */
Test(umr, bsf_disable_is_one_mask_bit)
{
	struct rft_sq t;
	uint8_t a[256], b[256];

	plain_umr(&t);
	umr_beside_plain(&t, RF_MKEY_ACCESS_LOCAL_WRITE | RF_UMR_BSF_DISABLE, a, b);
	a[16 + 8 + 6] |= (uint8_t)(MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE >> 8);
	cr_assert_eq(rft_first_diff(a, b, 192), -1, "byte %ld", rft_first_diff(a, b, 192));
	rft_sq_fini(&t);
}

/*
 * RF_UMR_SIG_ERR_CNT(n) adds the SIG_ERR bit to the mask and n's low bit
 * as the context's sig_err_cnt (flags_pd bit 26, as libmlx5's
 * upd_mkc_sig_err_cnt() sets them), and nothing else.
 */
Test(umr, sig_err_cnt_is_a_mask_bit_and_a_context_bit)
{
	struct rft_sq t;
	uint8_t a[256], b[256];

	plain_umr(&t);
	for (uint32_t n = 0; n < 3; n++) {
		umr_beside_plain(&t, RF_MKEY_ACCESS_LOCAL_WRITE | RF_UMR_SIG_ERR_CNT(n), a, b);
		a[16 + 8 + 6] |= (uint8_t)(MLX5_WQE_UMR_CTRL_MKEY_MASK_SIG_ERR >> 8);
		a[64 + 12] |= (uint8_t)((n & 1) << 2);
		cr_assert_eq(rft_first_diff(a, b, 192), -1, "n %u: byte %ld", n,
			     rft_first_diff(a, b, 192));
	}
	rft_sq_fini(&t);
}

/*
 * The signature block: a T10-DIF memory domain (CRC guard, seed all
 * ones, reference tag remapped) and a CRC32 wire domain, then T10-DIF on
 * both with the same block size (same structure: the copy mask), as
 * libmlx5's mlx5_umr_fill_sig_bsf() fills the BSF; the UMR (suppressed
 * completion, BSF after the KLMs) and the SET_PSV WQEs.
 */
Test(umr, sig_block_bsf_and_psvs)
{
	struct rf_sig_domain mem = { RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512,
				     RF_SIG_T10DIF_REF_REMAP, 0xffff, 0x1234, 0x89abcdef, 0 };
	struct rf_sig_domain wire = { RF_SIG_CRC32, RF_SIG_BLOCK_4096, 0, 0, 0, 0, 0 };
	struct rf_sig_block sig;
	struct rf_sge sge[3] = { { 0x10000, 4096, 0x11 }, { 0x20000, 4096, 0x22 },
				 { 0x30000, 512, 0x33 } };
	struct rft_sq t;
	const uint8_t *w, *bsf;

	cr_assert_eq(rf_sig_block_init(&sig, &mem, 0x000101, &wire, 0x000202, 0xff, 0, 0), 0);
	cr_assert_eq(sig.bsf.bsf_size_sbs, 2 << 6, "with inline, no SBS");
	cr_assert_eq(sig.bsf.check_byte_mask, 0xff);
	cr_assert_eq(sig.bsf.raw_data_size, htobe32(0xffffffff));
	cr_assert_eq(sig.bsf.m_bfs_psv, htobe32(0x000101), "T10-DIF: no BFS, the PSV");
	cr_assert_eq(sig.bsf.w_bfs_psv, htobe32((0x20u | 0x2 | 0x1) << 24 | 0x000202),
		     "CRC32, per block, seed 0");
	cr_assert_eq(sig.bsf.mem_sel, 1, "512");
	cr_assert_eq(sig.bsf.wire_sel, 3, "4096");
	cr_assert_eq(sig.bsf.m_inl.vld_refresh, htobe16(0xc000));
	cr_assert_eq(sig.bsf.m_inl.dif_apptag, htobe16(0x1234));
	cr_assert_eq(sig.bsf.m_inl.dif_reftag, htobe32(0x89abcdef));
	cr_assert_eq(sig.bsf.m_inl.sig_type, 1, "CRC guard");
	cr_assert_eq(sig.bsf.m_inl.rp_inv_seed, 0x80 | 0x08, "repeat, seed");
	cr_assert_eq(sig.bsf.m_inl.dif_inc_ref_guard_check, 0x40, "reference tag increments");
	cr_assert_eq(sig.bsf.m_inl.dif_app_bitmask_check, htobe16(0xffff));
	cr_assert_eq(sig.bsf.w_inl.vld_refresh, 0, "no inline part for a CRC");
	cr_assert_eq(sig.mem_ts, 0xffffull << 48 | 0x1234ull << 32 | 0x89abcdef);
	cr_assert_eq(sig.wire_ts, 0);

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, 64, 4, 0, QPN), 0);
	memset(t.buf, 0xa5, 16 * 64);
	cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, RF_MKEY_ACCESS_LOCAL_WRITE, sge, 3, &sig,
					    RF_SEND_SIGNALED, 9), 0);
	cr_assert_eq(t.sq.pi, 4 + 2 + 1, "UMR (4 BBs), two SET_PSVs, the NOP");
	w = wqe(&t, 0);
	cr_assert_eq(w[3], MLX5_OPCODE_UMR);
	cr_assert_eq(w[7] & 0x3f, 1 + 3 + 4 + 4 + 4, "ctrl, UMR ctrl, mkey, KLMs, BSF");
	cr_assert_eq(w[11], 0, "the UMR's completion suppressed");
	cr_assert_eq(be16toh(*(const __be16 *)(w + 16 + 6)), 4, "bsf_octowords");
	cr_assert_eq(be64toh(*(const uint64_t *)(w + 16 + 8)),
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY |
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE |
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
		     MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC);
	cr_assert_eq(be32toh(*(const __be32 *)(wqe(&t, 1) + 12)), 1u << 30, "flags_pd: BSF on");
	cr_assert_eq(be64toh(*(const uint64_t *)(wqe(&t, 1) + 24)), 4096 + 4096 + 512);
	bsf = wqe(&t, 3);
	cr_assert_eq(memcmp(bsf, &sig.bsf, 64), 0, "the BSF after the KLMs' block");
	w = wqe(&t, 4);
	cr_assert_eq(w[3], 0x20, "SET_PSV");
	cr_assert_eq(w[7] & 0x3f, 2);
	cr_assert_eq(w[11], MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE, "memory first, unsignaled");
	cr_assert_eq(be32toh(*(const __be32 *)(w + 16)), 0x000101);
	cr_assert_eq(be64toh(*(const uint64_t *)(w + 24)), sig.mem_ts);
	w = wqe(&t, 5);
	cr_assert_eq(w[11], MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE | MLX5_WQE_CTRL_CQ_UPDATE,
		     "the wire's PSV reports the key");
	cr_assert_eq(be32toh(*(const __be32 *)(w + 16)), 0x000202);
	check_fence_nop(&t, 6);

	/* one domain: one SET_PSV, signaled */
	cr_assert_eq(rf_sig_block_init(&sig, NULL, 0, &wire, 0x303, 0xf0, 0, 0), 0);
	cr_assert_eq(sig.mem_psv, RF_SIG_NO_PSV);
	cr_assert_eq(sig.bsf.m_bfs_psv, 0);
	cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge, 1, &sig, RF_SEND_SIGNALED, 10), 0);
	cr_assert_eq(t.sq.pi, 7 + 4 + 1 + 1);
	cr_assert_eq(wqe(&t, 11)[11], MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE | MLX5_WQE_CTRL_CQ_UPDATE);

	/* same structure: T10-DIF on both, 512-byte blocks; the guards differ */
	wire = mem;
	wire.type = RF_SIG_T10DIF_CSUM;
	wire.ref_tag = 7;
	cr_assert_eq(rf_sig_block_init(&sig, &mem, 1, &wire, 2, 0xcf, 0, 0), 0);
	cr_assert_eq(sig.bsf.bsf_size_sbs, 2 << 6 | 1 << 4, "SBS");
	cr_assert_eq(sig.bsf.wire_sel, 0x30, "copy the application tag only");
	cr_assert_eq(sig.bsf.w_inl.sig_type, 2, "IP checksum guard");
	cr_assert_eq(rf_sig_block_init(&sig, &mem, 1, &wire, 2, 0xcf, RF_SIG_COPY_MASK, 0x0f), 0);
	cr_assert_eq(sig.bsf.wire_sel, 0x0f, "the copy mask given");
	wire.block = RF_SIG_BLOCK_4096;
	cr_assert_eq(rf_sig_block_init(&sig, &mem, 1, &wire, 2, 0xcf, RF_SIG_COPY_MASK, 0x0f),
		     -EINVAL, "a copy mask needs the same structure");
	rft_sq_fini(&t);
}

/* CRC seeds and escapes, as mlx5_umr_crc_bfs() and the T10-DIF inline part encode them. */
Test(umr, sig_crc_and_escape_encodings)
{
	struct rf_sig_domain d = { RF_SIG_CRC32C, RF_SIG_BLOCK_520, 0, 0, 0, 0, 0xffffffff };
	struct rf_sig_block s;

	cr_assert_eq(rf_sig_block_init(&s, &d, 5, NULL, 0, 0, 0, 0), 0);
	cr_assert_eq(s.bsf.m_bfs_psv, htobe32((0x40u | 0x2) << 24 | 5), "seed all ones: no seed bit");
	cr_assert_eq(s.mem_ts, 0xffffffffull << 32);
	cr_assert_eq(s.bsf.mem_sel, 2);
	cr_assert_eq(s.wire_psv, RF_SIG_NO_PSV);
	d.type = RF_SIG_CRC64_XP10;
	d.seed = ~0ULL;
	d.block = RF_SIG_BLOCK_4160;
	cr_assert_eq(rf_sig_block_init(&s, &d, 5, NULL, 0, 0, 0, 0), 0);
	cr_assert_eq(s.bsf.m_bfs_psv, htobe32((0x50u | 0x2) << 24 | 5));
	cr_assert_eq(s.mem_ts, ~0ULL);
	cr_assert_eq(s.bsf.mem_sel, 4);
	d.type = RF_SIG_T10DIF_CSUM;
	d.bg = 0;
	d.block = RF_SIG_BLOCK_4048;
	d.dif_flags = RF_SIG_T10DIF_APP_ESCAPE | RF_SIG_T10DIF_APP_REF_ESCAPE;
	cr_assert_eq(rf_sig_block_init(&s, NULL, 0, &d, 6, 0, 0, 0), 0);
	cr_assert_eq(s.bsf.w_inl.dif_inc_ref_guard_check, 0x2, "app+ref escape wins");
	cr_assert_eq(s.bsf.w_inl.rp_inv_seed, 0x80, "guard seed 0");
	cr_assert_eq(s.bsf.wire_sel, 6);
	d.dif_flags = RF_SIG_T10DIF_APP_ESCAPE;
	cr_assert_eq(rf_sig_block_init(&s, NULL, 0, &d, 6, 0, 0, 0), 0);
	cr_assert_eq(s.bsf.w_inl.dif_inc_ref_guard_check, 0x1);
}

/* What libmlx5 refuses with EINVAL, refused; nothing written. */
Test(umr, sig_block_init_errors)
{
	struct rf_sig_domain ok = { RF_SIG_CRC32, RF_SIG_BLOCK_512, 0, 0, 0, 0, 0 }, d;
	struct rf_sig_block s;

	cr_assert_eq(rf_sig_block_init(&s, NULL, 0, NULL, 0, 0, 0, 0), -EINVAL, "no domain");
	cr_assert_eq(rf_sig_block_init(&s, &ok, 0, NULL, 0, 0, 2, 0), -EINVAL, "unknown flag");
	cr_assert_eq(rf_sig_block_init(&s, &ok, 0x1000000, NULL, 0, 0, 0, 0), -EINVAL, "PSV > 24 bits");
	d = ok;
	d.type = 0;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "type 0");
	d = ok;
	d.block = 5;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "block size");
	d = ok;
	d.seed = 1;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "CRC32 seed");
	d.seed = ~0ULL;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "CRC32 seed of 64 bits");
	d = ok;
	d.type = RF_SIG_T10DIF_CRC;
	d.bg = 1;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "guard seed");
	d.bg = 0;
	d.dif_flags = 8;
	cr_assert_eq(rf_sig_block_init(&s, &d, 0, NULL, 0, 0, 0, 0), -EINVAL, "T10-DIF flag");
}

/* Bad posts: -EINVAL with nothing written; a full queue: -ENOSPC. */
Test(umr, errors_write_nothing)
{
	struct rft_sq t;
	struct rf_sge sge[RF_UMR_MAX_KLM + 1];
	struct rf_umr_interleaved ent[2] = { { 0x1000, 0x8000, 0x8000, 1 }, { 0, 1, 0, 2 } };
	struct rf_sig_domain dom = { RF_SIG_CRC32, RF_SIG_BLOCK_512, 0, 0, 0, 0, 0 };
	struct rf_sig_block sig;

	memset(sge, 0, sizeof(sge));
	sge[0].length = 0x80000000u;
	sge[1].length = 0x80000000u;
	cr_assert_eq(rf_sig_block_init(&sig, &dom, 1, NULL, 0, 0, 0, 0), 0);
	for (unsigned kind = RF_QP_RC; kind <= RF_QP_DCI; kind++) {
		cr_assert_eq(rft_sq_init(&t, kind, 16, 256, 64, 4, 0, QPN), 0);
		memset(t.buf, 0xa5, 16 * 64);
		if (kind != RF_QP_RC) {
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, 1, 0, 1), -EINVAL);
			cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, 0, 1, ent + 1, 1, 0, 1),
				     -EINVAL);
			cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge + 2, 1, &sig, 0, 1),
				     -EINVAL);
		} else {
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, 0, 0, 1), -EINVAL);
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, RF_UMR_MAX_KLM + 1, 0, 1),
				     -EINVAL);
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, RF_MKEY_ACCESS_LOCAL_READ, sge, 1,
							0, 1), -EINVAL, "access outside the four");
			cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 1u << 14, sge, 1, 0, 1), -EINVAL);
			cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, 0, 1, ent, 2, 0, 1),
				     -EINVAL, "stride over 16 bits");
			cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, 0, 1, ent + 1, 0, 0, 1),
				     -EINVAL);
			cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, 0, 1, ent + 1,
							       RF_UMR_MAX_INTERLEAVED + 1, 0, 1),
				     -EINVAL);
			cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge, 2, &sig, 0, 1),
				     -EINVAL, "4 GiB: over the BSF's raw data size");
			cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge + 2,
							    RF_UMR_MAX_KLM_SIG + 1, &sig, 0, 1),
				     -EINVAL);
		}
		cr_assert_eq(t.sq.pi, 0);
		for (unsigned i = 0; i < 16 * 64; i++)
			cr_assert_eq(t.buf[i], 0xa5, "kind %u: byte %u written", kind, i);
		rft_sq_fini(&t);
	}

	/* full: 16 BBs hold a 3-BB UMR and its NOP 4 times, the fifth does not fit */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, 64, 4, 0, QPN), 0);
	sge[0].length = 64;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, 1, 0, 1), 0, "post %d", i);
	cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge, 1, &sig, 0, 1), -ENOSPC,
		     "4 BBs, a SET_PSV and the NOP in 4");
	cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, 1, 0, 1), 0);
	cr_assert_eq(t.sq.pi, 16);
	cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, sge, 1, 0, 1), -ENOSPC);
	cr_assert_eq(rf_sq_post_mr_interleaved(&t.sq, MKEY, 0, 1, ent + 1, 1, 0, 1), -ENOSPC);
	cr_assert_eq(rf_sq_post_mr_list_sig(&t.sq, MKEY, 0, sge, 1, &sig, 0, 1), -ENOSPC);
	cr_assert_eq(t.sq.pi, 16);
	rft_sq_fini(&t);
}

/*
 * RF_SEND_RING on a UMR rings it and its fence NOP, with anything posted
 * before them unrung: the 8-byte doorbell of the NOP, the last WQE (never
 * BlueFlame, with more than one waiting), the dbrec at pi; and the ring
 * is recorded, so that the next lone WQE goes out by BlueFlame again (or
 * by its doorbell, on a queue without BlueFlame).
 */
Test(umr, ring_is_the_fence_nops_doorbell)
{
	for (uint32_t bf_size = 0; bf_size <= 256; bf_size += 256) {
		struct rft_sq t;
		struct rf_sge sge = { 0x1000, 4096, 0x77 };
		uint8_t *half;

		cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, bf_size, 64, 4, 0, QPN), 0);
		cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 1), 0);	/* unrung */
		half = t.sq.bf.cur;
		cr_assert_eq(rf_sq_post_mr_list(&t.sq, MKEY, 0, &sge, 1, RF_SEND_RING, 2), 0);
		cr_assert_eq(t.sq.pi, 1 + 3 + 1, "the WRITE, the 3-BB UMR, its NOP");
		check_fence_nop(&t, 4);
		cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(5));
		cr_assert_eq(memcmp(half, wqe(&t, 4), 8), 0, "bf %u: the NOP's doorbell", bf_size);
		cr_assert_neq(memcmp(half + 8, wqe(&t, 4) + 8, 8), 0, "bf %u: no BlueFlame", bf_size);
		if (bf_size)
			cr_assert_neq(t.sq.bf.cur, half, "the next ring takes the other half");
		half = t.sq.bf.cur;
		cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 3), 0);
		cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(6));
		cr_assert_eq(memcmp(half, wqe(&t, 5), bf_size ? 64 : 8), 0,
			     "bf %u: the next WRITE alone", bf_size);
		rft_sq_fini(&t);
	}
}
