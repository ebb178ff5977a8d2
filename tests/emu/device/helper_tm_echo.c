/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_tm_echo - the far end of test_direct.c's tag matching test: an
 * RC QP on a TM SRQ (16 receives of BYTES, a list of 16 tags; its sends
 * complete on a CQ of their own) that sends
 * every message it receives back, as the test sent it: the tag-matching
 * header (struct ibv_tmh) and the data.
 *
 *   helper_tm_echo BYTES ADD_AFTER TAG
 *
 * prints "QPN LID", reads "QPN LID" of the test's QP from stdin, connects
 * to it, prints "ready"; then echoes. Before it echoes message number
 * ADD_AFTER it adds TAG to the list with a buffer of BYTES (reporting the
 * unexpected messages it handled, IBV_OPS_TM_SYNC; no completion), after
 * 20 ms of polls its device runs in (lending the SRQ's next receive
 * again) and before 20 ms more (executing the add), so that the test's
 * next message of that tag finds the entry. A message completed as unexpected (IBV_WC_TM_RECV without
 * IBV_WC_TM_MATCH: header and data in an SRQ buffer) or untagged
 * (IBV_WC_TM_NO_TAG) is sent back from there; a matched one (IBV_WC_TM_MATCH
 * and IBV_WC_TM_DATA_VALID: the data in the tag's buffer) with its header
 * made again from the completion's tag. When the test closes its stdin it
 * prints "echoed N direct D unexp U notag T matched M" (D: the messages
 * its device model received by direct delivery) and exits 0; any failed
 * or unexpected completion ends it non-zero.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include <dlfcn.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "wire/stats.h"

#include "../qp_bring_up.h"

enum { NRECV = 16, NTAGS = 16 };

static unsigned long long direct_count(void)
{
	rfemu_dev_stats_fn *fn = (rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	struct rfemu_dev_stats s = { 0 };

	if (fn)
		fn(&s, sizeof(s));
	return (unsigned long long)s.direct;
}

/* The send CQ's completions taken: 0, or -1 if one failed. */
static int sends(struct ibv_cq *scq)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(scq, 1, &wc)) == 1)
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
	return n;
}

/*
 * 20 ms of polls of the TM SRQ's CQ, on which nothing is to come: the
 * device runs in them (the poll assist), executing what was posted and
 * lending what it can lend. 0, or -1 on a completion.
 */
