/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Device discovery, queries, host identity and the async event fd.
 */
#include <poll.h>

#include "emu_test.h"

Test(device, list_and_identity)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	cr_assert(list);
	cr_assert_geq(n, 1);
	cr_assert_str_eq(ibv_get_device_name(list[0]), "mlx5_0");
	cr_assert_neq(ibv_get_device_guid(list[0]), 0);
	cr_assert(mlx5dv_is_supported(list[0]), "libmlx5 did not claim mlx5_0");
	ibv_free_device_list(list);
}

Test(device, query_device_and_ex)
{
	struct ibv_context *ctx = et_open();
	struct ibv_device_attr attr;
	struct ibv_device_attr_ex ex;
	struct mlx5dv_context dv = { .comp_mask = 0 };

	cr_assert_eq(ibv_query_device(ctx, &attr), 0);
	cr_assert_eq(attr.vendor_id, 0x02c9);
	cr_assert_eq(attr.vendor_part_id, 4123);
	cr_assert_eq(attr.phys_port_cnt, 1);
	cr_assert_str_eq(attr.fw_ver, "20.37.1014");	/* the ConnectX-6 profile */
	cr_assert(attr.device_cap_flags & IBV_DEVICE_XRC);
	cr_assert_eq(attr.node_guid, ibv_get_device_guid(ctx->device));

	cr_assert_eq(ibv_query_device_ex(ctx, NULL, &ex), 0);
	cr_assert_eq(ex.orig_attr.max_qp, attr.max_qp);
	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert_eq(ibv_close_device(ctx), 0);
}

Test(device, query_port_gid_pkey)
{
	struct ibv_context *ctx = et_open();
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint16_t pkey;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(pa.state, IBV_PORT_ACTIVE);
	cr_assert_eq(pa.link_layer, IBV_LINK_LAYER_INFINIBAND);
	cr_assert_neq(pa.lid, 0);
	cr_assert_eq(pa.gid_tbl_len, 8);
	cr_assert_eq(pa.pkey_tbl_len, 128);
	/* port 2 does not exist */
	cr_assert_neq(ibv_query_port(ctx, 2, &pa), 0);

	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	cr_assert_eq(gid.raw[0], 0xfe);
	cr_assert_eq(gid.raw[1], 0x80);
	/* the interface id is the port GUID, port 1's the node GUID (mlx5) */
	cr_assert_eq(gid.global.interface_id, ibv_get_device_guid(ctx->device));
	cr_assert_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	cr_assert_eq(pkey, htobe16(0xffff));
	/* the rest of both tables exists and is empty, as on hardware */
	cr_assert_eq(ibv_query_gid(ctx, 1, 7, &gid), 0);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(gid.raw[i], 0);
	cr_assert_eq(ibv_query_pkey(ctx, 1, 127, &pkey), 0);
	cr_assert_eq(pkey, 0);
	ibv_close_device(ctx);
}

/* Another process is another host: different GUID, LID and GID. */
Test(device, second_process_is_another_host)
{
	struct ibv_context *ctx = et_open();
	char out[256], mine[256];
	char *argv[] = { "helper_peer", "ident", NULL };
	struct ibv_port_attr pa;
	union ibv_gid gid;
	int n;

	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_assert_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	n = snprintf(mine, sizeof(mine), "%016llx %u ",
		     (unsigned long long)ibv_get_device_guid(ctx->device), pa.lid);
	for (int i = 0; i < 16; i++)
		n += snprintf(mine + n, sizeof(mine) - (size_t)n, "%02x", gid.raw[i]);

	cr_assert_eq(et_run_helper(out, sizeof(out), 20, argv), 0);
	char guid[32], g[64];
	unsigned lid;

	cr_assert_eq(sscanf(out, "%31s %u %63s", guid, &lid, g), 3, "helper said %s", out);
	cr_assert_neq(lid, pa.lid);
	cr_assert_neq(lid, 0);
	cr_assert(strncmp(mine, guid, 16), "same GUID %s", guid);
	cr_assert(!strstr(mine, g), "same GID %s", g);
	ibv_close_device(ctx);
}

