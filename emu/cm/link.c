/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * link.c - how the connection managers of two hosts reach each other, and
 * the CM thread that plays the kernel's CM work queue.
 *
 * A listener on port P of port space S is a Unix SOCK_SEQPACKET socket
 * "cm-SSSS-P" in the subnet's directory, so one host at a time listens
 * there (EADDRINUSE, as on one network) and a stale socket of a dead host
 * is found by its refused connect() and replaced.  Beside it,
 * "cm-SSSS-P.who" names the listener's host, device and port for address
 * resolution (addr.c).  An active id connects a socket to the listener's;
 * the listener's host accepts it as a new id, and every CM message of that
 * connection (REQ, REP, RTU, REJ, DREQ, DREP, SIDR) is one record on that
 * pair.  A host that dies closes its sockets: its peers see the hang-up
 * (conn.c says what that means in each state).
 *
 * The thread sleeps in epoll_wait() on those sockets, a wake-up eventfd and
 * the earliest timer; each wake-up is handled with cm_lock() held.  epoll
 * carries the id's handle and generation, so a wake-up for an id destroyed
 * meanwhile finds nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/thread.h"
#include "internal.h"
#include "subnet/subnet.h"

static int epfd = -1, wakefd = -1;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_err;

#define WAKE_COOKIE	UINT64_MAX

static int sock_path(struct sockaddr_un *un, uint16_t ps, uint16_t port, const char *sfx)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	if (snprintf(un->sun_path, sizeof(un->sun_path), "%s/cm-%04x-%u%s",
		     emu_subnet_dir(), ps, port, sfx) >= (int)sizeof(un->sun_path))
		return ENAMETOOLONG;
	return 0;
}

void cm_link_wake(void)
{
	uint64_t one = 1;

	if (wakefd >= 0)
		(void)!emu_real_write(wakefd, &one, sizeof(one));
}

static void watch(struct cm_id *id)
{
	struct epoll_event ev = {
		.events = EPOLLIN,
		.data.u64 = (uint64_t)id->gen << 32 | id->handle,
	};

	epoll_ctl(epfd, EPOLL_CTL_ADD, id->sock, &ev);
}

void cm_link_adopt(struct cm_id *id, int sock)
{
	id->sock = sock;
	watch(id);
}

void cm_link_close(struct cm_id *id)
{
	struct sockaddr_un un;

	if (id->sock < 0)
		return;
	epoll_ctl(epfd, EPOLL_CTL_DEL, id->sock, NULL);
	emu_real_close(id->sock);
	id->sock = -1;
	if (id->state == CM_LISTEN) {
		uint16_t port = cm_addr_port((const struct sockaddr *)&id->src);

		if (!sock_path(&un, id->ps, port, ".who"))
			unlink(un.sun_path);
		if (!sock_path(&un, id->ps, port, ""))
			unlink(un.sun_path);
	}
}

static int new_socket(void)
{
	return emu_real_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
}

/* Does a live host listen at un?  A dead host's socket refuses. */
static bool alive(const struct sockaddr_un *un)
{
	int s = new_socket();
	bool live;

	if (s < 0)
		return true;
	live = connect(s, (const struct sockaddr *)un, sizeof(*un)) == 0 ||
	       errno == EAGAIN;
	emu_real_close(s);
	return live;
}

int cm_link_listen(struct cm_id *id)
{
	uint16_t port = cm_addr_port((const struct sockaddr *)&id->src);
	struct sockaddr_un un, who, tmp;
	char line[64];
	int s, fd, n, ret;

	if ((ret = sock_path(&un, id->ps, port, "")) ||
	    (ret = sock_path(&who, id->ps, port, ".who")))
		return ret;
	if ((s = new_socket()) < 0)
		return errno;
	if (emu_real_bind(s, (const struct sockaddr *)&un, sizeof(un))) {
		ret = errno;
		if (ret == EADDRINUSE && !alive(&un)) {
			unlink(un.sun_path);
			ret = emu_real_bind(s, (const struct sockaddr *)&un, sizeof(un)) ? errno : 0;
		}
		if (ret) {
			emu_real_close(s);
			return ret;
		}
	}
	if (listen(s, id->backlog)) {
		ret = errno;
		unlink(un.sun_path);
		emu_real_close(s);
		return ret;
	}
	/* the .who file appears whole (rename) for resolvers of this port */
	n = snprintf(line, sizeof(line), "%u %u %u\n", emu_cfg.host_id,
		     id->has_dev ? id->local.dev : 0, id->has_dev ? id->local.port : 1);
	tmp = who;
	snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s/cm-%04x-%u.who.%u",
		 emu_subnet_dir(), id->ps, port, emu_cfg.host_id);
	fd = emu_real_open(tmp.sun_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = emu_real_write(fd, line, (size_t)n) == n;

		emu_real_close(fd);
		if (!ok || rename(tmp.sun_path, who.sun_path))
			unlink(tmp.sun_path);
	}
	id->sock = s;
	watch(id);
	return 0;
}

