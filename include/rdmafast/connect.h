/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/connect.h - what every two-process program needs before its
 * data path: a TCP side channel on which the two sides exchange QP
 * details, and one RC endpoint (device, PD, registered buffer, CQ and QP
 * taken over by rdmafast) brought up and connected through it.
 *
 *	struct rf_ep_attr a = ...;            zeros: defaults, see below
 *	a.access = RF_ACCESS_REMOTE_WRITE;    what the peer may do to ep.buf
 *	                                      (0: nothing; it can only send)
 *	struct rf_ep ep;
 *	ret = rf_ep_open(&ep, &a);            device, PD, buffer, CQ, QP
 *	ret = rf_ep_connect(&ep, host, port); host NULL: serve, else connect
 *	                                      (rf_ep_join(&ep, fd): over a
 *	                                      socket of yours)
 *	...data path on ep.qp.sq, ep.qp.rq, ep.cq; ep.peer is the other side...
 *	rf_ep_close(&ep);
 *
 * What you send the peer is what it may use: with a.access 0 (the
 * default) it gets no key to your buffer and the QP refuses its RDMA
 * WRITE, READ and atomics; with a.access named, it gets the address, size
 * and rkey of the whole buffer and may do exactly those operations on any
 * byte of it, at any time until rf_ep_close().
 *
 * Like rdma-core's ibv_rc_pingpong, one side serves (waits for one peer
 * on a TCP port) and the other connects to it. Every wait is bounded.
 *
 * A server of another shape (one CQ, one SRQ, a QP per client) takes the
 * pieces instead of rf_ep:
 *
 *	lfd = rf_tcp_listen(port, 0);         stays open for every client
 *	rf_ep_info_add_region(&mine, mr);     as many regions as the peer needs
 *	for each client:
 *		fd = rf_tcp_accept(lfd, 0);
 *		...create its QP (rf_qp_create_ibv(), .srq), rf_cq_attach()...
 *		ret = rf_ep_connect_qp(fd, &qp, &conn_attr, &mine, &theirs, 0);
 *		ret = rf_ep_ready(fd, 0);     both QPs can receive now
 *
 * and a client of such a server may be an rf_ep (rf_ep_connect(): the
 * server's regions are in ep.peer.region[]).
 * Everything here is control path and returns 0 or -errno; on failure
 * ep.failed names the step that failed, for the message.
 *
 * The address to connect to is numeric (IPv4 or IPv6): name lookup,
 * getaddrinfo(), is a POSIX declaration that glibc hides under -std=c11,
 * and this header compiles in every mode; resolve a name yourself and
 * pass the address. Link with -libverbs -lmlx5 (it includes verbs.h).
 * The TCP side channel alone is rdmafast/tcp.h.
 * Manual: rf_verbs(3).
 */
#ifndef RDMAFAST_CONNECT_H
#define RDMAFAST_CONNECT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rdmafast/verbs.h>
#include <rdmafast/tcp.h>
#include <rdmafast/detail/connect.h>

RF_BEGIN_DECLS

/*
 * rf_ep_ready - rf_tcp_sync(fd, RF_TCP_SYNC_READY, ms): after the last
 * rf_ep_connect_qp() on fd, wait until the peer's QPs are connected too.
 * Before it, a send may find the peer's QP not yet in RTR. 0 or -errno.
 */
static inline RF_COLD int rf_ep_ready(int fd, int ms)
{
	return rf_tcp_sync(fd, RF_TCP_SYNC_READY, ms);
}

/* Regions one rf_ep_info carries besides the endpoint's buffer. */
enum { RF_EP_MAX_REGIONS = 8 };

/* A registered region the peer may access: where, how long, its key. */
struct rf_ep_region {
	uint64_t addr;
	uint64_t size;
	uint32_t rkey;
	uint32_t rsvd;
};

/*
 * What each side tells the other: where its QP is (rf_qp_peer's fields);
 * the endpoint's buffer the peer may access (rkey, addr, size: all 0 when
 * it may access none; rf_ep's buf); and nregions more regions, in the
 * order they were added (rf_ep_info_add_region()). Sent in network order
 * (rf_ep_exchange()).
 */
struct rf_ep_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t lid;
	uint32_t rkey;
	uint64_t addr;
	uint64_t size;
	uint8_t  gid[16];
	uint32_t nregions;
	uint32_t rsvd;
	struct rf_ep_region region[RF_EP_MAX_REGIONS];
};

