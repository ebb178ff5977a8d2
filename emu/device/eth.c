/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * eth.c - the NIC's steering of the frames raw packet QPs send.
 *
 * A frame first meets the egress rules (kernel/flow.c), which may drop
 * it.  The mlx5 driver turns local loopback on for user raw QPs, so a
 * frame sent comes back into the NIC's receive path on its port; the
 * sniffer rules see it twice, as the function's sent and received
 * traffic.  Then the receive rules are tried table by table, as mlx5
 * places them by priority: the first whose every spec matches takes the
 * frame into its QP's RQ, and one with DONT_TRAP passes it on to the next
 * table.  A frame no table trapped reaches the leftovers rules (there is
 * no kernel netdev here to take it before them); one none takes is gone.
 * Steering is within one host's device: the emulated wire carries
 * IB/RoCE packets, not Ethernet frames (emu/DESIGN-ethernet.md).
 */
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <rdma/mlx5-abi.h>

#include "device.h"

void dev_eth_parse(const uint8_t *f, uint32_t len, struct eth_hdrs *h)
{
	uint32_t off = 12;

	memset(h, 0, sizeof(*h));
	h->mac = f;
	h->ethertype = dev_be16(f + off);
	off += 2;
	if (h->ethertype == ETH_P_8021Q && len >= off + 4) {
		memcpy(&h->vlan_tci, f + off, 2);
		h->tagged = true;
		h->ethertype = dev_be16(f + off + 2);
		off += 4;
	}
	if (h->ethertype == ETH_P_IP && len >= off + 20 && (f[off] >> 4) == 4 &&
	    len >= off + (f[off] & 0xfu) * 4) {
		h->ip4 = f + off;
		h->proto = f[off + 9];
		off += (f[off] & 0xfu) * 4;
	} else if (h->ethertype == ETH_P_IPV6 && len >= off + 40 && (f[off] >> 4) == 6) {
		h->ip6 = f + off;
		h->proto = f[off + 6];
		off += 40;
	}
	if ((h->ip4 || h->ip6) && (h->proto == 6 || h->proto == 17) && len >= off + 4)
		h->l4 = f + off;
	/* the SPI opens an ESP header and follows an AH header's first word */
	if ((h->ip4 || h->ip6) && h->proto == IPPROTO_ESP && len >= off + 4)
		h->spi = f + off;
	else if ((h->ip4 || h->ip6) && h->proto == IPPROTO_AH && len >= off + 8)
		h->spi = f + off + 4;
}

/* Do the masked bytes of have equal the masked bytes of want? */
static bool masked_eq(const void *have, const void *want, const void *mask, size_t n)
{
	const uint8_t *a = have, *b = want, *m = mask;

	for (size_t i = 0; i < n; i++)
		if ((a[i] ^ b[i]) & m[i])
			return false;
	return true;
}

static bool spec_matches(const struct emu_flow_spec *s, const struct eth_hdrs *h)
{
	switch (s->type) {
	case IBV_FLOW_SPEC_ETH: {
		struct ib_uverbs_flow_eth_filter f;
		uint16_t et = htobe16(h->ethertype);

		/* a VLAN match is cvlan_tag too: untagged frames miss it */
		if (s->m.eth.vlan_tag && !h->tagged)
			return false;

		memcpy(f.dst_mac, h->mac, 6);
		memcpy(f.src_mac, h->mac + 6, 6);
		memcpy(&f.ether_type, &et, 2);
		f.vlan_tag = h->vlan_tci;
		return masked_eq(&f, &s->v.eth, &s->m.eth, sizeof(f));
	}
	case IBV_FLOW_SPEC_IPV4: {
		struct ib_uverbs_flow_ipv4_filter f = { 0 };

		if (!h->ip4)
			return false;
		memcpy(&f.src_ip, h->ip4 + 12, 4);
		memcpy(&f.dst_ip, h->ip4 + 16, 4);
		f.proto = h->proto;
		f.tos = h->ip4[1];
		return masked_eq(&f, &s->v.ipv4, &s->m.ipv4, sizeof(f));
	}
	case IBV_FLOW_SPEC_IPV6: {
		struct ib_uverbs_flow_ipv6_filter f = { 0 };

		if (!h->ip6)
			return false;
		memcpy(f.src_ip, h->ip6 + 8, 16);
		memcpy(f.dst_ip, h->ip6 + 24, 16);
		f.next_hdr = h->proto;
		f.traffic_class = (uint8_t)((h->ip6[0] & 0xf) << 4 | h->ip6[1] >> 4);
		f.flow_label = htobe32((uint32_t)(h->ip6[1] & 0xf) << 16 |
				       (uint32_t)h->ip6[2] << 8 | h->ip6[3]);
		return masked_eq(&f, &s->v.ipv6, &s->m.ipv6, sizeof(f));
	}
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP: {
		struct ib_uverbs_flow_tcp_udp_filter f;

		/* mlx5 matches the spec's protocol whatever the ports' mask */
		if (!h->l4 || h->proto != (s->type == IBV_FLOW_SPEC_TCP ? 6 : 17))
			return false;
		memcpy(&f.dst_port, h->l4 + 2, 2);
		memcpy(&f.src_port, h->l4, 2);
		return masked_eq(&f, &s->v.l4, &s->m.l4, sizeof(f));
	}
	default:
		return false;
	}
}

