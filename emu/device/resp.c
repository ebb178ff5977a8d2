/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * resp.c - the responder: executes request packets on this host.
 *
 * Order of checks for every request, as IBA 9.7.5 orders them: the QP must
 * be able to receive (RTR or later), a connected QP takes packets only from
 * its remote QP at its path's address (anything else is silently dropped,
 * as the HCA drops invalid packets, IBA 9.6), the PSN must be the expected one
 * (reliable transports), the QP must permit the operation, then keys and
 * bounds are checked for the whole message before a byte is written.
 * Reliable transports answer every outcome (ACK, RNR NAK, error NAK, READ
 * or atomic response); UC and UD drop silently what they cannot take.
 */
#include <stdlib.h>

#include "device.h"

/* ---- responses ----------------------------------------------------------- */

/*
 * The path of a response: the QP's, or for a DCT context the address its
 * DCI's requests came from (a DCT has no path of its own to stamp).
 */
static void resp_stamp(const struct dev_qp *dq, struct dev_pkt *r)
{
	dev_path_stamp(dq->qp, r);
	if (dq->qp->dc != EMU_DC_DCT)
		return;
	r->dlid = dq->dc_rlid;
	memcpy(r->dgid, dq->dc_rgid, 16);
}

static struct dev_pkt *resp_alloc(const struct dev_qp *dq, uint32_t dst,
				  uint8_t op, uint32_t psn, uint32_t payload)
{
	struct dev_pkt *r = wire_alloc(payload);

	if (!r)
		return NULL;
	r->op = op;
	r->flags = 0;
	r->src_qpn = dq->qpn;
	r->dst_qpn = dst;
	r->psn = psn & DEV_PSN_MASK;
	r->len = payload;
	r->offset = 0;
	resp_stamp(dq, r);
	return r;
}

static void nak_now(struct dev_qp *dq, uint32_t dst, uint32_t psn, uint8_t nak)
{
	struct dev_pkt *r = resp_alloc(dq, dst, DOP_NAK, psn, 0);

	if (!r)
		return;
	r->nak = nak;
	r->rnr_timer = dq->qp->attr.min_rnr_timer;
	wire_send(r);
}

/*
 * The earliest answer dq still owes (the READ or atomic whose next
 * response has the lowest PSN), or NULL.  Every PSN owed is below epsn.
 */
static struct dev_rd *rd_owed(struct dev_qp *dq)
{
	struct dev_rd *first = NULL;
	int32_t fd = 0;

	for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
		struct dev_rd *r = &dq->replay[i];
		int32_t d;

		if (!r->valid || !r->queued)
			continue;
		d = dev_psn_diff(r->psn + r->next, dq->epsn);
		if (!first || d < fd) {
			first = r;
			fd = d;
		}
	}
	return first;
}

/*
 * Must an ACK or NAK of psn wait?  The responder answers in PSN order
 * (IBA vol. 1, 9.7.5): one past a response still owed would tell the
 * requester that response was lost, and it would ask again.
 */
static bool resp_behind(struct dev_qp *dq, uint32_t psn)
{
	struct dev_rd *r = rd_owed(dq);

	return r && dev_psn_diff(psn, r->psn + r->next) >= 0;
}

/*
 * A NAK waits behind the answers owed before it; one is kept (the first:
 * the requester goes back to it, and a later one would only repeat it).
 */
static void send_nak(struct dev_qp *dq, const struct dev_pkt *req, uint8_t nak)
{
	if (!resp_behind(dq, req->psn)) {
		nak_now(dq, req->src_qpn, req->psn, nak);
		return;
	}
	if (dq->nak_held)
		return;
	dq->nak_held = true;
	dq->held_nak = nak;
	dq->held_nak_psn = req->psn & DEV_PSN_MASK;
	dq->held_nak_dst = req->src_qpn;
	dev_eng.resp_owed = true;
}

static void queue_ack(struct dev_qp *dq, const struct dev_pkt *req, uint32_t psn)
{
	dq->ack_psn = psn & DEV_PSN_MASK;
	dq->ack_dst = req->src_qpn;
	if (!dq->ack_pending) {
		dq->ack_pending = true;
		dq->next_ack = dev_eng.acks;
		dev_eng.acks = dq;
	}
}

/*
 * dq's coalesced ACK.  One to a QP of this host is handed to it at once
 * when the loopback ring would deliver it next (the loopback shortcut,
 * wire.h).
 */
static void ack_now(struct dev_qp *dq)
{
	struct dev_pkt a, *r;

	dq->ack_pending = false;
	dev_pkt_clear(&a);
	a.size = (uint32_t)sizeof(a);
	a.op = DOP_ACK;
	a.src_qpn = dq->qpn;
	a.dst_qpn = dq->ack_dst;
	a.psn = dq->ack_psn;
	resp_stamp(dq, &a);
	if (wire_shortcut_ok(&a)) {
		wire_shortcut_sent();
		wire_count_tx_later(&a);
		dev_resp_packet(&a);	/* which counts its arrival */
		return;
	}
	r = wire_alloc(0);
	if (!r)
		return;	/* lost like a dropped ACK: the requester retries */
	memcpy(r, &a, sizeof(a));
	wire_send(r);
}

/*
 * Coalesced ACKs: one per QP per batch of packets, as HCAs coalesce them.
 * One past an answer still owed waits for it (ack_held): the pump sends
 * it when the QP owes nothing before it.
 */
void dev_resp_flush_acks(void)
{
	while (dev_eng.acks) {
		struct dev_qp *dq = dev_eng.acks;

		dev_eng.acks = dq->next_ack;
		if (resp_behind(dq, dq->ack_psn)) {
			dq->ack_held = true;	/* still ack_pending, off the list */
			dev_eng.resp_owed = true;
			continue;
		}
		ack_now(dq);
	}
}

/* ---- source of connected-transport packets -------------------------------- */

static bool roce(void)
{
	return emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET;
}

/*
 * Is p from the QP this RC/UC/XRC QP is connected to?  Its source QPN must
 * be the QP's remote QPN and its source address the one the QP's path
 * names: the SLID on InfiniBand, the SGID when the path is global (always on
 * RoCE, where LIDs do not exist).  A packet failing this is invalid for the
 * QP and silently dropped (IBA vol. 1, 9.6: header validation precedes any
 * response), so a third party can neither inject requests nor forge
 * acknowledgements.
 */
static inline bool from_peer(const struct emu_qp *qp, const struct dev_pkt *p)
{
	const struct ibv_ah_attr *ah = &qp->attr.ah;

	if (p->src_qpn != qp->attr.dest_qp_num)
		return false;
	if (!roce() && p->slid != ah->dlid)
		return false;
	if (roce() || ah->is_global)
		return (p->flags & DPKT_GRH) && !memcmp(p->sgid, ah->grh.dgid.raw, 16);
	return true;
}

/*
 * Does qp take p's transport (IBA 9.6: a packet whose BTH opcode is not of
 * the QP's service type is invalid for it and silently dropped)?  RC, UC,
 * UD and XRC QPs take their own; DC requests are RC packets that carry a
 * DCETH, which only a DCT takes, and a DCT takes nothing else (its DCIs'
 * responses are plain RC).
 */
