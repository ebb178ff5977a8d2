/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * device_wqe.c - libFuzzer target: the emulated HCA's device model fed
 * arbitrary bytes as send WQEs (RC, UC, UD and XRC send queues) and as
 * receive WQEs (the RC responder's RQ, an SRQ and an XRC SRQ), with
 * arbitrary doorbell record values, then rung.
 *
 * The emulator's objects (the fake kernel and the device model) are linked
 * into this binary, built with the same sanitizers; libibverbs and libmlx5
 * bind to its open/write/fstat... as they would to librfemu.so's under
 * LD_PRELOAD (fuzz/README.md). The engine thread runs as usual. One
 * process is one emulated host: every QP pair is connected on loopback.
 *
 * Per input: the chosen requester and its responder are reset and brought
 * back to RTS (a clean queue whatever the last input did), the queue
 * buffers are overwritten with the input, the doorbell records set, the
 * doorbell rung; then the harness runs the device until it has taken the
 * doorbell and has nothing more to do (harness_settle()), and reaps the
 * CQs. What must hold:
 *
 *   - no crash and no sanitizer report (the queue buffers come from the
 *     heap, so a read past a WQE or past the queue hits a redzone);
 *   - no hang: an engine that loops holds emu_lock, and libFuzzer's
 *     -timeout reports the input;
 *   - nothing written outside registered memory: the MR covers the middle
 *     of a larger buffer whose guard areas must keep their pattern;
 *   - every completion has a status libibverbs defines.
 *
 * Input: byte 0 the queue (& 3: RC, UC, UD, XRC; bit 2: the responder
 * receives through the SRQ), bytes 1-2 the SQ doorbell record, bytes 3-4
 * the RQ or SRQ counter, byte 5 the number of SQ BBs the input covers,
 * then the SQ bytes, then the receive queue bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <rdmafast/rdmafast.h>
#include <rdmafast/verbs.h>

#include "emu_harness.h"


#define NQ        4	/* RC, UC, UD, XRC */

struct side {
	struct ibv_qp *qp;
	struct mlx5dv_qp dv;
};

/* beside the harness's device, PD, CQ and MR (H) */
static struct {
	struct ibv_srq *srq, *xsrq;
	struct mlx5dv_srq dv_srq, dv_xsrq;
	struct ibv_xrcd *xrcd;
	struct side req[NQ], resp[NQ];
} F;

static struct ibv_qp *create_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = type;
	a.send_cq = H.cq;
	a.recv_cq = H.cq;
	a.srq = srq;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = srq ? 0 : 16;
	a.cap.max_send_sge = 4;
	a.cap.max_recv_sge = srq ? 0 : 4;
	a.cap.max_inline_data = 64;
	return ibv_create_qp(H.pd, &a);
}

static void dv_qp(struct side *s)
{
	struct mlx5dv_obj o = { .qp = { .in = s->qp, .out = &s->dv } };

	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP) == 0);
}

static void dv_srq(struct ibv_srq *srq, struct mlx5dv_srq *out)
{
	struct mlx5dv_obj o = { .srq = { .in = srq, .out = out } };

	CHECK(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ) == 0);
}

static void setup(void)
{
	struct ibv_srq_init_attr sa;
	struct ibv_srq_init_attr_ex xa;
	struct ibv_xrcd_init_attr xd;
	struct ibv_qp_init_attr_ex qa;

	harness_open(256);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 2;
	F.srq = ibv_create_srq(H.pd, &sa);
	CHECK(F.srq);
	dv_srq(F.srq, &F.dv_srq);

	memset(&xd, 0, sizeof(xd));
	xd.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xd.fd = -1;
	xd.oflags = O_CREAT;
	F.xrcd = ibv_open_xrcd(H.ctx, &xd);
	CHECK(F.xrcd);
	memset(&xa, 0, sizeof(xa));
	xa.attr.max_wr = 16;
	xa.attr.max_sge = 2;
	xa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	xa.srq_type = IBV_SRQT_XRC;
	xa.xrcd = F.xrcd;
	xa.cq = H.cq;
	xa.pd = H.pd;
	F.xsrq = ibv_create_srq_ex(H.ctx, &xa);
	CHECK(F.xsrq);
	dv_srq(F.xsrq, &F.dv_xsrq);

	F.req[0].qp = create_qp(IBV_QPT_RC, NULL);
	F.resp[0].qp = create_qp(IBV_QPT_RC, NULL);
	F.req[1].qp = create_qp(IBV_QPT_UC, NULL);
	F.resp[1].qp = create_qp(IBV_QPT_UC, F.srq);
	F.req[2].qp = create_qp(IBV_QPT_UD, NULL);
	F.resp[2].qp = create_qp(IBV_QPT_UD, NULL);

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.send_cq = H.cq;
	qa.cap.max_send_wr = 16;
	qa.cap.max_send_sge = 4;
	qa.cap.max_inline_data = 64;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = H.pd;
	F.req[3].qp = ibv_create_qp_ex(H.ctx, &qa);
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_XRC_RECV;
	qa.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	qa.xrcd = F.xrcd;
	F.resp[3].qp = ibv_create_qp_ex(H.ctx, &qa);
	for (int q = 0; q < NQ; q++) {
		CHECK(F.req[q].qp && F.resp[q].qp);
		dv_qp(&F.req[q]);
		if (q != 3)
			dv_qp(&F.resp[q]);
	}
}

