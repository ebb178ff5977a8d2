/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_device.c - the ioctl methods of the DEVICE and ASYNC_EVENT objects,
 * and their attributes as the kernel declares them (drivers/infiniband/core/
 * uverbs_std_types_device.c, uverbs_std_types_async_fd.c,
 * drivers/infiniband/hw/mlx5/std_types.c, main.c).  The objects' DESTROY
 * methods are in ioctl_destroy.c.
 *
 * Everything else is absent, as on a kernel built without it: the
 * framework answers EPROTONOSUPPORT and libibverbs takes the write() form
 * of the verb (through INVOKE_WRITE), or fails the verb where it has none.
 * That includes DEVX (MLX5_IB_OBJECT_DEVX*): mlx5_ib registers those objects
 * only when the device reports a DEVX user context (log_max_uctx), so a
 * kernel without DEVX support answers exactly so, and libmlx5 takes its
 * non-DEVX paths.
 */
#include <limits.h>
#include <net/if.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "caps.h"
#include "internal.h"

#define END(type, member)	(offsetof(type, member) + sizeof(((type *)0)->member))

/* UVERBS_ATTR_CONST_IN: a u64 inline; UVERBS_ATTR_TYPE: exactly the type */
#define CONST_IN(id, fl)	{ id, EMU_IOC_PTR_IN, fl, 8, 8 }
#define PTR_IN_TYPE(id, t, fl)	{ id, EMU_IOC_PTR_IN, fl, sizeof(t), sizeof(t) }
#define PTR_IN_MIN(id, n, fl)	{ id, EMU_IOC_PTR_IN, fl, n, USHRT_MAX }
#define PTR_OUT_MIN(id, n, fl)	{ id, EMU_IOC_PTR_OUT, fl, n, USHRT_MAX }
#define PTR_OUT_TYPE(id, t, fl)	{ id, EMU_IOC_PTR_OUT, fl, sizeof(t), sizeof(t) }
/* UVERBS_ATTR_FLAGS_IN: a u32 or a u64 */
#define FLAGS_IN(id, fl)	{ id, EMU_IOC_PTR_IN, fl, 4, 8 }
/* UVERBS_ATTR_STRUCT(type, last): at least up to last, may grow */
#define PTR_OUT_STRUCT(id, t, last, fl) \
	{ id, EMU_IOC_PTR_OUT, (fl) | EMU_IOC_ZERO_TRAILING, END(t, last), sizeof(t) }
#define UHW	PTR_IN_MIN(UVERBS_ATTR_UHW_IN, 0, 0), PTR_OUT_MIN(UVERBS_ATTR_UHW_OUT, 0, 0)
#define MAND	EMU_IOC_MANDATORY

static int invoke_write(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *out = emu_ioc_get(b, UVERBS_ATTR_CORE_OUT);
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	void *core = NULL, *drv = NULL;
	size_t core_len, drv_len;
	uint64_t cmd;
	int ret;

	ret = emu_ioc_get_const(b, UVERBS_ATTR_WRITE_CMD, UINT32_MAX, &cmd);
	if (!ret)
		ret = emu_ioc_dup(b, UVERBS_ATTR_CORE_IN, &core, &core_len);
	if (!ret)
		ret = emu_ioc_dup(b, UVERBS_ATTR_UHW_IN, &drv, &drv_len);
	if (!ret)
		ret = emu_cmd_invoke(b->ctx, (uint32_t)cmd, core, core_len, drv, drv_len,
				     out ? out->data : 0, out ? out->len : 0,
				     uout ? uout->data : 0, uout ? uout->len : 0);
	/* uverbs_response() flags CORE_OUT written */
	if (!ret && out && out->len)
		ret = emu_ioc_output_written(b, UVERBS_ATTR_CORE_OUT);
	free(core);
	free(drv);
	return ret;
}

/*
 * UVERBS_METHOD_GET_CONTEXT: the ucontext of the write() form (the mlx5
 * request and answer in UHW_IN/UHW_OUT), but without the async event file,
 * which ASYNC_EVENT_ALLOC creates.  The kernel writes the two core outputs
 * before it creates anything; checking that they can be written has the
 * same outcome.
 */
