/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Reserved QP numbers (emu/kernel/reserved_qpn.c): the RESERVED_QPN
 * general object type and the second general caps page that bounds it,
 * mlx5dv_reserved_qpn_alloc() and _dealloc() on them, and the objects
 * themselves through DEVX: ranges out of the host's QP number space that
 * no QP or DC target is given while they are held, given back when the
 * object is destroyed or its context closed, and the firmware's refusals.
 */
#include <sys/mman.h>

#include <rdma/mlx5_user_ioctl_cmds.h>

#include "emu_test.h"
#include "prm_test.h"

ET_CTX_PD_SUITE(reserved_qpn);

/* mlx5_ifc.h: the general object header, the two general caps pages */
#define OBJ_TYPE	0x30, 16
#define LOG_OBJ_RANGE	0x63, 5
#define OBJ_ID		0x40, 32
#define CAP_HCA_CAP_2		CAP(0x020, 1)
#define CAP_OBJ_TYPES_63_32	CAP(0x400, 32)	/* general_obj_types, 64 bits */
#define CAP_OBJ_TYPES_31_0	CAP(0x420, 32)
#define CAP2_LOG_MAX_NUM	CAP(0x08b, 5)	/* log_max_num_reserved_qpn */
#define CAP2_LOG_GRANULARITY	CAP(0x093, 5)	/* log_reserved_qpn_granularity */
#define CAP2_LOG_MAX_ALLOC	CAP(0x09b, 5)	/* log_reserved_qpn_max_alloc */
enum { CREATE_GENERAL_OBJECT = 0xa00, OBJ_RESERVED_QPN = 0x2c };

/* the caps of this model (emu/kernel/internal.h), which the caps test checks */
#define LOG_GRANULARITY	3
#define LOG_MAX_ALLOC	10
#define LOG_MAX_NUM	13

/* the numbers a host of the emulator has: host << 14 | 1..16383 */
#define HOST_QPNS	(1u << 14)

static void query_cap(uint16_t op_mod, uint32_t *out, size_t out_len)
{
	uint32_t in[4] = { 0 };

	prm_set(in, OPCODE, QUERY_HCA_CAP);
	prm_set(in, OP_MOD, op_mod);
	cr_assert_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, out_len), 0);
}

/*
 * CREATE_GENERAL_OBJECT of 2^log_n reserved numbers on c: the object, or
 * NULL with errno; the command's output in out.
 */
static struct mlx5dv_devx_obj *reserve_cmd(struct ibv_context *c, unsigned log_n,
					   uint32_t out[4])
{
	uint32_t in[8] = { 0 };

	memset(out, 0, 4 * sizeof(out[0]));
	prm_set(in, OPCODE, CREATE_GENERAL_OBJECT);
	prm_set(in, OBJ_TYPE, OBJ_RESERVED_QPN);
	prm_set(in, LOG_OBJ_RANGE, log_n);
	return mlx5dv_devx_obj_create(c, in, sizeof(in), out, 4 * sizeof(out[0]));
}

/* reserve_cmd(), its first number in *first, the status of a refusal in *status */
static struct mlx5dv_devx_obj *reserve(struct ibv_context *c, unsigned log_n,
				       uint32_t *first, uint32_t *status)
{
	uint32_t out[4];
	struct mlx5dv_devx_obj *o = reserve_cmd(c, log_n, out);

	*first = prm_get(out, OBJ_ID);
	*status = prm_get(out, STATUS);
	return o;
}

/* One RESERVED_QPN type, the second caps page: what libmlx5 reads them for */
Test(reserved_qpn, caps)
{
	static uint32_t out[0x1010 / 4];

	for (uint16_t cur = 0; cur < 2; cur++) {
		query_cap(cur, out, sizeof(out));
		cr_expect_eq(prm_get(out, CAP_OBJ_TYPES_63_32), 1u << (OBJ_RESERVED_QPN - 32));
		cr_expect_eq(prm_get(out, CAP_OBJ_TYPES_31_0), 0);
		cr_expect_eq(prm_get(out, CAP_HCA_CAP_2), 1);
		query_cap(0x20 << 1 | cur, out, sizeof(out));
		cr_expect_eq(prm_get(out, STATUS), 0);
		cr_expect_eq(prm_get(out, CAP2_LOG_GRANULARITY), LOG_GRANULARITY);
		cr_expect_eq(prm_get(out, CAP2_LOG_MAX_ALLOC), LOG_MAX_ALLOC);
		cr_expect_eq(prm_get(out, CAP2_LOG_MAX_NUM), LOG_MAX_NUM);
	}
	/* the host keeps numbers for its QPs */
	cr_expect_lt(1u << LOG_MAX_NUM, HOST_QPNS);
}

