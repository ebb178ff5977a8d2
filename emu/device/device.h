/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * device.h - internals of the emulated HCA's device model (this folder; the
 * wire below it is wire/).
 *
 * The model is one engine thread per process (one process is one host).  It
 * plays the part of every mlx5 device the process opened:
 *
 *   engine.c   the engine loop: doorbell/BlueFlame watching, scheduling,
 *              idle back-off, lifecycle (emu_dev_ctx_init/fini); the
 *              passes run by a doorbell's or a poll's own thread
 *   state.c    beneath the rest: the engine's state, clock, work list
 *              and wake-up, through which the other files reach it
 *   trap.c     doorbells that wake a sleeping engine: UAR pages
 *              write-protected while it sleeps, the faulting store written
 *   store.c    what a faulting doorbell store (and the rest of its
 *              BlueFlame copy) writes: the x86-64 instructions decoded
 *   grant.c    direct delivery: the grants under which a requester on
 *              another host writes a SEND into the responder's memory
 *   obj.c      per-object state behind the emu_dev_* hooks
 *   sq.c       requester: WQE parsing, packetisation, in-order completion
 *   rc.c       reliability: PSNs, ACK/NAK, retransmission, RNR back-off
 *   resp.c     responder: executes request packets against local memory
 *   rq.c       receive WQEs: RQ ring, SRQ linked list, RQ flush
 *   cqe.c      CQE writing, overrun, arming and completion events
 *   cqe_zip.c  compressed CQEs: sessions of mini-CQEs on CQs that ask
 *   mem.c      protection: lkey/rkey/MW checks, scatter/gather copies, UMR
 *   mkey.c     indirect mkeys: their UMR WQEs, data through them
 *   sig.c      signature mkeys: the BSF, SET_PSV, T10-DIF and CRC blocks
 *   guard.c    fault-safe access to application memory (MRs, queues,
 *              doorbell records, CQ rings)
 *   stats.c    rfemu_dev_stats(): the wire's packet counters, for tests
 *
 * How they fit together, and why: emu/DESIGN-device.md.
 *
 * It implements the hooks kernel/kernel.h declares and uses the kernel's
 * objects; it sends packets through wire/, which hands every packet that
 * arrives to dev_resp_packet().
 *
 * Every packet - even one between two QPs of the same process - goes through
 * the wire, so loopback and inter-process traffic run the same transport code
 * and fault injection applies to both.  The one exception is the loopback
 * shortcut (wire.h, sq.c, resp.c): a packet the ring would deliver next and
 * unchanged, which takes the same checks without being built in the ring.
 *
 * Locking: the engine holds emu_lock for a whole iteration (a batch of
 * doorbells, packets and timers), never per WQE.  Hooks run with emu_lock
 * held too, so hook and engine never run concurrently; all dev_* state is
 * protected by emu_lock unless a comment says otherwise.
 */
#ifndef RDMAFAST_EMU_DEVICE_H
#define RDMAFAST_EMU_DEVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

#include <rdmafast/hw/wqe.h>
#include <rdmafast/hw/cqe.h>

#include "kernel/kernel.h"
#include "wire/wire.h"

/* ------------------------------------------------------------------------ */
/* Tunables                                                                 */

#define DEV_UD_MAX_MSG		4096u	/* UD messages are bounded by the path MTU */
#define DEV_MAX_SGE		64	/* a WQE holds at most 63 DS */
#define DEV_ETH_HLEN		14	/* a raw packet QP's frame: at least its MAC header */
/* ... and at most a ConnectX port's largest MTU (9978) with the header and a VLAN tag */
#define DEV_ETH_MAX_FRAME	(9978 + DEV_ETH_HLEN + 4)
/*
 * Per QP, unacknowledged request packets: the requester's window.  A message
 * longer than the window goes out in pieces, each as ACKs make room.
 */
#define DEV_MAX_PKTS_INFLIGHT	512
#define DEV_DIRECT_MAX		64	/* requests delivered directly in one pass */
#define DEV_DIRECT_DATA		(64u * 1024)	/* their READ data, at most */
#define DEV_DIRECT_READ_MAX	4096	/* a READ delivered directly, at most */
#define DEV_MAX_WQE_PER_ROUND	512	/* per QP per engine iteration (fairness) */
/*
 * Responder resources for READ and atomic requests, one per request, kept
 * after the answer as the cache that answers duplicates (atomics are never
 * executed twice): as many as the device's max_qp_rd_atom (kernel/ctx.c), so
 * every request a requester may still retry has its entry.
 */
#define DEV_ATOMIC_REPLAY	16

/*
 * A UD message must fit the port's active MTU, which the kernel answers as 4096
 * on InfiniBand and 1024 on RoCE (a 1500-byte Ethernet MTU); larger ones
 * fail locally with a length error, as on the HCA.
 */
static inline uint32_t dev_ud_max_msg(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET ? 1024u : DEV_UD_MAX_MSG;
}

/*
 * The port's max_msg_sz (kernel mlx5_query_hca_port()/mlx5_query_port_roce():
 * 1 << log_max_msg): a longer message of any transport and opcode fails
 * locally with a length error, as on the HCA.
 */
static inline uint64_t dev_max_msg(void)
{
	return 1ull << emu_cfg.profile->log_max_msg;
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
	bool			sig;		/* into a signature key: the SGL's sig_in */
};

/* A failed signature check (sig.c), for its error CQE. */
struct dev_sig_err {
	uint16_t		synd;		/* 0: none */
	uint8_t			domain;
	uint32_t		mkey;
	uint32_t		exp_sig, act_sig, exp_ref, act_ref;
	uint64_t		offset;
};

/*
 * The range of a signature key an SGL scatters into (its one piece with
 * sig set): the key's wire bytes [off, off + len), which sig.c turns into
 * memory blocks as they arrive.
 */
struct dev_sig_in {
	struct emu_mkey		*mk;
	const struct emu_pd	*pd;
	uint64_t		off, len;
};

struct dev_sgl {
	unsigned		n;
	uint64_t		total;
	struct dev_sig_err	sig;		/* a check through a signature key failed */
	struct dev_sig_in	sig_in;
	struct dev_sge		e[DEV_MAX_SGE];
};

/*
 * Copy between a flat buffer and an SGL at a byte offset into the SGL;
 * false if application memory faulted (guard.c).  A copy in through a
 * signature key notes a failed check in sgl->sig (the first one).
 */
bool dev_sgl_copy_out(const struct dev_sgl *sgl, uint64_t off, void *dst, uint32_t len);
bool dev_sgl_copy_in(struct dev_sgl *sgl, uint64_t off, const void *src, uint32_t len);

/* ------------------------------------------------------------------------ */
/* Fault-safe access to application memory (guard.c)                    */

