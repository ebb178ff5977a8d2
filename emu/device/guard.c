/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * guard.c - device accesses to application memory that cannot fault.
 *
 * A ConnectX pins every page it was given (MRs, queues, doorbell records,
 * CQ buffers) and never faults: whatever the application does to its
 * mappings afterwards, the worst outcome is an error CQE.  The model reads
 * and writes those pages with the CPU, so an MR whose pages were munmap'ed,
 * or a PROT_READ page the device writes, would raise SIGSEGV/SIGBUS in the
 * engine and kill the process.
 *
 * dev_copy() does what the kernel's copy_from_user()/copy_to_user() do with
 * their exception tables (arch/x86/mm/extable.c, fixup_exception()): the
 * copy is a small assembly routine below whose instructions lie between
 * two known addresses, and nothing is armed before it runs - the fast path
 * is a plain call, some ten instructions for a WQE, CQE or 8-byte payload,
 * `rep movsb` (x86-64) or a 64-byte ldp/stp loop (aarch64) for packets.
 * When a load or store of it faults, the kernel delivers SIGSEGV/SIGBUS
 * with the faulting instruction's address in the ucontext; on_fault() sees
 * that it lies in the routine's range, moves the saved PC to the routine's
 * fixup label (which returns false) and returns, and the kernel's
 * sigreturn resumes the thread there.  The routine touches no stack and
 * saves no register, so it may be left at any instruction.  The copy may
 * have been partly done; callers treat false as "nothing usable".
 * process_vm_readv/writev on our own pid, the other way to get EFAULT
 * instead of a signal, costs a syscall (about a microsecond) per copy.
 *
 * dev_guard_call() (the atomics, which run compiled code we cannot
 * delimit) keeps the older way: a sigsetjmp() taken before the access and
 * a handler that siglongjmp()s back when the faulting thread has one
 * armed, one sigsetjmp without a signal mask (no syscall, some 30
 * instructions) per call.  dev_copy() is built that way too on other
 * architectures, and in sanitizer builds: TSan and MSan record only the
 * accesses they see, memcpy()'s (intercepted) but not an assembly
 * routine's, so there the copy stays memcpy() under a sigsetjmp.  ASan is
 * different: its memcpy() refuses a range its shadow marks poisoned, and
 * the shadow describes the heap as its allocator left it, not the
 * mappings - a page the application maps where a heap redzone used to be
 * still reads as one, and ASan would abort where the guard must answer.
 * The device reads memory as the MMU has it, so with ASan the copy under
 * the sigsetjmp is copy_unchecked(), which ASan does not look at.
 *
 * A fault outside a guard (or a doorbell trap, trap.c) is not ours: it goes
 * to the handler that was installed before ours, or takes the default
 * action.  An application that installs its own SIGSEGV handler later
 * would replace ours: its sigaction() and signal() reach
 * emu_dev_sigaction() instead, which makes theirs the one we chain to, and
 * tells them of the one they replace as if ours were not there.  One set by
 * a raw system call is found by dev_guard_check() (from the engine's slow
 * tasks), which puts ours back in front the same way.
 */
#include <signal.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "device.h"

/*
 * dev_copy() in assembly on x86-64 and aarch64, unless a sanitizer checks
 * the build (gcc says so by __SANITIZE_*__, clang by __has_feature).
 */
#if defined(__SANITIZE_ADDRESS__)
#define GUARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_ASAN 1
#endif
#endif
#if defined(GUARD_ASAN) || defined(__SANITIZE_THREAD__)
#define GUARD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define GUARD_SANITIZED 1
#endif
#endif
#if !defined(GUARD_SANITIZED) && \
    ((defined(__x86_64__) && !defined(__ILP32__)) || defined(__aarch64__))
#define GUARD_COPY_ASM 1
#else
#define GUARD_COPY_ASM 0
#endif

/*
 * Initial-exec TLS: read from the signal handler, which must not call
 * __tls_get_addr.  The library is preloaded, so its TLS is static anyway.
 */
#define GUARD_TLS __thread __attribute__((tls_model("initial-exec")))

