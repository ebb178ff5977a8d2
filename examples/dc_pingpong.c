/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dc_pingpong - ping-pong over the Dynamically Connected transport: one DC
 * target (DCT, receiving through an SRQ) and one DC initiator (DCI) per
 * process, whatever the number of peers. The server serves several clients
 * at once with its single DCI, which connects to each client's DCT in turn;
 * every client's DCI reaches the server's one DCT.
 *
 * A ping is a SEND with immediate (client index << 24 | iteration) whose
 * payload is a pattern of both; the server checks it and answers the same
 * iteration to that client's DCT, which checks the answer. Every 16th send
 * is signaled (selective signaling, QUEUE SIZING in rdmafast(7)).
 *
 *   server:  dc_pingpong [-d dev] [-p port] [-g gid_idx] [--window CLIENTS]
 *   client:  dc_pingpong [options] 127.0.0.1
 *   options: --iters N  --size BYTES (at most 1024)
 *
 * --window is the number of clients the server waits for (default 2).
 * Exits 0 only when every message arrived intact.
 */
#include "cli.h"

/*
 * TX_SLOTS send buffers, used in turn: a SEND's payload is read when the
 * device executes it, so a buffer is reused only after more posts than the
 * send queue holds WQEs (MAX_SEND_WR), when its WQE has surely completed.
 */
enum { RX_DEPTH = 64, MAX_SEND_WR = 128, TX_SLOTS = 2 * MAX_SEND_WR, SIGNAL_EVERY = 16,
       MAX_CLIENTS = 16, SLOT = 1024, WAIT_MS = 20000 };

static const uint64_t DC_KEY = 0x6463706f6e67ull;	/* "dcpong" */

/* What each side tells the other, in network byte order. */
struct wire {
	uint32_t dctn;
	uint32_t index;		/* server -> client: the client's index */
	uint16_t lid;
	uint8_t gid[16];
	uint8_t pad[6];
};

struct peer {
	struct ibv_ah *ah;
	struct rf_dc_dest dest;
	int fd;
};

struct dc {
	const struct ex_opts *o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *ibcq;
	struct ibv_srq *ibsrq;
	struct ibv_qp *dct;
	struct ibv_mr *mr;
	uint8_t *buf;		/* RX_DEPTH receive slots, then TX_SLOTS send slots */
	struct rf_cq cq;
	struct rf_srq srq;
	struct rf_qp dci;
	struct ibv_port_attr pa;
	struct peer peer[MAX_CLIENTS];
	int npeers;
	long posted;
	long errors;
};

static uint8_t pattern(uint32_t index, long iter, long j, int reply)
{
	return (uint8_t)(index * 31 + iter * 7 + j * 3 + reply * 101);
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "dc_pingpong: %s: %s\n", what, strerror(ret < 0 ? -ret : ret));
	return -1;
}

static int post_recv(struct dc *d, uint64_t slot)
{
	struct rf_sge sg = { (uint64_t)(uintptr_t)(d->buf + slot * SLOT), SLOT, d->mr->lkey };

	return rf_srq_post(&d->srq, &sg, 1, slot);
}

