/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rdmafast/mad.h on MAD headers written byte by byte in wire order: the
 * header struct, each field a filter can test (whole and masked), the
 * first match winning, length and base-version checks, bad arguments, and
 * finding the MAD in a UD receive.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include <rdmafast/rdmafast.h>

/* A MAD header in wire order, at p (any alignment). */
static void put_mad(uint8_t *p, uint8_t base, uint8_t cls, uint8_t method, uint16_t status,
		    uint64_t tid, uint16_t attr, uint32_t mod)
{
	memset(p, 0, RF_MAD_LEN);
	p[0] = base;
	p[1] = cls;
	p[2] = 2;	/* class version */
	p[3] = method;
	p[4] = (uint8_t)(status >> 8);
	p[5] = (uint8_t)status;
	for (int i = 0; i < 8; i++)
		p[8 + i] = (uint8_t)(tid >> (56 - 8 * i));
	p[16] = (uint8_t)(attr >> 8);
	p[17] = (uint8_t)attr;
	for (int i = 0; i < 4; i++)
		p[20 + i] = (uint8_t)(mod >> (24 - 8 * i));
}

Test(mad, header_struct_reads_the_wire_bytes)
{
	uint8_t b[RF_MAD_LEN];
	struct rf_mad_hdr h;

	put_mad(b, 1, RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP, 0x1234,
		0x0102030405060708ULL, RF_MAD_ATTR_PATH_RECORD, 0xa0b0c0d0);
	memcpy(&h, b, sizeof(h));
	cr_assert_eq(h.base_version, 1);
	cr_assert_eq(h.mgmt_class, 0x03);
	cr_assert_eq(h.class_version, 2);
	cr_assert_eq(h.method, 0x81);
	cr_assert_eq(rf_be16toh(h.status), 0x1234);
	cr_assert_eq(rf_be64toh(h.tid), 0x0102030405060708ULL);
	cr_assert_eq(rf_be16toh(h.attr_id), 0x0035);
	cr_assert_eq(rf_be32toh(h.attr_mod), 0xa0b0c0d0);
}

Test(mad, class_method_attribute_and_first_match)
{
	struct rf_mad_filter f[3];
	uint8_t b[RF_MAD_LEN + 1], *m = b + 1;	/* unaligned on purpose */

	cr_assert_eq(rf_mad_filter(&f[0], RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP,
				   RF_MAD_ATTR_PATH_RECORD), 0);
	cr_assert_eq(rf_mad_filter(&f[1], RF_MAD_CLASS_CM, RF_MAD_ANY, RF_MAD_ANY), 0);
	cr_assert_eq(rf_mad_filter(&f[2], RF_MAD_ANY, RF_MAD_ANY, RF_MAD_ANY), 0);

	put_mad(m, 1, RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_RESP, 0, 7, RF_MAD_ATTR_PATH_RECORD, 0);
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_LEN), 0);
	cr_assert_eq(rf_mad_match(f + 1, 1, m, RF_MAD_LEN), -1, "not CM");
	/* the request, another attribute: only the catch-all */
	m[3] = RF_MAD_METHOD_GET;
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_LEN), 2);
	m[3] = RF_MAD_METHOD_GET_RESP;
	m[17] = RF_MAD_ATTR_MCMEMBER_RECORD;
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_LEN), 2);

	put_mad(m, 1, RF_MAD_CLASS_CM, RF_MAD_METHOD_SEND, 0, 9, RF_MAD_ATTR_CM_REQ, 0);
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_LEN), 1);
	cr_assert_eq(rf_mad_match(f, 1, m, RF_MAD_LEN), -1, "only the SA filter");
	cr_assert_eq(rf_mad_match(f, 0, m, RF_MAD_LEN), -1, "no filters");

	/* a header is all it needs; not even that, or another base version: no MAD */
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_HDR_LEN), 1);
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_HDR_LEN - 1), -1);
	m[0] = 0x80;
	cr_assert_eq(rf_mad_match(f, 3, m, RF_MAD_LEN), -1);
}

