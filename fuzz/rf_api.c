/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rf_api.c - libFuzzer target: the rdmafast data path driven as an
 * application drives it, checked against a model of what each call must
 * return and write. No device: two QPs' send and receive queues and one CQ
 * in host memory (as tests/unit/ builds them), each its own heap block of
 * exactly its size. The harness plays the device: it writes the CQEs a
 * ConnectX would for the WQEs posted, in order.
 *
 * Input: a 3-byte header (the QPs' kinds, queue depth, CQE size,
 * BlueFlame, max_inline, max_sge, receive stride), then operations, each a
 * byte (bit 7 the QP, low 4 bits the call, bits 4-6 an argument) and the
 * bytes it takes: posts of every kind (WRITE, READ, SEND, inline SEND and
 * WRITE, SGE lists, atomics, NOP, UD SEND), rf_sq_ring, rf_rq_post,
 * rf_rq_ring, a requester CQE (success or error) for a posted WQE, a
 * receive CQE, rf_cq_poll of 1-8, rf_cq_detach/rf_cq_attach.
 *
 * What must hold after every call:
 *   - a post returns -EINVAL exactly when the arguments are refused for the
 *     queue (its kind, max_inline, max_sge, the WQE size), else -ENOSPC
 *     exactly when the model's queue has no room for the WQE and the NOPs
 *     padding to the queue end, else 0; on an error nothing is written and
 *     pi stays; on success pi moves by padding + the WQE's BBs and only the
 *     BBs in [pi, new pi) changed;
 *   - rf_sq_space() and rf_rq_space() are the model's;
 *   - rf_sq_ring() leaves pi & 0xffff in the doorbell record;
 *   - rf_cq_poll() returns min(n, CQEs of attached QPs written and not yet
 *     polled) records, in order, each with the wr_id, QPN, success or
 *     error, and send or receive opcode of the CQE written; it writes
 *     nothing past them; CQEs of a detached QP are counted in nstale.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdmafast/rdmafast.h>

#include "input.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "rf_api: check failed: %s (line %d)\n", #c, __LINE__); \
	abort(); } } while (0)

#define NQ     2
#define MAXW   64		/* posted WQEs the model remembers per QP (> 32 BBs) */
#define MAXC   128		/* CQEs written and not polled */

static void *xalloc(size_t align, size_t n)
{
	void *p = aligned_alloc(align, n);

	CHECK(p);
	memset(p, 0, n);
	return p;
}

/* A posted WQE the model knows: first BB (after any padding), end, wr_id. */
struct mwqe {
	uint32_t pi, end;
	uint64_t wr_id;
	uint8_t op;
};

struct qp {
	struct rf_sq sq;
	struct rf_rq rq;
	uint32_t qpn, kind;
	uint8_t *sqbuf, *rqbuf, *uar, *shadow;
	struct rf_sq_slot *sq_slot;
	uint64_t *rq_wr_id;
	__be32 db[2];
	/* the model */
	uint32_t pi, ci;		/* BBs posted; end of the last WQE retired */
	struct mwqe w[MAXW];		/* posted, not retired: w[wh..wt) */
	uint32_t wh, wt, wnext;		/* wnext: the next a CQE may name */
	uint32_t rhead, rtail, rnext;	/* receives posted, retired, named by a CQE */
	uint64_t r_wr_id[64];
	int attached;
};

/* A CQE written, not yet polled. */
struct mcqe {
	int q, recv, err;
	uint64_t wr_id;
	uint32_t retire_end;		/* requester: the WQE's end */
	uint32_t widx;			/* requester: index in w[] */
};

static struct {
	struct qp q[NQ];
	struct rf_cq cq;
	uint8_t *cqbuf;
	__be32 cq_db[2];
	uint32_t cqe_cnt, cqe_size, wqe_cnt, rq_cnt, max_inline, max_sge, rq_sge;
	uint32_t cq_pi;			/* CQEs written */
	struct mcqe c[MAXC];
	uint32_t ch, ct;		/* c[ch..ct) written, not polled */
	uint64_t nstale;
	uint64_t next_wr_id;
} S;

static uint32_t sq_tseg_ds(uint32_t kind)
{
	return kind == RF_QP_XRC ? 1 : kind == RF_QP_UD ? 3 : 0;
}

