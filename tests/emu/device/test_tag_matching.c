/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Hardware tag matching (Documentation/tag_matching.md of rdma-core): the
 * TM caps, TM SRQs and the command QP libmlx5 creates for each, the tag
 * list operations of ibv_post_srq_ops(), through libibverbs and libmlx5
 * alone.
 */
#include <stdatomic.h>

#include <infiniband/tm_types.h>

#include "dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq_ex *cq;	/* a TM SRQ needs an extended CQ (libmlx5) */
static struct ibv_device_attr_ex dattr;

static void setup(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO,
	};

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq_ex(ctx, &ca);
	cr_assert(pd && cq, "%s", strerror(errno));
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &dattr), 0);
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(tm, .init = setup, .fini = teardown);

static struct ibv_srq *tm_srq(uint32_t max_num_tags, uint32_t max_ops, struct ibv_cq *on)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 64, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = pd,
		.cq = on,
		.tm_cap = { .max_num_tags = max_num_tags, .max_ops = max_ops },
	};

	return ibv_create_srq_ex(ctx, &sa);
}

/* mlx5_ib_query_device() from log_tag_matching_list_sz 7 and log_max_qp_sz 15 */
Test(tm, caps)
{
	cr_assert_eq(dattr.tm_caps.max_num_tags, 127);
	cr_assert_eq(dattr.tm_caps.max_ops, 32768, "the SQ depth of the command QP");
	cr_assert_eq(dattr.tm_caps.max_sge, 1);
	cr_assert_eq(dattr.tm_caps.flags, IBV_TM_CAP_RC);
	cr_assert_eq(dattr.tm_caps.max_rndv_hdr_size, 64);
}

