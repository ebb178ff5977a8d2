/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ioctl.c - the uverbs ioctl ABI: RDMA_VERBS_IOCTL on the command fd.
 *
 * A call is struct ib_uverbs_ioctl_hdr (object, method, driver id) followed
 * by num_attrs struct ib_uverbs_attr (<rdma/rdma_user_ioctl_cmds.h>).  An
 * attribute carries up to 8 bytes inline in .data, or a user pointer and a
 * length.  The checks, and their order and errnos, are those of the kernel's
 * drivers/infiniband/core/uverbs_ioctl.c (ib_uverbs_ioctl(),
 * ib_uverbs_cmd_verbs(), uverbs_process_attr()):
 *
 *   header unreadable                          EFAULT
 *   length above a page or not num_attrs' size EINVAL
 *   reserved1/reserved2 set                    EPROTONOSUPPORT
 *   driver_id not mlx5                         EINVAL
 *   object/method unknown                      EPROTONOSUPPORT
 *   attributes unreadable                      EFAULT
 *   unknown attribute flagged MANDATORY        EPROTONOSUPPORT (else ignored)
 *   the same attribute twice                   EINVAL
 *   length outside the attribute's bounds      EINVAL (non-zero bytes past a
 *                                              structure that may grow:
 *                                              EOPNOTSUPP)
 *   attr_data.reserved set                     EINVAL
 *   a mandatory attribute missing              EINVAL
 *
 * EPROTONOSUPPORT is how libibverbs learns that one method is absent and
 * takes its write() fallback (rdma-core libibverbs/cmd_fallback.c), so it is
 * answered for exactly what a kernel without the method answers it for:
 * only by the framework, never by a handler.  Every user pointer is reached
 * through user_mem.c.  The methods are in ioctl_device.c, ioctl_create.c,
 * ioctl_destroy.c, ioctl_dm.c, ioctl_uar.c, import.c, devx.c, odp.c,
 * pp.c and flow_matcher.c.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#include "internal.h"

static const struct emu_ioc_method *find_method(uint16_t object, uint16_t method)
{
	static const struct {
		const struct emu_ioc_method	*m;
		const size_t			*n;
	} tables[] = {
		{ emu_ioc_device_methods, &emu_ioc_device_methods_count },
		{ emu_ioc_destroy_methods, &emu_ioc_destroy_methods_count },
		{ emu_ioc_dm_methods, &emu_ioc_dm_methods_count },
		{ emu_ioc_create_methods, &emu_ioc_create_methods_count },
		{ emu_ioc_uar_methods, &emu_ioc_uar_methods_count },
		{ emu_ioc_import_methods, &emu_ioc_import_methods_count },
		{ emu_ioc_devx_methods, &emu_ioc_devx_methods_count },
		{ emu_ioc_odp_methods, &emu_ioc_odp_methods_count },
		{ emu_ioc_pp_methods, &emu_ioc_pp_methods_count },
		{ emu_ioc_flow_matcher_methods, &emu_ioc_flow_matcher_methods_count },
		{ emu_ioc_flow_action_methods, &emu_ioc_flow_action_methods_count },
	};

	for (size_t t = 0; t < EMU_ARRAY_SIZE(tables); t++)
		for (size_t i = 0; i < *tables[t].n; i++)
			if (tables[t].m[i].object == object &&
			    tables[t].m[i].method == method)
				return &tables[t].m[i];
	return NULL;
}

static const struct emu_ioc_spec *find_spec(const struct emu_ioc_method *m,
					    uint16_t id, unsigned *index)
{
	for (unsigned i = 0; i < EMU_IOC_MAX_ATTRS && m->attrs[i].kind; i++)
		if (m->attrs[i].id == id) {
			*index = i;
			return &m->attrs[i];
		}
	return NULL;
}

/* the bytes of an attribute from `from` to its end are zeros (or unreadable: no) */
static bool cleared_beyond(const struct ib_uverbs_attr *a, size_t from)
{
	uint8_t buf[256];

	if (a->len <= sizeof(a->data)) {
		const uint8_t *inl = (const uint8_t *)&a->data;

		for (size_t i = from; i < a->len; i++)
			if (inl[i])
				return false;
		return true;
	}
	for (size_t off = from; off < a->len; off += sizeof(buf)) {
		size_t n = a->len - off < sizeof(buf) ? a->len - off : sizeof(buf);

		if (emu_copy_from_user(buf, a->data + off, n))
			return false;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return false;
	}
	return true;
}

