/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_transport.c - a QP takes only packets of its own transport.
 *
 * The upper three bits of a BTH opcode name the transport (IBA 9.2: RC,
 * UC, RD, UD, CNP, XRC); a packet of another transport than its
 * destination QP's is invalid for that QP and silently dropped (IBA 9.6).
 * Packets written into this host's wire socket from the RC peer's own
 * QPN and LID, at the expected PSN, differ only in their transport; a UC
 * QP made to talk to an RC QP crosswise sends real ones.  (DC requests
 * and a DCT's intake: test_dc.c.)
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */

#include <inttypes.h>

#include "wire_test.h"
#include "wire/packet.h"

TestSuite(dev_transport, .timeout = 60);

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* An 8-byte WRITE of "FORGED!!" from A to B at va, of transport tp. */
static void forge(int fd, struct dt *t, uint8_t tp, uint8_t flags, uint64_t va)
{
	union {
		struct dev_pkt	p;
		uint8_t		raw[sizeof(struct dev_pkt) + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.p.size = sizeof(u.raw);
	u.p.op = DOP_WRITE;
	u.p.tp = tp;
	u.p.flags = DPKT_FIRST | DPKT_LAST | flags;
	u.p.src_qpn = t->qp[0]->qp_num;
	u.p.dst_qpn = t->qp[1]->qp_num;
	u.p.psn = 0x100;
	u.p.slid = t->lid;
	u.p.dlid = t->lid;
	u.p.rkey = t->mr[1]->rkey;
	u.p.raddr = va;
	u.p.dma_len = 8;
	u.p.len = 8;
	memcpy(u.raw + sizeof(struct dev_pkt), "FORGED!!", 8);
	cr_assert_eq(send(fd, &u, sizeof(u.raw), 0), (ssize_t)sizeof(u.raw));
}

/* UC, RD, UD, XRC and DC-framed WRITEs to an RC QP: none lands; RC does. */
Test(dev_transport, rc_qp_takes_rc_only)
{
	static const struct {
		uint8_t tp, flags;
	} bad[] = {
		{ DTP_UC, 0 }, { DTP_RD, 0 }, { DTP_UD, 0 }, { DTP_CNP, 0 }, { DTP_XRC, 0 },
		{ DTP_RC, DPKT_DCETH },
	};
	const unsigned n = sizeof(bad) / sizeof(bad[0]);
	struct rfemu_dev_stats before;
	uint64_t va;
	struct dt t;
	int fd;

	dt_setup(&t);
	fd = wt_wire_socket(t.lid);
	va = (uintptr_t)t.buf[1];
	before = wt_stats();
	for (unsigned i = 0; i < n; i++)
		forge(fd, &t, bad[i].tp, bad[i].flags, va + 8 * i);
	for (int i = 0; i < 200 && wt_stats().drop_transport < before.drop_transport + n; i++)
		usleep(5000);
	cr_assert(zero(t.buf[1], DT_BUF), "a WRITE of another transport landed");
	cr_assert_eq(wt_stats().drop_transport, before.drop_transport + n);
	dt_poll_none(t.cq[1], 20);
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_RTS);

	/* control: the same packet as RC lands, so the others fell for their transport */
	forge(fd, &t, DTP_RC, 0, va + 256);
	for (int i = 0; i < 200 && memcmp(t.buf[1] + 256, "FORGED!!", 8); i++)
		usleep(5000);
	cr_assert(!memcmp(t.buf[1] + 256, "FORGED!!", 8), "the RC packet was lost");
	close(fd);
	dt_teardown(&t);
}

/* An 8-byte atomic request of opcode op from A to B's first word at psn, adding add. */
static void forge_atomic(int fd, struct dt *t, uint8_t op, uint32_t psn, uint64_t add)
{
	union {
		struct dev_pkt	p;
		uint8_t		raw[sizeof(struct dev_pkt)];
	} u;

	memset(&u, 0, sizeof(u));
	u.p.size = sizeof(u.raw);
	u.p.op = op;
	u.p.tp = DTP_RC;
	u.p.flags = DPKT_FIRST | DPKT_LAST;
	u.p.src_qpn = t->qp[0]->qp_num;
	u.p.dst_qpn = t->qp[1]->qp_num;
	u.p.psn = psn;
	u.p.slid = t->lid;
	u.p.dlid = t->lid;
	u.p.rkey = t->mr[1]->rkey;
	u.p.raddr = (uintptr_t)t->buf[1];
	u.p.dma_len = 8;
	u.p.atomic[0] = add;
	cr_assert_eq(send(fd, &u, sizeof(u.raw), 0), (ssize_t)sizeof(u.raw));
}

/*
 * A request of opcode 0, which no request has, framed as an 8-byte atomic
 * at an aligned address with an add operand: an invalid request, not an
 * atomic. The target stays zero and the responder QP goes to the error
 * state, as for any invalid request (the wire_packet fuzz target found it
 * executed as a fetch-and-add).
 */
Test(dev_transport, undefined_opcode_is_not_executed)
{
	struct dt t;
	int fd;

	dt_setup(&t);
	fd = wt_wire_socket(t.lid);
	forge_atomic(fd, &t, 0, 0x100, 0x1111);
	for (int i = 0; i < 200 && wt_qp_state(t.qp[1]) != IBV_QPS_ERR; i++)
		usleep(5000);
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_ERR, "opcode 0 was not refused");
	cr_assert(zero(t.buf[1], DT_BUF), "opcode 0 wrote the target");
	close(fd);
	dt_teardown(&t);
}

/*
 * A UC QP and an RC QP connected to each other: the UC SEND completes at
 * its sender (UC is unacknowledged) and never reaches the RC QP's receive.
 */
Test(dev_transport, uc_send_to_rc_qp_dropped)
{
	struct dt_qp_opts uc = { .type = IBV_QPT_UC };
	struct qpu_conn c = {
		.dlid = 0, .mtu = IBV_MTU_1024, .access = IBV_ACCESS_REMOTE_WRITE,
		.rq_psn = 0x100, .sq_psn = 0x100, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1, .max_rd_atomic = 1, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .reset_first = 1,
	};
	struct ibv_qp *u;
	struct ibv_wc wc;
	struct dt t;

	dt_setup(&t);
	u = dt_create_qp(&t, 0, &uc);
	c.dlid = t.lid;
	c.dqpn = t.qp[1]->qp_num;
	cr_assert_eq(qpu_bring_up(u, &c), 0);
	c.dqpn = u->qp_num;
	cr_assert_eq(qpu_bring_up(t.qp[1], &c), 0, "RC to the UC QP: %s", strerror(errno));
	dt_post_recv(t.qp[1], 1, t.buf[1], 64, t.mr[1]->lkey);

	memcpy(t.buf[0], "UC SEND!", 8);
	{
		struct ibv_sge s = { (uintptr_t)t.buf[0], 8, t.mr[0]->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};

		dt_post(u, &wr);
	}
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "status %d", wc.status);
	dt_poll_none(t.cq[1], 200);
	cr_assert(zero(t.buf[1], 64), "the UC SEND landed in the RC QP's receive");
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_RTS);
	cr_expect_eq(ibv_destroy_qp(u), 0);
	dt_teardown(&t);
}

