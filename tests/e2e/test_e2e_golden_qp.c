/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast's WQEs against libmlx5's on the QP types test_e2e_golden.c
 * (RC) and test_e2e_dc.c (DC) leave out: UC, UD (on InfiniBand, and on
 * RoCE by suite e2e_golden_roce, which runs suite e2e_golden_ud again
 * with RFEMU_LINK_LAYER=eth), XRC, and type-1 memory-window binds; and
 * libmlx5's extended post (ibv_wr_*()) beside its ibv_post_send() for
 * one RC and one UD op. As there: the same request goes to a libmlx5 QP
 * (c, toward d) and to an rdmafast QP (a, toward b) at the same producer
 * index, both are executed, and the WQE bytes are compared.
 *
 * Masked everywhere: the QPN in the control segment (two QPs), bytes
 * past DS * 16, and inline padding past 4 + length. Besides:
 *  - UD: the destination QPN in the address vector (bytes 25..27: b and
 *    d are two QPs). The rest of the 48-byte AV is compared: rdmafast
 *    takes libmlx5's own AV from the AH (rf_ah_av_ibv()), so what is
 *    checked is what both add to it (extended bit, QPN, the Q_Key of the
 *    request, the word after it zeroed) and that the RoCE fields (MAC,
 *    SGID index, UDP source port) pass through unchanged. A Q_Key with
 *    bit 31 set is written as given by both; the device then uses the
 *    QP's (IBA 10.2.4.2).
 *  - XRC: nothing more; the XRC segment (remote SRQ number) is compared.
 *  - type-1 bind: the key in the control segment's immediate and the new
 *    key's tag (byte 71): two windows. The UMR is libmlx5's ibv_bind_mw()
 *    on c. libmlx5 fences the WQE after a UMR, rdmafast posts a fenced NOP
 *    (rdmafast/sq_mw.h), as test_e2e_golden.c documents.
 *  - ibv_wr_*(): libmlx5's extended post never writes the control
 *    segment's immediate (bytes 12..15) for an op without one: the bytes
 *    of whatever WQE used the slot before stay (rdma-core 44 and HEAD,
 *    providers/mlx5/qp.c, _common_wqe_init_op()). The device ignores
 *    them; ibv_post_send() and rdmafast write 0. Shown by filling the
 *    slot with 0xa5 first; otherwise the bytes are the same.
 *
 * Masked atomics are not here: libmlx5 has no verb that posts them (no
 * IBV_WR_* or ibv_wr_*() op, and mlx5dv.h only names the opcodes 0x14 and
 * 0x15), so there is no oracle to run. Their layout is checked field by
 * field against the PRM in tests/unit/test_sq.c (sq/atomics: opcode,
 * opmod, each operand and mask, 32- and 64-bit, both kinds) and
 * tests/unit/test_hw_setters.c (hw_setters/golden_masked_atomics).
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

#define QKEY 0x11112222u

struct gq {
	struct e2e e;		/* a -> b: rdmafast */
	struct rf_qp c, d;	/* c -> d: libmlx5 (rf_qp only to find buffers, connect) */
	struct ibv_qp_ex *cx;	/* c's extended post */
	struct ibv_cq *ccq;	/* c's and d's */
	struct ibv_ah *ah;	/* UD: to this port */
	struct rf_wqe_av av;	/* its AV */
};

/* One libmlx5 QP of type t with the caps of rdmafast's (e2e_side_open()). */
static void lib_qp(struct gq *g, struct rf_qp *q, enum ibv_qp_type t, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ax;
	struct ibv_qp *ibqp;

	memset(&ax, 0, sizeof(ax));
	ax.qp_type = t;
	ax.send_cq = g->ccq;
	ax.recv_cq = g->ccq;
	ax.cap.max_send_wr = 16;
	ax.cap.max_recv_wr = 16;
	ax.cap.max_send_sge = 4;
	ax.cap.max_recv_sge = 4;
	ax.cap.max_inline_data = 64;
	ax.pd = g->e.pd;
	if (t == IBV_QPT_XRC_SEND) {
		ax.recv_cq = NULL;
		ax.cap.max_recv_wr = 0;
		ax.cap.max_recv_sge = 0;
	}
	ax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	ax.send_ops_flags = ops;
	ibqp = ibv_create_qp_ex(g->e.ctx, &ax);
	cr_assert_not_null(ibqp, "libmlx5 QP: %s", strerror(errno));
	cr_assert_eq(rf_qp_init_ibv(q, ibqp, &ax.cap, 0), 0);
}

