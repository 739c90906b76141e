/*
 * Core-to-core latency of this machine, without Fleet4J or any library: two threads pinned to CPUs A and B
 * bounce one cache line (a ping-pong counter) N times; prints the mean one-way latency in nanoseconds.
 * Used to tell a slow collective of ours from a slow path between the two (virtual) CPUs themselves
 * (docs/performance/collectives.md, "Run-to-run spread: the host's slow mode").
 * Build: cc -O2 -pthread -o core_to_core_latency core_to_core_latency.c
 * Run:   ./core_to_core_latency [CPU_A=0] [CPU_B=1] [ROUND_TRIPS=200000]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(128) _Atomic long line;
static long trips;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "cannot pin to CPU %d\n", cpu);
        exit(1);
    }
}

static void *pong(void *arg) {
    pin(*(int *) arg);
    for (long i = 0; i < trips; i++) {
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int a = argc > 1 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
    trips = argc > 3 ? atol(argv[3]) : 200000;
    pthread_t t;
    pthread_create(&t, NULL, pong, &b);
    pin(a);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < trips; i++) {
        atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(t, NULL);
    double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
    printf("CPU %d <-> CPU %d: %.1f ns one way (%ld round trips)\n", a, b, ns / trips / 2, trips);
    return 0;
}
