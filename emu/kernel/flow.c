/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * flow.c - verbs flow steering (ibv_create_flow(), ibv_destroy_flow()):
 * the rules the NIC's receive steering matches a raw packet QP's frames
 * against (device/eth.c).  The extended write() commands CREATE_FLOW and
 * DESTROY_FLOW with the checks of ib_uverbs_ex_create_flow() and
 * kern_spec_to_ib_spec() in the kernel's drivers/infiniband/core/
 * uverbs_cmd.c, then mlx5_ib_create_flow() and parse_flow_attr() of
 * drivers/infiniband/hw/mlx5/fs.c.
 *
 * Kept: NORMAL rules of Ethernet, IPv4, IPv6, TCP and UDP specs (outer
 * headers), with masks, a priority and DONT_TRAP, and the drop and tag
 * actions, on the receive side and on the egress side; the leftovers
 * rules (ALL_DEFAULT, MC_DEFAULT) and the sniffer rule.  Not offered
 * (EOPNOTSUPP): inner headers, tunnels, flow action objects and counters,
 * an egress sniffer, and the header fields a ConnectX-6 does not match
 * (IPv4 TTL and flags, the IPv6 hop limit).
 */
#include <string.h>

#include <linux/capability.h>

#include "internal.h"

#define FLOW_SPEC_MAX		8	/* IB_FLOW_SPEC_SUPPORT_LAYERS */
#define FLOW_LAST_PRIO		15	/* MLX5_IB_FLOW_LAST_PRIO: 16 bypass priorities */
#define FLOW_FLAGS_RESERVED	(1u << 3)	/* IB_FLOW_ATTR_FLAGS_RESERVED */
/* the kernel's struct ib_uverbs_flow_spec, a union whose largest member is IPv6's */
#define FLOW_SPEC_MAX_SIZE	sizeof(struct ib_uverbs_flow_spec_ipv6)

/* every rule of this host, by priority, the oldest first within one */
static struct emu_flow *flows;
/* ... of its NIC TX tables (egress rules, mlx5dv's egress flows), by table */
static struct emu_flow *egress_flows;

const struct emu_flow *emu_flows_locked(void)
{
	return flows;
}

const struct emu_flow *emu_egress_flows_locked(void)
{
	return egress_flows;
}

/*
 * The filter of one spec: what the kernel knows of it (ib_filter_sz), of
 * which the command carries kern_sz bytes of value then as many of mask,
 * a multiple of 4 and not none; bytes beyond what the kernel knows must be
 * zeros in the mask (spec_filter_size(),
 * ib_uverbs_kern_spec_to_ib_spec_filter()).
 */
static int take_filter(const uint8_t *spec, uint16_t size, void *val, void *mask,
		       size_t known)
{
	size_t kern_sz = (size - sizeof(struct ib_uverbs_flow_spec_hdr)) / 2;
	const uint8_t *v = spec + sizeof(struct ib_uverbs_flow_spec_hdr);

	if (size < sizeof(struct ib_uverbs_flow_spec_hdr) || !kern_sz || kern_sz % 4)
		return EINVAL;
	for (size_t i = known; i < kern_sz; i++)
		if (v[kern_sz + i])
			return EINVAL;
	memset(val, 0, known);
	memset(mask, 0, known);
	memcpy(val, v, kern_sz < known ? kern_sz : known);
	memcpy(mask, v + kern_sz, kern_sz < known ? kern_sz : known);
	return 0;
}

/*
 * One match spec of the command into s: the uverbs errors (a type it does
 * not know: EINVAL); a type the device does not match on is EOPNOTSUPP.
 * mlx5 looks at the fields later (mlx5_specs()).
 */
