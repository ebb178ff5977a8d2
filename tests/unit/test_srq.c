/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/srq.h in host memory, on a buffer laid out as libmlx5 leaves a
 * new SRQ (next[i] = i + 1, head 0, tail last): posting follows the links,
 * head == tail is full, completed WQEs are linked at the tail in any order,
 * and the doorbell record counts posts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { N = 8, STRIDE = 64 };

struct srq_t {
	struct rf_srq srq;
	uint8_t *buf;
	uint64_t wr_id[N];
	__be32 db;
};

static void srq_t_init(struct srq_t *t)
{
	struct rf_srq_attr a;

	memset(t, 0, sizeof(*t));
	t->buf = (uint8_t *)rft_zalloc(N * STRIDE);
	for (int i = 0; i < N; i++)
		rf_set_srq_next_seg((struct rf_wqe_srq_next_seg *)(t->buf + i * STRIDE),
				    (uint16_t)((i + 1) % N));
	memset(&a, 0, sizeof(a));
	a.buf = t->buf; a.wqe_cnt = N; a.stride = STRIDE; a.head = 0; a.tail = N - 1;
	a.srqn = 0x55; a.dbrec = &t->db; a.wr_id = t->wr_id;
	cr_assert_eq(rf_srq_init(&t->srq, &a), 0);
}

static uint16_t next_of(struct srq_t *t, uint32_t i)
{
	return rf_be16toh(((struct rf_wqe_srq_next_seg *)(t->buf + i * STRIDE))->next_wqe_index);
}

Test(srq, post_follows_links_until_full)
{
	struct srq_t t;
	struct rf_sge sg[2] = { { 0x1000, 100, 9 }, { 0x2000, 200, 9 } };
	const struct rf_wqe_data_seg *d;

	srq_t_init(&t);
	cr_assert_eq(t.srq.max_sge, 3);
	for (int i = 0; i < N - 1; i++) {
		cr_assert_eq(t.srq.head, (uint32_t)i);
		cr_assert_eq(rf_srq_post(&t.srq, sg, 2, 100 + (uint64_t)i), 0);
	}
	cr_assert(rf_srq_full(&t.srq));
	cr_assert_eq(rf_srq_post(&t.srq, sg, 1, 0), -ENOSPC);
	cr_assert_eq(rf_srq_post(&t.srq, sg, 4, 0), -EINVAL);
	/* the links are the free list: untouched by posting */
	for (int i = 0; i < N; i++)
		cr_assert_eq(next_of(&t, (uint32_t)i), (i + 1) % N);
	d = (const struct rf_wqe_data_seg *)(t.buf + 3 * STRIDE + 16);
	cr_assert_eq(rf_be32toh(d[0].byte_count), 100);
	cr_assert_eq(rf_be64toh(d[1].addr), 0x2000);
	cr_assert_eq(rf_be32toh(d[2].lkey), RF_INVALID_LKEY);
	cr_assert_eq(t.db, 0);
	rf_srq_ring(&t.srq);
	cr_assert_eq(t.db, RF_BE32(N - 1));
	free(t.buf);
}

Test(srq, free_links_at_tail_out_of_order)
{
	struct srq_t t;
	struct rf_sge sg = { 0x1000, 64, 9 };

	srq_t_init(&t);
	for (int i = 0; i < N - 1; i++)
		cr_assert_eq(rf_srq_post(&t.srq, &sg, 1, 100 + (uint64_t)i), 0);
	/* completions of 5, then 2 */
	cr_assert_eq(rf_srq_free(&t.srq, 5), 105);
	cr_assert_eq(next_of(&t, N - 1), 5);
	cr_assert_eq(t.srq.tail, 5);
	cr_assert_eq(rf_srq_free(&t.srq, 2), 102);
	cr_assert_eq(next_of(&t, 5), 2);
	cr_assert_eq(t.srq.tail, 2);
	/* the old sentinel 7 is used next, then 5; 2 is the new sentinel */
	cr_assert_eq(rf_srq_post(&t.srq, &sg, 1, 207), 0);
	cr_assert_eq(t.wr_id[7], 207);
	cr_assert_eq(rf_srq_post(&t.srq, &sg, 1, 205), 0);
	cr_assert_eq(t.wr_id[5], 205);
	cr_assert(rf_srq_full(&t.srq));
	cr_assert_eq(t.srq.head, 2);
	rf_srq_ring(&t.srq);
	cr_assert_eq(t.db, RF_BE32(N + 1));
	/* many laps of post / complete keep the list consistent */
	for (uint32_t n = 0; n < 5 * N; n++) {
		uint32_t victim = (n * 3 + 1) % N;

		if (victim == t.srq.tail || victim == t.srq.head)
			continue;
		/* only posted (in-flight) WQEs complete: find one */
		rf_srq_free(&t.srq, (uint16_t)victim);
		cr_assert_eq(rf_srq_post(&t.srq, &sg, 1, n), 0);
		cr_assert(rf_srq_full(&t.srq));
	}
	free(t.buf);
}
