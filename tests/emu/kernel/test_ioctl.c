/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The uverbs ioctl interface (RDMA_VERBS_IOCTL): libibverbs on its ioctl
 * paths (no command goes through write()), the framework's refusals in the
 * order and with the errnos of the kernel's uverbs_ioctl.c, INVOKE_WRITE,
 * GET_CONTEXT/ASYNC_EVENT_ALLOC/QUERY_CONTEXT, the native QUERY_PORT, the
 * GID queries (QUERY_GID_ENTRY, QUERY_GID_TABLE),
 * mlx5dv_query_port(), the DESTROY methods, CQ_CREATE, SRQ_CREATE, QP_CREATE,
 * DM_ALLOC/DM_FREE (DEVX: test_devx.c).
 * Raw calls are made on the command fd of a context libibverbs opened, or
 * on a fresh one.
 */
#define _GNU_SOURCE		/* RTLD_NEXT */
#include <dlfcn.h>
#include <net/if.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include "emu_test.h"

/*
 * write() of this program comes before the emulator's in symbol lookup, so
 * libibverbs' writes land here first: count those on the command fd.
 */
static int counted_fd = -1;
static unsigned cmd_writes;

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*next)(int, const void *, size_t);

	if (!next)
		next = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd >= 0 && fd == counted_fd)
		cmd_writes++;
	return next(fd, buf, len);
}

static struct ibv_context *ctx;

static void setup(void)
{
	ctx = et_open();
}

static void teardown(void)
{
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(ioctl, .init = setup, .fini = teardown);

static uint64_t ptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* the ioctl; 0 or the errno */
static int call_at(void *hdr)
{
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, hdr) ? errno : 0;
}

static int call(struct et_call *c)
{
	return et_call_on(ctx->cmd_fd, c);
}

/* INVOKE_WRITE of a command with no request: the probe libibverbs sends */
static void probe(struct et_call *c, uint64_t cmd)
{
	et_call_init(c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
	et_attr(c, UVERBS_ATTR_WRITE_CMD, 8, cmd);
}

/* ---- libibverbs and libmlx5 on the ioctl paths ------------------------- */

/* once INVOKE_WRITE answers the probe, every verb goes by ioctl */
Test(ioctl, libibverbs_writes_nothing)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c2;
	struct ibv_port_attr pa;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	static char buf[4096];

	cr_assert(list && list[0]);
	c2 = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	cr_assert(c2, "ibv_open_device: %s", strerror(errno));
	counted_fd = c2->cmd_fd;
	cmd_writes = 0;

	cr_assert_eq(ibv_query_port(c2, 1, &pa), 0);
	cr_assert_eq(pa.state, IBV_PORT_ACTIVE);
	pd = ibv_alloc_pd(c2);
	cr_assert(pd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert(mr);
	cq = ibv_create_cq(c2, 16, NULL, NULL, 0);
	cr_assert(cq);
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 } });
	cr_assert(qp, "ibv_create_qp: %s", strerror(errno));
	cr_assert_eq(ibv_modify_qp(qp, &(struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = 1 },
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_expect_eq(cmd_writes, 0, "%u commands went through write()", cmd_writes);
	counted_fd = -1;
	cr_assert_eq(ibv_close_device(c2), 0);
}

/* MLX5_IB_METHOD_QUERY_PORT: no vport, e-switch or multi-port facts here */
Test(ioctl, mlx5dv_query_port)
{
	struct mlx5dv_port info;
	int ret;

	memset(&info, 0xa5, sizeof(info));
	ret = mlx5dv_query_port(ctx, 1, &info);
	cr_assert_eq(ret, 0, "mlx5dv_query_port: %s", strerror(ret));
	cr_expect_eq(info.flags, 0);
	cr_expect_eq(info.vport, 0);
	cr_expect_eq(info.reg_c0.mask, 0);
	cr_expect_eq(mlx5dv_query_port(ctx, 2, &info), EINVAL, "a port it lacks");
	cr_expect_eq(mlx5dv_query_port(ctx, 0, &info), EINVAL);
}

/* raw: a port number of the wrong size, a response too short */
Test(ioctl, mlx5_query_port_sizes)
{
	struct mlx5_ib_uapi_query_port info;
	struct et_call c;
	uint32_t port = 1;

	et_call_init(&c, UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT);
	et_attr(&c, MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, 4, port);
	et_attr(&c, MLX5_IB_ATTR_QUERY_PORT, sizeof(info), ptr(&info));
	cr_assert_eq(call(&c), 0);
	cr_expect(c.attrs[1].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	c.attrs[0].len = 8;			/* UVERBS_ATTR_TYPE(u32) */
	cr_expect_eq(call(&c), EINVAL);
	c.attrs[0].len = 4;
	c.attrs[1].len = sizeof(info) - 8;	/* up to reg_c0 is required */
	cr_expect_eq(call(&c), EINVAL);
	c.attrs[1].len = sizeof(info);
	c.attrs[1].data = 8;			/* not writable */
	cr_expect_eq(call(&c), EFAULT);
}

/* UVERBS_METHOD_QUERY_PORT: the extended answer, zeros past it */
Test(ioctl, query_port)
{
	struct {
		struct ib_uverbs_query_port_resp_ex r;
		uint8_t more[16];
	} resp;
	struct ibv_port_attr pa;
	struct et_call c;

	memset(&resp, 0xa5, sizeof(resp));
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT);
	et_attr(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1);
	et_attr(&c, UVERBS_ATTR_QUERY_PORT_RESP, sizeof(resp), ptr(&resp));
	cr_assert_eq(call(&c), 0);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_expect_eq(resp.r.legacy_resp.lid, pa.lid);
	cr_expect_eq(resp.r.legacy_resp.state, IBV_PORT_ACTIVE);
	for (size_t i = 0; i < sizeof(resp.more); i++)
		cr_expect_eq(resp.more[i], 0);
	c.attrs[0].data = 0;
	cr_expect_eq(call(&c), EINVAL, "port 0");
	c.attrs[0].data = 257;
	cr_expect_eq(call(&c), EINVAL, "a port number above a u8");
	c.attrs[0].data = 1;
	c.attrs[1].len = sizeof(resp.r) - 1;
	cr_expect_eq(call(&c), EINVAL, "a response shorter than the structure");
}

/*
 * UVERBS_METHOD_QUERY_GID_ENTRY, with the checks of the kernel's handler
 * (uverbs_std_types_device.c) and rdma_get_gid_attr() (cache.c): flags,
 * port, an index past the table -> EINVAL, an empty entry -> ENODATA,
 * which ibv_query_gid_ex() passes on (pyverbs' test_query_gid_ex_bad_flow)
 */
Test(ioctl, query_gid_entry)
{
	struct {
		struct ib_uverbs_gid_entry e;
		uint8_t more[8];
	} resp;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	union ibv_gid gid;
	struct et_call c;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	memset(&resp, 0xa5, sizeof(resp));
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_ENTRY);
	et_attr(&c, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, 8, 1);
	et_attr(&c, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, 8, 0);
	et_attr(&c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, 4, 0);
	et_attr(&c, UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY, sizeof(resp), ptr(&resp));
	cr_assert_eq(call(&c), 0);
	cr_expect_eq(memcmp(resp.e.gid, gid.raw, 16), 0);
	cr_expect_eq(resp.e.gid_index, 0);
	cr_expect_eq(resp.e.port_num, 1);
	cr_expect_eq(resp.e.gid_type, pa.link_layer == IBV_LINK_LAYER_ETHERNET ?
		     IB_UVERBS_GID_TYPE_ROCE_V1 : IB_UVERBS_GID_TYPE_IB);
	cr_expect_eq(resp.e.netdev_ifindex, pa.link_layer == IBV_LINK_LAYER_ETHERNET ?
		     if_nametoindex("lo") : 0);
	for (size_t i = 0; i < sizeof(resp.more); i++)
		cr_expect_eq(resp.more[i], 0);

	c.attrs[2].data = 1;
	cr_expect_eq(call(&c), EINVAL, "a flag");
	c.attrs[2].data = 0;
	c.attrs[2].len = 2;
	cr_expect_eq(call(&c), EINVAL, "flags neither a u32 nor a u64");
	c.attrs[2].len = 8;
	c.attrs[0].data = 0;
	cr_expect_eq(call(&c), EINVAL, "port 0");
	c.attrs[0].data = 2;
	cr_expect_eq(call(&c), EINVAL, "a port the device lacks");
	c.attrs[0].data = 1ull << 32;
	cr_expect_eq(call(&c), EINVAL, "a port number above a u32");
	c.attrs[0].data = 1;
	c.attrs[1].data = pa.gid_tbl_len - 1;
	cr_expect_eq(call(&c), ENODATA, "an empty entry");
	c.attrs[1].data = pa.gid_tbl_len;
	cr_expect_eq(call(&c), EINVAL, "an index past the table");
	c.attrs[1].data = 0;
	c.attrs[3].len = offsetof(struct ib_uverbs_gid_entry, netdev_ifindex);
	cr_expect_eq(call(&c), EINVAL, "a response shorter than the structure");

	cr_expect_eq(ibv_query_gid_ex(ctx, 1, pa.gid_tbl_len - 1, &ge, 0), ENODATA);
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, 0, &ge, 1), EINVAL);
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, pa.gid_tbl_len, &ge, 0), EINVAL);
	/* ibv_query_gid() keeps answering zeros for an empty entry */
	memset(&gid, 0xa5, sizeof(gid));
	cr_assert_eq(ibv_query_gid(ctx, 1, pa.gid_tbl_len - 1, &gid), 0);
	for (size_t i = 0; i < 16; i++)
		cr_expect_eq(gid.raw[i], 0);
}

