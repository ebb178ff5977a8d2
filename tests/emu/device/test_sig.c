/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Signature mkeys (emu/device/sig.c): mlx5dv_create_mkey() keys with
 * BLOCK_SIGNATURE, configured by mlx5dv_wr_mkey_configure() with
 * mlx5dv_wr_set_mkey_sig_block(), then gathered from by a SEND: T10-DIF
 * inserted on the wire, CRC32C and T10-DIF checked and stripped in
 * memory, a mismatch reported by the signature error CQE as
 * mlx5dv_mkey_check() reads it; what is not modelled refused.  The
 * expected signatures are the standard check values (T10-DIF's CRC16 of
 * "123456789" is 0xd0db) and values computed once by another program.
 */
#include "dev_test.h"

static struct dt t;
static struct mlx5dv_mkey *sk;

/* the QPs (with signature pipelining or not) and sk */
static void setup_with(bool sig_pipelining)
{
	struct dt_qp_opts o = {
		.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 14,
		.umr = true, .sig_pipelining = sig_pipelining, .max_inline_data = 256,
	};
	struct mlx5dv_mkey_init_attr a = {
		.max_entries = 4,
		.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
				MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE,
	};

	dt_setup_opts(&t, &o);
	a.pd = t.pd;
	sk = mlx5dv_create_mkey(&a);
	cr_assert(sk, "mlx5dv_create_mkey(BLOCK_SIGNATURE): %s", strerror(errno));
}

static void setup(void)
{
	setup_with(false);
}

static void teardown(void)
{
	cr_expect_eq(mlx5dv_destroy_mkey(sk), 0);
	dt_teardown(&t);
}

TestSuite(sig, .init = setup, .fini = teardown);

static struct ibv_qp_ex *qpx(void)
{
	return ibv_qp_to_qp_ex(t.qp[0]);
}

/* 512 bytes of data: (i * 7) & 255; its CRC16 (T10-DIF), CRC32C and CRC32 */
#define DATA_CRC16	0x3f43
#define DATA_CRC32C	0x74e93f07u
#define DATA_CRC32	0x1f9ab551u

