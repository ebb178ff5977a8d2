/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cqe_oracle.c - libFuzzer target: the same CQE bytes polled through
 * libmlx5's ibv_poll_cq(), through its ibv_start_poll()/ibv_next_poll()
 * path and through rf_cq_poll(), every field the records share compared
 * (tests/e2e/test_e2e_cqe_oracle.c with the CQE chosen by the fuzzer
 * instead of a fixed corpus), on CQs of 64-byte CQEs and on CQs of
 * 128-byte ones.
 *
 * libmlx5 needs a device context, so the emulator is linked in as for
 * device_wqe.c (emu_harness.h). As in the e2e test, the device writes
 * none of these CQEs: libmlx5's QPs are in RTS toward rdmafast's, which
 * stays in RESET and drops everything, with the longest ACK timeout, so
 * their WRITEs are emitted and never complete. Every 32 CQEs of either
 * kind libmlx5's QPs of a CQE size go through RESET back to RTS (libmlx5
 * empties its queues) and get 32 WRITEs and 32 receives again;
 * rdmafast's queues get one WQE back per CQE polled.
 *
 * Input: opcode (one of the requester and responder success and error
 * CQEs), the WQE opcode of a requester CQE (the ten kinds the test names),
 * syndrome, vendor syndrome, SE, g, SL, the source QPN, byte count,
 * immediate, the CQE size, and whether data is scattered to the CQE: up
 * to 32 bytes in the CQE64, or, in a 128-byte CQE, up to 64 bytes in its
 * first half. What must hold is what the e2e test checks, with its stated
 * exceptions (tests/e2e/cqe_oracle.h) and one more (an IB atomic's byte
 * count, below): the wr_id of the WQE named, status, QPN, vendor syndrome
 * of an error; opcode, WITH_IMM, WITH_INV, byte count, GRH, immediate,
 * invalidated rkey, source QP, SL and the receive buffer's bytes
 * otherwise, for both of libmlx5's poll paths.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <rdmafast/rdmafast.h>
#include <rdmafast/verbs.h>

#include "emu_harness.h"
#include "../tests/e2e/cqe_oracle.h"

#define BATCH   32		/* libmlx5 WQEs per RESET cycle */
#define RECV    64		/* bytes of each receive buffer */
#define POISON  0xa5

struct side {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;		/* polled by ibv_start_poll(); NULL: ibv_poll_cq() */
	uint8_t *buf;
	uint32_t cqe_cnt, cqe_size, ci;
	struct ibv_qp *qp;
	struct rf_qp rq;
	uint32_t uidx;
	uint8_t *recv;			/* 64 receive buffers of RECV bytes */
};

/* The three CQs of one CQE size, each with its QP. */
struct cfg {
	struct side l, x, r;		/* libmlx5 classic, libmlx5 extended, rdmafast */
	struct rf_cq rcq;
	uint32_t lsq, lrq;		/* libmlx5's: the next WQE a CQE names */
	uint32_t rsq, rrq;		/* rdmafast's */
	uint32_t sq_posted, rq_posted;	/* rdmafast: posted so far */
};

static struct cfg C[2];			/* 64- and 128-byte CQEs */

static void cq_map(struct side *s)
{
	struct mlx5dv_obj o;
	struct mlx5dv_cq dv;

	memset(&o, 0, sizeof(o));
	o.cq.in = s->cq;
	o.cq.out = &dv;
	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ) == 0);
	s->buf = (uint8_t *)dv.buf;
	s->cqe_cnt = dv.cqe_cnt;
	s->cqe_size = dv.cqe_size;
	s->ci = 0;
}

static struct rf_cqe64 *slot(const struct side *s, uint32_t ci)
{
	return (struct rf_cqe64 *)(s->buf + (ci & (s->cqe_cnt - 1)) * s->cqe_size +
				   (s->cqe_size - 64));
}

static uint8_t *rbuf(const struct side *s, uint32_t i)
{
	return s->recv + RECV * (i % 64);
}

