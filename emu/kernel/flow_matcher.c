/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow_matcher.c - mlx5dv flow steering: mlx5dv_create_flow_matcher(),
 * mlx5dv_destroy_flow_matcher() and mlx5dv_create_flow() to a raw packet
 * QP, the MLX5_IB_OBJECT_FLOW_MATCHER methods and MLX5_IB_METHOD_CREATE_FLOW
 * of the kernel's drivers/infiniband/hw/mlx5/fs.c.
 *
 * A matcher holds a mask in the PRM's fte_match_param layout, the
 * match_criteria_enable bits saying which of its sections the device looks
 * at, a priority, and its table: the NIC's receive (bypass) namespace or
 * its transmit (egress) one; a flow holds a value in the same layout, a QP
 * (receive) or none (egress: to the port), and the flow actions it carries
 * (flow_action.c).  A receive flow goes into the same bypass namespace as
 * verbs rules, so the model makes it a rule of flow.c's list, at the
 * matcher's priority, whose one Ethernet spec is the value and mask: the
 * NIC's steering (device/eth.c) tries it among the others.  An egress flow
 * is a rule of flow.c's egress list, which the device tries on every frame
 * a raw QP of the function sends, before the frame loops back.  Destroyed
 * with ibv_destroy_flow(), as any rule.
 *
 * Matched: the outer headers' smac, ethertype and dmac (fte_match_set_lyr_
 * 2_4's first 14 bytes).  A mask with a bit set elsewhere in an enabled
 * section is refused with EOPNOTSUPP, as a device without that match
 * capability refuses it, rather than matched loosely; bits of a section
 * not enabled are not looked at, as the firmware does not.  The checks,
 * in the kernel's order and with its errnos:
 *
 *   matcher: a FLOW_TYPE but NORMAL                     EINVAL (the kernel's
 *                                                       flows of it: EOPNOTSUPP;
 *                                                       libmlx5 sends only NORMAL)
 *            FT_TYPE with FLOW_FLAGS                    EINVAL
 *            ft_type unknown, or FDB (legacy eswitch)   EINVAL
 *            ft_type RDMA_RX, RDMA_TX                   EOPNOTSUPP (not modelled)
 *            a mask bit in a field not matched          EOPNOTSUPP (not modelled)
 *   flow:    no CAP_NET_RAW                             EPERM
 *            DROP with DEFAULT_MISS, or a QP with flags EINVAL
 *            a QP destination on egress                 EINVAL (get_dests(): no
 *                                                       TIR in the TX table)
 *            no QP destination on receive (DEVX, drop,  EOPNOTSUPP (not modelled)
 *            miss), a DEVX one or a drop on egress
 *            the QP not a raw packet QP                 EINVAL
 *            an action handle of no object              ENOENT
 *            ... of another object type                 EINVAL
 *            two reformats, or two decaps               EINVAL (parse_flow_flow_action())
 *            an action for the other table (an encap    EINVAL (the firmware's
 *            on receive, a decap on egress)             SET_FLOW_TABLE_ENTRY)
 *            a flow tag, counters                       EOPNOTSUPP (not modelled)
 *            a value bit outside the mask               EINVAL (fs_core's
 *                                                       check_valid_spec())
 *            priority above 15                          ENOMEM
 *            the QP without an RQ (no TIR)              EINVAL
 *
 * A matcher or an action a flow uses cannot be destroyed (EBUSY,
 * ib_destroy_usecnt()).
 */
#include <string.h>

#include <linux/capability.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "internal.h"

/* sizeof(struct mlx5_ib_match_params): MLX5_ST_SZ_BYTES(fte_match_param) */
#define MATCH_PARAM_SIZE	0x200
/* each match_criteria_enable bit enables one 64-byte section, in order */
#define MATCH_SECTION_SIZE	0x40
#define MATCH_SECTIONS		7	/* outer, misc, inner, misc 2 .. 5 */
/* what of the outer section (fte_match_set_lyr_2_4) the model matches */
#define OUTER_SMAC		0	/* smac_47_16, smac_15_0 */
#define OUTER_ETHERTYPE		6
#define OUTER_DMAC		8	/* dmac_47_16, dmac_15_0 */
#define OUTER_MATCHED		14
#define FLOW_LAST_PRIO		15	/* MLX5_IB_FLOW_LAST_PRIO */
#define FLOW_MAX_ACTIONS	2	/* MLX5_IB_CREATE_FLOW_MAX_FLOW_ACTIONS */

