/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fork.c - what a child of fork() is served on the contexts it inherited.
 *
 * The uverbs file is shared after fork(), and the kernel serves the child
 * on it (drivers/infiniband/core/uverbs_main.c, uverbs_ioctl.c): its
 * ioctl() commands run on the parent's ucontext and what they make joins
 * it; only write() is refused, with EACCES, to a process whose credentials
 * are not the opener's (ib_safe_file_access()), which fork() gives the
 * child.  libibverbs 44 sends its write() commands by ioctl
 * (UVERBS_METHOD_INVOKE_WRITE) once the kernel takes them, so a child of a
 * real host is served them all.
 *
 * Here the child holds a copy of the parent's fake kernel, taken at fork(),
 * of which the parent's device model (its engine is a thread of the parent)
 * knows nothing.  What needs no device is served: the queries of the
 * device, its ports and GIDs (pyverbs checks max_dm_size before it
 * allocates), protection domains, and device memory, whose pages are in
 * the command fd's memfd that parent and child share, as is their
 * allocation (ioctl_dm.c).  Every other command answers EIO, as on a
 * context the kernel disassociated: a queue or a memory region made in the
 * copy would not be one the parent's device serves, nor would a packet
 * pacing entry be one of its rate table (pp.c), which the kernel would
 * share with the parent's contexts.  The queries answer
 * for the host the child is: its parent's until it reaches the device and
 * becomes a host of its own, then that host's GUIDs and LIDs.  The
 * parent's objects are not in reach (emu_obj.inherited: an unknown
 * handle), so nothing the child does can release or change them; what the
 * child made goes when it frees it, closes the context or exits.
 */
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5_user_ioctl_cmds.h>

#include "internal.h"

bool emu_inherited_method_served(uint16_t object, uint16_t method)
{
	static const struct { uint16_t object, method; } served[] = {
		/* its write() commands, checked one by one below */
		{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE },
		{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT },
		{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE },
		{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY },
		{ UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT },
		{ UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY },
		{ UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC },
		{ UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE },
		{ UVERBS_OBJECT_DM, MLX5_IB_METHOD_DM_QUERY },
	};

	for (size_t i = 0; i < EMU_ARRAY_SIZE(served); i++)
		if (served[i].object == object && served[i].method == method)
			return true;
	return false;
}

bool emu_inherited_command_served(uint32_t command)
{
	switch (command) {
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
	case IB_USER_VERBS_CMD_QUERY_PORT:
	case IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE:
	case IB_USER_VERBS_CMD_ALLOC_PD:
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return true;
	default:
		return false;
	}
}
