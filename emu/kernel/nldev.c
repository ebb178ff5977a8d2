/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nldev.c - RDMA netlink (NETLINK_RDMA, client RDMA_NL_NLDEV): what
 * iproute2's rdma tool (`rdma dev`, `rdma link`, `rdma res show qp`,
 * `rdma system`) and libibverbs' device discovery ask, answered as
 * drivers/infiniband/core/netlink.c (rdma_nl_rcv_skb(), rdma_nl_rcv_msg())
 * and nldev.c answer them, from the same values QUERY_DEVICE, QUERY_PORT
 * and QUERY_QP give (<rdma/rdma_netlink.h> for the commands and
 * attributes).
 *
 * Requests in one send are taken in order.  One that is no request, or a
 * control message, is only acknowledged (when it asks, NLM_F_ACK); one of
 * another client, or an operation this client does not have, is EINVAL;
 * an operation the kernel has and this one does not (SET, NEWLINK, the
 * statistics, the other resources) EOPNOTSUPP.  A dump (NLM_F_DUMP) is
 * answered by its messages, NLM_F_MULTI, and NLMSG_DONE, never
 * acknowledged; a single answer by its message, then the acknowledgement
 * if asked.  An error is an NLMSG_ERROR carrying -errno and the request
 * (its header only with NETLINK_CAP_ACK).  Datagrams are at most
 * NLDEV_GOODSIZE bytes, what a reader with a page-sized buffer (libmnl's
 * MNL_SOCKET_BUFFER_SIZE) takes whole: a longer QP table continues in
 * the next message, as the kernel's dump resumes in its next skb.
 *
 * The resources are this host's, as a machine's kernel shows its own:
 * the QPs of this process, with its pid, and the QPs the kernel's MAD
 * layer keeps on every port (SMI on InfiniBand, GSI), named [ib_core].
 */
#include <endian.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>

#include "caps.h"
#include "internal.h"

/* NLMSG_GOODSIZE of a 4 KiB page: what one datagram may hold */
#define NLDEV_GOODSIZE		3776

/* IB_USER_VERBS_ABI_VERSION is the class's; a device's is its driver's */
#define NLDEV_MLX5_ABI		1	/* MLX5_IB_UVERBS_ABI_VERSION */
#define NLDEV_KERN_NAME		"ib_core"
#define NLDEV_SMI		0	/* IB_QPT_SMI, IB_QPT_GSI */
#define NLDEV_GSI		1

struct nl_out {
	uint8_t			buf[NLDEV_GOODSIZE];
	size_t			len;
	size_t			msg;	/* offset of the message being built */
	const struct nlmsghdr	*req;
	uint32_t		portid;
	emu_nl_emit_fn		*emit;
	void			*arg;
};

static void flush(struct nl_out *o)
{
	if (o->len)
		o->emit(o->arg, o->buf, o->len);
	o->len = 0;
}

/* a new message of the request's type; false when it cannot fit */
static bool msg_start(struct nl_out *o, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *h;

	if (o->len + NLMSG_HDRLEN > sizeof(o->buf))
		flush(o);
	h = (struct nlmsghdr *)(o->buf + o->len);
	*h = (struct nlmsghdr){
		.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = type, .nlmsg_flags = flags,
		.nlmsg_seq = o->req->nlmsg_seq, .nlmsg_pid = o->portid,
	};
	o->msg = o->len;
	o->len += NLMSG_HDRLEN;
	return true;
}

static void msg_end(struct nl_out *o)
{
	((struct nlmsghdr *)(o->buf + o->msg))->nlmsg_len = (uint32_t)(o->len - o->msg);
}

/* an attribute of n bytes; false when the datagram is full */
static bool put(struct nl_out *o, uint16_t type, const void *v, size_t n)
{
	struct nlattr *a = (struct nlattr *)(o->buf + o->len);
	size_t total = NLA_ALIGN(NLA_HDRLEN + n);

	if (o->len + total > sizeof(o->buf))
		return false;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	if (n)
		memcpy((uint8_t *)a + NLA_HDRLEN, v, n);
	memset((uint8_t *)a + NLA_HDRLEN + n, 0, total - NLA_HDRLEN - n);
	o->len += total;
	return true;
}

static bool put_u8(struct nl_out *o, uint16_t type, uint8_t v)
{
	return put(o, type, &v, 1);
}

static bool put_u32(struct nl_out *o, uint16_t type, uint32_t v)
{
	return put(o, type, &v, 4);
}

