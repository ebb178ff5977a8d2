/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs.h - the glue to libibverbs and mlx5dv: create queues with
 * verbs, hand their memory to rdmafast, move QPs through their states.
 *
 * This is the only rdmafast header that includes <infiniband/mlx5dv.h>,
 * and everything in it is control path (cold, may allocate, may call into
 * libibverbs). Link with -libverbs -lmlx5.
 *
 *	rf_cq_init_ibv(&cq, ibcq);                 take over a fresh CQ
 *	rf_qp_create_ibv(&qp, &attr);              QP sized for what you post
 *	rf_cq_attach(&cq, qp.qpn, &qp.sq, &qp.rq, NULL);
 *	rf_qp_connect_ibv(&qp, &local, &remote);   RESET -> INIT -> RTR -> RTS
 *	...data path: sq.h, rq.h, cq.h...
 *	rf_qp_destroy_ibv(&qp);
 *	rf_cq_destroy_ibv(&cq, ibcq);
 *
 * A queue taken over belongs to rdmafast: never post or poll it through
 * verbs as well, and take it over before anything was posted to or
 * completed on it. These rules, threading and BlueFlame sharing are
 * explained in rdmafast(7) (sections DO NOT MIX and THREADING); this
 * header's functions in rf_verbs(3).
 *
 * Errors are 0 or a negative errno; a device that mlx5dv does not drive
 * gives -EPROTONOSUPPORT.
 */
#ifndef RDMAFAST_VERBS_H
#define RDMAFAST_VERBS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <poll.h>
#include <dlfcn.h>	/* rf_qp_close_opened_ibv() */

/*
 * mlx5dv.h's inline helpers call htobe32() and friends, which glibc only
 * declares for _DEFAULT_SOURCE; under -std=c11 they would silently become
 * undefined functions (the warning is lost inside a system header) and
 * the program would fail to link. Supply them when missing.
 */
#if !defined(htobe32)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define htobe16(x) __builtin_bswap16(x)
#define htobe32(x) __builtin_bswap32(x)
#define htobe64(x) __builtin_bswap64(x)
#define be16toh(x) __builtin_bswap16(x)
#define be32toh(x) __builtin_bswap32(x)
#define be64toh(x) __builtin_bswap64(x)
#else
#define htobe16(x) ((uint16_t)(x))
#define htobe32(x) ((uint32_t)(x))
#define htobe64(x) ((uint64_t)(x))
#define be16toh(x) ((uint16_t)(x))
#define be32toh(x) ((uint32_t)(x))
#define be64toh(x) ((uint64_t)(x))
#endif
#endif

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include <rdmafast/rdmafast.h>

RF_BEGIN_DECLS

