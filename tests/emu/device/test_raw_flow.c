/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Verbs flow steering (ibv_create_flow()) of raw packet QPs: a frame one
 * raw QP sends comes back through the NIC's local loopback to the rules
 * of its port, and the first matching rule's QP receives it whole (a
 * SEND CQE of the frame's length); an unmatched frame is dropped;
 * priorities, DONT_TRAP and rules of one match order and share it.  The commands' refusals:
 * uverbs' (EPERM, EINVAL for sizes, reserved fields and non-raw QPs),
 * mlx5's (ENOMEM for a priority past the last, EOPNOTSUPP for fields
 * it cannot match, EINVAL for an EtherType the IP spec contradicts); a
 * QP with rules cannot be destroyed (EBUSY).  The leftovers, sniffer and
 * egress rules.
 */
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define RAW_NQP	3

#include "raw_pair.h"
#include "wire_test.h"

static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };
static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };

TestSuite(raw_flow, .init = raw_pair_setup, .fini = raw_pair_teardown, .timeout = 30);

/* A UDP/IPv4 frame of len bytes to dst, ports 4000 -> dport, in buf[0]. */
static void make_frame(const uint8_t dst[6], uint16_t dport, uint32_t len)
{
	uint8_t *f = buf[0];

	memset(f, 0, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;				/* IPv4 */
	f[14] = 0x45;
	f[14 + 9] = 17;				/* UDP */
	memcpy(f + 14 + 12, "\x0a\x00\x00\x01", 4);
	memcpy(f + 14 + 16, "\x0a\x00\x00\x02", 4);
	f[34] = 4000 >> 8;
	f[35] = 4000 & 0xff;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	for (uint32_t i = 42; i < len; i++)
		f[i] = (uint8_t)(i * 7);
}

static void send_frame(uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf[0], len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_send(qp[0], &wr, &bad), 0);
	wc = dt_poll1(cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
}

static void post_recv(int i)
{
	struct ibv_sge sge = { (uintptr_t)buf[i] + 4096, 4096, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(buf[i] + 4096, 0, 4096);
	cr_assert_eq(ibv_post_recv(qp[i], &wr, &bad), 0);
}

struct eth_flow {
	struct ibv_flow_attr		attr;
	struct ibv_flow_spec_eth	eth;
	struct ibv_flow_spec_ipv4_ext	ip;
	struct ibv_flow_spec_tcp_udp	udp;
};

/* A rule for frames to mac_b, and (with dport) UDP to that port. */
static struct ibv_flow *flow_to(int i, uint16_t priority, uint32_t flags, uint16_t dport)
{
	struct eth_flow f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f.attr) + sizeof(f.eth),
			  .priority = priority, .num_of_specs = 1, .port = 1, .flags = flags },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
		.ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(f.ip) },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(f.udp) },
	};

	memcpy(f.eth.val.dst_mac, mac_b, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	if (dport) {
		f.attr.num_of_specs = 3;
		f.attr.size += sizeof(f.ip) + sizeof(f.udp);
		f.ip.val.proto = 17;
		f.ip.mask.proto = 0xff;
		f.udp.val.dst_port = htobe16(dport);
		f.udp.mask.dst_port = 0xffff;
	}
	return ibv_create_flow(qp[i], &f.attr);
}

static void expect_frame(int i, uint32_t len)
{
	struct ibv_wc wc = dt_poll1(cq[i]);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_RECV);
	cr_expect_eq(wc.byte_len, len);
	cr_expect_eq(wc.wr_id, 100 + (uint64_t)i);
	cr_expect_eq(memcmp(buf[i] + 4096, buf[0], len), 0, "the frame, byte for byte");
}

/*
 * The rule's QP receives the frame whole; the sender's own RQ (no rule)
 * and a third QP get nothing.  A frame to another MAC, or another UDP
 * port, is dropped.
 */
Test(raw_flow, match_delivers_mismatch_drops)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 5000);

	cr_assert(f, "%s", strerror(errno));
	post_recv(0);
	post_recv(1);
	post_recv(2);
	make_frame(mac_b, 5000, 300);
	send_frame(300);
	expect_frame(1, 300);
	make_frame(mac_a, 5000, 64);
	send_frame(64);
	make_frame(mac_b, 5001, 64);
	send_frame(64);
	dt_poll_none(cq[1], 100);
	dt_poll_none(cq[0], 0);
	dt_poll_none(cq[2], 0);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	/* no rule now: the next frame to mac_b goes nowhere */
	make_frame(mac_b, 5000, 64);
	send_frame(64);
	dt_poll_none(cq[1], 100);
}

/*
 * Of two matching rules the one of lower priority value takes the frame;
 * with DONT_TRAP it takes a copy and the frame goes on to the other.
 */
Test(raw_flow, priority_and_dont_trap)
{
	struct ibv_flow *hi = flow_to(1, 0, 0, 0), *lo = flow_to(2, 1, 0, 0);

	cr_assert(hi && lo, "%s", strerror(errno));
	post_recv(1);
	post_recv(2);
	make_frame(mac_b, 7, 128);
	send_frame(128);
	expect_frame(1, 128);
	dt_poll_none(cq[2], 100);
	cr_assert_eq(ibv_destroy_flow(hi), 0);
	hi = flow_to(1, 0, IBV_FLOW_ATTR_FLAGS_DONT_TRAP, 0);
	cr_assert(hi, "%s", strerror(errno));
	post_recv(1);
	send_frame(128);
	expect_frame(1, 128);
	expect_frame(2, 128);
	cr_assert_eq(ibv_destroy_flow(hi), 0);
	cr_assert_eq(ibv_destroy_flow(lo), 0);
}

/* Receives posted on QPs 1 and 2, a frame to mac_b from QP 0. */
static void send_to_1_and_2(uint16_t dport, uint32_t len)
{
	post_recv(1);
	post_recv(2);
	make_frame(mac_b, dport, len);
	send_frame(len);
}

