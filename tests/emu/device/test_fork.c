/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_fork.c - children of fork() are hosts of their own: each that
 * opens the device gets a host slot, QPNs, LIDs and GIDs of its own, and
 * talks to its siblings and to its parent over the wire; the parent's
 * QPs and listener outlive a child that exits.  On the contexts a child
 * inherited, write() is EACCES and ioctl() commands are served as far as
 * they need no device (PDs, device memory from the parent's pool); their
 * close() releases nothing of the parent's; its inherited rdma_cm
 * channels answer EACCES, its umad files speak for the parent's port
 * (emu/README.md, "Hosts and fork()").
 *
 * The children report by exit status: 0, or the step that failed.  They
 * exchange their QPs' addresses through the test process, over pipes.
 */
#include <endian.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <rdma/ib_user_verbs.h>

#include "dev_test.h"
#include "cm/cm_test.h"
#include "umad_test.h"

TestSuite(fork, .timeout = 120);

#define FK_LEN		4096
#define FK_SEND		"a SEND from a sibling"

/* What one side tells the other of its QP. */
struct fk_addr {
	uint32_t	qpn;
	uint16_t	lid;
	union ibv_gid	gid;
	uint64_t	addr;		/* its buffer, for WRITEs */
	uint32_t	rkey;
	uint64_t	node_guid;	/* host order */
	int32_t		pid;
};

/* One side: its own context and an RC QP with a buffer. */
struct fk_side {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*buf;
	struct fk_addr		me;
};

/* Steps, as a child's exit status names the one that failed. */
enum {
	FK_OPEN = 1, FK_QP, FK_ADDR, FK_PIPE, FK_CONNECT, FK_POST, FK_POLL,
	FK_DATA, FK_SYSFS, FK_INHERITED, FK_CLOSE, FK_MAD, FK_TIMEOUT, FK_WRITE,
	FK_DM,
};

static int fk_side_open(struct fk_side *s, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_device **list;

	memset(s, 0, sizeof(*s));
	if (!ctx) {
		list = ibv_get_device_list(NULL);
		if (!list || !list[0])
			return FK_OPEN;
		ctx = ibv_open_device(list[0]);
		ibv_free_device_list(list);
	}
	s->ctx = ctx;
	if (!s->ctx)
		return FK_OPEN;
	s->buf = calloc(1, FK_LEN);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 32, NULL, NULL, 0) : NULL;
	if (!s->buf || !s->cq)
		return FK_QP;
	s->mr = ibv_reg_mr(s->pd, s->buf, FK_LEN, DT_ACC_ALL);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = s->mr ? ibv_create_qp(s->pd, &qa) : NULL;
	if (!s->qp)
		return FK_QP;
	if (ibv_query_port(s->ctx, 1, &pa) || ibv_query_gid(s->ctx, 1, 0, &s->me.gid) ||
	    ibv_query_device(s->ctx, &da))
		return FK_ADDR;
	s->me.qpn = s->qp->qp_num;
	s->me.lid = pa.lid;
	s->me.addr = (uint64_t)(uintptr_t)s->buf;
	s->me.rkey = s->mr->rkey;
	s->me.node_guid = be64toh(da.node_guid);
	s->me.pid = getpid();
	return 0;
}

static int fk_connect(struct fk_side *s, const struct fk_addr *peer)
{
	const struct qpu_conn c = {
		.dqpn = peer->qpn, .dlid = peer->lid, .dgid = &peer->gid,
		.mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rq_psn = 0x100, .sq_psn = 0x100,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.max_rd_atomic = 4, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qpu_bring_up(s->qp, &c) ? FK_CONNECT : 0;
}

/* One completion of the status and opcode wanted within 10 s. */
static int fk_poll(struct fk_side *s, enum ibv_wc_opcode op)
{
	uint64_t end = dt_now_ms() + 10000;
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0 && dt_now_ms() < end)
		usleep(50);
	if (n != 1)
		return FK_POLL;
	return wc.status == IBV_WC_SUCCESS && wc.opcode == op ? 0 : FK_POLL;
}

