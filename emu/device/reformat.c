/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * reformat.c - the packet reformats of the NIC's flow tables (the PRM's
 * packet reformat context): the general encap of the NIC TX table,
 * L2_TO_L2_TUNNEL, on the frames a function's raw QPs send, and the decap
 * of the NIC RX table, L2_TUNNEL_TO_L2, on the frames its rules take
 * (eth.c).
 *
 * The egress tables (eth.c) are tried on every frame a raw QP of the
 * function sends, before it loops back to the receive steering; when the
 * frame's entry is a flow with an encap (kernel/flow_matcher.c), the
 * action's headers go in front of the frame.  Those headers are the tunnel's as the user wrote them, but
 * for what depends on the frame's length, which the device fills in as a
 * ConnectX does: the outer IPv4 total length and header checksum, the
 * IPv6 payload length, the UDP length.  The rest goes out as given: the
 * UDP checksum (VXLAN's is 0, RFC 7348), and the IPv4 id and UDP source
 * port, which a ConnectX may set (pyverbs' test_tx_packet_reformat does
 * not compare them).
 *
 * The decap takes off what a VXLAN frame has before its inner frame: the
 * outer MAC, IP and UDP headers (to port 4789) and the VXLAN header.  A
 * frame that is no VXLAN one is taken whole, as the firmware, which finds
 * no tunnel to take off, leaves it.
 */
#include <string.h>

#include "device.h"

#define UDP_HLEN	8
#define VXLAN_HLEN	8
#define VXLAN_PORT	4789	/* IANA's; the only UDP tunnel port the model parses */
#define IP6_HLEN	40

static void put_be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* RFC 1071's checksum of an IPv4 header */
static uint16_t ip4_csum(const uint8_t *p, uint32_t n)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The lengths, and the IPv4 checksum, of the outer headers, hdr_len bytes,
 * of the len-byte frame f.
 */
static void fill_outer(uint8_t *f, uint32_t len, uint32_t hdr_len)
{
	struct eth_hdrs h;
	uint8_t *ip;

	dev_eth_parse(f, hdr_len, &h);
	if (h.ip4) {
		ip = f + (h.ip4 - f);
		put_be16(ip + 2, len - (uint32_t)(h.ip4 - f));
		put_be16(ip + 10, 0);
		put_be16(ip + 10, ip4_csum(ip, (ip[0] & 0xfu) * 4));
	} else if (h.ip6) {
		put_be16(f + (h.ip6 - f) + 4, len - (uint32_t)(h.ip6 - f) - IP6_HLEN);
	}
	if (h.l4 && h.proto == 17 && (uint32_t)(h.l4 - f) + UDP_HLEN <= hdr_len)
		put_be16(f + (h.l4 - f) + 4, len - (uint32_t)(h.l4 - f));
}

uint32_t dev_eth_encap(const struct emu_flow_action *a, uint8_t *frame, uint32_t len)
{
	memmove(frame + a->len, frame, len);
	memcpy(frame, a->data, a->len);
	fill_outer(frame, len + a->len, a->len);
	return len + a->len;
}

uint32_t dev_eth_decap_offset(const struct eth_hdrs *h, const uint8_t *frame, uint32_t len)
{
	uint32_t inner;

	if (!h->l4 || h->proto != 17 || dev_be16(h->l4 + 2) != VXLAN_PORT)
		return 0;
	inner = (uint32_t)(h->l4 - frame) + UDP_HLEN + VXLAN_HLEN;
	return inner + DEV_ETH_HLEN <= len ? inner : 0;
}
