/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq_ts.h - completions with the time the device wrote them.
 *
 *	n = rf_cq_poll_ts(cq, wts, max);   rf_cq_poll(), and each record's
 *	                                   CQE timestamp in wts[i].ts
 *
 * A ConnectX stamps every CQE with its free-running clock, which counts at
 * hca_core_clock kHz (ibv_query_device_ex()); mlx5dv_ts_to_ns() converts a
 * stamp to CLOCK_REALTIME nanoseconds with the clock info that
 * mlx5dv_get_clock_info() returns (fetch it again at least every
 * max_clock_info_update_nsec of mlx5dv_query_device(): the kernel advances
 * it). On a CQ created with real-time timestamps the stamp is already
 * nanoseconds. The stamp means something only on a CQ created for it, which
 * asks the kernel whether the device has a clock: rf_cq_create_ts_ibv()
 * (rdmafast/verbs.h), or ibv_create_cq_ex() with
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP taken over by rf_cq_init_ibv().
 *
 * Why a second poll: struct rf_wc is 32 bytes, two records per cache line,
 * and rf_cq_poll()'s fast path reads nothing of a send completion's CQE but
 * its last 8 bytes. A timestamp there would cost every poll a load and a
 * store per record, and every record 8 more bytes. rf_cq_poll_ts() takes
 * each CQE the long way (rf_cq_decode(), as a peek user would) and adds
 * the stamp; rf_cq_poll() does not change. Both may poll the same CQ,
 * one call after the other. Compressed CQEs are not decoded here: a CQ
 * polled with rf_cq_poll_ts() has no CQE compression.
 */
#ifndef RDMAFAST_CQ_TS_H
#define RDMAFAST_CQ_TS_H

#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/types.h>
#include <rdmafast/cq.h>
#include <rdmafast/cq_poll.h>

RF_BEGIN_DECLS

/*
 * struct rf_wc_ts - a completion record and its CQE's timestamp.
 * @wc: as rf_cq_poll() writes it
 * @ts: the device's clock when it wrote the CQE: cycles at hca_core_clock
 *      (mlx5dv_ts_to_ns()), or nanoseconds on a real-time CQ
 */
struct rf_wc_ts {
	struct rf_wc wc;
	uint64_t     ts;
};

/*
 * rf_cq_poll_ts - rf_cq_poll() with timestamps: decode up to n completions
 * into wts[0..), the stamp of each beside it, retire the WQEs they
 * complete and update the consumer index once. Returns how many records
 * were written (0 when the CQ is empty).
 */
RF_INLINE int rf_cq_poll_ts(struct rf_cq *cq, struct rf_wc_ts *wts, int n)
{
	struct rf_cqe64 *cqe;
	uint32_t used = 0;
	int got = 0;

	while (got < n && (cqe = rf_cq_peek(cq)) != NULL) {
		uint8_t op = rf_cqe_opcode(cqe->op_own);

		/* a CQE without a record (a stale QPN) leaves the slot for the next */
		wts[got].ts = rf_be64toh(cqe->timestamp);
		got += rf_cq_decode(cq, cqe, &wts[got].wc);
		rf_cq_advance(cq, 1);
		used++;
		if (op == RF_CQE_SIG_ERR)
			break;	/* as rf_cq_poll(): the record ends the call */
	}
	if (used)
		rf_cq_update_ci(cq);
	return got;
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_TS_H */
