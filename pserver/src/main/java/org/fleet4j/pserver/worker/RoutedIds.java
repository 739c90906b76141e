package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.pserver.table.KeyHash;

/**
 * One sparse call's ids (and, for a push, rows) split by the server that holds them ({@link KeyHash#serverOf}), with
 * each one's position in the caller's request. The buffers only grow and are reused call after call, so a worker in
 * its steady state allocates nothing to route; one call uses it at a time.
 */
final class RoutedIds {
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final long ALIGNMENT = 64;

    private final int servers;
    private final int[] count;
    private final int[] filled;
    private final int[][] positions;
    private final MemorySegment[] ids;
    private final MemorySegment[] rows;
    private int[] owner = new int[0];

    RoutedIds(int servers) {
        this.servers = servers;
        count = new int[servers];
        filled = new int[servers];
        positions = new int[servers][0];
        ids = new MemorySegment[servers];
        rows = new MemorySegment[servers];
        for (int s = 0; s < servers; s++) {
            ids[s] = MemorySegment.NULL;
            rows[s] = MemorySegment.NULL;
        }
    }

    /** Splits {@code n} ids of {@code idsIn} by server; with {@code rowsIn} (n x dim floats) their rows too. */
    void route(MemorySegment idsIn, int n, int dim, MemorySegment rowsIn) {
        if (owner.length < n) {
            owner = new int[grown(owner.length, n)];
        }
        Arrays.fill(count, 0);
        for (int i = 0; i < n; i++) {
            int s = KeyHash.serverOf(idsIn.getAtIndex(ID, i), servers);
            owner[i] = s;
            count[s]++;
        }
        long rowBytes = (long) dim * Float.BYTES;
        for (int s = 0; s < servers; s++) {
            reserve(s, count[s], rowBytes);
            filled[s] = 0;
        }
        for (int i = 0; i < n; i++) {
            int s = owner[i];
            int at = filled[s]++;
            ids[s].setAtIndex(ID, at, idsIn.getAtIndex(ID, i));
            positions[s][at] = i;
            if (rowsIn != null) {
                MemorySegment.copy(rowsIn, i * rowBytes, rows[s], at * rowBytes, rowBytes);
            }
        }
    }

    int count(int server) {
        return count[server];
    }

    MemorySegment ids(int server) {
        return ids[server].asSlice(0, (long) count[server] * Long.BYTES);
    }

    MemorySegment rows(int server, int dim) {
        return rows[server].asSlice(0, (long) count[server] * dim * Float.BYTES);
    }

    /** Copies the rows each server returned into {@code out} at their ids' positions in the request. */
    void scatter(int dim, MemorySegment out) {
        long rowBytes = (long) dim * Float.BYTES;
        for (int s = 0; s < servers; s++) {
            for (int k = 0; k < count[s]; k++) {
                MemorySegment.copy(rows[s], k * rowBytes, out, positions[s][k] * rowBytes, rowBytes);
            }
        }
    }

    private void reserve(int s, int n, long rowBytes) {
        if (positions[s].length < n) {
            int capacity = grown(positions[s].length, n);
            positions[s] = new int[capacity];
            ids[s] = OffHeapMemory.allocate((long) capacity * Long.BYTES, ALIGNMENT,
                    () -> "the ids routed to parameter server " + s);
        }
        if (rows[s].byteSize() < n * rowBytes) {
            rows[s] = OffHeapMemory.allocate(Math.max(n * rowBytes, 2 * rows[s].byteSize()), ALIGNMENT,
                    () -> "the rows routed to parameter server " + s);
        }
    }

    /** A capacity of at least {@code need} that at least doubles {@code have}, so a growing batch reallocates rarely. */
    private static int grown(int have, int need) {
        return (int) Math.min(Integer.MAX_VALUE - 8, Math.max(need, Math.max(64L, 2L * have)));
    }
}
