/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/on_roce.h - the re-run of a Criterion test binary on RoCE, for
 * the emulated-HCA tests (tests/emu/emu_test.h) and the end-to-end ones
 * (tests/e2e/e2e.h) alike.
 */
#ifndef RDMAFAST_TESTS_ON_ROCE_H
#define RDMAFAST_TESTS_ON_ROCE_H

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

/*
 * Run this binary again with the emulated port on RoCE v2
 * (RFEMU_LINK_LAYER=eth), as a runner of its own (not one of this
 * runner's workers), for the tests filter names, and assert that they
 * passed.
 */
static inline void test_rerun_on_roce(const char *filter)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_LINK_LAYER", "eth", 1);
		unsetenv("BXFI_MAP");
		execl("/proc/self/exe", "on-roce", "--filter", filter, "--jobs", "1", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s on RoCE: status %#x",
		  filter, status);
}

#endif /* RDMAFAST_TESTS_ON_ROCE_H */
