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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "../on_roce.h"	/* test_rerun_on_roce() */
#include "qp_bring_up.h"

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

/*
 * A raw RDMA_VERBS_IOCTL call, for what libibverbs and libmlx5 never send:
 * the header and up to ET_CALL_ATTRS attributes (struct ib_uverbs_ioctl_hdr
 * and struct ib_uverbs_attr of rdma-core's rdma_user_ioctl_cmds.h).
 */
#define ET_CALL_ATTRS	16

struct et_call {
	struct ib_uverbs_ioctl_hdr	hdr;
	struct ib_uverbs_attr		attrs[ET_CALL_ATTRS];
};

static inline void et_call_init(struct et_call *c, uint16_t object, uint16_t method)
{
	memset(c, 0, sizeof(*c));
	c->hdr.object_id = object;
	c->hdr.method_id = method;
	c->hdr.driver_id = RDMA_DRIVER_MLX5;
	c->hdr.length = sizeof(c->hdr);
}

/*
 * The next attribute, with its flags (UVERBS_ATTR_F_MANDATORY or 0, an
 * optional one the kernel ignores when it does not know it).  Up to 8
 * bytes of an input travel in data itself, more behind a pointer.
 */
static inline struct ib_uverbs_attr *et_attr_flags(struct et_call *c, uint16_t id,
						   uint16_t flags, uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a;

	cr_assert_lt(c->hdr.num_attrs, ET_CALL_ATTRS, "more attributes than struct et_call holds");
	a = &c->attrs[c->hdr.num_attrs++];
	a->attr_id = id;
	a->flags = flags;
	a->len = len;
	a->data = data;
	c->hdr.length = (uint16_t)(sizeof(c->hdr) + c->hdr.num_attrs * sizeof(*a));
	return a;
}

/* the next attribute, mandatory */
static inline struct ib_uverbs_attr *et_attr(struct et_call *c, uint16_t id, uint16_t len,
					     uint64_t data)
{
	return et_attr_flags(c, id, UVERBS_ATTR_F_MANDATORY, len, data);
}

/* the call on a command fd: 0 or the errno */
static inline int et_call_on(int fd, struct et_call *c)
{
	return ioctl(fd, RDMA_VERBS_IOCTL, &c->hdr) ? errno : 0;
}

/*
 * The call at `hdr` (a header and its attributes, as et_call or a longer
 * array lays them out) made from a copy whose attributes from `first_ro`
 * on are in a read-only page: the kernel reads them, but cannot flag an
 * output there written (uverbs_set_output()'s put_user()), so the call
 * fails after its method ran.  The attributes come back into `hdr` (a NEW
 * attribute's handle in .data): 0 or the errno.
 */
static inline int et_call_ro_from(int fd, struct ib_uverbs_ioctl_hdr *hdr, unsigned first_ro)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t writable = sizeof(*hdr) + first_ro * sizeof(struct ib_uverbs_attr);
	uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ib_uverbs_ioctl_hdr *copy = (void *)(map + page - writable);
	int ret;

	cr_assert_neq(map, MAP_FAILED);
	memcpy(copy, hdr, hdr->length);
	cr_assert_eq(mprotect(map + page, page, PROT_READ), 0);
	ret = ioctl(fd, RDMA_VERBS_IOCTL, copy) ? errno : 0;
	memcpy(hdr, copy, hdr->length);
	munmap(map, 2 * page);
	return ret;
}

/*
 * A suite whose tests share one context and one PD: defines `ctx`, `pd`
 * and TestSuite(name) with their setup and teardown (which checks that
 * the tests freed everything they put on the PD).
 */
#define ET_CTX_PD_SUITE(name)						\
	static struct ibv_context *ctx;					\
	static struct ibv_pd *pd;					\
	static void et_suite_setup(void)				\
	{								\
		ctx = et_open();					\
		pd = ibv_alloc_pd(ctx);					\
		cr_assert(pd);						\
	}								\
	static void et_suite_teardown(void)				\
	{								\
		cr_assert_eq(ibv_dealloc_pd(pd), 0);			\
		cr_assert_eq(ibv_close_device(ctx), 0);			\
	}								\
	TestSuite(name, .init = et_suite_setup, .fini = et_suite_teardown)

/*
 * Bring an RC/UC/XRC QP to RTS (an XRC target too), connected to dest_qpn
 * on our own port. Returns 0 or the errno value of the refused transition.
 */
static inline int et_qp_to_rts(struct ibv_qp *qp, uint32_t dest_qpn, uint16_t dlid)
{
	const struct qpu_conn c = {
		.dqpn = dest_qpn, .dlid = dlid, .mtu = IBV_MTU_1024,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.rq_psn = 0x123, .sq_psn = 0x456,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.max_rd_atomic = 4, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qpu_bring_up(qp, &c);
}

/*
 * mlx5dv_create_qp() of a DCI with 2^log_streams DCI streams, 2^log_errored
 * of which may be in error; errno cleared first, so a refusal's is its own.
 */
static inline struct ibv_qp *et_streams_dci(struct ibv_context *ctx, struct ibv_pd *pd,
					     struct ibv_cq *cq, uint8_t log_streams,
					     uint8_t log_errored)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS,
		.dc_init_attr = {
			.dc_type = MLX5DV_DCTYPE_DCI,
			.dci_streams = { .log_num_concurent = log_streams,
					 .log_num_errored = log_errored },
		},
	};

	errno = 0;
	return mlx5dv_create_qp(ctx, &a, &dv);
}