struct emu_flow_matcher {
	struct emu_obj	obj;
	uint8_t		mask[MATCH_PARAM_SIZE];	/* zero-padded */
	uint8_t		criteria;		/* match_criteria_enable */
	uint16_t	priority;
	bool		egress;			/* the NIC TX table, else NIC RX */
	uint32_t	flows;			/* usecnt: flows made with it */
};

/* mlx5_ib_matcher_ns(): the NIC receive (bypass) and transmit (egress) namespaces */
static int matcher_ns(const struct emu_ioc *b, bool *egress)
{
	uint64_t ft_type;
	int ret;

	if (emu_ioc_get(b, MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE) &&
	    emu_ioc_get(b, MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS))
		return EINVAL;
	if (emu_ioc_get(b, MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE)) {
		if ((ret = emu_ioc_get_const(b, MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE,
					     UINT32_MAX, &ft_type)))
			return ret;
		switch (ft_type) {
		case MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX:
			return 0;
		case MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_TX:
			*egress = true;
			return 0;
		case MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_RX:
		case MLX5_IB_UAPI_FLOW_TABLE_TYPE_RDMA_TX:
			return EOPNOTSUPP;
		default:	/* FDB needs switchdev mode; the rest are unknown */
			return EINVAL;
		}
	}
	if (emu_ioc_get(b, MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS)) {
		uint64_t flags;

		if ((ret = emu_ioc_get_flags(b, MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS, &flags)))
			return ret;
		if (flags & ~(uint64_t)IBV_FLOW_ATTR_FLAGS_EGRESS)
			return EINVAL;		/* uverbs_get_flags32() */
		*egress = flags != 0;		/* EGRESS: NIC_TX */
	}
	return 0;
}

/* Every mask bit the device would look at is one the model matches. */
static bool mask_modelled(const struct emu_flow_matcher *m)
{
	for (unsigned s = 0; s < MATCH_SECTIONS; s++) {
		if (!(m->criteria & (1u << s)))
			continue;
		for (unsigned i = s ? 0 : OUTER_MATCHED; i < MATCH_SECTION_SIZE; i++)
			if (m->mask[s * MATCH_SECTION_SIZE + i])
				return false;
	}
	return true;
}

/* MLX5_IB_METHOD_FLOW_MATCHER_CREATE */
static int matcher_create(struct emu_ioc *b)
{
	struct emu_flow_matcher *m;
	int ret;

	m = emu_obj_alloc(b->ctx, EMU_OBJ_FLOW_MATCHER, sizeof(*m), 0);
	if (!m)
		return ENOMEM;
	/* FLOW_TYPE's NORMAL element carries the priority (a u16) */
	if ((ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK, m->mask,
				     sizeof(m->mask))) ||
	    (ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE, &m->priority,
				     sizeof(m->priority))) ||
	    (ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA,
				     &m->criteria, sizeof(m->criteria))) ||
	    (ret = matcher_ns(b, &m->egress)))
		goto fail;
	if (!mask_modelled(m)) {
		ret = EOPNOTSUPP;
		goto fail;
	}
	return emu_ioc_put_new_obj(b, MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE, &m->obj);
fail:
	emu_obj_free_locked(&m->obj);
	return ret;
}

void emu_flow_matcher_destroy_locked(struct emu_flow_matcher *m)
{
	emu_obj_free_locked(&m->obj);
}

void emu_flow_matcher_put_locked(struct emu_flow_matcher *m)
{
	m->flows--;
}

/* MLX5_IB_METHOD_FLOW_MATCHER_DESTROY */
static int matcher_destroy(struct emu_ioc *b)
{
	int ret;
	struct emu_flow_matcher *m = emu_ioc_get_obj(b, MLX5_IB_ATTR_FLOW_MATCHER_DESTROY_HANDLE,
						     EMU_OBJ_FLOW_MATCHER, &ret);

	if (!m)
		return ret;
	if (m->flows)
		return EBUSY;
	emu_flow_matcher_destroy_locked(m);
	return 0;
}

/* The outer section's smac, ethertype and dmac as a verbs Ethernet filter. */
static void eth_filter(struct ib_uverbs_flow_eth_filter *f, const uint8_t *outer)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, outer + OUTER_SMAC, 6);
	memcpy(&f->ether_type, outer + OUTER_ETHERTYPE, 2);
	memcpy(f->dst_mac, outer + OUTER_DMAC, 6);
}

