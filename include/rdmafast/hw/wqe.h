/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/wqe.h - mlx5 work queue element formats (PRM "Send WQE",
 * "Receive WQE" and "UMR" sections): segments, opcodes, flags, geometry.
 *
 * A send WQE is a control segment followed by the segments its transport
 * and opcode need, each a multiple of 16 bytes (one "DS"):
 *
 *	RC/UC   SEND*         ctrl [xrc] data... | inline
 *	        WRITE*        ctrl [xrc] raddr data... | inline
 *	        READ          ctrl [xrc] raddr data...
 *	        CS/FA         ctrl [xrc] raddr atomic data(8)
 *	        masked atomic ctrl [xrc] raddr masked-seg data(4|8)
 *	UD      SEND*         ctrl av(48) data... | inline
 *	any     UMR           ctrl umr-ctrl mkey-context [translations] [bsf]
 *	        SET_PSV       ctrl psv
 *	        NOP           ctrl
 *
 * ([xrc] is present on XRC_SEND QPs only; the UMR and SET_PSV segments
 * are in hw/umr.h, which this header includes.) Field names follow the kernel
 * and rdma-core so they can be grepped across both.
 *
 * The rf_set_* functions write every byte of their segment (reserved bytes
 * as zero), so a WQE never needs a memset, and have no branches.
 */
#ifndef RDMAFAST_HW_WQE_H
#define RDMAFAST_HW_WQE_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/umr.h>	/* the UMR segments (bind, invalidate, memory keys) */

RF_BEGIN_DECLS

/* ---- Geometry ----------------------------------------------------------- */

enum {
	RF_SEND_WQE_BB      = 64,	/* basic block: the SQ allocation unit */
	RF_SEND_WQE_SHIFT   = 6,
	RF_WQE_DS_SIZE      = 16,	/* one DS: the WQE size unit */
	RF_WQE_DS_PER_BB    = 4,
	RF_WQE_MAX_DS       = 63,	/* qpn_ds has a 6-bit DS field: 1008 bytes */
	RF_SEND_WQE_MAX_BB  = 16,	/* largest send WQE (kernel's limit) */
	RF_RECV_WQE_MIN     = 16,	/* one data segment */
};

/* Basic blocks taken by a WQE of ds DS units. */
#define RF_WQE_BBS(ds) (((ds) + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB)

/* ---- Opcodes (control segment, bits [7:0] of opmod_idx_opcode) ---------- */

enum {
	RF_OPCODE_NOP              = 0x00,
	RF_OPCODE_SEND_INVAL       = 0x01,
	RF_OPCODE_RDMA_WRITE       = 0x08,
	RF_OPCODE_RDMA_WRITE_IMM   = 0x09,
	RF_OPCODE_SEND             = 0x0a,
	RF_OPCODE_SEND_IMM         = 0x0b,
	RF_OPCODE_TSO              = 0x0e,
	RF_OPCODE_RDMA_READ        = 0x10,
	RF_OPCODE_ATOMIC_CS        = 0x11,
	RF_OPCODE_ATOMIC_FA        = 0x12,
	RF_OPCODE_ATOMIC_MASKED_CS = 0x14,
	RF_OPCODE_ATOMIC_MASKED_FA = 0x15,
	RF_OPCODE_BIND_MW          = 0x18,	/* legacy; upstream binds by UMR */
	RF_OPCODE_FMR              = 0x19,
	RF_OPCODE_LOCAL_INVAL      = 0x1b,	/* legacy; upstream uses UMR */
	RF_OPCODE_CONFIG_CMD       = 0x1f,
	RF_OPCODE_SET_PSV          = 0x20,
	RF_OPCODE_UMR              = 0x25,
	RF_OPCODE_TAG_MATCHING     = 0x28,
	RF_OPCODE_FLOW_TBL_ACCESS  = 0x2c,
	RF_OPCODE_MMO              = 0x2f,
};

/*
 * READ and the atomics: the requests whose responder returns data. Only
 * their requester completions carry a byte count, and UC has none of them.
 */
