/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_doorbell_assist.c - doorbell stores that the fault handler writes
 * itself (emu/device/trap.c, store.c) and the device pass that then runs in
 * the storing thread (doorbell_assist() in engine.c).
 *
 * As in test_trap.c the engine looks for doorbells only rarely and the
 * tests' polls do not run the device: a doorbell completes quickly only if
 * it is executed where it faulted.  The page stays read-only throughout, no
 * mprotect() is made for it, and the decoder gives each store form the
 * bytes and length the CPU would have stored.
 */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <ucontext.h>

#include <infiniband/mlx5dv.h>

#include "trap_test.h"
#include "wire_test.h"
#include "device/device.h"

static struct dt t;

/* Elsewhere every doorbell store is let through: test_trap.c's path. */
#define NEEDS_DECODER()								\
	do {									\
		if (!DEV_STORE_DECODER)						\
			cr_skip_test("no store decoder on this architecture");	\
	} while (0)

/* hot_ms: RFEMU_HOT_MS, the engine's window of naps after its last work */
static void setup_with(const char *hot_ms)
{
	/*
	 * A thread whose handlers run on a small alternate stack leaves the
	 * pass to the engine (not_on_a_small_alternate_stack below); ASan
	 * gives every thread one.  This thread rings with none.
	 */
	stack_t none = { .ss_flags = SS_DISABLE };

	if (!DEV_STORE_DECODER)
		return;
	sigaltstack(&none, NULL);
	setenv("RFEMU_POLL_ASSIST_US", "0", 1);
	setenv("RFEMU_HOT_MS", hot_ms, 1);
	setenv("RFEMU_SPIN_US", "0", 1);
	setenv("RFEMU_IDLE_MAX_US", "60000000", 1);
	dt_setup(&t);
}

static void setup(void)
{
	setup_with("0");
}

static void teardown(void)
{
	if (DEV_STORE_DECODER)
		dt_teardown(&t);
}

TestSuite(dev_doorbell_assist, .init = setup, .fini = teardown, .timeout = 60);

/* n signaled 8-byte RDMA writes from QP 0 in one post (one doorbell), flags added. */
static void post_writes(int n, unsigned flags)
{
	struct ibv_sge s[32];
	struct ibv_send_wr wr[32];

	cr_assert_leq(n, 32);
	for (int i = 0; i < n; i++) {
		s[i] = (struct ibv_sge){ (uintptr_t)t.buf[0] + 8 * i, 8, t.mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = (uint64_t)i, .sg_list = &s[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED | flags,
			.wr.rdma = { (uintptr_t)t.buf[1] + 8 * i, t.mr[1]->rkey },
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	}
	dt_post(t.qp[0], wr);
}

static void write8(unsigned flags, uint8_t v)
{
	struct ibv_wc wc;

	t.buf[0][0] = v;
	post_writes(1, flags);
	cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 1000), 1, "the doorbell was not executed within 1 s");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(t.buf[1][0], v);
}

/*
 * An idle engine has protected the doorbell page.  Each later doorbell -
 * an 8-byte one and a BlueFlame copy of an inline WQE - faults, is written
 * by the handler and executed in this thread: the page is still read-only
 * afterwards, and not one mprotect() was made for them.
 */
Test(dev_doorbell_assist, the_storing_thread_executes_the_doorbell)
{
	struct rfemu_dev_stats s0, s1;
	char perms[5];
	void *reg;

	NEEDS_DECODER();
	reg = tt_bf_reg(t.qp[0]);
	write8(0, 1);
	usleep(300000);		/* long idle: the engine sleeps for seconds */
	tt_page_perms(reg, perms);
	cr_assert_str_eq(perms, "r--s", "the idle engine left the doorbell page %s", perms);
	s0 = wt_stats();
	for (int i = 0; i < 10; i++)
		write8(i & 1 ? IBV_SEND_INLINE : 0, (uint8_t)(0x40 + i));
	s1 = wt_stats();
	tt_page_perms(reg, perms);
	cr_assert_str_eq(perms, "r--s", "after the doorbells the page is %s", perms);
	cr_assert_eq(s1.trap_mprotects, s0.trap_mprotects, "%llu mprotect() calls for 10 doorbells",
		     (unsigned long long)(s1.trap_mprotects - s0.trap_mprotects));
	cr_assert_geq(s1.trap_stores - s0.trap_stores, 10, "%llu stores written for 10 doorbells",
		      (unsigned long long)(s1.trap_stores - s0.trap_stores));
	/* a doorbell that finds the engine in a pass (its 4 ms tick) is left to it */
	cr_assert_geq(s1.doorbell_assists - s0.doorbell_assists, 5,
		      "%llu passes in the storing thread for 10 doorbells",
		      (unsigned long long)(s1.doorbell_assists - s0.doorbell_assists));
	cr_assert_eq(s1.trap_faults - s0.trap_faults, s1.trap_stores - s0.trap_stores,
		     "a doorbell fault was let through");
}

