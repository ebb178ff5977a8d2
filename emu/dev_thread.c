/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dev_thread.c - the engine: one thread per process that plays the HCA.
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
 * Idling.  While there is work the engine runs flat out.  After the last
 * activity it keeps polling for RFEMU_SPIN_US (default 50 us), yielding the
 * CPU between polls, then sleeps in ppoll() on its sockets and a wake-up
 * eventfd with a timeout that doubles from 5 us to RFEMU_IDLE_MAX_US
 * (default 1000 us).  Packets from other hosts and commands (a QP moved to
 * ERR, say) wake it at once; a doorbell rung on an idle device waits for the
 * end of the current sleep, i.e. at most RFEMU_IDLE_MAX_US plus timer slack.
 *
 * RFEMU_DEVICE=off never starts the engine: the fake kernel works as usual
 * but nothing rung is executed and no CQE is written. Benchmarks of the
 * data path use it to play the device themselves, with no second thread
 * touching the queues.
 */
#include <errno.h>
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
#include <time.h>
#include <unistd.h>

#include "dev.h"

struct dev_engine dev_eng;

static pthread_t engine_thread;
static bool engine_running;
static atomic_bool engine_stop;
static int kick_fd = -1;
static unsigned nctx;
static uint64_t spin_ns = 50000;
static uint64_t idle_max_ns = 1000000;

uint64_t dev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dev_kick(void)
{
	uint64_t one = 1;

	if (kick_fd >= 0 && write(kick_fd, &one, sizeof(one)) < 0) {
		/* counter saturated: the engine is awake anyway */
	}
}

void dev_qp_set_busy(struct dev_qp *dq)
{
	if (dq->busy)
		return;
	dq->busy = true;
	dq->next_busy = dev_eng.busy;
	dev_eng.busy = dq;
}

/* ---- doorbell watching ---------------------------------------------------- */

static void watch_add(_Atomic uint64_t *addr, struct dev_ctx *dctx,
		      uint32_t index, bool is_cq)
{
	if (dev_eng.nwatch == dev_eng.watch_cap) {
		unsigned cap = dev_eng.watch_cap ? dev_eng.watch_cap * 2 : 64;
		struct dev_watch *w = realloc(dev_eng.watch, cap * sizeof(*w));

		if (!w)
			return;
		dev_eng.watch = w;
		dev_eng.watch_cap = cap;
	}
	dev_eng.watch[dev_eng.nwatch++] = (struct dev_watch){ addr, dctx, index, is_cq };
}

void dev_watch_rebuild_locked(void)
{
	static const enum emu_mmap_cmd views[] = { EMU_MMAP_REGULAR, EMU_MMAP_NC };

	dev_eng.nwatch = 0;
	for (struct dev_ctx *dc = dev_eng.ctxs; dc; dc = dc->next) {
		for (uint32_t b = 0; b < DEV_ARRAY_SIZE(dc->bf_qps); b++) {
			if (!dc->bf_qps[b])
				continue;
			for (unsigned v = 0; v < 2; v++)
				for (unsigned half = 0; half < 2; half++)
					watch_add((_Atomic uint64_t *)(emu_bfreg_addr(dc->ctx, views[v], b) +
								       half * EMU_BF_REG_SIZE / 2),
						  dc, b, false);
		}
		for (uint32_t u = 0; u < EMU_MAX_UARS; u++) {
			if (!dc->uar_cqs[u])
				continue;
			for (unsigned v = 0; v < 2; v++)
				watch_add((_Atomic uint64_t *)(emu_uar_page(dc->ctx, views[v], u) +
							       EMU_CQ_DB_OFFSET),
					  dc, u, true);
		}
	}
	dev_eng.watch_dirty = false;
}

static void sq_doorbell(struct dev_ctx *dc, uint32_t bfreg)
{
	/*
	 * The doorbell names one QP (its ctrl segment's QPN), but a shared
	 * bfreg can have a second doorbell overwrite the first before we look;
	 * every QP on the register re-reads its record instead.  A QP that
	 * only updated its record never reaches here unless a neighbour rang.
	 */
	for (struct dev_qp *dq = dc->bf_qps[bfreg]; dq; dq = dq->next_on_bf) {
		uint32_t lim = dev_be32((const uint8_t *)(uintptr_t)dq->qp->dbrec + 4) & 0xffff;

		if (lim != (dq->sq_next & 0xffff) || dq->sq_rung) {
			dq->sq_limit = lim;
			dq->sq_rung = true;
			dev_qp_set_busy(dq);
		}
	}
}

static void cq_doorbell(struct dev_ctx *dc, uint32_t uar, uint64_t v)
{
	uint32_t word = be32toh((uint32_t)v);
	uint32_t cqn = be32toh((uint32_t)(v >> 32)) & 0xffffff;
	struct emu_cq *cq = emu_cq_by_cqn_locked(cqn);
	struct dev_cq *dcq = dev_cq_of(cq);

	if (dcq)
		dev_cq_arm_doorbell(dcq, word);
	for (struct dev_cq *o = dc->uar_cqs[uar]; o; o = o->next_on_uar)
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
			cq_doorbell(w->dctx, w->index, v);
		else
			sq_doorbell(w->dctx, w->index);
	}
	return hits;
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

