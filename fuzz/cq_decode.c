/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cq_decode.c - libFuzzer target: rf_cq_poll(), rf_cq_peek(),
 * rf_cq_decode() and rf_cq_advance() over CQ contents the fuzzer chooses
 * (any opcode, syndrome, owner bit, format, SE, counter, QPN, byte count;
 * 64- and 128-byte entries; compressed format bits), with send, receive
 * and shared receive queues attached whose WQEs rdmafast itself posted.
 *
 * Every buffer (CQ, SQ, RQ, SRQ, the side tables, the receive and READ
 * targets) is its own heap block of exactly its size, so AddressSanitizer
 * reports a read or write one byte outside any of them. What must hold:
 *
 *   - rf_cq_poll() returns 0..n and writes records only within wc[0..n);
 *   - every record has a status and an opcode from the defined sets;
 *   - a signature error record (RF_WC_SIG_ERR) is the last of its poll,
 *     and rf_cq_sig_err() then reads it, once;
 *   - a requester record's wr_id is one the side table holds for its slot;
 *   - in "in order" mode, where each requester CQE names a posted WQE in
 *     posting order (as RC/UC/XRC hardware does) and the rest of the CQE
 *     is the fuzzer's, the SQ consumer index is exactly the end of the last
 *     WQE named, and rf_sq_space() never exceeds the queue.
 *
 * Input: a 4-byte header (geometry, mode), a list of posts, then CQE
 * bytes, then a list of poll commands (fuzz/README.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmafast/rdmafast.h>

#include "input.h"

#define QPN_SQ   0x000101u	/* SQ + RQ */
#define QPN_SRQ  0x000102u	/* SQ + SRQ */
#define RECV_LEN 48u		/* each receive buffer; > 32 so inline scatter fits */
#define SINK_LEN 64u		/* each READ/atomic target */

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "cq_decode: check failed: %s (line %d)\n", #c, __LINE__); \
	abort(); } } while (0)

/* Posted WQEs, in order: first BB, end, wr_id. */
struct posted {
	uint32_t pi, end;
	uint64_t wr_id;
};

struct world {
	struct rf_cq cq;
	struct rf_sq sq;
	struct rf_rq rq;
	struct rf_srq srq;
	uint8_t *cqbuf, *sqbuf, *rqbuf, *srqbuf;
	struct rf_sq_slot *sq_slot;
	uint64_t *rq_wr_id, *srq_wr_id;
	__be32 cq_db[2], qp_db[2], srq_db[2];
	uint8_t *recv[8], *srecv[8], *sink[64];
	uint32_t cqe_cnt, cqe_size, wqe_cnt;
	struct posted post[64];
	uint32_t nposted;
};

static const uint8_t wc_status_ok[32] = {
	[RF_WC_SUCCESS] = 1, [RF_WC_LOC_LEN_ERR] = 1, [RF_WC_LOC_QP_OP_ERR] = 1,
	[RF_WC_LOC_PROT_ERR] = 1, [RF_WC_WR_FLUSH_ERR] = 1, [RF_WC_MW_BIND_ERR] = 1,
	[RF_WC_BAD_RESP_ERR] = 1, [RF_WC_LOC_ACCESS_ERR] = 1, [RF_WC_REM_INV_REQ_ERR] = 1,
	[RF_WC_REM_ACCESS_ERR] = 1, [RF_WC_REM_OP_ERR] = 1, [RF_WC_RETRY_EXC_ERR] = 1,
	[RF_WC_RNR_RETRY_EXC_ERR] = 1, [RF_WC_REM_ABORT_ERR] = 1, [RF_WC_GENERAL_ERR] = 1,
};

static int wc_opcode_ok(uint8_t op)
{
	return op <= RF_WC_LOCAL_INV || op == RF_WC_MASKED_COMP_SWAP ||
	       op == RF_WC_MASKED_FETCH_ADD || op == RF_WC_NOP || op == RF_WC_RECV ||
	       op == RF_WC_RECV_RDMA_WITH_IMM || op == RF_WC_SIG_ERR || op == RF_WC_UNKNOWN;
}

