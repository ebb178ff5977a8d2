/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_netlink.c - RDMA netlink (NETLINK_RDMA) as drivers/infiniband/core
 * netlink.c and nldev.c answer it: the socket's netlink face (bind,
 * getsockname, the kernel as sender), the device, port, system, character
 * device and QP table answers, dumps ended by NLMSG_DONE, acknowledgements
 * and errors.  (The rdma tool on top of it: device/test_tools.c.)
 */
#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>

#include "emu_test.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

static int nl;
static uint32_t seq = 100;
static uint16_t req_flags;	/* of the last request sent */

static void setup(void)
{
	struct sockaddr_nl a = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof(a);

	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	cr_assert_geq(nl, 0, "socket: %s", strerror(errno));
	cr_assert_eq(bind(nl, (struct sockaddr *)&a, sizeof(a)), 0, "%s", strerror(errno));
	cr_assert_eq(getsockname(nl, (struct sockaddr *)&a, &len), 0);
	cr_assert_eq(len, sizeof(a));
	cr_assert_eq(a.nl_family, AF_NETLINK);
	cr_assert_eq(a.nl_pid, (uint32_t)getpid(), "the first socket's port id is the pid");
}

static void teardown(void)
{
	close(nl);
}

TestSuite(netlink, .init = setup, .fini = teardown);

/* a request: header and attributes appended with add_*() */
struct req {
	struct nlmsghdr	h;
	uint8_t		attrs[256];
};

static void req_init(struct req *r, uint16_t op, uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->h = (struct nlmsghdr){ .nlmsg_len = NLMSG_HDRLEN, .nlmsg_flags = NLM_F_REQUEST | flags,
				  .nlmsg_seq = ++seq,
				  .nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op) };
}

static void add(struct req *r, uint16_t type, const void *v, uint16_t n)
{
	struct nlattr *a = (struct nlattr *)((uint8_t *)r + r->h.nlmsg_len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + n;
	memcpy(a + 1, v, n);
	r->h.nlmsg_len += NLA_ALIGN(a->nla_len);
}

static void add_u32(struct req *r, uint16_t type, uint32_t v)
{
	add(r, type, &v, 4);
}

static void req_send(const struct req *r)
{
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };

	req_flags = r->h.nlmsg_flags;
	cr_assert_eq(sendto(nl, r, r->h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)),
		     (ssize_t)r->h.nlmsg_len, "sendto: %s", strerror(errno));
}

/*
 * every message answering the last request: up to NLMSG_DONE or an
 * NLMSG_ERROR, or a single answer when no acknowledgement was asked
 */
struct answer {
	uint8_t		buf[1 << 16];
	size_t		len;
	unsigned	n;		/* data messages */
	int		done;		/* NLMSG_DONE seen: 1 + its errno; else 0 */
	int		error;		/* NLMSG_ERROR seen: 1 + its errno; else 0 */
	uint16_t	error_flags;
	uint32_t	error_len;
};

static void receive(struct answer *a)
{
	bool single = false;

	memset(a, 0, sizeof(*a));
	while (!a->done && !a->error && !single) {
		struct sockaddr_nl from;
		struct iovec iov = { a->buf + a->len, sizeof(a->buf) - a->len };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1 };
		struct pollfd p = { .fd = nl, .events = POLLIN };
		ssize_t n, left;

		cr_assert_eq(poll(&p, 1, 2000), 1, "no answer");
		n = left = recvmsg(nl, &m, 0);
		cr_assert_gt(n, 0, "recvmsg: %s", strerror(errno));
		cr_assert_eq(m.msg_namelen, sizeof(from));
		cr_assert_eq(from.nl_family, AF_NETLINK);
		cr_assert_eq(from.nl_pid, 0, "from the kernel");
		cr_assert_leq(n, 4096, "a datagram a page-sized buffer takes whole");
		for (struct nlmsghdr *h = (struct nlmsghdr *)(a->buf + a->len);
		     NLMSG_OK(h, (size_t)left); h = NLMSG_NEXT(h, left)) {
			cr_assert_eq(h->nlmsg_seq, seq);
			cr_assert_eq(h->nlmsg_pid, (uint32_t)getpid());
			if (h->nlmsg_type == NLMSG_DONE) {
				a->done = 1 - *(int *)NLMSG_DATA(h);
			} else if (h->nlmsg_type == NLMSG_ERROR) {
				a->error = 1 - ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				a->error_flags = h->nlmsg_flags;
				a->error_len = h->nlmsg_len;
			} else {
				a->n++;
				single = !(h->nlmsg_flags & NLM_F_MULTI) &&
					 !(req_flags & NLM_F_ACK);
			}
		}
		a->len += (size_t)n;
	}
}

