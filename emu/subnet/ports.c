/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ports.c - what each host publishes of its ports for the subnet's
 * management agents (subnet.h, struct emu_host_rec): one record per host
 * slot in ports.tbl, a shared mapping, so that a MAD to another host's
 * LID is answered from that host's own values and live counters, as its
 * SMA and PMA would answer, without a message to its process.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subnet.h"

static struct emu_host_rec *table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_map(void)
{
	size_t size = (EMU_MAX_HOSTS + 1) * sizeof(struct emu_host_rec);
	char path[PATH_MAX + 16];
	struct stat st;
	void *m;
	int fd;

	snprintf(path, sizeof(path), "%s/ports.tbl", emu_subnet_dir());
	fd = emu_real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* sparse: only the slots in use take pages */
	if (emu_real_fstat(fd, &st) || ((size_t)st.st_size < size && ftruncate(fd, (off_t)size))) {
		emu_real_close(fd);
		return;
	}
	m = emu_real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	emu_real_close(fd);
	if (m != MAP_FAILED)
		table = m;
}

struct emu_host_rec *emu_subnet_host_rec(unsigned h)
{
	if (h == 0 || h > EMU_MAX_HOSTS)
		return NULL;
	pthread_once(&table_once, table_map);
	return table ? &table[h] : NULL;
}

struct emu_host_rec *emu_subnet_live_rec(unsigned h)
{
	struct emu_host_rec *r = emu_subnet_host_rec(h);
	int32_t pid;

	if (!r)
		return NULL;
	pid = atomic_load_explicit(&r->pid, memory_order_acquire);
	if (h == emu_cfg.host_id)
		return pid ? r : NULL;
	/* the slot's lock holder published it: not a dead host's leftover */
	return pid && emu_subnet_host_pid(h) == pid ? r : NULL;
}

bool emu_subnet_lid_port(uint16_t lid, unsigned *h, unsigned *d, unsigned *p)
{
	const unsigned per_host = EMU_MAX_DEVS * EMU_MAX_PORTS;

	/* the inverse of emu_subnet_identity()'s LIDs */
	*h = lid / per_host;
	*d = lid % per_host / EMU_MAX_PORTS;
	*p = lid % EMU_MAX_PORTS + 1;
	return *h >= 1 && *h <= EMU_MAX_HOSTS && lid < 0xc000;
}
