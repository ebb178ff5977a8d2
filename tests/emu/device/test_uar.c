/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * UARs allocated one at a time (MLX5_IB_OBJECT_UAR, kernel/ioctl_uar.c):
 * the dynamic-UAR context libmlx5 gets (no static bfregs), thread domains
 * and parent domains with the dedicated BlueFlame register a TD implies, a
 * QP on it posting through libmlx5 and through rdmafast, and the kernel's
 * answers to raw UAR_OBJ_ALLOC/DESTROY calls and to CREATE_QP/CREATE_CQ
 * naming UARs.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/mlx5_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include <rdmafast/verbs.h>

#include "dev_test.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static uint16_t lid;

static void setup(void)
{
	struct ibv_port_attr pa;

	ctx = et_open();
	pd = ibv_alloc_pd(ctx);
	cr_assert(pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cr_assert(cq, "create_cq: %s", strerror(errno));
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	lid = pa.lid;
}

static void teardown(void)
{
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(uar, .init = setup, .fini = teardown, .timeout = 60);

static struct ibv_qp *rc_qp(struct ibv_pd *on, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp *qp = ibv_create_qp(on, &a);

	cr_assert(qp, "create_qp: %s", strerror(errno));
	if (cap)
		*cap = a.cap;
	return qp;
}

/* a loopback pair of RC QPs, each the other's peer */
static void connect_pair(struct ibv_qp *x, struct ibv_qp *y)
{
	const struct dt_qp_opts o = { .type = IBV_QPT_RC, .timeout = 14,
				      .retry_cnt = 7, .rnr_retry = 7 };

	cr_assert_eq(dt_connect(x, y->qp_num, lid, &o), 0);
	cr_assert_eq(dt_connect(y, x->qp_num, lid, &o), 0);
}

static void *bf_reg(struct ibv_qp *qp)
{
	struct mlx5dv_qp dv = { 0 };
	struct mlx5dv_obj o = { .qp = { .in = qp, .out = &dv } };

	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	return dv.bf.reg;
}

/* the 4 KiB UAR page a register lies in */
static uintptr_t page_of(const void *reg)
{
	return (uintptr_t)reg & ~(uintptr_t)4095;
}

static void wait_wc(uint64_t wr_id)
{
	struct ibv_wc wc;
	long ms = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && ms < 20000) {
		usleep(1000);
		ms++;
	}
	cr_assert_eq(n, 1, "no completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	/* work posted by rdmafast has no wr_id in libmlx5's tables */
	if (wr_id != UINT64_MAX)
		cr_assert_eq(wc.wr_id, wr_id);
}

/* libmlx5 44 takes dynamic UARs: a context of dynamic UARs is what it gets */
Test(uar, context_has_no_static_bfregs)
{
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_DYN_BFREGS };
	struct ibv_qp *a = rc_qp(pd, NULL), *b = rc_qp(pd, NULL);

	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert_eq(dv.max_dynamic_bfregs, 0);	/* none of the old scheme's */
	/* low-latency QPs get a bfreg each, of UARs from UAR_OBJ_ALLOC */
	cr_assert_neq(bf_reg(a), bf_reg(b));
	cr_assert_eq(ibv_destroy_qp(a), 0);
	cr_assert_eq(ibv_destroy_qp(b), 0);
}

/*
 * A QP on a parent domain with a thread domain rings the TD's dedicated
 * BlueFlame register, not one of the QP registers, and its work runs.
 */
Test(uar, td_qp_rings_its_own_bfreg_and_completes)
{
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *pad;
	struct ibv_qp *tq, *peer, *plain;
	static uint8_t src[4096], dst[4096];
	struct ibv_mr *smr, *dmr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;

	cr_assert(td, "alloc_td: %s", strerror(errno));
	pad = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd, .td = td });
	cr_assert(pad, "alloc_parent_domain: %s", strerror(errno));
	tq = rc_qp(pad, NULL);
	peer = rc_qp(pd, NULL);
	plain = rc_qp(pd, NULL);
	cr_assert_neq(bf_reg(tq), bf_reg(peer));
	cr_assert_neq(page_of(bf_reg(tq)), page_of(bf_reg(peer)));
	cr_assert_neq(page_of(bf_reg(tq)), page_of(bf_reg(plain)));
	/* the TD's page is 0x800 + n * bf_reg_size into its UAR */
	cr_assert_geq((uintptr_t)bf_reg(tq) - page_of(bf_reg(tq)), 0x800);

	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	cr_assert(smr && dmr);
	connect_pair(tq, peer);

	memset(src, 0x5a, sizeof(src));
	sge = (struct ibv_sge){ (uintptr_t)src, sizeof(src), smr->lkey };
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = dmr->rkey;
	cr_assert_eq(ibv_post_send(tq, &wr, &bad), 0);
	wait_wc(7);
	cr_assert_eq(memcmp(src, dst, sizeof(dst)), 0);

	/* in use by the parent domain, then free */
	cr_assert_eq(ibv_dealloc_td(td), EBUSY);
	cr_assert_eq(ibv_destroy_qp(tq), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_destroy_qp(plain), 0);
	cr_assert_eq(ibv_dealloc_pd(pad), 0);
	cr_assert_eq(ibv_dealloc_td(td), 0);
	cr_assert_eq(ibv_dereg_mr(smr), 0);
	cr_assert_eq(ibv_dereg_mr(dmr), 0);
}

