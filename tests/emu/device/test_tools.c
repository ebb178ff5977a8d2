/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_tools.c - the tools a ConnectX user has from Debian, unmodified, on
 * the emulated HCA: infiniband-diags' ibstat and ibstatus (libibumad lists
 * /sys/class/infiniband with opendir; ibstatus is a shell script that cds
 * there and globs), ibv_devinfo -v, UCX's ucx_info -d (which takes the mlx5
 * transports only when the PCI function says vendor 0x15b3 and a ConnectX
 * device id), iproute2's rdma (RDMA netlink), and perftest and
 * ucx_perftest between two processes.  The
 * test runs under build/rfemu, so every child inherits LD_PRELOAD.
 */
#include "emu_test.h"

/* Run a tool, bounded; its stdout into out; its exit status. */
#define RUN(out, ...)	et_run(NULL, (char *[]){ __VA_ARGS__, NULL }, ET_RUN_TOOL, \
				       out, sizeof(out), 60)

static char out[1 << 16];

TestSuite(tools, .timeout = 300);

Test(tools, ibstat_finds_the_ca)
{
	cr_assert_eq(RUN(out, "ibstat", "-l"), 0, "%s", out);
	cr_expect_str_eq(out, "mlx5_0\n");
	cr_assert_eq(RUN(out, "ibstat"), 0, "%s", out);
	cr_expect(strstr(out, "CA 'mlx5_0'"), "%s", out);
	cr_expect(strstr(out, "CA type: MT4123"), "%s", out);
	cr_expect(strstr(out, "State: Active"), "%s", out);
	cr_expect(strstr(out, "Physical state: LinkUp"), "%s", out);
	cr_expect(strstr(out, "Rate: 200"), "%s", out);
	cr_expect(strstr(out, "Link layer: InfiniBand"), "%s", out);
	/* a CA that is not there */
	cr_expect_neq(RUN(out, "ibstat", "mlx5_7"), 0);
}

Test(tools, ibstatus_reads_the_ports)
{
	cr_assert_eq(RUN(out, "ibstatus"), 0, "%s", out);
	cr_expect(strstr(out, "Infiniband device 'mlx5_0' port 1 status:"), "%s", out);
	cr_expect(strstr(out, "state:\t\t 4: ACTIVE"), "%s", out);
	cr_expect(strstr(out, "rate:\t\t 200 Gb/sec (4X HDR)"), "%s", out);
	cr_expect(strstr(out, "default gid:\t fe80:0000:0000:0000:"), "%s", out);
}

Test(tools, ibv_devinfo_verbose)
{
	cr_assert_eq(RUN(out, "ibv_devinfo", "-v"), 0, "%s", out);
	cr_expect(strstr(out, "hca_id:\tmlx5_0"), "%s", out);
	cr_expect(strstr(out, "vendor_part_id:\t\t\t4123"), "%s", out);
	cr_expect(strstr(out, "state:\t\t\tPORT_ACTIVE (4)"), "%s", out);
}

/* iproute2's rdma tool, over RDMA netlink (kernel/nldev.c) */
Test(tools, rdma_dev_link_res_qp)
{
	cr_assert_eq(RUN(out, "rdma", "dev"), 0, "%s", out);
	cr_expect(strstr(out, "0: mlx5_0: node_type ca fw "), "%s", out);
	cr_expect(strstr(out, " node_guid 0002:c903:"), "%s", out);
	cr_assert_eq(RUN(out, "rdma", "link"), 0, "%s", out);
	cr_expect(strstr(out, "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid "), "%s", out);
	cr_expect(strstr(out, " state ACTIVE physical_state LINK_UP"), "%s", out);
	cr_assert_eq(RUN(out, "rdma", "res", "show", "qp"), 0, "%s", out);
	cr_expect(strstr(out, "link mlx5_0/1 lqpn 0 type SMI state RTS sq-psn 0 comm [ib_core]"),
		  "%s", out);
	cr_expect(strstr(out, "link mlx5_0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core]"),
		  "%s", out);
	cr_assert_eq(RUN(out, "rdma", "system"), 0, "%s", out);
	cr_expect(strstr(out, "copy-on-fork on"), "%s", out);
	cr_expect_neq(RUN(out, "rdma", "dev", "show", "mlx5_7"), 0, "a device that is not there");
}

Test(tools, ucx_takes_the_mlx5_transports)
{
	cr_assert_eq(RUN(out, "ucx_info", "-d"), 0, "%s", out);
	cr_expect(strstr(out, "# Memory domain: mlx5_0"), "%s", out);
	/* UCX's mlx5 transports: chosen by the PCI ids, not the verbs ones */
	cr_expect(strstr(out, "Transport: rc_mlx5\n#         Device: mlx5_0:1"), "%s", out);
	cr_expect(strstr(out, "Transport: ud_mlx5\n#         Device: mlx5_0:1"), "%s", out);
	cr_expect(strstr(out, "Transport: dc_mlx5\n#         Device: mlx5_0:1"), "%s", out);
	/* its topology knows the device: it found the PCI function */
	cr_expect(strstr(out, "Device: mlx5_0:1\n#           Type: network\n"
			 "#  System device: mlx5_0 (0)"), "%s", out);
}

