/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The GID table: on InfiniBand the port GID; on RoCE each address as a
 * RoCE v1 and a RoCE v2 entry (link-local v1, v2, IPv4-mapped v1, v2, as a
 * ConnectX port lists them), the same through ibv_query_gid_ex(),
 * ibv_query_gid_table() and sysfs (gid_attrs of empty entries failing with
 * EINVAL, as the kernel's), a RoCE GID's netdev (the PCI function's: the
 * machine's loopback interface), and a UD packet from a v1 entry carrying
 * a GRH where one from the v2 IPv4 entry carries an IPv4 header.  Suite
 * gid_check runs in this process (InfiniBand under make emu-test) and, by
 * suite gid, again in a fresh process on RoCE.
 */
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/wait.h>

#include "emu_test.h"

#define PORT1 "/sys/class/infiniband/mlx5_0/ports/1"

static const char *slurp(const char *path)
{
	static char buf[4][256];
	static unsigned next;
	char *b = buf[next++ % 4];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(buf[0]) - 1);

	if (fd >= 0)
		close(fd);
	b[n < 0 ? 0 : n] = 0;
	return b;
}

static bool roce(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	return pa.link_layer == IBV_LINK_LAYER_ETHERNET;
}

/* The table through the verbs and sysfs: the used entries and their types. */
Test(gid_check, table)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_context *ctx = et_open();
	bool eth = roce(ctx);
	unsigned want = eth ? 4 : 1;
	struct ibv_gid_entry tab[8], e;
	char path[128];
	ssize_t n;

	n = ibv_query_gid_table(ctx, tab, 8, 0);
	cr_assert_eq(n, (ssize_t)want, "%zd entries", n);
	for (unsigned i = 0; i < want; i++) {
		enum ibv_gid_type type = !eth ? IBV_GID_TYPE_IB :
					 i % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;

		cr_expect_eq(tab[i].gid_index, i);
		cr_expect_eq(tab[i].port_num, 1);
		cr_expect_eq(tab[i].gid_type, type, "entry %u type %u", i, tab[i].gid_type);
		cr_assert_eq(ibv_query_gid_ex(ctx, 1, i, &e, 0), 0);
		cr_expect_eq(memcmp(&e, &tab[i], sizeof(e)), 0, "entry %u", i);
		snprintf(path, sizeof(path), PORT1 "/gid_attrs/types/%u", i);
		cr_expect_str_eq(slurp(path), type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2\n" :
					      "IB/RoCE v1\n");
		/* a RoCE GID's netdev: lo; an InfiniBand GID has none */
		cr_expect_eq(tab[i].ndev_ifindex, eth ? if_nametoindex("lo") : 0, "entry %u", i);
		if (eth) {
			snprintf(path, sizeof(path), PORT1 "/gid_attrs/ndevs/%u", i);
			cr_expect_str_eq(slurp(path), "lo\n");
		}
	}
	cr_expect_eq(be64toh(tab[0].gid.global.subnet_prefix), 0xfe80000000000000ULL);
	if (eth) {
		/* each address twice: v1 then v2 */
		cr_expect_eq(memcmp(&tab[0].gid, &tab[1].gid, 16), 0);
		cr_expect_eq(memcmp(&tab[2].gid, &tab[3].gid, 16), 0);
		cr_expect_eq(memcmp(tab[3].gid.raw, v4mapped, 12), 0);
		cr_expect_eq(tab[3].gid.raw[12], 10);
	}
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* read() of path: its errno, or 0 */
static int read_errno(const char *path)
{
	char b[64];
	int fd = open(path, O_RDONLY);
	int ret = 0;

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	if (read(fd, b, sizeof(b)) < 0)
		ret = errno;
	close(fd);
	return ret;
}

/*
 * gid_attrs/types/N and ndevs/N exist for every index, as the kernel's
 * do; a read fails with EINVAL where the entry is empty, and for every
 * ndevs/N of an InfiniBand port (no netdev), as _show_port_gid_attr()
 * and print_ndev() answer
 */
Test(gid_check, gid_attrs_of_every_index)
{
	struct ibv_context *ctx = et_open();
	struct ibv_port_attr pa;
	bool eth = roce(ctx);
	unsigned used = eth ? 4 : 1;
	char path[128], line[64];
	FILE *f;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	for (unsigned i = 0; i < (unsigned)pa.gid_tbl_len; i++) {
		snprintf(path, sizeof(path), PORT1 "/gid_attrs/types/%u", i);
		cr_expect_eq(read_errno(path), i < used ? 0 : EINVAL, "%s", path);
		snprintf(path, sizeof(path), PORT1 "/gid_attrs/ndevs/%u", i);
		cr_expect_eq(read_errno(path), i < used && eth ? 0 : EINVAL, "%s", path);
	}
	snprintf(path, sizeof(path), PORT1 "/gid_attrs/types/%u", pa.gid_tbl_len);
	cr_expect_neq(access(path, F_OK), 0, "none past the table");
	/* through stdio too */
	f = fopen(PORT1 "/gid_attrs/types/7", "r");
	cr_assert(f);
	errno = 0;
	cr_expect_null(fgets(line, sizeof(line), f));
	cr_expect_eq(errno, EINVAL);
	fclose(f);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * A UD SEND to this QP from source GID index sgid: the 40 bytes the
 * receive buffer starts with.
 */
static void ud_self(struct ibv_context *ctx, uint8_t sgid, uint8_t hdr[40])
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	static uint8_t buf[2][128];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = sgid, .hop_limit = 64 } };
	struct ibv_sge rs = { (uintptr_t)buf[0], 128, mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf[1], 16, mr->lkey };
	struct ibv_recv_wr rw = { .sg_list = &rs, .num_sge = 1 }, *brw;
	struct ibv_send_wr sw = { .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bsw;
	struct ibv_wc wc[2];
	struct ibv_ah *ah;
	int got = 0;

	cr_assert(pd && cq && mr && qp);
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_QKEY), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, sgid, &aa.grh.dgid), 0);
	ah = ibv_create_ah(pd, &aa);
	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));
	cr_assert_eq(ibv_post_recv(qp, &rw, &brw), 0);
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = qp->qp_num;
	sw.wr.ud.remote_qkey = 0x11;
	cr_assert_eq(ibv_post_send(qp, &sw, &bsw), 0);
	for (int spin = 0; got < 2 && spin < 5000000; spin++) {
		int n = ibv_poll_cq(cq, 2 - got, wc + got);

		cr_assert_geq(n, 0);
		got += n;
	}
	cr_assert_eq(got, 2);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[1].status, IBV_WC_SUCCESS);
	memcpy(hdr, buf[0], 40);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