static void setup(struct in *in)
{
	uint8_t g = take(in), mi = take(in), ms = take(in);
	struct rf_cq_attr ca;

	memset(&S, 0, sizeof(S));
	S.wqe_cnt = 1u << (2 + ((g >> 4) & 3));		/* 4..32 BBs */
	S.cqe_size = g & 0x40 ? 128 : 64;
	S.cqe_cnt = 64;
	S.max_inline = mi;
	S.max_sge = ms & 15;
	S.rq_sge = 1u << ((ms >> 4) % 3);		/* stride 16, 32, 64 */
	S.rq_cnt = ms & 0x80 ? 8 : 4;
	S.cqbuf = xalloc(64, (size_t)S.cqe_cnt * S.cqe_size);
	ca = (struct rf_cq_attr){ .buf = S.cqbuf, .cqe_cnt = S.cqe_cnt,
				  .cqe_size = S.cqe_size, .dbrec = S.cq_db, .cqn = 3 };
	CHECK(rf_cq_init(&S.cq, &ca) == 0);
	/* every entry starts owned by the device (opcode INVALID, owner 1 for lap 0) */
	for (uint32_t i = 0; i < S.cqe_cnt; i++)
		rf_cq_cqe(&S.cq, i)->op_own = (uint8_t)(RF_CQE_INVALID << 4 | 1);
	for (int k = 0; k < NQ; k++) {
		struct qp *q = &S.q[k];
		struct rf_sq_attr sa;
		struct rf_rq_attr ra;

		q->kind = (g >> (2 * k)) & 3;	/* RC, UC, XRC, UD */
		q->qpn = 0x100 + (uint32_t)k;
		q->sqbuf = xalloc(64, (size_t)S.wqe_cnt * 64);
		q->shadow = xalloc(64, (size_t)S.wqe_cnt * 64);
		q->sq_slot = xalloc(16, S.wqe_cnt * sizeof(struct rf_sq_slot));
		q->uar = xalloc(4096, 4096);
		sa = (struct rf_sq_attr){
			.buf = q->sqbuf, .wqe_cnt = S.wqe_cnt, .dbrec = q->db,
			.bf_reg = q->uar + RF_BF_REG_OFFSET, .bf_size = g & 0x80 ? 256 : 0,
			.qpn = q->qpn, .max_inline = S.max_inline, .max_sge = S.max_sge,
			.kind = q->kind, .slot = q->sq_slot };
		CHECK(rf_sq_init(&q->sq, &sa) == 0);
		q->rqbuf = xalloc(64, (size_t)S.rq_cnt * S.rq_sge * 16);
		q->rq_wr_id = xalloc(8, S.rq_cnt * sizeof(uint64_t));
		ra = (struct rf_rq_attr){ .buf = q->rqbuf, .wqe_cnt = S.rq_cnt,
					  .stride = S.rq_sge * 16, .dbrec = q->db,
					  .wr_id = q->rq_wr_id };
		CHECK(rf_rq_init(&q->rq, &ra) == 0);
		CHECK(rf_cq_attach(&S.cq, q->qpn, &q->sq, &q->rq, NULL) == 0);
		q->attached = 1;
	}
}

static void teardown(void)
{
	for (int k = 0; k < NQ; k++) {
		struct qp *q = &S.q[k];

		free(q->sqbuf);
		free(q->shadow);
		free(q->sq_slot);
		free(q->uar);
		free(q->rqbuf);
		free(q->rq_wr_id);
	}
	free(S.cqbuf);
}

static uint32_t bbs(uint32_t ds)
{
	return (ds + RF_WQE_DS_PER_BB - 1) / RF_WQE_DS_PER_BB;
}

/*
 * The model of one post: -EINVAL, or the WQE's BBs (then -ENOSPC or 0 by
 * the room). The sizes are the PRM's: ctrl, the transport segment (XRC
 * 16 bytes, UD's address vector 48), raddr 16, atomic operands 16, a data
 * segment 16 per SGE of nonzero length, inline 4 + len rounded to 16.
 */
enum { P_WRITE, P_READ, P_SEND, P_SEND_INL, P_WRITE_INL, P_SEND_SG, P_FAA, P_CAS,
       P_NOP, P_UD_SEND, P_UD_INL, NPOST };

