/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_spoof.c - a connected QP takes packets only from its peer.
 *
 * IBA header validation: an RC request (or response) whose source QPN or
 * source LID is not the QP's remote QPN and path is invalid for that QP and
 * silently dropped.  A third QP that names the victim as its destination,
 * and packets written straight into this host's wire socket with a forged
 * source, must leave the victim's memory untouched; the genuine peer goes
 * on working.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include "wire_test.h"
#include "wire/packet.h"

TestSuite(dev_spoof, .timeout = 60);

static const uint8_t evil[8] = { 'E', 'V', 'I', 'L', 'E', 'V', 'I', 'L' };

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A third QP connected to B (B is connected to A) writes to B's memory. */
Test(dev_spoof, third_qp_write_dropped)
{
	struct dt t;
	struct wt_conn c = { .dlid = 0, .max_rd_atomic = 1, .max_dest_rd_atomic = 1,
			     .timeout = 8, .retry_cnt = 2 };
	struct ibv_cq *cq;
	struct ibv_qp *x;
	struct ibv_wc wc;
	struct rfemu_dev_stats before;

	dt_setup(&t);
	cq = ibv_create_cq(t.ctx, 16, NULL, NULL, 0);
	cr_assert(cq);
	x = wt_create_qp(t.pd, cq, 16);
	c.dqpn = t.qp[1]->qp_num;
	c.dlid = t.lid;
	cr_assert_eq(wt_connect(x, &c), 0);
	before = wt_stats();

	memcpy(t.buf[0], evil, sizeof(evil));
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
		};

		dt_post(x, &wr);
	}
	/* never answered: the forger's QP runs out of retries */
	wc = dt_poll1(cq);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "status %d", wc.status);
	cr_assert(zero(t.buf[1], DT_BUF), "the forged WRITE landed");
	cr_assert_gt(wt_stats().drop_source, before.drop_source);
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_RTS, "the victim must not notice");

	/* the genuine connection is intact */
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)t.buf[1] + 64, t.mr[1]->rkey },
		};

		dt_post(t.qp[0], &wr);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert(!memcmp(t.buf[1] + 64, evil, 8));
	}
	cr_expect_eq(ibv_destroy_qp(x), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
	dt_teardown(&t);
}

/* An 8-byte RDMA WRITE of `evil` from src_qpn at slid to t->qp[1] at va. */
static void forge_write_grh(int fd, struct dt *t, uint32_t src_qpn, uint16_t slid,
			    uint32_t psn, uint64_t va, const union ibv_gid *sgid)
{
	union {
		struct dev_pkt	p;
		uint8_t		raw[sizeof(struct dev_pkt) + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.p.size = sizeof(u.raw);
	u.p.op = DOP_WRITE;
	u.p.flags = DPKT_FIRST | DPKT_LAST;
	u.p.src_qpn = src_qpn;
	u.p.dst_qpn = t->qp[1]->qp_num;
	u.p.psn = psn;
	u.p.slid = slid;
	u.p.dlid = t->lid;	/* to B's port: the forgery is refused for its source alone */
	u.p.rkey = t->mr[1]->rkey;
	u.p.raddr = va;
	u.p.dma_len = 8;
	u.p.len = 8;
	if (sgid) {
		union ibv_gid dgid;

		cr_assert_eq(ibv_query_gid(t->ctx, 1, 0, &dgid), 0);
		u.p.flags |= DPKT_GRH;
		memcpy(u.p.sgid, sgid->raw, 16);
		memcpy(u.p.dgid, dgid.raw, 16);
	}
	memcpy(u.raw + sizeof(struct dev_pkt), evil, 8);
	cr_assert_eq(send(fd, &u, sizeof(u.raw), 0), (ssize_t)sizeof(u.raw));
}

static void forge_write(int fd, struct dt *t, uint32_t src_qpn, uint16_t slid,
			uint32_t psn, uint64_t va)
{
	forge_write_grh(fd, t, src_qpn, slid, psn, va, NULL);
}

/* The expected PSN, the right rkey, a forged source: dropped, counted. */
Test(dev_spoof, forged_packets_dropped)
{
	struct dt t;
	struct ibv_wc wc;
	struct rfemu_dev_stats before;
	uint64_t va;
	int fd;

	dt_setup(&t);
	fd = wt_wire_socket(t.lid);
	va = (uintptr_t)t.buf[1];
	before = wt_stats();

	/* A's QPN from another LID; the right LID with another QPN */
	forge_write(fd, &t, t.qp[0]->qp_num, (uint16_t)(t.lid + 8), 0x100, va);
	forge_write(fd, &t, t.qp[0]->qp_num + 1, t.lid, 0x100, va + 8);
	forge_write(fd, &t, t.qp[1]->qp_num, t.lid, 0x100, va + 16);
	for (int i = 0; i < 200 && wt_stats().drop_source < before.drop_source + 3; i++)
		usleep(5000);
	cr_assert(zero(t.buf[1], DT_BUF), "a forged WRITE landed");
	cr_assert_eq(wt_stats().drop_source, before.drop_source + 3);
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_RTS);

	/* the genuine peer still works, at the PSN the forgeries claimed */
	memcpy(t.buf[0], "GENUINE!", 8);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { va + 64, t.mr[1]->rkey },
		};

		dt_post(t.qp[0], &wr);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert(!memcmp(t.buf[1] + 64, "GENUINE!", 8));
	}

	/*
	 * Control: the same packet with A's true source lands, so the
	 * forgeries above were refused for their source alone.
	 */
	forge_write(fd, &t, t.qp[0]->qp_num, t.lid, 0x101, va + 128);
	for (int i = 0; i < 200 && memcmp(t.buf[1] + 128, evil, 8); i++)
		usleep(5000);
	cr_assert(!memcmp(t.buf[1] + 128, evil, 8), "a well-formed packet from A was lost");
	close(fd);
	dt_teardown(&t);
}

