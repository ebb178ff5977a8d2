/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * engine.c - the engine: one thread per process that plays the HCA.
 *
 * Doorbells.  A doorbell or BlueFlame write is an ordinary store into the
 * UAR pages (the memfd that libmlx5 mmaps; ctx->map is our view of it).  The
 * engine watches the first 8 bytes of both halves of every bfreg in use and
 * the CQ arm register (UAR + 0x20), in both the regular and the non-cached
 * mapping, and consumes a doorbell by exchanging the word with 0.  A
 * doorbell is never 0 (its DS or CQN is non-zero).  Only then does it read
 * the doorbell record: like the HCA, it executes nothing that was not rung.
 * The SQ is always read from queue memory; the BlueFlame copy is just a
 * doorbell here (libmlx5 writes the WQE to the queue as well).
 *
 * Idling.  A doorbell is a plain store: by itself it wakes nobody.  So
 * before it sleeps, the engine write-protects the application's mappings of
 * the UAR pages it watches (trap.c): the next doorbell faults, and the
 * fault handler kicks the engine awake.  Packets from other hosts and
 * commands (a QP moved to ERR, say) wake it too: it sleeps in ppoll() on
 * the wire's epoll set and a kick eventfd.  After the last activity (a
 * doorbell, packet or completion) the engine
 *
 *   1. spins for RFEMU_SPIN_US (20 us), yielding between looks, but only
 *      while the CPU is not contended: a sched_yield() that took long, or
 *      more runnable threads than CPUs (cpus_oversubscribed()), means
 *      another thread (typically a busy-polling application) wants this
 *      CPU, and spinning would then steal its time slices; the engine stops
 *      spinning for the next 100 ms;
 *   2. within RFEMU_EVENT_GRACE_US (300 us) of a completion event it
 *      delivered, naps 1 us at a time and leaves the doorbells unprotected
 *      (idle_sleep_ns());
 *   3. naps RFEMU_NAP_US (50 us) at a time for RFEMU_HOT_MS (100 ms): a
 *      doorbell still wakes it at once, but a wake-up by a busy thread can
 *      wait for that thread's CPU tick (4 ms), and a timer's does not;
 *   4. then sleeps until a doorbell, packet, command or timer (retransmit,
 *      RNR wait, delayed packets, CQ moderation) wakes it, and at least
 *      every TRAP_IDLE_NS (4 ms) to refresh the clock pages (kernel/clock.c)
 *      and do its slow tasks.
 *
 * An application busy polling through ibv_poll_cq() runs the device in its
 * own thread when its CQ is empty (emu_dev_poll_assist()); while it does,
 * the engine neither traps its doorbells nor wakes for packets.  Any other
 * application runs it from its trapped doorbells, whose stores the fault
 * handler writes (doorbell_assist()); where a store had to be let
 * through, the naps of 3. on a contended CPU leave the doorbells untrapped.
 *
 * Where doorbells cannot be trapped (RFEMU_DOORBELL_TRAP=0, or more watched
 * pages than trap.c keeps), the engine must look, and how often it looks is
 * the trade between doorbell latency and idle CPU: instead of 4. it doubles
 * its sleep up to RFEMU_IDLE_MAX_US (1000 us).
 *
 * A thread that wakes from a short sleep has a claim on the CPU that a
 * spinning one has lost: the scheduler usually lets it preempt a
 * busy-polling application, so sleeping, not spinning, keeps latency low
 * when there are fewer cores than busy threads.  Naps much shorter than
 * 50 us measured worse on 2 cores: the engine then uses enough CPU to lose
 * that claim (the 1 us naps of 2., taken by every idle engine, tripled the
 * busy-polling round trip; after an event the application is asleep in its
 * channel, and they do not compete with it).  The engine also asks for a
 * short scheduler slice (sched_setattr runtime 100 us, honoured by EEVDF
 * kernels >= 6.12), which helps its wake-ups preempt an application that
 * has just started its own slice.  An idle wake-up costs 5-15 us of CPU on
 * the 2-core VM this was measured on: about 0.3% of a CPU at 4 ms.  Looking
 * at the sockets costs a syscall, so a wake-up by timeout (no packet) skips
 * them.
 *
 * RFEMU_DEVICE=off never starts the engine: the fake kernel works as usual
 * but nothing rung is executed and no CQE is written. Benchmarks of the
 * data path use it to play the device themselves, with no second thread
 * touching the queues.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/thread.h"
#include "device.h"

static pthread_t engine_thread;
static bool engine_running;
static atomic_bool engine_stop;
static unsigned nctx;
/* defaults: see "Idling" above and emu/README.md, "Environment" */
static uint64_t spin_ns = 20000;
static uint64_t nap_ns = 50000;
static uint64_t hot_ns = 100000000;
static uint64_t event_grace_ns = 300000;
static uint64_t idle_max_ns = 1000000;
static uint64_t assist_window_ns = 1000000;	/* RFEMU_POLL_ASSIST_US; 0: off */

