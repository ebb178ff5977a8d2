/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * wire_packet.c - libFuzzer target: arbitrary packets delivered to a host
 * of the emulated fabric the way another host's are, over the Unix
 * SOCK_SEQPACKET wire (emu/wire/wire.c), to RC, UC and UD QPs with posted
 * receives and a registered region.
 *
 * The emulator is linked in as for device_wqe.c. This process is the host;
 * the harness connects to the host's own wire socket as a peer would and
 * sends the input as one packet. By default it first makes the packet
 * well-framed (size and len agree with the byte count, a correct check
 * value when DPKT_CRC is set), then sets the fields a forger chooses from
 * the input's header: the destination QPN (one of the host's QPs, the
 * multicast QPN, a QPN nobody has), the BTH transport bits (the QP's, or
 * any of the eight, with or without a DCETH), the address (the port's LID,
 * with or without a GRH naming its GID; another LID; another DGID; a
 * multicast LID or DGID), the source, the PSN (the expected one, near it,
 * any), the rkey, Q_Key and remote address (right, wrong, any), the opcode
 * (any byte, or one of the defined ones).
 *
 * What must hold, for every packet: no crash, no sanitizer report, no hang
 * (the harness runs the device until it has taken the packet), nothing written
 * outside the registered region (guard pattern around it), every
 * completion a defined status. For a well-framed packet whose fields the
 * header chose:
 *
 *   - a multicast address, the multicast QPN at a unicast address, a QPN
 *     nobody has, a unicast address that is not the port's (another DLID,
 *     a GRH with a DGID not the port's), a transport that is not the QP's:
 *     dropped. No completion, no byte of the region changed, and the drop
 *     counted where the responder says (drop_address for a QP's QPN at
 *     another address, drop_transport for the wrong transport, also to the
 *     multicast QPN: only UD is multicast);
 *   - an RC request whose PSN is not the expected one (a duplicate or one
 *     ahead) changes no byte of the region;
 *   - a wrong rkey changes no byte outside the receive buffers; a right one
 *     none outside [raddr, raddr + the message) and the receive buffers.
 *
 * Whether a forged source is refused is tests/emu/device/test_spoof.c's
 * matter, not checked here (the header may name the right one).
 *
 * Input: byte 0 flags (bit 0 raw size/len, bit 1 raw destination, address
 * and transport, bit 2 no check value fix-up, bit 3 raw source, PSN, keys
 * and address), bytes 1-5 the choices (see choose()), then the packet.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <linux/sockios.h>

#include "device/device.h"
#include "emu_harness.h"

#define NQP       5	/* RC a->b, b, UC a->b, b, UD */
#define NRECV     16
#define RECV_OFF  0x8000	/* the receive buffers: NRECV x 1 KiB from here */
#define HDR       6		/* input header */

/* beside the harness's device, PD, CQ and MR (H) */
static struct {
	struct ibv_qp *qp[NQP];
	int fd;			/* our connection to the host's wire socket */
	union ibv_gid gid;	/* port 1's GID 0 */
	uint8_t before[MR_LEN];	/* the region before the packet */
} W;

static const enum ibv_qp_type qp_type[NQP] = {
	IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UC, IBV_QPT_UD };

