/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The send queue (rdmafast/sq*.h) in host memory: the bytes of every WQE
 * kind, decoded field by field; space accounting in basic blocks (full
 * queue, nothing written); inline and SGE limits; NOP padding at the queue
 * end; three laps and the 16-bit WQE index wrap; BlueFlame versus doorbell
 * rings; batches.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x1234, MAXINL = 220, MAXSGE = 8 };

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

/* Check a control segment field by field; imm is the raw wire value. */
static void check_ctrl(const uint8_t *w, uint8_t opcode, uint8_t opmod,
		       uint16_t idx, uint32_t qpn, uint8_t ds, uint8_t fm,
		       uint32_t imm_wire)
{
	uint32_t imm;

	cr_assert_eq(w[0], opmod, "opmod %#x", w[0]);
	cr_assert_eq((rd32(w) >> 8) & 0xffff, idx, "wqe index %#x want %#x",
		     (rd32(w) >> 8) & 0xffff, idx);
	cr_assert_eq(w[3], opcode, "opcode %#x want %#x", w[3], opcode);
	cr_assert_eq(rd32(w + 4) >> 8, qpn, "qpn");
	cr_assert_eq(w[7] & 0x3f, ds, "ds %u want %u", w[7] & 0x3f, ds);
	cr_assert_eq(w[7] & 0xc0, 0, "qpn_ds reserved bits");
	cr_assert_eq(w[8], 0, "signature");
	cr_assert_eq(w[9], 0, "dci stream");
	cr_assert_eq(w[10], 0, "dci stream");
	cr_assert_eq(w[11], fm, "fm_ce_se %#x want %#x", w[11], fm);
	memcpy(&imm, w + 12, 4);
	cr_assert_eq(imm, imm_wire, "imm");
}

static void check_raddr(const uint8_t *s, uint64_t raddr, uint32_t rkey)
{
	cr_assert_eq(rd64(s), raddr);
	cr_assert_eq(rd32(s + 8), rkey);
	cr_assert_eq(rd32(s + 12), 0, "raddr reserved");
}

static void check_data(const uint8_t *s, uint32_t len, uint32_t lkey, uint64_t addr)
{
	cr_assert_eq(rd32(s), len, "byte_count %u want %u", rd32(s), len);
	cr_assert_eq(rd32(s + 4), lkey, "lkey");
	cr_assert_eq(rd64(s + 8), addr, "addr");
}

static uint8_t *wqe(struct rft_sq *t, uint32_t pi)
{
	return t->buf + (size_t)(pi & (t->sq.wqe_cnt - 1)) * 64;
}

Test(sq, write_bytes)
{
	struct rft_sq t;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 0x11223344, 0x1000200030004000ULL, 4096,
				      0x55667788, 0xa0b0c0d0e0f00102ULL,
				      RF_SEND_SIGNALED, 77), 0);
	check_ctrl(wqe(&t, 0), RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 3,
		   RF_WQE_CTRL_CQ_UPDATE, 0);
	check_raddr(wqe(&t, 0) + 16, 0xa0b0c0d0e0f00102ULL, 0x55667788);
	check_data(wqe(&t, 0) + 32, 4096, 0x11223344, 0x1000200030004000ULL);
	cr_assert_eq(t.sq.pi, 1);
	cr_assert_eq(t.slot[0].wr_id, 77);
	cr_assert_eq(t.slot[0].end, 1);
	/* nothing visible before the ring */
	cr_assert_eq(t.dbrec[RF_SND_DBR], 0);
	rft_sq_fini(&t);
}

Test(sq, rdma_and_send_opcodes)
{
	struct rft_sq t;
	const __be32 imm = RF_BE32(0xcafef00d);

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_write_imm(&t.sq, 1, 0x10, 5, 2, 0x20, imm,
					  RF_SEND_SOLICITED, 1), 0);
	cr_assert_eq(rf_sq_post_read(&t.sq, 3, 0x30, 7, 4, 0x40, RF_SEND_FENCE, 2), 0);
	cr_assert_eq(rf_sq_post_send(&t.sq, 5, 0x50, 9, 0, 3), 0);
	cr_assert_eq(rf_sq_post_send_imm(&t.sq, 6, 0x60, 11, imm, 0, 4), 0);
	cr_assert_eq(rf_sq_post_send_inv(&t.sq, 7, 0x70, 13, 0xabcdef01, 0, 5), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 8, 0x80, 0, 9, 0x90, 0, 6), 0);
	cr_assert_eq(rf_sq_post_nop(&t.sq, RF_SEND_SIGNALED | RF_SEND_FENCE, 7), 0);

	check_ctrl(wqe(&t, 0), RF_OPCODE_RDMA_WRITE_IMM, 0, 0, QPN, 3,
		   RF_WQE_CTRL_SOLICITED, (uint32_t)imm);
	check_raddr(wqe(&t, 0) + 16, 0x20, 2);
	check_data(wqe(&t, 0) + 32, 5, 1, 0x10);

	check_ctrl(wqe(&t, 1), RF_OPCODE_RDMA_READ, 0, 1, QPN, 3, RF_WQE_CTRL_FENCE, 0);
	check_raddr(wqe(&t, 1) + 16, 0x40, 4);
	check_data(wqe(&t, 1) + 32, 7, 3, 0x30);

	check_ctrl(wqe(&t, 2), RF_OPCODE_SEND, 0, 2, QPN, 2, 0, 0);
	check_data(wqe(&t, 2) + 16, 9, 5, 0x50);

	check_ctrl(wqe(&t, 3), RF_OPCODE_SEND_IMM, 0, 3, QPN, 2, 0, (uint32_t)imm);
	check_data(wqe(&t, 3) + 16, 11, 6, 0x60);

	/* send with invalidate: imm carries the rkey, big-endian */
	check_ctrl(wqe(&t, 4), RF_OPCODE_SEND_INVAL, 0, 4, QPN, 2, 0,
		   (uint32_t)rf_htobe32(0xabcdef01));
	check_data(wqe(&t, 4) + 16, 13, 7, 0x70);

	/* zero-length write: no data segment (0 would mean 2 GiB) */
	check_ctrl(wqe(&t, 5), RF_OPCODE_RDMA_WRITE, 0, 5, QPN, 2, 0, 0);
	check_raddr(wqe(&t, 5) + 16, 0x90, 9);

	check_ctrl(wqe(&t, 6), RF_OPCODE_NOP, 0, 6, QPN, 1,
		   RF_WQE_CTRL_CQ_UPDATE | RF_WQE_CTRL_FENCE, 0);
	cr_assert_eq(t.sq.pi, 7);
	for (int i = 0; i < 7; i++) {
		cr_assert_eq(t.slot[i].wr_id, (uint64_t)i + 1);
		cr_assert_eq(t.slot[i].end, (uint32_t)i + 1);
	}
	rft_sq_fini(&t);
}

