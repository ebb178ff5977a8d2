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

/*
 * A WQE as the device fetched it: the DS*16 bytes of the WQE, copied out of
 * the SQ through the fault guard (with the wrap at the queue's end undone),
 * so every segment is parsed from this copy and nothing beyond the WQE is
 * ever read.  Offsets below are into buf.
 */
#define WQE_MAX_BYTES	1024	/* 63 DS = 1008 bytes, rounded to a power of two */

struct dev_wqe {
	uint32_t		off;		/* byte offset of ctrl in the SQ */
	uint32_t		len;		/* bytes the DS cover */
	uint8_t			opcode;
	uint8_t			opf;		/* OPF_* of the opcode */
	uint8_t			dop;		/* its packet operation, enum dev_op */
	uint8_t			opmod;
	uint8_t			fm_ce_se;
	uint8_t			ds;
	uint16_t		stream;		/* DCI: dci_stream_channel_id */
	uint32_t		imm;		/* raw */
	uint32_t		nbb;
	uint32_t		xrc_srqn;
	uint32_t		dqpn;
	uint32_t		qkey;
	uint64_t		dc_key;		/* DCI: the target's access key */
	const uint8_t		*av;
	bool			av_ext;		/* 48-byte AV: GRH fields present */
	uint64_t		raddr;
	uint32_t		rkey;
	uint64_t		atomic[4];
	uint32_t		atomic_size;
	uint16_t		eth_inl;	/* raw packet: inline header bytes ... */
	uint32_t		eth_inl_off;	/* ... at this offset in buf */
	uint32_t		data_off;	/* first data/inline segment */
	unsigned		nseg;
	uint8_t			buf[WQE_MAX_BYTES];
};

static uint8_t *sq_base(const struct emu_qp *qp)
{
	return (uint8_t *)(uintptr_t)qp->sq_buf;
}

static uint32_t sq_size(const struct emu_qp *qp)
{
	return qp->sq_wqe_cnt * RF_SEND_WQE_BB;
}

/* Copy len bytes of the SQ from byte offset off, wrapping; false on a fault. */
static bool sq_fetch(const struct emu_qp *qp, uint32_t off, void *dst, uint32_t len)
{
	uint32_t size = sq_size(qp);
	uint32_t first = size - off < len ? size - off : len;

	if (!dev_copy(dst, sq_base(qp) + off, first))
		return false;
	return first == len || dev_copy((uint8_t *)dst + first, sq_base(qp), len - first);
}

/* WQEBBs the WQE at BB counter bb spans (from its DS), 0 if unreadable. */
static uint32_t wqe_nbb(const struct emu_qp *qp, uint32_t bb, uint8_t *opcode)
{
	uint8_t ctrl[8];
	uint32_t ds;

	if (!sq_fetch(qp, (bb * RF_SEND_WQE_BB) & (sq_size(qp) - 1), ctrl, sizeof(ctrl)))
		return 0;
	*opcode = ctrl[3];
	ds = dev_be32(ctrl + 4) & 0x3f;
	return ds ? (ds + 3) / 4 : 1;
}

/*
 * What the requester needs to know of each WQE opcode, looked up once per
 * WQE: its packet operation, the segments that follow the control segment
 * (and the transport's), and the transports it is legal on: UD carries
 * sends only, UC no READ, atomic or send with invalidate (IBA vol. 1, the
 * operations of each transport service); a DCI takes every RC opcode
 * (mlx5dv_wr_set_dc_addr(3)); QP types that send nothing take UC's set.
 * Opcodes not listed are invalid everywhere.
 */
enum {
	OPF_RADDR	= 1 << 0,	/* a remote address segment follows */
	OPF_ATOMIC	= 1 << 1,	/* and an atomic segment after it */
	OPF_RESP	= 1 << 2,	/* READ/atomic: completes on its response */
	OPF_LOCAL	= 1 << 3,	/* NOP/UMR: executed by the requester alone */
	OPF_ON_UD	= 1 << 4,	/* legal on a UD QP */
	OPF_ON_UC	= 1 << 5,	/* on UC (and XRC_RECV, raw ...) */
	OPF_ON_RC	= 1 << 6,	/* on RC, XRC_SEND and a DCI */
	OPF_ON_RAW	= 1 << 7,	/* on a raw packet QP: a frame, or a NOP */
	OPF_ON_ALL	= OPF_ON_UD | OPF_ON_UC | OPF_ON_RC,
	OPF_ATOMIC_OP	= OPF_RADDR | OPF_ATOMIC | OPF_RESP | OPF_ON_RC,
};

static const struct {
	uint8_t		dop;		/* enum dev_op; 0: no packet */
	uint8_t		flags;		/* OPF_* */
} op_info[256] = {
	[RF_OPCODE_NOP]			= { 0, OPF_LOCAL | OPF_ON_ALL | OPF_ON_RAW },
	[RF_OPCODE_SEND]		= { DOP_SEND, OPF_ON_ALL | OPF_ON_RAW },
	[RF_OPCODE_SEND_IMM]		= { DOP_SEND_IMM, OPF_ON_ALL },
	[RF_OPCODE_RDMA_WRITE]		= { DOP_WRITE, OPF_RADDR | OPF_ON_UC | OPF_ON_RC },
	[RF_OPCODE_RDMA_WRITE_IMM]	= { DOP_WRITE_IMM, OPF_RADDR | OPF_ON_UC | OPF_ON_RC },
	[RF_OPCODE_UMR]			= { 0, OPF_LOCAL | OPF_ON_UC | OPF_ON_RC },
	/* a signature key's PSV: its initial signature (sig.c) */
	[RF_OPCODE_SET_PSV]		= { 0, OPF_LOCAL | OPF_ON_UC | OPF_ON_RC },
	/* a TM SRQ's list operation, on an RC QP attached to it (tm.c) */
	[RF_OPCODE_TAG_MATCHING]	= { 0, OPF_LOCAL | OPF_ON_RC },
	[RF_OPCODE_SEND_INVAL]		= { DOP_SEND_INV, OPF_ON_RC },
	[RF_OPCODE_RDMA_READ]		= { DOP_READ, OPF_RADDR | OPF_RESP | OPF_ON_RC },
	[RF_OPCODE_ATOMIC_CS]		= { DOP_CS, OPF_ATOMIC_OP },
	[RF_OPCODE_ATOMIC_FA]		= { DOP_FA, OPF_ATOMIC_OP },
	[RF_OPCODE_ATOMIC_MASKED_CS]	= { DOP_MCS, OPF_ATOMIC_OP },
	[RF_OPCODE_ATOMIC_MASKED_FA]	= { DOP_MFA, OPF_ATOMIC_OP },
};

/* The OPF_ON_* bit of the QP's transport. */
static uint8_t qp_opf(const struct emu_qp *qp)
{
	if (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND || qp->dc == EMU_DC_DCI)
		return OPF_ON_RC;
	if (qp->type == IBV_QPT_RAW_PACKET)
		return OPF_ON_RAW;
	return qp->type == IBV_QPT_UD ? OPF_ON_UD : OPF_ON_UC;
}

