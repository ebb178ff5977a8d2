/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_create.c - the objects' CREATE methods libibverbs tries before the
 * write() commands, answered by the same handlers: CQ_CREATE, SRQ_CREATE
 * and QP_CREATE (rdma-core libibverbs/cmd_cq.c, cmd_srq.c, cmd_qp.c; the
 * kernel's uverbs_std_types_cq.c, uverbs_std_types_srq.c,
 * uverbs_std_types_qp.c).
 */
#include <limits.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdlib.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "internal.h"

/* the mlx5 request of UHW_IN after a core request, a response buffer for UHW_OUT */
static int uhw_bufs(const struct emu_ioc *b, struct emu_cmd *c, void **drv, void **drv_out)
{
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	int ret = emu_ioc_dup(b, UVERBS_ATTR_UHW_IN, drv, &c->drv_in_len);

	if (ret)
		return ret;
	c->drv_out_len = uout ? uout->len : 0;
	*drv_out = calloc(1, c->drv_out_len + 8);
	if (!*drv_out) {
		free(*drv);
		*drv = NULL;
		return ENOMEM;
	}
	c->drv_in = *drv;
	c->drv_out = *drv_out;
	return 0;
}

/*
 * What the CREATE methods share once their attributes are checked: the
 * write() command's handler with the driver buffers of UHW_IN and UHW_OUT,
 * the new object's handle (*handle, which the handler set) into
 * handle_attr, and UHW_OUT.  The method then copies its own outputs; the
 * first that fails destroys the object (uverbs_finalize_uobj_create()).
 */
static int create_run(struct emu_ioc *b, struct emu_cmd *c, int (*handler)(struct emu_cmd *),
		      uint16_t handle_attr, const uint32_t *handle, enum emu_obj_type type)
{
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	void *drv = NULL, *drv_out = NULL;
	int ret = uhw_bufs(b, c, &drv, &drv_out);

	if (ret)
		return ret;
	ret = handler(c);
	if (!ret)
		ret = emu_ioc_put_new_obj(b, handle_attr,
					  emu_obj_get_locked(b->ctx, *handle, type));
	if (!ret && uout && emu_copy_to_user(uout->data, drv_out, c->drv_out_len))
		ret = EFAULT;	/* the driver's ib_copy_to_udata() */
	free(drv);
	free(drv_out);
	return ret;
}

/* QP_CREATE's send CQ, and its receive CQ but on an XRC initiator */
static int qp_cqs(struct emu_ioc *b, uint64_t type, struct ib_uverbs_ex_create_qp *cmd)
{
	struct emu_obj *obj;
	int ret;

	obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, EMU_OBJ_CQ, &ret);
	if (!obj)
		return ret;
	cmd->send_cq_handle = obj->handle;
	if (type != IBV_QPT_XRC_SEND) {
		obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, EMU_OBJ_CQ, &ret);
		if (!obj)
			return ret;
		cmd->recv_cq_handle = obj->handle;
	}
	return 0;
}

/*
 * QP_CREATE of an RSS QP: its table takes the place of the CQs, which
 * it may not have (a send CQ: mlx5's check_qp_attr(); the receive side
 * is the table's).  The write() form's handler makes it (rss.c).
 */
static int rss_qp_attrs(struct emu_ioc *b, struct ib_uverbs_ex_create_qp *cmd)
{
	const struct emu_rwq_ind_tbl *t;
	int ret;

	t = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, EMU_OBJ_RWQ_IND_TBL,
			    &ret);
	if (!t)
		return ret;
	if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE) ||
	    emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE) ||
	    emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE))
		return EINVAL;
	cmd->comp_mask |= IB_UVERBS_CREATE_QP_MASK_IND_TABLE;
	cmd->rwq_ind_tbl_handle = t->obj.handle;
	return 0;
}

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
	if (evfd && (evfd->data_s64 < 0 || evfd->data_s64 > INT32_MAX ||
		     !emu_async_is_ctx_locked(ctx, (int)evfd->data_s64)))
		return EBADF;
	if (chan)
		cmd.comp_channel = chan->data_s64 < 0 || chan->data_s64 > INT32_MAX ?
				   INT32_MAX : (int32_t)chan->data_s64;
	if (emu_ioc_out_check(b, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_UHW_OUT, uout ? uout->len : 0))
		return EFAULT;

	ret = create_run(b, &c, emu_cmd_create_cq_ex, UVERBS_ATTR_CREATE_CQ_HANDLE,
			 &resp.base.cq_handle, EMU_OBJ_CQ);
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &resp.base.cqe,
				      sizeof(resp.base.cqe));
	return ret;
}

