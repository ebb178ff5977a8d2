/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/sq_umr.h - memory keys laid out from the send queue: UMR WQEs
 * that point an indirect key (mlx5dv_create_mkey()) at a list of regions,
 * at an interleaved pattern of them, and with a signature (T10-DIF or
 * CRC) computed or checked as data passes; invalidate with
 * rf_sq_post_local_inv() (sq_mw.h).
 *
 *	rf_sq_post_mr_list(sq, mkey->lkey, access, sge, n, flags, wr_id);
 *	rf_sq_post_mr_interleaved(sq, mkey->lkey, access, rounds, ent, n, ...);
 *	rf_sig_block_init(&sig, &mem, mem_psv, &wire, wire_psv, check, 0, 0);
 *	rf_sq_post_mr_list_sig(sq, mkey->lkey, access, sge, n, &sig, ...);
 *
 * Each is one UMR WQE (opcode 0x25, hw/umr.h) byte for byte as libmlx5's
 * mlx5dv_wr_mr_list(), mlx5dv_wr_mr_interleaved() and
 * mlx5dv_wr_mkey_configure() with its setters post it (rdma-core 44,
 * providers/mlx5/qp.c): the key's tag, its access bits, its length and
 * its translations, inline. As for windows (sq_mw.h), the WQEs after it
 * must not start before it finished: rdmafast posts an unsignaled NOP
 * with the initiator small fence right after it, where libmlx5 fences
 * the next WQE. Only RC queues carry them (libmlx5 offers them on RC QPs
 * only); the key must be free (invalidated) or fresh, and was created
 * for at least n entries (max_entries), else the UMR completes in error.
 *
 * The posts return 0, -ENOSPC (nothing written), or -EINVAL (nothing
 * written): not an RC queue, n is 0 or more than fits one WQE, access
 * has other bits. They ring only with RF_SEND_RING.
 */
#ifndef RDMAFAST_SQ_UMR_H
#define RDMAFAST_SQ_UMR_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/umr.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/detail/sq.h>
#include <rdmafast/detail/sq_slots.h>
#include <rdmafast/detail/sq_mw.h>
#include <rdmafast/detail/sq_umr.h>

RF_BEGIN_DECLS

/*
 * In access, beside RF_MKEY_ACCESS_LOCAL_WRITE, _REMOTE_READ,
 * _REMOTE_WRITE and _ATOMIC (rf_mw_access_ibv() converts IBV_ACCESS_*):
 * RF_UMR_ACCESS_KEEP leaves the key's access as it is
 * (mlx5dv_wr_mkey_configure() without mlx5dv_wr_set_mkey_access_flags());
 * RF_UMR_BSF_DISABLE turns a signature key's BSF off (a signature key
 * configured without a signature: libmlx5 does so on its first
 * configuration and after MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR);
 * RF_UMR_SIG_ERR_CNT(n) sets a signature key's signature error counter
 * to n (its low bit, the mkey context's sig_err_cnt): libmlx5 sets it to
 * 1 on the key's first configuration and, after each signature error
 * CQE of the key, to 1 + the errors so far on the next one.
 */
#define RF_UMR_ACCESS_KEEP RF__UMR_KEEP
#define RF_UMR_BSF_DISABLE RF__UMR_BSF_OFF
#define RF_UMR_SIG_ERR_CNT(n) (RF__UMR_SIG_ERR | (((uint32_t)(n) & 1u) ? RF__UMR_SIG_ERR_ODD : 0u))

/* Entries one UMR can carry: a list, an interleaved pattern, a list with a BSF. */
enum {
	RF_UMR_MAX_KLM = RF__UMR_MAX_XLAT,
	RF_UMR_MAX_INTERLEAVED = RF__UMR_MAX_XLAT - 1,
	RF_UMR_MAX_KLM_SIG = RF__UMR_MAX_XLAT - 4,
};

/* One entry of an interleaved layout (struct mlx5dv_mr_interleaved). */
struct rf_umr_interleaved {
	uint64_t addr;
	uint32_t bytes_count;	/* mapped from addr each round */
	uint32_t bytes_skip;	/* then skipped; count + skip at most 65535 */
	uint32_t lkey;
};

