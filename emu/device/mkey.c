/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mkey.c - indirect mkeys (DEVX CREATE_MKEY, mlx5dv_create_mkey()): the
 * UMR WQEs that configure and invalidate them, and data moving through
 * them.
 *
 * A UMR WQE on such a key (libmlx5's mlx5dv_wr_mr_list(),
 * mlx5dv_wr_mr_interleaved(), mlx5dv_wr_mkey_configure() and its setters,
 * ibv_wr_local_inv()) is ctrl(16) | UMR ctrl(48) | mkey context(64) |
 * inline translation (klm_octowords x 16 bytes): the UMR control
 * segment's mkey_mask says which fields of the mkey context it sets
 * (free, key tag, access flags, start address, length), the translation is
 * either a KLM list (byte count, key, address per entry) or a repeat block
 * (a header with op 0x400, the repeat count and the number of entries,
 * then stride, byte count, key, address per entry).  The device checks at
 * UMR time what the mkey itself decides - the key exists in the QP's PD
 * with UMR enabled, the translation is inline and fits the entries the
 * key was created with - and at access time everything else: the key is
 * configured (not free), grants the access and covers the range, and each
 * entry's own key is an MR of the same PD covering the entry's bytes, and
 * locally writable wherever the access writes memory.  Nested indirect
 * keys are not followed.  A UMR may also enable or disable the key's BSF
 * (a signature key's blocks, sig.c), which follows the translation.
 */
#include "device.h"

enum {
	UMR_FLAG_INLINE		= 1 << 7,
	UMR_FLAG_CHECK_FREE	= 1 << 5,
	UMR_FLAG_XLT_OFFSET	= 1 << 4,
	MASK_LEN		= 1 << 0,
	MASK_START_ADDR		= 1 << 6,
	MASK_SIG_ERR		= 1 << 9,
	MASK_BSF_EN		= 1 << 12,
	BSF_BYTES		= 64,	/* the signature BSF, 4 octowords */
	MASK_MKEY		= 1 << 13,
	MASK_ACCESS_LW		= 1 << 18,
	MASK_ACCESS_RR		= 1 << 19,
	MASK_ACCESS_RW		= 1 << 20,
	MASK_ACCESS_A		= 1 << 21,
	MASK_FREE		= 1 << 29,
	REPEAT_BLOCK_OP		= 0x400,
	MKC_FLAGS_BSF_EN	= 1u << 30,	/* flags_pd (mkey context byte 12) */
	MKC_SIGERR_SHIFT	= 26,		/* flags_pd: expected_sigerr_count */
};

/*
 * UMR on an indirect mkey: 0, or the syndrome of the error CQE (a UMR
 * that cannot be carried out fails as a bind does).
 */
uint8_t dev_mkey_umr(struct dev_qp *dq, const uint8_t *w, uint32_t len,
		     struct emu_mkey *mk)
{
	const uint8_t *uctrl = w + 16, *mkc = w + 64, *d = w + 128;
	uint64_t mask = dev_be64(uctrl + 8);
	uint32_t oct = dev_be16(uctrl + 4), n = 0, repeat = 0;
	struct emu_mkey_sig sig;
	bool bsf = false;
	uint64_t sum = 0;

	if (len < 128 || mk->pd != dq->qp->pd || !mk->umr_en)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	/* the key must be free, as a type-2 window's bind asks (mem.c) */
	if ((uctrl[0] & UMR_FLAG_CHECK_FREE) && !mk->free)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	/* a translation written at an offset into the key's is not modelled */
	if ((uctrl[0] & UMR_FLAG_XLT_OFFSET) && dev_be16(uctrl + 6))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if ((mask & MASK_FREE) && (mkc[0] & DEV_MKC_FREE)) {
		/* local invalidate: the key's layout stays, unusable */
		mk->free = true;
		return 0;
	}
	/* a translation by pointer (not inline) is not modelled */
	if (oct && (!(uctrl[0] & UMR_FLAG_INLINE) || 128 + 16ull * oct > len))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	/* a BSF enabled: the signature one, right after the translation */
	if ((mask & MASK_BSF_EN) && (dev_be32(mkc + 12) & MKC_FLAGS_BSF_EN)) {
		uint8_t synd;

		if (dev_be16(uctrl + 6) != BSF_BYTES / 16 ||
		    128 + 16ull * oct + BSF_BYTES > len)
			return RF_CQE_SYNDROME_MW_BIND_ERR;
		synd = dev_sig_parse(dq, mk, d + 16 * oct, &sig);
		if (synd)
			return synd;
		bsf = true;
	}
	if (oct && dev_be32(d + 4) == REPEAT_BLOCK_OP) {
		/* repeat block: its header, then num_ent entries */
		repeat = dev_be32(d + 8);
		n = dev_be16(d + 14);
		if (!repeat || !n || n > mk->max_entries || n + 1 > oct)
			return RF_CQE_SYNDROME_MW_BIND_ERR;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *e = d + 16 * (i + 1);

			mk->ent[i] = (struct emu_mkey_ent){ dev_be64(e + 8), dev_be32(e + 4),
							    dev_be16(e + 2), dev_be16(e) };
			sum += mk->ent[i].len;
		}
		sum *= repeat;
	} else if (oct) {
		/*
		 * KLM list: the entries up to the first empty one (padding),
		 * counted before any is written: a list too long for the key
		 * fails and leaves its layout as the last UMR set it.
		 */
		while (n < oct && dev_be32(d + 16 * n))
			n++;
		if (n > mk->max_entries)
			return RF_CQE_SYNDROME_MW_BIND_ERR;
		for (uint32_t i = 0; i < n; i++) {
			const uint8_t *e = d + 16 * i;

			mk->ent[i] = (struct emu_mkey_ent){ dev_be64(e + 8), dev_be32(e + 4),
							    dev_be32(e), 0 };
			sum += mk->ent[i].len;
		}
	}
	if (oct) {
		mk->nent = n;
		mk->repeat = repeat;
		mk->length = sum;
	}
	/* the length may say less than the entries map, or more: beyond them fails */
	if (mask & MASK_LEN)
		mk->length = dev_be64(mkc + 24);
	if (mask & MASK_START_ADDR)
		mk->start = dev_be64(mkc + 16);
	if (mask & MASK_MKEY)
		mk->key = (mk->key & ~0xffu) | mkc[7];
	if (mask & MASK_ACCESS_LW)
		mk->access = (mk->access & ~IBV_ACCESS_LOCAL_WRITE) |
			     (dev_umr_access(mkc[2]) & IBV_ACCESS_LOCAL_WRITE);
	if (mask & MASK_ACCESS_RR)
		mk->access = (mk->access & ~IBV_ACCESS_REMOTE_READ) |
			     (dev_umr_access(mkc[2]) & IBV_ACCESS_REMOTE_READ);
	if (mask & MASK_ACCESS_RW)
		mk->access = (mk->access & ~IBV_ACCESS_REMOTE_WRITE) |
			     (dev_umr_access(mkc[2]) & IBV_ACCESS_REMOTE_WRITE);
	if (mask & MASK_ACCESS_A)
		mk->access = (mk->access & ~IBV_ACCESS_REMOTE_ATOMIC) |
			     (dev_umr_access(mkc[2]) & IBV_ACCESS_REMOTE_ATOMIC);
	if ((mask & MASK_BSF_EN) && !dev_sig_commit(mk, bsf ? &sig : NULL))
		return RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	/* the signature errors software saw: one ahead of the key's arms it (sig.c) */
	if (mask & MASK_SIG_ERR)
		mk->sigerr_expected = (uint8_t)(dev_be32(mkc + 12) >> MKC_SIGERR_SHIFT & 1);
	if (mask & MASK_FREE)
		mk->free = false;
	return 0;
}

