/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/wqe_regs.h - a one-BB WQE built in registers: stored to the
 * send queue and written to the BlueFlame register from the same
 * registers, never read back from the queue (why: rdmafast(7), BLUEFLAME
 * FROM REGISTERS).
 *
 * struct rf__wqe_bb holds the WQE as the eight 8-byte words it is stored
 * as, in memory order. The rf_wqe_bb_* encoders fill the words of one
 * segment at word index i (even: a segment starts on 16 bytes) with the
 * bytes the matching rf_set_*_seg() of hw/wqe.h writes, reserved bytes
 * zero.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_WQE_REGS_H
#define RDMAFAST_DETAIL_WQE_REGS_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/wqe.h>

RF_BEGIN_DECLS

/*
 * x86 write-combining memory takes the unaligned stores of an inline
 * payload written from registers; elsewhere such a WQE is copied out of
 * the queue in aligned 16-byte moves instead (rdmafast(7), BLUEFLAME FROM
 * REGISTERS).
 */
#if defined(__x86_64__) || defined(__i386__)
#define RF__INLINE_FROM_REGS 1
#else
#define RF__INLINE_FROM_REGS 0
#endif

/* Inline payload chunks: unaligned, allowed to alias anything. */
typedef long long rf__v16u __attribute__((vector_size(16), may_alias, aligned(1)));
typedef long long rf__v16r __attribute__((vector_size(16)));
typedef uint64_t rf__u64u __attribute__((may_alias, aligned(1)));
typedef uint32_t rf__u32u __attribute__((may_alias, aligned(1)));
typedef uint16_t rf__u16u __attribute__((may_alias, aligned(1)));

struct rf__wqe_bb {
	uint64_t q[8];
	/*
	 * An inline payload of constant length after the words (at most 44
	 * bytes: rf__wqe_bb_inline()), in the chunks it is copied in.
	 */
	rf__v16r v16[2];
	uint64_t v8;
	uint32_t v4;
	uint16_t v2;
	uint8_t  v1;
};

/*
 * Store words 0..n-1 of q to dst (2 <= n <= 8; dst may be volatile: the
 * BlueFlame register), straight-line for a constant n, where a loop left
 * to gcc -O2 stays a loop and puts q in memory.
 */
#define RF__BB_STORE(dst, q, n)					\
	do {							\
		(dst)[0] = (q)[0];				\
		(dst)[1] = (q)[1];				\
		if ((n) > 2) (dst)[2] = (q)[2];			\
		if ((n) > 3) (dst)[3] = (q)[3];			\
		if ((n) > 4) (dst)[4] = (q)[4];			\
		if ((n) > 5) (dst)[5] = (q)[5];			\
		if ((n) > 6) (dst)[6] = (q)[6];			\
		if ((n) > 7) (dst)[7] = (q)[7];			\
	} while (0)

/* The word whose bytes in memory are a's, then b's. */
RF_INLINE uint64_t rf__wqe_word(__be32 a, __be32 b)
{
#if RF_LITTLE_ENDIAN
	return ((uint64_t)(RF_FORCE uint32_t)b << 32) | (RF_FORCE uint32_t)a;
#else
	return ((uint64_t)(RF_FORCE uint32_t)a << 32) | (RF_FORCE uint32_t)b;
#endif
}

/* The word holding v as eight big-endian bytes. */
RF_INLINE uint64_t rf__wqe_word_be64(uint64_t v)
{
	return (RF_FORCE uint64_t)rf_htobe64(v);
}

RF_INLINE void rf__wqe_bb_raddr(struct rf__wqe_bb *bb, unsigned i, uint64_t raddr,
			       uint32_t rkey)
{
	bb->q[i] = rf__wqe_word_be64(raddr);
	bb->q[i + 1] = rf__wqe_word(rf_htobe32(rkey), 0);
}

RF_INLINE void rf__wqe_bb_data(struct rf__wqe_bb *bb, unsigned i, uint32_t length,
			      uint32_t lkey, uint64_t addr)
{
	bb->q[i] = rf__wqe_word(rf_htobe32(length), rf_htobe32(lkey));
	bb->q[i + 1] = rf__wqe_word_be64(addr);
}

