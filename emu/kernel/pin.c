/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pin.c - pinned memory accounting, as the kernel's ib_umem_get()
 * (drivers/infiniband/core/umem.c) charges it and mlx5_ib_db_map_user()
 * (drivers/infiniband/hw/mlx5/doorbell.c) shares it.
 *
 * Every pin counts its pages in the process's mm->pinned_vm.  Without
 * CAP_IPC_LOCK a pin that takes the count past RLIMIT_MEMLOCK is ENOMEM,
 * and a limit of 0 refuses any pin with EPERM (can_do_mlock()).  The
 * rings of CQs, QPs and SRQs are pinned as MRs are; a doorbell record's
 * page is pinned once per context however many records share it.
 *
 * The count belongs to the process: a child of fork() starts at 0 (a new
 * mm), and an object it inherited releases nothing there (pid).
 */
#include <linux/capability.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* a context's doorbell page: mlx5_ib_user_db_page */
struct emu_db_page {
	uint64_t		page;
	unsigned		refcnt;
	struct emu_pin		pin;
	struct emu_db_page	*next;
};

static uint64_t pinned_vm;
static pid_t pinned_pid;

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* mm->pinned_vm of this process */
static uint64_t *mm_pinned(void)
{
	pid_t me = getpid();

	if (pinned_pid != me) {
		pinned_pid = me;
		pinned_vm = 0;
	}
	return &pinned_vm;
}

/* capable(cap): the effective set (initial user namespace assumed) */
bool emu_capable(unsigned cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (cap > CAP_LAST_CAP || syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

static bool can_ipc_lock(void)
{
	return emu_capable(CAP_IPC_LOCK);
}

/* ib_umem_num_pages() of a umem at addr */
static uint64_t num_pages(uint64_t addr, uint64_t len)
{
	uint64_t ps = page_size();

	return ((addr + len + ps - 1) / ps) - addr / ps;
}

int emu_umem_get(uint64_t held, uint64_t addr, uint64_t len, bool write,
		 uint64_t *pages)
{
	struct rlimit rl;
	uint64_t limit;

	*pages = 0;
	if (!len)
		return 0;
	if (addr + len < addr || addr + len + page_size() < addr + len)
		return EINVAL;
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return ENOMEM;
	limit = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur / page_size();
	if (!rl.rlim_cur && !can_ipc_lock())
		return EPERM;		/* can_do_mlock() */
	if (*mm_pinned() + held + num_pages(addr, len) > limit && !can_ipc_lock())
		return ENOMEM;
	if (emu_umem_check(addr, len, write))
		return EFAULT;
	*pages = num_pages(addr, len);
	return 0;
}

void emu_pin_charge(struct emu_pin *pin, uint64_t pages)
{
	*mm_pinned() += pages;
	pin->pages += pages;
	pin->pid = getpid();
}

void emu_pin_release(struct emu_pin *pin)
{
	if (pin->pages && pin->pid == getpid())
		*mm_pinned() -= pin->pages;
	pin->pages = 0;
}

static struct emu_db_page *db_page(struct emu_ctx *ctx, uint64_t db)
{
	for (struct emu_db_page *p = ctx->db_pages; p; p = p->next)
		if (p->page == db / page_size() * page_size())
			return p;
	return NULL;
}

int emu_db_get(struct emu_ctx *ctx, uint64_t held, uint64_t db)
{
	uint64_t pages;

	if (db_page(ctx, db))
		return 0;	/* the page is pinned already: nothing is checked */
	return emu_umem_get(held, db / page_size() * page_size(), page_size(), false, &pages);
}

int emu_db_map(struct emu_ctx *ctx, uint64_t db)
{
	struct emu_db_page *p = db_page(ctx, db);

	if (p) {
		p->refcnt++;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return ENOMEM;
	p->page = db / page_size() * page_size();
	p->refcnt = 1;
	emu_pin_charge(&p->pin, 1);
	p->next = ctx->db_pages;
	ctx->db_pages = p;
	return 0;
}

void emu_db_unmap(struct emu_ctx *ctx, uint64_t db)
{
	for (struct emu_db_page **pp = &ctx->db_pages; *pp; pp = &(*pp)->next) {
		struct emu_db_page *p = *pp;

		if (p->page != db / page_size() * page_size())
			continue;
		if (!--p->refcnt) {
			*pp = p->next;
			emu_pin_release(&p->pin);
			free(p);
		}
		return;
	}
}
