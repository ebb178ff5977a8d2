/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * app_segv.h - an application's own SIGSEGV handler, for the tests that
 * check the device's handlers (emu/device/guard.c, trap.c) keep out of its
 * way: it counts the faults it is given and leaves each by siglongjmp, as
 * a program that recovers from its own faults would.
 */
#ifndef RDMAFAST_TESTS_APP_SEGV_H
#define RDMAFAST_TESTS_APP_SEGV_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

#include "emu_test.h"

static sigjmp_buf app_env;
static volatile sig_atomic_t app_faults;

static inline void app_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	app_faults++;
	siglongjmp(app_env, 1);
}

/* Put app_handler in front for SIGSEGV, as the application would. */
static inline int app_segv_install(void)
{
	struct sigaction a = { .sa_sigaction = app_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&a.sa_mask);
	return sigaction(SIGSEGV, &a, NULL);
}

/* A page of the application's own that faults on every access. */
static inline uint8_t *app_hole(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED, "mmap: %s", strerror(errno));
	return (uint8_t *)p;
}

/* The application faults on its own page; app_handler takes it back here. */
static inline void app_touch(const uint8_t *hole)
{
	if (!sigsetjmp(app_env, 1))
		(void)*(const volatile uint8_t *)hole;
}

#endif