static int port_base(void)
{
	/* distinct ports per run, so parallel runs do not collide */
	return 22000 + (int)(getpid() % 1500) * 8;
}

/* server: PROG ARGS -p PORT; client: the same and the server's address */
static void two_hosts(const char *prog, int off, const char *const args[])
{
	char port[16], *sv[24], *cv[24], cout[4096];
	int n = 0, cli = -1, st = 0;
	bool reaped = false;
	pid_t s;

	snprintf(port, sizeof(port), "%d", port_base() + off);
	sv[n++] = (char *)prog;
	for (int i = 0; args[i]; i++)
		sv[n++] = (char *)args[i];
	sv[n++] = (char *)"-p";
	sv[n++] = port;
	sv[n] = NULL;
	memcpy(cv, sv, sizeof(sv));
	cv[n++] = (char *)"127.0.0.1";
	cv[n] = NULL;

	s = fork();
	cr_assert_geq(s, 0);
	if (s == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		alarm(120);
		et_tool_env();
		execvp(sv[0], sv);
		_exit(127);
	}
	et_wait_listening(port_base() + off, s);
	for (int attempt = 0; attempt < 30; attempt++) {
		if (attempt)
			usleep(200000);
		cli = et_run(NULL, cv, ET_RUN_TOOL, cout, sizeof(cout), 120);
		if (cli == 0 || (reaped = waitpid(s, &st, WNOHANG) == s))
			break;
	}
	if (!reaped)
		cr_assert_eq(waitpid(s, &st, 0), s);
	int srv = et_status(st);

	cr_expect_eq(cli, 0, "%s client exited %d: %s", prog, cli, cout);
	cr_expect_eq(srv, 0, "%s server exited %d", prog, srv);
}

Test(tools, perftest)
{
	two_hosts("ib_write_lat", 0, (const char *[]){ "-d", "mlx5_0", "-n", "200", NULL });
	two_hosts("ib_write_bw", 1, (const char *[]){ "-d", "mlx5_0", "-n", "200", NULL });
	two_hosts("ib_read_bw", 2, (const char *[]){ "-d", "mlx5_0", "-n", "200", NULL });
}

/*
 * UCX's hardware tag matching (UCX_RC_MLX5_TM_ENABLE=y): rc_mlx5 opens a
 * TM SRQ only when the device reports IBV_TM_CAP_RC (ibv_query_device_ex()),
 * and UCP then puts its tag lane there ("tag_offload"; without the
 * offload, no such lane). Then UCP's tag_lat by rendezvous (64 KiB: the
 * device READs into the tagged buffer) and eagerly (4 KiB, matched)
 * between two processes.
 */
Test(tools, ucx_tag_offload)
{
	cr_assert_eq(RUN(out, "env", "UCX_RC_MLX5_TM_ENABLE=y", "UCX_TLS=rc_x,self",
			 "UCX_NET_DEVICES=mlx5_0:1", "ucx_info", "-e", "-u", "t", "-D", "net"),
		     0, "%s", out);
	cr_assert(strstr(out, "rc_mlx5/mlx5_0:1") && strstr(out, "tag_offload"), "%s", out);
	two_hosts("env", 6, (const char *[]){ "UCX_RC_MLX5_TM_ENABLE=y", "UCX_TLS=rc_x,self",
			 "UCX_NET_DEVICES=mlx5_0:1", "ucx_perftest", "-t", "tag_lat",
			 "-s", "65536", "-n", "200", NULL });
	two_hosts("env", 7, (const char *[]){ "UCX_RC_MLX5_TM_ENABLE=y", "UCX_TLS=rc_x,self",
			 "UCX_NET_DEVICES=mlx5_0:1", "ucx_perftest", "-t", "tag_bw",
			 "-s", "4096", "-n", "1000", NULL });
}

Test(tools, ucx_perftest_on_mlx5)
{
	two_hosts("ucx_perftest", 3, (const char *[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5",
			 "-t", "am_lat", "-n", "1000", NULL });
	two_hosts("ucx_perftest", 4, (const char *[]){ "-d", "mlx5_0:1", "-x", "ud_mlx5",
			 "-t", "am_lat", "-n", "1000", NULL });
	two_hosts("ucx_perftest", 5, (const char *[]){ "-d", "mlx5_0:1", "-x", "rc_mlx5",
			 "-t", "put_bw", "-n", "1000", NULL });
}
