/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mlx5dv packet reformat flow actions: a VXLAN encap (L2_TO_L2_TUNNEL) on
 * a flow of the NIC TX table pushes the tunnel's headers in front of every
 * frame a raw QP sends, the device filling in the outer lengths and the
 * IPv4 checksum; a decap (L2_TUNNEL_TO_L2) on a receive flow gives the
 * inner frame back.  The NIC flow table caps say so (what pyverbs'
 * requires_reformat_support reads).  The refusals: a type the table type
 * does not have (EOPNOTSUPP), headers past max_encap_header_size, an
 * action on a flow of the other table, a QP destination on egress
 * (EINVAL), an action a flow carries (EBUSY).
 */
#include "raw_pair.h"

TestSuite(packet_reformat, .init = raw_pair_setup, .fini = raw_pair_teardown, .timeout = 30);

/* fte_match_param: 0x180 bytes, all zeros (every frame) */
static struct {
	size_t	match_sz;
	uint8_t	buf[0x180];
} empty = { .match_sz = 0x180 };

static struct mlx5dv_flow_matcher *matcher(enum mlx5dv_flow_table_type ft_type)
{
	struct mlx5dv_flow_matcher_attr attr = {
		.type = IBV_FLOW_ATTR_NORMAL,
		.match_mask = (struct mlx5dv_flow_match_parameters *)&empty,
		.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE,
		.ft_type = ft_type,
	};
	struct mlx5dv_flow_matcher *m = mlx5dv_create_flow_matcher(ctx, &attr);

	cr_assert(m, "%s", strerror(errno));
	return m;
}

/* A flow of m with the action, if any, and to the QP, if any */
static struct ibv_flow *flow(struct mlx5dv_flow_matcher *m, struct ibv_flow_action *action,
			     struct ibv_qp *to)
{
	struct mlx5dv_flow_action_attr acts[2];
	size_t n = 0;

	if (action)
		acts[n++] = (struct mlx5dv_flow_action_attr){
			.type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION, .action = action };
	if (to)
		acts[n++] = (struct mlx5dv_flow_action_attr){
			.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP, .qp = to };
	return mlx5dv_create_flow(m, (struct mlx5dv_flow_match_parameters *)&empty, n, acts);
}

#define OUTER_LEN	50	/* MAC 14, IPv4 20, UDP 8, VXLAN 8 */
#define OUTER_IP	14
#define OUTER_UDP	34

/*
 * VXLAN's outer headers as a user writes them, the lengths and the IPv4
 * checksum left to the device (zeros).
 */
static const uint8_t outer[OUTER_LEN] = {
	0x02, 0, 0, 0, 0, 0xb,  0x02, 0, 0, 0, 0, 0xa,  0x08, 0x00,
	0x45, 0, 0, 0,  0, 0, 0x40, 0,  64, 17, 0, 0,  10, 0, 0, 1,  10, 0, 0, 2,
	0x04, 0xd2, 0x12, 0xb5, 0, 0, 0, 0,
	0x08, 0, 0, 0,  0, 0, 42, 0,
};

static struct ibv_flow_action *vxlan_encap(size_t len)
{
	return mlx5dv_create_flow_action_packet_reformat(
		ctx, len, (void *)outer, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
		MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
}

static struct ibv_flow_action *decap(void)
{
	return mlx5dv_create_flow_action_packet_reformat(
		ctx, 0, NULL, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
		MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
}

static const uint8_t mac_c[6] = { 0x02, 0, 0, 0, 0, 0xc };

/* A frame of len bytes from QP 0 to a receive QP 1 posted */
static void send_frame(uint32_t len)
{
	raw_pair_post_recv();
	raw_pair_send(mac_c, len);
}

/* The frame QP 1 received: its length */
static uint32_t receive(void)
{
	struct ibv_wc wc = dt_poll1(cq[1]);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	return wc.byte_len;
}

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* What pyverbs' requires_reformat_support reads of the NIC flow table caps */
Test(packet_reformat, the_caps_say_so)
{
	uint32_t in[4] = { htobe32(0x100 << 16), htobe32(0x7 << 1 | 1) };
	uint8_t out[0x1010] = { 0 };
	const uint8_t *cap = out + 0x10;

	cr_assert_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out)), 0);
	cr_expect(cap[4] & 0x80, "encap_general_header");
	cr_expect(cap[5] & 0x1f, "log_max_packet_reformat_context");
	cr_expect_eq((cap[6] & 3) << 8 | cap[7], 128, "max_encap_header_size");
	cr_expect(cap[0x40] & 1, "the NIC RX table's reformat");
	cr_expect(cap[0x41] & 0x80, "... and decap");
	cr_expect(cap[0x100] & 1, "the NIC TX table's reformat");
}

