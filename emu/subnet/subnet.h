/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * subnet.h - the state the processes of one user share (subnet.c): host
 * slots and identities, XRC domains by inode, and the XRC target QPs other
 * processes may open; multicast group membership (mcast.c).
 */
#ifndef RDMAFAST_EMU_SUBNET_H
#define RDMAFAST_EMU_SUBNET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/ib_user_verbs.h>
#include <stdatomic.h>

#include "base/base.h"
#include "base/counters.h"

/* Per-user directory that holds the subnet's shared state. */
const char *emu_subnet_dir(void);

/*
 * The attributes ibv_modify_qp sets, kept exactly as the kernel stores them.
 * Defined here, not with the QP in kernel/, because the subnet stores those
 * of XRC target QPs for other processes.
 */
struct emu_qp_attr {
	enum ibv_qp_state	state;
	enum ibv_mtu		path_mtu;
	uint32_t		qkey;
	uint32_t		rq_psn;
	uint32_t		sq_psn;
	uint32_t		dest_qp_num;
	uint32_t		qp_access_flags;
	uint16_t		pkey_index;
	uint8_t			port_num;
	uint8_t			max_rd_atomic;
	uint8_t			max_dest_rd_atomic;
	uint8_t			min_rnr_timer;
	uint8_t			timeout;
	uint8_t			retry_cnt;
	uint8_t			rnr_retry;
	uint8_t			en_sqd_async_notify;
	uint8_t			path_mig_state;
	struct ibv_ah_attr	ah;		/* primary path: dlid, sl, grh.dgid, sgid_index, port */
	struct ibv_ah_attr	alt_ah;
	uint16_t		alt_pkey_index;
	uint8_t			alt_port_num;
	uint8_t			alt_timeout;
	uint32_t		rate_limit;
};

int emu_subnet_join(void);		/* sets emu_cfg.host_id and identities */
/* The identity host h has (or would have): GUIDs, LIDs, MACs, GIDs. */
void emu_subnet_identity(unsigned h, struct emu_dev_id devs[EMU_MAX_DEVS]);
/* XRC domain registry keyed by inode: see subnet.c for the semantics. */
int emu_subnet_xrcd_open(dev_t dev, ino_t ino, uint32_t oflags, uint32_t *xrcdn);
void emu_subnet_xrcd_close(uint32_t xrcdn);
uint32_t emu_subnet_xrcd_anon(void);
/* XRC target QPs, so that another process can ibv_open_qp() them. */
int emu_subnet_tgt_publish(uint32_t xrcdn, uint32_t qpn, const struct emu_qp_attr *attr);
void emu_subnet_tgt_unpublish(uint32_t qpn);
int emu_subnet_tgt_lookup(uint32_t xrcdn, uint32_t qpn, struct emu_qp_attr *attr);

/*
 * Multicast membership (mcast.c), the fabric's forwarding tables: a QP
 * attached to a group on this host, detached, and the hosts with a QP
 * attached to a group, by MLID (InfiniBand switches forward by DLID) or by
 * MGID (RoCE), as a bitmap indexed by host id.  Join returns 0 or an errno.
 * Called under emu_lock.
 */
#define EMU_MCAST_HOST_WORDS	((EMU_MAX_HOSTS + 64) / 64)
int emu_subnet_mcast_join(const uint8_t gid[16], uint16_t lid, uint32_t qpn);
void emu_subnet_mcast_leave(const uint8_t gid[16], uint16_t lid, uint32_t qpn);
unsigned emu_subnet_mcast_hosts(const uint8_t gid[16], uint16_t lid, bool by_lid,
				uint64_t hosts[EMU_MCAST_HOST_WORDS]);

/*
 * The process holding host slot h (F_GETLK on hosts.lock), 0 if none or
 * if it is this process.
 */
int32_t emu_subnet_host_pid(unsigned h);

/*
 * What a host publishes of its ports (ports.c) for the management agents
 * of the subnet (mad/sma.c, pma.c): the values its QUERY_PORT and sysfs
 * answer, and its live traffic counters (base/counters.h keeps them
 * here).  One record per host slot, shared by every process.
 */
struct emu_host_port {
	struct ib_uverbs_query_port_resp attr;	/* emu_port_attr() */
	uint8_t		gid0[16];		/* GID 0: the GID prefix and port GUID */
	uint32_t	gid_tbl_len;
	uint16_t	pkey_tbl_len;
	uint16_t	cap_flags2;		/* PortInfo:CapabilityMask2 */
};

struct emu_host_rec {
	_Atomic int32_t	pid;		/* the publisher, stored last; 0: none */
	uint32_t	num_devs;
	uint32_t	num_ports;
	uint32_t	part_id;	/* NodeInfo:DeviceID */
	uint8_t		link_layer;
	uint64_t	sys_image_guid;
	uint64_t	node_guid[EMU_MAX_DEVS];
	char		node_desc[EMU_MAX_DEVS][64];
	struct emu_host_port port[EMU_MAX_DEVS][EMU_MAX_PORTS];
	_Atomic uint64_t ctr[EMU_MAX_DEVS][EMU_MAX_PORTS][EMU_NUM_CTR];
};

/* Host h's record to write (h is this host), NULL if it cannot be mapped. */
struct emu_host_rec *emu_subnet_host_rec(unsigned h);
/* Host h's record if h is alive and published it, else NULL. */
struct emu_host_rec *emu_subnet_live_rec(unsigned h);
/* Which host, device and port a LID names, by the identities' rule. */
bool emu_subnet_lid_port(uint16_t lid, unsigned *h, unsigned *d, unsigned *p);

#endif /* RDMAFAST_EMU_SUBNET_H */
