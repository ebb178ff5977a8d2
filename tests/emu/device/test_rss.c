/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Receive-side scaling: a frame a flow rule steers to an RSS QP is hashed
 * (Toeplitz over the fields the QP selected) and received by the WQ its
 * indirection table names for the hash's low bits.  Checked against the
 * IPv4 examples of Microsoft's RSS verification suite ("Verifying the RSS
 * Hash Calculation"): each frame must land in the WQ its published hash
 * picks, for tables laid out so that together they show 11 bits of it.
 */
#include <inttypes.h>

#include "wire_test.h"

#define NWQ		8
#define TBL_LOG		11	/* max_rwq_indirection_table_size */
#define NVEC		5

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_qp *sender;
static struct ibv_wq *wq[NWQ];
static struct ibv_mr *mr;
static uint8_t buf[(NWQ + 1) * 2048];

static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };

/* the key of Microsoft's examples */
static uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Its IPv4 examples: source, destination, the hash of the addresses, with the TCP ports. */
static const struct ms_vec {
	uint8_t		src[4], dst[4];
	uint16_t	sport, dport;
	uint32_t	hash_ip, hash_tcp;
} ms_vec[NVEC] = {
	{ { 66, 9, 149, 187 }, { 161, 142, 100, 80 }, 2794, 1766, 0x323e8fc2, 0x51ccc178 },
	{ { 199, 92, 111, 2 }, { 65, 69, 140, 83 }, 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ { 24, 19, 198, 95 }, { 12, 22, 207, 184 }, 12898, 38024, 0xd2d0a5de, 0x5c2b394a },
	{ { 38, 27, 205, 30 }, { 209, 142, 163, 6 }, 48228, 2217, 0x82989176, 0xafc7327f },
	{ { 153, 39, 163, 191 }, { 202, 188, 127, 2 }, 44251, 1303, 0x5d1809c5, 0x10e828a2 },
};

static bool zip;	/* rcq compresses its CQEs (suite rss_zip) */

static void setup(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct ibv_wq_attr ready = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (zip) {
		struct ibv_cq_init_attr_ex ax = { .cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS };
		struct mlx5dv_cq_init_attr dx = {
			.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE,
			.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH,
		};
		struct ibv_cq_ex *cx = mlx5dv_create_cq(ctx, &ax, &dx);

		rcq = cx ? ibv_cq_ex_to_cq(cx) : NULL;
	} else {
		rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	}
	cr_assert(pd && mr && scq && rcq);
	ia.send_cq = ia.recv_cq = scq;
	sender = ibv_create_qp(pd, &ia);
	if (!sender && errno == EPERM)
		cr_skip_test("needs CAP_NET_RAW (root)");
	cr_assert(sender, "%s", strerror(errno));
	dt_raw_to_rts(sender);
	for (int i = 0; i < NWQ; i++) {
		struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 16, .max_sge = 1,
					       .pd = pd, .cq = rcq };

		wq[i] = ibv_create_wq(ctx, &wa);
		cr_assert(wq[i], "%s", strerror(errno));
		cr_assert_eq(ibv_modify_wq(wq[i], &ready), 0);
	}
}