/* uverbs_process_attr(); objects and descriptors are made by the method */
static int check_attr(const struct emu_ioc_spec *s, const struct ib_uverbs_attr *a)
{
	bool trailing = s->flags & EMU_IOC_ZERO_TRAILING;

	if (s->kind == EMU_IOC_IDR || s->kind == EMU_IOC_FD || s->kind == EMU_IOC_NEW)
		return a->attr_data.reserved || a->len ? EINVAL : 0;

	if (s->kind == EMU_IOC_PTR_IN && a->len > s->max_len && trailing &&
	    !cleared_beyond(a, s->max_len))
		return EOPNOTSUPP;
	if (a->len < s->min_len || (!trailing && a->len > s->max_len))
		return EINVAL;
	if (a->attr_data.reserved)
		return EINVAL;
	return 0;
}

int emu_ioctl_dispatch(struct emu_ctx *ctx, uint64_t uhdr)
{
	struct ib_uverbs_ioctl_hdr hdr;
	struct emu_ioc b = { .ctx = ctx };
	struct ib_uverbs_attr *attrs = NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int ret;

	emu_clock_tick_locked();	/* the clock pages, as every write() command */
	if (emu_copy_from_user(&hdr, uhdr, sizeof(hdr)))
		return EFAULT;
	if (hdr.length > page ||
	    hdr.length != sizeof(hdr) + (size_t)hdr.num_attrs * sizeof(*attrs))
		return EINVAL;
	if (hdr.reserved1 || hdr.reserved2)
		return EPROTONOSUPPORT;
	if (hdr.driver_id != RDMA_DRIVER_MLX5)
		return EINVAL;
	b.m = find_method(hdr.object_id, hdr.method_id);
	emu_dbg("ioctl object %#x method %#x, %u attrs%s\n", hdr.object_id,
		hdr.method_id, hdr.num_attrs, b.m ? "" : ": no such method");
	if (!b.m)
		return EPROTONOSUPPORT;

	b.uattrs = uhdr + sizeof(hdr);
	attrs = calloc(hdr.num_attrs + 1u, sizeof(*attrs));
	if (!attrs)
		return ENOMEM;
	if (emu_copy_from_user(attrs, b.uattrs, hdr.num_attrs * sizeof(*attrs))) {
		ret = EFAULT;
		goto out;
	}
	b.attrs = attrs;
	for (unsigned i = 0; i < EMU_IOC_MAX_ATTRS; i++)
		b.at[i] = -1;
	for (unsigned i = 0; i < hdr.num_attrs; i++) {
		unsigned k;
		const struct emu_ioc_spec *s = find_spec(b.m, attrs[i].attr_id, &k);

		if (!s) {
			if (attrs[i].flags & UVERBS_ATTR_F_MANDATORY) {
				ret = EPROTONOSUPPORT;
				goto out;
			}
			continue;	/* an optional attribute this kernel ignores */
		}
		if (b.at[k] >= 0) {
			ret = EINVAL;
			goto out;
		}
		ret = check_attr(s, &attrs[i]);
		if (ret)
			goto out;
		b.at[k] = (int16_t)i;
	}
	for (unsigned k = 0; k < EMU_IOC_MAX_ATTRS && b.m->attrs[k].kind; k++)
		if ((b.m->attrs[k].flags & EMU_IOC_MANDATORY) && b.at[k] < 0) {
			ret = EINVAL;
			goto out;
		}

	if (ctx->inherited && !emu_inherited_method_served(hdr.object_id, hdr.method_id)) {
		ret = EIO;	/* needs the parent's device (fork.c) */
		goto out;
	}
	ret = b.m->fn(&b);
	/* drivers write UHW_OUT themselves; the core flags it for them */
	if (!ret && b.m->udata && emu_ioc_get(&b, UVERBS_ATTR_UHW_OUT))
		ret = emu_ioc_output_written(&b, UVERBS_ATTR_UHW_OUT);
	/* bundle_destroy() without commit: a new object is aborted */
	if (ret && b.made)
		emu_obj_destroy_locked(b.made);
	/* only the framework may say "method not supported" */
	if (ret == EPROTONOSUPPORT)
		ret = EINVAL;
out:
	free(attrs);
	return ret;
}

/* ---- what the methods use ---------------------------------------------- */

const struct ib_uverbs_attr *emu_ioc_get(const struct emu_ioc *b, uint16_t id)
{
	unsigned k;

	if (!find_spec(b->m, id, &k) || b->at[k] < 0)
		return NULL;
	return &b->attrs[b->at[k]];
}