/*
 * mlx5 puts a DONT_TRAP rule of priority p in the bypass table 2p, a rule
 * that traps in 2p + 1 (ib_prio_to_core_prio() of hw/mlx5/fs.c): within
 * one priority the DONT_TRAP rule sees the frame first, whichever is
 * older, and passes it on to the rule that traps.
 */
Test(raw_flow, dont_trap_goes_before_a_trapping_rule_of_its_priority)
{
	struct ibv_flow *trap = flow_to(1, 3, 0, 0);
	struct ibv_flow *copy = flow_to(2, 3, IBV_FLOW_ATTR_FLAGS_DONT_TRAP, 0);

	cr_assert(trap && copy, "%s", strerror(errno));
	send_to_1_and_2(7, 100);
	expect_frame(1, 100);
	expect_frame(2, 100);
	cr_assert_eq(ibv_destroy_flow(copy), 0);
	cr_assert_eq(ibv_destroy_flow(trap), 0);
}

/* A rule of one Ethernet spec, for frames to dst under dst_mask. */
static struct ibv_flow *flow_mac(int i, uint16_t priority, const uint8_t dst[6],
				 const uint8_t dst_mask[6])
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .priority = priority,
			  .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
	};

	memcpy(f.eth.val.dst_mac, dst, 6);
	memcpy(f.eth.mask.dst_mac, dst_mask, 6);
	return ibv_create_flow(qp[i], &f.attr);
}

/*
 * A rule that catches multicast frames only (its first spec a multicast
 * destination MAC under a multicast mask) goes to mlx5's multicast table,
 * MLX5_IB_FLOW_MCAST_PRIO, after every priority (get_flow_table() of
 * hw/mlx5/fs.c): a rule of priority 5 that takes any frame is tried
 * first.  With DONT_TRAP it keeps its priority.
 */
Test(raw_flow, a_multicast_rule_comes_after_every_priority)
{
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	static const uint8_t ones[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zeros[6] = { 0 };
	struct ibv_flow *mc = flow_mac(1, 0, mcast, ones), *any = flow_mac(2, 5, zeros, zeros);

	cr_assert(mc && any, "%s", strerror(errno));
	post_recv(1);
	post_recv(2);
	make_frame(mcast, 7, 90);
	send_frame(90);
	expect_frame(2, 90);
	dt_poll_none(cq[1], 100);
	/* a unicast frame to a rule of the same shape keeps its priority */
	cr_assert_eq(ibv_destroy_flow(mc), 0);
	mc = flow_mac(1, 0, mac_b, ones);
	cr_assert(mc, "%s", strerror(errno));
	make_frame(mac_b, 7, 90);
	send_frame(90);
	expect_frame(1, 90);
	dt_poll_none(cq[2], 100);
	cr_assert_eq(ibv_destroy_flow(mc), 0);
	cr_assert_eq(ibv_destroy_flow(any), 0);
}

/*
 * Two QPs' rules of one match and one priority are one entry of mlx5's
 * flow table with two TIRs (fs_core's add_rule_fg() adds the second
 * rule's destination to the first's entry): each QP receives the frame.
 */
Test(raw_flow, one_match_on_two_qps_feeds_both)
{
	struct ibv_flow *a = flow_to(1, 2, 0, 5000), *b = flow_to(2, 2, 0, 5000);

	cr_assert(a && b, "%s", strerror(errno));
	send_to_1_and_2(5000, 80);
	expect_frame(1, 80);
	expect_frame(2, 80);
	cr_assert_eq(ibv_destroy_flow(a), 0);
	/* the entry goes on with the other QP alone */
	post_recv(1);
	post_recv(2);
	send_frame(80);
	expect_frame(2, 80);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(b), 0);
}

/*
 * An IPv4 spec that names a protocol and a TCP or UDP spec that names
 * another, or the same under another mask, cannot share mlx5's one
 * ip_protocol field: EINVAL (set_proto() of hw/mlx5/fs.c).
 */
Test(raw_flow, ip_protocol_the_l4_spec_contradicts)
{
	struct eth_flow f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .num_of_specs = 3, .port = 1,
			  .size = sizeof(f) },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
		.ip = { .type = IBV_FLOW_SPEC_IPV4_EXT, .size = sizeof(f.ip),
			.val.proto = 6, .mask.proto = 0xff },
		.udp = { .type = IBV_FLOW_SPEC_UDP, .size = sizeof(f.udp) },
	};
	struct ibv_flow *ok;

	errno = 0;
	cr_expect_null(ibv_create_flow(qp[1], &f.attr), "TCP in the IPv4 spec, then UDP");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	f.ip.val.proto = 17;
	f.ip.mask.proto = 0x1f;
	errno = 0;
	cr_expect_null(ibv_create_flow(qp[1], &f.attr), "UDP under another mask");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	f.ip.mask.proto = 0xff;
	ok = ibv_create_flow(qp[1], &f.attr);
	cr_expect(ok, "UDP twice: %s", strerror(errno));
	if (ok)
		cr_assert_eq(ibv_destroy_flow(ok), 0);
}

/* A rule holds its QP: destroying the QP is EBUSY until the rule is gone. */
Test(raw_flow, qp_with_a_rule_stays)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);

	cr_assert(f, "%s", strerror(errno));
	cr_expect_eq(ibv_destroy_qp(qp[1]), EBUSY);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(ibv_destroy_qp(qp[1]), 0);
	qp[1] = NULL;
}

/* ---- refusals, through the command as libibverbs writes it ---------------- */

struct flow_cmd {
	struct ib_uverbs_cmd_hdr	hdr;
	struct ib_uverbs_ex_cmd_hdr	ex;
	struct ib_uverbs_create_flow	core;
	struct ib_uverbs_flow_spec_eth	eth;
	struct ib_uverbs_flow_spec_ipv4	ip;
} __attribute__((packed));

/* CREATE_FLOW with core bytes of command (the specs and what follows them) */
static int flow_write_len(struct flow_cmd *c, struct ib_uverbs_create_flow_resp *r,
			  size_t core)
{
	c->hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_FLOW;
	c->hdr.in_words = (uint16_t)((core + 7) / 8);
	c->hdr.out_words = sizeof(*r) / 8;
	c->ex.response = (uintptr_t)r;
	return write(ctx->cmd_fd, c, sizeof(c->hdr) + sizeof(c->ex) + c->hdr.in_words * 8) < 0 ?
	       errno : 0;
}