/*
 * UVERBS_METHOD_QUERY_GID_TABLE: the valid entries of every port, at the
 * caller's entry size (cut or zero-padded); an entry size of 0, a buffer
 * that is no whole number of entries or holds none, or too few entries
 * -> EINVAL (rdma_query_gid_table())
 */
Test(ioctl, query_gid_table)
{
	struct ibv_gid_entry one, tab[4];
	struct ib_uverbs_gid_entry big[3][2];
	uint64_t n = 99;
	struct et_call c;
	ssize_t got;

	got = ibv_query_gid_table(ctx, tab, 4, 0);
	cr_assert_gt(got, 0, "%zd", got);
	cr_expect_eq(ibv_query_gid_ex(ctx, 1, 0, &one, 0), 0);
	cr_expect_eq(memcmp(&one, &tab[0], sizeof(one)), 0);
	cr_expect_eq(ibv_query_gid_table(ctx, tab, (size_t)got - 1, 0), -EINVAL, "too small");
	cr_expect_eq(ibv_query_gid_table(ctx, tab, 4, 1), -EINVAL, "a flag");

	/* entries of twice the size: the rest of each zeroed */
	memset(big, 0xa5, sizeof(big));
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE);
	et_attr(&c, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, 8, sizeof(big[0]));
	et_attr(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, sizeof(big), ptr(big));
	et_attr(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, 8, ptr(&n));
	if (got <= 3) {
		cr_assert_eq(call(&c), 0);
		cr_expect_eq(n, (uint64_t)got);
		cr_expect_eq(memcmp(big[0][0].gid, tab[0].gid.raw, 16), 0);
		cr_expect_eq(big[0][0].gid_type, tab[0].gid_type);
		for (size_t i = 0; i < sizeof(big[0][1]); i++)
			cr_expect_eq(((uint8_t *)&big[0][1])[i], 0);
	}
	c.attrs[0].data = 0;
	cr_expect_eq(call(&c), EINVAL, "entry size 0");
	c.attrs[0].data = sizeof(big[0]) + 1;
	cr_expect_eq(call(&c), EINVAL, "not a whole number of entries");
	c.attrs[0].data = sizeof(big[0]);
	c.attrs[1].len = 0;
	cr_expect_eq(call(&c), EINVAL, "no room for an entry");
}

/* ---- the framework ------------------------------------------------------ */

