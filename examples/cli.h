/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * examples/cli.h - the command line the example programs share, and their
 * clock. Everything RDMA (device setup, the TCP exchange of QP details,
 * connecting) is the installed <rdmafast/connect.h>.
 *
 * Like rdma-core's pingpongs: without a host argument a program serves,
 * with one it connects.
 */
#ifndef RDMAFAST_EXAMPLES_CLI_H
#define RDMAFAST_EXAMPLES_CLI_H

/* clock_gettime, getaddrinfo, getopt_long: include this header first */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif

#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdmafast/connect.h>

/* ---- options ------------------------------------------------------------ */

struct ex_opts {
	const char *dev;	/* -d: device name, default the first */
	int port;		/* -p: TCP port */
	int gid_index;		/* -g: the GRH's source GID (a GRH is sent on RoCE) */
	int ib_port;		/* -i: HCA port */
	const char *host;	/* peer to connect to, NULL = serve */
	long iters;		/* --iters / -n */
	long size;		/* --size / -s */
	int use_inline;		/* --inline */
	int events;		/* --events */
	int batch;		/* --batch */
	int window;		/* --window */
	const char *op;		/* --op */
};

static inline void ex_usage(const char *prog, const char *extra)
{
	fprintf(stderr,
		"usage: %s [options] [host]\n"
		"  without host: serve; with host: connect to it\n"
		"  -d, --dev NAME      RDMA device (default: the first)\n"
		"  -p, --port N        TCP port for the exchange (default 18515)\n"
		"  -g, --gid-idx N     GID index of the GRH, sent on RoCE only (default 0)\n"
		"  -i, --ib-port N     HCA port (default 1)\n"
		"  -n, --iters N       iterations\n"
		"  -s, --size N        message size in bytes\n"
		"%s", prog, extra);
}

static inline int ex_parse(struct ex_opts *o, int argc, char **argv, const char *extra)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "gid-idx", required_argument, NULL, 'g' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "iters", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "inline", no_argument, NULL, 'I' },
		{ "events", no_argument, NULL, 'e' },
		{ "batch", required_argument, NULL, 'b' },
		{ "window", required_argument, NULL, 'w' },
		{ "op", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "d:p:g:i:n:s:Ieb:w:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'p': o->port = atoi(optarg); break;
		case 'g': o->gid_index = atoi(optarg); break;
		case 'i': o->ib_port = atoi(optarg); break;
		case 'n': o->iters = atol(optarg); break;
		case 's': o->size = atol(optarg); break;
		case 'I': o->use_inline = 1; break;
		case 'e': o->events = 1; break;
		case 'b': o->batch = atoi(optarg); break;
		case 'w': o->window = atoi(optarg); break;
		case 'o': o->op = optarg; break;
		default:
			ex_usage(argv[0], extra);
			return -1;
		}
	}
	if (optind < argc)
		o->host = argv[optind++];
	if (optind != argc || o->iters <= 0 || o->size < 0 || o->port <= 0) {
		ex_usage(argv[0], extra);
		return -1;
	}
	return 0;
}

static inline long ex_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000L;
}

/*
 * The numeric address of host for rf_ep_connect(), which takes no names
 * (<rdmafast/connect.h> says why): the first IPv4 or IPv6 address.
 */
static inline int ex_resolve(const char *host, char *out, size_t len)
{
	struct addrinfo hints, *res;
	int ret;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res))
		return -EHOSTUNREACH;
	ret = getnameinfo(res->ai_addr, res->ai_addrlen, out, (socklen_t)len, NULL, 0,
			  NI_NUMERICHOST) ? -EHOSTUNREACH : 0;
	freeaddrinfo(res);
	return ret;
}

/* Print "what: error" for ret (-errno), with the hint -ENODEV needs on the emulated HCA. */
static inline void ex_perror(const char *what, int ret)
{
	fprintf(stderr, "%s: %s%s\n", what, strerror(-ret),
		ret == -ENODEV ? " (on the emulated HCA: run under build/rfemu)" : "");
}

/*
 * ex_start - bring up an RC endpoint as the command line says (device,
 * ports, GID, completion channel) with a buffer of buf_size bytes and
 * max_wr WQEs of up to max_inline bytes inline, then serve or connect.
 * access is what the peer may do to the buffer (RF_ACCESS_REMOTE_*, 0:
 * nothing, only send), qp_access what more the QP allows for memory the
 * program hands out itself (rf_ep_attr). Returns 0, or -1 after printing
 * what failed (the endpoint is closed).
 */
static inline int ex_start(struct rf_ep *e, const struct ex_opts *o, size_t buf_size,
			   uint32_t max_wr, uint32_t max_inline, int access, int qp_access)
{
	struct rf_ep_attr a;
	char addr[64];
	int ret;

	if (o->host && ex_resolve(o->host, addr, sizeof(addr))) {
		fprintf(stderr, "%s: no such host\n", o->host);
		return -1;
	}

	memset(&a, 0, sizeof(a));
	a.dev = o->dev;
	a.port = (uint8_t)o->ib_port;
	a.gid_index = o->gid_index;
	a.buf_size = buf_size;
	a.max_wr = max_wr;
	a.max_inline = max_inline;
	a.events = o->events;
	a.access = access;
	a.qp_access = qp_access;
	ret = rf_ep_open(e, &a);
	if (!ret)
		ret = rf_ep_connect(e, o->host ? addr : NULL, (uint16_t)o->port);
	if (ret) {
		ex_perror(e->failed, ret);
		rf_ep_close(e);
		return -1;
	}
	return 0;
}

#endif /* RDMAFAST_EXAMPLES_CLI_H */
