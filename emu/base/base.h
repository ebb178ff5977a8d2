/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * base.h - what every layer of the emulated HCA uses: this host's
 * configuration and identity, diagnostics, and the C library's own entry
 * points (libc.c) for the code that must bypass interpose/.
 *
 * The bottom folder: it includes no other folder of emu/.
 */
#ifndef RDMAFAST_EMU_BASE_H
#define RDMAFAST_EMU_BASE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "profile.h"

#define EMU_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Limits                                                                   */

#define EMU_MAX_DEVS		4	/* mlx5_0 .. mlx5_3 per host */
#define EMU_MAX_PORTS		2	/* ports per device */
#define EMU_MAX_HOSTS		1023	/* live processes on one subnet */
/*
 * The net device behind every port (the PCI function's device/net/, a
 * RoCE GID's netdev, RDMA netlink's port): the machine's loopback
 * interface.  Making an HCA's own netdev needs root; lo is one every
 * process sees and addresses, and the subnet already routes its
 * addresses (cm/addr.c).  emu/README.md, "The net device".
 */
#define EMU_NETDEV		"lo"

/*
 * Object numbers (QPN, CQN, SRQN, PDN, mkey index) are subnet-unique:
 * host_id << EMU_NUM_IDX_BITS | per-host index.  The device model can
 * therefore route by QPN alone, and XRC target QPs opened from another
 * process are found by QPN.
 */
#define EMU_NUM_IDX_BITS	14
#define EMU_NUM_IDX_MASK	((1u << EMU_NUM_IDX_BITS) - 1)
#define EMU_NUM_HOST(n)		(((n) & 0xffffffu) >> EMU_NUM_IDX_BITS)

/* ------------------------------------------------------------------------ */
/* Host identity and configuration (config.c; identities from subnet/)      */

/*
 * The GID table of a port (subnet.c): on InfiniBand one GID, of type
 * IBV_GID_TYPE_IB; on RoCE each address twice, RoCE v1 then RoCE v2, as
 * the kernel adds an address once per GID type the port supports (roce_
 * gid_mgmt.c update_gid(); both on a ConnectX, roce_gid_type_mask_support())
 * and reserves the first entries for the default, link-local GID (cache.c).
 * Entries from num_gids on are empty.
 */
enum {
	EMU_GID_LL_V1,		/* fe80::<EUI-64 of the MAC>, RoCE v1 (and the IB GID) */
	EMU_GID_LL_V2,		/* the same, RoCE v2 */
	EMU_GID_V4_V1,		/* ::ffff:<IPv4 address>, RoCE v1 */
	EMU_GID_V4_V2,		/* the same, RoCE v2: what rdma_cm picks for IPv4 */
	EMU_MAX_GIDS
};

struct emu_port_id {
	uint16_t		lid;		/* IB only; 0 on Ethernet */
	uint8_t			mac[6];		/* Ethernet only */
	unsigned		num_gids;
	union ibv_gid		gid[EMU_MAX_GIDS];	/* EMU_GID_* */
	uint8_t			gid_type[EMU_MAX_GIDS];	/* enum ibv_gid_type */
};

struct emu_dev_id {
	uint64_t		node_guid;	/* host byte order */
	struct emu_port_id	port[EMU_MAX_PORTS];
};

struct emu_config {
	unsigned		num_devs;	/* RFEMU_DEVICES, 1..EMU_MAX_DEVS */
	unsigned		num_ports;	/* RFEMU_PORTS, 1..EMU_MAX_PORTS */
	uint8_t			link_layer;	/* IBV_LINK_LAYER_INFINIBAND or _ETHERNET */
	uint32_t		vendor_part_id;	/* RFEMU_PART_ID, default 0x101b (CX-6) */
	const struct emu_profile *profile;	/* that part's caps (profile.h) */
	char			fw_ver[32];	/* RFEMU_FW_VER */
	char			board_id[32];	/* RFEMU_BOARD_ID */
	uint64_t		sys_image_guid;

	unsigned		host_id;	/* 1..EMU_MAX_HOSTS, from the subnet */
	struct emu_dev_id	dev[EMU_MAX_DEVS];
};

/* Filled once at load time; read-only afterwards, no lock needed. */
extern struct emu_config emu_cfg;

/* Diagnostics go to stderr only when RFEMU_DEBUG is set. */
extern int emu_debug;
#define emu_dbg(...)							\
	do {								\
		if (emu_debug)						\
			fprintf(stderr, "rfemu: " __VA_ARGS__);	\
	} while (0)

/*
 * config.c: fills emu_cfg from the RFEMU_* variables (the host's identity
 * is the subnet's, subnet/subnet.c).
 */
void emu_config_load(void);

/*
 * RFEMU_CQE_COMPRESS: when the device writes compressed CQEs on a CQ
 * created with compression (device/cqe_zip.c).  Read when called (the
 * device asks at engine start, so a test may setenv() before it opens
 * the device).
 */
enum emu_cqe_compress {
	EMU_CQE_COMPRESS_AUTO,		/* CQEs ready together (default) */
	EMU_CQE_COMPRESS_ALWAYS,	/* held until the engine idles */
	EMU_CQE_COMPRESS_NEVER,
	EMU_CQE_COMPRESS_LOAD,		/* only while software lags */
};
enum emu_cqe_compress emu_config_cqe_compress(void);

/*
 * libc.c: the C library's functions that interpose/ interposes, past it.
 * Every folder below interpose/ calls these instead (real.h says why):
 * the kernel closes its own descriptors so that interpose/'s close() does
 * not treat them as the application's, the device changes the protection
 * of the application's doorbell pages with emu_real_mprotect() (the system
 * call itself: async-signal-safe, also called from the fault handler;
 * emu_real_ioctl() too), and
 * every one of them is resolved when the library loads, so the fault
 * handler's calls (emu_real_sigaction(), the engine's kick through
 * emu_real_write()) look nothing up.
 */
struct stat;
struct sigaction;
int emu_real_open(const char *path, int flags, mode_t mode);
int emu_real_close(int fd);
ssize_t emu_real_read(int fd, void *buf, size_t len);
ssize_t emu_real_write(int fd, const void *buf, size_t len);
int emu_real_access(const char *path, int mode);
int emu_real_fstat(int fd, struct stat *st);
FILE *emu_real_fopen(const char *path, const char *mode);
int emu_real_socket(int domain, int type, int protocol);
struct sockaddr;
int emu_real_bind(int fd, const struct sockaddr *addr, socklen_t len);
int emu_real_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
void *emu_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int emu_real_munmap(void *addr, size_t len);
int emu_real_mprotect(void *addr, size_t len, int prot);
int emu_real_ioctl(int fd, unsigned long req, void *arg);
int emu_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#endif /* RDMAFAST_EMU_BASE_H */
