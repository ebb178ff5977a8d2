/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/cqe.h - mlx5 completion queue entry formats (PRM "Completion
 * Queue Entry"): the 64-byte CQE, its place in a 128-byte CQE, the error
 * and signature error CQEs, opcodes, ownership, error syndromes and the
 * mini-CQE.
 *
 * Ownership: the CQ has 2^log_n entries and a free-running consumer index
 * ci. The entry at ci & (2^log_n - 1) belongs to software when its owner
 * bit (op_own bit 0) equals the lap parity (ci >> log_n) & 1; the device
 * writes owner 0 on the first lap, 1 on the second, and so on. libmlx5
 * fills a new CQ with op_own 0xf0 (INVALID, owner 0), which looks software
 * owned on lap 0, so it must also check the opcode; rdmafast refills it
 * with 0xf1 (INVALID, owner 1) when it takes the CQ over, after which the
 * owner bit alone decides (rf_cqe_sw_owned()).
 *
 * Only after ownership is established may the rest of the CQE be read,
 * behind rf_dma_rmb().
 */
#ifndef RDMAFAST_HW_CQE_H
#define RDMAFAST_HW_CQE_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>

RF_BEGIN_DECLS

/* ---- CQE opcodes (op_own >> 4) ------------------------------------------ */

enum {
	RF_CQE_REQ           = 0,	/* requester success; WQE opcode in sop_drop_qpn */
	RF_CQE_RESP_WR_IMM   = 1,	/* RDMA write with immediate consumed a receive */
	RF_CQE_RESP_SEND     = 2,
	RF_CQE_RESP_SEND_IMM = 3,
	RF_CQE_RESP_SEND_INV = 4,	/* invalidated rkey in imm_inval_pkey */
	RF_CQE_RESIZE_CQ     = 5,
	RF_CQE_NO_PACKET     = 6,
	RF_CQE_SIG_ERR       = 12,
	RF_CQE_REQ_ERR       = 13,
	RF_CQE_RESP_ERR      = 14,
	RF_CQE_INVALID       = 15,	/* never written by the device */
};

/* ---- CQE format (op_own bits [3:2]) ------------------------------------- */

enum {
	RF_CQE_FORMAT_NORMAL     = 0,
	RF_CQE_FORMAT_SCATTER_32 = 1,	/* up to 32 bytes of data in the CQE64 */
	RF_CQE_FORMAT_SCATTER_64 = 2,	/* up to 64 bytes in the 64 bytes before it */
	RF_CQE_FORMAT_COMPRESSED = 3,	/* title of a zip of mini-CQEs */
};

enum {
	RF_CQE_OWNER_MASK     = 0x01,
	RF_CQE_SE_MASK        = 0x02,	/* solicited event requested */
	RF_INLINE_SCATTER_32  = 0x04,	/* op_own format bits, as mlx5dv names them */
	RF_INLINE_SCATTER_64  = 0x08,
	RF_CQE_INIT_OP_OWN    = 0xf1,	/* INVALID, owner 1: what rf_cq_init writes */
};

/* flags_rqpn: [29:28] GRH location, [27:24] SL or RoCE packet type, [23:0] QPN */
enum {
	RF_CQE_GRH_NONE   = 0,
	RF_CQE_GRH_IN_BUF = 1,	/* GRH (40 bytes) at the start of the receive buffer */
	RF_CQE_GRH_IN_CQE = 2,	/* GRH in the first half of a 128-byte CQE */
};

/* ---- The 64-byte CQE ---------------------------------------------------- */

struct rf_cqe64 {
	uint8_t rsvd0[2];
	__be16  wqe_id;			/* striding RQ / Ethernet */
	uint8_t rsvd4[8];
	__be32  rss_hash_result;	/* Ethernet RQ of an RSS TIR: the Toeplitz hash */
	uint8_t rss_hash_type;		/* [7:6] L4 hashed (TCP 1, UDP 2, SPI 3), [3:2] IPv4 1, IPv6 2 */
	uint8_t ml_path;		/* [6:0] DLID path bits */
	uint8_t rsvd18[4];
	__be16  slid;			/* IB responder: source LID */
	__be32  flags_rqpn;		/* g, SL/packet type, remote QPN */
	uint8_t hds_ip_ext;		/* L2/L3/L4 checksum ok bits */
	uint8_t l4_hdr_type_etc;	/* Ethernet: [6:4] L4 header type, [3:2] L3 */
	__be16  vlan_info;
	__be32  srqn_uidx;		/* [23:0] SRQN (CQE v0) or user index (v1) */
	__be32  imm_inval_pkey;		/* immediate, invalidated rkey, or P_Key index */
	uint8_t app;
	uint8_t app_op;
	__be16  app_info;
	__be32  byte_cnt;		/* bytes received, or read by RDMA READ */
	__be64  timestamp;
	__be32  sop_drop_qpn;		/* [31:24] WQE opcode (requester), [23:0] QPN;
					 * Ethernet RQ: [31:24] frames dropped for want of
					 * a WQE since the last CQE, [23:0] the flow tag */
	__be16  wqe_counter;		/* SQ: first BB of the WQE; RQ/SRQ: WQE index */
	uint8_t signature;
	uint8_t op_own;			/* [7:4] opcode [3:2] format [1] SE [0] owner */
};
RF_STATIC_ASSERT(sizeof(struct rf_cqe64) == 64, "cqe64 size");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, wqe_id) == 2, "cqe wqe_id");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, rss_hash_result) == 12, "cqe rss_hash_result");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, rss_hash_type) == 16, "cqe rss_hash_type");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, ml_path) == 17, "cqe ml_path");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, slid) == 22, "cqe slid");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, flags_rqpn) == 24, "cqe flags_rqpn");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, hds_ip_ext) == 28, "cqe hds_ip_ext");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, l4_hdr_type_etc) == 29, "cqe l4_hdr_type_etc");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, vlan_info) == 30, "cqe vlan_info");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, srqn_uidx) == 32, "cqe srqn_uidx");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, imm_inval_pkey) == 36, "cqe imm_inval_pkey");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, app) == 40, "cqe app");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, app_op) == 41, "cqe app_op");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, app_info) == 42, "cqe app_info");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, byte_cnt) == 44, "cqe byte_cnt");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, timestamp) == 48, "cqe timestamp");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, sop_drop_qpn) == 56, "cqe sop_drop_qpn");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, wqe_counter) == 60, "cqe wqe_counter");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, signature) == 62, "cqe signature");
RF_STATIC_ASSERT(offsetof(struct rf_cqe64, op_own) == 63, "cqe op_own");

