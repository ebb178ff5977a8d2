/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cqe_oracle.c - libFuzzer target: the same CQE bytes polled through
 * libmlx5's ibv_poll_cq() and through rf_cq_poll(), every field the
 * records share compared (tests/e2e/test_e2e_cqe_oracle.c with the CQE
 * chosen by the fuzzer instead of a fixed corpus).
 *
 * libmlx5 needs a device context, so the emulator is linked in as for
 * device_wqe.c (emu_harness.h). As in the e2e test, the device writes
 * none of these CQEs: libmlx5's QP is in RTS toward rdmafast's, which
 * stays in RESET and drops everything, with the longest ACK timeout, so
 * its WRITEs are emitted and never complete. Every 32 CQEs of either kind
 * its QP goes through RESET back to RTS (libmlx5 empties its queues) and
 * gets 32 WRITEs and 32 receives again; rdmafast's queues get one WQE back
 * per CQE polled.
 *
 * Input: opcode (one of the requester and responder success and error
 * CQEs), the WQE opcode of a requester CQE (the ten kinds the test names),
 * syndrome, vendor syndrome, SE, g, SL, the source QPN, byte count,
 * immediate, and whether up to 32 bytes are scattered to the CQE. What
 * must hold is what the e2e test checks, with its stated exceptions
 * (tests/e2e/cqe_oracle.h) and one more (an IB atomic's byte count, below): the
 * wr_id of the WQE named, status, QPN, vendor syndrome of an error; opcode,
 * WITH_IMM, WITH_INV, byte count, GRH, immediate, invalidated rkey, source
 * QP, SL and the receive buffer's bytes otherwise.
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
	uint8_t *buf;
	uint32_t cqe_cnt, cqe_size, ci;
	struct ibv_qp *qp;
	struct rf_qp rq;
	uint32_t uidx;
	uint32_t sq_ctr, rq_ctr;	/* the next WQE a CQE names */
	uint32_t sq_posted, rq_posted;	/* rdmafast: posted so far */
};

static struct {
	struct side l, r;		/* libmlx5, rdmafast */
	struct rf_cq rcq;
} O;

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

static uint8_t *rbuf(int side, uint32_t i)
{
	return (uint8_t *)H.mr->addr + 8192 + 8192 * side + RECV * (i % 64);
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

/* libmlx5's QP: RESET (its queues emptied), RTS toward rdmafast's QP, BATCH WRITEs and receives. */
static void lib_cycle(void)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };

	CHECK(ibv_modify_qp(O.l.qp, &qa, IBV_QP_STATE) == 0);
	connect_to(&O.l, O.r.rq.qpn, 31);
	for (uint32_t i = 0; i < BATCH; i++) {
		struct ibv_sge sge = { (uintptr_t)H.mr->addr, 8, H.mr->lkey };
		struct ibv_sge rsge = { (uintptr_t)rbuf(0, i), RECV, H.mr->lkey };
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
		CHECK(ibv_post_send(O.l.qp, &wr, &bad) == 0);
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 0x5100 + i;
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		CHECK(ibv_post_recv(O.l.qp, &rwr, &rbad) == 0);
	}
	O.l.sq_ctr = O.l.rq_ctr = 0;
}

/* rdmafast's queues: topped up to BATCH WQEs each, wr_id 0x100000/0x200000 + the 16-bit index. */
static void rf_top_up(void)
{
	while (O.r.sq_posted - O.r.sq_ctr < BATCH) {
		CHECK(rf_sq_post_write(&O.r.rq.sq, H.mr->lkey, (uintptr_t)H.mr->addr, 8, H.mr->rkey,
				       (uintptr_t)H.mr->addr + 64, RF_SEND_SIGNALED,
				       0x100000 + (uint16_t)O.r.sq_posted) == 0);
		O.r.sq_posted++;
	}
	while (O.r.rq_posted - O.r.rq_ctr < BATCH) {
		CHECK(rf_rq_post_one(&O.r.rq.rq, H.mr->lkey, (uintptr_t)rbuf(1, O.r.rq_posted), RECV,
				     0x200000 + (uint16_t)O.r.rq_posted) == 0);
		O.r.rq_posted++;
	}
	rf_sq_ring(&O.r.rq.sq);
	rf_rq_ring(&O.r.rq.rq);
}

/* A libmlx5 QP's user index: the CQE of one real WRITE to itself names it. */
static void learn_uidx(void)
{
	struct ibv_qp_cap cap = { 64, 64, 1, 1, 0 };
	struct ibv_sge sge = { (uintptr_t)H.mr->addr, 8, H.mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	const struct rf_cqe64 *cqe = slot(&O.l, 0);

	CHECK(rf_qp_init_ibv(&O.l.rq, O.l.qp, &cap, 0) == 0);
	connect_to(&O.l, O.l.qp->qp_num, 0);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)H.mr->addr + 64;
	wr.wr.rdma.rkey = H.mr->rkey;
	CHECK(ibv_post_send(O.l.qp, &wr, &bad) == 0);
	for (long i = 0; rf_cqe_opcode(__atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE)) ==
			 RF_CQE_INVALID; i++)
		CHECK(i < 100000000);
	O.l.uidx = rf_be32toh(cqe->srqn_uidx) & 0xffffff;
	while (ibv_poll_cq(O.l.cq, 1, &wc) == 0)
		;
	CHECK(wc.status == IBV_WC_SUCCESS);
	O.l.ci = 1;
}

