/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fdset.h - a set of file descriptors that the interposers can test without
 * a lock: write(), read(), ioctl() and close() ask, for every descriptor of
 * the process, whether it is one of the emulator's (a command fd, an event
 * fd, a umad file, an rdma_cm channel), and most are not.
 *
 * One bit per descriptor below EMU_FDSET_MAX; its owner adds a descriptor
 * once the object behind it can be found and removes it before the object
 * goes, each under the owner's own lock, so a reader that finds the bit set
 * takes that lock and looks the object up.  A descriptor at or above the
 * limit cannot be a member, so the command, umad and rdma_cm files refuse
 * one with EMFILE (emu_fdset_fits()).
 */
#ifndef RDMAFAST_EMU_BASE_FDSET_H
#define RDMAFAST_EMU_BASE_FDSET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define EMU_FDSET_MAX	65536

struct emu_fdset {
	_Atomic uint64_t	bits[EMU_FDSET_MAX / 64];
};

static inline bool emu_fdset_fits(int fd)
{
	return fd >= 0 && fd < EMU_FDSET_MAX;
}

static inline bool emu_fdset_has(struct emu_fdset *s, int fd)
{
	return emu_fdset_fits(fd) &&
	       (atomic_load_explicit(&s->bits[fd / 64], memory_order_acquire) >> (fd % 64) & 1);
}

/* Add (on) or remove fd; one that does not fit is never a member. */
static inline void emu_fdset_put(struct emu_fdset *s, int fd, bool on)
{
	uint64_t bit;

	if (!emu_fdset_fits(fd))
		return;
	bit = UINT64_C(1) << (fd % 64);
	if (on)
		atomic_fetch_or_explicit(&s->bits[fd / 64], bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&s->bits[fd / 64], ~bit, memory_order_release);
}

#endif /* RDMAFAST_EMU_BASE_FDSET_H */
