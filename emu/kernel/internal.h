/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * internal.h - declarations private to the fake uverbs kernel (this
 * folder).  The layers above need only kernel.h.
 */
#ifndef RDMAFAST_EMU_INTERNAL_H
#define RDMAFAST_EMU_INTERNAL_H

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "kernel.h"

/* ---- objects.c: contexts, handles, numbers ----------------------------- */
void emu_ctx_destroy_locked(struct emu_ctx *ctx);	/* drops the lock for fini */
void emu_fd_watch(int fd, bool on);	/* event fds whose close() matters */
void emu_fd_set_cmd(int fd, bool on);	/* fd is (no longer) a command fd */

/* ---- import.c: several descriptors, several async files ---------------- */
/* fd of ctx closed: true if it was the last, and ctx must go */
bool emu_ctx_fd_close_locked(struct emu_ctx *ctx, int fd);
bool emu_ctx_has_fd_locked(const struct emu_ctx *ctx, int fd);
/* ASYNC_EVENT_ALLOC beyond the first; a close() of one; all at teardown */
int emu_async_more_locked(struct emu_ctx *ctx, int *user_fd);
bool emu_async_more_closed_locked(struct emu_ctx *ctx, int fd);
bool emu_async_is_ctx_locked(const struct emu_ctx *ctx, int fd);
void emu_ctx_import_fini_locked(struct emu_ctx *ctx);

void *emu_obj_alloc(struct emu_ctx *ctx, enum emu_obj_type type, size_t size,
		    uint64_t user_handle);
void emu_obj_free_locked(struct emu_obj *obj);
/* an object of any type, as its destroy command would (objects.c) */
void emu_obj_destroy_locked(struct emu_obj *obj);
void *emu_obj_get_locked(struct emu_ctx *ctx, uint32_t handle,
			 enum emu_obj_type type);

int emu_num_alloc_locked(enum emu_num_kind kind, void *obj, uint32_t *num);
void emu_num_free_locked(enum emu_num_kind kind, uint32_t num);
/*
 * 2^log_n consecutive numbers, aligned to their count, none in use: held
 * (no object is given one) until released; the first in *first.  ENOSPC
 * when no such range is free, ENOMEM.
 */
int emu_num_hold_range_locked(enum emu_num_kind kind, unsigned log_n, uint32_t *first);
void emu_num_release_range_locked(enum emu_num_kind kind, uint32_t first, unsigned log_n);

struct emu_channel *emu_channel_by_fd_locked(struct emu_ctx *ctx, int fd);

/* ---- clock.c: the core clock and clock info pages of a new context ----- */
bool emu_clock_pages_offered(void);
void emu_clock_ctx_init_locked(struct emu_ctx *ctx);

/* ---- event.c ----------------------------------------------------------- */
int emu_evq_open(struct emu_evq *q);
void emu_evq_close(struct emu_evq *q);
/*
 * Remove the events still queued (unread) for one object and return how
 * many; the kernel reports only events the process has read.
 */
unsigned emu_evq_reclaim_comp(struct emu_evq *q, uint64_t user_handle);
unsigned emu_evq_reclaim_async(struct emu_evq *q, uint64_t user_handle);

/* ---- command handlers -------------------------------------------------- */
/*
 * A handler sees the core request (in/in_len, already copied) and the driver
 * (mlx5) request after it, and fills the core and driver responses.  It
 * returns 0 or a positive errno.  The lock is held.
 */
struct emu_cmd {
	struct emu_ctx	*ctx;
	const void	*in;		/* core request, after the header(s) */
	size_t		in_len;
	const void	*drv_in;	/* mlx5 request */
	size_t		drv_in_len;
	void		*out;		/* core response (zeroed local buffer) */
	size_t		out_len;
	void		*drv_out;	/* mlx5 response (zeroed local buffer) */
	size_t		drv_out_len;
	bool		extended;
};

int emu_cmd_get_context(struct emu_cmd *c);
int emu_cmd_query_device(struct emu_cmd *c);
int emu_cmd_query_device_ex(struct emu_cmd *c);
int emu_cmd_query_port(struct emu_cmd *c);

