/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * umad.c - the umad and issm character devices (umad.h), following the
 * kernel's drivers/infiniband/core/user_mad.c and the MAD layer under it
 * (mad.c: ib_register_mad_agent(), ib_create_send_mad(),
 * ib_post_send_mad(); smi.c for directed routes).
 *
 * A file is one end of a SOCK_SEQPACKET socketpair: every MAD queued for
 * the reader (a response, a request for an agent that takes its method,
 * or a send that timed out) is one message written to the other end, so
 * poll(), select() and blocking reads are the socket's own.  read() is
 * interposed to make the kernel's size checks (a buffer too small for the
 * next MAD is EINVAL and leaves it queued) and to refill the socket: the
 * kernel's receive list is bounded only by MAX_UMAD_RECV_LIST_SIZE, a
 * socket's buffer by a few hundred MADs, so what does not fit waits on
 * the file's held list, in order, until reads make room.
 *
 * A request travels as the fabric would carry it: to the SMA or PMA of
 * the port that has its DLID, this host's or a live other host's (each
 * answers from the record its host published, subnet/ports.c), to the
 * switch every port is cabled to (EMU_SWITCH_LID, or one hop of directed
 * route), to an agent of this host registered for its class and method,
 * and nowhere else: a request to a LID no live host has times out, as a
 * request nobody answers does.  The answer reaches the sender's agent
 * only while the send waits for one (timeout_ms > 0): the MAD layer drops
 * a response it finds no send for.
 *
 * A RoCE port has its umad and issm files too, as ib_umad_add_one() makes
 * them for every port with IB MAD caps (RDMA_CORE_PORT_IBA_ROCE has them,
 * for the CM), but no QP0; its MADs go by GID, and no agent answers one
 * here (routing MADs by GID is not modelled): such a request times out.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_mad.h>
#include <rdma/rdma_user_ioctl.h>

#include "base/fdset.h"
#include "base/thread.h"
#include "kernel/kernel.h"
#include "mad.h"
#include "subnet/subnet.h"
#include "umad.h"

#define UMAD_MAX_AGENTS		32	/* IB_UMAD_MAX_AGENTS */
#define MAD_RMPP_HDR		36	/* IB_MGMT_RMPP_HDR */
#define MAX_MGMT_CLASS		80	/* mad_priv.h */
#define MAX_MGMT_VERSION	0x83
#define RMPP_VERSION		1	/* IB_MGMT_RMPP_VERSION */
#define RMPP_FLAG_ACTIVE	1
/*
 * MAX_UMAD_RECV_LIST_SIZE (user_mad.c, since 6.10): past it a received
 * MAD is dropped; a send's timeout report is queued all the same.
 */
#define UMAD_MAX_RECV_LIST	200000

struct umad_agent {
	bool		used;
	uint8_t		qpn;		/* 0: SMI, 1: GSI */
	uint8_t		mgmt_class;	/* 0: sends only */
	uint8_t		class_version;
	uint8_t		rmpp_version;
	uint32_t	flags;		/* IB_USER_MAD_USER_RMPP */
	uint32_t	hi_tid;		/* the upper half of its requests' TIDs */
	uint64_t	method_mask[2];
};

struct umad_file {
	int		fd;		/* the application's end */
	int		peer;		/* the end MADs are queued at */
	unsigned	dev, port;
	int		accmode;	/* O_RDONLY, O_WRONLY or O_RDWR */
	unsigned	host;		/* the host it was opened on: whose port it is */
	bool		inherited;	/* the parent's, in a child of fork() */
	bool		issm;
	bool		use_pkey_index;	/* hdr_size(): ib_user_mad_hdr, not _old */
	bool		already_used;	/* an agent was registered */
	struct umad_agent agent[UMAD_MAX_AGENTS];
	unsigned long	queued;		/* unread: in the socket and held */
	struct umad_msg	*held;		/* what the socket had no room for */
	struct umad_msg	**held_tail;
	struct umad_file *next;
};