static int fk_post_recv(struct fk_side *s)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)s->buf, FK_LEN / 2, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad) ? FK_POST : 0;
}

/*
 * The requester's half: a WRITE into the peer's second half, then a SEND
 * into its receive; the SEND completes after the WRITE has landed.
 */
static int fk_write_and_send(struct fk_side *s, const struct fk_addr *peer, const char *what)
{
	struct ibv_sge sge = { (uint64_t)(uintptr_t)s->buf, FK_LEN / 2, s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { peer->addr + FK_LEN / 2, peer->rkey },
	}, *bad;
	int ret;

	snprintf((char *)s->buf, FK_LEN / 2, "%s from %d", what, (int)getpid());
	if (ibv_post_send(s->qp, &wr, &bad))
		return FK_POST;
	if ((ret = fk_poll(s, IBV_WC_RDMA_WRITE)))
		return ret;
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_send(s->qp, &wr, &bad))
		return FK_POST;
	return fk_poll(s, IBV_WC_SEND);
}

/* The responder's half: the SEND arrived, and the WRITE before it. */
static int fk_check_received(struct fk_side *s, const char *what, pid_t from)
{
	char want[64];
	int ret = fk_poll(s, IBV_WC_RECV);

	if (ret)
		return ret;
	snprintf(want, sizeof(want), "%s from %d", what, (int)from);
	if (strcmp((char *)s->buf, want) || strcmp((char *)s->buf + FK_LEN / 2, want))
		return FK_DATA;
	return 0;
}