/* mlx5dv_reserved_qpn_alloc(): distinct numbers of this host; _dealloc() of each once */
Test(reserved_qpn, alloc_dealloc)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	uint32_t qpn[20];

	cr_assert(cq);
	qp = ibv_create_qp(pd, &qa);
	cr_assert(qp);
	for (unsigned i = 0; i < sizeof(qpn) / sizeof(qpn[0]); i++) {
		cr_assert_eq(mlx5dv_reserved_qpn_alloc(ctx, &qpn[i]), 0);
		cr_expect_eq(qpn[i] >> 24, 0);
		cr_expect_eq(qpn[i] / HOST_QPNS, qp->qp_num / HOST_QPNS, "%#x, a QP %#x",
			     qpn[i], qp->qp_num);
		cr_expect_neq(qpn[i], qp->qp_num);
		for (unsigned j = 0; j < i; j++)
			cr_expect_neq(qpn[i], qpn[j]);
	}
	for (unsigned i = 0; i < sizeof(qpn) / sizeof(qpn[0]); i++)
		cr_expect_eq(mlx5dv_reserved_qpn_dealloc(ctx, qpn[i]), 0);
	/* twice, or a number never given: libmlx5's EINVAL */
	cr_expect_eq(mlx5dv_reserved_qpn_dealloc(ctx, qpn[0]), EINVAL);
	cr_expect_eq(mlx5dv_reserved_qpn_dealloc(ctx, qp->qp_num), EINVAL);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

#define BATCH	1024

/*
 * Numbers held by an object (2^LOG_MAX_ALLOC) and through libmlx5 (8) are
 * given to no QP or DC target: QPs are created BATCH at a time, each batch
 * then destroyed, as many as the space has numbers, so the QPNs, given out
 * in turn, go round all of it.
 */
Test(reserved_qpn, never_given_to_a_qp, .timeout = 120)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr_ex da = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_DRIVER, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct mlx5dv_qp_init_attr dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = 0x1234 },
	};
	static struct ibv_qp *qps[BATCH];
	struct mlx5dv_devx_obj *obj;
	uint32_t first, status, api[8];
	unsigned created = 0;

	cr_assert(cq && srq);
	obj = reserve(ctx, LOG_MAX_ALLOC, &first, &status);
	cr_assert(obj, "RESERVED_QPN: %s, status %#x", strerror(errno), status);
	cr_expect_eq(first % (1u << LOG_MAX_ALLOC), 0, "%#x: aligned to its size", first);
	for (unsigned i = 0; i < sizeof(api) / sizeof(api[0]); i++)
		cr_assert_eq(mlx5dv_reserved_qpn_alloc(ctx, &api[i]), 0);

	while (created < HOST_QPNS) {
		for (unsigned i = 0; i < BATCH; i++, created++) {
			/* every 64th a DC target, which takes its number from the same space */
			qps[i] = i % 64 ? ibv_create_qp_ex(ctx, &qa) : mlx5dv_create_qp(ctx, &da, &dv);
			cr_assert(qps[i], "QP %u: %s", created, strerror(errno));
			cr_assert(qps[i]->qp_num - first >= 1u << LOG_MAX_ALLOC,
				  "QP %u got %#x, reserved %#x..", created, qps[i]->qp_num, first);
			for (unsigned j = 0; j < sizeof(api) / sizeof(api[0]); j++)
				cr_assert_neq(qps[i]->qp_num, api[j], "QP %u", created);
		}
		for (unsigned i = 0; i < BATCH; i++)
			cr_assert_eq(ibv_destroy_qp(qps[i]), 0);
	}
	for (unsigned i = 0; i < sizeof(api) / sizeof(api[0]); i++)
		cr_expect_eq(mlx5dv_reserved_qpn_dealloc(ctx, api[i]), 0);
	cr_assert_eq(mlx5dv_devx_obj_destroy(obj), 0);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/*
 * The host holds at most 2^LOG_MAX_NUM numbers (LIM beyond, libmlx5's
 * ENOMEM); a destroyed object gives its range back, and so does every
 * object of a context that is closed.
 */
