/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dispatch.c - framing of the uverbs write() commands.
 *
 * A legacy command is struct ib_uverbs_cmd_hdr (in_words/out_words in
 * 4-byte units, the header included in in_words) followed by the core
 * request, whose first field is the user address of the response buffer
 * when there is one, then the driver (mlx5) request.  The response is the
 * core response followed by the driver response.
 *
 * An extended command (IB_USER_VERBS_CMD_FLAG_EXTENDED) adds struct
 * ib_uverbs_ex_cmd_hdr; sizes are in 8-byte units, excluding both headers,
 * and core and driver parts are counted separately.
 *
 * Handlers work on zeroed local copies: a short core request reads as
 * zeros, and the part of the response buffer we do not fill is cleared,
 * as the kernel does.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cmd_desc {
	int		(*fn)(struct emu_cmd *c);
	uint16_t	in;		/* core request size */
	uint16_t	out;		/* core response size, 0: none */
	/* the kernel's req_size/resp_size: shorter is ENOSPC */
	uint16_t	in_min;
	uint16_t	out_min;
};

#define CMD(num, handler, req, resp)					\
	[IB_USER_VERBS_CMD_##num] = { handler, sizeof(struct req), resp,	\
				      sizeof(struct req), resp }

static const struct cmd_desc legacy_cmds[] = {
	CMD(GET_CONTEXT, emu_cmd_get_context, ib_uverbs_get_context,
	    sizeof(struct ib_uverbs_get_context_resp)),
	CMD(QUERY_DEVICE, emu_cmd_query_device, ib_uverbs_query_device,
	    sizeof(struct ib_uverbs_query_device_resp)),
	CMD(QUERY_PORT, emu_cmd_query_port, ib_uverbs_query_port,
	    sizeof(struct ib_uverbs_query_port_resp)),
	CMD(ALLOC_PD, emu_cmd_alloc_pd, ib_uverbs_alloc_pd,
	    sizeof(struct ib_uverbs_alloc_pd_resp)),
	CMD(DEALLOC_PD, emu_cmd_dealloc_pd, ib_uverbs_dealloc_pd, 0),
	CMD(CREATE_AH, emu_cmd_create_ah, ib_uverbs_create_ah,
	    sizeof(struct ib_uverbs_create_ah_resp)),
	CMD(DESTROY_AH, emu_cmd_destroy_ah, ib_uverbs_destroy_ah, 0),
	CMD(REG_MR, emu_cmd_reg_mr, ib_uverbs_reg_mr,
	    sizeof(struct ib_uverbs_reg_mr_resp)),
	CMD(REREG_MR, emu_cmd_rereg_mr, ib_uverbs_rereg_mr,
	    sizeof(struct ib_uverbs_rereg_mr_resp)),
	CMD(DEREG_MR, emu_cmd_dereg_mr, ib_uverbs_dereg_mr, 0),
	CMD(ALLOC_MW, emu_cmd_alloc_mw, ib_uverbs_alloc_mw,
	    sizeof(struct ib_uverbs_alloc_mw_resp)),
	CMD(DEALLOC_MW, emu_cmd_dealloc_mw, ib_uverbs_dealloc_mw, 0),
	CMD(CREATE_COMP_CHANNEL, emu_cmd_create_comp_channel,
	    ib_uverbs_create_comp_channel,
	    sizeof(struct ib_uverbs_create_comp_channel_resp)),
	CMD(CREATE_CQ, emu_cmd_create_cq, ib_uverbs_create_cq,
	    sizeof(struct ib_uverbs_create_cq_resp)),
	CMD(RESIZE_CQ, emu_cmd_resize_cq, ib_uverbs_resize_cq,
	    sizeof(struct ib_uverbs_resize_cq_resp)),
	CMD(DESTROY_CQ, emu_cmd_destroy_cq, ib_uverbs_destroy_cq,
	    sizeof(struct ib_uverbs_destroy_cq_resp)),
	CMD(CREATE_QP, emu_cmd_create_qp, ib_uverbs_create_qp,
	    sizeof(struct ib_uverbs_create_qp_resp)),
	CMD(QUERY_QP, emu_cmd_query_qp, ib_uverbs_query_qp,
	    sizeof(struct ib_uverbs_query_qp_resp)),
	CMD(MODIFY_QP, emu_cmd_modify_qp, ib_uverbs_modify_qp, 0),
	CMD(DESTROY_QP, emu_cmd_destroy_qp, ib_uverbs_destroy_qp,
	    sizeof(struct ib_uverbs_destroy_qp_resp)),
	CMD(ATTACH_MCAST, emu_cmd_attach_mcast, ib_uverbs_attach_mcast, 0),
	CMD(DETACH_MCAST, emu_cmd_detach_mcast, ib_uverbs_detach_mcast, 0),
	CMD(CREATE_SRQ, emu_cmd_create_srq, ib_uverbs_create_srq,
	    sizeof(struct ib_uverbs_create_srq_resp)),
	CMD(MODIFY_SRQ, emu_cmd_modify_srq, ib_uverbs_modify_srq, 0),
	CMD(QUERY_SRQ, emu_cmd_query_srq, ib_uverbs_query_srq,
	    sizeof(struct ib_uverbs_query_srq_resp)),
	CMD(DESTROY_SRQ, emu_cmd_destroy_srq, ib_uverbs_destroy_srq,
	    sizeof(struct ib_uverbs_destroy_srq_resp)),
	CMD(OPEN_XRCD, emu_cmd_open_xrcd, ib_uverbs_open_xrcd,
	    sizeof(struct ib_uverbs_open_xrcd_resp)),
	CMD(CLOSE_XRCD, emu_cmd_close_xrcd, ib_uverbs_close_xrcd, 0),
	CMD(CREATE_XSRQ, emu_cmd_create_xsrq, ib_uverbs_create_xsrq,
	    sizeof(struct ib_uverbs_create_srq_resp)),
	CMD(OPEN_QP, emu_cmd_open_qp, ib_uverbs_open_qp,
	    sizeof(struct ib_uverbs_create_qp_resp)),
};

