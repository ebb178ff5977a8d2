/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_misc.c - UD with GRH and Q_Key, SRQ, memory windows, send with
 * invalidate, completion events, the ibv_wr_* API and 128-byte CQEs, all
 * through libmlx5's data path on the device model (CQ overrun: test_robust.c).
 */
#include "dev_test.h"

static struct dt t;

static void teardown(void)
{
	dt_teardown(&t);
}

static void setup_rc(void)
{
	dt_setup(&t);
}

static void setup_ud(void)
{
	struct dt_qp_opts o = { .type = IBV_QPT_UD };

	dt_setup_opts(&t, &o);
}

TestSuite(dev_ud, .init = setup_ud, .fini = teardown, .timeout = 30);
TestSuite(dev_misc, .init = setup_rc, .fini = teardown, .timeout = 30);

static void ud_send(struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], len, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(99),
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	};
	struct ibv_wc wc;

	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
}

Test(dev_ud, send_grh_qkey)
{
	struct ibv_ah_attr aa = { .dlid = t.lid, .port_num = 1, .sl = 3 };
	struct ibv_ah *ah = ibv_create_ah(t.pd, &aa);
	union ibv_gid gid;
	struct ibv_wc wc;

	cr_assert(ah);
	for (int i = 0; i < 256; i++)
		t.buf[0][i] = (uint8_t)i;
	dt_post_recv(t.qp[1], 5, t.buf[1], 40 + 256, t.mr[1]->lkey);
	ud_send(ah, t.qp[1]->qp_num, 0x11111111, 256);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 256 + 40, "UD byte_len counts the GRH space");
	cr_assert_eq(wc.src_qp, t.qp[0]->qp_num);
	cr_assert_eq(wc.sl, 3);
	cr_assert_eq(wc.slid, t.lid);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc.imm_data), 99);
	cr_assert_eq(wc.wc_flags & IBV_WC_GRH, 0);
	cr_assert_eq(memcmp(t.buf[1] + 40, t.buf[0], 256), 0);
	ibv_destroy_ah(ah);

	/* a global AH: the GRH lands in the first 40 bytes */
	cr_assert_eq(ibv_query_gid(t.ctx, 1, 0, &gid), 0);
	aa.is_global = 1;
	aa.grh.dgid = gid;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(t.pd, &aa);
	cr_assert(ah);
	memset(t.buf[1], 0, 512);
	dt_post_recv(t.qp[1], 6, t.buf[1], 40 + 256, t.mr[1]->lkey);
	ud_send(ah, t.qp[1]->qp_num, 0x11111111, 100);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert(wc.wc_flags & IBV_WC_GRH);
	cr_assert_eq(wc.byte_len, 140);
	cr_assert_eq(t.buf[1][0] >> 4, 6, "GRH version");
	cr_assert_eq(memcmp(t.buf[1] + 24, gid.raw, 16), 0, "GRH dgid");
	cr_assert_eq(memcmp(t.buf[1] + 8, gid.raw, 16), 0, "GRH sgid");

	/* a wrong Q_Key is dropped silently; the receive stays posted */
	dt_post_recv(t.qp[1], 7, t.buf[1], 40 + 256, t.mr[1]->lkey);
	ud_send(ah, t.qp[1]->qp_num, 0x22222222, 10);
	dt_poll_none(t.cq[1], 50);
	ud_send(ah, t.qp[1]->qp_num, 0x11111111, 10);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.wr_id, 7);
	ibv_destroy_ah(ah);
}