Test(reserved_qpn, released_on_destroy_and_close)
{
	enum { N = 1u << (LOG_MAX_NUM - LOG_MAX_ALLOC) };
	struct mlx5dv_devx_obj *obj[N], *extra;
	struct ibv_context *c2 = et_open();
	uint32_t first[N], f, status;

	for (unsigned i = 0; i < N; i++) {
		obj[i] = reserve(c2, LOG_MAX_ALLOC, &first[i], &status);
		cr_assert(obj[i], "range %u: %s, status %#x", i, strerror(errno), status);
		for (unsigned j = 0; j < i; j++)
			cr_expect_neq(first[i], first[j]);
	}
	/* the limit is the host's, whichever context asks */
	cr_expect(!reserve(ctx, LOG_GRANULARITY, &f, &status));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(status, STAT_LIM);
	cr_expect_eq(mlx5dv_reserved_qpn_alloc(ctx, &f), ENOMEM);

	cr_assert_eq(mlx5dv_devx_obj_destroy(obj[0]), 0);
	extra = reserve(ctx, LOG_MAX_ALLOC, &f, &status);
	cr_assert(extra, "after a destroy: %s, status %#x", strerror(errno), status);
	cr_expect(!reserve(ctx, LOG_GRANULARITY, &f, &status));
	cr_expect_eq(status, STAT_LIM);
	cr_assert_eq(mlx5dv_devx_obj_destroy(extra), 0);

	/* the other seven go with their context */
	cr_assert_eq(ibv_close_device(c2), 0);
	for (unsigned i = 0; i < N; i++) {
		obj[i] = reserve(ctx, LOG_MAX_ALLOC, &first[i], &status);
		cr_assert(obj[i], "range %u after the close: %s, status %#x", i, strerror(errno),
			  status);
	}
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(mlx5dv_devx_obj_destroy(obj[i]), 0);
}

/* Ranges the second caps page does not allow, another general object type */
Test(reserved_qpn, bad_input)
{
	uint32_t in[8] = { 0 }, out[4], f, status;

	cr_expect(!reserve(ctx, LOG_GRANULARITY - 1, &f, &status));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(status, STAT_BAD_PARAM);
	cr_expect(!reserve(ctx, LOG_MAX_ALLOC + 1, &f, &status));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(status, STAT_BAD_PARAM);
	/* a type the device does not have (general_obj_types): BAD_OP */
	prm_set(in, OPCODE, CREATE_GENERAL_OBJECT);
	prm_set(in, OBJ_TYPE, OBJ_RESERVED_QPN + 1);
	prm_set(in, LOG_OBJ_RANGE, LOG_GRANULARITY);
	memset(out, 0, sizeof(out));
	cr_expect(!mlx5dv_devx_obj_create(ctx, in, sizeof(in), out, sizeof(out)));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_BAD_OP);
}

/* DEVX_OBJ_DESTROY by raw ioctl: the handle's lookups, as the framework does them */
static int destroy_call(int fd, uint16_t object, uint16_t method, uint16_t attr, uint64_t handle)
{
	struct et_call c;

	et_call_init(&c, object, method);
	et_attr(&c, attr, 0, handle);
	return et_call_on(fd, &c);
}

static int devx_destroy(uint64_t handle)
{
	return destroy_call(ctx->cmd_fd, MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_DESTROY,
			    MLX5_IB_ATTR_DEVX_OBJ_DESTROY_HANDLE, handle);
}

/* reserve() by raw ioctl on ctx, for the handle libmlx5 keeps to itself: 0 or the errno */
static int reserve_raw(unsigned log_n, uint32_t *handle)
{
	uint32_t in[8] = { 0 }, out[4] = { 0 };
	struct et_call c;
	int ret;

	prm_set(in, OPCODE, CREATE_GENERAL_OBJECT);
	prm_set(in, OBJ_TYPE, OBJ_RESERVED_QPN);
	prm_set(in, LOG_OBJ_RANGE, log_n);
	et_call_init(&c, MLX5_IB_OBJECT_DEVX_OBJ, MLX5_IB_METHOD_DEVX_OBJ_CREATE);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_HANDLE, 0, 0);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_IN, sizeof(in), (uint64_t)(uintptr_t)in);
	et_attr(&c, MLX5_IB_ATTR_DEVX_OBJ_CREATE_CMD_OUT, sizeof(out), (uint64_t)(uintptr_t)out);
	ret = et_call_on(ctx->cmd_fd, &c);
	*handle = (uint32_t)c.attrs[0].data;
	return ret;
}

/*
 * A range destroyed once only, by its own handle: twice is ENOENT, the
 * handle through the packet pacing method or another object's handle
 * through DEVX's is EINVAL, and none of these gives numbers back.
 */
