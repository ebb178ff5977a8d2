/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * trap.c - doorbells that wake a sleeping engine.
 *
 * On a ConnectX a doorbell is a write to MMIO and the HCA sees it at once.
 * Here it is a plain store into memory (the UAR pages of the command memfd),
 * which wakes nobody: an engine that sleeps must look again later, and how
 * long it sleeps is the doorbell's latency.  So, before the engine goes to
 * sleep, it write-protects the application's mappings of the UAR pages that
 * carry a watched register (a QP's bfreg, a CQ's arm doorbell).  The
 * application's next doorbell store faults; the SIGSEGV handler (guard.c
 * calls dev_trap_fault()) makes the pages writable again, notes the page
 * and kicks the engine, and returns; the store then runs again and lands.
 * While the engine is awake the pages stay writable and doorbells cost
 * nothing; a sleeping engine costs one fault on the first doorbell (8 us on
 * the 2-core VM this was measured on) and needs no periodic look at the
 * doorbells.  RFEMU_DOORBELL_TRAP=0 turns this off: the engine then naps
 * and looks (engine.c, "Idling").
 *
 * The engine need not wait for the faulting store itself.  A send queue
 * doorbell only names the register: its meaning is the doorbell record,
 * which libmlx5 and rdmafast write before the doorbell (the HCA may read it
 * as soon as it sees the register written), and the kick orders that record
 * before the engine's look.  So the engine treats every bfreg of the noted
 * page as rung (dev_trap_take_locked()) - a doorbell record that did not
 * move is a no-op.  A CQ arm doorbell carries its command in the store, and
 * is executed when it lands.
 *
 * Only the application's mappings are protected, never our own view of the
 * memfd (ctx->map), which the engine reads and clears.  The interposer
 * checks mmap() of the memfd but keeps no record of it (interpose/preload.c),
 * so those mappings are found in /proc/self/maps by the memfd's inode and
 * file offset, each time the set of watched pages changes.  A mapping can change under us: munmap(),
 * mmap(MAP_FIXED), mremap() and mprotect() near a protected page are done
 * under our lock (emu_dev_vm_change(), from the interposer), so we never
 * protect an address that has been given to something else, nor undo the
 * application's own protection.
 *
 * Better still, the handler writes the store itself (store.c decodes the
 * instruction: its width, its data, its length), into our view of the page,
 * and resumes the thread after it (on x86-64 without rt_sigreturn:
 * resume.c).  The page then stays protected: the next doorbell faults as
 * well, with no mprotect() in between, and the device's
 * pass runs at once in the thread that rang (the engine's assist, given
 * to dev_trap_init()), as a ConnectX takes a doorbell the moment it is
 * written.  A fault costs that thread 1.6 us on the VM measured on; letting
 * the store through and protecting the page again after it cost 29 us.  A
 * store the decoder does not know (and every store on an architecture
 * without one) is let through as above.  RFEMU_DOORBELL_ASSIST=0 lets them
 * all through.
 *
 * The handler runs in whatever thread stored, without our lock, while the
 * engine may be changing the ranges or their protection: `gen` is odd while
 * it does, and a fault then is simply retried; `inflight` counts handlers
 * between their look at `gen` and their last use of the ranges, and a
 * change waits for it to drain (each side stores, then loads the other's
 * word, all sequentially consistent).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <signal.h>
#include <ucontext.h>

#include "device.h"

#define TRAP_MAX_RANGES	64u
/* Instructions of a BlueFlame copy one fault goes on with: 8 a basic block. */
#define TRAP_COPY_STEPS	64u
#define TRAP_PAGE	((uintptr_t)EMU_PAGE_SIZE)

/* Application pages [lo, hi), showing the memfd of dctx from offset off. */
struct trap_range {
	uintptr_t	lo, hi;
	uint64_t	off;
	struct dev_ctx	*dctx;
	int		prot;		/* the application's protection */
};

static struct trap_range ranges[TRAP_MAX_RANGES];
static unsigned nranges;
/*
 * What one mprotect() can cover: ranges that touch in the address space and
 * have the same protection, whatever their files and offsets (mprotect()
 * crosses mappings).  libmlx5 maps each UAR page on its own, usually next
 * to the last, and on the VM this was measured on an mprotect() costs 6 us,
 * 24-40 us while another CPU runs (the TLB shootdown waits for it): a QP's
 * and a CQ's doorbell pages armed and disarmed together halve that.
 */