/* the attribute of the i-th data message (or within nest), NULL if absent */
static const struct nlattr *find_in(const void *start, size_t len, uint16_t type)
{
	for (const uint8_t *p = start; len >= NLA_HDRLEN;) {
		const struct nlattr *a = (const struct nlattr *)p;

		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= (size_t)NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static const struct nlmsghdr *msg_at(const struct answer *a, unsigned i)
{
	for (const uint8_t *p = a->buf; p < a->buf + a->len;) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)p;

		if (h->nlmsg_type != NLMSG_DONE && h->nlmsg_type != NLMSG_ERROR && !i--)
			return h;
		p += NLMSG_ALIGN(h->nlmsg_len);
	}
	return NULL;
}

static const struct nlattr *attr(const struct answer *a, unsigned i, uint16_t type)
{
	const struct nlmsghdr *h = msg_at(a, i);

	cr_assert(h, "message %u", i);
	return find_in(NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN, type);
}

static uint64_t val(const struct nlattr *a)
{
	uint64_t v = 0;

	cr_assert(a, "attribute missing");
	memcpy(&v, a + 1, a->nla_len - NLA_HDRLEN < 8 ? a->nla_len - NLA_HDRLEN : 8);
	return v;
}

static const char *str(const struct nlattr *a)
{
	cr_assert(a, "attribute missing");
	return (const char *)(a + 1);
}

Test(netlink, device_dump_and_get)
{
	struct ibv_context *ctx = et_open();
	struct ibv_device_attr da;
	struct answer a;
	struct req r;

	cr_assert_eq(ibv_query_device(ctx, &da), 0);
	req_init(&r, RDMA_NLDEV_CMD_GET, NLM_F_DUMP | NLM_F_ACK);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.done, 1, "a dump ends with NLMSG_DONE, not acknowledged");
	cr_assert_eq(a.n, 1);
	cr_assert_eq(msg_at(&a, 0)->nlmsg_flags & NLM_F_MULTI, NLM_F_MULTI);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_INDEX)), 0);
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_NAME)), "mlx5_0");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_PORT_INDEX)), 1, "the last port");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_NODE_GUID)), be64toh(da.node_guid));
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID)),
		     be64toh(da.sys_image_guid));
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_FW_VERSION)), da.fw_ver);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_CAP_FLAGS)), da.device_cap_flags);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_NODE_TYPE)), IBV_NODE_CA);
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_PROTOCOL)), "ib");

	/* by index, acknowledged after the answer */
	req_init(&r, RDMA_NLDEV_CMD_GET, NLM_F_ACK);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(a.error, 1, "acknowledged");
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_NAME)), "mlx5_0");
	/* a device that is not there; no index at all */
	req_init(&r, RDMA_NLDEV_CMD_GET, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 5);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EINVAL);
	cr_assert_eq(a.error_len, NLMSG_HDRLEN + sizeof(struct nlmsgerr) + NLA_ALIGN(8),
		     "an error carries the request");
	req_init(&r, RDMA_NLDEV_CMD_GET, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EINVAL);
	ibv_close_device(ctx);
}

