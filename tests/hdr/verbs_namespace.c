/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Built as strict C11 and C++11 (no _DEFAULT_SOURCE) by make check-headers:
 * rdmafast/verbs.h lends mlx5dv.h the byte-order helpers glibc hides there,
 * and must take them back, and mlx5dv.h's inline setters that use them must
 * still link (an undefined htobe32() would be a link error, not a warning).
 */
#include <endian.h>
#ifdef htobe32
#define GLIBC_HAS_THEM 1	/* C++ (g++ defines _GNU_SOURCE): glibc's own */
#endif

#include <rdmafast/verbs.h>

#if !defined(GLIBC_HAS_THEM) && \
    (defined(htobe16) || defined(htobe32) || defined(htobe64) || \
     defined(be16toh) || defined(be32toh) || defined(be64toh))
#error "rdmafast/verbs.h leaves glibc's byte-order names defined in the program's namespace"
#endif

int main(void)
{
	struct mlx5_wqe_data_seg seg;

	mlx5dv_set_data_seg(&seg, 0x01020304u, 0x05060708u, 0x1122334455667788ull);
	return seg.byte_count == 0x04030201u ? 0 : 1;
}
