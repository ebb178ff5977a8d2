/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ah.c - address handles and multicast attach/detach.
 *
 * libmlx5 builds the address vector itself; it asks the kernel only on
 * RoCE, for the destination MAC (cmds_supp_uhw CREATE_AH), which the
 * kernel would take from the neighbour table.  Emulated hosts' MACs follow
 * from their GIDs (subnet/subnet.c), so we compute it.
 */
#include <string.h>

#include <rdma/mlx5-abi.h>

#include "caps.h"
#include "internal.h"

static void ah_attr_from_uverbs(struct ibv_ah_attr *a, const struct ib_uverbs_ah_attr *u)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->grh.dgid.raw, u->grh.dgid, 16);
	a->grh.flow_label = u->grh.flow_label;
	a->grh.sgid_index = u->grh.sgid_index;
	a->grh.hop_limit = u->grh.hop_limit;
	a->grh.traffic_class = u->grh.traffic_class;
	a->dlid = u->dlid;
	a->sl = u->sl;
	a->src_path_bits = u->src_path_bits;
	a->static_rate = u->static_rate;
	a->is_global = u->is_global;
	a->port_num = u->port_num;
}

/*
 * MAC of the emulated port that owns dgid.  Multicast GIDs map as the
 * kernel's ib_resolve_eth_dmac() maps them: IPv6 to 33:33 and the last four
 * bytes (ipv6_eth_mc_map()), IPv4-mapped to 01:00:5e and the low 23 bits of
 * the group (ip_eth_mc_map()).
 */
static void dmac_of_gid(uint8_t mac[6], const uint8_t *g)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	bool v4 = !memcmp(g, v4mapped, sizeof(v4mapped));

	memset(mac, 0, 6);
	if (g[0] == 0xff) {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(mac + 2, g + 12, 4);
	} else if (v4 && (g[12] & 0xf0) == 0xe0) {
		mac[0] = 0x01;
		mac[2] = 0x5e;
		mac[3] = g[13] & 0x7f;
		mac[4] = g[14];
		mac[5] = g[15];
	} else if (v4) {
		/* ::ffff:10.<d*ports+p>.<h>.<h>, see subnet/subnet.c */
		unsigned dp = g[13] ? g[13] - 1u : 0;

		mac[0] = 0x02;
		mac[1] = 0xc9;
		mac[2] = g[14];
		mac[3] = g[15];
		mac[4] = (uint8_t)(dp / EMU_MAX_PORTS);
		mac[5] = (uint8_t)(dp % EMU_MAX_PORTS + 1);
	} else {
		/* modified EUI-64 interface id */
		mac[0] = g[8] ^ 0x02;
		mac[1] = g[9];
		mac[2] = g[10];
		mac[3] = g[13];
		mac[4] = g[14];
		mac[5] = g[15];
	}
}

int emu_cmd_create_ah(struct emu_cmd *c)
{
	const struct ib_uverbs_create_ah *cmd = c->in;
	struct ib_uverbs_create_ah_resp *resp = c->out;
	struct mlx5_ib_create_ah_resp drv = {};
	const struct emu_port_id *port;
	struct emu_pd *pd;
	struct emu_ah *ah;

	pd = emu_obj_get_locked(c->ctx, cmd->pd_handle, EMU_OBJ_PD);
	if (!pd)
		return EINVAL;
	if (!emu_port_valid(c->ctx, cmd->attr.port_num))
		return EINVAL;
	port = &emu_cfg.dev[c->ctx->dev_index].port[cmd->attr.port_num - 1];
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET && !cmd->attr.is_global)
		return EINVAL;	/* RoCE addresses are GIDs */
	/* rdma_fill_sgid_attr() -> rdma_get_gid_attr(): past the table, empty */
	if (cmd->attr.is_global && cmd->attr.grh.sgid_index >= emu_cap_gid_tbl_len())
		return EINVAL;
	if (cmd->attr.is_global && cmd->attr.grh.sgid_index >= port->num_gids)
		return ENODATA;

	ah = emu_obj_alloc(c->ctx, EMU_OBJ_AH, sizeof(*ah), cmd->user_handle);
	if (!ah)
		return ENOMEM;
	ah->pd = pd;
	ah_attr_from_uverbs(&ah->attr, &cmd->attr);
	pd->obj.usecnt++;

	resp->ah_handle = ah->obj.handle;
	if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET)
		dmac_of_gid(drv.dmac, cmd->attr.grh.dgid);
	drv.response_length = (uint32_t)(c->drv_out_len < sizeof(drv) ?
					 c->drv_out_len : sizeof(drv));
	memcpy(c->drv_out, &drv, drv.response_length);
	return 0;
}

void emu_ah_destroy_locked(struct emu_ah *ah)
{
	ah->pd->obj.usecnt--;
	emu_obj_free_locked(&ah->obj);
}

int emu_cmd_destroy_ah(struct emu_cmd *c)
{
	const struct ib_uverbs_destroy_ah *cmd = c->in;
	struct emu_ah *ah = emu_obj_get_locked(c->ctx, cmd->ah_handle, EMU_OBJ_AH);

	if (!ah)
		return EINVAL;
	emu_ah_destroy_locked(ah);
	return 0;
}
