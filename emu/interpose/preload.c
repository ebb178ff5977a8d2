/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * preload.c - interposes libc (with paths.c, the other path calls that
 * reach the fake sysfs tree).  What it answers follows
 * rdma-core: device discovery by netlink, else sysfs (libibverbs/ibdev_nl.c,
 * init.c, sysfs.c), and the write() command path once ioctl() fails with
 * ENOTTY (libibverbs/cmd_fallback.c).
 *
 *   open("/dev/infiniband/uverbsN")   a new context; the fd is a memfd
 *   open/write/close of /dev/infiniband/rdma_cm   the connection manager (cm/)
 *   stat/fstat/access of that path/fd  a character device 231:192+N
 *   open/read/write/ioctl/close of /dev/infiniband/umadN, issmN
 *                                      the MAD interface (mad/umad.c),
 *                                      RoCE ports' too (GSI only, no QP0)
 *   open*, fopen, stat*, statx, access, faccessat of a path under
 *   /sys/class/infiniband{,_verbs,_mad}, the fake PCI functions or
 *   /dev/infiniband                    rewritten into our tree (sysfs.c);
 *                                      the tree is read-only (EACCES)
 *   write(cmd fd)                      a uverbs command (kernel/: objects.c, dispatch.c)
 *   ioctl(cmd fd)                      ENOTTY: libibverbs falls back to write()
 *   close(cmd fd / event fds)          releases the context / the channel
 *   socket(AF_NETLINK, NETLINK_RDMA)   an RDMA netlink socket (netlink.c):
 *                                      device discovery, the rdma tool
 *   getauxval(AT_HWCAP3)               without HWCAP3_LS64: no ST64B to our UAR
 *
 *   mmap(cmd fd)                       refused as mlx5_ib_mmap() refuses
 *                                      (kernel/mmap.c)
 *   munmap, mmap(MAP_FIXED), mremap,   done under the device's lock when
 *   mprotect, pkey_mprotect            near a doorbell page it may be
 *                                      write-protecting (device/trap.c)
 *   sigaction/signal(SIGSEGV, SIGBUS)  the device's fault handler stays in
 *                                      front and chains to the application's
 *                                      (device/guard.c)
 *
 * mmap of a command fd is checked, then done by libc: the UAR mmaps land in
 * the memfd, which works even when middleware patches libc's mmap at run
 * time (the check is then skipped, the mapping still right).
 * Everything else passes straight to the next definition (RTLD_NEXT).
 *
 * A call made while this thread holds emu_lock comes from the library
 * itself (the fake kernel or the device model): it goes straight to libc.
 * The interposers that look at our tables take the lock, which is not
 * recursive, so anything else would deadlock (ibv_open_xrcd() on the
 * command fd did, through fstat()).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "interpose.h"
#include "base/fdset.h"
#include "base/real.h"
#include "cm/cm.h"
#include "kernel/kernel.h"
#include "mad/umad.h"
#include "subnet/subnet.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

REAL(int, open, const char *, int, ...)
REAL(int, open64, const char *, int, ...)
REAL(int, openat, int, const char *, int, ...)
REAL(int, openat64, int, const char *, int, ...)
REAL(int, __open_2, const char *, int)
REAL(int, __open64_2, const char *, int)
REAL(FILE *, fopen, const char *, const char *)
REAL(FILE *, fopen64, const char *, const char *)
REAL(int, stat, const char *, struct stat *)
REAL(int, lstat, const char *, struct stat *)
REAL(int, fstat, int, struct stat *)
REAL(int, fstatat, int, const char *, struct stat *, int)
REAL(int, stat64, const char *, struct stat64 *)
REAL(int, lstat64, const char *, struct stat64 *)
REAL(int, fstat64, int, struct stat64 *)
REAL(int, fstatat64, int, const char *, struct stat64 *, int)
REAL(int, access, const char *, int)
REAL(int, faccessat, int, const char *, int, int)
REAL(int, __openat_2, int, const char *, int)
REAL(int, __openat64_2, int, const char *, int)
REAL(int, statx, int, const char *, int, unsigned, struct statx *)
REAL(ssize_t, write, int, const void *, size_t)
REAL(ssize_t, read, int, void *, size_t)
REAL(ssize_t, __read_chk, int, void *, size_t, size_t)
REAL(int, ioctl, int, unsigned long, ...)
REAL(int, socket, int, int, int)
REAL(int, munmap, void *, size_t)
/*
 * Under ThreadSanitizer (san/: the stress program links the emulator in)
 * the sanitizer's own start-up maps memory through whatever mmap() the
 * executable defines, before instrumented code may run: there mmap() is
 * left to libc, unchecked.
 */
