/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * objects.c - the process-wide state of the fake kernel: the lock, the open
 * contexts, per-context handle tables, subnet-unique object numbers, and
 * the services kernel.h promises the device model.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/fdset.h"
#include "internal.h"

static pthread_mutex_t emu_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(pthread_t) emu_owner;
static _Atomic bool emu_owned;
static struct emu_ctx *ctx_list;

/*
 * The command fds, so that write()/ioctl()/close() on the process's other
 * fds take the fast path without the lock; and the event fds we handed
 * out, whose close() we must notice.
 */
static struct emu_fdset cmd_fds, watched_fds;

void emu_lock_acquire(void)
{
	pthread_mutex_lock(&emu_mutex);
	atomic_store(&emu_owner, pthread_self());
	atomic_store(&emu_owned, true);
}

bool emu_lock_try(void)
{
	if (pthread_mutex_trylock(&emu_mutex))
		return false;
	atomic_store(&emu_owner, pthread_self());
	atomic_store(&emu_owned, true);
	return true;
}

/*
 * pthread_mutex_timedlock(), whose deadline is on CLOCK_REALTIME (a clock
 * step only moves the bound), rather than pthread_mutex_clocklock(): the
 * ThreadSanitizer of gcc 12 does not see the latter take the mutex, and
 * reports every access under it as a race.
 */
bool emu_lock_wait(uint64_t ns)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ns / 1000000000u);
	until.tv_nsec += (long)(ns % 1000000000u);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&emu_mutex, &until))
		return false;
	atomic_store(&emu_owner, pthread_self());
	atomic_store(&emu_owned, true);
	return true;
}

void emu_lock_release(void)
{
	atomic_store(&emu_owned, false);
	pthread_mutex_unlock(&emu_mutex);
}

/*
 * fork() copies the lock as it is: taken by another thread (the engine,
 * or a command), it stays taken in the child, whose first command then
 * waits forever. Hold it across the fork, as libc does with its own locks,
 * so that both sides start with it free.
 */
static void emu_fork_prepare(void)
{
	emu_lock_acquire();
}

static void emu_fork_done(void)
{
	emu_lock_release();
}

_Atomic unsigned emu_fork_pending;

/*
 * The child of a host is not that host (emu/README.md, "Hosts and fork()"):
 * it becomes one of its own when it first reaches the device
 * (interpose/preload.c emu_fork_settle()).  Only a flag here: a child of a
 * threaded process may call nothing but async-signal-safe functions before
 * it execs, and most children of fork() do exec.
 */
static void emu_fork_child(void)
{
	if (emu_cfg.host_id)
		atomic_store(&emu_fork_pending, EMU_FORK_DISOWN | EMU_FORK_JOIN);
	emu_lock_release();
}

__attribute__((constructor)) static void emu_fork_register(void)
{
	pthread_atfork(emu_fork_prepare, emu_fork_done, emu_fork_child);
}

bool emu_lock_held(void)
{
	return atomic_load(&emu_owned) &&
	       pthread_equal(atomic_load(&emu_owner), pthread_self());
}

bool emu_fd_is_cmd(int fd)
{
	return emu_fdset_has(&cmd_fds, fd);
}

void emu_fd_watch(int fd, bool on)
{
	emu_fdset_put(&watched_fds, fd, on);
}

void emu_fd_set_cmd(int fd, bool on)
{
	emu_fdset_put(&cmd_fds, fd, on);
}

