/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mcast.c - multicast joins and leaves, as ucma_process_join() and
 * ucma_leave_multicast() answer them.  A join is registered and answered
 * with MULTICAST_JOIN at once (the subnet's SA always grants it), carrying
 * the group's MGID and MLID, which librdmacm attaches the id's QP to.  The
 * device model delivers no multicast traffic (emu/README.md).
 *
 * Group addresses map to MGIDs as the kernel maps them: IPv4 on
 * InfiniBand as IPoIB does (ff12:401b:ffff::<address>, RFC 4391), on RoCE
 * to ff0e::ffff:<address> (cma_iboe_set_mgid()); IPv6 and AF_IB addresses
 * are the MGID itself.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/ib.h>

#include "internal.h"

#define CM_MAX_MCS	1024
static struct cm_mc *mc_table[CM_MAX_MCS];

enum { RDMA_MC_JOIN_FLAG_FULLMEMBER_ = 0, RDMA_MC_JOIN_FLAG_SENDONLY_ = 1 };

static void mgid_of(const struct sockaddr *sa, union ibv_gid *mgid, uint16_t *mlid)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	memset(mgid, 0, sizeof(*mgid));
	if (sa->sa_family == AF_INET6)
		memcpy(mgid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else if (sa->sa_family == AF_IB)
		memcpy(mgid->raw, &((const struct sockaddr_ib *)sa)->sib_addr, 16);
	else if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET) {
		mgid->raw[0] = 0xff;
		mgid->raw[1] = 0x0e;
		mgid->raw[10] = mgid->raw[11] = 0xff;
		memcpy(&mgid->raw[12], &sin->sin_addr, 4);
	} else {
		static const uint8_t ipoib[6] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff };

		memcpy(mgid->raw, ipoib, sizeof(ipoib));
		memcpy(&mgid->raw[12], &sin->sin_addr, 4);
	}
	/* one multicast LID per group (0xc000 and up), none on Ethernet */
	*mlid = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 0 :
		(uint16_t)(0xc000 | (mgid->raw[14] << 8 | mgid->raw[15]) % 0x3fff);
}

static int join(struct cm_file *f, uint64_t response, uint64_t uid, uint32_t handle,
		const struct sockaddr *sa, unsigned size, uint16_t flags, int out_len)
{
	struct rdma_ucm_create_id_resp resp;
	struct rdma_ucm_ud_param *u;
	struct cm_event *ev;
	struct cm_id *id;
	struct cm_mc *mc;
	union ibv_gid mgid;
	uint16_t mlid;
	uint32_t h;
	int ret;

	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	if (!size || size != cm_addr_size(sa))
		return EINVAL;
	if (flags != RDMA_MC_JOIN_FLAG_FULLMEMBER_ && flags != RDMA_MC_JOIN_FLAG_SENDONLY_)
		return EINVAL;
	if ((ret = cm_get_id(f, handle, &id)))
		return ret;
	/* rdma_join_multicast(): a bound or resolved id with a device */
	if (!id->has_dev || (id->state != CM_BOUND && id->state != CM_ADDR_RESOLVED))
		return EINVAL;
	for (h = 0; h < CM_MAX_MCS && mc_table[h]; h++)
		;
	if (h == CM_MAX_MCS || !(mc = calloc(1, sizeof(*mc))))
		return ENOMEM;
	mc->handle = h;
	mc->uid = uid;
	mc->id = id;
	memcpy(&mc->addr, sa, size);
	resp.id = h;
	if (cm_copy_out(response, &resp, sizeof(resp))) {
		free(mc);
		return EFAULT;
	}
	mc_table[h] = mc;

	mgid_of(sa, &mgid, &mlid);
	if (!(ev = cm_event_new(id, RDMA_CM_EVENT_MULTICAST_JOIN, 0)))
		return 0;	/* joined; the event is lost as on a failed allocation */
	ev->mc = mc;
	ev->resp.uid = mc->uid;
	ev->resp.id = mc->handle;
	u = &ev->resp.param.ud;
	u->qp_num = 0xffffff;		/* IB_MULTICAST_QPN */
	u->qkey = RDMA_UDP_QKEY;
	u->ah_attr.dlid = mlid;
	u->ah_attr.port_num = id->local.port;
	u->ah_attr.is_global = 1;
	memcpy(u->ah_attr.grh.dgid, mgid.raw, 16);
	u->ah_attr.grh.sgid_index = id->local.gid_index;
	u->ah_attr.grh.hop_limit = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 1 : 0;
	u->ah_attr.grh.traffic_class = id->tos;
	/* posted even before the id has a uid: the group's uid is what counts */
	*id->file->tail = ev;
	id->file->tail = &ev->next;
	cm_event_post_bell(id->file);
	return 0;
}

int cm_cmd_join_ip_mcast(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_join_ip_mcast cmd;
	const struct sockaddr *sa = (const struct sockaddr *)&cmd.addr;

	(void)in_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (!cm_addr_size_in6(&cmd.addr))
		return EINVAL;	/* before the response's room, as ucma.c */
	return join(f, cmd.response, cmd.uid, cmd.id, sa, cm_addr_size_in6(&cmd.addr),
		    RDMA_MC_JOIN_FLAG_FULLMEMBER_, out_len);
}

int cm_cmd_join_mcast(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_join_mcast cmd;

	(void)in_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	return join(f, cmd.response, cmd.uid, cmd.id, (const struct sockaddr *)&cmd.addr,
		    cmd.addr_size, cmd.join_flags, out_len);
}

static int leave(struct cm_mc *mc)
{
	int reported = mc->events_reported;

	cm_take_back_mc_events(mc);
	mc_table[mc->handle] = NULL;
	free(mc);
	return reported;
}

int cm_cmd_leave_mcast(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct cm_mc *mc;

	(void)in_len;
	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	mc = cmd.id < CM_MAX_MCS ? mc_table[cmd.id] : NULL;
	if (!mc)
		return ENOENT;
	if (mc->id->file != f)
		return EINVAL;
	resp.events_reported = (uint32_t)leave(mc);
	return cm_copy_out(cmd.response, &resp, sizeof(resp));
}

void cm_mc_leave_all(struct cm_id *id)
{
	for (uint32_t h = 0; h < CM_MAX_MCS; h++)
		if (mc_table[h] && mc_table[h]->id == id)
			leave(mc_table[h]);
}