/* Turn a verbs return (positive errno, or -1 with errno) into -errno. */
static inline RF_COLD int rf__ibv_err(int ret)
{
	if (ret > 0)
		return -ret;
	if (ret < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* -EPROTONOSUPPORT unless mlx5dv drives this device. */
static inline RF_COLD int rf_device_check_ibv(struct ibv_context *ctx)
{
	return ctx && mlx5dv_is_supported(ctx->device) ? 0 : -EPROTONOSUPPORT;
}

/* ---- CQ ---------------------------------------------------------------- */

/*
 * rf_cq_init_ibv - take over a CQ created with ibv_create_cq() (or
 * mlx5dv_create_cq(), for 128-byte CQEs) on which nothing has completed.
 * A CQ with CQE compression in the CSUM_STRIDX format needs
 * rf_cq_create_zip_ibv() (or cq->zip_stridx set). Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_init_ibv(struct rf_cq *cq, struct ibv_cq *ibcq)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dv;
	struct rf_cq_attr a;
	int ret;

	ret = rf_device_check_ibv(ibcq->context);
	if (ret)
		return ret;
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.cq.in = ibcq;
	obj.cq.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ);
	if (ret)
		return rf__ibv_err(ret);
	memset(&a, 0, sizeof(a));
	a.buf = dv.buf;
	a.cqe_cnt = dv.cqe_cnt;
	a.cqe_size = dv.cqe_size;
	a.dbrec = (__be32 *)dv.dbrec;
	a.uar = dv.cq_uar;
	a.cqn = dv.cqn;
	return rf_cq_init(cq, &a);
}

/*
 * rf_cq_create_ibv - create a CQ of at least ncqe entries, of cqe_size
 * bytes each (64, or 128 to let receives up to 64 bytes land in the CQE;
 * 0 for the library's default), with events on channel (may be NULL), and
 * take it over. *out receives the verbs CQ (destroy it with
 * ibv_destroy_cq()). Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_create_ibv(struct rf_cq *cq, struct ibv_cq **out,
					   struct ibv_context *ctx, int ncqe,
					   struct ibv_comp_channel *channel,
					   uint32_t cqe_size)
{
	struct ibv_cq *ibcq;
	int ret;

	ret = rf_device_check_ibv(ctx);
	if (ret)
		return ret;
	if (cqe_size) {
		struct ibv_cq_init_attr_ex ax;
		struct mlx5dv_cq_init_attr dx;
		struct ibv_cq_ex *cx;

		memset(&ax, 0, sizeof(ax));
		memset(&dx, 0, sizeof(dx));
		ax.cqe = (uint32_t)ncqe;
		ax.channel = channel;
		dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
		dx.cqe_size = cqe_size;
		cx = mlx5dv_create_cq(ctx, &ax, &dx);
		ibcq = cx ? ibv_cq_ex_to_cq(cx) : NULL;
	} else {
		ibcq = ibv_create_cq(ctx, ncqe, NULL, channel, 0);
	}
	if (!ibcq)
		return errno ? -errno : -ENOMEM;
	ret = rf_cq_init_ibv(cq, ibcq);
	if (ret) {
		ibv_destroy_cq(ibcq);
		return ret;
	}
	*out = ibcq;
	return 0;
}

/*
 * The tail the mlx5dv CQ helpers below share: mlx5dv_create_cq() with the
 * attributes they filled, taken over by rdmafast, destroyed again if that
 * fails. Returns 0 or -errno.
 */
static inline RF_COLD int rf__cq_create_dv_ibv(struct rf_cq *cq, struct ibv_cq **out,
					       struct ibv_context *ctx,
					       struct ibv_cq_init_attr_ex *ax,
					       struct mlx5dv_cq_init_attr *dx)
{
	struct ibv_cq_ex *cx;
	int ret;

	errno = 0;
	cx = mlx5dv_create_cq(ctx, ax, dx);
	if (!cx)
		return errno ? -errno : -ENOMEM;
	ret = rf_cq_init_ibv(cq, ibv_cq_ex_to_cq(cx));
	if (ret) {
		ibv_destroy_cq(ibv_cq_ex_to_cq(cx));
		return ret;
	}
	*out = ibv_cq_ex_to_cq(cx);
	return 0;
}

/*
 * rf_cq_create_zip_ibv - rf_cq_create_ibv() for a CQ with CQE compression:
 * mlx5dv_create_cq() with MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE and one
 * mini-CQE format (RF_MINI_CQE_RES_FORMAT_HASH, _CSUM or _CSUM_STRIDX,
 * the values of enum mlx5dv_cqe_comp_res_format). libmlx5 refuses a format
 * the device does not list in mlx5dv_query_device()'s cqe_comp_caps
 * (-EOPNOTSUPP), the kernel more than one (-EINVAL). rf_cq_poll() decodes
 * the sessions; ibv_poll_cq() cannot. Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_create_zip_ibv(struct rf_cq *cq, struct ibv_cq **out,
					       struct ibv_context *ctx, int ncqe,
					       struct ibv_comp_channel *channel,
					       uint32_t cqe_size, uint32_t mini_format)
{
	struct ibv_cq_init_attr_ex ax;
	struct mlx5dv_cq_init_attr dx;
	int ret;

	ret = rf_device_check_ibv(ctx);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	memset(&dx, 0, sizeof(dx));
	ax.cqe = (uint32_t)ncqe;
	ax.channel = channel;
	dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
	dx.cqe_comp_res_format = (uint8_t)mini_format;
	if (cqe_size) {
		dx.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
		dx.cqe_size = (uint16_t)cqe_size;
	}
	ret = rf__cq_create_dv_ibv(cq, out, ctx, &ax, &dx);
	if (!ret)
		cq->zip_stridx = mini_format == RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX;
	return ret;
}

/*
 * rf_cq_create_ts_ibv - rf_cq_create_ibv() for a CQ whose completions are
 * polled with their timestamps (rf_cq_poll_ts(), rdmafast/cq_ts.h):
 * mlx5dv_create_cq() with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, which the
 * kernel refuses on a device without a clock. real_time asks for CQEs
 * stamped in CLOCK_REALTIME nanoseconds instead of cycles
 * (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK alone, which libmlx5 turns
 * into a real-time CQ): -EOPNOTSUPP unless mlx5dv_query_device() reports
 * MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS, where libmlx5 would otherwise give a
 * free-running CQ silently. Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_create_ts_ibv(struct rf_cq *cq, struct ibv_cq **out,
					      struct ibv_context *ctx, int ncqe,
					      struct ibv_comp_channel *channel,
					      uint32_t cqe_size, int real_time)
{
	struct ibv_cq_init_attr_ex ax;
	struct mlx5dv_cq_init_attr dx;
	struct mlx5dv_context dv;
	int ret;

	ret = rf_device_check_ibv(ctx);
	if (ret)
		return ret;
	if (real_time) {
		memset(&dv, 0, sizeof(dv));
		ret = mlx5dv_query_device(ctx, &dv);
		if (ret)
			return rf__ibv_err(ret);
		if (!(dv.flags & MLX5DV_CONTEXT_FLAGS_REAL_TIME_TS))
			return -EOPNOTSUPP;
	}
	memset(&ax, 0, sizeof(ax));
	memset(&dx, 0, sizeof(dx));
	ax.cqe = (uint32_t)ncqe;
	ax.channel = channel;
	ax.wc_flags = real_time ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK :
				  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	if (cqe_size) {
		dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
		dx.cqe_size = (uint16_t)cqe_size;
	}
	return rf__cq_create_dv_ibv(cq, out, ctx, &ax, &dx);
}

/*
 * rf_cq_destroy_ibv - destroy the verbs CQ behind cq, as ibv_destroy_cq(),
 * once no QP is attached to cq (rf_cq_detach() each first: -EBUSY
 * otherwise, with nothing destroyed). The verbs layer refuses too, with
 * -EBUSY, while a QP that uses the CQ still exists. After 0, cq is dead:
 * initialize it again before any use. Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_destroy_ibv(struct rf_cq *cq, struct ibv_cq *ibcq)
{
	int ret;

	if (cq->nqp)
		return -EBUSY;
	ret = rf__ibv_err(ibv_destroy_cq(ibcq));
	if (!ret)
		cq->dbrec = NULL;	/* what rf_cq_init() refuses: a dead CQ */
	return ret;
}

/*
 * rf_cq_get_event_ibv - wait for the next event on channel (blocking, as
 * ibv_get_cq_event()), acknowledge it to verbs and count it for the
 * CQ's arm sequence. Re-arm with rf_cq_arm() afterwards, then poll.
 * Returns 0, or -errno (-EAGAIN on a non-blocking channel with no event).
 *
 * The channel must carry this CQ's events only. Each CQ's arm sequence
 * counts its own events, and an arm with a stale sequence is ignored by
 * the HCA. With a channel shared by several CQs, call ibv_get_cq_event()
 * and ibv_ack_cq_events() yourself and rf_cq_event_ack() the rf_cq that
 * owns the ibv_cq the event names.
 */
static inline RF_COLD int rf_cq_get_event_ibv(struct rf_cq *cq,
					      struct ibv_comp_channel *channel)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx))
		return errno ? -errno : -EIO;
	ibv_ack_cq_events(ev_cq, 1);
	rf_cq_event_ack(cq);
	return 0;
}

