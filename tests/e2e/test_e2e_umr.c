/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_umr.h against libmlx5: the same memory-key UMRs posted by
 * libmlx5's mlx5dv_wr_*() on a QP of mlx5dv_create_qp() with the UMR send
 * ops (u, beside golden.h's pair) and by rdmafast on a, on one key of
 * mlx5dv_create_mkey(); the WQE bytes compared, the completions' status
 * compared (libmlx5's must succeed), and the key used: b writes through
 * it and the bytes land where the layout says.
 *
 * Forms: mlx5dv_wr_mr_list() and mlx5dv_wr_mr_interleaved();
 * mlx5dv_wr_mkey_configure() with set_layout_list, set_layout_interleaved
 * and set_access_flags (against rdmafast's posts with and without
 * RF_UMR_ACCESS_KEEP); set_sig_block (T10-DIF in memory, CRC32 on the
 * wire) with its SET_PSV WQEs; ibv_wr_local_inv() of the key against
 * rf_sq_post_local_inv().
 *
 * Masked: the WQE index (bytes 1..2: rdmafast's fence NOPs move it), the
 * QPN (4..6), the fence libmlx5 puts on the WQE after a UMR (byte 11's
 * fence bits; rdmafast's fenced NOP is checked instead), and the
 * immediate of libmlx5's SET_PSV (12..15), which its extended post never
 * writes (golden.h). A key an HCA cannot create (mlx5dv_create_mkey()
 * EOPNOTSUPP, a device without signature offload) skips the test, saying
 * so; the emulated HCA creates both kinds.
 */
#include <inttypes.h>

#include "golden.h"

#define UMR_INLINE 512	/* u's inline size: libmlx5 takes up to (512 + 4) / 16 entries */
#define KEY_ENTRIES 32

struct ut {
	struct gq g;
	struct rf_qp u;			/* libmlx5's UMR QP, connected to d */
	struct ibv_qp_ex *ux;
	struct mlx5dv_qp_ex *dvx;
	struct mlx5dv_mkey *mkey;
	uint32_t pr, pl;		/* next WQE on a (rdmafast), on u (libmlx5) */
	int after_umr;			/* libmlx5's next WQE carries the small fence */
};

/* The pair, u and a key (mkey_flags beside INDIRECT); 0, or -1 with the test skipped. */
static int ut_open(struct ut *t, uint32_t mkey_flags)
{
	struct mlx5dv_mkey_init_attr ia;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p;

	memset(t, 0, sizeof(*t));
	gq_open(&t->g, IBV_QPT_RC, RF_SEND_OPS_DEFAULT);
	lib_qp_dv(&t->g, &t->u, IBV_QPT_RC, RF_SEND_OPS_DEFAULT | IBV_QP_EX_WITH_LOCAL_INV,
		  MLX5DV_QP_EX_WITH_MR_LIST | MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
		  MLX5DV_QP_EX_WITH_MKEY_CONFIGURE, UMR_INLINE);
	gq_conn_attr(&t->g, IBV_QPT_RC, &ca);
	gq_peer(&t->g, t->g.d.qpn, &p);
	cr_assert_eq(rf_qp_connect_ibv(&t->u, &ca, &p), 0);
	t->ux = ibv_qp_to_qp_ex(t->u.ibqp);
	t->dvx = mlx5dv_qp_ex_from_ibv_qp_ex(t->ux);
	cr_assert(t->ux && t->dvx);
	memset(&ia, 0, sizeof(ia));
	ia.pd = t->g.e.pd;
	ia.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mkey_flags;
	ia.max_entries = KEY_ENTRIES;
	t->mkey = mlx5dv_create_mkey(&ia);
	if (!t->mkey) {
		int err = errno;

		rf_qp_destroy_ibv(&t->u);
		gq_close(&t->g);
		cr_skip_test("mlx5dv_create_mkey(%s): %s: this HCA makes no such key",
			     mkey_flags ? "signature" : "indirect", strerror(err));
		return -1;
	}
	return 0;
}

static void ut_close(struct ut *t)
{
	cr_assert_eq(mlx5dv_destroy_mkey(t->mkey), 0);
	rf_qp_destroy_ibv(&t->u);
	gq_close(&t->g);
}

/*
 * The next completion on libmlx5's CQ, on an rdmafast CQ: its status.
 * libmlx5's UMRs must succeed (the HCA carries them out), so that the
 * comparisons after them are of keys in use.
 */
static uint32_t lib_status(struct ut *t)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	struct ibv_wc wc;
	int k;

	while ((k = ibv_poll_cq(t->g.ccq, 1, &wc)) == 0)
		cr_assert(e2e_now_ms() < end, "libmlx5 side timeout");
	cr_assert_eq(k, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "libmlx5's UMR: %s", ibv_wc_status_str(wc.status));
	return wc.status;
}

static uint32_t rf_status(struct ut *t)
{
	struct rf_wc w;

	e2e_wait(&t->g.e.a.cq, &w, 1);
	return w.status;
}

/* libmlx5's extended post: start, then (after the setters) complete: its status. */
static void lib_start(struct ut *t, uint64_t wr_id)
{
	ibv_wr_start(t->ux);
	t->ux->wr_id = wr_id;
	t->ux->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
}

static uint32_t lib_complete(struct ut *t)
{
	cr_assert_eq(ibv_wr_complete(t->ux), 0, "ibv_wr_complete: libmlx5 refused the UMR");
	return lib_status(t);
}

/*
 * Compare rdmafast's WQE at t->pr (after any padding NOPs) with libmlx5's
 * at t->pl and move both on; mask_imm for a SET_PSV (libmlx5 leaves its
 * immediate as the slot had it).
 */
static void cmp_next(struct ut *t, int mask_imm, const char *what)
{
	const struct rf_sq *r = &t->g.e.a.qp.sq, *l = &t->u.sq;
	uint32_t ds, lim = mask_imm ? 16 : 12;

	while (wqe_byte(r, t->pr, 3) == RF_OPCODE_NOP && wqe_byte(r, t->pr, 11) == 0)
		t->pr++;	/* padding at the queue's end */
	ds = wqe_byte(l, t->pl, 7) & 0x3f;
	cr_assert_eq(wqe_byte(r, t->pr, 7) & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what,
		     wqe_byte(r, t->pr, 7) & 0x3f, ds);
	for (uint32_t i = 0; i < ds * 16; i++) {
		uint8_t x = wqe_byte(r, t->pr, i), y = wqe_byte(l, t->pl, i);

		if ((i >= 1 && i < 3) || (i >= 4 && i < 7) || (i >= 12 && i < lim))
			continue;
		if (i == 11 && t->after_umr) {
			cr_assert_eq(y & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s", what);
			x &= 0x1f;
			y &= 0x1f;
		}
		cr_assert_eq(x, y, "%s: byte %u differs: rdmafast %#x libmlx5 %#x", what, i, x, y);
	}
	t->after_umr = 1;	/* after a UMR and after a SET_PSV, as libmlx5 */
	t->pr += wqe_bbs(r, t->pr);
	t->pl += wqe_bbs(l, t->pl);
}

/* rdmafast's fence NOP after its UMR (and PSVs). */
static void skip_fence(struct ut *t, const char *what)
{
	const struct rf_sq *r = &t->g.e.a.qp.sq;

	cr_assert_eq(wqe_byte(r, t->pr, 3), RF_OPCODE_NOP, "%s: no fence NOP", what);
	cr_assert_eq(wqe_byte(r, t->pr, 11) & 0xe0, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, "%s", what);
	t->pr++;
}

/*
 * rdmafast's post (its return value ret) of what libmlx5 posted with
 * status ls: completed alike, its WQE the same as libmlx5's, its fence
 * NOP after it.
 */
static uint32_t rf_done(struct ut *t, int ret, uint32_t ls, const char *what)
{
	uint32_t rst;

	cr_assert_eq(ret, 0, "%s: rdmafast's post: %s", what, strerror(-ret));
	rst = rf_status(t);
	cr_assert_eq(rst, ls, "%s: status rdmafast %u libmlx5 %u", what, rst, ls);
	cmp_next(t, 0, what);
	skip_fence(t, what);
	return rst;
}

/*
 * Where the key succeeded on both sides, b writes 64 bytes (pattern tag)
 * through it at off in the key; they must land in a's buffer at at.
 */
static void through_key(struct ut *t, uint32_t status, uint64_t off, uint64_t at, uint8_t tag,
			const char *what)
{
	uint8_t *dst = (uint8_t *)(uintptr_t)at;

	if (status != RF_WC_SUCCESS)
		return;
	memset(t->g.e.b.buf, tag, 64);
	memset(dst, 0, 64);
	cr_assert_eq(write_by_b(&t->g, t->mkey->rkey, off), RF_WC_SUCCESS, "%s: write", what);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(dst[i], tag, "%s: byte %d not where the layout maps it", what, i);
}

/* n regions of a's buffer, 4 KiB apart, of 1000 + i bytes. */
static void regions(struct ut *t, struct ibv_sge *is, struct rf_sge *rs, uint32_t n)
{
	struct e2e_side *a = &t->g.e.a;

	for (uint32_t i = 0; i < n; i++) {
		is[i].addr = rs[i].addr = e2e_addr(a, 4096 * (size_t)i + 8);
		is[i].length = rs[i].length = 1000 + i;
		is[i].lkey = rs[i].lkey = a->mr->lkey;
	}
}

#define ACC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* mlx5dv_wr_mr_list() of 1, 3, 4, 9 regions against rf_sq_post_mr_list(). */
Test(e2e_umr, mr_list_matches_libmlx5)
{
	static const uint32_t ns[] = { 1, 3, 4, 9 };
	struct ut t;
	struct ibv_sge is[16];
	struct rf_sge rs[16];

	if (ut_open(&t, 0))
		return;
	for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		uint32_t n = ns[k], ls, rst;
		uint64_t off = n > 1 ? 1000 + 5 : 5, at;

		regions(&t, is, rs, n);
		at = rs[n > 1].addr + 5;	/* byte 5 of the second region (of the first, alone) */
		lib_start(&t, k);
		mlx5dv_wr_mr_list(t.dvx, t.mkey, ACC, (uint16_t)n, is);
		ls = lib_complete(&t);
		through_key(&t, ls, off, at, 0x11, "lib list");
		rst = rf_done(&t, rf_sq_post_mr_list(&t.g.e.a.qp.sq, t.mkey->lkey,
						     rf_mw_access_ibv(ACC), rs, n,
						     RF_SEND_SIGNALED | RF_SEND_RING, k), ls, "mr_list");
		through_key(&t, rst, off, at, 0x22, "rf list");
	}
	ut_close(&t);
}

/* n entries of 100 + i bytes, skipping 28 - i, 4 KiB apart in a's buffer. */
static void pattern(struct ut *t, struct mlx5dv_mr_interleaved *il, struct rf_umr_interleaved *rl,
		    uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		il[i].addr = rl[i].addr = e2e_addr(&t->g.e.a, 4096 * (size_t)i + 16);
		il[i].bytes_count = rl[i].bytes_count = 100 + i;
		il[i].bytes_skip = rl[i].bytes_skip = 28 - i;
		il[i].lkey = rl[i].lkey = t->g.e.a.mr->lkey;
	}
}

/* mlx5dv_wr_mr_interleaved() of 1, 3 and 6 entries against rf_sq_post_mr_interleaved(). */
Test(e2e_umr, mr_interleaved_matches_libmlx5)
{
	static const uint32_t ns[] = { 1, 3, 6 };
	struct ut t;
	struct mlx5dv_mr_interleaved il[8];
	struct rf_umr_interleaved rl[8];

	if (ut_open(&t, 0))
		return;
	for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		uint32_t n = ns[k], ls, rst, round = 0;
		uint64_t off, at;

		pattern(&t, il, rl, n);
		for (uint32_t i = 0; i < n; i++)
			round += 100 + i;
		/* round 2, entry 0, byte 3: two strides on */
		off = 2 * (uint64_t)round + 3;
		at = rl[0].addr + 2 * 128 + 3;
		lib_start(&t, k);
		mlx5dv_wr_mr_interleaved(t.dvx, t.mkey, ACC, 4, (uint16_t)n, il);
		ls = lib_complete(&t);
		through_key(&t, ls, off, at, 0x33, "lib interleaved");
		rst = rf_done(&t, rf_sq_post_mr_interleaved(&t.g.e.a.qp.sq, t.mkey->lkey,
							    rf_mw_access_ibv(ACC), 4, rl, n,
							    RF_SEND_SIGNALED | RF_SEND_RING, k),
			      ls, "mr_interleaved");
		through_key(&t, rst, off, at, 0x44, "rf interleaved");
	}
	ut_close(&t);
}

/*
 * mlx5dv_wr_mkey_configure() with its setters: layout list and access
 * (either order) against rf_sq_post_mr_list(); layout alone, list and
 * interleaved, against the posts with RF_UMR_ACCESS_KEEP.
 */
Test(e2e_umr, mkey_configure_matches_libmlx5)
{
	struct ut t;
	struct mlx5dv_mkey_conf_attr conf;
	struct ibv_sge is[4];
	struct rf_sge rs[4];
	struct mlx5dv_mr_interleaved il[2];
	struct rf_umr_interleaved rl[2];
	struct rf_sq *sq;
	uint32_t ls, rst;

	if (ut_open(&t, 0))
		return;
	sq = &t.g.e.a.qp.sq;
	memset(&conf, 0, sizeof(conf));
	regions(&t, is, rs, 4);
	pattern(&t, il, rl, 2);

	lib_start(&t, 1);
	mlx5dv_wr_mkey_configure(t.dvx, t.mkey, 2, &conf);
	mlx5dv_wr_set_mkey_access_flags(t.dvx, ACC);
	mlx5dv_wr_set_mkey_layout_list(t.dvx, 4, is);
	ls = lib_complete(&t);
	rst = rf_done(&t, rf_sq_post_mr_list(sq, t.mkey->lkey, rf_mw_access_ibv(ACC), rs, 4,
					     RF_SEND_SIGNALED | RF_SEND_RING, 1),
		      ls, "configure access + list");
	through_key(&t, rst, 1000 + 1001 + 7, rs[2].addr + 7, 0x55, "configure list");

	lib_start(&t, 2);
	mlx5dv_wr_mkey_configure(t.dvx, t.mkey, 2, &conf);
	mlx5dv_wr_set_mkey_layout_list(t.dvx, 3, is);
	mlx5dv_wr_set_mkey_access_flags(t.dvx, IBV_ACCESS_REMOTE_WRITE);
	ls = lib_complete(&t);
	rf_done(&t, rf_sq_post_mr_list(sq, t.mkey->lkey, RF_MKEY_ACCESS_REMOTE_WRITE, rs, 3,
				       RF_SEND_SIGNALED | RF_SEND_RING, 2),
		ls, "configure list + access");

	lib_start(&t, 3);
	mlx5dv_wr_mkey_configure(t.dvx, t.mkey, 1, &conf);
	mlx5dv_wr_set_mkey_layout_list(t.dvx, 2, is);
	ls = lib_complete(&t);
	rf_done(&t, rf_sq_post_mr_list(sq, t.mkey->lkey, RF_UMR_ACCESS_KEEP, rs, 2,
				       RF_SEND_SIGNALED | RF_SEND_RING, 3),
		ls, "configure list, access kept");

	lib_start(&t, 4);
	mlx5dv_wr_mkey_configure(t.dvx, t.mkey, 1, &conf);
	mlx5dv_wr_set_mkey_layout_interleaved(t.dvx, 3, 2, il);
	ls = lib_complete(&t);
	rf_done(&t, rf_sq_post_mr_interleaved(sq, t.mkey->lkey, RF_UMR_ACCESS_KEEP, 3, rl, 2,
					      RF_SEND_SIGNALED | RF_SEND_RING, 4),
		ls, "configure interleaved, access kept");
	ut_close(&t);
}

/*
 * A key laid out and then invalidated, by libmlx5 (mlx5dv_wr_mr_list(),
 * ibv_wr_local_inv()) and then by rdmafast (rf_sq_post_mr_list(),
 * rf_sq_post_local_inv()): the same WQEs and statuses, and the key no
 * longer maps after the invalidate.
 */
Test(e2e_umr, local_invalidate_matches_libmlx5)
{
	struct ut t;
	struct ibv_sge is[2];
	struct rf_sge rs[2];
	uint32_t ls[2];

	if (ut_open(&t, 0))
		return;
	regions(&t, is, rs, 2);
	lib_start(&t, 1);
	mlx5dv_wr_mr_list(t.dvx, t.mkey, ACC, 2, is);
	ls[0] = lib_complete(&t);
	lib_start(&t, 2);
	ibv_wr_local_inv(t.ux, t.mkey->rkey);
	ls[1] = lib_complete(&t);

	rf_done(&t, rf_sq_post_mr_list(&t.g.e.a.qp.sq, t.mkey->lkey, rf_mw_access_ibv(ACC), rs, 2,
				       RF_SEND_SIGNALED | RF_SEND_RING, 1),
		ls[0], "list before the invalidate");
	rf_done(&t, rf_sq_post_local_inv(&t.g.e.a.qp.sq, t.mkey->rkey,
					 RF_SEND_SIGNALED | RF_SEND_RING, 2),
		ls[1], "local invalidate");
	/* last: a write through a bad key ends a's QP as well as b's */
	cr_assert_neq(write_by_b(&t.g, t.mkey->rkey, 0), RF_WC_SUCCESS,
		      "the invalidated key still maps");
	ut_close(&t);
}

/*
 * mlx5dv_wr_mkey_configure() with layout, access and a signature block
 * (T10-DIF, CRC guard, in memory; CRC32 on the wire) against
 * rf_sq_post_mr_list_sig(): the UMR with its BSF and the two SET_PSVs.
 * The PSV indexes are libmlx5's own (private to it; read from its BSF).
 */
Test(e2e_umr, sig_block_matches_libmlx5)
{
	struct ut t;
	struct ibv_sge is[3];
	struct rf_sge rs[3];
	struct mlx5dv_mkey_conf_attr conf;
	struct mlx5dv_sig_t10dif dif = { MLX5DV_SIG_T10DIF_CRC, 0xffff, 0x1234, 0x100,
					 MLX5DV_SIG_T10DIF_FLAG_REF_REMAP };
	struct mlx5dv_sig_crc crc = { MLX5DV_SIG_CRC_TYPE_CRC32, 0 };
	struct mlx5dv_sig_block_domain mem, wire;
	struct mlx5dv_sig_block_attr sa;
	struct rf_sig_domain rmem = { RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512, RF_SIG_T10DIF_REF_REMAP,
				      0xffff, 0x1234, 0x100, 0 };
	struct rf_sig_domain rwire = { RF_SIG_CRC32, RF_SIG_BLOCK_512, 0, 0, 0, 0, 0 };
	struct rf_sig_block sig;
	uint32_t ls, rst, bsf, mem_psv, wire_psv;

	if (ut_open(&t, MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE))
		return;
	regions(&t, is, rs, 3);
	memset(&conf, 0, sizeof(conf));
	memset(&mem, 0, sizeof(mem));
	memset(&wire, 0, sizeof(wire));
	memset(&sa, 0, sizeof(sa));
	mem.sig_type = MLX5DV_SIG_TYPE_T10DIF;
	mem.sig.dif = &dif;
	mem.block_size = MLX5DV_BLOCK_SIZE_512;
	wire.sig_type = MLX5DV_SIG_TYPE_CRC;
	wire.sig.crc = &crc;
	wire.block_size = MLX5DV_BLOCK_SIZE_512;
	sa.mem = &mem;
	sa.wire = &wire;
	sa.check_mask = 0xff;

	lib_start(&t, 1);
	mlx5dv_wr_mkey_configure(t.dvx, t.mkey, 3, &conf);
	mlx5dv_wr_set_mkey_access_flags(t.dvx, ACC);
	mlx5dv_wr_set_mkey_layout_list(t.dvx, 3, is);
	mlx5dv_wr_set_mkey_sig_block(t.dvx, &sa);
	ls = lib_complete(&t);
	/* the BSF follows ctrl, UMR ctrl, mkey context and one block of KLMs */
	bsf = 16 + 48 + 64 + 64;
	wire_psv = ((uint32_t)wqe_byte(&t.u.sq, t.pl, bsf + 9) << 16 |
		    (uint32_t)wqe_byte(&t.u.sq, t.pl, bsf + 10) << 8 | wqe_byte(&t.u.sq, t.pl, bsf + 11));
	mem_psv = ((uint32_t)wqe_byte(&t.u.sq, t.pl, bsf + 13) << 16 |
		   (uint32_t)wqe_byte(&t.u.sq, t.pl, bsf + 14) << 8 | wqe_byte(&t.u.sq, t.pl, bsf + 15));
	cr_assert_eq(rf_sig_block_init(&sig, &rmem, mem_psv, &rwire, wire_psv, 0xff, 0, 0), 0);
	/* libmlx5's first configuration of the key sets its error counter to 1 */
	cr_assert_eq(rf_sq_post_mr_list_sig(&t.g.e.a.qp.sq, t.mkey->lkey,
					    rf_mw_access_ibv(ACC) | RF_UMR_SIG_ERR_CNT(1), rs, 3,
					    &sig, RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	rst = rf_status(&t);
	cr_assert_eq(rst, ls, "signature: rdmafast %u libmlx5 %u", rst, ls);
	cmp_next(&t, 0, "signature UMR");
	cmp_next(&t, 1, "memory SET_PSV");
	cmp_next(&t, 1, "wire SET_PSV");
	skip_fence(&t, "signature");
	ut_close(&t);
}

/*
 * Signature errors: the same key, the same bytes and the same signature
 * on both sides. libmlx5 configures the key on u and RDMA WRITEs from it
 * on c;
 * its poll consumes the signature error CQE and mlx5dv_mkey_check()
 * reports it. rdmafast configures it again on a (the PSVs libmlx5's) and
 * writes from it; rf_cq_poll() returns the CQE as an RF_WC_SIG_ERR record
 * before the write's completion, and rf_cq_sig_err() must say what
 * mlx5dv_mkey_check() said: type, expected, actual, offset.
 */
#define SIG_DATA_CRC16	0x3f43		/* T10-DIF CRC16 of 512 bytes (i * 7) & 255 */
#define SIG_DATA_CRC32C	0x74e93f07u	/* their CRC32C */

struct sig_case {
	const char *what;
	int dif;			/* T10-DIF in memory, else CRC32C */
	uint32_t bad_off, bad_val;	/* the word of a's buffer made wrong */
	enum mlx5dv_mkey_err_type type;
};

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/*
 * Protected blocks at m (the key's memory, or the wire's bytes for a
 * READ into it): 512 bytes with their CRC32C, or 2 blocks with T10-DIF;
 * their length.
 */
static uint32_t sig_blocks(uint8_t *m, const struct sig_case *c)
{
	int blocks = c->dif ? 2 : 1;

	for (int k = 0; k < blocks; k++) {
		uint8_t *b = m + (c->dif ? 520 : 516) * k;

		for (int i = 0; i < 512; i++)
			b[i] = (uint8_t)(i * 7);
		if (c->dif) {
			put_be32(b + 512, (uint32_t)SIG_DATA_CRC16 << 16 | 0x1234);
			put_be32(b + 516, 0x100 + (uint32_t)k);
		} else {
			put_be32(b + 512, SIG_DATA_CRC32C);
		}
	}
	put_be32(m + c->bad_off, c->bad_val);
	return c->dif ? 1040 : 516;
}

/*
 * An RDMA WRITE of len bytes at 0 of the key into b's buffer (or a READ
 * of b's buffer into it), by libmlx5 on c (u's peer d answers c only);
 * c's send CQ is u's.
 */
static void lib_rdma_with_key(struct ut *t, int read, uint32_t len)
{
	ibv_wr_start(t->g.cx);
	t->g.cx->wr_id = 9;
	t->g.cx->wr_flags = IBV_SEND_SIGNALED;
	if (read)
		ibv_wr_rdma_read(t->g.cx, t->g.e.b.mr->rkey, e2e_addr(&t->g.e.b, 0));
	else
		ibv_wr_rdma_write(t->g.cx, t->g.e.b.mr->rkey, e2e_addr(&t->g.e.b, 0));
	ibv_wr_set_sge(t->g.cx, t->mkey->lkey, 0, len);
	cr_assert_eq(ibv_wr_complete(t->g.cx), 0);
	lib_status(t);
}

/*
 * A key of its own for each case after the first: the key reports an
 * error only while armed by the count its last configuration wrote
 * (RF_UMR_SIG_ERR_CNT()), and libmlx5 writes the count of the errors it
 * saw, not those of rdmafast's half on the same key.
 */
static void sig_key_for_case(struct ut *t, unsigned k)
{
	struct mlx5dv_mkey_init_attr ia;

	if (!k)
		return;
	memset(&ia, 0, sizeof(ia));
	ia.pd = t->g.e.pd;
	ia.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			  MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	ia.max_entries = KEY_ENTRIES;
	cr_assert_eq(mlx5dv_destroy_mkey(t->mkey), 0);
	t->mkey = mlx5dv_create_mkey(&ia);
	cr_assert(t->mkey, "mlx5dv_create_mkey: %s", strerror(errno));
}

/*
 * libmlx5 configures the key over is with sa; the PSV its BSF names at
 * byte psv_at (13: the memory's, 9: the wire's), for rdmafast's UMR.
 */
#define SIG_BSF		(16 + 48 + 64 + 64)
#define SIG_PSV_MEM	13
#define SIG_PSV_WIRE	9

static uint32_t lib_configure_sig(struct ut *t, struct ibv_sge *is,
				  struct mlx5dv_sig_block_attr *sa, uint32_t psv_at)
{
	struct mlx5dv_mkey_conf_attr conf;

	memset(&conf, 0, sizeof(conf));
	t->pl = be32toh(*t->u.sq.dbrec) & 0xffff;	/* where its UMR goes */
	lib_start(t, 1);
	mlx5dv_wr_mkey_configure(t->dvx, t->mkey, 3, &conf);
	mlx5dv_wr_set_mkey_access_flags(t->dvx, ACC);
	mlx5dv_wr_set_mkey_layout_list(t->dvx, 1, is);
	mlx5dv_wr_set_mkey_sig_block(t->dvx, sa);
	lib_complete(t);
	return (uint32_t)wqe_byte(&t->u.sq, t->pl, SIG_BSF + psv_at) << 16 |
	       (uint32_t)wqe_byte(&t->u.sq, t->pl, SIG_BSF + psv_at + 1) << 8 |
	       wqe_byte(&t->u.sq, t->pl, SIG_BSF + psv_at + 2);
}

Test(e2e_umr, sig_error_matches_mkey_check)
{
	static const struct sig_case cs[] = {
		{ "CRC32C guard", 0, 512, SIG_DATA_CRC32C ^ 1, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD },
		{ "T10-DIF reference tag of block 1", 1, 520 + 516, 0x777,
		  MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG },
		{ "T10-DIF application tag of block 0", 1, 512, SIG_DATA_CRC16 << 16 | 0x4321,
		  MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG },
		{ "T10-DIF guard of block 1", 1, 520 + 512, 0xbeef1234,
		  MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD },
	};
	struct mlx5dv_sig_t10dif dif = { MLX5DV_SIG_T10DIF_CRC, 0, 0x1234, 0x100,
					 MLX5DV_SIG_T10DIF_FLAG_REF_REMAP };
	struct mlx5dv_sig_crc crc = { MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff };
	struct rf_sig_domain rdif = { RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512, RF_SIG_T10DIF_REF_REMAP,
				      0, 0x1234, 0x100, 0 };
	struct rf_sig_domain rcrc = { RF_SIG_CRC32C, RF_SIG_BLOCK_512, 0, 0, 0, 0, 0xffffffff };
	uint32_t psv = 0, errors;
	struct ut t;

	if (ut_open(&t, MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE))
		return;
	for (unsigned k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		const struct sig_case *c = &cs[k];
		struct mlx5dv_sig_block_domain mem;
		struct mlx5dv_sig_block_attr sa;
		struct mlx5dv_mkey_err le;
		struct rf_sig_block sig;
		struct rf_sig_err re;
		struct rf_wc wc[2];
		struct ibv_sge is;
		struct rf_sge rs;
		uint32_t len = sig_blocks(t.g.e.a.buf, c);

		sig_key_for_case(&t, k);
		errors = 0;
		memset(&mem, 0, sizeof(mem));
		memset(&sa, 0, sizeof(sa));
		mem.sig_type = c->dif ? MLX5DV_SIG_TYPE_T10DIF : MLX5DV_SIG_TYPE_CRC;
		if (c->dif)
			mem.sig.dif = &dif;
		else
			mem.sig.crc = &crc;
		mem.block_size = MLX5DV_BLOCK_SIZE_512;
		sa.mem = &mem;
		sa.check_mask = c->dif ? MLX5DV_SIG_MASK_T10DIF_GUARD | MLX5DV_SIG_MASK_T10DIF_APPTAG |
					 MLX5DV_SIG_MASK_T10DIF_REFTAG : MLX5DV_SIG_MASK_CRC32C;
		is.addr = rs.addr = e2e_addr(&t.g.e.a, 0);
		is.length = rs.length = len;
		is.lkey = rs.lkey = t.g.e.a.mr->lkey;

		/* libmlx5: configure, write, its poll takes the CQE, the key reports */
		psv = lib_configure_sig(&t, &is, &sa, SIG_PSV_MEM);
		lib_rdma_with_key(&t, 0, c->dif ? 1024 : 512);
		cr_assert_eq(mlx5dv_mkey_check(t.mkey, &le), 0, "%s", c->what);
		cr_assert_eq(le.err_type, c->type, "%s: libmlx5 type %d", c->what, le.err_type);
		errors++;

		/* rdmafast: the same on a */
		cr_assert_eq(rf_sig_block_init(&sig, c->dif ? &rdif : &rcrc, psv, NULL,
					       RF_SIG_NO_PSV, sa.check_mask, 0, 0), 0);
		cr_assert_eq(rf_sq_post_mr_list_sig(&t.g.e.a.qp.sq, t.mkey->lkey,
						    rf_mw_access_ibv(ACC) |
						    RF_UMR_SIG_ERR_CNT(1 + errors), &rs, 1, &sig,
						    RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
		cr_assert_eq(rf_status(&t), RF_WC_SUCCESS, "%s: configure", c->what);
		cr_assert_eq(rf_sq_post_write(&t.g.e.a.qp.sq, t.mkey->lkey, 0, c->dif ? 1024 : 512,
					      t.g.e.b.mr->rkey, e2e_addr(&t.g.e.b, 0),
					      RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
		e2e_wait(&t.g.e.a.cq, wc, 1);
		cr_assert_eq(wc[0].opcode, RF_WC_SIG_ERR, "%s: opcode %#x", c->what, wc[0].opcode);
		cr_assert_eq(wc[0].status, RF_WC_GENERAL_ERR);
		cr_assert_eq(rf_cq_sig_err(&t.g.e.a.cq, c->dif ? &rdif : &rcrc, NULL, &re), 0);
		e2e_wait(&t.g.e.a.cq, wc + 1, 1);
		cr_assert_eq(wc[1].opcode, RF_WC_RDMA_WRITE, "%s: the write completes too", c->what);
		cr_assert_eq(wc[1].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[1].wr_id, 2);
		errors++;

		cr_assert_eq(re.type, (uint8_t)le.err_type, "%s: type rdmafast %u libmlx5 %d",
			     c->what, re.type, le.err_type);
		cr_assert_eq(re.expected, le.err.sig.expected_value,
			     "%s: expected rdmafast %#" PRIx64 " libmlx5 %#" PRIx64, c->what,
			     re.expected, le.err.sig.expected_value);
		cr_assert_eq(re.actual, le.err.sig.actual_value,
			     "%s: actual rdmafast %#" PRIx64 " libmlx5 %#" PRIx64, c->what,
			     re.actual, le.err.sig.actual_value);
		cr_assert_eq(re.offset, le.err.sig.offset, "%s: offset rdmafast %" PRIu64
			     " libmlx5 %" PRIu64, c->what, re.offset, le.err.sig.offset);
		cr_assert_eq(re.mkey, t.mkey->lkey, "%s", c->what);
		cr_assert_eq(re.domain, RF_SIG_ERR_DOMAIN_MEMORY, "%s", c->what);
		/* reported once, as mlx5dv_mkey_check() */
		cr_assert_eq(mlx5dv_mkey_check(t.mkey, &le), 0);
		cr_assert_eq(le.err_type, MLX5DV_MKEY_NO_ERR);
		cr_assert_eq(rf_cq_sig_err(&t.g.e.a.cq, &rdif, NULL, &re), 0);
		cr_assert_eq(re.type, RF_SIG_ERR_NONE);
	}
	ut_close(&t);
}

/*
 * The same comparison for a READ into the key, the storage target's pull:
 * T10-DIF on the wire and none in memory, the protected blocks in b's
 * buffer, the key the READ's local SGE. The wire's check fails as the
 * response lands; libmlx5's poll takes the error CQE before the READ's
 * completion, rf_cq_poll() returns it as the record before it.
 */
Test(e2e_umr, sig_read_error_matches_mkey_check)
{
	static const struct sig_case cs[] = {
		{ "T10-DIF guard of block 1", 1, 520 + 512, 0xbeef1234,
		  MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD },
		{ "T10-DIF reference tag of block 0", 1, 516, 0x777,
		  MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG },
	};
	struct mlx5dv_sig_t10dif dif = { MLX5DV_SIG_T10DIF_CRC, 0, 0x1234, 0x100,
					 MLX5DV_SIG_T10DIF_FLAG_REF_REMAP };
	struct rf_sig_domain rdif = { RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512, RF_SIG_T10DIF_REF_REMAP,
				      0, 0x1234, 0x100, 0 };
	uint8_t check = MLX5DV_SIG_MASK_T10DIF_GUARD | MLX5DV_SIG_MASK_T10DIF_APPTAG |
			MLX5DV_SIG_MASK_T10DIF_REFTAG;
	uint32_t psv;
	struct ut t;

	if (ut_open(&t, MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE))
		return;
	for (unsigned k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		const struct sig_case *c = &cs[k];
		struct mlx5dv_sig_block_domain wire = { MLX5DV_SIG_TYPE_T10DIF, { .dif = &dif },
							MLX5DV_BLOCK_SIZE_512, 0 };
		struct mlx5dv_sig_block_attr sa = { .wire = &wire, .check_mask = check };
		struct mlx5dv_mkey_err le;
		struct rf_sig_block sig;
		struct rf_sig_err re;
		struct rf_wc wc[2];
		struct ibv_sge is = { e2e_addr(&t.g.e.a, 0), 1024, t.g.e.a.mr->lkey };
		struct rf_sge rs = { is.addr, is.length, is.lkey };
		uint32_t len = sig_blocks(t.g.e.b.buf, c);

		/* libmlx5: configure, READ into the key, its poll takes the CQE */
		sig_key_for_case(&t, k);
		psv = lib_configure_sig(&t, &is, &sa, SIG_PSV_WIRE);
		memset(t.g.e.a.buf, 0, 1024);
		lib_rdma_with_key(&t, 1, len);
		for (int b = 0; b < 2; b++)
			cr_assert_eq(memcmp((uint8_t *)t.g.e.a.buf + 512 * b,
					    (uint8_t *)t.g.e.b.buf + 520 * b, 512), 0,
				     "%s: block %d's data, its PI stripped", c->what, b);
		cr_assert_eq(mlx5dv_mkey_check(t.mkey, &le), 0, "%s", c->what);
		cr_assert_eq(le.err_type, c->type, "%s: libmlx5 type %d", c->what, le.err_type);

		/* rdmafast: the same on a, the count one further (libmlx5 saw one) */
		cr_assert_eq(rf_sig_block_init(&sig, NULL, RF_SIG_NO_PSV, &rdif, psv, check, 0, 0),
			     0);
		cr_assert_eq(rf_sq_post_mr_list_sig(&t.g.e.a.qp.sq, t.mkey->lkey,
						    rf_mw_access_ibv(ACC) | RF_UMR_SIG_ERR_CNT(2),
						    &rs, 1, &sig, RF_SEND_SIGNALED | RF_SEND_RING,
						    1), 0);
		cr_assert_eq(rf_status(&t), RF_WC_SUCCESS, "%s: configure", c->what);
		cr_assert_eq(rf_sq_post_read(&t.g.e.a.qp.sq, t.mkey->lkey, 0, len,
					     t.g.e.b.mr->rkey, e2e_addr(&t.g.e.b, 0),
					     RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
		e2e_wait(&t.g.e.a.cq, wc, 1);
		cr_assert_eq(wc[0].opcode, RF_WC_SIG_ERR, "%s: opcode %#x", c->what, wc[0].opcode);
		cr_assert_eq(rf_cq_sig_err(&t.g.e.a.cq, NULL, &rdif, &re), 0);
		e2e_wait(&t.g.e.a.cq, wc + 1, 1);
		cr_assert_eq(wc[1].opcode, RF_WC_RDMA_READ, "%s: the READ completes too", c->what);
		cr_assert_eq(wc[1].status, RF_WC_SUCCESS);

		cr_assert_eq(re.type, (uint8_t)le.err_type, "%s: type rdmafast %u libmlx5 %d",
			     c->what, re.type, le.err_type);
		cr_assert_eq(re.expected, le.err.sig.expected_value, "%s: expected", c->what);
		cr_assert_eq(re.actual, le.err.sig.actual_value, "%s: actual", c->what);
		cr_assert_eq(re.offset, le.err.sig.offset, "%s: offset rdmafast %" PRIu64
			     " libmlx5 %" PRIu64, c->what, re.offset, le.err.sig.offset);
		cr_assert_eq(re.offset, c->bad_off / 520 * 520, "%s: the wire's block", c->what);
		cr_assert_eq(re.mkey, t.mkey->lkey, "%s", c->what);
		cr_assert_eq(re.domain, RF_SIG_ERR_DOMAIN_WIRE, "%s", c->what);
	}
	ut_close(&t);
}
