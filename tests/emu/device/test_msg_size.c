/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_msg_size.c - messages up to the device's max_msg_sz, over the
 * in-process loopback.
 *
 * An RC message needs more packets than the requester keeps unacknowledged
 * (its window): it goes out in pieces as the ACKs come, and completes.
 */
#include <sys/mman.h>

#include "wire_test.h"

TestSuite(dev_msg_size, .timeout = 60);

#define MIB		(1024u * 1024)

/* A word per 4 bytes that differs at every offset and with the seed. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i + 4 <= n; i += 4) {
		uint32_t v = ((uint32_t)i + seed) * 2654435761u;

		memcpy(p + i, &v, 4);
	}
}

/* The two QPs of t (RC, timeout) and a registered buffer of `bytes` on each side. */
static void big_setup(struct dt *t, uint8_t *b[2], struct ibv_mr *mr[2], size_t bytes,
		      uint8_t timeout)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = timeout,
	};

	dt_setup_opts(t, &o);
	for (int i = 0; i < 2; i++) {
		b[i] = aligned_alloc(4096, bytes);
		cr_assert(b[i]);
		mr[i] = ibv_reg_mr(t->pd, b[i], bytes, DT_ACC_ALL);
		cr_assert(mr[i], "ibv_reg_mr: %s", strerror(errno));
	}
}

static void big_teardown(struct dt *t, uint8_t *b[2], struct ibv_mr *mr[2])
{
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(ibv_dereg_mr(mr[i]), 0);
		free(b[i]);
	}
	dt_teardown(t);
}

/* One RC WRITE of len bytes from b[0] to b[1]: it completes, the data intact. */
static void write_one(struct dt *t, uint8_t *b[2], struct ibv_mr *mr[2], size_t len)
{
	struct ibv_sge s = { (uintptr_t)b[0], (uint32_t)len, mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)b[1], mr[1]->rkey },
	};
	struct ibv_wc wc;

	fill(b[0], len, 1);
	memset(b[1], 0, len);
	dt_post(t->qp[0], &wr);
	cr_assert_eq(dt_poll(t->cq[0], &wc, 1, 30000), 1, "the WRITE never completed");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 1);
	cr_assert(!memcmp(b[0], b[1], len), "the data written differs");
}

/*
 * One 32 MiB RC WRITE: 1024 packets of 32 KiB, twice the requester's
 * window.  Without emission in pieces the message stopped when the link
 * backed up and never went on.
 */
Test(dev_msg_size, rc_write_32mib)
{
	const size_t len = 32 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];

	big_setup(&t, b, mr, len, 14);
	write_one(&t, b, mr, len);
	big_teardown(&t, b, mr);
}

/*
 * The same on a wire that drops 1% of the packets (ACKs and NAKs too) with
 * a 1 ms transport timer: the losses inside the message are sent again from
 * the first packet not acknowledged, the message completes intact.
 */
Test(dev_msg_size, rc_write_32mib_lossy)
{
	const size_t len = 32 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];

	setenv("RFEMU_FAULT_SEED", "4242", 1);
	setenv("RFEMU_DROP", "0.01", 1);
	big_setup(&t, b, mr, len, 8);
	write_one(&t, b, mr, len);
	cr_assert_gt(wt_stats().drop_fault, 0, "nothing was dropped");
	big_teardown(&t, b, mr);
}

/*
 * n (at most 4) RC READs of len bytes each, posted with one doorbell from
 * b[1] into b[0]: each completes, in order, with its data.
 */
static void read_n(struct dt *t, uint8_t *b[2], struct ibv_mr *mr[2], unsigned n, size_t len)
{
	struct ibv_sge s[4];
	struct ibv_send_wr wr[4];

	cr_assert_leq(n, 4);
	fill(b[1], n * len, 3);
	memset(b[0], 0, n * len);
	for (unsigned i = 0; i < n; i++) {
		s[i] = (struct ibv_sge){ (uintptr_t)b[0] + i * len, (uint32_t)len, mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = 10 + i, .sg_list = &s[i], .num_sge = 1,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
			.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)b[1] + i * len, mr[1]->rkey },
		};
	}
	dt_post(t->qp[0], &wr[0]);
	for (unsigned i = 0; i < n; i++) {
		struct ibv_wc wc;

		cr_assert_eq(dt_poll(t->cq[0], &wc, 1, 60000), 1, "READ %u never completed", i);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "READ %u: %s", i,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, 10 + i, "READ %u completed out of order", i);
		cr_assert_eq(wc.byte_len, len);
	}
	cr_assert(!memcmp(b[0], b[1], n * len), "the data read differs");
}

