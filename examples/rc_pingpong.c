/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rc_pingpong - latency of an RC ping-pong driven by rdmafast, two ways:
 *
 *   1. RDMA WRITE with immediate: each side writes the message straight
 *      into the peer's buffer; the immediate (the iteration number) raises
 *      a receive completion there, which is the "pong".
 *   2. SEND / receive: the message lands in a posted receive buffer.
 *
 * Every message carries a pattern derived from the iteration, checked on
 * arrival. Only every 16th send is signaled: one CQE retires the earlier
 * WQEs too (QUEUE SIZING in rdmafast(7)), so the send side costs almost
 * no CQ traffic.
 *
 *   server:  rc_pingpong [-d dev] [-p port] [-g gid_idx]
 *   client:  rc_pingpong [options] 127.0.0.1
 *   options: --iters N  --size BYTES  --inline  --events
 *
 * Exits 0 only when every message arrived intact.
 */
#include "cli.h"

enum { RX_DEPTH = 32, SIGNAL_EVERY = 16 };

static uint8_t pattern(long iter, long j, int side)
{
	return (uint8_t)(iter * 7 + j * 3 + side * 101);
}

struct pp {
	struct rf_ep x;
	const struct ex_opts *o;
	uint32_t size;
	int server;
	long errors;
	long posted;		/* sends posted, for selective signaling */
	uint8_t *rx_area;	/* [0, size): where the peer's WRITEs land */
	uint8_t *tx_area;	/* [size, 2 size): what we send */
	uint8_t *rq_area;	/* RX_DEPTH receive buffers of size bytes */
};

/* Receives: write-with-immediate consumes one too (its buffer unused). */
static int post_recv(struct pp *p, uint64_t slot)
{
	uint32_t len = p->size ? p->size : 1;

	return rf_rq_post_one(&p->x.qp.rq, p->x.mr->lkey,
			      (uint64_t)(uintptr_t)(p->rq_area + slot * len), p->size, slot);
}

/* Flags for the next send: signal every 16th, or when the SQ runs low. */
static uint32_t send_flags(struct pp *p)
{
	p->posted++;
	if (p->posted % SIGNAL_EVERY == 0 || rf_sq_space(&p->x.qp.sq) < 2 * SIGNAL_EVERY)
		return RF_SEND_SIGNALED;
	return 0;
}

/* Send iteration i to the peer (write_imm or send, inline or not). */
static int ping(struct pp *p, long i, int with_write)
{
	struct rf_sq *sq = &p->x.qp.sq;
	__be32 imm = rf_htobe32((uint32_t)i);
	/* one WQE, rung by the post itself: BlueFlame when the QP has it */
	uint32_t fl = send_flags(p) | RF_SEND_RING;
	int ret;

	for (uint32_t j = 0; j < p->size; j++)
		p->tx_area[j] = pattern(i, j, p->server);
	if (with_write && p->o->use_inline)
		ret = rf_sq_post_write_imm_inline(sq, p->tx_area, p->size, p->x.peer.rkey,
						  p->x.peer.addr, imm, fl, (uint64_t)i);
	else if (with_write)
		ret = rf_sq_post_write_imm(sq, p->x.mr->lkey, (uint64_t)(uintptr_t)p->tx_area,
					   p->size, p->x.peer.rkey, p->x.peer.addr, imm, fl,
					   (uint64_t)i);
	else if (p->o->use_inline)
		ret = rf_sq_post_send_imm_inline(sq, p->tx_area, p->size, imm, fl, (uint64_t)i);
	else
		ret = rf_sq_post_send_imm(sq, p->x.mr->lkey, (uint64_t)(uintptr_t)p->tx_area,
					  p->size, imm, fl, (uint64_t)i);
	return ret;
}

