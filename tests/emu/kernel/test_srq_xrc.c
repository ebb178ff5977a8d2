/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SRQs, XRC domains, XRC SRQs and XRC QPs, including a domain and a target
 * QP shared with a second process.
 */
#include "emu_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static char xrc_file[64];
static int xrc_fd = -1;

static void setup(void)
{
	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert(pd && cq);
	snprintf(xrc_file, sizeof(xrc_file), "/tmp/rfemu-xrcd-test-%d", (int)getpid());
	xrc_fd = open(xrc_file, O_RDWR | O_CREAT, 0600);
	cr_assert_geq(xrc_fd, 0);
}

static void teardown(void)
{
	close(xrc_fd);
	unlink(xrc_file);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(srq, .init = setup, .fini = teardown);

Test(srq, create_modify_query)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 100, .max_sge = 2, .srq_limit = 7 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_srq_attr a = {};
	struct mlx5dv_srq dv = { .comp_mask = MLX5DV_SRQ_MASK_SRQN };
	struct mlx5dv_obj o = { .srq = { .in = srq, .out = &dv } };

	cr_assert(srq, "%s", strerror(errno));
	cr_assert_geq(sa.attr.max_wr, 100);
	cr_assert_eq(ibv_query_srq(srq, &a), 0);
	cr_assert_geq(a.max_wr, 100);
	cr_assert_eq(a.srq_limit, 0, "the limit is not set at creation");

	a.srq_limit = 10;
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), 0);
	memset(&a, 0, sizeof(a));
	cr_assert_eq(ibv_query_srq(srq, &a), 0);
	cr_assert_eq(a.srq_limit, 10);
	/* mlx5 cannot resize; a limit must be below the size */
	a.max_wr = 200;
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR), EINVAL);
	a.srq_limit = 4096;
	cr_assert_eq(ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), EINVAL);

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_SRQ), 0);
	cr_assert(dv.buf && dv.dbrec);
	cr_assert_eq(dv.stride, 64, "16 B next segment + 2 SGEs, rounded up");
	cr_assert_eq(dv.head, 0);
	cr_assert_eq(dv.tail + 1, 128);
	cr_assert_neq(dv.srqn, 0);

	struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	cr_assert_eq(be32toh(dv.dbrec[0]), 1);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

Test(srq, xrcd_semantics)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = xrc_fd,
		.oflags = 0,
	};
	struct ibv_xrcd *x1, *x2, *anon;

	/* no domain on this inode yet, and no O_CREAT */
	errno = 0;
	cr_assert_null(ibv_open_xrcd(ctx, &xa));
	cr_assert_eq(errno, EAGAIN);
	xa.oflags = O_CREAT;
	x1 = ibv_open_xrcd(ctx, &xa);
	cr_assert(x1, "%s", strerror(errno));
	/* exists: O_EXCL fails, plain open shares */
	xa.oflags = O_CREAT | O_EXCL;
	errno = 0;
	cr_assert_null(ibv_open_xrcd(ctx, &xa));
	cr_assert_eq(errno, EINVAL);
	xa.oflags = 0;
	x2 = ibv_open_xrcd(ctx, &xa);
	cr_assert(x2);
	/* no file: a private domain */
	xa.fd = -1;
	xa.oflags = O_CREAT;
	anon = ibv_open_xrcd(ctx, &xa);
	cr_assert(anon);

	cr_assert_eq(ibv_close_xrcd(anon), 0);
	cr_assert_eq(ibv_close_xrcd(x2), 0);
	cr_assert_eq(ibv_close_xrcd(x1), 0);
	/* the last close destroyed it */
	xa.fd = xrc_fd;
	xa.oflags = 0;
	errno = 0;
	cr_assert_null(ibv_open_xrcd(ctx, &xa));
	cr_assert_eq(errno, EAGAIN);
}

static struct ibv_xrcd *open_xrcd(int oflags)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = xrc_fd,
		.oflags = oflags,
	};
	struct ibv_xrcd *x = ibv_open_xrcd(ctx, &xa);

	cr_assert(x, "open_xrcd: %s", strerror(errno));
	return x;
}

static struct ibv_qp *make_tgt(struct ibv_xrcd *x)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	cr_assert(qp, "XRC target: %s", strerror(errno));
	return qp;
}