/*
 * rf_sq_post_mr_list - lay the memory key mkey (its lkey: the index and
 * the tag the key gets) over the n regions of sge, in order, with access
 * (RF_MKEY_ACCESS_* bits, RF_UMR_ACCESS_KEEP, RF_UMR_BSF_DISABLE): its
 * length is their sum (in 64 bits: rdma-core 44's libmlx5 sums in an int,
 * wrong past 2 GiB; later rdma-core sums in 64 bits), its addresses
 * start at 0. 2 + ceil(n / 4) BBs, plus 1 for the fence NOP. n is 1 to
 * RF_UMR_MAX_KLM.
 */
RF_INLINE int rf_sq_post_mr_list(struct rf_sq *sq, uint32_t mkey, uint32_t access,
				     const struct rf_sge *sge, uint32_t n, uint32_t flags,
				     uint64_t wr_id)
{
	uint32_t xds = (n + 3) & ~3u, nbb = 2 + xds / 4;
	struct rf_wqe_ctrl_seg *c;
	uint64_t len;

	if (RF_UNLIKELY(n - 1 >= RF_UMR_MAX_KLM || (access & ~RF__UMR_ACCESS_OK) ||
			sq->kind != RF_QP_RC))
		return -EINVAL;
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, nbb) + nbb + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, nbb);
	len = rf__umr_klm((struct rf_wqe_umr_klm_seg *)c + 8, sge, n);
	rf__umr_head((struct rf__wqe_words *)c, mkey, access, xds, 0, len);
	rf__umr_end(sq, c, 8 + xds, mkey, flags, wr_id);
	return 0;
}

/*
 * rf_sq_post_mr_interleaved - lay mkey over repeat_count rounds of the n
 * entries of ent: each round maps ent[0].bytes_count bytes, then
 * ent[1]'s, ..., and every entry's next round starts bytes_count +
 * bytes_skip further on. The length is one round's bytes times
 * repeat_count. 2 + ceil((n + 1) / 4) BBs, plus the fence NOP. n is 1 to
 * RF_UMR_MAX_INTERLEAVED; -EINVAL when an entry's count and skip exceed
 * 65535 (the entry's 16-bit stride, which libmlx5 truncates).
 */
RF_INLINE int rf_sq_post_mr_interleaved(struct rf_sq *sq, uint32_t mkey, uint32_t access,
					    uint32_t repeat_count,
					    const struct rf_umr_interleaved *ent, uint32_t n,
					    uint32_t flags, uint64_t wr_id)
{
	uint32_t xds = (n + 4) & ~3u, nbb = 2 + xds / 4, i, round = 0;
	struct rf_wqe_ctrl_seg *c;
	struct rf_wqe_umr_repeat_block_seg *r;
	struct rf_wqe_umr_repeat_ent_seg *e;
	uint64_t wide = 0;

	if (RF_UNLIKELY(n - 1 >= RF_UMR_MAX_INTERLEAVED || (access & ~RF__UMR_ACCESS_OK) ||
			sq->kind != RF_QP_RC))
		return -EINVAL;
	for (i = 0; i < n; i++)
		wide |= (uint64_t)ent[i].bytes_count + ent[i].bytes_skip;
	if (RF_UNLIKELY(wide > 0xffff))
		return -EINVAL;
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, nbb) + nbb + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, nbb);
	r = (struct rf_wqe_umr_repeat_block_seg *)((struct rf_wqe_umr_klm_seg *)c + 8);
	e = (struct rf_wqe_umr_repeat_ent_seg *)(r + 1);
	rf__umr_zero_block((struct rf_wqe_umr_klm_seg *)r + (n & ~3u));	/* holds entry n - 1 */
	for (i = 0; i < n; i++) {
		rf_set_umr_repeat_ent_seg(e + i, (uint16_t)(ent[i].bytes_count + ent[i].bytes_skip),
					  (uint16_t)ent[i].bytes_count, ent[i].lkey, ent[i].addr);
		round += ent[i].bytes_count;
	}
	rf_set_umr_repeat_block_seg(r, round, repeat_count, (uint16_t)n);
	rf__umr_head((struct rf__wqe_words *)c, mkey, access, xds, 0,
		     (uint64_t)round * repeat_count);
	rf__umr_end(sq, c, 8 + xds, mkey, flags, wr_id);
	return 0;
}

