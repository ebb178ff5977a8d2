/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sysfs.c - the fake sysfs tree and /dev/infiniband, laid out as the kernel
 * lays them out, and the path rewriting that makes libc reach them.
 *
 * The tree is real: directories, files and relative symlinks written under
 * <subnet dir>/host-<id>/, which mirrors "/" (host-<id>/sys/..., host-<id>/dev/
 * infiniband/...).  A few absolute prefixes (redirects[] below) are taken
 * over: a path under one of them is rewritten to the same path under the
 * host directory, so every libc call that takes a path works once it is
 * rewritten, and calls relative to a descriptor work unchanged.  What the
 * kernel has, and in what format (drivers/infiniband/core/sysfs.c,
 * device.c, user_mad.c, uverbs_main.c; drivers/pci/pci-sysfs.c, probe.c):
 *
 *   class/infiniband/mlx5_N       -> ../../devices/pci0000:BB/0000:BB:00.N/infiniband/mlx5_N
 *   class/infiniband_verbs/uverbsN -> ../../devices/.../infiniband_verbs/uverbsN
 *   class/infiniband_mad/umadN, issmN -> ../../devices/.../infiniband_mad/...
 *   .../infiniband/mlx5_N/device  -> ../../../0000:BB:00.N (the PCI function)
 *
 * Each host has its own tree (it depends on the host's identity), ready
 * at load time: written, or the one the host before it in its slot left
 * if that is the same (struct tree); a leaving host leaves it.
 * SYSFS_PATH is unset, so that libibverbs too reads /sys and
 * names the device by the real machine's paths (ibdev_path
 * /sys/class/infiniband/mlx5_0), which middleware resolves further.
 * The PCI root bus is one the real machine does not have, so the host's
 * own /sys/devices stays visible beside it.
 *
 * Adding an entry is one line in the builders below: attr() for a file,
 * lnk() for a symlink, add_cdev() for a /dev/infiniband node, redirects[]
 * for a new top-level prefix.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "interpose.h"
#include "cm/cm.h"
#include "base/counters.h"
#include "kernel/kernel.h"
#include "subnet/subnet.h"

static char host_dir[PATH_MAX];		/* .../host-<id>: our "/" */
static char sysfs_root[PATH_MAX + 8];	/* .../host-<id>/sys */
static size_t host_dir_len;

/* The PCI root bus and the functions on it: 0000:BB:00.<device index>. */
static unsigned pci_bus;
static char pci_root[16];		/* "pci0000:BB" */

/*
 * The absolute prefixes the tree takes over, each with everything below it.
 * The PCI root is filled in when the bus is chosen.
 */
static char redirects[][32] = {
	"/sys/class/infiniband",
	"/sys/class/infiniband_verbs",
	"/sys/class/infiniband_mad",
	"/sys/class/misc/rdma_cm",
	"/sys/bus/pci/drivers/mlx5_core",
	EMU_CDEV_DIR,
	"",				/* /sys/devices/pci0000:BB */
};

/* /dev/infiniband's nodes (uverbs per device, umad and issm per port, room
 * for more, and rdma_cm); numbers as the kernel's uverbs, umad and misc
 * devices give them. */
static struct emu_cdev cdevs[3 * EMU_MAX_DEVS * EMU_MAX_PORTS + 1];
static unsigned num_cdevs;

const char *emu_sysfs_root(void)
{
	return sysfs_root;
}

/* ------------------------------------------------------------------------ */
/* Path rewriting                                                            */

/* path is prefix itself or below it (not merely a longer name). */
static bool under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return n && !strncmp(path, prefix, n) && (path[n] == '/' || !path[n]);
}

/*
 * The PMA counters sysfs shows (ports/N/counters/), as the kernel reads
 * them from PortCountersExtended (core/sysfs.c, pma_group_ext): the data
 * counters in 4-byte words.  The others read 0, as the PMA answers.
 */