RF_INLINE int rf_opcode_fetches(uint8_t opcode)
{
	return opcode == RF_OPCODE_RDMA_READ || opcode == RF_OPCODE_ATOMIC_CS ||
	       opcode == RF_OPCODE_ATOMIC_FA || opcode == RF_OPCODE_ATOMIC_MASKED_CS ||
	       opcode == RF_OPCODE_ATOMIC_MASKED_FA;
}

/*
 * Opcode modifier for the masked ("extended") atomics: 8 | (log2(size) - 2),
 * so 0x08 for 4-byte and 0x09 for 8-byte operands. 0 for everything else.
 */
enum {
	RF_OPMOD_EXT_ATOMIC_4B = 0x08,
	RF_OPMOD_EXT_ATOMIC_8B = 0x09,
};

/* ---- Control segment flags (fm_ce_se) ----------------------------------- */

enum {
	RF_WQE_CTRL_SOLICITED     = 1 << 1,	/* SE: solicited event at the responder */
	RF_WQE_CTRL_CQ_ERROR_ONLY = 0 << 2,	/* CE 0: CQE only on error (unsignaled) */
	RF_WQE_CTRL_CQ_UPDATE     = 2 << 2,	/* CE 2: always write a CQE (signaled) */
	RF_WQE_CTRL_CE_MASK       = 3 << 2,
	/* FM [7:5], the fence mode */
	RF_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5,	/* after local UMR/bind */
	RF_WQE_CTRL_FENCE_ORDERING        = 2 << 5,	/* wait for prior READ/atomic */
	RF_WQE_CTRL_STRONG_ORDERING       = 3 << 5,
	RF_WQE_CTRL_FENCE                 = 4 << 5,	/* small and fence: IBV_SEND_FENCE */
	RF_WQE_CTRL_FM_MASK               = 7 << 5,
};

/* ---- Control segment (16 bytes, always first) -------------------------- */

struct rf_wqe_ctrl_seg {
	__be32  opmod_idx_opcode;	/* [31:24] opmod [23:8] wqe index [7:0] opcode */
	__be32  qpn_ds;			/* [31:8] QPN [5:0] DS */
	uint8_t signature;		/* WQE checksum; 0 unless MLX5_QP_SIGNATURE */
	uint8_t dci_stream_channel_id[2];	/* BE16, DCI only */
	uint8_t fm_ce_se;		/* fence mode, completion, solicited */
	__be32  imm;			/* immediate, rkey to invalidate, or UMR mkey */
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_ctrl_seg) == 16, "ctrl seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, opmod_idx_opcode) == 0, "ctrl opmod_idx_opcode");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, qpn_ds) == 4, "ctrl qpn_ds");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, signature) == 8, "ctrl signature");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, dci_stream_channel_id) == 9, "ctrl dci");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, fm_ce_se) == 11, "ctrl fm_ce_se");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_ctrl_seg, imm) == 12, "ctrl imm");

/*
 * The QPN half of qpn_ds, swapped once per queue: a byte swap distributes
 * over OR, so qpn_ds = rf_ctrl_qpn(qpn) | rf_htobe32(ds) on the hot path.
 */
RF_INLINE __be32 rf_ctrl_qpn(uint32_t qpn)
{
	return rf_htobe32(qpn << 8);
}

/*
 * rf_set_ctrl_seg - fill a control segment.
 * @pi:       producer index of the WQE's first basic block (low 16 bits used)
 * @qpn_be:   rf_ctrl_qpn(qpn), precomputed per queue
 * @fm_ce_se: RF_WQE_CTRL_* flags
 * @ds:       WQE size in 16-byte units, control segment included
 * @imm:      immediate data as the application gave it (already network
 *            order), rf_htobe32(rkey) for SEND_INVAL, rf_htobe32(mkey) for UMR
 * The signature byte is written 0: WQE signatures are a libmlx5 debug mode
 * (MLX5_QP_SIGNATURE) that rdmafast does not use.
 */
RF_INLINE void rf_set_ctrl_seg(struct rf_wqe_ctrl_seg *c, uint16_t pi,
			       uint8_t opcode, uint8_t opmod, __be32 qpn_be,
			       uint8_t fm_ce_se, uint8_t ds, __be32 imm)
{
	c->opmod_idx_opcode = rf_htobe32(((uint32_t)opmod << 24) |
					 ((uint32_t)pi << 8) | opcode);
	c->qpn_ds = qpn_be | rf_htobe32(ds);
	c->signature = 0;
	c->dci_stream_channel_id[0] = 0;
	c->dci_stream_channel_id[1] = 0;
	c->fm_ce_se = fm_ce_se;
	c->imm = imm;
}

