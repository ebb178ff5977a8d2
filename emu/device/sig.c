/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sig.c - block signature offload on indirect mkeys: the BSF of a UMR
 * WQE (mlx5dv_wr_set_mkey_sig_block()), the SET_PSV WQEs that give each
 * domain its initial signature, and the transforms of data moving
 * through such a key, with the signature error CQE of a failed check.
 *
 * A signature key has two views of its bytes: the memory domain, which
 * its KLM layout maps (blocks of bs data bytes, each followed by the
 * memory's protection information if that domain is signed), and the wire
 * domain, the key's address space (blocks of bs data bytes, each followed
 * by the wire's protection information if that domain is signed).
 *
 * A gather (the source of a SEND or RDMA WRITE through the key as lkey,
 * or of a READ's response through it as rkey) reads memory blocks, checks
 * the memory's PI of every block the access reads whole (the check mask
 * says which PI bytes), and gives the wire bytes, the wire's PI generated
 * (or, with the same block structure, the copy mask's bytes copied).
 *
 * A scatter (a receive, a READ's response, an RDMA WRITE through the key
 * as rkey) is the reverse: the data bytes go to the memory's as they
 * arrive, and a block the message brings whole has the wire's PI checked
 * under the check mask and the memory's generated (copy-mask bytes copied
 * from the wire's).  That the hardware does all of it is what its users
 * rely on: rdma-core's tests/test_mlx5_mkey.py (test_mkey_sig_t10dif,
 * _crc) posts its receive through a signature key; the kernel's
 * rdma_rw_ctx_signature_init() (drivers/infiniband/core/rw.c) makes an
 * IB_MR_TYPE_INTEGRITY key the local SGE of the RDMA READ that iSER's
 * target (drivers/infiniband/ulp/isert) and NVMe-oF's
 * (drivers/nvme/target/rdma.c) pull a WRITE's data with, and the
 * initiators (iser_reg_sig_mr() in drivers/infiniband/ulp/iser, the PI
 * path of drivers/nvme/host/rdma.c) hand such a key's rkey, with remote
 * read and write access, to the target, which WRITEs a READ's data into
 * it.  A key without the access is refused as any key is.
 *
 * The error CQE (struct mlx5_sigerr_cqe) names the key, not a WQE:
 * libmlx5 (providers/mlx5/cq.c, MLX5_CQE_SIG_ERR in mlx5_parse_cqe()) and
 * the kernel (drivers/infiniband/hw/mlx5/cq.c, mlx5_poll_one()) look the
 * key up by it, note the error for mlx5dv_mkey_check() /
 * ib_check_mr_status() and poll on, returning no completion.  So the
 * key's owner learns of a remote access's error once it polls, as
 * mlx5dv_mkey_check(3) says: after the completion for a local key, after
 * the peer's message for a remote one.  No public source says which of
 * the owner's CQs a ConnectX uses when the peer did the access (iSER and
 * NVMe-oF give a QP one CQ for both); the model writes it where the
 * work's completion would go: the send CQ for a WQE of the QP (before its
 * completion, which succeeds), the receive CQ for what the QP does as
 * responder.  Its offset is the block's in the domain whose check failed
 * (iser_check_task_pi_status() divides it by the protected block's size).
 *
 * Blocks split between packets: the emulated wire carries a message in
 * packets of WIRE_MTU bytes (a READ's responses too) and each is placed
 * as it arrives, so a block's data and PI may come in different packets.
 * The data is in memory already when the block's last byte comes; the
 * wire's PI bytes wait in the key (pend_pi) until then, and the check
 * runs on the block read back from memory.  What decides "whole" is the
 * message's range in the key (one SGE of a WQE, or the RDMA range): a
 * block split between two WQEs or messages moves its data bytes only, as
 * a gather does.  One scatter into a key a WQE; two messages landing in
 * one key at once share its pending PI (a key serves one I/O at a time
 * in iSER and NVMe-oF).
 *
 * Not modelled, refused when the UMR configures them (a bind error):
 * CRC64-XP10 and 4048-byte blocks (the caps say neither), a partial app
 * tag check mask, domains of different block sizes, a BSF other than the
 * signature one with its inline sections.  Refused when used: an atomic
 * through the key as rkey (a remote access error, as for a key without
 * the access).  Not used: the requester's scatter-to-CQE for a READ
 * into the key, whose data goes through the key.
 */
#include <pthread.h>
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
				    n->img, n->img_cap, 0, { 0 } };
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

/*
 * The CRCs a byte at a time from tables (the bit-at-a-time loop took
 * 4 us a 512-byte block, the cost of a whole READ of a few blocks): each
 * entry is what eight shifts of the polynomial's division make of a byte,
 * computed once for the process.
 */
#define POLY_T10DIF	0x8bb7		/* not reflected */
#define POLY_CRC32	0xedb88320u	/* reflected */
#define POLY_CRC32C	0x82f63b78u

static uint16_t crc16_tab[256];
static uint32_t crc32_tab[256], crc32c_tab[256];
static pthread_once_t crc_tabs_once = PTHREAD_ONCE_INIT;

static uint32_t crc32_byte(uint32_t poly, uint32_t c)
{
	for (int i = 0; i < 8; i++)
		c = c & 1 ? c >> 1 ^ poly : c >> 1;
	return c;
}

static void crc_tabs_make(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		uint16_t c = (uint16_t)(b << 8);

		for (int i = 0; i < 8; i++)
			c = (uint16_t)(c & 0x8000 ? c << 1 ^ POLY_T10DIF : c << 1);
		crc16_tab[b] = c;
		crc32_tab[b] = crc32_byte(POLY_CRC32, b);
		crc32c_tab[b] = crc32_byte(POLY_CRC32C, b);
	}
}

