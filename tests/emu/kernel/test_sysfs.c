/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_sysfs.c - the emulated HCA's sysfs and /dev/infiniband, reached the
 * ways middleware reaches a real machine's: open and openat, stat, lstat,
 * statx and access, readlink and realpath from the class directory to the
 * PCI function, opendir, scandir, glob and nftw, chdir.  The port files
 * must say what ibv_query_port() says.  Runs under build/rfemu.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <glob.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "emu_test.h"

#define IB	"/sys/class/infiniband"
#define DEV0	IB "/mlx5_0"
#define PORT1	DEV0 "/ports/1"

/* what code built with _FORTIFY_SOURCE calls (UCX: __realpath_chk) */
extern int __openat_2(int dirfd, const char *path, int flags);
extern char *__realpath_chk(const char *path, char *resolved, size_t len);
extern ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
extern char *__getcwd_chk(char *buf, size_t len, size_t buflen);

/* The file's content, newline included; "" (and errno) if unreadable. */
static const char *slurp(const char *path)
{
	static char buf[4][1024];
	static unsigned next;
	char *b = buf[next++ % 4];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(buf[0]) - 1);

	if (fd >= 0)
		close(fd);
	b[n < 0 ? 0 : n] = 0;
	return b;
}

static bool dir_has(const char *dir, const char *name, unsigned char type)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	cr_assert(d, "opendir %s: %s", dir, strerror(errno));
	while ((e = readdir(d)))
		if (!strcmp(e->d_name, name))
			found = e->d_type == type;
	closedir(d);
	return found;
}

TestSuite(sysfs, .timeout = 60);

Test(sysfs, libibverbs_names_the_real_paths)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	cr_assert(list && list[0]);
	cr_expect_str_eq(list[0]->ibdev_path, DEV0);
	cr_expect_str_eq(list[0]->dev_path, "/sys/class/infiniband_verbs/uverbs0");
	cr_expect_str_eq(list[0]->dev_name, "uverbs0");
	ibv_free_device_list(list);
}

Test(sysfs, opendir_lists_every_class_and_dev)
{
	cr_expect(dir_has(IB, "mlx5_0", DT_LNK));
	cr_expect(dir_has("/sys/class/infiniband_verbs", "uverbs0", DT_LNK));
	cr_expect(dir_has("/sys/class/infiniband_verbs", "abi_version", DT_REG));
	cr_expect(dir_has("/sys/class/infiniband_mad", "umad0", DT_LNK));
	cr_expect(dir_has("/sys/class/infiniband_mad", "issm0", DT_LNK));
	cr_expect(dir_has("/sys/class/infiniband_mad", "abi_version", DT_REG));
	cr_expect(dir_has("/dev/infiniband", "uverbs0", DT_REG));
	cr_expect(dir_has("/dev/infiniband", "umad0", DT_REG));
	cr_expect_str_eq(slurp("/sys/class/infiniband_verbs/abi_version"), "6\n");
	cr_expect_str_eq(slurp("/sys/class/infiniband_mad/abi_version"), "5\n");
	/* the machine's own classes and devices stay as they are */
	cr_expect(dir_has("/sys/class/net", "lo", DT_LNK));
	cr_expect(dir_has("/sys/devices", "system", DT_DIR));
	cr_expect(dir_has("/sys/devices", "virtual", DT_DIR));
}

Test(sysfs, scandir_and_glob)
{
	struct dirent **list;
	glob_t g;
	int n = scandir(IB, &list, NULL, alphasort);

	cr_assert_eq(n, 3, "scandir: %d (%s)", n, strerror(errno));
	cr_expect_str_eq(list[2]->d_name, "mlx5_0");
	while (n--)
		free(list[n]);
	free(list);

	/* glob builds its names from the pattern: /sys/..., not the tree's */
	cr_assert_eq(glob(IB "/*/ports/*/state", 0, NULL, &g), 0);
	cr_assert_eq(g.gl_pathc, 1);
	cr_expect_str_eq(g.gl_pathv[0], PORT1 "/state");
	cr_expect_str_eq(slurp(g.gl_pathv[0]), "4: ACTIVE\n");
	globfree(&g);
	cr_assert_eq(glob("/dev/infiniband/uverbs*", 0, NULL, &g), 0);
	cr_expect_eq(g.gl_pathc, 1);
	cr_expect_str_eq(g.gl_pathv[0], "/dev/infiniband/uverbs0");
	globfree(&g);
	cr_expect_eq(glob(IB "/mlx4_*", 0, NULL, &g), GLOB_NOMATCH);
	globfree(&g);
}

