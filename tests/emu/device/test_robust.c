/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_robust.c - the device model against careless or hostile input:
 * doorbell records off a WQE boundary, ahead by more than the queue or moved
 * backwards; inline byte counts past the WQE; application memory that goes
 * away or is read-only under a registered MR or a CQ; CQ overrun; the vendor
 * syndromes of error CQEs; receive byte count 0.  Nothing may hang, loop or
 * crash: the outcome is an error CQE, an async event and a QP state, as on
 * a ConnectX.  Every test is bounded by its suite timeout.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "app_segv.h"
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

TestSuite(dev_robust, .init = setup, .fini = teardown, .timeout = 30);

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

/* ---- raw WQEs, written and rung as libmlx5 would, but with our values ---- */

struct raw_sq {
	struct mlx5dv_qp	dv;
	uint32_t		qpn;
};

static void raw_init(struct raw_sq *r, struct ibv_qp *qp)
{
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &r->dv } };

	memset(&r->dv, 0, sizeof(r->dv));
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	r->qpn = qp->qp_num;
}

static uint8_t *raw_bb(struct raw_sq *r, uint32_t bb)
{
	return (uint8_t *)r->dv.sq.buf + (size_t)(bb & (r->dv.sq.wqe_cnt - 1)) * 64;
}

/* Set the SQ doorbell record to dbrec and ring with the WQE's ctrl segment. */
static void raw_ring(struct raw_sq *r, uint32_t dbrec, uint32_t bb)
{
	uint64_t db;

	atomic_thread_fence(memory_order_release);
	r->dv.dbrec[MLX5_SND_DBR] = htobe32(dbrec & 0xffff);
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(&db, raw_bb(r, bb), 8);
	*(volatile uint64_t *)r->dv.bf.reg = db;
}

/* ctrl | raddr | inline header claiming `claim` bytes, carrying `len` bytes */
static uint32_t raw_write_inline(struct raw_sq *r, uint32_t bb, uint64_t raddr, uint32_t rkey,
				 uint32_t len, uint32_t claim, uint8_t fill)
{
	uint8_t w[1024] = { 0 };
	struct mlx5_wqe_raddr_seg *ra = (void *)(w + 16);
	uint32_t hdr = htobe32(MLX5_INLINE_SEG | claim);
	uint32_t ds = (32 + 4 + len + 15) / 16;
	uint32_t nbb = (ds + 3) / 4;

	mlx5dv_set_ctrl_seg((void *)w, (uint16_t)bb, MLX5_OPCODE_RDMA_WRITE, 0, r->qpn,
			    MLX5_WQE_CTRL_CQ_UPDATE, (uint8_t)ds, 0, 0);
	ra->raddr = htobe64(raddr);
	ra->rkey = htobe32(rkey);
	memcpy(w + 32, &hdr, 4);
	memset(w + 36, fill, len);
	for (uint32_t i = 0; i < nbb; i++)
		memcpy(raw_bb(r, bb + i), w + i * 64, 64);
	return nbb;
}

static uint32_t raw_fetch_add(struct raw_sq *r, uint32_t bb, uint64_t raddr, uint32_t rkey,
			      void *local, uint32_t lkey)
{
	uint8_t *w = raw_bb(r, bb);
	struct mlx5_wqe_raddr_seg *ra = (void *)(w + 16);
	struct mlx5_wqe_atomic_seg *at = (void *)(w + 32);

	memset(w, 0, 64);
	mlx5dv_set_ctrl_seg((void *)w, (uint16_t)bb, MLX5_OPCODE_ATOMIC_FA, 0, r->qpn,
			    MLX5_WQE_CTRL_CQ_UPDATE, 4, 0, 0);
	ra->raddr = htobe64(raddr);
	ra->rkey = htobe32(rkey);
	at->swap_add = htobe64(1);
	mlx5dv_set_data_seg((void *)(w + 48), 8, lkey, (uintptr_t)local);
	return 1;
}

/* ---- 1. doorbell records ------------------------------------------------ */

