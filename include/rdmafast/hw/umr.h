/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/umr.h - the formats of a UMR WQE (opcode 0x25: "user-mode
 * memory registration", PRM "UMR" and "Signature" sections), which
 * rewrites a memory key's context from the send queue, and of the SET_PSV
 * WQE (0x20) that seeds a signature's running value, as mlx5dv.h and
 * libmlx5's qp.c and wqe.h (rdma-core 44) lay them out:
 *
 *	bind window     ctrl(imm = window key) umr-ctrl mkey-context klm + 48
 *	                zero bytes; DS 12 (3 BB)
 *	local inval     ctrl(imm = key) umr-ctrl mkey-context(free); DS 8
 *	KLM list        ctrl(imm = mkey) umr-ctrl mkey-context klm[n] padded to
 *	                64 bytes; DS 8 + 4 * ceil(n / 4)
 *	interleaved     ctrl(imm = mkey) umr-ctrl mkey-context repeat-block
 *	                entry[n] padded to 64 bytes; DS 8 + 4 * ceil((n + 1) / 4)
 *	+ signature     ... bsf(64); DS + 4, then a SET_PSV per signed domain
 *	SET_PSV         ctrl psv; DS 2
 *
 * The WQE after a UMR must wait for it: RF_WQE_CTRL_INITIATOR_SMALL_FENCE.
 */
#ifndef RDMAFAST_HW_UMR_H
#define RDMAFAST_HW_UMR_H

#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>

RF_BEGIN_DECLS

/* ---- UMR control segment (48 bytes), mkey context (64), KLM (16) ------- */

enum {
	RF_UMR_CTRL_FLAG_INLINE             = 1 << 7,
	RF_UMR_CTRL_FLAG_CHECK_FREE         = 1 << 5,
	RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET = 1 << 4,
	RF_UMR_CTRL_FLAG_CHECK_QPN          = 1 << 3,
};

#define RF_UMR_MKEY_MASK_LEN               (1ULL << 0)
#define RF_UMR_MKEY_MASK_START_ADDR        (1ULL << 6)
#define RF_UMR_MKEY_MASK_SIG_ERR           (1ULL << 9)
#define RF_UMR_MKEY_MASK_BSF_ENABLE        (1ULL << 12)
#define RF_UMR_MKEY_MASK_MKEY              (1ULL << 13)
#define RF_UMR_MKEY_MASK_QPN               (1ULL << 14)
#define RF_UMR_MKEY_MASK_ACCESS_LOCAL_WRITE  (1ULL << 18)
#define RF_UMR_MKEY_MASK_ACCESS_REMOTE_READ  (1ULL << 19)
#define RF_UMR_MKEY_MASK_ACCESS_REMOTE_WRITE (1ULL << 20)
#define RF_UMR_MKEY_MASK_ACCESS_ATOMIC       (1ULL << 21)
#define RF_UMR_MKEY_MASK_FREE              (1ULL << 29)
/* The four access bits, updated together (mlx5dv_wr_set_mkey_access_flags()). */
#define RF_UMR_MKEY_MASK_ACCESS \
	(RF_UMR_MKEY_MASK_ACCESS_LOCAL_WRITE | RF_UMR_MKEY_MASK_ACCESS_REMOTE_READ | \
	 RF_UMR_MKEY_MASK_ACCESS_REMOTE_WRITE | RF_UMR_MKEY_MASK_ACCESS_ATOMIC)

/* The fields a memory-window bind updates (type 2 adds the QPN). */
#define RF_UMR_MKEY_MASK_BIND \
	(RF_UMR_MKEY_MASK_FREE | RF_UMR_MKEY_MASK_MKEY | RF_UMR_MKEY_MASK_LEN | \
	 RF_UMR_MKEY_MASK_START_ADDR | RF_UMR_MKEY_MASK_ACCESS_LOCAL_WRITE | \
	 RF_UMR_MKEY_MASK_ACCESS_REMOTE_READ | RF_UMR_MKEY_MASK_ACCESS_REMOTE_WRITE | \
	 RF_UMR_MKEY_MASK_ACCESS_ATOMIC)
/* The fields a local invalidate updates. */
#define RF_UMR_MKEY_MASK_INVALIDATE \
	(RF_UMR_MKEY_MASK_FREE | RF_UMR_MKEY_MASK_MKEY | RF_UMR_MKEY_MASK_QPN)

enum {
	RF_MKEY_CONTEXT_FREE = 1 << 6,	/* mkey context "free": invalid */
	RF_MKEY_ACCESS_ATOMIC       = 1 << 6,
	RF_MKEY_ACCESS_REMOTE_WRITE = 1 << 5,
	RF_MKEY_ACCESS_REMOTE_READ  = 1 << 4,
	RF_MKEY_ACCESS_LOCAL_WRITE  = 1 << 3,
	RF_MKEY_ACCESS_LOCAL_READ   = 1 << 2,
};

/* flags_pd of the mkey context: the key has a BSF (signature) after its translations. */
#define RF_MKEY_CONTEXT_BSF_ENABLE 0x40000000U
/* ... and its signature error counter's bit (sig_err_cnt; MASK_SIG_ERR updates it) */
#define RF_MKEY_CONTEXT_SIG_ERR_CNT_SHIFT 26

/* qpn_mkey of an mkey not bound to a QP (type-1 window, invalidated). */
#define RF_MKEY_NO_QPN 0xffffff00U

struct rf_wqe_umr_ctrl_seg {
	uint8_t flags;
	uint8_t rsvd0[3];
	__be16  klm_octowords;		/* translations, in 16-byte units */
	__be16  translation_offset;	/* bsf_octowords: BSF bytes / 16 when the mask has BSF_ENABLE */
	__be64  mkey_mask;
	uint8_t rsvd1[32];
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_umr_ctrl_seg) == 48, "umr ctrl size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_ctrl_seg, flags) == 0, "umr flags");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_ctrl_seg, klm_octowords) == 4, "umr klm_octowords");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_ctrl_seg, translation_offset) == 6, "umr translation_offset");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_ctrl_seg, mkey_mask) == 8, "umr mkey_mask");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_ctrl_seg, rsvd1) == 16, "umr rsvd1");

RF_INLINE void rf_set_umr_ctrl_seg(struct rf_wqe_umr_ctrl_seg *u, uint8_t flags,
				   uint16_t klm_octowords, uint64_t mkey_mask)
{
	u->flags = flags;
	__builtin_memset(u->rsvd0, 0, sizeof(u->rsvd0));
	u->klm_octowords = rf_htobe16(klm_octowords);
	u->translation_offset = 0;
	u->mkey_mask = rf_htobe64(mkey_mask);
	__builtin_memset(u->rsvd1, 0, sizeof(u->rsvd1));
}

struct rf_wqe_mkey_context_seg {
	uint8_t free;			/* RF_MKEY_CONTEXT_FREE or 0 */
	uint8_t reserved1;
	uint8_t access_flags;		/* RF_MKEY_ACCESS_* */
	uint8_t sf;
	__be32  qpn_mkey;		/* [31:8] bound QPN or 0xffffff, [7:0] key tag */
	__be32  reserved2;
	__be32  flags_pd;
	__be64  start_addr;		/* 0 for a zero-based window */
	__be64  len;
	__be32  bsf_octword_size;
	__be32  reserved3[4];
	__be32  translations_octword_size;
	uint8_t reserved4[3];
	uint8_t log_page_size;
	__be32  reserved;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_mkey_context_seg) == 64, "mkey ctx size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, free) == 0, "mkey free");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, access_flags) == 2, "mkey access");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, qpn_mkey) == 4, "mkey qpn_mkey");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, flags_pd) == 12, "mkey flags_pd");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, start_addr) == 16, "mkey start_addr");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, len) == 24, "mkey len");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, bsf_octword_size) == 32, "mkey bsf");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, translations_octword_size) == 52, "mkey translations");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_mkey_context_seg, log_page_size) == 59, "mkey log_page_size");

RF_INLINE void rf_set_mkey_context_seg(struct rf_wqe_mkey_context_seg *m,
				       uint8_t free_flag, uint8_t access_flags,
				       uint32_t qpn_mkey, uint64_t start_addr,
				       uint64_t len)
{
	__builtin_memset(m, 0, sizeof(*m));
	m->free = free_flag;
	m->access_flags = access_flags;
	m->qpn_mkey = rf_htobe32(qpn_mkey);
	m->start_addr = rf_htobe64(start_addr);
	m->len = rf_htobe64(len);
}

/* One KLM translation entry (16 bytes): a slice of a registered MR. */
struct rf_wqe_umr_klm_seg {
	__be32 byte_count;	/* at most 2 GiB */
	__be32 mkey;		/* lkey of the underlying MR */
	__be64 address;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_umr_klm_seg) == 16, "klm size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_klm_seg, mkey) == 4, "klm mkey");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_klm_seg, address) == 8, "klm address");

/* KLM lists are padded to 64 bytes: klm_octowords for n entries. */
#define RF_UMR_KLM_OCTOWORDS(n) ((((n) + 3) / 4) * 4)

RF_INLINE void rf_set_umr_klm_seg(struct rf_wqe_umr_klm_seg *k,
				  uint32_t byte_count, uint32_t mkey,
				  uint64_t address)
{
	k->byte_count = rf_htobe32(byte_count);
	k->mkey = rf_htobe32(mkey);
	k->address = rf_htobe64(address);
}

/*
 * ---- Repeat block (16 bytes) and its entries (16 each): interleaved -------
 *
 * The key maps repeat_count rounds of: entry 0's byte_count bytes from
 * its va, then entry 1's, ...; each round moves every entry's va on by
 * its stride (byte_count + the bytes skipped). The block's byte_count is
 * one round's.
 */
#define RF_UMR_REPEAT_BLOCK_OP 0x400U	/* op: a repeat block (libmlx5 writes 0x400) */

struct rf_wqe_umr_repeat_block_seg {
	__be32 byte_count;	/* bytes of one round: the entries' byte_count summed */
	__be32 op;		/* RF_UMR_REPEAT_BLOCK_OP */
	__be32 repeat_count;
	__be16 reserved;
	__be16 num_ent;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_umr_repeat_block_seg) == 16, "repeat block size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_block_seg, op) == 4, "repeat op");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_block_seg, repeat_count) == 8, "repeat count");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_block_seg, num_ent) == 14, "repeat num_ent");

struct rf_wqe_umr_repeat_ent_seg {
	__be16 stride;		/* byte_count + bytes skipped */
	__be16 byte_count;
	__be32 memkey;		/* lkey of the memory */
	__be64 va;
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_umr_repeat_ent_seg) == 16, "repeat entry size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_ent_seg, byte_count) == 2, "repeat entry count");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_ent_seg, memkey) == 4, "repeat entry memkey");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_umr_repeat_ent_seg, va) == 8, "repeat entry va");

RF_INLINE void rf_set_umr_repeat_block_seg(struct rf_wqe_umr_repeat_block_seg *r,
					   uint32_t byte_count, uint32_t repeat_count,
					   uint16_t num_ent)
{
	r->byte_count = rf_htobe32(byte_count);
	r->op = RF_BE32(RF_UMR_REPEAT_BLOCK_OP);
	r->repeat_count = rf_htobe32(repeat_count);
	r->reserved = 0;
	r->num_ent = rf_htobe16(num_ent);
}

RF_INLINE void rf_set_umr_repeat_ent_seg(struct rf_wqe_umr_repeat_ent_seg *e,
					 uint16_t stride, uint16_t byte_count,
					 uint32_t memkey, uint64_t va)
{
	e->stride = rf_htobe16(stride);
	e->byte_count = rf_htobe16(byte_count);
	e->memkey = rf_htobe32(memkey);
	e->va = rf_htobe64(va);
}

/*
 * ---- Byte stream format (BSF, 64 bytes): a signature, after the layout ----
 *
 * The basic part names each domain's format (block format selector, BFS,
 * with the PSV that holds its running value in the low 24 bits) and block
 * size, which bytes of the signature to check, and, when memory and wire
 * have the same block structure (SBS), which to copy instead of
 * regenerate. A T10-DIF domain adds its inline part (w_inl, m_inl): the
 * tags and how they advance. The extended part is unused (zero).
 */
enum {
	RF_BSF_SIZE_WITH_INLINE = 2,	/* bsf_size_sbs [7:6]: basic + inline */
	RF_BSF_SIZE_SHIFT = 6,
	RF_BSF_SBS_SHIFT = 4,		/* bsf_size_sbs [4]: same block structure */

	/* block format selector, << RF_BFS_SHIFT in w_bfs_psv / m_bfs_psv */
	RF_BFS_CRC32_BASE = 0x20,
	RF_BFS_CRC32C_BASE = 0x40,
	RF_BFS_CRC64_XP10_BASE = 0x50,
	RF_BFS_CRC_REPEAT_BIT = 0x2,	/* a CRC per block */
	RF_BFS_CRC_SEED_BIT = 0x1,	/* seed 0 (clear: all ones) */
	RF_BFS_SHIFT = 24,
	RF_BSF_PSV_INDEX_MASK = 0xffffff,

	/* inline (T10-DIF) part */
	RF_BSF_INL_VALID = 1 << 15,	/* vld_refresh */
	RF_BSF_REFRESH_DIF = 1 << 14,
	RF_BSF_REPEAT_BLOCK = 1 << 7,	/* rp_inv_seed */
	RF_BSF_INC_REFTAG = 1 << 6,	/* dif_inc_ref_guard_check */
	RF_BSF_SEED = 1 << 3,		/* rp_inv_seed: guard seed all ones */
	RF_BSF_APPTAG_ESCAPE = 0x1,
	RF_BSF_APPREF_ESCAPE = 0x2,
	RF_T10DIF_CRC = 0x1,		/* sig_type: the guard is a CRC */
	RF_T10DIF_IPCS = 0x2,		/* the guard is an IP checksum */
};

/* Block size selectors (bs_selector): 512, 520, 4096, 4160 and 4048 bytes. */
enum {
	RF_BSF_BS_512  = 1,
	RF_BSF_BS_520  = 2,
	RF_BSF_BS_4096 = 3,
	RF_BSF_BS_4160 = 4,
	RF_BSF_BS_4048 = 6,
};

struct rf_bsf_inl {
	__be16  vld_refresh;		/* RF_BSF_INL_VALID | RF_BSF_REFRESH_DIF */
	__be16  dif_apptag;
	__be32  dif_reftag;
	uint8_t sig_type;		/* RF_T10DIF_CRC or RF_T10DIF_IPCS */
	uint8_t rp_inv_seed;		/* RF_BSF_REPEAT_BLOCK, RF_BSF_SEED */
	uint8_t rsvd[3];
	uint8_t dif_inc_ref_guard_check;	/* RF_BSF_INC_REFTAG, escapes */
	__be16  dif_app_bitmask_check;
};
RF_STATIC_ASSERT(sizeof(struct rf_bsf_inl) == 16, "bsf inline size");
RF_STATIC_ASSERT(offsetof(struct rf_bsf_inl, dif_reftag) == 4, "bsf inline reftag");
RF_STATIC_ASSERT(offsetof(struct rf_bsf_inl, sig_type) == 8, "bsf inline sig_type");
RF_STATIC_ASSERT(offsetof(struct rf_bsf_inl, dif_inc_ref_guard_check) == 13, "bsf inline check");
RF_STATIC_ASSERT(offsetof(struct rf_bsf_inl, dif_app_bitmask_check) == 14, "bsf inline bitmask");

struct rf_bsf {
	uint8_t bsf_size_sbs;		/* size << 6 | sbs << 4 */
	uint8_t check_byte_mask;	/* signature bytes checked */
	uint8_t wire_sel;		/* wire bs_selector, or copy_byte_mask with SBS */
	uint8_t mem_sel;		/* memory bs_selector */
	__be32  raw_data_size;		/* all ones: the key's length */
	__be32  w_bfs_psv;		/* wire: BFS << 24 | PSV index */
	__be32  m_bfs_psv;		/* memory: BFS << 24 | PSV index */
	uint8_t ext[16];		/* extended part: unused, zero */
	struct rf_bsf_inl w_inl;	/* wire T10-DIF */
	struct rf_bsf_inl m_inl;	/* memory T10-DIF */
};
RF_STATIC_ASSERT(sizeof(struct rf_bsf) == 64, "bsf size");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, wire_sel) == 2, "bsf wire");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, mem_sel) == 3, "bsf mem");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, raw_data_size) == 4, "bsf raw_data_size");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, w_bfs_psv) == 8, "bsf w_bfs_psv");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, m_bfs_psv) == 12, "bsf m_bfs_psv");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, w_inl) == 32, "bsf w_inl");
RF_STATIC_ASSERT(offsetof(struct rf_bsf, m_inl) == 48, "bsf m_inl");

/* ---- SET_PSV segment (16 bytes): a PSV's starting signature ------------- */

struct rf_wqe_set_psv_seg {
	__be32  psv_index;
	__be16  syndrome;
	uint8_t reserved[2];
	__be64  transient_signature;	/* T10-DIF: guard << 48 | app << 32 | ref; CRC: seed */
};
RF_STATIC_ASSERT(sizeof(struct rf_wqe_set_psv_seg) == 16, "set psv size");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_set_psv_seg, syndrome) == 4, "set psv syndrome");
RF_STATIC_ASSERT(offsetof(struct rf_wqe_set_psv_seg, transient_signature) == 8, "set psv ts");

RF_INLINE void rf_set_set_psv_seg(struct rf_wqe_set_psv_seg *p, uint32_t psv_index,
				  uint64_t transient_signature)
{
	p->psv_index = rf_htobe32(psv_index);
	p->syndrome = 0;
	p->reserved[0] = 0;
	p->reserved[1] = 0;
	p->transient_signature = rf_htobe64(transient_signature);
}

RF_END_DECLS

#endif /* RDMAFAST_HW_UMR_H */
