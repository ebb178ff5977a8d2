/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Batches report exactly how many they posted (the ibti_common.h model,
 * as ibv_post_send() with a list): rf_sq_post_batch() on every connected
 * transport when the queue fills in the middle of a batch of WQEs of
 * mixed sizes, and on UD, which it refuses; rf_rq_post_batch() and
 * rf_srq_post_batch() when the receive queue fills. Each rings once,
 * only when something was posted, and writes nothing past the count.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { QPN = 0x777, NWR = 24, SQ_BB = 16 };

/* Alternating one- and two-basic-block SENDs: 16-byte SGE, 64 bytes inline. */
static void mixed_sends(struct rf_sq_wr *wr, int n, const struct rf_sge *sg,
			const struct rf_sge *inl)
{
	memset(wr, 0, sizeof(*wr) * (size_t)n);
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = 100 + (uint64_t)i;
		wr[i].opcode = RF_WR_SEND;
		wr[i].num_sge = 1;
		wr[i].sg_list = i % 2 ? inl : sg;
		wr[i].flags = i % 2 ? RF_SEND_INLINE : 0;
	}
}

static void batch_fills_mid_way(uint32_t kind)
{
	struct rft_sq t;
	struct rf_sq_wr wr[NWR];
	uint8_t payload[64];
	struct rf_sge sg = { 0x1000, 16, 7 }, inl = { 0, 64, 0 };
	uint32_t bb[NWR], used = 0;
	int err = 1, want = 0, got;

	memset(payload, 0x3c, sizeof(payload));
	inl.addr = (uint64_t)(uintptr_t)payload;
	mixed_sends(wr, NWR, &sg, &inl);
	cr_assert_eq(rft_sq_init(&t, kind, SQ_BB, 256, 128, 4, 0, QPN), 0);
	/* what each WQE takes, learnt on a scratch queue of the same kind */
	{
		struct rft_sq s;

		cr_assert_eq(rft_sq_init(&s, kind, 256, 256, 128, 4, 0, QPN), 0);
		for (int i = 0; i < NWR; i++) {
			uint32_t pi = s.sq.pi;

			cr_assert_eq(rf_sq_post_wr(&s.sq, &wr[i]), 0);
			bb[i] = s.sq.pi - pi;
		}
		rft_sq_fini(&s);
	}
	cr_assert_eq(bb[0], 1);
	cr_assert_eq(bb[1], 2, "the inline SEND takes two basic blocks");
	while (want < NWR && used + bb[want] <= SQ_BB)
		used += bb[want++];
	cr_assert(want < NWR, "the batch must overflow the queue");

	memset(t.buf, 0xa5, SQ_BB * 64);
	got = rf_sq_post_batch(&t.sq, wr, NWR, &err);
	cr_assert_eq(got, want, "kind %u: %d posted, %d fit", kind, got, want);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(t.sq.pi, used);
	cr_assert_eq(t.dbrec[RF_SND_DBR], rf_htobe32(used), "rung once, after the last posted");
	cr_assert_eq(t.slot[used - bb[want - 1]].wr_id, 100 + (uint64_t)want - 1);
	/* full: nothing more, no ring */
	got = rf_sq_post_batch(&t.sq, &wr[want], NWR - want, &err);
	cr_assert_eq(got, 0);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(t.sq.pi, used);
	rft_sq_fini(&t);
}

Test(batch, sq_fills_mid_batch_rc)
{
	batch_fills_mid_way(RF_QP_RC);
}

Test(batch, sq_fills_mid_batch_uc)
{
	batch_fills_mid_way(RF_QP_UC);
}

Test(batch, sq_fills_mid_batch_xrc)
{
	batch_fills_mid_way(RF_QP_XRC);
}

