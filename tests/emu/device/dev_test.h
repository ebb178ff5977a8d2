/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dev_test.h - fixtures for the device-model tests: a loopback pair of QPs
 * on one emulated HCA, driven through libmlx5's own data path.
 */
#ifndef RDMAFAST_TESTS_DEV_TEST_H
#define RDMAFAST_TESTS_DEV_TEST_H

#include <poll.h>
#include <sys/mman.h>
#include <time.h>

#include "emu_test.h"

#define DT_BUF		(64 * 1024)
#define DT_ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_MW_BIND)

struct dt {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq[2];		/* [i] serves qp[i] (send and recv) */
	struct ibv_qp		*qp[2];
	uint8_t			*buf[2];
	struct ibv_mr		*mr[2];
	uint16_t		lid;
};

struct dt_qp_opts {
	enum ibv_qp_type	type;
	uint8_t			rnr_retry;
	uint8_t			retry_cnt;
	uint8_t			timeout;
	uint8_t			min_rnr_timer;
	int			sq_sig_all;
	uint32_t		max_send_wr;
	uint32_t		max_inline_data;	/* 0: 128 */
	struct ibv_srq		*srq;
	/* mlx5dv_create_qp() with the UMR send operations (MR list, interleaved, configure) */
	bool			umr;
	/* and with MLX5DV_QP_CREATE_SIG_PIPELINING */
	bool			sig_pipelining;
};

static inline uint64_t dt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Port 1's traffic counter `name`, as sysfs counters/ shows it. */
static inline unsigned long long dt_port_counter(const char *name)
{
	char path[128], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/mlx5_0/ports/1/counters/%s", name);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert(fgets(buf, sizeof(buf), f));
	fclose(f);
	return strtoull(buf, NULL, 10);
}

/* Poll n completions within ms milliseconds; backs off instead of spinning. */
static inline int dt_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned ms)
{
	uint64_t end = dt_now_ms() + ms;
	int got = 0;
	unsigned idle = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		cr_assert_geq(r, 0, "ibv_poll_cq: %d", r);
		got += r;
		if (r) {
			idle = 0;
			continue;
		}
		if (dt_now_ms() > end)
			break;
		if (++idle > 100)
			usleep(50);
		else
			sched_yield();
	}
	return got;
}

/*
 * Fresh anonymous pages at [at, at + len), every byte fill: an ODP MR's
 * pages appearing (or being replaced) after its registration.
 */
static inline void dt_map_fresh(uint8_t *at, size_t len, uint8_t fill)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	cr_assert_eq(p, (void *)at, "mmap: %s", strerror(errno));
	memset(at, fill, len);
}

/* Every byte of [p, p + n) is v. */
static inline void dt_assert_bytes(const uint8_t *p, uint8_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(p[i], v, "byte %zu: 0x%02x, want 0x%02x", i, p[i], v);
}

/* Exactly one completion, or fail. */
static inline struct ibv_wc dt_poll1(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	cr_assert_eq(dt_poll(cq, &wc, 1, 5000), 1, "no completion within 5 s");
	return wc;
}

/*
 * The CQE64 of the entry ibv_poll_cq() took last from cq: libmlx5 leaves
 * it in the ring and its consumer index in the CQ's doorbell record.
 */
static inline const uint8_t *dt_last_cqe64(struct ibv_cq *cq)
{
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = cq, .out = &dv } };
	uint32_t ci;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	ci = be32toh(dv.dbrec[0]) & 0xffffff;
	return (const uint8_t *)dv.buf + (size_t)((ci - 1) & (dv.cqe_cnt - 1)) * dv.cqe_size +
	       dv.cqe_size - 64;
}

/* Assert that no completion arrives within ms. */
static inline void dt_poll_none(struct ibv_cq *cq, unsigned ms)
{
	struct ibv_wc wc;

	cr_assert_eq(dt_poll(cq, &wc, 1, ms), 0,
		     "unexpected completion: status %d opcode %d", wc.status, wc.opcode);
}

/* Whether ch has an event within ms; if so, it is cq's, taken and acknowledged. */
static inline bool dt_event_within(struct ibv_comp_channel *ch, struct ibv_cq *cq, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (poll(&p, 1, ms) != 1)
		return false;
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_assert_eq(ev_cq, cq, "the event is another CQ's");
	ibv_ack_cq_events(ev_cq, 1);
	return true;
}

static inline int dt_connect(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid,
			     const struct dt_qp_opts *o)
{
	const struct qpu_conn c = {
		.dqpn = dqpn, .dlid = dlid, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = 0x11111111,
		.rq_psn = 0x100, .sq_psn = 0x100,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = o->min_rnr_timer ? o->min_rnr_timer : 1,
		.max_rd_atomic = 4, .timeout = o->timeout, .retry_cnt = o->retry_cnt,
		.rnr_retry = o->rnr_retry,
	};

	return qpu_bring_up(qp, &c);
}

/* A DCI from RESET to RTS: port 1, path MTU mtu, SQ PSN 0x10, rnr_retry 7. */
static inline void dt_dci_to_rts(struct ibv_qp *dci, enum ibv_mtu mtu, uint8_t timeout,
				 uint8_t retry, uint8_t max_rd_atomic)
{
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	cr_assert_eq(ibv_modify_qp(dci, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), 0);
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = mtu;
	cr_assert_eq(ibv_modify_qp(dci, &m, IBV_QP_STATE | IBV_QP_PATH_MTU), 0);
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTS;
	m.timeout = timeout;
	m.retry_cnt = retry;
	m.rnr_retry = 7;
	m.max_rd_atomic = max_rd_atomic;
	m.sq_psn = 0x10;
	cr_assert_eq(ibv_modify_qp(dci, &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_SQ_PSN), 0);
}