static void teardown(void)
{
	for (int i = 0; i < NWQ; i++)
		if (wq[i])
			cr_assert_eq(ibv_destroy_wq(wq[i]), 0);
	if (sender)
		cr_assert_eq(ibv_destroy_qp(sender), 0);
	cr_assert_eq(ibv_destroy_cq(rcq), 0);
	cr_assert_eq(ibv_destroy_cq(scq), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(rss_traffic, .init = setup, .fini = teardown, .timeout = 60);

/* The engine holds CQEs to compress them while it has work (RFEMU_CQE_COMPRESS). */
static void setup_zip(void)
{
	setenv("RFEMU_CQE_COMPRESS", "always", 1);
	zip = true;
	setup();
}

TestSuite(rss_zip, .init = setup_zip, .fini = teardown, .timeout = 60);

/*
 * An RSS QP over t hashing fields with Microsoft's key, and a rule for
 * frames to mac_b; its TIR takes the frames of its own context (the
 * sender's), which mlx5dv's self-loopback flags allow.
 */
static struct ibv_qp *rss_qp(struct ibv_rwq_ind_table *t, uint64_t fields, struct ibv_flow **fl)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .pd = pd, .rwq_ind_tbl = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(ms_key), .rx_hash_key = ms_key,
				  .rx_hash_fields_mask = fields },
	};
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
	};
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					  .create_flags = DT_SELF_LB };
	struct ibv_qp *qp = mlx5dv_create_qp(ctx, &ia, &dv);

	cr_assert(qp, "%s", strerror(errno));
	cr_expect_eq(qp->qp_num, 0, "mlx5 answers QP number 0 for an RSS QP");
	memcpy(f.eth.val.dst_mac, mac_b, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	*fl = ibv_create_flow(qp, &f.attr);
	cr_assert(*fl, "%s", strerror(errno));
	return qp;
}

/*
 * A 64-byte IPv4 frame at f to mac_b from src to dst of protocol proto,
 * whose L4 header opens with the 4 bytes of l4 (TCP's ports, ESP's SPI).
 */
static void ipv4_frame(uint8_t *f, const uint8_t src[4], const uint8_t dst[4], uint8_t proto,
		       uint32_t l4)
{
	memset(f, 0, 64);
	memcpy(f, mac_b, 6);
	f[6] = 0x02;
	f[12] = 0x08;				/* IPv4 */
	f[14] = 0x45;
	f[14 + 9] = proto;
	memcpy(f + 14 + 12, src, 4);
	memcpy(f + 14 + 16, dst, 4);
	f[34] = (uint8_t)(l4 >> 24);
	f[35] = (uint8_t)(l4 >> 16);
	f[36] = (uint8_t)(l4 >> 8);
	f[37] = (uint8_t)l4;
}

/* Microsoft's example v as a TCP/IPv4 frame at f. */
static void vec_frame(const struct ms_vec *v, uint8_t *f)
{
	ipv4_frame(f, v->src, v->dst, 6, (uint32_t)v->sport << 16 | v->dport);
}

/* Such a frame, sent. */
static void send_ipv4(const uint8_t src[4], const uint8_t dst[4], uint8_t proto, uint32_t l4)
{
	uint8_t *f = buf + NWQ * 2048;
	struct ibv_sge sge = { (uintptr_t)f, 64, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	ipv4_frame(f, src, dst, proto, l4);
	dt_post(sender, &wr);
	cr_assert_eq(dt_poll1(scq).status, IBV_WC_SUCCESS);
}

/* A TCP/IPv4 frame of Microsoft's example v, sent to mac_b. */
static void send_vec(const struct ms_vec *v)
{
	send_ipv4(v->src, v->dst, 6, (uint32_t)v->sport << 16 | v->dport);
}

static void post_wq_recv(int i)
{
	struct ibv_sge sge = { (uintptr_t)buf + (size_t)i * 2048, 2048, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_wq_recv(wq[i], &wr, &bad), 0);
}

/* A table of 2^TBL_LOG entries, entry e naming WQ (e >> shift) % n. */
static struct ibv_rwq_ind_table *table_of(unsigned shift, unsigned n)
{
	static struct ibv_wq *ents[1u << TBL_LOG];
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = TBL_LOG, .ind_tbl = ents };
	struct ibv_rwq_ind_table *t;

	for (unsigned e = 0; e < 1u << TBL_LOG; e++)
		ents[e] = wq[(e >> shift) % n];
	t = ibv_create_rwq_ind_table(ctx, &ta);
	cr_assert(t, "%s", strerror(errno));
	return t;
}

/*
 * For each table layout (entry e names WQ (e >> shift) % 8), each example
 * lands in the WQ of its hash's bits shift..shift+2: over the four
 * layouts, bits 0 to 10 of every hash.
 */
