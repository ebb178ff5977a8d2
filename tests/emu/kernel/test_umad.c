/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_umad.c - /dev/infiniband/umadN through its raw ABI
 * (<rdma/ib_user_mad.h>), as libibumad drives it: agents, the checks the
 * kernel makes of a registration and of a write() with their errnos,
 * answers from this host's SMA and PMA and from the switch's SM, reads
 * too small for the next MAD, timeouts, readiness by poll().
 */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include <rdma/ib_user_mad.h>
#include <rdma/rdma_user_ioctl.h>

#include "emu_test.h"
#include "umad_test.h"

#define HDR	sizeof(struct ib_user_mad_hdr)

static int umad_open(int flags)
{
	int fd = open("/dev/infiniband/umad0", O_RDWR | flags);

	cr_assert_geq(fd, 0, "open umad0: %s", strerror(errno));
	cr_assert_eq(ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL), 0);
	return fd;
}

static int reg(int fd, uint8_t qpn, uint8_t mclass, uint8_t version, uint8_t rmpp)
{
	struct ib_user_mad_reg_req r = {
		.qpn = qpn, .mgmt_class = mclass, .mgmt_class_version = version,
		.rmpp_version = rmpp,
	};

	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r))
		return -errno;
	return (int)r.id;
}

static uint16_t my_lid(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/class/infiniband/mlx5_0/ports/1/lid", "r");

	cr_assert(f);
	cr_assert(fgets(buf, sizeof(buf), f));
	fclose(f);
	return (uint16_t)strtoul(buf, NULL, 16);
}

static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

TestSuite(umad, .timeout = 120);

Test(umad, registration_checks)
{
	int fd = umad_open(0);
	struct ib_user_mad_reg_req2 r2 = { .qpn = 1, .flags = 0x80 };
	uint32_t bad = 31;

	cr_expect_eq(reg(fd, 2, 0x04, 1, 0), -EINVAL, "QPN 2");
	cr_expect_eq(reg(fd, 1, 0x01, 1, 0), -EINVAL, "an SMP class on QP1");
	cr_expect_eq(reg(fd, 0, 0x04, 1, 0), -EINVAL, "a GMP class on QP0");
	cr_expect_eq(reg(fd, 1, 0x04, 0x83, 0), -EINVAL, "class version past MAX_MGMT_VERSION");
	cr_expect_eq(reg(fd, 1, 0x50, 1, 0), -EINVAL, "class past MAX_MGMT_CLASS");
	cr_expect_eq(reg(fd, 1, 0x30, 1, 0), -EINVAL, "vendor class without an OUI");
	cr_expect_eq(reg(fd, 1, 0x04, 1, 1), -EINVAL, "RMPP on a class without it");
	cr_expect_eq(reg(fd, 1, 0x03, 1, 2), -EINVAL, "RMPP version 2");
	/* REGISTER_AGENT2 tells which flags it knows */
	cr_expect_eq(ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &r2), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(r2.flags, IB_USER_MAD_REG_FLAGS_CAP);
	cr_expect_eq(ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL), 0, "nothing registered yet");
	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0);
	cr_assert_eq(reg(fd, 0, 0x01, 1, 0), 1);
	cr_expect_eq(ioctl(fd, IB_USER_MAD_ENABLE_PKEY, NULL), -1, "too late: agents exist");
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad), -1);
	cr_expect_eq(errno, EINVAL);
	bad = 1;
	cr_expect_eq(ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad), 0);
	cr_expect_eq(ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad), -1, "twice");
	cr_expect_eq(ioctl(fd, _IO(RDMA_IOCTL_MAGIC, 0x09), NULL), -1);
	cr_expect_eq(errno, ENOTTY);
	close(fd);
}

