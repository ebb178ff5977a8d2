/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * odp.c - on-demand paging: the ODP caps, the registration of an MR with
 * IBV_ACCESS_ON_DEMAND and ibv_advise_mr(), as the kernel answers them
 * (drivers/infiniband/core/umem_odp.c, uverbs_std_types_mr.c;
 * drivers/infiniband/hw/mlx5/mr.c create_user_odp_mr(), odp.c
 * mlx5_ib_internal_fill_odp_caps() and mlx5_ib_advise_mr_prefetch()).
 *
 * An ODP MR pins nothing and charges nothing to RLIMIT_MEMLOCK: the range
 * need not even be mapped when it is registered.  The device model reaches
 * every MR's pages through the process's page tables when it touches them
 * (device/guard.c), which is what an ODP MR is on hardware: a page mapped,
 * unmapped or replaced after the registration is seen as it is at the
 * access, and one that is not mapped then ends the WQE with the error CQE
 * a failed page fault gives (local protection error on the requester,
 * remote access error for the responder's target).  An implicit ODP MR
 * (address 0, length SIZE_MAX) covers the whole address space.
 */
#include <stdlib.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "internal.h"

/*
 * What mlx5_ib_internal_fill_odp_caps() derives from a ConnectX-6's ODP
 * caps (pg, the per-transport cap sets, and null_mkey with
 * umr_extended_translation_offset for implicit ODP): RC every operation
 * and SRQ receives, UD sends only, XRC all but receives into a plain RQ
 * (an XRC target has none), UC nothing.  DC as XRC: a DCT receives
 * through its SRQ only (mlx5_core's handle_hca_cap_odp() turns every DC
 * cap the firmware offers on).
 */
#define ODP_XRC	(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE |		\
		 IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC |		\
		 IBV_ODP_SUPPORT_SRQ_RECV)
#define ODP_RC	(ODP_XRC | IBV_ODP_SUPPORT_RECV)
#define ODP_UD	IBV_ODP_SUPPORT_SEND
#define ODP_DC	ODP_XRC

const uint32_t emu_odp_transport_caps[EMU_ODP_TRANSPORTS] = {
	[EMU_ODP_RC] = ODP_RC, [EMU_ODP_UC] = 0, [EMU_ODP_UD] = ODP_UD,
	[EMU_ODP_XRC] = ODP_XRC, [EMU_ODP_DC] = ODP_DC,
};

/*
 * The top of an implicit MR: mlx5_imr_ksm_entries children of
 * MLX5_IMR_MTT_SIZE bytes, TASK_SIZE rounded up to a power of two - 2^47
 * on x86-64 and on aarch64 with 48-bit addresses.
 */
#define ODP_IMPLICIT_END	(1ull << 47)

void emu_odp_caps(struct ib_uverbs_ex_query_device_resp *r)
{
	r->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	r->odp_caps.per_transport_caps.rc_odp_caps = emu_odp_transport_caps[EMU_ODP_RC];
	r->odp_caps.per_transport_caps.uc_odp_caps = emu_odp_transport_caps[EMU_ODP_UC];
	r->odp_caps.per_transport_caps.ud_odp_caps = emu_odp_transport_caps[EMU_ODP_UD];
	r->xrc_odp_caps = emu_odp_transport_caps[EMU_ODP_XRC];
}

bool emu_odp_implicit(uint64_t start, uint64_t length)
{
	return !start && length == UINT64_MAX;
}

/*
 * create_user_odp_mr(): address 0 and length U64_MAX ask for an implicit
 * MR, which takes an I/O virtual address of 0 only and no huge pages
 * (ib_umem_odp_alloc_implicit()); otherwise ib_init_umem_odp() takes any
 * range of whole pages that neither wraps nor is empty (its interval
 * notifier refuses both with EOVERFLOW), mapped or not.
 */
int emu_odp_range_check(uint64_t start, uint64_t length, uint64_t iova, uint32_t access)
{
	uint64_t psz = (uint64_t)sysconf(_SC_PAGESIZE), end;

	if (emu_odp_implicit(start, length))
		return iova || (access & IBV_ACCESS_HUGETLB) ? EINVAL : 0;
	if (__builtin_add_overflow(start, length, &end))
		return EOVERFLOW;
	end = (end + psz - 1) & ~(psz - 1);
	if (end < psz || end == (start & ~(psz - 1)))
		return EOVERFLOW;
	return 0;
}

/*
 * get_prefetchable_mr(): the lkey must name an ODP MR (a plain MR has no
 * entry in the ODP key table: ENOENT; a memory window is no MR: EINVAL)
 * of this PD (EPERM), writable for PREFETCH_WRITE (EPERM).
 */
static int prefetchable_mr(const struct emu_pd *pd, uint32_t advice, uint32_t lkey,
			   struct emu_mr **out)
{
	struct emu_mr *mr = emu_mr_by_lkey_locked(lkey);

