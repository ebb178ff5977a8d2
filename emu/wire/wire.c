/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire.c - the fabric between QPs.
 *
 * Routing is by destination QPN: QPNs are subnet-unique and carry the host
 * id (EMU_NUM_HOST), as a LID or GID would name the port.  The paths:
 *
 *   loopback   packets to a QP of this process go through a byte ring in
 *              memory, drained by the engine in the same iteration; no
 *              syscall, no allocation
 *   shortcut   a packet the ring would deliver next, unchanged, may be
 *              handed to its QP by the device without entering the ring
 *              (wire_shortcut_ok(); emu/DESIGN-device.md, "Loopback shortcut")
 *   wire       packets to another host go over a Unix SOCK_SEQPACKET
 *              connection to that host's listener, <subnet dir>/wire.<id>,
 *              opened on first use and kept; SEQPACKET keeps packet
 *              boundaries and, unlike unconnected datagrams, is not limited
 *              to net.unix.max_dgram_qlen packets in flight
 *
 * The fabric is lossless, as InfiniBand's credit-based link-level flow
 * control makes it (IBA vol. 1, 7.9): a packet that finds the loopback ring
 * or the peer's socket full waits in that link's backlog, in order, and
 * leaves as soon as there is room (EPOLLOUT wakes the engine).  Requesters,
 * and responders sending READ and atomic answers, stop at a link whose
 * backlog passes LINK_ROOM (wire_room), so only ACKs and NAKs pass
 * it; sends never block the engine, nor do connects (a listener with a
 * full backlog holds the packet as a full socket does).  Only fault
 * injection (fault.c, at the transmit side of both paths), a peer that is
 * gone, or a link that made no progress for LINK_HOQ_LIFE_NS (IBA's
 * head-of-queue lifetime: a stalled link discards) loses packets.
 *
 * Receiving: the listener and every connection sit in one level-triggered
 * epoll set.  The engine asks it once per iteration (one syscall, however
 * many connections) and reads only the sockets it reports; the idle engine
 * sleeps on the epoll fd itself, so a packet wakes it at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "subnet/subnet.h"
#include "wire.h"

#define RING_SIZE	(16u << 20)
#define PKT_ALIGN	8u
#define MAX_PKT		(sizeof(struct dev_pkt) + WIRE_MTU)
#define MAX_CONNS	64

/* Requesters hold back while a link has this much waiting. */
#define LINK_ROOM		(1u << 20)
/* Past this a link's backlog drops (a requester ignoring wire_room). */
#define LINK_BACKLOG_MAX	(256ull << 20)
/* A link that moved nothing for this long is stalled: its backlog is discarded. */
#define LINK_HOQ_LIFE_NS	(2000ull * 1000 * 1000)
/* A connect that found the peer's listener full is tried again this much later. */
#define CONNECT_RETRY_NS	(100ull * 1000)

static uint8_t *ring;
static uint64_t ring_wr, ring_rd;	/* byte counters, positions mod RING_SIZE */
static uint8_t *scratch;		/* staging when the ring is full */
static uint8_t *rx_buf;

static int listen_fd = -1;
static int ep_fd = -1;			/* epoll set: listener + connections */
static int conn_fd[MAX_CONNS];
static unsigned nconns;
static char sock_path[PATH_MAX];

/* A packet waiting for room on its link. */
struct queued {
	struct queued		*next;
	uint64_t		seq;	/* the link's number for it */
	struct dev_pkt		pkt;	/* followed by the payload */
};

/*
 * The path to one host: to ourselves the loopback ring, to another host
 * the connection to its listener (fd, opened on first use).
 */
struct link {
	int			fd;
	struct queued		*head, **tail;
	uint64_t		bytes;		/* waiting in the backlog */
	uint64_t		progress;	/* ns: the backlog last moved */
	uint64_t		seq_in;		/* packets given to the link */
	uint64_t		seq_out;	/* ... of which left: the last one's number */
	uint64_t		connect_after;	/* ns: its listener was full, try no sooner */
};
static struct link *links;		/* by host id, 0..EMU_MAX_HOSTS */
static unsigned nbacklogged;		/* links with a backlog */
static bool room_waiters;		/* a requester held back: wake it on room */