static void setup(struct world *w, struct in *in)
{
	uint8_t g = take(in), s = take(in);
	struct rf_cq_attr ca;
	struct rf_sq_attr sa;
	struct rf_rq_attr ra;
	struct rf_srq_attr qa;
	uint32_t i;

	memset(w, 0, sizeof(*w));
	w->cqe_size = g & 1 ? 128 : 64;
	w->cqe_cnt = 1u << (1 + (g >> 1) % 6);		/* 2..64 */
	w->wqe_cnt = 1u << (2 + s % 5);			/* 4..64 BBs */
	w->cqbuf = xmalloc((size_t)w->cqe_cnt * w->cqe_size);
	ca = (struct rf_cq_attr){ .buf = w->cqbuf, .cqe_cnt = w->cqe_cnt,
				  .cqe_size = w->cqe_size, .dbrec = w->cq_db, .cqn = 7,
				  /* none, HASH, CSUM, CSUM_STRIDX: compressed CQEs */
				  .mini_format = (1u << ((g >> 4) & 3)) >> 1 };
	CHECK(rf_cq_init(&w->cq, &ca) == 0);

	w->sqbuf = xmalloc((size_t)w->wqe_cnt * RF_SEND_WQE_BB);
	memset(w->sqbuf, 0, (size_t)w->wqe_cnt * RF_SEND_WQE_BB);
	w->sq_slot = xmalloc(w->wqe_cnt * sizeof(struct rf_sq_slot));
	for (i = 0; i < w->wqe_cnt; i++)
		w->sq_slot[i].wr_id = 0xdead0000u | i;	/* never posted */
	sa = (struct rf_sq_attr){ .buf = w->sqbuf, .wqe_cnt = w->wqe_cnt, .dbrec = w->qp_db,
				  .qpn = QPN_SQ, .max_inline = 64, .max_sge = 4,
				  .kind = (s >> 5) & 3, .slot = w->sq_slot };
	CHECK(rf_sq_init(&w->sq, &sa) == 0);

	w->rqbuf = xmalloc(8 * 32);
	w->rq_wr_id = xmalloc(8 * sizeof(uint64_t));
	ra = (struct rf_rq_attr){ .buf = w->rqbuf, .wqe_cnt = 8, .stride = 32,
				  .dbrec = w->qp_db, .wr_id = w->rq_wr_id };
	CHECK(rf_rq_init(&w->rq, &ra) == 0);
	for (i = 0; i < 8; i++) {
		w->recv[i] = xmalloc(RECV_LEN);
		CHECK(rf_rq_post_one(&w->rq, 1, (uintptr_t)w->recv[i], RECV_LEN, 100 + i) == 0);
	}

	/* an SRQ of 8 WQEs of 32 bytes (next segment + one data segment) */
	w->srqbuf = xmalloc(8 * 32);
	memset(w->srqbuf, 0, 8 * 32);
	for (i = 0; i < 8; i++)
		((struct rf_wqe_srq_next_seg *)(w->srqbuf + 32 * i))->next_wqe_index =
			rf_htobe16((uint16_t)((i + 1) % 8));
	w->srq_wr_id = xmalloc(8 * sizeof(uint64_t));
	qa = (struct rf_srq_attr){ .buf = w->srqbuf, .wqe_cnt = 8, .stride = 32, .head = 0,
				   .tail = 7, .srqn = 9, .dbrec = w->srq_db,
				   .wr_id = w->srq_wr_id };
	CHECK(rf_srq_init(&w->srq, &qa) == 0);
	for (i = 0; i < 7; i++) {
		struct rf_sge sg = { (uintptr_t)(w->srecv[i] = xmalloc(RECV_LEN)), RECV_LEN, 1 };

		CHECK(rf_srq_post(&w->srq, &sg, 1, 200 + i) == 0);
	}

	CHECK(rf_cq_attach(&w->cq, QPN_SQ, &w->sq, &w->rq, NULL) == 0);
	CHECK(rf_cq_attach(&w->cq, QPN_SRQ, &w->sq, NULL, &w->srq) == 0);
	if (s & 0x80)
		rf_cq_set_srq(&w->cq, &w->srq);
}