/*
 * Two thread domains share a UAR, each its own of its two bfregs; CREATE_QP
 * names only the page, so the device takes doorbells on either.
 */
Test(uar, second_bfreg_of_a_uar)
{
	struct ibv_td *t1 = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_td *t2 = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *p1, *p2;
	struct ibv_qp *q1, *q2, *peer;
	static uint8_t src[128], dst[128];
	struct ibv_mr *smr, *dmr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;

	cr_assert(t1 && t2);
	p1 = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd, .td = t1 });
	p2 = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd, .td = t2 });
	cr_assert(p1 && p2);
	q1 = rc_qp(p1, NULL);
	q2 = rc_qp(p2, NULL);
	peer = rc_qp(pd, NULL);
	cr_assert_eq(page_of(bf_reg(q1)), page_of(bf_reg(q2)));
	cr_assert_neq(bf_reg(q1), bf_reg(q2));
	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	cr_assert(smr && dmr);
	/* the QP on the page's second register, whichever of the two it is */
	struct ibv_qp *hi = bf_reg(q1) > bf_reg(q2) ? q1 : q2;

	connect_pair(hi, peer);
	memset(src, 0x77, sizeof(src));
	sge = (struct ibv_sge){ (uintptr_t)src, sizeof(src), smr->lkey };
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = dmr->rkey;
	cr_assert_eq(ibv_post_send(hi, &wr, &bad), 0);
	wait_wc(3);
	cr_assert_eq(memcmp(src, dst, sizeof(dst)), 0);

	cr_assert_eq(ibv_destroy_qp(q1), 0);
	cr_assert_eq(ibv_destroy_qp(q2), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_dealloc_pd(p1), 0);
	cr_assert_eq(ibv_dealloc_pd(p2), 0);
	cr_assert_eq(ibv_dealloc_td(t1), 0);
	cr_assert_eq(ibv_dealloc_td(t2), 0);
	cr_assert_eq(ibv_dereg_mr(smr), 0);
	cr_assert_eq(ibv_dereg_mr(dmr), 0);
}

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* an RDMA WRITE of n bytes of fill from qp, which must complete */
static void write_completes(struct ibv_qp *qp, struct ibv_mr *smr, struct ibv_mr *dmr,
			    size_t n, uint8_t fill, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)smr->addr, (uint32_t)n, smr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad;

	memset(smr->addr, fill, n);
	memset(dmr->addr, 0, n);
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dmr->addr;
	wr.wr.rdma.rkey = dmr->rkey;
	cr_assert_eq(ibv_post_send(qp, &wr, &bad), 0);
	wait_wc(wr_id);
	cr_assert_eq(memcmp(smr->addr, dmr->addr, n), 0);
}

/*
 * A context with thousands of UARs, as one with a thread domain for each
 * of thousands of QPs has (UCX, rdmafast): 4096 TDs are 2048 UAR pages of
 * UAR_OBJ_ALLOC, page ids far past the 256 an 8-bit mmap index reaches,
 * each mapped where the extended offset the kernel gave says
 * (mlx5_entry_to_mmap_offset()), none over another, and a QP on any of
 * them rings the device: the one on the 1500th register, and the last.
 */
