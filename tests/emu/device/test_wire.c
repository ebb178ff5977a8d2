/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_wire.c - the fabric between two processes (emu/wire/wire.c).
 *
 * The far end is helper_wire, another emulated host.  The link is lossless
 * as InfiniBand's credit flow control makes it: a large transfer that fills
 * the sockets waits for room instead of losing packets, so it completes
 * with nothing dropped.  A peer killed with SIGKILL leaves its survivor
 * with error completions once the retries are spent, and a device that
 * goes on working.
 *
 * No test here asserts how long anything takes: the machine may be loaded
 * (CI runs many builds at once, make test-aarch64 runs under qemu-user),
 * and how fast the wire is belongs to make bench (bench/emu_model.c,
 * --only bw).  The bounds on the waits only catch a hang.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include <poll.h>

#include "wire_test.h"
#include "wire/packet.h"

TestSuite(dev_wire, .timeout = 120);

#define MIB		(1024u * 1024)

struct side {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*buf;
	size_t			bytes;
	uint16_t		lid;
	uint32_t		sq_depth;	/* of the QP side_connect() creates */
	/* the peer's QP and memory */
	uint32_t		rkey;
	uint64_t		raddr;
};

/* Start helper_wire with `bytes` of memory and connect a QP of ours to it. */
static void side_connect(struct side *s, struct wt_peer *peer, size_t bytes,
			 uint8_t timeout, uint8_t retry_cnt)
{
	char arg[32], line[256];
	char *argv[] = { "helper_wire", "target", arg, NULL };
	struct wt_conn c = { .max_rd_atomic = 16, .max_dest_rd_atomic = 16,
			     .timeout = timeout, .retry_cnt = retry_cnt };
	unsigned qpn, lid, rkey;
	unsigned long long addr;

	snprintf(arg, sizeof(arg), "%zu", bytes);
	wt_peer_start(peer, argv);
	wt_peer_line(peer, line, sizeof(line));
	cr_assert_eq(sscanf(line, "%u %u %u %llu", &qpn, &lid, &rkey, &addr), 4,
		     "helper said '%s'", line);
	s->qp = wt_create_qp(s->pd, s->cq, s->sq_depth);
	c.dqpn = qpn;
	c.dlid = (uint16_t)lid;
	cr_assert_eq(wt_connect(s->qp, &c), 0, "connect: %s", strerror(errno));
	snprintf(line, sizeof(line), "%u %u", s->qp->qp_num, s->lid);
	wt_peer_say(peer, line);
	wt_peer_line(peer, line, sizeof(line));
	cr_assert_str_eq(line, "ready");
	s->rkey = rkey;
	s->raddr = addr;
}

static void side_open(struct side *s, size_t bytes)
{
	struct ibv_port_attr pa;

	memset(s, 0, sizeof(*s));
	s->ctx = et_open();
	cr_assert_eq(ibv_query_port(s->ctx, 1, &pa), 0);
	s->lid = pa.lid;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 1024, NULL, NULL, 0);
	s->sq_depth = 64;
	s->bytes = bytes;
	s->buf = aligned_alloc(4096, bytes);
	cr_assert(s->pd && s->cq && s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, bytes, DT_ACC_ALL);
	cr_assert(s->mr);
}

static void side_close(struct side *s)
{
	if (s->qp)
		cr_expect_eq(ibv_destroy_qp(s->qp), 0);
	cr_expect_eq(ibv_dereg_mr(s->mr), 0);
	cr_expect_eq(ibv_destroy_cq(s->cq), 0);
	cr_expect_eq(ibv_dealloc_pd(s->pd), 0);
	cr_expect_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static void post_rdma(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id,
		      uint64_t local_off, uint64_t remote_off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + local_off, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { s->raddr + remote_off, s->rkey },
	};

	dt_post(s->qp, &wr);
}

/* n completions, all successful, within ms. */
static void wait_ok(struct side *s, int n, unsigned ms)
{
	struct ibv_wc wc[64];

	while (n > 0) {
		int k = n < 64 ? n : 64;
		int got = dt_poll(s->cq, wc, k, ms);

		cr_assert_eq(got, k, "%d completions missing", n - got);
		for (int i = 0; i < got; i++)
			cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "wr %llu: status %d",
				     (unsigned long long)wc[i].wr_id, wc[i].status);
		n -= got;
	}
}