/* Post what the input asks, until it says stop or the queue is full. */
static void post(struct world *w, struct in *in)
{
	static const uint8_t payload[64];
	struct rf_wqe_av av;
	uint32_t n = take(in) % 33;

	memset(&av, 0, sizeof(av));
	for (uint32_t k = 0; k < n && w->nposted < 64; k++) {
		uint8_t op = take(in);
		uint32_t len = 1 + take(in) % SINK_LEN, flags = op & 0x80 ? RF_SEND_SIGNALED : 0;
		uint64_t wr_id = 0x1000 + w->nposted;
		uint8_t *sink = w->sink[w->nposted] = xmalloc(SINK_LEN);
		uint32_t pi0 = w->sq.pi;
		int rc;

		switch (op & 7) {
		case 0:  rc = rf_sq_post_write(&w->sq, 1, (uintptr_t)sink, len, 2, 3, flags, wr_id); break;
		case 1:  rc = rf_sq_post_read(&w->sq, 1, (uintptr_t)sink, len, 2, 3, flags, wr_id); break;
		case 2:  rc = rf_sq_post_send(&w->sq, 1, (uintptr_t)sink, len, flags, wr_id); break;
		case 3:  rc = rf_sq_post_send_inline(&w->sq, payload, len, flags, wr_id); break;
		case 4:  rc = rf_sq_post_faa(&w->sq, 1, (uintptr_t)sink, 2, 3, 1, flags, wr_id); break;
		case 5:  rc = rf_sq_post_cas(&w->sq, 1, (uintptr_t)sink, 2, 3, 1, 2, flags, wr_id); break;
		case 6:  rc = rf_sq_post_nop(&w->sq, flags, wr_id); break;
		default: rc = rf_sq_post_ud_send(&w->sq, &av, 5, 6, NULL, 1, (uintptr_t)sink, len,
						 0, 0, flags, wr_id); break;
		}
		if (rc) {
			free(sink);
			w->sink[w->nposted] = NULL;
			if (rc == -ENOSPC)
				break;
			continue;
		}
		/* NOP padding before a WQE is invisible here: record the WQE itself */
		w->post[w->nposted].pi = rf_sq_last_pi(&w->sq);
		w->post[w->nposted].end = w->sq.pi;
		w->post[w->nposted].wr_id = wr_id;
		(void)pi0;
		w->nposted++;
	}
}

/*
 * Fill the CQ. Each entry starts from the fuzzer's bytes; in order mode a
 * requester CQE then gets the counter and QPN of the next posted WQE.
 */
static uint32_t fill_cq(struct world *w, struct in *in, int in_order, uint32_t *named)
{
	uint32_t i, next = 0, nentries = take(in) % (w->cqe_cnt + 1);

	*named = 0;
	for (i = 0; i < nentries; i++) {
		struct rf_cqe64 *e = rf_cq_cqe(&w->cq, i);
		uint8_t *entry = (uint8_t *)e + 64 - w->cqe_size;
		uint8_t opc;

		for (uint32_t b = 0; b < w->cqe_size; b++)
			entry[b] = take(in);
		/* owned by software on lap 0 unless the fuzzer says not (owner 1) */
		opc = rf_cqe_opcode(e->op_own);
		/*
		 * A compressed title: mostly a count a zip can have. Its
		 * mini-CQEs name WQEs in any order, so the in-order mode (whose
		 * check is the SQ consumer index) has none.
		 */
		if (rf_cqe_format(e->op_own) == RF_CQE_FORMAT_COMPRESSED) {
			if (in_order)
				e->op_own &= (uint8_t)~(RF_CQE_FORMAT_COMPRESSED << 2);
			else if (e->signature & 1)
				e->byte_cnt = rf_htobe32(2 + take(in) % w->cqe_cnt);
		}
		if (in_order && (opc == RF_CQE_REQ || opc == RF_CQE_REQ_ERR)) {
			if (next < w->nposted) {
				next += take(in) % (w->nposted - next);
				e->wqe_counter = rf_htobe16((uint16_t)w->post[next].pi);
				e->sop_drop_qpn = rf_htobe32((rf_be32toh(e->sop_drop_qpn) & 0xff000000u) |
							     (e->sop_drop_qpn & rf_htobe32(1) ? QPN_SRQ : QPN_SQ));
				*named = ++next;
			} else {
				e->op_own = (uint8_t)((e->op_own & 0x0f) | (RF_CQE_INVALID << 4));
			}
		} else if (in_order && opc != RF_CQE_SIG_ERR) {
			/* receives are unordered, but in order mode keep them out */
			e->op_own = (uint8_t)((e->op_own & 0x0f) | (RF_CQE_INVALID << 4));
		}
	}
	return nentries;
}