static void setup(void)
{
	struct ibv_cq_init_attr_ex xa;
	struct mlx5dv_cq_init_attr dx;
	struct rf_qp_init_attr qa;
	struct ibv_qp_init_attr ia;

	harness_open(16);
	CHECK(rf_cq_create_ibv(&O.rcq, &O.r.cq, H.ctx, 128, NULL, 64) == 0);
	cq_map(&O.r);
	memset(&qa, 0, sizeof(qa));
	qa.pd = H.pd;
	qa.send_cq = O.r.cq;
	qa.recv_cq = O.r.cq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = 64;
	qa.max_recv_wr = 64;
	qa.max_send_sge = 1;
	qa.max_recv_sge = 1;
	CHECK(rf_qp_create_ibv(&O.r.rq, &qa) == 0);
	O.r.qp = O.r.rq.ibqp;
	CHECK(rf_cq_attach(&O.rcq, O.r.rq.qpn, &O.r.rq.sq, &O.r.rq.rq, NULL) == 0);

	memset(&xa, 0, sizeof(xa));
	memset(&dx, 0, sizeof(dx));
	xa.cqe = 128;
	xa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
		      IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SL;
	dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
	dx.cqe_size = 64;
	O.l.cq = ibv_cq_ex_to_cq(mlx5dv_create_cq(H.ctx, &xa, &dx));
	CHECK(O.l.cq);
	cq_map(&O.l);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = O.l.cq;
	ia.recv_cq = O.l.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = (struct ibv_qp_cap){ 64, 64, 1, 1, 0 };
	O.l.qp = ibv_create_qp(H.pd, &ia);
	CHECK(O.l.qp);
	learn_uidx();
	lib_cycle();
	rf_top_up();
}

static void write_cqe(struct side *s, const struct cqe_case *k, uint16_t counter)
{
	cqe_case_write(slot(s, s->ci), k, s->qp->qp_num, s->uidx, counter,
		       (s->ci & s->cqe_cnt) ? 1 : 0);
}

/* The e2e test's comparison (cqe_oracle.h), with each side's own wr_id and QPN. */
static void compare(const struct cqe_case *k, const struct ibv_wc *w, const struct rf_wc *r,
		    uint32_t lctr, uint32_t rctr)
{
	/* each the wr_id of the WQE its CQE named (the counters differ: libmlx5's restart) */
	CHECK(w->wr_id == (cqe_case_is_req(k) ? 0x5000u : 0x5100u) + lctr);
	CHECK(r->wr_id == (cqe_case_is_req(k) ? 0x100000u : 0x200000u) + (uint16_t)rctr);
	CHECK(w->qp_num == O.l.qp->qp_num);
	CHECK(r->qp_num == O.r.qp->qp_num);
	CHECK(!cqe_case_differs(k, w, r, 0));
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
	struct ibv_wc w;
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
	/*
	 * An IB atomic's byte count: libmlx5 says 8 whatever the CQE holds,
	 * rdmafast the CQE's, which a device writes as 8. Not compared on
	 * other bytes.
	 */
	if (k.wqe_op == RF_OPCODE_ATOMIC_CS || k.wqe_op == RF_OPCODE_ATOMIC_FA)
		k.byte_cnt = 8;
	/* scattered to the CQE: a responder success of at most 32 bytes */
	if ((b[16] & 1) && !cqe_case_is_req(&k) && k.opcode != RF_CQE_RESP_ERR) {
		k.fmt = RF_CQE_FORMAT_SCATTER_32;
		k.byte_cnt %= 33;
	}

	if (cqe_case_is_req(&k) ? O.l.sq_ctr == BATCH : O.l.rq_ctr == BATCH)
		lib_cycle();
	lctr = cqe_case_is_req(&k) ? O.l.sq_ctr++ : O.l.rq_ctr++;
	rctr = cqe_case_is_req(&k) ? O.r.sq_ctr++ : O.r.rq_ctr++;
	memset(rbuf(0, lctr), 0, RECV);
	memset(rbuf(1, rctr), 0, RECV);
	write_cqe(&O.l, &k, (uint16_t)lctr);
	write_cqe(&O.r, &k, (uint16_t)rctr);
	memset(&w, POISON, sizeof(w));
	CHECK(ibv_poll_cq(O.l.cq, 1, &w) == 1);
	O.l.ci++;
	n = rf_cq_poll(&O.rcq, &r, 1);
	CHECK(n == 1);
	O.r.ci++;
	compare(&k, &w, &r, lctr, rctr);
	if (!cqe_case_is_req(&k) && k.opcode != RF_CQE_RESP_ERR)
		CHECK(memcmp(rbuf(0, lctr), rbuf(1, rctr), RECV) == 0);
	rf_top_up();
	harness_check_guards();
	return 0;
}
