/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * store.c - what a faulting doorbell store wanted to write, so that the
 * fault handler can write it itself and step over the instruction.
 *
 * A doorbell page that stays write-protected catches every doorbell with
 * one fault and nothing else: no mprotect() to let the store through and
 * none to protect the page again, which on the 2-core VM this was measured
 * on cost 29 us a store against 1.6 us for the fault alone (a TLB
 * shootdown each, and a single step to know when the store had landed).
 * The handler (trap.c) needs the store's width, its data and the length
 * of the instruction: this decodes the stores a doorbell or a BlueFlame
 * copy is made of, whoever compiled them (libmlx5's mmio_write64_be() and
 * mlx5_bf_copy(), rdmafast's rf_mmio_write64() and rf_bf_copy(), UCX's and
 * DPDK's copies, glibc's memcpy()):
 *
 *   88, 89 /r            mov r8/16/32/64 -> m
 *   C6 /0, C7 /0         mov imm -> m
 *   0F C3 /r             movnti r32/64 -> m
 *   0F 11, 0F 29, 0F 2B  movups/pd, movss, movsd, movaps/pd, movntps/pd
 *   66 0F 7F, F3 0F 7F   movdqa, movdqu; 66 0F E7 movntdq
 *   66 0F D6, 66 0F 7E   movq xmm -> m64, movd/movq xmm -> m32/64
 *   the same in VEX (C5, C4 with map 0F), 128 and 256 bits
 *
 * (Intel SDM vol. 2, chapter 2 for the encodings, and the instructions'
 * pages).  Anything else - a string move, EVEX, an address-size prefix -
 * is refused, and the handler falls back to letting the store through.
 * Only the instruction's encoding is read here: its address is the one the
 * kernel reported (si_addr), the only one the page can be reached at.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "device.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#include <cpuid.h>