static int get_context(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	struct ib_uverbs_get_context cmd = { 0 };
	struct ib_uverbs_get_context_resp resp = { 0 };
	uint64_t core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
	struct emu_ctx *ctx = b->ctx;
	struct emu_cmd c = { .ctx = ctx, .in = &cmd, .in_len = sizeof(cmd),
			     .out = &resp, .out_len = sizeof(resp) };
	void *drv = NULL, *drv_out = NULL;
	size_t drv_len, drv_out_len = uout ? uout->len : 0;
	int ret;

	if (emu_ioc_out_check(b, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, 8) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_UHW_OUT, drv_out_len))
		return EFAULT;
	ret = emu_ioc_dup(b, UVERBS_ATTR_UHW_IN, &drv, &drv_len);
	if (ret)
		return ret;
	drv_out = calloc(1, drv_out_len + 8);
	if (!drv_out) {
		free(drv);
		return ENOMEM;
	}
	c.drv_in = drv;
	c.drv_in_len = drv_len;
	c.drv_out = drv_out;
	c.drv_out_len = drv_out_len;
	ret = emu_cmd_get_context(&c);
	if (!ret) {
		emu_fd_watch(ctx->async.user_fd, false);
		emu_real_close(ctx->async.user_fd);
		emu_evq_close(&ctx->async);
		ctx->async.user_fd = -1;
		emu_ioc_copy_to(b, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS,
				&resp.num_comp_vectors, sizeof(resp.num_comp_vectors));
		emu_ioc_copy_to(b, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT,
				&core_support, sizeof(core_support));
		if (uout)
			emu_copy_to_user(uout->data, drv_out, drv_out_len);
	}
	free(drv);
	free(drv_out);
	return ret;
}

/*
 * UVERBS_METHOD_QUERY_CONTEXT (ibv_import_device()): what GET_CONTEXT
 * answered, core and mlx5 (mlx5_ib_query_ucontext()).
 */
static int query_context(struct emu_ioc *b)
{
	struct mlx5_ib_alloc_ucontext_resp uctx;
	const struct ib_uverbs_attr *a = emu_ioc_get(b, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX);
	uint64_t core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
	uint32_t num_comp = EMU_NUM_COMP_VECTORS;
	int ret;

	if (!b->ctx->have_context)
		return EINVAL;
	ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS,
			      &num_comp, sizeof(num_comp));
	if (!ret || ret == ENOENT)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT,
				      &core_support, sizeof(core_support));
	if (ret && ret != ENOENT)
		return ret;
	memcpy(&uctx, b->ctx->ucontext_resp, sizeof(uctx));
	uctx.response_length = (uint32_t)(a->len < sizeof(uctx) ? a->len : sizeof(uctx));
	return emu_ioc_copy_to_struct_or_zero(b, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
					      &uctx, sizeof(uctx));
}

/*
 * UVERBS_METHOD_ASYNC_EVENT_ALLOC: the async event file of a context made
 * by the ioctl GET_CONTEXT.  A second one is another user context's on the
 * same ucontext (import.c): a file that receives nothing.
 */
static int async_event_alloc(struct emu_ioc *b)
{
	struct emu_ctx *ctx = b->ctx;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	if (ctx->async.dev_fd >= 0) {
		/* another user context on the ucontext: ibv_import_device() */
		int fd;

		ret = emu_async_more_locked(ctx, &fd);
		if (ret)
			return ret;
		ret = emu_ioc_put_new(b, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, fd);
		if (ret) {
			emu_async_more_closed_locked(ctx, fd);
			emu_real_close(fd);
		}
		return ret;
	}
	ret = emu_evq_open(&ctx->async);
	if (ret)
		return ret;
	ret = emu_ioc_put_new(b, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE,
			      ctx->async.user_fd);
	if (ret) {
		emu_real_close(ctx->async.user_fd);
		emu_evq_close(&ctx->async);
		ctx->async.user_fd = -1;
		return ret;
	}
	emu_fd_watch(ctx->async.user_fd, true);
	return 0;
}

