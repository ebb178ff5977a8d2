/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qp.c - queue pairs: create (legacy and extended), open (XRC target
 * QPs of other processes), query, modify, destroy, multicast attach.
 *
 * libmlx5 allocates the send/receive rings and the doorbell record itself
 * and passes them in the mlx5 part of CREATE_QP, together with the ring
 * sizes and its user index (cqe_version 1).  We answer with a QPN and the
 * blue-flame register (bfreg) it should ring.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/capability.h>
#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

#define EMU_USER_INDEX_MASK	0xffffffu

/* ---- bfreg allocation, as mlx5's static scheme ---------------------------
 * Usable ("net") bfreg n lives in UAR n/2, slot n%2; libmlx5 numbers slots
 * 4 per UAR ("gross"), so the answer is 4*(n/2) + n%2.  Net 0 has no
 * BlueFlame and is shared by everyone; the last low_lat_bfregs are given to
 * one QP each; the rest are shared, least-used first.
 */
static uint32_t bfreg_gross(uint32_t net)
{
	return net / 2 * EMU_BFREGS_PER_UAR + net % 2;
}

static uint32_t bfreg_alloc(struct emu_ctx *ctx)
{
	uint32_t tot = ctx->tot_bfregs, low = ctx->low_lat_bfregs;
	uint32_t best = 0;

	for (uint32_t n = tot - low; n < tot; n++)
		if (!ctx->bfreg_users[n]) {
			best = n;
			goto out;
		}
	for (uint32_t n = 1; n < tot - low; n++)
		if (!best || ctx->bfreg_users[n] < ctx->bfreg_users[best])
			best = n;
out:
	ctx->bfreg_users[best]++;
	return best;
}

static void bfreg_free(struct emu_ctx *ctx, uint32_t gross)
{
	uint32_t net = gross / EMU_BFREGS_PER_UAR * 2 + gross % EMU_BFREGS_PER_UAR;

	if (net < 2 * EMU_MAX_STATIC_UARS && ctx->bfreg_users[net])
		ctx->bfreg_users[net]--;
}

/*
 * The UAR of a QP that sends, as mlx5's _create_user_qp() takes it: a page
 * of UAR_OBJ_ALLOC named by MLX5_QP_FLAG_UAR_PAGE_INDEX (the firmware
 * refuses one the context does not hold), a dynamic bfreg of the old
 * scheme (MLX5_QP_FLAG_BFREG_INDEX; GET_CONTEXT announces none), or a
 * static bfreg, which a context of dynamic UARs has none of.
 */
static int uar_flags_check(struct emu_ctx *ctx, uint32_t flags, uint32_t index)
{
	switch (flags & (MLX5_QP_FLAG_UAR_PAGE_INDEX | MLX5_QP_FLAG_BFREG_INDEX)) {
	case MLX5_QP_FLAG_UAR_PAGE_INDEX:
		return emu_uar_valid_locked(ctx, index) ? 0 : EINVAL;
	case 0:
		return ctx->dyn_uar_lib ? EINVAL : 0;
	default:
		return EINVAL;	/* bfregn_to_uar_index() of no dynamic bfreg */
	}
}

/* ---- create -------------------------------------------------------------- */

struct create_args {
	uint64_t	user_handle;
	uint32_t	pd_handle, send_cq_handle, recv_cq_handle, srq_handle;
	struct ibv_qp_cap cap;
	uint8_t		sq_sig_all, qp_type, is_srq;
	uint32_t	create_flags;
};

/*
 * The caps a user QP is refused for: only more receive WRs than the
 * device's queue holds (set_rq_size()'s sanity check in the kernel's
 * drivers/infiniband/hw/mlx5/qp.c, before it knows whether there is a
 * receive queue).  The driver checks a user QP's send queue only by the
 * sq_wqe_count libmlx5 sizes (create_user_qp(), set_user_buf_size()) and
 * takes the receive ring's stride from the request: no limit on send WRs,
 * SGEs or max_inline_data (calc_sq_size(), which refuses a WQE above
 * max_wqe_sz_sq, sizes kernel QPs only).  libmlx5 bounds them itself: a
 * send WQE must fit max_sq_desc_sz and a receive WQE max_rq_desc_sz, the
 * profile's max_wqe_sz_sq / max_wqe_sz_rq that GET_CONTEXT answers
 * (mlx5_calc_send_wqe(), mlx5_calc_rcv_wqe() in rdma-core's
 * providers/mlx5/verbs.c): on a ConnectX an RC QP takes up to 52 send
 * SGEs or 828 bytes inline and 32 receive SGEs, more than max_sge (30).
 */
static int check_caps(const struct ibv_qp_cap *cap)
{
	if (cap->max_recv_wr > EMU_CAP_POW2(log_max_qp_sz))
		return EINVAL;
	return 0;
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Scatter-to-CQE, by the rule of the kernel's mlx5 driver (qp.c, create
 * of a user QP): libmlx5 asks for it on every QP (MLX5_QP_FLAG_SCATTER_CQE
 * unless MLX5_SCATTER_TO_CQE=0 or MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE).
 * The responder side applies to RC and UC, sized by the receive CQ's CQE;
 * the requester side to RC only, and only if every WQE is signaled
 * (sq_sig_all) or the QP was created with MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE:
 * an unsignaled READ has no CQE to carry its data.  Sized by the send CQ.
 * A DCT (create_dct()) scatters only into 128-byte CQEs, up to 64 bytes
 * (MLX5_RES_SCAT_DATA64_CQE); libmlx5 asks for it because query_device
 * answers MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT, as mlx5_ib does.
 * A padded CQ (CQE_128B_PAD) takes none here: the kernel programs the QP
 * by its 128-byte stride, but the device writes 64-byte CQEs there, and
 * no public source says whether a ConnectX puts data in the padding; the
 * model keeps them in the buffers, which libmlx5 and rdmafast read either
 * way.
 */
static uint8_t scatter_room(const struct emu_cq *cq)
{
	if (!cq || cq->cqe_pad)
		return 0;
	return cq->cqe_size == 128 ? 64 : 32;
}

static void scatter_to_cqe_config(struct emu_qp *qp)
{
	qp->scat_res = qp->scat_req = 0;
	if (!(qp->mlx5_flags & MLX5_QP_FLAG_SCATTER_CQE))
		return;
	if (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC)
		qp->scat_res = scatter_room(qp->recv_cq);
	if (qp->dc == EMU_DC_DCT && scatter_room(qp->recv_cq) == 64)
		qp->scat_res = 64;
	if (qp->type == IBV_QPT_RC &&
	    (qp->sq_sig_all || (qp->mlx5_flags & MLX5_QP_FLAG_ALLOW_SCATTER_CQE)))
		qp->scat_req = scatter_room(qp->send_cq);
}

/*
 * Which DC kind an IBV_QPT_DRIVER QP is, from the mlx5 create flags, and
 * the flags a QP of that type may carry (process_vendor_flags() of the
 * kernel's mlx5 qp.c: a flag the QP cannot take is EINVAL).
 * MLX5_QP_FLAG_DCI_STREAM is taken only when the HCA reports both
 * log_max_dci_stream_channels and log_max_dci_errored_streams; libmlx5
 * sends it for every DCI created with MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS,
 * so on a device without the caps such a DCI is EINVAL.
 */
