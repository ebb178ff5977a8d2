/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs.h - the glue to libibverbs and mlx5dv: create queues with
 * verbs, hand their memory to rdmafast, move QPs through their states.
 *
 * This is the only rdmafast header that includes <infiniband/mlx5dv.h>,
 * and everything in it is control path (cold, may allocate, may call into
 * libibverbs). Link with -libverbs -lmlx5.
 *
 *	rf_cq_init_ibv(&cq, ibcq);                 take over a fresh CQ
 *	rf_qp_create_ibv(&qp, &attr);              QP sized for what you post
 *	rf_cq_attach(&cq, qp.qpn, &qp.sq, &qp.rq, NULL);
 *	rf_qp_connect_ibv(&qp, &local, &remote);   RESET -> INIT -> RTR -> RTS
 *	...data path: sq.h, rq.h, cq.h...
 *	rf_qp_destroy_ibv(&qp);
 *	rf_cq_destroy_ibv(&cq, ibcq);
 *
 * A queue taken over belongs to rdmafast: never post or poll it through
 * verbs as well, and take it over before anything was posted to or
 * completed on it. These rules, threading and BlueFlame sharing are
 * explained in rdmafast(7) (sections DO NOT MIX and THREADING); this
 * header's functions in rf_verbs(3).
 *
 * Errors are 0 or a negative errno; a device that mlx5dv does not drive
 * gives -EPROTONOSUPPORT.
 *
 * The glue is split by object under rdmafast/verbs/ (ibv.h: what they all
 * stand on; cq.h, srq.h, qp.h, conn.h: the connection policy, xrc.h,
 * dc.h, tm.h; opened_qp.h: an rdma-core 44 workaround); include this
 * header, not those.
 */
#ifndef RDMAFAST_VERBS_H
#define RDMAFAST_VERBS_H

#include <rdmafast/verbs/ibv.h>		/* libibverbs, mlx5dv, errors, async events */
#include <rdmafast/verbs/cq.h>
#include <rdmafast/verbs/srq.h>
#include <rdmafast/verbs/conn.h>	/* the connection policy */
#include <rdmafast/verbs/qp.h>
#include <rdmafast/verbs/xrc.h>
#include <rdmafast/verbs/dc.h>
#include <rdmafast/verbs/tm.h>

#endif /* RDMAFAST_VERBS_H */