Test(sq, atomics)
{
	struct rft_sq t;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 32, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_cas(&t.sq, 1, 0x1000, 2, 0x2000, 0x1111222233334444ULL,
				    0x5555666677778888ULL, RF_SEND_SIGNALED, 1), 0);
	cr_assert_eq(rf_sq_post_faa(&t.sq, 3, 0x3000, 4, 0x4000, 0x99, 0, 2), 0);
	cr_assert_eq(rf_sq_post_masked_cs32(&t.sq, 5, 0x5000, 6, 0x6000, 0xa1, 0xa2,
					    0xa3, 0xa4, 0, 3), 0);
	cr_assert_eq(rf_sq_post_masked_cs64(&t.sq, 7, 0x7000, 8, 0x8000, 0xb1, 0xb2,
					    0xb3, 0xb4, 0, 4), 0);
	cr_assert_eq(rf_sq_post_masked_fa32(&t.sq, 9, 0x9000, 10, 0xa000, 0xc1, 0xc2,
					    0, 5), 0);
	cr_assert_eq(rf_sq_post_masked_fa64(&t.sq, 11, 0xb000, 12, 0xc000, 0xd1, 0xd2,
					    0, 6), 0);

	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_ATOMIC_CS, 0, 0, QPN, 4, RF_WQE_CTRL_CQ_UPDATE, 0);
	check_raddr(w + 16, 0x2000, 2);
	cr_assert_eq(rd64(w + 32), 0x5555666677778888ULL, "swap");
	cr_assert_eq(rd64(w + 40), 0x1111222233334444ULL, "compare");
	check_data(w + 48, 8, 1, 0x1000);

	w = wqe(&t, 1);
	check_ctrl(w, RF_OPCODE_ATOMIC_FA, 0, 1, QPN, 4, 0, 0);
	check_raddr(w + 16, 0x4000, 4);
	cr_assert_eq(rd64(w + 32), 0x99);
	cr_assert_eq(rd64(w + 40), 0);
	check_data(w + 48, 8, 3, 0x3000);

	w = wqe(&t, 2);
	check_ctrl(w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_4B, 2, QPN, 4, 0, 0);
	check_raddr(w + 16, 0x6000, 6);
	cr_assert_eq(rd32(w + 32), 0xa3, "swap");
	cr_assert_eq(rd32(w + 36), 0xa1, "compare");
	cr_assert_eq(rd32(w + 40), 0xa4, "swap mask");
	cr_assert_eq(rd32(w + 44), 0xa2, "compare mask");
	check_data(w + 48, 4, 5, 0x5000);

	/* 8-byte masked CS: 5 DS, 2 BBs */
	w = wqe(&t, 3);
	check_ctrl(w, RF_OPCODE_ATOMIC_MASKED_CS, RF_OPMOD_EXT_ATOMIC_8B, 3, QPN, 5, 0, 0);
	check_raddr(w + 16, 0x8000, 8);
	cr_assert_eq(rd64(w + 32), 0xb3);
	cr_assert_eq(rd64(w + 40), 0xb1);
	cr_assert_eq(rd64(w + 48), 0xb4);
	cr_assert_eq(rd64(w + 56), 0xb2);
	check_data(w + 64, 8, 7, 0x7000);
	cr_assert_eq(t.slot[3].end, 5);

	w = wqe(&t, 5);
	check_ctrl(w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_4B, 5, QPN, 4, 0, 0);
	check_raddr(w + 16, 0xa000, 10);
	cr_assert_eq(rd32(w + 32), 0xc1);
	cr_assert_eq(rd32(w + 36), 0xc2);
	cr_assert_eq(rd64(w + 40), 0, "reserved");
	check_data(w + 48, 4, 9, 0x9000);

	w = wqe(&t, 6);
	check_ctrl(w, RF_OPCODE_ATOMIC_MASKED_FA, RF_OPMOD_EXT_ATOMIC_8B, 6, QPN, 4, 0, 0);
	cr_assert_eq(rd64(w + 32), 0xd1);
	cr_assert_eq(rd64(w + 40), 0xd2);
	check_data(w + 48, 8, 11, 0xb000);
	cr_assert_eq(t.sq.pi, 7);
	rft_sq_fini(&t);
}

Test(sq, inline_payload_and_limit)
{
	struct rft_sq t;
	uint8_t data[MAXINL + 1];
	const uint8_t *w;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 32, 256, MAXINL, MAXSGE, 0, QPN), 0);

	/* 8 bytes: ctrl raddr inline(4+8 -> 16): 3 DS, 1 BB */
	cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, 8, 0x77, 0x1234, 0, 1), 0);
	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 3, 0, 0);
	check_raddr(w + 16, 0x1234, 0x77);
	cr_assert_eq(rd32(w + 32), 0x80000000U | 8);
	cr_assert_eq(memcmp(w + 36, data, 8), 0);

	/* 100 bytes by SEND: ctrl + ceil(104/16)=7 -> 8 DS, 2 BBs */
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 2), 0);
	w = wqe(&t, 1);
	check_ctrl(w, RF_OPCODE_SEND, 0, 1, QPN, 8, 0, 0);
	cr_assert_eq(rd32(w + 16), 0x80000000U | 100);
	cr_assert_eq(memcmp(w + 20, data, 100), 0);
	cr_assert_eq(t.sq.pi, 3);

	/* the largest allowed, then one more byte */
	cr_assert_eq(rf_sq_post_write_imm_inline(&t.sq, data, MAXINL, 1, 2,
						 RF_BE32(5), 0, 3), 0);
	w = wqe(&t, 3);
	check_ctrl(w, RF_OPCODE_RDMA_WRITE_IMM, 0, 3, QPN,
		   2 + (MAXINL + 4 + 15) / 16, 0, (uint32_t)RF_BE32(5));
	cr_assert_eq(memcmp(w + 36, data, MAXINL), 0);
	{
		uint32_t pi = t.sq.pi;
		uint8_t before[32 * 64];

		memcpy(before, t.buf, sizeof(before));
		cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, MAXINL + 1, 1, 2, 0, 4),
			     -EINVAL);
		cr_assert_eq(t.sq.pi, pi);
		cr_assert_eq(memcmp(before, t.buf, sizeof(before)), 0);
	}
	/* zero-length inline: no inline segment at all */
	cr_assert_eq(rf_sq_post_send_imm_inline(&t.sq, data, 0, RF_BE32(9), 0, 5), 0);
	check_ctrl(wqe(&t, rf_sq_last_pi(&t.sq)), RF_OPCODE_SEND_IMM, 0,
		   (uint16_t)rf_sq_last_pi(&t.sq), QPN, 1, 0, (uint32_t)RF_BE32(9));
	rft_sq_fini(&t);
}

Test(sq, sge_lists_and_limit)
{
	struct rft_sq t;
	struct rf_sge sg[MAXSGE + 1];
	const uint8_t *w;

	for (int i = 0; i <= MAXSGE; i++) {
		sg[i].addr = 0x1000u * (i + 1);
		sg[i].length = 100u + i;
		sg[i].lkey = 0x50u + i;
	}
	sg[2].length = 0;	/* dropped */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 32, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_write_sg(&t.sq, sg, MAXSGE, 0x99, 0xfeed, 0, 1), 0);
	w = wqe(&t, 0);
	/* ctrl raddr + 7 data segs = 9 DS, 3 BBs */
	check_ctrl(w, RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 9, 0, 0);
	check_raddr(w + 16, 0xfeed, 0x99);
	for (int i = 0, j = 0; i < MAXSGE; i++) {
		if (!sg[i].length)
			continue;
		check_data(w + 32 + 16 * j, sg[i].length, sg[i].lkey, sg[i].addr);
		j++;
	}
	cr_assert_eq(t.sq.pi, 3);
	cr_assert_eq(rf_sq_post_send_sg(&t.sq, sg, 2, 0, 2), 0);
	check_ctrl(wqe(&t, 3), RF_OPCODE_SEND, 0, 3, QPN, 3, 0, 0);
	cr_assert_eq(rf_sq_post_read_sg(&t.sq, sg, 1, 1, 2, 0, 3), 0);
	check_ctrl(wqe(&t, 4), RF_OPCODE_RDMA_READ, 0, 4, QPN, 3, 0, 0);
	cr_assert_eq(rf_sq_post_send_imm_sg(&t.sq, sg, 1, RF_BE32(1), 0, 4), 0);
	check_ctrl(wqe(&t, 5), RF_OPCODE_SEND_IMM, 0, 5, QPN, 2, 0, (uint32_t)RF_BE32(1));
	cr_assert_eq(rf_sq_post_send_sg(&t.sq, sg, MAXSGE + 1, 0, 5), -EINVAL);
	cr_assert_eq(t.sq.pi, 6);
	rft_sq_fini(&t);
}

Test(sq, full_queue_writes_nothing)
{
	struct rft_sq t;
	uint8_t before[8 * 64], data[64] = { 1 };
	struct rf_sge sg = { 0x10, 10, 1 };

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, (uint64_t)i), 0);
	cr_assert_eq(rf_sq_space(&t.sq), 0);
	memcpy(before, t.buf, sizeof(before));
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_read(&t.sq, 1, 2, 3, 4, 5, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_cas(&t.sq, 1, 2, 3, 4, 5, 6, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_masked_cs64(&t.sq, 1, 2, 3, 4, 5, 6, 7, 8, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, 64, 1, 2, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_send_sg(&t.sq, &sg, 1, 0, 9), -ENOSPC);
	cr_assert_eq(rf_sq_post_nop(&t.sq, 0, 9), -ENOSPC);
	cr_assert_null(rf_sq_reserve(&t.sq, 1));
	cr_assert_eq(memcmp(before, t.buf, sizeof(before)), 0);
	cr_assert_eq(t.sq.pi, 8);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 7);
	/* retiring WQE 3 frees 0..3: exactly four BBs */
	cr_assert_eq(rf_sq_retire(&t.sq, 3), 3);
	cr_assert_eq(rf_sq_space(&t.sq), 4);
	rft_sq_fini(&t);
}