/*
 * A doorbell that finds the device's lock taken by another thread (the
 * engine in a pass, a command) waits for it, asleep, and runs the pass
 * itself: a holder that lost its CPU to the busy storing thread gets it
 * back that way, where a doorbell handed to the engine waited for the
 * engine's CPU (1-4 ms on a 2-core VM).  Here the lock is held for 1 ms
 * from another thread; each doorbell is still executed in the thread
 * that rang it.
 */
typedef void lock_fn(void);

static lock_fn *lock_take, *lock_give;
static atomic_int lock_state;	/* 1: the holder has it, 2: the test is done */

static void *hold_lock(void *arg)
{
	(void)arg;
	while (atomic_load(&lock_state) != 2) {
		lock_take();
		atomic_store(&lock_state, 1);
		usleep(1000);
		lock_give();
		while (atomic_load(&lock_state) == 1)
			usleep(100);
	}
	return NULL;
}

Test(dev_doorbell_assist, a_taken_lock_is_waited_for)
{
	struct rfemu_dev_stats s0, s1;
	pthread_t th;

	NEEDS_DECODER();
	lock_take = (lock_fn *)dlsym(RTLD_DEFAULT, "emu_lock_acquire");
	lock_give = (lock_fn *)dlsym(RTLD_DEFAULT, "emu_lock_release");
	cr_assert(lock_take && lock_give, "librfemu.so has no emu_lock_acquire()");
	write8(0, 1);
	usleep(300000);		/* long idle: the engine sleeps for seconds */
	cr_assert_eq(pthread_create(&th, NULL, hold_lock, NULL), 0);
	s0 = wt_stats();
	for (int i = 0; i < 10; i++) {
		while (atomic_load(&lock_state) != 1)
			usleep(50);
		write8(0, (uint8_t)(0x60 + i));
		atomic_store(&lock_state, 0);
	}
	atomic_store(&lock_state, 2);
	pthread_join(th, NULL);
	s1 = wt_stats();
	cr_assert_geq(s1.doorbell_assists - s0.doorbell_assists, 8,
		      "%llu of 10 doorbells that found the lock taken ran in the storing thread",
		      (unsigned long long)(s1.doorbell_assists - s0.doorbell_assists));
}

