package org.fleet4j.pserver.grpcpp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * One large direct buffer a connection keeps for its next large frame (a received body, a reply of rows). Netty's
 * pool serves buffers only up to its chunk size (4 MiB); anything larger, such as a fused step's 5.7 MB of dense
 * tensors, is a fresh allocation each time, zeroed by the JDK and faulted in page by page by the kernel, then freed
 * again, which in a fused dense {@code ps_perf} profile cost more than the dense update rule itself
 * (docs/performance/pserver.md). A connection's large frames come one after another, so the buffer is lent out
 * again as soon as its last user has released it ({@link ByteBuf#refCnt()} back to the one count this keeps);
 * while a user still holds it (an asynchronous table update, a write not yet on the wire) a frame gets a buffer of
 * its own, so memory in use is never written over. Used on the connection's event loop only.
 */
final class KeptBuffer {
    /** Below this Netty's pool serves a buffer without zeroing or a system call. */
    static final int MIN_BYTES = 1 << 20;
    /** Above this a frame gets a buffer of its own, not kept: one huge frame must not pin its memory for good. */
    static final int MAX_BYTES = 64 << 20;
    /** Kept buffers grow in steps of this, so frames of slightly different sizes share one. */
    private static final int GRAIN = 1 << 20;

    private final CopyCount counts;
    private ByteBuf kept;

    /** A kept buffer whose lending again is counted in {@code counts}. */
    KeptBuffer(CopyCount counts) {
        this.counts = counts;
    }

    /**
     * A direct buffer of exactly {@code bytes} capacity, empty, that the caller releases once: the kept buffer when
     * nobody else holds it and it is large enough, otherwise a new one (kept in place of the old when it is in the
     * kept range and the old one is too small or still in use).
     */
    ByteBuf take(ByteBufAllocator alloc, int bytes) {
        if (bytes < MIN_BYTES || bytes > MAX_BYTES) {
            return alloc.directBuffer(bytes, bytes);
        }
        if (kept == null || kept.refCnt() != 1 || kept.capacity() < bytes) {
            if (kept != null) {
                kept.release();
            }
            int size = (bytes + GRAIN - 1) / GRAIN * GRAIN; // at most MAX_BYTES, a multiple of GRAIN
            kept = alloc.directBuffer(size, size);
        } else {
            counts.keptAgain(bytes);
        }
        return kept.retainedSlice(0, bytes).clear();
    }

    /** Gives the kept buffer up; a user still holding it frees it with its own release. */
    void release() {
        if (kept != null) {
            kept.release();
            kept = null;
        }
    }
}