/* nla_put_u64_64bit(): no pad attribute where unaligned loads are cheap */
static bool put_u64(struct nl_out *o, uint16_t type, uint64_t v)
{
	return put(o, type, &v, 8);
}

static bool put_str(struct nl_out *o, uint16_t type, const char *s)
{
	return put(o, type, s, strlen(s) + 1);
}

/* nla_nest_start(): the offset to close with nest_end() */
static size_t nest_start(struct nl_out *o, uint16_t type)
{
	size_t at = o->len;

	return put(o, type, NULL, 0) ? at : 0;
}

static void nest_end(struct nl_out *o, size_t at)
{
	((struct nlattr *)(o->buf + at))->nla_len = (uint16_t)(o->len - at);
}

/* netlink_ack(): error 0 acknowledges; the request follows, or its header */
static void ack(struct nl_out *o, int err, bool cap_ack)
{
	size_t req = cap_ack || !err ? NLMSG_HDRLEN : o->req->nlmsg_len;
	struct nlmsgerr e = { .error = -err };

	flush(o);
	msg_start(o, NLMSG_ERROR, cap_ack || !err ? NLM_F_CAPPED : 0);
	memcpy(&e.msg, o->req, sizeof(e.msg));
	memcpy(o->buf + o->len, &e, sizeof(e));
	if (req > NLMSG_HDRLEN)
		memcpy(o->buf + o->len + sizeof(e), (const uint8_t *)o->req + NLMSG_HDRLEN,
		       req - NLMSG_HDRLEN);
	o->len += NLMSG_ALIGN(sizeof(e) + req - NLMSG_HDRLEN);
	msg_end(o);
	flush(o);
}

/* netlink_dump(): the end of a dump carries its error, -errno or 0 */
static void done(struct nl_out *o, int err)
{
	int v = -err;

	msg_start(o, NLMSG_DONE, NLM_F_MULTI);
	memcpy(o->buf + o->len, &v, sizeof(v));
	o->len += sizeof(v);
	msg_end(o);
	flush(o);
}

/* ---- the request's attributes ------------------------------------------ */

struct nl_attrs {
	const struct nlattr	*a[RDMA_NLDEV_ATTR_MAX];
};

