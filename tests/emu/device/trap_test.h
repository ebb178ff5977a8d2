/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * trap_test.h - what the doorbell tests (test_trap.c, test_doorbell_assist.c)
 * look at: the protection of a page, and a QP's BlueFlame register.
 */
#ifndef RDMAFAST_TESTS_TRAP_TEST_H
#define RDMAFAST_TESTS_TRAP_TEST_H

#include <stdio.h>

#include <infiniband/mlx5dv.h>

#include "dev_test.h"

/* The permissions /proc/self/maps shows for the page at p, e.g. "rw-s". */
static inline void tt_page_perms(const void *p, char perms[5])
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	strcpy(perms, "?");
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
		    (uintptr_t)p >= lo && (uintptr_t)p < hi)
			break;
		strcpy(perms, "?");
	}
	fclose(f);
}

/* The BlueFlame register qp rings. */
static inline void *tt_bf_reg(struct ibv_qp *qp)
{
	struct mlx5dv_qp dv;
	struct mlx5dv_obj o = { .qp = { qp, &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	return dv.bf.reg;
}

#endif /* RDMAFAST_TESTS_TRAP_TEST_H */