/*
 * The mkey a key names, if it may be used by pd for need over
 * [va, va + len): configured, of the PD, granting the access (local read
 * always), covering the range.  The entries are checked as they are used.
 */
static const struct emu_mkey *mkey_for(uint32_t key, uint64_t va, uint64_t len,
				       const struct emu_pd *pd, uint32_t need)
{
	const struct emu_mkey *mk = emu_mkey_by_key_locked(key);

	/* a signature key's bytes are not its memory's: sig_key(), sig.c */
	if (!mk || mk->sig || mk->free || mk->pd != pd || !dev_key_grants(mk->access, need) ||
	    !dev_in_range(va, len, mk->start, mk->length))
		return NULL;
	return mk;
}

/*
 * What an access needs of an entry's key: write access where memory is
 * written, and an MR that is not ODP where the access needs one.
 */
static uint32_t entry_need(uint32_t need)
{
	return (need & DEV_NEED_PINNED) |
	       (need & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_ATOMIC) ? IBV_ACCESS_LOCAL_WRITE : 0);
}

/*
 * Walk [va, va + len) of mk piece by piece, each through its entry's own
 * key; fn takes each piece.  0, DEV_SGL_PROT (an entry's key refused it)
 * or what fn returned.
 */
typedef int (*piece_fn)(void *arg, uint8_t *p, uint32_t n);

