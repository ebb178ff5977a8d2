/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/types.h - the vocabulary the queues share: the flags of a send
 * post, the gather/scatter entry, the decoded completion.
 *
 * Kept apart from the queues so that the receive queues (rq.h, srq.h) and
 * the MAD filters (mad.h) need neither the send queue nor the CQ.
 */
#ifndef RDMAFAST_TYPES_H
#define RDMAFAST_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>	/* RF_WQE_CTRL_*: the post flags are those bits */
#include <rdmafast/hw/cqe.h>	/* enum rf_wc_status: rf_wc.status */

RF_BEGIN_DECLS

/* ---- Flags of a post: the control segment's fm_ce_se bits, as is -------- */

enum {
	RF_SEND_SIGNALED  = RF_WQE_CTRL_CQ_UPDATE,	/* write a CQE on success */
	RF_SEND_SOLICITED = RF_WQE_CTRL_SOLICITED,	/* solicited event at the peer */
	RF_SEND_FENCE     = RF_WQE_CTRL_FENCE,		/* wait for earlier READ/atomics */
};

/*
 * In a post's flags: ring right after this WQE, as post + rf_sq_ring()
 * would. The RC/UC/XRC one-call posts do it themselves: when the WQE is
 * the only one since the last ring and fits a BlueFlame half (the usual
 * "post one, send it now"), they copy it to the register at once from
 * what they hold; otherwise they ring the 8-byte doorbell of their WQE,
 * which they know without rf_sq_ring()'s search. rf_sq_commit() (and so
 * the UD send, NOP, bind and invalidate posts) calls rf_sq_ring(). Not a
 * control-segment bit: RF__SEND_FM masks it off.
 */
#define RF_SEND_RING 0x20000U

/* Flag of struct rf_sq_wr only (sq_wr.h): copy the gather list into the WQE. */
#define RF_SEND_INLINE 0x10000U

/* ---- A gather/scatter entry: same layout as struct ibv_sge ------------- */

struct rf_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * One receive for rf_rq_post_batch() / rf_srq_post_batch(): the fields of
 * struct ibv_recv_wr that a receive has, without the list link.
 */
struct rf_recv_wr {
	uint64_t             wr_id;
	const struct rf_sge *sg_list;
	uint32_t             num_sge;
};

/* ---- The decoded completion -------------------------------------------- */

/* Numbered as enum ibv_wc_opcode where libibverbs has the operation. */
enum rf_wc_opcode {
	RF_WC_SEND                = 0,
	RF_WC_RDMA_WRITE          = 1,
	RF_WC_RDMA_READ           = 2,
	RF_WC_COMP_SWAP           = 3,
	RF_WC_FETCH_ADD           = 4,
	RF_WC_BIND_MW             = 5,
	RF_WC_LOCAL_INV           = 6,
	RF_WC_MASKED_COMP_SWAP    = 0x40,	/* no libibverbs equivalent */
	RF_WC_MASKED_FETCH_ADD    = 0x41,
	RF_WC_NOP                 = 0x42,
	RF_WC_RECV                = 128,
	RF_WC_RECV_RDMA_WITH_IMM  = 129,
	RF_WC_UNKNOWN             = 0xff,
};

enum {
	RF_WC_WITH_IMM  = 1 << 0,	/* imm holds the immediate */
	RF_WC_WITH_INV  = 1 << 1,	/* imm holds the invalidated rkey */
	RF_WC_GRH       = 1 << 2,	/* a GRH precedes the data in the buffer */
	RF_WC_SOLICITED = 1 << 3,	/* the sender asked for a solicited event */
	RF_WC_SRQ       = 1 << 4,	/* the receive came from an SRQ */
	RF_WC_SCATTERED = 1 << 5,	/* data arrived in the CQE and was copied */
};

/*
 * struct rf_wc - one completion, 32 bytes.
 * @wr_id:       of the completed WQE (for a requester CQE: the signaled
 *               WQE; earlier unsignaled ones were retired silently)
 * @byte_len:    responder: bytes received (a UD receive includes the 40-byte
 *               GRH area); RDMA READ: bytes read; atomics: 4 or 8. Not
 *               part of other requester completions (sends, writes, NOP,
 *               UMR), as in ibv_wc: rf_cq_poll()'s fast path leaves it
 *               as it was
 * @imm:         responder, RF_WC_WITH_IMM: the immediate in network order,
 *               exactly as the sender passed it; RF_WC_WITH_INV: the
 *               rkey, see rf_wc_inv_rkey(). Not written for requester
 *               completions (like ibv_wc, fields outside an opcode's set
 *               are undefined), which keeps the hot poll short.
 * @qp_num:      local QP
 * @src_qp:      responder only: the sending QP (useful on UD)
 * @status:      enum rf_wc_status (hw/cqe.h), numbered as ibv_wc_status
 * @opcode:      enum rf_wc_opcode
 * @flags:       RF_WC_*
 * @vendor_err:  the vendor syndrome of an error CQE
 * @wqe_counter: requester: first BB of the WQE; RQ: slot; SRQ: WQE index
 * @sl:          responder on IB: the service level (0 for requesters)
 */
struct rf_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	__be32   imm;
	uint32_t qp_num;
	uint32_t src_qp;
	uint8_t  status;
	uint8_t  opcode;
	uint8_t  flags;
	uint8_t  vendor_err;
	uint16_t wqe_counter;
	uint8_t  sl;
	uint8_t  rsvd;
};
RF_STATIC_ASSERT(sizeof(struct rf_wc) == 32, "rf_wc size");
RF_STATIC_ASSERT(offsetof(struct rf_wc, vendor_err) == offsetof(struct rf_wc, status) + 3,
		 "status..vendor_err are copied as one word");


/* RF_WC_WITH_INV: the rkey the sender invalidated, in host order. */
RF_INLINE uint32_t rf_wc_inv_rkey(const struct rf_wc *wc)
{
	return rf_be32toh(wc->imm);
}

RF_END_DECLS

#endif /* RDMAFAST_TYPES_H */
