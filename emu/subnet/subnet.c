/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * subnet.c - state shared by every emulated host of one user.
 *
 * Each process that loads librfemu is one host, and so is a child of
 * fork() once it reaches the device (interpose/preload.c
 * emu_fork_settle()).  Hosts find each other
 * through a per-user runtime directory:
 *
 *   $RFEMU_STATE_DIR, else $XDG_RUNTIME_DIR/rfemu, else /tmp/rfemu-$UID
 *
 * (created 0700).  It holds:
 *
 *   hosts.lock   one byte per host slot; a live host holds a write lock (fcntl)
 *                on its byte.  POSIX record locks vanish with their process,
 *                so a crashed host frees its slot without any cleanup.  The
 *                slot number is the host id, which fixes the host's identity:
 *                node GUID, LIDs, MACs and GIDs (see emu_subnet_identity()).
 *   xrcd.tbl     the XRC domain registry, keyed by inode (ibv_open_xrcd with
 *                an fd), and the table of XRC target QPs that other processes
 *                may ibv_open_qp().  Records are read and written with
 *                pread/pwrite under a write lock on the whole file.
 *
 * The device model adds its wire (sockets named by host id) in the same
 * directory.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subnet.h"

static char subnet_dir[PATH_MAX];
static int hosts_fd = -1;
static int xrcd_fd = -1;

const char *emu_subnet_dir(void)
{
	return subnet_dir;
}

