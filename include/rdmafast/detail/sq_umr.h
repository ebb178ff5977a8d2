/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/sq_umr.h - the pieces of sq_umr.h's posts: the UMR and
 * mkey-context head of a memory-key UMR as 8-byte words, the KLM and
 * repeat-block translations, the BSF copy and the SET_PSV WQEs.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_SQ_UMR_H
#define RDMAFAST_DETAIL_SQ_UMR_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/umr.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>
#include <rdmafast/detail/sq_mw.h>
#include <rdmafast/detail/wqe_regs.h>

RF_BEGIN_DECLS

/*
 * The access word's bits beyond RF_MKEY_ACCESS_* (sq_umr.h names them
 * RF_UMR_ACCESS_KEEP, RF_UMR_BSF_DISABLE and RF_UMR_SIG_ERR_CNT()), and
 * all it may hold. RF__UMR_SIG_ERR_ODD is the counter's new value, in
 * the bit 13 below the context's (flags_pd bit 26).
 */
#define RF__UMR_KEEP		(1u << 10)
#define RF__UMR_BSF_OFF		(1u << 11)
#define RF__UMR_SIG_ERR		(1u << 12)
#define RF__UMR_SIG_ERR_ODD	(1u << 13)
#define RF__UMR_ACCESS_OK \
	(RF_MKEY_ACCESS_LOCAL_WRITE | RF_MKEY_ACCESS_REMOTE_READ | \
	 RF_MKEY_ACCESS_REMOTE_WRITE | RF_MKEY_ACCESS_ATOMIC | RF__UMR_KEEP | RF__UMR_BSF_OFF | \
	 RF__UMR_SIG_ERR | RF__UMR_SIG_ERR_ODD)

/*
 * Translations one UMR carries: the WQE is ctrl and UMR control (1 BB),
 * the mkey context (1 BB) and the translations, at most
 * RF_SEND_WQE_MAX_BB in all, and 1 BB less with a BSF.
 */
#define RF__UMR_MAX_XLAT ((RF_SEND_WQE_MAX_BB - 2) * 4)

/*
 * Write the UMR control segment and mkey context of a memory-key UMR
 * (mlx5dv_wr_mkey_configure() and its setters) behind the control segment
 * at v, as seven 16-byte stores: as 8-byte words, gcc pairs only some
 * of them (docs/benchmark-history.md, "Figures behind the header
 * comments"). Flags INLINE, xlat_ds DS of translations, bsf_ds of BSF;
 * the key's tag, access, length, and BSF_ENABLE in the context when
 * bsf_ds. The fields the UMR updates (mkey_mask): the tag and "free" (now
 * valid), the length, the access bits unless RF__UMR_KEEP, the BSF's state
 * when there is one or RF__UMR_BSF_OFF, the signature error counter with
 * RF__UMR_SIG_ERR (its value RF__UMR_SIG_ERR_ODD).
 */
RF_INLINE void rf__umr_head(struct rf__wqe_words *v, uint32_t mkey, uint32_t access,
			    uint32_t xlat_ds, uint32_t bsf_ds, uint64_t len)
{
	struct rf__wqe_v16_slots *q = (struct rf__wqe_v16_slots *)v;
	uint64_t mask = RF_UMR_MKEY_MASK_FREE | RF_UMR_MKEY_MASK_MKEY | RF_UMR_MKEY_MASK_LEN |
			(RF_UMR_MKEY_MASK_ACCESS & ((uint64_t)((access & RF__UMR_KEEP) != 0) - 1)) |
			(RF_UMR_MKEY_MASK_BSF_ENABLE &
			 (0 - (uint64_t)(bsf_ds != 0 || (access & RF__UMR_BSF_OFF) != 0))) |
			(RF_UMR_MKEY_MASK_SIG_ERR & (0 - (uint64_t)((access & RF__UMR_SIG_ERR) != 0)));
	uint32_t qpn_mkey = RF_MKEY_NO_QPN | (mkey & 0xff);
	uint32_t flags_pd = (bsf_ds ? RF_MKEY_CONTEXT_BSF_ENABLE : 0) |
			    (access & RF__UMR_SIG_ERR_ODD) << (RF_MKEY_CONTEXT_SIG_ERR_CNT_SHIFT - 13);
	/* kept: the context's access byte is 0, as libmlx5 leaves it */
	uint8_t acc = (uint8_t)(access & (RF__UMR_ACCESS_OK & 0xff) &
				((uint32_t)((access & RF__UMR_KEEP) != 0) - 1));
	rf__v16r zero = rf__v16_words(0, 0);
	uint64_t ctrl, m0, m1;

#if RF_LITTLE_ENDIAN
	ctrl = RF_UMR_CTRL_FLAG_INLINE |
	       ((uint64_t)__builtin_bswap16((uint16_t)xlat_ds) << 32) |
	       ((uint64_t)__builtin_bswap16((uint16_t)bsf_ds) << 48);
	m0 = ((uint64_t)acc << 16) | ((uint64_t)__builtin_bswap32(qpn_mkey) << 32);
	m1 = (uint64_t)__builtin_bswap32(flags_pd) << 32;
#else
	ctrl = ((uint64_t)RF_UMR_CTRL_FLAG_INLINE << 56) | ((uint64_t)xlat_ds << 16) | bsf_ds;
	m0 = ((uint64_t)acc << 40) | qpn_mkey;
	m1 = flags_pd;
#endif
	q->s1 = rf__v16_words(ctrl, (RF_FORCE uint64_t)rf_htobe64(mask));
	q->s2 = zero;
	q->s3 = zero;
	q->s4 = rf__v16_words(m0, m1);
	/* start address 0: the key's */
	q->s5 = rf__v16_words(0, (RF_FORCE uint64_t)rf_htobe64(len));
	q->s6 = zero;
	q->s7 = zero;
}

