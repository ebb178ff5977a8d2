/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * DCI posts (sq_dc.h) in host memory: the address vector after ctrl with the
 * DCT number, the extended bit and the DC key as mlx5dv_wr_set_dc_addr()
 * writes them, the RC segments after it, BlueFlame of a lone 2-BB WQE,
 * padding at the queue end, the 16-byte compact AV (a one-SGE WRITE in one
 * BB), the DCI stream id in ctrl bytes 9..10, and the refusals: DCI posts
 * on other queues, the RC and UD posts on a DCI, a compact AV for a path
 * with a GRH.
 */
#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

#define QPN 0x1234

static uint32_t be32at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rf_be32toh(v);
}

static uint64_t be64at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return rf_be64toh(v);
}

static const uint8_t *slot(const struct rft_sq *t, uint32_t pi)
{
	return t->buf + (size_t)(pi & (t->sq.wqe_cnt - 1)) * 64;
}

static void dest(struct rf_dc_dest *d, uint32_t dctn, uint64_t key)
{
	struct rf_wqe_av av;
	const uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 }, gid[16] = { 0xfe, 0x80, 9 };

	/* an address handle's AV: no key, no QPN, no extended bit */
	rf_set_av(&av, 0, 0, 0, 0x12, 0, 0x77, mac, 5, 64, 0x40000123, gid);
	rf_dc_dest_init(d, &av, dctn, key);
}

Test(sq_dc, write_layout_and_blueflame)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 256, 64, 2, 0, QPN), 0);
	dest(&d, 0xabcde, 0x1122334455667788ull);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 0x10, 0x1000, 512, 0x20, 0x2000,
					 RF_SEND_SIGNALED | RF_SEND_RING, 7), 0);
	w = slot(&t, 0);
	cr_assert_eq(w[3], RF_OPCODE_RDMA_WRITE);
	cr_assert_eq(be32at(w + 4), (QPN << 8) | 6, "ctrl + AV (3) + raddr + data");
	cr_assert_eq(w[11], RF_WQE_CTRL_CQ_UPDATE);
	cr_assert_eq(be64at(w + 16), 0x1122334455667788ull, "DC key, big-endian");
	cr_assert_eq(be32at(w + 24), 0x80000000u | 0xabcde, "extended | dctn");
	cr_assert_eq(w[28], 0x12);
	cr_assert_eq(be32at(w + 44) , 0x40000123u, "GRH bit, SGID index, flow label");
	cr_assert_eq(be64at(w + 64), 0x2000, "raddr");
	cr_assert_eq(be32at(w + 72), 0x20, "rkey");
	cr_assert_eq(be32at(w + 80), 512, "data length");
	cr_assert_eq(be32at(w + 84), 0x10, "lkey");
	cr_assert_eq(be64at(w + 88), 0x1000, "laddr");
	cr_assert_eq(t.sq.pi, 2);
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(2));
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, w, 128), 0, "alone, 2 BBs: BlueFlame");
	rft_sq_fini(&t);
}

/*
 * The 48-byte AV's WQE is two BBs built in registers and rung from them:
 * the BlueFlame lines carry the WQE and then zeros, never the queue's
 * stale bytes after it (a copy read back from the queue would send them).
 */
