/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_exports.c - what librfemu.so shows the program it is preloaded into
 * (emu/librfemu.map): the calls it takes the place of and its counters,
 * none of its own functions. A preloaded library's names come first in
 * every lookup of the process: an exported wire_send() or cm_addr_any()
 * would take the place of the program's, or another library's, of that
 * name. Runs under build/rfemu.
 *
 * Names are looked up in the library's own handle, not in the process: a
 * sanitizer's runtime in the test program defines ioctl() and mmap() too,
 * and comes first there.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "emu_test.h"

/* The library this process preloads, found by its counters. */
static void *librfemu(void)
{
	void *stats = dlsym(RTLD_DEFAULT, "rfemu_dev_stats");
	Dl_info info;
	void *h;

	cr_assert(stats && dladdr(stats, &info) && info.dli_fname, "no librfemu.so preloaded");
	h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	cr_assert(h, "dlopen %s: %s", info.dli_fname, dlerror());
	return h;
}

Test(exports, what_it_is_there_for)
{
	static const char *const names[] = {
		"open", "ioctl", "mmap", "ibv_open_device", "rfemu_dev_stats",
	};
	void *h = librfemu();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *sym = dlsym(h, names[i]);	/* else libc's, a dependency */
		Dl_info info;

		cr_expect(sym && dladdr(sym, &info) && info.dli_fname &&
			  strstr(info.dli_fname, "librfemu"), "%s is not the emulator's", names[i]);
	}
	dlclose(h);
}

Test(exports, none_of_its_own_functions)
{
	/* one of each folder prefix; names the library defines */
	static const char *const names[] = {
		"wire_send", "wire_open", "cm_addr_any", "dev_now_ns", "dev_eng",
		"emu_cfg", "emu_subnet_dir",
	};
	void *h = librfemu();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect_null(dlsym(h, names[i]), "librfemu.so exports %s", names[i]);
	dlclose(h);
}
