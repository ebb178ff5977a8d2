/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Dynamically Connected transport in the device model, posted with
 * libmlx5's own ibv_wr_* and mlx5dv_wr_set_dc_addr(): every RC opcode from a
 * DCI reaches the DCT its WQE names, receives come from the DCT's SRQ and
 * complete on the DCT's CQ under the DCT's number; one DCI serves several
 * DCTs in turn; a wrong DC key is never answered (the DCI retries, then
 * fails) and the DCI is reset and used again; a DCT scatters a small SEND
 * into its CQE only with 128-byte CQEs.  A DCI with DCI streams (a card
 * with them: suite dev_dc_streams runs again as a ConnectX-7 and a
 * ConnectX-6 Dx) sends on several streams, and an error of one stream
 * leaves the others and the DCI running until the streams in error reach
 * log_num_errored.
 */
#include "dev_test.h"

#define DCT_KEY		0x0123456789abcdefull

static struct {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*scq, *rcq;
	struct ibv_srq		*srq;
	struct ibv_qp		*dct[2];
	struct ibv_qp		*dci;
	struct ibv_qp_ex	*qpx;
	struct mlx5dv_qp_ex	*dv;
	struct ibv_ah		*ah;
	uint8_t			*buf;
	struct ibv_mr		*mr;
	bool			roce;
	bool			streams;	/* d.dci has DCI streams */
} d;

static struct ibv_qp *create_dct_on(struct ibv_cq *cq, uint64_t key)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq,
		.srq = d.srq, .pd = d.pd, .comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = key },
	};
	struct ibv_qp *qp = mlx5dv_create_qp(d.ctx, &a, &dv);
	struct ibv_qp_attr m = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	cr_assert(qp, "DCT: %s", strerror(errno));
	cr_assert_eq(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_1024;
	m.min_rnr_timer = 1;
	m.ah_attr.port_num = 1;
	m.ah_attr.is_global = d.roce;
	cr_assert_eq(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_MIN_RNR_TIMER), 0);
	return qp;
}

static struct ibv_qp *create_dct(uint64_t key)
{
	return create_dct_on(d.rcq, key);
}

static void dci_to_rts(uint8_t timeout, uint8_t retry)
{
	dt_dci_to_rts(d.dci, IBV_MTU_1024, timeout, retry, 4);
}

/* The DCI of every test; with log_streams/log_errored DCI streams if streams. */
static struct ibv_qp *create_dci(bool streams, uint8_t log_streams, uint8_t log_errored)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = d.scq, .recv_cq = d.scq, .pd = d.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		.cap = { .max_send_wr = 32, .max_send_sge = 1, .max_inline_data = 64 },
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC |
			     (streams ? MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS : 0),
		.dc_init_attr = {
			.dc_type = MLX5DV_DCTYPE_DCI,
			.dci_streams = { .log_num_concurent = log_streams,
					 .log_num_errored = log_errored },
		},
	};
	struct ibv_qp *qp = mlx5dv_create_qp(d.ctx, &a, &dv);

	cr_assert(qp, "DCI: %s", strerror(errno));
	return qp;
}

static void use_dci(struct ibv_qp *qp)
{
	d.dci = qp;
	d.qpx = ibv_qp_to_qp_ex(d.dci);
	d.dv = mlx5dv_qp_ex_from_ibv_qp_ex(d.qpx);
	cr_assert(d.qpx && d.dv);
	dci_to_rts(14, 7);
}

static void setup_common(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa = { .port_num = 1 };

	d.ctx = et_open();
	d.pd = ibv_alloc_pd(d.ctx);
	d.scq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	d.rcq = ibv_create_cq(d.ctx, 64, NULL, NULL, 0);
	cr_assert(d.pd && d.scq && d.rcq);
	d.srq = ibv_create_srq(d.pd, &sa);
	cr_assert(d.srq);
	d.buf = calloc(1, DT_BUF);
	d.mr = ibv_reg_mr(d.pd, d.buf, DT_BUF, DT_ACC_ALL);
	cr_assert(d.buf && d.mr);

	cr_assert_eq(ibv_query_port(d.ctx, 1, &pa), 0);
	aa.dlid = pa.lid;
	d.roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (d.roce) {
		aa.is_global = 1;
		aa.grh.hop_limit = 64;
		cr_assert_eq(ibv_query_gid(d.ctx, 1, 0, &aa.grh.dgid), 0);
	}
	d.ah = ibv_create_ah(d.pd, &aa);
	cr_assert(d.ah);
	d.dct[0] = create_dct(DCT_KEY);
	d.dct[1] = create_dct(DCT_KEY + 1);
}

