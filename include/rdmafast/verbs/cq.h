/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/cq.h - CQs created through verbs (plain, 128-byte CQEs,
 * compressed, timestamped) and taken over by rdmafast; their events.
 */
#ifndef RDMAFAST_VERBS_CQ_H
#define RDMAFAST_VERBS_CQ_H

#include <rdmafast/verbs/ibv.h>
#include <rdmafast/detail/verbs_cq.h>

RF_BEGIN_DECLS

/*
 * rf_cq_init_ibv - take over a CQ created with ibv_create_cq() (or
 * mlx5dv_create_cq(), for 128-byte CQEs) on which nothing has completed.
 * A CQ with CQE compression in the CSUM_STRIDX format needs
 * rf_cq_create_zip_ibv() (or cq->zip_stridx set). Returns 0 or -errno.
 */
static inline RF_COLD int rf_cq_init_ibv(struct rf_cq *cq, struct ibv_cq *ibcq)
{
	int ret = rf_device_check_ibv(ibcq->context);

	return ret ? ret : rf__cq_init_dv_ibv(cq, ibcq);
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
 * rf_cq_create_zip_ibv - rf_cq_create_ibv() for a CQ with CQE compression:
 * mlx5dv_create_cq() with MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE and one
 * mini-CQE format (RF_MINI_CQE_RES_FORMAT_HASH, _CSUM or _CSUM_STRIDX,
 * the values of enum mlx5dv_cqe_comp_res_format). libmlx5 refuses a format
 * the device does not list in mlx5dv_query_device()'s cqe_comp_caps
 * (-EOPNOTSUPP), the kernel more than one (-EINVAL). rf_cq_poll() decodes
 * the zips; ibv_poll_cq() cannot. Returns 0 or -errno.
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

/*
 * rf_cq_wait_event_ibv - rf_cq_get_event_ibv() waiting at most ms
 * milliseconds (-1: without limit; 0: take an event only if one is
 * there) in poll(2) on the channel's fd, so that a program can sleep in
 * the channel and still give up. Returns 0 with the event taken,
 * acknowledged and counted, -ETIMEDOUT when none came in time, or -errno
 * (-EINTR when a signal cut the wait). The same rule as above: the
 * channel carries this CQ's events only.
 */
static inline RF_COLD int rf_cq_wait_event_ibv(struct rf_cq *cq,
					       struct ibv_comp_channel *channel, int ms)
{
	struct pollfd p;
	int r;

	p.fd = channel->fd;
	p.events = POLLIN;
	p.revents = 0;
	r = poll(&p, 1, ms < 0 ? -1 : ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	return rf_cq_get_event_ibv(cq, channel);
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_CQ_H */