RF_INLINE void rf__wqe_bb_atomic(struct rf__wqe_bb *bb, unsigned i, uint64_t swap_add,
				uint64_t compare)
{
	bb->q[i] = rf__wqe_word_be64(swap_add);
	bb->q[i + 1] = rf__wqe_word_be64(compare);
}

/*
 * The payload of a one-BB WQE's inline segment, of constant length len
 * (1..44), loaded into bb in chunks of 16, 8, 4, 2 and 1 bytes, the way
 * rf__wqe_bb_store_inline() stores it, to the queue and to BlueFlame alike.
 * For a constant len every test here folds away.
 */
RF_INLINE void rf__wqe_bb_inline(struct rf__wqe_bb *bb, const void *data, uint32_t len)
{
	const uint8_t *p = (const uint8_t *)data;

	if (len >= 16)
		bb->v16[0] = *(const rf__v16u *)p;
	if (len >= 32)
		bb->v16[1] = *(const rf__v16u *)(p + 16);
	p += len & ~15U;
	if (len & 8) {
		__builtin_memcpy(&bb->v8, p, 8);
		p += 8;
	}
	if (len & 4) {
		__builtin_memcpy(&bb->v4, p, 4);
		p += 4;
	}
	if (len & 2) {
		__builtin_memcpy(&bb->v2, p, 2);
		p += 2;
	}
	if (len & 1)
		bb->v1 = *p;
}

/*
 * Store an inline segment at word i of dst: its header, then the payload
 * rf__wqe_bb_inline() loaded. dst is the WQE or the BlueFlame register
 * (volatile, so also MMIO-safe; in ascending address order). Returns the
 * byte offset after the payload.
 */
RF_INLINE unsigned rf__wqe_bb_store_inline(volatile uint8_t *dst, const struct rf__wqe_bb *bb,
					  unsigned i, uint32_t len)
{
	unsigned o = 8 * i + 4;
	__be32 hdr = rf_htobe32(RF_INLINE_SEG | len);

	*(volatile __be32 *)(dst + 8 * i) = hdr;
	if (len >= 16)
		*(volatile rf__v16u *)(dst + o) = bb->v16[0];
	if (len >= 32)
		*(volatile rf__v16u *)(dst + o + 16) = bb->v16[1];
	o += len & ~15U;
	if (len & 8) {
		*(volatile rf__u64u *)(dst + o) = bb->v8;
		o += 8;
	}
	if (len & 4) {
		*(volatile rf__u32u *)(dst + o) = bb->v4;
		o += 4;
	}
	if (len & 2) {
		*(volatile rf__u16u *)(dst + o) = bb->v2;
		o += 2;
	}
	if (len & 1)
		dst[o++] = bb->v1;
	return o;
}

/*
 * Zeros from byte o (a constant) to the end of a 64-byte BlueFlame block,
 * in stores of 1, 2, 4 and 8 bytes up to 16-byte alignment and of 16
 * after: every byte of the block is written, so the write-combining
 * buffer goes out as one 64-byte burst.
 */
RF_INLINE void rf__bf_zero_tail(volatile uint8_t *d, unsigned o)
{
	const rf__v16 zero = {0, 0};

	if ((o & 1) && o < 64)
		d[o++] = 0;
	if ((o & 2) && o < 64) {
		*(volatile rf__u16u *)(d + o) = 0;
		o += 2;
	}
	if ((o & 4) && o < 64) {
		*(volatile rf__u32u *)(d + o) = 0;
		o += 4;
	}
	if ((o & 8) && o < 64) {
		*(volatile rf__u64u *)(d + o) = 0;
		o += 8;
	}
	if (o < 64)
		*(volatile rf__v16 *)(d + o) = zero;
	if (o + 16 < 64)
		*(volatile rf__v16 *)(d + o + 16) = zero;
	if (o + 32 < 64)
		*(volatile rf__v16 *)(d + o + 32) = zero;
}

/*
 * rf__ring_bf_bb - rf_ring_bf() (doorbell.h) for a one-BB WQE built in
 * registers (struct rf__wqe_bb): the BlueFlame stores write words 0..n-1 of bb, then,
 * with inl, an inline segment of inl payload bytes at word n
 * (rf__wqe_bb_inline()), then zeros. The WQE is not read back from the queue.
 * n and inl are constants at every call site.
 */
