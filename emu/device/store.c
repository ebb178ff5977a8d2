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
 *   EVEX (62, map 0F) full-vector stores, 128 to 512 bits, unmasked:
 *                        vmovdqu8/16/32/64, vmovdqa32/64, vmovups/aps,
 *                        vmovntdq/ps (UCX's BlueFlame copy is one
 *                        vmovdqu64 of zmm16)
 *
 * and, after the faulting store, the loads that feed the rest of a copy
 * (movdqa, movdqu, movaps, movups into an xmm register; mov into a general
 * one), so that dev_store_next() can go on with it.  For the MEMIC
 * operation windows (memic.c), which a load faults on too, the general
 * loads of any width:
 *
 *   8A, 8B /r            mov m -> r8/16/32/64
 *   0F B6, 0F B7 /r      movzx m8/m16 -> r16/32/64
 *
 * (Intel SDM vol. 2, chapter 2 for the encodings, and the instructions'
 * pages; the vector registers' upper parts come from the XSAVE area of the
 * signal frame, vol. 1 chapter 13).  Anything else - a string move, a
 * masked store, an address-size prefix - is refused, and the handler falls
 * back to letting the store through.
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
/* XSAVE components: YMM_Hi128, ZMM_Hi256 (zmm0-15 bits 256-511), Hi16_ZMM */
enum { XCOMP_YMM = 2, XCOMP_ZMM_HI256 = 6, XCOMP_HI16_ZMM = 7 };

/*
 * Where each XSAVE component lies in the standard-format area of a signal
 * frame: CPUID leaf 0xD, sub-leaf c, EBX (0: the CPU has none).  Read once
 * when the library loads, never in the fault handler: CPUID is an
 * instruction every hypervisor intercepts, and on the 2-core VM measured
 * on (Xeon family 6 model 207) one __get_cpuid_count() took 18-25 us, so
 * the four a 64-byte zmm store needed made UCX's doorbell cost 50-80 us.
 */
static unsigned xcomp_off[8];