static int flow_write(struct flow_cmd *c, struct ib_uverbs_create_flow_resp *r)
{
	return flow_write_len(c, r, sizeof(c->core) + c->core.flow_attr.size);
}

static int destroy_flow_handle(uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr	hdr;
		struct ib_uverbs_ex_cmd_hdr	ex;
		struct ib_uverbs_destroy_flow	core;
	} dc = { .hdr = { .command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
				     IB_USER_VERBS_EX_CMD_DESTROY_FLOW,
			  .in_words = sizeof(dc.core) / 8 },
		 .core = { .flow_handle = handle } };

	return write(ctx->cmd_fd, &dc, sizeof(dc)) < 0 ? errno : 0;
}

static void flow_cmd_init(struct flow_cmd *c, struct ibv_qp *q)
{
	memset(c, 0, sizeof(*c));
	c->core.qp_handle = q->handle;
	c->core.flow_attr.type = IBV_FLOW_ATTR_NORMAL;
	c->core.flow_attr.num_of_specs = 2;
	c->core.flow_attr.port = 1;
	c->core.flow_attr.size = sizeof(c->eth) + sizeof(c->ip);
	c->eth.type = IBV_FLOW_SPEC_ETH;
	c->eth.size = sizeof(c->eth);
	c->eth.val.ether_type = htobe16(0x0800);
	c->eth.mask.ether_type = 0xffff;
	c->ip.type = IBV_FLOW_SPEC_IPV4;
	c->ip.size = sizeof(c->ip);
}

Test(raw_flow, refusals)
{
	struct ib_uverbs_create_flow_resp r;
	struct ibv_cq *rcq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = rcq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *rc = ibv_create_qp(pd, &ia);
	struct flow_cmd c;

	cr_assert(rcq && rc);
	flow_cmd_init(&c, qp[1]);
	cr_assert_eq(flow_write(&c, &r), 0, "the command as built");
	cr_assert_eq(destroy_flow_handle(r.flow_handle), 0);

	flow_cmd_init(&c, rc);
	cr_expect_eq(flow_write(&c, &r), EINVAL, "an RC QP");
	flow_cmd_init(&c, qp[1]);
	c.ip.size = 4;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a spec shorter than its header");
	flow_cmd_init(&c, qp[1]);
	c.ip.size = sizeof(c.ip) + 8;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a spec past the specs' size");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.num_of_specs = 3;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a spec missing");
	flow_cmd_init(&c, qp[1]);
	c.ip.reserved = 1;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a reserved field");
	flow_cmd_init(&c, qp[1]);
	c.ip.type = 0x77;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a spec type uverbs does not know");
	flow_cmd_init(&c, qp[1]);
	c.eth.val.ether_type = htobe16(0x86dd);
	cr_expect_eq(flow_write(&c, &r), EINVAL, "IPv4 under the IPv6 EtherType");
	flow_cmd_init(&c, qp[1]);
	c.ip.mask.ttl = 0xff;
	cr_expect_eq(flow_write(&c, &r), EOPNOTSUPP, "the TTL: no match on it");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.priority = 16;
	cr_expect_eq(flow_write(&c, &r), ENOMEM, "past MLX5_IB_FLOW_LAST_PRIO");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.type = IBV_FLOW_ATTR_SNIFFER + 1;
	cr_expect_eq(flow_write(&c, &r), EOPNOTSUPP, "a type mlx5 has no table for");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.port = 9;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "no such port");
	cr_assert_eq(ibv_destroy_qp(rc), 0);
	cr_assert_eq(ibv_destroy_cq(rcq), 0);
}

/*
 * The refusals the model made in another order than the kernel, or not at
 * all: uverbs checks the port (rdma_is_port_valid(): 0 is none) before the
 * QP; mlx5_ib_create_flow() refuses a priority past the last (ENOMEM), a
 * flag it does not know and an egress default rule (EINVAL) before it
 * looks at a spec's fields (EOPNOTSUPP).
 */
Test(raw_flow, refusals_in_the_kernels_order)
{
	struct ib_uverbs_create_flow_resp r;
	struct flow_cmd c;

	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.port = 0;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "port 0");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.flags = 1;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "flag bit 0: neither DONT_TRAP nor EGRESS");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.priority = 16;
	c.ip.mask.ttl = 0xff;
	cr_expect_eq(flow_write(&c, &r), ENOMEM, "the priority before the TTL");
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.type = IBV_FLOW_ATTR_ALL_DEFAULT;
	c.core.flow_attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "an egress default rule");
}

/*
 * Bytes of the command after the specs: uverbs_request_finish() of
 * ib_uverbs_ex_create_flow() takes zeros and refuses anything else
 * (EOPNOTSUPP), before it looks at the QP.
 */
Test(raw_flow, bytes_after_the_specs_must_be_zeros)
{
	struct ib_uverbs_create_flow_resp r;
	struct flow_cmd c;

	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.num_of_specs = 1;
	c.core.flow_attr.size = sizeof(c.eth);
	memset(&c.ip, 0, sizeof(c.ip));
	cr_expect_eq(flow_write_len(&c, &r, sizeof(c.core) + sizeof(c.eth) + sizeof(c.ip)), 0,
		     "zeros after the spec");
	cr_expect_eq(destroy_flow_handle(r.flow_handle), 0);
	c.ip.type = IBV_FLOW_SPEC_IPV4;	/* not a spec now: bytes after the specs */
	c.core.qp_handle = ~0u;
	cr_expect_eq(flow_write_len(&c, &r, sizeof(c.core) + sizeof(c.eth) + sizeof(c.ip)),
		     EOPNOTSUPP, "a non-zero byte after the spec, before the QP");
}

/*
 * uverbs' filter rules (ib_uverbs_kern_spec_to_ib_spec_filter()): a
 * filter (half of what follows the spec's header) must be a multiple of 4
 * bytes and not empty; an IPv6 flow label has 20 bits, in value and mask.
 */
