/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_memic.c - MEMIC operations (emu/device/memic.c): the addresses of
 * mlx5dv_dm_map_op_addr(), where a 1-byte store increments device memory
 * and a 1-byte load tests and sets it, atomically across threads; every
 * other access reads ones and writes nothing; the device memory caps page
 * that offers them on the cards that have them, and EOPNOTSUPP elsewhere.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "dev_test.h"
#include "prm_test.h"

ET_CTX_PD_SUITE(dev_memic);

enum { OP_INCREMENT = 0, OP_TEST_AND_SET = 1 };
#define DM_LEN		8192	/* two pages: offsets past the first */
/* device_mem_cap, where rdma-core's tests/test_mlx5_dm_ops.py reads it */
#define DM_CAP_INC_SIZES	CAP(0x20, 8)
#define DM_CAP_TAS_SIZES	CAP(0x30, 8)
#define DM_CAP_OPERATIONS	CAP(0x200, 32)

/* memic_operations of the device memory caps page (QUERY_HCA_CAP op_mod 0xf << 1) */
static uint32_t memic_operations(uint32_t *sizes)
{
	uint32_t in[4] = { 0 }, out[(16 + 0x1000) / 4];

	prm_set(in, OPCODE, 0x100);
	prm_set(in, OP_MOD, 0xf << 1 | 1);
	cr_assert_eq(mlx5dv_devx_general_cmd(ctx, in, sizeof(in), out, sizeof(out)), 0);
	cr_assert_eq(prm_get(out, STATUS), 0);
	*sizes = prm_get(out, DM_CAP_INC_SIZES) << 8 | prm_get(out, DM_CAP_TAS_SIZES);
	return prm_get(out, DM_CAP_OPERATIONS);
}

static struct ibv_dm *alloc_zeroed(void)
{
	struct ibv_alloc_dm_attr a = { .length = DM_LEN };
	static const uint8_t zeros[DM_LEN];
	struct ibv_dm *dm = ibv_alloc_dm(ctx, &a);

	cr_assert(dm, "ibv_alloc_dm: %s", strerror(errno));
	cr_assert_eq(ibv_memcpy_to_dm(dm, 0, zeros, DM_LEN), 0);
	return dm;
}

static volatile uint8_t *map_op(struct ibv_dm *dm, uint8_t op)
{
	volatile uint8_t *p = mlx5dv_dm_map_op_addr(dm, op);

	cr_assert(p, "mlx5dv_dm_map_op_addr(%u): %s", op, strerror(errno));
	return p;
}

/* libmlx5 copies device memory in aligned 4-byte words */
static uint8_t dm_byte(struct ibv_dm *dm, uint64_t off)
{
	uint8_t w[4];

	cr_assert_eq(ibv_memcpy_from_dm(w, dm, off & ~3ull, 4), 0);
	return w[off & 3];
}

static void dm_put(struct ibv_dm *dm, uint64_t off, const char *w4)
{
	cr_assert_eq(ibv_memcpy_to_dm(dm, off, w4, 4), 0);
}

static void need_ops(void)
{
	uint32_t sizes;

	et_need(memic_operations(&sizes) == 3, "MEMIC operations");
	cr_expect_eq(sizes, 0x0101, "1-byte increments and test-and-sets");
}

/* a fresh DM of zeros and one operation's window on it, on a card that has them */
static volatile uint8_t *zeroed_window(struct ibv_dm **dm, uint8_t op)
{
	need_ops();
	*dm = alloc_zeroed();
	return map_op(*dm, op);
}