/* x86 register number (0 rax, 1 rcx, ... 8-15 r8-r15) to the ucontext's. */
static const int gpr_index[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

/* The FXSAVE area's software bytes say whether an XSAVE area follows. */
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1	0x46505853u
#endif
#define XFEATURE_YMM		(1u << 2)

/*
 * The upper 128 bits of ymm n, from the XSAVE area the kernel put in the
 * signal frame (standard format: the YMM_Hi128 component at the offset
 * CPUID leaf 0xD, sub-leaf 2 gives); false if the frame has none.
 */
static bool ymm_high(const ucontext_t *uc, unsigned n, uint8_t out[16])
{
	const uint8_t *fx = (const uint8_t *)uc->uc_mcontext.fpregs;
	unsigned eax, ebx, ecx, edx;
	uint32_t magic;
	uint64_t bv;

	if (!fx)
		return false;
	memcpy(&magic, fx + 464, 4);		/* fpx_sw_bytes.magic1 */
	if (magic != FP_XSTATE_MAGIC1)
		return false;
	memcpy(&bv, fx + 512, 8);		/* xsave header: xstate_bv */
	if (!(bv & XFEATURE_YMM)) {
		memset(out, 0, 16);		/* in its initial state: zero */
		return true;
	}
	if (!__get_cpuid_count(0xd, 2, &eax, &ebx, &ecx, &edx) || !ebx)
		return false;
	memcpy(out, fx + ebx + 16 * n, 16);
	return true;
}

/* The low 16 bytes of xmm n. */
static bool xmm(const ucontext_t *uc, unsigned n, uint8_t out[16])
{
	if (!uc->uc_mcontext.fpregs)
		return false;
	memcpy(out, &uc->uc_mcontext.fpregs->_xmm[n], 16);
	return true;
}

/*
 * The length of a ModRM operand that names memory (mod != 3), from the
 * ModRM byte at p: ModRM, SIB, displacement; 0 for a register operand.
 */
static unsigned modrm_len(const uint8_t *p)
{
	unsigned mod = p[0] >> 6, rm = p[0] & 7, n = 1;

	if (mod == 3)
		return 0;
	if (rm == 4) {				/* SIB */
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			return n + 4;		/* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		return n + 4;			/* RIP-relative disp32 */
	}
	return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

bool dev_store_decode(const void *ucv, struct dev_store *st)
{
	const ucontext_t *uc = ucv;
	const uint8_t *p = (const uint8_t *)(uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	const uint8_t *start = p;
	unsigned rex = 0, pp = 0, reg, ml, vex_l = 0;
	bool vex = false, opsize = false;
	uint8_t op;

	/* legacy prefixes (a segment override changes nothing: si_addr is the address) */
	for (;; p++) {
		if (*p == 0x66)
			opsize = true, pp = 1;
		else if (*p == 0xf3)
			pp = 2;
		else if (*p == 0xf2)
			pp = 3;
		else if (*p != 0x2e && *p != 0x3e && *p != 0x26 && *p != 0x36 &&
			 *p != 0x64 && *p != 0x65)
			break;
		if (p - start > 4)
			return false;
	}
	if ((*p & 0xf0) == 0x40) {
		rex = *p++;
	} else if (*p == 0xc5) {		/* VEX, 2 bytes: R vvvv L pp */
		vex = true;
		rex = (p[1] & 0x80) ? 0 : 0x44;	/* R is stored inverted */
		vex_l = (p[1] >> 2) & 1;
		pp = p[1] & 3;
		p += 2;
	} else if (*p == 0xc4) {		/* VEX, 3 bytes: R X B mmmmm, W vvvv L pp */
		if ((p[1] & 0x1f) != 1)
			return false;		/* map 0F only */
		vex = true;
		rex = (p[1] & 0x80) ? 0 : 0x44;
		vex_l = (p[2] >> 2) & 1;
		pp = p[2] & 3;
		if (p[2] & 0x80)
			rex |= 0x48;		/* W */
		p += 3;
	}
	reg = 0;
	if (!vex) {
		if (*p == 0x88 || *p == 0x89) {
			op = *p++;
			ml = modrm_len(p);
			if (!ml)
				return false;
			reg = ((p[0] >> 3) & 7) | ((rex & 4) << 1);
			st->len = op == 0x88 ? 1 : (rex & 8) ? 8 : opsize ? 2 : 4;
			if (op == 0x88 && !rex && reg >= 4) {	/* ah, ch, dh, bh */
				uint64_t v = (uint64_t)uc->uc_mcontext.gregs[gpr_index[reg - 4]];

				st->data[0] = (uint8_t)(v >> 8);
			} else {
				uint64_t v = (uint64_t)uc->uc_mcontext.gregs[gpr_index[reg]];

				memcpy(st->data, &v, st->len);	/* little-endian */
			}
			st->insn_len = (unsigned)(p + ml - start);
			return true;
		}
		if (*p == 0xc6 || *p == 0xc7) {
			op = *p++;
			ml = modrm_len(p);
			if (!ml || ((p[0] >> 3) & 7))
				return false;
			st->len = op == 0xc6 ? 1 : (rex & 8) ? 8 : opsize ? 2 : 4;
			{
				unsigned ilen = st->len == 8 ? 4 : st->len;
				int64_t v = 0;

				if (ilen == 1)
					v = (int8_t)p[ml];
				else if (ilen == 2)
					v = (int16_t)(p[ml] | p[ml + 1] << 8);
				else {
					int32_t w;

					memcpy(&w, p + ml, 4);
					v = w;		/* sign-extended for REX.W */
				}
				memcpy(st->data, &v, st->len);
				st->insn_len = (unsigned)(p + ml + ilen - start);
			}
			return true;
		}
		if (*p++ != 0x0f)
			return false;
	}
	op = *p++;
	ml = modrm_len(p);
	if (!ml)
		return false;
	reg = ((p[0] >> 3) & 7) | ((rex & 4) << 1);
	st->insn_len = (unsigned)(p + ml - start);
	if (!vex && op == 0xc3) {		/* movnti */
		uint64_t v = (uint64_t)uc->uc_mcontext.gregs[gpr_index[reg]];

		st->len = (rex & 8) ? 8 : 4;
		memcpy(st->data, &v, st->len);
		return true;
	}
	switch (op) {
	case 0x11:		/* movups, movupd; movss (F3), movsd (F2) */
		st->len = pp == 2 ? 4 : pp == 3 ? 8 : 16;
		break;
	case 0x29:		/* movaps, movapd */
	case 0x2b:		/* movntps, movntpd */
		if (pp > 1)
			return false;
		st->len = 16;
		break;
	case 0x7f:		/* movdqa (66), movdqu (F3); none: MMX */
		if (pp != 1 && pp != 2)
			return false;
		st->len = 16;
		break;
	case 0xe7:		/* movntdq (66); none: MMX */
	case 0xd6:		/* movq xmm -> m64 (66) */
		if (pp != 1)
			return false;
		st->len = op == 0xd6 ? 8 : 16;
		break;
	case 0x7e:		/* movd/movq xmm -> r/m (66) */
		if (pp != 1)
			return false;
		st->len = (rex & 8) ? 8 : 4;
		break;
	default:
		return false;
	}
	if (!xmm(uc, reg, st->data))
		return false;
	if (vex && vex_l && st->len == 16) {
		if (!ymm_high(uc, reg, st->data + 16))
			return false;
		st->len = 32;
	}
	return true;
}

void dev_store_skip(void *ucv, const struct dev_store *st)
{
	ucontext_t *uc = ucv;

	uc->uc_mcontext.gregs[REG_RIP] += st->insn_len;
}

#else	/* no decoder: every doorbell store is let through (trap.c) */

bool dev_store_decode(const void *uc, struct dev_store *st)
{
	(void)uc;
	(void)st;
	return false;
}

void dev_store_skip(void *uc, const struct dev_store *st)
{
	(void)uc;
	(void)st;
}
#endif