Test(raw_flow, filters_uverbs_refuses)
{
	struct ib_uverbs_create_flow_resp r;
	struct flow_cmd c;
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_ipv6	ip;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
			  .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(f.ip),
			.val.flow_label = htobe32(1u << 20), .mask.flow_label = htobe32(0xfffff) },
	};

	flow_cmd_init(&c, qp[1]);
	c.ip.size = sizeof(struct ib_uverbs_flow_spec_hdr);
	c.core.flow_attr.size = sizeof(c.eth) + c.ip.size;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "an empty filter");
	flow_cmd_init(&c, qp[1]);
	c.ip.size = sizeof(struct ib_uverbs_flow_spec_hdr) + 2 * 6;
	c.core.flow_attr.size = sizeof(c.eth) + c.ip.size;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a filter of 6 bytes");
	errno = 0;
	cr_expect_null(ibv_create_flow(qp[1], &f.attr), "a label of 21 bits");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	f.ip.val.flow_label = 0;
	f.ip.mask.flow_label = htobe32(0x1fffff);
	errno = 0;
	cr_expect_null(ibv_create_flow(qp[1], &f.attr), "a mask of 21 bits");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
}

/*
 * A VLAN match in the Ethernet spec makes mlx5 match cvlan_tag too
 * (parse_flow_attr()): an untagged frame does not match VLAN 0.
 */
Test(raw_flow, a_vlan_rule_takes_no_untagged_frame)
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth),
			 .mask.vlan_tag = htobe16(0x0fff) },
	};
	struct ibv_flow *vlan = ibv_create_flow(qp[1], &f.attr);

	cr_assert(vlan, "%s", strerror(errno));
	post_recv(1);
	make_frame(mac_b, 7, 70);
	send_frame(70);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(vlan), 0);
}

/*
 * mlx5 matches the IPv6 flow label (set_flow_label() of fs.c, a
 * ConnectX-6 field); the hop limit it does not (EOPNOTSUPP).
 */
Test(raw_flow, ipv6_flow_label)
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_ipv6	ip;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
			  .port = 1 },
		.ip = { .type = IBV_FLOW_SPEC_IPV6, .size = sizeof(f.ip),
			.val.flow_label = htobe32(0x12345), .mask.flow_label = htobe32(0xfffff) },
	};
	struct ibv_flow *fl = ibv_create_flow(qp[1], &f.attr);
	uint8_t *frame = buf[0];

	cr_assert(fl, "%s", strerror(errno));
	post_recv(1);
	memset(frame, 0, 80);
	memcpy(frame, mac_b, 6);
	memcpy(frame + 6, mac_a, 6);
	frame[12] = 0x86;
	frame[13] = 0xdd;
	frame[14] = 0x60;
	frame[15] = 0x01;			/* label 0x12345 */
	frame[16] = 0x23;
	frame[17] = 0x45;
	frame[20] = 59;				/* no next header */
	send_frame(80);
	expect_frame(1, 80);
	post_recv(1);
	frame[17] = 0x46;
	send_frame(80);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	f.ip.mask.flow_label = 0;
	f.ip.mask.hop_limit = 0xff;
	errno = 0;
	cr_expect_null(ibv_create_flow(qp[1], &f.attr));
	cr_expect_eq(errno, EOPNOTSUPP, "the hop limit: %s", strerror(errno));
}

/*
 * A frame longer than the receive WQE's buffers: the WQE completes with a
 * local length error, and the RQ goes on receiving; on an Ethernet RQ
 * that syndrome does not move the RQ to ERR (kernel commit 187a9830c921,
 * "net/mlx5e: ... LOCAL_LENGTH_ERR ... the RQ is not actually in ERR
 * state").
 */
Test(raw_flow, a_frame_past_the_buffer_leaves_the_rq_ready)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);
	struct ibv_sge sge = { (uintptr_t)buf[1] + 4096, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	cr_assert(f, "%s", strerror(errno));
	cr_assert_eq(ibv_post_recv(qp[1], &wr, &bad), 0);
	make_frame(mac_b, 7, 200);
	send_frame(200);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(et_qp_state(qp[1]), IBV_QPS_RTS);
	post_recv(1);
	send_frame(200);
	expect_frame(1, 200);
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/*
 * A raw QP's SQ and RQ are objects of their own: a send error moves the
 * SQ to ERR and leaves the RQ ready, which the kernel reports as SQE
 * (query_raw_packet_qp_state()); the RQ still receives.  mlx5 has no way
 * back to RTS for it (modify_raw_packet_qp(): EINVAL), ERR and RESET work.
 */
Test(raw_flow, a_send_error_leaves_the_rq_receiving)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);
	struct ibv_sge sge = { (uintptr_t)buf[0], 64, mr->lkey + 0x100 };
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct ibv_qp *q0 = qp[0];
	struct ibv_wc wc;

	cr_assert(f, "%s", strerror(errno));
	make_frame(mac_b, 7, 64);
	/* qp[1] sends badly, then receives what qp[0] sends */
	qp[0] = qp[1];
	cr_assert_eq(ibv_post_send(qp[1], &wr, &bad), 0);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(et_qp_state(qp[1]), IBV_QPS_SQE);
	qp[0] = q0;
	post_recv(1);
	send_frame(64);
	expect_frame(1, 64);
	cr_expect_eq(ibv_modify_qp(qp[1], &a, IBV_QP_STATE), EINVAL, "SQE -> RTS");
	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(ibv_modify_qp(qp[1], &a, IBV_QP_STATE), 0);
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/*
 * A receive WQE whose key fails moves the RQ alone to ERR (a protection
 * error is a syndrome mlx5e recovers an RQ from): the RQ flushes the
 * receives posted behind it and after it and takes no frame, and the SQ
 * sends on.  An RQ in ERR beside a ready SQ is no QP state:
 * sqrq_state_to_qp_state() of mlx5's qp.c answers ibv_query_qp() EINVAL.
 * Moving the QP to ERR makes the pair ERR.
 */
