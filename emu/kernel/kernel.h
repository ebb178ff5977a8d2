/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * kernel.h - the object model of the emulated mlx5 HCA: what the fake uverbs
 * kernel (this folder) offers the layers above it.
 *
 * The kernel answers the commands that the unmodified libibverbs + libmlx5
 * write to the command fd (interpose/ hands them over) and keeps the
 * resulting objects here.  The device model (device/) executes the work
 * those objects describe: it reads WQEs and doorbell records from process
 * memory, writes CQEs and raises events.
 *
 * One process is one host.  Everything below lives in that process; the
 * subnet's shared state (host identity, XRC domains) lives in a per-user
 * runtime directory, see emu_subnet_dir().
 *
 * LOCKING RULE
 *   emu_lock (a process-wide mutex) protects every table and every object
 *   field written by the command path.  Command handlers hold it for the whole
 *   command, including while they call the emu_dev_* hooks.  A device-model
 *   thread takes it (emu_lock_acquire/emu_lock_release) around any lookup and
 *   around any use of an object it did not get from a hook.  Objects are freed
 *   only with the lock held and only after their *_destroyed hook has run, so a
 *   pointer obtained under the lock stays valid until the lock is dropped, or
 *   until the matching destroy hook if the model keeps it in its own state.
 *   Functions whose name ends in _locked require the caller to hold the lock.
 *   Hooks must not block for long and must not call back into the command
 *   path; the one exception is emu_dev_ctx_fini(), called WITHOUT the lock so
 *   the model may join its threads there.
 *
 * HOOKS
 *   The emu_dev_* functions at the end of this file are the device model's
 *   entry points.  The kernel provides weak no-op definitions (hooks.c), so
 *   it links and runs alone (make EMU_NO_DEV=1); device/ overrides them with
 *   strong definitions.  Do not define them anywhere else.  The kernel thus
 *   calls into the device without depending on it: the device sits above.
 */
#ifndef RDMAFAST_EMU_KERNEL_H
#define RDMAFAST_EMU_KERNEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>

#include "base/base.h"
#include "subnet/subnet.h"

/* ------------------------------------------------------------------------ */
/* Limits and fixed answers                                                  */

#define EMU_PAGE_SIZE		4096u	/* mlx5 adapter page == UAR size */

/*
 * UAR layout answered in GET_CONTEXT: the static bfreg scheme of the kernel's
 * drivers/infiniband/hw/mlx5/main.c, as rdma-core providers/mlx5/mlx5.c maps it.
 */
#define EMU_BF_REG_SIZE		512u
#define EMU_BF_OFFSET		0x800u
#define EMU_BFREGS_PER_UAR	4u	/* slots per UAR page, 2 of them usable */
#define EMU_CQ_DB_OFFSET	0x20u	/* CQ arm doorbell inside a UAR page */
/*
 * Static UARs of a context (the old scheme's, GET_CONTEXT's): at most
 * MLX5_MAX_UARS of include/linux/mlx5/device.h, their mmap index 8 bits.
 */
#define EMU_MAX_STATIC_UARS	256u
/*
 * UAR pages of the device, static and UAR_OBJ_ALLOC's of every context
 * together (ioctl_uar.c): a ConnectX-6's UAR area, BAR 0's 32 MiB
 * (uar_sz 5 of the PRM's HCA caps: 1 MiB << uar_sz), in 4 KiB pages
 * (uar_4k).  The firmware refuses ALLOC_UAR beyond it.
 */
#define EMU_DEV_UARS		8192u

/*
 * The command fd is a sparse memfd covering every mlx5 mmap offset
 * ((cmd << 8 | idx) * 4096).  libmlx5 mmaps it directly, no interposition.
 * UARs of UAR_OBJ_ALLOC go on past the last command, in a page each:
 * page id p at page (EMU_MMAP_DYN_UAR << 8) + p, which is the kernel's
 * offset for an id below 256 and where mmap.c moves the kernel's extended
 * offset of any other.
 */
enum emu_mmap_cmd {
	EMU_MMAP_REGULAR	= 0,	/* UAR page idx, write-combining */
	EMU_MMAP_NC		= 3,	/* same UAR, non-cached (MLX5_SHUT_UP_BF) */
	EMU_MMAP_CORE_CLOCK	= 5,	/* the free-running counter (clock.c) */
	EMU_MMAP_CLOCK_INFO	= 7,	/* its timecounter, for mlx5dv_ts_to_ns */
	EMU_MMAP_DEVICE_MEM	= 8,	/* device memory (MEMIC), page idx */
	/*
	 * UARs of UAR_OBJ_ALLOC (ioctl_uar.c): the first of the kernel's
	 * rdma_user_mmap_entry commands (MLX5_IB_MMAP_OFFSET_START), idx = the
	 * UAR's page id, its bits 8-15 in the offset's bits 16-23
	 * (mlx5_entry_to_mmap_offset()).  One mapping each: write-combining or
	 * not as asked.
	 */
	EMU_MMAP_DYN_UAR	= 9,
	EMU_MMAP_CMD_COUNT	= 10,
};
/* device memory: a ConnectX-6's 128 KiB of MEMIC, in pages of the command fd */
#define EMU_DM_PAGES	32u
#define EMU_DM_SIZE	(EMU_DM_PAGES * EMU_PAGE_SIZE)
#define EMU_CMDFD_SIZE	(((size_t)EMU_MMAP_CMD_COUNT * 256 + EMU_DEV_UARS) * EMU_PAGE_SIZE)
/* internal_timer_h in the core clock page: offsetof(mlx5_init_seg) % 4096 */
#define EMU_CORE_CLOCK_OFFSET	0u

/* ------------------------------------------------------------------------ */
/* Objects                                                                  */

enum emu_obj_type {
	EMU_OBJ_PD,
	EMU_OBJ_MR,
	EMU_OBJ_MW,
	EMU_OBJ_CQ,
	EMU_OBJ_QP,
	EMU_OBJ_SRQ,
	EMU_OBJ_AH,
	EMU_OBJ_XRCD,
	EMU_OBJ_DM,
	EMU_OBJ_UAR,
	EMU_OBJ_MKEY,		/* a DEVX CREATE_MKEY object (devx.c) */
	EMU_OBJ_PSV,		/* a DEVX CREATE_PSV object (devx.c) */
	EMU_OBJ_RESERVED_QPN,	/* a DEVX RESERVED_QPN general object (reserved_qpn.c) */
	EMU_OBJ_PP,		/* a packet pacing entry (pp.c) */
	EMU_OBJ_WQ,		/* an Ethernet receive work queue (wq.c) */
	EMU_OBJ_RWQ_IND_TBL,	/* an indirection table of WQs (wq.c) */
	EMU_OBJ_FLOW,		/* a steering rule of ibv_create_flow() (flow.c) */
	EMU_OBJ_FLOW_MATCHER,	/* an mlx5dv flow matcher (flow_matcher.c) */
	EMU_OBJ_FLOW_ACTION,	/* an mlx5dv packet reformat (flow_action.c) */
	EMU_OBJ_TYPE_COUNT
};

