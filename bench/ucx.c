/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bench/ucx.c - UCX's rc_mlx5 transport as a peer, through its UCT API.
 *
 * One UCT interface on the device's port 1, one RC endpoint connected to
 * itself (its own device and endpoint addresses, exchanged in-process),
 * memory registered through the UCT memory domain. Every WQE is
 * signaled (RC_TX_CQ_MODERATION=0: UCX signals a WQE once its
 * count of unsignaled ones reaches the moderation, so 1 would signal every
 * other one) so that the harness writes one CQE per
 * post for UCX as for everyone else, and flow control is off (RC_FC_ENABLE=n):
 * with no device running, no peer would ever grant credits.
 *
 * The harness must see UCX's send queue and send CQ to play the device.
 * UCX finds them as every mlx5 program does, with mlx5dv_init_obj() (UCX
 * src/uct/ib/mlx5/ib_mlx5.c, uct_ib_mlx5dv_init_obj()); rfbench defines
 * that symbol itself (exported, so the libuct_ib.so that UCX loads binds to
 * it), passes the call on to libmlx5's and keeps what it returned. That
 * relies on nothing of UCX's private layout, only on its use of the
 * public mlx5dv API. Without UCX (built without ucx-uct, or no rc_mlx5 on
 * the device) bench_ucx_open() fails and the report shows "-".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef RFBENCH_UCX
#include <dlfcn.h>
#include <uct/api/uct.h>

/* ---- what UCX's mlx5dv_init_obj() calls returned ------------------------- */

/*
 * Every call is recorded, rfbench's own too (each implementation's QP and
 * DCI, and rdmafast's look at each when bench/bring_up.h connects it),
 * before UCX opens last: room for all of them and UCX's.
 */
enum { SEEN_MAX = 64 };

static struct {
	struct ibv_qp *qp[SEEN_MAX];
	struct mlx5dv_qp dvqp[SEEN_MAX];
	struct ibv_cq *cq[SEEN_MAX];
	struct mlx5dv_cq dvcq[SEEN_MAX];
	unsigned nqp, ncq;
} seen;

int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	static int (*real)(struct mlx5dv_obj *, uint64_t);
	int ret;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "mlx5dv_init_obj");
	if (!real)
		return EOPNOTSUPP;
	ret = real(obj, type);
	if (ret)
		return ret;
	if ((type & MLX5DV_OBJ_QP) && seen.nqp < SEEN_MAX) {
		seen.qp[seen.nqp] = obj->qp.in;
		seen.dvqp[seen.nqp++] = *obj->qp.out;
	}
	if ((type & MLX5DV_OBJ_CQ) && seen.ncq < SEEN_MAX) {
		seen.cq[seen.ncq] = obj->cq.in;
		seen.dvcq[seen.ncq++] = *obj->cq.out;
	}
	return 0;
}

struct bench_ucx {
	uct_component_h comp;
	uct_md_h md;
	ucs_async_context_t *async;
	uct_worker_h worker;
	uct_iface_h iface;
	uct_ep_h ep;
	uct_mem_h memh;
	uct_rkey_bundle_t rkey;
	unsigned polled;		/* events uct_iface_progress() reported */
};

static uct_component_h find_ib(uct_component_h *list, unsigned n)
{
	uct_component_attr_t attr;
	unsigned i;

	for (i = 0; i < n; i++) {
		attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
		if (uct_component_query(list[i], &attr) == UCS_OK && !strcmp(attr.name, "ib"))
			return list[i];
	}
	return NULL;
}

static ucs_status_t open_iface(struct bench_ucx *u, const char *md_name, const char *dev_name)
{
	uct_md_config_t *mdc;
	uct_iface_config_t *ic;
	uct_iface_params_t p;
	ucs_status_t st;

	st = uct_md_config_read(u->comp, NULL, NULL, &mdc);
	if (st != UCS_OK)
		return st;
	st = uct_md_open(u->comp, md_name, mdc, &u->md);
	uct_config_release(mdc);
	if (st != UCS_OK)
		return st;
	st = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &u->async);
	if (st == UCS_OK)
		st = uct_worker_create(u->async, UCS_THREAD_MODE_SINGLE, &u->worker);
	if (st == UCS_OK)
		st = uct_md_iface_config_read(u->md, "rc_mlx5", NULL, NULL, &ic);
	if (st != UCS_OK)
		return st;
	if (uct_config_modify(ic, "RC_TX_CQ_MODERATION", "0") != UCS_OK ||
	    uct_config_modify(ic, "RC_FC_ENABLE", "n") != UCS_OK) {
		uct_config_release(ic);
		return UCS_ERR_INVALID_PARAM;
	}
	memset(&p, 0, sizeof(p));
	p.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
		       UCT_IFACE_PARAM_FIELD_STATS_ROOT | UCT_IFACE_PARAM_FIELD_RX_HEADROOM;
	p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
	p.mode.device.tl_name = "rc_mlx5";
	p.mode.device.dev_name = dev_name;
	st = uct_iface_open(u->md, u->worker, &p, ic, &u->iface);
	uct_config_release(ic);
	return st;
}

