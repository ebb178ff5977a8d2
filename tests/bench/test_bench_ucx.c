/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_bench_ucx.c - rfbench measures UCX's rc_mlx5 beside the others on
 * the emulated HCA, and reads "-" for it when UCX cannot open.
 *
 * rfbench runs as make bench runs it (device model off, the harness
 * writing the CQEs), with the fewest repetitions and no callgrind, and
 * leaves its results in JSON. rfbench itself exits 2 when a post wrote no
 * WQE where the harness looked or a poll left a CQE behind, so a measured
 * row also proves UCX's WQEs were found and its completions retired. The
 * test runs under build/rfemu, so the child inherits the emulator.
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

static char json[1 << 16];

/* Run rfbench with one extra environment variable; its JSON into json. */
static int run_bench(const char *env_name, const char *env_value)
{
	char path[] = "/tmp/rfbench-test-XXXXXX";
	int fd = mkstemp(path), st = 0;
	pid_t pid;
	FILE *f;
	size_t n;

	cr_assert_geq(fd, 0);
	close(fd);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_DEVICE", "off", 1);
		if (env_name)
			setenv(env_name, env_value, 1);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		alarm(240);	/* a shared, loaded machine: generous */
		execl(RFBENCH_BIN, RFBENCH_BIN, "--reps", "5", "--json", path, (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	f = fopen(path, "r");
	n = f ? fread(json, 1, sizeof(json) - 1, f) : 0;
	json[n] = 0;
	if (f)
		fclose(f);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int has_row(const char *op, const char *impl)
{
	char want[128];

	snprintf(want, sizeof(want), "{\"op\": \"%s\", \"impl\": \"%s\", ", op, impl);
	return strstr(json, want) != NULL;
}

TestSuite(bench_ucx, .timeout = 600);

Test(bench_ucx, measured_where_uct_has_the_call)
{
	static const char *const mapped[] = {
		"post_write_sge64", "post_write_inline8", "post_send_inline32", "poll_1",
	};
	static const char *const unmapped[] = {
		"post_batch16_write", "poll_16", "post_dc_write_sge64", "poll_16_zip",
	};
	unsigned i;

	cr_assert_eq(run_bench(NULL, NULL), 0, "%s", json);
	for (i = 0; i < 4; i++) {
		cr_expect(has_row(mapped[i], "ucx_rc_mlx5"), "%s: %s", mapped[i], json);
		cr_expect(has_row(mapped[i], "rdmafast"), "%s: %s", mapped[i], json);
	}
	for (i = 0; i < 4; i++)
		cr_expect(!has_row(unmapped[i], "ucx_rc_mlx5"), "%s: %s", unmapped[i], json);
}

/* A configuration UCX refuses: UCX is out, everyone else still measured. */
Test(bench_ucx, a_ucx_that_fails_to_open_reads_dash)
{
	cr_assert_eq(run_bench("UCX_RC_MLX5_PATH_MTU", "not-an-mtu"), 0, "%s", json);
	cr_expect(!strstr(json, "ucx_rc_mlx5"), "%s", json);
	cr_expect(has_row("post_write_sge64", "libmlx5"), "%s", json);
	cr_expect(has_row("poll_1", "rdmafast"), "%s", json);
}