Test(umad, write_checks)
{
	volatile uintptr_t unmapped = 16;	/* the first page is never mapped */
	int fd = umad_open(O_NONBLOCK);
	struct ut_mad m;

	cr_assert_eq(reg(fd, 1, 0, 0, 0), 0);
	ut_get(&m, 0, 0x04, 0x0001, my_lid(), 1000, 1);
	cr_expect_eq(write(fd, &m, HDR + 35), -1, "shorter than the RMPP header");
	cr_expect_eq(errno, EINVAL);
	{
		uint8_t big[sizeof(m) + 1] = { 0 };

		memcpy(big, &m, sizeof(m));
		cr_expect_eq(write(fd, big, sizeof(big)), -1, "longer than one MAD, no RMPP");
		cr_expect_eq(errno, EINVAL);
	}
	m.h.id = 32;
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "agent id past IB_UMAD_MAX_AGENTS");
	cr_expect_eq(errno, EINVAL);
	m.h.id = 5;
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "an agent never registered");
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(write(fd, (void *)unmapped, sizeof(m)), -1);
	cr_expect_eq(errno, EFAULT);
	/* a directed-route SMP must start at hop 0 out of this port */
	cr_assert_eq(reg(fd, 0, 0, 0, 0), 1);
	ut_get(&m, 1, 0x81, 0x0011, 0xffff, 1000, 2);
	memset(m.mad + 32, 0xff, 4);		/* DR SLID, DR DLID permissive */
	m.mad[6] = 1;				/* hop pointer 1 */
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "hop pointer not 0");
	cr_expect_eq(errno, EINVAL);
	m.mad[6] = 0;
	m.mad[7] = 1;
	m.mad[128 + 1] = 2;			/* out of port 2: not ours */
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "first hop not this port");
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(read(fd, &m, sizeof(m)), -1, "nothing queued");
	cr_expect_eq(errno, EAGAIN);
	close(fd);
	/* the file's access mode holds, as the VFS checks it */
	fd = open("/dev/infiniband/umad0", O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(reg(fd, 1, 0, 0, 0), 0);
	ut_get(&m, 0, 0x04, 0x0001, my_lid(), 1000, 9);
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "read-only");
	cr_expect_eq(errno, EBADF);
	close(fd);
}

Test(umad, pma_and_sma_answer)
{
	int fd = umad_open(0);
	uint16_t lid = my_lid();
	struct ut_mad m, r;

	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0);
	cr_assert_eq(reg(fd, 0, 0x01, 1, 0), 1);
	ut_get(&m, 0, 0x04, 0x0001, lid, 5000, 0x1234);	/* ClassPortInfo */
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m), "%s", strerror(errno));
	cr_assert(readable(fd, 10000));
	/* a buffer short of the MAD is EINVAL and the MAD stays queued */
	cr_expect_eq(read(fd, &r, HDR + 100), -1);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(read(fd, &r, HDR - 1), -1);
	cr_expect_eq(errno, EINVAL);
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r));
	cr_expect_eq(r.h.id, 0);
	cr_expect_eq(r.h.status, 0);
	cr_expect_eq(r.h.length, sizeof(r));
	cr_expect_eq(be16toh(r.h.lid), lid);
	cr_expect_eq(be32toh(r.h.qpn), 1);
	cr_expect_eq(r.mad[3], 0x81, "GetResp");
	cr_expect_eq(r.mad[4] | r.mad[5], 0, "status");
	cr_expect_eq(memcmp(r.mad + 12, m.mad + 12, 4), 0, "the TID's lower half kept");
	cr_expect_neq(memcmp(r.mad + 8, "\0\0\0\0", 4), 0, "the upper half names the agent");
	cr_expect((r.mad[64 + 2] << 8 | r.mad[64 + 3]) & 0x0200, "64-bit counters in the CapabilityMask");

	/* NodeInfo from the SMA: a CA, this device's GUID */
	ut_get(&m, 1, 0x01, 0x0011, lid, 5000, 2);
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m));
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r));
	cr_expect_eq(r.h.id, 1);
	cr_expect_eq(be32toh(r.h.qpn), 0);
	cr_expect_eq(r.mad[64 + 2], 1, "NodeType CA");
	cr_expect_eq(r.mad[64 + 30] << 8 | r.mad[64 + 31], 0x101b, "DeviceID");

	/* a class no agent takes: the node answers "unsupported" */
	ut_get(&m, 0, 0x22, 0x0001, lid, 5000, 3);
	m.h.id = 0;
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m));
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r));
	cr_expect_eq(r.mad[4] << 8 | r.mad[5], 0x000c);

	/* the SM on the switch at LID 1: SMInfo says MASTER */
	ut_get(&m, 1, 0x01, 0x0020, 1, 5000, 4);
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m));
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r));
	cr_expect_eq(r.mad[4] | r.mad[5], 0);
	cr_expect_eq(r.mad[64 + 20] & 0xf, 3, "SMState MASTER");
	close(fd);
}

