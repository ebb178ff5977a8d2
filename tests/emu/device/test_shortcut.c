/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_shortcut.c - the loopback shortcut (emu/DESIGN-device.md, "Loopback
 * shortcut"): an RC RDMA WRITE to a QP of the same host, and the ACK back,
 * handed over without the loopback ring must end exactly as the packets
 * do.  Every scenario runs twice in one process, with the shortcut and with
 * the packet path forced (RFEMU_LOOPBACK_SHORTCUT=0, read when the engine
 * starts, i.e. when the device is opened with no other open), and the two
 * runs must give the same completions (status, opcode, wr_id, byte count,
 * vendor syndrome, QP), the same async events, the same QP states and the
 * same bytes in both buffers.  The first run must have taken the shortcut
 * (the counter rfemu_dev_stats().shortcuts), the second never.
 */
#include <sys/mman.h>

#include "wire_test.h"

#define MAX_WC		64
#define MAX_EV		8
#define MEM_BYTES	(48 * 1024)

struct outcome {
	struct ibv_wc		wc[MAX_WC];
	int			qp_of_wc[MAX_WC];	/* 0 or 1: t.qp[] index */
	int			nwc;
	enum ibv_event_type	ev[MAX_EV];
	int			nev;
	enum ibv_qp_state	state[2];
	uint64_t		shortcuts;
	uint8_t			mem[2][MEM_BYTES];
	uint8_t			pages[96];	/* what is still mapped of struct pages */
	unsigned long long	ctr[4];		/* port counters gained (counters[]) */
	uint64_t		pkts[2];	/* rfemu_dev_stats() pkts_tx, pkts_rx gained */
};

static const char *const counters[] = {
	"port_xmit_packets", "port_rcv_packets", "port_xmit_data", "port_rcv_data",
};

struct scenario {
	const char		*name;
	struct dt_qp_opts	opts;
	/* post the work; returns how many completions qp[0]'s CQ must give */
	int			(*run)(struct dt *t, void *priv);
	size_t			priv_size;
	/* the run sends a known number of packets: compare the counters too */
	bool			counts;
};

static const struct dt_qp_opts quick = {
	/* 4.096 us * 2^4: a lost request is retried soon, twice, then fails */
	.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 2, .timeout = 4,
};

static const struct dt_qp_opts slow = {
	/* 4.3 s: no retransmission in a test's life */
	.type = IBV_QPT_RC, .rnr_retry = 7, .retry_cnt = 7, .timeout = 20,
};

/* One RDMA WRITE of len bytes from qp[0] (src, lkey) to raddr/rkey. */
static void write1(struct dt *t, uint64_t wr_id, const void *src, uint32_t len,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_sge sge = { (uintptr_t)src, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = (unsigned)flags,
		.wr.rdma = { raddr, rkey },
	};

	dt_post(t->qp[0], &wr);
}

/* n 8-byte inline writes under one doorbell, the last one signaled. */
static void inline_batch(struct dt *t, uint64_t wr_id, unsigned n, uint32_t at)
{
	struct ibv_sge sge[16];
	struct ibv_send_wr wr[16];

	cr_assert_leq(n, 16);
	for (unsigned i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)t->buf[0] + at + 8 * i, 8, t->mr[0]->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = wr_id + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .next = i + 1 < n ? &wr[i + 1] : NULL,
			.send_flags = IBV_SEND_INLINE | (i + 1 == n ? IBV_SEND_SIGNALED : 0),
			.wr.rdma = { (uintptr_t)t->buf[1] + at + 8 * i, t->mr[1]->rkey },
		};
	}
	dt_post(t->qp[0], wr);
}

static void fill_source(struct dt *t)
{
	for (unsigned i = 0; i < MEM_BYTES; i++)
		t->buf[0][i] = (uint8_t)(i * 7 + 1);
}

/* ---- scenarios ------------------------------------------------------------ */

