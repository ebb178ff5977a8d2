/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_poll_assist.c - an application's empty ibv_poll_cq() or
 * ibv_start_poll() runs the device in its own thread
 * (emu/interpose/verbs.c, emu_dev_poll_assist() in emu/device/engine.c),
 * and its ibv_req_notify_cq() hands the device back to the engine thread.
 *
 * The engine is told to look for doorbells only rarely (no trap, no hot
 * window, sleeps growing to a minute) and, once an application polls, to
 * leave the device to its polls for a minute: whatever the engine thread
 * would have done comes too late for these tests.
 */
#define _GNU_SOURCE	/* dladdr() */
#include <dlfcn.h>

#include "wire_test.h"

static struct dt t;

static void slow_engine(void)
{
	setenv("RFEMU_DOORBELL_TRAP", "0", 1);
	setenv("RFEMU_HOT_MS", "0", 1);
	setenv("RFEMU_SPIN_US", "0", 1);
	setenv("RFEMU_IDLE_MAX_US", "60000000", 1);
	setenv("RFEMU_POLL_ASSIST_US", "60000000", 1);
}

static void setup(void)
{
	slow_engine();
	dt_setup(&t);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_poll_assist, .init = setup, .fini = teardown, .timeout = 60);

/* Whether the function at f is librfemu.so's. */
static bool ours(const void *f)
{
	Dl_info info;

	cr_assert(dladdr(f, &info) && info.dli_fname, "no object holds %p", f);
	return strstr(info.dli_fname, "librfemu") != NULL;
}

/* Post a signaled 8-byte RDMA write from t.buf[0] to raddr/rkey on qp. */
static void post_write8(struct ibv_qp *qp, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { raddr, rkey },
	};

	dt_post(qp, &wr);
}

/* Enough empty polls for the engine to leave the device to them. */
static void poll_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	for (int i = 0; i < 32; i++)
		cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
}

Test(dev_poll_assist, an_empty_poll_runs_the_device)
{
	struct rfemu_dev_stats s0;
	struct ibv_wc wc;
	uint64_t t0;

	cr_assert(ours((const void *)t.ctx->ops.poll_cq), "ibv_poll_cq() is not wrapped");
	cr_assert(ours((const void *)t.ctx->ops.req_notify_cq), "ibv_req_notify_cq() is not wrapped");
	usleep(1000000);	/* the engine now sleeps for half a second or more */
	s0 = wt_stats();
	memcpy(t.buf[0], "assisted", 8);
	t0 = dt_now_ms();
	post_write8(t.qp[0], (uintptr_t)t.buf[1], t.mr[1]->rkey);
	cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 5000), 1, "no completion within 5 s");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_lt(dt_now_ms() - t0, 200, "the write took %llu ms: the engine did it",
		     (unsigned long long)(dt_now_ms() - t0));
	cr_assert_arr_eq(t.buf[1], "assisted", 8);
	cr_assert_gt(wt_stats().poll_assists, s0.poll_assists);
}

/* An extended CQ of 16 entries on t.ctx. */
static struct ibv_cq_ex *cq_ex_create(void)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *cq = ibv_create_cq_ex(t.ctx, &a);

	cr_assert(cq, "ibv_create_cq_ex: %s", strerror(errno));
	return cq;
}

/* An RC QP whose send CQ is cq, connected to a QP of the second context. */
static struct ibv_qp *qp_on(struct ibv_cq *cq, struct ibv_qp **peer)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = t.cq[0], .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp *qp = ibv_create_qp(t.pd, &ia);

	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	*peer = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(qp, (*peer)->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(*peer, qp->qp_num, t.lid, &o), 0);
	return qp;
}

Test(dev_poll_assist, an_empty_start_poll_runs_the_device)
{
	struct ibv_cq_ex *cq = cq_ex_create();
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct rfemu_dev_stats s0;
	struct ibv_qp *qp, *peer;
	uint64_t t0;
	int err;

	cr_assert(ours((const void *)cq->start_poll), "ibv_start_poll() is not wrapped");
	qp = qp_on(ibv_cq_ex_to_cq(cq), &peer);
	usleep(1000000);	/* the engine now sleeps for half a second or more */
	s0 = wt_stats();
	memcpy(t.buf[0], "extended", 8);
	t0 = dt_now_ms();
	post_write8(qp, (uintptr_t)t.buf[1], t.mr[1]->rkey);
	while ((err = ibv_start_poll(cq, &pa)) == ENOENT && dt_now_ms() - t0 < 5000)
		;
	cr_assert_eq(err, 0, "ibv_start_poll: %d", err);
	cr_assert_eq(cq->status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_next_poll(cq), ENOENT);
	ibv_end_poll(cq);
	cr_assert_lt(dt_now_ms() - t0, 200, "the write took %llu ms: the engine did it",
		     (unsigned long long)(dt_now_ms() - t0));
	cr_assert_arr_eq(t.buf[1], "extended", 8);
	cr_assert_gt(wt_stats().poll_assists, s0.poll_assists);

	/* still attached to the QP: it lives on, and so does its wrapper */
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), EBUSY);
	cr_assert(ours((const void *)cq->start_poll));
	cr_assert_eq(ibv_start_poll(cq, &pa), ENOENT);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