Test(sq_dc, av48_rings_blueflame_from_registers)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t *w, *bf;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 256, 64, 2, 0, QPN), 0);
	dest(&d, 0xabcde, 0x1122334455667788ull);
	memset(t.buf, 0xcc, 16 * 64);	/* stale bytes of an earlier lap */
	memset(t.uar + RF_BF_REG_OFFSET, 0xee, 512);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 0x10, 0x1000, 512, 0x20, 0x2000,
					 RF_SEND_SIGNALED | RF_SEND_RING, 7), 0);
	w = slot(&t, 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	cr_assert_eq(w[7] & 0x3f, 6, "ctrl + AV (3) + raddr + data");
	cr_assert_eq(memcmp(w + 16, &d.av, 48), 0, "the AV as prepared");
	cr_assert_eq(memcmp(bf, w, 96), 0, "the WQE went out by BlueFlame");
	for (int i = 96; i < 128; i++)
		cr_assert_eq(bf[i], 0, "byte %d: the last line's tail is zeros, not the queue's", i);
	cr_assert_eq(bf[128], 0xee, "two lines and no more");
	cr_assert_eq(t.sq.bf.cur, t.uar + RF_BF_REG_OFFSET + 256, "the other half next");

	/* a SEND: ctrl, AV, data (5 DS, 80 bytes), still two BBs */
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 0x11, 0x3000, 8,
					RF_SEND_SIGNALED | RF_SEND_RING, 8), 0);
	w = slot(&t, 2);
	bf = t.uar + RF_BF_REG_OFFSET + 256;
	cr_assert_eq(w[7] & 0x3f, 5);
	cr_assert_eq(be32at(w + 64), 8, "data length right after the AV");
	cr_assert_eq(be32at(w + 68), 0x11);
	cr_assert_eq(be64at(w + 72), 0x3000);
	cr_assert_eq(memcmp(bf, w, 80), 0);
	for (int i = 80; i < 128; i++)
		cr_assert_eq(bf[i], 0, "byte %d", i);

	/* a SEND of nothing: ctrl and AV fill one BB; the next slot untouched */
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 0x11, 0x3000, 0,
					RF_SEND_SIGNALED | RF_SEND_RING, 9), 0);
	w = slot(&t, 4);
	cr_assert_eq(w[7] & 0x3f, 4);
	cr_assert_eq(t.sq.pi, 5, "one BB");
	cr_assert_eq(slot(&t, 5)[0], 0xcc, "nothing stored past its BB");
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, w, 64), 0, "one line");
	rft_sq_fini(&t);
}

/* An InfiniBand address handle's AV without GRH: bytes 16..47 zero. */
static void compact_dest(struct rf_dc_dest *d, uint32_t dctn, uint64_t key)
{
	struct rf_wqe_av av;

	memset(&av, 0, sizeof(av));
	av.stat_rate_sl = 0x73;
	av.fl_mlid = 0x05;
	av.rlid = RF_BE16(0x0042);
	cr_assert_eq(rf_dc_dest_init_compact(d, &av, dctn, key), 0);
}

Test(sq_dc, compact_av_write_is_one_bb_and_one_blueflame_block)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 256, 64, 2, 0, QPN), 0);
	compact_dest(&d, 0xabcde, 0x1122334455667788ull);
	memset(t.uar + RF_BF_REG_OFFSET, 0xee, 256);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 0x10, 0x1000, 64, 0x20, 0x2000,
					 RF_SEND_SIGNALED | RF_SEND_RING, 7), 0);
	w = slot(&t, 0);
	cr_assert_eq(w[3], RF_OPCODE_RDMA_WRITE);
	cr_assert_eq(be32at(w + 4), (QPN << 8) | 4, "ctrl + AV (1) + raddr + data");
	cr_assert_eq(w[11], RF_WQE_CTRL_CQ_UPDATE);
	cr_assert_eq(be64at(w + 16), 0x1122334455667788ull, "DC key");
	cr_assert_eq(be32at(w + 24), 0xabcde, "dctn, no extended bit");
	cr_assert_eq(w[28], 0x73, "rate and SL");
	cr_assert_eq(w[29], 0x05);
	cr_assert_eq(be32at(w + 28) & 0xffff, 0x42, "DLID");
	cr_assert_eq(be64at(w + 32), 0x2000, "raddr right after the 16 bytes");
	cr_assert_eq(be32at(w + 40), 0x20);
	cr_assert_eq(be32at(w + 48), 64);
	cr_assert_eq(be32at(w + 52), 0x10);
	cr_assert_eq(be64at(w + 56), 0x1000);
	cr_assert_eq(t.sq.pi, 1, "one BB");
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(1));
	cr_assert_eq(memcmp(t.uar + RF_BF_REG_OFFSET, w, 64), 0, "BlueFlame: one block");
	cr_assert_eq(t.uar[RF_BF_REG_OFFSET + 64], 0xee, "and no more");
	rft_sq_fini(&t);
}

