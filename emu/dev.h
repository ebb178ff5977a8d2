/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dev.h - internals of the emulated HCA's device model (emu/dev_*.c).
 *
 * The model is one engine thread per process (one process is one host).  It
 * plays the part of every mlx5 device the process opened:
 *
 *   dev_thread.c  the engine loop: doorbell/BlueFlame watching, scheduling,
 *                 idle back-off, lifecycle (emu_dev_ctx_init/fini)
 *   dev_obj.c     per-object state behind the emu_dev_* hooks
 *   dev_sq.c      requester: WQE parsing, packetisation, in-order completion
 *   dev_rc.c      reliability: PSNs, ACK/NAK, retransmission, RNR back-off
 *   dev_resp.c    responder: executes request packets against local memory
 *   dev_rq.c      receive WQEs: RQ ring, SRQ linked list, RQ flush
 *   dev_cqe.c     CQE writing, overrun, arming and completion events
 *   dev_mem.c     protection: lkey/rkey/MW checks, scatter/gather copies, UMR
 *   dev_wire.c    the fabric: in-process loopback ring and Unix datagram wire
 *   dev_fault.c   fault injection (RFEMU_DROP, RFEMU_CORRUPT, ...)
 *
 * Every packet - even one between two QPs of the same process - goes through
 * dev_wire, so loopback and inter-process traffic run the same transport code
 * and fault injection applies to both.
 *
 * Locking: the engine holds emu_lock for a whole iteration (a batch of
 * doorbells, packets and timers), never per WQE.  Hooks run with emu_lock
 * held too, so hook and engine never run concurrently; all dev_* state is
 * protected by emu_lock unless a comment says otherwise.
 */
#ifndef RDMAFAST_EMU_DEV_H
#define RDMAFAST_EMU_DEV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>

#include "emu.h"

#define DEV_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DEV_UNLIKELY(x)		__builtin_expect(!!(x), 0)
#define DEV_LIKELY(x)		__builtin_expect(!!(x), 1)

/* ------------------------------------------------------------------------ */
/* Tunables                                                                 */

/*
 * Payload bytes per wire packet.  Not the IB path MTU (which only limits UD
 * here): a large MTU keeps the per-packet cost of the socket wire low while
 * still exercising segmentation, PSN ranges and partial retransmission.
 */
#define DEV_WIRE_MTU		(32u * 1024)
#define DEV_UD_MAX_MSG		4096u	/* UD messages are bounded by the path MTU */
#define DEV_MAX_SGE		64	/* a WQE holds at most 63 DS */
#define DEV_MAX_PKTS_INFLIGHT	512	/* per QP, unacknowledged request packets */
#define DEV_MAX_WQE_PER_ROUND	512	/* per QP per engine iteration (fairness) */
#define DEV_ATOMIC_REPLAY	16	/* responder cache of atomic results */

/*
 * A UD message must fit the port's active MTU, which part 1 answers as 4096
 * on InfiniBand and 1024 on RoCE (a 1500-byte Ethernet MTU); larger ones
 * fail locally with a length error, as on the HCA.
 */
static inline uint32_t dev_ud_max_msg(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 1024u : DEV_UD_MAX_MSG;
}

/* ------------------------------------------------------------------------ */
/* Byte order helpers                                                       */

static inline uint32_t dev_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint16_t dev_be16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

static inline uint64_t dev_be64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

/* PSNs are 24-bit serial numbers: a - b as a signed distance. */
static inline int32_t dev_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

#define DEV_PSN_MASK 0xffffffu

/* ------------------------------------------------------------------------ */
/* Scatter/gather lists resolved to process addresses                       */

struct dev_sge {
	uint8_t			*ptr;
	uint32_t		len;
	bool			local;		/* inline data in the device's WQE copy: cannot fault */
};

struct dev_sgl {
	unsigned		n;
	uint64_t		total;
	struct dev_sge		e[DEV_MAX_SGE];
};

