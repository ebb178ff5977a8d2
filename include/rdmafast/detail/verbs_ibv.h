/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/verbs_ibv.h - what the control glue (rdmafast/verbs/)
 * stands on underneath: libibverbs and mlx5dv included with the
 * byte-order helpers they need, a verbs return turned into -errno, the
 * checked build's question to a QP.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_VERBS_IBV_H
#define RDMAFAST_DETAIL_VERBS_IBV_H

#include <errno.h>
#include <stdint.h>
#include <endian.h>

/*
 * mlx5dv.h's inline helpers call htobe32() and friends, which glibc only
 * declares for _DEFAULT_SOURCE; under -std=c11 they would silently become
 * undefined functions (the warning is lost inside a system header) and
 * the program would fail to link. Supply them while mlx5dv.h is read (its
 * inline bodies are expanded there) and take them back afterwards, so
 * that they do not stay defined in the program's namespace.
 */
#if !defined(htobe32)
#define RF__BYTE_ORDER_SHIM 1
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define htobe16(x) __builtin_bswap16(x)
#define htobe32(x) __builtin_bswap32(x)
#define htobe64(x) __builtin_bswap64(x)
#define be16toh(x) __builtin_bswap16(x)
#define be32toh(x) __builtin_bswap32(x)
#define be64toh(x) __builtin_bswap64(x)
#else
#define htobe16(x) ((uint16_t)(x))
#define htobe32(x) ((uint32_t)(x))
#define htobe64(x) ((uint64_t)(x))
#define be16toh(x) ((uint16_t)(x))
#define be32toh(x) ((uint32_t)(x))
#define be64toh(x) ((uint64_t)(x))
#endif
#endif

#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#ifdef RF__BYTE_ORDER_SHIM
#undef RF__BYTE_ORDER_SHIM
#undef htobe16
#undef htobe32
#undef htobe64
#undef be16toh
#undef be32toh
#undef be64toh
#endif

#include <rdmafast/compiler.h>

RF_BEGIN_DECLS

/* Turn a verbs return (positive errno, or -1 with errno) into -errno. */
static inline RF_COLD int rf__ibv_err(int ret)
{
	if (ret > 0)
		return -ret;
	if (ret < 0)
		return errno ? -errno : -EIO;
	return 0;
}

#ifdef RF_CHECKED
/*
 * The checked build's question to a QP (struct rf__chk_sq.query): its
 * state as enum ibv_qp_state, or -1. Asked at a post only while the QP is
 * not known to be in RTS.
 */
static inline RF_COLD int rf__chk_qp_state_ibv(const void *arg)
{
	struct ibv_qp_attr at;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp((struct ibv_qp *)(uintptr_t)arg, &at, IBV_QP_STATE, &ia))
		return -1;
	return (int)at.qp_state;
}
#endif

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_VERBS_IBV_H */
