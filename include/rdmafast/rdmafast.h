/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/rdmafast.h - the whole data path in one include.
 *
 * Everything here depends only on libc and compiler headers, so queues can
 * be built and tested in plain host memory. The glue to libibverbs and
 * mlx5dv (rdmafast/verbs.h) is included separately.
 *
 * What is private, by place and by name (tools/check-includes.sh, part of
 * make test, holds every header to it):
 *
 *   detail/   rdmafast's private machinery. Every name defined there
 *             starts rf__ or RF__ (types too: struct rf__sq_wqe), and a
 *             name that starts so is defined there and nowhere else.
 *             Programs never include detail/ or use its names: they
 *             change without notice.
 *   hw/       the device's formats (WQE and CQE segments and their
 *             setters), byte order and barriers: no queue logic, no
 *             doorbell ring, nothing of the library's completion record.
 *             hw/ includes only hw/ and compiler.h.
 *   the rest  the API, rf_ and RF_. The core headers (types.h,
 *             doorbell.h, checked.h, sq.h, sq_slots.h, sq_wr.h, rq.h,
 *             srq.h, cq_types.h, cq.h, verbs.h, verbs/conn.h) hold the
 *             objects; the others are operations on them.
 *
 * Includes run one way: an operation header may include anything;
 * detail/ includes hw/, detail/ and the core headers only; a core header
 * includes hw/, core headers and the detail/ headers under it. No header
 * is over 600 lines.
 */
#ifndef RDMAFAST_RDMAFAST_H
#define RDMAFAST_RDMAFAST_H

#include <rdmafast/compiler.h>
#include <rdmafast/version.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/umr.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/hw/tm.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/sq_data.h>
#include <rdmafast/sq_atomic.h>
#include <rdmafast/sq_mw.h>
#include <rdmafast/sq_umr.h>
#include <rdmafast/sq_ud.h>
#include <rdmafast/sq_dc.h>
#include <rdmafast/sq_wr.h>
#include <rdmafast/sq_batch.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>
#include <rdmafast/cq_poll.h>
#include <rdmafast/cq_ts.h>
#include <rdmafast/cq_sig.h>
#include <rdmafast/tm.h>
#include <rdmafast/mad.h>
#include <rdmafast/mad_tap.h>

#endif /* RDMAFAST_RDMAFAST_H */
