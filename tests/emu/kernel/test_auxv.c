/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_auxv.c - an emulated process is told that its CPU has no ST64B
 * (arm64 FEAT_LS64): the emulated UAR is ordinary memory, where a 64-byte
 * single-copy-atomic store may fault. Runs under build/rfemu.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/auxv.h>

#include "emu_test.h"

Test(auxv, getauxval_is_the_emulators)
{
	Dl_info info;

	/* the function the process calls, not libc's: the CPU's own answer
	 * cannot be made to say LS64 here, so the test checks who answers */
	cr_assert(dladdr((void *)getauxval, &info), "dladdr: %s", dlerror());
	cr_assert(info.dli_fname && strstr(info.dli_fname, "librfemu"),
		  "getauxval comes from %s", info.dli_fname ? info.dli_fname : "?");
}

Test(auxv, hwcap3_has_no_ls64)
{
	cr_expect_eq(getauxval(29 /* AT_HWCAP3 */) & (1UL << 3 /* HWCAP3_LS64 */), 0);
	/* other entries pass through */
	cr_expect_eq(getauxval(AT_PAGESZ), (unsigned long)sysconf(_SC_PAGESIZE));
}
