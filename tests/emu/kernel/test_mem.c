/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Protection domains, memory regions (registration and re-registration),
 * memory windows.
 */
#include <sys/mman.h>

#include "emu_test.h"

ET_CTX_PD_SUITE(mem);

Test(mem, pd_numbers)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct mlx5dv_pd dv1, dv2;
	struct mlx5dv_obj o = { .pd = { .in = pd, .out = &dv1 } };

	cr_assert(pd2);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	o.pd.in = pd2;
	o.pd.out = &dv2;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_PD), 0);
	cr_assert_neq(dv1.pdn, dv2.pdn);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
}

Test(mem, mr_keys_and_fields)
{
	static char buf[3][8192];
	struct ibv_mr *mr[3];

	for (int i = 0; i < 3; i++) {
		mr[i] = ibv_reg_mr(pd, buf[i], sizeof(buf[i]),
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		cr_assert(mr[i], "reg_mr: %s", strerror(errno));
		cr_assert_eq(mr[i]->addr, (void *)buf[i]);
		cr_assert_eq(mr[i]->length, sizeof(buf[i]));
	}
	cr_assert_neq(mr[0]->lkey, mr[1]->lkey);
	cr_assert_neq(mr[1]->lkey, mr[2]->lkey);
	cr_assert_neq(mr[0]->rkey, mr[2]->rkey);
	/* a PD with MRs cannot go */
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(ibv_dereg_mr(mr[i]), 0);
}

Test(mem, mr_iova)
{
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	mr = ibv_reg_mr_iova(pd, buf + 100, 1000, 0x10000064, IBV_ACCESS_LOCAL_WRITE);
	cr_assert(mr, "%s", strerror(errno));
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	/* IOVA and address must share the offset within the page */
	errno = 0;
	mr = ibv_reg_mr_iova(pd, buf + 100, 1000, 0x10000000, IBV_ACCESS_LOCAL_WRITE);
	cr_assert_null(mr);
	cr_assert_eq(errno, EINVAL);
}

Test(mem, mr_access_rules)
{
	static char buf[4096];

	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE));
	cr_assert_eq(errno, EINVAL, "remote write without local write");
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC));
	cr_assert_eq(errno, EINVAL, "remote atomic without local write");
	cr_assert_null(ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
}

Test(mem, mr_unmapped_is_efault)
{
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(munmap((char *)p + 4096, 4096), 0);
	errno = 0;
	cr_assert_null(ibv_reg_mr(pd, p, 8192, IBV_ACCESS_LOCAL_WRITE));
	cr_assert_eq(errno, EFAULT);
	munmap(p, 4096);
}

/*
 * Re-registration: a refused call changes nothing; a PD move moves the
 * PD's use count; a new range keeps the keys. (What the device then does
 * with the MR: tests/emu/device/test_rc.c.)
 */
Test(mem, rereg_mr_rules)
{
	static char buf[2][4096] __attribute__((aligned(4096)));
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf[0], 4096, IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey, rkey;
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(pd2 && mr);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(munmap((char *)p + 4096, 4096), 0);
	lkey = mr->lkey;
	rkey = mr->rkey;

	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EINVAL, "no flags");
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_REMOTE_WRITE), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EINVAL, "remote write without local write");
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD,
				  pd2, p, 8192, 0), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EFAULT, "unmapped range");
	/* none of that moved the MR to pd2 */
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	pd2 = ibv_alloc_pd(ctx);
	cr_assert(pd2);

	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	cr_assert_eq(mr->pd, pd2);
	cr_assert_eq(ibv_dealloc_pd(pd2), EBUSY, "the MR counts on its new PD");
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf[1], 4096, 0), 0);
	cr_assert_eq(mr->addr, (void *)buf[1]);
	cr_assert_eq(mr->lkey, lkey);
	cr_assert_eq(mr->rkey, rkey);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(pd2), 0);
	munmap(p, 4096);
}

Test(mem, mw_types)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	cr_assert(mw1, "%s", strerror(errno));
	cr_assert(mw2, "%s", strerror(errno));
	cr_assert_eq(mw1->type, IBV_MW_TYPE_1);
	cr_assert_eq(mw2->type, IBV_MW_TYPE_2);
	cr_assert_neq(mw1->rkey, mw2->rkey);
	cr_assert_eq(ibv_dealloc_pd(pd), EBUSY);
	cr_assert_eq(ibv_dealloc_mw(mw1), 0);
	cr_assert_eq(ibv_dealloc_mw(mw2), 0);
	errno = 0;
	cr_assert_null(ibv_alloc_mw(pd, (enum ibv_mw_type)3));
}

Test(mem, pd_in_other_context_is_rejected)
{
	struct ibv_context *other = et_open();
	struct ibv_pd *opd = ibv_alloc_pd(other);
	static char buf[64];

	cr_assert(opd);
	/* handles are per context: this PD's handle means nothing in ctx */
	struct ibv_mr *mr = ibv_reg_mr(opd, buf, sizeof(buf), 0);

	cr_assert(mr);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_dealloc_pd(opd), 0);
	cr_assert_eq(ibv_close_device(other), 0);
}

/*
 * A window bound to an MR keeps it registered.  The bind is executed by
 * the device model (a UMR WQE on the QP), so this needs the device model linked in.
 */
Test(mem, dereg_busy_while_mw_bound)
{
	static char buf[4096];
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 7,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)buf, .length = 1024,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_port_attr pa;
	struct ibv_wc wc;
	int n = 0;

	cr_assert(cq && mr && mw);
	qp = ibv_create_qp(pd, &ia);
	cr_assert(qp);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(et_qp_to_rts(qp, qp->qp_num, pa.lid), 0);
	cr_assert_eq(ibv_bind_mw(qp, mw, &bind), 0, "%s", strerror(errno));
	for (int i = 0; i < 5000 && n == 0; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (!n)
			usleep(1000);
	}
	cr_assert_eq(n, 1, "no bind completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_dereg_mr(mr), EBUSY);
	errno = 0;
	cr_assert_eq(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE), IBV_REREG_MR_ERR_CMD);
	cr_assert_eq(errno, EBUSY, "rereg under a bound window");
	cr_assert_eq(ibv_dealloc_mw(mw), 0);
	cr_assert_eq(ibv_dereg_mr(mr), 0);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}
