/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Packet pacing entries (emu/kernel/pp.c): mlx5dv_pp_alloc() and
 * mlx5dv_pp_free() on the device's rate limit table as mlx5_ib and
 * mlx5_core keep it - shared entries found again by an identical rate
 * context and counted, dedicated ones each an entry of their own, the
 * table full with ENOSPC, entries freed with their context - the QoS caps
 * that announce it (DEVX's QoS page, ibv_query_device_ex()'s
 * packet_pacing_caps), and the kernel's refusals with its errnos.
 */
#include <endian.h>
#include <pthread.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>

#include "emu_test.h"

ET_CTX_PD_SUITE(pp);

/* the QoS caps of a ConnectX-6 (emu/base/profile.c) */
#define TABLE_ENTRIES	127	/* packet_pacing_rate_table_size 128, less "unlimited" */
#define MIN_RATE	1u
#define MAX_RATE	200000000u	/* kbps: the 200G port */
#define PP_CTX_SIZE	48	/* set_pp_rate_limit_context */

/* a rate limit context of `rate` kbps: rate_limit, big-endian, first */
static void rate_ctx(uint8_t *ctx, uint32_t rate)
{
	memset(ctx, 0, PP_CTX_SIZE);
	for (int i = 0; i < 4; i++)
		ctx[i] = (uint8_t)(rate >> (24 - 8 * i));
}

static struct mlx5dv_pp *pp_alloc(struct ibv_context *c, uint32_t rate, uint32_t flags)
{
	uint8_t rl[PP_CTX_SIZE];

	rate_ctx(rl, rate);
	return mlx5dv_pp_alloc(c, 4, rl, flags);	/* pyverbs passes the rate alone */
}

/* mlx5dv_pp_alloc()'s errno, the entry freed if it was made */
static int pp_alloc_err(struct ibv_context *c, size_t len, const void *rl, uint32_t flags)
{
	struct mlx5dv_pp *pp;

	errno = 0;
	pp = mlx5dv_pp_alloc(c, len, rl, flags);
	if (pp) {
		mlx5dv_pp_free(pp);
		return 0;
	}
	return errno;
}

static struct ibv_context *open_devx(void)
{
	struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c;

	cr_assert(list && list[0]);
	c = mlx5dv_open_device(list[0], &attr);
	ibv_free_device_list(list);
	cr_assert(c, "mlx5dv_open_device(DEVX): %s", strerror(errno));
	return c;
}

/* PRM mailboxes: a big-endian field by its bit offset and width */
static uint32_t get(const void *buf, unsigned off, unsigned bits)
{
	const uint8_t *p = (const uint8_t *)buf + off / 32 * 4;
	uint32_t dw = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];

	return (dw >> (32 - off % 32 - bits)) & (bits == 32 ? ~0u : (1u << bits) - 1);
}

/* QUERY_HCA_CAP of op_mod's page (current): the capability at byte 0x10 */
static void query_cap(uint16_t op_mod, uint32_t *out, size_t out_len)
{
	uint32_t in[4] = { htobe32(0x100u << 16), htobe32(op_mod) };

	memset(out, 0xff, out_len);
	cr_assert_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, out_len), 0);
	cr_assert_eq(get(out, 0x00, 8), 0, "status");
}

#define CAP(off, bits)	0x80 + (off), bits	/* a field of the capability */

/* the general caps' qos, the QoS page, and query_device's packet_pacing_caps agree */
Test(pp, caps)
{
	static uint32_t out[0x1010 / 4];
	struct ibv_device_attr_ex da;

	query_cap(1, out, sizeof(out));
	cr_expect_eq(get(out, CAP(0x21b, 1)), 1, "general caps: qos");
	query_cap(0xc << 1 | 1, out, sizeof(out));
	cr_expect_eq(get(out, CAP(0x00, 1)), 1, "packet_pacing");
	cr_expect_eq(get(out, CAP(0x05, 1)), 1, "packet_pacing_burst_bound");
	cr_expect_eq(get(out, CAP(0x06, 1)), 1, "packet_pacing_typical_size");
	cr_expect_eq(get(out, CAP(0x0b, 1)), 1, "packet_pacing_uid");
	cr_expect_eq(get(out, CAP(0x40, 32)), MAX_RATE);
	cr_expect_eq(get(out, CAP(0x60, 32)), MIN_RATE);
	cr_expect_eq(get(out, CAP(0x90, 16)), TABLE_ENTRIES + 1);
	/* no scheduling elements: nic_element_type, nic_tsar_type */
	cr_expect_eq(get(out, CAP(0x100, 32)), 0);

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &da), 0);
	cr_expect_eq(da.packet_pacing_caps.qp_rate_limit_min, MIN_RATE);
	cr_expect_eq(da.packet_pacing_caps.qp_rate_limit_max, MAX_RATE);
	cr_expect_eq(da.packet_pacing_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
}