Test(sq_dc, compact_av_send_rings_blueflame_from_registers)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t *w, *bf;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 256, 64, 2, 0, QPN), 0);
	compact_dest(&d, 7, 8);
	memset(t.buf, 0xcc, 16 * 64);	/* stale bytes of an earlier lap */
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 0x10, 0x1000, 100,
					RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	w = slot(&t, 0);
	bf = t.uar + RF_BF_REG_OFFSET;
	cr_assert_eq(w[7] & 0x3f, 3, "ctrl + AV + data");
	cr_assert_eq(memcmp(bf, w, 48), 0, "the WQE went out by BlueFlame");
	for (int i = 48; i < 64; i++)
		cr_assert_eq(bf[i], 0, "byte %d: the block's tail is zeros, not the queue's", i);
	rft_sq_fini(&t);
}

Test(sq_dc, compact_av_every_body)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t msg[40] = { 9, 8, 7 };
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 64, 0, 64, 2, 0, QPN), 0);
	compact_dest(&d, 5, 9);
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 1, 2, 0, 0, 0), 0);
	cr_assert_eq(slot(&t, 0)[7] & 0x3f, 2, "ctrl + AV");
	cr_assert_eq(rf_sq_post_dc_read(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), 0);
	w = slot(&t, 1);
	cr_assert_eq(w[7] & 0x3f, 4);
	cr_assert_eq(be32at(w + 40), 4, "rkey");
	cr_assert_eq(rf_sq_post_dc_faa(&t.sq, &d, 1, 2, 3, 4, 6, 0, 0), 0);
	w = slot(&t, 2);
	cr_assert_eq(w[7] & 0x3f, 5, "ctrl + AV + raddr + atomic + data");
	cr_assert_eq(be64at(w + 48), 6, "add");
	cr_assert_eq(be32at(w + 64), 8, "the data segment in the second BB");
	cr_assert_eq(t.sq.pi, 4);
	cr_assert_eq(rf_sq_post_dc_write_inline(&t.sq, &d, msg, 12, 4, 5, 0, 0), 0);
	w = slot(&t, 4);
	cr_assert_eq(w[7] & 0x3f, 4, "raddr + 4 + 12 bytes inline: one BB");
	cr_assert_eq(be32at(w + 48), 0x80000000u | 12);
	cr_assert_eq(memcmp(w + 52, msg, 12), 0);
	cr_assert_eq(rf_sq_post_dc_send_inline(&t.sq, &d, msg, 40, 0, 0), 0);
	w = slot(&t, 5);
	cr_assert_eq(w[7] & 0x3f, 2 + 3);
	cr_assert_eq(memcmp(w + 36, msg, 40), 0);
	rft_sq_fini(&t);
}

Test(sq_dc, compact_av_refused_for_a_path_with_grh)
{
	struct rf_dc_dest d;
	struct rf_wqe_av av;
	const uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 }, gid[16] = { 0xfe, 0x80, 9 };

	rf_set_av(&av, 0, 0, 0, 0x12, 0, 0x77, mac, 5, 64, 0x40000123, gid);
	cr_assert_eq(rf_dc_dest_init_compact(&d, &av, 5, 9), -EINVAL);
	memset(&av, 0, sizeof(av));
	av.rgid[15] = 1;	/* RoCE: a GID, no GRH bit */
	cr_assert_eq(rf_dc_dest_init_compact(&d, &av, 5, 9), -EINVAL);
	memset(&av, 0, sizeof(av));
	cr_assert_eq(rf_dc_dest_init_compact(&d, &av, 5, 9), 0);
}

