/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_memlock.c - pinned memory against RLIMIT_MEMLOCK, as the kernel's
 * ib_umem_get() counts it: MRs and the rings of CQs, QPs and SRQs,
 * released when they go.  The tests run as root, whose CAP_IPC_LOCK lifts
 * the limit, so each (a process of its own) first drops that capability
 * from its effective set and checks that it is gone.
 */
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "emu_test.h"

#define PAGE	4096u

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static char *area;		/* 64 MiB, mapped, never touched */

static bool ipc_lock_effective(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	cr_assert_eq(syscall(SYS_capget, &h, d), 0, "capget: %s", strerror(errno));
	return d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK);
}

static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	cr_assert_eq(syscall(SYS_capget, &h, d), 0);
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	cr_assert_eq(syscall(SYS_capset, &h, d), 0, "capset: %s", strerror(errno));
	cr_assert_not(ipc_lock_effective(), "CAP_IPC_LOCK still effective");
}

static void set_memlock(rlim_t bytes)
{
	struct rlimit rl;

	cr_assert_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	cr_assert(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= bytes);
	rl.rlim_cur = bytes;
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0, "%s", strerror(errno));
}

static void setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cr_assert(pd);
	area = mmap(NULL, 64u << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cr_assert_neq(area, MAP_FAILED);
}

static void teardown(void)
{
	munmap(area, 64u << 20);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* ibv_reg_mr() of pages at area + off: 0 or the errno */
static int reg(struct ibv_mr **mr, size_t off, size_t pages)
{
	errno = 0;
	*mr = ibv_reg_mr(pd, area + off, pages * PAGE, IBV_ACCESS_LOCAL_WRITE);
	return *mr ? 0 : errno;
}

TestSuite(memlock, .init = setup, .fini = teardown);

Test(memlock, mrs_count_against_the_limit)
{
	struct ibv_mr *mr, *big, *one;

	drop_ipc_lock();
	set_memlock(16 * PAGE);
	cr_expect_eq(reg(&mr, 0, 16384), ENOMEM, "64 MiB under a 64 KiB limit");
	cr_expect_eq(reg(&mr, 0, 256), ENOMEM, "1 MiB");
	cr_assert_eq(reg(&big, 0, 16), 0, "exactly the limit");
	cr_expect_eq(reg(&mr, 16 * PAGE, 1), ENOMEM, "one page past it");
	/* an unaligned page counts twice: the pages it touches */
	cr_assert_eq(ibv_dereg_mr(big), 0);
	cr_assert_eq(reg(&big, 0, 15), 0);
	errno = 0;
	cr_expect_null(ibv_reg_mr(pd, area + 20 * PAGE + 1, PAGE, IBV_ACCESS_LOCAL_WRITE));
	cr_expect_eq(errno, ENOMEM, "two pages");
	cr_assert_eq(reg(&one, 20 * PAGE, 1), 0, "one page");
	cr_assert_eq(ibv_dereg_mr(one), 0);

	/* a new range is pinned before the old one goes */
	errno = 0;
	cr_expect_eq(ibv_rereg_mr(big, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  area + 32 * PAGE, 2 * PAGE, 0), IBV_REREG_MR_ERR_CMD);
	cr_expect_eq(errno, ENOMEM, "15 + 2 pages");
	cr_assert_eq(ibv_rereg_mr(big, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  area + 32 * PAGE, PAGE, 0), 0, "%s", strerror(errno));
	/* the old 15 are free now */
	cr_assert_eq(reg(&mr, 0, 15), 0);
	cr_expect_eq(reg(&one, 20 * PAGE, 1), ENOMEM);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dereg_mr(big), 0);
	cr_assert_eq(reg(&mr, 0, 16), 0, "all released");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

Test(memlock, a_limit_of_zero_is_eperm)
{
	struct ibv_mr *mr;

	drop_ipc_lock();
	set_memlock(0);
	cr_expect_eq(reg(&mr, 0, 1), EPERM, "can_do_mlock()");
}

/* an ODP MR pins nothing (ib_umem_odp_get()): no limit applies, nothing is charged */
Test(memlock, odp_mrs_are_not_charged)
{
	struct ibv_mr *odp, *imr, *mr;

	drop_ipc_lock();
	set_memlock(0);
	odp = ibv_reg_mr(pd, area, 64u << 20, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	cr_assert(odp, "64 MiB of ODP under a limit of 0: %s", strerror(errno));
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	cr_assert(imr, "implicit ODP: %s", strerror(errno));
	set_memlock(16 * PAGE);
	cr_assert_eq(reg(&mr, 0, 16), 0, "the whole limit is still free");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dereg_mr(imr), 0);
	cr_assert_eq(ibv_dereg_mr(odp), 0);
}

/* CQ, QP and SRQ rings, and the doorbell page, are pinned as MRs are */
Test(memlock, queues_count_against_the_limit)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;

	drop_ipc_lock();
	set_memlock(16 * PAGE);
	cr_assert_eq(reg(&mr, 0, 15), 0);
	errno = 0;
	cr_expect_null(ibv_create_cq(ctx, 1, NULL, NULL, 0));
	cr_expect_eq(errno, ENOMEM, "a ring and a doorbell page past the limit");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	cr_assert(cq, "%s", strerror(errno));

	/* the CQ holds 2 pages: 14 left */
	cr_assert_eq(reg(&mr, 0, 14), 0);
	qa.send_cq = qa.recv_cq = cq;
	errno = 0;
	cr_expect_null(ibv_create_qp(pd, &qa));
	cr_expect_eq(errno, ENOMEM, "the QP's ring");
	errno = 0;
	cr_expect_null(ibv_create_srq(pd, &sa));
	cr_expect_eq(errno, ENOMEM, "the SRQ's ring");
	cr_assert_eq(ibv_dereg_mr(mr), 0);

	qp = ibv_create_qp(pd, &qa);
	cr_assert(qp, "%s", strerror(errno));
	srq = ibv_create_srq(pd, &sa);
	cr_assert(srq, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(reg(&mr, 0, 16), 0, "all released");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/* capable(CAP_IPC_LOCK): no limit at all */
Test(memlock, cap_ipc_lock_lifts_the_limit)
{
	struct ibv_mr *mr;

	if (!ipc_lock_effective())
		cr_skip_test("CAP_IPC_LOCK not effective (not root)");
	set_memlock(16 * PAGE);
	cr_assert_eq(reg(&mr, 0, 16384), 0, "64 MiB");
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}