#if defined(__SANITIZE_THREAD__)
#define EMU_WATCH_MMAP 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMU_WATCH_MMAP 0
#endif
#endif
#ifndef EMU_WATCH_MMAP
#define EMU_WATCH_MMAP 1
#endif

#if EMU_WATCH_MMAP
REAL(void *, mmap, void *, size_t, int, int, int, off_t)
REAL(void *, mmap64, void *, size_t, int, int, int, off64_t)
#endif
REAL(void *, mremap, void *, size_t, size_t, int, ...)
REAL(int, mprotect, void *, size_t, int)
REAL(int, pkey_mprotect, void *, size_t, int, int)
REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)
REAL(sighandler_t, signal, int, sighandler_t)
REAL(unsigned long, getauxval, unsigned long)

/* ------------------------------------------------------------------------ */
/* Path classification                                                       */

#define sysfs_redirect emu_sysfs_redirect

/* A /dev/infiniband node as stat() shows it: uverbs as fstat() of its fd. */
static void fake_cdev_stat(struct stat *st, const struct emu_cdev *c)
{
	if (c->uverbs >= 0) {
		emu_cdev_stat(st, (unsigned)c->uverbs);
		return;
	}
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | c->mode;
	st->st_rdev = c->rdev;
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_ino = 2000 + (ino_t)minor(c->rdev);
}

static void fake_cdev_stat64(struct stat64 *st, const struct emu_cdev *c)
{
	struct stat s;

	fake_cdev_stat(&s, c);
	memset(st, 0, sizeof(*st));
	st->st_mode = s.st_mode;
	st->st_rdev = s.st_rdev;
	st->st_nlink = s.st_nlink;
	st->st_blksize = s.st_blksize;
	st->st_ino = s.st_ino;
}

/* The rdma_cm node, for fstat() of an event channel fd; NULL if not one. */
static const struct emu_cdev *cm_fd_cdev(int fd)
{
	return emu_cm_is_fd(fd) ? emu_cdev_lookup(EMU_CM_PATH) : NULL;
}

/* A command fd's device index, else -1. */
static int cmd_fd_index(int fd)
{
	struct emu_ctx *ctx;
	int idx = -1;

	/* another descriptor of a command fd is one too (ibv_import_device()) */
	if (emu_lock_held() || !emu_fd_adopt(fd))
		return -1;
	emu_lock_acquire();
	ctx = emu_ctx_by_fd_locked(fd);
	if (ctx)
		idx = (int)ctx->dev_index;
	emu_lock_release();
	return idx;
}

/*
 * open() of a /dev/infiniband node: of uverbsN, a fresh context whose fd
 * is the memfd; of umadN or issmN, a MAD file (mad/umad.c).  RoCE
 * ports have no MAD interface (the kernel's ib_umad_add_one() skips ports
 * without rdma_cap_ib_mad()), which open() reports as a node without its
 * device does.
 */
static int open_cdev(const struct emu_cdev *c, int flags)
{
	struct emu_ctx *ctx;
	int idx = c->uverbs;

	if (c->rdma_cm)
		return emu_cm_open(flags);
	if (c->mad_port) {
		int fd = emu_umad_open(c->mad_dev, c->mad_port, c->issm, flags);

		if (fd < 0) {
			errno = -fd;
			return -1;
		}
		return fd;
	}
	if (idx < 0) {
		errno = ENXIO;
		return -1;
	}

	if ((flags & O_ACCMODE) != O_RDWR) {
		errno = EACCES;
		return -1;
	}
	ctx = emu_ctx_create((unsigned)idx);
	if (!ctx)
		return -1;
	if (!(flags & O_CLOEXEC))
		fcntl(ctx->cmd_fd, F_SETFD, 0);
	emu_dbg("open uverbs%d -> fd %d\n", idx, ctx->cmd_fd);
	return ctx->cmd_fd;
}

/*
 * The tree's files are read-only, as sysfs attributes without a store
 * method are for root too (kernfs_fop_open()): opening one for writing
 * fails with EACCES, and so does creating one (kernfs directories have no
 * create), while a missing file opened without O_CREAT is ENOENT.
 */
