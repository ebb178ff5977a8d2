/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/hw/endian.h - big-endian field types and conversions.
 *
 * Every multi-byte field the HCA reads or writes is big-endian. Such fields
 * are typed __be16/__be32/__be64 (from <linux/types.h>, as in the kernel
 * and rdma-core), so `sparse -D__CHECKER__` flags a missing or doubled swap.
 *
 * Conversions happen only in the segment setters and the CQE decoders.
 * Constants are swapped at compile time with RF_BE16/32/64(), which are
 * integer constant expressions: use them for opcodes and flags so the data
 * path never swaps a constant at run time.
 */
#ifndef RDMAFAST_HW_ENDIAN_H
#define RDMAFAST_HW_ENDIAN_H

#include <stdint.h>
#include <linux/types.h>

#include <rdmafast/compiler.h>

#ifdef __CHECKER__
#define RF_FORCE __attribute__((force))
#else
#define RF_FORCE
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RF_LITTLE_ENDIAN 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RF_LITTLE_ENDIAN 0
#else
#error "rdmafast: cannot tell the byte order of this target"
#endif

/* Byte swaps spelled out so they stay integer constant expressions. */
#define RF_SWAP16(x) ((uint16_t)((((uint16_t)(x) & 0x00ffU) << 8) | \
				 (((uint16_t)(x) & 0xff00U) >> 8)))
#define RF_SWAP32(x) ((uint32_t)((((uint32_t)(x) & 0x000000ffUL) << 24) | \
				 (((uint32_t)(x) & 0x0000ff00UL) << 8)  | \
				 (((uint32_t)(x) & 0x00ff0000UL) >> 8)  | \
				 (((uint32_t)(x) & 0xff000000UL) >> 24)))
#define RF_SWAP64(x) ((uint64_t)(((uint64_t)RF_SWAP32((uint64_t)(x) & 0xffffffffULL) << 32) | \
				 (uint64_t)RF_SWAP32((uint64_t)(x) >> 32)))

#if RF_LITTLE_ENDIAN
#define RF_BE16(c) ((RF_FORCE __be16)RF_SWAP16(c))
#define RF_BE32(c) ((RF_FORCE __be32)RF_SWAP32(c))
#define RF_BE64(c) ((RF_FORCE __be64)RF_SWAP64(c))
#else
#define RF_BE16(c) ((RF_FORCE __be16)(uint16_t)(c))
#define RF_BE32(c) ((RF_FORCE __be32)(uint32_t)(c))
#define RF_BE64(c) ((RF_FORCE __be64)(uint64_t)(c))
#endif

RF_BEGIN_DECLS

/* Run-time conversions: one bswap instruction each on little-endian hosts. */
RF_INLINE __be16 rf_htobe16(uint16_t v)
{
#if RF_LITTLE_ENDIAN
	return (RF_FORCE __be16)__builtin_bswap16(v);
#else
	return (RF_FORCE __be16)v;
#endif
}

RF_INLINE __be32 rf_htobe32(uint32_t v)
{
#if RF_LITTLE_ENDIAN
	return (RF_FORCE __be32)__builtin_bswap32(v);
#else
	return (RF_FORCE __be32)v;
#endif
}

RF_INLINE __be64 rf_htobe64(uint64_t v)
{
#if RF_LITTLE_ENDIAN
	return (RF_FORCE __be64)__builtin_bswap64(v);
#else
	return (RF_FORCE __be64)v;
#endif
}

RF_INLINE uint16_t rf_be16toh(__be16 v)
{
#if RF_LITTLE_ENDIAN
	return __builtin_bswap16((RF_FORCE uint16_t)v);
#else
	return (RF_FORCE uint16_t)v;
#endif
}

RF_INLINE uint32_t rf_be32toh(__be32 v)
{
#if RF_LITTLE_ENDIAN
	return __builtin_bswap32((RF_FORCE uint32_t)v);
#else
	return (RF_FORCE uint32_t)v;
#endif
}

RF_INLINE uint64_t rf_be64toh(__be64 v)
{
#if RF_LITTLE_ENDIAN
	return __builtin_bswap64((RF_FORCE uint64_t)v);
#else
	return (RF_FORCE uint64_t)v;
#endif
}

RF_END_DECLS

#endif /* RDMAFAST_HW_ENDIAN_H */