Test(netlink, ports)
{
	struct ibv_context *ctx = et_open();
	struct ibv_port_attr pa;
	struct answer a;
	struct req r;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	req_init(&r, RDMA_NLDEV_CMD_PORT_GET, NLM_F_ACK);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(a.error, 1);
	/* nldev_port_get_doit() answers with GET's type */
	cr_assert_eq(msg_at(&a, 0)->nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET));
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_LID)), pa.lid);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_SM_LID)), pa.sm_lid);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_PORT_STATE)), IBV_PORT_ACTIVE);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_PORT_PHYS_STATE)), 5, "LinkUp");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_SUBNET_PREFIX)), 0xfe80000000000000ull);
	cr_assert_eq((uint32_t)val(attr(&a, 0, RDMA_NLDEV_ATTR_CAP_FLAGS)), pa.port_cap_flags);
	/* a port that is not there, none given */
	req_init(&r, RDMA_NLDEV_CMD_PORT_GET, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 2);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EINVAL);
	/* the dump: every port of the device, which it needs */
	req_init(&r, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.done, 1);
	cr_assert_eq(a.n, 1);
	req_init(&r, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.done, 1 + EINVAL, "a dump's error is in its NLMSG_DONE");
	cr_assert_eq(a.n, 0);
	ibv_close_device(ctx);
}

