/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * netlink.c - NETLINK_RDMA sockets, whose requests kernel/nldev.c answers.
 *
 * socket(AF_NETLINK, SOCK_RAW or SOCK_DGRAM, NETLINK_RDMA) gives one end
 * of an AF_UNIX datagram socketpair; the other end is ours.  What the
 * application sends (sendto, sendmsg, write: what libmnl and libnl use) is
 * answered at once:
 * the answers are written to our end, so read, recv, poll and select on
 * the application's end behave as on a netlink socket.  Between the two
 * ends of a pair only the socket buffer limits what is queued, so a long
 * dump does not block; an answer that finds the buffer full is dropped,
 * as the kernel drops what overruns a netlink socket.  The calls that
 * show a netlink address are answered as netlink's: bind() takes a
 * sockaddr_nl (nl_pid 0 or this one) and no groups (the RDMA groups are
 * iWARP's and the local services'), getsockname() shows the port id
 * (the process's pid for its first socket, as the kernel's autobind
 * picks it, then other values), recvmsg() and recvfrom() show the
 * kernel (nl_pid 0) as the sender.  setsockopt(SOL_NETLINK) takes
 * NETLINK_CAP_ACK (errors without the request) and any other option
 * (ignored); getsockopt(SOL_NETLINK) answers NETLINK_CAP_ACK's value, 0
 * for the others.  Every other call on the
 * descriptor is the AF_UNIX socket's.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "interpose.h"
#include "base/fdset.h"
#include "base/real.h"
#include "kernel/kernel.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

REAL(int, bind, int, const struct sockaddr *, socklen_t)
REAL(int, getsockname, int, struct sockaddr *, socklen_t *)
REAL(int, setsockopt, int, int, int, const void *, socklen_t)
REAL(int, getsockopt, int, int, int, void *, socklen_t *)
REAL(ssize_t, send, int, const void *, size_t, int)
REAL(ssize_t, sendto, int, const void *, size_t, int, const struct sockaddr *, socklen_t)
REAL(ssize_t, sendmsg, int, const struct msghdr *, int)
REAL(ssize_t, recvmsg, int, struct msghdr *, int)
REAL(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *, socklen_t *)

#define NL_SOCKS	64
#define NL_MSG_MAX	65536	/* the most one send may carry */

struct nl_sock {
	bool		used;
	int		fd;		/* the application's end */
	int		peer;		/* ours */
	uint32_t	portid;
	bool		cap_ack;
};

static struct emu_fdset nl_fds;
static struct nl_sock socks[NL_SOCKS];
static pthread_mutex_t nl_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_portid;

bool emu_nl_is_fd(int fd)
{
	return emu_fdset_has(&nl_fds, fd);
}

/* the socket of fd, with nl_mutex held; NULL if none */
static struct nl_sock *find(int fd)
{
	for (int i = 0; i < NL_SOCKS; i++)
		if (socks[i].used && socks[i].fd == fd)
			return &socks[i];
	return NULL;
}

int emu_nl_socket(int type)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), sv[2];
	struct nl_sock *s = NULL;

	/* netlink_create(): raw and datagram sockets only */
	if (base != SOCK_RAW && base != SOCK_DGRAM) {
		errno = ESOCKTNOSUPPORT;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | (type & (SOCK_NONBLOCK | SOCK_CLOEXEC)), 0, sv))
		return -1;
	pthread_mutex_lock(&nl_mutex);
	for (int i = 0; i < NL_SOCKS && !s; i++)
		if (!socks[i].used)
			s = &socks[i];
	if (!s || !emu_fdset_fits(sv[0])) {
		pthread_mutex_unlock(&nl_mutex);
		emu_real_close(sv[0]);
		emu_real_close(sv[1]);
		errno = s ? EMFILE : ENOBUFS;
		return -1;
	}
	/* netlink_autobind(): the pid first, then other ids */
	*s = (struct nl_sock){ .used = true, .fd = sv[0], .peer = sv[1],
			       .portid = next_portid ? next_portid-- : (uint32_t)getpid() };
	if (!next_portid)
		next_portid = 0xfffff000u;
	emu_fdset_put(&nl_fds, sv[0], true);
	pthread_mutex_unlock(&nl_mutex);
	return sv[0];
}

void emu_nl_close(int fd)
{
	struct nl_sock *s;

	pthread_mutex_lock(&nl_mutex);
	emu_fdset_put(&nl_fds, fd, false);
	s = find(fd);
	if (s) {
		emu_real_close(s->peer);
		s->used = false;
	}
	pthread_mutex_unlock(&nl_mutex);
}