int emu_ioc_copy_from(const struct emu_ioc *b, uint16_t id, void *to, size_t size)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return ENOENT;
	if (size < a->len)
		return EINVAL;
	if (a->len <= sizeof(a->data)) {
		memcpy(to, &a->data, a->len);
		return 0;
	}
	return emu_copy_from_user(to, a->data, a->len) ? EFAULT : 0;
}

int emu_ioc_dup(const struct emu_ioc *b, uint16_t id, void **buf, size_t *len)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);
	int ret;

	*len = a ? a->len : 0;
	*buf = calloc(1, *len + 8);
	if (!*buf)
		return ENOMEM;
	if (!a)
		return 0;
	ret = emu_ioc_copy_from(b, id, *buf, *len);
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	return ret;
}

int emu_ioc_get_const(const struct emu_ioc *b, uint16_t id, uint64_t max,
		      uint64_t *val)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return ENOENT;
	/* _uverbs_get_const(): the value is an s64 within the type's range */
	if (a->data_s64 < 0 || a->data > max)
		return EINVAL;
	*val = a->data;
	return 0;
}

int emu_ioc_output_written(const struct emu_ioc *b, uint16_t id)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);
	uint16_t flags;

	if (!a)
		return ENOENT;
	flags = a->flags | UVERBS_ATTR_F_VALID_OUTPUT;
	return emu_copy_to_user(b->uattrs + (uint64_t)(a - b->attrs) * sizeof(*a) +
				offsetof(struct ib_uverbs_attr, flags),
				&flags, sizeof(flags)) ? EFAULT : 0;
}

int emu_ioc_copy_to(const struct emu_ioc *b, uint16_t id, const void *from,
		    size_t size)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return ENOENT;
	if (emu_copy_to_user(a->data, from, size < a->len ? size : a->len))
		return EFAULT;
	return emu_ioc_output_written(b, id);
}

int emu_ioc_copy_to_struct_or_zero(const struct emu_ioc *b, uint16_t id,
				   const void *from, size_t size)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return ENOENT;
	if (size < a->len) {
		void *zeros = calloc(1, a->len - size);
		int ret = zeros ? emu_copy_to_user(a->data + size, zeros, a->len - size) : ENOMEM;

		free(zeros);
		if (ret)
			return ret == ENOMEM ? ENOMEM : EFAULT;
	}
	return emu_ioc_copy_to(b, id, from, size);
}

int emu_ioc_put_new(const struct emu_ioc *b, uint16_t id, int64_t v)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return ENOENT;
	return emu_copy_to_user(b->uattrs + (uint64_t)(a - b->attrs) * sizeof(*a) +
				offsetof(struct ib_uverbs_attr, data),
				&v, sizeof(v)) ? EFAULT : 0;
}

int emu_ioc_put_new_obj(struct emu_ioc *b, uint16_t id, struct emu_obj *obj)
{
	b->made = obj;
	return emu_ioc_put_new(b, id, obj->handle);
}

int emu_ioc_out_check(const struct emu_ioc *b, uint16_t id, size_t len)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a)
		return 0;
	return emu_umem_check(a->data, len < a->len ? len : a->len, true);
}

int emu_ioc_get_flags(const struct emu_ioc *b, uint16_t id, uint64_t *flags)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);

	if (!a) {
		*flags = 0;	/* a missing attribute means no flags */
		return 0;
	}
	if (a->len == 8)
		*flags = a->data;
	else if (a->len == 4)
		*flags = (uint32_t)a->data;
	else
		return EINVAL;
	return 0;
}

/* uverbs_get_uobject_from_file() */
void *emu_ioc_get_obj(const struct emu_ioc *b, uint16_t id, enum emu_obj_type type,
		      int *err)
{
	const struct ib_uverbs_attr *a = emu_ioc_get(b, id);
	struct emu_ctx *ctx = b->ctx;

	*err = 0;
	if (!a)
		*err = ENOENT;		/* uverbs_attr_get_obj() of an absent one */
	else if (!ctx->have_context || a->data_s64 < 0)
		*err = EINVAL;		/* lookup_get_idr_uobject(): a negative id */
	else if (a->data >= ctx->nobjs || !ctx->objs[a->data] ||
		 ctx->objs[a->data]->detached || ctx->objs[a->data]->inherited)
		*err = ENOENT;
	else if (ctx->objs[a->data]->type != type)
		*err = EINVAL;
	return *err ? NULL : ctx->objs[a->data];
}
