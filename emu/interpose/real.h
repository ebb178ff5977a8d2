/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * real.h - the next definition of an interposed libc function, for the
 * interposers of preload.c and paths.c.
 */
#ifndef RDMAFAST_EMU_INTERPOSE_REAL_H
#define RDMAFAST_EMU_INTERPOSE_REAL_H

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

#endif /* RDMAFAST_EMU_INTERPOSE_REAL_H */
