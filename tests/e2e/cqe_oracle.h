/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/e2e/cqe_oracle.h - one CQE as libmlx5 and rdmafast read it: the
 * bytes a case stands for, and the first field of their two records that
 * differs. Shared by test_e2e_cqe_oracle.c (a corpus, every poll path)
 * and fuzz/cqe_oracle.c (cases the fuzzer chooses); the test's header
 * says why each exception below holds. No test framework: each caller
 * asserts in its own way.
 */
#ifndef RDMAFAST_TESTS_E2E_CQE_ORACLE_H
#define RDMAFAST_TESTS_E2E_CQE_ORACLE_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdmafast/rdmafast.h>

/* One CQE; the QP number, user index and WQE counter are each side's. */
struct cqe_case {
	const char *what;
	uint8_t opcode;		/* CQE opcode: RF_CQE_* */
	uint8_t wqe_op;		/* requester: the WQE opcode in sop_drop_qpn */
	uint8_t syndrome, vendor;	/* error CQEs */
	uint8_t se;
	uint8_t g;		/* flags_rqpn[29:28] */
	uint8_t sl;
	uint32_t rqpn;
	uint32_t byte_cnt;
	uint32_t imm;		/* host order: imm_inval_pkey */
	uint8_t fmt;		/* RF_CQE_FORMAT_*: data scattered to the CQE */
};

static inline int cqe_case_is_req(const struct cqe_case *k)
{
	return k->opcode == RF_CQE_REQ || k->opcode == RF_CQE_REQ_ERR;
}

static inline int cqe_case_is_err(const struct cqe_case *k)
{
	return k->opcode == RF_CQE_REQ_ERR || k->opcode == RF_CQE_RESP_ERR;
}

/*
 * Write case k into the 64-byte CQE at cqe (the second half of a 128-byte
 * one; SCATTER_64 data goes into the first): its body, then the op_own
 * byte with owner, so that a poller never sees half of it.
 */
static inline void cqe_case_write(struct rf_cqe64 *cqe, const struct cqe_case *k, uint32_t qpn,
				  uint32_t uidx, uint16_t counter, uint8_t owner)
{
	uint8_t bytes[64];
	struct rf_cqe64 *t = (struct rf_cqe64 *)bytes;

	memset(bytes, 0, sizeof(bytes));
	t->slid = RF_BE16(0x1234);
	t->ml_path = 0x05;
	t->flags_rqpn = rf_htobe32((uint32_t)k->g << 28 | (uint32_t)k->sl << 24 | k->rqpn);
	t->srqn_uidx = rf_htobe32(uidx);
	t->imm_inval_pkey = rf_htobe32(k->imm);
	t->byte_cnt = rf_htobe32(k->byte_cnt);
	t->sop_drop_qpn = rf_htobe32((uint32_t)k->wqe_op << 24 | qpn);
	t->wqe_counter = rf_htobe16(counter);
	if (k->fmt == RF_CQE_FORMAT_SCATTER_32)	/* the data is the first 32 bytes */
		for (uint32_t i = 0; i < k->byte_cnt; i++)
			bytes[i] = (uint8_t)(0x61 + i);
	if (k->fmt == RF_CQE_FORMAT_SCATTER_64)	/* the 64 bytes before the CQE64 */
		for (uint32_t i = 0; i < k->byte_cnt; i++)
			((uint8_t *)cqe - 64)[i] = (uint8_t)(0x41 + i);
	if (cqe_case_is_err(k)) {
		struct rf_err_cqe *e = (struct rf_err_cqe *)bytes;

		e->syndrome = k->syndrome;
		e->vendor_err_synd = k->vendor;
	}
	memcpy(cqe, bytes, 63);
	__atomic_store_n(&cqe->op_own, (uint8_t)(k->opcode << 4 | k->fmt << 2 |
						 (k->se ? RF_CQE_SE_MASK : 0) | owner),
			 __ATOMIC_RELEASE);
}

/*
 * A libmlx5 CQ of n entries of cqe_size bytes whose records
 * ibv_start_poll() reads every compared field of; NULL (errno) on failure.
 */
