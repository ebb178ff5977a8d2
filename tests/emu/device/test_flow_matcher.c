/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mlx5dv flow steering: a matcher (a mask in the PRM's fte_match_param
 * layout, with match_criteria_enable) and a flow of it to a raw packet QP
 * (a value).  A frame one raw QP sends whose source MAC the flow's value
 * names reaches the flow's QP whole; another is dropped.  The refusals:
 * a mask bit in a field the device does not match (EOPNOTSUPP), a value
 * bit outside the mask and a QP that is not raw (EINVAL), a priority past
 * the last (ENOMEM), a matcher in use (EBUSY).
 */
#include "raw_pair.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t mac_c[6] = { 0x02, 0, 0, 0, 0, 0xc };

TestSuite(flow_matcher, .init = raw_pair_setup, .fini = raw_pair_teardown, .timeout = 30);

/* match_criteria_enable: the sections of fte_match_param looked at */
#define CRITERIA_OUTER	(1u << 0)	/* outer headers, fte_match_set_lyr_2_4 */
#define CRITERIA_MISC	(1u << 1)	/* misc parameters */

/* fte_match_param: 0x180 bytes, as pyverbs' tests pass it */
struct match {
	size_t	match_sz;
	uint8_t	buf[0x180];
};

static struct mlx5dv_flow_matcher *matcher(const struct match *mask, uint8_t criteria,
					   uint16_t priority)
{
	struct mlx5dv_flow_matcher_attr attr = {
		.type = IBV_FLOW_ATTR_NORMAL,
		.priority = priority,
		.match_criteria_enable = criteria,
		.match_mask = (struct mlx5dv_flow_match_parameters *)mask,
		.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE,
		.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX,
	};

	return mlx5dv_create_flow_matcher(ctx, &attr);
}

static struct ibv_flow *flow(struct mlx5dv_flow_matcher *m, const struct match *value,
			     struct ibv_qp *to)
{
	struct mlx5dv_flow_action_attr act = { .type = MLX5DV_FLOW_ACTION_DEST_IBV_QP,
					       .qp = to };

	return mlx5dv_create_flow(m, (struct mlx5dv_flow_match_parameters *)value, 1, &act);
}

/* A mask of the outer source MAC, and a value naming src */
static void smac(struct match *mask, struct match *value, const uint8_t src[6])
{
	memset(mask, 0, sizeof(*mask));
	memset(value, 0, sizeof(*value));
	mask->match_sz = value->match_sz = sizeof(mask->buf);
	memset(mask->buf, 0xff, 6);
	memcpy(value->buf, src, 6);
}

/* pyverbs' test_create_empty_matcher and test_create_smac_matcher */
Test(flow_matcher, empty_and_smac_matchers)
{
	struct match mask, value;
	struct mlx5dv_flow_matcher *empty, *m;

	smac(&mask, &value, mac_a);
	m = matcher(&mask, CRITERIA_OUTER, 0);
	cr_assert(m, "%s", strerror(errno));
	memset(mask.buf, 0, sizeof(mask.buf));
	empty = matcher(&mask, 0, 0);
	cr_assert(empty, "%s", strerror(errno));
	cr_assert_eq(mlx5dv_destroy_flow_matcher(empty), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(m), 0);
}

/* pyverbs' test_smac_matcher_to_qp_flow: the frame whole, then a mismatch dropped */
Test(flow_matcher, smac_match_delivers_mismatch_drops)
{
	struct match mask, value;
	struct mlx5dv_flow_matcher *m;
	struct ibv_flow *f;
	struct ibv_wc wc;

	smac(&mask, &value, mac_a);
	m = matcher(&mask, CRITERIA_OUTER, 0);
	cr_assert(m, "%s", strerror(errno));
	f = flow(m, &value, qp[1]);
	cr_assert(f, "%s", strerror(errno));
	raw_pair_post_recv();
	raw_pair_send(mac_a, 200);
	wc = dt_poll1(cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, 200);
	cr_expect_eq(memcmp(buf[1], buf[0], 200), 0, "the frame, byte for byte");

	raw_pair_post_recv();
	raw_pair_send(mac_c, 64);
	dt_poll_none(cq[1], 100);
	/* a matcher a flow uses stays */
	cr_assert_neq(mlx5dv_destroy_flow_matcher(m), 0);
	cr_assert_eq(errno, EBUSY);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(m), 0);
}

Test(flow_matcher, refusals)
{
	struct match mask, value;
	struct mlx5dv_flow_matcher *m;

	/* ip_protocol (outer byte 16): a field the model does not match */
	smac(&mask, &value, mac_a);
	mask.buf[16] = 0xff;
	cr_assert_null(matcher(&mask, CRITERIA_OUTER, 0));
	cr_assert_eq(errno, EOPNOTSUPP);
	/* ... but a section not enabled is not looked at */
	m = matcher(&mask, 0, 0);
	cr_assert(m, "%s", strerror(errno));
	cr_assert_eq(mlx5dv_destroy_flow_matcher(m), 0);
	/* misc parameters enabled with a bit set */
	mask.buf[16] = 0;
	mask.buf[0x40 + 4] = 0xff;
	cr_assert_null(matcher(&mask, CRITERIA_OUTER | CRITERIA_MISC, 0));
	cr_assert_eq(errno, EOPNOTSUPP);
	mask.buf[0x40 + 4] = 0;

	m = matcher(&mask, CRITERIA_OUTER, 0);
	cr_assert(m, "%s", strerror(errno));
	/* a value bit outside the mask */
	value.buf[8] = 1;
	cr_assert_null(flow(m, &value, qp[1]));
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(m), 0);

	/* priority 16: past MLX5_IB_FLOW_LAST_PRIO */
	value.buf[8] = 0;
	m = matcher(&mask, CRITERIA_OUTER, 16);
	cr_assert(m, "%s", strerror(errno));
	cr_assert_null(flow(m, &value, qp[1]));
	cr_assert_eq(errno, ENOMEM);
	cr_assert_eq(mlx5dv_destroy_flow_matcher(m), 0);
}
