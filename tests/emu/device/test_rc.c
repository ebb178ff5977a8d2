/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_rc.c - the device model executing RC work posted by libmlx5's
 * own ibv_post_send/ibv_post_recv, over the in-process loopback.
 */
#include "dev_test.h"

static struct dt t;

static void setup(void)
{
	dt_setup(&t);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_rc, .init = setup, .fini = teardown, .timeout = 30);

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

Test(dev_rc, send_recv)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 1000, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	fill(t.buf[0], 1000, 1);
	dt_post_recv(t.qp[1], 42, t.buf[1], 4096, t.mr[1]->lkey);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
	cr_assert_eq(wc.wr_id, 7);
	cr_assert_eq(wc.qp_num, t.qp[0]->qp_num);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.wr_id, 42);
	cr_assert_eq(wc.byte_len, 1000);
	cr_assert_eq(wc.src_qp, t.qp[0]->qp_num);
	cr_assert_eq(wc.qp_num, t.qp[1]->qp_num);
	cr_assert_eq(wc.slid, t.lid);
	cr_assert_eq(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_GRH), 0);
	cr_assert_eq(memcmp(t.buf[0], t.buf[1], 1000), 0);
	cr_assert_eq(t.buf[1][1000], 0, "wrote past the message");
}

Test(dev_rc, send_imm_inline_multi_sge)
{
	struct ibv_sge s[3] = {
		{ (uintptr_t)t.buf[0], 10, t.mr[0]->lkey },
		{ (uintptr_t)t.buf[0] + 100, 20, t.mr[0]->lkey },
		{ (uintptr_t)t.buf[0] + 200, 30, t.mr[0]->lkey },
	};
	struct ibv_sge r[2] = {
		{ (uintptr_t)t.buf[1], 25, t.mr[1]->lkey },
		{ (uintptr_t)t.buf[1] + 1000, 100, t.mr[1]->lkey },
	};
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = r, .num_sge = 2 }, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = s, .num_sge = 3, .opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE, .imm_data = htobe32(0xdeadbeef),
	};
	uint8_t expect[60];
	struct ibv_wc wc;

	fill(t.buf[0], 4096, 3);
	memcpy(expect, t.buf[0], 10);
	memcpy(expect + 10, t.buf[0] + 100, 20);
	memcpy(expect + 30, t.buf[0] + 200, 30);
	cr_assert_eq(ibv_post_recv(t.qp[1], &rwr, &rbad), 0);
	dt_post(t.qp[0], &wr);
	memset(t.buf[0], 0xee, 4096);	/* inline: the data is in the WQE already */
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.byte_len, 60);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc.imm_data), 0xdeadbeef);
	cr_assert_eq(memcmp(t.buf[1], expect, 25), 0);
	cr_assert_eq(memcmp(t.buf[1] + 1000, expect + 25, 35), 0);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
}

/*
 * Inline RDMA WRITEs of 800 bytes and of all the QP takes (828: libmlx5
 * sizes the WQE up to the 1024 bytes of max_sq_desc_sz), 14 WQEBBs each,
 * 100 of them through a ring of 1024 WQEBBs, so some wrap at its end:
 * each arrives whole, from the WQE (the source is overwritten once posted).
 */
Test(dev_rc, inline_write_of_800_bytes)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
		.max_inline_data = 800,
	};
	struct ibv_qp *qp[2] = { dt_create_qp(&t, 0, &o), dt_create_qp(&t, 1, &o) };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	uint32_t max;

	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(qp[i], qp[!i]->qp_num, t.lid, &o), 0);
	cr_assert_eq(ibv_query_qp(qp[0], &a, IBV_QP_CAP, &ia), 0);
	max = a.cap.max_inline_data;
	cr_assert_eq(max, 828, "1024 - 192 (ctrl and UMR) - 4");
	for (unsigned n = 0; n < 100; n++) {
		uint32_t len = n % 2 ? max : 800;
		struct ibv_sge s = { (uintptr_t)t.buf[0], len, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = n, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			.wr.rdma = { (uintptr_t)t.buf[1] + 64, t.mr[1]->rkey },
		};
		uint8_t expect[1024];
		struct ibv_wc wc;

		fill(t.buf[0], len, (uint8_t)n);
		memcpy(expect, t.buf[0], len);
		memset(t.buf[1], 0, 2048);
		dt_post(qp[0], &wr);
		memset(t.buf[0], 0xee, len);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write %u of %u bytes: %s", n, len,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, n);
		cr_assert_eq(memcmp(t.buf[1] + 64, expect, len), 0, "write %u of %u bytes", n, len);
		cr_assert_eq(t.buf[1][63], 0);
		cr_assert_eq(t.buf[1][64 + len], 0);
	}
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
}

