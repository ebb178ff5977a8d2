/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * addr.c - addresses and routes as the emulated subnet sees them.
 *
 * Every process is a host, but all of them share the machine's network
 * interfaces, so every IPv4/IPv6 address of the machine (loopback
 * included) reaches the subnet: a connection to it goes to whichever host
 * listens on the port (link.c).  On Ethernet ports the RoCE GIDs' IPv4
 * addresses, ::ffff:10.<d*2+p>.<hh>.<hh>, name one host's port exactly,
 * as an IP address names a NIC; on InfiniBand an AF_IB address does so with
 * its GID.  Anything else has no route (the kernel's ARP would time out).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>

#include <infiniband/ib.h>

#include "internal.h"
#include "subnet/subnet.h"

unsigned cm_addr_size(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct sockaddr_ib);
	default:
		return 0;
	}
}

/*
 * The size of the address in a command's sockaddr_in6 field (BIND_IP,
 * RESOLVE_IP, JOIN_IP_MCAST), 0 when its family is unknown or needs more
 * room than the field has (AF_IB): the kernel's rdma_addr_size_in6(),
 * which ucma.c checks before it looks at the id.
 */
unsigned cm_addr_size_in6(const struct sockaddr_in6 *a)
{
	unsigned size = cm_addr_size((const struct sockaddr *)a);

	return size <= sizeof(*a) ? size : 0;
}

uint16_t cm_addr_port(const struct sockaddr *sa)
{
	switch (sa->sa_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	case AF_IB:
		return (uint16_t)be64toh(((const struct sockaddr_ib *)sa)->sib_sid);
	default:
		return 0;
	}
}

void cm_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	struct sockaddr_ib *sib = (struct sockaddr_ib *)sa;

	switch (sa->sa_family) {
	case AF_INET:
		((struct sockaddr_in *)sa)->sin_port = htons(port);
		break;
	case AF_INET6:
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
		break;
	case AF_IB:
		sib->sib_sid = htobe64((be64toh(sib->sib_sid) & ~0xffffULL) | port);
		sib->sib_sid_mask = htobe64(~0ULL);
		break;
	}
}

uint64_t cm_service_id(uint16_t ps, const struct sockaddr *sa)
{
	if (sa->sa_family == AF_IB)
		return be64toh(((const struct sockaddr_ib *)sa)->sib_sid);
	/* RDMA_IB_IP_PS_* of librdmacm: 0x0000000001 << 24 | ps << 16 | port */
	return 0x1000000ULL | (uint64_t)ps << 16 | cm_addr_port(sa);
}

bool cm_addr_any(const struct sockaddr *sa)
{
	static const uint8_t zero[16];

	switch (sa->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == INADDR_ANY;
	case AF_INET6:
		return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, zero, 16);
	case AF_IB:
		return !memcmp(&((const struct sockaddr_ib *)sa)->sib_addr, zero, 16);
	default:
		return false;
	}
}

enum ibv_mtu cm_port_mtu(void)
{
	/* the active_mtu QUERY_PORT reports (kernel/ctx.c) */
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_MTU_1024 : IBV_MTU_4096;
}

static void end_from(struct cm_end *end, const struct emu_dev_id *devs,
		     unsigned dev, unsigned port)
{
	const struct emu_port_id *p = &devs[dev].port[port - 1];
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	memset(end, 0, sizeof(*end));
	end->node_guid = htobe64(devs[dev].node_guid);
	end->dev = (uint8_t)dev;
	end->port = (uint8_t)port;
	end->lid = p->lid;
	/*
	 * RoCE: the IPv4-mapped RoCE v2 GID, the one rdma_cm picks for IPv4
	 * (cma.c: the port's default GID type is RoCE v2 when it has it,
	 * CMA_PREFERRED_ROCE_GID_TYPE)
	 */
	end->gid_index = eth ? EMU_GID_V4_V2 : 0;
	end->gid = p->gid[end->gid_index];
}

void cm_end_of(struct cm_end *end, unsigned dev, unsigned port)
{
	end_from(end, emu_cfg.dev, dev, port);
}

