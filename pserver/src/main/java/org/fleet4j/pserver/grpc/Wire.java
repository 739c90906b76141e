package org.fleet4j.pserver.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Tensors in and out of the protocol's {@code bytes} fields. The protocol is little-endian and the tables keep native
 * order, so both ends must be little-endian machines ({@link #requireLittleEndian}); then ids and floats go to the
 * wire straight from the caller's memory and come off it as views of the received bytes.
 */
final class Wire {
    private Wire() {
    }

    static void requireLittleEndian() {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new UnsupportedOperationException("the grpc parameter-server protocol is little-endian and this JVM"
                    + " runs " + ByteOrder.nativeOrder() + "; run servers and workers on little-endian machines");
        }
    }

    /**
     * The first {@code bytes} bytes of {@code segment}, without a copy where the segment is off-heap or a byte
     * array; valid while the caller keeps the segment unchanged (the blocking calls that use it do).
     */
    static ByteString view(MemorySegment segment, long bytes) {
        MemorySegment part = segment.asSlice(0, bytes);
        boolean wrappable = part.heapBase().map(base -> base instanceof byte[]).orElse(true);
        return wrappable ? UnsafeByteOperations.unsafeWrap(part.asByteBuffer())
                : UnsafeByteOperations.unsafeWrap(part.toArray(ValueLayout.JAVA_BYTE));
    }

    /** A read-only view of received bytes, without a copy when they arrived in one piece. */
    static MemorySegment view(ByteString bytes) {
        return MemorySegment.ofBuffer(bytes.asReadOnlyByteBuffer());
    }
}