/*
 * More SGEs than max_sge (30), as many as libmlx5's WQEs hold: 52 send
 * SGEs in a 1024-byte send WQE, 32 receive SGEs in a 512-byte receive
 * WQE.  The kernel refuses neither (it sizes a user QP by its rings), so
 * a ConnectX makes the QPs and moves a SEND gathered from 52 pieces into
 * 32.
 */
Test(dev_rc, gather_52_scatter_32)
{
	enum { NS = 52, NR = 32, SLEN = 9, RLEN = 16 };
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = NS,
			 .max_recv_sge = NR },
	};
	struct ibv_sge ss[NS], rs[NR];
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = ss, .num_sge = NS, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 6, .sg_list = rs, .num_sge = NR }, *bad;
	uint8_t expect[NS * SLEN], got[NS * SLEN];
	struct ibv_qp *qp[2];
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr qa;
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++) {
		ia.send_cq = ia.recv_cq = t.cq[i];
		qp[i] = ibv_create_qp(t.pd, &ia);
		cr_assert(qp[i], "%u send and %u receive SGEs: %s", NS, NR, strerror(errno));
	}
	cr_assert_eq(ibv_query_qp(qp[1], &a, IBV_QP_CAP, &qa), 0);
	cr_assert_eq(a.cap.max_send_sge, NS);
	cr_assert_eq(a.cap.max_recv_sge, NR, "a 512-byte stride");
	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(qp[i], qp[!i]->qp_num, t.lid, &o), 0);

	/* every other 16 bytes of the receive buffer, 16 at a time */
	for (int i = 0; i < NR; i++)
		rs[i] = (struct ibv_sge){ (uintptr_t)t.buf[1] + 32 * i, RLEN, t.mr[1]->lkey };
	cr_assert_eq(ibv_post_recv(qp[1], &rwr, &bad), 0);
	/* 9 bytes from every 64th */
	for (int i = 0; i < NS; i++) {
		ss[i] = (struct ibv_sge){ (uintptr_t)t.buf[0] + 64 * i, SLEN, t.mr[0]->lkey };
		fill(t.buf[0] + 64 * i, SLEN, (uint8_t)(i + 1));
		memcpy(expect + SLEN * i, t.buf[0] + 64 * i, SLEN);
	}
	dt_post(qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 6);
	cr_assert_eq(wc.byte_len, NS * SLEN);
	for (int i = 0; i < NS * SLEN; i++)
		got[i] = t.buf[1][32 * (i / RLEN) + i % RLEN];
	cr_assert_eq(memcmp(got, expect, sizeof(got)), 0);
	cr_assert_eq(t.buf[1][16], 0, "the gaps untouched");
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
}

Test(dev_rc, rdma_write_and_imm)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 5000, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[1] + 64, t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	fill(t.buf[0], 5000, 9);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(memcmp(t.buf[1] + 64, t.buf[0], 5000), 0);
	cr_assert_eq(t.buf[1][63], 0);
	cr_assert_eq(t.buf[1][64 + 5000], 0);
	dt_poll_none(t.cq[1], 20);	/* a plain write consumes no receive */

	/* with immediate: consumes a receive, reports byte_len and imm */
	dt_post_recv(t.qp[1], 77, t.buf[1] + 8192, 16, t.mr[1]->lkey);
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0x1234);
	s.length = 100;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert_eq(wc.byte_len, 100);
	cr_assert_eq(be32toh(wc.imm_data), 0x1234);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
}

Test(dev_rc, rdma_write_large_segmented)
{
	/* more than one wire packet (32 KiB): exercises PSN ranges */
	struct ibv_sge s = { (uintptr_t)t.buf[0], DT_BUF, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	fill(t.buf[0], DT_BUF, 5);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(t.buf[1], t.buf[0], DT_BUF), 0);
}

