/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * examples/common.h - what the rdmafast examples share: option parsing,
 * the TCP exchange of connection details (127.0.0.1 by default, bounded
 * timeouts), and bringing up one RC QP with its CQ taken over by rdmafast.
 *
 * Like rdma-core's pingpongs: without a host argument a program serves,
 * with one it connects. Everything here is control path; the data path is
 * in each example.
 */
#ifndef RDMAFAST_EXAMPLES_COMMON_H
#define RDMAFAST_EXAMPLES_COMMON_H

/* getaddrinfo, usleep, lrand48, htobe64: include this header first */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdmafast/verbs.h>

#define EX_TIMEOUT_MS 30000	/* every wait in the examples is bounded */

/* ---- options ------------------------------------------------------------ */

struct ex_opts {
	const char *dev;	/* -d: device name, default the first */
	int port;		/* -p: TCP port */
	int gid_index;		/* -g: GID index, -1 = none (IB, one subnet) */
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
		"  -g, --gid-idx N     GID index (default: none; needed on RoCE)\n"
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

/* ---- TCP exchange ------------------------------------------------------- */

/* Wait until fd is readable/writable (events), at most ms. 0 or -ETIMEDOUT. */
static inline int ex_wait_fd(int fd, short events, int ms)
{
	struct pollfd p = { fd, events, 0 };
	int r = poll(&p, 1, ms);

	return r == 1 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

/*
 * ex_tcp_connect - serve (host NULL: listen on port, accept one peer) or
 * connect to host:port, retrying while the server is not up yet. Returns
 * a connected socket or -errno; gives up after EX_TIMEOUT_MS.
 */
static inline int ex_tcp_connect(const char *host, int port)
{
	long end = ex_now_us() + EX_TIMEOUT_MS * 1000L;
	char service[16];
	struct addrinfo hints, *res = NULL;
	int fd = -1, ret;

	snprintf(service, sizeof(service), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (!host) {
		int one = 1, lfd;

		hints.ai_flags = AI_PASSIVE;
		ret = getaddrinfo(NULL, service, &hints, &res);
		if (ret)
			return -EINVAL;
		lfd = socket(res->ai_family, res->ai_socktype, 0);
		if (lfd < 0 ||
		    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, res->ai_addr, res->ai_addrlen) || listen(lfd, 1)) {
			ret = -errno;
			freeaddrinfo(res);
			if (lfd >= 0)
				close(lfd);
			return ret;
		}
		freeaddrinfo(res);
		ret = ex_wait_fd(lfd, POLLIN, EX_TIMEOUT_MS);
		if (!ret) {
			fd = accept(lfd, NULL, NULL);
			ret = fd < 0 ? -errno : 0;
		}
		close(lfd);
		return ret ? ret : fd;
	}
	ret = getaddrinfo(host, service, &hints, &res);
	if (ret)
		return -EHOSTUNREACH;
	for (;;) {
		fd = socket(res->ai_family, res->ai_socktype, 0);
		if (fd < 0)
			break;
		if (!connect(fd, res->ai_addr, res->ai_addrlen))
			break;
		close(fd);
		fd = -1;
		if (ex_now_us() > end)
			break;
		usleep(50000);	/* the server may not be listening yet */
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : -ETIMEDOUT;
}

/* Send or receive exactly n bytes within the timeout. */
static inline int ex_xfer(int fd, void *buf, size_t n, int recv_side)
{
	uint8_t *p = (uint8_t *)buf;

	while (n) {
		ssize_t k;
		int ret = ex_wait_fd(fd, recv_side ? POLLIN : POLLOUT, EX_TIMEOUT_MS);

		if (ret)
			return ret;
		k = recv_side ? recv(fd, p, n, 0) : send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return k == 0 ? -ECONNRESET : -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * What each side tells the other, in network byte order on the wire:
 * where its QP is, and one registered buffer the peer may access.
 */
struct ex_peer_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t lid;
	uint32_t rkey;
	uint64_t addr;
	uint64_t size;
	uint8_t  gid[16];
};

static inline int ex_exchange(int fd, const struct ex_peer_info *mine,
			      struct ex_peer_info *theirs)
{
	struct ex_peer_info w = *mine, r;
	int ret;

	w.qpn = htonl(w.qpn);
	w.psn = htonl(w.psn);
	w.lid = htonl(w.lid);
	w.rkey = htonl(w.rkey);
	w.addr = htobe64(w.addr);
	w.size = htobe64(w.size);
	ret = ex_xfer(fd, &w, sizeof(w), 0);
	if (!ret)
		ret = ex_xfer(fd, &r, sizeof(r), 1);
	if (ret)
		return ret;
	theirs->qpn = ntohl(r.qpn);
	theirs->psn = ntohl(r.psn);
	theirs->lid = ntohl(r.lid);
	theirs->rkey = ntohl(r.rkey);
	theirs->addr = be64toh(r.addr);
	theirs->size = be64toh(r.size);
	memcpy(theirs->gid, r.gid, sizeof(r.gid));
	return 0;
}

/* A one-byte barrier: both sides send a byte and wait for the other's. */
static inline int ex_sync(int fd, uint8_t v)
{
	uint8_t r = 0;
	int ret = ex_xfer(fd, &v, 1, 0);

	if (!ret)
		ret = ex_xfer(fd, &r, 1, 1);
	if (!ret && r != v)
		ret = -EPROTO;
	return ret;
}

/* ---- RDMA setup --------------------------------------------------------- */

struct ex_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct rf_qp qp;
	uint8_t *buf;
	size_t buf_size;
	struct ibv_mr *mr;
	struct ex_peer_info peer;
	int sock;
};

#define EX_CHECK(expr, what)                                                     \
	do {                                                                     \
		int ex_ret_ = (expr);                                            \
		if (ex_ret_) {                                                   \
			fprintf(stderr, "%s: %s\n", what, strerror(ex_ret_ < 0 ? -ex_ret_ : ex_ret_)); \
			return -1;                                               \
		}                                                                \
	} while (0)

/*
 * ex_setup - open the device, register buf_size bytes, create a CQ
 * (with a completion channel when events), an RC QP sized for max_wr
 * WQEs and max_inline bytes inline, exchange details with the peer over
 * TCP and connect. Returns 0 or -1 (after printing why).
 */
static inline int ex_setup(struct ex_ctx *x, const struct ex_opts *o, size_t buf_size,
			   uint32_t max_wr, uint32_t max_inline)
{
	struct ibv_device **list;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct ex_peer_info me;
	struct ibv_port_attr pa;
	int n = 0, i;

	memset(x, 0, sizeof(*x));
	x->sock = -1;
	list = ibv_get_device_list(&n);
	if (!list || !n) {
		fprintf(stderr, "no RDMA device found (on the emulator: run under build/rfemu)\n");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!o->dev || !strcmp(ibv_get_device_name(list[i]), o->dev))
			break;
	if (i == n) {
		fprintf(stderr, "device %s not found\n", o->dev);
		ibv_free_device_list(list);
		return -1;
	}
	x->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!x->ctx) {
		fprintf(stderr, "cannot open the device\n");
		return -1;
	}
	EX_CHECK(rf_device_check_ibv(x->ctx), "rdmafast needs an mlx5 device");
	x->pd = ibv_alloc_pd(x->ctx);
	if (!x->pd)
		EX_CHECK(errno ? errno : ENOMEM, "ibv_alloc_pd");
	x->buf_size = buf_size < 4096 ? 4096 : buf_size;
	x->buf = (uint8_t *)aligned_alloc(4096, (x->buf_size + 4095) & ~(size_t)4095);
	if (!x->buf)
		EX_CHECK(ENOMEM, "buffer");
	memset(x->buf, 0, x->buf_size);
	x->mr = ibv_reg_mr(x->pd, x->buf, x->buf_size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!x->mr)
		EX_CHECK(errno ? errno : ENOMEM, "ibv_reg_mr");
	if (o->events) {
		x->ch = ibv_create_comp_channel(x->ctx);
		if (!x->ch)
			EX_CHECK(errno ? errno : ENOMEM, "ibv_create_comp_channel");
	}
	EX_CHECK(rf_cq_create_ibv(&x->cq, &x->ibcq, x->ctx, (int)(2 * max_wr + 16), x->ch, 0),
		 "CQ");
	memset(&qa, 0, sizeof(qa));
	qa.pd = x->pd;
	qa.send_cq = x->ibcq;
	qa.recv_cq = x->ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = max_wr;
	qa.max_recv_wr = max_wr;
	qa.max_inline_data = max_inline;
	EX_CHECK(rf_qp_create_ibv(&x->qp, &qa), "QP");
	EX_CHECK(rf_cq_attach(&x->cq, x->qp.qpn, &x->qp.sq, &x->qp.rq, NULL), "attach");

	EX_CHECK(ibv_query_port(x->ctx, (uint8_t)o->ib_port, &pa), "ibv_query_port");
	memset(&me, 0, sizeof(me));
	me.qpn = x->qp.qpn;
	srand48(getpid() * (long)time(NULL));
	me.psn = (uint32_t)lrand48() & 0xffffff;
	me.lid = pa.lid;
	me.rkey = x->mr->rkey;
	me.addr = (uint64_t)(uintptr_t)x->buf;
	me.size = x->buf_size;
	if (o->gid_index >= 0) {
		union ibv_gid g;

		EX_CHECK(ibv_query_gid(x->ctx, (uint8_t)o->ib_port, o->gid_index, &g),
			 "ibv_query_gid");
		memcpy(me.gid, g.raw, 16);
	}
	x->sock = ex_tcp_connect(o->host, o->port);
	if (x->sock < 0)
		EX_CHECK(x->sock, o->host ? "connecting to the server" : "waiting for a client");
	EX_CHECK(ex_exchange(x->sock, &me, &x->peer), "exchanging QP details");

	memset(&ca, 0, sizeof(ca));
	ca.port = (uint8_t)o->ib_port;
	ca.gid_index = o->gid_index;
	ca.psn = me.psn;
	memset(&peer, 0, sizeof(peer));
	peer.qpn = x->peer.qpn;
	peer.psn = x->peer.psn;
	peer.lid = (uint16_t)x->peer.lid;
	memcpy(peer.gid.raw, x->peer.gid, 16);
	EX_CHECK(rf_qp_connect_ibv(&x->qp, &ca, &peer), "connecting the QP");
	/* both QPs must be ready to receive before either side sends */
	EX_CHECK(ex_sync(x->sock, 'R'), "sync");
	return 0;
}

static inline void ex_teardown(struct ex_ctx *x)
{
	if (x->sock >= 0)
		close(x->sock);
	if (x->qp.ibqp) {
		rf_cq_detach(&x->cq, x->qp.qpn);
		rf_qp_destroy_ibv(&x->qp);
	}
	if (x->ibcq)
		ibv_destroy_cq(x->ibcq);
	if (x->ch)
		ibv_destroy_comp_channel(x->ch);
	if (x->mr)
		ibv_dereg_mr(x->mr);
	free(x->buf);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->ctx)
		ibv_close_device(x->ctx);
}

/*
 * ex_wait_wc - poll the CQ until one record arrives and return it in *wc
 * (0), or -ETIMEDOUT. With a completion channel, sleep in it between
 * polls: arm, poll once more (a CQE that arrived before the arm raises no
 * event), then wait for the event.
 */
static inline int ex_wait_wc(struct ex_ctx *x, struct rf_wc *wc)
{
	long end = ex_now_us() + EX_TIMEOUT_MS * 1000L;

	for (;;) {
		if (rf_cq_poll(&x->cq, wc, 1))
			return 0;
		if (ex_now_us() > end)
			return -ETIMEDOUT;
		if (x->ch) {
			int ret;

			rf_cq_arm(&x->cq, 0);
			if (rf_cq_poll(&x->cq, wc, 1))
				return 0;
			ret = ex_wait_fd(x->ch->fd, POLLIN, EX_TIMEOUT_MS);
			if (ret)
				return ret;
			ret = rf_cq_get_event_ibv(&x->cq, x->ch);
			if (ret)
				return ret;
		}
	}
}

#endif /* RDMAFAST_EXAMPLES_COMMON_H */