static void fk_side_close(struct fk_side *s)
{
	ibv_destroy_qp(s->qp);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

static bool fk_read(int fd, void *p, size_t len)
{
	return read(fd, p, len) == (ssize_t)len;
}

static bool fk_write(int fd, const void *p, size_t len)
{
	return write(fd, p, len) == (ssize_t)len;
}

/* A child and the two pipes between it and the test. */
struct fk_child {
	pid_t	pid;
	int	to;		/* the test writes, the child reads */
	int	from;		/* the child writes, the test reads */
};

/*
 * Forks a child with a pipe each way: true in the child, whose ends are
 * *in and *out; in the test, c holds the other two.
 */
static bool fk_fork(struct fk_child *c, int *in, int *out)
{
	int to[2], from[2];

	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (c->pid == 0) {
		close(to[1]);
		close(from[0]);
		*in = to[0];
		*out = from[1];
		return true;
	}
	close(to[0]);
	close(from[1]);
	c->to = to[1];
	c->from = from[0];
	return false;
}

static int fk_wait(struct fk_child *c)
{
	int st = 0;

	close(c->to);
	close(c->from);
	cr_assert_eq(waitpid(c->pid, &st, 0), c->pid);
	return et_status(st);
}

/*
 * The pid holding host slot h of the subnet, 0 if none (subnet/subnet.c),
 * as /proc/locks lists it: F_GETLK does not see the caller's own locks,
 * and closing a descriptor of the file would release them.
 */
static pid_t fk_slot_holder(unsigned h)
{
	const char *s = getenv("RFEMU_STATE_DIR"), *x = getenv("XDG_RUNTIME_DIR");
	char path[PATH_MAX], line[256];
	struct stat st;
	pid_t pid = 0;
	FILE *f;

	if (s && *s)
		snprintf(path, sizeof(path), "%s/hosts.lock", s);
	else if (x && *x)
		snprintf(path, sizeof(path), "%s/rfemu/hosts.lock", x);
	else
		snprintf(path, sizeof(path), "/tmp/rfemu-%u/hosts.lock", (unsigned)getuid());
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	f = fopen("/proc/locks", "r");
	cr_assert(f);
	/* "1: POSIX  ADVISORY  WRITE 20837 fe:00:11265458 1 1" */
	while (!pid && fgets(line, sizeof(line), f)) {
		unsigned long long ino, start, end;
		char kind[16], mode[16];
		int p;

		if (sscanf(line, "%*s %15s %*s %15s %d %*x:%*x:%llu %llu %llu", kind, mode, &p,
			   &ino, &start, &end) == 6 && !strcmp(kind, "POSIX") &&
		    !strcmp(mode, "WRITE") && ino == st.st_ino && start == h && end == h)
			pid = p;
	}
	fclose(f);
	return pid;
}

/* The host id in a node GUID (subnet/subnet.c emu_subnet_identity()). */
static unsigned fk_host(uint64_t node_guid)
{
	return (unsigned)(node_guid >> 8) & 0xffff;
}

/* The node GUID sysfs shows this process, host order. */
static uint64_t fk_sysfs_guid(void)
{
	unsigned g[4] = { 0 };
	FILE *f = fopen("/sys/class/infiniband/mlx5_0/node_guid", "r");
	int n = f ? fscanf(f, "%4x:%4x:%4x:%4x", &g[0], &g[1], &g[2], &g[3]) : 0;

	if (f)
		fclose(f);
	if (n != 4)
		return 0;
	return (uint64_t)g[0] << 48 | (uint64_t)g[1] << 32 | (uint64_t)g[2] << 16 | g[3];
}

/*
 * A sibling: reads the sysfs tree first (which makes it a host), opens the
 * device, says where its QP is, hears its sibling's, and then either
 * sends (first) or receives.
 */
static int fk_sibling(int in, int out, bool first)
{
	struct fk_side s;
	struct fk_addr peer;
	uint64_t guid = fk_sysfs_guid();
	int ret;

	alarm(60);
	if ((ret = fk_side_open(&s, NULL)))
		return ret;
	if (guid != s.me.node_guid)
		return FK_SYSFS;
	if (!fk_write(out, &s.me, sizeof(s.me)) || !fk_read(in, &peer, sizeof(peer)))
		return FK_PIPE;
	/* a SEND before the receive is posted waits (RNR retry, 7: forever) */
	if ((ret = fk_connect(&s, &peer)) || (!first && (ret = fk_post_recv(&s))))
		return ret;
	if (first)
		ret = fk_write_and_send(&s, &peer, FK_SEND);
	else
		ret = fk_check_received(&s, FK_SEND, peer.pid);
	/* the receiver answers when done, so that the sender stays until then */
	if (!first && !fk_write(out, &ret, sizeof(ret)))
		return FK_PIPE;
	if (first && !fk_read(in, &ret, sizeof(ret)))
		return FK_PIPE;
	fk_side_close(&s);
	return ret;
}

/*
 * Two children forked from one process each open the device and connect
 * to each other (what MPI launchers and test harnesses that fork servers
 * do).  Before issue 32 both were the parent's host: both QPs 0x4001 (of
 * host 2: 0x8001), one wire listener name, and the SEND never completed.
 */
Test(fork, two_children_are_two_hosts)
{
	struct fk_child c[2];
	struct fk_addr a[2];
	int ret;

	for (int i = 0; i < 2; i++) {
		int in, out;

		if (fk_fork(&c[i], &in, &out))
			_exit(fk_sibling(in, out, i == 0));
	}
	for (int i = 0; i < 2; i++)
		cr_assert(fk_read(c[i].from, &a[i], sizeof(a[i])), "child %d said nothing", i);
	cr_expect_neq(a[0].qpn, a[1].qpn, "both QPs %#x", a[0].qpn);
	cr_expect_neq(memcmp(&a[0].gid, &a[1].gid, sizeof(a[0].gid)), 0);
	cr_expect_neq(a[0].node_guid, a[1].node_guid);
	if (a[0].lid)
		cr_expect_neq(a[0].lid, a[1].lid);
	/* each holds a host slot of its own */
	for (int i = 0; i < 2; i++)
		cr_expect_eq(fk_slot_holder(fk_host(a[i].node_guid)), a[i].pid,
			     "host %u", fk_host(a[i].node_guid));
	for (int i = 0; i < 2; i++)
		cr_assert(fk_write(c[i].to, &a[1 - i], sizeof(a[i])));
	cr_assert(fk_read(c[1].from, &ret, sizeof(ret)), "the receiver said nothing");
	cr_assert(fk_write(c[0].to, &ret, sizeof(ret)));
	for (int i = 0; i < 2; i++)
		cr_expect_eq(fk_wait(&c[i]), 0, "child %d failed", i);
	cr_expect_eq(ret, 0, "the receiver failed at step %d", ret);
}

/* ALLOC_PD by write(), as libibverbs sent it before INVOKE_WRITE: its errno */
static int fk_write_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr	hdr;
		struct ib_uverbs_alloc_pd	cmd;
	} req = {
		{ IB_USER_VERBS_CMD_ALLOC_PD, sizeof(req) / 4, sizeof(resp) / 4 },
		{ (uintptr_t)&resp },
	};

	return write(ctx->cmd_fd, &req, sizeof(req)) == (ssize_t)sizeof(req) ? 0 : errno;
}

