/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/unit/cross/criterion/criterion.h - the part of Criterion that the unit
 * tests use, for running them on another architecture under qemu-user
 * (make test-aarch64). Criterion itself runs each test in a child it
 * re-executes from its own binary, which qemu-user cannot start without
 * binfmt_misc; here the tests run one after the other in one process, and
 * a failed assertion ends its test with longjmp. Messages are not printed:
 * the file, line and condition are.
 */
#ifndef RF_CROSS_CRITERION_H
#define RF_CROSS_CRITERION_H

#include <setjmp.h>
#include <stdio.h>

struct rfx_test {
	const char *suite, *name;
	void (*fn)(void);
	struct rfx_test *next;
};

extern struct rfx_test *rfx_tests;
extern jmp_buf rfx_abort;
extern int rfx_failed;

/* Each test registers itself before main, as Criterion's do. */
#define Test(suite, name, ...)							\
	static void suite##_##name(void);					\
	__attribute__((constructor)) static void rfx_reg_##suite##_##name(void)	\
	{									\
		static struct rfx_test t = { #suite, #name, suite##_##name, 0 };	\
		t.next = rfx_tests;						\
		rfx_tests = &t;							\
	}									\
	static void suite##_##name(void)

#define rfx_check(c, fatal)							\
	do {									\
		if (!(c)) {							\
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);	\
			rfx_failed = 1;						\
			if (fatal)						\
				longjmp(rfx_abort, 1);				\
		}								\
	} while (0)

#define cr_assert(c, ...)		rfx_check(c, 1)
#define cr_assert_eq(a, b, ...)		rfx_check((a) == (b), 1)
#define cr_assert_gt(a, b, ...)		rfx_check((a) > (b), 1)
#define cr_assert_null(a, ...)		rfx_check((a) == NULL, 1)
#define cr_assert_not_null(a, ...)	rfx_check((a) != NULL, 1)
#define cr_expect(c, ...)		rfx_check(c, 0)
#define cr_expect_not(c, ...)		rfx_check(!(c), 0)
#define cr_expect_eq(a, b, ...)		rfx_check((a) == (b), 0)
#define cr_expect_neq(a, b, ...)	rfx_check((a) != (b), 0)

#endif /* RF_CROSS_CRITERION_H */
