/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_fault.c - the device model under fault injection (emu/wire/fault.c).
 *
 * The model reads RFEMU_DROP & co. when its engine starts, i.e. at the
 * first ibv_open_device of a process; Criterion runs every test in a
 * process of its own, so each test sets its faults with setenv() before it
 * opens the device.  RFEMU_FAULT_SEED makes the fault pattern repeatable
 * (the interleaving with timers may still differ from run to run, so the
 * assertions hold for any pattern: reliable traffic arrives complete and in
 * order, unreliable traffic may lose messages but never delivers a
 * damaged one).
 */
#include "dev_test.h"

TestSuite(wire_fault, .timeout = 60);

#define WINDOW	8			/* messages in flight */
#define SLOT	(DT_BUF / WINDOW)	/* bytes per message slot */

static void faults(const char *drop, const char *corrupt, const char *delay_us,
		   const char *delay_frac)
{
	setenv("RFEMU_FAULT_SEED", "12345", 1);
	if (drop)
		setenv("RFEMU_DROP", drop, 1);
	if (corrupt)
		setenv("RFEMU_CORRUPT", corrupt, 1);
	if (delay_us)
		setenv("RFEMU_DELAY_US", delay_us, 1);
	if (delay_frac)
		setenv("RFEMU_DELAY_FRAC", delay_frac, 1);
}

/* Content of message i, so the receiver can check every byte. */
static uint8_t pat(uint32_t msg, uint32_t off)
{
	return (uint8_t)(msg * 31 + off * 7 + (off >> 8));
}

static uint32_t msg_len(uint32_t i)
{
	return 1 + (i * 977) % (SLOT - 1);
}

/* An RC pair with a short transport timeout, so losses recover quickly. */
static void lossy_rc_setup(struct dt *t)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
		.timeout = 8,		/* 4.096 us * 2^8 = 1 ms */
	};

	dt_setup_opts(t, &o);
}

/*
 * n SENDs in windows of WINDOW: every receive must complete successfully,
 * in posting order, with exactly the bytes sent.
 */
static void rc_send_stream(struct dt *t, uint32_t n)
{
	for (uint32_t base = 0; base < n; base += WINDOW) {
		uint32_t k = n - base < WINDOW ? n - base : WINDOW;
		struct ibv_wc wc[WINDOW];

		memset(t->buf[1], 0, DT_BUF);
		for (uint32_t j = 0; j < k; j++) {
			uint32_t i = base + j, len = msg_len(i);
			struct ibv_sge s = { (uintptr_t)t->buf[0] + j * SLOT, len, t->mr[0]->lkey };
			struct ibv_send_wr wr = {
				.wr_id = i, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
			};

			for (uint32_t b = 0; b < len; b++)
				t->buf[0][j * SLOT + b] = pat(i, b);
			dt_post_recv(t->qp[1], i, t->buf[1] + j * SLOT, SLOT, t->mr[1]->lkey);
			dt_post(t->qp[0], &wr);
		}
		cr_assert_eq(dt_poll(t->cq[1], wc, (int)k, 20000), (int)k,
			     "receives of messages %u.. missing", base);
		for (uint32_t j = 0; j < k; j++) {
			uint32_t i = base + j, len = msg_len(i);

			cr_assert_eq(wc[j].status, IBV_WC_SUCCESS, "message %u: %s", i,
				     ibv_wc_status_str(wc[j].status));
			cr_assert_eq(wc[j].wr_id, i, "out of order: got %llu, want %u",
				     (unsigned long long)wc[j].wr_id, i);
			cr_assert_eq(wc[j].byte_len, len);
			for (uint32_t b = 0; b < len; b++)
				cr_assert_eq(t->buf[1][j * SLOT + b], pat(i, b),
					     "message %u byte %u damaged", i, b);
			cr_assert_eq(t->buf[1][j * SLOT + len], 0, "message %u overran", i);
		}
		cr_assert_eq(dt_poll(t->cq[0], wc, (int)k, 20000), (int)k);
		for (uint32_t j = 0; j < k; j++) {
			cr_assert_eq(wc[j].status, IBV_WC_SUCCESS, "send %u: %s", base + j,
				     ibv_wc_status_str(wc[j].status));
			cr_assert_eq(wc[j].wr_id, base + j);
		}
	}
}

/* A 60000-byte WRITE (two wire packets) then a READ of it back. */
static void rc_write_read(struct dt *t)
{
	const uint32_t len = 60000;
	struct ibv_sge s = { (uintptr_t)t->buf[0], len, t->mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t->buf[1], t->mr[1]->rkey },
	};
	struct ibv_wc wc;

	for (uint32_t b = 0; b < len; b++)
		t->buf[0][b] = pat(7, b);
	memset(t->buf[1], 0, DT_BUF);
	dt_post(t->qp[0], &wr);
	wc = dt_poll1(t->cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(t->buf[1], t->buf[0], len), 0, "written data damaged");

	memset(t->buf[0], 0, DT_BUF);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr_id = 2;
	dt_post(t->qp[0], &wr);
	wc = dt_poll(t->cq[0], &wc, 1, 20000) == 1 ? wc : (struct ibv_wc){ .status = IBV_WC_GENERAL_ERR };
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "read: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(memcmp(t->buf[0], t->buf[1], len), 0, "read data damaged");
}