struct emu_ctx;

/* Common header: what the kernel's ib_uobject carries. */
struct emu_obj {
	enum emu_obj_type	type;
	uint32_t		handle;		/* uverbs handle, index in ctx->objs */
	uint64_t		user_handle;	/* echoed in events */
	struct emu_ctx		*ctx;
	unsigned		usecnt;		/* dependants; destroy is EBUSY while > 0 */
	/*
	 * The process destroyed its handle but the object lives on for other
	 * handles (an XRC target QP still opened with ibv_open_qp): it is no
	 * longer reachable by handle, but still by number.
	 */
	bool			detached;
	/*
	 * In a child of fork(), an object its parent made before the fork:
	 * the copy fork() gave the child, of which the parent's device knows
	 * nothing.  The child cannot name it, and releases nothing of it.
	 */
	bool			inherited;
};

/*
 * Event queue behind a file descriptor (completion channel or async fd).
 * A SOCK_SEQPACKET socketpair: the process reads user_fd, we write dev_fd.
 */
struct emu_evq {
	int			user_fd;
	int			dev_fd;
};

struct emu_channel {
	struct emu_evq		evq;
	struct emu_ctx		*ctx;
	unsigned		usecnt;		/* CQs bound to it */
	struct emu_channel	*next;
};

/* Pages an object keeps pinned, in the mm->pinned_vm of pid (pin.c). */
struct emu_pin {
	uint64_t		pages;
	pid_t			pid;
};

struct emu_pd {
	struct emu_obj		obj;
	uint32_t		pdn;
};

struct emu_mr {
	struct emu_obj		obj;
	struct emu_pd		*pd;
	uint32_t		lkey;
	uint32_t		rkey;
	uint64_t		addr;		/* process VA of the buffer (start) */
	uint64_t		iova;		/* address the keys are used with */
	uint64_t		length;
	uint32_t		access;		/* IBV_ACCESS_* */
	unsigned		mw_bound;	/* MWs bound to this MR (see emu_mw_bind_locked) */
	struct emu_dm		*dm;		/* ibv_reg_dm_mr(): on device memory */
	struct emu_pin		pin;
};

/* ibv_alloc_dm(): pages of the command fd's device-memory area */
struct emu_dm {
	struct emu_obj		obj;
	uint32_t		first_page, pages;
	uint64_t		length;		/* as asked */
	uint8_t			ops;		/* MEMIC operations given an address (bit op) */
};

/*
 * mlx5dv_devx_alloc_uar(), libmlx5's QP and TD UARs: a UAR page of the
 * command fd (EMU_MMAP_DYN_UAR), named by its page id in CREATE_QP and
 * CREATE_CQ.  Destroying the object does not take the page from the QPs
 * and CQs that ring it (the kernel keeps no count either); the page id is
 * given out again only when they are gone (emu_uar_slot.users).
 */
struct emu_uar {
	struct emu_obj		obj;
	uint32_t		page_id;
	uint32_t		alloc_type;	/* MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF or _NC */
};

/* mlx5dv_pp_alloc(): one use of an entry of the device's rate table (pp.c) */
struct emu_pp {
	struct emu_obj		obj;
	uint16_t		index;		/* 1 .. packet_pacing_rate_table_size - 1 */
};

/* A dynamic page id of a context: held while either is set. */
struct emu_uar_slot {
	uint16_t		users;		/* QPs and CQs on it */
	bool			alive;		/* its UAR object exists */
};

/*
 * An mkey of DEVX CREATE_MKEY (mlx5dv_create_mkey()): an indirect key
 * (access mode KLMs) created free, with room for max_entries translation
 * entries, which UMR WQEs configure (device/mkey.c).  Its key is
 * index << 8 with the variant byte libmlx5 chose (mkey_7_0, 0).
 */
struct emu_mkey_ent {
	uint64_t		addr;		/* the entry's own key's address */
	uint32_t		key;		/* an MR's lkey */
	uint32_t		len;		/* bytes (of each repetition) */
	uint32_t		stride;		/* interleaved: bytes between repetitions */
};

/*
 * The signature configuration a UMR's BSF gave an mkey (device/sig.c):
 * per domain (memory, wire) the block format, and the PSV holding its
 * initial signature; the check and copy masks; a buffer of wire bytes
 * the device builds a gather in.
 */
struct emu_sig_domain {
	uint8_t			type;		/* EMU_SIG_* */
	uint8_t			dif_flags;	/* T10-DIF: inc_ref_guard_check */
	bool			seed;		/* T10-DIF: the guard starts at the PSV's; CRC: all ones */
	uint16_t		bs;		/* data bytes of a block */
	uint32_t		psvn;
};
enum { EMU_SIG_NONE, EMU_SIG_T10DIF_CRC, EMU_SIG_T10DIF_CSUM, EMU_SIG_CRC32,
       EMU_SIG_CRC32C };

struct emu_mkey_sig {
	struct emu_sig_domain	mem, wire;
	uint8_t			check_mask;	/* PI bytes checked, MSB the first */
	uint8_t			copy_mask;	/* same block structure: PI bytes copied */
	bool			sbs;
	uint8_t			*img;		/* wire bytes of one gather */
	size_t			img_cap;
	/*
	 * A scatter's wire PI bytes of block pend_blk - 1 (0: none), kept
	 * until the block's last byte arrives, perhaps in a later packet.
	 */
	uint64_t		pend_blk;
	uint8_t			pend_pi[8];
};

struct emu_mkey {
	struct emu_obj		obj;
	struct emu_pd		*pd;
	uint32_t		key;
	uint32_t		max_entries;	/* translations_octword_size */
	bool			umr_en;		/* UMR may configure it */
	bool			rinval;		/* en_rinval: SEND_WITH_INV may free it */
	/* the mkey context and layout, as the last UMR left them (device/mkey.c) */
	bool			free;		/* not usable until configured */
	uint32_t		access;		/* IBV_ACCESS_* (local read always) */
	uint64_t		start, length;
	struct emu_mkey_ent	*ent;		/* max_entries of them */
	uint32_t		nent;
	uint32_t		repeat;		/* interleaved: repetitions; 0: a KLM list */
	bool			bsf;		/* created with a signature context (bsf_en) */
	struct emu_mkey_sig	*sig;		/* the BSF a UMR enabled, or NULL (device/sig.c) */
	/*
	 * The signature errors: the low bit of those the key reported, and
	 * the mkey context's expected_sigerr_count (CREATE_MKEY, or a UMR
	 * with the SIG_ERR mask bit).  A failed check is reported only while
	 * they differ (the key is armed); reporting it makes them equal.
	 */
	uint8_t			sigerr_count;
	uint8_t			sigerr_expected;
};