static void peer_stats(struct wt_peer *peer, unsigned long long v[4])
{
	char line[256];

	wt_peer_say(peer, "stats");
	wt_peer_line(peer, line, sizeof(line));
	cr_assert_eq(sscanf(line, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]), 4);
}

/*
 * 32 MiB written to the peer in 1 MiB WRITEs (16 in flight), then read
 * back in 1 MiB READs: 64 MiB over the wire, byte for byte, with no packet
 * dropped on either host (a lossless link defers, it does not drop).
 */
Test(dev_wire, large_transfer_lossless)
{
	enum { HALF = 32 * MIB, CHUNK = MIB, N = HALF / CHUNK, WIN = 16 };
	struct side s;
	struct wt_peer peer;
	struct rfemu_dev_stats st;
	unsigned long long ps[4];
	uint64_t t0, ms;

	side_open(&s, 2 * HALF);
	for (uint32_t i = 0; i < HALF; i += 4) {
		uint32_t v = i * 2654435761u;

		memcpy(s.buf + i, &v, 4);
	}
	memset(s.buf + HALF, 0, HALF);
	/*
	 * 4.096 us * 2^16 = 268 ms a try, 7 retries: a peer descheduled for
	 * a while on a loaded machine is waited for, not given up on; a lost
	 * packet shows in the drop counters below, not in the time.
	 */
	side_connect(&s, &peer, HALF, 16, 7);

	t0 = dt_now_ms();
	for (uint32_t i = 0; i < N; i++) {
		if (i >= WIN)
			wait_ok(&s, 1, 20000);
		post_rdma(&s, IBV_WR_RDMA_WRITE, i, (uint64_t)i * CHUNK, (uint64_t)i * CHUNK, CHUNK);
	}
	wait_ok(&s, WIN, 20000);
	for (uint32_t i = 0; i < N; i++) {
		if (i >= WIN)
			wait_ok(&s, 1, 20000);
		post_rdma(&s, IBV_WR_RDMA_READ, N + i, HALF + (uint64_t)i * CHUNK,
			  (uint64_t)i * CHUNK, CHUNK);
	}
	wait_ok(&s, WIN, 20000);
	ms = dt_now_ms() - t0;

	cr_assert(!memcmp(s.buf, s.buf + HALF, HALF), "the data read back differs");
	st = wt_stats();
	peer_stats(&peer, ps);
	fprintf(stderr, "dev_wire: 64 MiB in %llu ms; here: %llu deferred, %llu dropped; "
		"peer: %llu deferred, %llu dropped\n", (unsigned long long)ms,
		(unsigned long long)st.deferred,
		(unsigned long long)(st.drop_link + st.drop_fault), ps[2], ps[0] + ps[1]);
	cr_assert_eq(st.drop_link + st.drop_fault, 0, "packets lost here");
	cr_assert_eq(ps[0] + ps[1], 0, "packets lost at the peer");
	cr_assert_eq(wt_peer_end(&peer), 0);
	side_close(&s);
}

/*
 * One 32 MiB WRITE to the peer, 1024 packets, twice the requester's window:
 * it goes out in pieces as the peer's ACKs come, and completes; one 32 MiB
 * READ brings it back byte for byte.
 */
Test(dev_wire, write_32mib_one_message)
{
	enum { LEN = 32 * MIB };
	struct side s;
	struct wt_peer peer;

	side_open(&s, 2 * LEN);
	for (uint32_t i = 0; i < LEN; i += 4) {
		uint32_t v = (i + 5) * 2654435761u;

		memcpy(s.buf + i, &v, 4);
	}
	memset(s.buf + LEN, 0, LEN);
	side_connect(&s, &peer, LEN, 16, 7);
	post_rdma(&s, IBV_WR_RDMA_WRITE, 1, 0, 0, LEN);
	wait_ok(&s, 1, 30000);
	post_rdma(&s, IBV_WR_RDMA_READ, 2, LEN, 0, LEN);
	wait_ok(&s, 1, 30000);
	cr_assert(!memcmp(s.buf, s.buf + LEN, LEN), "the data read back differs");
	cr_assert_eq(wt_peer_end(&peer), 0);
	side_close(&s);
}