static int dc_kind(enum ibv_qp_type type, uint32_t flags, uint8_t *dc)
{
	uint32_t ok = MLX5_QP_FLAG_SIGNATURE | MLX5_QP_FLAG_SCATTER_CQE |
		      MLX5_QP_FLAG_ALLOW_SCATTER_CQE | MLX5_QP_FLAG_UAR_PAGE_INDEX |
		      MLX5_QP_FLAG_BFREG_INDEX;

	*dc = EMU_DC_NONE;
	if (EMU_CAP(log_max_dci_stream_channels) && EMU_CAP(log_max_dci_errored_streams))
		ok |= MLX5_QP_FLAG_DCI_STREAM;
	if (type == IBV_QPT_DRIVER) {
		if (flags & MLX5_QP_FLAG_TYPE_DCI) {
			*dc = EMU_DC_DCI;
			ok |= MLX5_QP_FLAG_TYPE_DCI;
		} else if (flags & MLX5_QP_FLAG_TYPE_DCT) {
			*dc = EMU_DC_DCT;
			ok = MLX5_QP_FLAG_TYPE_DCT | MLX5_QP_FLAG_SCATTER_CQE;
		} else {
			return EINVAL;	/* a driver QP of no kind this device has */
		}
	}
	/* a raw packet QP's TIR may let its own frames back in */
	if (type == IBV_QPT_RAW_PACKET)
		ok |= MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC | MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC;
	/* tunnel offloads, RSS ... not on this device */
	return flags & ~ok ? EINVAL : 0;
}

/*
 * The stream counts of a DCI with MLX5_QP_FLAG_DCI_STREAM.  create_dci()
 * of the kernel's mlx5 qp.c copies them unchecked into the QP context's
 * log_num_dci_stream_channels and log_num_dci_errored_streams, whose
 * bounds are the HCA caps; firmware answers a field beyond its cap with
 * BAD_PARAM, which the kernel returns as EINVAL (libmlx5 refuses the same
 * counts itself before it asks).  More errored streams than streams is
 * allowed: rdma-core's test_mlx5_dc creates such a DCI.  The flag on a QP
 * other than a DCI is accepted and means nothing, as in the kernel.
 */
static bool has_dci_streams(uint8_t dc, const struct mlx5_ib_create_qp *req)
{
	return dc == EMU_DC_DCI && (req->flags & MLX5_QP_FLAG_DCI_STREAM);
}

static int dci_streams_check(uint8_t dc, const struct mlx5_ib_create_qp *req)
{
	if (has_dci_streams(dc, req) &&
	    (req->dci_streams.log_num_concurent > EMU_CAP(log_max_dci_stream_channels) ||
	     req->dci_streams.log_num_errored > EMU_CAP(log_max_dci_errored_streams) ||
	     1u << req->dci_streams.log_num_errored > EMU_DCI_ERRORED_MAX))
		return EINVAL;
	return 0;
}

/*
 * A raw packet (raw Ethernet) QP, as mlx5's create_raw_packet_qp() makes
 * it: no QP object in the firmware but an SQ with its TIS and an RQ with
 * its TIR, each only if the QP has that queue (an RQ of its own: not on an
 * SRQ, not without receive WRs).  libmlx5 gives the SQ a buffer of its own
 * (sq_buf_addr of the driver request; buf_addr holds the RQ alone), and
 * learns the four numbers from the response (mlx5dv_init_obj()'s
 * MLX5DV_QP_MASK_RAW_QP_HANDLES).  The QP's number is its SQ's, or its
 * RQ's for a QP that only receives.  Each object has a number space of its
 * own in the firmware; the model gives all four the QP's number.
 * Nothing here looks at the link layer: a QP has no port before INIT, and
 * the kernel creates the objects on an InfiniBand HCA too.
 */
static void raw_packet_resp(const struct emu_qp *qp, struct mlx5_ib_create_qp_resp *drv)
{
	if (qp->sq_wqe_cnt) {
		drv->tisn = drv->sqn = qp->qpn;
		drv->comp_mask |= MLX5_IB_CREATE_QP_RESP_MASK_TISN |
				  MLX5_IB_CREATE_QP_RESP_MASK_SQN;
	}
	if (qp->rq_wqe_cnt) {
		drv->tirn = drv->rqn = qp->qpn;
		drv->comp_mask |= MLX5_IB_CREATE_QP_RESP_MASK_TIRN |
				  MLX5_IB_CREATE_QP_RESP_MASK_RQN;
	}
}

/*
 * Pin the rings of a user QP, as mlx5's create_user_qp() does: the RQ
 * then the SQ in one buffer (64-byte basic blocks), or for a raw packet
 * QP the RQ at buf_addr and the SQ at sq_buf_addr
 * (create_raw_packet_qp_sq() pins it on its own), and the doorbell
 * record's page.  *pages is what to charge.
 */
static int pin_rings(struct emu_ctx *ctx, enum ibv_qp_type type,
		     const struct mlx5_ib_create_qp *req, uint64_t *pages)
{
	uint64_t rq = (uint64_t)req->rq_wqe_count << req->rq_wqe_shift;
	uint64_t sq = (uint64_t)req->sq_wqe_count << 6;
	int ret;

	if (type != IBV_QPT_RAW_PACKET) {
		if ((ret = emu_umem_get(0, req->buf_addr, rq + sq, false, pages)) ||
		    (ret = emu_db_get(ctx, *pages, req->db_addr)))
			return ret;
		return req->buf_addr ? 0 : EFAULT;
	}
	*pages = 0;
	if (rq && (ret = emu_umem_get(0, req->buf_addr, rq, false, pages)))
		return ret;
	if (sq) {
		uint64_t sq_pages;

		if ((ret = emu_umem_get(*pages, req->sq_buf_addr, sq, false, &sq_pages)))
			return ret;
		*pages += sq_pages;
	}
	if ((ret = emu_db_get(ctx, *pages, req->db_addr)))
		return ret;
	return (rq && !req->buf_addr) || (sq && !req->sq_buf_addr) ? EFAULT : 0;
}

static int create_qp(struct emu_cmd *c, const struct create_args *a,
		     struct ib_uverbs_create_qp_resp *resp)
{
	struct emu_ctx *ctx = c->ctx;
	struct mlx5_ib_create_qp req = {};
	struct mlx5_ib_create_qp_resp drv = {};
	struct emu_pd *pd = NULL;
	struct emu_cq *scq = NULL, *rcq = NULL;
	struct emu_srq *srq = NULL;
	struct emu_xrcd *xrcd = NULL;
	struct ibv_qp_cap cap = a->cap;
	enum ibv_qp_type type = a->qp_type;
	struct emu_qp *qp;
	uint32_t rq_max_gs = 0;
	uint64_t ring = 0;
	uint8_t dc;
	int ret;

	/* the types create_qp() in uverbs_cmd.c knows; others are EINVAL */
	switch (type) {
	case IBV_QPT_RC: case IBV_QPT_UC: case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND: case IBV_QPT_XRC_RECV:
		break;
	case IBV_QPT_RAW_PACKET:
		/* uverbs' check, before it looks up any object */
		if (!emu_capable(CAP_NET_RAW))
			return EPERM;
		break;
	case IBV_QPT_DRIVER:
		break;		/* DC: the mlx5 part says which kind */
	default:
		return EINVAL;
	}

