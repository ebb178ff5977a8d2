/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast's CQE decoding against libmlx5's own, on the same bytes: each
 * CQE of a corpus is written into three CQs, one polled by libmlx5's
 * ibv_poll_cq(), one by its extended ibv_start_poll()/ibv_next_poll(),
 * one by rf_cq_poll(), and every field the records share is compared.
 * The decoder and the emulator that writes CQEs were written by the same
 * hands; libmlx5 (providers/mlx5/cq.c) is NVIDIA's reading of the bytes.
 *
 * The device must write none of these CQEs, yet the WQEs posted to give
 * them their wr_ids must be taken: libmlx5 refuses any post below RTS
 * (providers/mlx5/verbs.c, qp_state_max_gs). So libmlx5's QPs are in RTS,
 * connected to a QP in RESET, which drops every packet, with the longest
 * ACK timeout (2^31 * 4.096 us, hours): what they post is emitted and
 * never completes while the test runs. rdmafast's QP stays in RESET.
 * libmlx5 finds a CQE's QP by the user index in srqn_uidx (CQE version 1,
 * which mlx5 contexts negotiate), an index it keeps to itself: each of its
 * QPs first completes one real WRITE to itself, whose CQE tells the index.
 *
 * Where the records legitimately differ (rdmafast(7), "struct rf_wc"; the
 * comparison itself is cqe_oracle.h's, shared with fuzz/cqe_oracle.c):
 *  - rf_wc has no slid, dlid_path_bits, pkey_index nor checksum flag (the
 *    raw CQE stays readable for them); those are not compared;
 *  - byte_len of a requester WRITE or SEND, opcode and flags of an error
 *    and imm of a receive without immediate are undefined in ibv_wc;
 *  - rdmafast reports RF_WC_SOLICITED (CQE bit SE), which ibv_wc cannot;
 *  - a masked atomic completes as RF_WC_MASKED_* in rdmafast; libmlx5
 *    has no case for it: ibv_poll_cq() leaves ibv_wc.opcode and byte_len
 *    unwritten, ibv_wc_read_opcode() says 0 (IBV_WC_SEND);
 *  - libmlx5's two paths disagree on a requester WRITE or SEND with
 *    immediate: ibv_poll_cq() sets IBV_WC_WITH_IMM, ibv_wc_read_wc_flags()
 *    does not (ibv_poll_cq(3): the flag is for receives). rdmafast sets
 *    it, as the classic path does;
 *  - a GRH in a 128-byte CQE (g = 2, or the reserved 3) is not "a GRH in
 *    the buffer": rdmafast says RF_WC_GRH only for g = 1, libmlx5 for
 *    any g (both are in the corpus; the other fields must still agree).
 */
#include "e2e.h"
#include "cqe_oracle.h"

#include <infiniband/mlx5dv.h>

enum {
	OR_WQES = 48,
	OR_RECV = 64,		/* bytes of each receive buffer */
	OR_POISON = 0xa5,	/* ibv_wc fields left unwritten */
};

struct or_cq {
	struct ibv_cq *cq;	/* the classic CQ or ibv_cq_ex_to_cq() of cqx */
	struct ibv_cq_ex *cqx;
	uint8_t *buf;
	uint32_t cqe_cnt, cqe_size;
	uint32_t ci;		/* our copy of the consumer index */
};

struct or_side {
	struct or_cq c;
	struct ibv_qp *qp;
	struct rf_qp rq;	/* libmlx5 sides: only to connect; rdmafast: the QP */
	uint32_t uidx;
};

struct oracle {
	struct e2e e;
	struct or_side l, x, r;	/* libmlx5 classic, libmlx5 extended, rdmafast */
	struct rf_cq rcq;
	uint32_t posted;	/* WQEs posted to each SQ and each RQ */
	uint16_t sq_ctr, rq_ctr;	/* the next WQE a CQE of the corpus names */
};

static void or_cq_map(struct or_cq *c)
{
	struct mlx5dv_obj o;
	struct mlx5dv_cq dv;

	memset(&o, 0, sizeof(o));
	o.cq.in = c->cq;
	o.cq.out = &dv;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	c->buf = (uint8_t *)dv.buf;
	c->cqe_cnt = dv.cqe_cnt;
	c->cqe_size = dv.cqe_size;
	c->ci = 0;
}

static struct ibv_qp *or_qp(struct oracle *o, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(o->e.pd, &ia);
	cr_assert_not_null(qp, "create_qp: %s", strerror(errno));
	return qp;
}

/* The address of the 64-byte CQE of index ci (the second half of a 128). */
static struct rf_cqe64 *or_slot(const struct or_cq *c, uint32_t ci)
{
	return (struct rf_cqe64 *)(c->buf + (ci & (c->cqe_cnt - 1)) * c->cqe_size +
				   (c->cqe_size - 64));
}

static void or_ibv_poll_one(struct or_side *s, struct ibv_wc *wc)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int k;

	if (s->c.cqx) {
		int err;

		while ((err = cqe_oracle_poll_ex(s->c.cqx, wc)) == ENOENT)
			cr_assert(e2e_now_ms() < end, "no completion");
		cr_assert_eq(err, 0, "start_poll: %d", err);
	} else {
		while ((k = ibv_poll_cq(s->c.cq, 1, wc)) == 0)
			cr_assert(e2e_now_ms() < end, "no completion");
		cr_assert_eq(k, 1);
	}
	s->c.ci++;
}

