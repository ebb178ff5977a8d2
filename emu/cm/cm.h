/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cm.h - the fake RDMA connection manager: /dev/infiniband/rdma_cm as the
 * kernel's rdma_ucm module presents it (drivers/infiniband/core/ucma.c),
 * answering librdmacm's write() commands of <rdma/rdma_user_cm.h>.
 *
 * What interpose/ calls.  Above kernel/ (it copies user memory with
 * kernel/user_mem.c) and subnet/ (its sockets live in the subnet's
 * directory); nothing below calls it.
 */
#ifndef RDMAFAST_EMU_CM_H
#define RDMAFAST_EMU_CM_H

#include <stdbool.h>
#include <stddef.h>

/* The node librdmacm opens (its default device name, "rdma_cm"). */
#define EMU_CM_PATH		"/dev/infiniband/rdma_cm"
/* a misc device: major 10, and a minor the kernel would pick dynamically */
#define EMU_CM_MISC_MINOR	58
/* RDMA_USER_CM_ABI_VERSION, also in sysfs as class/misc/rdma_cm/abi_version */
#define EMU_CM_ABI_VERSION	4

/* open() of EMU_CM_PATH: a new event channel fd, or -1 with errno. */
int emu_cm_open(int flags);
/* Is fd an open event channel?  Lock-free: close() asks for every fd. */
bool emu_cm_is_fd(int fd);
/* write() of one command: 0 or an errno, as ucma_write() answers. */
int emu_cm_write(int fd, const void *buf, size_t len);
/* close(): destroys the channel's ids, as ucma_close() does. */
void emu_cm_close(int fd);
/*
 * fork(): the child's first step at the device (interpose/preload.c
 * emu_fork_settle(), emu_lock held): the channels it inherited become
 * its parent's, which refuse it (ucma.c).
 */
void emu_cm_disown_locked(void);

#endif /* RDMAFAST_EMU_CM_H */
