/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * user_mem.c - user memory as the kernel reaches it.
 *
 * The kernel never dereferences a user pointer: it copies with
 * copy_from_user()/copy_to_user(), which answer EFAULT for an address that
 * is not mapped (or, writing, not writable), and it pins the buffers the
 * device will use with ib_umem_get() (get_user_pages, FOLL_WRITE when the
 * device writes), which fails with EFAULT on a hole, a PROT_NONE mapping,
 * or a read-only one when writing.  The fake kernel lives in the process,
 * so it must do the same on purpose rather than crash.
 *
 * Copies go through process_vm_readv()/process_vm_writev() on our own pid:
 * the kernel walks the page tables and fails with EFAULT exactly where
 * copy_*_user would, and nothing faults here.  Where those system calls are
 * forbidden (a seccomp profile without CAP_SYS_PTRACE answers EPERM or
 * ENOSYS), the mappings in /proc/self/maps decide, then memcpy() copies.
 *
 * Pinning reads /proc/self/maps: the range must be covered by mappings
 * without a hole, each readable, and writable when the device writes.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

/* 0: try process_vm_*; -1: they are forbidden here, use the maps */
static _Atomic int vm_rw_ok;

static bool range_ok(uint64_t addr, size_t len)
{
	return addr + len >= addr && addr + len <= (uint64_t)UINTPTR_MAX;
}

/*
 * The whole of /proc/self/maps, NUL-terminated, or NULL.  open() is our own
 * interposer, which passes this path through without the lock; the fd is
 * closed with the real close(), as nothing under the lock may call ours.
 */
static char *read_maps(void)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap), *tmp;
	int fd = emu_real_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	ssize_t n;

	if (fd < 0 || !buf)
		goto fail;
	for (;;) {
		if (cap - len < 4096) {
			tmp = realloc(buf, cap * 2);
			if (!tmp)
				goto fail;
			buf = tmp;
			cap *= 2;
		}
		n = emu_real_read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	emu_real_close(fd);
	buf[len] = 0;
	return buf;
fail:
	if (fd >= 0)
		emu_real_close(fd);
	free(buf);
	return NULL;
}

int emu_umem_check(uint64_t addr, uint64_t len, bool write)
{
	uint64_t cur = addr, end = addr + len;
	char *maps, *line;
	int ret = EFAULT;

	if (!len)
		return 0;
	if (end < addr)
		return EFAULT;
	maps = read_maps();
	if (!maps)
		return ENOMEM;
	/* lines are in address order: "start-end rwxp offset dev inode path" */
	for (line = maps; *line && cur < end; ) {
		char *next = strchr(line, '\n');
		unsigned long long s, e;
		char perm[5];

		if (sscanf(line, "%llx-%llx %4s", &s, &e, perm) == 3 && e > cur) {
			if (s > cur)
				break;		/* a hole */
			if (perm[0] != 'r' || (write && perm[1] != 'w'))
				break;
			cur = e;
		}
		if (!next)
			break;
		line = next + 1;
	}
	if (cur >= end)
		ret = 0;
	free(maps);
	return ret;
}

static int vm_copy(void *local, uint64_t remote, size_t len, bool to_user)
{
	struct iovec l = { .iov_base = local, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)remote, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (!range_ok(remote, len))
		return EFAULT;
	if (atomic_load_explicit(&vm_rw_ok, memory_order_relaxed) >= 0) {
		n = to_user ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
			    : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
		if (n == (ssize_t)len)
			return 0;
		/* a partial copy stopped at a page it could not reach */
		if (n >= 0 || errno == EFAULT)
			return EFAULT;
		if (errno != EPERM && errno != ENOSYS)
			return errno;
		atomic_store_explicit(&vm_rw_ok, -1, memory_order_relaxed);
	}
	if (emu_umem_check(remote, len, to_user))
		return EFAULT;
	if (to_user)
		memcpy(r.iov_base, local, len);
	else
		memcpy(local, r.iov_base, len);
	return 0;
}

int emu_copy_from_user(void *dst, uint64_t src, size_t len)
{
	return vm_copy(dst, src, len, false);
}

int emu_copy_to_user(uint64_t dst, const void *src, size_t len)
{
	return vm_copy((void *)(uintptr_t)src, dst, len, true);
}