static void check_wc(const struct world *w, const struct rf_wc *wc)
{
	CHECK(wc->status < sizeof(wc_status_ok) && wc_status_ok[wc->status]);
	CHECK(wc_opcode_ok(wc->opcode));
	if (wc->opcode < RF_WC_RECV && wc->status == RF_WC_SUCCESS &&
	    (wc->qp_num == QPN_SQ || wc->qp_num == QPN_SRQ)) {
		uint32_t slot = wc->wqe_counter & (w->wqe_cnt - 1);

		CHECK(wc->wr_id == w->sq_slot[slot].wr_id);
	}
}

/*
 * After a signature error record: the CQ's copy decodes (or is refused
 * as mlx5dv_mkey_check() refuses it), and once decoded is gone.
 */
static void check_sig_err(struct world *w)
{
	static const struct rf_sig_domain d = { RF_SIG_CRC64_XP10, RF_SIG_BLOCK_512, 0, 0, 0, 0, 0 };
	struct rf_sig_err e;
	int ret = rf_cq_sig_err(&w->cq, &d, &d, &e);

	CHECK(ret == 0 || ret == -EINVAL);
	if (!ret) {
		CHECK(e.type >= RF_SIG_ERR_GUARD && e.type <= RF_SIG_ERR_APPTAG);
		CHECK(rf_cq_sig_err(&w->cq, &d, &d, &e) == 0 && e.type == RF_SIG_ERR_NONE);
	}
}

static void run(struct world *w, struct in *in, int in_order, uint32_t named)
{
	struct rf_wc wc[20];
	uint32_t consumed = 0, rounds = 0;

	while (in->n && rounds++ < 64) {
		uint8_t c = take(in);
		int n = (c >> 2) % 17 + 1, got;
		struct rf_cqe64 *cqe;

		memset(wc, 0xa5, sizeof(wc));
		switch (c & 3) {
		case 0:
		case 1:
			got = rf_cq_poll(&w->cq, wc, n);
			CHECK(got >= 0 && got <= n);
			for (int k = 0; k < got; k++) {
				check_wc(w, &wc[k]);
				CHECK(wc[k].opcode != RF_WC_SIG_ERR || k == got - 1);
			}
			if (got && wc[got - 1].opcode == RF_WC_SIG_ERR)
				check_sig_err(w);
			/* nothing past the records claimed */
			for (size_t b = (size_t)n * sizeof(wc[0]); b < sizeof(wc); b++)
				CHECK(((uint8_t *)wc)[b] == 0xa5);
			break;
		case 2:
			cqe = rf_cq_peek(&w->cq);
			if (cqe) {
				if (rf_cq_decode(&w->cq, cqe, &wc[0]))
					check_wc(w, &wc[0]);
				rf_cq_advance(&w->cq, 1);
			}
			break;
		default:
			/* the raw level may skip entries unread */
			rf_cq_advance(&w->cq, (uint32_t)n % 3);
			rf_cq_update_ci(&w->cq);
			break;
		}
		consumed = w->cq.ci;
		CHECK(rf_be32toh(w->cq_db[RF_CQ_SET_CI]) <= (consumed & 0xffffff));
	}
	if (in_order) {
		/*
		 * Every requester CQE named a posted WQE in order, so the SQ
		 * consumer index is the end of one of them (or still 0), and
		 * at most the end of the last one named.
		 */
		uint32_t ci = rf_sq_ci(&w->sq), k;

		CHECK(rf_sq_space(&w->sq) <= w->wqe_cnt);
		for (k = 0; k < named && w->post[k].end != ci; k++)
			;
		CHECK(ci == 0 || k < named);
	}
}

static void teardown(struct world *w)
{
	for (uint32_t i = 0; i < 8; i++) {
		free(w->recv[i]);
		free(w->srecv[i]);
	}
	for (uint32_t i = 0; i < 64; i++)
		free(w->sink[i]);
	free(w->cqbuf);
	free(w->sqbuf);
	free(w->sq_slot);
	free(w->rqbuf);
	free(w->rq_wr_id);
	free(w->srqbuf);
	free(w->srq_wr_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	static struct world w;
	uint32_t named;
	int in_order;

	setup(&w, &in);
	in_order = take(&in) & 1;
	post(&w, &in);
	fill_cq(&w, &in, in_order, &named);
	run(&w, &in, in_order, named);
	teardown(&w);
	return 0;
}
