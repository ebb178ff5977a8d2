/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_odp.c - on-demand paging in the fake kernel: the caps
 * ibv_query_device_ex() and mlx5dv_query_device() (DC's) report, the
 * registration of explicit and implicit ODP MRs, and ibv_advise_mr() with
 * the errnos of the kernel's uverbs_std_types_mr.c and mlx5 odp.c.  (What
 * the device does with an ODP MR whose pages come and go:
 * tests/emu/device/test_odp.c; on DC: tests/emu/device/test_dc.c.)
 */
#include <stdint.h>
#include <sys/mman.h>

#include "emu_test.h"

#define PAGE	4096u

ET_CTX_PD_SUITE(odp);

/*
 * a ConnectX-6's caps, as mlx5_ib_internal_fill_odp_caps() reports them,
 * and DC's as libmlx5 reads them from the ODP caps page: all but plain
 * receives, as XRC (a DCT has its SRQ only)
 */
Test(odp, caps)
{
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS };
	struct ibv_device_attr_ex a;
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			    IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			    IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &a), 0);
	cr_assert_eq(a.odp_caps.general_caps, IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	cr_assert_eq(a.odp_caps.per_transport_caps.rc_odp_caps, rc);
	cr_assert_eq(a.odp_caps.per_transport_caps.uc_odp_caps, 0);
	cr_assert_eq(a.odp_caps.per_transport_caps.ud_odp_caps, IBV_ODP_SUPPORT_SEND);
	cr_assert_eq(a.xrc_odp_caps, rc & ~(uint32_t)IBV_ODP_SUPPORT_RECV);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert(dv.comp_mask & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS);
	cr_assert_eq(dv.dc_odp_caps, rc & ~(uint32_t)IBV_ODP_SUPPORT_RECV);
}

/*
 * Nothing is pinned: a range that no page backs registers, and its keys
 * work later. The range stays reserved PROT_NONE, not unmapped: in a
 * sanitizer's process an unmapped range is soon mapped again by someone
 * else, and the registration without ODP below then succeeded.
 */
Test(odp, explicit_mr_needs_no_mapping)
{
	uint8_t *p = mmap(NULL, 4 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	cr_assert_neq(p, MAP_FAILED);
	mr = ibv_reg_mr(pd, p, 4 * PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_ON_DEMAND);
	cr_assert(mr, "reg_mr ODP: %s", strerror(errno));
	cr_assert_eq(mr->addr, (void *)p);
	cr_assert_eq(mr->length, 4 * PAGE);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	/* the same range without ODP must be pinned: EFAULT */
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 4 * PAGE, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(munmap(p, 4 * PAGE), 0);
}

/* ib_init_umem_odp(): an empty or wrapping range is EOVERFLOW */
Test(odp, explicit_range_rules)
{
	static uint8_t buf[PAGE] __attribute__((aligned(PAGE)));

	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EOVERFLOW);
	errno = 0;
	cr_assert_null(ibv_reg_mr_iova(pd, (void *)(UINTPTR_MAX & ~(uintptr_t)(PAGE - 1)),
				       2 * PAGE, 0, IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EOVERFLOW);
	/* IB_ACCESS_SUPPORTED has the huge-page hint, with ODP or without */
	for (int odp = 0; odp < 2; odp++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_HUGETLB |
					       (odp ? IBV_ACCESS_ON_DEMAND : 0));

		cr_assert(mr, "IBV_ACCESS_HUGETLB: %s", strerror(errno));
		cr_assert_eq(ibv_dereg_mr(mr), 0);
	}
	/* the access rules of any MR still come first */
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EINVAL);
}

/* create_user_odp_mr(): address 0, SIZE_MAX bytes, I/O address 0 */
Test(odp, implicit_mr)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, NULL, SIZE_MAX,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);

	cr_assert(mr, "implicit ODP: %s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr_iova(pd, NULL, SIZE_MAX, PAGE,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
	cr_assert_eq(errno, EINVAL, "an implicit MR takes I/O address 0 only");
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB));
	cr_assert_eq(errno, EINVAL, "ib_umem_odp_alloc_implicit(): no huge pages");
	/* without ODP the same is a wrapping range */
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EINVAL);
}

static int advise(struct ibv_pd *on, enum ibv_advise_mr_advice advice, uint32_t flags,
		  void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge s = { (uintptr_t)addr, len, lkey };

	return ibv_advise_mr(on, advice, flags, &s, 1);
}