/*
 * FUZZ_WQE_BOUNDARY=1: the doorbell record is moved down to the end of the
 * last whole WQE at or below it (WQEs walked from BB 0 by their DS), so
 * that runs get past the known "record inside a WQE" hang (issue 14) while
 * it is open. Off by default: that hang is a finding.
 */
static int boundary_only;

static uint16_t wqe_boundary(const uint8_t *sq, uint32_t wqe_cnt, uint16_t want)
{
	uint32_t pos = 0, lim = want % (wqe_cnt + 1);

	while (pos < lim) {
		uint32_t ds = sq[64 * pos + 7] & 0x3f;
		uint32_t nbb = ds ? (ds * 16 + 63) / 64 : 1;

		if (pos + nbb > lim)
			break;
		pos += nbb;
	}
	return (uint16_t)pos;
}

/*
 * The seed corpus: well-formed WQEs that rdmafast's own posts build with
 * this process's keys and QPNs (deterministic for host 1 of an empty
 * subnet). FUZZ_WRITE_SEEDS=DIR writes them (fuzz/README.md).
 */
static void write_seed(const char *dir, const char *name, uint8_t q, uint16_t sq_db,
		       const uint8_t *sqb, uint32_t nbb, const uint8_t *rqb, uint32_t rlen)
{
	char path[512];
	uint8_t hdr[6] = { q, (uint8_t)sq_db, (uint8_t)(sq_db >> 8), 4, 0, (uint8_t)nbb };
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f);
	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(sqb, 1, 64u * nbb, f);
	fwrite(rqb, 1, rlen, f);
	fclose(f);
}

static void write_seeds(const char *dir)
{
	static const uint32_t kind[NQ] = { RF_QP_RC, RF_QP_UC, RF_QP_UD, RF_QP_XRC };
	static const char *const tname[NQ] = { "rc", "uc", "ud", "xrc" };
	uint64_t base = (uintptr_t)H.mr->addr;
	uint32_t lkey = H.mr->lkey, rkey = H.mr->rkey;
	struct ibv_ah_attr aa = { .dlid = H.lid, .port_num = 1 };
	struct ibv_ah *ah = ibv_create_ah(H.pd, &aa);
	struct rf_wqe_av av;
	uint8_t rqb[16 * 32];
	char name[64];

	CHECK(ah && rf_ah_av_ibv(ah, &av) == 0);
	/* receives: 16 WQEs of one data segment each, 256 bytes apart */
	memset(rqb, 0, sizeof(rqb));
	for (int i = 0; i < 16; i++) {
		struct rf_wqe_data_seg *d = (struct rf_wqe_data_seg *)(rqb + 16 * i);

		rf_set_data_seg(d, 256, lkey, base + 0x8000 + 256u * (uint32_t)i);
	}
	for (uint8_t q = 0; q < NQ; q++) {
		for (int op = 0; op < 5; op++) {
			uint8_t sqb[16 * 64] __attribute__((aligned(64)));
			struct rf_sq_slot slot[16];
			__be32 db[2];
			struct rf_sq_attr a = {
				.buf = sqb, .wqe_cnt = 16, .dbrec = db, .qpn = F.req[q].qp->qp_num,
				.max_inline = 64, .max_sge = 4, .kind = kind[q], .sig_all = 1,
				.slot = slot };
			static const uint8_t payload[64] = "device_wqe seed";
			struct rf_sq sq;
			int rc;

			memset(sqb, 0, sizeof(sqb));
			CHECK(rf_sq_init(&sq, &a) == 0);
			if (q == 3) {
				uint32_t srqn;

				CHECK(ibv_get_srq_num(F.xsrq, &srqn) == 0);
				rf_sq_set_xrc_srqn(&sq, srqn);
			}
			if (q == 2)
				rc = rf_sq_post_ud_send(&sq, &av, F.resp[2].qp->qp_num, 0x11111111,
							op & 1 ? payload : NULL, lkey, base,
							64u << op, 0, 0, RF_SEND_SIGNALED, 1);
			else if (op == 0)
				rc = rf_sq_post_send(&sq, lkey, base, 100, RF_SEND_SIGNALED, 1);
			else if (op == 1)
				rc = rf_sq_post_write(&sq, lkey, base, 200, rkey, base + 0x1000,
						      RF_SEND_SIGNALED, 1);
			else if (op == 2)
				rc = rf_sq_post_send_inline(&sq, payload, 60, RF_SEND_SIGNALED, 1);
			else if (op == 3)
				rc = rf_sq_post_read(&sq, lkey, base + 0x2000, 300, rkey, base,
						     RF_SEND_SIGNALED, 1);
			else
				rc = rf_sq_post_faa(&sq, lkey, base + 0x3000, rkey, base + 0x3008, 5,
						    RF_SEND_SIGNALED, 1);
			if (rc)
				continue;	/* not for this transport */
			/* a second WQE behind it where the transport has one */
			(void)rf_sq_post_write_inline(&sq, payload, 64, rkey, base + 0x4000, 0, 2);
			snprintf(name, sizeof(name), "%s-op%d", tname[q], op);
			write_seed(dir, name, q, (uint16_t)sq.pi, sqb, sq.pi, rqb, sizeof(rqb));
		}
	}
	ibv_destroy_ah(ah);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	boundary_only = getenv("FUZZ_WQE_BOUNDARY") && atoi(getenv("FUZZ_WQE_BOUNDARY"));
	harness_init(setup, write_seeds);
	return 0;
}

