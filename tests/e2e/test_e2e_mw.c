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

/* A zero-based window is addressed from 0: its offset, not a virtual address. */
Test(e2e_mw, zero_based_window)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw;
	struct rf_wc wc;
	uint32_t key;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw);
	key = rf_mw_inc_rkey(mw->rkey);
	cr_assert_eq(rf_sq_post_bind_mw(&e.b.qp.sq, mw->rkey, key, e.b.mr->lkey,
					e2e_addr(&e.b, 8192), 4096,
					rf_mw_access_ibv(IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_ZERO_BASED),
					RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "bind: status %u", wc.status);
	memset(e.a.buf, 0x5a, 64);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 64, key, 100,
				      RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "write at offset 100: %u", wc.status);
	cr_assert_eq(e.b.buf[8192 + 100], 0x5a);
	cr_assert_eq(e.b.buf[8192 + 163], 0x5a);
	cr_assert_eq(e.b.buf[8192 + 99], 0);
	cr_assert_eq(e.b.buf[8192 + 164], 0);
	/* the window's virtual address is no address of it */
	cr_assert_eq(write_via(&e, key, 8192 + 200, 3), RF_WC_REM_ACCESS_ERR);
	cr_assert_eq(e.b.buf[8192 + 200], 0);
	ibv_dealloc_mw(mw);
	e2e_close(&e);
}

/* A window grants what its bind says: read-only here. */
Test(e2e_mw, access_flags_of_the_bind)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw;
	struct rf_wc wc;
	uint32_t key;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert_not_null(mw);
	key = rf_mw_inc_rkey(mw->rkey);
	cr_assert_eq(rf_sq_post_bind_mw(&e.b.qp.sq, mw->rkey, key, e.b.mr->lkey,
					e2e_addr(&e.b, 8192), 4096,
					rf_mw_access_ibv(IBV_ACCESS_REMOTE_READ),
					RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "bind: status %u", wc.status);
	memset(e.b.buf + 8192, 0x33, 64);
	cr_assert_eq(rf_sq_post_read(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 1024), 64, key,
				     e2e_addr(&e.b, 8192), RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS, "read: %u", wc.status);
	cr_assert_eq(e.a.buf[1024 + 63], 0x33);
	memset(e.a.buf, 0x77, 64);
	cr_assert_eq(write_via(&e, key, 8192, 3), RF_WC_REM_ACCESS_ERR, "no remote write");
	cr_assert_eq(e.b.buf[8192], 0x33, "the memory stays untouched");
	ibv_dealloc_mw(mw);
	e2e_close(&e);
}

/*
 * A QP of libibverbs' own, connected to itself: where ibv_bind_mw() posts.
 * Connected by the glue through a view of it that lives only for the
 * call: nothing is posted through rdmafast.
 */
static struct ibv_qp *verbs_qp(struct e2e *e, struct ibv_cq **cq)
{
	struct ibv_qp_init_attr ia;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct ibv_qp *qp;
	struct rf_qp tmp;

	*cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	cr_assert_not_null(*cq);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = *cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp(e->pd, &ia);
	cr_assert_not_null(qp);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_WRITE | RF_ACCESS_REMOTE_READ;	/* through windows */
	memset(&peer, 0, sizeof(peer));
	peer.qpn = qp->qp_num;
	peer.lid = e->port.lid;
	if (e->port.link_layer == IBV_LINK_LAYER_ETHERNET)
		cr_assert_eq(ibv_query_gid(e->ctx, 1, 0, &peer.gid), 0);
	cr_assert_eq(rf_qp_init_ibv(&tmp, qp, &ia.cap, 0), 0);
	cr_assert_eq(rf_qp_connect_ibv(&tmp, &ca, &peer), 0);
	rf_qp_fini_ibv(&tmp);
	return qp;
}

/*
 * Type-1 windows, bound through ibv_bind_mw() on a QP of libibverbs, work
 * for rdmafast's QPs beside type-2 windows bound by WQE; a region under a
 * bound window of either type cannot be deregistered.
 */
Test(e2e_mw, type1_beside_type2_and_dereg_refused)
{
	struct e2e e;
	struct e2e_opts o;
	struct ibv_mw *mw1, *mw2;
	struct ibv_cq *vcq;
	struct ibv_qp *vqp;
	struct ibv_mw_bind bind;
	struct ibv_wc vwc;
	struct rf_wc wc;
	uint32_t key2;
	int n = 0;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	mw1 = ibv_alloc_mw(e.pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	cr_assert(mw1 && mw2);
	vqp = verbs_qp(&e, &vcq);
	memset(&bind, 0, sizeof(bind));
	bind.wr_id = 7;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = e.b.mr;
	bind.bind_info.addr = e2e_addr(&e.b, 16384);
	bind.bind_info.length = 1024;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	cr_assert_eq(ibv_bind_mw(vqp, mw1, &bind), 0, "ibv_bind_mw: %s", strerror(errno));
	for (long end = e2e_now_ms() + E2E_TIMEOUT_MS; !n && e2e_now_ms() < end;)
		n = ibv_poll_cq(vcq, 1, &vwc);
	cr_assert_eq(n, 1, "no bind completion");
	cr_assert_eq(vwc.status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_dereg_mr(e.b.mr), EBUSY, "a type-1 window is bound on it");

	/* a type-2 window on the same region, bound by rdmafast's WQE */
	key2 = bind_window(&e, mw2);
	memset(e.a.buf, 0x11, 64);
	cr_assert_eq(write_via(&e, mw1->rkey, 16384, 2), RF_WC_SUCCESS, "through type 1");
	cr_assert_eq(e.b.buf[16384 + 63], 0x11);
	memset(e.a.buf, 0x22, 64);
	cr_assert_eq(write_via(&e, key2, 8192, 3), RF_WC_SUCCESS, "through type 2");
	cr_assert_eq(e.b.buf[8192 + 63], 0x22);
	/* the type-1 window gone, the type-2 one still holds the region */
	cr_assert_eq(ibv_dealloc_mw(mw1), 0);
	cr_assert_eq(ibv_dereg_mr(e.b.mr), EBUSY, "a type-2 window is bound on it");
	cr_assert_eq(rf_sq_post_local_inv(&e.b.qp.sq, key2, RF_SEND_SIGNALED | RF_SEND_RING, 4),
		     0);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_SUCCESS);
	cr_assert_eq(write_via(&e, key2, 8192, 5), RF_WC_REM_ACCESS_ERR, "invalidated");
	cr_assert_eq(ibv_dealloc_mw(mw2), 0);
	cr_assert_eq(ibv_destroy_qp(vqp), 0);
	cr_assert_eq(ibv_destroy_cq(vcq), 0);
	e2e_close(&e);
}