/* ---- SRQ --------------------------------------------------------------- */

/*
 * rf_srq_init_ibv - take over an SRQ (or XRC SRQ) nothing was posted to.
 * Allocates its wr_id table; free it with rf_srq_fini_ibv().
 */
static inline RF_COLD int rf_srq_init_ibv(struct rf_srq *srq, struct ibv_srq *ibsrq)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_srq dv;
	struct rf_srq_attr a;
	int ret;

	ret = rf_device_check_ibv(ibsrq->context);
	if (ret)
		return ret;
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = MLX5DV_SRQ_MASK_SRQN;
	obj.srq.in = ibsrq;
	obj.srq.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ);
	if (ret)
		return rf__ibv_err(ret);
	memset(&a, 0, sizeof(a));
	a.buf = dv.buf;
	/* a fresh libmlx5 SRQ: next[i] = i + 1, head 0, tail = last */
	a.wqe_cnt = dv.tail + 1;
	a.stride = dv.stride;
	a.head = dv.head;
	a.tail = dv.tail;
	a.srqn = (dv.comp_mask & MLX5DV_SRQ_MASK_SRQN) ? dv.srqn : 0;
	a.dbrec = (__be32 *)dv.dbrec;
	a.wr_id = (uint64_t *)calloc(a.wqe_cnt, sizeof(uint64_t));
	if (!a.wr_id)
		return -ENOMEM;
	ret = rf_srq_init(srq, &a);
	if (ret)
		free(a.wr_id);
	return ret;
}

static inline RF_COLD void rf_srq_fini_ibv(struct rf_srq *srq)
{
	free(srq->wr_id);
	srq->wr_id = NULL;
}

/*
 * rf_srq_arm_limit_ibv - arm the SRQ limit: one IBV_EVENT_SRQ_LIMIT_REACHED
 * on the context's async channel when the receives posted to srq and not
 * yet consumed drop below limit (ibv_modify_srq(3), IBV_SRQ_LIMIT). The
 * event disarms it; arm again after refilling. 0 disarms. Returns 0 or
 * -errno (-EINVAL: beyond the kernel's bound, mlx5_ib_modify_srq():
 * below its WQE count for the SRQ).
 */
static inline RF_COLD int rf_srq_arm_limit_ibv(struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a;

	memset(&a, 0, sizeof(a));
	a.srq_limit = limit;
	return rf__ibv_err(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT));
}

/*
 * rf_async_event_ibv - the next asynchronous event of ctx (IBV_EVENT_*,
 * copied to *ev and acknowledged), waiting at most ms milliseconds for it
 * (0: do not wait). Returns 0, -EAGAIN when none came, or -errno. The
 * object ev names (ev->element) stays the caller's to keep alive.
 */
static inline RF_COLD int rf_async_event_ibv(struct ibv_context *ctx,
					     struct ibv_async_event *ev, int ms)
{
	struct pollfd p;
	struct ibv_async_event e;
	int ret;

	p.fd = ctx->async_fd;
	p.events = POLLIN;
	p.revents = 0;
	ret = poll(&p, 1, ms);
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -EAGAIN;
	if (ibv_get_async_event(ctx, &e))
		return errno ? -errno : -EIO;
	*ev = e;
	ibv_ack_async_event(&e);
	return 0;
}

/* ---- QP ---------------------------------------------------------------- */

/*
 * struct rf_qp - a verbs QP taken over by rdmafast: its send queue, its
 * receive queue (when it has one, i.e. no SRQ) and the capabilities the
 * created QP really has (max_inline_data and the SGE counts are what
 * libmlx5 sized the WQEs for; rdmafast enforces them).
 */
struct rf_qp {
	struct ibv_qp    *ibqp;
	uint32_t          qpn;
	uint32_t          kind;		/* enum rf_qp_kind */
	int               has_rq;
	struct ibv_qp_cap cap;
	struct rf_sq      sq;
	struct rf_rq      rq;
};

/* Everything rf_qp_create_ibv() needs. */
struct rf_qp_init_attr {
	struct ibv_pd  *pd;
	struct ibv_cq  *send_cq;
	struct ibv_cq  *recv_cq;
	struct ibv_srq *srq;		/* NULL: the QP gets its own RQ */
	enum ibv_qp_type qp_type;	/* IBV_QPT_RC, _UC, _UD or _XRC_SEND */
	uint32_t max_send_wr;		/* WQEs of the largest kind you post */
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	/*
	 * IBV_QP_EX_WITH_* operations to size the WQEs for; 0 means every
	 * RC operation rdmafast posts except memory-window bind and local
	 * invalidate, whose 192-byte WQEs would otherwise set the size of
	 * every slot (rdma-core providers/mlx5/verbs.c, _sq_overhead(),
	 * sizes every WQE for the largest operation send_ops_flags allows,
	 * and assumes the window operations when none are given).
	 */
	uint64_t send_ops_flags;
	int sig_all;			/* every WQE signaled */
	/*
	 * Leave scatter-to-CQE on. By default rdmafast creates QPs with
	 * MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE: data lands in the buffers
	 * the WQEs name, so receive buffers may be memory the CPU cannot
	 * write (GPU, indirect mkeys; UCX PR #5188, rdma-core #735), and
	 * polling never copies. rf_cq_poll() handles scattered CQEs either
	 * way (also for QPs created elsewhere with it on).
	 */
	int allow_scatter_to_cqe;
};