Test(uar, thousands_of_thread_domains)
{
	enum { NTD = 4096 };
	struct ibv_td **td = calloc(NTD, sizeof(*td));
	struct ibv_pd **pad = calloc(NTD, sizeof(*pad));
	struct ibv_qp **qp = calloc(NTD, sizeof(*qp));
	uintptr_t *reg = calloc(NTD, sizeof(*reg));
	static uint8_t src[256], dst[256];
	struct ibv_qp *peer[2];
	struct ibv_mr *smr, *dmr;
	unsigned i, pages = 0;

	cr_assert(td && pad && qp && reg);
	for (i = 0; i < NTD; i++) {
		td[i] = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
		cr_assert(td[i], "TD %u: %s", i, strerror(errno));
		pad[i] = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
			.pd = pd, .td = td[i] });
		cr_assert(pad[i], "parent domain %u: %s", i, strerror(errno));
		qp[i] = rc_qp(pad[i], NULL);
		reg[i] = (uintptr_t)bf_reg(qp[i]);
	}
	/* a register each; as many pages as two registers to a page make */
	qsort(reg, NTD, sizeof(*reg), cmp_uintptr);
	for (i = 0; i < NTD; i++) {
		cr_assert(!i || reg[i] != reg[i - 1], "two TDs on register %#lx",
			  (unsigned long)reg[i]);
		pages += !i || page_of((void *)reg[i]) != page_of((void *)reg[i - 1]);
	}
	cr_assert_eq(pages, NTD / 2);
	/* no two mappings show one page: a mark in each stays its own */
	for (i = 0; i < NTD; i++)
		*(volatile uint32_t *)(page_of((void *)reg[i]) + 0x100) = i / 2 + 1;
	for (i = 0; i < NTD; i++)
		cr_assert_eq(*(volatile uint32_t *)(page_of((void *)reg[i]) + 0x100), i / 2 + 1,
			     "register %u's page is another's", i);

	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	cr_assert(smr && dmr);
	peer[0] = rc_qp(pd, NULL);
	peer[1] = rc_qp(pd, NULL);
	connect_pair(qp[1500], peer[0]);
	connect_pair(qp[NTD - 1], peer[1]);
	write_completes(qp[1500], smr, dmr, sizeof(src), 0x15, 1500);
	write_completes(qp[NTD - 1], smr, dmr, sizeof(src), 0x40, NTD - 1);

	cr_assert_eq(ibv_destroy_qp(peer[0]), 0);
	cr_assert_eq(ibv_destroy_qp(peer[1]), 0);
	for (i = 0; i < NTD; i++) {
		cr_assert_eq(ibv_destroy_qp(qp[i]), 0);
		cr_assert_eq(ibv_dealloc_pd(pad[i]), 0);
		cr_assert_eq(ibv_dealloc_td(td[i]), 0);
	}
	cr_assert_eq(ibv_dereg_mr(smr), 0);
	cr_assert_eq(ibv_dereg_mr(dmr), 0);
	free(td);
	free(pad);
	free(qp);
	free(reg);
}

/* rdmafast takes the TD QP over: its doorbell is the dedicated register */
Test(uar, rdmafast_posts_on_a_td_qp)
{
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *pad;
	struct ibv_qp *tq, *peer;
	struct ibv_qp_cap cap;
	struct rf_qp rq;
	static uint8_t src[256], dst[256];
	struct ibv_mr *smr, *dmr;

	cr_assert(td);
	pad = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd, .td = td });
	cr_assert(pad);
	tq = rc_qp(pad, &cap);
	peer = rc_qp(pd, NULL);
	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	cr_assert(smr && dmr);
	connect_pair(tq, peer);

	cr_assert_eq(rf_qp_init_ibv(&rq, tq, &cap, 0), 0);
	cr_assert_eq((void *)rq.sq.bf.reg, bf_reg(tq));
	cr_assert_neq(page_of(rq.sq.bf.reg), page_of(bf_reg(peer)));
	for (unsigned i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)i;
	cr_assert_eq(rf_sq_post_write(&rq.sq, smr->lkey, (uintptr_t)src, sizeof(src),
				      dmr->rkey, (uintptr_t)dst,
				      RF_SEND_SIGNALED | RF_SEND_RING, 9), 0);
	wait_wc(UINT64_MAX);
	cr_assert_eq(memcmp(src, dst, sizeof(dst)), 0);

	rf_qp_fini_ibv(&rq);
	cr_assert_eq(ibv_destroy_qp(tq), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_dealloc_pd(pad), 0);
	cr_assert_eq(ibv_dealloc_td(td), 0);
	cr_assert_eq(ibv_dereg_mr(smr), 0);
	cr_assert_eq(ibv_dereg_mr(dmr), 0);
}

