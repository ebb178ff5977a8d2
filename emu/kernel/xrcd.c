/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xrcd.c - XRC domains (ibv_open_xrcd / ibv_close_xrcd).
 *
 * With fd == -1 the domain is private to this handle.  With a file, every
 * open of the same inode, from any process of the subnet, names the same
 * domain; the registry lives in the subnet directory (subnet/subnet.c) and decides
 * O_CREAT / O_EXCL exactly as the kernel's per-device inode tree does.
 */
#include <sys/stat.h>

#include "internal.h"

int emu_cmd_open_xrcd(struct emu_cmd *c)
{
	const struct ib_uverbs_open_xrcd *cmd = c->in;
	struct ib_uverbs_open_xrcd_resp *resp = c->out;
	struct emu_xrcd *xrcd;
	struct stat st = {};
	uint32_t xrcdn = 0;
	bool has_inode = cmd->fd != (uint32_t)-1;
	int ret;

	if (has_inode) {
		/* our fstat() would take the lock we hold */
		if (emu_fd_stat_locked((int)cmd->fd, &st))
			return EBADF;
		ret = emu_subnet_xrcd_open(st.st_dev, st.st_ino, cmd->oflags, &xrcdn);
		if (ret)
			return ret;
	} else {
		xrcdn = emu_subnet_xrcd_anon();
		if (!xrcdn)
			return ENOMEM;
	}

	xrcd = emu_obj_alloc(c->ctx, EMU_OBJ_XRCD, sizeof(*xrcd), 0);
	if (!xrcd) {
		if (has_inode)
			emu_subnet_xrcd_close(xrcdn);
		return ENOMEM;
	}
	xrcd->xrcdn = xrcdn;
	xrcd->has_inode = has_inode;
	xrcd->dev = st.st_dev;
	xrcd->ino = st.st_ino;
	resp->xrcd_handle = xrcd->obj.handle;
	return 0;
}

void emu_xrcd_destroy_locked(struct emu_xrcd *xrcd)
{
	if (xrcd->has_inode)
		emu_subnet_xrcd_close(xrcd->xrcdn);
	emu_obj_free_locked(&xrcd->obj);
}

int emu_cmd_close_xrcd(struct emu_cmd *c)
{
	const struct ib_uverbs_close_xrcd *cmd = c->in;
	struct emu_xrcd *xrcd = emu_obj_get_locked(c->ctx, cmd->xrcd_handle,
						   EMU_OBJ_XRCD);

	if (!xrcd)
		return EINVAL;
	/* SRQs and target QPs created through this handle pin it */
	if (xrcd->obj.usecnt)
		return EBUSY;
	emu_xrcd_destroy_locked(xrcd);
	return 0;
}
