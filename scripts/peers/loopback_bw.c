/*
 * Loopback TCP bandwidth of one connection, the limit a parameter-server transport on one host is measured against:
 * a child process connects to 127.0.0.1 and writes TOTAL bytes in CHUNK-byte writes, the parent reads them into one
 * reused buffer (no copy beyond the kernel's). Prints the median of 5 transfers in GB/s (10^9 bytes per second),
 * counting one direction's bytes. Build: cc -O2 -o loopback_bw loopback_bw.c   Run: ./loopback_bw [total] [chunk]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void send_all(int fd, const char *buf, size_t chunk, size_t total) {
    for (size_t sent = 0; sent < total;) {
        size_t want = total - sent < chunk ? total - sent : chunk;
        ssize_t n = write(fd, buf, want);
        if (n <= 0) die("write");
        sent += (size_t)n;
    }
}

int main(int argc, char **argv) {
    size_t total = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 30;
    size_t chunk = argc > 2 ? strtoull(argv[2], NULL, 10) : (size_t)1 << 20;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = 0};
    socklen_t len = sizeof addr;
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 1)
        || getsockname(listener, (struct sockaddr *)&addr, &len)) die("listen");
    char *buf = malloc(chunk);
    memset(buf, 7, chunk);
    double gbps[RUNS];
    for (int r = 0; r < RUNS; r++) {
        pid_t child = fork();
        if (child < 0) die("fork");
        if (child == 0) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) die("connect");
            send_all(fd, buf, chunk, total);
            close(fd);
            _exit(0);
        }
        int fd = accept(listener, NULL, NULL);
        if (fd < 0) die("accept");
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        size_t got = 0;
        for (ssize_t n; (n = read(fd, buf, chunk)) > 0;) got += (size_t)n;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        close(fd);
        waitpid(child, NULL, 0);
        if (got != total) {
            fprintf(stderr, "loopback_bw: read %zu of %zu bytes\n", got, total);
            return 1;
        }
        double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
        gbps[r] = total / s / 1e9;
    }
    qsort(gbps, RUNS, sizeof gbps[0], cmp);
    printf("loopback_bw: %zu bytes in %zu-byte writes, median of %d: %.3f GB/s (min %.3f, max %.3f)\n", total,
           chunk, RUNS, gbps[RUNS / 2], gbps[0], gbps[RUNS - 1]);
    return 0;
}