RF_INLINE void rf__ring_bf_bb(__be32 *sq_dbrec, struct rf_bf *bf, uint32_t pi,
			     const struct rf__wqe_bb *bb, unsigned n, uint32_t inl)
{
	uint8_t *cur = bf->cur;
	volatile uint64_t *d = (volatile uint64_t *)cur;
	unsigned o = 8 * n;

	rf_dma_wmb();		/* WQE stores before dbrec store */
	rf_dbrec_set(sq_dbrec, pi);
	rf_mmio_wc_start();	/* dbrec store before BlueFlame stores */
	RF__BB_STORE(d, bb->q, n);
	if (inl)
		o = rf__wqe_bb_store_inline(cur, bb, n, inl);
	rf__bf_zero_tail(cur, o);
	rf_mmio_flush_lines();	/* a whole line: out without a fence on x86 */
	rf_bf_toggle(bf, cur);
}

/*
 * A WQE of up to two BBs built in registers as 16-byte words, one a DS:
 * the DCI posts (a 48-byte address vector makes ctrl, AV, raddr, data 6
 * DS, more than one BB holds), the one-SGE posts that ring, and the
 * segments before the payload of the inline posts that ring. v[i] holds
 * bytes 16*i..16*i+15. Stored to the queue and written to the BlueFlame
 * register from the same registers, one 16-byte move a DS each time,
 * never read back from the queue.
 *
 * Why not the queue copy of rf_ring_bf(): an x86 load is forwarded from
 * the store buffer only when one older store covers it, and the 16-byte
 * loads of that copy each span a segment the post had just written in 4-
 * and 8-byte pieces, so they waited for those stores to reach the cache;
 * and 8-byte words (struct rf__wqe_bb) take twice the stores. Both costs
 * are measured by bench/store_probe.c, and its figures are in
 * docs/benchmark-history.md ("Figures behind the header comments").
 */
struct rf__wqe_v16 {
	rf__v16r v[8];
};

/* The 16 bytes of a WQE that are word a, then word b (rf__wqe_word()). */
RF_INLINE rf__v16r rf__v16_words(uint64_t a, uint64_t b)
{
	rf__v16r v = { (long long)a, (long long)b };

	return v;
}

/* 16 bytes of a WQE at p (unaligned, any type), into a register. */
RF_INLINE rf__v16r rf__v16_load(const void *p)
{
	return *(const rf__v16u *)p;
}

/*
 * The queue's views for the stores of struct rf__wqe_v16: named members of
 * a struct that no rf_sq field is (see struct rf__wqe_words in
 * detail/sq.h), 16-byte words or the 8-byte words of two BBs.
 */
struct rf__wqe_v16_slots {
	rf__v16r s0, s1, s2, s3, s4, s5, s6, s7;
};

struct rf__wqe_words2 {
	uint64_t w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15;
};

#define RF__WQE_V16_ST(words, v, i, a, b)				\
	do {								\
		if (words) {						\
			q8->a = (uint64_t)(v)[i][0];			\
			q8->b = (uint64_t)(v)[i][1];			\
		} else {						\
			q16->s##i = (v)[i];				\
		}							\
	} while (0)

/*
 * Store v[first..n-1] to the WQE at dst, v[i] at dst + 16 * i (first, n
 * and words constants, n <= 8), straight-line: a loop left to gcc -O2
 * stays a loop and puts v in memory. One 16-byte move a word, or with
 * words two 8-byte stores from the registers it was built from
 * (rf__v16_words()): a post that does not ring stores words, since
 * clang 14's alias analysis lets a vector store alias the queue's fields
 * (its type-based analysis gives vector types no type of their own), and
 * a burst of posts would reload them in every post.
 * A post that rings stores 16-byte moves: its BlueFlame stores are
 * volatile and may alias anything anyway.
 */