/*
 * Whether this process runs the engine's state.  A child of fork() that
 * has not yet set its parent's aside (kernel/objects.c) must not: a pass
 * there would run the parent's QPs on copies of their memory and send on
 * the parent's sockets.  Its doorbells reach the parent's engine through
 * the shared UAR pages, as a real device reads the parent's.
 */
static bool engine_here(void)
{
	return engine_running &&
	       !(atomic_load_explicit(&emu_fork_pending, memory_order_relaxed) & EMU_FORK_DISOWN);
}

/* ---- doorbell watching ---------------------------------------------------- */

static void watch_add(_Atomic uint64_t *addr, void *list, bool is_cq)
{
	if (dev_eng.nwatch == dev_eng.watch_cap) {
		unsigned cap = dev_eng.watch_cap ? dev_eng.watch_cap * 2 : 64;
		struct dev_watch *w = realloc(dev_eng.watch, cap * sizeof(*w));

		if (!w)
			return;
		dev_eng.watch = w;
		dev_eng.watch_cap = cap;
	}
	dev_eng.watch[dev_eng.nwatch++] = (struct dev_watch){ .addr = addr, .qps = list,
							      .is_cq = is_cq };
}

void dev_watch_rebuild_locked(void)
{
	static const enum emu_mmap_cmd views[] = { EMU_MMAP_REGULAR, EMU_MMAP_NC };

	dev_eng.nwatch = 0;
	for (struct dev_ctx *dc = dev_eng.ctxs; dc; dc = dc->next) {
		for (uint32_t b = 0; b < dc->nuars * EMU_BFREGS_PER_UAR; b++) {
			/*
			 * A UAR of UAR_OBJ_ALLOC has one mapping, and a QP on
			 * it may ring either of its two bfregs (the QP names
			 * only the page): both are this list's.
			 */
			bool dyn = emu_uar_is_dyn(dc->ctx, b / EMU_BFREGS_PER_UAR);

			if (!dc->bf_qps[b])
				continue;
			for (unsigned v = 0; v < (dyn ? 1u : 2u); v++)
				for (unsigned reg = 0; reg < (dyn ? 2u : 1u); reg++)
					for (unsigned half = 0; half < 2; half++)
						watch_add((_Atomic uint64_t *)(emu_bfreg_addr(dc->ctx, views[v], b + reg) +
									       half * EMU_BF_REG_SIZE / 2),
							  &dc->bf_qps[b], false);
		}
		for (uint32_t u = 0; u < dc->nuars; u++) {
			if (!dc->uar_cqs[u])
				continue;
			for (unsigned v = 0; v < (emu_uar_is_dyn(dc->ctx, u) ? 1u : 2u); v++)
				watch_add((_Atomic uint64_t *)(emu_uar_page(dc->ctx, views[v], u) +
							       EMU_CQ_DB_OFFSET),
					  &dc->uar_cqs[u], true);
		}
	}
	dev_eng.watch_dirty = false;
	dev_trap_rebuild_locked();
}

static void sq_doorbell(struct dev_qp *const *qps)
{
	/*
	 * The doorbell names one QP (its ctrl segment's QPN), but a shared
	 * bfreg can have a second doorbell overwrite the first before we look;
	 * every QP on the register re-reads its record instead.  A QP that
	 * only updated its record never reaches here unless a neighbour rang.
	 */
	for (struct dev_qp *dq = *qps; dq; dq = dq->next_on_bf) {
		uint32_t lim;

		if (!dev_load_be32((const uint8_t *)(uintptr_t)dq->qp->dbrec + 4, &lim)) {
			/* the doorbell record's page went away: the SQ is lost */
			if (dq->qp->attr.state != IBV_QPS_ERR)
				dev_qp_fatal(dq, IBV_EVENT_QP_FATAL);
			continue;
		}
		lim &= 0xffff;
		if (lim != (dq->sq_next & 0xffff) || dq->sq_rung) {
			dq->sq_limit = lim;
			dq->sq_rung = true;
			dev_qp_set_busy(dq);
		}
	}
}

static void cq_doorbell(struct dev_cq *const *cqs, uint64_t v)
{
	uint32_t word = be32toh((uint32_t)v);
	uint32_t cqn = be32toh((uint32_t)(v >> 32)) & 0xffffff;
	struct emu_cq *cq = emu_cq_by_cqn_locked(cqn);
	struct dev_cq *dcq = dev_cq_of(cq);

	if (dcq)
		dev_cq_arm_doorbell(dcq, word);
	for (struct dev_cq *o = *cqs; o; o = o->next_on_uar)
		if (o != dcq)
			dev_cq_check_arms(o);
}

