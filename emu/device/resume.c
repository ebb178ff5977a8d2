/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * resume.c - leaving a doorbell fault without rt_sigreturn.
 *
 * A doorbell fault that the handler wrote and stepped over (trap.c) ends
 * with the thread resumed after the store.  The kernel's way back is the
 * rt_sigreturn system call, which reloads the registers and the FPU state
 * from the signal frame.  Where the kernel runs with page-table isolation
 * and no PCID, every entry to it and every exit flushes the TLB, and that
 * one more round trip is a third of the fault: on the 2-vCPU AMD EPYC VM
 * of docs/emu-measurements.md a store to a protected page whose handler
 * steps over it cost 11.7-12.0 us with rt_sigreturn and 8.2-8.5 us
 * without (the best of 100 batches of 100 faults), and a thread that
 * rings doorbells back to back pays one such fault each.
 *
 * So on x86-64 the handler restores the interrupted context itself, as
 * rt_sigreturn would (arch/x86/kernel/signal_64.c, restore_sigcontext(),
 * and arch/x86/kernel/fpu/signal.c, which restores the FPU state with
 * XRSTOR from the frame): XRSTOR of the frame's XSAVE area with the
 * features the kernel says it saved (struct _fpx_sw_bytes, bytes 464-511
 * of the area: arch/x86/include/uapi/asm/sigcontext.h), the general
 * registers, then RIP, RFLAGS and RSP at once by IRETQ, which returns to
 * the privilege level it runs at as well as to another.  Nothing else is in
 * the frame to restore, and where something is, the kernel returns:
 * - The signal mask: the handler is installed with SA_NODEFER and an empty
 *   mask (guard.c), so the kernel did not change it.
 * - An alternate stack with SS_AUTODISARM stays disarmed until
 *   rt_sigreturn restores it; a shadow stack (CET) has a token for
 *   rt_sigreturn to pop (arch_prctl(ARCH_SHSTK_STATUS), once).
 * - A frame that is not the kernel's: the handler must have been entered
 *   from the kernel, its return address the restorer the kernel pushed -
 *   not a handler of the application's that chained to ours, or valgrind's
 *   frames (sanitizer builds always return: device.h).
 * - An XSAVE area without the kernel's magic (no XSAVE), or a code segment
 *   other than the one running (a 32-bit one in a 64-bit process).
 * The restore writes nothing the interrupted code may be using: the 20
 * words it pops (15 registers, then IRETQ's frame) lie under the 128-byte
 * red zone below the interrupted RSP, where the kernel puts a signal frame
 * too, and are written after XRSTOR has read the XSAVE area they may lie
 * on; they are popped from the stack, so a signal that arrives meanwhile
 * has its frame below them.
 *
 * RFEMU_SIGRETURN=1 leaves every fault to rt_sigreturn (measurements).
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "device.h"

/* Faults left to rt_sigreturn (rfemu_dev_stats: trap_sigreturns). */
static _Atomic uint64_t n_sigreturns;

#if DEV_RESUME_DIRECT
#ifndef ARCH_SHSTK_STATUS
#define ARCH_SHSTK_STATUS	0x5005	/* arch/x86/include/uapi/asm/prctl.h */
#endif
#define ARCH_SHSTK_SHSTK	(1ULL << 0)
#ifndef SS_AUTODISARM
#define SS_AUTODISARM		(1U << 31)	/* include/uapi/linux/signal.h */
#endif

/* The restorer the kernel returns our handler to; NULL: never resume directly. */
static const void *kernel_restorer;

/*
 * dev_resume_direct(gregs, xsave): the interrupted context, restored; returns
 * only if the frame is not one it knows (then nothing was changed).
 * gregs is the ucontext's REG_R8..REG_CSGSFS; 464 and 472 are the
 * offsets of _fpx_sw_bytes' magic1 and xfeatures in the XSAVE area.
 */
void dev_resume_direct(const void *gregs, void *xsave) __attribute__((visibility("hidden")));
__asm__(
	".pushsection .text\n"
	".globl dev_resume_direct\n"
	".hidden dev_resume_direct\n"
	".type dev_resume_direct, @function\n"
	"dev_resume_direct:\n"
	"	cmpl	$0x46505853, 464(%rsi)\n"	/* FP_XSTATE_MAGIC1 */
	"	jne	1f\n"
	"	movq	18*8(%rdi), %rax\n"		/* REG_CSGSFS: CS in its low 16 bits */
	"	movw	%cs, %dx\n"
	"	cmpw	%ax, %dx\n"
	"	jne	1f\n"
	"	movl	472(%rsi), %eax\n"
	"	movl	476(%rsi), %edx\n"
	"	xrstor64 (%rsi)\n"
	"	movq	15*8(%rdi), %rsi\n"		/* REG_RSP */
	"	subq	$(128 + 20 * 8), %rsi\n"
	"	.irp	r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14\n"	/* REG_R8..REG_RCX */
	"	movq	\\r*8(%rdi), %rax\n"
	"	movq	%rax, \\r*8(%rsi)\n"
	"	.endr\n"
	"	movq	16*8(%rdi), %rax\n"		/* IRETQ's frame: RIP */
	"	movq	%rax, 15*8(%rsi)\n"
	"	xorl	%eax, %eax\n"
	"	movw	%cs, %ax\n"
	"	movq	%rax, 16*8(%rsi)\n"
	"	movq	17*8(%rdi), %rax\n"		/* RFLAGS */
	"	movq	%rax, 17*8(%rsi)\n"
	"	movq	15*8(%rdi), %rax\n"		/* RSP */
	"	movq	%rax, 18*8(%rsi)\n"
	"	xorl	%eax, %eax\n"
	"	movw	%ss, %ax\n"
	"	movq	%rax, 19*8(%rsi)\n"
	"	movq	%rsi, %rsp\n"
	"	popq	%r8\n	popq	%r9\n	popq	%r10\n	popq	%r11\n"
	"	popq	%r12\n	popq	%r13\n	popq	%r14\n	popq	%r15\n"
	"	popq	%rdi\n	popq	%rsi\n	popq	%rbp\n	popq	%rbx\n"
	"	popq	%rdx\n	popq	%rax\n	popq	%rcx\n"
	"	iretq\n"
	"1:	ret\n"
	".size dev_resume_direct, . - dev_resume_direct\n"
	".popsection\n");

void dev_resume_init(void)
{
	const char *s = getenv("RFEMU_SIGRETURN");
	unsigned long long shstk = 0;
	struct sigaction cur;

	kernel_restorer = NULL;
	if ((s && *s && atoi(s) != 0) ||
	    (syscall(SYS_arch_prctl, ARCH_SHSTK_STATUS, &shstk) == 0 && (shstk & ARCH_SHSTK_SHSTK)))
		return;
	if (emu_real_sigaction(SIGSEGV, NULL, &cur) == 0)
		kernel_restorer = (const void *)cur.sa_restorer;
}
#else
void dev_resume_init(void)
{
}
#endif

void dev_resume(void *uc, const void *ret)
{
#if DEV_RESUME_DIRECT
	ucontext_t *u = uc;

	if (kernel_restorer && ret == kernel_restorer && u->uc_mcontext.fpregs &&
	    !(u->uc_stack.ss_flags & SS_AUTODISARM))
		dev_resume_direct(u->uc_mcontext.gregs, u->uc_mcontext.fpregs);
#else
	(void)uc;
	(void)ret;
#endif
	atomic_fetch_add_explicit(&n_sigreturns, 1, memory_order_relaxed);
}

uint64_t dev_resume_sigreturns(void)
{
	return atomic_load_explicit(&n_sigreturns, memory_order_relaxed);
}