Test(tm, create_and_destroy)
{
	struct ibv_srq *srq = tm_srq(dattr.tm_caps.max_num_tags, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_srq_attr a = {};
	uint32_t srqn = 0;

	cr_assert(srq, "%s", strerror(errno));
	cr_assert_eq(ibv_get_srq_num(srq, &srqn), 0);
	cr_assert_neq(srqn, 0);
	cr_assert_eq(ibv_query_srq(srq, &a), 0);
	cr_assert_geq(a.max_wr, 64);
	/* the CQ and PD are in use by the SRQ and its command QP */
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), EBUSY);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	/* the smallest list */
	srq = tm_srq(1, 1, ibv_cq_ex_to_cq(cq));
	cr_assert(srq, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

Test(tm, bad_attributes)
{
	struct ibv_cq *plain = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	/* a list of 2^(ilog2(n) + 1) entries must fit the device's 128 */
	errno = 0;
	cr_assert_null(tm_srq(dattr.tm_caps.max_num_tags + 1, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(tm_srq(4096, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	/* libibverbs: no list */
	errno = 0;
	cr_assert_null(tm_srq(0, 16, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(errno, EINVAL);
	/* libmlx5: TM completions are read from an extended CQ only */
	cr_assert(plain);
	errno = 0;
	cr_assert_null(tm_srq(16, 16, plain));
	cr_assert_eq(errno, EINVAL);
	/*
	 * more operations than the command QP's SQ can hold (libmlx5's
	 * unwinding of the SRQ does not keep create_qp()'s errno)
	 */
	cr_assert_null(tm_srq(16, dattr.tm_caps.max_ops + 1, ibv_cq_ex_to_cq(cq)));
	cr_assert_eq(ibv_destroy_cq(plain), 0);
}

/* One completion of the TM CQ, as ibv_start_poll() and its readers give it. */
struct tm_wc {
	uint64_t		wr_id;
	enum ibv_wc_status	status;
	enum ibv_wc_opcode	opcode;
	unsigned		wc_flags;
	uint32_t		byte_len;
	struct ibv_wc_tm_info	tm;
};

static void tm_poll(struct tm_wc *wc)
{
	struct ibv_poll_cq_attr pa = {};
	uint64_t end = dt_now_ms() + 5000;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT)
		cr_assert_lt(dt_now_ms(), end, "no completion");
	cr_assert_eq(ret, 0);
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->wc_flags = ibv_wc_read_wc_flags(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	memset(&wc->tm, 0, sizeof(wc->tm));
	if (wc->wc_flags & IBV_WC_TM_MATCH)
		ibv_wc_read_tm_info(cq, &wc->tm);
	ibv_end_poll(cq);
}

static void tm_no_more(void)
{
	struct ibv_poll_cq_attr pa = {};

	usleep(20000);
	cr_assert_eq(ibv_start_poll(cq, &pa), ENOENT, "an unexpected completion");
}

/* Post one list operation; returns ibv_post_srq_ops()'s answer. */
static int tm_op(struct ibv_srq *srq, struct ibv_ops_wr *wr)
{
	struct ibv_ops_wr *bad = NULL;

	return ibv_post_srq_ops(srq, wr, &bad);
}

static uint32_t tm_add(struct ibv_srq *srq, uint64_t tag, uint64_t mask, struct ibv_sge *sge,
		       uint64_t recv_id, int flags, uint32_t unexp)
{
	struct ibv_ops_wr wr = {
		.wr_id = 0xadd0000 + recv_id, .opcode = IBV_WR_TAG_ADD, .flags = flags,
		.tm = { .unexpected_cnt = unexp,
			.add = { .recv_wr_id = recv_id, .sg_list = sge, .num_sge = sge ? 1 : 0,
				 .tag = tag, .mask = mask } },
	};

	cr_assert_eq(tm_op(srq, &wr), 0);
	return wr.tm.handle;
}

static void tm_del(struct ibv_srq *srq, uint32_t handle, uint64_t id, int flags)
{
	struct ibv_ops_wr wr = {
		.wr_id = id, .opcode = IBV_WR_TAG_DEL, .flags = flags, .tm = { .handle = handle },
	};

	cr_assert_eq(tm_op(srq, &wr), 0);
}

/* ADD, DEL and SYNC complete on the SRQ's CQ as libmlx5 decodes them */
Test(tm, list_operations)
{
	struct ibv_srq *srq = tm_srq(16, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_ops_wr sync = { .wr_id = 77, .opcode = IBV_WR_TAG_SYNC,
				   .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC };
	char buf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr ? mr->lkey : 0 };
	struct tm_wc wc;
	uint32_t h[2];

	cr_assert(srq && mr, "%s", strerror(errno));
	h[0] = tm_add(srq, 0x1111, ~0ull, &sge, 1, IBV_OPS_SIGNALED, 0);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
	cr_assert_eq(wc.wr_id, 0xadd0001);
	cr_assert_eq(wc.wc_flags & IBV_WC_TM_SYNC_REQ, 0, "in step: 0 unexpected both sides");
	/* unsignaled: no completion; an empty buffer is allowed */
	h[1] = tm_add(srq, 0x2222, ~0ull, NULL, 2, 0, 0);
	cr_assert_neq(h[0], h[1]);
	tm_no_more();
	tm_del(srq, h[1], 5, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_DEL);
	cr_assert_eq(wc.wr_id, 5);
	tm_del(srq, h[0], 6, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.wr_id, 6);

	/*
	 * software says 3 unexpected messages were handled, the device saw
	 * none: the entry added with that count completes asking for a sync
	 */
	sync.tm.unexpected_cnt = 3;
	cr_assert_eq(tm_op(srq, &sync), 0);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_SYNC);
	cr_assert_eq(wc.wr_id, 77);
	h[0] = tm_add(srq, 0x3333, ~0ull, &sge, 3, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 3);
	tm_poll(&wc);
	cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
	cr_assert(wc.wc_flags & IBV_WC_TM_SYNC_REQ,
		  "the device's count (0) is not the entry's (3): sync asked");
	/* in step again */
	h[1] = tm_add(srq, 0x4444, ~0ull, &sge, 4, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC, 0);
	tm_poll(&wc);
	cr_assert_eq(wc.wc_flags & IBV_WC_TM_SYNC_REQ, 0);
	tm_del(srq, h[0], 8, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	tm_del(srq, h[1], 9, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);

	/* removing an entry that is not in the list fails in the CQE (last:
	 * libmlx5 then frees its entry once more) */
	tm_del(srq, h[1], 10, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_TM_ERR);
	cr_assert_eq(wc.opcode, IBV_WC_TM_DEL);
	cr_assert_eq(wc.wr_id, 10);
	tm_no_more();
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
}

/*
 * A full list: libmlx5 refuses the next ADD itself; emptied, the list takes
 * max_num_tags entries again, the device following libmlx5's free list.
 */
Test(tm, list_full)
{
	enum { N = 31 };
	struct ibv_srq *srq = tm_srq(N, 64, ibv_cq_ex_to_cq(cq));
	struct ibv_ops_wr wr = { .opcode = IBV_WR_TAG_ADD };
	uint32_t h[N];
	struct tm_wc wc;

	cr_assert(srq, "%s", strerror(errno));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++)
			h[i] = tm_add(srq, (uint64_t)i, ~0ull, NULL, (uint64_t)i,
				      i == N - 1 ? IBV_OPS_SIGNALED : 0, 0);
		cr_assert_eq(tm_op(srq, &wr), ENOMEM, "list full");
		tm_poll(&wc);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "round %d: %d", round, wc.status);
		cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
		/* removed in another order than added */
		for (int i = 0; i < N; i++) {
			tm_del(srq, h[(i * 7) % N], (uint64_t)i, IBV_OPS_SIGNALED);
			tm_poll(&wc);
			cr_assert_eq(wc.status, IBV_WC_SUCCESS, "round %d del %d", round, i);
		}
	}
	tm_no_more();
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/* An RC QP receives through a TM SRQ; the SRQ is busy while it does */
Test(tm, qp_on_tm_srq)
{
	struct ibv_srq *srq = tm_srq(32, 16, ibv_cq_ex_to_cq(cq));
	struct ibv_qp_init_attr qa = {
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq), .srq = srq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp;

	cr_assert(srq, "%s", strerror(errno));
	qp = ibv_create_qp(pd, &qa);
	cr_assert(qp, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_srq(srq), EBUSY);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
}

/*
 * On RoCE no TM SRQ can be made: libmlx5 connects the command QP to itself
 * by LID alone, and mlx5_set_path() refuses a RoCE path without a GRH.
 */
TestSuite(tm_roce, .init = setup, .fini = teardown);

Test(tm_roce, no_command_qp_without_grh)
{
	struct ibv_port_attr pa;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		cr_skip_test("run by tm::on_roce");
	cr_assert_eq(dattr.tm_caps.max_num_tags, 127, "the caps are the device's");
	cr_assert_null(tm_srq(16, 16, ibv_cq_ex_to_cq(cq)));
}

Test(tm, on_roce, .timeout = 60)
{
	test_rerun_on_roce("tm_roce/*");
}

/*
 * Messages: a sender RC QP connected to a receiver RC QP on a TM SRQ (both
 * in this process), SENDs that start with a tag-matching header.
 */
struct tm_pair {
	struct ibv_srq	*srq;
	struct ibv_cq	*scq;		/* the sender's */
	struct ibv_qp	*snd, *rcv;
	uint8_t		*buf;		/* [0, 4096) sent from, [4096, 64K) received into */
	struct ibv_mr	*mr;
};

static void tm_pair_up(struct tm_pair *t, uint8_t rnr_retry)
{
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_send_sge = 1, .max_recv_wr = 16,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	const struct dt_qp_opts o = { .rnr_retry = rnr_retry, .retry_cnt = 7, .timeout = 14 };

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	t->srq = tm_srq(32, 16, ibv_cq_ex_to_cq(cq));
	t->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	t->buf = calloc(1, DT_BUF);
	cr_assert(t->srq && t->scq && t->buf, "%s", strerror(errno));
	t->mr = ibv_reg_mr(pd, t->buf, DT_BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	qa.send_cq = qa.recv_cq = t->scq;
	t->snd = ibv_create_qp(pd, &qa);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
	qa.srq = t->srq;
	t->rcv = ibv_create_qp(pd, &qa);
	cr_assert(t->mr && t->snd && t->rcv, "%s", strerror(errno));
	cr_assert_eq(dt_connect(t->snd, t->rcv->qp_num, pa.lid, &o), 0);
	cr_assert_eq(dt_connect(t->rcv, t->snd->qp_num, pa.lid, &o), 0);
}

static void tm_pair_down(struct tm_pair *t)
{
	cr_assert_eq(ibv_destroy_qp(t->snd), 0);
	cr_assert_eq(ibv_destroy_qp(t->rcv), 0);
	cr_assert_eq(ibv_destroy_srq(t->srq), 0);
	cr_assert_eq(ibv_destroy_cq(t->scq), 0);
	cr_assert_eq(ibv_dereg_mr(t->mr), 0);
	free(t->buf);
}

/* SEND a TMH (op, tag, app_ctx) and len bytes of payload (i + seed). */
static void tm_send(struct tm_pair *t, uint8_t op, uint64_t tag, uint32_t ctxv, uint32_t len,
		    uint8_t seed)
{
	struct ibv_tmh *h = (struct ibv_tmh *)t->buf;
	struct ibv_sge sge = { (uintptr_t)t->buf, (uint32_t)sizeof(*h) + len, t->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e9d, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->tag = htobe64(tag);
	h->app_ctx = htobe32(ctxv);
	for (uint32_t i = 0; i < len; i++)
		t->buf[sizeof(*h) + i] = (uint8_t)(i + seed);
	cr_assert_eq(ibv_post_send(t->snd, &wr, &bad), 0);
}

static void tm_sent(struct tm_pair *t, enum ibv_wc_status status)
{
	struct ibv_wc wc = dt_poll1(t->scq);

	cr_assert_eq(wc.status, status, "the SEND: %s", ibv_wc_status_str(wc.status));
}

/* tm_send(), its send completion, and the TM CQ's next completion in *wc. */
static void tm_exchange(struct tm_pair *t, uint8_t op, uint64_t tag, uint32_t ctxv,
			uint32_t len, uint8_t seed, struct tm_wc *wc)
{
	tm_send(t, op, tag, ctxv, len, seed);
	tm_sent(t, IBV_WC_SUCCESS);
	tm_poll(wc);
}

static void tm_post_recv(struct tm_pair *t, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)t->buf + off, len, t->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_srq_recv(t->srq, &wr, &bad), 0);
}

static void tm_check_data(const struct tm_pair *t, uint32_t off, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		cr_assert_eq(t->buf[off + i], (uint8_t)(i + seed), "byte %u", i);
}

/* An expected eager message lands in its tagged buffer, its header in the CQE */
Test(tm, eager_expected)
{
	struct tm_pair t;
	struct ibv_sge sge[3];
	struct tm_wc wc;

	tm_pair_up(&t, 7);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)t.buf + 8192 + 4096 * (uint32_t)i, 4096,
					   t.mr->lkey };
	tm_add(t.srq, 0x55, ~0ull, &sge[0], 100, 0, 0);
	/* a mask: 0x12xx; and two entries for one tag: the earlier wins */
	tm_add(t.srq, 0x1200, 0xff00, &sge[1], 101, 0, 0);
	tm_add(t.srq, 0x12ab, ~0ull, &sge[2], 102, 0, 0);

	tm_exchange(&t, IBV_TMH_EAGER, 0x55, 0xc0ffee, 100, 1, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_RECV);
	cr_assert_eq(wc.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID),
		     IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID);
	cr_assert_eq(wc.wr_id, 100);
	cr_assert_eq(wc.byte_len, 100, "the data, without the header");
	cr_assert_eq(wc.tm.tag, 0x55);
	cr_assert_eq(wc.tm.priv, 0xc0ffee);
	tm_check_data(&t, 8192, 100, 1);

	tm_exchange(&t, IBV_TMH_EAGER, 0x12ab, 7, 3000, 9, &wc);
	cr_assert_eq(wc.wr_id, 101, "the first entry posted that matches");
	cr_assert_eq(wc.byte_len, 3000);
	cr_assert_eq(wc.tm.tag, 0x12ab);
	tm_check_data(&t, 12288, 3000, 9);
	tm_exchange(&t, IBV_TMH_EAGER, 0x12ab, 8, 0, 0, &wc);
	cr_assert_eq(wc.wr_id, 102, "then the other; an empty message");
	cr_assert_eq(wc.byte_len, 0);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	tm_no_more();
	tm_pair_down(&t);
}

/*
 * No entry: the message, header and all, goes to an SRQ buffer and counts
 * as unexpected; until software reports it handled, the device matches
 * nothing.  A message without a tag never matches.
 */
Test(tm, unexpected_and_no_tag)
{
	struct tm_pair t;
	struct ibv_sge sge = { 0, 4096, 0 };
	struct tm_wc wc;
	uint32_t h;

	tm_pair_up(&t, 7);
	sge.addr = (uintptr_t)t.buf + 32768;
	sge.lkey = t.mr->lkey;
	for (int i = 0; i < 4; i++)
		tm_post_recv(&t, 200 + (uint64_t)i, 8192 + 4096 * (uint32_t)i, 4096);

	tm_exchange(&t, IBV_TMH_EAGER, 0x77, 1, 50, 3, &wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_TM_RECV);
	cr_assert_eq(wc.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), 0);
	cr_assert_eq(wc.wr_id, 200);
	cr_assert_eq(wc.byte_len, sizeof(struct ibv_tmh) + 50, "the header too");
	cr_assert_eq(t.buf[8192], IBV_TMH_EAGER);
	tm_check_data(&t, 8192 + sizeof(struct ibv_tmh), 50, 3);

	/* software has not yet reported it: a matching entry is not used */
	h = tm_add(t.srq, 0x77, ~0ull, &sge, 300, IBV_OPS_SIGNALED, 0);
	tm_poll(&wc);
	cr_assert_eq(wc.opcode, IBV_WC_TM_ADD);
	cr_assert(wc.wc_flags & IBV_WC_TM_SYNC_REQ, "1 unexpected, the entry knows of 0");
	tm_exchange(&t, IBV_TMH_EAGER, 0x77, 2, 10, 4, &wc);
	cr_assert_eq(wc.wr_id, 201, "unexpected again");
	cr_assert_eq(wc.wc_flags & IBV_WC_TM_MATCH, 0);
	/* both handled: the device matches again */
	tm_del(t.srq, h, 301, IBV_OPS_SIGNALED);
	tm_poll(&wc);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	tm_add(t.srq, 0x77, ~0ull, &sge, 302, IBV_OPS_TM_SYNC, 2);
	tm_exchange(&t, IBV_TMH_EAGER, 0x77, 3, 20, 5, &wc);
	cr_assert_eq(wc.wr_id, 302);
	cr_assert(wc.wc_flags & IBV_WC_TM_MATCH);
	tm_check_data(&t, 32768, 20, 5);

	/* no tag: the opcode says so, or the message is shorter than a header */
	tm_exchange(&t, IBV_TMH_NO_TAG, 0x77, 4, 30, 6, &wc);
	cr_assert_eq(wc.opcode, IBV_WC_TM_NO_TAG);
	cr_assert_eq(wc.wr_id, 202);
	cr_assert_eq(wc.byte_len, sizeof(struct ibv_tmh) + 30);
	{
		struct ibv_sge s = { (uintptr_t)t.buf, 8, t.mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		t.buf[0] = IBV_TMH_EAGER;
		cr_assert_eq(ibv_post_send(t.snd, &wr, &bad), 0);
		tm_sent(&t, IBV_WC_SUCCESS);
		tm_poll(&wc);
		cr_assert_eq(wc.opcode, IBV_WC_TM_NO_TAG);
		cr_assert_eq(wc.wr_id, 203);
		cr_assert_eq(wc.byte_len, 8);
	}
	tm_no_more();
	tm_pair_down(&t);
}

/*
 * A tagged message longer than its buffer: nothing is written, the sender
 * gets a NAK (invalid request) and the receiving QP fails.
 */
Test(tm, eager_longer_than_buffer)
{
	struct tm_pair t;
	struct ibv_sge sge;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	tm_pair_up(&t, 7);
	sge = (struct ibv_sge){ (uintptr_t)t.buf + 8192, 64, t.mr->lkey };
	tm_add(t.srq, 0x99, ~0ull, &sge, 400, 0, 0);
	tm_send(&t, IBV_TMH_EAGER, 0x99, 0, 65, 1);
	tm_sent(&t, IBV_WC_REM_INV_REQ_ERR);
	cr_assert_eq(t.buf[8192], 0, "nothing written");
	cr_assert_eq(ibv_query_qp(t.rcv, &a, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(a.qp_state, IBV_QPS_ERR);
	tm_pair_down(&t);
}

/* SEND a rendezvous request: TMH (RNDV, tag, app_ctx) and RVH (va, rkey, len). */
static void tm_send_rndv(struct tm_pair *t, uint64_t tag, uint32_t ctxv, uint64_t va,
			 uint32_t rkey, uint32_t len)
{
	struct ibv_tmh *h = (struct ibv_tmh *)t->buf;
	struct ibv_rvh *r = (struct ibv_rvh *)(h + 1);
	struct ibv_sge sge = { (uintptr_t)t->buf, sizeof(*h) + sizeof(*r), t->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x5e9d, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	memset(h, 0, sizeof(*h));
	h->opcode = IBV_TMH_RNDV;
	h->tag = htobe64(tag);
	h->app_ctx = htobe32(ctxv);
	r->va = htobe64(va);
	r->rkey = htobe32(rkey);
	r->len = htobe32(len);
	cr_assert_eq(ibv_post_send(t->snd, &wr, &bad), 0);
}

/*
 * A matched rendezvous request: the tag's first completion (MATCH, the
 * header), the device READs the sender's buffer into the tagged one, sends
 * the FIN, and the tag completes again (DATA_VALID).  A READ that fails
 * completes the tag as IBV_WC_TM_RNDV_INCOMPLETE.
 */
Test(tm, rendezvous)
{
	struct tm_pair t;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 0xf1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_sge fsge;
	struct ibv_wc wc[2];
	struct tm_wc twc;
	uint8_t *fin;

	tm_pair_up(&t, 7);
	/* the sender receives the FIN */
	fsge = (struct ibv_sge){ (uintptr_t)t.buf + 60000, 64, t.mr->lkey };
	rwr.sg_list = &fsge;
	cr_assert_eq(ibv_post_recv(t.snd, &rwr, &rbad), 0);
	for (uint32_t i = 0; i < 3000; i++)
		t.buf[1024 + i] = (uint8_t)(i * 7);
	sge = (struct ibv_sge){ (uintptr_t)t.buf + 8192, 4096, t.mr->lkey };
	tm_add(t.srq, 0x42, ~0ull, &sge, 500, 0, 0);
	tm_send_rndv(&t, 0x42, 0xabc, (uintptr_t)t.buf + 1024, t.mr->rkey, 3000);

	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_SUCCESS);
	cr_assert_eq(twc.opcode, IBV_WC_TM_RECV);
	cr_assert_eq(twc.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID), IBV_WC_TM_MATCH);
	cr_assert_eq(twc.wr_id, 500);
	cr_assert_eq(twc.tm.tag, 0x42);
	cr_assert_eq(twc.tm.priv, 0xabc);
	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_SUCCESS);
	cr_assert_eq(twc.opcode, IBV_WC_TM_RECV);
	cr_assert_eq(twc.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID),
		     IBV_WC_TM_DATA_VALID);
	cr_assert_eq(twc.wr_id, 500);
	cr_assert_eq(twc.byte_len, 3000);
	for (uint32_t i = 0; i < 3000; i++)
		cr_assert_eq(t.buf[8192 + i], (uint8_t)(i * 7), "byte %u", i);
	/* the sender: its SEND, then the FIN */
	cr_assert_eq(dt_poll(t.scq, wc, 2, 5000), 2);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, IBV_WC_SEND);
	cr_assert_eq(wc[1].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[1].opcode, IBV_WC_RECV);
	cr_assert_eq(wc[1].wr_id, 0xf1);
	cr_assert_eq(wc[1].byte_len, sizeof(struct ibv_tmh));
	fin = t.buf + 60000;
	cr_assert_eq(fin[0], IBV_TMH_FIN);
	cr_assert_eq(be64toh(((struct ibv_tmh *)fin)->tag), 0x42);

	/* a READ the sender's key does not allow: the tag completes, incomplete */
	tm_add(t.srq, 0x43, ~0ull, &sge, 501, 0, 0);
	tm_send_rndv(&t, 0x43, 0, (uintptr_t)t.buf + 1024, t.mr->rkey ^ 0x80, 100);
	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_SUCCESS);
	cr_assert_eq(twc.wr_id, 501);
	cr_assert(twc.wc_flags & IBV_WC_TM_MATCH);
	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_TM_RNDV_INCOMPLETE);
	cr_assert_eq(twc.wr_id, 501);
	tm_pair_down(&t);
}