static unsigned scan_doorbells(void)
{
	unsigned hits = 0;

	for (unsigned i = 0; i < dev_eng.nwatch; i++) {
		struct dev_watch *w = &dev_eng.watch[i];
		uint64_t v;

		if (DEV_LIKELY(!atomic_load_explicit(w->addr, memory_order_relaxed)))
			continue;
		v = atomic_exchange_explicit(w->addr, 0, memory_order_acquire);
		if (!v)
			continue;
		hits++;
		if (w->is_cq)
			cq_doorbell(w->cqs, v);
		else
			sq_doorbell(w->qps);
	}
	return hits;
}

/*
 * A doorbell store faulted on a protected page (trap.c): the send queues
 * of its registers are taken as rung at once, without waiting for the
 * store to land; their doorbell records were written before it.
 */
static bool trap_rung(void)
{
	struct dev_ctx *dc;
	uint64_t off;
	uintptr_t page;

	if (!dev_trap_take_locked(&dc, &off))
		return false;
	page = dc ? ((uintptr_t)dc->ctx->map + (uintptr_t)off) / EMU_PAGE_SIZE : 0;
	for (unsigned i = 0; dc && i < dev_eng.nwatch; i++) {
		const struct dev_watch *w = &dev_eng.watch[i];

		/* our view's page of the trapped one: each context has its own */
		if (!w->is_cq && (uintptr_t)w->addr / EMU_PAGE_SIZE == page)
			sq_doorbell(w->qps);
	}
	return true;
}

/* ---- the loop -------------------------------------------------------------- */

static unsigned run_busy(void)
{
	unsigned n = 0;
	struct dev_qp *list = dev_eng.busy;

	dev_eng.busy = NULL;
	while (list) {
		struct dev_qp *dq = list;

		list = dq->next_busy;
		dq->busy = false;
		if (dq->flush_rq && dq->qp->attr.state == IBV_QPS_ERR)
			dev_rq_flush(dq);
		dev_sq_process(dq);
		/*
		 * Still work but nothing in flight that would bring us back
		 * (the parse budget ran out, or the loopback ring was full):
		 * look again in the next round.
		 */
		if (dq->qp->attr.state == IBV_QPS_RTS && !dq->rnr_until &&
		    (dq->sq_rung || (dq->ent_emit != dq->ent_tail && !dq->pkts_out)))
			dev_qp_set_busy(dq);
		n++;
	}
	return n;
}

/*
 * Receives posted to a QP in ERR, or to a raw QP's RQ in ERR, after the
 * flush: no doorbell tells us.
 */
static void slow_tasks(void)
{
	dev_guard_check();
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next)
		if (dq->qp->attr.state == IBV_QPS_ERR) {
			dev_rq_flush(dq);
			if (dq->sq_rung)
				dev_qp_set_busy(dq);
		} else if (dq->qp->rq_err) {
			dev_rq_flush(dq);
		}
}

static unsigned iterate(bool sockets)
{
	unsigned work = 0;

	work += scan_doorbells();
	for (unsigned round = 0; round < 16; round++) {
		unsigned n = 0;

		if (dev_eng.busy)
			n += run_busy();
		/* the sockets cost a syscall: once per iteration is enough */
		n += wire_poll(sockets && round == 0);
		n += dev_resp_pump();
		dev_resp_flush_acks();
		n += dev_sq_direct_replies();
		n += wire_poll(false);
		if (dev_eng.timers)
			dev_rc_timers();
		if (dev_eng.cq_timers)
			dev_cq_timers();
		work += n;
		if (!n && !dev_eng.busy)
			break;
	}
	return work;
}

/*
 * One pass of the device at dev_eng.now, lock held: the engine's, or one run
 * from an application's empty poll (emu_dev_poll_assist()).  Returns the
 * work done; *trapped if a trapped doorbell was taken.
 */
static unsigned pass(bool sockets, bool *trapped)
{
	unsigned work;

	/*
	 * First: a context closed since the last pass has left its pointer in
	 * the watches and the trap's ranges, and a doorbell noted there must
	 * not lead to it.  The rebuild forgets both; iterate() then scans
	 * every doorbell, so none is lost.
	 */
	if (dev_eng.watch_dirty)
		dev_watch_rebuild_locked();
	dev_grant_pass_begin();
	*trapped = trap_rung();
	emu_clock_tick_locked();
	work = iterate(sockets);
	if (dev_eng.zip_held)
		dev_zip_pass_done(!work);
	/* what the pass leaves: the next SENDs its QPs may receive directly */
	dev_grant_publish();
	return work;
}

/*
 * Sleep up to ns; true if a socket may have a packet.  Without `wire` the
 * sockets do not wake it: an application's polls are looking at them.
 */
