/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_odp.c - what the device does with on-demand paging MRs: pages are
 * taken as the process's page tables have them when the device touches
 * them - a range mapped only after the registration works, a page
 * replaced after it is seen new (no stale pin) - and a page not mapped at
 * the access ends the WQE with an error CQE: local protection on the
 * requester's side, remote access for the responder's target.  Implicit
 * ODP MRs reach any mapped address.  A UC QP has no page fault served
 * (uc_odp_caps is 0): through an ODP MR it fails even on mapped pages.
 * (The registration rules: tests/emu/kernel/test_odp.c.)
 */
#include <sys/mman.h>

#include "dev_test.h"

#define PAGE	4096u
#define LEN	(2 * PAGE)
#define ODP_ACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND)

static struct dt t;
static uint8_t *area;		/* LEN bytes of address space, mapped or not */
static struct ibv_mr *odp;	/* ODP_ACC over area */

static void setup_on(enum ibv_qp_type type)
{
	struct dt_qp_opts o = {
		.type = type, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
	};

	dt_setup_opts(&t, &o);
	area = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(area, MAP_FAILED);
	cr_assert_eq(munmap(area, LEN), 0);
	odp = ibv_reg_mr(t.pd, area, LEN, ODP_ACC);
	cr_assert(odp, "ODP MR over nothing mapped: %s", strerror(errno));
}

static void setup(void)
{
	setup_on(IBV_QPT_RC);
}

static void setup_uc(void)
{
	setup_on(IBV_QPT_UC);
}

static void teardown(void)
{
	cr_expect_eq(ibv_dereg_mr(odp), 0);
	munmap(area, LEN);
	dt_teardown(&t);
}

TestSuite(dev_odp, .init = setup, .fini = teardown, .timeout = 30);
TestSuite(dev_odp_uc, .init = setup_uc, .fini = teardown, .timeout = 30);

/* fresh pages at area, every byte `fill` */
static void map_area(uint8_t fill)
{
	dt_map_fresh(area, LEN, fill);
}

/* an RDMA WRITE of len bytes on qp[0]: its completion status */
static enum ibv_wc_status rdma_write(uint64_t from, uint32_t lkey, uint64_t to,
				     uint32_t rkey, uint32_t len)
{
	struct ibv_sge s = { from, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { to, rkey },
	};

	dt_post(t.qp[0], &wr);
	return dt_poll1(t.cq[0]).status;
}

Test(dev_odp, pages_mapped_after_registration_and_replaced)
{
	map_area(0xa1);
	cr_assert_eq(rdma_write((uintptr_t)area, odp->lkey, (uintptr_t)t.buf[1],
				t.mr[1]->rkey, LEN), IBV_WC_SUCCESS);
	dt_assert_bytes(t.buf[1], 0xa1, LEN);

	/* new pages at the same addresses: the device reads those, not the old ones */
	cr_assert_eq(munmap(area, LEN), 0);
	map_area(0xb2);
	cr_assert_eq(rdma_write((uintptr_t)area, odp->lkey, (uintptr_t)t.buf[1],
				t.mr[1]->rkey, LEN), IBV_WC_SUCCESS);
	dt_assert_bytes(t.buf[1], 0xb2, LEN);

	/* and as a target, through the rkey */
	memset(t.buf[0], 0xc3, LEN);
	cr_assert_eq(rdma_write((uintptr_t)t.buf[0], t.mr[0]->lkey, (uintptr_t)area,
				odp->rkey, LEN), IBV_WC_SUCCESS);
	dt_assert_bytes(area, 0xc3, LEN);
}

Test(dev_odp, unmapped_source_is_local_protection_error)
{
	map_area(0x11);
	cr_assert_eq(munmap(area + PAGE, PAGE), 0);
	cr_assert_eq(rdma_write((uintptr_t)area, odp->lkey, (uintptr_t)t.buf[1],
				t.mr[1]->rkey, LEN), IBV_WC_LOC_PROT_ERR);
}