/* A message for the reader that waits for room in the socket. */
struct umad_msg {
	struct umad_msg	*next;
	size_t		len;
	uint8_t		data[];
};

/* A request waiting for its answer: on the MAD layer's wait list. */
struct umad_send {
	struct umad_file *file;
	unsigned	agent;
	uint64_t	deadline;	/* CLOCK_MONOTONIC ns: timeout x (retries + 1) */
	uint64_t	tid;
	uint8_t		mgmt_class;
	/* what comes back on timeout: the header, the MAD's first 24 bytes */
	uint8_t		msg[sizeof(struct ib_user_mad_hdr) + EMU_MAD_HDR];
	struct umad_send *next;
};

static pthread_mutex_t umad_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t umad_cv;		/* the timer waits on it */
static pthread_cond_t issm_cv;		/* a blocking issm open waits on it */
static pthread_once_t timer_once = PTHREAD_ONCE_INIT;
static bool timer_ok;
static struct umad_file *files;
static struct umad_send *sends;
static uint32_t next_hi_tid;
static uint8_t issm_held[EMU_MAX_DEVS][EMU_MAX_PORTS];
static struct emu_fdset umad_fds;	/* the files' fds, for the interposers */

bool emu_umad_is_fd(int fd)
{
	return emu_fdset_has(&umad_fds, fd);
}

static struct umad_file *file_by_fd(int fd)
{
	for (struct umad_file *f = files; f; f = f->next)
		if (f->fd == fd)
			return f;
	return NULL;
}

static size_t hdr_size(const struct umad_file *f)
{
	return f->use_pkey_index ? sizeof(struct ib_user_mad_hdr) :
				   sizeof(struct ib_user_mad_hdr_old);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)emu_mad_get32(p) << 32 | emu_mad_get32(p + 4);
}

/* ---- the MAD layer's rules ------------------------------------------------ */

static bool is_smp_class(uint8_t c)
{
	return c == EMU_MCLASS_SUBN_LID || c == EMU_MCLASS_SUBN_DR;
}

static bool is_vendor2(uint8_t c)
{
	return c >= EMU_MCLASS_VENDOR2_LO && c <= EMU_MCLASS_VENDOR2_HI;
}

/* ib_is_mad_class_rmpp() */
static bool is_rmpp_class(uint8_t c)
{
	return c == EMU_MCLASS_SUBN_ADM || c == EMU_MCLASS_DEVICE_MGMT ||
	       c == EMU_MCLASS_DEVICE_ADM || c == EMU_MCLASS_BIS || is_vendor2(c);
}

/* ib_response_mad(): responses keep their TID and wait for nothing */
static bool is_response(const uint8_t *mad)
{
	return (mad[3] & EMU_METHOD_RESP) || mad[3] == EMU_METHOD_TRAP_REPRESS;
}

/*
 * ib_register_mad_agent()'s checks of a registration (class 0: a sender
 * that takes no unsolicited MADs).  0 or EINVAL.
 */
static int check_registration(uint8_t qpn, uint8_t mclass, uint8_t version,
			      const uint8_t oui[3], uint8_t rmpp_version, uint32_t flags)
{
	if (rmpp_version && rmpp_version != RMPP_VERSION)
		return EINVAL;
	if (!mclass)
		return flags & IB_USER_MAD_USER_RMPP ? EINVAL : 0;
	if (version >= MAX_MGMT_VERSION)
		return EINVAL;
	if (mclass >= MAX_MGMT_CLASS && mclass != EMU_MCLASS_SUBN_DR)
		return EINVAL;
	if (is_vendor2(mclass) && !(oui[0] | oui[1] | oui[2]))
		return EINVAL;
	if (!is_rmpp_class(mclass) && rmpp_version)
		return EINVAL;
	/* SMPs on QP0 only, everything else on QP1 */
	if (is_smp_class(mclass) != (qpn == 0))
		return EINVAL;
	return 0;
}

/*
 * smi_handle_dr_smp_send() for a CA, on a directed-route SMP whose route
 * starts here (the permissive DR SLID): the hop pointer must be 0 and the
 * first hop this port, or there is no hop and no DR DLID.  False means
 * discard, which ib_send_mad() reports as EINVAL.
 */
