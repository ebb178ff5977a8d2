/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every RC operation end to end through rdmafast on both sides: memory
 * effects at the target, requester and responder completions.
 */
#include "e2e.h"

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13);
}

Test(e2e_ops, write_read)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	fill(e.a.buf, 4096, 1);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 4096,
				      e.b.mr->rkey, e2e_addr(&e.b, 8192), RF_SEND_SIGNALED, 11), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "status %u", wc[0].status);
	cr_assert_eq(wc[0].wr_id, 11);
	cr_assert_eq(wc[0].opcode, RF_WC_RDMA_WRITE);
	cr_assert_eq(wc[0].qp_num, e.a.qp.qpn);
	cr_assert_eq(memcmp(e.a.buf, e.b.buf + 8192, 4096), 0);

	/* read it back into a different place */
	cr_assert_eq(rf_sq_post_read(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 16384), 4096,
				     e.b.mr->rkey, e2e_addr(&e.b, 8192), RF_SEND_SIGNALED, 12), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, RF_WC_RDMA_READ);
	cr_assert_eq(wc[0].byte_len, 4096);
	cr_assert_eq(memcmp(e.a.buf, e.a.buf + 16384, 4096), 0);
	/* nothing on b's CQ: one-sided */
	cr_assert_eq(rf_cq_poll(&e.b.cq, wc, 2), 0);
	e2e_close(&e);
}

Test(e2e_ops, send_recv_and_immediates)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[4];

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 4096u * i),
					    4096, 100 + (uint64_t)i), 0);
	rf_rq_ring(&e.b.qp.rq);
	fill(e.a.buf, 1000, 7);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 1000,
				     RF_SEND_SIGNALED, 1), 0);
	cr_assert_eq(rf_sq_post_send_imm(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 10,
					 RF_BE32(0x01020304), RF_SEND_SIGNALED, 2), 0);
	cr_assert_eq(rf_sq_post_write_imm(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 100,
					  e.b.mr->rkey, e2e_addr(&e.b, 30000),
					  RF_BE32(0xa0b0c0d0), RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(wc[i].status, RF_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 1);
	}
	cr_assert_eq(wc[0].opcode, RF_WC_SEND);
	cr_assert_eq(wc[1].flags & RF_WC_WITH_IMM, RF_WC_WITH_IMM);
	cr_assert_eq(wc[2].opcode, RF_WC_RDMA_WRITE);

	e2e_wait(&e.b.cq, wc, 3);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 100);
	cr_assert_eq(wc[0].opcode, RF_WC_RECV);
	cr_assert_eq(wc[0].byte_len, 1000);
	cr_assert_eq(wc[0].src_qp, e.a.qp.qpn);
	cr_assert_eq(memcmp(e.b.buf, e.a.buf, 1000), 0);
	cr_assert_eq(wc[1].wr_id, 101);
	cr_assert_eq(wc[1].flags & RF_WC_WITH_IMM, RF_WC_WITH_IMM);
	cr_assert_eq(wc[1].imm, RF_BE32(0x01020304));
	cr_assert_eq(wc[1].byte_len, 10);
	cr_assert_eq(memcmp(e.b.buf + 4096, e.a.buf, 10), 0);
	cr_assert_eq(wc[2].wr_id, 102);
	cr_assert_eq(wc[2].opcode, RF_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc[2].imm, RF_BE32(0xa0b0c0d0));
	cr_assert_eq(memcmp(e.b.buf + 30000, e.a.buf, 100), 0);
	cr_assert_eq(rf_rq_space(&e.b.qp.rq), e.b.qp.rq.wqe_cnt);
	e2e_close(&e);
}

/*
 * On padded CQs (64-byte CQEs at a 128-byte stride) rf_cq_poll() reads the
 * CQE64 in the second half of each entry, as with 128-byte CQEs, and the
 * data that scatter-to-CQE would carry (a small receive, a small READ with
 * requester scatter allowed) arrive in memory instead.
 */