/* A TAG_MATCHING WQE (op, entry index) written at BB 0 of qp's SQ and rung. */
static void tm_raw_op(struct ibv_qp *qp, uint8_t op, uint16_t index)
{
	struct mlx5dv_qp dv;
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };
	uint16_t be_index = htobe16(index);
	uint8_t *w;
	uint64_t db;

	memset(&dv, 0, sizeof(dv));
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	w = dv.sq.buf;
	memset(w, 0, 64);
	mlx5dv_set_ctrl_seg((void *)w, 0, MLX5_OPCODE_TAG_MATCHING, 0, qp->qp_num,
			    MLX5_WQE_CTRL_CQ_UPDATE, 4, 0, 0);
	w[16] = (uint8_t)(op << 4);
	memcpy(w + 18, &be_index, 2);
	atomic_thread_fence(memory_order_release);
	dv.dbrec[MLX5_SND_DBR] = htobe32(1);
	atomic_thread_fence(memory_order_seq_cst);
	memcpy(&db, w, 8);
	*(volatile uint64_t *)dv.bf.reg = db;
}

/*
 * A list operation the device cannot carry out is a local QP operation
 * error: on a QP that receives through no TM SRQ, or naming an entry
 * beyond the list.
 */
Test(tm, bad_list_operations)
{
	struct tm_pair t;
	struct ibv_wc wc;
	struct tm_wc twc;
	struct ibv_ops_wr sync = { .wr_id = 1, .opcode = IBV_WR_TAG_SYNC,
				   .flags = IBV_OPS_SIGNALED };

	tm_pair_up(&t, 7);
	/* through the command QP, the operation works */
	cr_assert_eq(tm_op(t.srq, &sync), 0);
	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_SUCCESS);
	cr_assert_eq(twc.opcode, IBV_WC_TM_SYNC);
	tm_raw_op(t.snd, 1, 0);
	wc = dt_poll1(t.scq);
	cr_assert_eq(wc.status, IBV_WC_LOC_QP_OP_ERR, "%s", ibv_wc_status_str(wc.status));
	/* the receiver's list has 64 entries (32 tags asked) */
	tm_raw_op(t.rcv, 2, 64);
	tm_poll(&twc);
	cr_assert_eq(twc.status, IBV_WC_LOC_QP_OP_ERR, "%s", ibv_wc_status_str(twc.status));
	tm_pair_down(&t);
}