static inline struct ibv_cq_ex *cqe_oracle_cq_ex(struct ibv_context *ctx, int n,
						 uint32_t cqe_size)
{
	struct ibv_cq_init_attr_ex xa;
	struct mlx5dv_cq_init_attr dx;

	memset(&xa, 0, sizeof(xa));
	memset(&dx, 0, sizeof(dx));
	xa.cqe = (uint32_t)n;
	xa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
		      IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SL;
	dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE;
	dx.cqe_size = cqe_size;
	return mlx5dv_create_cq(ctx, &xa, &dx);
}

/*
 * One record of cq through libmlx5's extended poll (ibv_start_poll(),
 * ibv_wc_read_*(), ibv_end_poll()) into the ibv_wc fields the comparison
 * reads: 0, or ibv_start_poll()'s error (ENOENT: no record yet).
 */
static inline int cqe_oracle_poll_ex(struct ibv_cq_ex *cq, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa;
	int err;

	memset(&pa, 0, sizeof(pa));
	err = ibv_start_poll(cq, &pa);
	if (err)
		return err;
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->vendor_err = ibv_wc_read_vendor_err(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	wc->wc_flags = ibv_wc_read_wc_flags(cq);
	wc->imm_data = ibv_wc_read_imm_data(cq);
	wc->qp_num = ibv_wc_read_qp_num(cq);
	wc->src_qp = ibv_wc_read_src_qp(cq);
	wc->sl = ibv_wc_read_sl(cq);
	ibv_end_poll(cq);
	return 0;
}

/*
 * The first field libmlx5's record w (from ibv_start_poll() with ex) and
 * rdmafast's r of case k disagree on, NULL if none. wr_id and the QP
 * number are the caller's: what they must be depends on its queues.
 */
static inline const char *cqe_case_differs(const struct cqe_case *k, const struct ibv_wc *w,
					   const struct rf_wc *r, int ex)
{
	int masked = k->wqe_op == RF_OPCODE_ATOMIC_MASKED_CS ||
		     k->wqe_op == RF_OPCODE_ATOMIC_MASKED_FA;

	if (r->status != (unsigned)w->status)
		return "status";
	if (cqe_case_is_err(k))
		return r->vendor_err != w->vendor_err ? "vendor_err" : NULL;
	if (!masked && r->opcode != (unsigned)w->opcode)
		return "opcode";
	if ((!ex || !cqe_case_is_req(k)) &&
	    !!(r->flags & RF_WC_WITH_IMM) != !!(w->wc_flags & IBV_WC_WITH_IMM))
		return "WITH_IMM";
	if (!!(r->flags & RF_WC_WITH_INV) != !!(w->wc_flags & IBV_WC_WITH_INV))
		return "WITH_INV";
	if (cqe_case_is_req(k))
		return !masked && (k->wqe_op == RF_OPCODE_RDMA_READ ||
				   rf_opcode_fetches(k->wqe_op)) &&
		       r->byte_len != w->byte_len ? "byte_len" : NULL;
	if (r->byte_len != w->byte_len)
		return "byte_len";
	/* 32 bytes scattered to the CQE overlay flags_rqpn: its g is data */
	if (k->g <= RF_CQE_GRH_IN_BUF && k->fmt != RF_CQE_FORMAT_SCATTER_32 &&
	    !!(r->flags & RF_WC_GRH) != !!(w->wc_flags & IBV_WC_GRH))
		return "GRH";
	if ((w->wc_flags & IBV_WC_WITH_IMM) && r->imm != w->imm_data)
		return "imm";
	if ((w->wc_flags & IBV_WC_WITH_INV) && rf_wc_inv_rkey(r) != w->invalidated_rkey)
		return "invalidated rkey";
	if (r->src_qp != w->src_qp)
		return "src_qp";
	if (r->sl != w->sl)
		return "sl";
	if (!!(r->flags & RF_WC_SOLICITED) != k->se)
		return "RF_WC_SOLICITED";
	return NULL;
}

#endif /* RDMAFAST_TESTS_E2E_CQE_ORACLE_H */