Test(dev_memic, increment_then_test_and_set)
{
	struct ibv_dm *dm;
	volatile uint8_t *inc, *tas, *inc2;

	need_ops();
	dm = alloc_zeroed();
	inc = map_op(dm, OP_INCREMENT);
	tas = map_op(dm, OP_TEST_AND_SET);
	inc[0] = 1;
	inc[0] = 1;
	cr_expect_eq(tas[0], 2, "two increments of 1");
	cr_expect_eq(tas[0], 0xff, "the test-and-set set it");
	cr_expect_eq(dm_byte(dm, 0), 0xff);
	cr_expect_eq(dm_byte(dm, 1), 0, "its neighbour untouched");
	inc[4097] = 5;
	inc[4097] = 250;
	cr_expect_eq(dm_byte(dm, 4097), 255, "the second page, 5 + 250");
	inc[4097] = 3;
	cr_expect_eq(dm_byte(dm, 4097), 2, "a byte wraps");
	/* the same operation again: the kernel's entry, mapped once more */
	inc2 = map_op(dm, OP_INCREMENT);
	inc2[7] = 9;
	cr_expect_eq(dm_byte(dm, 7), 9);
	cr_expect_eq(tas[7], 9);
	cr_expect_eq(munmap((void *)inc2, DM_LEN), 0);
	/* what ibv_memcpy_to_dm() writes, the operations see */
	dm_put(dm, 100, "\x2a\0\0");
	cr_expect_eq(tas[100], 0x2a);
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	cr_expect_eq(munmap((void *)tas, DM_LEN), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

Test(dev_memic, other_accesses_read_ones)
{
	struct ibv_dm *dm;
	volatile uint8_t *inc, *tas;

	need_ops();
	dm = alloc_zeroed();
	inc = map_op(dm, OP_INCREMENT);
	tas = map_op(dm, OP_TEST_AND_SET);
	dm_put(dm, 8, "\x11\x22\x33\x44");
	cr_expect_eq(*(volatile uint32_t *)(tas + 8), 0xffffffffu, "a 4-byte test-and-set");
	cr_expect_eq(inc[8], 0xff, "a load from the increment window");
	tas[9] = 0x77;				/* a store to the test-and-set window */
	*(volatile uint16_t *)(inc + 10) = 1;	/* a 2-byte increment */
	*(volatile uint64_t *)(inc + 16) = 1;
	cr_expect_eq(dm_byte(dm, 8), 0x11);
	cr_expect_eq(dm_byte(dm, 9), 0x22);
	cr_expect_eq(dm_byte(dm, 10), 0x33);
	cr_expect_eq(dm_byte(dm, 11), 0x44);
	cr_expect_eq(dm_byte(dm, 16), 0);
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	cr_expect_eq(munmap((void *)tas, DM_LEN), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

/*
 * A DM freed while its windows are mapped lives on through them, its pages
 * still taken, until the last is unmapped (the kernel's mmap entries hold
 * the MEMIC); after the device is closed, a window answers nothing.
 */
Test(dev_memic, a_freed_dm_lives_while_mapped)
{
	struct ibv_alloc_dm_attr all = { .length = 128 * 1024 };
	volatile uint8_t *inc, *tas;
	struct ibv_context *c2;
	struct ibv_dm *dm;

	need_ops();
	dm = alloc_zeroed();
	inc = map_op(dm, OP_INCREMENT);
	tas = map_op(dm, OP_TEST_AND_SET);
	inc[5] = 7;
	cr_assert_eq(ibv_free_dm(dm), 0);
	inc[5] = 1;
	cr_expect_eq(tas[5], 8, "the freed DM's bytes, still operated on");
	cr_expect_eq(tas[5], 0xff);
	errno = 0;
	cr_expect(!ibv_alloc_dm(ctx, &all), "its pages are still taken");
	cr_expect_eq(errno, ENOMEM);
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	cr_expect(!ibv_alloc_dm(ctx, &all), "the other window holds them");
	cr_expect_eq(munmap((void *)tas, DM_LEN), 0);
	dm = ibv_alloc_dm(ctx, &all);
	cr_expect(dm, "the last window unmapped gives them back: %s", strerror(errno));
	if (dm)
		cr_expect_eq(ibv_free_dm(dm), 0);

	c2 = et_open();
	{
		struct ibv_alloc_dm_attr a = { .length = DM_LEN };
		struct ibv_dm *dm2 = ibv_alloc_dm(c2, &a);

		cr_assert(dm2);
		inc = map_op(dm2, OP_INCREMENT);
		tas = map_op(dm2, OP_TEST_AND_SET);
	}
	cr_assert_eq(ibv_close_device(c2), 0);
	inc[0] = 1;				/* nothing to answer it: dropped */
	cr_expect_eq(tas[0], 0xff, "a closed device's window reads ones");
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	cr_expect_eq(munmap((void *)tas, DM_LEN), 0);
}

struct racer {
	volatile uint8_t	*addr;
	unsigned		n;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (unsigned i = 0; i < r->n; i++)
		r->addr[3] = 1;
	return NULL;
}

Test(dev_memic, racing_increments_add_up)
{
	enum { THREADS = 4, EACH = 1000 };
	struct racer r;
	pthread_t th[THREADS];
	struct ibv_dm *dm;

	need_ops();
	dm = alloc_zeroed();
	r.addr = map_op(dm, OP_INCREMENT);
	r.n = EACH;
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, race, &r), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	cr_expect_eq(dm_byte(dm, 3), (THREADS * EACH) & 0xff, "no increment lost");
	cr_expect_eq(munmap((void *)r.addr, DM_LEN), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

/* a child of fork() unmapping its copies of the windows gives back none of the parent's pages */
Test(dev_memic, a_child_leaves_the_parents_pages)
{
	struct ibv_alloc_dm_attr all = { .length = 128 * 1024 };
	volatile uint8_t *inc;
	struct ibv_dm *dm;
	int status;
	pid_t pid;

	inc = zeroed_window(&dm, OP_INCREMENT);
	cr_assert_eq(ibv_free_dm(dm), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		inc[1] = 4;			/* the shared DM, through the child's copy */
		_exit(munmap((void *)inc, DM_LEN) ? 1 : 0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	errno = 0;
	cr_expect(!ibv_alloc_dm(ctx, &all), "the parent's window still holds the pages");
	cr_expect_eq(errno, ENOMEM);
	inc[1] = 1;
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	dm = ibv_alloc_dm(ctx, &all);
	cr_expect(dm, "%s", strerror(errno));
	if (dm)
		cr_expect_eq(ibv_free_dm(dm), 0);
}

/*
 * An instruction the device does not decode (an atomic read-modify-write)
 * is the application's SIGSEGV, as an unhandled fault: the child dies of
 * it, the DM is untouched, and the parent goes on.
 */
Test(dev_memic, an_undecoded_access_is_a_sigsegv)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	volatile uint8_t *inc;
	struct ibv_dm *dm;
	int status;
	pid_t pid;

	inc = zeroed_window(&dm, OP_INCREMENT);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		sigaction(SIGSEGV, &dfl, NULL);	/* what the device chains to */
		__atomic_fetch_add(inc, 1, __ATOMIC_SEQ_CST);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %#x", status);
	inc[0] = 1;
	cr_expect_eq(dm_byte(dm, 0), 1, "only the parent's increment");
	cr_expect_eq(munmap((void *)inc, DM_LEN), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

/* the device keeps a window per mapping: past its table, mmap() fails, nothing else */
Test(dev_memic, windows_run_out_cleanly)
{
	enum { TRY = 80 };
	volatile uint8_t *w[TRY];
	struct ibv_dm *dm;
	int n = 0;

	need_ops();
	dm = alloc_zeroed();
	errno = 0;
	while (n < TRY && (w[n] = mlx5dv_dm_map_op_addr(dm, OP_INCREMENT)))
		n++;
	cr_expect_lt(n, TRY, "a bounded table");
	cr_expect_eq(errno, ENOMEM);
	for (int i = 0; i < n; i++)
		w[i][0] = 1;
	cr_expect_eq(dm_byte(dm, 0), n & 0xff, "each window mapped works");
	for (int i = 0; i < n; i++)
		cr_expect_eq(munmap((void *)w[i], DM_LEN), 0);
	w[0] = map_op(dm, OP_INCREMENT);	/* unmapped windows are free again */
	w[0][0] = 1;
	cr_expect_eq(dm_byte(dm, 0), (n + 1) & 0xff);
	cr_expect_eq(munmap((void *)w[0], DM_LEN), 0);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

Test(dev_memic, refusals)
{
	uint32_t sizes, ops = memic_operations(&sizes);
	struct ibv_dm *dm = alloc_zeroed();
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	/* an operation the caps do not offer, one past the mask's 32 bits */
	for (unsigned op = 0; op < 256; op += op < 3 ? 1 : 97) {
		errno = 0;
		p = mlx5dv_dm_map_op_addr(dm, (uint8_t)op);
		if (op < 32 && (ops & 1u << op)) {
			cr_expect(p, "op %u offered", op);
			if (p)
				munmap(p, DM_LEN);
			continue;
		}
		cr_expect(!p, "op %u", op);
		cr_expect_eq(errno, EOPNOTSUPP, "op %u", op);
	}
	/* an operation's page index that was never handed out is no mapping */
	errno = 0;
	cr_expect_eq(mmap(NULL, DM_LEN, PROT_READ, MAP_SHARED, ctx->cmd_fd,
			  (off_t)((8 << 8) + 32 + 2 * 32 - 1) * page), MAP_FAILED);
	cr_expect_eq(errno, EINVAL);
	cr_expect_eq(ibv_free_dm(dm), 0);
}

/* Suite dev_memic on the cards with MEMIC operations. */
Test(dev_memic_cards, connectx7_ib, .timeout = 120)
{
	et_rerun_as("0x1021", NULL, "dev_memic/*");
}

Test(dev_memic_cards, connectx6dx_roce, .timeout = 120)
{
	et_rerun_as("0x101d", NULL, "dev_memic/*");
}