void dev_guard_init(void);		/* install the fault handler */
void dev_guard_check(void);		/* put it back if the application replaced it */
void dev_guard_fini(void);
/* memcpy that returns false instead of faulting on either side */
bool dev_copy(void *dst, const void *src, size_t n);
/* fn(arg) with faults turned into a false return (atomics) */
bool dev_guard_call(void (*fn)(void *), void *arg);
bool dev_load_be32(const void *p, uint32_t *v);

/* ------------------------------------------------------------------------ */
/* Doorbells that wake a sleeping engine (trap.c)                          */

struct dev_ctx;
/*
 * RFEMU_DOORBELL_TRAP, at engine start; a doorbell the handler wrote is
 * handed to assist (engine.c: a pass in the storing thread, or a kick)
 */
void dev_trap_init(void (*assist)(void));
void dev_trap_rebuild_locked(void);	/* the watched pages changed */
bool dev_trap_arm_locked(void);		/* protect them; false: cannot */
void dev_trap_disarm_locked(void);	/* give them back, if protected */
/*
 * A doorbell fault since arming?  *dctx (NULL if unknown) and *off: the
 * memfd page the last one hit, whose send queue doorbells may be taken as rung.
 */
bool dev_trap_take_locked(struct dev_ctx **dctx, uint64_t *off);
void dev_trap_fini_locked(void);
/* How many doorbell faults and mprotect() calls so far (rfemu_dev_stats) */
void dev_trap_counts(uint64_t *faults, uint64_t *mprotects);
/*
 * From the SIGSEGV handler (uc: its ucontext): true if the fault was a
 * trapped doorbell, which it either wrote itself and stepped over (a store
 * dev_store_decode() knows) or let through.
 */
bool dev_trap_fault(const void *addr, void *uc);
/*
 * MEMIC operation addresses (memic.c): from the SIGSEGV handler, true if
 * the fault was an access to them, answered; before the application
 * changes its mappings of [a, a + alen) and [b, b + blen), forget the
 * windows there (lock not held).
 */
bool dev_memic_fault(const void *addr, void *uc);
/* The context closes: its windows answer nothing from now (lock held). */
void dev_memic_ctx_fini_locked(const struct emu_ctx *ctx);
void dev_memic_forget(const void *a, size_t alen, const void *b, size_t blen);
/* How many of those faults wrote the store themselves (rfemu_dev_stats) */
uint64_t dev_trap_stores(void);
/* Does the handler write the stores it knows (RFEMU_DOORBELL_ASSIST)? */
bool dev_trap_writes_stores(void);

/* ------------------------------------------------------------------------ */
/* Leaving a doorbell fault (resume.c)                                      */

/*
 * Whether the handler can resume the thread itself: on x86-64, and not in
 * sanitizer builds (TSan and MSan deliver signals through handlers of
 * their own; ASan would keep the handler's stack frame poisoned, as after
 * a longjmp it was not told of).
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define DEV_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && !defined(__ILP32__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(DEV_SANITIZED)
#define DEV_RESUME_DIRECT 1
#else
#define DEV_RESUME_DIRECT 0
#endif

void dev_resume_init(void);		/* once the handler is installed */
/*
 * The end of a doorbell fault's handler: uc its ucontext, ret its return
 * address.  Resumes the thread without rt_sigreturn where it can; returns
 * (for the handler to return) where the kernel must.
 */
void dev_resume(void *uc, const void *ret);
uint64_t dev_resume_sigreturns(void);	/* faults that returned (rfemu_dev_stats) */

/* ------------------------------------------------------------------------ */
/* The store a faulting instruction makes (store.c)                         */

struct dev_store {
	unsigned		len;		/* bytes stored: 1 to 64 */
	unsigned		insn_len;	/* bytes of the instruction */
	uint8_t			data[64];
};

/* Whether store.c has a decoder for this architecture. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define DEV_STORE_DECODER 1
#else
#define DEV_STORE_DECODER 0
#endif

/* The store of the instruction the ucontext uc stopped at; false if unknown. */
bool dev_store_decode(const void *uc, struct dev_store *st);
/* Resume uc after that instruction (only for a store decoded above). */
void dev_store_skip(void *uc, const struct dev_store *st);
/*
 * The instruction after it, if it goes on with the same copy: a store
 * (its data in st, its address in *ea, for the caller to write and skip)
 * or a load into a register from ordinary memory (done: the register set
 * in uc, the instruction skipped).  Anything else is left to the CPU.
 */
enum { DEV_STEP_NONE, DEV_STEP_STORE, DEV_STEP_LOAD };
int dev_store_next(void *uc, struct dev_store *st, uintptr_t *ea);

/*
 * Any load into or store from a general register (x86-64 and aarch64; on
 * x86-64 an SSE one too), for the pages whose every access the device
 * answers (memic.c).  len: the bytes accessed; a store's bytes in st.
 */
struct dev_access {
	bool			load;
	unsigned		len;
	struct dev_store	st;
	/* store.c's: how to finish it */
	unsigned		insn_len, reg, base, dst_len;
	bool			high8, sign, writeback;
	int64_t			wb;
};

#if DEV_STORE_DECODER || defined(__aarch64__)
#define DEV_ACCESS_DECODER 1
#else
#define DEV_ACCESS_DECODER 0
#endif

bool dev_access_decode(const void *uc, struct dev_access *acc);
/* Finish it in uc: a load's register from `loaded` (len bytes); step over it. */
void dev_access_finish(void *uc, const struct dev_access *acc, const uint8_t *loaded);

/* ------------------------------------------------------------------------ */
/* Direct delivery: the requester does the responder's work (grant.c)      */

struct dev_qp;
struct dev_pkt;
struct dev_grant;
void dev_grant_init(void);		/* the host's table, at engine start */
void dev_grant_fini(void);		/* every grant back, the table gone */
void dev_grant_forget_parent(void);	/* in a child of fork() */
/*
 * responder: keep a grant out for dq (an RC QP, or the context of the DCI
 * a DCT serves: one at a time per DCT), or no longer
 */
void dev_grant_lend(struct dev_qp *dq);
void dev_grant_forget(struct dev_qp *dq);
/* responder: lend the MR of rkey to one-sided requests; an MR going away */
struct emu_mr;
void dev_grant_lend_rkey(uint32_t rkey);
void dev_grant_mr_gone(const struct emu_mr *mr);
/*
 * Take dq's grant back before anything touches what it lends (its QP's
 * receive state, its CQ's next entry): a delivered message is settled.
 */
void dev_grant_take(struct dev_qp *dq);
void dev_grant_take_all(void);
void dev_grant_pass_begin(void);	/* start of a pass: requesters wait for its end */
void dev_grant_publish(void);		/* end of a pass: grants for the lenders */
/*
 * requester: claim the grant of dst_qpn (NULL: none), then deliver a SEND,
 * write a WRITE, read a READ's data into buf, or give it back
 */
