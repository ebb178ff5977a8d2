/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * verbs.c - the libibverbs calls seen: ibv_poll_cq(), ibv_start_poll() and
 * ibv_req_notify_cq().
 *
 * All three are inline functions of <infiniband/verbs.h> that call through
 * pointers libmlx5 sets: the context's ops (poll_cq, req_notify_cq) when
 * the context is opened, an extended CQ's start_poll when the CQ is created
 * (by the context's create_cq_ex, itself an inline call).
 * ibv_open_device() and ibv_import_device() are interposed to put wrappers
 * there: when the provider's poll finds the CQ empty, the device runs a
 * pass in the polling thread (emu_dev_poll_assist(), device/engine.c) and
 * the provider polls once more.  A busy-polling application then executes
 * its own doorbells and receives its own packets, instead of waiting for
 * the engine thread to be scheduled on a CPU that the application holds.
 * An arm tells the device that the application is going to sleep instead
 * (emu_dev_poll_arm()).  Nothing else changes: the CQEs are the device's,
 * read by libmlx5's poll, and the arm is libmlx5's.  ibv_destroy_cq() is
 * interposed to forget an extended CQ before its memory goes.
 *
 * Only a poll through those pointers is seen.  rdmafast's and UCX's polls
 * are inline reads of the CQ, as mlx5dv users' are, and contexts from
 * mlx5dv_open_device() or a libibverbs found by dlopen()/dlsym(), and CQs
 * from mlx5dv_create_cq(), keep the provider's poll: all of them are served
 * by the engine thread as before.  No wrapper is installed when the device
 * does not run (RFEMU_DEVICE=off) or RFEMU_POLL_ASSIST_US=0.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "kernel/kernel.h"

typedef int poll_fn(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
typedef int arm_fn(struct ibv_cq *cq, int solicited_only);
typedef struct ibv_cq_ex *create_cq_ex_fn(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr);
typedef int start_poll_fn(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr);

/*
 * The objects wrapped, by slot: key[i] is slot i's object (NULL: free),
 * published after the slot's other fields, and `used` counts the slots
 * ever taken.  The polls look without a lock; changes hold hook_lock.
 */
struct slots {
	const void *_Atomic	*key;
	_Atomic unsigned	used;
	unsigned		max;
};

static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;

/* The contexts wrapped and their provider's calls; a context beyond them is not wrapped. */
#define HOOKED_MAX	64
static const void *_Atomic hooked_ctx[HOOKED_MAX];
static struct {
	poll_fn			*poll;
	arm_fn			*arm;
	create_cq_ex_fn		*create_cq_ex;	/* NULL: not the provider's */
} hooked[HOOKED_MAX];
static struct slots ctxs = { hooked_ctx, 0, HOOKED_MAX };

/* The extended CQs wrapped and their provider's start_poll; beyond them, not wrapped. */
#define EX_MAX	256
static const void *_Atomic ex_cq[EX_MAX];
static struct {
	start_poll_fn		*start_poll;
	struct ibv_context	*ctx;
} ex[EX_MAX];
static struct slots cqs = { ex_cq, 0, EX_MAX };

/* The slot holding obj, or -1 (obj NULL: a freed slot). */
static int slot_find(struct slots *t, const void *obj)
{
	unsigned n = atomic_load_explicit(&t->used, memory_order_acquire);

	for (unsigned i = 0; i < n; i++)
		if (atomic_load_explicit(&t->key[i], memory_order_acquire) == obj)
			return (int)i;
	return -1;
}

/* Under hook_lock: a slot to fill, or -1 if all are taken. */
static int slot_free_locked(struct slots *t)
{
	int i = slot_find(t, NULL);
	unsigned n = atomic_load(&t->used);

	return i >= 0 ? i : n < t->max ? (int)n : -1;
}

/* Under hook_lock: slot i, its other fields set, now holds obj (NULL: free). */
static void slot_set_locked(struct slots *t, unsigned i, const void *obj)
{
	atomic_store_explicit(&t->key[i], obj, memory_order_release);
	if (i == atomic_load(&t->used))
		atomic_store_explicit(&t->used, i + 1, memory_order_release);
}

static int slot_of(const struct ibv_context *ctx)
{
	return slot_find(&ctxs, ctx);	/* -1: its context was closed */
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

static int assisted_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	int i = slot_find(&cqs, cq), err;

	if (i < 0)
		return EINVAL;	/* destroyed */
	/* libmlx5's start_poll releases the CQ's lock when it finds it empty */
	err = ex[i].start_poll(cq, attr);
	if (err == ENOENT && emu_dev_poll_assist())
		err = ex[i].start_poll(cq, attr);
	return err;
}

/* Under hook_lock: wrap cq's start_poll, if there is room. */
static void ex_add_locked(struct ibv_cq_ex *cq)
{
	int i = slot_free_locked(&cqs);

	if (i < 0 || !cq->start_poll)
		return;
	ex[i].start_poll = cq->start_poll;
	ex[i].ctx = cq->context;
	slot_set_locked(&cqs, (unsigned)i, cq);
	cq->start_poll = assisted_start_poll;
}

/* Under hook_lock: give slot i's CQ its provider's start_poll back and forget it. */
static void ex_forget_locked(unsigned i)
{
	struct ibv_cq_ex *cq = (struct ibv_cq_ex *)(uintptr_t)atomic_load(&ex_cq[i]);

	cq->start_poll = ex[i].start_poll;
	slot_set_locked(&cqs, i, NULL);
}

static struct ibv_cq_ex *assisted_create_cq_ex(struct ibv_context *ctx,
					       struct ibv_cq_init_attr_ex *attr)
{
	int i = slot_of(ctx);
	struct ibv_cq_ex *cq;

	if (i < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = hooked[i].create_cq_ex(ctx, attr);
	if (cq) {
		pthread_mutex_lock(&hook_lock);
		ex_add_locked(cq);
		pthread_mutex_unlock(&hook_lock);
	}
	return cq;
}

static void hook(struct ibv_context *ctx)
{
	int i;

	if (!ctx || ctx->ops.poll_cq == assisted_poll_cq || !emu_dev_poll_assist_on())
		return;
	pthread_mutex_lock(&hook_lock);
	i = slot_free_locked(&ctxs);
	if (i >= 0) {
		struct verbs_context *vctx = verbs_get_ctx_op(ctx, create_cq_ex);

		hooked[i].poll = ctx->ops.poll_cq;
		hooked[i].arm = ctx->ops.req_notify_cq;
		hooked[i].create_cq_ex = vctx ? vctx->create_cq_ex : NULL;
		slot_set_locked(&ctxs, (unsigned)i, ctx);
		ctx->ops.poll_cq = assisted_poll_cq;
		ctx->ops.req_notify_cq = assisted_req_notify_cq;
		if (vctx)
			vctx->create_cq_ex = assisted_create_cq_ex;
	}
	pthread_mutex_unlock(&hook_lock);
}

static void unhook(struct ibv_context *ctx)
{
	int i;

	pthread_mutex_lock(&hook_lock);
	i = slot_find(&ctxs, ctx);
	if (ctx && i >= 0) {
		ctx->ops.poll_cq = hooked[i].poll;
		ctx->ops.req_notify_cq = hooked[i].arm;
		if (hooked[i].create_cq_ex)
			verbs_get_ctx(ctx)->create_cq_ex = hooked[i].create_cq_ex;
		slot_set_locked(&ctxs, (unsigned)i, NULL);
	}
	/* CQs left open: their memory stays until the context goes */
	for (unsigned k = 0; k < atomic_load(&cqs.used); k++)
		if (atomic_load(&ex_cq[k]) && ex[k].ctx == ctx)
			ex_forget_locked(k);
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

/*
 * A destroyed CQ's memory may come back as another CQ, with another
 * start_poll: forget it first, and wrap it again if it lives on (EBUSY).
 */
int ibv_destroy_cq(struct ibv_cq *cq)
{
	int (*next)(struct ibv_cq *) =
		(int (*)(struct ibv_cq *))next_of("ibv_destroy_cq", "IBVERBS_1.1");
	int i, err;

	pthread_mutex_lock(&hook_lock);
	i = cq ? slot_find(&cqs, cq) : -1;
	if (i >= 0)
		ex_forget_locked((unsigned)i);
	pthread_mutex_unlock(&hook_lock);
	err = next ? next(cq) : (no_libibverbs(), ENOSYS);
	if (err && i >= 0) {
		pthread_mutex_lock(&hook_lock);
		ex_add_locked((struct ibv_cq_ex *)cq);
		pthread_mutex_unlock(&hook_lock);
	}
	return err;
}
