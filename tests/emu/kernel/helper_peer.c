/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_peer - a second emulated host for the two-process tests.
 *
 *   helper_peer ident           print "guid lid gid0" of mlx5_0 port 1
 *   helper_peer xrc FILE QPN    open FILE's XRC domain (no O_CREAT), then
 *                               ibv_open_qp() target QP QPN, query it and
 *                               print "state <n> rq_psn <n>"
 *   helper_peer xrc-excl FILE   O_CREAT|O_EXCL on FILE: print the errno
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static struct ibv_context *open_dev(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;

	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "helper: no device\n");
		exit(2);
	}
	return ctx;
}

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, const char *file,
				  int oflags, int *fdp)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.oflags = oflags,
	};

	xa.fd = open(file, O_RDONLY);
	if (xa.fd < 0)
		exit(3);
	*fdp = xa.fd;
	return ibv_open_xrcd(ctx, &xa);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int fd;

	if (argc < 2)
		return 2;
	ctx = open_dev();
	if (!strcmp(argv[1], "ident")) {
		struct ibv_port_attr pa;
		union ibv_gid gid;

		if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, 0, &gid))
			return 4;
		printf("%016llx %u ", (unsigned long long)ibv_get_device_guid(ctx->device),
		       pa.lid);
		for (int i = 0; i < 16; i++)
			printf("%02x", gid.raw[i]);
		printf("\n");
	} else if (!strcmp(argv[1], "xrc") && argc == 4) {
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.qp_num = (uint32_t)strtoul(argv[3], NULL, 0),
			.qp_type = IBV_QPT_XRC_RECV,
		};
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr qa;
		struct ibv_qp *qp;

		oa.xrcd = open_xrcd(ctx, argv[2], 0, &fd);
		if (!oa.xrcd)
			return 5;
		qp = ibv_open_qp(ctx, &oa);
		if (!qp)
			return 6;
		if (ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_RQ_PSN, &ia))
			return 7;
		printf("state %d rq_psn %u qpn %u\n", qa.qp_state, qa.rq_psn, qp->qp_num);
		/* no ibv_destroy_qp(): libmlx5 v44 faults destroying opened QPs */
		if (ibv_close_xrcd(oa.xrcd) != EBUSY)
			return 8;
		close(fd);
	} else if (!strcmp(argv[1], "xrc-excl") && argc == 3) {
		struct ibv_xrcd *x = open_xrcd(ctx, argv[2], O_CREAT | O_EXCL, &fd);

		printf("%d\n", x ? 0 : errno);
		if (x)
			ibv_close_xrcd(x);
		close(fd);
	} else {
		return 2;
	}
	ibv_close_device(ctx);
	return 0;
}
