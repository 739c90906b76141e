/*
 * One core's memcpy bandwidth on a buffer of the given size (default 64 MiB): the limit a shared-memory
 * collective is measured against. Prints the median of 9 runs in GB/s (10^9 bytes per second).
 * Build: cc -O2 -o memcpy_bw memcpy_bw.c      Run: ./memcpy_bw [bytes]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : (64u << 20);
    char *a = aligned_alloc(4096, bytes), *b = aligned_alloc(4096, bytes);
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    double gbps[9];
    for (int r = 0; r < 9; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        memcpy(b, a, bytes);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        gbps[r] = bytes / s / 1e9;
        a[r] = b[bytes - 1 - r];
    }
    qsort(gbps, 9, sizeof(double), cmp);
    printf("memcpy %zu bytes, one core: %.3f GB/s (median of 9)\n", bytes, gbps[4]);
    return 0;
}