/*
 * e2e's pair a -> b of type t, and libmlx5's c -> d beside it (UD: both
 * pairs at RTS with QKEY, and an AH to this port).
 */
static void gq_open(struct gq *g, enum ibv_qp_type t, uint64_t ops)
{
	struct e2e_opts o;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pc, pd;
	int ud = t == IBV_QPT_UD;

	memset(g, 0, sizeof(*g));
	memset(&o, 0, sizeof(o));
	o.type = t;
	if (ud) {
		/* e2e_open() connects RC-style: open the sides alone */
		struct ibv_device **l = ibv_get_device_list(NULL);

		cr_assert(l && l[0]);
		g->e.ctx = ibv_open_device(l[0]);
		ibv_free_device_list(l);
		cr_assert_not_null(g->e.ctx);
		g->e.pd = ibv_alloc_pd(g->e.ctx);
		cr_assert_not_null(g->e.pd);
		cr_assert_eq(ibv_query_port(g->e.ctx, 1, &g->e.port), 0);
		e2e_side_open(&g->e, &g->e.a, &o, NULL);
		e2e_side_open(&g->e, &g->e.b, &o, NULL);
	} else {
		e2e_open(&g->e, &o);
	}
	g->ccq = ibv_create_cq(g->e.ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(g->ccq);
	lib_qp(g, &g->c, t, ops);
	lib_qp(g, &g->d, t, ops);
	g->cx = ibv_qp_to_qp_ex(g->c.ibqp);
	cr_assert_not_null(g->cx);

	memset(&ca, 0, sizeof(ca));
	ca.access = t == IBV_QPT_UC ? RF_ACCESS_REMOTE_WRITE : RF_ACCESS_REMOTE_ALL;
	ca.gid_index = -1;
	ca.qkey = QKEY;
	memset(&pc, 0, sizeof(pc));
	memset(&pd, 0, sizeof(pd));
	pc.qpn = g->c.qpn;
	pc.lid = g->e.port.lid;
	pd.qpn = g->d.qpn;
	pd.lid = g->e.port.lid;
	if (g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(g->e.ctx, 1, 0, &pc.gid), 0);
		pd.gid = pc.gid;
	}
	cr_assert_eq(rf_qp_connect_ibv(&g->c, &ca, ud ? NULL : &pd), 0);
	cr_assert_eq(rf_qp_connect_ibv(&g->d, &ca, ud ? NULL : &pc), 0);
	if (ud) {
		struct ibv_ah_attr aa;

		cr_assert_eq(rf_qp_connect_ibv(&g->e.a.qp, &ca, NULL), 0);
		cr_assert_eq(rf_qp_connect_ibv(&g->e.b.qp, &ca, NULL), 0);
		memset(&aa, 0, sizeof(aa));
		aa.dlid = g->e.port.lid;
		aa.port_num = 1;
		if (g->e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
			aa.is_global = 1;
			aa.grh.hop_limit = 64;
			aa.grh.dgid = pc.gid;
		}
		g->ah = ibv_create_ah(g->e.pd, &aa);
		cr_assert_not_null(g->ah, "create_ah: %s", strerror(errno));
		cr_assert_eq(rf_ah_av_ibv(g->ah, &g->av), 0);
	}
}

static void gq_close(struct gq *g)
{
	if (g->ah)
		ibv_destroy_ah(g->ah);
	rf_qp_destroy_ibv(&g->c);
	rf_qp_destroy_ibv(&g->d);
	ibv_destroy_cq(g->ccq);
	e2e_close(&g->e);
}

/* Byte i of the WQE that starts at index pi, across the queue's wrap. */
static uint8_t wqe_byte(const struct rf_sq *sq, uint32_t pi, uint32_t i)
{
	return ((const uint8_t *)rf_sq_wqe(sq, pi + i / RF_SEND_WQE_BB))[i % RF_SEND_WQE_BB];
}

/* The WQE's size in BBs, from its DS. */
static uint32_t wqe_bbs(const struct rf_sq *sq, uint32_t pi)
{
	return ((wqe_byte(sq, pi, 7) & 0x3fU) * 16 + RF_SEND_WQE_BB - 1) / RF_SEND_WQE_BB;
}

/*
 * Compare rdmafast's WQE at r[pr] with libmlx5's at l[pl]: the DS, then
 * every byte it covers except the QPN and [from1, to1), [from2, to2).
 */
