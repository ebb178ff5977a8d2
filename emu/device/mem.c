/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mem.c - memory windows (access through them, binding by UMR WQEs,
 * invalidation) and data movement between packets and the gather/scatter
 * lists of WQEs.  MR keys are resolved inline (device.h): every packet
 * resolves one or two.
 */
#include "device.h"

/* A memory window: the rkey carries its current tag. */
uint8_t *dev_mw_ptr(uint32_t rkey, uint64_t va, uint64_t len,
		    const struct emu_pd *pd, const struct emu_qp *qp, uint32_t need)
{
	struct emu_mw *mw = emu_mw_by_rkey_locked(rkey);
	struct emu_mr *mr;
	uint64_t iova;

	if (!mw)
		return dev_mkey_ptr(rkey, va, len, pd, need);
	if (!mw->mr || mw->pd != pd || !dev_key_grants(mw->access, need) ||
	    !dev_mr_grants(mw->mr, need & DEV_NEED_PINNED))
		return NULL;
	if (mw->type == IBV_MW_TYPE_2 && mw->qp != qp)
		return NULL;
	if (mw->access & IBV_ACCESS_ZERO_BASED) {
		if (!dev_in_range(va, len, 0, mw->length))
			return NULL;
		iova = mw->addr + va;
	} else {
		if (!dev_in_range(va, len, mw->addr, mw->length))
			return NULL;
		iova = va;
	}
	mr = mw->mr;
	if (!dev_in_range(iova, len, mr->iova, mr->length))
		return NULL;
	return (uint8_t *)(uintptr_t)(mr->addr + (iova - mr->iova));
}

/*
 * Walk bytes [off, off + len) of the gather/scatter list: copy them out to
 * `out`, or in from `in` (exactly one is set).  The SGL points into
 * application memory: every piece goes through the fault guard, and the
 * first fault ends the copy with false (the caller writes the error CQE).
 * A piece into a signature key goes through its blocks (sig.c), a failed
 * check noted in err; it is never copied out (only scatters make one).
 */
static bool sgl_copy(const struct dev_sgl *sgl, uint64_t off, uint8_t *out,
		     const uint8_t *in, uint32_t len, struct dev_sig_err *err)
{
	for (unsigned i = 0; i < sgl->n && len; i++) {
		const struct dev_sge *e = &sgl->e[i];
		uint32_t n;

		if (off >= e->len) {
			off -= e->len;
			continue;
		}
		n = e->len - (uint32_t)off;
		if (n > len)
			n = len;
		if (DEV_UNLIKELY(e->sig)) {
			if (out || !dev_sig_scatter_in(&sgl->sig_in, off, in, n, err))
				return false;
			in += n;
		} else if (out) {
			if (e->local)
				memcpy(out, e->ptr + off, n);
			else if (DEV_UNLIKELY(!dev_copy(out, e->ptr + off, n)))
				return false;
			out += n;
		} else {
			if (DEV_UNLIKELY(!dev_copy(e->ptr + off, in, n)))
				return false;
			in += n;
		}
		len -= n;
		off = 0;
	}
	return true;
}

bool dev_sgl_copy_out(const struct dev_sgl *sgl, uint64_t off, void *dst, uint32_t len)
{
	return sgl_copy(sgl, off, dst, NULL, len, NULL);
}

bool dev_sgl_copy_in(struct dev_sgl *sgl, uint64_t off, const void *src, uint32_t len)
{
	return sgl_copy(sgl, off, NULL, src, len, &sgl->sig);
}

/*
 * Scatter list of a receive WQE (its data segments, fetched into r->buf)
 * for a message of msg_len bytes.  As a ConnectX scatters, entries are
 * taken in order and only as far as the message reaches: an entry the
 * message does not need is neither used nor checked, so a WQE with unused
 * slots (zeroed, or left over) takes a message that fits the ones before.
 * An entry that is used must have a valid key covering all of it.
 *
 * Byte count 0 means 2^31 bytes (PRM, data segment: "a value of 0 means
 * 2GB"), and the list ends at the first entry with lkey MLX5_INVALID_LKEY
 * (0x100), the terminator libmlx5 writes after the SGEs it posts - it skips
 * zero-length SGEs rather than post them.  An indirect mkey's entry becomes
 * the pieces its layout maps (mkey.c); more than DEV_MAX_SGE pieces in all
 * is refused as a bad key is.
 */
