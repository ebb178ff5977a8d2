/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kernel_ioctl.c - libFuzzer target: the fake uverbs kernel's ioctl
 * framework (emu/kernel/ioctl.c and its methods, without the device model)
 * fed arbitrary RDMA_VERBS_IOCTL calls on a fresh command fd.
 *
 * Property: every ioctl() returns 0 or -1 with an errno the kernel may
 * answer; nothing crashes, hangs or leaks, and closing the fd releases
 * everything the calls created.
 *
 * Input: records of a 16-bit little-endian length and that many bytes (at
 * most 64 records).  Each record is copied to the start of the arena of
 * kernel_arena.h and passed as the call (struct ib_uverbs_ioctl_hdr and its
 * attributes), so its pointers, relocated as in kernel_cmd.c
 * (0xfeedfacecafeXXXX: offset XXXX of the arena), can name payloads inside
 * the record itself, responses in the arena, or read-only, PROT_NONE and
 * unmapped pages.  fuzz/corpus/kernel_ioctl/ holds INVOKE_WRITE sequences
 * that create a context, a PD and a CQ, and the native queries.
 *
 * KERNEL_IOCTL_TRACE=1 prints each call's outcome, to read a reproducer.
 */
#include <stdio.h>
#include <sys/ioctl.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "kernel_arena.h"

#define MAX_CALLS	64
#define MAX_CALL_LEN	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int trace = -1;
	size_t pos = 0, len;
	int fd;

	if (trace < 0)
		trace = getenv("KERNEL_IOCTL_TRACE") != NULL;

	arena_reset();
	fd = open_uverbs("kernel_ioctl");

	for (int n = 0; n < MAX_CALLS &&
	     next_record(data, size, &pos, 0xffff, arena, MAX_CALL_LEN, &len) >= 0; n++) {
		int ret;

		errno = 0;
		ret = ioctl(fd, RDMA_VERBS_IOCTL, arena);
		if (trace)
			fprintf(stderr, "kernel_ioctl: object %#x method %#x len %zu: %s\n",
				len >= 4 ? arena[2] | arena[3] << 8 : 0,
				len >= 6 ? arena[4] | arena[5] << 8 : 0, len,
				ret == 0 ? "ok" : strerror(errno));
		if (ret == 0)
			continue;
		if (ret != -1 || !(known_errno(errno) || errno == EPROTONOSUPPORT)) {
			fprintf(stderr, "kernel_ioctl: ioctl = %d, errno %d\n", ret, errno);
			abort();
		}
	}
	close_uverbs(fd);
	return 0;
}
