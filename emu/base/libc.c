/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libc.c - the C library's own entry points, past interpose/preload.c.
 *
 * Code below interpose/ that must not go through the interposer calls these;
 * resolving them here rather than in preload.c keeps the kernel from
 * depending on the layer above it.
 */
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"

int emu_real_close(int fd)
{
	/* lazy: the first call may come from a constructor, before main() */
	static int (*real_close)(int);

	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	return real_close(fd);
}

int emu_real_fstat(int fd, struct stat *st)
{
	static int (*real_fstat)(int, struct stat *);

	if (!real_fstat)
		real_fstat = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	return real_fstat(fd, st);
}

int emu_real_mprotect(void *addr, size_t len, int prot)
{
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

int emu_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))
				 dlsym(RTLD_NEXT, "sigaction");
	return real_sigaction(sig, act, old);
}