/* A NAK "remote access error" for A's request at psn, from src_qpn. */
static void forge_nak(int fd, struct dt *t, uint32_t src_qpn)
{
	union {
		struct dev_pkt	p;
		uint8_t		raw[sizeof(struct dev_pkt)];
	} u;

	memset(&u, 0, sizeof(u));
	u.p.size = sizeof(u.raw);
	u.p.op = DOP_NAK;
	u.p.nak = DNAK_REM_ACCESS;
	u.p.src_qpn = src_qpn;
	u.p.dst_qpn = t->qp[0]->qp_num;
	u.p.psn = 0x100;
	u.p.slid = t->lid;
	u.p.dlid = t->lid;
	cr_assert_eq(send(fd, &u, sizeof(u.raw), 0), (ssize_t)sizeof(u.raw));
}

/*
 * Forged responses: while A's WRITE waits for an answer B cannot give (B
 * is in ERR and drops it), a stranger's error NAK changes nothing; the same
 * NAK from B's QPN and LID is taken (the control).
 */
Test(dev_spoof, forged_response_dropped)
{
	struct dt t;
	struct rfemu_dev_stats before;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int fd;

	dt_setup(&t);	/* timeout 14, retry 7: about 0.5 s before retry exceeded */
	cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_STATE), 0);
	fd = wt_wire_socket(t.lid);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
		};

		dt_post(t.qp[0], &wr);
	}
	usleep(10000);
	before = wt_stats();
	forge_nak(fd, &t, t.qp[1]->qp_num + 1);
	for (int i = 0; i < 200 && wt_stats().drop_source == before.drop_source; i++)
		usleep(1000);
	dt_poll_none(t.cq[0], 50);
	cr_assert_eq(wt_qp_state(t.qp[0]), IBV_QPS_RTS);
	cr_assert_eq(wt_stats().drop_source, before.drop_source + 1);

	forge_nak(fd, &t, t.qp[1]->qp_num);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status %d", wc.status);
	close(fd);
	dt_teardown(&t);
}