/* A destroyed CQ is forgotten: its place is free for the next one. */
Test(dev_poll_assist, destroyed_extended_cqs_are_forgotten)
{
	for (int i = 0; i < 300; i++) {
		struct ibv_cq_ex *cq = cq_ex_create();

		cr_assert(ours((const void *)cq->start_poll), "CQ %d is not wrapped", i);
		cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
}

/*
 * Polling, the application receives its own packets: here the peer host's
 * acknowledgement of a WRITE, which the engine thread does not wait for
 * while the application polls (RFEMU_POLL_ASSIST_US).
 */
Test(dev_poll_assist, an_empty_poll_takes_the_packets)
{
	char line[256], arg[] = "4096";
	char *argv[] = { "helper_wire", "target", arg, NULL };
	struct wt_conn c = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1,
			     .timeout = 10, .retry_cnt = 1 };
	unsigned qpn, lid, rkey;
	unsigned long long addr;
	struct wt_peer peer;
	struct ibv_qp *qp;
	struct ibv_wc wc;

	wt_peer_start(&peer, argv);
	wt_peer_line(&peer, line, sizeof(line));
	cr_assert_eq(sscanf(line, "%u %u %u %llu", &qpn, &lid, &rkey, &addr), 4,
		     "helper said '%s'", line);
	qp = wt_create_qp(t.pd, t.cq[0], 16);
	c.dqpn = qpn;
	c.dlid = (uint16_t)lid;
	cr_assert_eq(wt_connect(qp, &c), 0, "connect: %s", strerror(errno));
	snprintf(line, sizeof(line), "%u %u", qp->qp_num, t.lid);
	wt_peer_say(&peer, line);
	wt_peer_line(&peer, line, sizeof(line));
	cr_assert_str_eq(line, "ready");

	poll_empty(t.cq[0]);
	for (int i = 0; i < 20; i++) {
		post_write8(qp, addr, rkey);
		cr_assert_eq(dt_poll(t.cq[0], &wc, 1, 5000), 1, "no completion within 5 s");
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d: the acknowledgement was lost",
			     wc.status);
	}
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(wt_peer_end(&peer), 0);
}

/*
 * An application that arms its CQ is going to sleep: the engine takes the
 * device back at once (here its trap catches the doorbell that follows),
 * instead of leaving it to polls that have stopped.
 */
static void setup_trap(void)
{
	slow_engine();
	unsetenv("RFEMU_DOORBELL_TRAP");
	dt_setup(&t);
}

TestSuite(dev_poll_assist_arm, .init = setup_trap, .fini = teardown, .timeout = 60);

Test(dev_poll_assist_arm, an_arm_hands_the_device_back)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t.ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(t.ctx, 16, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = t.cq[0], .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .retry_cnt = 7, .timeout = 14 };
	struct ibv_qp *qp, *peer;

	cr_assert(cq, "%s", strerror(errno));
	qp = ibv_create_qp(t.pd, &ia);
	cr_assert(qp);
	peer = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(qp, peer->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(peer, qp->qp_num, t.lid, &o), 0);

	for (int i = 0; i < 3; i++) {
		poll_empty(cq);
		cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
		post_write8(qp, (uintptr_t)t.buf[1], t.mr[1]->rkey);
		cr_assert(dt_event_within(ch, cq, 5000), "no completion event within 5 s");
		cr_assert_eq(dt_poll1(cq).status, IBV_WC_SUCCESS);
	}

	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

/* The device does not run, or assists are off: libmlx5's own calls stay. */
static void setup_device_off(void)
{
	setenv("RFEMU_DEVICE", "off", 1);
	dt_setup(&t);
}

TestSuite(dev_poll_assist_device_off, .init = setup_device_off, .fini = teardown, .timeout = 60);

/* libmlx5's own calls: the context's ops and an extended CQ's start_poll */
static void calls_are_libmlx5s(void)
{
	struct ibv_cq_ex *cq = cq_ex_create();

	cr_assert_not(ours((const void *)t.ctx->ops.poll_cq));
	cr_assert_not(ours((const void *)t.ctx->ops.req_notify_cq));
	cr_assert_not(ours((const void *)cq->start_poll));
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

Test(dev_poll_assist_device_off, the_calls_are_libmlx5s)
{
	calls_are_libmlx5s();
}

static void setup_assist_off(void)
{
	setenv("RFEMU_POLL_ASSIST_US", "0", 1);
	dt_setup(&t);
}

TestSuite(dev_poll_assist_off, .init = setup_assist_off, .fini = teardown, .timeout = 60);

Test(dev_poll_assist_off, the_calls_are_libmlx5s)
{
	calls_are_libmlx5s();
}