/*
 * Fetch and decode the WQE at BB counter bb; false if malformed: no DS, a
 * WQE larger than the SQ, or segments (XRC, address vector, remote address,
 * atomic) that its DS do not cover.  w->nbb is set even then, so the WQE
 * can be stepped over.
 */
static bool wqe_decode(const struct dev_qp *dq, const uint8_t *img, uint32_t bb,
		       struct dev_wqe *w)
{
	const struct emu_qp *qp = dq->qp;
	uint32_t off = (bb * RF_SEND_WQE_BB) & (sq_size(qp) - 1);
	const uint8_t *b = w->buf;
	uint32_t word0, cur = 16;

	/* only the fields the opcode and transport use get set below */
	w->opcode = w->opf = w->dop = w->opmod = w->fm_ce_se = w->ds = 0;
	w->stream = 0;
	w->imm = 0;
	w->xrc_srqn = w->dqpn = w->qkey = w->rkey = 0;
	w->dc_key = 0;
	w->av = NULL;
	w->av_ext = false;
	w->raddr = 0;
	w->eth_inl = 0;
	memset(w->atomic, 0, sizeof(w->atomic));
	w->atomic_size = 0;
	w->off = off;
	w->nbb = 1;
	w->len = 0;
	w->nseg = 0;
	w->data_off = cur;
	/* the first WQEBB in one copy (BB aligned, so it never wraps) */
	wire_stats.wqe_fetches++;
	if (img)
		memcpy(w->buf, img, RF_SEND_WQE_BB);
	else if (!dev_copy(w->buf, sq_base(qp) + off, RF_SEND_WQE_BB))
		return false;
	word0 = dev_be32(b);
	w->opcode = word0 & 0xff;
	w->opf = op_info[w->opcode].flags;
	w->dop = op_info[w->opcode].dop;
	w->opmod = word0 >> 24;
	w->ds = dev_be32(b + 4) & 0x3f;
	w->stream = (uint16_t)(b[9] << 8 | b[10]);
	w->fm_ce_se = b[11];
	memcpy(&w->imm, b + 12, 4);
	w->nbb = w->ds ? (w->ds + 3u) / 4 : 1;
	w->len = w->ds * 16u;
	if (!w->ds || (!img && w->nbb > qp->sq_wqe_cnt))
		return false;
	if (w->len > RF_SEND_WQE_BB &&
	    (img || !sq_fetch(qp, (off + RF_SEND_WQE_BB) & (sq_size(qp) - 1),
			      w->buf + RF_SEND_WQE_BB, w->len - RF_SEND_WQE_BB)))
		return false;
	if (w->opf & OPF_LOCAL)
		return true;
	if (qp->type == IBV_QPT_XRC_SEND) {
		if (cur + 16 > w->len)
			return false;
		w->xrc_srqn = dev_be32(b + cur) & 0xffffff;
		cur += 16;
	}
	if (qp->type == IBV_QPT_UD || qp->dc == EMU_DC_DCI) {
		uint32_t dqp;

		/* UD: Q_Key in the first 4 bytes; DC: the 8-byte access key */
		if (cur + 16 > w->len)
			return false;
		dqp = dev_be32(b + cur + 8);
		w->av = b + cur;
		w->qkey = dev_be32(b + cur);
		w->dc_key = dev_be64(b + cur);
		w->dqpn = dqp & 0xffffff;
		w->av_ext = (dqp & RF_EXTENDED_UD_AV) != 0;
		cur += w->av_ext ? 48 : 16;
		if (cur > w->len)
			return false;
	}
	if (qp->type == IBV_QPT_RAW_PACKET) {
		/*
		 * The Ethernet segment (struct mlx5_wqe_eth_seg): the frame's
		 * first inline_hdr_sz bytes, 2 in the segment's last bytes
		 * and the rest after it, in whole 16-byte units.
		 */
		if (cur + 16 > w->len)
			return false;
		w->eth_inl = dev_be16(b + cur + 12);
		w->eth_inl_off = cur + 14;
		cur += 16 + (w->eth_inl > 2 ? (w->eth_inl - 2u + 15u) & ~15u : 0);
		if (cur > w->len)
			return false;
	}
	if (w->opf & OPF_RADDR) {
		if (cur + 16 > w->len)
			return false;
		w->raddr = dev_be64(b + cur);
		w->rkey = dev_be32(b + cur + 8);
		cur += 16;
	}
	if (w->opf & OPF_ATOMIC) {
		const uint8_t *a = b + cur;
		bool masked_cs8 = w->opcode == RF_OPCODE_ATOMIC_MASKED_CS &&
				  w->opmod == RF_OPMOD_EXT_ATOMIC_8B;

		if (cur + (masked_cs8 ? 32 : 16) > w->len)
			return false;
		if (w->opcode == RF_OPCODE_ATOMIC_CS || w->opcode == RF_OPCODE_ATOMIC_FA) {
			w->atomic[0] = dev_be64(a);
			w->atomic[1] = dev_be64(a + 8);
			w->atomic[2] = ~0ull;
			w->atomic[3] = ~0ull;
			w->atomic_size = 8;
		} else if (w->opmod == RF_OPMOD_EXT_ATOMIC_4B) {
			w->atomic_size = 4;
			w->atomic[0] = dev_be32(a);
			w->atomic[1] = dev_be32(a + 4);
			w->atomic[2] = dev_be32(a + 8);
			w->atomic[3] = dev_be32(a + 12);
		} else if (w->opmod == RF_OPMOD_EXT_ATOMIC_8B) {
			w->atomic_size = 8;
			w->atomic[0] = dev_be64(a);
			w->atomic[1] = dev_be64(a + 8);
			if (masked_cs8) {
				w->atomic[2] = dev_be64(a + 16);
				w->atomic[3] = dev_be64(a + 24);
			}
		} else {
			return false;
		}
		cur += masked_cs8 ? 32 : 16;
	}
	w->data_off = cur;
	w->nseg = (w->len - cur) / 16;
	return true;
}

static bool wqe_parse(const struct dev_qp *dq, uint32_t bb, struct dev_wqe *w)
{
	return wqe_decode(dq, NULL, bb, w);
}

/*
 * The WQE of an entry: from the SQ, or for one the device queued itself
 * (DENTF_HW) from its image in dq->hw, one BB.
 */
static bool ent_parse(const struct dev_qp *dq, const struct dev_ent *e, struct dev_wqe *w)
{
	if (e->flags & DENTF_HW)
		return wqe_decode(dq, dq->hw[e - dq->ent].wqe, 0, w);
	return wqe_parse(dq, e->wqe, w);
}

/*
 * The gather list of a parsed WQE: its data and inline segments, from the
 * WQE as fetched (so nothing here reads application memory); need =
 * IBV_ACCESS_* for the local side.  Inline payload is a byte stream;
 * pointer segments are 16-byte aligned.  w->nseg is what the DS leave for
 * data: an inline segment whose byte count needs more than that is a length
 * error (its bytes would come from beyond the WQE).  A gather entry of
 * 0 bytes moves nothing and needs no key.
 */
static inline int wqe_sgl(const struct dev_qp *dq, const struct dev_wqe *w,
			  struct dev_sgl *sgl, uint32_t need)
{
	uint32_t off = w->data_off;
	unsigned nseg = w->nseg;