Test(sq, nop_padding_at_queue_end)
{
	struct rft_sq t;
	uint8_t data[100 + 64];
	const uint8_t *w;

	memset(data, 0xab, sizeof(data));
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, (uint64_t)i), 0);
	rf_sq_retire(&t.sq, 6);		/* all done: 8 BBs free */
	/* a 2-BB WQE at slot 7 would straddle: slot 7 becomes a NOP */
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, RF_SEND_SIGNALED, 42), 0);
	w = wqe(&t, 7);
	check_ctrl(w, RF_OPCODE_NOP, 0, 7, QPN, 1, 0, 0);
	cr_assert_eq(t.slot[7].end, 8);
	w = wqe(&t, 8);
	check_ctrl(w, RF_OPCODE_SEND, 0, 8, QPN, 8, RF_WQE_CTRL_CQ_UPDATE, 0);
	cr_assert_eq(memcmp(w + 20, data, 100), 0);
	cr_assert_eq(t.sq.pi, 10);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 8);
	cr_assert_eq(t.slot[0].wr_id, 42);
	cr_assert_eq(t.slot[0].end, 10);
	/* no room for pad + WQE: fails and pads nothing */
	rft_sq_fini(&t);

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	for (int i = 0; i < 7; i++)
		cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, (uint64_t)i), 0);
	rf_sq_retire(&t.sq, 1);		/* 2 free at the start + 1 at the end */
	cr_assert_eq(rf_sq_space(&t.sq), 3);
	{
		uint8_t before[8 * 64];

		memcpy(before, t.buf, sizeof(before));
		/* 3 BBs of WQE do not fit 1 + 2 */
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100 + 64, 0, 1), -ENOSPC);
		cr_assert_eq(memcmp(before, t.buf, sizeof(before)), 0);
		cr_assert_eq(t.sq.pi, 7);
		/* a 2-BB one does: pad at 7, WQE at 0..1 */
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 1), 0);
		cr_assert_eq(t.sq.pi, 10);
		cr_assert_eq(rf_sq_space(&t.sq), 0);
	}
	rft_sq_fini(&t);
}

Test(sq, four_laps_across_16bit_index_wrap)
{
	struct rft_sq t;
	uint8_t data[40];
	uint32_t posted = 0;

	memset(data, 0x5a, sizeof(data));
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	/* start just below the 16-bit wrap of the WQE index field */
	t.sq.pi = t.sq.bf_rung_pi = 0xffff - 20;	/* no_bf_bias 0 */
	t.sq.limit = t.sq.pi + t.sq.bb_max;
	while (posted < 16 * 4) {
		uint32_t pi = t.sq.pi;
		int rc = posted % 3 == 2 ?
			rf_sq_post_send_inline(&t.sq, data, sizeof(data), 0, posted) :
			rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, posted);

		cr_assert_eq(rc, 0);
		check_ctrl(wqe(&t, rf_sq_last_pi(&t.sq)), posted % 3 == 2 ? RF_OPCODE_SEND :
			   RF_OPCODE_RDMA_WRITE, 0, (uint16_t)rf_sq_last_pi(&t.sq), QPN,
			   posted % 3 == 2 ? 4 : 3, 0, 0);
		cr_assert(rf_sq_last_pi(&t.sq) == pi || rf_sq_last_pi(&t.sq) == pi + 1);
		rf_sq_ring(&t.sq);
		cr_assert_eq(rd32((const uint8_t *)&t.dbrec[RF_SND_DBR]), t.sq.pi & 0xffff);
		/* the device completes everything so far */
		rf_sq_retire(&t.sq, (uint16_t)rf_sq_last_pi(&t.sq));
		cr_assert_eq(rf_sq_ci(&t.sq), t.sq.pi);
		posted++;
	}
	cr_assert(t.sq.pi > 0x10000, "crossed the 16-bit wrap");
	rft_sq_fini(&t);
}

Test(sq, ring_blueflame_single_wqe)
{
	struct rft_sq t;
	uint8_t *bf;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 1), 0);
	rf_sq_ring(&t.sq);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(1));
	cr_assert_eq(memcmp(bf, wqe(&t, 0), 64), 0, "WQE copied through BlueFlame");
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 256u);
	/* ring again with nothing new: no store at all */
	memset(t.uar, 0, 4096);
	rf_sq_ring(&t.sq);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(t.uar[i], 0);
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 256u);
	/* a 2-BB inline WQE (128 bytes) fits the 256-byte half */
	{
		uint8_t data[100];

		memset(data, 3, sizeof(data));
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 2), 0);
		rf_sq_ring(&t.sq);
		cr_assert_eq(memcmp(bf + 256, wqe(&t, 1), 128), 0);
		cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(3));
		cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 0u);
	}
	/* the largest inline WQE (4 BBs = 256 bytes) still fits */
	{
		uint8_t data[MAXINL];

		memset(data, 4, sizeof(data));
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, MAXINL, 0, 3), 0);
		cr_assert_eq(t.sq.pi - rf_sq_last_pi(&t.sq), 4);	/* 1 + 14 DS */
		rf_sq_ring(&t.sq);
		cr_assert_eq(memcmp(bf, wqe(&t, 3), 256), 0);
	}
	rft_sq_fini(&t);

	/* with a 128-byte register half, a 3-BB WQE gets the doorbell */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 128, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	{
		uint8_t data[150];

		memset(data, 5, sizeof(data));
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 150, 0, 1), 0);
		cr_assert_eq(t.sq.pi, 3);
		rf_sq_ring(&t.sq);
		cr_assert_eq(memcmp(bf, wqe(&t, 0), 8), 0);
		for (int i = 8; i < 128; i++)
			cr_assert_eq(bf[i], 0);
		cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(3));
	}
	rft_sq_fini(&t);
}

Test(sq, ring_doorbell_for_batches_and_without_bf)
{
	struct rft_sq t;
	uint8_t *bf, zero[64] = { 0 };

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, (uint64_t)i), 0);
	rf_sq_ring(&t.sq);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(3));
	/* 8 bytes: the last WQE's opmod_idx_opcode and qpn_ds */
	cr_assert_eq(memcmp(bf, wqe(&t, 2), 8), 0);
	cr_assert_eq(memcmp(bf + 8, zero, 56), 0, "only 8 bytes written");
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 256u);
	/* a single WQE after a batch: BlueFlame again */
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 3), 0);
	rf_sq_ring(&t.sq);
	cr_assert_eq(memcmp(bf + 256, wqe(&t, 3), 64), 0);
	rft_sq_fini(&t);

	/* bf.size 0: always the doorbell, always at the same address */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 0, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, (uint64_t)i), 0);
		rf_sq_ring(&t.sq);
		cr_assert_eq(memcmp(bf, wqe(&t, (uint32_t)i), 8), 0);
		cr_assert_eq(memcmp(bf + 8, zero, 56), 0);
		cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 0u);
		cr_assert_eq(t.dbrec[RF_SND_DBR], rf_htobe32((uint32_t)i + 1));
	}
	rft_sq_fini(&t);
}

/*
 * The ring finds the last WQE in the side table (rf_sq_last_pi()): over
 * slots whose entries are left from the previous lap, behind a WQE that
 * spans them, it still names the right one.
 */
Test(sq, ring_finds_last_wqe_over_stale_slots)
{
	struct rft_sq t;
	uint8_t *bf, data[MAXINL];

	memset(data, 6, sizeof(data));
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	/* lap 1: eight one-BB WQEs, each rung and completed */
	for (uint32_t i = 0; i < 8; i++) {
		cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, i), 0);
		cr_assert_eq(rf_sq_last_pi(&t.sq), i);
		rf_sq_retire(&t.sq, (uint16_t)i);
	}
	/* lap 2: one BB, then 3 BBs over slots 2 and 3 (stale ends 3 and 4) */
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 8), 0);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 150, 0, 9), 0);
	cr_assert_eq(t.sq.pi, 12);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 9);
	memset(t.uar, 0, 4096);
	rf_sq_ring(&t.sq);
	/* two WQEs: the doorbell of the second */
	cr_assert_eq(memcmp(bf, wqe(&t, 9), 8), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(12));
	rf_sq_retire(&t.sq, 9);
	/* a single 4-BB WQE over slots 4..7 (stale ends 5..8): BlueFlame */
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, MAXINL, 0, 10), 0);
	cr_assert_eq(t.sq.pi, 16);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 12);
	rf_sq_ring(&t.sq);
	cr_assert_eq(memcmp(bf + 256, wqe(&t, 12), 256), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(16));
	/* a 3-BB WQE, then one BB: not single, the doorbell of the last */
	rf_sq_retire(&t.sq, 12);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 150, 0, 11), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 12), 0);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 19);
	memset(t.uar, 0, 4096);
	rf_sq_ring(&t.sq);
	cr_assert_eq(memcmp(bf, wqe(&t, 19), 8), 0);
	for (int i = 8; i < 64; i++)
		cr_assert_eq(bf[i], 0, "byte %d: BlueFlame, not the doorbell", i);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(20));
	rft_sq_fini(&t);
}

