/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ud_pingpong - UD datagrams driven by rdmafast, two ways:
 *
 *   unicast (default): the client sends each message to the server's QP
 *     through an address handle, the server answers it; the round trip is
 *     timed, as ibv_ud_pingpong does.
 *   --mcast: the client QPs attach to one multicast group
 *     (ibv_attach_mcast) and the server sends each message once, to the
 *     group (DestQP 0xFFFFFF): every client receives its own copy, with
 *     the 40-byte GRH naming the group, and acknowledges it to the server,
 *     which sends the next message only when every client has.
 *
 * Every message carries a pattern derived from the iteration, checked on
 * arrival, and its number as immediate data.
 *
 *   server:  ud_pingpong [-d dev] [-p port] [-g gid_idx] [--mcast --window N]
 *   client:  ud_pingpong [options] [--mcast] 127.0.0.1
 *   options: --iters N  --size BYTES  --mlid LID
 *
 * --window is the number of clients the --mcast server waits for (2).
 * The group is ff12:...:5544:<TCP port> (an IPv4-mapped 239.85.<port>
 * when -g names an IPv4 GID) with the multicast LID --mlid (0xc001). On
 * an InfiniBand fabric the group must also be joined at the subnet
 * administrator (e.g. by rdma_join_multicast(3)) for the switches to
 * forward it; pass the MLID the SA assigned.
 *
 * Exits 0 only when every message arrived intact, exactly once, in order.
 */
#include "cli.h"
#include "ud.h"

enum { RX_DEPTH = 16, MAX_CLIENTS = 16, WAIT_MS = 10000 };

#define QKEY 0x55445050U	/* "UDPP" */
#define MCAST_QPN 0xffffffU	/* the DestQP of every multicast packet (IBA 9.2) */

struct pp {
	struct ex_ud u;
	const struct ex_opts *o;
	uint32_t size;
	int server;
	int mcast;			/* --mcast */
	long mlid_opt;			/* --mlid */
	long errors;
	union ibv_gid mgid;
	uint16_t mlid;
	struct ibv_ah *group_ah;	/* the server's, toward the group */
	struct rf_wqe_av group_av;
	int nclients;
	int sock[MAX_CLIENTS];		/* the server's: [0] is u.sock */
	uint32_t client_qpn[MAX_CLIENTS];
};

static uint8_t pattern(long iter, uint32_t j, int reply)
{
	return (uint8_t)(iter * 5 + j * 3 + reply * 77);
}

/* Receive slot i: the GRH space, then up to size bytes. */
static uint8_t *slot(struct pp *p, uint64_t i)
{
	return p->u.buf + i * (RF_UD_GRH_LEN + p->size);
}

static uint8_t *tx_area(struct pp *p)
{
	return slot(p, RX_DEPTH);
}

static int post_recv(struct pp *p, uint64_t i)
{
	return rf_rq_post_one(&p->u.qp.rq, p->u.mr->lkey, (uint64_t)(uintptr_t)slot(p, i),
			      RF_UD_GRH_LEN + p->size, i);
}

/* Send message `iter` (reply: an answer) to (av, qpn); its completion is polled later. */
static int send_msg(struct pp *p, const struct rf_wqe_av *av, uint32_t qpn, long iter, int reply)
{
	uint8_t *tx = tx_area(p);

	for (uint32_t j = 0; j < p->size; j++)
		tx[j] = pattern(iter, j, reply);
	return rf_sq_post_ud_send(&p->u.qp.sq, av, qpn, QKEY, NULL, p->u.mr->lkey,
				  (uint64_t)(uintptr_t)tx, p->size,
				  rf_htobe32((uint32_t)iter), 1,
				  RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)iter);
}

/*
 * The next receive, checked: message `iter` (reply: an answer) of size
 * bytes, from src_qp if non-zero, with the group in its GRH if mcast.
 * Send completions met on the way are checked too. 0 with *from, or -1.
 */