/*
 * Shared entries: the same context is the same index, counted, from any
 * context of the device; a dedicated entry of the same rate is another.
 */
Test(pp, shared_and_dedicated)
{
	struct ibv_context *c2 = open_devx();
	struct mlx5dv_pp *a, *b, *other, *ded, *in_c2, *reuse;

	a = pp_alloc(ctx, 100, 0);
	cr_assert(a, "mlx5dv_pp_alloc: %s", strerror(errno));
	b = pp_alloc(ctx, 100, 0);
	cr_assert(b);
	cr_expect_eq(b->index, a->index, "an identical context shares the entry");
	cr_expect_geq(a->index, 1, "index 0 is the firmware's unlimited rate");
	in_c2 = pp_alloc(c2, 100, 0);
	cr_assert(in_c2);
	cr_expect_eq(in_c2->index, a->index, "shared across the device's contexts");
	other = pp_alloc(ctx, 200, 0);
	cr_assert(other);
	cr_expect_neq(other->index, a->index);
	ded = pp_alloc(ctx, 100, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	cr_assert(ded, "dedicated: %s", strerror(errno));
	cr_expect_neq(ded->index, a->index);
	cr_expect_neq(ded->index, other->index);

	/* the entry lives while one of its users does */
	mlx5dv_pp_free(a);
	mlx5dv_pp_free(in_c2);
	reuse = pp_alloc(ctx, 300, 0);
	cr_assert(reuse);
	cr_expect_neq(reuse->index, b->index, "still held by b");
	mlx5dv_pp_free(reuse);
	mlx5dv_pp_free(b);
	/* now free: the first free entry is given out again */
	reuse = pp_alloc(ctx, 300, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	cr_assert(reuse);
	cr_expect_eq(reuse->index, 1, "the lowest free index");
	mlx5dv_pp_free(reuse);
	mlx5dv_pp_free(other);
	mlx5dv_pp_free(ded);
	cr_assert_eq(ibv_close_device(c2), 0);
}

/*
 * The table full: ENOSPC for a dedicated entry and for a new shared
 * context, but an identical shared one still finds its entry; one freed
 * is given out again.
 */
Test(pp, table_full)
{
	struct mlx5dv_pp *pps[TABLE_ENTRIES], *more;
	bool seen[TABLE_ENTRIES + 1] = { false };
	uint8_t rl[PP_CTX_SIZE];

	pps[0] = pp_alloc(ctx, 1000, 0);
	cr_assert(pps[0]);
	for (int i = 1; i < TABLE_ENTRIES; i++) {
		pps[i] = pp_alloc(ctx, 1000, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
		cr_assert(pps[i], "entry %d: %s", i, strerror(errno));
	}
	for (int i = 0; i < TABLE_ENTRIES; i++) {
		cr_assert(pps[i]->index >= 1 && pps[i]->index <= TABLE_ENTRIES);
		cr_expect(!seen[pps[i]->index], "index %u twice", pps[i]->index);
		seen[pps[i]->index] = true;
	}
	rate_ctx(rl, 1000);
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX), ENOSPC);
	rate_ctx(rl, 2000);
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, 0), ENOSPC);
	more = pp_alloc(ctx, 1000, 0);
	cr_assert(more, "the shared entry: %s", strerror(errno));
	cr_expect_eq(more->index, pps[0]->index);
	mlx5dv_pp_free(more);

	more = pps[TABLE_ENTRIES / 2];
	uint16_t freed = more->index;

	mlx5dv_pp_free(more);
	pps[TABLE_ENTRIES / 2] = pp_alloc(ctx, 2000, 0);
	cr_assert(pps[TABLE_ENTRIES / 2]);
	cr_expect_eq(pps[TABLE_ENTRIES / 2]->index, freed);
	for (int i = 0; i < TABLE_ENTRIES; i++)
		mlx5dv_pp_free(pps[i]);
}

