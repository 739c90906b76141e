package org.fleet4j.pserver.table;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.fleet4j.core.ops.F32;

/**
 * One server's share of a sparse table: ids to rows of {@code width} floats plus optimizer state, in
 * {@link SparseStripe}s, each owned by one of the shard's owners ({@link ShardOwners}) that alone reads and writes it:
 * no lock anywhere. A request is split by owner; each owner runs its part (all the request's ids in its stripes) as
 * one task. Rows are created on first pull (or push) with the table's initializer.
 *
 * <p>Ids and gradients come as memory segments (a receive buffer, without a copy): ids as 64-bit integers, gradients
 * and pulled rows as {@code n * width} floats, both in native order. The owners read and fill them on their threads,
 * so they must not be confined to the caller's thread, and an async call's buffers must stay valid until its future
 * is done. Gradient segments must be off-heap or byte-array backed (the update rules read them with the Vector API).
 */
public final class SparseTable {
    private static final System.Logger LOG = System.getLogger(SparseTable.class.getName());
    private static final ValueLayout.OfLong ID = ValueLayout.JAVA_LONG_UNALIGNED;

    /**
     * Ids looked up together: first every one's index slot is read, then every one's row, each in a tight loop, so
     * that a batch's cache misses (a large table is mostly misses for the rare ids of a Zipf batch) overlap. 64 ids'
     * index lines and rows stay in L1/L2 until they are used.
     */
    private static final int TOUCH_AHEAD = 64;
    /** Where the touch loops' sums go, so that the JIT keeps their loads. */
    @SuppressWarnings("unused")
    private static long touchSink;

    private final SparseTableConfig config;
    private final ShardOwners owners;
    private final int server;
    private final int servers;
    private final RowStats rowStats;
    /** Replaced only by {@link #restripe}, before serving or after it (nothing runs at the same time then). */
    private volatile SparseStripe[] stripes;
    /** Pushes that used their pull's lookup (for tests). */
    private final LongAdder reusedLookups = new LongAdder();
    /** Pushes applied (a sync step's averaged update counts once); {@link #step} is this over the pushes per step. */
    private final AtomicLong pushes = new AtomicLong();
    private volatile int pushesPerStep = 1;
    private final LongAdder evictedRows = new LongAdder();
    private final LongAdder freedBytes = new LongAdder();
    private final AtomicReference<ShrinkCounts> lastShrink = new AtomicReference<>(ShrinkCounts.NONE);

    /** A table on its own, with owner threads of its own. */
    SparseTable(SparseTableConfig config) {
        this(config, new ShardOwners(ShardOwners.defaultCount(), "ps-table-" + config.name()), 0, 1);
    }

    /** A table of server {@code server} of {@code servers}, split over the shard's owners. */
    SparseTable(SparseTableConfig config, ShardOwners owners, int server, int servers) {
        this.config = config;
        this.owners = owners;
        this.server = server;
        this.servers = servers;
        this.rowStats = RowStats.of(config.eviction());
        this.stripes = newStripes();
    }

    /**
     * At least the configured stripes, a multiple of the owners: stripe {@code s} of {@code S} holds the ids whose
     * hash's high bits are in its {@code 1/S} of the range and belongs to owner {@code s / (S / owners)}, which is
     * {@link KeyHash#threadOf} of every id in it.
     */
    private SparseStripe[] newStripes() {
        int count = owners.size();
        int perOwner = Math.ceilDiv(config.stripes(), count);
        SparseStripe[] fresh = new SparseStripe[count * perOwner];
        long sliceLength = config.admission() instanceof RowAdmission.CountingBloom b
                ? Math.ceilDiv(b.counters(servers), fresh.length) : 0;
        for (int i = 0; i < fresh.length; i++) {
            CountingBloomSlice bloom = config.admission() instanceof RowAdmission.CountingBloom b
                    ? new CountingBloomSlice(sliceLength, b.hashes(), config.name()) : null;
            fresh[i] = new SparseStripe(config.name(), config.dim(), config.optimizer(), config.initializer(),
                    config.admission(), rowStats, bloom, KeyHash.mix(config.name().hashCode() * 31L + i), i / perOwner);
        }
        return fresh;
    }

