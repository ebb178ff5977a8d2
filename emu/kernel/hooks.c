/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * hooks.c - weak defaults for the device-model hooks declared in kernel.h.
 *
 * With no device model linked in, the emulated HCA is a NIC that never
 * executes anything: these keep the kernel self-contained.  The strong
 * definitions in emu/device/ replace them at link time.
 */
#include <endian.h>

#include "internal.h"

#define WEAK __attribute__((weak))

WEAK int emu_dev_ctx_init(struct emu_ctx *ctx)
{
	(void)ctx;
	return 0;
}

WEAK void emu_dev_ctx_fini(struct emu_ctx *ctx)
{
	(void)ctx;
}

WEAK void emu_dev_disown_locked(void)
{
}

WEAK void emu_dev_cq_created(struct emu_cq *cq)
{
	(void)cq;
}

/* Nothing was produced beyond what the process consumed: pi = set_ci. */
WEAK void emu_dev_cq_resized(struct emu_cq *cq)
{
	uint32_t ci = 0;

	/* the record may have been unmapped since it was pinned: then 0 */
	emu_copy_from_user(&ci, cq->dbrec, sizeof(ci));
	emu_cq_finish_resize_locked(cq, be32toh(ci) & 0xffffff);
}

WEAK void emu_dev_cq_destroyed(struct emu_cq *cq)
{
	(void)cq;
}

/* Without a device nothing writes CQEs. */
WEAK uint32_t emu_dev_cq_held(const struct emu_cq *cq)
{
	(void)cq;
	return 0;
}

WEAK void emu_dev_qp_created(struct emu_qp *qp)
{
	(void)qp;
}

WEAK void emu_dev_qp_modified(struct emu_qp *qp, enum ibv_qp_state old,
			      uint32_t attr_mask)
{
	(void)attr_mask;
	/* IB spec 10.8.3: an SRQ-attached QP in error reports its last WQE */
	if (qp->srq && qp->attr.state == IBV_QPS_ERR && old != IBV_QPS_ERR)
		emu_post_async_event_locked(qp->obj.ctx, &qp->obj, 0,
					    IBV_EVENT_QP_LAST_WQE_REACHED);
}

WEAK void emu_dev_qp_destroyed(struct emu_qp *qp)
{
	(void)qp;
}

/* Without a device no WQE is executed. */
WEAK uint16_t emu_dev_qp_sq_counter(const struct emu_qp *qp)
{
	(void)qp;
	return 0;
}

WEAK void emu_dev_srq_created(struct emu_srq *srq)
{
	(void)srq;
}

WEAK void emu_dev_srq_modified(struct emu_srq *srq, uint32_t attr_mask)
{
	(void)srq;
	(void)attr_mask;
}

WEAK void emu_dev_srq_destroyed(struct emu_srq *srq)
{
	(void)srq;
}

WEAK void emu_dev_mw_dealloc(struct emu_mw *mw)
{
	(void)mw;
}

WEAK void emu_dev_mr_dereg(struct emu_mr *mr)
{
	(void)mr;
}

/* No device, no MEMIC operations: nothing answers the mapping's accesses. */
WEAK int emu_dev_memic_mapped(const struct emu_ctx *ctx, uint32_t first_page, uint8_t op,
			       uint8_t *bytes, size_t len, void *addr, size_t maplen)
{
	(void)ctx;
	(void)first_page;
	(void)op;
	(void)bytes;
	(void)len;
	(void)addr;
	(void)maplen;
	return 0;
}

WEAK bool emu_dev_dm_freed(const struct emu_dm *dm)
{
	(void)dm;
	return false;
}

/* No device, no protected doorbell pages to forget. */
WEAK bool emu_dev_vm_change(const void *a, size_t alen, const void *b, size_t blen)
{
	(void)a;
	(void)alen;
	(void)b;
	(void)blen;
	return false;
}

WEAK void emu_dev_vm_changed(void)
{
}

/* No device, no fault handler of its own: the application's call goes on. */
WEAK bool emu_dev_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	(void)sig;
	(void)act;
	(void)old;
	return false;
}

/* No device: nothing to run in the application's poll. */
WEAK bool emu_dev_poll_assist(void)
{
	return false;
}

WEAK void emu_dev_poll_arm(void)
{
}

WEAK bool emu_dev_poll_assist_on(void)
{
	return false;
}