Test(ioctl, header_refusals)
{
	struct et_call c;
	uint8_t *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int n;

	cr_assert_neq(p, MAP_FAILED);
	cr_expect_eq(ioctl(ctx->cmd_fd, FIONREAD, &n) ? errno : 0, ENOTTY,
		     "another request on the command fd");
	cr_expect_eq(call_at(NULL), EFAULT);
	cr_expect_eq(call_at((void *)8), EFAULT);

	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	cr_assert_eq(call(&c), ENOSPC, "the probe");
	c.hdr.length += 16;
	cr_expect_eq(call(&c), EINVAL, "length not num_attrs'");
	c.hdr.length -= 16;
	c.hdr.reserved1 = 1;
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
	c.hdr.reserved1 = 0;
	c.hdr.reserved2 = 1;
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
	c.hdr.reserved2 = 0;
	c.hdr.driver_id = RDMA_DRIVER_MLX4;
	cr_expect_eq(call(&c), EINVAL, "another driver's call");
	c.hdr.driver_id = RDMA_DRIVER_MLX5;
	c.hdr.num_attrs = 300;
	c.hdr.length = (uint16_t)(sizeof(c.hdr) + 300 * 16);
	cr_expect_eq(call(&c), EINVAL, "longer than a page");

	/* the attributes run into a page that cannot be read */
	cr_assert_eq(mprotect(p + 4096, 4096, PROT_NONE), 0);
	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	memcpy(p + 4096 - sizeof(c.hdr) - 8, &c, sizeof(c.hdr) + 8);
	cr_expect_eq(call_at(p + 4096 - sizeof(c.hdr) - 8), EFAULT);
	memcpy(p + 4096 - sizeof(c.hdr) - 16, &c, sizeof(c.hdr) + 16);
	cr_expect_eq(call_at(p + 4096 - sizeof(c.hdr) - 16), ENOSPC, "the control");
	munmap(p, 2 * 4096);
}

/* what a kernel without the object or method answers: libibverbs' cue */
Test(ioctl, unknown_methods)
{
	struct et_call c;

	et_call_init(&c, UVERBS_OBJECT_DEVICE, 0x7f);
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
	et_call_init(&c, 0x3ff, 0);
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
	/* methods of rdma-core 44 this kernel does not have (yet) */
	et_call_init(&c, UVERBS_OBJECT_WQ, UVERBS_METHOD_WQ_DESTROY);
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
	et_call_init(&c, UVERBS_OBJECT_COUNTERS, UVERBS_METHOD_COUNTERS_CREATE);
	cr_expect_eq(call(&c), EPROTONOSUPPORT);
}

Test(ioctl, attribute_refusals)
{
	struct et_call c;

	/* an unknown attribute: ignored when optional, refused when mandatory */
	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	et_attr_flags(&c, 0x77, 0, 8, 0);
	cr_expect_eq(call(&c), ENOSPC);
	c.attrs[1].flags = UVERBS_ATTR_F_MANDATORY;
	cr_expect_eq(call(&c), EPROTONOSUPPORT);

	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	et_attr_flags(&c, UVERBS_ATTR_WRITE_CMD, 0, 8, IB_USER_VERBS_CMD_QUERY_DEVICE);
	cr_expect_eq(call(&c), EINVAL, "twice");

	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	c.attrs[0].len = 4;
	cr_expect_eq(call(&c), EINVAL, "a constant is 8 bytes");
	c.attrs[0].len = 8;
	c.attrs[0].attr_data.reserved = 1;
	cr_expect_eq(call(&c), EINVAL, "attr_data.reserved");

	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
	cr_expect_eq(call(&c), EINVAL, "the mandatory command missing");

	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	et_attr_flags(&c, UVERBS_ATTR_CORE_IN, 0, 2, 0);
	cr_expect_eq(call(&c), EINVAL, "CORE_IN below 4 bytes");
}

/* ---- INVOKE_WRITE -------------------------------------------------------- */

struct pd_resp {
	struct ib_uverbs_alloc_pd_resp core;
	struct mlx5_ib_alloc_pd_resp drv;
};

static void alloc_pd_call(struct et_call *c, struct ib_uverbs_alloc_pd *req,
			  struct pd_resp *resp)
{
	probe(c, IB_USER_VERBS_CMD_ALLOC_PD);
	et_attr_flags(c, UVERBS_ATTR_CORE_IN, 0, sizeof(*req), req->response);
	et_attr_flags(c, UVERBS_ATTR_CORE_OUT, 0, sizeof(resp->core), ptr(&resp->core));
	et_attr_flags(c, UVERBS_ATTR_UHW_OUT, 0, sizeof(resp->drv), ptr(&resp->drv));
}

static void dealloc_pd(uint32_t handle)
{
	struct ib_uverbs_dealloc_pd req = { .pd_handle = handle };
	struct et_call c;

	probe(&c, IB_USER_VERBS_CMD_DEALLOC_PD);
	et_attr_flags(&c, UVERBS_ATTR_CORE_IN, 0, sizeof(req), req.pd_handle);
	cr_assert_eq(call(&c), 0);
}

Test(ioctl, invoke_write)
{
	struct ib_uverbs_alloc_pd req = { .response = 8 };	/* ignored */
	struct pd_resp resp;
	struct et_call c;

	memset(&resp, 0xa5, sizeof(resp));
	alloc_pd_call(&c, &req, &resp);
	cr_assert_eq(call(&c), 0);
	cr_expect(c.attrs[2].flags & UVERBS_ATTR_F_VALID_OUTPUT, "CORE_OUT written");
	cr_expect(c.attrs[3].flags & UVERBS_ATTR_F_VALID_OUTPUT, "UHW_OUT written");
	cr_expect_neq(resp.drv.pdn, 0xa5a5a5a5);
	dealloc_pd(resp.core.pd_handle);

	probe(&c, IB_USER_VERBS_CMD_ALLOC_PD | 0x40000000);
	cr_expect_eq(call(&c), EINVAL, "unknown flag bits");
	probe(&c, 200);
	cr_expect_eq(call(&c), EOPNOTSUPP, "no such command");
	probe(&c, IB_USER_VERBS_CMD_FLAG_EXTENDED | 60);
	cr_expect_eq(call(&c), EOPNOTSUPP, "no such extended command");
	probe(&c, -1ull);
	cr_expect_eq(call(&c), EINVAL, "a command number beyond a u32");

	alloc_pd_call(&c, &req, &resp);
	c.attrs[2].len = sizeof(resp.core) - 4;
	cr_expect_eq(call(&c), ENOSPC, "a response below the command's");
	alloc_pd_call(&c, &req, &resp);
	c.attrs[2].data = 8;
	cr_expect_eq(call(&c), EFAULT, "a response that cannot be written");
	alloc_pd_call(&c, &req, &resp);
	c.attrs[3].data = 8;
	cr_expect_eq(call(&c), EFAULT, "a driver response that cannot be written");
	alloc_pd_call(&c, &req, &resp);
	c.attrs[1].len = 16;
	c.attrs[1].data = 8;
	cr_expect_eq(call(&c), EFAULT, "a request that cannot be read");
	{
		uint64_t longer[2] = { 0, 1 };

		alloc_pd_call(&c, &req, &resp);
		c.attrs[1].len = sizeof(longer);
		c.attrs[1].data = ptr(longer);
		cr_expect_eq(call(&c), EOPNOTSUPP, "non-zero bytes past the request");
		longer[1] = 0;
		cr_assert_eq(call(&c), 0, "zeros past it");
		dealloc_pd(resp.core.pd_handle);
	}
}

