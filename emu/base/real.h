/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * real.h - the one door to the C library past interpose/: REAL() resolves
 * the next definition of a libc function (RTLD_NEXT), for the interposers
 * of interpose/ and for the emu_real_* calls of base/libc.c, which every
 * folder below interpose/ uses instead of the libc names interpose/
 * defines (tools/check-layout.sh counts such a call as a call up).
 */
#ifndef RDMAFAST_EMU_BASE_REAL_H
#define RDMAFAST_EMU_BASE_REAL_H

#include <dlfcn.h>

/* Resolve the next definition once; the first call may come from our own
 * constructor, so resolution is lazy and idempotent. */
#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	static ret (*get_##name(void))(__VA_ARGS__)			\
	{								\
		if (!real_##name)					\
			real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name); \
		return real_##name;					\
	}

#endif /* RDMAFAST_EMU_BASE_REAL_H */