	/* ---- the mlx5 part ---- */
	if (c->drv_in_len < offsetof(struct mlx5_ib_create_qp, uidx) + sizeof(req.uidx))
		return EINVAL;	/* cqe_version 1 needs the user index */
	memcpy(&req, c->drv_in, c->drv_in_len < sizeof(req) ? c->drv_in_len : sizeof(req));
	if ((ret = dc_kind(type, req.flags, &dc)) || (ret = dci_streams_check(dc, &req)))
		return ret;
	if (dc == EMU_DC_DCT) {
		/*
		 * A DC target (create_dct() of the kernel's mlx5 qp.c): no
		 * queues of its own, so no rings to pin; it receives through
		 * an SRQ into its receive CQ, both required.
		 */
		if (!a->is_srq || req.buf_addr || req.db_addr ||
		    req.sq_wqe_count || req.rq_wqe_count)
			return EINVAL;
		memset(&cap, 0, sizeof(cap));
	}

	if (type == IBV_QPT_XRC_RECV) {
		/* the target's "PD handle" names its XRC domain */
		xrcd = emu_obj_get_locked(ctx, a->pd_handle, EMU_OBJ_XRCD);
		if (!xrcd)
			return EINVAL;
		memset(&cap, 0, sizeof(cap));
	} else {
		if (type == IBV_QPT_XRC_SEND) {
			cap.max_recv_wr = 0;
			cap.max_recv_sge = 0;
		} else {
			if (a->is_srq) {
				srq = emu_obj_get_locked(ctx, a->srq_handle, EMU_OBJ_SRQ);
				/* the core refuses an XRC SRQ only */
				if (!srq || srq->type == IBV_SRQT_XRC)
					return EINVAL;
			}
			rcq = emu_obj_get_locked(ctx, a->recv_cq_handle, EMU_OBJ_CQ);
			if (!rcq)
				return EINVAL;
		}
		scq = emu_obj_get_locked(ctx, a->send_cq_handle, EMU_OBJ_CQ);
		pd = emu_obj_get_locked(ctx, a->pd_handle, EMU_OBJ_PD);
		if (!scq || !pd)
			return EINVAL;
	}
	if ((ret = check_caps(&cap)))
		return ret;
	/*
	 * No receive queue of its own (qp_has_rq() of the kernel's mlx5
	 * qp.c: an SRQ, XRC, no receive WRs): set_rq_size() zeroes the
	 * receive caps, which CREATE_QP's response then carries.
	 */
	if (srq || !cap.max_recv_wr) {
		cap.max_recv_wr = 0;
		cap.max_recv_sge = 0;
	}
	/* only the create flags this device implements */
	if (a->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)
		return EINVAL;

	if (req.uidx > EMU_USER_INDEX_MASK)
		return EINVAL;
	if (type != IBV_QPT_XRC_RECV && dc != EMU_DC_DCT &&
	    (ret = uar_flags_check(ctx, req.flags, req.bfreg_index)))
		return ret;
	if (type == IBV_QPT_XRC_RECV || dc == EMU_DC_DCT) {
		/* the kernel creates target QPs itself: no user rings to take */
		req.buf_addr = req.db_addr = 0;
		req.sq_wqe_count = req.rq_wqe_count = req.rq_wqe_shift = 0;
	} else {
		if (req.sq_wqe_count && !is_pow2(req.sq_wqe_count))
			return EINVAL;
		if (req.sq_wqe_count > EMU_CAP_POW2(log_max_qp_sz) ||
		    req.rq_wqe_count > EMU_CAP_POW2(log_max_qp_sz))
			return EINVAL;
		if (req.rq_wqe_count && !is_pow2(req.rq_wqe_count))
			return EINVAL;
		if (req.rq_wqe_shift > 31 || (srq && req.rq_wqe_count))
			return EINVAL;
		/*
		 * set_rq_size() of a user QP: the ring libmlx5 made, not the
		 * WRs asked; a signature takes one SGE's room in each WQE.
		 */
		if (cap.max_recv_wr) {
			uint32_t sig = (req.flags & MLX5_QP_FLAG_SIGNATURE) ? 1 : 0;

			if ((1u << req.rq_wqe_shift) / EMU_DATA_SEG_SZ < sig)
				return EINVAL;
			rq_max_gs = (1u << req.rq_wqe_shift) / EMU_DATA_SEG_SZ - sig;
		}
		if ((ret = pin_rings(ctx, type, &req, &ring)) ||
		    (ret = emu_db_map(ctx, req.db_addr)))
			return ret;
	}

	qp = emu_obj_alloc(ctx, EMU_OBJ_QP, sizeof(*qp), a->user_handle);
	if (!qp) {
		emu_db_unmap(ctx, req.db_addr);
		return ENOMEM;
	}
	ret = emu_num_alloc_locked(EMU_NUM_QP, qp, &qp->qpn);
	if (ret) {
		emu_obj_free_locked(&qp->obj);
		emu_db_unmap(ctx, req.db_addr);
		return ret;
	}
	emu_pin_charge(&qp->pin, ring);
	qp->type = type;
	qp->pd = pd;
	qp->send_cq = scq;
	qp->recv_cq = rcq;
	qp->srq = srq;
	qp->xrcd = xrcd;
	qp->uidx = req.uidx;
	qp->sq_sig_all = a->sq_sig_all;
	qp->create_flags = a->create_flags;
	qp->mlx5_flags = req.flags;
	qp->dc = dc;
	qp->dc_key = dc == EMU_DC_DCT ? req.access_key : 0;
	if (has_dci_streams(dc, &req)) {
		qp->log_dci_streams = req.dci_streams.log_num_concurent;
		qp->log_dci_errored = req.dci_streams.log_num_errored;
		qp->dci_streams = true;
	}
	scatter_to_cqe_config(qp);
	qp->buf = req.buf_addr;
	qp->dbrec = req.db_addr;
	qp->rq_wqe_cnt = req.rq_wqe_count;
	qp->rq_wqe_shift = req.rq_wqe_shift;
	qp->rq_buf = req.buf_addr;
	qp->sq_wqe_cnt = req.sq_wqe_count;
	qp->sq_buf = type == IBV_QPT_RAW_PACKET ? req.sq_buf_addr :
		     req.buf_addr + ((uint64_t)req.rq_wqe_count << req.rq_wqe_shift);
	if (cap.max_recv_wr) {
		qp->rq_max_wr = req.rq_wqe_count;
		qp->rq_max_gs = rq_max_gs;
	}
	qp->attr.state = IBV_QPS_RESET;
	/* XRC and DC targets send nothing: the shared no-BlueFlame register */
	if (type == IBV_QPT_XRC_RECV || dc == EMU_DC_DCT) {
		qp->bfreg = 0;
		ctx->bfreg_users[0]++;
	} else if (req.flags & MLX5_QP_FLAG_UAR_PAGE_INDEX) {
		qp->bfreg = req.bfreg_index * EMU_BFREGS_PER_UAR;
		qp->dyn_uar = true;
		emu_uar_get_locked(ctx, req.bfreg_index);
	} else {
		qp->bfreg = bfreg_gross(bfreg_alloc(ctx));
	}
	qp->bf_reg = emu_bfreg_addr(ctx, EMU_MMAP_REGULAR, qp->bfreg);