static int next_recv(struct pp *p, long iter, int reply, uint32_t src_qp, int mcast,
		     uint32_t *from)
{
	long end = ex_now_us() + WAIT_MS * 1000L;
	struct rf_wc wc;
	const uint8_t *m;
	int ret;

	for (;;) {
		if (!rf_cq_poll(&p->u.cq, &wc, 1)) {
			if (ex_now_us() > end) {
				fprintf(stderr, "message %ld: none within %d ms\n", iter, WAIT_MS);
				return -1;
			}
			continue;
		}
		if (wc.status != RF_WC_SUCCESS) {
			fprintf(stderr, "completion error %u (wr %llu)\n", wc.status,
				(unsigned long long)wc.wr_id);
			return -1;
		}
		if (wc.opcode == RF_WC_RECV)
			break;
	}
	m = slot(p, wc.wr_id);
	if (wc.byte_len != RF_UD_GRH_LEN + p->size || rf_be32toh(wc.imm) != (uint32_t)iter ||
	    !(wc.flags & RF_WC_WITH_IMM) || (src_qp && wc.src_qp != src_qp))
		p->errors++;
	/*
	 * A multicast copy names its group: the GRH's destination GID, or on
	 * RoCE v2 over IPv4 the destination address of the IPv4 header that
	 * fills the last 20 of the 40 bytes.
	 */
	if (mcast && (!(wc.flags & RF_WC_GRH) ||
		      (p->mgid.raw[0] == 0xff ? memcmp(m + 24, p->mgid.raw, 16)
					      : memcmp(m + 36, p->mgid.raw + 12, 4))))
		p->errors++;
	for (uint32_t j = 0; j < p->size; j++)
		if (m[RF_UD_GRH_LEN + j] != pattern(iter, j, reply)) {
			p->errors++;
			break;
		}
	*from = wc.src_qp;
	ret = post_recv(p, wc.wr_id);
	rf_rq_ring(&p->u.qp.rq);
	return ret ? -1 : 0;
}

/* ff12::5544:<port>, or 239.85.<port> for an IPv4 source GID (RoCE v2 over IPv4). */
static void group_of(struct pp *p, const uint8_t *my_gid)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	uint16_t port = (uint16_t)p->o->port;

	memset(&p->mgid, 0, sizeof(p->mgid));
	if (p->u.global && !memcmp(my_gid, v4mapped, 12)) {
		memcpy(p->mgid.raw, v4mapped, 12);
		p->mgid.raw[12] = 239;
		p->mgid.raw[13] = 85;
	} else {
		p->mgid.raw[0] = 0xff;
		p->mgid.raw[1] = 0x12;
		p->mgid.raw[12] = 0x55;
		p->mgid.raw[13] = 0x44;
	}
	p->mgid.raw[14] = (uint8_t)(port >> 8);
	p->mgid.raw[15] = (uint8_t)port;
	p->mlid = (uint16_t)(p->mlid_opt ? p->mlid_opt : 0xc001);
}

/* ---- unicast ---------------------------------------------------------------- */

static int unicast(struct pp *p, double *usec)
{
	long start = ex_now_us();
	uint32_t from;

	for (long i = 0; i < p->o->iters; i++) {
		if (!p->server && send_msg(p, &p->u.av, p->u.peer.qpn, i, 0))
			return -1;
		if (next_recv(p, i, !p->server, p->u.peer.qpn, 0, &from))
			return -1;
		if (p->server && send_msg(p, &p->u.av, p->u.peer.qpn, i, 1))
			return -1;
	}
	*usec = (double)(ex_now_us() - start) / (double)p->o->iters;
	return rf_tcp_sync(p->u.sock, 'E', WAIT_MS);
}

/* ---- multicast -------------------------------------------------------------- */

