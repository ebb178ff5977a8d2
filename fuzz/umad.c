/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * umad.c - libFuzzer target: /dev/infiniband/umad0 (emu/mad/umad.c and
 * the MAD agents behind it, with the rest of the fake kernel, no device
 * model) fed arbitrary registrations, MADs and reads on two files.
 *
 * Property: every call returns what the kernel's ib_umad may return (a
 * write its length, a read one whole queued MAD, an ioctl 0) or -1 with an
 * errno its file operations may answer (drivers/infiniband/core/
 * user_mad.c, mad.c); nothing crashes, hangs or leaks (ASan, UBSan and
 * LeakSanitizer watch), and closing the files leaves none of them open and
 * no fd behind.
 *
 * Input: records of an op byte, a 16-bit little-endian length and that
 * many bytes (at most 64 records).  Op bit 7 picks the second file; its low
 * bits: 0 write() the bytes, 1 REGISTER_AGENT, 2 REGISTER_AGENT2,
 * 3 UNREGISTER_AGENT (the bytes are the ioctl's argument, in a page-sized
 * buffer), 4 ENABLE_PKEY, 5 read() into a buffer of that length.  The files
 * are non-blocking.  MADs may go to any LID: those of other hosts in
 * $RFEMU_STATE_DIR are answered from their records, as for any host.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include <rdma/ib_user_mad.h>
#include <rdma/rdma_user_ioctl.h>

#include "mad/umad.h"
#include "kernel_arena.h"

#define MAX_OPS		64

/* ib_umad's answers: the common set, and ENOTTY for an unknown ioctl */
static bool umad_errno(int e)
{
	return e == ENOTTY || known_errno(e);
}

static int open_fds(void)
{
	int n = 0;

	for (int i = 0; i < FD_SCAN; i++)
		n += fcntl(i, F_GETFD) >= 0;
	return n;
}

static int open_umad(void)
{
	int fd = open("/dev/infiniband/umad0", O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		fprintf(stderr, "umad: no emulated umad0 (%s): build with librfemu's sources\n",
			strerror(errno));
		abort();
	}
	return fd;
}

static void check(const char *what, long ret, long ok)
{
	if (ret == ok || (ret == -1 && umad_errno(errno)))
		return;
	fprintf(stderr, "umad: %s = %ld, errno %d\n", what, ret, errno);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[65536 + 4096];
	static const unsigned long reqs[] = {
		IB_USER_MAD_REGISTER_AGENT, IB_USER_MAD_REGISTER_AGENT2,
		IB_USER_MAD_UNREGISTER_AGENT,
	};
	size_t pos = 0;
	int fd[2], before;

	(void)relocate;		/* no pointers in the umad ABI */
	(void)event_fd;
	if (!arena)
		close(open_umad());	/* the first open starts the timer thread */
	arena_reset();
	before = open_fds();
	fd[0] = open_umad();
	fd[1] = open_umad();
	for (int n = 0; n < MAX_OPS && pos + 3 <= size; n++) {
		unsigned op = data[pos], len = data[pos + 1] | (unsigned)data[pos + 2] << 8;
		int f = fd[op >> 7];
		ssize_t r;

		pos += 3;
		if (len > size - pos)
			len = (unsigned)(size - pos);
		memset(buf, 0, 4096);
		memcpy(buf, data + pos, len);
		pos += len;
		errno = 0;
		switch (op & 0x7f) {
		case 0:
			check("write", write(f, buf, len), len);
			break;
		case 1: case 2: case 3:
			check("ioctl", ioctl(f, reqs[(op & 0x7f) - 1], buf), 0);
			break;
		case 4:
			check("ENABLE_PKEY", ioctl(f, IB_USER_MAD_ENABLE_PKEY, NULL), 0);
			break;
		case 5:
			r = read(f, buf, len);
			if (r > 0 && (size_t)r <= len && (size_t)r >= sizeof(struct ib_user_mad_hdr_old))
				break;
			check("read", r, -2);
			break;
		default:
			break;
		}
	}
	close(fd[0]);
	close(fd[1]);
	if (emu_umad_is_fd(fd[0]) || emu_umad_is_fd(fd[1])) {
		fprintf(stderr, "umad: a file outlived its close()\n");
		abort();
	}
	if (open_fds() != before) {
		fprintf(stderr, "umad: %d fds open after the input, %d before\n", open_fds(), before);
		abort();
	}
	return 0;
}
