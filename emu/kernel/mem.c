/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mem.c - protection domains, memory regions and memory windows.
 *
 * MRs and MWs share one mkey space, as on mlx5: key = index << 8 | variant.
 * An MR's lkey and rkey are the same mkey (mlx5 answers so); every MR and
 * MW gets its own index.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/mlx5-abi.h>

#include "internal.h"

/* ---- PD ---------------------------------------------------------------- */

int emu_cmd_alloc_pd(struct emu_cmd *c)
{
	struct ib_uverbs_alloc_pd_resp *resp = c->out;
	struct mlx5_ib_alloc_pd_resp drv;
	struct emu_pd *pd;
	int ret;

	pd = emu_obj_alloc(c->ctx, EMU_OBJ_PD, sizeof(*pd), 0);
	if (!pd)
		return ENOMEM;
	ret = emu_num_alloc_locked(EMU_NUM_PD, pd, &pd->pdn);
	if (ret) {
		emu_obj_free_locked(&pd->obj);
		return ret;
	}
	resp->pd_handle = pd->obj.handle;
	drv.pdn = pd->pdn;
	memcpy(c->drv_out, &drv, c->drv_out_len < sizeof(drv) ? c->drv_out_len : sizeof(drv));
	return 0;
}

void emu_pd_destroy_locked(struct emu_pd *pd)
{
	emu_num_free_locked(EMU_NUM_PD, pd->pdn);
	emu_obj_free_locked(&pd->obj);
}

int emu_cmd_dealloc_pd(struct emu_cmd *c)
{
	const struct ib_uverbs_dealloc_pd *cmd = c->in;
	struct emu_pd *pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);

	if (!pd)
		return EINVAL;
	/* a PD with MRs, MWs, QPs, SRQs or AHs on it stays: EBUSY */
	if (pd->obj.usecnt)
		return EBUSY;
	emu_pd_destroy_locked(pd);
	return 0;
}

/* ---- mkeys -------------------------------------------------------------- */

static uint8_t next_variant = 0x5a;

static int mkey_alloc(void *obj, uint32_t *key)
{
	uint32_t idx;
	int ret = emu_num_alloc_locked(EMU_NUM_MKEY, obj, &idx);

	if (ret)
		return ret;
	/* a fresh variant byte per key, so a stale key does not alias a new one */
	*key = idx << 8 | next_variant++;
	return 0;
}

/* ---- MR ---------------------------------------------------------------- */

#define EMU_ACCESS_SUPPORTED						\
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |		\
	 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |			\
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING)