static const struct { const char *name; enum emu_ctr c; } live_counters[] = {
	{ "port_xmit_data", EMU_CTR_XMIT_OCTETS },
	{ "port_rcv_data", EMU_CTR_RCV_OCTETS },
	{ "port_xmit_packets", EMU_CTR_XMIT_PKTS },
	{ "port_rcv_packets", EMU_CTR_RCV_PKTS },
	{ "unicast_xmit_packets", EMU_CTR_UCAST_XMIT },
	{ "unicast_rcv_packets", EMU_CTR_UCAST_RCV },
	{ "multicast_xmit_packets", EMU_CTR_MCAST_XMIT },
	{ "multicast_rcv_packets", EMU_CTR_MCAST_RCV },
};

static bool is_live_counter(const char *name)
{
	for (size_t i = 0; i < sizeof(live_counters) / sizeof(live_counters[0]); i++)
		if (!strcmp(name, live_counters[i].name))
			return true;
	return false;
}

/*
 * A counter file about to be reached at alt gets the counter's value now:
 * written beside it and renamed over it, so a reader sees a whole number.
 */
static void refresh_counter(const char *alt)
{
	const char *m = strstr(alt, "/mlx5_");
	char name[64], tmp[PATH_MAX + 32], val[32];
	unsigned d, p;
	int fd, n;

	if (!m || !strstr(m, "/counters/") ||
	    sscanf(m, "/mlx5_%u/ports/%u/counters/%63s", &d, &p, name) != 3 ||
	    d >= emu_cfg.num_devs || p < 1 || p > emu_cfg.num_ports)
		return;
	for (size_t i = 0; i < sizeof(live_counters) / sizeof(live_counters[0]); i++) {
		uint64_t v;

		if (strcmp(name, live_counters[i].name))
			continue;
		v = emu_port_ctr(d, p, live_counters[i].c);
		if (live_counters[i].c == EMU_CTR_XMIT_OCTETS || live_counters[i].c == EMU_CTR_RCV_OCTETS)
			v /= 4;
		n = snprintf(val, sizeof(val), "%llu\n", (unsigned long long)v);
		snprintf(tmp, sizeof(tmp), "%s.%d", alt, (int)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return;
		if (write(fd, val, (size_t)n) == n) {
			emu_real_close(fd);
			rename(tmp, alt);
		} else {
			emu_real_close(fd);
			unlink(tmp);
		}
		return;
	}
}

const char *emu_sysfs_redirect(const char *path, char *buf, size_t len)
{
	if (!path || path[0] != '/' || !emu_cfg.host_id || !host_dir_len)
		return NULL;
	for (size_t i = 0; i < sizeof(redirects) / sizeof(redirects[0]); i++) {
		if (!under(path, redirects[i]))
			continue;
		emu_fork_settle(true);
		if (!emu_cfg.host_id)
			return NULL;
		if (snprintf(buf, len, "%s%s", host_dir, path) >= (int)len)
			return NULL;
		refresh_counter(buf);
		return buf;
	}
	return NULL;
}

void emu_sysfs_unredirect(char *path)
{
	if (!path || !host_dir_len || strncmp(path, host_dir, host_dir_len) ||
	    path[host_dir_len] != '/')
		return;
	memmove(path, path + host_dir_len, strlen(path + host_dir_len) + 1);
}

/*
 * _show_port_gid_attr() (drivers/infiniband/core/sysfs.c): an entry
 * rdma_get_gid_attr() finds empty is EINVAL "for user space compatibility
 * reasons", which libibverbs reads as "no type file: IB/RoCE v1" and then
 * as an empty entry (libibverbs/cmd_device.c query_sysfs_gid_type());
 * print_ndev() is EINVAL too for an entry without a netdev: every
 * InfiniBand GID's.
 */
bool emu_sysfs_read_fails(const char *path)
{
	const char *m = NULL;
	unsigned d, p, i;
	char kind[6];
	int end = 0;

	/* the last device name in it: the state directory may hold one too */
	for (const char *q = path; q && (q = strstr(q, "/mlx5_")); q++)
		m = q;
	if (!m || sscanf(m, "/mlx5_%u/ports/%u/gid_attrs/%5[a-z]/%u%n", &d, &p, kind,
			 &i, &end) != 4 || m[end] || d >= emu_cfg.num_devs || !p ||
	    p > emu_cfg.num_ports)
		return false;
	if (strcmp(kind, "types") && strcmp(kind, "ndevs"))
		return false;
	return i >= emu_cfg.dev[d].port[p - 1].num_gids ||
	       (!strcmp(kind, "ndevs") && emu_cfg.link_layer != IBV_LINK_LAYER_ETHERNET);
}

const struct emu_cdev *emu_cdev_lookup(const char *path)
{
	static const char dir[] = EMU_CDEV_DIR "/";

	if (!path || strncmp(path, dir, sizeof(dir) - 1) || !emu_cfg.host_id)
		return NULL;
	emu_fork_settle(true);
	for (unsigned i = 0; i < num_cdevs; i++)
		if (!strcmp(path + sizeof(dir) - 1, cdevs[i].name))
			return &cdevs[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Writing the tree                                                          */

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		int r = mkdir(path, 0755);
		*p = '/';
		if (r && errno != EEXIST)
			return errno;
	}
	return 0;
}

/* host_dir + "/" + rel, printf-style. */
__attribute__((format(printf, 3, 0)))
static int tree_path(char *path, size_t len, const char *fmt, va_list ap)
{
	int n = snprintf(path, len, "%s/", host_dir);

	if (n < 0 || (size_t)n >= len)
		return ENAMETOOLONG;
	int m = vsnprintf(path + n, len - (size_t)n, fmt, ap);

	if (m < 0 || (size_t)(n + m) >= len)
		return ENAMETOOLONG;
	return 0;
}

/* A file of the tree: its content, and its path relative to host_dir. */
__attribute__((format(printf, 2, 3)))
static int make_file(const char *content, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int fd, ret;
	size_t n = strlen(content);

	va_start(ap, fmt);
	ret = tree_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (ret)
		return ret;
	/* the directories only when missing: the GID and P_Key tables are many files */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT) {
		if ((ret = mkdirs(path)))
			return ret;
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return errno;
	if (write(fd, content, n) != (ssize_t)n)
		ret = EIO;
	close(fd);
	return ret;
}

/* A symlink at the path given by fmt, pointing at target (relative). */
__attribute__((format(printf, 2, 3)))
static int make_link(const char *target, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tree_path(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (ret || (ret = mkdirs(path)))
		return ret;
	return symlink(target, path) ? errno : 0;
}

/* A directory and its parents, relative to host_dir. */
static int make_dir(const char *rel)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s/", host_dir, rel) >= (int)sizeof(path))
		return ENAMETOOLONG;
	return mkdirs(path);
}

/*
 * The builders below write one attribute a line with attr(t, dir, name,
 * fmt, ...), dir being a directory relative to host_dir; the first error
 * is kept in t and the lines after it do nothing.
 *
 * They run twice.  The first pass writes nothing: it hashes every entry
 * (path, kind, content) in order.  A host's tree depends only on its
 * identity and the configuration, so the tree a host with the same slot
 * left behind is the same tree whenever its stamp (TREE_STAMP, written
 * last) holds the same hash: the second pass then rewrites only the files
 * that change at run time (the live counters, refresh_counter()).
 * Otherwise it writes the whole tree afresh.  Writing is what costs: a
 * RoCE port's 256 GID entries are 768 files, about 0.2 s on a disk
 * filesystem, paid by every process that loads the library (pyverbs execs
 * `ls` and `ip` eight times a test on RoCE).
 */
enum tree_pass {
	TREE_HASH,		/* write nothing, hash every entry */
	TREE_WRITE,		/* write every entry */
	TREE_REFRESH,		/* write the live entries only */
};

struct tree {
	int err;
	enum tree_pass pass;
	uint64_t hash;
};

#define TREE_STAMP ".tree-hash"	/* in host_dir, outside every redirect */

/* FNV-1a over the entry, its kind and a terminator included. */
static void tree_hash(struct tree *t, char kind, const char *path, const char *content)
{
	const char *parts[] = { path, content };

	t->hash = (t->hash ^ (unsigned char)kind) * 0x100000001b3ull;
	for (int i = 0; i < 2; i++) {
		for (const char *c = parts[i]; *c; c++)
			t->hash = (t->hash ^ (unsigned char)*c) * 0x100000001b3ull;
		t->hash *= 0x100000001b3ull;	/* the terminator: a zero byte */
	}
}

/* An entry, as the pass does it: live entries change at run time. */
static void tree_file(struct tree *t, bool live, const char *content,
		      const char *where, const char *name)
{
	char rel[PATH_MAX];

	if (t->err)
		return;
	if (snprintf(rel, sizeof(rel), "%s/%s", where, name) >= (int)sizeof(rel)) {
		t->err = ENAMETOOLONG;
		return;
	}
	if (t->pass == TREE_HASH)
		tree_hash(t, 'f', rel, content);
	else if (t->pass == TREE_WRITE || live)
		t->err = make_file(content, "%s", rel);
}

__attribute__((format(printf, 4, 5)))
static void attr(struct tree *t, const char *where, const char *name,
		 const char *fmt, ...)
{
	char content[1024];
	va_list ap;
	int n;

	if (t->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(content, sizeof(content), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(content)) {
		t->err = EINVAL;
		return;
	}
	tree_file(t, false, content, where, name);
}

/* A path of the tree into buf (a name too long for it is an error). */
__attribute__((format(printf, 4, 5)))
static void at(struct tree *t, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if ((n < 0 || (size_t)n >= len) && !t->err)
		t->err = ENAMETOOLONG;
}

static void lnk(struct tree *t, const char *where, const char *name,
		const char *target)
{
	char rel[PATH_MAX];

	if (t->err)
		return;
	if (snprintf(rel, sizeof(rel), "%s/%s", where, name) >= (int)sizeof(rel))
		t->err = ENAMETOOLONG;
	else if (t->pass == TREE_HASH)
		tree_hash(t, 'l', rel, target);
	else if (t->pass == TREE_WRITE)
		t->err = make_link(target, "%s", rel);
}

/* A directory that may stay empty. */
static void empty_dir(struct tree *t, const char *rel)
{
	if (t->err)
		return;
	if (t->pass == TREE_HASH)
		tree_hash(t, 'd', rel, "");
	else if (t->pass == TREE_WRITE)
		t->err = make_dir(rel);
}

/* A file of the real machine's sysfs, or fallback if it has none. */
static void host_attr(struct tree *t, const char *where, const char *name,
		      const char *host_path, const char *fallback)
{
	char content[1024];
	ssize_t n = -1;
	int fd = open(host_path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, content, sizeof(content) - 1);
		close(fd);
	}
	if (n <= 0)
		attr(t, where, name, "%s", fallback);
	else
		attr(t, where, name, "%.*s", (int)n, content);
}

/* ------------------------------------------------------------------------ */
/* The devices                                                               */

static void guid_str(char *buf, size_t len, uint64_t g)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}

