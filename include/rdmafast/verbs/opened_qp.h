/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/verbs/opened_qp.h - releasing a QP that ibv_open_qp() returned,
 * around an rdma-core 44 crash: kept apart because it reaches a private
 * libibverbs symbol at run time.
 */
#ifndef RDMAFAST_VERBS_OPENED_QP_H
#define RDMAFAST_VERBS_OPENED_QP_H

#include <rdmafast/verbs/ibv.h>
#include <dlfcn.h>

RF_BEGIN_DECLS

/*
 * rf_qp_close_opened_ibv - release a QP that ibv_open_qp() returned.
 *
 * Not ibv_destroy_qp(): libmlx5 (rdma-core 44 and later, providers/mlx5)
 * destroys every QP the same way, and mlx5_destroy_qp() frees the QP's
 * doorbell record with mlx5_free_db(). An opened QP has none (mlx5_open_qp()
 * allocates a zeroed struct and only asks the kernel for a handle), so
 * mlx5_free_db() looks up the page of a NULL record, takes the lookup's
 * end marker for a page and sets a bit far outside it: the process dies
 * (SIGSEGV or SIGBUS). What releasing needs is the kernel's DESTROY_QP on
 * the handle, which drops this process's reference: libibverbs'
 * ibv_cmd_destroy_qp() (the providers' helper, exported under
 * IBVERBS_PRIVATE_*), found at run time so that nothing links against a
 * private symbol version. The provider's small struct for the handle is
 * left allocated: its layout is libmlx5's own. Returns 0, -ENOSYS when
 * the helper cannot be found, or the kernel's -errno.
 */
static inline RF_COLD int rf_qp_close_opened_ibv(struct ibv_qp *qp)
{
	int (*destroy)(struct ibv_qp *) = NULL;
	void *lib, *sym;
	int ret;

	lib = dlopen("libibverbs.so.1", RTLD_LAZY);
	if (!lib)
		return -ENOSYS;
	sym = dlsym(lib, "ibv_cmd_destroy_qp");
	if (sym)	/* object to function pointer: ISO C has no cast for it */
		memcpy(&destroy, &sym, sizeof(destroy));
	ret = destroy ? rf__ibv_err(destroy(qp)) : -ENOSYS;
	dlclose(lib);
	return ret;
}

RF_END_DECLS

#endif /* RDMAFAST_VERBS_OPENED_QP_H */