/* A one-packet READ response carrying 8 bytes, for A's request at 0x100. */
static void forge_read_resp(int fd, struct dt *t, uint32_t src_qpn)
{
	union {
		struct dev_pkt	p;
		uint8_t		raw[sizeof(struct dev_pkt) + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.p.size = sizeof(u.raw);
	u.p.op = DOP_READ_RESP;
	u.p.flags = DPKT_FIRST | DPKT_LAST;
	u.p.src_qpn = src_qpn;
	u.p.dst_qpn = t->qp[0]->qp_num;
	u.p.psn = 0x100;
	u.p.slid = t->lid;
	u.p.dlid = t->lid;
	u.p.len = 8;
	memcpy(u.raw + sizeof(struct dev_pkt), evil, 8);
	cr_assert_eq(send(fd, &u, sizeof(u.raw), 0), (ssize_t)sizeof(u.raw));
}

/*
 * READ data from the true peer in answer to A's WRITE is a bad response:
 * IBV_WC_BAD_RESP_ERR with the vendor syndrome of device/cqe.c, and A's
 * memory is untouched (the data is not taken anywhere).
 */
Test(dev_spoof, read_response_to_a_write)
{
	struct dt t;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	int fd;

	dt_setup(&t);
	cr_assert_eq(ibv_modify_qp(t.qp[1], &a, IBV_QP_STATE), 0);	/* B answers nothing */
	fd = wt_wire_socket(t.lid);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)t.buf[1], t.mr[1]->rkey },
		};

		dt_post(t.qp[0], &wr);
	}
	usleep(10000);
	forge_read_resp(fd, &t, t.qp[1]->qp_num);
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_BAD_RESP_ERR, "status %d", wc.status);
	cr_assert_eq(wc.vendor_err, 0x8c);
	cr_assert_eq(wt_qp_state(t.qp[0]), IBV_QPS_ERR);
	cr_assert(zero(t.buf[0], DT_BUF), "the response's data landed");
	close(fd);
	dt_teardown(&t);
}

/*
 * A global path (GRH): the source GID must be the path's DGID too.  The
 * right QPN and LID with another SGID, or with no GRH at all, are dropped;
 * the genuine peer, whose packets carry its GID, goes on working.
 */
Test(dev_spoof, forged_gid_dropped)
{
	struct dt t;
	struct ibv_port_attr pa;
	union ibv_gid gid, other;
	struct wt_conn c = { .max_rd_atomic = 1, .max_dest_rd_atomic = 1, .timeout = 14,
			     .retry_cnt = 7, .dgid = &gid };
	struct rfemu_dev_stats before;
	struct ibv_wc wc;
	uint64_t va;
	int fd;

	/* dt_setup's pair, then two QPs of our own on a global path */
	dt_setup(&t);
	cr_assert_eq(ibv_query_port(t.ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(t.ctx, 1, 0, &gid), 0);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(ibv_destroy_qp(t.qp[i]), 0);
	for (int i = 0; i < 2; i++)
		t.qp[i] = wt_create_qp(t.pd, t.cq[i], 16);
	for (int i = 0; i < 2; i++) {
		c.dqpn = t.qp[!i]->qp_num;
		c.dlid = t.lid;
		cr_assert_eq(wt_connect(t.qp[i], &c), 0, "connect: %s", strerror(errno));
	}
	other = gid;
	other.raw[15] ^= 0x40;
	fd = wt_wire_socket(t.lid);
	va = (uintptr_t)t.buf[1];
	before = wt_stats();
	forge_write_grh(fd, &t, t.qp[0]->qp_num, t.lid, 0x100, va, &other);
	forge_write(fd, &t, t.qp[0]->qp_num, t.lid, 0x100, va + 8);
	for (int i = 0; i < 200 && wt_stats().drop_source < before.drop_source + 2; i++)
		usleep(5000);
	cr_assert(zero(t.buf[1], DT_BUF), "a forged WRITE landed");
	cr_assert_eq(wt_stats().drop_source, before.drop_source + 2);

	memcpy(t.buf[0], "GLOBAL!!", 8);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { va + 64, t.mr[1]->rkey },
		};

		dt_post(t.qp[0], &wr);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert(!memcmp(t.buf[1] + 64, "GLOBAL!!", 8));
	}
	/* responses carry the GRH as well: READ and atomic answers are taken */
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0] + 8, 8, t.mr[0]->lkey };
		struct ibv_send_wr wr[2] = {
			{ .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
			  .wr.rdma = { va + 64, t.mr[1]->rkey }, .next = &wr[1] },
			{ .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			  .send_flags = IBV_SEND_SIGNALED,
			  .wr.atomic = { va + 256, 5, 0, t.mr[1]->rkey } },
		};

		dt_post(t.qp[0], wr);
		wc = dt_poll1(t.cq[0]);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
		cr_assert_eq(*(uint64_t *)(t.buf[1] + 256), 5);
	}
	/* control: the forged packet with the true SGID lands (the WRITE, READ and atomic used 3 PSNs) */
	forge_write_grh(fd, &t, t.qp[0]->qp_num, t.lid, 0x103, va + 128, &gid);
	for (int i = 0; i < 200 && memcmp(t.buf[1] + 128, evil, 8); i++)
		usleep(5000);
	cr_assert(!memcmp(t.buf[1] + 128, evil, 8), "a well-formed packet from A was lost");
	close(fd);
	dt_teardown(&t);
}