/* The endpoint's QP connected to itself: its addresses, given back to it. */
static ucs_status_t connect_self(struct bench_ucx *u)
{
	uct_iface_attr_t attr;
	uct_ep_params_t ep = { .field_mask = UCT_EP_PARAM_FIELD_IFACE, .iface = u->iface };
	uint8_t dev[256], epa[256];
	ucs_status_t st = uct_iface_query(u->iface, &attr);

	if (st != UCS_OK)
		return st;
	if (attr.device_addr_len > sizeof(dev) || attr.ep_addr_len > sizeof(epa) ||
	    !(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP))
		return UCS_ERR_UNSUPPORTED;
	st = uct_ep_create(&ep, &u->ep);
	if (st == UCS_OK)
		st = uct_iface_get_device_address(u->iface, (uct_device_addr_t *)dev);
	if (st == UCS_OK)
		st = uct_ep_get_address(u->ep, (uct_ep_addr_t *)epa);
	if (st == UCS_OK)
		st = uct_ep_connect_to_ep(u->ep, (uct_device_addr_t *)dev, (uct_ep_addr_t *)epa);
	return st;
}

static ucs_status_t reg_mem(struct bench_qp *b, struct bench_ucx *u)
{
	uct_md_attr_t attr;
	uint8_t packed[256];
	ucs_status_t st = uct_md_query(u->md, &attr);

	if (st != UCS_OK)
		return st;
	if (attr.rkey_packed_size > sizeof(packed))
		return UCS_ERR_UNSUPPORTED;
	st = uct_md_mem_reg(u->md, b->buf, BENCH_BUF, UCT_MD_MEM_ACCESS_ALL, &u->memh);
	if (st == UCS_OK)
		st = uct_md_mkey_pack(u->md, u->memh, packed);
	if (st == UCS_OK)
		st = uct_rkey_unpack(u->comp, packed, &u->rkey);
	return st;
}

/* The QP UCX created last and the CQ it sends to, as libmlx5 exported them. */
static int adopt_queues(struct bench_qp *b, unsigned qp0, unsigned cq0)
{
	unsigned i;

	if (seen.nqp <= qp0)
		return -ENOENT;
	b->qp = seen.qp[seen.nqp - 1];
	b->dvqp = seen.dvqp[seen.nqp - 1];
	for (i = cq0; i < seen.ncq; i++)
		if (seen.cq[i] == b->qp->send_cq) {
			b->cq = seen.cq[i];
			b->dvcq = seen.dvcq[i];
			return 0;
		}
	return -ENOENT;
}

int bench_ucx_open(struct bench_qp *b, const char *dev)
{
	char md_name[64], dev_name[80];
	uct_component_h *list;
	unsigned n, qp0 = seen.nqp, cq0 = seen.ncq;
	struct bench_ucx *u;
	ucs_status_t st;

	memset(b, 0, sizeof(*b));
	b->impl = IMPL_UCX;
	b->wqe_bbs = 1;
	snprintf(md_name, sizeof(md_name), "%s", dev ? dev : "mlx5_0");
	snprintf(dev_name, sizeof(dev_name), "%s:1", md_name);
	b->ucx = u = calloc(1, sizeof(*u));
	b->buf = aligned_alloc(4096, BENCH_BUF);
	if (!u || !b->buf)
		return -ENOMEM;
	memset(b->buf, 0x5a, BENCH_BUF);
	b->raddr = (uintptr_t)b->buf + BENCH_BUF / 2;
	if (uct_query_components(&list, &n) != UCS_OK)
		return -ENODEV;
	u->comp = find_ib(list, n);
	st = u->comp ? open_iface(u, md_name, dev_name) : UCS_ERR_NO_DEVICE;
	uct_release_component_list(list);
	if (st == UCS_OK)
		st = connect_self(u);
	if (st == UCS_OK)
		st = reg_mem(b, u);
	if (st != UCS_OK) {
		fprintf(stderr, "rfbench: ucx_rc_mlx5 on %s: %s\n", dev_name,
			ucs_status_string(st));
		return -ENODEV;
	}
	return adopt_queues(b, qp0, cq0);
}

