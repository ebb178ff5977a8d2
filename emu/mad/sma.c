/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sma.c - the subnet management agents: the one on each port of this host
 * (an mlx5 HCA answers SMPs in its firmware, mlx5_ib's process_mad()), and
 * the fabric's switch, to which every host port is cabled and which runs
 * the subnet manager (it is the master SM at EMU_SWITCH_LID, the sm_lid
 * every port reports).
 *
 * Every value is the one QUERY_PORT and sysfs report (emu_port_attr(),
 * base/profile.c), as the host published them (publish.c), laid out as
 * IBA 14.2.5 defines the attributes.  The
 * agents are read-only: the SM owns the subnet's configuration, so a Set
 * is refused as an unsupported method/attribute combination.
 */
#include <stdio.h>
#include <time.h>

#include "kernel/kernel.h"
#include "kernel/caps.h"
#include "mad.h"
#include "subnet/subnet.h"

/* SMP attributes (IBA 14.2.5) */
enum {
	ATTR_NODE_DESC		= 0x0010,
	ATTR_NODE_INFO		= 0x0011,
	ATTR_SWITCH_INFO	= 0x0012,
	ATTR_GUID_INFO		= 0x0014,
	ATTR_PORT_INFO		= 0x0015,
	ATTR_PKEY_TABLE		= 0x0016,
	ATTR_SM_INFO		= 0x0020,
	ATTR_PORT_INFO_EXT	= 0x0033,
	ATTR_MLNX_EXT_PORT_INFO	= 0xff90,	/* Mellanox's vendor attribute */
};

#define MELLANOX_OUI		0x0002c9
#define SWITCH_GUID		0x0002c90300fffff0ull
#define SWITCH_PORTS		36
#define SWITCH_DEVICE_ID	0xd2f0		/* 54000: Quantum (HDR) */
#define PORT_CAP_IS_SM		(1u << 1)	/* PortInfo:CapabilityMask.IsSM */

void emu_mad_reply(const uint8_t *req, uint8_t *resp, uint16_t status)
{
	memcpy(resp, req, EMU_MAD_SIZE);
	resp[3] = EMU_METHOD_GET_RESP;
	if (req[1] == EMU_MCLASS_SUBN_DR)
		status |= EMU_SMP_DIRECTION;
	emu_mad_put16(resp + 4, status);
}

bool emu_mad_unmatched(const uint8_t *req, uint8_t *resp)
{
	if (req[3] != EMU_METHOD_GET && req[3] != EMU_METHOD_SET)
		return false;
	emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
	return true;
}

/*
 * The checks every SMA makes first.  Returns true when resp is the
 * answer already (an error status, or none: *answer false).
 */
static bool smp_refused(const uint8_t *req, uint8_t *resp, bool *answer)
{
	*answer = true;
	if (req[3] & EMU_METHOD_RESP || req[3] == EMU_METHOD_TRAP_REPRESS) {
		*answer = false;	/* nothing answers a response */
		return true;
	}
	if (req[2] != 1) {
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VERSION);
		return true;
	}
	if (req[3] == EMU_METHOD_SET) {
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
		return true;
	}
	if (req[3] != EMU_METHOD_GET) {
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_METHOD);
		return true;
	}
	emu_mad_reply(req, resp, 0);
	memset(resp + EMU_SMP_DATA, 0, 64);
	return false;
}

static void node_info(uint8_t *n, uint8_t type, uint8_t ports, uint64_t sys_guid,
		      uint64_t node_guid, uint64_t port_guid, uint16_t pkeys,
		      uint16_t dev_id, uint8_t local_port)
{
	n[0] = 1;			/* BaseVersion */
	n[1] = 1;			/* ClassVersion */
	n[2] = type;			/* 1 CA, 2 switch */
	n[3] = ports;
	emu_mad_put64(n + 4, sys_guid);
	emu_mad_put64(n + 12, node_guid);
	emu_mad_put64(n + 20, port_guid);
	emu_mad_put16(n + 28, pkeys);	/* PartitionCap */
	emu_mad_put16(n + 30, dev_id);
	emu_mad_put32(n + 32, 0);	/* Revision: sysfs hw_rev 0x0 */
	n[36] = local_port;
	n[37] = (uint8_t)(MELLANOX_OUI >> 16);
	emu_mad_put16(n + 38, (uint16_t)MELLANOX_OUI);
}

