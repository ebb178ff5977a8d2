/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl_destroy.c - the objects' DESTROY methods, which libibverbs tries
 * before the write() commands (rdma-core libibverbs/cmd_pd.c, cmd_mr.c,
 * cmd_cq.c, cmd_qp.c, ...), and answered by the same handlers.
 *
 * The handle is an IDR attribute (UVERBS_ACCESS_DESTROY) and is looked up
 * as uverbs_get_uobject_from_file() does: no such handle is ENOENT, the
 * handle of another object type EINVAL.  CQs, QPs and SRQs answer the
 * events reported in a mandatory response attribute, written after the
 * object is gone (drivers/infiniband/core/uverbs_std_types_cq.c, _qp.c,
 * _srq.c).
 */
#include <stdint.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "internal.h"

/* a legacy destroy command whose request is `req`, its handle at *handle */
static int destroy(struct emu_ioc *b, uint16_t id, enum emu_obj_type type,
		   int (*fn)(struct emu_cmd *), void *req, size_t req_len,
		   uint32_t *handle, uint16_t resp_id, void *resp, size_t resp_len)
{
	struct emu_cmd c = { .ctx = b->ctx, .in = req, .in_len = req_len,
			     .out = resp, .out_len = resp_len };
	int ret;
	struct emu_obj *obj = emu_ioc_get_obj(b, id, type, &ret);

	if (obj) {
		*handle = obj->handle;
		ret = fn(&c);
	}
	if (!ret && resp)
		ret = emu_ioc_copy_to(b, resp_id, resp, resp_len);
	return ret;
}

#define SIMPLE_DESTROY(name, obj, handler, req_type, field, attr)		\
static int name(struct emu_ioc *b)						\
{										\
	struct req_type req = { 0 };						\
										\
	return destroy(b, attr, obj, handler, &req, sizeof(req), &req.field,	\
		       0, NULL, 0);						\
}

SIMPLE_DESTROY(pd_destroy, EMU_OBJ_PD, emu_cmd_dealloc_pd, ib_uverbs_dealloc_pd,
	       pd_handle, UVERBS_ATTR_DESTROY_PD_HANDLE)
SIMPLE_DESTROY(mr_destroy, EMU_OBJ_MR, emu_cmd_dereg_mr, ib_uverbs_dereg_mr,
	       mr_handle, UVERBS_ATTR_DESTROY_MR_HANDLE)
SIMPLE_DESTROY(mw_destroy, EMU_OBJ_MW, emu_cmd_dealloc_mw, ib_uverbs_dealloc_mw,
	       mw_handle, UVERBS_ATTR_DESTROY_MW_HANDLE)
SIMPLE_DESTROY(ah_destroy, EMU_OBJ_AH, emu_cmd_destroy_ah, ib_uverbs_destroy_ah,
	       ah_handle, UVERBS_ATTR_DESTROY_AH_HANDLE)
SIMPLE_DESTROY(xrcd_destroy, EMU_OBJ_XRCD, emu_cmd_close_xrcd, ib_uverbs_close_xrcd,
	       xrcd_handle, UVERBS_ATTR_DESTROY_XRCD_HANDLE)

#define EVENTS_DESTROY(name, obj, handler, kind, attr, resp_attr)		\
static int name(struct emu_ioc *b)						\
{										\
	struct ib_uverbs_destroy_##kind req = { 0 };				\
	struct ib_uverbs_destroy_##kind##_resp resp = { 0 };			\
										\
	return destroy(b, attr, obj, handler, &req, sizeof(req),		\
		       &req.kind##_handle, resp_attr, &resp, sizeof(resp));	\
}

EVENTS_DESTROY(cq_destroy, EMU_OBJ_CQ, emu_cmd_destroy_cq, cq,
	       UVERBS_ATTR_DESTROY_CQ_HANDLE, UVERBS_ATTR_DESTROY_CQ_RESP)
EVENTS_DESTROY(qp_destroy, EMU_OBJ_QP, emu_cmd_destroy_qp, qp,
	       UVERBS_ATTR_DESTROY_QP_HANDLE, UVERBS_ATTR_DESTROY_QP_RESP)
EVENTS_DESTROY(srq_destroy, EMU_OBJ_SRQ, emu_cmd_destroy_srq, srq,
	       UVERBS_ATTR_DESTROY_SRQ_HANDLE, UVERBS_ATTR_DESTROY_SRQ_RESP)

#define IDR(id)		{ id, EMU_IOC_IDR, EMU_IOC_MANDATORY, 0, 0 }
#define RESP(id, t)	{ id, EMU_IOC_PTR_OUT, EMU_IOC_MANDATORY, sizeof(t), sizeof(t) }

const struct emu_ioc_method emu_ioc_destroy_methods[] = {
	{ UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY, pd_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_PD_HANDLE) } },
	{ UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, mr_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_MR_HANDLE) } },
	{ UVERBS_OBJECT_MW, UVERBS_METHOD_MW_DESTROY, mw_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_MW_HANDLE) } },
	{ UVERBS_OBJECT_AH, UVERBS_METHOD_AH_DESTROY, ah_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_AH_HANDLE) } },
	{ UVERBS_OBJECT_XRCD, UVERBS_METHOD_XRCD_DESTROY, xrcd_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_XRCD_HANDLE) } },
	{ UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, cq_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_CQ_HANDLE),
	    RESP(UVERBS_ATTR_DESTROY_CQ_RESP, struct ib_uverbs_destroy_cq_resp) } },
	{ UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, qp_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_QP_HANDLE),
	    RESP(UVERBS_ATTR_DESTROY_QP_RESP, struct ib_uverbs_destroy_qp_resp) } },
	{ UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY, srq_destroy, false,
	  { IDR(UVERBS_ATTR_DESTROY_SRQ_HANDLE),
	    RESP(UVERBS_ATTR_DESTROY_SRQ_RESP, struct ib_uverbs_destroy_srq_resp) } },
};

const size_t emu_ioc_destroy_methods_count = EMU_ARRAY_SIZE(emu_ioc_destroy_methods);