/* ---- Signatures --------------------------------------------------------- */

/* rf_sig_domain.type: T10-DIF by its guard's kind, or a CRC per block. */
enum {
	RF_SIG_T10DIF_CRC = 1,	/* T10-DIF, CRC16 guard (MLX5DV_SIG_T10DIF_CRC) */
	RF_SIG_T10DIF_CSUM,	/* T10-DIF, IP checksum guard */
	RF_SIG_CRC32,
	RF_SIG_CRC32C,
	RF_SIG_CRC64_XP10,
};

/* rf_sig_domain.block: the protected block's size (the BSF's selector). */
enum {
	RF_SIG_BLOCK_512  = RF_BSF_BS_512,
	RF_SIG_BLOCK_520  = RF_BSF_BS_520,
	RF_SIG_BLOCK_4048 = RF_BSF_BS_4048,
	RF_SIG_BLOCK_4096 = RF_BSF_BS_4096,
	RF_SIG_BLOCK_4160 = RF_BSF_BS_4160,
};

/* rf_sig_domain.dif_flags (enum mlx5dv_sig_t10dif_flags). */
enum {
	RF_SIG_T10DIF_REF_REMAP     = 1 << 0,	/* the reference tag grows per block */
	RF_SIG_T10DIF_APP_ESCAPE    = 1 << 1,	/* app tag 0xffff: block unchecked */
	RF_SIG_T10DIF_APP_REF_ESCAPE = 1 << 2,	/* and reference tag all ones */
};

/* rf_sig_block_init()'s flags: copy_mask says which signature bytes to copy. */
#define RF_SIG_COPY_MASK 1u
/* rf_sig_block's PSV of a domain left out. */
#define RF_SIG_NO_PSV 0xffffffffU

/* How one domain (memory or wire) protects its blocks (struct mlx5dv_sig_block_domain). */
struct rf_sig_domain {
	uint8_t  type;		/* RF_SIG_T10DIF_CRC, ... RF_SIG_CRC64_XP10 */
	uint8_t  block;		/* RF_SIG_BLOCK_* */
	uint16_t dif_flags;	/* T10-DIF: RF_SIG_T10DIF_* */
	uint16_t bg;		/* T10-DIF: the guard's seed, 0 or 0xffff */
	uint16_t app_tag;	/* T10-DIF */
	uint32_t ref_tag;	/* T10-DIF */
	uint64_t seed;		/* CRC: 0 or all ones of its width */
};

/*
 * A signature as a UMR carries it: the BSF, and the PSVs (a memory key's
 * signature state objects, created with it: PRM CREATE_PSV, DEVX) with
 * the value each starts from. Built once by rf_sig_block_init(), posted
 * any number of times.
 */
struct rf_sig_block {
	struct rf_bsf bsf;
	uint64_t mem_ts, wire_ts;	/* SET_PSV's transient signatures */
	uint32_t mem_psv, wire_psv;	/* RF_SIG_NO_PSV: no such domain */
};

/*
 * rf_sig_block_init - the signature block of mlx5dv_wr_set_mkey_sig_block():
 * mem and wire (either may be NULL, not both) with their PSV indexes
 * (24 bits), check_mask (which signature bytes the device checks,
 * enum mlx5dv_sig_mask), and with RF_SIG_COPY_MASK in flags copy_mask
 * (which it copies from memory to wire rather than generating; only when
 * both domains have the same block structure). Returns 0 or -EINVAL, for
 * the values libmlx5 refuses with EINVAL.
 */