struct trap_run {
	uintptr_t	lo, hi;
	int		prot;
};
static struct trap_run runs[TRAP_MAX_RANGES];
static unsigned nruns;
/* rfemu_dev_stats(); the fault handler counts without the lock */
static _Atomic uint64_t n_faults, n_mprotects, n_stores;
static atomic_uint gen;
static atomic_uint inflight;
static atomic_bool armed;
static _Atomic uintptr_t rung;	/* the page of the last doorbell fault */
static bool engine_armed;	/* the engine armed it and has not seen it fire */
static bool enabled;
static bool write_stores;	/* the handler writes the stores it knows (store.c) */
static atomic_bool let_through;	/* the last doorbell fault was not one of them */
/*
 * Every application page of a watched register, trapped or not, lies in
 * [span_lo, span_hi): emu_dev_vm_change()'s quick test.
 */
static _Atomic uintptr_t span_lo, span_hi;

/* What the engine runs for a doorbell the handler wrote (dev_trap_init()). */
static void (*doorbell_assist)(void);

void dev_trap_init(void (*assist)(void))
{
	doorbell_assist = assist;
	const char *s = getenv("RFEMU_DOORBELL_TRAP");
	const char *w = getenv("RFEMU_DOORBELL_ASSIST");

	enabled = !s || !*s || atoi(s) != 0;
	write_stores = enabled && DEV_STORE_DECODER && (!w || !*w || atoi(w) != 0);
}

/*
 * Whether the doorbells rung lately were written by the handler: a store it
 * cannot decode is let through, and the engine then treats the doorbells as
 * it does without the decoder (engine.c: on a contended CPU it does not
 * protect the pages again after each).
 */
bool dev_trap_writes_stores(void)
{
	return write_stores && !atomic_load_explicit(&let_through, memory_order_relaxed);
}

uint64_t dev_trap_stores(void)
{
	return atomic_load_explicit(&n_stores, memory_order_relaxed);
}

static bool trap_enabled(void)
{
	return enabled && nranges;
}

/* The engine (under emu_lock) starts changing ranges or protections. */
static void change_begin(void)
{
	atomic_fetch_add(&gen, 1);
	while (atomic_load(&inflight))
		sched_yield();
}

static void change_end(void)
{
	atomic_fetch_add(&gen, 1);
}

static void protect_all(bool trap)
{
	atomic_fetch_add_explicit(&n_mprotects, nruns, memory_order_relaxed);
	for (unsigned i = 0; i < nruns; i++)
		emu_real_mprotect((void *)runs[i].lo, runs[i].hi - runs[i].lo,
				  trap ? PROT_READ : runs[i].prot);
}

/* Within change_begin/end, after the ranges changed: the runs anew. */
static void ranges_changed(void)
{
	nruns = 0;
	for (unsigned i = 0; i < nranges; i++) {
		struct trap_run *t = nruns ? &runs[nruns - 1] : NULL;

		if (t && t->hi == ranges[i].lo && t->prot == ranges[i].prot)
			t->hi = ranges[i].hi;
		else
			runs[nruns++] = (struct trap_run){ ranges[i].lo, ranges[i].hi,
							   ranges[i].prot };
	}
}

/* Within change_begin/end: give the pages back their protection. */
static void disarm_changing(void)
{
	engine_armed = false;
	if (atomic_exchange(&armed, false))
		protect_all(false);
}

bool dev_trap_arm_locked(void)
{
	if (!trap_enabled())
		return false;
	/*
	 * No change_begin(): the ranges stay as they are.  A fault while the
	 * pages are being protected finds `armed` and unprotects them all; one
	 * protected after that faults once more, on its own (dev_trap_fault).
	 */
	if (!atomic_exchange(&armed, true))
		protect_all(true);
	engine_armed = true;
	return true;
}

static void disarm_locked(void)
{
	if (!atomic_load(&armed))
		return;
	change_begin();
	disarm_changing();
	change_end();
}

void dev_trap_disarm_locked(void)
{
	disarm_locked();
}

/*
 * Does a store to [off, off + len) of a UAR page reach a doorbell: the CQ
 * arm register, or the first 8 bytes of a BlueFlame half (what the engine
 * watches, engine.c)?  The rest of a BlueFlame copy does not ring: the WQE
 * is read from the send queue.
 */
static bool rings(uintptr_t off, unsigned len)
{
	uintptr_t end = off + len;

	if (off < EMU_CQ_DB_OFFSET + 8 && end > EMU_CQ_DB_OFFSET)
		return true;
	for (uintptr_t w = EMU_BF_OFFSET; w < TRAP_PAGE; w += EMU_BF_REG_SIZE / 2)
		if (off < w + 8 && end > w)
			return true;
	return false;
}

