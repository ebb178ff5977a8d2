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
 * also an ioctl() request on the fd, which must answer ENOTTY unless it is
 * RDMA_VERBS_IOCTL (fuzzed by kernel_ioctl.c).
 *
 * KERNEL_CMD_TRACE=1 prints each command's outcome, to read a reproducer.
 */
#include <stdio.h>
#include <sys/ioctl.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "kernel_arena.h"

#define MAX_CMDS	64
#define MAX_CMD_LEN	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t cmd[MAX_CMD_LEN + 8];
	static int trace = -1;
	uint64_t req = 0;
	size_t pos = 0, len;
	int fd;

	if (trace < 0)
		trace = getenv("KERNEL_CMD_TRACE") != NULL;

	arena_reset();
	fd = open_uverbs("kernel_cmd");
	memcpy(&req, data, size < 8 ? size : 8);
	/* RDMA_VERBS_IOCTL is kernel_ioctl.c's */
	if (req != RDMA_VERBS_IOCTL &&
	    (ioctl(fd, (unsigned long)req, arena) != -1 || errno != ENOTTY))
		abort();

	for (int n = 0; n < MAX_CMDS &&
	     next_record(data, size, &pos, 0xffff, cmd, MAX_CMD_LEN, &len) >= 0; n++) {
		ssize_t ret;

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
	close_uverbs(fd);
	return 0;
}
