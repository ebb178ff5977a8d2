/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pp.c - packet pacing entries: mlx5dv_pp_alloc() and mlx5dv_pp_free(),
 * the MLX5_IB_OBJECT_PP methods of drivers/infiniband/hw/mlx5/qos.c, on
 * the device's rate limit table as drivers/net/ethernet/mellanox/mlx5/
 * core/rl.c keeps it (mlx5_rl_add_rate_raw(), mlx5_rl_remove_rate_raw()).
 *
 * The table is the device's, not a context's: 2^16 - 1 at most, here
 * packet_pacing_rate_table_size - 1 entries (index 0 is the firmware's
 * "unlimited"), numbered from 1.  An entry holds a rate limit context
 * (set_pp_rate_limit_context: rate_limit in kbps, burst_upper_bound,
 * typical_packet_size; what the caller gives, zero-padded) and the uid it
 * was set under.  A shared entry (uid MLX5_SHARED_RESOURCE_UID) is found
 * again by an identical context, from any context of the device, and
 * counts its users; a dedicated one (MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_
 * INDEX, under the ucontext's DEVX uid) is always a free entry of its own.
 * The entry is free again when its last user is destroyed, by
 * mlx5dv_pp_free() or with its context; a child of fork() is not served
 * one on its parent's context (fork.c).  The checks, in the kernel's order
 * and with its errnos:
 *
 *   the rate context unreadable                  EFAULT (the framework's copy)
 *   a context without DEVX (devx_uid 0)          EINVAL
 *   a flag other than DEDICATED_INDEX            EINVAL (uverbs_get_flags32)
 *   rate_limit 0 or outside [min, max] rate      EINVAL
 *   no free entry (and, shared, none identical)  ENOSPC
 *   the index not writable                       EFAULT, the entry freed
 *
 * A context of 1 to 48 bytes is the framework's (UVERBS_ATTR_SIZE): a
 * longer or empty one is EINVAL before the method runs.  What the firmware
 * checks of SET_PP_RATE_LIMIT beyond the rate is not public; the model
 * takes the burst and packet sizes as given.  The object exists on every
 * modelled card: mlx5_ib offers it with the general caps' qos and the QoS
 * caps' packet_pacing and packet_pacing_uid, which all four report
 * (devx.c's QoS page, from base/profile.c).
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "caps.h"
#include "internal.h"

/* MLX5_ST_SZ_BYTES(set_pp_rate_limit_context) */
#define PP_CTX_SIZE		48
/* the uid of an entry any context may share (mlx5_ifc.h) */
#define SHARED_RESOURCE_UID	0xffff

struct pp_entry {
	uint8_t		ctx[PP_CTX_SIZE];	/* as the firmware was given it */
	uint64_t	users;			/* 0: free */
	uint16_t	uid;
	bool		dedicated;
};

/*
 * Each device's table (emu_lock), made with its first entry and freed with
 * its last, as mlx5_rl_table_get()/_put() do.
 */
static struct pp_table {
	struct pp_entry	*entry;		/* entry[i] is index i + 1 */
	uint32_t	live;		/* PP objects on it */
} tables[EMU_MAX_DEVS];

static uint32_t table_size(void)
{
	return EMU_CAP(packet_pacing_rate_table_size) - 1u;
}

/* big-endian rate_limit, the context's first dword */
static uint32_t ctx_rate(const uint8_t *ctx)
{
	return (uint32_t)ctx[0] << 24 | (uint32_t)ctx[1] << 16 | (uint32_t)ctx[2] << 8 | ctx[3];
}

/*
 * find_rl_entry(): a dedicated entry is the first free one; a shared one
 * is the entry already set to the same context under the same uid, else
 * the first free one.  NULL when the table is full.
 */
static struct pp_entry *find_entry(struct pp_table *t, const uint8_t *ctx, uint16_t uid,
				   bool dedicated)
{
	struct pp_entry *free_entry = NULL;

	for (uint32_t i = 0; i < table_size(); i++) {
		struct pp_entry *e = &t->entry[i];

		if (!e->users) {
			if (!free_entry)
				free_entry = e;
			if (dedicated)
				break;
		} else if (!dedicated && !e->dedicated && e->uid == uid &&
			   !memcmp(e->ctx, ctx, PP_CTX_SIZE)) {
			return e;
		}
	}
	return free_entry;
}

/* mlx5_rl_add_rate_raw(): the entry's index, or the errno */
static int rate_add(unsigned dev_index, const uint8_t *ctx, uint16_t uid, bool dedicated,
		    uint16_t *index)
{
	struct pp_table *t = &tables[dev_index];
	uint32_t rate = ctx_rate(ctx);
	struct pp_entry *e;

	if (!rate || rate < EMU_CAP(packet_pacing_min_rate) ||
	    rate > EMU_CAP(packet_pacing_max_rate))
		return EINVAL;
	if (!t->entry) {
		t->entry = calloc(table_size(), sizeof(*t->entry));
		if (!t->entry)
			return ENOMEM;
	}
	e = find_entry(t, ctx, uid, dedicated);
	if (!e)
		return ENOSPC;
	if (!e->users) {	/* SET_PP_RATE_LIMIT of a new entry */
		memcpy(e->ctx, ctx, PP_CTX_SIZE);
		e->uid = uid;
		e->dedicated = dedicated;
	}
	e->users++;
	t->live++;
	*index = (uint16_t)(e - t->entry + 1);
	return 0;
}

/* mlx5_rl_remove_rate_raw() */
static void rate_remove(unsigned dev_index, uint16_t index)
{
	struct pp_table *t = &tables[dev_index];

	t->entry[index - 1].users--;	/* at 0, the firmware clears it */
	if (!--t->live) {
		free(t->entry);
		t->entry = NULL;
	}
}

/* MLX5_IB_METHOD_PP_OBJ_ALLOC */
static int pp_alloc(struct emu_ioc *b)
{
	struct emu_ctx *ctx = b->ctx;
	uint8_t rl_ctx[PP_CTX_SIZE] = { 0 };
	uint64_t flags;
	uint16_t index;
	struct emu_pp *pp;
	bool dedicated;
	int ret;

	if (!ctx->have_context)
		return EINVAL;
	/* the framework's copy (UA_ALLOC_AND_COPY), before the method's checks */
	if (emu_ioc_copy_from(b, MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX, rl_ctx, sizeof(rl_ctx)))
		return EFAULT;
	if (!ctx->devx_uid)
		return EINVAL;	/* an entry only a DEVX context can use */
	ret = emu_ioc_get_flags(b, MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, &flags);
	if (ret)
		return ret;
	if (flags & ~(uint64_t)MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX)
		return EINVAL;
	dedicated = flags & MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX;
	pp = emu_obj_alloc(ctx, EMU_OBJ_PP, sizeof(*pp), 0);
	if (!pp)
		return ENOMEM;
	ret = rate_add(ctx->dev_index, rl_ctx, dedicated ? ctx->devx_uid : SHARED_RESOURCE_UID,
		       dedicated, &index);
	if (ret) {
		emu_obj_free_locked(&pp->obj);
		return ret;
	}
	pp->index = index;
	emu_dbg("pp %u: index %u, %u kbps%s\n", pp->obj.handle, index, ctx_rate(rl_ctx),
		dedicated ? ", dedicated" : "");
	/* an index that cannot be copied out: the entry goes with the object */
	ret = emu_ioc_put_new_obj(b, MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE, &pp->obj);
	if (!ret)
		ret = emu_ioc_copy_to(b, MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, &index, sizeof(index));
	return ret;
}

/*
 * A raw packet QP's rate limit (IBV_QP_RATE_LIMIT into or in RTS), as
 * modify_raw_packet_qp_sq() takes it: mlx5_rl_add_rate() of the rate, its
 * burst bound and typical packet size (the context's burst_upper_bound
 * and typical_packet_size) into an entry shared as the QoS caps'
 * packet_pacing_uid allows, then the QP's old entry let go; 0 lets go
 * only (no limit).  The entry stays until the next rate or the QP's
 * destruction.  The device paces the QP's frames by it (device/sq.c).
 */
int emu_pp_qp_rate_set(struct emu_qp *qp, uint32_t rate, uint32_t burst, uint16_t typical)
{
	uint8_t rl_ctx[PP_CTX_SIZE] = {
		(uint8_t)(rate >> 24), (uint8_t)(rate >> 16), (uint8_t)(rate >> 8), (uint8_t)rate,
		(uint8_t)(burst >> 24), (uint8_t)(burst >> 16), (uint8_t)(burst >> 8), (uint8_t)burst,
		(uint8_t)(typical >> 8), (uint8_t)typical,
	};
	uint16_t index = 0;
	int ret;

	if (rate && (ret = rate_add(qp->obj.ctx->dev_index, rl_ctx, SHARED_RESOURCE_UID,
				    false, &index)))
		return ret;
	emu_pp_qp_rate_put(qp);
	qp->rl_index = index;
	qp->rl_kbps = rate;
	qp->rl_burst = rate ? burst : 0;
	return 0;
}

/* ... and at its destruction; a child of fork() has no entry of its parent's */
void emu_pp_qp_rate_put(struct emu_qp *qp)
{
	if (qp->rl_index && !qp->obj.inherited)
		rate_remove(qp->obj.ctx->dev_index, qp->rl_index);
	qp->rl_index = 0;
	qp->rl_kbps = 0;
	qp->rl_burst = 0;
}

void emu_pp_destroy_locked(struct emu_pp *pp)
{
	rate_remove(pp->obj.ctx->dev_index, pp->index);
	emu_obj_free_locked(&pp->obj);
}

/* MLX5_IB_METHOD_PP_OBJ_DESTROY */
static int pp_destroy(struct emu_ioc *b)
{
	int ret;
	struct emu_pp *pp = emu_ioc_get_obj(b, MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE,
					    EMU_OBJ_PP, &ret);

	if (!pp)
		return ret;
	emu_pp_destroy_locked(pp);
	return 0;
}

/*
 * A child of fork() set its parent's contexts aside: the entries are the
 * parent's device's, and the host the child becomes has a table of its
 * own, empty.
 */
void emu_pp_disown_locked(void)
{
	for (unsigned d = 0; d < EMU_MAX_DEVS; d++) {
		free(tables[d].entry);
		tables[d].entry = NULL;
		tables[d].live = 0;
	}
}

#define MAND	EMU_IOC_MANDATORY

const struct emu_ioc_method emu_ioc_pp_methods[] = {
	{ MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_ALLOC, pp_alloc, false, {
		{ MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		{ MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX, EMU_IOC_PTR_IN, MAND, 1, PP_CTX_SIZE },
		/* UVERBS_ATTR_FLAGS_IN: a u32 or a u64 */
		{ MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, EMU_IOC_PTR_IN, MAND, 4, 8 },
		{ MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, EMU_IOC_PTR_OUT, MAND, 2, 2 } } },
	{ MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_DESTROY, pp_destroy, false, {
		{ MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 } } },
};

const size_t emu_ioc_pp_methods_count = EMU_ARRAY_SIZE(emu_ioc_pp_methods);