/*
 * The end table need not come zeroed: rf_sq_init() clears it, so that no
 * stale entry can pass for the end of the last WQE (here 3, which is pi
 * after the two WQEs below, in the inner slot of the second).
 */
Test(sq, init_clears_the_end_table)
{
	struct rft_sq t;
	struct rf_sq_attr a;
	uint8_t data[100];

	memset(data, 7, sizeof(data));
	rft_sq_attr(&t, &a, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN);
	for (int i = 0; i < 8; i++)
		t.slot[i].end = 3;
	cr_assert_eq(rf_sq_init(&t.sq, &a), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 1), 0);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, sizeof(data), 0, 2), 0);
	cr_assert_eq(t.sq.pi, 3);
	cr_assert_eq(rf_sq_last_pi(&t.sq), 1);
	rf_sq_ring(&t.sq);
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, wqe(&t, 1), 8), 0, "the last WQE's doorbell");
	rft_sq_fini(&t);
}

/*
 * RF_SEND_RING: the post rings itself. Alone since the last ring, the WQE
 * goes through BlueFlame exactly as post + rf_sq_ring() sends it; behind
 * unrung WQEs, without BlueFlame, or after padding, the doorbell of the
 * last WQE; on a full queue, nothing at all.
 */
Test(sq, post_with_ring_flag)
{
	struct rft_sq t, ref;
	uint8_t *bf, zero[256] = { 0 }, data[MAXINL];

	memset(data, 7, sizeof(data));
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rft_sq_init(&ref, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;

	/* alone: BlueFlame, byte for byte what post + ring does */
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_SIGNALED | RF_SEND_RING, 9), 0);
	cr_assert_eq(rf_sq_post_write(&ref.sq, 1, 2, 3, 4, 5, RF_SEND_SIGNALED, 9), 0);
	rf_sq_ring(&ref.sq);
	cr_assert_eq(memcmp(wqe(&t, 0), wqe(&ref, 0), 64), 0, "same WQE");
	cr_assert_eq(wqe(&t, 0)[11], RF_WQE_CTRL_CQ_UPDATE, "RING is not a ctrl bit");
	cr_assert_eq(memcmp(bf, ref.uar + RF_BF_REG_OFFSET, 64), 0, "same BlueFlame copy");
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(1));
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 256u);
	cr_assert_eq(t.sq.bf_rung_pi, 1);
	cr_assert_eq(t.slot[0].wr_id, 9);
	memset(t.uar, 0, 4096);
	rf_sq_ring(&t.sq);		/* nothing left to ring */
	cr_assert_eq(memcmp(t.uar, zero, sizeof(zero)), 0);
	cr_assert_eq(memcmp(t.uar + 256, zero, sizeof(zero)), 0);

	/* a 4-BB inline WQE fills the other 256-byte half */
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, MAXINL, RF_SEND_RING, 10), 0);
	cr_assert_eq(t.sq.pi, 5);
	cr_assert_eq(memcmp(bf + 256, wqe(&t, 1), 256), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(5));
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 0u);

	/* behind an unrung WQE: the 8-byte doorbell of the last one */
	memset(t.uar, 0, 4096);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 11), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 12), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(7));
	cr_assert_eq(memcmp(bf, wqe(&t, 6), 8), 0);
	cr_assert_eq(memcmp(bf + 8, zero, 248), 0, "only 8 bytes written");
	cr_assert_eq(t.sq.bf_rung_pi, 7);

	/* full queue: nothing written, nothing moved */
	cr_assert_eq(rf_sq_space(&t.sq), 1);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 13), 0);
	memset(t.uar, 0, 4096);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 14), -ENOSPC);
	cr_assert_eq(memcmp(t.uar, zero, sizeof(zero)), 0);
	cr_assert_eq(memcmp(t.uar + 256, zero, sizeof(zero)), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(8));
	cr_assert_eq(t.sq.pi, 8);

	/* padding to the queue end makes two WQEs: the doorbell */
	rf_sq_retire(&t.sq, 7);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, RF_SEND_RING, 15), 0);
	cr_assert_eq(t.sq.pi, 10, "a 2-BB WQE at BB 8 needs no pad");
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 16), 0);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 17), 0);
	rf_sq_ring(&t.sq);
	rf_sq_retire(&t.sq, 12);
	memset(t.uar, 0, 4096);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 150, RF_SEND_RING, 18), 0);
	cr_assert_eq(t.sq.pi, 19, "2 NOP BBs, then the 3-BB WQE at BB 16");
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, wqe(&t, 16), 8), 0);
	cr_assert_eq(t.uar[RF_BF_REG_OFFSET + 8], 0);
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET + 256, zero, 256), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(19));
	rft_sq_fini(&t);
	rft_sq_fini(&ref);

	/* the posts built on rf_sq_commit() ring through rf_sq_ring() */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	cr_assert_eq(rf_sq_post_nop(&t.sq, RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	cr_assert_eq(wqe(&t, 0)[11], RF_WQE_CTRL_CQ_UPDATE, "RING is not a ctrl bit");
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(1));
	cr_assert_eq(memcmp(bf, wqe(&t, 0), 64), 0, "one WQE: BlueFlame");
	/* a bind is rung after its fence NOP: UMR (3 BBs) + NOP, two WQEs */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x1200, 0x1201, 1, 0x1000, 64, 0,
					RF_SEND_RING, 2), 0);
	cr_assert_eq(t.sq.pi, 5);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(5));
	cr_assert_eq(memcmp(bf + 256, wqe(&t, 4), 8), 0, "doorbell of the fence NOP");
	cr_assert_eq(wqe(&t, 1)[11], 0);
	cr_assert_eq(rf_sq_post_local_inv(&t.sq, 0x1201, RF_SEND_RING, 3), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(8));
	cr_assert_eq(memcmp(bf, wqe(&t, 7), 8), 0);
	rft_sq_fini(&t);
	cr_assert_eq(rft_sq_init(&t, RF_QP_UD, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	{
		struct rf_wqe_av av;

		memset(&av, 0, sizeof(av));
		cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 7, data, 0, 0, 20, 0, 0,
						RF_SEND_RING, 4), 0);
		cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(2));
		cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, wqe(&t, 0), 128), 0);
		cr_assert_eq(wqe(&t, 0)[11], 0);
	}
	rft_sq_fini(&t);

	/* no BlueFlame: the doorbell, always at the same address */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 0, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 1), 0);
	cr_assert_eq(memcmp(bf, wqe(&t, 0), 8), 0);
	cr_assert_eq(memcmp(bf + 8, zero, 56), 0);
	cr_assert_eq((uint32_t)(t.sq.bf.cur - t.sq.bf.reg), 0u);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(1));
	rft_sq_fini(&t);
}

/*
 * A one-BB post with RF_SEND_RING writes BlueFlame from the registers it
 * built the WQE in (detail/sq_post.h, rf__sq_end_bb()): the register half
 * gets the WQE's len bytes and zeros from byte `zeros` (0: not checked),
 * whatever stale bytes the queue holds past the WQE (0xa5 at first, then
 * older WQEs).
 */
static void check_bf_from_registers(struct rft_sq *t, const uint8_t *half,
				    unsigned len, unsigned zeros)
{
	const uint8_t *w = wqe(t, t->sq.pi - 1);
	unsigned i;

	cr_assert_eq(t->sq.bf_rung_pi, t->sq.pi, "rung by this post");
	cr_assert_eq(memcmp(half, w, len), 0, "BlueFlame holds the WQE, opcode %#x", w[3]);
	for (i = zeros; zeros && i < 64; i++)
		cr_assert_eq(half[i], 0, "BlueFlame byte %u after the WQE: %#x", i, half[i]);
	rf_sq_retire(&t->sq, (uint16_t)(t->sq.pi - 1));
}

