/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libc.c - the C library's own entry points, past interpose/preload.c.
 *
 * Code below interpose/ calls these, never the libc names interpose/
 * defines: a call that went through the interposer would be a call into
 * the layer above (and, under emu_lock, one it must not make).  Resolved
 * with REAL() (real.h): lazily, as the first call may come from another
 * constructor, and all at once at load time (resolve_all()).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <signal.h>

#include "base.h"
#include "real.h"

REAL(int, open, const char *, int, ...)
REAL(int, close, int)
REAL(ssize_t, read, int, void *, size_t)
REAL(ssize_t, write, int, const void *, size_t)
REAL(int, access, const char *, int)
REAL(int, fstat, int, struct stat *)
REAL(FILE *, fopen, const char *, const char *)
REAL(int, socket, int, int, int)
REAL(int, bind, int, const struct sockaddr *, socklen_t)
REAL(int, setsockopt, int, int, int, const void *, socklen_t)
REAL(void *, mmap, void *, size_t, int, int, int, off_t)
REAL(int, munmap, void *, size_t)
REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)

/*
 * Each resolved at load time too: dlsym() is not async-signal-safe, and
 * the device's fault handler writes the engine's kick fd through
 * emu_real_write() (device/engine.c dev_kick()). The lazy lookups stay
 * for what runs before this constructor.
 */
__attribute__((constructor)) static void resolve_all(void)
{
	(void)get_open();
	(void)get_close();
	(void)get_read();
	(void)get_write();
	(void)get_access();
	(void)get_fstat();
	(void)get_fopen();
	(void)get_socket();
	(void)get_bind();
	(void)get_setsockopt();
	(void)get_mmap();
	(void)get_munmap();
	(void)get_sigaction();
}

int emu_real_open(const char *path, int flags, mode_t mode)
{
	return get_open()(path, flags, mode);
}

int emu_real_close(int fd)
{
	return get_close()(fd);
}

ssize_t emu_real_read(int fd, void *buf, size_t len)
{
	return get_read()(fd, buf, len);
}

ssize_t emu_real_write(int fd, const void *buf, size_t len)
{
	return get_write()(fd, buf, len);
}

int emu_real_access(const char *path, int mode)
{
	return get_access()(path, mode);
}

int emu_real_fstat(int fd, struct stat *st)
{
	return get_fstat()(fd, st);
}

FILE *emu_real_fopen(const char *path, const char *mode)
{
	return get_fopen()(path, mode);
}

int emu_real_socket(int domain, int type, int protocol)
{
	return get_socket()(domain, type, protocol);
}

int emu_real_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	return get_bind()(fd, addr, len);
}

int emu_real_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	return get_setsockopt()(fd, level, name, val, len);
}

void *emu_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return get_mmap()(addr, len, prot, flags, fd, off);
}

int emu_real_munmap(void *addr, size_t len)
{
	return get_munmap()(addr, len);
}

int emu_real_mprotect(void *addr, size_t len, int prot)
{
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

int emu_real_ioctl(int fd, unsigned long req, void *arg)
{
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

int emu_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return get_sigaction()(sig, act, old);
}
