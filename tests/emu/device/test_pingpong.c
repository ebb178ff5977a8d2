/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_pingpong.c - Debian's unmodified ibverbs-utils examples talk to
 * each other as two separately started programs, i.e. two emulated hosts
 * joined by the device models' wire.  The test runs under build/rfemu, so
 * both children inherit LD_PRELOAD; the TCP exchange is on 127.0.0.1.
 */
#include <signal.h>

#include "dev_test.h"

static int port_base(void)
{
	/*
	 * distinct ports per run, so parallel runs do not collide, and below
	 * Linux's ephemeral ports (32768 up), which clients' connects take
	 */
	return 20000 + (int)(getpid() % 768) * 16;
}

static pid_t spawn(char *const argv[], unsigned secs)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			close(null);
		}
		alarm(secs);	/* bounded: SIGALRM kills a hung child */
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st = 0;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* server: PROG -p PORT ARGS...; client: the same plus 127.0.0.1 */
static void pingpong(const char *prog, int port_off, const char *const args[])
{
	char port[16], *sv[24], *cv[24];
	int n = 0, srv, cli = -1;
	pid_t s, c;

	snprintf(port, sizeof(port), "%d", port_base() + port_off);
	sv[n++] = (char *)prog;
	sv[n++] = (char *)"-p";
	sv[n++] = port;
	for (int i = 0; args[i]; i++)
		sv[n++] = (char *)args[i];
	sv[n] = NULL;
	memcpy(cv, sv, sizeof(sv));
	cv[n++] = (char *)"127.0.0.1";
	cv[n] = NULL;

	s = spawn(sv, 60);
	et_wait_listening(port_base() + port_off, s);
	/* a refused connection is still retried a few times */
	for (int attempt = 0; attempt < 20; attempt++) {
		if (attempt)
			usleep(100000);
		c = spawn(cv, 60);
		cli = wait_status(c);
		if (cli != 1 || attempt == 19)
			break;
	}
	srv = wait_status(s);
	cr_assert_eq(cli, 0, "%s client exited %d", prog, cli);
	cr_assert_eq(srv, 0, "%s server exited %d", prog, srv);
}

TestSuite(dev_pingpong, .timeout = 300);

Test(dev_pingpong, rc)
{
	pingpong("ibv_rc_pingpong", 0, (const char *const[]){ "-g", "0", "-n", "100", NULL });
	pingpong("ibv_rc_pingpong", 1, (const char *const[]){ "-g", "0", "-n", "50", "-s", "65536", NULL });
	pingpong("ibv_rc_pingpong", 2, (const char *const[]){ "-g", "0", "-n", "100", "-s", "16", "-e", NULL });
}

Test(dev_pingpong, uc)
{
	pingpong("ibv_uc_pingpong", 3, (const char *const[]){ "-g", "0", "-n", "100", NULL });
	pingpong("ibv_uc_pingpong", 4, (const char *const[]){ "-g", "0", "-n", "50", "-s", "1000", "-e", NULL });
}

Test(dev_pingpong, ud)
{
	pingpong("ibv_ud_pingpong", 5, (const char *const[]){ "-g", "0", "-n", "100", "-s", "1024", NULL });
	pingpong("ibv_ud_pingpong", 6, (const char *const[]){ "-g", "0", "-n", "50", "-s", "2048", "-e", NULL });
}

Test(dev_pingpong, srq)
{
	pingpong("ibv_srq_pingpong", 7, (const char *const[]){ "-g", "0", "-n", "100", NULL });
	pingpong("ibv_srq_pingpong", 8, (const char *const[]){ "-g", "0", "-n", "50", "-q", "4", "-s", "8192", "-e", NULL });
}

Test(dev_pingpong, xsrq)
{
	pingpong("ibv_xsrq_pingpong", 9, (const char *const[]){ "-n", "50", NULL });
	pingpong("ibv_xsrq_pingpong", 10, (const char *const[]){ "-n", "20", "-s", "4096", "-e", NULL });
}

/* on-demand paging: an ODP MR, an implicit one, a prefetched one (kernel/odp.c) */
Test(dev_pingpong, rc_odp)
{
	pingpong("ibv_rc_pingpong", 11, (const char *const[]){ "-g", "0", "-n", "100", "-o", NULL });
	pingpong("ibv_rc_pingpong", 12, (const char *const[]){ "-g", "0", "-n", "100", "-O", NULL });
	pingpong("ibv_rc_pingpong", 13, (const char *const[]){ "-g", "0", "-n", "100", "-o", "-P",
							      NULL });
}