/* Two RC queues of 8 BBs over stale bytes (0xa5) and a patterned payload. */
static void inl_setup(struct rft_sq *t, struct rft_sq *ref, uint8_t data[64])
{
	unsigned i;

	for (i = 0; i < 64; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	cr_assert_eq(rft_sq_init(t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rft_sq_init(ref, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	memset(t->buf, 0xa5, 8 * 64);
	memset(ref->buf, 0xa5, 8 * 64);
	memset(t->uar, 0xee, 4096);
}

#define POST_RING(t, call, len)							\
	do {									\
		const uint8_t *half_ = (t)->sq.bf.cur;				\
		cr_assert_eq(call, 0);						\
		check_bf_from_registers(t, half_, len, len);			\
	} while (0)

Test(sq, one_bb_wqes_ring_from_registers)
{
	struct rft_sq t, ref;
	const uint8_t *half;
	uint8_t data[64];

	inl_setup(&t, &ref, data);

	POST_RING(&t, rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 1), 48);
	half = t.sq.bf.cur;	/* length 0: DS 2, and the data segment unused after it */
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 0, 4, 5, RF_SEND_RING, 2), 0);
	check_bf_from_registers(&t, half, 32, 48);
	POST_RING(&t, rf_sq_post_read(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 3), 48);
	POST_RING(&t, rf_sq_post_write_imm(&t.sq, 1, 2, 3, 4, 5, RF_BE32(6), RF_SEND_RING, 4), 48);
	POST_RING(&t, rf_sq_post_send(&t.sq, 1, 2, 3, RF_SEND_RING, 5), 32);
	POST_RING(&t, rf_sq_post_send_imm(&t.sq, 1, 2, 3, RF_BE32(6), RF_SEND_RING, 6), 32);
	POST_RING(&t, rf_sq_post_send_inv(&t.sq, 1, 2, 3, 7, RF_SEND_RING, 7), 32);
	POST_RING(&t, rf_sq_post_cas(&t.sq, 1, 2, 3, 4, 5, 6, RF_SEND_RING, 8), 64);
	POST_RING(&t, rf_sq_post_faa(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 9), 64);
	check_data(wqe(&t, t.sq.pi - 1) + 48, 8, 1, 2);

	rft_sq_fini(&t);
	rft_sq_fini(&ref);
}

/*
 * Inline payloads of a constant length n: the WQE built in registers
 * matches, from its opcode (after the WQE index) to the end of the
 * payload, the one a variable length builds segment by segment; the
 * register gets zeros right after the payload. -O0 has no constant
 * lengths, and only x86 writes payloads from registers (detail/wqe_regs.h):
 * elsewhere both copy, and the register then carries stale bytes.
 */
#if defined(__OPTIMIZE__) && RF__INLINE_FROM_REGS
#define INL_ZEROS(end) (end)
#else
#define INL_ZEROS(end) 0
#endif
/* After one constant-length post to t and its variable-length twin to ref. */
static void inl_compare(struct rft_sq *t, struct rft_sq *ref, const uint8_t *half,
			int rc_t, int rc_ref, unsigned n, unsigned hdr_end, const char *post)
{
	cr_assert_eq(rc_t, 0, "%s %u", post, n);
	cr_assert_eq(rc_ref, 0, "%s %u", post, n);
	cr_assert_eq(memcmp(wqe(t, t->sq.pi - 1) + 3, wqe(ref, ref->sq.pi - 1) + 3,
			    hdr_end - 3 + n), 0, "%s %u", post, n);
	check_bf_from_registers(t, half, hdr_end + n, INL_ZEROS(hdr_end + n));
	rf_sq_retire(&ref->sq, (uint16_t)(ref->sq.pi - 1));
}

/* The variable-length twin: one copy, out of line (the test compiles faster). */
static __attribute__((noinline)) int inl_ref_post(struct rft_sq *ref, int write,
						  const uint8_t *data, uint32_t n)
{
	if (write)
		return rf_sq_post_write_inline(&ref->sq, data, n, 7, 8, RF_SEND_RING, n);
	return rf_sq_post_send_inline(&ref->sq, data, n, RF_SEND_RING, n);
}

#define INL_CHECK(post, n, hdr_end, ...)					\
	do {									\
		const uint8_t *half_ = t.sq.bf.cur;				\
		int rc_t_ = post(&t.sq, data, n, __VA_ARGS__, RF_SEND_RING, n);	\
		int rc_ref_ = inl_ref_post(&ref, (hdr_end) > 20, data, n);	\
		inl_compare(&t, &ref, half_, rc_t_, rc_ref_, n, hdr_end, #post); \
	} while (0)

/* rf_sq_post_send_inline()'s argument order, with an unused one for INL_CHECK */
#define SEND_INL(sq, data, n, unused, flags, wr_id) \
	rf_sq_post_send_inline(sq, data, n, flags, wr_id)

/*
 * Inline lengths that take every chunk (16, 32, 8, 4, 2, 1 bytes) alone and
 * in mixes, at both ends of one BB: up to 44 without raddr, 28 after it.
 * (Every length compiles a post of its own; these keep the ASan build fast.)
 */
Test(sq, send_inline_rings_from_registers)
{
	struct rft_sq t, ref;
	uint8_t data[64];

	inl_setup(&t, &ref, data);
#define S(n) INL_CHECK(SEND_INL, n, 20, 0)
	S(1);  S(2);  S(3);  S(4);  S(5);  S(6);  S(7);  S(8);  S(9);  S(12);
	S(15); S(16); S(17); S(24); S(31); S(32); S(33); S(40); S(43); S(44);
#undef S
	rft_sq_fini(&t);
	rft_sq_fini(&ref);
}

Test(sq, write_inline_rings_from_registers)
{
	struct rft_sq t, ref;
	uint8_t data[64];

	inl_setup(&t, &ref, data);
#define W(n) INL_CHECK(rf_sq_post_write_inline, n, 36, 7, 8)
	W(1);  W(2);  W(3);  W(4);  W(7);  W(8);  W(11); W(13); W(15); W(16);
	W(19); W(24); W(27); W(28);
#undef W
	rft_sq_fini(&t);
	rft_sq_fini(&ref);
}

Test(sq, padding_nops_force_doorbell)
{
	struct rft_sq t;
	uint8_t data[100] = { 0 }, *bf;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 8, 256, MAXINL, MAXSGE, 0, QPN), 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	for (int i = 0; i < 7; i++)
		cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, (uint64_t)i), 0);
	rf_sq_ring(&t.sq);
	rf_sq_retire(&t.sq, 6);
	memset(t.uar, 0, 4096);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 100, 0, 1), 0);
	rf_sq_ring(&t.sq);	/* NOP + WQE: two WQEs, so the doorbell */
	cr_assert_eq(memcmp(bf + 256, wqe(&t, 8), 8), 0);
	cr_assert_eq(t.uar[RF_BF_REG_OFFSET + 256 + 8], 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(10));
	rft_sq_fini(&t);
}

Test(sq, sig_all_default_and_raw_reserve_commit)
{
	struct rft_sq t;
	struct rf_wqe_ctrl_seg *c, ref;
	struct rf_wqe_raddr_seg *r;

	cr_assert_eq(rft_sq_init(&t, RF_QP_UC, 16, 256, MAXINL, MAXSGE, 1, 0xabcdef), 0);
	cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, 1), 0);
	check_ctrl(wqe(&t, 0), RF_OPCODE_SEND, 0, 0, 0xabcdef, 2, RF_WQE_CTRL_CQ_UPDATE, 0);

	c = rf_sq_reserve(&t.sq, 1);
	cr_assert_eq((void *)c, (void *)wqe(&t, 1));
	r = (struct rf_wqe_raddr_seg *)rf_sq_tseg(&t.sq, c);
	cr_assert_eq((void *)r, (void *)(c + 1));
	rf_set_raddr_seg(r, 0x1000, 7);
	rf_sq_commit(&t.sq, c, RF_OPCODE_RDMA_WRITE, 0, 2, RF_SEND_SOLICITED,
		     0, 99);
	/* the commit path and hw/wqe.h's setter produce the same bytes */
	rf_set_ctrl_seg(&ref, 1, RF_OPCODE_RDMA_WRITE, 0, rf_ctrl_qpn(0xabcdef),
			RF_WQE_CTRL_CQ_UPDATE | RF_WQE_CTRL_SOLICITED, 2, 0);
	cr_assert_eq(memcmp(c, &ref, 16), 0);
	cr_assert_eq(t.slot[1].wr_id, 99);
	cr_assert_eq(t.sq.pi, 2);
	rft_sq_fini(&t);
}

