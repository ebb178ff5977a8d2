/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/tcp.h - the TCP side channel of connect.h: listen, accept,
 * connect, move bytes and agree on a step, every wait bounded (ms 0:
 * RF_TCP_TIMEOUT_MS). Sockets only, no verbs: a program that brings its
 * QPs up itself may use it alone. Everything here is control path and
 * returns 0 or -errno. Manual: rf_verbs(3).
 */
#ifndef RDMAFAST_TCP_H
#define RDMAFAST_TCP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmafast/compiler.h>
#include <rdmafast/detail/tcp.h>

RF_BEGIN_DECLS

/* How long any one wait of this header lasts when the caller gives 0. */
#define RF_TCP_TIMEOUT_MS 30000

/* Wait until fd is ready for events, at most ms: 0 or -ETIMEDOUT/-errno. */
static inline RF_COLD int rf_tcp_wait(int fd, short events, int ms)
{
	struct pollfd p;
	int r;

	p.fd = fd;
	p.events = events;
	p.revents = 0;
	r = poll(&p, 1, ms);
	return r == 1 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

/*
 * rf_tcp_listen - listen on TCP port (every address, IPv6 and IPv4) with
 * room for backlog peers not yet accepted (0: SOMAXCONN). The socket
 * stays open until you close() it: accept one peer after another on it
 * with rf_tcp_accept(), and a client that connects while the server is
 * busy with another waits in the backlog instead of retrying. Returns
 * the listening socket or -errno (-EADDRINUSE: the port is taken).
 */
static inline RF_COLD int rf_tcp_listen(uint16_t port, int backlog)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	int one = 1, zero = 0, lfd, ret, v6;

	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_port = htons(port);
	a6.sin6_addr = in6addr_any;
	memset(&a4, 0, sizeof(a4));
	a4.sin_family = AF_INET;
	a4.sin_port = htons(port);
	a4.sin_addr.s_addr = htonl(INADDR_ANY);

	/* one dual-stack socket; IPv4 alone where IPv6 is off */
	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	if (lfd >= 0 && setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero))) {
		close(lfd);
		lfd = -1;
	}
	v6 = lfd >= 0;
	if (!v6)
		lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return -errno;
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (v6 ? bind(lfd, (struct sockaddr *)&a6, sizeof(a6)) :
		  bind(lfd, (struct sockaddr *)&a4, sizeof(a4))) ||
	    listen(lfd, backlog > 0 ? backlog : SOMAXCONN)) {
		ret = -errno;
		close(lfd);
		return ret;
	}
	return lfd;
}

/*
 * rf_tcp_accept - the next peer of the listening socket lfd
 * (rf_tcp_listen()), waiting at most ms (0: RF_TCP_TIMEOUT_MS). lfd stays
 * open. Returns the connected socket, -ETIMEDOUT or -errno.
 */
static inline RF_COLD int rf_tcp_accept(int lfd, int ms)
{
	int ret = rf_tcp_wait(lfd, POLLIN, ms ? ms : RF_TCP_TIMEOUT_MS);
	int fd;

	if (ret)
		return ret;
	fd = accept(lfd, NULL, NULL);
	return fd < 0 ? -errno : fd;
}

/*
 * rf_tcp_serve - one peer and no more: rf_tcp_listen() on port,
 * rf_tcp_accept() within ms (0: RF_TCP_TIMEOUT_MS), and the listener
 * closed. A second client finds no listener (rf_tcp_connect() retries
 * until the server listens again); a server of many clients keeps one
 * rf_tcp_listen() socket instead. Returns the connected socket or -errno.
 */
static inline RF_COLD int rf_tcp_serve(uint16_t port, int ms)
{
	int lfd = rf_tcp_listen(port, 1), fd;

	if (lfd < 0)
		return lfd;
	fd = rf_tcp_accept(lfd, ms);
	close(lfd);
	return fd;
}

/*
 * rf_tcp_connect - connect to the numeric address addr (IPv4 or IPv6),
 * TCP port, retrying while the server is not listening yet, for at most
 * ms (0: RF_TCP_TIMEOUT_MS). Returns the connected socket, -EINVAL for an
 * address that is not numeric, or -ETIMEDOUT/-errno.
 */
static inline RF_COLD int rf_tcp_connect(const char *addr, uint16_t port, int ms)
{
	long long end = rf__tcp_now_ms() + (ms ? ms : RF_TCP_TIMEOUT_MS);
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	struct sockaddr *sa;
	socklen_t len;
	int fd, family;

	memset(&a6, 0, sizeof(a6));
	memset(&a4, 0, sizeof(a4));
	if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		a4.sin_port = htons(port);
		family = AF_INET;
		sa = (struct sockaddr *)&a4;
		len = sizeof(a4);
	} else if (inet_pton(AF_INET6, addr, &a6.sin6_addr) == 1) {
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons(port);
		family = AF_INET6;
		sa = (struct sockaddr *)&a6;
		len = sizeof(a6);
	} else {
		return -EINVAL;
	}
	for (;;) {
		fd = socket(family, SOCK_STREAM, 0);
		if (fd < 0)
			return -errno;
		if (!connect(fd, sa, len))
			return fd;
		close(fd);
		if (rf__tcp_now_ms() > end)
			return -ETIMEDOUT;
		poll(NULL, 0, 50);	/* the server may not be listening yet */
	}
}

/*
 * rf_tcp_xfer - send (receive 0) or receive exactly n bytes, each wait at
 * most ms (0: RF_TCP_TIMEOUT_MS). 0, -ECONNRESET when the peer closed,
 * -ETIMEDOUT or -errno.
 */
static inline RF_COLD int rf_tcp_xfer(int fd, void *buf, size_t n, int receive, int ms)
{
	uint8_t *p = (uint8_t *)buf;

	while (n) {
		ssize_t k;
		int ret = rf_tcp_wait(fd, receive ? POLLIN : POLLOUT,
				      ms ? ms : RF_TCP_TIMEOUT_MS);

		if (ret)
			return ret;
		k = receive ? recv(fd, p, n, 0) : send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return k == 0 ? -ECONNRESET : -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * rf_tcp_sync - a barrier between the two sides: each sends tag and waits
 * for the other's. -EPROTO if the other side sent another tag (the two
 * programs are at different steps).
 */
static inline RF_COLD int rf_tcp_sync(int fd, uint8_t tag, int ms)
{
	uint8_t r = 0;
	int ret = rf_tcp_xfer(fd, &tag, 1, 0, ms);

	if (!ret)
		ret = rf_tcp_xfer(fd, &r, 1, 1, ms);
	if (!ret && r != tag)
		ret = -EPROTO;
	return ret;
}

/*
 * The tag of the "ready" barrier (rf_ep_ready()): both QPs are connected
 * and can receive, so either side may send.
 */
#define RF_TCP_SYNC_READY 'R'

RF_END_DECLS

#endif /* RDMAFAST_TCP_H */
