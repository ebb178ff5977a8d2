/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rss.c - the hash request of an RSS raw packet QP (ibv_create_qp_ex()
 * with IBV_QP_INIT_ATTR_RX_HASH over an indirection table of WQs, wq.c):
 * libmlx5's struct mlx5_ib_create_qp_rss, checked as mlx5's
 * create_rss_raw_qp_tir() and process_udata_size() in the kernel's
 * drivers/infiniband/hw/mlx5/qp.c check it, so that a request a ConnectX
 * refuses gets the errno it would.
 *
 * A request the driver would take is still EOPNOTSUPP: this device hashes
 * no frame (rss_caps are 0), so it makes no RSS QP.
 */
#include <string.h>

#include <rdma/mlx5-abi.h>

#include "internal.h"

/* the TIR context's rx_hash_toeplitz_key: the one key length mlx5 takes */
#define RSS_TOEPLITZ_KEY_LEN	40

#define RSS_IPV4	(MLX5_RX_HASH_SRC_IPV4 | MLX5_RX_HASH_DST_IPV4)
#define RSS_IPV6	(MLX5_RX_HASH_SRC_IPV6 | MLX5_RX_HASH_DST_IPV6)
#define RSS_TCP		(MLX5_RX_HASH_SRC_PORT_TCP | MLX5_RX_HASH_DST_PORT_TCP)
#define RSS_UDP		(MLX5_RX_HASH_SRC_PORT_UDP | MLX5_RX_HASH_DST_PORT_UDP)

int emu_rss_qp_request_check(const void *drv_in, size_t drv_in_len,
			     const struct emu_rwq_ind_tbl *t)
{
	struct mlx5_ib_create_qp_rss req = { 0 };
	uint64_t fields;
	unsigned l4;

	/* the request up to its flags; what lies past the struct, zeros */
	if (drv_in_len < offsetof(struct mlx5_ib_create_qp_rss, flags) + sizeof(req.flags))
		return EINVAL;
	for (size_t i = sizeof(req); i < drv_in_len; i++)
		if (((const uint8_t *)drv_in)[i])
			return EOPNOTSUPP;
	memcpy(&req, drv_in, drv_in_len < sizeof(req) ? drv_in_len : sizeof(req));
	fields = req.rx_hash_fields_mask;
	if (req.comp_mask)
		return EOPNOTSUPP;
	/*
	 * Of the flags, an RSS QP takes the self-loopback ones of its TIR;
	 * tunnel offloads (and so hashing inner headers, which needs them)
	 * take caps this device reports none of.
	 */
	if ((req.flags & ~(uint32_t)(MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC |
				     MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC)) ||
	    (fields & MLX5_RX_HASH_INNER))
		return EOPNOTSUPP;
	if (req.rx_hash_function != MLX5_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (req.rx_key_len != RSS_TOEPLITZ_KEY_LEN)
		return EINVAL;
	/* no fields: a table of one WQ only, a steering entry that hashes nothing */
	if (!fields)
		return t->size == 1 ? EOPNOTSUPP : EINVAL;
	/* one L3 protocol, one L4 protocol (the IPsec SPI counts as one) */
	if ((fields & RSS_IPV4) && (fields & RSS_IPV6))
		return EINVAL;
	l4 = !!(fields & RSS_TCP) + !!(fields & RSS_UDP) + !!(fields & MLX5_RX_HASH_IPSEC_SPI);
	if (l4 > 1)
		return EINVAL;
	return EOPNOTSUPP;
}
