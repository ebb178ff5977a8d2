/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mcast.c - multicast group membership, subnet-wide.
 *
 * On a fabric the subnet manager programs the switches' multicast
 * forwarding tables from the joins it receives, and every HCA filters what
 * arrives against the groups its QPs are attached to.  Here mcast.tbl in
 * the subnet directory stands for the forwarding tables: one record per
 * attached QP (MGID, MLID, QPN, the attaching process), which the sending
 * host's wire reads to know which hosts get a copy.  The receiving device
 * then delivers to its own attached QPs (kernel/qp.c keeps those lists), so
 * a stale record costs one packet that nobody takes, never a delivery.
 *
 * Records are read and written with pread/pwrite under a write lock on the
 * whole file.  A record whose process is gone is cleared by the next
 * reader or writer that meets it: a process killed with attachments leaves
 * nothing behind for long.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "subnet.h"

/* Attachments on the subnet at once (a ConnectX-6 allows 240 per group). */
#define MC_SLOTS	4096

struct mc_rec {
	uint8_t		gid[16];
	uint32_t	qpn;		/* 0: free slot */
	int32_t		pid;
	uint16_t	lid;
	uint16_t	reserved[3];
};

struct mc_file {
	uint32_t	used;		/* slots [0, used) may hold records */
	uint32_t	reserved;
	struct mc_rec	rec[MC_SLOTS];
};

static int mc_fd = -1;

static int mc_lock(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (mc_fd < 0) {
		char path[PATH_MAX + 16];

		if (!*emu_subnet_dir())
			return ENOENT;	/* not on a subnet (yet): no table to share */
		snprintf(path, sizeof(path), "%s/mcast.tbl", emu_subnet_dir());
		mc_fd = emu_real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (mc_fd < 0)
			return errno;
	}
	while (fcntl(mc_fd, F_SETLKW, &fl))
		if (errno != EINTR)
			return errno;
	return 0;
}

static void mc_unlock(void)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	fcntl(mc_fd, F_SETLK, &fl);
}

static off_t rec_off(uint32_t i)
{
	return (off_t)(offsetof(struct mc_file, rec) + i * sizeof(struct mc_rec));
}

/* Slots [0, used) in recs; a short read is the sparse part of the file: zeros. */
static uint32_t mc_read(struct mc_rec *recs)
{
	uint32_t used = 0;
	ssize_t n;

	if (pread(mc_fd, &used, sizeof(used), 0) != (ssize_t)sizeof(used) || used > MC_SLOTS)
		used = 0;
	n = pread(mc_fd, recs, used * sizeof(*recs), rec_off(0));
	if (n < 0)
		n = 0;
	memset((char *)recs + n, 0, used * sizeof(*recs) - (size_t)n);
	return used;
}

static void mc_write(uint32_t i, const struct mc_rec *r)
{
	if (pwrite(mc_fd, r, sizeof(*r), rec_off(i)) != (ssize_t)sizeof(*r))
		return;		/* the record stays as it was: at worst a stray copy */
}

static bool pid_alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Clear record i if its process died; true if it is (still) in use. */
static bool mc_live(struct mc_rec *recs, uint32_t i)
{
	if (!recs[i].qpn)
		return false;
	if (pid_alive(recs[i].pid))
		return true;
	memset(&recs[i], 0, sizeof(recs[i]));
	mc_write(i, &recs[i]);
	return false;
}

static bool mc_same(const struct mc_rec *r, const uint8_t gid[16], uint16_t lid,
		    uint32_t qpn)
{
	return r->qpn == qpn && r->lid == lid && !memcmp(r->gid, gid, 16);
}

static struct mc_rec mc_recs[MC_SLOTS];	/* under the file lock and emu_lock */

int emu_subnet_mcast_join(const uint8_t gid[16], uint16_t lid, uint32_t qpn)
{
	uint32_t used, slot = MC_SLOTS;
	int ret = mc_lock();

	if (ret)
		return ret;
	used = mc_read(mc_recs);
	for (uint32_t i = 0; i < used; i++) {
		if (!mc_live(mc_recs, i)) {
			if (slot == MC_SLOTS)
				slot = i;
		} else if (mc_same(&mc_recs[i], gid, lid, qpn)) {
			goto out;	/* already there */
		}
	}
	if (slot == MC_SLOTS && used < MC_SLOTS)
		slot = used++;
	if (slot == MC_SLOTS) {
		ret = ENOMEM;
		goto out;
	}
	{
		struct mc_rec r = { .qpn = qpn, .pid = (int32_t)getpid(), .lid = lid };

		memcpy(r.gid, gid, 16);
		mc_write(slot, &r);
		if (pwrite(mc_fd, &used, sizeof(used), 0) != (ssize_t)sizeof(used))
			ret = EIO;
	}
out:
	mc_unlock();
	return ret;
}

void emu_subnet_mcast_leave(const uint8_t gid[16], uint16_t lid, uint32_t qpn)
{
	static const struct mc_rec none;
	uint32_t used;

	if (mc_lock())
		return;
	used = mc_read(mc_recs);
	for (uint32_t i = 0; i < used; i++)
		if (mc_same(&mc_recs[i], gid, lid, qpn))
			mc_write(i, &none);
	mc_unlock();
}

unsigned emu_subnet_mcast_hosts(const uint8_t gid[16], uint16_t lid, bool by_lid,
				uint64_t hosts[EMU_MCAST_HOST_WORDS])
{
	unsigned n = 0;
	uint32_t used;

	memset(hosts, 0, EMU_MCAST_HOST_WORDS * sizeof(hosts[0]));
	if (mc_lock())
		return 0;
	used = mc_read(mc_recs);
	for (uint32_t i = 0; i < used; i++) {
		const struct mc_rec *r = &mc_recs[i];
		unsigned h = EMU_NUM_HOST(r->qpn);
		uint64_t bit = 1ull << (h % 64);

		if (!r->qpn || (by_lid ? r->lid != lid : memcmp(r->gid, gid, 16)))
			continue;
		if ((hosts[h / 64] & bit) || !mc_live(mc_recs, i))
			continue;
		hosts[h / 64] |= bit;
		n++;
	}
	mc_unlock();
	return n;
}
