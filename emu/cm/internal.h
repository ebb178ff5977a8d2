/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * internal.h - private to cm/: the channel files and ids (ucma.c), the
 * messages the connection managers of two hosts exchange (link.c), the
 * address and route model (addr.c).
 *
 * Locking: one mutex, cm_lock(), guards every structure here.  Commands
 * take it for their whole run (a blocking GET_EVENT drops it while it
 * sleeps); the CM thread of link.c takes it around each message and timer.
 * Nothing here takes emu_lock, and the kernel never calls cm/.
 */
#ifndef RDMAFAST_EMU_CM_INTERNAL_H
#define RDMAFAST_EMU_CM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/ib_user_verbs.h>

#include "base/base.h"
#include "cm.h"
#include "msg.h"

struct cm_msg;

/*
 * The event numbers of the ABI (the kernel's enum rdma_cm_event_type, which
 * librdmacm's <rdma/rdma_cma.h> repeats; that header cannot be included
 * beside <rdma/rdma_user_cm.h>, whose port-space names it redefines).
 */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED,
	RDMA_CM_EVENT_ADDR_ERROR,
	RDMA_CM_EVENT_ROUTE_RESOLVED,
	RDMA_CM_EVENT_ROUTE_ERROR,
	RDMA_CM_EVENT_CONNECT_REQUEST,
	RDMA_CM_EVENT_CONNECT_RESPONSE,
	RDMA_CM_EVENT_CONNECT_ERROR,
	RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED,
	RDMA_CM_EVENT_ESTABLISHED,
	RDMA_CM_EVENT_DISCONNECTED,
	RDMA_CM_EVENT_DEVICE_REMOVAL,
	RDMA_CM_EVENT_MULTICAST_JOIN,
	RDMA_CM_EVENT_MULTICAST_ERROR,
	RDMA_CM_EVENT_ADDR_CHANGE,
	RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

#define RDMA_UDP_QKEY	0x01234567	/* the Q_Key of RDMA_PS_UDP */

/* ------------------------------------------------------------------------ */
/* The model of a connection manager id, as drivers/infiniband/core/cma.c   */

enum cm_state {
	CM_IDLE,		/* created */
	CM_BOUND,		/* rdma_bind_addr() */
	CM_ADDR_QUERY,		/* rdma_resolve_addr() pending */
	CM_ADDR_RESOLVED,
	CM_ROUTE_QUERY,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_REQ_SENT,		/* active: REQ out, waiting for REP/REJ */
	CM_REP_RCVD,		/* active: CONNECT_RESPONSE queued, RTU not yet sent */
	CM_REQ_RCVD,		/* passive: CONNECT_REQUEST queued */
	CM_REP_SENT,		/* passive: accepted, waiting for RTU */
	CM_ESTABLISHED,
	CM_DREQ_SENT,		/* rdma_disconnect() sent DREQ, waiting for DREP */
	CM_DISCONNECTED,	/* DISCONNECTED queued; time wait */
	CM_DEAD,		/* rejected or peer gone: only destroy is left */
};

struct cm_file;

struct cm_id {
	uint32_t		handle;		/* the ctx id of ucma.c's table */
	uint64_t		uid;		/* librdmacm's pointer; 0 until accepted */
	struct cm_file		*file;
	bool			visible;	/* found by commands (the CONNECT_REQUEST was read) */
	uint16_t		ps;		/* enum rdma_ucm_port_space */
	uint8_t			qp_type;	/* IBV_QPT_RC or IBV_QPT_UD */
	enum cm_state		state;
	int			events_reported;

	struct sockaddr_storage	src, dst;
	bool			bound;		/* owns src's port (cma's bind list) */
	bool			has_dev;	/* local device bound */
	struct cm_end		local, remote;

	/* options */
	uint8_t			tos;
	bool			reuseaddr, afonly, has_ack_timeout;
	uint8_t			ack_timeout;

