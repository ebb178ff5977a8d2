/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sq.c - the requester: send WQEs from the SQ to packets to CQEs.
 *
 * A send queue moves through three stages, each a cursor into a ring of
 * entries (struct dev_ent, one per WQE, as many as the SQ has BBs):
 *
 *   parse     WQEs between sq_next and the doorbell record become entries;
 *             local checks (lkeys, lengths, opcode vs QP type) happen here
 *   emit      entries become request packets, in order, subject to fences,
 *             the RNR wait, the packet window and the wire's room
 *   complete  finished entries, in order, become CQEs (only when signaled,
 *             or on error); the first error moves the QP to ERR and every
 *             later WQE is flushed
 *
 * The WQE memory stays untouched by software until its completion is
 * polled, so the model re-reads it instead of copying it: at emission, at
 * retransmission and to scatter READ/atomic responses.
 */
#include "device.h"

struct dev_wqe {
	uint32_t		off;		/* byte offset of ctrl in the SQ */
	uint8_t			opcode;
	uint8_t			opmod;
	uint8_t			fm_ce_se;
	uint8_t			ds;
	uint32_t		imm;		/* raw */
	uint32_t		nbb;
	uint32_t		xrc_srqn;
	uint32_t		dqpn;
	uint32_t		qkey;
	const uint8_t		*av;
	uint64_t		raddr;
	uint32_t		rkey;
	uint64_t		atomic[4];
	uint32_t		atomic_size;
	uint32_t		data_off;	/* first data/inline segment */
	unsigned		nseg;
};

static uint8_t *sq_base(const struct emu_qp *qp)
{
	return (uint8_t *)(uintptr_t)qp->sq_buf;
}

static uint32_t sq_size(const struct emu_qp *qp)
{
	return qp->sq_wqe_cnt * RF_SEND_WQE_BB;
}

static const uint8_t *seg_at(const struct emu_qp *qp, uint32_t off)
{
	return sq_base(qp) + (off & (sq_size(qp) - 1));
}

static bool op_is_rdma(uint8_t op)
{
	return op == RF_OPCODE_RDMA_WRITE || op == RF_OPCODE_RDMA_WRITE_IMM ||
	       op == RF_OPCODE_RDMA_READ;
}

static bool op_is_atomic(uint8_t op)
{
	return op == RF_OPCODE_ATOMIC_CS || op == RF_OPCODE_ATOMIC_FA ||
	       op == RF_OPCODE_ATOMIC_MASKED_CS || op == RF_OPCODE_ATOMIC_MASKED_FA;
}