/* Post a stream of 16 WRITEs in one doorbell and take their completions. */
static void stream16(void)
{
	struct ibv_wc wc[16];
	int got = 0;

	post_writes(16, 0);
	while (got < 16) {
		int n = dt_poll(t.cq[0], wc, 16 - got, 1000);

		cr_assert_gt(n, 0, "the stream did not complete");
		for (int i = 0; i < n; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		got += n;
	}
}

/*
 * A doorbell that brings a stream of WQEs is handed to the engine only if
 * it can spin and take the doorbells that follow (on a CPU of its own,
 * which a loaded host does not give it: not tested here).  One that may
 * not spin (RFEMU_SPIN_US=0, as in this suite) would nap, protect the pages
 * again at once, and leave the next doorbell to fault all the same: the
 * stream stays in the storing thread, with no mprotect() for it (two of
 * them, 24 us, on a 2-vCPU AMD EPYC VM).
 */
Test(dev_doorbell_assist, a_stream_stays_when_the_engine_cannot_spin)
{
	struct rfemu_dev_stats s0, s1;
	char perms[5];
	void *reg;

	NEEDS_DECODER();
	reg = tt_bf_reg(t.qp[0]);
	write8(0, 1);
	usleep(300000);
	s0 = wt_stats();
	stream16();
	s1 = wt_stats();
	cr_assert_eq(s1.doorbell_assists - s0.doorbell_assists, 1);
	cr_assert_eq(s1.trap_mprotects, s0.trap_mprotects, "%llu mprotect() calls for a stream",
		     (unsigned long long)(s1.trap_mprotects - s0.trap_mprotects));
	tt_page_perms(reg, perms);
	cr_assert_str_eq(perms, "r--s", "after the stream the page is %s", perms);
}

/*
 * With a hot window (the default's 100 ms), an engine whose doorbells the
 * ringing thread executes and hands none over does not nap through it: it
 * sleeps, the trap armed, as long as it would once the window is over.
 * A stream (the engine's work) opens the window; then 200 doorbells 200 us
 * apart, each executed in its fault: the engine ran about one pass per
 * 4 ms sleep (17-25 passes in 65-80 ms), where it napped 50 us at a time
 * before (293 passes in 96 ms, each taking a busy-polling thread's CPU).
 */
static void setup_hot(void)
{
	setup_with("100");
}

Test(dev_doorbell_assist_hot, the_engine_sleeps_while_the_faults_keep_up, .init = setup_hot,
     .fini = teardown, .timeout = 60)
{
	struct rfemu_dev_stats s0, s1;
	struct timespec a, b;
	unsigned long long passes, assists;
	struct ibv_wc wc[16];
	int got = 0;
	double ms;

	NEEDS_DECODER();
	write8(0, 1);
	post_writes(16, 0);
	while (got < 16) {
		int n = dt_poll(t.cq[0], wc, 16 - got, 1000);

		cr_assert_gt(n, 0, "the stream did not complete");
		got += n;
	}
	s0 = wt_stats();
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 200; i++) {
		write8(0, (uint8_t)i);
		usleep(200);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	s1 = wt_stats();
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	passes = s1.engine_passes - s0.engine_passes;
	assists = s1.doorbell_assists - s0.doorbell_assists;
	/* a doorbell that finds the engine in a pass is left to it */
	cr_assert_geq(assists, 180, "%llu of 200 doorbells executed in their faults", assists);
	cr_assert_leq((double)passes, ms + 20, "the engine ran %llu passes in %.1f ms", passes, ms);
}

/*
 * A doorbell's pass looks at the sockets at most every 50 us (a system
 * call, and the engine wakes for a packet by itself): 100 doorbells rung
 * back to back (2-3 ms here), each executed in its fault, looked at them
 * once per 50 us at most, besides the engine's own passes; each of them
 * looked before.
 */
Test(dev_doorbell_assist, the_sockets_are_looked_at_now_and_then)
{
	struct rfemu_dev_stats s0, s1;
	struct timespec a, b;
	unsigned long long polls, assists, passes;
	double us;

	NEEDS_DECODER();
	write8(0, 1);
	usleep(300000);
	s0 = wt_stats();
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 100; i++)
		write8(0, (uint8_t)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	s1 = wt_stats();
	us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
	polls = s1.socket_polls - s0.socket_polls;
	assists = s1.doorbell_assists - s0.doorbell_assists;
	passes = s1.engine_passes - s0.engine_passes;
	cr_assert_geq(assists, 90, "%llu of 100 doorbells executed in their faults", assists);
	cr_assert_leq((double)polls, us / 50 + 1 + (double)passes,
		      "%llu looks at the sockets in %.0f us (%llu doorbells' passes, %llu the engine's)",
		      polls, us, assists, passes);
}

/*
 * A thread whose signals run on a small alternate stack (Go and Rust give
 * each thread one) does not run the pass there: the engine is kicked, and
 * the doorbell completes all the same.
 */
static void *post_on_small_altstack(void *arg)
{
	static uint8_t stack[32 << 10];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) };

	(void)arg;
	if (sigaltstack(&ss, NULL))
		return (void *)1;
	post_writes(1, 0);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return NULL;
}

Test(dev_doorbell_assist, not_on_a_small_alternate_stack)
{
	struct rfemu_dev_stats s0, s1;

	NEEDS_DECODER();
	write8(0, 1);
	usleep(300000);
	s0 = wt_stats();
	for (int i = 0; i < 5; i++) {
		struct ibv_wc wc;
		pthread_t th;
		void *ret;

		usleep(50000);
		t.buf[0][0] = (uint8_t)(0x60 + i);
		cr_assert_eq(pthread_create(&th, NULL, post_on_small_altstack, NULL), 0);
		pthread_join(th, &ret);
		cr_assert_null(ret, "sigaltstack() failed");
		cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 1000), 1);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(t.buf[1][0], 0x60 + i);
	}
	s1 = wt_stats();
	cr_assert_geq(s1.trap_stores - s0.trap_stores, 5);
	cr_assert_eq(s1.doorbell_assists, s0.doorbell_assists, "%llu passes ran on a 32 KiB signal stack",
		     (unsigned long long)(s1.doorbell_assists - s0.doorbell_assists));
}

