/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_echo - the far end of test_direct.c: an RC QP that sends every
 * message it receives back, as a SEND with the same immediate, from a
 * buffer of its own.
 *
 *   helper_echo BYTES [srq | remote | dct]
 *
 * prints "QPN LID" ("QPN LID ADDR RKEY" with remote: its buffer, open to
 * the test's RDMA WRITEs and READs; "QPN LID ADDR RKEY KEY" with dct, where
 * QPN is a DCT's, KEY its access key, and the buffer is open to the
 * requests of any DCI that has the key), reads "QPN LID" of the test's QP
 * from stdin and
 * connects to it (dct: takes SENDs from that DCI only, and answers none),
 * posts 16 receives of BYTES each (to a shared receive queue with "srq"
 * or dct; none with remote), prints "ready"; then
 * echoes until the test closes its stdin or says anything else than, with
 * remote, "dereg" (its MR deregistered: prints "gone"), "peek OFF" (prints
 * the byte at OFF of its buffer) or "hide OFF" (the page of its buffer at
 * OFF made inaccessible, the MR left as it is: prints "hidden"), checked
 * between messages, or a
 * completion fails, and prints "echoed N direct D" (D: the messages its
 * device model received by direct delivery) before it exits 0.  Its polls
 * are ibv_poll_cq()'s, so its device runs in them (the poll assist).
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "wire/stats.h"

#include "../qp_bring_up.h"

enum { NRECV = 16 };

#define DCT_KEY	0x5ca1ab1e0ddba11ull

static struct ibv_srq *srq;

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf, size_t bytes, int i)
{
	struct ibv_sge s = { (uintptr_t)(buf + (size_t)i * bytes), (uint32_t)bytes, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1 }, *bad;

	return srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
}

/* A DCT on srq, in RTR, open to RDMA WRITEs and READs: NULL on failure. */
static struct ibv_qp *create_dct(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq, .srq = srq, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = DCT_KEY },
	};
	struct ibv_port_attr pa;
	struct ibv_qp_attr m = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = mlx5dv_create_qp(ctx, &a, &dv);

	if (!qp || ibv_query_port(ctx, 1, &pa) ||
	    ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return NULL;
	memset(&m, 0, sizeof(m));
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_4096;
	m.min_rnr_timer = 1;
	m.ah_attr.port_num = 1;
	m.ah_attr.is_global = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_MIN_RNR_TIMER))
		return NULL;
	return qp;
}

