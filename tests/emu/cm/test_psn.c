/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_psn.c - the starting PSNs rdma_init_qp_attr() hands an RC QP, seen
 * against a peer this test plays itself: it listens on the subnet's CM
 * socket of the port (emu/cm/link.c) and answers the REQ with a REP whose
 * PSN it chose, so it knows which side each number came from.
 *
 * The kernel's CM (drivers/infiniband/core/cm.c): ib_send_cm_req() sets
 * rq_psn from the REQ's starting PSN, cm_rep_handler() sq_psn from the
 * REP's; cma.c's rdma_init_qp_attr() then sets the RTR rq_psn to the id's
 * own seq_num, which is what its REQ (or REP) carried. So a QP receives
 * from the PSN it announced and sends from the one its peer announced.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include "cm_test.h"
#include "cm/msg.h"

#define FAKE_PEER_PORT	7291

/* the subnet's directory, found as emu/subnet/subnet.c finds it */
static void subnet_dir(char *buf, size_t len)
{
	const char *s = getenv("RFEMU_STATE_DIR"), *xdg = getenv("XDG_RUNTIME_DIR");

	if (s && *s)
		snprintf(buf, len, "%s", s);
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/rfemu", xdg);
	else
		snprintf(buf, len, "/tmp/rfemu-%u", (unsigned)getuid());
}

static void recv_msg(int s, struct cm_msg *m, int type)
{
	struct pollfd p = { .fd = s, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, CT_TIMEOUT_MS), 1, "no CM message (waiting for %d)", type);
	cr_assert_eq(recv(s, m, sizeof(*m), 0), (ssize_t)sizeof(*m));
	cr_assert_eq(m->type, type, "CM message %d, wanted %d", m->type, type);
}

Test(cm_psn, rtr_takes_the_own_starting_psn_rts_the_peers)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct cm_msg req, rep, rtu;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct rdma_cm_id *id;
	char dir[80];
	int l, s;

	subnet_dir(dir, sizeof(dir));
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/cm-%04x-%u", dir, RDMA_PS_TCP,
		 FAKE_PEER_PORT);
	unlink(un.sun_path);
	l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	cr_assert_geq(l, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&un, sizeof(un)), 0, "bind %s: %s",
		     un.sun_path, strerror(errno));
	cr_assert_eq(listen(l, 1), 0);

	cr_assert_not_null(ch);
	id = ct_resolved(ch, RDMA_PS_TCP, "127.0.0.1", FAKE_PEER_PORT);
	ct_create_qp(id, IBV_QPT_RC);
	cr_assert_eq(rdma_connect(id, &param), 0, "rdma_connect: %s", strerror(errno));

	struct pollfd p = { .fd = l, .events = POLLIN };

	cr_assert_eq(poll(&p, 1, CT_TIMEOUT_MS), 1, "the REQ's connection never came");
	s = accept(l, NULL, NULL);
	cr_assert_geq(s, 0);
	recv_msg(s, &req, CM_MSG_REQ);

	memset(&rep, 0, sizeof(rep));
	rep.type = CM_MSG_REP;
	rep.qpn = 0x4242;
	rep.psn = (req.psn + 0x10000) & 0xffffff;	/* surely not the REQ's */
	rep.responder_resources = 1;
	rep.initiator_depth = 1;
	rep.rnr_retry_count = 7;
	rep.path_mtu = req.path_mtu;
	rep.from = req.from;				/* a port that exists */
	cr_assert_eq(send(s, &rep, sizeof(rep), 0), (ssize_t)sizeof(rep));

	/* librdmacm moves the QP to RTR and RTS, then sends the RTU */
	ct_expect_ack(ch, RDMA_CM_EVENT_ESTABLISHED);
	recv_msg(s, &rtu, CM_MSG_RTU);
	cr_assert_eq(ibv_query_qp(id->qp, &a, IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |
				  IBV_QP_DEST_QPN, &ia), 0);
	cr_assert_eq(a.dest_qp_num, 0x4242);
	cr_assert_eq(a.rq_psn, req.psn, "RTR: the PSN this side's REQ announced");
	cr_assert_eq(a.sq_psn, rep.psn, "RTS: the PSN the peer's REP announced");

	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	close(s);
	close(l);
	unlink(un.sun_path);
}