__attribute__((constructor)) static void xsave_layout(void)
{
	static const unsigned used[] = { XCOMP_YMM, XCOMP_ZMM_HI256, XCOMP_HI16_ZMM };
	unsigned eax, ebx, ecx, edx;

	for (unsigned i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (__get_cpuid_count(0xd, used[i], &eax, &ebx, &ecx, &edx))
			xcomp_off[used[i]] = ebx;
}

/*
 * len bytes at off of XSAVE component c in the signal frame, zeros for a
 * component in its initial state; false if the frame has no XSAVE area.
 */
static bool xcomp(const ucontext_t *uc, unsigned c, unsigned off, unsigned len, uint8_t *out)
{
	const uint8_t *fx = (const uint8_t *)uc->uc_mcontext.fpregs;
	uint32_t magic;
	uint64_t bv;

	if (!fx)
		return false;
	memcpy(&magic, fx + 464, 4);		/* fpx_sw_bytes.magic1 */
	if (magic != FP_XSTATE_MAGIC1)
		return false;
	memcpy(&bv, fx + 512, 8);		/* xsave header: xstate_bv */
	if (!(bv & (1ull << c))) {
		memset(out, 0, len);
		return true;
	}
	if (!xcomp_off[c])
		return false;
	memcpy(out, fx + xcomp_off[c] + off, len);
	return true;
}

/* The low 16 bytes of xmm n (0-15). */
static bool xmm(const ucontext_t *uc, unsigned n, uint8_t out[16])
{
	if (!uc->uc_mcontext.fpregs)
		return false;
	memcpy(out, &uc->uc_mcontext.fpregs->_xmm[n], 16);
	return true;
}

/* The low len (16, 32 or 64) bytes of vector register n (0-31). */
static bool vreg(const ucontext_t *uc, unsigned n, unsigned len, uint8_t *out)
{
	if (n >= 16)
		return xcomp(uc, XCOMP_HI16_ZMM, 64 * (n - 16), len, out);
	if (!xmm(uc, n, out))
		return false;
	if (len > 16 && !xcomp(uc, XCOMP_YMM, 16 * n, 16, out + 16))
		return false;
	return len <= 32 || xcomp(uc, XCOMP_ZMM_HI256, 32 * n, 32, out + 32);
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

enum insn_kind { INSN_OTHER, INSN_STORE, INSN_LOAD };

/* One instruction, as far as this file understands it. */
struct insn {
	enum insn_kind	kind;
	unsigned	len;		/* bytes stored or loaded */
	unsigned	dst_len;	/* a general load: bytes of the register it writes */
	unsigned	insn_len;
	unsigned	reg;		/* the register stored or loaded */
	unsigned	rex;		/* REX bits (VEX's folded in) */
	bool		xmm;		/* reg is an xmm register, else a general one */
	bool		ymm;		/* VEX.256: 32 bytes */
	unsigned	vlen;		/* EVEX: 16, 32 or 64 bytes; 0 for the others */
	unsigned	disp8;		/* what a disp8 counts in (EVEX: the operand's size) */
	bool		high8;		/* ah, ch, dh, bh */
	bool		aligned;	/* faults unless the address is a multiple of len */
	bool		segment;	/* an FS or GS override: not a plain address */
	const uint8_t	*modrm;
	int64_t		imm;		/* C6, C7: the value stored */
	bool		has_imm;
};

static bool decode(const ucontext_t *uc, struct insn *in)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	const uint8_t *start = p;
	unsigned pp = 0, ml, ilen = 0;
	bool vex = false, opsize = false;
	uint8_t op;

	memset(in, 0, sizeof(*in));
	for (;; p++) {		/* legacy prefixes */
		if (*p == 0x66)
			opsize = true, pp = 1;
		else if (*p == 0xf3)
			pp = 2;
		else if (*p == 0xf2)
			pp = 3;
		else if (*p == 0x64 || *p == 0x65)
			in->segment = true;
		else if (*p != 0x2e && *p != 0x3e && *p != 0x26 && *p != 0x36)
			break;
		if (p - start > 4)
			return false;
	}
	if ((*p & 0xf0) == 0x40) {
		in->rex = *p++;
	} else if (*p == 0xc5) {		/* VEX, 2 bytes: ~R vvvv L pp */
		vex = true;
		in->rex = (p[1] & 0x80) ? 0 : 4;
		in->ymm = (p[1] >> 2) & 1;
		pp = p[1] & 3;
		p += 2;
	} else if (*p == 0x62) {	/* EVEX: ~R ~X ~B ~R' 00 mm, W vvvv 1 pp, z L'L b ~V' aaa */
		/* map 0F, no opmask (a masked store writes some bytes only), no broadcast */
		if ((p[1] & 0x0f) != 1 || !(p[2] & 0x04) || (p[3] & 0x17) || ((p[3] >> 5) & 3) == 3)
			return false;
		vex = true;
		in->rex = ((p[1] & 0x80) ? 0 : 4) | ((p[1] & 0x40) ? 0 : 2) |
			  ((p[1] & 0x20) ? 0 : 1) | ((p[2] & 0x80) ? 8 : 0);
		in->vlen = 16u << ((p[3] >> 5) & 3);
		in->reg = (p[1] & 0x10) ? 0 : 16;	/* R': registers 16-31 */
		pp = p[2] & 3;
		p += 4;
	} else if (*p == 0xc4) {		/* VEX, 3 bytes: ~R ~X ~B mmmmm, W vvvv L pp */
		if ((p[1] & 0x1f) != 1)
			return false;		/* map 0F only */
		vex = true;
		in->rex = ((p[1] & 0x80) ? 0 : 4) | ((p[1] & 0x40) ? 0 : 2) |
			  ((p[1] & 0x20) ? 0 : 1) | ((p[2] & 0x80) ? 8 : 0);
		in->ymm = (p[2] >> 2) & 1;
		pp = p[2] & 3;
		p += 3;
	}
	if (!vex && (*p == 0x88 || *p == 0x89 || *p == 0x8a || *p == 0x8b || *p == 0xc6 ||
		     *p == 0xc7)) {
		op = *p++;
		ml = modrm_len(p);
		if (!ml)
			return false;
		in->modrm = p;
		in->reg = ((p[0] >> 3) & 7) | ((in->rex & 4) << 1);
		in->len = (op == 0x88 || op == 0x8a || op == 0xc6) ? 1 :
			  (in->rex & 8) ? 8 : opsize ? 2 : 4;
		in->dst_len = in->len;
		in->kind = (op == 0x8a || op == 0x8b) ? INSN_LOAD : INSN_STORE;
		if ((op == 0x88 || op == 0x8a) && !in->rex && in->reg >= 4) {
			in->high8 = true;		/* ah, ch, dh, bh */
			in->reg -= 4;
		}
		if (op == 0xc6 || op == 0xc7) {
			if ((p[0] >> 3) & 7)
				return false;
			ilen = in->len == 8 ? 4 : in->len;
			in->has_imm = true;
			if (ilen == 1) {
				in->imm = (int8_t)p[ml];
			} else if (ilen == 2) {
				in->imm = (int16_t)(p[ml] | p[ml + 1] << 8);
			} else {
				int32_t w;

				memcpy(&w, p + ml, 4);
				in->imm = w;		/* sign-extended for REX.W */
			}
		}
		in->insn_len = (unsigned)(p + ml + ilen - start);
		return true;
	}
	if (!vex && *p++ != 0x0f)
		return false;
	op = *p++;
	ml = modrm_len(p);
	if (!ml)
		return false;
	in->modrm = p;
	in->reg |= ((p[0] >> 3) & 7) | ((in->rex & 4) << 1);
	in->insn_len = (unsigned)(p + ml - start);
	in->xmm = true;
	in->kind = INSN_STORE;
	if (in->vlen && op != 0x11 && op != 0x29 && op != 0x2b && op != 0x7f && op != 0xe7)
		return false;	/* EVEX: the full-vector stores only */
	switch (op) {
	case 0xb6:		/* movzx m8 -> r16/32/64 */
	case 0xb7:		/* movzx m16 -> r16/32/64 */
		if (vex || pp > 1)
			return false;
		in->xmm = false;
		in->kind = INSN_LOAD;
		in->len = op == 0xb6 ? 1 : 2;
		in->dst_len = (in->rex & 8) ? 8 : opsize ? 2 : 4;
		return true;
	case 0xc3:		/* movnti r32/64 -> m */
		if (vex)
			return false;
		in->xmm = false;
		in->len = (in->rex & 8) ? 8 : 4;
		return true;
	case 0x11:		/* movups, movupd; movss (F3), movsd (F2) */
		in->len = pp == 2 ? 4 : pp == 3 ? 8 : 16;
		break;
	case 0x29:		/* movaps, movapd */
	case 0x2b:		/* movntps, movntpd */
		if (pp > 1)
			return false;
		in->len = 16;
		in->aligned = true;
		break;
	case 0x7f:		/* movdqa (66), movdqu (F3); none: MMX; EVEX F2: vmovdqu8/16 */
		if (pp != 1 && pp != 2 && !(in->vlen && pp == 3))
			return false;
		in->len = 16;
		in->aligned = pp == 1;
		break;
	case 0xe7:		/* movntdq (66); none: MMX */
		if (pp != 1)
			return false;
		in->len = 16;
		in->aligned = true;
		break;
	case 0xd6:		/* movq xmm -> m64 (66) */
		if (pp != 1)
			return false;
		in->len = 8;
		break;
	case 0x7e:		/* movd/movq xmm -> r/m (66) */
		if (pp != 1)
			return false;
		in->len = (in->rex & 8) ? 8 : 4;
		break;
	case 0x6f:		/* movdqa (66), movdqu (F3) m -> xmm */
	case 0x28:		/* movaps m -> xmm */
	case 0x10:		/* movups m -> xmm */
		/*
		 * Loads, legacy SSE only: they leave the upper half of the
		 * ymm register alone, which the VEX forms would clear.
		 */
		if (vex || (op == 0x6f && pp != 1 && pp != 2) || (op != 0x6f && pp))
			return false;
		in->kind = INSN_LOAD;
		in->len = 16;
		in->aligned = op == 0x28 || (op == 0x6f && pp == 1);
		return true;
	default:
		return false;
	}
	if (in->vlen) {
		if (in->len != 16)
			return false;	/* EVEX scalar forms: not a copy's */
		in->len = in->disp8 = in->vlen;
		return true;
	}
	if (vex && in->ymm && in->len == 16)
		in->len = 32;
	else if (in->ymm)
		return false;
	return true;
}

/* The value of general register n (0-15, x86 numbering). */
static uint64_t gpr(const ucontext_t *uc, unsigned n)
{
	return (uint64_t)uc->uc_mcontext.gregs[gpr_index[n]];
}

/*
 * A general load's result v (zero-extended) into its register: an 8- or
 * 16-bit destination keeps the register's other bits, a 32-bit one clears
 * the upper half (Intel SDM vol. 1, 3.4.1.1).
 */
static void set_gpr(ucontext_t *uc, const struct insn *in, uint64_t v)
{
	uint64_t old = gpr(uc, in->reg), r;

	if (in->high8)
		r = (old & ~0xff00ull) | (v & 0xff) << 8;
	else if (in->dst_len == 1)
		r = (old & ~0xffull) | (v & 0xff);
	else if (in->dst_len == 2)
		r = (old & ~0xffffull) | (v & 0xffff);
	else if (in->dst_len == 4)
		r = v & 0xffffffffull;
	else
		r = v;
	uc->uc_mcontext.gregs[gpr_index[in->reg]] = (greg_t)r;
}

/* The address the memory operand of in names; false if it cannot be told. */
static bool address(const ucontext_t *uc, const struct insn *in, uintptr_t *ea)
{
	const uint8_t *p = in->modrm;
	unsigned mod = p[0] >> 6, rm = p[0] & 7;
	uint64_t a = 0;
	int32_t disp = 0;

	if (in->segment)
		return false;
	if (rm == 4) {
		unsigned scale = p[1] >> 6, index = ((p[1] >> 3) & 7) | ((in->rex & 2) << 2);
		unsigned base = (p[1] & 7) | ((in->rex & 1) << 3);

		if (index != 4)
			a += gpr(uc, index) << scale;
		if (mod == 0 && (base & 7) == 5)
			memcpy(&disp, p + 2, 4);
		else
			a += gpr(uc, base);
		p += 2;
	} else if (mod == 0 && rm == 5) {
		memcpy(&disp, p + 1, 4);
		a = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] + in->insn_len;
		*ea = (uintptr_t)(a + (uint64_t)(int64_t)disp);
		return true;
	} else {
		a = gpr(uc, rm | ((in->rex & 1) << 3));
		p += 1;
	}
	if (mod == 1)
		disp = (int8_t)p[0] * (int32_t)(in->disp8 ? in->disp8 : 1);
	else if (mod == 2)
		memcpy(&disp, p, 4);
	*ea = (uintptr_t)(a + (uint64_t)(int64_t)disp);
	return true;
}