/* Decode the segments of the WQE at BB counter bb; false if malformed. */
static bool wqe_parse(const struct dev_qp *dq, uint32_t bb, struct dev_wqe *w)
{
	const struct emu_qp *qp = dq->qp;
	uint32_t off = (bb * RF_SEND_WQE_BB) & (sq_size(qp) - 1);
	const uint8_t *ctrl = sq_base(qp) + off;
	uint32_t word0 = dev_be32(ctrl);
	uint32_t cur;

	/* only the fields the opcode and transport use get set below */
	w->xrc_srqn = w->dqpn = w->qkey = w->rkey = 0;
	w->av = NULL;
	w->raddr = 0;
	memset(w->atomic, 0, sizeof(w->atomic));
	w->off = off;
	w->opcode = word0 & 0xff;
	w->opmod = word0 >> 24;
	w->ds = dev_be32(ctrl + 4) & 0x3f;
	w->fm_ce_se = ctrl[11];
	memcpy(&w->imm, ctrl + 12, 4);
	w->nbb = w->ds ? (w->ds + 3) / 4 : 1;
	w->atomic_size = 0;
	cur = off + 16;
	if (!w->ds)
		return false;
	if (w->opcode == RF_OPCODE_NOP || w->opcode == RF_OPCODE_UMR) {
		w->data_off = cur;
		w->nseg = 0;
		return true;
	}
	if (qp->type == IBV_QPT_XRC_SEND) {
		w->xrc_srqn = dev_be32(seg_at(qp, cur)) & 0xffffff;
		cur += 16;
	}
	if (qp->type == IBV_QPT_UD) {
		const uint8_t *av = seg_at(qp, cur);
		uint32_t dqp = dev_be32(av + 8);

		w->av = av;
		w->qkey = dev_be32(av);
		w->dqpn = dqp & 0xffffff;
		cur += (dqp & RF_EXTENDED_UD_AV) ? 48 : 16;
	}
	if (op_is_rdma(w->opcode) || op_is_atomic(w->opcode)) {
		const uint8_t *r = seg_at(qp, cur);

		w->raddr = dev_be64(r);
		w->rkey = dev_be32(r + 8);
		cur += 16;
	}
	switch (w->opcode) {
	case RF_OPCODE_ATOMIC_CS:
	case RF_OPCODE_ATOMIC_FA: {
		const uint8_t *a = seg_at(qp, cur);

		w->atomic[0] = dev_be64(a);
		w->atomic[1] = dev_be64(a + 8);
		w->atomic[2] = ~0ull;
		w->atomic[3] = ~0ull;
		w->atomic_size = 8;
		cur += 16;
		break;
	}
	case RF_OPCODE_ATOMIC_MASKED_CS:
	case RF_OPCODE_ATOMIC_MASKED_FA: {
		const uint8_t *a = seg_at(qp, cur);

		if (w->opmod == RF_OPMOD_EXT_ATOMIC_4B) {
			w->atomic_size = 4;
			w->atomic[0] = dev_be32(a);
			w->atomic[1] = dev_be32(a + 4);
			w->atomic[2] = dev_be32(a + 8);
			w->atomic[3] = dev_be32(a + 12);
			cur += 16;
		} else if (w->opmod == RF_OPMOD_EXT_ATOMIC_8B) {
			w->atomic_size = 8;
			w->atomic[0] = dev_be64(a);
			w->atomic[1] = dev_be64(a + 8);
			cur += 16;
			if (w->opcode == RF_OPCODE_ATOMIC_MASKED_CS) {
				a = seg_at(qp, cur);	/* the masks may wrap */
				w->atomic[2] = dev_be64(a);
				w->atomic[3] = dev_be64(a + 8);
				cur += 16;
			}
		} else {
			return false;
		}
		break;
	}
	default:
		break;
	}
	if ((cur - off) / 16 > w->ds)
		return false;
	w->data_off = cur;
	w->nseg = w->ds - (cur - off) / 16;
	return true;
}

/* Scatter/gather list of a parsed WQE; need = IBV_ACCESS_* for the local side. */
static int wqe_sgl(const struct dev_qp *dq, const struct dev_wqe *w,
		   struct dev_sgl *sgl, uint32_t need)
{
	const struct emu_qp *qp = dq->qp;

	return dev_sgl_from_dsegs(sgl, sq_base(qp), sq_size(qp), w->data_off,
				  w->nseg, qp->pd, need, false);
}

static enum dev_op wqe_dev_op(uint8_t opcode)
{
	switch (opcode) {
	case RF_OPCODE_SEND:		return DOP_SEND;
	case RF_OPCODE_SEND_IMM:	return DOP_SEND_IMM;
	case RF_OPCODE_SEND_INVAL:	return DOP_SEND_INV;
	case RF_OPCODE_RDMA_WRITE:	return DOP_WRITE;
	case RF_OPCODE_RDMA_WRITE_IMM:	return DOP_WRITE_IMM;
	case RF_OPCODE_RDMA_READ:	return DOP_READ;
	case RF_OPCODE_ATOMIC_CS:	return DOP_CS;
	case RF_OPCODE_ATOMIC_FA:	return DOP_FA;
	case RF_OPCODE_ATOMIC_MASKED_CS: return DOP_MCS;
	case RF_OPCODE_ATOMIC_MASKED_FA: return DOP_MFA;
	default:			return 0;
	}
}

/* Is the opcode legal on this QP type (IB spec table 9-? of valid ops)? */
static bool op_allowed(enum ibv_qp_type t, uint8_t opcode)
{
	switch (opcode) {
	case RF_OPCODE_NOP:
	case RF_OPCODE_SEND:
	case RF_OPCODE_SEND_IMM:
		return true;
	case RF_OPCODE_RDMA_WRITE:
	case RF_OPCODE_RDMA_WRITE_IMM:
	case RF_OPCODE_UMR:
		return t != IBV_QPT_UD;
	case RF_OPCODE_SEND_INVAL:
	case RF_OPCODE_RDMA_READ:
	case RF_OPCODE_ATOMIC_CS:
	case RF_OPCODE_ATOMIC_FA:
	case RF_OPCODE_ATOMIC_MASKED_CS:
	case RF_OPCODE_ATOMIC_MASKED_FA:
		return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND;
	default:
		return false;
	}
}

