package org.fleet4j.pserver.grpcpp;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one end of grpc++ copied on the way between the socket and a table or a worker's buffer, apart from the one
 * copy every pull makes (rows into the reply, and out of it): bytes that went through the Java heap (a caller's
 * heap buffer, a received body not in direct memory: zero on the off-heap path) and bytes gathered off-heap to route
 * a request over several network threads.
 */
final class CopyCount {
    private final LongAdder heapBytes = new LongAdder();
    private final LongAdder gatheredBytes = new LongAdder();

    void heap(long bytes) {
        heapBytes.add(bytes);
    }

    void gathered(long bytes) {
        gatheredBytes.add(bytes);
    }

    long heapBytes() {
        return heapBytes.sum();
    }

    long gatheredBytes() {
        return gatheredBytes.sum();
    }
}