static bool idle_wait(uint64_t ns, bool wire)
{
	struct pollfd fds[2];
	unsigned n = 0;
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	fds[n++] = (struct pollfd){ .fd = dev_eng.kick_fd, .events = POLLIN };
	if (wire && wire_wait_fd() >= 0)
		fds[n++] = (struct pollfd){ .fd = wire_wait_fd(), .events = POLLIN };
	if (ppoll(fds, n, &ts, NULL) <= 0)
		return false;	/* timed out: only doorbells can have changed */
	if (fds[0].revents & POLLIN) {
		uint64_t v;

		if (emu_real_read(dev_eng.kick_fd, &v, sizeof(v)) < 0) {
			/* nothing to drain */
		}
	}
	return n > 1 && fds[1].revents;
}

/*
 * A short scheduler slice (EEVDF, Linux >= 6.12: sched_attr.sched_runtime
 * of a SCHED_OTHER thread is its slice) lets the waking engine preempt a
 * busy-polling thread at once instead of after that thread's slice.  Best
 * effort: older kernels ignore or refuse it.
 */
static void engine_short_slice(void)
{
	/*
	 * The kernel's struct sched_attr, version 0 (48 bytes); glibc 2.36 has
	 * no wrapper, and <linux/sched/types.h> clashes with <sched.h>.
	 */
	struct {
		uint32_t size, sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime, sched_deadline, sched_period;
	} a = {
		.size = sizeof(a),
		.sched_policy = SCHED_OTHER,
		.sched_runtime = 100000,
	};

	/* sched_setattr() sets the nice value too: keep the process's */
	errno = 0;
	a.sched_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		a.sched_nice = 0;

	if (syscall(SYS_sched_setattr, 0, &a, 0)) {
		/* not supported here: the default slice it is */
	}
}

/*
 * RFEMU_SCHED_FIFO=1 runs the engine as a real-time thread (if permitted):
 * a doorbell or packet then preempts a busy-polling application thread at
 * once.  It never spins in that mode (it would starve the application on
 * its core); it naps instead.
 */
static void engine_sched_setup(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	const char *fifo = getenv("RFEMU_SCHED_FIFO");

	if (fifo && atoi(fifo) &&
	    !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		spin_ns = 0;
		return;
	}
	engine_short_slice();
}

/* How long to sleep after `idle` ns without activity; 0 = spin on. */
struct idle_state {
	uint64_t	backoff;	/* current sleep once the hot window is over */
	uint64_t	trap_woke;	/* woken by a doorbell fault, not yet seen */
	bool		no_arm;		/* this sleep waits for that doorbell */
	bool		assisted;	/* an application's polls run the device */
	uint64_t	db_assists;	/* dev_eng.db_assists, db_handovers at the */
	uint64_t	db_handovers;	/* engine's last look (assists_keep_up()) */
};

/* With doorbells trapped, the longest sleep (see "Idling"). */
#define TRAP_IDLE_NS	4000000u
/* After a doorbell fault: nap this long, for at most TRAP_WAIT_NS. */
#define TRAP_NAP_NS	5000u
#define TRAP_WAIT_NS	1000000u
/*
 * A yield that takes this long, or a sleep this much longer than asked (a
 * timer's overshoot on the VM measured on reached 20 us), means the CPU is
 * contended, and it is taken to be for CONTENDED_FOR_NS.
 */
#define CONTENDED_NS		20000u
#define LATE_WAKE_NS		100000u
#define CONTENDED_FOR_NS	100000000u

/*
 * ns: the engine found its CPU contended (a busy-polling application holds
 * it) and does not spin before this.  Read by doorbell_assist() too.
 */
static _Atomic uint64_t no_spin_until;

static bool contended(uint64_t now)
{
	return now < atomic_load_explicit(&no_spin_until, memory_order_relaxed);
}

static void contended_for_a_while(uint64_t now)
{
	atomic_store_explicit(&no_spin_until, now + CONTENDED_FOR_NS, memory_order_relaxed);
}

/* After a completion event, before RFEMU_EVENT_GRACE_US: naps this long. */
#define EVENT_NAP_NS	1000u
/*
 * The engine leaves the device to an application's polls after this many of
 * them without a CQ armed in between (an event-driven application polls
 * once or twice between arms: it is about to sleep), for as long as they
 * go on and RFEMU_POLL_ASSIST_US after the last.  Those polls look at the
 * sockets at most every ASSIST_WIRE_NS.
 */
#define ASSIST_STREAK		8u
#define ASSIST_WIRE_NS		2000u

/* Timers (retransmit, RNR, delayed packets, CQ moderation) bound a sleep. */
static uint64_t bounded_by_timers(uint64_t now, uint64_t sleep)
{
	uint64_t due = dev_rc_next_deadline();

	if (wire_next_due() && (!due || wire_next_due() < due))
		due = wire_next_due();
	if (dev_cq_next_due() && (!due || dev_cq_next_due() < due))
		due = dev_cq_next_due();
	if (due)
		sleep = due <= now ? 1000 : (due - now < sleep ? due - now : sleep);
	return sleep ? sleep : 1000;
}