static void cmp(const struct rf_sq *r, uint32_t pr, const struct rf_sq *l, uint32_t pl,
		uint32_t from1, uint32_t to1, uint32_t from2, uint32_t to2, const char *what)
{
	uint32_t ds = wqe_byte(l, pl, 7) & 0x3f;

	cr_assert_eq(wqe_byte(r, pr, 7) & 0x3f, ds, "%s: DS rdmafast %u libmlx5 %u", what,
		     wqe_byte(r, pr, 7) & 0x3f, ds);
	for (uint32_t i = 0; i < ds * 16; i++) {
		if ((i >= 4 && i < 7) || (i >= from1 && i < to1) || (i >= from2 && i < to2))
			continue;
		cr_assert_eq(wqe_byte(r, pr, i), wqe_byte(l, pl, i),
			     "%s: byte %u differs: rdmafast %#x libmlx5 %#x", what, i,
			     wqe_byte(r, pr, i), wqe_byte(l, pl, i));
	}
}

/* n successful completions on libmlx5's CQ. */
static void lib_wait(struct gq *g, int n)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	struct ibv_wc wc;

	while (n > 0) {
		int k = ibv_poll_cq(g->ccq, 1, &wc);

		cr_assert_geq(k, 0);
		if (k)
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "libmlx5 side: %s",
				     ibv_wc_status_str(wc.status));
		n -= k;
		cr_assert(e2e_now_ms() < end, "libmlx5 side timeout");
	}
}

/* n successful completions on an rdmafast CQ. */
static void rf_wait(struct rf_cq *cq, int n)
{
	struct rf_wc w;

	for (int i = 0; i < n; i++) {
		e2e_wait(cq, &w, 1);
		cr_assert_eq(w.status, RF_WC_SUCCESS, "rdmafast side: %u", w.status);
	}
}

/* k receives of 1024 bytes on b (rdmafast) and on d (libmlx5). */
static void receives(struct gq *g, int k)
{
	struct e2e_side *b = &g->e.b;

	for (int i = 0; i < k; i++) {
		struct ibv_sge rs = { e2e_addr(b, 32768 + 1024u * (uint32_t)i), 1024,
				      b->mr->lkey };
		struct ibv_recv_wr rwr, *rbad;

		memset(&rwr, 0, sizeof(rwr));
		rwr.sg_list = &rs;
		rwr.num_sge = 1;
		cr_assert_eq(ibv_post_recv(g->d.ibqp, &rwr, &rbad), 0);
		cr_assert_eq(rf_rq_post_one(&b->qp.rq, b->mr->lkey,
					    e2e_addr(b, 49152 + 1024u * (uint32_t)i), 1024, 0), 0);
	}
	rf_rq_ring(&b->qp.rq);
}

/* rdmafast rings, then both WQEs at *p are compared, executed and retired. */
static void step(struct gq *g, uint32_t *p, uint32_t from, uint32_t to, int recv,
		 const char *what)
{
	rf_sq_ring(&g->e.a.qp.sq);
	cmp(&g->e.a.qp.sq, *p, &g->c.sq, *p, from, to, 0, 0, what);
	*p += wqe_bbs(&g->c.sq, *p);
	lib_wait(g, 1 + recv);
	rf_wait(&g->e.a.cq, 1);
	rf_wait(&g->e.b.cq, recv);
}

#define LIB(op, fl)                                                            \
	do {                                                                   \
		wr.opcode = (op);                                              \
		wr.send_flags = (fl);                                          \
		cr_assert_eq(ibv_post_send(g.c.ibqp, &wr, &bad), 0);          \
	} while (0)

Test(e2e_golden_qp, uc_matches_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t p = 0;
	uint8_t msg[40];

	gq_open(&g, IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	a = &g.e.a;
	b = &g.e.b;
	sq = &a->qp.sq;
	cr_assert_eq(sq->kind, RF_QP_UC);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x30 + i);
	receives(&g, 4);
	sge.addr = e2e_addr(a, 0);
	sge.length = 512;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = e2e_addr(b, 4096);
	wr.wr.rdma.rkey = b->mr->rkey;
	wr.imm_data = htobe32(0x11223344);

	LIB(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 0, 0, 0, "uc write");
	LIB(IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_write_imm(sq, a->mr->lkey, e2e_addr(a, 0), 512, b->mr->rkey,
					  e2e_addr(b, 4096), RF_BE32(0x11223344),
					  RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	step(&g, &p, 0, 0, 1, "uc write_imm");
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send(sq, a->mr->lkey, e2e_addr(a, 0), 512, RF_SEND_SIGNALED, 0),
		     0);
	step(&g, &p, 0, 0, 1, "uc send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send_imm(sq, a->mr->lkey, e2e_addr(a, 0), 512,
					 RF_BE32(0x11223344), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 0, 0, 1, "uc send_imm");
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_send_inline(sq, msg, sizeof(msg), RF_SEND_SIGNALED, 0), 0);
	step(&g, &p, 16 + 4 + sizeof(msg), 64, 1, "uc send_inline");
	cr_assert_eq(memcmp(b->buf + 49152 + 3 * 1024, msg, sizeof(msg)), 0);
	gq_close(&g);
}