static int idle(struct ibv_cq_ex *cq, struct ibv_cq *scq)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (ibv_start_poll(cq, &attr) == 0) {
			ibv_end_poll(cq);
			return -1;
		}
		if (sends(scq))
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_cq *scq;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = NRECV, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.tm_cap = { .max_num_tags = NTAGS, .max_ops = 16 },
	};
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 32, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	char line[256];
	unsigned dqpn, dlid, echoed = 0, unexp = 0, notag = 0, matched = 0, add_after;
	unsigned long long tag;
	size_t bytes, size;
	uint8_t *buf;

	if (argc != 4)
		return 2;
	bytes = strtoull(argv[1], NULL, 0);
	add_after = (unsigned)strtoul(argv[2], NULL, 0);
	tag = strtoull(argv[3], NULL, 0);
	list = ibv_get_device_list(NULL);
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 3;
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq_ex(ctx, &ca);
	/* the sends' own: no CQE of theirs touches the TM SRQ's CQ */
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	/* NRECV receive buffers, one to send each from, the tag's */
	size = (2 * NRECV + 1) * bytes;
	buf = aligned_alloc(4096, size);
	if (!pd || !cq || !scq || !buf)
		return 4;
	memset(buf, 0, size);
	mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_LOCAL_WRITE);
	sa.pd = pd;
	sa.cq = ibv_cq_ex_to_cq(cq);
	srq = mr ? ibv_create_srq_ex(ctx, &sa) : NULL;
	if (!srq)
		return 4;
	ia.send_cq = scq;
	ia.recv_cq = ibv_cq_ex_to_cq(cq);
	ia.srq = srq;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		return 5;
	printf("%u %u\n", qp->qp_num, pa.lid);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "%u %u", &dqpn, &dlid) != 2)
		return 6;
	{
		const struct qpu_conn c = {
			.dqpn = dqpn, .dlid = (uint16_t)dlid, .mtu = IBV_MTU_4096,
			.rq_psn = 0x100, .sq_psn = 0x100, .max_dest_rd_atomic = 1,
			.min_rnr_timer = 1, .max_rd_atomic = 1, .timeout = 14,
			.retry_cnt = 7, .rnr_retry = 7,
		};

		if (qpu_bring_up(qp, &c))
			return 7;
	}
	for (int i = 0; i < NRECV; i++) {
		struct ibv_sge s = { (uintptr_t)(buf + (size_t)i * bytes), (uint32_t)bytes,
				     mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 },
				   *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			return 8;
	}
	printf("ready\n");
	fflush(stdout);
	fcntl(0, F_SETFL, O_NONBLOCK);
	for (;;) {
		struct ibv_poll_cq_attr attr = { 0 };
		uint8_t *out, *in;
		uint32_t len;
		int ret = ibv_start_poll(cq, &attr);
		unsigned flags;
		enum ibv_wc_opcode op;
		uint64_t id;

		if (ret == ENOENT) {
			struct pollfd p = { .fd = 0, .events = POLLIN };

			if (sends(scq))
				return 10;
			if (poll(&p, 1, 0) != 1)
				continue;
			break;		/* the test is done (EOF on stdin) */
		}
		if (ret)
			return 9;
		if (cq->status != IBV_WC_SUCCESS) {
			printf("status %d\n", cq->status);
			fflush(stdout);
			return 10;
		}
		op = ibv_wc_read_opcode(cq);
		flags = ibv_wc_read_wc_flags(cq);
		len = ibv_wc_read_byte_len(cq);
		id = cq->wr_id;
		out = buf + (size_t)(NRECV + echoed % NRECV) * bytes;
		if (op == IBV_WC_TM_RECV && (flags & IBV_WC_TM_MATCH)) {
			struct ibv_wc_tm_info ti;
			struct ibv_tmh h = { .opcode = IBV_TMH_EAGER };

			/* the header again, the data from the tag's buffer */
			ibv_wc_read_tm_info(cq, &ti);
			if (!(flags & IBV_WC_TM_DATA_VALID) || ti.tag != tag || id != 77 ||
			    len + sizeof(h) > bytes)
				return 12;
			h.tag = htobe64(ti.tag);
			h.app_ctx = htobe32(ti.priv);
			memcpy(out, &h, sizeof(h));
			memcpy(out + sizeof(h), buf + 2 * NRECV * bytes, len);
			len += sizeof(h);
			matched++;
		} else if (op == IBV_WC_TM_RECV || op == IBV_WC_TM_NO_TAG) {
			struct ibv_sge s;
			struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 }, *bad;

			in = buf + (size_t)id * bytes;
			if (id >= NRECV || len > bytes)
				return 12;
			memcpy(out, in, len);
			s.addr = (uintptr_t)in;
			s.length = (uint32_t)bytes;
			s.lkey = mr->lkey;
			if (ibv_post_srq_recv(srq, &wr, &bad))
				return 11;
			if (op == IBV_WC_TM_RECV)
				unexp++;
			else
				notag++;
		} else {
			return 13;
		}
		ibv_end_poll(cq);
		if (echoed + 1 == add_after) {
			/*
			 * The tag in the list before the test can send to it:
			 * added without a completion (no CQE takes anything
			 * back) while the SRQ's next receive is lent.
			 */
			struct ibv_sge s = { (uintptr_t)(buf + 2 * NRECV * bytes), (uint32_t)bytes,
					     mr->lkey };
			struct ibv_ops_wr wr = {
				.wr_id = 5, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_TM_SYNC,
				.tm = { .unexpected_cnt = unexp, .add = { .recv_wr_id = 77,
					.sg_list = &s, .num_sge = 1, .tag = tag, .mask = ~0ULL } },
			}, *bad;

			if (idle(cq, scq) || ibv_post_srq_ops(srq, &wr, &bad) || idle(cq, scq))
				return 14;
		}
		{
			struct ibv_sge s = { (uintptr_t)out, len, mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = 1000, .sg_list = &s, .num_sge = len ? 1 : 0,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			}, *bad;

			if (ibv_post_send(qp, &wr, &bad))
				return 11;
		}
		echoed++;
	}
	printf("echoed %u direct %llu unexp %u notag %u matched %u\n", echoed, direct_count(),
	       unexp, notag, matched);
	fflush(stdout);
	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_destroy_cq(scq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
