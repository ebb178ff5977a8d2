/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * interpose.h - the libc interposition (preload.c) and the fake sysfs tree
 * (sysfs.c): the top of librfemu.so, what the application's calls meet
 * first.
 */
#ifndef RDMAFAST_EMU_INTERPOSE_H
#define RDMAFAST_EMU_INTERPOSE_H

#include "base/base.h"

/* Where the fake character devices are (kernel.h has their numbers). */
#define EMU_CDEV_DIR		"/dev/infiniband"

#include <stdbool.h>
#include <sys/types.h>

/*
 * A child of fork() that reaches the device becomes a host of its own
 * first (preload.c); join false only sets the parent's contexts aside.
 * Does nothing in any other process, and under emu_lock.
 */
void emu_fork_settle(bool join);

/* sysfs.c: the fake sysfs tree and /dev/infiniband */
int emu_sysfs_build(void);		/* writes or reuses the tree, unsets SYSFS_PATH */
const char *emu_sysfs_root(void);

/*
 * An absolute path the tree takes over (/sys/class/infiniband..., the PCI
 * functions, /dev/infiniband) rewritten into buf; NULL for any other path,
 * which goes to the real file system unchanged.
 */
const char *emu_sysfs_redirect(const char *path, char *buf, size_t len);
/* The reverse, in place, for paths libc hands back (realpath). */
void emu_sysfs_unredirect(char *path);
/*
 * Is path (in the tree) an attribute whose read() the kernel fails with
 * EINVAL?  gid_attrs/types/N of an empty GID entry and every
 * gid_attrs/ndevs/N (no netdev is emulated): the files exist, as the
 * kernel's do for every index, but cannot be read (preload.c).
 */
bool emu_sysfs_read_fails(const char *path);

/* A node of /dev/infiniband: what stat() shows, and whose open() it is. */
struct emu_cdev {
	char		name[16];	/* "uverbs0", "umad0", ... */
	dev_t		rdev;
	mode_t		mode;		/* permission bits */
	int		uverbs;		/* its device index if a uverbs node, else -1 */
	bool		rdma_cm;	/* the connection manager's node (cm/) */
	unsigned	mad_dev;	/* umad and issm nodes: their device, */
	unsigned	mad_port;	/* and port (0: not such a node) */
	bool		issm;
};
const struct emu_cdev *emu_cdev_lookup(const char *path);

/*
 * netlink.c: NETLINK_RDMA sockets (answered by kernel/nldev.c): socket()
 * makes one, write() on it is a send, close() ends it.
 */
bool emu_nl_is_fd(int fd);
int emu_nl_socket(int type);
ssize_t emu_nl_write(int fd, const void *buf, size_t len);
void emu_nl_close(int fd);

#endif /* RDMAFAST_EMU_INTERPOSE_H */
