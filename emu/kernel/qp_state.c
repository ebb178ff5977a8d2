/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qp_state.c - which ibv_modify_qp() calls are legal.
 *
 * The rules are those of the IB spec (o11-2 and table 94 "QP state
 * transition properties") as the kernel's ib_modify_qp_is_ok() applies
 * them: a transition must exist, carry every required attribute, and carry
 * nothing beyond the required and optional ones.  Of the SQD transitions
 * mlx5 implements only SQD->RTS (__mlx5_ib_modify_qp(): SQD_RTS_QP): a QP
 * enters SQD only by itself, its SQ drained after a failed signature check
 * (drain_sigerr, device/sq.c).  The others fail with EINVAL.
 *
 * mlx5's DC QPs have rules of their own (the kernel's mlx5 qp.c): a DCI
 * follows modify_dci_qp_is_ok(), a DCT mlx5_ib_modify_dct(); both take
 * exactly the required attributes plus the optional ones, nothing else.
 */
#include "internal.h"

enum { T_UD, T_UC, T_RC, T_XI, T_XT, T_RAW, T_NTYPES };

static int type_index(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_UD:	return T_UD;
	case IBV_QPT_UC:	return T_UC;
	case IBV_QPT_RC:	return T_RC;
	case IBV_QPT_XRC_SEND:	return T_XI;
	case IBV_QPT_XRC_RECV:	return T_XT;
	case IBV_QPT_RAW_PACKET: return T_RAW;
	default:		return -1;
	}
}

struct transition {
	bool		valid;
	uint32_t	req[T_NTYPES];
	uint32_t	opt[T_NTYPES];
};

#define PKEY	IBV_QP_PKEY_INDEX
#define PORT	IBV_QP_PORT
#define QKEY	IBV_QP_QKEY
#define ACC	IBV_QP_ACCESS_FLAGS
#define AV	IBV_QP_AV
#define MTU	IBV_QP_PATH_MTU
#define DQPN	IBV_QP_DEST_QPN
#define RPSN	IBV_QP_RQ_PSN
#define SPSN	IBV_QP_SQ_PSN
#define DRD	IBV_QP_MAX_DEST_RD_ATOMIC
#define RD	IBV_QP_MAX_QP_RD_ATOMIC
#define RNRT	IBV_QP_MIN_RNR_TIMER
#define TMO	IBV_QP_TIMEOUT
#define RETRY	IBV_QP_RETRY_CNT
#define RNRR	IBV_QP_RNR_RETRY
#define ALT	IBV_QP_ALT_PATH
#define MIG	IBV_QP_PATH_MIG_STATE
#define CUR	IBV_QP_CUR_STATE
#define RATE	IBV_QP_RATE_LIMIT

/*
 * Into RTS from RTR, RTS and SQD: the same optional attributes, but for
 * a raw packet QP, which takes its packet pacing rate into RTS and in
 * RTS only.
 */
#define OPT_TO_RTS	CUR | QKEY, CUR | ALT | ACC | MIG, CUR | ALT | ACC | RNRT | MIG, \
			CUR | ALT | ACC | MIG, CUR | ALT | ACC | RNRT | MIG

/*
 * Columns: UD, UC, RC, XRC initiator, XRC target, raw packet.  A raw
 * packet QP has no path, no PSNs and no keys: its port into INIT, nothing
 * else but the rate.
 */
static const struct transition table[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.req = { PKEY | PORT | QKEY, PKEY | PORT | ACC,
				 PKEY | PORT | ACC, PKEY | PORT | ACC,
				 PKEY | PORT | ACC, PORT },
		},
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_INIT] = {
			.valid = true,
			.opt = { PKEY | PORT | QKEY, PKEY | PORT | ACC,
				 PKEY | PORT | ACC, PKEY | PORT | ACC,
				 PKEY | PORT | ACC },
		},
		[IBV_QPS_RTR] = {
			.valid = true,
			.req = { 0, AV | MTU | DQPN | RPSN,
				 AV | MTU | DQPN | RPSN | DRD | RNRT,
				 AV | MTU | DQPN | RPSN,
				 AV | MTU | DQPN | RPSN | DRD | RNRT },
			.opt = { PKEY | QKEY, ALT | ACC | PKEY, ALT | ACC | PKEY,
				 ALT | ACC | PKEY, ALT | ACC | PKEY },
		},
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.req = { SPSN, SPSN, TMO | RETRY | RNRR | SPSN | RD,
				 TMO | RETRY | RNRR | SPSN | RD, TMO | SPSN },
			.opt = { OPT_TO_RTS, RATE },
		},
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true, .opt = { OPT_TO_RTS, RATE } },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = { .valid = true, .opt = { OPT_TO_RTS } },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
		[IBV_QPS_RTS] = {
			.valid = true,
			.opt = { CUR | QKEY, CUR | ACC, 0, 0, 0 },
		},
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = true },
		[IBV_QPS_ERR] = { .valid = true },
	},
};

bool emu_modify_qp_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next,
			 enum ibv_qp_type type, uint32_t mask)
{
	const struct transition *t;
	int ti = type_index(type);

	if (ti < 0 || cur > IBV_QPS_ERR || next > IBV_QPS_ERR)
		return false;
	/* the current state may only be asserted where it can be ambiguous */
	if ((mask & CUR) && cur != IBV_QPS_RTR && cur != IBV_QPS_RTS &&
	    cur != IBV_QPS_SQD && cur != IBV_QPS_SQE)
		return false;
	t = &table[cur][next];
	if (!t->valid)
		return false;
	if ((mask & t->req[ti]) != t->req[ti])
		return false;
	return !(mask & ~(t->req[ti] | t->opt[ti] | IBV_QP_STATE));
}

/* is_valid_mask() of the kernel's mlx5 qp.c, IBV_QP_STATE always required */
static bool exact_mask(uint32_t mask, uint32_t req, uint32_t opt)
{
	req |= IBV_QP_STATE;
	return (mask & req) == req && !(mask & ~(req | opt));
}

bool emu_modify_dci_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask)
{
	if (next == IBV_QPS_RESET)
		return exact_mask(mask, 0, 0);
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return exact_mask(mask, PKEY | PORT, 0);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_INIT)
		return exact_mask(mask, 0, PKEY | PORT);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return exact_mask(mask, MTU, PKEY | AV);
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS)
		return exact_mask(mask, TMO | RETRY | RNRR | RD | SPSN, RNRT);
	if (cur == IBV_QPS_RTS && next == IBV_QPS_RTS)
		return exact_mask(mask, 0, RNRT);
	if (cur != IBV_QPS_RESET && next == IBV_QPS_ERR)
		return exact_mask(mask, 0, 0);
	return false;
}

/*
 * A DCT is created in the hardware by INIT->RTR and has no other states:
 * RESET->INIT and INIT->RTR are its only transitions (not even to ERR or
 * back to RESET; it is destroyed instead).
 */
bool emu_modify_dct_is_ok(enum ibv_qp_state cur, enum ibv_qp_state next, uint32_t mask)
{
	if (!(mask & IBV_QP_STATE))
		return false;
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return exact_mask(mask, ACC | PKEY | PORT, 0);
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR)
		return exact_mask(mask, RNRT | AV | MTU, 0);
	return false;
}