static void connect_to(struct side *s, uint32_t qpn, uint8_t timeout)
{
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;

	memset(&ca, 0, sizeof(ca));
	memset(&peer, 0, sizeof(peer));
	ca.access = RF_ACCESS_REMOTE_WRITE;
	ca.gid_index = -1;
	ca.timeout = timeout;
	peer.qpn = qpn;
	peer.lid = H.lid;
	CHECK(rf_qp_connect_ibv(&s->rq, &ca, &peer) == 0);
}

/* One record of a libmlx5 side, by the side's poll path. */
static void lib_poll(struct side *s, struct ibv_wc *w)
{
	if (s->cqx)
		CHECK(cqe_oracle_poll_ex(s->cqx, w) == 0);
	else
		CHECK(ibv_poll_cq(s->cq, 1, w) == 1);
	s->ci++;
}

/* A libmlx5 QP: RESET (its queues emptied), RTS toward rdmafast's, BATCH WRITEs and receives. */
static void lib_cycle_qp(struct side *s, uint32_t dead)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };

	CHECK(ibv_modify_qp(s->qp, &qa, IBV_QP_STATE) == 0);
	connect_to(s, dead, 31);
	for (uint32_t i = 0; i < BATCH; i++) {
		struct ibv_sge sge = { (uintptr_t)H.mr->addr, 8, H.mr->lkey };
		struct ibv_sge rsge = { (uintptr_t)rbuf(s, i), RECV, H.mr->lkey };
		struct ibv_send_wr wr, *bad;
		struct ibv_recv_wr rwr, *rbad;

		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x5000 + i;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = (uintptr_t)H.mr->addr + 64;
		wr.wr.rdma.rkey = H.mr->rkey;
		CHECK(ibv_post_send(s->qp, &wr, &bad) == 0);
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 0x5100 + i;
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		CHECK(ibv_post_recv(s->qp, &rwr, &rbad) == 0);
	}
}

static void lib_cycle(struct cfg *c)
{
	lib_cycle_qp(&c->l, c->r.rq.qpn);
	lib_cycle_qp(&c->x, c->r.rq.qpn);
	c->lsq = c->lrq = 0;
}

/* rdmafast's queues: topped up to BATCH WQEs each, wr_id 0x100000/0x200000 + the 16-bit index. */
static void rf_top_up(struct cfg *c)
{
	while (c->sq_posted - c->rsq < BATCH) {
		CHECK(rf_sq_post_write(&c->r.rq.sq, H.mr->lkey, (uintptr_t)H.mr->addr, 8, H.mr->rkey,
				       (uintptr_t)H.mr->addr + 64, RF_SEND_SIGNALED,
				       0x100000 + (uint16_t)c->sq_posted) == 0);
		c->sq_posted++;
	}
	while (c->rq_posted - c->rrq < BATCH) {
		CHECK(rf_rq_post_one(&c->r.rq.rq, H.mr->lkey, (uintptr_t)rbuf(&c->r, c->rq_posted),
				     RECV, 0x200000 + (uint16_t)c->rq_posted) == 0);
		c->rq_posted++;
	}
	rf_sq_ring(&c->r.rq.sq);
	rf_rq_ring(&c->r.rq.rq);
}

/* A libmlx5 QP's user index: the CQE of one real WRITE to itself names it. */
static void learn_uidx(struct side *s)
{
	struct ibv_qp_cap cap = { 64, 64, 1, 1, 0 };
	struct ibv_sge sge = { (uintptr_t)H.mr->addr, 8, H.mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	const struct rf_cqe64 *cqe = slot(s, 0);

	CHECK(rf_qp_init_ibv(&s->rq, s->qp, &cap, 0) == 0);
	connect_to(s, s->qp->qp_num, 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)H.mr->addr + 64;
	wr.wr.rdma.rkey = H.mr->rkey;
	CHECK(ibv_post_send(s->qp, &wr, &bad) == 0);
	for (long i = 0; rf_cqe_opcode(__atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE)) ==
			 RF_CQE_INVALID; i++)
		CHECK(i < 100000000);
	s->uidx = rf_be32toh(cqe->srqn_uidx) & 0xffffff;
	lib_poll(s, &wc);
	CHECK(wc.status == IBV_WC_SUCCESS);
}