/* T10-DIF's CRC16 (polynomial 0x8bb7, not reflected, no final xor) */
static uint16_t crc16_t10dif(uint16_t crc, const uint8_t *p, uint32_t n)
{
	pthread_once(&crc_tabs_once, crc_tabs_make);
	while (n--)
		crc = (uint16_t)(crc << 8 ^ crc16_tab[(crc >> 8 ^ *p++) & 0xff]);
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

/* CRC32 or CRC32C (its table), reflected, final xor */
static uint32_t crc32_refl(const uint32_t *tab, uint32_t crc, const uint8_t *p, uint32_t n)
{
	pthread_once(&crc_tabs_once, crc_tabs_make);
	while (n--)
		crc = crc >> 8 ^ tab[(crc ^ *p++) & 0xff];
	return ~crc;
}

/* The PI of block k of a domain over its bs data bytes, big-endian, into pi. */
static void pi_make(const struct emu_sig_domain *d, uint64_t ts, uint64_t k,
		    const uint8_t *data, uint8_t *pi)
{
	uint32_t v;

	if (d->type == EMU_SIG_CRC32 || d->type == EMU_SIG_CRC32C) {
		v = crc32_refl(d->type == EMU_SIG_CRC32 ? crc32_tab : crc32c_tab,
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

/* A key's blocks: bs data bytes, pm / pw PI bytes in memory / on the wire. */
struct geom {
	uint64_t	bs, pm, pw, mb, wb;
};

static struct geom geom_of(const struct emu_mkey_sig *s)
{
	struct geom g;

	g.bs = s->mem.type ? s->mem.bs : s->wire.bs;
	g.pm = pi_bytes(s->mem.type);
	g.pw = pi_bytes(s->wire.type);
	g.mb = g.bs + g.pm;
	g.wb = g.bs + g.pw;
	return g;
}

/* The wire bytes of a key whose memory layout is mem_len bytes long. */
static uint64_t wire_len(const struct geom *g, uint64_t mem_len)
{
	uint64_t rem = mem_len % g->mb;

	return mem_len / g->mb * g->wb + (rem < g->bs ? rem : g->bs);
}

/* The memory offset wire offset w maps to (a block's end: the next block's start). */
static uint64_t mem_off(const struct geom *g, uint64_t w)
{
	uint64_t o = w % g->wb;

	return w / g->wb * g->mb + (o < g->bs ? o : g->bs);
}

/* Checked while armed: no error reported since a UMR expected one. */
static bool armed(const struct emu_mkey *mk)
{
	return mk->sigerr_count != mk->sigerr_expected;
}

/* A failed check (pi_check()'s values in err) of the block at offset in domain. */
static void note_err(struct dev_sig_err *err, uint16_t synd, uint8_t domain,
		     const struct emu_mkey *mk, uint64_t offset)
{
	err->synd = synd;
	err->domain = domain;
	err->offset = offset;
	err->mkey = mk->key;
}

bool dev_sig_range_ok(const struct emu_mkey *mk, uint64_t va, uint64_t len,
		      const struct emu_pd *pd, uint32_t need)
{
	const struct emu_mkey_sig *s = mk->sig;
	struct geom g = geom_of(s);
	uint64_t wl = wire_len(&g, mk->length), off = va - mk->start;

	if (!dev_key_grants(mk->access, need) || va < mk->start || len > wl || off > wl - len ||
	    (s->mem.type && !emu_psv_by_num_locked(s->mem.psvn)) ||
	    (s->wire.type && !emu_psv_by_num_locked(s->wire.psvn)))
		return false;
	/* a write reaches every memory byte of the range's blocks: all mapped, writable */
	return !(need & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)) || !len ||
	       dev_mkey_covers(mk, mem_off(&g, off), mem_off(&g, off + len) - mem_off(&g, off),
			       pd, IBV_ACCESS_LOCAL_WRITE);
}

/*
 * Wire bytes [off, end) of key mk built into out, as part of an access
 * [aoff, aend) (both wire offsets; the access is what decides which
 * blocks are whole, so that a block split between a READ's response
 * packets is checked once, by the packet that ends it): memory read
 * through the layout, the memory's PI checked, the wire's generated.
 * False if the memory cannot be read.
 */
static bool gather_to(struct emu_mkey *mk, uint64_t off, uint64_t end, uint64_t aoff,
		      uint64_t aend, uint8_t *out, const struct emu_pd *pd, struct dev_sig_err *err)
{
	const struct emu_mkey_sig *s = mk->sig;
	struct geom g = geom_of(s);
	const struct emu_psv *mpsv = s->mem.type ? emu_psv_by_num_locked(s->mem.psvn) : NULL;
	const struct emu_psv *wpsv = s->wire.type ? emu_psv_by_num_locked(s->wire.psvn) : NULL;
	uint8_t blk[MAX_BLOCK], wpi[8];

	for (uint64_t w = off; w < end;) {
		uint64_t k = w / g.wb, o = w % g.wb;
		uint64_t n = (k + 1) * g.wb < end ? (k + 1) * g.wb - w : end - w;
		bool check = g.pm && o + n == g.wb && k * g.wb >= aoff && (k + 1) * g.wb <= aend;

		if (!(g.pw && o + n > g.bs) && !check) {
			/* data bytes only, of a block not checked here */
			if (!dev_mkey_read(mk, k * g.mb + o, out, (uint32_t)n, pd))
				return false;
		} else {
			if (!dev_mkey_read(mk, k * g.mb, blk, (uint32_t)g.mb, pd))
				return false;
			if (check && !err->synd && armed(mk)) {
				uint16_t synd = pi_check(&s->mem, mpsv->ts, k, blk, blk + g.bs,
							 s->check_mask, err);

				if (synd)
					note_err(err, synd, DOMAIN_MEMORY, mk, k * g.mb);
			}
			if (g.pw) {
				pi_make(&s->wire, wpsv->ts, k, blk, wpi);
				for (uint32_t i = 0; s->sbs && i < g.pw; i++)
					if (s->copy_mask & 0x80 >> i)
						wpi[i] = blk[g.bs + i];
				memcpy(blk + g.bs, wpi, g.pw);
			}
			memcpy(out, blk + o, n);
		}
		out += n;
		w += n;
	}
	return true;
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
	uint64_t off = va - mk->start;
	uint8_t *out;

	if (!dev_sig_range_ok(mk, va, len, pd, 0))
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
	if (!gather_to(mk, off, off + len, off, off + len, s->img, pd, &sgl->sig))
		return DEV_SGL_PROT;
	sgl->e[sgl->n++] = (struct dev_sge){ s->img, (uint32_t)len, true, false };
	sgl->total += len;
	return 0;
}

bool dev_sig_read(struct emu_mkey *mk, uint64_t mva, uint64_t mlen, uint64_t off, void *buf,
		  uint32_t len, const struct emu_pd *pd, struct dev_sig_err *err)
{
	uint64_t a = mva - mk->start;

	return off <= mlen && len <= mlen - off &&
	       gather_to(mk, a + off, a + off + len, a, a + mlen, buf, pd, err);
}

/*
 * [va, va + len) of signature key mk as the destination of a message (a
 * receive, a READ response, an RDMA WRITE through it as rkey): one piece
 * appended to sgl, whose bytes dev_sig_scatter_in() places as they come.
 * One such piece an SGL: its state is the SGL's sig_in.  0 or DEV_SGL_*.
 */
int dev_sig_scatter(struct dev_sgl *sgl, struct emu_mkey *mk, uint64_t va, uint64_t len,
		    const struct emu_pd *pd, uint32_t need)
{
	if (!dev_sig_range_ok(mk, va, len, pd, need))
		return DEV_SGL_PROT;
	if (!len)
		return 0;
	for (unsigned i = 0; i < sgl->n; i++)
		if (sgl->e[i].sig)
			return DEV_SGL_PROT;
	if (sgl->n == DEV_MAX_SGE || len > dev_max_msg())
		return DEV_SGL_LEN;
	sgl->sig_in = (struct dev_sig_in){ mk, pd, va - mk->start, len };
	sgl->e[sgl->n++] = (struct dev_sge){ NULL, (uint32_t)len, false, true };
	sgl->total += len;
	return 0;
}

/*
 * Block k, whose wire bytes all arrived in this access (its data in
 * memory already, its wire PI in pend_pi): the wire's PI checked, the
 * memory's generated (copy-mask bytes copied from the wire's).
 */
static bool scatter_block(struct emu_mkey *mk, uint64_t k, const struct emu_pd *pd,
			  struct dev_sig_err *err)
{
	struct emu_mkey_sig *s = mk->sig;
	struct geom g = geom_of(s);
	const struct emu_psv *psv;
	uint8_t blk[MAX_BLOCK], mpi[8];

	if (!dev_mkey_read(mk, k * g.mb, blk, (uint32_t)g.bs, pd))
		return false;
	if (g.pw && s->pend_blk == k + 1 && !err->synd && armed(mk)) {
		uint16_t synd;

		psv = emu_psv_by_num_locked(s->wire.psvn);
		synd = psv ? pi_check(&s->wire, psv->ts, k, blk, s->pend_pi, s->check_mask,
				      err) : 0;
		if (synd)
			note_err(err, synd, DOMAIN_WIRE, mk, k * g.wb);
	}
	if (!g.pm)
		return true;
	psv = emu_psv_by_num_locked(s->mem.psvn);
	if (!psv)
		return false;
	pi_make(&s->mem, psv->ts, k, blk, mpi);
	for (uint32_t i = 0; s->sbs && i < g.pm; i++)
		if (s->copy_mask & 0x80 >> i)
			mpi[i] = s->pend_pi[i];
	return dev_mkey_write(mk, k * g.mb + g.bs, mpi, (uint32_t)g.pm, pd);
}

bool dev_sig_scatter_in(const struct dev_sig_in *si, uint64_t off, const uint8_t *in,
			uint32_t len, struct dev_sig_err *err)
{
	struct emu_mkey *mk = si->mk;
	struct emu_mkey_sig *s = mk->sig;
	struct geom g;
	uint64_t end;

	/* the key reconfigured or invalidated since the SGL was built */
	if (!s || mk->free || off > si->len || len > si->len - off)
		return false;
	g = geom_of(s);
	end = si->off + off + len;
	for (uint64_t w = si->off + off; w < end;) {
		uint64_t k = w / g.wb, o = w % g.wb;
		uint64_t n = (k + 1) * g.wb < end ? (k + 1) * g.wb - w : end - w;

		/* data bytes straight to the memory's; the wire's PI kept for the block's end */
		if (o < g.bs && !dev_mkey_write(mk, k * g.mb + o, in,
						(uint32_t)(o + n < g.bs ? n : g.bs - o), si->pd))
			return false;
		if (o + n > g.bs) {
			uint64_t p = o > g.bs ? o : g.bs;

			if (p == g.bs)
				s->pend_blk = k + 1;
			memcpy(s->pend_pi + (p - g.bs), in + (p - o), o + n - p);
		}
		/* the block's last byte, the access holding it whole: its signatures */
		if (o + n == g.wb && k * g.wb >= si->off && (k + 1) * g.wb <= si->off + si->len &&
		    !scatter_block(mk, k, si->pd, err))
			return false;
		in += n;
		w += n;
	}
	return true;
}

bool dev_sig_write(struct emu_mkey *mk, uint64_t mva, uint64_t mlen, uint64_t off,
		   const void *buf, uint32_t len, const struct emu_pd *pd, struct dev_sig_err *err)
{
	struct dev_sig_in si = { mk, pd, mva - mk->start, mlen };

	return dev_sig_scatter_in(&si, off, buf, len, err);
}

/*
 * The signature error CQE of a failed check (struct mlx5_sigerr_cqe) on
 * cq, for QP qpn: before the completion of the work that made the check.
 */
void dev_sig_err_cqe(struct emu_cq *cq, uint32_t qpn, const struct dev_sig_err *e)
{
	uint8_t raw[48] = { 0 };
	struct dev_cqe c = { .opcode = RF_CQE_SIG_ERR, .qpn = qpn, .raw = raw };
	struct emu_mkey *mk = emu_mkey_by_key_locked(e->mkey);

	/* reported: the key is disarmed until a UMR expects one more */
	if (mk)
		mk->sigerr_count ^= 1;

	if (!cq)
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
	dev_cq_write(cq, &c);
}