Test(device, async_fd_nonblocking)
{
	struct ibv_context *ctx = et_open();
	struct ibv_async_event ev;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	int fl = fcntl(ctx->async_fd, F_GETFL);

	cr_assert_eq(poll(&p, 1, 0), 0, "no event yet");
	cr_assert_eq(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	cr_assert_eq(ibv_get_async_event(ctx, &ev), -1);
	cr_assert_eq(errno, EAGAIN);
	ibv_close_device(ctx);
}

Test(device, open_many_contexts)
{
	struct ibv_context *c[4];

	for (int i = 0; i < 4; i++)
		c[i] = et_open();
	for (int i = 0; i < 4; i++) {
		struct ibv_pd *pd = ibv_alloc_pd(c[i]);

		cr_assert(pd);
		/* closing with a live PD releases it too */
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(ibv_close_device(c[i]), 0);
}

/*
 * CQE compression: the caps a ConnectX-6 reports, and create_cq_user()'s
 * checks of the request: one format is accepted, two are EINVAL; libmlx5
 * itself refuses a format outside the caps.
 */
Test(device, cqe_compression_caps_and_create)
{
	struct ibv_context *ctx = et_open();
	struct mlx5dv_context dv = { .comp_mask = MLX5DV_CONTEXT_MASK_CQE_COMPRESION };
	struct ibv_cq_init_attr_ex ax = { .cqe = 16 };
	struct mlx5dv_cq_init_attr dx = { .comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE };
	struct ibv_cq_ex *cq;
	const uint8_t one[] = { MLX5DV_CQE_RES_FORMAT_HASH, MLX5DV_CQE_RES_FORMAT_CSUM,
				MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX };

	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert(dv.comp_mask & MLX5DV_CONTEXT_MASK_CQE_COMPRESION);
	cr_assert_eq(dv.cqe_comp_caps.max_num, 64);
	cr_assert_eq(dv.cqe_comp_caps.supported_format,
		     MLX5DV_CQE_RES_FORMAT_HASH | MLX5DV_CQE_RES_FORMAT_CSUM |
		     MLX5DV_CQE_RES_FORMAT_CSUM_STRIDX);
	/*
	 * on 128-byte CQEs too, which the kernel takes only with this flag's
	 * cap (cqe_compression_128)
	 */
	cr_assert(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_128B_COMP);
	for (size_t i = 0; i < 2 * sizeof(one); i++) {
		dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE |
			       (i < sizeof(one) ? 0 : MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE);
		dx.cqe_size = 128;
		dx.cqe_comp_res_format = one[i % sizeof(one)];
		cq = mlx5dv_create_cq(ctx, &ax, &dx);
		cr_assert_not_null(cq, "format %u: %s", dx.cqe_comp_res_format, strerror(errno));
		cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
	dx.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
	dx.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH | MLX5DV_CQE_RES_FORMAT_CSUM;
	errno = 0;
	cr_assert_null(mlx5dv_create_cq(ctx, &ax, &dx));
	cr_assert_eq(errno, EINVAL, "two formats: %s", strerror(errno));
	cr_assert_eq(ibv_close_device(ctx), 0);
}

/*
 * Padded CQEs: a ConnectX-6 has cqe_128_always, which the kernel reports
 * as CQE_128B_PAD; libmlx5 then asks for padding on a CQ of 128-byte CQEs
 * and refuses it on 64-byte ones itself (EINVAL; the kernel's own answer
 * is test_input.c's). A padded CQ shows libmlx5 a CQE size of 128, and
 * compression may be asked with it.
 */
Test(device, cqe_128b_padding)
{
	struct ibv_context *ctx = et_open();
	struct mlx5dv_context dv = { .comp_mask = 0 };
	struct ibv_cq_init_attr_ex ax = { .cqe = 16 };
	struct mlx5dv_cq_init_attr dx = {
		.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_FLAGS | MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE,
		.flags = MLX5DV_CQ_INIT_ATTR_FLAGS_CQE_PAD, .cqe_size = 128,
	};
	struct mlx5dv_cq dcq = { .comp_mask = 0 };
	struct mlx5dv_obj o = { .cq = { .out = &dcq } };
	struct ibv_cq_ex *cq;

	cr_assert_eq(mlx5dv_query_device(ctx, &dv), 0);
	cr_assert(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_128B_PAD);
	for (int zip = 0; zip < 2; zip++) {
		if (zip) {
			dx.comp_mask |= MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
			dx.cqe_comp_res_format = MLX5DV_CQE_RES_FORMAT_HASH;
		}
		cq = mlx5dv_create_cq(ctx, &ax, &dx);
		cr_assert_not_null(cq, "zip %d: %s", zip, strerror(errno));
		o.cq.in = ibv_cq_ex_to_cq(cq);
		cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_CQ), 0);
		cr_assert_eq(dcq.cqe_size, 128);
		cr_assert_eq(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
	}
	dx.comp_mask &= ~(uint64_t)MLX5DV_CQ_INIT_ATTR_MASK_COMPRESSED_CQE;
	dx.cqe_size = 64;
	errno = 0;
	cr_assert_null(mlx5dv_create_cq(ctx, &ax, &dx));
	cr_assert_eq(errno, EINVAL, "padding 64-byte CQEs: %s", strerror(errno));
	cr_assert_eq(ibv_close_device(ctx), 0);
}