/* A libmlx5 side: its CQ of cqe_size-byte CQEs and its QP. */
static void lib_open(struct side *s, uint32_t cqe_size, int ex)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq_ex *cq = cqe_oracle_cq_ex(H.ctx, 128, cqe_size);

	CHECK(cq);
	s->cqx = ex ? cq : NULL;
	s->cq = ibv_cq_ex_to_cq(cq);
	cq_map(s);
	CHECK(s->cqe_size == cqe_size);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = (struct ibv_qp_cap){ 64, 64, 1, 1, 0 };
	s->qp = ibv_create_qp(H.pd, &ia);
	CHECK(s->qp);
	learn_uidx(s);
}

static void cfg_open(struct cfg *c, uint32_t cqe_size, uint8_t *recv)
{
	struct rf_qp_init_attr qa;

	CHECK(rf_cq_create_ibv(&c->rcq, &c->r.cq, H.ctx, 128, NULL, cqe_size) == 0);
	cq_map(&c->r);
	CHECK(c->r.cqe_size == cqe_size);
	memset(&qa, 0, sizeof(qa));
	qa.pd = H.pd;
	qa.send_cq = c->r.cq;
	qa.recv_cq = c->r.cq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 64;
	qa.max_recv_wr = 64;
	qa.max_send_sge = 1;
	qa.max_recv_sge = 1;
	CHECK(rf_qp_create_ibv(&c->r.rq, &qa) == 0);
	c->r.qp = c->r.rq.ibqp;
	CHECK(rf_cq_attach(&c->rcq, c->r.rq.qpn, &c->r.rq.sq, &c->r.rq.rq, NULL) == 0);
	c->l.recv = recv;
	c->x.recv = recv + 64 * RECV;
	c->r.recv = recv + 2 * 64 * RECV;
	lib_open(&c->l, cqe_size, 0);
	lib_open(&c->x, cqe_size, 1);
	lib_cycle(c);
	rf_top_up(c);
}

static void setup(void)
{
	uint8_t *recv;

	harness_open(16);
	recv = (uint8_t *)H.mr->addr + 8192;
	CHECK(8192 + 2 * 3 * 64 * RECV <= MR_LEN);
	cfg_open(&C[0], 64, recv);
	cfg_open(&C[1], 128, recv + 3 * 64 * RECV);
}

static void write_cqe(struct side *s, const struct cqe_case *k, uint16_t counter)
{
	cqe_case_write(slot(s, s->ci), k, s->qp->qp_num, s->uidx, counter,
		       (s->ci & s->cqe_cnt) ? 1 : 0);
}

/* The e2e test's comparison (cqe_oracle.h), with each side's own wr_id and QPN. */
static void compare(const struct cqe_case *k, const struct side *l, const struct ibv_wc *w,
		    const struct cfg *c, const struct rf_wc *r, uint32_t lctr, uint32_t rctr)
{
	/* each the wr_id of the WQE its CQE named (the counters differ: libmlx5's restart) */
	CHECK(w->wr_id == (cqe_case_is_req(k) ? 0x5000u : 0x5100u) + lctr);
	CHECK(r->wr_id == (cqe_case_is_req(k) ? 0x100000u : 0x200000u) + (uint16_t)rctr);
	CHECK(w->qp_num == l->qp->qp_num);
	CHECK(r->qp_num == c->r.qp->qp_num);
	CHECK(!cqe_case_differs(k, w, r, l->cqx != NULL));
	if (!cqe_case_is_req(k) && k->opcode != RF_CQE_RESP_ERR)
		CHECK(memcmp(rbuf(l, lctr), rbuf(&c->r, rctr), RECV) == 0);
}

