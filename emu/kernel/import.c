/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * import.c - one ucontext behind several descriptors and user contexts:
 * what ibv_import_device(), ibv_import_pd() and ibv_import_mr() need.
 *
 * On the kernel a command fd is a uverbs file; dup() or SCM_RIGHTS give
 * another descriptor of the same file, and ibv_import_device() of one
 * (rdma-core libibverbs/device.c) builds a second user context on the same
 * ucontext: it fstat()s the descriptor, sends QUERY_CONTEXT and
 * ASYNC_EVENT_ALLOC on it, and its objects are the same handles.  Here the
 * command fd is a memfd of this process: a descriptor of the same memfd
 * (same inode) is taken for this context's when it is first fstat()ed or
 * given an RDMA_VERBS_IOCTL (emu_fd_adopt()), and the context lives until
 * its last descriptor is closed, as the file does.
 *
 * A descriptor from another process names a memfd this process's kernel
 * never made: fstat() shows a regular file and libibverbs answers EINVAL,
 * as it does for a descriptor that is not a uverbs device.
 *
 * Each user context allocates its own async event file; the objects' events
 * all go to the context's first one (the one GET_CONTEXT or the first
 * ASYNC_EVENT_ALLOC made), the others receive nothing.
 *
 * The methods: MLX5_IB_METHOD_PD_QUERY (mlx5's std_types.c, the PD number
 * mlx5_import_pd() takes) and UVERBS_METHOD_QUERY_MR (the core's
 * uverbs_std_types_mr.c, for ibv_cmd_query_mr()).  Unimporting is the
 * library's alone: nothing is sent.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>

#include "internal.h"

/* ---- descriptors ------------------------------------------------------- */

bool emu_ctx_has_fd_locked(const struct emu_ctx *ctx, int fd)
{
	if (ctx->cmd_fd == fd)
		return true;
	for (unsigned i = 0; i < ctx->nalias; i++)
		if (ctx->alias_fds[i] == fd)
			return true;
	return false;
}

bool emu_fd_adopt(int fd)
{
	struct stat st;
	bool found = false;

	if (emu_fd_is_cmd(fd))
		return true;
	/* a memfd is a regular file without a name (no link) */
	if (fd < 0 || emu_real_fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink)
		return false;
	emu_lock_acquire();
	for (struct emu_ctx *c = emu_ctx_first_locked(); c && !found; c = c->next) {
		int *a;

		if (c->file_dev != st.st_dev || c->file_ino != st.st_ino)
			continue;
		a = realloc(c->alias_fds, (c->nalias + 1) * sizeof(*a));
		if (!a)
			break;
		a[c->nalias++] = fd;
		c->alias_fds = a;
		emu_fd_set_cmd(fd, true);
		found = true;
		emu_dbg("fd %d: another descriptor of command fd %d\n", fd, c->cmd_fd);
	}
	emu_lock_release();
	return found;
}

bool emu_ctx_fd_close_locked(struct emu_ctx *ctx, int fd)
{
	if (!ctx->nalias)
		return true;
	emu_fd_set_cmd(fd, false);
	for (unsigned i = 0; i < ctx->nalias; i++)
		if (ctx->alias_fds[i] == fd) {
			ctx->alias_fds[i] = ctx->alias_fds[--ctx->nalias];
			return false;
		}
	/* the first descriptor goes: another one stands for the file */
	ctx->cmd_fd = ctx->alias_fds[--ctx->nalias];
	return false;
}

/* ---- async event files ------------------------------------------------- */

int emu_async_more_locked(struct emu_ctx *ctx, int *user_fd)
{
	struct emu_evq *q = realloc(ctx->more_async,
				    (ctx->nmore_async + 1) * sizeof(*q));
	int ret;

	if (!q)
		return ENOMEM;
	ctx->more_async = q;
	ret = emu_evq_open(&q[ctx->nmore_async]);
	if (ret)
		return ret;
	*user_fd = q[ctx->nmore_async++].user_fd;
	emu_fd_watch(*user_fd, true);
	return 0;
}

