/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The server's shape (issue 30): one CQ, one SRQ, one QP per client, and
 * a listener that stays open for every client, built from the helpers
 * alone: rf_tcp_listen()/rf_tcp_accept(), rf_srq_create_ibv() and
 * rf_srq_post_one(), rf_ep_connect_qp() on QPs of the program's own with
 * several regions in one rf_ep_info, rf_ep_ready(); and beside it the
 * smaller helpers: rf_wc_status_str(), rf_cq_wait_event_ibv(), the
 * exchange's version check, the CQ's QP limit. Servers in threads,
 * clients here, over TCP on 127.0.0.1 (e2e_tcp_port() 10 to 19).
 */
#include <pthread.h>
#include <sys/socket.h>

#include <rdmafast/connect.h>

#include "e2e.h"

/* ---- rf_wc_status_str() -------------------------------------------------- */

Test(e2e_status, every_status_has_words_of_its_own)
{
	static const unsigned int all[] = {
		RF_WC_SUCCESS, RF_WC_LOC_LEN_ERR, RF_WC_LOC_QP_OP_ERR, RF_WC_LOC_EEC_OP_ERR,
		RF_WC_LOC_PROT_ERR, RF_WC_WR_FLUSH_ERR, RF_WC_MW_BIND_ERR, RF_WC_BAD_RESP_ERR,
		RF_WC_LOC_ACCESS_ERR, RF_WC_REM_INV_REQ_ERR, RF_WC_REM_ACCESS_ERR,
		RF_WC_REM_OP_ERR, RF_WC_RETRY_EXC_ERR, RF_WC_RNR_RETRY_EXC_ERR,
		RF_WC_REM_ABORT_ERR, RF_WC_GENERAL_ERR,
	};
	const char *unknown = rf_wc_status_str(0xff);
	size_t i, j;

	cr_assert_not_null(unknown);
	cr_assert_str_eq(rf_wc_status_str(14), unknown);	/* not an rf_wc_status */
	cr_assert_str_eq(rf_wc_status_str(~0U), unknown);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *s = rf_wc_status_str(all[i]);

		cr_assert(s && *s && strcmp(s, unknown), "status %u has no words", all[i]);
		for (j = 0; j < i; j++)
			cr_assert_str_neq(s, rf_wc_status_str(all[j]), "%u and %u", all[i], all[j]);
	}
	cr_assert_str_eq(rf_wc_status_str(RF_WC_SUCCESS), "success");
}

Test(e2e_status, an_error_completion_names_itself)
{
	struct e2e_opts o;
	struct e2e e;
	struct rf_wc wc;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	/* a key the peer never had: a remote access error */
	cr_assert_eq(rf_sq_post_write(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				      e.b.mr->rkey ^ 0x5500, e2e_addr(&e.b, 0),
				      RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	cr_assert_eq(wc.status, RF_WC_REM_ACCESS_ERR, "%s", rf_wc_status_str(wc.status));
	cr_assert_str_eq(rf_wc_status_str(wc.status), "remote access error");
	e2e_close(&e);
}

/* ---- rf_cq_wait_event_ibv() --------------------------------------------- */

Test(e2e_event, the_wait_gives_up_after_ms_and_takes_an_event_that_comes)
{
	struct e2e_opts o;
	struct e2e e;
	struct rf_wc wc;
	long t0, dt;
	int rc;

	memset(&o, 0, sizeof(o));
	o.with_channel = 1;	/* b's CQ reports to e.ch */
	e2e_open(&e, &o);

	rf_cq_arm(&e.b.cq, 0);
	cr_assert_eq(rf_cq_wait_event_ibv(&e.b.cq, e.ch, 0), -ETIMEDOUT, "0: no wait");
	t0 = e2e_now_ms();
	rc = rf_cq_wait_event_ibv(&e.b.cq, e.ch, 150);
	dt = e2e_now_ms() - t0;
	cr_assert_eq(rc, -ETIMEDOUT, "nothing completed, yet %d", rc);
	cr_assert(dt >= 140 && dt < 5000, "gave up after %ld ms, not 150", dt);

	/* a receive completes on b: the armed CQ's event, within the bound */
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 7), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				     RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
	e2e_wait(&e.a.cq, &wc, 1);
	rc = rf_cq_wait_event_ibv(&e.b.cq, e.ch, E2E_TIMEOUT_MS);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.wr_id, 7);

	/* armed again with the counted sequence: -1 waits as long as it takes */
	rf_cq_arm(&e.b.cq, 0);
	cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey, e2e_addr(&e.b, 0), 64, 8), 0);
	rf_rq_ring(&e.b.qp.rq);
	cr_assert_eq(rf_sq_post_send(&e.a.qp.sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
				     RF_SEND_SIGNALED | RF_SEND_RING, 2), 0);
	cr_assert_eq(rf_cq_wait_event_ibv(&e.b.cq, e.ch, -1), 0);
	e2e_wait(&e.b.cq, &wc, 1);
	cr_assert_eq(wc.wr_id, 8);
	e2e_wait(&e.a.cq, &wc, 1);
	e2e_close(&e);
}

