/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * UC and UD through rdmafast: RDMA WRITE (with immediate) and SEND on a UC
 * pair, READ and atomics refused there; UD sends with an address vector
 * taken from an address handle, inline and from a buffer, received with
 * the 40-byte GRH area; MADs in UD traffic sorted by snooping filters.
 */
#include "e2e.h"

Test(e2e_uc_ud, uc_write_and_send)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	o.type = IBV_QPT_UC;
	e2e_open(&e, &o);
	cr_assert_eq(e.a.qp.kind, RF_QP_UC);
	memset(e.a.buf, 0x3c, 256);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 256, 1), 0);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 256), 256, 2), 0);
	rf_rq_ring(&e.b.qp.rq);
	/* UC has no READ or atomics: refused before anything reaches the QP,
	 * which then carries the writes and the send below */
	cr_assert_eq(rf_sq_post_read(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				     e.b.mr->rkey, e2e_addr(&e.b, 4096), RF_SEND_RING, 9),
		     -EINVAL);
	cr_assert_eq(rf_sq_post_faa(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0),
				    e.b.mr->rkey, e2e_addr(&e.b, 4096), 1, RF_SEND_RING, 9),
		     -EINVAL);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 256,
				      e.b.mr->rkey, e2e_addr(&e.b, 4096), 0, 10), 0);
	cr_assert_eq(rf_sq_post_write_imm(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 16,
					  e.b.mr->rkey, e2e_addr(&e.b, 8192), RF_BE32(77),
					  0, 11), 0);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 100,
				     RF_SEND_SIGNALED, 12), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 12);
	e2e_wait(&e.b.cq, wc, 2);
	cr_assert_eq(wc[0].opcode, RF_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc[0].imm, RF_BE32(77));
	cr_assert_eq(wc[1].opcode, RF_WC_RECV);
	cr_assert_eq(wc[1].byte_len, 100);
	cr_assert_eq(e.b.buf[4096 + 255], 0x3c);
	cr_assert_eq(e.b.buf[8192 + 15], 0x3c);
	cr_assert_eq(e.b.buf[256 + 99], 0x3c);
	e2e_close(&e);
}

/*
 * Two UD QPs, a and b, with Q_Key qkey, and an address vector (from an
 * address handle, returned for the caller to destroy) that reaches b's
 * port. e2e_open() connects RC-style; UD needs only INIT (qkey) -> RTR ->
 * RTS.
 */
static struct ibv_ah *ud_open(struct e2e *e, uint32_t qkey, struct rf_wqe_av *av)
{
	struct e2e_opts o;
	struct rf_qp_conn_attr ca;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;

	memset(&o, 0, sizeof(o));
	o.type = IBV_QPT_UD;
	memset(e, 0, sizeof(*e));
	{
		struct ibv_device **l = ibv_get_device_list(NULL);

		cr_assert_not_null(l);
		e->ctx = ibv_open_device(l[0]);
		ibv_free_device_list(l);
	}
	e->pd = ibv_alloc_pd(e->ctx);
	cr_assert_eq(ibv_query_port(e->ctx, 1, &e->port), 0);
	e2e_side_open(e, &e->a, &o, NULL);
	e2e_side_open(e, &e->b, &o, NULL);
	cr_assert_eq(e->a.qp.kind, RF_QP_UD);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_WRITE;	/* UC: writes (UD ignores it) */
	ca.gid_index = -1;
	ca.qkey = qkey;
	cr_assert_eq(rf_qp_connect_ibv(&e->a.qp, &ca, NULL), 0);
	cr_assert_eq(rf_qp_connect_ibv(&e->b.qp, &ca, NULL), 0);

	memset(&aa, 0, sizeof(aa));
	aa.dlid = e->port.lid;
	aa.port_num = 1;
	if (e->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		aa.is_global = 1;
		cr_assert_eq(ibv_query_gid(e->ctx, 1, 0, &aa.grh.dgid), 0);
		aa.grh.hop_limit = 64;
	}
	ah = ibv_create_ah(e->pd, &aa);
	cr_assert_not_null(ah, "create_ah: %s", strerror(errno));
	cr_assert_eq(rf_ah_av_ibv(ah, av), 0);
	return ah;
}

