/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * verbs.c - the libibverbs calls seen: ibv_poll_cq() and ibv_req_notify_cq().
 *
 * Both are inline functions of <infiniband/verbs.h> that call the context's
 * ops (poll_cq, req_notify_cq), which libmlx5 sets when the context is
 * opened.  ibv_open_device() and ibv_import_device() are interposed to put
 * wrappers there: when the provider's poll finds the CQ empty, the device
 * runs a pass in the polling thread (emu_dev_poll_assist(),
 * device/engine.c) and the provider polls once more.  A busy-polling
 * application then executes its own doorbells and receives its own packets,
 * instead of waiting for the engine thread to be scheduled on a CPU that
 * the application holds.  An arm tells the device that the application is
 * going to sleep instead (emu_dev_poll_arm()).  Nothing else changes: the
 * CQEs are the device's, read by libmlx5's poll, and the arm is libmlx5's.
 *
 * Only a poll through the ops is seen.  rdmafast's and UCX's polls are
 * inline reads of the CQ, as mlx5dv users' are, and contexts from
 * mlx5dv_open_device() or a libibverbs found by dlopen()/dlsym() keep the
 * provider's poll: all of them are served by the engine thread as before.
 * No wrapper is installed when the device does not run (RFEMU_DEVICE=off)
 * or RFEMU_POLL_ASSIST_US=0.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <infiniband/verbs.h>

#include "kernel/kernel.h"

typedef int poll_fn(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
typedef int arm_fn(struct ibv_cq *cq, int solicited_only);

/* The contexts wrapped and their provider's calls; a context beyond them is not wrapped. */
#define HOOKED_MAX	64
static struct {
	struct ibv_context *_Atomic	ctx;	/* published after the calls */
	poll_fn				*poll;
	arm_fn				*arm;
} hooked[HOOKED_MAX];
static _Atomic unsigned nhooked;		/* entries ever used */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

static int slot_of(const struct ibv_context *ctx)
{
	unsigned n = atomic_load_explicit(&nhooked, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (atomic_load_explicit(&hooked[i].ctx, memory_order_acquire) == ctx)
			return (int)i;
	return -1;	/* its context was closed */
}

static int assisted_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	int i = slot_of(cq->context), n;

	if (i < 0)
		return -1;
	n = hooked[i].poll(cq, num_entries, wc);
	if (n == 0 && emu_dev_poll_assist())
		n = hooked[i].poll(cq, num_entries, wc);
	return n;
}

static int assisted_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	int i = slot_of(cq->context), err;

	if (i < 0)
		return EINVAL;
	err = hooked[i].arm(cq, solicited_only);
	emu_dev_poll_arm();
	return err;
}

static void hook(struct ibv_context *ctx)
{
	unsigned free_slot = HOOKED_MAX, n;

	if (!ctx || ctx->ops.poll_cq == assisted_poll_cq || !emu_dev_poll_assist_on())
		return;
	pthread_mutex_lock(&hook_lock);
	n = atomic_load(&nhooked);
	for (unsigned i = 0; i < n && free_slot == HOOKED_MAX; i++)
		if (!atomic_load(&hooked[i].ctx))
			free_slot = i;
	if (free_slot == HOOKED_MAX && n < HOOKED_MAX)
		free_slot = n;
	if (free_slot < HOOKED_MAX) {
		hooked[free_slot].poll = ctx->ops.poll_cq;
		hooked[free_slot].arm = ctx->ops.req_notify_cq;
		atomic_store_explicit(&hooked[free_slot].ctx, ctx, memory_order_release);
		if (free_slot == n)
			atomic_store_explicit(&nhooked, n + 1, memory_order_release);
		ctx->ops.poll_cq = assisted_poll_cq;
		ctx->ops.req_notify_cq = assisted_req_notify_cq;
	}
	pthread_mutex_unlock(&hook_lock);
}

static void unhook(struct ibv_context *ctx)
{
	pthread_mutex_lock(&hook_lock);
	for (unsigned i = 0; i < atomic_load(&nhooked); i++)
		if (atomic_load(&hooked[i].ctx) == ctx) {
			ctx->ops.poll_cq = hooked[i].poll;
			ctx->ops.req_notify_cq = hooked[i].arm;
			atomic_store(&hooked[i].ctx, NULL);
		}
	pthread_mutex_unlock(&hook_lock);
}

/*
 * libibverbs' definition, by the version applications link against today
 * (the 1.0 ones are the compatibility layer of the old ABI).  A libibverbs
 * that a dlopen()ed module brought in (UCX's uct_ib) is not in the global
 * scope that RTLD_NEXT searches, but its callers still bind to us: ask it.
 */
static void *next_of(const char *name, const char *version)
{
	void *sym = dlvsym(RTLD_NEXT, name, version), *lib;

	if (!sym && (lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD))) {
		sym = dlvsym(lib, name, version);
		dlclose(lib);
	}
	return sym;
}

static void *no_libibverbs(void)
{
	errno = ENOSYS;
	return NULL;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct ibv_context *(*next)(struct ibv_device *) =
		(struct ibv_context *(*)(struct ibv_device *))next_of("ibv_open_device", "IBVERBS_1.1");
	struct ibv_context *ctx = next ? next(device) : no_libibverbs();

	hook(ctx);
	return ctx;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_context *(*next)(int) =
		(struct ibv_context *(*)(int))next_of("ibv_import_device", "IBVERBS_1.10");
	struct ibv_context *ctx = next ? next(cmd_fd) : no_libibverbs();

	hook(ctx);
	return ctx;
}

int ibv_close_device(struct ibv_context *ctx)
{
	int (*next)(struct ibv_context *) =
		(int (*)(struct ibv_context *))next_of("ibv_close_device", "IBVERBS_1.1");

	unhook(ctx);
	return next ? next(ctx) : (no_libibverbs(), -1);
}