/* ---- leaving the fault (resume.c) ----------------------------------------- */

#if defined(__x86_64__)
/*
 * probe(db, in, out): loads in's general and XMM registers, fills its red
 * zone, sets CF, stores RAX to the doorbell db, and writes what every one
 * of them holds after the store to out.
 */
struct probe_in {
	uint64_t	g[14];		/* rax rbx rcx rdx rsi rbp r8-r15 */
	uint64_t	x[32];		/* xmm0-15 */
};
struct probe_out {
	uint64_t	g[14];
	uint64_t	flags, rdi;
	uint64_t	x[32];
	uint64_t	red[16];	/* the 128 bytes under RSP, lowest first */
};
#define PROBE_RED	0x5a5a5a5a00000000ULL	/* word -8*i of the red zone: PROBE_RED + i - 1 */

void probe(volatile void *db, const struct probe_in *in, struct probe_out *out);
__asm__(
	".pushsection .text\n"
	".type probe, @function\n"
	"probe:\n"
	"	pushq %rbx\n pushq %rbp\n pushq %r12\n pushq %r13\n pushq %r14\n pushq %r15\n"
	"	pushq %rdx\n"
	"	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movdqu 112+\\i*16(%rsi), %xmm\\i\n"
	"	.endr\n"
	"	movabsq $0x5a5a5a5a00000000, %rax\n"
	"	.irp i, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16\n"
	"	movq %rax, -\\i*8(%rsp)\n"
	"	addq $1, %rax\n"
	"	.endr\n"
	"	movq 0(%rsi), %rax\n movq 8(%rsi), %rbx\n movq 16(%rsi), %rcx\n movq 24(%rsi), %rdx\n"
	"	movq 40(%rsi), %rbp\n movq 48(%rsi), %r8\n movq 56(%rsi), %r9\n movq 64(%rsi), %r10\n"
	"	movq 72(%rsi), %r11\n movq 80(%rsi), %r12\n movq 88(%rsi), %r13\n movq 96(%rsi), %r14\n"
	"	movq 104(%rsi), %r15\n movq 32(%rsi), %rsi\n"
	"	stc\n"
	"	movq %rax, (%rdi)\n"			/* the doorbell */
	"	leaq -128(%rsp), %rsp\n"		/* past the red zone, flags kept */
	"	pushfq\n pushq %rsi\n"
	"	movq 128+16(%rsp), %rsi\n"		/* out */
	"	movq %rax, 0(%rsi)\n movq %rbx, 8(%rsi)\n movq %rcx, 16(%rsi)\n movq %rdx, 24(%rsi)\n"
	"	popq %rax\n movq %rax, 32(%rsi)\n"
	"	movq %rbp, 40(%rsi)\n movq %r8, 48(%rsi)\n movq %r9, 56(%rsi)\n movq %r10, 64(%rsi)\n"
	"	movq %r11, 72(%rsi)\n movq %r12, 80(%rsi)\n movq %r13, 88(%rsi)\n movq %r14, 96(%rsi)\n"
	"	movq %r15, 104(%rsi)\n"
	"	popq %rax\n movq %rax, 112(%rsi)\n movq %rdi, 120(%rsi)\n"
	"	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movdqu %xmm\\i, 128+\\i*16(%rsi)\n"
	"	.endr\n"
	"	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
	"	movq \\i*8(%rsp), %rax\n movq %rax, 384+\\i*8(%rsi)\n"
	"	.endr\n"
	"	leaq 128(%rsp), %rsp\n"
	"	popq %rdx\n popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbp\n popq %rbx\n"
	"	ret\n"
	".size probe, . - probe\n"
	".popsection\n");