const struct dev_grant *dev_grant_claim(uint32_t dst_qpn);
bool dev_grant_deliver(const struct dev_grant *g, const struct dev_pkt *h, const void *payload);
bool dev_grant_write(const struct dev_grant *g, const struct dev_pkt *h, const void *payload);
bool dev_grant_read(const struct dev_grant *g, const struct dev_pkt *h, void *buf);
unsigned dev_grant_reads_flush(void);	/* the READs gathered: how many were read */
void dev_grant_release(const struct dev_grant *g);

/* ------------------------------------------------------------------------ */
/* Per-object device state                                                  */

struct dev_ctx;
struct dev_zip;

struct dev_cq {
	struct emu_cq		*cq;
	uint32_t		pi;		/* CQEs written (free running) */
	uint32_t		last_event_pi;	/* pi after the last CQE that may wake a solicited arm */
	uint32_t		last_arm_word;	/* dbrec[1] as last seen */
	uint8_t			fired_sn;	/* sn of the last arm that fired; 0xff: none */
	bool			overrun;	/* CQ in error: no more CQEs */
	uint32_t		mod_cqes;	/* CQEs since the arm (moderation) */
	uint64_t		mod_first;	/* when the first of them was written (ns) */
	uint64_t		mod_due;	/* moderation period ends (ns), 0: no timer */
	struct dev_cq		*next_on_uar;	/* CQs sharing a UAR page (arm doorbell) */
	struct dev_zip		*zip;		/* CQE compression on: held CQEs (cqe_zip.c) */
	struct dev_qp		*grant_qp;	/* its next entry is lent to this QP's grant */
};

/* One issued-but-not-completed send WQE. */
struct dev_ent {
	uint32_t		wqe;		/* BB counter of the WQE's first BB */
	uint32_t		psn;		/* first PSN it uses */
	uint32_t		npkt;		/* PSNs it uses */
	uint32_t		sent;		/* request packets emitted so far */
	uint32_t		acked;		/* WRITE/SEND: of them, known to have arrived */
	uint32_t		resp_next;	/* READ: next response packet expected */
	uint32_t		byte_len;	/* byte_cnt of its CQE */
	uint8_t			op;		/* WQE opcode */
	uint8_t			state;		/* DENT_* */
	uint8_t			syndrome;	/* 0 or RF_CQE_SYNDROME_* */
	uint8_t			flags;		/* DENTF_* */
	uint32_t		dct;		/* DCI: the DCT number the WQE names */
};

/*
 * DENT_NEW: not all of it emitted (the entry at ent_emit may have packets
 * out: sent > acked); DENT_SENT: all emitted, waiting for ACKs or responses.
 */
enum { DENT_NEW, DENT_SENT, DENT_DONE };
enum {
	DENTF_SIGNALED	= 1 << 0,
	DENTF_RESP	= 1 << 1,	/* READ/atomic: completes on its response */
	DENTF_FENCE	= 1 << 2,	/* waits for earlier READ/atomic */
	DENTF_LOCAL	= 1 << 3,	/* NOP/UMR: executed by the requester alone */
	DENTF_SCAT	= 1 << 4,	/* its response data waits in dev_qp.scat for the CQE */
	DENTF_HW	= 1 << 5,	/* queued by the device (tm.c): its WQE is in dev_qp.hw */
	DENTF_STREAM	= 1 << 6,	/* its error is its DCI stream's: the QP goes on */
};

/*
 * The tag list of a TM SRQ (tm.c): srq->tm_list_size entries, which
 * software names by index.  An APPEND fills the entry at `next` and makes
 * the index it carries the next one (libmlx5's free list, walked in the
 * same order on both sides).  hw_cnt counts the unexpected messages,
 * sw_cnt is what software last reported handled (IBV_OPS_TM_SYNC); the
 * device matches only while the two agree.
 */
struct dev_tm_entry {
	bool			valid;
	uint64_t		seq;		/* the order of the APPENDs */
	uint64_t		tag, mask;
	uint32_t		bc, lkey;	/* the tagged buffer: one data segment */
	uint64_t		addr;
};

/*
 * A WQE the device issues itself on a QP's send queue (a rendezvous READ
 * into a tagged buffer, its FIN; tm.c), with what its completion needs.
 */
struct dev_hw_wqe {
	uint8_t			wqe[64];	/* one BB, as libmlx5 would write it */
	uint8_t			tmh[16];	/* the rendezvous request's header */
	uint16_t		tm_idx;		/* the tag list entry it fills */
	uint32_t		len;
};

#define DEV_TM_HW_ENTS	16	/* a QP's room for them: 8 rendezvous at a time */

struct dev_tm {
	uint64_t		seq;
	uint16_t		next;
	uint16_t		hw_cnt, sw_cnt;
	struct dev_tm_entry	e[];
};

/*
 * A responder resource (resp.c): one READ or atomic request, its answer
 * sent a packet at a time as the link takes it (a READ's may be 32768
 * packets), in PSN order with everything else the responder sends.  It
 * stays after the answer as the replay cache that answers duplicates.
 */
struct dev_rd {
	uint32_t		psn;		/* the request's first PSN */
	uint32_t		npkt;		/* PSNs it uses: a READ's response packets */
	uint32_t		next;		/* next response to send, from psn */
	uint32_t		start;		/* the answer being sent began here */
	uint32_t		dst;		/* the requester's QPN */
	uint32_t		rkey;		/* READ: what it reads */
	uint32_t		len;
	uint64_t		raddr;
	const struct emu_pd	*pd;		/* compared with the key's, never read */
	uint64_t		orig;		/* atomics: the value answered */
	uint64_t		ticket;		/* wire_ticket() of the first answer's last packet */
	uint8_t			op;		/* DOP_READ or an atomic */
	bool			valid;
	bool			queued;		/* responses from next on are owed */
	bool			busy;		/* the first answer is not all sent */
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
	/*
	 * The READ at read_alone_psn is read from the responder on its own
	 * if it goes directly: gathered with others, it could not be (sq.c).
	 */
	uint32_t		read_alone_psn;
	bool			read_alone;
	uint64_t		deadline;	/* retransmit timer (ns), 0 = off */
	uint64_t		rnr_until;	/* no emission before this (ns): RNR, pacing */
	uint64_t		pace_end;	/* raw QP with a rate: its last frame's time ends (ns) */
	int			retry_left;
	int			rnr_left;
	/*
	 * A missing READ/atomic response was asked for again: later responses
	 * past the gap (already on their way) do not ask once more, until an
	 * expected one arrives or the timer fires.
	 */
	bool			rd_retry;
	bool			sq_error;	/* an error CQE is due: flush after it */
	/*
	 * A signature check failed on a QP with drain_sigerr: no WQE after
	 * that one is fetched; once every fetched one completed the QP is in
	 * SQD (IBV_EVENT_SQ_DRAINED), until software moves it back to RTS.
	 */
	bool			sig_drain;
	/*
	 * DCI: the DCT it is connected to (0: none).  A WQE for another DCT
	 * waits until every earlier one completed, then connects anew
	 * (dc_conn counts connections, dc_conn_psn is the first PSN).
	 */
	uint32_t		dc_peer;
	uint32_t		dc_conn;
	uint32_t		dc_conn_psn;