	/* connection: what the REQ/REP exchange agreed */
	uint32_t		psn;		/* own starting PSN */
	uint32_t		remote_qpn, remote_psn, remote_qkey;
	uint8_t			responder_resources, initiator_depth;
	uint8_t			retry_count, rnr_retry_count;
	uint8_t			path_mtu;	/* enum ibv_mtu */

	bool			has_conn;	/* an IB CM id exists: REQ sent or received */

	/* link.c: the socket to the peer host (or the listening socket) */
	int			sock;
	uint32_t		gen;		/* never reused: epoll's cookie with handle */
	struct cm_id		*listener;	/* passive, until its CONNECT_REQUEST is read */
	int			backlog;	/* listener: CONNECT_REQUESTs it may hold */
	int			pending;	/* and holds */

	uint64_t		timer_ms;	/* 0, or when on_timer() runs (CLOCK_MONOTONIC) */
	int			timer_event;	/* the event it queues */
	int			timer_status;
};

/* A multicast group an id joined (ucma.c's struct ucma_multicast). */
struct cm_mc {
	uint32_t		handle;		/* in its own table, as multicast_idr */
	uint64_t		uid;
	struct cm_id		*id;
	int			events_reported;
	struct sockaddr_storage	addr;
};

struct cm_event {
	struct cm_event		*next;
	struct cm_id		*id;
	struct cm_id		*child;		/* CONNECT_REQUEST: the new id */
	struct cm_mc		*mc;		/* MULTICAST_JOIN/ERROR: the group */
	struct rdma_ucm_event_resp resp;
};

/* One open of /dev/infiniband/rdma_cm: an event channel. */
struct cm_file {
	int			fd;		/* the application's end */
	int			bell;		/* ours: one byte per queued event */
	struct cm_event		*head, **tail;
	struct cm_file		*next;
	pthread_cond_t		queued;		/* for GET_EVENTs that block */
	int			waiters;	/* such GET_EVENTs: they keep the file */
	bool			closed;
};

void cm_lock(void);
void cm_unlock(void);
uint64_t cm_now_ms(void);

#define CM_MAX_IDS	4096

/* ucma.c: ids, events, framing */
struct cm_id *cm_id_alloc(struct cm_file *file, uint16_t ps, uint8_t qp_type);
int cm_id_destroy(struct cm_id *id);		/* returns its events_reported */
struct cm_id *cm_id_by_gen(uint32_t handle, uint32_t gen);
struct cm_id *cm_id_next(struct cm_id *prev);	/* iteration over all ids */
int cm_get_id(struct cm_file *f, uint32_t handle, struct cm_id **out);
struct cm_event *cm_event_new(struct cm_id *id, int event, int status);
void cm_event_post(struct cm_event *ev);
void cm_event_post_bell(struct cm_file *f);	/* one more event queued on f */
void cm_queue_event(struct cm_id *id, int event, int status);
int cm_copy_in(void *dst, uint64_t src, size_t len);	/* 0 or EFAULT */
int cm_copy_out(uint64_t dst, const void *src, size_t len);
/* copy the command in, then look up the id it names (handle points into cmd) */
int cm_cmd_id(struct cm_file *f, uint64_t in, void *cmd, size_t len,
	      uint32_t *handle, struct cm_id **id);

/* The command handlers: (file, user address of the command, in, out) -> errno */
typedef int cm_cmd_fn(struct cm_file *f, uint64_t in, int in_len, int out_len);
/* route.c */
cm_cmd_fn cm_cmd_bind_ip, cm_cmd_bind, cm_cmd_resolve_ip, cm_cmd_resolve_addr,
	  cm_cmd_resolve_route, cm_cmd_query_route, cm_cmd_query;
int cm_set_option(struct cm_id *id, uint32_t level, uint32_t name,
		  const void *val, uint32_t len);
/* conn.c */
cm_cmd_fn cm_cmd_connect, cm_cmd_listen, cm_cmd_accept, cm_cmd_reject,
	  cm_cmd_disconnect, cm_cmd_init_qp_attr, cm_cmd_notify;