static void setup(void)
{
	setup_common();
	use_dci(create_dci(false, 0, 0));
}

/*
 * A DCI of 2^3 streams, 2^1 of which may be in error (the DCI fails with
 * the second), on a card with DCI streams; on one without, the plain DCI
 * and the tests skip.
 */
static void setup_streams(void)
{
	struct mlx5dv_context c = { .comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS };

	setup_common();
	cr_assert_eq(mlx5dv_query_device(d.ctx, &c), 0);
	d.streams = c.dci_streams_caps.max_log_num_concurent >= 3 &&
		    c.dci_streams_caps.max_log_num_errored >= 1;
	use_dci(create_dci(d.streams, 3, 1));
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_qp(d.dci), 0);
	cr_assert_eq(ibv_destroy_qp(d.dct[0]), 0);
	cr_assert_eq(ibv_destroy_qp(d.dct[1]), 0);
	cr_assert_eq(ibv_destroy_ah(d.ah), 0);
	cr_assert_eq(ibv_dereg_mr(d.mr), 0);
	free(d.buf);
	cr_assert_eq(ibv_destroy_srq(d.srq), 0);
	cr_assert_eq(ibv_destroy_cq(d.scq), 0);
	cr_assert_eq(ibv_destroy_cq(d.rcq), 0);
	cr_assert_eq(ibv_close_device(d.ctx), 0);
}

TestSuite(dev_dc, .init = setup, .fini = teardown, .timeout = 60);

static void srq_recv(uint64_t wr_id, void *addr, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = d.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	cr_assert_eq(ibv_post_srq_recv(d.srq, &wr, &bad), 0);
}

static void to(int i, uint64_t key)
{
	mlx5dv_wr_set_dc_addr(d.dv, d.ah, d.dct[i]->qp_num, key);
}

static void sge(uint32_t off, uint32_t len)
{
	ibv_wr_set_sge(d.qpx, d.mr->lkey, (uintptr_t)(d.buf + off), len);
}