/*
 * What the kernel serves a child on its parent's context: ioctl()
 * commands, and among them INVOKE_WRITE's ALLOC_PD (libibverbs 44's
 * ibv_alloc_pd()); not write() (ib_safe_file_access(): EACCES); not here
 * what needs the parent's device (EIO), nor the parent's objects.
 */
static int fk_use_inherited(struct fk_side *parent)
{
	struct ibv_pd *pd = ibv_alloc_pd(parent->ctx);

	if (!pd)
		return FK_INHERITED;
	if (fk_write_alloc_pd(parent->ctx) != EACCES)
		return FK_WRITE;
	errno = 0;
	if (ibv_create_cq(parent->ctx, 8, NULL, NULL, 0) || errno != EIO)
		return FK_INHERITED;
	if (!ibv_dealloc_pd(parent->pd) || ibv_dealloc_pd(pd))
		return FK_INHERITED;
	return ibv_close_device(parent->ctx) ? FK_CLOSE : 0;
}

/*
 * A child of a process with a QP: it makes and frees a PD on its
 * inherited context, which then closes without touching the parent's; it
 * opens the device as a host of its own and talks to the parent's QP both
 * ways.
 */
static int fk_child_of_host(int in, int out, struct fk_side *parent)
{
	struct fk_side s;
	struct fk_addr peer;
	int ret;

	alarm(60);
	if ((ret = fk_use_inherited(parent)))
		return ret;
	if ((ret = fk_side_open(&s, NULL)))
		return ret;
	if (!fk_write(out, &s.me, sizeof(s.me)) || !fk_read(in, &peer, sizeof(peer)))
		return FK_PIPE;
	if ((ret = fk_connect(&s, &peer)) || (ret = fk_post_recv(&s)) ||
	    (ret = fk_write_and_send(&s, &peer, "child")) ||
	    (ret = fk_check_received(&s, "parent", peer.pid)))
		return ret;
	fk_side_close(&s);
	return 0;
}

/* The parent's half with one child: connect, receive, send back. */
static void fk_parent_talks(struct fk_side *p, struct fk_child *c, struct fk_addr *child)
{
	cr_assert(fk_read(c->from, child, sizeof(*child)), "the child said nothing");
	cr_assert_eq(fk_connect(p, child), 0);
	cr_assert_eq(fk_post_recv(p), 0);
	cr_assert(fk_write(c->to, &p->me, sizeof(p->me)));
	cr_assert_eq(fk_check_received(p, "child", child->pid), 0);
	cr_assert_eq(fk_write_and_send(p, child, "parent"), 0);
}

/*
 * The parent opened the device and made two QPs before it forked.  The
 * first child uses one, closes what it inherited and exits; the parent's
 * host stays (its slot, its listener), and a second child, a new host
 * again, reaches the other QP over a new connection to that listener.
 */