bool emu_async_is_ctx_locked(const struct emu_ctx *ctx, int fd)
{
	if (fd >= 0 && fd == ctx->async.user_fd)
		return true;
	for (unsigned i = 0; i < ctx->nmore_async; i++)
		if (ctx->more_async[i].user_fd == fd)
			return true;
	return false;
}

bool emu_async_more_closed_locked(struct emu_ctx *ctx, int fd)
{
	for (unsigned i = 0; i < ctx->nmore_async; i++)
		if (ctx->more_async[i].user_fd == fd) {
			emu_fd_watch(fd, false);
			emu_real_close(ctx->more_async[i].dev_fd);
			ctx->more_async[i] = ctx->more_async[--ctx->nmore_async];
			return true;
		}
	return false;
}

void emu_ctx_import_fini_locked(struct emu_ctx *ctx)
{
	/* the process's ends of the files stay its own to close */
	for (unsigned i = 0; i < ctx->nmore_async; i++) {
		emu_fd_watch(ctx->more_async[i].user_fd, false);
		emu_real_close(ctx->more_async[i].dev_fd);
	}
	free(ctx->more_async);
	free(ctx->alias_fds);
	ctx->more_async = NULL;
	ctx->alias_fds = NULL;
	ctx->nmore_async = ctx->nalias = 0;
}

/* ---- the query methods ------------------------------------------------- */

/* MLX5_IB_METHOD_PD_QUERY: the PD number of a handle (mlx5_import_pd()) */
static int pd_query(struct emu_ioc *b)
{
	int ret;
	struct emu_pd *pd = emu_ioc_get_obj(b, MLX5_IB_ATTR_QUERY_PD_HANDLE, EMU_OBJ_PD, &ret);

	if (!pd)
		return ret;
	return emu_ioc_copy_to(b, MLX5_IB_ATTR_QUERY_PD_RESP_PDN, &pd->pdn, sizeof(pd->pdn));
}

/* UVERBS_METHOD_QUERY_MR: keys, length and (if asked) IOVA of a handle */
static int mr_query(struct emu_ioc *b)
{
	int ret;
	struct emu_mr *mr = emu_ioc_get_obj(b, UVERBS_ATTR_QUERY_MR_HANDLE, EMU_OBJ_MR, &ret);

	if (!mr)
		return ret;
	ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_LKEY, &mr->lkey, sizeof(mr->lkey));
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_RKEY, &mr->rkey,
				      sizeof(mr->rkey));
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_LENGTH, &mr->length,
				      sizeof(mr->length));
	if (!ret) {
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_MR_RESP_IOVA, &mr->iova,
				      sizeof(mr->iova));
		if (ret == ENOENT)
			ret = 0;	/* UA_OPTIONAL */
	}
	return ret;
}

#define MAND		EMU_IOC_MANDATORY
#define IDR(id)		{ id, EMU_IOC_IDR, MAND, 0, 0 }
#define OUT(id, t, fl)	{ id, EMU_IOC_PTR_OUT, fl, sizeof(t), sizeof(t) }

const struct emu_ioc_method emu_ioc_import_methods[] = {
	{ UVERBS_OBJECT_PD, MLX5_IB_METHOD_PD_QUERY, pd_query, false, {
		IDR(MLX5_IB_ATTR_QUERY_PD_HANDLE),
		OUT(MLX5_IB_ATTR_QUERY_PD_RESP_PDN, uint32_t, MAND) } },
	{ UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR, mr_query, false, {
		IDR(UVERBS_ATTR_QUERY_MR_HANDLE),
		OUT(UVERBS_ATTR_QUERY_MR_RESP_LKEY, uint32_t, MAND),
		OUT(UVERBS_ATTR_QUERY_MR_RESP_RKEY, uint32_t, MAND),
		OUT(UVERBS_ATTR_QUERY_MR_RESP_LENGTH, uint64_t, MAND),
		OUT(UVERBS_ATTR_QUERY_MR_RESP_IOVA, uint64_t, 0) } },
};

const size_t emu_ioc_import_methods_count = EMU_ARRAY_SIZE(emu_ioc_import_methods);
