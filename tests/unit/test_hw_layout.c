/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Cross-check of include/rdmafast/hw/ against the installed
 * <infiniband/mlx5dv.h>, rdma-core's own definition of the formats: every
 * struct that has an mlx5dv counterpart has its size and the offset and size
 * of every field; every opcode, flag and constant has its MLX5_* value.
 */
#include <stddef.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <rdmafast/rdmafast.h>

#define FIELD_SIZE(type, f) sizeof(((type *)0)->f)

#define SAME_SIZE(ours, theirs) \
	cr_expect_eq(sizeof(struct ours), sizeof(struct theirs), \
		     "sizeof(%s) = %zu, mlx5dv %s = %zu", #ours, \
		     sizeof(struct ours), #theirs, sizeof(struct theirs))

/* Same offset and same size, under the same name in both. */
#define SAME_FIELD(ours, theirs, f) SAME_FIELD2(ours, f, theirs, f)
#define SAME_FIELD2(ours, of, theirs, tf) do { \
	cr_expect_eq(offsetof(struct ours, of), offsetof(struct theirs, tf), \
		     "%s.%s at %zu, mlx5dv %s.%s at %zu", #ours, #of, \
		     offsetof(struct ours, of), #theirs, #tf, \
		     offsetof(struct theirs, tf)); \
	cr_expect_eq(FIELD_SIZE(struct ours, of), FIELD_SIZE(struct theirs, tf), \
		     "%s.%s is %zu bytes, mlx5dv %s.%s %zu", #ours, #of, \
		     FIELD_SIZE(struct ours, of), #theirs, #tf, \
		     FIELD_SIZE(struct theirs, tf)); \
} while (0)

#define SAME_VALUE(ours, theirs) \
	cr_expect_eq((long long)(ours), (long long)(theirs), \
		     "%s = %#llx, %s = %#llx", #ours, (long long)(ours), \
		     #theirs, (long long)(theirs))

Test(hw_layout, ctrl_seg)
{
	SAME_SIZE(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, opmod_idx_opcode);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, qpn_ds);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, signature);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, dci_stream_channel_id);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, fm_ce_se);
	SAME_FIELD(rf_wqe_ctrl_seg, mlx5_wqe_ctrl_seg, imm);
}

Test(hw_layout, raddr_atomic_data_inline_segs)
{
	SAME_SIZE(rf_wqe_raddr_seg, mlx5_wqe_raddr_seg);
	SAME_FIELD(rf_wqe_raddr_seg, mlx5_wqe_raddr_seg, raddr);
	SAME_FIELD(rf_wqe_raddr_seg, mlx5_wqe_raddr_seg, rkey);
	SAME_FIELD(rf_wqe_raddr_seg, mlx5_wqe_raddr_seg, reserved);

	SAME_SIZE(rf_wqe_atomic_seg, mlx5_wqe_atomic_seg);
	SAME_FIELD(rf_wqe_atomic_seg, mlx5_wqe_atomic_seg, swap_add);
	SAME_FIELD(rf_wqe_atomic_seg, mlx5_wqe_atomic_seg, compare);

	SAME_SIZE(rf_wqe_data_seg, mlx5_wqe_data_seg);
	SAME_FIELD(rf_wqe_data_seg, mlx5_wqe_data_seg, byte_count);
	SAME_FIELD(rf_wqe_data_seg, mlx5_wqe_data_seg, lkey);
	SAME_FIELD(rf_wqe_data_seg, mlx5_wqe_data_seg, addr);

	SAME_SIZE(rf_wqe_inline_seg, mlx5_wqe_inl_data_seg);
	SAME_FIELD(rf_wqe_inline_seg, mlx5_wqe_inl_data_seg, byte_count);
}

Test(hw_layout, address_vector)
{
	SAME_SIZE(rf_wqe_av, mlx5_wqe_av);
	SAME_SIZE(rf_wqe_av, mlx5_wqe_datagram_seg);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, key);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, key.qkey.qkey);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, key.qkey.reserved);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, key.dc_key);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, dqp_dct);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, stat_rate_sl);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, fl_mlid);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, rlid);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, reserved0);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, rmac);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, tclass);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, hop_limit);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, grh_gid_fl);
	SAME_FIELD(rf_wqe_av, mlx5_wqe_av, rgid);
}