Test(fork, parent_outlives_its_children)
{
	struct fk_side p[2];
	struct fk_addr child[2];
	unsigned host;

	cr_assert_eq(fk_side_open(&p[0], NULL), 0);
	cr_assert_eq(fk_side_open(&p[1], p[0].ctx), 0);
	host = fk_host(p[0].me.node_guid);
	for (int i = 0; i < 2; i++) {
		struct fk_child c;
		int in, out;

		if (fk_fork(&c, &in, &out))
			_exit(fk_child_of_host(in, out, &p[0]));
		fk_parent_talks(&p[i], &c, &child[i]);
		cr_assert_eq(fk_wait(&c), 0, "child %d failed", i);
		cr_expect_neq(fk_host(child[i].node_guid), host);
		cr_expect_neq(child[i].qpn, p[0].me.qpn);
		cr_expect_neq(child[i].qpn, p[1].me.qpn);
		cr_expect_eq(fk_slot_holder(host), getpid(), "the parent's slot");
	}
	cr_expect_eq(fk_sysfs_guid(), p[0].me.node_guid);
	/* and the first QP still works, here */
	cr_assert_eq(ibv_destroy_qp(p[1].qp), 0);
	p[1].qp = NULL;
	ibv_dereg_mr(p[1].mr);
	ibv_destroy_cq(p[1].cq);
	ibv_dealloc_pd(p[1].pd);
	free(p[1].buf);
	fk_side_close(&p[0]);
}

/*
 * A child that only forks and exits, with the parent's contexts open and
 * without touching them, releases nothing: the parent's QP then reaches
 * a child host.
 */
Test(fork, a_child_that_exits_leaves_the_parent)
{
	struct fk_side p;
	struct fk_addr child;
	struct fk_child c;
	int in, out;
	pid_t pid;
	int st;

	cr_assert_eq(fk_side_open(&p, NULL), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		exit(0);	/* destructors run: the library's exit */
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(et_status(st), 0);
	if (fk_fork(&c, &in, &out)) {
		struct fk_side s;
		struct fk_addr peer;
		int ret;

		alarm(60);
		if ((ret = fk_side_open(&s, NULL)))
			_exit(ret);
		if (!fk_write(out, &s.me, sizeof(s.me)) || !fk_read(in, &peer, sizeof(peer)))
			_exit(FK_PIPE);
		if ((ret = fk_connect(&s, &peer)) || (ret = fk_post_recv(&s)) ||
		    (ret = fk_write_and_send(&s, &peer, "child")) ||
		    (ret = fk_check_received(&s, "parent", peer.pid)))
			_exit(ret);
		_exit(0);	/* without cleanup: the library's exit, its own host */
	}
	fk_parent_talks(&p, &c, &child);
	cr_assert_eq(fk_wait(&c), 0);
	cr_expect_eq(fk_slot_holder(fk_host(p.me.node_guid)), getpid());
	fk_side_close(&p);
}

/* The next event on ch within 10 s, if it is `type` (a child cannot assert). */
static bool fk_cm_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	bool ok;

	if (poll(&p, 1, 10000) != 1 || rdma_get_cm_event(ch, &ev))
		return false;
	ok = ev->event == type;
	rdma_ack_cm_event(ev);
	return ok;
}

#define FK_CM_PORT	7493

/*
 * The child's half: its parent's channel refuses it and it closes it;
 * then, a host of its own, it connects over a channel of its own to the
 * parent's listener, which rejects it.
 */
static int fk_cm_child(struct rdma_event_channel *inherited)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(FK_CM_PORT),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rdma_conn_param cp = { .qp_num = 0x123, .responder_resources = 1,
				      .initiator_depth = 1, .retry_count = 7 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;

	alarm(60);
	if (!rdma_create_id(inherited, &id, NULL, RDMA_PS_TCP) || errno != EACCES)
		return FK_INHERITED;
	rdma_destroy_event_channel(inherited);
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) ||
	    !fk_cm_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED) || rdma_resolve_route(id, 2000) ||
	    !fk_cm_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return FK_OPEN;
	if (rdma_connect(id, &cp) || !fk_cm_event(ch, RDMA_CM_EVENT_REJECTED))
		return FK_CONNECT;
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return 0;
}