static inline RF_COLD int rf_sig_block_init(struct rf_sig_block *b,
					    const struct rf_sig_domain *mem, uint32_t mem_psv,
					    const struct rf_sig_domain *wire, uint32_t wire_psv,
					    uint8_t check_mask, uint32_t flags, uint8_t copy_mask)
{
	const struct rf_sig_domain *d[2] = { mem, wire };
	uint32_t psv[2] = { mem_psv, wire_psv };
	struct rf_bsf_inl *inl[2] = { &b->bsf.m_inl, &b->bsf.w_inl };
	__be32 *bfs[2] = { &b->bsf.m_bfs_psv, &b->bsf.w_bfs_psv };
	uint64_t ts[2] = { 0, 0 };
	int i, sbs = 0;
	uint8_t cm = 0;

	if ((!mem && !wire) || (flags & ~RF_SIG_COPY_MASK))
		return -EINVAL;
	for (i = 0; i < 2; i++) {
		const struct rf_sig_domain *s = d[i];

		if (!s)
			continue;
		if (s->type < RF_SIG_T10DIF_CRC || s->type > RF_SIG_CRC64_XP10 ||
		    (s->block != RF_SIG_BLOCK_512 && s->block != RF_SIG_BLOCK_520 &&
		     s->block != RF_SIG_BLOCK_4048 && s->block != RF_SIG_BLOCK_4096 &&
		     s->block != RF_SIG_BLOCK_4160) || psv[i] > RF_BSF_PSV_INDEX_MASK)
			return -EINVAL;
		if (s->type <= RF_SIG_T10DIF_CSUM ?
		    (s->bg != 0 && s->bg != 0xffff) || (s->dif_flags & ~7u) :
		    s->type == RF_SIG_CRC64_XP10 ? s->seed != 0 && s->seed != ~0ULL :
		    s->seed != 0 && s->seed != 0xffffffffULL)
			return -EINVAL;
	}
	__builtin_memset(b, 0, sizeof(*b));
	b->bsf.bsf_size_sbs = RF_BSF_SIZE_WITH_INLINE << RF_BSF_SIZE_SHIFT;
	b->bsf.check_byte_mask = check_mask;
	b->bsf.raw_data_size = RF_BE32(0xffffffffU);
	for (i = 0; i < 2; i++) {
		const struct rf_sig_domain *s = d[i];
		uint32_t sel = 0;

		if (!s) {
			psv[i] = RF_SIG_NO_PSV;
			continue;
		}
		if (s->type <= RF_SIG_T10DIF_CSUM) {
			uint8_t chk = 0;

			inl[i]->vld_refresh = RF_BE16(RF_BSF_INL_VALID | RF_BSF_REFRESH_DIF);
			inl[i]->dif_apptag = rf_htobe16(s->app_tag);
			inl[i]->dif_reftag = rf_htobe32(s->ref_tag);
			inl[i]->sig_type = s->type == RF_SIG_T10DIF_CRC ? RF_T10DIF_CRC :
					   RF_T10DIF_IPCS;
			inl[i]->rp_inv_seed = RF_BSF_REPEAT_BLOCK | (s->bg ? RF_BSF_SEED : 0);
			if (s->dif_flags & RF_SIG_T10DIF_REF_REMAP)
				chk |= RF_BSF_INC_REFTAG;
			if (s->dif_flags & RF_SIG_T10DIF_APP_REF_ESCAPE)
				chk |= RF_BSF_APPREF_ESCAPE;
			else if (s->dif_flags & RF_SIG_T10DIF_APP_ESCAPE)
				chk |= RF_BSF_APPTAG_ESCAPE;
			inl[i]->dif_inc_ref_guard_check = chk;
			inl[i]->dif_app_bitmask_check = RF_BE16(0xffff);
			ts[i] = (uint64_t)s->bg << 48 | (uint64_t)s->app_tag << 32 | s->ref_tag;
		} else {
			sel = s->type == RF_SIG_CRC32 ? RF_BFS_CRC32_BASE :
			      s->type == RF_SIG_CRC32C ? RF_BFS_CRC32C_BASE : RF_BFS_CRC64_XP10_BASE;
			sel = (sel | RF_BFS_CRC_REPEAT_BIT | (s->seed ? 0 : RF_BFS_CRC_SEED_BIT)) <<
			      RF_BFS_SHIFT;
			ts[i] = s->type == RF_SIG_CRC64_XP10 ? s->seed : s->seed << 32;
		}
		*bfs[i] = rf_htobe32(sel | psv[i]);
	}
	if (mem)
		b->bsf.mem_sel = mem->block;
	if (wire) {
		/* same block structure: the signature can be copied, not regenerated */
		if (mem && mem->block == wire->block && wire->type > RF_SIG_T10DIF_CSUM) {
			sbs = mem->type == wire->type;
			cm = wire->type == RF_SIG_CRC64_XP10 ? 0xff : 0xf0;
		} else if (mem && mem->block == wire->block && mem->type <= RF_SIG_T10DIF_CSUM) {
			sbs = 1;
			cm = (mem->type == wire->type && mem->bg == wire->bg ? 0xc0 : 0) |
			     (mem->app_tag == wire->app_tag ? 0x30 : 0) |
			     (mem->ref_tag == wire->ref_tag ? 0x0f : 0);
		}
		if (flags & RF_SIG_COPY_MASK) {
			if (!sbs)
				return -EINVAL;
			cm = copy_mask;
		}
		if (sbs)
			b->bsf.bsf_size_sbs |= 1 << RF_BSF_SBS_SHIFT;
		b->bsf.wire_sel = sbs ? cm : wire->block;
	}
	b->mem_ts = ts[0];
	b->wire_ts = ts[1];
	b->mem_psv = psv[0];
	b->wire_psv = psv[1];
	return 0;
}