static void check_hashes(uint64_t fields, bool tcp)
{
	static const unsigned shifts[] = { 0, 3, 6, 8 };

	for (size_t s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
		struct ibv_rwq_ind_table *t = table_of(shifts[s], NWQ);
		struct ibv_flow *fl;
		struct ibv_qp *qp = rss_qp(t, fields, &fl);

		for (int v = 0; v < NVEC; v++) {
			uint32_t hash = tcp ? ms_vec[v].hash_tcp : ms_vec[v].hash_ip;
			uint32_t want = ((hash & ((1u << TBL_LOG) - 1)) >> shifts[s]) % NWQ;
			struct ibv_wc wc;

			for (int i = 0; i < NWQ; i++)
				post_wq_recv(i);
			send_vec(&ms_vec[v]);
			wc = dt_poll1(rcq);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
			cr_expect_eq(wc.opcode, IBV_WC_RECV);
			cr_expect_eq(wc.byte_len, 64);
			cr_expect_eq(wc.wr_id, want, "example %d, shift %u: WQ %" PRIu64 ", not %u",
				     v, shifts[s], wc.wr_id, want);
			/* the receives the frame did not take go: the WQs to RST and back */
			for (int i = 0; i < NWQ; i++) {
				struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE,
							 .wq_state = IBV_WQS_RESET };

				cr_assert_eq(ibv_modify_wq(wq[i], &a), 0);
				a.wq_state = IBV_WQS_RDY;
				cr_assert_eq(ibv_modify_wq(wq[i], &a), 0);
			}
		}
		cr_assert_eq(ibv_destroy_flow(fl), 0);
		cr_assert_eq(ibv_destroy_qp(qp), 0);
		cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
	}
}

/*
 * A rule's flow tag (IBV_FLOW_SPEC_ACTION_TAG) is in the CQE of each WQ
 * the RSS QP feeds, where libmlx5 reads it: sop_drop_qpn's low 24 bits,
 * which its poll also hands out as the work completion's qp_num.
 */
Test(rss_traffic, the_rules_tag_is_in_each_wqs_cqe)
{
	struct {
		struct ibv_flow_attr		attr;
		struct ibv_flow_spec_eth	eth;
		struct ibv_flow_spec_action_tag	tag;
	} f = {
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 2,
			  .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) },
		.tag = { .type = IBV_FLOW_SPEC_ACTION_TAG, .size = sizeof(f.tag),
			 .tag_id = 0x5a5a5a },
	};
	struct ibv_rwq_ind_table *t;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	t = table_of(0, NWQ);
	qp = rss_qp(t, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4, &fl);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	memcpy(f.eth.val.dst_mac, mac_b, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	fl = ibv_create_flow(qp, &f.attr);
	cr_assert(fl, "%s", strerror(errno));
	for (int i = 0; i < NWQ; i++)
		post_wq_recv(i);
	send_vec(&ms_vec[0]);
	wc = dt_poll1(rcq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.qp_num, 0x5a5a5a);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
}

/*
 * A WQ is an RQ of the firmware as a raw QP's is: a frame past the
 * receive buffer completes the WQE with a local length error and the WQ
 * goes on receiving (kernel commit 187a9830c921).
 */
Test(rss_traffic, a_frame_past_the_buffer_leaves_the_wq_ready)
{
	struct ibv_sge sge = { (uintptr_t)buf, 32, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_rwq_ind_table *t;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	t = table_of(0, 1);
	qp = rss_qp(t, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4, &fl);
	cr_assert_eq(ibv_post_wq_recv(wq[0], &wr, &bad), 0);
	send_vec(&ms_vec[0]);
	wc = dt_poll1(rcq);
	cr_expect_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 77);
	post_wq_recv(0);
	send_vec(&ms_vec[0]);
	wc = dt_poll1(rcq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "the WQ receives on: %s",
		     ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 0);
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
}