Test(sq_dc, stream_id_in_the_control_segment)
{
	struct rft_sq t;
	struct rf_dc_dest d, c;
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 0, 64, 2, 1, QPN), 0);
	dest(&d, 5, 9);
	compact_dest(&c, 6, 10);
	rf_dc_dest_set_stream(&d, 0x1a2b);
	rf_dc_dest_set_stream(&c, 3);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 1, 2, 3, 4, 5, RF_SEND_FENCE, 0), 0);
	w = slot(&t, 0);
	cr_assert_eq(w[9], 0x1a, "dci_stream_channel_id, big-endian");
	cr_assert_eq(w[10], 0x2b);
	cr_assert_eq(w[8], 0, "signature untouched");
	cr_assert_eq(w[11], RF_WQE_CTRL_FENCE | RF_WQE_CTRL_CQ_UPDATE, "fm_ce_se untouched");
	cr_assert_eq(rf_sq_post_dc_send_imm(&t.sq, &c, 1, 2, 3, RF_BE32(0x99), 0, 0), 0);
	w = slot(&t, 2);
	cr_assert_eq(w[9], 0);
	cr_assert_eq(w[10], 3);
	cr_assert_eq(be32at(w + 12), 0x99, "imm untouched");
	rf_dc_dest_set_stream(&d, 0);
	cr_assert_eq(rf_sq_post_dc_faa(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), 0);
	w = slot(&t, 3);
	cr_assert_eq(w[9] | w[10], 0, "stream 0 again");
	rft_sq_fini(&t);
}

Test(sq_dc, every_opcode)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	const uint8_t msg[80] = { 1, 2, 3 };
	const uint8_t *w;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 64, 0, 64, 2, 0, QPN), 0);
	dest(&d, 5, 9);
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 1, 2, 3, 0, 0), 0);
	w = slot(&t, 0);
	cr_assert_eq(w[3], RF_OPCODE_SEND);
	cr_assert_eq(w[7] & 0x3f, 5);
	cr_assert_eq(be32at(w + 64), 3);
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 1, 2, 0, 0, 0), 0);
	w = slot(&t, 2);
	cr_assert_eq(w[7] & 0x3f, 4, "no data segment for nothing, as libmlx5");
	cr_assert_eq(t.sq.pi, 3, "ctrl + AV: one BB");
	cr_assert_eq(rf_sq_post_dc_send_imm(&t.sq, &d, 1, 2, 3, RF_BE32(0xfeed), 0, 0), 0);
	w = slot(&t, 3);
	cr_assert_eq(w[3], RF_OPCODE_SEND_IMM);
	cr_assert_eq(be32at(w + 12), 0xfeed);
	cr_assert_eq(rf_sq_post_dc_send_inv(&t.sq, &d, 1, 2, 3, 0x77, 0, 0), 0);
	cr_assert_eq(slot(&t, 5)[3], RF_OPCODE_SEND_INVAL);
	cr_assert_eq(be32at(slot(&t, 5) + 12), 0x77);
	cr_assert_eq(rf_sq_post_dc_read(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), 0);
	cr_assert_eq(slot(&t, 7)[3], RF_OPCODE_RDMA_READ);
	cr_assert_eq(rf_sq_post_dc_write_imm(&t.sq, &d, 1, 2, 3, 4, 5, RF_BE32(6), 0, 0), 0);
	cr_assert_eq(slot(&t, 9)[3], RF_OPCODE_RDMA_WRITE_IMM);
	cr_assert_eq(rf_sq_post_dc_faa(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), 0);
	w = slot(&t, 11);
	cr_assert_eq(w[3], RF_OPCODE_ATOMIC_FA);
	cr_assert_eq(w[7] & 0x3f, 7, "ctrl + AV + raddr + atomic + data");
	cr_assert_eq(be64at(w + 80), 5, "add");
	cr_assert_eq(be32at(w + 96), 8);
	cr_assert_eq(rf_sq_post_dc_cas(&t.sq, &d, 1, 2, 3, 4, 10, 11, 0, 0), 0);
	w = slot(&t, 13);
	cr_assert_eq(w[3], RF_OPCODE_ATOMIC_CS);
	cr_assert_eq(be64at(w + 80), 11, "swap");
	cr_assert_eq(be64at(w + 88), 10, "compare");
	cr_assert_eq(rf_sq_post_dc_write_inline(&t.sq, &d, msg, 20, 4, 5, 0, 0), 0);
	w = slot(&t, 15);
	cr_assert_eq(w[7] & 0x3f, 4 + 1 + 2, "raddr + 4 + 20 bytes inline");
	cr_assert_eq(be32at(w + 80), 0x80000000u | 20);
	cr_assert_eq(memcmp(w + 84, msg, 20), 0);
	cr_assert_eq(rf_sq_post_dc_send_inline(&t.sq, &d, msg, 65, 0, 0), -EINVAL, "> max_inline");
	cr_assert_eq(rf_sq_post_dc_send_imm_inline(&t.sq, &d, msg, 12, RF_BE32(1), 0, 0), 0);
	w = slot(&t, 17);
	cr_assert_eq(w[7] & 0x3f, 5);
	cr_assert_eq(be32at(w + 64), 0x80000000u | 12);
	rft_sq_fini(&t);
}