/*
 * Copy between a flat buffer and an SGL at a byte offset into the SGL;
 * false if application memory faulted (dev_guard.c).
 */
bool dev_sgl_copy_out(const struct dev_sgl *sgl, uint64_t off, void *dst, uint32_t len);
bool dev_sgl_copy_in(const struct dev_sgl *sgl, uint64_t off, const void *src, uint32_t len);

/* ------------------------------------------------------------------------ */
/* Fault-safe access to application memory (dev_guard.c)                    */

void dev_guard_init(void);		/* install the fault handler */
void dev_guard_check(void);		/* put it back if the application replaced it */
void dev_guard_fini(void);
/* memcpy that returns false instead of faulting on either side */
bool dev_copy(void *dst, const void *src, size_t n);
/* fn(arg) with faults turned into a false return (atomics) */
bool dev_guard_call(void (*fn)(void *), void *arg);
bool dev_load_be32(const void *p, uint32_t *v);

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */

enum dev_op {
	/* requests, requester -> responder */
	DOP_SEND = 1,
	DOP_SEND_IMM,
	DOP_SEND_INV,
	DOP_WRITE,
	DOP_WRITE_IMM,
	DOP_READ,
	DOP_CS,		/* IB compare-and-swap, 8 bytes */
	DOP_FA,		/* IB fetch-and-add, 8 bytes */
	DOP_MCS,	/* masked compare-and-swap, 4 or 8 bytes */
	DOP_MFA,	/* masked fetch-and-add, 4 or 8 bytes */
	/* responses, responder -> requester */
	DOP_READ_RESP,
	DOP_ATOMIC_RESP,
	DOP_ACK,
	DOP_NAK,
};

enum {
	DPKT_FIRST	= 1 << 0,
	DPKT_LAST	= 1 << 1,
	DPKT_SE		= 1 << 2,	/* solicited event */
	DPKT_GRH	= 1 << 3,	/* sgid/dgid/flow/tclass/hop are valid */
	DPKT_CRC	= 1 << 4,	/* crc covers the packet: verify it */
};

/* NAK codes, in the spirit of the AETH syndrome */
enum {
	DNAK_SEQ = 1,		/* PSN sequence error: go back to psn */
	DNAK_RNR,		/* receiver not ready: retry after rnr_timer */
	DNAK_INV_REQ,		/* -> REMOTE_INVAL_REQ_ERR */
	DNAK_REM_ACCESS,	/* -> REMOTE_ACCESS_ERR */
	DNAK_REM_OP,		/* -> REMOTE_OP_ERR */
};

/*
 * Header of every packet.  Host byte order: both ends run on this machine.
 * Request packets of one message share raddr/rkey/dma_len (the RETH) and
 * carry their own offset, so any packet can be placed on its own.
 */
struct dev_pkt {
	uint32_t		size;		/* header + payload */
	uint8_t			op;		/* enum dev_op */
	uint8_t			flags;		/* DPKT_* */
	uint8_t			opmod;		/* masked atomics: 8 | log2(size) - 2 */
	uint8_t			sl;
	uint32_t		src_qpn;
	uint32_t		dst_qpn;
	uint32_t		psn;
	uint8_t			nak;		/* DNAK_* */
	uint8_t			rnr_timer;	/* DNAK_RNR: the responder's min_rnr_timer */
	uint16_t		slid;
	uint16_t		pkey_index;
	uint8_t			hop_limit;
	uint8_t			tclass;
	uint32_t		imm;		/* raw, as in the WQE (network order) */
	uint32_t		xrc_srqn;
	uint32_t		qkey;
	uint32_t		flow_label;
	uint32_t		rkey;
	uint64_t		raddr;
	uint32_t		dma_len;	/* whole message */
	uint32_t		offset;		/* of this payload within the message */
	uint32_t		len;		/* payload bytes after the header */
	uint32_t		pad;
	uint64_t		atomic[4];	/* swap|add, compare, swap_mask, compare_mask */
	uint8_t			sgid[16];
	uint8_t			dgid[16];
	uint64_t		crc;		/* DPKT_CRC: hash of everything after it */
	uint8_t			payload[];
};