Test(e2e_ops, padded_cqes)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];

	memset(&o, 0, sizeof(o));
	o.cqe_pad = 1;
	o.allow_scatter = 1;
	e2e_open(&e, &o);
	cr_assert_eq(e.a.cq.cqe_size, 128);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 4096, 100), 0);
	rf_rq_ring(&e.b.qp.rq);
	fill(e.a.buf, 16, 3);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 16,
				     RF_SEND_SIGNALED, 1), 0);
	fill(e.b.buf + 8192, 8, 4);
	cr_assert_eq(rf_sq_post_read(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 4096), 8,
				     e.b.mr->rkey, e2e_addr(&e.b, 8192), RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(wc[i].status, RF_WC_SUCCESS, "status %u", wc[i].status);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 1);
	}
	cr_assert_eq(wc[1].opcode, RF_WC_RDMA_READ);
	cr_assert_eq(wc[1].byte_len, 8);
	cr_assert_eq(memcmp(e.a.buf + 4096, e.b.buf + 8192, 8), 0);
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 100);
	cr_assert_eq(wc[0].opcode, RF_WC_RECV);
	cr_assert_eq(wc[0].byte_len, 16);
	cr_assert_eq(memcmp(e.b.buf, e.a.buf, 16), 0);
	e2e_close(&e);
}

Test(e2e_ops, inline_write_and_send)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];
	uint8_t msg[48];

	memset(&o, 0, sizeof(o));
	o.max_inline = 128;
	e2e_open(&e, &o);
	cr_assert_geq(e.a.qp.sq.max_inline, 128);
	fill(msg, sizeof(msg), 3);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 4096, 9), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_write_inline(&e.a.qp.sq, msg, 8, e.b.mr->rkey,
					     e2e_addr(&e.b, 5000), 0, 1), 0);
	rf_sq_ring(&e.a.qp.sq);	/* BlueFlame */
	cr_assert_eq(rf_sq_post_send_inline(&e.a.qp.sq, msg, sizeof(msg),
					    RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].wr_id, 2, "the unsignaled write reports nothing");
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max, "both retired");
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert_eq(wc[0].byte_len, sizeof(msg));
	cr_assert_eq(memcmp(e.b.buf, msg, sizeof(msg)), 0);
	cr_assert_eq(memcmp(e.b.buf + 5000, msg, 8), 0);
	cr_assert_eq(rf_sq_post_write_inline(&e.a.qp.sq, msg, e.a.qp.sq.max_inline + 1,
					     1, 2, 0, 3), -EINVAL);
	e2e_close(&e);
}

Test(e2e_ops, gather_scatter)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[2];
	struct rf_sge g[3], s[2];

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	fill(e.a.buf, 300, 9);
	for (int i = 0; i < 3; i++) {
		g[i].addr = e2e_addr(&e.a, 100u * i);
		g[i].length = 100;
		g[i].lkey = e.a.mr->lkey;
	}
	s[0].addr = e2e_addr(&e.b, 1000);
	s[0].length = 50;
	s[0].lkey = e.b.mr->lkey;
	s[1].addr = e2e_addr(&e.b, 2000);
	s[1].length = 1000;
	s[1].lkey = e.b.mr->lkey;
	cr_assert_eq(rf_rq_post(&e.b.qp.rq, s, 2, 5), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_send_sg(&e.a.qp.sq, g, 3, RF_SEND_SIGNALED, 6), 0);
	cr_assert_eq(rf_sq_post_write_sg(&e.a.qp.sq, g, 3, e.b.mr->rkey,
					 e2e_addr(&e.b, 40000), RF_SEND_SIGNALED, 7), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 2);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[1].status, RF_WC_SUCCESS);
	e2e_wait(&e.b.cq, wc, 1);
	cr_assert_eq(wc[0].byte_len, 300);
	cr_assert_eq(memcmp(e.b.buf + 1000, e.a.buf, 50), 0);
	cr_assert_eq(memcmp(e.b.buf + 2000, e.a.buf + 50, 250), 0);
	cr_assert_eq(memcmp(e.b.buf + 40000, e.a.buf, 300), 0);
	e2e_close(&e);
}

/*
 * Fetched values come back big-endian on mlx5 devices whose
 * atomic_req_8B_endianness_mode is 0 (the IB convention; libfabric #10911,
 * Open MPI #1148) and in host order on mode-1 devices. The first fetch of
 * a known value tells which; every later result must agree with it.
 */
static int atomic_be = -1;

static uint64_t fetched64(uint64_t raw, uint64_t known_for_probe, int probe)
{
	if (probe) {
		if (rf_be64toh((__be64)raw) == known_for_probe)
			atomic_be = 1;
		else if (raw == known_for_probe)
			atomic_be = 0;
		cr_assert_neq(atomic_be, -1, "fetched %#llx is neither order of %#llx",
			      (unsigned long long)raw, (unsigned long long)known_for_probe);
		cr_log_info("atomic replies are %s", atomic_be ? "big-endian" : "host order");
	}
	return atomic_be ? rf_be64toh((__be64)raw) : raw;
}