Test(sq_dc, pads_at_the_queue_end)
{
	struct rft_sq t;
	struct rf_dc_dest d;

	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 4, 0, 64, 2, 0, QPN), 0);
	dest(&d, 5, 9);
	cr_assert_eq(rf_sq_post_dc_send(&t.sq, &d, 1, 2, 0, 0, 1), 0);	/* 1 BB */
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 1, 2, 3, 4, 5, 0, 2), 0);
	cr_assert_eq(t.sq.pi, 3);
	rf_sq_retire(&t.sq, 0);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 1, 2, 3, 4, 5, 0, 3), -ENOSPC,
		     "1 BB at the end to pad and 2 for the WQE; 2 free");
	rf_sq_retire(&t.sq, 1);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 1, 2, 3, 4, 5, 0, 3), 0);
	cr_assert_eq(slot(&t, 3)[3], RF_OPCODE_NOP, "the queue end is padded");
	cr_assert_eq(slot(&t, 4)[3], RF_OPCODE_RDMA_WRITE, "the WQE never wraps");
	cr_assert_eq(t.sq.pi, 6);
	rft_sq_fini(&t);
}

Test(sq_dc, refusals)
{
	struct rft_sq t;
	struct rf_dc_dest d;
	struct rf_wqe_av av;
	uint8_t data[8] = { 0 };

	dest(&d, 5, 9);
	memset(&av, 0, sizeof(av));
	cr_assert_eq(rft_sq_init(&t, RF_QP_RC, 16, 0, 64, 2, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_dc_write(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_dc_send_inline(&t.sq, &d, data, 8, 0, 0), -EINVAL);
	cr_assert_eq(t.sq.pi, 0);
	rft_sq_fini(&t);
	cr_assert_eq(rft_sq_init(&t, RF_QP_UD, 16, 0, 64, 2, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_dc_faa(&t.sq, &d, 1, 2, 3, 4, 5, 0, 0), -EINVAL);
	rft_sq_fini(&t);

	/* on a DCI, the posts without a destination are refused */
	cr_assert_eq(rft_sq_init(&t, RF_QP_DCI, 16, 0, 64, 2, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_write(&t.sq, 1, 2, 3, 4, 5, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_send(&t.sq, 1, 2, 3, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_read(&t.sq, 1, 2, 3, 4, 5, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_send_inline(&t.sq, data, 8, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_faa(&t.sq, 1, 2, 3, 4, 5, 0, 0), -EINVAL);
	cr_assert_eq(rf_sq_post_ud_send(&t.sq, &av, 1, 2, NULL, 1, 2, 3, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(t.sq.pi, 0);
	rft_sq_fini(&t);
}