Test(sysfs, class_entries_are_links_into_the_pci_function)
{
	char link[PATH_MAX], real[PATH_MAX], uv[PATH_MAX];
	struct stat st;
	unsigned dom, bus, slot, fn;
	ssize_t n;

	cr_assert_eq(lstat(DEV0, &st), 0);
	cr_expect(S_ISLNK(st.st_mode));
	cr_assert_eq(stat(DEV0, &st), 0);
	cr_expect(S_ISDIR(st.st_mode));

	n = readlink(DEV0, link, sizeof(link) - 1);
	cr_assert_gt(n, 0, "readlink: %s", strerror(errno));
	link[n] = 0;
	cr_expect_eq(sscanf(link, "../../devices/pci%x:%x/%x:%x:%x.%x/infiniband/mlx5_0",
			    &dom, &bus, &dom, &bus, &slot, &fn), 6, "link %s", link);

	/* middleware resolves .../device and takes the PCI address off it */
	cr_assert(realpath(DEV0 "/device", real), "realpath: %s", strerror(errno));
	cr_expect_eq(sscanf(real, "/sys/devices/pci%x:%x/%x:%x:%x.%x",
			    &dom, &bus, &dom, &bus, &slot, &fn), 6, "real %s", real);
	cr_expect_eq(fn, 0);
	cr_expect(!strchr(strrchr(real, '/'), 'i'), "not the function: %s", real);

	/* the same through the _FORTIFY_SOURCE entry points */
	cr_assert(__realpath_chk(DEV0 "/device", uv, sizeof(uv)));
	cr_expect_str_eq(uv, real);
	n = __readlink_chk(DEV0, uv, sizeof(uv) - 1, sizeof(uv));
	cr_assert_gt(n, 0);
	uv[n] = 0;
	cr_expect_str_eq(uv, link);

	/* the verbs device hangs off the same function */
	cr_assert(realpath("/sys/class/infiniband_verbs/uverbs0/device", uv));
	cr_expect_str_eq(uv, real);
	char *canon = canonicalize_file_name(DEV0 "/device/infiniband/mlx5_0/device");

	cr_assert(canon);
	cr_expect_str_eq(canon, real);
	free(canon);

	/* and so, by the kernel's relative links, the class directory */
	cr_assert(realpath(DEV0 "/subsystem", uv));
	cr_expect_str_eq(uv, IB);
}