/*
 * rf_ep_info_add_region - add mr (its whole range and rkey) to what info
 * tells the peer. What the peer may do there is what mr was registered
 * with and what the QP allows (rf_qp_conn_attr.access; rf_ep_attr's
 * qp_access). Returns its index in region[], or -ENOSPC past
 * RF_EP_MAX_REGIONS.
 */
static inline RF_COLD int rf_ep_info_add_region(struct rf_ep_info *info,
						const struct ibv_mr *mr)
{
	struct rf_ep_region *r;

	if (info->nregions >= RF_EP_MAX_REGIONS)
		return -ENOSPC;
	r = &info->region[info->nregions];
	memset(r, 0, sizeof(*r));
	r->addr = (uint64_t)(uintptr_t)mr->addr;
	r->size = mr->length;
	r->rkey = mr->rkey;
	return (int)info->nregions++;
}

/*
 * rf_ep_exchange - send mine, receive theirs (each wait at most ms).
 * Returns 0, -EINVAL when mine has more than RF_EP_MAX_REGIONS regions,
 * -EPROTO when the peer's is not this format and version or has more,
 * or an error of rf_tcp_xfer().
 */
static inline RF_COLD int rf_ep_exchange(int fd, const struct rf_ep_info *mine,
					 struct rf_ep_info *theirs, int ms)
{
	uint8_t out[sizeof(struct rf__ep_wire) +
		    RF_EP_MAX_REGIONS * sizeof(struct rf__ep_wire_region)];
	struct rf__ep_wire w, r;
	struct rf__ep_wire_region g;
	uint32_t i, n;
	int ret;

	if (mine->nregions > RF_EP_MAX_REGIONS)
		return -EINVAL;
	w.magic = rf_htobe32(RF__EP_WIRE_MAGIC);
	w.hdr_size = rf_htobe16((uint16_t)sizeof(w));
	w.nregions = rf_htobe16((uint16_t)mine->nregions);
	w.qpn = rf_htobe32(mine->qpn);
	w.psn = rf_htobe32(mine->psn);
	w.lid = rf_htobe32(mine->lid);
	w.rkey = rf_htobe32(mine->rkey);
	w.addr = rf_htobe64(mine->addr);
	w.size = rf_htobe64(mine->size);
	memcpy(w.gid, mine->gid, sizeof(w.gid));
	memcpy(out, &w, sizeof(w));
	for (i = 0; i < mine->nregions; i++) {
		g.addr = rf_htobe64(mine->region[i].addr);
		g.size = rf_htobe64(mine->region[i].size);
		g.rkey = rf_htobe32(mine->region[i].rkey);
		g.rsvd = 0;
		memcpy(out + sizeof(w) + i * sizeof(g), &g, sizeof(g));
	}
	ret = rf_tcp_xfer(fd, out, sizeof(w) + mine->nregions * sizeof(g), 0, ms);
	if (!ret)
		ret = rf_tcp_xfer(fd, &r, sizeof(r), 1, ms);
	if (ret)
		return ret;
	n = rf_be16toh(r.nregions);
	if (rf_be32toh(r.magic) != RF__EP_WIRE_MAGIC || rf_be16toh(r.hdr_size) != sizeof(r) ||
	    n > RF_EP_MAX_REGIONS)
		return -EPROTO;
	memset(theirs, 0, sizeof(*theirs));
	for (i = 0; i < n; i++) {
		ret = rf_tcp_xfer(fd, &g, sizeof(g), 1, ms);
		if (ret)
			return ret;
		theirs->region[i].addr = rf_be64toh(g.addr);
		theirs->region[i].size = rf_be64toh(g.size);
		theirs->region[i].rkey = rf_be32toh(g.rkey);
	}
	theirs->nregions = n;
	theirs->qpn = rf_be32toh(r.qpn);
	theirs->psn = rf_be32toh(r.psn);
	theirs->lid = rf_be32toh(r.lid);
	theirs->rkey = rf_be32toh(r.rkey);
	theirs->addr = rf_be64toh(r.addr);
	theirs->size = rf_be64toh(r.size);
	memcpy(theirs->gid, r.gid, sizeof(r.gid));
	return 0;
}

/*
 * rf_ep_connect_qp - connect a QP of your own (any RC, UC or XRC_SEND QP
 * taken over as an rf_qp, e.g. one on an SRQ) over fd, as rf_ep_connect()
 * connects its own: send mine (may be NULL: no regions) completed with
 * the QP's number, the first PSN (l->psn, or a random one when 0), the
 * port's LID and, when the connection carries a GRH (rf_qp_conn_grh()),
 * the GID at l->gid_index; receive theirs; and move qp to RTS toward it
 * with l (rf_qp_connect_ibv()). Call it once per QP, in the same order on
 * both sides, then rf_ep_ready() once. Returns 0 or -errno.
 */