Test(dev_misc, srq_receives)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(t.pd, &sa);
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
				.timeout = 14, .srq = srq };
	struct ibv_sge s = { (uintptr_t)t.buf[0], 32, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp *q[2];
	struct ibv_wc wc;

	cr_assert(srq);
	q[1] = dt_create_qp(&t, 1, &o);
	o.srq = NULL;
	q[0] = dt_create_qp(&t, 0, &o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(q[i], q[!i]->qp_num, t.lid, &o), 0);
	for (int round = 0; round < 40; round++) {
		struct ibv_sge r = { (uintptr_t)t.buf[1] + 64 * (round % 8), 64, t.mr[1]->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 1000 + (uint64_t)round, .sg_list = &r, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		cr_assert_eq(ibv_post_srq_recv(srq, &rwr, &bad), 0);
		memset(t.buf[0], round, 32);
		dt_post(q[0], &wr);
		wc = dt_poll1(t.cq[1]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 1000 + (uint64_t)round);
		cr_assert_eq(wc.qp_num, q[1]->qp_num);
		cr_assert_eq(wc.byte_len, 32);
		cr_assert_eq(t.buf[1][64 * (round % 8) + 31], (uint8_t)round);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	}
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(q[i]), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

Test(dev_misc, memory_window_type2_and_send_invalidate)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	uint32_t rkey;
	struct ibv_send_wr bind = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_sge s = { (uintptr_t)t.buf[0], 16, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(mw, "ibv_alloc_mw: %s", strerror(errno));
	/* bind on the responder's QP: type 2 windows belong to one QP */
	rkey = ibv_inc_rkey(mw->rkey);
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = rkey;
	bind.bind_mw.bind_info.mr = t.mr[1];
	bind.bind_mw.bind_info.addr = (uintptr_t)t.buf[1] + 4096;
	bind.bind_mw.bind_info.length = 4096;
	bind.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	dt_post(t.qp[1], &bind);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_BIND_MW);

	/* the window's rkey works inside the window only */
	memset(t.buf[0], 0xab, 16);
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 4096 + 100;
	wr.wr.rdma.rkey = rkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(t.buf[1][4096 + 100], 0xab);

	/* send with invalidate kills it */
	{
		struct ibv_send_wr inv = {
			.wr_id = 3, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
			.invalidate_rkey = rkey,
		};

		dt_post_recv(t.qp[1], 9, t.buf[1], 64, t.mr[1]->lkey);
		dt_post(t.qp[0], &inv);
		wc = dt_poll1(t.cq[1]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_assert(wc.wc_flags & IBV_WC_WITH_INV);
		cr_assert_eq(wc.invalidated_rkey, rkey);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	}
	/* now the old rkey is refused and the memory is left alone */
	memset(t.buf[0], 0xcd, 16);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(t.buf[1][4096 + 100], 0xab);
	/* the responder QP is in ERR now; restore the fixture's QPs */
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
}

Test(dev_misc, memory_window_type1_bind_unbind)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind b = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = t.mr[1], .addr = (uintptr_t)t.buf[1] + 8192, .length = 1024,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(mw);
	/* type 1 windows are not tied to a QP: bind through the requester */
	cr_assert_eq(ibv_bind_mw(t.qp[1], mw, &b), 0, "ibv_bind_mw: %s", strerror(errno));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_BIND_MW);
	*(uint64_t *)(t.buf[1] + 8192 + 16) = 0x1122334455667788ull;
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 8192 + 16;
	wr.wr.rdma.rkey = mw->rkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(*(uint64_t *)t.buf[0], 0x1122334455667788ull);

	/* outside the window: refused */
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 8192 + 1020;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
}

Test(dev_misc, memory_window_type2_zero_based_local_invalidate)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr bind = {
		.opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = {
			.mr = t.mr[1], .addr = (uintptr_t)t.buf[1] + 8192, .length = 1024,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED } },
	};
	struct ibv_send_wr linv = {
		.opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	};
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { 16, rkey },
	};
	struct ibv_wc wc;

	cr_assert(mw);
	dt_post(t.qp[1], &bind);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	*(uint64_t *)(t.buf[1] + 8192 + 16) = 0x55aa55aa55aa55aaull;
	dt_post(t.qp[0], &wr);	/* zero based: remote_addr is an offset */
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(*(uint64_t *)t.buf[0], 0x55aa55aa55aa55aaull);

	dt_post(t.qp[1], &linv);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_LOCAL_INV);
	*(uint64_t *)t.buf[0] = 0;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(*(uint64_t *)t.buf[0], 0);
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
}

