/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * umr_dif - a storage-style write protected by T10-DIF end to end, the
 * signatures computed and checked by the HCA as data passes:
 *
 *   1. the client (the host) holds four 512-byte blocks in three pieces
 *      scattered over its buffer, out of order; one indirect signature
 *      key (mlx5dv_create_mkey()) laid over them by a UMR on its own
 *      send queue (rf_sq_post_mr_list_sig()) has T10-DIF on the wire
 *      and none in memory: one RDMA WRITE through it sends the blocks
 *      with 8 bytes of protection each (guard: the CRC16 of the block,
 *      application tag, reference tag: the LBA) generated on the way;
 *   2. the server (the target) finds each block's field as T10-DIF says;
 *      it then serves the blocks back through a key of its own with
 *      T10-DIF in memory and none on the wire: checked and stripped on
 *      the way out. The client finds its data again;
 *   3. the server flips one bit of block 2 (bad media) and serves the
 *      blocks again: the data still goes out, but the check fails, and
 *      rf_cq_poll() returns the signature error CQE as an RF_WC_SIG_ERR
 *      record before the write's completion; rf_cq_sig_err() says which
 *      field of which block (its offset) and what the HCA computed.
 *
 * Each key has one PSV (the running signature of its domain), created
 * with DEVX (PRM CREATE_PSV) on the key's PD.
 *
 *   server:  umr_dif [-d dev] [-p port] [-g gid_idx]
 *   client:  umr_dif [options] 127.0.0.1
 *
 * Exits 0 only when every protection field was right, the data came back
 * unchanged, and the corruption was reported for block 2 alone.
 */
#include "cli.h"

#include <infiniband/mlx5dv.h>

#include <rdmafast/cq_sig.h>

enum {
	BLOCKS = 4, BS = 512, PI = 8, WAIT_MS = 10000,
	BAD_BLOCK = 2,
	READBACK = 16384,		/* where the client takes the blocks back */
	LBA = 1000,			/* the first block's reference tag */
	APP_TAG = 0x5344,
};

/* The client's pieces: (offset in its buffer, length), in the key's order. */
static const uint32_t piece[3][2] = { { 0, 2 * BS }, { 8192, BS }, { 4096, BS } };

/* Both ends' T10-DIF: CRC16 guard from 0, the tag, the LBA growing per block. */
static const struct rf_sig_domain dif = {
	RF_SIG_T10DIF_CRC, RF_SIG_BLOCK_512, RF_SIG_T10DIF_REF_REMAP, 0, APP_TAG, LBA, 0,
};

/* T10-DIF's guard: CRC16, polynomial 0x8bb7, from 0, not reflected. */
static uint16_t crc16_t10dif(const uint8_t *p, size_t n)
{
	uint16_t crc = 0;

	while (n--) {
		crc ^= (uint16_t)(*p++ << 8);
		for (int i = 0; i < 8; i++)
			crc = (uint16_t)(crc & 0x8000 ? crc << 1 ^ 0x8bb7 : crc << 1);
	}
	return crc;
}

