package org.fleet4j.pserver.grpcpp;

import java.util.concurrent.atomic.LongAdder;

/**
 * What one end of grpc++ copied on the way between the socket and a table or a worker's buffer, apart from the one
 * copy every pull makes (rows into the reply, and out of it): bytes that went through the Java heap (a caller's
 * heap buffer, a received body not in direct memory: zero on the off-heap path), bytes gathered off-heap to route
 * a request over several network threads, and the bytes of received bodies copied together, off-heap, into one
 * buffer (a table reads a body as one piece of memory: a body that came in one read is used where it lies; of one
 * spread over reads only what came with its header is copied, the later reads go straight into its buffer).
 * Also counted, though not copies: bodies read in place, and large frames given a connection's kept buffer again.
 */
final class CopyCount {
    private final LongAdder heapBytes = new LongAdder();
    private final LongAdder gatheredBytes = new LongAdder();
    private final LongAdder reassembledBytes = new LongAdder();
    private final LongAdder receivedBodyBytes = new LongAdder();
    private final LongAdder keptAgainBytes = new LongAdder();
    private final LongAdder readInPlaceBytes = new LongAdder();

    void heap(long bytes) {
        heapBytes.add(bytes);
    }

    void gathered(long bytes) {
        gatheredBytes.add(bytes);
    }

    /**
     * A received body of {@code bytes}, of which {@code copiedBytes} were copied into its buffer from reads that began
     * before it (the rest was used where it lay, or written there by the socket).
     */
    void received(long bytes, long copiedBytes) {
        receivedBodyBytes.add(bytes);
        reassembledBytes.add(copiedBytes);
    }

    /** {@code bytes} of a body the socket wrote into the body's own buffer ({@link InPlaceReads}). */
    void readInPlace(long bytes) {
        readInPlaceBytes.add(bytes);
    }

    long readInPlaceBytes() {
        return readInPlaceBytes.sum();
    }

    /** A large frame of {@code bytes} was given its connection's kept buffer again, not a new one ({@link KeptBuffer}). */
    void keptAgain(long bytes) {
        keptAgainBytes.add(bytes);
    }

    long keptAgainBytes() {
        return keptAgainBytes.sum();
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
