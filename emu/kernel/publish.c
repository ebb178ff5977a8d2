/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * publish.c - this host's ports in the subnet's table (subnet/ports.c):
 * the values QUERY_PORT answers (emu_port_attr()), the node's GUIDs and
 * description as sysfs shows them, and the home of the port counters, so
 * that every host's SMA and PMA answer from one record, this host's own
 * agents included.
 */
#include <stdio.h>
#include <unistd.h>

#include "kernel.h"
#include "caps.h"
#include "subnet/subnet.h"

int emu_mad_publish(void)
{
	struct emu_host_rec *r = emu_subnet_host_rec(emu_cfg.host_id);

	if (!r)
		return ENOMEM;
	atomic_store(&r->pid, 0);
	r->num_devs = emu_cfg.num_devs;
	r->num_ports = emu_cfg.num_ports;
	r->part_id = emu_cfg.vendor_part_id;
	r->link_layer = emu_cfg.link_layer;
	r->sys_image_guid = emu_cfg.sys_image_guid;
	for (unsigned d = 0; d < emu_cfg.num_devs; d++) {
		r->node_guid[d] = emu_cfg.dev[d].node_guid;
		/* sysfs node_desc (interpose/sysfs.c) */
		snprintf(r->node_desc[d], sizeof(r->node_desc[d]), "rfemu host %u mlx5_%u",
			 emu_cfg.host_id, d);
		for (unsigned p = 1; p <= emu_cfg.num_ports; p++) {
			struct emu_host_port *hp = &r->port[d][p - 1];

			memset(&hp->attr, 0, sizeof(hp->attr));
			emu_port_attr(d, p, &hp->attr);
			memcpy(hp->gid0, emu_cfg.dev[d].port[p - 1].gid[0].raw, 16);
			hp->gid_tbl_len = emu_cap_gid_tbl_len();
			hp->pkey_tbl_len = (uint16_t)emu_cap_pkey_tbl_len();
			hp->cap_flags2 = emu_cfg.link_layer == IBV_LINK_LAYER_INFINIBAND ?
					 EMU_CAP(ib_port_cap_flags2) : 0;
		}
	}
	emu_port_ctr_move(r->ctr);
	atomic_store_explicit(&r->pid, (int32_t)getpid(), memory_order_release);
	return 0;
}