Test(dev_robust, dbrec_inside_a_wqe_waits_for_the_rest)
{
	struct raw_sq r;
	uint8_t *dst = t.buf[1] + 256;
	struct ibv_wc wc;
	uint32_t nbb;

	raw_init(&r, t.qp[0]);
	nbb = raw_write_inline(&r, 0, (uintptr_t)dst, t.mr[1]->rkey, 60, 60, 0xab);
	cr_assert_eq(nbb, 2);
	raw_ring(&r, 1, 0);		/* the record ends inside the WQE */
	dt_poll_none(t.cq[0], 300);
	cr_assert_eq(dst[0], 0, "a half-rung WQE was executed");
	/* the engine does not hold the lock: commands still answer */
	cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_RTS);
	raw_ring(&r, 2, 0);		/* now the whole WQE is handed over */
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	for (int i = 0; i < 60; i++)
		cr_assert_eq(dst[i], 0xab);
	cr_assert_eq(dst[60], 0);
	dt_poll_none(t.cq[0], 100);
}

Test(dev_robust, dbrec_backwards_fails_the_queue_without_reexecuting)
{
	struct raw_sq r;
	uint64_t *ctr = (uint64_t *)(t.buf[1] + 512);
	struct ibv_wc wc[4];

	raw_init(&r, t.qp[0]);
	for (uint32_t i = 0; i < 4; i++)
		raw_fetch_add(&r, i, (uintptr_t)ctr, t.mr[1]->rkey, t.buf[0] + 8 * i, t.mr[0]->lkey);
	raw_ring(&r, 4, 3);
	cr_assert_eq(dt_poll(t.cq[0], wc, 4, 5000), 4);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
	cr_assert_eq(*ctr, 4);
	/*
	 * Backwards by one: in the 16-bit counter that is 65535 BBs ahead,
	 * which the old engine walked, re-executing stale WQEs.
	 */
	raw_ring(&r, 3, 3);
	dt_expect_async(t.ctx, IBV_EVENT_QP_FATAL, 5000);
	cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_ERR);
	usleep(100000);
	cr_assert_eq(*(volatile uint64_t *)ctr, 4, "stale WQEs re-executed: %lu",
		     (unsigned long)*ctr);
}

Test(dev_robust, dbrec_beyond_the_queue_size_fails_the_queue)
{
	struct raw_sq r;
	uint64_t *ctr = (uint64_t *)(t.buf[1] + 512);

	raw_init(&r, t.qp[0]);
	for (uint32_t i = 0; i < r.dv.sq.wqe_cnt; i++)
		raw_fetch_add(&r, i, (uintptr_t)ctr, t.mr[1]->rkey, t.buf[0], t.mr[0]->lkey);
	raw_ring(&r, r.dv.sq.wqe_cnt + 1, 0);
	dt_expect_async(t.ctx, IBV_EVENT_QP_FATAL, 5000);
	cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_ERR);
	usleep(100000);
	cr_assert_eq(*(volatile uint64_t *)ctr, 0);
}

/* ---- 2. segments beyond the WQE ---------------------------------------- */

Test(dev_robust, inline_count_past_the_wqe_is_a_length_error)
{
	static const uint32_t claims[] = { 61, 1000, 0x7fffffff };

	for (unsigned k = 0; k < sizeof(claims) / sizeof(claims[0]); k++) {
		struct raw_sq r;
		uint8_t *dst = t.buf[1] + 1024;
		struct ibv_wc wc;

		if (k) {
			/* the QP failed: back to RTS through RESET (the peer saw nothing) */
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
			struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7,
						.retry_cnt = 7, .timeout = 14 };

			cr_assert_eq(ibv_modify_qp(t.qp[0], &a, IBV_QP_STATE), 0);
			cr_assert_eq(dt_connect(t.qp[0], t.qp[1]->qp_num, t.lid, &o), 0);
		}
		raw_init(&r, t.qp[0]);
		/* DS cover 60 inline bytes; the header claims more */
		raw_write_inline(&r, 0, (uintptr_t)dst, t.mr[1]->rkey, 60, claims[k], 0xcd);
		raw_ring(&r, 2, 0);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_LOC_LEN_ERR, "claim %u: status %d",
			     claims[k], wc.status);
		cr_assert_eq(wc.vendor_err, 0x69);
		cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_ERR);
		for (int i = 0; i < 2048; i++)
			cr_assert_eq(dst[i], 0, "claim %u: target written at %d: %#x", claims[k],
				     i, dst[i]);
	}
}