/*
 * The PSN is the low 24 bits of its BTH word; the bits above it (AckReq
 * and reserved) are no part of it (IBA 9.2, 9.3). A fetch-and-add again
 * at the same PSN with those bits set is the same request: answered from
 * the responder's replay, never executed twice (IBA 9.9.2.2). The replay
 * compared all 32 bits and answered nothing (the wire_packet fuzz target
 * found the responder masking the PSN where its harness did not).
 */
Test(dev_transport, psn_bits_above_24_are_not_the_psn)
{
	static const uint32_t psn[] = { 0x100, 0x7f000100 };
	struct dt t;
	int fd;

	dt_setup(&t);
	fd = wt_wire_socket(t.lid);
	for (int k = 0; k < 2; k++) {
		struct rfemu_dev_stats before = wt_stats();
		uint64_t v;

		forge_atomic(fd, &t, DOP_FA, psn[k], 1);
		for (int i = 0; i < 200 && wt_stats().pkts_tx < before.pkts_tx + 1; i++)
			usleep(5000);
		memcpy(&v, t.buf[1], 8);
		cr_assert_eq(v, 1, "PSN %#x: executed %" PRIu64 " times", psn[k], v);
		cr_assert_eq(wt_stats().pkts_tx, before.pkts_tx + 1, "PSN %#x: not answered", psn[k]);
	}
	cr_assert_eq(wt_qp_state(t.qp[1]), IBV_QPS_RTS);
	close(fd);
	dt_teardown(&t);
}