/*
 * One 320 MiB READ from the peer, more than a link's backlog holds (256
 * MiB): the peer's device sends the responses as the link takes them, and
 * the READ brings back byte for byte what a WRITE put there, with nothing
 * lost on either host.  Queued at once, the responses past the backlog
 * limit were lost on every try and the READ ended in RETRY_EXC_ERR.
 */
Test(dev_wire, read_320mib_one_message)
{
	const uint32_t len = 320 * MIB;
	struct side s;
	struct wt_peer peer;
	unsigned long long ps[4];
	struct rfemu_dev_stats st;

	side_open(&s, 2 * (size_t)len);
	for (uint32_t i = 0; i < len; i += 4) {
		uint32_t v = (i + 7) * 2654435761u;

		memcpy(s.buf + i, &v, 4);
	}
	memset(s.buf + len, 0, len);
	side_connect(&s, &peer, len, 16, 7);
	post_rdma(&s, IBV_WR_RDMA_WRITE, 1, 0, 0, len);
	wait_ok(&s, 1, 60000);
	post_rdma(&s, IBV_WR_RDMA_READ, 2, len, 0, len);
	wait_ok(&s, 1, 60000);
	cr_assert(!memcmp(s.buf, s.buf + len, len), "the data read back differs");
	st = wt_stats();
	peer_stats(&peer, ps);
	cr_assert_eq(st.drop_link + st.drop_fault, 0, "packets lost here");
	cr_assert_eq(ps[0] + ps[1], 0, "packets lost at the peer");
	cr_assert_eq(wt_peer_end(&peer), 0);
	side_close(&s);
}

/*
 * 256 fetch-and-adds posted at once to the peer's counter with
 * max_rd_atomic 16: all complete, fetching 0..255 once each, and the
 * counter reads 256.
 */
Test(dev_wire, fetch_add_256_remote)
{
	enum { NFA = 256 };
	struct side s;
	struct wt_peer peer;
	struct ibv_wc wc[NFA];
	uint64_t sum = 0, *v;
	int got;

	side_open(&s, 64 * 1024);
	memset(s.buf, 0, s.bytes);
	v = (uint64_t *)s.buf;
	s.sq_depth = NFA;
	side_connect(&s, &peer, 4096, 14, 7);
	for (uint32_t i = 0; i < NFA; i++) {
		struct ibv_sge sge = { (uintptr_t)&v[i], 8, s.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { s.raddr, 1, 0, s.rkey },
		};

		dt_post(s.qp, &wr);
	}
	got = dt_poll(s.cq, wc, NFA, 20000);
	cr_assert_eq(got, NFA, "%d of %d atomics completed", got, NFA);
	for (int i = 0; i < NFA; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "status %d", wc[i].status);
		sum += v[i];
	}
	cr_assert_eq(sum, (uint64_t)NFA * (NFA - 1) / 2, "fetched values sum to %llu",
		     (unsigned long long)sum);
	post_rdma(&s, IBV_WR_RDMA_READ, 0, 8 * NFA, 0, 8);
	wait_ok(&s, 1, 5000);
	cr_assert_eq(v[NFA], NFA, "counter %llu", (unsigned long long)v[NFA]);
	cr_assert_eq(wt_peer_end(&peer), 0);
	side_close(&s);
}

/* A loopback pair on the survivor's device moves data as before. */
static void device_still_works(struct side *s)
{
	struct ibv_qp *q[2];
	struct wt_conn c = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1, .timeout = 14,
			     .retry_cnt = 7 };
	struct ibv_wc wc;

	for (int i = 0; i < 2; i++)
		q[i] = wt_create_qp(s->pd, s->cq, 16);
	for (int i = 0; i < 2; i++) {
		c.dqpn = q[!i]->qp_num;
		c.dlid = s->lid;
		cr_assert_eq(wt_connect(q[i], &c), 0);
	}
	memcpy(s->buf, "survived", 8);
	{
		struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)s->buf + 4096, s->mr->rkey },
		};

		dt_post(q[0], &wr);
	}
	cr_assert_eq(dt_poll(s->cq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 77);
	cr_assert(!memcmp(s->buf + 4096, "survived", 8));
	for (int i = 0; i < 2; i++)
		cr_expect_eq(ibv_destroy_qp(q[i]), 0);
}

