/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_ucma.c - the rdma_cm character device written raw, as a buggy or
 * hostile program would: every size and pointer is checked as the
 * kernel's ucma_write() and its handlers check them (drivers/infiniband/
 * core/ucma.c), stale and foreign ids are refused, events never read are
 * taken back, and nothing crashes or hangs.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <rdma/rdma_user_cm.h>

#include "emu_test.h"

static int open_cm(void)
{
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0, "open rdma_cm: %s (run under build/rfemu)", strerror(errno));
	return fd;
}

/* One command: header + body; 0 or the errno. */
static int ucma(int fd, uint32_t cmd, const void *body, size_t len, uint16_t out)
{
	struct { struct rdma_ucm_cmd_hdr hdr; uint8_t body[512]; } buf;

	cr_assert_leq(len, sizeof(buf.body));
	buf.hdr.cmd = cmd;
	buf.hdr.in = (uint16_t)len;
	buf.hdr.out = out;
	memcpy(buf.body, body, len);
	return write(fd, &buf, sizeof(buf.hdr) + len) == (ssize_t)(sizeof(buf.hdr) + len) ?
	       0 : errno;
}

static int create_id(int fd, uint16_t ps, uint32_t *id)
{
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct rdma_ucm_create_id c = { .uid = 1, .response = (uintptr_t)&resp, .ps = ps };
	int ret = ucma(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(resp));

	*id = resp.id;
	return ret;
}

static int destroy_id(int fd, uint32_t id)
{
	struct rdma_ucm_destroy_id_resp resp;
	struct rdma_ucm_destroy_id d = { .response = (uintptr_t)&resp, .id = id };

	return ucma(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(resp));
}

Test(ucma, the_node_is_a_character_device)
{
	struct stat st;
	int fd = open_cm();

	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
	cr_assert_eq(major(st.st_rdev), 10, "a misc device");
	cr_assert_eq(stat("/dev/infiniband/rdma_cm", &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
	close(fd);
}

Test(ucma, framing)
{
	int fd = open_cm();
	struct rdma_ucm_cmd_hdr hdr = { .cmd = RDMA_USER_CM_CMD_CREATE_ID, .in = 0 };
	uint32_t id;

	cr_assert_eq(write(fd, &hdr, 4), -1, "shorter than the header");
	cr_assert_eq(errno, EINVAL);
	void *volatile nowhere = NULL;	/* hidden from the compiler's checks */

	cr_assert_eq(write(fd, nowhere, 16), -1);
	cr_assert_eq(errno, EFAULT);
	hdr.cmd = 99;
	cr_assert_eq(write(fd, &hdr, sizeof(hdr)), -1, "unknown command");
	cr_assert_eq(errno, EINVAL);
	hdr.cmd = RDMA_USER_CM_CMD_CREATE_ID;
	hdr.in = 100;
	cr_assert_eq(write(fd, &hdr, sizeof(hdr)), -1, "in beyond the write");
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_GET_OPTION, "", 0, 0), ENOSYS,
		     "GET_OPTION has no handler");
	/* create: response too small, unknown port space */
	{
		struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP };

		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 2), ENOSPC);
		c.ps = 0x999;
		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), EINVAL);
	}
	cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
	cr_assert_eq(destroy_id(fd, id), 0);
	close(fd);
}