static uint64_t idle_sleep_ns(struct idle_state *st, uint64_t now, uint64_t idle)
{
	uint64_t sleep;

	/*
	 * Woken by a doorbell fault, but the faulting store runs again only
	 * once its thread gets the CPU back, and on a busy machine our own
	 * wake-up may just have taken it.  Nap briefly (a sleep, unlike a
	 * yield, hands the CPU over) without protecting the pages again,
	 * until the doorbell is seen.
	 */
	st->assisted = false;
	if (st->trap_woke && now - st->trap_woke < TRAP_WAIT_NS) {
		st->no_arm = true;
		return TRAP_NAP_NS;
	}
	/*
	 * An application is busy polling and runs the device from its polls
	 * (emu_dev_poll_assist()): they see its doorbells and the packets.
	 * Neither trap its doorbells nor wake for packets, which would only
	 * take its CPU (the 50 us naps of 3. doubled the round trip in half
	 * the runs); sleep until its polls have stopped for the window, or a
	 * timer, or a CQ armed (emu_dev_poll_arm()).
	 */
	if (dev_eng.last_assist && now - dev_eng.last_assist < assist_window_ns) {
		/* protected since before the polls (written stores never unprotect) */
		dev_trap_disarm_locked();
		st->no_arm = st->assisted = true;
		return bounded_by_timers(now, dev_eng.last_assist + assist_window_ns - now);
	}
	st->no_arm = false;
	if (idle < spin_ns && !contended(now))
		return 0;
	/*
	 * A completion event was just delivered: an event-driven application
	 * is waking to poll and ring again, within tens of us.  Protecting the
	 * pages now would cost more than the doorbell it catches (an mprotect
	 * that must shoot down the TLB of the CPU the application runs on,
	 * then the fault): nap in steps short enough to see the doorbell.
	 */
	if (now - dev_eng.last_event < event_grace_ns) {
		/* protected before the event, between the doorbell and its completion */
		dev_trap_disarm_locked();
		st->no_arm = true;
		return bounded_by_timers(now, EVENT_NAP_NS);
	}
	if (idle < hot_ns) {
		sleep = nap_ns;
		st->backoff = nap_ns;
		/*
		 * On a contended CPU (a busy-polling application holds it),
		 * protecting the pages again after each doorbell costs more
		 * than the nap's wait for the next: the mprotect() shoots down
		 * the TLB of that application's CPU.  Unless the fault handler
		 * writes the stores (trap.c): the pages then stay protected
		 * from one doorbell to the next, and each is executed in the
		 * thread that rang it, with no wake-up to wait for.
		 */
		st->no_arm = contended(now) && !dev_trap_writes_stores();
	} else {
		sleep = st->backoff;
		st->backoff = st->backoff * 2 > idle_max_ns ? idle_max_ns : st->backoff * 2;
	}
	return bounded_by_timers(now, sleep);
}

/*
 * Since the engine last went idle, have the threads that rang doorbells
 * executed them all in their faults (doorbell_assist()), handing none
 * over?  The state of a busy round trip between programs that poll their
 * own CQs: the naps of the hot window then only cost (on a 2-vCPU AMD
 * EPYC VM UCX's am_lat took 35-39 us with them, 13-15 us without,
 * docs/emu-measurements.md).
 */
static bool assists_keep_up(struct idle_state *st)
{
	uint64_t handovers = atomic_load_explicit(&dev_eng.db_handovers, memory_order_relaxed);
	bool alone = dev_eng.db_assists != st->db_assists && handovers == st->db_handovers;

	st->db_assists = dev_eng.db_assists;
	st->db_handovers = handovers;
	return alone;
}

/*
 * The CPUs whose runnable threads /proc/loadavg counts (all of the
 * machine's), and when cpus_oversubscribed() may next count.
 */
static unsigned machine_cpus;
static uint64_t next_count_ns;
#define COUNT_EVERY_NS	1000000u

/*
 * Counted against the machine's CPUs, not the engine's affinity: in a
 * container pinned to 2 CPUs of a 64-CPU host the count is the host's, and
 * against 2 it would find the engine contended whenever the host is busy
 * anywhere.  Against 64 it finds contention only where the whole machine
 * is oversubscribed, and the yields and late naps tell the rest.
 */
static void count_machine_cpus(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	machine_cpus = online > 0 ? (unsigned)online : 1;
}

/*
 * Whether more threads are runnable than the machine has CPUs, i.e. some
 * wait for one.  Under EEVDF (Linux >= 6.6) a yield does not tell: it
 * moves the caller's deadline on by one slice, and the engine, with its
 * short slice and the lag it kept while asleep, is then often still the
 * eligible thread with the earliest deadline and runs on at once, however
 * many wait; nor are its naps late, its wake-ups preempting (measured in
 * emu/DESIGN-wakeup.md, "Wake-up latency").  The count is nr_running(),
 * /proc/loadavg's fourth field, of every CPU.  Read at most every COUNT_EVERY_NS
 * (3-5 us a read).
 */
