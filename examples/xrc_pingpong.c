/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xrc_pingpong - XRC (extended reliable connected) transport: several
 * client processes, each with one XRC_SEND QP, send to the two XRC SRQs
 * of a server whose XRC domain is shared by two of its processes.
 *
 *   server:  xrc_pingpong [-d dev] [-p port] [-g gid_idx]
 *            starts a second server process; both open the XRC domain of
 *            the same file (rf_xrcd_open_ibv() with O_CREAT), each creates
 *            two XRC SRQs (each with its own CQ), serves NCLIENT / 2
 *            clients (the first process on port, the second on port + 1)
 *            with one XRC receive QP per client, and opens (registers
 *            with) the other process's receive QPs by number
 *            (rf_xrc_recv_qp_open_ibv()), releasing them at the end with
 *            rf_qp_close_opened_ibv().
 *   client:  xrc_pingpong [options] 127.0.0.1
 *            starts NCLIENT - 1 more client processes; client i connects its XRC_SEND
 *            QP to a receive QP of server process i % 2 and sends --iters
 *            messages, alternating between that process's two SRQs by
 *            number (rf_sq_set_xrc_srqn()).
 *
 * Every message says who sent it, its sequence number and which SRQ it
 * was sent to; the server checks that it completed on that SRQ's CQ, in
 * order per client and SRQ, with every byte intact. Exits 0 only when
 * every process passed every check.
 */
#include "cli.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	NCLIENT = 4,		/* client processes; half to each server process */
	NSRQ = 2,		/* XRC SRQs per server process */
	SRQ_WR = 32,
	HDR = 6,		/* client, seq (4 bytes), SRQ index */
};

static uint8_t pattern(int client, long seq, uint32_t j)
{
	return (uint8_t)(client * 37 + seq * 11 + j * 5 + 3);
}

static int fail(const char *who, const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s%s\n", who, what, strerror(ret < 0 ? -ret : EIO),
		ret == -ENODEV ? " (on the emulated HCA: run under build/rfemu)" : "");
	return 1;
}

static struct ibv_context *open_dev(const struct ex_opts *o, int *ret)
{
	struct ibv_context *ctx = rf_device_open_ibv(o->dev, ret);

	if (ctx && (*ret = rf_device_check_ibv(ctx))) {
		ibv_close_device(ctx);
		ctx = NULL;
	}
	return ctx;
}

/* Our LID and (on RoCE) GID, for rf_ep_info. */
static int local_addr(struct ibv_context *ctx, const struct ex_opts *o, struct rf_ep_info *me)
{
	struct ibv_port_attr pa;
	union ibv_gid g;
	uint8_t port = (uint8_t)(o->ib_port ? o->ib_port : 1);

	memset(&pa, 0, sizeof(pa));
	if (ibv_query_port(ctx, port, &pa))
		return -errno;
	me->lid = pa.lid;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		if (ibv_query_gid(ctx, port, o->gid_index, &g))
			return -errno;
		memcpy(me->gid, g.raw, 16);
	}
	return 0;
}

static void peer_of(const struct rf_ep_info *i, struct rf_qp_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->qpn = i->qpn;
	p->psn = i->psn;
	p->lid = (uint16_t)i->lid;
	memcpy(p->gid.raw, i->gid, 16);
}

static void conn_attr(const struct ex_opts *o, uint32_t psn, struct rf_qp_conn_attr *ca)
{
	memset(ca, 0, sizeof(*ca));
	ca->port = (uint8_t)(o->ib_port ? o->ib_port : 1);
	ca->gid_index = o->gid_index;
	ca->psn = psn;
}

/* ---- the server's two processes ------------------------------------------ */

struct srv {
	const struct ex_opts *o;
	int id;			/* 0: the first process, 1: the one it forked */
	char who[16];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd;
	struct ibv_cq *ibcq[NSRQ];
	struct rf_cq cq[NSRQ];
	struct ibv_srq *ibsrq[NSRQ];
	struct rf_srq srq[NSRQ];
	uint32_t srqn[NSRQ];
	uint8_t *buf;
	struct ibv_mr *mr;
	uint32_t size;
	struct ibv_qp *rqp[NCLIENT / 2];	/* ours */
	struct ibv_qp *opened[NCLIENT / 2];	/* the other process's */
	int lfd;		/* our port's listener, open until every client came */
	int sock[NCLIENT / 2];
	long next_seq[NCLIENT][NSRQ];
	long got[NSRQ], errors;
};