struct delayed {
	struct delayed		*next;
	uint64_t		due;
	struct dev_pkt		pkt;	/* followed by the payload */
};
static struct delayed *delayed_head, **delayed_tail = &delayed_head;
static bool shortcut_off;		/* RFEMU_LOOPBACK_SHORTCUT=0 */
static uint64_t connect_retry_at;	/* ns: a link waits for a listener's backlog */

struct rfemu_dev_stats wire_stats;
static const struct wire_ops *device_ops;
static const uint64_t *device_now;

static uint32_t pkt_bytes(uint32_t payload)
{
	return ((uint32_t)sizeof(struct dev_pkt) + payload + PKT_ALIGN - 1) & ~(PKT_ALIGN - 1);
}

/* The check value: every byte of header and payload but itself. */
static uint64_t pkt_crc(const struct dev_pkt *p)
{
	return dev_hash(p, offsetof(struct dev_pkt, crc)) * 31 ^
	       dev_hash(p->payload, p->len);
}

/* ---- loopback ring ------------------------------------------------------- */

/* Contiguous room for n bytes at the write position, skipping the tail end. */
static uint8_t *ring_reserve(uint32_t n)
{
	uint32_t pos = (uint32_t)(ring_wr % RING_SIZE);
	uint64_t need = n;

	if (pos + n > RING_SIZE)
		need += RING_SIZE - pos;	/* the tail end is skipped */
	if (ring_wr + need - ring_rd > RING_SIZE)
		return NULL;
	if (pos + n > RING_SIZE)
		return ring;
	return ring + pos;
}

static void ring_commit(const uint8_t *at, uint32_t n)
{
	uint32_t pos = (uint32_t)(ring_wr % RING_SIZE);

	if (at != ring + pos) {
		/* mark the skipped tail end: a zero size means "wrap" */
		memset(ring + pos, 0, sizeof(uint32_t));
		ring_wr += RING_SIZE - pos;
	}
	ring_wr += n;
}

/* ---- packet transmit ------------------------------------------------------ */

struct dev_pkt *wire_alloc(uint32_t payload)
{
	uint32_t n = pkt_bytes(payload);
	struct dev_pkt *p;

	/*
	 * Stage in the ring (where a local packet will stay); the destination
	 * is known only at send time, when a remote packet moves out.
	 */
	if (payload > WIRE_MTU)
		return NULL;
	p = (struct dev_pkt *)ring_reserve(n);
	if (!p)
		p = (struct dev_pkt *)scratch;	/* sent from there into a backlog */
	dev_pkt_clear(p);
	p->size = (uint32_t)sizeof(struct dev_pkt) + payload;
	p->len = payload;
	return p;
}

static int conn_add(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (nconns == MAX_CONNS || epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &ev)) {
		emu_real_close(fd);
		return -1;
	}
	conn_fd[nconns++] = fd;
	return fd;
}

static void conn_drop(int fd)
{
	for (unsigned i = 0; i < nconns; i++)
		if (conn_fd[i] == fd) {
			conn_fd[i] = conn_fd[--nconns];
			break;
		}
	for (unsigned h = 0; h <= EMU_MAX_HOSTS; h++)
		if (links[h].fd == fd)
			links[h].fd = -1;
	emu_real_close(fd);
}

/*
 * The connection to host's listener, opened on first use: the fd, -1 when
 * there is no such host (the packet is lost), or -EAGAIN while its listener
 * has a full backlog (a host stopped or in a debugger takes no connection):
 * the packet waits, and the connect is tried again CONNECT_RETRY_NS later.
 * A blocking connect waited there for the peer, with the engine and
 * emu_lock, and stopped every QP of this process with it.
 */