Test(reserved_qpn, destroyed_once)
{
	enum { N = 1u << (LOG_MAX_NUM - LOG_MAX_ALLOC) };
	uint32_t h[N], f, status;
	struct mlx5dv_devx_obj *again;
	struct mlx5dv_pp *pp;

	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(reserve_raw(LOG_MAX_ALLOC, &h[i]), 0, "range %u", i);
	pp = mlx5dv_pp_alloc(ctx, 4, (uint8_t[4]){ 0, 0, 0, 100 }, 0);
	cr_assert(pp, "%s", strerror(errno));
	cr_expect_eq(destroy_call(ctx->cmd_fd, MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_DESTROY,
				  MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE, h[0]), EINVAL);
	cr_expect_eq(devx_destroy(pd->handle), EINVAL);
	cr_expect_eq(devx_destroy(UINT64_MAX), EINVAL);
	cr_assert_eq(devx_destroy(h[0]), 0);
	cr_expect_eq(devx_destroy(h[0]), ENOENT);
	/* one range came back, once */
	again = reserve(ctx, LOG_MAX_ALLOC, &f, &status);
	cr_assert(again, "%s, status %#x", strerror(errno), status);
	cr_expect(!reserve(ctx, LOG_GRANULARITY, &f, &status));
	cr_expect_eq(status, STAT_LIM);
	cr_assert_eq(mlx5dv_devx_obj_destroy(again), 0);
	for (unsigned i = 1; i < N; i++)
		cr_assert_eq(devx_destroy(h[i]), 0);
	mlx5dv_pp_free(pp);
}

/*
 * An answer the kernel cannot copy out fails the create, and the range
 * goes with it (devx_obj_create(): uverbs_finalize_uobj_create(), then the
 * abort runs DESTROY_GENERAL_OBJECT): the host's whole quota is free after.
 */
Test(reserved_qpn, answer_not_writable)
{
	enum { N = 1u << (LOG_MAX_NUM - LOG_MAX_ALLOC) };
	uint32_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t in[8] = { 0 }, first, status;
	struct mlx5dv_devx_obj *obj[N];

	cr_assert_neq(ro, MAP_FAILED);
	prm_set(in, OPCODE, CREATE_GENERAL_OBJECT);
	prm_set(in, OBJ_TYPE, OBJ_RESERVED_QPN);
	prm_set(in, LOG_OBJ_RANGE, LOG_MAX_ALLOC);
	for (unsigned i = 0; i < 3; i++) {
		cr_expect(!mlx5dv_devx_obj_create(ctx, in, sizeof(in), ro, 16));
		cr_expect_eq(errno, EFAULT);
	}
	for (unsigned i = 0; i < N; i++) {
		obj[i] = reserve(ctx, LOG_MAX_ALLOC, &first, &status);
		cr_assert(obj[i], "range %u: %s, status %#x", i, strerror(errno), status);
	}
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(mlx5dv_devx_obj_destroy(obj[i]), 0);
	munmap(ro, 4096);
}