	sgl->n = 0;
	sgl->total = 0;
	sgl->sig.synd = 0;
	sgl->sig_in.mk = NULL;
	while (nseg) {
		const uint8_t *seg = w->buf + off;
		uint32_t bc = dev_be32(seg);

		if (bc & RF_INLINE_SEG) {
			uint32_t len = bc & ~RF_INLINE_SEG;
			uint32_t used = (4 + len + 15) / 16;	/* len < 2^31 */

			if (used > nseg || sgl->n == DEV_MAX_SGE)
				return DEV_SGL_LEN;
			/* READ/atomic results need memory to land in, not the WQE */
			if (need & IBV_ACCESS_LOCAL_WRITE)
				return DEV_SGL_PROT;
			if (len) {
				sgl->e[sgl->n++] = (struct dev_sge){ (uint8_t *)seg + 4, len,
								     true, false };
				sgl->total += len;
			}
			nseg -= used;
			off += used * 16;
			continue;
		}
		if (bc) {
			uint8_t *p = dev_lkey_ptr(dev_be32(seg + 4), dev_be64(seg + 8), bc,
						  dq->qp->pd, need);
			int ret;

			if (!p) {
				/* an indirect mkey: the pieces its entries map */
				ret = dev_mkey_sgl(sgl, dev_be32(seg + 4), dev_be64(seg + 8), bc,
						   dq->qp->pd, need);
				if (ret)
					return ret;
			} else {
				if (sgl->n == DEV_MAX_SGE)
					return DEV_SGL_LEN;
				sgl->e[sgl->n++] = (struct dev_sge){ p, bc, false, false };
				sgl->total += bc;
			}
		}
		nseg--;
		off += 16;
	}
	return 0;
}

static bool qp_reliable(const struct emu_qp *qp)
{
	return qp->type == IBV_QPT_RC || qp->type == IBV_QPT_XRC_SEND ||
	       qp->dc == EMU_DC_DCI;
}

/*
 * DCI streams (mlx5dv_dci_stream_id_reset(3)): an error of a WQE's own
 * making (a local check: protection, length, a malformed WQE) puts its
 * stream in error, not the DCI.  The error CQE comes in order, the WQEs
 * of that stream after it are flushed until software resets the stream
 * (kernel/devx.c, RTS2RTS_QP), and the other streams go on; the DCI moves
 * to ERR when the streams in error reach 2^log_num_errored.  Errors of
 * the transport (a NAK, retries exhausted) end the DCI as they end an RC
 * QP: the man page names only stream errors as contained.
 */
static bool dci_stream_errored(const struct emu_qp *qp, uint16_t stream)
{
	for (unsigned i = 0; i < qp->dci_n_errored; i++)
		if (qp->dci_errored[i] == stream)
			return true;
	return false;
}

/* A failed entry of a streams DCI: contained in its stream, or the DCI's end. */
static void dci_stream_fail(struct emu_qp *qp, struct dev_ent *e, uint16_t stream)
{
	if (!dci_stream_errored(qp, stream)) {
		if (qp->dci_n_errored + 1u >= 1u << qp->log_dci_errored)
			return;		/* the last stream it may lose: the DCI fails */
		qp->dci_errored[qp->dci_n_errored++] = stream;
	}
	e->flags |= DENTF_STREAM;
}

/*
 * Parse one WQE into a new entry: local checks only.  False, and nothing
 * consumed, when the WQE spans more than the `avail` BBs rung so far.  The
 * WQE as fetched is left in *w and, for an entry still DENT_NEW that moves
 * data, its gather list in *sgl: what emit_entry() would fetch again.
 */
static bool sq_parse_one(struct dev_qp *dq, uint32_t avail, struct dev_wqe *w,
			 struct dev_sgl *sgl)
{
	struct emu_qp *qp = dq->qp;
	struct dev_ent *e = &dq->ent[dq->ent_tail & dq->ent_mask];
	uint32_t need = 0;
	bool ok = wqe_parse(dq, dq->sq_next, w);

	if (w->nbb > avail)
		return false;
	memset(e, 0, sizeof(*e));
	e->wqe = dq->sq_next;
	e->op = w->opcode;
	e->state = DENT_NEW;
	if ((w->fm_ce_se & RF_WQE_CTRL_CE_MASK) == RF_WQE_CTRL_CQ_UPDATE ||
	    (w->fm_ce_se & RF_WQE_CTRL_CE_MASK) == (3 << 2))
		e->flags |= DENTF_SIGNALED;
	/* IBV_SEND_FENCE (4) and the IB fence (2) wait for READ/atomics */
	if ((w->fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_FENCE ||
	    (w->fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_FENCE_ORDERING ||
	    (w->fm_ce_se & RF_WQE_CTRL_FM_MASK) == RF_WQE_CTRL_STRONG_ORDERING)
		e->flags |= DENTF_FENCE;
	dq->sq_next += w->nbb;
	dq->ent_tail++;
	dev_eng.wqes++;

	if (DEV_UNLIKELY(qp->dci_streams) && dci_stream_errored(qp, w->stream)) {
		e->syndrome = RF_CQE_SYNDROME_WR_FLUSH_ERR;
		goto fail;
	}
	if (!ok || !(w->opf & qp_opf(qp))) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		goto fail;
	}
	if (w->opf & OPF_LOCAL) {
		e->flags |= DENTF_LOCAL;
		return true;
	}
	if (w->opf & OPF_RESP) {
		need = IBV_ACCESS_LOCAL_WRITE;
		e->flags |= DENTF_RESP;
	}
	switch (wqe_sgl(dq, w, sgl, dev_qp_need(qp, need))) {
	case 0:
		/*
		 * A signature check failed: reported once, before the
		 * completion.  With drain_sigerr (signature pipelining) the
		 * SQ stops behind this WQE and drains (sq_parse(),
		 * dev_sq_complete()).
		 */
		if (DEV_UNLIKELY(sgl->sig.synd)) {
			dev_sig_err_cqe(qp->send_cq, qp->qpn, &sgl->sig);
			dq->sig_drain = qp->drain_sigerr;
		}
		break;
	case DEV_SGL_LEN:
		/* e.g. inline data longer than the DS: never read past the WQE */
		e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		goto fail;
	default:
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		goto fail;
	}
	if (sgl->total > dev_max_msg() ||
	    (qp->type == IBV_QPT_UD && sgl->total > dev_ud_max_msg())) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		goto fail;
	}
	if (qp->type == IBV_QPT_RAW_PACKET && w->dop) {
		/*
		 * A frame: the inline header then the gather list, from a
		 * MAC header to the port's largest frame.  It leaves at
		 * emission (raw_send()), which completes it.
		 */
		e->byte_len = (uint32_t)(w->eth_inl + sgl->total);
		if (w->eth_inl + sgl->total < DEV_ETH_HLEN ||
		    w->eth_inl + sgl->total > DEV_ETH_MAX_FRAME) {
			e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			goto fail;
		}
		e->flags |= DENTF_LOCAL;
		return true;
	}
	if (w->atomic_size) {
		if (sgl->total < w->atomic_size) {
			e->syndrome = RF_CQE_SYNDROME_LOCAL_LENGTH_ERR;
			goto fail;
		}
		e->npkt = 1;
		e->byte_len = w->atomic_size;
	} else {
		e->byte_len = (uint32_t)sgl->total;
		e->npkt = sgl->total ? (uint32_t)((sgl->total + WIRE_MTU - 1) / WIRE_MTU) : 1;
		if (qp->type == IBV_QPT_UD)
			e->npkt = 1;
	}
	e->psn = dq->next_psn;
	e->dct = w->dqpn;
	dq->next_psn = (dq->next_psn + e->npkt) & DEV_PSN_MASK;
	return true;
fail:
	e->state = DENT_DONE;
	if (DEV_UNLIKELY(qp->dci_streams))
		dci_stream_fail(qp, e, w->stream);
	return true;
}

