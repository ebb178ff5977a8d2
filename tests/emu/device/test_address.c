/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_address.c - a packet reaches a QP only through the address of the
 * QP's port: its DLID on InfiniBand (IBA vol. 1 chapter 7), its DGID on
 * RoCE and in a GRH (chapter 8), not its destination QPN alone.
 *
 * A path or address vector that names no port loses every packet, as a
 * fabric would: an RC requester retries out with the target untouched, a
 * UD sender completes and nobody receives.  The same QPs with the right
 * address are the control.  Suite dev_addr runs on InfiniBand and runs
 * this binary again on RoCE for suite dev_addr_roce.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */

#include "wire_test.h"

#define QKEY		0x11111111u
#define NOBODY_LID	0x777	/* host 238's range: no host runs there */

static bool untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void write8(struct ibv_qp *qp, struct dt *t, uint64_t va)
{
	struct ibv_sge s = { (uintptr_t)t->buf[0], 8, t->mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { va, t->mr[1]->rkey },
	};

	dt_post(qp, &wr);
}

/* A UD SEND of 8 bytes from t->qp[0] through ah to t->qp[1]. */
static void ud_send(struct dt *t, struct ibv_ah *ah)
{
	struct ibv_sge s = { (uintptr_t)t->buf[0], 8, t->mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = t->qp[1]->qp_num, .remote_qkey = QKEY },
	};

	dt_post(t->qp[0], &wr);
}

static void ud_setup(struct dt *t)
{
	struct dt_qp_opts o = { .type = IBV_QPT_UD };

	dt_setup_opts(t, &o);
	memcpy(t->buf[0], "ADDRESS!", 8);
}

/*
 * ah names nobody: the SEND completes at the sender and is received by
 * nobody; through good (the receiver's address) it is received.
 */
static void ud_check(struct dt *t, struct ibv_ah *nobody, struct ibv_ah *good)
{
	struct rfemu_dev_stats before = wt_stats();
	struct ibv_wc wc;

	dt_post_recv(t->qp[1], 1, t->buf[1], 128, t->mr[1]->lkey);
	ud_send(t, nobody);
	wc = dt_poll1(t->cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	dt_poll_none(t->cq[1], 200);
	cr_assert(untouched(t->buf[1], 128), "a SEND to nobody was received");
	cr_assert_gt(wt_stats().drop_address, before.drop_address);

	ud_send(t, good);
	wc = dt_poll1(t->cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	wc = dt_poll1(t->cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "control: status %d", wc.status);
	cr_assert(!memcmp(t->buf[1] + 40, "ADDRESS!", 8));
}

/*
 * RC: qp[0] sends through its path; a path that names nobody retries out
 * and leaves the target untouched.
 */
static void rc_check(struct dt *t, struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_wc wc;

	write8(qp, t, (uintptr_t)t->buf[1]);
	cr_assert_eq(dt_poll(cq, &wc, 1, 10000), 1);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "status %d", wc.status);
	cr_assert(untouched(t->buf[1], DT_BUF), "the WRITE to nobody landed");
	dt_poll_none(t->cq[1], 20);
}

/* ---- InfiniBand ------------------------------------------------------------ */

TestSuite(dev_addr, .timeout = 60);

/* An RC path whose DLID names no port: the WRITE is lost, not executed. */
Test(dev_addr, rc_write_through_a_wrong_dlid)
{
	struct wt_conn c = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1, .timeout = 8,
			     .retry_cnt = 2 };
	struct rfemu_dev_stats before;
	struct ibv_qp *qp[2];
	struct dt t;

	dt_setup(&t);
	memcpy(t.buf[0], "WRONGLID", 8);
	for (int i = 0; i < 2; i++)
		qp[i] = wt_create_qp(t.pd, t.cq[i], 16);
	/* qp[1] takes qp[0]'s packets (QPN, LID); qp[0]'s path leads nowhere */
	c.dqpn = qp[1]->qp_num;
	c.dlid = NOBODY_LID;
	cr_assert_eq(wt_connect(qp[0], &c), 0);
	c.dqpn = qp[0]->qp_num;
	c.dlid = t.lid;
	cr_assert_eq(wt_connect(qp[1], &c), 0);
	before = wt_stats();
	rc_check(&t, qp[0], t.cq[0]);
	cr_assert_gt(wt_stats().drop_address, before.drop_address);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(ibv_destroy_qp(qp[i]), 0);
	dt_teardown(&t);
}