	if (pd) pd->obj.usecnt++;
	if (scq) scq->obj.usecnt++;
	if (rcq) rcq->obj.usecnt++;
	if (srq) srq->obj.usecnt++;
	if (xrcd) {
		xrcd->obj.usecnt++;
		emu_subnet_tgt_publish(xrcd->xrcdn, qp->qpn, &qp->attr);
	}
	emu_dev_qp_created(qp);

	resp->qp_handle = qp->obj.handle;
	/* a DCT gets its number in the hardware at INIT->RTR (modify_dct()) */
	resp->qpn = dc == EMU_DC_DCT ? 0 : qp->qpn;
	resp->max_send_wr = cap.max_send_wr;
	resp->max_recv_wr = cap.max_recv_wr;
	resp->max_send_sge = cap.max_send_sge;
	resp->max_recv_sge = cap.max_recv_sge;
	resp->max_inline_data = cap.max_inline_data;
	/* a QP on a page it named has no bfreg of the kernel's (MLX5_IB_INVALID_BFREG) */
	drv.bfreg_index = qp->dyn_uar ? 1u << 31 : qp->bfreg;
	if (type == IBV_QPT_RAW_PACKET)
		raw_packet_resp(qp, &drv);
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

int emu_cmd_create_qp(struct emu_cmd *c)
{
	const struct ib_uverbs_create_qp *cmd = c->in;
	struct create_args a = {
		.user_handle = cmd->user_handle,
		.pd_handle = cmd->pd_handle,
		.send_cq_handle = cmd->send_cq_handle,
		.recv_cq_handle = cmd->recv_cq_handle,
		.srq_handle = cmd->srq_handle,
		.cap = {
			.max_send_wr = cmd->max_send_wr,
			.max_recv_wr = cmd->max_recv_wr,
			.max_send_sge = cmd->max_send_sge,
			.max_recv_sge = cmd->max_recv_sge,
			.max_inline_data = cmd->max_inline_data,
		},
		.sq_sig_all = cmd->sq_sig_all,
		.qp_type = cmd->qp_type,
		.is_srq = cmd->is_srq,
	};

	return create_qp(c, &a, c->out);
}

int emu_cmd_create_qp_ex(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_create_qp *cmd = c->in;
	struct ib_uverbs_ex_create_qp_resp *resp = c->out;
	struct create_args a = {
		.user_handle = cmd->user_handle,
		.pd_handle = cmd->pd_handle,
		.send_cq_handle = cmd->send_cq_handle,
		.recv_cq_handle = cmd->recv_cq_handle,
		.srq_handle = cmd->srq_handle,
		.cap = {
			.max_send_wr = cmd->max_send_wr,
			.max_recv_wr = cmd->max_recv_wr,
			.max_send_sge = cmd->max_send_sge,
			.max_recv_sge = cmd->max_recv_sge,
			.max_inline_data = cmd->max_inline_data,
		},
		.sq_sig_all = cmd->sq_sig_all,
		.qp_type = cmd->qp_type,
		.is_srq = cmd->is_srq,
		.create_flags = cmd->create_flags,
	};
	int ret;

	if ((cmd->comp_mask & ~(uint32_t)IB_UVERBS_CREATE_QP_SUP_COMP_MASK) || cmd->reserved)
		return EINVAL;
	/* an RSS QP (rss.c), over a table of WQs (wq.c) that must exist */
	if (cmd->comp_mask & IB_UVERBS_CREATE_QP_MASK_IND_TABLE) {
		struct emu_rwq_ind_tbl *t =
			emu_obj_get_locked(c->ctx, cmd->rwq_ind_tbl_handle, EMU_OBJ_RWQ_IND_TBL);

		return t ? emu_rss_qp_create(c, t) : EINVAL;
	}
	ret = create_qp(c, &a, &resp->base);
	if (!ret)
		resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ?
						   c->out_len : sizeof(*resp));
	return ret;
}

/* ---- open (XRC target QP by number) ------------------------------------ */

int emu_cmd_open_qp(struct emu_cmd *c)
{
	const struct ib_uverbs_open_qp *cmd = c->in;
	struct ib_uverbs_create_qp_resp *resp = c->out;
	struct emu_qp_attr attr;
	struct emu_xrcd *xrcd;
	struct emu_qp *qp, *local;
	int ret;

	xrcd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_XRCD);
	if (!xrcd)
		return EINVAL;
	if (cmd->qp_type != IBV_QPT_XRC_RECV)
		return EINVAL;
	/* the QP must be a target QP of this very domain */
	local = emu_qp_by_qpn_locked(cmd->qpn);
	if (local && !local->opened) {
		if (local->type != IBV_QPT_XRC_RECV || local->xrcd->xrcdn != xrcd->xrcdn)
			return EINVAL;
		attr = local->attr;
	} else {
		ret = emu_subnet_tgt_lookup(xrcd->xrcdn, cmd->qpn, &attr);
		if (ret)
			return ret;
	}

	qp = emu_obj_alloc(c->ctx, EMU_OBJ_QP, sizeof(*qp), cmd->user_handle);
	if (!qp)
		return ENOMEM;
	qp->qpn = cmd->qpn;
	qp->type = IBV_QPT_XRC_RECV;
	qp->xrcd = xrcd;
	qp->opened = true;
	qp->attr = attr;
	qp->bf_reg = emu_bfreg_addr(c->ctx, EMU_MMAP_REGULAR, 0);
	xrcd->obj.usecnt++;
	if (local && !local->opened)
		local->obj.usecnt++;

	resp->qp_handle = qp->obj.handle;
	resp->qpn = qp->qpn;
	return 0;
}

/* ---- query --------------------------------------------------------------- */

/*
 * A path as mlx5_ib_query_qp() reads it back from the QP context
 * (to_rdma_ah_attr()) and uverbs copies it out (copy_ah_attr_to_uverbs()):
 * nothing without a port; on InfiniBand the LID, path bits, SL and, with
 * the GRH bit, the GRH; on RoCE always a GRH, no LID or path bits (RoCE
 * paths keep none) and SL 0 (mlx5_set_path() puts the priority in the
 * path's eth_prio, not its sl).
 */
static void dest_from_path(struct ib_uverbs_qp_dest *d, const struct ibv_ah_attr *a,
			   uint8_t port)
{
	bool roce = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	memset(d, 0, sizeof(*d));
	if (!port)
		return;
	d->port_num = port;
	d->static_rate = a->static_rate;
	d->is_global = roce || a->is_global;
	if (!roce) {
		d->dlid = a->dlid;
		d->src_path_bits = a->src_path_bits;
		d->sl = a->sl;
	}
	if (d->is_global) {
		memcpy(d->dgid, a->grh.dgid.raw, 16);
		d->flow_label = a->grh.flow_label;
		d->sgid_index = a->grh.sgid_index;
		d->hop_limit = a->grh.hop_limit;
		d->traffic_class = a->grh.traffic_class;
	}
}

static bool qp_is_connected(const struct emu_qp *qp)
{
	return qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC ||
	       qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV;
}

/* 1 << log_sra_max / log_rra_max: a context never given one holds log 0 */
static uint8_t rd_atomic_of(uint8_t stored)
{
	return stored ? stored : 1;
}

/*
 * A DC target (mlx5_ib_dct_query_qp()): in RTR only, a few attributes and
 * only those asked; the address vector's GRH fields it reads have no GRH
 * flag, so uverbs copies none of them out.  No caps, no sq_sig_all.
 */
