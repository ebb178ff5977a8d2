/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sig.c - block signature offload on indirect mkeys: the BSF of a UMR
 * WQE (mlx5dv_wr_set_mkey_sig_block()), the SET_PSV WQEs that give each
 * domain its initial signature, and the transform of data gathered
 * through such a key, with the signature error CQE of a failed check.
 *
 * A signature key has two views of its bytes: the memory domain, which
 * its KLM layout maps (blocks of bs data bytes, each followed by the
 * memory's protection information if that domain is signed), and the wire
 * domain, the key's address space (blocks of bs data bytes, each followed
 * by the wire's protection information if that domain is signed).  A
 * gather (the source of a SEND or RDMA WRITE through the key as lkey)
 * reads memory blocks, checks the memory's PI of every block it reads
 * whole (the check mask says which PI bytes), and gives the wire bytes,
 * the wire's PI generated (or, with the same block structure, the bytes
 * of the copy mask copied).  A block the access does not cover whole is
 * not checked, and its PI is generated only if the access asks for a
 * byte of it.  A scatter (a receive or READ response landing in the key)
 * is modelled where that rule leaves nothing to check or generate: the
 * data bytes of blocks it does not write whole.  A mismatch completes the WQE as usual, with a signature
 * error CQE before its completion, as libmlx5 reads it (cq.c,
 * struct mlx5_sigerr_cqe) for mlx5dv_mkey_check().
 *
 * Not modelled, refused when the UMR configures them (a bind error):
 * CRC64-XP10 and 4048-byte blocks (the caps say neither), a partial app
 * tag check mask, domains of different block sizes, a BSF other than the
 * signature one with its inline sections.  Refused when used: a scatter
 * that writes a block whole or a byte of the wire's PI, and any use as an
 * rkey, which would need the wire's checks and the memory's generation
 * (a protection error, as for a key that does not allow it).
 */
#include <stdlib.h>

#include "device.h"

enum {
	BSF_SIZE_WITH_INLINE	= 2,	/* bsf_size_sbs >> 6 */
	BSF_SBS			= 1 << 4,
	BFS_CRC32		= 0x20,
	BFS_CRC32C		= 0x40,
	BFS_SEED_BIT		= 0x01,	/* the CRC starts at 0, not all ones */
	BFS_REPEAT_BIT		= 0x02,
	INL_VALID		= 1 << 15,
	INL_REPEAT_BLOCK	= 1 << 7,
	INL_SEED		= 1 << 3,
	INL_T10DIF_CRC		= 1,
	INL_T10DIF_IPCS		= 2,
	DIF_INC_REFTAG		= 1 << 6,
	DIF_APPTAG_ESCAPE	= 1 << 0,
	DIF_APPREF_ESCAPE	= 1 << 1,
	MASK_GUARD		= 0xc0,	/* check_byte_mask: PI byte 0 is the MSB */
	MASK_APPTAG		= 0x30,
	MASK_REFTAG		= 0x0f,
	SYND_REFTAG		= 1 << 11,	/* mlx5_sigerr_cqe.syndrome */
	SYND_APPTAG		= 1 << 12,
	SYND_GUARD		= 1 << 13,
	DOMAIN_WIRE		= 0,
	DOMAIN_MEMORY		= 1,
	MAX_BLOCK		= 4160 + 8,
};

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* bs_selector -> data bytes of a block; 0: not modelled (4048) or none */
static uint16_t block_bytes(uint8_t sel)
{
	switch (sel) {
	case 1: return 512;
	case 2: return 520;
	case 3: return 4096;
	case 4: return 4160;
	default: return 0;
	}
}

static uint32_t pi_bytes(uint8_t type)
{
	return type == EMU_SIG_NONE ? 0 : type <= EMU_SIG_T10DIF_CSUM ? 8 : 4;
}