Test(umad, unanswered_requests_time_out)
{
	int fd = umad_open(O_NONBLOCK);
	struct ut_mad m, r;

	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0);
	/* LID 0x1ff8: host 1023's last port, which nobody holds here */
	ut_get(&m, 0, 0x04, 0x0001, 0x1fff, 600000, 6);
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m), "%s", strerror(errno));
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "the same TID while it waits");
	cr_expect_eq(errno, EINVAL);
	ut_get(&m, 0, 0x04, 0x0001, 0x1fff, 50, 7);
	m.h.retries = 1;
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m), "%s", strerror(errno));
	cr_assert(readable(fd, 60000), "no ETIMEDOUT within 60 s");
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)(HDR + 24));
	cr_expect_eq(r.h.status, ETIMEDOUT);
	cr_expect_eq(r.h.id, 0);
	cr_expect_eq(memcmp(r.mad + 12, m.mad + 12, 4), 0, "the request's TID");
	/* no timeout: nothing comes back, not even an answer */
	ut_get(&m, 0, 0x04, 0x0001, my_lid(), 0, 8);
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m));
	cr_expect_not(readable(fd, 200));
	close(fd);
}

/*
 * The kernel keeps what a file has not read on a list (queue_packet()),
 * far longer than a socket's buffer: a burst of answers written before
 * the first read all arrive, in order.
 */
Test(umad, a_burst_of_answers_is_kept)
{
	enum { N = 2000 };
	int fd = umad_open(O_NONBLOCK);
	uint16_t lid = my_lid();
	unsigned got = 0, timeouts = 0;
	struct ut_mad m, r;

	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0);
	for (uint32_t i = 0; i < N; i++) {
		ut_get(&m, 0, 0x04, 0x0001, lid, 5000, i);
		cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m),
			     "request %u: %s", i, strerror(errno));
	}
	while (got + timeouts < N && readable(fd, 10000)) {
		cr_assert_gt(read(fd, &r, sizeof(r)), 0, "%s", strerror(errno));
		if (r.h.status) {
			timeouts++;
			continue;
		}
		cr_assert_eq(be32toh(*(uint32_t *)(r.mad + 12)), got, "in order");
		got++;
	}
	cr_expect_eq(got, N, "%u answers, %u timeouts of %u", got, timeouts, N);
	cr_expect_not(readable(fd, 0), "nothing more");
	close(fd);
}

Test(umad, issm_is_exclusive)
{
	int a, b;

	if (geteuid() != 0) {
		cr_expect_eq(open("/dev/infiniband/issm0", O_RDWR), -1);
		cr_expect_eq(errno, EACCES);
		return;
	}
	a = open("/dev/infiniband/issm0", O_RDWR | O_NONBLOCK);
	cr_assert_geq(a, 0, "%s", strerror(errno));
	b = open("/dev/infiniband/issm0", O_RDWR | O_NONBLOCK);
	cr_expect_eq(b, -1, "one SM per port");
	cr_expect_eq(errno, EAGAIN);
	close(a);
	b = open("/dev/infiniband/issm0", O_RDWR | O_NONBLOCK);
	cr_expect_geq(b, 0, "free again after close");
	close(b);
}