int dev_sgl_from_recv(struct dev_sgl *sgl, const struct dev_rwqe *r,
		      const struct emu_pd *pd, const struct emu_qp *qp, uint64_t msg_len)
{
	uint32_t need = dev_qp_need(qp, IBV_ACCESS_LOCAL_WRITE);

	sgl->n = 0;
	sgl->sig.synd = 0;
	sgl->sig_in.mk = NULL;
	sgl->total = 0;
	for (uint32_t i = 0; i < r->nseg && sgl->total < msg_len; i++) {
		const uint8_t *seg = r->wqe + 16 * i;
		uint32_t bc = dev_be32(seg), lkey = dev_be32(seg + 4);
		uint64_t len = bc ? bc : 1ull << 31;
		uint8_t *p;

		if (lkey == RF_INVALID_LKEY)
			break;
		p = dev_lkey_ptr(lkey, dev_be64(seg + 8), len, pd, need);
		if (p) {
			/* full only after indirect keys' pieces: the model's limit */
			if (sgl->n == DEV_MAX_SGE)
				return DEV_SGL_PROT;
			sgl->e[sgl->n++] = (struct dev_sge){ p, (uint32_t)len, false, false };
			sgl->total += len;
		} else {
			int ret = dev_mkey_sgl(sgl, lkey, dev_be64(seg + 8), len, pd, need);

			if (ret)
				return DEV_SGL_PROT;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory windows: UMR WQEs as libmlx5 builds them (FORMATS §4.8)           */

enum {
	UMR_FLAG_CHECK_FREE	= 1 << 5,
	UMR_FLAG_CHECK_QPN	= 1 << 3,
};

int dev_invalidate_rkey(struct emu_qp *qp, const struct emu_pd *pd, uint32_t rkey)
{
	struct emu_mw *mw = emu_mw_by_rkey_locked(rkey);

	if (!mw)
		return dev_mkey_invalidate(qp, pd, rkey);
	/*
	 * Only a bound type-2 window of the PD may be invalidated; a remote
	 * invalidation (qp != NULL) must also arrive on the QP it is bound to.
	 */
	if (!mw || mw->type != IBV_MW_TYPE_2 || !mw->mr || mw->pd != pd ||
	    (qp && mw->qp != qp))
		return -1;
	emu_mw_unbind_locked(mw);
	return 0;
}

/*
 * ctrl(16) | UMR ctrl(48) | mkey context(64) | [KLM block(64)], each may
 * start at the queue's beginning after a wrap (they are BB aligned).
 * imm_key is the ctrl segment's imm: the key being modified.
 */
uint8_t dev_umr_execute(struct dev_qp *dq, const uint8_t *sq, uint32_t qsize,
			uint32_t off, uint32_t wqe_len, uint32_t imm_key, uint8_t *wc_op)
{
	struct emu_qp *qp = dq->qp;
	uint32_t mask = qsize - 1;
	const uint8_t *uctrl = sq + ((off + 16) & mask);
	const uint8_t *mkc = sq + ((off + 64) & mask);
	const uint8_t *klm = sq + ((off + 128) & mask);
	uint8_t flags = uctrl[0];
	uint16_t klm_oct = dev_be16(uctrl + 4);
	uint32_t qpn_mkey = dev_be32(mkc + 4);
	uint8_t acc = mkc[2];
	struct emu_mw *mw;
	struct emu_mr *mr;
	uint64_t start, len, kaddr;
	uint32_t klm_len, klm_key, access;

	/* the segments read below must lie inside the WQE's DS */
	*wc_op = IBV_WC_BIND_MW;
	if (wqe_len < 128 || (!(mkc[0] & DEV_MKC_FREE) && wqe_len < 144))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if (mkc[0] & DEV_MKC_FREE) {
		/* unbind (type 1, length 0) or local invalidate (type 2) */
		mw = emu_mw_by_rkey_locked(imm_key);
		*wc_op = IBV_WC_LOCAL_INV;
		if (!mw || mw->pd != qp->pd)
			return RF_CQE_SYNDROME_MW_BIND_ERR;
		if (flags & UMR_FLAG_CHECK_QPN) {
			if (dev_invalidate_rkey(NULL, qp->pd, imm_key))
				return RF_CQE_SYNDROME_MW_BIND_ERR;
			return 0;
		}
		*wc_op = IBV_WC_BIND_MW;
		emu_mw_unbind_locked(mw);
		return 0;
	}

	*wc_op = IBV_WC_BIND_MW;
	mw = emu_mw_by_rkey_locked(imm_key);
	if (!mw || mw->pd != qp->pd)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	/* type 2 may only be bound while free; its QPN is the binding QP */
	if ((flags & UMR_FLAG_CHECK_FREE) && mw->mr)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if (mw->type == IBV_MW_TYPE_2 && (qpn_mkey >> 8) != dq->qpn)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if (klm_oct == 0)
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	start = dev_be64(mkc + 16);
	len = dev_be64(mkc + 24);
	klm_len = dev_be32(klm);
	klm_key = dev_be32(klm + 4);
	kaddr = dev_be64(klm + 8);
	mr = emu_mr_by_lkey_locked(klm_key);
	if (!mr || mr->pd != qp->pd || !(mr->access & IBV_ACCESS_MW_BIND))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	if (klm_len != len || !dev_in_range(kaddr, len, mr->iova, mr->length))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	access = dev_umr_access(acc);
	/* remote write and atomic through a window need a locally writable MR */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return RF_CQE_SYNDROME_MW_BIND_ERR;
	/* zero based: the mkey starts at 0 while the KLM names the real base */
	if (start == 0 && kaddr != 0)
		access |= IBV_ACCESS_ZERO_BASED;
	emu_mw_bind_locked(mw, mr, mw->type == IBV_MW_TYPE_2 ? qp : NULL,
			   kaddr, len, access, qpn_mkey & 0xff);
	return 0;
}