Test(dev_dc, every_rc_opcode_reaches_the_dct)
{
	uint8_t *src = d.buf, *dst = d.buf + 4096, *rd = d.buf + 8192, *rx = d.buf + 12288;
	uint64_t *counter = (uint64_t *)(d.buf + 16384), *old = (uint64_t *)(d.buf + 16392);
	struct ibv_wc wc[8];

	for (int i = 0; i < 256; i++)
		src[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 128; i++)
		dst[2048 + i] = (uint8_t)(0xa0 + i);
	*counter = 40;
	srq_recv(11, rx, 512);
	srq_recv(12, rx + 512, 512);

	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 1;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(d.qpx, d.mr->rkey, (uintptr_t)dst);
	to(0, DCT_KEY);
	sge(0, 256);
	d.qpx->wr_id = 2;
	ibv_wr_send_imm(d.qpx, htobe32(0xfeed));
	to(0, DCT_KEY);
	sge(0, 100);
	d.qpx->wr_id = 3;
	ibv_wr_rdma_read(d.qpx, d.mr->rkey, (uintptr_t)(dst + 2048));
	to(0, DCT_KEY);
	sge(8192, 128);
	d.qpx->wr_id = 4;
	ibv_wr_atomic_fetch_add(d.qpx, d.mr->rkey, (uintptr_t)counter, 2);
	to(0, DCT_KEY);
	sge(16392, 8);
	d.qpx->wr_id = 5;
	ibv_wr_rdma_write_imm(d.qpx, d.mr->rkey, (uintptr_t)(dst + 1024), htobe32(77));
	to(0, DCT_KEY);
	sge(0, 16);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);

	cr_assert_eq(dt_poll(d.scq, wc, 5, 5000), 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS, "wr %d: %s", i,
			     ibv_wc_status_str(wc[i].status));
		cr_assert_eq(wc[i].wr_id, (uint64_t)i + 1, "in order");
		cr_assert_eq(wc[i].qp_num, d.dci->qp_num);
	}
	cr_assert_eq(memcmp(dst, src, 256), 0);
	cr_assert_eq(memcmp(rd, dst + 2048, 128), 0);
	cr_assert_eq(*old, 40);
	cr_assert_eq(*counter, 42);

	/* the receives: the DCT's SRQ and CQ, under the DCT's number */
	cr_assert_eq(dt_poll(d.rcq, wc, 2, 5000), 2);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[0].opcode, IBV_WC_RECV);
	cr_assert_eq(wc[0].wr_id, 11);
	cr_assert_eq(wc[0].byte_len, 100);
	cr_assert(wc[0].wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(be32toh(wc[0].imm_data), 0xfeed);
	cr_assert_eq(wc[0].qp_num, d.dct[0]->qp_num, "the DCT is named");
	cr_assert_eq(wc[0].src_qp, d.dci->qp_num);
	cr_assert_eq(memcmp(rx, src, 100), 0);
	cr_assert_eq(wc[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(wc[1].wr_id, 12);
	cr_assert_eq(wc[1].qp_num, d.dct[0]->qp_num);
	cr_assert_eq(be32toh(wc[1].imm_data), 77);
	dt_poll_none(d.rcq, 20);
}

Test(dev_dc, one_dci_serves_two_dcts_in_turn)
{
	struct ibv_wc wc[16];
	uint8_t *rx = d.buf + 12288;

	for (int i = 0; i < 8; i++)
		srq_recv(100 + i, rx + 256 * i, 256);
	ibv_wr_start(d.qpx);
	for (int i = 0; i < 8; i++) {
		d.qpx->wr_id = (uint64_t)i;
		d.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		ibv_wr_send(d.qpx);
		to(i % 2, DCT_KEY + (uint64_t)(i % 2));
		d.buf[i] = (uint8_t)(0x30 + i);
		ibv_wr_set_inline_data(d.qpx, d.buf + i, 1);
	}
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 8, 5000), 8);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_assert_eq(wc[i].wr_id, (uint64_t)i);
	}
	cr_assert_eq(dt_poll(d.rcq, wc, 8, 5000), 8);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
		cr_assert_eq(wc[i].qp_num, d.dct[i % 2]->qp_num, "message %d", i);
		cr_assert_eq(wc[i].byte_len, 1);
		cr_assert_eq(rx[256 * (wc[i].wr_id - 100)], 0x30 + i);
	}
}

Test(dev_dc, wrong_key_retries_out_then_the_dci_is_reset_and_reused)
{
	struct ibv_wc wc[2];
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_init_attr ia;

	/* a short transport timer and one retry, so that it fails quickly */
	cr_assert_eq(ibv_modify_qp(d.dci, &m, IBV_QP_STATE), 0);
	dci_to_rts(8, 1);
	*(uint64_t *)(d.buf + 4096) = 0;
	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 9;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(d.qpx, d.mr->rkey, (uintptr_t)(d.buf + 4096));
	to(0, DCT_KEY ^ 1);
	sge(0, 8);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 1, 10000), 1);
	cr_assert_eq(wc[0].status, IBV_WC_RETRY_EXC_ERR, "%s", ibv_wc_status_str(wc[0].status));
	cr_assert_eq(*(uint64_t *)(d.buf + 4096), 0, "nothing was written");
	cr_assert_eq(ibv_query_qp(d.dci, &m, IBV_QP_STATE, &ia), 0);
	cr_assert_eq(m.qp_state, IBV_QPS_ERR);

	/* UCX's recipe: the DCI in error goes to RESET and up again */
	m.qp_state = IBV_QPS_RESET;
	cr_assert_eq(ibv_modify_qp(d.dci, &m, IBV_QP_STATE), 0);
	dci_to_rts(14, 7);
	memset(d.buf, 0x5a, 8);
	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 10;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(d.qpx, d.mr->rkey, (uintptr_t)(d.buf + 4096));
	to(0, DCT_KEY);
	sge(0, 8);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 1, 5000), 1);
	cr_assert_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_assert_eq(wc[0].wr_id, 10);
	cr_assert_eq(memcmp(d.buf + 4096, d.buf, 8), 0);
}