/*
 * The CQE holds the hash (rss_hash_result, CQE bytes 12-15) and what it
 * covered (rss_hash_type, byte 16: [3:2] 1 for IPv4, [7:6] 1 for TCP,
 * Linux include/linux/mlx5/device.h CQE_RSS_HTYPE_IP/_L4), which mlx5e
 * gives the kernel as the skb's hash and DPDK as the mbuf's.
 */
Test(rss_traffic, the_hash_and_its_fields_are_in_the_cqe)
{
	static const struct {
		uint64_t	fields;
		bool		tcp;
		uint8_t		type;
	} sel[] = {
		{ IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4, false, 1 << 2 },
		{ IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP |
		  IBV_RX_HASH_DST_PORT_TCP, true, 1 << 2 | 1 << 6 },
		{ IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP, false, 0 },
	};
	struct ibv_rwq_ind_table *t;

	t = table_of(0, 1);
	for (size_t k = 0; k < sizeof(sel) / sizeof(sel[0]); k++) {
		struct ibv_flow *fl;
		struct ibv_qp *qp = rss_qp(t, sel[k].fields, &fl);
		uint32_t want = sel[k].type ? (sel[k].tcp ? ms_vec[1].hash_tcp : ms_vec[1].hash_ip) : 0;
		const uint8_t *e;
		struct ibv_wc wc;
		uint32_t hash;

		post_wq_recv(0);
		send_vec(&ms_vec[1]);
		wc = dt_poll1(rcq);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		e = dt_last_cqe64(rcq);
		hash = (uint32_t)e[12] << 24 | (uint32_t)e[13] << 16 | (uint32_t)e[14] << 8 | e[15];
		cr_expect_eq(hash, want, "selection %zu: hash 0x%08x, want 0x%08x", k, hash, want);
		cr_expect_eq(e[16], sel[k].type, "selection %zu: type 0x%02x", k, e[16]);
		cr_expect_eq(e[29], 1 << 4 | 2 << 2, "TCP without ACK over IPv4, as parsed");
		cr_assert_eq(ibv_destroy_flow(fl), 0);
		cr_assert_eq(ibv_destroy_qp(qp), 0);
	}
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
}

/*
 * On a CQ compressing with mini-CQEs of the HASH format (DPDK's mlx5
 * default), the CQEs of frames with different hashes make one session:
 * each mini-CQE holds its frame's hash and byte count.
 */
Test(rss_zip, each_mini_cqe_holds_its_frames_hash)
{
	struct ibv_sge sge[NVEC];
	struct ibv_send_wr wr[NVEC], *bad;
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = rcq, .out = &dv } };
	struct ibv_rwq_ind_table *t;
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	const uint8_t *title, *mini;

	t = table_of(0, 1);
	qp = rss_qp(t, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4, &fl);
	/* five frames in one doorbell: one engine pass, one session */
	for (int v = 0; v < NVEC; v++) {
		uint8_t *f = buf + NWQ * 2048 + (size_t)v * 64;

		vec_frame(&ms_vec[v], f);
		sge[v] = (struct ibv_sge){ (uintptr_t)f, 64, mr->lkey };
		wr[v] = (struct ibv_send_wr){ .sg_list = &sge[v], .num_sge = 1,
					      .opcode = IBV_WR_SEND,
					      .send_flags = v + 1 < NVEC ? 0 : IBV_SEND_SIGNALED,
					      .next = v + 1 < NVEC ? &wr[v + 1] : NULL };
		post_wq_recv(0);
	}
	cr_assert_eq(ibv_post_send(sender, wr, &bad), 0);
	cr_assert_eq(dt_poll1(scq).status, IBV_WC_SUCCESS);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	title = dv.buf;
	mini = title + dv.cqe_size;
	for (uint64_t end = dt_now_ms() + 5000; (title[63] >> 4) == MLX5_CQE_INVALID;)
		cr_assert_lt(dt_now_ms(), end, "no CQE within 5 s");
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	cr_assert_eq(title[63] >> 2 & 3, 3, "a compressed session (format 3)");
	cr_assert_eq(be32toh(*(const uint32_t *)(title + 44)), NVEC, "of %d CQEs", NVEC);
	for (int v = 0; v < NVEC; v++) {
		uint32_t hash = be32toh(*(const uint32_t *)(mini + 8 * v));

		cr_expect_eq(hash, ms_vec[v].hash_ip, "mini-CQE %d: 0x%08x", v, hash);
		cr_expect_eq(be32toh(*(const uint32_t *)(mini + 8 * v + 4)), 64);
	}
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
}

