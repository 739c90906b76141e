package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.fleet4j.text.Quoted;

/**
 * Server {@code server} of {@code servers}: its blocks of every dense table and its share of every sparse table. This
 * is what a transport calls; every method may be called from many threads at once. There is no lock: each dense
 * block and sparse stripe has one owner ({@link ShardOwners}, by default a thread per core up to 4) that alone
 * reads and writes it, a request is split by owner and queued to them (a lock-free queue each), and the caller waits
 * for its parts, or gets a future from the {@code ...Async} calls. A sharing-nothing transport asks
 * {@link #ownerOfSparse}/{@link #ownerOfDense} where a request's parts live and can make its own network threads
 * the owners ({@link #runOn}); a request then made on the owning network thread runs right there. Sparse ids must
 * belong to this server ({@link KeyHash#serverOf}); the worker routes them. The synchronous calls must not be made on
 * an owner's thread for another owner's parts (two owners could wait for each other); use the {@code ...Async} ones.
 */
public final class TableShard {
    private final int server;
    private final int servers;
    private final long minBlockSize;
    private final List<DenseTableConfig> denseConfigs;
    private final Map<String, Map<Integer, DenseBlock>> dense = new LinkedHashMap<>();
    private final Map<String, SparseTable> sparse = new LinkedHashMap<>();
    private final ShardOwners owners;
    /** Set for sync mode before serving: pushes are averaged per step; null applies each push as it comes. */
    private volatile StepAggregation sync;
    /** This server's last save or load, which an incremental save chains to; null before either. */
    private volatile LastSave lastSave;

    /** Where this server's last save (or the checkpoint it loaded) is, and its save id. */
    public record LastSave(Path dir, String saveId) {
    }

    public TableShard(int server, int servers, List<DenseTableConfig> denseTables, List<SparseTableConfig> sparseTables,
                      long minBlockSize) {
        if (server < 0 || server >= servers) {
            throw new IllegalArgumentException("server " + server + " is not in [0, " + servers + ")");
        }
        this.server = server;
        this.servers = servers;
        this.minBlockSize = minBlockSize;
        this.denseConfigs = List.copyOf(denseTables);
        this.owners = new ShardOwners(ShardOwners.defaultCount(), "ps-table-owner-" + server);
        Map<String, DenseTableConfig> byName = new LinkedHashMap<>();
        for (DenseTableConfig c : denseTables) {
            requireNew(c.name());
            byName.put(c.name(), c);
            dense.put(c.name(), new LinkedHashMap<>());
        }
        for (DenseSlicing.Block b : DenseSlicing.planTables(denseTables, servers, minBlockSize)) {
            if (b.server() == server) {
                dense.get(b.param()).put(b.block(), new DenseBlock(b, byName.get(b.param()), owners));
            }
        }
        for (SparseTableConfig c : sparseTables) {
            requireNew(c.name());
            sparse.put(c.name(), new SparseTable(c, owners, server, servers));
        }
    }

    public TableShard(int server, int servers, List<DenseTableConfig> denseTables, List<SparseTableConfig> sparseTables) {
        this(server, servers, denseTables, sparseTables, DenseSlicing.DEFAULT_MIN_BLOCK_SIZE);
    }

    private void requireNew(String name) {
        if (dense.containsKey(name) || sparse.containsKey(name)) {
            throw new IllegalArgumentException("table " + name + " is configured twice");
        }
    }

    public int server() {
        return server;
    }

    public int servers() {
        return servers;
    }

    public long minBlockSize() {
        return minBlockSize;
    }

    /** How many owners this shard's blocks and stripes are split over. */
    public int owners() {
        return owners.size();
    }

    /** The owner of row {@code id} of sparse table {@code table}. */
    public int ownerOfSparse(String table, long id) {
        return sparseTable(table).ownerOf(id);
    }

    /** The owner of block {@code block} of dense table {@code param}. */
    public int ownerOfDense(String param, int block) {
        return denseBlock(param, block).owner();
    }

    /** The owner that sums a sync-mode step's pushes of sparse table {@code table} (they all go there whole). */
    public int ownerOfSparseSteps(String table) {
        return sparseTable(table).stepOwner();
    }

