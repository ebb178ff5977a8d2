/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/compiler.h - attributes and portability macros shared by every
 * rdmafast header.
 *
 * rdmafast needs a GNU-compatible compiler (gcc or clang): the barriers are
 * inline assembly. Every header compiles as C11 and as C++11 or later.
 */
#ifndef RDMAFAST_COMPILER_H
#define RDMAFAST_COMPILER_H

#if !defined(__GNUC__)
#error "rdmafast needs gcc or clang (GNU C inline assembly for barriers)"
#endif

/*
 * RF_INLINE marks the data path: always inlined, so each call site becomes
 * straight-line code and constant arguments (opcodes, flags) fold away.
 * gcc refuses to build, even at -O0, when an always_inline function cannot
 * be inlined, which is what we want on the hot path.
 */
#define RF_INLINE static inline __attribute__((always_inline))

/* Cold helpers: decoders and string tables used on error paths only. */
#define RF_COLD __attribute__((cold))

#ifndef RF_LIKELY
#define RF_LIKELY(x)   __builtin_expect(!!(x), 1)
#endif
#ifndef RF_UNLIKELY
#define RF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

/* Compile-time layout checks; usable at file scope in C11 and C++11. */
#ifdef __cplusplus
#define RF_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define RF_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

#ifdef __cplusplus
#define RF_BEGIN_DECLS extern "C" {
#define RF_END_DECLS   }
#else
#define RF_BEGIN_DECLS
#define RF_END_DECLS
#endif

/*
 * Debug checks (argument validation that the fast path leaves to the
 * caller) compile to nothing unless RF_DEBUG is defined.
 */
#ifdef RF_DEBUG
#include <assert.h>
#define RF_ASSERT(x) assert(x)
#else
#define RF_ASSERT(x) ((void)0)
#endif

#endif /* RDMAFAST_COMPILER_H */
