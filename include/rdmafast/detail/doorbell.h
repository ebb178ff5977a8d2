/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/doorbell.h - the machinery under doorbell.h: the hwcap
 * bits that announce ST64B, the 16-byte vector type of the BlueFlame
 * copies, and the ST64B copy itself.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_DOORBELL_H
#define RDMAFAST_DETAIL_DOORBELL_H

#include <stdint.h>

#include <rdmafast/compiler.h>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
/*
 * FEAT_LS64 (ST64B: one 64-byte single-copy-atomic store) is announced in
 * the third hwcap word, AT_HWCAP3 (Linux 6.13, include/uapi/linux/auxvec.h),
 * bit HWCAP3_LS64 (arch/arm64/include/uapi/asm/hwcap.h). Older headers have
 * neither: the values below are the kernel's ABI constants. An older kernel
 * has no AT_HWCAP3 entry; getauxval() then returns 0, i.e. no LS64.
 */
#ifdef AT_HWCAP3
#define RF__AT_HWCAP3 AT_HWCAP3
#else
#define RF__AT_HWCAP3 29
#endif
#ifdef HWCAP3_LS64
#define RF__HWCAP3_LS64 HWCAP3_LS64
#else
#define RF__HWCAP3_LS64 (1UL << 3)
#endif
#endif

RF_BEGIN_DECLS

/* 16 bytes in a register, allowed to alias WQE memory of any type. */
typedef long long rf__v16 __attribute__((vector_size(16), may_alias));

/* The 16-byte stores of rf_bf_copy() (doorbell.h explains them). */
RF_INLINE void rf__bf_copy_v16(void *dst, const void *src, unsigned nbb)
{
	volatile rf__v16 *d = (volatile rf__v16 *)dst;
	const rf__v16 *s = (const rf__v16 *)src;

	for (;;) {
		d[0] = s[0];
		d[1] = s[1];
		d[2] = s[2];
		d[3] = s[3];
		if (--nbb == 0)
			break;
		d += 4;
		s += 4;
	}
}

#if defined(__aarch64__)
/*
 * rf__bf_copy_st64b - the BlueFlame copy as one ST64B per basic block
 * (arm64 FEAT_LS64; rf_bf.ls64 says the CPU has it).
 *
 * Why: rf_bf_copy()'s four 16-byte stores to a write-combining (Normal
 * non-cacheable) page are four accesses. The architecture lets them leave
 * the CPU merged or in pieces, so whether the HCA receives the basic block
 * as one 64-byte PCIe write is up to the implementation; a BlueFlame write
 * that arrives in pieces costs the device time or the DMA read of the WQE
 * that BlueFlame exists to save. ST64B stores 64 bytes as one
 * single-copy-atomic access, so each basic block leaves the CPU whole.
 * UCX PR #11542 adds the same for mlx5 BlueFlame on LS64 CPUs, selected at
 * run time through getauxval(AT_HWCAP3) & HWCAP3_LS64 with the ordinary
 * copy as the fallback; the kernel's elf_hwcaps documentation asks for that
 * fallback too, since ST64B works only on memory that supports it.
 *
 * The instruction is written as its encoding (.inst) with fixed registers
 * (data in x8..x15, the address in x16: ST64B x8, [x16]) because assemblers
 * before Armv8.7 support refuse the mnemonic and the rest of the code must
 * not be built for Armv8.7. ST64B needs a 64-byte aligned address: the
 * halves of a bfreg are 256-byte aligned. The barriers around the copy are
 * the same as for the ordinary copy: ST64B is an ordinary store for DMB and
 * DSB.
 */
RF_INLINE void rf__bf_copy_st64b(void *dst, const void *src, unsigned nbb)
{
	uint8_t *d = (uint8_t *)dst;
	const uint8_t *s = (const uint8_t *)src;

	for (;;) {
		__asm__ __volatile__(
			"mov	x16, %0\n\t"
			"ldp	x8, x9, [%1]\n\t"
			"ldp	x10, x11, [%1, #16]\n\t"
			"ldp	x12, x13, [%1, #32]\n\t"
			"ldp	x14, x15, [%1, #48]\n\t"
			".inst	0xf83f9208	/* st64b x8, [x16] */"
			: : "r"(d), "r"(s)
			: "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
			  "memory");
		if (--nbb == 0)
			break;
		d += 64;
		s += 64;
	}
}
#endif

/*
 * The BlueFlame copy of ring: ST64B where the queue found FEAT_LS64 at init
 * (rf_bf.ls64, a constant of the queue), the 16-byte stores of rf_bf_copy() otherwise.
 */
RF_INLINE void rf__bf_copy_any(uint32_t ls64, void *dst, const void *src, unsigned nbb)
{
#if defined(__aarch64__)
	if (ls64) {
		rf__bf_copy_st64b(dst, src, nbb);
		return;
	}
#else
	(void)ls64;
#endif
	rf__bf_copy_v16(dst, src, nbb);
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_DOORBELL_H */