static bool dr_route_ok(const uint8_t *smp, unsigned port)
{
	uint8_t hop_ptr = smp[EMU_SMP_HOP_PTR], hop_cnt = smp[EMU_SMP_HOP_CNT];

	if (emu_mad_get16(smp + 4) & EMU_SMP_DIRECTION)
		return true;	/* a response on its way back: ours to relay */
	if (hop_cnt >= 64 || hop_ptr != 0)
		return false;
	if (hop_cnt)
		return smp[EMU_SMP_INITIAL_PATH + 1] == port;
	return emu_mad_get16(smp + EMU_SMP_DR_DLID) == EMU_PERMISSIVE_LID;
}

/* ---- queueing for the reader ---------------------------------------------- */

/* Moves held messages into the socket while it takes them, oldest first. */
static void flush_held(struct umad_file *f)
{
	struct umad_msg *m;

	while ((m = f->held) &&
	       send(f->peer, m->data, m->len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
		f->held = m->next;
		if (!f->held)
			f->held_tail = &f->held;
		free(m);
	}
}

/*
 * One message for the reader: a header as this file lays it out, then
 * data.  It goes to the socket, or behind what already waits for room
 * there; only a received MAD past the kernel's list limit is dropped
 * (queue_packet()), or one there is no memory for (recv_handler()).
 */
static void queue_msg(struct umad_file *f, const struct ib_user_mad_hdr *h,
		      const uint8_t *data, size_t len, bool is_recv)
{
	size_t hs = hdr_size(f);
	struct umad_msg *m;

	if (is_recv && f->queued > UMAD_MAX_RECV_LIST)
		return;
	m = malloc(sizeof(*m) + hs + len);
	if (!m)
		return;
	m->next = NULL;
	m->len = hs + len;
	memcpy(m->data, h, hs);	/* the old header is the new one's first part */
	memcpy(m->data + hs, data, len);
	*f->held_tail = m;
	f->held_tail = &m->next;
	f->queued++;
	flush_held(f);
}

/* A received MAD for agent id of f (recv_handler() in user_mad.c). */
static void queue_recv(struct umad_file *f, unsigned id, const uint8_t *mad,
		       uint16_t slid, uint32_t src_qp)
{
	struct ib_user_mad_hdr h;

	memset(&h, 0, sizeof(h));
	h.id = id;
	h.length = (uint32_t)(hdr_size(f) + EMU_MAD_SIZE);
	h.qpn = htobe32(src_qp);
	h.lid = htobe16(slid);
	queue_msg(f, &h, mad, EMU_MAD_SIZE, true);
}

static struct umad_send *find_send(uint64_t tid, uint8_t mclass)
{
	for (struct umad_send *s = sends; s; s = s->next)
		if (s->tid == tid && s->mgmt_class == mclass)
			return s;
	return NULL;
}

static void unlink_send(struct umad_send *s)
{
	for (struct umad_send **pp = &sends; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			return;
		}
}

/* The sends that timed out come back with status ETIMEDOUT (send_handler()). */
static void *timer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&umad_mu);
	for (;;) {
		uint64_t now = now_ns(), next = 0;
		struct timespec ts;

		for (struct umad_send **pp = &sends; *pp;) {
			struct umad_send *s = *pp;

			if (s->deadline > now) {
				if (!next || s->deadline < next)
					next = s->deadline;
				pp = &s->next;
				continue;
			}
			*pp = s->next;
			queue_msg(s->file, (const struct ib_user_mad_hdr *)s->msg,
				  s->msg + hdr_size(s->file), EMU_MAD_HDR, false);
			free(s);
		}
		if (!next) {
			pthread_cond_wait(&umad_cv, &umad_mu);
			continue;
		}
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		pthread_cond_timedwait(&umad_cv, &umad_mu, &ts);
	}
	return NULL;
}