	if (!mr) {
		if (emu_mkey_lookup_locked(lkey, EMU_OBJ_MW))
			return EINVAL;
		return ENOENT;
	}
	if (!(mr->access & IBV_ACCESS_ON_DEMAND))
		return ENOENT;
	if (mr->pd != pd)
		return EPERM;
	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    !(mr->access & EMU_ACCESS_WRITABLE))
		return EPERM;
	*out = mr;
	return 0;
}

/*
 * pagefault_mr(): the range must lie in the MR (an explicit one up to the
 * end of its last page, an implicit one below ODP_IMPLICIT_END), then its
 * pages are faulted in - EFAULT where one is not mapped, or (PREFETCH_WRITE)
 * not writable.  PREFETCH_NO_FAULT only takes what is already present.
 */
static int prefetch_range(const struct emu_mr *mr, uint32_t advice, uint64_t va, uint32_t len)
{
	uint64_t psz = (uint64_t)sysconf(_SC_PAGESIZE), addr, end;

	if (emu_odp_implicit(mr->addr, mr->length)) {
		if (va >= ODP_IMPLICIT_END || ODP_IMPLICIT_END - va < len)
			return EFAULT;
		addr = va;
	} else {
		if (__builtin_add_overflow(va - mr->iova, mr->addr, &addr))
			return EFAULT;
		end = (mr->addr + mr->length + psz - 1) & ~(psz - 1);
		if (addr >= end || end - addr < len)
			return EFAULT;
	}
	if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return 0;
	return emu_umem_check(addr, len, advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE);
}

/*
 * UVERBS_METHOD_ADVISE_MR: the advice a PREFETCH kind (EOPNOTSUPP), the
 * flags FLUSH at most (EINVAL), the list whole ib_uverbs_sge entries
 * (EINVAL).  With FLUSH the prefetch is done before the call returns and
 * its errors are the call's; without, only the keys are checked before
 * the call returns and the faulting is left to a worker whose errors
 * nobody sees - here there is nothing to do later.
 */
static int advise_mr(struct emu_ioc *b)
{
	struct ib_uverbs_sge *sge;
	struct emu_mr *mr;
	struct emu_pd *pd;
	uint64_t advice, flags;
	size_t len;
	int ret;

	pd = emu_ioc_get_obj(b, UVERBS_ATTR_ADVISE_MR_PD_HANDLE, EMU_OBJ_PD, &ret);
	if (!pd)
		return ret;
	ret = emu_ioc_get_const(b, UVERBS_ATTR_ADVISE_MR_ADVICE, UINT32_MAX, &advice);
	if (ret)
		return ret;
	ret = emu_ioc_get_flags(b, UVERBS_ATTR_ADVISE_MR_FLAGS, &flags);
	if (ret)
		return ret;
	if (flags & ~(uint64_t)IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return EINVAL;		/* uverbs_get_flags32() */
	if (emu_ioc_get(b, UVERBS_ATTR_ADVISE_MR_SGE_LIST)->len % sizeof(*sge))
		return EINVAL;		/* uverbs_attr_ptr_get_array_size() */
	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;	/* mlx5_ib_advise_mr() */
	ret = emu_ioc_dup(b, UVERBS_ATTR_ADVISE_MR_SGE_LIST, (void **)&sge, &len);
	if (ret)
		return ret;
	for (size_t i = 0; !ret && i < len / sizeof(*sge); i++) {
		ret = prefetchable_mr(pd, (uint32_t)advice, sge[i].lkey, &mr);
		if (!ret && (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
			ret = prefetch_range(mr, (uint32_t)advice, sge[i].addr, sge[i].length);
	}
	free(sge);
	return ret;
}

#define MAND		EMU_IOC_MANDATORY

const struct emu_ioc_method emu_ioc_odp_methods[] = {
	{ UVERBS_OBJECT_MR, UVERBS_METHOD_ADVISE_MR, advise_mr, false, {
		{ UVERBS_ATTR_ADVISE_MR_PD_HANDLE, EMU_IOC_IDR, MAND, 0, 0 },
		/* CONST_IN, FLAGS_IN: inline u32 or u64 */
		{ UVERBS_ATTR_ADVISE_MR_ADVICE, EMU_IOC_PTR_IN, MAND, 0, 8 },
		{ UVERBS_ATTR_ADVISE_MR_FLAGS, EMU_IOC_PTR_IN, MAND, 4, 8 },
		/* UVERBS_ATTR_MIN_SIZE(sizeof(struct ib_uverbs_sge)) */
		{ UVERBS_ATTR_ADVISE_MR_SGE_LIST, EMU_IOC_PTR_IN, MAND,
		  sizeof(struct ib_uverbs_sge), UINT16_MAX } } },
};

const size_t emu_ioc_odp_methods_count = EMU_ARRAY_SIZE(emu_ioc_odp_methods);
