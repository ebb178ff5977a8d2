/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hw/cqe.h: the ownership rule across laps, the one-compare slow-path
 * test, 64- and 128-byte entries, and the syndrome to ibv_wc_status map.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include <rdmafast/rdmafast.h>

Test(hw_cqe, ownership_follows_lap_parity)
{
	const unsigned log_n = 3;	/* 8 entries */
	uint32_t ci;

	for (ci = 0; ci < 64; ci++) {
		uint8_t lap = (ci >> log_n) & 1;
		uint8_t written = (uint8_t)(RF_CQE_REQ << 4 | lap);
		uint8_t stale = (uint8_t)(RF_CQE_REQ << 4 | (lap ^ 1));

		cr_expect(rf_cqe_sw_owned(written, ci, log_n), "ci %u", ci);
		cr_expect_not(rf_cqe_sw_owned(stale, ci, log_n), "ci %u", ci);
	}
	/* rdmafast's initial fill is hardware owned on lap 0 ... */
	cr_expect_not(rf_cqe_sw_owned(RF_CQE_INIT_OP_OWN, 0, log_n));
	/* ... libmlx5's is not, which is why the strict form checks INVALID */
	cr_expect(rf_cqe_sw_owned(0xf0, 0, log_n));
	cr_expect_not(rf_cqe_sw_owned_strict(0xf0, 0, log_n));
	cr_expect(rf_cqe_sw_owned_strict(0x20, 0, log_n));
	/* the owner of a 2^24-entry CQ flips at bit 24 of ci */
	cr_expect(rf_cqe_sw_owned(0x01, 1U << 24, 24));
}

Test(hw_cqe, slow_path_test_is_exact)
{
	unsigned v;

	for (v = 0; v < 256; v++) {
		uint8_t op = (uint8_t)(v >> 4), fmt = (uint8_t)((v >> 2) & 3);
		int want = op >= 8 || fmt == RF_CQE_FORMAT_COMPRESSED;

		cr_expect_eq(!!rf_cqe_is_err_or_zipped((uint8_t)v), want, "op_own %#x", v);
		cr_expect_eq(!!rf_cqe_is_err((uint8_t)v),
			     op == RF_CQE_REQ_ERR || op == RF_CQE_RESP_ERR, "op_own %#x", v);
		cr_expect_eq(rf_cqe_opcode((uint8_t)v), op);
		cr_expect_eq(rf_cqe_format((uint8_t)v), fmt);
	}
}

Test(hw_cqe, cqe64_is_last_64_bytes_of_the_entry)
{
	uint8_t ring[4 * 128];
	struct rf_cqe64 *c;

	memset(ring, 0, sizeof(ring));
	c = rf_cqe64_of(ring + 2 * 64, 64);
	cr_expect_eq((uint8_t *)c, ring + 128);
	c = rf_cqe64_of(ring + 2 * 128, 128);
	cr_expect_eq((uint8_t *)c, ring + 2 * 128 + 64);
	c->op_own = 0xa5;
	cr_expect_eq(ring[3 * 128 - 1], 0xa5, "op_own is the entry's last byte");
}

Test(hw_cqe, syndrome_maps_to_libibverbs_status)
{
	static const struct { uint8_t synd; int status; } map[] = {
		{ RF_CQE_SYNDROME_LOCAL_LENGTH_ERR, IBV_WC_LOC_LEN_ERR },
		{ RF_CQE_SYNDROME_LOCAL_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR },
		{ RF_CQE_SYNDROME_LOCAL_PROT_ERR, IBV_WC_LOC_PROT_ERR },
		{ RF_CQE_SYNDROME_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR },
		{ RF_CQE_SYNDROME_MW_BIND_ERR, IBV_WC_MW_BIND_ERR },
		{ RF_CQE_SYNDROME_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR },
		{ RF_CQE_SYNDROME_LOCAL_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR },
		{ RF_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, IBV_WC_REM_INV_REQ_ERR },
		{ RF_CQE_SYNDROME_REMOTE_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR },
		{ RF_CQE_SYNDROME_REMOTE_OP_ERR, IBV_WC_REM_OP_ERR },
		{ RF_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR },
		{ RF_CQE_SYNDROME_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR },
		{ RF_CQE_SYNDROME_REMOTE_ABORTED_ERR, IBV_WC_REM_ABORT_ERR },
	};
	unsigned i, s;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		cr_expect_eq((int)rf_cqe_syndrome_to_wc_status(map[i].synd),
			     map[i].status, "syndrome %#x", map[i].synd);
	for (s = 0; s < 256; s++) {
		int known = 0;

		for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			known |= map[i].synd == s;
		if (!known)
			cr_expect_eq((int)rf_cqe_syndrome_to_wc_status((uint8_t)s),
				     IBV_WC_GENERAL_ERR, "syndrome %#x", s);
	}
}

Test(hw_cqe, mini_cqe_fields)
{
	struct rf_mini_cqe8 m;
	uint8_t *b = (uint8_t *)&m;

	memset(&m, 0, sizeof(m));
	m.u.s_wqe_info.wqe_counter = rf_htobe16(0x1234);
	m.u.s_wqe_info.s_wqe_opcode = RF_OPCODE_RDMA_WRITE;
	m.byte_cnt = rf_htobe32(0x55);
	cr_expect_eq(b[0], 0x12);
	cr_expect_eq(b[1], 0x34);
	cr_expect_eq(b[2], RF_OPCODE_RDMA_WRITE);
	cr_expect_eq(b[7], 0x55);
	cr_expect_eq(RF_MINI_CQE_PER_SLOT * sizeof(m), 64u);
}