/* One probe of the doorbell page at reg, idle before; the sigreturns it cost. */
static uint64_t probe_once(void *reg, unsigned seed)
{
	struct probe_in in;
	struct probe_out out;
	struct rfemu_dev_stats s0, s1;

	for (unsigned i = 0; i < 14; i++)
		in.g[i] = 0x1111111111111111ULL * (i + 1) ^ seed;
	for (unsigned i = 0; i < 32; i++)
		in.x[i] = 0x0101010101010101ULL * (i + 3) ^ ((uint64_t)seed << 32);
	memset(&out, 0, sizeof(out));
	s0 = wt_stats();
	probe(reg, &in, &out);
	s1 = wt_stats();
	cr_assert_eq(s1.trap_stores - s0.trap_stores, 1, "the probe's store did not fault");
	for (unsigned i = 0; i < 14; i++)
		cr_assert_eq(out.g[i], in.g[i], "general register %u: %#llx, was %#llx", i,
			     (unsigned long long)out.g[i], (unsigned long long)in.g[i]);
	cr_assert_eq(out.rdi, (uint64_t)(uintptr_t)reg, "rdi changed");
	cr_assert(out.flags & 1, "CF cleared: flags %#llx", (unsigned long long)out.flags);
	for (unsigned i = 0; i < 32; i++)
		cr_assert_eq(out.x[i], in.x[i], "xmm%u changed", i / 2);
	for (unsigned j = 0; j < 16; j++)
		cr_assert_eq(out.red[j], PROBE_RED + 15 - j, "red zone word %u below RSP: %#llx", 16 - j,
			     (unsigned long long)out.red[j]);
	return s1.trap_sigreturns - s0.trap_sigreturns;
}

/*
 * A doorbell fault returns to the thread with every register, flag and
 * XMM register as it was and the red zone untouched, on the thread's own
 * stack and on an alternate one; on x86-64 without rt_sigreturn, but from
 * an alternate stack that SS_AUTODISARM disarmed until then.
 */
Test(dev_doorbell_assist, a_fault_resumes_the_thread_as_it_was)
{
	static uint8_t alt[256 << 10];
	stack_t on = { .ss_sp = alt, .ss_size = sizeof(alt) }, off = { .ss_flags = SS_DISABLE };
	void *reg;

	NEEDS_DECODER();
	reg = tt_bf_reg(t.qp[0]);
	write8(0, 1);
	usleep(300000);
	cr_assert_eq(probe_once(reg, 1), !DEV_RESUME_DIRECT, "rt_sigreturns, on the thread's stack");
	cr_assert_eq(sigaltstack(&on, NULL), 0);
	cr_assert_eq(probe_once(reg, 2), !DEV_RESUME_DIRECT, "rt_sigreturns, on an alternate stack");
	on.ss_flags = (int)(1U << 31);	/* SS_AUTODISARM */
	if (sigaltstack(&on, NULL) == 0)
		cr_assert_eq(probe_once(reg, 3), 1, "rt_sigreturns, on an SS_AUTODISARM stack");
	cr_assert_eq(sigaltstack(&off, NULL), 0);
	write8(0, 2);		/* the QP still works */
}

/* Ten doorbells in a row, each executed in its fault: none left through rt_sigreturn. */
Test(dev_doorbell_assist, doorbell_faults_leave_without_sigreturn)
{
	struct rfemu_dev_stats s0, s1;

	NEEDS_DECODER();
	if (!DEV_RESUME_DIRECT)
		cr_skip_test("the kernel resumes every fault on this architecture or build");
	write8(0, 1);
	usleep(300000);
	s0 = wt_stats();
	for (int i = 0; i < 10; i++)
		write8(i & 1 ? IBV_SEND_INLINE : 0, (uint8_t)(0x40 + i));
	s1 = wt_stats();
	cr_assert_geq(s1.trap_stores - s0.trap_stores, 10);
	cr_assert_eq(s1.trap_sigreturns, s0.trap_sigreturns, "%llu of %llu faults left through rt_sigreturn",
		     (unsigned long long)(s1.trap_sigreturns - s0.trap_sigreturns),
		     (unsigned long long)(s1.trap_faults - s0.trap_faults));
}
#endif

/* ---- the decoder (store.c), on stores the CPU really faulted on ---------- */

#if defined(__x86_64__)
#include <asm/prctl.h>

typedef bool decode_fn(const void *uc, struct dev_store *st);

static decode_fn *decode;	/* dev_store_decode() of the preloaded library */
static uint8_t *hole;			/* a read-only page of the test's own */
static struct dev_store seen;
static bool decoded;
static sigjmp_buf undecoded;

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	if ((uint8_t *)si->si_addr < hole || (uint8_t *)si->si_addr >= hole + 4096 ||
	    !decode(ucv, &seen))
		siglongjmp(undecoded, 1);
	decoded = true;
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] += seen.insn_len;
}