/* Inline batches and gathered writes of up to one packet and beyond. */
static int writes_ok(struct dt *t, void *priv)
{
	static const uint32_t len[] = { 0, 1, 100, 4096, 32 * 1024, 40 * 1024 };

	(void)priv;
	fill_source(t);
	for (unsigned r = 0; r < 4; r++)
		inline_batch(t, 100 * r, 16, 128 * r);
	for (unsigned i = 0; i < (sizeof(len) / sizeof(len[0])); i++)
		write1(t, 1000 + i, t->buf[0], len[i], t->mr[0]->lkey,
		       (uintptr_t)t->buf[1] + 1024 + 64 * i, t->mr[1]->rkey, IBV_SEND_SIGNALED);
	return 4 + (int)(sizeof(len) / sizeof(len[0]));
}

/* One signaled write at a time, each waited for: one request and one ACK each. */
static int one_at_a_time(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	for (unsigned i = 0; i < 8; i++) {
		write1(t, i, t->buf[0] + 8 * i, 8 + 16 * i, t->mr[0]->lkey,
		       (uintptr_t)t->buf[1] + 1024 * i, t->mr[1]->rkey,
		       IBV_SEND_SIGNALED | (i % 2 ? IBV_SEND_INLINE : 0));
		cr_assert_eq(dt_poll1(t->cq[0]).status, IBV_WC_SUCCESS);
	}
	write1(t, 8, t->buf[0], 8, t->mr[0]->lkey, (uintptr_t)t->buf[1], t->mr[1]->rkey,
	       IBV_SEND_SIGNALED);
	return 1;
}

