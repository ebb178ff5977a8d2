/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mw_grant - a server grants a client remote write access to part of a
 * buffer through a type-2 memory window, and takes it back:
 *
 *   1. the server binds the window over 4 KiB in the middle of a 16 KiB
 *      buffer, by a UMR WQE on its own QP (rf_sq_post_bind_mw()), with
 *      the next key tag (rf_mw_inc_rkey()), and hands the key and address
 *      to the client; the buffer's own MR grants no remote access at all;
 *   2. the client writes through it; the server finds the bytes there and
 *      nothing else of the buffer touched;
 *   3. the server revokes the window: in round 1 by a local invalidate
 *      (rf_sq_post_local_inv()), in round 2 by binding the window again
 *      with a new tag, so that the same bytes are granted under another
 *      key only;
 *   4. the client's next write with the old key completes with a remote
 *      access error, and the server finds its buffer unchanged.
 *
 * The refused write takes both QPs to the error state (the QP semantics
 * of IBA 10.6.7), so each round has a connection of its own.
 *
 *   server:  mw_grant [-d dev] [-p port] [-g gid_idx]
 *   client:  mw_grant [options] 127.0.0.1
 *
 * Exits 0 only when every write went where the window allowed, every
 * write after a revocation was refused, and the buffer stayed untouched.
 */
#include "cli.h"

enum { REGION = 16384, WIN_OFF = 4096, WIN_LEN = 4096, MSG = 256, WAIT_MS = 10000 };

/* What the server hands over: the window's key, address and length. */
struct grant {
	__be32 rkey;
	__be32 len;
	__be64 addr;
};

static uint8_t pattern(int round, int attempt, uint32_t j)
{
	return (uint8_t)(1 + round * 64 + attempt * 32 + j % 31);
}

/* One completion of the endpoint, of opcode op and status want. 0 or -1. */
static int expect(struct rf_ep *e, uint8_t op, uint8_t want, const char *what)
{
	struct rf_wc wc;
	int ret = rf_ep_wait(e, &wc, WAIT_MS);

	if (ret) {
		fprintf(stderr, "%s: %s\n", what, strerror(-ret));
		return -1;
	}
	if (wc.opcode != op || wc.status != want) {
		fprintf(stderr, "%s: opcode %u status %u (vendor %#x), expected opcode %u status %u\n",
			what, wc.opcode, wc.status, wc.vendor_err, op, want);
		return -1;
	}
	return 0;
}

/* The buffer as it should be: the first write in the window, zeros around. */
static long check_region(const uint8_t *region, int round)
{
	long bad = 0;

	for (uint32_t j = 0; j < REGION; j++) {
		int in = j >= WIN_OFF && j < WIN_OFF + MSG;

		bad += region[j] != (in ? pattern(round, 0, j - WIN_OFF) : 0);
	}
	return bad;
}

struct server {
	struct ibv_mw *mw;
	uint32_t key;		/* the window's current key */
	uint8_t *region;
	struct ibv_mr *mr;	/* local write and window binding only */
};