/* The QP's state, as ibv_query_qp() reports it. */
static inline enum ibv_qp_state et_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
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

/* What et_run() does beyond collecting the child's stdout. */
enum {
	ET_RUN_STDERR	= 1 << 0,	/* its stderr too */
	ET_RUN_TOOL	= 1 << 1,	/* not ours: see et_tool_env() */
};

/*
 * In a child that is about to exec a program that is not ours (ibstat,
 * perftest, ucx_info, ...): under make sanitize, whose libasan is preloaded
 * into every program, the tool's own leaks are not the emulator's to report
 * (the emulator inside it stays checked for the rest).
 */
static inline void et_tool_env(void)
{
	const char *a = getenv("ASAN_OPTIONS");
	char buf[1024];

	if (a && snprintf(buf, sizeof(buf), "%s:detect_leaks=0", a) < (int)sizeof(buf))
		setenv("ASAN_OPTIONS", buf, 1);
}

/* A wait status as a shell shows it: the exit code, or 128 + the signal. */
static inline int et_status(int st)
{
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/*
 * Run file (NULL: argv[0]; looked up in PATH unless it holds a '/') with
 * argv as a child, which inherits LD_PRELOAD and so is another host of the
 * emulated subnet.  SIGALRM ends it after secs (that catches a hang, not a
 * slow machine: keep secs generous).  What it prints goes into out (the
 * tail of a longer output).  Returns its status as et_status() gives it,
 * 127 if it could not be executed.
 */
static inline int et_run(const char *file, char *const argv[], unsigned flags,
			 char *out, size_t len, unsigned secs)
{
	int pfd[2], st = 0;
	size_t got = 0;
	pid_t pid;

	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		if (flags & ET_RUN_STDERR)
			dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		alarm(secs);
		if (flags & ET_RUN_TOOL)
			et_tool_env();
		execvp(file ? file : argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + got, len - 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == len - 1)
			got = 0;	/* keep the tail of long outputs */
	}
	out[got] = 0;
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return et_status(st);
}

/*
 * This test binary again as another card (RFEMU_PART_ID part; link layer
 * ll, NULL for the card's default), running only the tests that filter
 * names: the profile is read once when the emulator loads, so a test of
 * another card needs a process of its own.  Asserts that they all pass;
 * ET_RERUN_PART tells them they run as that card on purpose (a test that
 * would skip on a card without a feature fails instead, et_need()).
 */
static inline void et_rerun_as(const char *part, const char *ll, const char *filter)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setenv("RFEMU_PART_ID", part, 1);
		setenv("ET_RERUN_PART", part, 1);
		if (ll)
			setenv("RFEMU_LINK_LAYER", ll, 1);
		else
			unsetenv("RFEMU_LINK_LAYER");
		/* a fresh Criterion runner, not one of this runner's workers */
		unsetenv("BXFI_MAP");
		execl("/proc/self/exe", "rerun", "--filter", filter, "--jobs", "1",
		      (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "%s as part %s %s: status %#x", filter, part, ll ? ll : "", status);
}

/*
 * A feature the test needs: skipped without it, but failed when
 * et_rerun_as() ran the test as a card that must have it.
 */
#define et_need(have, what)						\
	do {								\
		const char *et_part_ = getenv("ET_RERUN_PART");		\
									\
		cr_assert((have) || !et_part_, "part %s: no %s", et_part_, (what)); \
		if (!(have))						\
			cr_skip_test("no %s on this card", (what));	\
	} while (0)

/* et_run() of a helper program built beside the tests, argv[0] its name. */
static inline int et_run_helper(char *out, size_t outlen, unsigned secs,
				char *const argv[])
{
	char path[PATH_MAX];

	et_helper_path(path, sizeof(path), argv[0]);
	return et_run(path, argv, 0, out, outlen, secs);
}

/*
 * Whether a TCP socket listens on @port (state 0A in /proc/net/tcp or tcp6).
 * Connecting to find out would take the server's only accept().
 */
static inline bool et_tcp_listening(int port)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	bool found = false;

	for (unsigned t = 0; t < 2 && !found; t++) {
		FILE *f = fopen(tables[t], "r");
		char line[512];

		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned lport, state;

			/* "sl: local_address rem_address st ..." */
			found = sscanf(line, " %*s %*[0-9A-Fa-f]:%x %*s %x", &lport, &state) == 2 &&
				lport == (unsigned)port && state == 0x0A;
		}
		fclose(f);
	}
	return found;
}

/*
 * Wait, at most 30 s, until the server @srv listens on TCP @port or has
 * exited (left to be reaped): a client started on a timer gave up before a
 * loaded machine's server listened.
 */
static inline void et_wait_listening(int port, pid_t srv)
{
	for (int i = 0; i < 600 && !et_tcp_listening(port); i++) {
		siginfo_t si = { 0 };

		if (waitid(P_PID, (id_t)srv, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == srv)
			return;
		usleep(50000);
	}
}

#endif /* RDMAFAST_TESTS_EMU_TEST_H */