/* before GET_CONTEXT only the size checks can answer */
Test(ioctl, before_get_context)
{
	struct ib_uverbs_alloc_pd req = { 0 };
	struct pd_resp resp;
	struct et_call c;
	struct mlx5dv_port info;
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC), ret;

	cr_assert_geq(fd, 0, "open: %s", strerror(errno));

	probe(&c, IB_USER_VERBS_CMD_QUERY_DEVICE);
	cr_expect_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, ENOSPC);
	alloc_pd_call(&c, &req, &resp);
	cr_expect_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, EINVAL, "no ucontext");
	et_call_init(&c, UVERBS_OBJECT_DEVICE, MLX5_IB_METHOD_QUERY_PORT);
	et_attr(&c, MLX5_IB_ATTR_QUERY_PORT_PORT_NUM, 4, 1);
	et_attr(&c, MLX5_IB_ATTR_QUERY_PORT, sizeof(info), ptr(&info));
	ret = ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
	cr_expect_eq(ret, EINVAL, "no ucontext: %s", strerror(ret));
	close(fd);
}

/* ---- GET_CONTEXT, ASYNC_EVENT_ALLOC, QUERY_CONTEXT ------------------------ */

struct uctx_resp {
	struct mlx5_ib_alloc_ucontext_resp drv;
	uint8_t more[8];
};

static int get_context_on(int fd, struct uctx_resp *out, uint32_t *num_comp,
			  uint64_t *core_support)
{
	struct mlx5_ib_alloc_ucontext_req_v2 req = {
		.total_num_bfregs = 4, .num_low_latency_bfregs = 1, .max_cqe_version = 1,
	};
	struct et_call c;

	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	et_attr_flags(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 0, 4, ptr(num_comp));
	et_attr_flags(&c, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, 0, 8, ptr(core_support));
	et_attr_flags(&c, UVERBS_ATTR_UHW_IN, 0, sizeof(req), ptr(&req));
	et_attr_flags(&c, UVERBS_ATTR_UHW_OUT, 0, sizeof(out->drv), ptr(&out->drv));
	if (ioctl(fd, RDMA_VERBS_IOCTL, &c))
		return errno;
	cr_expect(c.attrs[0].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	cr_expect(c.attrs[3].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	return 0;
}

static int async_alloc_on(int fd, int *afd)
{
	struct et_call c;

	et_call_init(&c, UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC);
	et_attr(&c, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0, 0);
	if (ioctl(fd, RDMA_VERBS_IOCTL, &c))
		return errno;
	*afd = (int)c.attrs[0].data;
	return 0;
}

/* the ucontext by ioctl: no async file until ASYNC_EVENT_ALLOC makes it */
Test(ioctl, get_context_then_async_event_alloc)
{
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC), afd = -1, again;
	struct uctx_resp r, q;
	uint32_t num_comp = 0;
	uint64_t core_support = 0;
	struct et_call c;

	cr_assert_geq(fd, 0, "open: %s", strerror(errno));
	cr_expect_eq(async_alloc_on(fd, &afd), EINVAL, "no ucontext yet");
	memset(&r, 0xa5, sizeof(r));
	cr_assert_eq(get_context_on(fd, &r, &num_comp, &core_support), 0);
	cr_expect_eq(num_comp, 4);
	cr_expect_eq(core_support, IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS);
	cr_expect_eq(r.drv.tot_bfregs, 4);
	cr_expect_eq(r.drv.cqe_version, 1);
	cr_expect_eq(get_context_on(fd, &r, &num_comp, &core_support), EINVAL,
		     "one ucontext per file");

	/* the FD attribute carries nothing in */
	et_call_init(&c, UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC);
	et_attr(&c, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 4, 0);
	cr_expect_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, EINVAL, "a length");
	cr_assert_eq(async_alloc_on(fd, &afd), 0);
	cr_assert_geq(afd, 0);
	cr_expect_eq(fcntl(afd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* another user context's (ibv_import_device()): another file */
	cr_expect_eq(async_alloc_on(fd, &again), 0);
	cr_expect_neq(again, afd);
	close(again);

	/* QUERY_CONTEXT: what GET_CONTEXT answered, zeros past the structure */
	memset(&q, 0xa5, sizeof(q));
	num_comp = 0;
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT);
	et_attr_flags(&c, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, 0, 4, ptr(&num_comp));
	et_attr(&c, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, sizeof(q), ptr(&q));
	cr_assert_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, 0);
	cr_expect_eq(num_comp, 4);
	cr_expect_eq(q.drv.tot_bfregs, r.drv.tot_bfregs);
	cr_expect_eq(q.drv.bf_reg_size, r.drv.bf_reg_size);
	cr_expect_eq(q.drv.cqe_version, r.drv.cqe_version);
	cr_expect_eq(q.drv.num_ports, r.drv.num_ports);
	for (size_t i = 0; i < sizeof(q.more); i++)
		cr_expect_eq(q.more[i], 0);
	c.attrs[1].len = offsetof(struct mlx5_ib_alloc_ucontext_resp, dump_fill_mkey);
	cr_expect_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, EINVAL,
		     "shorter than up to dump_fill_mkey");
	close(afd);
	close(fd);
}

/* QUERY_CONTEXT needs a ucontext */
Test(ioctl, query_context_before_get_context)
{
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	struct uctx_resp q;
	struct et_call c;

	cr_assert_geq(fd, 0);
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT);
	et_attr(&c, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, sizeof(q.drv), ptr(&q));
	cr_expect_eq(ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0, EINVAL);
	close(fd);
}