static int setup(struct dc *d)
{
	struct ibv_srq_init_attr sa;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	uint8_t port = (uint8_t)(d->o->ib_port ? d->o->ib_port : 1);
	int ret;

	d->ctx = rf_device_open_ibv(d->o->dev, &ret);
	if (!d->ctx)
		return fail("open device (on the emulated HCA: run under build/rfemu)", ret);
	if (ibv_query_port(d->ctx, port, &d->pa))
		return fail("query port", errno);
	d->pd = ibv_alloc_pd(d->ctx);
	d->buf = (uint8_t *)calloc(RX_DEPTH + TX_SLOTS, SLOT);
	if (!d->pd || !d->buf)
		return fail("allocate", ENOMEM);
	d->mr = ibv_reg_mr(d->pd, d->buf, (RX_DEPTH + TX_SLOTS) * SLOT, IBV_ACCESS_LOCAL_WRITE);
	if (!d->mr)
		return fail("register memory", errno);
	ret = rf_cq_create_ibv(&d->cq, &d->ibcq, d->ctx, 4 * RX_DEPTH, NULL, 0);
	if (ret)
		return fail("create CQ", ret);
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = RX_DEPTH;
	sa.attr.max_sge = 1;
	d->ibsrq = ibv_create_srq(d->pd, &sa);
	if (!d->ibsrq)
		return fail("create SRQ", errno);
	ret = rf_srq_init_ibv(&d->srq, d->ibsrq);
	if (ret)
		return fail("take the SRQ over", ret);
	for (uint64_t i = 0; i < RX_DEPTH; i++)
		if ((ret = post_recv(d, i)))
			return fail("post receive", ret);
	rf_srq_ring(&d->srq);

	memset(&ca, 0, sizeof(ca));
	ca.port = port;
	ca.gid_index = d->o->gid_index;
	ret = rf_dct_create_ibv(d->pd, d->ibsrq, d->ibcq, DC_KEY, &ca, &d->dct);
	if (ret)
		return fail("create DCT", ret);
	memset(&qa, 0, sizeof(qa));
	qa.pd = d->pd;
	qa.send_cq = d->ibcq;
	qa.max_send_wr = MAX_SEND_WR;
	qa.max_send_sge = 1;
	ret = rf_dci_create_ibv(&d->dci, &qa);
	if (!ret)
		ret = rf_dci_connect_ibv(&d->dci, &ca);
	if (ret)
		return fail("create DCI", ret);
	/* requester CQEs to the DCI's queue, receives of the DCT to the SRQ */
	if (rf_cq_attach(&d->cq, d->dci.qpn, &d->dci.sq, NULL, NULL) ||
	    rf_cq_attach(&d->cq, d->dct->qp_num, NULL, NULL, &d->srq))
		return fail("attach the CQ", ENOSPC);
	return 0;
}

/* Exchange addresses on fd and make the address of the peer's DCT. */
static int meet(struct dc *d, int fd, uint32_t *index)
{
	struct wire mine, theirs;
	struct ibv_ah_attr aa;
	struct rf_wqe_av av;
	struct peer *p = &d->peer[d->npeers];
	union ibv_gid gid;

	memset(&mine, 0, sizeof(mine));
	mine.dctn = htonl(d->dct->qp_num);
	mine.index = htonl(*index);
	mine.lid = htons(d->pa.lid);
	if (!ibv_query_gid(d->ctx, 1, d->o->gid_index, &gid))
		memcpy(mine.gid, gid.raw, 16);
	if (rf_tcp_xfer(fd, &mine, sizeof(mine), 0, WAIT_MS) ||
	    rf_tcp_xfer(fd, &theirs, sizeof(theirs), 1, WAIT_MS))
		return 1;	/* the connection went away: try another */
	if (!d->o->host)
		;	/* the server assigned the index */
	else
		*index = ntohl(theirs.index);
	memset(&aa, 0, sizeof(aa));
	aa.dlid = ntohs(theirs.lid);
	aa.port_num = (uint8_t)(d->o->ib_port ? d->o->ib_port : 1);
	if (d->pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		aa.is_global = 1;
		aa.grh.hop_limit = 64;
		aa.grh.sgid_index = (uint8_t)d->o->gid_index;
		memcpy(aa.grh.dgid.raw, theirs.gid, 16);
	}
	p->ah = ibv_create_ah(d->pd, &aa);
	if (!p->ah || rf_ah_av_ibv(p->ah, &av))
		return fail("address handle", errno);
	rf_dc_dest_init(&p->dest, &av, ntohl(theirs.dctn), DC_KEY);
	p->fd = fd;
	d->npeers++;
	return 0;
}

