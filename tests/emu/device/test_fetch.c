/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_fetch.c - how often the requester reads a send WQE from the queue:
 * once per execution. The WQE that goes out in the engine pass that parsed
 * it is sent from that parse, not fetched and checked a second time (the
 * per-WQE cost of the model: docs/emu-measurements.md, "Benchmark"); only
 * a retransmission reads it again.
 */
#include "wire_test.h"

static struct dt t;

static void setup(void)
{
	/* 4.096 us * 2^20 = 4.3 s: no retransmission in this test's life */
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 20,
	};

	dt_setup_opts(&t, &o);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_fetch, .init = setup, .fini = teardown, .timeout = 60);

/* n RDMA WRITEs of 8 bytes from qp[0] to qp[1]'s buffer, under one doorbell. */
static void post_writes(unsigned n, int inline_data)
{
	struct ibv_sge sge[16];
	struct ibv_send_wr wr[16];

	cr_assert_leq(n, 16);
	for (unsigned i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)t.buf[0] + 8 * i, 8, t.mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.send_flags = (inline_data ? IBV_SEND_INLINE : 0) |
				      (i + 1 == n ? IBV_SEND_SIGNALED : 0),
			.wr.rdma = { (uintptr_t)t.buf[1] + 8 * i, t.mr[1]->rkey },
		};
	}
	dt_post(t.qp[0], wr);
}

static void writes_fetched_once(int inline_data)
{
	struct rfemu_dev_stats before, after;
	struct ibv_wc wc;

	for (unsigned i = 0; i < 128; i++)
		t.buf[0][i] = (uint8_t)(i + 1);
	before = wt_stats();
	for (unsigned round = 0; round < 8; round++) {
		post_writes(16, inline_data);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, 15);
	}
	after = wt_stats();
	cr_assert(!memcmp(t.buf[1], t.buf[0], 128), "the writes did not land");
	cr_assert_eq(after.wqe_fetches - before.wqe_fetches, 8 * 16,
		     "128 WQEs read %llu times from the send queue",
		     (unsigned long long)(after.wqe_fetches - before.wqe_fetches));
}

Test(dev_fetch, inline_writes_fetched_once)
{
	writes_fetched_once(1);
}

Test(dev_fetch, sge_writes_fetched_once)
{
	writes_fetched_once(0);
}