static bool cpus_oversubscribed(uint64_t now)
{
	char buf[128];
	unsigned runnable;
	ssize_t n;
	int fd;

	if (now < next_count_ns)
		return false;
	next_count_ns = now + COUNT_EVERY_NS;
	fd = emu_real_open("/proc/loadavg", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	n = emu_real_read(fd, buf, sizeof(buf) - 1);
	emu_real_close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* "0.52 0.58 0.59 3/467 12345": runnable/total threads */
	return sscanf(buf, "%*s %*s %*s %u/", &runnable) == 1 && runnable > machine_cpus;
}

/*
 * Yield while spinning.  If the yield took long, or threads wait for a
 * CPU, we compete with them, and spinning would only queue us behind
 * their slices.  Nap instead for a while (naps preempt, see the header).
 */
static void spin_yield(void)
{
	uint64_t t0 = dev_now_ns(), t1;

	sched_yield();
	t1 = dev_now_ns();
	if (t1 - t0 > CONTENDED_NS || cpus_oversubscribed(t1))
		contended_for_a_while(t1);
}

static void *engine_main(void *arg)
{
	struct idle_state st = { .backoff = 0 };
	uint64_t last_work, last_slow = 0;
	bool sockets = true;	/* look at the sockets in the next iteration */
	sigset_t all;

	(void)arg;
	/* signals belong to the application's threads */
	sigfillset(&all);
	/* ... except the faults of a guarded access (dev_guard.c) */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* short sleeps must stay short: the default 50 us slack would dominate */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	engine_sched_setup();
	count_machine_cpus();
	st.backoff = nap_ns;

	last_work = dev_now_ns();
	while (!atomic_load_explicit(&engine_stop, memory_order_relaxed)) {
		unsigned work;
		uint64_t now, sleep;
		bool trapped, alone;

		emu_lock_acquire();
		dev_eng.sleep_until = 0;
		now = dev_eng.now = dev_now_ns();
		work = pass(sockets, &trapped);
		dev_eng.engine_passes++;
		if (trapped)
			st.trap_woke = now;
		sockets = true;
		if (now - last_slow > 1000000) {
			slow_tasks();
			last_slow = now;
		}
		if (dev_eng.busy)
			work++;
		if (work) {
			emu_lock_release();
			last_work = now;
			st.trap_woke = 0;
			continue;
		}
		alone = assists_keep_up(&st);
		sleep = idle_sleep_ns(&st, now, now - last_work);
		if (sleep && !st.no_arm && dev_trap_arm_locked()) {
			/* rung before the pages were protected: not trapped */
			if (scan_doorbells()) {
				emu_lock_release();
				last_work = now;
				continue;
			}
			/*
			 * Doorbells now wake us.  While traffic is recent the
			 * naps go on all the same: a wake-up by a busy thread
			 * can wait for its CPU's tick, a timer's does not.
			 * Unless the threads that ring execute their doorbells
			 * themselves and hand none over: a nap then finds
			 * nothing to do, or takes a doorbell the ringing thread
			 * was about to execute, and each one takes the CPU of
			 * a busy-polling thread.
			 */
			if (now - last_work >= hot_ns || alone)
				sleep = bounded_by_timers(now, TRAP_IDLE_NS);
		}
		/* what a doorbell's pass in another thread must not outrun (doorbell_assist) */
		dev_eng.sleep_until = sleep ? now + sleep : 0;
		emu_lock_release();
		if (!sleep) {
			spin_yield();
		} else {
			uint64_t t0 = dev_now_ns(), t1;

			sockets = idle_wait(sleep, !st.assisted);
			/*
			 * Woken late: the CPU was busy with another thread, as
			 * a yield that takes long tells (spin_yield()).  The
			 * naps, which do not spin, learn it this way.
			 */
			t1 = dev_now_ns();
			if (t1 - t0 > sleep + LATE_WAKE_NS)
				contended_for_a_while(t1);
		}
	}
	return NULL;
}

/*
 * An application busy-polling a CQ through ibv_poll_cq() (libmlx5's poll is
 * a call through the context's ops, interpose/verbs.c wraps it) runs the
 * device itself when its CQ is empty: the doorbells it rang and the packets
 * that came are executed in its own thread, and the engine thread, which
 * would have to be woken and scheduled for each (20-35 us a wake-up on a
 * CPU that a polling thread holds, bench/wake_probe.c), stays out of the
 * way (idle_sleep_ns()).  The sockets cost a system call: an assist looks
 * at them at most every ASSIST_WIRE_NS.  A thread already in a pass (the
 * engine, another poller) is left to it.
 */
bool emu_dev_poll_assist(void)
{
	unsigned work;
	bool sockets, trapped;
	uint64_t now;

	if (!emu_lock_try())
		return false;
	if (!engine_here() || !assist_window_ns) {
		emu_lock_release();
		return false;
	}
	now = dev_eng.now = dev_now_ns();
	sockets = now - dev_eng.assist_wire >= ASSIST_WIRE_NS;
	if (sockets)
		dev_eng.assist_wire = now;
	work = pass(sockets, &trapped);
	dev_eng.assists++;
	if (dev_eng.assist_streak < ASSIST_STREAK)
		dev_eng.assist_streak++;
	else
		dev_eng.last_assist = now;
	emu_lock_release();
	return work != 0;
}

/*
 * A pass that executed this many WQEs, or found work left for the next, was
 * a stream, not a lone request: the engine, on a CPU of its own, keeps up
 * with streams while the storing thread goes on posting (a fault a doorbell
 * would cost it there), and takes the pages back from the trap.  Only an
 * engine that spins can: one that may not (RFEMU_SPIN_US=0) or whose CPU
 * is contended naps, protects the pages again at once, and the next
 * doorbell faults all the same, after two mprotect() calls for nothing (12
 * us each on a 2-vCPU AMD EPYC VM: the batched READs of bench/emu_model.c
 * went from 0.32-0.41x libmlx5's rate to 0.74-1.69x without them).
 */
#define DB_ASSIST_STREAM_WQES	8u

/*
 * A doorbell's pass looks at the sockets at most this often: a system call
 * (1 us on a 2-vCPU AMD EPYC VM, a twelfth of a busy round trip's hop),
 * and the engine, asleep or napping, wakes for a packet by itself.
 */
#define DB_ASSIST_WIRE_NS	50000u

/* How long a doorbell's thread sleeps for the lock before it hands over. */
#define DB_ASSIST_LOCK_WAIT_NS	2000000u

/*
 * A doorbell its fault's thread leaves to the engine: counted, so that the
 * engine knows its naps are wanted (assists_keep_up()).
 */
static void hand_over(void)
{
	atomic_fetch_add_explicit(&dev_eng.db_handovers, 1, memory_order_relaxed);
	dev_kick();
}

/*
 * A doorbell store on a sleeping engine, written by its fault handler
 * (trap.c) in the thread that stored it: that thread runs the device's pass
 * at once, as a ConnectX takes a doorbell the moment it is written, and the
 * engine sleeps on.  No thread is woken, so a busy-polling application on a
 * CPU it shares with nobody else sees its work done in the time of the pass
 * (bench/wake_probe.c: a wake-up costs 20-35 us on a CPU a polling thread
 * holds).  The engine is kicked instead when another thread is in a pass,
 * and after the pass when it leaves work the engine must take up: a
 * stream of WQEs, more work queued, or a timer due before a sleeping
 * engine's wake-up.
 */
static void doorbell_assist(void)
{
	uint64_t wqes, due;
	bool sockets, trapped, stream, kick;

	/*
	 * Held by another thread (the engine's pass, a command): wait for it,
	 * asleep, a bounded time.  A holder that lost its CPU to this busy
	 * thread gets it back so (on a 2-core VM the engine waited 1-4 ms for
	 * a CPU after such a preemption, and every doorbell handed to it
	 * meanwhile with it: 1% of a busy round trip's hops over 1 ms).  Not
	 * when this thread holds it: a store from code under the lock.
	 */
	if (!emu_lock_try() &&
	    (emu_lock_held() || !emu_lock_wait(DB_ASSIST_LOCK_WAIT_NS))) {
		hand_over();
		return;
	}
	if (!engine_here()) {
		emu_lock_release();
		return;
	}
	/*
	 * The watches to rebuild read /proc/self/maps (stdio, malloc): not
	 * in a signal handler.  The engine does it.
	 */
	if (dev_eng.watch_dirty) {
		emu_lock_release();
		hand_over();
		return;
	}
	dev_eng.now = dev_now_ns();
	wqes = dev_eng.wqes;
	sockets = dev_eng.now - dev_eng.db_assist_wire >= DB_ASSIST_WIRE_NS;
	if (sockets)
		dev_eng.db_assist_wire = dev_eng.now;
	pass(sockets, &trapped);
	dev_eng.db_assists++;
	due = bounded_by_timers(dev_eng.now, UINT64_MAX / 2);
	/*
	 * An engine that is not asleep (sleep_until 0: spinning, or between
	 * passes) runs another pass and sees all this by itself.
	 */
	stream = dev_eng.wqes - wqes >= DB_ASSIST_STREAM_WQES && spin_ns && !contended(dev_eng.now);
	kick = dev_eng.busy || stream ||
	       (dev_eng.sleep_until && dev_eng.now + due < dev_eng.sleep_until);
	if (stream)
		dev_trap_disarm_locked();
	emu_lock_release();
	if (kick)
		hand_over();
}

void emu_dev_poll_arm(void)
{
	bool assisted;

	emu_lock_acquire();
	assisted = dev_eng.last_assist != 0;
	dev_eng.assist_streak = 0;
	dev_eng.last_assist = 0;
	emu_lock_release();
	/* its doorbells and packets are the engine's again, the arm's too */
	if (assisted)
		dev_kick();
}

bool emu_dev_poll_assist_on(void)
{
	bool on;

	emu_lock_acquire();
	on = engine_here() && assist_window_ns;
	emu_lock_release();
	return on;
}

/* A duration from the environment in `unit` ns, else def_ns. */
static uint64_t env_ns(const char *name, uint64_t unit, uint64_t def_ns)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) * unit : def_ns;
}

