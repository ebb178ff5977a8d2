/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_mcast.c - UD multicast: one copy to every attached QP of every host,
 * none to a QP that is not attached, with the Q_Key check and the GRH on
 * receive; loopback blocked by IBV_QP_CREATE_BLOCK_SELF_MCAST_LB; members
 * in other processes (helper_mcast), also after one of them was killed.
 * The whole binary runs again on RoCE (dev_mcast::on_roce).
 */
#include <fcntl.h>

#include "wire_test.h"

enum { NQP = 4, SLOT = 256, MLID = 0xc011, QKEY = 0x11111111 };

static const union ibv_gid mgid = {
	.raw = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [12] = 0xde, 0xad, 0x00, 0x01 }
};

static struct {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq[NQP];
	struct ibv_qp		*qp[NQP];	/* [0] sends; [1], [2], [3] may listen */
	struct ibv_mr		*mr;
	uint8_t			*buf;		/* SLOT bytes per receive, per QP 16 */
	bool			roce;
	uint16_t		lid;
	union ibv_gid		gid;
} m;

static struct ibv_qp *ud_qp(struct ibv_cq *cq, uint32_t create_flags, uint32_t qkey)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = m.pd,
		.create_flags = create_flags,
	};
	const struct qpu_conn c = { .qkey = qkey };
	struct ibv_qp *qp = ibv_create_qp_ex(m.ctx, &ia);

	cr_assert(qp, "ibv_create_qp_ex: %s", strerror(errno));
	cr_assert_eq(qpu_bring_up(qp, &c), 0);
	return qp;
}

static void setup(void)
{
	struct ibv_port_attr pa;

	memset(&m, 0, sizeof(m));
	m.ctx = et_open();
	cr_assert_eq(ibv_query_port(m.ctx, 1, &pa), 0);
	m.roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	m.lid = pa.lid;
	cr_assert_eq(ibv_query_gid(m.ctx, 1, 0, &m.gid), 0);
	m.pd = ibv_alloc_pd(m.ctx);
	cr_assert(m.pd);
	m.buf = aligned_alloc(4096, NQP * 16 * SLOT);
	cr_assert(m.buf);
	memset(m.buf, 0, NQP * 16 * SLOT);
	m.mr = ibv_reg_mr(m.pd, m.buf, NQP * 16 * SLOT, IBV_ACCESS_LOCAL_WRITE);
	cr_assert(m.mr);
	for (int i = 0; i < NQP; i++) {
		m.cq[i] = ibv_create_cq(m.ctx, 64, NULL, NULL, 0);
		cr_assert(m.cq[i]);
		m.qp[i] = ud_qp(m.cq[i], 0, QKEY);
	}
}

static void teardown(void)
{
	for (int i = 0; i < NQP; i++) {
		cr_expect_eq(ibv_destroy_qp(m.qp[i]), 0);
		cr_expect_eq(ibv_destroy_cq(m.cq[i]), 0);
	}
	cr_expect_eq(ibv_dereg_mr(m.mr), 0);
	cr_expect_eq(ibv_dealloc_pd(m.pd), 0);
	cr_expect_eq(ibv_close_device(m.ctx), 0);
	free(m.buf);
}

TestSuite(dev_mcast, .init = setup, .fini = teardown, .timeout = 60);

static uint8_t *slot(int qp, unsigned i)
{
	return m.buf + ((unsigned)qp * 16 + i) * SLOT;
}

static void post_recv(int qp, unsigned i)
{
	dt_post_recv(m.qp[qp], i, slot(qp, i), SLOT, m.mr->lkey);
}

/* The group's address: the MLID with the MGID in a GRH (always on RoCE), or the MLID alone. */
static struct ibv_ah *group_ah(bool grh)
{
	struct ibv_ah_attr aa = { .dlid = MLID, .port_num = 1, .sl = 2 };
	struct ibv_ah *ah;