static bool tree_write(const char *alt, int flags)
{
	if (!alt || ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC))))
		return false;
	if ((flags & O_CREAT) || !access(alt, F_OK))
		errno = EACCES;
	return true;
}

/* The open flags of an fopen() mode, as far as tree_write() cares. */
static int fopen_flags(const char *mode)
{
	if (mode[0] == 'w' || mode[0] == 'a')
		return O_WRONLY | O_CREAT;
	return strchr(mode, '+') ? O_RDWR : O_RDONLY;
}

static mode_t open_mode(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}

/*
 * Descriptors of tree attributes whose read() fails (emu_sysfs_read_fails():
 * the gid_attrs of empty GID entries): marked when opened by an absolute
 * path, failed by read() with EINVAL, unmarked by close().  A descriptor
 * closed past close() (close_range(), a raw syscall) and reused keeps its
 * mark, so read() first asks /proc which file it is now.  Opened relative
 * to a descriptor or directory in the tree, such a file reads empty.
 */
static struct emu_fdset unreadable;

static int opened(int fd, const char *alt)
{
	if (fd >= 0 && alt && emu_sysfs_read_fails(alt))
		emu_fdset_put(&unreadable, fd, true);
	return fd;
}

/* Is fd, marked, still such an attribute?  Unmarks it if not. */
static bool read_fails(int fd)
{
	char link[32], path[PATH_MAX];
	ssize_t n;

	if (!emu_fdset_has(&unreadable, fd))
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = 0;
		if (emu_sysfs_read_fails(path))
			return true;
	}
	emu_fdset_put(&unreadable, fd, false);
	return false;
}

/* fopen() of such an attribute: a stream whose reads fail so too */
static ssize_t einval_read(void *cookie, char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	(void)len;
	errno = EINVAL;
	return -1;
}

static FILE *unreadable_stream(const char *mode)
{
	static const cookie_io_functions_t io = { .read = einval_read };

	return fopencookie(NULL, mode, io);
}

/* ------------------------------------------------------------------------ */
/* open family                                                               */

#define OPEN_BODY(realfn, ...)						\
	char buf[PATH_MAX];						\
	const char *alt;						\
	const struct emu_cdev *cdev = emu_cdev_lookup(path);		\
									\
	if (cdev)							\
		return open_cdev(cdev, flags);				\
	alt = sysfs_redirect(path, buf, sizeof(buf));			\
	if (tree_write(alt, flags))					\
		return -1;						\
	return opened(realfn(alt ? alt : path, __VA_ARGS__), alt)

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	OPEN_BODY(get_open(), flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	OPEN_BODY(get_open64(), flags, mode);
}

int __open_2(const char *path, int flags)
{
	OPEN_BODY(get___open_2(), flags);
}

int __open64_2(const char *path, int flags)
{
	OPEN_BODY(get___open64_2(), flags);
}

/* openat and openat64 differ only in the libc function they forward to. */
#define OPENAT_BODY(realfn)						\
	va_list ap;							\
	mode_t mode;							\
	char buf[PATH_MAX];						\
	const char *alt;						\
	const struct emu_cdev *cdev = emu_cdev_lookup(path);		\
									\
	va_start(ap, flags);						\
	mode = open_mode(flags, ap);					\
	va_end(ap);							\
	if (cdev)							\
		return open_cdev(cdev, flags);				\
	alt = sysfs_redirect(path, buf, sizeof(buf));			\
	if (tree_write(alt, flags))					\
		return -1;						\
	return opened(realfn(dirfd, alt ? alt : path, flags, mode), alt)

int openat(int dirfd, const char *path, int flags, ...)
{
	OPENAT_BODY(get_openat());
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	OPENAT_BODY(get_openat64());
}

/* The _FORTIFY_SOURCE entry points (no mode: they have no O_CREAT) */
int __openat_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];
	const char *alt;
	const struct emu_cdev *cdev = emu_cdev_lookup(path);

	if (cdev)
		return open_cdev(cdev, flags);
	alt = sysfs_redirect(path, buf, sizeof(buf));
	if (tree_write(alt, flags))
		return -1;
	return opened(get___openat_2()(dirfd, alt ? alt : path, flags), alt);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];
	const char *alt;
	const struct emu_cdev *cdev = emu_cdev_lookup(path);

	if (cdev)
		return open_cdev(cdev, flags);
	alt = sysfs_redirect(path, buf, sizeof(buf));
	if (tree_write(alt, flags))
		return -1;
	return opened(get___openat64_2()(dirfd, alt ? alt : path, flags), alt);
}

