/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * state.c - what every file of the device shares, beneath all of them: the
 * engine's state (dev_eng), its clock, the work list, and the eventfd that
 * wakes the engine.
 *
 * engine.c runs the passes and calls the other files; they reach the
 * engine only through these, so the folder's files call down, never round
 * into the loop that calls them.
 */
#include <stdint.h>
#include <time.h>

#include "device.h"

struct dev_engine dev_eng = { .kick_fd = -1 };

uint64_t dev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dev_kick(void)
{
	uint64_t one = 1;

	if (dev_eng.kick_fd >= 0 && emu_real_write(dev_eng.kick_fd, &one, sizeof(one)) < 0) {
		/* counter saturated: the engine is awake anyway */
	}
}

void dev_qp_set_busy(struct dev_qp *dq)
{
	if (dq->busy)
		return;
	dq->busy = true;
	dq->next_busy = dev_eng.busy;
	dev_eng.busy = dq;
}

void dev_watch_changed(void)
{
	dev_eng.watch_dirty = true;
	/* a sleeping engine protects the new pages only once it rebuilds */
	dev_kick();
}
