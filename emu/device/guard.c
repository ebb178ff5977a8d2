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
 * The guard does what the kernel's copy_from_user()/copy_to_user() do with
 * their exception tables: the access runs as a plain memcpy (or atomic), and
 * a fault inside it resumes at a recovery point that reports failure.  Here
 * the recovery point is a sigsetjmp() taken before the access, and a
 * SIGSEGV/SIGBUS handler jumps back to it when - and only when - the
 * faulting thread has a guard armed.  The fast path therefore costs one
 * sigsetjmp without a signal mask (no syscall) per access, tens of
 * nanoseconds; process_vm_readv/writev on our own pid, the other way to get
 * EFAULT instead of a signal, costs a syscall (about a microsecond) per
 * copy and cannot do atomics.
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

#include "device.h"

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

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env = guard_env;
	const struct sigaction *p = &prev_act[sig_slot(sig)];
	volatile char here;

	if (env) {
		guard_env = NULL;
		siglongjmp(*env, 1);
	}
	/* a doorbell store to a page protected while the engine sleeps */
	if (sig == SIGSEGV && si && si->si_code == SEGV_ACCERR &&
	    dev_trap_fault(si->si_addr))
		return;
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
		signal(sig, SIG_DFL);
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
	if (sigaction(sig, &a, &old) == 0 && !ours(&old))
		prev_act[sig_slot(sig)] = old;
}

void dev_guard_init(void)
{
	if (installed)
		return;
	install(SIGSEGV);
	install(SIGBUS);
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

		if (sigaction(sigs[i], NULL, &cur) == 0 && !ours(&cur))
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
		if (sigaction(sigs[i], NULL, &cur) == 0 && ours(&cur))
			sigaction(sigs[i], &prev_act[sig_slot(sigs[i])], NULL);
	}
	installed = false;
}

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
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	guard_env = NULL;
	return true;
}

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
