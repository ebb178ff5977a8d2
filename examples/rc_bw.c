/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rc_bw - one-sided RDMA WRITE and READ bandwidth and message rate with
 * rdmafast's two throughput tools:
 *
 *   doorbell batching    post --batch WQEs, then one rf_sq_ring(): one
 *                        doorbell record store and one 8-byte MMIO write
 *                        for the whole batch;
 *   selective signaling  only the last WQE of a batch asks for a CQE; its
 *                        completion retires the whole batch in the SQ.
 *
 * The client drives; the server only provides memory and checks it. The
 * client keeps as many batches in flight as the send queue holds.
 *
 *   server:  rc_bw [-d dev] [-p port] [-g gid_idx]
 *   client:  rc_bw [options] 127.0.0.1
 *   options: --iters N (messages)  --size BYTES  --batch N  --op write|read|both
 *
 * Each message has its own pattern; after the run the side that received
 * data checks the last message in every slot. Exits 0 only if all match.
 */
#include "cli.h"

enum { SLOTS = 64 };

static uint8_t pattern(long msg, long j)
{
	return (uint8_t)(msg * 31 + j * 7 + 1);
}

struct bw {
	struct rf_ep x;
	const struct ex_opts *o;
	uint32_t size, slot;	/* message size, slot stride (>= 1) */
	long errors;
};

/* Check that slot s of buf holds the last message written to it. */
static void check_slots(struct bw *b, const uint8_t *buf, const char *what)
{
	for (long s = 0; s < SLOTS && s < b->o->iters; s++) {
		long last = s + ((b->o->iters - 1 - s) / SLOTS) * SLOTS;

		for (uint32_t j = 0; j < b->size; j++) {
			if (buf[s * b->slot + j] != pattern(last, j)) {
				if (b->errors++ < 5)
					fprintf(stderr, "%s: slot %ld byte %u is %#x, want %#x\n",
						what, s, j, buf[s * b->slot + j], pattern(last, j));
				break;
			}
		}
	}
}

/*
 * Move iters messages with opcode write (1) or read (0). Returns 0 or
 * -errno and the elapsed time in *usec.
 */
static int stream(struct bw *b, int write, long *usec)
{
	struct rf_sq *sq = &b->x.qp.sq;
	uint8_t *src = b->x.buf;			/* WRITE source slots */
	uint8_t *dst = b->x.buf + SLOTS * (size_t)b->slot;	/* READ destination */
	long batch = b->o->batch, posted = 0, done = 0, t0;
	struct rf_wc wc[16];

	if (write)
		for (long m = 0; m < b->o->iters; m++)
			if (m >= b->o->iters - SLOTS)	/* the last message per slot */
				for (uint32_t j = 0; j < b->size; j++)
					src[(m % SLOTS) * b->slot + j] = pattern(m, j);
	t0 = ex_now_us();
	while (done < b->o->iters) {
		/* post a batch if the SQ has room for it (1 BB per WQE) */
		if (posted < b->o->iters && rf_sq_space(sq) >= (uint32_t)batch) {
			long n = batch < b->o->iters - posted ? batch : b->o->iters - posted;

			for (long k = 0; k < n; k++, posted++) {
				long s = posted % SLOTS;
				uint32_t fl = k == n - 1 ? RF_SEND_SIGNALED : 0;
				int ret;

				if (write)
					ret = rf_sq_post_write(sq, b->x.mr->lkey,
							       (uint64_t)(uintptr_t)(src + s * b->slot),
							       b->size, b->x.peer.rkey,
							       b->x.peer.addr + (uint64_t)s * b->slot,
							       fl, (uint64_t)(posted + 1));
				else
					ret = rf_sq_post_read(sq, b->x.mr->lkey,
							      (uint64_t)(uintptr_t)(dst + s * b->slot),
							      b->size, b->x.peer.rkey,
							      b->x.peer.addr + (uint64_t)s * b->slot,
							      fl, (uint64_t)(posted + 1));
				if (ret)
					return ret;
			}
			rf_sq_ring(sq);		/* one doorbell for the batch */
			continue;
		}
		/* otherwise reap completions: each one ends a batch */
		{
			long end = ex_now_us() + RF_TCP_TIMEOUT_MS * 1000L;
			int n;

			while ((n = rf_cq_poll(&b->x.cq, wc, 16)) == 0)
				if (ex_now_us() > end)
					return -ETIMEDOUT;
			for (int i = 0; i < n; i++) {
				if (wc[i].status != RF_WC_SUCCESS) {
					fprintf(stderr, "completion error: status %u vendor %#x\n",
						wc[i].status, wc[i].vendor_err);
					return -EIO;
				}
				done = (long)wc[i].wr_id;	/* wr_id = messages done */
			}
		}
	}
	*usec = ex_now_us() - t0;
	return 0;
}