static void write_seeds(const char *dir)
{
	(void)dir;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	harness_init(setup, write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t opcodes[] = {
		RF_CQE_REQ, RF_CQE_RESP_WR_IMM, RF_CQE_RESP_SEND, RF_CQE_RESP_SEND_IMM,
		RF_CQE_RESP_SEND_INV, RF_CQE_REQ_ERR, RF_CQE_RESP_ERR,
	};
	static const uint8_t wqe_ops[] = {
		RF_OPCODE_RDMA_WRITE, RF_OPCODE_RDMA_WRITE_IMM, RF_OPCODE_SEND, RF_OPCODE_SEND_IMM,
		RF_OPCODE_SEND_INVAL, RF_OPCODE_RDMA_READ, RF_OPCODE_ATOMIC_CS, RF_OPCODE_ATOMIC_FA,
		RF_OPCODE_ATOMIC_MASKED_CS, RF_OPCODE_ATOMIC_MASKED_FA,
	};
	uint8_t b[20] = { 0 };
	struct cqe_case k;
	struct cfg *c;
	struct ibv_wc wl, wx;
	struct rf_wc r;
	uint32_t lctr, rctr;
	int n;

	memcpy(b, data, size < sizeof(b) ? size : sizeof(b));
	memset(&k, 0, sizeof(k));
	k.opcode = opcodes[b[0] % sizeof(opcodes)];
	k.wqe_op = cqe_case_is_req(&k) ? wqe_ops[b[1] % sizeof(wqe_ops)] : 0;
	k.syndrome = b[2];
	k.vendor = b[3];
	k.se = b[4] & 1;
	k.g = (b[4] >> 1) & 3;
	k.sl = b[4] >> 4;
	k.rqpn = (uint32_t)b[5] | (uint32_t)b[6] << 8 | (uint32_t)b[7] << 16;
	memcpy(&k.byte_cnt, b + 8, 4);
	memcpy(&k.imm, b + 12, 4);
	/* byte 16: bit 0 data scattered to the CQE, 1 128-byte CQEs, 2 in their first half */
	c = &C[(b[16] >> 1) & 1];
	/*
	 * An IB atomic's byte count: libmlx5 says 8 whatever the CQE holds,
	 * rdmafast the CQE's, which a device writes as 8. Not compared on
	 * other bytes.
	 */
	if (k.wqe_op == RF_OPCODE_ATOMIC_CS || k.wqe_op == RF_OPCODE_ATOMIC_FA)
		k.byte_cnt = 8;
	/*
	 * Scattered to the CQE: a responder success, of at most 32 bytes in
	 * the CQE64, or in a 128-byte CQE at most 64 bytes in its first half
	 * (a 64-byte CQE has no first half: no device writes that).
	 */
	if ((b[16] & 1) && !cqe_case_is_req(&k) && k.opcode != RF_CQE_RESP_ERR) {
		if (c->r.cqe_size == 128 && (b[16] & 4)) {
			k.fmt = RF_CQE_FORMAT_SCATTER_64;
			k.byte_cnt %= 65;
		} else {
			k.fmt = RF_CQE_FORMAT_SCATTER_32;
			k.byte_cnt %= 33;
		}
	}

	if (cqe_case_is_req(&k) ? c->lsq == BATCH : c->lrq == BATCH)
		lib_cycle(c);
	lctr = cqe_case_is_req(&k) ? c->lsq++ : c->lrq++;
	rctr = cqe_case_is_req(&k) ? c->rsq++ : c->rrq++;
	memset(rbuf(&c->l, lctr), 0, RECV);
	memset(rbuf(&c->x, lctr), 0, RECV);
	memset(rbuf(&c->r, rctr), 0, RECV);
	write_cqe(&c->l, &k, (uint16_t)lctr);
	write_cqe(&c->x, &k, (uint16_t)lctr);
	write_cqe(&c->r, &k, (uint16_t)rctr);
	memset(&wl, POISON, sizeof(wl));
	memset(&wx, POISON, sizeof(wx));
	lib_poll(&c->l, &wl);
	lib_poll(&c->x, &wx);
	n = rf_cq_poll(&c->rcq, &r, 1);
	CHECK(n == 1);
	c->r.ci++;
	compare(&k, &c->l, &wl, c, &r, lctr, rctr);
	compare(&k, &c->x, &wx, c, &r, lctr, rctr);
	rf_top_up(c);
	harness_check_guards();
	return 0;
}