/* ---- 3. application memory that goes away -------------------------------- */

/* An MR over two fresh pages, then the pages are unmapped or protected. */
static struct ibv_mr *doomed_mr(uint8_t **addr, int prot_after)
{
	size_t len = 8192;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	cr_assert_neq(p, MAP_FAILED);
	memset(p, 0x5a, len);
	mr = ibv_reg_mr(t.pd, p, len, DT_ACC_ALL);
	cr_assert(mr, "ibv_reg_mr: %s", strerror(errno));
	if (prot_after < 0)
		cr_assert_eq(munmap(p, len), 0);
	else
		cr_assert_eq(mprotect(p, len, prot_after), 0);
	*addr = p;
	return mr;
}

static struct ibv_wc post1(struct ibv_send_wr *wr)
{
	dt_post(t.qp[0], wr);
	return dt_poll1(t.cq[0]);
}

Test(dev_robust, remote_write_to_unmapped_mr)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, -1);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)p, mr->rkey },
	};
	struct ibv_wc wc = post1(&wr);

	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x88);
	dt_expect_async(t.ctx, IBV_EVENT_QP_ACCESS_ERR, 5000);
	cr_assert_eq(qp_state(t.qp[1]), IBV_QPS_ERR);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_robust, remote_write_to_read_only_pages)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, PROT_READ);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)p + 100, mr->rkey },
	};
	struct ibv_wc wc = post1(&wr);

	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status %d", wc.status);
	for (int i = 0; i < 8192; i++)
		cr_assert_eq(p[i], 0x5a);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	munmap(p, 8192);
}

Test(dev_robust, remote_read_and_atomic_of_unmapped_mr)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, -1);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)p, mr->rkey },
	};
	struct ibv_wc wc = post1(&wr);

	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "read: status %d", wc.status);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	dt_teardown(&t);
	dt_setup(&t);
	mr = doomed_mr(&p, PROT_NONE);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	wr = (struct ibv_send_wr){
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)p, .rkey = mr->rkey, .compare_add = 1 },
	};
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "atomic: status %d", wc.status);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	munmap(p, 8192);
}

Test(dev_robust, local_gather_and_scatter_from_unmapped_mr)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, -1);
	struct ibv_sge s = { (uintptr_t)p, 64, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
	};
	struct ibv_wc wc = post1(&wr);

	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "gather: status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x53);
	cr_assert_eq(t.buf[1][0], 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	dt_teardown(&t);
	dt_setup(&t);
	/* a READ whose local buffer went away */
	mr = doomed_mr(&p, -1);
	s = (struct ibv_sge){ (uintptr_t)p, 64, mr->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "scatter: status %d", wc.status);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(dev_robust, receive_into_unmapped_mr)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, -1);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	dt_post_recv(t.qp[1], 7, p, 64, mr->lkey);
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_OP_ERR, "requester: status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x89);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "responder: status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x32);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* A CQ whose buffer becomes inaccessible fails like an overrun, never faults. */
Test(dev_robust, cq_buffer_inaccessible)
{
	struct mlx5dv_cq dcq = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = t.cq[0], .out = &dcq } };
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
	};
	uintptr_t lo, hi;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	lo = (uintptr_t)dcq.buf & ~(uintptr_t)4095;
	hi = ((uintptr_t)dcq.buf + (size_t)dcq.cqe_cnt * dcq.cqe_size + 4095) & ~(uintptr_t)4095;
	cr_assert_eq(mprotect((void *)lo, hi - lo, PROT_NONE), 0);
	dt_post(t.qp[0], &wr);
	dt_expect_async(t.ctx, IBV_EVENT_CQ_ERR, 5000);
	cr_assert_eq(mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_ERR);
}

/* ---- 4. CQ overrun -------------------------------------------------------- */