static void timer_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t t;
	sigset_t all, old;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&umad_cv, &ca);
	pthread_cond_init(&issm_cv, NULL);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	/* the application's signals are not the timer's to take */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	timer_ok = !emu_thread_create(&t, &ta, timer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&ta);
}

/* ---- routing: where a request goes, who answers ---------------------------- */

/* An agent of another file registered for this request's class and method. */
static bool deliver_request(unsigned host, unsigned d, unsigned p, const uint8_t *mad,
			    uint16_t slid, uint32_t src_qp)
{
	unsigned m = mad[3] & 0x7f;

	for (struct umad_file *f = files; f; f = f->next) {
		if (f->issm || f->host != host || f->dev != d || f->port != p)
			continue;
		for (unsigned i = 0; i < UMAD_MAX_AGENTS; i++) {
			const struct umad_agent *a = &f->agent[i];

			if (a->used && a->mgmt_class == mad[1] &&
			    a->class_version == mad[2] &&
			    (a->method_mask[m / 64] >> (m % 64) & 1)) {
				queue_recv(f, i, mad, slid, src_qp);
				return true;
			}
		}
	}
	return false;
}

/*
 * Where the MAD sent from f's port lands and what answers it: fills resp
 * and *resp_lid and returns 1 for an answer now, 2 when an agent of some
 * file took the request (its answer comes by write()), 0 for nothing.
 */
static int route(struct umad_file *f, const struct umad_agent *a,
		 const struct ib_user_mad_hdr *h, const uint8_t *mad,
		 uint8_t *resp, uint16_t *resp_lid)
{
	struct emu_host_rec *me = emu_subnet_live_rec(f->host), *r;
	uint32_t dqp = be32toh(h->qpn);
	uint16_t dlid = be16toh(h->lid);
	bool smp = is_smp_class(mad[1]);
	unsigned host, d, p;

	/* validate_mad(): the base version, and SMPs on QP0 only */
	if (!me || mad[0] != 1 || smp != (a->qpn == 0) || dqp != (smp ? 0u : 1u))
		return 0;
	if (mad[1] == EMU_MCLASS_SUBN_DR) {
		*resp_lid = EMU_PERMISSIVE_LID;
		if (mad[EMU_SMP_HOP_CNT] == 0)
			return emu_sma_answer(me, f->dev, f->port, mad, resp);
		if (mad[EMU_SMP_HOP_CNT] == 1)
			return emu_switch_answer(mad, resp);
		return 0;	/* past the switch: not modelled */
	}
	if (dlid == EMU_SWITCH_LID) {
		*resp_lid = EMU_SWITCH_LID;
		return smp ? emu_switch_answer(mad, resp) : emu_mad_unmatched(mad, resp);
	}
	if (smp && dlid == EMU_PERMISSIVE_LID) {
		host = f->host;
		d = f->dev;
		p = f->port;
		dlid = me->port[d][p - 1].attr.lid;
	} else if (!emu_subnet_lid_port(dlid, &host, &d, &p)) {
		return 0;
	}
	/* a live host's InfiniBand port that has this LID, else nobody */
	r = host == f->host ? me : emu_subnet_live_rec(host);
	if (!r || d >= r->num_devs || p > r->num_ports ||
	    r->link_layer != IBV_LINK_LAYER_INFINIBAND || r->port[d][p - 1].attr.lid != dlid)
		return 0;
	*resp_lid = dlid;
	if (smp)
		return emu_sma_answer(r, d, p, mad, resp);
	if (mad[1] == EMU_MCLASS_PERF)
		return emu_pma_answer(r, d, p, mad, resp);
	/* agents of this host's files; another host's are out of reach */
	if (r == me && !is_response(mad) &&
	    deliver_request(host, d, p, mad, me->port[f->dev][f->port - 1].attr.lid, 1))
		return 2;
	return emu_mad_unmatched(mad, resp);
}