RF_INLINE void rf__wqe_store_v16(void *dst, const rf__v16r *v, unsigned first, unsigned n,
				 int words)
{
	struct rf__wqe_v16_slots *q16 = (struct rf__wqe_v16_slots *)dst;
	struct rf__wqe_words2 *q8 = (struct rf__wqe_words2 *)dst;

	if (first <= 0U && n > 0U) RF__WQE_V16_ST(words, v, 0, w0, w1);
	if (first <= 1U && n > 1U) RF__WQE_V16_ST(words, v, 1, w2, w3);
	if (first <= 2U && n > 2U) RF__WQE_V16_ST(words, v, 2, w4, w5);
	if (first <= 3U && n > 3U) RF__WQE_V16_ST(words, v, 3, w6, w7);
	if (first <= 4U && n > 4U) RF__WQE_V16_ST(words, v, 4, w8, w9);
	if (first <= 5U && n > 5U) RF__WQE_V16_ST(words, v, 5, w10, w11);
	if (first <= 6U && n > 6U) RF__WQE_V16_ST(words, v, 6, w12, w13);
	if (first <= 7U && n > 7U) RF__WQE_V16_ST(words, v, 7, w14, w15);
}

/*
 * Store v[0..n-1] to the BlueFlame register d, then zeros to the end of
 * the last 64-byte line (n a constant, 1..8): every line written whole,
 * in ascending order, as rf__bf_zero_tail() explains.
 */
#define RF__BF_V16(d, v, n, i)					\
	do {							\
		if ((i) < (((n) + 3) & ~3U))			\
			(d)[i] = (i) < (n) ? (v)[i] : zero;	\
	} while (0)

/* Store v[0..n-1] (n a constant, 1..4) to the BlueFlame register d, nothing more. */
RF_INLINE void rf__bf_store_v16_only(volatile rf__v16r *d, const rf__v16r *v, unsigned n)
{
	d[0] = v[0];
	if (n > 1) d[1] = v[1];
	if (n > 2) d[2] = v[2];
	if (n > 3) d[3] = v[3];
}

RF_INLINE void rf__bf_store_v16(volatile rf__v16r *d, const rf__v16r *v, unsigned n)
{
	const rf__v16r zero = { 0, 0 };

	/* straight-line for a constant n: a loop left to gcc -O2 stays a loop */
	RF__BF_V16(d, v, n, 0U);
	RF__BF_V16(d, v, n, 1U);
	RF__BF_V16(d, v, n, 2U);
	RF__BF_V16(d, v, n, 3U);
	RF__BF_V16(d, v, n, 4U);
	RF__BF_V16(d, v, n, 5U);
	RF__BF_V16(d, v, n, 6U);
	RF__BF_V16(d, v, n, 7U);
}

/*
 * rf__ring_bf_v16 - rf_ring_bf() (doorbell.h) for a WQE built as n
 * 16-byte words in v (struct rf__wqe_v16, n a constant), at wqe in the
 * queue: the BlueFlame stores write v[0..n-1], then with inl an inline
 * segment of inl payload bytes from bb (rf__wqe_bb_inline(); one BB), then
 * zeros to the end of the last line. Where the queue's BlueFlame copies are ST64B (arm64
 * LS64, bf->ls64) the lines are copied from wqe in the queue by ST64B as
 * rf_ring_bf() does, since one ST64B takes its 64 bytes from eight
 * general registers loaded from memory.
 */
RF_INLINE void rf__ring_bf_v16(__be32 *sq_dbrec, struct rf_bf *bf, uint32_t pi,
			      const struct rf__wqe_v16 *v, unsigned n,
			      const struct rf__wqe_bb *bb, uint32_t inl, const void *wqe)
{
	uint8_t *cur = bf->cur;

	rf_dma_wmb();		/* WQE stores before dbrec store */
	rf_dbrec_set(sq_dbrec, pi);
	rf_mmio_wc_start();	/* dbrec store before BlueFlame stores */
#if defined(__aarch64__)
	if (bf->ls64) {
		rf__bf_copy_st64b(cur, wqe, (n + 3) / 4);
	} else
#else
	(void)wqe;
#endif
	if (inl) {
		/* one BB: v[0..n-1], the inline segment (hdr, payload), zeros */
		rf__bf_store_v16_only((volatile rf__v16r *)cur, v->v, n);
		rf__bf_zero_tail(cur, rf__wqe_bb_store_inline(cur, bb, 2 * n, inl));
	} else {
		rf__bf_store_v16((volatile rf__v16r *)cur, v->v, n);
	}
	rf_mmio_flush_lines();	/* whole lines: out without a fence on x86 */
	rf_bf_toggle(bf, cur);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_WQE_REGS_H */