int emu_cmd_alloc_pd(struct emu_cmd *c);
int emu_cmd_dealloc_pd(struct emu_cmd *c);
int emu_cmd_reg_mr(struct emu_cmd *c);
int emu_cmd_rereg_mr(struct emu_cmd *c);
int emu_cmd_dereg_mr(struct emu_cmd *c);
int emu_cmd_alloc_mw(struct emu_cmd *c);
int emu_cmd_dealloc_mw(struct emu_cmd *c);

int emu_cmd_create_ah(struct emu_cmd *c);
int emu_cmd_destroy_ah(struct emu_cmd *c);

int emu_cmd_create_comp_channel(struct emu_cmd *c);
int emu_cmd_create_cq(struct emu_cmd *c);
int emu_cmd_create_cq_ex(struct emu_cmd *c);
int emu_cmd_resize_cq(struct emu_cmd *c);
int emu_cmd_modify_cq(struct emu_cmd *c);
int emu_cmd_destroy_cq(struct emu_cmd *c);

int emu_cmd_create_qp(struct emu_cmd *c);
int emu_cmd_create_qp_ex(struct emu_cmd *c);
int emu_cmd_open_qp(struct emu_cmd *c);
int emu_cmd_query_qp(struct emu_cmd *c);
int emu_cmd_modify_qp(struct emu_cmd *c);
int emu_cmd_modify_qp_ex(struct emu_cmd *c);
int emu_cmd_destroy_qp(struct emu_cmd *c);
int emu_cmd_attach_mcast(struct emu_cmd *c);
int emu_cmd_detach_mcast(struct emu_cmd *c);

int emu_cmd_create_srq(struct emu_cmd *c);
int emu_cmd_create_xsrq(struct emu_cmd *c);
int emu_cmd_modify_srq(struct emu_cmd *c);
int emu_cmd_query_srq(struct emu_cmd *c);
int emu_cmd_destroy_srq(struct emu_cmd *c);

int emu_cmd_create_wq(struct emu_cmd *c);
int emu_cmd_modify_wq(struct emu_cmd *c);
int emu_cmd_destroy_wq(struct emu_cmd *c);
int emu_cmd_create_rwq_ind_tbl(struct emu_cmd *c);
int emu_cmd_destroy_rwq_ind_tbl(struct emu_cmd *c);

int emu_cmd_create_flow(struct emu_cmd *c);
int emu_cmd_destroy_flow(struct emu_cmd *c);

int emu_cmd_open_xrcd(struct emu_cmd *c);
int emu_cmd_close_xrcd(struct emu_cmd *c);

bool emu_qp_has_udp_sport(const struct emu_qp *qp);

/* Destructors used by both the commands and context teardown. */
void emu_qp_destroy_locked(struct emu_qp *qp);
void emu_srq_destroy_locked(struct emu_srq *srq);
void emu_cq_destroy_locked(struct emu_cq *cq);
void emu_mr_destroy_locked(struct emu_mr *mr);
void emu_mw_destroy_locked(struct emu_mw *mw);
void emu_ah_destroy_locked(struct emu_ah *ah);
void emu_pd_destroy_locked(struct emu_pd *pd);
void emu_xrcd_destroy_locked(struct emu_xrcd *xrcd);
void emu_dm_destroy_locked(struct emu_dm *dm);
/* ioctl_dm.c: our view of a DM's bytes; the DM and op of a MEMIC operation page index */
uint8_t *emu_dm_bytes(const struct emu_ctx *ctx, uint32_t first_page);
bool emu_dm_ops_entry(struct emu_ctx *ctx, uint64_t idx, uint64_t pages, struct emu_dm **dm,
		      uint8_t *op);
