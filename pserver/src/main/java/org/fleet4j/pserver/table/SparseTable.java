package org.fleet4j.pserver.table;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.fleet4j.core.ops.F32;

/**
 * One server's share of a sparse table: ids to rows of {@code width} floats plus optimizer state, in
 * {@link SparseStripe}s that lock separately (no table-wide lock). A request takes each stripe's lock once, for all
 * its ids in that stripe. Rows are created on first pull (or push) with the table's initializer.
 *
 * <p>Ids and gradients come as memory segments (a receive buffer, without a copy): ids as 64-bit integers, gradients
 * and pulled rows as {@code n * width} floats, both in native order. Gradient segments must be off-heap or
 * byte-array backed (the update rules read them with the Vector API).
 */
public final class SparseTable {
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;

    private final SparseTableConfig config;
    private final SparseStripe[] stripes;
    private final int stripeShift;

    SparseTable(SparseTableConfig config) {
        this.config = config;
        int count = config.stripes();
        this.stripes = new SparseStripe[count];
        for (int i = 0; i < count; i++) {
            stripes[i] = new SparseStripe(config.name(), config.dim(), config.optimizer(), config.initializer());
        }
        this.stripeShift = 64 - Integer.numberOfTrailingZeros(count);
    }

    public SparseTableConfig config() {
        return config;
    }

    public String name() {
        return config.name();
    }

    /** Copies the rows of {@code n} ids into {@code out} ({@code n * dim} floats), creating missing rows. */
    public void pull(MemorySegment ids, int n, MemorySegment out) {
        long rowBytes = config.dim() * (long) Float.BYTES;
        checkSizes(ids, n, out, "out");
        forEachByStripe(ids, n, (i, id, record) ->
                MemorySegment.copy(record, 0, out, i * rowBytes, rowBytes));
    }

    /**
     * Applies the gradients of {@code n} ids ({@code n * dim} floats). Duplicate ids are summed first, as the
     * worker's merge would, so each row is updated once per push.
     */
    public void push(MemorySegment ids, int n, MemorySegment grads) {
        checkSizes(ids, n, grads, "grads");
        long width = config.dim();
        long rowBytes = width * Float.BYTES;
        int[] first = firstOccurrences(ids, n);
        if (first == null) {
            forEachByStripe(ids, n, (i, id, record) ->
                    config.optimizer().apply(record, grads.asSlice(i * rowBytes, rowBytes), width));
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment merged = arena.allocate(n * rowBytes, 64);
            MemorySegment.copy(grads, 0, merged, 0, n * rowBytes);
            for (int i = 0; i < n; i++) {
                if (first[i] != i) {
                    F32.accumulate(merged.asSlice(first[i] * rowBytes, rowBytes), grads.asSlice(i * rowBytes, rowBytes), width);
                }
            }
            forEachByStripe(ids, n, (i, id, record) -> {
                if (first[(int) i] == i) {
                    config.optimizer().apply(record, merged.asSlice(i * rowBytes, rowBytes), width);
                }
            });
        }
    }

    /** Rows held now. */
    public long keys() {
        long keys = 0;
        for (SparseStripe s : stripes) {
            s.lock.lock();
            try {
                keys += s.size();
            } finally {
                s.lock.unlock();
            }
        }
        return keys;
    }

    /** Off-heap bytes held: hash index and row chunks. */
    public long bytes() {
        long bytes = 0;
        for (SparseStripe s : stripes) {
            s.lock.lock();
            try {
                bytes += s.bytes();
            } finally {
                s.lock.unlock();
            }
        }
        return bytes;
    }

    /**
     * Visits every row, one stripe at a time under that stripe's lock: each record seen is whole, its value and
     * optimizer state from the same update, while pushes to other stripes go on.
     */
    public void forEachRow(SparseStripe.RowVisitor visitor) {
        for (SparseStripe s : stripes) {
            s.lock.lock();
            try {
                s.forEach(visitor);
            } finally {
                s.lock.unlock();
            }
        }
    }