Test(ucma, bad_pointers_create_nothing)
{
	int fd = open_cm();
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rdma_ucm_create_id c = { .ps = RDMA_PS_TCP };
	struct rdma_ucm_cmd_hdr *hdr;
	uint32_t id, first;

	cr_assert_neq(m, MAP_FAILED);
	/* a response in read-only memory: EFAULT, and the id is gone again */
	cr_assert_eq(create_id(fd, RDMA_PS_TCP, &first), 0);
	cr_assert_eq(destroy_id(fd, first), 0);
	cr_assert_eq(mprotect(m, (size_t)pg, PROT_READ), 0);
	c.response = (uintptr_t)m;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 4), EFAULT);
	cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
	cr_assert_eq(id, first, "no id was left behind");
	cr_assert_eq(destroy_id(fd, id), 0);
	/* a command whose body runs into a PROT_NONE page */
	cr_assert_eq(mprotect(m, (size_t)pg, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	hdr = (struct rdma_ucm_cmd_hdr *)(m + pg - sizeof(*hdr));
	hdr->cmd = RDMA_USER_CM_CMD_CREATE_ID;
	hdr->in = sizeof(c);
	hdr->out = 4;
	cr_assert_eq(write(fd, hdr, sizeof(*hdr) + sizeof(c)), -1);
	cr_assert_eq(errno, EFAULT);
	munmap(m, (size_t)pg * 2);
	close(fd);
}

Test(ucma, stale_and_foreign_ids)
{
	int a = open_cm(), b = open_cm();
	struct rdma_ucm_disconnect d;
	uint32_t id;

	cr_assert_eq(destroy_id(a, 77), ENOENT, "never created");
	cr_assert_eq(create_id(a, RDMA_PS_TCP, &id), 0);
	cr_assert_eq(destroy_id(b, id), EINVAL, "another channel's id");
	d.id = id;
	cr_assert_eq(ucma(b, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), 0), EINVAL);
	cr_assert_eq(ucma(a, RDMA_USER_CM_CMD_DISCONNECT, &d, sizeof(d), 0), EINVAL,
		     "nothing to disconnect");
	cr_assert_eq(destroy_id(a, id), 0);
	cr_assert_eq(destroy_id(a, id), ENOENT, "destroyed twice");
	close(a);
	close(b);
}

/*
 * Every command about one id opens as its kernel handler does: the whole
 * command is copied in (EFAULT), then its id looked up (ENOENT: none,
 * EINVAL: another channel's), except that CONNECT, BIND, BIND_IP,
 * RESOLVE_IP and RESOLVE_ADDR check their own fields first (a zeroed one
 * is EINVAL before the lookup).
 */
struct id_cmd {
	const char *name;
	uint32_t cmd;
	size_t len, id_off;	/* the command's size and where its id lies */
	uint16_t out;		/* a response length that passes ENOSPC */
	int zero_errno;		/* for a zeroed command naming no id */
};