static int query_dct(const struct emu_qp *qp, uint32_t mask, struct ib_uverbs_query_qp_resp *r)
{
	const struct emu_qp_attr *a = &qp->attr;

	if (mask & ~(uint32_t)(IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT |
			       IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU |
			       IBV_QP_PKEY_INDEX))
		return EINVAL;
	if (a->state != IBV_QPS_RTR)
		return EINVAL;
	memset(r, 0, sizeof(*r));
	if (mask & IBV_QP_STATE)
		r->qp_state = IBV_QPS_RTR;
	if (mask & IBV_QP_ACCESS_FLAGS)
		r->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PORT)
		r->port_num = a->port_num;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		r->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_PATH_MTU)
		r->path_mtu = (uint8_t)a->path_mtu;
	if (mask & IBV_QP_PKEY_INDEX)
		r->pkey_index = a->pkey_index;
	return 0;
}

/*
 * mlx5_ib_query_qp(): what the QP context holds (query_qp_attr()), which
 * is not always what MODIFY_QP was given: the access flags as programmed
 * (remote ones only, modify_qp() below), max_rd_atomic and
 * max_dest_rd_atomic as powers of two (1 for a context never given one),
 * a UD QP's MTU as the driver sets it past RESET (IB_MTU_4096, whatever
 * path_mtu was asked), the paths of connected QPs only.
 */
int emu_cmd_query_qp(struct emu_cmd *c)
{
	const struct ib_uverbs_query_qp *cmd = c->in;
	struct ib_uverbs_query_qp_resp *r = c->out;
	struct emu_qp *qp = emu_obj_get_locked(c->ctx, cmd->qp_handle, EMU_OBJ_QP);
	const struct emu_qp *real = qp;
	struct emu_qp_attr a;

	if (!qp)
		return EINVAL;
	if (qp->rss_tbl)
		return ENOSYS;		/* as mlx5_ib_query_qp() */
	if (qp->dc == EMU_DC_DCT)
		return query_dct(qp, cmd->attr_mask, r);
	/* an RQ in ERR beside a ready SQ: sqrq_state_to_qp_state()'s "bad" pair */
	if (qp->rq_err && qp->attr.state != IBV_QPS_ERR)
		return EINVAL;
	a = qp->attr;
	if (qp->opened) {
		/* the QP itself lives elsewhere: read its current attributes */
		struct emu_qp *local = emu_qp_by_qpn_locked(qp->qpn);

		if (local && !local->opened) {
			a = local->attr;
			real = local;
		} else if (emu_subnet_tgt_lookup(qp->xrcd->xrcdn, qp->qpn, &a)) {
			a = qp->attr;
		}
	}
	memset(r, 0, sizeof(*r));
	if (qp_is_connected(real)) {
		dest_from_path(&r->dest, &a.ah, a.port_num);
		dest_from_path(&r->alt_dest, &a.alt_ah, a.alt_port_num);
		r->alt_pkey_index = a.alt_pkey_index;
		r->alt_port_num = a.alt_port_num;
	}
	/*
	 * The receive queue as made; of a user QP's send queue the kernel
	 * knows no WR or SGE count (0) and no inline size (calc_sq_size()
	 * sets it for kernel QPs only).  libmlx5's mlx5_query_qp() puts its
	 * own send caps over these.
	 */
	r->max_recv_wr = real->rq_max_wr;
	r->max_recv_sge = real->rq_max_gs;
	r->qkey = a.qkey;
	r->rq_psn = a.rq_psn;
	r->sq_psn = a.sq_psn;
	r->dest_qp_num = a.dest_qp_num;
	r->qp_access_flags = a.qp_access_flags;
	r->pkey_index = a.pkey_index;
	r->qp_state = (uint8_t)a.state;
	r->cur_qp_state = (uint8_t)a.state;
	r->path_mtu = (uint8_t)a.path_mtu;
	if (real->type == IBV_QPT_UD && a.state != IBV_QPS_RESET)
		r->path_mtu = IBV_MTU_4096;
	r->path_mig_state = a.path_mig_state;
	r->max_rd_atomic = rd_atomic_of(a.max_rd_atomic);
	r->max_dest_rd_atomic = rd_atomic_of(a.max_dest_rd_atomic);
	r->min_rnr_timer = a.min_rnr_timer;
	r->port_num = a.port_num;
	r->timeout = a.timeout;
	r->retry_cnt = a.retry_cnt;
	r->rnr_retry = a.rnr_retry;
	r->alt_timeout = a.alt_timeout;
	r->sq_sig_all = real->sq_sig_all;
	return 0;
}

/* ---- modify -------------------------------------------------------------- */

static void ah_from_dest(struct ibv_ah_attr *a, const struct ib_uverbs_qp_dest *d)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->grh.dgid.raw, d->dgid, 16);
	a->grh.flow_label = d->flow_label;
	a->dlid = d->dlid;
	a->grh.sgid_index = d->sgid_index;
	a->grh.hop_limit = d->hop_limit;
	a->grh.traffic_class = d->traffic_class;
	a->sl = d->sl;
	a->src_path_bits = d->src_path_bits;
	a->static_rate = d->static_rate;
	a->is_global = d->is_global;
	a->port_num = d->port_num;
}

#define EMU_QP_ATTR_ALL ((uint32_t)(IBV_QP_RATE_LIMIT << 1) - 1)

/* fls(n - 1): the power of two at or above n (n <= 16, checked) */
static uint8_t rd_atomic_pow2(uint8_t n)
{
	uint8_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * The access the QP context gets (set_qpc_atomic_flags() of the kernel's
 * mlx5 qp.c, on any MODIFY_QP that carries the access flags or the
 * responder depth): the remote READ, WRITE and atomic bits only, of the
 * flags given now or last, and without responder resources (a
 * max_dest_rd_atomic of 0, given now or last) WRITE alone: READs and
 * atomics to such a QP are refused.  A DC target takes its flags as they
 * are (modify_dct(): no responder depth of its own).
 */
static uint32_t qpc_access(const struct emu_qp *qp, const struct ib_uverbs_modify_qp *cmd,
			   uint32_t mask)
{
	uint32_t remote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_ATOMIC;
	uint32_t flags = (mask & IBV_QP_ACCESS_FLAGS) ? cmd->qp_access_flags : qp->access_asked;
	uint8_t depth = (mask & IBV_QP_MAX_DEST_RD_ATOMIC) ? cmd->max_dest_rd_atomic :
			qp->resp_depth;

	if (qp->dc != EMU_DC_DCT && !depth)
		flags &= IBV_ACCESS_REMOTE_WRITE;
	return flags & remote;
}

/*
 * Whether the QP's primary path carries a UDP source port: a QP the kernel
 * gives one (mlx5_set_path(): RC, UC, XRC) on a path over a RoCE v2 GID; a
 * RoCE v1 or InfiniBand path has no UDP header, UD and DC no path.
 */
bool emu_qp_has_udp_sport(const struct emu_qp *qp)
{
	const struct emu_port_id *port;
	unsigned sgid = qp->attr.ah.grh.sgid_index;

	if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC &&
	    qp->type != IBV_QPT_XRC_SEND && qp->type != IBV_QPT_XRC_RECV)
		return false;
	if (emu_cfg.link_layer != IBV_LINK_LAYER_ETHERNET ||
	    !emu_port_valid(qp->obj.ctx, qp->attr.port_num))
		return false;
	port = &emu_cfg.dev[qp->obj.ctx->dev_index].port[qp->attr.port_num - 1];
	return sgid < port->num_gids && port->gid_type[sgid] == IBV_GID_TYPE_ROCE_V2;
}

