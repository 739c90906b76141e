/*
 * Open MPI counterpart of Fleet4J's allreduce_perf: times MPI_Allreduce (float, sum), MPI_Bcast, MPI_Allgather
 * or MPI_Reduce_scatter_block with the same method (calibrated iteration count, median of repeats, slowest rank)
 * and prints the same columns.
 * Build: mpicc -O2 -o mpi_allreduce_perf mpi_allreduce_perf.c
 * Run:   mpirun -np 2 ./mpi_allreduce_perf --sizes 4K,64K,1M,16M,64M [--op allreduce] [--repeats 5] [--ms_per_size 400]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

static long parse_size(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    switch (toupper((unsigned char)*end)) {
        case 'K': v <<= 10; break;
        case 'M': v <<= 20; break;
        case 'G': v <<= 30; break;
        default: break;
    }
    return v;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *op = "allreduce";
static float *a, *b;
static int rank, n;

static void once(long count) {
    long share = count / n;
    if (!strcmp(op, "allreduce")) {
        MPI_Allreduce(MPI_IN_PLACE, a, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(op, "broadcast")) {
        MPI_Bcast(a, (int)count, MPI_FLOAT, 0, MPI_COMM_WORLD);
    } else if (!strcmp(op, "allgather")) {
        MPI_Allgather(a + rank * share, (int)share, MPI_FLOAT, b, (int)share, MPI_FLOAT, MPI_COMM_WORLD);
    } else {
        MPI_Reduce_scatter_block(a, b, (int)share, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char sizes_arg[256] = "4K,64K,1M,16M,64M";
    int repeats = 5;
    double ms_per_size = 400;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes")) { strncpy(sizes_arg, argv[i + 1], sizeof sizes_arg - 1); }
        else if (!strcmp(argv[i], "--op")) { op = argv[i + 1]; }
        else if (!strcmp(argv[i], "--repeats")) { repeats = atoi(argv[i + 1]); }
        else if (!strcmp(argv[i], "--ms_per_size")) { ms_per_size = atof(argv[i + 1]); }
        else { if (rank == 0) fprintf(stderr, "unknown argument %s\n", argv[i]); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
    double factor = !strcmp(op, "allreduce") ? 2.0 * (n - 1) / n : !strcmp(op, "broadcast") ? 1.0 : (n - 1) / (double)n;
    if (rank == 0) {
        printf("# mpi_allreduce_perf: %s, %d ranks, float sum, median of %d repeats\n", op, n, repeats);
        printf("%12s %12s %12s %10s %10s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    }
    char *tok = strtok(sizes_arg, ",");
    while (tok) {
        long bytes = parse_size(tok);
        long count = bytes / 4;
        a = aligned_alloc(4096, (size_t)bytes + 4096);
        b = aligned_alloc(4096, (size_t)bytes + 4096);
        for (long i = 0; i < count; i++) a[i] = 1.0f;
        for (int i = 0; i < 5; i++) once(count);
        long probe = 1, iters;
        while (1) {
            double t0 = MPI_Wtime();
            for (long i = 0; i < probe; i++) once(count);
            double el = MPI_Wtime() - t0;
            MPI_Bcast(&el, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (el >= ms_per_size / 1e4 || probe >= 100000) {
                iters = (long)(probe * (ms_per_size / 1e3) / (el > 0 ? el : 1e-9));
                if (iters < 3) iters = 3;
                break;
            }
            probe *= 2;
        }
        double *times = malloc(sizeof(double) * repeats);
        for (int r = 0; r < repeats; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < iters; i++) once(count);
            double us = (MPI_Wtime() - t0) * 1e6 / iters, slowest;
            MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            times[r] = slowest;
        }
        qsort(times, repeats, sizeof(double), cmp);
        double us = times[repeats / 2];
        double algbw = bytes / us / 1e3;
        if (rank == 0) printf("%12ld %12ld %12.2f %10.3f %10.3f\n", bytes, count, us, algbw, algbw * factor);
        free(times);
        free(a);
        free(b);
        tok = strtok(NULL, ",");
    }
    MPI_Finalize();
    return 0;
}