    /**
     * From now on owner {@code i} is {@code executors.get(i)}, e.g. a transport's network threads: the shard's
     * parts are split anew over {@code executors.size()} owners (rows already held move with their stripes), so
     * {@link #ownerOfSparse} is {@link KeyHash#threadOf} and {@link #ownerOfDense} is {@link KeyHash#ownerOfBlock}
     * for that count. Each executor must run all its tasks on one thread of its own, one at a time in order; work
     * asked for on that thread runs there at once, without a queue. Call it while no request is being served (before
     * serving starts).
     */
    public void runOn(List<? extends Executor> executors) {
        owners.replace(executors);
        sparse.values().forEach(SparseTable::restripe);
    }

    /**
     * Back to owner threads of the shard's own (as many as by default), e.g. when the transport whose executors
     * owned the parts has stopped them. As {@link #runOn}, while no request is being served.
     */
    public void runOnOwnThreads() {
        owners.useOwnThreads(ShardOwners.defaultCount());
        sparse.values().forEach(SparseTable::restripe);
    }

    public List<DenseTableConfig> denseConfigs() {
        return denseConfigs;
    }

    public List<SparseTableConfig> sparseConfigs() {
        return sparse.values().stream().map(SparseTable::config).toList();
    }

    /** This server's dense blocks, in plan order. */
    public List<DenseBlock> denseBlocks() {
        List<DenseBlock> all = new ArrayList<>();
        dense.values().forEach(m -> all.addAll(m.values()));
        return all;
    }

    public DenseBlock denseBlock(String param, int block) {
        Map<Integer, DenseBlock> blocks = dense.get(param);
        if (blocks == null) {
            throw new TableException("server " + server + " has no dense table " + Quoted.bare(param) + "; its dense tables are "
                    + dense.keySet());
        }
        DenseBlock b = blocks.get(block);
        if (b == null) {
            throw new TableException("server " + server + " does not hold block " + block + " of dense table " + Quoted.bare(param)
                    + "; it holds blocks " + blocks.keySet() + " (see DenseSlicing.plan for the owner)");
        }
        return b;
    }

    public SparseTable sparseTable(String table) {
        SparseTable t = sparse.get(table);
        if (t == null) {
            throw new TableException("server " + server + " has no sparse table " + Quoted.bare(table) + "; its sparse tables are "
                    + sparse.keySet());
        }
        return t;
    }

    /**
     * Sync mode: from now on each dense block and sparse table applies one averaged update per step, once all
     * {@code workers} workers have pushed it (a worker with no ids for this server pushes an empty batch).
     */
    public void aggregateSteps(int workers) {
        sync = new StepAggregation(workers, owners, denseBlocks(), sparse.values());
        sparse.values().forEach(t -> t.pushesPerStep(1));
    }

    /**
     * Pushes apply as they come, each of {@code workers} workers pushing every table once a step: a sparse table's
     * step ({@link SparseTable#step}, what eviction counts in) is its pushes over {@code workers}.
     */
    public void countStepsOver(int workers) {
        sparse.values().forEach(t -> t.pushesPerStep(workers));
    }

    /** Shrinks every sparse table that evicts ({@link RowEviction}) and waits; {@code why} goes to the log. */
    public void shrink(String why) {
        sparse.values().forEach(t -> t.shrink(why));
    }

    /** The workers a sync-mode step waits for; 0 when pushes apply as they come. */
    public int syncWorkers() {
        StepAggregation s = sync;
        return s == null ? 0 : s.workers();
    }

    public void pullDense(String param, int block, MemorySegment out) {
        ShardOwners.join(pullDenseAsync(param, block, out));
    }

    public void pushDense(String param, int block, MemorySegment grad) {
        ShardOwners.join(pushDenseAsync(param, block, grad));
    }

    public void pullSparse(String table, MemorySegment ids, int n, MemorySegment out) {
        ShardOwners.join(pullSparseAsync(table, ids, n, out));
    }

    public void pushSparse(String table, MemorySegment ids, int n, MemorySegment grads) {
        ShardOwners.join(pushSparseAsync(table, ids, n, grads));
    }