static int bind_window(struct rf_ep *e, struct server *s)
{
	uint32_t key = rf_mw_inc_rkey(s->key);

	if (rf_sq_post_bind_mw(&e->qp.sq, s->key, key, s->mr->lkey,
			       (uint64_t)(uintptr_t)(s->region + WIN_OFF), WIN_LEN,
			       rf_mw_access_ibv(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
			       RF_SEND_SIGNALED | RF_SEND_RING, 1) ||
	    expect(e, RF_WC_BIND_MW, RF_WC_SUCCESS, "binding the window"))
		return -1;
	s->key = key;
	return 0;
}

static int invalidate(struct rf_ep *e, struct server *s)
{
	if (rf_sq_post_local_inv(&e->qp.sq, s->key, RF_SEND_SIGNALED | RF_SEND_RING, 2))
		return -1;
	return expect(e, RF_WC_LOCAL_INV, RF_WC_SUCCESS, "invalidating the window");
}

static int serve_round(struct rf_ep *e, struct server *s, int round, long *errors)
{
	struct grant g;
	uint32_t old;

	memset(s->region, 0, REGION);
	if (bind_window(e, s))
		return -1;
	g.rkey = rf_htobe32(s->key);
	g.len = rf_htobe32(WIN_LEN);
	g.addr = rf_htobe64((uint64_t)(uintptr_t)(s->region + WIN_OFF));
	if (rf_tcp_xfer(e->sock, &g, sizeof(g), 0, WAIT_MS) ||
	    rf_tcp_sync(e->sock, 'W', WAIT_MS))		/* the client wrote */
		return -1;
	*errors += check_region(s->region, round);
	old = s->key;
	if (invalidate(e, s))
		return -1;
	/* round 2: the same bytes again, under the next tag only */
	if (round == 1 && bind_window(e, s))
		return -1;
	if (rf_tcp_sync(e->sock, 'R', WAIT_MS) ||	/* revoked */
	    rf_tcp_sync(e->sock, 'X', WAIT_MS))	/* the client tried again */
		return -1;
	*errors += check_region(s->region, round);
	if (round)
		printf("  round 2: key %#x granted and written through, the window bound again "
		       "as %#x: the buffer unchanged\n", old, s->key);
	else
		printf("  round 1: key %#x granted and written through, invalidated: "
		       "the buffer unchanged\n", old);
	/* the QPs are in error now: the window goes with ibv_dealloc_mw() */
	return 0;
}

static int client_round(struct rf_ep *e, int round)
{
	uint64_t src = (uint64_t)(uintptr_t)e->buf;
	struct grant g;
	uint32_t key;
	uint64_t addr;

	if (rf_tcp_xfer(e->sock, &g, sizeof(g), 1, WAIT_MS))
		return -1;
	key = rf_be32toh(g.rkey);
	addr = rf_be64toh(g.addr);
	for (uint32_t j = 0; j < MSG; j++)
		e->buf[j] = pattern(round, 0, j);
	if (rf_sq_post_write(&e->qp.sq, e->mr->lkey, src, MSG, key, addr,
			     RF_SEND_SIGNALED | RF_SEND_RING, 1) ||
	    expect(e, RF_WC_RDMA_WRITE, RF_WC_SUCCESS, "writing through the window"))
		return -1;
	if (rf_tcp_sync(e->sock, 'W', WAIT_MS) || rf_tcp_sync(e->sock, 'R', WAIT_MS))
		return -1;
	for (uint32_t j = 0; j < MSG; j++)
		e->buf[j] = pattern(round, 1, j);
	if (rf_sq_post_write(&e->qp.sq, e->mr->lkey, src, MSG, key, addr,
			     RF_SEND_SIGNALED | RF_SEND_RING, 2) ||
	    expect(e, RF_WC_RDMA_WRITE, RF_WC_REM_ACCESS_ERR, "writing after the revocation"))
		return -1;
	printf("  round %d: a write through key %#x landed; after the %s it was refused\n",
	       round + 1, key, round ? "rebind with a new tag" : "invalidation");
	return rf_tcp_sync(e->sock, 'X', WAIT_MS);
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 1, 0, 0, 0, 0, 0, NULL };
	struct server s;
	long errors = 0;
	int ret = 0;

	if (ex_parse(&o, argc, argv, ""))
		return 2;
	memset(&s, 0, sizeof(s));
	for (int round = 0; round < 2 && !ret; round++) {
		struct rf_ep e;

		/*
		 * The server's QP allows remote write, for the window; its
		 * endpoint buffer none (access 0): the window's key decides.
		 */
		if (ex_start(&e, &o, 4096, 16, 0, 0, o.host ? 0 : RF_ACCESS_REMOTE_WRITE))
			return 1;
		if (!o.host && !s.mw) {
			/* the buffer: no remote access of its own, windows only */
			s.region = (uint8_t *)aligned_alloc(4096, REGION);
			s.mw = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
			s.mr = s.region ? ibv_reg_mr(e.pd, s.region, REGION,
						     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)
					: NULL;
			if (!s.mw || !s.mr) {
				fprintf(stderr, "the window or its region: %s\n", strerror(errno));
				ret = -1;
			}
			if (s.mw)
				s.key = s.mw->rkey;
		}
		if (!ret)
			ret = o.host ? client_round(&e, round) : serve_round(&e, &s, round, &errors);
		if (!o.host) {
			/* the window and region live in this endpoint's PD */
			if (s.mw)
				ibv_dealloc_mw(s.mw);
			if (s.mr)
				ibv_dereg_mr(s.mr);
			free(s.region);
			memset(&s, 0, sizeof(s));
		}
		rf_ep_close(&e);
	}
	printf("%s: %s (%ld bytes of the buffer wrong)\n", o.host ? "client" : "server",
	       !ret && !errors ? "all checks passed" : "FAILED", errors);
	return !ret && !errors ? 0 : 1;
}