/* The server: accept the clients, then each message once to the group. */
static int mcast_serve(struct pp *p, double *usec)
{
	struct rf_ep_info me;
	struct ibv_ah_attr aa;
	long start;
	int ret;

	if (ex_ud_info(&p->u, &me))
		return -1;
	memset(&aa, 0, sizeof(aa));
	aa.dlid = p->mlid;
	aa.port_num = p->u.port;
	aa.is_global = 1;		/* the GRH carries the MGID */
	aa.grh.dgid = p->mgid;
	aa.grh.sgid_index = (uint8_t)p->u.gid_index;
	aa.grh.hop_limit = 1;
	p->group_ah = ibv_create_ah(p->u.pd, &aa);
	if (!p->group_ah || rf_ah_av_ibv(p->group_ah, &p->group_av)) {
		fprintf(stderr, "the group's address handle: %s\n", strerror(errno));
		return -1;
	}
	/* one listener for every client: later ones wait in its backlog */
	int lfd = rf_tcp_listen((uint16_t)p->o->port, 0);

	if (lfd < 0) {
		fprintf(stderr, "listening: %s\n", strerror(-lfd));
		return -1;
	}
	for (int c = 0; c < p->nclients;) {
		struct rf_ep_info peer;
		int fd = rf_tcp_accept(lfd, WAIT_MS);

		if (fd < 0) {
			fprintf(stderr, "waiting for client %d: %s\n", c + 1, strerror(-fd));
			close(lfd);
			return -1;
		}
		if (rf_ep_exchange(fd, &me, &peer, WAIT_MS)) {
			close(fd);
			continue;
		}
		p->sock[c] = fd;
		p->client_qpn[c++] = peer.qpn;
	}
	close(lfd);
	for (int c = 0; c < p->nclients; c++)
		if ((ret = rf_tcp_sync(p->sock[c], 'R', WAIT_MS)))	/* attached, receives posted */
			return ret;
	start = ex_now_us();
	for (long i = 0; i < p->o->iters; i++) {
		uint32_t acked = 0;

		if (send_msg(p, &p->group_av, MCAST_QPN, i, 0))
			return -1;
		/* every client acknowledges it, each exactly once */
		for (int k = 0; k < p->nclients; k++) {
			uint32_t from;
			int c;

			if (next_recv(p, i, 1, 0, 0, &from))
				return -1;
			for (c = 0; c < p->nclients && p->client_qpn[c] != from; c++)
				;
			if (c == p->nclients || (acked & 1u << c))
				p->errors++;
			acked |= 1u << c;
		}
	}
	*usec = (double)(ex_now_us() - start) / (double)p->o->iters;
	for (int c = 0; c < p->nclients; c++)
		if ((ret = rf_tcp_sync(p->sock[c], 'E', WAIT_MS)))
			return ret;
	return 0;
}

/* A client: attach to the group, meet the server, acknowledge every copy. */
static int mcast_join(struct pp *p, const char *addr, double *usec)
{
	long end = ex_now_us() + WAIT_MS * 1000L, start;
	struct rf_ep_info me;
	uint32_t from;
	int ret;

	if (ibv_attach_mcast(p->u.qp.ibqp, &p->mgid, p->mlid)) {
		fprintf(stderr, "ibv_attach_mcast: %s\n", strerror(errno));
		return -1;
	}
	if (ex_ud_info(&p->u, &me))
		return -1;
	for (;;) {	/* the server takes one client at a time: retry when reset */
		p->u.sock = rf_tcp_connect(addr, (uint16_t)p->o->port, WAIT_MS);
		if (p->u.sock >= 0 && !rf_ep_exchange(p->u.sock, &me, &p->u.peer, WAIT_MS))
			break;
		if (p->u.sock >= 0)
			close(p->u.sock);
		p->u.sock = -1;
		if (ex_now_us() > end) {
			fprintf(stderr, "meeting the server: timed out\n");
			return -1;
		}
	}
	p->u.ah = ex_ud_ah(&p->u, (uint16_t)p->u.peer.lid, p->u.peer.gid);
	if (!p->u.ah || rf_ah_av_ibv(p->u.ah, &p->u.av)) {
		fprintf(stderr, "the server's address handle: %s\n", strerror(errno));
		return -1;
	}
	if ((ret = rf_tcp_sync(p->u.sock, 'R', WAIT_MS)))
		return ret;
	start = ex_now_us();
	for (long i = 0; i < p->o->iters; i++) {
		if (next_recv(p, i, 0, p->u.peer.qpn, 1, &from))
			return -1;
		if (send_msg(p, &p->u.av, p->u.peer.qpn, i, 1))
			return -1;
	}
	*usec = (double)(ex_now_us() - start) / (double)p->o->iters;
	ret = rf_tcp_sync(p->u.sock, 'E', WAIT_MS);
	if (ibv_detach_mcast(p->u.qp.ibqp, &p->mgid, p->mlid) && !ret)
		ret = -errno;
	return ret;
}

/*
 * Take this program's own options (--mcast, --mlid LID) out of argv
 * before ex_parse() reads the shared ones. Returns the new argc.
 */
