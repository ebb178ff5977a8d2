/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * config.c - the emulated HCA's options, read from the environment once at
 * load time.  The launcher (launcher/rfemu.c) turns its flags into these variables,
 * so a program started with LD_PRELOAD by hand behaves the same.
 *
 *   RFEMU_DEVICES     number of mlx5 devices per host (1..4, default 1)
 *   RFEMU_PORTS       ports per device (1..2, default 1)
 *   RFEMU_LINK_LAYER  "ib" (default) or "eth" (RoCE v2)
 *   RFEMU_PART_ID     PCI device id / vendor_part_id: the profile (profile.c;
 *                     default 0x101b, ConnectX-6)
 *   RFEMU_FW_VER      firmware version string (default: the profile's)
 *   RFEMU_BOARD_ID    board id string (default: the profile's)
 *   RFEMU_STATE_DIR   where the subnet's shared state lives (see subnet/subnet.c)
 *   RFEMU_DEBUG       non-zero: trace commands on stderr
 *   RFEMU_CQE_COMPRESS auto (default), always, never or load: see
 *                     emu_config_cqe_compress()
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base.h"

struct emu_config emu_cfg;
int emu_debug;

static unsigned long env_ulong(const char *name, unsigned long def,
			       unsigned long min, unsigned long max)
{
	const char *s = getenv(name);
	unsigned long v;
	char *end;

	if (!s || !*s)
		return def;
	v = strtoul(s, &end, 0);
	if (*end || v < min || v > max) {
		fprintf(stderr, "rfemu: ignoring %s=%s (want %lu..%lu)\n",
			name, s, min, max);
		return def;
	}
	return v;
}

static void env_str(const char *name, const char *def, char *dst, size_t len)
{
	const char *s = getenv(name);

	snprintf(dst, len, "%s", s && *s ? s : def);
}

void emu_config_load(void)
{
	const char *ll = getenv("RFEMU_LINK_LAYER");

	emu_debug = (int)env_ulong("RFEMU_DEBUG", 0, 0, 9);
	emu_cfg.num_devs = (unsigned)env_ulong("RFEMU_DEVICES", 1, 1, EMU_MAX_DEVS);
	emu_cfg.num_ports = (unsigned)env_ulong("RFEMU_PORTS", 1, 1, EMU_MAX_PORTS);
	emu_cfg.vendor_part_id = (uint32_t)env_ulong("RFEMU_PART_ID", EMU_DEFAULT_PART_ID,
						     1, 0xffff);
	emu_cfg.profile = emu_profile_find(emu_cfg.vendor_part_id);
	if (!emu_cfg.profile) {
		fprintf(stderr, "rfemu: ignoring RFEMU_PART_ID=%#x (modelled: 0x1017, "
			"0x101b, 0x101d, 0x1021)\n", emu_cfg.vendor_part_id);
		emu_cfg.vendor_part_id = EMU_DEFAULT_PART_ID;
		emu_cfg.profile = emu_profile_find(EMU_DEFAULT_PART_ID);
	}
	env_str("RFEMU_FW_VER", emu_cfg.profile->fw_ver, emu_cfg.fw_ver,
		sizeof(emu_cfg.fw_ver));
	env_str("RFEMU_BOARD_ID", emu_cfg.profile->board_id, emu_cfg.board_id,
		sizeof(emu_cfg.board_id));

	emu_cfg.link_layer = emu_cfg.profile->eth_only ? IBV_LINK_LAYER_ETHERNET :
							IBV_LINK_LAYER_INFINIBAND;
	if (ll && (!strcasecmp(ll, "eth") || !strcasecmp(ll, "ethernet") ||
		   !strcasecmp(ll, "roce")))
		emu_cfg.link_layer = IBV_LINK_LAYER_ETHERNET;
	else if (ll && (!strcasecmp(ll, "ib") || !strcasecmp(ll, "infiniband")) &&
		 emu_cfg.profile->eth_only)
		fprintf(stderr, "rfemu: the %s has no InfiniBand link layer: "
			"Ethernet\n", emu_cfg.profile->name);
	else if (ll && *ll && strcasecmp(ll, "ib") && strcasecmp(ll, "infiniband"))
		fprintf(stderr, "rfemu: ignoring RFEMU_LINK_LAYER=%s\n", ll);
}

enum emu_cqe_compress emu_config_cqe_compress(void)
{
	static const char *const names[] = {
		[EMU_CQE_COMPRESS_AUTO] = "auto",
		[EMU_CQE_COMPRESS_ALWAYS] = "always",
		[EMU_CQE_COMPRESS_NEVER] = "never",
		[EMU_CQE_COMPRESS_LOAD] = "load",
	};
	const char *s = getenv("RFEMU_CQE_COMPRESS");

	if (!s || !*s)
		return EMU_CQE_COMPRESS_AUTO;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i]))
			return (enum emu_cqe_compress)i;
	fprintf(stderr, "rfemu: ignoring RFEMU_CQE_COMPRESS=%s (want auto, always, never or load)\n", s);
	return EMU_CQE_COMPRESS_AUTO;
}