bool dev_eth_rule_matches(const struct emu_flow *r, const struct eth_hdrs *h)
{
	for (unsigned i = 0; i < r->nspecs; i++)
		if (!spec_matches(&r->spec[i], h))
			return false;
	return true;
}

/*
 * A protection error ends the RQ, a firmware object of its own: it alone
 * enters ERR and flushes its receives, now and as they are posted
 * (engine.c's slow_tasks()); the SQ sends on.  With the SQ in ERR too
 * (SQE) the pair is the QP's ERR.
 */
static void rq_failed(struct dev_qp *dq)
{
	if (dq->qp->attr.state == IBV_QPS_SQE) {
		dev_qp_fatal(dq, 0);
		return;
	}
	dq->qp->rq_err = true;
	dev_rq_flush(dq);
}

/*
 * The CQE's l4_l3_hdr_type, what a ConnectX's parser found in any frame
 * an Ethernet RQ takes (Linux include/linux/mlx5/device.h:
 * get_cqe_l3_hdr_type(), get_cqe_l4_hdr_type(), CQE_L4_HDR_TYPE_*):
 * IPv6 or IPv4 in bits 3:2; in bits 6:4 UDP, or TCP without ACK, with ACK
 * and no data, with ACK and data.
 */
enum {
	CQE_L3_IPV6		= 1,
	CQE_L3_IPV4		= 2,
	CQE_L4_TCP_NO_ACK	= 1,
	CQE_L4_UDP		= 2,
	CQE_L4_TCP_ACK_NO_DATA	= 3,
	CQE_L4_TCP_ACK_AND_DATA	= 4,
};

static uint8_t hdr_types(const struct dev_eth_rx *rx)
{
	const struct eth_hdrs *h = rx->h;
	uint32_t l3_len, ip_data, tcp_hdr;
	uint8_t l4 = 0;

	if (!h->ip4 && !h->ip6)
		return 0;
	if (h->l4 && h->proto == IPPROTO_UDP) {
		l4 = CQE_L4_UDP;
	} else if (h->l4 && h->proto == IPPROTO_TCP && (uint32_t)(h->l4 - rx->frame) + 20 <= rx->len) {
		/* the IP header's length, not the frame's: Ethernet pads short frames */
		l3_len = h->ip4 ? (h->ip4[0] & 0xfu) * 4 : 0;
		ip_data = h->ip4 ? dev_be16(h->ip4 + 2) : dev_be16(h->ip6 + 4);
		ip_data = ip_data > l3_len ? ip_data - l3_len : 0;
		tcp_hdr = (h->l4[12] >> 4) * 4u;
		l4 = !(h->l4[13] & 0x10) ? CQE_L4_TCP_NO_ACK :
		     ip_data > tcp_hdr ? CQE_L4_TCP_ACK_AND_DATA : CQE_L4_TCP_ACK_NO_DATA;
	}
	return (uint8_t)(l4 << 4 | (h->ip4 ? CQE_L3_IPV4 : CQE_L3_IPV6) << 2);
}

/*
 * The frame into receive WQE r of an Ethernet RQ (a raw QP's, or a WQ of
 * an RSS QP's table) and its CQE on cq: c, which the caller filled with
 * the RQ's numbers and the RSS hash, becomes a SEND of byte_cnt the
 * frame's length, with the steering entry's flow tag, the header types,
 * carrying the frames the RQ dropped for want of a WQE (*drops, at most 255, the top byte of
 * sop_drop_qpn; then 0 again).  Returns the CQE's syndrome: a buffer too
 * short, the WQE's local length error, which on an Ethernet RQ leaves the
 * RQ ready (kernel commit 187a9830c921: not a syndrome mlx5e recovers the
 * RQ from); a key that fails, the protection error, which ends the RQ
 * (the caller's part).  An error CQE has no field for the drops: they
 * wait for the next good one.
 */