/* Like the kernel's ib_emu_mr_access_check(). */
int emu_mr_access_check(uint32_t access)
{
	if (access & ~(EMU_ACCESS_SUPPORTED | IBV_ACCESS_ON_DEMAND))
		return EINVAL;
	/* remote write or atomic needs local write (IB spec 10.6.3.1) */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

/*
 * The range of a registration: EINVAL when empty or wrapping; then pinned
 * as ib_umem_get() pins it: within RLIMIT_MEMLOCK (emu_umem_get()), every
 * page mapped and readable, and writable (FOLL_WRITE) when the access
 * flags let anything write it (EMU_ACCESS_WRITABLE);
 * EFAULT otherwise.  *pages: what to charge the MR.  An ODP range is
 * neither pinned nor charged (odp.c).
 */
static int check_range(uint64_t start, uint64_t length, uint64_t iova, uint32_t access,
		       uint64_t *pages)
{
	*pages = 0;
	if (access & IBV_ACCESS_ON_DEMAND)
		return emu_odp_range_check(start, length, iova, access);
	if (!length || start + length < start)
		return EINVAL;
	return emu_umem_get(0, start, length, access & EMU_ACCESS_WRITABLE, pages);
}

int emu_mr_create_locked(struct emu_ctx *ctx, struct emu_pd *pd, uint64_t addr,
			 uint64_t iova, uint64_t length, uint32_t access,
			 struct emu_mr **out)
{
	struct emu_mr *mr = emu_obj_alloc(ctx, EMU_OBJ_MR, sizeof(*mr), 0);
	uint32_t key;
	int ret;

	if (!mr)
		return ENOMEM;
	ret = mkey_alloc(mr, &key);
	if (ret) {
		emu_obj_free_locked(&mr->obj);
		return ret;
	}
	mr->pd = pd;
	mr->lkey = key;
	mr->rkey = key;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	pd->obj.usecnt++;
	*out = mr;
	return 0;
}

int emu_cmd_reg_mr(struct emu_cmd *c)
{
	const struct ib_uverbs_reg_mr *cmd = c->in;
	struct ib_uverbs_reg_mr_resp *resp = c->out;
	long psz = sysconf(_SC_PAGESIZE);
	struct emu_pd *pd;
	struct emu_mr *mr;
	uint64_t pages;
	int ret;

	/* start and the I/O virtual address must share the page offset */
	if ((cmd->start & (uint64_t)(psz - 1)) != (cmd->hca_va & (uint64_t)(psz - 1)))
		return EINVAL;
	ret = emu_mr_access_check(cmd->access_flags);
	if (ret)
		return ret;
	pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);
	if (!pd)
		return EINVAL;
	ret = check_range(cmd->start, cmd->length, cmd->hca_va, cmd->access_flags, &pages);
	if (ret)
		return ret;

	ret = emu_mr_create_locked(c->ctx, pd, cmd->start, cmd->hca_va, cmd->length,
				   cmd->access_flags, &mr);
	if (ret)
		return ret;
	emu_pin_charge(&mr->pin, pages);
	resp->mr_handle = mr->obj.handle;
	resp->lkey = mr->lkey;
	resp->rkey = mr->rkey;
	return 0;
}

/*
 * ibv_rereg_mr(): a new range, PD or access rights for a registered MR, as
 * the kernel checks them. The keys stay (the kernel may keep or replace
 * them; libibverbs takes what the response says). Every check comes before
 * the first change, so a refused call changes nothing. An MR with windows
 * bound to it is EBUSY: moving it would leave them pointing at the old
 * range.
 */
int emu_cmd_rereg_mr(struct emu_cmd *c)
{
	const struct ib_uverbs_rereg_mr *cmd = c->in;
	struct ib_uverbs_rereg_mr_resp *resp = c->out;
	const uint32_t all = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			     IBV_REREG_MR_CHANGE_ACCESS;
	long psz = sysconf(_SC_PAGESIZE);
	struct emu_mr *mr;
	struct emu_pd *pd = NULL;
	uint32_t access;
	uint64_t pages = 0;
	int ret;

	if (!cmd->flags)
		return EINVAL;
	if (cmd->flags & ~all)
		return EOPNOTSUPP;	/* as ib_uverbs_rereg_mr() */
	if ((cmd->flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    (cmd->start & (uint64_t)(psz - 1)) != (cmd->hca_va & (uint64_t)(psz - 1)))
		return EINVAL;
	mr = emu_obj_get_locked(c->ctx, cmd->mr_handle, EMU_OBJ_MR);
	if (!mr)
		return EINVAL;
	if (mr->dm)
		return EINVAL;	/* ib_uverbs_rereg_mr(): not an MR on device memory */
	access = cmd->flags & IBV_REREG_MR_CHANGE_ACCESS ? cmd->access_flags : mr->access;
	ret = emu_mr_access_check(access);
	if (ret)
		return ret;
	if (cmd->flags & IBV_REREG_MR_CHANGE_PD) {
		pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);
		if (!pd)
			return EINVAL;
	}
	/*
	 * The kernel pins a new range while the old one is still pinned
	 * (mlx5_ib_rereg_user_mr()), then lets the old one go; new access
	 * rights alone are checked against the range it has.
	 */
	if (cmd->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		ret = check_range(cmd->start, cmd->length, cmd->hca_va, access, &pages);
		if (ret)
			return ret;
	} else if (cmd->flags & IBV_REREG_MR_CHANGE_ACCESS && !(access & IBV_ACCESS_ON_DEMAND)) {
		ret = emu_umem_check(mr->addr, mr->length, access & EMU_ACCESS_WRITABLE);
		if (ret)
			return ret;
	}
	if (mr->mw_bound)
		return EBUSY;

	/* the device forgets the old translation as after a deregistration */
	emu_dev_mr_dereg(mr);
	if (cmd->flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		emu_pin_release(&mr->pin);
		emu_pin_charge(&mr->pin, pages);
		mr->addr = cmd->start;
		mr->iova = cmd->hca_va;
		mr->length = cmd->length;
	}
	if (pd) {
		mr->pd->obj.usecnt--;
		pd->obj.usecnt++;
		mr->pd = pd;
	}
	mr->access = access;
	resp->lkey = mr->lkey;
	resp->rkey = mr->rkey;
	return 0;
}