/* mlx5dv_devx_alloc_uar() on a context without DEVX: BF dedicated, NC shared */
Test(uar, devx_alloc_uar_without_devx)
{
	struct mlx5dv_devx_uar *bf = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
	struct mlx5dv_devx_uar *bf2 = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
	struct mlx5dv_devx_uar *nc = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct mlx5dv_devx_uar *nc2 = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);

	cr_assert(bf && bf2 && nc && nc2, "devx_alloc_uar: %s", strerror(errno));
	cr_assert_neq(bf->reg_addr, bf2->reg_addr);
	cr_assert_eq(nc, nc2);		/* libmlx5's one non-cached UAR */
	cr_assert_neq(bf->page_id, nc->page_id);
	cr_assert_geq((uintptr_t)bf->reg_addr - (uintptr_t)bf->base_addr, 0x800);
	/* the mapping is the command fd's, at the offset the kernel gave */
	cr_assert_eq(bf->mmap_off % 4096, 0);
	*(volatile uint64_t *)bf->reg_addr = 0;	/* writable */
	mlx5dv_devx_free_uar(bf);
	mlx5dv_devx_free_uar(bf2);
	mlx5dv_devx_free_uar(nc);
	/* a type rdma-core 44 does not know */
	errno = 0;
	cr_assert_null(mlx5dv_devx_alloc_uar(ctx, 2));
	cr_assert_eq(errno, EOPNOTSUPP);
}

/* ---- raw calls on the command fd --------------------------------------- */

static void call_init(struct et_call *c, uint16_t method)
{
	et_call_init(c, MLX5_IB_OBJECT_UAR, method);
}

static int do_call(struct et_call *c)
{
	return et_call_on(ctx->cmd_fd, c);
}

struct uar_out {
	uint64_t offset;
	uint32_t length, page_id;
	uint32_t handle;
};

/* UAR_OBJ_ALLOC on the command fd fd */
static int uar_alloc_on(int fd, uint64_t type, struct uar_out *o)
{
	struct et_call c;
	int ret;

	call_init(&c, MLX5_IB_METHOD_UAR_OBJ_ALLOC);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0, 0);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, 8, type);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, 8, (uintptr_t)&o->offset);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, 4, (uintptr_t)&o->length);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, 4, (uintptr_t)&o->page_id);
	ret = et_call_on(fd, &c);
	o->handle = (uint32_t)c.attrs[0].data;
	return ret;
}

static int uar_alloc(uint64_t type, struct uar_out *o)
{
	return uar_alloc_on(ctx->cmd_fd, type, o);
}

static int uar_destroy(uint32_t handle)
{
	struct et_call c;

	call_init(&c, MLX5_IB_METHOD_UAR_OBJ_DESTROY);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE, 0, handle);
	return do_call(&c);
}

Test(uar, alloc_destroy_raw)
{
	struct uar_out a, b;
	uint8_t *p;

	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF, &a), 0);
	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, &b), 0);
	cr_assert_eq(a.length, 4096);
	cr_assert_neq(a.page_id, b.page_id);
	cr_assert_neq(a.offset, b.offset);
	/* mlx5_entry_to_mmap_offset(): command 9 and up, the index in the low byte */
	cr_assert_geq(a.offset >> 20, 9);
	p = mmap(NULL, a.length, PROT_WRITE, MAP_SHARED, ctx->cmd_fd, (off_t)a.offset);
	cr_assert_neq(p, MAP_FAILED);
	*(volatile uint64_t *)(p + 0x800) = 0;
	munmap(p, a.length);
	cr_assert_eq(uar_destroy(a.handle), 0);
	cr_assert_eq(uar_destroy(b.handle), 0);
	/* its mmap entry went with it (rdma_user_mmap_entry_remove()) */
	cr_assert_eq(mmap(NULL, a.length, PROT_WRITE, MAP_SHARED, ctx->cmd_fd, (off_t)a.offset),
		     MAP_FAILED);
	cr_assert_eq(errno, EINVAL);
	/* gone: uverbs_get_uobject_from_file() finds nothing */
	cr_assert_eq(uar_destroy(a.handle), ENOENT);
	/* a handle of another object type */
	cr_assert_eq(uar_destroy(pd->handle), EINVAL);
}

/*
 * An output that cannot be flagged written fails the call after the UAR is
 * made (the kernel's handler copies them after marking it made): the UAR
 * is freed, its handle names nothing and its page id is the next one's.
 */