Test(dev_robust, cq_overrun_moves_its_qps_to_error)
{
	struct ibv_cq *cq = ibv_create_cq(t.ctx, 4, NULL, NULL, 0);
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
				.timeout = 14, .sq_sig_all = 1 };
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(t.pd, &ia), *peer = dt_create_qp(&t, 1, &o);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
	};
	struct ibv_async_event ev;
	bool cq_err = false, qp_fatal = false;
	uint64_t end;

	cr_assert(cq && qp);
	cr_assert_eq(dt_connect(qp, peer->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(peer, qp->qp_num, t.lid, &o), 0);
	for (int i = 0; i < 2 * cq->cqe + 8; i++)
		dt_post(qp, &wr);
	end = dt_now_ms() + 5000;
	while (!(cq_err && qp_fatal)) {
		struct pollfd pfd = { .fd = t.ctx->async_fd, .events = POLLIN };

		cr_assert_lt(dt_now_ms(), end, "events: CQ_ERR %d QP_FATAL %d", cq_err, qp_fatal);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		cr_assert_eq(ibv_get_async_event(t.ctx, &ev), 0);
		if (ev.event_type == IBV_EVENT_CQ_ERR)
			cq_err = ev.element.cq == cq;
		if (ev.event_type == IBV_EVENT_QP_FATAL)
			qp_fatal = ev.element.qp == qp;
		ibv_ack_async_event(&ev);
	}
	cr_assert_eq(qp_state(qp), IBV_QPS_ERR);
	cr_assert_eq(qp_state(peer), IBV_QPS_RTS, "the peer does not complete to that CQ");
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/* ---- 5. vendor syndromes -------------------------------------------------- */

Test(dev_robust, vendor_syndromes_per_error)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { (uintptr_t)t.buf[1], 0xdead00 },
	};
	struct ibv_wc wc;

	/* bad rkey: remote access 0x13/0x88, then the flush 0x05/0xf9 */
	dt_post(t.qp[0], &wr);
	s.lkey = t.mr[0]->lkey;
	dt_post(t.qp[0], &wr);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(wc.vendor_err, 0x88);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(wc.vendor_err, 0xf9);

	/* bad lkey: local protection, requester 0x04/0x53 */
	dt_teardown(&t);
	dt_setup(&t);
	s.lkey = 0xbad00;
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR);
	cr_assert_eq(wc.vendor_err, 0x53);

	/* misaligned atomic: remote invalid request 0x12/0x8a */
	dt_teardown(&t);
	dt_setup(&t);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)t.buf[1] + 4;
	wr.wr.atomic.rkey = t.mr[1]->rkey;
	wr.wr.atomic.compare_add = 1;
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR);
	cr_assert_eq(wc.vendor_err, 0x8a);
}

Test(dev_robust, vendor_syndromes_rnr_and_retry)
{
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .rnr_retry = 0, .retry_cnt = 1, .timeout = 1 };
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	/* no receive, rnr_retry 0: 0x16 */
	dt_teardown(&t);
	dt_setup_opts(&t, &o);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_RNR_RETRY_EXC_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x82);
	/* a peer that never answers (its QP reset): 0x15/0x81 */
	dt_teardown(&t);
	dt_setup_opts(&t, &o);
	s = (struct ibv_sge){ (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_STATE), 0);
	}
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x81);
}

Test(dev_robust, vendor_syndrome_local_qp_operation)
{
	struct raw_sq r;
	uint8_t *w;
	struct ibv_wc wc;

	raw_init(&r, t.qp[0]);
	w = raw_bb(&r, 0);
	memset(w, 0, 64);
	/* opcode 0x1f is no opcode at all */
	mlx5dv_set_ctrl_seg((void *)w, 0, 0x1f, 0, r.qpn, MLX5_WQE_CTRL_CQ_UPDATE, 1, 0, 0);
	raw_ring(&r, 1, 0);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_LOC_QP_OP_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0xd6);
}

/* ---- 6. receive byte count 0 ---------------------------------------------- */

/*
 * A receive data segment with byte count 0 is 2^31 bytes (mlx5 PRM), so
 * such a receive takes a 100-byte message; the model used to read it as 0
 * bytes and fail the receive with a length error.  The segment is written
 * raw: libmlx5 never posts one (it skips zero-length SGEs).
 */