/*
 * The UDP source port mlx5_set_path() writes into a new primary path (the
 * QP's attributes already updated): on a QP with one, when the modify also
 * names the remote QP, mlx5_set_path_udp_sport()'s port: the GRH's flow
 * label, or rdma_calc_flow_label() of the two QP numbers when the label is
 * 0, folded by rdma_flow_label_to_udp_sport() into 0xc000-0xffff.  Else 0:
 * the firmware picks a port of its own.  QUERY_QP reads it back.
 */
static uint16_t path_udp_sport(const struct emu_qp *qp, const struct ib_uverbs_modify_qp *cmd,
			       uint32_t mask)
{
	uint32_t label = cmd->dest.flow_label;

	if (!(mask & IBV_QP_DEST_QPN) || !emu_qp_has_udp_sport(qp))
		return 0;
	if (!label) {
		uint64_t v = (uint64_t)qp->qpn * cmd->dest_qp_num;

		v ^= v >> 20;
		v ^= v >> 40;
		label = (uint32_t)v & 0xfffff;
	}
	return (uint16_t)(0xc000 | ((label & 0x3fff) ^ ((label & 0xfc000) >> 14)));
}

static int check_av(const struct emu_ctx *ctx, const struct ib_uverbs_qp_dest *d)
{
	const struct emu_port_id *port;

	if (!emu_port_valid(ctx, d->port_num))
		return EINVAL;
	port = &emu_cfg.dev[ctx->dev_index].port[d->port_num - 1];
	/* RoCE has no LIDs: the path must be a GRH */
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET && !d->is_global)
		return EINVAL;
	/* rdma_fill_sgid_attr() -> rdma_get_gid_attr(): past the table, empty */
	if (d->is_global && d->sgid_index >= emu_cap_gid_tbl_len())
		return EINVAL;
	if (d->is_global && d->sgid_index >= port->num_gids)
		return ENODATA;
	return 0;
}

/*
 * mlx5_ib_modify_qp()'s driver request (struct mlx5_ib_modify_qp): none,
 * or at least up to ece_options (EINVAL); bytes past it zero, no
 * comp_mask, burst_info.reserved zero (EOPNOTSUPP).  The burst of a rate
 * limit is taken; the ECE options are not modelled.
 */
static int modify_ucmd(const struct emu_cmd *c, struct mlx5_ib_modify_qp *u)
{
	const uint8_t *in = c->drv_in;

	memset(u, 0, sizeof(*u));
	if (!c->drv_in_len)
		return 0;
	if (c->drv_in_len < offsetof(struct mlx5_ib_modify_qp, ece_options) + 4)
		return EINVAL;
	for (size_t i = sizeof(*u); i < c->drv_in_len; i++)
		if (in[i])
			return EOPNOTSUPP;
	memcpy(u, in, sizeof(*u));
	return u->comp_mask || u->burst_info.reserved ? EOPNOTSUPP : 0;
}

