/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cm_ucma.c - libFuzzer target: the fake rdma_cm (emu/cm/, with the fake
 * uverbs kernel beside it, no device model) fed arbitrary commands of
 * <rdma/rdma_user_cm.h> on two event channels.
 *
 * Property: every write() returns its length or -1 with an errno the
 * kernel's ucma_write() and its handlers may answer (drivers/infiniband/
 * core/ucma.c, cma.c); nothing crashes, hangs or leaks (ASan, UBSan and
 * LeakSanitizer watch), and closing the channels destroys every id, listener,
 * connection and multicast group the commands created: no id is left in
 * the table (cm/internal.h) and no fd stays open.
 *
 * Input: records of a 16-bit little-endian word and its bytes (at most 64
 * records): the low 12 bits are the length, bit 15 picks the second
 * channel. Each record is written as one command (header and body); its
 * pointers are relocated as in kernel_cmd.c (fuzz/kernel_arena.h:
 * 0xfeedfacecafeXXXX is offset XXXX of the arena, readable addresses are
 * made non-canonical). The channels are non-blocking: a GET_EVENT with
 * nothing queued is EAGAIN, as on the kernel's file opened O_NONBLOCK (a
 * blocking one would sleep, rightly, for ever). Connections made here go to
 * listeners of this same process through the subnet in $RFEMU_STATE_DIR.
 *
 * CM_UCMA_TRACE=1 prints each command's outcome, to read a reproducer.
 */
#include <fcntl.h>
#include <stdio.h>

#include <rdma/rdma_user_cm.h>

#include "cm/internal.h"
#include "kernel_arena.h"

#define MAX_CMDS	64
#define LEN_MASK	0x0fffu
#define SECOND_CHANNEL	0x8000u

/* what ucma_write() and the CM behind it may answer, beyond the common set */
static bool cm_errno(int e)
{
	switch (e) {
	case EADDRINUSE: case EADDRNOTAVAIL: case EAFNOSUPPORT: case ENODEV:
	case ECONNREFUSED: case EHOSTUNREACH: case ENOTCONN: case EISCONN:
	case ETIMEDOUT: case ENETUNREACH: case ENODATA:
		return true;
	default:
		return known_errno(e);
	}
}

/* the fds open below FD_SCAN: what an input leaves open is a leak */
static int open_fds(void)
{
	int n = 0;

	for (int i = 0; i < FD_SCAN; i++)
		n += fcntl(i, F_GETFD) >= 0;
	return n;
}

static int open_channel(void)
{
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		fprintf(stderr, "cm_ucma: no emulated rdma_cm (%s): build with librfemu's sources\n",
			strerror(errno));
		abort();
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t cmd[LEN_MASK + 1];
	static int trace = -1;
	size_t pos = 0, len;
	struct cm_id *left;
	long word;
	int fd[2], before;

	if (trace < 0) {
		trace = getenv("CM_UCMA_TRACE") != NULL;
		/* the first channel starts the CM thread, whose fds stay */
		close(open_channel());
	}

	arena_reset();
	before = open_fds();
	fd[0] = open_channel();
	fd[1] = open_channel();

	for (int n = 0; n < MAX_CMDS &&
	     (word = next_record(data, size, &pos, LEN_MASK, cmd, sizeof(cmd), &len)) >= 0; n++) {
		int ch = !!(word & SECOND_CHANNEL);
		ssize_t ret;

		errno = 0;
		ret = write(fd[ch], cmd, len);
		if (trace)
			fprintf(stderr, "cm_ucma: channel %d cmd %u len %zu: %s\n", ch,
				len >= 4 ? cmd[0] | (unsigned)cmd[1] << 8 : 0u, len,
				ret == (ssize_t)len ? "ok" : strerror(errno));
		if (ret == (ssize_t)len)
			continue;
		if (ret != -1 || !cm_errno(errno)) {
			fprintf(stderr, "cm_ucma: write(%zu) = %zd, errno %d\n", len, ret, errno);
			abort();
		}
	}

	/* ucma_close(): every id of each channel goes with it */
	close(fd[0]);
	close(fd[1]);
	cm_lock();
	left = cm_id_next(NULL);
	cm_unlock();
	if (left) {
		fprintf(stderr, "cm_ucma: id %u (state %d) outlived its channel\n",
			left->handle, (int)left->state);
		abort();
	}
	if (open_fds() != before) {
		fprintf(stderr, "cm_ucma: %d fds open after the input, %d before\n",
			open_fds(), before);
		abort();
	}
	return 0;
}