void bench_ucx_close(struct bench_qp *b)
{
	struct bench_ucx *u = b->ucx;

	if (u) {
		if (u->rkey.rkey)
			uct_rkey_release(u->comp, &u->rkey);
		if (u->memh)
			uct_md_mem_dereg(u->md, u->memh);
		if (u->ep)
			uct_ep_destroy(u->ep);
		if (u->iface)
			uct_iface_close(u->iface);
		if (u->worker)
			uct_worker_destroy(u->worker);
		if (u->async)
			ucs_async_context_destroy(u->async);
		if (u->md)
			uct_md_close(u->md);
		free(u);
	}
	free(b->buf);
	b->ucx = NULL;
	b->buf = NULL;
}

unsigned bench_ucx_polled(struct bench_qp *b)
{
	unsigned n = b->ucx->polled;

	b->ucx->polled = 0;
	return n;
}

void bench_ucx_progress(struct bench_qp *b)
{
	b->ucx->polled += uct_iface_progress(b->ucx->iface);
}

/* ---- the measured operations --------------------------------------------- */

#define NOINLINE __attribute__((noinline))

static NOINLINE void ucx_put_zcopy64(struct bench_qp *b, unsigned calls)
{
	uct_ep_h ep = b->ucx->ep;
	uct_iov_t iov = { .buffer = b->buf, .length = 64, .memh = b->ucx->memh,
			  .stride = 0, .count = 1 };
	uct_rkey_t rkey = b->ucx->rkey.rkey;
	uint64_t raddr = b->raddr;

	while (calls--)
		uct_ep_put_zcopy(ep, &iov, 1, raddr, rkey, NULL);
}

static NOINLINE void ucx_put_short8(struct bench_qp *b, unsigned calls)
{
	uct_ep_h ep = b->ucx->ep;
	uct_rkey_t rkey = b->ucx->rkey.rkey;
	uint64_t raddr = b->raddr;
	const uint8_t *data = b->buf;

	while (calls--)
		uct_ep_put_short(ep, data, 8, raddr, rkey);
}

/* 32 bytes of user data: the 8-byte AM header and 24 bytes of payload. */
static NOINLINE void ucx_am_short32(struct bench_qp *b, unsigned calls)
{
	uct_ep_h ep = b->ucx->ep;
	const uint8_t *data = b->buf;
	uint64_t hdr;

	memcpy(&hdr, data, sizeof(hdr));
	while (calls--)
		uct_ep_am_short(ep, 1, hdr, data + 8, 24);
}

/* One progress call retires at most one send CQE: it maps to poll_1 only. */
static NOINLINE void ucx_progress1(struct bench_qp *b, unsigned calls)
{
	uct_iface_h iface = b->ucx->iface;
	unsigned n = 0;

	while (calls--)
		n += uct_iface_progress(iface);
	b->ucx->polled += n;
}

bench_fn bench_ucx_op_fn(enum bench_op op)
{
	switch (op) {
	case OP_POST_WRITE_SGE64:	return ucx_put_zcopy64;
	case OP_POST_WRITE_INLINE8:	return ucx_put_short8;
	case OP_POST_SEND_INLINE32:	return ucx_am_short32;
	case OP_POLL_1:			return ucx_progress1;
	default:			return NULL;
	}
}

const char *bench_ucx_build(void)
{
	/* Debian's libucx0 is configured without --disable-assertions */
	return "UCX " UCT_VERNO_STRING " as packaged (assertions on; ucx_info -v)";
}

#else /* !RFBENCH_UCX: built without UCX's headers */

int bench_ucx_open(struct bench_qp *b, const char *dev)
{
	(void)dev;
	memset(b, 0, sizeof(*b));
	b->impl = IMPL_UCX;
	fprintf(stderr, "rfbench: ucx_rc_mlx5: built without UCX (no ucx-uct.pc)\n");
	return -ENOSYS;
}

void bench_ucx_close(struct bench_qp *b)
{
	(void)b;
}

unsigned bench_ucx_polled(struct bench_qp *b)
{
	(void)b;
	return 0;
}

void bench_ucx_progress(struct bench_qp *b)
{
	(void)b;
}

bench_fn bench_ucx_op_fn(enum bench_op op)
{
	(void)op;
	return NULL;
}

const char *bench_ucx_build(void)
{
	return "UCX: not built in";
}
#endif