Test(rss_traffic, toeplitz_over_ipv4_addresses)
{
	check_hashes(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4, false);
}

Test(rss_traffic, toeplitz_over_ipv4_and_tcp_ports)
{
	check_hashes(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP |
		     IBV_RX_HASH_DST_PORT_TCP, true);
}

/* UDP ports a TIR hashes are not a TCP segment's: the addresses alone pick the WQ. */
Test(rss_traffic, ports_of_another_protocol_are_left_out)
{
	check_hashes(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
		     IBV_RX_HASH_DST_PORT_UDP, false);
}

/* Toeplitz with Microsoft's key over n bytes, bit by bit as its specification writes it. */
static uint32_t toeplitz(const uint8_t *in, size_t n)
{
	uint32_t hash = 0;

	for (size_t bit = 0; bit < n * 8; bit++) {
		uint32_t window = 0;

		for (size_t k = 0; k < 32; k++)
			window = window << 1 | (ms_key[(bit + k) / 8] >> (7 - (bit + k) % 8) & 1u);
		if (in[bit / 8] >> (7 - bit % 8) & 1)
			hash ^= window;
	}
	return hash;
}

/*
 * IBV_RX_HASH_IPSEC_SPI selects the TIR's MLX5_HASH_FIELD_SEL_IPSEC_SPI
 * (create_rss_raw_qp_tir()): the SPI of an ESP header is hashed after the
 * addresses, where the ports would be, so ESP frames of one pair of
 * addresses spread by SPI over a table of the 8 WQs.
 */
Test(rss_traffic, the_ipsec_spi_is_hashed_after_the_addresses)
{
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(ctx,
		&(struct ibv_rwq_ind_table_init_attr){ .log_ind_tbl_size = 3, .ind_tbl = wq });
	struct ibv_flow *fl;
	struct ibv_qp *qp;
	unsigned seen = 0;

	cr_assert(t, "%s", strerror(errno));
	qp = rss_qp(t, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_IPSEC_SPI, &fl);
	for (uint32_t spi = 0x100; spi < 0x110; spi++) {
		uint8_t in[12] = { [8] = (uint8_t)(spi >> 24), (uint8_t)(spi >> 16),
				   (uint8_t)(spi >> 8), (uint8_t)spi };
		uint32_t want;
		struct ibv_wc wc;

		memcpy(in, ms_vec[0].src, 4);
		memcpy(in + 4, ms_vec[0].dst, 4);
		want = toeplitz(in, sizeof(in)) & 7;
		post_wq_recv((int)want);
		send_ipv4(ms_vec[0].src, ms_vec[0].dst, 50, spi);	/* ESP */
		wc = dt_poll1(rcq);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "SPI %#x: %s", spi,
			     ibv_wc_status_str(wc.status));
		cr_expect_eq(wc.wr_id, want, "SPI %#x: WQ %" PRIu64 ", not %u", spi, wc.wr_id, want);
		cr_expect_eq(dt_last_cqe64(rcq)[16], 1 << 2 | 3 << 6,
			     "the CQE's rss_hash_type: IPv4 and the SPI");
		seen |= 1u << want;
	}
	cr_expect_gt(__builtin_popcount(seen), 1, "the SPI spreads the frames");
	cr_assert_eq(ibv_destroy_flow(fl), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_rwq_ind_table(t), 0);
}
