/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * reserved_qpn.c - RESERVED_QPN, the DEVX general object behind
 * mlx5dv_reserved_qpn_alloc() (rdma-core providers/mlx5/mlx5.c): a range
 * of QP numbers the firmware takes out of the QP number space, which no
 * QP, DC target or XRC target QP gets while the object lives.  No queue
 * is behind them (a packet to one finds no QP); a process uses one as an
 * identity that is unique on its port, as the QPN an rdma_cm connection
 * advertises when its traffic runs on a DC target many connections share
 * (linux-rdma/rdma-core#936).
 *
 * The range is 2^log_obj_range numbers of this host's QPN space
 * (objects.c), aligned to its size, the object id its first number;
 * libmlx5 asks for 2^log_reserved_qpn_granularity at a time and hands
 * them out one by one.  The three caps of the second general caps page
 * that bound it are EMU_RQPN_* (internal.h); no public dump of a card's
 * page shows them, so the values are this model's: ranges of 8 to 1024
 * numbers, and at most 8192 held by the host - half of the numbers it
 * has (EMU_NUM_IDX_BITS), so that its QPs always keep the other half.
 * The kernel passes the command through (devx.c); DESTROY_GENERAL_OBJECT,
 * sent when the handle is destroyed or the context goes, gives the range
 * back.
 */
#include "internal.h"

int emu_rqpn_create_locked(struct emu_ctx *ctx, unsigned log_n, struct emu_rqpn **out)
{
	struct emu_rqpn *r;
	int ret;

	if (emu_num_spaces[EMU_NUM_QP].nheld + (1u << log_n) > 1u << EMU_RQPN_LOG_MAX_NUM)
		return EDQUOT;
	r = emu_obj_alloc(ctx, EMU_OBJ_RESERVED_QPN, sizeof(*r), 0);
	if (!r)
		return ENOMEM;
	ret = emu_num_hold_range_locked(EMU_NUM_QP, log_n, &r->first);
	if (ret) {
		emu_obj_free_locked(&r->obj);
		return ret;
	}
	r->log_n = log_n;
	*out = r;
	emu_dbg("reserved qpns %#x..%#x\n", r->first, r->first + (1u << log_n) - 1);
	return 0;
}

void emu_rqpn_destroy_locked(struct emu_rqpn *r)
{
	emu_num_release_range_locked(EMU_NUM_QP, r->first, r->log_n);
	emu_obj_free_locked(&r->obj);
}
