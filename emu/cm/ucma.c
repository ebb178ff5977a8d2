/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ucma.c - the character device: event channel files, the table of ids,
 * command framing and the commands about ids and events, as the kernel's
 * drivers/infiniband/core/ucma.c answers them (what librdmacm sends is in
 * rdma-core librdmacm/cma.c).
 *
 * An event channel is a socketpair: the application holds one end, we the
 * other and write one byte per queued event, so that poll(), epoll and
 * O_NONBLOCK behave as on the kernel's file (readable while events are
 * queued).  GET_EVENT takes one event and one byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/fdset.h"
#include "internal.h"
#include "kernel/kernel.h"

static pthread_mutex_t cm_mutex = PTHREAD_MUTEX_INITIALIZER;

void cm_lock(void)
{
	pthread_mutex_lock(&cm_mutex);
}

void cm_unlock(void)
{
	pthread_mutex_unlock(&cm_mutex);
}

/*
 * fork() copies the ids, files and events as they are: held across it,
 * as libc holds its own locks, cm_mutex gives the child them between two
 * operations of the CM thread, never in the middle of one (which
 * emu_cm_disown_locked() then walks).  Nothing holding it takes
 * emu_lock, the lock kernel/objects.c holds across fork(), nor the other
 * way round, so the order of the two is free.
 */
static void fork_prepare(void)
{
	cm_lock();
}

__attribute__((constructor)) static void fork_register(void)
{
	pthread_atfork(fork_prepare, cm_unlock, cm_unlock);
}

uint64_t cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------ */
/* Which fds are channels: read without the lock by close() and write()     */

static struct emu_fdset cm_fds;
/* the channels a child of fork() inherited: its parent's (emu_cm_disown_locked()) */
static struct emu_fdset inherited_fds;

bool emu_cm_is_fd(int fd)
{
	return emu_fdset_has(&cm_fds, fd) || emu_fdset_has(&inherited_fds, fd);
}

static struct cm_file *files;

static struct cm_file *file_by_fd(int fd)
{
	for (struct cm_file *f = files; f; f = f->next)
		if (f->fd == fd)
			return f;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Ids: one table for the process, as the kernel's ctx_idr is one table     */

static struct cm_id *id_table[CM_MAX_IDS];
static uint32_t next_gen = 1;

struct cm_id *cm_id_alloc(struct cm_file *file, uint16_t ps, uint8_t qp_type)
{
	struct cm_id *id;
	uint32_t h;

	for (h = 0; h < CM_MAX_IDS && id_table[h]; h++)
		;
	if (h == CM_MAX_IDS)
		return NULL;
	id = calloc(1, sizeof(*id));
	if (!id)
		return NULL;
	id->handle = h;
	id->file = file;
	id->ps = ps;
	id->qp_type = qp_type;
	id->sock = -1;
	id->gen = next_gen++;
	id_table[h] = id;
	return id;
}

struct cm_id *cm_id_by_gen(uint32_t handle, uint32_t gen)
{
	struct cm_id *id = handle < CM_MAX_IDS ? id_table[handle] : NULL;