/* Connect a libmlx5 QP (RESET) to peer qpn on this port. */
static void or_connect(struct oracle *o, struct or_side *s, uint32_t qpn, uint8_t timeout)
{
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;

	memset(&ca, 0, sizeof(ca));
	memset(&peer, 0, sizeof(peer));
	ca.access = RF_ACCESS_REMOTE_WRITE;
	ca.gid_index = -1;
	ca.timeout = timeout;
	peer.qpn = qpn;
	peer.lid = o->e.port.lid;
	if (o->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(o->e.ctx, 1, 0, &peer.gid), 0);
	}
	cr_assert_eq(rf_qp_connect_ibv(&s->rq, &ca, &peer), 0);
}

/*
 * A libmlx5 QP: one WRITE to itself, whose CQE names the QP's user index;
 * then through RESET (which empties libmlx5's queues) to RTS towards
 * dead, the QP in RESET.
 */
static void or_learn_uidx(struct oracle *o, struct or_side *s, uint32_t dead)
{
	struct ibv_qp_attr qa;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct ibv_qp_cap cap = { 64, 64, 1, 1, 0 };
	const struct rf_cqe64 *cqe = or_slot(&s->c, 0);
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;

	cr_assert_eq(rf_qp_init_ibv(&s->rq, s->qp, &cap, 0), 0);
	or_connect(o, s, s->qp->qp_num, 0);
	sge.addr = e2e_addr(&o->e.a, 0);
	sge.length = 8;
	sge.lkey = o->e.a.mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = e2e_addr(&o->e.a, 64);
	wr.wr.rdma.rkey = o->e.a.mr->rkey;
	cr_assert_eq(ibv_post_send(s->qp, &wr, &bad), 0);
	while (rf_cqe_opcode(__atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE)) == RF_CQE_INVALID)
		cr_assert(e2e_now_ms() < end, "the loopback WRITE never completed");
	s->uidx = rf_be32toh(cqe->srqn_uidx) & 0xffffff;
	or_ibv_poll_one(s, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(s->qp, &qa, IBV_QP_STATE), 0);
	or_connect(o, s, dead, 31);
}

/* A libmlx5 CQ of 128 CQEs of cqe_size bytes, polled the extended way. */
static struct ibv_cq_ex *or_cq_ex(struct oracle *o, uint32_t cqe_size)
{
	struct ibv_cq_ex *cq = cqe_oracle_cq_ex(o->e.ctx, 128, cqe_size);

	cr_assert_not_null(cq, "mlx5dv_create_cq: %s", strerror(errno));
	return cq;
}

static void or_open(struct oracle *o, uint32_t cqe_size)
{
	struct e2e_opts eo;
	struct rf_qp_init_attr qa;
	struct ibv_cq_ex *lcq;

	memset(o, 0, sizeof(*o));
	memset(&eo, 0, sizeof(eo));
	e2e_open(&o->e, &eo);

	cr_assert_eq(rf_cq_create_ibv(&o->rcq, &o->r.c.cq, o->e.ctx, 128, NULL, cqe_size), 0);
	or_cq_map(&o->r.c);
	cr_assert_eq(o->r.c.cqe_size, cqe_size);
	memset(&qa, 0, sizeof(qa));
	qa.pd = o->e.pd;
	qa.send_cq = o->r.c.cq;
	qa.recv_cq = o->r.c.cq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 64;
	qa.max_recv_wr = 64;
	qa.max_send_sge = 1;
	qa.max_recv_sge = 1;
	cr_assert_eq(rf_qp_create_ibv(&o->r.rq, &qa), 0);
	o->r.qp = o->r.rq.ibqp;
	cr_assert_eq(rf_cq_attach(&o->rcq, o->r.rq.qpn, &o->r.rq.sq, &o->r.rq.rq, NULL), 0);

	lcq = or_cq_ex(o, cqe_size);	/* polled by ibv_poll_cq() only */
	o->l.c.cq = ibv_cq_ex_to_cq(lcq);
	or_cq_map(&o->l.c);
	o->l.qp = or_qp(o, o->l.c.cq);
	or_learn_uidx(o, &o->l, o->r.rq.qpn);

	o->x.c.cqx = or_cq_ex(o, cqe_size);
	o->x.c.cq = ibv_cq_ex_to_cq(o->x.c.cqx);
	or_cq_map(&o->x.c);
	o->x.qp = or_qp(o, o->x.c.cq);
	or_learn_uidx(o, &o->x, o->r.rq.qpn);
}

