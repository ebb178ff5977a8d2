/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_guard.c - the device's guarded copy, dev_copy() (emu/device/guard.c),
 * called directly from the preloaded librfemu.so.
 *
 * Every size to 300 and some large ones at every alignment of source and
 * destination copy exactly their bytes; a source that cannot be read or a
 * destination that cannot be written, wholly or from a page boundary on,
 * makes the copy return false instead of killing the process, and the
 * next copy works; a fault of the application's own still reaches its
 * handler, or without one kills the process.  The fault handler is
 * installed when a device context opens.
 */
#define _GNU_SOURCE	/* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/mman.h>

#include <sanitizer/asan_interface.h>	/* no-ops unless built with ASan */

#include "app_segv.h"

#define PAGE	4096

/* built with ASan or TSan (make sanitize): gcc says so one way, clang another */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

typedef bool dev_copy_fn(void *dst, const void *src, size_t n);

static struct ibv_context *ctx;
static dev_copy_fn *copy;

static void setup(void)
{
	ctx = et_open();	/* installs the device's fault handler */
	copy = (dev_copy_fn *)dlsym(RTLD_DEFAULT, "dev_copy");
	cr_assert(copy, "librfemu.so has no dev_copy()");
}

static void teardown(void)
{
	ibv_close_device(ctx);
}

TestSuite(dev_guard, .init = setup, .fini = teardown, .timeout = 120);