#define END(type, member)	(offsetof(struct type, member) +		\
				 sizeof(((struct type *)0)->member))

/*
 * Extended requests and responses may be shorter than the structures, down
 * to the last member the kernel requires (UAPI_DEF_WRITE_IO_EX in
 * drivers/infiniband/core/uverbs_cmd.c); the rest reads as zeros.
 */
#define EXCMD(num, handler, req, req_last, resp, resp_last)		\
	[IB_USER_VERBS_EX_CMD_##num] = { handler, sizeof(struct req),	\
		sizeof(struct resp), END(req, req_last), END(resp, resp_last) }

/* ... and those without a response (UAPI_DEF_WRITE_I) */
#define EXCMD_IN(num, handler, req)					\
	[IB_USER_VERBS_EX_CMD_##num] = { handler, sizeof(struct req), 0,	\
		sizeof(struct req), 0 }

/* ... and those whose request is longer than its structure (a list follows) */
#define EXCMD_LIST(num, handler, req, req_last, list_max, resp, resp_last) \
	[IB_USER_VERBS_EX_CMD_##num] = { handler, sizeof(struct req) + (list_max), \
		sizeof(struct resp), END(req, req_last), END(resp, resp_last) }

/* ... and those without a response whose request may end early (UAPI_DEF_WRITE_I_EX) */
#define EXCMD_I(num, handler, req, req_last)				\
	[IB_USER_VERBS_EX_CMD_##num] = { handler, sizeof(struct req), 0,	\
		END(req, req_last), 0 }

static const struct cmd_desc ex_cmds[] = {
	/* the specs follow the command: at most 8 of the largest kind */
	EXCMD_LIST(CREATE_FLOW, emu_cmd_create_flow, ib_uverbs_create_flow, flow_attr,
		   8 * sizeof(struct ib_uverbs_flow_spec_ipv6),
		   ib_uverbs_create_flow_resp, flow_handle),
	EXCMD_I(DESTROY_FLOW, emu_cmd_destroy_flow, ib_uverbs_destroy_flow, flow_handle),
	EXCMD(QUERY_DEVICE, emu_cmd_query_device_ex, ib_uverbs_ex_query_device,
	      reserved, ib_uverbs_ex_query_device_resp, response_length),
	EXCMD(CREATE_CQ, emu_cmd_create_cq_ex, ib_uverbs_ex_create_cq, reserved,
	      ib_uverbs_ex_create_cq_resp, response_length),
	EXCMD(CREATE_QP, emu_cmd_create_qp_ex, ib_uverbs_ex_create_qp, comp_mask,
	      ib_uverbs_ex_create_qp_resp, response_length),
	EXCMD(MODIFY_QP, emu_cmd_modify_qp_ex, ib_uverbs_ex_modify_qp, base,
	      ib_uverbs_ex_modify_qp_resp, response_length),
	EXCMD_IN(MODIFY_CQ, emu_cmd_modify_cq, ib_uverbs_ex_modify_cq),
	EXCMD(CREATE_WQ, emu_cmd_create_wq, ib_uverbs_ex_create_wq, max_sge,
	      ib_uverbs_ex_create_wq_resp, wqn),
	EXCMD(DESTROY_WQ, emu_cmd_destroy_wq, ib_uverbs_ex_destroy_wq, wq_handle,
	      ib_uverbs_ex_destroy_wq_resp, reserved),
	EXCMD_I(MODIFY_WQ, emu_cmd_modify_wq, ib_uverbs_ex_modify_wq, curr_wq_state),
	EXCMD_LIST(CREATE_RWQ_IND_TBL, emu_cmd_create_rwq_ind_tbl,
		   ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size,
		   sizeof(uint32_t) << IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE,
		   ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num),
	EXCMD_I(DESTROY_RWQ_IND_TBL, emu_cmd_destroy_rwq_ind_tbl,
		ib_uverbs_ex_destroy_rwq_ind_table, ind_tbl_handle),
};