/* Every way the responder refuses a write, in the middle of a stream. */
static int bad_rkey(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	inline_batch(t, 0, 5, 0);
	write1(t, 50, t->buf[0], 8, t->mr[0]->lkey, (uintptr_t)t->buf[1],
	       t->mr[1]->rkey + 1, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	inline_batch(t, 60, 3, 64);
	return 1 + 1 + 3;
}

static int out_of_bounds(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	inline_batch(t, 0, 4, 0);
	write1(t, 50, t->buf[0], 16, t->mr[0]->lkey, (uintptr_t)t->buf[1] + DT_BUF - 8,
	       t->mr[1]->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	return 1 + 1;
}

static int no_remote_write(struct dt *t, void *priv)
{
	struct ibv_qp_attr a = { .qp_access_flags = IBV_ACCESS_REMOTE_READ };

	(void)priv;
	fill_source(t);
	inline_batch(t, 0, 4, 0);
	cr_assert_eq(dt_poll1(t->cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_modify_qp(t->qp[1], &a, IBV_QP_ACCESS_FLAGS), 0);
	inline_batch(t, 10, 4, 64);
	return 1 + 3;	/* REM_INV_REQ_ERR, then the rest flushed */
}

/* The responder moved to ERR, then destroyed, while the requester streams. */
static int dest_in_error(struct dt *t, void *priv)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	(void)priv;
	fill_source(t);
	inline_batch(t, 0, 16, 0);
	cr_assert_eq(dt_poll1(t->cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_modify_qp(t->qp[1], &a, IBV_QP_STATE), 0);
	inline_batch(t, 20, 4, 256);
	return 1 + 3;	/* RETRY_EXC_ERR, then the rest flushed */
}

static int dest_destroyed(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	inline_batch(t, 0, 16, 0);
	cr_assert_eq(dt_poll1(t->cq[0]).status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_destroy_qp(t->qp[1]), 0);
	t->qp[1] = NULL;
	inline_batch(t, 20, 4, 256);
	return 1 + 3;
}

/* qp[1] taken through RESET again and connected to dqpn, expecting PSN rq_psn. */
static void reconnect(struct dt *t, uint32_t dqpn, uint32_t rq_psn)
{
	const struct qpu_conn c = {
		.reset_first = 1, .rtr_only = 1,
		.dqpn = dqpn, .dlid = t->lid, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
	};

	cr_assert_eq(qpu_bring_up(t->qp[1], &c), 0);
}

/* The responder expects a later PSN: sequence NAKs, retries, RETRY_EXC_ERR. */
static int psn_ahead(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	reconnect(t, t->qp[0]->qp_num, 0x80);
	inline_batch(t, 0, 4, 0);
	return 1 + 3;
}

/* ... an earlier one: the writes are duplicates, acknowledged and not executed. */
static int psn_behind(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	reconnect(t, t->qp[0]->qp_num, 0x300);
	inline_batch(t, 0, 4, 0);
	return 1;
}

/* The responder is connected to another QP: the writes are dropped as forged. */
static int not_from_peer(struct dt *t, void *priv)
{
	(void)priv;
	fill_source(t);
	reconnect(t, t->qp[1]->qp_num, 0x100);
	inline_batch(t, 0, 4, 0);
	return 1 + 3;
}

/* Targets and sources the process unmapped or made read-only. */
struct pages {
	uint8_t		*mem;
	struct ibv_mr	*mr;
};

static struct pages *map_pages(struct dt *t, void *priv)
{
	struct pages *p = priv;

	p->mem = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(p->mem != MAP_FAILED);
	memset(p->mem, 0x5a, 3 * 4096);
	p->mr = ibv_reg_mr(t->pd, p->mem, 3 * 4096, DT_ACC_ALL);
	cr_assert(p->mr, "ibv_reg_mr: %s", strerror(errno));
	return p;
}

static int target_unmapped(struct dt *t, void *priv)
{
	struct pages *p = map_pages(t, priv);

	fill_source(t);
	cr_assert_eq(munmap(p->mem + 4096, 4096), 0);
	inline_batch(t, 0, 4, 0);
	write1(t, 50, t->buf[0], 8, t->mr[0]->lkey, (uintptr_t)p->mem + 4096 + 64,
	       p->mr->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	inline_batch(t, 60, 2, 64);
	return 1 + 1 + 2;
}

static int target_straddles_unmapped(struct dt *t, void *priv)
{
	struct pages *p = map_pages(t, priv);

	fill_source(t);
	cr_assert_eq(munmap(p->mem + 4096, 4096), 0);
	/* 64 bytes, the first 32 on the mapped page */
	write1(t, 50, t->buf[0], 64, t->mr[0]->lkey, (uintptr_t)p->mem + 4096 - 32,
	       p->mr->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	return 1;
}

static int target_read_only(struct dt *t, void *priv)
{
	struct pages *p = map_pages(t, priv);

	fill_source(t);
	cr_assert_eq(mprotect(p->mem, 4096, PROT_READ), 0);
	write1(t, 50, t->buf[0], 8, t->mr[0]->lkey, (uintptr_t)p->mem + 8,
	       p->mr->rkey, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	return 1;
}

static int source_unmapped(struct dt *t, void *priv)
{
	struct pages *p = map_pages(t, priv);

	fill_source(t);
	cr_assert_eq(munmap(p->mem + 4096, 4096), 0);
	inline_batch(t, 0, 2, 0);
	/* a gathered write whose second half is gone */
	write1(t, 50, p->mem + 4096 - 100, 200, p->mr->lkey, (uintptr_t)t->buf[1] + 512,
	       t->mr[1]->rkey, IBV_SEND_SIGNALED);
	return 1 + 1;
}

/* ---- running one twice ------------------------------------------------------ */

static void drain_async(struct ibv_context *ctx, struct outcome *o)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	/* the events come with the completions that cause them: a short wait is enough */
	while (o->nev < MAX_EV && poll(&pfd, 1, 100) > 0) {
		cr_assert_eq(ibv_get_async_event(ctx, &ev), 0);
		o->ev[o->nev++] = ev.event_type;
		ibv_ack_async_event(&ev);
	}
}

static void run_once(const struct scenario *s, bool shortcut, struct outcome *o)
{
	struct rfemu_dev_stats before;
	struct dt t;
	void *priv = calloc(1, s->priv_size + 1);
	int want;

	cr_assert(priv);
	memset(o, 0, sizeof(*o));
	if (shortcut)
		unsetenv("RFEMU_LOOPBACK_SHORTCUT");
	else
		setenv("RFEMU_LOOPBACK_SHORTCUT", "0", 1);
	dt_setup_opts(&t, &s->opts);
	before = wt_stats();
	for (int i = 0; i < 4; i++)
		o->ctr[i] = dt_port_counter(counters[i]);
	want = s->run(&t, priv);
	cr_assert_leq(want, MAX_WC);
	o->nwc = dt_poll(t.cq[0], o->wc, want, 20000);
	cr_assert_eq(o->nwc, want, "%s: %d of %d completions", s->name, o->nwc, want);
	/* nothing more on either CQ */
	o->nwc += dt_poll(t.cq[0], o->wc + o->nwc, MAX_WC - o->nwc, 50);
	o->nwc += dt_poll(t.cq[1], o->wc + o->nwc, MAX_WC - o->nwc, 50);
	for (int i = 0; i < o->nwc; i++)
		o->qp_of_wc[i] = o->wc[i].qp_num == t.qp[0]->qp_num ? 0 : 1;
	drain_async(t.ctx, o);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		o->state[i] = IBV_QPS_UNKNOWN;
		if (t.qp[i] && !ibv_query_qp(t.qp[i], &a, IBV_QP_STATE, &ia))
			o->state[i] = a.qp_state;
		memcpy(o->mem[i], t.buf[i], MEM_BYTES);
	}
	for (int i = 0; i < 4; i++)
		o->ctr[i] = dt_port_counter(counters[i]) - o->ctr[i];
	o->shortcuts = wt_stats().shortcuts - before.shortcuts;
	o->pkts[0] = wt_stats().pkts_tx - before.pkts_tx;
	o->pkts[1] = wt_stats().pkts_rx - before.pkts_rx;
	if (s->priv_size) {
		struct pages *p = priv;

		if (p->mr)
			cr_assert_eq(ibv_dereg_mr(p->mr), 0);
		if (p->mem) {
			memcpy(o->pages, p->mem, 64);
			memcpy(o->pages + 64, p->mem + 4096 - 32, 32);
			munmap(p->mem, 3 * 4096);
		}
	}
	free(priv);
	dt_teardown(&t);
}

static void same_both_ways(const struct scenario *s, bool expect_shortcut)
{
	static struct outcome fast, slow_;

	run_once(s, true, &fast);
	run_once(s, false, &slow_);
	unsetenv("RFEMU_LOOPBACK_SHORTCUT");
	if (expect_shortcut)
		cr_assert_gt(fast.shortcuts, 0, "%s: the shortcut was never taken", s->name);
	cr_assert_eq(slow_.shortcuts, 0, "%s: the shortcut was taken while turned off", s->name);
	cr_assert_eq(fast.nwc, slow_.nwc, "%s: %d completions with the shortcut, %d without",
		     s->name, fast.nwc, slow_.nwc);
	for (int i = 0; i < fast.nwc; i++) {
		const struct ibv_wc *a = &fast.wc[i], *b = &slow_.wc[i];

		cr_assert(a->status == b->status && a->opcode == b->opcode &&
			  a->wr_id == b->wr_id && a->byte_len == b->byte_len &&
			  a->vendor_err == b->vendor_err && fast.qp_of_wc[i] == slow_.qp_of_wc[i],
			  "%s: completion %d: qp %d wr_id %llu %s (vendor 0x%x) with the shortcut, "
			  "qp %d wr_id %llu %s (vendor 0x%x) without", s->name, i,
			  fast.qp_of_wc[i], (unsigned long long)a->wr_id,
			  ibv_wc_status_str(a->status), a->vendor_err,
			  slow_.qp_of_wc[i], (unsigned long long)b->wr_id,
			  ibv_wc_status_str(b->status), b->vendor_err);
	}
	cr_assert_eq(fast.nev, slow_.nev, "%s: %d async events with the shortcut, %d without",
		     s->name, fast.nev, slow_.nev);
	for (int i = 0; i < fast.nev; i++)
		cr_assert_eq(fast.ev[i], slow_.ev[i], "%s: async event %d: %s / %s", s->name, i,
			     ibv_event_type_str(fast.ev[i]), ibv_event_type_str(slow_.ev[i]));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(fast.state[i], slow_.state[i], "%s: qp[%d] in state %d / %d",
			     s->name, i, fast.state[i], slow_.state[i]);
	for (int i = 0; s->counts && i < 4; i++)
		cr_assert_eq(fast.ctr[i], slow_.ctr[i], "%s: %s gained %llu with the shortcut, %llu without",
			     s->name, counters[i], fast.ctr[i], slow_.ctr[i]);
	for (int i = 0; s->counts && i < 2; i++)
		cr_assert_eq(fast.pkts[i], slow_.pkts[i], "%s: %s gained %llu with the shortcut, %llu without",
			     s->name, i ? "pkts_rx" : "pkts_tx", (unsigned long long)fast.pkts[i],
			     (unsigned long long)slow_.pkts[i]);
	cr_assert(!memcmp(fast.mem, slow_.mem, sizeof(fast.mem)) &&
		  !memcmp(fast.pages, slow_.pages, sizeof(fast.pages)),
		  "%s: memory differs between the two runs", s->name);
}

TestSuite(dev_shortcut, .timeout = 120);

Test(dev_shortcut, writes_land_the_same)
{
	const struct scenario s = { .name = "writes_ok", .opts = slow, .run = writes_ok };

	same_both_ways(&s, true);
}

Test(dev_shortcut, counted_as_packets)
{
	const struct scenario s = { .name = "one_at_a_time", .opts = slow, .run = one_at_a_time, .counts = true };

	same_both_ways(&s, true);
}

Test(dev_shortcut, bad_rkey_mid_stream)
{
	const struct scenario s = { .name = "bad_rkey", .opts = slow, .run = bad_rkey };

	same_both_ways(&s, true);
}

Test(dev_shortcut, out_of_bounds)
{
	const struct scenario s = { .name = "out_of_bounds", .opts = slow, .run = out_of_bounds };

	same_both_ways(&s, true);
}

Test(dev_shortcut, responder_without_remote_write)
{
	const struct scenario s = { .name = "no_remote_write", .opts = slow, .run = no_remote_write };

	same_both_ways(&s, true);
}

Test(dev_shortcut, responder_moved_to_error)
{
	const struct scenario s = { .name = "dest_in_error", .opts = quick, .run = dest_in_error };

	same_both_ways(&s, true);
}

Test(dev_shortcut, responder_destroyed)
{
	const struct scenario s = { .name = "dest_destroyed", .opts = quick, .run = dest_destroyed };

	same_both_ways(&s, true);
}

Test(dev_shortcut, target_unmapped)
{
	const struct scenario s = { .name = "target_unmapped", .opts = slow, .run = target_unmapped, .priv_size = sizeof(struct pages) };

	same_both_ways(&s, true);
}

Test(dev_shortcut, target_straddles_unmapped)
{
	const struct scenario s = { .name = "target_straddles_unmapped", .opts = slow, .run = target_straddles_unmapped, .priv_size = sizeof(struct pages) };

	same_both_ways(&s, false);
}

Test(dev_shortcut, target_read_only)
{
	const struct scenario s = { .name = "target_read_only", .opts = slow, .run = target_read_only, .priv_size = sizeof(struct pages) };

	same_both_ways(&s, false);
}

Test(dev_shortcut, source_unmapped)
{
	const struct scenario s = { .name = "source_unmapped", .opts = slow, .run = source_unmapped, .priv_size = sizeof(struct pages) };

	same_both_ways(&s, true);
}

Test(dev_shortcut, responder_expects_a_later_psn)
{
	const struct scenario s = { .name = "psn_ahead", .opts = quick, .run = psn_ahead };

	same_both_ways(&s, false);
}

Test(dev_shortcut, responder_expects_an_earlier_psn)
{
	const struct scenario s = { .name = "psn_behind", .opts = quick, .run = psn_behind };

	same_both_ways(&s, true);
}

Test(dev_shortcut, writes_not_from_the_peer)
{
	const struct scenario s = { .name = "not_from_peer", .opts = quick, .run = not_from_peer };

	same_both_ways(&s, false);
}