static void report(const char *what, struct bw *b, long usec)
{
	double s = usec / 1e6;

	printf("  %-5s %ld x %u bytes, batch %d: %9.2f MB/s %9.4f Mmsg/s (%.3f s)\n",
	       what, b->o->iters, b->size, b->o->batch,
	       (double)b->o->iters * b->size / s / 1e6, b->o->iters / s / 1e6, s);
}

int main(int argc, char **argv)
{
	struct ex_opts o = { NULL, 18516, 0, 1, NULL, 10000, 4096, 0, 0, 16, 0, "both" };
	struct bw b;
	int do_write, do_read, ret = 0;
	long usec;

	if (ex_parse(&o, argc, argv,
		     "  -b, --batch N       WQEs per doorbell (default 16)\n"
		     "  -o, --op OP         write, read or both (default)\n"))
		return 2;
	do_write = !strcmp(o.op, "write") || !strcmp(o.op, "both");
	do_read = !strcmp(o.op, "read") || !strcmp(o.op, "both");
	if ((!do_write && !do_read) || o.batch < 1 || o.batch > 64) {
		fprintf(stderr, "bad --op or --batch\n");
		return 2;
	}
	memset(&b, 0, sizeof(b));
	b.o = &o;
	b.size = (uint32_t)o.size;
	b.slot = b.size ? b.size : 1;
	/* the client writes into and reads from the server's buffer */
	if (ex_start(&b.x, &o, 2 * SLOTS * (size_t)b.slot, 256, 0,
		     o.host ? 0 : (do_write ? RF_ACCESS_REMOTE_WRITE : 0) |
				  (do_read ? RF_ACCESS_REMOTE_READ : 0), 0))
		return 1;
	if (b.x.qp.sq.bb_max < (uint32_t)o.batch) {
		fprintf(stderr, "batch larger than the send queue\n");
		rf_ep_close(&b.x);
		return 1;
	}
	printf("%s: QP %#x <-> %#x, SQ %u BBs, BlueFlame %s\n", o.host ? "client" : "server",
	       b.x.qp.qpn, b.x.peer.qpn, b.x.qp.sq.wqe_cnt, b.x.qp.sq.bf.size ? "yes" : "no");

	if (do_write) {
		if (o.host) {
			ret = stream(&b, 1, &usec);
			if (!ret)
				report("WRITE", &b, usec);
		}
		if (!ret)
			ret = rf_tcp_sync(b.x.sock, 'W', 0);	/* all writes landed */
		if (!ret && !o.host)
			check_slots(&b, b.x.buf, "WRITE target");
	}
	if (do_read && !ret) {
		if (!o.host)	/* the server provides what is read */
			for (long m = o.iters - SLOTS; m < o.iters; m++)
				if (m >= 0)
					for (uint32_t j = 0; j < b.size; j++)
						b.x.buf[(m % SLOTS) * b.slot + j] = pattern(m, j);
		ret = rf_tcp_sync(b.x.sock, 'P', 0);		/* pattern in place */
		if (!ret && o.host) {
			ret = stream(&b, 0, &usec);
			if (!ret) {
				report("READ", &b, usec);
				check_slots(&b, b.x.buf + SLOTS * (size_t)b.slot, "READ result");
			}
		}
		if (!ret)
			ret = rf_tcp_sync(b.x.sock, 'D', 0);
	}
	if (ret)
		fprintf(stderr, "%s\n", strerror(-ret));
	printf("  %s (%ld bad slots)\n", !ret && !b.errors ? "all checks passed" : "FAILED",
	       b.errors);
	rf_ep_close(&b.x);
	return !ret && !b.errors ? 0 : 1;
}