static unsigned long long direct_count(void)
{
	rfemu_dev_stats_fn *fn = (rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	struct rfemu_dev_stats s = { 0 };

	if (fn)
		fn(&s, sizeof(s));
	return (unsigned long long)s.direct;
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
		.cap = { .max_send_wr = 32, .max_recv_wr = NRECV, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	char line[256];
	unsigned dqpn, dlid, echoed = 0;
	size_t bytes;
	uint8_t *buf;
	bool dct = argc == 3 && !strcmp(argv[2], "dct");
	bool remote = dct || (argc == 3 && !strcmp(argv[2], "remote"));
	int access = remote ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0;

	if (argc != 2 && (argc != 3 || (strcmp(argv[2], "srq") && !remote)))
		return 2;
	bytes = strtoull(argv[1], NULL, 0);
	list = ibv_get_device_list(NULL);
	ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	if (!ctx || ibv_query_port(ctx, 1, &pa))
		return 3;
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	/* NRECV receive buffers, then one to send each from */
	buf = aligned_alloc(4096, 2 * NRECV * bytes);
	if (!pd || !cq || !buf)
		return 4;
	memset(buf, 0, 2 * NRECV * bytes);
	mr = ibv_reg_mr(pd, buf, 2 * NRECV * bytes, IBV_ACCESS_LOCAL_WRITE | access);
	ia.send_cq = ia.recv_cq = cq;
	if (argc == 3 && (!remote || dct)) {	/* a DCT needs an SRQ too */
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = NRECV, .max_sge = 1 } };

		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			return 4;
		ia.srq = srq;
		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
	}
	qp = !mr ? NULL : dct ? create_dct(ctx, pd, cq) : ibv_create_qp(pd, &ia);
	if (!qp)
		return 5;
	if (dct)
		printf("%u %u %llu %u %llu\n", qp->qp_num, pa.lid,
		       (unsigned long long)(uintptr_t)buf, mr->rkey, DCT_KEY);
	else if (remote)
		printf("%u %u %llu %u\n", qp->qp_num, pa.lid,
		       (unsigned long long)(uintptr_t)buf, mr->rkey);
	else
		printf("%u %u\n", qp->qp_num, pa.lid);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin) || sscanf(line, "%u %u", &dqpn, &dlid) != 2)
		return 6;
	{
		const struct qpu_conn c = {
			.dqpn = dqpn, .dlid = (uint16_t)dlid, .mtu = IBV_MTU_4096,
			.access = access,
			.rq_psn = 0x100, .sq_psn = 0x100, .max_dest_rd_atomic = remote ? 16 : 1,
			.min_rnr_timer = 1, .max_rd_atomic = 1, .timeout = 14,
			.retry_cnt = 7, .rnr_retry = 7,
		};

		if (!dct && qpu_bring_up(qp, &c))
			return 7;
	}
	for (int i = 0; i < NRECV && (!remote || dct); i++)	/* remote: one-sided only */
		if (post_recv(qp, mr, buf, bytes, i))
			return 8;
	printf("ready\n");
	fflush(stdout);
	fcntl(0, F_SETFL, O_NONBLOCK);
	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return 9;
		if (n == 0) {
			struct pollfd p = { .fd = 0, .events = POLLIN };
			unsigned off;

			if (poll(&p, 1, 0) != 1)
				continue;
			/* remote: "dereg" takes the MR away, "peek OFF" prints a byte, "hide OFF" */
			if (remote && fgets(line, sizeof(line), stdin)) {
				if (!strcmp(line, "dereg\n") && mr) {
					printf(ibv_dereg_mr(mr) ? "failed\n" : "gone\n");
					mr = NULL;
				} else if (sscanf(line, "peek %u", &off) == 1 &&
					   off < 2 * NRECV * bytes) {
					printf("%u\n", buf[off]);
				} else if (sscanf(line, "hide %u", &off) == 1 &&
					   off < 2 * NRECV * bytes) {
					printf(mprotect(buf + (off & ~4095u), 4096, PROT_NONE) ?
					       "failed\n" : "hidden\n");
				} else {
					break;
				}
				fflush(stdout);
				continue;
			}
			break;		/* the test is done (EOF on stdin) */
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("status %d\n", wc.status);
			fflush(stdout);
			return 10;
		}
		if (wc.opcode == IBV_WC_RECV && dct) {
			/* the test's DCI, each message's first byte its length's */
			if (wc.src_qp != dqpn || wc.qp_num != qp->qp_num ||
			    (wc.byte_len && buf[wc.wr_id * bytes] != (uint8_t)wc.byte_len) ||
			    post_recv(qp, mr, buf, bytes, (int)wc.wr_id))
				return 12;
			echoed++;
		} else if (wc.opcode == IBV_WC_RECV) {
			int i = (int)wc.wr_id;
			uint8_t *out = buf + (size_t)(NRECV + i) * bytes;
			struct ibv_sge s = { (uintptr_t)out, wc.byte_len, mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = 1000, .sg_list = &s, .num_sge = wc.byte_len ? 1 : 0,
				.opcode = (wc.wc_flags & IBV_WC_WITH_IMM) ? IBV_WR_SEND_WITH_IMM :
									   IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED, .imm_data = wc.imm_data,
			}, *bad;

			memcpy(out, buf + (size_t)i * bytes, wc.byte_len);
			if (post_recv(qp, mr, buf, bytes, i) || ibv_post_send(qp, &wr, &bad))
				return 11;
			echoed++;
		}
	}
	printf("echoed %u direct %llu\n", echoed, direct_count());
	fflush(stdout);
	ibv_destroy_qp(qp);
	if (srq)
		ibv_destroy_srq(srq);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}