int cm_link_who(uint16_t ps, uint16_t port, unsigned *host, unsigned *dev, unsigned *pt)
{
	struct sockaddr_un un, sock;
	char line[64];
	ssize_t n;
	int fd;

	if (sock_path(&un, ps, port, ".who") || sock_path(&sock, ps, port, ""))
		return ENOENT;
	/* a host that died listening left both files: they go now */
	if (!emu_real_access(un.sun_path, F_OK) && !alive(&sock)) {
		unlink(un.sun_path);
		unlink(sock.sun_path);
		return ENOENT;
	}
	fd = emu_real_open(un.sun_path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return ENOENT;
	n = emu_real_read(fd, line, sizeof(line) - 1);
	emu_real_close(fd);
	if (n <= 0)
		return ENOENT;
	line[n] = 0;
	if (sscanf(line, "%u %u %u", host, dev, pt) != 3 || !*host ||
	    *host > EMU_MAX_HOSTS || *dev >= emu_cfg.num_devs || !*pt ||
	    *pt > emu_cfg.num_ports)
		return ENOENT;
	return 0;
}

int cm_link_connect(struct cm_id *id)
{
	uint16_t port = cm_addr_port((const struct sockaddr *)&id->dst);
	struct sockaddr_un un;
	int s;

	cm_link_close(id);
	if (sock_path(&un, id->ps, port, ""))
		return ECONNREFUSED;
	if ((s = new_socket()) < 0)
		return errno;
	/* a listening Unix socket accepts at once, or EAGAIN when its
	 * backlog is full (the REQ then waits in the socket buffer) */
	if (connect(s, (const struct sockaddr *)&un, sizeof(un)) && errno != EAGAIN) {
		emu_real_close(s);
		return ECONNREFUSED;
	}
	id->sock = s;
	watch(id);
	return 0;
}

int cm_link_send(struct cm_id *id, const struct cm_msg *m)
{
	if (id->sock < 0)
		return ENOTCONN;
	if (send(id->sock, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(*m))
		return errno ? errno : EIO;
	return 0;
}

static void on_ready(uint64_t cookie)
{
	struct cm_id *id = cm_id_by_gen((uint32_t)cookie, (uint32_t)(cookie >> 32));
	struct cm_msg m;
	ssize_t n;
	int s;

	if (!id || id->sock < 0)
		return;
	if (id->state == CM_LISTEN) {
		while ((s = accept4(id->sock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
			cm_on_accept(id, s);
		return;
	}
	n = recv(id->sock, &m, sizeof(m), MSG_DONTWAIT);
	if (n == (ssize_t)sizeof(m))
		cm_on_msg(id, &m);
	else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		cm_on_hangup(id);
	/* a record of another size is no CM message: dropped, as a bad MAD */
}

static void run_timers(uint64_t now, int *timeout)
{
	uint64_t next = 0;

	for (struct cm_id *id = cm_id_next(NULL), *n; id; id = n) {
		n = cm_id_next(id);
		if (!id->timer_ms)
			continue;
		if (id->timer_ms <= now) {
			cm_on_timer(id);
			n = cm_id_next(NULL);	/* a timer may change the table */
			continue;
		}
		if (!next || id->timer_ms < next)
			next = id->timer_ms;
	}
	*timeout = next ? (int)(next - now) : -1;
}

static void *cm_thread(void *arg)
{
	struct epoll_event evs[16];
	int timeout = -1;

	(void)arg;
	for (;;) {
		int n = epoll_wait(epfd, evs, EMU_ARRAY_SIZE(evs), timeout);

		cm_lock();
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == WAKE_COOKIE) {
				uint64_t v;

				(void)!emu_real_read(wakefd, &v, sizeof(v));
				continue;
			}
			on_ready(evs[i].data.u64);
		}
		run_timers(cm_now_ms(), &timeout);
		cm_unlock();
	}
	return NULL;
}

static void start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_COOKIE };
	sigset_t all, old;
	pthread_t t;

	epfd = epoll_create1(EPOLL_CLOEXEC);
	wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (epfd < 0 || wakefd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, wakefd, &ev)) {
		start_err = errno ? errno : ENOMEM;
		return;
	}
	/* the application's signals are not for this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	start_err = emu_thread_create(&t, NULL, cm_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!start_err)
		pthread_detach(t);
}

/*
 * In a child of fork(): the epoll set and the wake-up eventfd are the
 * parent's thread's, shared with it (a socket the child added would wake
 * the parent).  The child closes its copies of them and starts a thread
 * of its own with its first channel.
 */
void cm_link_disown(void)
{
	if (epfd >= 0)
		emu_real_close(epfd);
	if (wakefd >= 0)
		emu_real_close(wakefd);
	epfd = wakefd = -1;
	start_err = 0;
	start_once = (pthread_once_t)PTHREAD_ONCE_INIT;
}

int cm_link_start(void)
{
	pthread_once(&start_once, start);
	return start_err;
}