static void or_close(struct oracle *o)
{
	cr_assert_eq(rf_cq_detach(&o->rcq, o->r.rq.qpn), 0);
	rf_qp_destroy_ibv(&o->r.rq);
	rf_qp_destroy_ibv(&o->l.rq);
	rf_qp_destroy_ibv(&o->x.rq);
	ibv_destroy_cq(o->l.c.cq);
	ibv_destroy_cq(o->x.c.cq);
	ibv_destroy_cq(o->r.c.cq);
	e2e_close(&o->e);
}

/* Receive i of side s (0 libmlx5, 1 extended, 2 rdmafast) scatters here. */
static uint8_t *or_rbuf(struct oracle *o, int s, uint32_t i)
{
	return o->e.a.buf + 8192 + 4096 * s + OR_RECV * i;
}

/*
 * One-BB WRITEs and receives of index first..first+n-1, wr_ids 0x5000 +
 * index and 0x5100 + index, on every side; none completes (the header
 * says why).
 */
static void or_post(struct oracle *o, uint32_t first, uint32_t n)
{
	struct or_side *lib[2] = { &o->l, &o->x };
	struct e2e_side *a = &o->e.a;

	for (int s = 0; s < 2; s++) {
		for (uint32_t i = first; i < first + n; i++) {
			struct ibv_sge sge = { e2e_addr(a, 0), 8, a->mr->lkey };
			struct ibv_sge rsge = { 0, OR_RECV, a->mr->lkey };
			struct ibv_send_wr wr, *bad;
			struct ibv_recv_wr rwr, *rbad;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 0x5000 + i;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.wr.rdma.remote_addr = e2e_addr(a, 64);
			wr.wr.rdma.rkey = a->mr->rkey;
			cr_assert_eq(ibv_post_send(lib[s]->qp, &wr, &bad), 0);
			memset(&rwr, 0, sizeof(rwr));
			rwr.wr_id = 0x5100 + i;
			rsge.addr = (uintptr_t)or_rbuf(o, s, i);
			rwr.sg_list = &rsge;
			rwr.num_sge = 1;
			cr_assert_eq(ibv_post_recv(lib[s]->qp, &rwr, &rbad), 0);
		}
	}
	E2E_CHECKED_EXPECT(RF_CHK_QP_STATE);	/* on purpose: nothing may run */
	for (uint32_t i = first; i < first + n; i++) {
		cr_assert_eq(rf_sq_post_write(&o->r.rq.sq, a->mr->lkey, e2e_addr(a, 0), 8,
					      a->mr->rkey, e2e_addr(a, 64), RF_SEND_SIGNALED,
					      0x5000 + i), 0);
		cr_assert_eq(rf_rq_post_one(&o->r.rq.rq, a->mr->lkey, (uintptr_t)or_rbuf(o, 2, i),
					    OR_RECV, 0x5100 + i), 0);
	}
	rf_sq_ring(&o->r.rq.sq);
	rf_rq_ring(&o->r.rq.rq);
}

/* Write case k at side s's consumer index, naming WQE index counter. */
static void or_write(struct or_side *s, const struct cqe_case *k, uint16_t counter)
{
	cqe_case_write(or_slot(&s->c, s->c.ci), k, s->qp->qp_num, s->uidx, counter,
		       (s->c.ci & s->c.cqe_cnt) ? 1 : 0);
}