static int srv_post(struct srv *s, int k, uint64_t slot)
{
	struct rf_sge sg = {
		(uint64_t)(uintptr_t)(s->buf + ((size_t)k * SRQ_WR + slot) * s->size),
		s->size, s->mr->lkey };

	return rf_srq_post(&s->srq[k], &sg, 1, slot);
}

static int srv_setup(struct srv *s, const char *path)
{
	size_t len = (size_t)NSRQ * SRQ_WR * s->size;
	int ret, fd;

	s->ctx = open_dev(s->o, &ret);
	if (!s->ctx)
		return ret;
	s->pd = ibv_alloc_pd(s->ctx);
	len = (len + 4095) & ~(size_t)4095;
	s->buf = (uint8_t *)aligned_alloc(4096, len);
	if (!s->pd || !s->buf)
		return -ENOMEM;
	memset(s->buf, 0, len);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return -errno;
	/* the same file, so the same domain, in both processes */
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return -errno;
	ret = rf_xrcd_open_ibv(s->ctx, fd, O_CREAT, &s->xrcd);
	close(fd);
	if (ret)
		return ret;
	for (int k = 0; k < NSRQ; k++) {
		ret = rf_cq_create_ibv(&s->cq[k], &s->ibcq[k], s->ctx, 2 * SRQ_WR, NULL, 0);
		if (!ret)
			ret = rf_xrc_srq_create_ibv(s->ctx, s->pd, s->xrcd, s->ibcq[k], SRQ_WR - 1,
						    1, &s->ibsrq[k], &s->srqn[k]);
		if (!ret)
			ret = rf_srq_init_ibv(&s->srq[k], s->ibsrq[k]);
		if (ret)
			return ret;
		/* receive QPs are never attached: their CQEs go to the SRQ */
		rf_cq_set_srq(&s->cq[k], &s->srq[k]);
		for (uint64_t slot = 0; slot < SRQ_WR - 1 && !ret; slot++)
			ret = srv_post(s, k, slot);
		rf_srq_ring(&s->srq[k]);
		if (ret)
			return ret;
	}
	return 0;
}

/* One client: a receive QP of our own, connected to its XRC_SEND QP. */
static int srv_accept(struct srv *s, int c)
{
	struct rf_ep_info me, peer;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p;
	int ret = rf_xrc_recv_qp_create_ibv(s->ctx, s->xrcd, &s->rqp[c]);

	if (ret)
		return ret;
	memset(&me, 0, sizeof(me));
	ret = local_addr(s->ctx, s->o, &me);
	if (ret)
		return ret;
	me.qpn = s->rqp[c]->qp_num;
	me.psn = (uint32_t)(s->id * 100 + c + 1);
	/* the two SRQ numbers, in fields the exchange has to spare */
	me.rkey = s->srqn[0];
	me.size = s->srqn[1];
	s->sock[c] = rf_tcp_accept(s->lfd, 0);
	if (s->sock[c] < 0)
		return s->sock[c];
	ret = rf_ep_exchange(s->sock[c], &me, &peer, 0);
	if (ret)
		return ret;
	conn_attr(s->o, me.psn, &ca);
	peer_of(&peer, &p);
	ret = rf_xrc_recv_connect_ibv(s->rqp[c], &ca, &p);
	return ret ? ret : rf_tcp_sync(s->sock[c], 'R', 0);
}