    /**
     * Splits the rows anew over the shard's owners after their number changed ({@link TableShard#runOn}): every row
     * moves, whole, to its stripe of the new split. Only while nothing else touches the table.
     */
    void restripe() {
        SparseStripe[] old = stripes;
        SparseStripe[] fresh = newStripes();
        for (SparseStripe s : old) {
            for (int row = 0; row < s.size(); row++) {
                long id = s.idOf(row);
                long hash = KeyHash.local(id);
                SparseStripe to = fresh[stripeOf(hash, fresh.length)];
                int moved = to.findOrCreateRow(id, hash, 0);
                MemorySegment.copy(s.data(row), 0, to.data(moved), 0, s.dataBytes());
                if (!s.isDirty(row)) {
                    to.markClean(moved);
                }
            }
            s.forEachPending((id, count) -> {
                long hash = KeyHash.local(id);
                fresh[stripeOf(hash, fresh.length)].putPending(id, hash, count);
            });
            for (long id : s.evictedSinceSave()) {
                fresh[stripeOf(KeyHash.local(id), fresh.length)].noteEvicted(id);
            }
        }
        if (config.admission() instanceof RowAdmission.CountingBloom) {
            if (old.length == fresh.length) {
                // the same slicing: each stripe's counters stay with the ids they counted
                for (int i = 0; i < fresh.length; i++) {
                    fresh[i].adoptBloom(old[i].bloom());
                }
            } else if (pending() > 0 || keys() > 0) {
                LOG.log(System.Logger.Level.WARNING, "sparse table " + name() + " (server " + server + "): its"
                        + " counting Bloom filter was kept in " + old.length + " stripes and the table now has "
                        + fresh.length + " (" + owners.size() + " owners); the filter's counts start from zero, the"
                        + " rows admitted so far stay");
            }
        }
        stripes = fresh;
    }

    public SparseTableConfig config() {
        return config;
    }

    public String name() {
        return config.name();
    }

    /**
     * The owner whose thread alone touches row {@code id}, {@link KeyHash#threadOf} for the shard's owners: where a
     * sharing-nothing transport sends its requests.
     */
    public int ownerOf(long id) {
        SparseStripe[] all = stripes;
        return all[stripeOf(KeyHash.local(id), all.length)].owner;
    }

    /** The owner that sums this table's pushes of a sync step ({@link KeyHash#ownerOfSteps}). */
    public int stepOwner() {
        return KeyHash.ownerOfSteps(config.name(), owners.size());
    }

    /**
     * The table's step: pushes applied so far over the pushes that make one step (1 in sync mode, whose servers apply
     * one averaged push per step; the number of workers otherwise, each pushing once a step). Rows are stamped with
     * it when updated, and {@code steps_to_live} and {@code shrink_every_steps} count in it.
     */
    public long step() {
        return pushes.get() / pushesPerStep;
    }

