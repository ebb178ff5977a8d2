/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_protect.c - the protection matrix: every way of reaching memory
 * that was not granted, each refused as a ConnectX refuses it.
 *
 * The target is the responder's 64 KiB buffer, checksummed before and after
 * every attack, with regions registered over parts of it so that an access
 * the device wrongly accepted would land in memory that exists.  Each
 * attack expects the requester's error CQE (REM_ACCESS_ERR for a key,
 * bound, PD or MR access violation, REM_INV_REQ_ERR when the QP itself does
 * not allow the operation), both QPs in ERR, and the responder's async
 * event.  XRC: an SRQ of another domain, or no SRQ, is an invalid request.
 * Spoofed sources are test_spoof.c; window invalidation,
 * send-with-invalidate and re-registration are test_misc.c and
 * test_rc.c.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include "wire_test.h"

static struct dt t;

static void setup(void)
{
	dt_setup(&t);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_protect, .init = setup, .fini = teardown, .timeout = 30);

static uint64_t checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* A region of the target buffer at off, registered with access acc in pd. */
static struct ibv_mr *region(struct ibv_pd *pd, size_t off, size_t len, int acc)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, t.buf[1] + off, len, acc);

	cr_assert(mr, "ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/*
 * One attack from qp[0]: op on [raddr, raddr + len) under rkey.  The target
 * must be unchanged, the requester sees `status`, both QPs end in ERR and
 * the responder reports `event`.
 */
static void attack(enum ibv_wr_opcode op, uint32_t rkey, uint64_t raddr, uint32_t len,
		   enum ibv_wc_status status, enum ibv_event_type event)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], len, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0xa77ac, .sg_list = &s, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint64_t before;
	struct ibv_wc wc;

	for (size_t i = 0; i < DT_BUF; i++)
		t.buf[1][i] = (uint8_t)(i * 7 + 3);
	memset(t.buf[0], 0xee, DT_BUF);
	before = checksum(t.buf[1], DT_BUF);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.wr_id, 0xa77ac);
	cr_assert_eq(wc.status, status, "%s, expected %s", ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(status));
	dt_expect_async(t.ctx, event, 2000);
	cr_assert_eq(checksum(t.buf[1], DT_BUF), before, "the target was touched");
	if (op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP)
		for (uint32_t i = 0; i < len; i++)
			cr_assert_eq(t.buf[0][i], 0xee, "a refused READ/atomic delivered data");
	cr_assert_eq(wt_qp_state(t.qp[0]), IBV_QPS_ERR);
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_ERR);
}

static void access_err(enum ibv_wr_opcode op, uint32_t rkey, uint64_t raddr, uint32_t len)
{
	attack(op, rkey, raddr, len, IBV_WC_REM_ACCESS_ERR, IBV_EVENT_QP_ACCESS_ERR);
}

static uint64_t at(size_t off)
{
	return (uintptr_t)t.buf[1] + off;
}

/* ---- keys ---------------------------------------------------------------- */

Test(dev_protect, no_rkey)
{
	access_err(IBV_WR_RDMA_WRITE, 0, at(0), 8);
}

Test(dev_protect, never_issued_rkey)
{
	access_err(IBV_WR_RDMA_WRITE, (t.mr[1]->rkey & ~0x3fffu) | 0x3fff, at(0), 8);
}

Test(dev_protect, rkey_of_deregistered_mr)
{
	struct ibv_mr *mr = region(t.pd, 4096, 4096, DT_ACC_ALL);
	uint32_t rkey = mr->rkey;

	cr_assert_eq(ibv_dereg_mr(mr), 0);
	access_err(IBV_WR_RDMA_WRITE, rkey, at(4096), 8);
}

Test(dev_protect, stale_read_key)
{
	struct ibv_mr *mr = region(t.pd, 4096, 4096, DT_ACC_ALL);
	uint32_t rkey = mr->rkey;

	cr_assert_eq(ibv_dereg_mr(mr), 0);
	access_err(IBV_WR_RDMA_READ, rkey, at(4096), 64);
}

/* ---- bounds of an MR over [8 KiB, 12 KiB) ------------------------------- */