Test(dev_robust, receive_byte_count_zero_is_2gib)
{
	size_t big = (size_t)1 << 31;
	uint8_t *p = mmap(NULL, big, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct ibv_mr *mr;
	struct mlx5dv_qp dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = t.qp[1], .out = &dv } };
	struct mlx5_wqe_data_seg *d;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 100, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert_neq(p, MAP_FAILED);
	mr = ibv_reg_mr(t.pd, p, big, IBV_ACCESS_LOCAL_WRITE);
	cr_assert(mr, "ibv_reg_mr 2 GiB: %s", strerror(errno));
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	memset(t.buf[0], 0x77, 100);
	d = dv.rq.buf;
	memset(d, 0, dv.rq.stride);
	mlx5dv_set_data_seg(d, 0, mr->lkey, (uintptr_t)p);
	mlx5dv_set_data_seg(d + 1, 0, MLX5_INVALID_LKEY, 0);	/* as libmlx5 ends a list */
	atomic_thread_fence(memory_order_release);
	dv.dbrec[MLX5_RCV_DBR] = htobe32(1);
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "requester: status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "responder: status %d", wc.status);
	cr_assert_eq(wc.byte_len, 100);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(p[i], 0x77);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	munmap(p, big);
}

/*
 * What libmlx5 does with a zero-length SGE: it skips it and ends the list
 * with the MLX5_INVALID_LKEY terminator, which the device must honour (and
 * not read as a 2 GiB entry with a bad key).
 */
Test(dev_robust, libmlx5_zero_length_sge_and_terminator)
{
	struct ibv_sge rs[2] = {
		{ (uintptr_t)t.buf[1], 0, t.mr[1]->lkey },
		{ (uintptr_t)t.buf[1] + 4096, 64, t.mr[1]->lkey },
	};
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = rs, .num_sge = 2 }, *bad;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	memset(t.buf[0], 0x31, 64);
	cr_assert_eq(ibv_post_recv(t.qp[1], &rwr, &bad), 0);
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	cr_assert_eq(wc.byte_len, 64);
	cr_assert_eq(t.buf[1][4096 + 63], 0x31);
	cr_assert_eq(t.buf[1][0], 0);
	/* 65 bytes do not fit the one real entry: a length error, not 2 GiB */
	rs[1].length = 64;
	cr_assert_eq(ibv_post_recv(t.qp[1], &rwr, &bad), 0);
	s.length = 65;
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_INV_REQ_ERR, "status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_LOC_LEN_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x69);
}

/*
 * The device scatters into receive entries in order and only as far as the
 * message reaches: a slot after the ones a message needs is never checked
 * (rdmafast leaves unused slots zeroed), one the message reaches must be
 * valid - a zeroed slot is 2^31 bytes under lkey 0.
 */
Test(dev_robust, receive_entries_checked_as_far_as_used)
{
	struct mlx5dv_qp dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = t.qp[1], .out = &dv } };
	struct mlx5_wqe_data_seg *d;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_assert_geq(dv.rq.stride, 32);
	for (uint32_t i = 0; i < 2; i++) {
		d = (void *)((uint8_t *)dv.rq.buf + (size_t)i * dv.rq.stride);
		memset(d, 0, dv.rq.stride);
		mlx5dv_set_data_seg(d, 64, t.mr[1]->lkey, (uintptr_t)t.buf[1] + 4096 * i);
	}
	atomic_thread_fence(memory_order_release);
	dv.dbrec[MLX5_RCV_DBR] = htobe32(2);
	memset(t.buf[0], 0x42, 128);
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "fits the first entry: status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	cr_assert_eq(t.buf[1][63], 0x42);
	s.length = 65;		/* reaches the zeroed second slot */
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_OP_ERR, "status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "status %d", wc.status);
	cr_assert_eq(t.buf[1][4096], 0, "nothing placed by a failed receive");
}

/* An RQ doorbell record far ahead of what was consumed: QP_FATAL, no stale receives. */
Test(dev_robust, rq_dbrec_beyond_the_queue_size_fails_the_qp)
{
	struct mlx5dv_qp dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .qp = { .in = t.qp[1], .out = &dv } };
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	dv.dbrec[MLX5_RCV_DBR] = htobe32(dv.rq.wqe_cnt + 3);
	dt_post(t.qp[0], &wr);
	dt_expect_async(t.ctx, IBV_EVENT_QP_FATAL, 5000);
	cr_assert_eq(qp_state(t.qp[1]), IBV_QPS_ERR);
	dt_poll_none(t.cq[1], 100);
}

