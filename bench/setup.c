/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/setup.c - one device context, CQ and RC QP per implementation,
 * created with the same capabilities, connected to itself (loopback).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bring_up.h"

const char *const bench_op_name[OP_COUNT] = {
	"post_write_sge64", "post_write_inline8", "post_send_inline32",
	"post_batch16_write", "poll_1", "poll_16", "post_dc_write_sge64",
	"poll_16_zip", "post_umr_klm4",
};

const char *const bench_impl_name[IMPL_COUNT] = {
	"rdmafast", "libmlx5", "libmlx5_st", "libmlx5_wr", "ucx_rc_mlx5",
};

struct ibv_context *bench_open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* RESET -> INIT -> RTR -> RTS, the QP (created with cap) connected to itself. */
static int to_rts(struct bench_qp *b, const struct ibv_qp_cap *cap)
{
	struct ibv_port_attr port;
	union ibv_gid gid;

	if (ibv_query_port(b->ctx, 1, &port))
		return -1;
	if (port.link_layer != IBV_LINK_LAYER_ETHERNET)
		return bench_rc_bring_up(b->qp, cap, b->qp->qp_num, port.lid, NULL, 1);
	if (ibv_query_gid(b->ctx, 1, 0, &gid))
		return -1;
	return bench_rc_bring_up(b->qp, cap, b->qp->qp_num, 0, &gid, 1);
}

int bench_mem_open(struct ibv_context *ctx, struct ibv_pd **pd, uint8_t **buf,
		   struct ibv_mr **mr)
{
	*pd = ibv_alloc_pd(ctx);
	*buf = aligned_alloc(4096, BENCH_BUF);
	if (!*pd || !*buf)
		return -ENOMEM;
	memset(*buf, 0x5a, BENCH_BUF);
	*mr = ibv_reg_mr(*pd, *buf, BENCH_BUF, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return *mr ? 0 : -errno;
}

void bench_mem_close(struct ibv_context *ctx, struct ibv_pd *pd, uint8_t *buf,
		     struct ibv_mr *mr)
{
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	free(buf);
}

int bench_ah_attr(struct ibv_context *ctx, struct ibv_ah_attr *aa)
{
	struct ibv_port_attr port;

	if (ibv_query_port(ctx, 1, &port))
		return -1;
	memset(aa, 0, sizeof(*aa));
	aa->dlid = port.lid;
	aa->port_num = 1;
	if (port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		aa->is_global = 1;
		aa->grh.hop_limit = 64;
		if (ibv_query_gid(ctx, 1, 0, &aa->grh.dgid))
			return -1;
	}
	return 0;
}

struct ibv_cq *bench_cq_create(struct ibv_context *ctx, enum bench_impl impl, int depth,
			       struct ibv_cq_ex **cqx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = (uint32_t)depth,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};

	*cqx = NULL;
	if (impl != IMPL_LIBMLX5_WR)
		return ibv_create_cq(ctx, depth, NULL, NULL, 0);
	*cqx = ibv_create_cq_ex(ctx, &ca);
	return *cqx ? ibv_cq_ex_to_cq(*cqx) : NULL;
}

void bench_rc_attr(struct ibv_qp_init_attr_ex *qa, struct ibv_pd *pd, struct ibv_cq *cq,
		   uint32_t max_send_wr)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RC;
	qa->send_cq = cq;
	qa->recv_cq = cq;
	qa->cap.max_send_wr = max_send_wr;
	qa->cap.max_recv_wr = 1;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
	qa->cap.max_inline_data = 64;
	qa->comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa->pd = pd;
	qa->send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
}

/* The context, PD, registered buffer and CQ of either kind of QP. */
static int open_common(struct bench_qp *b, enum bench_impl impl, const char *dev)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->impl = impl;
	b->wqe_bbs = 1;
	/* libmlx5 reads its environment when the context is opened */
	if (impl == IMPL_LIBMLX5_ST)
		setenv("MLX5_SINGLE_THREADED", "1", 1);
	b->ctx = bench_open_dev(dev);
	unsetenv("MLX5_SINGLE_THREADED");
	if (!b->ctx)
		return -ENODEV;
	ret = bench_mem_open(b->ctx, &b->pd, &b->buf, &b->mr);
	if (ret)
		return ret;
	b->raddr = (uintptr_t)b->buf + BENCH_BUF / 2;
	b->rkey = b->mr->rkey;
	b->cq = bench_cq_create(b->ctx, impl, BENCH_CQ_DEPTH, &b->cqx);
	return b->cq ? 0 : -errno;
}

/* The queues for the harness, and rdmafast's objects over them. */
static int open_queues(struct bench_qp *b, const struct ibv_qp_cap *cap)
{
	struct mlx5dv_obj obj;

	/* libmlx5 hands out user indexes from 0, in creation order, per context */
	b->uidx = 0;
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = b->qp;
	obj.qp.out = &b->dvqp;
	obj.cq.in = b->cq;
	obj.cq.out = &b->dvcq;
	if (mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ))
		return -EPROTONOSUPPORT;

	if (b->impl == IMPL_RDMAFAST) {
		int ret = rf_qp_init_ibv(&b->rfqp, b->qp, cap, 0);

		if (!ret)
			ret = rf_cq_init_ibv(&b->rfcq, b->cq);
		if (!ret)
			ret = rf_cq_attach(&b->rfcq, b->qp->qp_num, &b->rfqp.sq,
					   NULL, NULL);
		if (ret)
			return ret;
	}
	bench_prepare_wrs(b);
	return 0;
}