/* libibverbs' own context: GET_CONTEXT and ASYNC_EVENT_ALLOC by ioctl */
Test(ioctl, libibverbs_async_fd)
{
	struct ibv_async_event ev;
	int flags = fcntl(ctx->async_fd, F_GETFL);

	cr_assert_geq(flags, 0, "async fd %d: %s", ctx->async_fd, strerror(errno));
	cr_assert_eq(fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK), 0);
	errno = 0;
	cr_expect_eq(ibv_get_async_event(ctx, &ev), -1, "no event yet");
	cr_expect_eq(errno, EAGAIN);
}

/* ---- DESTROY methods ------------------------------------------------------ */

/* the handle looked up as the kernel does; the legacy handlers' rules */
Test(ioctl, destroy_methods)
{
	static char buf[4096];
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), 0) : NULL;
	struct ib_uverbs_destroy_cq_resp cresp;
	struct et_call c;

	cr_assert(pd && cq && mr);
	et_call_init(&c, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY);
	et_attr(&c, UVERBS_ATTR_DESTROY_PD_HANDLE, 0, pd->handle);
	cr_expect_eq(call(&c), EBUSY, "an MR on it");
	c.attrs[0].data = cq->handle;
	cr_expect_eq(call(&c), EINVAL, "a CQ's handle");
	c.attrs[0].data = 1u << 20;
	cr_expect_eq(call(&c), ENOENT, "no such handle");
	c.attrs[0].data = pd->handle;
	c.attrs[0].len = 4;
	cr_expect_eq(call(&c), EINVAL, "an IDR attribute has no length");

	/* the MR, then its PD; libibverbs' structures are left behind */
	et_call_init(&c, UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY);
	et_attr(&c, UVERBS_ATTR_DESTROY_MR_HANDLE, 0, mr->handle);
	cr_expect_eq(call(&c), 0);
	et_call_init(&c, UVERBS_OBJECT_PD, UVERBS_METHOD_PD_DESTROY);
	et_attr(&c, UVERBS_ATTR_DESTROY_PD_HANDLE, 0, pd->handle);
	cr_expect_eq(call(&c), 0);
	cr_expect_eq(call(&c), ENOENT, "gone");

	et_call_init(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY);
	et_attr(&c, UVERBS_ATTR_DESTROY_CQ_HANDLE, 0, cq->handle);
	cr_expect_eq(call(&c), EINVAL, "the mandatory response missing");
	memset(&cresp, 0xa5, sizeof(cresp));
	et_attr(&c, UVERBS_ATTR_DESTROY_CQ_RESP, sizeof(cresp), ptr(&cresp));
	cr_expect_eq(call(&c), 0);
	cr_expect(c.attrs[1].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	cr_expect_eq(cresp.comp_events_reported, 0);
	cr_expect_eq(cresp.async_events_reported, 0);
}

/* ---- device memory, raw ---------------------------------------------------- */