/* Send iteration iter to peer p, with the pattern of (index, iter, reply). */
static int send_to(struct dc *d, const struct peer *p, uint32_t index, long iter, int reply)
{
	uint8_t *tx = d->buf + (RX_DEPTH + (size_t)(d->posted % TX_SLOTS)) * SLOT;
	uint32_t size = (uint32_t)d->o->size;
	uint32_t flags = RF_SEND_RING;
	long end = ex_now_us() + WAIT_MS * 1000L;
	int ret;

	for (uint32_t j = 0; j < size; j++)
		tx[j] = pattern(index, iter, j, reply);
	if (++d->posted % SIGNAL_EVERY == 0 || rf_sq_space(&d->dci.sq) < 4 * SIGNAL_EVERY)
		flags |= RF_SEND_SIGNALED;
	while ((ret = rf_sq_post_dc_send_imm(&d->dci.sq, &p->dest, d->mr->lkey,
					     (uint64_t)(uintptr_t)tx, size,
					     htonl(index << 24 | (uint32_t)iter), flags,
					     (uint64_t)iter)) == -ENOSPC) {
		struct rf_wc wc;

		if (rf_cq_poll(&d->cq, &wc, 1) && wc.status != RF_WC_SUCCESS)
			return fail("send completion", EIO);
		if (ex_now_us() > end)
			return fail("send queue full", ETIMEDOUT);
	}
	return ret;
}

/* The next receive, its payload checked; 1 with *index and *iter, or -1. */
static int next_recv(struct dc *d, uint32_t *index, long *iter, int reply)
{
	long end = ex_now_us() + WAIT_MS * 1000L;
	struct rf_wc wc;

	for (;;) {
		if (!rf_cq_poll(&d->cq, &wc, 1)) {
			if (ex_now_us() > end)
				return fail("wait for a message", ETIMEDOUT);
			continue;
		}
		if (wc.status != RF_WC_SUCCESS) {
			fprintf(stderr, "dc_pingpong: completion error %u (wr %llu)\n", wc.status,
				(unsigned long long)wc.wr_id);
			return -1;
		}
		if (wc.opcode != RF_WC_RECV)
			continue;	/* a signaled send */
		break;
	}
	*index = ntohl(wc.imm) >> 24;
	*iter = (long)(ntohl(wc.imm) & 0xffffff);
	if (wc.qp_num != d->dct->qp_num || wc.byte_len != (uint32_t)d->o->size)
		d->errors++;
	for (uint32_t j = 0; j < wc.byte_len; j++)
		if (d->buf[wc.wr_id * SLOT + j] != pattern(*index, *iter, j, reply)) {
			d->errors++;
			break;
		}
	if (post_recv(d, wc.wr_id))
		return fail("post receive", ENOSPC);
	rf_srq_ring(&d->srq);
	return 1;
}

static int serve(struct dc *d, int clients)
{
	long total = clients * d->o->iters;

	/* one listener for every client: later ones wait in its backlog */
	int lfd = rf_tcp_listen((uint16_t)d->o->port, 0);

	if (lfd < 0)
		return fail("listen", lfd);
	for (uint32_t i = 0; i < (uint32_t)clients;) {
		int fd = rf_tcp_accept(lfd, WAIT_MS), ret;

		if (fd < 0) {
			close(lfd);
			return fail("accept a client", fd);
		}
		ret = meet(d, fd, &i);
		if (ret < 0) {
			close(lfd);
			return -1;
		}
		if (ret)
			close(fd);
		else
			i++;
	}
	close(lfd);
	for (int i = 0; i < clients; i++)
		rf_tcp_sync(d->peer[i].fd, 1, WAIT_MS);	/* everyone may start */
	for (long n = 0; n < total; n++) {
		uint32_t index;
		long iter;

		if (next_recv(d, &index, &iter, 0) < 0)
			return -1;
		if (index >= (uint32_t)clients) {
			d->errors++;
			continue;
		}
		if (send_to(d, &d->peer[index], index, iter, 1))
			return -1;
	}
	for (int i = 0; i < clients; i++)
		if (rf_tcp_sync(d->peer[i].fd, 2, WAIT_MS))
			d->errors++;
	printf("server: %d clients, %ld messages each way through one DCI and one DCT, %ld errors\n",
	       clients, total, d->errors);
	return 0;
}