static int run(struct emu_ctx *ctx, const struct cmd_desc *d, bool extended,
	       const uint8_t *core, size_t core_len, const uint8_t *drv,
	       size_t drv_len, uint64_t resp, size_t resp_core_len,
	       uint64_t resp_drv, size_t resp_drv_len)
{
	struct emu_cmd c = { .ctx = ctx, .extended = extended };
	size_t in_size = d->in > core_len ? d->in : core_len;
	size_t out_size = d->out > resp_core_len ? d->out : resp_core_len;
	uint8_t *inbuf, *outbuf, *drvbuf;
	int ret;

	/*
	 * The kernel would fail copy_to_user() of the response after the
	 * handler and roll the new object back; refusing a response buffer
	 * that is not writable before the handler runs has the same outcome.
	 */
	if (emu_umem_check(resp, resp_core_len, true) ||
	    emu_umem_check(resp_drv, resp_drv_len, true))
		return EFAULT;

	/* what the kernel calls "uverbs_request": a short request reads as zeros */
	inbuf = calloc(1, in_size + drv_len + 8);
	outbuf = calloc(1, out_size + 8);
	drvbuf = calloc(1, resp_drv_len + 8);
	if (!inbuf || !outbuf || !drvbuf) {
		ret = ENOMEM;
		goto out;
	}
	memcpy(inbuf, core, core_len);
	memcpy(inbuf + in_size, drv, drv_len);
	/* a longer request than we know is fine only if the extra is zeros */
	for (size_t i = d->in; i < core_len; i++)
		if (core[i]) {
			ret = EOPNOTSUPP;
			goto out;
		}
	c.in = inbuf;
	c.in_len = core_len;
	c.drv_in = inbuf + in_size;
	c.drv_in_len = drv_len;
	c.out = outbuf;
	c.out_len = resp_core_len;
	c.drv_out = drvbuf;
	c.drv_out_len = resp_drv_len;

	if (!ctx->have_context && d->fn != emu_cmd_get_context) {
		ret = EINVAL;	/* no ucontext yet */
		goto out;
	}
	ret = d->fn(&c);
	/* the core part is cut to what the caller has room for */
	if (!ret && (emu_copy_to_user(resp, outbuf, resp_core_len) ||
		     emu_copy_to_user(resp_drv, drvbuf, resp_drv_len)))
		ret = EFAULT;
out:
	free(inbuf);
	free(outbuf);
	free(drvbuf);
	return ret;
}

/* verify_hdr() of drivers/infiniband/core/uverbs_main.c, legacy commands */
static int check_legacy(const struct ib_uverbs_cmd_hdr *hdr, size_t len,
			const struct cmd_desc *d)
{
	if ((size_t)hdr->in_words * 4 != len)
		return EINVAL;
	if (len < sizeof(*hdr) + d->in_min)
		return ENOSPC;
	if ((size_t)hdr->out_words * 4 < d->out_min)
		return ENOSPC;
	return 0;
}

/* ... and extended ones: sizes in 8-byte units, without the headers */
static int check_ex(const struct ib_uverbs_cmd_hdr *hdr,
		    const struct ib_uverbs_ex_cmd_hdr *ex, size_t len,
		    const struct cmd_desc *d)
{
	if (((size_t)hdr->in_words + ex->provider_in_words) * 8 !=
	    len - sizeof(*hdr) - sizeof(*ex))
		return EINVAL;
	if ((size_t)hdr->in_words * 8 < d->in_min)
		return ENOSPC;
	if (ex->cmd_hdr_reserved)
		return EINVAL;
	if (!ex->response)
		return hdr->out_words || ex->provider_out_words ? EINVAL : 0;
	if (!hdr->out_words && !ex->provider_out_words)
		return EINVAL;
	if ((size_t)hdr->out_words * 8 < d->out_min)
		return ENOSPC;
	return 0;
}

/*
 * write() on the command fd.  `ubuf` is the caller's buffer, which we read
 * only by copying, as the kernel does: a bad pointer is EFAULT, not a crash.
 * The sizes are 16-bit word counts, so a whole command is at most about
 * 1 MiB and is copied in one go once the header has vouched for its length.
 */
