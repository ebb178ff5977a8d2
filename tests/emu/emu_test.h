/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * emu_test.h - shared fixtures for the emulated-HCA tests.  They use only
 * the public libibverbs / mlx5dv API, and run under build/rfemu.
 */
#ifndef RDMAFAST_TESTS_EMU_TEST_H
#define RDMAFAST_TESTS_EMU_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

static inline struct ibv_context *et_open(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = 0;

	list = ibv_get_device_list(&n);
	cr_assert(list, "ibv_get_device_list: %s (run under build/rfemu)", strerror(errno));
	cr_assert_geq(n, 1, "no device: run under build/rfemu");
	ctx = ibv_open_device(list[0]);
	cr_assert(ctx, "ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	return ctx;
}

/* Bring an RC/UC/XRC QP to RTS, connected to dest_qpn on our own port. */
static inline int et_qp_to_rts(struct ibv_qp *qp, uint32_t dest_qpn, uint16_t dlid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	/* IB spec table 94: what each type needs for RTR and RTS */
	bool responder = qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_RECV;
	bool requester = qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_XRC_SEND;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (responder ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x456;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (requester ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0) |
			     (qp->qp_type == IBV_QPT_XRC_RECV ? IBV_QP_TIMEOUT : 0));
}

/* Path of a helper program built beside the tests. */
static inline void et_helper_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("RFEMU_TEST_HELPER_DIR");
	char self[PATH_MAX / 2];
	ssize_t n;

	if (dir && *dir) {
		snprintf(buf, len, "%s/%s", dir, name);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert_gt(n, 0);
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(buf, len, "%s/%s", self, name);
}

/*
 * Run a helper (inheriting LD_PRELOAD, so it is another emulated host),
 * capture its stdout, and wait at most `secs` seconds.  Returns its exit
 * status, or -1 on timeout.
 */
static inline int et_run_helper(char *out, size_t outlen, int secs,
				char *const argv[])
{
	char path[PATH_MAX];
	int pfd[2], status = 0;
	size_t got = 0;
	pid_t pid;

	et_helper_path(path, sizeof(path), argv[0]);
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		alarm((unsigned)secs);
		execv(path, argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + got, outlen - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	out[got] = 0;
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return -1;
	return WEXITSTATUS(status);
}

#endif /* RDMAFAST_TESTS_EMU_TEST_H */
