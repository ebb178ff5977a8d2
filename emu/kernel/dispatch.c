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
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cmd_desc {
	int		(*fn)(struct emu_cmd *c);
	uint16_t	in;		/* core request size */
	uint16_t	out;		/* core response size, 0: none */
};

#define CMD(num, handler, req, resp)					\
	[IB_USER_VERBS_CMD_##num] = { handler, sizeof(struct req), resp }

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

#define EXCMD(num, handler, req, resp)					\
	[IB_USER_VERBS_EX_CMD_##num] = { handler, sizeof(struct req), sizeof(struct resp) }

static const struct cmd_desc ex_cmds[] = {
	EXCMD(QUERY_DEVICE, emu_cmd_query_device_ex, ib_uverbs_ex_query_device,
	      ib_uverbs_ex_query_device_resp),
	EXCMD(CREATE_CQ, emu_cmd_create_cq_ex, ib_uverbs_ex_create_cq,
	      ib_uverbs_ex_create_cq_resp),
	EXCMD(CREATE_QP, emu_cmd_create_qp_ex, ib_uverbs_ex_create_qp,
	      ib_uverbs_ex_create_qp_resp),
	EXCMD(MODIFY_QP, emu_cmd_modify_qp_ex, ib_uverbs_ex_modify_qp,
	      ib_uverbs_ex_modify_qp_resp),
};

static int run(struct emu_ctx *ctx, const struct cmd_desc *d, bool extended,
	       const uint8_t *core, size_t core_len, const uint8_t *drv,
	       size_t drv_len, uint64_t resp, size_t resp_core_len,
	       size_t resp_drv_len)
{
	struct emu_cmd c = { .ctx = ctx, .extended = extended };
	size_t in_size = d->in > core_len ? d->in : core_len;
	size_t out_size = d->out > resp_core_len ? d->out : resp_core_len;
	uint8_t *inbuf, *outbuf, *drvbuf;
	int ret;

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
	c.in = inbuf;
	c.in_len = core_len;
	c.drv_in = inbuf + in_size;
	c.drv_in_len = drv_len;
	c.out = outbuf;
	c.out_len = resp_core_len;
	c.drv_out = drvbuf;
	c.drv_out_len = resp_drv_len;

	/* the kernel's copy_to_user() of the response would fault */
	if (d->out && resp_core_len + resp_drv_len && !resp) {
		ret = EFAULT;
		goto out;
	}
	if (!ctx->have_context && d->fn != emu_cmd_get_context) {
		ret = EINVAL;	/* no ucontext yet */
		goto out;
	}
	ret = d->fn(&c);
	if (!ret && d->out && resp) {
		uint8_t *u = (uint8_t *)(uintptr_t)resp;

		/* the core part is cut to what the caller has room for */
		memcpy(u, outbuf, resp_core_len);
		memcpy(u + resp_core_len, drvbuf, resp_drv_len);
	}
out:
	free(inbuf);
	free(outbuf);
	free(drvbuf);
	return ret;
}

int emu_cmd_dispatch(struct emu_ctx *ctx, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	struct ib_uverbs_cmd_hdr hdr;
	const struct cmd_desc *d;
	uint32_t num;

	if (len < sizeof(hdr))
		return EINVAL;
	memcpy(&hdr, p, sizeof(hdr));
	num = hdr.command & IB_USER_VERBS_CMD_COMMAND_MASK;
	if (hdr.command & ~(IB_USER_VERBS_CMD_COMMAND_MASK |
			    IB_USER_VERBS_CMD_FLAG_EXTENDED))
		return EINVAL;

	if (!(hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED)) {
		uint64_t resp = 0;
		size_t out_len = (size_t)hdr.out_words * 4;

		if ((size_t)hdr.in_words * 4 != len)
			return EINVAL;
		if (num >= EMU_ARRAY_SIZE(legacy_cmds) || !legacy_cmds[num].fn)
			return EOPNOTSUPP;
		d = &legacy_cmds[num];
		emu_dbg("cmd %u in %zu out %zu\n", num, len, out_len);
		p += sizeof(hdr);
		len -= sizeof(hdr);
		if (len < d->in)
			return EINVAL;
		if (d->out) {
			if (out_len < d->out)
				return ENOSPC;
			memcpy(&resp, p, sizeof(resp));
		} else {
			out_len = 0;
		}
		return run(ctx, d, false, p, d->in, p + d->in, len - d->in, resp,
			   d->out, out_len - d->out);
	}

	struct ib_uverbs_ex_cmd_hdr ex;
	size_t core_in, drv_in, core_out, drv_out;

	if (len < sizeof(hdr) + sizeof(ex))
		return EINVAL;
	memcpy(&ex, p + sizeof(hdr), sizeof(ex));
	core_in = (size_t)hdr.in_words * 8;
	drv_in = (size_t)ex.provider_in_words * 8;
	core_out = (size_t)hdr.out_words * 8;
	drv_out = (size_t)ex.provider_out_words * 8;
	if (core_in + drv_in != len - sizeof(hdr) - sizeof(ex) || ex.cmd_hdr_reserved)
		return EINVAL;
	if (num >= EMU_ARRAY_SIZE(ex_cmds) || !ex_cmds[num].fn)
		return EOPNOTSUPP;
	d = &ex_cmds[num];
	emu_dbg("ex cmd %u in %zu+%zu out %zu+%zu\n", num, core_in, drv_in,
		core_out, drv_out);
	if (!ex.response && (core_out || drv_out))
		return EFAULT;
	p += sizeof(hdr) + sizeof(ex);
	return run(ctx, d, true, p, core_in, p + core_in, drv_in, ex.response,
		   core_out, drv_out);
}