/*
 * A PSV (protection signature value): the running signature of one
 * domain of a signature mkey, which libmlx5 creates two of per key
 * (CREATE_PSV) and names in the key's BSF and its SET_PSV WQEs.
 */
struct emu_psv {
	struct emu_obj		obj;
	struct emu_pd		*pd;
	uint32_t		psvn;		/* psv0_index */
	uint64_t		ts;		/* transient signature, as SET_PSV left it */
};

struct emu_qp;

struct emu_mw {
	struct emu_obj		obj;
	struct emu_pd		*pd;
	enum ibv_mw_type	type;
	uint32_t		rkey;		/* current key; the model updates the tag on bind */
	/* binding, set by the device model through emu_mw_bind_locked() */
	struct emu_mr		*mr;		/* NULL when unbound */
	struct emu_qp		*qp;		/* type 2: QP it is bound to */
	uint64_t		addr;
	uint64_t		length;
	uint32_t		access;
};

struct emu_cq {
	struct emu_obj		obj;
	uint32_t		cqn;
	uint64_t		buf;		/* user VA of the CQE ring */
	uint64_t		dbrec;		/* user VA: [0] set_ci, [1] arm word (BE32) */
	uint32_t		cqe_cnt;	/* entries in the ring, power of two */
	uint32_t		cqe_size;	/* 64 or 128 */
	/*
	 * MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD: 64-byte CQEs at a 128-byte
	 * stride (the CQ context's padded cqe_sz), the CQE64 in the second
	 * half as with 128-byte CQEs; the first half carries nothing, so no
	 * data is scattered to such a CQ (qp.c).
	 */
	bool			cqe_pad;
	uint32_t		flags;		/* IB_UVERBS_CQ_FLAGS_* from the ex command */
	uint8_t			cqe_comp_en;
	/*
	 * The mini-CQE format of a compressed CQ (MLX5_IB_CQE_RES_FORMAT_*),
	 * 0 without compression. The device model writes sessions on such
	 * CQs (device/cqe_zip.c), and plain CQEs where none fits.
	 */
	uint8_t			comp_format;
	uint16_t		uar_page;	/* UAR index the CQ rings (0, static scheme) */
	uint8_t			*uar;		/* that UAR page, our view (emu_uar_page) */
	struct emu_channel	*channel;	/* may be NULL */
	uint32_t		comp_vector;
	struct emu_pin		pin;		/* the ring (the doorbell: db_pages) */

	/*
	 * Arm state.  The model reads the arm word from dbrec[1] (or the UAR
	 * doorbell) and keeps its decoding here; emu_post_comp_event_locked()
	 * clears `armed`.
	 */
	bool			armed;
	bool			armed_solicited;
	uint32_t		arm_sn;

	/*
	 * Event moderation (ibv_modify_cq(), MODIFY_CQ): an armed CQ raises
	 * its event once mod_count CQEs arrived since the last event, or
	 * mod_period us after the first of them; 0 disables either, both 0
	 * (the default) fire on the first CQE.
	 */
	uint16_t		mod_count;
	uint16_t		mod_period;

	/* RESIZE_CQ: the new ring, valid only during emu_dev_cq_resized() */
	uint64_t		resize_buf;
	uint32_t		resize_cqe_cnt;
	uint32_t		resize_cqe_size;

	unsigned		comp_events;	/* delivered to the channel */
	unsigned		async_events;	/* delivered to the async fd */
	void			*dev_priv;	/* device model's per-CQ state */
};

struct emu_srq;
struct emu_xrcd;

enum { EMU_DC_NONE, EMU_DC_DCI, EMU_DC_DCT };

/* 2^log_max_dci_errored_streams of every profile (base/profile.c): at most 2^3 */
#define EMU_DCI_ERRORED_MAX	8

/*
 * The TIR of an RSS QP (rss.c): its number, the MLX5_RX_HASH_* fields its
 * request selected and its Toeplitz key, as the TIR context holds them.
 */
#define EMU_RSS_KEY_LEN		40
/* a ConnectX-6's log_max_rqt_size: an indirection table's entries at most */
#define EMU_RSS_MAX_RQT_SIZE	(1u << 11)
struct emu_rss_tir {
	uint32_t		tirn;
	uint64_t		fields;
	uint8_t			key[EMU_RSS_KEY_LEN];
};

struct emu_qp {
	struct emu_obj		obj;
	uint32_t		qpn;
	enum ibv_qp_type	type;		/* IBV_QPT_RC/UC/UD/XRC_SEND/XRC_RECV/DRIVER */
	/*
	 * IBV_QPT_DRIVER QPs are mlx5's Dynamically Connected ones: a DC
	 * initiator (an RC-like send queue whose WQEs each name a target) or
	 * a DC target (no queues of its own: receives through its SRQ into
	 * its receive CQ, reachable with its DC access key).
	 */
	uint8_t			dc;		/* EMU_DC_* */
	uint64_t		dc_key;		/* DCT: the access key every request must carry */
	/*
	 * A DCI created with DCI streams (MLX5_QP_FLAG_DCI_STREAM): the QP
	 * context's log_num_dci_stream_channels and log_num_dci_errored_streams,
	 * and the stream ids in error now (device/sq.c), in the order they
	 * failed; one more than 2^log_dci_errored - 1 moves the DCI to ERR.
	 */
	bool			dci_streams;
	uint8_t			log_dci_streams;
	uint8_t			log_dci_errored;
	uint8_t			dci_n_errored;
	uint16_t		dci_errored[EMU_DCI_ERRORED_MAX];
	struct emu_pd		*pd;		/* NULL for XRC_RECV */
	struct emu_cq		*send_cq;	/* NULL for XRC_RECV */
	struct emu_cq		*recv_cq;	/* NULL for XRC_SEND/XRC_RECV */
	struct emu_srq		*srq;
	struct emu_xrcd		*xrcd;		/* XRC_RECV only */
	uint32_t		uidx;		/* mlx5 user index: CQE srqn_uidx (cqe v1) */
	bool			sq_sig_all;
	uint32_t		create_flags;
	uint32_t		mlx5_flags;	/* MLX5_QP_FLAG_* of the CREATE_QP driver request */
	/*
	 * Scatter-to-CQE as the kernel's mlx5 driver programs it into the QP
	 * context at creation (cs_res, cs_req): 0 = off, else the most bytes
	 * that go into the CQE instead of memory, 32 (64-byte CQEs, data in
	 * the CQE64) or 64 (128-byte CQEs, data in the first half).
	 */
	uint8_t			scat_res;	/* receives of SENDs */
	uint8_t			scat_req;	/* READ / atomic responses */
	/*
	 * The QP context's drain_sigerr, which libmlx5 sets by a DEVX
	 * INIT2INIT_QP for MLX5DV_QP_CREATE_SIG_PIPELINING: a failed
	 * signature check stops the send queue and drains it to SQD.
	 */
	bool			drain_sigerr;
	/*
	 * A raw packet QP's RQ, a firmware object of its own, in ERR after a
	 * receive protection error (device/eth.c) while its SQ is not: no QP
	 * state names the pair (QUERY_QP is EINVAL); RESET clears it.
	 */
	bool			rq_err;
	/*
	 * The QP context's primary_address_path.udp_sport as the last new
	 * path (qp.c's path_udp_sport()) or RTS2RTS_QP
	 * (mlx5dv_modify_qp_udp_sport()) set it, QUERY_QP's answer.  The
	 * emulated wire has no UDP header: it changes nothing there.
	 */
	uint16_t		udp_sport;