/* UD: rdmafast's a -> b beside libmlx5's c -> d, one AH for both. */
static void ud_step(struct gq *g, uint32_t *p, uint32_t pad, const char *what)
{
	/* the AV's destination QPN (bytes 25..27): b and d */
	rf_sq_ring(&g->e.a.qp.sq);
	cmp(&g->e.a.qp.sq, *p, &g->c.sq, *p, 16 + 9, 16 + 12, pad, 128, what);
	*p += wqe_bbs(&g->c.sq, *p);
	lib_wait(g, 2);
	rf_wait(&g->e.a.cq, 1);
	rf_wait(&g->e.b.cq, 1);
}

Test(e2e_golden_ud, ud_matches_libmlx5)
{
	struct gq g;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	const char *ll = getenv("RFEMU_LINK_LAYER");
	uint32_t p = 0;
	uint8_t msg[24];

	gq_open(&g, IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	if (ll && !strcmp(ll, "eth") && getenv("RFEMU_LIB"))
		cr_assert_eq(g.e.port.link_layer, IBV_LINK_LAYER_ETHERNET, "not on RoCE");
	a = &g.e.a;
	b = &g.e.b;
	sq = &a->qp.sq;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x61 + i);
	receives(&g, 6);
	sge.addr = e2e_addr(a, 0);
	sge.length = 100;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.ud.ah = g.ah;
	wr.wr.ud.remote_qpn = g.d.qpn;
	wr.wr.ud.remote_qkey = QKEY;
	wr.imm_data = htobe32(0x55667788);

	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 128, "ud send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, RF_BE32(0x55667788), 1,
					RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	ud_step(&g, &p, 128, "ud send_imm");
	/* bit 31 of the Q_Key: the device takes the sending QP's (QKEY) */
	wr.wr.ud.remote_qkey = 0x80000000u;
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, 0x80000000u, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 128, "ud send, the QP's Q_Key");
	wr.wr.ud.remote_qkey = QKEY;
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, msg, 0, 0, sizeof(msg), 0, 0,
					RF_SEND_SIGNALED, 0), 0);
	ud_step(&g, &p, 16 + 48 + 4 + sizeof(msg), "ud send_inline");
	cr_assert_eq(memcmp(b->buf + 49152 + 3 * 1024 + RF_UD_GRH_LEN, msg, sizeof(msg)), 0);

	/* ibv_wr_*(): the same WQE, but for the immediate's stale bytes */
	memset((void *)rf_sq_wqe(&g.c.sq, p), 0xa5, 2 * RF_SEND_WQE_BB);
	memset((void *)rf_sq_wqe(sq, p), 0xa5, 2 * RF_SEND_WQE_BB);
	ibv_wr_start(g.cx);
	g.cx->wr_id = 0;
	g.cx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(g.cx);
	ibv_wr_set_ud_addr(g.cx, g.ah, g.d.qpn, QKEY);
	ibv_wr_set_sge(g.cx, a->mr->lkey, e2e_addr(a, 0), 100);
	cr_assert_eq(ibv_wr_complete(g.cx), 0);
	cr_assert_eq(rf_sq_post_ud_send(sq, &g.av, b->qp.qpn, QKEY, NULL, a->mr->lkey,
					e2e_addr(a, 0), 100, 0, 0, RF_SEND_SIGNALED, 0), 0);
	for (uint32_t i = 12; i < 16; i++) {
		cr_assert_eq(wqe_byte(&g.c.sq, p, i), 0xa5, "libmlx5 ibv_wr_send wrote byte %u", i);
		cr_assert_eq(wqe_byte(sq, p, i), 0, "rdmafast left byte %u", i);
	}
	rf_sq_ring(sq);
	cmp(sq, p, &g.c.sq, p, 16 + 9, 16 + 12, 12, 16, "ud ibv_wr_send");
	lib_wait(&g, 2);
	rf_wait(&a->cq, 1);
	rf_wait(&b->cq, 1);
	gq_close(&g);
}