#define RF_SEND_OPS_DEFAULT \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)

static inline RF_COLD void rf_qp_fini_ibv(struct rf_qp *qp)
{
	free(qp->sq.wr_id);	/* and wqe_end, in the same block */
	free(qp->rq.wr_id);
	qp->sq.wr_id = NULL;
	qp->sq.wqe_end = NULL;
	qp->rq.wr_id = NULL;
}

/*
 * rf_qp_init_ibv - take over a QP nothing was posted to. cap must be the
 * capabilities libibverbs returned at creation (ibv_qp_init_attr.cap after
 * the call), sig_all what the QP was created with. Allocates the side
 * tables; free them with rf_qp_fini_ibv() or rf_qp_destroy_ibv().
 */
static inline RF_COLD int rf_qp_init_ibv(struct rf_qp *qp, struct ibv_qp *ibqp,
					 const struct ibv_qp_cap *cap, int sig_all)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_qp dv;
	struct rf_sq_attr sa;
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = rf_device_check_ibv(ibqp->context);
	if (ret)
		return ret;
	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.qp.in = ibqp;
	obj.qp.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP);
	if (ret)
		return rf__ibv_err(ret);
	if (dv.sq.wqe_cnt && dv.sq.stride != RF_SEND_WQE_BB)
		return -EPROTONOSUPPORT;
	qp->ibqp = ibqp;
	qp->qpn = ibqp->qp_num;
	qp->cap = *cap;
	switch (ibqp->qp_type) {
	case IBV_QPT_RC:       qp->kind = RF_QP_RC;  break;
	case IBV_QPT_UC:       qp->kind = RF_QP_UC;  break;
	case IBV_QPT_UD:       qp->kind = RF_QP_UD;  break;
	case IBV_QPT_XRC_SEND: qp->kind = RF_QP_XRC; break;
	/* mlx5's driver QPs are DC: a DCI has a send queue, a DCT none */
	case IBV_QPT_DRIVER:
		if (!dv.sq.wqe_cnt)
			return -EPROTONOSUPPORT;
		qp->kind = RF_QP_DCI;
		break;
	default:               return -EPROTONOSUPPORT;
	}

	memset(&sa, 0, sizeof(sa));
	sa.buf = dv.sq.buf;
	sa.wqe_cnt = dv.sq.wqe_cnt;
	sa.dbrec = (__be32 *)dv.dbrec;
	sa.bf_reg = dv.bf.reg;
	sa.bf_size = dv.bf.size;
	sa.qpn = qp->qpn;
	sa.max_inline = cap->max_inline_data;
	sa.max_sge = cap->max_send_sge;
	sa.kind = qp->kind;
	sa.sig_all = (uint32_t)sig_all;
	/* both side tables in one block: wr_id[] first, 8-byte aligned */
	sa.wr_id = (uint64_t *)calloc(dv.sq.wqe_cnt ? dv.sq.wqe_cnt : 1,
				      sizeof(uint64_t) + sizeof(uint32_t));
	if (!sa.wr_id)
		return -ENOMEM;
	sa.wqe_end = (uint32_t *)(sa.wr_id + dv.sq.wqe_cnt);
	ret = rf_sq_init(&qp->sq, &sa);
	if (ret) {
		free(sa.wr_id);
		return ret;
	}
	if (dv.rq.wqe_cnt) {
		struct rf_rq_attr ra;

		memset(&ra, 0, sizeof(ra));
		ra.buf = dv.rq.buf;
		ra.wqe_cnt = dv.rq.wqe_cnt;
		ra.stride = dv.rq.stride;
		ra.dbrec = (__be32 *)dv.dbrec;
		ra.wr_id = (uint64_t *)calloc(dv.rq.wqe_cnt, sizeof(uint64_t));
		if (!ra.wr_id) {
			rf_qp_fini_ibv(qp);
			return -ENOMEM;
		}
		ret = rf_rq_init(&qp->rq, &ra);
		if (ret) {
			free(ra.wr_id);
			rf_qp_fini_ibv(qp);
			return ret;
		}
		qp->has_rq = 1;
	}
	return 0;
}

/*
 * rf_qp_create_ibv - create a QP sized for what rdmafast will post (send
 * ops flags given, so libmlx5 reports the real max_inline_data and sizes
 * the SQ from the WQEs actually used) and take it over. Returns 0 or
 * -errno; -EPROTONOSUPPORT for a device that is not mlx5.
 */