	/* mlx5 queue memory, user VAs from the CREATE_QP driver request */
	uint64_t		buf;		/* RQ at buf, SQ at buf + sq_offset */
	uint64_t		dbrec;		/* [0] RQ counter, [1] SQ counter (BE32) */
	struct emu_pin		pin;		/* the rings (the doorbell: db_pages) */
	uint32_t		sq_wqe_cnt;	/* WQEBBs (64 B each) */
	uint64_t		sq_buf;		/* = buf + rq_wqe_cnt << rq_wqe_shift */
	uint32_t		rq_wqe_cnt;
	uint32_t		rq_wqe_shift;	/* RQ stride = 1 << rq_wqe_shift */
	uint64_t		rq_buf;		/* = buf */

	/* doorbell: bfreg index from CREATE_QP and where it sits in our view */
	uint32_t		bfreg;		/* 0 = no BlueFlame, shared */
	uint8_t			*bf_reg;	/* emu_bfreg_addr(ctx, bfreg) */
	/*
	 * On a UAR of UAR_OBJ_ALLOC (MLX5_QP_FLAG_UAR_PAGE_INDEX): bfreg is
	 * the page's first register, and the QP may ring either of its two
	 * (CREATE_QP names only the page).
	 */
	bool			dyn_uar;

	/*
	 * The receive queue as mlx5_ib_query_qp() answers it, from the ring
	 * the kernel's set_rq_size() took from the driver request: rq.wqe_cnt
	 * WQEs of rq.max_gs SGEs (stride / 16, less one for a signature), 0
	 * and 0 without a receive queue of its own (an SRQ, XRC, no WRs).
	 */
	uint32_t		rq_max_wr;
	uint32_t		rq_max_gs;

	/*
	 * attr holds what the kernel programs into the QP context; the
	 * access flags and responder depth MODIFY_QP was last given are kept
	 * beside it, as mlx5's trans_qp.atomic_rd_en and resp_depth (RESET
	 * does not clear them), for set_qpc_atomic_flags() (qp.c).
	 */
	struct emu_qp_attr	attr;
	uint32_t		access_asked;
	uint8_t			resp_depth;

	/* ibv_open_qp handle on an XRC target QP that lives in another process */
	bool			opened;

	unsigned		async_events;
	unsigned		flows;		/* steering rules to it (flow.c): destroy is EBUSY */
	uint16_t		rl_index;	/* raw packet: its rate limit's entry (pp.c), 0: none */
	uint32_t		rl_kbps;	/* and the entry's rate, which device/sq.c paces by */
	uint32_t		rl_burst;	/* and its burst bound, bytes (0: one frame) */
	/* an RSS QP (rss.c): no queues, a TIR that spreads over a table's WQs */
	struct emu_rwq_ind_tbl	*rss_tbl;
	struct emu_rss_tir	rss;
	void			*dev_priv;	/* device model's per-QP state */
};

/*
 * A work queue of ibv_create_wq() (wq.c): a receive ring of libmlx5's, in
 * the state MODIFY_WQ last set; an indirection table names 2^n of them.
 */
struct emu_wq {
	struct emu_obj		obj;
	uint32_t		wqn;
	struct emu_pd		*pd;
	struct emu_cq		*cq;
	uint32_t		uidx;
	enum ibv_wq_state	state;
	uint64_t		buf;
	uint64_t		dbrec;
	struct emu_pin		pin;
	uint32_t		wqe_cnt;
	uint32_t		wqe_shift;
	unsigned		async_events;
	uint32_t		rq_ci;		/* device model: receives taken (device/rq.c) */
	uint32_t		rx_drops;	/* device model: frames dropped since its last CQE */
};

struct emu_rwq_ind_tbl {
	struct emu_obj		obj;
	uint32_t		rqtn;
	uint32_t		size;
	struct emu_wq		*wq[];
};

/*
 * A steering rule of ibv_create_flow() (flow.c): the specs, each a value
 * and a mask in network order as the command gave them; a frame matches
 * when every spec's masked fields equal its masked value (device/eth.c).
 */
struct emu_flow_spec {
	uint32_t		type;		/* IBV_FLOW_SPEC_ETH, _IPV4, _IPV6, _TCP, _UDP */
	union emu_flow_filter {
		struct ib_uverbs_flow_eth_filter	eth;
		struct ib_uverbs_flow_ipv4_filter	ipv4;
		struct ib_uverbs_flow_ipv6_filter	ipv6;
		struct ib_uverbs_flow_tcp_udp_filter	l4;
	} v, m;
};

struct emu_flow_matcher;	/* flow_matcher.c's */

/*
 * The flow tables mlx5 puts a rule in, numbered in the order the rules
 * are kept (flow.c): the NIC's receive tables, the bypass namespace's 16
 * priorities of two tables each and its multicast table, then the
 * leftovers table; the sniffer's; the egress namespace's tables, laid
 * out as the bypass namespace's.
 */
enum {
	EMU_FLOW_MCAST_TABLE	= 32,	/* MLX5_IB_FLOW_MCAST_PRIO */
	EMU_FLOW_LEFTOVERS_TABLE,	/* MLX5_FLOW_NAMESPACE_LEFTOVERS */
	EMU_FLOW_SNIFFER_TABLE,		/* MLX5_FLOW_NAMESPACE_SNIFFER_RX and _TX */
	EMU_FLOW_EGRESS_TABLE,		/* MLX5_FLOW_NAMESPACE_EGRESS's first */
};