/*
 * get_dests() of fs.c, to the destinations modelled: a raw QP's TIR on
 * receive, the port on egress (no destination given).
 */
static int flow_dest(const struct emu_ioc *b, const struct emu_flow_matcher *m,
		     struct emu_qp **qp)
{
	uint64_t flags = 0;
	int ret;

	if (emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_FLAGS) &&
	    (ret = emu_ioc_get_flags(b, MLX5_IB_ATTR_CREATE_FLOW_FLAGS, &flags)))
		return ret;
	if (flags & ~(uint64_t)(MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DEFAULT_MISS |
				MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DROP))
		return EINVAL;
	if ((flags & MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DEFAULT_MISS) &&
	    (flags & MLX5_IB_ATTR_CREATE_FLOW_FLAGS_DROP))
		return EINVAL;
	if (emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_QP) &&
	    (flags || emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX)))
		return EINVAL;
	if (m->egress && !emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_QP))
		return flags || emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX) ?
		       EOPNOTSUPP : 0;	/* drop, a DEVX table; else the port */
	if (!emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_QP))
		return EOPNOTSUPP;	/* a DEVX destination, drop, default miss */
	*qp = emu_ioc_get_obj(b, MLX5_IB_ATTR_CREATE_FLOW_DEST_QP, EMU_OBJ_QP, &ret);
	if (!*qp)
		return ret;
	/* a raw QP's TIR, which has no place in the TX table */
	return (*qp)->type == IBV_QPT_RAW_PACKET && !m->egress ? 0 : EINVAL;
}

/*
 * parse_flow_flow_action() of fs.c for the packet reformat actions, each
 * once; then the table's own kind, as the firmware takes an entry only
 * with a reformat context of its table type and decaps only on receive.
 */
static int flow_actions(const struct emu_ioc *b, const struct emu_flow_matcher *m,
			struct emu_flow_action **reformat, bool *decap)
{
	const struct ib_uverbs_attr *arr = emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS);
	uint32_t handles[FLOW_MAX_ACTIONS];
	int ret;

	if (!arr)
		return 0;
	if (arr->len % sizeof(handles[0]))
		return EINVAL;		/* uverbs_process_idrs_array(): whole handles */
	if ((ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS, handles,
				     sizeof(handles))))
		return ret;
	for (unsigned i = 0; i < arr->len / sizeof(handles[0]); i++) {
		struct emu_flow_action *a = emu_obj_get_locked(b->ctx, handles[i],
							       EMU_OBJ_FLOW_ACTION);

		if (!a)	/* uverbs_get_uobject_from_file(): of another type, EINVAL */
			return handles[i] < b->ctx->nobjs && b->ctx->objs[handles[i]] &&
			       b->ctx->objs[handles[i]]->type != EMU_OBJ_FLOW_ACTION ?
			       EINVAL : ENOENT;
		if (a->type == MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2) {
			if (*decap)
				return EINVAL;
			*decap = true;
		} else {
			if (*reformat)
				return EINVAL;
			*reformat = a;
		}
	}
	if ((*reformat && m->egress != ((*reformat)->ft_type == MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_TX)) ||
	    (*decap && m->egress))
		return EINVAL;
	return 0;
}

/* MLX5_IB_METHOD_CREATE_FLOW */
static int flow_create(struct emu_ioc *b)
{
	uint8_t value[MATCH_PARAM_SIZE] = { 0 };
	struct emu_flow_matcher *m;
	struct emu_flow_action *reformat = NULL;
	struct emu_flow *r;
	struct emu_qp *qp = NULL;
	bool decap = false;
	int ret;

	if (!emu_capable(CAP_NET_RAW))
		return EPERM;
	m = emu_ioc_get_obj(b, MLX5_IB_ATTR_CREATE_FLOW_MATCHER, EMU_OBJ_FLOW_MATCHER, &ret);
	if (!m)
		return ret;
	if ((ret = flow_dest(b, m, &qp)) || (ret = flow_actions(b, m, &reformat, &decap)))
		return ret;
	if (emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_TAG) ||
	    emu_ioc_get(b, MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX))
		return EOPNOTSUPP;	/* the CQE's flow tag, counters */
	if ((ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE, value, sizeof(value))))
		return ret;
	for (size_t i = 0; i < sizeof(value); i++)
		if (value[i] & ~m->mask[i])
			return EINVAL;
	if (m->priority > FLOW_LAST_PRIO)
		return ENOMEM;
	if (qp && !qp->rq_wqe_cnt)
		return EINVAL;	/* no TIR to steer to */

	r = emu_obj_alloc(b->ctx, EMU_OBJ_FLOW, sizeof(*r), 0);
	if (!r)
		return ENOMEM;
	r->qp = qp;
	r->egress = m->egress;
	r->decap = decap;
	r->reformat = reformat;
	r->priority = m->priority;
	r->nspecs = 1;
	r->spec[0].type = IBV_FLOW_SPEC_ETH;
	if (m->criteria & 1u) {		/* the outer headers */
		eth_filter(&r->spec[0].v.eth, value);
		eth_filter(&r->spec[0].m.eth, m->mask);
	}
	r->matcher = m;
	m->flows++;
	if (qp)
		qp->flows++;
	if (reformat)
		reformat->flows++;
	emu_flow_insert_locked(r);
	return emu_ioc_put_new_obj(b, MLX5_IB_ATTR_CREATE_FLOW_HANDLE, &r->obj);
}

