package org.fleet4j.pserver.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.lang.foreign.Arena;
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

    /**
     * Received gradients where the servers' update rules read them at full speed: off-heap as they are, else (grpc
     * parses a message into byte arrays) copied to this thread's native scratch, valid until its next call here.
     * For calls that block until the table is done with them. The update rules' vector loads, given byte arrays
     * here and table rows off-heap at the same call sites, fall back from intrinsics to plain Java; one copy costs
     * less (the profile: docs/performance/pserver.md).
     */
    static MemorySegment gradients(ByteString bytes) {
        MemorySegment view = view(bytes);
        if (view.isNative()) {
            return view;
        }
        MemorySegment[] held = SCRATCH.get();
        long size = view.byteSize();
        if (held[0] == null || held[0].byteSize() < size) {
            long grown = held[0] == null ? 0 : 2 * held[0].byteSize();
            held[0] = Arena.ofAuto().allocate(Math.max(size, grown), 64);
        }
        MemorySegment out = held[0].asSlice(0, size);
        MemorySegment.copy(view, 0, out, 0, size);
        return out;
    }

    private static final ThreadLocal<MemorySegment[]> SCRATCH = ThreadLocal.withInitial(() -> new MemorySegment[1]);
}