static uint32_t get_be(const uint8_t *p, int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* A signature key and the PSV of its one domain. */
struct sig_key {
	struct mlx5dv_mkey *mkey;
	struct mlx5dv_devx_obj *psv;
	uint32_t psv_index;
	uint32_t errors;	/* signature errors so far: the next UMR's count */
};

static int key_open(struct sig_key *k, struct rf_ep *e)
{
	struct mlx5dv_mkey_init_attr ia;
	struct mlx5dv_pd dpd;
	struct mlx5dv_obj o;
	uint32_t in[4] = { 0 }, out[8] = { 0 };

	memset(k, 0, sizeof(*k));
	memset(&ia, 0, sizeof(ia));
	ia.pd = e->pd;
	ia.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			  MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	ia.max_entries = 4;
	k->mkey = mlx5dv_create_mkey(&ia);
	if (!k->mkey) {
		fprintf(stderr, "mlx5dv_create_mkey(BLOCK_SIGNATURE): %s\n", strerror(errno));
		return -1;
	}
	memset(&o, 0, sizeof(o));
	o.pd.in = e->pd;
	o.pd.out = &dpd;
	if (mlx5dv_init_obj(&o, MLX5DV_OBJ_PD)) {
		fprintf(stderr, "mlx5dv_init_obj(PD): %s\n", strerror(errno));
		return -1;
	}
	/* CREATE_PSV (opcode 0x600) of one PSV (num_psv, bits 0x40) on the PD (0x48) */
	in[0] = rf_htobe32(0x600u << 16);
	in[2] = rf_htobe32(1u << 28 | (dpd.pdn & 0xffffff));
	k->psv = mlx5dv_devx_obj_create(e->ctx, in, sizeof(in), out, sizeof(out));
	if (!k->psv) {
		fprintf(stderr, "CREATE_PSV: %s\n", strerror(errno));
		return -1;
	}
	k->psv_index = rf_be32toh(out[4]) & 0xffffff;	/* psv0_index, bits 0x88 */
	return 0;
}

static void key_close(struct sig_key *k)
{
	if (k->mkey)
		mlx5dv_destroy_mkey(k->mkey);
	if (k->psv)
		mlx5dv_devx_obj_destroy(k->psv);
}

/* The next completion: opcode op, status want. 0 or -1. */
static int expect(struct rf_ep *e, struct rf_wc *wc, uint8_t op, uint8_t want, const char *what)
{
	int ret = rf_ep_wait(e, wc, WAIT_MS);

	if (ret) {
		fprintf(stderr, "%s: %s\n", what, strerror(-ret));
		return -1;
	}
	if (wc->opcode != op || wc->status != want) {
		fprintf(stderr, "%s: opcode %#x status %u, expected opcode %#x status %u\n",
			what, wc->opcode, wc->status, op, want);
		return -1;
	}
	return 0;
}

/*
 * Lay k over the n regions of sge with the signature of mem and wire
 * (one of them NULL): the UMR, its PSV and its fence, one completion.
 */
static int key_lay(struct rf_ep *e, struct sig_key *k, const struct rf_sge *sge, uint32_t n,
		   const struct rf_sig_domain *mem, const struct rf_sig_domain *wire)
{
	struct rf_sig_block sig;
	struct rf_wc wc;

	if (rf_sig_block_init(&sig, mem, mem ? k->psv_index : RF_SIG_NO_PSV, wire,
			      wire ? k->psv_index : RF_SIG_NO_PSV,
			      MLX5DV_SIG_MASK_T10DIF_GUARD | MLX5DV_SIG_MASK_T10DIF_APPTAG |
			      MLX5DV_SIG_MASK_T10DIF_REFTAG, 0, 0) ||
	    rf_sq_post_mr_list_sig(&e->qp.sq, k->mkey->lkey,
				   RF_MKEY_ACCESS_LOCAL_WRITE | RF_UMR_SIG_ERR_CNT(1 + k->errors),
				   sge, n, &sig, RF_SEND_SIGNALED | RF_SEND_RING, 1))
		return -1;
	return expect(e, &wc, RF_WC_NOP, RF_WC_SUCCESS, "laying the signature key");
}

static uint8_t data_byte(uint32_t block, uint32_t i)
{
	return (uint8_t)(block * 37 + i * 7 + (i >> 8));
}

/* The client: the blocks out through its key, then back from the server. */
static int client(struct rf_ep *e, long *errors)
{
	struct rf_sge sge[3];
	struct sig_key k;
	struct rf_wc wc;
	uint32_t b = 0;
	int ret = -1;

	for (int p = 0; p < 3; p++) {
		sge[p].addr = (uint64_t)(uintptr_t)(e->buf + piece[p][0]);
		sge[p].length = piece[p][1];
		sge[p].lkey = e->mr->lkey;
		for (uint32_t j = 0; j < piece[p][1]; j++)
			e->buf[piece[p][0] + j] = data_byte(b + j / BS, j % BS);
		b += piece[p][1] / BS;
	}
	if (key_open(&k, e) || key_lay(e, &k, sge, 3, NULL, &dif))
		goto out;
	/* the wire carries every block with its protection: 520 bytes each */
	if (rf_sq_post_write(&e->qp.sq, k.mkey->lkey, 0, BLOCKS * (BS + PI), e->peer.rkey,
			     e->peer.addr, RF_SEND_SIGNALED | RF_SEND_RING, 2) ||
	    expect(e, &wc, RF_WC_RDMA_WRITE, RF_WC_SUCCESS, "writing through the key"))
		goto out;
	printf("  wrote %d blocks from 3 scattered pieces through key %#x, T10-DIF added on "
	       "the way\n", BLOCKS, k.mkey->lkey);
	memset(e->buf + READBACK, 0, BLOCKS * BS);
	if (rf_tcp_sync(e->sock, 'W', WAIT_MS) || rf_tcp_sync(e->sock, 'R', WAIT_MS))
		goto out;
	for (b = 0; b < BLOCKS; b++)
		for (uint32_t j = 0; j < BS; j++)
			*errors += e->buf[READBACK + b * BS + j] != data_byte(b, j);
	printf("  read the blocks back checked and stripped: %s\n",
	       *errors ? "DIFFERENT" : "the same data");
	/* compared: the server may serve into READBACK again */
	ret = rf_tcp_sync(e->sock, 'V', WAIT_MS) || rf_tcp_sync(e->sock, 'C', WAIT_MS) ? -1 : 0;
out:
	key_close(&k);
	return ret;
}

/* The server's blocks out through its checking key into the client's READBACK. */
static int serve(struct rf_ep *e, struct sig_key *k, struct rf_wc *wc, int *got)
{
	struct rf_sge sge = { (uint64_t)(uintptr_t)e->buf, BLOCKS * (BS + PI), e->mr->lkey };

	*got = 0;
	if (key_lay(e, k, &sge, 1, &dif, NULL) ||
	    rf_sq_post_write(&e->qp.sq, k->mkey->lkey, 0, BLOCKS * BS, e->peer.rkey,
			     e->peer.addr + READBACK, RF_SEND_SIGNALED | RF_SEND_RING, 3))
		return -1;
	/* a signature error record comes first, the write's completion after it */
	do {
		if (rf_ep_wait(e, &wc[*got], WAIT_MS))
			return -1;
	} while (wc[(*got)++].opcode == RF_WC_SIG_ERR && *got < 2);
	return 0;
}

static int server(struct rf_ep *e, long *errors)
{
	struct sig_key k;
	struct rf_sig_err se;
	struct rf_wc wc[2];
	int got, ret = -1;

	if (key_open(&k, e) || rf_tcp_sync(e->sock, 'W', WAIT_MS))
		goto out;
	/* what arrived: each block followed by guard, application tag, reference tag */
	for (uint32_t b = 0; b < BLOCKS; b++) {
		const uint8_t *blk = e->buf + b * (BS + PI);

		*errors += get_be(blk + BS, 2) != crc16_t10dif(blk, BS);
		*errors += get_be(blk + BS + 2, 2) != APP_TAG;
		*errors += get_be(blk + BS + 4, 4) != LBA + b;
	}
	printf("  %d blocks arrived with their T10-DIF: %s\n", BLOCKS,
	       *errors ? "WRONG" : "guard, application and reference tags right");
	if (serve(e, &k, wc, &got))
		goto out;
	if (got != 1 || wc[0].opcode != RF_WC_RDMA_WRITE || wc[0].status != RF_WC_SUCCESS) {
		fprintf(stderr, "the clean blocks: %d records, the first opcode %#x status %u\n",
			got, wc[0].opcode, wc[0].status);
		goto out;
	}
	printf("  served them back through key %#x, checked: no signature error\n",
	       k.mkey->lkey);
	if (rf_tcp_sync(e->sock, 'R', WAIT_MS) || rf_tcp_sync(e->sock, 'V', WAIT_MS))
		goto out;

	/* bad media: one bit of block 2's data */
	e->buf[BAD_BLOCK * (BS + PI) + 100] ^= 0x10;
	if (serve(e, &k, wc, &got))
		goto out;
	if (got != 2 || wc[0].opcode != RF_WC_SIG_ERR || wc[0].status != RF_WC_GENERAL_ERR ||
	    wc[1].opcode != RF_WC_RDMA_WRITE || wc[1].status != RF_WC_SUCCESS) {
		fprintf(stderr, "the corrupted block: %d records, opcodes %#x %#x\n", got,
			wc[0].opcode, got > 1 ? wc[1].opcode : 0);
		goto out;
	}
	k.errors++;
	if (rf_cq_sig_err(&e->cq, &dif, NULL, &se)) {
		fprintf(stderr, "rf_cq_sig_err: undecodable\n");
		goto out;
	}
	{
		const uint8_t *blk = e->buf + BAD_BLOCK * (BS + PI);
		uint64_t block = se.offset / (BS + PI);

		printf("  after a bit flip: signature error on key %#x, %s in memory, block %llu "
		       "(offset %llu): guard computed %#llx, stored %#llx\n", se.mkey,
		       se.type == RF_SIG_ERR_GUARD ? "guard" : "a tag",
		       (unsigned long long)block, (unsigned long long)se.offset,
		       (unsigned long long)se.expected, (unsigned long long)se.actual);
		*errors += se.type != RF_SIG_ERR_GUARD || se.domain != RF_SIG_ERR_DOMAIN_MEMORY ||
			   se.mkey != k.mkey->lkey || block != BAD_BLOCK ||
			   se.offset % (BS + PI) != 0 || se.expected != crc16_t10dif(blk, BS) ||
			   se.actual != get_be(blk + BS, 2);
	}
	/* reported once */
	if (rf_cq_sig_err(&e->cq, &dif, NULL, &se) || se.type != RF_SIG_ERR_NONE)
		(*errors)++;
	ret = rf_tcp_sync(e->sock, 'C', WAIT_MS);
out:
	key_close(&k);
	return ret;
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 1, 0, 0, 0, 0, 0, NULL };
	struct rf_ep e;
	long errors = 0;
	int ret;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	/* each side writes into the other's buffer */
	if (ex_start(&e, &o, 65536, 16, 0, RF_ACCESS_REMOTE_WRITE, 0))
		return 1;
	ret = o.host ? client(&e, &errors) : server(&e, &errors);
	rf_ep_close(&e);
	printf("%s: %s\n", o.host ? "client" : "server",
	       !ret && !errors ? "all checks passed" : "FAILED");
	return !ret && !errors ? 0 : 1;
}