/* max_encap_header_size of the NIC flow table caps: the most bytes an encap pushes */
#define EMU_REFORMAT_MAX_DATA	128

/*
 * A packet reformat of mlx5dv_create_flow_action_packet_reformat()
 * (flow_action.c): what the device does to the frames of the rules that
 * carry it (device/eth.c).
 */
struct emu_flow_action {
	struct emu_obj		obj;
	uint8_t			type;		/* MLX5_IB_UAPI_FLOW_ACTION_PACKET_REFORMAT_TYPE_* */
	uint8_t			ft_type;	/* the table it is for: NIC_RX or NIC_TX */
	uint16_t		len;		/* bytes of data, an encap's headers */
	uint32_t		flows;		/* usecnt: rules that carry it */
	uint8_t			data[EMU_REFORMAT_MAX_DATA];
};

struct emu_flow {
	struct emu_obj		obj;
	struct emu_qp		*qp;		/* a raw packet QP (with an RQ, but egress); a
						 * matcher's egress flow: NULL */
	enum ibv_flow_attr_type	type;		/* NORMAL, the defaults, SNIFFER */
	bool			egress;		/* IBV_FLOW_ATTR_FLAGS_EGRESS, or of the NIC TX
						 * table: what the function sends */
	uint8_t			port;		/* the rule's port (an egress rule's) */
	uint16_t		priority;	/* lower first */
	bool			dont_trap;	/* the frame goes on to later tables */
	bool			drop;		/* IBV_FLOW_SPEC_ACTION_DROP: to no QP */
	bool			has_tag;	/* IBV_FLOW_SPEC_ACTION_TAG: */
	uint32_t		tag;		/* its frames' CQEs carry this tag */
	uint8_t			table;		/* EMU_FLOW_*_TABLE, or a bypass table */
	unsigned		nspecs;
	struct emu_flow_spec	spec[8];	/* IB_FLOW_SPEC_SUPPORT_LAYERS */
	struct emu_flow_matcher	*matcher;	/* mlx5dv_create_flow()'s, or NULL */
	bool			decap;		/* L2_TUNNEL_TO_L2: the tunnel's headers off */
	struct emu_flow_action	*reformat;	/* an encap (L2_TO_L2_TUNNEL), or NULL */
	struct emu_flow		*next;		/* the host's rules, in match order */
};

/* every rule of this host, in the order the NIC's steering tries them */
const struct emu_flow *emu_flows_locked(void);
/* ... and of its NIC TX tables, the same order (flow_matcher.c's egress rules) */
const struct emu_flow *emu_egress_flows_locked(void);
/* Are a and b one entry of their table (one match, so one lookup hit)? */
bool emu_flows_share_entry(const struct emu_flow *a, const struct emu_flow *b);

struct emu_srq {
	struct emu_obj		obj;
	uint32_t		srqn;
	enum ibv_srq_type	type;		/* BASIC, XRC or TM */
	struct emu_pd		*pd;
	struct emu_xrcd		*xrcd;		/* XRC only */
	struct emu_cq		*cq;		/* XRC and TM: where receives complete */
	uint32_t		uidx;		/* mlx5 user index (XRC, TM SRQ, cqe v1) */
	uint32_t		tm_list_size;	/* TM: tag list entries, a power of two */
	uint64_t		buf;
	uint64_t		dbrec;		/* [0] BE32 posted-WQE counter */
	struct emu_pin		pin;		/* the ring (the doorbell: db_pages) */
	uint32_t		wqe_cnt;	/* max_wr + 1 rounded up to a power of two */
	uint32_t		wqe_shift;	/* stride = 1 << wqe_shift */
	uint32_t		max_wr;		/* wqe_cnt - 1 */
	uint32_t		max_sge;	/* as asked, what QUERY_SRQ answers */
	uint32_t		limit;		/* srq_limit; armed when non-zero */
	bool			limit_armed;	/* the model fires IBV_EVENT_SRQ_LIMIT_REACHED once */
	unsigned		async_events;
	void			*dev_priv;
};

struct emu_ah {
	struct emu_obj		obj;
	struct emu_pd		*pd;
	struct ibv_ah_attr	attr;
};

struct emu_xrcd {
	struct emu_obj		obj;
	uint32_t		xrcdn;		/* subnet-wide: same inode, same number */
	dev_t			dev;		/* inode it is bound to, if any */
	ino_t			ino;
	bool			has_inode;
};

/* Multicast attachments (ATTACH_MCAST) are kept per QP by the core. */
struct emu_mcast {
	struct emu_qp		*qp;
	union ibv_gid		gid;
	uint16_t		lid;
	struct emu_mcast	*next;
};

enum { EMU_UCONTEXT_RESP_MAX = 128 };

/*
 * One opened uverbs device (one open() of /dev/infiniband/uverbsN, which
 * libibverbs turns into one ibv_context).
 */
struct emu_ctx {
	int			cmd_fd;		/* the memfd libibverbs writes commands to */
	unsigned		dev_index;	/* N of mlx5_N */
	bool			have_context;	/* GET_CONTEXT succeeded */
	/* MLX5_IB_ALLOC_UCTX_DEVX: the DEVX uid of the ucontext, else 0 */
	uint16_t		devx_uid;
	struct emu_evq		async;		/* GET_CONTEXT's async fd */
	/* GET_CONTEXT's mlx5 answer (mlx5_ib_alloc_ucontext_resp), for QUERY_CONTEXT */
	uint8_t			ucontext_resp[EMU_UCONTEXT_RESP_MAX];
	/* in a child of fork(): its parent's context (kernel/fork.c) */
	bool			inherited;

	/* our own MAP_SHARED view of the whole command fd (EMU_CMDFD_SIZE) */
	uint8_t			*map;
	uint32_t		num_uars;	/* UAR pages libmlx5 maps */
	uint32_t		tot_bfregs;	/* usable bfregs, 2 per UAR */
	uint32_t		low_lat_bfregs;	/* the last ones: one QP each */
	uint16_t		bfreg_users[2 * EMU_MAX_STATIC_UARS]; /* QPs per usable bfreg */
	/*
	 * UAR pages from num_uars up are UAR_OBJ_ALLOC's (ioctl_uar.c); a
	 * library with MLX5_LIB_CAP_DYN_UAR gets no static ones (dyn_uar_lib).
	 * Page id num_uars + i is uar_slots[i], i < uar_cap: the table grows
	 * with the highest id given out, up to the device's EMU_DEV_UARS.
	 */
	bool			dyn_uar_lib;
	struct emu_uar_slot	*uar_slots;
	uint32_t		uar_cap;

