/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_create.c - the objects' CREATE methods libibverbs tries before the
 * write() commands, answered by the same handlers: so far CQ_CREATE
 * (rdma-core libibverbs/cmd_cq.c, the kernel's uverbs_std_types_cq.c).
 * QP_CREATE and SRQ_CREATE are absent, so libibverbs falls back to the
 * write() forms for those.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "internal.h"

/*
 * UVERBS_METHOD_CQ_CREATE: the extended CREATE_CQ with its fields from the
 * attributes.  The completion channel and the async event file are FD
 * attributes: another descriptor than one of this context's is EBADF, as
 * lookup_get_fd_uobject() answers.
 */
static int cq_create(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *chan = emu_ioc_get(b, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL);
	const struct ib_uverbs_attr *evfd = emu_ioc_get(b, UVERBS_ATTR_CREATE_CQ_EVENT_FD);
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	struct ib_uverbs_ex_create_cq cmd = { .comp_channel = -1 };
	struct ib_uverbs_ex_create_cq_resp resp = { 0 };
	struct emu_ctx *ctx = b->ctx;
	struct emu_cmd c = { .ctx = ctx, .in = &cmd, .in_len = sizeof(cmd), .out = &resp,
			     .out_len = sizeof(resp), .extended = true };
	void *drv = NULL, *drv_out = NULL;
	size_t drv_len, drv_out_len = uout ? uout->len : 0;
	uint64_t flags;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	if (emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &cmd.comp_vector,
			      sizeof(cmd.comp_vector)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_CQ_CQE, &cmd.cqe, sizeof(cmd.cqe)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &cmd.user_handle,
			      sizeof(cmd.user_handle)))
		return EFAULT;
	ret = emu_ioc_get_flags(b, UVERBS_ATTR_CREATE_CQ_FLAGS, &flags);
	if (ret)
		return ret;
	if (flags & ~(uint64_t)(IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION |
				IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN))
		return EINVAL;		/* uverbs_get_flags32()'s allowed bits */
	cmd.flags = (uint32_t)flags;
	if (evfd && (evfd->data_s64 < 0 || evfd->data_s64 != ctx->async.user_fd))
		return EBADF;
	if (chan)
		cmd.comp_channel = chan->data_s64 < 0 || chan->data_s64 > INT32_MAX ?
				   INT32_MAX : (int32_t)chan->data_s64;
	if (emu_ioc_out_check(b, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4) ||
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
	ret = emu_cmd_create_cq_ex(&c);
	if (!ret) {
		ret = emu_ioc_put_new(b, UVERBS_ATTR_CREATE_CQ_HANDLE, resp.base.cq_handle);
		if (ret)	/* the kernel aborts the new object */
			emu_cq_destroy_locked(emu_obj_get_locked(ctx, resp.base.cq_handle,
								 EMU_OBJ_CQ));
	}
	if (!ret) {
		emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &resp.base.cqe,
				sizeof(resp.base.cqe));
		if (uout)
			emu_copy_to_user(uout->data, drv_out, drv_out_len);
	}
	free(drv);
	free(drv_out);
	return ret;
}

#define MAND		EMU_IOC_MANDATORY
#define IN(id, t, fl)	{ id, EMU_IOC_PTR_IN, fl, sizeof(t), sizeof(t) }

const struct emu_ioc_method emu_ioc_create_methods[] = {
	{ UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE, cq_create, true, {
		{ UVERBS_ATTR_CREATE_CQ_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		IN(UVERBS_ATTR_CREATE_CQ_CQE, uint32_t, MAND),
		IN(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, uint64_t, MAND),
		{ UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, EMU_IOC_FD, 0, 0, 0 },
		IN(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, uint32_t, MAND),
		{ UVERBS_ATTR_CREATE_CQ_FLAGS, EMU_IOC_PTR_IN, 0, 4, 8 },	/* FLAGS_IN */
		{ UVERBS_ATTR_CREATE_CQ_RESP_CQE, EMU_IOC_PTR_OUT, MAND, 4, 4 },
		{ UVERBS_ATTR_CREATE_CQ_EVENT_FD, EMU_IOC_FD, 0, 0, 0 },
		{ UVERBS_ATTR_UHW_IN, EMU_IOC_PTR_IN, 0, 0, USHRT_MAX },
		{ UVERBS_ATTR_UHW_OUT, EMU_IOC_PTR_OUT, 0, 0, USHRT_MAX } } },
};

const size_t emu_ioc_create_methods_count = EMU_ARRAY_SIZE(emu_ioc_create_methods);