Test(sq, xrc_segment)
{
	struct rft_sq t;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_XRC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	rf_sq_set_xrc_srqn(&t.sq, 0x00abcdef);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 0x10, 8, 2, 0x20, 0, 1), 0);
	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 4, 0, 0);
	cr_assert_eq(rd32(w + 16), 0x00abcdef, "xrc srqn");
	for (int i = 20; i < 32; i++)
		cr_assert_eq(w[i], 0);
	check_raddr(w + 32, 0x20, 2);
	check_data(w + 48, 8, 1, 0x10);

	cr_assert_eq(rf_sq_post_send(&t.sq, 1, 0x10, 8, 0, 2), 0);
	check_ctrl(wqe(&t, 1), RF_OPCODE_SEND, 0, 1, QPN, 3, 0, 0);
	check_data(wqe(&t, 1) + 32, 8, 1, 0x10);

	/* CAS: ctrl xrc raddr atomic data = 5 DS, 2 BBs */
	cr_assert_eq(rf_sq_post_cas(&t.sq, 1, 0x10, 2, 0x20, 3, 4, 0, 3), 0);
	w = wqe(&t, 2);
	check_ctrl(w, RF_OPCODE_ATOMIC_CS, 0, 2, QPN, 5, 0, 0);
	cr_assert_eq(rd32(w + 16), 0x00abcdef);
	check_raddr(w + 32, 0x20, 2);
	cr_assert_eq(rd64(w + 48), 4);
	cr_assert_eq(rd64(w + 56), 3);
	check_data(w + 64, 8, 1, 0x10);
	cr_assert_eq(t.sq.pi, 4);

	/* inline goes the XRC way, up to max_inline and not one byte more */
	{
		uint8_t data[MAXINL + 1], before[16 * 64];

		for (size_t i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)(i * 7 + 1);
		cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, 8, 2, 0x20, 0, 4), 0);
		w = wqe(&t, 4);
		check_ctrl(w, RF_OPCODE_RDMA_WRITE, 0, 4, QPN, 4, 0, 0);
		cr_assert_eq(rd32(w + 16), 0x00abcdef);
		check_raddr(w + 32, 0x20, 2);
		cr_assert_eq(rd32(w + 48), RF_INLINE_SEG | 8);
		cr_assert_eq(memcmp(w + 52, data, 8), 0);
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, MAXINL, 0, 5), 0);
		cr_assert_eq(memcmp(wqe(&t, 5) + 36, data, MAXINL), 0);
		memcpy(before, t.buf, sizeof(before));
		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, MAXINL + 1, 0, 6), -EINVAL);
		cr_assert_eq(t.sq.pi, 5 + (16 + 16 + 4 + MAXINL + 63) / 64);
		cr_assert_eq(memcmp(before, t.buf, sizeof(before)), 0);
	}
	rft_sq_fini(&t);
}

/* A queue created without inline room takes no inline payload at all. */
Test(sq, no_inline_room)
{
	struct rft_sq t;
	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, 0, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, 1, 2, 0x20, 0, 1), -EINVAL);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 8, RF_SEND_RING, 1), -EINVAL);
	cr_assert_eq(t.sq.pi, 0);
	/* an empty one has no inline segment: allowed, as in libmlx5 */
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 0, 0, 2), 0);
	check_ctrl(wqe(&t, 0), RF_OPCODE_SEND, 0, 0, QPN, 1, 0, 0);
	rft_sq_fini(&t);

	/* a capability over what one WQE holds is clamped to that */
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, 0xffffffffU, MAXSGE, 0, QPN), 0);
	cr_assert_eq(t.sq.max_inline, 63 * 16);
	{
		volatile uint32_t huge = 0xffffffffU;	/* not a constant: no bounds warning */

		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, huge, 0, 1), -EINVAL);
	}
	cr_assert_eq(t.sq.pi, 0);
	rft_sq_fini(&t);
}

Test(sq, ud_send)
{
	struct rft_sq t;
	struct rf_wqe_av av;
	const uint8_t *w;
	const uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 }, gid[16] = { 0xfe, 0x80 };
	uint8_t data[20];

	memset(data, 0x42, sizeof(data));
	rf_set_av(&av, 0, 0, 0, 0x12, 0, 0x77, mac, 5, 64, 0x123, gid);
	cr_assert_eq(rft_sq_init(&t, RF_QP_UD, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 0x11111111, NULL, 1, 0x10,
					64, 0, 0, 0, 1), 0);
	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_SEND, 0, 0, QPN, 5, 0, 0);
	cr_assert_eq(rd32(w + 16), 0x11111111, "qkey");
	cr_assert_eq(rd32(w + 24), 0x80000000U | 0x4321, "ext | dqpn");
	cr_assert_eq(memcmp(w + 28, (const uint8_t *)&av + 12, 36), 0, "rest of AV");
	check_data(w + 64, 64, 1, 0x10);
	cr_assert_eq(t.sq.pi, 2);

	cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 7, data, 0, 0, 20,
					RF_BE32(3), 1, 0, 2), 0);
	w = wqe(&t, 2);
	check_ctrl(w, RF_OPCODE_SEND_IMM, 0, 2, QPN, 6, 0, (uint32_t)RF_BE32(3));
	cr_assert_eq(rd32(w + 64), 0x80000000U | 20);
	cr_assert_eq(memcmp(w + 68, data, 20), 0);

	/*
	 * The RC/UC/XRC send, RDMA and atomic posts on a UD queue: refused,
	 * nothing written (their body would follow an address vector of
	 * stale bytes)
	 */
	memset(t.buf + 4 * 64, 0xa5, 12 * 64);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, RF_SEND_RING, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_read(&t.sq, 1, 2, 3, 4, 5, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, 3), -EINVAL);
	{
		struct rf_sge sg = { 0x10, 8, 1 };
		struct rf_sq_wr wr;
		int err = 0;

		cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 8, RF_SEND_RING, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_write_inline(&t.sq, data, 20, 2, 0x20, 0, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_send_sg(&t.sq, &sg, 1, 0, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_write_sg(&t.sq, &sg, 1, 2, 0x20, 0, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_cas(&t.sq, 1, 0x10, 2, 0x20, 3, 4, 0, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_faa(&t.sq, 1, 0x10, 2, 0x20, 3, 0, 3), -EINVAL);
		cr_assert_eq(rf_sq_post_masked_cs64(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 3, 4, 0, 3),
			     -EINVAL);
		cr_assert_eq(rf_sq_post_masked_fa32(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 0, 3),
			     -EINVAL);
		memset(&wr, 0, sizeof(wr));
		wr.opcode = RF_WR_SEND;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		cr_assert_eq(rf_sq_post_batch(&t.sq, &wr, 1, &err), 0);
		cr_assert_eq(err, -EINVAL);
	}
	/* no memory windows on a datagram queue */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x100, 0x101, 1, 0x1000, 64, 0, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_local_inv(&t.sq, 0x100, RF_SEND_RING, 3), -EINVAL);
	cr_assert_eq(t.sq.pi, 4);
	for (unsigned i = 4 * 64; i < 16 * 64; i++)
		cr_assert_eq(t.buf[i], 0xa5, "byte %u written", i);
	rft_sq_fini(&t);
}

/* The UD send on a connected queue: refused, nothing written. */
/*
 * A zero-length UD SEND is ctrl + address vector, one BB: nothing of it
 * past that BB (rf_api fuzzing found the data segment written in the next
 * BB, past the buffer at the queue's last slot). The SQ is exactly its 4
 * BBs here, so AddressSanitizer also sees a write past it.
 */
Test(sq, ud_send_zero_length_stays_in_its_bb)
{
	const uint8_t mac[6] = { 0 }, gid[16] = { 0 };
	struct rf_wqe_av av;
	struct rft_sq t;
	uint8_t *buf = malloc(4 * 64);

	cr_assert(buf);
	rf_set_av(&av, 0, 0, 0, 0x12, 0, 0x77, mac, 5, 64, 0, gid);
	cr_assert_eq(rft_sq_init(&t, RF_QP_UD, 4, 256, MAXINL, MAXSGE, 0, QPN), 0);
	t.sq.buf = buf;
	memset(buf, 0xa5, 4 * 64);
	for (uint32_t i = 0; i < 4; i++) {
		cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 7, NULL, 1, 0x10, 0,
						0, 0, 0, i), 0);
		cr_assert_eq(t.sq.pi, i + 1);
		check_ctrl(buf + 64 * i, RF_OPCODE_SEND, 0, i, QPN, 4, 0, 0);
		for (uint32_t b = 64 * (i + 1); b < 4 * 64; b++)
			cr_assert_eq(buf[b], 0xa5, "BB %u byte %u written", i, b);
	}
	free(buf);
	rft_sq_fini(&t);
}