/* UVERBS_METHOD_QUERY_PORT: the legacy answer plus port_cap_flags2 */
static int query_port(struct emu_ioc *b)
{
	struct ib_uverbs_query_port cmd = { 0 };
	struct ib_uverbs_query_port_resp_ex resp = { 0 };
	struct emu_cmd c = { .ctx = b->ctx, .in = &cmd, .in_len = sizeof(cmd),
			     .out = &resp.legacy_resp,
			     .out_len = sizeof(resp.legacy_resp) };
	uint64_t port;
	int ret;

	if (!b->ctx->have_context)
		return EINVAL;
	ret = emu_ioc_get_const(b, UVERBS_ATTR_QUERY_PORT_PORT_NUM, UINT8_MAX, &port);
	if (ret)
		return ret;
	cmd.port_num = (uint8_t)port;
	ret = emu_cmd_query_port(&c);
	if (ret)
		return ret;
	/* PortInfo's CapabilityMask2, which the legacy answer has no room for */
	if (emu_cfg.link_layer != IBV_LINK_LAYER_ETHERNET)
		resp.port_cap_flags2 = (uint16_t)EMU_CAP(ib_port_cap_flags2);
	return emu_ioc_copy_to_struct_or_zero(b, UVERBS_ATTR_QUERY_PORT_RESP, &resp,
					      sizeof(resp));
}

/*
 * MLX5_IB_METHOD_QUERY_PORT (mlx5dv_query_port()): vport and e-switch
 * facts, which a port outside switchdev mode and multi-port affinity (ours)
 * answers with no flag set.
 */
static int mlx5_query_port(struct emu_ioc *b)
{
	struct mlx5_ib_uapi_query_port info = { 0 };
	uint32_t port;

	if (emu_ioc_copy_from(b, MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, &port, sizeof(port)))
		return EFAULT;
	if (!b->ctx->have_context || !emu_port_valid(b->ctx, port))
		return EINVAL;
	return emu_ioc_copy_to_struct_or_zero(b, MLX5_IB_ATTR_QUERY_PORT, &info,
					      sizeof(info));
}

/*
 * Entry index of port_num's GID table as the kernel's GID cache holds it
 * (drivers/infiniband/core/cache.c): the host's GIDs and their types
 * (subnet.c, the ones sysfs shows), and a RoCE GID's netdev, EMU_NETDEV
 * (an InfiniBand GID has none: netdev_ifindex 0).  False if the entry is
 * empty.
 */
static bool gid_entry(unsigned dev, uint32_t port_num, uint32_t index,
		      struct ib_uverbs_gid_entry *e)
{
	const struct emu_port_id *id = &emu_cfg.dev[dev].port[port_num - 1];

	if (index >= id->num_gids)
		return false;
	memset(e, 0, sizeof(*e));
	memcpy(e->gid, id->gid[index].raw, sizeof(e->gid));
	e->gid_index = index;
	e->port_num = port_num;
	e->gid_type = id->gid_type[index];
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET)
		e->netdev_ifindex = if_nametoindex(EMU_NETDEV);
	return true;
}

/* uverbs_get_flags32() with no flag allowed: absent or 0, else EINVAL */
static int no_flags(const struct emu_ioc *b, uint16_t id)
{
	uint64_t flags;
	int ret = emu_ioc_get_flags(b, id, &flags);

	return ret ? ret : flags ? EINVAL : 0;
}

/*
 * UVERBS_METHOD_QUERY_GID_TABLE (ibv_query_gid_table()): every valid entry
 * of every port, in the kernel handler's order of checks
 * (uverbs_std_types_device.c): the flags, an entry size of 0 or a buffer
 * not a whole number of entries (or none) -> EINVAL, no ucontext -> EINVAL,
 * more valid entries than the buffer holds -> EINVAL (rdma_query_gid_table()).
 * Entries are written at the caller's entry size, cut or zero-padded
 * (copy_gid_entries_to_user()).
 */
static int query_gid_table(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *out = emu_ioc_get(b, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES);
	struct ib_uverbs_gid_entry e;
	uint64_t esize, max, n = 0;
	size_t copy;
	uint8_t *buf;
	int ret;

	ret = no_flags(b, UVERBS_ATTR_QUERY_GID_TABLE_FLAGS);
	if (!ret)
		ret = emu_ioc_get_const(b, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE,
					UINT64_MAX, &esize);
	if (ret)
		return ret;
	if (!esize || out->len % esize || !(max = out->len / esize))
		return EINVAL;
	if (!b->ctx->have_context)
		return EINVAL;
	buf = calloc(1, out->len);
	if (!buf)
		return ENOMEM;
	copy = esize < sizeof(e) ? esize : sizeof(e);
	for (unsigned p = 1; p <= emu_cfg.num_ports; p++)
		for (uint32_t i = 0; i < emu_cap_gid_tbl_len(); i++) {
			if (!gid_entry(b->ctx->dev_index, p, i, &e))
				continue;
			if (n == max) {
				free(buf);
				return EINVAL;
			}
			memcpy(buf + n++ * esize, &e, copy);
		}
	ret = emu_copy_to_user(out->data, buf, n * esize) ? EFAULT : 0;
	free(buf);
	if (!ret)
		ret = emu_ioc_output_written(b, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES);
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES,
				      &n, sizeof(n));
	return ret;
}