/* The same for an SRQ: IBV_EVENT_SRQ_ERR, and it hands out no receive. */
Test(dev_robust, srq_dbrec_beyond_the_queue_size_fails_the_srq)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(t.pd, &sa);
	struct mlx5dv_srq dsrq = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .srq = { .in = srq, .out = &dsrq } };
	struct dt_qp_opts opt = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7,
				  .timeout = 14, .srq = srq };
	struct ibv_qp *rq_qp, *sq_qp;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};

	cr_assert(srq);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
	rq_qp = dt_create_qp(&t, 1, &opt);
	opt.srq = NULL;
	sq_qp = dt_create_qp(&t, 0, &opt);
	cr_assert_eq(dt_connect(rq_qp, sq_qp->qp_num, t.lid, &opt), 0);
	cr_assert_eq(dt_connect(sq_qp, rq_qp->qp_num, t.lid, &opt), 0);
	*dsrq.dbrec = htobe32(dsrq.tail + 100);
	dt_post(sq_qp, &wr);
	dt_expect_async(t.ctx, IBV_EVENT_SRQ_ERR, 5000);
	dt_poll_none(t.cq[1], 100);
	cr_assert_eq(ibv_destroy_qp(sq_qp), 0);
	cr_assert_eq(ibv_destroy_qp(rq_qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/*
 * Issue 35, defect 10: the QPs of an SRQ in error go to ERR with
 * IBV_EVENT_QP_FATAL, then IBV_EVENT_QP_LAST_WQE_REACHED - the one whose
 * SEND found the SRQ broken and the one that received nothing alike - and
 * a requester with rnr_retry 7 ends in RETRY_EXC_ERR instead of being
 * answered RNR NAKs forever.
 */
Test(dev_robust, srq_in_error_fails_its_qps)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(t.pd, &sa);
	struct mlx5dv_srq dsrq = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .srq = { .in = srq, .out = &dsrq } };
	struct dt_qp_opts opt = { .type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 2,
				  .timeout = 8, .srq = srq };
	struct ibv_qp *rq_qp, *idle_qp, *sq_qp;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct pollfd pfd = { .fd = t.ctx->async_fd, .events = POLLIN };
	bool srq_err = false, fatal[2] = { false }, last[2] = { false };
	uint64_t end = dt_now_ms() + 5000;
	struct ibv_wc wc;

	cr_assert(srq);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
	rq_qp = dt_create_qp(&t, 1, &opt);
	idle_qp = dt_create_qp(&t, 1, &opt);
	opt.srq = NULL;
	sq_qp = dt_create_qp(&t, 0, &opt);
	cr_assert_eq(dt_connect(rq_qp, sq_qp->qp_num, t.lid, &opt), 0);
	cr_assert_eq(dt_connect(sq_qp, rq_qp->qp_num, t.lid, &opt), 0);
	cr_assert_eq(dt_connect(idle_qp, t.qp[0]->qp_num, t.lid, &opt), 0);
	*dsrq.dbrec = htobe32(dsrq.tail + 100);
	dt_post(sq_qp, &wr);
	while (!srq_err || !fatal[0] || !fatal[1] || !last[0] || !last[1]) {
		int left = (int)(end - dt_now_ms());
		struct ibv_async_event ev;
		int i;

		cr_assert_gt(left, 0, "SRQ_ERR %d, QP_FATAL %d %d, LAST_WQE_REACHED %d %d",
			     srq_err, fatal[0], fatal[1], last[0], last[1]);
		if (poll(&pfd, 1, left) <= 0)
			continue;
		cr_assert_eq(ibv_get_async_event(t.ctx, &ev), 0);
		if (ev.event_type == IBV_EVENT_SRQ_ERR) {
			cr_assert_eq(ev.element.srq, srq);
			srq_err = true;
		} else if (ev.event_type == IBV_EVENT_QP_FATAL ||
			   ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) {
			cr_assert(ev.element.qp == rq_qp || ev.element.qp == idle_qp,
				  "event %d on QP %u", ev.event_type, ev.element.qp->qp_num);
			i = ev.element.qp == idle_qp;
			cr_assert(srq_err, "QP event %d before SRQ_ERR", ev.event_type);
			if (ev.event_type == IBV_EVENT_QP_FATAL)
				fatal[i] = true;
			else
				last[i] = true;
		}
		ibv_ack_async_event(&ev);
	}
	cr_assert_eq(qp_state(rq_qp), IBV_QPS_ERR);
	cr_assert_eq(qp_state(idle_qp), IBV_QPS_ERR);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "status %s", ibv_wc_status_str(wc.status));
	dt_poll_none(t.cq[1], 100);
	cr_assert_eq(ibv_destroy_qp(sq_qp), 0);
	cr_assert_eq(ibv_destroy_qp(idle_qp), 0);
	cr_assert_eq(ibv_destroy_qp(rq_qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/* An SQ whose pages became inaccessible: the WQE cannot be fetched, LOC_QP_OP_ERR. */
Test(dev_robust, sq_buffer_inaccessible)
{
	struct raw_sq r;
	uintptr_t lo, hi;
	struct ibv_wc wc;

	raw_init(&r, t.qp[0]);
	raw_write_inline(&r, 0, (uintptr_t)t.buf[1], t.mr[1]->rkey, 8, 8, 0xee);
	lo = (uintptr_t)r.dv.sq.buf & ~(uintptr_t)4095;
	hi = ((uintptr_t)r.dv.sq.buf + (size_t)r.dv.sq.wqe_cnt * 64 + 4095) & ~(uintptr_t)4095;
	{
		uint64_t db;

		memcpy(&db, raw_bb(&r, 0), 8);
		cr_assert_eq(mprotect((void *)lo, hi - lo, PROT_NONE), 0);
		r.dv.dbrec[MLX5_SND_DBR] = htobe32(1);
		atomic_thread_fence(memory_order_seq_cst);
		*(volatile uint64_t *)r.dv.bf.reg = db;
	}
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(wc.status, IBV_WC_LOC_QP_OP_ERR, "status %d", wc.status);
	cr_assert_eq(t.buf[1][0], 0);
	cr_assert_eq(qp_state(t.qp[0]), IBV_QPS_ERR);
}

/*
 * An application that installs its own SIGSEGV handler after the device
 * opened: within a few milliseconds the device's guard is back in front,
 * device faults become error CQEs, and the application's handler still
 * receives the application's own faults (twice, leaving by siglongjmp).
 */
Test(dev_robust, application_segv_handler_installed_later)
{
	uint8_t *p;
	struct ibv_mr *mr;
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint8_t *hole = app_hole();
	struct ibv_wc wc;

	cr_assert_eq(app_segv_install(), 0);
	usleep(20000);		/* the engine puts its handler back in front */
	mr = doomed_mr(&p, -1);
	wr.wr.rdma.remote_addr = (uintptr_t)p;
	wr.wr.rdma.rkey = mr->rkey;
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status %d", wc.status);
	app_touch(hole);
	app_touch(hole);
	cr_assert_eq(app_faults, 2, "the application's handler saw %d faults", app_faults);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	munmap(hole, 4096);
}

/*
 * RDMA write with immediate into pages that went away: REM_ACCESS_ERR for
 * the requester; the receive the immediate took completes with a local
 * access error (0x11, vendor 0x6a), the one error IBA defines for exactly this.
 */
Test(dev_robust, write_imm_into_unmapped_mr)
{
	uint8_t *p;
	struct ibv_mr *mr = doomed_mr(&p, -1);
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(7),
		.wr.rdma = { (uintptr_t)p, mr->rkey },
	};
	struct ibv_wc wc;

	dt_post_recv(t.qp[1], 9, t.buf[1], 64, t.mr[1]->lkey);
	wc = post1(&wr);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "requester: status %d", wc.status);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_LOC_ACCESS_ERR, "responder: status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x6a);
	cr_assert_eq(wc.wr_id, 9);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* A memory-window bind beyond its MR: MW_BIND_ERR (0x06, vendor 0x6b). */
Test(dev_robust, vendor_syndrome_mw_bind)
{
	struct ibv_mw *mw = ibv_alloc_mw(t.pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = t.mr[0], .addr = (uintptr_t)t.buf[0], .length = 2 * DT_BUF,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ,
		},
	};
	struct ibv_wc wc;

	cr_assert(mw);
	cr_assert_eq(ibv_bind_mw(t.qp[0], mw, &bind), 0);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_MW_BIND_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x6b);
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
}