static int choose_dir(void)
{
	const char *s = getenv("RFEMU_STATE_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (s && *s)
		n = snprintf(subnet_dir, sizeof(subnet_dir), "%s", s);
	else if (xdg && *xdg)
		n = snprintf(subnet_dir, sizeof(subnet_dir), "%s/rfemu", xdg);
	else
		n = snprintf(subnet_dir, sizeof(subnet_dir), "/tmp/rfemu-%u",
			     (unsigned)getuid());
	if (n < 0 || (size_t)n >= sizeof(subnet_dir) - 32)
		return ENAMETOOLONG;
	if (mkdir(subnet_dir, 0700) && errno != EEXIST)
		return errno;
	return 0;
}

static int open_in_dir(const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", subnet_dir, name);
	return emu_real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

static int lock_range(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = {
		.l_type = type,
		.l_whence = SEEK_SET,
		.l_start = start,
		.l_len = len,
	};

	return fcntl(fd, cmd, &fl);
}

/*
 * Identity of host h.  All numbers are unique on the subnet while h is:
 *   node GUID   00:02:c9:03:00:hh:hh:d0  (Mellanox OUI)
 *   port GUID   node GUID + port - 1: port 1's is the node GUID, as on
 *               an mlx5 HCA, whose first port GUID is the node GUID
 *   LID         h * (devs*ports) + dev * ports + port - 1, never 0
 *   IB GID      fe80::<port GUID>
 *   MAC (RoCE)  02:c9:hh:hh:dd:pp
 *   RoCE GIDs   fe80::<EUI-64 of the MAC> and ::ffff:10.<d*2+p>.<hh>.<hh>,
 *               each as RoCE v1 then RoCE v2 (EMU_GID_*, base.h): the
 *               kernel adds every address once per GID type the port
 *               supports, the default (link-local) one first
 *               (drivers/infiniband/core/roce_gid_mgmt.c update_gid(),
 *               cache.c ib_cache_gid_set_default_gid()), so a ConnectX
 *               port lists RoCE v2 over IPv4 at index 3
 * The connection manager derives other hosts' from an address (cm/addr.c).
 */
void emu_subnet_identity(unsigned h, struct emu_dev_id devs[EMU_MAX_DEVS])
{
	for (unsigned d = 0; d < EMU_MAX_DEVS; d++) {
		struct emu_dev_id *dev = &devs[d];

		dev->node_guid = (0x0002c903ULL << 32) | ((uint64_t)h << 8) |
				 (uint64_t)(d << 4);
		for (unsigned p = 1; p <= EMU_MAX_PORTS; p++) {
			struct emu_port_id *port = &dev->port[p - 1];
			uint64_t pguid = dev->node_guid + p - 1;
			uint8_t *g0 = port->gid[EMU_GID_LL_V1].raw;
			uint8_t *g1 = port->gid[EMU_GID_V4_V1].raw;

			memset(port, 0, sizeof(*port));
			g0[0] = 0xfe;
			g0[1] = 0x80;
			if (emu_cfg.link_layer == IBV_LINK_LAYER_INFINIBAND) {
				port->lid = (uint16_t)(h * EMU_MAX_DEVS * EMU_MAX_PORTS +
						       d * EMU_MAX_PORTS + p - 1);
				for (int i = 0; i < 8; i++)
					g0[8 + i] = (uint8_t)(pguid >> (56 - 8 * i));
				port->gid_type[0] = IBV_GID_TYPE_IB;
				port->num_gids = 1;
				continue;
			}
			port->mac[0] = 0x02;
			port->mac[1] = 0xc9;
			port->mac[2] = (uint8_t)(h >> 8);
			port->mac[3] = (uint8_t)h;
			port->mac[4] = (uint8_t)d;
			port->mac[5] = (uint8_t)p;
			/* modified EUI-64: flip the U/L bit, put ff:fe in the middle */
			g0[8] = port->mac[0] ^ 0x02;
			g0[9] = port->mac[1];
			g0[10] = port->mac[2];
			g0[11] = 0xff;
			g0[12] = 0xfe;
			g0[13] = port->mac[3];
			g0[14] = port->mac[4];
			g0[15] = port->mac[5];
			g1[10] = 0xff;
			g1[11] = 0xff;
			g1[12] = 10;
			g1[13] = (uint8_t)(d * EMU_MAX_PORTS + p);
			g1[14] = (uint8_t)(h >> 8);
			g1[15] = (uint8_t)h;
			port->gid[EMU_GID_LL_V2] = port->gid[EMU_GID_LL_V1];
			port->gid[EMU_GID_V4_V2] = port->gid[EMU_GID_V4_V1];
			for (unsigned i = 0; i < EMU_MAX_GIDS; i++)
				port->gid_type[i] = i % 2 ? IBV_GID_TYPE_ROCE_V2 :
							    IBV_GID_TYPE_ROCE_V1;
			port->num_gids = EMU_MAX_GIDS;
		}
	}
}

int emu_subnet_join(void)
{
	int ret = choose_dir();

	if (ret)
		return ret;
	/*
	 * A child of fork() joins again through the descriptor it inherited:
	 * record locks belong to the process, so the parent's byte stays
	 * locked and the child takes another.
	 */
	if (hosts_fd < 0)
		hosts_fd = open_in_dir("hosts.lock");
	if (hosts_fd < 0)
		return errno;
	for (unsigned h = 1; h <= EMU_MAX_HOSTS; h++) {
		if (lock_range(hosts_fd, F_SETLK, F_WRLCK, h, 1) == 0) {
			emu_cfg.host_id = h;
			emu_subnet_identity(h, emu_cfg.dev);
			emu_cfg.sys_image_guid = emu_cfg.dev[0].node_guid;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES)
			return errno;
	}
	return EUSERS;
}

int32_t emu_subnet_host_pid(unsigned h)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = h,
		.l_len = 1,
	};

	if (hosts_fd < 0 || fcntl(hosts_fd, F_GETLK, &fl) || fl.l_type == F_UNLCK)
		return 0;
	return fl.l_pid;
}

/* ------------------------------------------------------------------------ */
/* XRC domains shared by inode                                               */

#define XRCD_SLOTS	256
#define XRCD_USERS	16
#define TGT_SLOTS	1024

struct xrcd_rec {
	uint64_t	dev;
	uint64_t	ino;
	uint32_t	xrcdn;		/* 0: free slot */
	uint32_t	reserved;
	int32_t		pid[XRCD_USERS];	/* processes holding it open */
	uint32_t	count[XRCD_USERS];	/* opens per process */
};