static void setup_decoder(void)
{
	struct sigaction a = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

	decode = (decode_fn *)dlsym(RTLD_DEFAULT, "dev_store_decode");
	cr_assert_not_null(decode, "librfemu.so has no dev_store_decode()");
	hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(hole, MAP_FAILED);
	sigemptyset(&a.sa_mask);
	/* through the interposer: the device's handler chains faults not its own to us */
	cr_assert_eq(sigaction(SIGSEGV, &a, NULL), 0);
}

static void teardown_decoder(void)
{
	munmap(hole, 4096);
}

TestSuite(dev_store_decode, .init = setup_decoder, .fini = teardown_decoder, .timeout = 30);

/* The store's bytes as the decoder saw them, and that the next instruction ran. */
static void expect(const void *want, unsigned len, const char *what)
{
	cr_assert(decoded, "%s: not decoded", what);
	cr_assert_eq(seen.len, len, "%s: %u bytes, not %u", what, seen.len, len);
	cr_assert_arr_eq(seen.data, want, len, "%s: other bytes than stored", what);
	decoded = false;
}

#define STORE(asm_text, ...) do {						\
		if (sigsetjmp(undecoded, 1))					\
			cr_assert_fail("not decoded: %s", asm_text);		\
		__asm__ volatile(asm_text : : __VA_ARGS__ :			\
				 "memory", "r9", "xmm0", "xmm1", "xmm2", "xmm3",	\
				 "xmm11", "xmm12");				\
	} while (0)

Test(dev_store_decode, general_registers_and_immediates)
{
	uint64_t v = 0x1122334455667788ull;
	uint8_t *p = hole + 64;

	STORE("movq %0, (%1)", "r"(v), "r"(p));
	expect(&v, 8, "movq r64");
	STORE("movl %k0, 4(%1)", "r"(v), "r"(p));
	expect(&v, 4, "movl r32, disp8");
	STORE("movw %w0, 0x100(%1)", "r"(v), "r"(p));
	expect(&v, 2, "movw r16, disp32");
	STORE("movb %b0, (%1,%2,8)", "q"(v), "r"(p), "r"(1L));
	expect(&v, 1, "movb r8, SIB");
	STORE("movb %%ah, (%1)", "a"(v), "D"(p));
	expect((const uint8_t *)&v + 1, 1, "movb ah");
	STORE("movq %0, %%r9; movq %%r9, (%1)", "r"(v), "r"(p));
	expect(&v, 8, "movq r9 (REX.R)");
	STORE("movnti %0, 8(%1)", "r"(v), "r"(p));
	expect(&v, 8, "movnti");
	{
		int64_t imm = -2;

		STORE("movq $-2, 16(%0)", "r"(p));
		expect(&imm, 8, "movq imm32 sign-extended");
		STORE("movl $0x01020304, (%0)", "r"(p));
		imm = 0x01020304;
		expect(&imm, 4, "movl imm32");
		STORE("movb $0x7f, (%0)", "r"(p));
		imm = 0x7f;
		expect(&imm, 1, "movb imm8");
	}
}

Test(dev_store_decode, sse_stores)
{
	static const uint8_t x[16] __attribute__((aligned(16))) = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	uint8_t *p = hole + 128;

	STORE("movdqa (%0), %%xmm3; movups %%xmm3, (%1)", "r"(x), "r"(p));
	expect(x, 16, "movups");
	STORE("movdqa (%0), %%xmm3; movaps %%xmm3, (%1)", "r"(x), "r"(p));
	expect(x, 16, "movaps");
	STORE("movdqa (%0), %%xmm12; movdqa %%xmm12, 16(%1)", "r"(x), "r"(p));
	expect(x, 16, "movdqa xmm12 (REX.R)");
	STORE("movdqa (%0), %%xmm1; movdqu %%xmm1, 3(%1)", "r"(x), "r"(p));
	expect(x, 16, "movdqu");
	STORE("movdqa (%0), %%xmm1; movntdq %%xmm1, (%1)", "r"(x), "r"(p));
	expect(x, 16, "movntdq");
	STORE("movdqa (%0), %%xmm1; movq %%xmm1, (%1)", "r"(x), "r"(p));
	expect(x, 8, "movq xmm -> m64");
	STORE("movdqa (%0), %%xmm1; movd %%xmm1, (%1)", "r"(x), "r"(p));
	expect(x, 4, "movd xmm -> m32");
	STORE("movdqa (%0), %%xmm1; movss %%xmm1, (%1)", "r"(x), "r"(p));
	expect(x, 4, "movss");
	STORE("movdqa (%0), %%xmm1; movsd %%xmm1, (%1)", "r"(x), "r"(p));
	expect(x, 8, "movsd");
}