static inline RF_COLD int rf_qp_create_ibv(struct rf_qp *qp, const struct rf_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_qp *ibqp;
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = rf_device_check_ibv(a->pd->context);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = a->qp_type;
	ax.send_cq = a->send_cq;
	ax.recv_cq = a->recv_cq ? a->recv_cq : a->send_cq;
	ax.srq = a->srq;
	ax.sq_sig_all = a->sig_all;
	ax.cap.max_send_wr = a->max_send_wr;
	ax.cap.max_recv_wr = a->srq ? 0 : a->max_recv_wr;
	ax.cap.max_send_sge = a->max_send_sge ? a->max_send_sge : 1;
	ax.cap.max_recv_sge = a->srq ? 0 : (a->max_recv_sge ? a->max_recv_sge : 1);
	ax.cap.max_inline_data = a->max_inline_data;
	ax.pd = a->pd;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = a->send_ops_flags ? a->send_ops_flags : RF_SEND_OPS_DEFAULT;
	if (a->qp_type == IBV_QPT_UD || a->qp_type == IBV_QPT_UC)
		ax.send_ops_flags &= IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				     (a->qp_type == IBV_QPT_UC ?
				      IBV_QP_EX_WITH_RDMA_WRITE |
				      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM : 0);
	if (a->qp_type == IBV_QPT_XRC_SEND) {
		ax.cap.max_recv_wr = 0;
		ax.cap.max_recv_sge = 0;
		ax.recv_cq = NULL;
		ax.srq = NULL;
	}

	ibqp = NULL;
	if (!a->allow_scatter_to_cqe) {
		memset(&dx, 0, sizeof(dx));
		dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
		dx.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
		ibqp = mlx5dv_create_qp(a->pd->context, &ax, &dx);
	}
	/*
	 * Without the flag (asked for, or refused by an old provider or
	 * kernel): the plain extended create. rf_cq_poll() copies scattered
	 * data, so this is still correct for CPU memory.
	 */
	if (!ibqp)
		ibqp = ibv_create_qp_ex(a->pd->context, &ax);
	if (!ibqp)
		return errno ? -errno : -ENOMEM;
	ret = rf_qp_init_ibv(qp, ibqp, &ax.cap, a->sig_all);
	if (ret) {
		ibv_destroy_qp(ibqp);
		return ret;
	}
	return 0;
}

/* Destroy the verbs QP (detach it from its CQs first) and free the tables. */
static inline RF_COLD int rf_qp_destroy_ibv(struct rf_qp *qp)
{
	int ret = qp->ibqp ? rf__ibv_err(ibv_destroy_qp(qp->ibqp)) : 0;

	rf_qp_fini_ibv(qp);
	qp->ibqp = NULL;
	return ret;
}

/* What one side tells the other to connect (exchanged out of band). */
struct rf_qp_peer {
	uint32_t      qpn;
	uint32_t      psn;	/* first packet sequence number, 24 bits */
	uint16_t      lid;
	union ibv_gid gid;	/* used when the connection is global */
};

/* Whether a connection carries a GRH (rf_qp_conn_attr.grh). */
enum rf_qp_grh {
	RF_GRH_AUTO   = 0,	/* exactly when the port is RoCE (Ethernet), which needs it */
	RF_GRH_ALWAYS = 1,	/* also on InfiniBand (routing between subnets) */
	RF_GRH_NEVER  = 2,
};

/*
 * The local side of a connection. A zeroed struct is a working RC
 * connection on port 1, on InfiniBand (no GRH) as on RoCE (a GRH from
 * GID 0); each field's 0 is the default named beside it.
 */
struct rf_qp_conn_attr {
	uint8_t   port;		/* 0: 1 */
	/*
	 * The source GID of the GRH, when there is one (0: GID 0). A
	 * negative index means no GRH, as RF_GRH_NEVER (kept for callers
	 * written before grh existed).
	 */
	int       gid_index;
	uint32_t  grh;		/* enum rf_qp_grh; 0: RF_GRH_AUTO */
	enum ibv_mtu mtu;	/* 0: the port's active MTU */
	uint32_t  psn;		/* our first PSN */
	uint8_t   sl;
	uint8_t   max_rd_atomic;	/* 0: 16 (reads/atomics in flight, RC) */
	uint8_t   min_rnr_timer;	/* 0: 12 (0.64 ms) */
	uint8_t   timeout;		/* 0: 14 (~67 ms local ACK timeout) */
	uint8_t   retry_cnt;		/* 0: 7 */
	uint8_t   rnr_retry;		/* 0: 7 (retry forever) unless rnr_retry_set */
	int       rnr_retry_set;	/* nonzero: rnr_retry as given, even 0 */
	int       access;		/* 0: local write, remote read/write/atomic */
	uint32_t  qkey;			/* UD */
};

/* Whether the connection described by l sends a GRH on a port like pa. */
static inline RF_COLD int rf__qp_grh(const struct rf_qp_conn_attr *l,
				     const struct ibv_port_attr *pa)
{
	if (l->gid_index < 0 || l->grh == RF_GRH_NEVER)
		return 0;
	return l->grh == RF_GRH_ALWAYS || pa->link_layer == IBV_LINK_LAYER_ETHERNET;
}

/*
 * rf_qp_connect_ibv - move the QP RESET -> INIT -> RTR -> RTS toward peer
 * (RC, UC, XRC_SEND; UD ignores peer). Returns 0 or -errno.
 */