/* The CQE in entry n of cq once the device wrote it (not consumed), and its scatter format. */
static uint8_t cqe_scatter_fmt(struct ibv_cq *cq, uint32_t n, const uint8_t **cqe)
{
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = cq, .out = &dv } };
	const uint8_t *e;
	volatile const uint8_t *op;
	uint64_t end = dt_now_ms() + 5000;

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	e = (const uint8_t *)dv.buf + (size_t)(n & (dv.cqe_cnt - 1)) * dv.cqe_size;
	op = e + dv.cqe_size - 1;
	while ((*op >> 4) == MLX5_CQE_INVALID || (*op & 1) != ((n / dv.cqe_cnt) & 1)) {
		cr_assert_lt(dt_now_ms(), end, "CQE %u not written within 5 s", n);
		usleep(20);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	*cqe = e;
	return *op & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64);
}

static void send_to(struct ibv_qp *dct, uint64_t key, uint32_t off, uint32_t len)
{
	struct ibv_wc wc;

	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 30;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(d.qpx);
	mlx5dv_wr_set_dc_addr(d.dv, d.ah, dct->qp_num, key);
	sge(off, len);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
}

Test(dev_dc, dct_scatters_to_cqe_only_with_128_byte_cqes)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64 };
	struct mlx5dv_cq_init_attr da = {
		.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 128,
	};
	uint8_t *rx = d.buf + 12288;
	const uint8_t *e;
	struct ibv_cq_ex *cqx = mlx5dv_create_cq(d.ctx, &ca, &da);
	struct ibv_cq *cq128;
	struct ibv_qp *dct;
	struct ibv_wc wc;

	cr_assert(cqx, "mlx5dv_create_cq: %s", strerror(errno));
	cq128 = ibv_cq_ex_to_cq(cqx);
	dct = create_dct_on(cq128, DCT_KEY + 2);
	for (int i = 0; i < 64; i++)
		d.buf[i] = (uint8_t)(0x40 + i);

	/* 128-byte CQEs: up to 64 bytes in the CQE, the receive buffer untouched */
	srq_recv(21, rx, 512);
	send_to(dct, DCT_KEY + 2, 0, 40);
	cr_assert_eq(cqe_scatter_fmt(cq128, 0, &e), MLX5_INLINE_SCATTER_64);
	cr_assert_eq(memcmp(e, d.buf, 40), 0, "the data in the first half of the entry");
	cr_assert_eq(rx[0], 0, "not in memory yet");
	cr_assert_eq(dt_poll(cq128, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.qp_num, dct->qp_num);
	cr_assert_eq(wc.byte_len, 40);
	cr_assert_eq(memcmp(rx, d.buf, 40), 0, "libmlx5 copied it to the SRQ buffer");

	/* 65 bytes do not fit */
	srq_recv(22, rx + 512, 512);
	send_to(dct, DCT_KEY + 2, 0, 65);
	cr_assert_eq(cqe_scatter_fmt(cq128, 1, &e), 0);
	cr_assert_eq(dt_poll(cq128, &wc, 1, 5000), 1);
	cr_assert_eq(memcmp(rx + 512, d.buf, 65), 0);

	/* 64-byte CQEs: never scattered, even 8 bytes */
	srq_recv(23, rx + 1024, 512);
	send_to(d.dct[0], DCT_KEY, 0, 8);
	cr_assert_eq(cqe_scatter_fmt(d.rcq, 0, &e), 0);
	cr_assert_eq(memcmp(rx + 1024, d.buf, 8), 0, "in memory at once");
	cr_assert_eq(dt_poll(d.rcq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.byte_len, 8);

	cr_assert_eq(ibv_destroy_qp(dct), 0);
	cr_assert_eq(ibv_destroy_cq(cq128), 0);
}

/*
 * A QP of type `type` on this host's port 1 at RTS, connected to dqpn there
 * (not UD), expecting PSN rq_psn, sending from PSN 0 (what a packet without
 * a DCETH meets at a new DCT context), timeout 8 and 2 retries.
 */
static struct ibv_qp *plain_qp(enum ibv_qp_type type, uint32_t dqpn, uint32_t rq_psn)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = d.scq, .recv_cq = d.scq, .qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_port_attr pa;
	union ibv_gid gid;
	struct qpu_conn c = {
		.dqpn = dqpn, .access = IBV_ACCESS_REMOTE_WRITE, .qkey = 0x11111111,
		.rq_psn = rq_psn, .max_dest_rd_atomic = 1, .min_rnr_timer = 1, .max_rd_atomic = 1,
		.timeout = 8, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct ibv_qp *qp = ibv_create_qp(d.pd, &ia);

	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	cr_assert_eq(ibv_query_port(d.ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(d.ctx, 1, 0, &gid), 0);
	c.dlid = pa.lid;
	c.dgid = d.roce ? &gid : NULL;
	cr_assert_eq(qpu_bring_up(qp, &c), 0, "bring up: %s", strerror(errno));
	return qp;
}

static void post_write(struct ibv_qp *qp, uint64_t va)
{
	struct ibv_sge s = { (uintptr_t)d.buf, 8, d.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .wr.rdma = { va, d.mr->rkey },
	}, *bad;

	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static void post_send(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dqpn)
{
	struct ibv_sge s = { (uintptr_t)d.buf, 8, d.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = dqpn, .remote_qkey = 0x11111111 },
	}, *bad;

	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
}

static bool untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * A DCT takes DC requests only: an RC WRITE, a UC SEND and a UD SEND to
 * its number (its key 0, the key a packet without a DCETH would show) are
 * dropped.  The RC requester retries out, the UC and UD ones complete;
 * the DCT's memory and its SRQ's receive are untouched.
 */
Test(dev_dc, dct_takes_dc_requests_only)
{
	struct ibv_qp *dct = create_dct(0), *qp;
	uint8_t *dst = d.buf + 4096;
	struct ibv_wc wc;

	memcpy(d.buf, "NOT DC!!", 8);
	srq_recv(1, d.buf + 8192, 64);

	qp = plain_qp(IBV_QPT_RC, dct->qp_num, 0);
	post_write(qp, (uintptr_t)dst);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 10000), 1);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "RC: status %d", wc.status);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	qp = plain_qp(IBV_QPT_UC, dct->qp_num, 0);
	post_send(qp, NULL, 0);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "UC: status %d", wc.status);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	qp = plain_qp(IBV_QPT_UD, 0, 0);
	post_send(qp, d.ah, dct->qp_num);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "UD: status %d", wc.status);
	cr_assert_eq(ibv_destroy_qp(qp), 0);

	dt_poll_none(d.rcq, 200);
	cr_assert(untouched(dst, 8), "the RC WRITE landed");
	cr_assert(untouched(d.buf + 8192, 64), "a SEND landed");
	cr_assert_eq(ibv_destroy_qp(dct), 0);
}

