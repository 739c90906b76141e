/*
 * Open MPI counterpart of OpLatency.java for tcp_op_latency.sh: single MPI_Allreduce calls (float, sum), each
 * timed on its own after 1.5 s of warm-up per size; rank 0 prints the 10th, 25th and 50th percentile.
 * Build: mpicc -O2 -o mpi_op_latency mpi_op_latency.c
 * Run:   mpirun --mca btl tcp,self -np 2 ./mpi_op_latency SIZES_IN_BYTES OPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: mpi_op_latency SIZES_IN_BYTES OPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int ops = atoi(argv[2]);
    double *us = malloc(ops * sizeof(double));
    for (char *tok = strtok(argv[1], ","); tok; tok = strtok(NULL, ",")) {
        long bytes = atol(tok), count = bytes / 4;
        float *a = aligned_alloc(4096, (size_t)bytes + 4096);
        for (long i = 0; i < count; i++) a[i] = 1.0f;
        double warm_until = MPI_Wtime() + 1.5;
        int done = 0;
        while (!done) { /* rank 0's clock ends the warm-up, so that every rank runs the same operations */
            for (int i = 0; i < 50; i++) MPI_Allreduce(MPI_IN_PLACE, a, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            done = rank == 0 && MPI_Wtime() > warm_until;
            MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        }
        for (int i = 0; i < ops; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(MPI_IN_PLACE, a, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            us[i] = (MPI_Wtime() - t0) * 1e6;
        }
        qsort(us, ops, sizeof(double), cmp);
        if (rank == 0) printf("latency %ld p10 %.1f p25 %.1f p50 %.1f\n", bytes, us[ops / 10], us[ops / 4], us[ops / 2]);
        free(a);
    }
    free(us);
    MPI_Finalize();
    return 0;
}