Test(mad, masked_fields)
{
	struct rf_mad_filter f;
	uint8_t m[RF_MAD_LEN];

	/* any response of the SA: the method's top bit alone */
	rf_mad_filter_init(&f);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_CLASS, RF_MAD_CLASS_SA, 0xff), 0);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_METHOD, RF_MAD_METHOD_RESP,
				       RF_MAD_METHOD_RESP), 0);
	put_mad(m, 1, RF_MAD_CLASS_SA, RF_MAD_METHOD_GET_TABLE_RESP, 0, 0, 0x11, 0);
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);
	m[3] = RF_MAD_METHOD_GET_TABLE;
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), -1);

	/* the transactions of one requester: a TID prefix */
	rf_mad_filter_init(&f);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_TID, 0xcafe000000000000ULL,
				       0xffff000000000000ULL), 0);
	put_mad(m, 1, RF_MAD_CLASS_CM, RF_MAD_METHOD_SEND, 0, 0xcafe00000000beefULL, 0x10, 0);
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);
	m[9] ^= 1;	/* TID bits 48..55 */
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), -1);
	m[9] ^= 1;
	m[15] ^= 1;	/* outside the prefix */
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);

	/* status and attribute modifier, whole; class version and specific bits */
	rf_mad_filter_init(&f);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_STATUS, 0x0c, 0xffff), 0);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_ATTR_MOD, 0x12345678, 0xffffffff), 0);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_CLASS_VERSION, 2, 0xff), 0);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_CLASS_SPECIFIC, 0x8000, 0x8000), 0);
	put_mad(m, 1, RF_MAD_CLASS_PERF, RF_MAD_METHOD_GET_RESP, 0x0c, 1, 0x12, 0x12345678);
	m[6] = 0x80;
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);
	{
		/* every tested byte (base version too), with a bit the mask covers */
		static const uint8_t at[] = { 0, 2, 4, 5, 6, 20, 21, 22, 23 };

		for (unsigned i = 0; i < sizeof(at); i++) {
			uint8_t bit = at[i] == 6 ? 0x80 : 0x01;

			m[at[i]] ^= bit;
			cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), -1, "byte %u", at[i]);
			m[at[i]] ^= bit;
		}
	}
	m[1] = RF_MAD_CLASS_SA;	/* the bytes not tested: class, method, TID, attribute */
	m[3] = RF_MAD_METHOD_SET;
	m[8] ^= 0xff;
	m[17] ^= 0xff;
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);
	m[6] ^= 0x7f;	/* class_specific bits outside the mask */
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);

	/* a mask of 0 stops testing a field */
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_STATUS, 0, 0), 0);
	m[5] = 0;
	cr_assert_eq(rf_mad_match(&f, 1, m, sizeof(m)), 0);
}

Test(mad, bad_arguments_leave_the_filter)
{
	struct rf_mad_filter f, g;

	cr_assert_eq(rf_mad_filter(&f, RF_MAD_CLASS_CM, RF_MAD_ANY, RF_MAD_ANY), 0);
	g = f;
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_CLASS, 0x100, 0xff), -EINVAL);
	cr_assert_eq(rf_mad_filter_set(&f, RF_MAD_F_ATTR_ID, 1, 0x10000), -EINVAL);
	cr_assert_eq(rf_mad_filter_set(&f, (enum rf_mad_field)99, 1, 1), -EINVAL);
	cr_assert_eq(memcmp(&f, &g, sizeof(f)), 0);
	cr_assert_eq(rf_mad_filter(&f, 0x100, RF_MAD_ANY, RF_MAD_ANY), -EINVAL);
	cr_assert_eq(rf_mad_filter(&f, RF_MAD_ANY, -2, RF_MAD_ANY), -EINVAL);
	cr_assert_eq(rf_mad_filter(&f, RF_MAD_ANY, RF_MAD_ANY, 0x10000), -EINVAL);
	cr_assert_eq(memcmp(&f, &g, sizeof(f)), 0);
}

Test(mad, ud_receive_payload)
{
	struct rf_wc wc;
	uint8_t buf[RF_UD_GRH_LEN + RF_MAD_LEN] = { 0 };
	uint32_t len = 12345;

	memset(&wc, 0, sizeof(wc));
	wc.status = RF_WC_SUCCESS;
	wc.opcode = RF_WC_RECV;
	wc.byte_len = RF_UD_GRH_LEN + RF_MAD_LEN;
	cr_assert_eq(rf_ud_mad(&wc, buf, &len), buf + RF_UD_GRH_LEN);
	cr_assert_eq(len, RF_MAD_LEN);
	wc.byte_len = RF_UD_GRH_LEN + RF_MAD_HDR_LEN;
	cr_assert_eq(rf_ud_mad(&wc, buf, &len), buf + RF_UD_GRH_LEN);
	cr_assert_eq(len, RF_MAD_HDR_LEN);

	len = 12345;
	wc.byte_len = RF_UD_GRH_LEN + RF_MAD_HDR_LEN - 1;
	cr_assert_null(rf_ud_mad(&wc, buf, &len), "too short for a header");
	wc.byte_len = RF_UD_GRH_LEN + RF_MAD_LEN;
	wc.opcode = RF_WC_SEND;
	cr_assert_null(rf_ud_mad(&wc, buf, &len), "a requester completion");
	wc.opcode = RF_WC_RECV;
	wc.status = RF_WC_LOC_LEN_ERR;
	cr_assert_null(rf_ud_mad(&wc, buf, &len), "an error completion");
	cr_assert_eq(len, 12345);
}