#define ID_CMD(c, type, out, e) \
	{ #c, RDMA_USER_CM_CMD_##c, sizeof(type), offsetof(type, id), out, e }

static const struct id_cmd id_cmds[] = {
	ID_CMD(DESTROY_ID, struct rdma_ucm_destroy_id,
	       sizeof(struct rdma_ucm_destroy_id_resp), ENOENT),
	ID_CMD(BIND_IP, struct rdma_ucm_bind_ip, 0, EINVAL),
	ID_CMD(BIND, struct rdma_ucm_bind, 0, EINVAL),
	ID_CMD(RESOLVE_IP, struct rdma_ucm_resolve_ip, 0, EINVAL),
	ID_CMD(RESOLVE_ADDR, struct rdma_ucm_resolve_addr, 0, EINVAL),
	ID_CMD(RESOLVE_ROUTE, struct rdma_ucm_resolve_route, 0, ENOENT),
	ID_CMD(QUERY_ROUTE, struct rdma_ucm_query,
	       sizeof(struct rdma_ucm_query_route_resp), ENOENT),
	ID_CMD(QUERY, struct rdma_ucm_query, 0, ENOENT),
	ID_CMD(CONNECT, struct rdma_ucm_connect, 0, EINVAL),
	ID_CMD(LISTEN, struct rdma_ucm_listen, 0, ENOENT),
	ID_CMD(ACCEPT, struct rdma_ucm_accept, 0, ENOENT),
	ID_CMD(REJECT, struct rdma_ucm_reject, 0, ENOENT),
	ID_CMD(DISCONNECT, struct rdma_ucm_disconnect, 0, ENOENT),
	ID_CMD(INIT_QP_ATTR, struct rdma_ucm_init_qp_attr,
	       sizeof(struct ib_uverbs_qp_attr), ENOENT),
	ID_CMD(NOTIFY, struct rdma_ucm_notify, 0, ENOENT),
	ID_CMD(SET_OPTION, struct rdma_ucm_set_option, 0, ENOENT),
};

Test(ucma, commands_about_an_id_copy_then_look_up)
{
	int a = open_cm(), b = open_cm();
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rdma_ucm_cmd_hdr *hdr;
	uint8_t body[512];
	uint32_t id;

	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	hdr = (struct rdma_ucm_cmd_hdr *)(m + pg - sizeof(*hdr));
	cr_assert_eq(create_id(a, RDMA_PS_TCP, &id), 0);
	for (size_t i = 0; i < sizeof(id_cmds) / sizeof(id_cmds[0]); i++) {
		const struct id_cmd *c = &id_cmds[i];

		cr_assert_leq(c->len, sizeof(body));
		/* the command runs into a PROT_NONE page */
		hdr->cmd = c->cmd;
		hdr->in = (uint16_t)c->len;
		hdr->out = c->out;
		cr_assert_eq(write(a, hdr, sizeof(*hdr) + c->len), -1, "%s", c->name);
		cr_assert_eq(errno, EFAULT, "%s: unreadable: %s", c->name, strerror(errno));
		memset(body, 0, sizeof(body));
		memcpy(body + c->id_off, &(uint32_t){ 77 }, 4);
		cr_assert_eq(ucma(a, c->cmd, body, c->len, c->out), c->zero_errno,
			     "%s: an id never created", c->name);
		if (c->zero_errno != ENOENT)
			continue;
		memcpy(body + c->id_off, &id, 4);
		cr_assert_eq(ucma(b, c->cmd, body, c->len, c->out), EINVAL,
			     "%s: another channel's id", c->name);
	}
	cr_assert_eq(destroy_id(a, id), 0);
	munmap(m, (size_t)pg * 2);
	close(a);
	close(b);
}

/*
 * The _IP commands carry their addresses in sockaddr_in6 fields: a family
 * whose address does not fit (AF_IB's 48 bytes) or that the CM does not
 * know is EINVAL before anything reads the address or looks at the id
 * (ucma.c, rdma_addr_size_in6()). The emulator read 48 bytes out of the
 * 28 (the cm_ucma fuzz target's stack overflow) and bound the id.
 */
Test(ucma, ip_commands_take_only_addresses_their_field_holds)
{
	int fd = open_cm();
	struct rdma_ucm_bind_ip b;
	struct rdma_ucm_resolve_ip r;
	struct rdma_ucm_join_ip_mcast j;
	struct rdma_ucm_create_id_resp jr;
	uint32_t id;

	cr_assert_eq(create_id(fd, RDMA_PS_UDP, &id), 0);
	memset(&b, 0, sizeof(b));
	b.id = id;
	b.addr.sin6_family = AF_IB;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0), EINVAL);
	b.addr.sin6_family = AF_UNIX;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0), EINVAL);
	memset(&r, 0, sizeof(r));
	r.id = id;
	r.dst_addr.sin6_family = AF_IB;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), 0), EINVAL);
	r.dst_addr.sin6_family = AF_INET6;
	r.src_addr.sin6_family = AF_IB;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &r, sizeof(r), 0), EINVAL);
	memset(&j, 0, sizeof(j));
	j.id = id;
	j.response = (uintptr_t)&jr;
	j.addr.sin6_family = AF_IB;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), 0), EINVAL,
		     "before the response's room is checked");
	/* nothing was bound: a well-formed bind still takes */
	b.addr.sin6_family = AF_INET6;	/* the wildcard */
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0), 0);
	cr_assert_eq(destroy_id(fd, id), 0);
	close(fd);
}

Test(ucma, command_rules)
{
	int fd = open_cm();
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rdma_ucm_bind b = { .addr_size = sizeof(lo) };
	struct rdma_ucm_query q;
	struct rdma_ucm_query_addr_resp qr;
	struct rdma_ucm_connect c;
	struct rdma_ucm_init_qp_attr ia;
	struct ib_uverbs_qp_attr qa;
	uint32_t id;

	cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
	b.id = id;
	memcpy(&b.addr, &lo, sizeof(lo));
	b.addr_size = 3;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), EINVAL, "size");
	b.addr_size = sizeof(lo);
	b.reserved = 1;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), EINVAL, "reserved");
	b.reserved = 0;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), 0);

	q = (struct rdma_ucm_query){ .response = (uintptr_t)&qr, .id = id, .option = 9 };
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), sizeof(qr)), ENOSYS);
	q.option = RDMA_USER_CM_QUERY_ADDR;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), 8), ENOSPC);
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_QUERY, &q, sizeof(q), sizeof(qr)), 0);
	cr_assert_neq(qr.node_guid, 0, "bound to a specific address: a device");
	cr_assert_eq(qr.port_num, 1);

	memset(&c, 0, sizeof(c));
	c.id = id;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0), EINVAL,
		     "conn_param not valid");
	c.conn_param.valid = 1;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_CONNECT, &c, sizeof(c), 0), EINVAL,
		     "no route yet");

	ia = (struct rdma_ucm_init_qp_attr){ .response = (uintptr_t)&qa, .id = id,
					     .qp_state = IBV_QPS_INIT };
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &ia, sizeof(ia), 8), ENOSPC);
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &ia, sizeof(ia), sizeof(qa)), 0);
	cr_assert_eq(qa.qp_attr_mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		     IBV_QP_ACCESS_FLAGS);
	ia.qp_state = IBV_QPS_RTR;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &ia, sizeof(ia), sizeof(qa)),
		     EINVAL, "RTR needs a connection");
	ia.qp_state = 42;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &ia, sizeof(ia), sizeof(qa)), EINVAL);
	cr_assert_eq(destroy_id(fd, id), 0);
	close(fd);
}

