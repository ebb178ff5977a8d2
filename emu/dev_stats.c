/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dev_stats.c - rfemu_dev_stats(): the engine's counters, read under emu_lock.
 */
#include "dev.h"

int rfemu_dev_stats(struct rfemu_dev_stats *out, size_t size)
{
	struct rfemu_dev_stats s;

	emu_lock_acquire();
	s = dev_eng.stats;
	emu_lock_release();
	memcpy(out, &s, size < sizeof(s) ? size : sizeof(s));
	return 0;
}
