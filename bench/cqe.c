/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/cqe.c - the harness plays the HCA: requester CQEs for posted WQEs.
 *
 * A CQE is written the way the device writes it: body first, the op_own
 * byte (opcode REQ and the lap's owner bit) last. With cqe_version 1,
 * libmlx5 finds the QP from the user index in srqn_uidx; rdmafast finds it
 * from the QPN in sop_drop_qpn. Each WQE's opcode and index are read back
 * from the send queue itself, which also checks that every measured post
 * really wrote its WQE where the harness expects it.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The control segment of the WQE that starts in basic block idx. */
static const struct mlx5_wqe_ctrl_seg *sq_wqe(const struct mlx5dv_qp *q, uint32_t idx)
{
	return (const struct mlx5_wqe_ctrl_seg *)((const uint8_t *)q->sq.buf +
		(size_t)(idx & (q->sq.wqe_cnt - 1)) * MLX5_SEND_WQE_BB);
}

void bench_req_cqe(enum bench_impl impl, const struct mlx5dv_cq *cq, uint32_t *pi,
		   const struct mlx5dv_qp *q, uint32_t qpn, uint32_t uidx, uint32_t idx)
{
	uint32_t n = cq->cqe_cnt;
	uint8_t *entry = (uint8_t *)cq->buf + (size_t)(*pi & (n - 1)) * cq->cqe_size;
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(entry + cq->cqe_size - 64);
	uint32_t word = be32toh(sq_wqe(q, idx)->opmod_idx_opcode);
	uint8_t opcode = (uint8_t)word;

	if (((word >> 8) & 0xffff) != (idx & 0xffff)) {
		fprintf(stderr, "rfbench: %s: no WQE at index %u (found %u): a post failed\n",
			bench_impl_name[impl], idx & 0xffff, (word >> 8) & 0xffff);
		exit(2);
	}
	memset(cqe, 0, sizeof(*cqe) - 1);
	cqe->srqn_uidx = htobe32(uidx);
	cqe->byte_cnt = htobe32(opcode == MLX5_OPCODE_RDMA_READ ? 64 : 0);
	cqe->sop_drop_qpn = htobe32((uint32_t)opcode << 24 | qpn);
	cqe->wqe_counter = htobe16((uint16_t)idx);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* body before owner */
	cqe->op_own = (uint8_t)(MLX5_CQE_REQ << 4 | ((*pi / n) & 1));
	++*pi;
}

static void write_req_cqe(struct bench_qp *b, uint32_t idx)
{
	bench_req_cqe(b->impl, &b->dvcq, &b->cq_pi, &b->dvqp, b->qp->qp_num, b->uidx, idx);
}

/*
 * UCX's WQEs differ in size and it chooses which to signal: walk them by
 * their DS counts and write a CQE for each one that asks for it, as the
 * HCA does.
 */
static void write_ucx_cqes(struct bench_qp *b, unsigned wqes)
{
	while (wqes--) {
		const struct mlx5_wqe_ctrl_seg *ctrl = sq_wqe(&b->dvqp, b->bb_next);
		uint32_t ds = be32toh(ctrl->qpn_ds) & 0x3f;
		uint32_t idx = b->bb_next;

		b->bb_next += (ds * 16 + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
		b->sq_done++;
		if (ctrl->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE)
			write_req_cqe(b, idx);	/* checks the WQE's index */
	}
}

void bench_write_cqes(struct bench_qp *b, unsigned n, unsigned per_cqe)
{
	unsigned i;

	if (b->impl == IMPL_UCX) {
		write_ucx_cqes(b, n * per_cqe);
		return;
	}
	/* all WQEs of a queue have one size: the last one starts here */
	for (i = 0; i < n; i++) {
		b->sq_done += per_cqe;
		write_req_cqe(b, (b->sq_done - 1) * b->wqe_bbs);
	}
}

void bench_complete_posted(struct bench_qp *b, unsigned per_cqe)
{
	bench_write_cqes(b, (b->sq_posted - b->sq_done) / per_cqe, per_cqe);
	bench_drain(b);
}

void bench_drain(struct bench_qp *b)
{
	uint32_t want = b->cq_pi, got = 0;
	struct ibv_wc wc[16];
	int k, guard = 0;

	while (got != want - b->cq_ci && guard++ < 1 << 20) {
		switch (b->impl) {
		case IMPL_UCX:
			bench_ucx_progress(b);
			k = (int)bench_ucx_polled(b);
			break;
		case IMPL_RDMAFAST: {
			struct rf_wc rwc[16];

			k = rf_cq_poll(&b->rfcq, rwc, 16);
			for (int i = 0; i < k; i++)
				if (rwc[i].status != RF_WC_SUCCESS)
					k = -1;
			break;
		}
		case IMPL_LIBMLX5:
		case IMPL_LIBMLX5_ST:
			k = ibv_poll_cq(b->cq, 16, wc);
			for (int i = 0; i < k; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					k = -1;
			break;
		default: {
			struct ibv_poll_cq_attr attr = { 0 };

			k = 0;
			if (ibv_start_poll(b->cqx, &attr) == 0) {
				do {
					k = b->cqx->status != IBV_WC_SUCCESS ? -1 : k + 1;
				} while (k > 0 && ibv_next_poll(b->cqx) == 0);
				ibv_end_poll(b->cqx);
			}
			break;
		}
		}
		if (k < 0) {
			fprintf(stderr, "rfbench: %s: error completion while draining\n",
				bench_impl_name[b->impl]);
			exit(2);
		}
		got += (uint32_t)k;
	}
	if (got != want - b->cq_ci) {
		fprintf(stderr, "rfbench: %s: polled %u of %u CQEs\n",
			bench_impl_name[b->impl], got, want - b->cq_ci);
		exit(2);
	}
	b->cq_ci = want;
}

/*
 * Compressed CQEs as a ConnectX writes them (Linux
 * include/linux/mlx5/device.h struct mlx5_mini_cqe8, here struct
 * rf_mini_cqe8 of rdmafast/hw/cqe.h; decoded by
 * drivers/net/ethernet/mellanox/mlx5/core/en_rx.c): a title in format 3
 * whose byte_cnt counts the zip, the mini-CQE arrays in the entry
 * after it and in every eighth entry from it, the other entries left as
 * they were. A requester mini-CQE holds the WQE counter, the WQE opcode
 * and the byte count. The CQ need not have been created with compression:
 * rf_cq_poll() decodes what is in the ring, and no device runs here.
 */
void bench_write_zip_cqes(struct bench_qp *b, unsigned n)
{
	enum { ZIP_LEN = 16 };
	uint32_t cnt = b->dvcq.cqe_cnt, size = b->dvcq.cqe_size;

	for (unsigned s = 0; s < n / ZIP_LEN; s++) {
		uint32_t pi = b->cq_pi, first = b->sq_done;
		struct mlx5_cqe64 *title = (struct mlx5_cqe64 *)((uint8_t *)b->dvcq.buf +
			(size_t)(pi & (cnt - 1)) * size + size - 64);
		uint8_t op = 0;

		for (unsigned i = 0; i < ZIP_LEN; i++) {
			uint32_t slot = i < 8 ? 1 : i & ~7u;
			struct rf_mini_cqe8 *m = (struct rf_mini_cqe8 *)(void *)((uint8_t *)b->dvcq.buf +
				(size_t)((pi + slot) & (cnt - 1)) * size + size - 64) + (i & 7);
			uint32_t idx = first + i;
			uint32_t word = be32toh(sq_wqe(&b->dvqp, idx)->opmod_idx_opcode);

			if (((word >> 8) & 0xffff) != (idx & 0xffff)) {
				fprintf(stderr, "rfbench: %s: no WQE at index %u: a post failed\n",
					bench_impl_name[b->impl], idx & 0xffff);
				exit(2);
			}
			op = (uint8_t)word;
			m->u.s_wqe_info.wqe_counter = htobe16((uint16_t)idx);
			m->u.s_wqe_info.s_wqe_opcode = op;
			m->byte_cnt = htobe32(op == MLX5_OPCODE_RDMA_READ ? 64 : 0);
		}
		memset(title, 0, sizeof(*title) - 1);
		title->srqn_uidx = htobe32(b->uidx);
		title->byte_cnt = htobe32(ZIP_LEN);
		title->sop_drop_qpn = htobe32((uint32_t)op << 24 | b->qp->qp_num);
		title->wqe_counter = htobe16((uint16_t)first);
		__atomic_thread_fence(__ATOMIC_RELEASE);	/* arrays and body before owner */
		title->op_own = (uint8_t)(MLX5_CQE_REQ << 4 | RF_CQE_FORMAT_COMPRESSED << 2 |
					  ((pi / cnt) & 1));
		b->cq_pi += ZIP_LEN;
		b->sq_done += ZIP_LEN;
	}
}
