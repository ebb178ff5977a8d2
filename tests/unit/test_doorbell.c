/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * doorbell.h on a fake UAR page in host memory: doorbell record values
 * (16-bit wrap), the 8-byte doorbell, BlueFlame copies of whole basic
 * blocks, alternating register halves, and WQEs that end at the queue end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

#include "rftest.h"

enum { BF_HALF = 256, QUEUE_BBS = 8 };

struct fake_uar {
	uint8_t *page;		/* a 4 KiB UAR page, filled with a pattern */
	uint8_t pristine[RF_UAR_PAGE_SIZE];
	struct rf_bf bf;	/* bfreg 0 of the page's BlueFlame area */
	__be32 dbrec[2];
};

static void fake_uar_init(struct fake_uar *u, uint32_t bf_size)
{
	struct rft_rng rng;

	u->page = aligned_alloc(RF_UAR_PAGE_SIZE, RF_UAR_PAGE_SIZE);
	cr_assert_not_null(u->page);
	rft_rng_seed(&rng, 42);
	rft_fill(&rng, u->page, RF_UAR_PAGE_SIZE);
	memcpy(u->pristine, u->page, RF_UAR_PAGE_SIZE);
	cr_assert_eq(rf_bf_init(&u->bf, u->page + RF_BF_REG_OFFSET, bf_size), 0);
	u->dbrec[0] = RF_BE32(0xdeadbeef);
	u->dbrec[1] = 0;
}

/* Bytes of the page other than [off, off + len) are as they were. */
static void expect_untouched_except(const struct fake_uar *u, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < RF_UAR_PAGE_SIZE; i++) {
		if (i >= off && i < off + len)
			continue;
		cr_assert_eq(u->page[i], u->pristine[i],
			     "UAR byte %#zx written outside [%#zx, %#zx)", i, off, off + len);
	}
}

/* A queue of QUEUE_BBS basic blocks of distinct random bytes. */
static uint8_t *make_queue(void)
{
	uint8_t *q = aligned_alloc(64, QUEUE_BBS * 64);
	struct rft_rng rng;

	cr_assert_not_null(q);
	rft_rng_seed(&rng, 1234);
	rft_fill(&rng, q, QUEUE_BBS * 64);
	return q;
}

Test(doorbell, dbrec_keeps_16_bits_big_endian)
{
	__be32 rec = RF_BE32(0xffffffff);
	static const uint32_t pis[] = { 0, 1, 0xfffe, 0xffff, 0x10000, 0x12345, 0xffffffff };
	unsigned i;

	for (i = 0; i < sizeof(pis) / sizeof(pis[0]); i++) {
		const uint8_t *b = (const uint8_t *)&rec;

		rf_dbrec_set(&rec, pis[i]);
		cr_expect_eq(rf_be32toh(rec), pis[i] & 0xffff, "pi %#x", pis[i]);
		cr_expect_eq(b[0] | b[1], 0);
		cr_expect_eq(b[2], (pis[i] >> 8) & 0xff);
		cr_expect_eq(b[3], pis[i] & 0xff);
	}
}

Test(doorbell, ring_db_writes_ctrl_head_and_alternates)
{
	struct fake_uar u;
	uint8_t *q = make_queue();
	uint32_t pi = 0xfffe;		/* crosses the 16-bit wrap below */
	unsigned n;

	fake_uar_init(&u, BF_HALF);
	for (n = 0; n < 6; n++) {
		const uint8_t *ctrl = q + (n % QUEUE_BBS) * 64;
		uint32_t off = (uint32_t)(u.bf.cur - u.bf.reg);

		pi += 1;
		rf_ring_db(&u.dbrec[RF_SND_DBR], &u.bf, pi, ctrl);
		cr_expect_eq(rf_be32toh(u.dbrec[RF_SND_DBR]), pi & 0xffff);
		cr_expect_eq(u.dbrec[RF_RCV_DBR], RF_BE32(0xdeadbeef),
			     "the RQ word of the record is not touched");
		cr_expect_eq(off, (n & 1) ? BF_HALF : 0u, "ring %u used half %u", n, off);
		cr_expect_eq(memcmp(u.bf.reg + off, ctrl, 8), 0,
			     "doorbell carries the first 8 bytes of the ctrl segment");
		cr_expect_eq((uint32_t)(u.bf.cur - u.bf.reg), off ^ BF_HALF);
		/* refresh the pristine copy with what this ring legitimately wrote */
		expect_untouched_except(&u, RF_BF_REG_OFFSET + off, 8);
		memcpy(u.pristine, u.page, RF_UAR_PAGE_SIZE);
	}
	free(q);
	free(u.page);
}