static int model_post(const struct qp *q, int op, uint32_t len, const struct rf_sge *sg,
		      uint32_t n, uint32_t *nbb)
{
	uint32_t tds = sq_tseg_ds(q->kind), ds, body, i;
	int ud = q->kind == RF_QP_UD, uc = q->kind == RF_QP_UC;

	switch (op) {
	case P_WRITE:
	case P_SEND:
		if (ud)
			return -EINVAL;
		*nbb = 1;
		return 0;
	case P_READ:
		if (ud || uc)
			return -EINVAL;
		*nbb = 1;
		return 0;
	case P_SEND_INL:
	case P_WRITE_INL:
		body = (op == P_WRITE_INL) + (len ? RF_INLINE_DS(len) : 0);
		if (len > S.max_inline || ud)
			return -EINVAL;
		ds = 1 + tds + body;
		if (ds > RF_WQE_MAX_DS)
			return -EINVAL;
		*nbb = bbs(ds);
		return 0;
	case P_SEND_SG:
		if (n > S.max_sge)
			return -EINVAL;
		body = 0;
		for (i = 0; i < n; i++)
			body += sg[i].length != 0;
		if (1 + tds + body > RF_WQE_MAX_DS || ud)
			return -EINVAL;
		*nbb = bbs(1 + tds + body);
		return 0;
	case P_FAA:
	case P_CAS:
		if (ud || uc)
			return -EINVAL;
		*nbb = tds ? 2 : 1;
		return 0;
	case P_NOP:
		*nbb = 1;
		return 0;
	default:	/* UD SEND, data segment or inline */
		if (!ud)
			return -EINVAL;
		if (op == P_UD_INL && len > S.max_inline)
			return -EINVAL;
		ds = 4 + (op == P_UD_INL ? (len ? RF_INLINE_DS(len) : 0) : (len != 0));
		if (ds > RF_WQE_MAX_DS)
			return -EINVAL;
		*nbb = bbs(ds);
		return 0;
	}
}

static void check_space(const struct qp *q)
{
	CHECK(rf_sq_space(&q->sq) == S.wqe_cnt - (q->pi - q->ci));
	CHECK(rf_rq_space(&q->rq) == S.rq_cnt - (q->rhead - q->rtail));
}

static void do_post(struct qp *q, int op, struct in *in)
{
	static const uint8_t payload[1024];
	struct rf_wqe_av av;
	struct rf_sge sg[16];
	uint32_t len = take(in), n = 0, nbb = 0, pad = 0, room, i;
	uint32_t flags = take(in) & (RF_SEND_SIGNALED | RF_SEND_SOLICITED | RF_SEND_FENCE);
	uint64_t wr_id = ++S.next_wr_id;
	uint64_t laddr = 0x10000 + len;
	int want, rc;

	if (op == P_SEND_INL || op == P_WRITE_INL || op == P_UD_INL)
		len = len * 4 + (take(in) & 3);			/* 0..1023 */
	if (op == P_SEND_SG) {
		n = take(in) % 17;
		for (i = 0; i < n; i++)
			sg[i] = (struct rf_sge){ laddr + i * 64, take(in) & 3 ? 64 : 0, 7 };
	}
	memset(&av, 0x11, sizeof(av));
	want = model_post(q, op, len, sg, n, &nbb);
	if (!want) {
		room = S.wqe_cnt - (q->pi & (S.wqe_cnt - 1));
		pad = nbb > 1 && nbb > room ? room : 0;
		if (S.wqe_cnt - (q->pi - q->ci) < pad + nbb)
			want = -ENOSPC;
	}
	memcpy(q->shadow, q->sqbuf, (size_t)S.wqe_cnt * 64);
	switch (op) {
	case P_WRITE:     rc = rf_sq_post_write(&q->sq, 7, laddr, len, 9, 0x2000, flags, wr_id); break;
	case P_READ:      rc = rf_sq_post_read(&q->sq, 7, laddr, len, 9, 0x2000, flags, wr_id); break;
	case P_SEND:      rc = rf_sq_post_send(&q->sq, 7, laddr, len, flags, wr_id); break;
	case P_SEND_INL:  rc = rf_sq_post_send_inline(&q->sq, payload, len, flags, wr_id); break;
	case P_WRITE_INL: rc = rf_sq_post_write_inline(&q->sq, payload, len, 9, 0x2000, flags, wr_id); break;
	case P_SEND_SG:   rc = rf_sq_post_send_sg(&q->sq, sg, n, flags, wr_id); break;
	case P_FAA:       rc = rf_sq_post_faa(&q->sq, 7, laddr, 9, 0x2000, 1, flags, wr_id); break;
	case P_CAS:       rc = rf_sq_post_cas(&q->sq, 7, laddr, 9, 0x2000, 1, 2, flags, wr_id); break;
	case P_NOP:       rc = rf_sq_post_nop(&q->sq, flags, wr_id); break;
	case P_UD_SEND:   rc = rf_sq_post_ud_send(&q->sq, &av, 5, 6, NULL, 7, laddr, len, 0, 0,
						  flags, wr_id); break;
	default:          rc = rf_sq_post_ud_send(&q->sq, &av, 5, 6, payload, 0, 0, len, 0, 0,
						  flags, wr_id); break;
	}
	CHECK(rc == want);
	if (rc) {
		CHECK(q->sq.pi == q->pi);
		CHECK(memcmp(q->shadow, q->sqbuf, (size_t)S.wqe_cnt * 64) == 0);
		return;
	}
	CHECK(q->sq.pi == q->pi + pad + nbb);
	CHECK(rf_sq_last_pi(&q->sq) == q->pi + pad);
	/* only the BBs of the padding and the WQE changed */
	for (i = 0; i < S.wqe_cnt; i++) {
		uint32_t slot_off = (i - (q->pi & (S.wqe_cnt - 1))) & (S.wqe_cnt - 1);

		if (slot_off < pad + nbb)
			continue;
		CHECK(memcmp(q->shadow + 64 * i, q->sqbuf + 64 * i, 64) == 0);
	}
	q->w[q->wt % MAXW] = (struct mwqe){ q->pi + pad, q->pi + pad + nbb, wr_id, (uint8_t)op };
	q->wt++;
	q->pi += pad + nbb;
}