struct tgt_rec {
	uint32_t		qpn;	/* 0: free slot */
	uint32_t		xrcdn;
	int32_t			pid;
	uint32_t		reserved;
	struct emu_qp_attr	attr;
};

struct xrcd_file {
	uint32_t		next_xrcdn;
	uint32_t		reserved;
	struct xrcd_rec		xrcd[XRCD_SLOTS];
	struct tgt_rec		tgt[TGT_SLOTS];
};

static int xrcd_lock(void)
{
	if (xrcd_fd < 0) {
		xrcd_fd = open_in_dir("xrcd.tbl");
		if (xrcd_fd < 0)
			return errno;
	}
	while (lock_range(xrcd_fd, F_SETLKW, F_WRLCK, 0, 0))
		if (errno != EINTR)
			return errno;
	return 0;
}

static void xrcd_unlock(void)
{
	lock_range(xrcd_fd, F_SETLK, F_UNLCK, 0, 0);
}

static int rec_read(off_t off, void *rec, size_t len)
{
	ssize_t n = pread(xrcd_fd, rec, len, off);

	if (n < 0)
		return errno;
	/* a short read is the unwritten (sparse) part of the file: zeros */
	memset((char *)rec + n, 0, len - (size_t)n);
	return 0;
}

static int rec_write(off_t off, const void *rec, size_t len)
{
	return pwrite(xrcd_fd, rec, len, off) == (ssize_t)len ? 0 : EIO;
}

static bool pid_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Forget users that died without closing; true if anyone is left. */
static bool xrcd_prune(struct xrcd_rec *r)
{
	bool used = false;

	for (int i = 0; i < XRCD_USERS; i++) {
		if (r->pid[i] && !pid_alive(r->pid[i])) {
			r->pid[i] = 0;
			r->count[i] = 0;
		}
		used |= r->pid[i] != 0;
	}
	return used;
}

static uint32_t xrcd_new_number(void)
{
	uint32_t n = 0;

	rec_read(offsetof(struct xrcd_file, next_xrcdn), &n, sizeof(n));
	if (n == 0 || n > 0xffffff)
		n = 1;
	uint32_t next = n + 1;
	rec_write(offsetof(struct xrcd_file, next_xrcdn), &next, sizeof(next));
	return n;
}

uint32_t emu_subnet_xrcd_anon(void)
{
	uint32_t n;

	if (xrcd_lock())
		return 0;
	n = xrcd_new_number();
	xrcd_unlock();
	return n;
}

/*
 * Mirrors the kernel's open_xrcd on an inode: an existing domain without
 * O_EXCL is shared; O_CREAT|O_EXCL on an existing one is EINVAL; none and
 * no O_CREAT is EAGAIN.
 */
int emu_subnet_xrcd_open(dev_t dev, ino_t ino, uint32_t oflags, uint32_t *xrcdn)
{
	int32_t me = (int32_t)getpid();
	struct xrcd_rec r;
	int free_slot = -1, slot = -1;
	int ret = xrcd_lock();

	if (ret)
		return ret;
	for (int i = 0; i < XRCD_SLOTS && slot < 0; i++) {
		off_t off = (off_t)offsetof(struct xrcd_file, xrcd[i]);

		if ((ret = rec_read(off, &r, sizeof(r))))
			goto out;
		if (r.xrcdn && !xrcd_prune(&r)) {
			r.xrcdn = 0;
			rec_write(off, &r, sizeof(r));
		}
		if (!r.xrcdn) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (r.dev == (uint64_t)dev && r.ino == (uint64_t)ino)
			slot = i;
	}

	if (slot >= 0) {
		if (oflags & O_EXCL) {
			ret = EINVAL;
			goto out;
		}
	} else {
		if (!(oflags & O_CREAT)) {
			ret = EAGAIN;
			goto out;
		}
		if (free_slot < 0) {
			ret = ENOMEM;
			goto out;
		}
		slot = free_slot;
		memset(&r, 0, sizeof(r));
		r.dev = (uint64_t)dev;
		r.ino = (uint64_t)ino;
		r.xrcdn = xrcd_new_number();
	}

	int u, empty = -1;

	for (u = 0; u < XRCD_USERS && r.pid[u] != me; u++)
		if (!r.pid[u] && empty < 0)
			empty = u;
	if (u == XRCD_USERS) {
		if (empty < 0) {
			ret = EMFILE;
			goto out;
		}
		u = empty;
		r.pid[u] = me;
	}
	r.count[u]++;
	*xrcdn = r.xrcdn;
	ret = rec_write((off_t)offsetof(struct xrcd_file, xrcd[slot]), &r, sizeof(r));
out:
	xrcd_unlock();
	return ret;
}