Test(srq, xrc_srq_and_qps)
{
	struct ibv_xrcd *x = open_xrcd(O_CREAT);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 32, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.xrcd = x,
		.cq = cq,
		.pd = pd,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &sa);
	uint32_t srqn = 0;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *ini, *tgt;
	uint16_t lid;
	struct ibv_port_attr pa;

	cr_assert(srq, "XRC SRQ: %s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(srq, &srqn), 0);
	/* a real SRQ number, the one senders put in their XRC segment */
	cr_assert_neq(srqn, 0, "ibv_get_srq_num returned SRQ number 0");
	/* the domain and the CQ are pinned by the SRQ */
	cr_assert_eq(ibv_close_xrcd(x), EBUSY);
	cr_assert_eq(ibv_destroy_cq(cq), EBUSY);

	ini = ibv_create_qp_ex(ctx, &ia);
	cr_assert(ini, "XRC initiator: %s", strerror(errno));
	tgt = make_tgt(x);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	lid = pa.lid;
	cr_assert_eq(et_qp_to_rts(ini, tgt->qp_num, lid), 0);
	cr_assert_eq(et_qp_to_rts(tgt, ini->qp_num, lid), 0);

	/* the target, opened again by number in the same domain */
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt->qp_num,
		.xrcd = x,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *opened = ibv_open_qp(ctx, &oa);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	cr_assert(opened, "%s", strerror(errno));
	cr_assert_eq(opened->qp_num, tgt->qp_num);
	cr_assert_eq(ibv_query_qp(opened, &qa, IBV_QP_STATE, &qi), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_RTS);
	/*
	 * Not destroyed on purpose: libmlx5 v44's mlx5_destroy_qp() frees a
	 * doorbell record that an opened QP never had and faults, whatever
	 * the kernel answers.  Closing the device releases the handle.
	 */
	(void)opened;
	/* a QP number that is not a target of this domain */
	oa.qp_num = ini->qp_num;
	errno = 0;
	cr_assert_null(ibv_open_qp(ctx, &oa));
	cr_assert_eq(errno, EINVAL);
	/* the creator's handle goes; the opened handle keeps the QP */
	cr_assert_eq(ibv_destroy_qp(tgt), 0);
	cr_assert_eq(ibv_query_qp(opened, &qa, IBV_QP_STATE, &qi), 0);
	cr_assert_eq(qa.qp_state, IBV_QPS_RTS);

	cr_assert_eq(ibv_destroy_qp(ini), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_close_xrcd(x), EBUSY, "the opened QP pins the domain");
}

/* Two processes on the same file share one domain and its target QPs. */
Test(srq, xrcd_two_processes)
{
	struct ibv_xrcd *x = open_xrcd(O_CREAT);
	struct ibv_qp *tgt = make_tgt(x);
	struct ibv_port_attr pa;
	char out[256], qpn[32];
	char *argv_open[] = { "helper_peer", "xrc", xrc_file, qpn, NULL };
	char *argv_excl[] = { "helper_peer", "xrc-excl", xrc_file, NULL };
	int state, psn;
	unsigned got_qpn;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(et_qp_to_rts(tgt, 0x77, pa.lid), 0);
	snprintf(qpn, sizeof(qpn), "%u", tgt->qp_num);

	cr_assert_eq(et_run_helper(out, sizeof(out), 20, argv_open), 0, "helper: %s", out);
	cr_assert_eq(sscanf(out, "state %d rq_psn %d qpn %u", &state, &psn, &got_qpn), 3);
	cr_assert_eq(state, IBV_QPS_RTS);
	cr_assert_eq(psn, 0x123);
	cr_assert_eq(got_qpn, tgt->qp_num);

	/* the other process sees the domain exist: O_EXCL is EINVAL there */
	cr_assert_eq(et_run_helper(out, sizeof(out), 20, argv_excl), 0);
	cr_assert_eq(atoi(out), EINVAL, "helper: %s", out);

	cr_assert_eq(ibv_destroy_qp(tgt), 0);
	cr_assert_eq(ibv_close_xrcd(x), 0);
	/* now gone for the other process too */
	cr_assert_eq(et_run_helper(out, sizeof(out), 20, argv_excl), 0);
	cr_assert_eq(atoi(out), 0, "helper: %s", out);
}
