/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * test_exports.c - what librfemu.so shows the program it is preloaded into
 * (emu/librfemu.map): the calls it takes the place of and its counters,
 * none of its own functions. A preloaded library's names come first in
 * every lookup of the process: an exported wire_send() or cm_addr_any()
 * would take the place of the program's, or another library's, of that
 * name. Runs under build/rfemu.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "emu_test.h"

/* name resolves, from the library the process preloads */
static bool from_librfemu(const char *name)
{
	void *sym = dlsym(RTLD_DEFAULT, name);
	Dl_info info;

	return sym && dladdr(sym, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "librfemu");
}

Test(exports, what_it_is_there_for)
{
	static const char *const names[] = {
		"open", "ioctl", "mmap", "ibv_open_device", "rfemu_dev_stats",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect(from_librfemu(names[i]), "%s is not the emulator's", names[i]);
}

Test(exports, none_of_its_own_functions)
{
	/* one of each folder prefix; names the library defines */
	static const char *const names[] = {
		"wire_send", "wire_open", "cm_addr_any", "dev_now_ns", "dev_eng",
		"emu_cfg", "emu_subnet_dir",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect_null(dlsym(RTLD_DEFAULT, names[i]), "librfemu.so exports %s", names[i]);
}