/*
 * A store written into our view, in atomic pieces: the engine exchanges the
 * doorbell words atomically (engine.c), and an aligned 8-byte piece is what
 * the doorbell is.
 */
static void view_write(uint8_t *dst, const uint8_t *src, unsigned len)
{
	for (unsigned i = 0; i < len;) {
		if (!((uintptr_t)(dst + i) & 7) && len - i >= 8) {
			uint64_t v;

			memcpy(&v, src + i, 8);
			__atomic_store_n((uint64_t *)(void *)(dst + i), v, __ATOMIC_RELAXED);
			i += 8;
		} else {
			__atomic_store_n(dst + i, src[i], __ATOMIC_RELAXED);
			i++;
		}
	}
}

/*
 * The faulting store at a, in range r, written into our view of the memfd
 * (the same file, the page the application would have reached) and the
 * instruction stepped over: the page stays protected, and the next doorbell
 * faults too, with no mprotect() in between.  False if the instruction is
 * not a store store.c knows, or reaches past the page.
 */
static bool write_store(const struct trap_range *r, uintptr_t a, void *uc, bool *rang)
{
	struct dev_store st;
	uintptr_t off = a & (TRAP_PAGE - 1);
	uint8_t *view;

	if (!dev_store_decode(uc, &st) || off + st.len > TRAP_PAGE)
		return false;
	view = (uint8_t *)r->dctx->ctx->map + r->off + (a - r->lo);
	view_write(view, st.data, st.len);
	dev_store_skip(uc, &st);
	atomic_fetch_add_explicit(&n_faults, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_stores, 1, memory_order_relaxed);
	*rang = rings(off, st.len);
	/*
	 * A BlueFlame copy goes on: its next stores would fault one by one
	 * (1.6 us each), so the rest of it is written here too, as long as
	 * the instructions are its loads from the WQE and its stores into
	 * this page.
	 */
	for (unsigned k = 0; k < TRAP_COPY_STEPS; k++) {
		uintptr_t ea;
		int step = dev_store_next(uc, &st, &ea);

		if (step == DEV_STEP_LOAD)
			continue;
		if (step != DEV_STEP_STORE || ea < r->lo || ea >= r->hi ||
		    (ea & (TRAP_PAGE - 1)) + st.len > TRAP_PAGE || (ea ^ a) & ~(TRAP_PAGE - 1))
			break;
		view_write((uint8_t *)r->dctx->ctx->map + r->off + (ea - r->lo), st.data, st.len);
		dev_store_skip(uc, &st);
		*rang |= rings(ea & (TRAP_PAGE - 1), st.len);
	}
	if (*rang)
		atomic_store(&rung, a & ~(TRAP_PAGE - 1));
	return true;
}

/*
 * Stack a doorbell pass may take: its deepest chain of frames (the parse
 * of a WQE, a packet's delivery to a responder, a CQE) is some 12 KiB by
 * gcc's -fstack-usage, and the signal frame with an AVX-512 XSAVE area
 * 3 KiB more; UCX gives its threads a 145 KiB alternate stack.
 */
#define TRAP_ASSIST_STACK	(64u << 10)

static bool roomy_stack(const void *ucv)
{
	const ucontext_t *uc = ucv;

	return !uc->uc_stack.ss_size || (uc->uc_stack.ss_flags & SS_DISABLE) ||
	       uc->uc_stack.ss_size >= TRAP_ASSIST_STACK;
}