/* UD sends need an address vector: rf_sq_post_ud_send(), not a batch. */
Test(batch, sq_batch_on_ud_posts_nothing)
{
	struct rft_sq t;
	struct rf_sq_wr wr[2];
	struct rf_sge sg = { 0x1000, 16, 7 };
	int err = 0;

	mixed_sends(wr, 2, &sg, &sg);
	wr[1].flags = 0;
	cr_assert_eq(rft_sq_init(&t, RF_QP_UD, SQ_BB, 256, 128, 4, 0, QPN), 0);
	cr_assert_eq(rf_sq_post_batch(&t.sq, wr, 2, &err), 0);
	cr_assert_eq(err, -EINVAL);
	cr_assert_eq(t.sq.pi, 0);
	cr_assert_eq(t.dbrec[RF_SND_DBR], 0, "no ring");
	rft_sq_fini(&t);
}

Test(batch, rq_fills_mid_batch)
{
	struct rft_rq t;
	struct rf_sge sg = { 0x1000, 64, 5 };
	struct rf_recv_wr wr[8];
	int err = 1;

	cr_assert_eq(rft_rq_init(&t, 32), 0);
	for (int i = 0; i < 8; i++) {
		wr[i].wr_id = 50 + (uint64_t)i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
	}
	cr_assert_eq(rf_rq_post_batch(&t.rq, wr, 3, &err), 3);
	cr_assert_eq(err, 0);
	cr_assert_eq(t.dbrec[RF_RCV_DBR], RF_BE32(3));
	/* 5 of the next 8 fit */
	cr_assert_eq(rf_rq_post_batch(&t.rq, wr, 8, &err), 5);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(t.dbrec[RF_RCV_DBR], RF_BE32(8));
	cr_assert_eq(t.wr_id[7], 54, "the last posted");
	cr_assert_eq(rf_rq_post_batch(&t.rq, wr, 1, &err), 0);
	cr_assert_eq(err, -ENOSPC);
	/* too many entries: refused at that receive, the earlier ones posted */
	{
		struct rft_rq u;
		struct rf_sge many[8];
		struct rf_recv_wr w2[2] = { { 1, &sg, 1 }, { 2, many, 8 } };

		memset(many, 0, sizeof(many));
		cr_assert_eq(rft_rq_init(&u, 32), 0);
		cr_assert_eq(rf_rq_post_batch(&u.rq, w2, 2, &err), 1);
		cr_assert_eq(err, -EINVAL);
		cr_assert_eq(u.dbrec[RF_RCV_DBR], RF_BE32(1));
		free(u.buf);
	}
	free(t.buf);
}

Test(batch, srq_fills_mid_batch)
{
	enum { N = 8, STRIDE = 64 };
	struct rf_srq srq;
	struct rf_srq_attr a;
	uint8_t *buf = (uint8_t *)rft_zalloc(N * STRIDE);
	uint64_t ids[N];
	__be32 db = 0;
	struct rf_sge sg = { 0x1000, 64, 5 };
	struct rf_recv_wr wr[N];
	int err = 1;

	for (int i = 0; i < N; i++)
		rf_set_srq_next_seg((struct rf_wqe_srq_next_seg *)(buf + i * STRIDE),
				    (uint16_t)((i + 1) % N));
	memset(&a, 0, sizeof(a));
	a.buf = buf; a.wqe_cnt = N; a.stride = STRIDE; a.head = 0; a.tail = N - 1;
	a.dbrec = &db; a.wr_id = ids;
	cr_assert_eq(rf_srq_init(&srq, &a), 0);
	for (int i = 0; i < N; i++) {
		wr[i].wr_id = 70 + (uint64_t)i;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
	}
	/* N - 1 usable: the tail is the list's sentinel */
	cr_assert_eq(rf_srq_post_batch(&srq, wr, N, &err), N - 1);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(db, rf_htobe32(N - 1), "rung once");
	cr_assert_eq(rf_srq_post_batch(&srq, wr, 1, &err), 0);
	cr_assert_eq(db, rf_htobe32(N - 1));
	/* one WQE back from a completion: exactly one more fits */
	rf_srq_free(&srq, 0);
	cr_assert_eq(rf_srq_post_batch(&srq, wr, 3, &err), 1);
	cr_assert_eq(err, -ENOSPC);
	cr_assert_eq(db, rf_htobe32(N));
	free(buf);
}