/* The PCIe generation of a ConnectX by device id: its link speed. */
static const char *pcie_speed(uint32_t part_id)
{
	if (part_id >= 0x1021)		/* ConnectX-7 and later: Gen5 */
		return "32.0 GT/s PCIe";
	if (part_id >= 0x101b)		/* ConnectX-6: Gen4 */
		return "16.0 GT/s PCIe";
	return "8.0 GT/s PCIe";		/* ConnectX-4, -5: Gen3 */
}

/* ib_port_state_to_str(), ib_port_phys_state_str() */
static const char *const port_state_name[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};
static const char *const phys_state_name[] = {
	"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
	"LinkUp", "LinkErrorRecovery", "Phy Test",
};

/* rate_show(): "100 Gb/sec (4X EDR)" from the active speed and width. */
static void rate_str(char *buf, size_t len, uint8_t speed, uint8_t width)
{
	static const struct { uint8_t speed; unsigned tenths; const char *name; } tab[] = {
		{ 2, 50, " DDR" }, { 4, 100, " QDR" }, { 8, 100, " FDR10" },
		{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" },
		{ 128, 1000, " NDR" },
	};
	unsigned tenths = 25, lanes;
	const char *name = "";

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (tab[i].speed == speed) {
			tenths = tab[i].tenths;
			name = tab[i].name;
		}
	switch (width) {		/* ib_width_enum_to_int() */
	case 1: lanes = 1; break;
	case 2: lanes = 4; break;
	case 4: lanes = 8; break;
	case 8: lanes = 12; break;
	case 16: lanes = 2; break;
	default: lanes = 0; break;
	}
	tenths *= lanes;
	snprintf(buf, len, "%u%s Gb/sec (%uX%s)", tenths / 10,
		 tenths % 10 ? ".5" : "", lanes, name);
}

/* The port counters of the PMA (counters/) and of mlx5 (hw_counters/). */
static const char *const pma_counters[] = {
	"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
	"port_xmit_discards", "port_xmit_constraint_errors",
	"port_rcv_constraint_errors", "local_link_integrity_errors",
	"excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
	"port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
	"unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
	"multicast_rcv_packets",
};
static const char *const hw_counters[] = {
	"duplicate_request", "implied_nak_seq_err", "local_ack_timeout_err",
	"out_of_buffer", "out_of_sequence", "packet_seq_err", "req_cqe_error",
	"req_cqe_flush_error", "req_remote_access_errors",
	"req_remote_invalid_request", "resp_cqe_error", "resp_cqe_flush_error",
	"resp_local_length_error", "resp_remote_access_errors",
	"rnr_nak_retry_err", "rx_atomic_requests", "rx_read_requests",
	"rx_write_requests",
};

static void build_port(struct tree *t, const char *ibdir, unsigned d, unsigned p)
{
	const struct emu_port_id *id = &emu_cfg.dev[d].port[p - 1];
	struct ib_uverbs_query_port_resp a;
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
	char pd[PATH_MAX], sub[PATH_MAX], name[16], rate[48];

	/* the values ibv_query_port() answers, from the same function */
	memset(&a, 0, sizeof(a));
	emu_port_attr(d, p, &a);
	rate_str(rate, sizeof(rate), a.active_speed, a.active_width);
	at(t, pd, sizeof(pd), "%s/ports/%u", ibdir, p);

	attr(t, pd, "state", "%u: %s\n", a.state,
	     a.state < 6 ? port_state_name[a.state] : "UNKNOWN");
	attr(t, pd, "phys_state", "%u: %s\n", a.phys_state,
	     a.phys_state < 8 ? phys_state_name[a.phys_state] : "<unknown>");
	attr(t, pd, "link_layer", "%s\n", eth ? "Ethernet" : "InfiniBand");
	attr(t, pd, "lid", "0x%x\n", a.lid);
	attr(t, pd, "sm_lid", "0x%x\n", a.sm_lid);
	attr(t, pd, "sm_sl", "%u\n", a.sm_sl);
	attr(t, pd, "lid_mask_count", "%u\n", a.lmc);
	attr(t, pd, "cap_mask", "0x%08x\n", a.port_cap_flags);
	attr(t, pd, "rate", "%s\n", rate);
	at(t, sub, sizeof(sub), "%s/pkeys", pd);
	for (unsigned i = 0; i < a.pkey_tbl_len; i++) {
		snprintf(name, sizeof(name), "%u", i);
		attr(t, sub, name, "0x%04x\n", i ? 0 : 0xffff);
	}
	/*
	 * Every entry of the tables QUERY_PORT announces exists, as on
	 * hardware: unused P_Keys read 0x0000 (above), unused GIDs read as
	 * zeros, and gid_attrs/types/N and ndevs/N exist for every index
	 * (the kernel's gid_attr_group), their reads failing with EINVAL
	 * where the entry is empty (emu_sysfs_read_fails()).  ndevs/N names
	 * a RoCE GID's netdev, EMU_NETDEV; an InfiniBand GID has none.
	 */
	for (unsigned i = 0; i < a.gid_tbl_len; i++) {
		static const union ibv_gid zero;
		const uint8_t *g = i < id->num_gids ? id->gid[i].raw : zero.raw;

		snprintf(name, sizeof(name), "%u", i);
		at(t, sub, sizeof(sub), "%s/gids", pd);
		attr(t, sub, name, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		     "%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		     g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8],
		     g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
		at(t, sub, sizeof(sub), "%s/gid_attrs/types", pd);
		/* ib_cache_gid_type_str() */
		attr(t, sub, name, "%s", i >= id->num_gids ? "" :
		     id->gid_type[i] == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2\n" : "IB/RoCE v1\n");
		at(t, sub, sizeof(sub), "%s/gid_attrs/ndevs", pd);
		attr(t, sub, name, "%s", i < id->num_gids && eth ? EMU_NETDEV "\n" : "");
	}
	at(t, sub, sizeof(sub), "%s/counters", pd);
	for (size_t i = 0; i < sizeof(pma_counters) / sizeof(pma_counters[0]); i++)
		tree_file(t, is_live_counter(pma_counters[i]), "0\n", sub, pma_counters[i]);
	at(t, sub, sizeof(sub), "%s/hw_counters", pd);
	for (size_t i = 0; i < sizeof(hw_counters) / sizeof(hw_counters[0]); i++)
		attr(t, sub, hw_counters[i], "0\n");
	attr(t, sub, "lifespan", "10\n");
}

/* A node of /dev/infiniband (and its empty file there, for listings). */
static void add_cdev(struct tree *t, const char *name, unsigned major,
		     unsigned minor, mode_t mode, int uverbs)
{
	struct emu_cdev *c = &cdevs[num_cdevs];

	if (!t->err && num_cdevs == sizeof(cdevs) / sizeof(cdevs[0]))
		t->err = ENOSPC;
	tree_file(t, false, "", "dev/infiniband", name);
	if (t->err)
		return;
	num_cdevs++;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->rdev = makedev(major, minor);
	c->mode = mode;
	c->uverbs = uverbs;
}

/* /sys/class/infiniband_mad/umadN and issmN, one of each per port. */
static void build_mad(struct tree *t, const char *fn, const char *devlink,
		      const char *ib, unsigned d)
{
	char where[PATH_MAX], name[16], target[PATH_MAX], dev[16];

	for (unsigned p = 1; p <= emu_cfg.num_ports; p++) {
		unsigned n = d * emu_cfg.num_ports + p - 1;

		for (int issm = 0; issm < 2; issm++) {
			unsigned minor = issm ? 64 + n : n;	/* IB_UMAD_MINOR_BASE, +IB_UMAD_MAX_PORTS/2 */

			snprintf(name, sizeof(name), "%s%u", issm ? "issm" : "umad", n);
			at(t, where, sizeof(where), "%s/infiniband_mad/%s", fn, name);
			snprintf(dev, sizeof(dev), "%u:%u\n", EMU_UVERBS_MAJOR, minor);
			attr(t, where, "ibdev", "%s\n", ib);
			attr(t, where, "port", "%u\n", p);
			attr(t, where, "dev", "%s", dev);
			lnk(t, where, "device", devlink);
			lnk(t, where, "subsystem", "../../../../../class/infiniband_mad");
			at(t, target, sizeof(target), "../../devices/%s/%s/infiniband_mad/%s",
				 pci_root, strrchr(fn, '/') + 1, name);
			lnk(t, "sys/class/infiniband_mad", name, target);
			add_cdev(t, name, EMU_UVERBS_MAJOR, minor, issm ? 0600 : 0666, -1);
			if (!t->err) {
				cdevs[num_cdevs - 1].mad_dev = d;
				cdevs[num_cdevs - 1].mad_port = p;
				cdevs[num_cdevs - 1].issm = issm;
			}
		}
	}
}

static void build_dev(struct tree *t, unsigned d)
{
	const struct emu_dev_id *id = &emu_cfg.dev[d];
	uint32_t part = emu_cfg.vendor_part_id;
	char fn[PATH_MAX], ibdir[PATH_MAX], uvdir[PATH_MAX], target[PATH_MAX];
	char where[PATH_MAX], slot[16], devlink[32], ib[16], uv[16], g[32], sg[32], modalias[64];

	snprintf(slot, sizeof(slot), "0000:%02x:00.%u", pci_bus, d);
	/* from <fn>/<class>/<name>/ back to <fn>, as the kernel links it */
	snprintf(devlink, sizeof(devlink), "../../../%s", slot);
	snprintf(ib, sizeof(ib), "mlx5_%u", d);
	snprintf(uv, sizeof(uv), "uverbs%u", d);
	at(t, fn, sizeof(fn), "sys/devices/%s/%s", pci_root, slot);
	at(t, ibdir, sizeof(ibdir), "%s/infiniband/%s", fn, ib);
	at(t, uvdir, sizeof(uvdir), "%s/infiniband_verbs/%s", fn, uv);
	guid_str(g, sizeof(g), id->node_guid);
	guid_str(sg, sizeof(sg), emu_cfg.sys_image_guid);
	/* libmlx5 matches the device by this (vendor 15b3, class 0207) */
	snprintf(modalias, sizeof(modalias), "pci:v000015B3d%08Xsv000015B3sd00000008bc02sc07i00",
		 part);

	/* the PCI function (pci-sysfs.c) */
	attr(t, fn, "vendor", "0x15b3\n");
	attr(t, fn, "device", "0x%04x\n", part);
	attr(t, fn, "subsystem_vendor", "0x15b3\n");
	attr(t, fn, "subsystem_device", "0x0008\n");
	attr(t, fn, "class", "0x020700\n");
	attr(t, fn, "revision", "0x00\n");
	attr(t, fn, "enable", "1\n");
	attr(t, fn, "irq", "0\n");
	attr(t, fn, "modalias", "%s\n", modalias);
	attr(t, fn, "max_link_speed", "%s\n", pcie_speed(part));
	attr(t, fn, "current_link_speed", "%s\n", pcie_speed(part));
	attr(t, fn, "max_link_width", "16\n");
	attr(t, fn, "current_link_width", "16\n");
	/* the machine's first NUMA node, if it has nodes */
	attr(t, fn, "numa_node", "%s\n",
	     access("/sys/devices/system/node/node0", F_OK) ? "-1" : "0");
	host_attr(t, fn, "local_cpus", "/sys/devices/system/node/node0/cpumap", "1\n");
	host_attr(t, fn, "local_cpulist", "/sys/devices/system/node/node0/cpulist", "0\n");
	/* BAR 0: 32 MiB, 64-bit prefetchable; then the other 12 resources */
	attr(t, fn, "resource", "0x%016llx 0x%016llx 0x%016llx\n%s",
	     0xe0000000ull + 0x2000000ull * d, 0xe1ffffffull + 0x2000000ull * d,
	     0x14220cull,
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
	     "0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
	attr(t, fn, "uevent", "DRIVER=mlx5_core\nPCI_CLASS=20700\nPCI_ID=15B3:%04X\n"
	     "PCI_SUBSYS_ID=15B3:0008\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n",
	     part, slot, modalias);
	lnk(t, fn, "driver", "../../../bus/pci/drivers/mlx5_core");
	lnk(t, fn, "subsystem", "../../../bus/pci");
	/* its netdev: the machine's own, whose attributes sysfs shows */
	at(t, where, sizeof(where), "%s/net", fn);
	lnk(t, where, EMU_NETDEV, "/sys/devices/virtual/net/" EMU_NETDEV);

	/* the IB device (core/sysfs.c, mlx5's hca_type, hw_rev, board_id) */
	attr(t, ibdir, "node_type", "1: CA\n");
	attr(t, ibdir, "node_guid", "%s\n", g);
	attr(t, ibdir, "sys_image_guid", "%s\n", sg);
	attr(t, ibdir, "fw_ver", "%s\n", emu_cfg.fw_ver);
	attr(t, ibdir, "hca_type", "MT%u\n", part);
	attr(t, ibdir, "hw_rev", "0x0\n");
	attr(t, ibdir, "board_id", "%s\n", emu_cfg.board_id);
	attr(t, ibdir, "node_desc", "rfemu host %u %s\n", emu_cfg.host_id, ib);
	lnk(t, ibdir, "device", devlink);
	lnk(t, ibdir, "subsystem", "../../../../../class/infiniband");
	for (unsigned p = 1; p <= emu_cfg.num_ports; p++)
		build_port(t, ibdir, d, p);
	at(t, target, sizeof(target), "../../devices/%s/%s/infiniband/%s",
		 pci_root, slot, ib);
	lnk(t, "sys/class/infiniband", ib, target);

	/* the verbs device (uverbs_main.c) */
	attr(t, uvdir, "ibdev", "%s\n", ib);
	attr(t, uvdir, "dev", "%u:%u\n", EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR0 + d);
	attr(t, uvdir, "abi_version", "1\n");	/* MLX5_IB_UVERBS_ABI_VERSION */
	lnk(t, uvdir, "device", devlink);
	lnk(t, uvdir, "subsystem", "../../../../../class/infiniband_verbs");
	at(t, target, sizeof(target), "../../devices/%s/%s/infiniband_verbs/%s",
		 pci_root, slot, uv);
	lnk(t, "sys/class/infiniband_verbs", uv, target);
	add_cdev(t, uv, EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR0 + d, 0666, (int)d);

	build_mad(t, fn, devlink, ib, d);
}

/* A root bus the machine does not have, so that its own stays visible. */
static int choose_pci_bus(void)
{
	/* where servers' ConnectX cards sit, then any free bus */
	static const unsigned likely[] = { 0x3b, 0x5e, 0x86, 0xaf, 0xd8, 0xc1 };
	const unsigned n = sizeof(likely) / sizeof(likely[0]);
	char *slot = redirects[sizeof(redirects) / sizeof(redirects[0]) - 1];

	for (unsigned i = 0; i < n + 255; i++) {
		unsigned bus = i < n ? likely[i] : i - n + 1;

		snprintf(slot, sizeof(redirects[0]), "/sys/devices/pci0000:%02x", bus);
		if (access(slot, F_OK)) {
			pci_bus = bus;
			snprintf(pci_root, sizeof(pci_root), "pci0000:%02x", bus);
			return 0;
		}
	}
	slot[0] = 0;
	return EEXIST;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *where)
{
	nftw(where, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The hash the tree in host_dir was written from, or 0 (none, or partial). */
static uint64_t stamp_read(void)
{
	char path[PATH_MAX + 16], buf[32];
	unsigned long long h = 0;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/" TREE_STAMP, host_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return sscanf(buf, "%16llx", &h) == 1 ? h : 0;
}

/* One pass of the builders over the whole tree. */
static void build_tree(struct tree *t)
{
	num_cdevs = 0;
	attr(t, "sys/class/infiniband_verbs", "abi_version", "6\n");	/* IB_USER_VERBS_ABI_VERSION */
	attr(t, "sys/class/infiniband_mad", "abi_version", "5\n");	/* IB_USER_MAD_ABI_VERSION */
	/* librdmacm's ABI check (rdma-core librdmacm/cma.c, check_abi_version) */
	attr(t, "sys/class/misc/rdma_cm", "abi_version", "%d\n", EMU_CM_ABI_VERSION);
	add_cdev(t, "rdma_cm", 10, EMU_CM_MISC_MINOR, 0666, -1);	/* a misc device */
	if (!t->err)
		cdevs[num_cdevs - 1].rdma_cm = true;
	empty_dir(t, "sys/class/infiniband");
	empty_dir(t, "sys/bus/pci/drivers/mlx5_core");
	for (unsigned d = 0; d < emu_cfg.num_devs && !t->err; d++)
		build_dev(t, d);
}

int emu_sysfs_build(void)
{
	struct tree t = { .pass = TREE_HASH, .hash = 0xcbf29ce484222325ull };
	char path[PATH_MAX + 16], stamp[32];

	host_dir_len = 0;	/* a child of fork() builds its own: no redirection meanwhile */
	snprintf(host_dir, sizeof(host_dir), "%s/host-%u", emu_subnet_dir(),
		 emu_cfg.host_id);
	snprintf(sysfs_root, sizeof(sysfs_root), "%s/sys", host_dir);
	if ((t.err = choose_pci_bus()))
		return t.err;
	build_tree(&t);
	if (t.err)
		return t.err;
	t.hash |= !t.hash;	/* 0 is "no stamp" */
	if (stamp_read() == t.hash) {
		/* the tree a host with this id and configuration left */
		t.pass = TREE_REFRESH;
	} else {
		/* none, a partial one, or another configuration's: its stamp
		 * goes first, so that a tree half removed or half written is
		 * never taken for a whole one */
		snprintf(path, sizeof(path), "%s/" TREE_STAMP, host_dir);
		unlink(path);
		remove_tree(host_dir);
		t.pass = TREE_WRITE;
	}
	build_tree(&t);
	if (!t.err && t.pass == TREE_WRITE) {
		snprintf(stamp, sizeof(stamp), "%016llx\n", (unsigned long long)t.hash);
		t.err = make_file(stamp, TREE_STAMP);
	}
	if (t.err)
		return t.err;
	/* only now: the tree is written through the real paths above */
	host_dir_len = strlen(host_dir);
	return unsetenv("SYSFS_PATH") ? errno : 0;
}