static void post_recvs(struct ibv_qp *qp)
{
	for (uint32_t i = 0; i < NRECV; i++) {
		struct ibv_sge sg = { (uintptr_t)H.mr->addr + 0x8000 + 1024 * i, 1024, H.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;

		CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
	}
}

static void reset_all(void)
{
	harness_reap();
	for (int i = 0; i < NQP; i++) {
		uint32_t peer = i < 4 ? W.qp[i ^ 1]->qp_num : 0;

		CHECK(harness_bring_up(W.qp[i], qp_type[i], peer) == 0);
	}
	harness_reap();
	for (int i = 0; i < NQP; i++)
		post_recvs(W.qp[i]);
}

static struct rfemu_dev_stats stats(void)
{
	struct rfemu_dev_stats s;

	emu_lock_acquire();
	s = wire_stats;
	emu_lock_release();
	return s;
}

static uint64_t pkts_seen(void)
{
	struct rfemu_dev_stats s = stats();

	return s.pkts_rx + s.drop_fault;
}

/* The engine has counted the packet (received, or dropped at the fault). */
static bool pkt_taken(void *before)
{
	return pkts_seen() != *(uint64_t *)before;
}

/*
 * A packet that is not framed is counted nowhere: it is taken when the host
 * has read every byte of it (for a Unix socket SIOCOUTQ counts the bytes
 * its peer has not read yet).
 */
static bool bytes_taken(void *unused)
{
	int queued;

	(void)unused;
	return ioctl(W.fd, SIOCOUTQ, &queued) == 0 && queued == 0;
}

static uint64_t check_value(const struct dev_pkt *p)
{
	return dev_hash(p, offsetof(struct dev_pkt, crc)) * 31 ^ dev_hash(p->payload, p->len);
}

/*
 * Connect to our own wire socket, as another host would. The host drops a
 * connection on an empty packet (read as end of file), so an empty input
 * is followed by a new connection at once: a packet sent behind it on the
 * old one was lost with it whenever the host read the empty one after the
 * input's time was up (a checked packet never received, a false finding
 * of CI's make fuzz). A failed send reconnects too.
 */
static void peer_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (W.fd >= 0)
		close(W.fd);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/wire.%u", emu_subnet_dir(),
		 EMU_NUM_HOST(W.qp[0]->qp_num));
	W.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(W.fd >= 0);
	CHECK(connect(W.fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
}

static void setup(void)
{
	harness_open(512);
	CHECK(ibv_query_gid(H.ctx, 1, 0, &W.gid) == 0);
	for (int i = 0; i < NQP; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = H.cq, .recv_cq = H.cq, .qp_type = qp_type[i],
			.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
				 .max_send_sge = 1, .max_recv_sge = 1 } };

		W.qp[i] = ibv_create_qp(H.pd, &a);
		CHECK(W.qp[i]);
	}
	reset_all();
	W.fd = -1;
	peer_connect();
}

/* What the header made of the packet, and so what must become of it. */
struct expect {
	int qp;			/* index of the destination QP, -1: none of them */
	int mcast;		/* a multicast address */
	int addr_ok;		/* a unicast address of the port */
	int tp_ok;		/* the destination QP's transport, no DCETH */
	int rkey_ok;
	int psn_ok;		/* the expected PSN (0 after the bring-up) in 24 bits */
};

static uint8_t qp_tp(int i)
{
	return qp_type[i] == IBV_QPT_UD ? DTP_UD : qp_type[i] == IBV_QPT_UC ? DTP_UC : DTP_RC;
}

/*
 * Apply the header's choices (bytes 1-5 of the input, c[0..4]) to the
 * packet p, unless flags say to leave those fields raw:
 *
 *   c[0] destination: 0-4 the QP of that index, 5 the multicast QPN, 6 a
 *        QPN nobody has, 7 the QP (c[0] >> 3) % NQP
 *   c[1] transport: low 2 bits 0-2 the QP's, 3 bits 2-4 (any, may be
 *        right); bit 5 a DCETH; bit 6 an opcode of the defined ones
 *   c[2] address: 0-2 the port's LID, 3 and a GRH with its GID, 4 another
 *        LID, 5 the LID and a GRH with another GID, 6 a multicast LID, 7
 *        the LID and a GRH with a multicast GID
 *   c[3] keys: bits 0-1 rkey (0-1 right, 2 wrong, 3 raw), 2-3 Q_Key (same),
 *        4-5 raddr (0-1 in the region, 2 across its end, 3 raw)
 *   c[4] PSN: low 2 bits 0-1 the expected, 2 near it, 3 raw; bit 7 a raw
 *        source (else the peer's QPN and our LID)
 */