static inline struct ibv_qp *dt_create_qp(struct dt *t, int i, const struct dt_qp_opts *o)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = t->cq[i],
		.recv_cq = t->cq[i],
		.srq = o->srq,
		.cap = {
			.max_send_wr = o->max_send_wr ? o->max_send_wr : 64,
			.max_recv_wr = 64,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = o->max_inline_data ? o->max_inline_data : 128,
		},
		.qp_type = o->type,
		.sq_sig_all = o->sq_sig_all,
	};
	struct ibv_qp_init_attr_ex ix = {
		.send_cq = ia.send_cq, .recv_cq = ia.recv_cq, .cap = ia.cap,
		.qp_type = ia.qp_type, .sq_sig_all = ia.sq_sig_all, .pd = t->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV,
	};
	/*
	 * Without scatter to CQE: libmlx5 copies a small message from the CQE
	 * to the receive's addresses itself, which an indirect key's are not.
	 */
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |
			     MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
		.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE,
		.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST | MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
				  MLX5DV_QP_EX_WITH_MKEY_CONFIGURE,
	};
	struct ibv_qp *qp;

	if (o->sig_pipelining)
		dv.create_flags |= MLX5DV_QP_CREATE_SIG_PIPELINING;
	qp = o->umr ? mlx5dv_create_qp(t->ctx, &ix, &dv) : ibv_create_qp(t->pd, &ia);

	cr_assert(qp, "create qp: %s", strerror(errno));
	return qp;
}

static inline void dt_setup_opts(struct dt *t, const struct dt_qp_opts *o)
{
	struct ibv_port_attr pa;

	memset(t, 0, sizeof(*t));
	t->ctx = et_open();
	cr_assert_eq(ibv_query_port(t->ctx, 1, &pa), 0);
	t->lid = pa.lid;
	t->pd = ibv_alloc_pd(t->ctx);
	cr_assert(t->pd);
	for (int i = 0; i < 2; i++) {
		t->cq[i] = ibv_create_cq(t->ctx, 256, NULL, NULL, 0);
		cr_assert(t->cq[i]);
		t->buf[i] = aligned_alloc(4096, DT_BUF);
		cr_assert(t->buf[i]);
		memset(t->buf[i], 0, DT_BUF);
		t->mr[i] = ibv_reg_mr(t->pd, t->buf[i], DT_BUF, DT_ACC_ALL);
		cr_assert(t->mr[i], "ibv_reg_mr: %s", strerror(errno));
	}
	for (int i = 0; i < 2; i++)
		t->qp[i] = dt_create_qp(t, i, o);
	if (o->type != IBV_QPT_UD)
		for (int i = 0; i < 2; i++)
			cr_assert_eq(dt_connect(t->qp[i], t->qp[!i]->qp_num, t->lid, o), 0,
				     "connect: %s", strerror(errno));
	else
		for (int i = 0; i < 2; i++)
			cr_assert_eq(dt_connect(t->qp[i], 0, 0, o), 0);
}

static inline void dt_setup(struct dt *t)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
	};

	dt_setup_opts(t, &o);
}

static inline void dt_teardown(struct dt *t)
{
	for (int i = 0; i < 2; i++)
		if (t->qp[i])
			cr_expect_eq(ibv_destroy_qp(t->qp[i]), 0);
	for (int i = 0; i < 2; i++) {
		cr_expect_eq(ibv_dereg_mr(t->mr[i]), 0);
		cr_expect_eq(ibv_destroy_cq(t->cq[i]), 0);
		free(t->buf[i]);
	}
	cr_expect_eq(ibv_dealloc_pd(t->pd), 0);
	cr_expect_eq(ibv_close_device(t->ctx), 0);
}

static inline void dt_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr,
				uint32_t len, uint32_t lkey)
{
	struct ibv_sge s = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_recv(qp, &wr, &bad), 0);
}

/* A raw packet QP to RTS on port 1: the port, then nothing else. */
static inline void dt_raw_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), 0);
	a.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	cr_assert_eq(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
}

/*
 * A raw packet QP on cq (16 WRs and one SGE each way) in RTS on port 1;
 * the test skips where creating it takes CAP_NET_RAW the process lacks.
 * self_lb: mlx5dv's TIR flags that let it receive the frames of its own
 * context (its transport domain), which it does not by default.
 */
#define DT_SELF_LB	(MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC | \
			 MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC)

static inline struct ibv_qp *dt_raw_qp(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t self_lb)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RAW_PACKET, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS,
					  .create_flags = self_lb };
	struct ibv_qp *qp = mlx5dv_create_qp(pd->context, &ia, &dv);

	if (!qp && errno == EPERM)
		cr_skip_test("needs CAP_NET_RAW (root)");
	cr_assert(qp, "%s", strerror(errno));
	dt_raw_to_rts(qp);
	return qp;
}

static inline void dt_post(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	cr_assert_eq(ibv_post_send(qp, wr, &bad), 0, "ibv_post_send: %s", strerror(errno));
}

/* Wait for one async event of the given type within ms (or fail). */
static inline void dt_expect_async(struct ibv_context *ctx, enum ibv_event_type type,
				   unsigned ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	uint64_t end = dt_now_ms() + ms;

	for (;;) {
		int left = (int)(end - dt_now_ms());

		cr_assert_gt(left, 0, "no async event %d within %u ms", type, ms);
		if (poll(&pfd, 1, left) <= 0)
			continue;
		cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return;
	}
}

#endif /* RDMAFAST_TESTS_DEV_TEST_H */