static void fill(uint8_t *p)
{
	for (int i = 0; i < 512; i++)
		p[i] = (uint8_t)(i * 7);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * sk over len bytes of buf[0] with a signature block (mem, wire: NULL for
 * none), check mask and access flags: the status of the configuring
 * WQEs' completion.
 */
static enum ibv_wc_status configure_acc(uint32_t len, struct mlx5dv_sig_block_domain *mem,
					struct mlx5dv_sig_block_domain *wire, uint8_t check,
					uint32_t access)
{
	struct ibv_sge sge = { (uintptr_t)t.buf[0], len, t.mr[0]->lkey };
	struct mlx5dv_mkey_conf_attr conf = { 0 };
	struct mlx5dv_sig_block_attr sa = { .mem = mem, .wire = wire, .check_mask = check };
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(qpx());

	ibv_wr_start(qpx());
	qpx()->wr_id = 5;
	qpx()->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(dv, sk, 3, &conf);
	mlx5dv_wr_set_mkey_access_flags(dv, access);
	mlx5dv_wr_set_mkey_layout_list(dv, 1, &sge);
	mlx5dv_wr_set_mkey_sig_block(dv, &sa);
	cr_assert_eq(ibv_wr_complete(qpx()), 0, "wr_complete: %s", strerror(errno));
	return dt_poll1(t.cq[0]).status;
}

static enum ibv_wc_status configure(uint32_t len, struct mlx5dv_sig_block_domain *mem,
				    struct mlx5dv_sig_block_domain *wire, uint8_t check)
{
	return configure_acc(len, mem, wire, check, IBV_ACCESS_LOCAL_WRITE);
}

/*
 * SEND len bytes at 0 of sk to buf[1] + 8192 (a plain MR): the sender's
 * status and, if wc1, the receiver's completion.
 */
static void send_from_key(uint32_t len, enum ibv_wc_status *s0, struct ibv_wc *wc1)
{
	struct ibv_sge s = { 0, len, sk->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

	dt_post_recv(t.qp[1], 9, t.buf[1] + 8192, 8192, t.mr[1]->lkey);
	dt_post(t.qp[0], &wr);
	*s0 = dt_poll1(t.cq[0]).status;
	if (wc1)
		*wc1 = dt_poll1(t.cq[1]);
}

static struct mlx5dv_sig_t10dif dif = {
	.bg_type = MLX5DV_SIG_T10DIF_CRC, .bg = 0, .app_tag = 0x1234, .ref_tag = 0x100,
	.flags = MLX5DV_SIG_T10DIF_FLAG_REF_REMAP,
};

static struct mlx5dv_sig_block_domain dif_dom = {
	.sig_type = MLX5DV_SIG_TYPE_T10DIF, .sig.dif = &dif, .block_size = MLX5DV_BLOCK_SIZE_512,
};

static struct mlx5dv_sig_crc crc32c = { .type = MLX5DV_SIG_CRC_TYPE_CRC32C, .seed = 0xffffffff };

static struct mlx5dv_sig_block_domain crc_dom = {
	.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc32c, .block_size = MLX5DV_BLOCK_SIZE_512,
};

/* no domain signed: nothing to report */
static void expect_no_err(void)
{
	struct mlx5dv_mkey_err e;

	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_NO_ERR);
}

/* T10-DIF inserted on the wire: each 512-byte block gets guard, app tag, ref tag + k */
Test(sig, t10dif_inserted_on_the_wire)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;
	const uint8_t *r = t.buf[1] + 8192;

	fill(t.buf[0]);
	memset(t.buf[0] + 512, 0, 503);	/* block 1: zeros, then "123456789" */
	memcpy(t.buf[0] + 1015, "123456789", 9);
	cr_assert_eq(configure(1024, NULL, &dif_dom, 0), IBV_WC_SUCCESS);
	send_from_key(2 * 520, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 1040);
	cr_expect_eq(memcmp(r, t.buf[0], 512), 0);
	cr_expect_eq(get32(r + 512), (uint32_t)DATA_CRC16 << 16 | 0x1234);
	cr_expect_eq(get32(r + 516), 0x100);
	cr_expect_eq(memcmp(r + 520, t.buf[0] + 512, 512), 0);
	cr_expect_eq(get32(r + 1032), 0xd0dbu << 16 | 0x1234);
	cr_expect_eq(get32(r + 1036), 0x101, "the ref tag of block 1: %#x", get32(r + 1036));
	/* only the data of a block the access does not reach the PI of */
	send_from_key(100, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 100);
	expect_no_err();
	/* past the wire's 1040 bytes: a protection error */
	send_from_key(1041, &s0, NULL);
	cr_expect_eq(s0, IBV_WC_LOC_PROT_ERR);
}

/* CRC32C in memory, none on the wire: checked and stripped */
Test(sig, crc32c_checked_and_stripped)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;

	fill(t.buf[0]);
	put32(t.buf[0] + 512, DATA_CRC32C);
	cr_assert_eq(configure(516, &crc_dom, NULL, MLX5DV_SIG_MASK_CRC32C), IBV_WC_SUCCESS);
	send_from_key(512, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 512);
	cr_expect_eq(memcmp(t.buf[1] + 8192, t.buf[0], 512), 0);
	expect_no_err();
}

/*
 * 512 bytes with a bad CRC32C, sk configured over them (CRC32C checked in
 * memory) and sent: both sides complete; the key's report in e.
 */
static void send_bad_crc32c(struct mlx5dv_mkey_err *e)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;

	fill(t.buf[0]);
	put32(t.buf[0] + 512, DATA_CRC32C ^ 1);
	cr_assert_eq(configure(516, &crc_dom, NULL, MLX5DV_SIG_MASK_CRC32C), IBV_WC_SUCCESS);
	send_from_key(512, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(mlx5dv_mkey_check(sk, e), 0);
}