/* ---- rf_srq_create_ibv(), rf_srq_post_one(), rf_srq_destroy_ibv() -------- */

Test(e2e_srq_helpers, create_fill_and_destroy)
{
	struct e2e_opts o;
	struct e2e e;
	struct rf_srq srq;
	struct ibv_srq *ibsrq = NULL;
	uint32_t n = 0;
	int rc;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	rc = rf_srq_create_ibv(&srq, &ibsrq, e.pd, 16, 0);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	cr_assert_not_null(ibsrq);
	cr_assert_geq(srq.wqe_cnt, 17, "16 receives and the sentinel: %u", srq.wqe_cnt);
	cr_assert_geq(srq.max_sge, 1);
	while (!rf_srq_post_one(&srq, e.a.mr->lkey, e2e_addr(&e.a, 64 * n), 64, n))
		n++;
	cr_assert_eq(n, srq.wqe_cnt - 1, "%u posted of %u", n, srq.wqe_cnt - 1);
	cr_assert_eq(rf_srq_post_one(&srq, e.a.mr->lkey, e2e_addr(&e.a, 0), 64, 0), -ENOSPC);
	rf_srq_ring(&srq);
	cr_assert_eq(rf_srq_destroy_ibv(&srq, ibsrq), 0);
	cr_assert_null(srq.wr_id);
	e2e_close(&e);
}

/* ---- The listener -------------------------------------------------------- */

Test(e2e_listen, the_listener_stays_open_and_each_wait_is_bounded)
{
	uint16_t port = e2e_tcp_port(10);
	int lfd = rf_tcp_listen(port, 0), c[3], s[3], i;
	long t0;

	cr_assert_geq(lfd, 0, "listen: %s", strerror(-lfd));
	t0 = e2e_now_ms();
	cr_assert_eq(rf_tcp_accept(lfd, 100), -ETIMEDOUT);
	cr_assert_lt(e2e_now_ms() - t0, 5000);
	/* three clients connect at once, without retries: they wait in the backlog */
	for (i = 0; i < 3; i++) {
		c[i] = rf_tcp_connect("127.0.0.1", port, 1000);
		cr_assert_geq(c[i], 0, "client %d: %s", i, strerror(-c[i]));
	}
	for (i = 0; i < 3; i++) {
		uint8_t b = (uint8_t)('a' + i);

		s[i] = rf_tcp_accept(lfd, 1000);
		cr_assert_geq(s[i], 0, "accept %d: %s", i, strerror(-s[i]));
		cr_assert_eq(rf_tcp_xfer(c[i], &b, 1, 0, 1000), 0);
		b = 0;
		cr_assert_eq(rf_tcp_xfer(s[i], &b, 1, 1, 1000), 0);
		cr_assert_eq(b, 'a' + i, "accepted out of order");
	}
	for (i = 0; i < 3; i++) {
		close(c[i]);
		close(s[i]);
	}
	/* the port is taken while the listener is open */
	cr_assert_eq(rf_tcp_listen(port, 0), -EADDRINUSE);
	close(lfd);
}

/* ---- The exchange -------------------------------------------------------- */

struct xchg {
	int fd;
	struct rf_ep_info mine, theirs;
	int ret;
};

static void *xchg_main(void *arg)
{
	struct xchg *x = (struct xchg *)arg;

	x->ret = rf_ep_exchange(x->fd, &x->mine, &x->theirs, 5000);
	return NULL;
}