/* ---- The error CQE (opcodes REQ_ERR, RESP_ERR): same 64 bytes ----------- */

struct rf_err_cqe {
	uint8_t rsvd0[32];
	__be32  srqn;			/* as srqn_uidx */
	uint8_t rsvd1[16];
	uint8_t hw_err_synd;		/* debug */
	uint8_t hw_synd_type;		/* debug */
	uint8_t vendor_err_synd;	/* ibv_wc.vendor_err */
	uint8_t syndrome;		/* RF_CQE_SYNDROME_* */
	__be32  s_wqe_opcode_qpn;	/* [31:24] failing WQE opcode, [23:0] QPN */
	__be16  wqe_counter;		/* failing WQE */
	uint8_t signature;
	uint8_t op_own;
};
RF_STATIC_ASSERT(sizeof(struct rf_err_cqe) == 64, "err cqe size");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, srqn) == 32, "err srqn");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, hw_err_synd) == 52, "err hw_err_synd");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, vendor_err_synd) == 54, "err vendor_err_synd");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, syndrome) == 55, "err syndrome");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, s_wqe_opcode_qpn) == 56, "err s_wqe_opcode_qpn");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, wqe_counter) == 60, "err wqe_counter");
RF_STATIC_ASSERT(offsetof(struct rf_err_cqe, op_own) == 63, "err op_own");

/*
 * ---- The signature error CQE (opcode SIG_ERR): same 64 bytes ----------
 * A signature key's check failed (PRM "Signature Error CQE"; rdma-core's
 * struct mlx5_sigerr_cqe, providers/mlx5/cq.c). It names the key, not a
 * QP or a WQE: the WQE that moved the data completes on its own.
 */
struct rf_sig_err_cqe {
	uint8_t rsvd0[16];
	__be32  expected_trans_sig;	/* T10-DIF: guard << 16 | app tag; CRC32: the CRC */
	__be32  actual_trans_sig;	/* CRC64: the high halves */
	__be32  expected_ref_tag;	/* T10-DIF: the reference tag; CRC64: the low halves */
	__be32  actual_ref_tag;
	__be16  syndrome;		/* RF_SIG_ERR_SYND_* */
	uint8_t sig_type;		/* [2:0] RF_SIG_ERR_TYPE_* */
	uint8_t domain;			/* [2:0] RF_SIG_ERR_DOMAIN_* */
	__be32  mkey;			/* the key whose check failed */
	__be64  sig_err_offset;		/* where the failing block starts */
	uint8_t rsvd48[14];
	uint8_t signature;
	uint8_t op_own;
};
RF_STATIC_ASSERT(sizeof(struct rf_sig_err_cqe) == 64, "sig err cqe size");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, expected_trans_sig) == 16, "sig exp sig");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, actual_ref_tag) == 28, "sig act ref");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, syndrome) == 32, "sig syndrome");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, domain) == 35, "sig domain");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, mkey) == 36, "sig mkey");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, sig_err_offset) == 40, "sig offset");
RF_STATIC_ASSERT(offsetof(struct rf_sig_err_cqe, op_own) == 63, "sig op_own");