Test(dev_store_decode, avx_stores)
{
	static const uint8_t y[32] __attribute__((aligned(32))) = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
	uint8_t *p = hole + 256;

	if (!__builtin_cpu_supports("avx"))
		cr_skip_test("no AVX on this CPU");
	STORE("vmovdqu (%0), %%xmm2; vmovdqu %%xmm2, (%1)", "r"(y), "r"(p));
	expect(y, 16, "vmovdqu xmm");
	STORE("vmovdqu (%0), %%ymm2; vmovdqu %%ymm2, (%1)", "r"(y), "r"(p));
	expect(y, 32, "vmovdqu ymm");
	STORE("vmovdqa (%0), %%ymm11; vmovdqa %%ymm11, 32(%1)", "r"(y), "r"(p));
	expect(y, 32, "vmovdqa ymm11 (C4 VEX)");
	STORE("vmovups (%0), %%ymm0; vmovntps %%ymm0, (%1)", "r"(y), "r"(p));
	expect(y, 32, "vmovntps ymm");
	__asm__ volatile("vzeroupper");
}

/*
 * A copy of loads and stores (a BlueFlame copy: a 64-byte block as four
 * 16-byte loads from the WQE, each stored into the register) faults once:
 * the handler goes on with the copy's next instructions, loads into the
 * registers and stores written, until one of another kind.
 */
typedef int next_fn(void *uc, struct dev_store *st, uintptr_t *ea);

static next_fn *next_insn;
static uint8_t shadow[4096];
static unsigned copy_faults;

static void on_copy_fault(int sig, siginfo_t *si, void *ucv)
{
	struct dev_store st;
	uintptr_t ea;
	int step;

	(void)sig;
	if ((uint8_t *)si->si_addr < hole || (uint8_t *)si->si_addr >= hole + 4096 ||
	    !decode(ucv, &st))
		siglongjmp(undecoded, 1);
	copy_faults++;
	memcpy(shadow + ((uint8_t *)si->si_addr - hole), st.data, st.len);
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] += st.insn_len;
	while ((step = next_insn(ucv, &st, &ea)) != 0) {
		if (step == 2)
			continue;	/* a load, done */
		if (ea < (uintptr_t)hole || ea + st.len > (uintptr_t)hole + 4096)
			break;
		memcpy(shadow + (ea - (uintptr_t)hole), st.data, st.len);
		((ucontext_t *)ucv)->uc_mcontext.gregs[REG_RIP] += st.insn_len;
	}
}

Test(dev_store_decode, a_copy_faults_once)
{
	static const uint8_t src[64] __attribute__((aligned(16))) = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
		21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
		41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
		61, 62, 63, 64 };
	struct sigaction a = { .sa_sigaction = on_copy_fault, .sa_flags = SA_SIGINFO };
	uint8_t *p = hole + 1024;

	next_insn = (next_fn *)dlsym(RTLD_DEFAULT, "dev_store_next");
	cr_assert_not_null(next_insn);
	sigemptyset(&a.sa_mask);
	cr_assert_eq(sigaction(SIGSEGV, &a, NULL), 0);
	memset(shadow, 0, sizeof(shadow));
	STORE("movdqa (%0), %%xmm0; movaps %%xmm0, (%1);"
	      "movdqa 16(%0), %%xmm1; movaps %%xmm1, 16(%1);"
	      "movdqa 32(%0), %%xmm2; movaps %%xmm2, 32(%1);"
	      "movdqa 48(%0), %%xmm3; movaps %%xmm3, 48(%1)", "r"(src), "r"(p));
	cr_assert_eq(copy_faults, 1, "%u faults for one 64-byte copy", copy_faults);
	cr_assert_arr_eq(shadow + 1024, src, 64);
	/* 8-byte words through a general register: the same */
	copy_faults = 0;
	memset(shadow, 0, sizeof(shadow));
	STORE("movq (%0), %%r9; movq %%r9, (%1); movq 8(%0), %%r9; movq %%r9, 8(%1)",
	      "r"(src), "r"(p));
	cr_assert_eq(copy_faults, 1);
	cr_assert_arr_eq(shadow + 1024, src, 16);
	/* an instruction of another kind ends it: the next store faults anew */
	copy_faults = 0;
	STORE("movdqa (%0), %%xmm0; movaps %%xmm0, (%1); pxor %%xmm1, %%xmm1;"
	      "movaps %%xmm1, 16(%1)", "r"(src), "r"(p));
	cr_assert_eq(copy_faults, 2);
	cr_assert_arr_eq(shadow + 1024, src, 16);
	cr_assert_eq(shadow[1024 + 16], 0);
	/* a misaligned movaps is the CPU's to fault on, not written */
	copy_faults = 0;
	if (!sigsetjmp(undecoded, 1))
		__asm__ volatile("movaps %%xmm0, (%1); movaps %%xmm0, 8(%1)"
				 : : "r"(src), "r"(p) : "memory");
	cr_assert_eq(copy_faults, 1, "the misaligned store was written");
}