/*
 * A umad file is a descriptor like any other: in a process that holds
 * thousands of files it is numbered above 4096 and still answers ioctl(),
 * write() and read() as the kernel's does.
 */
Test(umad, a_file_numbered_above_4096)
{
	struct rlimit rl;
	int fd, base, last;
	struct ut_mad m, r;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 4200) {
		rl.rlim_cur = 4200;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;	/* root may raise it */
		if (setrlimit(RLIMIT_NOFILE, &rl))
			cr_skip_test("RLIMIT_NOFILE stays below 4200: %s", strerror(errno));
	}
	/* every descriptor below 4096 taken: the next open gets 4096 or above */
	base = open("/dev/null", O_RDONLY);
	cr_assert_geq(base, 0);
	while ((last = dup(base)) >= 0 && last < 4096)
		;
	cr_assert_geq(last, 4096, "dup: %s", strerror(errno));
	close(last);
	fd = umad_open(0);
	cr_assert_geq(fd, 4096);
	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0);
	ut_get(&m, 0, 0x04, 0x0001, my_lid(), 600000, 0x4096);
	cr_assert_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m), "%s", strerror(errno));
	cr_assert_eq(read(fd, &r, sizeof(r)), (ssize_t)sizeof(r), "%s", strerror(errno));
	cr_expect_eq(r.mad[3], 0x81, "GetResp");
	cr_expect_eq(memcmp(r.mad + 12, m.mad + 12, 4), 0, "the TID's lower half kept");
	cr_expect_eq(close(fd), 0);
	for (fd = base; fd < 4096; fd++)
		close(fd);
}

/*
 * RoCE ports have umad and issm files (ib_umad_add_one() makes them for
 * every port whose core caps have IB_MAD, which RoCE's have for the CM),
 * but no QP0: an SMI agent is EPROTONOSUPPORT (ib_register_mad_agent()),
 * a GSI agent registers, and a MAD without a GRH is EINVAL, as
 * rdma_create_user_ah() refuses a RoCE address without one.  Run by
 * umad::on_roce, this binary again with RFEMU_LINK_LAYER=eth.
 */
Test(umad_roce, gsi_only)
{
	struct ibv_context *ctx = et_open();
	struct ibv_port_attr pa;
	struct ut_mad m;
	int fd;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
	if (pa.link_layer != IBV_LINK_LAYER_ETHERNET)
		cr_skip_test("InfiniBand: run by umad::on_roce");
	fd = umad_open(0);
	cr_expect_eq(reg(fd, 0, 0x01, 1, 0), -EPROTONOSUPPORT, "an SMI agent without QP0");
	cr_expect_eq(reg(fd, 0, 0, 0, 0), -EPROTONOSUPPORT, "an SMI sender without QP0");
	cr_expect_eq(reg(fd, 0, 0x04, 1, 0), -EINVAL, "a GMP class on QP0: checked first");
	cr_assert_eq(reg(fd, 1, 0x04, 1, 0), 0, "a GSI agent");
	ut_get(&m, 0, 0x04, 0x0001, 0, 0, 1);
	cr_expect_eq(write(fd, &m, sizeof(m)), -1, "no GRH");
	cr_expect_eq(errno, EINVAL);
	m.h.grh_present = 1;
	cr_expect_eq(write(fd, &m, sizeof(m)), (ssize_t)sizeof(m), "%s", strerror(errno));
	cr_expect_eq(close(fd), 0);
	if (geteuid() == 0) {
		fd = open("/dev/infiniband/issm0", O_RDWR | O_NONBLOCK);
		cr_expect_geq(fd, 0, "issm0: %s", strerror(errno));
		cr_expect_eq(close(fd), 0);
	}
}

Test(umad, on_roce, .timeout = 120)
{
	test_rerun_on_roce("umad_roce/*");
}
