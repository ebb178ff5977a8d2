/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/mad.h - filters for snooping management datagrams (MADs) in
 * UD traffic.
 *
 *	struct rf_mad_filter f[2];
 *
 *	rf_mad_filter(&f[0], RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP,
 *		      RF_MAD_ATTR_PATH_RECORD);	     SA PathRecord responses
 *	rf_mad_filter(&f[1], RF_MAD_CLASS_CM, RF_MAD_ANY, RF_MAD_ANY);  all CM
 *	...
 *	n = rf_cq_poll(cq, wc, 16);
 *	for (i = 0; i < n; i++) {
 *		const void *mad = rf_ud_mad(&wc[i], buf_of(wc[i].wr_id), &len);
 *		if (mad)
 *			switch (rf_mad_match(f, 2, mad, len)) ...
 *	}
 *
 * A MAD is a UD datagram (to QP1, Q_Key RF_MAD_QKEY, for the general
 * services; any UD QP for an application's own classes) that starts with
 * the 24-byte common header of IBA 13.4.3. A filter is a mask and a value
 * over those 24 bytes in wire order: matching one is three 8-byte loads of
 * the header and, per filter, three XOR/AND and two ORs, with no
 * byte-swapping and no branch per field. The builders set a field from
 * host-order numbers; any field can be matched, partly or whole (the
 * method's response bit alone, a TID prefix).
 *
 * Nothing here touches a queue: a filter reads a buffer the caller owns,
 * on the receive side (rf_ud_mad() finds the MAD in a UD receive) or the
 * send side (a MAD about to be posted).
 *
 * The snoop filter of libibumad (struct rf_mad_snoop_filter) is the
 * simpler entry point: class, class version, attribute, errors only, a
 * vendor OUI, each 0 for "all". rf_mad_snoop_match() applies it to one
 * MAD; rdmafast/mad_tap.h applies it to everything a UD QP sends and
 * receives. The mask/value filters above remain the general form (any
 * field, any bits, the first of several matching).
 */
#ifndef RDMAFAST_MAD_H
#define RDMAFAST_MAD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <rdmafast/compiler.h>
#include <rdmafast/hw/endian.h>
#include <rdmafast/types.h>	/* struct rf_wc */

RF_BEGIN_DECLS

/* The common MAD header (IBA 13.4.3); multi-byte fields big-endian. */
struct rf_mad_hdr {
	uint8_t base_version;	/* RF_MAD_BASE_VERSION */
	uint8_t mgmt_class;	/* RF_MAD_CLASS_* */
	uint8_t class_version;
	uint8_t method;		/* RF_MAD_METHOD_*; bit 7: a response */
	__be16  status;
	__be16  class_specific;
	__be64  tid;		/* transaction ID: the requester picks it */
	__be16  attr_id;	/* RF_MAD_ATTR_* (per class) */
	__be16  resv;
	__be32  attr_mod;
};
RF_STATIC_ASSERT(sizeof(struct rf_mad_hdr) == 24, "MAD header size");
RF_STATIC_ASSERT(offsetof(struct rf_mad_hdr, status) == 4, "MAD status");
RF_STATIC_ASSERT(offsetof(struct rf_mad_hdr, tid) == 8, "MAD tid");
RF_STATIC_ASSERT(offsetof(struct rf_mad_hdr, attr_id) == 16, "MAD attr_id");
RF_STATIC_ASSERT(offsetof(struct rf_mad_hdr, attr_mod) == 20, "MAD attr_mod");

enum {
	RF_MAD_HDR_LEN      = 24,
	RF_MAD_LEN          = 256,	/* a whole MAD */
	RF_MAD_BASE_VERSION = 1,
	RF_UD_GRH_LEN       = 40,	/* before every UD receive's payload */
};

#define RF_MAD_QKEY 0x80010000U	/* the well-known Q_Key of QP1 (GSI) */

/* Management classes (IBA 13.4.4). */
enum {
	RF_MAD_CLASS_SUBN_LID_ROUTED = 0x01,	/* SMPs (QP0) */
	RF_MAD_CLASS_SA              = 0x03,	/* subnet administration */
	RF_MAD_CLASS_PERF            = 0x04,
	RF_MAD_CLASS_BM              = 0x05,
	RF_MAD_CLASS_DEV_MGMT        = 0x06,
	RF_MAD_CLASS_CM              = 0x07,	/* communication management */
	RF_MAD_CLASS_SNMP            = 0x08,
	RF_MAD_CLASS_CONG_MGMT       = 0x21,
	RF_MAD_CLASS_SUBN_DIRECTED   = 0x81,	/* SMPs (QP0) */
};

/* Methods (IBA 13.4.5): bit 7 marks a response. */
enum {
	RF_MAD_METHOD_GET          = 0x01,
	RF_MAD_METHOD_SET          = 0x02,
	RF_MAD_METHOD_SEND         = 0x03,
	RF_MAD_METHOD_TRAP         = 0x05,
	RF_MAD_METHOD_REPORT       = 0x06,
	RF_MAD_METHOD_TRAP_REPRESS = 0x07,
	RF_MAD_METHOD_GET_TABLE    = 0x12,
	RF_MAD_METHOD_RESP         = 0x80,
	RF_MAD_METHOD_GET_RESP     = 0x81,
	RF_MAD_METHOD_REPORT_RESP  = 0x86,
	RF_MAD_METHOD_GET_TABLE_RESP = 0x92,
};

/*
 * Attributes snooped most often: common to all classes, then per class
 * (an attribute ID means something only with its class): SMP, SA
 * (IBA 15.2.5), CM (12.6).
 */
enum {
	RF_MAD_ATTR_CLASS_PORT_INFO = 0x0001,
	RF_MAD_ATTR_NOTICE          = 0x0002,
	RF_MAD_ATTR_INFORM_INFO     = 0x0003,
	RF_MAD_ATTR_PORT_INFO       = 0x0015,	/* SMP */
	RF_MAD_ATTR_PATH_RECORD     = 0x0035,
	RF_MAD_ATTR_MCMEMBER_RECORD = 0x0038,
	RF_MAD_ATTR_CM_REQ          = 0x0010,
	RF_MAD_ATTR_CM_REJ          = 0x0012,
	RF_MAD_ATTR_CM_REP          = 0x0013,
	RF_MAD_ATTR_CM_RTU          = 0x0014,
	RF_MAD_ATTR_CM_DREQ         = 0x0015,
	RF_MAD_ATTR_CM_DREP         = 0x0016,
};

/* The header fields a filter can test (rf_mad_filter_set()). */
enum rf_mad_field {
	RF_MAD_F_BASE_VERSION,
	RF_MAD_F_CLASS,
	RF_MAD_F_CLASS_VERSION,
	RF_MAD_F_METHOD,
	RF_MAD_F_STATUS,
	RF_MAD_F_CLASS_SPECIFIC,
	RF_MAD_F_TID,
	RF_MAD_F_ATTR_ID,
	RF_MAD_F_ATTR_MOD,
};

#define RF_MAD_ANY (-1)	/* rf_mad_filter(): do not test this field */

/*
 * struct rf_mad_filter - a header matches when (header ^ value) & mask is
 * zero in all three words. Both arrays hold header bytes in wire order
 * (the words are never byte-swapped): build them with the functions below.
 */
struct rf_mad_filter {
	uint64_t mask[3];
	uint64_t value[3];
};

/*
 * rf_mad_filter_set - test the bits of mask in field: a header matches
 * only if they equal value's (both host order, at most the field's width).
 * Replaces what the filter tested in that field before; mask 0 stops
 * testing it. Returns 0, or -EINVAL for an unknown field or a value or
 * mask wider than the field (then the filter is unchanged).
 */
static inline int rf_mad_filter_set(struct rf_mad_filter *f, enum rf_mad_field field,
				    uint64_t value, uint64_t mask)
{
	/* offset and width in enum rf_mad_field's order (C++ has no designators) */
	static const uint8_t at[][2] = {
		{ 0, 1 },	/* BASE_VERSION */
		{ 1, 1 },	/* CLASS */
		{ 2, 1 },	/* CLASS_VERSION */
		{ 3, 1 },	/* METHOD */
		{ 4, 2 },	/* STATUS */
		{ 6, 2 },	/* CLASS_SPECIFIC */
		{ 8, 8 },	/* TID */
		{ 16, 2 },	/* ATTR_ID */
		{ 20, 4 },	/* ATTR_MOD */
	};
	uint8_t *m = (uint8_t *)f->mask, *v = (uint8_t *)f->value;
	unsigned off, width, i;

	if ((unsigned)field > RF_MAD_F_ATTR_MOD)
		return -EINVAL;
	off = at[field][0];
	width = at[field][1];
	if (width < 8 && ((value | mask) >> (8 * width)))
		return -EINVAL;
	for (i = 0; i < width; i++) {	/* most significant byte first */
		unsigned shift = 8 * (width - 1 - i);

		m[off + i] = (uint8_t)(mask >> shift);
		v[off + i] = (uint8_t)((value & mask) >> shift);
	}
	return 0;
}

/* rf_mad_filter_init - a filter that matches every IB MAD (base version 1). */
static inline void rf_mad_filter_init(struct rf_mad_filter *f)
{
	unsigned i;

	for (i = 0; i < 3; i++)
		f->mask[i] = f->value[i] = 0;
	rf_mad_filter_set(f, RF_MAD_F_BASE_VERSION, RF_MAD_BASE_VERSION, 0xff);
}

/*
 * rf_mad_filter - the usual filter: IB MADs of one class, method and
 * attribute, each RF_MAD_ANY to match all. Returns 0, or -EINVAL for a
 * value out of its field's range (then *f is untouched).
 */
static inline int rf_mad_filter(struct rf_mad_filter *f, int mgmt_class, int method,
				int attr_id)
{
	if (mgmt_class < RF_MAD_ANY || mgmt_class > 0xff || method < RF_MAD_ANY ||
	    method > 0xff || attr_id < RF_MAD_ANY || attr_id > 0xffff)
		return -EINVAL;
	rf_mad_filter_init(f);
	if (mgmt_class != RF_MAD_ANY)
		rf_mad_filter_set(f, RF_MAD_F_CLASS, (uint64_t)mgmt_class, 0xff);
	if (method != RF_MAD_ANY)
		rf_mad_filter_set(f, RF_MAD_F_METHOD, (uint64_t)method, 0xff);
	if (attr_id != RF_MAD_ANY)
		rf_mad_filter_set(f, RF_MAD_F_ATTR_ID, (uint64_t)attr_id, 0xffff);
	return 0;
}

/*
 * rf_mad_match - the index of the first of the n filters that the MAD at
 * mad (len bytes, any alignment) matches, or -1: none does, or len is
 * shorter than a MAD header.
 */
RF_INLINE int rf_mad_match(const struct rf_mad_filter *f, unsigned n, const void *mad,
			   uint32_t len)
{
	uint64_t h0, h1, h2;
	unsigned i;

	if (len < RF_MAD_HDR_LEN)
		return -1;
	__builtin_memcpy(&h0, (const uint8_t *)mad, 8);
	__builtin_memcpy(&h1, (const uint8_t *)mad + 8, 8);
	__builtin_memcpy(&h2, (const uint8_t *)mad + 16, 8);
	for (i = 0; i < n; i++)
		if ((((h0 ^ f[i].value[0]) & f[i].mask[0]) |
		     ((h1 ^ f[i].value[1]) & f[i].mask[1]) |
		     ((h2 ^ f[i].value[2]) & f[i].mask[2])) == 0)
			return (int)i;
	return -1;
}

/* ---- The snoop filter of libibumad ------------------------------------- */

/*
 * Vendor classes with an OUI: the second vendor range (IBA 13.4.4), whose
 * MADs carry the vendor's OUI in bytes 37..39, after the common header
 * (24 bytes), the RMPP header (12) and a reserved byte (IBA 13.4.9; the
 * layout of struct umad_vendor_packet in rdma-core's libibumad/umad_types.h).
 */
enum {
	RF_MAD_CLASS_VENDOR_OUI_FIRST = 0x30,
	RF_MAD_CLASS_VENDOR_OUI_LAST  = 0x4f,
	RF_MAD_VENDOR_OUI_OFFSET      = 37,
};

/*
 * struct rf_mad_snoop_filter - what a snooper wants to see, in the terms
 * of libibumad's snoop registration (umad_filter_t). A zero field selects
 * everything; the caller passes sizeof the struct along with it so that
 * later fields can be added (rf_mad_snoop_check()).
 * @mgmt_class:   0: every class, and then mgmt_version and attr_id are
 *                ignored
 * @mgmt_version: the class version; 0: every version
 * @attr_id:      host order; 0: every attribute
 * @errors:       nonzero: only MADs that went wrong: sends that completed
 *                in error (not cancelled ones, RF_WC_WR_FLUSH_ERR) and
 *                received MADs whose status field is non-zero
 * @oui:          non-zero: MADs of the vendor classes 0x30..0x4f pass only
 *                with this OUI (big-endian, as on the wire); other classes
 *                are not affected
 */
struct rf_mad_snoop_filter {
	uint8_t  mgmt_class;
	uint8_t  mgmt_version;
	uint16_t attr_id;
	uint8_t  errors;
	uint8_t  oui[3];
};

/*
 * rf_mad_snoop_check - 0 when size is the size of the filter this header
 * defines, -EINVAL otherwise (a caller built against another version, or
 * a pointer passed where the struct was meant).
 */
static inline int rf_mad_snoop_check(const struct rf_mad_snoop_filter *f, size_t size)
{
	return f && size == sizeof(*f) ? 0 : -EINVAL;
}

/* What the MAD passed to rf_mad_snoop_match() is. */
enum rf_mad_dir {
	RF_MAD_RECEIVED = 0,
	RF_MAD_SENT     = 1,
};

/*
 * rf_mad_snoop_match - 1 when the MAD at mad (len bytes, any alignment)
 * passes filter f, 0 otherwise (also when len is shorter than a header,
 * or than the OUI the filter asks to see). dir says whether the MAD was
 * received or sent; status is a sent MAD's completion status (enum
 * rf_wc_status), ignored for a received one.
 */
static inline int rf_mad_snoop_match(const struct rf_mad_snoop_filter *f, const void *mad,
				     uint32_t len, enum rf_mad_dir dir, unsigned status)
{
	const uint8_t *m = (const uint8_t *)mad;
	uint8_t cls;

	if (len < RF_MAD_HDR_LEN)
		return 0;
	cls = m[1];
	if (f->mgmt_class) {
		if (cls != f->mgmt_class)
			return 0;
		if (f->mgmt_version && m[2] != f->mgmt_version)
			return 0;
		if (f->attr_id && (((unsigned)m[16] << 8) | m[17]) != f->attr_id)
			return 0;
	}
	if ((f->oui[0] | f->oui[1] | f->oui[2]) && cls >= RF_MAD_CLASS_VENDOR_OUI_FIRST &&
	    cls <= RF_MAD_CLASS_VENDOR_OUI_LAST) {
		if (len < RF_MAD_VENDOR_OUI_OFFSET + 3 ||
		    m[RF_MAD_VENDOR_OUI_OFFSET] != f->oui[0] ||
		    m[RF_MAD_VENDOR_OUI_OFFSET + 1] != f->oui[1] ||
		    m[RF_MAD_VENDOR_OUI_OFFSET + 2] != f->oui[2])
			return 0;
	}
	if (f->errors) {
		if (dir == RF_MAD_SENT)
			return status != RF_WC_SUCCESS && status != RF_WC_WR_FLUSH_ERR;
		return (m[4] | m[5]) != 0;
	}
	return 1;
}

/*
 * rf_ud_mad - the datagram of a successful UD receive (wc, from a receive
 * buffer that starts at buf) past its 40-byte GRH area, with its length
 * in *len; NULL (and *len untouched) for anything else or a datagram too
 * short to hold a MAD header. Whether it is a MAD is rf_mad_match()'s to
 * say.
 */
RF_INLINE const void *rf_ud_mad(const struct rf_wc *wc, const void *buf, uint32_t *len)
{
	if (wc->status != RF_WC_SUCCESS || wc->opcode != RF_WC_RECV ||
	    wc->byte_len < RF_UD_GRH_LEN + RF_MAD_HDR_LEN)
		return NULL;
	*len = wc->byte_len - RF_UD_GRH_LEN;
	return (const uint8_t *)buf + RF_UD_GRH_LEN;
}

RF_END_DECLS

#endif /* RDMAFAST_MAD_H */