static inline RF_COLD int rf_qp_connect_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l,
					    const struct rf_qp_peer *peer)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	uint8_t port = l->port ? l->port : 1;
	int rc_like = qp->kind == RF_QP_RC || qp->kind == RF_QP_XRC;
	int mask, ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port(qp->ibqp->context, port, &pa);
	if (ret)
		return rf__ibv_err(ret);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.pkey_index = 0;
	at.port_num = port;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->kind == RF_QP_UD) {
		at.qkey = l->qkey;
		mask |= IBV_QP_QKEY;
	} else {
		at.qp_access_flags = l->access ? l->access :
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			(qp->kind == RF_QP_UC ? 0 :
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	if (ret)
		return rf__ibv_err(ret);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qp->kind != RF_QP_UD) {
		at.path_mtu = l->mtu ? l->mtu : pa.active_mtu;
		at.dest_qp_num = peer->qpn;
		at.rq_psn = peer->psn & 0xffffff;
		at.ah_attr.dlid = peer->lid;
		at.ah_attr.sl = l->sl;
		at.ah_attr.port_num = port;
		if (rf__qp_grh(l, &pa)) {
			at.ah_attr.is_global = 1;
			at.ah_attr.grh.dgid = peer->gid;
			at.ah_attr.grh.sgid_index = (uint8_t)l->gid_index;
			at.ah_attr.grh.hop_limit = 64;
		}
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		/* responder resources: RC only (an XRC initiator has none) */
		if (qp->kind == RF_QP_RC) {
			at.max_dest_rd_atomic = l->max_rd_atomic ? l->max_rd_atomic : 16;
			at.min_rnr_timer = l->min_rnr_timer ? l->min_rnr_timer : 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	if (ret)
		return rf__ibv_err(ret);

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = l->psn & 0xffffff;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc_like) {
		at.timeout = l->timeout ? l->timeout : 14;
		at.retry_cnt = l->retry_cnt ? l->retry_cnt : 7;
		at.rnr_retry = l->rnr_retry_set ? l->rnr_retry : (l->rnr_retry ? l->rnr_retry : 7);
		at.max_rd_atomic = l->max_rd_atomic ? l->max_rd_atomic : 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = ibv_modify_qp(qp->ibqp, &at, mask);
	return rf__ibv_err(ret);
}

/* ---- XRC ---------------------------------------------------------------- */

/*
 * rf_xrcd_open_ibv - open the XRC domain of the file open as fd, shared by
 * every process that opens the same file (its inode names the domain), or
 * a domain of our own with fd -1. oflags: O_CREAT creates the file's
 * domain if it has none; O_CREAT | O_EXCL insists on creating it. The
 * domain lives while any process has it open. Returns 0 and *out, or the
 * kernel's errors (ib_uverbs_open_xrcd()): -EBADF for an fd that is not
 * open, -EAGAIN when the file has no domain and O_CREAT is not given,
 * -EINVAL for O_EXCL when it has one.
 */
static inline RF_COLD int rf_xrcd_open_ibv(struct ibv_context *ctx, int fd, int oflags,
					   struct ibv_xrcd **out)
{
	struct ibv_xrcd_init_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	a.fd = fd;
	a.oflags = oflags;
	errno = 0;
	*out = ibv_open_xrcd(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}

/*
 * rf_xrc_srq_create_ibv - an XRC SRQ of the domain, its receive
 * completions on cq, with max_wr receives of max_sge entries; *srqn is
 * the number XRC senders name it by (rf_sq_set_xrc_srqn()). Take it over
 * with rf_srq_init_ibv(). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_srq_create_ibv(struct ibv_context *ctx, struct ibv_pd *pd,
						struct ibv_xrcd *xrcd, struct ibv_cq *cq,
						uint32_t max_wr, uint32_t max_sge,
						struct ibv_srq **out, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.attr.max_wr = max_wr;
	a.attr.max_sge = max_sge;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = IBV_SRQT_XRC;
	a.xrcd = xrcd;
	a.cq = cq;
	a.pd = pd;
	errno = 0;
	*out = ibv_create_srq_ex(ctx, &a);
	if (!*out)
		return errno ? -errno : -ENOMEM;
	ret = rf__ibv_err(ibv_get_srq_num(*out, srqn));
	if (ret) {
		ibv_destroy_srq(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * rf_xrc_recv_qp_create_ibv - an XRC receive QP (XRC_RECV, the target of
 * one XRC_SEND QP) in the domain: no queues of its own, the receives come
 * from whichever XRC SRQ of the domain a message names. Connect it with
 * rf_xrc_recv_connect_ibv(). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_qp_create_ibv(struct ibv_context *ctx,
						    struct ibv_xrcd *xrcd, struct ibv_qp **out)
{
	struct ibv_qp_init_attr_ex a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_XRC_RECV;
	a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	a.xrcd = xrcd;
	errno = 0;
	*out = ibv_create_qp_ex(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}

/*
 * rf_xrc_recv_qp_open_ibv - register with XRC receive QP qpn, created by
 * any process in the same domain (ibv_open_qp(3)): the QP then lives
 * until its creator destroyed it and every process that opened it
 * released it (rf_qp_close_opened_ibv()). Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_qp_open_ibv(struct ibv_context *ctx,
						  struct ibv_xrcd *xrcd, uint32_t qpn,
						  struct ibv_qp **out)
{
	struct ibv_qp_open_attr a;

	memset(&a, 0, sizeof(a));
	a.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	a.qp_num = qpn;
	a.xrcd = xrcd;
	a.qp_type = IBV_QPT_XRC_RECV;
	errno = 0;
	*out = ibv_open_qp(ctx, &a);
	return *out ? 0 : (errno ? -errno : -ENOMEM);
}

/*
 * rf_qp_close_opened_ibv - release a QP that ibv_open_qp() returned.
 *
 * Not ibv_destroy_qp(): libmlx5 (rdma-core 44 and later, providers/mlx5)
 * destroys every QP the same way, and mlx5_destroy_qp() frees the QP's
 * doorbell record with mlx5_free_db(). An opened QP has none (mlx5_open_qp()
 * allocates a zeroed struct and only asks the kernel for a handle), so
 * mlx5_free_db() looks up the page of a NULL record, takes the lookup's
 * end marker for a page and sets a bit far outside it: the process dies
 * (SIGSEGV or SIGBUS). What releasing needs is the kernel's DESTROY_QP on
 * the handle, which drops this process's reference: libibverbs'
 * ibv_cmd_destroy_qp() (the providers' helper, exported under
 * IBVERBS_PRIVATE_*), found at run time so that nothing links against a
 * private symbol version. The provider's small struct for the handle is
 * left allocated: its layout is libmlx5's own. Returns 0, -ENOSYS when
 * the helper cannot be found, or the kernel's -errno.
 */
static inline RF_COLD int rf_qp_close_opened_ibv(struct ibv_qp *qp)
{
	int (*destroy)(struct ibv_qp *) = NULL;
	void *lib, *sym;
	int ret;

	lib = dlopen("libibverbs.so.1", RTLD_LAZY);
	if (!lib)
		return -ENOSYS;
	sym = dlsym(lib, "ibv_cmd_destroy_qp");
	if (sym)	/* object to function pointer: ISO C has no cast for it */
		memcpy(&destroy, &sym, sizeof(destroy));
	ret = destroy ? rf__ibv_err(destroy(qp)) : -ENOSYS;
	dlclose(lib);
	return ret;
}

/*
 * rf_xrc_recv_connect_ibv - move an XRC receive QP RESET -> INIT -> RTR
 * toward the XRC_SEND QP peer (its receive side is all it has; the sender
 * goes to RTS with rf_qp_connect_ibv()). l as for rf_qp_connect_ibv():
 * port, GRH, MTU, PSN (unused here), access (0: remote read and write),
 * min_rnr_timer. Returns 0 or -errno.
 */
static inline RF_COLD int rf_xrc_recv_connect_ibv(struct ibv_qp *rqp,
						  const struct rf_qp_conn_attr *l,
						  const struct rf_qp_peer *peer)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	uint8_t port = l->port ? l->port : 1;
	int ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port(rqp->context, port, &pa);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = port;
	at.qp_access_flags = l->access ? l->access :
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(rqp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = l->mtu ? l->mtu : pa.active_mtu;
	at.dest_qp_num = peer->qpn;
	at.rq_psn = peer->psn & 0xffffff;
	at.max_dest_rd_atomic = l->max_rd_atomic ? l->max_rd_atomic : 16;
	at.min_rnr_timer = l->min_rnr_timer ? l->min_rnr_timer : 12;
	at.ah_attr.dlid = peer->lid;
	at.ah_attr.sl = l->sl;
	at.ah_attr.port_num = port;
	if (rf__qp_grh(l, &pa)) {
		at.ah_attr.is_global = 1;
		at.ah_attr.grh.dgid = peer->gid;
		at.ah_attr.grh.sgid_index = (uint8_t)l->gid_index;
		at.ah_attr.grh.hop_limit = 64;
	}
	return rf__ibv_err(ibv_modify_qp(rqp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
}

/* IBV_ACCESS_* flags of a window bind to the mkey context's access bits (and RF_MW_ZERO_BASED). */
static inline RF_COLD uint32_t rf_mw_access_ibv(int ibv_access)
{
	return RF_MKEY_ACCESS_LOCAL_READ |
	       ((ibv_access & IBV_ACCESS_LOCAL_WRITE) ? RF_MKEY_ACCESS_LOCAL_WRITE : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_READ) ? RF_MKEY_ACCESS_REMOTE_READ : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_WRITE) ? RF_MKEY_ACCESS_REMOTE_WRITE : 0) |
	       ((ibv_access & IBV_ACCESS_REMOTE_ATOMIC) ? RF_MKEY_ACCESS_ATOMIC : 0) |
	       ((ibv_access & IBV_ACCESS_ZERO_BASED) ? RF_MW_ZERO_BASED : 0);
}

/* The 48-byte address vector of an address handle, for rf_sq_post_ud_send(). */
static inline RF_COLD int rf_ah_av_ibv(struct ibv_ah *ah, struct rf_wqe_av *av)
{
	struct mlx5dv_obj obj;
	struct mlx5dv_ah dv;
	int ret;

	memset(&obj, 0, sizeof(obj));
	memset(&dv, 0, sizeof(dv));
	obj.ah.in = ah;
	obj.ah.out = &dv;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH);
	if (ret)
		return rf__ibv_err(ret);
	RF_STATIC_ASSERT(sizeof(*dv.av) == sizeof(*av), "mlx5_wqe_av is 48 bytes");
	memcpy(av, dv.av, sizeof(*av));
	return 0;
}

/*
 * ---- Dynamically Connected transport ------------------------------------
 * A DC target (DCT) receives from any DCI that knows its number and access
 * key, through an SRQ into one CQ; a DC initiator (DCI) is a send queue
 * whose every WQE names its target (rdmafast/sq_dc.h). Created with
 * mlx5dv_create_qp(3), IBV_QPT_DRIVER and MLX5DV_QP_INIT_ATTR_MASK_DC.
 */

/*
 * rf_dct_create_ibv - a DCT receiving through srq into cq, reachable with
 * dc_key, brought to RTR on l's port (its number exists from then on:
 * (*out)->qp_num). l's access, mtu, min_rnr_timer, gid_index and grh
 * apply as to rf_qp_connect_ibv(). Returns 0 or -errno.
 */
static inline RF_COLD int rf_dct_create_ibv(struct ibv_pd *pd, struct ibv_srq *srq,
					    struct ibv_cq *cq, uint64_t dc_key,
					    const struct rf_qp_conn_attr *l, struct ibv_qp **out)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_port_attr pa;
	struct ibv_qp_attr at;
	struct ibv_qp *qp;
	uint8_t port = l->port ? l->port : 1;
	int ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port(pd->context, port, &pa);
	if (ret)
		return rf__ibv_err(ret);
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = IBV_QPT_DRIVER;
	ax.send_cq = cq;
	ax.recv_cq = cq;
	ax.srq = srq;
	ax.pd = pd;
	ax.comp_mask = IBV_QP_INIT_ATTR_PD;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
	dx.dc_init_attr.dct_access_key = dc_key;
	qp = mlx5dv_create_qp(pd->context, &ax, &dx);
	if (!qp)
		return errno ? -errno : -ENOMEM;

	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = port;
	at.qp_access_flags = l->access ? l->access : IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC;
	ret = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (!ret) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		at.path_mtu = l->mtu ? l->mtu : pa.active_mtu;
		at.min_rnr_timer = l->min_rnr_timer ? l->min_rnr_timer : 12;
		at.ah_attr.port_num = port;
		at.ah_attr.sl = l->sl;
		if (rf__qp_grh(l, &pa)) {
			at.ah_attr.is_global = 1;
			at.ah_attr.grh.sgid_index = (uint8_t)(l->gid_index > 0 ? l->gid_index : 0);
			at.ah_attr.grh.hop_limit = 64;
		}
		ret = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_MIN_RNR_TIMER);
	}
	if (ret) {
		ibv_destroy_qp(qp);
		return rf__ibv_err(ret);
	}
	*out = qp;
	return 0;
}