/* a bad CRC32C: the SEND completes, the key reports the guard error once */
Test(sig, crc32c_mismatch_reported)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;
	struct mlx5dv_mkey_err e;

	send_bad_crc32c(&e);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.expected_value, DATA_CRC32C);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC32C ^ 1);
	cr_expect_eq(e.err.sig.offset, 0);
	expect_no_err();
	/* unchecked (mask 0): no error */
	cr_assert_eq(configure(516, &crc_dom, NULL, 0), IBV_WC_SUCCESS);
	send_from_key(512, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	expect_no_err();
}

/*
 * The key's signature error count (mkey context expected_sigerr_count):
 * after an error the key reports none until a UMR expects one more, as
 * libmlx5 writes on the configuration after each error CQE (and 1 on the
 * first, which arms a new key).
 */
Test(sig, error_reported_once_until_rearmed)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;
	struct mlx5dv_mkey_err e;

	send_bad_crc32c(&e);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	/* the same bad block again, the key not configured since: not reported */
	send_from_key(512, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	expect_no_err();
	/* configured again (libmlx5 writes the new count): reported again */
	send_bad_crc32c(&e);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC32C ^ 1);
}

/* T10-DIF in memory: the ref tag of block 1 wrong, the guard right */
Test(sig, t10dif_reftag_mismatch_reported)
{
	enum ibv_wc_status s0;
	struct ibv_wc wc;
	struct mlx5dv_mkey_err e;

	for (int k = 0; k < 2; k++) {
		fill(t.buf[0] + 520 * k);
		put32(t.buf[0] + 520 * k + 512, (uint32_t)DATA_CRC16 << 16 | 0x1234);
		put32(t.buf[0] + 520 * k + 516, k ? 0x777 : 0x100);
	}
	cr_assert_eq(configure(1040, &dif_dom, NULL, MLX5DV_SIG_MASK_T10DIF_GUARD |
			       MLX5DV_SIG_MASK_T10DIF_APPTAG | MLX5DV_SIG_MASK_T10DIF_REFTAG),
		     IBV_WC_SUCCESS);
	send_from_key(1024, &s0, &wc);
	cr_assert_eq(s0, IBV_WC_SUCCESS);
	cr_expect_eq(wc.byte_len, 1024);
	cr_expect_eq(memcmp(t.buf[1] + 8192 + 512, t.buf[0], 512), 0);
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG);
	cr_expect_eq(e.err.sig.expected_value, 0x101);
	cr_expect_eq(e.err.sig.actual_value, 0x777);
	cr_expect_eq(e.err.sig.offset, 520);
}

/* ---- scatters: data arriving into a signature key ----------------------- */

#define DIF_ALL	(MLX5DV_SIG_MASK_T10DIF_GUARD | MLX5DV_SIG_MASK_T10DIF_APPTAG | \
		 MLX5DV_SIG_MASK_T10DIF_REFTAG)

/* nblk blocks as dif_dom puts them on the wire: fill()'s data, guard, app tag, ref tag + k */
static void dif_image(uint8_t *p, int nblk)
{
	for (int k = 0; k < nblk; k++, p += 520) {
		fill(p);
		put32(p + 512, (uint32_t)DATA_CRC16 << 16 | 0x1234);
		put32(p + 516, 0x100 + (uint32_t)k);
	}
}

/* Memory of nblk blocks (520 apart on the wire at w) holds each block's data only. */
static bool data_of_image(const uint8_t *mem, const uint8_t *w, int nblk)
{
	for (int k = 0; k < nblk; k++)
		if (memcmp(mem + 512 * k, w + 520 * k, 512))
			return false;
	return true;
}