/* ------------------------------------------------------------------------ */
/* Per-object device state                                                  */

struct dev_ctx;

struct dev_cq {
	struct emu_cq		*cq;
	uint32_t		pi;		/* CQEs written (free running) */
	uint32_t		last_event_pi;	/* pi after the last CQE that may wake a solicited arm */
	uint32_t		last_arm_word;	/* dbrec[1] as last seen */
	uint8_t			fired_sn;	/* sn of the last arm that fired; 0xff: none */
	bool			overrun;	/* CQ in error: no more CQEs */
	struct dev_cq		*next_on_uar;	/* CQs sharing a UAR page (arm doorbell) */
};

/* One issued-but-not-completed send WQE. */
struct dev_ent {
	uint32_t		wqe;		/* BB counter of the WQE's first BB */
	uint32_t		psn;		/* first PSN it uses */
	uint32_t		npkt;		/* PSNs it uses */
	uint32_t		sent;		/* request packets emitted so far */
	uint32_t		resp_next;	/* READ: next response packet expected */
	uint32_t		byte_len;	/* byte_cnt of its CQE */
	uint8_t			op;		/* WQE opcode */
	uint8_t			state;		/* DENT_* */
	uint8_t			syndrome;	/* 0 or RF_CQE_SYNDROME_* */
	uint8_t			flags;		/* DENTF_* */
};

enum { DENT_NEW, DENT_SENT, DENT_DONE };
enum {
	DENTF_SIGNALED	= 1 << 0,
	DENTF_RESP	= 1 << 1,	/* READ/atomic: completes on its response */
	DENTF_FENCE	= 1 << 2,	/* waits for earlier READ/atomic */
	DENTF_LOCAL	= 1 << 3,	/* NOP/UMR: executed by the requester alone */
	DENTF_SCAT	= 1 << 4,	/* its response data waits in dev_qp.scat for the CQE */
};

struct dev_qp {
	struct emu_qp		*qp;
	struct dev_ctx		*dctx;
	struct dev_qp		*next;		/* engine list of all QPs */
	struct dev_qp		*next_on_bf;	/* QPs sharing the bfreg */
	uint32_t		qpn;

	/* ---- requester ---- */
	uint32_t		sq_limit;	/* dbrec[1] seen at the last doorbell */
	uint32_t		sq_next;	/* next BB to parse (16 bits significant) */
	bool			sq_rung;	/* a doorbell arrived: parse up to sq_limit */
	struct dev_ent		*ent;		/* ring of sq_wqe_cnt entries */
	uint8_t			(*scat)[64];	/* requester scatter-to-CQE: data per entry */
	uint32_t		ent_mask;
	uint32_t		ent_head;	/* oldest not completed */
	uint32_t		ent_emit;	/* next to (re)emit */
	uint32_t		ent_tail;	/* next free */
	uint32_t		next_psn;
	uint32_t		pkts_out;	/* request packets not yet acknowledged */
	uint64_t		deadline;	/* retransmit timer (ns), 0 = off */
	uint64_t		rnr_until;	/* no emission before this (ns) */
	int			retry_left;
	int			rnr_left;
	bool			sq_error;	/* an error CQE is due: flush after it */

	/* ---- responder ---- */
	uint32_t		epsn;
	uint32_t		rq_ci;		/* RQ WQEs consumed */
	bool			recv_busy;	/* a multi-packet SEND holds a receive */
	uint8_t			*recv_wqe;
	uint32_t		recv_idx;
	struct emu_srq		*recv_srq;
	bool			uc_drop;	/* UC: drop until the next FIRST */
	bool			nak_sent;	/* one sequence NAK per gap */
	bool			ack_pending;
	uint32_t		ack_psn;
	uint32_t		ack_dst;	/* requester QPN */
	struct dev_qp		*next_ack;
	struct {
		uint32_t	psn;
		uint64_t	orig;
		bool		valid;
	} replay[DEV_ATOMIC_REPLAY];
	unsigned		replay_next;