Test(dev_protect, past_the_end)
{
	struct ibv_mr *mr = region(t.pd, 8192, 4096, DT_ACC_ALL);

	access_err(IBV_WR_RDMA_WRITE, mr->rkey, at(8192 + 4096), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, crossing_the_end)
{
	struct ibv_mr *mr = region(t.pd, 8192, 4096, DT_ACC_ALL);

	access_err(IBV_WR_RDMA_WRITE, mr->rkey, at(8192 + 4096 - 4), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, below_the_start)
{
	struct ibv_mr *mr = region(t.pd, 8192, 4096, DT_ACC_ALL);

	access_err(IBV_WR_RDMA_WRITE, mr->rkey, at(8192 - 8), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, read_crossing_the_end)
{
	struct ibv_mr *mr = region(t.pd, 8192, 4096, DT_ACC_ALL);

	access_err(IBV_WR_RDMA_READ, mr->rkey, at(8192 + 2048), 4096);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, address_wrap)
{
	access_err(IBV_WR_RDMA_WRITE, t.mr[1]->rkey, UINT64_MAX - 3, 8);
}

Test(dev_protect, atomic_past_the_end)
{
	struct ibv_mr *mr = region(t.pd, 8192, 4096, DT_ACC_ALL);

	access_err(IBV_WR_ATOMIC_FETCH_AND_ADD, mr->rkey, at(8192 + 4096), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* ---- PD and access -------------------------------------------------------- */

Test(dev_protect, mr_of_another_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(t.ctx);
	struct ibv_mr *mr;

	cr_assert(pd2);
	mr = region(pd2, 16384, 4096, DT_ACC_ALL);
	access_err(IBV_WR_RDMA_WRITE, mr->rkey, at(16384), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
}

Test(dev_protect, write_to_read_only_mr)
{
	struct ibv_mr *mr = region(t.pd, 20480, 4096, IBV_ACCESS_REMOTE_READ);

	access_err(IBV_WR_RDMA_WRITE, mr->rkey, at(20480), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, read_of_write_only_mr)
{
	struct ibv_mr *mr = region(t.pd, 20480, 4096,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	access_err(IBV_WR_RDMA_READ, mr->rkey, at(20480), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, atomic_without_remote_atomic)
{
	struct ibv_mr *mr = region(t.pd, 24576, 4096, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);

	access_err(IBV_WR_ATOMIC_FETCH_AND_ADD, mr->rkey, at(24576), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_protect, cmp_swap_without_remote_atomic)
{
	struct ibv_mr *mr = region(t.pd, 24576, 4096, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);

	access_err(IBV_WR_ATOMIC_CMP_AND_SWP, mr->rkey, at(24576), 8);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* The QP, not the MR, forbids it: the responder answers invalid request. */
Test(dev_protect, qp_without_remote_write)
{
	struct ibv_qp_attr a = { .qp_access_flags = IBV_ACCESS_REMOTE_READ };

	cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_ACCESS_FLAGS), 0);
	attack(IBV_WR_RDMA_WRITE, t.mr[1]->rkey, at(0), 8, IBV_WC_REM_INV_REQ_ERR,
	       IBV_EVENT_QP_REQ_ERR);
}

Test(dev_protect, qp_without_remote_atomic)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
	};

	cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_ACCESS_FLAGS), 0);
	attack(IBV_WR_ATOMIC_FETCH_AND_ADD, t.mr[1]->rkey, at(0), 8,
	       IBV_WC_REM_INV_REQ_ERR, IBV_EVENT_QP_REQ_ERR);
}

/* ---- memory windows ------------------------------------------------------ */

/* A type-2 window bound on another QP is no key for this one. */
Test(dev_protect, window_of_another_qp)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_2);
	struct ibv_qp *x = dt_create_qp(&t, 1, &(struct dt_qp_opts){ .type = IBV_QPT_RC });
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
				.timeout = 14 };
	uint32_t rkey;
	struct ibv_send_wr bind = {
		.opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(mw);
	cr_assert_eq(dt_connect(x, t.qp[0]->qp_num, t.lid, &o), 0);
	rkey = ibv_inc_rkey(mw->rkey);
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = rkey;
	bind.bind_mw.bind_info.mr = t.mr[1];
	bind.bind_mw.bind_info.addr = at(28672);
	bind.bind_mw.bind_info.length = 4096;
	bind.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	dt_post(x, &bind);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	access_err(IBV_WR_RDMA_WRITE, rkey, at(28672), 8);
	cr_expect_eq(ibv_destroy_qp(x), 0);
	cr_expect_eq(ibv_dealloc_mw(mw), 0);
}

/* ---- UD -------------------------------------------------------------------- */

/* A wrong Q_Key is dropped silently at the receiver; the right one passes. */
Test(dev_protect_ud, wrong_qkey, .timeout = 30)
{
	struct dt u;
	struct dt_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *ah;
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct rfemu_dev_stats before;
	uint64_t sum;
	struct ibv_wc wc;

	dt_setup_opts(&u, &o);
	aa.dlid = u.lid;
	ah = ibv_create_ah(u.pd, &aa);
	cr_assert(ah);
	s = (struct ibv_sge){ (uintptr_t)u.buf[0], 64, u.mr[0]->lkey };
	memset(u.buf[0], 0x42, 64);
	memset(u.buf[1], 0x17, DT_BUF);
	sum = checksum(u.buf[1], DT_BUF);
	dt_post_recv(u.qp[1], 1, u.buf[1], 4096, u.mr[1]->lkey);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = u.qp[1]->qp_num;
	wr.wr.ud.remote_qkey = 0x22222222;	/* the receiver's is 0x11111111 */
	before = wt_stats();
	dt_post(u.qp[0], &wr);
	wc = dt_poll1(u.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "UD sends complete whatever the receiver does");
	dt_poll_none(u.cq[1], 200);
	cr_assert_eq(checksum(u.buf[1], DT_BUF), sum);
	cr_assert_eq(wt_stats().drop_qkey, before.drop_qkey + 1);
	cr_assert_eq(wt_qp_state(u.qp[1]), IBV_QPS_RTS);

	wr.wr.ud.remote_qkey = 0x11111111;
	dt_post(u.qp[0], &wr);
	wc = dt_poll1(u.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	wc = dt_poll1(u.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 40 + 64);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
	dt_teardown(&u);
}

/* ---- XRC ------------------------------------------------------------------- */

static struct ibv_srq *xrc_srq(struct ibv_xrcd *x, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC, .xrcd = x, .cq = cq, .pd = t.pd,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(t.ctx, &sa);
	struct ibv_sge s = { (uintptr_t)t.buf[1], 256, t.mr[1]->lkey };
	struct ibv_recv_wr wr = { .wr_id = 5, .sg_list = &s, .num_sge = 1 }, *bad;

	cr_assert(srq, "xrc srq: %s", strerror(errno));
	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	return srq;
}

/* An XRC initiator or target QP to RTS (target: RTR), PSNs matching. */
static void xrc_connect(struct ibv_qp *qp, uint32_t dest_qpn)
{
	const struct qpu_conn c = {
		.dqpn = dest_qpn, .dlid = t.lid, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rq_psn = 0x321, .sq_psn = 0x321,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.max_rd_atomic = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.rtr_only = qp->qp_type == IBV_QPT_XRC_RECV,
	};
	int ret = qpu_bring_up(qp, &c);

	cr_assert_eq(ret, 0, "XRC bring-up: %s", strerror(ret));
}

static struct ibv_xrcd *private_xrcd(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_xrcd *x = ibv_open_xrcd(t.ctx, &xa);

	cr_assert(x, "open_xrcd: %s", strerror(errno));
	return x;
}

/* An XRC target QP of domain x and an initiator (on t.cq[0]), connected to each other. */
static void xrc_pair(struct ibv_xrcd *x, struct ibv_qp **tgt, struct ibv_qp **ini)
{
	struct ibv_qp_init_attr_ex ra = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x,
	};
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = t.pd,
		.send_cq = t.cq[0], .recv_cq = t.cq[0],
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};

	*tgt = ibv_create_qp_ex(t.ctx, &ra);
	*ini = ibv_create_qp_ex(t.ctx, &ia);
	cr_assert(*tgt && *ini, "%s", strerror(errno));
	xrc_connect(*tgt, (*ini)->qp_num);
	xrc_connect(*ini, (*tgt)->qp_num);
}

/*
 * The SRQ an XRC SEND names must be an XRC SRQ of the target QP's domain:
 * one of another domain, or a number that is no SRQ, is refused (invalid
 * request, the target QP to ERR) and its receives stay untouched.
 */
static void xrc_wrong_srq(bool other_domain)
{
	struct ibv_xrcd *x1 = private_xrcd(), *x2 = private_xrcd();
	struct ibv_cq *cq2 = ibv_create_cq(t.ctx, 16, NULL, NULL, 0);
	struct ibv_srq *s1 = xrc_srq(x1, t.cq[1]), *s2 = xrc_srq(x2, cq2);
	struct ibv_qp *tgt, *ini;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint32_t n1, n2;
	uint64_t sum;
	struct ibv_wc wc;

	cr_assert(cq2, "%s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(s1, &n1), 0);
	cr_assert_eq(ibv_get_srq_num(s2, &n2), 0);
	xrc_pair(x1, &tgt, &ini);

	/* the control: the domain's own SRQ receives */
	memset(t.buf[0], 0x3c, 64);
	wr.qp_type.xrc.remote_srqn = n1;
	dt_post(ini, &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 64);

	memset(t.buf[1], 0x11, DT_BUF);
	sum = checksum(t.buf[1], DT_BUF);
	wr.qp_type.xrc.remote_srqn = other_domain ? n2 : (n2 | 0x3fff) + 0x77;
	dt_post(ini, &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "%s", ibv_wc_status_str(wc.status));
	dt_poll_none(cq2, 100);
	cr_assert_eq(checksum(t.buf[1], DT_BUF), sum, "a receive of the other SRQ was used");
	cr_assert_eq(wt_qp_state(ini), IBV_QPS_ERR);
	cr_assert_eq(wt_qp_state(tgt), IBV_QPS_ERR);

	cr_expect_eq(ibv_destroy_qp(ini), 0);
	cr_expect_eq(ibv_destroy_qp(tgt), 0);
	cr_expect_eq(ibv_destroy_srq(s1), 0);
	cr_expect_eq(ibv_destroy_srq(s2), 0);
	cr_expect_eq(ibv_destroy_cq(cq2), 0);
	cr_expect_eq(ibv_close_xrcd(x1), 0);
	cr_expect_eq(ibv_close_xrcd(x2), 0);
}

Test(dev_protect, xrc_srq_of_another_domain)
{
	xrc_wrong_srq(true);
}

Test(dev_protect, xrc_srq_number_unknown)
{
	xrc_wrong_srq(false);
}

/*
 * An XRC SRQ in error (its doorbell record far ahead): no SRQ is associated
 * with an XRC target QP, but the one whose SEND found the SRQ broken goes
 * to ERR with IBV_EVENT_QP_FATAL, and the initiator, answered nothing,
 * ends in RETRY_EXC_ERR (issue 35, defect 10; DESIGN-device.md).
 */
Test(dev_protect, xrc_srq_in_error_fails_the_target_qp)
{
	struct ibv_xrcd *x = private_xrcd();
	struct ibv_srq *srq = xrc_srq(x, t.cq[1]);
	struct mlx5dv_srq dsrq = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .srq = { .in = srq, .out = &dsrq } };
	struct ibv_qp *tgt, *ini;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint32_t n;
	struct ibv_wc wc;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
	cr_assert_eq(ibv_get_srq_num(srq, &n), 0);
	xrc_pair(x, &tgt, &ini);
	*dsrq.dbrec = htobe32(dsrq.tail + 100);
	wr.qp_type.xrc.remote_srqn = n;
	dt_post(ini, &wr);
	dt_expect_async(t.ctx, IBV_EVENT_SRQ_ERR, 5000);
	dt_expect_async(t.ctx, IBV_EVENT_QP_FATAL, 5000);
	cr_assert_eq(wt_qp_state(tgt), IBV_QPS_ERR);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc.status));
	dt_poll_none(t.cq[1], 100);
	cr_expect_eq(ibv_destroy_qp(ini), 0);
	cr_expect_eq(ibv_destroy_qp(tgt), 0);
	cr_expect_eq(ibv_destroy_srq(srq), 0);
	cr_expect_eq(ibv_close_xrcd(x), 0);
}
