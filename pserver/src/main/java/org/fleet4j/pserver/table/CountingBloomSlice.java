package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * One stripe's part of a table's counting Bloom filter ({@link RowAdmission.CountingBloom}): 8-bit saturating
 * counters off-heap, touched only by the stripe's owner. An id's {@code k} counters come from double hashing of two
 * hashes of the id that neither the server nor the stripe choice uses, so they spread over the whole slice.
 */
final class CountingBloomSlice {
    private static final long SALT_A = 0xC2B2AE3D27D4EB4FL;
    private static final long SALT_B = 0x165667B19E3779F9L;

    private final MemorySegment counters;
    private final long length;
    private final int hashes;

    CountingBloomSlice(long length, int hashes, String table) {
        this.length = length;
        this.hashes = hashes;
        this.counters = OffHeapMemory.allocate(length, 64, () -> "counting Bloom filter of sparse table " + table);
    }

    long length() {
        return length;
    }

    int hashes() {
        return hashes;
    }

    MemorySegment counters() {
        return counters;
    }

    /** Counts one more sighting of {@code id} and returns its count now: the least of its counters. */
    int sight(long id) {
        long a = KeyHash.mix(id ^ SALT_A);
        long b = KeyHash.mix(id ^ SALT_B) | 1;
        int least = 255;
        for (int i = 0; i < hashes; i++) {
            long at = Math.unsignedMultiplyHigh(a + i * b, length);
            int c = Byte.toUnsignedInt(counters.get(ValueLayout.JAVA_BYTE, at));
            if (c < 255) {
                c++;
                counters.set(ValueLayout.JAVA_BYTE, at, (byte) c);
            }
            least = Math.min(least, c);
        }
        return least;
    }
}