    /** Replaces (or creates) row {@code id}'s whole record. */
    public void putRecord(long id, MemorySegment record) {
        long hash = KeyHash.local(id);
        SparseStripe s = stripes[stripeOf(hash)];
        s.lock.lock();
        try {
            MemorySegment.copy(record, 0, s.findOrCreate(id, hash), 0, record.byteSize());
        } finally {
            s.lock.unlock();
        }
    }

    /** Row {@code id}'s record copied out, or null when the table has no such row (nothing is created). */
    public float[] peekRecord(long id) {
        long hash = KeyHash.local(id);
        SparseStripe s = stripes[stripeOf(hash)];
        s.lock.lock();
        try {
            MemorySegment r = s.find(id, hash);
            return r == null ? null : r.toArray(ValueLayout.JAVA_FLOAT);
        } finally {
            s.lock.unlock();
        }
    }

    private int stripeOf(long hash) {
        return stripeShift == 64 ? 0 : (int) (hash >>> stripeShift);
    }

    private void checkSizes(MemorySegment ids, int n, MemorySegment rows, String what) {
        if (n < 0 || ids.byteSize() < n * 8L) {
            throw new TableException("sparse table " + name() + ": " + n + " ids asked for, the request holds "
                    + ids.byteSize() / 8);
        }
        long need = n * config.dim() * (long) Float.BYTES;
        if (rows.byteSize() < need) {
            throw new TableException("sparse table " + name() + ": " + what + " holds " + rows.byteSize()
                    + " bytes, " + n + " ids of dimension " + config.dim() + " need " + need);
        }
    }

    private interface RowAction {
        void run(long i, long id, MemorySegment record);
    }

    /** Groups the ids by stripe (a counting sort) and runs {@code action} on each under its stripe's lock. */
    private void forEachByStripe(MemorySegment ids, int n, RowAction action) {
        long[] hashes = new long[n];
        int[] start = new int[stripes.length + 1];
        for (int i = 0; i < n; i++) {
            hashes[i] = KeyHash.local(ids.getAtIndex(ID, i));
            start[stripeOf(hashes[i]) + 1]++;
        }
        for (int s = 0; s < stripes.length; s++) {
            start[s + 1] += start[s];
        }
        int[] order = new int[n];
        int[] fill = start.clone();
        for (int i = 0; i < n; i++) {
            order[fill[stripeOf(hashes[i])]++] = i;
        }
        for (int s = 0; s < stripes.length; s++) {
            if (start[s] == start[s + 1]) {
                continue;
            }
            SparseStripe stripe = stripes[s];
            stripe.lock.lock();
            try {
                for (int k = start[s]; k < start[s + 1]; k++) {
                    int i = order[k];
                    long id = ids.getAtIndex(ID, i);
                    action.run(i, id, stripe.findOrCreate(id, hashes[i]));
                }
            } finally {
                stripe.lock.unlock();
            }
        }
    }

    /** For each position the position of the first equal id, or null when the ids are all distinct. */
    private static int[] firstOccurrences(MemorySegment ids, int n) {
        int capacity = Integer.highestOneBit(Math.max(2, n) * 2 - 1) << 1;
        long[] keys = new long[capacity];
        int[] pos = new int[capacity];
        Arrays.fill(pos, -1);
        int[] first = new int[n];
        boolean duplicates = false;
        int mask = capacity - 1;
        for (int i = 0; i < n; i++) {
            long id = ids.getAtIndex(ID, i);
            int slot = (int) KeyHash.mix(id) & mask;
            while (pos[slot] >= 0 && keys[slot] != id) {
                slot = (slot + 1) & mask;
            }
            if (pos[slot] < 0) {
                keys[slot] = id;
                pos[slot] = i;
            }
            first[i] = pos[slot];
            duplicates |= first[i] != i;
        }
        return duplicates ? first : null;
    }
}
