// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * An MPI ping-pong between ranks 0 and 1 (bench/clients.sh, make
 * bench-clients): SIZE bytes (8) each way, WARMUP round trips (200), then
 * ITERS (2000) timed one at a time. Rank 0 prints the median one-way
 * latency in microseconds (half the median round trip):
 *
 *     mpi_pingpong: 8 bytes 2000 iterations median_us 12.345 p99_us 45.678
 *
 * Usage: mpirun -np 2 mpi_pingpong [ITERS [WARMUP [SIZE]]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank, size, iters = 2000, warmup = 200, bytes = 8;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		iters = atoi(argv[1]);
	if (argc > 2)
		warmup = atoi(argv[2]);
	if (argc > 3)
		bytes = atoi(argv[3]);
	if (size != 2 || iters < 1 || warmup < 0 || bytes < 1) {
		if (rank == 0)
			fprintf(stderr, "mpi_pingpong: 2 ranks, ITERS >= 1, WARMUP >= 0, SIZE >= 1\n");
		MPI_Finalize();
		return 2;
	}

	char *buf = calloc(1, (size_t)bytes);
	double *rtt = calloc((size_t)iters, sizeof(*rtt));
	if (!buf || !rtt) {
		fprintf(stderr, "mpi_pingpong: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int peer = 1 - rank;

	for (int i = -warmup; i < iters; i++) {
		double t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
		if (i >= 0)
			rtt[i] = MPI_Wtime() - t0;
	}

	if (rank == 0) {
		qsort(rtt, (size_t)iters, sizeof(*rtt), cmp_double);
		double med = rtt[iters / 2], p99 = rtt[(size_t)iters * 99 / 100];
		printf("mpi_pingpong: %d bytes %d iterations median_us %.3f p99_us %.3f\n",
		       bytes, iters, med / 2 * 1e6, p99 / 2 * 1e6);
	}
	free(rtt);
	free(buf);
	MPI_Finalize();
	return 0;
}