Test(e2e_exchange, several_regions_each_way)
{
	struct xchg a, b;
	struct ibv_mr mr;
	pthread_t t;
	int sv[2];
	uint32_t i;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.fd = sv[0];
	b.fd = sv[1];
	a.mine.qpn = 0x123;
	a.mine.rkey = 0xabc;
	a.mine.addr = 0x1000;
	a.mine.size = 4096;
	memset(&mr, 0, sizeof(mr));
	for (i = 0; i < RF_EP_MAX_REGIONS; i++) {
		mr.addr = (void *)(uintptr_t)(0x10000 * (i + 1));
		mr.length = 64 * (i + 1);
		mr.rkey = 0x500 + i;
		cr_assert_eq(rf_ep_info_add_region(&a.mine, &mr), (int)i);
	}
	cr_assert_eq(rf_ep_info_add_region(&a.mine, &mr), -ENOSPC);
	b.mine.qpn = 0x456;
	b.mine.psn = 0x777;
	mr.addr = (void *)(uintptr_t)0x9000;
	mr.length = 8;
	mr.rkey = 0xc0;
	cr_assert_eq(rf_ep_info_add_region(&b.mine, &mr), 0);

	cr_assert_eq(pthread_create(&t, NULL, xchg_main, &b), 0);
	xchg_main(&a);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(a.ret, 0, "%s", strerror(-a.ret));
	cr_assert_eq(b.ret, 0, "%s", strerror(-b.ret));
	cr_assert_eq(b.theirs.qpn, 0x123);
	cr_assert_eq(b.theirs.rkey, 0xabc);
	cr_assert_eq(b.theirs.addr, 0x1000);
	cr_assert_eq(b.theirs.size, 4096);
	cr_assert_eq(b.theirs.nregions, RF_EP_MAX_REGIONS);
	for (i = 0; i < RF_EP_MAX_REGIONS; i++) {
		cr_assert_eq(b.theirs.region[i].addr, 0x10000 * (i + 1));
		cr_assert_eq(b.theirs.region[i].size, 64 * (i + 1));
		cr_assert_eq(b.theirs.region[i].rkey, 0x500 + i);
	}
	cr_assert_eq(a.theirs.qpn, 0x456);
	cr_assert_eq(a.theirs.psn, 0x777);
	cr_assert_eq(a.theirs.nregions, 1);
	cr_assert_eq(a.theirs.region[0].addr, 0x9000);
	cr_assert_eq(a.theirs.region[0].size, 8);
	cr_assert_eq(a.theirs.region[0].rkey, 0xc0);
	close(sv[0]);
	close(sv[1]);
}

Test(e2e_exchange, a_peer_of_another_format_is_refused)
{
	/* the unversioned format: qpn first, 56 bytes in all */
	uint8_t old[56];
	struct rf_ep_info me, them;
	int sv[2];

	memset(old, 0, sizeof(old));
	old[2] = 0x01;	/* qpn 0x100 */
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(rf_tcp_xfer(sv[1], old, sizeof(old), 0, 1000), 0);
	memset(&me, 0, sizeof(me));
	cr_assert_eq(rf_ep_exchange(sv[0], &me, &them, 1000), -EPROTO);
	me.nregions = RF_EP_MAX_REGIONS + 1;
	cr_assert_eq(rf_ep_exchange(sv[0], &me, &them, 1000), -EINVAL);
	close(sv[0]);
	close(sv[1]);
}

/* ---- The server: one CQ, one SRQ, a QP per client, one listener --------- */

enum { NCLIENT = 3, MSG = 64 };

struct server {
	int lfd;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct ibv_srq *ibsrq;
	struct rf_srq srq;
	struct rf_qp qp[NCLIENT];
	int fd[NCLIENT];
	uint8_t *buf;		/* receives, then the clients' writes */
	uint64_t *counter;	/* the clients' fetch-and-adds */
	struct ibv_mr *mr, *cmr;
	int ret;
	const char *failed;
};

#define SRV_FAIL(s, what, r) do { (s)->failed = (what); (s)->ret = (r); return NULL; } while (0)