	return id && id->gen == gen ? id : NULL;
}

struct cm_id *cm_id_next(struct cm_id *prev)
{
	for (uint32_t h = prev ? prev->handle + 1 : 0; h < CM_MAX_IDS; h++)
		if (id_table[h])
			return id_table[h];
	return NULL;
}

/* _ucma_find_context(): ENOENT if no such id, EINVAL if another file's. */
int cm_get_id(struct cm_file *f, uint32_t handle, struct cm_id **out)
{
	struct cm_id *id = handle < CM_MAX_IDS ? id_table[handle] : NULL;

	if (!id || !id->visible)
		return ENOENT;
	if (id->file != f)
		return EINVAL;
	*out = id;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

void cm_event_post_bell(struct cm_file *f)
{
	static const char b = 'e';

	/* the channel's buffer holds far more bytes than CM_MAX_IDS events */
	(void)send(f->bell, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	pthread_cond_broadcast(&f->queued);
}

static void bell_take(struct cm_file *f)
{
	char b;

	(void)recv(f->fd, &b, 1, MSG_DONTWAIT);
}

struct cm_event *cm_event_new(struct cm_id *id, int event, int status)
{
	struct cm_event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	ev->id = id;
	ev->resp.uid = id->uid;
	ev->resp.id = id->handle;
	ev->resp.event = (uint32_t)event;
	ev->resp.status = (uint32_t)status;
	return ev;
}

/*
 * ucma_event_handler(): events of a new connection are dropped until
 * rdma_accept() gave it a context (uid), except its CONNECT_REQUEST, which
 * goes to the listener.
 */
void cm_event_post(struct cm_event *ev)
{
	struct cm_file *f = ev->id->file;

	if (!ev->id->uid && ev->resp.event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		free(ev);
		return;
	}
	*f->tail = ev;
	f->tail = &ev->next;
	cm_event_post_bell(f);
}

void cm_queue_event(struct cm_id *id, int event, int status)
{
	struct cm_event *ev = cm_event_new(id, event, status);

	if (ev)
		cm_event_post(ev);
}

/*
 * Take the events of id off its file (the kernel's ucma_free_ctx()): those
 * it would have reported, with the new ids of its connection requests, and
 * the connection request that announces id itself.
 */
static void take_back_events(struct cm_id *id)
{
	for (struct cm_file *f = files; f; f = f->next) {
		struct cm_event **p = &f->head, *ev;

		while ((ev = *p)) {
			if (ev->id != id && ev->child != id) {
				p = &ev->next;
				continue;
			}
			*p = ev->next;
			bell_take(f);
			if (ev->child == id)
				ev->id->pending--;
			else if (ev->child)
				cm_id_destroy(ev->child);
			free(ev);
		}
		f->tail = p;
	}
}

/* ucma_cleanup_mc_events(): a group's events go with it */
void cm_take_back_mc_events(struct cm_mc *mc)
{
	struct cm_file *f = mc->id->file;
	struct cm_event **p = &f->head, *ev;

	while ((ev = *p)) {
		if (ev->mc != mc) {
			p = &ev->next;
			continue;
		}
		*p = ev->next;
		bell_take(f);
		free(ev);
	}
	f->tail = p;
}

int cm_id_destroy(struct cm_id *id)
{
	int reported = id->events_reported;

	cm_conn_teardown(id);
	cm_mc_leave_all(id);
	take_back_events(id);
	/* connections accepted on the socket whose REQ has not come yet */
	for (struct cm_id *c = cm_id_next(NULL), *n; c; c = n) {
		n = cm_id_next(c);
		if (c->listener == id) {
			c->listener = NULL;
			cm_id_destroy(c);
			n = cm_id_next(NULL);
		}
	}
	id_table[id->handle] = NULL;
	free(id);
	return reported;
}

/* ------------------------------------------------------------------------ */
/* Commands about ids and events                                             */

int cm_copy_in(void *dst, uint64_t src, size_t len)
{
	return emu_copy_from_user(dst, src, len);
}

int cm_copy_out(uint64_t dst, const void *src, size_t len)
{
	return emu_copy_to_user(dst, src, len);
}

/*
 * How a command about one id opens, as the kernel's handlers open:
 * copy_from_user() of the whole command (EFAULT), then ucma_get_ctx() of
 * the id it names (ENOENT, EINVAL).  handle points at that id's field
 * inside cmd, which the copy fills (hence not const), and is read once the
 * command is in.  A command that checks its own fields before the lookup
 * (CONNECT, BIND, RESOLVE_ADDR, REJECT, the joins) does the two steps
 * itself, so that its errnos come in the kernel's order.
 */
int cm_cmd_id(struct cm_file *f, uint64_t in, void *cmd, size_t len,
	      uint32_t *handle, struct cm_id **id)
{
	if (cm_copy_in(cmd, in, len))
		return EFAULT;
	return cm_get_id(f, *handle, id);
}

static int cmd_create_id(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	struct cm_id *id;
	uint8_t qp_type;
	int ret;

	(void)in_len;
	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	switch (cmd.ps) {	/* ucma_get_qp_type() */
	case RDMA_PS_TCP:
		qp_type = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qp_type = IBV_QPT_UD;
		break;
	case RDMA_PS_IB:
		qp_type = cmd.qp_type;
		break;
	default:
		return EINVAL;
	}
	id = cm_id_alloc(f, cmd.ps, qp_type);
	if (!id)
		return ENOMEM;
	id->uid = cmd.uid;
	id->visible = true;
	resp.id = id->handle;
	ret = cm_copy_out(cmd.response, &resp, sizeof(resp));
	if (ret)
		cm_id_destroy(id);
	return ret;
}

static int cmd_destroy_id(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct cm_id *id;
	int ret;

	(void)in_len;
	if (out_len < (int)sizeof(resp))
		return ENOSPC;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	resp.events_reported = (uint32_t)cm_id_destroy(id);
	return cm_copy_out(cmd.response, &resp, sizeof(resp));
}

static bool nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

static int cmd_get_event(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_get_event cmd;
	struct cm_event *ev;
	int fd = f->fd;

	(void)in_len;
	if (out_len < (int)sizeof(ev->resp))
		return ENOSPC;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	while (!f->head) {
		if (nonblocking(fd))
			return EAGAIN;
		/*
		 * A close() meanwhile does not end the wait: the kernel's
		 * write() holds the file, so such a thread sleeps until the
		 * process exits (rping's CM thread does so).
		 */
		f->waiters++;
		do
			pthread_cond_wait(&f->queued, &cm_mutex);
		while (f->closed || !f->head);
		f->waiters--;
	}
	ev = f->head;
	if (cm_copy_out(cmd.response, &ev->resp, sizeof(ev->resp)))
		return EFAULT;	/* the event stays queued, as in the kernel */
	if (ev->child) {
		/* ucma_get_event(): the new id becomes the application's */
		ev->child->visible = true;
		ev->child->listener = NULL;
		ev->id->pending--;
	}
	f->head = ev->next;
	if (!f->head)
		f->tail = &f->head;
	bell_take(f);
	ev->id->events_reported++;
	if (ev->mc)
		ev->mc->events_reported++;
	free(ev);
	return 0;
}

/* rdma_migrate_id(): move an id and its queued events to this channel. */
static int cmd_migrate_id(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp;
	struct cm_file *old;
	struct cm_event **p, *ev;
	struct cm_id *id;
	int ret;

	(void)in_len;
	(void)out_len;
	if (cm_copy_in(&cmd, in, sizeof(cmd)))
		return EFAULT;
	if (fcntl((int)cmd.fd, F_GETFD) < 0)
		return ENOENT;		/* fdget() found no file */
	if (!(old = file_by_fd((int)cmd.fd)))
		return EINVAL;		/* a file, but not ours */
	if ((ret = cm_get_id(old, cmd.id, &id)))
		return ret;
	if (old != f) {
		for (p = &old->head; (ev = *p);) {
			if (ev->id != id) {
				p = &ev->next;
				continue;
			}
			*p = ev->next;
			bell_take(old);
			ev->next = NULL;
			*f->tail = ev;
			f->tail = &ev->next;
			cm_event_post_bell(f);
		}
		old->tail = p;
		id->file = f;
	}
	resp.events_reported = (uint32_t)id->events_reported;
	return cm_copy_out(cmd.response, &resp, sizeof(resp));
}

/* ucma_set_option(): the option's value is copied in whole first. */
static int cmd_set_option(struct cm_file *f, uint64_t in, int in_len, int out_len)
{
	struct rdma_ucm_set_option cmd;
	struct cm_id *id;
	void *val;
	int ret;

	(void)in_len;
	(void)out_len;
	if ((ret = cm_cmd_id(f, in, &cmd, sizeof(cmd), &cmd.id, &id)))
		return ret;
	if (cmd.optlen > 1u << 16)
		return ENOMEM;	/* what memdup_user() of a huge length gets */
	val = malloc(cmd.optlen ? cmd.optlen : 1);
	if (!val)
		return ENOMEM;
	ret = cm_copy_in(val, cmd.optval, cmd.optlen) ? EFAULT :
	      cm_set_option(id, cmd.level, cmd.optname, val, cmd.optlen);
	free(val);
	return ret;
}

/* The table of ucma_cmd_table[]: GET_OPTION has no handler there either. */
static int (*const cmd_table[])(struct cm_file *, uint64_t, int, int) = {
	[RDMA_USER_CM_CMD_CREATE_ID]	= cmd_create_id,
	[RDMA_USER_CM_CMD_DESTROY_ID]	= cmd_destroy_id,
	[RDMA_USER_CM_CMD_BIND_IP]	= cm_cmd_bind_ip,
	[RDMA_USER_CM_CMD_RESOLVE_IP]	= cm_cmd_resolve_ip,
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = cm_cmd_resolve_route,
	[RDMA_USER_CM_CMD_QUERY_ROUTE]	= cm_cmd_query_route,
	[RDMA_USER_CM_CMD_CONNECT]	= cm_cmd_connect,
	[RDMA_USER_CM_CMD_LISTEN]	= cm_cmd_listen,
	[RDMA_USER_CM_CMD_ACCEPT]	= cm_cmd_accept,
	[RDMA_USER_CM_CMD_REJECT]	= cm_cmd_reject,
	[RDMA_USER_CM_CMD_DISCONNECT]	= cm_cmd_disconnect,
	[RDMA_USER_CM_CMD_INIT_QP_ATTR]	= cm_cmd_init_qp_attr,
	[RDMA_USER_CM_CMD_GET_EVENT]	= cmd_get_event,
	[RDMA_USER_CM_CMD_SET_OPTION]	= cmd_set_option,
	[RDMA_USER_CM_CMD_NOTIFY]	= cm_cmd_notify,
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = cm_cmd_join_ip_mcast,
	[RDMA_USER_CM_CMD_LEAVE_MCAST]	= cm_cmd_leave_mcast,
	[RDMA_USER_CM_CMD_MIGRATE_ID]	= cmd_migrate_id,
	[RDMA_USER_CM_CMD_QUERY]	= cm_cmd_query,
	[RDMA_USER_CM_CMD_BIND]		= cm_cmd_bind,
	[RDMA_USER_CM_CMD_RESOLVE_ADDR]	= cm_cmd_resolve_addr,
	[RDMA_USER_CM_CMD_JOIN_MCAST]	= cm_cmd_join_mcast,
};

/* ucma_write(): the header, its command number and lengths, then the command. */
int emu_cm_write(int fd, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint64_t ubuf = (uint64_t)(uintptr_t)buf;
	struct cm_file *f;
	int ret;

	/*
	 * ucma_write() refuses a caller whose credentials are not those the
	 * file was opened with (ib_safe_file_access(), before any check of
	 * the command), and a child of fork() has credentials of its own
	 * (copy_creds() in kernel/cred.c): the parent's channel answers the
	 * child EACCES, whatever it asks.
	 */
	if (emu_fdset_has(&inherited_fds, fd))
		return EACCES;
	if (len < sizeof(hdr))
		return EINVAL;
	if (cm_copy_in(&hdr, ubuf, sizeof(hdr)))
		return EFAULT;
	if (hdr.cmd >= EMU_ARRAY_SIZE(cmd_table))
		return EINVAL;
	if (hdr.in + sizeof(hdr) > len)
		return EINVAL;
	if (!cmd_table[hdr.cmd])
		return ENOSYS;
	cm_lock();
	f = file_by_fd(fd);
	ret = f ? cmd_table[hdr.cmd](f, ubuf + sizeof(hdr), hdr.in, hdr.out) : EBADF;
	cm_unlock();
	emu_dbg("rdma_cm cmd %u on fd %d -> %d\n", hdr.cmd, fd, ret);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* open and close                                                            */

int emu_cm_open(int flags)
{
	int sv[2], type = SOCK_STREAM;
	struct cm_file *f;
	int ret;

	if ((ret = cm_link_start())) {
		errno = ret;
		return -1;
	}
	if (flags & O_CLOEXEC)
		type |= SOCK_CLOEXEC;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	if (socketpair(AF_UNIX, type, 0, sv)) {
		free(f);
		return -1;
	}
	if (!emu_fdset_fits(sv[0])) {
		emu_real_close(sv[0]);
		emu_real_close(sv[1]);
		free(f);
		errno = EMFILE;
		return -1;
	}
	fcntl(sv[1], F_SETFD, FD_CLOEXEC);
	if (flags & O_NONBLOCK)
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
	/* the application never writes to its end: GET_EVENT is a write() */
	shutdown(sv[0], SHUT_WR);
	f->fd = sv[0];
	f->bell = sv[1];
	f->tail = &f->head;
	pthread_cond_init(&f->queued, NULL);
	cm_lock();
	f->next = files;
	files = f;
	emu_fdset_put(&cm_fds, f->fd, true);
	cm_unlock();
	emu_dbg("open rdma_cm -> fd %d\n", f->fd);
	return f->fd;
}

/*
 * A child of fork() and its parent share each channel the parent had: the
 * kernel's file, its ids and their connections stay the parent's, and the
 * child's close() only drops its reference.  Here the child's copies of
 * the parent's files, ids and events go, and with them its descriptors
 * of the ids' sockets and of the files' bells - closing them leaves the
 * parent's open - without a message, an epoll change or an unlink: no
 * DREQ for the parent's connections, no listener taken from the subnet's
 * directory.  The application's descriptors stay, and refuse commands.
 * No cm_lock(): the child has no CM thread yet, and each of its calls
 * into rdma_cm settles (waits for this) first.
 */
void emu_cm_disown_locked(void)
{
	while (files) {
		struct cm_file *f = files;

		files = f->next;
		emu_fdset_put(&cm_fds, f->fd, false);
		emu_fdset_put(&inherited_fds, f->fd, true);
		emu_real_close(f->bell);
		while (f->head) {
			struct cm_event *ev = f->head;

			f->head = ev->next;
			free(ev);
		}
		free(f);
	}
	for (uint32_t h = 0; h < CM_MAX_IDS; h++) {
		struct cm_id *id = id_table[h];

		if (!id)
			continue;
		if (id->sock >= 0)
			emu_real_close(id->sock);
		id_table[h] = NULL;
		free(id);
	}
	cm_link_disown();
}

/* ucma_close(): every id of the file is destroyed, as by DESTROY_ID. */
void emu_cm_close(int fd)
{
	struct cm_file **p, *f;
	struct cm_id *id;

	if (emu_fdset_has(&inherited_fds, fd)) {
		emu_fdset_put(&inherited_fds, fd, false);	/* the parent's: it stays open there */
		return;
	}
	cm_lock();
	for (p = &files; (f = *p) && f->fd != fd; p = &f->next)
		;
	if (f) {
		for (;;) {
			for (id = cm_id_next(NULL); id && id->file != f; id = cm_id_next(id))
				;
			if (!id)
				break;
			cm_id_destroy(id);
		}
		*p = f->next;
		emu_fdset_put(&cm_fds, fd, false);
		emu_real_close(f->bell);
		f->closed = true;
		if (!f->waiters) {
			pthread_cond_destroy(&f->queued);
			free(f);
		}
	}
	cm_unlock();
}