static int mkey_walk(const struct emu_mkey *mk, uint64_t va, uint64_t len,
		     const struct emu_pd *pd, uint32_t need, piece_fn fn, void *arg)
{
	uint64_t off = va - mk->start, block = 0, rep = 0;
	uint32_t i = 0, eneed = entry_need(need);
	int ret;

	if (mk->repeat) {
		for (uint32_t j = 0; j < mk->nent; j++)
			block += mk->ent[j].len;
		if (!block)
			return DEV_SGL_PROT;
		/*
		 * The key maps repeat_count repetitions, whatever length the
		 * UMR gave it (mlx5dv_wr_mr_interleaved(3)): none past them.
		 */
		rep = off / block;
		if (rep >= mk->repeat)
			return DEV_SGL_PROT;
		off %= block;
	}
	while (len) {
		const struct emu_mkey_ent *e;
		uint64_t n, addr;
		uint8_t *p;

		if (i == mk->nent) {
			if (!mk->repeat || ++rep == mk->repeat)
				return DEV_SGL_PROT;	/* past the translation */
			i = 0;
		}
		e = &mk->ent[i++];
		if (off >= e->len) {
			off -= e->len;
			continue;
		}
		n = e->len - off < len ? e->len - off : len;
		addr = e->addr + rep * e->stride + off;
		p = dev_lkey_ptr(e->key, addr, n, pd, eneed);
		if (!p)
			return DEV_SGL_PROT;
		ret = fn(arg, p, (uint32_t)n);
		if (ret)
			return ret;
		len -= n;
		off = 0;
	}
	return 0;
}

static int sgl_add(void *arg, uint8_t *p, uint32_t n)
{
	struct dev_sgl *sgl = arg;

	if (sgl->n == DEV_MAX_SGE)
		return DEV_SGL_LEN;
	sgl->e[sgl->n++] = (struct dev_sge){ p, n, false, false };
	sgl->total += n;
	return 0;
}

/* The signature key a key names, if configured and of pd: its bytes are the wire's (sig.c). */
static struct emu_mkey *sig_key(uint32_t key, const struct emu_pd *pd)
{
	struct emu_mkey *mk = emu_mkey_by_key_locked(key);

	return mk && mk->sig && !mk->free && mk->pd == pd ? mk : NULL;
}

int dev_mkey_sgl(struct dev_sgl *sgl, uint32_t key, uint64_t va, uint64_t len,
		 const struct emu_pd *pd, uint32_t need)
{
	struct emu_mkey *smk = sig_key(key, pd);
	const struct emu_mkey *mk;

	if (smk)
		return need & IBV_ACCESS_LOCAL_WRITE ? dev_sig_scatter(sgl, smk, va, len, pd, need) :
			      dev_sig_gather(sgl, smk, va, len, pd);
	mk = mkey_for(key, va, len, pd, need);
	return mk ? mkey_walk(mk, va, len, pd, need, sgl_add, sgl) : DEV_SGL_PROT;
}

/* the one piece a range lies in */
static int one_piece(void *arg, uint8_t *p, uint32_t n)
{
	(void)n;
	if (*(uint8_t **)arg)
		return DEV_SGL_LEN;
	*(uint8_t **)arg = p;
	return 0;
}