    /** Sets how many pushes make one step ({@link #step}); before serving. */
    void pushesPerStep(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("sparse table " + name() + ": " + count + " pushes per step");
        }
        pushesPerStep = count;
    }

    /** Restores the step a checkpoint was saved at. */
    void restoreStep(long step) {
        pushes.set(step * pushesPerStep);
    }

    /** Copies the rows of {@code n} ids into {@code out} ({@code n * dim} floats), creating missing rows. */
    public void pull(MemorySegment ids, int n, MemorySegment out) {
        ShardOwners.join(pullAsync(ids, n, out));
    }

    /** As {@link #pull}, done when the future is; nothing waits here. */
    public CompletableFuture<Void> pullAsync(MemorySegment ids, int n, MemorySegment out) {
        return pullAsync(ids, n, out, null);
    }

    /**
     * As {@link #pullAsync(MemorySegment, int, MemorySegment)}, and hands {@code keep} (here, before the rows are
     * found) the pull's {@link Lookup}: a push of the same ids given it ({@link #pushAsync(MemorySegment, int,
     * MemorySegment, Lookup)}) skips finding their rows again, as star_server's pull and push of one step do.
     */
    public CompletableFuture<Void> pullAsync(MemorySegment ids, int n, MemorySegment out, Consumer<Lookup> keep) {
        long rowBytes = config.dim() * (long) Float.BYTES;
        checkSizes(ids, n, out, "out");
        Lookup lookup = group(ids, n);
        if (keep != null) {
            keep.accept(lookup);
        }
        return forEachByStripe(lookup, PULL, out, rowBytes, step());
    }

    /**
     * Applies the gradients of {@code n} ids ({@code n * dim} floats). Duplicate ids are summed first (in the order
     * they come), as the worker's merge would, so each row is updated once per push.
     */
    public void push(MemorySegment ids, int n, MemorySegment grads) {
        ShardOwners.join(pushAsync(ids, n, grads));
    }

    /** As {@link #push}, done when the future is; nothing waits here. */
    public CompletableFuture<Void> pushAsync(MemorySegment ids, int n, MemorySegment grads) {
        return pushAsync(ids, n, grads, null);
    }

    /**
     * As {@link #pushAsync(MemorySegment, int, MemorySegment)}, reusing {@code pulled} (from a pull before it, or
     * null) where it holds exactly these ids for the table's present stripes: the ids are compared, not trusted.
     */
    public CompletableFuture<Void> pushAsync(MemorySegment ids, int n, MemorySegment grads, Lookup pulled) {
        checkSizes(ids, n, grads, "grads");
        Lookup lookup = pulled != null && pulled.holds(stripes, ids, n) ? pulled : null;
        if (lookup == null) {
            lookup = group(ids, n);
        } else {
            reusedLookups.increment();
        }
        long pushed = pushes.incrementAndGet();
        int perStep = pushesPerStep;
        CompletableFuture<Void> done = forEachByStripe(lookup, PUSH, grads, config.dim() * (long) Float.BYTES,
                pushed / perStep);
        long every = config.eviction().shrinkEverySteps();
        if (every > 0 && config.eviction().evicts() && pushed % perStep == 0 && (pushed / perStep) % every == 0) {
            // queued behind this push's parts on every owner, so it runs between requests; nothing waits for it
            shrinkAsync("every " + every + " steps");
        }
        return done;
    }

    /**
     * A request's ids grouped by stripe and, once its owners have looked them up, their rows: made by a pull on the
     * caller's thread, its rows found by each owner for its stripes, reusable by a push of the same ids while the
     * stripes stay (rows never move; only {@link #restripe} replaces the stripes). An owner whose part of the lookup
     * did not finish (it failed) finds its rows again when the push comes.
     */
    public static final class Lookup {
        private final SparseStripe[] stripes;
        /** The ids, one per position of the request (their count is the request's). */
        private final long[] idOf;
        private final long[] hashes;
        /** Stripe s's ids are order[start[s] .. start[s + 1]), in the order they came. */
        private final int[] start;
        private final int[] order;
        /** rowAt[k]: the row of id order[k]; each owner fills and reads only its own stripes' part. */
        private final int[] rowAt;
        /** Whether each owner has found its rows; written and read by that owner alone. */
        private final boolean[] found;
        /** Each stripe's {@link SparseStripe#generation} when its owner found its rows: a shrink since moved them. */
        private final int[] generations;
        private final boolean[] busy;
        private final int parts;

        private Lookup(SparseStripe[] stripes, long[] idOf, long[] hashes, int[] start, int[] order, boolean[] busy,
                       int parts) {
            this.stripes = stripes;
            this.idOf = idOf;
            this.hashes = hashes;
            this.start = start;
            this.order = order;
            this.rowAt = new int[idOf.length];
            this.found = new boolean[busy.length];
            this.generations = new int[stripes.length];
            this.busy = busy;
            this.parts = parts;
        }

        private boolean holds(SparseStripe[] current, MemorySegment ids, int count) {
            return stripes == current && idOf.length == count
                    && MemorySegment.mismatch(MemorySegment.ofArray(idOf), 0, (long) count * Long.BYTES, ids, 0,
                    (long) count * Long.BYTES) < 0;
        }
    }

    /** Pushes so far that used their pull's {@link Lookup} instead of finding their rows again. */
    long reusedLookups() {
        return reusedLookups.sum();
    }

    /** Rows held now. */
    public long keys() {
        long keys = 0;
        for (SparseStripe s : stripes) {
            keys += s.size();
        }
        return keys;
    }

    /** Ids a counter filter is counting, not admitted yet. */
    public long pending() {
        long pending = 0;
        for (SparseStripe s : stripes) {
            pending += s.pending();
        }
        return pending;
    }

    /** Rows evicted since the server started. */
    public long evictedRows() {
        return evictedRows.sum();
    }

    /** Off-heap bytes the shrinks gave back since the server started. */
    public long freedBytes() {
        return freedBytes.sum();
    }

    /** What the last shrink did ({@link ShrinkCounts#NONE} before the first). */
    public ShrinkCounts lastShrink() {
        return lastShrink.get();
    }

    /** Shrinks the table now ({@link RowEviction}) and waits for it; {@code why} goes to the server's log line. */
    public ShrinkCounts shrink(String why) {
        return shrinkAsync(why).join();
    }

    /**
     * Shrinks every stripe on its owner, one task per owner queued behind what it has (so between two requests),
     * and when all are done logs and counts what went: the server's log line names the table, the step, the rows
     * evicted by each rule and the bytes freed.
     */
    public CompletableFuture<ShrinkCounts> shrinkAsync(String why) {
        if (!config.eviction().evicts()) {
            return CompletableFuture.completedFuture(ShrinkCounts.NONE);
        }
        SparseStripe[] all = stripes;
        long step = step();
        ShrinkCounts[] perStripe = new ShrinkCounts[all.length];
        ShardOwners.Parts parts = new ShardOwners.Parts(owners.size());
        for (int owner = 0; owner < owners.size(); owner++) {
            int mine = owner;
            parts.run(owners, owner, () -> {
                for (int s = 0; s < all.length; s++) {
                    if (all[s].owner == mine) {
                        perStripe[s] = all[s].shrink(config.eviction(), step);
                    }
                }
            });
        }
        return parts.done().thenApply(done -> {
            ShrinkCounts total = ShrinkCounts.NONE;
            for (ShrinkCounts c : perStripe) {
                total = total.plus(c);
            }
            evictedRows.add(total.evicted());
            freedBytes.add(total.freedBytes());
            lastShrink.set(total);
            LOG.log(System.Logger.Level.INFO, String.format(Locale.ROOT, "sparse table %s (server %d):"
                    + " shrink at step %d (%s) evicted %,d of %,d rows (not updated for %d steps: %,d; L2 norm below"
                    + " %s: %,d; show/click score: %,d), freed %,d bytes; %,d rows remain", name(), server, step, why,
                    total.evicted(), total.rowsBefore(), config.eviction().stepsToLive(), total.byAge(),
                    config.eviction().l2WeightThreshold(), total.byL2(), total.byScore(), total.freedBytes(),
                    total.rowsBefore() - total.evicted()));
            return total;
        });
    }

    /** Off-heap bytes held: hash index and row chunks. */
    public long bytes() {
        long bytes = 0;
        for (SparseStripe s : stripes) {
            bytes += s.bytes();
        }
        return bytes;
    }

    /**
     * Visits every row, one stripe at a time on that stripe's owner, between two of its tasks: each record seen is
     * whole, its value and optimizer state from the same update, while pushes to other stripes go on. The visitor
     * runs on the owners' threads, one stripe after another (never two at once).
     */
    public void forEachRow(SparseStripe.RowVisitor visitor) {
        for (SparseStripe s : stripes) {
            owners.run(s.owner, () -> s.forEach(visitor));
        }
    }

    /**
     * Rows a save copies per task on an owner: a save holds an owner (and the requests queued behind it) for one
     * such chunk at a time, about 1 ms at memory speed, however large the table.
     */
    static final int SAVE_CHUNK_ROWS = 8192;

    /** Where a save's rows go: each id with its record and stats, in stripe order; {@link #truncate} drops a tail. */
    interface RowSink {
        void add(long id, MemorySegment data);

        long count();

        void truncate(long count);
    }

    /** A save's view of a table besides its rows: ids evicted since the last save, and the admission filter's state. */
    record SaveExtras(long[] removed, long[] pendingIds, int[] pendingCounts, List<MemorySegment> bloomSlices) {
    }

    /**
     * Copies the rows a save writes into {@code sink}: all of them, or with {@code changedOnly} those changed since
     * the last save. Each row is copied on its stripe's owner between two of its tasks, so its value, optimizer slots
     * and stats come from the same update, in chunks of {@link #SAVE_CHUNK_ROWS} rows while pushes go on; a shrink
     * that moves a stripe's rows during the copy makes that stripe start again. What changes after a stripe's copy
     * began is dirty for the next save. Call {@link #endSave} after writing, or after failing to.
     */
    SaveExtras beginSave(boolean changedOnly, RowSink sink) {
        SparseStripe[] all = stripes;
        eachOwner(all, SparseStripe::beginSave);
        for (SparseStripe s : all) {
            long mark = sink.count();
            int[] next = {0};
            int[] generation = {-1};
            boolean[] done = {false};
            while (!done[0]) {
                owners.run(s.owner, () -> {
                    if (generation[0] != s.generation()) {
                        sink.truncate(mark);
                        next[0] = 0;
                        generation[0] = s.generation();
                    }
                    int to = Math.min(s.size(), next[0] + SAVE_CHUNK_ROWS);
                    for (int row = next[0]; row < to; row++) {
                        if (!changedOnly || s.inSave(row)) {
                            sink.add(s.idOf(row), s.data(row));
                        }
                    }
                    next[0] = to;
                    done[0] = to >= s.size();
                });
            }
        }
        LongList removed = new LongList();
        LongList pendingIds = new LongList();
        List<Integer> counts = new ArrayList<>();
        List<MemorySegment> bloom = new ArrayList<>();
        for (SparseStripe s : all) {
            owners.run(s.owner, () -> {
                for (long id : s.removedInSave()) {
                    removed.add(id);
                }
                s.forEachPending((id, count) -> {
                    pendingIds.add(id);
                    counts.add(count);
                });
                if (s.bloom() != null) {
                    bloom.add(MemorySegment.ofArray(s.bloom().counters().toArray(ValueLayout.JAVA_BYTE)));
                }
            });
        }
        return new SaveExtras(removed.toArray(), pendingIds.toArray(),
                counts.stream().mapToInt(Integer::intValue).toArray(), bloom);
    }

    /** The save begun by {@link #beginSave} ended: {@code written} false makes what it held dirty again. */
    void endSave(boolean written) {
        eachOwner(stripes, s -> s.endSave(written));
    }

    /** The table now equals the checkpoint it was loaded from. */
    void markClean() {
        eachOwner(stripes, SparseStripe::markClean);
    }

    /** Removes the rows of {@code ids} that exist (a load applying an incremental save's removals). */
    void removeRows(long[] ids) {
        SparseStripe[] all = stripes;
        eachOwner(all, s -> {
            for (long id : ids) {
                long hash = KeyHash.local(id);
                if (all[stripeOf(hash, all.length)] == s) {
                    s.removeRow(id, hash);
                }
            }
        });
    }

    /** Records a counter filter's counts (a load). */
    void putPending(long[] ids, int[] counts) {
        SparseStripe[] all = stripes;
        eachOwner(all, s -> {
            for (int i = 0; i < ids.length; i++) {
                long hash = KeyHash.local(ids[i]);
                if (all[stripeOf(hash, all.length)] == s && s.findRow(ids[i], hash) < 0) {
                    s.putPending(ids[i], hash, counts[i]);
                }
            }
        });
    }

    /** Restores the counting Bloom filter's counters, one slice per stripe in order, when the slicing is the same. */
    boolean restoreBloom(List<MemorySegment> slices) {
        SparseStripe[] all = stripes;
        if (slices.size() != all.length || all[0].bloom() == null
                || slices.getFirst().byteSize() != all[0].bloom().length()) {
            return false;
        }
        for (int i = 0; i < all.length; i++) {
            SparseStripe s = all[i];
            MemorySegment slice = slices.get(i);
            owners.run(s.owner, () -> MemorySegment.copy(slice, 0, s.bloom().counters(), 0, slice.byteSize()));
        }
        return true;
    }

    /** Runs {@code work} on every stripe, on its owner: one task per owner, waited for. */
    private void eachOwner(SparseStripe[] all, Consumer<SparseStripe> work) {
        ShardOwners.Parts parts = new ShardOwners.Parts(owners.size());
        for (int owner = 0; owner < owners.size(); owner++) {
            int mine = owner;
            parts.run(owners, owner, () -> {
                for (SparseStripe s : all) {
                    if (s.owner == mine) {
                        work.accept(s);
                    }
                }
            });
        }
        ShardOwners.join(parts.done());
    }

    /** A growable list of longs, for what a save gathers. */
    private static final class LongList {
        private long[] values = new long[16];
        private int size;

        void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(values, size);
        }
    }

    /** Floats of a row's record and stats ({@link RowStats}): what {@link #putRecords} takes per id. */
    public long dataFloats() {
        return config.optimizer().recordFloats(config.dim()) + rowStats.floats();
    }

    RowStats rowStats() {
        return rowStats;
    }

    SparseStripe[] stripes() {
        return stripes;
    }

    ShardOwners owners() {
        return owners;
    }

    static int stripeOfId(long id, int stripes) {
        return stripeOf(KeyHash.local(id), stripes);
    }

    /**
     * Replaces (or creates) the whole records and stats of {@code n} ids, given back to back in {@code records} (each
     * {@link #dataFloats} long; a stats int is its float's bits): one task per owner, so a checkpoint loads at table
     * speed.
     */
    public void putRecords(long[] ids, float[] records, int n) {
        long floats = dataFloats();
        MemorySegment all = MemorySegment.ofArray(records);
        MemorySegment idSegment = MemorySegment.ofArray(Arrays.copyOf(ids, n));
        ShardOwners.join(forEachByStripe(group(idSegment, n), PUT, all, floats * Float.BYTES, step()));
    }

    /** Row {@code id}'s record copied out, or null when the table has no such row (nothing is created). */
    public float[] peekRecord(long id) {
        long hash = KeyHash.local(id);
        SparseStripe[] all = stripes;
        SparseStripe s = all[stripeOf(hash, all.length)];
        float[][] out = new float[1][];
        owners.run(s.owner, () -> {
            MemorySegment r = s.find(id, hash);
            out[0] = r == null ? null : r.toArray(ValueLayout.JAVA_FLOAT);
        });
        return out[0];
    }

    private static int stripeOf(long hash, int stripes) {
        return (int) Math.unsignedMultiplyHigh(hash, stripes);
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

    /** What {@link #forEachByStripe} does with each id's row: copy it out, apply its gradient, or replace it. */
    private static final int PULL = 0;
    private static final int PUSH = 1;
    private static final int PUT = 2;

    /** Groups the ids by stripe: a counting sort on the caller's thread, stable (a stripe's ids keep their order). */
    private Lookup group(MemorySegment ids, int n) {
        SparseStripe[] stripes = this.stripes;
        long[] idOf = new long[n];
        long[] hashes = new long[n];
        int[] start = new int[stripes.length + 1];
        for (int i = 0; i < n; i++) {
            idOf[i] = ids.getAtIndex(ID, i);
            hashes[i] = KeyHash.local(idOf[i]);
            start[stripeOf(hashes[i], stripes.length) + 1]++;
        }
        for (int s = 0; s < stripes.length; s++) {
            start[s + 1] += start[s];
        }
        int[] order = new int[n];
        int[] fill = start.clone();
        for (int i = 0; i < n; i++) {
            order[fill[stripeOf(hashes[i], stripes.length)]++] = i;
        }
        boolean[] busy = new boolean[owners.size()];
        int parts = 0;
        for (int s = 0; s < stripes.length; s++) {
            if (start[s] < start[s + 1] && !busy[stripes[s].owner]) {
                busy[stripes[s].owner] = true;
                parts++;
            }
        }
        return new Lookup(stripes, idOf, hashes, start, order, busy, parts);
    }

    /**
     * Has each owner with ids in {@code lookup} do {@code op} to the rows of its stripes' ids, one task per owner (in
     * place when the caller is that owner's thread, see {@link ShardOwners}). Id {@code i}'s part of {@code data} is
     * the {@code stride} bytes at {@code i * stride}: the row pulled into, the gradient pushed, or the whole record
     * put. Per stripe, first every id's row is found (unless a pull of the same lookup found them;
     * {@link SparseStripe#touchSlots} ahead of each 64), then a push checks the rows for repeats
     * ({@link SparseStripe#repeatsAny}: a bit per row, cheaper than a hash set per push), then
     * each op runs ({@link SparseStripe#touchRows} ahead of each 64). One loop with a switch rather than a callback
     * per op, so that the per-row work does not depend on how many ops share the call site; with only pull and push
     * in play the two measured the same (SparseTableStepBench), and a pull here copies from the row chunk without a
     * slice.
     */
    private CompletableFuture<Void> forEachByStripe(Lookup lookup, int op, MemorySegment data, long stride, long step) {
        SparseStripe[] stripes = lookup.stripes;
        int[] start = lookup.start;
        int[] order = lookup.order;
        int[] rowAt = lookup.rowAt;
        long[] idOf = lookup.idOf;
        long[] hashes = lookup.hashes;
        ServerOptimizer optimizer = config.optimizer();
        RowInitializer initializer = config.initializer();
        long width = config.dim();
        int[] generations = lookup.generations;
        ShardOwners.Parts request = new ShardOwners.Parts(lookup.parts);
        int count = lookup.busy.length;
        int here = owners.ownerHere();
        if (here >= count) {
            here = -1;
        }
        // the other owners' parts are queued first and this thread's own part (if any) runs last, in place, while
        // they run: the request is done sooner, and its reply goes out from here without another hand-off
        for (int next = 1; next <= count; next++) {
            int owner = here < 0 ? next - 1 : (here + next) % count;
            if (!lookup.busy[owner]) {
                continue;
            }
            request.run(owners, owner, () -> {
                long touched = 0;
                if (!lookup.found[owner] || moved(stripes, generations, owner)) {
                    for (int s = 0; s < stripes.length; s++) {
                        SparseStripe stripe = stripes[s];
                        if (stripe.owner != owner) {
                            continue;
                        }
                        generations[s] = stripe.generation();
                        for (int from = start[s]; from < start[s + 1]; from += TOUCH_AHEAD) {
                            int to = Math.min(from + TOUCH_AHEAD, start[s + 1]);
                            touched += stripe.touchSlots(hashes, order, from, to);
                            for (int k = from; k < to; k++) {
                                int i = order[k];
                                rowAt[k] = switch (op) {
                                    case PULL -> stripe.admitRow(idOf[i], hashes[i], step);
                                    case PUSH -> stripe.pushRow(idOf[i], hashes[i], step);
                                    default -> stripe.findOrCreateRow(idOf[i], hashes[i], step);
                                };
                            }
                        }
                    }
                    lookup.found[owner] = true;
                }
                for (int s = 0; s < stripes.length; s++) {
                    SparseStripe stripe = stripes[s];
                    int lo = start[s];
                    int hi = start[s + 1];
                    if (stripe.owner != owner || lo == hi) {
                        continue;
                    }
                    if (op == PUSH && stripe.repeatsAny(rowAt, lo, hi)) {
                        pushRepeated(stripe, order, rowAt, lo, hi, data, stride, optimizer, width, step);
                        continue;
                    }
                    for (int from = lo; from < hi; from += TOUCH_AHEAD) {
                        int to = Math.min(from + TOUCH_AHEAD, hi);
                        touched += stripe.touchRows(rowAt, from, to);
                        for (int k = from; k < to; k++) {
                            int i = order[k];
                            int row = rowAt[k];
                            if (row < 0) {
                                // not admitted: a pull reads the row the initializer would make; a push is dropped
                                if (op == PULL) {
                                    initializer.fill(idOf[i], data.asSlice(i * stride, stride), width);
                                }
                                continue;
                            }
                            switch (op) {
                                case PULL -> {
                                    stripe.copyOut(row, data, i * stride, stride);
                                    stripe.pulled(row);
                                }
                                case PUSH -> {
                                    optimizer.apply(stripe.record(row), data.asSlice(i * stride, stride), width);
                                    stripe.updated(row, step);
                                }
                                default -> MemorySegment.copy(data, i * stride, stripe.data(row), 0, stride);
                            }
                        }
                    }
                }
                touchSink = touched;
            });
        }
        return request.done();
    }

    /** Whether a shrink moved the rows of one of {@code owner}'s stripes since the lookup found them. On the owner. */
    private static boolean moved(SparseStripe[] stripes, int[] generations, int owner) {
        for (int s = 0; s < stripes.length; s++) {
            if (stripes[s].owner == owner && stripes[s].generation() != generations[s]) {
                return true;
            }
        }
        return false;
    }

    /**
     * A push whose ids repeat in this stripe (rare: workers merge their duplicates): each row's gradients are summed,
     * in the order they came, into native memory (where the update rules' vector loads run at full speed) and the
     * row is updated once with the sum.
     */
    private static void pushRepeated(SparseStripe stripe, int[] order, int[] rowAt, int lo, int hi, MemorySegment data,
                                     long stride, ServerOptimizer optimizer, long width, long step) {
        Map<Integer, Integer> firstOf = new HashMap<>();
        MemorySegment sums = Arena.ofAuto().allocate((hi - lo) * stride, 64);
        for (int k = lo; k < hi; k++) {
            if (rowAt[k] < 0) {
                continue;
            }
            Integer first = firstOf.putIfAbsent(rowAt[k], k);
            MemorySegment grad = data.asSlice(order[k] * stride, stride);
            if (first == null) {
                MemorySegment.copy(grad, 0, sums, (k - lo) * stride, stride);
            } else {
                F32.accumulate(sums.asSlice((first - lo) * stride, stride), grad, width);
            }
        }
        for (int k = lo; k < hi; k++) {
            if (rowAt[k] >= 0 && firstOf.get(rowAt[k]) == k) {
                optimizer.apply(stripe.record(rowAt[k]), sums.asSlice((k - lo) * stride, stride), width);
                stripe.updated(rowAt[k], step);
            }
        }
    }
}