static void fill_grh(const struct emu_qp *qp, struct dev_pkt *p, const uint8_t *av)
{
	const struct emu_port_id *pid = dev_qp_port(qp);
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
	dev_pkt_sgid(p, pid, sgid_index);
}

/*
 * The header of request packet e->sent of entry e, its WQE as parsed in w:
 * len payload bytes from byte offset of the message's total.  p comes
 * zeroed (wire_alloc(), or the shortcut's dev_pkt_clear()).
 */
static void fill_request(struct dev_qp *dq, const struct dev_ent *e, const struct dev_wqe *w,
			 struct dev_pkt *p, uint32_t dst, uint32_t offset, uint32_t len,
			 uint32_t total)
{
	struct emu_qp *qp = dq->qp;
	enum dev_op op = (enum dev_op)w->dop;
	bool req_only = w->opf & OPF_RESP;

	p->op = (uint8_t)op;
	p->flags = 0;
	if (e->sent == 0)
		p->flags |= DPKT_FIRST;
	if (req_only || offset + len >= total)
		p->flags |= DPKT_LAST;
	if ((p->flags & DPKT_LAST) && (w->fm_ce_se & RF_WQE_CTRL_SOLICITED))
		p->flags |= DPKT_SE;
	p->opmod = w->opmod;
	p->sl = qp->attr.ah.sl;
	p->src_qpn = dq->qpn;
	p->dst_qpn = dst;
	p->psn = (e->psn + e->sent) & DEV_PSN_MASK;
	p->pkey_index = qp->attr.pkey_index;
	p->imm = w->imm;
	p->xrc_srqn = w->xrc_srqn;
	p->raddr = w->raddr;
	p->rkey = w->rkey;
	p->dma_len = w->atomic_size ? w->atomic_size :
		     (op == DOP_READ ? e->byte_len : total);
	if (op == DOP_READ && e->resp_next) {
		/*
		 * A READ asked again asks for what is missing: the responses
		 * from the first not received on (IBA 9.7.5: the original or
		 * a part of it, from that PSN), not the whole of it again.
		 */
		uint32_t skip = e->resp_next * WIRE_MTU;

		p->psn = (e->psn + e->resp_next) & DEV_PSN_MASK;
		p->raddr += skip;
		p->dma_len -= skip;
	}
	p->offset = offset;
	p->len = len;
	if (w->opf & OPF_ATOMIC)	/* the header came zeroed */
		memcpy(p->atomic, w->atomic, sizeof(p->atomic));
	if (qp->type == IBV_QPT_UD) {
		p->tp = DTP_UD;
		p->slid = dev_qp_port(qp)->lid;
		/* a Q_Key with the top bit set means "use the QP's own" */
		p->qkey = (w->qkey & 0x80000000u) ? qp->attr.qkey : w->qkey;
		p->sl = w->av[12] & 0xf;
		/* the AV's rlid is a LID on InfiniBand only (RoCE: a UDP port) */
		if (emu_cfg.link_layer == IBV_LINK_LAYER_INFINIBAND)
			p->dlid = dev_be16(w->av + 14);
		if (qp->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)
			p->flags |= DPKT_MC_NO_LB;
		if (w->av_ext)
			fill_grh(qp, p, w->av);
	} else if (qp->dc == EMU_DC_DCI) {
		/* the path is the WQE's address vector, the rest is RC's */
		p->tp = DTP_RC;
		p->flags |= DPKT_DCETH;
		p->slid = dev_qp_port(qp)->lid;
		p->sl = w->av[12] & 0xf;
		if (emu_cfg.link_layer == IBV_LINK_LAYER_INFINIBAND)
			p->dlid = dev_be16(w->av + 14);
		p->dc_key = w->dc_key;
		p->dc_conn = dq->dc_conn;
		p->dc_conn_psn = dq->dc_conn_psn;
		if (w->av_ext)
			fill_grh(qp, p, w->av);
	} else {
		dev_path_stamp(qp, p);		/* the QP's path, our SLID with it */
	}
}

/* Where the loopback shortcut gathers a message that is not one inline piece. */
static uint8_t shortcut_stage[WIRE_MTU];

/*
 * The loopback shortcut (emu/DESIGN-device.md, "Loopback shortcut"): an RC RDMA
 * WRITE of one packet to a QP of this host is executed by the responder
 * from here, with the packet's header on the stack and its payload where it
 * lies (the device's copy of the WQE for inline data), instead of being
 * built in the loopback ring and parsed from there.  Taken only when the
 * outcome is the packet's plain success; anything else (a fault in the
 * gather, a responder check that fails, a PSN out of order, anything queued
 * ahead) returns false having changed nothing, and the packet goes out as
 * usual and meets the same checks there.
 */
static bool emit_shortcut(struct dev_qp *dq, const struct dev_ent *e, const struct dev_wqe *w,
			  const struct dev_sgl *sgl, uint32_t dst)
{
	uint32_t len = (uint32_t)sgl->total;
	const uint8_t *payload = shortcut_stage;
	struct dev_pkt h;

	dev_pkt_clear(&h);
	h.size = (uint32_t)sizeof(h) + len;
	fill_request(dq, e, w, &h, dst, 0, len, len);
	if (!wire_shortcut_ok(&h))
		return false;
	if (sgl->n == 1 && sgl->e[0].local)
		payload = sgl->e[0].ptr;
	else if (len && !dev_sgl_copy_out(sgl, 0, shortcut_stage, len))
		return false;	/* the packet's gather faults as well, and fails the WQE */
	return dev_resp_shortcut_write(&h, payload, dq->qp);
}

/*
 * The READs of one QP that went directly in a run of its emission are
 * read from the responder together, by one system call (grant.c,
 * dev_grant_reads_flush()): their headers wait here to be counted as
 * sent, by their slots in dev_eng.direct, until they are read.  The run
 * ends (direct_reads_settle()) before the QP emits anything else, and
 * with its emission: so they are always the last requests it emitted.
 */
static struct dev_qp *gathering;		/* the QP; NULL: nothing gathered */
static unsigned gathered_from;			/* its first slot in dev_eng.direct */
static struct dev_pkt gathered_hdr[DEV_DIRECT_MAX];

/*
 * Emitted entries of dq from the one of psn on, back to new: gathered
 * READs whose data could not be read, and the local WQEs among them
 * (done, skipped on the way again).  The first is read on its own if it
 * goes directly again, so that it meets what a READ alone always met:
 * its data read, or the packet, and the responder's checks and errors.
 */