/* The doorbell is taken: the device clears the register's word. */
static bool bell_taken(void *db)
{
	return !atomic_load((_Atomic uint64_t *)db);
}

static void put_be16(__be32 *rec, uint16_t v)
{
	*(volatile __be32 *)rec = htobe32(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum ibv_qp_type req_type[NQ] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_SEND };
	static const enum ibv_qp_type resp_type[NQ] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_XRC_RECV };
	struct side *rq, *sq;
	uint32_t q, sq_bytes, nbb, rq_bytes;
	uint16_t sq_db, rq_db;
	uint64_t bell;
	uint8_t *rbuf;
	__be32 *rrec;

	if (size < 6)
		return -1;
	q = data[0] & 3;
	sq = &F.req[q];
	rq = &F.resp[q];
	sq_db = (uint16_t)(data[1] | data[2] << 8);
	rq_db = (uint16_t)(data[3] | data[4] << 8);
	nbb = data[5];
	data += 6;
	size -= 6;

	harness_reap();
	CHECK(harness_bring_up(rq->qp, resp_type[q], sq->qp->qp_num) == 0);
	CHECK(harness_bring_up(sq->qp, req_type[q], rq->qp->qp_num) == 0);
	harness_reap();

	/* the send queue: the input, then zeros (a zero WQE is a NOP of DS 0) */
	sq_bytes = sq->dv.sq.wqe_cnt * sq->dv.sq.stride;
	nbb = nbb % (sq->dv.sq.wqe_cnt + 1);
	memset(sq->dv.sq.buf, 0, sq_bytes);
	memcpy(sq->dv.sq.buf, data, size < nbb * 64u ? size : nbb * 64u);
	data += size < nbb * 64u ? size : nbb * 64u;
	size -= size < nbb * 64u ? size : nbb * 64u;

	/* the receive side: the responder's RQ, the SRQ or the XRC SRQ */
	if (q == 3) {
		rbuf = F.dv_xsrq.buf;
		rq_bytes = 16 * F.dv_xsrq.stride;
		rrec = F.dv_xsrq.dbrec;
	} else if (q == 1) {
		rbuf = F.dv_srq.buf;
		rq_bytes = 16 * F.dv_srq.stride;
		rrec = F.dv_srq.dbrec;
	} else {
		rbuf = rq->dv.rq.buf;
		rq_bytes = rq->dv.rq.wqe_cnt * rq->dv.rq.stride;
		rrec = &rq->dv.dbrec[MLX5_RCV_DBR];
	}
	if (size)
		memcpy(rbuf, data, size < rq_bytes ? size : rq_bytes);
	put_be16(rrec, rq_db);

	if (boundary_only)
		sq_db = wqe_boundary(sq->dv.sq.buf, sq->dv.sq.wqe_cnt, sq_db);

	/* doorbell record, then the doorbell (never 0: 0 means none) */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	put_be16(&sq->dv.dbrec[MLX5_SND_DBR], sq_db);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy(&bell, sq->dv.sq.buf, sizeof(bell));
	bell |= 1;
	atomic_store((_Atomic uint64_t *)sq->dv.bf.reg, bell);
	harness_settle(bell_taken, sq->dv.bf.reg, 2000000000u);
	harness_reap();
	harness_check_guards();
	return 0;
}