Test(dev_misc, completion_events_and_solicited)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t.ctx);
	struct ibv_cq *cq = ibv_create_cq(t.ctx, 16, NULL, ch, 0);
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp_init_attr ia = {
		.send_cq = t.cq[1], .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *rq = ibv_create_qp(t.pd, &ia), *sq = dt_create_qp(&t, 0, &o);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	cr_assert(ch && cq && rq);
	cr_assert_eq(dt_connect(sq, rq->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(rq, sq->qp_num, t.lid, &o), 0);
	for (int i = 0; i < 4; i++)
		dt_post_recv(rq, (uint64_t)i, t.buf[1], 64, t.mr[1]->lkey);

	/* next-completion arm fires on the next CQE */
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	dt_post(sq, &wr);
	cr_assert(dt_event_within(ch, cq, 5000), "no completion event");
	wc = dt_poll1(cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);

	/* solicited-only: an unsolicited message does not fire, a solicited one does */
	cr_assert_eq(ibv_req_notify_cq(cq, 1), 0);
	dt_post(sq, &wr);
	wc = dt_poll1(cq);
	cr_assert(!dt_event_within(ch, cq, 100), "unsolicited message raised an event");
	wr.send_flags = IBV_SEND_SOLICITED;
	dt_post(sq, &wr);
	cr_assert(dt_event_within(ch, cq, 5000), "no solicited event");
	wc = dt_poll1(cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);

	/* no arm, no event */
	dt_post(sq, &wr);
	wc = dt_poll1(cq);
	cr_assert(!dt_event_within(ch, cq, 100), "event without an arm");

	cr_assert_eq(ibv_destroy_qp(sq), 0);
	cr_assert_eq(ibv_destroy_qp(rq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(dev_misc, wr_api_and_cq_ex)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = t.cq[0], .recv_cq = t.cq[0], .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = t.pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(t.ctx, &ca);
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp *qp, *peer;
	struct ibv_qp_ex *qx;
	struct ibv_poll_cq_attr pa = {};
	int ret, n = 0;
	uint64_t end = dt_now_ms() + 5000;

	cr_assert(cqx);
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(cqx);
	qp = ibv_create_qp_ex(t.ctx, &ia);
	cr_assert(qp, "ibv_create_qp_ex: %s", strerror(errno));
	peer = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(qp, peer->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(peer, qp->qp_num, t.lid, &o), 0);
	qx = ibv_qp_to_qp_ex(qp);
	*(uint64_t *)(t.buf[1] + 512) = 40;

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = 0;
	ibv_wr_rdma_write(qx, t.mr[1]->rkey, (uintptr_t)t.buf[1]);
	ibv_wr_set_inline_data(qx, "hello, device", 13);
	qx->wr_id = 2;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qx, t.mr[1]->rkey, (uintptr_t)t.buf[1] + 512, 2);
	ibv_wr_set_sge(qx, t.mr[0]->lkey, (uintptr_t)t.buf[0], 8);
	cr_assert_eq(ibv_wr_complete(qx), 0);

	while ((ret = ibv_start_poll(cqx, &pa)) == ENOENT) {
		cr_assert_lt(dt_now_ms(), end, "no completion");
		usleep(100);
	}
	cr_assert_eq(ret, 0);
	cr_assert_eq(cqx->status, IBV_WC_SUCCESS);
	cr_assert_eq(cqx->wr_id, 2);
	cr_assert_eq(ibv_wc_read_opcode(cqx), IBV_WC_FETCH_ADD);
	cr_assert_eq(ibv_wc_read_byte_len(cqx), 8);
	n++;
	ibv_end_poll(cqx);
	cr_assert_eq(n, 1);
	cr_assert_eq(memcmp(t.buf[1], "hello, device", 13), 0);
	cr_assert_eq(*(uint64_t *)t.buf[0], 40);
	cr_assert_eq(*(uint64_t *)(t.buf[1] + 512), 42);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
}

Test(dev_misc, cqe_128_bytes)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 16 };
	struct mlx5dv_cq_init_attr dv = {
		.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 128,
	};
	struct ibv_cq_ex *cqx = mlx5dv_create_cq(t.ctx, &ca, &dv);
	struct ibv_cq *cq;
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp, *peer;
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dcq = { .comp_mask = 0 };
	struct ibv_sge s = { (uintptr_t)t.buf[0], 300, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(cqx, "mlx5dv_create_cq: %s", strerror(errno));
	cq = ibv_cq_ex_to_cq(cqx);
	obj.cq.in = cq;
	obj.cq.out = &dcq;
	cr_assert_eq(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(dcq.cqe_size, 128);
	ia.send_cq = ia.recv_cq = cq;
	qp = ibv_create_qp(t.pd, &ia);
	peer = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(qp, peer->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(peer, qp->qp_num, t.lid, &o), 0);
	dt_post_recv(qp, 3, t.buf[0] + 4096, 512, t.mr[0]->lkey);
	memset(t.buf[1], 0x5a, 300);
	s.addr = (uintptr_t)t.buf[1];
	s.lkey = t.mr[1]->lkey;
	dt_post(peer, &wr);
	wc = dt_poll1(cq);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 300);
	cr_assert_eq(wc.src_qp, peer->qp_num);
	cr_assert_eq(t.buf[0][4096 + 299], 0x5a);
	/* the CQE64 sits in the second half of the 128-byte entry */
	{
		uint8_t *e = (uint8_t *)dcq.buf;

		cr_assert_eq(e[127] >> 4, MLX5_CQE_RESP_SEND);
		cr_assert_eq(be32toh(*(uint32_t *)(e + 64 + 44)), 300);
	}
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}