int emu_cmd_dispatch(struct emu_ctx *ctx, uint64_t ubuf, size_t len)
{
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex;
	const struct cmd_desc *d;
	size_t hdr_len, body_len;
	uint8_t *body;
	uint32_t num;
	bool extended;
	int ret;

	emu_clock_tick_locked();	/* the clock pages, with no engine too */
	if (len < sizeof(hdr))
		return EINVAL;
	if (emu_copy_from_user(&hdr, ubuf, sizeof(hdr)))
		return EFAULT;
	if (hdr.command & ~(IB_USER_VERBS_CMD_COMMAND_MASK |
			    IB_USER_VERBS_CMD_FLAG_EXTENDED))
		return EINVAL;
	num = hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK;
	extended = hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED;
	if (extended ? num >= EMU_ARRAY_SIZE(ex_cmds) || !ex_cmds[num].fn
		     : num >= EMU_ARRAY_SIZE(legacy_cmds) || !legacy_cmds[num].fn)
		return EOPNOTSUPP;
	d = extended ? &ex_cmds[num] : &legacy_cmds[num];
	if (extended) {
		if (len < sizeof(hdr) + sizeof(ex))
			return EINVAL;
		if (emu_copy_from_user(&ex, ubuf + sizeof(hdr), sizeof(ex)))
			return EFAULT;
		ret = check_ex(&hdr, &ex, len, d);
		hdr_len = sizeof(hdr) + sizeof(ex);
	} else {
		ret = check_legacy(&hdr, len, d);
		hdr_len = sizeof(hdr);
	}
	if (ret)
		return ret;

	body_len = len - hdr_len;
	body = malloc(body_len + 1);
	if (!body)
		return ENOMEM;
	if (emu_copy_from_user(body, ubuf + hdr_len, body_len)) {
		free(body);
		return EFAULT;
	}

	if (!extended) {
		size_t out_len = (size_t)hdr.out_words * 4;
		uint64_t resp = 0;

		emu_dbg("cmd %u in %zu out %zu\n", num, len, out_len);
		/* the response address is the first member of such requests */
		if (d->out)
			memcpy(&resp, body, sizeof(resp));
		else
			out_len = 0;
		ret = run(ctx, d, false, body, d->in, body + d->in, body_len - d->in,
			  resp, d->out, resp + d->out, out_len - d->out);
	} else {
		size_t core_in = (size_t)hdr.in_words * 8;

		emu_dbg("ex cmd %u in %zu+%u out %u+%u\n", num, core_in,
			ex.provider_in_words * 8, hdr.out_words * 8,
			ex.provider_out_words * 8);
		ret = run(ctx, d, true, body, core_in, body + core_in,
			  body_len - core_in, ex.response, (size_t)hdr.out_words * 8,
			  ex.response + (size_t)hdr.out_words * 8,
			  (size_t)ex.provider_out_words * 8);
	}
	free(body);
	return ret;
}

/*
 * UVERBS_METHOD_INVOKE_WRITE (the kernel's uverbs_std_types_device.c): the
 * same handlers, with the headers replaced by attributes.  The command
 * number is checked as uapi_get_method() does, the sizes against the
 * handler's minimum (ENOSPC); the response goes where CORE_OUT points, not
 * to the address in the request.
 */
int emu_cmd_invoke(struct emu_ctx *ctx, uint32_t command, const void *core,
		   size_t core_len, const void *drv, size_t drv_len, uint64_t resp,
		   size_t resp_len, uint64_t drv_resp, size_t drv_resp_len)
{
	uint32_t num = command & IB_USER_VERBS_CMD_COMMAND_MASK;
	bool extended = command & IB_USER_VERBS_CMD_FLAG_EXTENDED;
	const struct cmd_desc *d;

	if (command & ~(IB_USER_VERBS_CMD_COMMAND_MASK |
			IB_USER_VERBS_CMD_FLAG_EXTENDED))
		return EINVAL;
	if (extended ? num >= EMU_ARRAY_SIZE(ex_cmds) || !ex_cmds[num].fn
		     : num >= EMU_ARRAY_SIZE(legacy_cmds) || !legacy_cmds[num].fn)
		return EOPNOTSUPP;
	d = extended ? &ex_cmds[num] : &legacy_cmds[num];
	if (core_len < d->in_min || resp_len < d->out_min)
		return ENOSPC;
	if (ctx->inherited && !emu_inherited_command_served(command))
		return EIO;	/* needs the parent's device (fork.c) */
	emu_dbg("ioctl write %s%u in %zu+%zu out %zu+%zu\n", extended ? "ex " : "",
		num, core_len, drv_len, resp_len, drv_resp_len);
	return run(ctx, d, extended, core, core_len, drv, drv_len, resp, resp_len,
		   drv_resp, drv_resp_len);
}