/* A UD address vector to DLID 0x777: sent, received by nobody. */
Test(dev_addr, ud_send_to_a_dlid_of_nobody)
{
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *nobody, *good;
	struct dt t;

	ud_setup(&t);
	aa.dlid = NOBODY_LID;
	nobody = ibv_create_ah(t.pd, &aa);
	aa.dlid = t.lid;
	good = ibv_create_ah(t.pd, &aa);
	cr_assert(nobody && good);
	ud_check(&t, nobody, good);
	cr_expect_eq(ibv_destroy_ah(nobody), 0);
	cr_expect_eq(ibv_destroy_ah(good), 0);
	dt_teardown(&t);
}

/* This binary again on RoCE, running suite dev_addr_roce only. */
Test(dev_addr, on_roce, .timeout = 120)
{
	test_rerun_on_roce("dev_addr_roce/*");
}

/* ---- RoCE ------------------------------------------------------------------- */

TestSuite(dev_addr_roce, .timeout = 60);

/* This port's GID 0, and one like it that no port owns (no such port byte). */
static bool roce_gids(struct dt *t, union ibv_gid *own, union ibv_gid *nobody)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(t->ctx, 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		return false;
	cr_assert_eq(ibv_query_gid(t->ctx, 1, 0, own), 0);
	*nobody = *own;
	nobody->raw[15] ^= 0x40;
	return true;
}

/* An RC path whose DGID no host owns: the WRITE is lost. */
Test(dev_addr_roce, rc_write_to_a_gid_of_nobody)
{
	union ibv_gid own, nobody;
	struct wt_conn c = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1, .timeout = 8,
			     .retry_cnt = 2 };
	struct ibv_qp *qp[2];
	struct dt t;

	ud_setup(&t);
	if (!roce_gids(&t, &own, &nobody)) {
		dt_teardown(&t);
		cr_skip_test("InfiniBand: suite dev_addr runs this on RoCE");
	}
	for (int i = 0; i < 2; i++)
		qp[i] = wt_create_qp(t.pd, t.cq[i], 16);
	c.dqpn = qp[1]->qp_num;
	c.dgid = &nobody;
	cr_assert_eq(wt_connect(qp[0], &c), 0, "connect: %s", strerror(errno));
	c.dqpn = qp[0]->qp_num;
	c.dgid = &own;
	cr_assert_eq(wt_connect(qp[1], &c), 0, "connect: %s", strerror(errno));
	rc_check(&t, qp[0], t.cq[0]);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(ibv_destroy_qp(qp[i]), 0);
	dt_teardown(&t);
}

/* A UD address vector to a GID no host owns: sent, received by nobody. */
Test(dev_addr_roce, ud_send_to_a_gid_of_nobody)
{
	union ibv_gid own, nobody;
	struct ibv_ah_attr aa = { .port_num = 1, .is_global = 1, .grh.hop_limit = 64 };
	struct ibv_ah *bad, *good;
	struct dt t;

	ud_setup(&t);
	if (!roce_gids(&t, &own, &nobody)) {
		dt_teardown(&t);
		cr_skip_test("InfiniBand: suite dev_addr runs this on RoCE");
	}
	aa.grh.dgid = nobody;
	bad = ibv_create_ah(t.pd, &aa);
	aa.grh.dgid = own;
	good = ibv_create_ah(t.pd, &aa);
	cr_assert(bad && good, "ibv_create_ah: %s", strerror(errno));
	ud_check(&t, bad, good);
	cr_expect_eq(ibv_destroy_ah(bad), 0);
	cr_expect_eq(ibv_destroy_ah(good), 0);
	dt_teardown(&t);
}