Test(raw_flow, a_receive_protection_error_ends_the_rq_alone)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);
	struct ibv_sge rsge = { (uintptr_t)buf[1] + 4096, 4096, mr->lkey + 0x100 };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_sge ssge = { (uintptr_t)buf[0], 64, mr->lkey };
	struct ibv_send_wr swr = { .wr_id = 9, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr ia;
	struct ibv_wc wc;

	cr_assert(f, "%s", strerror(errno));
	cr_assert_eq(ibv_post_recv(qp[1], &rwr, &rbad), 0);
	post_recv(1);
	make_frame(mac_b, 7, 64);
	send_frame(64);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 7);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 101);
	cr_expect_eq(ibv_query_qp(qp[1], &a, IBV_QP_STATE, &ia), EINVAL, "RQ ERR, SQ ready");

	cr_assert_eq(ibv_post_send(qp[1], &swr, &sbad), 0);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "the SQ sends: %s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 9);
	post_recv(1);
	wc = dt_poll1(cq[1]);
	cr_expect_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "a later receive: %s",
		     ibv_wc_status_str(wc.status));
	send_frame(64);
	dt_poll_none(cq[1], 100);

	a.qp_state = IBV_QPS_ERR;
	cr_expect_eq(ibv_modify_qp(qp[1], &a, IBV_QP_STATE), 0);
	cr_expect_eq(et_qp_state(qp[1]), IBV_QPS_ERR);
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/* A rule for frames to mac_b at priority prio, with one action spec. */
static struct ibv_flow *action_flow_to(struct ibv_qp *q, uint16_t prio,
				       const struct ibv_flow_spec_action_tag *tag)
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
		union {
			struct ibv_flow_spec_action_tag		tag;
			struct ibv_flow_spec_action_drop	drop;
		} act;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .priority = prio, .num_of_specs = 2,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
		.act.drop = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(f.act.drop) },
	};

	if (tag)
		f.act.tag = *tag;
	f.attr.size = (uint16_t)(sizeof(f.attr) + sizeof(f.eth) + f.act.drop.size);
	memcpy(f.eth.val.dst_mac, mac_b, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	return ibv_create_flow(q, &f.attr);
}

/*
 * IBV_FLOW_SPEC_ACTION_DROP (mlx5's MLX5_FLOW_CONTEXT_ACTION_DROP, with no
 * destination): a matching frame goes to no QP, neither the rule's nor
 * one of a later priority's; the same match forwarding in the same table
 * conflicts with the drop entry (fs_core: EEXIST).  uverbs takes a drop
 * spec of its header's size only (EINVAL).
 */
Test(raw_flow, a_drop_rule_drops)
{
	struct ib_uverbs_create_flow_resp r;
	struct ibv_flow *drop = action_flow_to(qp[1], 0, NULL);
	struct ibv_flow *later = flow_to(2, 1, 0, 0);
	struct flow_cmd c;

	cr_assert(drop && later, "%s", strerror(errno));
	errno = 0;
	cr_expect_null(flow_to(2, 0, 0, 0), "forwarding beside the drop entry");
	cr_expect_eq(errno, EEXIST, "%s", strerror(errno));
	post_recv(1);
	post_recv(2);
	make_frame(mac_b, 7, 64);
	send_frame(64);
	dt_poll_none(cq[1], 100);
	dt_poll_none(cq[2], 0);
	cr_assert_eq(ibv_destroy_flow(drop), 0);
	send_frame(64);
	expect_frame(2, 64);
	cr_assert_eq(ibv_destroy_flow(later), 0);

	flow_cmd_init(&c, qp[1]);
	c.ip.type = IBV_FLOW_SPEC_ACTION_DROP;
	c.ip.size = sizeof(struct ib_uverbs_flow_spec_action_drop) + 8;
	c.core.flow_attr.size = sizeof(c.eth) + c.ip.size;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a drop spec of 16 bytes");
}

/* A rule of type for QP i with no specs of its own. */
static struct ibv_flow *flow_of_type(struct ibv_qp *q, enum ibv_flow_attr_type type,
				     uint16_t priority, uint32_t flags)
{
	struct ibv_flow_attr a = { .type = type, .size = sizeof(a), .priority = priority,
				   .port = 1, .flags = flags };

	return ibv_create_flow(q, &a);
}

/*
 * The leftovers rules (create_leftovers_rule() of mlx5's fs.c, in the
 * leftovers namespace after the bypass tables): ALL_DEFAULT takes every
 * frame no table trapped, MC_DEFAULT the multicast ones; rules of one
 * kind share their entry, so each QP takes its copy, once.  A frame a
 * rule traps, or a drop rule drops, never reaches them; one a DONT_TRAP
 * rule copies does.  Here no kernel netdev takes frames before them.
 */
Test(raw_flow, the_default_rules_take_what_no_rule_trapped)
{
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	struct ibv_flow *all = flow_of_type(qp[1], IBV_FLOW_ATTR_ALL_DEFAULT, 0, 0);
	struct ibv_flow *mc = flow_of_type(qp[2], IBV_FLOW_ATTR_MC_DEFAULT, 0, 0);
	struct ibv_flow *mc1 = flow_of_type(qp[1], IBV_FLOW_ATTR_MC_DEFAULT, 0, 0);
	struct ibv_flow *rule;

	cr_assert(all && mc && mc1, "%s", strerror(errno));
	send_to_1_and_2(7, 70);
	expect_frame(1, 70);
	dt_poll_none(cq[2], 100);
	dt_poll_none(cq[1], 0);

	post_recv(1);
	make_frame(mcast, 7, 70);
	send_frame(70);
	expect_frame(1, 70);
	expect_frame(2, 70);
	dt_poll_none(cq[1], 100);

	/* a rule that traps takes the frame from the leftovers; DONT_TRAP copies it */
	rule = flow_to(2, 4, 0, 0);
	cr_assert(rule, "%s", strerror(errno));
	send_to_1_and_2(7, 70);
	expect_frame(2, 70);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(rule), 0);
	rule = flow_to(2, 4, IBV_FLOW_ATTR_FLAGS_DONT_TRAP, 0);
	cr_assert(rule, "%s", strerror(errno));
	post_recv(2);
	send_frame(70);
	expect_frame(2, 70);
	expect_frame(1, 70);
	cr_assert_eq(ibv_destroy_flow(rule), 0);
	cr_assert_eq(ibv_destroy_flow(mc1), 0);
	cr_assert_eq(ibv_destroy_flow(mc), 0);
	cr_assert_eq(ibv_destroy_flow(all), 0);
}