void emu_uar_destroy_locked(struct emu_uar *uar);
void emu_mkey_destroy_locked(struct emu_mkey *mk);
void emu_psv_destroy_locked(struct emu_psv *psv);
void emu_pp_destroy_locked(struct emu_pp *pp);
void emu_wq_destroy_locked(struct emu_wq *wq);
void emu_flow_destroy_locked(struct emu_flow *r);
/* a rule into the host's list, in mlx5's bypass table for it (flow.c); a matcher's rule let go */
void emu_flow_insert_locked(struct emu_flow *r);
void emu_flow_matcher_put_locked(struct emu_flow_matcher *m);
void emu_flow_matcher_destroy_locked(struct emu_flow_matcher *m);
void emu_flow_action_put_locked(struct emu_flow_action *a);
void emu_flow_action_destroy_locked(struct emu_flow_action *a);
/* flow.c: a child of fork() is a new host, whose NIC has no rule of its parent's */
void emu_flow_disown_locked(void);
void emu_rwq_ind_tbl_destroy_locked(struct emu_rwq_ind_tbl *t);
/* rss.c: an RSS QP over the table t, for either form of CREATE_QP; its end */
int emu_rss_qp_create(struct emu_cmd *c, struct emu_rwq_ind_tbl *t);
void emu_rss_qp_destroy_locked(struct emu_qp *qp);
struct mlx5_ib_rss_caps;
void emu_rss_caps(struct ib_uverbs_ex_query_device_resp *r, struct mlx5_ib_rss_caps *drv);
/* pp.c: a child of fork() forgets its parent's rate tables */
void emu_pp_disown_locked(void);
/* pp.c: a raw packet QP's rate limit, an entry of the same table (0: none) */
int emu_pp_qp_rate_set(struct emu_qp *qp, uint32_t rate, uint32_t burst, uint16_t typical);
void emu_pp_qp_rate_put(struct emu_qp *qp);

/*
 * reserved_qpn.c: RESERVED_QPN general objects, each a range of 2^log_n
 * QP numbers no QP gets while it lives; the caps of the second general
 * caps page (cmd_hca_cap_2) that bound them.  emu_rqpn_create_locked():
 * 0, ENOMEM, EDQUOT past the function's 2^EMU_RQPN_LOG_MAX_NUM numbers,
 * ENOSPC without a free range.
 */
#define EMU_RQPN_LOG_MAX_NUM		13	/* log_max_num_reserved_qpn */
#define EMU_RQPN_LOG_GRANULARITY	3	/* log_reserved_qpn_granularity */
#define EMU_RQPN_LOG_MAX_ALLOC		10	/* log_reserved_qpn_max_alloc */
struct emu_rqpn {
	struct emu_obj		obj;
	uint32_t		first;		/* the object id: the first QPN */
	unsigned		log_n;
};
int emu_rqpn_create_locked(struct emu_ctx *ctx, unsigned log_n, struct emu_rqpn **out);
void emu_rqpn_destroy_locked(struct emu_rqpn *r);

/*
 * devx.c: the uid of a DEVX ucontext (never 0, nor the one mlx5_ib runs a
 * non-DEVX context's whitelisted queries under), and the largest KLM list
 * an indirect mkey may have (log_max_klm_list_size, a ConnectX-6's).
 */
#define EMU_DEVX_WHITELIST_UID	1
#define EMU_DEVX_LOG_MAX_KLM	16
uint16_t emu_devx_uid_alloc(void);

/*
 * ioctl_uar.c: a QP or CQ may name the UAR page_id if it is a static one
 * or a live UAR_OBJ_ALLOC one (emu_uar_valid_locked(), else the firmware's
 * EINVAL); it takes it and gives it back when destroyed.  GET_CONTEXT
 * takes its static UARs from the device (ENOMEM when they are out), and
 * the context's end gives back every page it held.
 */
bool emu_uar_valid_locked(const struct emu_ctx *ctx, uint32_t page_id);
int emu_uar_get_locked(struct emu_ctx *ctx, uint32_t page_id);
void emu_uar_put_locked(struct emu_ctx *ctx, uint32_t page_id);
int emu_uar_static_take_locked(struct emu_ctx *ctx, uint32_t num_uars);
void emu_uar_ctx_fini_locked(struct emu_ctx *ctx);

/* mem.c: an MR (REG_MR and DM_MR_REG), the access rule of both */
int emu_mr_create_locked(struct emu_ctx *ctx, struct emu_pd *pd, uint64_t addr,
			 uint64_t iova, uint64_t length, uint32_t access,
			 struct emu_mr **out);