	/*
	 * One ucontext behind several descriptors (import.c): the memfd's
	 * identity, so that another descriptor of it (a dup(), one received
	 * over SCM_RIGHTS) is this context's command fd too, as each is the
	 * same uverbs file on the kernel; the context lives until the last is
	 * closed.  Each user context on top (ibv_import_device()) allocates
	 * its own async event file: more_async, which receive nothing.
	 */
	dev_t			file_dev;
	ino_t			file_ino;
	int			*alias_fds;
	unsigned		nalias;
	struct emu_evq		*more_async;
	unsigned		nmore_async;

	struct emu_obj		**objs;		/* handle table */
	uint32_t		nobjs;
	struct emu_channel	*channels;
	struct emu_mcast	*mcast;
	struct emu_db_page	*db_pages;	/* pinned doorbell pages (pin.c) */

	void			*dev_priv;	/* device model's per-context state */
	struct emu_ctx		*next;
};

/* ------------------------------------------------------------------------ */
/* Services to interpose/: the command fd and its descriptors (objects.c)   */

struct emu_ctx *emu_ctx_create(unsigned dev_index);	/* returns the cmd fd owner */
struct emu_ctx *emu_ctx_by_fd_locked(int fd);
bool emu_fd_is_cmd(int fd);
bool emu_fd_is_watched(int fd);
void emu_fd_closed(int fd);		/* a close() of any fd, lock not held */
/*
 * An fd that is another descriptor of a command fd becomes one too
 * (ibv_import_device() of a dup()); true if fd is a command fd.  Lock not
 * held.  interpose/ asks before fstat() and RDMA_VERBS_IOCTL.
 */
bool emu_fd_adopt(int fd);
void emu_release_all(void);		/* at exit */

/*
 * fork(): what a child of this host still has to do before it uses the
 * device (interpose/preload.c emu_fork_settle()), set by the atfork child
 * handler.  DISOWN: set the parent's contexts and device state aside;
 * JOIN: take a host slot of its own.
 */
#define EMU_FORK_DISOWN		1u
#define EMU_FORK_JOIN		2u
extern _Atomic unsigned emu_fork_pending;
/*
 * The inherited contexts are set aside (kernel/fork.c says what the child
 * is served on them): their descriptors stay command fds, and their
 * close() releases only what the child made.  Numbers (QPNs, ...) start
 * over.
 */
void emu_ctx_disown_locked(void);
struct emu_ctx *emu_ctx_inherited_by_fd_locked(int fd);
/*
 * The application's mmap() of a command fd (mmap.c): 0 if the kernel would
 * map it (*off may be rewritten to the page that shows it), else the errno
 * it answers.  *ops: the mapping is of MEMIC operation addresses, which no
 * memory shows (the device answers each access: emu_memic_ops_mapped()).
 * Lock not held.
 */
int emu_mmap_check(int fd, size_t len, int prot, int flags, off_t *off, bool *ops);
/*
 * Such a mapping made at addr, as inaccessible anonymous memory (the
 * original offset off): handed to the device.  0, or ENOMEM if the device
 * has no room for it (the caller unmaps it).  Lock not held.
 */
int emu_memic_ops_mapped(int fd, off_t off, void *addr, size_t len);
/* One command written to ctx's command fd (dispatch.c); 0 or a positive errno. */
/* buf is the user's address, read only through emu_copy_from_user() */
int emu_cmd_dispatch(struct emu_ctx *ctx, uint64_t buf, size_t len);
/* RDMA_VERBS_IOCTL: hdr is the user address of struct ib_uverbs_ioctl_hdr */
int emu_ioctl_dispatch(struct emu_ctx *ctx, uint64_t hdr);

/*
 * The command fd as the kernel presents it: the uverbs character device,
 * the real major, minors from 192 (sysfs "dev" says the same).
 */
#define EMU_UVERBS_MAJOR	231
#define EMU_UVERBS_MINOR0	192
struct stat;
void emu_cdev_stat(struct stat *st, unsigned dev_index);
/* fstat() as the kernel sees fd, with the lock held: a command fd is the device */
int emu_fd_stat_locked(int fd, struct stat *st);
/* ctx.c: the port as QUERY_PORT answers it (sysfs writes its files from it) */
struct ib_uverbs_query_port_resp;
void emu_port_attr(unsigned dev_index, unsigned port_num,
		   struct ib_uverbs_query_port_resp *r);
/* ctx.c: the device as QUERY_DEVICE answers it (RDMA netlink too) */
struct ib_uverbs_query_device_resp;
void emu_device_attr(unsigned dev_index, struct ib_uverbs_query_device_resp *r);

/*
 * nldev.c: the RDMA netlink requests (NETLINK_RDMA) about this host's
 * devices, answered as drivers/infiniband/core/netlink.c and nldev.c
 * answer them.  req holds what one send gave the socket (one message or
 * several); the answers go to emit() a datagram at a time, addressed to
 * portid; cap_ack: NETLINK_CAP_ACK is set (errors without the request's
 * payload).  Takes emu_lock.
 */
typedef void emu_nl_emit_fn(void *arg, const void *buf, size_t len);
void emu_nldev_request(const void *req, size_t len, uint32_t portid, bool cap_ack,
		       emu_nl_emit_fn *emit, void *arg);

/* ------------------------------------------------------------------------ */
/* Services to device/                                                      */

void emu_lock_acquire(void);
bool emu_lock_try(void);		/* false: another thread holds it */
/* false: another thread held it for ns */
bool emu_lock_wait(uint64_t ns);
void emu_lock_release(void);
bool emu_lock_held(void);	/* by the calling thread; for assertions */

/*
 * User memory as the kernel reaches it (user_mem.c): 0, or EFAULT where
 * copy_from_user()/copy_to_user() would fault; nothing faults here, the
 * lock may be held. For memory the application may unmap or protect
 * after it was pinned.
 */
int emu_copy_from_user(void *dst, uint64_t src, size_t len);
int emu_copy_to_user(uint64_t dst, const void *src, size_t len);
/*
 * ib_umem_get()'s test: [addr, addr + len) mapped without a hole, readable,
 * and writable if `write` (FOLL_WRITE); 0, EFAULT or ENOMEM.
 */
int emu_umem_check(uint64_t addr, uint64_t len, bool write);

/* capable(CAP_*) of the calling process: its effective set (pin.c) */
bool emu_capable(unsigned cap);