/*
 * The sniffer rule (create_sniffer_rule(): the SNIFFER_RX and SNIFFER_TX
 * tables, one entry matching everything) gives its QP a copy of each
 * frame the function sends and one of each it receives: a frame looped
 * back is both, so two copies, whatever the receive rules do to it.
 */
Test(raw_flow, a_sniffer_sees_each_frame_sent_and_received)
{
	struct ibv_flow *sniff = flow_of_type(qp[2], IBV_FLOW_ATTR_SNIFFER, 0, 0);
	struct ibv_flow *rule = flow_to(1, 0, 0, 0);

	cr_assert(sniff && rule, "%s", strerror(errno));
	post_recv(2);
	send_to_1_and_2(7, 90);
	expect_frame(1, 90);
	expect_frame(2, 90);
	expect_frame(2, 90);
	dt_poll_none(cq[2], 100);
	cr_assert_eq(ibv_destroy_flow(rule), 0);

	/* a frame no rule takes, and one a drop rule drops: the sniffer still sees them */
	rule = action_flow_to(qp[1], 0, NULL);
	cr_assert(rule, "%s", strerror(errno));
	for (int i = 0; i < 4; i++)
		post_recv(2);
	make_frame(mac_a, 7, 90);
	send_frame(90);
	expect_frame(2, 90);
	expect_frame(2, 90);
	make_frame(mac_b, 7, 90);
	send_frame(90);
	expect_frame(2, 90);
	expect_frame(2, 90);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(rule), 0);
	cr_assert_eq(ibv_destroy_flow(sniff), 0);
}

/* An egress rule for frames to mac_b, dropping them with drop. */
static struct ibv_flow *egress_to(struct ibv_qp *q, bool drop)
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
		struct ibv_flow_spec_action_drop drop;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .num_of_specs = drop ? 2 : 1,
			  .port = 1, .flags = IBV_FLOW_ATTR_FLAGS_EGRESS },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
		.drop = { .type = IBV_FLOW_SPEC_ACTION_DROP, .size = sizeof(f.drop) },
	};

	f.attr.size = (uint16_t)(sizeof(f.attr) + sizeof(f.eth) + (drop ? sizeof(f.drop) : 0));
	memcpy(f.eth.val.dst_mac, mac_b, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	return ibv_create_flow(q, &f.attr);
}

/*
 * Egress rules (IBV_FLOW_ATTR_FLAGS_EGRESS) are mlx5's NIC TX tables:
 * without a flow action mlx5_ib_create_flow() takes them (is_valid_spec()
 * holds for a rule that is not IPsec) and they let what they match out
 * (MLX5_FLOW_CONTEXT_ACTION_ALLOW); with a drop spec what they match is
 * not sent, though its send WQE completes.  Their destination is the
 * port: a QP without a receive queue may have one, not the default rules.
 */
Test(raw_flow, an_egress_rule_lets_out_or_drops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		.send_cq = cq[0], .recv_cq = cq[0],
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_qp *send_only = ibv_create_qp_ex(ctx, &ia);
	struct ibv_flow *rule = flow_to(1, 0, 0, 0), *out = egress_to(qp[0], false);
	struct ibv_flow *f;

	cr_assert(send_only && rule && out, "%s", strerror(errno));
	post_recv(1);
	make_frame(mac_b, 7, 80);
	send_frame(80);
	expect_frame(1, 80);
	cr_assert_eq(ibv_destroy_flow(out), 0);

	out = egress_to(qp[0], true);
	cr_assert(out, "%s", strerror(errno));
	post_recv(1);
	send_frame(80);
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(out), 0);
	send_frame(80);
	expect_frame(1, 80);

	f = egress_to(send_only, true);
	cr_expect(f, "an egress rule on a QP without a receive queue: %s", strerror(errno));
	if (f)
		cr_assert_eq(ibv_destroy_flow(f), 0);
	errno = 0;
	cr_expect_null(flow_of_type(send_only, IBV_FLOW_ATTR_SNIFFER, 0, 0));
	cr_expect_eq(errno, EINVAL, "a sniffer rule needs a TIR: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_flow(rule), 0);
	cr_assert_eq(ibv_destroy_qp(send_only), 0);
}

/*
 * What the kernel refuses of the default and sniffer rules: DONT_TRAP on
 * a default rule (uverbs), a priority past the last (ENOMEM), a default
 * rule that is egress (EINVAL).  A default rule's specs are not used
 * (create_leftovers_rule() builds its own), so a field mlx5 cannot match
 * there is no refusal.
 */
Test(raw_flow, default_and_sniffer_refusals)
{
	struct ib_uverbs_create_flow_resp r;
	struct flow_cmd c;

	errno = 0;
	cr_expect_null(flow_of_type(qp[1], IBV_FLOW_ATTR_ALL_DEFAULT, 0,
				    IBV_FLOW_ATTR_FLAGS_DONT_TRAP));
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	errno = 0;
	cr_expect_null(flow_of_type(qp[1], IBV_FLOW_ATTR_SNIFFER, 16, 0));
	cr_expect_eq(errno, ENOMEM, "%s", strerror(errno));
	errno = 0;
	cr_expect_null(flow_of_type(qp[1], IBV_FLOW_ATTR_MC_DEFAULT, 0,
				    IBV_FLOW_ATTR_FLAGS_EGRESS));
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	flow_cmd_init(&c, qp[1]);
	c.core.flow_attr.type = IBV_FLOW_ATTR_MC_DEFAULT;
	c.ip.mask.ttl = 0xff;
	cr_expect_eq(flow_write(&c, &r), 0, "the specs of a default rule are not used");
	cr_assert_eq(destroy_flow_handle(r.flow_handle), 0);
}