static bool tp_ok(const struct emu_qp *qp, const struct dev_pkt *p)
{
	uint8_t want = qp->type == IBV_QPT_UD ? DTP_UD :
		       qp->type == IBV_QPT_UC ? DTP_UC :
		       qp->type == IBV_QPT_XRC_SEND || qp->type == IBV_QPT_XRC_RECV ? DTP_XRC :
		       DTP_RC;

	return p->tp == want && !(p->flags & DPKT_DCETH) == (qp->dc != EMU_DC_DCT);
}

/* ---- helpers ------------------------------------------------------------- */


/*
 * A responder error that takes the QP down (reliable transports).  A DCT
 * serves every initiator: the error NAKs the one DCI, the DCT stays.
 */
static void resp_fatal(struct dev_qp *dq, const struct dev_pkt *req, uint8_t nak,
		       enum ibv_event_type ev, bool reliable)
{
	if (reliable)
		send_nak(dq, req, nak);
	if (dq->qp->dc != EMU_DC_DCT)
		dev_qp_fatal(dq, ev);
}

static void recv_error_cqe(struct dev_qp *dq, const struct dev_rwqe *r,
			   struct emu_cq *cq, uint32_t uidx, uint8_t syndrome)
{
	struct dev_cqe c = {
		.opcode = RF_CQE_RESP_ERR,
		.syndrome = syndrome,
		.wqe_counter = (uint16_t)r->idx,
		.qpn = dq->qpn,
		.uidx = uidx,
	};

	dev_cq_write(cq, &c);
}

/* IPv4 header checksum (RFC 791). */
static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static bool gid_is_v4mapped(const uint8_t *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, pfx, 12);
}

/*
 * The 40 bytes a UD receive buffer starts with: the GRH (InfiniBand, RoCE
 * v1), the IPv6 header (RoCE v2, the GRH's layout) or the IPv4 header in
 * its last 20 bytes (RoCE v2 between IPv4-mapped GIDs).
 */
static void build_grh(const struct dev_pkt *p, uint8_t *g, uint8_t *cqe_sl)
{
	bool v2 = emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET &&
		  !(p->flags & DPKT_ROCE_V1);

	memset(g, 0, 40);
	if (v2 && gid_is_v4mapped(p->sgid) && gid_is_v4mapped(p->dgid)) {
		uint8_t *ip = g + 20;
		uint16_t tot = (uint16_t)(20 + 8 + 12 + 8 + p->len + 4);

		ip[0] = 0x45;
		ip[1] = p->tclass;
		ip[2] = tot >> 8;
		ip[3] = tot & 0xff;
		ip[6] = 0x40;			/* don't fragment */
		ip[8] = p->hop_limit;
		ip[9] = 17;			/* UDP */
		memcpy(ip + 12, p->sgid + 12, 4);
		memcpy(ip + 16, p->dgid + 12, 4);
		{
			uint16_t cs = ip_csum(ip);

			ip[10] = cs >> 8;
			ip[11] = cs & 0xff;
		}
		*cqe_sl = 0x8 | 0x2;		/* UDP, L3 IPv4 */
		return;
	}
	{
		uint32_t w0 = htobe32(6u << 28 | (uint32_t)p->tclass << 20 |
				      (p->flow_label & 0xfffff));
		uint16_t plen = htobe16((uint16_t)(p->len + (v2 ? 8 + 12 + 8 + 4 : 12 + 8 + 4)));

		memcpy(g, &w0, 4);
		memcpy(g + 4, &plen, 2);
		g[6] = v2 ? 17 : 0x1b;		/* UDP, or IBA's next header */
		g[7] = p->hop_limit;
		memcpy(g + 8, p->sgid, 16);
		memcpy(g + 24, p->dgid, 16);
		if (v2)
			*cqe_sl = 0x8 | 0x1;	/* UDP, L3 IPv6 */
		else if (emu_cfg.link_layer == IBV_LINK_LAYER_ETHERNET)
			*cqe_sl = 0;		/* RoCE v1: L3 GRH, no UDP */
	}
}

/* ---- UD ------------------------------------------------------------------ */

static void resp_ud(struct dev_qp *dq, const struct dev_pkt *p)
{
	struct emu_qp *qp = dq->qp;
	const struct emu_pd *pd = qp->srq ? qp->srq->pd : qp->pd;
	struct dev_rwqe r;
	struct dev_sgl sgl;
	uint32_t uidx = qp->uidx;
	uint8_t sl = p->sl;

	if (p->op != DOP_SEND && p->op != DOP_SEND_IMM)
		return;
	if (p->qkey != qp->attr.qkey) {
		wire_stats.drop_qkey++;
		return;		/* Q_Key violation: silently dropped (IBA 10.2.4) */
	}
	if (!qp->recv_cq || !dev_rq_take(dq, qp->srq, &r))
		return;		/* no receive posted: UD drops */
	if (dev_sgl_from_recv(&sgl, &r, pd, qp, 40ull + p->len)) {
		recv_error_cqe(dq, &r, qp->recv_cq, uidx, RF_CQE_SYNDROME_LOCAL_PROT_ERR);
		dev_qp_fatal(dq, 0);
		return;
	}
	if (sgl.total < 40ull + p->len) {
		recv_error_cqe(dq, &r, qp->recv_cq, uidx, RF_CQE_SYNDROME_LOCAL_LENGTH_ERR);
		return;
	}
	{
		uint8_t g[40];
		bool ok = true;

		if (p->flags & DPKT_GRH) {
			build_grh(p, g, &sl);
			ok = dev_sgl_copy_in(&sgl, 0, g, 40);
		}
		if (!ok || !dev_sgl_copy_in(&sgl, 40, p->payload, p->len)) {
			/* the receive buffer's pages went away */
			recv_error_cqe(dq, &r, qp->recv_cq, uidx, RF_CQE_SYNDROME_LOCAL_PROT_ERR);
			dev_qp_fatal(dq, 0);
			return;
		}
	}
	if (DEV_UNLIKELY(sgl.sig.synd))
		dev_sig_err_cqe(qp->recv_cq, qp->qpn, &sgl.sig);
	{
		struct dev_cqe c = {
			.opcode = p->op == DOP_SEND_IMM ? RF_CQE_RESP_SEND_IMM : RF_CQE_RESP_SEND,
			.se = (p->flags & DPKT_SE) != 0,
			.g = (p->flags & DPKT_GRH) ? RF_CQE_GRH_IN_BUF : RF_CQE_GRH_NONE,
			.sl = sl,
			.slid = p->slid,
			.wqe_counter = (uint16_t)r.idx,
			.qpn = dq->qpn,
			.uidx = uidx,
			.rqpn = p->src_qpn,
			.byte_cnt = p->len + 40,
			.imm = p->op == DOP_SEND_IMM ? p->imm : htobe32(qp->attr.pkey_index),
		};

		dev_cq_write(qp->recv_cq, &c);
	}
}

/* ---- UD multicast ---------------------------------------------------------- */