static uint32_t fetched32(uint32_t raw)
{
	return atomic_be ? rf_be32toh((__be32)raw) : raw;
}

Test(e2e_ops, atomics)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[4];
	uint64_t *target, *res;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	target = (uint64_t *)(e.b.buf + 64);
	res = (uint64_t *)e.a.buf;
	*target = 100;
	cr_assert_eq(rf_sq_post_faa(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0),
				    e.b.mr->rkey, e2e_addr(&e.b, 64), 5, RF_SEND_SIGNALED, 1), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, RF_WC_FETCH_ADD);
	cr_assert_eq(fetched64(res[0], 100, 1), 100);
	cr_assert_eq(*target, 105);

	/* CAS that fails, then one that succeeds */
	cr_assert_eq(rf_sq_post_cas(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 8),
				    e.b.mr->rkey, e2e_addr(&e.b, 64), 7, 999,
				    RF_SEND_SIGNALED, 2), 0);
	cr_assert_eq(rf_sq_post_cas(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 16),
				    e.b.mr->rkey, e2e_addr(&e.b, 64), 105, 777,
				    RF_SEND_SIGNALED, 3), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 2);
	cr_assert_eq(wc[0].opcode, RF_WC_COMP_SWAP);
	cr_assert_eq(fetched64(res[1], 0, 0), 105);
	cr_assert_eq(fetched64(res[2], 0, 0), 105);
	cr_assert_eq(*target, 777);
	e2e_close(&e);
}

Test(e2e_ops, masked_atomics)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[4];
	uint32_t *t32;
	uint64_t *t64;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	t32 = (uint32_t *)(e.b.buf + 128);
	t64 = (uint64_t *)(e.b.buf + 256);
	/* target memory is in host order, as for the CPU; only the fetched
	 * value comes back big-endian (atomic_req_8B_endianness_mode 0) */
	*t32 = 0x10;
	*t64 = 0xff00;
	*(uint64_t *)(e.b.buf + 512) = 0x0102;
	/* probe the reply byte order with a fetch of a known value */
	cr_assert_eq(rf_sq_post_faa(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 512),
				    e.b.mr->rkey, e2e_addr(&e.b, 512), 0, RF_SEND_SIGNALED, 9), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	fetched64(*(uint64_t *)(e.a.buf + 512), 0x0102, 1);
	cr_assert_eq(rf_sq_post_masked_fa32(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0),
					    e.b.mr->rkey, e2e_addr(&e.b, 128), 3, 0,
					    RF_SEND_SIGNALED, 1), 0);
	/* 64-bit masked CS: replace the low byte when bits 8..15 are 0xff */
	cr_assert_eq(rf_sq_post_masked_cs64(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 8),
					    e.b.mr->rkey, e2e_addr(&e.b, 256),
					    0xff00, 0xff00, 0x42, 0xff,
					    RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 2);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS, "status %u", wc[0].status);
	cr_assert_eq(wc[0].opcode, RF_WC_MASKED_FETCH_ADD);
	cr_assert_eq(wc[1].opcode, RF_WC_MASKED_COMP_SWAP);
	cr_assert_eq(fetched32(*(uint32_t *)e.a.buf), 0x10);
	cr_assert_eq(*t32, 0x13);
	cr_assert_eq(fetched64(*(uint64_t *)(e.a.buf + 8), 0, 0), 0xff00);
	cr_assert_eq(*t64, 0xff42);
	e2e_close(&e);
}

Test(e2e_ops, nop_signaled)
{
	struct e2e e;
	struct e2e_opts o;
	struct rf_wc wc[1];

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 64,
				      e.b.mr->rkey, e2e_addr(&e.b, 0), 0, 1), 0);
	cr_assert_eq(rf_sq_post_nop(&e.a.qp.sq, RF_SEND_SIGNALED, 2), 0);
	rf_sq_ring(&e.a.qp.sq);
	e2e_wait(&e.a.cq, wc, 1);
	cr_assert_eq(wc[0].status, RF_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 2);
	cr_assert_eq(wc[0].opcode, RF_WC_NOP);
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max);
	e2e_close(&e);
}
