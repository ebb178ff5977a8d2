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
 * value when DPKT_CRC is set, the destination one of the host's QPs, at
 * its port's LID and of its transport), which a packet from a real peer
 * always is, so that the fuzzer spends its time in the transport and
 * responder; byte 0 says which of those fix-ups to skip. What must hold: no crash, no sanitizer report, no hang (the
 * harness waits for the engine through emu_lock), nothing written outside
 * the registered region (guard pattern around it), and every completion a
 * defined status. Requests that fail are dropped or NAKed; which, and
 * whether a forged source is refused, is issue 14's matter, not checked.
 *
 * Input: byte 0 flags (bit 0 raw size/len, bit 1 raw destination, bit 2 no
 * check value fix-up), byte 1 destination index, then the packet.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "device/device.h"
#include "emu_harness.h"

#define NQP       5	/* RC a->b, b, UC a->b, b, UD */
#define NRECV     16

/* beside the harness's device, PD, CQ and MR (H) */
static struct {
	struct ibv_qp *qp[NQP];
	int fd;			/* our connection to the host's wire socket */
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

static uint64_t pkts_seen(void)
{
	uint64_t n;

	emu_lock_acquire();
	n = dev_wire_stats.pkts_rx + dev_wire_stats.drop_fault;
	emu_lock_release();
	return n;
}

/* Wait until the engine has taken the packet (or, if it cannot count it, a while). */
static void settle(uint64_t before, int counted)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		dev_kick();
		if (pkts_seen() != before)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec >
		    (counted ? 1000000000L : 2000000L))
			break;
		usleep(50);
	}
	/* and what the packet caused: responses, CQEs */
	for (int i = 0; i < 2; i++) {
		dev_kick();
		emu_lock_acquire();
		emu_lock_release();
	}
}

static uint64_t check_value(const struct dev_pkt *p)
{
	return dev_hash(p, offsetof(struct dev_pkt, crc)) * 31 ^ dev_hash(p->payload, p->len);
}

/*
 * Connect to our own wire socket, as another host would. The host drops a
 * connection on an empty packet (read as end of file), so a failed send
 * reconnects.
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

/*
 * Seeds: one well-formed request per kind to the RC responder (SEND,
 * WRITE, READ, fetch-and-add), a UC SEND and a UD SEND, each with the
 * check value; FUZZ_WRITE_SEEDS=DIR writes them (fuzz/README.md).
 */
static void write_seeds(const char *dir)
{
	static const struct { const char *name; uint8_t op; int qp; uint32_t len; } k[] = {
		{ "rc-send", DOP_SEND, 1, 64 }, { "rc-write", DOP_WRITE, 1, 128 },
		{ "rc-read", DOP_READ, 1, 0 }, { "rc-fadd", DOP_FA, 1, 0 },
		{ "uc-send", DOP_SEND, 3, 32 }, { "ud-send", DOP_SEND, 4, 48 },
	};

	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		size_t n = sizeof(struct dev_pkt) + k[i].len;
		struct dev_pkt *p = calloc(1, n);
		uint8_t hdr[2] = { 0, (uint8_t)k[i].qp };
		char path[512];
		FILE *f;

		CHECK(p);
		p->size = (uint32_t)n;
		p->op = k[i].op;
		p->flags = DPKT_FIRST | DPKT_LAST | DPKT_CRC;
		p->src_qpn = k[i].qp == 4 ? W.qp[4]->qp_num : W.qp[k[i].qp - 1]->qp_num;
		p->dst_qpn = W.qp[k[i].qp]->qp_num;
		p->slid = H.lid;
		p->dlid = H.lid;
		p->tp = k[i].qp == 4 ? DTP_UD : k[i].qp == 3 ? DTP_UC : DTP_RC;
		p->qkey = 0x11111111;
		p->rkey = H.mr->rkey;
		p->raddr = (uintptr_t)H.mr->addr + 0x100;
		p->dma_len = k[i].op == DOP_FA ? 8 : k[i].op == DOP_READ ? 256 : k[i].len;
		p->len = k[i].len;
		p->atomic[0] = 1;
		memset(p->payload, 0xab, k[i].len);
		p->crc = check_value(p);
		snprintf(path, sizeof(path), "%s/%s", dir, k[i].name);
		f = fopen(path, "w");
		CHECK(f);
		fwrite(hdr, 1, 2, f);
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
	uint8_t flags, dst;
	uint64_t before;
	int framed;

	if (size < 2 || size - 2 > sizeof(buf))
		return -1;
	flags = data[0];
	dst = data[1];
	size -= 2;
	memcpy(buf, data + 2, size);
	if (size >= sizeof(*p)) {
		if (!(flags & 1)) {
			p->size = (uint32_t)size;
			p->len = (uint32_t)(size - sizeof(*p));
		}
		if (!(flags & 2)) {
			/* its port's address and its QP's transport, as a real peer's */
			p->dst_qpn = W.qp[dst % NQP]->qp_num;
			p->dlid = H.lid;
			p->tp = qp_type[dst % NQP] == IBV_QPT_UD ? DTP_UD :
				qp_type[dst % NQP] == IBV_QPT_UC ? DTP_UC : DTP_RC;
		}
		if (!(flags & 4) && (p->flags & DPKT_CRC) && p->size == size &&
		    p->len == size - sizeof(*p))
			p->crc = check_value(p);
	}
	framed = size >= sizeof(*p) && p->size == size && p->len == size - sizeof(*p);

	before = pkts_seen();
	if (send(W.fd, buf, size, MSG_NOSIGNAL) != (ssize_t)size) {
		peer_connect();
		CHECK(send(W.fd, buf, size, MSG_NOSIGNAL) == (ssize_t)size);
	}
	settle(before, framed);
	harness_reap();
	harness_check_guards();
	reset_all();
	return 0;
}