/* Write the next CQE as the device would: body, then op_own with the lap's owner bit. */
static struct rf_cqe64 *cqe_put(uint8_t opcode, uint8_t wqe_op, uint32_t qpn, uint16_t ctr,
				uint32_t byte_cnt)
{
	struct rf_cqe64 *e = rf_cq_cqe(&S.cq, S.cq_pi);
	uint8_t *entry = (uint8_t *)e + 64 - S.cqe_size;

	memset(entry, 0, S.cqe_size - 1);
	e->sop_drop_qpn = rf_htobe32((uint32_t)wqe_op << 24 | qpn);
	e->wqe_counter = rf_htobe16(ctr);
	e->byte_cnt = rf_htobe32(byte_cnt);
	e->op_own = (uint8_t)(opcode << 4 | ((S.cq_pi / S.cqe_cnt) & 1));
	S.cq_pi++;
	return e;
}

static void complete_send(int k, uint8_t arg, struct in *in)
{
	struct qp *q = &S.q[k];
	uint32_t avail = q->wt - q->wnext, j;
	struct mwqe *w;
	struct rf_cqe64 *e;
	int err = arg & 1;

	if (!avail || S.ct - S.ch >= S.cqe_cnt || S.ct - S.ch >= MAXC)
		return;
	j = q->wnext + take(in) % avail;
	w = &q->w[j % MAXW];
	e = cqe_put(err ? RF_CQE_REQ_ERR : RF_CQE_REQ, rf_be32toh(rf_sq_wqe(&q->sq, w->pi)->opmod_idx_opcode) & 0xff,
		    q->qpn, (uint16_t)w->pi, 0);
	if (err) {
		((struct rf_err_cqe *)e)->syndrome = RF_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	}
	q->wnext = j + 1;
	S.c[S.ct % MAXC] = (struct mcqe){ .q = k, .err = err, .wr_id = w->wr_id,
					  .retire_end = w->end, .widx = j };
	S.ct++;
}

static void complete_recv(int k)
{
	struct qp *q = &S.q[k];

	if (q->rnext == q->rhead || S.ct - S.ch >= S.cqe_cnt || S.ct - S.ch >= MAXC)
		return;
	cqe_put(RF_CQE_RESP_SEND, 0, q->qpn, (uint16_t)q->rnext, 64);
	S.c[S.ct % MAXC] = (struct mcqe){ .q = k, .recv = 1,
					  .wr_id = q->r_wr_id[q->rnext % 64] };
	q->rnext++;
	S.ct++;
}

