package org.fleet4j.pserver.table;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
    /** Replaced only by {@link #restripe}, before serving or after it (nothing runs at the same time then). */
    private volatile SparseStripe[] stripes;
    /** Pushes that used their pull's lookup (for tests). */
    private final LongAdder reusedLookups = new LongAdder();

    /** A table on its own, with owner threads of its own. */
    SparseTable(SparseTableConfig config) {
        this(config, new ShardOwners(ShardOwners.defaultCount(), "ps-table-" + config.name()));
    }

    /** A table of a shard, split over the shard's owners. */
    SparseTable(SparseTableConfig config, ShardOwners owners) {
        this.config = config;
        this.owners = owners;
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
        for (int i = 0; i < fresh.length; i++) {
            fresh[i] = new SparseStripe(config.name(), config.dim(), config.optimizer(), config.initializer(),
                    i / perOwner);
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
        long recordBytes = config.optimizer().recordFloats(config.dim()) * Float.BYTES;
        for (SparseStripe s : old) {
            s.forEach((id, record) -> {
                long hash = KeyHash.local(id);
                MemorySegment moved = fresh[stripeOf(hash, fresh.length)].findOrCreate(id, hash);
                MemorySegment.copy(record, 0, moved, 0, recordBytes);
            });
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
        return forEachByStripe(lookup, PULL, out, rowBytes);
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
        return forEachByStripe(lookup, PUSH, grads, config.dim() * (long) Float.BYTES);
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

    /** Replaces (or creates) row {@code id}'s whole record. */
    public void putRecord(long id, MemorySegment record) {
        putRecords(new long[]{id}, record.toArray(ServerOptimizer.F), 1);
    }

    /**
     * Replaces (or creates) the whole records of {@code n} ids, given back to back in {@code records} (each
     * {@link ServerOptimizer#recordFloats} long): one task per owner, so a checkpoint loads at table speed.
     */
    public void putRecords(long[] ids, float[] records, int n) {
        long recordFloats = config.optimizer().recordFloats(config.dim());
        MemorySegment all = MemorySegment.ofArray(records);
        MemorySegment idSegment = MemorySegment.ofArray(Arrays.copyOf(ids, n));
        long recordBytes = recordFloats * Float.BYTES;
        ShardOwners.join(forEachByStripe(group(idSegment, n), PUT, all, recordBytes));
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
    private CompletableFuture<Void> forEachByStripe(Lookup lookup, int op, MemorySegment data, long stride) {
        SparseStripe[] stripes = lookup.stripes;
        int[] start = lookup.start;
        int[] order = lookup.order;
        int[] rowAt = lookup.rowAt;
        long[] idOf = lookup.idOf;
        long[] hashes = lookup.hashes;
        ServerOptimizer optimizer = config.optimizer();
        long width = config.dim();
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
                if (!lookup.found[owner]) {
                    for (int s = 0; s < stripes.length; s++) {
                        SparseStripe stripe = stripes[s];
                        if (stripe.owner != owner) {
                            continue;
                        }
                        for (int from = start[s]; from < start[s + 1]; from += TOUCH_AHEAD) {
                            int to = Math.min(from + TOUCH_AHEAD, start[s + 1]);
                            touched += stripe.touchSlots(hashes, order, from, to);
                            for (int k = from; k < to; k++) {
                                int i = order[k];
                                rowAt[k] = stripe.findOrCreateRow(idOf[i], hashes[i]);
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
                        pushRepeated(stripe, order, rowAt, lo, hi, data, stride, optimizer, width);
                        continue;
                    }
                    for (int from = lo; from < hi; from += TOUCH_AHEAD) {
                        int to = Math.min(from + TOUCH_AHEAD, hi);
                        touched += stripe.touchRows(rowAt, from, to);
                        for (int k = from; k < to; k++) {
                            int i = order[k];
                            int row = rowAt[k];
                            switch (op) {
                                case PULL -> stripe.copyOut(row, data, i * stride, stride);
                                case PUSH -> optimizer.apply(stripe.record(row), data.asSlice(i * stride, stride), width);
                                default -> MemorySegment.copy(data, i * stride, stripe.record(row), 0, stride);
                            }
                        }
                    }
                }
                touchSink = touched;
            });
        }
        return request.done();
    }

    /**
     * A push whose ids repeat in this stripe (rare: workers merge their duplicates): each row's gradients are summed,
     * in the order they came, into native memory (where the update rules' vector loads run at full speed) and the
     * row is updated once with the sum.
     */
    private static void pushRepeated(SparseStripe stripe, int[] order, int[] rowAt, int lo, int hi, MemorySegment data,
                                     long stride, ServerOptimizer optimizer, long width) {
        Map<Integer, Integer> firstOf = new HashMap<>();
        MemorySegment sums = Arena.ofAuto().allocate((hi - lo) * stride, 64);
        for (int k = lo; k < hi; k++) {
            Integer first = firstOf.putIfAbsent(rowAt[k], k);
            MemorySegment grad = data.asSlice(order[k] * stride, stride);
            if (first == null) {
                MemorySegment.copy(grad, 0, sums, (k - lo) * stride, stride);
            } else {
                F32.accumulate(sums.asSlice((first - lo) * stride, stride), grad, width);
            }
        }
        for (int k = lo; k < hi; k++) {
            if (firstOf.get(rowAt[k]) == k) {
                optimizer.apply(stripe.record(rowAt[k]), sums.asSlice((k - lo) * stride, stride), width);
            }
        }
    }
}