Test(ucma, events_poll_block_and_are_taken_back)
{
	int fd = open_cm();
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(7490),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rdma_ucm_resolve_addr r = { .dst_size = sizeof(lo), .timeout_ms = 1000 };
	struct rdma_ucm_event_resp ev;
	struct rdma_ucm_get_event g = { .response = (uintptr_t)&ev };
	struct rdma_ucm_destroy_id_resp dr;
	struct rdma_ucm_destroy_id d = { .response = (uintptr_t)&dr };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint32_t id;

	cr_assert_eq(poll(&p, 1, 0), 0, "nothing queued: not readable");
	cr_assert_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)), EAGAIN);
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), 8), ENOSPC);

	cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
	r.id = id;
	memcpy(&r.dst_addr, &lo, sizeof(lo));
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &r, sizeof(r), 0), 0);
	cr_assert_eq(poll(&p, 1, 20000), 1, "ADDR_RESOLVED makes it readable");
	/* a response that cannot be written leaves the event queued */
	g.response = 8;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)), EFAULT);
	cr_assert_eq(poll(&p, 1, 0), 1);
	g.response = (uintptr_t)&ev;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)), 0);
	cr_assert_eq(ev.event, 0 /* ADDR_RESOLVED */);
	cr_assert_eq(ev.id, id);
	cr_assert_eq(ev.uid, 1);
	cr_assert_eq(poll(&p, 1, 0), 0, "taken");

	/* resolve the route and never read its event: destroy takes it back */
	{
		struct rdma_ucm_resolve_route rr = { .id = id, .timeout_ms = 1000 };

		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0), 0);
		cr_assert_eq(poll(&p, 1, 20000), 1);
	}
	d.id = id;
	cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(dr)), 0);
	cr_assert_eq(dr.events_reported, 1, "only the event that was read");
	cr_assert_eq(poll(&p, 1, 0), 0, "the unread event went with the id");
	close(fd);
}

Test(ucma, close_with_ids_and_events_pending)
{
	for (int round = 0; round < 3; round++) {
		int fd = open_cm();
		struct sockaddr_in lo = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)(7491 + round)),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		struct rdma_ucm_resolve_addr r = { .dst_size = sizeof(lo), .timeout_ms = 1000 };
		struct rdma_ucm_listen l = { .backlog = 4 };
		uint32_t id, lid;

		cr_assert_eq(create_id(fd, RDMA_PS_TCP, &lid), 0);
		l.id = lid;
		{
			struct rdma_ucm_bind b = { .id = lid, .addr_size = sizeof(lo) };

			memcpy(&b.addr, &lo, sizeof(lo));
			cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), 0);
		}
		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0), 0);
		cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
		r.id = id;
		memcpy(&r.dst_addr, &lo, sizeof(lo));
		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_RESOLVE_ADDR, &r, sizeof(r), 0), 0);
		/* closed with a listener and an unread event: all released, and
		 * the port can be listened on again in the next round's file */
		close(fd);
	}
	{
		int fd = open_cm();
		struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(7491),
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		struct rdma_ucm_bind b = { .addr_size = sizeof(lo) };
		struct rdma_ucm_listen l = { .backlog = 4 };
		uint32_t id;

		cr_assert_eq(create_id(fd, RDMA_PS_TCP, &id), 0);
		b.id = l.id = id;
		memcpy(&b.addr, &lo, sizeof(lo));
		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), 0);
		cr_assert_eq(ucma(fd, RDMA_USER_CM_CMD_LISTEN, &l, sizeof(l), 0), 0,
			     "the closed file's listener released the port");
		close(fd);
	}
}