/* pyverbs' test_tx_packet_reformat, the outer lengths left to the device */
Test(packet_reformat, encap_on_egress)
{
	struct mlx5dv_flow_matcher *tx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	struct mlx5dv_flow_matcher *rx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	struct ibv_flow_action *encap = vxlan_encap(OUTER_LEN);
	struct ibv_flow *out, *in;
	const uint8_t *got = buf[1];
	uint32_t sum = 0;

	cr_assert(encap, "%s", strerror(errno));
	out = flow(tx, encap, NULL);
	cr_assert(out, "%s", strerror(errno));
	in = flow(rx, NULL, qp[1]);
	cr_assert(in, "%s", strerror(errno));

	send_frame(200);
	cr_assert_eq(receive(), OUTER_LEN + 200);
	cr_expect_eq(memcmp(got + OUTER_LEN, buf[0], 200), 0, "the frame, whole, inside");
	cr_expect_eq(memcmp(got, outer, OUTER_IP + 2), 0);
	cr_expect_eq(be16_at(got + OUTER_IP + 2), 20 + 8 + 8 + 200, "IPv4 total length");
	for (int i = 0; i < 20; i += 2)
		sum += be16_at(got + OUTER_IP + i);
	cr_expect_eq((sum & 0xffff) + (sum >> 16), 0xffff, "a valid IPv4 checksum");
	cr_expect_eq(be16_at(got + OUTER_UDP + 4), 8 + 8 + 200, "UDP length");
	cr_expect_eq(memcmp(got + OUTER_UDP + 6, outer + OUTER_UDP + 6, 2 + 8), 0,
		     "the UDP checksum and VXLAN header as given");

	/* the action stays while the flow carries it */
	cr_assert_neq(ibv_destroy_flow_action(encap), 0);
	cr_assert_eq(errno, EBUSY);
	/* without the TX flow the frame goes out as it is */
	cr_assert_eq(ibv_destroy_flow(out), 0);
	send_frame(100);
	cr_assert_eq(receive(), 100);
	cr_expect_eq(memcmp(got, buf[0], 100), 0);

	cr_assert_eq(ibv_destroy_flow(in), 0);
	cr_assert_eq(ibv_destroy_flow_action(encap), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(rx), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(tx), 0);
}

/*
 * The egress rules of ibv_create_flow() and the NIC TX flows are the
 * tables of one namespace, tried by priority: a verbs rule of priority 0
 * dropping the frames from mac_c keeps them from the encap of a priority-1
 * flow; without it they go out encapsulated.
 */
Test(packet_reformat, verbs_egress_rules_and_tx_flows_share_the_tables)
{
	struct mlx5dv_flow_matcher_attr ma = {
		.type = IBV_FLOW_ATTR_NORMAL, .priority = 1,
		.match_mask = (struct mlx5dv_flow_match_parameters *)&empty,
		.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE,
		.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX,
	};
	struct {
		struct ibv_flow_attr		  attr;
		struct ibv_flow_spec_eth	  eth;
		struct ibv_flow_spec_action_drop  drop;
	} d = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(d), .num_of_specs = 2,
			  .port = 1, .flags = IBV_FLOW_ATTR_FLAGS_EGRESS },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(d.eth) },
		.drop = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(d.drop) },
	};
	struct mlx5dv_flow_matcher *tx = mlx5dv_create_flow_matcher(ctx, &ma);
	struct mlx5dv_flow_matcher *rx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	struct ibv_flow_action *encap = vxlan_encap(OUTER_LEN);
	struct ibv_flow *out, *in, *drop;

	cr_assert(tx && encap, "%s", strerror(errno));
	memcpy(d.eth.val.src_mac, mac_c, 6);
	memset(d.eth.mask.src_mac, 0xff, 6);
	drop = ibv_create_flow(qp[0], &d.attr);
	out = flow(tx, encap, NULL);
	in = flow(rx, NULL, qp[1]);
	cr_assert(drop && out && in, "%s", strerror(errno));

	send_frame(100);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(drop), 0);
	raw_pair_send(mac_c, 100);		/* the receive is still posted */
	cr_assert_eq(receive(), OUTER_LEN + 100);

	cr_assert_eq(ibv_destroy_flow(in), 0);
	cr_assert_eq(ibv_destroy_flow(out), 0);
	cr_assert_eq(ibv_destroy_flow_action(encap), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(rx), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(tx), 0);
}