/*
 * An rdma_cm channel the child inherited: ucma_write() refuses it every
 * command (EACCES: the file's credentials are the parent's), and the
 * child's close() of it takes nothing from the parent, whose listener
 * then takes the child's own connection, made on a channel (and a CM
 * thread) of its own.  Before, the child's create_id succeeded on its
 * copy of the channel, and its close() destroyed the copies of the
 * parent's ids, which took the listener's socket out of the subnet.
 */
Test(fork, inherited_rdma_cm_channel_refuses_the_child)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *listener;
	struct rdma_cm_event *ev;
	pid_t pid;
	int st;

	cr_assert(ch, "rdma_create_event_channel: %s", strerror(errno));
	listener = ct_listen(ch, RDMA_PS_TCP, FK_CM_PORT);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		exit(fk_cm_child(ch));	/* destructors run: the library's exit */
	ev = ct_expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	cr_assert_eq(ev->listen_id, listener);
	cr_assert_eq(rdma_reject(ev->id, NULL, 0), 0);
	cr_assert_eq(rdma_destroy_id(ev->id), 0);
	rdma_ack_cm_event(ev);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(et_status(st), 0, "the child failed at step %d", et_status(st));
	cr_assert_eq(rdma_destroy_id(listener), 0);
	rdma_destroy_event_channel(ch);
}

/* The answer to m on fd within 10 s: its status, or -1. */
static int fk_ask(int fd, const struct ut_mad *m, struct ut_mad *r)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (write(fd, m, sizeof(*m)) != (ssize_t)sizeof(*m) || poll(&p, 1, 10000) != 1 ||
	    read(fd, r, sizeof(*r)) < (ssize_t)sizeof(r->h))
		return -1;
	return r->h.status;
}

/* The node GUID in a NodeInfo answer, host order. */
static uint64_t fk_node_guid(const struct ut_mad *r)
{
	uint64_t g;

	memcpy(&g, r->mad + 64 + 12, 8);
	return be64toh(g);
}

/*
 * A umad file the child inherited: on a real kernel both processes share
 * it (user_mad.c checks no credentials), and it sends from the port it
 * was opened on - one host.  The child, a host of its own once it reads
 * sysfs, still asks the SMA behind the permissive LID through it and
 * hears its parent's node, and its request to nobody comes back timed
 * out.  Before, the file spoke for the child's new host, and the child
 * had no timer: the timeout never came.
 */
Test(fork, inherited_umad_file_speaks_for_the_parents_port)
{
	struct ib_user_mad_reg_req gsi = { .qpn = 1, .mgmt_class = 0x04, .mgmt_class_version = 1 };
	struct ib_user_mad_reg_req smi = { .qpn = 0, .mgmt_class = 0x01, .mgmt_class_version = 1 };
	uint64_t guid = fk_sysfs_guid();
	struct ut_mad m, r;
	pid_t pid;
	int fd = open("/dev/infiniband/umad0", O_RDWR), st;

	cr_assert_geq(fd, 0, "open umad0: %s", strerror(errno));
	cr_assert_eq(ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL), 0);
	cr_assert_eq(ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &gsi), 0);
	cr_assert_eq(ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &smi), 0);
	cr_assert_eq(smi.id, 1);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		alarm(60);
		if (fk_sysfs_guid() == guid)
			_exit(FK_SYSFS);	/* not a host of its own */
		ut_get(&m, 1, 0x01, 0x0011, 0xffff, 5000, 1);	/* NodeInfo */
		if (fk_ask(fd, &m, &r) || fk_node_guid(&r) != guid)
			_exit(FK_MAD);
		/* a LID nobody holds: 50 ms, then ETIMEDOUT */
		ut_get(&m, 0, 0x04, 0x0001, 0x1fff, 50, 2);
		if (fk_ask(fd, &m, &r) != ETIMEDOUT)
			_exit(FK_TIMEOUT);
		close(fd);
		exit(0);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(et_status(st), 0, "the child failed at step %d", et_status(st));
	/* the parent's file, agents and all, still answers the parent */
	ut_get(&m, 1, 0x01, 0x0011, 0xffff, 5000, 3);
	cr_assert_eq(fk_ask(fd, &m, &r), 0);
	cr_assert_eq(fk_node_guid(&r), guid);
	close(fd);
}

