/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/copy.h - copying bytes on the data path without a call to
 * memcpy.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_COPY_H
#define RDMAFAST_DETAIL_COPY_H

#include <stdint.h>

#include <rdmafast/compiler.h>

RF_BEGIN_DECLS

/*
 * Copy inline payload into the WQE. A constant length becomes a few moves;
 * otherwise 8-byte chunks and a tail, with an empty asm in the loop so the
 * compiler cannot turn it back into a call to memcpy (no calls on the data
 * path). The WQE never wraps, so the destination is contiguous.
 */
RF_INLINE void rf__copy_inline(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	if (__builtin_constant_p(len)) {
		__builtin_memcpy(dst, src, len);
		return;
	}
	while (len >= 8) {
		__builtin_memcpy(dst, src, 8);
		__asm__("" : "+r"(dst), "+r"(src));
		dst += 8;
		src += 8;
		len -= 8;
	}
	if (len & 4) {
		__builtin_memcpy(dst, src, 4);
		dst += 4;
		src += 4;
	}
	if (len & 2) {
		__builtin_memcpy(dst, src, 2);
		dst += 2;
		src += 2;
	}
	if (len & 1)
		*dst = *src;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_COPY_H */