void cm_conn_teardown(struct cm_id *id);	/* what destroying it sends */
int cm_bind_sockaddr(struct cm_id *id, const struct sockaddr *sa);	/* route.c */
/* sidr.c: UD ids resolve a remote QP with SIDR instead of connecting */
int cm_sidr_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p);
int cm_sidr_accept(struct cm_id *id, const struct rdma_ucm_conn_param *p, uint64_t uid);
int cm_sidr_reject(struct cm_id *id, const struct rdma_ucm_reject *cmd);
struct cm_event *cm_sidr_req_event(struct cm_id *l, struct cm_id *c, const struct cm_msg *m);
void cm_sidr_send_rep(struct cm_id *id, int status, uint32_t qpn, uint32_t qkey,
		      const void *private_data, unsigned len);
void cm_sidr_on_rep(struct cm_id *id, const struct cm_msg *m);
void cm_ah_attr(const struct cm_id *id, const struct cm_end *to, struct ib_uverbs_ah_attr *ah);
/* mcast.c */
cm_cmd_fn cm_cmd_join_ip_mcast, cm_cmd_join_mcast, cm_cmd_leave_mcast;
void cm_mc_leave_all(struct cm_id *id);		/* destroying the id */
void cm_take_back_mc_events(struct cm_mc *mc);	/* ucma.c */

/* ------------------------------------------------------------------------ */
/* The link between two hosts' CMs (link.c); the messages are msg.h's      */

_Static_assert(CM_MSG_PRIVATE_MAX == RDMA_MAX_PRIVATE_DATA, "private data as the ABI has it");

int cm_link_start(void);			/* the CM thread, once */
void cm_link_disown(void);			/* fork(): the parent's thread was not ours */
int cm_link_listen(struct cm_id *id);		/* 0, EADDRINUSE, ... */
int cm_link_connect(struct cm_id *id);		/* 0 or ECONNREFUSED: nobody listens */
int cm_link_send(struct cm_id *id, const struct cm_msg *m);
void cm_link_close(struct cm_id *id);
void cm_link_wake(void);			/* a timer was armed */
/* the host, device and port of the listener on (ps, port); 0 or ENOENT */
int cm_link_who(uint16_t ps, uint16_t port, unsigned *host, unsigned *dev,
		unsigned *pt);
/* called by link.c with cm_lock held */
void cm_link_adopt(struct cm_id *id, int sock);	/* an accepted socket */
void cm_on_accept(struct cm_id *listener, int sock);
void cm_on_msg(struct cm_id *id, const struct cm_msg *m);
void cm_on_hangup(struct cm_id *id);
void cm_on_timer(struct cm_id *id);

/* ------------------------------------------------------------------------ */
/* Addresses and routes (addr.c)                                             */

/* rdma_addr_size(): 16, 28, sizeof(struct sockaddr_ib), or 0 */
unsigned cm_addr_size(const struct sockaddr *sa);
unsigned cm_addr_size_in6(const struct sockaddr_in6 *a);
uint16_t cm_addr_port(const struct sockaddr *sa);
void cm_addr_set_port(struct sockaddr *sa, uint16_t port);
bool cm_addr_any(const struct sockaddr *sa);
/* 0 and *end filled if sa names a port of this host (or is the wildcard),
 * else EADDRNOTAVAIL */
int cm_addr_local(const struct sockaddr *sa, struct cm_end *end);
/* 0 and *end: the port dst leads to (any address of the machine reaches
 * the subnet); EHOSTUNREACH for an address nothing answers */
int cm_addr_resolve(const struct sockaddr *dst, uint16_t ps, struct cm_end *end);
void cm_end_of(struct cm_end *end, unsigned dev, unsigned port);
enum ibv_mtu cm_port_mtu(void);
/* the service id of sa in port space ps (IBTA A11: ps << 16 | port) */
uint64_t cm_service_id(uint16_t ps, const struct sockaddr *sa);

#endif /* RDMAFAST_EMU_CM_INTERNAL_H */