void emu_subnet_xrcd_close(uint32_t xrcdn)
{
	int32_t me = (int32_t)getpid();
	struct xrcd_rec r;

	if (xrcd_lock())
		return;
	for (int i = 0; i < XRCD_SLOTS; i++) {
		off_t off = (off_t)offsetof(struct xrcd_file, xrcd[i]);

		if (rec_read(off, &r, sizeof(r)) || r.xrcdn != xrcdn)
			continue;
		for (int u = 0; u < XRCD_USERS; u++)
			if (r.pid[u] == me && r.count[u] && !--r.count[u])
				r.pid[u] = 0;
		if (!xrcd_prune(&r))
			r.xrcdn = 0;
		rec_write(off, &r, sizeof(r));
		break;
	}
	xrcd_unlock();
}

/* ------------------------------------------------------------------------ */
/* XRC target QPs                                                            */

static int tgt_find(uint32_t qpn, struct tgt_rec *r, int *free_slot)
{
	if (free_slot)
		*free_slot = -1;
	for (int i = 0; i < TGT_SLOTS; i++) {
		off_t off = (off_t)offsetof(struct xrcd_file, tgt[i]);

		if (rec_read(off, r, sizeof(*r)))
			return -1;
		if (r->qpn && !pid_alive(r->pid)) {
			r->qpn = 0;
			rec_write(off, r, sizeof(*r));
		}
		if (r->qpn == qpn && qpn)
			return i;
		if (!r->qpn && free_slot && *free_slot < 0)
			*free_slot = i;
	}
	return -1;
}

int emu_subnet_tgt_publish(uint32_t xrcdn, uint32_t qpn,
			   const struct emu_qp_attr *attr)
{
	struct tgt_rec r;
	int free_slot, slot;
	int ret = xrcd_lock();

	if (ret)
		return ret;
	slot = tgt_find(qpn, &r, &free_slot);
	if (slot < 0)
		slot = free_slot;
	if (slot < 0) {
		ret = ENOMEM;
	} else {
		memset(&r, 0, sizeof(r));
		r.qpn = qpn;
		r.xrcdn = xrcdn;
		r.pid = (int32_t)getpid();
		r.attr = *attr;
		ret = rec_write((off_t)offsetof(struct xrcd_file, tgt[slot]),
				&r, sizeof(r));
	}
	xrcd_unlock();
	return ret;
}

void emu_subnet_tgt_unpublish(uint32_t qpn)
{
	struct tgt_rec r;
	int slot;

	if (xrcd_lock())
		return;
	slot = tgt_find(qpn, &r, NULL);
	if (slot >= 0) {
		memset(&r, 0, sizeof(r));
		rec_write((off_t)offsetof(struct xrcd_file, tgt[slot]), &r, sizeof(r));
	}
	xrcd_unlock();
}

int emu_subnet_tgt_lookup(uint32_t xrcdn, uint32_t qpn, struct emu_qp_attr *attr)
{
	struct tgt_rec r;
	int slot, ret = xrcd_lock();

	if (ret)
		return ret;
	slot = tgt_find(qpn, &r, NULL);
	/* the kernel searches the XRCD's own list: another domain's QP is EINVAL */
	if (slot < 0 || r.xrcdn != xrcdn)
		ret = EINVAL;
	else
		*attr = r.attr;
	xrcd_unlock();
	return ret;
}