/* ------------------------------------------------------------------------ */
/* Device memory on the parent's context                                    */

#define FK_CHILDREN	5

/* Each child's bytes, and the parent's. */
static uint8_t fk_dm_byte(int who)
{
	return (uint8_t)(0x11 * (who + 1));
}

/* Reads up to len of fd within ms: false if the time ran out first. */
static bool fk_read_within(int fd, void *p, size_t len, unsigned ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, (int)ms) == 1 && fk_read(fd, p, len);
}

/*
 * Room for a DM's bytes.  Static, for the same reason as fk_dm_child()
 * does not exit(): the children of this threaded test allocate as little
 * as they can.
 */
static uint8_t fk_dm_buf[1 << 20];

/* The whole of a DM holds byte b. */
static bool fk_dm_holds(struct ibv_dm *dm, size_t len, uint8_t b)
{
	bool ok = len <= sizeof(fk_dm_buf) && !ibv_memcpy_from_dm(fk_dm_buf, dm, 0, len);

	for (size_t i = 0; ok && i < len; i++)
		ok = fk_dm_buf[i] == b;
	return ok;
}

/*
 * A child allocates len of device memory on its parent's context, says
 * what came of it (0 or the errno), fills it, and when told to checks that
 * no sibling wrote into it, then frees it, or closes the context with it.
 * Not exit() with it, though the library's exit releases it the same way:
 * under ASan, exit() runs LeakSanitizer's check, which takes the
 * allocator's locks, and one that another thread of the test held at
 * fork() stays taken in the child (gcc 12's libasan does not hold them
 * across fork()): about one run in 15 of this suite with two CPU burners
 * hung there (gdb: __lsan::LockAllocator() in exit()).
 */
static int fk_dm_child(struct ibv_context *ctx, int who, size_t len, bool close_ctx,
		       int in, int out)
{
	struct ibv_alloc_dm_attr attr = { .length = len };
	struct ibv_dm *dm;
	int err, go;

	alarm(60);
	errno = 0;
	dm = ibv_alloc_dm(ctx, &attr);
	err = dm ? 0 : errno;
	if (!fk_write(out, &err, sizeof(err)) || !fk_read(in, &go, sizeof(go)))
		return FK_PIPE;
	if (!dm)
		return 0;
	if (len > sizeof(fk_dm_buf))
		return FK_DM;
	memset(fk_dm_buf, fk_dm_byte(who), len);
	err = ibv_memcpy_to_dm(dm, 0, fk_dm_buf, len);
	/* all siblings have filled theirs when the second word comes */
	if (err || !fk_write(out, &err, sizeof(err)) || !fk_read(in, &go, sizeof(go)))
		return FK_PIPE;
	if (!fk_dm_holds(dm, len, fk_dm_byte(who)))
		return FK_DATA;
	if (close_ctx)
		return ibv_close_device(ctx) ? FK_CLOSE : 0;
	return ibv_free_dm(dm) ? FK_DM : 0;
}

/*
 * FK_CHILDREN children allocate len each on ctx at once and hold it; the
 * errno each got goes to err[], then they check their bytes and exit.
 */