/* Wait for the peer's message i and check it. */
static int pong(struct pp *p, long i, int with_write)
{
	struct rf_wc wc;
	const uint8_t *data;
	int ret;

	for (;;) {
		ret = rf_ep_wait(&p->x, &wc, 0);
		if (ret)
			return ret;
		if (wc.status != RF_WC_SUCCESS) {
			fprintf(stderr, "completion error: status %u vendor %#x (wr_id %llu)\n",
				wc.status, wc.vendor_err, (unsigned long long)wc.wr_id);
			return -EIO;
		}
		if (wc.opcode == RF_WC_RECV || wc.opcode == RF_WC_RECV_RDMA_WITH_IMM)
			break;	/* send-side completions only retire WQEs */
	}
	if (!(wc.flags & RF_WC_WITH_IMM) || rf_be32toh(wc.imm) != (uint32_t)i ||
	    wc.opcode != (with_write ? RF_WC_RECV_RDMA_WITH_IMM : RF_WC_RECV)) {
		fprintf(stderr, "iteration %ld: unexpected completion (opcode %u imm %u)\n",
			i, wc.opcode, rf_be32toh(wc.imm));
		p->errors++;
	}
	data = with_write ? p->rx_area : p->rq_area + wc.wr_id * (p->size ? p->size : 1);
	if (!with_write && wc.byte_len != p->size)
		p->errors++;
	for (uint32_t j = 0; j < p->size; j++) {
		if (data[j] != pattern(i, j, !p->server)) {
			if (p->errors++ < 5)
				fprintf(stderr, "iteration %ld: byte %u is %#x, expected %#x\n",
					i, j, data[j], pattern(i, j, !p->server));
			break;
		}
	}
	/* give the receive back */
	ret = post_recv(p, wc.wr_id);
	if (!ret)
		rf_rq_ring(&p->x.qp.rq);
	return ret;
}

static int run(struct pp *p, int with_write, double *usec)
{
	long t0 = ex_now_us();
	int ret;

	for (long i = 0; i < p->o->iters; i++) {
		if (!p->server) {
			ret = ping(p, i, with_write);
			if (!ret)
				ret = pong(p, i, with_write);
		} else {
			ret = pong(p, i, with_write);
			if (!ret)
				ret = ping(p, i, with_write);
		}
		if (ret) {
			fprintf(stderr, "iteration %ld: %s\n", i, strerror(-ret));
			return ret;
		}
	}
	*usec = (double)(ex_now_us() - t0) / (double)p->o->iters / 2.0;
	return rf_tcp_sync(p->x.sock, with_write ? 'W' : 'S', 0);
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18515, 0, 1, NULL, 1000, 64, 0, 0, 0, 0, NULL };
	struct pp p;
	double lat_write = 0, lat_send = 0;
	size_t need;
	int ret;

	if (ex_parse(&o, argc, argv,
		     "      --inline        send the message inside the WQE\n"
		     "      --events        sleep in the completion channel instead of spinning\n"))
		return 2;
	memset(&p, 0, sizeof(p));
	p.o = &o;
	p.size = (uint32_t)o.size;
	p.server = o.host == NULL;
	need = 2 * (size_t)(p.size ? p.size : 1) + RX_DEPTH * (size_t)(p.size ? p.size : 1);
	/* each side writes (with immediate) into the other's buffer */
	if (ex_start(&p.x, &o, need, 128, o.use_inline ? p.size + 16 : 0,
		     RF_ACCESS_REMOTE_WRITE, 0))
		return 1;
	if (o.use_inline && p.size > p.x.qp.sq.max_inline) {
		fprintf(stderr, "--inline: %u bytes exceed the QP's max_inline_data %u\n",
			p.size, p.x.qp.sq.max_inline);
		rf_ep_close(&p.x);
		return 1;
	}
	p.rx_area = p.x.buf;
	p.tx_area = p.x.buf + (p.size ? p.size : 1);
	p.rq_area = p.x.buf + 2 * (size_t)(p.size ? p.size : 1);
	for (uint64_t s = 0; s < RX_DEPTH; s++) {
		ret = post_recv(&p, s);
		if (ret) {
			fprintf(stderr, "posting receives: %s\n", strerror(-ret));
			rf_ep_close(&p.x);
			return 1;
		}
	}
	rf_rq_ring(&p.x.qp.rq);
	ret = rf_tcp_sync(p.x.sock, 'G', 0);	/* receives posted on both sides */
	if (!ret)
		ret = run(&p, 1, &lat_write);
	if (!ret)
		ret = run(&p, 0, &lat_send);
	printf("%s: %ld iterations of %u bytes%s%s, QP %#x <-> %#x, BlueFlame %s\n",
	       p.server ? "server" : "client", o.iters, p.size,
	       o.use_inline ? ", inline" : "", o.events ? ", events" : "",
	       p.x.qp.qpn, p.x.peer.qpn, p.x.qp.sq.bf.size ? "yes" : "no");
	if (!ret) {
		printf("  RDMA WRITE with immediate: %8.2f usec one-way\n", lat_write);
		printf("  SEND / receive:            %8.2f usec one-way\n", lat_send);
	}
	printf("  %s (%ld bad messages, %llu stale CQEs)\n",
	       !ret && !p.errors ? "all checks passed" : "FAILED", p.errors,
	       (unsigned long long)p.x.cq.nstale);
	rf_ep_close(&p.x);
	return !ret && !p.errors ? 0 : 1;
}