/*
 * UVERBS_METHOD_SRQ_CREATE: CREATE_XSRQ from attributes.  The XRC domain
 * and the CQ are IDR attributes, required by the type that uses them (an
 * absent one is ENOENT, as uverbs_attr_get_obj()); RESP_SRQ_NUM answers an
 * XRC SRQ's number.
 */
static int srq_create(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *evfd = emu_ioc_get(b, UVERBS_ATTR_CREATE_SRQ_EVENT_FD);
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	struct ib_uverbs_create_xsrq cmd = { 0 };
	struct ib_uverbs_create_srq_resp resp = { 0 };
	struct emu_ctx *ctx = b->ctx;
	struct emu_cmd c = { .ctx = ctx, .in = &cmd, .in_len = sizeof(cmd), .out = &resp,
			     .out_len = sizeof(resp) };
	struct emu_obj *obj;
	uint64_t type;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	if (emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_SRQ_MAX_SGE, &cmd.max_sge,
			      sizeof(cmd.max_sge)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_SRQ_MAX_WR, &cmd.max_wr,
			      sizeof(cmd.max_wr)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_SRQ_LIMIT, &cmd.srq_limit,
			      sizeof(cmd.srq_limit)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, &cmd.user_handle,
			      sizeof(cmd.user_handle)))
		return EFAULT;
	ret = emu_ioc_get_const(b, UVERBS_ATTR_CREATE_SRQ_TYPE, UINT32_MAX, &type);
	if (ret)
		return ret;
	cmd.srq_type = (uint32_t)type;
	if (type == IBV_SRQT_XRC || type == IBV_SRQT_TM) {
		obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, EMU_OBJ_CQ, &ret);
		if (!obj)
			return ret;
		cmd.cq_handle = obj->handle;
	}
	if (type == IBV_SRQT_XRC) {
		obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE, EMU_OBJ_XRCD, &ret);
		if (!obj)
			return ret;
		cmd.xrcd_handle = obj->handle;
	} else if (type == IBV_SRQT_TM) {
		if (emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS, &cmd.max_num_tags,
				      sizeof(cmd.max_num_tags)))
			return EFAULT;
	} else if (type != IBV_SRQT_BASIC) {
		return EINVAL;
	}
	obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, EMU_OBJ_PD, &ret);
	if (!obj)
		return ret;
	cmd.pd_handle = obj->handle;
	if (evfd && (evfd->data_s64 < 0 || evfd->data_s64 > INT32_MAX ||
		     !emu_async_is_ctx_locked(ctx, (int)evfd->data_s64)))
		return EBADF;
	if (emu_ioc_out_check(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_UHW_OUT, uout ? uout->len : 0))
		return EFAULT;

	ret = create_run(b, &c, emu_cmd_create_xsrq, UVERBS_ATTR_CREATE_SRQ_HANDLE,
			 &resp.srq_handle, EMU_OBJ_SRQ);
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, &resp.max_wr,
				      sizeof(resp.max_wr));
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, &resp.max_sge,
				      sizeof(resp.max_sge));
	if (!ret && type == IBV_SRQT_XRC)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, &resp.srqn,
				      sizeof(resp.srqn));
	return ret;
}

/*
 * UVERBS_METHOD_QP_CREATE: the extended CREATE_QP from attributes, with the
 * checks of the kernel's handler (uverbs_std_types_qp.c) before it: which
 * object attributes a type may and must carry (an absent required one is
 * ENOENT, one it may not carry EINVAL), the creation flags a type takes
 * (check_creation_flags(): none but SQ_SIG_ALL outside UD, raw and driver
 * QPs), an SRQ of the right kind.  libibverbs tries this before the write()
 * form, and only this on an imported context.
 */