static void rc_under_faults(void)
{
	struct dt t;

	lossy_rc_setup(&t);
	rc_send_stream(&t, 400);
	rc_write_read(&t);
	dt_teardown(&t);
}

Test(wire_fault, rc_drop)
{
	faults("0.05", NULL, NULL, NULL);
	rc_under_faults();
}

Test(wire_fault, rc_corrupt)
{
	faults(NULL, "0.05", NULL, NULL);
	rc_under_faults();
}

/* Delaying a share of the packets reorders them: sequence NAKs, go-back-N. */
Test(wire_fault, rc_delay_reorder)
{
	faults(NULL, NULL, "300", "0.3");
	rc_under_faults();
}

Test(wire_fault, rc_all_faults)
{
	faults("0.03", "0.03", "200", "0.2");
	rc_under_faults();
}

/* Every receive-consuming request finds "no receive": with rnr_retry 0 the first RNR NAK is final. */
Test(wire_fault, force_rnr_retry_exceeded)
{
	struct dt t;
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 0, .retry_cnt = 7, .timeout = 14,
		.min_rnr_timer = 1,
	};
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 5, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	setenv("RFEMU_FORCE_RNR", "1", 1);
	dt_setup_opts(&t, &o);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 100, t.mr[0]->lkey };
	memset(t.buf[0], 0xab, 100);
	dt_post_recv(t.qp[1], 1, t.buf[1], 4096, t.mr[1]->lkey);
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR, "got %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 5);
	dt_poll_none(t.cq[1], 50);
	cr_assert_eq(t.buf[1][0], 0, "the refused message was placed");
	dt_teardown(&t);
}

Test(wire_fault, force_remote_access_error)
{
	struct dt t;
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 6, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	setenv("RFEMU_FORCE_REMOTE_ACCESS_ERR", "1", 1);
	dt_setup(&t);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 4000, t.mr[0]->lkey };
	memset(t.buf[0], 0xcd, 4000);
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1] + 100;
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "got %s", ibv_wc_status_str(wc.status));
	for (uint32_t b = 0; b < DT_BUF; b++)
		cr_assert_eq(t.buf[1][b], 0, "target byte %u written", b);
	dt_expect_async(t.ctx, IBV_EVENT_QP_ACCESS_ERR, 5000);
	dt_teardown(&t);
}

/*
 * UD under loss or corruption: messages go missing, but whatever arrives is
 * intact and in sending order.
 */
static void ud_lossy(unsigned n)
{
	struct dt t;
	struct dt_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *ah;
	const uint32_t len = 200, rslot = 256;
	unsigned got = 0, last = 0;
	bool any = false;

	cr_assert_leq(n * rslot, DT_BUF);
	cr_assert_leq(n, 64, "the fixture's RQ holds 64 receives");
	dt_setup_opts(&t, &o);
	aa.dlid = t.lid;
	ah = ibv_create_ah(t.pd, &aa);
	cr_assert(ah);
	for (unsigned i = 0; i < n; i++)
		dt_post_recv(t.qp[1], i, t.buf[1] + i * rslot, rslot, t.mr[1]->lkey);
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)t.buf[0] + (i % 32) * len, len, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = t.qp[1]->qp_num, .remote_qkey = 0x11111111 },
		};
		struct ibv_wc wc;

		for (uint32_t b = 0; b < len; b++)
			t.buf[0][(i % 32) * len + b] = pat(i, b);
		dt_post(t.qp[0], &wr);
		wc = dt_poll1(t.cq[0]);	/* one at a time: the local slot is reused */
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	}
	/* receives complete in order; collect until the wire is quiet */
	for (;;) {
		struct ibv_wc wc;

		if (dt_poll(t.cq[1], &wc, 1, 300) != 1)
			break;
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.byte_len, len + 40);
		/* a receive WQE is consumed per delivered message, in order */
		cr_assert_eq(wc.wr_id, got, "receive WQEs out of order");
		{
			const uint8_t *m = t.buf[1] + wc.wr_id * rslot + 40;
			unsigned seq = 0;

			/* its first byte names it: pat(seq, 0) is one-to-one for seq < 256 */
			while (seq < n && pat(seq, 0) != m[0])
				seq++;
			cr_assert_lt(seq, n, "message %u unidentifiable", got);
			cr_assert(!any || seq > last, "message %u after %u", seq, last);
			for (uint32_t b = 0; b < len; b++)
				cr_assert_eq(m[b], pat(seq, b), "message %u byte %u damaged", seq, b);
			last = seq;
			any = true;
		}
		got++;
	}
	cr_assert_gt(got, 0, "nothing arrived");
	cr_assert_lt(got, n, "all %u arrived: the fault injector did nothing", n);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	dt_teardown(&t);
}

Test(wire_fault, ud_drop_loses_never_damages)
{
	faults("0.3", NULL, NULL, NULL);
	ud_lossy(64);
}

Test(wire_fault, ud_corrupt_is_discarded)
{
	faults(NULL, "0.3", NULL, NULL);
	ud_lossy(64);
}
