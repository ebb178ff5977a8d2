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

#include "kernel.h"

/* ---- objects.c: contexts, handles, numbers ----------------------------- */
void emu_ctx_destroy_locked(struct emu_ctx *ctx);	/* drops the lock for fini */
void emu_fd_watch(int fd, bool on);	/* event fds whose close() matters */

void *emu_obj_alloc(struct emu_ctx *ctx, enum emu_obj_type type, size_t size,
		    uint64_t user_handle);
void emu_obj_free_locked(struct emu_obj *obj);
void *emu_obj_get_locked(struct emu_ctx *ctx, uint32_t handle,
			 enum emu_obj_type type);

enum emu_num_kind { EMU_NUM_PD, EMU_NUM_CQ, EMU_NUM_QP, EMU_NUM_SRQ,
		    EMU_NUM_MKEY, EMU_NUM_KIND_COUNT };
int emu_num_alloc_locked(enum emu_num_kind kind, void *obj, uint32_t *num);
void emu_num_free_locked(enum emu_num_kind kind, uint32_t num);
void *emu_num_lookup_locked(enum emu_num_kind kind, uint32_t num);

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

int emu_cmd_open_xrcd(struct emu_cmd *c);
int emu_cmd_close_xrcd(struct emu_cmd *c);

/* Destructors used by both the commands and context teardown. */
void emu_qp_destroy_locked(struct emu_qp *qp);
void emu_srq_destroy_locked(struct emu_srq *srq);
void emu_cq_destroy_locked(struct emu_cq *cq);
void emu_mr_destroy_locked(struct emu_mr *mr);
void emu_mw_destroy_locked(struct emu_mw *mw);
void emu_ah_destroy_locked(struct emu_ah *ah);
void emu_pd_destroy_locked(struct emu_pd *pd);
void emu_xrcd_destroy_locked(struct emu_xrcd *xrcd);
void emu_channel_put_locked(struct emu_channel *ch);

/* ---- qp_state.c: the kernel's ib_modify_qp_is_ok table ----------------- */
bool emu_modify_qp_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			 enum ibv_qp_type type, uint32_t mask);
bool emu_modify_dci_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask);
bool emu_modify_dct_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask);

/* Port helpers (ctx.c). */
bool emu_port_valid(const struct emu_ctx *ctx, unsigned port);

#endif /* RDMAFAST_EMU_INTERNAL_H */
