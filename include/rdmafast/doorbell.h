/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/doorbell.h - doorbell records, the 8-byte doorbell and the
 * BlueFlame copy.
 *
 * Telling the HCA about new send WQEs takes two writes:
 *
 *  1. the doorbell record (dbrec): a big-endian word in host memory holding
 *     the 16-bit producer counter. The HCA reads it by DMA whenever it wants
 *     to know how far the queue goes, so it must be right before step 2.
 *  2. an MMIO store to the QP's BlueFlame register in a UAR page: either
 *     the first 8 bytes of the last WQE's control segment (the "doorbell"),
 *     or the whole WQE (a "BlueFlame copy"), which spares the HCA the DMA
 *     read of the WQE and is the lowest-latency way to post one WQE.
 *
 * Each bfreg has two halves of bf.size bytes (256 on ConnectX); successive
 * rings alternate between them (cur ^= size), so that a write-combining
 * burst never lands on the buffer the device may still be reading.
 *
 * When to use which (rf_bf_fits()): BlueFlame when the ring covers exactly
 * one WQE that fits in one half. Otherwise, for a batch of several WQEs or
 * a QP without BlueFlame (mlx5dv_qp.bf.size == 0), the 8-byte doorbell: the
 * HCA then fetches every WQE up to the dbrec counter by DMA. libmlx5 applies
 * the same rule when MLX5_POST_SEND_PREFER_BF is set (its default).
 *
 * Receive queues and SRQs have a dbrec only: no MMIO write.
 *
 * Not in hw/: this rings, which is the queues' logic, not a format.
 */
#ifndef RDMAFAST_DOORBELL_H
#define RDMAFAST_DOORBELL_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/detail/doorbell.h>


RF_BEGIN_DECLS

/* Words of a QP's doorbell record (mlx5dv_qp.dbrec). */
enum {
	RF_RCV_DBR = 0,	/* RQ producer counter, & 0xffff */
	RF_SND_DBR = 1,	/* SQ producer counter in basic blocks, & 0xffff */
};

/* Words of a CQ's doorbell record (mlx5dv_cq.dbrec). */
enum {
	RF_CQ_SET_CI = 0,	/* consumer index, & 0xffffff */
	RF_CQ_ARM_DB = 1,	/* last arm command: sn << 28 | cmd | ci */
};

enum {
	RF_UAR_PAGE_SIZE   = 4096,	/* one UAR page */
	RF_BF_REG_OFFSET   = 0x800,	/* first bfreg in a UAR page */
	RF_CQ_DOORBELL     = 0x20,	/* CQ arm doorbell in the CQ's UAR page */
	RF_BF_MAX_SIZE     = 256,	/* one half of a 512-byte bfreg */
};

/* CQ arm commands, bits [27:24] of the arm word. */
#define RF_CQ_DB_REQ_NOT     (0U << 24)	/* event on the next completion */
#define RF_CQ_DB_REQ_NOT_SOL (1U << 24)	/* event on the next solicited one */

/*
 * A QP's BlueFlame register, from mlx5dv_qp.bf: reg is the start of the
 * bfreg, size the size of one half (0 when the QP has no BlueFlame and must
 * use the 8-byte doorbell, still at reg), cur the half to write next. The
 * rings toggle cur with one XOR (cur ^= size), which needs the bit of size
 * clear in reg: mlx5 bfregs are 512-byte aligned pairs of 256-byte halves.
 *
 * ls64 is decided once, at init, and is a constant of the queue from then
 * on: the copy tests it (one predictable branch), it never asks the CPU or
 * the kernel again on the data path.
 *
 * cur is this struct's alone and nothing is locked: one rf_bf per bfreg
 * with a size. libmlx5 hands one bfreg to several QPs past its dedicated
 * quota and keeps their shared toggle under a lock (providers/mlx5,
 * mlx5_get_qp_uar(), bf->need_lock); two rf_bf over such a register write
 * the half the other just filled. A register that may be shared takes
 * size 0: 8-byte doorbells at reg, which never moves.
 */
struct rf_bf {
	uint8_t  *reg;
	uint8_t  *cur;
	uintptr_t size;		/* pointer-sized: the toggle XORs it from memory */
	uint32_t  ls64;		/* 1: BlueFlame copies are ST64B stores (arm64) */
};

/*
 * 1 when this CPU and kernel offer ST64B to user space (arm64 FEAT_LS64,
 * HWCAP3_LS64), else 0; always 0 on other architectures. Cold: rf_bf_init()
 * asks once per queue.
 */
static inline RF_COLD uint32_t rf_cpu_has_ls64(void)
{
#if defined(__aarch64__) && defined(__linux__)
	return (getauxval(RF__AT_HWCAP3) & RF__HWCAP3_LS64) != 0;
#else
	return 0;
#endif
}