Test(hw_layout, umr_segs)
{
	SAME_SIZE(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, flags);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, rsvd0);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, klm_octowords);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, translation_offset);
	SAME_FIELD2(rf_wqe_umr_ctrl_seg, translation_offset, mlx5_wqe_umr_ctrl_seg, bsf_octowords);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, mkey_mask);
	SAME_FIELD(rf_wqe_umr_ctrl_seg, mlx5_wqe_umr_ctrl_seg, rsvd1);

	SAME_SIZE(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, free);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, reserved1);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, access_flags);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, sf);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, qpn_mkey);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, reserved2);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, flags_pd);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, start_addr);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, len);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, bsf_octword_size);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, reserved3);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, translations_octword_size);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, reserved4);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, log_page_size);
	SAME_FIELD(rf_wqe_mkey_context_seg, mlx5_wqe_mkey_context_seg, reserved);

	SAME_SIZE(rf_wqe_umr_klm_seg, mlx5_wqe_umr_klm_seg);
	SAME_FIELD(rf_wqe_umr_klm_seg, mlx5_wqe_umr_klm_seg, byte_count);
	SAME_FIELD(rf_wqe_umr_klm_seg, mlx5_wqe_umr_klm_seg, mkey);
	SAME_FIELD(rf_wqe_umr_klm_seg, mlx5_wqe_umr_klm_seg, address);

	SAME_SIZE(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg);
	SAME_FIELD(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg, byte_count);
	SAME_FIELD(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg, op);
	SAME_FIELD(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg, repeat_count);
	SAME_FIELD(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg, reserved);
	SAME_FIELD(rf_wqe_umr_repeat_block_seg, mlx5_wqe_umr_repeat_block_seg, num_ent);
	cr_expect_eq(offsetof(struct mlx5_wqe_umr_repeat_block_seg, entries),
		     sizeof(struct rf_wqe_umr_repeat_block_seg), "entries follow the block");

	SAME_SIZE(rf_wqe_umr_repeat_ent_seg, mlx5_wqe_umr_repeat_ent_seg);
	SAME_FIELD(rf_wqe_umr_repeat_ent_seg, mlx5_wqe_umr_repeat_ent_seg, stride);
	SAME_FIELD(rf_wqe_umr_repeat_ent_seg, mlx5_wqe_umr_repeat_ent_seg, byte_count);
	SAME_FIELD(rf_wqe_umr_repeat_ent_seg, mlx5_wqe_umr_repeat_ent_seg, memkey);
	SAME_FIELD(rf_wqe_umr_repeat_ent_seg, mlx5_wqe_umr_repeat_ent_seg, va);

	/*
	 * The BSF and the SET_PSV segment are private to libmlx5
	 * (providers/mlx5/wqe.h: struct mlx5_bsf, mlx5_wqe_set_psv_seg), not
	 * in mlx5dv.h: their offsets are hw/umr.h's static assertions, and
	 * their bytes test_e2e_umr.c's comparison with libmlx5's WQEs.
	 */
}

Test(hw_layout, srq_next_seg)
{
	SAME_SIZE(rf_wqe_srq_next_seg, mlx5_wqe_srq_next_seg);
	SAME_FIELD(rf_wqe_srq_next_seg, mlx5_wqe_srq_next_seg, rsvd0);
	SAME_FIELD(rf_wqe_srq_next_seg, mlx5_wqe_srq_next_seg, next_wqe_index);
	SAME_FIELD(rf_wqe_srq_next_seg, mlx5_wqe_srq_next_seg, signature);
	SAME_FIELD(rf_wqe_srq_next_seg, mlx5_wqe_srq_next_seg, rsvd1);
}

Test(hw_layout, cqe64)
{
	SAME_SIZE(rf_cqe64, mlx5_cqe64);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, wqe_id);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, ml_path);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, slid);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, flags_rqpn);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, hds_ip_ext);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, l4_hdr_type_etc);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, vlan_info);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, srqn_uidx);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, imm_inval_pkey);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, app);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, app_op);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, app_info);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, byte_cnt);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, timestamp);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, sop_drop_qpn);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, wqe_counter);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, signature);
	SAME_FIELD(rf_cqe64, mlx5_cqe64, op_own);
}

Test(hw_layout, err_cqe)
{
	SAME_SIZE(rf_err_cqe, mlx5_err_cqe);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, rsvd0);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, srqn);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, vendor_err_synd);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, syndrome);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, s_wqe_opcode_qpn);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, wqe_counter);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, signature);
	SAME_FIELD(rf_err_cqe, mlx5_err_cqe, op_own);
	/* mlx5dv lumps the two debug syndrome bytes into rsvd1[18] */
	cr_expect_eq(offsetof(struct rf_err_cqe, hw_err_synd),
		     offsetof(struct mlx5_err_cqe, rsvd1) + 16);
	cr_expect_eq(offsetof(struct rf_err_cqe, hw_synd_type),
		     offsetof(struct mlx5_err_cqe, rsvd1) + 17);
}