static void *server_main(void *arg)
{
	struct server *s = (struct server *)arg;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_ep_info mine, theirs;
	struct rf_wc wc[NCLIENT];
	uint32_t seen_qp = 0, seen_client = 0;
	int i, got = 0, ret;
	long end;

	memset(&mine, 0, sizeof(mine));
	if (rf_ep_info_add_region(&mine, s->mr) != 0 || rf_ep_info_add_region(&mine, s->cmr) != 1)
		SRV_FAIL(s, "rf_ep_info_add_region", -EINVAL);
	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_WRITE | RF_ACCESS_REMOTE_ATOMIC;
	for (i = 0; i < NCLIENT; i++) {
		s->fd[i] = rf_tcp_accept(s->lfd, 0);
		if (s->fd[i] < 0)
			SRV_FAIL(s, "accept", s->fd[i]);
		memset(&qa, 0, sizeof(qa));
		qa.pd = s->pd;
		qa.send_cq = s->ibcq;
		qa.srq = s->ibsrq;
		qa.qp_type = IBV_QPT_RC;
		qa.max_send_wr = 8;
		ret = rf_qp_create_ibv(&s->qp[i], &qa);
		if (!ret)
			ret = rf_cq_attach(&s->cq, s->qp[i].qpn, &s->qp[i].sq, NULL, &s->srq);
		if (ret)
			SRV_FAIL(s, "QP on the SRQ", ret);
		ret = rf_ep_connect_qp(s->fd[i], &s->qp[i], &ca, &mine, &theirs, 0);
		if (!ret)
			ret = rf_ep_ready(s->fd[i], 0);
		if (ret)
			SRV_FAIL(s, "rf_ep_connect_qp", ret);
	}
	/* one message from each client, through the one SRQ into the one CQ */
	end = e2e_now_ms() + E2E_TIMEOUT_MS;
	while (got < NCLIENT && e2e_now_ms() < end)
		got += rf_cq_poll(&s->cq, wc + got, NCLIENT - got);
	if (got < NCLIENT)
		SRV_FAIL(s, "the clients' messages", -ETIMEDOUT);
	for (i = 0; i < NCLIENT; i++) {
		int q;

		for (q = 0; q < NCLIENT && s->qp[q].qpn != wc[i].qp_num; q++)
			;
		if (wc[i].status != RF_WC_SUCCESS)
			SRV_FAIL(s, rf_wc_status_str(wc[i].status), -EIO);
		if (!(wc[i].flags & RF_WC_SRQ) || q == NCLIENT || wc[i].byte_len != MSG ||
		    wc[i].wr_id >= NCLIENT)
			SRV_FAIL(s, "a receive not of the SRQ, a QP or the size sent", -EBADMSG);
		seen_qp |= 1U << q;
		/* which client it was (the accept order is the clients' race) */
		seen_client |= 1U << (s->buf[wc[i].wr_id * MSG] - 'A');
	}
	if (seen_qp != (1U << NCLIENT) - 1 || seen_client != (1U << NCLIENT) - 1)
		SRV_FAIL(s, "one message from each QP and each client", -EBADMSG);
	/* the clients' one-sided operations are done when they say so */
	for (i = 0; i < NCLIENT; i++) {
		ret = rf_tcp_sync(s->fd[i], 'D', 0);
		if (ret)
			SRV_FAIL(s, "the clients' end", ret);
	}
	return NULL;
}

struct client {
	struct rf_ep ep;
	uint16_t port;
	int id;
	int ret;
	const char *failed;
};

#define CLI_FAIL(c, what, r) do { (c)->failed = (what); (c)->ret = (r); return NULL; } while (0)