/* a range skips the numbers of QPs that live: it is taken around them */
Test(reserved_qpn, around_live_qps)
{
	enum { NQP = 40, NR = 8 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mlx5dv_devx_obj *obj[NR];
	struct ibv_qp *qp[NQP];
	uint32_t first[NR], status;

	cr_assert(cq);
	for (unsigned i = 0; i < NQP; i++)
		cr_assert((qp[i] = ibv_create_qp(pd, &qa)), "QP %u: %s", i, strerror(errno));
	for (unsigned r = 0; r < NR; r++) {
		obj[r] = reserve(ctx, LOG_GRANULARITY, &first[r], &status);
		cr_assert(obj[r], "range %u: %s, status %#x", r, strerror(errno), status);
		for (unsigned i = 0; i < NQP; i++)
			cr_expect(qp[i]->qp_num - first[r] >= 1u << LOG_GRANULARITY,
				  "QP %#x in range %#x", qp[i]->qp_num, first[r]);
	}
	for (unsigned r = 0; r < NR; r++)
		cr_assert_eq(mlx5dv_devx_obj_destroy(obj[r]), 0);
	for (unsigned i = 0; i < NQP; i++)
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/*
 * Under the host's limit, but with no free range of the size asked for:
 * NO_RES (libmlx5's mlx5_cmd_status_to_err() makes it EAGAIN).  Seven
 * ranges of 2^LOG_MAX_ALLOC are held, and a live QP in each of the other
 * eight (range 0, whose first number is no QPN, is never one): the eighth
 * range the limit allows has nowhere to go, while a smaller one fits
 * around the QPs, and the range of a QP destroyed is free again.  QPNs
 * are given out in turn: the QPs go round the space until each of those
 * ranges has one.
 */
Test(reserved_qpn, no_free_range, .timeout = 120)
{
	enum {
		RANGES = HOST_QPNS >> LOG_MAX_ALLOC,
		HELD = (1u << (LOG_MAX_NUM - LOG_MAX_ALLOC)) - 1,
		TO_BLOCK = RANGES - 1 - HELD,
	};
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct mlx5dv_devx_obj *obj[HELD], *o;
	struct ibv_qp *blocker[RANGES] = { 0 };
	bool held[RANGES] = { false };
	uint32_t first, status, out[4];
	unsigned blocked = 0, last = 0;

	cr_assert(cq);
	for (unsigned i = 0; i < HELD; i++) {
		obj[i] = reserve(ctx, LOG_MAX_ALLOC, &first, &status);
		cr_assert(obj[i], "range %u: %s, status %#x", i, strerror(errno), status);
		held[first % HOST_QPNS >> LOG_MAX_ALLOC] = true;
	}
	for (unsigned created = 0; blocked < TO_BLOCK; created++) {
		struct ibv_qp *qp = ibv_create_qp(pd, &qa);
		unsigned r;

		cr_assert(qp, "QP %u: %s", created, strerror(errno));
		cr_assert_lt(created, 2 * HOST_QPNS, "the QPNs do not go round the space");
		r = qp->qp_num % HOST_QPNS >> LOG_MAX_ALLOC;
		cr_assert(!held[r], "QP %#x in a held range", qp->qp_num);
		if (r && !blocker[r]) {
			blocker[r] = qp;
			blocked++;
			last = r;
		} else {
			cr_assert_eq(ibv_destroy_qp(qp), 0);
		}
	}

	o = reserve_cmd(ctx, LOG_MAX_ALLOC, out);
	cr_expect(!o, "range %#x with a QP in every free range", prm_get(out, OBJ_ID));
	cr_expect_eq(errno, EREMOTEIO);
	cr_expect_eq(prm_get(out, STATUS), STAT_NO_RES);
	cr_expect_neq(prm_get(out, SYNDROME), 0);
	o = reserve(ctx, LOG_GRANULARITY, &first, &status);
	cr_expect(o, "a smaller range: %s, status %#x", strerror(errno), status);
	if (o)
		cr_assert_eq(mlx5dv_devx_obj_destroy(o), 0);

	cr_assert_eq(ibv_destroy_qp(blocker[last]), 0);
	blocker[last] = NULL;
	o = reserve(ctx, LOG_MAX_ALLOC, &first, &status);
	cr_assert(o, "a QP gone: %s, status %#x", strerror(errno), status);
	cr_expect_eq(first % HOST_QPNS >> LOG_MAX_ALLOC, last, "%#x", first);
	cr_assert_eq(mlx5dv_devx_obj_destroy(o), 0);

	for (unsigned r = 0; r < RANGES; r++)
		if (blocker[r])
			cr_assert_eq(ibv_destroy_qp(blocker[r]), 0);
	for (unsigned i = 0; i < HELD; i++)
		cr_assert_eq(mlx5dv_devx_obj_destroy(obj[i]), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

/*
 * A child of fork() reaches neither its parent's ranges nor its quota: on
 * the inherited context DEVX is EIO (kernel/fork.c) and the parent's
 * object stays; on a context of its own it is a host of its own, with the
 * whole quota.  The child's exit status is 0 or the step that failed.
 */
Test(reserved_qpn, fork_child)
{
	enum { N = 1u << (LOG_MAX_NUM - LOG_MAX_ALLOC) };
	uint32_t mine[N], f, status;
	int wstatus;
	pid_t pid;

	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(reserve_raw(LOG_MAX_ALLOC, &mine[i]), 0, "range %u", i);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct ibv_context *own;

		if (reserve(ctx, LOG_GRANULARITY, &f, &status) || errno != EIO)
			_exit(1);
		if (devx_destroy(mine[0]) != EIO)
			_exit(2);
		own = et_open();
		for (unsigned i = 0; i < N; i++)
			if (!reserve(own, LOG_MAX_ALLOC, &f, &status))
				_exit(3);
		_exit(ibv_close_device(own) ? 4 : 0);
	}
	cr_assert_eq(waitpid(pid, &wstatus, 0), pid);
	cr_expect(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "child: status %#x", wstatus);
	/* the parent's ranges are still held, all of them */
	cr_expect(!reserve(ctx, LOG_GRANULARITY, &f, &status));
	cr_expect_eq(status, STAT_LIM);
	for (unsigned i = 0; i < N; i++)
		cr_assert_eq(devx_destroy(mine[i]), 0);
}
