/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_mcast - another host for the multicast tests: one UD QP, attached
 * to a group or not, with receives posted.
 *
 *   helper_mcast MGID MLID QKEY attach|none
 *
 * MGID is 32 hex digits.  Prints "QPN", then "ready" once attached (or
 * not) with 16 receives posted, and answers lines on stdin:
 *
 *   recv N MS   wait up to MS ms for N messages; print one line per message,
 *               "msg BYTE_LEN SRC_QP GRH DGID_MATCHES TEXT", then "end COUNT"
 *   EOF         detach, exit 0
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "../qp_bring_up.h"

enum { SLOT = 256, SLOTS = 16 };

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, unsigned slot)
{
	struct ibv_sge s = { (uintptr_t)mr->addr + slot * SLOT, SLOT, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &s, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int parse_gid(const char *hex, union ibv_gid *g)
{
	if (strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		g->raw[i] = (uint8_t)b;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 4, .max_recv_wr = SLOTS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct qpu_conn c = { .qkey = 0 };
	union ibv_gid mgid;
	uint16_t mlid;
	int attach;
	char line[256];
	uint8_t *buf;

	if (argc != 5 || parse_gid(argv[1], &mgid)) {
		fprintf(stderr, "usage: helper_mcast MGID MLID QKEY attach|none\n");
		return 2;
	}
	mlid = (uint16_t)strtoul(argv[2], NULL, 0);
	c.qkey = (uint32_t)strtoul(argv[3], NULL, 0);
	attach = !strcmp(argv[4], "attach");
	list = ibv_get_device_list(NULL);
	if (!list || !list[0] || !(ctx = ibv_open_device(list[0])))
		return 1;
	buf = calloc(SLOTS, SLOT);
	if (!buf || !(pd = ibv_alloc_pd(ctx)) || !(cq = ibv_create_cq(ctx, 64, NULL, NULL, 0)) ||
	    !(mr = ibv_reg_mr(pd, buf, SLOTS * SLOT, IBV_ACCESS_LOCAL_WRITE)))
		return 1;
	ia.send_cq = ia.recv_cq = cq;
	if (!(qp = ibv_create_qp(pd, &ia)))
		return 1;
	if (qpu_bring_up(qp, &c))
		return 1;
	for (unsigned i = 0; i < SLOTS; i++)
		if (post_recv(qp, mr, i))
			return 1;
	if (attach && ibv_attach_mcast(qp, &mgid, mlid)) {
		fprintf(stderr, "helper_mcast: attach: %s\n", strerror(errno));
		return 1;
	}
	printf("%u\nready\n", qp->qp_num);
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		unsigned n, ms, got = 0;
		uint64_t end;

		if (sscanf(line, "recv %u %u", &n, &ms) != 2)
			continue;
		end = now_ms() + ms;
		while (got < n && now_ms() < end) {
			struct ibv_wc wc;
			int r = ibv_poll_cq(cq, 1, &wc);

			if (r < 0)
				return 1;
			if (!r) {
				usleep(200);
				continue;
			}
			got++;
			{
				const uint8_t *m = buf + wc.wr_id * SLOT;
				int grh = (wc.wc_flags & IBV_WC_GRH) != 0;
				int dgid_ok = grh && !memcmp(m + 24, mgid.raw, 16);
				int len = wc.byte_len > 40 ? (int)wc.byte_len - 40 : 0;

				printf("msg %u %u %d %d %.*s\n", wc.status == IBV_WC_SUCCESS ?
				       wc.byte_len : 0, wc.src_qp, grh, dgid_ok, len, m + 40);
			}
			if (post_recv(qp, mr, (unsigned)wc.wr_id))
				return 1;
		}
		printf("end %u\n", got);
		fflush(stdout);
	}
	if (attach && ibv_detach_mcast(qp, &mgid, mlid))
		return 1;
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