static GUARD_TLS sigjmp_buf *volatile guard_env;
static GUARD_TLS volatile uintptr_t chain_frame;	/* our frame while we chain */
static struct sigaction prev_act[2];	/* SIGSEGV, SIGBUS */
static bool installed;

static int sig_slot(int sig)
{
	return sig == SIGBUS;
}

#if GUARD_COPY_ASM
/*
 * The copy's loads and stores lie in [dev_copy_insns, dev_copy_insns_end);
 * dev_copy_fixup returns false (the routine at the end of this file).
 */
extern const char dev_copy_insns[], dev_copy_insns_end[], dev_copy_fixup[]
	__attribute__((visibility("hidden")));

/*
 * A fault of dev_copy(): resume it at its fixup.  Only a fault the kernel
 * raised (si_code > 0) - a SIGSEGV sent with kill() that happens to arrive
 * during a copy is not the copy's.
 */
static bool copy_fixup(const siginfo_t *si, void *uc)
{
	ucontext_t *u = uc;
	uintptr_t pc;

	if (!u || !si || si->si_code <= 0)
		return false;
#if defined(__x86_64__)
	pc = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#else
	pc = (uintptr_t)u->uc_mcontext.pc;
#endif
	if (pc < (uintptr_t)dev_copy_insns || pc >= (uintptr_t)dev_copy_insns_end)
		return false;
#if defined(__x86_64__)
	u->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)dev_copy_fixup;
#else
	u->uc_mcontext.pc = (uintptr_t)dev_copy_fixup;
#endif
	return true;
}
#endif

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env;
	const struct sigaction *p = &prev_act[sig_slot(sig)];
	volatile char here;

#if GUARD_COPY_ASM
	if (copy_fixup(si, uc))
		return;		/* sigreturn resumes at the fixup */
#endif
	env = guard_env;
	if (env) {
		guard_env = NULL;
		siglongjmp(*env, 1);
	}
	/*
	 * a doorbell store to a page protected while the engine sleeps, an
	 * access to MEMIC operation addresses
	 */
	if (sig == SIGSEGV && si && si->si_code == SEGV_ACCERR &&
	    (dev_trap_fault(si->si_addr, uc) || dev_memic_fault(si->si_addr, uc))) {
		dev_resume(uc, __builtin_return_address(0));
		return;
	}
	/*
	 * Not a device access.  A handler that chains back to us (it saved
	 * ours as its "previous" one and calls it) must not loop: entered
	 * again below our own chaining frame, fall back to the default
	 * action.  A frame that handler left by longjmp is stale, and a new
	 * fault finds itself above it (stacks grow down).
	 */
	if ((chain_frame && (uintptr_t)&here < chain_frame) ||
	    (!(p->sa_flags & SA_SIGINFO) &&
	     (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN))) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };

		/*
		 * Past the interposer: through it, this would only become
		 * the handler we chain to, and the fault would come back
		 * here for ever instead of killing the process.
		 */
		emu_real_sigaction(sig, &dfl, NULL);
		return;		/* the faulting instruction runs again and dies */
	}
	chain_frame = (uintptr_t)&here;
	if (p->sa_flags & SA_SIGINFO)
		p->sa_sigaction(sig, si, uc);
	else
		p->sa_handler(sig);
	chain_frame = 0;
}

static bool ours(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_fault;
}

static void install(int sig)
{
	struct sigaction a, old;

	memset(&a, 0, sizeof(a));
	a.sa_sigaction = on_fault;
	/* NODEFER: leaving by siglongjmp must not leave the signal blocked */
	a.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&a.sa_mask);
	if (emu_real_sigaction(sig, &a, &old) == 0 && !ours(&old))
		prev_act[sig_slot(sig)] = old;
}

void dev_guard_init(void)
{
	struct sigaction cur;

	if (installed)
		return;
	/* resolves it now: on_fault() may need it, and must look nothing up */
	emu_real_sigaction(SIGSEGV, NULL, &cur);
	install(SIGSEGV);
	install(SIGBUS);
	dev_resume_init();
	installed = true;
}

