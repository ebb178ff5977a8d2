// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Tagged messages between ranks 0 and 1, every byte checked (bench/clients.sh,
 * make bench-clients, run with UCX's tag matching offload on:
 * UCX_RC_MLX5_TM_ENABLE=y). For each size, rank 0 sends NTAG messages of
 * distinct tags twice:
 *
 *   expected    rank 1 has posted their receives first, in the reverse
 *               order of the sends, so that each matches by its tag and
 *               not by its place (UCX posts a receive of 1024 bytes or
 *               more to the device's tag list);
 *   unexpected  rank 0 sends first; rank 1 posts the receives, reversed,
 *               after a barrier, so the messages came with no receive
 *               posted (eager ones wait in UCX's unexpected queue,
 *               rendezvous requests until the receive is posted).
 *
 * The sizes span UCX's eager short, bcopy and zcopy messages and its
 * rendezvous protocol (the device's, for a receive on the tag list). Rank
 * 1 prints one line and exits non-zero if any message was wrong:
 *
 *     mpi_tags: 96 messages checked, 0 bad
 *
 * Usage: mpirun -np 2 mpi_tags
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTAG 8

static const int sizes[] = { 8, 1500, 4096, 16384, 65536, 1 << 20 };

static unsigned char pattern(int size, int tag, int round, int i)
{
	return (unsigned char)(size * 3 + tag * 29 + round * 101 + i * 7 + 1);
}

int main(int argc, char **argv)
{
	int rank, nranks, bad = 0, checked = 0;
	unsigned char *buf[NTAG];
	MPI_Request req[NTAG];
	const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
	const int max = sizes[nsizes - 1];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_tags: 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	for (int t = 0; t < NTAG; t++) {
		buf[t] = malloc((size_t)max);
		if (!buf[t]) {
			fprintf(stderr, "mpi_tags: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	for (int s = 0; s < nsizes; s++) {
		int size = sizes[s];

		for (int round = 0; round < 2; round++) {
			int expected = round == 0;

			if (rank == 0) {
				if (expected)
					MPI_Barrier(MPI_COMM_WORLD);
				for (int t = 0; t < NTAG; t++) {
					for (int i = 0; i < size; i++)
						buf[t][i] = pattern(size, t, round, i);
					MPI_Isend(buf[t], size, MPI_BYTE, 1, 100 + t, MPI_COMM_WORLD,
						  &req[t]);
				}
				if (!expected)
					MPI_Barrier(MPI_COMM_WORLD);
				MPI_Waitall(NTAG, req, MPI_STATUSES_IGNORE);
			} else {
				if (!expected)
					MPI_Barrier(MPI_COMM_WORLD);
				for (int t = NTAG - 1; t >= 0; t--) {
					memset(buf[t], 0, (size_t)size);
					MPI_Irecv(buf[t], size, MPI_BYTE, 0, 100 + t, MPI_COMM_WORLD,
						  &req[t]);
				}
				if (expected)
					MPI_Barrier(MPI_COMM_WORLD);
				for (int t = 0; t < NTAG; t++) {
					MPI_Status st;
					int n = -1, wrong = 0;

					MPI_Wait(&req[t], &st);
					MPI_Get_count(&st, MPI_BYTE, &n);
					for (int i = 0; i < size && !wrong; i++)
						wrong = buf[t][i] != pattern(size, t, round, i);
					if (n != size || st.MPI_TAG != 100 + t || wrong) {
						if (bad++ < 8)
							fprintf(stderr, "mpi_tags: %s %d bytes, tag %d: "
								"count %d, tag %d%s\n",
								expected ? "expected" : "unexpected",
								size, 100 + t, n, st.MPI_TAG,
								wrong ? ", wrong data" : "");
					}
					checked++;
				}
			}
		}
	}
	if (rank == 1)
		printf("mpi_tags: %d messages checked, %d bad\n", checked, bad);
	for (int t = 0; t < NTAG; t++)
		free(buf[t]);
	MPI_Finalize();
	return bad ? 1 : 0;
}