/* Poll both CQs until every client's messages arrived, reposting each. */
static int srv_receive(struct srv *s)
{
	long want = (long)(NCLIENT / 2) * s->o->iters;
	long end = ex_now_us() + 60L * 1000 * 1000;
	struct rf_wc wc[8];

	while (s->got[0] + s->got[1] < want) {
		for (int k = 0; k < NSRQ; k++) {
			int n = rf_cq_poll(&s->cq[k], wc, 8);

			for (int i = 0; i < n; i++) {
				const uint8_t *m = s->buf + ((size_t)k * SRQ_WR + wc[i].wr_id) * s->size;
				int client = m[0], bad;
				long seq = (long)m[1] << 24 | (long)m[2] << 16 | m[3] << 8 | m[4];

				bad = wc[i].status != RF_WC_SUCCESS || !(wc[i].flags & RF_WC_SRQ) ||
				      wc[i].byte_len != s->size || client >= NCLIENT ||
				      client % 2 != s->id || m[5] != k;
				if (!bad) {
					bad = seq != s->next_seq[client][k];
					s->next_seq[client][k] = seq + NSRQ;
				}
				for (uint32_t j = HDR; !bad && j < s->size; j++)
					bad = m[j] != pattern(client, seq, j);
				if (bad && s->errors < 5)
					fprintf(stderr, "%s: bad message on SRQ %#x (status %u, "
						"client %d, to SRQ %d)\n", s->who, s->srqn[k],
						wc[i].status, client, m[5]);
				s->errors += bad;
				s->got[k]++;
				if (srv_post(s, k, wc[i].wr_id))
					s->errors++;
			}
			if (n)
				rf_srq_ring(&s->srq[k]);
		}
		if (ex_now_us() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

static void srv_close(struct srv *s)
{
	if (s->lfd >= 0)
		close(s->lfd);
	for (int c = 0; c < NCLIENT / 2; c++) {
		if (s->sock[c] >= 0)
			close(s->sock[c]);
		if (s->opened[c])
			rf_qp_close_opened_ibv(s->opened[c]);
		if (s->rqp[c])
			ibv_destroy_qp(s->rqp[c]);
	}
	for (int k = 0; k < NSRQ; k++) {
		if (s->ibsrq[k]) {
			rf_cq_set_srq(&s->cq[k], NULL);
			rf_srq_fini_ibv(&s->srq[k]);
			ibv_destroy_srq(s->ibsrq[k]);
		}
		if (s->ibcq[k])
			rf_cq_destroy_ibv(&s->cq[k], s->ibcq[k]);
	}
	if (s->xrcd)
		ibv_close_xrcd(s->xrcd);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
}

static int rd(int fd, void *p, size_t n)
{
	struct pollfd pf = { fd, POLLIN, 0 };

	if (poll(&pf, 1, RF_TCP_TIMEOUT_MS) != 1 || read(fd, p, n) != (ssize_t)n)
		return -EPIPE;
	return 0;
}

/* One server process; to/from: pipes to the other one. */
static int serve(const struct ex_opts *o, int id, const char *path, int to, int from)
{
	struct srv s;
	uint32_t mine[NCLIENT / 2], theirs[NCLIENT / 2];
	char f = 'F';
	int ret;

	memset(&s, 0, sizeof(s));
	s.o = o;
	s.id = id;
	s.size = (uint32_t)o->size;
	snprintf(s.who, sizeof(s.who), "server %d", id);
	for (int c = 0; c < NCLIENT / 2; c++)
		s.sock[c] = -1;
	/*
	 * One listener for both clients: with one rf_tcp_serve() each, the
	 * second client's connection could sit in the first listener's
	 * backlog and be reset when it closed.
	 */
	s.lfd = rf_tcp_listen((uint16_t)(o->port + id), NCLIENT / 2);
	for (int c = 0; c < NCLIENT; c++)
		for (int k = 0; k < NSRQ; k++)
			s.next_seq[c][k] = k;	/* SRQ k gets sequence numbers k, k + NSRQ, ... */
	ret = srv_setup(&s, path);
	if (ret) {
		srv_close(&s);
		return fail(s.who, "setting up the XRC domain and SRQs", ret);
	}
	if (s.lfd < 0)
		ret = s.lfd;
	for (int c = 0; c < NCLIENT / 2 && !ret; c++) {
		ret = srv_accept(&s, c);
		mine[c] = s.rqp[c] ? s.rqp[c]->qp_num : 0;
	}
	if (s.lfd >= 0) {
		close(s.lfd);
		s.lfd = -1;
	}
	/* register with the other process's receive QPs, by number */
	if (!ret && write(to, mine, sizeof(mine)) != (ssize_t)sizeof(mine))
		ret = -EPIPE;
	if (!ret)
		ret = rd(from, theirs, sizeof(theirs));
	for (int c = 0; c < NCLIENT / 2 && !ret; c++)
		ret = rf_xrc_recv_qp_open_ibv(s.ctx, s.xrcd, theirs[c], &s.opened[c]);
	if (!ret)
		ret = srv_receive(&s);
	for (int c = 0; c < NCLIENT / 2 && !ret; c++)
		ret = rf_tcp_sync(s.sock[c], 'D', 0);
	/* neither destroys its receive QPs before the other opened them */
	if (write(to, &f, 1) != 1 || rd(from, &f, 1))
		ret = ret ? ret : -EPIPE;
	printf("%s: XRC domain of %s, SRQs %#x %#x: %ld + %ld messages of %u bytes from %d "
	       "clients, receive QPs %#x %#x (opened %#x %#x)\n  %s (%ld bad)\n", s.who, path,
	       s.srqn[0], s.srqn[1], s.got[0], s.got[1], s.size, NCLIENT / 2, mine[0], mine[1],
	       ret ? 0 : theirs[0], ret ? 0 : theirs[1],
	       !ret && !s.errors ? "all checks passed" : "FAILED", s.errors);
	if (ret)
		fail(s.who, "serving", ret);
	srv_close(&s);
	return !ret && !s.errors ? 0 : 1;
}

/* ---- one client process ------------------------------------------------- */

static int client(const struct ex_opts *o, int id, const char *addr)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *ibcq = NULL;
	struct ibv_mr *mr = NULL;
	struct rf_cq cq;
	struct rf_qp qp;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer p;
	struct rf_ep_info me, peer;
	uint32_t size = (uint32_t)o->size, srqn[NSRQ];
	uint8_t *buf = NULL;
	char who[16];
	int ret, sock = -1;
	long errors = 0;

	snprintf(who, sizeof(who), "client %d", id);
	memset(&qp, 0, sizeof(qp));
	ctx = open_dev(o, &ret);
	if (!ctx)
		return fail(who, "opening the RDMA device", ret);
	ret = -ENOMEM;
	pd = ibv_alloc_pd(ctx);
	buf = (uint8_t *)aligned_alloc(4096, 4096);
	if (pd && buf)
		mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (mr)
		ret = rf_cq_create_ibv(&cq, &ibcq, ctx, 32, NULL, 0);
	if (!ret) {
		memset(&qa, 0, sizeof(qa));
		qa.pd = pd;
		qa.send_cq = ibcq;
		qa.recv_cq = ibcq;
		qa.qp_type = IBV_QPT_XRC_SEND;
		qa.max_send_wr = 16;
		ret = rf_qp_create_ibv(&qp, &qa);
	}
	if (!ret)
		ret = rf_cq_attach(&cq, qp.qpn, &qp.sq, NULL, NULL);
	memset(&me, 0, sizeof(me));
	if (!ret)
		ret = local_addr(ctx, o, &me);
	if (!ret) {
		me.qpn = qp.qpn;
		me.psn = (uint32_t)(1000 + id);
		sock = rf_tcp_connect(addr, (uint16_t)(o->port + id % 2), 0);
		ret = sock < 0 ? sock : rf_ep_exchange(sock, &me, &peer, 0);
	}
	if (!ret) {
		srqn[0] = peer.rkey;
		srqn[1] = (uint32_t)peer.size;
		conn_attr(o, me.psn, &ca);
		peer_of(&peer, &p);
		ret = rf_qp_connect_ibv(&qp, &ca, &p);
	}
	if (!ret)
		ret = rf_tcp_sync(sock, 'R', 0);
	for (long seq = 0; !ret && seq < o->iters; seq++) {
		struct rf_wc wc;
		long end = ex_now_us() + 30L * 1000 * 1000;
		int k = (int)(seq % NSRQ);

		buf[0] = (uint8_t)id;
		buf[1] = (uint8_t)(seq >> 24);
		buf[2] = (uint8_t)(seq >> 16);
		buf[3] = (uint8_t)(seq >> 8);
		buf[4] = (uint8_t)seq;
		buf[5] = (uint8_t)k;
		for (uint32_t j = HDR; j < size; j++)
			buf[j] = pattern(id, seq, j);
		rf_sq_set_xrc_srqn(&qp.sq, srqn[k]);	/* which SRQ of the domain */
		ret = rf_sq_post_send(&qp.sq, mr->lkey, (uint64_t)(uintptr_t)buf, size,
				      RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)seq);
		while (!ret && !rf_cq_poll(&cq, &wc, 1))
			if (ex_now_us() > end)
				ret = -ETIMEDOUT;
		if (!ret && wc.status != RF_WC_SUCCESS && errors++ < 3) {
			fprintf(stderr, "%s: send %ld: %s\n", who, seq,
				rf_wc_status_str(wc.status));
		}
	}
	if (!ret)
		ret = rf_tcp_sync(sock, 'D', 0);
	printf("%s: XRC_SEND QP %#x -> receive QP %#x, %ld messages of %u bytes to SRQs "
	       "%#x %#x\n  %s\n", who, qp.qpn, ret ? 0 : peer.qpn, o->iters, size,
	       ret ? 0 : srqn[0], ret ? 0 : srqn[1],
	       !ret && !errors ? "all checks passed" : "FAILED");
	if (ret)
		fail(who, "sending", ret);
	if (sock >= 0)
		close(sock);
	if (qp.ibqp) {
		rf_cq_detach(&cq, qp.qpn);
		rf_qp_destroy_ibv(&qp);
	}
	if (ibcq)
		rf_cq_destroy_ibv(&cq, ibcq);
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return !ret && !errors ? 0 : 1;
}

/* Wait for the processes we started; 0 when all exited 0. */
static int reap(const pid_t *pid, int n)
{
	int bad = 0;

	for (int i = 0; i < n; i++) {
		int st = 0;

		if (pid[i] <= 0 || waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad = 1;
	}
	return bad;
}

/*
 * Start this program again as another process of the run, its role in
 * the environment. A new image rather than a bare fork(): each process
 * is then a host of its own on the emulated HCA too, whose preloaded
 * library takes its host identity when it loads, not when the device
 * opens (on hardware both work).
 */
static pid_t spawn(char **argv, const char *role)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		setenv("RF_XRC_PINGPONG_ROLE", role, 1);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 100, 64, 0, 0, 0, 0, NULL };
	const char *role = getenv("RF_XRC_PINGPONG_ROLE");
	char addr[64], path[128], r[32];
	pid_t pid[NCLIENT];
	int ret, a[2], b[2], id;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	if (o.size < HDR || o.size > 4096) {
		fprintf(stderr, "--size: %d to 4096 bytes\n", HDR);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/rdmafast-xrc-%d.xrcd",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", o.port);
	if (o.host) {
		if (ex_resolve(o.host, addr, sizeof(addr))) {
			fprintf(stderr, "%s: no such host\n", o.host);
			return 1;
		}
		if (role && sscanf(role, "client %d", &id) == 1)
			return client(&o, id, addr);
		for (int i = 1; i < NCLIENT; i++) {
			snprintf(r, sizeof(r), "client %d", i);
			pid[i] = spawn(argv, r);
		}
		ret = client(&o, 0, addr);
		return reap(pid + 1, NCLIENT - 1) || ret;
	}
	if (role && sscanf(role, "server 1 %d %d", &a[0], &b[1]) == 2)
		return serve(&o, 1, path, b[1], a[0]);
	if (pipe(a) || pipe(b))
		return 1;
	snprintf(r, sizeof(r), "server 1 %d %d", a[0], b[1]);
	pid[0] = spawn(argv, r);
	close(a[0]);
	close(b[1]);
	ret = serve(&o, 0, path, a[1], b[0]);
	ret = reap(pid, 1) || ret;
	unlink(path);
	return ret;
}