static void dm_alloc_call(struct et_call *c, uint64_t *len, uint32_t *align,
			  uint64_t *start, uint16_t *page)
{
	et_call_init(c, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
	et_attr(c, UVERBS_ATTR_ALLOC_DM_HANDLE, 0, 0);
	et_attr(c, UVERBS_ATTR_ALLOC_DM_LENGTH, 8, *len);
	et_attr(c, UVERBS_ATTR_ALLOC_DM_ALIGNMENT, 4, *align);
	et_attr(c, MLX5_IB_ATTR_ALLOC_DM_RESP_START_OFFSET, 8, ptr(start));
	et_attr(c, MLX5_IB_ATTR_ALLOC_DM_RESP_PAGE_INDEX, 2, ptr(page));
}

/* DM_ALLOC and DM_FREE as the kernel's uverbs_std_types_dm.c and mlx5 dm.c */
Test(ioctl, dm_alloc_free)
{
	uint64_t len = 4096, start;
	uint32_t align = 0;
	uint16_t page;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct et_call c, f;

	cr_assert(pd);
	dm_alloc_call(&c, &len, &align, &start, &page);
	et_attr_flags(&c, MLX5_IB_ATTR_ALLOC_DM_REQ_TYPE, 0, 8,
		      MLX5_IB_UAPI_DM_TYPE_STEERING_SW_ICM);
	cr_expect_eq(call(&c), EOPNOTSUPP, "steering ICM needs switchdev");
	c.hdr.num_attrs--;
	c.hdr.length -= sizeof(c.attrs[0]);
	c.attrs[1].data = 0;
	cr_expect_eq(call(&c), EINVAL, "length 0");
	c.attrs[1].data = len;
	c.attrs[1].len = 4;
	cr_expect_eq(call(&c), EINVAL, "the length is a u64");
	c.attrs[1].len = 8;
	c.attrs[4].data = 8;
	cr_expect_eq(call(&c), EFAULT, "an output that cannot be written");
	c.attrs[4].data = ptr(&page);
	cr_assert_eq(call(&c), 0);
	cr_expect(c.attrs[3].flags & UVERBS_ATTR_F_VALID_OUTPUT);
	cr_expect_eq(start & 4095, 0);

	et_call_init(&f, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE);
	et_attr(&f, UVERBS_ATTR_FREE_DM_HANDLE, 0, pd->handle);
	cr_expect_eq(call(&f), EINVAL, "a PD's handle");
	f.attrs[0].data = c.attrs[0].data;	/* the new handle came back in .data */
	cr_expect_eq(call(&f), 0);
	cr_expect_eq(call(&f), ENOENT, "freed");
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

/* an object's destroy method: its handle attribute and response (length 0: none) */
struct destroyer {
	uint16_t object, method, handle_attr, resp_attr, resp_len;
};

static const struct destroyer dm_free = {
	UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE, UVERBS_ATTR_FREE_DM_HANDLE, 0, 0 };
static const struct destroyer mr_destroy = {
	UVERBS_OBJECT_MR, UVERBS_METHOD_MR_DESTROY, UVERBS_ATTR_DESTROY_MR_HANDLE, 0, 0 };
static const struct destroyer cq_destroy = {
	UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY, UVERBS_ATTR_DESTROY_CQ_HANDLE,
	UVERBS_ATTR_DESTROY_CQ_RESP, sizeof(struct ib_uverbs_destroy_cq_resp) };
static const struct destroyer srq_destroy = {
	UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY, UVERBS_ATTR_DESTROY_SRQ_HANDLE,
	UVERBS_ATTR_DESTROY_SRQ_RESP, sizeof(struct ib_uverbs_destroy_srq_resp) };
static const struct destroyer qp_destroy = {
	UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY, UVERBS_ATTR_DESTROY_QP_HANDLE,
	UVERBS_ATTR_DESTROY_QP_RESP, sizeof(struct ib_uverbs_destroy_qp_resp) };

/* the destroy method on a handle: 0 or the errno (ENOENT: no such object) */
static int destroy(const struct destroyer *d, uint64_t handle)
{
	uint8_t resp[64];
	struct et_call c;

	et_call_init(&c, d->object, d->method);
	et_attr(&c, d->handle_attr, 0, handle);
	if (d->resp_len)
		et_attr(&c, d->resp_attr, d->resp_len, ptr(resp));
	return call(&c);
}

/*
 * The create call with its attributes from output `out` on in a read-only
 * page (et_call_ro_from()): EFAULT, and the object it made is gone.
 */
static void expect_aborted(struct et_call *c, unsigned out, const struct destroyer *d)
{
	cr_expect_eq(et_call_ro_from(ctx->cmd_fd, &c->hdr, out), EFAULT, "output %u", out);
	cr_expect_eq(destroy(d, c->attrs[0].data), ENOENT,
		     "the object went with the call (output %u)", out);
}

/*
 * An output of DM_ALLOC that cannot be flagged written fails the call after
 * the DM is made: handle_alloc_dm_memic()'s copy fails, and the DM is freed
 * with its pages (the handle names nothing, the whole area is free again).
 */
Test(ioctl, dm_alloc_output_not_written)
{
	uint64_t len = 4096, start;
	uint32_t align = 0;
	uint16_t page;
	struct ibv_device_attr_ex ax;
	struct ibv_dm *dm;
	struct et_call c;

	for (unsigned out = 3; out <= 4; out++) {	/* START_OFFSET, then PAGE_INDEX */
		dm_alloc_call(&c, &len, &align, &start, &page);
		expect_aborted(&c, out, &dm_free);
	}
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	dm = ibv_alloc_dm(ctx, &(struct ibv_alloc_dm_attr){ .length = ax.max_dm_size });
	cr_assert(dm, "every page free again: %s", strerror(errno));
	cr_assert_eq(ibv_free_dm(dm), 0);
}

/*
 * ... and DM_MR_REG's keys: the MR is deregistered (uverbs_std_types_mr.c
 * copies them after uverbs_finalize_uobj_create()), so neither the DM nor
 * the PD is held; a call that can write them holds both.
 */
Test(ioctl, reg_dm_mr_keys_not_written)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_dm *dm = ibv_alloc_dm(ctx, &(struct ibv_alloc_dm_attr){ .length = 4096 });
	uint32_t lkey, rkey;
	struct et_call c;

	cr_assert(pd && dm);
	et_call_init(&c, UVERBS_OBJECT_MR, UVERBS_METHOD_DM_MR_REG);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_HANDLE, 0, 0);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_OFFSET, 8, 0);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_LENGTH, 8, 4096);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_PD_HANDLE, 0, pd->handle);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, 4,
		IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_DM_HANDLE, 0, dm->handle);
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, 4, ptr(&lkey));
	et_attr(&c, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, 4, ptr(&rkey));
	for (unsigned out = 6; out <= 7; out++) {	/* LKEY, then RKEY */
		expect_aborted(&c, out, &mr_destroy);
	}
	cr_assert_eq(call(&c), 0, "the same call, its keys writable");
	cr_expect_eq(ibv_free_dm(dm), EBUSY, "the MR holds the DM");
	cr_expect_eq(destroy(&mr_destroy, c.attrs[0].data), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
	cr_expect_eq(ibv_dealloc_pd(pd), 0);
}

/* ---- CQ_CREATE ------------------------------------------------------------- */

struct cq_call {
	struct et_call c;
	struct mlx5_ib_create_cq drv;
	struct mlx5_ib_create_cq_resp drv_resp;
	uint32_t resp_cqe;
};

static void cq_create_call(struct cq_call *q, void *ring, void *db)
{
	memset(&q->drv, 0, sizeof(q->drv));
	q->drv.buf_addr = ptr(ring);
	q->drv.db_addr = ptr(db);
	q->drv.cqe_size = 64;
	/* libmlx5's context has dynamic UARs only: a CQ names one */
	q->drv.flags = MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX;
	q->drv.uar_page_index = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC)->page_id;
	et_call_init(&q->c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	et_attr(&q->c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0);
	et_attr(&q->c, UVERBS_ATTR_CREATE_CQ_CQE, 4, 16);
	et_attr(&q->c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, 8, 0x1234);
	et_attr(&q->c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, 4, 0);
	et_attr(&q->c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, ptr(&q->resp_cqe));
	et_attr_flags(&q->c, UVERBS_ATTR_UHW_IN, 0, sizeof(q->drv), ptr(&q->drv));
	et_attr_flags(&q->c, UVERBS_ATTR_UHW_OUT, 0, sizeof(q->drv_resp), ptr(&q->drv_resp));
}

