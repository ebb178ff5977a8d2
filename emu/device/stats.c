/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.c - rfemu_dev_stats(): the wire's and the device's packet counters
 * (wire/stats.h), read under emu_lock, and the doorbell trap's.
 */
#include <string.h>

#include "device.h"

int rfemu_dev_stats(struct rfemu_dev_stats *out, size_t size)
{
	struct rfemu_dev_stats s;

	emu_lock_acquire();
	s = wire_stats;
	s.poll_assists = dev_eng.assists;
	s.doorbell_assists = dev_eng.db_assists;
	s.engine_passes = dev_eng.engine_passes;
	emu_lock_release();
	dev_trap_counts(&s.trap_faults, &s.trap_mprotects);
	s.trap_stores = dev_trap_stores();
	s.trap_sigreturns = dev_resume_sigreturns();
	memcpy(out, &s, size < sizeof(s) ? size : sizeof(s));
	return 0;
}