/*
 * rf_dci_create_ibv - create a DCI (a->qp_type is ignored, a->srq and the
 * receive sizes too: a DCI receives nothing) and take it over as an
 * RF_QP_DCI queue for rdmafast/sq_dc.h. Returns 0 or -errno.
 */
static inline RF_COLD int rf_dci_create_ibv(struct rf_qp *qp, const struct rf_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_qp *ibqp;
	int ret;

	memset(qp, 0, sizeof(*qp));
	ret = rf_device_check_ibv(a->pd->context);
	if (ret)
		return ret;
	memset(&ax, 0, sizeof(ax));
	ax.qp_type = IBV_QPT_DRIVER;
	ax.send_cq = a->send_cq;
	ax.recv_cq = a->recv_cq ? a->recv_cq : a->send_cq;
	ax.sq_sig_all = a->sig_all;
	ax.cap.max_send_wr = a->max_send_wr;
	ax.cap.max_send_sge = a->max_send_sge ? a->max_send_sge : 1;
	ax.cap.max_inline_data = a->max_inline_data;
	ax.pd = a->pd;
	/* sized for every RC operation (MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI) */
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = a->send_ops_flags ? a->send_ops_flags : RF_SEND_OPS_DEFAULT;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	ibqp = mlx5dv_create_qp(a->pd->context, &ax, &dx);
	if (!ibqp)
		return errno ? -errno : -ENOMEM;
	ret = rf_qp_init_ibv(qp, ibqp, &ax.cap, a->sig_all);
	if (ret) {
		ibv_destroy_qp(ibqp);
		return ret;
	}
	return 0;
}