static int own_options(int argc, char **argv, struct pp *p)
{
	int n = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mcast"))
			p->mcast = 1;
		else if (!strcmp(argv[i], "--mlid") && i + 1 < argc)
			p->mlid_opt = strtol(argv[++i], NULL, 0);
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 100, 64, 0, 0, 0, 0, NULL };
	struct pp p;
	double usec = 0;
	char addr[64];
	int ret = -1;

	memset(&p, 0, sizeof(p));
	argc = own_options(argc, argv, &p);
	if (ex_parse(&o, argc, argv,
		     "      --mcast         the server sends to a multicast group the clients join\n"
		     "      --mlid LID      the group's multicast LID (InfiniBand; default 0xc001)\n"
		     "      --window N      clients the --mcast server waits for (default 2)\n"))
		return 2;
	p.o = &o;
	p.size = (uint32_t)o.size;
	p.server = o.host == NULL;
	p.nclients = o.window ? o.window : 2;
	if (p.nclients > MAX_CLIENTS || (p.mlid_opt && (p.mlid_opt < 0xc000 || p.mlid_opt > 0xfffe))) {
		fprintf(stderr, "--window: at most %d clients; --mlid: 0xc000-0xfffe\n", MAX_CLIENTS);
		return 2;
	}
	for (int c = 0; c < MAX_CLIENTS; c++)
		p.sock[c] = -1;
	if (o.host && ex_resolve(o.host, addr, sizeof(addr))) {
		fprintf(stderr, "%s: no such host\n", o.host);
		return 1;
	}
	if (p.mcast ? ex_ud_setup(&p.u, &o, (RX_DEPTH + 1) * (RF_UD_GRH_LEN + p.size), RX_DEPTH,
				  QKEY)
		    : ex_ud_open(&p.u, &o, (RX_DEPTH + 1) * (RF_UD_GRH_LEN + p.size), RX_DEPTH,
				 QKEY))
		return 1;
	if (p.size > (128u << p.u.pa.active_mtu)) {
		fprintf(stderr, "--size %u: more than a UD message holds on this port\n", p.size);
		goto out;
	}
	for (uint64_t s = 0; s < RX_DEPTH; s++)
		if (post_recv(&p, s)) {
			fprintf(stderr, "posting receives failed\n");
			goto out;
		}
	rf_rq_ring(&p.u.qp.rq);
	if (p.mcast) {
		union ibv_gid g;

		memset(&g, 0, sizeof(g));
		if (p.u.global)
			ibv_query_gid(p.u.ctx, p.u.port, p.u.gid_index, &g);
		group_of(&p, g.raw);
		ret = p.server ? mcast_serve(&p, &usec) : mcast_join(&p, addr, &usec);
	} else {
		ret = rf_tcp_sync(p.u.sock, 'G', WAIT_MS);	/* receives posted on both sides */
		if (!ret)
			ret = unicast(&p, &usec);
	}
	if (p.mcast) {
		char group[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, p.mgid.raw, group, sizeof(group));
		printf("%s: %ld messages of %u bytes %s the group %s (MLID %#x), QP %#x\n",
		       p.server ? "server" : "client", o.iters, p.size, p.server ? "to" : "from",
		       group, p.mlid, p.u.qp.qpn);
	} else
		printf("%s: %ld round trips of %u bytes, QP %#x <-> %#x\n",
		       p.server ? "server" : "client", o.iters, p.size, p.u.qp.qpn, p.u.peer.qpn);
	if (!ret)
		printf("  %8.2f usec per %s\n", usec,
		       p.mcast ? (p.server ? "message acknowledged by every client" : "message")
			       : "round trip");
	printf("  %s (%ld bad messages)\n", !ret && !p.errors ? "all checks passed" : "FAILED",
	       p.errors);
out:
	if (p.group_ah)
		ibv_destroy_ah(p.group_ah);
	for (int c = 1; c < p.nclients && p.server && p.mcast; c++)
		if (p.sock[c] >= 0)
			close(p.sock[c]);
	if (p.server && p.mcast)
		p.u.sock = p.sock[0];
	ex_ud_close(&p.u);
	return !ret && !p.errors ? 0 : 1;
}