/*
 * IBV_FLOW_SPEC_ACTION_TAG: the entry's flow tag is in each CQE of a frame
 * it steers, where libmlx5's ibv_wc_read_flow_tag() reads it (the low 24
 * bits of the CQE's sop_drop_qpn).  mlx5 takes a tag of 24 bits (EINVAL
 * past), uverbs a tag spec of its own size (EINVAL).
 */
Test(raw_flow, a_tag_rule_tags_the_cqe)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS |
								 IBV_WC_EX_WITH_FLOW_TAG };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_qp *q = dt_raw_qp(pd, ibv_cq_ex_to_cq(cqx), DT_SELF_LB);
	struct ibv_flow_spec_action_tag tag = { .type = IBV_FLOW_SPEC_ACTION_TAG,
						.size = sizeof(tag), .tag_id = 0xabcdef };
	struct ibv_sge sge = { (uintptr_t)buf[1] + 4096, 4096, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ib_uverbs_create_flow_resp r;
	struct ibv_flow *f;
	struct flow_cmd c;
	int ret = ENOENT;

	cr_assert(cqx && q);
	tag.tag_id = 1u << 24;
	errno = 0;
	cr_expect_null(action_flow_to(q, 0, &tag), "a tag of 25 bits");
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	tag.tag_id = 0xabcdef;
	f = action_flow_to(q, 0, &tag);
	cr_assert(f, "%s", strerror(errno));
	cr_assert_eq(ibv_post_recv(q, &wr, &bad), 0);
	make_frame(mac_b, 7, 64);
	send_frame(64);
	for (int i = 0; i < 100000 && ret == ENOENT; i++)
		ret = ibv_start_poll(cqx, &pa);
	cr_assert_eq(ret, 0, "%s", strerror(ret));
	cr_expect_eq(cqx->status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(cqx->status));
	cr_expect_eq(cqx->wr_id, 5);
	cr_expect_eq(ibv_wc_read_flow_tag(cqx), 0xabcdef);
	ibv_end_poll(cqx);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(ibv_destroy_qp(q), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);

	flow_cmd_init(&c, qp[1]);
	c.ip.type = IBV_FLOW_SPEC_ACTION_TAG;
	c.ip.size = sizeof(struct ib_uverbs_flow_spec_action_drop);
	c.core.flow_attr.size = sizeof(c.eth) + c.ip.size;
	cr_expect_eq(flow_write(&c, &r), EINVAL, "a tag spec of 8 bytes");
}

/*
 * A user raw QP's TIS and TIR are of its context's transport domain, and
 * the TIR takes no frame of its own domain but with mlx5dv's
 * ALLOW_SELF_LOOPBACK_UC (unicast) or _MC (multicast) flags
 * (create_raw_packet_qp_tir() of hw/mlx5/qp.c: self_lb_block, which the
 * flags set).  A frame of another context's QP loops back to it
 * (mlx5_ib_enable_lb() turns the vport's local loopback on for the
 * second user domain).
 */
Test(raw_flow, a_frame_of_its_own_context_needs_self_loopback)
{
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 2 };
	static const uint8_t ones[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct ibv_cq *ocq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *own = dt_raw_qp(pd, ocq, 0), *uc_only;
	struct ibv_context *c2 = et_open();
	struct ibv_pd *pd2 = ibv_alloc_pd(c2);
	struct ibv_mr *mr2 = ibv_reg_mr(pd2, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq2 = ibv_create_cq(c2, 8, NULL, NULL, 0);
	struct ibv_qp *other = dt_raw_qp(pd2, cq2, 0);
	struct ibv_sge sge = { (uintptr_t)buf[0], 64, mr2->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp *q1 = qp[1];
	struct ibv_cq *c1 = cq[1];
	struct ibv_flow *f;

	qp[1] = own;
	f = flow_to(1, 0, 0, 0);
	cr_assert(f, "%s", strerror(errno));
	cq[1] = ocq;
	post_recv(1);
	make_frame(mac_b, 7, 64);
	send_frame(64);
	dt_poll_none(ocq, 100);
	/* the same frame from a QP of another context */
	cr_assert_eq(ibv_post_send(other, &wr, &bad), 0);
	cr_assert_eq(dt_poll1(cq2).status, IBV_WC_SUCCESS);
	expect_frame(1, 64);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(ibv_destroy_qp(own), 0);
	/* unicast self loopback only: no multicast frame of its own context */
	qp[1] = uc_only = dt_raw_qp(pd, ocq, MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC);
	f = flow_mac(1, 0, mcast, ones);
	cr_assert(f, "%s", strerror(errno));
	post_recv(1);
	make_frame(mcast, 7, 64);
	send_frame(64);
	dt_poll_none(ocq, 100);
	cr_assert_eq(ibv_destroy_flow(f), 0);
	cr_assert_eq(ibv_destroy_qp(uc_only), 0);
	qp[1] = q1;
	cq[1] = c1;
	cr_assert_eq(ibv_destroy_qp(other), 0);
	cr_assert_eq(ibv_destroy_cq(cq2), 0);
	cr_assert_eq(ibv_dereg_mr(mr2), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	cr_assert_eq(ibv_close_device(c2), 0);
	cr_assert_eq(ibv_destroy_cq(ocq), 0);
}

/* uverbs asks for CAP_NET_RAW again at each rule. */
Test(raw_flow, needs_cap_net_raw)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	d[CAP_TO_INDEX(CAP_NET_RAW)].effective &= ~CAP_TO_MASK(CAP_NET_RAW);
	cr_assert_eq(syscall(SYS_capset, &h, d), 0, "%s", strerror(errno));
	errno = 0;
	cr_expect_null(flow_to(1, 0, 0, 0));
	cr_expect_eq(errno, EPERM, "%s", strerror(errno));
}

/*
 * The child's side of a_child_has_none_of_its_parents_rules (no asserts
 * in a child): a raw QP of its own sends a frame the parent's rule would
 * take; 0 when no rule took it, else the step that failed.
 */
static int child_sends_past_the_parents_rule(void)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);
	struct ibv_context *c = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
	struct ibv_pd *cpd = c ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *ccq = c ? ibv_create_cq(c, 4, NULL, NULL, 0) : NULL;
	struct ibv_mr *cmr = cpd ? ibv_reg_mr(cpd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr ia = { .send_cq = ccq, .recv_cq = ccq, .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *q = cmr && ccq ? ibv_create_qp(cpd, &ia) : NULL;
	struct ibv_sge sge = { (uintptr_t)buf[0], 64, cmr ? cmr->lkey : 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	rfemu_dev_stats_fn *stats = (rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	struct rfemu_dev_stats before, after;
	struct ibv_wc wc;

	if (!q || !stats)
		return 10;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PORT))
		return 11;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE))
		return 12;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE))
		return 13;
	stats(&before, sizeof(before));
	make_frame(mac_b, 7, 64);
	if (ibv_post_send(q, &wr, &bad))
		return 14;
	for (int i = 0; i < 5000 && !ibv_poll_cq(ccq, 1, &wc); i++)
		usleep(1000);
	if (wc.status != IBV_WC_SUCCESS)
		return 15;
	stats(&after, sizeof(after));
	if (after.eth_frames != before.eth_frames + 1)
		return 16;
	return after.eth_unsteered == before.eth_unsteered + 1 ? 0 : 17;
}