/*
 * One 320 MiB RC READ: more than the loopback ring (16 MiB) and the link's
 * backlog limit (256 MiB) hold.  Its responses are sent as the link takes
 * them; queued at once, those past the limit were lost on every try
 * (RETRY_EXC_ERR).
 */
Test(dev_msg_size, rc_read_320mib, .timeout = 120)
{
	const size_t len = 320 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];

	big_setup(&t, b, mr, len, 14);
	read_n(&t, b, mr, 1, len);
	cr_assert_eq(wt_stats().drop_link, 0, "responses lost on the link");
	big_teardown(&t, b, mr);
}

/*
 * Four 80 MiB READs posted with one doorbell on a QP with max_rd_atomic 4:
 * the four requests arrive together and the responder owes 320 MiB at
 * once, which it answers one READ after the other.
 */
Test(dev_msg_size, rc_read_4x80mib_at_once, .timeout = 120)
{
	const size_t len = 80 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];

	big_setup(&t, b, mr, 4 * len, 14);
	read_n(&t, b, mr, 4, len);
	cr_assert_eq(wt_stats().drop_link, 0, "responses lost on the link");
	big_teardown(&t, b, mr);
}

/*
 * A 320 MiB READ (past the backlog limit) on a wire that drops 0.2% of the
 * packets (requests and responses) with a 1 ms transport timer: each lost
 * response is asked for again from its PSN, and the READ completes intact.
 * (Each loss costs what is in flight behind it, up to the 16 MiB loopback
 * ring: 1% took 10 s here.)
 */
Test(dev_msg_size, rc_read_320mib_lossy, .timeout = 120)
{
	const size_t len = 320 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];

	setenv("RFEMU_FAULT_SEED", "4243", 1);
	setenv("RFEMU_DROP", "0.002", 1);
	big_setup(&t, b, mr, len, 8);
	read_n(&t, b, mr, 1, len);
	cr_assert_gt(wt_stats().drop_fault, 0, "nothing was dropped");
	big_teardown(&t, b, mr);
}

/* One 32 MiB RC SEND into one receive of 32 MiB: both sides complete. */
Test(dev_msg_size, rc_send_32mib)
{
	const size_t len = 32 * MIB;
	struct dt t;
	uint8_t *b[2];
	struct ibv_mr *mr[2];
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	big_setup(&t, b, mr, len, 14);
	fill(b[0], len, 2);
	memset(b[1], 0, len);
	dt_post_recv(t.qp[1], 3, b[1], (uint32_t)len, mr[1]->lkey);
	s = (struct ibv_sge){ (uintptr_t)b[0], (uint32_t)len, mr[0]->lkey };
	dt_post(t.qp[0], &wr);
	cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 30000), 1, "the SEND never completed");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "receive: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 3);
	cr_assert_eq(wc.byte_len, len);
	cr_assert(!memcmp(b[0], b[1], len), "the data received differs");
	big_teardown(&t, b, mr);
}

/*
 * One byte more than the port's max_msg_sz (1 GiB), on a fresh pair of
 * `type` QPs: the requester fails the WQE with a local length error and the
 * QP goes to ERR, as a ConnectX does, before reading any of it.  The MR
 * covers MAP_NORESERVE memory that is never touched.
 */
static void over_max_msg(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	struct dt_qp_opts o = {
		.type = type, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
	};
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct dt t;
	struct ibv_mr *mr;
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &s, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;
	size_t len;
	uint8_t *p;

	dt_setup_opts(&t, &o);
	cr_assert_eq(ibv_query_port(t.ctx, 1, &pa), 0);
	cr_assert_eq(pa.max_msg_sz, 1u << 30);
	len = (size_t)pa.max_msg_sz + 1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	mr = ibv_reg_mr(t.pd, p, len, DT_ACC_ALL);
	cr_assert(mr, "ibv_reg_mr: %s", strerror(errno));
	s = (struct ibv_sge){ (uintptr_t)p, (uint32_t)len, mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_LOC_LEN_ERR, "type %d op %d: %s", type, op,
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(ibv_query_qp(t.qp[0], &qa, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_ERR);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	munmap(p, len);
	dt_teardown(&t);
}

Test(dev_msg_size, over_max_msg_sz_is_local_length_error)
{
	over_max_msg(IBV_QPT_RC, IBV_WR_RDMA_WRITE);
	over_max_msg(IBV_QPT_RC, IBV_WR_SEND);
	over_max_msg(IBV_QPT_RC, IBV_WR_RDMA_READ);
	over_max_msg(IBV_QPT_UC, IBV_WR_RDMA_WRITE);
	over_max_msg(IBV_QPT_UC, IBV_WR_SEND);
}