/* a context's entries go with it, freed or not */
Test(pp, freed_with_the_context)
{
	struct ibv_context *c2 = open_devx();
	struct mlx5dv_pp *pp;

	for (int i = 0; i < TABLE_ENTRIES; i++)
		cr_assert(pp_alloc(c2, 5000, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX),
			  "entry %d: %s", i, strerror(errno));
	cr_expect_eq(pp_alloc_err(ctx, 4, (uint8_t[4]){ 0, 0, 0x13, 0x88 }, 0), ENOSPC);
	cr_assert_eq(ibv_close_device(c2), 0);	/* libmlx5's objects leak; the kernel's go */
	pp = pp_alloc(ctx, 5000, 0);
	cr_assert(pp, "after the close: %s", strerror(errno));
	cr_expect_eq(pp->index, 1);
	mlx5dv_pp_free(pp);
}

/*
 * Threads on contexts of their own take and drop the same shared entry at
 * once, and close their context with a user of it alive: the entry keeps
 * its index while anyone holds it, and its count comes back to 0 (a
 * dedicated entry is then given index 1).  Each thread returns how many
 * times it saw another index or failed.
 */
enum { RACE_THREADS = 3, RACE_ROUNDS = 4, RACE_ALLOCS = 100, RACE_RATE = 777 };

static void *race_thread(void *arg)
{
	uint16_t want = *(const uint16_t *)arg;
	uintptr_t bad = 0;

	for (int r = 0; r < RACE_ROUNDS; r++) {
		struct ibv_context *c = open_devx();
		struct mlx5dv_pp *kept = pp_alloc(c, RACE_RATE, 0);

		bad += !kept || kept->index != want;
		for (int i = 0; i < RACE_ALLOCS; i++) {
			struct mlx5dv_pp *pp = pp_alloc(c, RACE_RATE, 0);

			bad += !pp || pp->index != want;
			if (pp)
				mlx5dv_pp_free(pp);
		}
		bad += ibv_close_device(c) != 0;	/* `kept` goes with it */
	}
	return (void *)bad;
}

Test(pp, threads_share_one_entry)
{
	struct mlx5dv_pp *anchor = pp_alloc(ctx, RACE_RATE, 0), *ded;
	pthread_t t[RACE_THREADS];

	cr_assert(anchor, "%s", strerror(errno));
	for (int i = 0; i < RACE_THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, race_thread, &anchor->index), 0);
	for (int i = 0; i < RACE_THREADS; i++) {
		void *bad;

		cr_assert_eq(pthread_join(t[i], &bad), 0);
		cr_expect_eq((uintptr_t)bad, 0, "thread %d", i);
	}
	mlx5dv_pp_free(anchor);
	ded = pp_alloc(ctx, RACE_RATE, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	cr_assert(ded);
	cr_expect_eq(ded->index, 1, "no user left on the shared entry");
	mlx5dv_pp_free(ded);
}

/* the rate and the context's size, as mlx5_ib and mlx5_core check them */
Test(pp, bad_contexts)
{
	uint8_t rl[PP_CTX_SIZE + 1];

	rate_ctx(rl, 0);
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, 0), EINVAL, "rate 0");
	rate_ctx(rl, MAX_RATE + 1);
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, 0), EINVAL, "above the max rate");
	rate_ctx(rl, MAX_RATE);
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, 0), 0, "the max rate");
	rate_ctx(rl, MIN_RATE);
	cr_expect_eq(pp_alloc_err(ctx, PP_CTX_SIZE, rl, 0), 0, "the whole context");
	cr_expect_eq(pp_alloc_err(ctx, 0, rl, 0), EINVAL, "an empty context");
	rl[PP_CTX_SIZE] = 0;
	cr_expect_eq(pp_alloc_err(ctx, PP_CTX_SIZE + 1, rl, 0), EINVAL, "past the context");
	/* a one-byte context is zero-padded: 0x01 << 24 kbps, in range */
	cr_expect_eq(pp_alloc_err(ctx, 1, (uint8_t[1]){ 1 }, 0), 0);
	/* libmlx5 refuses a flag it does not know before the kernel */
	cr_expect_eq(pp_alloc_err(ctx, 4, rl, 1u << 1), EOPNOTSUPP);
}