static bool qp_reliable(const struct emu_qp *qp)
{
	return qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND;
}

/* Parse one WQE into a new entry: local checks only. */
static void sq_parse_one(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;
	struct dev_ent *e = &dq->ent[dq->ent_tail & dq->ent_mask];
	struct dev_wqe w;
	struct dev_sgl sgl;
	uint32_t need = 0;
	bool ok = wqe_parse(dq, dq->sq_next, &w);

	memset(e, 0, sizeof(*e));
	e->wqe = dq->sq_next;
	e->op = w.opcode;
	e->state = DENT_NEW;
	if ((w.fm_ce_se & RF_WQE_CTRL_CE_MASK) == RF_WQE_CTRL_CQ_UPDATE ||
	    (w.fm_ce_se & RF_WQE_CTRL_CE_MASK) == (3 << 2))
		e->flags |= DENTF_SIGNALED;
	/* IBV_SEND_FENCE (4) and the IB fence (2) wait for READ/atomics */
	if ((w.fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_FENCE ||
	    (w.fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_FENCE_ORDERING ||
	    (w.fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_STRONG_ORDERING)
		e->flags |= DENTF_FENCE;
	dq->sq_next += w.nbb;
	dq->ent_tail++;
	dev_eng.wqes++;

	if (!ok || !op_allowed(qp->type, w.opcode)) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		goto fail;
	}
	if (w.opcode == RF_OPCODE_NOP || w.opcode == RF_OPCODE_UMR) {
		e->flags |= DENTF_LOCAL;
		return;
	}
	if (w.opcode == RF_OPCODE_RDMA_READ || op_is_atomic(w.opcode)) {
		need = IBV_ACCESS_LOCAL_WRITE;
		e->flags |= DENTF_RESP;
	}
	if (wqe_sgl(dq, &w, &sgl, need)) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		goto fail;
	}
	if (sgl.total > (1ull << 31) ||
	    (qp->type == IBV_QPT_UD && sgl.total > dev_ud_max_msg())) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		goto fail;
	}
	if (w.atomic_size) {
		if (sgl.total < w.atomic_size) {
			e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			goto fail;
		}
		e->npkt = 1;
		e->byte_len = w.atomic_size;
	} else {
		e->byte_len = (uint32_t)sgl.total;
		e->npkt = sgl.total ? (uint32_t)((sgl.total + DEV_WIRE_MTU - 1) / DEV_WIRE_MTU) : 1;
		if (qp->type == IBV_QPT_UD)
			e->npkt = 1;
	}
	e->psn = dq->next_psn;
	dq->next_psn = (dq->next_psn + e->npkt) & DEV_PSN_MASK;
	return;
fail:
	e->state = DENT_DONE;
}

/* Our LID, for the packets' SLID. */
static uint16_t port_lid(const struct emu_qp *qp)
{
	unsigned port = qp->attr.port_num ? qp->attr.port_num : 1;

	return emu_cfg.dev[qp->obj.ctx->dev_index].port[(port - 1) % EMU_MAX_PORTS].lid;
}

static void fill_grh(const struct emu_qp *qp, struct dev_pkt *p, const uint8_t *av)
{
	unsigned port = qp->attr.port_num ? qp->attr.port_num : 1;
	const struct emu_port_id *pid =
		&emu_cfg.dev[qp->obj.ctx->dev_index].port[(port - 1) % EMU_MAX_PORTS];
	uint32_t gfl = dev_be32(av + 28);
	unsigned sgid_index = (gfl >> 20) & 0xff;
	bool roce = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;

	if (!roce && !(gfl & RF_AV_GRH))
		return;
	p->flags |= DPKT_GRH;
	p->flow_label = gfl & 0xfffff;
	p->tclass = av[26];
	p->hop_limit = av[27];
	memcpy(p->dgid, av + 32, 16);
	memcpy(p->sgid, pid->gid[sgid_index < pid->num_gids ? sgid_index : 0].raw, 16);
}

/*
 * Emit the request packets of entry e from packet e->sent on.  Returns false
 * when the wire has no room (try again next iteration).
 */