Test(uar, alloc_output_not_written)
{
	struct uar_out o, again;
	struct et_call c;

	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, &again), 0);
	cr_assert_eq(uar_destroy(again.handle), 0);
	for (unsigned out = 2; out <= 4; out++) {	/* OFFSET, LENGTH, PAGE_ID */
		call_init(&c, MLX5_IB_METHOD_UAR_OBJ_ALLOC);
		et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0, 0);
		et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, 8, MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC);
		et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, 8, (uintptr_t)&o.offset);
		et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, 4, (uintptr_t)&o.length);
		et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, 4, (uintptr_t)&o.page_id);
		cr_expect_eq(et_call_ro_from(ctx->cmd_fd, &c.hdr, out), EFAULT, "output %u", out);
		cr_expect_eq(uar_destroy((uint32_t)c.attrs[0].data), ENOENT,
			     "the UAR went with the call (output %u)", out);
	}
	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, &o), 0);
	cr_expect_eq(o.page_id, again.page_id, "its page id free again");
	cr_assert_eq(uar_destroy(o.handle), 0);
}

Test(uar, alloc_refusals)
{
	struct uar_out o;
	struct et_call c;
	uint64_t off;
	uint32_t len, page;

	/* not BF or NC (mlx5's handler), not an int (uverbs_get_const()) */
	cr_assert_eq(uar_alloc(2, &o), EOPNOTSUPP);
	cr_assert_eq(uar_alloc(1ull << 40, &o), EINVAL);
	cr_assert_eq(uar_alloc((uint64_t)-1, &o), EINVAL);

	/* every attribute is mandatory */
	call_init(&c, MLX5_IB_METHOD_UAR_OBJ_ALLOC);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE, 0, 0);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE, 8, 0);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET, 8, (uintptr_t)&off);
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH, 4, (uintptr_t)&len);
	cr_assert_eq(do_call(&c), EINVAL);
	/* a page id of the wrong size */
	et_attr(&c, MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID, 8, (uintptr_t)&page);
	cr_assert_eq(do_call(&c), EINVAL);
	/* an unwritable answer: nothing made */
	c.attrs[3].len = 4;
	c.attrs[3].data = (uintptr_t)"ro";
	c.attrs[4].len = 4;
	cr_assert_eq(do_call(&c), EFAULT);
}

/* the UAR pages the device has left, taken on fd: how many, until ENOMEM */
static unsigned uars_left_on(int fd, struct uar_out *o, unsigned max)
{
	unsigned n = 0;
	int ret = 0;

	while (n < max && !(ret = uar_alloc_on(fd, MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF, &o[n])))
		n++;
	cr_assert_eq(ret, ENOMEM, "UAR %u: %s", n, strerror(ret));
	return n;
}

/*
 * Dynamic UARs are limited by the device's UAR pages (8192 of a
 * ConnectX-6, every context's together), not by an 8-bit mmap index:
 * every one has an offset of its own, command 9 with the page id's bits
 * 8-15 in bits 16-23 (mlx5_entry_to_mmap_offset()), which maps it and no
 * other.  The firmware then refuses (ENOMEM); a context closed with
 * thousands alive gives them all back.
 */
Test(uar, device_runs_out_of_uars)
{
	enum { MAX = 8192 };
	struct uar_out *o = calloc(MAX, sizeof(*o));
	uint8_t **p = calloc(MAX, sizeof(*p));
	struct ibv_context *other;
	unsigned i, n, m, far = 0;

	cr_assert(o && p);
	other = et_open();
	n = uars_left_on(ctx->cmd_fd, o, MAX);
	/* what libmlx5 took at open (its non-cached UARs, its QPs' ones) */
	cr_assert_gt(n, MAX - 16);
	for (i = 0; i < n; i++) {
		uint64_t pg = o[i].offset / 4096;

		cr_assert_eq((pg >> 8) & 0xff, 9, "UAR %u: offset %#llx", i,
			     (unsigned long long)o[i].offset);
		cr_assert_eq((pg & 0xff) | ((pg >> 16) & 0xff) << 8, o[i].page_id);
		far += o[i].page_id >= 256;
		p[i] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
			    (off_t)o[i].offset);
		cr_assert_neq(p[i], MAP_FAILED, "UAR %u: %s", i, strerror(errno));
		*(volatile uint32_t *)(p[i] + 0x100) = i + 1;
	}
	cr_assert_gt(far, MAX - 512);
	for (i = 0; i < n; i++) {
		cr_assert_eq(*(volatile uint32_t *)(p[i] + 0x100), i + 1, "UAR %u", i);
		munmap(p[i], 4096);
	}
	/* past the last page id: no such entry */
	errno = 0;
	cr_assert_eq(mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
			  (off_t)((31ull << 16 | 9 << 8 | 0xff) * 4096)), MAP_FAILED);
	cr_assert_eq(errno, EINVAL);
	/* the device's, not the context's: another has none left either */
	cr_assert_eq(uars_left_on(other->cmd_fd, o + n, 1), 0);
	cr_assert_eq(ibv_close_device(other), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(uar_destroy(o[i].handle), 0);

	/* a context closed with thousands of UARs alive gives them all back */
	n = uars_left_on(ctx->cmd_fd, o, MAX);
	for (i = 0; i < n; i++)
		cr_assert_eq(uar_destroy(o[i].handle), 0);
	other = et_open();
	m = uars_left_on(other->cmd_fd, o, MAX);
	cr_assert_gt(m, MAX - 32);
	for (i = 0; i < m; i += 997) {
		p[i] = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, other->cmd_fd, (off_t)o[i].offset);
		cr_assert_neq(p[i], MAP_FAILED);
		munmap(p[i], 4096);
	}
	cr_assert_eq(ibv_close_device(other), 0);
	cr_assert_eq(uars_left_on(ctx->cmd_fd, o, MAX), n);
	for (i = 0; i < n; i++)
		cr_assert_eq(uar_destroy(o[i].handle), 0);
	free(o);
	free(p);
}

