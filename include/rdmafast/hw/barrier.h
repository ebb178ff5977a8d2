/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/barrier.h - memory barriers named by what they order.
 *
 * The HCA is another observer of memory, reached over PCIe: it reads WQEs
 * and doorbell records from host memory by DMA, receives doorbells and
 * BlueFlame copies as MMIO stores to a write-combining (WC) mapped UAR page,
 * and writes CQEs into host memory by DMA. Each barrier below orders one
 * pair of those accesses. Call sites say which pair in a one-line comment.
 *
 * Posting work (the order of libmlx5, the kernel and UCX):
 *
 *	write the WQE(s)                      (normal cached stores)
 *	rf_dma_wmb();                         WQE stores before the dbrec store
 *	dbrec[RF_SND_DBR] = be32(pi & 0xffff);
 *	rf_mmio_wc_start();                   dbrec store before MMIO stores
 *	BlueFlame copy or 8-byte doorbell     (WC stores to the UAR)
 *	rf_mmio_flush_writes();               push the WC buffer out now
 *	  (rf_mmio_flush_lines() after a BlueFlame copy: it fills whole lines)
 *
 * Consuming completions:
 *
 *	if (cqe is software owned)            (one byte load of op_own)
 *		rf_dma_rmb();                 owner byte before the CQE body
 *		read the rest of the CQE
 *
 * What each compiles to:
 *
 *	                    x86-64     aarch64    ppc64le
 *	dma_wmb             compiler   dmb oshst  lwsync
 *	dma_rmb             compiler   dmb oshld  lwsync
 *	mmio_wc_start       sfence     dsb st     sync
 *	mmio_flush_writes   sfence     dsb st     sync
 *	mmio_flush_lines    compiler   dsb st     sync
 *
 * x86-64 is TSO for cached memory: stores are seen in program order and
 * loads are not reordered with older loads, so DMA ordering needs only the
 * compiler (this is the kernel's dma_wmb()/dma_rmb() on x86; rdma-core's
 * lfence in udma_from_device_barrier() is stronger than the architecture
 * requires). WC stores, however, may pass older stores and sit in the
 * fill buffers, so sfence before the first one (rf_mmio_wc_start) and
 * after the last one (rf_mmio_flush_writes) of a partial line: the 8-byte
 * doorbell and the CQ arm. A BlueFlame copy writes every byte of each
 * 64-byte line it touches, and a full write-combining buffer leaves the
 * core without a fence (the SDM, vol. 3A, "Buffering of Write Combining Memory
 * Locations", lets only a partly filled one wait for the next fence or
 * serializing event), so rf_mmio_flush_lines() is a compiler barrier there:
 * the next ring's rf_mmio_wc_start() still orders the copy before any later
 * MMIO store, and the halves of the register alternate. UCX's rc_mlx5
 * rings the same way on x86-64 (uct_ib_mlx5_post_send() in BF_POST mode:
 * ucs_memory_bus_cacheline_wc_flush() is empty in ucs/arch/x86_64/cpu.h).
 * The second sfence would be there to order the BlueFlame writes of
 * several CPUs that share one register under a lock (rdma-core's
 * post_send_db(), UCX's BF_POST_MT mode); a register rdmafast rings has
 * one producer (rdmafast(7), THREADING). What it cost a single post is
 * measured by bench/store_probe.c (docs/benchmark-history.md).
 *
 * aarch64 uses the outer-shareable DMB forms for the DMA barriers, as
 * rdma-core's util/udma_barrier.h does since PR #1511 and the kernel does
 * for dma_wmb()/dma_rmb(): Armv8 is other-multi-copy atomic, so a store
 * ordered by a DMB is seen in that order by every observer of the domain,
 * and the HCA, a PCIe device, is in the outer shareable domain. The inner
 * shareable forms (ishst/ishld) would order for the CPUs only; a DSB would
 * also wait for completion, which ordering does not need. dma_rmb after
 * the owner check is what UCX issue #1470 (and PR #1527) was about: without
 * it the CPU may read the CQE body before the owner byte, i.e. stale data.
 *
 * The WC barriers stay DSB ST, as rdma-core's mmio_wc_start() and
 * mmio_flush_writes() on aarch64: a DMB orders, but does not complete or
 * push out, stores to write-combining (Normal non-cacheable) memory; the
 * flush must make the BlueFlame burst leave before the other half of the
 * register is written, and the start must keep the dbrec store ahead of the
 * MMIO store, which the device may act on at once (UCX issue #9819). A
 * BlueFlame copy by ST64B (doorbell.h) sits between the same two.
 *
 * Any other architecture fails to compile here rather than silently
 * inheriting x86 assumptions.
 */
#ifndef RDMAFAST_HW_BARRIER_H
#define RDMAFAST_HW_BARRIER_H

#include <rdmafast/compiler.h>

RF_BEGIN_DECLS

/* Stops the compiler, not the CPU, from moving memory accesses across it. */
RF_INLINE void rf_compiler_barrier(void)
{
	__asm__ __volatile__("" ::: "memory");
}

#if !defined(__x86_64__) && !defined(__aarch64__) && \
    !(defined(__powerpc64__) && defined(__LITTLE_ENDIAN__))
#error "rdmafast: no barrier definitions for this architecture (x86-64, aarch64, ppc64le)"
#endif

/*
 * Each barrier below is one #if ladder over the three architectures above
 * (the table at the top of this file), so that its instruction sits in it.
 */

/*
 * rf_dma_wmb - order stores to host memory that the device will DMA-read.
 *
 *	wqe->ctrl = ...;            fill the WQE
 *	rf_dma_wmb();               WQE stores before dbrec store
 *	*dbrec = rf_htobe32(pi);
 *
 * Also between filling receive WQEs and the RQ/SRQ doorbell record.
 */
RF_INLINE void rf_dma_wmb(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshst" ::: "memory");
#else
	__asm__ __volatile__("lwsync" ::: "memory");
#endif
}

/*
 * rf_dma_rmb - order loads of memory that the device DMA-writes.
 *
 *	if (!rf_cqe_sw_owned(cqe, ci, log_n)) return NULL;
 *	rf_dma_rmb();               owner byte before CQE body
 *	len = rf_be32toh(cqe->byte_cnt);
 */
RF_INLINE void rf_dma_rmb(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshld" ::: "memory");
#else
	__asm__ __volatile__("lwsync" ::: "memory");
#endif
}

/*
 * rf_mmio_wc_start - order everything before it ahead of the following MMIO
 * stores to a write-combining UAR page (BlueFlame or doorbell).
 *
 *	*dbrec = rf_htobe32(pi);
 *	rf_mmio_wc_start();         dbrec store before MMIO stores
 *	rf_mmio_write64(db, ctrl);
 */
RF_INLINE void rf_mmio_wc_start(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb st" ::: "memory");
#else
	__asm__ __volatile__("sync" ::: "memory");
#endif
}

/*
 * rf_mmio_flush_writes - make write-combined MMIO stores leave the CPU now,
 * before the other half of the BlueFlame register is used or a lock is dropped.
 *
 *	rf_mmio_write64(db, ctrl);
 *	rf_mmio_flush_writes();     doorbell out before the next ring
 *	bf->cur ^= bf->size;        the other half next time
 */
RF_INLINE void rf_mmio_flush_writes(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb st" ::: "memory");
#else
	__asm__ __volatile__("sync" ::: "memory");
#endif
}

/*
 * rf_mmio_flush_lines - rf_mmio_flush_writes() after MMIO stores that wrote
 * every byte of each 64-byte line they touched (a BlueFlame copy), by a
 * register with a single producer. A compiler barrier on x86-64, where a full
 * write-combining buffer goes out without a fence (see above); the same
 * as rf_mmio_flush_writes() elsewhere.
 *
 *	rf_bf_copy(reg, wqe, nbb);
 *	rf_mmio_flush_lines();      whole lines: out without waiting
 *	bf->cur ^= bf->size;
 */
RF_INLINE void rf_mmio_flush_lines(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dsb st" ::: "memory");
#else
	__asm__ __volatile__("sync" ::: "memory");
#endif
}

RF_END_DECLS

#endif /* RDMAFAST_HW_BARRIER_H */