static void or_compare(const struct cqe_case *k, const struct ibv_wc *w, const struct rf_wc *r,
		       int ex, uint32_t lqpn, uint32_t rqpn)
{
	const char *impl = ex ? "ibv_start_poll" : "ibv_poll_cq";
	const char *d = cqe_case_differs(k, w, r, ex);

	cr_assert_eq(r->wr_id, w->wr_id, "%s, %s: wr_id rdmafast %#lx libmlx5 %#lx", k->what,
		     impl, (unsigned long)r->wr_id, (unsigned long)w->wr_id);
	cr_assert_eq(w->qp_num, lqpn, "%s, %s: libmlx5 qp_num", k->what, impl);
	cr_assert_eq(r->qp_num, rqpn, "%s: rdmafast qp_num", k->what);
	cr_assert_null(d, "%s (syndrome %#x), %s: %s differs; rdmafast status %u opcode %u "
		       "flags %#x len %u imm %#x src_qp %#x sl %u vendor %u; libmlx5 status %u "
		       "opcode %u flags %#x len %u imm %#x src_qp %#x sl %u vendor %u",
		       k->what, k->syndrome, impl, d, r->status, r->opcode, r->flags, r->byte_len,
		       rf_be32toh(r->imm), r->src_qp, r->sl, r->vendor_err, (unsigned)w->status,
		       (unsigned)w->opcode, w->wc_flags, w->byte_len, be32toh(w->imm_data),
		       w->src_qp, w->sl, w->vendor_err);
}

/* Run the corpus: one CQE at a time, into all three CQs, polled by each. */
static void or_run(struct oracle *o, const struct cqe_case *cases, uint32_t n)
{
	cr_assert_leq(o->posted + n, OR_WQES);
	or_post(o, o->posted, n);
	o->posted += n;
	for (uint32_t i = 0; i < n; i++) {
		const struct cqe_case *k = &cases[i];
		uint16_t ctr = cqe_case_is_req(k) ? o->sq_ctr++ : o->rq_ctr++;
		struct ibv_wc wl, wx;
		struct rf_wc r;
		long end = e2e_now_ms() + E2E_TIMEOUT_MS;

		or_write(&o->l, k, ctr);
		or_write(&o->x, k, ctr);
		or_write(&o->r, k, ctr);
		memset(&wl, OR_POISON, sizeof(wl));
		memset(&wx, OR_POISON, sizeof(wx));
		or_ibv_poll_one(&o->l, &wl);
		or_ibv_poll_one(&o->x, &wx);
		while (rf_cq_poll(&o->rcq, &r, 1) == 0)
			cr_assert(e2e_now_ms() < end, "%s: rdmafast returned nothing", k->what);
		o->r.c.ci++;
		or_compare(k, &wl, &r, 0, o->l.qp->qp_num, o->r.qp->qp_num);
		or_compare(k, &wx, &r, 1, o->x.qp->qp_num, o->r.qp->qp_num);
		if (!cqe_case_is_req(k)) {
			cr_assert_eq(memcmp(or_rbuf(o, 2, ctr), or_rbuf(o, 0, ctr), OR_RECV), 0,
				     "%s: the receive buffers differ (ibv_poll_cq)", k->what);
			cr_assert_eq(memcmp(or_rbuf(o, 2, ctr), or_rbuf(o, 1, ctr), OR_RECV), 0,
				     "%s: the receive buffers differ (ibv_start_poll)", k->what);
		}
	}
}