	bool			flush_rq;	/* QP in ERR: flush posted receives */
	bool			last_wqe_sent;	/* IBV_EVENT_QP_LAST_WQE_REACHED posted */
	bool			busy;		/* on the engine's work list */
	struct dev_qp		*next_busy;
};

struct dev_srq {
	struct emu_srq		*srq;
	uint32_t		head;		/* next WQE index the device takes */
	uint32_t		taken;		/* WQEs consumed (16 bits significant) */
	bool			failed;		/* IBV_EVENT_SRQ_ERR raised: takes nothing */
};

/* A doorbell location: one 8-byte word of a UAR page in our view. */
struct dev_watch {
	_Atomic uint64_t	*addr;
	struct dev_ctx		*dctx;
	uint32_t		index;		/* bfreg, or UAR page for CQ arms */
	bool			is_cq;
};

struct dev_ctx {
	struct emu_ctx		*ctx;
	struct dev_ctx		*next;
	struct dev_qp		*bf_qps[EMU_MAX_UARS * EMU_BFREGS_PER_UAR];	/* by bfreg */
	struct dev_cq		*uar_cqs[EMU_MAX_UARS];			/* by UAR page */
};

/* ------------------------------------------------------------------------ */
/* Engine (dev_thread.c)                                                    */

struct dev_engine {
	struct dev_ctx		*ctxs;
	struct dev_qp		*qps;
	struct dev_qp		*busy;		/* QPs with SQ work this iteration */
	struct dev_qp		*acks;		/* QPs with a coalesced ACK due */
	struct dev_watch	*watch;
	unsigned		nwatch;
	unsigned		watch_cap;
	bool			watch_dirty;
	uint64_t		now;		/* ns, CLOCK_MONOTONIC, per iteration */
	unsigned		nqps;
	unsigned		timers;		/* QPs with a deadline or rnr wait */
	uint64_t		wqes;		/* statistics */
	uint64_t		pkts_tx, pkts_rx, pkts_dropped;
};

extern struct dev_engine dev_eng;

void dev_kick(void);			/* wake the engine (any thread) */
void dev_watch_rebuild_locked(void);
void dev_qp_set_busy(struct dev_qp *dq);
uint64_t dev_now_ns(void);

/* ------------------------------------------------------------------------ */
/* Objects (dev_obj.c)                                                      */

static inline struct dev_qp *dev_qp_of(const struct emu_qp *qp)
{
	return (struct dev_qp *)qp->dev_priv;
}

static inline struct dev_cq *dev_cq_of(const struct emu_cq *cq)
{
	return cq ? (struct dev_cq *)cq->dev_priv : NULL;
}

static inline struct dev_srq *dev_srq_of(const struct emu_srq *srq)
{
	return (struct dev_srq *)srq->dev_priv;
}

/* Move a QP to ERR from the device side and post the async event (or 0). */
void dev_qp_fatal(struct dev_qp *dq, enum ibv_event_type ev);
/*
 * How many WQEBBs/WQEs a doorbell record says are new since `done`, or -1 if
 * it is more than the queue holds ahead (a jump, or a move backwards in the
 * 16-bit counter): that record cannot be honoured without re-executing WQEs
 * the device has already consumed.
 */
static inline int32_t dev_db_avail(uint32_t db, uint32_t done, uint32_t qsize)
{
	uint32_t d = (db - done) & 0xffff;

	return d > qsize ? -1 : (int32_t)d;
}

/* ------------------------------------------------------------------------ */
/* CQEs and events (dev_cqe.c)                                              */

