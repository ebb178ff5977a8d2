/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/types.h - the vocabulary the queues share: the flags of a send
 * post, the gather/scatter entry, the send queue's side-table entry (which
 * the CQ reads), the decoded completion.
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
#include <rdmafast/hw/cqe.h>	/* RF_CQE_SYNDROME_*: rf_cqe_syndrome_to_wc_status() */

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

/* ---- The send queue's side table --------------------------------------- */

/*
 * struct rf_sq_slot - what a send queue keeps for the WQE that starts in a
 * basic-block slot: its wr_id, and the producer index just after it (end),
 * which tells rf_sq_retire() how far a CQE naming that WQE frees the queue.
 * struct rf_sq_attr takes one array of wqe_cnt of these from the caller
 * (wqe_cnt * sizeof(struct rf_sq_slot) bytes); rf_sq_init() clears it.
 *
 * A pair, not two arrays: a post writes both halves and a CQE reads both,
 * so with the pair in 16 bytes of one line a cold post or CQE misses on one
 * line of the table, not two (docs/benchmark-history.md, round 9). The type
 * is 16-byte aligned, which malloc() and calloc() give, so that no entry
 * straddles two lines; rf_sq_init() refuses a table that is not.
 */
struct rf_sq_slot {
	uint64_t wr_id;
	uint32_t end;
	uint32_t reserved;
} __attribute__((aligned(16)));
RF_STATIC_ASSERT(sizeof(struct rf_sq_slot) == 16, "rf_sq_slot: four to a cache line");

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
	RF_WC_SIG_ERR             = 0x43,	/* a signature check failed (cq_sig.h) */
	RF_WC_RECV                = 128,
	RF_WC_RECV_RDMA_WITH_IMM  = 129,
	RF_WC_TM_ADD              = 130,	/* tag matching (tm.h) */
	RF_WC_TM_DEL              = 131,
	RF_WC_TM_SYNC             = 132,
	RF_WC_TM_RECV             = 133,
	RF_WC_TM_NO_TAG           = 134,
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
 * @status:      enum rf_wc_status (below), numbered as ibv_wc_status
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

/*
 * Completion status, numbered exactly as libibverbs' enum ibv_wc_status
 * (the tests check every value), so this header needs no verbs.h. The
 * library's, not the hardware's: a CQE carries a syndrome (hw/cqe.h).
 */
enum rf_wc_status {
	RF_WC_SUCCESS           = 0,
	RF_WC_LOC_LEN_ERR       = 1,
	RF_WC_LOC_QP_OP_ERR     = 2,
	RF_WC_LOC_EEC_OP_ERR    = 3,
	RF_WC_LOC_PROT_ERR      = 4,
	RF_WC_WR_FLUSH_ERR      = 5,
	RF_WC_MW_BIND_ERR       = 6,
	RF_WC_BAD_RESP_ERR      = 7,
	RF_WC_LOC_ACCESS_ERR    = 8,
	RF_WC_REM_INV_REQ_ERR   = 9,
	RF_WC_REM_ACCESS_ERR    = 10,
	RF_WC_REM_OP_ERR        = 11,
	RF_WC_RETRY_EXC_ERR     = 12,
	RF_WC_RNR_RETRY_EXC_ERR = 13,
	RF_WC_REM_ABORT_ERR     = 16,
	RF_WC_GENERAL_ERR       = 21,
	RF_WC_TM_ERR            = 22,	/* a tag list operation failed (tm.h) */
	RF_WC_TM_RNDV_INCOMPLETE = 23,	/* a rendezvous the device did not finish */
};

/* The status libibverbs reports for an error CQE's syndrome. */
static inline RF_COLD enum rf_wc_status rf_cqe_syndrome_to_wc_status(uint8_t syndrome)
{
	switch (syndrome) {
	case RF_CQE_SYNDROME_LOCAL_LENGTH_ERR:        return RF_WC_LOC_LEN_ERR;
	case RF_CQE_SYNDROME_LOCAL_QP_OP_ERR:         return RF_WC_LOC_QP_OP_ERR;
	case RF_CQE_SYNDROME_LOCAL_PROT_ERR:          return RF_WC_LOC_PROT_ERR;
	case RF_CQE_SYNDROME_WR_FLUSH_ERR:            return RF_WC_WR_FLUSH_ERR;
	case RF_CQE_SYNDROME_MW_BIND_ERR:             return RF_WC_MW_BIND_ERR;
	case RF_CQE_SYNDROME_BAD_RESP_ERR:            return RF_WC_BAD_RESP_ERR;
	case RF_CQE_SYNDROME_LOCAL_ACCESS_ERR:        return RF_WC_LOC_ACCESS_ERR;
	case RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:    return RF_WC_REM_INV_REQ_ERR;
	case RF_CQE_SYNDROME_REMOTE_ACCESS_ERR:       return RF_WC_REM_ACCESS_ERR;
	case RF_CQE_SYNDROME_REMOTE_OP_ERR:           return RF_WC_REM_OP_ERR;
	case RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return RF_WC_RETRY_EXC_ERR;
	case RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR:       return RF_WC_RNR_RETRY_EXC_ERR;
	case RF_CQE_SYNDROME_REMOTE_ABORTED_ERR:      return RF_WC_REM_ABORT_ERR;
	default:                                      return RF_WC_GENERAL_ERR;
	}
}

