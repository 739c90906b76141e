package org.fleet4j.pserver.grpcpp;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one end of grpc++ copied on the way between the socket and a table or a worker's buffer, apart from the one
 * copy every pull makes (rows into the reply, and out of it): bytes that went through the Java heap (a caller's
 * heap buffer, a received body not in direct memory: zero on the off-heap path), bytes gathered off-heap to route
 * a request over several network threads, and received bodies that arrived over several socket reads and were put
 * together, off-heap, into one buffer (a table reads a body as one piece of memory; a body that came in one read is
 * used where it lies).
 */
final class CopyCount {
    private final LongAdder heapBytes = new LongAdder();
    private final LongAdder gatheredBytes = new LongAdder();
    private final LongAdder reassembledBytes = new LongAdder();
    private final LongAdder receivedBodyBytes = new LongAdder();

    void heap(long bytes) {
        heapBytes.add(bytes);
    }

    void gathered(long bytes) {
        gatheredBytes.add(bytes);
    }

    /** A received body of {@code bytes}; {@code reassembled} when it came over several reads and was copied together. */
    void received(long bytes, boolean reassembled) {
        receivedBodyBytes.add(bytes);
        if (reassembled) {
            reassembledBytes.add(bytes);
        }
    }

    long reassembledBytes() {
        return reassembledBytes.sum();
    }

    long receivedBodyBytes() {
        return receivedBodyBytes.sum();
    }

    long heapBytes() {
        return heapBytes.sum();
    }

    long gatheredBytes() {
        return gatheredBytes.sum();
    }
}