static int host_fd(unsigned host)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, sz = 4 << 20;

	if (host == 0 || host > EMU_MAX_HOSTS)
		return -1;
	if (links[host].fd >= 0)
		return links[host].fd;
	if (links[host].connect_after > *device_now)
		goto later;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/wire.%u",
			     emu_subnet_dir(), host) >= sizeof(sa.sun_path))
		return -1;
	fd = emu_real_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	emu_real_setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		emu_real_close(fd);
		if (err != EAGAIN)
			return -1;	/* no such host */
		links[host].connect_after = *device_now + CONNECT_RETRY_NS;
		goto later;
	}
	if (conn_add(fd) < 0)
		return -1;
	links[host].fd = fd;
	return fd;
later:
	if (!connect_retry_at || links[host].connect_after < connect_retry_at)
		connect_retry_at = links[host].connect_after;
	return -EAGAIN;
}

static void link_watch_out(const struct link *l, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.fd = l->fd };

	if (l->fd >= 0)
		epoll_ctl(ep_fd, EPOLL_CTL_MOD, l->fd, &ev);
}

/*
 * Put p on the link to host now: 1 done, 0 no room (try later), -1 the link is gone
 * (no such host, or the peer closed: the packet is lost).
 */
static int link_push(unsigned host, const struct dev_pkt *p, bool in_ring)
{
	uint32_t n = pkt_bytes(p->len);
	int fd;

	if (host == emu_cfg.host_id) {
		uint8_t *d = in_ring ? (uint8_t *)p : ring_reserve(n);

		if (!d)
			return 0;
		if (d != (const uint8_t *)p)
			memcpy(d, p, p->size);
		ring_commit(d, n);
		return 1;
	}
	fd = host_fd(host);
	if (fd < 0)
		return fd == -EAGAIN ? 0 : -1;
	if (send(fd, p, p->size, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		return 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR)
		return 0;
	conn_drop(fd);
	return -1;
}

static void link_discard(struct link *l)
{
	while (l->head) {
		struct queued *q = l->head;

		l->head = q->next;
		free(q);
		wire_stats.drop_link++;
	}
	l->tail = &l->head;
	l->bytes = 0;
	l->seq_out = l->seq_in;
	nbacklogged--;
	link_watch_out(l, false);
}

static void enqueue(struct link *l, const struct dev_pkt *p)
{
	struct queued *q;

	if (l->bytes + p->size > LINK_BACKLOG_MAX ||
	    !(q = malloc(offsetof(struct queued, pkt) + p->size))) {
		wire_stats.drop_link++;
		return;
	}
	memcpy(&q->pkt, p, p->size);
	q->seq = l->seq_in;
	q->next = NULL;
	if (!l->head) {
		l->progress = *device_now;
		nbacklogged++;
		link_watch_out(l, true);
	}
	*l->tail = q;
	l->tail = &q->next;
	l->bytes += p->size;
	if (l->bytes > wire_stats.backlog_max)
		wire_stats.backlog_max = l->bytes;
	wire_stats.deferred++;
}

/* Move link l's backlog out while there is room; returns packets moved. */
static unsigned link_flush(struct link *l, unsigned host)
{
	unsigned n = 0;

	while (l->head) {
		struct queued *q = l->head;
		int r = link_push(host, &q->pkt, false);

		if (r < 0) {
			link_discard(l);
			break;
		}
		if (r == 0) {
			if (*device_now - l->progress > LINK_HOQ_LIFE_NS)
				link_discard(l);
			break;
		}
		l->head = q->next;
		l->bytes -= q->pkt.size;
		l->seq_out = q->seq;
		free(q);
		l->progress = *device_now;
		n++;
		if (!l->head) {
			l->tail = &l->head;
			nbacklogged--;
			link_watch_out(l, false);
		}
	}
	return n;
}

/* Requesters held back by a full link may go on. */
static void wake_room_waiters(void)
{
	room_waiters = false;
	device_ops->room();
}

static unsigned flush_links(void)
{
	unsigned n = 0, left = nbacklogged;
	bool room = false;

	for (unsigned h = 1; h <= EMU_MAX_HOSTS && left; h++) {
		struct link *l = &links[h];
		unsigned moved;

		if (!l->head)
			continue;
		left--;
		moved = link_flush(l, h);
		n += moved;
		room |= moved && l->bytes < LINK_ROOM;
	}
	if (room && room_waiters)
		wake_room_waiters();
	return n;
}

bool wire_room(uint32_t dst_qpn)
{
	unsigned h = EMU_NUM_HOST(dst_qpn);

	if (h == 0 || h > EMU_MAX_HOSTS || links[h].bytes < LINK_ROOM)
		return true;
	room_waiters = true;
	return false;
}

static void transmit_to(unsigned h, struct dev_pkt *p, bool in_ring)
{
	struct link *l;
	int r;

	wire_stats.pkts_tx++;
	if (h == 0 || h > EMU_MAX_HOSTS) {
		wire_stats.drop_link++;
		return;
	}
	l = &links[h];
	l->seq_in++;
	/* behind a backlog it waits its turn: the link keeps the order */
	if (!l->head) {
		r = link_push(h, p, in_ring && (uint8_t *)p != scratch);
		if (r != 0) {
			l->seq_out = l->seq_in;		/* gone: sent, or lost */
			if (r < 0)
				wire_stats.drop_link++;
			return;
		}
	}
	enqueue(l, p);
}

/*
 * A packet to a multicast group goes, as the switches replicate it, once
 * to every host with a QP attached (subnet/mcast.c: by MLID on InfiniBand,
 * by MGID on RoCE), this one included; the receiving device picks its
 * attached QPs.  A group without members takes the packet nowhere, as a
 * fabric drops it.  This host's copy is committed last: until then the
 * loopback ring reservation p sits in may still be read for the others.
 */
static void transmit_mcast(struct dev_pkt *p, bool in_ring)
{
	uint64_t hosts[EMU_MCAST_HOST_WORDS];
	bool roce = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
	bool self = false;

	if (!emu_subnet_mcast_hosts(p->dgid, p->dlid, !roce, hosts))
		return;
	for (unsigned h = 1; h <= EMU_MAX_HOSTS; h++) {
		if (!(hosts[h / 64] >> (h % 64) & 1))
			continue;
		if (h == emu_cfg.host_id)
			self = true;
		else
			transmit_to(h, p, false);
	}
	if (self)
		transmit_to(emu_cfg.host_id, p, in_ring);
}

static void transmit(struct dev_pkt *p, bool in_ring)
{
	if (dev_pkt_is_mcast(p, emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET))
		transmit_mcast(p, in_ring);
	else
		transmit_to(EMU_NUM_HOST(p->dst_qpn), p, in_ring);
}

uint64_t wire_ticket(uint32_t dst_qpn)
{
	unsigned h = EMU_NUM_HOST(dst_qpn);

	return h && h <= EMU_MAX_HOSTS ? links[h].seq_in : 0;
}

bool wire_left(uint32_t dst_qpn, uint64_t ticket)
{
	unsigned h = EMU_NUM_HOST(dst_qpn);

	/* an empty backlog holds nothing; a lost packet counts as gone */
	return h == 0 || h > EMU_MAX_HOSTS || !links[h].head || ticket <= links[h].seq_out;
}

/*
 * Faults happen "on the wire", after the sender computed the packet's
 * check value: a corrupted packet arrives and fails the receiver's check,
 * as an ICRC error would.
 */
void wire_send(struct dev_pkt *p)
{
	wire_count_tx(p);	/* it left the port, whatever the wire does to it */
	if (DEV_UNLIKELY(wire_fault.any)) {
		if (wire_fault.drop > 0 && wire_fault_hit(wire_fault.drop)) {
			wire_stats.drop_fault++;
			return;
		}
		if (wire_fault.corrupt > 0) {
			p->flags |= DPKT_CRC;
			p->crc = pkt_crc(p);
			if (wire_fault_hit(wire_fault.corrupt)) {
				/* flip one bit after the check value */
				uint32_t span = p->size - (uint32_t)offsetof(struct dev_pkt, payload);

				if (span)
					p->payload[(uint32_t)dev_hash(&p->psn, 4) % span] ^= 0x10;
				else
					p->psn ^= 0x100;
			}
		}
		if (wire_fault.delay_us && wire_fault_hit(wire_fault.delay_frac)) {
			struct delayed *d = malloc(sizeof(*d) + p->len);

			if (d) {
				memcpy(&d->pkt, p, p->size);
				d->due = *device_now + (uint64_t)wire_fault.delay_us * 1000;
				d->next = NULL;
				*delayed_tail = d;
				delayed_tail = &d->next;
				return;
			}
		}
	}
	transmit(p, true);
}

/* ---- the loopback shortcut (wire.h) ---------------------------------------- */

bool wire_shortcut_ok(const struct dev_pkt *p)
{
	unsigned h = emu_cfg.host_id;

	return !shortcut_off && !wire_fault.any && EMU_NUM_HOST(p->dst_qpn) == h &&
	       h && h <= EMU_MAX_HOSTS && ring_rd == ring_wr && !links[h].head &&
	       !dev_pkt_is_mcast(p, emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET);
}

/* What transmit_to() and deliver() count of a loopback packet. */
void wire_shortcut_sent(void)
{
	struct link *l = &links[emu_cfg.host_id];

	wire_stats.pkts_tx++;
	l->seq_in++;
	l->seq_out = l->seq_in;
	wire_stats.pkts_rx++;
	wire_stats.shortcuts++;
}

/* ---- receive -------------------------------------------------------------- */

static void deliver(const struct dev_pkt *p, uint32_t got)
{
	if (got < sizeof(*p) || p->size != got ||
	    p->size != sizeof(*p) + p->len)
		return;
	if ((p->flags & DPKT_CRC) && p->crc != pkt_crc(p)) {
		wire_stats.drop_fault++;
		return;		/* ICRC error: silently discarded */
	}
	wire_stats.pkts_rx++;
	device_ops->deliver(p);
}

static unsigned poll_ring(unsigned budget)
{
	unsigned n = 0;

	while (ring_rd != ring_wr && n < budget) {
		uint32_t pos = (uint32_t)(ring_rd % RING_SIZE);
		struct dev_pkt *p = (struct dev_pkt *)(ring + pos);
		uint32_t sz;

		if (pos + sizeof(uint32_t) > RING_SIZE || p->size == 0) {
			ring_rd += RING_SIZE - pos;
			continue;
		}
		sz = pkt_bytes(p->len);
		/* responses are appended behind; p stays put until ring_rd moves */
		deliver(p, p->size);
		ring_rd += sz;
		n++;
	}
	return n;
}

static bool conn_known(int fd)
{
	for (unsigned i = 0; i < nconns; i++)
		if (conn_fd[i] == fd)
			return true;
	return false;
}

/* Read one connection until it is empty or the budget is spent. */
static unsigned poll_conn(int fd, unsigned budget)
{
	unsigned n = 0;

	while (n < budget) {
		ssize_t got = recv(fd, rx_buf, MAX_PKT, MSG_DONTWAIT);

		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
				 errno != EINTR)) {
			conn_drop(fd);
			break;
		}
		if (got < 0)
			break;
		/*
		 * Answers go over our own connection to the peer's listener,
		 * never back over this one: a packet's claimed source must not
		 * decide where another host's traffic is routed.
		 */
		deliver((struct dev_pkt *)rx_buf, (uint32_t)got);
		n++;
	}
	return n;
}