Test(hw_layout, send_opcodes)
{
	SAME_VALUE(RF_OPCODE_NOP, MLX5_OPCODE_NOP);
	SAME_VALUE(RF_OPCODE_SEND_INVAL, MLX5_OPCODE_SEND_INVAL);
	SAME_VALUE(RF_OPCODE_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE);
	SAME_VALUE(RF_OPCODE_RDMA_WRITE_IMM, MLX5_OPCODE_RDMA_WRITE_IMM);
	SAME_VALUE(RF_OPCODE_SEND, MLX5_OPCODE_SEND);
	SAME_VALUE(RF_OPCODE_SEND_IMM, MLX5_OPCODE_SEND_IMM);
	SAME_VALUE(RF_OPCODE_TSO, MLX5_OPCODE_TSO);
	SAME_VALUE(RF_OPCODE_RDMA_READ, MLX5_OPCODE_RDMA_READ);
	SAME_VALUE(RF_OPCODE_ATOMIC_CS, MLX5_OPCODE_ATOMIC_CS);
	SAME_VALUE(RF_OPCODE_ATOMIC_FA, MLX5_OPCODE_ATOMIC_FA);
	SAME_VALUE(RF_OPCODE_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_CS);
	SAME_VALUE(RF_OPCODE_ATOMIC_MASKED_FA, MLX5_OPCODE_ATOMIC_MASKED_FA);
	SAME_VALUE(RF_OPCODE_FMR, MLX5_OPCODE_FMR);
	SAME_VALUE(RF_OPCODE_LOCAL_INVAL, MLX5_OPCODE_LOCAL_INVAL);
	SAME_VALUE(RF_OPCODE_CONFIG_CMD, MLX5_OPCODE_CONFIG_CMD);
	SAME_VALUE(RF_OPCODE_SET_PSV, MLX5_OPCODE_SET_PSV);
	SAME_VALUE(RF_OPCODE_UMR, MLX5_OPCODE_UMR);
	SAME_VALUE(RF_OPCODE_TAG_MATCHING, MLX5_OPCODE_TAG_MATCHING);
	SAME_VALUE(RF_OPCODE_FLOW_TBL_ACCESS, MLX5_OPCODE_FLOW_TBL_ACCESS);
	SAME_VALUE(RF_OPCODE_MMO, MLX5_OPCODE_MMO);
}