int emu_mr_access_check(uint32_t access);
/* what makes a registration writable: the kernel's ib_access_writable() */
#define EMU_ACCESS_WRITABLE						\
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND)

/* odp.c: the ODP caps; an ODP MR's range (0 or the errno) */
struct ib_uverbs_ex_query_device_resp;
void emu_odp_caps(struct ib_uverbs_ex_query_device_resp *r);
/*
 * Each transport's ODP caps (enum ibv_odp_transport_cap_bits), in the
 * order of the PRM's ODP caps page; DC's only libmlx5 reports, from that
 * page (mlx5dv_query_device()'s dc_odp_caps).
 */
enum { EMU_ODP_RC, EMU_ODP_UC, EMU_ODP_UD, EMU_ODP_XRC, EMU_ODP_DC, EMU_ODP_TRANSPORTS };
extern const uint32_t emu_odp_transport_caps[EMU_ODP_TRANSPORTS];
bool emu_odp_implicit(uint64_t start, uint64_t length);
int emu_odp_range_check(uint64_t start, uint64_t length, uint64_t iova, uint32_t access);
void emu_channel_put_locked(struct emu_channel *ch);

/* ---- qp_state.c: the kernel's ib_modify_qp_is_ok table ----------------- */
bool emu_modify_qp_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			 enum ibv_qp_type type, uint32_t mask);
bool emu_modify_dci_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask);
bool emu_modify_dct_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask);

/* ---- ioctl.c: the RDMA_VERBS_IOCTL framework --------------------------- */
enum { EMU_IOC_MAX_ATTRS = 20 };	/* QP_CREATE has 17 */
/*
 * IDR, FD: an object handle or a descriptor in .data (the method looks it
 * up); NEW: an IDR or FD attribute with UVERBS_ACCESS_NEW, the method
 * returns the new handle or descriptor in .data.
 */
enum emu_ioc_kind { EMU_IOC_NONE, EMU_IOC_PTR_IN, EMU_IOC_PTR_OUT, EMU_IOC_IDR,
		    EMU_IOC_FD, EMU_IOC_NEW };
enum {
	EMU_IOC_MANDATORY	= 1 << 0,	/* UA_MANDATORY */
	EMU_IOC_ZERO_TRAILING	= 1 << 1,	/* UVERBS_ATTR_STRUCT: may grow */
};

/* An attribute as the kernel's method declares it (uverbs_ioctl.h). */
struct emu_ioc_spec {
	uint16_t	id;
	uint8_t		kind;		/* enum emu_ioc_kind; NONE ends the list */
	uint8_t		flags;
	uint16_t	min_len, max_len;
};

struct emu_ioc;
struct emu_ioc_method {
	uint16_t		object, method;
	int			(*fn)(struct emu_ioc *b);
	bool			udata;	/* UVERBS_ATTR_UHW(): UHW_OUT flagged written */
	struct emu_ioc_spec	attrs[EMU_IOC_MAX_ATTRS];
};

/* One call: its method and the attributes the caller passed (copied). */
struct emu_ioc {
	struct emu_ctx			*ctx;
	const struct emu_ioc_method	*m;
	uint64_t			uattrs;	/* user address of the array */
	const struct ib_uverbs_attr	*attrs;
	int16_t				at[EMU_IOC_MAX_ATTRS];	/* spec -> attrs, -1 */
	struct emu_obj			*made;	/* emu_ioc_put_new_obj()'s */
};

/* the methods this kernel has: DEVICE and ASYNC_EVENT, CREATE, DESTROY, DM */
/*
 * fork.c: on a context a child of fork() inherited, whether it is served
 * an ioctl method, and a write() command by UVERBS_METHOD_INVOKE_WRITE;
 * what is not answers EIO.
 */
bool emu_inherited_method_served(uint16_t object, uint16_t method);
bool emu_inherited_command_served(uint32_t command);

