/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/rq.h in host memory: scatter lists with and without the
 * terminator, zero-length entries, the full queue, the doorbell record,
 * wr_id by slot and wrap-around.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

static void seg_is(const struct rf_wqe_data_seg *d, uint32_t len, uint32_t lkey, uint64_t addr)
{
	cr_assert_eq(rf_be32toh(d->byte_count), len);
	cr_assert_eq(rf_be32toh(d->lkey), lkey);
	cr_assert_eq(rf_be64toh(d->addr), addr);
}

Test(rq, post_list_terminator_and_ring)
{
	struct rft_rq t;
	struct rf_sge sg[4] = {
		{ 0x1000, 10, 1 }, { 0x2000, 0, 2 }, { 0x3000, 30, 3 }, { 0x4000, 40, 4 },
	};
	const struct rf_wqe_data_seg *d;

	cr_assert_eq(rft_rq_init(&t, 64), 0);
	cr_assert_eq(t.rq.max_sge, 4);
	cr_assert_eq(rf_rq_post(&t.rq, sg, 3, 11), 0);	/* 2 used + terminator */
	d = (const struct rf_wqe_data_seg *)t.buf;
	seg_is(&d[0], 10, 1, 0x1000);
	seg_is(&d[1], 30, 3, 0x3000);
	seg_is(&d[2], 0, RF_INVALID_LKEY, 0);
	cr_assert_eq(rf_rq_post(&t.rq, sg, 4, 12), 0);	/* 3 used + terminator */
	d = (const struct rf_wqe_data_seg *)(t.buf + 64);
	seg_is(&d[2], 40, 4, 0x4000);
	seg_is(&d[3], 0, RF_INVALID_LKEY, 0);
	sg[1].length = 20;
	cr_assert_eq(rf_rq_post(&t.rq, sg, 4, 13), 0);	/* all 4: no terminator */
	d = (const struct rf_wqe_data_seg *)(t.buf + 128);
	seg_is(&d[3], 40, 4, 0x4000);
	cr_assert_eq(rf_rq_post(&t.rq, sg, 5, 14), -EINVAL);
	cr_assert_eq(t.dbrec[RF_RCV_DBR], 0, "nothing published before the ring");
	rf_rq_ring(&t.rq);
	cr_assert_eq(t.dbrec[RF_RCV_DBR], RF_BE32(3));
	cr_assert_eq(t.dbrec[RF_SND_DBR], RF_BE32(0x5a5a), "SQ word untouched");
	cr_assert_eq(t.wr_id[0], 11);
	cr_assert_eq(t.wr_id[2], 13);
	free(t.buf);
}

/*
 * A zero-length one-buffer receive writes no scatter entry (byte_count 0
 * is 2 GiB to mlx5): the invalid lkey, as rf_rq_post() does by skipping it.
 */
Test(rq, post_one_zero_length_is_a_terminator)
{
	struct rft_rq t;
	const struct rf_wqe_data_seg *d;

	cr_assert_eq(rft_rq_init(&t, 64), 0);
	cr_assert_eq(rf_rq_post_one(&t.rq, 7, 0x1000, 0, 21), 0);
	d = (const struct rf_wqe_data_seg *)t.buf;
	cr_assert_eq(d[0].byte_count, 0);
	cr_assert_eq(rf_be32toh(d[0].lkey), RF_INVALID_LKEY);
	cr_assert_eq(rf_rq_post_one(&t.rq, 7, 0x1000, 16, 22), 0);
	seg_is((const struct rf_wqe_data_seg *)(t.buf + 64), 16, 7, 0x1000);
	cr_assert_eq(t.rq.head, 2);
	free(t.buf);
}

Test(rq, full_and_wrap)
{
	struct rft_rq t;
	uint8_t before[8 * 16];

	cr_assert_eq(rft_rq_init(&t, 16), 0);
	cr_assert_eq(t.rq.max_sge, 1);
	for (uint64_t i = 0; i < 8; i++)
		cr_assert_eq(rf_rq_post_one(&t.rq, 7, 0x100 * i, 64, i), 0);
	memcpy(before, t.buf, sizeof(before));
	cr_assert_eq(rf_rq_post_one(&t.rq, 7, 0, 64, 99), -ENOSPC);
	cr_assert_eq(memcmp(before, t.buf, sizeof(before)), 0);
	cr_assert_eq(t.rq.head, 8);
	/* three laps of retire + repost; wr_id follows the slot */
	for (uint32_t n = 0; n < 24; n++) {
		cr_assert_eq(rf_rq_retire(&t.rq, (uint16_t)n), n < 8 ? n : 1000 + n - 8);
		cr_assert_eq(rf_rq_post_one(&t.rq, 7, 0x100 * n, 64, 1000 + n), 0);
		rf_rq_ring(&t.rq);
		cr_assert_eq(t.dbrec[RF_RCV_DBR], rf_htobe32((n + 9) & 0xffff));
	}
	seg_is((const struct rf_wqe_data_seg *)t.buf + (31 & 7), 64, 7, 0x100 * 23);
	free(t.buf);
}

Test(rq, init_rejects_bad_geometry)
{
	struct rf_rq rq;
	struct rf_rq_attr a;
	uint64_t w[8];
	__be32 db[2];
	uint8_t buf[256];

	memset(&a, 0, sizeof(a));
	a.buf = buf; a.wqe_cnt = 8; a.stride = 24; a.dbrec = db; a.wr_id = w;
	cr_assert_eq(rf_rq_init(&rq, &a), -EINVAL);
	a.stride = 16; a.wqe_cnt = 6;
	cr_assert_eq(rf_rq_init(&rq, &a), -EINVAL);
	a.wqe_cnt = 8;
	cr_assert_eq(rf_rq_init(&rq, &a), 0);
}