static bool emit_entry(struct dev_qp *dq, struct dev_ent *e)
{
	struct emu_qp *qp = dq->qp;
	struct dev_wqe w;
	struct dev_sgl sgl;
	enum dev_op op;
	uint32_t total, dst;

	if (!wqe_parse(dq, e->wqe, &w))
		return true;
	op = wqe_dev_op(w.opcode);
	if (wqe_sgl(dq, &w, &sgl, (e->flags & DENTF_RESP) ? IBV_ACCESS_LOCAL_WRITE : 0)) {
		/* the MR went away between parse and (re)transmission */
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		e->state = DENT_DONE;
		return true;
	}
	total = (uint32_t)sgl.total;
	dst = qp->type == IBV_QPT_UD ? w.dqpn : qp->attr.dest_qp_num;

	while (e->sent < e->npkt) {
		bool req_only = op == DOP_READ || w.atomic_size;
		uint32_t offset = req_only ? 0 : e->sent * DEV_WIRE_MTU;
		uint32_t len = req_only ? 0 : total - offset;
		struct dev_pkt *p;

		if (len > DEV_WIRE_MTU)
			len = DEV_WIRE_MTU;
		if (!dev_wire_room(dst))
			return false;	/* the link is backed up: wait for room */
		p = dev_wire_alloc(len);
		if (!p)
			return false;
		p->op = (uint8_t)op;
		p->flags = 0;
		if (e->sent == 0)
			p->flags |= DPKT_FIRST;
		if (req_only || offset + len >= total)
			p->flags |= DPKT_LAST;
		if ((p->flags & DPKT_LAST) && (w.fm_ce_se & RF_WQE_CTRL_SOLICITED))
			p->flags |= DPKT_SE;
		p->opmod = w.opmod;
		p->sl = qp->attr.ah.sl;
		p->src_qpn = dq->qpn;
		p->dst_qpn = dst;
		p->psn = (e->psn + e->sent) & DEV_PSN_MASK;
		p->slid = port_lid(qp);
		p->pkey_index = qp->attr.pkey_index;
		p->imm = w.imm;
		p->xrc_srqn = w.xrc_srqn;
		p->raddr = w.raddr;
		p->rkey = w.rkey;
		p->dma_len = w.atomic_size ? w.atomic_size :
			     (op == DOP_READ ? e->byte_len : total);
		p->offset = offset;
		p->len = len;
		memcpy(p->atomic, w.atomic, sizeof(p->atomic));
		if (qp->type == IBV_QPT_UD) {
			/* a Q_Key with the top bit set means "use the QP's own" */
			p->qkey = (w.qkey & 0x80000000u) ? qp->attr.qkey : w.qkey;
			p->sl = w.av[12] & 0xf;
			fill_grh(qp, p, w.av);
		} else {
			dev_path_stamp(qp, p);
		}
		if (len)
			dev_sgl_copy_out(&sgl, offset, p->payload, len);
		dev_wire_send(p);
		if (req_only) {
			e->sent = e->npkt;
			dq->pkts_out += 1;
		} else {
			e->sent++;
			dq->pkts_out++;
		}
	}
	return true;
}

/* Does an earlier READ/atomic still wait for its response? */
static bool fence_blocks(const struct dev_qp *dq, uint32_t upto)
{
	for (uint32_t i = dq->ent_head; i != upto; i++) {
		const struct dev_ent *x = &dq->ent[i & dq->ent_mask];

		if ((x->flags & DENTF_RESP) && x->state != DENT_DONE)
			return true;
	}
	return false;
}