static void *client_main(void *arg)
{
	struct client *c = (struct client *)arg;
	struct rf_ep_attr a;
	const struct rf_ep_region *buf, *ctr;
	struct rf_wc wc;
	int ret, k;

	memset(&a, 0, sizeof(a));
	ret = rf_ep_open(&c->ep, &a);
	if (!ret)
		ret = rf_ep_connect(&c->ep, "127.0.0.1", c->port);
	if (ret)
		CLI_FAIL(c, c->ep.failed, ret);
	if (c->ep.peer.nregions != 2 || c->ep.peer.size != 0)
		CLI_FAIL(c, "the server's two regions", -EPROTO);
	buf = &c->ep.peer.region[0];
	ctr = &c->ep.peer.region[1];
	if (ctr->size != 8)
		CLI_FAIL(c, "the counter's size", -EPROTO);
	/* a message, a fetch-and-add on the counter, a write into the buffer */
	memset(c->ep.buf, 'A' + c->id, MSG);
	ret = rf_sq_post_send(&c->ep.qp.sq, c->ep.mr->lkey, (uint64_t)(uintptr_t)c->ep.buf,
			      MSG, RF_SEND_SIGNALED, 1);
	if (!ret)
		ret = rf_sq_post_faa(&c->ep.qp.sq, c->ep.mr->lkey,
				     (uint64_t)(uintptr_t)(c->ep.buf + 1024), ctr->rkey, ctr->addr,
				     1, RF_SEND_SIGNALED, 2);
	if (!ret)
		ret = rf_sq_post_write(&c->ep.qp.sq, c->ep.mr->lkey,
				       (uint64_t)(uintptr_t)c->ep.buf, 8, buf->rkey,
				       buf->addr + 2048 + 64 * (uint64_t)c->id,
				       RF_SEND_SIGNALED | RF_SEND_RING, 3);
	if (ret)
		CLI_FAIL(c, "posting", ret);
	for (k = 0; k < 3; k++) {
		ret = rf_ep_wait(&c->ep, &wc, 0);
		if (ret)
			CLI_FAIL(c, "the completions", ret);
		if (wc.status != RF_WC_SUCCESS)
			CLI_FAIL(c, rf_wc_status_str(wc.status), -EIO);
	}
	ret = rf_tcp_sync(c->ep.sock, 'D', 0);
	if (ret)
		CLI_FAIL(c, "the end", ret);
	return NULL;
}

static struct ibv_context *open_first_device(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0;

	list = ibv_get_device_list(&n);
	cr_assert(list && n > 0, "no RDMA device (run under build/rfemu)");
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(ctx);
	return ctx;
}

Test(e2e_server, one_cq_one_srq_a_qp_per_client_one_listener)
{
	struct server s;
	struct client c[NCLIENT];
	pthread_t st, ct[NCLIENT];
	uint16_t port = e2e_tcp_port(11);
	size_t len = 4096;
	int i, rc;

	memset(&s, 0, sizeof(s));
	s.ctx = open_first_device();
	s.pd = ibv_alloc_pd(s.ctx);
	cr_assert_not_null(s.pd);
	s.buf = (uint8_t *)aligned_alloc(4096, len);
	s.counter = (uint64_t *)aligned_alloc(4096, 4096);
	cr_assert(s.buf && s.counter);
	memset(s.buf, 0, len);
	*s.counter = 100;
	s.mr = ibv_reg_mr(s.pd, s.buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s.cmr = ibv_reg_mr(s.pd, s.counter, 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	cr_assert(s.mr && s.cmr);
	rc = rf_cq_create_ibv(&s.cq, &s.ibcq, s.ctx, 64, NULL, 0);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	rc = rf_srq_create_ibv(&s.srq, &s.ibsrq, s.pd, 16, 1);
	cr_assert_eq(rc, 0, "%s", strerror(-rc));
	for (i = 0; i < NCLIENT; i++)
		cr_assert_eq(rf_srq_post_one(&s.srq, s.mr->lkey,
					     (uint64_t)(uintptr_t)(s.buf + MSG * i), MSG,
					     (uint64_t)i), 0);
	rf_srq_ring(&s.srq);
	s.lfd = rf_tcp_listen(port, 0);
	cr_assert_geq(s.lfd, 0, "listen: %s", strerror(-s.lfd));

	/* every client at once: the second and third wait in the backlog */
	cr_assert_eq(pthread_create(&st, NULL, server_main, &s), 0);
	for (i = 0; i < NCLIENT; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].port = port;
		c[i].id = i;
	}
	for (i = 0; i < NCLIENT; i++)
		cr_assert_eq(pthread_create(&ct[i], NULL, client_main, &c[i]), 0);
	for (i = 0; i < NCLIENT; i++)
		cr_assert_eq(pthread_join(ct[i], NULL), 0);
	cr_assert_eq(pthread_join(st, NULL), 0);
	cr_assert_eq(s.ret, 0, "server: %s: %s", s.failed, strerror(-s.ret));
	for (i = 0; i < NCLIENT; i++) {
		cr_assert_eq(c[i].ret, 0, "client %d: %s: %s", i, c[i].failed,
			     strerror(-c[i].ret));
		/* each client's write landed through the first region */
		cr_assert_eq(s.buf[2048 + 64 * i], 'A' + i, "client %d's write", i);
	}
	cr_assert_eq(*s.counter, 100 + NCLIENT, "counter %llu",
		     (unsigned long long)*s.counter);

	for (i = 0; i < NCLIENT; i++) {
		rf_ep_close(&c[i].ep);
		close(s.fd[i]);
		cr_assert_eq(rf_cq_detach(&s.cq, s.qp[i].qpn), 0);
		cr_assert_eq(rf_qp_destroy_ibv(&s.qp[i]), 0);
	}
	close(s.lfd);
	cr_assert_eq(rf_srq_destroy_ibv(&s.srq, s.ibsrq), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&s.cq, s.ibcq), 0);
	ibv_dereg_mr(s.mr);
	ibv_dereg_mr(s.cmr);
	free(s.buf);
	free(s.counter);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
}

