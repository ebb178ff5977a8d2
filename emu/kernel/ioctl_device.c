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
#include <stddef.h>
#include <stdlib.h>

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
	{ UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT, mlx5_query_port, false, {
		PTR_IN_TYPE(MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, uint32_t, MAND),
		PTR_OUT_STRUCT(MLX5_IB_ATTR_QUERY_PORT, struct mlx5_ib_uapi_query_port,
			       reg_c0, MAND) } },
};

const size_t emu_ioc_device_methods_count = EMU_ARRAY_SIZE(emu_ioc_device_methods);
