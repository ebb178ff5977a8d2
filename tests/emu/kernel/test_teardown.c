/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Destroying in any order, closing the device with everything alive, and a
 * process that exits without cleaning up.
 */
#include "emu_test.h"

struct world {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp, *ud;
	struct ibv_ah *ah;
	struct ibv_xrcd *xrcd;
};

static char buf[4096];

static void build(struct world *w)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };

	w->ctx = et_open();
	cr_assert(w->pd = ibv_alloc_pd(w->ctx));
	cr_assert(w->mr = ibv_reg_mr(w->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	cr_assert(w->mw = ibv_alloc_mw(w->pd, IBV_MW_TYPE_2));
	cr_assert(w->ch = ibv_create_comp_channel(w->ctx));
	cr_assert(w->cq = ibv_create_cq(w->ctx, 32, NULL, w->ch, 0));
	cr_assert(w->srq = ibv_create_srq(w->pd, &sa));
	qa.send_cq = qa.recv_cq = w->cq;
	cr_assert(w->qp = ibv_create_qp(w->pd, &qa));
	qa.qp_type = IBV_QPT_UD;
	qa.srq = w->srq;
	cr_assert(w->ud = ibv_create_qp(w->pd, &qa));
	cr_assert(w->ah = ibv_create_ah(w->pd, &aa));
	cr_assert(w->xrcd = ibv_open_xrcd(w->ctx, &xa));
}

Test(teardown, close_with_everything_alive)
{
	struct world w;

	for (int round = 0; round < 3; round++) {
		build(&w);
		cr_assert_eq(ibv_close_device(w.ctx), 0);
	}
}

Test(teardown, reverse_and_dependency_order)
{
	struct world w;

	build(&w);
	/* dependencies first refuse ... */
	cr_assert_eq(ibv_dealloc_pd(w.pd), EBUSY);
	cr_assert_eq(ibv_destroy_cq(w.cq), EBUSY);
	cr_assert_eq(ibv_destroy_srq(w.srq), EBUSY);
	/* ... then go in an order unlike creation */
	cr_assert_eq(ibv_close_xrcd(w.xrcd), 0);
	cr_assert_eq(ibv_destroy_qp(w.ud), 0);
	cr_assert_eq(ibv_destroy_srq(w.srq), 0);
	cr_assert_eq(ibv_dealloc_mw(w.mw), 0);
	cr_assert_eq(ibv_destroy_ah(w.ah), 0);
	cr_assert_eq(ibv_dereg_mr(w.mr), 0);
	cr_assert_eq(ibv_destroy_qp(w.qp), 0);
	cr_assert_eq(ibv_destroy_cq(w.cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(w.ch), 0);
	cr_assert_eq(ibv_dealloc_pd(w.pd), 0);
	cr_assert_eq(ibv_close_device(w.ctx), 0);
}

Test(teardown, exit_without_cleanup)
{
	pid_t pid = fork();
	int status;

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct world w;

		alarm(20);
		build(&w);
		exit(0);	/* no destroy, no close: the library cleans up */
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* and this process still works */
	struct world w;

	build(&w);
	cr_assert_eq(ibv_close_device(w.ctx), 0);
}
