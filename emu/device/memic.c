/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * memic.c - MEMIC operations: the addresses mlx5dv_dm_map_op_addr() maps,
 * through which each access is an atomic operation on device memory.
 *
 * On a ConnectX they are a window of the MEMIC BAR: a 1-byte store to
 * offset n of the increment window adds the stored value to byte n of the
 * DM, a 1-byte load from the test-and-set window returns byte n and sets
 * it to 0xff, each done by the device as one operation, so threads and
 * processes may race on a byte (rdma-core's tests/test_mlx5_dm_ops.py:
 * two increments then two test-and-sets read 2, then 255).  Memory cannot
 * do that: the window is inaccessible anonymous memory (kernel/mmap.c,
 * interpose/preload.c), and each access faults into this handler, which
 * decodes the instruction (store.c), does the operation on our view of
 * the DM's pages with an atomic of its own, writes a load's register and
 * steps over it.
 *
 * What the device memory caps offer is the operation in its direction
 * and 1-byte accesses (devx.c); any other access - a load from the
 * increment window, a store to the test-and-set one, a wider one, one
 * after the device was closed - reads all ones and writes nothing, as a
 * PCIe read that nothing answers, and the process goes on.  A DM freed
 * while a window shows it keeps its pages, and the window works, until
 * the last such window is unmapped: the kernel's mmap entries hold a
 * reference on the MEMIC (mlx5_ib's dm.c).  An instruction the
 * decoder does not know is the one thing left to the application's own
 * SIGSEGV handling (the default kills it), said once on stderr.
 *
 * The windows live in a small table that the fault handler reads without
 * our lock: each slot has a sequence count, odd while it changes, and a
 * handler that sees it move lets the instruction fault again.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "device.h"

#define MEMIC_WINDOWS		64u
#define MEMIC_OP_INCREMENT	0
#define MEMIC_OP_TEST_AND_SET	1

struct memic_window {
	_Atomic unsigned		seq;
	_Atomic uintptr_t		lo, hi;		/* the application's mapping; 0 free */
	uint8_t *_Atomic		bytes;		/* our view of the DM; NULL: gone */
	_Atomic size_t			len;		/* its bytes */
	_Atomic uint8_t			op;
	/* under our lock only: which DM, and whether the window holds its pages */
	const struct emu_ctx		*ctx;
	uint32_t			first_page;
	bool				holds_pages;	/* the DM is freed */
	pid_t				owner;		/* not a child of fork() */
};

static struct memic_window windows[MEMIC_WINDOWS];

static void change_begin(struct memic_window *w)
{
	atomic_fetch_add(&w->seq, 1);
}

static void change_end(struct memic_window *w)
{
	atomic_fetch_add(&w->seq, 1);
}

int emu_dev_memic_mapped(const struct emu_ctx *ctx, uint32_t first_page, uint8_t op,
			 uint8_t *bytes, size_t len, void *addr, size_t maplen)
{
	struct memic_window *w = NULL;

	for (unsigned i = 0; i < MEMIC_WINDOWS && !w; i++)
		if (!atomic_load(&windows[i].lo))
			w = &windows[i];
	if (!w)
		return ENOMEM;	/* twice the windows 32 DMs have, all mapped */
	change_begin(w);
	atomic_store(&w->hi, (uintptr_t)addr + maplen);
	atomic_store(&w->bytes, bytes);
	atomic_store(&w->len, len);
	atomic_store(&w->op, op);
	w->ctx = ctx;
	w->first_page = first_page;
	w->holds_pages = false;
	w->owner = getpid();
	atomic_store(&w->lo, (uintptr_t)addr);
	change_end(w);
	return 0;
}

static bool shows(const struct memic_window *w, const struct emu_ctx *ctx, uint32_t first_page)
{
	return atomic_load(&w->lo) && atomic_load(&w->bytes) && w->ctx == ctx &&
	       w->first_page == first_page;
}

bool emu_dev_dm_freed(const struct emu_dm *dm)
{
	bool held = false;

	for (unsigned i = 0; i < MEMIC_WINDOWS; i++)
		if (shows(&windows[i], dm->obj.ctx, dm->first_page) &&
		    windows[i].owner == getpid()) {
			windows[i].holds_pages = true;
			held = true;
		}
	return held;
}

/*
 * The pages w held go back to the pool when no other window holds them;
 * never by a child of fork(), which shares the pool but not the windows
 * that hold them.
 */
static void let_go(struct memic_window *w)
{
	size_t len = atomic_load(&w->len);
	bool held = w->holds_pages;

	w->holds_pages = false;
	if (!held || w->owner != getpid())
		return;
	for (unsigned i = 0; i < MEMIC_WINDOWS; i++)
		if (windows[i].holds_pages && shows(&windows[i], w->ctx, w->first_page))
			return;
	emu_dm_pages_release(w->ctx, w->first_page,
			     (uint32_t)((len + EMU_PAGE_SIZE - 1) / EMU_PAGE_SIZE));
}

void dev_memic_ctx_fini_locked(const struct emu_ctx *ctx)
{
	for (unsigned i = 0; i < MEMIC_WINDOWS; i++) {
		struct memic_window *w = &windows[i];

		if (!atomic_load(&w->lo) || w->ctx != ctx)
			continue;
		let_go(w);
		change_begin(w);
		atomic_store(&w->bytes, NULL);	/* our view goes with the context */
		change_end(w);
	}
}

static bool overlaps(const struct memic_window *w, const void *a, size_t alen)
{
	uintptr_t lo = atomic_load(&w->lo);

	return lo && alen && (uintptr_t)a < atomic_load(&w->hi) && (uintptr_t)a + alen > lo;
}

void dev_memic_forget(const void *a, size_t alen, const void *b, size_t blen)
{
	bool locked = false;

	for (unsigned i = 0; i < MEMIC_WINDOWS; i++) {
		struct memic_window *w = &windows[i];

		if (!overlaps(w, a, alen) && !overlaps(w, b, blen))
			continue;
		if (!locked) {
			emu_lock_acquire();
			locked = true;
		}
		change_begin(w);
		atomic_store(&w->lo, 0);	/* no longer shows the DM: let_go() looks past it */
		change_end(w);
		let_go(w);
		change_begin(w);
		atomic_store(&w->bytes, NULL);
		change_end(w);
	}
	if (locked)
		emu_lock_release();
}

/* The operation of one access at offset off of a window on bytes. */
static void operate(uint8_t *bytes, size_t len, uint8_t op, size_t off, struct dev_access *acc,
		    uint8_t *loaded)
{
	memset(loaded, 0xff, sizeof(acc->st.data));
	if (!bytes || acc->len != 1 || off >= len)
		return;
	/* the DM's pages are a shared memfd: the atomics serialise processes too */
	if (op == MEMIC_OP_INCREMENT && !acc->load)
		atomic_fetch_add((_Atomic uint8_t *)(void *)(bytes + off), acc->st.data[0]);
	else if (op == MEMIC_OP_TEST_AND_SET && acc->load)
		loaded[0] = atomic_exchange((_Atomic uint8_t *)(void *)(bytes + off), 0xff);
}

bool dev_memic_fault(const void *addr, void *uc)
{
	static const char unknown[] = "rfemu: an instruction the emulator does not decode "
				      "accessed MEMIC operation addresses\n";
	static atomic_bool told;
	uintptr_t a = (uintptr_t)addr;

	for (unsigned i = 0; i < MEMIC_WINDOWS; i++) {
		struct memic_window *w = &windows[i];
		unsigned seq = atomic_load(&w->seq);
		uintptr_t lo = atomic_load(&w->lo);
		uint8_t *bytes = atomic_load(&w->bytes);
		size_t len = atomic_load(&w->len);
		uint8_t op = atomic_load(&w->op), loaded[64];
		struct dev_access acc;

		if (!lo || a < lo || a >= atomic_load(&w->hi))
			continue;
		if ((seq & 1) || atomic_load(&w->seq) != seq)
			return true;	/* changing: the access faults again */
		if (!dev_access_decode(uc, &acc)) {
			/* a signal handler: write(), not stdio */
			if (!atomic_exchange(&told, true) &&
			    emu_real_write(STDERR_FILENO, unknown, sizeof(unknown) - 1) < 0)
				atomic_store(&told, false);
			return false;
		}
		operate(bytes, len, op, a - lo, &acc, loaded);
		dev_access_finish(uc, &acc, loaded);
		return true;
	}
	return false;
}