static int qp_create(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *evfd = emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_EVENT_FD);
	const struct ib_uverbs_attr *uout = emu_ioc_get(b, UVERBS_ATTR_UHW_OUT);
	struct ib_uverbs_ex_create_qp cmd = { 0 };
	struct ib_uverbs_ex_create_qp_resp resp = { 0 };
	struct ib_uverbs_qp_cap cap = { 0 };
	struct emu_ctx *ctx = b->ctx;
	struct emu_cmd c = { .ctx = ctx, .in = &cmd, .in_len = sizeof(cmd), .out = &resp,
			     .out_len = sizeof(resp), .extended = true };
	const struct emu_srq *srq;
	struct emu_obj *obj;
	uint64_t type, flags;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	if (emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_QP_CAP, &cap, sizeof(cap)) ||
	    emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_QP_USER_HANDLE, &cmd.user_handle,
			      sizeof(cmd.user_handle)))
		return EFAULT;
	ret = emu_ioc_get_const(b, UVERBS_ATTR_CREATE_QP_TYPE, UINT8_MAX, &type);
	if (ret)
		return ret;
	cmd.qp_type = (uint8_t)type;
	if (type == IBV_QPT_XRC_RECV) {
		if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE) ||
		    emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE) ||
		    emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_PD_HANDLE) ||
		    emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE))
			return EINVAL;
		obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, EMU_OBJ_XRCD, &ret);
		if (!obj)
			return ret;
		cmd.pd_handle = obj->handle;	/* as the write() form names it */
	} else if (type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD ||
		   type == IBV_QPT_XRC_SEND || type == IBV_QPT_DRIVER ||
		   type == IBV_QPT_RAW_PACKET) {
		/* rdma_uattrs_has_raw_cap() comes before the objects */
		if (type == IBV_QPT_RAW_PACKET && !emu_capable(CAP_NET_RAW))
			return EPERM;
		if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE) ||
		    (type == IBV_QPT_XRC_SEND && emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE)))
			return EINVAL;
		obj = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_PD_HANDLE, EMU_OBJ_PD, &ret);
		if (!obj)
			return ret;
		cmd.pd_handle = obj->handle;
		/* an RSS QP spreads over a table of WQs (wq.c) */
		if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE))
			ret = rss_qp_attrs(b, &cmd);
		else
			ret = qp_cqs(b, type, &cmd);
		if (ret)
			return ret;
	} else {
		return EINVAL;
	}
	ret = emu_ioc_get_flags(b, UVERBS_ATTR_CREATE_QP_FLAGS, &flags);
	if (ret)
		return ret;
	if (flags & ~(uint64_t)(IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK |
				IB_UVERBS_QP_CREATE_SCATTER_FCS |
				IB_UVERBS_QP_CREATE_CVLAN_STRIPPING |
				IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING |
				IB_UVERBS_QP_CREATE_SQ_SIG_ALL))
		return EINVAL;		/* uverbs_get_flags32()'s allowed bits */
	cmd.sq_sig_all = !!(flags & IB_UVERBS_QP_CREATE_SQ_SIG_ALL);
	flags &= ~(uint64_t)IB_UVERBS_QP_CREATE_SQ_SIG_ALL;
	if (flags && type != IBV_QPT_DRIVER &&
	    ((type != IBV_QPT_RAW_PACKET && type != IBV_QPT_UD) ||
	     (flags & (IB_UVERBS_QP_CREATE_SCATTER_FCS | IB_UVERBS_QP_CREATE_CVLAN_STRIPPING) &&
	      type != IBV_QPT_RAW_PACKET)))
		return EINVAL;		/* check_creation_flags() */
	cmd.create_flags = (uint32_t)flags;
	if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SOURCE_QPN)) {
		if (emu_ioc_copy_from(b, UVERBS_ATTR_CREATE_QP_SOURCE_QPN, &cmd.source_qpn,
				      sizeof(cmd.source_qpn)))
			return EFAULT;
		cmd.create_flags |= IBV_QP_CREATE_SOURCE_QPN;
	}
	if (emu_ioc_get(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE)) {
		srq = emu_ioc_get_obj(b, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, EMU_OBJ_SRQ, &ret);
		if (!srq)
			return ret;
		if ((srq->type == IBV_SRQT_XRC) != (type == IBV_QPT_XRC_RECV))
			return EINVAL;
		cmd.srq_handle = srq->obj.handle;
		cmd.is_srq = 1;
	}
	if (evfd && (evfd->data_s64 < 0 || evfd->data_s64 > INT32_MAX ||
		     !emu_async_is_ctx_locked(ctx, (int)evfd->data_s64)))
		return EBADF;
	cmd.max_send_wr = cap.max_send_wr;
	cmd.max_recv_wr = cap.max_recv_wr;
	cmd.max_send_sge = cap.max_send_sge;
	cmd.max_recv_sge = cap.max_recv_sge;
	cmd.max_inline_data = cap.max_inline_data;
	if (emu_ioc_out_check(b, UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(cap)) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4) ||
	    emu_ioc_out_check(b, UVERBS_ATTR_UHW_OUT, uout ? uout->len : 0))
		return EFAULT;

	ret = create_run(b, &c, emu_cmd_create_qp_ex, UVERBS_ATTR_CREATE_QP_HANDLE,
			 &resp.base.qp_handle, EMU_OBJ_QP);
	if (!ret) {
		cap = (struct ib_uverbs_qp_cap){
			.max_send_wr = resp.base.max_send_wr,
			.max_recv_wr = resp.base.max_recv_wr,
			.max_send_sge = resp.base.max_send_sge,
			.max_recv_sge = resp.base.max_recv_sge,
			.max_inline_data = resp.base.max_inline_data,
		};
		ret = emu_ioc_copy_to_struct_or_zero(b, UVERBS_ATTR_CREATE_QP_RESP_CAP, &cap,
						     sizeof(cap));
	}
	if (!ret)
		ret = emu_ioc_copy_to(b, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, &resp.base.qpn,
				      sizeof(resp.base.qpn));
	return ret;
}