/*
 * A DC request to an RC QP whose peer is the DCI's number: dropped, not
 * executed nor acknowledged; the DCI retries out and the memory stays.
 */
Test(dev_dc, dc_request_to_an_rc_qp_dropped)
{
	struct ibv_qp *rc = plain_qp(IBV_QPT_RC, d.dci->qp_num, 0x10);	/* the DCI's first PSN */
	uint8_t *dst = d.buf + 4096;
	struct ibv_wc wc;

	memcpy(d.buf, "DC->RC!!", 8);
	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 1;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(d.qpx, d.mr->rkey, (uintptr_t)dst);
	mlx5dv_wr_set_dc_addr(d.dv, d.ah, rc->qp_num, DCT_KEY);
	sge(0, 8);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 10000), 1);
	cr_assert_eq(wc.status, IBV_WC_RETRY_EXC_ERR, "status %d", wc.status);
	cr_assert(untouched(dst, 8), "the DC WRITE landed in the RC QP's memory");
	dt_poll_none(d.scq, 20);
	cr_assert_eq(ibv_destroy_qp(rc), 0);
}

/* ---- on-demand paging ----------------------------------------------------- */

/*
 * DC with ODP MRs, as RC (test_odp.c): dc_odp_caps has every operation
 * and SRQ receives, so pages mapped only after the registration are used
 * on either side, and a page not mapped at the access ends the WQE as a
 * failed page fault: a local protection error for the DCI's gather, a
 * remote access error for the DCT's target.
 */
#define ODP_PAGES	2
#define ODP_LEN		(ODP_PAGES * 4096u)

static uint8_t *area;		/* ODP_LEN bytes of address space, mapped or not */
static struct ibv_mr *odp;	/* an ODP MR over area */