static int take_match(struct emu_flow_spec *s, const uint8_t *p, uint16_t size, uint32_t type)
{
	int ret;

	s->type = type;
	switch (type) {
	case IBV_FLOW_SPEC_ETH:
		return take_filter(p, size, &s->v.eth, &s->m.eth, sizeof(s->v.eth));
	case IBV_FLOW_SPEC_IPV4:
		return take_filter(p, size, &s->v.ipv4, &s->m.ipv4, sizeof(s->v.ipv4));
	case IBV_FLOW_SPEC_IPV6:
		if ((ret = take_filter(p, size, &s->v.ipv6, &s->m.ipv6,
				       offsetof(struct ib_uverbs_flow_ipv6_filter, reserved))))
			return ret;
		/* a flow label has 20 bits */
		return be32toh(s->v.ipv6.flow_label) >> 20 ||
		       be32toh(s->m.ipv6.flow_label) >> 20 ? EINVAL : 0;
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		return take_filter(p, size, &s->v.l4, &s->m.l4, sizeof(s->v.l4));
	case IBV_FLOW_SPEC_ETH | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_IPV4 | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_IPV6 | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_TCP | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_UDP | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_VXLAN_TUNNEL: case IBV_FLOW_SPEC_ESP: case IBV_FLOW_SPEC_GRE:
	case IBV_FLOW_SPEC_MPLS: case IBV_FLOW_SPEC_MPLS | IBV_FLOW_SPEC_INNER:
	case IBV_FLOW_SPEC_ACTION_HANDLE: case IBV_FLOW_SPEC_ACTION_COUNT:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

/*
 * One spec of the command: a reserved field is EINVAL; an action spec
 * must be of its own size (kern_spec_to_ib_spec_action(): EINVAL), a
 * match spec goes into r->spec[].
 */
static int take_spec(struct emu_flow *r, const uint8_t *p, uint16_t size)
{
	struct ib_uverbs_flow_spec_hdr h;
	struct ib_uverbs_flow_spec_action_tag tag;
	int ret;

	memcpy(&h, p, sizeof(h));
	if (h.reserved)
		return EINVAL;
	switch (h.type) {
	case IBV_FLOW_SPEC_ACTION_TAG:
		if (size != sizeof(tag))
			return EINVAL;
		memcpy(&tag, p, sizeof(tag));
		r->has_tag = true;
		r->tag = tag.tag_id;
		return 0;
	case IBV_FLOW_SPEC_ACTION_DROP:
		if (size != sizeof(struct ib_uverbs_flow_spec_action_drop))
			return EINVAL;
		r->drop = true;
		return 0;
	}
	if ((ret = take_match(&r->spec[r->nspecs], p, size, h.type)))
		return ret;
	r->nspecs++;
	return 0;
}

/*
 * is_valid_ethertype() of mlx5's fs.c: an Ethernet spec that matches an
 * EtherType must name the one of the IP spec beside it.
 */
static bool ethertype_agrees(const struct emu_flow *r)
{
	uint16_t want = 0, mask = 0, type = 0;

	for (unsigned i = 0; i < r->nspecs; i++) {
		const struct emu_flow_spec *s = &r->spec[i];

		if (s->type == IBV_FLOW_SPEC_ETH) {
			mask = be16toh(s->m.eth.ether_type);
			type = be16toh(s->v.eth.ether_type);
		} else if (s->type == IBV_FLOW_SPEC_IPV4) {
			want = 0x0800;
		} else if (s->type == IBV_FLOW_SPEC_IPV6) {
			want = 0x86dd;
		}
	}
	return !want || !mask || (mask == 0xffff && type == want);
}

/*
 * parse_flow_attr() of mlx5's fs.c, spec by spec: a field past the last
 * one it matches (IPv4 TTL and flags, the IPv6 hop limit) is EOPNOTSUPP;
 * the IP spec's protocol and the one a TCP or UDP spec implies fill one
 * ip_protocol field, which a later spec may name again only with the same
 * value under the same mask (set_proto(): EINVAL).
 */
static int mlx5_specs(const struct emu_flow *r)
{
	uint8_t mask = 0, val = 0;

	for (unsigned i = 0; i < r->nspecs; i++) {
		const struct emu_flow_spec *s = &r->spec[i];
		uint8_t m = 0, v = 0;

		if (s->type == IBV_FLOW_SPEC_IPV4) {
			if (s->m.ipv4.ttl || s->m.ipv4.flags)
				return EOPNOTSUPP;
			m = s->m.ipv4.proto;
			v = s->v.ipv4.proto;
		} else if (s->type == IBV_FLOW_SPEC_IPV6) {
			if (s->m.ipv6.hop_limit)
				return EOPNOTSUPP;
			m = s->m.ipv6.next_hdr;
			v = s->v.ipv6.next_hdr;
		} else if (s->type == IBV_FLOW_SPEC_TCP || s->type == IBV_FLOW_SPEC_UDP) {
			m = 0xff;
			v = s->type == IBV_FLOW_SPEC_TCP ? 6 : 17;
		}
		if (!m)
			continue;
		if (mask && (m != mask || v != val))
			return EINVAL;
		mask = m;
		val = v;
	}
	return 0;
}

/*
 * flow_is_multicast_only() of mlx5's fs.c, by the first spec alone: an
 * IPv4 one whose destination is a multicast address, or an Ethernet one
 * whose destination MAC and its mask both have the group bit.
 */
static bool multicast_only(const struct emu_flow *r)
{
	const struct emu_flow_spec *s = &r->spec[0];

	if (!r->nspecs)
		return false;
	if (s->type == IBV_FLOW_SPEC_IPV4)
		return (((const uint8_t *)&s->v.ipv4.dst_ip)[0] & 0xf0) == 0xe0;
	return s->type == IBV_FLOW_SPEC_ETH && (s->v.eth.dst_mac[0] & 1) &&
	       (s->m.eth.dst_mac[0] & 1);
}

/*
 * The table mlx5 puts the rule in (get_flow_table()): a NORMAL rule's is
 * of the bypass namespace, or of the egress namespace laid out alike
 * (ib_prio_to_core_prio()): two a priority, the DONT_TRAP rules' first;
 * a multicast-only rule that traps goes to the table after them all.
 * The default rules have the leftovers table, the sniffer rules theirs.
 */
static uint8_t flow_table(const struct emu_flow *r)
{
	uint8_t t = (uint8_t)(2 * r->priority + !r->dont_trap);

	if (r->type == IBV_FLOW_ATTR_ALL_DEFAULT || r->type == IBV_FLOW_ATTR_MC_DEFAULT)
		return EMU_FLOW_LEFTOVERS_TABLE;
	if (r->type == IBV_FLOW_ATTR_SNIFFER)
		return EMU_FLOW_SNIFFER_TABLE;
	if (multicast_only(r) && !r->dont_trap)
		t = EMU_FLOW_MCAST_TABLE;
	return r->egress ? (uint8_t)(EMU_FLOW_EGRESS_TABLE + t) : t;
}

/*
 * create_leftovers_rule() and create_sniffer_rule() of mlx5's fs.c
 * build the match themselves: the rule's own specs and actions, which
 * uverbs checked, are not used; a
 * default rule is the leftovers table's entry for multicast destinations
 * (the MAC's group bit), and for ALL_DEFAULT the one for unicast too, so
 * every frame; a sniffer rule matches every frame.  Each rule of a kind
 * joins its entry: one frame, one copy to each of their QPs.
 */
static void take_builtin_match(struct emu_flow *r)
{
	r->drop = false;
	r->has_tag = false;
	r->dont_trap = false;
	r->nspecs = 0;
	memset(r->spec, 0, sizeof(r->spec));
	if (r->type == IBV_FLOW_ATTR_MC_DEFAULT) {
		r->nspecs = 1;
		r->spec[0].type = IBV_FLOW_SPEC_ETH;
		r->spec[0].v.eth.dst_mac[0] = 1;
		r->spec[0].m.eth.dst_mac[0] = 1;
	}
}

/*
 * Rules of one table and one match are one entry of the firmware's table
 * (fs_core's add_rule_fg() adds the later rule's TIR to the earlier's).
 * Compared as the specs were given: the same match written with other
 * specs makes two entries here.
 */
bool emu_flows_share_entry(const struct emu_flow *a, const struct emu_flow *b)
{
	return a->table == b->table && a->nspecs == b->nspecs &&
	       !memcmp(a->spec, b->spec, a->nspecs * sizeof(a->spec[0]));
}

/*
 * fs_core's check_conflicting_ftes(): a rule joins the entry its match
 * already has in its table only with the entry's drop action, and with
 * the entry's tag if it brings one (else EEXIST).
 */
static bool conflicts_with_entry(struct emu_flow *r)
{
	r->table = flow_table(r);
	for (const struct emu_flow *e = r->egress ? egress_flows : flows; e; e = e->next)
		if (emu_flows_share_entry(e, r))
			return e->drop != r->drop || (r->has_tag && r->tag != e->tag);
	return false;
}

void emu_flow_insert_locked(struct emu_flow *r)
{
	struct emu_flow **pp = r->egress ? &egress_flows : &flows;

	r->table = flow_table(r);

	while (*pp && (*pp)->table <= r->table)
		pp = &(*pp)->next;
	r->next = *pp;
	*pp = r;
}

int emu_cmd_create_flow(struct emu_cmd *c)
{
	const struct ib_uverbs_create_flow *cmd = c->in;
	struct ib_uverbs_create_flow_resp *resp = c->out;
	const struct ib_uverbs_flow_attr *fa = &cmd->flow_attr;
	const uint8_t *p = (const uint8_t *)(cmd + 1);
	size_t left = fa->size;
	unsigned taken = 0;
	struct emu_flow *r;
	struct emu_qp *qp;
	int ret;

	/* ib_uverbs_ex_create_flow() */
	if (cmd->comp_mask)
		return EINVAL;
	if (!emu_capable(CAP_NET_RAW))
		return EPERM;
	if (fa->flags >= FLOW_FLAGS_RESERVED)
		return EINVAL;
	if ((fa->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP) &&
	    (fa->type == IBV_FLOW_ATTR_ALL_DEFAULT || fa->type == IBV_FLOW_ATTR_MC_DEFAULT))
		return EINVAL;
	if (fa->num_of_specs > FLOW_SPEC_MAX)
		return EINVAL;
	if (fa->size > c->in_len - sizeof(*cmd) ||
	    fa->size > fa->num_of_specs * FLOW_SPEC_MAX_SIZE)
		return EINVAL;
	if (fa->reserved[0] || fa->reserved[1])
		return EINVAL;
	/* uverbs_request_finish(): what follows the specs must be zeros */
	for (size_t i = sizeof(*cmd) + fa->size; i < c->in_len; i++)
		if (((const uint8_t *)c->in)[i])
			return EOPNOTSUPP;
	if (!fa->port || fa->port > emu_cfg.num_ports)
		return EINVAL;	/* rdma_is_port_valid() */
	qp = emu_obj_get_locked(c->ctx, cmd->qp_handle, EMU_OBJ_QP);
	if (!qp || (qp->type != IBV_QPT_UD && qp->type != IBV_QPT_RAW_PACKET))
		return EINVAL;

	r = emu_obj_alloc(c->ctx, EMU_OBJ_FLOW, sizeof(*r), 0);
	if (!r)
		return ENOMEM;
	for (unsigned i = 0; i < fa->num_of_specs; i++) {
		struct ib_uverbs_flow_spec_hdr h;

		if (left < sizeof(h))
			break;
		memcpy(&h, p, sizeof(h));
		if (left < h.size || !h.size)
			break;
		if ((ret = take_spec(r, p, h.size)))
			goto fail;
		taken++;
		left -= h.size;
		p += h.size;
	}
	ret = EINVAL;
	if (left || taken != fa->num_of_specs)
		goto fail;	/* bytes left over, or specs missing */

	/* mlx5_ib_create_flow() */
	if (fa->priority > FLOW_LAST_PRIO) {
		ret = ENOMEM;
		goto fail;
	}
	if (fa->flags & ~(IBV_FLOW_ATTR_FLAGS_DONT_TRAP | IBV_FLOW_ATTR_FLAGS_EGRESS))
		goto fail;
	if ((fa->flags & IBV_FLOW_ATTR_FLAGS_EGRESS) &&
	    (fa->type == IBV_FLOW_ATTR_ALL_DEFAULT || fa->type == IBV_FLOW_ATTR_MC_DEFAULT))
		goto fail;
	r->type = fa->type;
	r->egress = fa->flags & IBV_FLOW_ATTR_FLAGS_EGRESS;
	r->port = fa->port;
	r->priority = fa->priority;
	r->dont_trap = fa->flags & IBV_FLOW_ATTR_FLAGS_DONT_TRAP;
	ret = EOPNOTSUPP;
	if (qp->type != IBV_QPT_RAW_PACKET)
		goto fail;	/* IPoIB underlay QPs only */
	/*
	 * get_flow_table(): a type it has no namespace for; the sniffer's
	 * egress form would be a sniffer table forwarding to the port, which
	 * the model leaves out.
	 */
	if (fa->type > IBV_FLOW_ATTR_SNIFFER || (fa->type == IBV_FLOW_ATTR_SNIFFER && r->egress))
		goto fail;
	if (fa->type == IBV_FLOW_ATTR_NORMAL) {
		ret = EINVAL;
		if (!ethertype_agrees(r))
			goto fail;
		if ((ret = mlx5_specs(r)))
			goto fail;
		ret = EINVAL;
		if (r->has_tag && r->tag >> 24)
			goto fail;	/* parse_flow_attr(): a flow tag has 24 bits */
	} else {
		take_builtin_match(r);
	}
	/*
	 * A receive rule's destination is the QP's TIR; an egress rule's is
	 * the port (mlx5_ib_create_flow()), so it needs no receive queue.
	 */
	ret = EINVAL;
	if (!r->egress && !qp->rq_wqe_cnt && !qp->rss_tbl)
		goto fail;	/* no TIR to steer to */
	ret = EEXIST;
	if (conflicts_with_entry(r))
		goto fail;
	r->qp = qp;
	qp->flows++;	/* the QP stays while a rule points at it */
	emu_flow_insert_locked(r);
	resp->flow_handle = r->obj.handle;
	return 0;
fail:
	emu_obj_free_locked(&r->obj);
	return ret;
}

void emu_flow_destroy_locked(struct emu_flow *r)
{
	for (struct emu_flow **pp = r->egress ? &egress_flows : &flows; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	if (r->qp)
		r->qp->flows--;
	if (r->matcher)
		emu_flow_matcher_put_locked(r->matcher);
	if (r->reformat)
		emu_flow_action_put_locked(r->reformat);
	emu_obj_free_locked(&r->obj);
}

/*
 * The parent's rules stay objects of its contexts, which the child sets
 * aside; the child's device steers by none of them.
 */
void emu_flow_disown_locked(void)
{
	flows = NULL;
	egress_flows = NULL;
}

int emu_cmd_destroy_flow(struct emu_cmd *c)
{
	const struct ib_uverbs_destroy_flow *cmd = c->in;
	struct emu_flow *r;

	if (cmd->comp_mask)
		return EINVAL;
	r = emu_obj_get_locked(c->ctx, cmd->flow_handle, EMU_OBJ_FLOW);
	if (!r)
		return EINVAL;
	emu_flow_destroy_locked(r);
	return 0;
}
