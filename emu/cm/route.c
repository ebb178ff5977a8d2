/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * route.c - an id's addresses and route: bind, address and route
 * resolution, the queries librdmacm makes after each step, and options, as
 * drivers/infiniband/core/cma.c (rdma_bind_addr, rdma_resolve_addr,
 * rdma_resolve_route) and ucma.c (ucma_query_*) answer them.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include <infiniband/ib.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>

#include "internal.h"

enum {
	CM_PACKET_LIFE_TIME = 18,	/* what an SM typically answers: about 1 s */
	CM_PORT_FIRST = 32768,		/* ephemeral ports, as ip_local_port_range */
	CM_PORT_LAST = 60999,
};

/*
 * cma_check_port(): may self take its source's port in port space ps?
 * Only ids that bound a port own it (not the connections a listener
 * accepted); a wildcard and a specific address on one port conflict
 * (EADDRNOTAVAIL), two equal addresses too (EADDRINUSE), unless both ids
 * set REUSEADDR.  Other hosts' ports are checked by listening (link.c).
 */
static int check_port(const struct cm_id *self, uint16_t port)
{
	const struct sockaddr *a = (const struct sockaddr *)&self->src;

	for (struct cm_id *id = cm_id_next(NULL); id; id = cm_id_next(id)) {
		const struct sockaddr *b = (const struct sockaddr *)&id->src;

		if (id == self || !id->bound || id->ps != self->ps ||
		    cm_addr_port(b) != port)
			continue;
		if (self->reuseaddr && id->reuseaddr)
			continue;
		if (self->afonly && id->afonly && a->sa_family != b->sa_family)
			continue;
		if (cm_addr_any(a) || cm_addr_any(b))
			return EADDRNOTAVAIL;
		if (a->sa_family == b->sa_family &&
		    !memcmp(a, b, cm_addr_size(a)))
			return EADDRINUSE;
	}
	return 0;
}

static uint16_t ephemeral_port(const struct cm_id *self)
{
	static uint32_t next;

	if (!next)
		next = (uint32_t)cm_now_ms() * 2654435761u;
	for (unsigned n = 0; n <= CM_PORT_LAST - CM_PORT_FIRST; n++) {
		uint16_t port = (uint16_t)(CM_PORT_FIRST + next++ % (CM_PORT_LAST - CM_PORT_FIRST + 1));

		bool used = false;

		for (struct cm_id *id = cm_id_next(NULL); id && !used; id = cm_id_next(id))
			used = id->bound && id->ps == self->ps &&
			       cm_addr_port((const struct sockaddr *)&id->src) == port;
		if (!used)
			return port;
	}
	return 0;
}

/* rdma_bind_addr(): IDLE -> BOUND; a specific address also binds the device. */
int cm_bind_sockaddr(struct cm_id *id, const struct sockaddr *sa)
{
	unsigned size = cm_addr_size(sa);
	uint16_t port;
	int ret;

	if (!size)
		return EAFNOSUPPORT;
	if (id->state != CM_IDLE)
		return EINVAL;
	if ((ret = cm_addr_local(sa, &id->local)))
		return ret;
	memset(&id->src, 0, sizeof(id->src));
	memcpy(&id->src, sa, size);
	port = cm_addr_port(sa);
	if (!port && !(port = ephemeral_port(id)))
		return EADDRNOTAVAIL;
	cm_addr_set_port((struct sockaddr *)&id->src, port);
	if ((ret = check_port(id, port))) {
		memset(&id->src, 0, sizeof(id->src));
		return ret;
	}
	id->bound = true;
	id->has_dev = !cm_addr_any(sa);
	id->state = CM_BOUND;
	return 0;
}

int cm_cmd_bind_ip(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_bind_ip cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (!cm_addr_size_in6(&cmd.addr))
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	return cm_bind_sockaddr(id, (const struct sockaddr *)&cmd.addr);
}

int cm_cmd_bind(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_bind cmd;
	const struct sockaddr *sa = (const struct sockaddr *)&cmd.addr;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (cmd.reserved || !cmd.addr_size || cmd.addr_size != cm_addr_size(sa))
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	return cm_bind_sockaddr(id, sa);
}