/*
 * IBA 14.2.5.6 LinkSpeed*: SDR..QDR; LinkSpeedExt*: FDR, EDR, HDR, NDR,
 * from ibv_port_attr.active_speed (16, 32, 64, 128: enum ib_port_speed)
 */
static void port_speed(uint8_t *pi, uint8_t ibv_speed)
{
	static const struct { uint8_t ibv, ext; } ext[] = {
		{ 16, 1 }, { 32, 2 }, { 64, 4 }, { 128, 8 },
	};
	uint8_t active = ibv_speed <= 4 ? ibv_speed : 1, ext_active = 0;

	for (unsigned i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (ext[i].ibv == ibv_speed)
			ext_active = ext[i].ext;
	/* supported and enabled: every speed up to the active one */
	pi[32] |= (uint8_t)(7 << 4);			/* LinkSpeedSupported */
	pi[35] = (uint8_t)(active << 4 | 7);		/* Active, Enabled */
	if (ext_active) {
		uint8_t upto = (uint8_t)(ext_active * 2 - 1);

		pi[62] = (uint8_t)(ext_active << 4 | upto);	/* ExtActive, ExtSupported */
		pi[63] = upto;				/* LinkSpeedExtEnabled */
	}
}

static void port_info(uint8_t *pi, const struct emu_host_port *hp, unsigned p)
{
	const struct ib_uverbs_query_port_resp *a = &hp->attr;

	memcpy(pi + 8, hp->gid0, 8);			/* GidPrefix */
	emu_mad_put16(pi + 16, a->lid);
	emu_mad_put16(pi + 18, a->sm_lid);		/* MasterSMLID */
	emu_mad_put32(pi + 20, a->port_cap_flags);
	pi[28] = (uint8_t)p;				/* LocalPortNum */
	pi[29] = 3;					/* LinkWidthEnabled: 1X, 4X */
	pi[30] = 3;					/* LinkWidthSupported */
	pi[31] = a->active_width;
	pi[32] = a->state & 0xf;			/* PortState */
	pi[33] = (uint8_t)(a->phys_state << 4 | 2);	/* LinkDownDefault: Polling */
	pi[34] = a->lmc & 7;
	port_speed(pi, a->active_speed);
	pi[36] = (uint8_t)(a->active_mtu << 4 | (a->sm_sl & 0xf));	/* NeighborMTU, MasterSMSL */
	pi[37] = (uint8_t)(a->max_vl_num << 4);		/* VLCap */
	pi[41] = a->max_mtu & 0xf;			/* MTUCap */
	pi[43] = (uint8_t)(a->max_vl_num << 4);		/* OperationalVLs */
	pi[50] = (uint8_t)hp->gid_tbl_len;		/* GUIDCap */
	pi[51] = a->subnet_timeout & 0x1f;
	pi[52] = 16;					/* RespTimeValue */
	emu_mad_put16(pi + 60, hp->cap_flags2);
}

bool emu_sma_answer(const struct emu_host_rec *h, unsigned d, unsigned p,
		    const uint8_t *req, uint8_t *resp)
{
	const struct emu_host_port *hp = &h->port[d][p - 1];
	uint8_t *data = resp + EMU_SMP_DATA;
	uint32_t mod = emu_mad_attr_mod(req);
	bool answer;

	if (smp_refused(req, resp, &answer))
		return answer;
	switch (emu_mad_attr(req)) {
	case ATTR_NODE_DESC:
		memcpy(data, h->node_desc[d], 64);
		break;
	case ATTR_NODE_INFO:
		node_info(data, 1, (uint8_t)h->num_ports, h->sys_image_guid,
			  h->node_guid[d], h->node_guid[d] + p - 1, hp->pkey_tbl_len,
			  (uint16_t)h->part_id, (uint8_t)p);
		break;
	case ATTR_PORT_INFO:
		/* AttributeModifier: the port; 0 is the one the SMP came in on */
		if (mod > h->num_ports) {
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VALUE);
			break;
		}
		port_info(data, &h->port[d][(mod ? mod : p) - 1], mod ? mod : p);
		break;
	case ATTR_GUID_INFO:
		/* eight GUIDs a block; the port GUID is entry 0, the rest unset */
		if (mod * 8 >= hp->gid_tbl_len) {
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VALUE);
			break;
		}
		if (mod == 0)
			memcpy(data, hp->gid0 + 8, 8);
		break;
	case ATTR_PKEY_TABLE:
		/* 32 P_Keys a block; the default full-member key is entry 0 */
		if ((mod & 0xffff) * 32 >= hp->pkey_tbl_len) {
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VALUE);
			break;
		}
		if ((mod & 0xffff) == 0)
			emu_mad_put16(data, 0xffff);
		break;
	case ATTR_PORT_INFO_EXT:
		/*
		 * CapabilityMask2 announces it (IsPortInfoExtendedSupported);
		 * its CapabilityMask 0: no FEC mode is reported
		 */
		if (!(hp->cap_flags2 & 0x2) || mod > h->num_ports) {
			emu_mad_reply(req, resp, mod > h->num_ports ? EMU_MAD_STATUS_BAD_VALUE :
				      EMU_MAD_STATUS_BAD_ATTR);
			break;
		}
		break;
	case ATTR_MLNX_EXT_PORT_INFO:
		/*
		 * What ibportstate asks a Mellanox HCA for (FDR10 speeds):
		 * none supported, none enabled or active; all zeros
		 */
		if (mod > h->num_ports)
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VALUE);
		break;
	default:
		/* SMInfo included: no SM runs on a host port */
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
		break;
	}
	return true;
}

