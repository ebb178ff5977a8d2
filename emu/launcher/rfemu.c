/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rfemu - run a program on the emulated mlx5 HCA.
 *
 *   rfemu [options] -- COMMAND [ARGS...]
 *
 * The launcher only sets the environment (RFEMU_* options, LD_PRELOAD of
 * librfemu.so) and execs COMMAND; every process started that way, and every
 * dynamically linked child it execs, is one host on the emulated subnet.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RFEMU_LIB_DEFAULT
#define RFEMU_LIB_DEFAULT "/usr/local/lib/rdmafast/librfemu.so"
#endif
/*
 * Where an installed launcher finds the library, from its own directory:
 * BINDIR to LIBDIR/rdmafast (emu/emu.mk), so that an rfemu installed under
 * any PREFIX, or moved with its lib/ beside bin/, finds its own library
 * and not the one of the prefix it was built for.
 */
#ifndef RFEMU_LIB_RELATIVE
#define RFEMU_LIB_RELATIVE "../lib/rdmafast/librfemu.so"
#endif

static void usage(FILE *f)
{
	fprintf(f,
"usage: rfemu [options] -- COMMAND [ARGS...]\n"
"Run COMMAND with the unmodified libibverbs/libmlx5 on an emulated mlx5 HCA.\n"
"\n"
"  -d, --devices N       mlx5 devices per host, 1-4 (RFEMU_DEVICES, default 1)\n"
"  -p, --ports N         ports per device, 1-2 (RFEMU_PORTS, default 1)\n"
"  -l, --link-layer L    ib or eth (RoCE v1/v2) (RFEMU_LINK_LAYER, default ib)\n"
"      --part-id ID      the model: 0x1017 ConnectX-5, 0x101b ConnectX-6 (default),\n"
"                        0x101d ConnectX-6 Dx (Ethernet only), 0x1021 ConnectX-7\n"
"                        (RFEMU_PART_ID)\n"
"      --fw-ver X.Y.Z    firmware version (RFEMU_FW_VER)\n"
"      --board-id S      board id (RFEMU_BOARD_ID)\n"
"  -s, --state-dir DIR   the subnet's shared state (RFEMU_STATE_DIR, default\n"
"                        $XDG_RUNTIME_DIR/rfemu or /tmp/rfemu-$UID)\n"
"      --lib PATH        librfemu.so to preload (RFEMU_LIB)\n"
"      --cqe-compress M  compressed CQEs on CQs that ask: auto, always, never\n"
"                        or load (RFEMU_CQE_COMPRESS, default auto)\n"
"  -v, --debug           trace uverbs commands on stderr (RFEMU_DEBUG=1)\n"
"  -h, --help            this text\n");
}

/* dir/name into buf when it fits and is readable. */
static int try_lib(char *buf, size_t len, size_t dirlen, const char *name)
{
	if (dirlen + 1 + strlen(name) >= len)
		return 0;
	buf[dirlen] = '/';
	strcpy(buf + dirlen + 1, name);
	return access(buf, R_OK) == 0;
}

/*
 * RFEMU_LIB, else librfemu.so beside this executable (the build tree),
 * else RFEMU_LIB_RELATIVE from its directory (an installed launcher,
 * whatever the prefix), else the path of the prefix it was built for.
 */
static const char *find_lib(char *buf, size_t len)
{
	const char *env = getenv("RFEMU_LIB");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n > 0) {
		buf[n] = 0;
		slash = strrchr(buf, '/');
		if (slash && (try_lib(buf, len, (size_t)(slash - buf), "librfemu.so") ||
			      try_lib(buf, len, (size_t)(slash - buf), RFEMU_LIB_RELATIVE)))
			return buf;
	}
	return RFEMU_LIB_DEFAULT;
}

static int set(const char *name, const char *value)
{
	if (setenv(name, value, 1)) {
		perror("rfemu: setenv");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_PART = 256, OPT_FW, OPT_BOARD, OPT_LIB, OPT_ZIP };
	static const struct option opts[] = {
		{ "devices", required_argument, NULL, 'd' },
		{ "ports", required_argument, NULL, 'p' },
		{ "link-layer", required_argument, NULL, 'l' },
		{ "part-id", required_argument, NULL, OPT_PART },
		{ "fw-ver", required_argument, NULL, OPT_FW },
		{ "board-id", required_argument, NULL, OPT_BOARD },
		{ "state-dir", required_argument, NULL, 's' },
		{ "lib", required_argument, NULL, OPT_LIB },
		{ "cqe-compress", required_argument, NULL, OPT_ZIP },
		{ "debug", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char libbuf[PATH_MAX], abslib[PATH_MAX];
	const char *lib = NULL, *old;
	char *preload;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "+d:p:l:s:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': r |= set("RFEMU_DEVICES", optarg); break;
		case 'p': r |= set("RFEMU_PORTS", optarg); break;
		case 'l': r |= set("RFEMU_LINK_LAYER", optarg); break;
		case 's': r |= set("RFEMU_STATE_DIR", optarg); break;
		case 'v': r |= set("RFEMU_DEBUG", "1"); break;
		case OPT_PART: r |= set("RFEMU_PART_ID", optarg); break;
		case OPT_FW: r |= set("RFEMU_FW_VER", optarg); break;
		case OPT_BOARD: r |= set("RFEMU_BOARD_ID", optarg); break;
		case OPT_LIB: lib = optarg; break;
		case OPT_ZIP: r |= set("RFEMU_CQE_COMPRESS", optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (r)
		return 1;
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!lib)
		lib = find_lib(libbuf, sizeof(libbuf));
	/* LD_PRELOAD wants an absolute path: the child may chdir */
	if (!realpath(lib, abslib)) {
		fprintf(stderr, "rfemu: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	old = getenv("LD_PRELOAD");
	if (asprintf(&preload, "%s%s%s", abslib, old && *old ? ":" : "",
		     old ? old : "") < 0)
		return 1;
	if (set("LD_PRELOAD", preload) || set("RFEMU_LIB", abslib))
		return 1;
	free(preload);
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "rfemu: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