/* Suite e2e_golden_ud again, in a fresh runner on RoCE (emulated HCA only). */
Test(e2e_golden_roce, ud_on_roce, .timeout = 120)
{
	int status;
	pid_t pid;

	if (!getenv("RFEMU_LIB"))
		cr_skip_test("a real device: its link layer is what it is");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_LINK_LAYER", "eth", 1);
		unsetenv("BXFI_MAP");	/* a runner of its own, not a worker of this one */
		execl("/proc/self/exe", "rfe2e", "--filter", "e2e_golden_ud/*", "--jobs", "1",
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

/*
 * XRC: rdmafast's XRC_SEND QP and libmlx5's, each toward an XRC_RECV QP
 * of its own, both sending to one XRC SRQ (its completions on b's CQ).
 */
Test(e2e_golden_xrc, xrc_matches_libmlx5)
{
	struct gq g;
	struct e2e_opts o;
	struct ibv_xrcd_init_attr xa;
	struct ibv_xrcd *xrcd;
	struct ibv_srq_init_attr_ex sa;
	struct ibv_srq *ibsrq;
	struct ibv_qp_init_attr_ex ra;
	struct ibv_qp *rqa, *rqc;
	struct rf_srq srq;
	struct rf_qp x;
	struct rf_qp_init_attr qa;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer peer;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct e2e_side *a, *b;
	struct rf_sq *sq;
	uint32_t srqn = 0, p = 0;
	uint8_t msg[40];

	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	e2e_open(&g.e, &o);	/* the context, PD, buffers and CQs */
	a = &g.e.a;
	b = &g.e.b;
	g.ccq = ibv_create_cq(g.e.ctx, 64, NULL, NULL, 0);
	cr_assert_not_null(g.ccq);
	memset(&xa, 0, sizeof(xa));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	xrcd = ibv_open_xrcd(g.e.ctx, &xa);
	cr_assert_not_null(xrcd, "open_xrcd: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 32;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
	sa.srq_type = IBV_SRQT_XRC;
	sa.xrcd = xrcd;
	sa.cq = b->ibcq;
	sa.pd = g.e.pd;
	ibsrq = ibv_create_srq_ex(g.e.ctx, &sa);
	cr_assert_not_null(ibsrq, "xrc srq: %s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(ibsrq, &srqn), 0);
	cr_assert_eq(rf_srq_init_ibv(&srq, ibsrq), 0);
	rf_cq_set_srq(&b->cq, &srq);
	memset(&ra, 0, sizeof(ra));
	ra.qp_type = IBV_QPT_XRC_RECV;
	ra.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ra.xrcd = xrcd;
	rqa = ibv_create_qp_ex(g.e.ctx, &ra);
	rqc = ibv_create_qp_ex(g.e.ctx, &ra);
	cr_assert(rqa && rqc, "xrc recv qp: %s", strerror(errno));

	memset(&qa, 0, sizeof(qa));
	qa.pd = g.e.pd;
	qa.send_cq = a->ibcq;
	qa.qp_type = IBV_QPT_XRC_SEND;
	qa.max_send_wr = 16;
	qa.max_send_sge = 4;
	qa.max_inline_data = 64;
	cr_assert_eq(rf_qp_create_ibv(&x, &qa), 0);
	cr_assert_eq(x.kind, RF_QP_XRC);
	cr_assert_eq(rf_cq_attach(&a->cq, x.qpn, &x.sq, NULL, NULL), 0);
	lib_qp(&g, &g.c, IBV_QPT_XRC_SEND, RF_SEND_OPS_DEFAULT);

	memset(&ca, 0, sizeof(ca));
	ca.access = RF_ACCESS_REMOTE_ALL;
	ca.gid_index = -1;
	memset(&peer, 0, sizeof(peer));
	peer.lid = g.e.port.lid;
	if (g.e.port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(g.e.ctx, 1, 0, &peer.gid), 0);
	}
	peer.qpn = x.qpn;
	cr_assert_eq(rf_xrc_recv_connect_ibv(rqa, &ca, &peer), 0);
	peer.qpn = g.c.qpn;
	cr_assert_eq(rf_xrc_recv_connect_ibv(rqc, &ca, &peer), 0);
	peer.qpn = rqa->qp_num;
	cr_assert_eq(rf_qp_connect_ibv(&x, &ca, &peer), 0);
	peer.qpn = rqc->qp_num;
	cr_assert_eq(rf_qp_connect_ibv(&g.c, &ca, &peer), 0);

	for (uint32_t i = 0; i < 16; i++) {
		struct rf_sge sg = { e2e_addr(b, 32768 + 1024 * i), 1024, b->mr->lkey };

		cr_assert_eq(rf_srq_post(&srq, &sg, 1, i), 0);
	}
	rf_srq_ring(&srq);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(0x40 + i);
	sq = &x.sq;
	rf_sq_set_xrc_srqn(sq, srqn);
	sge.addr = e2e_addr(a, 0);
	sge.length = 300;
	sge.lkey = a->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = e2e_addr(b, 4096);
	wr.wr.rdma.rkey = b->mr->rkey;
	wr.imm_data = htobe32(0x0a0b0c0d);

#define XRC_STEP(recv, from, to, what)                                         \
	do {                                                                   \
		rf_sq_ring(sq);                                                \
		cmp(sq, p, &g.c.sq, p, from, to, 0, 0, what);                  \
		p += wqe_bbs(&g.c.sq, p);                                      \
		lib_wait(&g, 1);                                               \
		rf_wait(&a->cq, 1);                                            \
		rf_wait(&b->cq, 2 * (recv));                                   \
	} while (0)

	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_send(sq, a->mr->lkey, e2e_addr(a, 0), 300, RF_SEND_SIGNALED, 0),
		     0);
	XRC_STEP(1, 0, 0, "xrc send");
	LIB(IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	cr_assert_eq(rf_sq_post_send_imm(sq, a->mr->lkey, e2e_addr(a, 0), 300,
					 RF_BE32(0x0a0b0c0d),
					 RF_SEND_SIGNALED | RF_SEND_SOLICITED, 0), 0);
	XRC_STEP(1, 0, 0, "xrc send_imm");
	LIB(IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_write(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
				      e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc write");
	LIB(IBV_WR_RDMA_WRITE_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	cr_assert_eq(rf_sq_post_write_imm(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
					  e2e_addr(b, 4096), RF_BE32(0x0a0b0c0d),
					  RF_SEND_SIGNALED | RF_SEND_FENCE, 0), 0);
	XRC_STEP(1, 0, 0, "xrc write_imm");
	LIB(IBV_WR_RDMA_READ, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_read(sq, a->mr->lkey, e2e_addr(a, 0), 300, b->mr->rkey,
				     e2e_addr(b, 4096), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc read");
	sge.addr = (uint64_t)(uintptr_t)msg;
	sge.length = sizeof(msg);
	LIB(IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	cr_assert_eq(rf_sq_post_send_inline(sq, msg, sizeof(msg), RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(1, 32 + 4 + sizeof(msg), 128, "xrc send_inline");
	/* atomics: ctrl, XRC, raddr, atomic, data: 5 DS, 2 BBs */
	sge.addr = e2e_addr(a, 8192);
	sge.length = 8;
	wr.wr.atomic.remote_addr = e2e_addr(b, 128);
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = 0x0102030405060708ULL;
	wr.wr.atomic.swap = 0x1112131415161718ULL;
	LIB(IBV_WR_ATOMIC_CMP_AND_SWP, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_cas(sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL,
				    0x1112131415161718ULL, RF_SEND_SIGNALED, 0), 0);
	XRC_STEP(0, 0, 0, "xrc cas");
	LIB(IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_SEND_SIGNALED);
	cr_assert_eq(rf_sq_post_faa(sq, a->mr->lkey, e2e_addr(a, 8192), b->mr->rkey,
				    e2e_addr(b, 128), 0x0102030405060708ULL, RF_SEND_SIGNALED, 0),
		     0);
	XRC_STEP(0, 0, 0, "xrc faa");
#undef XRC_STEP
	cr_assert_eq(b->cq.nstale, 0);

	rf_cq_detach(&a->cq, x.qpn);
	rf_qp_destroy_ibv(&x);
	rf_qp_destroy_ibv(&g.c);
	ibv_destroy_qp(rqa);
	ibv_destroy_qp(rqc);
	rf_cq_set_srq(&b->cq, NULL);
	rf_srq_fini_ibv(&srq);
	ibv_destroy_srq(ibsrq);
	ibv_close_xrcd(xrcd);
	ibv_destroy_cq(g.ccq);
	e2e_close(&g.e);
}