/*
 * One domain of the BSF: bfs_psv (its block format selector and PSV) and
 * its inline section; false if it asks for what is not modelled.
 */
static bool parse_domain(struct emu_sig_domain *d, uint32_t bfs_psv, const uint8_t *inl,
			 uint8_t sel, const struct emu_pd *pd)
{
	uint8_t bfs = (uint8_t)(bfs_psv >> 24);
	const struct emu_psv *psv;

	memset(d, 0, sizeof(*d));
	if (!(dev_be16(inl) & INL_VALID) && !bfs_psv)
		return true;	/* not signed */
	d->psvn = bfs_psv & 0xffffff;
	psv = emu_psv_by_num_locked(d->psvn);
	d->bs = block_bytes(sel);
	if (!psv || psv->pd != pd || !d->bs)
		return false;
	if (dev_be16(inl) & INL_VALID) {
		/* T10-DIF: a repeating block, the whole app tag checked */
		if (bfs || !(inl[9] & INL_REPEAT_BLOCK) || dev_be16(inl + 14) != 0xffff ||
		    (inl[13] & ~(DIF_INC_REFTAG | DIF_APPTAG_ESCAPE | DIF_APPREF_ESCAPE)))
			return false;
		if (inl[8] == INL_T10DIF_CRC)
			d->type = EMU_SIG_T10DIF_CRC;
		else if (inl[8] == INL_T10DIF_IPCS)
			d->type = EMU_SIG_T10DIF_CSUM;
		else
			return false;
		d->dif_flags = inl[13];
		d->seed = inl[9] & INL_SEED;
		return true;
	}
	if (!(bfs & BFS_REPEAT_BIT))
		return false;
	switch (bfs & ~(BFS_SEED_BIT | BFS_REPEAT_BIT)) {
	case BFS_CRC32: d->type = EMU_SIG_CRC32; break;
	case BFS_CRC32C: d->type = EMU_SIG_CRC32C; break;
	default: return false;	/* CRC64-XP10 and the rest */
	}
	d->seed = !(bfs & BFS_SEED_BIT);
	return true;
}

/*
 * A UMR's BSF (64 bytes at bsf) for mk, which the UMR enables, read into
 * s: 0, or the syndrome of the UMR's error CQE.
 */
uint8_t dev_sig_parse(const struct dev_qp *dq, const struct emu_mkey *mk, const uint8_t *bsf,
		      struct emu_mkey_sig *s_out)
{
	struct emu_mkey_sig s = { 0 };

	if (!mk->bsf || bsf[0] >> 6 != BSF_SIZE_WITH_INLINE)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	s.sbs = bsf[0] & BSF_SBS;
	s.check_mask = bsf[1];
	if (!parse_domain(&s.mem, dev_be32(bsf + 12), bsf + 48, bsf[3], dq->qp->pd) ||
	    !parse_domain(&s.wire, dev_be32(bsf + 8), bsf + 32, s.sbs ? bsf[3] : bsf[2],
			  dq->qp->pd))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if (s.sbs) {
		/* the same block structure: the wire copies these PI bytes */
		if (s.mem.type != s.wire.type)
			return RF_CQE_SYNDROME_MW_BIND_ERR;
		s.copy_mask = bsf[2];
	}
	if (s.mem.type && s.wire.type && s.mem.bs != s.wire.bs)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	*s_out = s;
	return 0;
}

/* The key takes s (NULL, or no domain signed: no BSF); false if out of memory. */
bool dev_sig_commit(struct emu_mkey *mk, const struct emu_mkey_sig *s)
{
	struct emu_mkey_sig *n;

	if (!s || (!s->mem.type && !s->wire.type)) {
		dev_sig_disable(mk);
		return true;
	}
	n = mk->sig ? mk->sig : calloc(1, sizeof(*n));
	if (!n)
		return false;
	*n = (struct emu_mkey_sig){ s->mem, s->wire, s->check_mask, s->copy_mask, s->sbs,
				    n->img, n->img_cap };
	mk->sig = n;
	return true;
}

