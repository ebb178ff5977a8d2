/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_bench_instr.c - rdmafast's instruction counts stay within the
 * limits rfbench holds them to (issue 19: post, batch and poll limits;
 * issue 33: a tag added or removed, a matched message's completion).
 *
 * The counts are what make bench measures: rfbench --instr under
 * callgrind, then rfbench --callgrind reading the dumps, here with
 * --require-instr, which exits 3 when a limit is missed. Instructions do
 * not depend on the load of the machine (the times, which do, are not
 * checked). The limits are for x86-64 code: elsewhere the test skips.
 * The test runs under build/rfemu, so both children inherit the emulator.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#ifndef RFBENCH_BIN
#define RFBENCH_BIN "build/bench/rfbench"
#endif

/* Run argv with the device model off; its exit status (128 + signal). */
static int run(char *const argv[])
{
	pid_t pid = fork();
	int st = 0;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_DEVICE", "off", 1);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		alarm(400);	/* valgrind on a shared, loaded machine: generous */
		execvp(argv[0], argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

Test(bench_instr, rdmafast_within_the_instruction_limits, .timeout = 900)
{
#if !defined(__x86_64__)
	cr_skip_test("the instruction limits are for x86-64");
#else
	char dir[] = "/tmp/rfbench-instr-XXXXXX", out[64], opt[96], cmd[160];
	char *cg[] = { "valgrind", "-q", "--tool=callgrind", "--collect-atstart=no", opt,
		       RFBENCH_BIN, "--instr", NULL };
	char *check[] = { RFBENCH_BIN, "--reps", "5", "--callgrind", out, "--require-instr",
			  NULL };

	cr_assert_not_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/cg.out", dir);
	snprintf(opt, sizeof(opt), "--callgrind-out-file=%s", out);
	cr_assert_eq(run(cg), 0, "rfbench --instr under callgrind failed");
	cr_expect_eq(run(check), 0, "rfbench: an instruction limit is missed (make bench shows which)");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
#endif
}