static void choose(struct dev_pkt *p, uint8_t flags, const uint8_t *c, struct expect *e)
{
	uint16_t lid = H.lid;
	int q = -1;

	memset(e, 0, sizeof(*e));
	e->qp = -1;
	if (!(flags & 2)) {
		switch (c[0] & 7) {
		case 5:  p->dst_qpn = DEV_MCAST_QPN; break;
		case 6:  p->dst_qpn = W.qp[NQP - 1]->qp_num + 1 + (c[0] >> 3); break;
		case 7:  q = (c[0] >> 3) % NQP; break;
		default: q = c[0] & 7; break;
		}
		if (q >= 0)
			p->dst_qpn = W.qp[q]->qp_num;
		if ((c[1] & 3) != 3)
			p->tp = q >= 0 ? qp_tp(q) : DTP_UD;
		else
			p->tp = (c[1] >> 2) & 7;
		p->flags = (uint8_t)((p->flags & ~DPKT_DCETH) | (c[1] & 0x20 ? DPKT_DCETH : 0));
		if (c[1] & 0x40)
			p->op = (uint8_t)(DOP_SEND + p->op % (DOP_NAK - DOP_SEND + 1));
		p->flags &= (uint8_t)~DPKT_GRH;
		p->dlid = lid;
		switch (c[2] & 7) {
		case 3:
			p->flags |= DPKT_GRH;
			memcpy(p->dgid, W.gid.raw, 16);
			break;
		case 4:
			/* another unicast LID (not 0, not multicast) */
			p->dlid = (uint16_t)(1 + (lid + 1 + (c[2] >> 3)) % 0xbffe);
			if (p->dlid == lid)
				p->dlid = (uint16_t)(lid % 0xbffe + 1);
			break;
		case 5:
			p->flags |= DPKT_GRH;
			memcpy(p->dgid, W.gid.raw, 16);
			p->dgid[(c[2] >> 3) & 15] ^= (uint8_t)(1 + (c[2] >> 7));
			break;
		case 6:
			p->dlid = (uint16_t)(0xc000 | (c[2] >> 3));
			break;
		case 7:
			p->flags |= DPKT_GRH;
			memset(p->dgid, 0, 16);
			p->dgid[0] = 0xff;
			p->dgid[1] = 0x0e;
			p->dgid[15] = c[2];
			break;
		}
		e->qp = q;
		e->mcast = dev_pkt_is_mcast(p, 0);
		e->addr_ok = !e->mcast && dev_pkt_to_port(p, &(struct emu_port_id){ .lid = lid,
			.num_gids = 1, .gid = { W.gid } });
		e->tp_ok = q >= 0 && p->tp == qp_tp(q) && !(p->flags & DPKT_DCETH);
	}
	if (!(flags & 8)) {
		if (q >= 0 && !(c[4] & 0x80)) {
			p->src_qpn = q < 4 ? W.qp[q ^ 1]->qp_num : W.qp[4]->qp_num;
			p->slid = lid;
			memcpy(p->sgid, W.gid.raw, 16);
		}
		switch (c[3] & 3) {
		case 0: case 1: p->rkey = H.mr->rkey; break;
		case 2:         p->rkey = H.mr->rkey ^ (1u << (c[3] >> 6 << 3)); break;
		}
		switch ((c[3] >> 2) & 3) {
		case 0: case 1: p->qkey = 0x11111111; break;
		case 2:         p->qkey = 0x11111111 ^ (1u << (c[3] >> 4)); break;
		}
		switch ((c[3] >> 4) & 3) {
		case 0: case 1: p->raddr = (uintptr_t)H.mr->addr + p->raddr % MR_LEN; break;
		case 2:         p->raddr = (uintptr_t)H.mr->addr + MR_LEN - 1 - p->raddr % 64; break;
		}
		switch (c[4] & 3) {
		case 0: case 1: p->psn = 0; break;
		case 2:         p->psn = (uint32_t)((c[4] >> 2) - 16) & 0xffffff; break;
		}
	}
	e->rkey_ok = p->rkey == H.mr->rkey;
	e->psn_ok = (p->psn & DEV_PSN_MASK) == 0;	/* the bits above are not the PSN */
}