/* what libibverbs and librdmacm ask: copy-on-fork, the uverbs node */
Test(netlink, system_and_chardev)
{
	struct answer a;
	struct req r;
	dev_t cdev;
	uint64_t v;

	req_init(&r, RDMA_NLDEV_CMD_SYS_GET, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(a.error, 0, "no acknowledgement unless asked");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK)), 1);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_SYS_ATTR_NETNS_MODE)), 1);

	req_init(&r, RDMA_NLDEV_CMD_GET_CHARDEV, NLM_F_ACK);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add(&r, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", 7);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.n, 1);
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_CHARDEV_NAME)), "uverbs0");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_CHARDEV_ABI)), 1, "mlx5's ABI");
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID)), RDMA_DRIVER_MLX5);
	v = val(attr(&a, 0, RDMA_NLDEV_ATTR_CHARDEV));
	cdev = makedev((v & 0xfff00) >> 8, (v & 0xff) | ((v >> 12) & 0xfff00));
	cr_assert_eq(major(cdev), 231);
	cr_assert_eq(minor(cdev), 192);
	/* a client this kernel does not serve; a port where none belongs */
	req_init(&r, RDMA_NLDEV_CMD_GET_CHARDEV, 0);
	add(&r, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "rdma_cm", 8);
	req_send(&r);
	receive(&a);
	cr_assert_neq(a.error, 1);
	req_init(&r, RDMA_NLDEV_CMD_GET_CHARDEV, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	add(&r, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", 7);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EINVAL);
}

/* an operation of no client, one the kernel has and this one does not; NETLINK_CAP_ACK */
Test(netlink, errors)
{
	struct answer a;
	struct req r;
	int on = 1;

	req_init(&r, RDMA_NLDEV_NUM_OPS, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EINVAL);
	req_init(&r, RDMA_NLDEV_CMD_STAT_GET, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EOPNOTSUPP);
	cr_assert_eq(a.error_len, NLMSG_HDRLEN + sizeof(struct nlmsgerr) + 8, "with the request");
	cr_assert_eq(setsockopt(nl, SOL_NETLINK, NETLINK_CAP_ACK, &on, sizeof(on)), 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + EOPNOTSUPP);
	cr_assert_eq(a.error_len, NLMSG_HDRLEN + sizeof(struct nlmsgerr), "capped");
	cr_assert_eq(a.error_flags & NLM_F_CAPPED, NLM_F_CAPPED);
}

/* the QP table: the kernel's MAD QPs, then this process's, with their state */
Test(netlink, qp_table)
{
	struct ibv_context *ctx = et_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *rc, *ud;
	const struct nlattr *table;
	struct answer a;
	struct req r;
	unsigned seen = 0;

	cr_assert(pd && cq);
	rc = ibv_create_qp(pd, &ia);
	ia.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &ia);
	cr_assert(rc && ud);
	cr_assert_eq(ibv_modify_qp(rc, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS), 0);

	req_init(&r, RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_DUMP);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.done, 1);
	cr_assert_eq(a.n, 1);
	cr_assert_str_eq(str(attr(&a, 0, RDMA_NLDEV_ATTR_DEV_NAME)), "mlx5_0");
	table = attr(&a, 0, RDMA_NLDEV_ATTR_RES_QP);
	cr_assert(table);
	for (const uint8_t *p = (const uint8_t *)(table + 1);
	     p < (const uint8_t *)table + table->nla_len;) {
		const struct nlattr *e = (const struct nlattr *)p;
		size_t len = e->nla_len - NLA_HDRLEN;
		uint32_t qpn = (uint32_t)val(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_LQPN));
		uint8_t type = (uint8_t)val(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_TYPE));
		uint8_t state = (uint8_t)val(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_STATE));

		cr_assert_eq(e->nla_type & NLA_TYPE_MASK, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
		cr_assert(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_SQ_PSN));
		if (qpn <= 1) {
			/* SMI and GSI of the MAD layer */
			cr_assert_eq(type, qpn);
			cr_assert_eq(state, IBV_QPS_RTS);
			cr_assert_str_eq(str(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_KERN_NAME)),
					 "ib_core");
			seen |= 1u << qpn;
		} else if (qpn == rc->qp_num) {
			cr_assert_eq(type, IBV_QPT_RC);
			cr_assert_eq(state, IBV_QPS_INIT);
			cr_assert_eq(val(find_in(e + 1, len, RDMA_NLDEV_ATTR_PORT_INDEX)), 1);
			cr_assert_eq(val(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_PID)),
				     (uint32_t)getpid());
			cr_assert(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_RQPN), "RC: remote QPN");
			seen |= 4;
		} else if (qpn == ud->qp_num) {
			cr_assert_eq(type, IBV_QPT_UD);
			cr_assert_eq(state, IBV_QPS_RESET);
			cr_assert_null(find_in(e + 1, len, RDMA_NLDEV_ATTR_PORT_INDEX),
				       "no port before INIT");
			cr_assert_null(find_in(e + 1, len, RDMA_NLDEV_ATTR_RES_RQPN));
			seen |= 8;
		}
		p += NLA_ALIGN(e->nla_len);
	}
	cr_assert_eq(seen, 15, "QPs seen: %#x", seen);

	/* one QP by number, its attributes beside the handle; one that is not there */
	req_init(&r, RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_ACK);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_RES_LQPN, rc->qp_num);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.n, 1);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_RES_LQPN)), rc->qp_num);
	cr_assert_eq(val(attr(&a, 0, RDMA_NLDEV_ATTR_RES_TYPE)), IBV_QPT_RC);
	req_init(&r, RDMA_NLDEV_CMD_RES_QP_GET, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	add_u32(&r, RDMA_NLDEV_ATTR_RES_LQPN, rc->qp_num + 1000);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.error, 1 + ENOENT);

	cr_assert_eq(ibv_destroy_qp(rc), 0);
	cr_assert_eq(ibv_destroy_qp(ud), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/* a table longer than a datagram continues in the next message */
Test(netlink, long_qp_table)
{
	struct ibv_context *ctx = et_open();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp[200];
	unsigned entries = 0;
	struct answer a;
	struct req r;

	for (int i = 0; i < 200; i++)
		cr_assert(qp[i] = ibv_create_qp(pd, &ia));
	req_init(&r, RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_DUMP);
	add_u32(&r, RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	req_send(&r);
	receive(&a);
	cr_assert_eq(a.done, 1);
	cr_assert_gt(a.n, 1, "more than one message");
	for (unsigned i = 0; i < a.n; i++) {
		const struct nlattr *t = attr(&a, i, RDMA_NLDEV_ATTR_RES_QP);

		cr_assert(attr(&a, i, RDMA_NLDEV_ATTR_DEV_INDEX), "each message names the device");
		for (const uint8_t *p = (const uint8_t *)(t + 1);
		     p < (const uint8_t *)t + t->nla_len; p += NLA_ALIGN(((const struct nlattr *)p)->nla_len))
			entries++;
	}
	cr_assert_eq(entries, 200 + 2);
	for (int i = 0; i < 200; i++)
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}