/* ---- the methods by ioctl: what libmlx5 does not let through ---------- */

/* PP_OBJ_ALLOC on fd: 0 (the handle in *handle) or the errno */
static int alloc_call(int fd, const uint8_t *rl, uint16_t len, uint64_t flags,
		      uint16_t *index, uint32_t *handle)
{
	struct et_call c;
	uint64_t inl = 0;
	int ret;

	et_call_init(&c, MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_ALLOC);
	et_attr(&c, MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE, 0, 0);
	if (len <= sizeof(inl))
		memcpy(&inl, rl, len);
	et_attr(&c, MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX, len,
		len <= sizeof(inl) ? inl : (uint64_t)(uintptr_t)rl);
	et_attr(&c, MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, 8, flags);
	et_attr(&c, MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, sizeof(*index), (uint64_t)(uintptr_t)index);
	ret = et_call_on(fd, &c);
	*handle = (uint32_t)c.attrs[0].data;	/* written back whether or not it stays */
	return ret;
}

static int destroy_call(int fd, uint64_t handle)
{
	struct et_call c;

	et_call_init(&c, MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_DESTROY);
	et_attr(&c, MLX5_IB_ATTR_PP_OBJ_DESTROY_HANDLE, 0, handle);
	return et_call_on(fd, &c);
}

/* PP_OBJ_ALLOC with one attribute's length changed, or one left out (len 0) */
static int alloc_sized(uint16_t which, uint16_t len)
{
	uint8_t rl[PP_CTX_SIZE];
	uint64_t index = 0, inl = 0;
	static const uint16_t ids[] = {
		MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE, MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX,
		MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX,
	};
	const uint16_t lens[] = { 0, 4, 8, 2 };
	struct et_call c;

	rate_ctx(rl, 100);
	memcpy(&inl, rl, 4);
	et_call_init(&c, MLX5_IB_OBJECT_PP, MLX5_IB_METHOD_PP_OBJ_ALLOC);
	for (unsigned i = 0; i < 4; i++) {
		uint64_t data = i == 1 ? inl : i == 3 ? (uint64_t)(uintptr_t)&index : 0;

		if (ids[i] == which && !len)
			continue;
		et_attr(&c, ids[i], ids[i] == which ? len : lens[i], data);
	}
	return et_call_on(ctx->cmd_fd, &c);
}

/* flags beyond DEDICATED_INDEX: uverbs_get_flags32()'s EINVAL; destroy's lookups */
Test(pp, ioctl_refusals)
{
	uint8_t rl[PP_CTX_SIZE];
	uint16_t index = 0;
	uint32_t handle;

	/* the framework's sizes: flags a u32 or a u64, the index a u16, all mandatory */
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, 5), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, 9), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, 1), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, 4), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_HANDLE, 8), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_FLAGS, 0), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_INDEX, 0), EINVAL);
	cr_expect_eq(alloc_sized(MLX5_IB_ATTR_PP_OBJ_ALLOC_CTX, 0), EINVAL);

	rate_ctx(rl, 100);
	cr_expect_eq(alloc_call(ctx->cmd_fd, rl, 4, 1u << 1, &index, &handle), EINVAL);
	cr_expect_eq(alloc_call(ctx->cmd_fd, rl, 4, 1ull << 32, &index, &handle), EINVAL);
	cr_assert_eq(alloc_call(ctx->cmd_fd, rl, 4, MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX,
				&index, &handle), 0);
	cr_expect_geq(index, 1);
	cr_expect_eq(destroy_call(ctx->cmd_fd, handle), 0);
	cr_expect_eq(destroy_call(ctx->cmd_fd, handle), ENOENT, "destroyed already");
	/* the handle of another type of object */
	cr_expect_eq(destroy_call(ctx->cmd_fd, pd->handle), EINVAL);
	/* lookup_get_idr_uobject(): a negative id is EINVAL, one never given ENOENT */
	cr_expect_eq(destroy_call(ctx->cmd_fd, UINT64_MAX), EINVAL);
	cr_expect_eq(destroy_call(ctx->cmd_fd, 1ull << 32), ENOENT);
}