/* RoCE v2 over IPv4 has an IPv4 header; RoCE v1 a GRH (IBA next header 0x1B) */
Test(gid_check, roce_v1_has_a_grh)
{
	struct ibv_context *ctx = et_open();
	uint8_t h[40];

	if (!roce(ctx)) {
		cr_assert_eq(ibv_close_device(ctx), 0);
		cr_skip_test("InfiniBand: run by gid::on_roce");
	}
	ud_self(ctx, 3, h);
	cr_expect_eq(h[20], 0x45, "IPv4 header: %#x", h[20]);
	cr_expect_eq(h[29], 17, "UDP");
	ud_self(ctx, 2, h);
	cr_expect_eq(h[0] >> 4, 6, "GRH: IP version 6");
	cr_expect_eq(h[6], 0x1b, "next header %#x", h[6]);
	ud_self(ctx, 1, h);
	cr_expect_eq(h[0] >> 4, 6, "IPv6 header");
	cr_expect_eq(h[6], 17, "UDP");
	ud_self(ctx, 0, h);
	cr_expect_eq(h[6], 0x1b, "next header %#x", h[6]);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * A source GID index inside the table but empty: rdma_get_gid_attr()'s
 * ENODATA (since 5.10), where one past the table is EINVAL.  Moving a QP
 * to RTR checks it on either link layer; an AH reaches the kernel on
 * RoCE only (libmlx5 makes an InfiniBand AH itself).
 */
Test(gid_check, an_empty_source_gid_is_enodata)
{
	struct ibv_context *ctx = et_open();
	bool eth = roce(ctx);
	uint8_t empty = eth ? 4 : 1;
	struct ibv_port_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = empty, .hop_limit = 64 } };
	const int rtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	struct ibv_ah *ah;

	cr_assert(pd && cq && qp);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &aa.grh.dgid), 0);
	aa.dlid = pa.lid;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	a.qp_state = IBV_QPS_RTR;
	a.ah_attr = aa;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	cr_expect_eq(ibv_modify_qp(qp, &a, rtr), ENODATA, "RTR from an empty entry");
	a.ah_attr.grh.sgid_index = (uint8_t)pa.gid_tbl_len;
	cr_expect_eq(ibv_modify_qp(qp, &a, rtr), EINVAL, "RTR from past the table");
	a.ah_attr.grh.sgid_index = 0;
	cr_expect_eq(ibv_modify_qp(qp, &a, rtr), 0, "RTR from entry 0");

	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	if (eth) {
		cr_expect_null(ah);
		cr_expect_eq(errno, ENODATA, "create_ah: %s", strerror(errno));
	} else {
		cr_expect(ah, "InfiniBand: no kernel call to refuse it");
	}
	if (ah)
		cr_assert_eq(ibv_destroy_ah(ah), 0);
	if (eth) {
		errno = 0;
		aa.grh.sgid_index = (uint8_t)pa.gid_tbl_len;
		cr_expect_null(ibv_create_ah(pd, &aa));
		cr_expect_eq(errno, EINVAL, "create_ah past the table: %s", strerror(errno));
	}
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * The PCI function's netdev, as rdma-core's tests find a port's address
 * (tests/base.py: `ls device/net/`, then `ip addr show` of the first
 * name): the machine's loopback interface, the real one behind the link.
 */
Test(gid_check, the_netdev_is_loopback)
{
	DIR *d = opendir("/sys/class/infiniband/mlx5_0/device/net");
	struct dirent *e;
	unsigned n = 0;

	cr_assert(d, "device/net: %s", strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			cr_expect_str_eq(e->d_name, "lo");
			n++;
		}
	closedir(d);
	cr_expect_eq(n, 1);
	cr_expect_str_eq(slurp("/sys/class/infiniband/mlx5_0/device/net/lo/ifindex"),
			 slurp("/sys/class/net/lo/ifindex"));
}

/* This binary again on RoCE, running suite gid_check only. */
Test(gid, on_roce, .timeout = 120)
{
	test_rerun_on_roce("gid_check/*");
}
