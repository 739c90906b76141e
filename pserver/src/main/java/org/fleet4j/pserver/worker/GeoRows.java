package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.fleet4j.core.ops.F32;
import org.fleet4j.pserver.table.LongIndex;
import org.fleet4j.pserver.table.ServerOptimizer;

/**
 * A geo worker's local copy of one sparse table: per row its record (value and the optimizer's state), its value at
 * the last exchange ("synced"), the window in which it was last fetched from the servers, and whether it was trained
 * since the last exchange. Rows live off-heap in chunks of {@value #CHUNK_ROWS}; ids find their row through a
 * {@link LongIndex} rebuilt twice as large when full. One thread at a time.
 */
final class GeoRows {
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final int CHUNK_ROWS = 1024;

    private final String name;
    private final int dim;
    private final ServerOptimizer optimizer;
    private final long recordBytes;
    private final long rowBytes;
    private LongIndex index;
    private int limit = CHUNK_ROWS;
    private long[] keys = new long[CHUNK_ROWS];
    private int count;
    private MemorySegment[] records = new MemorySegment[0];
    private MemorySegment[] synced = new MemorySegment[0];
    private int[] fetched = new int[CHUNK_ROWS];
    private int[] touched = new int[CHUNK_ROWS];
    private boolean[] isTouched = new boolean[CHUNK_ROWS];
    private int touchedCount;

    /** Ids to fetch: {@code count} of them in {@code ids}. */
    record Stale(MemorySegment ids, int count) {
    }

    GeoRows(String name, int dim, ServerOptimizer optimizer) {
        this.name = name;
        this.dim = dim;
        this.optimizer = optimizer;
        this.recordBytes = optimizer.recordFloats(dim) * Float.BYTES;
        this.rowBytes = (long) dim * Float.BYTES;
        this.index = new LongIndex(limit);
    }

    String name() {
        return name;
    }

    int dim() {
        return dim;
    }

    /**
     * Of the {@code n} distinct {@code ids}, those not fetched in {@code window} (new rows are made, zero, so that
     * {@link #catchUp} sets them to the servers' values).
     */
    Stale stale(MemorySegment ids, int n, int window) {
        MemorySegment out = GeoCommunicator.allocate(Math.max(1, n) * (long) Long.BYTES, "ids to fetch of " + name);
        int stale = 0;
        for (int i = 0; i < n; i++) {
            long id = ids.getAtIndex(ID, i);
            int s = slot(id);
            if (fetched[s] != window) {
                out.setAtIndex(ID, stale++, id);
            }
        }
        return new Stale(out, stale);
    }

    /** Each row of {@code ids} takes what the servers moved since it was synced ({@code fresh}: their values). */
    void catchUp(MemorySegment ids, int n, MemorySegment fresh, int window) {
        for (int i = 0; i < n; i++) {
            int s = slot(ids.getAtIndex(ID, i));
            GeoCommunicator.catchUp(value(s), synced(s), fresh.asSlice(i * rowBytes, rowBytes), dim);
            fetched[s] = window;
        }
    }

    /** After an exchange: the rows caught up, fresh for {@code window}, untouched. */
    void exchanged(MemorySegment ids, int n, MemorySegment fresh, int window) {
        catchUp(ids, n, fresh, window);
        for (int i = 0; i < touchedCount; i++) {
            isTouched[touched[i]] = false;
        }
        touchedCount = 0;
    }

    /**
     * Every row's value back to what was synced with the servers, for {@link GeoCommunicator#catchUp}: the local
     * progress the servers were not sent is dropped, and the next fetch sets the row to the servers' value.
     */
    void dropUnsentProgress() {
        for (int s = 0; s < count; s++) {
            MemorySegment.copy(synced(s), 0, value(s), 0, rowBytes);
        }
    }

    void copyValues(MemorySegment ids, int n, MemorySegment out) {
        for (int i = 0; i < n; i++) {
            MemorySegment.copy(value(slot(ids.getAtIndex(ID, i))), 0, out, i * rowBytes, rowBytes);
        }
    }

    /** One local optimizer step per row of {@code ids} with its gradient row. */
    void train(MemorySegment ids, int n, MemorySegment grads) {
        for (int i = 0; i < n; i++) {
            int s = slot(ids.getAtIndex(ID, i));
            optimizer.apply(record(s), grads.asSlice(i * rowBytes, rowBytes), dim);
            if (!isTouched[s]) {
                isTouched[s] = true;
                touched[touchedCount++] = s;
            }
        }
    }

    int touchedCount() {
        return touchedCount;
    }

    MemorySegment touchedIds() {
        MemorySegment out = GeoCommunicator.allocate(Math.max(1, touchedCount) * (long) Long.BYTES, "ids of " + name);
        for (int i = 0; i < touchedCount; i++) {
            out.setAtIndex(ID, i, keys[touched[i]]);
        }
        return out;
    }

    /** For each touched row: delta = (value - synced) * share; synced += delta. The deltas, in touched order. */
    MemorySegment deltas(float share) {
        MemorySegment out = GeoCommunicator.allocate(Math.max(1, touchedCount) * rowBytes, "deltas of " + name);
        for (int i = 0; i < touchedCount; i++) {
            int s = touched[i];
            MemorySegment delta = out.asSlice(i * rowBytes, rowBytes);
            F32.sub(value(s), synced(s), delta, dim);
            F32.scale(delta, share, delta, dim);
            F32.accumulate(synced(s), delta, dim);
        }
        return out;
    }

    private MemorySegment record(int s) {
        return records[s / CHUNK_ROWS].asSlice((s % CHUNK_ROWS) * recordBytes, recordBytes);
    }

    private MemorySegment value(int s) {
        return records[s / CHUNK_ROWS].asSlice((s % CHUNK_ROWS) * recordBytes, rowBytes);
    }

    private MemorySegment synced(int s) {
        return synced[s / CHUNK_ROWS].asSlice((s % CHUNK_ROWS) * rowBytes, rowBytes);
    }

    /** The row of {@code id}, made (zero, never fetched) if it is new. */
    private int slot(long id) {
        int s = index.putIfAbsent(id, count);
        if (s >= 0) {
            return s;
        }
        s = count++;
        if (s == keys.length) {
            int grown = keys.length * 2;
            keys = Arrays.copyOf(keys, grown);
            fetched = Arrays.copyOf(fetched, grown);
            touched = Arrays.copyOf(touched, grown);
            isTouched = Arrays.copyOf(isTouched, grown);
        }
        keys[s] = id;
        fetched[s] = -1;
        if (s / CHUNK_ROWS == records.length) {
            records = Arrays.copyOf(records, records.length + 1);
            synced = Arrays.copyOf(synced, synced.length + 1);
            records[s / CHUNK_ROWS] = GeoCommunicator.allocate(CHUNK_ROWS * recordBytes, "rows of " + name);
            synced[s / CHUNK_ROWS] = GeoCommunicator.allocate(CHUNK_ROWS * rowBytes, "synced rows of " + name);
        }
        optimizer.initState(record(s), dim);
        if (count == limit) {
            limit *= 2;
            index = new LongIndex(limit);
            for (int k = 0; k < count; k++) {
                index.putIfAbsent(keys[k], k);
            }
        }
        return s;
    }
}
