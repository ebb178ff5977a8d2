/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The device profiles (RFEMU_PART_ID): every value QUERY_DEVICE and
 * QUERY_PORT report, against what the kernel's mlx5 driver derives from the
 * firmware caps of that card (drivers/infiniband/hw/mlx5/main.c:
 * mlx5_ib_query_device(), mlx5_query_hca_port(), mlx5_query_port_roce()),
 * and the limits enforced where they are advertised.
 *
 * The caps below are written here independently of emu/: a profile that
 * advertises a value its card does not, or a derivation that differs from
 * the kernel's, fails.  suite profile_check runs in this process as
 * launched (no RFEMU_PART_ID: the default ConnectX-6 on InfiniBand) and,
 * by suite profile, again in a fresh process for each card and link layer.
 */
#include <endian.h>
#include <limits.h>

#include "emu_test.h"

/* What the firmware of each card reports (QUERY_HCA_CAP), as in profile.c's sources. */
struct card {
	uint16_t	part;
	const char	*fw_ver, *board_id;
	bool		eth_only;
	unsigned	log_max_qp, log_max_pd;
	uint32_t	khz;
	uint16_t	ib_flags2;		/* PortInfo:CapabilityMask2 */
	uint8_t		ib_speed, eth_speed;	/* IB_SPEED_* */
	const char	*ib_rate, *eth_rate;
	/* DCI streams: log_max_dci_stream_channels, log_max_dci_errored_streams */
	uint8_t		log_dci_streams, log_dci_errored;
};

static const struct card cards[] = {
	{ 0x1017, "16.35.1012", "MT_0000000008", false, 18, 24, 78125, 0x0002, 32, 32,
	  "100 Gb/sec (4X EDR)", "100 Gb/sec (4X EDR)", 0, 0 },
	{ 0x101b, "20.37.1014", "MT_0000000223", false, 17, 23, 156250, 0x0032, 64, 64,
	  "200 Gb/sec (4X HDR)", "200 Gb/sec (4X HDR)", 0, 0 },
	{ 0x101d, "22.37.1014", "MT_0000000359", true, 17, 23, 156250, 0, 0, 32,
	  NULL, "100 Gb/sec (4X EDR)", 8, 3 },
	{ 0x1021, "28.37.1014", "MT_0000000838", false, 17, 23, 156250, 0x0432, 128, 128,
	  "400 Gb/sec (4X NDR)", "400 Gb/sec (4X NDR)", 8, 3 },
};

/* Caps every modelled ConnectX shares */
#define LOG_MAX_QP_SZ		15
#define LOG_MAX_CQ		24
#define LOG_MAX_CQ_SZ		22
#define LOG_MAX_MKEY		24
#define LOG_MAX_SRQ		23
#define LOG_MAX_SRQ_SZ		15
#define LOG_MAX_RA		4
#define LOG_MAX_MSG		30
#define LOG_MAX_MCG		21
#define MAX_QP_MCG		240
#define MAX_WQE_SZ_SQ		1024
#define MAX_WQE_SZ_RQ		512
#define PKEY_TABLE		128
#define GID_TABLE		8
#define ROCE_ADDR_TABLE		255
#define CX_PORT_CAP_FLAGS	0xa259e848u

static const struct card *this_card(void)
{
	const char *s = getenv("RFEMU_PART_ID");
	unsigned long part = s && *s ? strtoul(s, NULL, 0) : 0x101b;

	for (size_t i = 0; i < sizeof(cards) / sizeof(cards[0]); i++)
		if (cards[i].part == part)
			return &cards[i];
	cr_assert_fail("no expectations for part %#lx", part);
	return NULL;
}

static bool roce(const struct card *c)
{
	const char *ll = getenv("RFEMU_LINK_LAYER");

	return c->eth_only || (ll && !strcmp(ll, "eth"));
}