bool emu_dev_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction *p;

	if (!installed || (sig != SIGSEGV && sig != SIGBUS))
		return false;
	p = &prev_act[sig_slot(sig)];
	if (old)
		*old = *p;
	if (act)
		*p = *act;
	return true;
}

void dev_guard_check(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS };

	if (!installed)
		return;
	for (unsigned i = 0; i < DEV_ARRAY_SIZE(sigs); i++) {
		struct sigaction cur;

		if (emu_real_sigaction(sigs[i], NULL, &cur) == 0 && !ours(&cur))
			install(sigs[i]);
	}
}

void dev_guard_fini(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS };

	if (!installed)
		return;
	for (unsigned i = 0; i < DEV_ARRAY_SIZE(sigs); i++) {
		struct sigaction cur;

		/* give back what we took, unless someone replaced us since */
		if (emu_real_sigaction(sigs[i], NULL, &cur) == 0 && ours(&cur))
			emu_real_sigaction(sigs[i], &prev_act[sig_slot(sigs[i])], NULL);
	}
	installed = false;
}

#if !GUARD_COPY_ASM
#if defined(GUARD_ASAN)
/*
 * A copy ASan does not check (above): the function is not instrumented,
 * and its accesses are volatile, so the compiler cannot make them the
 * memcpy() call that ASan intercepts.  Only sanitizer builds run it; word
 * by word where it can, because the fuzzing builds also count every
 * iteration's comparison (SanitizerCoverage), and a byte loop made those
 * counts a tenth of the device_wqe target's time.
 */
typedef uint64_t __attribute__((may_alias, aligned(1))) guard_word;

__attribute__((no_sanitize_address, noinline))
static void copy_unchecked(void *dst, const void *src, size_t n)
{
	volatile guard_word *dw = dst;
	const volatile guard_word *sw = src;
	volatile unsigned char *d;
	const volatile unsigned char *s;

	for (; n >= sizeof(*dw); n -= sizeof(*dw))
		*dw++ = *sw++;
	d = (volatile unsigned char *)dw;
	s = (const volatile unsigned char *)sw;
	while (n--)
		*d++ = *s++;
}
#define GUARD_COPY(d, s, n)	copy_unchecked(d, s, n)
#else
#define GUARD_COPY(d, s, n)	memcpy(d, s, n)
#endif

/*
 * The guarded region: the compiler may not move the copy across the stores
 * that arm and disarm the guard (signal fences), and nothing modified
 * between sigsetjmp and a jump back is read afterwards.
 */
bool dev_copy(void *dst, const void *src, size_t n)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0))
		return false;
	guard_env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	GUARD_COPY(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	guard_env = NULL;
	return true;
}
#endif

/*
 * The guarded region of dev_guard_call(), as dev_copy()'s above.
 */
bool dev_guard_call(void (*fn)(void *), void *arg)
{
	sigjmp_buf env;

	if (sigsetjmp(env, 0))
		return false;
	guard_env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	guard_env = NULL;
	return true;
}

bool dev_load_be32(const void *p, uint32_t *v)
{
	uint32_t x;

	if (!dev_copy(&x, p, 4))
		return false;
	*v = be32toh(x);
	return true;
}

#if GUARD_COPY_ASM
/*
 * dev_copy(dst, src, n) in assembly: a leaf that touches no stack, so
 * on_fault() may resume it at dev_copy_fixup from any of its loads and
 * stores.  dst and src do not overlap (memcpy's contract).  Below 16 bytes
 * and up to 64, the first and the last chunk of 8, 4, 2 or 16-32 bytes are
 * loaded before they are stored (they overlap when n is not a multiple):
 * an 8-byte payload, a 16-byte segment or a 64-byte WQE or CQE are a
 * handful of instructions, whatever the alignment.  Above 64, 64 bytes a
 * turn and the last 64 overlapping; from 512 bytes on x86-64, `rep movsb`
 * (fast strings move whole lines).
 */
