/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_dm.c - device memory (MEMIC): ibv_alloc_dm(), ibv_memcpy_to_dm()
 * and _from_dm() through libmlx5's own mapping, ibv_reg_dm_mr(), and a
 * peer's RDMA WRITE, READ and atomics on the DM MR, over the loopback.
 */
#include "dev_test.h"

static struct dt t;

static void setup(void)
{
	dt_setup(&t);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_dm, .init = setup, .fini = teardown, .timeout = 30);

#define DM_SIZE		(128 * 1024)	/* a ConnectX-6's MEMIC */
#define DM_ACC		(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_dm *alloc_dm(size_t len, uint32_t log_align)
{
	struct ibv_alloc_dm_attr a = { .length = len, .log_align_req = log_align };

	return ibv_alloc_dm(t.ctx, &a);
}

Test(dev_dm, caps_and_copies)
{
	struct ibv_device_attr_ex ax;
	uint8_t in[300], out[300];
	struct ibv_dm *dm;

	cr_assert_eq(ibv_query_device_ex(t.ctx, NULL, &ax), 0);
	cr_expect_eq(ax.max_dm_size, DM_SIZE);
	dm = alloc_dm(5000, 0);
	cr_assert(dm, "ibv_alloc_dm: %s", strerror(errno));
	memset(out, 0xee, sizeof(out));
	cr_assert_eq(ibv_memcpy_from_dm(out, dm, 4096, 64), 0);
	for (int i = 0; i < 64; i++)
		cr_expect_eq(out[i], 0, "fresh device memory reads as zeros");
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 13 + 1);
	cr_assert_eq(ibv_memcpy_to_dm(dm, 4000, in, 300), 0);
	cr_assert_eq(ibv_memcpy_from_dm(out, dm, 4000, 300), 0);
	cr_expect_arr_eq(out, in, 300);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

Test(dev_dm, allocation_limits)
{
	struct ibv_dm *dm[33];
	int n = 0;

	errno = 0;
	cr_expect(!alloc_dm(DM_SIZE + 1, 0), "more than the device has");
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect(!alloc_dm(4096, 18), "an alignment beyond the area");
	cr_expect_eq(errno, ENOMEM, "%s", strerror(errno));
	dm[0] = alloc_dm(DM_SIZE, 0);
	cr_assert(dm[0], "the whole area: %s", strerror(errno));
	cr_expect(!alloc_dm(64, 0), "nothing left");
	cr_assert_eq(ibv_free_dm(dm[0]), 0);
	while (n < 33 && (dm[n] = alloc_dm(4096, 0)))
		n++;
	cr_expect_eq(n, 32, "32 pages");
	cr_assert_eq(ibv_free_dm(dm[5]), 0);
	dm[5] = alloc_dm(8192, 13);
	cr_expect(!dm[5], "no free 2-page run aligned to 8 KiB");
	dm[5] = alloc_dm(4096, 12);
	cr_expect(dm[5], "the freed page again");
	for (int i = 0; i < n; i++)
		if (dm[i])
			cr_expect_eq(ibv_free_dm(dm[i]), 0);
}

Test(dev_dm, reg_dm_mr_rules)
{
	struct ibv_dm *dm = alloc_dm(8192, 0);
	struct ibv_mr *mr;

	cr_assert(dm);
	errno = 0;
	cr_expect(!ibv_reg_dm_mr(t.pd, dm, 0, 4096, DM_ACC & ~IBV_ACCESS_ZERO_BASED));
	cr_expect_eq(errno, EINVAL, "DM MRs are zero-based");
	errno = 0;
	cr_expect(!ibv_reg_dm_mr(t.pd, dm, 4096, 4097, DM_ACC));
	cr_expect_eq(errno, EINVAL, "past the end of the DM");
	errno = 0;
	cr_expect(!ibv_reg_dm_mr(t.pd, dm, 0, 64, IBV_ACCESS_ZERO_BASED |
				 IBV_ACCESS_REMOTE_WRITE));
	cr_expect_eq(errno, EINVAL, "remote write without local write");
	mr = ibv_reg_dm_mr(t.pd, dm, 4096, 4096, DM_ACC);
	cr_assert(mr, "ibv_reg_dm_mr: %s", strerror(errno));
	cr_expect_eq(ibv_free_dm(dm), EBUSY, "an MR on it");
	cr_expect_eq(ibv_dealloc_pd(t.pd), EBUSY);
	cr_expect_neq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   IBV_ACCESS_LOCAL_WRITE), 0, "no re-registration");
	cr_expect_eq(ibv_dereg_mr(mr), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

/* the peer's WRITE, READ, fetch-and-add and compare-and-swap on DM */
Test(dev_dm, remote_access)
{
	struct ibv_dm *dm = alloc_dm(4096, 0);
	struct ibv_mr *mr;
	uint8_t back[256];
	uint64_t counter = 0;
	struct ibv_wc wc;

	cr_assert(dm);
	mr = ibv_reg_dm_mr(t.pd, dm, 0, 4096, DM_ACC);
	cr_assert(mr, "ibv_reg_dm_mr: %s", strerror(errno));
	for (int i = 0; i < 256; i++)
		t.buf[0][i] = (uint8_t)(i ^ 0x5a);

	struct ibv_sge s = { (uintptr_t)t.buf[0], 256, t.mr[0]->lkey };
	struct ibv_send_wr w = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = 512, .rkey = mr->rkey },
	};

	dt_post(t.qp[0], &w);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_memcpy_from_dm(back, dm, 512, 256), 0);
	cr_expect_arr_eq(back, t.buf[0], 256, "the WRITE landed in device memory");

	s.addr = (uintptr_t)(t.buf[0] + 1024);
	w.wr_id = 2;
	w.opcode = IBV_WR_RDMA_READ;
	dt_post(t.qp[0], &w);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_arr_eq(t.buf[0] + 1024, t.buf[0], 256, "and READ brings it back");

	counter = 40;
	cr_assert_eq(ibv_memcpy_to_dm(dm, 8, &counter, 8), 0);
	s.addr = (uintptr_t)(t.buf[0] + 2048);
	s.length = 8;
	w.wr_id = 3;
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.wr.atomic.remote_addr = 8;
	w.wr.atomic.rkey = mr->rkey;
	w.wr.atomic.compare_add = 2;
	dt_post(t.qp[0], &w);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	memcpy(&counter, t.buf[0] + 2048, 8);
	cr_expect_eq(counter, 40, "fetched");
	w.wr_id = 4;
	w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.wr.atomic.compare_add = 42;
	w.wr.atomic.swap = 7;
	dt_post(t.qp[0], &w);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_memcpy_from_dm(&counter, dm, 8, 8), 0);
	cr_expect_eq(counter, 7, "40 + 2 matched and was swapped");

	/* beyond the MR: the rkey check of the responder */
	w.wr_id = 5;
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr.rdma.remote_addr = 4096 - 8;
	w.wr.rdma.rkey = mr->rkey;
	s.length = 16;
	dt_post(t.qp[0], &w);
	wc = dt_poll1(t.cq[0]);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));

	cr_expect_eq(ibv_dereg_mr(mr), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}