	/* ---- responder ---- */
	uint32_t		epsn;
	uint32_t		rq_ci;		/* RQ WQEs consumed */
	uint32_t		rx_drops;	/* raw QP: frames dropped since its last CQE */
	bool			recv_busy;	/* a multi-packet SEND holds a receive */
	uint8_t			*recv_wqe;
	uint32_t		recv_idx;
	struct emu_srq		*recv_srq;
	/*
	 * On a TM SRQ (tm.c): what the SEND held is (0: no TM; a DEV_TM_*
	 * app_op), its header, and for a matched one the entry and buffer.
	 */
	uint8_t			recv_tm;
	struct dev_hw_wqe	*hw;		/* by entry slot, for DENTF_HW entries */
	uint16_t		recv_tm_idx;
	uint8_t			recv_tmh[16];
	struct dev_tm_entry	recv_tm_buf;
	bool			uc_drop;	/* UC: drop until the next FIRST */
	bool			nak_sent;	/* one sequence NAK per gap */
	bool			ack_pending;
	uint32_t		ack_psn;
	uint32_t		ack_dst;	/* requester QPN */
	struct dev_qp		*next_ack;
	bool			ack_held;	/* ack_pending, behind answers still owed */
	bool			nak_held;	/* a NAK behind answers still owed: */
	uint8_t			held_nak;	/* ... its DNAK_* */
	uint32_t		held_nak_psn;
	uint32_t		held_nak_dst;
	struct dev_rd		replay[DEV_ATOMIC_REPLAY];
	unsigned		replay_next;

	/*
	 * DCT: one responder context per DCI that connected (dc_conns, linked
	 * by dc_next), each a dev_qp of its own whose qp is the DCT and whose
	 * dc_src is the DCI; dc_conn is the connection it serves.
	 */
	struct dev_qp		*dc_conns;
	struct dev_qp		*dc_next;
	uint32_t		dc_src;
	uint16_t		dc_rlid;	/* its responses' DLID: the DCI's SLID */
	uint8_t			dc_rgid[16];	/* ... and DGID: the DCI's SGID */
	bool			dc_grh;		/* the DCI's requests carry a GRH */

	bool			flush_rq;	/* QP in ERR: flush posted receives */
	bool			last_wqe_sent;	/* IBV_EVENT_QP_LAST_WQE_REACHED posted */
	bool			busy;		/* on the engine's work list */
	struct dev_qp		*next_busy;

	/* ---- direct delivery (grant.c) ---- */
	bool			lender;		/* keeps a grant out: on the lenders' list */
	bool			granted;	/* its grant is out (READY, CLAIMED or DONE) */
	uint32_t		grant_srq_next;	/* its grant's SRQ WQE links to this one */
	struct dev_qp		*next_lender;
	struct dev_qp		*dc_lender;	/* DCT: the context lending its grant */
};

struct dev_srq {
	struct emu_srq		*srq;
	uint32_t		head;		/* next WQE index the device takes */
	uint32_t		taken;		/* WQEs consumed (16 bits significant) */
	bool			failed;		/* IBV_EVENT_SRQ_ERR raised: takes nothing */
	struct dev_qp		*grant_qp;	/* its head WQE is lent to this QP's grant */
	struct dev_tm		*tm;		/* a TM SRQ's tag list (tm.c), else NULL */
};


/*
 * A doorbell location: one 8-byte word of a UAR page in our view, and the
 * list of what rings it, a slot of its context's bf_qps or uar_cqs (which
 * only a rebuild of the watches may see move).
 */
struct dev_watch {
	_Atomic uint64_t	*addr;
	union {
		struct dev_qp	**qps;
		struct dev_cq	**cqs;
	};
	bool			is_cq;
};

/*
 * The QPs on each bfreg and the CQs on each UAR page of a context, for as
 * many pages as its QPs and CQs use (dev_ctx_fit()): a context may have
 * thousands of UARs, most have a few.
 */
struct dev_ctx {
	struct emu_ctx		*ctx;
	struct dev_ctx		*next;
	struct dev_qp		**bf_qps;	/* by bfreg: EMU_BFREGS_PER_UAR a page */
	struct dev_cq		**uar_cqs;	/* by UAR page */
	uint32_t		nuars;		/* pages both cover */
};

/* ------------------------------------------------------------------------ */
/* Engine: its state (state.c) and its passes (engine.c)                    */

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
	unsigned		cq_timers;	/* CQs with a moderation period running */
	uint64_t		wqes;		/* statistics */
	uint64_t		last_event;	/* ns: the last completion event */
	uint64_t		last_assist;	/* ns: an application's poll ran a pass */
	uint64_t		assist_wire;	/* ns: such a pass looked at the sockets */
	uint64_t		assists;	/* passes run from applications' polls */
	uint64_t		db_assists;	/* passes run from doorbell faults */
	uint64_t		db_assist_wire;	/* ns: such a pass looked at the sockets */
	_Atomic uint64_t	db_handovers;	/* doorbells those faults left to the engine */
	uint64_t		engine_passes;	/* passes run by the engine thread */
	uint64_t		sleep_until;	/* ns: the sleeping engine's wake-up, 0: awake */
	uint32_t		assist_streak;	/* of them since a CQ was last armed */
	uint8_t			zip_mode;	/* EMU_CQE_COMPRESS_*, at engine start */
	struct dev_zip		*zip_held;	/* CQs holding CQEs back (cqe_zip.c) */
	/*
	 * What the requests delivered directly earned (an ACK, or a READ's
	 * data), taken in order after the pass's emission (sq.c).
	 */
	struct dev_direct {
		struct dev_qp	*dq;		/* NULL: its QP went away */
		uint32_t	psn;
		uint32_t	len;		/* READ: its data, at off in direct_data */
		uint32_t	off;
		bool		read;
	}			direct[DEV_DIRECT_MAX];
	unsigned		ndirect;
	uint32_t		direct_used;
	uint8_t			direct_data[DEV_DIRECT_DATA];
	bool			resp_owed;	/* a responder has answers left to send */
	int			kick_fd;	/* eventfd the engine sleeps on; -1: none */
};

