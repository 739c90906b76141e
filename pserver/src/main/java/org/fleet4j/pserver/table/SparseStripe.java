package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * One stripe of a sparse table: an open-addressing hash index from a 64-bit id to a row number, and the rows
 * themselves, all off-heap. Index entries are 12 bytes ({@code id, row + 1}; 0 marks a free slot, a negative value an
 * id a counter filter is still counting), probed linearly and doubled past 3/4 full. A row is
 * {@code [optimizer record | row stats (RowStats, when eviction needs them)]}, in chunks that grow from 64 rows to
 * {@value #MAX_CHUNK_ROWS} and then stay that size, so neither a small table nor a large one holds much more than its
 * rows. Each chunk has a chunk of the rows' ids beside it, which lets a save or a shrink walk the rows in order without
 * the index; they are kept apart so that a record of a whole number of cache lines (Adagrad's 128 bytes at dimension
 * 16) stays aligned to them, as the pulls' and pushes' copies want.
 *
 * <p>A stripe has one owner ({@link ShardOwners}): every read and write of its rows runs on that owner's thread, one
 * task after another, so an update is never lost or torn and a snapshot sees each row's value and optimizer state
 * from the same update, without a lock. Only {@link #size()}, {@link #pending()} and {@link #bytes()} may be read
 * from other threads. Rows keep their numbers until a {@link #shrink}, which moves them and bumps
 * {@link #generation()}.
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
    /** Record and row stats: what a save keeps of a row and a load puts back. */
    private final long dataBytes;
    private final RowStats stats;
    private final ServerOptimizer optimizer;
    private final RowInitializer initializer;
    private final RowAdmission admission;
    /** Every id gets a row at its first sighting: the pull and push paths skip the filter's switch. */
    private final boolean admitsEveryone;
    /** The counting Bloom filter's counters of this stripe, or null. */
    private CountingBloomSlice bloom;
    /** The probability filter's draws, or null. */
    private final SplittableRandom draws;
    private MemorySegment index;
    private int capacity;
    /** Written by the owner only; volatile so that stats read it from any thread. */
    private volatile int size;
    /** Ids a counter filter is counting (index entries without a row). */
    private volatile int pending;
    private MemorySegment[] chunks = new MemorySegment[0];
    /** The ids of {@link #chunks}' rows, 8 bytes each, chunk by chunk. */
    private MemorySegment[] idChunks = new MemorySegment[0];
    /** {@link #repeatsAny}'s bits, one per row, all clear between its calls. */
    private long[] seen = new long[0];
    /** One bit per row: changed since the last save (an incremental save writes these). */
    private long[] dirty = new long[0];
    /** Ids evicted since the last save (an incremental save records their removal). */
    private long[] evicted = new long[0];
    private int evictedCount;
    /** During a save: the rows and removals it writes, taken from {@link #dirty} and {@link #evicted} at its start. */
    private long[] savingDirty;
    private long[] savingEvicted;
    private int generation;
    private volatile long heldBytes;

    SparseStripe(String name, long width, ServerOptimizer optimizer, RowInitializer initializer, RowAdmission admission,
                 RowStats stats, CountingBloomSlice bloom, long drawSeed, int owner) {
        this.owner = owner;
        this.name = name;
        this.width = width;
        this.recordBytes = optimizer.recordFloats(width) * Float.BYTES;
        this.stats = stats;
        this.dataBytes = recordBytes + stats.bytes();
        this.optimizer = optimizer;
        this.initializer = initializer;
        this.admission = admission;
        this.admitsEveryone = admission instanceof RowAdmission.Everyone;
        this.bloom = bloom;
        this.draws = admission instanceof RowAdmission.Probability ? new SplittableRandom(drawSeed) : null;
        this.capacity = 16;
        this.index = allocate(capacity * ENTRY, "index");
        this.heldBytes = index.byteSize() + (bloom == null ? 0 : bloom.length());
    }

    private MemorySegment allocate(long bytes, String what) {
        return OffHeapMemory.allocate(bytes, 64, () -> "sparse table " + name + " " + what);
    }

    int size() {
        return size;
    }

    int pending() {
        return pending;
    }

    long bytes() {
        return heldBytes;
    }

    /** Bumped whenever rows move (a shrink): a lookup made before then must find its rows again. On the owner. */
    int generation() {
        return generation;
    }

    long dataBytes() {
        return dataBytes;
    }

    CountingBloomSlice bloom() {
        return bloom;
    }

    /** Takes over another stripe's filter counters (a restripe that keeps the slicing). */
    void adoptBloom(CountingBloomSlice other) {
        heldBytes += other.length() - (bloom == null ? 0 : bloom.length());
        bloom = other;
    }

    /** Row {@code id}'s record, or null when it has none. On the owner's thread. */
    MemorySegment find(long id, long hash) {
        int row = findRow(id, hash);
        return row < 0 ? null : record(row);
    }

    /** Row {@code id}'s row number, or -1 when it has none. On the owner's thread. */
    int findRow(long id, long hash) {
        int mask = capacity - 1;
        for (int slot = (int) hash & mask; ; slot = (slot + 1) & mask) {
            int row = index.get(ROW, slot * ENTRY + 8);
            if (row == 0) {
                return -1;
            }
            if (index.get(ID, slot * ENTRY) == id) {
                return row > 0 ? row - 1 : -1;
            }
        }
    }

    /** The slot holding {@code id}, or {@code -(free slot) - 1} where it would go. */
    private int probe(long id, long hash) {
        int mask = capacity - 1;
        for (int slot = (int) hash & mask; ; slot = (slot + 1) & mask) {
            if (index.get(ROW, slot * ENTRY + 8) == 0) {
                return -slot - 1;
            }
            if (index.get(ID, slot * ENTRY) == id) {
                return slot;
            }
        }
    }

    /**
     * Row {@code id}'s row number (for {@link #record(int)}), created if new, whatever the admission filter says (a
     * load, a restripe, a table that admits every id). Row numbers stay valid as the stripe grows. On the owner's
     * thread.
     */
    int findOrCreateRow(long id, long hash, long step) {
        int slot = probe(id, hash);
        if (slot >= 0) {
            int entry = index.get(ROW, slot * ENTRY + 8);
            if (entry > 0) {
                return entry - 1;
            }
            pending--;
            return createAt(slot, id, step);
        }
        if (size + pending + 1 > capacity - (capacity >>> 2)) {
            grow();
            slot = probe(id, hash);
        }
        index.set(ID, (-slot - 1) * ENTRY, id);
        return createAt(-slot - 1, id, step);
    }

    /**
     * A pull's row for {@code id}: found, or created if the admission filter admits it at this sighting; -1 when it
     * does not (yet). On the owner's thread.
     */
    int admitRow(long id, long hash, long step) {
        if (admitsEveryone) {
            return findOrCreateRow(id, hash, step);
        }
        return switch (admission) {
            case RowAdmission.Everyone e -> findOrCreateRow(id, hash, step);
            case RowAdmission.Counter c -> countSighting(id, hash, c.filterFreq(), step);
            case RowAdmission.Probability p -> {
                int row = findRow(id, hash);
                yield row >= 0 || draws.nextDouble() >= p.probability() ? row : findOrCreateRow(id, hash, step);
            }
            case RowAdmission.CountingBloom b -> {
                int row = findRow(id, hash);
                yield row >= 0 || bloom.sight(id) < b.filterFreq() ? row : findOrCreateRow(id, hash, step);
            }
        };
    }

    /** A push's row for {@code id}: created when every id is admitted, else only found (-1: its gradient is dropped). */
    int pushRow(long id, long hash, long step) {
        return admitsEveryone ? findOrCreateRow(id, hash, step) : findRow(id, hash);
    }

    /** A counter filter's sighting: the id's count goes up in its index entry, and at {@code freq} it gets a row. */
    private int countSighting(long id, long hash, int freq, long step) {
        int slot = probe(id, hash);
        if (slot >= 0) {
            int entry = index.get(ROW, slot * ENTRY + 8);
            if (entry > 0) {
                return entry - 1;
            }
            int count = -entry + 1;
            if (count < freq) {
                index.set(ROW, slot * ENTRY + 8, -count);
                return -1;
            }
            pending--;
            return createAt(slot, id, step);
        }
        if (freq <= 1) {
            return findOrCreateRow(id, hash, step);
        }
        putPending(id, hash, 1);
        return -1;
    }

    /** Records that a counter filter has seen {@code id} {@code count} times (a load, a restripe). On the owner. */
    void putPending(long id, long hash, int count) {
        if (size + pending + 1 > capacity - (capacity >>> 2)) {
            grow();
        }
        int slot = probe(id, hash);
        if (slot >= 0) {
            if (index.get(ROW, slot * ENTRY + 8) < 0) {
                index.set(ROW, slot * ENTRY + 8, -count);
            }
            return;
        }
        index.set(ID, (-slot - 1) * ENTRY, id);
        index.set(ROW, (-slot - 1) * ENTRY + 8, -count);
        pending++;
    }

    /** Calls {@code visitor} with every id a counter filter is counting and its count. On the owner's thread. */
    void forEachPending(PendingVisitor visitor) {
        for (long slot = 0; slot < capacity; slot++) {
            int entry = index.get(ROW, slot * ENTRY + 8);
            if (entry < 0) {
                visitor.visit(index.get(ID, slot * ENTRY), -entry);
            }
        }
    }

    interface PendingVisitor {
        void visit(long id, int count);
    }

    private int createAt(int slot, long id, long step) {
        int row = size;
        MemorySegment data = recordForNewRow(row);
        initializer.fill(id, data, width);
        optimizer.initState(data, width);
        stats.init(data, recordBytes, step);
        setId(row, id);
        index.set(ROW, slot * ENTRY + 8, row + 1);
        markDirty(row);
        size = row + 1;
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

    /** As {@link #touchSlots}, for the records of {@code rows[from..to)} (those that exist): misses overlapping. */
    long touchRows(int[] rows, int from, int to) {
        long sum = 0;
        for (int k = from; k < to; k++) {
            int row = rows[k];
            if (row >= 0) {
                sum += chunkOfRow(row).get(ValueLayout.JAVA_BYTE, offsetInChunk(row));
            }
        }
        return sum;
    }

    /**
     * Whether any row number in {@code rows[from..to)} repeats (rows of -1, ids without a row, are left out): a bit
     * per row of the stripe, set for each and then cleared (a word at a time: between calls every bit is clear, so a
     * touched word holds only this call's bits). The bits take 1/512 of the rows' own memory. On the owner's thread.
     */
    boolean repeatsAny(int[] rows, int from, int to) {
        if (seen.length * 64L < size) {
            seen = new long[Math.max(seen.length * 2, (size + 63) >>> 6)];
        }
        long[] bits = seen;
        boolean repeats = false;
        for (int k = from; k < to; k++) {
            int row = rows[k];
            if (row < 0) {
                continue;
            }
            long bit = 1L << row;
            long word = bits[row >>> 6];
            repeats |= (word & bit) != 0;
            bits[row >>> 6] = word | bit;
        }
        for (int k = from; k < to; k++) {
            if (rows[k] >= 0) {
                bits[rows[k] >>> 6] = 0;
            }
        }
        return repeats;
    }

    /** A pull read row {@code row}: one more show. On the owner's thread. */
    void pulled(int row) {
        if (stats.kept()) {
            stats.addShow(chunkOfRow(row), offsetInChunk(row) + recordBytes);
        }
    }

    /** Row {@code row} was updated at {@code step}. On the owner's thread. */
    void updated(int row, long step) {
        if (stats.kept()) {
            stats.update(chunkOfRow(row), offsetInChunk(row) + recordBytes, step);
        }
        markDirty(row);
    }

    private void markDirty(int row) {
        if (dirty.length * 64L <= row) {
            dirty = Arrays.copyOf(dirty, Math.max(dirty.length * 2, (row >>> 6) + 1));
        }
        dirty[row >>> 6] |= 1L << row;
    }

    boolean isDirty(int row) {
        return row >>> 6 < dirty.length && (dirty[row >>> 6] & (1L << row)) != 0;
    }

    /** The table now equals what was saved or loaded: nothing is dirty, nothing was evicted. On the owner. */
    void markClean() {
        Arrays.fill(dirty, 0L);
        evictedCount = 0;
    }

    /** Clears row {@code row}'s dirty bit (a restripe of a row that was clean). On the owner's thread. */
    void markClean(int row) {
        if (row >>> 6 < dirty.length) {
            dirty[row >>> 6] &= ~(1L << row);
        }
    }

    /**
     * A save begins: the rows changed and ids evicted so far are the ones it writes ({@link #inSave},
     * {@link #removedInSave}); what changes from now on is dirty for the next save. On the owner's thread.
     */
    void beginSave() {
        savingDirty = dirty;
        dirty = new long[savingDirty.length];
        savingEvicted = Arrays.copyOf(evicted, evictedCount);
        evictedCount = 0;
    }

    /** Whether row {@code row} changed before the save under way began. On the owner's thread. */
    boolean inSave(int row) {
        return row >>> 6 < savingDirty.length && (savingDirty[row >>> 6] & (1L << row)) != 0;
    }

    long[] removedInSave() {
        return savingEvicted;
    }

    /**
     * The save under way ended; if it was not written, what it held is dirty again, so that the next save writes it.
     * On the owner's thread.
     */
    void endSave(boolean written) {
        if (savingDirty == null) {
            return;
        }
        if (!written) {
            if (dirty.length < savingDirty.length) {
                dirty = Arrays.copyOf(dirty, savingDirty.length);
            }
            for (int w = 0; w < savingDirty.length; w++) {
                dirty[w] |= savingDirty[w];
            }
            for (long id : savingEvicted) {
                noteEvicted(id);
            }
        }
        savingDirty = null;
        savingEvicted = null;
    }

    /** Records that {@code id} went since the last save (a restripe carries the list over). On the owner. */
    void noteEvicted(long id) {
        if (evictedCount == evicted.length) {
            evicted = Arrays.copyOf(evicted, Math.max(16, evicted.length * 2));
        }
        evicted[evictedCount++] = id;
    }

    /** Ids evicted since the last save. On the owner's thread. */
    long[] evictedSinceSave() {
        return Arrays.copyOf(evicted, evictedCount);
    }

    /**
     * Removes row {@code id} if it has one (a load applying an incremental save's removals): the last row moves into
     * its place and the index entry goes by backward shifting, so probes stay correct without tombstones. Rows move:
     * {@link #generation()} changes. On the owner's thread.
     */
    boolean removeRow(long id, long hash) {
        int slot = probe(id, hash);
        if (slot < 0 || index.get(ROW, slot * ENTRY + 8) <= 0) {
            return false;
        }
        int row = index.get(ROW, slot * ENTRY + 8) - 1;
        int last = size - 1;
        deleteSlot(slot);
        if (row != last) {
            long lastId = idOf(last);
            MemorySegment.copy(chunkOfRow(last), offsetInChunk(last), chunkOfRow(row), offsetInChunk(row), dataBytes);
            setId(row, lastId);
            index.set(ROW, probe(lastId, KeyHash.local(lastId)) * ENTRY + 8, row + 1);
            if (isDirty(last)) {
                markDirty(row);
            } else if (isDirty(row)) {
                markClean(row);
            }
        }
        if (isDirty(last)) {
            markClean(last);
        }
        size = last;
        generation++;
        return true;
    }

    /** Empties index slot {@code slot}, shifting back the entries after it that probed past it. */
    private void deleteSlot(int slot) {
        int mask = capacity - 1;
        int hole = slot;
        for (int next = (hole + 1) & mask; index.get(ROW, next * ENTRY + 8) != 0; next = (next + 1) & mask) {
            int home = (int) KeyHash.local(index.get(ID, next * ENTRY)) & mask;
            // the entry at next may fill the hole when its home slot is not in (hole, next]
            boolean movable = hole <= next ? home <= hole || home > next : home <= hole && home > next;
            if (movable) {
                MemorySegment.copy(index, next * ENTRY, index, hole * ENTRY, ENTRY);
                hole = next;
            }
        }
        index.set(ID, hole * ENTRY, 0L);
        index.set(ROW, hole * ENTRY + 8, 0);
    }

    /** Calls {@code visitor} with every row's id and its data (record and stats), in row order. On the owner. */
    void forEach(RowVisitor visitor) {
        forEach(0, size, visitor);
    }

    /** As {@link #forEach(RowVisitor)}, for rows {@code [from, to)}. */
    void forEach(int from, int to, RowVisitor visitor) {
        for (int row = from; row < to; row++) {
            visitor.visit(idOf(row), data(row));
        }
    }

    interface RowVisitor {
        void visit(long id, MemorySegment record);
    }

    long idOf(int row) {
        int chunk = chunkOf(row);
        return idChunks[chunk].get(ID, (row - firstRowOf(chunk)) * Long.BYTES);
    }

    private void setId(int row, long id) {
        int chunk = chunkOf(row);
        idChunks[chunk].set(ID, (row - firstRowOf(chunk)) * Long.BYTES, id);
    }

    /**
     * Removes every row {@code eviction} condemns at {@code step} and packs the rest into new memory (index and
     * chunks sized for what is left; the old memory goes back at the next GC). Show and click decay first, and every
     * row counts one more unseen shrink (Paddle's shrink; an update resets it). Ids a counter filter is counting stay.
     * On the owner's thread, between two tasks: rows move, so {@link #generation()} changes.
     */
    ShrinkCounts shrink(RowEviction eviction, long step) {
        int before = size;
        long bytesBefore = heldBytes;
        boolean[] keep = new boolean[before];
        long byAge = 0;
        long byL2 = 0;
        long byScore = 0;
        int kept = 0;
        double l2Squared = eviction.l2WeightThreshold() * eviction.l2WeightThreshold();
        for (int row = 0; row < before; row++) {
            MemorySegment chunk = chunkOfRow(row);
            long at = offsetInChunk(row);
            if (eviction.scores()) {
                stats.decay(chunk, at + recordBytes, eviction.showClickDecayRate());
            }
            if (eviction.stepsToLive() > 0 && step - stats.lastStep(chunk, at + recordBytes) > eviction.stepsToLive()) {
                byAge++;
            } else if (eviction.l2WeightThreshold() > 0 && squaredNorm(chunk, at) < l2Squared) {
                byL2++;
            } else if (eviction.scores() && condemnedByScore(eviction, chunk, at + recordBytes)) {
                byScore++;
            } else {
                keep[row] = true;
                kept++;
            }
        }
        if (kept == before) {
            return new ShrinkCounts(before, 0, 0, 0, bytesBefore, bytesBefore);
        }
        MemorySegment[] oldChunks = chunks;
        MemorySegment[] oldIdChunks = idChunks;
        MemorySegment oldIndex = index;
        int oldCapacity = capacity;
        long[] oldDirty = dirty;
        long[] oldSaving = savingDirty;
        int newCapacity = 16;
        while (kept + pending > newCapacity - (newCapacity >>> 2)) {
            newCapacity *= 2;
        }
        index = allocate(newCapacity * ENTRY, "index");
        capacity = newCapacity;
        chunks = new MemorySegment[0];
        idChunks = new MemorySegment[0];
        dirty = new long[(kept + 63) >>> 6];
        savingDirty = oldSaving == null ? null : new long[dirty.length];
        heldBytes = index.byteSize() + (bloom == null ? 0 : bloom.length());
        size = 0;
        for (int row = 0; row < before; row++) {
            int chunk = chunkOf(row);
            long at = (row - firstRowOf(chunk)) * dataBytes;
            long id = oldIdChunks[chunk].get(ID, (row - firstRowOf(chunk)) * Long.BYTES);
            if (!keep[row]) {
                noteEvicted(id);
                continue;
            }
            int moved = size;
            MemorySegment.copy(oldChunks[chunk], at, recordForNewRow(moved), 0, dataBytes);
            setId(moved, id);
            insert(index, capacity, id, KeyHash.local(id), moved);
            if (row >>> 6 < oldDirty.length && (oldDirty[row >>> 6] & (1L << row)) != 0) {
                dirty[moved >>> 6] |= 1L << moved;
            }
            if (oldSaving != null && row >>> 6 < oldSaving.length && (oldSaving[row >>> 6] & (1L << row)) != 0) {
                savingDirty[moved >>> 6] |= 1L << moved;
            }
            size = moved + 1;
        }
        for (long slot = 0; slot < oldCapacity; slot++) {
            int entry = oldIndex.get(ROW, slot * ENTRY + 8);
            if (entry < 0) {
                long id = oldIndex.get(ID, slot * ENTRY);
                int free = -probe(id, KeyHash.local(id)) - 1;
                index.set(ID, free * ENTRY, id);
                index.set(ROW, free * ENTRY + 8, entry);
            }
        }
        seen = new long[0];
        generation++;
        return new ShrinkCounts(before, byAge, byL2, byScore, bytesBefore, heldBytes);
    }

    private boolean condemnedByScore(RowEviction eviction, MemorySegment chunk, long statsAt) {
        int unseen = stats.passUnseen(chunk, statsAt);
        if (eviction.deleteAfterUnseenDays() > 0 && unseen > eviction.deleteAfterUnseenDays()) {
            return true;
        }
        return eviction.deleteThreshold() > 0
                && eviction.score(stats.show(chunk, statsAt), stats.click(chunk, statsAt)) < eviction.deleteThreshold();
    }

    private double squaredNorm(MemorySegment chunk, long at) {
        double sum = 0;
        for (long j = 0; j < width; j++) {
            double v = chunk.get(ValueLayout.JAVA_FLOAT_UNALIGNED, at + j * Float.BYTES);
            sum += v * v;
        }
        return sum;
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
        int mask = bigger - 1;
        for (long slot = 0; slot < capacity; slot++) {
            int entry = index.get(ROW, slot * ENTRY + 8);
            if (entry != 0) {
                long id = index.get(ID, slot * ENTRY);
                int to = (int) KeyHash.local(id) & mask;
                while (next.get(ROW, to * ENTRY + 8) != 0) {
                    to = (to + 1) & mask;
                }
                next.set(ID, to * ENTRY, id);
                next.set(ROW, to * ENTRY + 8, entry);
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
            chunks[chunk] = allocate(rows * dataBytes, "rows");
            idChunks = Arrays.copyOf(idChunks, chunk + 1);
            idChunks[chunk] = allocate(rows * Long.BYTES, "row ids");
            heldBytes += rows * (dataBytes + Long.BYTES);
        }
        return chunks[chunk].asSlice(offsetInChunk(row), dataBytes);
    }

    /** Row number {@code row}'s optimizer record (from {@link #findOrCreateRow}). On the owner's thread. */
    MemorySegment record(int row) {
        return chunkOfRow(row).asSlice(offsetInChunk(row), recordBytes);
    }

    /** Row number {@code row}'s record and stats: what a save writes and a load puts back. On the owner's thread. */
    MemorySegment data(int row) {
        return chunkOfRow(row).asSlice(offsetInChunk(row), dataBytes);
    }

    /** Copies the first {@code bytes} of row number {@code row}'s record to {@code out} at {@code at}, without a slice. */
    void copyOut(int row, MemorySegment out, long at, long bytes) {
        MemorySegment.copy(chunkOfRow(row), offsetInChunk(row), out, at, bytes);
    }

    private MemorySegment chunkOfRow(int row) {
        return chunks[chunkOf(row)];
    }

    private long offsetInChunk(int row) {
        return (row - firstRowOf(chunkOf(row))) * dataBytes;
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
