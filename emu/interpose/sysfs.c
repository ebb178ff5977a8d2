/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sysfs.c - the fake sysfs tree libibverbs discovers devices from.
 *
 * libibverbs reads $SYSFS_PATH/class/infiniband_verbs/uverbsN and
 * $SYSFS_PATH/class/infiniband/<ibdev> once netlink is refused.  The tree
 * depends on the host's identity, so each host writes its own, under
 * <subnet dir>/host-<id>/sys, at load time, and points SYSFS_PATH at it.
 * preload.c also redirects direct opens of /sys/class/infiniband... there,
 * for programs (and libmlx5) that read a fixed path.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose.h"
#include "cm/cm.h"
#include "kernel/kernel.h"
#include "subnet/subnet.h"

static char sysfs_root[PATH_MAX + 8];	/* .../host-<id>/sys */
static char host_dir[PATH_MAX];		/* .../host-<id> */
static pid_t sysfs_owner;

const char *emu_sysfs_root(void)
{
	return sysfs_root;
}

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

/* Write one attribute file: path relative to the root, printf content. */
__attribute__((format(printf, 2, 3)))
static int attr(const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX];
	char buf[256];
	va_list ap;
	int fd, n, ret = 0;

	if (snprintf(path, sizeof(path), "%s/%s", sysfs_root, rel) >= (int)sizeof(path))
		return ENAMETOOLONG;
	if ((ret = mkdirs(path)))
		return ret;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf))
		return EINVAL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (write(fd, buf, (size_t)n) != n)
		ret = EIO;
	close(fd);
	return ret;
}

static void guid_str(char *buf, size_t len, uint64_t g)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}

static int build_port(const char *ib, unsigned d, unsigned p)
{
	const struct emu_port_id *port = &emu_cfg.dev[d].port[p - 1];
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
	char rel[PATH_MAX];
	int ret = 0;

#define PATTR(name, ...)						\
	do {								\
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%u/%s", \
			 ib, p, name);					\
		ret = ret ? ret : attr(rel, __VA_ARGS__);		\
	} while (0)

	PATTR("state", "4: ACTIVE\n");
	PATTR("phys_state", "5: LinkUp\n");
	PATTR("link_layer", "%s\n", eth ? "Ethernet" : "InfiniBand");
	PATTR("lid", "0x%x\n", port->lid);
	PATTR("sm_lid", "0x%x\n", eth ? 0 : 1);
	PATTR("lid_mask_count", "0\n");
	PATTR("rate", "100 Gb/sec (4X EDR)\n");
	PATTR("pkeys/0", "0xffff\n");
	for (unsigned i = 0; i < port->num_gids; i++) {
		const uint8_t *g = port->gid[i].raw;
		char name[64];

		snprintf(name, sizeof(name), "gids/%u", i);
		PATTR(name, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		      "%02x%02x:%02x%02x:%02x%02x\n",
		      g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8],
		      g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
		/* IB has no gid_attrs; its absence means "IB/RoCE v1" */
		if (eth) {
			snprintf(name, sizeof(name), "gid_attrs/types/%u", i);
			PATTR(name, "RoCE v2\n");
		}
	}
#undef PATTR
	return ret;
}

static int build_dev(unsigned d)
{
	const struct emu_dev_id *dev = &emu_cfg.dev[d];
	char ib[16], uv[16], rel[PATH_MAX], g[32], sg[32];
	int ret = 0;

	snprintf(ib, sizeof(ib), "mlx5_%u", d);
	snprintf(uv, sizeof(uv), "uverbs%u", d);
	guid_str(g, sizeof(g), dev->node_guid);
	guid_str(sg, sizeof(sg), emu_cfg.sys_image_guid);

#define UATTR(name, ...)						\
	do {								\
		snprintf(rel, sizeof(rel), "class/infiniband_verbs/%s/%s", uv, name); \
		ret = ret ? ret : attr(rel, __VA_ARGS__);		\
	} while (0)
#define IATTR(name, ...)						\
	do {								\
		snprintf(rel, sizeof(rel), "class/infiniband/%s/%s", ib, name); \
		ret = ret ? ret : attr(rel, __VA_ARGS__);		\
	} while (0)

	UATTR("ibdev", "%s\n", ib);
	UATTR("dev", "%u:%u\n", EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR0 + d);
	UATTR("abi_version", "1\n");	/* MLX5_IB_UVERBS_ABI_VERSION */

	IATTR("node_type", "1: CA\n");
	IATTR("node_guid", "%s\n", g);
	IATTR("sys_image_guid", "%s\n", sg);
	IATTR("fw_ver", "%s\n", emu_cfg.fw_ver);
	IATTR("hca_type", "MT%u\n", emu_cfg.vendor_part_id);
	IATTR("hw_rev", "0x0\n");
	IATTR("board_id", "%s\n", emu_cfg.board_id);
	IATTR("node_desc", "rfemu host %u %s\n", emu_cfg.host_id, ib);
	/* libmlx5 picks the device by this modalias (vendor 15b3) */
	IATTR("device/modalias", "pci:v000015B3d%08Xsv000015B3sd00000008bc02sc07i00\n",
	      emu_cfg.vendor_part_id);
	IATTR("device/vendor", "0x15b3\n");
	IATTR("device/device", "0x%04x\n", emu_cfg.vendor_part_id);
	IATTR("device/numa_node", "-1\n");
	IATTR("device/local_cpus", "ffffffff\n");
#undef UATTR
#undef IATTR

	for (unsigned p = 1; p <= emu_cfg.num_ports && !ret; p++)
		ret = build_port(ib, d, p);
	return ret;
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

static void remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int emu_sysfs_build(void)
{
	int ret;

	snprintf(host_dir, sizeof(host_dir), "%s/host-%u", emu_subnet_dir(),
		 emu_cfg.host_id);
	snprintf(sysfs_root, sizeof(sysfs_root), "%s/sys", host_dir);
	/* a host that died earlier with this id may have left its tree */
	remove_tree(host_dir);
	sysfs_owner = getpid();

	ret = attr("class/infiniband_verbs/abi_version", "6\n");
	/* librdmacm's ABI check (rdma-core librdmacm/cma.c, check_abi_version) */
	ret = ret ? ret : attr("class/misc/rdma_cm/abi_version", "%d\n", EMU_CM_ABI_VERSION);
	for (unsigned d = 0; d < emu_cfg.num_devs && !ret; d++)
		ret = build_dev(d);
	if (ret)
		return ret;
	return setenv("SYSFS_PATH", sysfs_root, 1) ? errno : 0;
}

void emu_sysfs_remove(void)
{
	/* a fork()ed child shares the tree; only its creator removes it */
	if (sysfs_owner && sysfs_owner == getpid())
		remove_tree(host_dir);
}
