/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/cq_sig.h - signature errors: what a signature key's failed
 * check (sq_umr.h) reported, decoded.
 *
 *	n = rf_cq_poll(cq, wc, max);
 *	if (wc[n - 1].opcode == RF_WC_SIG_ERR)       always the last record
 *		rf_cq_sig_err(cq, &mem, &wire, &e);  e.type, expected, actual, offset
 *
 * The device writes a signature error CQE (opcode SIG_ERR) to the send
 * CQ of the QP whose WQE moved the data through the key, before that
 * WQE's own completion, which follows as usual. The CQE names the key,
 * not the QP or the WQE. libmlx5 consumes it inside its poll, records it
 * on the key (found by the key's index in its table), and
 * mlx5dv_mkey_check() reports it later. rdmafast keeps no table of keys:
 * rf_cq_poll() returns the CQE as a record of its own (opcode
 * RF_WC_SIG_ERR, status RF_WC_GENERAL_ERR so that code reading status
 * alone does not take it for a completion; wr_id, qp_num and the rest 0)
 * and ends the call with it, and keeps its bytes in the CQ: until the
 * next poll, rf_cq_sig_err() decodes them as mlx5dv_mkey_check() decodes
 * the same bytes, given the key's domains (which libmlx5 keeps on its
 * key), and forgets them. rf_cq_poll_ts() and rf_cq_decode() (so
 * rf_tm_poll()) do the same. None of this is on the fast path: a SIG_ERR
 * CQE fails the fast path's compare like any other CQE that is not a
 * successful requester's.
 */
#ifndef RDMAFAST_CQ_SIG_H
#define RDMAFAST_CQ_SIG_H

#include <errno.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/hw/cqe.h>
#include <rdmafast/cq_types.h>
#include <rdmafast/sq_umr.h>

RF_BEGIN_DECLS

/* rf_sig_err.type, numbered as enum mlx5dv_mkey_err_type. */
enum {
	RF_SIG_ERR_NONE   = 0,
	RF_SIG_ERR_GUARD  = 1,	/* the T10-DIF guard or the CRC */
	RF_SIG_ERR_REFTAG = 2,
	RF_SIG_ERR_APPTAG = 3,
};

/*
 * struct rf_sig_err - one failed signature check.
 * @mkey:     the key (its lkey: index << 8 | tag)
 * @syndrome: the CQE's RF_SIG_ERR_SYND_* bits
 * @type:     RF_SIG_ERR_* (the reference tag first, then the application
 *            tag, then the guard, when several differ)
 * @domain:   RF_SIG_ERR_DOMAIN_WIRE or _MEMORY: whose check failed
 * @expected: the value the field should have had (computed from the data
 *            for a guard): 16 bits for a T10-DIF guard or tag, 32 for a
 *            reference tag or a CRC32, 64 for a CRC64
 * @actual:   the value the data carried
 * @offset:   where the failing block starts, in bytes of the domain
 *            (mlx5dv_sig_err.offset)
 */
struct rf_sig_err {
	uint32_t mkey;
	uint16_t syndrome;
	uint8_t  type;
	uint8_t  domain;
	uint64_t expected;
	uint64_t actual;
	uint64_t offset;
};

/*
 * rf_cqe_sig_err - decode the signature error CQE cqe (a peek user's) of
 * a key whose domains are mem and wire (as given to rf_sig_block_init();
 * NULL for one without a signature) into *e. Returns 0, or -EINVAL where
 * mlx5dv_mkey_check() returns EINVAL: not a SIG_ERR CQE, no syndrome bit
 * it knows, a transaction signature, an unknown domain, or a domain
 * without a signature.
 */
static inline RF_COLD int rf_cqe_sig_err(const struct rf_cqe64 *cqe,
					 const struct rf_sig_domain *mem,
					 const struct rf_sig_domain *wire, struct rf_sig_err *e)
{
	const struct rf_sig_err_cqe *c = (const struct rf_sig_err_cqe *)cqe;
	uint64_t exp = (uint64_t)rf_be32toh(c->expected_trans_sig) << 32 |
		       rf_be32toh(c->expected_ref_tag);
	uint64_t act = (uint64_t)rf_be32toh(c->actual_trans_sig) << 32 |
		       rf_be32toh(c->actual_ref_tag);
	uint16_t synd = rf_be16toh(c->syndrome);
	uint8_t dom = c->domain & 7;
	const struct rf_sig_domain *d = dom == RF_SIG_ERR_DOMAIN_WIRE ? wire :
					dom == RF_SIG_ERR_DOMAIN_MEMORY ? mem : NULL;

	__builtin_memset(e, 0, sizeof(*e));
	if (rf_cqe_opcode(c->op_own) != RF_CQE_SIG_ERR ||
	    !(synd & (RF_SIG_ERR_SYND_REFTAG | RF_SIG_ERR_SYND_APPTAG | RF_SIG_ERR_SYND_GUARD)) ||
	    (c->sig_type & 7) != RF_SIG_ERR_TYPE_BLOCK || !d)
		return -EINVAL;
	e->mkey = rf_be32toh(c->mkey);
	e->syndrome = synd;
	e->domain = dom;
	e->offset = rf_be64toh(c->sig_err_offset);
	if (synd & RF_SIG_ERR_SYND_REFTAG) {
		e->type = RF_SIG_ERR_REFTAG;
		e->expected = exp & 0xffffffff;
		e->actual = act & 0xffffffff;
	} else if (synd & RF_SIG_ERR_SYND_APPTAG) {
		e->type = RF_SIG_ERR_APPTAG;
		e->expected = (exp >> 32) & 0xffff;
		e->actual = (act >> 32) & 0xffff;
	} else {
		/* the guard's width is the domain's: the CQE does not say */
		unsigned shift = d->type <= RF_SIG_T10DIF_CSUM ? 48 :
				 d->type == RF_SIG_CRC64_XP10 ? 0 : 32;

		e->type = RF_SIG_ERR_GUARD;
		e->expected = exp >> shift;
		e->actual = act >> shift;
	}
	return 0;
}

/*
 * rf_cq_sig_err - the signature error of the RF_WC_SIG_ERR record that
 * the last poll of cq returned, decoded by rf_cqe_sig_err() and then
 * forgotten, as mlx5dv_mkey_check() reports a key's error once. Returns
 * 0 with e->type RF_SIG_ERR_NONE when there is none (no such record, or
 * already read), or rf_cqe_sig_err()'s -EINVAL, which forgets nothing.
 */
static inline RF_COLD int rf_cq_sig_err(struct rf_cq *cq, const struct rf_sig_domain *mem,
					const struct rf_sig_domain *wire, struct rf_sig_err *e)
{
	int ret;

	if (rf_cqe_opcode(cq->sig_err.op_own) != RF_CQE_SIG_ERR) {
		__builtin_memset(e, 0, sizeof(*e));
		return 0;
	}
	ret = rf_cqe_sig_err((const struct rf_cqe64 *)&cq->sig_err, mem, wire, e);
	if (!ret)
		cq->sig_err.op_own = 0;
	return ret;
}

RF_END_DECLS

#endif /* RDMAFAST_CQ_SIG_H */