/* ---- The CQ's QP limit --------------------------------------------------- */

Test(e2e_server, a_cq_past_its_qp_limit_says_enospc)
{
	struct e2e_opts o;
	struct e2e e;
	uint32_t i;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	/* a's own QP is attached already */
	for (i = 1; i < RF_CQ_MAX_QPS; i++)
		cr_assert_eq(rf_cq_attach(&e.a.cq, 0x800000 + i, NULL, NULL, NULL), 0);
	cr_assert_eq(rf_cq_attach(&e.a.cq, 0x900000, NULL, NULL, NULL), -ENOSPC);
	/* a QPN attached already is replaced, not added */
	cr_assert_eq(rf_cq_attach(&e.a.cq, 0x800001, NULL, NULL, NULL), 0);
	for (i = 1; i < RF_CQ_MAX_QPS; i++)
		cr_assert_eq(rf_cq_detach(&e.a.cq, 0x800000 + i), 0);
	e2e_close(&e);
}

/* ---- rf_ep_accept(), rf_ep_add_region() ---------------------------------- */

struct ep_srv {
	int lfd;
	struct rf_ep ep[2];
	struct ibv_mr *extra[2];
	uint8_t extra_buf[2][64];
	int ret;
	const char *failed;
};

static void *ep_srv_main(void *arg)
{
	struct ep_srv *s = (struct ep_srv *)arg;
	struct rf_ep_attr a;
	int i;

	memset(&a, 0, sizeof(a));
	a.qp_access = RF_ACCESS_REMOTE_WRITE;	/* for the extra region alone */
	for (i = 0; i < 2; i++) {
		s->ret = rf_ep_open(&s->ep[i], &a);
		if (s->ret) {
			s->failed = s->ep[i].failed;
			return NULL;
		}
		s->extra[i] = ibv_reg_mr(s->ep[i].pd, s->extra_buf[i], 64,
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!s->extra[i] || rf_ep_add_region(&s->ep[i], s->extra[i]) != 0) {
			s->failed = "the extra region";
			s->ret = -ENOMEM;
			return NULL;
		}
		s->ret = rf_ep_accept(&s->ep[i], s->lfd);
		if (s->ret) {
			s->failed = s->ep[i].failed;
			return NULL;
		}
	}
	return NULL;
}

Test(e2e_server, rf_ep_accept_takes_client_after_client_on_one_listener)
{
	struct ep_srv s;
	struct rf_ep c[2];
	struct rf_ep_attr a;
	struct rf_wc wc;
	pthread_t t;
	uint16_t port = e2e_tcp_port(12);
	int i, ret;

	memset(&s, 0, sizeof(s));
	s.lfd = rf_tcp_listen(port, 0);
	cr_assert_geq(s.lfd, 0, "listen: %s", strerror(-s.lfd));
	cr_assert_eq(pthread_create(&t, NULL, ep_srv_main, &s), 0);
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 2; i++) {
		ret = rf_ep_open(&c[i], &a);
		cr_assert_eq(ret, 0, "client open: %s", strerror(-ret));
		ret = rf_ep_connect(&c[i], "127.0.0.1", port);
		cr_assert_eq(ret, 0, "client %d: %s: %s", i, c[i].failed, strerror(-ret));
	}
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(s.ret, 0, "server: %s: %s", s.failed, strerror(-s.ret));
	for (i = 0; i < 2; i++) {
		const struct rf_ep_region *r = &c[i].peer.region[0];

		cr_assert_eq(c[i].peer.nregions, 1);
		cr_assert_eq(c[i].peer.size, 0, "the server's buf was not granted");
		cr_assert_eq(c[i].peer.qpn, s.ep[i].qp.qpn, "accepted in connection order");
		cr_assert_eq(r->rkey, s.extra[i]->rkey);
		cr_assert_eq(r->addr, (uint64_t)(uintptr_t)s.extra_buf[i]);
		cr_assert_eq(r->size, 64);
		memset(c[i].buf, 'x' + i, 8);
		cr_assert_eq(rf_sq_post_write(&c[i].qp.sq, c[i].mr->lkey,
					      (uint64_t)(uintptr_t)c[i].buf, 8, r->rkey, r->addr,
					      RF_SEND_SIGNALED | RF_SEND_RING, 1), 0);
		cr_assert_eq(rf_ep_wait(&c[i], &wc, 0), 0);
		cr_assert_eq(wc.status, RF_WC_SUCCESS, "%s", rf_wc_status_str(wc.status));
		cr_assert_eq(s.extra_buf[i][7], 'x' + i);
	}
	for (i = 0; i < 2; i++) {
		rf_ep_close(&c[i]);
		ibv_dereg_mr(s.extra[i]);
		rf_ep_close(&s.ep[i]);
	}
	close(s.lfd);
}