uint8_t dev_eth_deliver(const struct dev_rwqe *r, const struct emu_pd *pd, const struct emu_qp *qp,
			struct emu_cq *cq, struct dev_cqe *c, uint32_t *drops,
			const struct dev_eth_rx *rx)
{
	struct dev_sgl sgl;
	uint8_t synd = 0;

	if (dev_sgl_from_recv(&sgl, r, pd, qp, rx->len))
		synd = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
	else if (sgl.total < rx->len)
		synd = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	else if (!dev_sgl_copy_in(&sgl, 0, rx->frame, rx->len))
		synd = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
	c->opcode = synd ? RF_CQE_RESP_ERR : RF_CQE_RESP_SEND;
	c->syndrome = synd;
	c->wqe_counter = (uint16_t)r->idx;
	c->byte_cnt = rx->len;
	c->eth = !synd;
	if (!synd) {
		c->flow_tag = rx->entry->has_tag ? rx->entry->tag : 0;
		c->rx_drops = (uint8_t)(*drops < 255 ? *drops : 255);
		*drops = 0;
		c->l4_l3_hdr_type = hdr_types(rx);
	}
	dev_cq_write(cq, c);
	return synd;
}

/*
 * The frame into the QP's next receive WQE (dev_eth_deliver()).  No
 * receive posted: dropped, as the NIC drops what an empty RQ cannot take.
 * A protection error ends the RQ (rq_failed()).
 */
static void receive(struct emu_qp *qp, const struct dev_eth_rx *rx)
{
	struct dev_qp *dq = dev_qp_of(qp);
	struct dev_rwqe r;

	if (!dq || !qp->recv_cq || (qp->attr.state != IBV_QPS_INIT &&
				     qp->attr.state != IBV_QPS_RTR &&
				     qp->attr.state != IBV_QPS_RTS &&
				     qp->attr.state != IBV_QPS_SQE) || qp->rq_err)
		return;		/* its RQ is not ready (RESET) or in error */
	if (!dev_rq_take(dq, NULL, &r)) {
		wire_stats.eth_no_recv++;
		dq->rx_drops++;
		return;
	}
	if (dev_eth_deliver(&r, qp->pd, qp, qp->recv_cq,
			    &(struct dev_cqe){ .qpn = dq->qpn, .uidx = qp->uidx },
			    &dq->rx_drops, rx) == RF_CQE_SYNDROME_LOCAL_PROT_ERR)
		rq_failed(dq);
}

/*
 * Does the rule's TIR take the frame?  A user raw QP's TIS and TIR are of
 * its context's transport domain, and the TIR drops the frames of its own
 * domain unless its QP was made with MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC or
 * _MC, for the frame's kind of destination (create_raw_packet_qp_tir():
 * self_lb_block); frames of other contexts loop back (mlx5_ib_enable_lb()).
 */
static bool tir_takes(const struct emu_qp *qp, const struct emu_qp *from, const uint8_t *frame)
{
	uint32_t allow = frame[0] & 1 ? MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC :
					MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC;

	return qp->obj.ctx != from->obj.ctx || (qp->mlx5_flags & allow);
}

/* Was r's QP fed already by an earlier rule of entry's table entry? */
static bool fed_before(const struct emu_flow *entry, const struct emu_flow *r)
{
	for (const struct emu_flow *q = entry; q != r; q = q->next)
		if (q->qp == r->qp && emu_flows_share_entry(entry, q))
			return true;
	return false;
}

static bool rule_of_port(const struct emu_flow *r, const struct emu_qp *from)
{
	/* an RSS QP's TIR is the device's, on no one port */
	return r->qp->obj.ctx->dev_index == from->obj.ctx->dev_index &&
	       (r->qp->rss_tbl || r->qp->attr.port_num == from->attr.port_num);
}

/*
 * The frame into the rule's QP, or through an RSS QP's table into a WQ;
 * an entry that decaps gives the tunnel's inner frame, hashed on its own
 * headers.
 */
static void take(struct emu_qp *qp, const struct emu_flow *entry, const struct eth_hdrs *h,
		 const uint8_t *frame, uint32_t len)
{
	struct dev_eth_rx rx = { entry, h, frame, len };
	struct eth_hdrs inner;
	uint32_t off;

	if (entry->decap && (off = dev_eth_decap_offset(h, frame, len))) {
		rx.frame += off;
		rx.len -= off;
		dev_eth_parse(rx.frame, rx.len, &inner);
		rx.h = &inner;
	}
	if (qp->rss_tbl)
		dev_rss_receive(qp, &rx);
	else
		receive(qp, &rx);
}

/*
 * The egress tables (kernel/flow.c), laid out as the receive ones: the
 * rules of ibv_create_flow() with IBV_FLOW_ATTR_FLAGS_EGRESS, of the
 * sender's device and port, and the flows of mlx5dv's NIC TX matchers,
 * of its device.  In a table the first rule that matches is the frame's
 * entry; DONT_TRAP sends the frame on to the next table.  The entry the
 * frame ends at (a drop, an encap, or one that lets it out as it is), or
 * NULL: no rule, out as it is.
 */