Test(dev_odp, unmapped_target_is_remote_access_error)
{
	cr_assert_eq(rdma_write((uintptr_t)t.buf[0], t.mr[0]->lkey, (uintptr_t)area, odp->rkey, 64),
		     IBV_WC_REM_ACCESS_ERR);
}

/* an implicit MR: any mapped address, on either side, by SEND and WRITE */
Test(dev_odp, implicit_mr_reaches_any_mapped_address)
{
	struct ibv_mr *imr = ibv_reg_mr(t.pd, NULL, SIZE_MAX, ODP_ACC);
	uint8_t *src = malloc(3000), *dst = malloc(3000);
	struct ibv_sge s;
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_wc wc;

	cr_assert(imr && src && dst, "implicit ODP: %s", strerror(errno));
	memset(src, 0x5c, 3000);
	memset(dst, 0, 3000);
	s = (struct ibv_sge){ (uintptr_t)src, 3000, imr->lkey };
	dt_post_recv(t.qp[1], 3, dst, 3000, imr->lkey);
	dt_post(t.qp[0], &wr);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	wc = dt_poll1(t.cq[1]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.byte_len, 3000);
	dt_assert_bytes(dst, 0x5c, 3000);

	memset(src, 0x6d, 3000);
	cr_assert_eq(rdma_write((uintptr_t)src, imr->lkey, (uintptr_t)dst, imr->rkey, 3000),
		     IBV_WC_SUCCESS);
	dt_assert_bytes(dst, 0x6d, 3000);
	/* area is not mapped: the implicit rkey does not make it so */
	cr_assert_eq(rdma_write((uintptr_t)src, imr->lkey, (uintptr_t)area, imr->rkey, 64),
		     IBV_WC_REM_ACCESS_ERR);
	free(src);
	free(dst);
	cr_assert_eq(ibv_dereg_mr(imr), 0);
}

/*
 * UC: the pages are mapped and the same WRITE succeeds on RC (above), but
 * a ConnectX serves no page fault for UC: the gather through the ODP lkey
 * ends as a failed fault, a local protection error.
 */
Test(dev_odp_uc, odp_source_is_local_protection_error)
{
	map_area(0x21);
	cr_assert_eq(rdma_write((uintptr_t)area, odp->lkey, (uintptr_t)t.buf[1],
				t.mr[1]->rkey, LEN), IBV_WC_LOC_PROT_ERR);
	dt_assert_bytes(t.buf[1], 0, LEN);
}

/* as a target: UC acknowledges nothing, the WRITE is dropped at the responder */
Test(dev_odp_uc, odp_target_is_dropped)
{
	map_area(0);
	memset(t.buf[0], 0x32, LEN);
	cr_assert_eq(rdma_write((uintptr_t)t.buf[0], t.mr[0]->lkey, (uintptr_t)area,
				odp->rkey, LEN), IBV_WC_SUCCESS);
	usleep(100 * 1000);
	dt_assert_bytes(area, 0, LEN);
	/* a plain MR still takes the next one: the QP is not broken */
	cr_assert_eq(rdma_write((uintptr_t)t.buf[0], t.mr[0]->lkey, (uintptr_t)t.buf[1],
				t.mr[1]->rkey, 64), IBV_WC_SUCCESS);
	for (int i = 0; i < 200 && t.buf[1][63] != 0x32; i++)
		usleep(5000);
	dt_assert_bytes(t.buf[1], 0x32, 64);
}

/* a receive into an ODP MR: the receive completes with a local protection error */
Test(dev_odp_uc, odp_receive_is_local_protection_error)
{
	struct ibv_sge s = { (uintptr_t)t.buf[0], 64, t.mr[0]->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 4, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	map_area(0);
	memset(t.buf[0], 0x43, 64);
	dt_post_recv(t.qp[1], 5, area, 64, odp->lkey);
	dt_post(t.qp[0], &wr);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll1(t.cq[1]).status, IBV_WC_LOC_PROT_ERR);
	dt_assert_bytes(area, 0, 64);
}