static inline RF_COLD int rf_ep_connect_qp(int fd, struct rf_qp *qp,
					   const struct rf_qp_conn_attr *l,
					   const struct rf_ep_info *mine,
					   struct rf_ep_info *theirs, int ms)
{
	struct rf_qp_conn_attr c = *l;
	struct ibv_port_attr pa;
	struct rf_qp_peer peer;
	struct rf_ep_info me;
	int ret;

	if (mine)
		me = *mine;
	else
		memset(&me, 0, sizeof(me));
	if (!c.port)
		c.port = RF_QP_DEFAULT_PORT;
	memset(&pa, 0, sizeof(pa));
	ret = rf__ibv_err(ibv_query_port(qp->ibqp->context, c.port, &pa));
	if (ret)
		return ret;
	if (!c.psn)
		c.psn = ((uint32_t)getpid() * 2654435761U ^ (uint32_t)time(NULL) ^
			 qp->qpn * 40503U) & 0xffffff;
	me.qpn = qp->qpn;
	me.psn = c.psn & 0xffffff;
	me.lid = pa.lid;
	memset(me.gid, 0, sizeof(me.gid));
	if (rf_qp_conn_grh(&c, &pa)) {
		union ibv_gid g;

		ret = rf__ibv_err(ibv_query_gid(qp->ibqp->context, c.port, c.gid_index, &g));
		if (ret)
			return ret;
		memcpy(me.gid, g.raw, sizeof(me.gid));
	}
	ret = rf_ep_exchange(fd, &me, theirs, ms);
	if (ret)
		return ret;
	memset(&peer, 0, sizeof(peer));
	peer.qpn = theirs->qpn;
	peer.psn = theirs->psn;
	peer.lid = (uint16_t)theirs->lid;
	memcpy(peer.gid.raw, theirs->gid, sizeof(peer.gid.raw));
	return rf_qp_connect_ibv(qp, &c, &peer);
}

/* ---- One RC endpoint ---------------------------------------------------- */

/* What rf_ep_open() builds. Zeros are the defaults named beside each. */
struct rf_ep_attr {
	const char *dev;	/* RDMA device name; NULL: the first */
	uint8_t  port;		/* HCA port; 0: 1 */
	int      gid_index;	/* as rf_qp_conn_attr: the GRH's source GID */
	uint32_t grh;		/* as rf_qp_conn_attr: enum rf_qp_grh */
	size_t   buf_size;	/* the registered buffer; at least 4096 */
	uint32_t max_wr;	/* send and receive WQEs; 0: 64 */
	uint32_t max_inline;	/* inline payload bytes; 0: none */
	int      ncqe;		/* CQ entries; 0: 2 * max_wr + 16 */
	int      events;	/* nonzero: a completion channel for the CQ */
	/*
	 * What the peer may do to buf: RF_ACCESS_REMOTE_WRITE, _READ,
	 * _ATOMIC or-ed, or _ALL. 0: nothing; buf is registered for local
	 * write only, its key is not sent, and the QP refuses the peer's
	 * RDMA and atomics (it can still send into your receives).
	 */
	int      access;
	/*
	 * More RF_ACCESS_REMOTE_* that the QP alone allows, for memory you
	 * register or bind yourself and hand out (a memory window, another
	 * region): the key of that memory decides the rest. 0: none.
	 */
	int      qp_access;
};

/*
 * struct rf_ep - one side of an RC connection. buf (buf_size bytes,
 * page-aligned, zeroed) is registered as mr with local write and the
 * remote access rf_ep_attr.access names (none by default); ch is NULL
 * without events. After
 * rf_ep_connect(), peer describes the other side and sock stays open for
 * rf_tcp_sync() and rf_tcp_xfer().
 */
struct rf_ep {
	struct ibv_context      *ctx;
	struct ibv_pd           *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq           *ibcq;
	struct rf_cq             cq;
	struct rf_qp             qp;
	uint8_t                 *buf;
	size_t                   buf_size;
	struct ibv_mr           *mr;
	uint8_t                  port;
	int                      gid_index;
	uint32_t                 grh;
	int                      access;	/* rf_ep_attr.access */
	int                      qp_access;	/* access | rf_ep_attr.qp_access */
	struct rf_ep_info        peer;
	/*
	 * What rf_ep_connect() sends besides the QP and buf: the regions
	 * rf_ep_add_region() added (the rest is filled at the connect).
	 */
	struct rf_ep_info        local;
	int                      sock;
	const char              *failed;	/* the step that failed, or NULL */
};