FILE *fopen(const char *path, const char *mode)
{
	char buf[PATH_MAX];
	const char *alt = sysfs_redirect(path, buf, sizeof(buf));

	if (tree_write(alt, fopen_flags(mode)))
		return NULL;
	if (alt && emu_sysfs_read_fails(alt) && !access(alt, F_OK))
		return unreadable_stream(mode);
	return get_fopen()(alt ? alt : path, mode);
}

FILE *fopen64(const char *path, const char *mode)
{
	char buf[PATH_MAX];
	const char *alt = sysfs_redirect(path, buf, sizeof(buf));

	if (tree_write(alt, fopen_flags(mode)))
		return NULL;
	if (alt && emu_sysfs_read_fails(alt) && !access(alt, F_OK))
		return unreadable_stream(mode);
	return get_fopen64()(alt ? alt : path, mode);
}

/* ------------------------------------------------------------------------ */
/* stat family: present the memfd and the device node as the char device    */

#define STAT_PATH_BODY(realfn, fake, ...)				\
	char buf[PATH_MAX];						\
	const char *alt;						\
	const struct emu_cdev *cdev = emu_cdev_lookup(path);		\
									\
	if (cdev) {							\
		fake(st, cdev);						\
		return 0;						\
	}								\
	alt = sysfs_redirect(path, buf, sizeof(buf));			\
	return realfn(__VA_ARGS__)

int stat(const char *path, struct stat *st)
{
	STAT_PATH_BODY(get_stat(), fake_cdev_stat, alt ? alt : path, st);
}

int lstat(const char *path, struct stat *st)
{
	STAT_PATH_BODY(get_lstat(), fake_cdev_stat, alt ? alt : path, st);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	if (!*path && (flags & AT_EMPTY_PATH)) {
		int idx = cmd_fd_index(dirfd);

		const struct emu_cdev *cm = cm_fd_cdev(dirfd);

		if (idx >= 0) {
			emu_cdev_stat(st, (unsigned)idx);
			return 0;
		}
		if (cm) {
			fake_cdev_stat(st, cm);
			return 0;
		}
	}
	STAT_PATH_BODY(get_fstatat(), fake_cdev_stat, dirfd, alt ? alt : path, st,
		       flags);
}

int stat64(const char *path, struct stat64 *st)
{
	STAT_PATH_BODY(get_stat64(), fake_cdev_stat64, alt ? alt : path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	STAT_PATH_BODY(get_lstat64(), fake_cdev_stat64, alt ? alt : path, st);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	STAT_PATH_BODY(get_fstatat64(), fake_cdev_stat64, dirfd, alt ? alt : path,
		       st, flags);
}

int fstat(int fd, struct stat *st)
{
	int idx = cmd_fd_index(fd);
	const struct emu_cdev *cm = cm_fd_cdev(fd);

	if (idx >= 0) {
		emu_cdev_stat(st, (unsigned)idx);
		return 0;
	}
	if (cm) {
		fake_cdev_stat(st, cm);
		return 0;
	}
	return get_fstat()(fd, st);
}

int fstat64(int fd, struct stat64 *st)
{
	int idx = cmd_fd_index(fd);

	const struct emu_cdev *cm = cm_fd_cdev(fd);

	if (idx >= 0) {
		struct emu_cdev c = { .uverbs = idx };

		fake_cdev_stat64(st, &c);
		return 0;
	}
	if (cm) {
		fake_cdev_stat64(st, cm);
		return 0;
	}
	return get_fstat64()(fd, st);
}

/* statx() is what coreutils (ls, stat) call */
int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	char buf[PATH_MAX];
	const char *alt;
	const struct emu_cdev *cdev = emu_cdev_lookup(path);

	if (cdev) {
		struct stat st;

		fake_cdev_stat(&st, cdev);
		memset(stx, 0, sizeof(*stx));
		stx->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_INO;
		stx->stx_mode = (uint16_t)st.st_mode;
		stx->stx_nlink = (uint32_t)st.st_nlink;
		stx->stx_ino = st.st_ino;
		stx->stx_blksize = (uint32_t)st.st_blksize;
		stx->stx_rdev_major = major(st.st_rdev);
		stx->stx_rdev_minor = minor(st.st_rdev);
		return 0;
	}
	alt = sysfs_redirect(path, buf, sizeof(buf));
	return get_statx()(dirfd, alt ? alt : path, flags, mask, stx);
}

