/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rss.c - receive-side scaling: a frame a flow rule steers to an RSS QP
 * (kernel/rss.c) is hashed by its TIR and received by the WQ its
 * indirection table names for the hash.
 *
 * The hash is Toeplitz with the TIR's 40-byte key over the fields the QP
 * selected, in the order Microsoft's RSS specification gives them: source
 * then destination address, source then destination port; the IPsec SPI
 * (MLX5_HASH_FIELD_SEL_IPSEC_SPI, of an ESP or AH header) where the ports
 * would be, the L4 field it is the TIR's choice of instead.  A field of a
 * protocol the frame does not carry (IPv6 fields of an IPv4 frame, TCP
 * ports of a UDP datagram) is left out, so a frame with none of them
 * hashes to 0.  The hash's low bits index the table.
 *
 * The receive is an RQ's: the WQ's next WQE, a CQE on its CQ with its
 * user index (libmlx5 finds the WQ by it), the hash and what it covered
 * (rss_hash_result, rss_hash_type: read by mlx5e, DPDK, not by libmlx5).
 */
#include <rdma/mlx5-abi.h>

#include "device.h"

#define RSS_HASH_IN_MAX		36	/* two IPv6 addresses, two ports */

uint32_t dev_toeplitz(const uint8_t *key, const uint8_t *in, size_t n)
{
	uint32_t hash = 0, window = dev_be32(key);
	unsigned next = 32;	/* the key bit that shifts into the window next */

	for (size_t i = 0; i < n && next + 8 <= EMU_RSS_KEY_LEN * 8u; i++) {
		for (int b = 7; b >= 0; b--, next++) {
			if (in[i] >> b & 1)
				hash ^= window;
			window = window << 1 | (key[next / 8] >> (7 - next % 8) & 1);
		}
	}
	return hash;
}

static size_t put(uint8_t *in, size_t n, const uint8_t *field, size_t len)
{
	memcpy(in + n, field, len);
	return n + len;
}

/*
 * rss_hash_type of the CQE (Linux include/linux/mlx5/device.h,
 * CQE_RSS_HTYPE_IP and _L4): which L3 and L4 fields went into the hash.
 */
#define RSS_HTYPE_IPV4		(1u << 2)
#define RSS_HTYPE_IPV6		(2u << 2)
#define RSS_HTYPE_TCP		(1u << 6)
#define RSS_HTYPE_UDP		(2u << 6)
#define RSS_HTYPE_IPSEC_SPI	(3u << 6)

/* The bytes the TIR hashes, into in; their count, and in *type what they were. */
static size_t hash_input(const struct emu_rss_tir *tir, const struct eth_hdrs *h, uint8_t *in,
			 uint8_t *type)
{
	uint64_t f = tir->fields;
	size_t n = 0, l3;

	if (h->ip4) {
		if (f & MLX5_RX_HASH_SRC_IPV4)
			n = put(in, n, h->ip4 + 12, 4);
		if (f & MLX5_RX_HASH_DST_IPV4)
			n = put(in, n, h->ip4 + 16, 4);
	} else if (h->ip6) {
		if (f & MLX5_RX_HASH_SRC_IPV6)
			n = put(in, n, h->ip6 + 8, 16);
		if (f & MLX5_RX_HASH_DST_IPV6)
			n = put(in, n, h->ip6 + 24, 16);
	}
	l3 = n;
	if (h->l4 && h->proto == 6) {
		if (f & MLX5_RX_HASH_SRC_PORT_TCP)
			n = put(in, n, h->l4, 2);
		if (f & MLX5_RX_HASH_DST_PORT_TCP)
			n = put(in, n, h->l4 + 2, 2);
	} else if (h->l4 && h->proto == 17) {
		if (f & MLX5_RX_HASH_SRC_PORT_UDP)
			n = put(in, n, h->l4, 2);
		if (f & MLX5_RX_HASH_DST_PORT_UDP)
			n = put(in, n, h->l4 + 2, 2);
	} else if (h->spi && (f & MLX5_RX_HASH_IPSEC_SPI)) {
		n = put(in, n, h->spi, 4);
	}
	*type = (uint8_t)((!l3 ? 0 : h->ip4 ? RSS_HTYPE_IPV4 : RSS_HTYPE_IPV6) |
			  (n == l3 ? 0 : h->proto == 6 ? RSS_HTYPE_TCP :
			   h->proto == 17 ? RSS_HTYPE_UDP : RSS_HTYPE_IPSEC_SPI));
	return n;
}

/*
 * The frame into the WQ's next receive WQE, and its CQE with the hash.
 * As on a QP's RQ (device/eth.c): none posted, dropped and counted; a
 * buffer too short, an error CQE and the WQ goes on; a bad key, an error
 * CQE and the WQ to ERR.  A WQ not ready takes nothing.
 */
static void wq_receive(const struct emu_qp *qp, const struct dev_eth_rx *rx, struct emu_wq *wq,
		       uint32_t hash, uint8_t htype)
{
	struct dev_rwqe r;

	if (wq->state != IBV_WQS_RDY)
		return;
	if (!dev_wq_take(wq, &r)) {
		wire_stats.eth_no_recv++;
		wq->rx_drops++;
		return;
	}
	if (dev_eth_deliver(&r, wq->pd, qp, wq->cq,
			    &(struct dev_cqe){ .qpn = wq->wqn, .uidx = wq->uidx,
					       .rss_hash = hash, .rss_hash_type = htype },
			    &wq->rx_drops, rx) == RF_CQE_SYNDROME_LOCAL_PROT_ERR)
		wq->state = IBV_WQS_ERR;
}

void dev_rss_receive(const struct emu_qp *qp, const struct dev_eth_rx *rx)
{
	const struct emu_rwq_ind_tbl *t = qp->rss_tbl;
	uint8_t in[RSS_HASH_IN_MAX], type;
	uint32_t hash = dev_toeplitz(qp->rss.key, in, hash_input(&qp->rss, rx->h, in, &type));

	wq_receive(qp, rx, t->wq[hash & (t->size - 1)], hash, type);
}