    /**
     * As {@link #pullDense}, queued to the block's owner; the future is done when {@code out} is filled. A request
     * the tables cannot serve fails here, before anything is queued.
     */
    public CompletableFuture<Void> pullDenseAsync(String param, int block, MemorySegment out) {
        return denseBlock(param, block).pullAsync(out);
    }

    /** As {@link #pushDense}; the future is done when the gradient is taken ({@code grad} may be reused then). */
    public CompletableFuture<Void> pushDenseAsync(String param, int block, MemorySegment grad) {
        StepAggregation s = sync;
        return s != null ? s.pushDense(denseBlock(param, block), grad) : denseBlock(param, block).pushAsync(grad);
    }

    /** As {@link #pullSparse}, split over the owners of the ids' stripes. */
    public CompletableFuture<Void> pullSparseAsync(String table, MemorySegment ids, int n, MemorySegment out) {
        return pullSparseAsync(table, ids, n, out, null);
    }

    /** As {@link #pullSparseAsync(String, MemorySegment, int, MemorySegment)}, handing {@code keep} its lookup. */
    public CompletableFuture<Void> pullSparseAsync(String table, MemorySegment ids, int n, MemorySegment out,
                                                   Consumer<SparseTable.Lookup> keep) {
        SparseTable t = sparseTable(table);
        requireOwned(table, ids, n);
        return t.pullAsync(ids, n, out, keep);
    }

    /** As {@link #pushSparse}; the future is done when the gradients are taken. */
    public CompletableFuture<Void> pushSparseAsync(String table, MemorySegment ids, int n, MemorySegment grads) {
        return pushSparseAsync(table, ids, n, grads, null);
    }

    /**
     * As {@link #pushSparseAsync(String, MemorySegment, int, MemorySegment)}, reusing {@code pulled} (a pull's
     * lookup, or null) where it holds exactly these ids ({@link SparseTable#pushAsync(MemorySegment, int,
     * MemorySegment, SparseTable.Lookup)}); a sync step's pushes are summed first and use none.
     */
    public CompletableFuture<Void> pushSparseAsync(String table, MemorySegment ids, int n, MemorySegment grads,
                                                   SparseTable.Lookup pulled) {
        SparseTable t = sparseTable(table);
        requireOwned(table, ids, n);
        StepAggregation s = sync;
        return s != null ? s.pushSparse(t, ids, n, grads) : t.pushAsync(ids, n, grads, pulled);
    }

    /** A misrouted id would live on two servers at once and one copy would win at the next load. */
    private void requireOwned(String table, MemorySegment ids, int n) {
        if (servers == 1) {
            return;
        }
        for (int i = 0; i < n && i < ids.byteSize() / Long.BYTES; i++) {
            long id = ids.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
            int owner = KeyHash.serverOf(id, servers);
            if (owner != server) {
                throw new TableException("sparse table " + table + ": id " + id + " belongs to server " + owner
                        + " of " + servers + ", not to server " + server + "; route ids with KeyHash.serverOf");
            }
        }
    }

    /** Keys and bytes of every table, dense first. */
    public List<TableStats> stats() {
        List<TableStats> out = new ArrayList<>();
        dense.forEach((name, blocks) -> out.add(new TableStats(name, "dense",
                blocks.values().stream().mapToLong(b -> b.spec().numel()).sum(),
                blocks.values().stream().mapToLong(DenseBlock::bytes).sum())));
        sparse.forEach((name, t) -> out.add(new TableStats(name, "sparse", t.keys(), t.bytes(), 0, t.pending(),
                t.evictedRows(), t.freedBytes())));
        return out;
    }

    /**
     * Writes this server's shard of every table to {@code dir} as part of {@code save} (see {@link ShardCheckpoint}):
     * every server of one save is given the same identity, so that a load can tell its shards from another save's.
     */
    public void save(Path dir, SaveIdentity save) {
        ShardCheckpoint.save(this, dir, save);
    }

    /** The save an incremental save would chain to, or null. */
    public LastSave lastSave() {
        return lastSave;
    }

    void lastSave(LastSave save) {
        lastSave = save;
    }

    /**
     * Fills this server's tables from a checkpoint saved by any number of servers: a folder of full saves, or of
     * incremental ones, whose chains are followed back to their full saves.
     */
    public void load(Path dir) {
        ShardCheckpoint.load(dir, this);
    }
}
