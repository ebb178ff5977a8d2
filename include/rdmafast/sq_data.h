/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_data.h - one call per data WQE: RDMA WRITE (with immediate),
 * READ and SEND (with immediate, with invalidate), from one registered
 * buffer, from payload copied into the WQE, or from a list of SGEs.
 *
 * Each call reserves, writes and commits one WQE and rings only with
 * RF_SEND_RING in its flags (sq.h); it returns 0, -ENOSPC or -EINVAL
 * (sq.h, Errors), with nothing written unless 0.
 */
#ifndef RDMAFAST_SQ_DATA_H
#define RDMAFAST_SQ_DATA_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/detail/sq_data.h>

RF_BEGIN_DECLS

/* ---- One registered buffer (lkey) ------------------------------------- */

/*
 * rf_sq_post_write - RDMA WRITE of len bytes at laddr (lkey) to raddr
 * (rkey). flags: RF_SEND_*. A zero length writes nothing and still
 * completes.
 */
RF_INLINE int rf_sq_post_write(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			       uint32_t len, uint32_t rkey, uint64_t raddr,
			       uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_WRITE, 0, lkey, laddr, len,
				 rkey, raddr, flags, wr_id);
}

/*
 * rf_sq_post_write_imm - RDMA WRITE with immediate: consumes a receive at
 * the responder, which gets imm (network order, passed through untouched).
 */
RF_INLINE int rf_sq_post_write_imm(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				   uint32_t len, uint32_t rkey, uint64_t raddr,
				   __be32 imm, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_WRITE_IMM, imm, lkey, laddr,
				 len, rkey, raddr, flags, wr_id);
}

/* rf_sq_post_read - RDMA READ of len bytes at raddr (rkey) into laddr. */
RF_INLINE int rf_sq_post_read(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			      uint32_t len, uint32_t rkey, uint64_t raddr,
			      uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_rdma1(sq, RF_OPCODE_RDMA_READ, 0, lkey, laddr, len,
				 rkey, raddr, flags, wr_id);
}

/* rf_sq_post_send - SEND of len bytes at laddr (lkey). */
RF_INLINE int rf_sq_post_send(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
			      uint32_t len, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND, 0, lkey, laddr, len, flags, wr_id);
}

/* rf_sq_post_send_imm - SEND with immediate (imm in network order). */
RF_INLINE int rf_sq_post_send_imm(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				  uint32_t len, __be32 imm, uint32_t flags,
				  uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND_IMM, imm, lkey, laddr, len,
				 flags, wr_id);
}

/* rf_sq_post_send_inv - SEND that invalidates inv_rkey at the responder. */
RF_INLINE int rf_sq_post_send_inv(struct rf_sq *sq, uint32_t lkey, uint64_t laddr,
				  uint32_t len, uint32_t inv_rkey, uint32_t flags,
				  uint64_t wr_id)
{
	return rf__sq_post_send1(sq, RF_OPCODE_SEND_INVAL, rf_htobe32(inv_rkey),
				 lkey, laddr, len, flags, wr_id);
}

/*
 * ---- Inline -------------------------------------------------------------
 * The payload is copied into the WQE, so the buffer needs no memory
 * registration and may be reused on return. At most max_inline bytes.
 */

/* rf_sq_post_write_inline - RDMA WRITE of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_write_inline(struct rf_sq *sq, const void *data,
				      uint32_t len, uint32_t rkey, uint64_t raddr,
				      uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_RDMA_WRITE, 0, 1, rkey, raddr,
				  data, len, flags, wr_id);
}

/* rf_sq_post_write_imm_inline - the same with an immediate. */
RF_INLINE int rf_sq_post_write_imm_inline(struct rf_sq *sq, const void *data,
					  uint32_t len, uint32_t rkey,
					  uint64_t raddr, __be32 imm,
					  uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_RDMA_WRITE_IMM, imm, 1, rkey,
				  raddr, data, len, flags, wr_id);
}

/* rf_sq_post_send_inline - SEND of len bytes copied into the WQE. */
RF_INLINE int rf_sq_post_send_inline(struct rf_sq *sq, const void *data,
				     uint32_t len, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_SEND, 0, 0, 0, 0, data, len,
				  flags, wr_id);
}

/* rf_sq_post_send_imm_inline - SEND with immediate, payload inline. */
RF_INLINE int rf_sq_post_send_imm_inline(struct rf_sq *sq, const void *data,
					 uint32_t len, __be32 imm,
					 uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_inline(sq, RF_OPCODE_SEND_IMM, imm, 0, 0, 0, data,
				  len, flags, wr_id);
}

/*
 * ---- SGE lists ----------------------------------------------------------
 * At most max_sge entries; zero-length entries are dropped, as libmlx5
 * does.
 */

/* rf_sq_post_send_sg - SEND gathering n entries (at most max_sge). */
RF_INLINE int rf_sq_post_send_sg(struct rf_sq *sq, const struct rf_sge *sg,
				 uint32_t n, uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_SEND, 0, 0, 0, 0, sg, n, flags, wr_id);
}

/* rf_sq_post_send_imm_sg - SEND with immediate gathering n entries. */
RF_INLINE int rf_sq_post_send_imm_sg(struct rf_sq *sq, const struct rf_sge *sg,
				     uint32_t n, __be32 imm, uint32_t flags,
				     uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_SEND_IMM, imm, 0, 0, 0, sg, n,
			      flags, wr_id);
}

/* rf_sq_post_write_sg - RDMA WRITE gathering n entries to raddr. */
RF_INLINE int rf_sq_post_write_sg(struct rf_sq *sq, const struct rf_sge *sg,
				  uint32_t n, uint32_t rkey, uint64_t raddr,
				  uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_RDMA_WRITE, 0, 1, rkey, raddr, sg, n,
			      flags, wr_id);
}

/* rf_sq_post_read_sg - RDMA READ from raddr scattering into n entries. */
RF_INLINE int rf_sq_post_read_sg(struct rf_sq *sq, const struct rf_sge *sg,
				 uint32_t n, uint32_t rkey, uint64_t raddr,
				 uint32_t flags, uint64_t wr_id)
{
	return rf__sq_post_sg(sq, RF_OPCODE_RDMA_READ, 0, 1, rkey, raddr, sg, n,
			      flags, wr_id);
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_DATA_H */