/* the extended CREATE_CQ's rules, from attributes; FD attributes checked */
Test(ioctl, cq_create)
{
	uint8_t *ring = aligned_alloc(4096, 4096), *db = aligned_alloc(4096, 4096);
	struct ib_uverbs_destroy_cq_resp dresp;
	struct cq_call q;
	struct et_call d;

	cr_assert(ring && db);
	cq_create_call(&q, ring, db);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, 0, 0, 0);
	cr_expect_eq(call(&q.c), EBADF, "stdin is no completion channel");
	q.c.attrs[7].attr_id = UVERBS_ATTR_CREATE_CQ_EVENT_FD;
	cr_expect_eq(call(&q.c), EBADF, "nor this context's async file");
	q.c.attrs[7].attr_id = UVERBS_ATTR_CREATE_CQ_FLAGS;
	q.c.attrs[7].len = 4;
	q.c.attrs[7].data = 1u << 7;
	cr_expect_eq(call(&q.c), EINVAL, "an unknown CQ flag");
	q.c.attrs[7].data = ctx->async_fd;
	q.c.attrs[7].attr_id = UVERBS_ATTR_CREATE_CQ_EVENT_FD;
	cr_expect_eq(call(&q.c), EINVAL, "an FD attribute has no length");
	q.c.attrs[7].len = 0;
	q.c.attrs[3].data = 99;
	cr_expect_eq(call(&q.c), EINVAL, "comp_vector beyond the device's");
	q.c.attrs[3].data = 0;

	cr_assert_eq(call(&q.c), 0, "%s", strerror(call(&q.c)));
	cr_expect_eq(q.resp_cqe, 31);
	cr_expect(q.c.attrs[6].flags & UVERBS_ATTR_F_VALID_OUTPUT, "UHW_OUT written");
	cr_expect_neq(q.drv_resp.cqn, 0);

	et_call_init(&d, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY);
	et_attr(&d, UVERBS_ATTR_DESTROY_CQ_HANDLE, 0, q.c.attrs[0].data);
	et_attr(&d, UVERBS_ATTR_DESTROY_CQ_RESP, sizeof(dresp), ptr(&dresp));
	cr_expect_eq(call(&d), 0, "the handle came back in .data");
	free(ring);
	free(db);
}

/*
 * CQ_CREATE's outputs copied after uverbs_finalize_uobj_create(): RESP_CQE
 * that cannot be flagged written, or UHW_OUT (flagged by the framework
 * after the method), fails the call and destroys the CQ.
 */
Test(ioctl, cq_create_output_not_written)
{
	static const unsigned outs[] = { 4, 6 };	/* RESP_CQE, UHW_OUT */
	uint8_t *ring = aligned_alloc(4096, 4096), *db = aligned_alloc(4096, 4096);
	struct cq_call q;

	cr_assert(ring && db);
	for (unsigned i = 0; i < 2; i++) {
		cq_create_call(&q, ring, db);
		expect_aborted(&q.c, outs[i], &cq_destroy);
	}
	free(ring);
	free(db);
}

/* ---- SRQ_CREATE ------------------------------------------------------------ */

struct srq_call {
	struct et_call c;
	struct mlx5_ib_create_srq drv;
	struct mlx5_ib_create_srq_resp drv_resp;
	uint32_t max_wr, max_sge, srqn;
};

static void srq_create_call(struct srq_call *q, uint32_t pd_handle, uint64_t type,
			    void *ring, void *db)
{
	memset(q, 0, sizeof(*q));
	q->drv.buf_addr = ptr(ring);
	q->drv.db_addr = ptr(db);
	et_call_init(&q->c, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_HANDLE, 0, 0);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_TYPE, 8, type);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_USER_HANDLE, 8, 0x99);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_PD_HANDLE, 0, pd_handle);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_MAX_WR, 4, 15);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_MAX_SGE, 4, 1);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_LIMIT, 4, 0);
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_WR, 4, ptr(&q->max_wr));
	et_attr(&q->c, UVERBS_ATTR_CREATE_SRQ_RESP_MAX_SGE, 4, ptr(&q->max_sge));
	et_attr_flags(&q->c, UVERBS_ATTR_UHW_IN, 0, sizeof(q->drv), ptr(&q->drv));
	et_attr_flags(&q->c, UVERBS_ATTR_UHW_OUT, 0, sizeof(q->drv_resp), ptr(&q->drv_resp));
}

/* CREATE_XSRQ's rules from attributes; the objects the type needs */
Test(ioctl, srq_create)
{
	uint8_t *ring = aligned_alloc(4096, 4096), *db = aligned_alloc(4096, 4096);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ib_uverbs_destroy_srq_resp dresp;
	struct srq_call q;
	struct et_call d;

	cr_assert(ring && db && pd && cq);
	srq_create_call(&q, pd->handle, IBV_SRQT_XRC, ring, db);
	cr_expect_eq(call(&q.c), ENOENT, "XRC without its CQ");
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_SRQ_CQ_HANDLE, 0, 0, cq->handle);
	cr_expect_eq(call(&q.c), ENOENT, "XRC without its domain");
	q.c.attrs[1].data = 7;
	cr_expect_eq(call(&q.c), EINVAL, "no such SRQ type");
	q.c.attrs[1].data = IBV_SRQT_BASIC;
	q.c.attrs[3].data = cq->handle;
	cr_expect_eq(call(&q.c), EINVAL, "a CQ's handle for the PD");
	q.c.attrs[3].data = pd->handle;
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_SRQ_EVENT_FD, 0, 0, 0);
	cr_expect_eq(call(&q.c), EBADF, "stdin is not the async file");
	q.c.attrs[12].data = ctx->async_fd;

	cr_assert_eq(call(&q.c), 0, "%s", strerror(call(&q.c)));
	cr_expect_geq(q.max_wr, 15);
	cr_expect_eq(q.max_sge, 1);
	cr_expect(q.c.attrs[10].flags & UVERBS_ATTR_F_VALID_OUTPUT, "UHW_OUT written");
	cr_expect_neq(q.drv_resp.srqn, 0);

	et_call_init(&d, UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_DESTROY);
	et_attr(&d, UVERBS_ATTR_DESTROY_SRQ_HANDLE, 0, q.c.attrs[0].data);
	et_attr(&d, UVERBS_ATTR_DESTROY_SRQ_RESP, sizeof(dresp), ptr(&dresp));
	cr_expect_eq(call(&d), 0, "the handle came back in .data");
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	free(ring);
	free(db);
}

/* ... SRQ_CREATE's the same: RESP_MAX_WR, RESP_MAX_SGE or UHW_OUT */
Test(ioctl, srq_create_output_not_written)
{
	uint8_t *ring = aligned_alloc(4096, 4096), *db = aligned_alloc(4096, 4096);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct srq_call q;

	cr_assert(ring && db && pd);
	for (unsigned out = 7; out <= 10; out++) {
		if (out == 9)
			continue;	/* UHW_IN, an input */
		srq_create_call(&q, pd->handle, IBV_SRQT_BASIC, ring, db);
		expect_aborted(&q.c, out, &srq_destroy);
	}
	cr_expect_eq(ibv_dealloc_pd(pd), 0, "no SRQ holds the PD");
	free(ring);
	free(db);
}