/* AVX-512 (UCX's BlueFlame copy is one 64-byte store from zmm16). */
Test(dev_store_decode, avx512_stores)
{
	static uint8_t z[64] __attribute__((aligned(64)));
	uint8_t *p = hole + 1024;

	if (!__builtin_cpu_supports("avx512f"))
		cr_skip_test("no AVX-512 on this CPU");
	for (unsigned i = 0; i < sizeof(z); i++)
		z[i] = (uint8_t)(0x80 + i);
	STORE("vmovdqu64 (%0), %%zmm16; vmovdqu64 %%zmm16, (%1)", "r"(z), "r"(p));
	expect(z, 64, "vmovdqu64 zmm16 (EVEX R')");
	STORE("vmovdqu64 (%0), %%zmm3; vmovdqa64 %%zmm3, 64(%1)", "r"(z), "r"(p));
	expect(z, 64, "vmovdqa64 zmm3, disp8 scaled");
	STORE("vmovdqu64 (%0), %%ymm17; vmovdqu64 %%ymm17, (%1)", "r"(z), "r"(p));
	expect(z, 32, "vmovdqu64 ymm17");
	__asm__ volatile("vzeroupper");
}

/*
 * The vector registers' upper parts are read from the signal frame without
 * a CPUID in the handler: every hypervisor intercepts CPUID, and on the VM
 * this was found on each one cost 10-25 us, most of UCX's doorbell.  With
 * CPUID faulting on (ARCH_SET_CPUID, where the CPU or hypervisor offers
 * it), a CPUID in the handler would fault inside it.
 */
Test(dev_store_decode, vector_stores_need_no_cpuid)
{
	static uint8_t z[64] __attribute__((aligned(64)));
	uint8_t *p = hole + 2048;

	if (!__builtin_cpu_supports("avx"))
		cr_skip_test("no AVX on this CPU");
	if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0)
		cr_skip_test("no CPUID faulting here (ARCH_SET_CPUID)");
	for (unsigned i = 0; i < sizeof(z); i++)
		z[i] = (uint8_t)(0x40 + i);
	STORE("vmovdqu (%0), %%ymm2; vmovdqu %%ymm2, (%1)", "r"(z), "r"(p));
	expect(z, 32, "vmovdqu ymm, CPUID faulting");
	if (__builtin_cpu_supports("avx512f")) {
		STORE("vmovdqu64 (%0), %%zmm16; vmovdqu64 %%zmm16, (%1)", "r"(z), "r"(p));
		expect(z, 64, "vmovdqu64 zmm16, CPUID faulting");
	}
	__asm__ volatile("vzeroupper");
	syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
}

/* What it does not know is refused, and the store is left to fault for real. */
Test(dev_store_decode, the_rest_is_refused)
{
	uint8_t *p = hole + 512;
	volatile int refused = 0;

	if (sigsetjmp(undecoded, 1))
		refused = 1;
	else
		__asm__ volatile("movq %0, %%rdi; movq $2, %%rcx; rep stosb"
				 : : "r"(p) : "rdi", "rcx", "rax", "memory");
	cr_assert(refused, "rep stosb was decoded");
	if (__builtin_cpu_supports("avx512f")) {
		/* a masked store writes some of its bytes only */
		refused = 0;
		if (sigsetjmp(undecoded, 1))
			refused = 1;
		else
			__asm__ volatile("movl $3, %%eax; kmovw %%eax, %%k1;"
					 "vmovdqu32 %%zmm0, (%0)%{%%k1%}"
					 : : "r"(p) : "rax", "memory");
		cr_assert(refused, "a masked store was decoded");
	}
}
#endif