/* Zero the 64-byte block at b: the padding of a translation list. */
RF_INLINE void rf__umr_zero_block(void *b)
{
	struct rf__wqe_words *z = (struct rf__wqe_words *)b;

	z->w0 = 0;
	z->w1 = 0;
	z->w2 = 0;
	z->w3 = 0;
	z->w4 = 0;
	z->w5 = 0;
	z->w6 = 0;
	z->w7 = 0;
}

/*
 * A KLM as the posts store it: two 8-byte words. Its byte_count and mkey
 * follow each other as rf_sge's length and lkey do, so one 8-byte load,
 * one swap and one rotate make the first word, where two loads, two swaps
 * and two stores would.
 */
struct rf__klm_words {
	uint64_t w0, w1;
};
RF_STATIC_ASSERT(offsetof(struct rf_sge, lkey) == offsetof(struct rf_sge, length) + 4,
		 "rf__umr_klm1() loads length and lkey as one word");

/* The KLM of s at k; returns s->length. */
RF_INLINE uint32_t rf__umr_klm1(struct rf__klm_words *k, const struct rf_sge *s)
{
	uint64_t lk;

	__builtin_memcpy(&lk, &s->length, 8);
#if RF_LITTLE_ENDIAN
	/* be32(length), be32(lkey): the swapped word's halves exchanged */
	k->w0 = __builtin_bswap64(lk) >> 32 | __builtin_bswap64(lk) << 32;
	k->w1 = __builtin_bswap64(s->addr);
	return (uint32_t)lk;
#else
	k->w0 = lk;
	k->w1 = s->addr;
	return (uint32_t)(lk >> 32);
#endif
}

/*
 * n KLMs from sge at k (n >= 1), padded with zeros to 64 bytes: the last
 * block is cleared first and then partly overwritten, so the padding
 * costs no branch (and nothing when n is a constant multiple of 4). Four
 * at a time, so that a constant n up to 4 is straight-line: gcc -O2
 * keeps a loop of four one-KLM rounds a loop. Returns the bytes they map.
 */
RF_INLINE uint64_t rf__umr_klm(struct rf_wqe_umr_klm_seg *k, const struct rf_sge *sge,
			       uint32_t n)
{
	struct rf__klm_words *w = (struct rf__klm_words *)k;
	uint64_t len = 0;
	uint32_t i;

	if (!__builtin_constant_p(n) || (n & 3))
		rf__umr_zero_block(k + ((n - 1) & ~3u));
	for (i = 0; i + 4 <= n; i += 4) {
		len += rf__umr_klm1(w + i, sge + i);
		len += rf__umr_klm1(w + i + 1, sge + i + 1);
		len += rf__umr_klm1(w + i + 2, sge + i + 2);
		len += rf__umr_klm1(w + i + 3, sge + i + 3);
	}
	for (; i < n; i++)
		len += rf__umr_klm1(w + i, sge + i);
	return len;
}

/*
 * Commit the memory-key UMR at c (ds DS, the key in the immediate), post
 * its fence NOP, and ring both when flags say so.
 */
RF_INLINE void rf__umr_end(struct rf_sq *sq, struct rf_wqe_ctrl_seg *c, uint32_t ds,
			   uint32_t mkey, uint32_t flags, uint64_t wr_id)
{
	rf_sq_commit(sq, c, RF_OPCODE_UMR, 0, ds, flags & ~RF_SEND_RING, rf_htobe32(mkey), wr_id);
	rf__sq_umr_fence(sq, flags & RF_SEND_RING);
}

/*
 * The SET_PSV WQE at the producer index: PSV psv starts at ts. It waits
 * for the UMR before it (small fence; RF_SEND_FENCE's full fence when
 * flags have it) and takes flags' completion and solicited bits.
 */
RF_INLINE void rf__umr_set_psv(struct rf_sq *sq, uint32_t psv, uint64_t ts, uint32_t flags,
			       uint64_t wr_id)
{
	struct rf_wqe_ctrl_seg *c = rf_sq_wqe(sq, sq->pi);
	uint32_t fm = (flags & (RF_WQE_CTRL_CE_MASK | RF_WQE_CTRL_SOLICITED)) |
		      ((flags & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_FENCE ?
		       RF_WQE_CTRL_FENCE : RF_WQE_CTRL_INITIATOR_SMALL_FENCE);

	rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_SET_PSV, 0, sq->qpn_be | RF_BE32(2),
			sq->ctrl_hi | rf__sq_fm_bits(fm), 0);
	rf_set_set_psv_seg((struct rf_wqe_set_psv_seg *)(c + 1), psv, ts);
	rf__sq_advance(sq, c, 1, wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_SQ_UMR_H */