/* qp[0] READs len bytes from buf[1] (a plain MR) into sk at 0: the READ's status */
static enum ibv_wc_status read_into_key(uint32_t len)
{
	struct ibv_sge s = { 0, len, sk->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };

	wr.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	wr.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post(t.qp[0], &wr);
	return dt_poll1(t.cq[0]).status;
}

/* qp[1] moves len bytes between buf[1] and sk (as its rkey, at 0) by op: its status */
static enum ibv_wc_status peer_rdma(enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)t.buf[1], len, t.mr[1]->lkey };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &s, .num_sge = 1,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED };

	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = sk->rkey;
	dt_post(t.qp[1], &wr);
	return dt_poll1(t.cq[1]).status;
}

/*
 * The key's report once its owner polled cq[0], where the error CQE of an
 * access it did not post lands (libmlx5 takes it, no completion comes out).
 */
static struct mlx5dv_mkey_err owner_report(void)
{
	struct mlx5dv_mkey_err e;
	struct ibv_wc wc;

	cr_expect_eq(ibv_poll_cq(t.cq[0], 1, &wc), 0);
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	return e;
}

/* qp[1]'s SEND wr into qp[0]'s receive rwr: both complete */
static void send_to_receive(struct ibv_send_wr *wr, struct ibv_recv_wr *rwr)
{
	struct ibv_recv_wr *bad;

	cr_assert_eq(ibv_post_recv(t.qp[0], rwr, &bad), 0);
	dt_post(t.qp[1], wr);
	cr_assert_eq(dt_poll1(t.cq[1]).status, IBV_WC_SUCCESS);
	cr_assert_eq(dt_poll1(t.cq[0]).status, IBV_WC_SUCCESS);
}

/*
 * A storage target pulling protected data: a READ whose local SGE is a key
 * with T10-DIF on the wire and none in memory.  Each block's PI is checked
 * as it arrives and stripped; the data lands either way, the READ
 * completes, and a bad block is reported once with the wire's offset.
 */
Test(sig, read_into_key_checks_and_strips)
{
	struct mlx5dv_mkey_err e;

	dif_image(t.buf[1], 2);
	cr_assert_eq(configure(1024, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	cr_assert_eq(read_into_key(1040), IBV_WC_SUCCESS);
	cr_expect(data_of_image(t.buf[0], t.buf[1], 2));
	expect_no_err();

	/* block 1's guard bad */
	t.buf[1][520 + 512] ^= 0x80;
	memset(t.buf[0], 0, 1024);
	cr_assert_eq(read_into_key(1040), IBV_WC_SUCCESS);
	cr_expect(data_of_image(t.buf[0], t.buf[1], 2), "the data lands anyway");
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.expected_value, DATA_CRC16);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC16 ^ 0x8000);
	cr_expect_eq(e.err.sig.offset, 520);
}

