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
 * Pinning asks the mappings: the range must be covered by them without a
 * hole, each readable, and writable when the device writes.  Each mapping
 * of the range is looked up by address with the PROCMAP_QUERY ioctl on
 * /proc/self/maps (Linux 6.11); on an older kernel the whole file is read
 * and parsed, which costs 20-200 us in a large process (a sanitizer's
 * shadow mappings) and was most of a command's time: every command's
 * response buffer is checked this way.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/*
 * The argument of PROCMAP_QUERY, as include/uapi/linux/fs.h (6.11) defines
 * it; the C library's headers here predate it.
 */
struct vma_query {
	uint64_t	size;
	uint64_t	query_flags;
	uint64_t	query_addr;
	uint64_t	vma_start, vma_end;
	uint64_t	vma_flags;
	uint64_t	vma_page_size, vma_offset, inode;
	uint32_t	dev_major, dev_minor;
	uint32_t	vma_name_size, build_id_size;
	uint64_t	vma_name_addr, build_id_addr;
};
#define VMA_QUERY		_IOWR('f', 17, struct vma_query)
#define VMA_QUERY_READABLE	0x01u
#define VMA_QUERY_WRITABLE	0x02u

/* 0: try PROCMAP_QUERY; -1: this kernel has none, read the maps */
static _Atomic int vma_query_ok;

/*
 * [addr, end) by PROCMAP_QUERY: 0, EFAULT, or -1 when the kernel does not
 * answer it (ENOTTY before 6.11), and the maps must be read instead.
 */
static int check_by_query(uint64_t addr, uint64_t end, bool write)
{
	uint64_t need = VMA_QUERY_READABLE | (write ? VMA_QUERY_WRITABLE : 0);
	int fd = emu_real_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	int ret = 0;

	if (fd < 0)
		return -1;
	for (uint64_t cur = addr; cur < end; ) {
		struct vma_query q = { .size = sizeof(q), .query_addr = cur };

		if (emu_real_ioctl(fd, VMA_QUERY, &q)) {
			/* ENOENT: no mapping covers cur, a hole */
			ret = errno == ENOENT ? EFAULT : -1;
			break;
		}
		if ((q.vma_flags & need) != need || q.vma_end <= cur) {
			ret = EFAULT;
			break;
		}
		cur = q.vma_end;
	}
	emu_real_close(fd);
	return ret;
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
	if (atomic_load_explicit(&vma_query_ok, memory_order_relaxed) >= 0) {
		ret = check_by_query(addr, end, write);
		if (ret >= 0)
			return ret;
		atomic_store_explicit(&vma_query_ok, -1, memory_order_relaxed);
		ret = EFAULT;
	}
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