/*
 * Past RF_CQ_MAX_QPS: receives through an SRQ on a CQ that names it
 * (rf_cq_set_srq()) need no attachment, so one receive CQ serves every
 * QP; send completions need the QP's send queue attached, so the sends
 * go to CQs of up to RF_CQ_MAX_QPS QPs each. rdmafast(7), CQ LIMIT.
 */
enum { MANY = RF_CQ_MAX_QPS + 4 };

Test(e2e_server, one_receive_cq_on_an_srq_serves_more_qps_than_the_limit)
{
	struct e2e_opts o;
	struct e2e e;	/* device, PD, buffers (a: server, b: clients) */
	struct ibv_cq *rcq_ib, *scq_ib[2], *ccq_ib[2];
	struct rf_cq rcq, scq[2], ccq[2];
	struct ibv_srq *ibsrq;
	struct rf_srq srq;
	struct rf_qp sqp[MANY], cqp[MANY];
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_wc wc[MANY];
	uint8_t seen[MANY];
	int i, g, rc;

	memset(&o, 0, sizeof(o));
	e2e_open(&e, &o);
	rc = rf_cq_create_ibv(&rcq, &rcq_ib, e.ctx, 4 * MANY, NULL, 0);
	cr_assert_eq(rc, 0);
	rc = rf_srq_create_ibv(&srq, &ibsrq, e.pd, MANY, 1);
	cr_assert_eq(rc, 0);
	rf_cq_set_srq(&rcq, &srq);
	for (g = 0; g < 2; g++) {
		cr_assert_eq(rf_cq_create_ibv(&scq[g], &scq_ib[g], e.ctx, 2 * MANY, NULL, 0), 0);
		cr_assert_eq(rf_cq_create_ibv(&ccq[g], &ccq_ib[g], e.ctx, 2 * MANY, NULL, 0), 0);
	}
	for (i = 0; i < MANY; i++)
		cr_assert_eq(rf_srq_post_one(&srq, e.a.mr->lkey, e2e_addr(&e.a, 64 * (size_t)i),
					     64, (uint64_t)i), 0);
	rf_srq_ring(&srq);

	memset(&ca, 0, sizeof(ca));
	for (i = 0; i < MANY; i++) {
		struct rf_qp_peer ps, pc;

		g = i / RF_CQ_MAX_QPS;
		memset(&qa, 0, sizeof(qa));
		qa.pd = e.pd;
		qa.qp_type = IBV_QPT_RC;
		qa.max_send_wr = 4;
		/* server: sends to a CQ of its group, receives through the SRQ */
		qa.send_cq = scq_ib[g];
		qa.recv_cq = rcq_ib;
		qa.srq = ibsrq;
		cr_assert_eq(rf_qp_create_ibv(&sqp[i], &qa), 0);
		cr_assert_eq(rf_cq_attach(&scq[g], sqp[i].qpn, &sqp[i].sq, NULL, NULL), 0);
		/* client: both on a CQ of its group */
		qa.send_cq = ccq_ib[g];
		qa.recv_cq = ccq_ib[g];
		qa.srq = NULL;
		qa.max_recv_wr = 4;
		cr_assert_eq(rf_qp_create_ibv(&cqp[i], &qa), 0);
		cr_assert_eq(rf_cq_attach(&ccq[g], cqp[i].qpn, &cqp[i].sq, &cqp[i].rq, NULL), 0);

		memset(&ps, 0, sizeof(ps));
		memset(&pc, 0, sizeof(pc));
		ps.qpn = sqp[i].qpn;
		pc.qpn = cqp[i].qpn;
		ps.lid = pc.lid = e.port.lid;
		if (rf_qp_conn_grh(&ca, &e.port)) {
			cr_assert_eq(ibv_query_gid(e.ctx, 1, 0, &ps.gid), 0);
			pc.gid = ps.gid;
		}
		cr_assert_eq(rf_qp_connect_ibv(&sqp[i], &ca, &pc), 0);
		cr_assert_eq(rf_qp_connect_ibv(&cqp[i], &ca, &ps), 0);
	}
	cr_assert_eq(rcq.nqp, 0, "the receive CQ routes with no QP attached");

	/* every client sends one message; all arrive on the one receive CQ */
	for (i = 0; i < MANY; i++) {
		e.b.buf[64 * i] = (uint8_t)i;
		cr_assert_eq(rf_sq_post_send(&cqp[i].sq, e.b.mr->lkey, e2e_addr(&e.b, 64 * (size_t)i),
					     64, RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)i), 0);
	}
	e2e_wait(&rcq, wc, MANY);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < MANY; i++) {
		int q;

		cr_assert_eq(wc[i].status, RF_WC_SUCCESS, "%s", rf_wc_status_str(wc[i].status));
		cr_assert(wc[i].flags & RF_WC_SRQ);
		for (q = 0; q < MANY && sqp[q].qpn != wc[i].qp_num; q++)
			;
		cr_assert_lt(q, MANY, "a receive of QP %#x", wc[i].qp_num);
		cr_assert_eq(e.a.buf[64 * wc[i].wr_id], q, "QP %d got another's message", q);
		seen[q]++;
	}
	for (i = 0; i < MANY; i++)
		cr_assert_eq(seen[i], 1, "QP %d: %d messages", i, seen[i]);
	cr_assert_eq(rcq.nstale, 0);
	e2e_wait(&ccq[0], wc, RF_CQ_MAX_QPS);
	e2e_wait(&ccq[1], wc, MANY - RF_CQ_MAX_QPS);

	/* and the server answers each: its sends complete on the group CQs */
	for (i = 0; i < MANY; i++) {
		cr_assert_eq(rf_rq_post_one(&cqp[i].rq, e.b.mr->lkey,
					    e2e_addr(&e.b, 4096 + 64 * (size_t)i), 64, 0), 0);
		rf_rq_ring(&cqp[i].rq);
		cr_assert_eq(rf_sq_post_send(&sqp[i].sq, e.a.mr->lkey, e2e_addr(&e.a, 0), 8,
					     RF_SEND_SIGNALED | RF_SEND_RING, (uint64_t)i), 0);
	}
	e2e_wait(&scq[0], wc, RF_CQ_MAX_QPS);
	e2e_wait(&scq[1], wc, MANY - RF_CQ_MAX_QPS);
	e2e_wait(&ccq[0], wc, RF_CQ_MAX_QPS);
	e2e_wait(&ccq[1], wc, MANY - RF_CQ_MAX_QPS);

	for (i = 0; i < MANY; i++) {
		g = i / RF_CQ_MAX_QPS;
		cr_assert_eq(rf_cq_detach(&scq[g], sqp[i].qpn), 0);
		cr_assert_eq(rf_cq_detach(&ccq[g], cqp[i].qpn), 0);
		cr_assert_eq(rf_qp_destroy_ibv(&sqp[i]), 0);
		cr_assert_eq(rf_qp_destroy_ibv(&cqp[i]), 0);
	}
	cr_assert_eq(rf_srq_destroy_ibv(&srq, ibsrq), 0);
	cr_assert_eq(rf_cq_destroy_ibv(&rcq, rcq_ib), 0);
	for (g = 0; g < 2; g++) {
		cr_assert_eq(rf_cq_destroy_ibv(&scq[g], scq_ib[g]), 0);
		cr_assert_eq(rf_cq_destroy_ibv(&ccq[g], ccq_ib[g]), 0);
	}
	e2e_close(&e);
}