/* The bytes a decoded store writes. */
static bool store_data(const ucontext_t *uc, const struct insn *in, struct dev_store *st)
{
	st->len = in->len;
	st->insn_len = in->insn_len;
	if (in->has_imm) {
		memcpy(st->data, &in->imm, in->len);
		return true;
	}
	if (!in->xmm) {
		uint64_t v = gpr(uc, in->reg);

		if (in->high8)
			v >>= 8;
		memcpy(st->data, &v, in->len);	/* little-endian */
		return true;
	}
	return vreg(uc, in->reg, in->len, st->data);
}

bool dev_store_decode(const void *ucv, struct dev_store *st)
{
	const ucontext_t *uc = ucv;
	struct insn in;

	return decode(uc, &in) && in.kind == INSN_STORE && store_data(uc, &in, st);
}

void dev_store_skip(void *ucv, const struct dev_store *st)
{
	ucontext_t *uc = ucv;

	uc->uc_mcontext.gregs[REG_RIP] += st->insn_len;
}

int dev_store_next(void *ucv, struct dev_store *st, uintptr_t *ea)
{
	ucontext_t *uc = ucv;
	struct insn in;

	if (!decode(uc, &in) || in.kind == INSN_OTHER || !address(uc, &in, ea) ||
	    (in.aligned && (*ea & (in.len - 1))))
		return DEV_STEP_NONE;	/* the CPU runs it: a misaligned one faults there */
	if (in.kind == INSN_STORE)
		return store_data(uc, &in, st) ? DEV_STEP_STORE : DEV_STEP_NONE;
	/* a load of the copy's source, ordinary memory: read it through the guard */
	if (in.xmm) {
		if (!uc->uc_mcontext.fpregs ||
		    !dev_copy(&uc->uc_mcontext.fpregs->_xmm[in.reg], (const void *)*ea, 16))
			return DEV_STEP_NONE;
	} else {
		uint64_t v = 0;

		if (!dev_copy(&v, (const void *)*ea, in.len))	/* little-endian */
			return DEV_STEP_NONE;
		set_gpr(uc, &in, v);
	}
	uc->uc_mcontext.gregs[REG_RIP] += in.insn_len;
	return DEV_STEP_LOAD;
}