#if defined(__x86_64__)
#if defined(__CET__) && (__CET__ & 1)
#define GUARD_ENTRY "	endbr64\n"
#else
#define GUARD_ENTRY ""
#endif
__asm__(
	"	.pushsection .text\n"
	"	.globl dev_copy\n"
	"	.type dev_copy, @function\n"
	"	.globl dev_copy_insns, dev_copy_insns_end, dev_copy_fixup\n"
	"	.hidden dev_copy_insns, dev_copy_insns_end, dev_copy_fixup\n"
	"	.p2align 4\n"
	"dev_copy:\n"
	"	.cfi_startproc\n"
	GUARD_ENTRY
	"dev_copy_insns:\n"
	"	cmpq $16, %rdx\n"
	"	jb .Ldc_lt16\n"
	"	cmpq $32, %rdx\n"
	"	ja .Ldc_gt32\n"
	"	movups (%rsi), %xmm0\n"
	"	movups -16(%rsi,%rdx), %xmm1\n"
	"	movups %xmm0, (%rdi)\n"
	"	movups %xmm1, -16(%rdi,%rdx)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_gt32:\n"
	"	cmpq $64, %rdx\n"
	"	ja .Ldc_gt64\n"
	"	movups (%rsi), %xmm0\n"
	"	movups 16(%rsi), %xmm1\n"
	"	movups -32(%rsi,%rdx), %xmm2\n"
	"	movups -16(%rsi,%rdx), %xmm3\n"
	"	movups %xmm0, (%rdi)\n"
	"	movups %xmm1, 16(%rdi)\n"
	"	movups %xmm2, -32(%rdi,%rdx)\n"
	"	movups %xmm3, -16(%rdi,%rdx)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_gt64:\n"
	"	cmpq $512, %rdx\n"
	"	jae .Ldc_rep\n"
	"	leaq -64(%rsi,%rdx), %r8\n"	/* the last 64 bytes */
	"	leaq -64(%rdi,%rdx), %r9\n"
	".Ldc_loop:\n"
	"	movups (%rsi), %xmm0\n"
	"	movups 16(%rsi), %xmm1\n"
	"	movups 32(%rsi), %xmm2\n"
	"	movups 48(%rsi), %xmm3\n"
	"	movups %xmm0, (%rdi)\n"
	"	movups %xmm1, 16(%rdi)\n"
	"	movups %xmm2, 32(%rdi)\n"
	"	movups %xmm3, 48(%rdi)\n"
	"	addq $64, %rsi\n"
	"	addq $64, %rdi\n"
	"	subq $64, %rdx\n"
	"	cmpq $64, %rdx\n"
	"	ja .Ldc_loop\n"
	"	movups (%r8), %xmm0\n"
	"	movups 16(%r8), %xmm1\n"
	"	movups 32(%r8), %xmm2\n"
	"	movups 48(%r8), %xmm3\n"
	"	movups %xmm0, (%r9)\n"
	"	movups %xmm1, 16(%r9)\n"
	"	movups %xmm2, 32(%r9)\n"
	"	movups %xmm3, 48(%r9)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_rep:\n"			/* DF is clear at a call (the ABI) */
	"	movq %rdx, %rcx\n"
	"	rep movsb\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_lt16:\n"
	"	cmpl $8, %edx\n"
	"	jb .Ldc_lt8\n"
	"	movq (%rsi), %rax\n"
	"	movq -8(%rsi,%rdx), %rcx\n"
	"	movq %rax, (%rdi)\n"
	"	movq %rcx, -8(%rdi,%rdx)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_lt8:\n"
	"	cmpl $4, %edx\n"
	"	jb .Ldc_lt4\n"
	"	movl (%rsi), %eax\n"
	"	movl -4(%rsi,%rdx), %ecx\n"
	"	movl %eax, (%rdi)\n"
	"	movl %ecx, -4(%rdi,%rdx)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_lt4:\n"
	"	cmpl $2, %edx\n"
	"	jb .Ldc_lt2\n"
	"	movzwl (%rsi), %eax\n"
	"	movzwl -2(%rsi,%rdx), %ecx\n"
	"	movw %ax, (%rdi)\n"
	"	movw %cx, -2(%rdi,%rdx)\n"
	"	movl $1, %eax\n"
	"	ret\n"
	".Ldc_lt2:\n"
	"	testl %edx, %edx\n"
	"	je .Ldc_done\n"
	"	movzbl (%rsi), %eax\n"
	"	movb %al, (%rdi)\n"
	".Ldc_done:\n"
	"	movl $1, %eax\n"
	"	ret\n"
	"dev_copy_insns_end:\n"
	"dev_copy_fixup:\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size dev_copy, .-dev_copy\n"
	"	.popsection\n");