/*
 * rf_wc_status_str - a constant string naming status (enum rf_wc_status,
 * as rf_wc.status holds it), for messages: "success", "remote access
 * error", ...; "unknown completion status" for a value that is none of
 * them (never NULL). The words are rdmafast's, not ibv_wc_status_str()'s.
 */
static inline RF_COLD const char *rf_wc_status_str(unsigned int status)
{
	switch (status) {
	case RF_WC_SUCCESS:           return "success";
	case RF_WC_LOC_LEN_ERR:       return "local length error";
	case RF_WC_LOC_QP_OP_ERR:     return "local QP operation error";
	case RF_WC_LOC_EEC_OP_ERR:    return "local EE context operation error";
	case RF_WC_LOC_PROT_ERR:      return "local protection error";
	case RF_WC_WR_FLUSH_ERR:      return "work request flushed";
	case RF_WC_MW_BIND_ERR:       return "memory window bind error";
	case RF_WC_BAD_RESP_ERR:      return "bad response";
	case RF_WC_LOC_ACCESS_ERR:    return "local access error";
	case RF_WC_REM_INV_REQ_ERR:   return "remote invalid request";
	case RF_WC_REM_ACCESS_ERR:    return "remote access error";
	case RF_WC_REM_OP_ERR:        return "remote operation error";
	case RF_WC_RETRY_EXC_ERR:     return "transport retry count exceeded";
	case RF_WC_RNR_RETRY_EXC_ERR: return "RNR retry count exceeded";
	case RF_WC_REM_ABORT_ERR:     return "remote aborted";
	case RF_WC_GENERAL_ERR:       return "general error";
	case RF_WC_TM_ERR:            return "tag list operation failed";
	case RF_WC_TM_RNDV_INCOMPLETE: return "rendezvous incomplete";
	default:                      return "unknown completion status";
	}
}


/* RF_WC_WITH_INV: the rkey the sender invalidated, in host order. */
RF_INLINE uint32_t rf_wc_inv_rkey(const struct rf_wc *wc)
{
	return rf_be32toh(wc->imm);
}

/*
 * struct rf_dc_dest - a DC target as a DCI's WQEs name it: the address
 * vector of the path to it with the DCT number and the DCT's access key
 * in place, in one of the two forms a DCI WQE may carry, and the control
 * segment bits the target's WQEs get (the DCI stream). Build it with
 * rf_dc_dest_init() or rf_dc_dest_init_compact(); the fields are
 * rdmafast's.
 *
 *	48 bytes  dqp_dct = dctn | MLX5_EXTENDED_UD_AV: the full AV (GRH,
 *	          RoCE MAC and GID), what libmlx5 writes
 *	16 bytes  dqp_dct = dctn: bytes 0..15 only (key, DCT, SL and rate,
 *	          DLID), for an InfiniBand path without GRH: 32 bytes less per
 *	          WQE, so a one-SGE WRITE or READ is one BB (UCX's
 *	          uct_ib_mlx5_base_av in src/uct/ib/mlx5/ib_mlx5.h)
 *
 * The device tells the forms apart by the extended bit; the WQE's DS
 * counts the AV's 1 or 3 DS. A post tests the form once and then runs
 * the straight-line code of that form, where the WQE's size and layout
 * are constants.
 */
struct rf_dc_dest {
	struct rf_wqe_av av;	/* compact: bytes 16..47 zero, never sent */
	uint64_t ctrl_hi;	/* ctrl bytes 8..15 ORed into every WQE: the stream id */
	uint32_t av_ds;		/* 3 or 1 */
};

RF_END_DECLS

#endif /* RDMAFAST_TYPES_H */
