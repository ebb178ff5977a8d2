/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_trap.c - doorbells that wake a sleeping engine (emu/device/trap.c).
 *
 * The engine is told to look for doorbells only rarely (no hot window,
 * sleeps growing to a minute), so a doorbell it does not trap would wait
 * for seconds; and the tests' polls do not run the device themselves
 * (RFEMU_POLL_ASSIST_US=0, test_poll_assist.c), which would hide the trap.
 * A trapped one completes at once; the application's own mappings and its
 * own SIGSEGV handler are left as they were.  And the engine thread runs at
 * the process's nice value.
 *
 * These tests take the path where the fault handler lets the store through
 * and kicks the engine (RFEMU_DOORBELL_ASSIST=0): the one of every store
 * trap.c cannot decode, and of every architecture without a decoder.
 * test_doorbell_assist.c tests the stores the handler writes itself.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <infiniband/mlx5dv.h>

#include "app_segv.h"
#include "trap_test.h"
#include "wire_test.h"

static struct dt t;

static void setup(void)
{
	setenv("RFEMU_POLL_ASSIST_US", "0", 1);
	setenv("RFEMU_DOORBELL_ASSIST", "0", 1);
	setenv("RFEMU_HOT_MS", "0", 1);
	setenv("RFEMU_SPIN_US", "0", 1);
	setenv("RFEMU_IDLE_MAX_US", "60000000", 1);
	dt_setup(&t);
}

static void teardown(void)
{
	dt_teardown(&t);
}

TestSuite(dev_trap, .init = setup, .fini = teardown, .timeout = 60);

/* Post a signaled 8-byte RDMA write on qp from buffer i to the other one. */
static void post_write8(struct ibv_qp *qp, int i)
{
	struct ibv_sge s = { (uintptr_t)t.buf[i], 8, t.mr[i]->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)t.buf[!i], t.mr[!i]->rkey },
	};

	dt_post(qp, &wr);
}

/* An 8-byte RDMA write from QP i to the other QP's buffer. */
static struct ibv_wc write8_from(int i, unsigned ms)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	post_write8(t.qp[i], i);
	cr_assert_eq(dt_poll(t.cq[i], &wc, 1, ms), 1,
		     "the doorbell did not wake the engine within %u ms", ms);
	return wc;
}

static struct ibv_wc write8(unsigned ms)
{
	return write8_from(0, ms);
}

/*
 * Idle, the engine has write-protected the page of the QP's register; the
 * next doorbell wakes it, and the page is the application's again.
 */
Test(dev_trap, a_doorbell_wakes_the_sleeping_engine)
{
	void *reg = tt_bf_reg(t.qp[0]);
	char perms[5];

	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(300000);		/* long idle: it would now sleep for seconds */
	tt_page_perms(reg, perms);
	cr_assert_str_eq(perms, "r--s", "the idle engine left the doorbell page %s", perms);
	for (int i = 0; i < 3; i++) {
		t.buf[0][0] = (uint8_t)(0x40 + i);
		cr_assert_eq(write8(1500).status, IBV_WC_SUCCESS);
		cr_assert_eq(t.buf[1][0], 0x40 + i);
		usleep(100000);
	}
}

static uintptr_t page_of(const void *p)
{
	return (uintptr_t)p & ~(uintptr_t)4095;
}

static void *cq_arm_page(struct ibv_cq *cq)
{
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { cq, &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	return dv.cq_uar;
}

static int page_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* How many runs of adjacent pages the fixture's doorbell pages make. */
static unsigned doorbell_runs(void)
{
	uintptr_t pg[4] = {
		page_of(tt_bf_reg(t.qp[0])), page_of(tt_bf_reg(t.qp[1])),
		page_of(cq_arm_page(t.cq[0])), page_of(cq_arm_page(t.cq[1])),
	};
	unsigned runs = 0;

	qsort(pg, 4, sizeof(pg[0]), page_cmp);
	for (unsigned i = 0; i < 4; i++)
		if (!i || (pg[i] != pg[i - 1] && pg[i] != pg[i - 1] + 4096))
			runs++;
	return runs;
}

/*
 * libmlx5 maps each UAR page on its own: the QP's BlueFlame page and the
 * CQ's arm page sit next to each other (on x86-64), from unrelated offsets
 * of the memfd.  One mprotect() covers adjacent pages: a doorbell on the
 * sleeping engine costs one call a run to give them back and one to take
 * them again.  (A write can fault twice: the engine may take the doorbell
 * record and sleep again before the rest of the BlueFlame copy is stored.)
 */
Test(dev_trap, adjacent_doorbell_pages_take_one_mprotect)
{
	unsigned runs = doorbell_runs();
	struct rfemu_dev_stats s0, s1;
	uint64_t faults;

	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	s0 = wt_stats();
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(write8(1500).status, IBV_WC_SUCCESS);
		usleep(100000);
	}
	s1 = wt_stats();
	faults = s1.trap_faults - s0.trap_faults;
	cr_assert_geq(faults, 3, "%llu doorbell faults for 3 writes", (unsigned long long)faults);
	cr_assert_eq(s1.trap_mprotects - s0.trap_mprotects, 2 * runs * faults,
		     "%llu mprotect() calls for %llu faults and as many armings of %u runs",
		     (unsigned long long)(s1.trap_mprotects - s0.trap_mprotects),
		     (unsigned long long)faults, runs);
}