/*
 * rdma_resolve_addr(): binds first if needed (to the source, else to the
 * wildcard of the destination's family).  ADDR_RESOLVED follows at once;
 * an address nothing answers gets ADDR_ERROR (-ETIMEDOUT) after timeout_ms,
 * as an unanswered ARP does.
 */
static int resolve_addr(struct cm_id *id, const struct sockaddr *src,
			const struct sockaddr *dst, uint32_t timeout_ms)
{
	struct sockaddr_storage any;
	unsigned dsize = cm_addr_size(dst);
	int ret;

	if (!dsize)
		return EAFNOSUPPORT;
	if (id->state == CM_IDLE) {
		if (!src || !src->sa_family) {
			memset(&any, 0, sizeof(any));
			any.ss_family = dst->sa_family;
			src = (const struct sockaddr *)&any;
		}
		if ((ret = cm_bind_sockaddr(id, src)))
			return ret;
	}
	if (id->state != CM_BOUND)
		return EINVAL;
	if (id->src.ss_family != dst->sa_family && dst->sa_family != AF_IB)
		return EINVAL;
	memset(&id->dst, 0, sizeof(id->dst));
	memcpy(&id->dst, dst, dsize);
	id->state = CM_ADDR_QUERY;
	if (cm_addr_resolve(dst, id->ps, &id->remote)) {
		id->timer_ms = cm_now_ms() + (timeout_ms ? timeout_ms : 1);
		id->timer_event = RDMA_CM_EVENT_ADDR_ERROR;
		id->timer_status = -ETIMEDOUT;
		cm_link_wake();
		return 0;
	}
	if (!id->has_dev) {
		cm_end_of(&id->local, 0, 1);
		id->has_dev = true;
	}
	/* the source the kernel's routing would pick: the destination itself
	 * when it is one of the machine's addresses, as on loopback */
	if (cm_addr_any((const struct sockaddr *)&id->src) &&
	    id->src.ss_family == dst->sa_family && dst->sa_family != AF_IB) {
		uint16_t port = cm_addr_port((const struct sockaddr *)&id->src);

		memcpy(&id->src, dst, dsize);
		cm_addr_set_port((struct sockaddr *)&id->src, port);
	}
	id->state = CM_ADDR_RESOLVED;
	cm_queue_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

int cm_cmd_resolve_ip(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_resolve_ip cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if ((cmd.src_addr.sin6_family && !cm_addr_size_in6(&cmd.src_addr)) ||
	    !cm_addr_size_in6(&cmd.dst_addr))
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	return resolve_addr(id, (const struct sockaddr *)&cmd.src_addr,
			    (const struct sockaddr *)&cmd.dst_addr, cmd.timeout_ms);
}

int cm_cmd_resolve_addr(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_resolve_addr cmd;
	const struct sockaddr *src = (const struct sockaddr *)&cmd.src_addr;
	const struct sockaddr *dst = (const struct sockaddr *)&cmd.dst_addr;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (cmd.reserved || (cmd.src_size && cmd.src_size != cm_addr_size(src)) ||
	    !cmd.dst_size || cmd.dst_size != cm_addr_size(dst))
		return EINVAL;
	if ((ret = cm_get_id(f, cmd.id, &id)))
		return ret;
	return resolve_addr(id, cmd.src_size ? src : NULL, dst, cmd.timeout_ms);
}

/* rdma_resolve_route(): the subnet has one path between any two ports. */
static int resolve_route(struct cm_id *id)
{
	if (id->state != CM_ADDR_RESOLVED)
		return EINVAL;
	id->state = CM_ROUTE_RESOLVED;
	cm_queue_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

int cm_cmd_resolve_route(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_resolve_route cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	return resolve_route(id);
}

static bool has_route(const struct cm_id *id)
{
	return id->state >= CM_ROUTE_RESOLVED && id->state != CM_LISTEN;
}

/* The path of the route, in the kernel's user format (ib_copy_path_rec_to_user). */
static void user_path(const struct cm_id *id, struct ib_user_path_rec *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->dgid, id->remote.gid.raw, 16);
	memcpy(r->sgid, id->local.gid.raw, 16);
	r->dlid = htobe16(id->remote.lid);
	r->slid = htobe16(id->local.lid);
	r->hop_limit = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 64 : 0;
	r->traffic_class = id->tos;
	r->reversible = 1;
	r->numb_path = 1;
	r->pkey = htobe16(0xffff);
	r->mtu_selector = 2;		/* exactly */
	r->mtu = (uint8_t)cm_port_mtu();
	r->rate_selector = 2;
	r->rate = 16;			/* 100 Gb/s: IB_RATE_100_GBPS */
	r->packet_life_time_selector = 2;
	r->packet_life_time = CM_PACKET_LIFE_TIME;
}

/* The same path packed as the SA sends it (IBTA 15.2.5.16, ib_sa_pack_path). */
static void sa_path(const struct cm_id *id, struct ibv_path_record *r)
{
	memset(r, 0, sizeof(*r));
	r->service_id = htobe64(cm_service_id(id->ps, (const struct sockaddr *)&id->dst));
	r->dgid = id->remote.gid;
	r->sgid = id->local.gid;
	r->dlid = htobe16(id->remote.lid);
	r->slid = htobe16(id->local.lid);
	r->flowlabel_hoplimit = htobe32(emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 64 : 0);
	r->tclass = id->tos;
	r->reversible_numpath = 0x80 | 1;
	r->pkey = htobe16(0xffff);
	r->mtu = (uint8_t)(2 << 6 | cm_port_mtu());
	r->rate = 2 << 6 | 16;
	r->packetlifetime = 2 << 6 | CM_PACKET_LIFE_TIME;
}

int cm_cmd_query_route(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_route_resp resp;
	struct cm_id *id;
	int ret;

	(void)in_len;
	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	memset(&resp, 0, sizeof(resp));
	memcpy(&resp.src_addr, &id->src, id->src.ss_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	memcpy(&resp.dst_addr, &id->dst, id->dst.ss_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	if (id->has_dev) {
		resp.node_guid = id->local.node_guid;
		resp.port_num = id->local.port;
		resp.ibdev_index = id->local.dev;
		if (has_route(id)) {
			resp.num_paths = 1;
			user_path(id, &resp.ib_route[0]);
		} else {
			memcpy(resp.ib_route[0].sgid, id->local.gid.raw, 16);
			if (id->state >= CM_ADDR_RESOLVED && id->state != CM_LISTEN)
				memcpy(resp.ib_route[0].dgid, id->remote.gid.raw, 16);
			resp.ib_route[0].pkey = htobe16(0xffff);
		}
	}
	return cm_copy_out(cmd.response, &resp, sizeof(resp));
}

static void query_device(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r)
{
	if (!id->has_dev)
		return;
	r->node_guid = id->local.node_guid;
	r->port_num = id->local.port;
	r->pkey = htobe16(0xffff);
	r->ibdev_index = id->local.dev;
}

static int query_addr(const struct cm_id *id, uint64_t out, int out_len)
{
	struct rdma_ucm_query_addr_resp resp;

	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	memset(&resp, 0, sizeof(resp));
	resp.src_size = (uint16_t)cm_addr_size((const struct sockaddr *)&id->src);
	memcpy(&resp.src_addr, &id->src, resp.src_size);
	resp.dst_size = (uint16_t)cm_addr_size((const struct sockaddr *)&id->dst);
	memcpy(&resp.dst_addr, &id->dst, resp.dst_size);
	query_device(id, &resp);
	return cm_copy_out(out, &resp, sizeof(resp));
}

static int query_path(const struct cm_id *id, uint64_t out, int out_len)
{
	/* the header ends in a flexible array: the record is laid out by hand */
	struct rdma_ucm_query_path_resp hdr;
	struct ib_path_rec_data path;
	uint8_t resp[sizeof(hdr) + sizeof(path)];
	size_t len = sizeof(hdr);

	if (out_len < (int)sizeof(hdr))
		return ENOSPC;
	memset(&hdr, 0, sizeof(hdr));
	hdr.num_paths = has_route(id) ? 1 : 0;
	/* as ucma_query_path(): a record only where more than one fits */
	if (hdr.num_paths && out_len - sizeof(hdr) > sizeof(path)) {
		memset(&path, 0, sizeof(path));
		path.flags = IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL;
		sa_path(id, (struct ibv_path_record *)path.path_rec);
		memcpy(resp + sizeof(hdr), &path, sizeof(path));
		len += sizeof(path);
	}
	memcpy(resp, &hdr, sizeof(hdr));
	return cm_copy_out(out, resp, len);
}

static void sockaddr_ib_of(const struct cm_id *id, const struct sockaddr_storage *a,
			   const union ibv_gid *gid, struct sockaddr_ib *sib)
{
	if (a->ss_family == AF_IB) {
		memcpy(sib, a, sizeof(*sib));
		return;
	}
	sib->sib_family = AF_IB;
	sib->sib_pkey = htobe16(0xffff);
	memcpy(&sib->sib_addr, gid->raw, 16);
	sib->sib_sid = htobe64(cm_service_id(id->ps, (const struct sockaddr *)a));
	sib->sib_sid_mask = htobe64(~0ULL);
}

static int query_gid(const struct cm_id *id, uint64_t out, int out_len)
{
	struct rdma_ucm_query_addr_resp resp;
	union ibv_gid none = { .raw = { 0 } };

	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	memset(&resp, 0, sizeof(resp));
	query_device(id, &resp);
	resp.src_size = sizeof(struct sockaddr_ib);
	sockaddr_ib_of(id, &id->src, id->has_dev ? &id->local.gid : &none,
		       (struct sockaddr_ib *)&resp.src_addr);
	resp.dst_size = sizeof(struct sockaddr_ib);
	sockaddr_ib_of(id, &id->dst, id->state >= CM_ADDR_RESOLVED &&
		       id->state != CM_LISTEN ? &id->remote.gid : &none,
		       (struct sockaddr_ib *)&resp.dst_addr);
	return cm_copy_out(out, &resp, sizeof(resp));
}

int cm_cmd_query(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_query cmd;
	struct cm_id *id;
	int ret;

	(void)in_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
		return query_addr(id, cmd.response, out_len);
	case RDMA_USER_CM_QUERY_PATH:
		return query_path(id, cmd.response, out_len);
	case RDMA_USER_CM_QUERY_GID:
		return query_gid(id, cmd.response, out_len);
	default:
		return ENOSYS;
	}
}

/* RDMA_OPTION_IB_PATH (ucma_set_ib_path): a path found elsewhere, e.g. by ibacm */
static int set_ib_path(struct cm_id *id, const void *val, uint32_t len)
{
	const struct ib_path_rec_data *p = val;

	if (len % sizeof(*p))
		return EINVAL;
	for (; len; len -= sizeof(*p), p++)
		if (p->flags == (IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL))
			break;
	if (!len)
		return EINVAL;
	return resolve_route(id);
}

int cm_set_option(struct cm_id *id, uint32_t level, uint32_t name,
		  const void *val, uint32_t len)
{
	if (level == RDMA_OPTION_IB)
		return name == RDMA_OPTION_IB_PATH ? set_ib_path(id, val, len) : ENOSYS;
	if (level != RDMA_OPTION_ID)
		return ENOSYS;
	switch (name) {
	case RDMA_OPTION_ID_TOS:
		if (len != 1)
			return EINVAL;
		id->tos = *(const uint8_t *)val;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:	/* rdma_set_reuseaddr() */
		if (len != sizeof(int))
			return EINVAL;
		if (!((*(const int *)val && id->state != CM_LISTEN) || id->state == CM_IDLE))
			return EINVAL;
		id->reuseaddr = *(const int *)val != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:	/* rdma_set_afonly() */
		if (len != sizeof(int))
			return EINVAL;
		if (id->state != CM_IDLE)
			return EINVAL;
		id->afonly = *(const int *)val != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:	/* rdma_set_ack_timeout() */
		if (len != 1)
			return EINVAL;
		if (id->qp_type != IBV_QPT_RC && id->qp_type != IBV_QPT_XRC_SEND)
			return EINVAL;
		id->ack_timeout = *(const uint8_t *)val;
		id->has_ack_timeout = true;
		return 0;
	default:
		return ENOSYS;
	}
}