/* nlmsg_parse() of the attributes after the header; EINVAL if malformed */
static int parse(const struct nlmsghdr *h, struct nl_attrs *t)
{
	const uint8_t *p = (const uint8_t *)h + NLMSG_HDRLEN;
	size_t left = h->nlmsg_len - NLMSG_HDRLEN;

	memset(t, 0, sizeof(*t));
	while (left >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			return EINVAL;
		if (type < RDMA_NLDEV_ATTR_MAX)
			t->a[type] = a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		left -= (size_t)NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/* a u32 attribute, as the policy's NLA_U32 checks it */
static int get_u32(const struct nl_attrs *t, uint16_t type, uint32_t *v)
{
	const struct nlattr *a = t->a[type];

	if (!a)
		return ENOENT;
	if (a->nla_len < NLA_HDRLEN + 4)
		return EINVAL;
	memcpy(v, (const uint8_t *)a + NLA_HDRLEN, 4);
	return 0;
}

/* ib_device_get_by_index(): this host's mlx5_N; EINVAL for any other */
static int get_dev(const struct nl_attrs *t, unsigned *dev)
{
	uint32_t idx;

	if (get_u32(t, RDMA_NLDEV_ATTR_DEV_INDEX, &idx) || idx >= emu_cfg.num_devs)
		return EINVAL;
	*dev = idx;
	return 0;
}

/* rdma_is_port_valid() of an optional PORT_INDEX; 0 when absent */
static int get_port(const struct nl_attrs *t, unsigned *port)
{
	uint32_t p;
	int ret = get_u32(t, RDMA_NLDEV_ATTR_PORT_INDEX, &p);

	*port = 0;
	if (ret == ENOENT)
		return 0;
	if (ret || p < 1 || p > emu_cfg.num_ports)
		return EINVAL;
	*port = p;
	return 0;
}

/* ---- the answers --------------------------------------------------------- */

static uint16_t nl_type(uint16_t op)
{
	return RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
}

static bool fill_handle(struct nl_out *o, unsigned dev)
{
	char name[16];

	snprintf(name, sizeof(name), "mlx5_%u", dev);
	return put_u32(o, RDMA_NLDEV_ATTR_DEV_INDEX, dev) &&
	       put_str(o, RDMA_NLDEV_ATTR_DEV_NAME, name);
}

/* fill_dev_info() */
static void fill_dev(struct nl_out *o, unsigned dev)
{
	struct ib_uverbs_query_device_resp r = {};
	bool eth = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	emu_device_attr(dev, &r);
	fill_handle(o, dev);
	put_u32(o, RDMA_NLDEV_ATTR_PORT_INDEX, emu_cfg.num_ports);
	put_u64(o, RDMA_NLDEV_ATTR_CAP_FLAGS, r.device_cap_flags);
	put_str(o, RDMA_NLDEV_ATTR_FW_VERSION, emu_cfg.fw_ver);
	put_u64(o, RDMA_NLDEV_ATTR_NODE_GUID, emu_cfg.dev[dev].node_guid);
	put_u64(o, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, emu_cfg.sys_image_guid);
	put_u8(o, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, IBV_NODE_CA);
	put_u8(o, RDMA_NLDEV_ATTR_DEV_DIM, 1);	/* mlx5 sets use_cq_dim */
	put_str(o, RDMA_NLDEV_ATTR_DEV_PROTOCOL, eth ? "roce" : "ib");
}

/* fill_port_info(): a RoCE port's netdev too (EMU_NETDEV), not an InfiniBand port's */
static void fill_port(struct nl_out *o, unsigned dev, unsigned port)
{
	struct ib_uverbs_query_port_resp r = {};
	const union ibv_gid *gid = &emu_cfg.dev[dev].port[port - 1].gid[0];
	uint64_t prefix;

	emu_port_attr(dev, port, &r);
	fill_handle(o, dev);
	put_u32(o, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	if (emu_cfg.link_layer != IBV_LINK_LAYER_ETHERNET) {
		memcpy(&prefix, gid->raw, sizeof(prefix));
		put_u64(o, RDMA_NLDEV_ATTR_CAP_FLAGS, r.port_cap_flags |
			(uint64_t)EMU_CAP(ib_port_cap_flags2) << 32);
		put_u64(o, RDMA_NLDEV_ATTR_SUBNET_PREFIX, be64toh(prefix));
		put_u32(o, RDMA_NLDEV_ATTR_LID, r.lid);
		put_u32(o, RDMA_NLDEV_ATTR_SM_LID, r.sm_lid);
		put_u8(o, RDMA_NLDEV_ATTR_LMC, r.lmc);
	}
	put_u8(o, RDMA_NLDEV_ATTR_PORT_STATE, r.state);
	put_u8(o, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, r.phys_state);
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET) {
		put_u32(o, RDMA_NLDEV_ATTR_NDEV_INDEX, if_nametoindex(EMU_NETDEV));
		put_str(o, RDMA_NLDEV_ATTR_NDEV_NAME, EMU_NETDEV);
	}
}

/* one QP: fill_res_qp_entry(), in a table's entry or not; false when it does not fit */
struct qp_line {
	uint32_t	qpn, pdn, rqpn, rq_psn, sq_psn;
	uint8_t		port, type, state, mig;
	bool		kern;
};

static bool fill_qp(struct nl_out *o, const struct qp_line *q, bool entry)
{
	size_t save = o->len, at = entry ? nest_start(o, RDMA_NLDEV_ATTR_RES_QP_ENTRY) : 0;
	bool ok = !entry || at;
	bool connected = q->type == IBV_QPT_RC || q->type == IBV_QPT_UC;

	if (ok && q->port)
		ok = put_u32(o, RDMA_NLDEV_ATTR_PORT_INDEX, q->port);
	ok = ok && put_u32(o, RDMA_NLDEV_ATTR_RES_LQPN, q->qpn);
	if (ok && !q->kern)
		ok = put_u32(o, RDMA_NLDEV_ATTR_RES_PDN, q->pdn);
	if (ok)
		ok = q->kern ? put_str(o, RDMA_NLDEV_ATTR_RES_KERN_NAME, NLDEV_KERN_NAME) :
			       put_u32(o, RDMA_NLDEV_ATTR_RES_PID, (uint32_t)getpid());
	if (ok && connected)
		ok = put_u32(o, RDMA_NLDEV_ATTR_RES_RQPN, q->rqpn) &&
		     put_u32(o, RDMA_NLDEV_ATTR_RES_RQ_PSN, q->rq_psn);
	ok = ok && put_u32(o, RDMA_NLDEV_ATTR_RES_SQ_PSN, q->sq_psn);
	if (ok && (connected || q->type == IBV_QPT_XRC_SEND || q->type == IBV_QPT_XRC_RECV))
		ok = put_u8(o, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, q->mig);
	ok = ok && put_u8(o, RDMA_NLDEV_ATTR_RES_TYPE, q->type) &&
	     put_u8(o, RDMA_NLDEV_ATTR_RES_STATE, q->state);
	if (!ok) {
		o->len = save;
		return false;
	}
	if (entry)
		nest_end(o, at);
	return true;
}

/* The QPs of device dev (on port, if not 0) in qpn order, the kernel's first. */
static unsigned qp_lines(unsigned dev, unsigned port, struct qp_line *out, unsigned max)
{
	void **slot = emu_num_spaces[EMU_NUM_QP].slot;
	unsigned n = 0;

	for (unsigned p = 1; p <= emu_cfg.num_ports; p++) {
		for (uint32_t k = NLDEV_SMI; k <= NLDEV_GSI && n < max; k++) {
			if (port && p != port)
				continue;
			if (k == NLDEV_SMI && emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET)
				continue;	/* RoCE has no QP0 */
			out[n++] = (struct qp_line){ .qpn = k, .port = (uint8_t)p, .type = (uint8_t)k,
						     .state = IBV_QPS_RTS, .kern = true };
		}
	}
	for (uint32_t i = 1; slot && i <= EMU_NUM_IDX_MASK && n < max; i++) {
		const struct emu_qp *qp = slot[i];

		if (!qp || qp->opened || qp->obj.ctx->dev_index != dev ||
		    (port && qp->attr.port_num != port))
			continue;
		out[n++] = (struct qp_line){
			.qpn = qp->qpn, .pdn = qp->pd ? qp->pd->pdn : 0,
			.rqpn = qp->attr.dest_qp_num, .rq_psn = qp->attr.rq_psn,
			.sq_psn = qp->attr.sq_psn, .port = qp->attr.port_num,
			.type = (uint8_t)qp->type, .state = (uint8_t)qp->attr.state,
			.mig = qp->attr.path_mig_state,
		};
	}
	return n;
}

/*
 * res_get_common_dumpit() for QPs: the device's handle and a table of
 * entries per message, as many messages as the table needs; by LQPN
 * without NLM_F_DUMP (res_get_common_doit()): that QP's attributes beside
 * the handle, ENOENT if it is not there, EINVAL without an LQPN.
 */
static int res_qp(struct nl_out *o, const struct nl_attrs *t, bool dump)
{
	static struct qp_line lines[2 * EMU_MAX_PORTS + EMU_NUM_IDX_MASK];
	uint16_t type = nl_type(RDMA_NLDEV_CMD_RES_QP_GET);
	unsigned dev, port, n, i = 0;
	uint32_t lqpn;
	int ret;

	if ((ret = get_dev(t, &dev)) || (ret = get_port(t, &port)))
		return ret;
	n = qp_lines(dev, port, lines, EMU_ARRAY_SIZE(lines));
	if (!dump) {
		if (get_u32(t, RDMA_NLDEV_ATTR_RES_LQPN, &lqpn))
			return EINVAL;
		while (i < n && lines[i].qpn != lqpn)
			i++;
		if (i == n)
			return ENOENT;
		msg_start(o, type, 0);
		fill_handle(o, dev);
		fill_qp(o, &lines[i], false);
		msg_end(o);
		return 0;
	}
	do {
		size_t table;

		flush(o);
		msg_start(o, type, NLM_F_MULTI);
		fill_handle(o, dev);
		table = nest_start(o, RDMA_NLDEV_ATTR_RES_QP);
		while (i < n && fill_qp(o, &lines[i], true))
			i++;
		nest_end(o, table);
		msg_end(o);
	} while (i < n);
	return 0;
}

/* rdma_nl_rcv_msg() of one RDMA_NL_NLDEV request: 0 or the errno */
static int answer(struct nl_out *o, uint16_t op, bool dump, const struct nl_attrs *t)
{
	unsigned dev, port;
	int ret;

	switch (op) {
	case RDMA_NLDEV_CMD_GET:
		if (dump) {
			for (dev = 0; dev < emu_cfg.num_devs; dev++) {
				msg_start(o, nl_type(op), NLM_F_MULTI);
				fill_dev(o, dev);
				msg_end(o);
			}
			return 0;
		}
		if ((ret = get_dev(t, &dev)))
			return ret;
		msg_start(o, nl_type(op), 0);
		fill_dev(o, dev);
		msg_end(o);
		return 0;
	case RDMA_NLDEV_CMD_PORT_GET:
		/* both need the device; the single answer a port, and its type is GET's */
		if ((ret = get_dev(t, &dev)))
			return ret;
		if (dump) {
			for (port = 1; port <= emu_cfg.num_ports; port++) {
				msg_start(o, nl_type(op), NLM_F_MULTI);
				fill_port(o, dev, port);
				msg_end(o);
			}
			return 0;
		}
		if (get_port(t, &port) || !port)
			return EINVAL;
		msg_start(o, nl_type(RDMA_NLDEV_CMD_GET), 0);
		fill_port(o, dev, port);
		msg_end(o);
		return 0;
	case RDMA_NLDEV_CMD_SYS_GET:
		if (dump)
			return EOPNOTSUPP;	/* a doit only */
		/* shared namespace mode; pinned pages are copied for a child (5.13+) */
		msg_start(o, nl_type(op), 0);
		put_u8(o, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);
		put_u8(o, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
		msg_end(o);
		return 0;
	case RDMA_NLDEV_CMD_GET_CHARDEV: {
		/* nldev_get_chardev(), ib_uverbs_get_nl_info(): "uverbs" only */
		const struct nlattr *name = t->a[RDMA_NLDEV_ATTR_CHARDEV_TYPE];
		dev_t cdev;
		char node[24];

		if (!name || get_dev(t, &dev))
			return EINVAL;
		if (t->a[RDMA_NLDEV_ATTR_PORT_INDEX])
			return EINVAL;	/* uverbs is per device */
		if (strncmp((const char *)name + NLA_HDRLEN, "uverbs",
			    name->nla_len - NLA_HDRLEN) || name->nla_len - NLA_HDRLEN < 6)
			return EOPNOTSUPP;
		cdev = makedev(EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR0 + dev);
		snprintf(node, sizeof(node), "uverbs%u", dev);
		msg_start(o, nl_type(op), 0);
		put_u32(o, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, RDMA_DRIVER_MLX5);
		/* huge_encode_dev() */
		put_u64(o, RDMA_NLDEV_ATTR_CHARDEV, (uint64_t)(major(cdev) & 0xfff) << 8 |
			(minor(cdev) & 0xff) | (uint64_t)(minor(cdev) & ~0xffu) << 12);
		put_u64(o, RDMA_NLDEV_ATTR_CHARDEV_ABI, NLDEV_MLX5_ABI);
		put_str(o, RDMA_NLDEV_ATTR_CHARDEV_NAME, node);
		msg_end(o);
		return 0;
	}
	case RDMA_NLDEV_CMD_RES_QP_GET:
		return res_qp(o, t, dump);
	default:
		return EOPNOTSUPP;
	}
}

void emu_nldev_request(const void *req, size_t len, uint32_t portid, bool cap_ack,
		       emu_nl_emit_fn *emit, void *arg)
{
	static struct nl_out o;
	const uint8_t *p = req;

	emu_lock_acquire();
	o.portid = portid;
	o.emit = emit;
	o.arg = arg;
	o.len = 0;
	/* netlink_rcv_skb(): every whole message, in order */
	while (len >= NLMSG_HDRLEN) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)p;
		uint16_t client = RDMA_NL_GET_CLIENT(h->nlmsg_type);
		uint16_t op = RDMA_NL_GET_OP(h->nlmsg_type);
		bool dump = h->nlmsg_flags & NLM_F_DUMP;
		struct nl_attrs t;
		int err = 0;

		if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len)
			break;
		o.req = h;
		if (!(h->nlmsg_flags & NLM_F_REQUEST) || h->nlmsg_type < NLMSG_MIN_TYPE)
			err = 0;	/* acknowledged below if asked */
		else if (client != RDMA_NL_NLDEV || op >= RDMA_NLDEV_NUM_OPS)
			err = EINVAL;	/* is_nl_msg_valid(), get_cb_table() */
		else if ((err = parse(h, &t)) == 0)
			err = answer(&o, op, dump, &t);
		if (err)
			o.len = 0;	/* nothing of a failed answer goes out */
		if (dump && client == RDMA_NL_NLDEV && op < RDMA_NLDEV_NUM_OPS &&
		    (h->nlmsg_flags & NLM_F_REQUEST) && h->nlmsg_type >= NLMSG_MIN_TYPE) {
			done(&o, err);	/* a dump is never acknowledged */
		} else {
			flush(&o);
			if (err || (h->nlmsg_flags & NLM_F_ACK))
				ack(&o, err, cap_ack);
		}
		if (NLMSG_ALIGN(h->nlmsg_len) >= len)
			break;
		len -= NLMSG_ALIGN(h->nlmsg_len);
		p += NLMSG_ALIGN(h->nlmsg_len);
	}
	flush(&o);
	emu_lock_release();
}