/*
 * The application unmaps its doorbell page and maps something else there:
 * the engine must not protect the new mapping when it next sleeps.
 */
Test(dev_trap, an_unmapped_doorbell_page_is_forgotten)
{
	uintptr_t reg = (uintptr_t)tt_bf_reg(t.qp[0]) & ~(uintptr_t)4095;
	volatile uint8_t *p;
	struct ibv_qp *qp;
	char perms[5];

	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	cr_assert_eq(munmap((void *)reg, 4096), 0);
	p = mmap((void *)reg, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	cr_assert_eq((uintptr_t)p, reg, "the address was taken in between");
	/* a new QP: the engine gives back and takes again every page it traps */
	usleep(100000);
	qp = dt_create_qp(&t, 1, &(struct dt_qp_opts){ .type = IBV_QPT_RC });
	usleep(100000);
	tt_page_perms((const void *)p, perms);
	cr_assert_str_eq(perms, "rw-p", "the engine changed another mapping to %s", perms);
	p[0] = 1;
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	/* the QP's doorbell now goes nowhere; what is left must still close */
	cr_assert_eq(ibv_destroy_qp(t.qp[0]), 0);
	t.qp[0] = NULL;
	munmap((void *)reg, 4096);
}

/*
 * A SIGSEGV handler the application installs while the engine sleeps does
 * not see the doorbell faults, and sees its own faults: the device's
 * handler stays in front, and sigaction() reports what the application
 * installed.
 */
Test(dev_trap, a_later_segv_handler_sees_only_its_own_faults)
{
	struct sigaction cur;
	uint8_t *hole = app_hole();

	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(300000);
	cr_assert_eq(app_segv_install(), 0);
	if (!sigsetjmp(app_env, 1))
		cr_assert_eq(write8(1500).status, IBV_WC_SUCCESS);
	cr_assert_eq(app_faults, 0, "the application's handler saw a doorbell fault");
	cr_assert_eq(sigaction(SIGSEGV, NULL, &cur), 0);
	cr_assert(cur.sa_sigaction == app_handler, "sigaction() does not report the handler set");
	app_touch(hole);
	cr_assert_eq(app_faults, 1, "the application's own fault reached %d handlers", app_faults);
	munmap(hole, 4096);
}

/*
 * A QP on a thread domain: it rings a BlueFlame register of its own, on a
 * UAR page no QP of the fixture uses.  *page is that page.
 */
struct td_qp {
	struct ibv_td	*td;
	struct ibv_pd	*pad;
	struct ibv_qp	*qp;
	uintptr_t	page;
};

static void td_qp_create(struct td_qp *q)
{
	struct ibv_qp_init_attr a = {
		.send_cq = t.cq[0], .recv_cq = t.cq[0], .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	q->td = ibv_alloc_td(t.ctx, &(struct ibv_td_init_attr){ 0 });
	cr_assert(q->td, "alloc_td: %s", strerror(errno));
	q->pad = ibv_alloc_parent_domain(t.ctx, &(struct ibv_parent_domain_init_attr){
		.pd = t.pd, .td = q->td });
	cr_assert(q->pad, "alloc_parent_domain: %s", strerror(errno));
	q->qp = ibv_create_qp(q->pad, &a);
	cr_assert(q->qp, "create_qp: %s", strerror(errno));
	q->page = (uintptr_t)tt_bf_reg(q->qp) & ~(uintptr_t)4095;
	for (int i = 0; i < 2; i++)
		cr_assert_neq(q->page, (uintptr_t)tt_bf_reg(t.qp[i]) & ~(uintptr_t)4095,
			      "the thread domain's QP rings on a page of the fixture's");
}

static void td_qp_destroy(struct td_qp *q)
{
	cr_assert_eq(ibv_destroy_qp(q->qp), 0);
	cr_assert_eq(ibv_dealloc_pd(q->pad), 0);
	cr_assert_eq(ibv_dealloc_td(q->td), 0);
}

/*
 * The application makes a doorbell page read-only: when the engine next
 * wakes it does not make the page writable again, and a store there is
 * the application's fault, not a doorbell.
 */
Test(dev_trap, the_applications_mprotect_of_a_doorbell_page_stands)
{
	struct td_qp q;
	char perms[5];

	td_qp_create(&q);
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);		/* idle: the pages are protected */
	tt_page_perms((const void *)q.page, perms);
	cr_assert_str_eq(perms, "r--s", "the idle engine left the page %s", perms);
	cr_assert_eq(mprotect((void *)q.page, 4096, PROT_READ), 0);
	/* a doorbell elsewhere wakes the engine, which gives back its pages */
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	tt_page_perms((const void *)q.page, perms);
	cr_assert_str_eq(perms, "r--s", "the engine made the page %s", perms);
	cr_assert_eq(app_segv_install(), 0);
	if (!sigsetjmp(app_env, 1))
		*(volatile uint32_t *)tt_bf_reg(q.qp) = 0;
	cr_assert_eq(app_faults, 1, "the application's fault reached %d handlers", app_faults);
	/* writable again, the page is trapped again */
	cr_assert_eq(mprotect((void *)q.page, 4096, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	tt_page_perms((const void *)q.page, perms);
	cr_assert_str_eq(perms, "r--s", "the idle engine left the page %s", perms);
	td_qp_destroy(&q);
}

/*
 * The application maps something else over a doorbell page (MAP_FIXED,
 * no munmap first): the engine must not protect the new mapping when it
 * next sleeps.
 */
Test(dev_trap, a_mapping_put_over_a_doorbell_page_is_left_alone)
{
	struct td_qp q;
	volatile uint8_t *p;
	char perms[5];

	td_qp_create(&q);
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	p = mmap((void *)q.page, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	cr_assert_eq((uintptr_t)p, q.page);
	/* the engine wakes, and sleeps again */
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	tt_page_perms((const void *)p, perms);
	cr_assert_str_eq(perms, "rw-p", "the engine changed another mapping to %s", perms);
	p[0] = 1;
	td_qp_destroy(&q);
}

/*
 * After a completion event the engine leaves the doorbells unprotected for
 * RFEMU_EVENT_GRACE_US (1 s here, so that a slow machine still rings
 * within it): the application that woke on the event arms its CQ and
 * posts again without a fault.  Once the grace is over the pages are
 * trapped again.
 */
static void setup_grace(void)
{
	setenv("RFEMU_EVENT_GRACE_US", "1000000", 1);
	setup();
}

TestSuite(dev_trap_grace, .init = setup_grace, .fini = teardown, .timeout = 60);

/* Arm cq, post an 8-byte write from qp, and take the event it raises. */
static void write8_event(struct ibv_comp_channel *ch, struct ibv_cq *cq, struct ibv_qp *qp)
{
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	post_write8(qp, 0);
	cr_assert(dt_event_within(ch, cq, 10000), "no completion event");
	cr_assert_eq(dt_poll1(cq).status, IBV_WC_SUCCESS);
}

Test(dev_trap_grace, the_doorbells_after_an_event_do_not_fault)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(t.ctx);
	struct ibv_cq *cq = ch ? ibv_create_cq(t.ctx, 16, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = t.cq[0], .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct dt_qp_opts o = { .type = IBV_QPT_RC, .retry_cnt = 7, .timeout = 14 };
	struct rfemu_dev_stats s0, s1;
	struct ibv_qp *qp, *peer;

	cr_assert(cq, "%s", strerror(errno));
	qp = ibv_create_qp(t.pd, &ia);
	cr_assert(qp);
	peer = dt_create_qp(&t, 1, &o);
	cr_assert_eq(dt_connect(qp, peer->qp_num, t.lid, &o), 0);
	cr_assert_eq(dt_connect(peer, qp->qp_num, t.lid, &o), 0);

	write8_event(ch, cq, qp);
	s0 = wt_stats();
	write8_event(ch, cq, qp);
	write8_event(ch, cq, qp);
	s1 = wt_stats();
	cr_assert_eq(s1.trap_faults, s0.trap_faults,
		     "%llu doorbell faults right after completion events",
		     (unsigned long long)(s1.trap_faults - s0.trap_faults));

	usleep(1500000);	/* the grace is over: the pages are protected */
	write8_event(ch, cq, qp);
	cr_assert_gt(wt_stats().trap_faults, s1.trap_faults,
		     "no doorbell fault once the grace was over");

	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

/*
 * Busy threads on every CPU: more threads are runnable than there are
 * CPUs (under EEVDF the engine's yields need not take long, engine.c's
 * cpus_oversubscribed()), it knows its CPU contended, and after a doorbell
 * it naps with the pages left writable.  Protecting them again each time would shoot down the TLB of
 * the CPU a polling application holds, and the next doorbell would fault.
 */
static atomic_bool contend_stop;

static void *contend(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&contend_stop, memory_order_relaxed))
		;
	return NULL;
}

static void setup_contended(void)
{
	setenv("RFEMU_POLL_ASSIST_US", "0", 1);
	setenv("RFEMU_DOORBELL_ASSIST", "0", 1);
	dt_setup(&t);
}

TestSuite(dev_trap_contended, .init = setup_contended, .fini = teardown, .timeout = 120);

Test(dev_trap_contended, a_contended_engine_does_not_trap_again)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[64];
	struct rfemu_dev_stats s0, s1;
	uint64_t faults;
	int n = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;

	for (int i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, contend, NULL), 0);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	/*
	 * What the engine sees is the scheduler's to decide: a round in
	 * which it did not find its CPU contended (it happened once in an
	 * arm64 run under qemu-user) is run again, three rounds at most.
	 */
	for (int round = 0; round < 3; round++) {
		s0 = wt_stats();
		for (int i = 0; i < 30; i++)
			cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
		s1 = wt_stats();
		if (s1.trap_faults - s0.trap_faults <= 10)
			break;
	}
	atomic_store(&contend_stop, true);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	faults = s1.trap_faults - s0.trap_faults;
	cr_assert_leq(faults, 10, "%llu doorbell faults in 30 writes on contended CPUs",
		      (unsigned long long)faults);
}

/* With RFEMU_DOORBELL_TRAP=0 the engine looks for doorbells by itself. */
static void setup_off(void)
{
	setenv("RFEMU_POLL_ASSIST_US", "0", 1);
	setenv("RFEMU_DOORBELL_TRAP", "0", 1);
	setenv("RFEMU_HOT_MS", "0", 1);
	setenv("RFEMU_IDLE_MAX_US", "2000", 1);
	dt_setup(&t);
}

TestSuite(dev_trap_off, .init = setup_off, .fini = teardown, .timeout = 60);

Test(dev_trap_off, the_engine_looks)
{
	char perms[5];

	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	usleep(100000);
	tt_page_perms(tt_bf_reg(t.qp[0]), perms);
	cr_assert_eq(perms[1], 'w', "the doorbell page is %s with the trap off", perms);
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
}

/*
 * The engine thread asks for a short scheduler slice (sched_setattr), which
 * also sets a nice value: it keeps the one the process runs at.  (Linux's
 * nice is per thread; the engine inherits the one of the thread that
 * opened the device.)
 */
static long old_tids[64];
static unsigned n_old_tids;

/* Calls fn(tid, nice) for each thread of this process. */
static void for_each_thread(void (*fn)(long tid, long nice))
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[300], stat[512], *p;
		long nice = -100;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(stat, sizeof(stat), f) && (p = strrchr(stat, ')')))
			/* after the name: state, 14 numbers up to priority, then nice */
			sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %ld",
			       &nice);
		fclose(f);
		fn(atol(e->d_name), nice);
	}
	closedir(d);
}

static void remember(long tid, long nice)
{
	(void)nice;
	if (n_old_tids < sizeof(old_tids) / sizeof(old_tids[0]))
		old_tids[n_old_tids++] = tid;
}

static unsigned new_threads;

static void check_new(long tid, long nice)
{
	for (unsigned i = 0; i < n_old_tids; i++)
		if (old_tids[i] == tid)
			return;
	new_threads++;
	cr_assert_eq(nice, 7, "thread %ld runs at nice %ld", tid, nice);
}

static void setup_nice(void)
{
	cr_assert_eq(setpriority(PRIO_PROCESS, 0, 7), 0);
	for_each_thread(remember);
	dt_setup(&t);
}

TestSuite(dev_engine_nice, .init = setup_nice, .fini = teardown, .timeout = 60);

Test(dev_engine_nice, the_engine_keeps_the_process_nice_value)
{
	cr_assert_eq(write8(5000).status, IBV_WC_SUCCESS);
	for_each_thread(check_new);
	cr_assert_geq(new_threads, 1, "no engine thread");
}