extern const struct emu_ioc_method emu_ioc_device_methods[];	/* ioctl_device.c */
extern const size_t emu_ioc_device_methods_count;
extern const struct emu_ioc_method emu_ioc_destroy_methods[];	/* ioctl_destroy.c */
extern const size_t emu_ioc_destroy_methods_count;
extern const struct emu_ioc_method emu_ioc_dm_methods[];	/* ioctl_dm.c */
extern const size_t emu_ioc_dm_methods_count;
extern const struct emu_ioc_method emu_ioc_create_methods[];	/* ioctl_create.c */
extern const size_t emu_ioc_create_methods_count;
extern const struct emu_ioc_method emu_ioc_uar_methods[];	/* ioctl_uar.c */
extern const size_t emu_ioc_uar_methods_count;
extern const struct emu_ioc_method emu_ioc_import_methods[];	/* import.c */
extern const size_t emu_ioc_import_methods_count;
extern const struct emu_ioc_method emu_ioc_devx_methods[];	/* devx.c */
extern const size_t emu_ioc_devx_methods_count;
extern const struct emu_ioc_method emu_ioc_odp_methods[];	/* odp.c */
extern const size_t emu_ioc_odp_methods_count;
extern const struct emu_ioc_method emu_ioc_pp_methods[];	/* pp.c */
extern const size_t emu_ioc_pp_methods_count;
extern const struct emu_ioc_method emu_ioc_flow_matcher_methods[];	/* flow_matcher.c */
extern const size_t emu_ioc_flow_matcher_methods_count;
extern const struct emu_ioc_method emu_ioc_flow_action_methods[];	/* flow_action.c */
extern const size_t emu_ioc_flow_action_methods_count;

/* uverbs_attr_get() and friends; ENOENT when the attribute is absent */
const struct ib_uverbs_attr *emu_ioc_get(const struct emu_ioc *b, uint16_t id);
int emu_ioc_copy_from(const struct emu_ioc *b, uint16_t id, void *to, size_t size);
int emu_ioc_dup(const struct emu_ioc *b, uint16_t id, void **buf, size_t *len);
int emu_ioc_get_const(const struct emu_ioc *b, uint16_t id, uint64_t max,
		      uint64_t *val);
int emu_ioc_copy_to(const struct emu_ioc *b, uint16_t id, const void *from,
		    size_t size);
int emu_ioc_copy_to_struct_or_zero(const struct emu_ioc *b, uint16_t id,
				   const void *from, size_t size);
int emu_ioc_output_written(const struct emu_ioc *b, uint16_t id);
/* a NEW attribute: the new handle or descriptor into the caller's .data */
int emu_ioc_put_new(const struct emu_ioc *b, uint16_t id, int64_t v);
/*
 * ... for a new object, whole and ready to be destroyed: from here on the
 * call failing (an output not copied out, or not flagged written) destroys
 * it, as the kernel's bundle aborts a uobject uverbs_finalize_uobj_create()
 * marked made.
 */
int emu_ioc_put_new_obj(struct emu_ioc *b, uint16_t id, struct emu_obj *obj);
/* uverbs_get_flags64(): a u32 or a u64 */
int emu_ioc_get_flags(const struct emu_ioc *b, uint16_t id, uint64_t *flags);
/* an IDR attribute's object: no such handle ENOENT, another type EINVAL */
void *emu_ioc_get_obj(const struct emu_ioc *b, uint16_t id, enum emu_obj_type type,
		      int *err);
/* the output attribute can take `len` bytes (absent: yes), as copy_to_user would */
int emu_ioc_out_check(const struct emu_ioc *b, uint16_t id, size_t len);

/* dispatch.c: a write() command given by INVOKE_WRITE's attributes */
int emu_cmd_invoke(struct emu_ctx *ctx, uint32_t command, const void *core,
		   size_t core_len, const void *drv, size_t drv_len, uint64_t resp,
		   size_t resp_len, uint64_t drv_resp, size_t drv_resp_len);

/* ctx.c: what GET_CONTEXT and QUERY_CONTEXT answer */
#define EMU_NUM_COMP_VECTORS	4

/* Port helpers (ctx.c). */
bool emu_port_valid(const struct emu_ctx *ctx, unsigned port);

#endif /* RDMAFAST_EMU_INTERNAL_H */