static void sq_emit(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;
	bool reliable = qp_reliable(qp);

	if (dq->rnr_until) {
		if (dev_eng.now < dq->rnr_until)
			return;
		dq->rnr_until = 0;
		dev_eng.timers--;
	}
	while (dq->ent_emit != dq->ent_tail) {
		struct dev_ent *e = &dq->ent[dq->ent_emit & dq->ent_mask];

		if (e->state == DENT_DONE) {
			if (e->syndrome)
				return;	/* nothing after an error leaves the QP */
			dq->ent_emit++;
			continue;
		}
		if ((e->flags & DENTF_FENCE) && fence_blocks(dq, dq->ent_emit))
			return;
		if (e->flags & DENTF_LOCAL) {
			if (e->op == RF_OPCODE_UMR) {
				struct dev_wqe w;
				uint8_t wc_op;
				uint32_t key;

				wqe_parse(dq, e->wqe, &w);
				key = be32toh(w.imm);
				e->syndrome = dev_umr_execute(dq, sq_base(qp), sq_size(qp),
							      w.off, key, &wc_op);
			}
			e->state = DENT_DONE;
			if (e->syndrome)
				return;
			dq->ent_emit++;
			continue;
		}
		if (reliable && dq->pkts_out &&
		    dq->pkts_out + (e->npkt - e->sent) > DEV_MAX_PKTS_INFLIGHT)
			return;
		/* max_rd_atomic: later WQEs wait behind a READ/atomic in order */
		if (reliable && (e->flags & DENTF_RESP) && !dev_rc_rd_slot(dq))
			return;
		if (!emit_entry(dq, e))
			return;
		if (e->state == DENT_DONE)
			continue;	/* failed its late checks: stays at ent_emit */
		if (reliable) {
			e->state = DENT_SENT;
			if (!dq->deadline && qp->attr.timeout) {
				dq->deadline = dev_eng.now + dev_rc_timeout_ns(qp->attr.timeout);
				dev_eng.timers++;
			}
		} else {
			e->state = DENT_DONE;
			dq->pkts_out = 0;
		}
		dq->ent_emit++;
	}
}

static bool w_atomic(const struct dev_ent *e)
{
	return e->op == RF_OPCODE_ATOMIC_CS || e->op == RF_OPCODE_ATOMIC_FA;
}

/* Write the CQE of a finished entry. */
static void ent_cqe(struct dev_qp *dq, const struct dev_ent *e, uint8_t syndrome)
{
	struct emu_qp *qp = dq->qp;
	struct dev_cqe c = {
		.opcode = syndrome ? RF_CQE_REQ_ERR : RF_CQE_REQ,
		.wqe_op = e->op,
		.syndrome = syndrome,
		.wqe_counter = (uint16_t)e->wqe,
		.qpn = dq->qpn,
		.uidx = qp->uidx,
		.byte_cnt = e->byte_len,
	};

	if (!syndrome && (e->flags & DENTF_SCAT)) {
		c.scat = dq->scat[e - dq->ent];
		c.scat_len = (uint8_t)(w_atomic(e) ? 8 : e->byte_len);
		c.scat_max = qp->scat_req;
	}
	if (qp->send_cq)
		dev_cq_write(qp->send_cq, &c);
}

void dev_sq_complete(struct dev_qp *dq)
{
	while (dq->ent_head != dq->ent_tail) {
		struct dev_ent *e = &dq->ent[dq->ent_head & dq->ent_mask];

		if (e->state != DENT_DONE)
			break;
		if (e->syndrome) {
			ent_cqe(dq, e, e->syndrome);
			dq->ent_head++;
			if (dq->ent_emit < dq->ent_head)
				dq->ent_emit = dq->ent_head;
			/* the QP enters ERR; the hook schedules the flush */
			dev_qp_fatal(dq, 0);
			return;
		}
		if (e->flags & DENTF_SIGNALED)
			ent_cqe(dq, e, 0);
		dq->ent_head++;
	}
	if (dq->ent_head == dq->ent_tail && dq->deadline) {
		dq->deadline = 0;
		dev_eng.timers--;
	}
}

/* Pick up new WQEs up to the doorbell record. */
static void sq_parse(struct dev_qp *dq)
{
	unsigned budget = DEV_MAX_WQE_PER_ROUND;

	while (dq->sq_rung && budget--) {
		if ((dq->sq_next & 0xffff) == dq->sq_limit) {
			dq->sq_rung = false;
			break;
		}
		if (dq->ent_tail - dq->ent_head > dq->ent_mask)
			break;	/* every BB is in flight: impossible for sane software */
		sq_parse_one(dq);
	}
}

void dev_sq_process(struct dev_qp *dq)
{
	enum ibv_qp_state st = dq->qp->attr.state;

	if (st == IBV_QPS_ERR || st == IBV_QPS_SQE) {
		dev_sq_flush(dq);
		return;
	}
	if (st != IBV_QPS_RTS && st != IBV_QPS_SQD)
		return;
	for (;;) {
		uint32_t before = dq->ent_tail;

		sq_parse(dq);
		sq_emit(dq);
		dev_sq_complete(dq);
		if (dq->qp->attr.state != st || dq->ent_tail == before ||
		    !dq->sq_rung)
			break;
	}
}