/* get_prefetchable_mr(): which keys may be prefetched */
Test(odp, advise_keys)
{
	static uint8_t buf[2 * PAGE] __attribute__((aligned(PAGE)));
	struct ibv_mr *odp = ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_ON_DEMAND);
	struct ibv_mr *ro = ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_ON_DEMAND);
	struct ibv_mr *plain = ibv_reg_mr(pd, buf + PAGE, PAGE, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	const uint32_t flush = IBV_ADVISE_MR_FLAG_FLUSH;

	cr_assert(odp && ro && plain && pd2);
	for (uint32_t f = 0; f <= flush; f += flush) {
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, f, buf, PAGE, odp->lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, f, buf, PAGE,
				    odp->lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, f, buf, PAGE,
				    odp->lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, f, buf, PAGE, ro->lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, f, buf, PAGE,
				    ro->lkey), EPERM, "write prefetch of a read-only MR");
		cr_assert_eq(advise(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH, f, buf, PAGE, odp->lkey),
			     EPERM, "another PD");
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, f, buf + PAGE, PAGE,
				    plain->lkey), ENOENT, "not an ODP MR");
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, f, buf, PAGE,
				    odp->lkey ^ 0xff00), ENOENT, "no such key");
	}
	cr_assert_eq(ibv_dereg_mr(odp), 0);
	cr_assert_eq(ibv_dereg_mr(ro), 0);
	cr_assert_eq(ibv_dereg_mr(plain), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
}

/* the method's own checks: flags, advice, the list */
Test(odp, advise_arguments)
{
	static uint8_t buf[PAGE] __attribute__((aligned(PAGE)));
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_ON_DEMAND);
	struct ibv_sge s[2] = { { (uintptr_t)buf, 64, 0 }, { (uintptr_t)buf + 64, 64, 0 } };

	cr_assert(mr);
	s[0].lkey = s[1].lkey = mr->lkey;
	cr_assert_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 2, s, 1), EINVAL,
		     "a flag besides FLUSH");
	cr_assert_eq(ibv_advise_mr(pd, (enum ibv_advise_mr_advice)3, 0, s, 1), EOPNOTSUPP,
		     "no such advice");
	cr_assert_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, s, 0), EINVAL,
		     "an empty list");
	cr_assert_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH,
				   s, 2), 0);
	/* an entry after a bad one is not reached; the bad one fails the call */
	s[0].lkey ^= 0xff00;
	cr_assert_eq(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, s, 2), ENOENT);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/*
 * pagefault_mr(): with FLUSH the range must lie in the MR and be mapped
 * (writable for PREFETCH_WRITE), else EFAULT; NO_FAULT takes what is there;
 * without FLUSH the faulting is left to a worker and the call succeeds.
 */
Test(odp, advise_faults)
{
	uint8_t *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const uint32_t flush = IBV_ADVISE_MR_FLAG_FLUSH;
	struct ibv_mr *mr, *imr;

	cr_assert_neq(p, MAP_FAILED);
	mr = ibv_reg_mr(pd, p, 3 * PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	cr_assert(mr && imr);
	cr_assert_eq(munmap(p + PAGE, PAGE), 0);
	cr_assert_eq(mprotect(p + 2 * PAGE, PAGE, PROT_READ), 0);

	for (int i = 0; i < 2; i++) {
		uint32_t lkey = i ? imr->lkey : mr->lkey;

		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, flush, p, PAGE,
				    lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, flush, p + PAGE, PAGE, lkey),
			     EFAULT, "a page not mapped");
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, p + PAGE, PAGE, lkey), 0,
			     "faulted later, by a worker");
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, flush, p + PAGE,
				    PAGE, lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, flush, p + 2 * PAGE, PAGE,
				    lkey), 0);
		cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, flush, p + 2 * PAGE,
				    PAGE, lkey), EFAULT, "a read-only page written");
	}
	/* outside the explicit MR; above the implicit one's top */
	cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, flush, p + 3 * PAGE, PAGE,
			    mr->lkey), EFAULT);
	cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, flush, p - PAGE, PAGE,
			    mr->lkey), EFAULT);
	cr_assert_eq(advise(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, flush,
			    (void *)(1ull << 47), PAGE, imr->lkey), EFAULT);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dereg_mr(imr), 0);
	munmap(p, 3 * PAGE);
}