/*
 * UVERBS_METHOD_QUERY_GID_ENTRY (ibv_query_gid_ex(), and ibv_query_gid()
 * and ibv_query_gid_type() through it): flags -> EINVAL, no ucontext or a
 * port the device lacks -> EINVAL, then rdma_get_gid_attr(): an index past
 * the table -> EINVAL, an empty entry -> ENODATA (libibverbs gives
 * ibv_query_gid() zeros for that).
 */
static int query_gid_entry(struct emu_ioc *b)
{
	struct ib_uverbs_gid_entry e;
	uint64_t port, index;
	int ret;

	ret = no_flags(b, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS);
	if (!ret)
		ret = emu_ioc_get_const(b, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, UINT32_MAX, &port);
	if (!ret)
		ret = emu_ioc_get_const(b, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, UINT32_MAX,
					&index);
	if (ret)
		return ret;
	if (!b->ctx->have_context || !emu_port_valid(b->ctx, (unsigned)port))
		return EINVAL;
	if (index >= emu_cap_gid_tbl_len())
		return EINVAL;
	if (!gid_entry(b->ctx->dev_index, (uint32_t)port, (uint32_t)index, &e))
		return ENODATA;
	return emu_ioc_copy_to_struct_or_zero(b, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, &e,
					      sizeof(e));
}

const struct emu_ioc_method emu_ioc_device_methods[] = {
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT, get_context, true, {
		PTR_OUT_TYPE(UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, uint32_t, 0),
		PTR_OUT_TYPE(UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, uint64_t, 0),
		UHW } },
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, query_context, false, {
		PTR_OUT_TYPE(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, uint32_t, 0),
		PTR_OUT_TYPE(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, uint64_t, 0),
		/* mlx5_ib's addition to the method */
		PTR_OUT_STRUCT(MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
			       struct mlx5_ib_alloc_ucontext_resp, dump_fill_mkey, MAND) } },
	{ UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC, async_event_alloc,
	  false, {
		{ UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, EMU_IOC_NEW, MAND, 0, 0 } } },
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE, invoke_write, true, {
		CONST_IN(UVERBS_ATTR_WRITE_CMD, MAND),
		PTR_IN_MIN(UVERBS_ATTR_CORE_IN, sizeof(uint32_t), 0),
		PTR_OUT_MIN(UVERBS_ATTR_CORE_OUT, 0, 0),
		UHW } },
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT, query_port, false, {
		CONST_IN(UVERBS_ATTR_QUERY_PORT_PORT_NUM, MAND),
		PTR_OUT_STRUCT(UVERBS_ATTR_QUERY_PORT_RESP,
			       struct ib_uverbs_query_port_resp_ex, reserved, MAND) } },
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE, query_gid_table, false, {
		CONST_IN(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, MAND),
		FLAGS_IN(UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, 0),
		PTR_OUT_MIN(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, 0, MAND),
		PTR_OUT_TYPE(UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, uint64_t, MAND) } },
	{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY, query_gid_entry, false, {
		CONST_IN(UVERBS_ATTR_QUERY_GID_ENTRY_PORT, MAND),
		CONST_IN(UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, MAND),
		FLAGS_IN(UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, MAND),
		PTR_OUT_STRUCT(UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY,
			       struct ib_uverbs_gid_entry, netdev_ifindex, MAND) } },
	{ UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT, mlx5_query_port, false, {
		PTR_IN_TYPE(MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, uint32_t, MAND),
		PTR_OUT_STRUCT(MLX5_IB_ATTR_QUERY_PORT, struct mlx5_ib_uapi_query_port,
			       reg_c0, MAND) } },
};

const size_t emu_ioc_device_methods_count = EMU_ARRAY_SIZE(emu_ioc_device_methods);