bool emu_fd_is_watched(int fd)
{
	return emu_fdset_has(&watched_fds, fd);
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */

struct emu_ctx *emu_ctx_create(unsigned dev_index)
{
	struct emu_ctx *ctx = calloc(1, sizeof(*ctx));
	int fd;

	if (!ctx)
		return NULL;
	/*
	 * The command fd is a sparse memfd covering all mlx5 mmap offsets:
	 * libmlx5's mmap() of a UAR hits the file directly (checked by
	 * mmap.c, not redirected) and our own mapping below sees the same
	 * pages.
	 */
	fd = memfd_create("rfemu-uverbs", MFD_CLOEXEC);
	if (fd < 0)
		goto err_free;
	if (!emu_fdset_fits(fd)) {
		errno = EMFILE;
		goto err_close;
	}
	if (ftruncate(fd, (off_t)EMU_CMDFD_SIZE))
		goto err_close;
	ctx->map = emu_real_mmap(NULL, EMU_CMDFD_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, 0);
	if (ctx->map == MAP_FAILED)
		goto err_close;
	struct stat st;

	if (emu_real_fstat(fd, &st))
		goto err_unmap;
	ctx->file_dev = st.st_dev;
	ctx->file_ino = st.st_ino;
	ctx->cmd_fd = fd;
	ctx->dev_index = dev_index;
	ctx->async.user_fd = -1;
	ctx->async.dev_fd = -1;

	emu_lock_acquire();
	ctx->next = ctx_list;
	ctx_list = ctx;
	emu_fdset_put(&cmd_fds, fd, true);
	emu_lock_release();
	return ctx;

err_unmap:
	emu_real_munmap(ctx->map, EMU_CMDFD_SIZE);
err_close:
	emu_real_close(fd);
err_free:
	free(ctx);
	return NULL;
}

struct emu_ctx *emu_ctx_by_fd_locked(int fd)
{
	for (struct emu_ctx *c = ctx_list; c; c = c->next)
		if (emu_ctx_has_fd_locked(c, fd))
			return c;
	return NULL;
}

struct emu_ctx *emu_ctx_first_locked(void)
{
	return ctx_list;
}

/*
 * The contexts a child of fork() inherited, set aside by
 * emu_ctx_disown_locked(): the parent's, of a host this process is not.
 * Kept, not freed: their objects point into the device model's state, which
 * the parent's engine owns, and a close() here must not release anything
 * the two processes share (the parent's wire socket, its XRC targets in
 * the subnet, its multicast memberships).  What the child makes on them
 * (kernel/fork.c) is the child's to release.
 */
static struct emu_ctx *orphans;

void emu_ctx_disown_locked(void)
{
	while (ctx_list) {
		struct emu_ctx *c = ctx_list;

		ctx_list = c->next;
		c->next = orphans;
		orphans = c;
		c->inherited = true;
		for (uint32_t h = 0; h < c->nobjs; h++)
			if (c->objs[h])
				c->objs[h]->inherited = true;
	}
	emu_pp_disown_locked();
	emu_flow_disown_locked();
	/* a new host's numbers start over, as the host id changes */
	for (int k = 0; k < EMU_NUM_KIND_COUNT; k++) {
		free(emu_num_spaces[k].slot);
		free(emu_num_spaces[k].held);
		emu_num_spaces[k] = (struct emu_num_space){ 0 };
	}
}

struct emu_ctx *emu_ctx_inherited_by_fd_locked(int fd)
{
	for (struct emu_ctx *c = orphans; c; c = c->next)
		if (emu_ctx_has_fd_locked(c, fd))
			return c;
	return NULL;
}

/*
 * Tear down everything the context owns, in dependency order, as the
 * kernel does when the uverbs file is released: objects that point at
 * others go first, so every usecnt drops to zero on its own.
 */
static const enum emu_obj_type teardown_order[] = {
	EMU_OBJ_FLOW, EMU_OBJ_AH, EMU_OBJ_MW, EMU_OBJ_MKEY, EMU_OBJ_PSV, EMU_OBJ_QP,
	EMU_OBJ_RWQ_IND_TBL,
	EMU_OBJ_WQ, EMU_OBJ_SRQ, EMU_OBJ_CQ,
	EMU_OBJ_UAR, EMU_OBJ_MR, EMU_OBJ_DM, EMU_OBJ_PD, EMU_OBJ_XRCD, EMU_OBJ_RESERVED_QPN,
	EMU_OBJ_PP, EMU_OBJ_FLOW_MATCHER, EMU_OBJ_FLOW_ACTION,
};

void emu_obj_destroy_locked(struct emu_obj *o)
{
	switch (o->type) {
	case EMU_OBJ_AH:   emu_ah_destroy_locked((struct emu_ah *)o); break;
	case EMU_OBJ_MW:   emu_mw_destroy_locked((struct emu_mw *)o); break;
	case EMU_OBJ_QP:   emu_qp_destroy_locked((struct emu_qp *)o); break;
	case EMU_OBJ_SRQ:  emu_srq_destroy_locked((struct emu_srq *)o); break;
	case EMU_OBJ_CQ:   emu_cq_destroy_locked((struct emu_cq *)o); break;
	case EMU_OBJ_MR:   emu_mr_destroy_locked((struct emu_mr *)o); break;
	case EMU_OBJ_PD:   emu_pd_destroy_locked((struct emu_pd *)o); break;
	case EMU_OBJ_XRCD: emu_xrcd_destroy_locked((struct emu_xrcd *)o); break;
	case EMU_OBJ_DM:   emu_dm_destroy_locked((struct emu_dm *)o); break;
	case EMU_OBJ_UAR:  emu_uar_destroy_locked((struct emu_uar *)o); break;
	case EMU_OBJ_MKEY: emu_mkey_destroy_locked((struct emu_mkey *)o); break;
	case EMU_OBJ_PSV:  emu_psv_destroy_locked((struct emu_psv *)o); break;
	case EMU_OBJ_RESERVED_QPN: emu_rqpn_destroy_locked((struct emu_rqpn *)o); break;
	case EMU_OBJ_PP:   emu_pp_destroy_locked((struct emu_pp *)o); break;
	case EMU_OBJ_WQ:   emu_wq_destroy_locked((struct emu_wq *)o); break;
	case EMU_OBJ_FLOW: emu_flow_destroy_locked((struct emu_flow *)o); break;
	case EMU_OBJ_FLOW_MATCHER:
		emu_flow_matcher_destroy_locked((struct emu_flow_matcher *)o);
		break;
	case EMU_OBJ_FLOW_ACTION:
		emu_flow_action_destroy_locked((struct emu_flow_action *)o);
		break;
	case EMU_OBJ_RWQ_IND_TBL: emu_rwq_ind_tbl_destroy_locked((struct emu_rwq_ind_tbl *)o); break;
	case EMU_OBJ_TYPE_COUNT: break;
	}
}

/* the process's own objects: in a child of fork(), not its parent's */
static void objs_destroy_locked(struct emu_ctx *ctx)
{
	for (size_t t = 0; t < EMU_ARRAY_SIZE(teardown_order); t++)
		for (uint32_t h = 0; h < ctx->nobjs; h++)
			if (ctx->objs[h] && ctx->objs[h]->type == teardown_order[t] &&
			    !ctx->objs[h]->inherited)
				emu_obj_destroy_locked(ctx->objs[h]);
}

void emu_ctx_destroy_locked(struct emu_ctx *ctx)
{
	struct emu_ctx **pp;

	objs_destroy_locked(ctx);
	while (ctx->channels) {
		struct emu_channel *ch = ctx->channels;

		ctx->channels = ch->next;
		emu_evq_close(&ch->evq);
		free(ch);
	}
	for (pp = &ctx_list; *pp; pp = &(*pp)->next)
		if (*pp == ctx) {
			*pp = ctx->next;
			break;
		}
	emu_fd_set_cmd(ctx->cmd_fd, false);
	for (unsigned i = 0; i < ctx->nalias; i++)
		emu_fd_set_cmd(ctx->alias_fds[i], false);

	emu_lock_release();
	if (ctx->have_context)
		emu_dev_ctx_fini(ctx);
	emu_lock_acquire();

	emu_evq_close(&ctx->async);
	emu_ctx_import_fini_locked(ctx);
	emu_uar_ctx_fini_locked(ctx);
	emu_real_munmap(ctx->map, EMU_CMDFD_SIZE);
	free(ctx->objs);
	free(ctx);
}

/* A close() of some fd: the command fd, a channel, or the async fd. */
void emu_fd_closed(int fd)
{
	emu_lock_acquire();
	/*
	 * An inherited context's descriptor goes alone: the parent keeps the
	 * file.  With the child's last one go the objects the child made.
	 */
	for (struct emu_ctx *c = orphans; c; c = c->next)
		if (emu_ctx_has_fd_locked(c, fd)) {
			if (emu_ctx_fd_close_locked(c, fd)) {
				objs_destroy_locked(c);
				emu_fd_set_cmd(fd, false);
				c->cmd_fd = -1;
			}
			emu_lock_release();
			return;
		}
	for (struct emu_ctx *c = ctx_list; c; c = c->next) {
		if (emu_ctx_has_fd_locked(c, fd)) {
			/* the uverbs file goes with its last descriptor */
			if (emu_ctx_fd_close_locked(c, fd))
				emu_ctx_destroy_locked(c);
			break;
		}
		if (emu_async_more_closed_locked(c, fd))
			break;
		if (c->async.user_fd == fd) {
			/* the process closed its end; later events are dropped */
			emu_fd_watch(fd, false);
			emu_real_close(c->async.dev_fd);
			c->async.dev_fd = -1;
			c->async.user_fd = -1;
			break;
		}
		struct emu_channel *ch = emu_channel_by_fd_locked(c, fd);

		if (ch) {
			emu_fd_watch(fd, false);
			ch->evq.user_fd = -1;
			emu_channel_put_locked(ch);
			break;
		}
	}
	emu_lock_release();
}

/* Process exit: release what the process did not (valgrind stays clean). */
void emu_release_all(void)
{
	emu_lock_acquire();
	while (ctx_list) {
		struct emu_ctx *c = ctx_list;
		int fd = c->cmd_fd;

		/* the other descriptors of the file are closed by the process */
		emu_ctx_destroy_locked(c);
		emu_real_close(fd);
	}
	for (struct emu_ctx *c = orphans; c; c = c->next)
		objs_destroy_locked(c);
	emu_lock_release();
}

/* ------------------------------------------------------------------------ */
/* Handle table                                                              */

void *emu_obj_alloc(struct emu_ctx *ctx, enum emu_obj_type type, size_t size,
		    uint64_t user_handle)
{
	struct emu_obj *o;
	uint32_t h;

	for (h = 0; h < ctx->nobjs && ctx->objs[h]; h++)
		;
	if (h == ctx->nobjs) {
		uint32_t n = ctx->nobjs ? ctx->nobjs * 2 : 64;
		struct emu_obj **t = realloc(ctx->objs, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + ctx->nobjs, 0, (n - ctx->nobjs) * sizeof(*t));
		ctx->objs = t;
		ctx->nobjs = n;
	}
	o = calloc(1, size);
	if (!o)
		return NULL;
	o->type = type;
	o->handle = h;
	o->user_handle = user_handle;
	o->ctx = ctx;
	ctx->objs[h] = o;
	return o;
}

void emu_obj_free_locked(struct emu_obj *o)
{
	o->ctx->objs[o->handle] = NULL;
	free(o);
}

void *emu_obj_get_locked(struct emu_ctx *ctx, uint32_t handle,
			 enum emu_obj_type type)
{
	if (handle >= ctx->nobjs || !ctx->objs[handle] ||
	    ctx->objs[handle]->type != type || ctx->objs[handle]->detached ||
	    ctx->objs[handle]->inherited)
		return NULL;
	return ctx->objs[handle];
}

/* ------------------------------------------------------------------------ */
/* Subnet-unique numbers: host_id << EMU_NUM_IDX_BITS | index               */

struct emu_num_space emu_num_spaces[EMU_NUM_KIND_COUNT];

#define HELD_WORDS	((EMU_NUM_IDX_MASK + 1) / 64)

static int num_space_init(struct emu_num_space *s)
{
	if (!s->slot)
		s->slot = calloc(EMU_NUM_IDX_MASK + 1, sizeof(void *));
	if (!s->held)
		s->held = calloc(HELD_WORDS, sizeof(uint64_t));
	return s->slot && s->held ? 0 : ENOMEM;
}

static bool num_held(const struct emu_num_space *s, uint32_t idx)
{
	return s->held[idx / 64] >> (idx % 64) & 1;
}

int emu_num_alloc_locked(enum emu_num_kind kind, void *obj, uint32_t *num)
{
	struct emu_num_space *s = &emu_num_spaces[kind];

	if (num_space_init(s))
		return ENOMEM;
	for (uint32_t i = 0; i < EMU_NUM_IDX_MASK; i++) {
		/* index 0 is never used, so no number has a zero low part */
		uint32_t idx = (s->next + i) % EMU_NUM_IDX_MASK + 1;

		if (s->slot[idx] || num_held(s, idx))
			continue;
		s->slot[idx] = obj;
		s->next = idx;
		*num = (emu_cfg.host_id << EMU_NUM_IDX_BITS) | idx;
		return 0;
	}
	return ENOMEM;
}

void emu_num_free_locked(enum emu_num_kind kind, uint32_t num)
{
	if (emu_num_spaces[kind].slot)
		emu_num_spaces[kind].slot[num & EMU_NUM_IDX_MASK] = NULL;
}

static void num_range_mark(struct emu_num_space *s, uint32_t idx, uint32_t n, bool held)
{
	for (uint32_t i = idx; i < idx + n; i++) {
		if (held)
			s->held[i / 64] |= 1ull << (i % 64);
		else
			s->held[i / 64] &= ~(1ull << (i % 64));
	}
	s->nheld = held ? s->nheld + n : s->nheld - n;
}

/*
 * The ranges are tried from the one after the last held, as numbers are
 * given out (no range comes back at once); index 0 being never used, the
 * first range is the second of the space.
 */
int emu_num_hold_range_locked(enum emu_num_kind kind, unsigned log_n, uint32_t *first)
{
	struct emu_num_space *s = &emu_num_spaces[kind];
	uint32_t n = 1u << log_n, ranges = (EMU_NUM_IDX_MASK + 1) >> log_n;

	if (num_space_init(s))
		return ENOMEM;
	for (uint32_t i = 0; i + 1 < ranges; i++) {
		uint32_t idx = ((s->held_next + i) % (ranges - 1) + 1) << log_n, k = 0;

		while (k < n && !s->slot[idx + k] && !num_held(s, idx + k))
			k++;
		if (k < n)
			continue;
		num_range_mark(s, idx, n, true);
		s->held_next = (idx >> log_n);
		*first = (emu_cfg.host_id << EMU_NUM_IDX_BITS) | idx;
		return 0;
	}
	return ENOSPC;
}

void emu_num_release_range_locked(enum emu_num_kind kind, uint32_t first, unsigned log_n)
{
	struct emu_num_space *s = &emu_num_spaces[kind];

	if (s->held)
		num_range_mark(s, first & EMU_NUM_IDX_MASK, 1u << log_n, false);
}

static void num_spaces_free(void) __attribute__((destructor(200)));
static void num_spaces_free(void)
{
	for (int k = 0; k < EMU_NUM_KIND_COUNT; k++) {
		free(emu_num_spaces[k].slot);
		free(emu_num_spaces[k].held);
		emu_num_spaces[k] = (struct emu_num_space){ 0 };
	}
}

/* ------------------------------------------------------------------------ */
/* Services for the device model                                             */

void emu_mw_bind_locked(struct emu_mw *mw, struct emu_mr *mr, struct emu_qp *qp,
			uint64_t addr, uint64_t length, uint32_t access,
			uint32_t new_rkey)
{
	emu_mw_unbind_locked(mw);
	mw->mr = mr;
	mw->qp = qp;
	mw->addr = addr;
	mw->length = length;
	mw->access = access;
	/* only the variant byte is the consumer's to choose */
	mw->rkey = (mw->rkey & ~0xffu) | (new_rkey & 0xffu);
	if (mr)
		mr->mw_bound++;
}

void emu_mw_unbind_locked(struct emu_mw *mw)
{
	if (mw->mr)
		mw->mr->mw_bound--;
	mw->mr = NULL;
	mw->qp = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
}

void emu_qp_set_state_locked(struct emu_qp *qp, enum ibv_qp_state state)
{
	enum ibv_qp_state old = qp->attr.state;

	qp->attr.state = state;
	emu_dev_qp_modified(qp, old, IBV_QP_STATE);
}

void emu_cdev_stat(struct stat *st, unsigned dev_index)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR0 + dev_index);
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_ino = 1000 + (ino_t)dev_index;
}

int emu_fd_stat_locked(int fd, struct stat *st)
{
	struct emu_ctx *ctx = emu_fd_is_cmd(fd) ? emu_ctx_by_fd_locked(fd) : NULL;

	if (ctx) {
		emu_cdev_stat(st, ctx->dev_index);
		return 0;
	}
	return emu_real_fstat(fd, st);
}