static int client(struct dc *d)
{
	char addr[64];
	uint32_t index = 0;
	long t0;
	int fd;

	if (ex_resolve(d->o->host, addr, sizeof(addr)))
		return fail(d->o->host, EHOSTUNREACH);
	for (t0 = ex_now_us();;) {
		int ret;

		fd = rf_tcp_connect(addr, (uint16_t)d->o->port, WAIT_MS);
		if (fd < 0)
			return fail("connect", fd);
		ret = meet(d, fd, &index);
		if (ret < 0)
			return -1;
		if (!ret)
			break;
		/* the server was listening for another client: again */
		close(fd);
		if (ex_now_us() - t0 > WAIT_MS * 1000L)
			return fail("exchange", ETIMEDOUT);
		usleep(10000);
	}
	if (rf_tcp_sync(fd, 1, WAIT_MS))
		return fail("start", EPIPE);
	t0 = ex_now_us();
	for (long i = 0; i < d->o->iters; i++) {
		uint32_t got_index;
		long got_iter;

		if (send_to(d, &d->peer[0], index, i, 0) ||
		    next_recv(d, &got_index, &got_iter, 1) < 0)
			return -1;
		if (got_index != index || got_iter != i)
			d->errors++;
	}
	printf("client %u: %ld round trips to the server's DCT, %.1f us each, %ld errors\n",
	       index, d->o->iters, (double)(ex_now_us() - t0) / (double)d->o->iters,
	       d->errors);
	if (rf_tcp_sync(fd, 2, WAIT_MS))
		d->errors++;
	return 0;
}

int main(int argc, char **argv)
{
	struct ex_opts o;
	struct dc d;
	int clients, ret;

	memset(&o, 0, sizeof(o));
	o.port = 18515;
	o.iters = 100;
	o.size = 64;
	if (ex_parse(&o, argc, argv, "  --window N: clients the server serves (default 2)\n"))
		return 2;
	clients = o.window ? o.window : 2;
	if (o.size > SLOT || o.iters > 0xffffff || clients > MAX_CLIENTS) {
		fprintf(stderr, "dc_pingpong: size at most %d, iters below 2^24, at most %d clients\n",
			SLOT, MAX_CLIENTS);
		return 2;
	}
	memset(&d, 0, sizeof(d));
	d.o = &o;
	ret = setup(&d);
	if (!ret)
		ret = o.host ? client(&d) : serve(&d, clients);
	/* teardown in reverse; the process exits right after */
	for (int i = 0; i < d.npeers; i++) {
		if (d.peer[i].ah)
			ibv_destroy_ah(d.peer[i].ah);
		close(d.peer[i].fd);
	}
	if (d.dci.ibqp) {
		rf_cq_detach(&d.cq, d.dci.qpn);
		rf_qp_destroy_ibv(&d.dci);
	}
	if (d.dct) {
		rf_cq_detach(&d.cq, d.dct->qp_num);
		ibv_destroy_qp(d.dct);
	}
	if (d.ibsrq) {
		rf_srq_fini_ibv(&d.srq);
		ibv_destroy_srq(d.ibsrq);
	}
	if (d.ibcq)
		rf_cq_destroy_ibv(&d.cq, d.ibcq);
	if (d.mr)
		ibv_dereg_mr(d.mr);
	free(d.buf);
	if (d.pd)
		ibv_dealloc_pd(d.pd);
	if (d.ctx)
		ibv_close_device(d.ctx);
	if (ret || d.errors) {
		fprintf(stderr, "dc_pingpong: FAILED\n");
		return 1;
	}
	printf("%s: ok\n", o.host ? "client" : "server");
	return 0;
}