	if (grh || m.roce) {
		aa.is_global = 1;
		aa.grh.dgid = mgid;
		aa.grh.hop_limit = 1;
	}
	ah = ibv_create_ah(m.pd, &aa);
	cr_assert(ah, "ibv_create_ah: %s", strerror(errno));
	return ah;
}

/* Send text from QP `from` to (ah, qpn) with qkey; its send completes. */
static void send_text(int from, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
		      const char *text)
{
	uint8_t *src = slot(from, 15);
	struct ibv_sge s = { (uintptr_t)src, (uint32_t)strlen(text), m.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	};
	struct ibv_wc wc;

	memcpy(src, text, strlen(text));
	dt_post(m.qp[from], &wr);
	wc = dt_poll1(m.cq[from]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_SEND);
}

/* QP qp received text from QP 0 into receive i, with the GRH if grh. */
static void expect_text(int qp, unsigned i, const char *text, bool grh)
{
	struct ibv_wc wc = dt_poll1(m.cq[qp]);
	size_t n = strlen(text);

	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "QP %d: %s", qp, ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.wr_id, i);
	cr_assert_eq(wc.byte_len, 40 + n, "byte_len counts the 40 GRH bytes");
	cr_assert_eq(wc.src_qp, m.qp[0]->qp_num);
	cr_assert_eq(memcmp(slot(qp, i) + 40, text, n), 0);
	if (!grh && !m.roce) {
		cr_assert_eq(wc.wc_flags & IBV_WC_GRH, 0);
		cr_assert_eq(wc.slid, m.lid);
		cr_assert_eq(wc.sl, 2);
		return;
	}
	cr_assert(wc.wc_flags & IBV_WC_GRH);
	cr_assert_eq(memcmp(slot(qp, i) + 24, mgid.raw, 16), 0, "GRH DGID is the MGID");
	cr_assert_eq(memcmp(slot(qp, i) + 8, m.gid.raw, 16), 0, "GRH SGID is the sender's");
}