#define MAND	EMU_IOC_MANDATORY

const struct emu_ioc_method emu_ioc_flow_matcher_methods[] = {
	{ MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_CREATE, matcher_create, false, {
		{ MLX5_IB_ATTR_FLOW_MATCHER_CREATE_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		{ MLX5_IB_ATTR_FLOW_MATCHER_MATCH_MASK, EMU_IOC_PTR_IN, MAND, 1, MATCH_PARAM_SIZE },
		/* an enum: NORMAL (element 0, the only one libmlx5 sends) with a u16 */
		{ MLX5_IB_ATTR_FLOW_MATCHER_FLOW_TYPE, EMU_IOC_PTR_IN, MAND, 2, 2 },
		{ MLX5_IB_ATTR_FLOW_MATCHER_MATCH_CRITERIA, EMU_IOC_PTR_IN, MAND, 1, 1 },
		{ MLX5_IB_ATTR_FLOW_MATCHER_FLOW_FLAGS, EMU_IOC_PTR_IN, 0, 4, 8 },
		/* CONST_IN: a u64 */
		{ MLX5_IB_ATTR_FLOW_MATCHER_FT_TYPE, EMU_IOC_PTR_IN, 0, 8, 8 } } },
	{ MLX5_IB_OBJECT_FLOW_MATCHER, MLX5_IB_METHOD_FLOW_MATCHER_DESTROY, matcher_destroy, false, {
		{ MLX5_IB_ATTR_FLOW_MATCHER_DESTROY_HANDLE, EMU_IOC_IDR, MAND, 0, 0 } } },
	{ UVERBS_OBJECT_FLOW, MLX5_IB_METHOD_CREATE_FLOW, flow_create, false, {
		{ MLX5_IB_ATTR_CREATE_FLOW_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		{ MLX5_IB_ATTR_CREATE_FLOW_MATCH_VALUE, EMU_IOC_PTR_IN, MAND, 1, MATCH_PARAM_SIZE },
		{ MLX5_IB_ATTR_CREATE_FLOW_MATCHER, EMU_IOC_IDR, MAND, 0, 0 },
		{ MLX5_IB_ATTR_CREATE_FLOW_DEST_QP, EMU_IOC_IDR, 0, 0, 0 },
		{ MLX5_IB_ATTR_CREATE_FLOW_DEST_DEVX, EMU_IOC_IDR, 0, 0, 0 },
		/* arrays of u32 handles: MLX5_IB_CREATE_FLOW_MAX_FLOW_ACTIONS, one counter */
		{ MLX5_IB_ATTR_CREATE_FLOW_ARR_FLOW_ACTIONS, EMU_IOC_PTR_IN, 0, 4,
		  4 * FLOW_MAX_ACTIONS },
		{ MLX5_IB_ATTR_CREATE_FLOW_TAG, EMU_IOC_PTR_IN, 0, 4, 4 },
		{ MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX, EMU_IOC_PTR_IN, 0, 4, 4 },
		{ MLX5_IB_ATTR_CREATE_FLOW_ARR_COUNTERS_DEVX_OFFSET, EMU_IOC_PTR_IN, 0, 4, 4 * 32 },
		{ MLX5_IB_ATTR_CREATE_FLOW_FLAGS, EMU_IOC_PTR_IN, 0, 4, 8 } } },
};

const size_t emu_ioc_flow_matcher_methods_count = EMU_ARRAY_SIZE(emu_ioc_flow_matcher_methods);