/* ---- Remote address segment (16 bytes) --------------------------------- */

struct rf_wqe_raddr_seg {
	__be64 raddr;
	__be32 rkey;
	__be32 reserved;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_raddr_seg) == 16, "raddr seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_raddr_seg, raddr) == 0, "raddr raddr");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_raddr_seg, rkey) == 8, "raddr rkey");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_raddr_seg, reserved) == 12, "raddr reserved");

RF_INLINE void rf_set_raddr_seg(struct rf_wqe_raddr_seg *r, uint64_t raddr,
				uint32_t rkey)
{
	r->raddr = rf_htobe64(raddr);
	r->rkey = rf_htobe32(rkey);
	r->reserved = 0;
}

/* ---- Atomic segment, IB compatible (16 bytes): ATOMIC_CS, ATOMIC_FA ----- */

struct rf_wqe_atomic_seg {
	__be64 swap_add;	/* CS: swap value; FA: value to add */
	__be64 compare;		/* CS: compare value; FA: unused (0) */
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_atomic_seg) == 16, "atomic seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_atomic_seg, swap_add) == 0, "atomic swap_add");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_atomic_seg, compare) == 8, "atomic compare");

RF_INLINE void rf_set_atomic_seg(struct rf_wqe_atomic_seg *a, uint64_t swap_add,
				 uint64_t compare)
{
	a->swap_add = rf_htobe64(swap_add);
	a->compare = rf_htobe64(compare);
}

/*
 * ---- Masked ("extended") atomic segments: ATOMIC_MASKED_CS/FA ------------
 *
 * Compare-and-swap: the target becomes (old & ~swap_mask) | (swap &
 * swap_mask) when (old & compare_mask) == (compare & compare_mask).
 * Fetch-and-add: field_boundary bits mark where carries stop, so one
 * operation adds several packed fields (all-ones boundary = XOR).
 * The fetched old value is written to the data segment that follows, of
 * 4 or 8 bytes. The QP must be in extended atomic mode.
 */
struct rf_wqe_masked_cs32_seg {
	__be32 swap;
	__be32 compare;
	__be32 swap_mask;
	__be32 compare_mask;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_masked_cs32_seg) == 16, "masked cs32 size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs32_seg, compare) == 4, "cs32 compare");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs32_seg, swap_mask) == 8, "cs32 swap_mask");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs32_seg, compare_mask) == 12, "cs32 compare_mask");

/* 8-byte masked CS: two DS, the operands then the masks. */
struct rf_wqe_masked_cs64_seg {
	__be64 swap;
	__be64 compare;
	__be64 swap_mask;
	__be64 compare_mask;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_masked_cs64_seg) == 32, "masked cs64 size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs64_seg, compare) == 8, "cs64 compare");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs64_seg, swap_mask) == 16, "cs64 swap_mask");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_cs64_seg, compare_mask) == 24, "cs64 compare_mask");

struct rf_wqe_masked_fa32_seg {
	__be32  add;
	__be32  field_boundary;
	uint8_t reserved[8];
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_masked_fa32_seg) == 16, "masked fa32 size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_fa32_seg, field_boundary) == 4, "fa32 boundary");

struct rf_wqe_masked_fa64_seg {
	__be64 add;
	__be64 field_boundary;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_masked_fa64_seg) == 16, "masked fa64 size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_masked_fa64_seg, field_boundary) == 8, "fa64 boundary");

RF_INLINE void rf_set_masked_cs32_seg(struct rf_wqe_masked_cs32_seg *s,
				      uint32_t swap, uint32_t compare,
				      uint32_t swap_mask, uint32_t compare_mask)
{
	s->swap = rf_htobe32(swap);
	s->compare = rf_htobe32(compare);
	s->swap_mask = rf_htobe32(swap_mask);
	s->compare_mask = rf_htobe32(compare_mask);
}