static void read_sysfs(const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/mlx5_0/%s", rel);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert(fgets(buf, (int)len, f), "%s empty", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

Test(profile_check, query_device)
{
	const struct card *c = this_card();
	struct ibv_context *ctx = et_open();
	struct ibv_device_attr_ex ex;
	const struct ibv_device_attr *a = &ex.orig_attr;
	char fw[64], board[64];
	/* mlx5_ib_query_device(): SGEs from the WQE sizes */
	unsigned max_rq_sg = MAX_WQE_SZ_RQ / 16;
	unsigned max_sq_sg = ((MAX_WQE_SZ_SQ < 512 ? MAX_WQE_SZ_SQ : 512) - 16 - 16) / 16;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	snprintf(fw, sizeof(fw), "%s", c->fw_ver);
	cr_assert_str_eq(a->fw_ver, fw);
	cr_assert_eq(a->vendor_id, 0x02c9);
	cr_assert_eq(a->vendor_part_id, c->part);
	cr_assert_eq(a->hw_ver, 0);
	cr_assert_eq(a->max_mr_size, ~0ULL);
	cr_assert_eq(a->page_size_cap, ~0xfffULL);
	cr_assert_eq(a->max_qp, 1 << c->log_max_qp);
	cr_assert_eq(a->max_qp_wr, 1 << LOG_MAX_QP_SZ);
	cr_assert_eq(a->max_sge, (int)(max_rq_sg < max_sq_sg ? max_rq_sg : max_sq_sg));
	cr_assert_eq(a->max_sge, 30);
	cr_assert_eq(a->max_sge_rd, (512 - 16 - 16) / 16);	/* MLX5_MAX_SGE_RD */
	cr_assert_eq(a->max_cq, 1 << LOG_MAX_CQ);
	cr_assert_eq(a->max_cqe, (1 << LOG_MAX_CQ_SZ) - 1);
	cr_assert_eq(a->max_mr, 1 << LOG_MAX_MKEY);
	cr_assert_eq(a->max_mw, 1 << LOG_MAX_MKEY);
	cr_assert_eq(a->max_pd, 1 << c->log_max_pd);
	cr_assert_eq(a->max_qp_rd_atom, 1 << LOG_MAX_RA);
	cr_assert_eq(a->max_qp_init_rd_atom, 1 << LOG_MAX_RA);
	cr_assert_eq(a->max_res_rd_atom, a->max_qp_rd_atom * a->max_qp);
	cr_assert_eq(a->atomic_cap, IBV_ATOMIC_HCA);
	cr_assert_eq(a->max_mcast_grp, 1 << LOG_MAX_MCG);
	cr_assert_eq(a->max_mcast_qp_attach, MAX_QP_MCG);
	cr_assert_eq(a->max_total_mcast_qp_attach, MAX_QP_MCG << LOG_MAX_MCG);
	cr_assert_eq(a->max_ah, INT_MAX);
	cr_assert_eq(a->max_srq, 1 << LOG_MAX_SRQ);
	cr_assert_eq(a->max_srq_wr, (1 << LOG_MAX_SRQ_SZ) - 1);
	cr_assert_eq(a->max_srq_sge, (int)max_rq_sg - 1);
	cr_assert_eq(a->max_pkeys, PKEY_TABLE);	/* on RoCE too */
	cr_assert_eq(a->local_ca_ack_delay, 16);
	cr_assert_eq(a->phys_port_cnt, 1);
	cr_assert_eq(ex.hca_core_clock, c->khz);
	cr_assert_eq(ex.completion_timestamp_mask, (1ULL << 63) - 1);
	cr_assert_eq(ex.cq_mod_caps.max_cq_count, 0xffff);	/* MLX5_MAX_CQ_COUNT */
	cr_assert_eq(ex.cq_mod_caps.max_cq_period, 0xfff);	/* MLX5_MAX_CQ_PERIOD */

	read_sysfs("board_id", board, sizeof(board));
	cr_assert_str_eq(board, c->board_id);
	read_sysfs("fw_ver", fw, sizeof(fw));
	cr_assert_str_eq(fw, c->fw_ver);
	read_sysfs("device/device", fw, sizeof(fw));
	cr_assert_eq(strtoul(fw, NULL, 0), c->part);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

Test(profile_check, query_port)
{
	const struct card *c = this_card();
	struct ibv_context *ctx = et_open();
	uint64_t guid = be64toh(ibv_get_device_guid(ctx->device));
	struct ibv_port_attr p;
	union ibv_gid gid;
	uint16_t pkey;
	char rate[64];
	bool eth = roce(c);

	cr_assert_eq(ibv_query_port(ctx, 1, &p), 0);
	cr_assert_eq(p.state, IBV_PORT_ACTIVE);
	cr_assert_eq(p.phys_state, 5);
	cr_assert_eq(p.max_msg_sz, 1u << LOG_MAX_MSG);
	cr_assert_eq(p.max_mtu, IBV_MTU_4096);
	cr_assert_eq(p.active_width, 2);	/* 4X */
	cr_assert_eq(p.active_speed, eth ? c->eth_speed : c->ib_speed);
	read_sysfs("ports/1/rate", rate, sizeof(rate));
	cr_assert_str_eq(rate, eth ? c->eth_rate : c->ib_rate);
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	cr_assert_eq(be64toh(gid.global.subnet_prefix), 0xfe80000000000000ULL);
	if (eth) {
		/* mlx5_query_port_roce() */
		cr_assert_eq(p.link_layer, IBV_LINK_LAYER_ETHERNET);
		cr_assert_eq(p.port_cap_flags, IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS);
		cr_assert_eq(p.port_cap_flags2, 0);
		cr_assert_eq(p.pkey_tbl_len, 1);
		cr_assert_eq(p.gid_tbl_len, ROCE_ADDR_TABLE);
		cr_assert_eq(p.max_vl_num, 0);
		cr_assert_eq(p.lid, 0);
		/* the EUI-64 of the MAC: ff:fe in the middle */
		cr_assert_eq(gid.raw[11], 0xff);
		cr_assert_eq(gid.raw[12], 0xfe);
		cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
		cr_assert_eq(pkey, htobe16(0xffff));
	} else {
		/* mlx5_query_hca_port(): the firmware's PortInfo */
		cr_assert_eq(p.link_layer, IBV_LINK_LAYER_INFINIBAND);
		cr_assert_eq(p.port_cap_flags, CX_PORT_CAP_FLAGS);
		cr_assert(p.port_cap_flags & IBV_PORT_CAP_MASK2_SUP);
		/*
		 * CapabilityMask2 travels only in the ioctl QUERY_PORT (the
		 * write() answer has no room for it): the card's, which names
		 * the speed (mad.c reports HDR only with LINK_SPEED_HDR_SUP,
		 * NDR only with _NDR_SUP).
		 */
		cr_assert_eq(p.port_cap_flags2, c->ib_flags2);
		cr_assert_eq(!!(c->ib_flags2 & 0x20), c->ib_speed >= 64);
		cr_assert_eq(!!(c->ib_flags2 & 0x400), c->ib_speed >= 128);
		cr_assert_eq(p.pkey_tbl_len, PKEY_TABLE);
		cr_assert_eq(p.gid_tbl_len, GID_TABLE);
		cr_assert_eq(p.max_vl_num, 4);	/* VL0-7 */
		cr_assert_neq(p.lid, 0);
		cr_assert_eq(p.sm_lid, 1);
		cr_assert_eq(p.subnet_timeout, 18);
		/* GID[0] is fe80:: + the port GUID, port 1's the node GUID */
		cr_assert_eq(be64toh(gid.global.interface_id), guid);
		for (unsigned i = 1; i < GID_TABLE; i++) {
			cr_assert_eq(ibv_query_gid(ctx, 1, (int)i, &gid), 0, "GID %u", i);
			cr_assert_eq(gid.global.interface_id, 0, "GID %u", i);
		}
		cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
		cr_assert_eq(pkey, htobe16(0xffff));
		cr_assert_eq(ibv_query_pkey(ctx, 1, PKEY_TABLE - 1, &pkey), 0);
		cr_assert_eq(pkey, 0);
	}
	cr_assert_neq(ibv_query_pkey(ctx, 1, (int)p.pkey_tbl_len, &pkey), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* What is advertised is what create and modify enforce. */
Test(profile_check, limits_enforced)
{
	const struct card *c = this_card();
	struct ibv_context *ctx = et_open();
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_sge = 1 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	(void)c;
	cr_assert_eq(ibv_query_device(ctx, &a), 0);
	cr_assert_eq(ibv_query_port(ctx, 1, &p), 0);
	cr_assert(pd);
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, a.max_cqe + 1, NULL, NULL, 0));
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
	ia.send_cq = ia.recv_cq = cq;

	ia.cap.max_send_wr = (uint32_t)a.max_qp_wr + 1;
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_neq(errno, 0);
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = (uint32_t)a.max_qp_wr + 1;
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia));
	cr_assert_neq(errno, 0);
	ia.cap.max_recv_wr = 4;
	/*
	 * SGEs: as many as libmlx5's WQEs hold, which is more than max_sge
	 * (neither the kernel nor libmlx5 checks max_sge), and no more.
	 */
	ia.cap.max_send_sge = (uint32_t)a.max_sge + 1;
	ia.cap.max_recv_sge = (uint32_t)a.max_sge + 1;
	qp = ibv_create_qp(pd, &ia);
	cr_assert(qp, "max_sge %d + 1: %s", a.max_sge, strerror(errno));
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	ia.cap.max_send_sge = 64;
	errno = 0;
	cr_assert_null(ibv_create_qp(pd, &ia), "64 SGEs are past a 1024-byte WQE");
	cr_assert_eq(errno, EINVAL);
	ia.cap.max_send_sge = (uint32_t)a.max_sge;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	cr_assert(qp, "max_sge %d: %s", a.max_sge, strerror(errno));

	/* the last P_Key index is valid, the one past the table is not */
	qa.pkey_index = (uint16_t)p.pkey_tbl_len;
	cr_assert_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), EINVAL);
	qa.pkey_index = (uint16_t)(p.pkey_tbl_len - 1);
	cr_assert_eq(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	sa.attr.max_wr = (uint32_t)a.max_srq_wr;
	errno = 0;
	cr_assert_null(ibv_create_srq(pd, &sa));
	cr_assert_neq(errno, 0);
	sa.attr.max_wr = 16;
	sa.attr.max_sge = (uint32_t)a.max_srq_sge + 1;
	errno = 0;
	cr_assert_null(ibv_create_srq(pd, &sa));
	cr_assert_neq(errno, 0);
	sa.attr.max_sge = (uint32_t)a.max_srq_sge;
	srq = ibv_create_srq(pd, &sa);
	cr_assert(srq, "max_srq_sge %d: %s", a.max_srq_sge, strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), 0);

	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * DCI streams as the card has them: mlx5dv_query_device() reports the two
 * caps (mlx5_ib_query_device()); a DCI with as many streams as they allow
 * is created, and with more than either libmlx5 refuses (EINVAL); on a
 * card without them every streams DCI is EINVAL (the kernel's
 * process_vendor_flags() refuses MLX5_QP_FLAG_DCI_STREAM).
 */