/*
 * rf_sq_post_mr_list_sig - rf_sq_post_mr_list() with the signature sig
 * (rf_sig_block_init()), as libmlx5 posts mlx5dv_wr_mkey_configure() with
 * the layout, access and signature setters: the UMR with the BSF after
 * its KLMs (its completion suppressed), then a SET_PSV WQE per domain
 * (memory first), which start the signatures; the last takes flags'
 * completion. The key was created with a signature
 * (MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE) and maps at most 4 GiB - 1.
 * 3 + ceil(n / 4) BBs, 1 per PSV and 1 for the fence NOP. n is 1 to
 * RF_UMR_MAX_KLM_SIG.
 */
RF_INLINE int rf_sq_post_mr_list_sig(struct rf_sq *sq, uint32_t mkey, uint32_t access,
					 const struct rf_sge *sge, uint32_t n,
					 const struct rf_sig_block *sig, uint32_t flags,
					 uint64_t wr_id)
{
	uint32_t xds = (n + 3) & ~3u, nbb = 3 + xds / 4, i;
	uint32_t two = sig->mem_psv != RF_SIG_NO_PSV && sig->wire_psv != RF_SIG_NO_PSV;
	struct rf_wqe_ctrl_seg *c;
	uint64_t len = 0;

	if (RF_UNLIKELY(n - 1 >= RF_UMR_MAX_KLM_SIG || (access & ~RF__UMR_ACCESS_OK) ||
			sq->kind != RF_QP_RC))
		return -EINVAL;
	for (i = 0; i < n; i++)
		len += sge[i].length;
	if (RF_UNLIKELY(len > 0xffffffffULL))	/* the BSF's raw data size */
		return -EINVAL;
	if (RF_UNLIKELY(sq->limit - sq->pi < rf__sq_pad_need(sq, nbb) + nbb + 1 + two + 1))
		return -ENOSPC;
	c = rf__sq_begin(sq, nbb);
	rf__umr_klm((struct rf_wqe_umr_klm_seg *)c + 8, sge, n);
	*(struct rf__wqe_words *)((struct rf_wqe_umr_klm_seg *)c + 8 + xds) =
		*(const struct rf__wqe_words *)&sig->bsf;
	rf__umr_head((struct rf__wqe_words *)c, mkey, access, xds, 4, len);
	/* the PSVs report the key ready: the UMR itself never writes a CQE */
	rf__sq_set_ctrl(c, sq->pi, RF_OPCODE_UMR, 0, sq->qpn_be | rf_htobe32(12 + xds),
			(sq->ctrl_hi | rf__sq_fm_bits(flags & RF__SEND_FM)) &
			~rf__sq_fm_bits(RF_WQE_CTRL_CQ_UPDATE), rf_htobe32(mkey));
	rf__sq_advance(sq, c, nbb, wr_id);
	if (sig->mem_psv != RF_SIG_NO_PSV)
		rf__umr_set_psv(sq, sig->mem_psv, sig->mem_ts,
				two ? flags & ~RF_SEND_SIGNALED : flags, wr_id);
	if (sig->wire_psv != RF_SIG_NO_PSV)
		rf__umr_set_psv(sq, sig->wire_psv, sig->wire_ts, flags, wr_id);
	rf__sq_umr_fence(sq, flags & RF_SEND_RING);
	return 0;
}

RF_END_DECLS

#endif /* RDMAFAST_SQ_UMR_H */