/*
 * The peer is SIGKILLed in the middle of a stream of 1 MiB WRITEs or READs:
 * the survivor's QP completes the outstanding WQEs in bounded time, the
 * first with RETRY_EXC_ERR and the rest flushed, and the QP is in ERR.
 * Then its device serves a loopback pair and a new peer as before.
 */
static void peer_killed(enum ibv_wr_opcode op)
{
	enum { SZ = 8 * MIB, CHUNK = MIB, WIN = 16 };
	struct side s;
	struct wt_peer peer;
	struct ibv_wc wc[WIN];
	uint64_t posted = 0, done = 0;
	int status;
	bool err = false;

	side_open(&s, SZ);
	memset(s.buf, 0x5a, SZ);
	/*
	 * 4.096 us * 2^14 = 67 ms, 7 retries: about 0.5 s after the death,
	 * and a live peer that is slow for a while (a loaded machine,
	 * qemu-user: 17 ms and 3 retries were too few there) is not dead.
	 */
	side_connect(&s, &peer, SZ, 14, 7);
	while (done < 40) {
		int got;

		while (posted - done < WIN) {
			post_rdma(&s, op, posted, (posted % 8) * CHUNK, (posted % 8) * CHUNK,
				  CHUNK);
			posted++;
		}
		got = dt_poll(s.cq, wc, 1, 10000);
		cr_assert_eq(got, 1);
		cr_assert_eq(wc[0].status, IBV_WC_SUCCESS, "wr %llu of %llu: status %d",
			     (unsigned long long)wc[0].wr_id, (unsigned long long)posted,
			     wc[0].status);
		done++;
	}
	cr_assert_eq(kill(peer.pid, SIGKILL), 0);
	/*
	 * What was in flight may all have been acknowledged before the signal
	 * landed (a loaded machine descheduling us is enough): WQEs posted
	 * once the peer is surely gone cannot succeed.
	 */
	status = wt_peer_end(&peer);
	cr_assert_eq(status, -1, "the peer was killed");
	for (int i = 0; i < WIN; i++, posted++)
		post_rdma(&s, op, posted, (posted % 8) * CHUNK, (posted % 8) * CHUNK, CHUNK);
	while (done < posted) {
		int got = dt_poll(s.cq, wc, posted - done < WIN ? (int)(posted - done) : WIN,
				  30000);

		cr_assert_gt(got, 0, "%llu WQEs never completed after the peer died",
			     (unsigned long long)(posted - done));
		for (int i = 0; i < got; i++) {
			if (wc[i].status == IBV_WC_SUCCESS) {
				cr_assert(!err, "a success after the error");
				continue;
			}
			if (!err) {
				cr_assert_eq(wc[i].status, IBV_WC_RETRY_EXC_ERR, "status %d",
					     wc[i].status);
				err = true;
			} else {
				cr_assert_eq(wc[i].status, IBV_WC_WR_FLUSH_ERR, "status %d",
					     wc[i].status);
			}
		}
		done += (uint64_t)got;
	}
	cr_assert(err, "no error completion");
	cr_assert_eq(wt_qp_state(s.qp), IBV_QPS_ERR);
	cr_expect_eq(ibv_destroy_qp(s.qp), 0);
	s.qp = NULL;

	device_still_works(&s);

	/* a new peer (it may reuse the dead one's host slot) connects and works */
	side_connect(&s, &peer, SZ, 14, 7);
	post_rdma(&s, IBV_WR_RDMA_WRITE, 1, 0, 0, CHUNK);
	post_rdma(&s, IBV_WR_RDMA_READ, 2, CHUNK, 0, CHUNK);
	wait_ok(&s, 2, 10000);
	cr_assert(!memcmp(s.buf, s.buf + CHUNK, CHUNK));
	cr_assert_eq(wt_peer_end(&peer), 0);
	side_close(&s);
}