int access(const char *path, int mode)
{
	char buf[PATH_MAX];
	const char *alt;

	if (emu_cdev_lookup(path))
		return 0;	/* the user's nodes */
	alt = sysfs_redirect(path, buf, sizeof(buf));
	return get_access()(alt ? alt : path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	char buf[PATH_MAX];
	const char *alt;

	if (emu_cdev_lookup(path))
		return 0;
	alt = sysfs_redirect(path, buf, sizeof(buf));
	return get_faccessat()(dirfd, alt ? alt : path, mode, flags);
}

/* ------------------------------------------------------------------------ */
/* The command interface                                                     */

/* A umad file's answer: 0 or a count, or -errno into errno. */
static ssize_t umad_ret(ssize_t r)
{
	if (r >= 0)
		return r;
	errno = (int)-r;
	return -1;
}

/*
 * Is fd a umad file (an rdma_cm channel) the application calls?  In a child
 * of fork(), what it inherited is first set aside as its parent's.
 */
static bool umad_call(int fd)
{
	if (!emu_umad_is_fd(fd) || emu_lock_held())
		return false;
	emu_fork_settle(false);
	return true;
}

static bool cm_call(int fd)
{
	if (!emu_cm_is_fd(fd) || emu_lock_held())
		return false;
	emu_fork_settle(false);
	return true;
}

ssize_t read(int fd, void *buf, size_t len)
{
	if (umad_call(fd))
		return umad_ret(emu_umad_read(fd, buf, len));
	if (read_fails(fd)) {
		errno = EINVAL;
		return -1;
	}
	return get_read()(fd, buf, len);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len <= buflen && umad_call(fd))
		return umad_ret(emu_umad_read(fd, buf, len));
	if (read_fails(fd) && len <= buflen) {
		errno = EINVAL;
		return -1;
	}
	return get___read_chk()(fd, buf, len, buflen);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct emu_ctx *ctx;
	int ret = EBADF;

	if (umad_call(fd))
		return umad_ret(emu_umad_write(fd, buf, len));
	if (emu_nl_is_fd(fd) && !emu_lock_held())
		return emu_nl_write(fd, buf, len);

	if (cm_call(fd)) {
		if ((ret = emu_cm_write(fd, buf, len))) {
			errno = ret;
			return -1;
		}
		return (ssize_t)len;
	}
	if (!emu_fd_is_cmd(fd) || emu_lock_held())
		return get_write()(fd, buf, len);
	emu_fork_settle(false);
	emu_lock_acquire();
	ctx = emu_ctx_by_fd_locked(fd);
	if (ctx)
		ret = emu_cmd_dispatch(ctx, (uint64_t)(uintptr_t)buf, len);
	else if (emu_ctx_inherited_by_fd_locked(fd))
		ret = EACCES;	/* ib_safe_file_access(): fork() gave new creds */
	emu_lock_release();
	if (ret) {
		errno = ret;
		return -1;
	}
	return (ssize_t)len;
}

/*
 * RDMA_VERBS_IOCTL on the command fd goes to the fake kernel's ioctl
 * framework (kernel/ioctl.c); any other request is ENOTTY, as the uverbs
 * file answers (-ENOIOCTLCMD).  libibverbs probes with INVOKE_WRITE when
 * it opens the device and then sends its write() commands by ioctl too
 * (rdma-core libibverbs/device.c, cmd_fallback.c).
 */