/* Set bf up over mlx5dv_qp.bf; 0, or -EINVAL for a register it cannot toggle. */
static inline RF_COLD int rf_bf_init(struct rf_bf *bf, void *reg, uint32_t size)
{
	if ((size && !reg) || size > RF_BF_MAX_SIZE || (size & (size - 1)) ||
	    ((uintptr_t)reg & size))
		return -EINVAL;
	bf->reg = (uint8_t *)reg;
	bf->cur = (uint8_t *)reg;
	bf->size = size;
	bf->ls64 = size >= 64 && rf_cpu_has_ls64();
	return 0;
}

/*
 * rf_bf_toggle - after a ring at cur, make the other half current (cur
 * stays without BlueFlame: size 0). The rings load cur before their MMIO
 * stores, which may alias anything, so only the size is loaded again
 * after them.
 */
RF_INLINE void rf_bf_toggle(struct rf_bf *bf, uint8_t *cur)
{
	bf->cur = (uint8_t *)((uintptr_t)cur ^ bf->size);
}

/*
 * rf_dbrec_set - publish a work-queue producer counter (SQ: in basic
 * blocks; RQ, SRQ: in WQEs). The device reads only the low 16 bits.
 * Callers order their WQE stores before it with rf_dma_wmb().
 */
RF_INLINE void rf_dbrec_set(__be32 *rec, uint32_t counter)
{
	*(volatile __be32 *)rec = rf_htobe32(counter & 0xffff);
}

/*
 * rf_mmio_write64 - one 8-byte store to a UAR register. val is in memory
 * order: the bytes land exactly as they are in val's storage. Must be a
 * single store: the device latches the 8 bytes together.
 */
RF_INLINE void rf_mmio_write64(void *reg, uint64_t val)
{
	*(volatile uint64_t *)reg = val;
}

/*
 * rf_bf_copy - copy nbb (>= 1: a WQE is at least one) whole 64-byte basic
 * blocks from src (the WQE, in the send queue, 64-byte aligned) to dst
 * (the BlueFlame register half).
 *
 * Four 16-byte stores per block in ascending address order, through a
 * volatile pointer so the compiler cannot turn them into a memcpy call or
 * `rep movs` (which may split and reorder MMIO). The source must not wrap
 * at the queue end: rdmafast never lets a WQE straddle it (sq.h pads with a
 * NOP instead), so this loop has no wrap test.
 *
 * The first block is copied before the loop and the loop walks pointers:
 * a one-block WQE (the common BlueFlame case) is then eight moves with no
 * index arithmetic, and larger ones add one compare per block.
 */
RF_INLINE void rf_bf_copy(void *dst, const void *src, unsigned nbb)
{
	rf__bf_copy_v16(dst, src, nbb);
}

/* True when one WQE of nbb basic blocks may be rung by BlueFlame copy. */
RF_INLINE int rf_bf_fits(const struct rf_bf *bf, unsigned nbb)
{
	return nbb * 64U <= bf->size;
}

/*
 * rf_ring_db - ring the 8-byte doorbell for every WQE up to producer
 * counter pi. last_ctrl is the control segment of the last WQE posted (its
 * first 8 bytes carry the QPN and WQE index the device looks at).
 */
RF_INLINE void rf_ring_db(__be32 *sq_dbrec, struct rf_bf *bf, uint32_t pi,
			  const void *last_ctrl)
{
	uint8_t *cur = bf->cur;
	uint64_t db;

	__builtin_memcpy(&db, last_ctrl, sizeof(db));
	rf_dma_wmb();		/* WQE stores before dbrec store */
	rf_dbrec_set(sq_dbrec, pi);
	rf_mmio_wc_start();	/* dbrec store before doorbell MMIO store */
	rf_mmio_write64(cur, db);
	rf_mmio_flush_writes();	/* out before the other half is used */
	rf_bf_toggle(bf, cur);
}

/*
 * rf_ring_bf - ring with a BlueFlame copy of the one WQE at wqe, nbb basic
 * blocks long (1 or more; rf_bf_fits() must hold), which brings the queue
 * to pi.
 */
RF_INLINE void rf_ring_bf(__be32 *sq_dbrec, struct rf_bf *bf, uint32_t pi,
			  const void *wqe, unsigned nbb)
{
	uint8_t *cur = bf->cur;

	rf_dma_wmb();		/* WQE stores before dbrec store */
	rf_dbrec_set(sq_dbrec, pi);
	rf_mmio_wc_start();	/* dbrec store before BlueFlame stores */
	rf__bf_copy_any(bf->ls64, cur, wqe, nbb);
	rf_mmio_flush_lines();	/* whole lines: out without a fence on x86 */
	rf_bf_toggle(bf, cur);
}

RF_END_DECLS

#endif /* RDMAFAST_DOORBELL_H */