/*
 * rf_dci_connect_ibv - move a DCI RESET -> INIT -> RTR -> RTS (the kernel's
 * modify_dci_qp_is_ok(): port, MTU, then timeout, retries, rd_atomic, PSN).
 * Its targets come with each WQE: no peer. Returns 0 or -errno.
 */
static inline RF_COLD int rf_dci_connect_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l)
{
	struct ibv_qp_attr at;
	struct ibv_port_attr pa;
	uint8_t port = l->port ? l->port : 1;
	int ret;

	memset(&pa, 0, sizeof(pa));
	ret = ibv_query_port(qp->ibqp->context, port, &pa);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_INIT;
	at.port_num = port;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = l->mtu ? l->mtu : pa.active_mtu;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_PATH_MTU);
	if (ret)
		return rf__ibv_err(ret);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = l->psn & 0xffffff;
	at.timeout = l->timeout ? l->timeout : 14;
	at.retry_cnt = l->retry_cnt ? l->retry_cnt : 7;
	at.rnr_retry = l->rnr_retry_set ? l->rnr_retry : (l->rnr_retry ? l->rnr_retry : 7);
	at.max_rd_atomic = l->max_rd_atomic ? l->max_rd_atomic : 16;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	return rf__ibv_err(ret);
}

/*
 * rf_dci_reset_ibv - bring a DCI in error back for reuse, as UCX's DC
 * transport does with a DCI whose WQE failed: after its flush completions
 * were polled (every WQE posted has completed, rf_sq_ci() == pi), move it
 * to RESET, restart the send queue from slot 0 as the device does, and
 * connect it again with l. Returns 0 or -errno; -EBUSY while WQEs are
 * still outstanding.
 */
static inline RF_COLD int rf_dci_reset_ibv(struct rf_qp *qp, const struct rf_qp_conn_attr *l)
{
	struct ibv_qp_attr at;
	struct rf_sq_attr sa;
	struct rf_sq *sq = &qp->sq;
	int ret;

	if (qp->kind != RF_QP_DCI)
		return -EINVAL;
	if (rf_sq_ci(sq) != sq->pi)
		return -EBUSY;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(qp->ibqp, &at, IBV_QP_STATE);
	if (ret)
		return rf__ibv_err(ret);
	memset(&sa, 0, sizeof(sa));
	sa.buf = sq->buf;
	sa.wqe_cnt = sq->wqe_cnt;
	sa.dbrec = sq->dbrec - RF_SND_DBR;
	sa.bf_reg = sq->bf.reg;
	sa.bf_size = (uint32_t)sq->bf.size;
	sa.qpn = sq->qpn;
	sa.max_inline = qp->cap.max_inline_data;
	sa.max_sge = qp->cap.max_send_sge;
	sa.kind = RF_QP_DCI;
	sa.sig_all = sq->fm_ce_se != 0;
	sa.wr_id = (uint64_t *)sq->wr_id;
	sa.wqe_end = (uint32_t *)sq->wqe_end;
	ret = rf_sq_init(sq, &sa);
	if (ret)
		return ret;
	return rf_dci_connect_ibv(qp, l);
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_H */