int ioctl(int fd, unsigned long req, ...)
{
	struct emu_ctx *ctx;
	va_list ap;
	void *arg;
	int ret = EBADF;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (umad_call(fd))
		return (int)umad_ret(emu_umad_ioctl(fd, req, arg));
	if (emu_lock_held() ||
	    !(emu_fd_is_cmd(fd) || (req == RDMA_VERBS_IOCTL && emu_fd_adopt(fd))))
		return get_ioctl()(fd, req, arg);
	if (req != RDMA_VERBS_IOCTL) {
		errno = ENOTTY;
		return -1;
	}
	emu_fork_settle(false);
	emu_lock_acquire();
	ctx = emu_ctx_by_fd_locked(fd);
	if (!ctx)
		ctx = emu_ctx_inherited_by_fd_locked(fd);	/* kernel/fork.c */
	if (ctx)
		ret = emu_ioctl_dispatch(ctx, (uint64_t)(uintptr_t)arg);
	emu_lock_release();
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int close(int fd)
{
	if ((emu_fd_is_cmd(fd) || emu_fd_is_watched(fd)) && !emu_lock_held()) {
		emu_fork_settle(false);
		emu_fd_closed(fd);
	}
	if (emu_cm_is_fd(fd)) {
		emu_fork_settle(false);
		emu_cm_close(fd);
	}
	if (emu_umad_is_fd(fd)) {
		emu_fork_settle(false);
		emu_umad_close(fd);
	}
	if (emu_nl_is_fd(fd))
		emu_nl_close(fd);
	emu_fdset_put(&unreadable, fd, false);
	return emu_real_close(fd);
}

/* ------------------------------------------------------------------------ */
/* Changes of the application's mappings (device/trap.c)                     */

/* The application's call changes [a, a + alen) and [b, b + blen). */
static bool vm_change(const void *a, size_t alen, const void *b, size_t blen)
{
	return !emu_lock_held() && emu_dev_vm_change(a, alen, b, blen);
}

/* After the change: the device's lock goes, errno stays the call's. */
static void vm_changed(void)
{
	int e = errno;

	emu_dev_vm_changed();
	errno = e;
}

int munmap(void *addr, size_t len)
{
	int ret;

	if (!vm_change(addr, len, NULL, 0))
		return get_munmap()(addr, len);
	ret = get_munmap()(addr, len);
	vm_changed();
	return ret;
}

int mprotect(void *addr, size_t len, int prot)
{
	int ret;

	if (!vm_change(addr, len, NULL, 0))
		return get_mprotect()(addr, len, prot);
	ret = get_mprotect()(addr, len, prot);
	vm_changed();
	return ret;
}

int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	int ret;

	if (!vm_change(addr, len, NULL, 0))
		return get_pkey_mprotect()(addr, len, prot, pkey);
	ret = get_pkey_mprotect()(addr, len, prot, pkey);
	vm_changed();
	return ret;
}

#if EMU_WATCH_MMAP
/*
 * A mapping of a command fd is first checked as the kernel's mlx5_ib_mmap()
 * checks it (kernel/mmap.c).  Only MAP_FIXED replaces what is there
 * (MAP_FIXED_NOREPLACE never does).  MEMIC operation addresses are
 * inaccessible anonymous memory whose accesses the device answers.
 */
static void *do_mmap(void *(*real)(void *, size_t, int, int, int, off_t),
		     void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	bool ops = false;
	void *p;

	if (fd >= 0 && !emu_lock_held() && emu_fd_is_cmd(fd)) {
		int ret;

		emu_fork_settle(false);
		ret = emu_mmap_check(fd, len, prot, flags, &off, &ops);

		if (ret) {
			errno = ret;
			return MAP_FAILED;
		}
	}
	if (ops) {
		int fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
		bool change = (flags & MAP_FIXED) && vm_change(addr, len, NULL, 0);

		p = real(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
		if (change)
			vm_changed();
		if (p != MAP_FAILED && (errno = emu_memic_ops_mapped(fd, off, p, len))) {
			get_munmap()(p, len);
			return MAP_FAILED;
		}
		return p;
	}
	if (!(flags & MAP_FIXED) || !vm_change(addr, len, NULL, 0))
		return real(addr, len, prot, flags, fd, off);
	p = real(addr, len, prot, flags, fd, off);
	vm_changed();
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(get_mmap(), addr, len, prot, flags, fd, off);
}

/* off64_t is off_t on the 64-bit targets the emulator runs on */
_Static_assert(sizeof(off64_t) == sizeof(off_t), "mmap64 is mmap");

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return do_mmap(get_mmap64(), addr, len, prot, flags, fd, off);
}
#endif

/* The old place always changes; the new one is given only with MREMAP_FIXED. */
void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
	void *want = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!vm_change(old, old_len, want, want ? len : 0))
		return get_mremap()(old, old_len, len, flags, want);
	p = get_mremap()(old, old_len, len, flags, want);
	vm_changed();
	return p;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!emu_lock_held() && emu_dev_sigaction(sig, act, old))
		return 0;
	return get_sigaction()(sig, act, old);
}