static void unemit(struct dev_qp *dq, uint32_t psn)
{
	uint32_t i = dq->ent_emit;

	while (i != dq->ent_head) {
		struct dev_ent *e = &dq->ent[--i & dq->ent_mask];

		if (e->flags & DENTF_LOCAL)
			continue;
		e->sent = 0;
		e->acked = 0;
		e->state = DENT_NEW;
		dq->pkts_out--;
		if (e->psn == psn)
			break;
	}
	dq->ent_emit = i;
	dq->read_alone = true;
	dq->read_alone_psn = psn;
	dev_qp_set_busy(dq);
}

/*
 * End the run of gathered READs: read them, count those read as sent and
 * take the rest back (unemit()).  False when some were taken back: the
 * QP's emission goes on from the first of them.
 */
static bool direct_reads_settle(void)
{
	struct dev_qp *dq = gathering;
	unsigned first = gathered_from, done, i;

	if (!dq)
		return true;
	gathering = NULL;
	done = dev_grant_reads_flush();
	for (i = first; i < first + done; i++) {
		wire_stats.pkts_tx++;
		wire_stats.direct++;
		wire_count_tx(&gathered_hdr[i]);
	}
	if (first + done == dev_eng.ndirect)
		return true;
	dev_eng.ndirect = first + done;
	dev_eng.direct_used = dev_eng.direct[first + done].off;
	unemit(dq, dev_eng.direct[first + done].psn);
	return false;
}

/*
 * Direct delivery (grant.c): an RC or DC SEND, RDMA WRITE or READ of one
 * packet to a QP of another host that lent a grant (a DCT, for the DCI's
 * current connection) is carried out from here, its
 * header filled as for the wire and checked against the grant as the
 * responder would check the packet: a SEND into the lent receive, a
 * WRITE into, a READ from a lent MR (gathered with the READs around it,
 * above).  What it would have earned (the ACK,
 * the READ's data) is taken after this pass's emission
 * (dev_sq_direct_replies()).  False, with nothing changed, when there is
 * no grant or the grant does not take it: the packet goes out as usual.
 */
static bool emit_direct(struct dev_qp *dq, const struct dev_ent *e, const struct dev_wqe *w,
			const struct dev_sgl *sgl, uint32_t dst, bool alone)
{
	bool read = w->dop == DOP_READ;
	uint32_t len = (uint32_t)sgl->total;
	const uint8_t *payload = shortcut_stage;
	struct dev_direct *d = &dev_eng.direct[dev_eng.ndirect];
	const struct dev_grant *g;
	struct dev_pkt h;
	bool ok, gathered = false;

	unsigned owed = dev_rc_rd_unanswered(dq);

	if (EMU_NUM_HOST(dst) == emu_cfg.host_id || dev_eng.ndirect == DEV_DIRECT_MAX ||
	    len > (read ? DEV_DIRECT_READ_MAX : WIRE_MTU) ||
	    (read && len > DEV_DIRECT_DATA - dev_eng.direct_used))
		return false;
	/*
	 * Not past a READ or atomic that went as a packet and is unanswered:
	 * its responses come first, and an answer taken here before them
	 * would tell the requester they were lost (rc.c).  Those delivered
	 * directly in this pass are answered in order.
	 */
	for (unsigned i = 0; i < dev_eng.ndirect; i++)
		owed -= dev_eng.direct[i].dq == dq && dev_eng.direct[i].read;
	if (owed)
		return false;
	g = dev_grant_claim(dst);
	if (!g)
		return false;
	dev_pkt_clear(&h);
	h.size = (uint32_t)sizeof(h) + (read ? 0 : len);
	fill_request(dq, e, w, &h, dst, 0, read ? 0 : len, len);
	if (read) {
		ok = dev_grant_read(g, &h, dev_eng.direct_data + dev_eng.direct_used);
		if (alone)
			ok = ok && dev_grant_reads_flush() == 1;
		if (!ok)
			return false;
		if (!alone) {
			if (!gathering) {
				gathering = dq;
				gathered_from = dev_eng.ndirect;
			}
			gathered_hdr[dev_eng.ndirect] = h;	/* counted when read */
			gathered = true;
		}
	} else {
		if (sgl->n == 1 && sgl->e[0].local) {
			payload = sgl->e[0].ptr;
		} else if (len && !dev_sgl_copy_out(sgl, 0, shortcut_stage, len)) {
			dev_grant_release(g);	/* the packet's gather faults as well */
			return false;
		}
		ok = w->dop == DOP_WRITE ? dev_grant_write(g, &h, payload) :
					   dev_grant_deliver(g, &h, payload);
		if (!ok)
			return false;
	}
	if (!gathered) {
		wire_stats.pkts_tx++;
		wire_stats.direct++;
		wire_count_tx(&h);
	}
	d->dq = dq;
	d->psn = h.psn;
	d->read = read;
	d->len = read ? len : 0;
	d->off = dev_eng.direct_used;
	dev_eng.direct_used += d->len;
	dev_eng.ndirect++;
	return true;
}

/*
 * What the requests delivered directly earned, as if it had come back
 * over the wire (counted as received), in the order they went: an ACK, or
 * a READ's response with its data.  Returns how many.
 */
unsigned dev_sq_direct_replies(void)
{
	static union {
		struct dev_pkt h;
		uint8_t raw[sizeof(struct dev_pkt) + DEV_DIRECT_READ_MAX];
	} r;
	unsigned n = 0;

	direct_reads_settle();	/* none left by the emissions, which settle their own */
	for (unsigned i = 0; i < dev_eng.ndirect; i++, n++) {
		const struct dev_direct *d = &dev_eng.direct[i];
		struct dev_qp *dq = d->dq;

		if (!dq)
			continue;
		dev_pkt_clear(&r.h);
		r.h.size = (uint32_t)sizeof(r.h) + d->len;
		r.h.op = d->read ? DOP_READ_RESP : DOP_ACK;
		r.h.flags = DPKT_FIRST | DPKT_LAST;
		r.h.src_qpn = dq->qp->dc == EMU_DC_DCI ? dq->dc_peer : dq->qp->attr.dest_qp_num;
		r.h.dst_qpn = dq->qpn;
		r.h.psn = d->psn;
		r.h.dma_len = d->len;
		r.h.len = d->len;
		memcpy(r.h.payload, dev_eng.direct_data + d->off, d->len);
		wire_stats.pkts_rx++;
		wire_count_rx(&r.h, dq->qp->obj.ctx->dev_index,
				  dq->qp->attr.port_num ? dq->qp->attr.port_num : 1);
		dev_rc_on_response(dq, &r.h);
	}
	dev_eng.ndirect = 0;
	dev_eng.direct_used = 0;
	return n;
}

void dev_sq_direct_forget(struct dev_qp *dq)
{
	for (unsigned i = 0; i < dev_eng.ndirect; i++)
		if (dev_eng.direct[i].dq == dq)
			dev_eng.direct[i].dq = NULL;
}

/*
 * Emit the request packets of entry e from packet e->sent on, its WQE as
 * parsed in w and its gather list in sgl.  Returns false when the wire has
 * no room (try again next iteration).
 */