Test(e2e_uc_ud, ud_send_with_address_handle)
{
	struct e2e e;
	struct rf_wc wc[2];
	struct ibv_ah *ah;
	struct rf_wqe_av av;
	const uint32_t qkey = 0x11112222;
	uint8_t msg[24];

	ah = ud_open(&e, qkey, &av);

	for (int i = 0; i < 2; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 1024u * i),
					    1024, 40 + (uint64_t)i), 0);
	rf_rq_ring(&e.b.qp.rq);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x61 + i);
	memcpy(e.a.buf, msg, sizeof(msg));
	/* from a buffer, then inline with an immediate */
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, e.b.qp.qpn, qkey, NULL, e.a.mr->lkey,
					e2e_addr(&e.a, 0), sizeof(msg), 0, 0, 0, 1), 0);
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, e.b.qp.qpn, qkey, msg, 0, 0,
					sizeof(msg), RF_BE32(5), 1, RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "UD send: %u", wc[0].status);
	cr_assert_eq(wc[0].wr_id, 2);
	e2e_wait(&e.b.cq, wc, 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(wc[i].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, 40 + (uint64_t)i);
		cr_assert_eq(wc[i].byte_len, 40 + sizeof(msg), "GRH area + payload");
		cr_assert_eq(wc[i].src_qp, e.a.qp.qpn);
		cr_assert_eq(memcmp(e.b.buf + 1024 * i + 40, msg, sizeof(msg)), 0);
	}
	cr_assert_eq(wc[1].flags & RF_WC_WITH_IMM, RF_WC_WITH_IMM);
	cr_assert_eq(wc[1].imm, RF_BE32(5));
	/* a wrong Q_Key is dropped silently: nothing arrives */
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 1024, 50), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, e.b.qp.qpn, qkey + 1, msg, 0, 0, 4,
					0, 0, RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(e2e_poll_for(&e.b.cq, wc, 1, 300), 0);
	ibv_destroy_ah(ah);
	e2e_close(&e);
}

/* A MAD header at p, built with the header struct. */
static void put_mad(uint8_t *p, uint8_t cls, uint8_t method, uint16_t attr, uint64_t tid)
{
	struct rf_mad_hdr h;

	memset(&h, 0, sizeof(h));
	h.base_version = RF_MAD_BASE_VERSION;
	h.mgmt_class = cls;
	h.class_version = 2;
	h.method = method;
	h.tid = rf_htobe64(tid);
	h.attr_id = rf_htobe16(attr);
	memset(p, 0x5a, RF_MAD_LEN);
	memcpy(p, &h, sizeof(h));
}

/*
 * Snooping MADs in UD traffic: SA PathRecord responses and all CM go to
 * their filters, an SA request to neither, a datagram too short to be a
 * MAD is not one; each read where the receive put it, past the GRH area.
 */
Test(e2e_uc_ud, mad_snoop_filters)
{
	struct e2e e;
	struct rf_wc wc[4];
	struct ibv_ah *ah;
	struct rf_wqe_av av;
	struct rf_mad_filter f[2];
	const uint32_t qkey = 0x11112222, stride = RF_UD_GRH_LEN + RF_MAD_LEN;
	const int want[4] = { 0, 1, -1, -2 };	/* -2: no MAD at all */
	const uint8_t junk[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int got[4] = { 9, 9, 9, 9 };

	ah = ud_open(&e, qkey, &av);
	cr_assert_eq(rf_mad_filter(&f[0], RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP,
				   RF_MAD_ATTR_PATH_RECORD), 0);
	cr_assert_eq(rf_mad_filter(&f[1], RF_MAD_CLASS_CM, RF_MAD_ANY, RF_MAD_ANY), 0);
	for (uint32_t i = 0; i < 4; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, stride * i),
					    stride, i), 0);
	rf_rq_ring(&e.b.qp.rq);

	put_mad(e.a.buf, RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP, RF_MAD_ATTR_PATH_RECORD, 1);
	put_mad(e.a.buf + RF_MAD_LEN, RF_MAD_CLASS_CM, RF_MAD_METHOD_SEND, RF_MAD_ATTR_CM_REQ, 2);
	put_mad(e.a.buf + 2 * RF_MAD_LEN, RF_MAD_CLASS_SA, RF_MAD_METHOD_GET,
		RF_MAD_ATTR_PATH_RECORD, 3);
	for (uint32_t i = 0; i < 3; i++)
		cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, e.b.qp.qpn, qkey, NULL,
						e.a.mr->lkey, e2e_addr(&e.a, RF_MAD_LEN * i),
						RF_MAD_LEN, 0, 0, 0, i), 0);
	cr_assert_eq(rf_sq_post_ud_send(&e.a.qp.sq, &av, e.b.qp.qpn, qkey, junk, 0, 0,
					sizeof(junk), 0, 0, RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);

	e2e_wait(&e.b.cq, wc, 4);
	for (int i = 0; i < 4; i++) {
		uint32_t len = 0;
		const void *mad = rf_ud_mad(&wc[i], e.b.buf + stride * wc[i].wr_id, &len);

		cr_assert_eq(wc[i].src_qp, e.a.qp.qpn);
		got[wc[i].wr_id] = mad ? rf_mad_match(f, 2, mad, len) : -2;
		if (mad)
			cr_assert_eq(len, RF_MAD_LEN);
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(got[i], want[i], "datagram %d: %d", i, got[i]);
	ibv_destroy_ah(ah);
	e2e_close(&e);
}