static int modify_qp(struct emu_cmd *c, const struct ib_uverbs_modify_qp *cmd,
		     uint32_t rate_limit)
{
	struct mlx5_ib_modify_qp ucmd;
	struct emu_qp *qp = emu_obj_get_locked(c->ctx, cmd->qp_handle, EMU_OBJ_QP);
	uint32_t mask = cmd->attr_mask;
	enum ibv_qp_state cur, next, old;
	struct emu_qp_attr *a;
	int ret;

	if (!qp)
		return EINVAL;
	if (qp->rss_tbl)
		return ENOSYS;		/* mlx5_ib_modify_qp(): nothing to move on an RSS QP */
	if (qp->opened)
		return EOPNOTSUPP;	/* see README: only the owner modifies */
	if (mask & ~EMU_QP_ATTR_ALL)
		return EOPNOTSUPP;
	if ((ret = modify_ucmd(c, &ucmd)))
		return ret;
	if (((mask & IBV_QP_CUR_STATE) && cmd->cur_qp_state > IBV_QPS_ERR) ||
	    ((mask & IBV_QP_STATE) && cmd->qp_state > IBV_QPS_ERR))
		return EINVAL;
	if ((mask & IBV_QP_PORT) && !emu_port_valid(c->ctx, cmd->port_num))
		return EINVAL;
	if (mask & IBV_QP_AV) {
		if ((ret = check_av(c->ctx, &cmd->dest)))
			return ret;
		/*
		 * The path's port is the QP's port (modify_qp() in
		 * uverbs_cmd.c): into RTR, the one RST->INIT set; otherwise
		 * the one given beside it.
		 */
		if ((mask & IBV_QP_STATE) && cmd->qp_state == IBV_QPS_RTR) {
			if (cmd->dest.port_num != qp->attr.port_num)
				return EINVAL;
		} else if ((mask & IBV_QP_PORT) && cmd->port_num != cmd->dest.port_num) {
			return EINVAL;
		}
	}
	if ((mask & IBV_QP_ALT_PATH) &&
	    (check_av(c->ctx, &cmd->alt_dest) ||
	     !emu_port_valid(c->ctx, cmd->alt_port_num) ||
	     cmd->alt_port_num != cmd->alt_dest.port_num))
		return EINVAL;

	/*
	 * A Q_Key with the top bit set is reserved for privileged users (the
	 * GSI's 0x80010000): the kernel refuses it unless the administrator
	 * allowed it (rdma_nl_get_privileged_qkey(), off by default).
	 */
	if ((mask & IBV_QP_QKEY) && (cmd->qkey & 0x80000000u))
		return EPERM;

	cur = (mask & IBV_QP_CUR_STATE) ? cmd->cur_qp_state : qp->attr.state;
	/*
	 * A QP the device drained to SQD (a failed signature check with
	 * drain_sigerr) is still RTS to the kernel: without the current state
	 * asserted, the command for RTS meets a QP in SQD, which the firmware
	 * refuses but for the moves to RESET and ERR.
	 */
	if (!(mask & IBV_QP_CUR_STATE) && qp->attr.state == IBV_QPS_SQD) {
		if (!(mask & IBV_QP_STATE) ||
		    (cmd->qp_state != IBV_QPS_RESET && cmd->qp_state != IBV_QPS_ERR))
			return EINVAL;
	}
	next = (mask & IBV_QP_STATE) ? cmd->qp_state : cur;
	/* the asserted current state must be the real one */
	if (cur != qp->attr.state && !(cur == IBV_QPS_RTS && qp->attr.state == IBV_QPS_SQE))
		return EINVAL;
	if (qp->dc == EMU_DC_DCT) {
		if (!emu_modify_dct_is_ok(cur, next, mask))
			return EINVAL;
		/* libmlx5 learns the DCT number from the mlx5 response */
		if (next == IBV_QPS_RTR &&
		    c->drv_out_len < offsetof(struct mlx5_ib_modify_qp_resp, dctn) + 4)
			return EINVAL;
	} else if (qp->dc == EMU_DC_DCI ? !emu_modify_dci_is_ok(cur, next, mask) :
		   !emu_modify_qp_is_ok(cur, next, qp->type, mask)) {
		return EINVAL;
	}
	/* a raw QP's SQ in error: modify_raw_packet_qp() has no SQERR2RTS */
	if (qp->type == IBV_QPT_RAW_PACKET && qp->attr.state == IBV_QPS_SQE &&
	    next == IBV_QPS_RTS)
		return EINVAL;

	if ((mask & IBV_QP_PKEY_INDEX) && cmd->pkey_index >= emu_cap_pkey_tbl_len())
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    cmd->max_rd_atomic > EMU_CAP_POW2(log_max_ra_req_qp))
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    cmd->max_dest_rd_atomic > EMU_CAP_POW2(log_max_ra_res_qp))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (cmd->path_mtu < IBV_MTU_256 || cmd->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MIG_STATE) && cmd->path_mig_state > IBV_MIG_ARMED)
		return EINVAL;
	/* RESET to RESET changes nothing (mlx5 skips the firmware command) */
	if (cur == IBV_QPS_RESET && next == IBV_QPS_RESET)
		return 0;
	/*
	 * a raw packet QP's rate (the state table allows it to no other QP);
	 * a burst or typical packet size only with a rate (the QoS caps
	 * offer both)
	 */
	if ((mask & IBV_QP_RATE_LIMIT) && !rate_limit &&
	    (ucmd.burst_info.max_burst_sz || ucmd.burst_info.typical_pkt_sz))
		return EINVAL;
	if ((mask & IBV_QP_RATE_LIMIT) &&
	    (ret = emu_pp_qp_rate_set(qp, rate_limit, ucmd.burst_info.max_burst_sz,
				      ucmd.burst_info.typical_pkt_sz)))
		return ret;

	a = &qp->attr;
	old = a->state;
	if (mask & IBV_QP_PKEY_INDEX)	a->pkey_index = cmd->pkey_index;
	if (mask & IBV_QP_PORT)		a->port_num = cmd->port_num;
	if (mask & IBV_QP_QKEY)		a->qkey = cmd->qkey;
	if (mask & IBV_QP_AV) {
		ah_from_dest(&a->ah, &cmd->dest);
		a->port_num = cmd->dest.port_num;
	}
	if (mask & IBV_QP_PATH_MTU)	a->path_mtu = cmd->path_mtu;
	if (mask & IBV_QP_DEST_QPN)	a->dest_qp_num = cmd->dest_qp_num & 0xffffff;
	if (mask & IBV_QP_RQ_PSN)	a->rq_psn = cmd->rq_psn & 0xffffff;
	if (mask & IBV_QP_SQ_PSN)	a->sq_psn = cmd->sq_psn & 0xffffff;
	/* log_rra_max / log_sra_max: rounded up, and 0 leaves them as they are */
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && cmd->max_dest_rd_atomic)
		a->max_dest_rd_atomic = rd_atomic_pow2(cmd->max_dest_rd_atomic);
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && cmd->max_rd_atomic)
		a->max_rd_atomic = rd_atomic_pow2(cmd->max_rd_atomic);
	if (mask & (IBV_QP_ACCESS_FLAGS | IBV_QP_MAX_DEST_RD_ATOMIC))
		a->qp_access_flags = qpc_access(qp, cmd, mask);
	if (mask & IBV_QP_MIN_RNR_TIMER) a->min_rnr_timer = cmd->min_rnr_timer & 0x1f;
	if (mask & IBV_QP_TIMEOUT)	a->timeout = cmd->timeout & 0x1f;
	if (mask & IBV_QP_RETRY_CNT)	a->retry_cnt = cmd->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)	a->rnr_retry = cmd->rnr_retry & 7;
	if (mask & IBV_QP_PATH_MIG_STATE) a->path_mig_state = cmd->path_mig_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) a->en_sqd_async_notify = cmd->en_sqd_async_notify;
	if (mask & IBV_QP_ALT_PATH) {
		ah_from_dest(&a->alt_ah, &cmd->alt_dest);
		a->alt_pkey_index = cmd->alt_pkey_index;
		a->alt_port_num = cmd->alt_port_num;
		a->alt_timeout = cmd->alt_timeout;
	}
	if (mask & IBV_QP_RATE_LIMIT)	a->rate_limit = rate_limit;
	if (mask & IBV_QP_AV)
		qp->udp_sport = path_udp_sport(qp, cmd, mask);
	a->state = next;
	if (next == IBV_QPS_RESET) {
		/* RESET forgets the connection, as a fresh QP */
		struct emu_qp_attr fresh = { .state = IBV_QPS_RESET };
		*a = fresh;
		qp->udp_sport = 0;
		qp->rq_err = false;
	}
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access_asked = cmd->qp_access_flags;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->resp_depth = cmd->max_dest_rd_atomic;
	if (qp->type == IBV_QPT_XRC_RECV)
		emu_subnet_tgt_publish(qp->xrcd->xrcdn, qp->qpn, a);
	if (qp->dc == EMU_DC_DCT && next == IBV_QPS_RTR) {
		struct mlx5_ib_modify_qp_resp drv = { .dctn = qp->qpn };
		size_t len = c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv);

		drv.response_length = (uint32_t)len;
		memcpy(c->drv_out, &drv, len);
	}
	emu_dev_qp_modified(qp, old, mask);
	return 0;
}

int emu_cmd_modify_qp(struct emu_cmd *c)
{
	const struct ib_uverbs_modify_qp *cmd = c->in;

	/* the legacy command cannot carry a rate limit */
	if (cmd->attr_mask & IBV_QP_RATE_LIMIT)
		return EOPNOTSUPP;
	return modify_qp(c, cmd, 0);
}

int emu_cmd_modify_qp_ex(struct emu_cmd *c)
{
	const struct ib_uverbs_ex_modify_qp *cmd = c->in;
	struct ib_uverbs_ex_modify_qp_resp *resp = c->out;
	int ret;

	if (cmd->reserved)
		return EINVAL;
	ret = modify_qp(c, &cmd->base, cmd->rate_limit);
	if (!ret)
		resp->response_length = (uint32_t)(c->out_len < sizeof(*resp) ?
						   c->out_len : sizeof(*resp));
	return ret;
}

/* ---- destroy ------------------------------------------------------------ */

static void mcast_drop_qp(struct emu_qp *qp)
{
	struct emu_mcast **pp = &qp->obj.ctx->mcast;

	while (*pp) {
		struct emu_mcast *m = *pp;

		if (m->qp == qp) {
			*pp = m->next;
			emu_subnet_mcast_leave(m->gid.raw, m->lid, qp->qpn);
			free(m);
		} else {
			pp = &m->next;
		}
	}
}

static bool qp_has_mcast(const struct emu_qp *qp)
{
	for (struct emu_mcast *m = qp->obj.ctx->mcast; m; m = m->next)
		if (m->qp == qp)
			return true;
	return false;
}

