/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wake_probe - the floor this host puts under a two-process busy-polling
 * round trip, for each way an emulated device could be driven, with none
 * of the device's work (make bench-wake-probe; issue 19's goal of 50 us).
 * Two processes ping-pong a sequence number over a Unix SOCK_SEQPACKET
 * pair, the emulator's wire; each "application" busy-polls a word that
 * stands for its CQ and "rings" after it sees its completion.
 *
 *   shared memory  the applications poll each other's word: no device at
 *                  all, what hardware would leave (a cache line moving);
 *   device in the  the application's poll is the device: an empty poll is a
 *   poll call      recv(MSG_DONTWAIT), its ring a send(). The shape of the
 *                  emulator's poll assist, which libibverbs' ibv_poll_cq()
 *                  allows (a call through the context's ops); rdmafast's
 *                  and UCX's inline polls make no call;
 *   thread per     a device thread per process sleeps in ppoll() on the
 *   process        wire and an eventfd, which the application writes to
 *                  ring (cheaper than the emulator's trapped store): the
 *                  emulator's shape, with four threads wanting the cores.
 *                  Run as SCHED_OTHER and, if permitted, SCHED_FIFO; and
 *                  yield-spinning instead of sleeping (a ring is then the
 *                  store alone, as on hardware), a tenth of the rounds;
 *   one process    a single device process sleeps on both applications'
 *   for both       eventfds and writes the other's completion word itself:
 *                  one wake-up a message instead of two;
 *   faulting poll  the device runs in the application's thread through
 *                  faults: its CQ page is PROT_NONE, so an empty poll
 *                  faults and the handler reads the wire; a completion
 *                  makes the page readable and the doorbell page read-only,
 *                  and the ring's fault turns both back and sends. The only
 *                  way an inline poll, which makes no call, could run the
 *                  device in its own thread.
 *   signalled      the kernel signals the receiving application's thread
 *   poll           when a packet arrives (O_ASYNC, F_SETSIG, F_SETOWN_EX
 *                  to its thread id) and the handler reads the wire and
 *                  completes: the device run in a busy thread with no call,
 *                  no fault and no thread woken;
 *   requester      the requester's device does the responder's work: the
 *   writes the     ring is a store to a write-protected doorbell page, its
 *   peer           fault handler writes the peer's completion word with
 *                  process_vm_writev() and steps over the store (x86-64:
 *                  it knows the instruction), so the page stays protected.
 *                  No thread is woken, no signal crosses processes and no
 *                  mprotect() runs: the shape of issue 29's first design.
 *
 * Prints the median and the 99th percentile of the round trip over the
 * rounds, after a warm-up, and the pair's CPU time per round trip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { WARMUP = 100 };

static unsigned rounds = 2000;
static int wire;			/* this process's end of the pair */
static long page;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	_exit(2);
}

static void wire_send(uint32_t v)
{
	if (send(wire, &v, sizeof(v), 0) != sizeof(v))
		die("send");
}

/* one message, or 0 for none or a closed wire (sequence numbers start at 1) */
static uint32_t wire_recv(int flags)
{
	uint32_t v = 0;
	ssize_t r = recv(wire, &v, sizeof(v), flags);

	if (r < 0 && errno != EAGAIN)
		die("recv");
	return r == sizeof(v) ? v : 0;
}

/* ---- shared memory: no device ------------------------------------------ */

static _Atomic uint32_t *shm;		/* [0] A to B, [1] B to A */

static void shm_side(int who, uint32_t seq)
{
	if (who == 0) {
		atomic_store_explicit(&shm[0], seq, memory_order_release);
		while (atomic_load_explicit(&shm[1], memory_order_acquire) != seq)
			;
	} else {
		while (atomic_load_explicit(&shm[0], memory_order_acquire) != seq)
			;
		atomic_store_explicit(&shm[1], seq, memory_order_release);
	}
}

/* ---- the device in the poll call ---------------------------------------- */

static void call_side(int who, uint32_t seq)
{
	if (who == 0)
		wire_send(seq);
	while (wire_recv(MSG_DONTWAIT) != seq)
		;
	if (who == 1)
		wire_send(seq);
}

/* ---- a device thread per process ---------------------------------------- */

static _Atomic uint32_t cq_word;	/* what the device thread completed */
static int doorbell;			/* eventfd the application writes to ring */
static uint32_t db_record;		/* what the ring asks for */
static _Atomic uint32_t sent;		/* what the device thread last sent */
static _Atomic int stop;
static pthread_t device;
static int fifo;
static int spin;			/* the device thread yields instead of sleeping */

/* The spinning device: a ring is the record's store alone, as on hardware. */
static void *spinning_device(void)
{
	uint32_t done = 0;

	while (!atomic_load(&stop)) {
		uint32_t v = atomic_load_explicit((_Atomic uint32_t *)&db_record,
						  memory_order_acquire);

		if (v != done) {
			wire_send(v);
			done = v;
			atomic_store(&sent, v);
		}
		v = wire_recv(MSG_DONTWAIT);
		if (v)
			atomic_store_explicit(&cq_word, v, memory_order_release);
		sched_yield();
	}
	return NULL;
}

static void *device_thread(void *arg)
{
	struct pollfd p[2] = { { .fd = wire, .events = POLLIN }, { .fd = 0, .events = POLLIN } };
	struct sched_param sp = { .sched_priority = 1 };

	(void)arg;
	p[1].fd = doorbell;
	if (fifo && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		die("SCHED_FIFO");
	if (spin)
		return spinning_device();
	for (;;) {
		uint64_t n;

		if (ppoll(p, 2, NULL, NULL) < 0 && errno != EINTR)
			die("ppoll");
		if (p[1].revents & POLLIN) {
			uint32_t v = atomic_load_explicit((_Atomic uint32_t *)&db_record,
							  memory_order_acquire);

			if (read(doorbell, &n, sizeof(n)) != sizeof(n))
				die("eventfd");
			if (atomic_load(&stop))
				return NULL;
			wire_send(v);
			atomic_store(&sent, v);
		}
		if (p[0].revents & (POLLIN | POLLHUP)) {
			uint32_t v = wire_recv(0);

			if (!v)
				return NULL;	/* the other process is gone */
			atomic_store_explicit(&cq_word, v, memory_order_release);
		}
	}
}

static void ring_eventfd(uint32_t seq)
{
	uint64_t one = 1;

	atomic_store_explicit((_Atomic uint32_t *)&db_record, seq, memory_order_release);
	if (!spin && write(doorbell, &one, sizeof(one)) != sizeof(one))
		die("eventfd");
}

static void thread_side(int who, uint32_t seq)
{
	if (who == 0)
		ring_eventfd(seq);
	while (atomic_load_explicit(&cq_word, memory_order_acquire) != seq)
		;
	if (who == 1)
		ring_eventfd(seq);
}

/* ---- one device process for both ---------------------------------------- */

/* shm[2 + who]: what who's ring asks for; shm[4 + who]: who's completion; shm[6]: stop */
static int shared_db[2];		/* eventfds, one per application */

static void shared_device(void)
{
	struct pollfd p[2] = { { .fd = shared_db[0], .events = POLLIN },
			       { .fd = shared_db[1], .events = POLLIN } };
	struct sched_param sp = { .sched_priority = 1 };

	if (fifo && sched_setscheduler(0, SCHED_FIFO, &sp))
		die("SCHED_FIFO");
	for (;;) {
		if (ppoll(p, 2, NULL, NULL) < 0 && errno != EINTR)
			die("ppoll");
		for (int who = 0; who < 2; who++) {
			uint64_t n;

			if (!(p[who].revents & POLLIN))
				continue;
			if (read(shared_db[who], &n, sizeof(n)) != sizeof(n))
				die("eventfd");
			if (atomic_load(&shm[6]))
				_exit(0);
			atomic_store_explicit(&shm[4 + 1 - who], atomic_load(&shm[2 + who]),
					      memory_order_release);
		}
	}
}

static void shared_ring(int who, uint32_t seq)
{
	uint64_t one = 1;

	atomic_store_explicit(&shm[2 + who], seq, memory_order_release);
	if (write(shared_db[who], &one, sizeof(one)) != sizeof(one))
		die("eventfd");
}

static void shared_side(int who, uint32_t seq)
{
	if (who == 0)
		shared_ring(0, seq);
	while (atomic_load_explicit(&shm[4 + who], memory_order_acquire) != seq)
		;
	if (who == 1)
		shared_ring(1, seq);
}

/* ---- the device in the application's faults ----------------------------- */

static volatile uint32_t *cq_page;	/* PROT_NONE while nothing is completed */
static volatile uint32_t *db_page;	/* read-only while a completion is unread */
static volatile uint32_t fault_record;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char *a = si->si_addr;

	(void)sig;
	(void)uc;
	if (a >= (char *)cq_page && a < (char *)cq_page + page) {
		uint32_t v = wire_recv(MSG_DONTWAIT);

		if (!v)
			return;		/* nothing: the poll faults again */
		if (mprotect((void *)cq_page, (size_t)page, PROT_READ | PROT_WRITE) ||
		    mprotect((void *)db_page, (size_t)page, PROT_READ))
			die("mprotect");
		*cq_page = v;
	} else if (a >= (char *)db_page && a < (char *)db_page + page) {
		if (mprotect((void *)db_page, (size_t)page, PROT_READ | PROT_WRITE) ||
		    mprotect((void *)cq_page, (size_t)page, PROT_NONE))
			die("mprotect");
		wire_send(fault_record);
	} else {
		signal(SIGSEGV, SIG_DFL);
	}
}

static void fault_side(int who, uint32_t seq)
{
	if (who == 0) {
		fault_record = seq;
		*db_page = seq;
	}
	while (*cq_page != seq)
		;
	if (who == 1) {
		fault_record = seq;
		*db_page = seq;
	}
}

/* ---- the device in the application's thread, signalled by the kernel ---- */

static volatile uint32_t signal_cq;	/* what the handler completed */

static void on_packet(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	uint32_t v;

	(void)sig;
	(void)si;
	(void)uc;
	while ((v = wire_recv(MSG_DONTWAIT)) != 0)
		signal_cq = v;
	errno = saved;
}

static void signal_side(int who, uint32_t seq)
{
	if (who == 0)
		wire_send(seq);
	while (signal_cq != seq)
		;
	if (who == 1)
		wire_send(seq);
}

/* ---- the requester writes the peer's memory ------------------------------- */

static pid_t peer_pid;			/* the other process */
static volatile uint32_t direct_cq;	/* at the same address in both (fork); the
					   peer may write it before setup() runs */
static volatile uint32_t *direct_db;	/* read-only but for the ring's store */
static uint32_t direct_record;		/* what the ring asks for */

#ifdef __x86_64__
/*
 * The ring: one 8-byte store whose encoding (REX.W 89 /r, mod 00, no SIB)
 * is 3 bytes, which the handler steps over once it has done the store's
 * work: the page stays read-only, so no mprotect() is ever needed.
 */
enum { RING_INSN_LEN = 3 };

static void ring_store(volatile uint32_t *db, uint64_t v)
{
	__asm__ volatile("movq %0, (%1)" : : "r"(v), "D"(db) : "memory");
}

static void on_ring(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	int saved = errno;
	uint32_t v = direct_record;
	struct iovec local = { &v, sizeof(v) };
	struct iovec remote = { (void *)&direct_cq, sizeof(v) };

	(void)sig;
	if ((char *)si->si_addr < (char *)direct_db ||
	    (char *)si->si_addr >= (char *)direct_db + page) {
		signal(SIGSEGV, SIG_DFL);	/* not ours: fault again, for real */
		return;
	}
	if (process_vm_writev(peer_pid, &local, 1, &remote, 1, 0) != sizeof(v))
		die("process_vm_writev");
	uc->uc_mcontext.gregs[REG_RIP] += RING_INSN_LEN;
	errno = saved;
}
#endif

static void direct_side(int who, uint32_t seq)
{
#ifdef __x86_64__
	if (who == 0) {
		direct_record = seq;
		ring_store(direct_db, seq);
	}
	while (direct_cq != seq)
		;
	if (who == 1) {
		direct_record = seq;
		ring_store(direct_db, seq);
	}
#else
	(void)who;
	(void)seq;
#endif
}

/* ---- the harness -------------------------------------------------------- */

enum kind { SHM, CALL, THREAD, SHARED, FAULT, SIGNAL, DIRECT };

static void setup(enum kind k)
{
	if (k == THREAD) {
		atomic_store(&stop, 0);
		atomic_store(&cq_word, 0);
		doorbell = eventfd(0, EFD_CLOEXEC);
		if (doorbell < 0 || pthread_create(&device, NULL, device_thread, NULL))
			die("device thread");
	} else if (k == FAULT) {
		struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

		cq_page = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		db_page = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cq_page == MAP_FAILED || db_page == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL))
			die("fault setup");
	} else if (k == SIGNAL) {
		struct sigaction sa = { .sa_sigaction = on_packet, .sa_flags = SA_SIGINFO | SA_RESTART };
		struct f_owner_ex owner = { F_OWNER_TID, gettid() };

		signal_cq = 0;
		if (sigaction(SIGRTMIN, &sa, NULL) || fcntl(wire, F_SETOWN_EX, &owner) ||
		    fcntl(wire, F_SETSIG, SIGRTMIN) || fcntl(wire, F_SETFL, O_ASYNC))
			die("signal setup");
		on_packet(0, NULL, NULL);	/* what came before the signals were set up */
	} else if (k == DIRECT) {
#ifdef __x86_64__
		struct sigaction sa = { .sa_sigaction = on_ring, .sa_flags = SA_SIGINFO };

		direct_db = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (direct_db == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL))
			die("direct setup");
