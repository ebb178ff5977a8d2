/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kernel_cmd.c - libFuzzer target: the fake uverbs kernel (emu/, without
 * the device model) fed arbitrary commands on its command fd.
 *
 * Property: every write() returns its length or -1 with an errno; nothing
 * crashes, hangs or leaks (ASan, UBSan and LeakSanitizer watch), and
 * closing the fd releases everything the commands created.
 *
 * Input: records of a 16-bit little-endian length and that many bytes,
 * each written as one command (at most 64 per input). Pointers are whatever
 * the bytes say, so most are wild; an 8-byte-aligned value
 * 0xfeedfacecafeXXXX is replaced by the address of offset XXXX in a 64 KiB
 * arena of read-write pages, then read-only, PROT_NONE and unmapped ones,
 * so that responses, rings, doorbells and MRs can also land somewhere
 * (fuzz/corpus/kernel_cmd/ holds sequences that build a context, a PD, an
 * MR, CQs, an SRQ and QPs this way). An aligned value that points at
 * memory the fake kernel could read is made non-canonical first: the
 * fuzzer and its sanitizers live in the same process and must not be the
 * target of a (legitimate) response. The first 8 bytes of the input are
 * also an ioctl() request on the fd, which must answer ENOTTY.
 *
 * KERNEL_CMD_TRACE=1 prints each command's outcome, to read a reproducer.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define ARENA_PAGES	16
#define ARENA_SIZE	(ARENA_PAGES * 4096)
#define MAGIC_MASK	0xffffffffffff0000ull
#define MAGIC		0xfeedfacecafe0000ull
#define MAX_CMDS	64
#define MAX_CMD_LEN	4096
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

/* an event fd the fake kernel handed out: one end of a SEQPACKET socketpair */
static bool event_fd(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_SEQPACKET;
}

static bool known_errno(int e)
{
	switch (e) {
	case EINVAL: case ENOSPC: case EFAULT: case EOPNOTSUPP: case ENOMEM:
	case EBUSY: case EPERM: case EBADF: case EAGAIN: case ENOENT:
	case EMFILE: case ENFILE: case EEXIST: case ENOSYS:
		return true;
	default:
		return false;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t cmd[MAX_CMD_LEN + 8];
	static int trace = -1;
	uint64_t req = 0;
	size_t pos = 0;
	int fd;

	if (trace < 0)
		trace = getenv("KERNEL_CMD_TRACE") != NULL;

	arena_reset();

	fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kernel_cmd: no emulated device (%s): build with librfemu's sources\n",
			strerror(errno));
		abort();
	}
	memcpy(&req, data, size < 8 ? size : 8);
	if (ioctl(fd, (unsigned long)req, arena) != -1 || errno != ENOTTY)
		abort();

	for (int n = 0; n < MAX_CMDS && pos + 2 <= size; n++) {
		size_t len = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
		ssize_t ret;

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		if (len > MAX_CMD_LEN)
			len = MAX_CMD_LEN;
		memcpy(cmd, data + pos, len);
		pos += len;
		relocate(cmd, len);
		errno = 0;
		ret = write(fd, cmd, len);
		if (trace)
			fprintf(stderr, "kernel_cmd: cmd %#x len %zu: %s\n",
				len >= 4 ? cmd[0] | (uint32_t)cmd[3] << 24 : 0u, len,
				ret == (ssize_t)len ? "ok" : strerror(errno));
		if (ret == (ssize_t)len)
			continue;
		if (ret != -1 || !known_errno(errno)) {
			fprintf(stderr, "kernel_cmd: write(%zu) = %zd, errno %d\n", len, ret, errno);
			abort();
		}
	}

	/*
	 * The process's side: the command fd, then the event fds it was given
	 * (the fake kernel closed its ends with the context; the sanitizers'
	 * pipes and the subnet's files are not sockets).
	 */
	close(fd);
	for (int i = 3; i < FD_SCAN; i++)
		if (event_fd(i))
			close(i);
	return 0;
}