/* state.c */
extern struct dev_engine dev_eng;
void dev_kick(void);			/* wake the engine (any thread) */
void dev_watch_changed(void);		/* a bfreg or CQ UAR gained or lost a watcher */
void dev_qp_set_busy(struct dev_qp *dq);
uint64_t dev_now_ns(void);

/* engine.c */
void dev_watch_rebuild_locked(void);

/* ------------------------------------------------------------------------ */
/* Objects (obj.c)                                                          */

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

/* The port a QP's packets leave from. */
static inline const struct emu_port_id *dev_qp_port(const struct emu_qp *qp)
{
	unsigned port = qp->attr.port_num ? qp->attr.port_num : 1;

	return &emu_cfg.dev[qp->obj.ctx->dev_index].port[(port - 1) % EMU_MAX_PORTS];
}

/*
 * READ/atomic requests a QP may have outstanding for a max_rd_atomic or
 * max_dest_rd_atomic of n: mlx5 programs log2 rounded up (the kernel's
 * mlx5_ib qp.c, fls(n - 1) into log_sra_max / log_rra_max), so 0 and 1
 * allow one, 5 allows eight.
 */
static inline unsigned dev_rd_atomic_limit(uint8_t n)
{
	unsigned lg = 0;

	while (n > 1 && (1u << lg) < n)
		lg++;
	return 1u << lg;
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
/* CQEs and events (cqe.c)                                                  */

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
	 * The receive of an Ethernet RQ (a raw QP's or a WQ's, eth.c): its
	 * steering entry's 24-bit flow tag (IBV_FLOW_SPEC_ACTION_TAG, 0 for
	 * none) takes the QPN's place in sop_drop_qpn, where libmlx5's
	 * mlx5_cq_read_flow_tag() reads it (and its poll the qp_num), with
	 * rx_drops, the frames the RQ dropped for want of a WQE since its
	 * last CQE, in the top byte; the frame's L3 and L4 header types; an
	 * RSS TIR's hash and what it hashed.
	 */
	bool			eth;
	uint8_t			rx_drops;
	uint8_t			l4_l3_hdr_type;	/* what the parser found (eth.c) */
	uint8_t			rss_hash_type;
	uint32_t		flow_tag;
	uint32_t		rss_hash;
	/*
	 * Scatter-to-CQE: scat_len (> 0) bytes at scat go into the CQE, not
	 * to memory; scat_max (32 or 64) is the QP's setting and picks the
	 * format (RF_INLINE_SCATTER_32: the CQE64 itself, _64: the 64 bytes
	 * before it, 128-byte CQEs only).
	 */
	const void		*scat;
	uint8_t			scat_len;
	uint8_t			scat_max;
	/*
	 * Tag matching (tm.c): app_op (DEV_TM_*, 0: not a TM CQE), app_info
	 * and the 16 bytes the CQE64 starts with (struct mlx5_tm_cqe, or the
	 * TMH of a matched message).
	 */
	uint8_t			tm_op;
	uint16_t		tm_info;
	uint8_t			tm_head[16];
	/* RF_CQE_SIG_ERR: bytes 16..63 of the CQE64 (struct mlx5_sigerr_cqe) */
	const uint8_t		*raw;
};

/* app_op of a tag-matching CQE (MLX5_CQE_APP_OP_TM_*, libmlx5's cq.c) */
enum {
	DEV_TM_CONSUMED		= 0x01,	/* a rendezvous matched: its READ follows */
	DEV_TM_EXPECTED		= 0x02,	/* ... and is done: the data is in the buffer */
	DEV_TM_CONSUMED_MSG	= 0x0a,	/* matched: the whole message is in the buffer */
	DEV_TM_CANCELED		= 0x0c,	/* a rendezvous READ failed */
	DEV_TM_UNEXPECTED	= 0x03,	/* tagged, no entry matched (or none may) */
	DEV_TM_NO_TAG		= 0x04,	/* IBV_TMH_NO_TAG, or no tag-matching header */
	DEV_TM_APPEND		= 0x05,
	DEV_TM_REMOVE		= 0x06,
	DEV_TM_NOOP		= 0x07,
};
#define DEV_CQE_APP_TM		1	/* the CQE's app: tag matching */

/* May a message of len bytes on a QP with this setting go into the CQE of cq? */
static inline bool dev_scat_fits(uint8_t scat_max, const struct emu_cq *cq, uint64_t len)
{
	return scat_max && len && len <= scat_max && (scat_max == 32 || cq->cqe_size == 128);
}

void dev_cq_write(struct emu_cq *cq, const struct dev_cqe *c);
/* The pieces of dev_cq_write(), for cqe_zip.c's sessions. */
void dev_cq_write_now(struct dev_cq *dcq, const struct dev_cqe *c);
bool dev_cq_has_room(const struct dev_cq *dcq, uint32_t n);
uint8_t dev_cqe_build(const struct emu_cq *cq, const struct dev_cqe *c, uint8_t *body);
bool dev_cq_put(struct dev_cq *dcq, uint32_t pi, const uint8_t *body, uint8_t op_own);
void dev_cq_refuse(struct dev_cq *dcq, uint32_t qpn);
void dev_cq_written(struct dev_cq *dcq, uint32_t n, bool wakes_solicited);
/* The vendor syndrome a ConnectX reports with an error syndrome. */
uint8_t dev_vendor_syndrome(uint8_t opcode, uint8_t syndrome);
/* CQ in error (overrun, or its memory went away): CQ_ERR, its QPs to ERR. */
void dev_cq_fail(struct dev_cq *dcq);
void dev_cq_arm_doorbell(struct dev_cq *dcq, uint32_t arm_word);
void dev_cq_check_arms(struct dev_cq *dcq);
void dev_cq_resize(struct dev_cq *dcq);
void dev_cq_timers(void);		/* fire the CQ events whose moderation period ended */
uint64_t dev_cq_next_due(void);		/* earliest such end (ns), 0: none */
void dev_cq_stop_timer(struct dev_cq *dcq);

/* ------------------------------------------------------------------------ */
/* Compressed CQEs (cqe_zip.c)                                              */

/* The most mini-CQEs in a session: cqe_comp_caps.max_num (kernel/ctx.c). */
#define DEV_ZIP_MAX	64

/* Start holding CQEs back on a CQ created with compression (or not: mode). */
void dev_zip_cq_created(struct dev_cq *dcq);
void dev_zip_cq_destroyed(struct dev_cq *dcq);
/* Hold c back for a session (true), or not: then write it now (false). */
bool dev_zip_hold(struct dev_cq *dcq, const struct dev_cqe *c);
/* Write what dcq holds: a session, or single CQEs. */
void dev_zip_flush(struct dev_cq *dcq);
/* End of an engine pass; idle: the pass found no work. */
void dev_zip_pass_done(bool idle);