int bench_qp_open(struct bench_qp *b, enum bench_impl impl, const char *dev)
{
	struct ibv_qp_init_attr_ex qa;
	int ret = open_common(b, impl, dev);

	if (ret)
		return ret;
	bench_rc_attr(&qa, b->pd, b->cq, BENCH_SQ_WRS);
	b->qp = ibv_create_qp_ex(b->ctx, &qa);	/* qa.cap: what the QP really has */
	if (!b->qp)
		return -errno;
	if (impl == IMPL_LIBMLX5_WR)
		b->qpx = ibv_qp_to_qp_ex(b->qp);
	if (to_rts(b, &qa.cap))
		return -EINVAL;
	return open_queues(b, &qa.cap);
}

/*
 * A DCI at RTS and the address of a DC target for its WQEs. The device
 * model is off, so the target need not exist: its number and key are
 * only bytes in the WQE, the same for everyone.
 */
int bench_dci_open(struct bench_qp *b, enum bench_impl impl, const char *dev)
{
	struct ibv_qp_init_attr_ex qa;
	struct mlx5dv_qp_init_attr dx;
	struct ibv_ah_attr aa;
	struct rf_qp_conn_attr ca;
	struct rf_qp tmp;
	struct rf_wqe_av av;
	int ret = open_common(b, impl, dev);

	if (ret)
		return ret;
	b->wqe_bbs = 2;		/* ctrl, address vector, raddr, data: 96 bytes */
	b->dctn = 0x123;
	b->dc_key = 0x5eed0000cafef00dull;
	if (bench_ah_attr(b->ctx, &aa))
		return -EINVAL;
	b->ah = ibv_create_ah(b->pd, &aa);
	if (!b->ah)
		return -errno;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_DRIVER;
	qa.send_cq = b->cq;
	qa.recv_cq = b->cq;
	qa.cap.max_send_wr = BENCH_SQ_WRS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_inline_data = 64;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.pd = b->pd;
	qa.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND;
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
	dx.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
	b->qp = mlx5dv_create_qp(b->ctx, &qa, &dx);
	if (!b->qp)
		return -errno;
	b->qpx = ibv_qp_to_qp_ex(b->qp);
	b->dvqpx = mlx5dv_qp_ex_from_ibv_qp_ex(b->qpx);
	/* RESET -> RTS through rdmafast's helper, for every implementation */
	memset(&ca, 0, sizeof(ca));
	ret = rf_qp_init_ibv(&tmp, b->qp, &qa.cap, 0);
	if (!ret) {
		ret = rf_dci_connect_ibv(&tmp, &ca);
		rf_qp_fini_ibv(&tmp);
	}
	if (!ret)
		ret = rf_ah_av_ibv(b->ah, &av);
	if (ret)
		return ret;
	rf_dc_dest_init(&b->dest, &av, b->dctn, b->dc_key);
	return open_queues(b, &qa.cap);
}

/*
 * An RC QP at RTS that can post memory-key UMRs (mlx5dv_create_qp() with
 * MLX5DV_QP_EX_WITH_MR_LIST, for every implementation: the same queue
 * geometry), an indirect key of 4 entries, and 4 regions of the buffer.
 */
int bench_umr_open(struct bench_qp *b, enum bench_impl impl, const char *dev)
{
	struct ibv_qp_init_attr_ex qa;
	struct mlx5dv_qp_init_attr dx;
	struct mlx5dv_mkey_init_attr ka;
	int ret = open_common(b, impl, dev), i;

	if (ret)
		return ret;
	b->wqe_bbs = impl == IMPL_RDMAFAST ? 4 : 3;	/* ctrl, UMR ctrl, mkey, 4 KLMs */
	bench_rc_attr(&qa, b->pd, b->cq, BENCH_SQ_WRS);
	memset(&dx, 0, sizeof(dx));
	dx.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	dx.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST;
	b->qp = mlx5dv_create_qp(b->ctx, &qa, &dx);
	if (!b->qp)
		return -errno;
	b->qpx = ibv_qp_to_qp_ex(b->qp);
	b->dvqpx = mlx5dv_qp_ex_from_ibv_qp_ex(b->qpx);
	memset(&ka, 0, sizeof(ka));
	ka.pd = b->pd;
	ka.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
	ka.max_entries = 4;
	b->mkey = mlx5dv_create_mkey(&ka);
	if (!b->mkey)
		return -errno;
	for (i = 0; i < 4; i++) {
		b->klm[i].addr = b->rklm[i].addr = (uintptr_t)b->buf + 4096 * (size_t)i;
		b->klm[i].length = b->rklm[i].length = 4096;
		b->klm[i].lkey = b->rklm[i].lkey = b->mr->lkey;
	}
	if (to_rts(b, &qa.cap))
		return -EINVAL;
	return open_queues(b, &qa.cap);
}

void bench_qp_close(struct bench_qp *b)
{
	if (b->impl == IMPL_UCX) {
		bench_ucx_close(b);	/* UCX owns its QP, CQ and context */
		return;
	}
	if (b->impl == IMPL_RDMAFAST)
		rf_qp_fini_ibv(&b->rfqp);
	if (b->mkey)
		mlx5dv_destroy_mkey(b->mkey);
	if (b->qp)
		ibv_destroy_qp(b->qp);
	if (b->ah)
		ibv_destroy_ah(b->ah);
	if (b->cq)
		ibv_destroy_cq(b->cq);
	bench_mem_close(b->ctx, b->pd, b->buf, b->mr);
}