enum {
	RF_SIG_ERR_SYND_REFTAG = 1 << 11,	/* the reference tag differs */
	RF_SIG_ERR_SYND_APPTAG = 1 << 12,	/* the application tag differs */
	RF_SIG_ERR_SYND_GUARD  = 1 << 13,	/* the guard (T10-DIF) or CRC differs */
	RF_SIG_ERR_TYPE_BLOCK       = 0,	/* a block signature (the only one posted) */
	RF_SIG_ERR_TYPE_TRANSACTION = 1,
	RF_SIG_ERR_DOMAIN_WIRE   = 0,
	RF_SIG_ERR_DOMAIN_MEMORY = 1,
};

enum {
	RF_CQE_SYNDROME_LOCAL_LENGTH_ERR        = 0x01,
	RF_CQE_SYNDROME_LOCAL_QP_OP_ERR         = 0x02,
	RF_CQE_SYNDROME_LOCAL_PROT_ERR          = 0x04,
	RF_CQE_SYNDROME_WR_FLUSH_ERR            = 0x05,
	RF_CQE_SYNDROME_MW_BIND_ERR             = 0x06,
	RF_CQE_SYNDROME_BAD_RESP_ERR            = 0x10,
	RF_CQE_SYNDROME_LOCAL_ACCESS_ERR        = 0x11,
	RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR    = 0x12,
	RF_CQE_SYNDROME_REMOTE_ACCESS_ERR       = 0x13,
	RF_CQE_SYNDROME_REMOTE_OP_ERR           = 0x14,
	RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15,
	RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR       = 0x16,
	RF_CQE_SYNDROME_REMOTE_ABORTED_ERR      = 0x22,
};

enum {
	RF_CQE_VENDOR_SYNDROME_ODP_PFAULT = 0x93,
};

/* ---- Mini-CQE (8 bytes), in the slots after a compressed title CQE ------ */

struct rf_mini_cqe8 {
	union {
		__be32 rx_hash_result;
		struct {
			__be16 checksum;
			__be16 stride_idx;
		} rx;
		struct {
			__be16  wqe_counter;
			uint8_t s_wqe_opcode;
			uint8_t reserved;
		} s_wqe_info;
	} u;
	__be32 byte_cnt;
};
RF_STATIC_ASSERT(sizeof(struct rf_mini_cqe8) == 8, "mini cqe size");
RF_STATIC_ASSERT(offsetof(struct rf_mini_cqe8, byte_cnt) == 4, "mini cqe byte_cnt");

enum {
	RF_MINI_CQE_PER_SLOT = 8,	/* mini-CQEs in one 64-byte slot */
	/* what the first word of a mini-CQE holds, chosen at CQ creation */
	RF_MINI_CQE_RES_FORMAT_HASH        = 1 << 0,
	RF_MINI_CQE_RES_FORMAT_CSUM        = 1 << 1,
	RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX = 1 << 2,
};

/* ---- Accessors ---------------------------------------------------------- */

/* The CQE64 of a 64- or 128-byte entry: the last 64 bytes of the entry. */
RF_INLINE struct rf_cqe64 *rf_cqe64_of(void *entry, uint32_t cqe_size)
{
	return (struct rf_cqe64 *)((uint8_t *)entry + cqe_size - sizeof(struct rf_cqe64));
}

RF_INLINE uint8_t rf_cqe_opcode(uint8_t op_own)
{
	return op_own >> 4;
}

RF_INLINE uint8_t rf_cqe_format(uint8_t op_own)
{
	return (op_own >> 2) & 3;
}

/*
 * True when the entry read at consumer index ci, in a CQ of 2^log_n
 * entries initialized to RF_CQE_INIT_OP_OWN, belongs to software.
 */
RF_INLINE int rf_cqe_sw_owned(uint8_t op_own, uint32_t ci, unsigned log_n)
{
	return ((op_own ^ (ci >> log_n)) & RF_CQE_OWNER_MASK) == 0;
}

/* The same for a buffer as libmlx5 leaves it (0xf0): also reject INVALID. */
RF_INLINE int rf_cqe_sw_owned_strict(uint8_t op_own, uint32_t ci, unsigned log_n)
{
	return rf_cqe_sw_owned(op_own, ci, log_n) &&
	       rf_cqe_opcode(op_own) != RF_CQE_INVALID;
}

/*
 * One compare for the slow path: true for error, SIG_ERR and INVALID
 * opcodes (opcode >= 8) and for compressed CQEs (format 3).
 */
RF_INLINE int rf_cqe_is_err_or_zipped(uint8_t op_own)
{
	return (op_own & 0x8c) >= 0x0c;
}

RF_INLINE int rf_cqe_is_err(uint8_t op_own)
{
	return (uint8_t)(rf_cqe_opcode(op_own) - RF_CQE_REQ_ERR) <= 1;
}

RF_END_DECLS

#endif /* RDMAFAST_HW_CQE_H */