#define MAND		EMU_IOC_MANDATORY
#define IN(id, t, fl)	{ id, EMU_IOC_PTR_IN, fl, sizeof(t), sizeof(t) }
#define OUT(id, t, fl)	{ id, EMU_IOC_PTR_OUT, fl, sizeof(t), sizeof(t) }
#define IDR(id, fl)	{ id, EMU_IOC_IDR, fl, 0, 0 }
#define UHW		{ UVERBS_ATTR_UHW_IN, EMU_IOC_PTR_IN, 0, 0, USHRT_MAX }, \
			{ UVERBS_ATTR_UHW_OUT, EMU_IOC_PTR_OUT, 0, 0, USHRT_MAX }

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
		UHW } },
	{ UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE, srq_create, true, {
		{ UVERBS_ATTR_CREATE_SRQ_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		IDR(UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, MAND),
		IDR(UVERBS_ATTR_CREATE_SRQ_XRCD_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, 0),
		IN(UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, uint64_t, MAND),
		IN(UVERBS_ATTR_CREATE_SRQ_MAX_WR, uint32_t, MAND),
		IN(UVERBS_ATTR_CREATE_SRQ_MAX_SGE, uint32_t, MAND),
		IN(UVERBS_ATTR_CREATE_SRQ_LIMIT, uint32_t, MAND),
		IN(UVERBS_ATTR_CREATE_SRQ_MAX_NUM_TAGS, uint32_t, 0),
		IN(UVERBS_ATTR_CREATE_SRQ_TYPE, uint64_t, MAND),	/* CONST_IN */
		{ UVERBS_ATTR_CREATE_SRQ_EVENT_FD, EMU_IOC_FD, 0, 0, 0 },
		OUT(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, uint32_t, MAND),
		OUT(UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, uint32_t, MAND),
		OUT(UVERBS_ATTR_CREATE_SRQ_RESP_SRQ_NUM, uint32_t, 0),
		UHW } },
	{ UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE, qp_create, true, {
		{ UVERBS_ATTR_CREATE_QP_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		IDR(UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0),
		IDR(UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, 0),
		IN(UVERBS_ATTR_CREATE_QP_USER_HANDLE, uint64_t, MAND),
		IN(UVERBS_ATTR_CREATE_QP_CAP, struct ib_uverbs_qp_cap, MAND),
		IN(UVERBS_ATTR_CREATE_QP_TYPE, uint64_t, MAND),	/* CONST_IN */
		{ UVERBS_ATTR_CREATE_QP_FLAGS, EMU_IOC_PTR_IN, 0, 4, 8 },	/* FLAGS_IN */
		IN(UVERBS_ATTR_CREATE_QP_SOURCE_QPN, uint32_t, 0),
		{ UVERBS_ATTR_CREATE_QP_EVENT_FD, EMU_IOC_FD, 0, 0, 0 },
		OUT(UVERBS_ATTR_CREATE_QP_RESP_CAP, struct ib_uverbs_qp_cap, MAND),
		OUT(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, uint32_t, MAND),
		UHW } },
};

const size_t emu_ioc_create_methods_count = EMU_ARRAY_SIZE(emu_ioc_create_methods);