bool dev_access_decode(const void *ucv, struct dev_access *acc)
{
	const ucontext_t *uc = ucv;
	struct insn in;

	memset(acc, 0, sizeof(*acc));
	if (!decode(uc, &in) || in.kind == INSN_OTHER || in.segment)
		return false;
	acc->load = in.kind == INSN_LOAD;
	acc->len = in.len;
	acc->insn_len = in.insn_len;
	acc->reg = in.reg;
	acc->dst_len = in.xmm ? 0 : in.dst_len;
	acc->high8 = in.high8;
	if (acc->load)
		return in.xmm ? in.len == 16 && uc->uc_mcontext.fpregs : true;
	return store_data(uc, &in, &acc->st);
}

void dev_access_finish(void *ucv, const struct dev_access *acc, const uint8_t *loaded)
{
	ucontext_t *uc = ucv;

	if (acc->load && acc->dst_len) {
		struct insn in = { .reg = acc->reg, .dst_len = acc->dst_len, .high8 = acc->high8 };
		uint64_t v = 0;

		memcpy(&v, loaded, acc->len);	/* little-endian */
		set_gpr(uc, &in, v);
	} else if (acc->load) {
		memcpy(&uc->uc_mcontext.fpregs->_xmm[acc->reg], loaded, 16);
	}
	uc->uc_mcontext.gregs[REG_RIP] += acc->insn_len;
}