/* glibc's signal() calls its own sigaction, past the one above */
sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction act = { .sa_handler = handler, .sa_flags = SA_RESTART }, old;

	if (emu_lock_held() || handler == SIG_ERR)
		return get_signal()(sig, handler);
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (!emu_dev_sigaction(sig, &act, &old))
		return get_signal()(sig, handler);
	return old.sa_flags & SA_SIGINFO ? (sighandler_t)(void (*)(void))old.sa_sigaction :
					   old.sa_handler;
}

int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA && !emu_lock_held()) {
		emu_fork_settle(true);
		if (emu_cfg.host_id)
			return emu_nl_socket(type);
	}
	return get_socket()(domain, type, protocol);
}

/* ------------------------------------------------------------------------ */
/* CPU features                                                              */

/*
 * The emulated UAR pages are ordinary memory (the memfd). rdmafast's
 * BlueFlame copy uses ST64B when AT_HWCAP3 reports arm64's FEAT_LS64
 * (rdmafast/doorbell.h), and ST64B to memory that does not support it
 * may fault, so an emulated process is told its CPU has no LS64. The values
 * are Linux's ABI (AT_HWCAP3 29, HWCAP3_LS64 bit 3); no other architecture
 * uses that auxv entry.
 */
enum { EMU_AT_HWCAP3 = 29 };
#define EMU_HWCAP3_LS64 (1UL << 3)

unsigned long getauxval(unsigned long type)
{
	unsigned long v = get_getauxval()(type);

	return type == EMU_AT_HWCAP3 ? v & ~EMU_HWCAP3_LS64 : v;
}

/* ------------------------------------------------------------------------ */
/* Load and exit                                                             */

/* Take a host slot, write its sysfs tree, publish its ports. */
static void host_join(void)
{
	int ret = emu_subnet_join();

	if (!ret)
		ret = emu_sysfs_build();
	if (!ret)
		ret = emu_mad_publish();
	if (ret) {
		fprintf(stderr, "rfemu: cannot set up the emulated HCA: %s\n",
			strerror(ret));
		emu_cfg.host_id = 0;	/* pass everything through */
		return;
	}
	emu_dbg("host %u, %u device(s), sysfs at %s\n", emu_cfg.host_id,
		emu_cfg.num_devs, emu_sysfs_root());
}

__attribute__((constructor))
static void emu_init(void)
{
	emu_config_load();
	host_join();
}

/*
 * A child of fork() (kernel/objects.c emu_fork_child()) is no host yet: it
 * holds no slot (record locks are not inherited), and what it inherited
 * is its parent's.  Reaching the device (a path of the sysfs tree or
 * /dev/infiniband, an RDMA netlink socket) makes it a host of its own, as
 * a program started with exec() is; a command, mmap() or close() of an
 * inherited command fd only sets the parent's contexts aside (join false),
 * which then serve it what kernel/fork.c says.  Under emu_lock, which
 * fork() cannot copy taken, so threads of the child wait for the one that
 * settles.
 */
void emu_fork_settle(bool join)
{
	unsigned want = join ? EMU_FORK_DISOWN | EMU_FORK_JOIN : EMU_FORK_DISOWN;
	unsigned pending;

	if (!(atomic_load_explicit(&emu_fork_pending, memory_order_acquire) & want) ||
	    emu_lock_held())
		return;
	emu_lock_acquire();
	pending = atomic_load(&emu_fork_pending);
	if (pending & EMU_FORK_DISOWN) {
		emu_ctx_disown_locked();
		emu_dev_disown_locked();
		emu_cm_disown_locked();
		emu_umad_disown_locked();
		pending &= ~EMU_FORK_DISOWN;
	}
	if (join && (pending & EMU_FORK_JOIN)) {
		host_join();
		pending &= ~EMU_FORK_JOIN;
	}
	atomic_store_explicit(&emu_fork_pending, pending, memory_order_release);
	emu_lock_release();
}

__attribute__((destructor))
static void emu_exit(void)
{
	/* a child that never settled has nothing of its own to release */
	if (!emu_cfg.host_id || (atomic_load(&emu_fork_pending) & EMU_FORK_DISOWN))
		return;
	emu_release_all();
	/* the sysfs tree stays, for the next host of this slot (sysfs.c) */
}