/* ------------------------------------------------------------------------ */
/* Memory protection (mem.c)                                                */

/*
 * Every access the device makes to process memory is resolved through a
 * key, exactly as the HCA's memory translation does: the key must exist
 * (including its variant byte), belong to the QP's protection domain, grant
 * the access and cover the whole range.  Anything else yields NULL and the
 * caller turns that into the error the transport prescribes; the target
 * memory is never touched by a failing operation because every range is
 * checked before the first byte moves.  Inline: a packet resolves one or
 * two keys.
 *
 * On-demand paging is per transport: a ConnectX raises page faults for RC,
 * UD, XRC and DC, never for UC (the firmware's uc_odp_caps is 0, which the
 * kernel reports as is: kernel/odp.c).  Without the fault, a UC access
 * to a page the ODP MR's translation lacks fails where RC's would have
 * waited for the page; before kernel 5.4 the driver refused the fault
 * itself ("ODP fault on QP of an unsupported transport",
 * drivers/infiniband/hw/mlx5/odp.c) and resumed the QP with an error.
 * The model keeps no translation of its own (it reads the page tables at
 * each access, guard.c), so it cannot tell which pages a ConnectX would
 * already hold: every UC access through an ODP MR fails, as a missing
 * page would.  A UC QP asks for that as one more access right,
 * DEV_NEED_PINNED, which every MR but an ODP one grants.
 */
#define DEV_NEED_PINNED		IBV_ACCESS_ON_DEMAND

/* What an access by qp needs of the keys it goes through. */
static inline uint32_t dev_qp_need(const struct emu_qp *qp, uint32_t need)
{
	return qp->type == IBV_QPT_UC ? need | DEV_NEED_PINNED : need;
}

/* Whether an MR grants need: its access flags, and DEV_NEED_PINNED unless it is ODP. */
static inline bool dev_mr_grants(const struct emu_mr *mr, uint32_t need)
{
	return ((mr->access ^ DEV_NEED_PINNED) & need) == need;
}

/*
 * Whether a memory window's or an indirect mkey's own access flags grant
 * need: DEV_NEED_PINNED is for the MRs under it to grant.
 */
static inline bool dev_key_grants(uint32_t access, uint32_t need)
{
	return ((access | DEV_NEED_PINNED) & need) == need;
}

/* [va, va+len) inside [base, base+size), without overflow. */
static inline bool dev_in_range(uint64_t va, uint64_t len, uint64_t base, uint64_t size)
{
	return va >= base && len <= size && va - base <= size - len;
}

/* Resolve [va, va+len) through an lkey of pd with the given IBV_ACCESS_* need. */
static inline uint8_t *dev_lkey_ptr(uint32_t lkey, uint64_t va, uint64_t len,
				    const struct emu_pd *pd, uint32_t need)
{
	struct emu_mr *mr = emu_mr_by_lkey_locked(lkey);

	/* local read is always allowed; everything else must be granted */
	if (DEV_UNLIKELY(!mr || mr->pd != pd || !dev_mr_grants(mr, need) ||
			 !dev_in_range(va, len, mr->iova, mr->length)))
		return NULL;
	return (uint8_t *)(uintptr_t)(mr->addr + (va - mr->iova));
}

/* The same through an indirect mkey, when the range lies in one of its entries (mkey.c). */
uint8_t *dev_mkey_ptr(uint32_t key, uint64_t va, uint64_t len, const struct emu_pd *pd,
		      uint32_t need);

/* The same through a memory window's rkey (mem.c), else an indirect mkey's. */
uint8_t *dev_mw_ptr(uint32_t rkey, uint64_t va, uint64_t len,
		    const struct emu_pd *pd, const struct emu_qp *qp, uint32_t need);

/*
 * Resolve an rkey for a responder QP: an MR's, or a memory window's (a
 * type-2 window is bound to one QP).  NULL on any violation.
 */
static inline uint8_t *dev_rkey_ptr(uint32_t rkey, uint64_t va, uint64_t len,
				    const struct emu_pd *pd, const struct emu_qp *qp,
				    uint32_t need)
{
	struct emu_mr *mr = emu_mr_by_rkey_locked(rkey);

	if (!mr)
		return dev_mw_ptr(rkey, va, len, pd, qp, need);
	if (DEV_UNLIKELY(mr->pd != pd || !dev_mr_grants(mr, need) ||
			 !dev_in_range(va, len, mr->iova, mr->length)))
		return NULL;
	return (uint8_t *)(uintptr_t)(mr->addr + (va - mr->iova));
}

/*
 * The gather list of a send WQE (sq.c) and the scatter list of a receive
 * WQE for a message of msg_len bytes: 0, DEV_SGL_PROT (a key, bound or
 * access violation) or DEV_SGL_LEN (an inline segment longer than the DS
 * left for it, too many entries).
 */
enum { DEV_SGL_PROT = -1, DEV_SGL_LEN = -2 };
/*
 * Indirect mkeys (mkey.c): [va, va + len) of key appended to an SGL as the
 * pieces its entries map (0 or a DEV_SGL_*); for a responder, whether an
 * rkey (MR, window or indirect mkey) grants need over a whole range, and
 * a copy to (to_mem) or from its memory however many pieces it spans.
 */
int dev_mkey_sgl(struct dev_sgl *sgl, uint32_t key, uint64_t va, uint64_t len,
		 const struct emu_pd *pd, uint32_t need);
bool dev_rkey_ok(uint32_t rkey, uint64_t va, uint64_t len, const struct emu_pd *pd,
		 const struct emu_qp *qp, uint32_t need);
/*
 * ... bytes [off, off + len) of a message to (to_mem) or from [mva, mva +
 * mlen) of rkey: a signature key's checks are made over the message (a
 * failed one noted in err), its blocks split between packets included
 */
bool dev_rkey_copy(uint32_t rkey, uint64_t mva, uint64_t mlen, uint64_t off, void *buf,
		   uint32_t len, const struct emu_pd *pd, const struct emu_qp *qp, uint32_t need,
		   bool to_mem, struct dev_sig_err *err);
/* an mkey's invalidation: 0, or -1 if refused (qp NULL: local) */
int dev_mkey_invalidate(struct emu_qp *qp, const struct emu_pd *pd, uint32_t key);
/* len bytes of mk's memory layout at offset off, appended to sgl (mkey.c) */
int dev_mkey_map(struct dev_sgl *sgl, const struct emu_mkey *mk, uint64_t off, uint64_t len,
		 const struct emu_pd *pd, uint32_t need);
/* ... or copied to buf */
bool dev_mkey_read(const struct emu_mkey *mk, uint64_t off, void *buf, uint32_t len,
		   const struct emu_pd *pd);