/* Host, device and port whose GID is gid; false if none could have it. */
static bool gid_owner(const union ibv_gid *gid, unsigned *h, unsigned *d, unsigned *p)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct emu_dev_id devs[EMU_MAX_DEVS];
	const uint8_t *g = gid->raw;

	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET) {
		if (memcmp(g, v4mapped, 12) || g[12] != 10 || g[13] < 1)
			return false;
		*h = (unsigned)g[14] << 8 | g[15];
		*d = (unsigned)(g[13] - 1) / EMU_MAX_PORTS;
		*p = (unsigned)(g[13] - 1) % EMU_MAX_PORTS + 1;
	} else {
		uint64_t pguid = 0;

		for (int i = 8; i < 16; i++)
			pguid = pguid << 8 | g[i];
		*h = (unsigned)(pguid >> 8) & 0xffffff;
		*d = (unsigned)(pguid >> 4) & 0xf;
		*p = (unsigned)pguid & 0xf;
	}
	if (!*h || *h > EMU_MAX_HOSTS || *d >= emu_cfg.num_devs || !*p ||
	    *p > emu_cfg.num_ports)
		return false;
	emu_subnet_identity(*h, devs);
	return !memcmp(&devs[*d].port[*p - 1].gid[emu_cfg.link_layer ==
			IBV_LINK_LAYER_ETHERNET ? EMU_GID_V4_V2 : 0], g, 16);
}

/* The GID an address names, if it is one of the subnet's RoCE/IB GIDs. */
static bool addr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	switch (sa->sa_family) {
	case AF_INET:
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	case AF_INET6:
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	case AF_IB:
		memcpy(gid->raw, &((const struct sockaddr_ib *)sa)->sib_addr, 16);
		return true;
	default:
		return false;
	}
}

/* Is sa an IP address of one of the machine's interfaces? */
static bool machine_addr(const struct sockaddr *sa)
{
	struct ifaddrs *ifs, *i;
	bool found = false;

	if (sa->sa_family == AF_INET &&
	    (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127)
		return true;
	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr))
		return true;
	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return false;
	if (getifaddrs(&ifs))
		return false;
	for (i = ifs; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET)
			found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
				((const struct sockaddr_in *)sa)->sin_addr.s_addr;
		else
			found = !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
					&((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
	freeifaddrs(ifs);
	return found;
}

int cm_addr_local(const struct sockaddr *sa, struct cm_end *end)
{
	union ibv_gid gid;
	unsigned h, d, p;

	cm_end_of(end, 0, 1);
	if (cm_addr_any(sa) || machine_addr(sa))
		return 0;
	if (addr_gid(sa, &gid) && gid_owner(&gid, &h, &d, &p) &&
	    h == emu_cfg.host_id) {
		cm_end_of(end, d, p);
		return 0;
	}
	return EADDRNOTAVAIL;
}

int cm_addr_resolve(const struct sockaddr *dst, uint16_t ps, struct cm_end *end)
{
	struct emu_dev_id devs[EMU_MAX_DEVS];
	union ibv_gid gid;
	unsigned h, d, p;

	/* a group address resolves to the local port, as addr_resolve() does */
	if ((dst->sa_family == AF_INET &&
	     IN_MULTICAST(ntohl(((const struct sockaddr_in *)dst)->sin_addr.s_addr))) ||
	    (dst->sa_family == AF_INET6 &&
	     IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)dst)->sin6_addr))) {
		cm_end_of(end, 0, 1);
		return 0;
	}
	if (addr_gid(dst, &gid) && gid_owner(&gid, &h, &d, &p)) {
		emu_subnet_identity(h, devs);
		end_from(end, devs, d, p);
		return 0;
	}
	if (!machine_addr(dst))
		return EHOSTUNREACH;
	/* the machine's own address: the host listening there, else ours */
	if (cm_link_who(ps, cm_addr_port(dst), &h, &d, &p) == 0) {
		emu_subnet_identity(h, devs);
		end_from(end, devs, d, p);
	} else {
		cm_end_of(end, 0, 1);
	}
	return 0;
}