/* ---- lifecycle ------------------------------------------------------------ */

static bool device_off(void)
{
	const char *s = getenv("RFEMU_DEVICE");

	return s && !strcmp(s, "off");
}


/* Requesters held back by a full link may go on (the wire's room callback). */
static void wire_room_wake(void)
{
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next)
		if (dq->ent_emit != dq->ent_tail || dq->sq_rung)
			dev_qp_set_busy(dq);
}

static const struct wire_ops wire_ops = {
	.deliver	= dev_resp_packet,
	.room		= wire_room_wake,
};

int emu_dev_ctx_init(struct emu_ctx *ctx)
{
	struct dev_ctx *dc = calloc(1, sizeof(*dc));
	int err;

	if (!dc)
		return ENOMEM;
	dc->ctx = ctx;
	if (!engine_running && !device_off()) {
		wire_fault_load();
		dev_eng.zip_mode = (uint8_t)emu_config_cqe_compress();
		spin_ns = env_ns("RFEMU_SPIN_US", 1000, 20000);
		nap_ns = env_ns("RFEMU_NAP_US", 1000, 50000);
		hot_ns = env_ns("RFEMU_HOT_MS", 1000000, 100000000);
		event_grace_ns = env_ns("RFEMU_EVENT_GRACE_US", 1000, 300000);
		idle_max_ns = env_ns("RFEMU_IDLE_MAX_US", 1000, 1000000);
		assist_window_ns = env_ns("RFEMU_POLL_ASSIST_US", 1000, 1000000);
		dev_trap_init(doorbell_assist);
		if (nap_ns < 1000)
			nap_ns = 1000;
		if (idle_max_ns < nap_ns)
			idle_max_ns = nap_ns;
		err = wire_open(&wire_ops, &dev_eng.now);
		if (err) {
			free(dc);
			return err;
		}
		dev_grant_init();
		dev_eng.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		dev_guard_init();
		atomic_store(&engine_stop, false);
		err = emu_thread_create(&engine_thread, NULL, engine_main, NULL);
		if (err) {
			dev_guard_fini();
			wire_close();
			if (dev_eng.kick_fd >= 0)
				emu_real_close(dev_eng.kick_fd);
			dev_eng.kick_fd = -1;
			free(dc);
			return err;
		}
		engine_running = true;
	}
	dc->next = dev_eng.ctxs;
	dev_eng.ctxs = dc;
	ctx->dev_priv = dc;
	nctx++;
	dev_watch_changed();
	return 0;
}

