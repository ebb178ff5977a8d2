/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/ibv.h - what the control glue stands on: libibverbs and
 * mlx5dv included with the byte-order helpers they need, verbs returns
 * turned into -errno, the device check and its asynchronous events.
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

/*
 * mlx5dv.h's inline helpers call htobe32() and friends, which glibc only
 * declares for _DEFAULT_SOURCE; under -std=c11 they would silently become
 * undefined functions (the warning is lost inside a system header) and
 * the program would fail to link. Supply them while mlx5dv.h is read (its
 * inline bodies are expanded there) and take them back afterwards, so
 * that they do not stay defined in the program's namespace.
 */
#if !defined(htobe32)
#define RF__BYTE_ORDER_SHIM 1
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

#ifdef RF__BYTE_ORDER_SHIM
#undef RF__BYTE_ORDER_SHIM
#undef htobe16
#undef htobe32
#undef htobe64
#undef be16toh
#undef be32toh
#undef be64toh
#endif

#include <rdmafast/rdmafast.h>

RF_BEGIN_DECLS

#ifdef RF_CHECKED
/*
 * The checked build's question to a QP (struct rf__chk_sq.query): its
 * state as enum ibv_qp_state, or -1. Asked at a post only while the QP is
 * not known to be in RTS.
 */
static inline RF_COLD int rf__chk_qp_state_ibv(const void *arg)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp((struct ibv_qp *)(uintptr_t)arg, &at, IBV_QP_STATE, &ia))
		return -1;
	return (int)at.qp_state;
}
#endif

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