Test(dev_mcast, every_attached_qp_once_none_other)
{
	struct ibv_ah *ah = group_ah(true);

	for (int q = 0; q < NQP; q++)
		post_recv(q, 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[2], &mgid, MLID), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[2], &mgid, MLID), 0, "twice: still one copy");
	send_text(0, ah, 0xffffff, QKEY, "to the group");
	expect_text(1, 0, "to the group", true);
	expect_text(2, 0, "to the group", true);
	dt_poll_none(m.cq[2], 100);
	dt_poll_none(m.cq[3], 100);	/* not attached */
	dt_poll_none(m.cq[0], 1);	/* the sender is not attached either */

	/* detached: the group reaches QP 2 only */
	post_recv(1, 1);
	post_recv(2, 1);
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	send_text(0, ah, 0xffffff, QKEY, "after detach");
	expect_text(2, 1, "after detach", true);
	dt_poll_none(m.cq[1], 100);
	cr_assert_eq(ibv_detach_mcast(m.qp[2], &mgid, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

Test(dev_mcast, qkey_checked_per_qp)
{
	struct ibv_ah *ah = group_ah(true);
	struct ibv_qp_attr a = { .qkey = 0x22222222 };

	post_recv(1, 0);
	post_recv(2, 0);
	cr_assert_eq(ibv_modify_qp(m.qp[2], &a, IBV_QP_QKEY), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[2], &mgid, MLID), 0);
	send_text(0, ah, 0xffffff, QKEY, "qkey");
	expect_text(1, 0, "qkey", true);
	dt_poll_none(m.cq[2], 100);	/* its Q_Key differs: dropped */
	/* a Q_Key with the top bit set is the sender's own (0x11111111) */
	post_recv(1, 1);
	send_text(0, ah, 0xffffff, 0x80000000u, "own qkey");
	expect_text(1, 1, "own qkey", true);
	dt_poll_none(m.cq[2], 50);
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_detach_mcast(m.qp[2], &mgid, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

Test(dev_mcast, by_mlid_without_grh)
{
	struct ibv_ah *ah;

	if (m.roce)
		cr_skip_test("RoCE has no LIDs: the group is its MGID");
	ah = group_ah(false);
	post_recv(1, 0);
	post_recv(3, 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[3], &mgid, MLID + 1), 0);
	send_text(0, ah, 0xffffff, QKEY, "mlid");
	expect_text(1, 0, "mlid", false);
	dt_poll_none(m.cq[3], 100);	/* another MLID */
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_detach_mcast(m.qp[3], &mgid, MLID + 1), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* Only a SEND to DestQP 0xFFFFFF at a multicast address is multicast (IBA 9.2). */
Test(dev_mcast, invalid_addressing_dropped)
{
	struct ibv_ah *ah = group_ah(true);
	struct ibv_ah_attr ua = { .dlid = m.lid, .port_num = 1 };
	struct ibv_ah *uah;

	if (m.roce) {
		ua.is_global = 1;
		ua.grh.dgid = m.gid;
	}
	uah = ibv_create_ah(m.pd, &ua);
	cr_assert(uah);
	post_recv(1, 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	send_text(0, ah, m.qp[1]->qp_num, QKEY, "group address, unicast QPN");
	send_text(0, uah, 0xffffff, QKEY, "unicast address, QPN 0xFFFFFF");
	dt_poll_none(m.cq[1], 150);
	send_text(0, ah, 0xffffff, QKEY, "right");
	expect_text(1, 0, "right", true);
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(uah), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* The sender hears itself when attached, unless it blocks multicast loopback. */
Test(dev_mcast, self_and_blocked_loopback)
{
	struct ibv_ah *ah = group_ah(true);
	struct ibv_qp *plain = m.qp[0];

	post_recv(0, 0);
	post_recv(1, 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[0], &mgid, MLID), 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	send_text(0, ah, 0xffffff, QKEY, "loop");
	expect_text(1, 0, "loop", true);
	expect_text(0, 0, "loop", true);
	cr_assert_eq(ibv_detach_mcast(m.qp[0], &mgid, MLID), 0);

	/* QP 0 again, blocking loopback: no QP of this port hears it */
	m.qp[0] = ud_qp(m.cq[0], IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, QKEY);
	post_recv(0, 1);
	post_recv(1, 1);
	cr_assert_eq(ibv_attach_mcast(m.qp[0], &mgid, MLID), 0);
	send_text(0, ah, 0xffffff, QKEY, "blocked");
	dt_poll_none(m.cq[1], 150);
	dt_poll_none(m.cq[0], 1);
	/* the QP still hears others */
	{
		struct ibv_qp *blocked = m.qp[0];

		m.qp[0] = plain;
		send_text(0, ah, 0xffffff, QKEY, "others");
		expect_text(1, 1, "others", true);
		m.qp[0] = blocked;
		{
			struct ibv_wc wc = dt_poll1(m.cq[0]);

			cr_assert_eq(wc.status, IBV_WC_SUCCESS);
			cr_assert_eq(wc.src_qp, plain->qp_num);
			cr_assert_eq(wc.opcode, IBV_WC_RECV);
		}
		cr_assert_eq(ibv_detach_mcast(blocked, &mgid, MLID), 0);
		cr_assert_eq(ibv_destroy_qp(blocked), 0);
		m.qp[0] = plain;
	}
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* ---- other hosts ------------------------------------------------------------ */

static void peer_start(struct wt_peer *p, const char *mode)
{
	char hex[33], mlid[16], qkey[16], line[128];
	char *argv[] = { "helper_mcast", hex, mlid, qkey, (char *)mode, NULL };

	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", mgid.raw[i]);
	snprintf(mlid, sizeof(mlid), "%u", MLID);
	snprintf(qkey, sizeof(qkey), "%u", QKEY);
	wt_peer_start(p, argv);
	/* peers started later must not hold this one's stdin open */
	fcntl(fileno(p->in), F_SETFD, FD_CLOEXEC);
	fcntl(fileno(p->out), F_SETFD, FD_CLOEXEC);
	wt_peer_line(p, line, sizeof(line));	/* its QPN */
	wt_peer_line(p, line, sizeof(line));
	cr_assert_str_eq(line, "ready");
}

/* The peer got exactly `want` messages, each "text" with the MGID in its GRH. */
static void peer_expect(struct wt_peer *p, unsigned want, const char *text)
{
	char line[256], cmd[64], expect[128];
	unsigned got = 0;

	snprintf(cmd, sizeof(cmd), "recv %u %u", want + 1, want ? 1500u : 300u);
	wt_peer_say(p, cmd);
	snprintf(expect, sizeof(expect), "msg %zu %u 1 1 %s", 40 + strlen(text),
		 m.qp[0]->qp_num, text);
	for (;;) {
		wt_peer_line(p, line, sizeof(line));
		if (!strncmp(line, "end ", 4))
			break;
		cr_assert_str_eq(line, expect);
		got++;
	}
	cr_assert_eq(got, want, "the peer got %u copies, not %u", got, want);
}

Test(dev_mcast, other_hosts)
{
	struct wt_peer a, b, none;
	struct ibv_ah *ah = group_ah(true);

	peer_start(&a, "attach");
	peer_start(&b, "attach");
	peer_start(&none, "none");
	post_recv(1, 0);
	cr_assert_eq(ibv_attach_mcast(m.qp[1], &mgid, MLID), 0);
	send_text(0, ah, 0xffffff, QKEY, "hello hosts");
	expect_text(1, 0, "hello hosts", true);
	peer_expect(&a, 1, "hello hosts");
	peer_expect(&b, 1, "hello hosts");
	peer_expect(&none, 0, "");
	/* a member that left (exits, detaching) gets nothing more */
	cr_assert_eq(wt_peer_end(&b), 0);
	post_recv(1, 1);
	send_text(0, ah, 0xffffff, QKEY, "two left");
	expect_text(1, 1, "two left", true);
	peer_expect(&a, 1, "two left");
	cr_assert_eq(wt_peer_end(&a), 0);
	cr_assert_eq(wt_peer_end(&none), 0);
	cr_assert_eq(ibv_detach_mcast(m.qp[1], &mgid, MLID), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* A member killed without detaching is forgotten: no packet goes to its host. */
Test(dev_mcast, killed_member_forgotten)
{
	struct wt_peer a, k;
	struct ibv_ah *ah = group_ah(true);
	struct rfemu_dev_stats before, after;
	int status;

	peer_start(&a, "attach");
	peer_start(&k, "attach");
	send_text(0, ah, 0xffffff, QKEY, "both");
	peer_expect(&a, 1, "both");
	peer_expect(&k, 1, "both");
	kill(k.pid, SIGKILL);
	cr_assert_eq(waitpid(k.pid, &status, 0), k.pid);
	fclose(k.in);
	fclose(k.out);
	before = wt_stats();
	send_text(0, ah, 0xffffff, QKEY, "one");
	peer_expect(&a, 1, "one");
	after = wt_stats();
	cr_assert_eq(after.pkts_tx - before.pkts_tx, 1, "one copy, to the live member only");
	cr_assert_eq(after.drop_link, before.drop_link);
	cr_assert_eq(wt_peer_end(&a), 0);
	cr_assert_eq(ibv_destroy_ah(ah), 0);
}

/* Everything above again on RoCE v2: this binary with RFEMU_LINK_LAYER=eth. */
Test(dev_mcast, on_roce, .timeout = 120)
{
	if (m.roce)
		cr_skip_test("already on RoCE");
	test_rerun_on_roce("dev_mcast/*");
}