/* A response written by an agent: to the send of the same TID it answers. */
static void route_response(const struct umad_file *f, const uint8_t *mad)
{
	struct umad_send *s = find_send(get64(mad + 8), mad[1]);
	struct emu_host_rec *me = emu_subnet_live_rec(f->host);

	if (!s || !me)
		return;		/* nobody waits for it: dropped */
	unlink_send(s);
	queue_recv(s->file, s->agent, mad, me->port[f->dev][f->port - 1].attr.lid,
		   is_smp_class(mad[1]) ? 0 : 1);
	free(s);
}

/* ---- file operations ----------------------------------------------------- */

int emu_umad_open(unsigned d, unsigned port, bool issm, int flags)
{
	int sv[2], type = SOCK_SEQPACKET;
	struct umad_file *f;

	if (d >= emu_cfg.num_devs || port < 1 || port > emu_cfg.num_ports)
		return -ENXIO;
	/* issmN is root's (mode 0600); umadN is everyone's */
	if (issm && geteuid() != 0)
		return -EACCES;
	pthread_once(&timer_once, timer_start);
	if (!timer_ok)
		return -ENOMEM;
	if (flags & O_CLOEXEC)
		type |= SOCK_CLOEXEC;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (socketpair(AF_UNIX, type, 0, sv)) {
		int e = errno;

		free(f);
		return -e;
	}
	if (!emu_fdset_fits(sv[0])) {
		emu_real_close(sv[0]);
		emu_real_close(sv[1]);
		free(f);
		return -EMFILE;
	}
	if (flags & O_NONBLOCK)
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
	f->fd = sv[0];
	f->peer = sv[1];
	f->held_tail = &f->held;
	f->dev = d;
	f->port = port;
	f->host = emu_cfg.host_id;
	f->issm = issm;
	f->accmode = flags & O_ACCMODE;
	pthread_mutex_lock(&umad_mu);
	if (issm) {
		/*
		 * One SM per port: ib_umad_sm_open() takes the port's
		 * semaphore, or fails with EAGAIN when asked not to wait.
		 */
		while (issm_held[d][port - 1] && !(flags & O_NONBLOCK))
			pthread_cond_wait(&issm_cv, &umad_mu);
		if (issm_held[d][port - 1]) {
			pthread_mutex_unlock(&umad_mu);
			emu_real_close(sv[0]);
			emu_real_close(sv[1]);
			free(f);
			return -EAGAIN;
		}
		issm_held[d][port - 1] = 1;
	}
	f->next = files;
	files = f;
	emu_fdset_put(&umad_fds, f->fd, true);
	pthread_mutex_unlock(&umad_mu);
	return f->fd;
}

void emu_umad_close(int fd)
{
	struct umad_file *f = NULL;

	pthread_mutex_lock(&umad_mu);
	for (struct umad_file **pp = &files; *pp; pp = &(*pp)->next)
		if ((*pp)->fd == fd) {
			f = *pp;
			*pp = f->next;
			break;
		}
	if (f) {
		emu_fdset_put(&umad_fds, fd, false);
		/* its agents go, and with them the sends they wait on */
		for (struct umad_send **pp = &sends; *pp;) {
			struct umad_send *s = *pp;

			if (s->file == f) {
				*pp = s->next;
				free(s);
			} else {
				pp = &s->next;
			}
		}
		/* the parent's file stays open there, and its SM port held */
		if (f->issm && !f->inherited) {
			issm_held[f->dev][f->port - 1] = 0;
			pthread_cond_broadcast(&issm_cv);
		}
	}
	pthread_mutex_unlock(&umad_mu);
	if (f) {
		emu_real_close(f->peer);
		while (f->held) {
			struct umad_msg *m = f->held;

			f->held = m->next;
			free(m);
		}
		free(f);
	}
}

/*
 * On a real kernel a parent and its child share an inherited umad file:
 * user_mad.c checks no credentials, so either process sends on its agents
 * from the port it was opened on (one host, one HCA), and each MAD queued
 * for the file is read by whichever process reads first.  Here the
 * child's copy keeps the parent's host (f->host) whatever host the child
 * becomes, and its reads take from the socket both share.  What stays
 * per process: a request the child sends waits for its answer or its
 * timeout in the child (the parent's waiting sends are the parent's
 * timer's to end, so the child drops its copies of them, and of the
 * parent's MADs held for room in the socket); agents either registers
 * after the fork are its own.  No umad_mu: the child has no timer yet,
 * and each of its calls into umad settles (waits for this) first.
 */