#define REQ(op, len) { #op, RF_CQE_REQ, RF_OPCODE_##op, 0, 0, 0, 0, 0, 0, len, 0, 0 }
#define RESP(name, op, se, g, sl, rqpn, len, imm) \
	{ name, RF_CQE_##op, 0, 0, 0, se, g, sl, rqpn, len, imm, 0 }
#define SCAT(name, op, fmt, len, imm) \
	{ name, RF_CQE_##op, 0, 0, 0, 0, 0, 0, 0, len, imm, RF_CQE_FORMAT_##fmt }

/* Every success kind; scattered receives of up to 32 bytes fit any CQE. */
static const struct cqe_case or_success[] = {
		REQ(RDMA_WRITE, 0), REQ(RDMA_WRITE_IMM, 0), REQ(SEND, 0), REQ(SEND_IMM, 0),
		REQ(SEND_INVAL, 0), REQ(RDMA_READ, 4096), REQ(RDMA_READ, 0),
		REQ(ATOMIC_CS, 8), REQ(ATOMIC_FA, 8), REQ(ATOMIC_MASKED_CS, 8),
		REQ(ATOMIC_MASKED_FA, 8),
		RESP("recv", RESP_SEND, 0, 0, 0, 0x000abc, 100, 0x0000ffff),
		RESP("recv, max length", RESP_SEND, 0, 0, 15, 0xffffff, 0x40000000, 0),
		RESP("recv, solicited", RESP_SEND, 1, 0, 3, 0x123456, 1, 0),
		RESP("recv, GRH in buffer", RESP_SEND, 0, RF_CQE_GRH_IN_BUF, 7, 0x42, 140, 0),
		RESP("recv, g = 3 (reserved)", RESP_SEND, 0, 3, 0, 0x42, 140, 0),
		RESP("recv, GRH in the CQE", RESP_SEND, 0, RF_CQE_GRH_IN_CQE, 0, 0x42, 40, 0),
		RESP("recv with imm", RESP_SEND_IMM, 0, 0, 2, 0x77, 64, 0xdeadbeef),
		RESP("recv with imm, solicited", RESP_SEND_IMM, 1, 0, 0, 0x77, 0, 0x01020304),
		RESP("write with imm", RESP_WR_IMM, 0, 0, 1, 0x99, 4096, 0xcafef00d),
		RESP("write with imm, no data", RESP_WR_IMM, 1, 0, 1, 0x99, 0, 0),
		RESP("send with invalidate", RESP_SEND_INV, 0, 0, 0, 0x55, 32, 0x00abcd01),
		RESP("send with invalidate, GRH", RESP_SEND_INV, 0, 1, 4, 0x55, 72, 0xffffffff),
	SCAT("recv, 32 bytes in the CQE", RESP_SEND, SCATTER_32, 32, 0),
	SCAT("recv with imm, 5 bytes in the CQE", RESP_SEND_IMM, SCATTER_32, 5, 0x12345678),
	SCAT("write with imm, 1 byte in the CQE", RESP_WR_IMM, SCATTER_32, 1, 0x1),
};

Test(e2e_cqe_oracle, success_cqes_decode_as_libmlx5_decodes_them)
{
	struct oracle o;

	or_open(&o, 64);
	or_run(&o, or_success, sizeof(or_success) / sizeof(or_success[0]));
	or_close(&o);
}

/* 128-byte CQEs: the same, and up to 64 bytes scattered before the CQE64. */
Test(e2e_cqe_oracle, cqes_of_128_bytes_decode_as_libmlx5_decodes_them)
{
	static const struct cqe_case scat64[] = {
		SCAT("recv, 64 bytes before the CQE", RESP_SEND, SCATTER_64, 64, 0),
		SCAT("recv, 33 bytes before the CQE", RESP_SEND, SCATTER_64, 33, 0),
		SCAT("recv with invalidate, 40 bytes", RESP_SEND_INV, SCATTER_64, 40, 0xabc),
	};
	struct oracle o;

	or_open(&o, 128);
	or_run(&o, or_success, sizeof(or_success) / sizeof(or_success[0]));
	or_run(&o, scat64, sizeof(scat64) / sizeof(scat64[0]));
	or_close(&o);
}

#define REQ_ERR(syn, vendor) \
	{ "requester " #syn, RF_CQE_REQ_ERR, RF_OPCODE_RDMA_WRITE, syn, vendor, 0, 0, 0, 0, 0, 0, 0 }
#define RESP_ERR(syn, vendor) \
	{ "responder " #syn, RF_CQE_RESP_ERR, 0, syn, vendor, 0, 0, 0, 0, 0, 0, 0 }

Test(e2e_cqe_oracle, error_cqes_decode_as_libmlx5_decodes_them)
{
	static const uint8_t syn[] = {
		RF_CQE_SYNDROME_LOCAL_LENGTH_ERR, RF_CQE_SYNDROME_LOCAL_QP_OP_ERR,
		RF_CQE_SYNDROME_LOCAL_PROT_ERR, RF_CQE_SYNDROME_WR_FLUSH_ERR,
		RF_CQE_SYNDROME_MW_BIND_ERR, RF_CQE_SYNDROME_BAD_RESP_ERR,
		RF_CQE_SYNDROME_LOCAL_ACCESS_ERR, RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
		RF_CQE_SYNDROME_REMOTE_ACCESS_ERR, RF_CQE_SYNDROME_REMOTE_OP_ERR,
		RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
		RF_CQE_SYNDROME_REMOTE_ABORTED_ERR,
		0x00, 0x03, 0x99, 0xff,		/* no such syndrome: a general error */
	};
	struct cqe_case cases[2 * sizeof(syn)];
	uint32_t n = 0;
	struct oracle o;

	for (uint32_t i = 0; i < sizeof(syn); i++) {
		struct cqe_case q = REQ_ERR(0, 0), s = RESP_ERR(0, 0);

		q.syndrome = s.syndrome = syn[i];
		q.vendor = (uint8_t)(0x10 + i);
		s.vendor = i == 0 ? RF_CQE_VENDOR_SYNDROME_ODP_PFAULT : (uint8_t)(0x80 + i);
		q.what = "requester error";
		s.what = "responder error";
		cases[n++] = q;
		cases[n++] = s;
	}
	or_open(&o, 64);
	or_run(&o, cases, n);
	or_close(&o);
}
