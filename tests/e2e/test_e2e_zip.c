/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Compressed CQEs end to end: the same traffic through CQs created with
 * compression (every mini-CQE format, 64- and 128-byte CQEs) and through
 * plain ones gives the same records, and the device really wrote
 * zips (RFEMU_CQE_COMPRESS; none under "never").
 *
 * A round is ten signaled WQEs rung at once: three SENDs, two SENDs and
 * two WRITEs with the same immediate, a WRITE, a READ and a fetch-and-add;
 * the responder sees seven receives. The CQs have 32 entries, so the
 * rounds wrap them several times, zips included.
 */
#include "e2e.h"

enum { ROUNDS = 12, REQ_PER_ROUND = 10, RESP_PER_ROUND = 7, CQ_ENTRIES = 16 };

struct zip_run {
	struct rf_wc req[ROUNDS * REQ_PER_ROUND];
	struct rf_wc resp[ROUNDS * RESP_PER_ROUND];
	unsigned titles;	/* zips seen at the head of a CQ */
};

/*
 * Poll n records in calls of 1..5 records, so that zips are cut by
 * the record count and resumed. Before each call, a title at the head of
 * the CQ (not one resumed) is counted: a lower bound of the zips, as
 * one call may consume several.
 */
static void zip_wait(struct rf_cq *cq, struct rf_wc *wc, int n, unsigned *titles)
{
	long end = e2e_now_ms() + E2E_TIMEOUT_MS;
	int got = 0, call = 0;

	while (got < n) {
		const struct rf_cqe64 *head = rf_cq_peek(cq);
		int max = 1 + call++ % 5;

		if (head && !cq->zip_done && rf_cqe_format(head->op_own) == RF_CQE_FORMAT_COMPRESSED)
			(*titles)++;
		got += rf_cq_poll(cq, wc + got, max < n - got ? max : n - got);
		cr_assert(e2e_now_ms() < end, "timeout: %d of %d completions", got, n);
	}
	cr_assert_eq(rf_cq_poll(cq, wc + got, 1), 0, "more completions than WQEs");
}

/*
 * QP numbers differ between runs: 1 for a's, 2 for b's. Fields a record
 * does not carry (rf_cq_poll(3): byte_len of a send completion other
 * than READ and the atomics, imm without an immediate) read 0.
 */
static void zip_normalize(struct rf_wc *wc, int n, const struct e2e *e)
{
	for (int i = 0; i < n; i++) {
		if (wc[i].opcode < RF_WC_RECV && wc[i].opcode != RF_WC_RDMA_READ &&
		    wc[i].opcode != RF_WC_FETCH_ADD)
			wc[i].byte_len = 0;
		if (!(wc[i].flags & (RF_WC_WITH_IMM | RF_WC_WITH_INV)))
			wc[i].imm = 0;
		wc[i].qp_num = wc[i].qp_num == e->a.qp.qpn ? 1 : wc[i].qp_num == e->b.qp.qpn ? 2 : 0xbad;
		if (wc[i].src_qp)
			wc[i].src_qp = wc[i].src_qp == e->a.qp.qpn ? 1 : 0xbad;
	}
}

static void zip_traffic(struct zip_run *r, uint32_t mini_format, uint32_t cqe_size)
{
	struct e2e e;
	struct e2e_opts o;
	uint32_t lk, rk;

	memset(&o, 0, sizeof(o));
	o.cqe = CQ_ENTRIES;
	o.cqe_size = cqe_size;
	o.mini_format = mini_format;
	e2e_open(&e, &o);
	lk = e.a.mr->lkey;
	rk = e.b.mr->rkey;
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 256; i++)
		e.a.buf[i] = (uint8_t)(i * 7);
	for (unsigned round = 0; round < ROUNDS; round++) {
		struct rf_sq *sq = &e.a.qp.sq;
		uint64_t id = 1000 * (uint64_t)(round + 1);
		uint32_t len = 100 + round;

		for (unsigned i = 0; i < RESP_PER_ROUND; i++)
			cr_assert_eq(rf_rq_post_one(&e.b.qp.rq, e.b.mr->lkey,
						    e2e_addr(&e.b, 1024u * i), 1024, id + 100 + i), 0);
		rf_rq_ring(&e.b.qp.rq);
		for (unsigned i = 0; i < 3; i++)
			cr_assert_eq(rf_sq_post_send(sq, lk, e2e_addr(&e.a, 0), len + i,
						     RF_SEND_SIGNALED, id + i), 0);
		for (unsigned i = 0; i < 2; i++)
			cr_assert_eq(rf_sq_post_send_imm(sq, lk, e2e_addr(&e.a, 0), 80 + i,
							 RF_BE32(0x5a5a0000 + round),
							 RF_SEND_SIGNALED, id + 3 + i), 0);
		for (unsigned i = 0; i < 2; i++)
			cr_assert_eq(rf_sq_post_write_imm(sq, lk, e2e_addr(&e.a, 0), 90 + i, rk,
							  e2e_addr(&e.b, 16384), RF_BE32(0x77),
							  RF_SEND_SIGNALED, id + 5 + i), 0);
		cr_assert_eq(rf_sq_post_write(sq, lk, e2e_addr(&e.a, 0), 200, rk,
					      e2e_addr(&e.b, 20000), RF_SEND_SIGNALED, id + 7), 0);
		cr_assert_eq(rf_sq_post_read(sq, lk, e2e_addr(&e.a, 4096), 300, rk,
					     e2e_addr(&e.b, 20000), RF_SEND_SIGNALED, id + 8), 0);
		cr_assert_eq(rf_sq_post_faa(sq, lk, e2e_addr(&e.a, 8192), rk,
					    e2e_addr(&e.b, 24576), 3, RF_SEND_SIGNALED, id + 9), 0);
		rf_sq_ring(sq);
		zip_wait(&e.a.cq, r->req + round * REQ_PER_ROUND, REQ_PER_ROUND, &r->titles);
		zip_wait(&e.b.cq, r->resp + round * RESP_PER_ROUND, RESP_PER_ROUND, &r->titles);
	}
	zip_normalize(r->req, ROUNDS * REQ_PER_ROUND, &e);
	zip_normalize(r->resp, ROUNDS * RESP_PER_ROUND, &e);
	cr_assert_eq(rf_sq_space(&e.a.qp.sq), e.a.qp.sq.bb_max, "every WQE retired");
	cr_assert_eq(rf_rq_space(&e.b.qp.rq), e.b.qp.rq.wqe_cnt, "every receive retired");
	cr_assert_eq(e.a.cq.nstale + e.b.cq.nstale, 0, "no CQE dropped");
	e2e_close(&e);
}