static void poll(uint8_t arg)
{
	struct rf_wc wc[9];
	int n = 1 + (arg & 7), got, want = 0;
	uint32_t i;
	uint64_t stale = 0;

	/* what the model says: the first n CQEs of attached QPs; the detached before them dropped */
	for (i = S.ch; i < S.ct && want < n; i++) {
		if (S.q[S.c[i % MAXC].q].attached)
			want++;
		else
			stale++;
	}
	memset(wc, 0xa5, sizeof(wc));
	got = rf_cq_poll(&S.cq, wc, n);
	CHECK(got == want);
	for (int b = n * (int)sizeof(wc[0]); b < (int)sizeof(wc); b++)
		CHECK(((uint8_t *)wc)[b] == 0xa5);
	for (int r = 0; S.ch < S.ct && r < got; S.ch++) {
		const struct mcqe *m = &S.c[S.ch % MAXC];
		struct qp *q = &S.q[m->q];

		if (!q->attached)
			continue;
		CHECK(wc[r].wr_id == m->wr_id);
		CHECK(wc[r].qp_num == q->qpn);
		CHECK((wc[r].status == RF_WC_SUCCESS) == !m->err);
		CHECK(m->recv ? wc[r].opcode == RF_WC_RECV : wc[r].opcode < RF_WC_RECV);
		if (m->recv) {
			q->rtail++;
		} else {
			q->ci = m->retire_end;
			q->wh = m->widx + 1;
		}
		r++;
	}
	/* and, when fewer than n were there, the detached ones after them */
	if (got < n)
		S.ch = S.ct;
	CHECK(S.cq.nstale == S.nstale + stale);
	S.nstale += stale;
	CHECK(S.cq.ci == S.cq_pi - (S.ct - S.ch));
	for (int k = 0; k < NQ; k++)
		check_space(&S.q[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint32_t steps = 0;

	setup(&in);
	while (in.n && steps++ < 256) {
		uint8_t c = take(&in), arg = (c >> 4) & 7;
		int k = c >> 7, rc;
		struct qp *q = &S.q[k];
		struct rf_sge sg[8];
		uint32_t n;

		switch (c & 15) {
		case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
			/* 9 of 16: posts; arg picks among the 11 kinds with the low bits */
			do_post(q, (int)(((c & 15) + 9 * (arg & 1)) % NPOST), &in);
			break;
		case 9:
			rf_sq_ring(&q->sq);
			CHECK(rf_be32toh(q->db[RF_SND_DBR]) == (q->pi & 0xffff));
			break;
		case 10:
			n = arg;
			for (uint32_t i = 0; i < n; i++)
				sg[i] = (struct rf_sge){ 0x20000 + 64 * i, take(&in) & 1 ? 64 : 0, 7 };
			rc = rf_rq_post(&q->rq, sg, n, ++S.next_wr_id);
			if (n > S.rq_sge)
				CHECK(rc == -EINVAL);
			else if (q->rhead - q->rtail >= S.rq_cnt)
				CHECK(rc == -ENOSPC);
			else {
				CHECK(rc == 0);
				q->r_wr_id[q->rhead % 64] = S.next_wr_id;
				q->rhead++;
			}
			break;
		case 11:
			rf_rq_ring(&q->rq);
			CHECK(rf_be32toh(q->db[RF_RCV_DBR]) == (q->rhead & 0xffff));
			break;
		case 12:
			complete_send(k, arg, &in);
			break;
		case 13:
			complete_recv(k);
			break;
		case 14:
			poll(arg);
			break;
		default:
			if (q->attached) {
				CHECK(rf_cq_detach(&S.cq, q->qpn) == 0);
				CHECK(rf_cq_detach(&S.cq, q->qpn) == -ENOENT);
				q->attached = 0;
			} else {
				CHECK(rf_cq_attach(&S.cq, q->qpn, &q->sq, &q->rq, NULL) == 0);
				q->attached = 1;
			}
			break;
		}
		check_space(q);
	}
	teardown();
	return 0;
}