void emu_umad_disown_locked(void)
{
	while (sends) {
		struct umad_send *s = sends;

		sends = s->next;
		free(s);
	}
	for (struct umad_file *f = files; f; f = f->next) {
		f->inherited = true;
		while (f->held) {
			struct umad_msg *m = f->held;

			f->held = m->next;
			free(m);
		}
		f->held_tail = &f->held;
		f->queued = 0;
	}
	timer_once = (pthread_once_t)PTHREAD_ONCE_INIT;
	timer_ok = false;
}

/*
 * Held across fork() (as cm/ucma.c holds its lock, and for the same
 * reason): the child's files and waiting sends are as the timer left them
 * between two rounds, never half unlinked.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&umad_mu);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&umad_mu);
}

__attribute__((constructor)) static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

/* ib_umad_write() with ib_create_send_mad() and ib_post_send_mad() */
static ssize_t umad_write(struct umad_file *f, const void *buf, size_t count)
{
	union { struct ib_user_mad_hdr h; uint8_t raw[sizeof(struct ib_user_mad_hdr)]; } u;
	uint8_t mad[EMU_MAD_SIZE], resp[EMU_MAD_SIZE];
	size_t hs = hdr_size(f), len;
	const struct umad_agent *a;
	uint16_t resp_lid = 0;
	struct umad_send *s;
	bool kernel_rmpp;
	int r;

	if (f->accmode == O_RDONLY)
		return -EBADF;		/* the VFS: not open for writing */
	if (f->issm)
		return -EINVAL;		/* issm has no read or write */
	if (count < hs + MAD_RMPP_HDR)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	if (emu_copy_from_user(u.raw, (uint64_t)(uintptr_t)buf, hs))
		return -EFAULT;
	if (u.h.id >= UMAD_MAX_AGENTS)
		return -EINVAL;
	if (emu_copy_from_user(mad, (uint64_t)(uintptr_t)buf + hs, MAD_RMPP_HDR))
		return -EFAULT;
	a = &f->agent[u.h.id];
	if (!a->used)
		return -EINVAL;
	/* rdma_create_user_ah(): a RoCE address is a GID, so a MAD needs a GRH */
	if (!u.h.grh_present && emu_cfg.link_layer != IBV_LINK_LAYER_INFINIBAND)
		return -EINVAL;
	kernel_rmpp = a->rmpp_version && !(a->flags & IB_USER_MAD_USER_RMPP);
	/*
	 * One MAD at most: the kernel segments an active RMPP send of more
	 * (emu/README.md: not modelled), and refuses one that is not RMPP
	 * (ib_create_send_mad()).  A shorter one ends in zeros, as the
	 * kernel's zeroed buffer does.
	 */
	len = count - hs;
	if (len > EMU_MAD_SIZE)
		return kernel_rmpp && is_rmpp_class(mad[1]) &&
		       (mad[26] & RMPP_FLAG_ACTIVE) ? -EOPNOTSUPP : -EINVAL;
	memset(mad + MAD_RMPP_HDR, 0, sizeof(mad) - MAD_RMPP_HDR);
	if (emu_copy_from_user(mad, (uint64_t)(uintptr_t)buf + hs, len))
		return -EFAULT;
	/* ib_post_send_mad(): an RMPP agent sends RMPP classes only */
	if (a->rmpp_version && !is_rmpp_class(mad[1]))
		return -EINVAL;
	if (mad[1] == EMU_MCLASS_SUBN_DR &&
	    emu_mad_get16(mad + (emu_mad_get16(mad + 4) & EMU_SMP_DIRECTION ?
				 EMU_SMP_DR_DLID : EMU_SMP_DR_SLID)) == EMU_PERMISSIVE_LID &&
	    !dr_route_ok(mad, f->port))
		return -EINVAL;
	if (is_response(mad)) {
		route_response(f, mad);
		return (ssize_t)count;
	}
	/* the upper half of a request's TID names the agent */
	emu_mad_put32(mad + 8, a->hi_tid);
	if (find_send(get64(mad + 8), mad[1]))
		return -EINVAL;		/* is_duplicate() */
	r = route(f, a, &u.h, mad, resp, &resp_lid);
	if (!u.h.timeout_ms)
		return (ssize_t)count;	/* a send that waits for nothing */
	if (r == 1) {
		queue_recv(f, u.h.id, resp, resp_lid, is_smp_class(mad[1]) ? 0 : 1);
		return (ssize_t)count;
	}
	/* it waits for an answer (r == 2) or for its timeout */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->file = f;
	s->agent = u.h.id;
	s->tid = get64(mad + 8);
	s->mgmt_class = mad[1];
	s->deadline = now_ns() + (uint64_t)u.h.timeout_ms * 1000000u * (u.h.retries + 1ull);
	u.h.status = ETIMEDOUT;
	memcpy(s->msg, u.raw, hs);
	memcpy(s->msg + hs, mad, EMU_MAD_HDR);
	s->next = sends;
	sends = s;
	pthread_cond_signal(&umad_cv);
	return (ssize_t)count;
}

