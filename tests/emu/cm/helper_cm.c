/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * helper_cm.c - another emulated host for test_hosts.c: listens on a port
 * with librdmacm and, after printing "ready", behaves as told:
 *
 *   helper_cm PORT accept       accept, wait for the peer's DISCONNECTED, exit 0
 *   helper_cm PORT reject       reject with private data "busy", exit 0
 *   helper_cm PORT die-request  exit at once when the CONNECT_REQUEST comes
 *   helper_cm PORT die-connected  exit once ESTABLISHED, without disconnecting
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_cm_event *next(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev)) {
		perror("rdma_get_cm_event");
		exit(2);
	}
	if (ev->event != t) {
		fprintf(stderr, "helper_cm: got %s, wanted %s\n",
			rdma_event_str(ev->event), rdma_event_str(t));
		exit(3);
	}
	return ev;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_conn_param cp = { .rnr_retry_count = 7 };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l, *id;
	const char *mode;

	if (argc != 3)
		return 1;
	mode = argv[2];
	sin.sin_port = htons((uint16_t)atoi(argv[1]));
	if (!(ch = rdma_create_event_channel()) ||
	    rdma_create_id(ch, &l, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l, (struct sockaddr *)&sin) || rdma_listen(l, 4)) {
		perror("helper_cm: listen");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	ev = next(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	if (!strcmp(mode, "die-request"))
		_exit(0);
	if (!strcmp(mode, "reject")) {
		rdma_reject(id, "busy", 5);
		rdma_ack_cm_event(ev);
		return 0;
	}
	if (rdma_create_qp(id, NULL, &qa) || rdma_accept(id, &cp)) {
		perror("helper_cm: accept");
		return 2;
	}
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(next(ch, RDMA_CM_EVENT_ESTABLISHED));
	if (!strcmp(mode, "die-connected"))
		_exit(0);
	rdma_ack_cm_event(next(ch, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
	return 0;
}