/*
 * An index the kernel cannot copy out fails the allocation, and the entry
 * goes with it: the handler had marked the object made
 * (uverbs_finalize_uobj_create()), so the framework's abort destroys it
 * (pp_obj_cleanup()) rather than leaving an entry no one can free.
 */
Test(pp, index_not_writable)
{
	uint16_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mlx5dv_pp *pp;
	uint8_t rl[PP_CTX_SIZE];
	uint32_t handle;

	cr_assert_neq(ro, MAP_FAILED);
	rate_ctx(rl, 100);
	cr_expect_eq(alloc_call(ctx->cmd_fd, rl, 4, MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX,
				ro, &handle), EFAULT);
	cr_expect_eq(destroy_call(ctx->cmd_fd, handle), ENOENT, "the object is gone");
	cr_expect_eq(alloc_call(ctx->cmd_fd, rl, 4, 0, ro, &handle), EFAULT);
	pp = pp_alloc(ctx, 200, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	cr_assert(pp, "%s", strerror(errno));
	cr_expect_eq(pp->index, 1, "the entries are free again");
	mlx5dv_pp_free(pp);
	/* the shared one too: the same rate is a new entry, not one counted twice */
	pp = pp_alloc(ctx, 100, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	cr_assert(pp);
	cr_expect_eq(pp->index, 1);
	mlx5dv_pp_free(pp);
	munmap(ro, 4096);
}

/* a user context without DEVX may not allocate an entry (mlx5_ib's devx_uid check) */
Test(pp, needs_a_devx_context)
{
	struct mlx5_ib_alloc_ucontext_req_v2 req = {
		.total_num_bfregs = 4, .num_low_latency_bfregs = 1, .max_cqe_version = 1,
	};
	struct mlx5_ib_alloc_ucontext_resp resp;
	struct et_call c;
	int fd = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	uint8_t rl[PP_CTX_SIZE];
	uint16_t index;
	uint32_t handle;

	cr_assert_geq(fd, 0, "open: %s", strerror(errno));
	et_call_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	et_attr(&c, UVERBS_ATTR_UHW_IN, sizeof(req), (uint64_t)(uintptr_t)&req);
	et_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(resp), (uint64_t)(uintptr_t)&resp);
	cr_assert_eq(et_call_on(fd, &c), 0, "GET_CONTEXT");
	rate_ctx(rl, 100);
	cr_expect_eq(alloc_call(fd, rl, 4, 0, &index, &handle), EINVAL);
	/*
	 * The framework copies the context in (UA_ALLOC_AND_COPY) before the
	 * method looks at the user context: an unreadable one is EFAULT.
	 */
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(none, MAP_FAILED);
	cr_expect_eq(alloc_call(fd, (const uint8_t *)none, PP_CTX_SIZE, 0, &index, &handle), EFAULT);
	munmap(none, 4096);
	close(fd);
}

/*
 * A child of fork() is not served an entry on its parent's context: the
 * table is the device's, which only the parent reaches (EIO, as for the
 * other commands that need the device: emu/kernel/fork.c).  The host the
 * child becomes on a context of its own has a table of its own, empty.
 * The child's exit status is 0 or the step that failed.
 */
Test(pp, fork_child)
{
	struct mlx5dv_pp *mine = pp_alloc(ctx, 100, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	int status;
	pid_t pid;

	cr_assert(mine && mine->index == 1, "%s", strerror(errno));
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		uint8_t rl[PP_CTX_SIZE];
		struct ibv_context *own;
		struct mlx5dv_pp *pp;

		rate_ctx(rl, 100);
		if (pp_alloc_err(ctx, 4, rl, 0) != EIO)
			_exit(1);
		own = open_devx();
		pp = pp_alloc(own, 100, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);
		if (!pp || pp->index != 1)
			_exit(2);
		mlx5dv_pp_free(pp);
		_exit(ibv_close_device(own) ? 3 : 0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
	/* the parent's entry is still its own: the next one is index 2 */
	struct mlx5dv_pp *next = pp_alloc(ctx, 100, MLX5DV_PP_ALLOC_FLAGS_DEDICATED_INDEX);

	cr_assert(next);
	cr_expect_eq(next->index, 2);
	mlx5dv_pp_free(next);
	mlx5dv_pp_free(mine);
}