void emu_qp_destroy_locked(struct emu_qp *qp)
{
	struct emu_ctx *ctx = qp->obj.ctx;

	if (qp->rss_tbl) {
		emu_rss_qp_destroy_locked(qp);
		return;
	}
	if (qp->opened) {
		struct emu_qp *local = emu_qp_by_qpn_locked(qp->qpn);

		qp->xrcd->obj.usecnt--;
		emu_obj_free_locked(&qp->obj);
		/* the last handle on a target QP whose creator let go of it */
		if (local && !local->opened && local->obj.usecnt &&
		    !--local->obj.usecnt && local->obj.detached)
			emu_qp_destroy_locked(local);
		return;
	}
	emu_dev_qp_destroyed(qp);
	emu_pp_qp_rate_put(qp);
	mcast_drop_qp(qp);
	emu_pin_release(&qp->pin);
	emu_db_unmap(ctx, qp->dbrec);
	if (qp->dyn_uar)
		emu_uar_put_locked(ctx, qp->bfreg / EMU_BFREGS_PER_UAR);
	else
		bfreg_free(ctx, qp->bfreg);
	if (qp->pd) qp->pd->obj.usecnt--;
	if (qp->send_cq) qp->send_cq->obj.usecnt--;
	if (qp->recv_cq) qp->recv_cq->obj.usecnt--;
	if (qp->srq) qp->srq->obj.usecnt--;
	if (qp->xrcd) {
		emu_subnet_tgt_unpublish(qp->qpn);
		qp->xrcd->obj.usecnt--;
	}
	emu_num_free_locked(EMU_NUM_QP, qp->qpn);
	emu_obj_free_locked(&qp->obj);
}

int emu_cmd_destroy_qp(struct emu_cmd *c)
{
	const struct ib_uverbs_destroy_qp *cmd = c->in;
	struct ib_uverbs_destroy_qp_resp *resp = c->out;
	struct emu_qp *qp = emu_obj_get_locked(c->ctx, cmd->qp_handle, EMU_OBJ_QP);

	if (!qp)
		return EINVAL;
	if (qp_has_mcast(qp) || qp->flows)
		return EBUSY;	/* attached multicast groups and steering rules keep it */
	resp->events_reported = qp->async_events -
		emu_evq_reclaim_async(&c->ctx->async, qp->obj.user_handle);
	/*
	 * The creator's handle on an XRC target QP is one handle among those
	 * ibv_open_qp() made: the QP itself lives until the last one closes.
	 */
	if (qp->obj.usecnt) {
		qp->obj.detached = true;
		return 0;
	}
	emu_qp_destroy_locked(qp);
	return 0;
}

/* ---- multicast ----------------------------------------------------------- */

/*
 * The kernel's rdma_is_multicast_addr(): ff00::/8, or an IPv4-mapped
 * address in 224.0.0.0/4 (RoCE v2 over IPv4).
 */
static bool gid_is_multicast(const uint8_t *gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return gid[0] == 0xff ||
	       (!memcmp(gid, v4mapped, sizeof(v4mapped)) && (gid[12] & 0xf0) == 0xe0);
}

static int mcast_check(struct emu_cmd *c, const uint8_t *gid, uint16_t mlid,
		       uint32_t qp_handle, struct emu_qp **qpp)
{
	struct emu_qp *qp = emu_obj_get_locked(c->ctx, qp_handle, EMU_OBJ_QP);

	if (!qp || qp->opened)
		return EINVAL;
	/* multicast is a UD service, to a multicast GID (ib_attach_mcast()) */
	if (qp->type != IBV_QPT_UD || !gid_is_multicast(gid))
		return EINVAL;
	if (emu_cfg.link_layer == IBV_LINK_LAYER_INFINIBAND &&
	    (mlid < 0xc000 || mlid == 0xffff))
		return EINVAL;
	*qpp = qp;
	return 0;
}

/* An earlier entry of the device's group lists that has m's QP and GID. */
static bool mcast_seen(const struct emu_mcast *m, unsigned dev)
{
	for (const struct emu_ctx *x = emu_ctx_first_locked(); x; x = x->next) {
		if (x->dev_index != dev)
			continue;
		for (const struct emu_mcast *e = x->mcast; e; e = e->next) {
			if (e == m)
				return false;
			if (e->qp == m->qp && !memcmp(e->gid.raw, m->gid.raw, 16))
				return true;
		}
	}
	return false;
}

/*
 * The QPs of a device attached to a group: its members in the HCA's
 * multicast table, which ATTACH_TO_MCG keys by GID alone (a QP attached
 * with two LIDs is one member), across the contexts of this host.
 */
static unsigned mcast_members(const uint8_t *gid, unsigned dev)
{
	unsigned n = 0;

	for (const struct emu_ctx *x = emu_ctx_first_locked(); x; x = x->next) {
		if (x->dev_index != dev)
			continue;
		for (const struct emu_mcast *m = x->mcast; m; m = m->next)
			if (!memcmp(m->gid.raw, gid, 16) && !mcast_seen(m, dev))
				n++;
	}
	return n;
}

static bool mcast_member(const struct emu_qp *qp, const uint8_t *gid)
{
	for (const struct emu_mcast *m = qp->obj.ctx->mcast; m; m = m->next)
		if (m->qp == qp && !memcmp(m->gid.raw, gid, 16))
			return true;
	return false;
}

int emu_cmd_attach_mcast(struct emu_cmd *c)
{
	const struct ib_uverbs_attach_mcast *cmd = c->in;
	struct emu_mcast *m;
	struct emu_qp *qp;
	int ret = mcast_check(c, cmd->gid, cmd->mlid, cmd->qp_handle, &qp);

	if (ret)
		return ret;
	for (m = c->ctx->mcast; m; m = m->next)
		if (m->qp == qp && m->lid == cmd->mlid && !memcmp(m->gid.raw, cmd->gid, 16))
			return 0;	/* attaching twice is a no-op */
	/*
	 * A group holds max_mcast_qp_attach QPs.  The firmware refuses one
	 * more with a status mlx5_cmd_exec() turns into an errno; which
	 * status is not public, its "limits exceeded" (MLX5_CMD_STAT_LIM_ERR)
	 * is the one for a full table, and cmd_status_to_err() makes that
	 * ENOMEM.
	 */
	if (!mcast_member(qp, cmd->gid) &&
	    mcast_members(cmd->gid, c->ctx->dev_index) >= EMU_CAP(max_qp_mcg))
		return ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	/* the fabric learns of the member: other hosts' sends now reach it */
	ret = emu_subnet_mcast_join(cmd->gid, cmd->mlid, qp->qpn);
	if (ret) {
		free(m);
		return ret;
	}
	m->qp = qp;
	m->lid = cmd->mlid;
	memcpy(m->gid.raw, cmd->gid, 16);
	m->next = c->ctx->mcast;
	c->ctx->mcast = m;
	return 0;
}

int emu_cmd_detach_mcast(struct emu_cmd *c)
{
	const struct ib_uverbs_detach_mcast *cmd = c->in;
	struct emu_mcast **pp;
	struct emu_qp *qp;
	int ret = mcast_check(c, cmd->gid, cmd->mlid, cmd->qp_handle, &qp);

	if (ret)
		return ret;
	for (pp = &c->ctx->mcast; *pp; pp = &(*pp)->next) {
		struct emu_mcast *m = *pp;

		if (m->qp == qp && m->lid == cmd->mlid && !memcmp(m->gid.raw, cmd->gid, 16)) {
			*pp = m->next;
			emu_subnet_mcast_leave(m->gid.raw, m->lid, qp->qpn);
			free(m);
			return 0;
		}
	}
	return EINVAL;
}