#else	/* no store decoder: every doorbell store is let through (trap.c) */

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

int dev_store_next(void *uc, struct dev_store *st, uintptr_t *ea)
{
	(void)uc;
	(void)st;
	(void)ea;
	return DEV_STEP_NONE;
}
#endif

#if defined(__aarch64__)
/*
 * The general-register loads and stores of the Arm ARM (DDI 0487, "Loads
 * and stores", C4.1): LDR/STR of a byte, halfword, word or doubleword and
 * the sign-extending LDRSB/LDRSH/LDRSW, with an unsigned scaled immediate,
 * an unscaled one (LDUR/STUR), a pre- or post-indexed one (the base
 * written back), or a register offset.  Not the pairs, the exclusives nor
 * the SIMD registers.  As on x86-64, the address is si_addr.
 */
bool dev_access_decode(const void *ucv, struct dev_access *acc)
{
	const ucontext_t *uc = ucv;
	uint32_t insn;
	unsigned size, opc, rt;

	memcpy(&insn, (const void *)(uintptr_t)uc->uc_mcontext.pc, 4);
	size = insn >> 30;
	opc = (insn >> 22) & 3;
	rt = insn & 31;
	memset(acc, 0, sizeof(*acc));
	if ((insn & 0x3f000000u) == 0x39000000u) {
		/* unsigned immediate */
	} else if ((insn & 0x3f200000u) == 0x38000000u) {
		unsigned mode = (insn >> 10) & 3;

		if (mode == 2)
			return false;		/* LDTR/STTR */
		if (mode & 1) {			/* post-index 01, pre-index 11 */
			acc->writeback = true;
			acc->wb = (int64_t)((insn >> 12) & 0x1ff) << 55 >> 55;
		}
	} else if ((insn & 0x3f200c00u) != 0x38200800u) {
		return false;			/* not a register offset either */
	}
	if ((size == 3 && opc >= 2) || (size == 2 && opc == 3))
		return false;			/* PRFM, unallocated */
	acc->load = opc != 0;
	acc->len = 1u << size;
	acc->insn_len = 4;
	acc->reg = rt;
	acc->base = (insn >> 5) & 31;
	acc->sign = opc >= 2;
	acc->dst_len = opc == 3 || size < 3 ? 4 : 8;	/* Wt or Xt */
	if (opc == 2)
		acc->dst_len = 8;		/* LDRSB/LDRSH/LDRSW Xt */
	if (!acc->load) {
		uint64_t v = rt == 31 ? 0 : uc->uc_mcontext.regs[rt];	/* WZR/XZR */

		acc->st.len = acc->len;
		acc->st.insn_len = 4;
		memcpy(acc->st.data, &v, acc->len);	/* little-endian */
	}
	return true;
}

void dev_access_finish(void *ucv, const struct dev_access *acc, const uint8_t *loaded)
{
	ucontext_t *uc = ucv;

	if (acc->load && acc->reg != 31) {
		uint64_t v = 0;

		memcpy(&v, loaded, acc->len);
		if (acc->sign && acc->len < 8)
			v = (uint64_t)((int64_t)(v << (64 - 8 * acc->len)) >> (64 - 8 * acc->len));
		if (acc->dst_len == 4)
			v &= 0xffffffffull;	/* a W register clears the upper half */
		uc->uc_mcontext.regs[acc->reg] = v;
	}
	if (acc->writeback) {
		if (acc->base == 31)
			uc->uc_mcontext.sp += (uint64_t)acc->wb;
		else
			uc->uc_mcontext.regs[acc->base] += (uint64_t)acc->wb;
	}
	uc->uc_mcontext.pc += 4;
}
#elif !DEV_STORE_DECODER
bool dev_access_decode(const void *uc, struct dev_access *acc)
{
	(void)uc;
	(void)acc;
	return false;
}

void dev_access_finish(void *uc, const struct dev_access *acc, const uint8_t *loaded)
{
	(void)uc;
	(void)acc;
	(void)loaded;
}
#endif