/* ... or copied from buf (the entries locally writable) */
bool dev_mkey_write(const struct emu_mkey *mk, uint64_t off, const void *buf, uint32_t len,
		    const struct emu_pd *pd);
/* ... or only checked: every byte mapped by an entry that grants need */
bool dev_mkey_covers(const struct emu_mkey *mk, uint64_t off, uint64_t len,
		     const struct emu_pd *pd, uint32_t need);
/* signature mkeys (sig.c) */
uint8_t dev_sig_parse(const struct dev_qp *dq, const struct emu_mkey *mk, const uint8_t *bsf,
		      struct emu_mkey_sig *s);
bool dev_sig_commit(struct emu_mkey *mk, const struct emu_mkey_sig *s);
void dev_sig_disable(struct emu_mkey *mk);
uint8_t dev_sig_set_psv(const struct dev_qp *dq, const uint8_t *seg);
int dev_sig_gather(struct dev_sgl *sgl, struct emu_mkey *mk, uint64_t va, uint64_t len,
		   const struct emu_pd *pd);
int dev_sig_scatter(struct dev_sgl *sgl, struct emu_mkey *mk, uint64_t va, uint64_t len,
		    const struct emu_pd *pd, uint32_t need);
/* may [va, va + len) of signature key mk be used for need (its wire bytes)? */
bool dev_sig_range_ok(const struct emu_mkey *mk, uint64_t va, uint64_t len,
		      const struct emu_pd *pd, uint32_t need);
/* bytes [off, off + len) of a scatter's piece placed from in; false on a fault */
bool dev_sig_scatter_in(const struct dev_sig_in *si, uint64_t off, const uint8_t *in,
			uint32_t len, struct dev_sig_err *err);
/* dev_rkey_copy() through a signature key: out of it (a READ's), into it (a WRITE's) */
bool dev_sig_read(struct emu_mkey *mk, uint64_t mva, uint64_t mlen, uint64_t off, void *buf,
		  uint32_t len, const struct emu_pd *pd, struct dev_sig_err *err);
bool dev_sig_write(struct emu_mkey *mk, uint64_t mva, uint64_t mlen, uint64_t off,
		   const void *buf, uint32_t len, const struct emu_pd *pd, struct dev_sig_err *err);
void dev_sig_err_cqe(struct emu_cq *cq, uint32_t qpn, const struct dev_sig_err *e);
/* a UMR WQE (w, len bytes) on an indirect mkey: 0 or a syndrome */
uint8_t dev_mkey_umr(struct dev_qp *dq, const uint8_t *w, uint32_t len,
		     struct emu_mkey *mk);

/* The mkey context segment of a UMR WQE: its free bit, its access byte as IBV_ACCESS_*. */
#define DEV_MKC_FREE	(1 << 6)
static inline uint32_t dev_umr_access(uint8_t acc)
{
	return (acc & (1 << 6) ? IBV_ACCESS_REMOTE_ATOMIC : 0) |
	       (acc & (1 << 5) ? IBV_ACCESS_REMOTE_WRITE : 0) |
	       (acc & (1 << 4) ? IBV_ACCESS_REMOTE_READ : 0) |
	       (acc & (1 << 3) ? IBV_ACCESS_LOCAL_WRITE : 0);
}
/*
 * eth.c: a frame a raw packet QP sent, len bytes at frame with room for
 * EMU_REFORMAT_MAX_DATA more, to the flow rules of its port
 */
void dev_eth_steer(const struct emu_qp *from, uint8_t *frame, uint32_t len);
/* The headers of a frame, as far as it has them (eth.c parses them). */
struct eth_hdrs {
	const uint8_t	*mac;		/* 14 bytes: dst, src, EtherType */
	uint16_t	ethertype;	/* after a VLAN tag, if any */
	uint16_t	vlan_tci;	/* network order */
	bool		tagged;		/* a VLAN tag came before the EtherType */
	const uint8_t	*ip4;		/* a whole IPv4 header, or NULL */
	const uint8_t	*ip6;		/* a whole IPv6 header, or NULL */
	uint8_t		proto;		/* its L4 protocol */
	const uint8_t	*l4;		/* 4 bytes of ports, or NULL */
	const uint8_t	*spi;		/* an ESP or AH header's IPsec SPI, or NULL */
};
void dev_eth_parse(const uint8_t *frame, uint32_t len, struct eth_hdrs *h);
bool dev_eth_rule_matches(const struct emu_flow *r, const struct eth_hdrs *h);
/*
 * reformat.c: a's encap pushed in front of the frame (room for a->len more
 * bytes at frame), its new length; the offset of a VXLAN frame's inner
 * frame, or 0
 */
uint32_t dev_eth_encap(const struct emu_flow_action *a, uint8_t *frame, uint32_t len);
uint32_t dev_eth_decap_offset(const struct eth_hdrs *h, const uint8_t *frame, uint32_t len);
/* rss.c: Toeplitz over n bytes with a 40-byte key; a frame an RSS QP takes */
uint32_t dev_toeplitz(const uint8_t *key, const uint8_t *in, size_t n);
/* A frame steering hands to a receive queue: the entry that steered it, its headers, bytes */
struct dev_eth_rx {
	const struct emu_flow	*entry;
	const struct eth_hdrs	*h;
	const uint8_t		*frame;
	uint32_t		len;
};
void dev_rss_receive(const struct emu_qp *qp, const struct dev_eth_rx *rx);
struct dev_rwqe;
/* eth.c: a steered frame into an Ethernet RQ's receive WQE, its CQE c on cq; the syndrome */
uint8_t dev_eth_deliver(const struct dev_rwqe *r, const struct emu_pd *pd, const struct emu_qp *qp,
			struct emu_cq *cq, struct dev_cqe *c, uint32_t *drops,
			const struct dev_eth_rx *rx);
int dev_sgl_from_recv(struct dev_sgl *sgl, const struct dev_rwqe *r,
		      const struct emu_pd *pd, const struct emu_qp *qp, uint64_t msg_len);
/* tm.c: a TM SRQ's tag list; a TAG_MATCHING WQE (0 or a syndrome) */
bool dev_tm_create(struct dev_srq *ds);
uint8_t dev_tm_execute(struct dev_qp *dq, const uint8_t *w, uint32_t len, uint32_t wqe);
struct dev_pkt;
bool dev_tm_can_match(const struct dev_srq *ds);
uint8_t dev_tm_classify(struct dev_qp *dq, struct emu_srq *srq, const struct dev_pkt *p);
bool dev_tm_rndv_start(struct dev_qp *dq, const struct dev_pkt *p);
void dev_tm_hw_done(struct dev_qp *dq, struct dev_ent *e);
bool dev_sq_push_hw(struct dev_qp *dq, const struct dev_hw_wqe *h);
#define DEV_TMH_LEN	16	/* struct ibv_tmh */

