/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_diags.c - infiniband-diags, unmodified, against the MAD agents of
 * the emulated subnet: the test process is a host with traffic on its
 * port, and each tool runs as another host (a child under the same
 * LD_PRELOAD) that queries it by LID: perfquery sees the counts sysfs
 * shows, sminfo finds the master SM on the switch, smpquery and ibaddr
 * see what ibv_query_port() and sysfs say, and a LID nobody has times out.
 */
#include "dev_test.h"

/* Run a tool, bounded; its stdout and stderr into out; its exit status. */
#define RUN(...)	et_run(NULL, (char *[]){ __VA_ARGS__, NULL }, \
			       ET_RUN_TOOL | ET_RUN_STDERR, out, sizeof(out), 60)

static char out[1 << 16];

/* The number after "Field:....." in a tool's output. */
static unsigned long long field(const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s:", name);
	p = strstr(out, key);
	cr_assert(p, "no %s in:\n%s", name, out);
	p += strlen(key);
	while (*p == '.')
		p++;
	return strtoull(p, NULL, 0);
}

/* n RDMA writes of len bytes from qp 0 to qp 1, over the loopback. */
static void writes(struct dt *t, int n, uint32_t len)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)t->buf[0], len, t->mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)t->buf[1], t->mr[1]->rkey },
		};
		struct ibv_wc wc = { 0 };

		dt_post(t->qp[0], &wr);
		wc = dt_poll1(t->cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	}
}

TestSuite(diags, .timeout = 300);

Test(diags, perfquery_counts_the_traffic_sysfs_shows)
{
	unsigned long long xd0, xp0, xd, rd, xp, rp;
	char lid[16];
	struct dt t;

	dt_setup(&t);
	snprintf(lid, sizeof(lid), "%u", t.lid);
	xd0 = dt_port_counter("port_xmit_data");
	xp0 = dt_port_counter("port_xmit_packets");
	writes(&t, 20, 4096);
	xd = dt_port_counter("port_xmit_data");
	rd = dt_port_counter("port_rcv_data");
	xp = dt_port_counter("port_xmit_packets");
	rp = dt_port_counter("port_rcv_packets");
	/* at least the payload (in 4-byte words) and one packet per write */
	cr_expect_geq(xd - xd0, 20 * 4096 / 4, "%llu words", xd - xd0);
	cr_expect_geq(xp - xp0, 20);
	/* on the loopback the port receives exactly what it sends */
	cr_expect_eq(xd, rd);
	cr_expect_eq(xp, rp);

	/*
	 * another host asks this one's PMA: the same 64-bit counts (or, should
	 * a late ACK move them, between sysfs before and after)
	 */
	cr_assert_eq(RUN("perfquery", "-x", lid, "1"), 0, "%s", out);
	cr_expect_geq(field("PortXmitData"), xd, "%s", out);
	cr_expect_leq(field("PortXmitData"), dt_port_counter("port_xmit_data"), "%s", out);
	cr_expect_geq(field("PortRcvData"), rd, "%s", out);
	cr_expect_leq(field("PortRcvData"), dt_port_counter("port_rcv_data"), "%s", out);
	cr_expect_geq(field("PortXmitPkts"), xp, "%s", out);
	cr_expect_leq(field("PortXmitPkts"), dt_port_counter("port_xmit_packets"), "%s", out);
	cr_expect_eq(field("PortUnicastXmitPkts"), field("PortXmitPkts"), "%s", out);
	cr_expect_eq(field("PortMulticastXmitPkts"), 0, "%s", out);
	cr_assert_eq(RUN("perfquery", lid, "1"), 0, "%s", out);
	cr_expect(strstr(out, "# Port counters: Lid"), "%s", out);
	cr_expect_geq(field("PortXmitPkts"), xp, "%s", out);
	/* perfquery -R: a Set of PortCounters clears them, here too */
	cr_assert_eq(RUN("perfquery", "-R", lid, "1"), 0, "%s", out);
	cr_expect_eq(dt_port_counter("port_xmit_data"), 0);
	cr_expect_eq(dt_port_counter("port_rcv_packets"), 0);
	dt_teardown(&t);
}

Test(diags, sminfo_smpquery_ibaddr)
{
	struct ibv_port_attr pa;
	struct ibv_context *ctx = et_open();
	char lid[16], guid[32];

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	snprintf(lid, sizeof(lid), "%u", pa.lid);
	snprintf(guid, sizeof(guid), "0x%016llx",
		 (unsigned long long)be64toh(ibv_get_device_guid(ctx->device)));

	cr_assert_eq(RUN("sminfo"), 0, "%s", out);
	cr_expect(strstr(out, "sm lid 1 "), "%s", out);
	cr_expect(strstr(out, "SMINFO_MASTER"), "%s", out);

	cr_assert_eq(RUN("smpquery", "nodeinfo", lid), 0, "%s", out);
	cr_expect(strstr(out, "NodeType:........................Channel Adapter"), "%s", out);
	cr_expect(strstr(out, guid), "%s has no %s", out, guid);
	cr_expect_eq(field("DevId"), 0x101b, "%s", out);

	cr_assert_eq(RUN("smpquery", "portinfo", lid, "1"), 0, "%s", out);
	cr_expect_eq(field("Lid"), pa.lid, "%s", out);
	cr_expect_eq(field("SMLid"), pa.sm_lid, "%s", out);
	cr_expect_eq(field("CapMask"), pa.port_cap_flags, "%s", out);
	cr_expect(strstr(out, "LinkState:.......................Active"), "%s", out);
	cr_expect(strstr(out, "LinkWidthActive:.................4X"), "%s", out);
	/* active_speed 64 is HDR: 53.125 Gbps a lane */
	cr_expect_eq(pa.active_speed, 64);
	cr_expect(strstr(out, "LinkSpeedExtActive:..............53.125 Gbps"), "%s", out);

	cr_assert_eq(RUN("smpquery", "nodedesc", lid), 0, "%s", out);
	cr_expect(strstr(out, "rfemu host "), "%s", out);

	cr_assert_eq(RUN("ibaddr", lid), 0, "%s", out);
	cr_expect(strstr(out, "LID start"), "%s", out);

	/* one hop of directed route: the switch every port is cabled to */
	cr_assert_eq(RUN("smpquery", "-D", "nodeinfo", "0,1"), 0, "%s", out);
	cr_expect(strstr(out, "NodeType:........................Switch"), "%s", out);

	/* ibportstate queries, including Mellanox's extended PortInfo */
	cr_assert_eq(RUN("ibportstate", lid, "1"), 0, "%s", out);
	cr_expect(strstr(out, "LinkState:.......................Active"), "%s", out);
	cr_expect_eq(ibv_close_device(ctx), 0);
}

Test(diags, a_lid_nobody_has_times_out)
{
	/*
	 * LID 0x1fff: host 1023's last port, which no process holds here.
	 * libibmad's poll() and the MAD's ETIMEDOUT race (as on a kernel):
	 * either way the query fails, in words that differ.
	 */
	cr_expect_neq(RUN("smpquery", "-t", "100", "nodeinfo", "8191"), 0, "%s", out);
	cr_expect(strstr(out, "failed"), "%s", out);
	cr_expect_neq(RUN("perfquery", "-t", "100", "8191", "1"), 0, "%s", out);
}
