/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_wire - the far end of the two-process transport tests: an RC QP
 * over a registered buffer that the test reads, writes and adds to.
 *
 *   helper_wire target BYTES
 *
 * prints "QPN LID RKEY ADDR", reads "QPN LID" of the test's QP from stdin
 * and connects to it (max_dest_rd_atomic and max_rd_atomic 16), prints
 * "ready"; then answers lines on stdin:
 *
 *   stats   "drop_fault drop_link deferred drop_source" of its device model
 *   EOF     exit 0
 *
 * Its own application thread does nothing else: the device model answers.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "wire/stats.h"

#include "../qp_bring_up.h"

static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, uint16_t dlid)
{
	const struct qpu_conn c = {
		.dqpn = dqpn, .dlid = dlid, .mtu = IBV_MTU_4096,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rq_psn = 0x100, .sq_psn = 0x100,
		.max_dest_rd_atomic = 16, .min_rnr_timer = 1,
		.max_rd_atomic = 16, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qpu_bring_up(qp, &c);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	char line[256];
	unsigned dqpn, dlid;
	size_t bytes;
	void *buf;

	if (argc != 3 || strcmp(argv[1], "target"))
		return 2;
	bytes = strtoull(argv[2], NULL, 0);
	list = ibv_get_device_list(NULL);
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 3;
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = aligned_alloc(4096, bytes);
	if (!pd || !cq || !buf)
		return 4;
	memset(buf, 0, bytes);
	mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ia.send_cq = ia.recv_cq = cq;
	qp = mr ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp)
		return 5;
	printf("%u %u %u %llu\n", qp->qp_num, pa.lid, mr->rkey,
	       (unsigned long long)(uintptr_t)buf);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "%u %u", &dqpn, &dlid) != 2)
		return 6;
	if (connect_qp(qp, dqpn, (uint16_t)dlid))
		return 7;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "stats", 5)) {
			rfemu_dev_stats_fn *fn =
				(rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
			struct rfemu_dev_stats s = { 0 };

			if (fn)
				fn(&s, sizeof(s));
			printf("%llu %llu %llu %llu\n", (unsigned long long)s.drop_fault,
			       (unsigned long long)s.drop_link, (unsigned long long)s.deferred,
			       (unsigned long long)s.drop_source);
			fflush(stdout);
		}
	}
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