Test(hw_layout, wqe_flags_and_geometry)
{
	SAME_VALUE(RF_WQE_CTRL_CQ_UPDATE, MLX5_WQE_CTRL_CQ_UPDATE);
	SAME_VALUE(RF_WQE_CTRL_SOLICITED, MLX5_WQE_CTRL_SOLICITED);
	SAME_VALUE(RF_WQE_CTRL_FENCE, MLX5_WQE_CTRL_FENCE);
	SAME_VALUE(RF_WQE_CTRL_INITIATOR_SMALL_FENCE, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
	SAME_VALUE(RF_SEND_WQE_BB, MLX5_SEND_WQE_BB);
	SAME_VALUE(RF_SEND_WQE_SHIFT, MLX5_SEND_WQE_SHIFT);
	SAME_VALUE(RF_INLINE_SEG, MLX5_INLINE_SEG);
	SAME_VALUE(RF_INVALID_LKEY, MLX5_INVALID_LKEY);
	SAME_VALUE(RF_EXTENDED_UD_AV, MLX5_EXTENDED_UD_AV);
	SAME_VALUE(RF_RCV_DBR, MLX5_RCV_DBR);
	SAME_VALUE(RF_SND_DBR, MLX5_SND_DBR);
	SAME_VALUE(RF_CQ_DOORBELL, MLX5_CQ_DOORBELL);
	SAME_VALUE(RF_CQ_DB_REQ_NOT, MLX5_CQ_DB_REQ_NOT);
	SAME_VALUE(RF_CQ_DB_REQ_NOT_SOL, MLX5_CQ_DB_REQ_NOT_SOL);
	SAME_VALUE(RF_SEND_WQE_BB, 1 << RF_SEND_WQE_SHIFT);
	SAME_VALUE(RF_WQE_DS_PER_BB * RF_WQE_DS_SIZE, RF_SEND_WQE_BB);
}

Test(hw_layout, umr_constants)
{
	SAME_VALUE(RF_UMR_CTRL_FLAG_INLINE, MLX5_WQE_UMR_CTRL_FLAG_INLINE);
	SAME_VALUE(RF_UMR_CTRL_FLAG_CHECK_FREE, MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE);
	SAME_VALUE(RF_UMR_CTRL_FLAG_TRANSLATION_OFFSET, MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET);
	SAME_VALUE(RF_UMR_CTRL_FLAG_CHECK_QPN, MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN);
	SAME_VALUE(RF_UMR_MKEY_MASK_LEN, MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN);
	SAME_VALUE(RF_UMR_MKEY_MASK_START_ADDR, MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR);
	SAME_VALUE(RF_UMR_MKEY_MASK_SIG_ERR, MLX5_WQE_UMR_CTRL_MKEY_MASK_SIG_ERR);
	SAME_VALUE(RF_UMR_MKEY_MASK_BSF_ENABLE, MLX5_WQE_UMR_CTRL_MKEY_MASK_BSF_ENABLE);
	SAME_VALUE(RF_UMR_MKEY_MASK_MKEY, MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY);
	SAME_VALUE(RF_UMR_MKEY_MASK_QPN, MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN);
	SAME_VALUE(RF_UMR_MKEY_MASK_ACCESS_LOCAL_WRITE, MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE);
	SAME_VALUE(RF_UMR_MKEY_MASK_ACCESS_REMOTE_READ, MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ);
	SAME_VALUE(RF_UMR_MKEY_MASK_ACCESS_REMOTE_WRITE, MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE);
	SAME_VALUE(RF_UMR_MKEY_MASK_ACCESS_ATOMIC, MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC);
	SAME_VALUE(RF_UMR_MKEY_MASK_FREE, MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE);
	SAME_VALUE(RF_MKEY_CONTEXT_FREE, MLX5_WQE_MKEY_CONTEXT_FREE);
	SAME_VALUE(RF_MKEY_ACCESS_ATOMIC, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC);
	SAME_VALUE(RF_MKEY_ACCESS_REMOTE_WRITE, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE);
	SAME_VALUE(RF_MKEY_ACCESS_REMOTE_READ, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ);
	SAME_VALUE(RF_MKEY_ACCESS_LOCAL_WRITE, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE);
	SAME_VALUE(RF_MKEY_ACCESS_LOCAL_READ, MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_READ);
	/* the masks libmlx5 uses for type-2 bind and local invalidate */
	SAME_VALUE(RF_UMR_MKEY_MASK_BIND | RF_UMR_MKEY_MASK_QPN, 0x203C6041);
	SAME_VALUE(RF_UMR_MKEY_MASK_INVALIDATE, 0x20006000);
	/* sq_umr.h's signature flags are mlx5dv.h's */
	SAME_VALUE(RF_SIG_T10DIF_REF_REMAP, MLX5DV_SIG_T10DIF_FLAG_REF_REMAP);
	SAME_VALUE(RF_SIG_T10DIF_APP_ESCAPE, MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE);
	SAME_VALUE(RF_SIG_T10DIF_APP_REF_ESCAPE, MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE);
	SAME_VALUE(RF_SIG_COPY_MASK, MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK);
	SAME_VALUE(RF_OPCODE_SET_PSV, MLX5_OPCODE_SET_PSV);
}

Test(hw_layout, cqe_constants)
{
	SAME_VALUE(RF_CQE_OWNER_MASK, MLX5_CQE_OWNER_MASK);
	SAME_VALUE(RF_CQE_REQ, MLX5_CQE_REQ);
	SAME_VALUE(RF_CQE_RESP_WR_IMM, MLX5_CQE_RESP_WR_IMM);
	SAME_VALUE(RF_CQE_RESP_SEND, MLX5_CQE_RESP_SEND);
	SAME_VALUE(RF_CQE_RESP_SEND_IMM, MLX5_CQE_RESP_SEND_IMM);
	SAME_VALUE(RF_CQE_RESP_SEND_INV, MLX5_CQE_RESP_SEND_INV);
	SAME_VALUE(RF_CQE_RESIZE_CQ, MLX5_CQE_RESIZE_CQ);
	SAME_VALUE(RF_CQE_NO_PACKET, MLX5_CQE_NO_PACKET);
	SAME_VALUE(RF_CQE_SIG_ERR, MLX5_CQE_SIG_ERR);
	SAME_VALUE(RF_CQE_REQ_ERR, MLX5_CQE_REQ_ERR);
	SAME_VALUE(RF_CQE_RESP_ERR, MLX5_CQE_RESP_ERR);
	SAME_VALUE(RF_CQE_INVALID, MLX5_CQE_INVALID);
	SAME_VALUE(RF_INLINE_SCATTER_32, MLX5_INLINE_SCATTER_32);
	SAME_VALUE(RF_INLINE_SCATTER_64, MLX5_INLINE_SCATTER_64);
	SAME_VALUE(RF_CQE_FORMAT_SCATTER_32 << 2, MLX5_INLINE_SCATTER_32);
	SAME_VALUE(RF_CQE_FORMAT_SCATTER_64 << 2, MLX5_INLINE_SCATTER_64);
	SAME_VALUE(RF_MINI_CQE_RES_FORMAT_HASH, MLX5DV_CQE_RES_FORMAT_HASH);
	SAME_VALUE(RF_MINI_CQE_RES_FORMAT_CSUM, MLX5DV_CQE_RES_FORMAT_CSUM);
	SAME_VALUE(RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX, MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX);
	SAME_VALUE(RF_CQE_VENDOR_SYNDROME_ODP_PFAULT, MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT);
}

Test(hw_layout, syndromes)
{
	SAME_VALUE(RF_CQE_SYNDROME_LOCAL_LENGTH_ERR, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_LOCAL_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_LOCAL_PROT_ERR, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_MW_BIND_ERR, MLX5_CQE_SYNDROME_MW_BIND_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_BAD_RESP_ERR, MLX5_CQE_SYNDROME_BAD_RESP_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_LOCAL_ACCESS_ERR, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_REMOTE_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_REMOTE_OP_ERR, MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
	SAME_VALUE(RF_CQE_SYNDROME_REMOTE_ABORTED_ERR, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR);
}

Test(hw_layout, wc_status_numbering)
{
	SAME_VALUE(RF_WC_SUCCESS, IBV_WC_SUCCESS);
	SAME_VALUE(RF_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
	SAME_VALUE(RF_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
	SAME_VALUE(RF_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_EEC_OP_ERR);
	SAME_VALUE(RF_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
	SAME_VALUE(RF_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
	SAME_VALUE(RF_WC_MW_BIND_ERR, IBV_WC_MW_BIND_ERR);
	SAME_VALUE(RF_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
	SAME_VALUE(RF_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
	SAME_VALUE(RF_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
	SAME_VALUE(RF_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
	SAME_VALUE(RF_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
	SAME_VALUE(RF_WC_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR);
	SAME_VALUE(RF_WC_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR);
	SAME_VALUE(RF_WC_REM_ABORT_ERR, IBV_WC_REM_ABORT_ERR);
	SAME_VALUE(RF_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
}

/*
 * Tag matching: the segment against mlx5dv.h's, the numbering of the
 * opcodes and statuses against libibverbs'. The TM opcodes, flags and
 * app_op values are libmlx5-private (mlx5.h, cq.c): test_e2e_tm.c checks
 * them against libmlx5's WQEs and decoding.
 */
Test(hw_layout, tm)
{
	SAME_SIZE(rf_wqe_tm_seg, mlx5_wqe_tm_seg);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, opcode);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, flags);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, index);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, sw_cnt);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, append_tag);
	SAME_FIELD(rf_wqe_tm_seg, mlx5_wqe_tm_seg, append_mask);
	SAME_FIELD2(rf_cqe_tm_op, success, mlx5_tm_cqe, success);
	SAME_FIELD2(rf_cqe_tm_op, hw_phase_cnt, mlx5_tm_cqe, hw_phase_cnt);
	SAME_VALUE(RF_OPCODE_TAG_MATCHING, MLX5_OPCODE_TAG_MATCHING);
	SAME_VALUE(RF_CQE_TM_OP_SUCCESS, MLX5_TMC_SUCCESS);
	SAME_VALUE(RF_WC_TM_ADD, IBV_WC_TM_ADD);
	SAME_VALUE(RF_WC_TM_DEL, IBV_WC_TM_DEL);
	SAME_VALUE(RF_WC_TM_SYNC, IBV_WC_TM_SYNC);
	SAME_VALUE(RF_WC_TM_RECV, IBV_WC_TM_RECV);
	SAME_VALUE(RF_WC_TM_NO_TAG, IBV_WC_TM_NO_TAG);
	SAME_VALUE(RF_WC_TM_ERR, IBV_WC_TM_ERR);
	SAME_VALUE(RF_WC_TM_RNDV_INCOMPLETE, IBV_WC_TM_RNDV_INCOMPLETE);
}
