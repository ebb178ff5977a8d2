/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/asm/paths.c - the post, ring and poll paths as separate functions,
 * compiled (not linked, not run) so that tests/asm/check-barriers.sh can
 * read their barriers in the disassembly. Nothing here is called.
 */
#include <rdmafast/rdmafast.h>

/* The post alone: segments and commit, no ring, so no barrier at all. */
int rf_asm_post(struct rf_sq *sq, uint64_t a)
{
	return rf_sq_post_write(sq, 1, a, 64, 2, a, RF_SEND_SIGNALED, 7);
}

/* The 8-byte doorbell: dma_wmb, dbrec, mmio_wc_start, MMIO store, flush. */
void rf_asm_ring_db(__be32 *dbrec, struct rf_bf *bf, const void *ctrl)
{
	rf_ring_db(dbrec, bf, 5, ctrl);
}

/* The BlueFlame copy: the same barriers around ST64B or the 16-byte stores. */
void rf_asm_ring_bf(__be32 *dbrec, struct rf_bf *bf, const void *wqe)
{
	rf_ring_bf(dbrec, bf, 5, wqe, 2);
}

/* A post that rings itself: BlueFlame from registers, from the queue, or the doorbell. */
int rf_asm_post_ring(struct rf_sq *sq, uint64_t a)
{
	return rf_sq_post_write(sq, 1, a, 64, 2, a, RF_SEND_SIGNALED | RF_SEND_RING, 7);
}

/* An 8-byte inline write that rings itself: from registers, ctrl and raddr in 16-byte moves. */
int rf_asm_post_inline_ring(struct rf_sq *sq, const void *p, uint64_t a)
{
	return rf_sq_post_write_inline(sq, p, 8, 2, a, RF_SEND_SIGNALED | RF_SEND_RING, 7);
}

/* A DCI write with the 48-byte AV that rings itself: two BBs from registers. */
int rf_asm_post_dc_ring(struct rf_sq *sq, const struct rf_dc_dest *d, uint64_t a)
{
	return rf__sq_dc1_form(sq, d, 3, RF_OPCODE_RDMA_WRITE, 0, 1,
			       rf__v16_words(a, 2), rf__v16_words(64, a), 64,
			       RF_SEND_SIGNALED | RF_SEND_RING, 7);
}

/* rf_sq_ring() as the application calls it. */
void rf_asm_sq_ring(struct rf_sq *sq)
{
	rf_sq_ring(sq);
}

/* The poll: owner byte, dma_rmb, CQE body, consumer index. */
int rf_asm_poll(struct rf_cq *cq, struct rf_wc *wc)
{
	return rf_cq_poll(cq, wc, 4);
}
