/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * tests/unit/cross/main.c - run every test registered through the stand-in
 * criterion.h; exit 1 if any failed.
 */
#include <criterion/criterion.h>

struct rfx_test *rfx_tests;
jmp_buf rfx_abort;
int rfx_failed;

int main(void)
{
	/* volatile: they live across setjmp() and its longjmp() */
	struct rfx_test *volatile t;
	volatile int n = 0, bad = 0;

	for (t = rfx_tests; t; t = t->next) {
		rfx_failed = 0;
		if (!setjmp(rfx_abort))
			t->fn();
		n++;
		if (rfx_failed) {
			fprintf(stderr, "FAIL %s::%s\n", t->suite, t->name);
			bad++;
		}
	}
	printf("%d tests, %d failed\n", n, bad);
	return bad != 0;
}