/* [lo, hi) of the region the packet may have written, besides the receives */
static void check_region(const struct dev_pkt *p, const struct expect *e, int checked)
{
	uint64_t base = (uintptr_t)H.mr->addr, lo = 0, hi = 0;
	int dropped, writes = p->op == DOP_WRITE || p->op == DOP_WRITE_IMM ||
			      (p->op >= DOP_CS && p->op <= DOP_MFA);

	if (!checked)
		return;
	dropped = e->mcast || !e->addr_ok || e->qp < 0 || !e->tp_ok ||
		  (qp_type[e->qp] == IBV_QPT_RC && !e->psn_ok);
	if (!dropped && e->rkey_ok && writes && p->raddr >= base && p->raddr < base + MR_LEN) {
		uint64_t n = p->op >= DOP_CS ? 8 : p->dma_len;

		if (p->offset + (uint64_t)p->len > n)
			n = p->offset + (uint64_t)p->len;
		lo = p->raddr - base;
		hi = n > MR_LEN - lo ? MR_LEN : lo + n;
	}
	/*
	 * 64 bytes at a time by memcmp(), byte by byte only in a block that
	 * changed: a loop of 64 Ki compares took most of this target's time
	 * (the fuzzing build counts each).
	 */
	for (size_t i = 0; i < MR_LEN; i++) {
		if (!(i % 64) && !memcmp(H.mem + GUARD_LEN + i, W.before + i, 64)) {
			i += 63;
			continue;
		}
		if (H.mem[GUARD_LEN + i] == W.before[i] || (i >= lo && i < hi) ||
		    (!dropped && i >= RECV_OFF && i < RECV_OFF + NRECV * 1024))
			continue;
		fprintf(stderr, "wire_packet: region byte %#zx: %#x -> %#x (op %u, tp %u, dst %#x,"
			" psn %#x, raddr %#" PRIx64 ", len %u)\n", i, W.before[i], H.mem[GUARD_LEN + i], p->op, p->tp, p->dst_qpn, p->psn,
			(uint64_t)(p->raddr - base), p->len);
		CHECK(!dropped);
		CHECK(i >= RECV_OFF && i < RECV_OFF + NRECV * 1024);
	}
}

/* Completions since the bring-up: how many. */
static int reap_count(void)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = ibv_poll_cq(H.cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++)
			CHECK(wc[i].status <= IBV_WC_TM_RNDV_INCOMPLETE);
		total += n;
	}
	CHECK(n == 0);
	return total;
}

/*
 * Seeds: one well-formed request per kind to the RC responder (SEND,
 * WRITE, READ, fetch-and-add), a UC SEND and a UD SEND, each with the
 * check value; then an RC WRITE of the UC transport, to another LID, to
 * another DGID, a duplicate one, with another rkey, and a UD SEND to a
 * multicast LID; FUZZ_WRITE_SEEDS=DIR writes them (fuzz/README.md).
 */