Test(sq, ud_send_refused_on_connected_queues)
{
	static const uint32_t kinds[] = { RF_QP_RC, RF_QP_UC, RF_QP_XRC };
	const uint8_t mac[6] = { 0 }, gid[16] = { 0 };
	uint8_t data[8] = { 0 };
	struct rf_wqe_av av;

	rf_set_av(&av, 0, 0, 0, 0x12, 0, 0x77, mac, 5, 64, 0, gid);
	for (unsigned k = 0; k < 3; k++) {
		struct rft_sq t;

		cr_assert_eq(rft_sq_init(&t, kinds[k], 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
		memset(t.buf, 0xa5, 16 * 64);
		cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 7, NULL, 1, 0x10, 64,
						0, 0, RF_SEND_RING, 1), -EINVAL);
		cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 0x4321, 7, data, 0, 0, 8,
						0, 0, 0, 2), -EINVAL);
		cr_assert_eq(t.sq.pi, 0);
		cr_assert_eq(t.dbrec[RF_SND_DBR], 0);
		for (unsigned i = 0; i < 16 * 64; i++)
			cr_assert_eq(t.buf[i], 0xa5, "kind %u: byte %u written", kinds[k], i);
		rft_sq_fini(&t);
	}
}

/*
 * UC has no READ, no atomics and no SEND with invalidate: every such post
 * is refused with nothing written (the device would fail the WQE and take
 * the QP to error), while writes and sends still take the RC path.
 */
Test(sq, uc_refuses_read_and_atomics)
{
	struct rft_sq t;
	struct rf_sge sg = { 0x10, 8, 1 };
	struct rf_sq_wr wr[3];
	int err = 0;

	cr_assert_eq(rft_sq_init(&t, RF_QP_UC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	memset(t.buf, 0xa5, 16 * 64);
	cr_assert_eq(rf_sq_post_read(&t.sq, 1, 0x10, 8, 2, 0x20, RF_SEND_RING, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_read_sg(&t.sq, &sg, 1, 2, 0x20, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_cas(&t.sq, 1, 0x10, 2, 0x20, 3, 4, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_faa(&t.sq, 1, 0x10, 2, 0x20, 3, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_masked_cs32(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 3, 4, 0, 3),
		     -EINVAL);
	cr_assert_eq(rf_sq_post_masked_cs64(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 3, 4, 0, 3),
		     -EINVAL);
	cr_assert_eq(rf_sq_post_masked_fa32(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_masked_fa64(&t.sq, 1, 0x10, 2, 0x20, 1, 2, 0, 3), -EINVAL);
	cr_assert_eq(rf_sq_post_send_inv(&t.sq, 1, 0x10, 8, 0x100, RF_SEND_RING, 3), -EINVAL);
	memset(wr, 0, sizeof(wr));
	wr[0].opcode = RF_WR_READ;
	wr[1].opcode = RF_WR_FAA;
	wr[2].opcode = RF_WR_SEND_INV;
	for (int i = 0; i < 3; i++) {
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		cr_assert_eq(rf_sq_post_batch(&t.sq, &wr[i], 1, &err), 0);
		cr_assert_eq(err, -EINVAL);
	}
	cr_assert_eq(t.sq.pi, 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], 0);
	for (unsigned i = 0; i < 16 * 64; i++)
		cr_assert_eq(t.buf[i], 0xa5, "byte %u written", i);

	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 0x10, 8, 2, 0x20, 0, 4), 0);
	check_ctrl(wqe(&t, 0), RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 3, 0, 0);
	cr_assert_eq(rf_sq_post_send(&t.sq, 1, 0x10, 8, 0, 5), 0);
	check_ctrl(wqe(&t, 1), RF_OPCODE_SEND, 0, 1, QPN, 2, 0, 0);
	rft_sq_fini(&t);
}

Test(sq, batch_posts_until_failure_and_rings_once)
{
	struct rft_sq t;
	struct rf_sge sg = { 0x1000, 16, 7 }, res = { 0x2000, 8, 9 };
	struct rf_sge big = { 0, MAXINL + 1, 0 };
	struct rf_sq_wr wr[5];
	uint8_t payload[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	int err = 1;

	sg.addr = (uint64_t)(uintptr_t)payload;
	big.addr = (uint64_t)(uintptr_t)payload;
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 10; wr[0].opcode = RF_WR_WRITE; wr[0].sg_list = &sg;
	wr[0].num_sge = 1; wr[0].rkey = 3; wr[0].remote_addr = 0x3000;
	wr[1].wr_id = 11; wr[1].opcode = RF_WR_SEND; wr[1].sg_list = &sg;
	wr[1].num_sge = 1; wr[1].flags = RF_SEND_INLINE | RF_SEND_SIGNALED;
	wr[2].wr_id = 12; wr[2].opcode = RF_WR_FAA; wr[2].sg_list = &res;
	wr[2].num_sge = 1; wr[2].rkey = 4; wr[2].remote_addr = 0x4000;
	wr[2].compare_add = 5;
	wr[3].wr_id = 13; wr[3].opcode = RF_WR_SEND; wr[3].sg_list = &big;
	wr[3].num_sge = 1; wr[3].flags = RF_SEND_INLINE;	/* too big */
	wr[4].wr_id = 14; wr[4].opcode = RF_WR_NOP;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_batch(&t.sq, wr, 5, &err), 3);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(t.sq.pi, 3);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(3));
	/* three WQEs: rung with the doorbell of the last one */
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, wqe(&t, 2), 8), 0);
	check_ctrl(wqe(&t, 0), RF_OPCODE_RDMA_WRITE, 0, 0, QPN, 3, 0, 0);
	check_data(wqe(&t, 0) + 32, 16, 7, sg.addr);
	check_ctrl(wqe(&t, 1), RF_OPCODE_SEND, 0, 1, QPN, 3, RF_WQE_CTRL_CQ_UPDATE, 0);
	cr_assert_eq(rd32(wqe(&t, 1) + 16), 0x80000000U | 16);
	cr_assert_eq(memcmp(wqe(&t, 1) + 20, payload, 16), 0);
	check_ctrl(wqe(&t, 2), RF_OPCODE_ATOMIC_FA, 0, 2, QPN, 4, 0, 0);
	cr_assert_eq(t.slot[2].wr_id, 12);
	/* nothing posted: no ring */
	cr_assert_eq(rf_sq_post_batch(&t.sq, &wr[3], 1, &err), 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(3));
	rft_sq_fini(&t);
}

Test(sq, init_rejects_bad_geometry)
{
	struct rft_sq t;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 12, 256, 0, 1, 0, 1), -EINVAL);
	rft_sq_fini(&t);
	cr_assert_eq(rft_sq_init(&t, 7, 16, 256, 0, 1, 0, 1), -EINVAL);
	rft_sq_fini(&t);
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 512, 0, 1, 0, 1), -EINVAL);
	rft_sq_fini(&t);
}

/* A side table off 16 bytes would put entries across two lines: refused. */
Test(sq, init_rejects_a_misaligned_side_table)
{
	struct rft_sq t;
	struct rf_sq_attr a;

	rft_sq_attr(&t, &a, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN);
	a.slot = (struct rf_sq_slot *)(void *)((uint8_t *)t.slot + 8);
	cr_assert_eq(rf_sq_init(&t.sq, &a), -EINVAL);
	a.slot = NULL;
	cr_assert_eq(rf_sq_init(&t.sq, &a), -EINVAL);
	a.slot = t.slot;
	cr_assert_eq(rf_sq_init(&t.sq, &a), 0);
	rft_sq_fini(&t);
}