ssize_t emu_umad_write(int fd, const void *buf, size_t len)
{
	struct umad_file *f;
	ssize_t r = -EBADF;

	/* a child of fork() writing on its parent's file times its own sends */
	pthread_once(&timer_once, timer_start);
	if (!timer_ok)
		return -ENOMEM;
	pthread_mutex_lock(&umad_mu);
	f = file_by_fd(fd);
	if (f)
		r = umad_write(f, buf, len);
	pthread_mutex_unlock(&umad_mu);
	return r;
}

/*
 * ib_umad_read(): a buffer smaller than the header, or than the next MAD
 * (copy_recv_mad(), copy_send_mad()), is EINVAL and the MAD stays queued.
 */
ssize_t emu_umad_read(int fd, void *buf, size_t len)
{
	struct umad_file *f;
	size_t hs = 0;
	bool issm = false;
	int accmode = O_RDWR;
	ssize_t n;

	pthread_mutex_lock(&umad_mu);
	f = file_by_fd(fd);
	if (f) {
		hs = hdr_size(f);
		issm = f->issm;
		accmode = f->accmode;
	}
	pthread_mutex_unlock(&umad_mu);
	if (!f || accmode == O_WRONLY)
		return -EBADF;
	if (issm || len < hs)
		return -EINVAL;
	n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);	/* waits unless O_NONBLOCK */
	if (n < 0)
		return -errno;
	if ((size_t)n > len)
		return -EINVAL;
	n = recv(fd, buf, len, 0);
	if (n < 0)
		return -errno;
	/* the file may have been closed meanwhile: then nothing waits */
	pthread_mutex_lock(&umad_mu);
	f = file_by_fd(fd);
	if (f && f->queued) {
		f->queued--;
		flush_held(f);
	}
	pthread_mutex_unlock(&umad_mu);
	return n;
}