/* Is attachment m one of the group p is addressed to? */
static bool mcast_match(const struct emu_mcast *m, const struct dev_pkt *p)
{
	/* by MGID when the packet names it (as mlx5's MCG table), else by MLID */
	if (p->flags & DPKT_GRH)
		return !memcmp(m->gid.raw, p->dgid, 16);
	return m->lid == p->dlid;
}

/* Did p leave from qp's own port (loopback within the HCA)? */
static bool mcast_from_port_of(const struct emu_qp *qp, const struct dev_pkt *p)
{
	const struct emu_port_id *port = dev_qp_port(qp);

	if (!roce())
		return p->slid == port->lid;
	for (unsigned i = 0; i < port->num_gids; i++)
		if (!memcmp(p->sgid, port->gid[i].raw, 16))
			return true;
	return false;
}

/*
 * A multicast packet reaching this host: one copy to every QP attached to
 * its group, whatever the number of its attachments (ibv_attach_mcast(3):
 * attached twice, one copy), each with its own Q_Key check and receive.
 * A QP created with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB does not hear itself
 * or any QP on its port (mlx5's block_lb_mc).  Only SENDs to DestQP
 * 0xFFFFFF are multicast (IBA 9.2); anything else is dropped.
 */
static void resp_mcast(const struct dev_pkt *p)
{
	if (p->dst_qpn != DEV_MCAST_QPN)
		return;
	if (p->tp != DTP_UD || (p->flags & DPKT_DCETH)) {
		wire_stats.drop_transport++;
		return;
	}
	for (struct emu_ctx *ctx = emu_ctx_first_locked(); ctx; ctx = ctx->next) {
		for (const struct emu_mcast *m = ctx->mcast; m; m = m->next) {
			const struct emu_mcast *o;
			struct dev_qp *dq = dev_qp_of(m->qp);

			if (!dq || !mcast_match(m, p) || !dev_qp_can_receive(m->qp))
				continue;
			for (o = ctx->mcast; o != m; o = o->next)
				if (o->qp == m->qp && mcast_match(o, p))
					break;
			if (o != m)
				continue;	/* delivered through an earlier attachment */
			if ((p->flags & DPKT_MC_NO_LB) && mcast_from_port_of(m->qp, p))
				continue;
			resp_ud(dq, p);
		}
	}
}

/* ---- connected transports ------------------------------------------------- */

struct resp_env {
	struct dev_qp		*dq;
	struct emu_qp		*qp;
	const struct emu_pd	*pd;		/* QP's, or the XRC SRQ's */
	struct emu_srq		*srq;		/* receives come from here (or RQ) */
	struct emu_cq		*cq;
	uint32_t		uidx;
	bool			reliable;
};

/* Take a receive WQE for a message: 0, or DNAK_RNR (none, or RNR forced). */
static int take_recv(struct resp_env *v, struct dev_rwqe *r)
{
	if (wire_fault.force_rnr > 0 && v->reliable && wire_fault_hit(wire_fault.force_rnr))
		return DNAK_RNR;
	if (!v->cq || !dev_rq_take(v->dq, v->srq, r))
		return DNAK_RNR;
	return 0;
}

/* The receive CQE of a connected-transport message that consumed WQE idx. */
static struct dev_cqe resp_cqe(const struct resp_env *v, const struct dev_pkt *p,
			       uint32_t idx, uint8_t opcode)
{
	struct dev_cqe c = {
		.opcode = opcode,
		.se = (p->flags & DPKT_SE) != 0,
		.sl = p->sl,
		.slid = p->slid,
		.wqe_counter = (uint16_t)idx,
		.qpn = v->dq->qpn,
		.uidx = v->uidx,
		.rqpn = p->src_qpn,
		.byte_cnt = p->dma_len,
	};

	return c;
}

static bool resp_env_init(struct resp_env *v, struct dev_qp *dq, const struct dev_pkt *p)
{
	struct emu_qp *qp = dq->qp;

	v->dq = dq;
	v->qp = qp;
	v->reliable = qp->type != IBV_QPT_UC;
	if (qp->type == IBV_QPT_XRC_RECV) {
		struct emu_srq *srq = emu_srq_by_srqn_locked(p->xrc_srqn);

		/* the SRQ must be an XRC SRQ of the target QP's domain */
		if (!srq || srq->type != IBV_SRQT_XRC || srq->xrcd != qp->xrcd ||
		    !srq->dev_priv)
			return false;
		v->srq = srq;
		v->pd = srq->pd;
		v->cq = srq->cq;
		v->uidx = srq->uidx;
		return true;
	}
	v->srq = qp->srq;
	v->pd = qp->pd;
	v->cq = qp->recv_cq;
	v->uidx = qp->uidx;
	/* a TM SRQ completes every receive into its own CQ, as XRC does */
	if (qp->srq && qp->srq->type == IBV_SRQT_TM) {
		v->cq = qp->srq->cq;
		v->uidx = qp->srq->uidx;
	}
	return true;
}

/* Is this QP's SEND matched against a TM SRQ's tag list? */
static bool resp_tm(const struct resp_env *v)
{
	return v->srq && v->srq->type == IBV_SRQT_TM && v->qp->type == IBV_QPT_RC &&
	       v->srq->dev_priv && dev_srq_of(v->srq)->tm;
}

/*
 * A rendezvous request whose tag matched an entry (tm.c, one packet): the
 * tag's first completion, a NO_PACKET CQE with app_op CONSUMED (the only
 * opcode under which libmlx5's mlx5_cq_read_wc_opcode() takes CONSUMED for
 * IBV_WC_TM_RECV; IBV_WC_TM_MATCH, the header in the CQE, the tag still
 * held), and the READ of the sender's buffer queued on this QP.  Data
 * longer than the buffer fails as an eager message does.
 */
static int resp_send_rndv(struct resp_env *v, const struct dev_pkt *p)
{
	struct dev_qp *dq = v->dq;
	struct dev_cqe c = resp_cqe(v, p, 0, RF_CQE_NO_PACKET);

	if (!dev_tm_rndv_start(dq, p))
		return DNAK_INV_REQ;
	c.byte_cnt = 0;
	c.tm_op = DEV_TM_CONSUMED;
	c.tm_info = dq->recv_tm_idx;
	memcpy(c.tm_head, dq->recv_tmh, sizeof(c.tm_head));
	dev_cq_write(v->cq, &c);
	return 0;
}

/*
 * A packet of a SEND whose tag matched an entry (tm.c): the payload after
 * the header goes to the entry's buffer, and the last packet's CQE is the
 * tag's (app_op CONSUMED_MSG, app_info the entry, the header in the CQE,
 * byte_cnt the data without it: handle_tag_matching() and
 * mlx5_cq_read_wc_tm_info() of libmlx5's cq.c).  The buffer is checked
 * when the message arrives, against the SRQ's PD.  A message longer than
 * the buffer, or a buffer whose key does not cover it, fails as a SEND into
 * a bad receive buffer does (NAK, the QP to the error state), but with no
 * receive CQE: libmlx5 reads the error CQE of an SRQ as one of the SRQ's
 * own WQEs, which a tagged buffer is not.
 */