/* The encap on egress, the decap on receive: the frame as it was sent */
Test(packet_reformat, decap_on_receive)
{
	struct mlx5dv_flow_matcher *tx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	struct mlx5dv_flow_matcher *rx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	struct ibv_flow_action *encap = vxlan_encap(OUTER_LEN), *dec = decap();
	struct ibv_flow *out, *in;

	cr_assert(encap && dec, "%s", strerror(errno));
	out = flow(tx, encap, NULL);
	in = flow(rx, dec, qp[1]);
	cr_assert(out && in, "%s", strerror(errno));
	send_frame(300);
	cr_assert_eq(receive(), 300);
	cr_expect_eq(memcmp(buf[1], buf[0], 300), 0, "the inner frame, byte for byte");
	/* a frame that is no tunnel comes whole */
	cr_assert_eq(ibv_destroy_flow(out), 0);
	send_frame(80);
	cr_assert_eq(receive(), 80);
	cr_expect_eq(memcmp(buf[1], buf[0], 80), 0);

	cr_assert_eq(ibv_destroy_flow(in), 0);
	cr_assert_eq(ibv_destroy_flow_action(dec), 0);
	cr_assert_eq(ibv_destroy_flow_action(encap), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(rx), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(tx), 0);
}

static void refused(struct ibv_flow_action *a, int err)
{
	cr_assert_null(a);
	cr_assert_eq(errno, err, "%s", strerror(errno));
}

Test(packet_reformat, refusals)
{
	struct mlx5dv_flow_matcher *tx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	struct mlx5dv_flow_matcher *rx = matcher(MLX5DV_FLOW_TABLE_TYPE_NIC_RX);
	struct ibv_flow_action *encap = vxlan_encap(OUTER_LEN), *dec = decap();
	uint8_t big[129] = { 0 };

	cr_assert(encap && dec, "%s", strerror(errno));
	/* the types a table type has not: the encap on receive, the decap on egress, L3 tunnels */
	refused(mlx5dv_create_flow_action_packet_reformat(
			ctx, OUTER_LEN, (void *)outer,
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
			MLX5DV_FLOW_TABLE_TYPE_NIC_RX), EOPNOTSUPP);
	refused(mlx5dv_create_flow_action_packet_reformat(
			ctx, 0, NULL, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX), EOPNOTSUPP);
	refused(mlx5dv_create_flow_action_packet_reformat(
			ctx, OUTER_LEN - 14, (void *)(outer + 14),
			MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX), EOPNOTSUPP);
	refused(mlx5dv_create_flow_action_packet_reformat(
			ctx, 14, (void *)outer, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2,
			MLX5DV_FLOW_TABLE_TYPE_NIC_RX), EOPNOTSUPP);
	/* headers past max_encap_header_size (128), or none */
	refused(mlx5dv_create_flow_action_packet_reformat(
			ctx, sizeof(big), big, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
			MLX5DV_FLOW_TABLE_TYPE_NIC_TX), EINVAL);
	refused(vxlan_encap(0), EINVAL);

	/* an action on a flow of the other table */
	cr_assert_null(flow(rx, encap, qp[1]));
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));
	cr_assert_null(flow(tx, dec, NULL));
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));
	/* a QP in the TX table */
	cr_assert_null(flow(tx, encap, qp[1]));
	cr_assert_eq(errno, EINVAL, "%s", strerror(errno));

	cr_assert_eq(ibv_destroy_flow_action(dec), 0);
	cr_assert_eq(ibv_destroy_flow_action(encap), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(rx), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(tx), 0);
}