/*
 * Pinned pages (pin.c).  emu_umem_get() is ib_umem_get()'s refusal of
 * [addr, addr + len) with `held` pages this command pinned already:
 * EINVAL (wraps), EPERM (RLIMIT_MEMLOCK 0), ENOMEM (past it without
 * CAP_IPC_LOCK), EFAULT (emu_umem_check()); *pages is what to charge.
 * It charges nothing: the caller charges the object when it commits it.
 * emu_db_get()/emu_db_map()/emu_db_unmap() are the same for the page of
 * a doorbell record, pinned once per context (mlx5_ib_db_map_user()).
 */
int emu_umem_get(uint64_t held, uint64_t addr, uint64_t len, bool write,
		 uint64_t *pages);
void emu_pin_charge(struct emu_pin *pin, uint64_t pages);
void emu_pin_release(struct emu_pin *pin);
int emu_db_get(struct emu_ctx *ctx, uint64_t held, uint64_t db);	/* checks only */
int emu_db_map(struct emu_ctx *ctx, uint64_t db);	/* 0 or ENOMEM */
void emu_db_unmap(struct emu_ctx *ctx, uint64_t db);

/* UAR page idx of a context, beyond its static ones a UAR_OBJ_ALLOC one. */
static inline bool emu_uar_is_dyn(const struct emu_ctx *ctx, uint32_t idx)
{
	return idx >= ctx->num_uars;
}

/*
 * UAR page idx as mapped by libmlx5 with mmap cmd (REGULAR or NC); a
 * dynamic UAR has its one mapping whatever the cmd.
 */
static inline uint8_t *emu_uar_page(const struct emu_ctx *ctx,
				    enum emu_mmap_cmd cmd, uint32_t idx)
{
	if ((cmd == EMU_MMAP_REGULAR || cmd == EMU_MMAP_NC) && emu_uar_is_dyn(ctx, idx))
		cmd = EMU_MMAP_DYN_UAR;
	/* (cmd << 8 | idx) but for a dynamic page id past 255: the memfd's tail */
	return ctx->map + (((size_t)cmd << 8) + idx) * EMU_PAGE_SIZE;
}

/* Start of bfreg i's register (both halves: bf_reg_size/2 each). */
static inline uint8_t *emu_bfreg_addr(const struct emu_ctx *ctx,
				      enum emu_mmap_cmd cmd, uint32_t bfreg)
{
	return emu_uar_page(ctx, cmd, bfreg / EMU_BFREGS_PER_UAR) +
	       EMU_BF_OFFSET + (bfreg % EMU_BFREGS_PER_UAR) * EMU_BF_REG_SIZE;
}

/*
 * The device clock (clock.c): the free-running counter at
 * emu_core_clock_khz() (ctx.c, the device profile), as a CQE timestamp
 * carries it, and the pages that show it, refreshed by the engine's rounds
 * and by commands.
 */
uint32_t emu_core_clock_khz(void);
uint64_t emu_clock_cycles(void);
void emu_clock_tick_locked(void);

/*
 * Host-wide lookups by number or key (any context of this process): one
 * table per kind of number (objects.c), indexed by the number's low bits.
 * Inline, because the device model makes several for every packet.
 */
enum emu_num_kind { EMU_NUM_PD, EMU_NUM_CQ, EMU_NUM_QP, EMU_NUM_SRQ,
		    EMU_NUM_MKEY, EMU_NUM_PSV, EMU_NUM_RQ, EMU_NUM_RQT, EMU_NUM_TIR,
		    EMU_NUM_KIND_COUNT };
struct emu_num_space {
	void		**slot;		/* EMU_NUM_IDX_MASK + 1 entries */
	uint32_t	next;		/* rotate, so numbers are not reused at once */
	/*
	 * Numbers held with no object behind them (reserved QPNs): a lookup
	 * finds nothing there, and no object is given one.  A bitmap beside
	 * slot, so the lookups stay one load.
	 */
	uint64_t	*held;
	uint32_t	nheld;		/* numbers held */
	uint32_t	held_next;	/* rotate the held ranges as well */
};
extern struct emu_num_space emu_num_spaces[EMU_NUM_KIND_COUNT];

static inline void *emu_num_lookup_locked(enum emu_num_kind kind, uint32_t num)
{
	void **slot = emu_num_spaces[kind].slot;

	if (!slot || EMU_NUM_HOST(num) != emu_cfg.host_id)
		return NULL;
	return slot[num & EMU_NUM_IDX_MASK];
}

static inline struct emu_qp *emu_qp_by_qpn_locked(uint32_t qpn)
{
	return (struct emu_qp *)emu_num_lookup_locked(EMU_NUM_QP, qpn);
}

static inline struct emu_cq *emu_cq_by_cqn_locked(uint32_t cqn)
{
	return (struct emu_cq *)emu_num_lookup_locked(EMU_NUM_CQ, cqn);
}

static inline struct emu_srq *emu_srq_by_srqn_locked(uint32_t srqn)
{
	return (struct emu_srq *)emu_num_lookup_locked(EMU_NUM_SRQ, srqn);
}

/* mkeys: index in bits 31..8, a variant ("key") byte in 7..0 */
static inline struct emu_obj *emu_mkey_lookup_locked(uint32_t key, enum emu_obj_type type)
{
	struct emu_obj *o = (struct emu_obj *)emu_num_lookup_locked(EMU_NUM_MKEY, key >> 8);

	return o && o->type == type ? o : NULL;
}

static inline struct emu_mr *emu_mr_by_lkey_locked(uint32_t lkey)
{
	struct emu_mr *mr = (struct emu_mr *)emu_mkey_lookup_locked(lkey, EMU_OBJ_MR);

	return mr && mr->lkey == lkey ? mr : NULL;
}

static inline struct emu_mr *emu_mr_by_rkey_locked(uint32_t rkey)
{
	struct emu_mr *mr = (struct emu_mr *)emu_mkey_lookup_locked(rkey, EMU_OBJ_MR);

	return mr && mr->rkey == rkey ? mr : NULL;
}

static inline struct emu_mkey *emu_mkey_by_key_locked(uint32_t key)
{
	struct emu_mkey *mk = (struct emu_mkey *)emu_mkey_lookup_locked(key, EMU_OBJ_MKEY);

	return mk && mk->key == key ? mk : NULL;
}

static inline struct emu_psv *emu_psv_by_num_locked(uint32_t psvn)
{
	return (struct emu_psv *)emu_num_lookup_locked(EMU_NUM_PSV, psvn);
}

static inline struct emu_mw *emu_mw_by_rkey_locked(uint32_t rkey)
{
	struct emu_mw *mw = (struct emu_mw *)emu_mkey_lookup_locked(rkey, EMU_OBJ_MW);

	return mw && mw->rkey == rkey ? mw : NULL;
}