/* the ref tag of block 1 wrong: BAD_REFTAG, the tag it should have had */
Test(sig, read_into_key_reftag_mismatch)
{
	struct mlx5dv_mkey_err e;

	dif_image(t.buf[1], 2);
	put32(t.buf[1] + 520 + 516, 0x777);
	cr_assert_eq(configure(1024, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	cr_assert_eq(read_into_key(1040), IBV_WC_SUCCESS);
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG);
	cr_expect_eq(e.err.sig.expected_value, 0x101);
	cr_expect_eq(e.err.sig.actual_value, 0x777);
	cr_expect_eq(e.err.sig.offset, 520);
	/* not checked (mask 0): the same bytes are no error */
	cr_assert_eq(configure(1024, NULL, &dif_dom, 0), IBV_WC_SUCCESS);
	cr_assert_eq(read_into_key(1040), IBV_WC_SUCCESS);
	expect_no_err();
}

/*
 * 64 blocks: 33,280 wire bytes, more than one packet (32 KiB), so block
 * 63 is split between two READ responses: its data in the first, its PI
 * in the second.  It is checked as a whole all the same.
 */
Test(sig, read_into_key_block_split_between_packets)
{
	struct mlx5dv_mkey_err e;

	dif_image(t.buf[1], 64);
	cr_assert_eq(configure(64 * 512, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	cr_assert_eq(read_into_key(64 * 520), IBV_WC_SUCCESS);
	cr_expect(data_of_image(t.buf[0], t.buf[1], 64));
	expect_no_err();
	t.buf[1][63 * 520 + 3] ^= 1;	/* data of block 63, in the first packet */
	cr_assert_eq(read_into_key(64 * 520), IBV_WC_SUCCESS);
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC16);
	cr_expect_eq(e.err.sig.offset, 63 * 520);
}

/*
 * A block's PI split between packets: a receive of [32,253 bytes of plain
 * buffer, the key's 520] puts the first packet's end 3 bytes into block
 * 0's PI, which is checked once its last byte arrives.
 */
Test(sig, receive_pi_split_between_packets)
{
	enum { PLAIN = 32 * 1024 - 515 };
	struct ibv_sge rs[2] = { { (uintptr_t)t.buf[0] + 1024, PLAIN, t.mr[0]->lkey },
				 { 0, 520, sk->lkey } };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = rs, .num_sge = 2 };
	struct ibv_sge s = { (uintptr_t)t.buf[1], PLAIN + 520, t.mr[1]->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct mlx5dv_mkey_err e;

	memset(t.buf[1], 0x5a, PLAIN);
	dif_image(t.buf[1] + PLAIN, 1);
	cr_assert_eq(configure(512, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	for (int k = 0; k < 2; k++) {
		/* the second time the ref tag's last byte, in the second packet, is bad */
		t.buf[1][PLAIN + 519] ^= (uint8_t)k;
		send_to_receive(&wr, &rwr);
		cr_expect_eq(memcmp(t.buf[0], t.buf[1] + PLAIN, 512), 0);
		cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
		cr_expect_eq(e.err_type, k ? MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG : MLX5DV_MKEY_NO_ERR);
	}
	cr_expect_eq(e.err.sig.expected_value, 0x100);
	cr_expect_eq(e.err.sig.actual_value, 0x101);
}

/* CRC32C in memory, none on the wire: generated into the memory's PI */
Test(sig, read_into_key_generates_the_memory_crc)
{
	fill(t.buf[1]);
	memset(t.buf[0], 0, 516);
	cr_assert_eq(configure(516, &crc_dom, NULL, MLX5DV_SIG_MASK_CRC32C), IBV_WC_SUCCESS);
	cr_assert_eq(read_into_key(512), IBV_WC_SUCCESS);
	cr_expect_eq(memcmp(t.buf[0], t.buf[1], 512), 0);
	cr_expect_eq(get32(t.buf[0] + 512), DATA_CRC32C, "memory CRC %#x", get32(t.buf[0] + 512));
	expect_no_err();
	/* a READ that does not fill the block: its data only, the PI left alone */
	put32(t.buf[0] + 512, 0);
	cr_assert_eq(read_into_key(100), IBV_WC_SUCCESS);
	cr_expect_eq(get32(t.buf[0] + 512), 0);
}

/*
 * A storage initiator exposing a key as rkey: the peer's RDMA WRITE is
 * scattered through it (T10-DIF on the wire checked and stripped), and the
 * error CQE goes to the key's owner, who learns of it by mlx5dv_mkey_check().
 */
Test(sig, write_into_rkey)
{
	struct mlx5dv_mkey_err e;

	dif_image(t.buf[1], 2);
	cr_assert_eq(configure_acc(1024, NULL, &dif_dom, DIF_ALL,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		     IBV_WC_SUCCESS);
	cr_assert_eq(peer_rdma(IBV_WR_RDMA_WRITE, 1040), IBV_WC_SUCCESS);
	cr_expect(data_of_image(t.buf[0], t.buf[1], 2));
	e = owner_report();
	cr_expect_eq(e.err_type, MLX5DV_MKEY_NO_ERR);
	t.buf[1][4] ^= 1;
	cr_assert_eq(peer_rdma(IBV_WR_RDMA_WRITE, 1040), IBV_WC_SUCCESS);
	e = owner_report();
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC16);
	cr_expect_eq(e.err.sig.offset, 0);
	/* a READ needs remote read access, which the key does not grant */
	cr_expect_eq(peer_rdma(IBV_WR_RDMA_READ, 1040), IBV_WC_REM_ACCESS_ERR);
}

/* past the key's 1040 wire bytes: the peer's remote access error */
Test(sig, write_into_rkey_past_its_wire_bytes)
{
	dif_image(t.buf[1], 2);
	cr_assert_eq(configure_acc(1024, NULL, &dif_dom, DIF_ALL,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
		     IBV_WC_SUCCESS);
	cr_expect_eq(peer_rdma(IBV_WR_RDMA_WRITE, 1041), IBV_WC_REM_ACCESS_ERR);
}

/* without remote write access the key refuses the WRITE, as before */
Test(sig, write_into_rkey_without_access_refused)
{
	dif_image(t.buf[1], 1);
	cr_assert_eq(configure(512, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	cr_expect_eq(peer_rdma(IBV_WR_RDMA_WRITE, 520), IBV_WC_REM_ACCESS_ERR);
}

/*
 * The peer READs from the key: a gather at the responder.  CRC32C checked
 * in memory and stripped; a bad one reported to the owner.
 */
Test(sig, read_from_rkey)
{
	struct mlx5dv_mkey_err e;

	fill(t.buf[0]);
	put32(t.buf[0] + 512, DATA_CRC32C);
	cr_assert_eq(configure_acc(516, &crc_dom, NULL, MLX5DV_SIG_MASK_CRC32C,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
		     IBV_WC_SUCCESS);
	cr_assert_eq(peer_rdma(IBV_WR_RDMA_READ, 512), IBV_WC_SUCCESS);
	cr_expect_eq(memcmp(t.buf[1], t.buf[0], 512), 0);
	e = owner_report();
	cr_expect_eq(e.err_type, MLX5DV_MKEY_NO_ERR);
	put32(t.buf[0] + 512, DATA_CRC32C ^ 4);
	cr_assert_eq(peer_rdma(IBV_WR_RDMA_READ, 512), IBV_WC_SUCCESS);
	e = owner_report();
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.expected_value, DATA_CRC32C);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC32C ^ 4);
	/* a WRITE needs remote write access, which the key does not grant */
	cr_expect_eq(peer_rdma(IBV_WR_RDMA_WRITE, 512), IBV_WC_REM_ACCESS_ERR);
}

/*
 * A receive into a signature key (pyverbs' test_mkey_sig_t10dif posts
 * one): the SEND's 520 wire bytes fill block 0, its T10-DIF checked and
 * stripped; a SEND of 512 bytes is data only.
 */
Test(sig, receive_into_key)
{
	struct ibv_sge s = { (uintptr_t)t.buf[1], 520, t.mr[1]->lkey }, rs = { 0, 520, sk->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 };
	struct mlx5dv_mkey_err e;

	dif_image(t.buf[1], 1);
	cr_assert_eq(configure(512, NULL, &dif_dom, DIF_ALL), IBV_WC_SUCCESS);
	for (int bad = 0; bad < 3; bad++) {
		t.buf[1][515] ^= (uint8_t)(bad == 1);	/* the app tag's low byte */
		s.length = bad < 2 ? 520 : 512;
		memset(t.buf[0], 0, 512);
		send_to_receive(&wr, &rwr);
		cr_expect_eq(memcmp(t.buf[0], t.buf[1], 512), 0);
		cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
		cr_expect_eq(e.err_type, bad == 1 ? MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG :
						    MLX5DV_MKEY_NO_ERR, "SEND %d", bad);
		if (bad == 1) {
			cr_expect_eq(e.err.sig.expected_value, 0x1234);
			cr_expect_eq(e.err.sig.actual_value, 0x1235);
		}
	}
}

/*
 * Domains of different block sizes (T10-DIF on 512-byte blocks in memory,
 * CRC32C on 4096-byte ones on the wire), which libmlx5 lets through: the
 * device does not convert between them and refuses the UMR.
 */
Test(sig, block_size_conversion_refused)
{
	struct mlx5dv_sig_block_domain wire = crc_dom;

	wire.block_size = MLX5DV_BLOCK_SIZE_4096;
	cr_expect_eq(configure(8192, &dif_dom, &wire, 0), IBV_WC_MW_BIND_ERR);
}

/*
 * Signature pipelining (MLX5DV_QP_CREATE_SIG_PIPELINING: libmlx5 sets the
 * QP context's drain_sigerr by a DEVX INIT2INIT_QP): a failed check stops
 * the send queue behind the WQE that failed and drains it; the QP is then
 * in SQD (IBV_EVENT_SQ_DRAINED), mlx5dv_qp_cancel_posted_send_wrs() turns
 * the WQEs that waited into NOPs from the SQ's hardware counter (QUERY_QP)
 * on, and SQD->RTS runs them.  The flow of pyverbs' test_mlx5_mkey
 * pipelining tests: an RDMA WRITE through the key, a fenced SEND.
 */
static void pipe_setup(void)
{
	setup_with(true);
}

TestSuite(sig_pipe, .init = pipe_setup, .fini = teardown);

static struct mlx5dv_sig_crc crc32 = { .type = MLX5DV_SIG_CRC_TYPE_CRC32, .seed = 0xffffffff };

static struct mlx5dv_sig_block_domain crc32_dom = {
	.sig_type = MLX5DV_SIG_TYPE_CRC, .sig.crc = &crc32, .block_size = MLX5DV_BLOCK_SIZE_512,
};

/* RDMA WRITE of the key's 512 bytes to buf[1] (unsignaled), then a fenced SEND (wr_id 7) */
static void write_then_fenced_send(void)
{
	struct ibv_sge ws = { 0, 512, sk->lkey };
	struct ibv_sge ss = { (uintptr_t)t.buf[0] + 4096, 16, t.mr[0]->lkey };
	struct ibv_send_wr w = { .wr_id = 7, .sg_list = &ws, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_send_wr s = { .wr_id = 7, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };

	w.wr.rdma.remote_addr = (uintptr_t)t.buf[1];
	w.wr.rdma.rkey = t.mr[1]->rkey;
	dt_post_recv(t.qp[1], 9, t.buf[1] + 8192, 64, t.mr[1]->lkey);
	dt_post(t.qp[0], &w);
	dt_post(t.qp[0], &s);
}

/* the good data: the SEND follows the WRITE, nothing drains */
Test(sig_pipe, good_check_goes_on)
{
	struct ibv_wc wc;

	fill(t.buf[0]);
	put32(t.buf[0] + 512, DATA_CRC32);
	cr_assert_eq(configure(516, &crc32_dom, NULL, MLX5DV_SIG_MASK_CRC32), IBV_WC_SUCCESS);
	write_then_fenced_send();
	wc = dt_poll1(t.cq[0]);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 7);
	cr_expect_eq(wc.opcode, IBV_WC_SEND);
	cr_assert_eq(dt_poll1(t.cq[1]).status, IBV_WC_SUCCESS);
	cr_expect_eq(memcmp(t.buf[1], t.buf[0], 512), 0);
	cr_expect_eq(et_qp_state(t.qp[0]), IBV_QPS_RTS);
	expect_no_err();
}

/* a bad CRC32: the SQ drains to SQD, the SEND canceled, SQD->RTS runs the rest */
Test(sig_pipe, bad_check_drains_to_sqd)
{
	struct mlx5dv_qp_ex *dv = mlx5dv_qp_ex_from_ibv_qp_ex(qpx());
	struct ibv_send_wr *bad, s;
	struct ibv_sge ss = { (uintptr_t)t.buf[0] + 4096, 16, t.mr[0]->lkey };
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_RTS, .cur_qp_state = IBV_QPS_SQD };
	struct mlx5dv_mkey_err e;
	struct ibv_wc wc[2];

	fill(t.buf[0]);
	put32(t.buf[0] + 512, DATA_CRC32 ^ 1);
	cr_assert_eq(configure(516, &crc32_dom, NULL, MLX5DV_SIG_MASK_CRC32), IBV_WC_SUCCESS);
	write_then_fenced_send();
	dt_expect_async(t.ctx, IBV_EVENT_SQ_DRAINED, 5000);
	cr_expect_eq(et_qp_state(t.qp[0]), IBV_QPS_SQD);
	/* the signature error CQE only, which libmlx5 takes for the key */
	cr_expect_eq(ibv_poll_cq(t.cq[0], 2, wc), 0);
	cr_expect_eq(ibv_poll_cq(t.cq[1], 2, wc), 0);
	cr_assert_eq(mlx5dv_mkey_check(sk, &e), 0);
	cr_expect_eq(e.err_type, MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD);
	cr_expect_eq(e.err.sig.actual_value, DATA_CRC32 ^ 1);
	/* the WRITE went out, its data unchecked on the wire */
	cr_expect_eq(memcmp(t.buf[1], t.buf[0], 512), 0);
	/* the kernel still believes RTS: without the current state asserted, refused */
	cr_expect_eq(ibv_modify_qp(t.qp[0], &m, IBV_QP_STATE), EINVAL);
	/* from the SEND on (the WRITE before it is done): one canceled */
	cr_assert_eq(mlx5dv_qp_cancel_posted_send_wrs(dv, 7), 1);
	s = (struct ibv_send_wr){ .wr_id = 8, .sg_list = &ss, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	cr_assert_eq(ibv_post_send(t.qp[0], &s, &bad), 0);
	cr_expect_eq(ibv_poll_cq(t.cq[0], 2, wc), 0, "nothing runs in SQD");
	cr_assert_eq(ibv_modify_qp(t.qp[0], &m, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
	cr_expect_eq(et_qp_state(t.qp[0]), IBV_QPS_RTS);
	/* the canceled SEND completes as a NOP, with its opcode; the new one is sent */
	cr_assert_eq(dt_poll(t.cq[0], wc, 2, 5000), 2);
	cr_expect_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_expect_eq(wc[0].wr_id, 7);
	cr_expect_eq(wc[0].opcode, IBV_WC_SEND);
	cr_expect_eq(wc[1].status, IBV_WC_SUCCESS);
	cr_expect_eq(wc[1].wr_id, 8);
	cr_assert_eq(dt_poll(t.cq[1], wc, 1, 5000), 1);
	cr_expect_eq(wc[0].status, IBV_WC_SUCCESS);
	cr_expect_eq(wc[0].opcode, IBV_WC_RECV);
	cr_expect_eq(dt_poll(t.cq[1], wc, 1, 50), 0, "one SEND only");
}

/* mlx5 has no RTS->SQD: SQD is entered by the drain alone */
Test(sig_pipe, rts_to_sqd_refused)
{
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_SQD };

	cr_expect_eq(ibv_modify_qp(t.qp[0], &m, IBV_QP_STATE), EINVAL);
	/* nor may SQD be asserted while the QP is in RTS */
	m.qp_state = IBV_QPS_RTS;
	m.cur_qp_state = IBV_QPS_SQD;
	cr_expect_eq(ibv_modify_qp(t.qp[0], &m, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
	cr_expect_eq(et_qp_state(t.qp[0]), IBV_QPS_RTS);
}