static void setup_odp(void)
{
	setup();
	area = mmap(NULL, ODP_LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(area, MAP_FAILED);
	cr_assert_eq(munmap(area, ODP_LEN), 0);
	odp = ibv_reg_mr(d.pd, area, ODP_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	cr_assert(odp, "ODP MR over nothing mapped: %s", strerror(errno));
}

static void teardown_odp(void)
{
	cr_expect_eq(ibv_dereg_mr(odp), 0);
	munmap(area, ODP_LEN);
	teardown();
}

TestSuite(dev_dc_odp, .init = setup_odp, .fini = teardown_odp, .timeout = 60);

/* fresh pages at area, every byte fill */
static void map_area(uint8_t fill)
{
	dt_map_fresh(area, ODP_LEN, fill);
}

/* One signaled WQE from the DCI to DCT 0 (post_op() names its operation); its status. */
static enum ibv_wc_status dc_post(void (*post_op)(uint64_t raddr, uint32_t rkey),
				  uint64_t raddr, uint32_t rkey, uint32_t lkey,
				  const void *laddr, uint32_t len)
{
	struct ibv_wc wc;

	ibv_wr_start(d.qpx);
	d.qpx->wr_id = 40;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	post_op(raddr, rkey);
	to(0, DCT_KEY);
	ibv_wr_set_sge(d.qpx, lkey, (uintptr_t)laddr, len);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.wr_id, 40);
	return wc.status;
}

static void op_send(uint64_t raddr, uint32_t rkey)
{
	(void)raddr;
	(void)rkey;
	ibv_wr_send(d.qpx);
}

static void op_write(uint64_t raddr, uint32_t rkey)
{
	ibv_wr_rdma_write(d.qpx, rkey, raddr);
}

static void op_read(uint64_t raddr, uint32_t rkey)
{
	ibv_wr_rdma_read(d.qpx, rkey, raddr);
}

/* What pyverbs' test_odp_dc_traffic needs: a SEND from ODP pages into an ODP receive on the SRQ */
Test(dev_dc_odp, send_from_and_into_odp_pages_on_the_srq)
{
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS };
	struct ibv_sge s = { (uintptr_t)(area + 4096), 4096, odp->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 41, .sg_list = &s, .num_sge = 1 }, *bad;
	struct ibv_wc wc;

	cr_assert_eq(mlx5dv_query_device(d.ctx, &dv), 0);
	cr_assert_eq(dv.dc_odp_caps & (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV),
		     IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV);
	map_area(0);
	memset(area, 0x7e, 4096);
	cr_assert_eq(ibv_post_srq_recv(d.srq, &rwr, &bad), 0);
	cr_assert_eq(dc_post(op_send, 0, 0, odp->lkey, area, 4096), IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll(d.rcq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 41);
	cr_assert_eq(wc.byte_len, 4096);
	cr_assert_eq(wc.qp_num, d.dct[0]->qp_num);
	dt_assert_bytes(area + 4096, 0x7e, 4096);
}

/* WRITE into and READ from ODP pages through the DCT, pages replaced between */
Test(dev_dc_odp, write_and_read_odp_pages)
{
	map_area(0);
	memset(d.buf, 0x3c, ODP_LEN);
	cr_assert_eq(dc_post(op_write, (uintptr_t)area, odp->rkey, d.mr->lkey, d.buf, ODP_LEN),
		     IBV_WC_SUCCESS);
	dt_assert_bytes(area, 0x3c, ODP_LEN);
	cr_assert_eq(munmap(area, ODP_LEN), 0);
	map_area(0x4d);
	cr_assert_eq(dc_post(op_read, (uintptr_t)area, odp->rkey, d.mr->lkey, d.buf, ODP_LEN),
		     IBV_WC_SUCCESS);
	dt_assert_bytes(d.buf, 0x4d, ODP_LEN);
}

/* a gather from a page not mapped: the DCI's local protection error */
Test(dev_dc_odp, unmapped_source_is_local_protection_error)
{
	map_area(0x11);
	cr_assert_eq(munmap(area + 4096, 4096), 0);
	memset(d.buf, 0, ODP_LEN);
	cr_assert_eq(dc_post(op_write, (uintptr_t)d.buf, d.mr->rkey, odp->lkey, area, ODP_LEN),
		     IBV_WC_LOC_PROT_ERR);
	dt_assert_bytes(d.buf, 0, ODP_LEN);
}

/* a WRITE to a page not mapped: the DCT's remote access error, nothing written */
Test(dev_dc_odp, unmapped_target_is_remote_access_error)
{
	memset(d.buf, 0x22, 64);
	cr_assert_eq(dc_post(op_write, (uintptr_t)area, odp->rkey, d.mr->lkey, d.buf, 64),
		     IBV_WC_REM_ACCESS_ERR);
}

/*
 * A receive on the DCT's SRQ into ODP pages never mapped: the fault fails,
 * as on RC (dev_odp): the receive's local protection error, the DCI's
 * remote operation error.  The DCT stays for the next initiator: the DCI
 * reset and up again reaches it.
 */
Test(dev_dc_odp, srq_receive_into_unmapped_pages_fails_as_on_rc)
{
	struct ibv_sge s = { (uintptr_t)(area + 4096), 64, odp->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 42, .sg_list = &s, .num_sge = 1 }, *bad;
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	cr_assert_eq(ibv_post_srq_recv(d.srq, &rwr, &bad), 0);
	memset(d.buf, 0x5a, 64);
	cr_assert_eq(dc_post(op_send, 0, 0, d.mr->lkey, d.buf, 64), IBV_WC_REM_OP_ERR);
	cr_assert_eq(dt_poll(d.rcq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.wr_id, 42);
	cr_assert_eq(wc.status, IBV_WC_LOC_PROT_ERR, "%s", ibv_wc_status_str(wc.status));

	cr_assert_eq(ibv_modify_qp(d.dci, &m, IBV_QP_STATE), 0);
	dci_to_rts(14, 7);
	map_area(0);
	cr_assert_eq(ibv_post_srq_recv(d.srq, &rwr, &bad), 0);
	cr_assert_eq(dc_post(op_send, 0, 0, d.mr->lkey, d.buf, 64), IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll(d.rcq, &wc, 1, 5000), 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	dt_assert_bytes(area + 4096, 0x5a, 64);
}

/* an implicit ODP MR (all of the address space) on both sides of a DC WRITE */
Test(dev_dc_odp, implicit_mr_on_both_sides)
{
	struct ibv_mr *imr = ibv_reg_mr(d.pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);

	cr_assert(imr, "implicit ODP: %s", strerror(errno));
	memset(d.buf, 0x6d, 3000);
	memset(d.buf + 4096, 0, 3000);
	cr_assert_eq(dc_post(op_write, (uintptr_t)(d.buf + 4096), imr->rkey, imr->lkey, d.buf,
			     3000), IBV_WC_SUCCESS);
	dt_assert_bytes(d.buf + 4096, 0x6d, 3000);
	/* area is not mapped: the implicit rkey does not make it so */
	cr_assert_eq(dc_post(op_write, (uintptr_t)area, imr->rkey, imr->lkey, d.buf, 64),
		     IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(ibv_dereg_mr(imr), 0);
}

/* ---- DCI streams --------------------------------------------------------- */

TestSuite(dev_dc_streams, .init = setup_streams, .fini = teardown, .timeout = 60);

/* dev_dc_cards runs them as the cards that have DCI streams */
static void need_streams(void)
{
	et_need(d.streams, "DCI streams");
}

/* A signaled WRITE of len bytes from src_off to dst_off on stream, lkey key. */
static void write_on(uint16_t stream, uint64_t wr_id, uint32_t lkey, uint32_t src_off,
		     uint32_t dst_off, uint32_t len)
{
	d.qpx->wr_id = wr_id;
	d.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(d.qpx, d.mr->rkey, (uintptr_t)(d.buf + dst_off));
	mlx5dv_wr_set_dc_addr_stream(d.dv, d.ah, d.dct[0]->qp_num, DCT_KEY, stream);
	ibv_wr_set_sge(d.qpx, lkey, (uintptr_t)(d.buf + src_off), len);
}

static void expect_wc(const struct ibv_wc *wc, uint64_t wr_id, enum ibv_wc_status status)
{
	cr_assert_eq(wc->wr_id, wr_id);
	cr_assert_eq(wc->status, status, "wr %llu: %s, not %s", (unsigned long long)wr_id,
		     ibv_wc_status_str(wc->status), ibv_wc_status_str(status));
}

Test(dev_dc_streams, writes_on_two_streams_delivered)
{
	struct ibv_wc wc[4];

	need_streams();
	memcpy(d.buf, "stream-1stream-2", 16);
	ibv_wr_start(d.qpx);
	write_on(1, 1, d.mr->lkey, 0, 4096, 8);
	write_on(2, 2, d.mr->lkey, 8, 8192, 8);
	/* an id past 2^log_num_concurent is taken too (test_mlx5_dc posts such) */
	write_on(9, 3, d.mr->lkey, 0, 12288, 16);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 3, 5000), 3);
	for (int i = 0; i < 3; i++)
		expect_wc(&wc[i], (uint64_t)i + 1, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(d.buf + 4096, "stream-1", 8), 0);
	cr_assert_eq(memcmp(d.buf + 8192, "stream-2", 8), 0);
	cr_assert_eq(memcmp(d.buf + 12288, "stream-1stream-2", 16), 0);
}

/*
 * A bad lkey on stream 1: its error CQE, stream 2's WRITE behind it runs,
 * stream 1's next WQE is flushed, the DCI stays in RTS.  Resetting stream
 * 1 lets it send again; a stream not in error cannot be reset.
 */
Test(dev_dc_streams, an_errored_stream_leaves_the_others)
{
	struct ibv_wc wc[4];

	need_streams();
	memcpy(d.buf, "good", 4);
	ibv_wr_start(d.qpx);
	write_on(1, 1, d.mr->lkey + 0x100, 0, 4096, 4);
	write_on(2, 2, d.mr->lkey, 0, 8192, 4);
	write_on(1, 3, d.mr->lkey, 0, 12288, 4);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 3, 5000), 3);
	expect_wc(&wc[0], 1, IBV_WC_LOC_PROT_ERR);
	expect_wc(&wc[1], 2, IBV_WC_SUCCESS);
	expect_wc(&wc[2], 3, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(memcmp(d.buf + 8192, "good", 4), 0);
	cr_assert_neq(memcmp(d.buf + 12288, "good", 4), 0, "a WQE of the errored stream ran");
	cr_assert_eq(et_qp_state(d.dci), IBV_QPS_RTS);

	cr_assert_neq(mlx5dv_dci_stream_id_reset(d.dci, 2), 0, "stream 2 is not in error");
	cr_assert_eq(mlx5dv_dci_stream_id_reset(d.dci, 1), 0);
	cr_assert_neq(mlx5dv_dci_stream_id_reset(d.dci, 1), 0, "reset twice");
	ibv_wr_start(d.qpx);
	write_on(1, 4, d.mr->lkey, 0, 12288, 4);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 1, 5000), 1);
	expect_wc(&wc[0], 4, IBV_WC_SUCCESS);
	cr_assert_eq(memcmp(d.buf + 12288, "good", 4), 0);
}