/* ---- QP_CREATE ------------------------------------------------------------- */

struct qp_call {
	struct et_call c;
	struct ib_uverbs_qp_cap cap, resp_cap;
	uint32_t qpn;
};

/* the mandatory attributes; the objects are the test's to add */
static void qp_create_call(struct qp_call *q, uint64_t type)
{
	memset(q, 0, sizeof(*q));
	q->cap = (struct ib_uverbs_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
					    .max_send_sge = 1, .max_recv_sge = 1 };
	et_call_init(&q->c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE);
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_HANDLE, 0, 0);
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_USER_HANDLE, 8, 0x77);
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_CAP, sizeof(q->cap), ptr(&q->cap));
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_TYPE, 8, type);
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(q->resp_cap), ptr(&q->resp_cap));
	et_attr(&q->c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4, ptr(&q->qpn));
}

/*
 * The checks of the kernel's QP_CREATE handler, before the device sees the
 * QP (the success path is libibverbs': every ibv_create_qp() takes it, and
 * the only one on an imported context, tests/emu/device/test_import.c).
 */
Test(ioctl, qp_create_refusals)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq = ibv_create_srq(pd, &(struct ibv_srq_init_attr){
		.attr = { .max_wr = 4, .max_sge = 1 } });
	struct qp_call q;

	cr_assert(pd && cq && srq);
	qp_create_call(&q, IBV_QPT_RC);
	cr_expect_eq(call(&q.c), ENOENT, "RC without a PD");
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0, pd->handle);
	cr_expect_eq(call(&q.c), ENOENT, "RC without its send CQ");
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, 0, cq->handle);
	cr_expect_eq(call(&q.c), ENOENT, "RC without its receive CQ");
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, 0, pd->handle);
	cr_expect_eq(call(&q.c), EINVAL, "a PD's handle for the receive CQ");
	q.c.attrs[8].data = cq->handle;
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, 0, 4,
		      IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	cr_expect_eq(call(&q.c), EINVAL, "multicast loopback blocked on RC");
	q.c.attrs[9].data = 1u << 20;
	cr_expect_eq(call(&q.c), EINVAL, "a flag the kernel does not know");
	q.c.attrs[9].data = IB_UVERBS_QP_CREATE_SQ_SIG_ALL;
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_EVENT_FD, 0, 0, 0);
	cr_expect_eq(call(&q.c), EBADF, "stdin is not the async file");
	q.c.attrs[10].data = ctx->async_fd;
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, 0, 0, 12345);
	cr_expect_eq(call(&q.c), ENOENT, "no such indirection table");
	q.c.attrs[11].data = pd->handle;
	cr_expect_eq(call(&q.c), EINVAL, "a PD's handle for the indirection table");
	/* which objects a type may name is checked before any is looked up */
	q.c.attrs[11].attr_id = UVERBS_ATTR_CREATE_QP_XRCD_HANDLE;
	cr_expect_eq(call(&q.c), EINVAL, "an XRC domain on an RC QP");
	q.c.attrs[3].data = 99;
	cr_expect_eq(call(&q.c), EINVAL, "no such QP type");

	qp_create_call(&q, IBV_QPT_XRC_RECV);
	cr_expect_eq(call(&q.c), ENOENT, "an XRC target without its domain");
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, 0, 0, 0);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0, pd->handle);
	cr_expect_eq(call(&q.c), EINVAL, "an XRC target with a PD");

	qp_create_call(&q, IBV_QPT_XRC_SEND);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0, pd->handle);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, 0, cq->handle);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, 0, 0, srq->handle);
	cr_expect_eq(call(&q.c), EINVAL, "an XRC initiator with an SRQ");

	qp_create_call(&q, IBV_QPT_UD);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0, pd->handle);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, 0, cq->handle);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, 0, cq->handle);
	et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_FLAGS, 0, 4, IB_UVERBS_QP_CREATE_SCATTER_FCS);
	cr_expect_eq(call(&q.c), EINVAL, "FCS scatter outside a raw packet QP");

	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
}

/*
 * QP_CREATE's outputs copied after uverbs_finalize_uobj_create(): RESP_CAP,
 * RESP_QP_NUM or UHW_OUT that cannot be flagged written fails the call and
 * destroys the QP, which then holds neither its CQ nor its PD.  The call
 * is libmlx5's for an RC QP on a UAR of its own.
 */
Test(ioctl, qp_create_output_not_written)
{
	static const unsigned outs[] = { 4, 5, 10 };	/* RESP_CAP, RESP_QP_NUM, UHW_OUT */
	uint8_t *ring = aligned_alloc(4096, 4096), *db = aligned_alloc(4096, 4096);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct mlx5dv_devx_uar *uar = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct mlx5_ib_create_qp drv = { .sq_wqe_count = 4, .rq_wqe_count = 4,
					 .rq_wqe_shift = 6,
					 .flags = MLX5_QP_FLAG_UAR_PAGE_INDEX };
	struct mlx5_ib_create_qp_resp drv_resp;
	struct qp_call q;

	cr_assert(ring && db && pd && cq && uar);
	drv.buf_addr = ptr(ring);
	drv.db_addr = ptr(db);
	drv.bfreg_index = uar->page_id;
	for (unsigned i = 0; i <= 3; i++) {
		qp_create_call(&q, IBV_QPT_RC);
		et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0, pd->handle);
		et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, 0, cq->handle);
		et_attr_flags(&q.c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, 0, cq->handle);
		et_attr_flags(&q.c, UVERBS_ATTR_UHW_IN, 0, sizeof(drv), ptr(&drv));
		et_attr_flags(&q.c, UVERBS_ATTR_UHW_OUT, 0, sizeof(drv_resp), ptr(&drv_resp));
		if (i == 3) {
			cr_assert_eq(call(&q.c), 0, "the same call, its outputs writable");
			break;
		}
		expect_aborted(&q.c, outs[i], &qp_destroy);
	}
	cr_expect_eq(ibv_destroy_cq(cq), EBUSY, "the QP holds its CQ");
	cr_expect_eq(destroy(&qp_destroy, q.c.attrs[0].data), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
	cr_expect_eq(ibv_dealloc_pd(pd), 0);
	mlx5dv_devx_free_uar(uar);
	free(ring);
	free(db);
}