/* a destroyed UAR that nothing rings gives its page id back */
Test(uar, destroyed_free_id_comes_back)
{
	struct uar_out o, p;

	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC, &o), 0);
	cr_assert_eq(uar_destroy(o.handle), 0);
	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF, &p), 0);
	cr_assert_eq(p.page_id, o.page_id);
	cr_assert_eq(uar_destroy(p.handle), 0);
}

/*
 * Destroying UARs that QPs and CQs ring succeeds, as the kernel keeps no
 * count (mmap_obj_cleanup()); their pages go on working and their ids are
 * not given out again meanwhile.
 */
Test(uar, destroy_in_use)
{
	struct ibv_td *td = ibv_alloc_td(ctx, &(struct ibv_td_init_attr){ 0 });
	struct ibv_pd *pad;
	struct ibv_qp *tq, *peer;
	struct mlx5dv_devx_uar *dv;
	static uint8_t src[64], dst[64];
	struct ibv_mr *smr, *dmr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct uar_out o;

	cr_assert(td);
	pad = ibv_alloc_parent_domain(ctx, &(struct ibv_parent_domain_init_attr){
		.pd = pd, .td = td });
	tq = rc_qp(pad, NULL);
	peer = rc_qp(pd, NULL);
	smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	dmr = ibv_reg_mr(pd, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	cr_assert(pad && smr && dmr);
	connect_pair(tq, peer);

	/*
	 * libmlx5 keeps its UARs' handles to itself: destroy every UAR of the
	 * context (the other handles are no UAR: EINVAL).  libmlx5's own
	 * destroy at close then finds none (ENOENT), which it ignores.
	 */
	dv = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	cr_assert(dv);
	unsigned destroyed = 0;

	for (uint32_t h = 0; h < 64; h++) {
		int r = uar_destroy(h);

		cr_assert(r == 0 || r == ENOENT || r == EINVAL, "destroy %u: %d", h, r);
		destroyed += !r;
	}
	cr_assert_geq(destroyed, 2);	/* the NC one and the TD's at least */
	/* the pages still ring: none of their ids is given out again */
	cr_assert_eq(uar_alloc(MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF, &o), 0);
	cr_assert_neq(o.page_id, dv->page_id);

	memset(src, 0x33, sizeof(src));
	sge = (struct ibv_sge){ (uintptr_t)src, sizeof(src), smr->lkey };
	wr.wr_id = 11;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = dmr->rkey;
	cr_assert_eq(ibv_post_send(tq, &wr, &bad), 0);
	wait_wc(11);
	cr_assert_eq(memcmp(src, dst, sizeof(dst)), 0);
	cr_assert_eq(uar_destroy(o.handle), 0);

	cr_assert_eq(ibv_destroy_qp(tq), 0);
	cr_assert_eq(ibv_destroy_qp(peer), 0);
	cr_assert_eq(ibv_dealloc_pd(pad), 0);
	cr_assert_eq(ibv_dealloc_td(td), 0);
	cr_assert_eq(ibv_dereg_mr(smr), 0);
	cr_assert_eq(ibv_dereg_mr(dmr), 0);
}