/* Receives posted to a QP in ERR after the flush: no doorbell tells us. */
static void slow_tasks(void)
{
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next)
		if (dq->qp->attr.state == IBV_QPS_ERR) {
			dev_rq_flush(dq);
			if (dq->sq_rung)
				dev_qp_set_busy(dq);
		}
}

static unsigned iterate(void)
{
	unsigned work = 0;

	if (dev_eng.watch_dirty)
		dev_watch_rebuild_locked();
	work += scan_doorbells();
	for (unsigned round = 0; round < 16; round++) {
		unsigned n = 0;

		if (dev_eng.busy)
			n += run_busy();
		n += dev_wire_poll();
		dev_resp_flush_acks();
		n += dev_wire_poll();
		if (dev_eng.timers)
			dev_rc_timers();
		work += n;
		if (!n && !dev_eng.busy)
			break;
	}
	return work;
}

static void idle_wait(uint64_t ns)
{
	struct pollfd fds[80];
	unsigned n = 0;
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	fds[n++] = (struct pollfd){ .fd = kick_fd, .events = POLLIN };
	emu_lock_acquire();
	n += dev_wire_pollfds(fds + n, DEV_ARRAY_SIZE(fds) - n);
	emu_lock_release();
	if (ppoll(fds, n, &ts, NULL) > 0 && (fds[0].revents & POLLIN)) {
		uint64_t v;

		if (read(kick_fd, &v, sizeof(v)) < 0) {
			/* nothing to drain */
		}
	}
}

/*
 * RFEMU_SCHED_FIFO=1 runs the engine as a real-time thread (if permitted):
 * a doorbell or packet then preempts a busy-polling application thread at
 * once instead of waiting for its time slice, which matters when there are
 * fewer cores than spinning threads.  It never spins in that mode (it would
 * starve the application on its core); it sleeps between polls instead.
 */
static void engine_sched_setup(void)
{
	struct sched_param sp = { .sched_priority = 1 };

	if (getenv("RFEMU_SCHED_FIFO") &&
	    !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		spin_ns = 0;
}

static void *engine_main(void *arg)
{
	uint64_t last_work, backoff = 5000, last_slow = 0;
	sigset_t all;

	(void)arg;
	/* signals belong to the application's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* short sleeps must stay short: the default 50 us slack would dominate */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	engine_sched_setup();

	last_work = dev_now_ns();
	while (!atomic_load_explicit(&engine_stop, memory_order_relaxed)) {
		unsigned work;
		uint64_t now;

		emu_lock_acquire();
		now = dev_eng.now = dev_now_ns();
		work = iterate();
		if (now - last_slow > 1000000) {
			slow_tasks();
			last_slow = now;
		}
		if (dev_eng.busy)
			work++;
		emu_lock_release();

		if (work) {
			last_work = now;
			backoff = 5000;
			continue;
		}
		if (now - last_work < spin_ns) {
			sched_yield();
			continue;
		}
		/* timers (retransmit, RNR, delayed packets) bound the sleep */
		{
			uint64_t sleep = backoff;

			if (dev_eng.timers || dev_wire_has_delayed())
				sleep = 5000;
			idle_wait(sleep);
			if (backoff < idle_max_ns)
				backoff = backoff * 2 > idle_max_ns ? idle_max_ns : backoff * 2;
		}
	}
	return NULL;
}

static uint64_t env_us(const char *name, uint64_t def_ns)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) * 1000 : def_ns;
}

/* ---- lifecycle ------------------------------------------------------------ */

static bool device_off(void)
{
	const char *s = getenv("RFEMU_DEVICE");

	return s && !strcmp(s, "off");
}

int emu_dev_ctx_init(struct emu_ctx *ctx)
{
	struct dev_ctx *dc = calloc(1, sizeof(*dc));
	int err;

	if (!dc)
		return ENOMEM;
	dc->ctx = ctx;
	if (!engine_running && !device_off()) {
		dev_fault_load();
		spin_ns = env_us("RFEMU_SPIN_US", 50000);
		idle_max_ns = env_us("RFEMU_IDLE_MAX_US", 1000000);
		if (idle_max_ns < 1000)
			idle_max_ns = 1000;
		err = dev_wire_open();
		if (err) {
			free(dc);
			return err;
		}
		kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		atomic_store(&engine_stop, false);
		err = pthread_create(&engine_thread, NULL, engine_main, NULL);
		if (err) {
			dev_wire_close();
			if (kick_fd >= 0)
				close(kick_fd);
			kick_fd = -1;
			free(dc);
			return err;
		}
		engine_running = true;
	}
	dc->next = dev_eng.ctxs;
	dev_eng.ctxs = dc;
	ctx->dev_priv = dc;
	nctx++;
	dev_eng.watch_dirty = true;
	return 0;
}

void emu_dev_ctx_fini(struct emu_ctx *ctx)
{
	struct dev_ctx *dc = ctx->dev_priv;
	bool last;

	emu_lock_acquire();
	if (dc) {
		for (struct dev_ctx **pp = &dev_eng.ctxs; *pp; pp = &(*pp)->next)
			if (*pp == dc) {
				*pp = dc->next;
				break;
			}
		ctx->dev_priv = NULL;
		free(dc);
		nctx--;
		dev_eng.watch_dirty = true;
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
	dev_wire_close();
	free(dev_eng.watch);
	dev_eng.watch = NULL;
	dev_eng.nwatch = dev_eng.watch_cap = 0;
	emu_lock_release();
	close(kick_fd);
	kick_fd = -1;
}