struct emu_ctx *emu_ctx_first_locked(void);	/* iterate with ->next */

/*
 * Memory-window binding.  The model validates the bind WQE, then calls this;
 * it records the binding and bumps mr->mw_bound so DEREG_MR fails with
 * EBUSY.  new_rkey carries the tag the bind WQE asked for.
 */
void emu_mw_bind_locked(struct emu_mw *mw, struct emu_mr *mr, struct emu_qp *qp,
			uint64_t addr, uint64_t length, uint32_t access,
			uint32_t new_rkey);
void emu_mw_unbind_locked(struct emu_mw *mw);

/*
 * Events, in the kernel's formats.  comp: one ib_uverbs_comp_event_desc
 * with the CQ's user_handle on its completion channel (none if it has no
 * channel); clears cq->armed.  async: one ib_uverbs_async_event_desc on the
 * context's async fd; element is the object's user_handle (or the port number
 * for port events, obj == NULL).  Both are non-blocking and never raise
 * SIGPIPE.
 */
void emu_post_comp_event_locked(struct emu_cq *cq);
void emu_post_async_event_locked(struct emu_ctx *ctx, struct emu_obj *obj,
				 uint64_t port_or_zero, enum ibv_event_type type);

/*
 * Move a QP to a new state from the device side (e.g. to IBV_QPS_ERR on a
 * transport error, or SQE), running the qp_modified hook.  Posting
 * IBV_EVENT_QP_FATAL etc. is the caller's choice.
 */
void emu_qp_set_state_locked(struct emu_qp *qp, enum ibv_qp_state state);

/*
 * Finish a CQ resize as the hardware does: write a RESIZE_CQ CQE (opcode 5)
 * into the OLD ring at producer index pi, where libmlx5 looks for it to copy
 * the outstanding CQEs, then switch buf/cqe_cnt/cqe_size to the resize_*
 * values.  The device model calls it from emu_dev_cq_resized() with its
 * producer index; the weak default uses the consumer index in dbrec[0].
 */
void emu_cq_finish_resize_locked(struct emu_cq *cq, uint32_t pi);

/* ------------------------------------------------------------------------ */
/* Hooks the device model implements (weak no-ops in hooks.c)               */

/*
 * Called when GET_CONTEXT completes (lock held).  A non-zero return (an
 * errno) fails ibv_open_device.  The model typically allocates ctx->dev_priv
 * and starts its thread here.
 */
int emu_dev_ctx_init(struct emu_ctx *ctx);
/* Called after every object of ctx was destroyed; lock NOT held. */
void emu_dev_ctx_fini(struct emu_ctx *ctx);
/*
 * In a child of fork(), the parent's device: its engine (no thread here),
 * wire and grants, forgotten without touching what the parent shares
 * (sockets in the subnet directory, its grant table).  Lock held.
 */
void emu_dev_disown_locked(void);

void emu_dev_cq_created(struct emu_cq *cq);
/* resize_* hold the new ring; must call emu_cq_finish_resize_locked(). */
void emu_dev_cq_resized(struct emu_cq *cq);
void emu_dev_cq_destroyed(struct emu_cq *cq);
/* CQEs written and not yet consumed (consumer index in dbrec[0]) */
uint32_t emu_dev_cq_held(const struct emu_cq *cq);

void emu_dev_qp_created(struct emu_qp *qp);
/*
 * After the attributes were applied; old is the state before the command.
 * The weak default raises IBV_EVENT_QP_LAST_WQE_REACHED when a QP with an
 * SRQ enters ERR (nothing is in flight without a device); a device model
 * should do the same once its in-flight receives are flushed.
 */
void emu_dev_qp_modified(struct emu_qp *qp, enum ibv_qp_state old,
			 uint32_t attr_mask);
void emu_dev_qp_destroyed(struct emu_qp *qp);
/* QUERY_QP's hw_sq_wqebb_counter: the BB of the next WQE the SQ executes */
uint16_t emu_dev_qp_sq_counter(const struct emu_qp *qp);

void emu_dev_srq_created(struct emu_srq *srq);
void emu_dev_srq_modified(struct emu_srq *srq, uint32_t attr_mask);
void emu_dev_srq_destroyed(struct emu_srq *srq);

/* Before the MW is unbound and freed. */
void emu_dev_mw_dealloc(struct emu_mw *mw);
/*
 * MEMIC operation addresses (device/memic.c): op's window of a DM's bytes
 * (bytes, len; NULL if the DM is gone) mapped at addr by the application
 * (0, or ENOMEM: no room); the DM of ctx at first_page freed: true if a
 * window still shows it, which then keeps its pages until the last such
 * window is unmapped (emu_dm_pages_release()), as the kernel's mmap
 * entries hold the MEMIC.  Lock held.
 */
int emu_dev_memic_mapped(const struct emu_ctx *ctx, uint32_t first_page, uint8_t op,
			 uint8_t *bytes, size_t len, void *addr, size_t maplen);
bool emu_dev_dm_freed(const struct emu_dm *dm);
void emu_dm_pages_release(const struct emu_ctx *ctx, uint32_t first_page, uint32_t pages);
/* Before an MR is freed or re-registered (what the device resolved through it is forgotten). */
void emu_dev_mr_dereg(struct emu_mr *mr);
/*
 * The application is about to change its mappings of [a, a + alen) and
 * [b, b + blen) (munmap, mmap MAP_FIXED, mremap, mprotect: interpose/).
 * Called without the lock.  True if the device protected a doorbell page
 * there (device/trap.c): it has given them back and forgotten them, holds
 * the lock, and the caller makes the change, then calls
 * emu_dev_vm_changed(), which releases it.
 */
bool emu_dev_vm_change(const void *a, size_t alen, const void *b, size_t blen);
void emu_dev_vm_changed(void);
/*
 * The application's sigaction() (interpose/): true if the device took it
 * (SIGSEGV/SIGBUS while its own fault handler is installed: act becomes the
 * handler it chains to, *old the one it chained to before).
 */
struct sigaction;
bool emu_dev_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/*
 * The application's ibv_poll_cq() found its CQ empty (interpose/verbs.c): the
 * device runs a pass in the caller's thread, if nobody else is in one. True
 * if it did any work, so that a second look may find a completion. Called
 * without the lock.
 */
bool emu_dev_poll_assist(void);
/*
 * The application arms a CQ by ibv_req_notify_cq(), after the provider has:
 * it is going to wait for an event, not to poll. Without the lock.
 */
void emu_dev_poll_arm(void);
/* Whether the device runs and takes those calls (on ibv_open_device()). */
bool emu_dev_poll_assist_on(void);

#endif /* RDMAFAST_EMU_KERNEL_H */