struct dev_cqe {
	uint8_t			opcode;		/* RF_CQE_* */
	uint8_t			wqe_op;		/* requester: WQE opcode */
	uint8_t			syndrome;	/* error CQEs */
	uint8_t			vendor;
	bool			se;
	uint8_t			g;		/* RF_CQE_GRH_* */
	uint8_t			sl;
	uint16_t		slid;
	uint16_t		wqe_counter;
	uint32_t		qpn;
	uint32_t		uidx;		/* srqn_uidx */
	uint32_t		rqpn;		/* remote QPN */
	uint32_t		byte_cnt;
	uint32_t		imm;		/* raw: immediate (network order), rkey, or pkey index */
	/*
	 * Scatter-to-CQE: scat_len (> 0) bytes at scat go into the CQE, not
	 * to memory; scat_max (32 or 64) is the QP's setting and picks the
	 * format (RF_INLINE_SCATTER_32: the CQE64 itself, _64: the 64 bytes
	 * before it, 128-byte CQEs only).
	 */
	const void		*scat;
	uint8_t			scat_len;
	uint8_t			scat_max;
};

/* May a message of len bytes on a QP with this setting go into the CQE of cq? */
static inline bool dev_scat_fits(uint8_t scat_max, const struct emu_cq *cq, uint64_t len)
{
	return scat_max && len && len <= scat_max && (scat_max == 32 || cq->cqe_size == 128);
}

void dev_cq_write(struct emu_cq *cq, const struct dev_cqe *c);
/* The vendor syndrome a ConnectX reports with an error syndrome. */
uint8_t dev_vendor_syndrome(uint8_t opcode, uint8_t syndrome);
/* CQ in error (overrun, or its memory went away): CQ_ERR, its QPs to ERR. */
void dev_cq_fail(struct dev_cq *dcq);
void dev_cq_arm_doorbell(struct dev_cq *dcq, uint32_t arm_word);
void dev_cq_check_arms(struct dev_cq *dcq);
void dev_cq_resize(struct dev_cq *dcq);

/* ------------------------------------------------------------------------ */
/* Memory protection (dev_mem.c)                                            */

/* Resolve [va, va+len) through an lkey of pd with the given IBV_ACCESS_* need. */
uint8_t *dev_lkey_ptr(uint32_t lkey, uint64_t va, uint64_t len,
		      const struct emu_pd *pd, uint32_t need);
/*
 * Resolve an rkey for a responder QP (type-2 MWs are bound to one QP).
 * Returns NULL on any violation.
 */
uint8_t *dev_rkey_ptr(uint32_t rkey, uint64_t va, uint64_t len,
		      const struct emu_pd *pd, const struct emu_qp *qp, uint32_t need);
/*
 * Gather list of a send WQE's data/inline segments seg[0..nseg) (wrapping
 * in [base, base+qsize)), and scatter list of a receive WQE for a message
 * of msg_len bytes: 0, DEV_SGL_PROT (a key, bound or access violation) or
 * DEV_SGL_LEN (an inline segment longer than the DS left for it, too many
 * entries).
 */
enum { DEV_SGL_PROT = -1, DEV_SGL_LEN = -2 };
int dev_sgl_from_dsegs(struct dev_sgl *sgl, const uint8_t *base, uint32_t qsize,
		       uint32_t off, unsigned nseg, const struct emu_pd *pd, uint32_t need);
struct dev_rwqe;
int dev_sgl_from_recv(struct dev_sgl *sgl, const struct dev_rwqe *r,
		      const struct emu_pd *pd, uint64_t msg_len);
/*
 * Memory-window bind / local invalidate from a UMR WQE of wqe_len bytes
 * (what its DS cover); 0 or a syndrome.
 */
uint8_t dev_umr_execute(struct dev_qp *dq, const uint8_t *sq, uint32_t qsize,
			uint32_t off, uint32_t wqe_len, uint32_t imm_key, uint8_t *wc_op);
