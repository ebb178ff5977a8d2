/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * grant.c - the requester delivers a SEND itself: direct delivery.
 *
 * A ConnectX places a message, consumes the responder's receive WQE and
 * writes the responder's CQE without the responder's CPU; a busy-polling
 * responder just sees the CQE appear.  The model's responder is a thread
 * in the responder's process, and waking it for a packet costs a
 * scheduler wake-up, 20-35 us on a CPU a polling thread holds
 * (bench/wake_probe.c).  So a responder lends what the delivery of its
 * next SEND needs to whoever sends it, and that requester does the work
 * with process_vm_writev(2): it writes the payload into the receive
 * buffers and the CQE into the CQ ring, in the responder's memory, and the
 * responder's thread need not run at all (4.6 us a round trip for the bare
 * mechanism in bench/wake_probe.c, against 25-40 us for any wake-up).
 *
 * The loan is a grant, one per QP, in a table of the responder's host that
 * every host maps (<subnet dir>/grant.<host>).  The responder fills it
 * only from its own state, as its device would check the packet: a QP of
 * RC able to receive, the expected PSN, the only peer (QPN, LID, GID) it
 * accepts, the next posted receive WQE of its receive queue or basic SRQ with
 * its scatter entries resolved through the QP's PD for local write (the
 * prefix of entries whose keys are valid: a message that needs more goes
 * as a packet and meets the error there), and the receive CQ's next entry
 * when it has room and nobody waits on it (no arm, no compression).  A
 * grant names that entry of the ring and that receive, so it stands only
 * while nothing else writes the CQ or takes from the SRQ: every write,
 * arm, resize, receive taken, QP or SRQ change and deregistration on the
 * responder takes the grant back first (dev_grant_take()).
 *
 * The state word makes the handover: FREE (the responder's), READY
 * (published), CLAIMED (a requester is delivering), DONE (delivered, the
 * result in the grant).  A requester claims READY -> CLAIMED, checks its
 * packet against the grant exactly as the responder would check it,
 * writes the data, the result and then the CQE (its body, then its owner
 * byte: two iovecs of one process_vm_writev(), whose stores an x86-64
 * issues in order), sets DONE, and completes its own WQE as the ACK would.
 * Anything it cannot do (a check fails, a write faults) hands the grant
 * back READY, and the message goes out as a packet: the responder then
 * takes the grant back and answers as always, with the same errors.  The
 * responder takes back READY -> FREE; it finds a DONE grant's message as
 * its device would have left it (the receive taken, the CQE counted, the
 * PSN moved, the packet counted) and waits out a CLAIMED one - a claimer
 * that died mid-way is detected by its pid, and its CQE, if written, is
 * counted.
 *
 * One-sided requests need no receive and write no CQE: an RDMA WRITE
 * (without immediate) or a READ of one packet goes through the grant too,
 * when the responder has lent the MR its rkey names.  A responder lends an
 * MR (its key, PD, range and access, in the table beside the grants) the
 * first time a WRITE or READ from another host reaches it through that key
 * as a packet; memory windows are never lent.  The requester checks the
 * request as resp_write()/resp_read() would (the QP's remote access, the
 * key, the PD, the access and the range), copies with process_vm_writev()
 * or process_vm_readv() (the READs of a pass to one QP with one call,
 * dev_grant_reads_flush()), moves the grant's PSN on and hands the grant
 * back READY: a busy responder need not run even to re-lend.  It takes the PSN
 * when it takes the grant back.  Deregistering an MR first takes its entry
 * out, then every grant back: a requester that read the entry before is
 * waited for, as an HCA finishes its DMA before the key is destroyed.
 *
 * Before it writes, the requester asks the kernel whether the very
 * process that published is still alive (a pidfd opened when it mapped
 * the table, checked against a nonce the responder keeps in its memory;
 * asked again after a millisecond, PEER_ALIVE_NS), so that a recycled pid
 * is never written to.  Where process_vm_writev()
 * is refused (another uid, Yama ptrace_scope, seccomp) the table is not
 * used and the wire carries everything as before.  RFEMU_DIRECT_DELIVERY=0
 * turns it off.  x86-64 only: elsewhere the CQE's body and owner byte
 * could be seen out of order.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/tm_types.h>

#include "device.h"
#include "subnet/subnet.h"

#if defined(__x86_64__) && !defined(__ILP32__) && defined(SYS_pidfd_open) && \
    defined(SYS_pidfd_send_signal)
#define GRANT_SUPPORTED 1
#else
#define GRANT_SUPPORTED 0
#endif

#define GRANT_MAGIC	0x52464752414e5435ull	/* "RFGRANT5" */
#define GRANT_SGE	16u

enum { GRANT_FREE, GRANT_READY, GRANT_CLAIMED, GRANT_DONE };
enum { GRANT_OK = 1, GRANT_CQE_LOST };	/* result */

struct dev_grant {
	_Atomic uint32_t	state;
	uint32_t		qpn;		/* the responder QP */
	uint32_t		peer_qpn;	/* the requester it accepts */
	uint32_t		epsn;
	uint16_t		slid;		/* on InfiniBand: the peer's LID */
	uint8_t			roce;		/* no LIDs: the SGID alone names the peer */
	uint8_t			global;		/* the peer's packets carry a GRH: sgid */
	uint8_t			nsge;
	uint8_t			dev;		/* the responder QP's port: its packets' address */
	uint8_t			port;
	uint8_t			dc;		/* a DCT's, for the one DCI connection below */
	uint8_t			sgid[16];
	uint64_t		max_len;	/* what the valid scatter entries hold */
	struct {
		uint64_t	addr;
		uint64_t	len;
	}			sge[GRANT_SGE];
	/* the CQE, as dev_cqe_build() makes it for a SEND to this QP */
	uint64_t		cqe_addr;	/* its slot in the responder's ring */
	uint32_t		cqe_size;
	uint32_t		clock_khz;	/* the responder's core clock: the timestamp */
	uint32_t		uidx;
	uint16_t		wqe_counter;
	uint8_t			owner;		/* the lap's owner bit */
	uint8_t			scat_max;	/* scatter-to-CQE: 0, 32 or 64 */
	/* the requester's result, written before the CQE */
	uint32_t		byte_cnt;
	uint32_t		imm;
	uint8_t			opcode;		/* RF_CQE_RESP_SEND or _SEND_IMM */
	uint8_t			result;
	uint8_t			sl;
	uint8_t			se;		/* solicited: an armed solicited CQ's event */
	uint16_t		src_lid;
	int32_t			claimer;	/* the requester's pid */
	/* one-sided requests (no receive, no CQE) */
	uint8_t			send_ok;	/* a receive and a CQE slot are lent */
	uint8_t			tm;		/* a TM SRQ's, on which no tag can match */
	uint8_t			tm_unexp;	/* the requester's result: a tagged message */
	uint8_t			pad1;
	uint32_t		pdn;		/* the QP's PD */
	uint32_t		qp_access;	/* its IBV_ACCESS_REMOTE_* */
	uint32_t		onesided;	/* delivered since published: packets */
	uint64_t		onesided_bytes;
	/* DC: what resp_dct() checks, the key, and the connection's number */
	uint64_t		dc_key;
	uint32_t		dc_conn;
	uint32_t		pad2;
};

/* An MR a responder lent for one-sided requests; key 0: none. */
struct dev_lent_mr {
	_Atomic uint32_t	key;		/* the rkey, written last */
	uint32_t		pdn;
	uint32_t		access;		/* IBV_ACCESS_* */
	uint32_t		pad;
	uint64_t		iova;		/* what the key's addresses are relative to */
	uint64_t		length;
	uint64_t		addr;		/* the buffer in the responder's memory */
};

struct grant_table {
	uint64_t		magic;
	int32_t			pid;		/* the responder */
	_Atomic uint16_t	passing;	/* it is in a pass: its grants come back */
	_Atomic uint16_t	waiting;	/* ...and waits for another host's pass */
	uint64_t		nonce_addr;	/* where its nonce lies in its memory */
	uint64_t		nonce;
	struct dev_grant		g[EMU_NUM_IDX_MASK + 1];
	struct dev_lent_mr	mr[EMU_NUM_IDX_MASK + 1];	/* by the key's index */
};

/* ---- the responder's table ------------------------------------------------ */

static struct grant_table *own;
static int own_fd = -1;
static char own_path[256];
static volatile uint64_t own_nonce;	/* peers read it to know us */
static bool enabled;
static struct dev_qp *lenders;		/* QPs that keep a grant (dq->next_lender) */

static struct dev_grant *grant_of(uint32_t qpn)
{
	return &own->g[qpn & EMU_NUM_IDX_MASK];
}

/* Where qp's receives complete: a TM SRQ's own CQ (resp.c), else its receive CQ. */
static struct emu_cq *recv_cq_of(const struct emu_qp *qp)
{
	return qp->srq && qp->srq->type == IBV_SRQT_TM ? qp->srq->cq : qp->recv_cq;
}

/*
 * Is dq the responder context a DCT keeps for one DCI (resp.c dct_conn())?
 * Those share the DCT's number, so one of them at a time lends the DCT's
 * grant: the one the last request from another host reached.
 */
static bool dct_context(const struct dev_qp *dq)
{
	return dq->qp->dc == EMU_DC_DCT && dev_qp_of(dq->qp) != dq;
}

void dev_grant_init(void)
{
	const char *s = getenv("RFEMU_DIRECT_DELIVERY");
	size_t size = sizeof(struct grant_table);
	struct timespec ts;

	enabled = GRANT_SUPPORTED && (!s || !*s || atoi(s) != 0);
	if (!enabled || own)
		return;
	if ((size_t)snprintf(own_path, sizeof(own_path), "%s/grant.%u", emu_subnet_dir(),
			     emu_cfg.host_id) >= sizeof(own_path))
		goto off;
	/* a new file: a peer that mapped an earlier host's keeps that one */
	unlink(own_path);
	own_fd = emu_real_open(own_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (own_fd < 0 || ftruncate(own_fd, (off_t)size))
		goto off;
	own = emu_real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, own_fd, 0);
	if (own == MAP_FAILED) {
		own = NULL;
		goto off;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	own_nonce = ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec) ^
		    ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts;
	own->pid = getpid();
	own->nonce_addr = (uint64_t)(uintptr_t)&own_nonce;
	own->nonce = own_nonce;
	atomic_thread_fence(memory_order_release);
	own->magic = GRANT_MAGIC;
	return;
off:
	if (own_fd >= 0) {
		emu_real_close(own_fd);
		unlink(own_path);
	}
	own_fd = -1;
	enabled = false;
}

/* Every grant taken back (the engine stops, an MR went away). */
void dev_grant_take_all(void)
{
	for (struct dev_qp *dq = lenders; dq; dq = dq->next_lender)
		dev_grant_take(dq);
}

void dev_grant_fini(void)
{
	if (!own)
		return;
	dev_grant_take_all();
	while (lenders)
		dev_grant_forget(lenders);
	own->magic = 0;
	emu_real_munmap(own, sizeof(*own));
	own = NULL;
	emu_real_close(own_fd);
	own_fd = -1;
	unlink(own_path);
}

/*
 * A child of fork() forgets its parent's table: its own mapping goes, the
 * parent's grants and file stay as they are.
 */
void dev_grant_forget_parent(void)
{
	lenders = NULL;
	if (!own)
		return;
	emu_real_munmap(own, sizeof(*own));
	own = NULL;
	emu_real_close(own_fd);
	own_fd = -1;
	own_path[0] = 0;
}

/* A QP that receives SENDs from another host: keep a grant out for it. */
void dev_grant_lend(struct dev_qp *dq)
{
	if (!own)
		return;
	if (dct_context(dq)) {
		struct dev_qp *dct = dev_qp_of(dq->qp);

		if (dct->dc_lender && dct->dc_lender != dq)
			dev_grant_forget(dct->dc_lender);
		dct->dc_lender = dq;
	}
	if (dq->lender)
		return;
	dq->lender = true;
	dq->next_lender = lenders;
	lenders = dq;
}

void dev_grant_forget(struct dev_qp *dq)
{
	if (!dq->lender)
		return;
	dev_grant_take(dq);
	for (struct dev_qp **pp = &lenders; *pp; pp = &(*pp)->next_lender)
		if (*pp == dq) {
			*pp = dq->next_lender;
			break;
		}
	dq->lender = false;
	if (dct_context(dq) && dev_qp_of(dq->qp)->dc_lender == dq)
		dev_qp_of(dq->qp)->dc_lender = NULL;
}

/* A WRITE or READ from another host came through rkey: lend its MR. */
void dev_grant_lend_rkey(uint32_t rkey)
{
	const struct emu_mr *mr;
	struct dev_lent_mr *m;

	if (!own)
		return;
	mr = emu_mr_by_rkey_locked(rkey);
	m = &own->mr[(rkey >> 8) & EMU_NUM_IDX_MASK];
	if (!mr || mr->dm || atomic_load_explicit(&m->key, memory_order_relaxed) == rkey)
		return;
	atomic_store_explicit(&m->key, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	m->pdn = mr->pd->pdn;
	m->access = mr->access;
	m->iova = mr->iova;
	m->length = mr->length;
	m->addr = mr->addr;
	atomic_store_explicit(&m->key, rkey, memory_order_release);
}

/*
 * mr is deregistered or changed: its entry out, then every grant back, so
 * that a requester which found the entry before has finished with it.
 */
void dev_grant_mr_gone(const struct emu_mr *mr)
{
	if (own) {
		struct dev_lent_mr *m = &own->mr[(mr->rkey >> 8) & EMU_NUM_IDX_MASK];
		uint32_t key = mr->rkey;

		atomic_compare_exchange_strong(&m->key, &key, 0);
	}
	dev_grant_take_all();
}

/*
 * The one-sided requests delivered through dq's grant, as the device
 * would have left them: the PSN moved, the packets counted.
 */
static void settle_onesided(struct dev_qp *dq, struct dev_grant *g)
{
	struct dev_pkt h;

	if (!g->onesided)
		return;
	dq->epsn = g->epsn;
	dq->nak_sent = false;
	dev_pkt_clear(&h);
	h.op = DOP_WRITE;
	h.src_qpn = g->peer_qpn;
	h.dst_qpn = g->qpn;
	for (uint32_t i = 0; i < g->onesided; i++) {
		h.len = i ? 0 : (uint32_t)g->onesided_bytes;
		h.size = (uint32_t)sizeof(h) + h.len;
		wire_count_rx(&h, dq->qp->obj.ctx->dev_index,
				  dq->qp->attr.port_num ? dq->qp->attr.port_num : 1);
	}
	wire_stats.pkts_rx += g->onesided;
	wire_stats.direct += g->onesided;
	g->onesided = 0;
	g->onesided_bytes = 0;
}

/*
 * A delivered message as the device would have left it: the receive
 * taken, the CQE counted (with the arms and moderation that go with it),
 * the PSN moved, the packet and its ACK counted on the port.
 */
static void settle(struct dev_qp *dq, struct dev_grant *g)
{
	struct emu_qp *qp = dq->qp;
	struct dev_cq *dcq = dev_cq_of(recv_cq_of(qp));
	struct dev_pkt h;

	/*
	 * The receive granted, counted as taken without a look at the doorbell
	 * record: the application may have consumed the message and posted
	 * again since, and the record is then ahead of what the device had
	 * taken by more than the queue holds, until this count.
	 */
	if (qp->srq) {
		struct dev_srq *ds = dev_srq_of(qp->srq);

		ds->head = dq->grant_srq_next;
		ds->taken++;
		ds->grant_qp = NULL;
		if (g->tm_unexp)
			ds->tm->hw_cnt++;	/* an unexpected message, as resp_send() counts it */
		dev_srq_check_limit(qp->srq);
	} else {
		dq->rq_ci++;
	}
	dq->epsn = (g->epsn + 1) & DEV_PSN_MASK;
	dq->nak_sent = false;
	dev_pkt_clear(&h);
	h.size = (uint32_t)sizeof(h) + g->byte_cnt;
	h.len = g->byte_cnt;
	h.op = g->opcode == RF_CQE_RESP_SEND_IMM ? DOP_SEND_IMM : DOP_SEND;
	h.slid = g->src_lid;
	h.src_qpn = g->peer_qpn;
	h.dst_qpn = g->qpn;
	if (g->global)
		h.flags |= DPKT_GRH;
	if (g->se)
		h.flags |= DPKT_SE;
	wire_stats.pkts_rx++;
	wire_stats.direct++;
	wire_count_rx(&h, qp->obj.ctx->dev_index, qp->attr.port_num ? qp->attr.port_num : 1);
	if (dcq) {
		dcq->grant_qp = NULL;
		if (g->result == GRANT_CQE_LOST) {
			dev_cq_refuse(dcq, dq->qpn);
		} else {
			dcq->pi++;
			dev_cq_written(dcq, 1, g->se);
		}
	}
}

/* Is the process pid gone? */
static bool gone(int32_t pid)
{
	return pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH);
}

void dev_grant_take(struct dev_qp *dq)
{
	struct dev_grant *g;
	uint32_t st;
	unsigned spins = 0;

	if (dq->dc_lender)	/* a DCT: what one of its DCIs' contexts lent */
		dev_grant_take(dq->dc_lender);
	if (!dq->granted)
		return;
	g = grant_of(dq->qpn);
	for (;;) {
		st = GRANT_READY;
		if (atomic_compare_exchange_strong(&g->state, &st, GRANT_FREE)) {
			settle_onesided(dq, g);
			break;		/* taken back: no SEND came */
		}
		if (st == GRANT_DONE) {
			atomic_thread_fence(memory_order_acquire);
			settle_onesided(dq, g);
			settle(dq, g);
			atomic_store_explicit(&g->state, GRANT_FREE, memory_order_release);
			break;
		}
		if (st != GRANT_CLAIMED)
			break;
		/* a requester is writing: a few system calls, unless it died */
		if (++spins % 64 == 0 && gone(g->claimer)) {
			const uint8_t *slot = (const uint8_t *)(uintptr_t)g->cqe_addr;
			uint8_t op_own = 0;

			st = GRANT_CLAIMED;
			if (!atomic_compare_exchange_strong(&g->state, &st, GRANT_FREE))
				continue;
			settle_onesided(dq, g);
			/* its CQE, if it got that far, is the message's: count it */
			if (g->send_ok && dev_copy(&op_own, slot + 63, 1) &&
			    (op_own & 1) == g->owner &&
			    (op_own >> 4 == RF_CQE_RESP_SEND || op_own >> 4 == RF_CQE_RESP_SEND_IMM) &&
			    g->result)
				settle(dq, g);
			break;
		}
		sched_yield();
	}
	dq->granted = false;
	if (dq->qp->srq && dev_srq_of(dq->qp->srq) && dev_srq_of(dq->qp->srq)->grant_qp == dq)
		dev_srq_of(dq->qp->srq)->grant_qp = NULL;
	{
		struct dev_cq *dcq = dev_cq_of(recv_cq_of(dq->qp));

		if (dcq && dcq->grant_qp == dq)
			dcq->grant_qp = NULL;
	}
}

/*
 * Publish dq's grant if its next SEND could be delivered without it: what
 * resp_connected() and resp_send() would check of a packet from the peer,
 * done now from the responder's own tables.
 */
static void publish(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;
	struct emu_cq *cq = recv_cq_of(qp);
	struct dev_cq *dcq = dev_cq_of(cq);
	const struct ibv_ah_attr *ah = &qp->attr.ah;
	struct dev_grant *g = grant_of(dq->qpn);
	struct dev_srq *ds = qp->srq ? dev_srq_of(qp->srq) : NULL;
	struct dev_rwqe r;
	uint64_t total = 0;
	uint32_t next = 0;
	unsigned n = 0;
	bool send_ok, tm;

	if (dq->granted || !dev_qp_can_receive(qp) ||
	    (!(qp->type == IBV_QPT_RC && !qp->dc) && !dct_context(dq)) ||
	    qp->opened || dq->recv_busy || wire_fault.any ||
	    atomic_load_explicit(&g->state, memory_order_relaxed) != GRANT_FREE)
		return;
	/*
	 * A SEND also needs the next receive (looked at, not taken) and a
	 * CQE; on a TM SRQ, a state of its tag list in which no message can
	 * match, which only a list operation ends (dev_tm_execute() takes
	 * the grant back first): every message then lands in the SRQ's next
	 * buffer, tagged ones as unexpected.
	 */
	tm = qp->srq && qp->srq->type == IBV_SRQT_TM;
	send_ok = (qp->srq ? ds && !ds->grant_qp &&
			     (qp->srq->type == IBV_SRQT_BASIC || (tm && !dev_tm_can_match(ds))) :
			     qp->rq_wqe_cnt != 0) &&
		  dcq && !dcq->overrun && !dcq->zip && !dcq->grant_qp && !cq->armed &&
		  dev_cq_has_room(dcq, 1) &&
		  (qp->srq ? dev_srq_peek(dq, qp->srq, &r, &next) : dev_rq_peek(dq, &r));
	if (!dev_qp_can_receive(qp))
		return;		/* the look found its receive queue broken: QP in ERR */
	for (uint32_t i = 0; send_ok && i < r.nseg && n < GRANT_SGE; i++) {
		const uint8_t *seg = r.wqe + 16 * i;
		uint32_t bc = dev_be32(seg), lkey = dev_be32(seg + 4);
		uint64_t len = bc ? bc : 1ull << 31;
		uint8_t *p;

		if (lkey == RF_INVALID_LKEY)
			break;
		p = dev_lkey_ptr(lkey, dev_be64(seg + 8), len, qp->pd, IBV_ACCESS_LOCAL_WRITE);
		if (!p)
			break;		/* a message that reaches it goes as a packet */
		g->sge[n].addr = (uint64_t)(uintptr_t)p;
		g->sge[n].len = len;
		total += len;
		n++;
	}
	g->qpn = dq->qpn;
	g->epsn = dq->epsn;
	g->roce = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
	g->dc = qp->dc == EMU_DC_DCT;
	if (g->dc) {		/* the connected DCI's address, as dct_conn() noted it */
		g->peer_qpn = dq->dc_src;
		g->global = g->roce || dq->dc_grh;
		g->slid = dq->dc_rlid;
		memcpy(g->sgid, dq->dc_rgid, 16);
		g->dc_key = qp->dc_key;
		g->dc_conn = dq->dc_conn;
	} else {
		g->peer_qpn = qp->attr.dest_qp_num;
		g->global = g->roce || ah->is_global;
		g->slid = ah->dlid;
		memcpy(g->sgid, ah->grh.dgid.raw, 16);
	}
	g->dev = (uint8_t)qp->obj.ctx->dev_index;
	g->port = qp->attr.port_num ? qp->attr.port_num : 1;
	g->pdn = qp->pd->pdn;
	g->qp_access = qp->attr.qp_access_flags;
	g->onesided = 0;
	g->onesided_bytes = 0;
	g->send_ok = send_ok;
	g->tm = tm;
	g->tm_unexp = 0;
	g->nsge = (uint8_t)n;
	g->max_len = total;
	g->clock_khz = emu_core_clock_khz();
	g->result = 0;
	g->claimer = 0;
	if (send_ok) {
		uint32_t slot = dcq->pi & (cq->cqe_cnt - 1);

		g->cqe_addr = (uint64_t)(uintptr_t)cq->buf + (uint64_t)slot * cq->cqe_size +
			      cq->cqe_size - 64;
		g->cqe_size = cq->cqe_size;
		g->uidx = tm ? qp->srq->uidx : qp->uidx;	/* resp.c: the TM SRQ's */
		g->wqe_counter = (uint16_t)r.idx;
		g->owner = (uint8_t)((dcq->pi / cq->cqe_cnt) & 1);
		g->scat_max = qp->scat_res;
		dq->grant_srq_next = next;
	}
	atomic_store_explicit(&g->state, GRANT_READY, memory_order_release);
	dq->granted = true;
	if (send_ok) {
		dcq->grant_qp = dq;
		if (ds)
			ds->grant_qp = dq;	/* the SRQ's head: one grant at a time */
	}
}

/* A grant without a receive: has one been posted since? */
static bool receive_waits(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;
	struct dev_rwqe r;
	uint32_t next;

	if (qp->srq) {
		struct dev_srq *ds = dev_srq_of(qp->srq);

		return ds && !ds->grant_qp && dev_srq_peek(dq, qp->srq, &r, &next);
	}
	return qp->rq_wqe_cnt && dev_rq_peek(dq, &r);
}

/*
 * At the start of a pass: requesters that find a grant of ours taken
 * (settled, or lent again only at the pass's end) wait for its end
 * (dev_grant_claim()).  A peer that busy-polls sees the completion this
 * pass writes into its memory, and rings its next request, within the
 * time of the pass's rest: in a busy round trip 1% of its SENDs came
 * while the pass that answered the last had not lent the receive again,
 * went as packets and waited for this host's engine to wake, up to
 * milliseconds on a CPU a busy poller holds.
 */
void dev_grant_pass_begin(void)
{
	if (own && lenders)
		atomic_store_explicit(&own->passing, 1, memory_order_relaxed);
}

/* At the end of a pass: a grant for every lender that can have one. */
void dev_grant_publish(void)
{
	for (struct dev_qp *dq = lenders; dq; dq = dq->next_lender) {
		struct dev_grant *g = grant_of(dq->qpn);
		uint32_t st = atomic_load_explicit(&g->state, memory_order_acquire);

		if (dq->granted && (st == GRANT_DONE ||
				    (st == GRANT_READY && !g->send_ok && receive_waits(dq))))
			dev_grant_take(dq);	/* settle it, or lend the receive too */
		publish(dq);
	}
	if (own)
		atomic_store_explicit(&own->passing, 0, memory_order_release);
}

/* ---- the requester --------------------------------------------------------- */

struct peer {
	struct grant_table	*t;
	int			pidfd;
	int32_t			pid;
	bool			refused;	/* process_vm_writev() not allowed */
	bool			id_known;
	uint64_t		no_wait_until;	/* ns: a wait for its pass was in vain */
	uint64_t		alive_at;	/* ns: its pidfd last said it lives */
	struct emu_dev_id	id[EMU_MAX_DEVS];	/* its ports' LIDs and GIDs */
};

static struct peer peers[EMU_MAX_HOSTS + 1];

/*
 * The direct READs of one run of a QP's emission (sq.c), gathered: their
 * checks made and their PSNs taken one by one as they come, under a grant
 * kept claimed from the first to the last, and their data read by one
 * process_vm_readv() of many iovecs when the run ends
 * (dev_grant_reads_flush()).  A system call per READ was most of what a
 * batch of small READs cost (about 1 us each on a 2-vCPU AMD EPYC VM,
 * sixteen to a batch of sixteen, against one fault for its doorbell).
 * Kept claimed, the grant stands still meanwhile: the responder waits to
 * take it back, and an MR deregistered is waited for until the data is
 * read, as before.
 */
static struct {
	struct dev_grant	*g;		/* claimed for them; NULL: none gathered */
	const struct peer	*p;
	uint32_t		psn;		/* the first one's */
	unsigned		n;		/* READs */
	unsigned		niov;		/* of them with data */
	uint32_t		len[DEV_DIRECT_MAX];	/* each READ's bytes */
	struct iovec		l[DEV_DIRECT_MAX], r[DEV_DIRECT_MAX];
} reads;

static void peer_drop(struct peer *p)
{
	if (p->t)
		emu_real_munmap(p->t, sizeof(*p->t));
	if (p->pidfd >= 0)
		emu_real_close(p->pidfd);
	p->t = NULL;
	p->pidfd = -1;
	p->pid = 0;
}

/*
 * How long a responder's process, once its pidfd said it lives, is taken
 * to be alive without asking again.  The question is a system call for
 * every message otherwise (1 us on a 2-vCPU AMD EPYC VM, a twelfth of a
 * busy round trip's hop there).  What it guards against is a write into
 * another process that got the dead responder's pid: the kernel hands
 * out pids in turn up to pid_max (32768 at least), and no host forks
 * that many times in a millisecond.  A responder that died since fails
 * process_vm_writev() with ESRCH, and the message goes as a packet.
 */
#define PEER_ALIVE_NS		1000000u

/*
 * The table of host h, mapped, with its process alive and known to be the
 * one that wrote it (a pidfd, then its nonce read from its memory); NULL
 * if there is none or it cannot be written to.
 */
static struct peer *peer_of(unsigned h)
{
	struct peer *p;
	char path[256];
	uint64_t nonce = 0;
	struct iovec l = { &nonce, sizeof(nonce) }, r;
	int fd;

	if (h == 0 || h > EMU_MAX_HOSTS || h == emu_cfg.host_id)
		return NULL;
	p = &peers[h];
	if (p->t && p->t->magic == GRANT_MAGIC && p->t->pid == p->pid) {
		if (dev_eng.now - p->alive_at < PEER_ALIVE_NS)
			return p;
		wire_stats.peer_checks++;
		if (syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0) {
			p->alive_at = dev_eng.now;
			return p;
		}
	}
	if (p->t || p->pid)
		peer_drop(p);
	if ((size_t)snprintf(path, sizeof(path), "%s/grant.%u", emu_subnet_dir(), h) >= sizeof(path))
		return NULL;
	fd = emu_real_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	p->t = emu_real_mmap(NULL, sizeof(*p->t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	emu_real_close(fd);
	if (p->t == MAP_FAILED) {
		p->t = NULL;
		return NULL;
	}
	p->pidfd = -1;
	if (p->t->magic != GRANT_MAGIC) {
		peer_drop(p);
		return NULL;
	}
	p->pid = p->t->pid;
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	r.iov_base = (void *)(uintptr_t)p->t->nonce_addr;
	r.iov_len = sizeof(nonce);
	if (p->pidfd < 0 || process_vm_readv(p->pid, &l, 1, &r, 1, 0) != sizeof(nonce) ||
	    nonce != p->t->nonce) {
		if (errno == EPERM && !p->refused) {
			p->refused = true;
			emu_dbg("direct delivery to host %u refused (%s): packets only", h,
				  strerror(errno));
		}
		peer_drop(p);
		return NULL;
	}
	p->alive_at = dev_eng.now;
	return p;
}

/*
 * How long a requester waits for a responder's pass to lend a grant again:
 * long enough for a responder that lost its CPU in the pass to get it back
 * on a loaded machine (a packet would wait as long for it), and after a
 * wait in vain (a pass that did not lend it, or did not end) how long it
 * waits for none of that responder's: a responder whose engine is in one
 * long pass after another costs its requesters little.
 */
#define GRANT_WAIT_NS		1000000u
#define GRANT_NO_WAIT_NS	1000000u

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * Is g ready, or made ready by the pass its responder h is in
 * (dev_grant_pass_begin())?  A packet would wait for that responder's
 * engine to wake; a pass ends in microseconds, unless its thread lost its
 * CPU.  The requester is in a pass of its own: two hosts that each wait
 * for the other's would wait out the bound, so a requester gives up when
 * its responder waits too and has the lower host number (in any cycle of
 * waits one host does).
 */
static bool ready_soon(struct peer *p, unsigned h, const struct dev_grant *g)
{
	uint64_t now, until;
	bool ready = false;

	if (atomic_load_explicit(&g->state, memory_order_acquire) == GRANT_READY)
		return true;
	if (!own || !atomic_load_explicit(&p->t->passing, memory_order_acquire))
		return false;
	now = dev_now_ns();
	if (now < p->no_wait_until)
		return false;
	until = now + GRANT_WAIT_NS;
	atomic_store_explicit(&own->waiting, 1, memory_order_seq_cst);
	for (unsigned spins = 1;; spins++) {
		cpu_relax();
		if (atomic_load_explicit(&g->state, memory_order_acquire) == GRANT_READY) {
			ready = true;
			break;
		}
		if (!atomic_load_explicit(&p->t->passing, memory_order_acquire)) {
			ready = atomic_load_explicit(&g->state, memory_order_acquire) ==
				GRANT_READY;
			break;
		}
		if (atomic_load_explicit(&p->t->waiting, memory_order_seq_cst) &&
		    h < emu_cfg.host_id)
			break;
		if (!(spins & 63) && dev_now_ns() > until)
			break;
	}
	atomic_store_explicit(&own->waiting, 0, memory_order_release);
	if (!ready)
		p->no_wait_until = dev_now_ns() + GRANT_NO_WAIT_NS;
	return ready;
}

/* A claimed grant, or NULL. */
const struct dev_grant *dev_grant_claim(uint32_t dst_qpn)
{
	struct peer *p;
	struct dev_grant *g;
	uint32_t st = GRANT_READY;

	if (!enabled || wire_fault.any)
		return NULL;
	p = peer_of(EMU_NUM_HOST(dst_qpn));
	if (!p)
		return NULL;
	if (!p->id_known) {
		emu_subnet_identity(EMU_NUM_HOST(dst_qpn), p->id);
		p->id_known = true;
	}
	g = &p->t->g[dst_qpn & EMU_NUM_IDX_MASK];
	if (g == reads.g)
		return g;	/* claimed for the READs gathered before */
	if (!ready_soon(p, EMU_NUM_HOST(dst_qpn), g) ||
	    !atomic_compare_exchange_strong(&g->state, &st, GRANT_CLAIMED))
		return NULL;
	g->claimer = own ? own->pid : getpid();
	if (g->qpn != (dst_qpn & 0xffffff)) {
		atomic_store_explicit(&g->state, GRANT_READY, memory_order_release);
		return NULL;
	}
	return g;
}

void dev_grant_release(const struct dev_grant *dg)
{
	struct dev_grant *g = (struct dev_grant *)(uintptr_t)dg;

	atomic_store_explicit(&g->state, GRANT_READY, memory_order_release);
}

/*
 * The checks resp_connected() makes of any request of one packet, and
 * before it the transport's (resp.c) and for a DCT resp_dct()'s: the key,
 * and the connection the DCI's context serves.
 */
static bool grant_takes(const struct dev_grant *g, const struct peer *p, const struct dev_pkt *h)
{
	return h->tp == DTP_RC && !(h->flags & DPKT_DCETH) == !g->dc &&
	       (!g->dc || (h->dc_key == g->dc_key && h->dc_conn == g->dc_conn)) &&
	       h->src_qpn == g->peer_qpn && h->psn == g->epsn &&
	       (h->flags & DPKT_FIRST) && (h->flags & DPKT_LAST) &&
	       (g->roce || h->slid == g->slid) &&
	       g->dev < EMU_MAX_DEVS && g->port - 1u < EMU_MAX_PORTS &&
	       dev_pkt_to_port(h, &p->id[g->dev].port[g->port - 1]) &&
	       (!g->global || ((h->flags & DPKT_GRH) && !memcmp(h->sgid, g->sgid, 16)));
}

/*
 * Where [raddr, raddr + len) of rkey lies in the responder's memory, if
 * rkey names an MR it lent that the grant's QP may use for need (what
 * dev_rkey_ptr() checks); 0 if not: the request goes as a packet.
 */
static uint64_t lent_addr(const struct peer *p, const struct dev_grant *g, uint32_t rkey,
			  uint64_t raddr, uint64_t len, uint32_t need)
{
	const struct dev_lent_mr *m = &p->t->mr[(rkey >> 8) & EMU_NUM_IDX_MASK];

	if (!(g->qp_access & need) ||
	    atomic_load_explicit(&m->key, memory_order_acquire) != rkey ||
	    m->pdn != g->pdn || !(m->access & need) ||
	    !dev_in_range(raddr, len, m->iova, m->length))
		return 0;
	return m->addr + (raddr - m->iova);
}

/* The request went through: the PSN on, the grant back for the next one. */
static void onesided_done(struct dev_grant *g, uint32_t bytes)
{
	g->epsn = (g->epsn + 1) & DEV_PSN_MASK;
	g->onesided++;
	g->onesided_bytes += bytes;
	atomic_store_explicit(&g->state, GRANT_READY, memory_order_release);
}

/*
 * An RDMA WRITE of one packet (h, as the wire would carry it) through the
 * claimed grant: true when written; false, the grant handed back, when
 * the packet must go instead (it meets the responder's checks there).
 */
bool dev_grant_write(const struct dev_grant *dg, const struct dev_pkt *h, const void *payload)
{
	struct dev_grant *g = (struct dev_grant *)(uintptr_t)dg;
	struct peer *p = &peers[EMU_NUM_HOST(h->dst_qpn)];
	struct iovec l, r;
	uint64_t at = 1;

	if (!grant_takes(g, p, h) || h->op != DOP_WRITE || h->len != h->dma_len)
		goto back;
	if (h->dma_len) {
		at = lent_addr(p, g, h->rkey, h->raddr, h->dma_len, IBV_ACCESS_REMOTE_WRITE);
		l.iov_base = (void *)(uintptr_t)payload;
		l.iov_len = h->dma_len;
		r.iov_base = (void *)(uintptr_t)at;
		r.iov_len = h->dma_len;
		if (!at)
			goto back;
		wire_stats.direct_copies++;
		if (process_vm_writev(p->pid, &l, 1, &r, 1, 0) != (ssize_t)h->dma_len)
			goto back;	/* the packet writes the same bytes, or fails */
	} else if (!(g->qp_access & IBV_ACCESS_REMOTE_WRITE)) {
		goto back;
	}
	onesided_done(g, h->dma_len);
	return true;
back:
	dev_grant_release(dg);
	return false;
}

/*
 * An RDMA READ answered by one packet, through the claimed grant: true
 * when its checks pass and it is gathered, its h->dma_len bytes to be
 * read into buf by dev_grant_reads_flush(); false when the request must
 * go as a packet (the grant handed back, unless READs gathered before
 * hold it: the flush does).  The requester has no READ or atomic
 * unanswered (sq.c), so it holds none of the responder's READ resources.
 */
bool dev_grant_read(const struct dev_grant *dg, const struct dev_pkt *h, void *buf)
{
	struct dev_grant *g = (struct dev_grant *)(uintptr_t)dg;
	struct peer *p = &peers[EMU_NUM_HOST(h->dst_qpn)];
	uint64_t at;

	if (!grant_takes(g, p, h) || h->op != DOP_READ || h->dma_len > WIRE_MTU ||
	    reads.n == DEV_DIRECT_MAX || (reads.g && reads.g != g))
		goto back;
	if (h->dma_len) {
		at = lent_addr(p, g, h->rkey, h->raddr, h->dma_len, IBV_ACCESS_REMOTE_READ);
		if (!at)
			goto back;
		reads.l[reads.niov].iov_base = buf;
		reads.l[reads.niov].iov_len = h->dma_len;
		reads.r[reads.niov].iov_base = (void *)(uintptr_t)at;
		reads.r[reads.niov].iov_len = h->dma_len;
		reads.niov++;
	} else if (!(g->qp_access & IBV_ACCESS_REMOTE_READ)) {
		goto back;
	}
	if (!reads.g) {
		reads.g = g;
		reads.p = p;
		reads.psn = g->epsn;
	}
	reads.len[reads.n++] = h->dma_len;
	/* the next READ's PSN; taken back by the flush if this one is not read */
	g->epsn = (g->epsn + 1) & DEV_PSN_MASK;
	return true;
back:
	if (g != reads.g)
		dev_grant_release(dg);
	return false;
}

/*
 * Read the gathered READs' data and hand their grant back: how many of
 * them, in order, were read whole.  The rest (the first one whose memory
 * could not be read, and all after it) never happened: the grant's PSN
 * goes back to the first of them, which then goes as a packet and meets
 * the responder's checks, as it would have without the gathering.
 */
unsigned dev_grant_reads_flush(void)
{
	struct dev_grant *g = reads.g;
	ssize_t got = 0;
	unsigned done = 0;

	if (!g)
		return 0;
	if (reads.niov) {
		wire_stats.direct_copies++;
		got = process_vm_readv(reads.p->pid, reads.l, reads.niov, reads.r, reads.niov, 0);
	}
	for (; done < reads.n && got >= (ssize_t)reads.len[done]; done++)
		got -= reads.len[done];
	g->epsn = (reads.psn + done) & DEV_PSN_MASK;
	g->onesided += done;
	reads.g = NULL;
	reads.n = 0;
	reads.niov = 0;
	atomic_store_explicit(&g->state, GRANT_READY, memory_order_release);
	return done;
}

/*
 * Deliver h (a SEND or SEND with immediate of one packet, as the wire
 * would carry it) with its payload through the claimed grant: true when
 * delivered; false, the grant handed back and nothing the responder's
 * software can see changed, when the packet must go instead.
 */
bool dev_grant_deliver(const struct dev_grant *dg, const struct dev_pkt *h, const void *payload)
{
	struct dev_grant *g = (struct dev_grant *)(uintptr_t)dg;
	uint32_t dst = h->dst_qpn;
	struct peer *p = &peers[EMU_NUM_HOST(dst)];
	struct iovec l[2], r[GRANT_SGE + 1];
	struct dev_cqe c;
	struct emu_cq cq;
	uint8_t body[128], op_own;
	uint64_t left = h->dma_len;
	unsigned nr = 0;
	uint8_t tm_op = 0;
	bool scat;

	/* the checks resp_connected() and resp_send() make of the packet */
	if (!g->send_ok || !grant_takes(g, p, h) || h->len != h->dma_len ||
	    h->dma_len > g->max_len || g->clock_khz != emu_core_clock_khz() ||
	    g->cqe_size > sizeof(body))
		goto back;
	memset(&cq, 0, sizeof(cq));
	cq.cqe_size = g->cqe_size;
	scat = dev_scat_fits(g->scat_max, &cq, h->dma_len);
	if (left && !scat) {
		for (unsigned i = 0; i < g->nsge && left; i++) {
			uint64_t n = g->sge[i].len < left ? g->sge[i].len : left;

			r[nr].iov_base = (void *)(uintptr_t)g->sge[i].addr;
			r[nr++].iov_len = n;
			left -= n;
		}
		l[0].iov_base = (void *)(uintptr_t)payload;
		l[0].iov_len = h->dma_len;
		wire_stats.direct_copies++;
		if (process_vm_writev(p->pid, l, 1, r, nr, 0) != (ssize_t)h->dma_len)
			goto back;	/* the packet writes the same bytes again */
	}
	/*
	 * On a TM SRQ, what dev_tm_classify() makes of the message while no
	 * entry can match: a tagged one (eager or rendezvous) is unexpected,
	 * anything else has no tag.
	 */
	if (g->tm) {
		uint8_t op = h->dma_len >= DEV_TMH_LEN ? *(const uint8_t *)payload : IBV_TMH_NO_TAG;

		tm_op = op == IBV_TMH_EAGER || op == IBV_TMH_RNDV ? DEV_TM_UNEXPECTED :
								     DEV_TM_NO_TAG;
	}
	/* the CQE, built as dev_cqe_build() builds the responder's own */
	c = (struct dev_cqe){
		.opcode = h->op == DOP_SEND_IMM ? RF_CQE_RESP_SEND_IMM : RF_CQE_RESP_SEND,
		.se = (h->flags & DPKT_SE) != 0,
		.sl = h->sl,
		.slid = h->slid,
		.wqe_counter = g->wqe_counter,
		.qpn = g->qpn,
		.uidx = g->uidx,
		.rqpn = h->src_qpn,
		.byte_cnt = h->dma_len,
		.imm = h->op == DOP_SEND_IMM ? h->imm : 0,
		.tm_op = tm_op,
	};
	if (scat) {
		c.scat = payload;
		c.scat_len = (uint8_t)h->dma_len;
		c.scat_max = g->scat_max;
	}
	op_own = (uint8_t)(dev_cqe_build(&cq, &c, body) | g->owner);
	g->byte_cnt = h->dma_len;
	g->imm = c.imm;
	g->opcode = c.opcode;
	g->sl = h->sl;
	g->se = c.se;
	g->src_lid = h->slid;
	g->tm_unexp = tm_op == DEV_TM_UNEXPECTED;
	g->result = GRANT_OK;
	atomic_thread_fence(memory_order_release);
	l[0].iov_base = body;
	l[0].iov_len = g->cqe_size - 1u;
	l[1].iov_base = &op_own;
	l[1].iov_len = 1;
	r[0].iov_base = (void *)(uintptr_t)(g->cqe_addr + 64 - g->cqe_size);
	r[0].iov_len = g->cqe_size - 1u;
	r[1].iov_base = (void *)(uintptr_t)(g->cqe_addr + 63);
	r[1].iov_len = 1;
	wire_stats.direct_copies++;
	if (process_vm_writev(p->pid, l, 2, r, 2, 0) != (ssize_t)g->cqe_size)
		g->result = GRANT_CQE_LOST;	/* its CQ's ring went away: the CQ fails */
	atomic_store_explicit(&g->state, GRANT_DONE, memory_order_release);
	return true;
back:
	g->result = 0;
	dev_grant_release(dg);
	return false;
}