static const struct emu_flow *egress_entry(const struct emu_qp *from, const struct eth_hdrs *h)
{
	const struct emu_flow *entry = NULL;

	for (const struct emu_flow *r = emu_egress_flows_locked(); r; r = r->next) {
		if (entry && r->table != entry->table) {
			if (!entry->dont_trap)
				return entry;
			entry = NULL;
		}
		if (entry || r->obj.ctx->dev_index != from->obj.ctx->dev_index ||
		    (r->qp && r->port != from->attr.port_num) || !dev_eth_rule_matches(r, h))
			continue;
		entry = r;
		if (r->drop)
			return r;
	}
	return entry && !entry->dont_trap ? entry : NULL;
}

/*
 * Every rule of one table whose match the frame meets takes it, once a
 * QP: the sniffer's one entry, the leftovers table's two (a frame meets
 * one of them; an ALL_DEFAULT and an MC_DEFAULT rule of one QP share the
 * multicast one).  Has a rule taken it?
 */
static bool take_each(uint8_t table, const struct emu_qp *from, const struct eth_hdrs *h,
		      const uint8_t *frame, uint32_t len)
{
	bool taken = false;

	for (const struct emu_flow *r = emu_flows_locked(); r; r = r->next) {
		bool fed = false;

		if (r->table != table || !rule_of_port(r, from) || !dev_eth_rule_matches(r, h))
			continue;
		taken = true;
		for (const struct emu_flow *q = emu_flows_locked(); q != r; q = q->next)
			fed |= q->table == table && q->qp == r->qp && rule_of_port(q, from) &&
			       dev_eth_rule_matches(q, h);
		if (!fed && tir_takes(r->qp, from, frame))
			take(r->qp, r, h, frame, len);
	}
	return taken;
}

/*
 * The receive tables (kernel/flow.c), the bypass namespace's.  In a
 * table the first rule that matches is the frame's entry: it and the
 * rules that share it (one match on other QPs) each take the frame, once
 * a QP; the entry's DONT_TRAP sends it on to the next table, else
 * steering ends there.  A drop entry has no destination and no next
 * table (_create_flow_rule() of mlx5's fs.c): the frame ends there, taken
 * by none.  Did a table trap the frame (*matched: did a rule match it)?
 */
static bool bypass_traps(const struct emu_qp *from, const struct eth_hdrs *h,
			 const uint8_t *frame, uint32_t len, bool *matched)
{
	const struct emu_flow *entry = NULL;

	for (const struct emu_flow *r = emu_flows_locked();
	     r && r->table <= EMU_FLOW_MCAST_TABLE; r = r->next) {
		if (entry && r->table != entry->table) {
			if (!entry->dont_trap)
				return true;
			entry = NULL;
		}
		if (!rule_of_port(r, from))
			continue;
		if (entry) {
			if (emu_flows_share_entry(entry, r) && !fed_before(entry, r) &&
			    tir_takes(r->qp, from, frame))
				take(r->qp, entry, h, frame, len);
			continue;
		}
		if (!dev_eth_rule_matches(r, h))
			continue;
		entry = r;
		*matched = true;
		if (r->drop)
			return true;
		if (tir_takes(r->qp, from, frame))
			take(r->qp, entry, h, frame, len);
	}
	return entry && !entry->dont_trap;
}

/*
 * A frame from's SQ sent: the egress tables, the sniffer's copy of it
 * sent, then looped back: the sniffer's copy of it received, the receive
 * tables, and what no table trapped, the leftovers.  The sniffer tables
 * are roots of their own beside the NIC's (fs_core's SNIFFER_RX and _TX
 * namespaces): what the receive rules do to the frame does not change
 * what the sniffer sees.
 */
void dev_eth_steer(const struct emu_qp *from, uint8_t *frame, uint32_t len)
{
	const struct emu_flow *out;
	struct eth_hdrs h;
	bool matched = false;

	wire_stats.eth_frames++;
	dev_eth_parse(frame, len, &h);
	if ((out = egress_entry(from, &h))) {
		if (out->drop)
			return;
		if (out->reformat) {
			len = dev_eth_encap(out->reformat, frame, len);
			dev_eth_parse(frame, len, &h);
		}
	}
	take_each(EMU_FLOW_SNIFFER_TABLE, from, &h, frame, len);
	take_each(EMU_FLOW_SNIFFER_TABLE, from, &h, frame, len);
	if (!bypass_traps(from, &h, frame, len, &matched) &&
	    take_each(EMU_FLOW_LEFTOVERS_TABLE, from, &h, frame, len))
		matched = true;
	if (!matched)
		wire_stats.eth_unsteered++;
}