Test(dev_rc, rdma_read)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0] + 16, 40000, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[1] + 8, t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	fill(t.buf[1], DT_BUF, 11);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
	cr_assert_eq(wc.byte_len, 40000);
	cr_assert_eq(memcmp(t.buf[0] + 16, t.buf[1] + 8, 40000), 0);
	cr_assert_eq(t.buf[0][15], 0);
}

Test(dev_rc, atomics)
{
	uint64_t *target = (uint64_t *)(t.buf[1] + 64);
	uint64_t *result = (uint64_t *)t.buf[0];
	struct ibv_sge s = { (uintptr_t)result, 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { (uintptr_t)target, 5, 0, t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	*target = 100;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_FETCH_ADD);
	cr_assert_eq(wc.byte_len, 8);
	cr_assert_eq(*result, 100);
	cr_assert_eq(*target, 105);

	/* compare-and-swap that matches, then one that does not */
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 105;
	wr.wr.atomic.swap = 7;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_COMP_SWAP);
	cr_assert_eq(*result, 105);
	cr_assert_eq(*target, 7);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(*result, 7);
	cr_assert_eq(*target, 7);

	/* misaligned: the responder refuses, memory untouched */
	wr.wr.atomic.remote_addr = (uintptr_t)target + 4;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(*target, 7);
}

Test(dev_rc, selective_signaling_and_wrap)
{
	/* 300 WQEs through a 64-entry SQ: the ring wraps several times */
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
	};
	struct ibv_wc wc[8];
	int done = 0;

	for (int i = 0; i < 300; i++) {
		bool sig = i % 16 == 15;

		*(uint64_t *)t.buf[0] = (uint64_t)i;
		wr.send_flags = IBV_SEND_INLINE | (sig ? IBV_SEND_SIGNALED : 0);
		wr.wr_id = (uint64_t)i;
		wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 8 * (uint64_t)i;
		wr.wr.rdma.rkey = t.mr[1]->rkey;
		dt_post(t.qp[0], &wr);
		if (sig) {
			cr_assert_eq(dt_poll(t.cq[0], wc, 1, 5000), 1);
			cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
			cr_assert_eq(wc[0].wr_id, (uint64_t)i, "CQE only for signaled WQEs");
			done++;
		}
	}
	cr_assert_eq(done, 18);
	dt_poll_none(t.cq[0], 20);
	for (int i = 0; i < 288; i++)
		cr_assert_eq(((uint64_t *)t.buf[1])[i], (uint64_t)i);
}

Test(dev_rc, bad_rkey_is_remote_access_error_and_flushes)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr[2] = {
		{ .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		  .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey ^ 0x100 } },
		{ .wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		  .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey } },
	};
	struct ibv_wc wc;

	wr[0].next = &wr[1];
	fill(t.buf[0], 64, 1);
	dt_post(t.qp[0], &wr[0]);
	/* the failing WQE reports an error though unsignaled, the next one flushes */
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 1);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc.wr_id, 2);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(t.buf[1][i], 0, "target memory touched");
	dt_expect_async(t.ctx, IBV_EVENT_QP_ACCESS_ERR, 2000);
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		cr_assert_eq(ibv_query_qp(t.qp[0], &a, IBV_QP_STATE, &ia), 0);
		cr_assert_eq(a.qp_state, IBV_QPS_ERR);
		cr_assert_eq(ibv_query_qp(t.qp[1], &a, IBV_QP_STATE, &ia), 0);
		cr_assert_eq(a.qp_state, IBV_QPS_ERR);
	}
}

Test(dev_rc, out_of_bounds_and_access_rights)
{
	struct ibv_mr *ro = ibv_reg_mr(t.pd, t.buf[1] + 4096, 4096, IBV_ACCESS_REMOTE_READ);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[1] + 4096, ro->rkey },
	};
	struct ibv_wc wc;

	cr_assert(ro);
	fill(t.buf[0], 64, 1);
	dt_post(t.qp[0], &wr);	/* write to a read-only MR */
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(t.buf[1][4096 + i], 0);
	cr_assert_eq(ibv_dereg_mr(ro), 0);
}