#else /* __aarch64__ */
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define GUARD_ENTRY "	bti c\n"
#else
#define GUARD_ENTRY ""
#endif
__asm__(
	"	.pushsection .text\n"
	"	.globl dev_copy\n"
	"	.type dev_copy, %function\n"
	"	.globl dev_copy_insns, dev_copy_insns_end, dev_copy_fixup\n"
	"	.hidden dev_copy_insns, dev_copy_insns_end, dev_copy_fixup\n"
	"	.p2align 4\n"
	"dev_copy:\n"
	"	.cfi_startproc\n"
	GUARD_ENTRY
	"dev_copy_insns:\n"
	"	add x3, x1, x2\n"		/* the ends of src and dst */
	"	add x4, x0, x2\n"
	"	cmp x2, #16\n"
	"	b.lo .Ldc_lt16\n"
	"	cmp x2, #32\n"
	"	b.hi .Ldc_gt32\n"
	"	ldr q0, [x1]\n"
	"	ldur q1, [x3, #-16]\n"
	"	str q0, [x0]\n"
	"	stur q1, [x4, #-16]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_gt32:\n"
	"	cmp x2, #64\n"
	"	b.hi .Ldc_loop\n"
	"	ldp q0, q1, [x1]\n"
	"	ldp q2, q3, [x3, #-32]\n"
	"	stp q0, q1, [x0]\n"
	"	stp q2, q3, [x4, #-32]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_loop:\n"
	"	ldp q0, q1, [x1]\n"
	"	ldp q2, q3, [x1, #32]\n"
	"	add x1, x1, #64\n"
	"	sub x2, x2, #64\n"
	"	stp q0, q1, [x0]\n"
	"	stp q2, q3, [x0, #32]\n"
	"	add x0, x0, #64\n"
	"	cmp x2, #64\n"
	"	b.hi .Ldc_loop\n"
	"	ldp q0, q1, [x3, #-64]\n"	/* the last 64 bytes */
	"	ldp q2, q3, [x3, #-32]\n"
	"	stp q0, q1, [x4, #-64]\n"
	"	stp q2, q3, [x4, #-32]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_lt16:\n"
	"	tbz x2, #3, .Ldc_lt8\n"
	"	ldr x5, [x1]\n"
	"	ldur x6, [x3, #-8]\n"
	"	str x5, [x0]\n"
	"	stur x6, [x4, #-8]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_lt8:\n"
	"	tbz x2, #2, .Ldc_lt4\n"
	"	ldr w5, [x1]\n"
	"	ldur w6, [x3, #-4]\n"
	"	str w5, [x0]\n"
	"	stur w6, [x4, #-4]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_lt4:\n"
	"	tbz x2, #1, .Ldc_lt2\n"
	"	ldrh w5, [x1]\n"
	"	ldurh w6, [x3, #-2]\n"
	"	strh w5, [x0]\n"
	"	sturh w6, [x4, #-2]\n"
	"	mov w0, #1\n"
	"	ret\n"
	".Ldc_lt2:\n"
	"	cbz x2, .Ldc_done\n"
	"	ldrb w5, [x1]\n"
	"	strb w5, [x0]\n"
	".Ldc_done:\n"
	"	mov w0, #1\n"
	"	ret\n"
	"dev_copy_insns_end:\n"
	"dev_copy_fixup:\n"
	"	mov w0, #0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size dev_copy, .-dev_copy\n"
	"	.popsection\n");
#endif
#endif