static int resp_send_tagged(struct resp_env *v, const struct dev_pkt *p)
{
	struct dev_qp *dq = v->dq;
	const struct dev_tm_entry *x = &dq->recv_tm_buf;
	uint32_t skip = (p->flags & DPKT_FIRST) ? DEV_TMH_LEN : 0;
	struct dev_sgl sgl = { .n = 0, .total = 0 };
	uint8_t *dst;

	if (p->dma_len - DEV_TMH_LEN > x->bc) {
		dq->recv_busy = false;
		return DNAK_INV_REQ;
	}
	if (p->len > skip) {
		dst = dev_lkey_ptr(x->lkey, x->addr, x->bc, v->srq->pd, IBV_ACCESS_LOCAL_WRITE);
		if (dst) {
			sgl.e[0] = (struct dev_sge){ dst, x->bc, false, false };
			sgl.n = 1;
			sgl.total = x->bc;
		}
		if (!dst || !dev_sgl_copy_in(&sgl, p->offset + skip - DEV_TMH_LEN,
					     p->payload + skip, p->len - skip)) {
			dq->recv_busy = false;
			return DNAK_REM_OP;
		}
	}
	if (p->flags & DPKT_LAST) {
		struct dev_cqe c = resp_cqe(v, p, 0, p->op == DOP_SEND_IMM ?
					    RF_CQE_RESP_SEND_IMM : RF_CQE_RESP_SEND);

		if (p->op == DOP_SEND_IMM)
			c.imm = p->imm;
		c.byte_cnt = p->dma_len - DEV_TMH_LEN;
		c.tm_op = DEV_TM_CONSUMED_MSG;
		c.tm_info = dq->recv_tm_idx;
		memcpy(c.tm_head, dq->recv_tmh, sizeof(c.tm_head));
		dq->recv_busy = false;
		dev_cq_write(v->cq, &c);
	}
	return 0;
}

/* SEND, SEND_IMM, SEND_INV; returns a DNAK_* or 0. */
static int resp_send(struct resp_env *v, const struct dev_pkt *p)
{
	struct dev_qp *dq = v->dq;
	struct dev_rwqe r;
	struct dev_sgl sgl;
	bool scat;

	if (p->flags & DPKT_FIRST || !dq->recv_busy) {
		if (!(p->flags & DPKT_FIRST))
			return DNAK_INV_REQ;	/* middle without a start */
		if (!dq->recv_busy) {
			dq->recv_tm = resp_tm(v) ? dev_tm_classify(dq, v->srq, p) : 0;
			if (dq->recv_tm == DEV_TM_CONSUMED_MSG) {
				dq->recv_busy = true;
				return resp_send_tagged(v, p);
			}
			if (dq->recv_tm == DEV_TM_CONSUMED)
				return resp_send_rndv(v, p);
			if (take_recv(v, &r))
				return DNAK_RNR;
			dq->recv_busy = true;
			dq->recv_idx = r.idx;
			dq->recv_srq = r.srq;
		}
	}
	if (dq->recv_tm == DEV_TM_CONSUMED_MSG)
		return resp_send_tagged(v, p);
	dev_rq_locate(dq, dq->recv_srq, dq->recv_idx, &r);
	if (dev_sgl_from_recv(&sgl, &r, v->pd, v->qp, p->dma_len)) {
		dq->recv_busy = false;
		recv_error_cqe(dq, &r, v->cq, v->uidx, RF_CQE_SYNDROME_LOCAL_PROT_ERR);
		return DNAK_REM_OP;
	}
	if ((uint64_t)p->offset + p->len > sgl.total || p->dma_len > sgl.total) {
		dq->recv_busy = false;
		recv_error_cqe(dq, &r, v->cq, v->uidx, RF_CQE_SYNDROME_LOCAL_LENGTH_ERR);
		return DNAK_INV_REQ;
	}
	/*
	 * Scatter-to-CQE: a whole small message goes into the CQE and the
	 * receive buffer stays untouched; libmlx5 copies it out when polled.
	 */
	scat = (p->flags & DPKT_FIRST) && (p->flags & DPKT_LAST) && !sgl.sig_in.mk &&
	       dev_scat_fits(v->qp->scat_res, v->cq, p->dma_len);
	if (!scat && !dev_sgl_copy_in(&sgl, p->offset, p->payload, p->len)) {
		/* the receive buffer's pages went away: as a bad receive lkey */
		dq->recv_busy = false;
		recv_error_cqe(dq, &r, v->cq, v->uidx, RF_CQE_SYNDROME_LOCAL_PROT_ERR);
		return DNAK_REM_OP;
	}
	/* through a signature key: a failed check reported before the completion */
	if (DEV_UNLIKELY(sgl.sig.synd))
		dev_sig_err_cqe(v->cq, v->qp->qpn, &sgl.sig);
	if (p->flags & DPKT_LAST) {
		struct dev_cqe c = resp_cqe(v, p, r.idx, RF_CQE_RESP_SEND);

		/* on a TM SRQ: unexpected (counted) or without a tag, header and all */
		c.tm_op = dq->recv_tm;
		if (dq->recv_tm == DEV_TM_UNEXPECTED)
			dev_srq_of(v->srq)->tm->hw_cnt++;
		if (scat) {
			c.scat = p->payload;
			c.scat_len = (uint8_t)p->len;
			c.scat_max = v->qp->scat_res;
		}
		if (p->op == DOP_SEND_IMM) {
			c.opcode = RF_CQE_RESP_SEND_IMM;
			c.imm = p->imm;
		} else if (p->op == DOP_SEND_INV) {
			c.opcode = RF_CQE_RESP_SEND_INV;
			c.imm = p->imm;		/* BE32 rkey, as the WQE carried it */
			if (dev_invalidate_rkey(v->qp, v->pd, be32toh(p->imm))) {
				dq->recv_busy = false;
				recv_error_cqe(dq, &r, v->cq, v->uidx,
					       RF_CQE_SYNDROME_LOCAL_PROT_ERR);
				return DNAK_INV_REQ;
			}
		}
		dq->recv_busy = false;
		dev_cq_write(v->cq, &c);
		/* from another host: its next SENDs may come directly (grant.c) */
		if (EMU_NUM_HOST(p->src_qpn) != emu_cfg.host_id &&
		    (!v->srq || v->srq->type == IBV_SRQT_BASIC || resp_tm(v)) &&
		    ((v->qp->type == IBV_QPT_RC && !v->qp->dc) || v->qp->dc == EMU_DC_DCT))
			dev_grant_lend(dq);
	}
	return 0;
}

static bool force_rae(void)
{
	return wire_fault.force_rae > 0 && wire_fault_hit(wire_fault.force_rae);
}

