/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Type-2 memory windows through rdmafast's UMR WQEs: bind a window over
 * part of b's buffer on b's QP, use it from a, then revoke it with a
 * send-with-invalidate from a or a local invalidate at b.
 */
#include "e2e.h"

/* b binds a window of 4 KiB at offset 8192; returns its new rkey. */
static uint32_t bind_window(struct e2e *e, struct ibv_mw *mw)
{
	struct rf_wc wc;
	uint32_t key = rf_mw_inc_rkey(mw->rkey);

	cr_assert_eq(rf_sq_post_bind_mw(&e->b.qp.sq, mw->rkey, key, e->b.mr->lkey,
					e2e_addr(&e->b, 8192), 4096,
					rf_mw_access_ibv(IBV_ACCESS_LOCAL_WRITE |
							 IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_REMOTE_READ),
					RF_SEND_SIGNALED, 1), 0);
	rf_sq_ring(&e->b.qp.sq);
	e2e_wait(&e->b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "bind: status %u", wc.status);
	cr_assert_eq(wc.opcode, RF_WC_BIND_MW);
	return key;
}

static int write_via(struct e2e *e, uint32_t rkey, size_t off, uint64_t wr_id)
{
	struct rf_wc wc;

	cr_assert_eq(rf_sq_post_write(&e->a.qp.sq, e->a.mr->lkey, e2e_addr(&e->a, 0), 64,
				      rkey, e2e_addr(&e->b, off), RF_SEND_SIGNALED, wr_id), 0);
	rf_sq_ring(&e->a.qp.sq);
	e2e_wait(&e->a.cq, &wc, 1);
	cr_assert_eq(wc.wr_id, wr_id);
	return wc.status;
}

Test(e2e_mw, bind_use_send_with_invalidate)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw;
	struct rf_wc wc;
	uint32_t key;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw, "ibv_alloc_mw: %s", strerror(errno));
	key = bind_window(&e, mw);
	memset(e.a.buf, 0x77, 64);
	cr_assert_eq(write_via(&e, key, 8192 + 100, 2), RF_WC_SUCCESS);
	cr_assert_eq(e.b.buf[8192 + 100], 0x77);
	cr_assert_eq(e.b.buf[8192 + 163], 0x77);
	/* the window ends at 8192 + 4096 */
	/* revoke it from the remote side with SEND_INV */
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 9), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_send_inv(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8, key,
					 RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "send_inv: %u", wc.status);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS);
	cr_assert_eq(wc.flags & RF_WC_WITH_INV, RF_WC_WITH_INV);
	cr_assert_eq(rf_wc_inv_rkey(&wc), key);
	/* the window is gone */
	cr_assert_eq(write_via(&e, key, 8192 + 100, 4), RF_WC_REM_ACCESS_ERR);
	ibv_dealloc_mw(mw);
	e2e_close(&e);
}

Test(e2e_mw, out_of_window_access_fails)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw;
	uint32_t key;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw);
	key = bind_window(&e, mw);
	cr_assert_eq(write_via(&e, key, 8192 + 4096 - 32, 2), RF_WC_REM_ACCESS_ERR);
	ibv_dealloc_mw(mw);
	e2e_close(&e);
}

Test(e2e_mw, local_invalidate_and_rebind)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw;
	struct rf_wc wc;
	uint32_t key, key2;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw);
	key = bind_window(&e, mw);
	cr_assert_eq(write_via(&e, key, 8192, 2), RF_WC_SUCCESS);
	cr_assert_eq(rf_sq_post_local_inv(&e.b.qp.sq, key, RF_SEND_SIGNALED, 5), 0);
	rf_sq_ring(&e.b.qp.sq);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "local inv: %u", wc.status);
	cr_assert_eq(wc.opcode, RF_WC_LOCAL_INV);
	/* bind again with the next tag: the old key stays dead */
	cr_assert_eq(rf_sq_post_bind_mw(&e.b.qp.sq, key, rf_mw_inc_rkey(key), e.b.mr->lkey,
					e2e_addr(&e.b, 8192), 4096,
					rf_mw_access_ibv(IBV_ACCESS_REMOTE_WRITE),
					RF_SEND_SIGNALED, 6), 0);
	rf_sq_ring(&e.b.qp.sq);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "rebind: %u", wc.status);
	key2 = rf_mw_inc_rkey(key);
	cr_assert_eq(write_via(&e, key2, 8192, 3), RF_WC_SUCCESS);
	cr_assert_eq(write_via(&e, key, 8192, 4), RF_WC_REM_ACCESS_ERR);
	ibv_dealloc_mw(mw);
	e2e_close(&e);
}