RF_INLINE void rf_set_masked_cs64_seg(struct rf_wqe_masked_cs64_seg *s,
				      uint64_t swap, uint64_t compare,
				      uint64_t swap_mask, uint64_t compare_mask)
{
	s->swap = rf_htobe64(swap);
	s->compare = rf_htobe64(compare);
	s->swap_mask = rf_htobe64(swap_mask);
	s->compare_mask = rf_htobe64(compare_mask);
}

RF_INLINE void rf_set_masked_fa32_seg(struct rf_wqe_masked_fa32_seg *s,
				      uint32_t add, uint32_t field_boundary)
{
	s->add = rf_htobe32(add);
	s->field_boundary = rf_htobe32(field_boundary);
	__builtin_memset(s->reserved, 0, sizeof(s->reserved));
}

RF_INLINE void rf_set_masked_fa64_seg(struct rf_wqe_masked_fa64_seg *s,
				      uint64_t add, uint64_t field_boundary)
{
	s->add = rf_htobe64(add);
	s->field_boundary = rf_htobe64(field_boundary);
}

/* ---- Data (pointer) segment, send and receive (16 bytes) --------------- */

enum {
	/* lkey of the receive entry that ends a scatter list shorter than max */
	RF_INVALID_LKEY = 0x100,
};

struct rf_wqe_data_seg {
	__be32 byte_count;	/* bit 31 must be 0 (1 means inline) */
	__be32 lkey;
	__be64 addr;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_data_seg) == 16, "data seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_data_seg, byte_count) == 0, "data byte_count");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_data_seg, lkey) == 4, "data lkey");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_data_seg, addr) == 8, "data addr");

RF_INLINE void rf_set_data_seg(struct rf_wqe_data_seg *d, uint32_t length,
			       uint32_t lkey, uint64_t addr)
{
	d->byte_count = rf_htobe32(length);
	d->lkey = rf_htobe32(lkey);
	d->addr = rf_htobe64(addr);
}

/* The terminator of a receive scatter list: byte_count 0, invalid lkey. */
RF_INLINE void rf_set_recv_terminator(struct rf_wqe_data_seg *d)
{
	d->byte_count = 0;
	d->lkey = RF_BE32(RF_INVALID_LKEY);
	d->addr = 0;
}

/* ---- Inline data segment ------------------------------------------------ */

/*
 * A 4-byte header, then the payload bytes packed with no padding; the
 * segment occupies align(4 + length, 16) bytes. The device takes the length
 * from the low 10 bits.
 */
#define RF_INLINE_SEG 0x80000000U
enum { RF_INLINE_MAX_LEN = 0x3ff };

struct rf_wqe_inline_seg {
	__be32 byte_count;	/* RF_INLINE_SEG | length */
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_inline_seg) == 4, "inline seg size");

/* DS units taken by an inline segment of len payload bytes (len > 0). */
#define RF_INLINE_DS(len) (((len) + 4 + RF_WQE_DS_SIZE - 1) / RF_WQE_DS_SIZE)

RF_INLINE void rf_set_inline_hdr(struct rf_wqe_inline_seg *s, uint32_t len)
{
	s->byte_count = rf_htobe32(RF_INLINE_SEG | len);
}

/* ---- Address vector / datagram segment (48 bytes): UD ------------------ */

#define RF_EXTENDED_UD_AV 0x80000000U	/* dqp_dct: full 48-byte AV */
#define RF_AV_GRH         0x40000000U	/* grh_gid_fl: GRH present (IB) */

struct rf_wqe_av {
	union {
		struct {
			__be32 qkey;
			__be32 reserved;
		} qkey;
		__be64 dc_key;
	} key;
	__be32  dqp_dct;	/* [31] extended AV, [23:0] destination QPN/DCT */
	uint8_t stat_rate_sl;	/* [7:4] rate, [3:0] SL (IB) or priority << 1 */
	uint8_t fl_mlid;	/* [7] force loopback, [6:0] source path bits */
	__be16  rlid;		/* IB: DLID; RoCE v2: UDP source port */
	uint8_t reserved0[4];
	uint8_t rmac[6];	/* RoCE destination MAC */
	uint8_t tclass;
	uint8_t hop_limit;
	__be32  grh_gid_fl;	/* [30] GRH (IB), [27:20] SGID index, [19:0] flow label */
	uint8_t rgid[16];
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_av) == 48, "av size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, key) == 0, "av key");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, dqp_dct) == 8, "av dqp_dct");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, stat_rate_sl) == 12, "av stat_rate_sl");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, fl_mlid) == 13, "av fl_mlid");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, rlid) == 14, "av rlid");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, rmac) == 20, "av rmac");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, tclass) == 26, "av tclass");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, hop_limit) == 27, "av hop_limit");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, grh_gid_fl) == 28, "av grh_gid_fl");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_av, rgid) == 32, "av rgid");

