/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/e2e/e2e.h - a loopback fixture for end-to-end tests: one device
 * context, two RC QPs connected to each other (a -> b), each with its own
 * CQ taken over by rdmafast, and registered buffers on both sides. Runs on
 * the emulated HCA (build/rfemu) or, with RF_DEVICE=hw, a real ConnectX.
 */
#ifndef RDMAFAST_TESTS_E2E_H
#define RDMAFAST_TESTS_E2E_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include <rdmafast/verbs.h>

#include "../on_roce.h"

enum { E2E_BUF = 1 << 16, E2E_TIMEOUT_MS = 20000 };

/*
 * The checked build (-DRF_CHECKED): a test that misuses rdmafast on
 * purpose announces the rule it breaks, and then asserts the report with
 * a word of its message; any other report aborts (test_e2e_checked.c).
 * Unchecked, both are nothing.
 */
#ifdef RF_CHECKED
void e2e_checked_expect(enum rf_checked_rule rule);
int e2e_checked_count(enum rf_checked_rule rule);
const char *e2e_checked_last(void);
#define E2E_CHECKED_EXPECT(rule) e2e_checked_expect(rule)
#define E2E_CHECKED_ASSERT(rule, word)						\
	do {									\
		cr_assert_gt(e2e_checked_count(rule), 0, "no report of rule %d", (int)(rule)); \
		cr_assert(strstr(e2e_checked_last(), word), "%s", e2e_checked_last()); \
	} while (0)
#else
#define E2E_CHECKED_EXPECT(rule) ((void)0)
#define E2E_CHECKED_ASSERT(rule, word) ((void)0)
#endif

struct e2e_side {
	struct ibv_cq *ibcq;
	struct rf_cq cq;
	struct rf_qp qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

struct e2e {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;	/* b's CQ reports here */
	struct ibv_port_attr port;
	struct e2e_side a, b;
};

/* Options: what the QPs look like. Zeros: RC, 64 WRs, 64 inline, 4 SGEs. */
struct e2e_opts {
	enum ibv_qp_type type;
	uint32_t max_send_wr;
	uint32_t max_inline;
	uint32_t sge;
	uint32_t cqe;
	uint32_t cqe_size;
	int rnr_retry_zero;	/* b's peer a gets rnr_retry 0 */
	int with_channel;
	int allow_scatter;
	int timestamps;		/* CQs from rf_cq_create_ts_ibv() */
	uint32_t mini_format;	/* CQE compression: RF_MINI_CQE_RES_FORMAT_* */
	int cqe_pad;		/* 64-byte CQEs at a 128-byte stride (e2e_cq_create_padded()) */
};

static inline long e2e_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * A CQ of padded CQEs (MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD, which libmlx5
 * takes with 128-byte CQEs only), taken over by rdmafast as one of
 * 128-byte CQEs: the CQE64 is in the second half of each entry either way.
 */
static inline int e2e_cq_create_padded(struct rf_cq *cq, struct ibv_cq **out,
				       struct ibv_context *ctx, int ncqe,
				       struct ibv_comp_channel *ch)
{
	struct ibv_cq_init_attr_ex ax;
	struct mlx5dv_cq_init_attr dx;
	struct ibv_cq_ex *cqx;
	int rc;

	memset(&ax, 0, sizeof(ax));
	memset(&dx, 0, sizeof(dx));
	ax.cqe = (uint32_t)ncqe;
	ax.channel = ch;
	dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
	dx.flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD;
	dx.cqe_size = 128;
	cqx = mlx5dv_create_cq(ctx, &ax, &dx);
	if (!cqx)
		return -errno;
	*out = ibv_cq_ex_to_cq(cqx);
	rc = rf_cq_init_ibv(cq, *out);
	if (rc)
		ibv_destroy_cq(*out);
	return rc;
}

static inline void e2e_side_open(struct e2e *e, struct e2e_side *s, const struct e2e_opts *o,
				 struct ibv_comp_channel *ch)
{
	struct rf_qp_init_attr qa;
	int rc;