bool dev_trap_fault(const void *addr, void *uc)
{
	uintptr_t a = (uintptr_t)addr;
	const struct trap_range *r = NULL;
	bool rang;

	atomic_fetch_add(&inflight, 1);
	if (atomic_load(&gen) & 1) {
		/* the engine is changing the ranges: run the store again */
		atomic_fetch_sub(&inflight, 1);
		return true;
	}
	for (unsigned i = 0; i < nranges && !r; i++)
		if (a >= ranges[i].lo && a < ranges[i].hi)
			r = &ranges[i];
	if (r && write_stores && (r->prot & PROT_WRITE) && write_store(r, a, uc, &rang)) {
		atomic_store_explicit(&let_through, false, memory_order_relaxed);
		atomic_fetch_sub(&inflight, 1);
		if (!rang)
			return true;
		/*
		 * The store has landed: the device's pass, here, unless this
		 * handler runs on an alternate signal stack too small for it
		 * (Go and Rust give each thread one of a few pages): the
		 * kernel copies the thread's sigaltstack() settings into
		 * uc_stack, a size of 0 when it has none.
		 */
		if (roomy_stack(uc) && doorbell_assist)
			doorbell_assist();
		else
			dev_kick();
		return true;
	}
	if (r) {
		if (write_stores)
			atomic_store_explicit(&let_through, true, memory_order_relaxed);
		if (atomic_exchange(&armed, false))
			protect_all(false);
		else {	/* another thread is unprotecting them: ours now */
			atomic_fetch_add_explicit(&n_mprotects, 1, memory_order_relaxed);
			emu_real_mprotect((void *)(a & ~(TRAP_PAGE - 1)), TRAP_PAGE, r->prot);
		}
		atomic_fetch_add_explicit(&n_faults, 1, memory_order_relaxed);
		atomic_store(&rung, a & ~(TRAP_PAGE - 1));
		dev_kick();
	}
	atomic_fetch_sub(&inflight, 1);
	return r != NULL;
}

void dev_trap_counts(uint64_t *faults, uint64_t *mprotects)
{
	*faults = atomic_load_explicit(&n_faults, memory_order_relaxed);
	*mprotects = atomic_load_explicit(&n_mprotects, memory_order_relaxed);
}

bool dev_trap_take_locked(struct dev_ctx **dctx, uint64_t *off)
{
	uintptr_t a;
	bool fired = engine_armed && !atomic_load(&armed);

	if (fired)
		engine_armed = false;
	a = atomic_exchange(&rung, 0);
	*dctx = NULL;
	for (unsigned i = 0; a && i < nranges; i++)
		if (a >= ranges[i].lo && a < ranges[i].hi) {
			*dctx = ranges[i].dctx;
			*off = ranges[i].off + (a - ranges[i].lo);
		}
	return fired || *dctx;
}

/* ---- the ranges ------------------------------------------------------------ */

struct trap_map {
	uintptr_t	lo, hi;
	uint64_t	off;
	unsigned long	ino;
	int		prot;
};

/* The mappings of memfds in /proc/self/maps; a malloc'ed array, *n of them. */
static struct trap_map *read_maps(unsigned *n)
{
	struct trap_map *m = NULL;
	unsigned cap = 0;
	char line[512];
	FILE *f = emu_real_fopen("/proc/self/maps", "re");

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		char perm[5];

		if (!strstr(line, "/memfd:") ||
		    sscanf(line, "%lx-%lx %4s %lx %*x:%*x %lu", &lo, &hi, perm,
			   &off, &ino) != 5)
			continue;
		if (*n == cap) {
			struct trap_map *g;

			cap = cap ? cap * 2 : 32;
			g = realloc(m, cap * sizeof(*m));
			if (!g)
				break;
			m = g;
		}
		m[(*n)++] = (struct trap_map){
			lo, hi, off, ino,
			(perm[0] == 'r' ? PROT_READ : 0) | (perm[1] == 'w' ? PROT_WRITE : 0),
		};
	}
	fclose(f);
	return m;
}

static bool range_add(struct trap_range *r, unsigned *n, const struct trap_range *p)
{
	for (unsigned i = 0; i < *n; i++)
		if (r[i].lo == p->lo)
			return true;
	if (*n == TRAP_MAX_RANGES)
		return false;
	r[(*n)++] = *p;
	return true;
}