Test(doorbell, no_blueflame_rings_same_address)
{
	struct fake_uar u;
	uint8_t *q = make_queue();
	unsigned n;

	fake_uar_init(&u, 0);
	for (n = 0; n < 4; n++) {
		rf_ring_db(&u.dbrec[RF_SND_DBR], &u.bf, n + 1, q + n * 64);
		cr_expect_eq(u.bf.cur, u.bf.reg);
		cr_expect_eq(memcmp(u.bf.reg, q + n * 64, 8), 0);
		expect_untouched_except(&u, RF_BF_REG_OFFSET, 8);
	}
	cr_expect_not(rf_bf_fits(&u.bf, 1), "no BlueFlame when bf.size is 0");
	free(q);
	free(u.page);
}

/* Only a register whose halves one XOR can toggle is accepted. */
Test(doorbell, bf_init_checks_the_register)
{
	static uint8_t page[RF_UAR_PAGE_SIZE] __attribute__((aligned(4096)));
	struct rf_bf bf = { NULL, NULL, 0, 0 };

	cr_assert_eq(rf_bf_init(&bf, page + RF_BF_REG_OFFSET, BF_HALF), 0);
	cr_expect_eq(bf.cur, bf.reg);
	cr_expect_eq(rf_bf_init(&bf, page + RF_BF_REG_OFFSET + 512, BF_HALF), 0,
		     "the second bfreg of a UAR page");
	cr_expect_eq(rf_bf_init(&bf, page + RF_BF_REG_OFFSET, 0), 0, "doorbell only");
	cr_expect_eq(rf_bf_init(&bf, page + RF_BF_REG_OFFSET + BF_HALF, BF_HALF), -EINVAL,
		     "an upper half cannot toggle upwards");
	cr_expect_eq(rf_bf_init(&bf, page + RF_BF_REG_OFFSET, 192), -EINVAL,
		     "not a power of two");
	cr_expect_eq(rf_bf_init(&bf, page, 2 * RF_BF_MAX_SIZE), -EINVAL, "too large");
	cr_expect_eq(rf_bf_init(&bf, NULL, BF_HALF), -EINVAL, "no register");
}

Test(doorbell, bf_fits_rule)
{
	struct rf_bf bf = { .size = BF_HALF };

	cr_expect(rf_bf_fits(&bf, 1));
	cr_expect(rf_bf_fits(&bf, 4));
	cr_expect_not(rf_bf_fits(&bf, 5));
}

Test(doorbell, bf_copy_whole_blocks_alternating)
{
	struct fake_uar u;
	uint8_t *q = make_queue();
	unsigned nbb;
	uint32_t pi = 0;

	fake_uar_init(&u, BF_HALF);
	for (nbb = 1; nbb <= 4; nbb++) {
		uint32_t off = (uint32_t)(u.bf.cur - u.bf.reg);

		pi += nbb;
		rf_ring_bf(&u.dbrec[RF_SND_DBR], &u.bf, pi, q, nbb);
		cr_expect_eq(rf_be32toh(u.dbrec[RF_SND_DBR]), pi);
		cr_expect_eq(memcmp(u.bf.reg + off, q, nbb * 64), 0,
			     "%u blocks copied to half %u", nbb, off);
		expect_untouched_except(&u, RF_BF_REG_OFFSET + off, nbb * 64);
		cr_expect_eq((uint32_t)(u.bf.cur - u.bf.reg), off ^ BF_HALF);
		memcpy(u.pristine, u.page, RF_UAR_PAGE_SIZE);
	}
	free(q);
	free(u.page);
}

/*
 * A WQE whose last block is the last block of the queue: the copy reads
 * exactly up to the queue end (an over-read trips AddressSanitizer on the
 * exactly sized heap queue) and nothing wraps to the queue start.
 */
Test(doorbell, bf_copy_wqe_ending_at_queue_end)
{
	struct fake_uar u;
	uint8_t *q = make_queue();
	unsigned nbb;

	fake_uar_init(&u, BF_HALF);
	for (nbb = 1; nbb <= 4; nbb++) {
		const uint8_t *wqe = q + (QUEUE_BBS - nbb) * 64;
		uint32_t off = (uint32_t)(u.bf.cur - u.bf.reg);

		rf_ring_bf(&u.dbrec[RF_SND_DBR], &u.bf, QUEUE_BBS, wqe, nbb);
		cr_expect_eq(memcmp(u.bf.reg + off, wqe, nbb * 64), 0);
		cr_expect_neq(memcmp(u.bf.reg + off, q, 64), 0,
			      "the copy did not wrap to the queue start");
		expect_untouched_except(&u, RF_BF_REG_OFFSET + off, nbb * 64);
		memcpy(u.pristine, u.page, RF_UAR_PAGE_SIZE);
	}
	free(q);
	free(u.page);
}

Test(doorbell, mmio_write64_is_one_8_byte_store_in_memory_order)
{
	uint64_t reg = 0, val;
	static const uint8_t bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	memcpy(&val, bytes, 8);
	rf_mmio_write64(&reg, val);
	cr_expect_eq(memcmp(&reg, bytes, 8), 0);
}
