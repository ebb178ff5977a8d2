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

/* sysfs.c: the fake sysfs tree libibverbs discovers devices from */
int emu_sysfs_build(void);		/* writes the tree, sets SYSFS_PATH */
void emu_sysfs_remove(void);
const char *emu_sysfs_root(void);

#endif /* RDMAFAST_EMU_INTERPOSE_H */