static bool emit_parsed(struct dev_qp *dq, struct dev_ent *e, const struct dev_wqe *w,
			const struct dev_sgl *sgl)
{
	struct emu_qp *qp = dq->qp;
	bool req_only = w->opf & OPF_RESP;
	bool read1 = w->dop == DOP_READ && e->npkt == 1 && e->sent == 0;
	/*
	 * The READ unemit() took back first is the next one emitted, read on
	 * its own; any other (a rewind came between) may join others again.
	 */
	bool alone = read1 && dq->read_alone && e->psn == dq->read_alone_psn;
	uint32_t total, dst;

	dq->read_alone = false;

	/* anything but a READ that may join them ends the READs gathered */
	if (!read1 && !direct_reads_settle())
		return false;	/* some were taken back: they go first */
	total = (uint32_t)sgl->total;
	dst = qp->type == IBV_QPT_UD || qp->dc == EMU_DC_DCI ? w->dqpn : qp->attr.dest_qp_num;

	if (w->opcode == RF_OPCODE_RDMA_WRITE && qp->type == IBV_QPT_RC && !qp->dc &&
	    e->npkt == 1 && e->sent == 0 && emit_shortcut(dq, e, w, sgl, dst)) {
		e->sent = 1;
		dq->pkts_out++;
		return true;
	}
	if ((w->dop == DOP_SEND || w->dop == DOP_SEND_IMM || w->dop == DOP_WRITE ||
	     w->dop == DOP_READ) && ((qp->type == IBV_QPT_RC && !qp->dc) || qp->dc == EMU_DC_DCI) &&
	    e->npkt == 1 && e->sent == 0 && emit_direct(dq, e, w, sgl, dst, alone)) {
		e->sent = 1;
		dq->pkts_out++;
		return true;
	}
	if (!direct_reads_settle())
		return false;
	while (e->sent < e->npkt) {
		uint32_t offset = req_only ? 0 : e->sent * WIRE_MTU;
		uint32_t len = req_only ? 0 : total - offset;
		struct dev_pkt *p;

		if (len > WIRE_MTU)
			len = WIRE_MTU;
		if (qp_reliable(qp) && dq->pkts_out >= DEV_MAX_PKTS_INFLIGHT)
			return false;	/* the window is full: ACKs make room */
		if (!wire_room(dst))
			return false;	/* the link is backed up: wait for room */
		p = wire_alloc(len);
		if (!p)
			return false;
		fill_request(dq, e, w, p, dst, offset, len, total);
		if (len && !dev_sgl_copy_out(sgl, offset, p->payload, len)) {
			/* the source pages went away: the packet is never sent */
			e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
			e->state = DENT_DONE;
			return true;
		}
		wire_send(p);
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

/* The same for an entry parsed earlier: fetch and check its WQE again. */
static bool emit_entry(struct dev_qp *dq, struct dev_ent *e)
{
	struct dev_wqe w;
	struct dev_sgl sgl;

	if (!ent_parse(dq, e, &w)) {
		/* rewritten or unmapped since it was parsed */
		e->syndrome = RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		e->state = DENT_DONE;
		return true;
	}
	if (wqe_sgl(dq, &w, &sgl, (e->flags & DENTF_RESP) ? IBV_ACCESS_LOCAL_WRITE : 0)) {
		/* the MR went away between parse and (re)transmission */
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		e->state = DENT_DONE;
		return true;
	}
	return emit_parsed(dq, e, &w, &sgl);
}

/*
 * A raw packet QP's frame, gathered as the NIC does (the inline header,
 * then the gather list), through the function's NIC TX table, which may
 * encapsulate it (reformat.c), and handed to its receive steering (eth.c),
 * which the mlx5 driver's local loopback turns every frame to.  0 or the
 * syndrome of its CQE: memory gone since the WQE was parsed.
 */
static uint8_t raw_send(struct dev_qp *dq, const struct dev_ent *e)
{
	static uint8_t frame[EMU_REFORMAT_MAX_DATA + DEV_ETH_MAX_FRAME];
	struct dev_wqe w;
	struct dev_sgl sgl;

	if (!ent_parse(dq, e, &w))
		return RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (wqe_sgl(dq, &w, &sgl, 0) ||
	    w.eth_inl + sgl.total != e->byte_len)
		return RF_CQE_SYNDROME_LOCAL_PROT_ERR;
	memcpy(frame, w.buf + w.eth_inl_off, w.eth_inl);
	if (!dev_sgl_copy_out(&sgl, 0, frame + w.eth_inl, (uint32_t)sgl.total))
		return RF_CQE_SYNDROME_LOCAL_PROT_ERR;
	dev_eth_steer(dq->qp, frame, e->byte_len);
	return 0;
}

/*
 * Packet pacing of a raw QP with a rate limit (ibv_modify_qp_rate_limit(),
 * kernel/pp.c): a frame of len bytes occupies len * 8 / rate of the
 * QP's time, and the next frame waits until the time of those before
 * it has passed, so the QP sends no faster than its rate.  An idle QP
 * saves up credit for its burst bound (max_burst_sz bytes, this frame
 * included) and no more: the QP's time may start that far back, so up to
 * that many bytes go at once (a token bucket); without one, or one
 * smaller than the frame, no burst beyond one frame.
 */
static void pace(struct dev_qp *dq, uint32_t len)
{
	uint32_t burst = dq->qp->rl_burst > len ? dq->qp->rl_burst - len : 0;
	uint64_t credit = (uint64_t)burst * 8000000u / dq->qp->rl_kbps;
	uint64_t earliest = dev_eng.now > credit ? dev_eng.now - credit : 0;
	uint64_t start = dq->pace_end > earliest ? dq->pace_end : earliest;

	dq->pace_end = start + (uint64_t)len * 8000000u / dq->qp->rl_kbps;
	if (dq->pace_end > dev_eng.now) {
		dq->rnr_until = dq->pace_end;
		dev_eng.timers++;
	}
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

/* May the QP emit now, after an RNR NAK's wait or its pacing's? */
static bool rnr_waited(struct dev_qp *dq)
{
	if (dq->rnr_until) {
		if (dev_eng.now < dq->rnr_until)
			return false;
		dq->rnr_until = 0;
		dev_eng.timers--;
	}
	return true;
}

/*
 * One step of emission: the entry at ent_emit, if nothing holds it back.
 * w and sgl are its WQE and gather list as sq_parse_one() just left them,
 * or NULL: fetch them again.  False when emission must stop for now.
 */
static bool emit_step(struct dev_qp *dq, const struct dev_wqe *w, const struct dev_sgl *sgl)
{
	struct emu_qp *qp = dq->qp;
	struct dev_ent *e = &dq->ent[dq->ent_emit & dq->ent_mask];
	bool reliable = qp_reliable(qp);

	if (e->state == DENT_DONE) {
		if (e->syndrome && !(e->flags & DENTF_STREAM))
			return false;	/* nothing after an error leaves the QP */
		dq->ent_emit++;
		return true;
	}
	if ((e->flags & DENTF_FENCE) && fence_blocks(dq, dq->ent_emit))
		return false;
	if (qp->dc == EMU_DC_DCI && !(e->flags & DENTF_LOCAL) && e->dct != dq->dc_peer) {
		/*
		 * Another target: the DCI disconnects once everything
		 * sent to the current one completed, then connects.
		 */
		if (dq->ent_head != dq->ent_emit)
			return false;
		dq->dc_peer = e->dct;
		dq->dc_conn++;
		dq->dc_conn_psn = e->psn;
	}
	if (e->flags & DENTF_LOCAL) {
		if (e->op == RF_OPCODE_SET_PSV) {
			struct dev_wqe u;

			e->syndrome = wqe_parse(dq, e->wqe, &u) && u.len >= 32 ?
				      dev_sig_set_psv(dq, u.buf + 16) :
				      RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		} else if (e->op == RF_OPCODE_SEND) {
			/* the only SEND that is local */
			if (qp->rl_kbps && !rnr_waited(dq))
				return false;
			e->syndrome = raw_send(dq, e);
			if (!e->syndrome && qp->rl_kbps)
				pace(dq, e->byte_len);
		} else if (e->op == RF_OPCODE_UMR || e->op == RF_OPCODE_TAG_MATCHING) {
			struct dev_wqe u;
			uint8_t wc_op;
			uint32_t key;

			if (!wqe_parse(dq, e->wqe, &u)) {
				e->syndrome = RF_CQE_SYNDROME_LOCAL_QP_OP_ERR;
			} else if (e->op == RF_OPCODE_TAG_MATCHING) {
				e->syndrome = dev_tm_execute(dq, u.buf, u.len, e->wqe);
			} else {
				struct emu_mkey *mk;

				key = be32toh(u.imm);
				mk = emu_mkey_by_key_locked(key);
				e->syndrome = mk ? dev_mkey_umr(dq, u.buf, u.len, mk) :
					      dev_umr_execute(dq, u.buf, WQE_MAX_BYTES,
							      0, u.len, key, &wc_op);
			}
		}
		e->state = DENT_DONE;
		if (e->syndrome)
			return false;
		dq->ent_emit++;
		return true;
	}
	if (reliable && dq->pkts_out >= DEV_MAX_PKTS_INFLIGHT)
		return false;
	/* max_rd_atomic: later WQEs wait behind a READ/atomic in order */
	if (reliable && (e->flags & DENTF_RESP) && !dev_rc_rd_slot(dq))
		return false;
	if (!(w ? emit_parsed(dq, e, w, sgl) : emit_entry(dq, e))) {
		/* part of it may be out: the timer covers that part too */
		if (reliable && e->sent > e->acked)
			dev_rc_timer_start(dq);
		return false;
	}
	if (e->state == DENT_DONE)
		return true;	/* failed its late checks: stays at ent_emit */
	if (reliable) {
		e->state = DENT_SENT;
		dev_rc_timer_start(dq);
	} else {
		e->state = DENT_DONE;
		dq->pkts_out = 0;
	}
	dq->ent_emit++;
	return true;
}

static void sq_emit(struct dev_qp *dq)
{
	if (!rnr_waited(dq))
		return;
	do {
		while (dq->ent_emit != dq->ent_tail && emit_step(dq, NULL, NULL))
			;
	} while (!direct_reads_settle());
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

/*
 * An error CQE ends the send queue.  A QP enters ERR, and the hook
 * schedules the flush.  A raw packet QP's SQ is a firmware object of its
 * own: it alone enters ERR, its RQ stays ready, and the kernel reports
 * the pair as SQE (query_raw_packet_qp_state() of mlx5's qp.c); SQE
 * flushes the send queue alone (dev_sq_process()).  Beside an RQ in ERR
 * already (device/eth.c) the pair is the QP's ERR.
 */
static void sq_failed(struct dev_qp *dq)
{
	if (dq->qp->type == IBV_QPT_RAW_PACKET && !dq->qp->rq_err) {
		emu_qp_set_state_locked(dq->qp, IBV_QPS_SQE);
		dev_qp_set_busy(dq);
		dev_kick();
		return;
	}
	dev_qp_fatal(dq, 0);
}

void dev_sq_complete(struct dev_qp *dq)
{
	while (dq->ent_head != dq->ent_tail) {
		struct dev_ent *e = &dq->ent[dq->ent_head & dq->ent_mask];

		if (e->state != DENT_DONE)
			break;
		if (DEV_UNLIKELY(e->flags & DENTF_STREAM)) {
			ent_cqe(dq, e, e->syndrome);	/* its stream's error: on with the rest */
			dq->ent_head++;
			continue;
		}
		if (e->syndrome) {
			if (e->flags & DENTF_HW)
				dev_tm_hw_done(dq, e);
			else
				ent_cqe(dq, e, e->syndrome);
			dq->ent_head++;
			if (dq->ent_emit < dq->ent_head)
				dq->ent_emit = dq->ent_head;
			sq_failed(dq);
			return;
		}
		if (e->flags & DENTF_HW)
			dev_tm_hw_done(dq, e);
		else if (e->flags & DENTF_SIGNALED)
			ent_cqe(dq, e, 0);
		dq->ent_head++;
	}
	if (dq->ent_head == dq->ent_tail && dq->deadline) {
		dq->deadline = 0;
		dev_eng.timers--;
	}
	/* drained after a failed signature check: SQD, and the QP's event */
	if (DEV_UNLIKELY(dq->sig_drain) && dq->ent_head == dq->ent_tail &&
	    dq->qp->attr.state == IBV_QPS_RTS) {
		emu_qp_set_state_locked(dq->qp, IBV_QPS_SQD);
		emu_post_async_event_locked(dq->qp->obj.ctx, &dq->qp->obj, 0,
					    IBV_EVENT_SQ_DRAINED);
	}
}

/*
 * The doorbell record does not describe the queue: more than sq_wqe_cnt
 * BBs ahead of what the device consumed, or behind it.  Honouring it would
 * re-execute WQEs already done (the 16-bit counter wraps), so the send queue
 * fails as a whole: IBV_EVENT_QP_FATAL ("local work queue catastrophic
 * error"), the QP to ERR, and the record is not walked.
 */
static void sq_bad_doorbell(struct dev_qp *dq)
{
	dq->sq_rung = false;
	dev_qp_fatal(dq, IBV_EVENT_QP_FATAL);
}

/*
 * Pick up new WQEs up to the doorbell record.  Every step moves sq_next
 * forward by a whole WQE and never past the record, so the walk ends after
 * at most sq_wqe_cnt BBs whatever software wrote.
 *
 * A record that points inside a WQE (a 2-BB WQE at BB 0, record 1): the
 * device executes the whole WQEs before it and waits for the rest, which
 * runs once a later record covers it.  That is what a ConnectX does - it
 * fetches WQEBBs only up to the producer counter and starts a WQE once all
 * the BBs its DS name are fetched - and it is the only choice that never
 * executes bytes software has not yet handed over (the BBs past the record
 * may still be being written).  libmlx5 and rdmafast always ring on a WQE
 * boundary, so they never see the difference.
 */
static void sq_parse(struct dev_qp *dq)
{
	unsigned budget = DEV_MAX_WQE_PER_ROUND;
	struct dev_wqe w;
	struct dev_sgl sgl;

	/* sq_parse_one() fills it for every entry emit_step() reads it for */
	sgl.n = 0;
	sgl.total = 0;
	while (dq->sq_rung && budget--) {
		int32_t avail = dev_db_avail(dq->sq_limit, dq->sq_next, dq->qp->sq_wqe_cnt);

		/*
		 * Draining after a failed signature check: the WQEs behind it
		 * wait, fenced or not, and are looked at again when the QP
		 * leaves SQD (emu_dev_qp_modified()).
		 */
		if (DEV_UNLIKELY(dq->sig_drain)) {
			dq->sq_rung = false;
			break;
		}

		if (avail < 0) {
			sq_bad_doorbell(dq);
			return;
		}
		if (avail == 0) {
			dq->sq_rung = false;
			break;
		}
		if (dq->ent_tail - dq->ent_head > dq->ent_mask)
			break;	/* every BB is in flight: impossible for sane software */
		if (!sq_parse_one(dq, (uint32_t)avail, &w, &sgl)) {
			dq->sq_rung = false;	/* the record ends inside this WQE: wait */
			break;
		}
		/*
		 * Everything before it is out: the WQE just parsed goes out
		 * from this parse, instead of being fetched and checked once
		 * more by sq_emit() (the outcome is the same: its bytes and
		 * keys cannot change within this engine pass).
		 */
		if (dq->ent_emit + 1 == dq->ent_tail && rnr_waited(dq))
			emit_step(dq, &w, &sgl);
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

		if (e->flags & DENTF_HW) {
			e->syndrome = RF_CQE_SYNDROME_WR_FLUSH_ERR;
			dev_tm_hw_done(dq, e);
		} else {
			ent_cqe(dq, e, RF_CQE_SYNDROME_WR_FLUSH_ERR);
		}
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
	/* newly rung WQEs, bounded as in sq_parse(): whole WQEs up to the record */
	while (dq->sq_rung && qp->sq_wqe_cnt) {
		int32_t avail = dev_db_avail(dq->sq_limit, dq->sq_next, qp->sq_wqe_cnt);
		struct dev_ent e = { 0 };
		uint32_t nbb;

		if (avail > 0) {
			nbb = wqe_nbb(qp, dq->sq_next, &e.op);
			if (nbb && nbb <= (uint32_t)avail) {
				e.wqe = dq->sq_next;
				ent_cqe(dq, &e, RF_CQE_SYNDROME_WR_FLUSH_ERR);
				dq->sq_next += nbb;
				continue;
			}
		}
		dq->sq_rung = false;
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
	dq->pace_end = 0;
	dq->sq_next = 0;
	dq->sq_limit = 0;
	dq->sq_rung = false;
	dq->ent_head = dq->ent_emit = dq->ent_tail = 0;
	dq->pkts_out = 0;
	dq->sq_error = false;
	dq->sig_drain = false;
	dq->dc_peer = 0;	/* a DCI out of RESET connects anew */
	dq->qp->dci_n_errored = 0;	/* and has no stream in error */
	dq->rq_ci = 0;
	dq->rx_drops = 0;
	dq->recv_busy = false;
	dq->uc_drop = false;
	dq->nak_sent = false;
	dq->last_wqe_sent = false;
	dq->flush_rq = false;
	dq->rd_retry = false;
	dev_resp_reset(dq);
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

	if (!ent_parse(dq, e, &w) ||
	    wqe_sgl(dq, &w, &sgl, IBV_ACCESS_LOCAL_WRITE)) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		return;
	}
	/* from here, a fault in the local buffers is a local protection error */
	/*
	 * Requester scatter-to-CQE: a signaled READ whose data fits, or a
	 * (non-masked) CS/FA, completes with the data in its CQE; libmlx5
	 * copies it into the WQE's scatter list (it knows READ and the two IB
	 * atomics only).  Unsignaled WQEs have no CQE: their data goes to memory.
	 */
	e->flags &= (uint8_t)~DENTF_SCAT;
	if (dq->scat && (e->flags & DENTF_SIGNALED) && !sgl.sig_in.mk &&
	    ((p->op == DOP_ATOMIC_RESP && w_atomic(e) &&
	      dev_scat_fits(dq->qp->scat_req, dq->qp->send_cq, 8)) ||
	     (p->op == DOP_READ_RESP && !e->resp_next && p->len == e->byte_len &&
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
		uint32_t v = (uint32_t)p->atomic[0];
		bool ok = w.atomic_size == 4 ? dev_sgl_copy_in(&sgl, 0, &v, 4) :
			  dev_sgl_copy_in(&sgl, 0, &p->atomic[0], 8);

		if (!ok)
			e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		return;
	}
	/* placed by its PSN, as a READ response carries no address */
	if (p->len && !dev_sgl_copy_in(&sgl, (uint64_t)e->resp_next * WIRE_MTU,
				       p->payload, p->len))
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
	/*
	 * Into a signature key: the wire's PI checked as the blocks arrive,
	 * a failure reported before the READ's completion, which succeeds;
	 * with signature pipelining the SQ drains behind it.
	 */
	if (DEV_UNLIKELY(sgl.sig.synd)) {
		dev_sig_err_cqe(dq->qp->send_cq, dq->qp->qpn, &sgl.sig);
		dq->sig_drain = dq->qp->drain_sigerr;
	}
}

/*
 * Queue a WQE the device issues itself (tag matching's rendezvous READ and
 * its FIN, tm.c) behind what the SQ holds: an entry like the others, whose
 * WQE is h->wqe (one BB) rather than SQ memory, and which completes into
 * dev_tm_hw_done() instead of a send CQE.  False when every entry is in use.
 */
bool dev_sq_push_hw(struct dev_qp *dq, const struct dev_hw_wqe *h)
{
	uint32_t slot = dq->ent_tail & dq->ent_mask;
	struct dev_ent *e = &dq->ent[slot];
	struct dev_wqe w;
	struct dev_sgl sgl;

	if (!dq->hw || dq->ent_tail - dq->ent_head > dq->ent_mask)
		return false;
	dq->hw[slot] = *h;
	memset(e, 0, sizeof(*e));
	e->flags = DENTF_HW;
	e->state = DENT_NEW;
	if (!ent_parse(dq, e, &w))
		return false;
	e->op = w.opcode;
	if (w.opf & OPF_RESP)
		e->flags |= DENTF_RESP;
	dq->ent_tail++;
	if (wqe_sgl(dq, &w, &sgl, (e->flags & DENTF_RESP) ? IBV_ACCESS_LOCAL_WRITE : 0)) {
		e->syndrome = RF_CQE_SYNDROME_LOCAL_PROT_ERR;
		e->state = DENT_DONE;
	} else {
		e->byte_len = (uint32_t)sgl.total;
		e->npkt = sgl.total ? (uint32_t)((sgl.total + WIRE_MTU - 1) / WIRE_MTU) : 1;
		e->psn = dq->next_psn;
		dq->next_psn = (dq->next_psn + e->npkt) & DEV_PSN_MASK;
	}
	dev_qp_set_busy(dq);
	return true;
}