bool emu_switch_answer(const uint8_t *req, uint8_t *resp)
{
	uint8_t *data = resp + EMU_SMP_DATA;
	struct timespec ts;
	bool answer;

	if (smp_refused(req, resp, &answer))
		return answer;
	switch (emu_mad_attr(req)) {
	case ATTR_NODE_DESC:
		snprintf((char *)data, 64, "rfemu switch (subnet manager)");
		break;
	case ATTR_NODE_INFO:
		node_info(data, 2, SWITCH_PORTS, SWITCH_GUID, SWITCH_GUID, SWITCH_GUID,
			  (uint16_t)emu_cap_pkey_tbl_len(), SWITCH_DEVICE_ID, 0);
		break;
	case ATTR_PORT_INFO:
		/* only the management port 0 is modelled */
		if (emu_mad_attr_mod(req) != 0) {
			emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_VALUE);
			break;
		}
		emu_mad_put16(data + 16, EMU_SWITCH_LID);
		emu_mad_put16(data + 18, EMU_SWITCH_LID);
		emu_mad_put32(data + 20, PORT_CAP_IS_SM);
		data[32] = IBV_PORT_ACTIVE;
		data[33] = 5 << 4;			/* LinkUp */
		data[36] = IBV_MTU_4096 << 4;
		data[41] = IBV_MTU_4096;
		break;
	case ATTR_SM_INFO:
		/* the master SM; its activity count moves as an SM's does */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		emu_mad_put64(data, SWITCH_GUID);
		emu_mad_put64(data + 8, 0);		/* SM_Key */
		emu_mad_put32(data + 16, (uint32_t)ts.tv_sec);
		data[20] = 3;				/* priority 0, MASTER */
		break;
	default:
		emu_mad_reply(req, resp, EMU_MAD_STATUS_BAD_ATTR);
		break;
	}
	return true;
}