Test(profile_check, dci_streams)
{
	const struct card *c = this_card();
	struct ibv_context *ctx = et_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS };
	struct ibv_qp *qp;

	cr_assert(pd && cq);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert(dv.comp_mask & MLX5DV_CONTEXT_MASK_DCI_STREAMS);
	cr_assert_eq(dv.dci_streams_caps.max_log_num_concurent, c->log_dci_streams);
	cr_assert_eq(dv.dci_streams_caps.max_log_num_errored, c->log_dci_errored);
	if (!c->log_dci_streams) {
		cr_assert_null(et_streams_dci(ctx, pd, cq, 0, 0));
		cr_assert_eq(errno, EINVAL);
	} else {
		qp = et_streams_dci(ctx, pd, cq, c->log_dci_streams, c->log_dci_errored);
		cr_assert(qp, "%s", strerror(errno));
		cr_assert_eq(ibv_destroy_qp(qp), 0);
		/* more errored streams than streams, as test_mlx5_dc's second DCI */
		qp = et_streams_dci(ctx, pd, cq, 2, 3);
		cr_assert(qp, "%s", strerror(errno));
		cr_assert_eq(ibv_destroy_qp(qp), 0);
		cr_assert_null(et_streams_dci(ctx, pd, cq, c->log_dci_streams + 1, 0));
		cr_assert_eq(errno, EINVAL);
		cr_assert_null(et_streams_dci(ctx, pd, cq, 0, c->log_dci_errored + 1));
		cr_assert_eq(errno, EINVAL);
	}
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* This binary again, as another card, running suite profile_check only. */
static void run_as(const char *part, const char *ll)
{
	et_rerun_as(part, ll, "profile_check/*");
}

Test(profile, connectx5_ib, .timeout = 120)	{ run_as("0x1017", NULL); }
Test(profile, connectx5_roce, .timeout = 120)	{ run_as("0x1017", "eth"); }
Test(profile, connectx6_ib, .timeout = 120)	{ run_as("0x101b", NULL); }
Test(profile, connectx6_roce, .timeout = 120)	{ run_as("0x101b", "eth"); }
Test(profile, connectx6dx_eth_only, .timeout = 120)	{ run_as("0x101d", "ib"); }
Test(profile, connectx7_ib, .timeout = 120)	{ run_as("0x1021", NULL); }
Test(profile, connectx7_roce, .timeout = 120)	{ run_as("0x1021", "eth"); }