/* RDMA WRITE (with immediate); returns a DNAK_* or 0. */
static int resp_write(struct resp_env *v, const struct dev_pkt *p)
{
	bool imm_last = p->op == DOP_WRITE_IMM && (p->flags & DPKT_LAST);
	struct dev_sig_err sig = { .synd = 0 };
	uint32_t need = dev_qp_need(v->qp, IBV_ACCESS_REMOTE_WRITE);
	uint8_t *dst = NULL;
	bool indirect = false;
	struct dev_rwqe r;
	uint32_t ridx = 0;

	if (!(v->qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
		return DNAK_INV_REQ;
	if (!p->dma_len && p->len)
		return DNAK_INV_REQ;	/* payload beyond the message length */
	if (p->dma_len) {
		if (p->flags & DPKT_FIRST && force_rae())
			return DNAK_REM_ACCESS;
		dst = dev_rkey_ptr(p->rkey, p->raddr, p->dma_len, v->pd, v->qp, need);
		/* an indirect mkey's entries are checked as the data reaches them */
		indirect = !dst && dev_rkey_ok(p->rkey, p->raddr, p->dma_len, v->pd, v->qp, need);
		if ((!dst && !indirect) || (uint64_t)p->offset + p->len > p->dma_len)
			return DNAK_REM_ACCESS;
	}
	if (imm_last) {
		/* the immediate consumes a receive: take it before placing data */
		if (take_recv(v, &r))
			return DNAK_RNR;
		ridx = r.idx;
	}
	if (p->len && (dst ? !dev_copy(dst + p->offset, p->payload, p->len) :
		       indirect && !dev_rkey_copy(p->rkey, p->raddr, p->dma_len, p->offset,
						  (void *)p->payload, p->len, v->pd, v->qp,
						  need, true, &sig))) {
		/*
		 * The target pages went away (unmapped, or not writable): a
		 * remote access error for the requester; a receive already
		 * taken for the immediate completes with a local access error.
		 */
		if (imm_last)
			recv_error_cqe(v->dq, &r, v->cq, v->uidx, RF_CQE_SYNDROME_LOCAL_ACCESS_ERR);
		return DNAK_REM_ACCESS;
	}
	/*
	 * Into a signature key: a failed check goes to the key's owner, who
	 * has no WQE here, on the CQ of the responder's completions.
	 */
	if (DEV_UNLIKELY(sig.synd))
		dev_sig_err_cqe(v->cq, v->qp->qpn, &sig);
	if (imm_last) {
		struct dev_cqe c = resp_cqe(v, p, ridx, RF_CQE_RESP_WR_IMM);

		c.imm = p->imm;
		dev_cq_write(v->cq, &c);
	}
	return 0;
}

static uint32_t read_npkt(uint32_t len)
{
	return len ? (len + WIRE_MTU - 1) / WIRE_MTU : 1;
}

/* RDMA READ: may it be answered?  A DNAK_* or 0. */
static int resp_read_check(struct resp_env *v, const struct dev_pkt *p)
{
	if (!(v->qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ))
		return DNAK_INV_REQ;
	if (!p->dma_len)
		return 0;
	if (force_rae())
		return DNAK_REM_ACCESS;
	if (!dev_rkey_ok(p->rkey, p->raddr, p->dma_len, v->pd, v->qp, IBV_ACCESS_REMOTE_READ))
		return DNAK_REM_ACCESS;
	return 0;
}

/* Field-wise addition: a set boundary bit stops the carry out of that bit. */
static uint64_t masked_add(uint64_t x, uint64_t y, uint64_t boundary)
{
	while (y) {
		uint64_t c = (x & y) & ~boundary;

		x ^= y;
		y = c << 1;
	}
	return x;
}

static uint64_t do_atomic(const struct dev_pkt *p, uint8_t *ptr)
{
	if (p->dma_len == 4) {
		uint32_t *a = (uint32_t *)ptr, old, nv;

		old = __atomic_load_n(a, __ATOMIC_RELAXED);
		do {
			if (p->op == DOP_MCS) {
				if ((old ^ (uint32_t)p->atomic[1]) & (uint32_t)p->atomic[3])
					return old;
				nv = (old & ~(uint32_t)p->atomic[2]) |
				     ((uint32_t)p->atomic[0] & (uint32_t)p->atomic[2]);
			} else {
				nv = (uint32_t)masked_add(old, (uint32_t)p->atomic[0],
							  (uint32_t)p->atomic[1] | 0xffffffff00000000ull);
			}
		} while (!__atomic_compare_exchange_n(a, &old, nv, false,
						      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
		return old;
	}
	{
		uint64_t *a = (uint64_t *)ptr, old, nv;

		if (p->op == DOP_FA)
			return __atomic_fetch_add(a, p->atomic[0], __ATOMIC_SEQ_CST);
		if (p->op == DOP_CS) {
			old = p->atomic[1];
			__atomic_compare_exchange_n(a, &old, p->atomic[0], false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
			return old;
		}
		old = __atomic_load_n(a, __ATOMIC_RELAXED);
		do {
			if (p->op == DOP_MCS) {
				if ((old ^ p->atomic[1]) & p->atomic[3])
					return old;
				nv = (old & ~p->atomic[2]) | (p->atomic[0] & p->atomic[2]);
			} else {
				nv = masked_add(old, p->atomic[0], p->atomic[1]);
			}
		} while (!__atomic_compare_exchange_n(a, &old, nv, false,
						      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
		return old;
	}
}

/*
 * Responder resources (IBA vol. 1 chapter 9.7; max_dest_rd_atomic): a READ or
 * atomic holds one until its answer has left this host: all sent (busy),
 * and the last packet out of the link's backlog (ticket).  Entries stay as
 * the replay cache after that.  A duplicate's answer takes none: it answers
 * a request the requester already counts.
 */
static unsigned rd_in_flight(const struct dev_qp *dq)
{
	unsigned n = 0;

	for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
		const struct dev_rd *r = &dq->replay[i];

		if (r->valid && (r->busy || !wire_left(r->dst, r->ticket)))
			n++;
	}
	return n;
}

/*
 * A requester that has more READ/atomics outstanding than the responder
 * has resources breaks the contract of max_rd_atomic <= the peer's
 * max_dest_rd_atomic: NAK invalid request.
 */
static bool rd_admit(const struct dev_qp *dq)
{
	/* a DCT takes no max_dest_rd_atomic: it offers the device's maximum */
	unsigned limit = dq->qp->dc == EMU_DC_DCT ? DEV_ATOMIC_REPLAY :
			 dev_rd_atomic_limit(dq->qp->attr.max_dest_rd_atomic);

	return rd_in_flight(dq) < limit;
}

/*
 * The entry for a new request: the oldest.  The requester has at most
 * max_rd_atomic (<= 16) requests unanswered, always its newest, so the
 * other 15 entries hold every one it may still retry (rd_admit() NAKs a
 * requester that breaks this).
 */
static struct dev_rd *rd_slot(struct dev_qp *dq)
{
	struct dev_rd *r = &dq->replay[dq->replay_next];

	dq->replay_next = (dq->replay_next + 1) % DEV_ATOMIC_REPLAY;
	return r;
}

/* Record request p (first PSN psn) in r, its whole answer owed. */
static void rd_record(struct dev_rd *r, const struct dev_pkt *p, const struct emu_pd *pd,
		      uint64_t orig)
{
	*r = (struct dev_rd){
		.psn = p->psn & DEV_PSN_MASK,
		.npkt = p->op == DOP_READ ? read_npkt(p->dma_len) : 1,
		.dst = p->src_qpn,
		.rkey = p->rkey,
		.len = p->dma_len,
		.raddr = p->raddr,
		.pd = pd,
		.orig = orig,
		.op = p->op,
		.valid = true,
		.queued = true,
		.busy = true,
	};
	dev_eng.resp_owed = true;
}

/*
 * A duplicate READ or atomic asks for the answer from its PSN on (a
 * retried READ may ask for the rest of the original, IBA 9.7.5: the
 * responder answers it from there).  The requester goes back N: every
 * request after it comes again, so what was owed after it is dropped and
 * answered when its duplicate comes (its resource is given back: a
 * duplicate's answer takes none).
 */
static void rd_restart(struct dev_qp *dq, struct dev_rd *r, uint32_t from)
{
	for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
		struct dev_rd *q = &dq->replay[i];

		if (q == r || !q->valid || !q->queued || dev_psn_diff(q->psn, r->psn) < 0)
			continue;
		q->queued = false;
		q->busy = false;
		q->ticket = 0;
	}
	r->next = r->start = from;
	r->queued = true;
	dev_eng.resp_owed = true;
}

/* The QP's responder gives up what it owes (reset, error, a new DC connection). */
static void rd_drop(struct dev_qp *dq)
{
	for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
		dq->replay[i].queued = false;
		dq->replay[i].busy = false;
	}
	dq->nak_held = false;
	if (dq->ack_held) {
		dq->ack_held = false;
		dq->ack_pending = false;	/* it is on no list */
	}
}

void dev_resp_reset(struct dev_qp *dq)
{
	rd_drop(dq);
	memset(dq->replay, 0, sizeof(dq->replay));
	dq->replay_next = 0;
}

/*
 * Response r->next of r, if there is room for it: 1 sent, 0 not now, -1
 * r failed (the READ's memory is no longer readable: its key, window or
 * pages went away while it was answered; a remote access error, as the
 * first packet would have met).
 */
static int rd_send_one(struct dev_qp *dq, struct dev_rd *r)
{
	uint32_t i = r->next, off = 0, len = 0;
	struct dev_sig_err sig = { .synd = 0 };
	const uint8_t *src = NULL;
	struct dev_pkt *p;

	if (r->op != DOP_READ) {
		p = resp_alloc(dq, r->dst, DOP_ATOMIC_RESP, r->psn, 0);
		if (!p)
			return 0;
		p->flags |= DPKT_FIRST | DPKT_LAST;	/* keep the GRH flag of the stamp */
		p->atomic[0] = r->orig;
	} else {
		if (r->len) {
			off = i * WIRE_MTU;
			len = r->len - off < WIRE_MTU ? r->len - off : WIRE_MTU;
			src = dev_rkey_ptr(r->rkey, r->raddr + off, len, r->pd, dq->qp,
					   IBV_ACCESS_REMOTE_READ);
			/* through an indirect mkey: its pieces copied below */
			if (!src && !dev_rkey_ok(r->rkey, r->raddr + off, len, r->pd, dq->qp,
						 IBV_ACCESS_REMOTE_READ))
				return -1;
		}
		p = resp_alloc(dq, r->dst, DOP_READ_RESP, r->psn + i, len);
		if (!p)
			return 0;
		p->offset = off;
		if (i == r->start)
			p->flags |= DPKT_FIRST;
		if (i == r->npkt - 1)
			p->flags |= DPKT_LAST;
		if (len && (src ? !dev_copy(p->payload, src, len) :
			    !dev_rkey_copy(r->rkey, r->raddr, r->len, off, p->payload, len, r->pd,
					   dq->qp, IBV_ACCESS_REMOTE_READ, false, &sig)))
			return -1;	/* p is never sent */
		/* from a signature key: its memory's check failed, reported to its owner */
		if (DEV_UNLIKELY(sig.synd))
			dev_sig_err_cqe(dq->qp->recv_cq, dq->qp->qpn, &sig);
	}
	wire_send(p);
	if (++r->next == r->npkt) {
		r->queued = false;
		if (r->busy) {
			r->busy = false;
			r->ticket = wire_ticket(r->dst);
		}
	}
	return 1;
}

/*
 * Send what dq owes, in PSN order, while the link to its requester takes
 * it (wire_room(): a backlog past LINK_ROOM holds it back, and the
 * drained link brings the engine back), then what waited behind it: the
 * coalesced ACK, then a NAK.  A ConnectX streams READ responses the same
 * way, as the link takes them; queueing a large READ's at once would pass
 * the backlog's limit and lose the rest.  Returns the packets sent; *left
 * if anything is still owed.
 */
static unsigned resp_pump_qp(struct dev_qp *dq, bool *left)
{
	enum ibv_qp_state st = dq->qp->attr.state;
	unsigned n = 0;
	struct dev_rd *r;

	/* a QP in ERR sends nothing, but what preceded its own error NAK */
	if (st == IBV_QPS_RESET || (st == IBV_QPS_ERR && !dq->nak_held)) {
		rd_drop(dq);
		return 0;
	}
	while ((r = rd_owed(dq))) {
		int rc;

		if (!wire_room(r->dst)) {
			*left = true;
			return n;
		}
		rc = rd_send_one(dq, r);
		if (rc == 0) {
			*left = true;
			return n;
		}
		if (rc < 0) {
			nak_now(dq, r->dst, r->psn + r->start, DNAK_REM_ACCESS);
			rd_drop(dq);
			if (dq->qp->dc != EMU_DC_DCT)
				dev_qp_fatal(dq, IBV_EVENT_QP_ACCESS_ERR);
			return n + 1;
		}
		n++;
	}
	if (dq->ack_held) {
		dq->ack_held = false;
		ack_now(dq);
		n++;
	}
	if (dq->nak_held) {
		dq->nak_held = false;
		nak_now(dq, dq->held_nak_dst, dq->held_nak_psn, dq->held_nak);
		n++;
	}
	return n;
}

unsigned dev_resp_pump(void)
{
	unsigned n = 0;
	bool left = false;

	if (!dev_eng.resp_owed)
		return 0;
	dev_eng.resp_owed = false;
	for (struct dev_qp *dq = dev_eng.qps; dq; dq = dq->next) {
		n += resp_pump_qp(dq, &left);
		for (struct dev_qp *c = dq->dc_conns; c; c = c->dc_next)
			n += resp_pump_qp(c, &left);
	}
	if (left)
		dev_eng.resp_owed = true;
	return n;
}

struct atomic_call {
	const struct dev_pkt	*p;
	uint8_t			*ptr;
	uint64_t		orig;
};

static void atomic_call(void *arg)
{
	struct atomic_call *a = arg;

	a->orig = do_atomic(a->p, a->ptr);
}

static int resp_atomic(struct resp_env *v, const struct dev_pkt *p)
{
	struct dev_qp *dq = v->dq;
	uint8_t *ptr;

	if (!(v->qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC))
		return DNAK_INV_REQ;
	if ((p->dma_len != 8 && p->dma_len != 4) || (p->raddr & (p->dma_len - 1)))
		return DNAK_INV_REQ;		/* misaligned atomic (IBA o9-?) */
	if (force_rae())
		return DNAK_REM_ACCESS;
	ptr = dev_rkey_ptr(p->rkey, p->raddr, p->dma_len, v->pd, v->qp,
			   IBV_ACCESS_REMOTE_ATOMIC);
	/*
	 * An indirect mkey's entry may map an aligned raddr to an unaligned
	 * address (a KLM's address is any byte): the key's translation is
	 * at fault, and an atomic on such a word is no atomic at all on
	 * some CPUs (an alignment fault on arm64), so it is a remote access
	 * error like any other the key causes.
	 */
	if (!ptr || ((uintptr_t)ptr & (p->dma_len - 1)))
		return DNAK_REM_ACCESS;
	{
		struct atomic_call a = { p, ptr, 0 };

		/* the target page went away, or is read-only: remote access error */
		if (!dev_guard_call(atomic_call, &a))
			return DNAK_REM_ACCESS;
		/* answered by the pump, in order behind any READ still owed */
		rd_record(rd_slot(dq), p, v->pd, a.orig);
	}
	return 0;
}

/* A first READ (not a duplicate): it takes a responder resource. */
static int resp_read_new(struct resp_env *v, const struct dev_pkt *p)
{
	int rc;

	if (!rd_admit(v->dq))
		return DNAK_INV_REQ;
	rc = resp_read_check(v, p);
	if (rc)
		return rc;
	/*
	 * The data is read as each response goes, not now: a WRITE or atomic
	 * after the READ may land first, as IBA allows (a requester that
	 * needs the order fences the later WQE, IBV_SEND_FENCE).
	 */
	rd_record(rd_slot(v->dq), p, v->pd, 0);
	return 0;
}

/* A retransmitted request that was executed already. */
static void resp_duplicate(struct resp_env *v, const struct dev_pkt *p)
{
	struct dev_qp *dq = v->dq;
	struct dev_rd *r;

	switch (p->op) {
	case DOP_READ:
		/*
		 * Reads are repeatable: answered again from the duplicate's
		 * PSN, which may be inside the original (the requester asks
		 * for what it is missing).  One the cache no longer holds is
		 * no longer outstanding (rd_slot()): a stale copy, dropped.
		 */
		for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
			int32_t d;

			r = &dq->replay[i];
			if (!r->valid || r->op != DOP_READ)
				continue;
			d = dev_psn_diff(p->psn, r->psn);
			if (d >= 0 && (uint32_t)d < r->npkt) {
				rd_restart(dq, r, (uint32_t)d);
				return;
			}
		}
		return;
	case DOP_CS:
	case DOP_FA:
	case DOP_MCS:
	case DOP_MFA:
		/* never executed twice: the value it answered, again */
		for (unsigned i = 0; i < DEV_ATOMIC_REPLAY; i++) {
			r = &dq->replay[i];
			if (r->valid && r->psn == (p->psn & DEV_PSN_MASK) && r->op == p->op) {
				rd_restart(dq, r, 0);
				return;
			}
		}
		return;
	default:
		queue_ack(dq, p, (dq->epsn - 1) & DEV_PSN_MASK);
		return;
	}
}

static uint32_t req_npkt(const struct dev_pkt *p)
{
	return p->op == DOP_READ ? read_npkt(p->dma_len) : 1;
}

static void resp_connected(struct dev_qp *dq, const struct dev_pkt *p)
{
	struct resp_env v;
	int32_t d = dev_psn_diff(p->psn, dq->epsn);
	int rc;

	if (!resp_env_init(&v, dq, p)) {
		/* XRC: no such SRQ in the target's domain */
		resp_fatal(dq, p, DNAK_INV_REQ, IBV_EVENT_QP_REQ_ERR, true);
		return;
	}
	if (v.reliable) {
		if (d < 0) {
			resp_duplicate(&v, p);
			return;
		}
		if (d > 0) {
			if (!dq->nak_sent) {
				struct dev_pkt q = *p;

				dq->nak_sent = true;
				q.psn = dq->epsn;
				send_nak(dq, &q, DNAK_SEQ);
			}
			return;
		}
	} else if (d != 0 || dq->uc_drop) {
		/* UC: a lost packet loses the message; resynchronise on a FIRST */
		if (!(p->flags & DPKT_FIRST)) {
			dq->uc_drop = true;
			return;
		}
		dq->uc_drop = false;
		dq->recv_busy = false;
		dq->epsn = p->psn & DEV_PSN_MASK;
	}

	switch (p->op) {
	case DOP_SEND:
	case DOP_SEND_IMM:
	case DOP_SEND_INV:
		rc = resp_send(&v, p);
		break;
	case DOP_WRITE:
	case DOP_WRITE_IMM:
		rc = resp_write(&v, p);
		break;
	case DOP_READ:
		rc = v.reliable ? resp_read_new(&v, p) : DNAK_INV_REQ;
		break;
	case DOP_CS:
	case DOP_FA:
	case DOP_MCS:
	case DOP_MFA:
		rc = !v.reliable || !rd_admit(dq) ? DNAK_INV_REQ : resp_atomic(&v, p);
		break;
	default:
		/*
		 * No request has this opcode (0): an invalid request, as any
		 * opcode the responder does not support. It was executed as
		 * an atomic, adding to the target (found by fuzz/wire_packet.c).
		 */
		rc = DNAK_INV_REQ;
		break;
	}
	if (rc < 0)
		return;		/* no room to answer: the requester retransmits */
	if (rc == DNAK_RNR) {
		/*
		 * UC: the message is lost.  A QP that the look for a receive
		 * just moved to ERR (its RQ or SRQ broken) answers nothing,
		 * as any QP in ERR: the requester retries, then fails.
		 */
		if (v.reliable && dev_qp_can_receive(dq->qp))
			send_nak(dq, p, DNAK_RNR);
		return;
	}
	if (rc) {
		if (!v.reliable) {
			dq->uc_drop = true;
			return;
		}
		resp_fatal(dq, p, (uint8_t)rc,
			   rc == DNAK_REM_ACCESS ? IBV_EVENT_QP_ACCESS_ERR :
			   rc == DNAK_INV_REQ ? IBV_EVENT_QP_REQ_ERR : 0, true);
		return;
	}
	dq->nak_sent = false;
	dq->epsn = (dq->epsn + req_npkt(p)) & DEV_PSN_MASK;
	if (v.reliable && p->op != DOP_READ && p->op < DOP_CS)
		queue_ack(dq, p, p->psn);
	/* from another host: its next WRITEs and READs may come directly (grant.c) */
	if ((p->op == DOP_WRITE || p->op == DOP_READ) && p->dma_len &&
	    EMU_NUM_HOST(p->src_qpn) != emu_cfg.host_id &&
	    ((dq->qp->type == IBV_QPT_RC && !dq->qp->dc) || dq->qp->dc == EMU_DC_DCT)) {
		dev_grant_lend(dq);
		dev_grant_lend_rkey(p->rkey);
	}
}

/*
 * The loopback shortcut's responder (sq.c emit_shortcut()): p, an RC RDMA
 * WRITE of one packet from src, a QP of this host, its payload at payload.
 * Executed as dev_resp_packet() would execute it when that is its plain
 * success - a connected RC QP able to receive, p from its peer, the
 * expected PSN, the QP's permission, the key and bounds, the target
 * writable - and counted as the ring would have; false, with nothing
 * changed, for anything else (the caller then sends the packet, which
 * meets these checks and their errors here).  A target that faults may
 * have taken part of the bytes: the packet writes the same ones again.
 */
bool dev_resp_shortcut_write(const struct dev_pkt *p, const uint8_t *payload,
			     const struct emu_qp *src)
{
	struct emu_qp *qp = emu_qp_by_qpn_locked(p->dst_qpn);
	struct dev_qp *dq;
	uint8_t *dst;

	if (!qp || !(dq = dev_qp_of(qp)) || qp->opened || qp->type != IBV_QPT_RC ||
	    qp->dc || !dev_qp_can_receive(qp) || !from_peer(qp, p) ||
	    !dev_pkt_to_port(p, dev_qp_port(qp)) ||
	    p->op != DOP_WRITE || p->psn != dq->epsn || p->offset || p->len != p->dma_len ||
	    !(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) || wire_fault.force_rae > 0)
		return false;
	if (p->dma_len) {
		dst = dev_rkey_ptr(p->rkey, p->raddr, p->dma_len, qp->pd, qp,
				   IBV_ACCESS_REMOTE_WRITE);
		if (!dst || !dev_copy(dst, payload, p->len))
			return false;
	}
	wire_shortcut_sent();
	wire_count_loopback(p, src->obj.ctx->dev_index,
				src->attr.port_num ? src->attr.port_num : 1,
				qp->obj.ctx->dev_index,
				qp->attr.port_num ? qp->attr.port_num : 1);
	/* resp_connected()'s success */
	dq->nak_sent = false;
	dq->epsn = (dq->epsn + 1) & DEV_PSN_MASK;
	queue_ack(dq, p, p->psn);
	return true;
}

/*
 * The responder context of the DCI that sent p to the DCT dq, made at its
 * first packet; a packet of a newer connection (the DCI connected again,
 * after serving another target or a reset) starts its PSNs afresh, one of
 * an older connection is stale and dropped (NULL).
 */
static struct dev_qp *dct_conn(struct dev_qp *dq, const struct dev_pkt *p)
{
	struct dev_qp *c;

	for (c = dq->dc_conns; c; c = c->dc_next)
		if (c->dc_src == p->src_qpn)
			break;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;	/* lost: the DCI retransmits */
		c->qp = dq->qp;
		c->dctx = dq->dctx;
		c->qpn = dq->qpn;
		c->dc_src = p->src_qpn;
		c->dc_conn = p->dc_conn - 1;
		c->dc_next = dq->dc_conns;
		dq->dc_conns = c;
	}
	if ((int32_t)(p->dc_conn - c->dc_conn) < 0)
		return NULL;
	if (p->dc_conn != c->dc_conn) {
		c->dc_conn = p->dc_conn;
		c->dc_rlid = p->slid;
		memcpy(c->dc_rgid, p->sgid, 16);
		c->dc_grh = p->flags & DPKT_GRH;
		c->epsn = p->dc_conn_psn & DEV_PSN_MASK;
		c->nak_sent = false;
		c->recv_busy = false;
		dev_resp_reset(c);
	}
	return c;
}

/*
 * A request to a DCT.  One with another access key is dropped: the HCA
 * reports it to the driver as a DCT key-violation event
 * (MLX5_EVENT_TYPE_DCT_KEY_VIOLATION, include/linux/mlx5/device.h), which
 * the upstream mlx5_ib driver does not pass to user space, and answers the
 * initiator nothing, so the DCI retries and completes with
 * IBV_WC_RETRY_EXC_ERR.
 */
static void resp_dct(struct dev_qp *dq, const struct dev_pkt *p)
{
	struct dev_qp *c;

	if (p->dc_key != dq->qp->dc_key) {
		wire_stats.drop_dc_key++;
		return;
	}
	c = dct_conn(dq, p);
	if (c)
		resp_connected(c, p);
}

void dev_dct_conns_free(struct dev_qp *dq)
{
	while (dq->dc_conns) {
		struct dev_qp *c = dq->dc_conns;

		dq->dc_conns = c->dc_next;
		dev_grant_forget(c);
		if (c->ack_pending)
			for (struct dev_qp **pp = &dev_eng.acks; *pp; pp = &(*pp)->next_ack)
				if (*pp == c) {
					*pp = c->next_ack;
					break;
				}
		free(c);
	}
}

void dev_resp_packet(const struct dev_pkt *p)
{
	struct emu_qp *qp;
	struct dev_qp *dq;

	if (dev_pkt_is_mcast(p, roce())) {
		wire_count_rx(p, 0, 0);
		resp_mcast(p);
		return;
	}
	qp = p->dst_qpn == DEV_MCAST_QPN ? NULL : emu_qp_by_qpn_locked(p->dst_qpn);
	if (qp && !dev_pkt_to_port(p, dev_qp_port(qp))) {
		/* routed here by its QPN alone: on a fabric it reaches no such port */
		wire_stats.drop_address++;
		qp = NULL;
	}
	/* the port counts what reaches it, for a QP there or for none */
	if (qp)
		wire_count_rx(p, qp->obj.ctx->dev_index,
				  qp->attr.port_num ? qp->attr.port_num : 1);
	else
		wire_count_rx(p, 0, 0);
	if (p->dst_qpn == DEV_MCAST_QPN)
		return;		/* 0xFFFFFF to a unicast address: invalid, dropped */
	if (!qp || !(dq = dev_qp_of(qp)) || qp->opened)
		return;		/* no such QP on this host: dropped */
	if (!tp_ok(qp, p)) {
		wire_stats.drop_transport++;
		return;
	}
	if (p->op >= DOP_READ_RESP) {
		if (qp->dc == EMU_DC_DCI) {
			/* from the DCT it is connected to, nobody else */
			if (p->src_qpn != dq->dc_peer) {
				wire_stats.drop_source++;
				return;
			}
			dev_rc_on_response(dq, p);
			return;
		}
		if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_XRC_SEND)
			return;
		if (!from_peer(qp, p)) {
			wire_stats.drop_source++;
			return;
		}
		dev_rc_on_response(dq, p);
		return;
	}
	/* a SEND delivered by its requester is settled before the next request */
	if (dq->granted || dq->dc_lender)
		dev_grant_take(dq);
	if (!dev_qp_can_receive(qp) || qp->dc == EMU_DC_DCI)
		return;		/* a DCI receives nothing but responses */
	if (qp->dc == EMU_DC_DCT) {
		resp_dct(dq, p);
		return;
	}
	if (qp->type != IBV_QPT_UD && !from_peer(qp, p)) {
		wire_stats.drop_source++;
		return;
	}
	switch (qp->type) {
	case IBV_QPT_UD:
		resp_ud(dq, p);
		break;
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_XRC_RECV:
		resp_connected(dq, p);
		break;
	default:
		break;
	}
}