/*
 * A child of fork() is a host of its own: its device steers by none of
 * its parent's rules, and the parent's QP, which the parent's device
 * serves, gets nothing from the child.
 */
Test(raw_flow, a_child_has_none_of_its_parents_rules)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);
	pid_t pid;
	int st;

	cr_assert(f, "%s", strerror(errno));
	post_recv(1);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_sends_past_the_parents_rule());
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect_eq(et_status(st), 0, "the child's step %d", et_status(st));
	dt_poll_none(cq[1], 100);
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/*
 * A ConnectX writes an Ethernet RQ's CQE with the steering entry's flow
 * tag where an InfiniBand CQE has the QPN (sop_drop_qpn[23:0]; mlx5e's
 * get_cqe_flow_tag() reads it there), 0 for an entry without one: so
 * libmlx5, which reads that field for both, hands out qp_num 0.
 */
Test(raw_flow, an_untagged_frames_cqe_has_flow_tag_0)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);
	struct mlx5_cqe64 e;
	struct ibv_wc wc;

	cr_assert(f, "%s", strerror(errno));
	post_recv(1);
	make_frame(mac_b, 5000, 64);
	send_frame(64);
	wc = dt_poll1(cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, 0, "the flow tag, not QPN 0x%x", qp[1]->qp_num);
	memcpy(&e, dt_last_cqe64(cq[1]), sizeof(e));
	cr_expect_eq(be32toh(e.sop_drop_qpn), 0);
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/*
 * Frames an RQ drops for want of a receive WQE are counted in the top
 * byte of sop_drop_qpn of its next CQE (the PRM's rx_drop_counter, which
 * libxlio reads: Mellanox/libxlio#333), and the count starts over.
 */
Test(raw_flow, the_next_cqe_counts_the_frames_dropped_before_it)
{
	struct ibv_flow *f = flow_to(1, 0, 0, 0);

	cr_assert(f, "%s", strerror(errno));
	make_frame(mac_b, 5000, 64);
	for (int i = 0; i < 3; i++)
		send_frame(64);
	for (int n = 3; n >= 0; n -= 3) {
		post_recv(1);
		send_frame(64);
		expect_frame(1, 64);
		cr_expect_eq(dt_last_cqe64(cq[1])[56], n, "dropped before this CQE: %d", n);
	}
	cr_assert_eq(ibv_destroy_flow(f), 0);
}

/*
 * The CQE names what the parser found (l4_l3_hdr_type, byte 29: Linux's
 * get_cqe_l3_hdr_type() and get_cqe_l4_hdr_type()): IPv4 (2) in bits
 * 3:2; UDP (2), TCP with ACK and data (4), with ACK and none (3: the IP
 * header's length counts, not the padded frame's) in bits 6:4; nothing for
 * a frame that is not IP.
 */
Test(raw_flow, the_cqe_names_the_frames_l3_and_l4_headers)
{
	static const struct {
		uint32_t	len;
		uint8_t		proto, tcp_flags;
		uint16_t	ip_len, ethertype;
		uint8_t		want;
	} f[] = {
		{ 100, 17, 0, 86, 0x0800, 2 << 4 | 2 << 2 },
		{ 100, 6, 0x10, 86, 0x0800, 4 << 4 | 2 << 2 },
		{ 64, 6, 0x10, 40, 0x0800, 3 << 4 | 2 << 2 },
		{ 64, 6, 0x02, 40, 0x0800, 1 << 4 | 2 << 2 },
		{ 64, 17, 0, 50, 0x88b5, 0 },
	};
	struct ibv_flow *rule = flow_to(1, 0, 0, 0);

	cr_assert(rule, "%s", strerror(errno));
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		make_frame(mac_b, 5000, f[i].len);
		buf[0][12] = (uint8_t)(f[i].ethertype >> 8);
		buf[0][13] = (uint8_t)f[i].ethertype;
		buf[0][14 + 2] = (uint8_t)(f[i].ip_len >> 8);
		buf[0][14 + 3] = (uint8_t)f[i].ip_len;
		buf[0][14 + 9] = f[i].proto;
		buf[0][34 + 12] = 5 << 4;		/* TCP: 20-byte header */
		buf[0][34 + 13] = f[i].tcp_flags;
		post_recv(1);
		send_frame(f[i].len);
		expect_frame(1, f[i].len);
		cr_expect_eq(dt_last_cqe64(cq[1])[29], f[i].want, "frame %zu: 0x%02x", i,
			     dt_last_cqe64(cq[1])[29]);
	}
	cr_assert_eq(ibv_destroy_flow(rule), 0);
}
