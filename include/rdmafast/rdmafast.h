/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/rdmafast.h - the whole data path in one include.
 *
 * Everything here depends only on libc and compiler headers, so queues can
 * be built and tested in plain host memory. The glue to libibverbs and
 * mlx5dv (rdmafast/verbs.h) is included separately. The headers under
 * rdmafast/detail/ are rdmafast's private machinery: they come in through
 * these, and no program includes them itself.
 */
#ifndef RDMAFAST_RDMAFAST_H
#define RDMAFAST_RDMAFAST_H

#include <rdmafast/compiler.h>
#include <rdmafast/version.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/barrier.h>
#include <rdmafast/hw/doorbell.h>
#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/sq.h>
#include <rdmafast/sq_slots.h>
#include <rdmafast/sq_data.h>
#include <rdmafast/sq_atomic.h>
#include <rdmafast/sq_mw.h>
#include <rdmafast/sq_ud.h>
#include <rdmafast/sq_dc.h>
#include <rdmafast/sq_wr.h>
#include <rdmafast/sq_batch.h>
#include <rdmafast/rq.h>
#include <rdmafast/srq.h>
#include <rdmafast/cq.h>
#include <rdmafast/cq_poll.h>
#include <rdmafast/cq_ts.h>
#include <rdmafast/mad.h>
#include <rdmafast/mad_tap.h>

#endif /* RDMAFAST_RDMAFAST_H */
