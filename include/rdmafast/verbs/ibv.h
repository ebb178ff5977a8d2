/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/ibv.h - what the control glue stands on: libibverbs and
 * mlx5dv (included by detail/verbs_ibv.h with the byte-order helpers they
 * need), the device check and its asynchronous events.
 * Included through rdmafast/verbs.h.
 */
#ifndef RDMAFAST_VERBS_IBV_H
#define RDMAFAST_VERBS_IBV_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <poll.h>

#include <rdmafast/detail/verbs_ibv.h>	/* libibverbs and mlx5dv, rf__ibv_err() */
#include <rdmafast/rdmafast.h>

RF_BEGIN_DECLS

/* -EPROTONOSUPPORT unless mlx5dv drives this device. */
static inline RF_COLD int rf_device_check_ibv(struct ibv_context *ctx)
{
	return ctx && mlx5dv_is_supported(ctx->device) ? 0 : -EPROTONOSUPPORT;
}

/*
 * rf_device_open_ibv - open the RDMA device called name (NULL: the first
 * one), as ibv_open_device(). NULL with *err -ENODEV when there is none
 * of that name, -errno when it cannot be opened; *err 0 otherwise. Close
 * it with ibv_close_device(); rf_device_check_ibv() tells whether
 * rdmafast can drive it.
 */
static inline RF_COLD struct ibv_context *rf_device_open_ibv(const char *name, int *err)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	*err = -ENODEV;
	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			errno = 0;
			ctx = ibv_open_device(list[i]);
			*err = ctx ? 0 : errno ? -errno : -ENODEV;
			break;
		}
	}
	ibv_free_device_list(list);
	return ctx;
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

RF_END_DECLS

#endif /* RDMAFAST_VERBS_IBV_H */
