package org.fleet4j.collective;

import java.time.Duration;
import java.util.Objects;

/**
 * Per-group settings.
 *
 * @param backend      transport; AUTO chooses by locality
 * @param timeout      how long any operation may wait for peers before it fails naming them
 * @param verifyCalls  compare each call's fingerprint (kind, dtype, count, op, root) across ranks; costs a few
 *                     word compares per chunk, so it is on by default
 * @param shmSlotBytes bytes of shared memory per rank used as one pipeline stage of the shm backend
 * @param tcpChunkBytes bytes per TCP frame; smaller chunks pipeline better, larger ones cost fewer wakeups
 */
public record GroupOptions(Backend backend, Duration timeout, boolean verifyCalls, int shmSlotBytes, int tcpChunkBytes) {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(3);

    public GroupOptions {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("group timeout must be positive, got " + timeout);
        }
        if (shmSlotBytes < 4096 || shmSlotBytes % 4096 != 0) {
            throw new IllegalArgumentException("shmSlotBytes must be a positive multiple of 4096, got " + shmSlotBytes);
        }
        if (tcpChunkBytes < 1024) {
            throw new IllegalArgumentException("tcpChunkBytes must be at least 1024, got " + tcpChunkBytes);
        }
    }

    public static GroupOptions defaults() {
        return new GroupOptions(Backend.AUTO, DEFAULT_TIMEOUT, true, 1 << 20, 256 << 10);
    }

    public GroupOptions withBackend(Backend b) {
        return new GroupOptions(b, timeout, verifyCalls, shmSlotBytes, tcpChunkBytes);
    }

    public GroupOptions withTimeout(Duration t) {
        return new GroupOptions(backend, t, verifyCalls, shmSlotBytes, tcpChunkBytes);
    }

    public GroupOptions withVerifyCalls(boolean v) {
        return new GroupOptions(backend, timeout, v, shmSlotBytes, tcpChunkBytes);
    }

    public GroupOptions withShmSlotBytes(int bytes) {
        return new GroupOptions(backend, timeout, verifyCalls, bytes, tcpChunkBytes);
    }

    public GroupOptions withTcpChunkBytes(int bytes) {
        return new GroupOptions(backend, timeout, verifyCalls, shmSlotBytes, bytes);
    }
}