/*
 * Memory-window bind / local invalidate from a UMR WQE of wqe_len bytes
 * (what its DS cover); 0 or a syndrome.
 */
uint8_t dev_umr_execute(struct dev_qp *dq, const uint8_t *sq, uint32_t qsize,
			uint32_t off, uint32_t wqe_len, uint32_t imm_key, uint8_t *wc_op);
/* Send-with-invalidate / local invalidate of an rkey on qp; 0 on success. */
int dev_invalidate_rkey(struct emu_qp *qp, const struct emu_pd *pd, uint32_t rkey);

/* ------------------------------------------------------------------------ */
/* Requester (sq.c) and reliability (rc.c)                                  */

void dev_sq_process(struct dev_qp *dq);		/* parse, emit, complete */
void dev_sq_flush(struct dev_qp *dq);		/* QP in ERR: flush everything */
void dev_sq_reset(struct dev_qp *dq);
void dev_sq_complete(struct dev_qp *dq);
unsigned dev_sq_direct_replies(void);		/* what direct deliveries earned */
void dev_sq_direct_forget(struct dev_qp *dq);	/* dq goes: drop its replies */

void dev_rc_on_response(struct dev_qp *dq, const struct dev_pkt *p);
void dev_rc_timers(void);
uint64_t dev_rc_next_deadline(void);	/* earliest retransmit/RNR time (ns), 0: none */
void dev_rc_rewind(struct dev_qp *dq, uint32_t psn);
void dev_rc_timer_start(struct dev_qp *dq);	/* packets are out: retransmit timer on */
uint64_t dev_rc_timeout_ns(uint8_t timeout);
uint64_t dev_rnr_delay_ns(uint8_t timer);
void dev_rc_read_resp_scatter(struct dev_qp *dq, struct dev_ent *e, const struct dev_pkt *p);
/* May another READ/atomic go out, within the QP's max_rd_atomic? */
/* READs and atomics sent and not answered yet */
unsigned dev_rc_rd_unanswered(const struct dev_qp *dq);
bool dev_rc_rd_slot(const struct dev_qp *dq);

/* ------------------------------------------------------------------------ */
/* Responder (resp.c) and receive queues (rq.c)                            */

void dev_resp_packet(const struct dev_pkt *p);
/* May the QP receive requests in its state (RTR and later, not ERR)? */
static inline bool dev_qp_can_receive(const struct emu_qp *qp)
{
	return qp->attr.state == IBV_QPS_RTR || qp->attr.state == IBV_QPS_RTS ||
	       qp->attr.state == IBV_QPS_SQD || qp->attr.state == IBV_QPS_SQE;
}
/* The loopback shortcut's RC WRITE (resp.c): true if executed, false if untouched. */
bool dev_resp_shortcut_write(const struct dev_pkt *p, const uint8_t *payload,
			     const struct emu_qp *src);
void dev_dct_conns_free(struct dev_qp *dq);	/* a DCT's per-DCI contexts */
void dev_resp_flush_acks(void);
/* Send the READ/atomic answers owed while the links take them; packets sent. */
unsigned dev_resp_pump(void);
/* Forget every answer owed and the replay cache (QP reset, new DC connection). */
void dev_resp_reset(struct dev_qp *dq);
/*
 * The source GID at index i of port (0 for one past the table, which the
 * kernel refused when the AH or path was made), and on RoCE whether the
 * packet is RoCE v1, as that entry's type makes it.
 */
static inline void dev_pkt_sgid(struct dev_pkt *p, const struct emu_port_id *port, unsigned i)
{
	if (i >= port->num_gids)
		i = 0;
	memcpy(p->sgid, port->gid[i].raw, 16);
	if (port->gid_type[i] == IBV_GID_TYPE_ROCE_V1)
		p->flags |= DPKT_ROCE_V1;
}

/*
 * A connected QP's packet: its transport, SLID, DLID and (global path or
 * RoCE) GRH from its AV.  Inline: every request and response of a
 * connected QP takes it.
 */
static inline void dev_path_stamp(const struct emu_qp *qp, struct dev_pkt *p)
{
	const struct ibv_ah_attr *ah = &qp->attr.ah;
	const struct emu_port_id *port = dev_qp_port(qp);

	p->tp = qp->type == IBV_QPT_UC ? DTP_UC :
		qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV ? DTP_XRC : DTP_RC;
	p->slid = port->lid;
	if (emu_cfg.link_layer != IBV_LINK_LAYER_ETHERNET) {
		p->dlid = ah->dlid;
		if (!ah->is_global)
			return;
	}
	p->flags |= DPKT_GRH;
	p->flow_label = ah->grh.flow_label;
	p->tclass = ah->grh.traffic_class;
	p->hop_limit = ah->grh.hop_limit;
	dev_pkt_sgid(p, port, ah->grh.sgid_index);
	memcpy(p->dgid, ah->grh.dgid.raw, 16);
}

/*
 * Is p, a unicast packet, addressed to port?  On InfiniBand a switch
 * forwards by DLID and the port takes the LIDs of its LID and LMC (the
 * emulator's LMC is 0: its one LID; IBA vol. 1 chapter 7, the link
 * layer's DLID check); a GRH must name one of the port's GIDs (chapter 8,
 * the network layer's).  On RoCE the destination address, the DGID,
 * alone names the port.  A packet failing this reaches no port on a
 * fabric: it is lost.
 */
static inline bool dev_pkt_to_port(const struct dev_pkt *p, const struct emu_port_id *port)
{
	bool roce = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	if (!roce && p->dlid != port->lid)
		return false;
	if (!(p->flags & DPKT_GRH))
		return !roce;
	for (unsigned i = 0; i < port->num_gids; i++)
		if (!memcmp(p->dgid, port->gid[i].raw, 16))
			return true;
	return false;
}

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
/* The QP's next receive (its own RQ), fetched but not taken. */
bool dev_rq_peek(struct dev_qp *dq, struct dev_rwqe *r);
/* The head WQE of a basic SRQ, fetched but not taken; *next: its link. */
bool dev_srq_peek(struct dev_qp *dq, struct emu_srq *srq, struct dev_rwqe *r, uint32_t *next);
/* Take the next receive WQE of a work queue (ibv_create_wq()); false when empty. */
bool dev_wq_take(struct emu_wq *wq, struct dev_rwqe *r);
/* Re-locate a receive WQE already taken (multi-packet messages). */
void dev_rq_locate(struct dev_qp *dq, struct emu_srq *srq, uint32_t idx,
		   struct dev_rwqe *r);
void dev_rq_flush(struct dev_qp *dq);
void dev_srq_check_limit(struct emu_srq *srq);

#endif /* RDMAFAST_EMU_DEVICE_H */
