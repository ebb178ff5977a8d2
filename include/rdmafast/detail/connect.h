/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/detail/connect.h - the machinery of connect.h: the wire form
 * of struct rf_ep_info, opening a device by name, the errno of a verbs
 * call that failed.
 *
 * Private: this is rdmafast's machinery, not its API. Users include
 * <rdmafast/rdmafast.h> and never this file; names, arguments and
 * layout here change without notice.
 */
#ifndef RDMAFAST_DETAIL_CONNECT_H
#define RDMAFAST_DETAIL_CONNECT_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/verbs.h>

RF_BEGIN_DECLS

/*
 * The wire form of struct rf_ep_info: a header of its own size, every
 * field big-endian, then nregions region records. magic names the
 * format and its version (RF__EP_WIRE_MAGIC); a peer built from another
 * version of this header, or speaking something else, is refused with
 * -EPROTO rather than misread. (Version 0, before regions, had no magic:
 * its first word is a QPN, whose top byte is 0.)
 */
#define RF__EP_WIRE_MAGIC 0x52464501U	/* "RFE", version 1 */

struct rf__ep_wire {
	__be32  magic;
	__be16  hdr_size;	/* sizeof(struct rf__ep_wire) */
	__be16  nregions;
	__be32  qpn;
	__be32  psn;
	__be32  lid;
	__be32  rkey;
	__be64  addr;
	__be64  size;
	uint8_t gid[16];
};

struct rf__ep_wire_region {
	__be64 addr;
	__be64 size;
	__be32 rkey;
	__be32 rsvd;
};

RF_STATIC_ASSERT(sizeof(struct rf__ep_wire) == 56, "rf_ep_info wire header");
RF_STATIC_ASSERT(sizeof(struct rf__ep_wire_region) == 24, "rf_ep_info wire region");

/* -errno of a verbs call that returned NULL. */
static inline RF_COLD int rf__ep_errno(void)
{
	return errno ? -errno : -ENOMEM;
}

/* Record the failing step of an rf_ep (its failed); returns ret (a -errno). */
static inline RF_COLD int rf__ep_fail(const char **failed, const char *what, int ret)
{
	*failed = what;
	return ret < 0 ? ret : -EIO;
}

RF_END_DECLS

#endif /* RDMAFAST_DETAIL_CONNECT_H */
