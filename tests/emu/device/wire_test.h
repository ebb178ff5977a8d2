/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire_test.h - fixtures for the fabric and transport tests: the model's
 * counters, RC connections with chosen limits, and a peer process driven
 * over pipes (tests/emu/helper_wire.c).
 */
#ifndef RDMAFAST_TESTS_WIRE_TEST_H
#define RDMAFAST_TESTS_WIRE_TEST_H

#include <dlfcn.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "dev_test.h"
#include "wire/stats.h"

/* The counters of this process's device model (librfemu.so is preloaded). */
static inline struct rfemu_dev_stats wt_stats(void)
{
	rfemu_dev_stats_fn *fn = (rfemu_dev_stats_fn *)dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	struct rfemu_dev_stats s;

	cr_assert(fn, "librfemu.so has no rfemu_dev_stats()");
	memset(&s, 0, sizeof(s));
	fn(&s, sizeof(s));
	return s;
}

/*
 * The address of host's wire socket, as any process of the user can reach
 * it.  The state directory is found as emu/subnet/subnet.c finds it:
 * $RFEMU_STATE_DIR, else $XDG_RUNTIME_DIR/rfemu, else /tmp/rfemu-$UID (CI
 * sets none of them).
 */
static inline struct sockaddr_un wt_wire_addr(unsigned host)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("RFEMU_STATE_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (dir && *dir)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/wire.%u", dir, host);
	else if (xdg && *xdg)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/rfemu/wire.%u", xdg, host);
	else
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/rfemu-%u/wire.%u",
			 (unsigned)getuid(), host);
	return sa;
}

/* A connection to the wire socket of the host of lid. */
static inline int wt_wire_socket(uint16_t lid)
{
	/* LID = host * 8 + device * 2 + port - 1 (emu/README.md) */
	struct sockaddr_un sa = wt_wire_addr(lid / 8u);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0,
		     "connect %s: %s", sa.sun_path, strerror(errno));
	return fd;
}

struct wt_conn {
	uint32_t	dqpn;
	uint16_t	dlid;
	uint8_t		max_rd_atomic;
	uint8_t		max_dest_rd_atomic;
	uint8_t		timeout;
	uint8_t		retry_cnt;
	const union ibv_gid *dgid;	/* non-NULL: a global path (GRH), SGID index 0 */
};

/* RESET -> RTS for an RC QP, every remote access allowed. */
static inline int wt_connect(struct ibv_qp *qp, const struct wt_conn *c)
{
	const struct qpu_conn q = {
		.dqpn = c->dqpn, .dlid = c->dlid, .dgid = c->dgid, .mtu = IBV_MTU_4096,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rq_psn = 0x100, .sq_psn = 0x100,
		.max_dest_rd_atomic = c->max_dest_rd_atomic, .min_rnr_timer = 1,
		.max_rd_atomic = c->max_rd_atomic, .timeout = c->timeout,
		.retry_cnt = c->retry_cnt, .rnr_retry = 7,
	};

	return qpu_bring_up(qp, &q);
}

static inline struct ibv_qp *wt_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					  uint32_t max_send_wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = max_send_wr,
			.max_recv_wr = 16,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

static inline enum ibv_qp_state wt_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	cr_assert_eq(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

/* A peer host: helper_wire with its stdin and stdout on pipes. */
struct wt_peer {
	pid_t		pid;
	FILE		*in;		/* its stdin */
	FILE		*out;		/* its stdout */
};

static inline void wt_peer_start(struct wt_peer *p, char *const argv[])
{
	char path[PATH_MAX];
	int to[2], from[2];

	et_helper_path(path, sizeof(path), argv[0]);
	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	p->pid = fork();
	cr_assert_geq(p->pid, 0);
	if (p->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		alarm(120);	/* never outlive a stuck test */
		execv(path, argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	p->in = fdopen(to[1], "w");
	p->out = fdopen(from[0], "r");
	cr_assert(p->in && p->out);
}

/* One line from the peer (without the newline), or fail. */
static inline void wt_peer_line(struct wt_peer *p, char *buf, int len)
{
	cr_assert(fgets(buf, len, p->out), "the peer said nothing");
	buf[strcspn(buf, "\n")] = 0;
}

static inline void wt_peer_say(struct wt_peer *p, const char *line)
{
	fprintf(p->in, "%s\n", line);
	fflush(p->in);
}

/* Close its stdin (it exits) and reap it; returns its exit status, -1 if killed. */
static inline int wt_peer_end(struct wt_peer *p)
{
	int status = 0;

	fclose(p->in);
	fclose(p->out);
	cr_assert_eq(waitpid(p->pid, &status, 0), p->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif /* RDMAFAST_TESTS_WIRE_TEST_H */