/* ib_umad_reg_agent() and ib_umad_reg_agent2() */
static int register_agent(struct umad_file *f, void *arg, bool v2)
{
	struct ib_user_mad_reg_req r1;
	struct ib_user_mad_reg_req2 r2;
	struct umad_agent a = { .used = true };
	uint8_t oui[3] = { 0 };
	uint32_t qpn;
	unsigned id;
	int ret;

	if (v2 ? emu_copy_from_user(&r2, (uint64_t)(uintptr_t)arg, sizeof(r2)) :
		 emu_copy_from_user(&r1, (uint64_t)(uintptr_t)arg, sizeof(r1)))
		return -EFAULT;
	qpn = v2 ? r2.qpn : r1.qpn;
	if (qpn != 0 && qpn != 1)
		return -EINVAL;
	if (v2 && (r2.flags & ~(uint32_t)IB_USER_MAD_REG_FLAGS_CAP)) {
		uint32_t cap = IB_USER_MAD_REG_FLAGS_CAP;

		/* the kernel tells which flags it has */
		if (emu_copy_to_user((uint64_t)(uintptr_t)arg +
				     offsetof(struct ib_user_mad_reg_req2, flags), &cap, sizeof(cap)))
			return -EFAULT;
		return -EINVAL;
	}
	for (id = 0; id < UMAD_MAX_AGENTS && f->agent[id].used; id++)
		;
	if (id == UMAD_MAX_AGENTS)
		return -ENOMEM;
	a.qpn = (uint8_t)qpn;
	a.mgmt_class = v2 ? r2.mgmt_class : r1.mgmt_class;
	a.class_version = v2 ? r2.mgmt_class_version : r1.mgmt_class_version;
	a.rmpp_version = v2 ? r2.rmpp_version : r1.rmpp_version;
	a.flags = v2 ? r2.flags : 0;
	if (a.mgmt_class && v2) {
		if (r2.oui & 0xff000000)
			return -EINVAL;
		oui[0] = (uint8_t)(r2.oui >> 16);
		oui[1] = (uint8_t)(r2.oui >> 8);
		oui[2] = (uint8_t)r2.oui;
		memcpy(a.method_mask, r2.method_mask, sizeof(a.method_mask));
	} else if (a.mgmt_class) {
		memcpy(oui, r1.oui, sizeof(oui));
		memcpy(a.method_mask, r1.method_mask, sizeof(a.method_mask));
	}
	if ((ret = check_registration(a.qpn, a.mgmt_class, a.class_version, oui,
				      a.rmpp_version, a.flags)))
		return -ret;
	/*
	 * ib_register_mad_agent(): a RoCE port has the GSI but no QP0 (its
	 * core caps have IB_MAD, not IB_SMI), so an SMI agent is refused.
	 */
	if (a.qpn == 0 && emu_cfg.link_layer != IBV_LINK_LAYER_INFINIBAND)
		return -EPROTONOSUPPORT;
	if (emu_copy_to_user((uint64_t)(uintptr_t)arg, &id, sizeof(id)))
		return -EFAULT;
	a.hi_tid = ++next_hi_tid;
	f->agent[id] = a;
	if (!f->already_used) {
		f->already_used = true;
		if (v2)
			f->use_pkey_index = true;
	}
	return 0;
}

static int unregister_agent(struct umad_file *f, void *arg)
{
	uint32_t id;

	if (emu_copy_from_user(&id, (uint64_t)(uintptr_t)arg, sizeof(id)))
		return -EFAULT;
	if (id >= UMAD_MAX_AGENTS || !f->agent[id].used)
		return -EINVAL;
	f->agent[id].used = false;
	/* its sends are cancelled: flushed, not reported (send_handler()) */
	for (struct umad_send **pp = &sends; *pp;) {
		struct umad_send *s = *pp;

		if (s->file == f && s->agent == id) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
	return 0;
}

int emu_umad_ioctl(int fd, unsigned long req, void *arg)
{
	struct umad_file *f;
	int r = -ENOTTY;

	pthread_mutex_lock(&umad_mu);
	f = file_by_fd(fd);
	if (!f)
		r = -EBADF;
	else if (f->issm)
		r = -ENOTTY;	/* the issm file has no ioctl */
	else if (req == IB_USER_MAD_REGISTER_AGENT)
		r = register_agent(f, arg, false);
	else if (req == IB_USER_MAD_REGISTER_AGENT2)
		r = register_agent(f, arg, true);
	else if (req == IB_USER_MAD_UNREGISTER_AGENT)
		r = unregister_agent(f, arg);
	else if (req == IB_USER_MAD_ENABLE_PKEY) {
		/* ib_umad_enable_pkey(): only before the first agent */
		r = f->already_used ? -EINVAL : 0;
		if (!r)
			f->use_pkey_index = true;
	}
	pthread_mutex_unlock(&umad_mu);
	return r;
}
