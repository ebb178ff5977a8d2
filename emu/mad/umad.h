/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * umad.h - /dev/infiniband/umadN and issmN as the kernel's ib_umad module
 * presents them (drivers/infiniband/core/user_mad.c; the ABI of
 * <rdma/ib_user_mad.h>, ABI version 5): MAD agents registered by ioctl(),
 * MADs sent by write() and received by read(), poll() readiness, close().
 * umad.c keeps the files and agents; mad.h's agents answer the MADs.
 *
 * What interpose/ calls.  Every function but emu_umad_is_fd() returns 0
 * (or a byte count) or a negative errno, as the file operation returns.
 */
#ifndef RDMAFAST_EMU_KERNEL_UMAD_H
#define RDMAFAST_EMU_KERNEL_UMAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* open() of the node of port (1-based) of device d: an fd, or -errno. */
int emu_umad_open(unsigned d, unsigned port, bool issm, int flags);
/* Is fd an open umad or issm file?  Lock-free: close() asks for every fd. */
bool emu_umad_is_fd(int fd);
ssize_t emu_umad_write(int fd, const void *buf, size_t len);
ssize_t emu_umad_read(int fd, void *buf, size_t len);
int emu_umad_ioctl(int fd, unsigned long req, void *arg);
void emu_umad_close(int fd);
/*
 * fork(): the child's first step at the device (interpose/preload.c
 * emu_fork_settle(), emu_lock held): the files it inherited stay its
 * parent's, on the parent's port; the timer and the waiting sends were
 * the parent's, and the child starts its own.
 */
void emu_umad_disown_locked(void);
/*
 * At load time: this host's ports into the subnet's table, which every
 * host's management agents answer from (publish.c); 0 or an errno.
 */
int emu_mad_publish(void);

#endif /* RDMAFAST_EMU_KERNEL_UMAD_H */