uint8_t *dev_mkey_ptr(uint32_t key, uint64_t va, uint64_t len, const struct emu_pd *pd,
		      uint32_t need)
{
	const struct emu_mkey *mk = mkey_for(key, va, len, pd, need);
	uint8_t *p = NULL;

	if (!mk || !len || mkey_walk(mk, va, len, pd, need, one_piece, &p))
		return NULL;
	return p;
}

bool dev_rkey_ok(uint32_t rkey, uint64_t va, uint64_t len, const struct emu_pd *pd,
		 const struct emu_qp *qp, uint32_t need)
{
	const struct emu_mkey *smk;

	if (dev_rkey_ptr(rkey, va, len, pd, qp, need) || mkey_for(rkey, va, len, pd, need))
		return true;
	smk = sig_key(rkey, pd);
	return smk && dev_sig_range_ok(smk, va, len, pd, need);
}

struct copy_arg {
	uint8_t		*buf;
	bool		to_mem;
};

static int copy_piece(void *arg, uint8_t *p, uint32_t n)
{
	struct copy_arg *c = arg;

	if (!(c->to_mem ? dev_copy(p, c->buf, n) : dev_copy(c->buf, p, n)))
		return DEV_SGL_PROT;
	c->buf += n;
	return 0;
}

bool dev_rkey_copy(uint32_t rkey, uint64_t mva, uint64_t mlen, uint64_t off, void *buf,
		   uint32_t len, const struct emu_pd *pd, const struct emu_qp *qp, uint32_t need,
		   bool to_mem, struct dev_sig_err *err)
{
	uint8_t *p = dev_rkey_ptr(rkey, mva + off, len, pd, qp, need);
	struct copy_arg c = { buf, to_mem };
	const struct emu_mkey *mk;
	struct emu_mkey *smk;

	if (p)
		return to_mem ? dev_copy(p, buf, len) : dev_copy(buf, p, len);
	mk = mkey_for(rkey, mva + off, len, pd, need);
	if (mk)
		return !mkey_walk(mk, mva + off, len, pd, need, copy_piece, &c);
	smk = sig_key(rkey, pd);
	if (!smk || !dev_sig_range_ok(smk, mva, mlen, pd, need))
		return false;
	return to_mem ? dev_sig_write(smk, mva, mlen, off, buf, len, pd, err) :
			dev_sig_read(smk, mva, mlen, off, buf, len, pd, err);
}

int dev_mkey_map(struct dev_sgl *sgl, const struct emu_mkey *mk, uint64_t off, uint64_t len,
		 const struct emu_pd *pd, uint32_t need)
{
	return mkey_walk(mk, mk->start + off, len, pd, need, sgl_add, sgl);
}

bool dev_mkey_read(const struct emu_mkey *mk, uint64_t off, void *buf, uint32_t len,
		   const struct emu_pd *pd)
{
	struct copy_arg c = { buf, false };

	return !mkey_walk(mk, mk->start + off, len, pd, 0, copy_piece, &c);
}

bool dev_mkey_write(const struct emu_mkey *mk, uint64_t off, const void *buf, uint32_t len,
		    const struct emu_pd *pd)
{
	struct copy_arg c = { (uint8_t *)(uintptr_t)buf, true };

	return !mkey_walk(mk, mk->start + off, len, pd, IBV_ACCESS_LOCAL_WRITE, copy_piece, &c);
}

static int no_piece(void *arg, uint8_t *p, uint32_t n)
{
	(void)arg;
	(void)p;
	(void)n;
	return 0;
}

bool dev_mkey_covers(const struct emu_mkey *mk, uint64_t off, uint64_t len,
		     const struct emu_pd *pd, uint32_t need)
{
	return !mkey_walk(mk, mk->start + off, len, pd, need, no_piece, NULL);
}

/*
 * Invalidation of an indirect mkey: locally (qp NULL) any configured key
 * of the PD, remotely (SEND_WITH_INV) only one created with en_rinval.
 */
int dev_mkey_invalidate(struct emu_qp *qp, const struct emu_pd *pd, uint32_t key)
{
	struct emu_mkey *mk = emu_mkey_by_key_locked(key);

	if (!mk || mk->pd != pd || mk->free || (qp && !mk->rinval))
		return -1;
	mk->free = true;
	return 0;
}
