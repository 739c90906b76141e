package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * One stripe of a sparse table: an open-addressing hash index from a 64-bit id to a row number, and the rows
 * themselves, all off-heap. Index entries are 12 bytes ({@code id, row + 1}; 0 marks a free slot), probed
 * linearly and doubled past 3/4 full. Rows are records of {@link ServerOptimizer#recordFloats} floats in chunks that
 * grow from 64 rows to {@value #MAX_CHUNK_ROWS} and then stay that size, so neither a small table nor a large one
 * holds much more than its rows.
 *
 * <p>A stripe has one owner ({@link ShardOwners}): every read and write of its rows runs on that owner's thread, one
 * task after another, so an update is never lost or torn and a snapshot sees each row's value and optimizer state
 * from the same update, without a lock. Only {@link #size()} and {@link #bytes()} may be read from other threads.
 */
final class SparseStripe {
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt ROW = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long ENTRY = 12;
    private static final int FIRST_CHUNK_ROWS = 64;
    private static final int MAX_CHUNK_ROWS = 4096;
    /** Rows held by the growing chunks 64, 128, ..., MAX_CHUNK_ROWS. */
    private static final int GROWING_ROWS = 2 * MAX_CHUNK_ROWS - FIRST_CHUNK_ROWS;
    private static final int GROWING_CHUNKS = Integer.numberOfTrailingZeros(MAX_CHUNK_ROWS / FIRST_CHUNK_ROWS) + 1;

    /** The index of the owner that runs every access to this stripe. */
    final int owner;
    private final String name;
    private final long width;
    private final long recordBytes;
    private final ServerOptimizer optimizer;
    private final RowInitializer initializer;
    private MemorySegment index;
    private int capacity;
    /** Written by the owner only; volatile so that stats read it from any thread. */
    private volatile int size;
    private MemorySegment[] chunks = new MemorySegment[0];
    /** {@link #repeatsAny}'s bits, one per row, all clear between its calls. */
    private long[] seen = new long[0];
    private volatile long heldBytes;

    SparseStripe(String name, long width, ServerOptimizer optimizer, RowInitializer initializer, int owner) {
        this.owner = owner;
        this.name = name;
        this.width = width;
        this.recordBytes = optimizer.recordFloats(width) * Float.BYTES;
        this.optimizer = optimizer;
        this.initializer = initializer;
        this.capacity = 16;
        this.index = allocate(capacity * ENTRY, "index");
        this.heldBytes = index.byteSize();
    }

    private MemorySegment allocate(long bytes, String what) {
        return OffHeapMemory.allocate(bytes, 64, () -> "sparse table " + name + " " + what);
    }

    int size() {
        return size;
    }

    long bytes() {
        return heldBytes;
    }

    /** Row {@code id}'s record, or null when it has none. On the owner's thread. */
    MemorySegment find(long id, long hash) {
        int row = rowOf(id, hash);
        return row < 0 ? null : record(row);
    }

    /** Row {@code id}'s row number, or -1 when it has none. On the owner's thread. */
    private int rowOf(long id, long hash) {
        int mask = capacity - 1;
        for (int slot = (int) hash & mask; ; slot = (slot + 1) & mask) {
            int row = index.get(ROW, slot * ENTRY + 8);
            if (row == 0) {
                return -1;
            }
            if (index.get(ID, slot * ENTRY) == id) {
                return row - 1;
            }
        }
    }

    /** Row {@code id}'s record, created with the initializer and fresh optimizer state if new. On the owner's thread. */
    MemorySegment findOrCreate(long id, long hash) {
        return record(findOrCreateRow(id, hash));
    }

    /**
     * Row {@code id}'s row number (for {@link #record(int)}), created as {@link #findOrCreate} would. Row numbers
     * stay valid as the stripe grows: rows never move. On the owner's thread.
     */
    int findOrCreateRow(long id, long hash) {
        int found = rowOf(id, hash);
        if (found >= 0) {
            return found;
        }
        if (size + 1 > capacity - (capacity >>> 2)) {
            grow();
        }
        int row = size;
        size = row + 1;
        MemorySegment record = recordForNewRow(row);
        initializer.fill(id, record, width);
        optimizer.initState(record, width);
        insert(index, capacity, id, hash, row);
        return row;
    }

    /**
     * Reads the first index slot of each hash in {@code hashes[order[from..to)]}, in a loop with nothing else in it,
     * so that their cache misses overlap instead of coming one after the other in the lookups that follow; Java has
     * no prefetch instruction, and this is the plain-load way to the same effect. The sum returned only keeps the
     * loads from being removed.
     */
    long touchSlots(long[] hashes, int[] order, int from, int to) {
        MemorySegment idx = index;
        int mask = capacity - 1;
        long sum = 0;
        for (int k = from; k < to; k++) {
            sum += idx.get(ID, ((int) hashes[order[k]] & mask) * ENTRY);
        }
        return sum;
    }

    /** As {@link #touchSlots}, for the records of {@code rows[from..to)}: their first bytes, misses overlapping. */
    long touchRows(int[] rows, int from, int to) {
        long sum = 0;
        for (int k = from; k < to; k++) {
            int row = rows[k];
            int chunk = chunkOf(row);
            sum += chunks[chunk].get(ValueLayout.JAVA_BYTE, (row - firstRowOf(chunk)) * recordBytes);
        }
        return sum;
    }

    /**
     * Whether any row number in {@code rows[from..to)} repeats: a bit per row of the stripe, set for each and then
     * cleared (a word at a time: between calls every bit is clear, so a touched word holds only this call's bits).
     * The bits take 1/512 of the rows' own memory. On the owner's thread.
     */
    boolean repeatsAny(int[] rows, int from, int to) {
        if (seen.length * 64L < size) {
            seen = new long[Math.max(seen.length * 2, (size + 63) >>> 6)];
        }
        long[] bits = seen;
        boolean repeats = false;
        for (int k = from; k < to; k++) {
            int row = rows[k];
            long bit = 1L << row;
            long word = bits[row >>> 6];
            repeats |= (word & bit) != 0;
            bits[row >>> 6] = word | bit;
        }
        for (int k = from; k < to; k++) {
            bits[rows[k] >>> 6] = 0;
        }
        return repeats;
    }

    /** Calls {@code visitor} with every id and record. On the owner's thread. */
    void forEach(RowVisitor visitor) {
        for (long slot = 0; slot < capacity; slot++) {
            int row = index.get(ROW, slot * ENTRY + 8);
            if (row != 0) {
                visitor.visit(index.get(ID, slot * ENTRY), record(row - 1));
            }
        }
    }

    interface RowVisitor {
        void visit(long id, MemorySegment record);
    }

    private static void insert(MemorySegment index, int capacity, long id, long hash, int row) {
        int mask = capacity - 1;
        int slot = (int) hash & mask;
        while (index.get(ROW, slot * ENTRY + 8) != 0) {
            slot = (slot + 1) & mask;
        }
        index.set(ID, slot * ENTRY, id);
        index.set(ROW, slot * ENTRY + 8, row + 1);
    }

    private void grow() {
        int bigger = capacity * 2;
        MemorySegment next = allocate(bigger * ENTRY, "index");
        for (long slot = 0; slot < capacity; slot++) {
            int row = index.get(ROW, slot * ENTRY + 8);
            if (row != 0) {
                long id = index.get(ID, slot * ENTRY);
                insert(next, bigger, id, KeyHash.local(id), row - 1);
            }
        }
        heldBytes += next.byteSize() - index.byteSize();
        index = next;
        capacity = bigger;
    }

    private MemorySegment recordForNewRow(int row) {
        int chunk = chunkOf(row);
        if (chunk == chunks.length) {
            long rows = chunk < GROWING_CHUNKS ? (long) FIRST_CHUNK_ROWS << chunk : MAX_CHUNK_ROWS;
            chunks = Arrays.copyOf(chunks, chunk + 1);
            chunks[chunk] = allocate(rows * recordBytes, "rows");
            heldBytes += rows * recordBytes;
        }
        return record(row);
    }

    /** Row number {@code row}'s record (from {@link #findOrCreateRow}). On the owner's thread. */
    MemorySegment record(int row) {
        int chunk = chunkOf(row);
        return chunks[chunk].asSlice((row - firstRowOf(chunk)) * recordBytes, recordBytes);
    }

    /** Copies the first {@code bytes} of row number {@code row}'s record to {@code out} at {@code at}, without a slice. */
    void copyOut(int row, MemorySegment out, long at, long bytes) {
        int chunk = chunkOf(row);
        MemorySegment.copy(chunks[chunk], (row - firstRowOf(chunk)) * recordBytes, out, at, bytes);
    }

    private static long firstRowOf(int chunk) {
        return chunk < GROWING_CHUNKS
                ? (long) FIRST_CHUNK_ROWS * ((1L << chunk) - 1)
                : GROWING_ROWS + (long) (chunk - GROWING_CHUNKS) * MAX_CHUNK_ROWS;
    }

    private static int chunkOf(int row) {
        if (row < GROWING_ROWS) {
            return 31 - Integer.numberOfLeadingZeros(row / FIRST_CHUNK_ROWS + 1);
        }
        return GROWING_CHUNKS + (row - GROWING_ROWS) / MAX_CHUNK_ROWS;
    }
}