/*
 * An MR re-registered to another range takes writes there under the same
 * rkey, and leaves the old range alone; re-registered without remote
 * write, it refuses them.
 */
Test(dev_rc, rereg_mr_moves_and_restricts)
{
	struct ibv_mr *m = ibv_reg_mr(t.pd, t.buf[1] + 4096, 4096,
				      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(m);
	fill(t.buf[0], 64, 1);
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 4096;
	wr.wr.rdma.rkey = m->rkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);

	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, t.buf[1] + 12288,
				  4096, 0), 0);
	fill(t.buf[0], 64, 2);
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 12288;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(t.buf[1] + 12288, t.buf[0], 64), 0);
	fill(t.buf[0], 64, 1);
	cr_assert_eq(memcmp(t.buf[1] + 4096, t.buf[0], 64), 0, "old range untouched");

	cr_assert_eq(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	fill(t.buf[0], 64, 3);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	fill(t.buf[0], 64, 2);
	cr_assert_eq(memcmp(t.buf[1] + 12288, t.buf[0], 64), 0, "refused write landed");
	cr_assert_eq(ibv_dereg_mr(m), 0);
}

Test(dev_rc, bad_lkey_is_local_protection_error)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey + 0x100 };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
	};
	struct ibv_wc wc;

	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 9);
	for (int i = 0; i < 64; i++)
		cr_assert_eq(t.buf[1][i], 0);
}

Test(dev_rc, receive_too_small)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 200, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	dt_post_recv(t.qp[1], 5, t.buf[1], 100, t.mr[1]->lkey);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_LOC_LEN_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 5);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "%s", ibv_wc_status_str(wc.status));
}

Test(dev_rc, flush_on_error_state)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[3];

	for (int i = 0; i < 3; i++)
		dt_post_recv(t.qp[1], 100 + (uint64_t)i, t.buf[1], 64, t.mr[1]->lkey);
	cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_STATE), 0);
	cr_assert_eq(dt_poll(t.cq[1], wc, 3, 5000), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR);
		cr_assert_eq(wc[i].wr_id, 100 + (uint64_t)i);
	}
	/* receives posted in ERR are flushed as well */
	dt_post_recv(t.qp[1], 200, t.buf[1], 64, t.mr[1]->lkey);
	cr_assert_eq(dt_poll(t.cq[1], wc, 1, 5000), 1);
	cr_assert_eq(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc[0].wr_id, 200);
}

Test(dev_rc, fence_after_read)
{
	/* a fenced write waits for the READ before it: it sees the old value */
	struct ibv_sge rs = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_sge ws = { (uintptr_t)t.buf[0] + 64, 8, t.mr[0]->lkey };
	struct ibv_send_wr wr[2] = {
		{ .sg_list = &rs, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		  .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey } },
		{ .sg_list = &ws, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		  .send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED,
		  .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey } },
	};
	struct ibv_wc wc;

	wr[0].next = &wr[1];
	*(uint64_t *)t.buf[1] = 111;
	*(uint64_t *)(t.buf[0] + 64) = 222;
	dt_post(t.qp[0], &wr[0]);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(*(uint64_t *)t.buf[0], 111);
	cr_assert_eq(*(uint64_t *)t.buf[1], 222);
}

Test(dev_rc, rnr_retry_exceeded)
{
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 1, .retry_cnt = 7,
				.timeout = 14, .min_rnr_timer = 1 };
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp *q[2];
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++)
		q[i] = dt_create_qp(&t, i, &o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(q[i], q[!i]->qp_num, t.lid, &o), 0);
	dt_post(q[0], &wr);	/* nothing posted at the responder */
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));

	/* with infinite RNR retry, a late receive rescues the send */
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(q[i]), 0);
	o.rnr_retry = 7;
	for (int i = 0; i < 2; i++)
		q[i] = dt_create_qp(&t, i, &o);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(dt_connect(q[i], q[!i]->qp_num, t.lid, &o), 0);
	dt_post(q[0], &wr);
	usleep(20000);
	dt_post_recv(q[1], 1, t.buf[1], 64, t.mr[1]->lkey);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 8);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(ibv_destroy_qp(q[i]), 0);
}