/*
 * The parent's QPs, CQs and contexts stay reachable from the orphaned
 * contexts (kernel/objects.c), and nothing here runs them: the engine is a
 * thread the child does not have.
 */
void emu_dev_disown_locked(void)
{
	if (!engine_running)
		return;
	dev_trap_fini_locked();
	wire_forget();
	dev_grant_forget_parent();
	free(dev_eng.watch);
	if (dev_eng.kick_fd >= 0)
		emu_real_close(dev_eng.kick_fd);
	memset(&dev_eng, 0, sizeof(dev_eng));
	dev_eng.kick_fd = -1;
	engine_running = false;
	nctx = 0;
}

void emu_dev_ctx_fini(struct emu_ctx *ctx)
{
	struct dev_ctx *dc = ctx->dev_priv;
	bool last;

	emu_lock_acquire();
	dev_memic_ctx_fini_locked(ctx);
	if (dc) {
		for (struct dev_ctx **pp = &dev_eng.ctxs; *pp; pp = &(*pp)->next)
			if (*pp == dc) {
				*pp = dc->next;
				break;
			}
		ctx->dev_priv = NULL;
		free(dc->bf_qps);
		free(dc->uar_cqs);
		free(dc);
		nctx--;
		dev_watch_changed();
	}
	last = engine_running && nctx == 0;
	if (last)
		engine_running = false;
	emu_lock_release();
	if (!last)
		return;

	atomic_store(&engine_stop, true);
	dev_kick();
	pthread_join(engine_thread, NULL);
	emu_lock_acquire();
	dev_grant_fini();
	dev_trap_fini_locked();
	wire_close();
	dev_guard_fini();
	free(dev_eng.watch);
	dev_eng.watch = NULL;
	dev_eng.nwatch = dev_eng.watch_cap = 0;
	emu_lock_release();
	emu_real_close(dev_eng.kick_fd);
	dev_eng.kick_fd = -1;
}