Test(sysfs, the_pci_function_is_a_connectx)
{
	struct ibv_context *ctx = et_open();
	struct ibv_device_attr da;
	char real[PATH_MAX], path[PATH_MAX + 32];
	int node;

	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	cr_assert(realpath(DEV0 "/device", real));
#define PCI(name) (snprintf(path, sizeof(path), "%s/%s", real, name), slurp(path))
	cr_expect_str_eq(PCI("vendor"), "0x15b3\n");
	cr_expect_eq(strtoul(PCI("device"), NULL, 16), da.vendor_part_id);
	cr_expect_str_eq(PCI("subsystem_vendor"), "0x15b3\n");
	cr_expect_neq(strtoul(PCI("subsystem_device"), NULL, 16), 0);
	cr_expect_str_eq(PCI("class"), "0x020700\n");
	cr_expect_eq(sscanf(PCI("numa_node"), "%d", &node), 1);
	cr_expect_geq(node, -1);
	cr_expect_neq(PCI("local_cpus")[0], 0);
	cr_expect_neq(PCI("local_cpulist")[0], 0);
	cr_expect_str_eq(PCI("max_link_speed"), "16.0 GT/s PCIe\n");	/* CX-6: Gen4 */
	cr_expect_str_eq(PCI("current_link_speed"), "16.0 GT/s PCIe\n");
	cr_expect_str_eq(PCI("max_link_width"), "16\n");
	cr_expect_str_eq(PCI("current_link_width"), "16\n");
	cr_expect(!strncmp(PCI("modalias"), "pci:v000015B3d0000101B", 22), "%s",
		  PCI("modalias"));
	cr_expect(!strncmp(PCI("resource"), "0x", 2));
	/* the driver is named by its link's last component */
	char drv[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/driver", real);
	n = readlink(path, drv, sizeof(drv) - 1);
	cr_assert_gt(n, 0);
	drv[n] = 0;
	cr_expect_str_eq(basename(drv), "mlx5_core");
	/* the same files through the class path, as UCX reads them */
	cr_expect_str_eq(slurp(DEV0 "/device/vendor"), "0x15b3\n");
	cr_expect_str_eq(slurp("/sys/class/infiniband_verbs/uverbs0/device/vendor"),
			 "0x15b3\n");
#undef PCI
	ibv_close_device(ctx);
}

Test(sysfs, at_calls_relative_to_a_directory)
{
	int d = open(DEV0, O_RDONLY | O_DIRECTORY);
	struct stat st;
	char buf[16] = { 0 };
	int fd;

	cr_assert_geq(d, 0, "open: %s", strerror(errno));
	fd = openat(d, "device/vendor", O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(read(fd, buf, sizeof(buf) - 1), 7);
	cr_expect_str_eq(buf, "0x15b3\n");
	close(fd);
	cr_expect_eq(fstatat(d, "ports/1/lid", &st, 0), 0);
	cr_expect_eq(faccessat(d, "node_guid", R_OK, 0), 0);
	cr_expect_eq(faccessat(AT_FDCWD, DEV0 "/node_guid", R_OK, 0), 0);
	cr_expect_eq(openat(d, "no_such_attr", O_RDONLY), -1);
	cr_expect_eq(errno, ENOENT);
	close(d);

	struct statx sx;

	cr_assert_eq(statx(AT_FDCWD, DEV0, AT_SYMLINK_NOFOLLOW, STATX_MODE, &sx), 0);
	cr_expect(S_ISLNK(sx.stx_mode));

	/* the _FORTIFY_SOURCE entry point of openat() */
	fd = __openat_2(AT_FDCWD, DEV0 "/node_type", O_RDONLY);
	cr_expect_geq(fd, 0, "__openat_2: %s", strerror(errno));
	close(fd);

	/* ls -l asks for a security label: there is none, but the file is */
	char label[64];

	cr_expect_eq(lgetxattr(DEV0, "security.selinux", label, sizeof(label)), -1);
	cr_expect_neq(errno, ENOENT);
	cr_expect_geq(llistxattr(DEV0 "/node_type", label, sizeof(label)), 0);
}

Test(sysfs, port_files_say_what_query_port_says)
{
	struct ibv_context *ctx = et_open();
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint16_t pkey;
	char want[128];

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	snprintf(want, sizeof(want), "%d: ACTIVE\n", pa.state);
	cr_expect_str_eq(slurp(PORT1 "/state"), want);
	cr_expect_eq(strtoul(slurp(PORT1 "/phys_state"), NULL, 10), pa.phys_state);
	cr_expect_str_eq(slurp(PORT1 "/phys_state"), "5: LinkUp\n");
	cr_expect_eq(strtoul(slurp(PORT1 "/lid"), NULL, 16), pa.lid);
	cr_expect_eq(strtoul(slurp(PORT1 "/sm_lid"), NULL, 16), pa.sm_lid);
	cr_expect_eq(strtoul(slurp(PORT1 "/sm_sl"), NULL, 10), pa.sm_sl);
	cr_expect_eq(strtoul(slurp(PORT1 "/lid_mask_count"), NULL, 10), pa.lmc);
	snprintf(want, sizeof(want), "0x%08x\n", pa.port_cap_flags);
	cr_expect_str_eq(slurp(PORT1 "/cap_mask"), want);
	cr_expect_str_eq(slurp(PORT1 "/link_layer"),
			 pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet\n" : "InfiniBand\n");
	/* 4X HDR (the ConnectX-6 profile), the speed and width query_port reports */
	cr_expect_eq(pa.active_width, 2);
	cr_expect_eq(pa.active_speed, 64);
	cr_expect_str_eq(slurp(PORT1 "/rate"), "200 Gb/sec (4X HDR)\n");

	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	snprintf(want, sizeof(want), "%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		 gid.raw[0], gid.raw[1], gid.raw[2], gid.raw[3], gid.raw[4],
		 gid.raw[5], gid.raw[6], gid.raw[7], gid.raw[8], gid.raw[9],
		 gid.raw[10], gid.raw[11], gid.raw[12], gid.raw[13], gid.raw[14],
		 gid.raw[15]);
	cr_expect_str_eq(slurp(PORT1 "/gids/0"), want);
	cr_expect_str_eq(slurp(PORT1 "/gid_attrs/types/0"), "IB/RoCE v1\n");
	cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	snprintf(want, sizeof(want), "0x%04x\n", be16toh(pkey));
	cr_expect_str_eq(slurp(PORT1 "/pkeys/0"), want);
	/* one entry per table slot query_port announces, none beyond */
	snprintf(want, sizeof(want), PORT1 "/pkeys/%d", pa.pkey_tbl_len);
	cr_expect_neq(access(want, F_OK), 0);
	snprintf(want, sizeof(want), PORT1 "/gids/%d", pa.gid_tbl_len);
	cr_expect_neq(access(want, F_OK), 0);
	cr_expect_str_eq(slurp(PORT1 "/counters/port_xmit_data"), "0\n");
	cr_expect_str_eq(slurp(PORT1 "/hw_counters/out_of_sequence"), "0\n");
	cr_expect(dir_has(PORT1 "/gid_attrs", "ndevs", DT_DIR));
	ibv_close_device(ctx);
}

Test(sysfs, device_nodes_agree_with_their_dev_files)
{
	struct stat st;
	unsigned maj, min;

	cr_assert_eq(sscanf(slurp("/sys/class/infiniband_verbs/uverbs0/dev"), "%u:%u",
			    &maj, &min), 2);
	cr_assert_eq(stat("/dev/infiniband/uverbs0", &st), 0);
	cr_expect(S_ISCHR(st.st_mode));
	cr_expect_eq(st.st_rdev, makedev(maj, min));
	cr_expect_eq(access("/dev/infiniband/uverbs0", R_OK | W_OK), 0);

	cr_assert_eq(sscanf(slurp("/sys/class/infiniband_mad/umad0/dev"), "%u:%u",
			    &maj, &min), 2);
	cr_expect_eq(maj, 231);
	cr_expect_eq(min, 0);
	cr_assert_eq(lstat("/dev/infiniband/umad0", &st), 0);
	cr_expect(S_ISCHR(st.st_mode));
	cr_expect_eq(st.st_rdev, makedev(maj, min));
	cr_assert_eq(sscanf(slurp("/sys/class/infiniband_mad/issm0/dev"), "%u:%u",
			    &maj, &min), 2);
	cr_expect_eq(min, 64);
	cr_expect_str_eq(slurp("/sys/class/infiniband_mad/umad0/ibdev"), "mlx5_0\n");
	cr_expect_str_eq(slurp("/sys/class/infiniband_mad/umad0/port"), "1\n");

	struct statx sx;

	cr_assert_eq(statx(AT_FDCWD, "/dev/infiniband/issm0", 0, STATX_BASIC_STATS, &sx), 0);
	cr_expect(S_ISCHR(sx.stx_mode));
	cr_expect_eq(sx.stx_rdev_major, 231);
	cr_expect_eq(sx.stx_rdev_minor, 64);
}

Test(sysfs, refusals)
{
	int fd;

	/* the MAD nodes have their driver (mad/umad.c, test_umad.c) */
	fd = open("/dev/infiniband/umad0", O_RDWR);
	cr_expect_geq(fd, 0, "%s", strerror(errno));
	close(fd);
	/* uverbs needs read and write, as the kernel's */
	cr_expect_eq(open("/dev/infiniband/uverbs0", O_RDONLY), -1);
	cr_expect_eq(errno, EACCES);
	cr_expect_eq(open("/dev/infiniband/uverbs1", O_RDWR), -1);
	cr_expect_eq(errno, ENOENT);
	cr_expect_eq(open(IB "/mlx5_1/node_type", O_RDONLY), -1);
	cr_expect_eq(errno, ENOENT);
	cr_expect_eq(access("/sys/class/infiniband_verbs/uverbs1", F_OK), -1);
	cr_expect_eq(errno, ENOENT);
	/* a longer name is not below the prefix */
	cr_expect_eq(access("/sys/class/infiniband_verbsX", F_OK), -1);
	cr_expect_eq(errno, ENOENT);
	/* attributes are read-only, for root too */
	cr_expect_eq(open(DEV0 "/node_desc", O_WRONLY), -1);
	cr_expect_eq(errno, EACCES);
	cr_expect_eq(openat(AT_FDCWD, PORT1 "/new_file", O_RDONLY | O_CREAT, 0644), -1);
	cr_expect_eq(errno, EACCES);
	cr_expect_null(fopen(PORT1 "/state", "r+"));
	cr_expect_eq(errno, EACCES);
	cr_expect_null(fopen(PORT1 "/no_such_attr", "r+"));
	cr_expect_eq(errno, ENOENT);
	cr_expect_null(fopen(PORT1 "/no_such_attr", "w"));
	cr_expect_eq(errno, EACCES);
	cr_expect_str_eq(slurp(PORT1 "/state"), "4: ACTIVE\n");
	char buf[8];

	cr_expect_eq(readlink(DEV0 "/node_guid", buf, sizeof(buf)), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_null(realpath(IB "/mlx5_1", NULL));
	cr_expect_eq(errno, ENOENT);
	cr_expect_null(opendir(IB "/mlx5_1"));
	cr_expect_eq(errno, ENOENT);
}

static int ftw_seen;

static int ftw_fn(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	cr_expect(!strncmp(path, PORT1, strlen(PORT1)), "walked %s", path);
	if (!strcmp(path + f->base, "rate") && flag == FTW_F)
		ftw_seen++;
	return 0;
}

Test(sysfs, nftw_and_chdir)
{
	char cwd[PATH_MAX];

	cr_assert_eq(nftw(PORT1, ftw_fn, 8, FTW_PHYS), 0);
	cr_expect_eq(ftw_seen, 1);

	/* a shell's "cd /sys/class/infiniband; for d in *" (ibstatus) */
	cr_assert_eq(chdir(IB), 0, "chdir: %s", strerror(errno));
	cr_assert(getcwd(cwd, sizeof(cwd)));
	cr_expect_str_eq(cwd, IB);
	cr_assert(__getcwd_chk(cwd, sizeof(cwd), sizeof(cwd)));
	cr_expect_str_eq(cwd, IB);
	cr_expect_str_eq(slurp("mlx5_0/node_type"), "1: CA\n");
	cr_expect(dir_has(".", "mlx5_0", DT_LNK));
}

/*
 * A host's tree outlives it, and the next process given its slot with the
 * same configuration takes it as it is: loading the library writes no
 * file (pyverbs execs `ls` and `ip` for each GID of each test, and a RoCE
 * port's GID table alone is 768 files).  Another configuration gets a
 * tree of its own.  Each host here is cat(1), which prints its node_desc
 * ("rfemu host K mlx5_0") and port 1's link_layer.
 */
struct child_host {
	unsigned id;
	char link_layer[16];
};

static struct child_host cat_host(const char *link_layer)
{
	char *const argv[] = { "cat", DEV0 "/node_desc", PORT1 "/link_layer", NULL };
	const char *was = getenv("RFEMU_LINK_LAYER");
	char saved[16] = "", out[128];
	struct child_host h = { 0 };
	int st;

	/* what the child's library reads: this process's own is loaded */
	snprintf(saved, sizeof(saved), "%s", was ? was : "");
	if (link_layer)
		setenv("RFEMU_LINK_LAYER", link_layer, 1);
	st = et_run("/bin/cat", argv, 0, out, sizeof(out), 30);
	if (link_layer && was)
		setenv("RFEMU_LINK_LAYER", saved, 1);
	else if (link_layer)
		unsetenv("RFEMU_LINK_LAYER");
	cr_assert_eq(st, 0, "cat: status %d", st);
	cr_assert_eq(sscanf(out, "rfemu host %u mlx5_0\n%15s", &h.id, h.link_layer), 2,
		     "cat printed \"%s\"", out);
	return h;
}

/* A file of host id's tree by its real path (subnet/subnet.c's directory). */
static struct stat tree_file(unsigned id, const char *rel)
{
	const char *dir = getenv("RFEMU_STATE_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");
	char path[PATH_MAX];
	struct stat st;

	if (dir && *dir)
		snprintf(path, sizeof(path), "%s/host-%u/%s", dir, id, rel);
	else if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/rfemu/host-%u/%s", xdg, id, rel);
	else
		snprintf(path, sizeof(path), "/tmp/rfemu-%u/host-%u/%s", (unsigned)getuid(),
			 id, rel);
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st;
}

Test(sysfs, the_next_host_of_a_slot_takes_the_tree_it_finds)
{
	static const char file[] = "sys/class/infiniband_verbs/abi_version";
	const char *ll = strtoul(slurp(PORT1 "/cap_mask"), NULL, 16) & IBV_PORT_IP_BASED_GIDS ?
			 "Ethernet" : "InfiniBand";
	struct child_host first = cat_host(NULL), next = first;
	struct stat before = tree_file(first.id, file), after;

	cr_expect_str_eq(first.link_layer, ll);
	/* the lowest free slot, unless a parallel test took it meanwhile */
	for (int i = 0; i < 8 && (i == 0 || next.id != first.id); i++)
		next = cat_host(NULL);
	cr_assert_eq(next.id, first.id, "no slot reused in 8 hosts");
	after = tree_file(next.id, file);
	cr_expect_eq(after.st_ino, before.st_ino, "the tree was written again");
	cr_expect_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	cr_expect_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	cr_expect_str_eq(next.link_layer, ll);

	/* the other link layer in the same slot: a tree that says so */
	next = cat_host(strcmp(ll, "Ethernet") ? "eth" : "ib");
	cr_expect_str_neq(next.link_layer, ll);
	next = cat_host(NULL);
	cr_expect_str_eq(next.link_layer, ll);
}

/*
 * Two devices of two ports each: this binary again with RFEMU_DEVICES=2
 * and RFEMU_PORTS=2, running only the sysfs2 suite (which skips on one
 * device).
 */
Test(sysfs, two_devices_of_two_ports)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_DEVICES", "2", 1);
		setenv("RFEMU_PORTS", "2", 1);
		/* a fresh Criterion runner, not one of this runner's workers */
		unsetenv("BXFI_MAP");
		execl("/proc/self/exe", "test_sysfs", "--filter", "sysfs2/*",
		      "--jobs", "1", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

static void two_devices(void)
{
	if (access(IB "/mlx5_1", F_OK))
		cr_skip_test("one device: run by sysfs::two_devices_of_two_ports");
}

TestSuite(sysfs2, .init = two_devices, .timeout = 60);

Test(sysfs2, each_device_is_a_function_of_one_card)
{
	char r0[PATH_MAX], r1[PATH_MAX];
	glob_t g;

	cr_assert(realpath(DEV0 "/device", r0));
	cr_assert(realpath(IB "/mlx5_1/device", r1));
	size_t n = strlen(r0);

	/* 0000:BB:00.0 and 0000:BB:00.1 */
	cr_expect_eq(strncmp(r0, r1, n - 1), 0, "%s %s", r0, r1);
	cr_expect_eq(r0[n - 1], '0');
	cr_expect_eq(r1[n - 1], '1');
	cr_assert_eq(glob(IB "/*/ports/*/state", 0, NULL, &g), 0);
	cr_expect_eq(g.gl_pathc, 4);
	globfree(&g);
}

Test(sysfs2, port_two_of_the_second_device)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	struct stat st;
	unsigned maj, min;

	cr_assert(list && list[0] && list[1]);
	ctx = ibv_open_device(list[1]);
	cr_assert(ctx);
	cr_expect_str_eq(ibv_get_device_name(list[1]), "mlx5_1");
	cr_assert_eq(ibv_query_port(ctx, 2, &pa), 0);
	cr_expect_eq(strtoul(slurp(IB "/mlx5_1/ports/2/lid"), NULL, 16), pa.lid);
	cr_expect_neq(strtoul(slurp(IB "/mlx5_1/ports/1/lid"), NULL, 16), pa.lid);
	cr_expect_eq(access(IB "/mlx5_1/ports/3", F_OK), -1);
	ibv_close_device(ctx);
	ibv_free_device_list(list);

	/* umad numbers ports across devices: mlx5_1 port 2 is umad3 */
	cr_expect_str_eq(slurp("/sys/class/infiniband_mad/umad3/ibdev"), "mlx5_1\n");
	cr_expect_str_eq(slurp("/sys/class/infiniband_mad/umad3/port"), "2\n");
	cr_assert_eq(sscanf(slurp("/sys/class/infiniband_mad/issm3/dev"), "%u:%u",
			    &maj, &min), 2);
	cr_expect_eq(min, 67);
	cr_assert_eq(stat("/dev/infiniband/issm3", &st), 0);
	cr_expect_eq(st.st_rdev, makedev(maj, min));
	cr_assert_eq(stat("/dev/infiniband/uverbs1", &st), 0);
	cr_expect_eq(st.st_rdev, makedev(231, 193));
	cr_expect_eq(access("/dev/infiniband/umad4", F_OK), -1);
}
