/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kernel_arena.h - what the fake-kernel fuzz targets (kernel_cmd.c,
 * kernel_ioctl.c, cm_ucma.c) share: the arena their pointers may land in,
 * the records their inputs are made of and the relocation of the records'
 * pointers into the arena, the errnos the kernel may answer, and the
 * command fd with the event fds to close after an input.
 */
#ifndef RDMAFAST_FUZZ_KERNEL_ARENA_H
#define RDMAFAST_FUZZ_KERNEL_ARENA_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define ARENA_PAGES	16
#define ARENA_SIZE	(ARENA_PAGES * 4096)
#define MAGIC_MASK	0xffffffffffff0000ull
#define MAGIC		0xfeedfacecafe0000ull
#define FD_SCAN		256	/* event fds are looked for below this */

static uint8_t *arena;

/* pages 0-11 read-write, 12-13 read-only, 14 PROT_NONE, 15 unmapped */
static void arena_reset(void)
{
	if (!arena) {
		arena = mmap(NULL, ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED)
			abort();
	}
	/* fresh zero pages every run, so one input cannot steer the next */
	if (mmap(arena, 12 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap(arena + 12 * 4096, 2 * 4096, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mprotect(arena + 14 * 4096, 4096, PROT_NONE) ||
	    munmap(arena + 15 * 4096, 4096))
		abort();
}

/* whether the fake kernel could read a byte at addr (it checks the same way) */
static bool readable(uint64_t addr)
{
	uint8_t b;
	struct iovec l = { &b, 1 }, r = { (void *)(uintptr_t)addr, 1 };

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == 1;
}

/*
 * Magic values become arena addresses. Any other value that points at
 * readable memory (the fuzzer learns addresses from the comparisons in
 * emu/user_mem.c, and ASan's shadow covers terabytes) becomes a
 * non-canonical one: the fake kernel would rightly write a response into the
 * fuzzer's own data or the shadow, as the kernel would.
 */
static void relocate(uint8_t *cmd, size_t len)
{
	/* every pointer of the uverbs ABI is an aligned u64 of the command */
	for (size_t off = 0; off + 8 <= len; off += 8) {
		uint64_t v;

		memcpy(&v, cmd + off, 8);
		if ((v & MAGIC_MASK) == MAGIC)
			v = (uint64_t)(uintptr_t)arena + (v & ~MAGIC_MASK);
		else if (v >= 65536 && v < 1ull << 47 && readable(v))
			v |= 0x8000000000000000ull;
		memcpy(cmd + off, &v, 8);
	}
}

/*
 * The next record of an input: a 16-bit little-endian word, then bytes,
 * len_mask of the word's worth but no more than the input holds nor max.
 * They are copied to dst and relocated.  Returns the word, or -1 at the
 * end of the input.
 */
static inline long next_record(const uint8_t *data, size_t size, size_t *pos,
			       unsigned len_mask, uint8_t *dst, size_t max, size_t *len)
{
	unsigned word;

	if (*pos + 2 > size)
		return -1;
	word = data[*pos] | (unsigned)data[*pos + 1] << 8;
	*pos += 2;
	*len = word & len_mask;
	if (*len > size - *pos)
		*len = size - *pos;
	if (*len > max)
		*len = max;
	memcpy(dst, data + *pos, *len);
	*pos += *len;
	relocate(dst, *len);
	return word;
}

/* The command fd of the emulated device; without one the target was built wrong. */
static inline int open_uverbs(const char *target)
{
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "%s: no emulated device (%s): build with librfemu's sources\n",
			target, strerror(errno));
		abort();
	}
	return fd;
}

/* an event fd the fake kernel handed out: one end of a SEQPACKET socketpair */
static inline bool event_fd(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_SEQPACKET;
}

/*
 * the errnos a write() command may answer; ENODATA: an address naming an
 * empty GID entry (rdma_get_gid_attr(), CREATE_AH and MODIFY_QP);
 * EOVERFLOW: an ODP MR of an empty or wrapping range (ib_init_umem_odp())
 */
static bool known_errno(int e)
{
	switch (e) {
	case EINVAL: case ENOSPC: case EFAULT: case EOPNOTSUPP: case ENOMEM:
	case EBUSY: case EPERM: case EBADF: case EAGAIN: case ENOENT:
	case EMFILE: case ENFILE: case EEXIST: case ENOSYS: case ENODATA:
	case EOVERFLOW:
		return true;
	default:
		return false;
	}
}

/*
 * After an input, the process's side: the command fd, then the event fds
 * it was given (the fake kernel closed its ends with the context; the
 * sanitizers' pipes and the subnet's files are not sockets).
 */
static inline void close_uverbs(int fd)
{
	close(fd);
	for (int i = 3; i < FD_SCAN; i++)
		if (event_fd(i))
			close(i);
}

#endif /* RDMAFAST_FUZZ_KERNEL_ARENA_H */