/*
 * rf_set_av - build a complete address vector field by field (for callers
 * without an ibv_ah; with one, rf_set_datagram_seg() copies its AV).
 * @key: UD: (uint64_t)qkey << 32; DC: the DC access key
 * @ext: 1 for the full 48-byte form (always, on UD)
 * @rmac, @rgid: 6 and 16 bytes
 */
RF_INLINE void rf_set_av(struct rf_wqe_av *av, uint64_t key, uint32_t dqp_dct,
			 uint8_t ext, uint8_t stat_rate_sl, uint8_t fl_mlid,
			 uint16_t rlid, const uint8_t *rmac, uint8_t tclass,
			 uint8_t hop_limit, uint32_t grh_gid_fl,
			 const uint8_t *rgid)
{
	av->key.dc_key = rf_htobe64(key);
	av->dqp_dct = rf_htobe32(((uint32_t)ext << 31) | dqp_dct);
	av->stat_rate_sl = stat_rate_sl;
	av->fl_mlid = fl_mlid;
	av->rlid = rf_htobe16(rlid);
	__builtin_memset(av->reserved0, 0, sizeof(av->reserved0));
	__builtin_memcpy(av->rmac, rmac, sizeof(av->rmac));
	av->tclass = tclass;
	av->hop_limit = hop_limit;
	av->grh_gid_fl = rf_htobe32(grh_gid_fl);
	__builtin_memcpy(av->rgid, rgid, sizeof(av->rgid));
}

/*
 * rf_set_datagram_seg - the UD transport segment: the address handle's AV
 * (mlx5dv_ah.av, which has neither the extended bit nor a QPN) with the
 * destination QPN and Q_Key filled in, as libmlx5 posts it.
 */
RF_INLINE void rf_set_datagram_seg(struct rf_wqe_av *seg,
				   const struct rf_wqe_av *ah_av,
				   uint32_t remote_qpn, uint32_t qkey)
{
	*seg = *ah_av;
	seg->key.qkey.qkey = rf_htobe32(qkey);
	seg->key.qkey.reserved = 0;
	seg->dqp_dct = rf_htobe32(RF_EXTENDED_UD_AV | remote_qpn);
}

/* ---- XRC segment (16 bytes): XRC_SEND QPs, right after ctrl ------------- */

struct rf_wqe_xrc_seg {
	__be32  xrc_srqn;	/* remote XRC SRQ number, 24 bits */
	uint8_t reserved[12];
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_xrc_seg) == 16, "xrc seg size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_xrc_seg, xrc_srqn) == 0, "xrc srqn");

RF_INLINE void rf_set_xrc_seg(struct rf_wqe_xrc_seg *x, uint32_t srqn)
{
	x->xrc_srqn = rf_htobe32(srqn);
	__builtin_memset(x->reserved, 0, sizeof(x->reserved));
}

/* ---- SRQ WQE header (16 bytes), before the data segments ---------------- */

struct rf_wqe_srq_next_seg {
	uint8_t rsvd0[2];
	__be16  next_wqe_index;	/* the free list the device follows */
	uint8_t signature;
	uint8_t rsvd1[11];
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_srq_next_seg) == 16, "srq next size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_srq_next_seg, next_wqe_index) == 2, "srq next index");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_srq_next_seg, signature) == 4, "srq signature");

RF_INLINE void rf_set_srq_next_seg(struct rf_wqe_srq_next_seg *n, uint16_t next)
{
	__builtin_memset(n, 0, sizeof(*n));
	n->next_wqe_index = rf_htobe16(next);
}

RF_END_DECLS

#endif /* RDMAFAST_HW_WQE_H */