static void zip_same(const struct rf_wc *x, const struct rf_wc *y, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		cr_assert(!memcmp(&x[i], &y[i], sizeof(x[i])),
			  "%s record %d: wr_id %llu/%llu opcode %u/%u status %u/%u byte_len %u/%u "
			  "imm %08x/%08x flags %x/%x wqe_counter %u/%u qp %u/%u src %u/%u",
			  what, i, (unsigned long long)x[i].wr_id, (unsigned long long)y[i].wr_id,
			  x[i].opcode, y[i].opcode, x[i].status, y[i].status, x[i].byte_len,
			  y[i].byte_len, x[i].imm, y[i].imm, x[i].flags, y[i].flags,
			  x[i].wqe_counter, y[i].wqe_counter, x[i].qp_num, y[i].qp_num,
			  x[i].src_qp, y[i].src_qp);
}

static struct zip_run plain, zipped;

/* The records of a compressed run equal those of a plain one. */
static void zip_compare(uint32_t mini_format, uint32_t cqe_size)
{
	zip_traffic(&plain, 0, cqe_size);
	cr_assert_eq(plain.titles, 0, "no zips on a CQ without compression");
	zip_traffic(&zipped, mini_format, cqe_size);
	cr_assert_gt(zipped.titles, 0, "the device wrote no zip");
	cr_log_info("%u zips seen", zipped.titles);
	zip_same(zipped.req, plain.req, ROUNDS * REQ_PER_ROUND, "requester");
	zip_same(zipped.resp, plain.resp, ROUNDS * RESP_PER_ROUND, "responder");
	for (int i = 0; i < ROUNDS * REQ_PER_ROUND; i++)
		cr_assert_eq(plain.req[i].status, RF_WC_SUCCESS);
	for (int i = 0; i < ROUNDS * RESP_PER_ROUND; i++)
		cr_assert_eq(plain.resp[i].status, RF_WC_SUCCESS);
}

TestSuite(e2e_zip, .timeout = 120);

Test(e2e_zip, hash_64)
{
	zip_compare(RF_MINI_CQE_RES_FORMAT_HASH, 64);
}

Test(e2e_zip, csum_64)
{
	zip_compare(RF_MINI_CQE_RES_FORMAT_CSUM, 64);
}

Test(e2e_zip, csum_stridx_64)
{
	zip_compare(RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX, 64);
}

Test(e2e_zip, hash_128)
{
	zip_compare(RF_MINI_CQE_RES_FORMAT_HASH, 128);
}

Test(e2e_zip, csum_stridx_128)
{
	zip_compare(RF_MINI_CQE_RES_FORMAT_CSUM_STRIDX, 128);
}

/* always: CQEs held until the engine idles; the records are the same. */
Test(e2e_zip, always)
{
	setenv("RFEMU_CQE_COMPRESS", "always", 1);
	zip_compare(RF_MINI_CQE_RES_FORMAT_CSUM, 64);
}

/* never: a CQ created with compression gets plain CQEs only. */
Test(e2e_zip, never_writes_zips)
{
	setenv("RFEMU_CQE_COMPRESS", "never", 1);
	zip_traffic(&zipped, RF_MINI_CQE_RES_FORMAT_HASH, 64);
	cr_assert_eq(zipped.titles, 0, "%u zips under never", zipped.titles);
	zip_traffic(&plain, 0, 64);
	zip_same(zipped.req, plain.req, ROUNDS * REQ_PER_ROUND, "requester");
	zip_same(zipped.resp, plain.resp, ROUNDS * RESP_PER_ROUND, "responder");
}