/*
 * 2^1 streams may be in error: the second stream's error ends the DCI
 * (ERR, the WQEs behind it flushed); out of RESET it has no stream in error.
 */
Test(dev_dc_streams, errored_streams_at_log_num_errored_end_the_dci)
{
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[4];

	need_streams();
	ibv_wr_start(d.qpx);
	write_on(1, 1, d.mr->lkey + 0x100, 0, 4096, 4);
	write_on(3, 2, d.mr->lkey, 0, 8192, 4);
	write_on(2, 3, d.mr->lkey + 0x100, 0, 4096, 4);
	write_on(3, 4, d.mr->lkey, 0, 8192, 4);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 4, 5000), 4);
	expect_wc(&wc[0], 1, IBV_WC_LOC_PROT_ERR);
	expect_wc(&wc[1], 2, IBV_WC_SUCCESS);
	expect_wc(&wc[2], 3, IBV_WC_LOC_PROT_ERR);
	expect_wc(&wc[3], 4, IBV_WC_WR_FLUSH_ERR);
	cr_assert_eq(et_qp_state(d.dci), IBV_QPS_ERR);

	cr_assert_eq(ibv_modify_qp(d.dci, &m, IBV_QP_STATE), 0);
	dci_to_rts(14, 7);
	ibv_wr_start(d.qpx);
	write_on(1, 5, d.mr->lkey, 0, 4096, 4);
	cr_assert_eq(ibv_wr_complete(d.qpx), 0);
	cr_assert_eq(dt_poll(d.scq, wc, 1, 5000), 1);
	expect_wc(&wc[0], 5, IBV_WC_SUCCESS);
}

/* Suite dev_dc_streams on the cards with DCI streams. */
Test(dev_dc_cards, connectx7_ib, .timeout = 120)
{
	et_rerun_as("0x1021", NULL, "dev_dc_streams/*");
}

Test(dev_dc_cards, connectx6dx_roce, .timeout = 120)
{
	et_rerun_as("0x101d", NULL, "dev_dc_streams/*");
}