/* pages good pages followed by one with protection bad; returns the bad one */
static uint8_t *map_with_bad_page(unsigned pages, int bad)
{
	uint8_t *p = mmap(NULL, (pages + 1) * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED, "mmap: %s", strerror(errno));
	for (unsigned i = 0; i < (pages + 1) * PAGE; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	cr_assert_eq(mprotect(p + pages * PAGE, PAGE, bad), 0);
	return p + pages * PAGE;
}

/* A good copy of n bytes: true, and exactly those bytes. */
static void check_good_copy(size_t n)
{
	static uint8_t src[PAGE], dst[PAGE + 2];

	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	memset(dst, 0xee, sizeof(dst));
	cr_assert(copy(dst + 1, src, n), "a good copy of %zu bytes failed", n);
	cr_assert_eq(memcmp(dst + 1, src, n), 0, "a good copy of %zu bytes differs", n);
	cr_assert_eq(dst[0], 0xee);
	cr_assert_eq(dst[n + 1], 0xee, "a copy of %zu bytes wrote past its end", n);
}

static const size_t large[] = { 511, 512, 513, 1000, 1024, 4095, 4096, 4097, 9000 };

Test(dev_guard, every_size_at_every_alignment_copies_exactly)
{
	enum { MAX = 9000, SLACK = 64 };
	uint8_t *src = malloc(MAX + SLACK), *dst = malloc(MAX + SLACK);
	size_t nsizes = 301 + sizeof(large) / sizeof(large[0]);

	cr_assert(src && dst);
	for (size_t i = 0; i < MAX + SLACK; i++)
		src[i] = (uint8_t)(i * 131 + 17);
	for (size_t k = 0; k < nsizes; k++) {
		size_t n = k < 301 ? k : large[k - 301];

		for (unsigned sa = 0; sa < 16; sa++) {
			for (unsigned da = 0; da < 16; da++) {
				memset(dst, 0xee, da + n + 16);
				cr_assert(copy(dst + da, src + sa, n),
					  "size %zu, alignments %u/%u: false", n, sa, da);
				cr_assert_eq(memcmp(dst + da, src + sa, n), 0,
					     "size %zu, alignments %u/%u: bytes differ", n, sa, da);
				for (unsigned i = 0; i < da; i++)
					cr_assert_eq(dst[i], 0xee, "size %zu, alignments %u/%u: "
						     "byte %d written", n, sa, da, (int)i - (int)da);
				for (unsigned i = 0; i < 16; i++)
					cr_assert_eq(dst[da + n + i], 0xee, "size %zu, alignments "
						     "%u/%u: byte %zu written", n, sa, da, n + i);
			}
		}
	}
	free(src);
	free(dst);
}

/* the sizes the faulting copies try, each from inside the bad page and
 * from k bytes before it */
static const size_t fault_sizes[] = {
	1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100,
	128, 300, 511, 512, 513, 4096, 5000,
};

static void fault_copies(uint8_t *bad, bool bad_is_src)
{
	static uint8_t good[3 * PAGE];

	for (size_t i = 0; i < sizeof(fault_sizes) / sizeof(fault_sizes[0]); i++) {
		size_t n = fault_sizes[i];
		size_t before[] = { 0, 1, n / 2, n - 1 };

		for (size_t j = 0; j < sizeof(before) / sizeof(before[0]); j++) {
			size_t k = before[j];
			uint8_t *p = bad - k;

			if (j && (k == 0 || k >= n))
				continue;	/* not a crossing copy for this n */
			if (bad_is_src)
				cr_assert_not(copy(good, p, n), "a copy of %zu bytes from "
					      "%zu bytes before an unreadable page succeeded", n, k);
			else
				cr_assert_not(copy(p, good, n), "a copy of %zu bytes to "
					      "%zu bytes before a read-only page succeeded", n, k);
			check_good_copy(n < PAGE ? n : PAGE);
		}
	}
}

Test(dev_guard, an_unreadable_source_returns_false)
{
	uint8_t *bad = map_with_bad_page(2, PROT_NONE);

	fault_copies(bad, true);
	cr_assert_eq(munmap(bad - 2 * PAGE, 3 * PAGE), 0);
}

/*
 * Pages ASan's shadow calls poisoned, as a heap redzone that was there
 * before the mapping leaves it: the device reads them as the MMU has
 * them, the unreadable one returns false and the readable one copies;
 * ASan reports neither (under make sanitize; elsewhere the poisoning is
 * a no-op and this is the test above).
 */
Test(dev_guard, a_source_asan_calls_poisoned_is_read_as_mapped)
{
	uint8_t *bad = map_with_bad_page(1, PROT_NONE), dst[64];

	ASAN_POISON_MEMORY_REGION(bad - PAGE, 2 * PAGE);
	cr_expect_not(copy(dst, bad, sizeof(dst)), "an unreadable page");
	cr_expect_not(copy(dst, bad - 8, sizeof(dst)), "across into it");
	cr_expect(copy(dst, bad - PAGE, sizeof(dst)), "a readable page");
	ASAN_UNPOISON_MEMORY_REGION(bad - PAGE, 2 * PAGE);
	cr_expect_eq(dst[5], (uint8_t)(5 * 7 + 3), "its bytes");
	cr_assert_eq(munmap(bad - PAGE, 2 * PAGE), 0);
}

Test(dev_guard, an_unmapped_source_returns_false)
{
	uint8_t *bad = map_with_bad_page(2, PROT_NONE);

	cr_assert_eq(munmap(bad, PAGE), 0);
	fault_copies(bad, true);
	cr_assert_eq(munmap(bad - 2 * PAGE, 2 * PAGE), 0);
}

Test(dev_guard, a_read_only_destination_returns_false_and_stays_unchanged)
{
	uint8_t *bad = map_with_bad_page(2, PROT_READ);
	uint8_t before[PAGE];

	memcpy(before, bad, PAGE);
	fault_copies(bad, false);
	cr_assert_eq(memcmp(before, bad, PAGE), 0, "the read-only page changed");
	cr_assert_eq(munmap(bad - 2 * PAGE, 3 * PAGE), 0);
}

/*
 * The application's own faults are its handler's, before and after the
 * device's copies fault, and the copies' faults never reach it.
 */
Test(dev_guard, the_applications_faults_still_reach_its_handler)
{
	uint8_t *bad = map_with_bad_page(1, PROT_NONE);
	uint8_t *hole = app_hole();
	uint8_t buf[64];

	cr_assert_eq(app_segv_install(), 0);
	app_touch(hole);
	cr_assert_eq(app_faults, 1, "the application's fault reached %d handlers", app_faults);
	cr_assert_not(copy(buf, bad, sizeof(buf)));
	cr_assert_not(copy(bad, buf, 8));
	cr_assert_eq(app_faults, 1, "the device's faults reached the application's handler");
	app_touch(hole);
	cr_assert_eq(app_faults, 2, "the application's fault reached %d handlers", app_faults);
	check_good_copy(64);
	cr_assert_eq(munmap(hole, PAGE), 0);
	cr_assert_eq(munmap(bad - PAGE, 2 * PAGE), 0);
}

/*
 * A fault of the application's own with no handler of its own takes the
 * default action: the process dies of it, as it would without the device.
 * (The device's handler resets the disposition past the sigaction()
 * interposer; through it, the fault came back for ever.)
 */
Test(dev_guard, an_unhandled_fault_still_kills_the_process)
{
	uint8_t *hole = app_hole();
	pid_t pid = fork();
	int status = 0;

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		*(volatile uint8_t *)hole = 1;
		_exit(0);
	}
	for (int i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		cr_assert_fail("the child still runs 10 s after its fault");
	}
#if SANITIZED
	/* the sanitizer's own SEGV handler, behind ours, reports it and exits */
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0,
		  "the child's status is %#x, not the sanitizer's exit", status);
#else
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		  "the child's status is %#x, not death by SIGSEGV", status);
#endif
	cr_assert_eq(munmap(hole, PAGE), 0);
}