/* A zero-based window: the mkey starts at 0, the KLM still names the memory. */
Test(sq, bind_mw_zero_based)
{
	struct rft_sq t;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x12345600, 0x12345601, 0x777, 0x10000, 0x2000,
					RF_MKEY_ACCESS_REMOTE_READ | RF_MW_ZERO_BASED, 0, 7), 0);
	w = wqe(&t, 0);
	cr_assert_eq(w[66], RF_MKEY_ACCESS_REMOTE_READ, "the flag is no access bit");
	cr_assert_eq(rd32(w + 68), (QPN << 8) | 0x01);
	cr_assert_eq(rd64(w + 80), 0, "a zero-based window starts at 0");
	cr_assert_eq(rd64(w + 88), 0x2000);
	cr_assert_eq(rd32(w + 132), 0x777);
	cr_assert_eq(rd64(w + 136), 0x10000, "the KLM names the memory");
	rft_sq_fini(&t);
}

/*
 * Type-1 windows (RF_MW_TYPE_1), as libmlx5's ibv_bind_mw() posts them:
 * no CHECK_FREE, no QPN in the mask, QPN 0xffffff; length 0 frees the
 * window: unbind (type 1), invalidate of the new tag (type 2).
 */
Test(sq, bind_mw_type1_and_length_0)
{
	struct rft_sq t;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x12345601, 0x12345602, 0x777, 0x10000, 0x2000,
					RF_MKEY_ACCESS_REMOTE_READ | RF_MW_TYPE_1, 0, 1), 0);
	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_UMR, 0, 0, QPN, 12, 0, (uint32_t)rf_htobe32(0x12345601));
	cr_assert_eq(w[16], 0x90, "INLINE | TRANSLATION_OFFSET");
	cr_assert_eq(rd64(w + 24), 0x203C2041ULL, "mkey mask of a type-1 bind");
	cr_assert_eq(w[66], RF_MKEY_ACCESS_REMOTE_READ, "the flag is no access bit");
	cr_assert_eq(rd32(w + 68), 0xffffff02, "no QPN, the new tag");
	cr_assert_eq(rd32(w + 132), 0x777);
	/* length 0, type 1: unbind, 8 DS, and the fence NOP */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x12345602, 0x12345603, 0, 0, 0, RF_MW_TYPE_1,
					0, 2), 0);
	w = wqe(&t, 4);
	check_ctrl(w, RF_OPCODE_UMR, 0, 4, QPN, 8, 0, (uint32_t)rf_htobe32(0x12345602));
	cr_assert_eq(w[16], 0x90);
	cr_assert_eq(w[21], 0, "no KLM");
	cr_assert_eq(rd64(w + 24), 0x20002000ULL, "FREE | MKEY");
	cr_assert_eq(w[64], RF_MKEY_CONTEXT_FREE);
	cr_assert_eq(rd32(w + 68), 0xffffff03);
	check_ctrl(wqe(&t, 6), RF_OPCODE_NOP, 0, 6, QPN, 1, RF_WQE_CTRL_INITIATOR_SMALL_FENCE, 0);
	/* length 0, type 2: the invalidate form, checking the QPN */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0xabcdef10, 0xabcdef11, 0, 0, 0, 0, 0, 3), 0);
	w = wqe(&t, 7);
	check_ctrl(w, RF_OPCODE_UMR, 0, 7, QPN, 8, 0, (uint32_t)rf_htobe32(0xabcdef10));
	cr_assert_eq(w[16], 0x98, "INLINE | TRANSLATION_OFFSET | CHECK_QPN");
	cr_assert_eq(rd64(w + 24), 0x20006000ULL);
	cr_assert_eq(rd32(w + 68), 0xffffff11);
	cr_assert_eq(t.sq.pi, 10);
	/* type 1 is never zero based (libmlx5 refuses it too) */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x100, 0x101, 1, 0x1000, 64,
					RF_MW_TYPE_1 | RF_MW_ZERO_BASED, 0, 0), -EINVAL);
	cr_assert_eq(t.sq.pi, 10);
	rft_sq_fini(&t);
}

Test(sq, bind_mw_and_local_inv)
{
	struct rft_sq t;
	const uint8_t *w;
	uint32_t newkey = rf_mw_inc_rkey(0x123456ff);

	cr_assert_eq(newkey, 0x12345600, "tag wraps, index stays");
	cr_assert_eq(rf_mw_inc_rkey(0xabcdef10), 0xabcdef11);
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 256, MAXINL, MAXSGE, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x123456ff, newkey, 0x777, 0x10000, 0x2000,
					RF_MKEY_ACCESS_REMOTE_WRITE | RF_MKEY_ACCESS_LOCAL_READ,
					RF_SEND_SIGNALED, 5), 0);
	w = wqe(&t, 0);
	check_ctrl(w, RF_OPCODE_UMR, 0, 0, QPN, 12, RF_WQE_CTRL_CQ_UPDATE,
		   (uint32_t)rf_htobe32(0x123456ff));
	/* UMR ctrl: INLINE | CHECK_FREE | TRANSLATION_OFFSET, 4 octowords */
	cr_assert_eq(w[16], 0xb0);
	cr_assert_eq(w[20], 0);
	cr_assert_eq(w[21], 4);
	cr_assert_eq(rd64(w + 24), 0x203C6041ULL, "mkey mask of a type-2 bind");
	for (int i = 48; i < 64; i++)
		cr_assert_eq(w[i], 0);
	/* mkey context */
	cr_assert_eq(w[64], 0, "not free");
	cr_assert_eq(w[66], RF_MKEY_ACCESS_REMOTE_WRITE | RF_MKEY_ACCESS_LOCAL_READ);
	cr_assert_eq(rd32(w + 68), (QPN << 8) | 0x00, "bound QPN and new tag");
	cr_assert_eq(rd64(w + 80), 0x10000);
	cr_assert_eq(rd64(w + 88), 0x2000);
	/* KLM then 48 zero bytes */
	cr_assert_eq(rd32(w + 128), 0x2000);
	cr_assert_eq(rd32(w + 132), 0x777);
	cr_assert_eq(rd64(w + 136), 0x10000);
	for (int i = 144; i < 192; i++)
		cr_assert_eq(w[i], 0);
	/* the small-fenced NOP after it */
	check_ctrl(wqe(&t, 3), RF_OPCODE_NOP, 0, 3, QPN, 1,
		   RF_WQE_CTRL_INITIATOR_SMALL_FENCE, 0);
	cr_assert_eq(t.sq.pi, 4);
	cr_assert_eq(t.slot[0].wr_id, 5);
	cr_assert_eq(t.slot[0].end, 3);

	cr_assert_eq(rf_sq_post_local_inv(&t.sq, 0xabcdef11, 0, 6), 0);
	w = wqe(&t, 4);
	check_ctrl(w, RF_OPCODE_UMR, 0, 4, QPN, 8, 0, (uint32_t)rf_htobe32(0xabcdef11));
	cr_assert_eq(w[16], 0x98, "INLINE | TRANSLATION_OFFSET | CHECK_QPN");
	cr_assert_eq(rd64(w + 24), 0x20006000ULL);
	cr_assert_eq(w[64], RF_MKEY_CONTEXT_FREE);
	cr_assert_eq(rd32(w + 68), 0xffffff00);
	check_ctrl(wqe(&t, 6), RF_OPCODE_NOP, 0, 6, QPN, 1,
		   RF_WQE_CTRL_INITIATOR_SMALL_FENCE, 0);
	cr_assert_eq(t.sq.pi, 7);
	/* the key's index must not change */
	cr_assert_eq(rf_sq_post_bind_mw(&t.sq, 0x100, 0x201, 1, 0, 1, 0, 0, 0), -EINVAL);
	/* no room for UMR + fence: nothing moves (7 used, 9 free: fill to 2) */
	for (int i = 0; i < 7; i++)
		cr_assert_eq(rf_sq_post_nop(&t.sq, 0, 0), 0);
	cr_assert_eq(rf_sq_space(&t.sq), 2);
	cr_assert_eq(rf_sq_post_local_inv(&t.sq, 1, 0, 0), -ENOSPC);
	cr_assert_eq(t.sq.pi, 14);
	rft_sq_fini(&t);
}
