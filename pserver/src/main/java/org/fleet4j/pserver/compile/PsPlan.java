package org.fleet4j.pserver.compile;

import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.ir.Program;
import org.fleet4j.pserver.table.DenseSlicing;
import org.fleet4j.pserver.table.DenseTableConfig;
import org.fleet4j.pserver.table.RowAdmission;
import org.fleet4j.pserver.table.ServerOptimizer;
import org.fleet4j.pserver.table.SparseTableConfig;
import org.fleet4j.pserver.table.TableShard;

/**
 * What the PS compile step yields: the worker's programs (no optimizer ops; pulls and pushes instead) and the tables
 * of the servers: dense parameters cut into blocks over {@code servers} servers ({@link DenseSlicing}), and sparse
 * tables whose rows every server holds a share of (by {@link org.fleet4j.pserver.table.KeyHash}).
 */
public record PsPlan(PsMode mode, int servers, long minBlockSize, Program workerMain, Program workerStartup,
                     List<DenseTableConfig> denseTables, List<SparseTableConfig> sparseTables, String protocol,
                     boolean fused, CommunicatorSettings communicator) {
    public PsPlan {
        denseTables = List.copyOf(denseTables);
        sparseTables = List.copyOf(sparseTables);
    }

    /** Which block of which dense table lives on which server. */
    public List<DenseSlicing.Block> denseBlocks() {
        return DenseSlicing.planTables(denseTables, servers, minBlockSize);
    }

    /**
     * The tables of server {@code server}: its dense blocks and its share of every sparse table. In geo mode the
     * tables' optimizers run on the workers, and the server's tables add the workers' deltas ({@link
     * ServerOptimizer.Delta}).
     */
    public TableShard shard(int server) {
        if (mode != PsMode.GEO) {
            return new TableShard(server, servers, denseTables, sparseTables, minBlockSize);
        }
        ServerOptimizer delta = new ServerOptimizer.Delta();
        return new TableShard(server, servers,
                denseTables.stream().map(t -> new DenseTableConfig(t.name(), t.shape(), delta, t.initializer())).toList(),
                sparseTables.stream().map(t -> t.withOptimizer(delta))
                        .toList(),
                minBlockSize);
    }

    /** The split as {@code --dry_run} prints it: the mode, each table with its optimizer, and what each server holds. */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append("parameter-server plan: mode ").append(mode.spelling()).append(", ").append(servers)
                .append(servers == 1 ? " server" : " servers").append('\n');
        s.append(communicator.describe(mode)).append('\n');
        s.append("dense tables (").append(denseTables.size()).append("), cut into blocks of at least ")
                .append(minBlockSize).append(" elements:\n");
        for (DenseTableConfig t : denseTables) {
            s.append("  ").append(t.name()).append(' ').append(Arrays.toString(t.shape())).append(' ')
                    .append(t.optimizer()).append('\n');
        }
        s.append("sparse tables (").append(sparseTables.size()).append("), rows spread over all servers by id hash:\n");
        for (SparseTableConfig t : sparseTables) {
            s.append("  ").append(t.name()).append(" dim ").append(t.dim()).append(' ').append(t.optimizer())
                    .append(", rows start ").append(t.initializer()).append('\n');
            if (!(t.admission() instanceof RowAdmission.Everyone) || t.eviction().evicts()) {
                s.append("    rows: ").append(t.admission().describe()).append("; ").append(t.eviction().describe())
                        .append('\n');
            }
        }
        List<DenseSlicing.Block> blocks = denseBlocks();
        for (int i = 0; i < servers; i++) {
            s.append("server ").append(i).append(":\n");
            for (DenseSlicing.Block b : blocks) {
                if (b.server() == i) {
                    s.append("  dense ").append(b.param()).append(".block").append(b.block()).append(" [")
                            .append(b.offset()).append(", ").append(b.offset() + b.numel()).append(")\n");
                }
            }
            if (!sparseTables.isEmpty()) {
                s.append("  sparse: the rows of all ").append(sparseTables.size())
                        .append(" tables whose id has KeyHash.serverOf(id, ").append(servers).append(") = ").append(i)
                        .append('\n');
            }
        }
        s.append("transport: protocol ").append(protocol).append(", ").append(fused
                ? "tensor_fuse: one pull (pull_fused, at the step's start) and one push (push_fused, after backward)"
                        + " per server per step"
                : "one call per dense block and per sparse table").append('\n');
        if (protocol.equals("star_server_lite")) {
            s.append("  star_server_lite: the next step's pull overlaps this step's push, so a worker reads values one"
                    + " step stale (its own last push not yet applied); star_server reads after its own writes\n");
        }
        s.append(mode == PsMode.GEO
                ? "optimizers: on the workers, over their local copies (the schedule's base_lr, constant); the servers add deltas\n"
                : "learning rate: constant on the servers (the schedule's base_lr)\n");
        return s.toString();
    }
}