static void write_seeds(const char *dir)
{
	static const struct {
		const char *name; uint8_t op; int qp; uint32_t len; uint8_t c[5];
	} k[] = {
		{ "rc-send", DOP_SEND, 1, 64, { 1 } }, { "rc-write", DOP_WRITE, 1, 128, { 1 } },
		{ "rc-read", DOP_READ, 1, 0, { 1 } }, { "rc-fadd", DOP_FA, 1, 0, { 1 } },
		{ "uc-send", DOP_SEND, 3, 32, { 3 } }, { "ud-send", DOP_SEND, 4, 48, { 4 } },
		{ "rc-write-uc-bth", DOP_WRITE, 1, 64, { 1, 3 | DTP_UC << 2 } },
		{ "rc-write-other-lid", DOP_WRITE, 1, 64, { 1, 0, 4 } },
		{ "rc-write-other-dgid", DOP_WRITE, 1, 64, { 1, 0, 5 } },
		{ "rc-write-duplicate", DOP_WRITE, 1, 64, { 1, 0, 0, 0, 2 } },
		{ "rc-write-other-rkey", DOP_WRITE, 1, 64, { 1, 0, 0, 2 } },
		{ "ud-send-mcast-lid", DOP_SEND, 4, 48, { 5, 0, 6 } },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		size_t n = sizeof(struct dev_pkt) + k[i].len;
		struct dev_pkt *p = calloc(1, n);
		uint8_t hdr[HDR] = { 0 };
		struct expect e;
		char path[512];
		FILE *f;

		CHECK(p);
		memcpy(hdr + 1, k[i].c, 5);
		p->size = (uint32_t)n;
		p->op = k[i].op;
		p->flags = DPKT_FIRST | DPKT_LAST | DPKT_CRC;
		p->dma_len = k[i].op == DOP_FA ? 8 : k[i].op == DOP_READ ? 256 : k[i].len;
		p->len = k[i].len;
		p->raddr = 0x100;
		p->atomic[0] = 1;
		memset(p->payload, 0xab, k[i].len);
		choose(p, 0, hdr + 1, &e);
		p->crc = check_value(p);
		snprintf(path, sizeof(path), "%s/%s", dir, k[i].name);
		f = fopen(path, "w");
		CHECK(f);
		fwrite(hdr, 1, HDR, f);
		fwrite(p, 1, n, f);
		fclose(f);
		free(p);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	harness_init(setup, write_seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[64 * 1024] __attribute__((aligned(8)));
	struct dev_pkt *p = (struct dev_pkt *)buf;
	struct rfemu_dev_stats s0, s1;
	struct expect e = { .qp = -1 };
	uint8_t flags;
	int framed, checked = 0;
	uint64_t before, t0;

	if (size < HDR || size - HDR > sizeof(buf))
		return -1;
	flags = data[0];
	size -= HDR;
	memcpy(buf, data + HDR, size);
	if (size >= sizeof(*p)) {
		if (!(flags & 1)) {
			p->size = (uint32_t)size;
			p->len = (uint32_t)(size - sizeof(*p));
		}
		choose(p, flags, data + 1, &e);
		if (!(flags & 4) && (p->flags & DPKT_CRC) && p->size == size &&
		    p->len == size - sizeof(*p))
			p->crc = check_value(p);
	}
	framed = size >= sizeof(*p) && p->size == size && p->len == size - sizeof(*p);
	/* what is checked: framed, a right check value, the header's choices */
	checked = framed && !(flags & 0x0f) && (p->crc == check_value(p) || !(p->flags & DPKT_CRC));

	memcpy(W.before, H.mem + GUARD_LEN, MR_LEN);
	s0 = stats();
	before = s0.pkts_rx + s0.drop_fault;
	if (send(W.fd, buf, size, MSG_NOSIGNAL) != (ssize_t)size) {
		peer_connect();
		CHECK(send(W.fd, buf, size, MSG_NOSIGNAL) == (ssize_t)size);
	}
	if (size == 0)
		peer_connect();
	/* and what the packet caused: responses, CQEs */
	t0 = harness_now_ns();
	if (framed)
		harness_settle(pkt_taken, &before, 1000000000u);
	else
		harness_settle(bytes_taken, NULL, 2000000u);
	s1 = stats();
	if (checked) {
		int to_mcast_qpn = p->dst_qpn == DEV_MCAST_QPN;
		int mcast_tp_ok = p->tp == DTP_UD && !(p->flags & DPKT_DCETH);

		if (s1.pkts_rx <= s0.pkts_rx)
			fprintf(stderr, "wire_packet: a checked packet of %zu bytes not received"
				" in %" PRIu64 " us (ICRC drops %" PRIu64 " -> %" PRIu64 ")\n",
				size, (harness_now_ns() - t0) / 1000, s0.drop_fault, s1.drop_fault);
		CHECK(s1.pkts_rx > s0.pkts_rx);	/* it, and what it caused */
		if (e.mcast || to_mcast_qpn || e.qp < 0 || !e.addr_ok || !e.tp_ok)
			CHECK(reap_count() == 0);
		if (e.mcast)
			CHECK(s1.drop_transport - s0.drop_transport ==
			      (uint64_t)(to_mcast_qpn && !mcast_tp_ok));
		else if (e.qp >= 0 && !e.addr_ok)
			CHECK(s1.drop_address == s0.drop_address + 1 &&
			      s1.drop_transport == s0.drop_transport);
		else if (e.qp >= 0 && !e.tp_ok)
			CHECK(s1.drop_transport == s0.drop_transport + 1 &&
			      s1.drop_address == s0.drop_address);
		else if (e.qp < 0)
			CHECK(s1.drop_transport == s0.drop_transport &&
			      s1.drop_address == s0.drop_address);
	}
	check_region(p, &e, checked);
	harness_reap();
	harness_check_guards();
	reset_all();
	return 0;
}