static int range_cmp(const void *a, const void *b)
{
	const struct trap_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The application's pages for the watched registers: each watch address is
 * in our view of some context's memfd; every other mapping of that memfd
 * page is the application's.  Returns how many ranges, 0 if too many.
 * [*lo, *hi) spans every such page, the read-only ones too: the
 * application may make those writable, and they are then to be trapped.
 */
static unsigned collect(struct trap_range *r, const struct trap_map *m, unsigned nm,
			uintptr_t *lo, uintptr_t *hi)
{
	unsigned n = 0, k = 0;

	*lo = UINTPTR_MAX;
	*hi = 0;

	for (unsigned w = 0; w < dev_eng.nwatch; w++) {
		uintptr_t a = (uintptr_t)dev_eng.watch[w].addr;
		struct dev_ctx *dc = dev_eng.ctxs;
		uint64_t pg;
		struct stat st;

		/* the context whose view the watch is in */
		while (dc && (a < (uintptr_t)dc->ctx->map ||
			      a - (uintptr_t)dc->ctx->map >= EMU_CMDFD_SIZE))
			dc = dc->next;
		if (!dc || emu_real_fstat(dc->ctx->cmd_fd, &st))
			return 0;
		pg = (a - (uintptr_t)dc->ctx->map) & ~(uint64_t)(TRAP_PAGE - 1);
		for (unsigned i = 0; i < nm; i++) {
			struct trap_range p;

			if (m[i].ino != st.st_ino || m[i].lo == (uintptr_t)dc->ctx->map ||
			    pg < m[i].off || pg >= m[i].off + (m[i].hi - m[i].lo))
				continue;
			p = (struct trap_range){
				.lo = m[i].lo + (uintptr_t)(pg - m[i].off),
				.off = pg, .dctx = dc, .prot = m[i].prot,
			};
			p.hi = p.lo + TRAP_PAGE;
			*lo = p.lo < *lo ? p.lo : *lo;
			*hi = p.hi > *hi ? p.hi : *hi;
			/* a mapping that cannot store rings nothing */
			if (!(m[i].prot & PROT_WRITE))
				continue;
			if (!range_add(r, &n, &p))
				return 0;	/* too many: no trapping, the engine looks */
		}
	}
	qsort(r, n, sizeof(*r), range_cmp);
	/* one range for pages that follow each other in both spaces (the runs
	 * of ranges_changed() then join those that touch in the address space) */
	for (unsigned i = 0; i < n; i++) {
		struct trap_range *t = k ? &r[k - 1] : NULL;

		if (t && t->hi == r[i].lo && t->dctx == r[i].dctx && t->prot == r[i].prot &&
		    t->off + (t->hi - t->lo) == r[i].off)
			t->hi = r[i].hi;
		else
			r[k++] = r[i];
	}
	return k;
}

/*
 * Replace the ranges (engine, under emu_lock), every page given back first;
 * [lo, hi) for emu_dev_vm_change().
 */
static void install_ranges(const struct trap_range *r, unsigned n, uintptr_t lo, uintptr_t hi)
{
	change_begin();
	disarm_changing();
	if (n)
		memcpy(ranges, r, n * sizeof(*r));
	nranges = n;
	ranges_changed();
	atomic_store(&span_lo, lo);
	atomic_store(&span_hi, hi);
	atomic_store(&rung, 0);
	change_end();
}

void dev_trap_rebuild_locked(void)
{
	struct trap_range next[TRAP_MAX_RANGES];
	struct trap_map *m;
	unsigned nm = 0, n = 0;
	uintptr_t lo = 0, hi = 0;

	/* /proc/self/maps must show the application's own protections */
	disarm_locked();
	if (enabled && dev_eng.nwatch) {
		m = read_maps(&nm);
		n = collect(next, m, nm, &lo, &hi);
		free(m);
	}
	install_ranges(next, n, lo, hi);
}

void dev_trap_fini_locked(void)
{
	install_ranges(NULL, 0, 0, 0);
}

/*
 * The application changes its mappings over a (and b, for mremap()'s new
 * place): munmap(), mmap(MAP_FIXED), mremap() or mprotect().  If a range
 * we protect lies there, give every page back and forget those ranges, and
 * keep the lock until the change is made (emu_dev_vm_changed()), so that no
 * rebuild reads the mappings half-changed; the rebuild after it finds what
 * is there now, with the application's new protection.  Without this, our
 * next arming would protect whatever the application put there, and our
 * next disarming would undo its mprotect().  Most calls are far from every
 * range and go straight through.
 */
static bool overlaps(uintptr_t lo, uintptr_t hi, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	/* a length that wraps is the kernel's EINVAL: any answer is harmless */
	uintptr_t b = a + len < a ? UINTPTR_MAX : a + len;

	return len && a < hi && b > lo;
}

bool emu_dev_vm_change(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t lo = atomic_load(&span_lo), hi = atomic_load(&span_hi);
	unsigned k = 0;

	dev_memic_forget(a, alen, b, blen);
	if (!overlaps(lo, hi, a, alen) && !overlaps(lo, hi, b, blen))
		return false;
	emu_lock_acquire();
	change_begin();
	disarm_changing();
	for (unsigned i = 0; i < nranges; i++)
		if (!overlaps(ranges[i].lo, ranges[i].hi, a, alen) &&
		    !overlaps(ranges[i].lo, ranges[i].hi, b, blen))
			ranges[k++] = ranges[i];
	nranges = k;
	ranges_changed();
	change_end();
	return true;
}

void emu_dev_vm_changed(void)
{
	dev_watch_changed();	/* the engine rebuilds them from what is mapped */
	emu_lock_release();
}
