/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Completion queues and completion channels.
 */
#include <poll.h>

#include "emu_test.h"

static struct ibv_context *ctx;

static void setup(void)
{
	ctx = et_open();
}

static void teardown(void)
{
	cr_assert_eq(ibv_close_device(ctx), 0);
}

TestSuite(cq, .init = setup, .fini = teardown);

Test(cq, create_dv_destroy)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = cq, .out = &dv } };

	cr_assert(cq, "%s", strerror(errno));
	cr_assert_geq(cq->cqe, 100);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(dv.cqe_cnt, 128, "cqe 100 -> ring of 128");
	cr_assert_eq(dv.cqe_size, 64);
	cr_assert(dv.buf && dv.dbrec && dv.cq_uar);
	cr_assert_neq(dv.cqn, 0);
	/* libmlx5 marks every entry invalid; hardware owns nothing yet */
	cr_assert_eq(((uint8_t *)dv.buf)[63] >> 4, 0xf);
	/* the CQ doorbell lives in UAR 0, which the emulator mapped */
	*(volatile uint64_t *)((char *)dv.cq_uar + 0x20) = 0;
	struct ibv_wc wc;

	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

Test(cq, distinct_cqns)
{
	struct ibv_cq *a = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *b = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct mlx5dv_cq da = { .comp_mask = 0 }, db = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = a, .out = &da } };

	cr_assert(a && b);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	o.cq.in = b;
	o.cq.out = &db;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	cr_assert_neq(da.cqn, db.cqn);
	cr_assert_neq(da.buf, db.buf);
	ibv_destroy_cq(a);
	ibv_destroy_cq(b);
}

Test(cq, bad_arguments)
{
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 1, NULL, NULL, 99));
	cr_assert_eq(errno, EINVAL, "comp_vector beyond num_comp_vectors");
	errno = 0;
	cr_assert_null(ibv_create_cq(ctx, 1 << 23, NULL, NULL, 0));
}

Test(cq, create_ex)
{
	struct ibv_cq_init_attr_ex ia = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &ia);

	cr_assert(cq, "%s", strerror(errno));
	cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

Test(cq, resize)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 15, NULL, NULL, 0);
	struct mlx5dv_cq dv = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .in = cq, .out = &dv } };
	struct ibv_wc wc;

	cr_assert(cq);
	cr_assert_eq(ibv_resize_cq(cq, 200), 0, "%s", strerror(errno));
	cr_assert_geq(cq->cqe, 200);
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
	cr_assert_eq(dv.cqe_cnt, 256);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_assert_eq(ibv_resize_cq(cq, 20), 0);
	cr_assert_eq(ibv_poll_cq(cq, 1, &wc), 0);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}

Test(cq, channel)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *evcq = NULL;
	struct pollfd p;
	void *evctx = NULL;

	cr_assert(ch, "%s", strerror(errno));
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	cr_assert(cq);
	cr_assert_eq(cq->cq_context, (void *)0x1234);
	cr_assert_eq(ibv_req_notify_cq(cq, 0), 0);

	/* nothing completed: the channel fd is not readable */
	p.fd = ch->fd;
	p.events = POLLIN;
	cr_assert_eq(poll(&p, 1, 10), 0);
	cr_assert_eq(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
	errno = 0;
	cr_assert_eq(ibv_get_cq_event(ch, &evcq, &evctx), -1);
	cr_assert_eq(errno, EAGAIN);

	/* a channel in use cannot be destroyed */
	cr_assert_eq(ibv_destroy_comp_channel(ch), EBUSY);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	cr_assert_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(cq, channel_leaked_at_close)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);

	cr_assert(ch);
	cr_assert(ibv_create_cq(ctx, 16, NULL, ch, 0));
	/* teardown closes the device with both alive */
}

/*
 * ibv_modify_cq(): the moderation caps QUERY_DEVICE advertises are what
 * mlx5_ib_modify_cq() takes; a period beyond them is EINVAL.
 */
Test(cq, modify_cq_moderation)
{
	struct ibv_device_attr_ex ex;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_modify_cq_attr m = { .attr_mask = IBV_CQ_ATTR_MODERATE };

	cr_assert(cq);
	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	cr_assert_eq(ex.cq_mod_caps.max_cq_count, 65535);
	cr_assert_eq(ex.cq_mod_caps.max_cq_period, 4095);
	m.moderate.cq_count = ex.cq_mod_caps.max_cq_count;
	m.moderate.cq_period = ex.cq_mod_caps.max_cq_period;
	cr_assert_eq(ibv_modify_cq(cq, &m), 0);
	m.moderate.cq_period++;
	cr_assert_eq(ibv_modify_cq(cq, &m), EINVAL);
	m.moderate = (struct ibv_moderate_cq){ 0, 0 };	/* moderation off */
	cr_assert_eq(ibv_modify_cq(cq, &m), 0);
	m.attr_mask = 0;				/* nothing to modify */
	cr_assert_eq(ibv_modify_cq(cq, &m), EINVAL);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
}