/*
 * One epoll_wait(0) tells which sockets have something; a socket left with
 * data (budget spent) stays ready and is reported again next time.
 */
static unsigned poll_sockets(unsigned budget)
{
	struct epoll_event ev[16];
	unsigned n = 0;
	int k = epoll_wait(ep_fd, ev, (int)DEV_ARRAY_SIZE(ev), 0);

	wire_stats.socket_polls++;

	for (int i = 0; i < k && n < budget; i++) {
		int fd = ev[i].data.fd;

		if (fd == listen_fd) {
			for (;;) {
				int c = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (c < 0)
					break;
				conn_add(c);
			}
			continue;
		}
		/* room to send only: the backlog moves in flush_links() */
		if (!(ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			continue;
		/* dropped by an earlier event of this batch: the number may be reused */
		if (conn_known(fd))
			n += poll_conn(fd, budget - n);
	}
	return n;
}

static unsigned poll_delayed(void)
{
	unsigned n = 0;

	while (delayed_head && delayed_head->due <= *device_now) {
		struct delayed *d = delayed_head;

		delayed_head = d->next;
		if (!delayed_head)
			delayed_tail = &delayed_head;
		transmit(&d->pkt, false);
		free(d);
		n++;
	}
	return n;
}

uint64_t wire_next_due(void)
{
	uint64_t due = delayed_head ? delayed_head->due : 0;

	return connect_retry_at && (!due || connect_retry_at < due) ? connect_retry_at : due;
}

unsigned wire_poll(bool sockets)
{
	unsigned n = 0;

	wire_count_flush();
	/* set again by each listener still full that a packet waits for */
	connect_retry_at = 0;
	if (nbacklogged)
		n += flush_links();
	if (delayed_head)
		n += poll_delayed();
	n += poll_ring(4096);
	if (sockets && ep_fd >= 0)
		n += poll_sockets(256);
	return n;
}

/* ---- setup ---------------------------------------------------------------- */

int wire_wait_fd(void)
{
	return ep_fd;
}

int wire_open(const struct wire_ops *ops, const uint64_t *now)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sz = 4 << 20;
	const char *sc = getenv("RFEMU_LOOPBACK_SHORTCUT");

	device_ops = ops;
	device_now = now;
	shortcut_off = sc && !strcmp(sc, "0");
	ring = malloc(RING_SIZE);
	rx_buf = malloc(MAX_PKT);
	scratch = malloc(pkt_bytes(WIRE_MTU));
	links = calloc(EMU_MAX_HOSTS + 1, sizeof(*links));
	if (!ring || !rx_buf || !scratch || !links) {
		wire_close();
		return ENOMEM;
	}
	for (unsigned h = 0; h <= EMU_MAX_HOSTS; h++) {
		links[h].fd = -1;
		links[h].tail = &links[h].head;
	}
	nbacklogged = 0;
	room_waiters = false;
	ring_wr = ring_rd = 0;
	nconns = 0;
	ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ep_fd < 0) {
		int err = errno;

		wire_close();
		return err;
	}

	if ((size_t)snprintf(sock_path, sizeof(sock_path), "%s/wire.%u",
			     emu_subnet_dir(), emu_cfg.host_id) >= sizeof(sa.sun_path))
		return 0;	/* no wire: this host is alone, loopback still works */
	strcpy(sa.sun_path, sock_path);
	listen_fd = emu_real_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		return 0;
	emu_real_setsockopt(listen_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	/* our host slot is ours alone (subnet/subnet.c's lock): a stale socket is dead */
	unlink(sock_path);
	if (emu_real_bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, 64)) {
		emu_real_close(listen_fd);
		listen_fd = -1;
		sock_path[0] = 0;
		return 0;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = listen_fd };

		if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, listen_fd, &ev)) {
			emu_real_close(listen_fd);
			listen_fd = -1;
			unlink(sock_path);
			sock_path[0] = 0;
		}
	}
	return 0;
}

/*
 * A child of fork() forgets its parent's wire: the descriptors are closed
 * here only, and the listener's name stays the parent's.
 */
void wire_forget(void)
{
	sock_path[0] = 0;
	wire_close();
}

void wire_close(void)
{
	while (nconns)
		emu_real_close(conn_fd[--nconns]);
	if (listen_fd >= 0) {
		emu_real_close(listen_fd);
		listen_fd = -1;
	}
	if (sock_path[0]) {
		unlink(sock_path);
		sock_path[0] = 0;
	}
	if (ep_fd >= 0) {
		emu_real_close(ep_fd);
		ep_fd = -1;
	}
	while (delayed_head) {
		struct delayed *d = delayed_head;

		delayed_head = d->next;
		free(d);
	}
	delayed_tail = &delayed_head;
	for (unsigned h = 0; links && h <= EMU_MAX_HOSTS; h++)
		while (links[h].head) {
			struct queued *q = links[h].head;

			links[h].head = q->next;
			free(q);
		}
	nbacklogged = 0;
	free(ring);
	free(rx_buf);
	free(scratch);
	free(links);
	ring = rx_buf = scratch = NULL;
	links = NULL;
}