/* Send-with-invalidate / local invalidate of an rkey on qp; 0 on success. */
int dev_invalidate_rkey(struct emu_qp *qp, const struct emu_pd *pd, uint32_t rkey);

/* ------------------------------------------------------------------------ */
/* Requester (dev_sq.c) and reliability (dev_rc.c)                          */

void dev_sq_process(struct dev_qp *dq);		/* parse, emit, complete */
void dev_sq_flush(struct dev_qp *dq);		/* QP in ERR: flush everything */
void dev_sq_reset(struct dev_qp *dq);
void dev_sq_complete(struct dev_qp *dq);

void dev_rc_on_response(struct dev_qp *dq, const struct dev_pkt *p);
void dev_rc_timers(void);
uint64_t dev_rc_next_deadline(void);	/* earliest retransmit/RNR time (ns), 0: none */
void dev_rc_rewind(struct dev_qp *dq, uint32_t psn);
uint64_t dev_rc_timeout_ns(uint8_t timeout);
uint64_t dev_rnr_delay_ns(uint8_t timer);
void dev_rc_read_resp_scatter(struct dev_qp *dq, struct dev_ent *e, const struct dev_pkt *p);

/* ------------------------------------------------------------------------ */
/* Responder (dev_resp.c) and receive queues (dev_rq.c)                     */

void dev_resp_packet(const struct dev_pkt *p);
void dev_resp_flush_acks(void);

struct dev_rwqe {
	uint8_t			*wqe;		/* first data segment (in buf) */
	uint32_t		nseg;		/* data segment slots */
	uint32_t		idx;		/* CQE wqe_counter */
	struct emu_srq		*srq;		/* NULL: the QP's RQ */
	/* the data segments as fetched from the queue (fault-safe copy) */
	uint8_t			buf[DEV_MAX_SGE * 16];
};

/* Take the next receive WQE from the QP's RQ or from srq; false when empty. */
bool dev_rq_take(struct dev_qp *dq, struct emu_srq *srq, struct dev_rwqe *r);
/* Re-locate a receive WQE already taken (multi-packet messages). */
void dev_rq_locate(struct dev_qp *dq, struct emu_srq *srq, uint32_t idx,
		   struct dev_rwqe *r);
void dev_rq_flush(struct dev_qp *dq);
void dev_srq_check_limit(struct emu_srq *srq);

/* ------------------------------------------------------------------------ */
/* The wire (dev_wire.c) and fault injection (dev_fault.c)                  */

int dev_wire_open(void);
void dev_wire_close(void);
/* An fd that polls readable when a socket has a packet (the idle engine sleeps on it). */
int dev_wire_wait_fd(void);
/* When the first delayed packet is due (ns), 0 if none. */
uint64_t dev_wire_next_due(void);
/*
 * Reserve room for a packet to dst_qpn's host; NULL when the path is
 * congested (local ring full).  Fill it, then dev_wire_send().
 */
struct dev_pkt *dev_wire_alloc(uint32_t payload);
void dev_wire_send(struct dev_pkt *p);
/*
 * Deliver queued packets (loopback ring, delayed, and the sockets if asked:
 * that costs a syscall); returns count.
 */
unsigned dev_wire_poll(bool sockets);
bool dev_wire_local_room(uint32_t payload);

struct dev_fault {
	double			drop;		/* RFEMU_DROP: probability per packet */
	double			corrupt;	/* RFEMU_CORRUPT */
	uint32_t		delay_us;	/* RFEMU_DELAY_US: added latency */
	double			delay_frac;	/* RFEMU_DELAY_FRAC: share delayed (1) */
	double			force_rnr;	/* RFEMU_FORCE_RNR */
	double			force_rae;	/* RFEMU_FORCE_REMOTE_ACCESS_ERR */
	bool			any;
};

extern struct dev_fault dev_fault;
void dev_fault_load(void);
bool dev_fault_hit(double p);
uint64_t dev_hash(const void *p, size_t n);

#endif /* RDMAFAST_EMU_DEV_H */