void emu_mr_destroy_locked(struct emu_mr *mr)
{
	emu_dev_mr_dereg(mr);
	emu_pin_release(&mr->pin);
	mr->pd->obj.usecnt--;
	if (mr->dm)
		mr->dm->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_MKEY, mr->lkey >> 8);
	emu_obj_free_locked(&mr->obj);
}

int emu_cmd_dereg_mr(struct emu_cmd *c)
{
	const struct ib_uverbs_dereg_mr *cmd = c->in;
	struct emu_mr *mr = emu_obj_get_locked(c->ctx, cmd->mr_handle, EMU_OBJ_MR);

	if (!mr)
		return EINVAL;
	/* a memory window bound to it keeps the MR alive */
	if (mr->mw_bound)
		return EBUSY;
	emu_mr_destroy_locked(mr);
	return 0;
}

/* ---- MW ---------------------------------------------------------------- */

int emu_cmd_alloc_mw(struct emu_cmd *c)
{
	const struct ib_uverbs_alloc_mw *cmd = c->in;
	struct ib_uverbs_alloc_mw_resp *resp = c->out;
	struct mlx5_ib_alloc_mw req = {};
	struct emu_pd *pd;
	struct emu_mw *mw;
	uint32_t key;
	int ret;

	memcpy(&req, c->drv_in, c->drv_in_len < sizeof(req) ? c->drv_in_len : sizeof(req));
	/* mlx5 rejects driver fields it does not know */
	if (req.comp_mask || req.reserved1 || req.reserved2)
		return EOPNOTSUPP;
	for (size_t i = sizeof(req); i < c->drv_in_len; i++)
		if (((const uint8_t *)c->drv_in)[i])
			return EOPNOTSUPP;
	if (cmd->mw_type != IBV_MW_TYPE_1 && cmd->mw_type != IBV_MW_TYPE_2)
		return EINVAL;
	pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);
	if (!pd)
		return EINVAL;

	mw = emu_obj_alloc(c->ctx, EMU_OBJ_MW, sizeof(*mw), 0);
	if (!mw)
		return ENOMEM;
	ret = mkey_alloc(mw, &key);
	if (ret) {
		emu_obj_free_locked(&mw->obj);
		return ret;
	}
	mw->pd = pd;
	mw->type = cmd->mw_type;
	mw->rkey = key;
	pd->obj.usecnt++;

	resp->mw_handle = mw->obj.handle;
	resp->rkey = mw->rkey;
	return 0;
}

void emu_mw_destroy_locked(struct emu_mw *mw)
{
	emu_dev_mw_dealloc(mw);
	emu_mw_unbind_locked(mw);
	mw->pd->obj.usecnt--;
	emu_num_free_locked(EMU_NUM_MKEY, mw->rkey >> 8);
	emu_obj_free_locked(&mw->obj);
}

int emu_cmd_dealloc_mw(struct emu_cmd *c)
{
	const struct ib_uverbs_dealloc_mw *cmd = c->in;
	struct emu_mw *mw = emu_obj_get_locked(c->ctx, cmd->mw_handle, EMU_OBJ_MW);

	if (!mw)
		return EINVAL;
	/* deallocating a bound window invalidates it; that is allowed */
	emu_mw_destroy_locked(mw);
	return 0;
}
