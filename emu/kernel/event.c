/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * event.c - completion-channel and async-event file descriptors.
 *
 * The kernel's event files hand out one ib_uverbs_comp_event_desc or
 * ib_uverbs_async_event_desc per read(), block unless O_NONBLOCK, and poll()
 * readable while non-empty.  An AF_UNIX SOCK_SEQPACKET socketpair has those
 * properties for free: every send is one record and a read never returns
 * part of two.  The process owns user_fd; we keep dev_fd (non-blocking, so
 * the device model never stalls on a process that stopped reading).
 *
 * The kernel counts an event as "reported" only when the process reads it,
 * and ibv_destroy_cq/qp/srq wait until the process has acknowledged exactly
 * that many.  So on destroy we take back the object's unread events
 * (emu_evq_reclaim_*) and subtract them.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "internal.h"

int emu_evq_open(struct emu_evq *q)
{
	int sv[2];
	int sndbuf = 1 << 20;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return errno;
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	emu_real_setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	q->user_fd = sv[0];
	q->dev_fd = sv[1];
	return 0;
}

void emu_evq_close(struct emu_evq *q)
{
	if (q->dev_fd >= 0)
		emu_real_close(q->dev_fd);
	q->dev_fd = -1;
	/* user_fd belongs to the process, which closes it */
}

static int evq_send(struct emu_evq *q, const void *ev, size_t len)
{
	if (q->dev_fd < 0)
		return EPIPE;
	if (send(q->dev_fd, ev, len, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)len)
		return errno;
	return 0;
}

/*
 * Drain the queue, drop records whose first 8 bytes equal user_handle, and
 * put the rest back in their order.  The lock is held, so no new event can
 * slip in between; a process thread reading concurrently would see some
 * events a little later, which it cannot tell from scheduling.
 */
static unsigned evq_reclaim(struct emu_evq *q, uint64_t user_handle, size_t reclen)
{
	size_t cap = 64, n = 0;
	unsigned dropped = 0;
	uint8_t *buf, *tmp;

	if (q->user_fd < 0 || q->dev_fd < 0)
		return 0;
	buf = malloc(cap * reclen);
	if (!buf)
		return 0;
	for (;;) {
		uint64_t h;

		if (n == cap) {
			tmp = realloc(buf, 2 * cap * reclen);
			if (!tmp)
				break;
			buf = tmp;
			cap *= 2;
		}
		if (recv(q->user_fd, buf + n * reclen, reclen, MSG_DONTWAIT) !=
		    (ssize_t)reclen)
			break;
		memcpy(&h, buf + n * reclen, sizeof(h));
		if (h == user_handle)
			dropped++;
		else
			n++;
	}
	for (size_t i = 0; i < n; i++)
		evq_send(q, buf + i * reclen, reclen);
	free(buf);
	return dropped;
}

unsigned emu_evq_reclaim_comp(struct emu_evq *q, uint64_t user_handle)
{
	return evq_reclaim(q, user_handle, sizeof(struct ib_uverbs_comp_event_desc));
}

unsigned emu_evq_reclaim_async(struct emu_evq *q, uint64_t user_handle)
{
	return evq_reclaim(q, user_handle, sizeof(struct ib_uverbs_async_event_desc));
}

void emu_post_comp_event_locked(struct emu_cq *cq)
{
	struct ib_uverbs_comp_event_desc ev = { .cq_handle = cq->obj.user_handle };

	cq->armed = false;
	if (cq->channel && !evq_send(&cq->channel->evq, &ev, sizeof(ev)))
		cq->comp_events++;
}

void emu_post_async_event_locked(struct emu_ctx *ctx, struct emu_obj *obj,
				 uint64_t port_or_zero, enum ibv_event_type type)
{
	struct ib_uverbs_async_event_desc ev = {
		.element = obj ? obj->user_handle : port_or_zero,
		.event_type = (uint32_t)type,
	};

	if (evq_send(&ctx->async, &ev, sizeof(ev)))
		return;
	if (!obj)
		return;
	switch (obj->type) {
	case EMU_OBJ_CQ:  ((struct emu_cq *)obj)->async_events++; break;
	case EMU_OBJ_QP:  ((struct emu_qp *)obj)->async_events++; break;
	case EMU_OBJ_SRQ: ((struct emu_srq *)obj)->async_events++; break;
	default: break;
	}
}
