/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The send queue of a raw packet QP: WQEs with an Ethernet segment (an
 * inline header of the size libmlx5 learnt from the context, then data
 * segments) complete as sends; what the device refuses ends the QP with
 * the error CQE of a ConnectX; a rate limit paces the frames.  No flow
 * rule steers them anywhere (test_raw_flow.c has those).  On InfiniBand
 * libmlx5 inlines 18 bytes of each frame (the context answers no inline
 * mode there), on RoCE none (MLX5_USER_INLINE_MODE_NONE, a ConnectX-6).
 */
#include <inttypes.h>
#include <linux/capability.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t buf[4096];

static void setup(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 1 },
	};
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(pd && cq && mr);
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(pd, &ia);
	if (!qp && errno == EPERM)
		cr_skip_test("needs CAP_NET_RAW (root)");
	cr_assert(qp, "%s", strerror(errno));
	dt_raw_to_rts(qp);
}

static void teardown(void)
{
	if (qp)
		cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(raw_send, .init = setup, .fini = teardown, .timeout = 30);
TestSuite(raw_send_roce, .init = setup, .fini = teardown, .timeout = 30);

/* suite raw_send_roce on RoCE: this binary again with RFEMU_LINK_LAYER=eth */
Test(raw_send, on_roce, .timeout = 120)
{
	test_rerun_on_roce("raw_send_roce/*");
}

static int send_frame(uint32_t off, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)(buf + off), len, lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void frame_completes(void)
{
	struct ibv_sge rsge = { (uintptr_t)(buf + 2048), 2048, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	memset(buf, 0xa5, 128);
	cr_assert_eq(ibv_post_recv(qp, &rwr, &rbad), 0);
	cr_assert_eq(send_frame(0, 128, mr->lkey), 0);
	wc = dt_poll1(cq);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(wc.qp_num, qp->qp_num);
	/* no flow steers it anywhere: the receive stays posted */
	dt_poll_none(cq, 100);
}

Test(raw_send, frame_completes)
{
	frame_completes();
}

Test(raw_send_roce, frame_completes)
{
	frame_completes();
}

/*
 * A gather entry of another PD's key: local protection error, the SQ in
 * ERR and the RQ ready: SQE (raw_flow::a_send_error_leaves_the_rq_receiving).
 */
Test(raw_send_roce, bad_lkey)
{
	struct ibv_wc wc;

	cr_assert_eq(send_frame(0, 64, mr->lkey + 0x100), 0);
	wc = dt_poll1(cq);
	cr_expect_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(et_qp_state(qp), IBV_QPS_SQE);
}

/*
 * Write one send WQE by hand, as libmlx5 would but with our values: an
 * Ethernet segment claiming an inline header of inline_sz bytes (none
 * carried), one data segment of len bytes, ds 16-byte units in all; ring.
 */
static void post_by_hand(uint16_t inline_sz, uint32_t len, uint8_t ds)
{
	struct mlx5dv_qp dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };
	struct mlx5_wqe_eth_seg *eseg;
	uint8_t *w;
	uint64_t db;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	w = dv.sq.buf;
	memset(w, 0, 64);
	mlx5dv_set_ctrl_seg((void *)w, 0, MLX5_OPCODE_SEND, 0, qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, ds, 0, 0);
	eseg = (void *)(w + 16);
	eseg->inline_hdr_sz = htobe16(inline_sz);
	mlx5dv_set_data_seg((void *)(w + 32), len, mr->lkey, (uintptr_t)buf);
	atomic_thread_fence(memory_order_release);
	dv.dbrec[MLX5_SND_DBR] = htobe32(1);
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(&db, w, 8);
	*(volatile uint64_t *)dv.bf.reg = db;
}

static void expect_fatal(enum ibv_wc_status want)
{
	struct ibv_wc wc;

	cr_assert_eq(dt_poll(cq, &wc, 1, 5000), 1);
	cr_expect_eq(wc.status, want, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(et_qp_state(qp), IBV_QPS_SQE);
}

/* A frame shorter than its MAC header (libmlx5 posts none) is a local length error. */
Test(raw_send_roce, runt_frame)
{
	post_by_hand(0, 10, 3);
	expect_fatal(IBV_WC_LOC_LEN_ERR);
}

/*
 * An Ethernet segment that claims an inline header longer than the WQE's
 * DS hold: the device reads nothing past the WQE, the SQ ends with a local
 * QP operation error.
 */
Test(raw_send_roce, inline_header_past_the_wqe)
{
	post_by_hand(200, 64, 3);
	expect_fatal(IBV_WC_LOC_QP_OP_ERR);
}

/*
 * A burst bound lets an idle QP send that many bytes at once, then paces
 * the rest: at 100 kbps a 1,000-byte frame takes 80 ms, so without a burst
 * the fourth of five frames posted at once completes 240 ms after the
 * first at the earliest; with a 4,000-byte burst the first four go at
 * once, the fifth waits 80 ms.
 */
Test(raw_send, a_burst_bound_goes_at_once)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 100, .max_burst_sz = 4000,
					     .typical_pkt_sz = 1000 };
	uint64_t t0, t4, t5;

	memset(buf, 0xa5, 1000);
	cr_assert_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	t0 = dt_now_ms();
	for (int i = 0; i < 5; i++)
		cr_assert_eq(send_frame(0, 1000, mr->lkey), 0);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(dt_poll1(cq).status, IBV_WC_SUCCESS);
	t4 = dt_now_ms() - t0;
	cr_assert_eq(dt_poll1(cq).status, IBV_WC_SUCCESS);
	t5 = dt_now_ms() - t0;
	cr_expect_lt(t4, 200, "four frames within the burst took %" PRIu64 " ms", t4);
	cr_expect_geq(t5, 80, "the fifth paced after %" PRIu64 " ms", t5);
	/* a burst or packet size needs a rate (libmlx5 refuses it first) */
	rl.rate_limit = 0;
	cr_expect_eq(ibv_modify_qp_rate_limit(qp, &rl), EINVAL);
}

/*
 * A rate limit (ibv_modify_qp_rate_limit()) paces the frames: at
 * 1,000 kbps a 1,000-byte frame takes 8 ms, so eight of them, posted at
 * once, complete over at least 56 ms; without one they go at once.
 */
Test(raw_send, a_rate_limit_paces_the_frames)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000 };
	struct ibv_wc wc[8];
	uint64_t t0, t;
	int n = 0;

	memset(buf, 0xa5, 1000);
	cr_assert_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	t0 = dt_now_ms();
	for (int i = 0; i < 8; i++)
		cr_assert_eq(send_frame(0, 1000, mr->lkey), 0);
	while (n < 8) {
		int got = dt_poll(cq, wc, 8 - n, 5000);

		cr_assert_gt(got, 0, "%d of 8 frames sent", n);
		for (int i = 0; i < got; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "%s",
				     ibv_wc_status_str(wc[i].status));
		n += got;
	}
	t = dt_now_ms() - t0;
	cr_expect_geq(t, 56, "eight frames at 1,000 kbps in %" PRIu64 " ms", t);
	rl.rate_limit = 0;
	cr_assert_eq(ibv_modify_qp_rate_limit(qp, &rl), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(send_frame(0, 1000, mr->lkey), 0);
	for (n = 0; n < 8; n++)
		cr_assert_eq(dt_poll1(cq).status, IBV_WC_SUCCESS);
}
