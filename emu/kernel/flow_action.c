/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow_action.c - mlx5dv packet reformat flow actions:
 * mlx5dv_create_flow_action_packet_reformat() and ibv_destroy_flow_action(),
 * MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT of the kernel's
 * drivers/infiniband/hw/mlx5/fs.c and UVERBS_METHOD_FLOW_ACTION_DESTROY of
 * drivers/infiniband/core/uverbs_std_types_flow_action.c.
 *
 * The device offers what the NIC flow table caps say (devx.c): the general
 * encap on the NIC TX table (encap_general_header), L2_TO_L2_TUNNEL, whose
 * data is the tunnel's headers the device pushes in front of each frame,
 * and the decap on the NIC RX table (decap), L2_TUNNEL_TO_L2, without
 * data; not the L3 tunnels (reformat_l2_to_l3_tunnel and _l3_tunnel_to_l2
 * 0).  A flow carries an action (flow_matcher.c) and the device applies it
 * (device/eth.c).  The checks, in the kernel's order and with its errnos:
 *
 *   ft_type or type not a u32                         EINVAL (uverbs_get_const)
 *   a type the table type does not have, by the caps  EOPNOTSUPP
 *   L2_TO_L2_TUNNEL without data                      EINVAL (the kernel reads
 *                                                     a NULL buffer, whose
 *                                                     firmware command fails)
 *   data over max_encap_header_size                   EINVAL (fs_cmd.c's
 *                                                     mlx5_cmd_packet_reformat_alloc())
 *
 * The decap's data, if any, is not looked at, as the kernel does not.  An
 * action a flow carries cannot be destroyed (EBUSY, ib_destroy_usecnt()).
 */
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "internal.h"

/* mlx5_ib_flow_action_packet_reformat_valid(): the caps' pairs of type and table */
static bool reformat_offered(uint64_t type, uint64_t ft_type)
{
	switch (type) {
	case MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL:
		return ft_type == MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_TX;
	case MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2:
		return ft_type == MLX5_IB_UAPI_FLOW_TABLE_TYPE_NIC_RX;
	default:	/* the L3 tunnels, and types unknown */
		return false;
	}
}

/* MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT */
static int reformat_create(struct emu_ioc *b)
{
	const struct ib_uverbs_attr *data = emu_ioc_get(b, MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF);
	struct emu_flow_action *a;
	uint64_t ft_type, type;
	int ret;

	if ((ret = emu_ioc_get_const(b, MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_FT_TYPE, UINT32_MAX,
				     &ft_type)) ||
	    (ret = emu_ioc_get_const(b, MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_TYPE, UINT32_MAX,
				     &type)))
		return ret;
	if (!reformat_offered(type, ft_type))
		return EOPNOTSUPP;
	if (type == MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL &&
	    (!data || data->len > EMU_REFORMAT_MAX_DATA))
		return EINVAL;

	a = emu_obj_alloc(b->ctx, EMU_OBJ_FLOW_ACTION, sizeof(*a), 0);
	if (!a)
		return ENOMEM;
	a->type = (uint8_t)type;
	a->ft_type = (uint8_t)ft_type;
	if (type == MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL) {
		a->len = data->len;
		if ((ret = emu_ioc_copy_from(b, MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF,
					     a->data, sizeof(a->data)))) {
			emu_obj_free_locked(&a->obj);
			return ret;
		}
	}
	return emu_ioc_put_new_obj(b, MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_HANDLE, &a->obj);
}

void emu_flow_action_destroy_locked(struct emu_flow_action *a)
{
	emu_obj_free_locked(&a->obj);
}

void emu_flow_action_put_locked(struct emu_flow_action *a)
{
	a->flows--;
}

/* UVERBS_METHOD_FLOW_ACTION_DESTROY */
static int action_destroy(struct emu_ioc *b)
{
	int ret;
	struct emu_flow_action *a = emu_ioc_get_obj(b, UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE,
						    EMU_OBJ_FLOW_ACTION, &ret);

	if (!a)
		return ret;
	if (a->flows)
		return EBUSY;
	emu_flow_action_destroy_locked(a);
	return 0;
}

#define MAND	EMU_IOC_MANDATORY

const struct emu_ioc_method emu_ioc_flow_action_methods[] = {
	{ UVERBS_OBJECT_FLOW_ACTION, MLX5_IB_METHOD_FLOW_ACTION_CREATE_PACKET_REFORMAT,
	  reformat_create, false, {
		{ MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_HANDLE, EMU_IOC_NEW, MAND, 0, 0 },
		{ MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_DATA_BUF, EMU_IOC_PTR_IN, 0, 1, UINT16_MAX },
		/* CONST_IN: u64s */
		{ MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_TYPE, EMU_IOC_PTR_IN, MAND, 8, 8 },
		{ MLX5_IB_ATTR_CREATE_PACKET_REFORMAT_FT_TYPE, EMU_IOC_PTR_IN, MAND, 8, 8 } } },
	{ UVERBS_OBJECT_FLOW_ACTION, UVERBS_METHOD_FLOW_ACTION_DESTROY, action_destroy, false, {
		{ UVERBS_ATTR_DESTROY_FLOW_ACTION_HANDLE, EMU_IOC_IDR, MAND, 0, 0 } } },
};

const size_t emu_ioc_flow_action_methods_count = EMU_ARRAY_SIZE(emu_ioc_flow_action_methods);