/* the answers: one datagram each into our end, dropped when there is no room */
static void emit(void *arg, const void *buf, size_t len)
{
	get_send()(*(int *)arg, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* One send of len bytes at buf: answered, and counted as sent whole. */
static ssize_t request(int fd, const void *buf, size_t len)
{
	struct nl_sock *s;
	uint32_t portid;
	bool cap_ack;
	int peer;

	pthread_mutex_lock(&nl_mutex);
	s = find(fd);
	if (!s) {
		pthread_mutex_unlock(&nl_mutex);
		errno = EBADF;
		return -1;
	}
	peer = s->peer;
	portid = s->portid;
	cap_ack = s->cap_ack;
	pthread_mutex_unlock(&nl_mutex);
	emu_nldev_request(buf, len, portid, cap_ack, emit, &peer);
	return (ssize_t)len;
}

ssize_t emu_nl_write(int fd, const void *buf, size_t len)
{
	return request(fd, buf, len);
}

/* a destination other than the kernel (nl_pid 0) reaches nobody */
static bool to_kernel(const struct sockaddr *to, socklen_t len)
{
	const struct sockaddr_nl *nl = (const struct sockaddr_nl *)to;

	return !to || (len >= sizeof(*nl) && nl->nl_family == AF_NETLINK && !nl->nl_pid);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	if (!emu_nl_is_fd(fd))
		return get_sendto()(fd, buf, len, flags, to, tolen);
	if (!to_kernel(to, tolen)) {
		errno = ECONNREFUSED;
		return -1;
	}
	return request(fd, buf, len);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	static __thread uint8_t buf[NL_MSG_MAX];
	size_t len = 0;

	if (!emu_nl_is_fd(fd))
		return get_sendmsg()(fd, m, flags);
	if (!to_kernel(m->msg_name, m->msg_namelen)) {
		errno = ECONNREFUSED;
		return -1;
	}
	for (size_t i = 0; i < m->msg_iovlen; i++) {
		if (m->msg_iov[i].iov_len > sizeof(buf) - len) {
			errno = EMSGSIZE;
			return -1;
		}
		memcpy(buf + len, m->msg_iov[i].iov_base, m->msg_iov[i].iov_len);
		len += m->msg_iov[i].iov_len;
	}
	return request(fd, buf, len);
}

/* the sender of every answer: the kernel */
static void kernel_addr(void *name, socklen_t *namelen)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };

	if (!name || !namelen)
		return;
	memcpy(name, &nl, *namelen < sizeof(nl) ? *namelen : sizeof(nl));
	*namelen = sizeof(nl);
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	struct msghdr mine;
	ssize_t n;

	if (!emu_nl_is_fd(fd))
		return get_recvmsg()(fd, m, flags);
	mine = *m;
	mine.msg_name = NULL;
	mine.msg_namelen = 0;
	mine.msg_control = NULL;
	mine.msg_controllen = 0;
	n = get_recvmsg()(fd, &mine, flags);
	if (n < 0)
		return n;
	m->msg_flags = mine.msg_flags;
	m->msg_controllen = 0;
	kernel_addr(m->msg_name, &m->msg_namelen);
	return n;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		 socklen_t *fromlen)
{
	ssize_t n;

	if (!emu_nl_is_fd(fd))
		return get_recvfrom()(fd, buf, len, flags, from, fromlen);
	n = get_recvfrom()(fd, buf, len, flags, NULL, NULL);
	if (n >= 0)
		kernel_addr(from, fromlen);
	return n;
}

/* netlink_bind(): this port id or 0, no multicast groups here */
int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_nl *nl = (const struct sockaddr_nl *)addr;
	struct nl_sock *s;
	int ret = 0;

	if (!emu_nl_is_fd(fd))
		return get_bind()(fd, addr, len);
	if (len < sizeof(*nl) || nl->nl_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&nl_mutex);
	s = find(fd);
	if (!s)
		ret = EBADF;
	else if (nl->nl_groups)
		ret = EINVAL;		/* RDMA_NL_GROUP_*: no member here */
	else if (nl->nl_pid && nl->nl_pid != s->portid)
		ret = EINVAL;		/* already bound to its id */
	pthread_mutex_unlock(&nl_mutex);
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct nl_sock *s;

	if (!emu_nl_is_fd(fd))
		return get_getsockname()(fd, addr, len);
	pthread_mutex_lock(&nl_mutex);
	s = find(fd);
	if (s)
		nl.nl_pid = s->portid;
	pthread_mutex_unlock(&nl_mutex);
	if (!s) {
		errno = EBADF;
		return -1;
	}
	memcpy(addr, &nl, *len < sizeof(nl) ? *len : sizeof(nl));
	*len = sizeof(nl);
	return 0;
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct nl_sock *s;

	if (!emu_nl_is_fd(fd) || level != SOL_NETLINK)
		return get_setsockopt()(fd, level, name, val, len);
	if (name == NETLINK_CAP_ACK) {
		int on;

		if (len < sizeof(on)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(&on, val, sizeof(on));
		pthread_mutex_lock(&nl_mutex);
		s = find(fd);
		if (s)
			s->cap_ack = on;
		pthread_mutex_unlock(&nl_mutex);
	}
	return 0;
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct nl_sock *s;
	int v = 0;

	if (!emu_nl_is_fd(fd) || level != SOL_NETLINK)
		return get_getsockopt()(fd, level, name, val, len);
	pthread_mutex_lock(&nl_mutex);
	s = find(fd);
	if (s && name == NETLINK_CAP_ACK)
		v = s->cap_ack;
	pthread_mutex_unlock(&nl_mutex);
	memcpy(val, &v, *len < sizeof(v) ? *len : sizeof(v));
	*len = sizeof(v);
	return 0;
}