	s->buf = (uint8_t *)aligned_alloc(4096, E2E_BUF);
	cr_assert_not_null(s->buf);
	memset(s->buf, 0, E2E_BUF);
	s->mr = ibv_reg_mr(e->pd, s->buf, E2E_BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			   IBV_ACCESS_MW_BIND);
	cr_assert_not_null(s->mr, "reg_mr: %s", strerror(errno));
	if (o->timestamps)
		rc = rf_cq_create_ts_ibv(&s->cq, &s->ibcq, e->ctx, (int)(o->cqe ? o->cqe : 256),
					 ch, o->cqe_size, 0);
	else if (o->cqe_pad)
		rc = e2e_cq_create_padded(&s->cq, &s->ibcq, e->ctx, (int)(o->cqe ? o->cqe : 256),
					  ch);
	else if (o->mini_format)
		rc = rf_cq_create_zip_ibv(&s->cq, &s->ibcq, e->ctx, (int)(o->cqe ? o->cqe : 256),
					  ch, o->cqe_size, o->mini_format);
	else
		rc = rf_cq_create_ibv(&s->cq, &s->ibcq, e->ctx, (int)(o->cqe ? o->cqe : 256), ch,
				      o->cqe_size);
	cr_assert_eq(rc, 0, "cq: %s", strerror(-rc));
	memset(&qa, 0, sizeof(qa));
	qa.pd = e->pd;
	qa.send_cq = s->ibcq;
	qa.recv_cq = s->ibcq;
	qa.qp_type = o->type ? o->type : IBV_QPT_RC;
	qa.max_send_wr = o->max_send_wr ? o->max_send_wr : 64;
	qa.max_recv_wr = 64;
	qa.max_send_sge = o->sge ? o->sge : 4;
	qa.max_recv_sge = o->sge ? o->sge : 4;
	qa.max_inline_data = o->max_inline ? o->max_inline : 64;
	qa.allow_scatter_to_cqe = o->allow_scatter;
	rc = rf_qp_create_ibv(&s->qp, &qa);
	cr_assert_eq(rc, 0, "qp: %s", strerror(-rc));
	cr_assert_eq(rf_cq_attach(&s->cq, s->qp.qpn, &s->qp.sq,
				  s->qp.has_rq ? &s->qp.rq : NULL, NULL), 0);
}

/*
 * e->port; under the emulator with RFEMU_LINK_LAYER=eth (e2e_rerun_on_roce())
 * it must be on RoCE: a re-run that found InfiniBand would prove nothing.
 */
static inline void e2e_query_port(struct e2e *e)
{
	const char *ll = getenv("RFEMU_LINK_LAYER");

	cr_assert_eq(ibv_query_port(e->ctx, 1, &e->port), 0);
	if (getenv("RFEMU_LIB") && ll && !strcmp(ll, "eth"))
		cr_assert_eq(e->port.link_layer, IBV_LINK_LAYER_ETHERNET,
			     "RFEMU_LINK_LAYER=eth, and the port is not on RoCE");
}

static inline void e2e_open(struct e2e *e, const struct e2e_opts *o)
{
	struct ibv_device **list;
	struct rf_qp_conn_attr ca;
	struct rf_qp_peer pa, pb;
	int n = 0, rc;

	memset(e, 0, sizeof(*e));
	list = ibv_get_device_list(&n);
	cr_assert(list && n > 0, "no RDMA device (run under build/rfemu)");
	e->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert_not_null(e->ctx);
	cr_assert_eq(rf_device_check_ibv(e->ctx), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	cr_assert_not_null(e->pd);
	e2e_query_port(e);
	if (o->with_channel) {
		e->ch = ibv_create_comp_channel(e->ctx);
		cr_assert_not_null(e->ch);
	}
	e2e_side_open(e, &e->a, o, NULL);
	e2e_side_open(e, &e->b, o, e->ch);

	memset(&pa, 0, sizeof(pa));
	memset(&pb, 0, sizeof(pb));
	pa.qpn = e->a.qp.qpn;
	pa.psn = 0x100;
	pa.lid = e->port.lid;
	pb.qpn = e->b.qp.qpn;
	pb.psn = 0x200;
	pb.lid = e->port.lid;
	memset(&ca, 0, sizeof(ca));
	/* the tests write, read and do atomics on each other's buffers */
	ca.access = RF_ACCESS_REMOTE_ALL;
	ca.gid_index = -1;
	if (e->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		ca.gid_index = 0;
		cr_assert_eq(ibv_query_gid(e->ctx, 1, 0, &pa.gid), 0);
		pb.gid = pa.gid;
	}
	ca.psn = pa.psn;
	ca.timeout = 12;
	ca.retry_cnt = 2;
	if (o->rnr_retry_zero) {
		ca.rnr_retry_set = 1;
		ca.rnr_retry = 0;
		ca.min_rnr_timer = 1;
	}
	rc = rf_qp_connect_ibv(&e->a.qp, &ca, &pb);
	cr_assert_eq(rc, 0, "connect a: %s", strerror(-rc));
	ca.psn = pb.psn;
	rc = rf_qp_connect_ibv(&e->b.qp, &ca, &pa);
	cr_assert_eq(rc, 0, "connect b: %s", strerror(-rc));
}

static inline void e2e_side_close(struct e2e_side *s)
{
	rf_cq_detach(&s->cq, s->qp.qpn);
	rf_qp_destroy_ibv(&s->qp);
	ibv_destroy_cq(s->ibcq);
	ibv_dereg_mr(s->mr);
	free(s->buf);
}

static inline void e2e_close(struct e2e *e)
{
	e2e_side_close(&e->a);
	e2e_side_close(&e->b);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
}

/*
 * The tests filter names again on RoCE v2 (tests/on_roce.h), where
 * e2e_query_port() asserts the port is Ethernet. On a real device the link
 * layer is what it is: skipped.
 */
static inline void e2e_rerun_on_roce(const char *filter)
{
	if (!getenv("RFEMU_LIB"))
		cr_skip_test("a real device: its link layer is what it is");
	test_rerun_on_roce(filter);
}

/* Poll cq until exactly n records arrived (asserting on timeout). */
static inline void e2e_wait(struct rf_cq *cq, struct rf_wc *wc, int n)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int got = 0;

	while (got < n) {
		got += rf_cq_poll(cq, wc + got, n - got);
		cr_assert(e2e_now_ms() < end, "timeout: %d of %d completions", got, n);
	}
}

/* Poll for up to ms milliseconds; returns how many arrived (<= n). */
static inline int e2e_poll_for(struct rf_cq *cq, struct rf_wc *wc, int n, long ms)
{
	long end = e2e_now_ms() + ms;
	int got = 0;

	while (got < n && e2e_now_ms() < end)
		got += rf_cq_poll(cq, wc + got, n - got);
	return got;
}

/*
 * The TCP port of the n-th (0..99) loopback port a test listens on: from
 * RF_E2E_TCP_PORT when set (several builds testing on one host take
 * ranges of their own), else from 19130.
 */
static inline uint16_t e2e_tcp_port(int n)
{
	const char *b = getenv("RF_E2E_TCP_PORT");
	long base = b && *b ? strtol(b, NULL, 10) : 19130;

	return (uint16_t)(base + n);
}

static inline uint64_t e2e_addr(const struct e2e_side *s, size_t off)
{
	return (uint64_t)(uintptr_t)(s->buf + off);
}

#endif /* RDMAFAST_TESTS_E2E_H */