static void fk_dm_children(struct ibv_context *ctx, size_t len, bool close_ctx,
			   int err[FK_CHILDREN])
{
	struct fk_child c[FK_CHILDREN];
	int go = 0;

	for (int i = 0; i < FK_CHILDREN; i++) {
		int in, out;

		if (fk_fork(&c[i], &in, &out))
			_exit(fk_dm_child(ctx, i, len, close_ctx, in, out));
	}
	for (int i = 0; i < FK_CHILDREN; i++)
		cr_assert(fk_read_within(c[i].from, &err[i], sizeof(err[i]), 30000),
			  "child %d did not allocate", i);
	for (int i = 0; i < FK_CHILDREN; i++)
		cr_assert(fk_write(c[i].to, &go, sizeof(go)));
	for (int i = 0; i < FK_CHILDREN; i++)
		if (!err[i])
			cr_assert(fk_read_within(c[i].from, &go, sizeof(go), 30000),
				  "child %d did not fill its DM", i);
	for (int i = 0; i < FK_CHILDREN; i++)
		if (!err[i])
			cr_assert(fk_write(c[i].to, &go, sizeof(go)));
	for (int i = 0; i < FK_CHILDREN; i++)
		cr_expect_eq(fk_wait(&c[i]), 0, "child %d failed", i);
}

static size_t fk_max_dm(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex da;

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &da), 0);
	cr_assert_gt(da.max_dm_size, 0);
	return da.max_dm_size;
}

/*
 * rdma-core's tests/test_device.py test_multi_process_alloc_dm, with the
 * memory used: five children allocate device memory on their parent's
 * context at once, beside the parent's own; each finds its own bytes
 * after all have written, and so does the parent.  Before issue 32 the
 * children got EIO; with the pool a copy in each child, they would have
 * got the same pages.  Once they have freed it, the parent has the rest.
 */
Test(fork, children_allocate_device_memory_on_the_parents_context)
{
	struct ibv_context *ctx = et_open();
	size_t max = fk_max_dm(ctx), len = max / 8;
	struct ibv_alloc_dm_attr attr = { .length = len }, rest = { .length = max - len };
	struct ibv_dm *mine = ibv_alloc_dm(ctx, &attr), *all;
	int err[FK_CHILDREN];

	cr_assert(mine && len <= sizeof(fk_dm_buf));
	memset(fk_dm_buf, fk_dm_byte(FK_CHILDREN), len);
	cr_assert_eq(ibv_memcpy_to_dm(mine, 0, fk_dm_buf, len), 0);
	fk_dm_children(ctx, len, false, err);
	for (int i = 0; i < FK_CHILDREN; i++)
		cr_expect_eq(err[i], 0, "child %d: %s", i, strerror(err[i]));
	cr_expect(fk_dm_holds(mine, len, fk_dm_byte(FK_CHILDREN)), "the parent's DM changed");
	all = ibv_alloc_dm(ctx, &rest);
	cr_expect(all, "the children's pages did not come back: %s", strerror(errno));
	if (all)
		ibv_free_dm(all);
	cr_expect_eq(ibv_free_dm(mine), 0);
	ibv_close_device(ctx);
}

/*
 * The children share one pool, the device's: five asking for a quarter
 * each, four get it and the fifth ENOMEM (mlx5_cmd_alloc_memic() finds no
 * room).  Those that close the context holding theirs release it: the
 * parent then gets the whole.
 */
Test(fork, children_share_the_device_memory_pool)
{
	struct ibv_context *ctx = et_open();
	size_t max = fk_max_dm(ctx);
	struct ibv_alloc_dm_attr whole = { .length = max };
	struct ibv_dm *dm;
	int err[FK_CHILDREN], got = 0, refused = 0;

	fk_dm_children(ctx, max / 4, true, err);
	for (int i = 0; i < FK_CHILDREN; i++) {
		got += !err[i];
		refused += err[i] == ENOMEM;
	}
	cr_expect_eq(got, 4, "%d of the children got a quarter", got);
	cr_expect_eq(refused, 1, "%d were refused with ENOMEM", refused);
	dm = ibv_alloc_dm(ctx, &whole);
	cr_expect(dm, "the children's pages did not come back: %s", strerror(errno));
	if (dm)
		ibv_free_dm(dm);
	ibv_close_device(ctx);
}