#endif
	}
}

static void side(enum kind k, int who, uint32_t seq)
{
	switch (k) {
	case SHM: shm_side(who, seq); break;
	case CALL: call_side(who, seq); break;
	case THREAD: thread_side(who, seq); break;
	case SHARED: shared_side(who, seq); break;
	case FAULT: fault_side(who, seq); break;
	case SIGNAL: signal_side(who, seq); break;
	case DIRECT: direct_side(who, seq); break;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double cpu_s(int who)
{
	struct rusage r;

	getrusage(who, &r);
	return (double)r.ru_utime.tv_sec + (double)r.ru_stime.tv_sec +
	       ((double)r.ru_utime.tv_usec + (double)r.ru_stime.tv_usec) / 1e6;
}

static void run(enum kind k, const char *name)
{
	int sv[2], st = 0;
	uint64_t *rtt = calloc(rounds, sizeof(*rtt));
	double cpu0 = cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN);
	pid_t child, dev = -1;

	if (!rtt || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		die("setup");
	for (int i = 0; i < 7; i++)
		atomic_store(&shm[i], 0);
	fflush(stdout);
	if (k == SHARED) {
		shared_db[0] = eventfd(0, EFD_CLOEXEC);
		shared_db[1] = eventfd(0, EFD_CLOEXEC);
		dev = fork();
		if (shared_db[0] < 0 || shared_db[1] < 0 || dev < 0)
			die("device process");
		if (dev == 0) {
			alarm(120);
			shared_device();
		}
	}
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		alarm(120);	/* bounded: a lost message ends the child */
		close(sv[0]);
		wire = sv[1];
		peer_pid = getppid();
		setup(k);
		for (uint32_t i = 1; i <= WARMUP + rounds; i++)
			side(k, 1, i);
		while (k == THREAD && atomic_load(&sent) != WARMUP + rounds)
			sched_yield();	/* the last answer is on the wire */
		_exit(0);
	}
	close(sv[1]);
	wire = sv[0];
	peer_pid = child;
	alarm(120);
	setup(k);
	for (uint32_t i = 1; i <= WARMUP + rounds; i++) {
		uint64_t t0 = now_ns();

		side(k, 0, i);
		if (i > WARMUP)
			rtt[i - WARMUP - 1] = now_ns() - t0;
	}
	alarm(0);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child");
	if (k == SHARED) {
		atomic_store(&shm[6], 1);
		shared_ring(0, 0);
		if (waitpid(dev, &st, 0) != dev)
			die("device process");
		close(shared_db[0]);
		close(shared_db[1]);
	}
	if (k == THREAD) {
		atomic_store(&stop, 1);
		ring_eventfd(0);
		pthread_join(device, NULL);
		close(doorbell);
	}
	qsort(rtt, rounds, sizeof(*rtt), cmp_u64);
	printf("%-34s %9.1f %9.1f %11.1f\n", name, (double)rtt[rounds / 2] / 1e3,
	       (double)rtt[rounds * 99 / 100] / 1e3,
	       (cpu_s(RUSAGE_SELF) + cpu_s(RUSAGE_CHILDREN) - cpu0) * 1e6 / (WARMUP + rounds));
	close(sv[0]);
	free(rtt);
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_t self = pthread_self();
	int policy;

	if (argc > 1)
		rounds = (unsigned)strtoul(argv[1], NULL, 10);
	if (rounds < 1000)
		rounds = 1000;
	page = sysconf(_SC_PAGESIZE);
	shm = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		die("mmap");
	printf("two processes, %u round trips each (us; CPU: both processes, per round trip)\n",
	       rounds);
	printf("%-34s %9s %9s %11s\n", "device", "median", "p99", "CPU us");
	run(SHM, "none (shared memory)");
	run(CALL, "in the poll call");
	run(THREAD, "thread per process, SCHED_OTHER");
	run(SHARED, "one process for both, SCHED_OTHER");
	/* milliseconds a round trip: a tenth of the rounds */
	spin = 1;
	rounds /= 10;
	run(THREAD, "thread per process, yield-spinning");
	rounds *= 10;
	spin = 0;
	pthread_getschedparam(self, &policy, &sp);
	sp.sched_priority = 1;
	if (pthread_setschedparam(self, SCHED_FIFO, &sp) == 0) {
		sp.sched_priority = 0;
		pthread_setschedparam(self, SCHED_OTHER, &sp);
		fifo = 1;
		run(THREAD, "thread per process, SCHED_FIFO");
		run(SHARED, "one process for both, SCHED_FIFO");
	} else {
		printf("%-34s (SCHED_FIFO not permitted)\n", "thread per process, SCHED_FIFO");
	}
	run(FAULT, "in the poll's faults");
	run(SIGNAL, "signalled poll (O_ASYNC)");
#ifdef __x86_64__
	run(DIRECT, "requester writes the peer");
#else
	printf("%-34s (x86-64 only)\n", "requester writes the peer");
#endif
	return 0;
}