/* ERR: every outstanding and every newly rung WQE completes as flushed. */
void dev_sq_flush(struct dev_qp *dq)
{
	struct emu_qp *qp = dq->qp;

	while (dq->ent_head != dq->ent_tail) {
		struct dev_ent *e = &dq->ent[dq->ent_head & dq->ent_mask];

		ent_cqe(dq, e, RF_CQE_SYNDROME_WR_FLUSH_ERR);
		dq->ent_head++;
	}
	dq->ent_emit = dq->ent_tail = dq->ent_head;
	dq->pkts_out = 0;
	if (dq->deadline) {
		dq->deadline = 0;
		dev_eng.timers--;
	}
	if (dq->rnr_until) {
		dq->rnr_until = 0;
		dev_eng.timers--;
	}
	while (dq->sq_rung && qp->sq_wqe_cnt) {
		struct dev_ent e = { 0 };
		const uint8_t *ctrl;
		uint32_t ds;

		if ((dq->sq_next & 0xffff) == dq->sq_limit) {
			dq->sq_rung = false;
			break;
		}
		ctrl = sq_base(qp) + ((dq->sq_next * RF_SEND_WQE_BB) & (sq_size(qp) - 1));
		ds = dev_be32(ctrl + 4) & 0x3f;
		e.wqe = dq->sq_next;
		e.op = dev_be32(ctrl) & 0xff;
		ent_cqe(dq, &e, RF_CQE_SYNDROME_WR_FLUSH_ERR);
		dq->sq_next += ds ? (ds + 3) / 4 : 1;
	}
}

void dev_sq_reset(struct dev_qp *dq)
{
	if (dq->deadline)
		dev_eng.timers--;
	if (dq->rnr_until)
		dev_eng.timers--;
	dq->deadline = 0;
	dq->rnr_until = 0;
	dq->sq_next = 0;
	dq->sq_limit = 0;
	dq->sq_rung = false;
	dq->ent_head = dq->ent_emit = dq->ent_tail = 0;
	dq->pkts_out = 0;
	dq->sq_error = false;
	dq->rq_ci = 0;
	dq->recv_busy = false;
	dq->uc_drop = false;
	dq->nak_sent = false;
	dq->last_wqe_sent = false;
	dq->flush_rq = false;
	memset(dq->replay, 0, sizeof(dq->replay));
}

/*
 * A READ response or atomic response: place its data in the WQE's local
 * scatter list (validated again: the MR may have been deregistered).
 */
void dev_rc_read_resp_scatter(struct dev_qp *dq, struct dev_ent *e,
			      const struct dev_pkt *p)
{
	struct dev_wqe w;
	struct dev_sgl sgl;

	if (!wqe_parse(dq, e->wqe, &w) ||
	    wqe_sgl(dq, &w, &sgl, IBV_ACCESS_LOCAL_WRITE)) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		return;
	}
	/*
	 * Requester scatter-to-CQE: a signaled READ whose data fits, or a
	 * (non-masked) CS/FA, completes with the data in its CQE; libmlx5
	 * copies it into the WQE's scatter list (it knows READ and the two IB
	 * atomics only).  Unsignaled WQEs have no CQE: their data goes to memory.
	 */
	e->flags &= (uint8_t)~DENTF_SCAT;
	if (dq->scat && (e->flags & DENTF_SIGNALED) &&
	    ((p->op == DOP_ATOMIC_RESP && w_atomic(e) &&
	      dev_scat_fits(dq->qp->scat_req, dq->qp->send_cq, 8)) ||
	     (p->op == DOP_READ_RESP && (p->flags & DPKT_FIRST) && (p->flags & DPKT_LAST) &&
	      !p->offset && p->len == e->byte_len &&
	      dev_scat_fits(dq->qp->scat_req, dq->qp->send_cq, p->len)))) {
		uint8_t *d = dq->scat[e - dq->ent];

		if (p->op == DOP_ATOMIC_RESP)
			memcpy(d, &p->atomic[0], 8);
		else
			memcpy(d, p->payload, p->len);
		e->flags |= DENTF_SCAT;
		return;
	}
	if (p->op == DOP_ATOMIC_RESP) {
		if (w.atomic_size == 4) {
			uint32_t v = (uint32_t)p->atomic[0];

			dev_sgl_copy_in(&sgl, 0, &v, 4);
		} else {
			dev_sgl_copy_in(&sgl, 0, &p->atomic[0], 8);
		}
		return;
	}
	if (p->len)
		dev_sgl_copy_in(&sgl, p->offset, p->payload, p->len);
}