Test(dev_wire, peer_killed_mid_writes)
{
	peer_killed(IBV_WR_RDMA_WRITE);
}

Test(dev_wire, peer_killed_mid_reads)
{
	peer_killed(IBV_WR_RDMA_READ);
}

/*
 * A host whose listener takes no connection (stopped, or in a debugger: its
 * backlog full) is a link without credits, not a reason for this device to
 * stop. A UD SEND to it completes, the other QPs go on, and the packet
 * waits until the listener takes the connection. The device connected
 * blocking: its engine, holding emu_lock, waited in connect() for the peer,
 * and no QP of the process moved again.
 */
Test(dev_wire, a_peer_that_accepts_nothing_stops_nothing, .timeout = 30)
{
	const unsigned host = 1022;		/* the last but one: nobody runs there */
	const uint32_t qpn = host << 14 | 1;	/* QPN: host << 14 | index (emu/README.md) */
	struct dt_qp_opts o = { .type = IBV_QPT_UD };
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct sockaddr_un sa = wt_wire_addr(host);
	struct ibv_ah *far, *near;
	int lfd, fill[4], nfill = 0, c;
	uint8_t pkt[sizeof(struct dev_pkt) + 64];
	struct pollfd p;
	struct dt t;

	dt_setup_opts(&t, &o);
	memcpy(t.buf[0], "ADDRESS!", 8);
	unlink(sa.sun_path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	cr_assert_geq(lfd, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	cr_assert_eq(listen(lfd, 0), 0);
	/* fill its backlog: the next connect would wait */
	for (; nfill < 4; nfill++) {
		fill[nfill] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
		if (connect(fill[nfill], (struct sockaddr *)&sa, sizeof(sa))) {
			cr_assert_eq(errno, EAGAIN, "%s", strerror(errno));
			close(fill[nfill]);
			break;
		}
	}
	cr_assert(nfill > 0 && nfill < 4, "a backlog of 0 took %d connections", nfill);

	aa.dlid = (uint16_t)(host * 8);
	far = ibv_create_ah(t.pd, &aa);
	aa.dlid = t.lid;
	near = ibv_create_ah(t.pd, &aa);
	cr_assert(far && near);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = far, .remote_qpn = qpn, .remote_qkey = 0x11111111 },
		};

		dt_post(t.qp[0], &wr);
		cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
		/* the device goes on: a SEND to our own other QP is received */
		dt_post_recv(t.qp[1], 1, t.buf[1], 128, t.mr[1]->lkey);
		wr.wr.ud.ah = near;
		wr.wr.ud.remote_qpn = t.qp[1]->qp_num;
		dt_post(t.qp[0], &wr);
		cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
		cr_assert_eq(dt_poll1(t.cq[1]).status, IBV_WC_SUCCESS);
		cr_assert(!memcmp(t.buf[1] + 40, "ADDRESS!", 8));
	}

	/* the listener takes its connections: the held SEND arrives */
	for (int i = 0; i < nfill; i++) {
		c = accept(lfd, NULL, NULL);
		cr_assert_geq(c, 0);
		close(c);
		close(fill[i]);
	}
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "the device never connected again");
	c = accept(lfd, NULL, NULL);
	cr_assert_geq(c, 0);
	p = (struct pollfd){ .fd = c, .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 5000), 1, "the held SEND never came");
	cr_assert_eq(recv(c, pkt, sizeof(pkt), 0), (ssize_t)(sizeof(struct dev_pkt) + 8));
	cr_assert_eq(((struct dev_pkt *)pkt)->dst_qpn, qpn);
	cr_assert(!memcmp(pkt + sizeof(struct dev_pkt), "ADDRESS!", 8));
	close(c);
	close(lfd);
	unlink(sa.sun_path);
	cr_expect_eq(ibv_destroy_ah(far), 0);
	cr_expect_eq(ibv_destroy_ah(near), 0);
	dt_teardown(&t);
}