/*
 * rf_ep_close - release everything rf_ep_open() and rf_ep_connect() made,
 * whatever step they reached.
 */
static inline RF_COLD void rf_ep_close(struct rf_ep *e)
{
	if (e->sock >= 0)
		close(e->sock);
	if (e->qp.ibqp) {
		rf_cq_detach(&e->cq, e->qp.qpn);
		rf_qp_destroy_ibv(&e->qp);
	}
	if (e->ibcq)
		rf_cq_destroy_ibv(&e->cq, e->ibcq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
	e->sock = -1;
}

/*
 * rf_ep_open - open the device, allocate a PD, register the buffer,
 * create the CQ (with its channel when events) and an RC QP, take both
 * over and attach the QP to the CQ. Returns 0 or -errno (-ENODEV: no such
 * device; on the emulated HCA, run under rfemu(1)), after which
 * everything made so far is released and ep.failed says what failed.
 */
static inline RF_COLD int rf_ep_open(struct rf_ep *e, const struct rf_ep_attr *a)
{
	struct rf_qp_init_attr qa;
	uint32_t max_wr = a->max_wr ? a->max_wr : 64;
	int ret;

	memset(e, 0, sizeof(*e));
	e->sock = -1;
	e->port = a->port ? a->port : 1;
	e->gid_index = a->gid_index;
	e->grh = a->grh;
	/* remote flags only (local write, always given to buf, is let by) */
	if ((a->access | a->qp_access) & ~(RF_ACCESS_REMOTE_ALL | IBV_ACCESS_LOCAL_WRITE))
		return rf__ep_fail(&e->failed,
				   "rf_ep_attr.access: only RF_ACCESS_REMOTE_* flags", -EINVAL);
	e->access = a->access & RF_ACCESS_REMOTE_ALL;
	e->qp_access = (a->access | a->qp_access) & RF_ACCESS_REMOTE_ALL;
	e->ctx = rf_device_open_ibv(a->dev, &ret);
	if (!e->ctx)
		return rf__ep_fail(&e->failed, "opening the RDMA device", ret);
	ret = rf_device_check_ibv(e->ctx);
	if (ret)
		goto fail_ret;
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		goto fail_errno;
	e->buf_size = a->buf_size < 4096 ? 4096 : (a->buf_size + 4095) & ~(size_t)4095;
	e->buf = (uint8_t *)aligned_alloc(4096, e->buf_size);
	if (!e->buf)
		goto fail_errno;
	memset(e->buf, 0, e->buf_size);
	e->mr = ibv_reg_mr(e->pd, e->buf, e->buf_size, IBV_ACCESS_LOCAL_WRITE | e->access);
	if (!e->mr)
		goto fail_errno;
	if (a->events) {
		e->ch = ibv_create_comp_channel(e->ctx);
		if (!e->ch)
			goto fail_errno;
	}
	ret = rf_cq_create_ibv(&e->cq, &e->ibcq, e->ctx,
			       a->ncqe ? a->ncqe : (int)(2 * max_wr + 16), e->ch, 0);
	if (ret)
		goto fail_ret;
	memset(&qa, 0, sizeof(qa));
	qa.pd = e->pd;
	qa.send_cq = e->ibcq;
	qa.recv_cq = e->ibcq;
	qa.qp_type = IBV_QPT_RC;
	qa.max_send_wr = max_wr;
	qa.max_recv_wr = max_wr;
	qa.max_inline_data = a->max_inline;
	ret = rf_qp_create_ibv(&e->qp, &qa);
	if (!ret)
		ret = rf_cq_attach(&e->cq, e->qp.qpn, &e->qp.sq, &e->qp.rq, NULL);
	if (ret)
		goto fail_ret;
	return 0;

fail_errno:
	ret = rf__ep_errno();
fail_ret:
	rf_ep_close(e);
	return rf__ep_fail(&e->failed, "setting up the device (PD, buffer, CQ, QP)", ret);
}

/*
 * rf_ep_add_region - one more region (registered by you, on e->pd) that
 * rf_ep_connect() tells the peer of: it finds it in peer.region[], in the
 * order added, after buf's fields. The QP must allow what the peer is to
 * do there (rf_ep_attr.qp_access or access). Returns its index or
 * -ENOSPC past RF_EP_MAX_REGIONS.
 */
static inline RF_COLD int rf_ep_add_region(struct rf_ep *e, const struct ibv_mr *mr)
{
	return rf_ep_info_add_region(&e->local, mr);
}

/*
 * rf_ep_join - rf_ep_connect() over a connected stream socket of yours,
 * fd, whose other end the peer's endpoint joins the same way (or through
 * rf_ep_connect() or rf_ep_accept()): exchange, connect and wait as
 * rf_ep_connect() does. The endpoint takes fd over: it is sock, and
 * rf_ep_close() closes it. Returns 0 or -errno; the endpoint stays open
 * either way.
 */
static inline RF_COLD int rf_ep_join(struct rf_ep *e, int fd)
{
	struct rf_qp_conn_attr ca;
	int ret;

	e->sock = fd;
	memset(&ca, 0, sizeof(ca));
	ca.port = e->port;
	ca.gid_index = e->gid_index;
	ca.grh = e->grh;
	ca.access = e->qp_access;
	if (e->access) {	/* a key only for access that was asked for */
		e->local.rkey = e->mr->rkey;
		e->local.addr = (uint64_t)(uintptr_t)e->buf;
		e->local.size = e->buf_size;
	}
	ret = rf_ep_connect_qp(e->sock, &e->qp, &ca, &e->local, &e->peer, 0);
	if (ret)
		return rf__ep_fail(&e->failed, "exchanging QP details and connecting the QP", ret);
	/* both QPs must be ready to receive before either side sends */
	ret = rf_ep_ready(e->sock, 0);
	return ret ? rf__ep_fail(&e->failed, "waiting for the peer's QP", ret) : 0;
}

/*
 * rf_ep_connect - serve (host NULL: wait for one peer on TCP port,
 * rf_tcp_serve()) or connect to host:port; exchange rf_ep_info (a random
 * first PSN, the LID, the GID when a GRH is sent, the buffer's address,
 * size and rkey when rf_ep_attr.access grants the peer any, else zeros,
 * and the regions of rf_ep_add_region()); move the QP to RTS toward the
 * peer (rf_ep_connect_qp(), with access and qp_access of rf_ep_attr);
 * and wait until both QPs are ready to receive (rf_ep_ready()). Each wait
 * lasts at most RF_TCP_TIMEOUT_MS. Returns 0 or -errno; the endpoint
 * stays open either way (rf_ep_close()).
 */
static inline RF_COLD int rf_ep_connect(struct rf_ep *e, const char *host, uint16_t port)
{
	e->sock = host ? rf_tcp_connect(host, port, 0) : rf_tcp_serve(port, 0);
	if (e->sock < 0)
		return rf__ep_fail(&e->failed,
				   host ? "connecting to the server" : "waiting for a client",
				   e->sock);
	return rf_ep_join(e, e->sock);
}

/*
 * rf_ep_accept - rf_ep_connect()'s server side on a listener of yours
 * (rf_tcp_listen()), which stays open for the next client: accept one
 * peer (waiting at most RF_TCP_TIMEOUT_MS), then exchange, connect and
 * wait as rf_ep_connect(). One endpoint per client. Returns 0 or -errno.
 */
static inline RF_COLD int rf_ep_accept(struct rf_ep *e, int lfd)
{
	e->sock = rf_tcp_accept(lfd, 0);
	if (e->sock < 0)
		return rf__ep_fail(&e->failed, "waiting for a client", e->sock);
	return rf_ep_join(e, e->sock);
}

/*
 * rf_ep_wait - poll the endpoint's CQ until one record arrives and return
 * it in *wc (0), or -ETIMEDOUT after ms (0: RF_TCP_TIMEOUT_MS). With a
 * completion channel it sleeps there between polls: arm, poll once more
 * (a CQE that arrived before the arm raises no event), wait for the
 * event (rf_cq_arm(3)).
 */
static inline RF_COLD int rf_ep_wait(struct rf_ep *e, struct rf_wc *wc, int ms)
{
	int limit = ms ? ms : RF_TCP_TIMEOUT_MS;
	long long end = rf__tcp_now_ms() + limit;

	for (;;) {
		int ret;

		if (rf_cq_poll(&e->cq, wc, 1))
			return 0;
		if (rf__tcp_now_ms() > end)
			return -ETIMEDOUT;
		if (!e->ch)
			continue;
		rf_cq_arm(&e->cq, 0);
		if (rf_cq_poll(&e->cq, wc, 1))
			return 0;
		ret = rf_cq_wait_event_ibv(&e->cq, e->ch, limit);
		if (ret)
			return ret;
	}
}

RF_END_DECLS

#endif /* RDMAFAST_CONNECT_H */