void dev_sig_disable(struct emu_mkey *mk)
{
	if (mk->sig)
		free(mk->sig->img);
	free(mk->sig);
	mk->sig = NULL;
}

/* SET_PSV: the PSV's initial signature; 0 or the error CQE's syndrome */
uint8_t dev_sig_set_psv(const struct dev_qp *dq, const uint8_t *seg)
{
	struct emu_psv *psv = emu_psv_by_num_locked(dev_be32(seg) & 0xffffff);

	if (!psv || psv->pd != dq->qp->pd)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	psv->ts = dev_be64(seg + 8);
	return 0;
}

/* ---- the signatures ------------------------------------------------------ */

/* T10-DIF's CRC16 (polynomial 0x8bb7, not reflected, no final xor) */
static uint16_t crc16_t10dif(uint16_t crc, const uint8_t *p, uint32_t n)
{
	while (n--) {
		crc ^= (uint16_t)(*p++ << 8);
		for (int i = 0; i < 8; i++)
			crc = (uint16_t)(crc & 0x8000 ? crc << 1 ^ 0x8bb7 : crc << 1);
	}
	return crc;
}

/* the IP checksum (RFC 1071) of big-endian 16-bit words, from seed */
static uint16_t ip_csum(uint16_t seed, const uint8_t *p, uint32_t n)
{
	uint32_t sum = seed;

	for (uint32_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* CRC32 (poly 0xedb88320) or CRC32C (0x82f63b78), reflected, final xor */
static uint32_t crc32_refl(uint32_t poly, uint32_t crc, const uint8_t *p, uint32_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = crc & 1 ? crc >> 1 ^ poly : crc >> 1;
	}
	return ~crc;
}

/* The PI of block k of a domain over its bs data bytes, big-endian, into pi. */
static void pi_make(const struct emu_sig_domain *d, uint64_t ts, uint64_t k,
		    const uint8_t *data, uint8_t *pi)
{
	uint32_t v;

	if (d->type == EMU_SIG_CRC32 || d->type == EMU_SIG_CRC32C) {
		v = crc32_refl(d->type == EMU_SIG_CRC32 ? 0xedb88320u : 0x82f63b78u,
			       d->seed ? ~0u : 0, data, d->bs);
		put_be32(pi, v);
		return;
	}
	v = d->type == EMU_SIG_T10DIF_CRC ?
	    crc16_t10dif(d->seed ? (uint16_t)(ts >> 48) : 0, data, d->bs) :
	    ip_csum(d->seed ? (uint16_t)(ts >> 48) : 0, data, d->bs);
	pi[0] = (uint8_t)(v >> 8);
	pi[1] = (uint8_t)v;
	pi[2] = (uint8_t)(ts >> 40);
	pi[3] = (uint8_t)(ts >> 32);
	put_be32(pi + 4, (uint32_t)ts + (d->dif_flags & DIF_INC_REFTAG ? (uint32_t)k : 0));
}

/*
 * Check block k's PI in a domain against its data under the check mask:
 * 0, or the signature error CQE's syndrome, the expected and actual
 * values in e.
 */
static uint16_t pi_check(const struct emu_sig_domain *d, uint64_t ts, uint64_t k,
			 const uint8_t *data, const uint8_t *pi, uint8_t mask,
			 struct dev_sig_err *e)
{
	uint8_t want[8];
	uint16_t synd = 0;
	uint32_t n = pi_bytes(d->type);

	pi_make(d, ts, k, data, want);
	if (n == 8 && (d->dif_flags & (DIF_APPTAG_ESCAPE | DIF_APPREF_ESCAPE)) &&
	    dev_be16(pi + 2) == 0xffff &&
	    (!(d->dif_flags & DIF_APPREF_ESCAPE) || dev_be32(pi + 4) == 0xffffffffu))
		return 0;	/* an escaped block is not checked */
	for (uint32_t i = 0; i < n; i++) {
		if (!(mask & 0x80 >> i) || want[i] == pi[i])
			continue;
		synd |= n == 4 || i < 2 ? SYND_GUARD : i < 4 ? SYND_APPTAG : SYND_REFTAG;
	}
	if (!synd)
		return 0;
	e->exp_sig = dev_be32(want);	/* guard and app tag, or the CRC */
	e->act_sig = dev_be32(pi);
	e->exp_ref = n == 8 ? dev_be32(want + 4) : 0;
	e->act_ref = n == 8 ? dev_be32(pi + 4) : 0;
	return synd;
}

/* ---- data through a signature key ---------------------------------------- */

/* The wire bytes of a key whose memory layout is mem_len bytes long. */
static uint64_t wire_len(const struct emu_mkey_sig *s, uint16_t bs, uint64_t mem_len)
{
	uint64_t mb = bs + pi_bytes(s->mem.type), wb = bs + pi_bytes(s->wire.type);
	uint64_t rem = mem_len % mb;

	return mem_len / mb * wb + (rem < bs ? rem : bs);
}

/*
 * [va, va + len) of signature key mk gathered: the wire bytes built in
 * the key's buffer, appended to sgl as one piece; a failed check of the
 * memory's PI noted in sgl->sig (the first one).  0 or DEV_SGL_*.
 */
int dev_sig_gather(struct dev_sgl *sgl, struct emu_mkey *mk, uint64_t va, uint64_t len,
		   const struct emu_pd *pd)
{
	struct emu_mkey_sig *s = mk->sig;
	uint16_t bs = s->mem.type ? s->mem.bs : s->wire.bs;
	uint32_t pm = pi_bytes(s->mem.type), pw = pi_bytes(s->wire.type);
	uint64_t mb = bs + pm, wb = bs + pw, off = va - mk->start, end = off + len;
	const struct emu_psv *mpsv = s->mem.type ? emu_psv_by_num_locked(s->mem.psvn) : NULL;
	const struct emu_psv *wpsv = s->wire.type ? emu_psv_by_num_locked(s->wire.psvn) : NULL;
	uint8_t blk[MAX_BLOCK], wpi[8];
	uint8_t *out;

	if (va < mk->start || len > wire_len(s, bs, mk->length) ||
	    off > wire_len(s, bs, mk->length) - len || (s->mem.type && !mpsv) ||
	    (s->wire.type && !wpsv))
		return DEV_SGL_PROT;
	if (!len)
		return 0;
	/* one piece of the key's buffer a WQE: a second would overwrite the first */
	for (unsigned i = 0; i < sgl->n; i++)
		if (s->img && sgl->e[i].ptr >= s->img && sgl->e[i].ptr < s->img + s->img_cap)
			return DEV_SGL_PROT;
	if (sgl->n == DEV_MAX_SGE || len > dev_max_msg())
		return DEV_SGL_LEN;
	if (!s->img || s->img_cap < len) {
		out = realloc(s->img, len);
		if (!out)
			return DEV_SGL_LEN;
		s->img = out;
		s->img_cap = len;
	}
	out = s->img;
	for (uint64_t w = off; w < end;) {
		uint64_t k = w / wb, o = w % wb, n = (k + 1) * wb < end ? (k + 1) * wb - w : end - w;
		bool whole = o == 0 && n == wb;

		if (!(pw && o + n > bs) && !(pm && whole)) {
			/* data bytes only, of a block not read whole */
			if (!dev_mkey_read(mk, k * mb + o, out, (uint32_t)n, pd))
				return DEV_SGL_PROT;
		} else {
			if (!dev_mkey_read(mk, k * mb, blk, (uint32_t)mb, pd))
				return DEV_SGL_PROT;
			/* checked while armed: no error reported since a UMR expected one */
			if (pm && whole && !sgl->sig.synd &&
			    mk->sigerr_count != mk->sigerr_expected) {
				sgl->sig.synd = pi_check(&s->mem, mpsv->ts, k, blk, blk + bs,
							 s->check_mask, &sgl->sig);
				sgl->sig.domain = DOMAIN_MEMORY;
				sgl->sig.offset = k * mb;
				sgl->sig.mkey = mk->key;
			}
			if (pw) {
				pi_make(&s->wire, wpsv->ts, k, blk, wpi);
				for (uint32_t i = 0; s->sbs && i < pw; i++)
					if (s->copy_mask & 0x80 >> i)
						wpi[i] = blk[bs + i];
				memcpy(blk + bs, wpi, pw);
			}
			memcpy(out, blk + o, n);
		}
		out += n;
		w += n;
	}
	sgl->e[sgl->n++] = (struct dev_sge){ s->img, (uint32_t)len, true };
	sgl->total += len;
	return 0;
}

/*
 * [va, va + len) of signature key mk scattered to (a receive or READ
 * response landing, local write access): modelled where nothing is
 * checked or generated - data bytes of blocks not written whole, which
 * go straight to the memory's data bytes.  A range that writes a block
 * whole or a byte of the wire's PI would need the wire's check and the
 * memory's PI: refused, DEV_SGL_PROT.
 */
int dev_sig_scatter(struct dev_sgl *sgl, struct emu_mkey *mk, uint64_t va, uint64_t len,
		    const struct emu_pd *pd, uint32_t need)
{
	const struct emu_mkey_sig *s = mk->sig;
	uint16_t bs = s->mem.type ? s->mem.bs : s->wire.bs;
	uint64_t mb = bs + pi_bytes(s->mem.type), wb = bs + pi_bytes(s->wire.type);
	uint64_t off = va - mk->start, end = off + len;
	int ret;

	if (!dev_key_grants(mk->access, need) || va < mk->start ||
	    len > wire_len(s, bs, mk->length) || off > wire_len(s, bs, mk->length) - len)
		return DEV_SGL_PROT;
	for (uint64_t w = off; w < end;) {
		uint64_t k = w / wb, o = w % wb, n = (k + 1) * wb < end ? (k + 1) * wb - w : end - w;

		if (o + n > bs || (o == 0 && n == wb))
			return DEV_SGL_PROT;
		ret = dev_mkey_map(sgl, mk, k * mb + o, n, pd, need);
		if (ret)
			return ret;
		w += n;
	}
	return 0;
}

/*
 * The signature error CQE of a gather's failed check (struct
 * mlx5_sigerr_cqe), on the send CQ before the WQE's completion.
 */
void dev_sig_err_cqe(struct dev_qp *dq, const struct dev_sig_err *e)
{
	uint8_t raw[48] = { 0 };
	struct dev_cqe c = { .opcode = RF_CQE_SIG_ERR, .qpn = dq->qp->qpn, .raw = raw };
	struct emu_mkey *mk = emu_mkey_by_key_locked(e->mkey);

	/* reported: the key is disarmed until a UMR expects one more */
	if (mk)
		mk->sigerr_count ^= 1;

	if (!dq->qp->send_cq)
		return;
	put_be32(raw + 0, e->exp_sig);
	put_be32(raw + 4, e->act_sig);
	put_be32(raw + 8, e->exp_ref);
	put_be32(raw + 12, e->act_ref);
	raw[16] = (uint8_t)(e->synd >> 8);
	raw[17] = (uint8_t)e->synd;
	raw[18] = 0;	/* a block signature */
	raw[19] = e->domain;
	put_be32(raw + 20, e->mkey);
	put_be32(raw + 24, (uint32_t)(e->offset >> 32));
	put_be32(raw + 28, (uint32_t)e->offset);
	dev_cq_write(dq->qp->send_cq, &c);
}
