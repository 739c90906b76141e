package org.fleet4j.strategy.rules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.strategy.ConsistencyRules;
import org.fleet4j.strategy.DistributedStrategy;
import org.fleet4j.strategy.schema.Field;
import org.fleet4j.strategy.schema.StrategyException;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * Paddle Fleet's rules that adapt a strategy to the world it runs on, each change recorded with its
 * reason, and the contradictions that only the world reveals.
 */
final class WorldRules {
    private final DistributedStrategy requested;
    private final World world;
    private final Map<Field<?>, Object> values;
    private final List<Change> changes = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    private WorldRules(DistributedStrategy requested, World world) {
        this.requested = requested;
        this.world = world;
        this.values = new LinkedHashMap<>(requested.snapshot().values());
    }

    /** The resolved values and their changes; throws when the world contradicts the strategy. */
    static WorldRules apply(DistributedStrategy requested, World world) {
        WorldRules rules = new WorldRules(requested, world);
        if (requested.get(StrategySchema.MODE).equals("collective")) {
            rules.singleWorker();
            rules.syncBatchNorm();
            rules.hierarchicalAllreduce();
            rules.syncAllreduceThreads();
        }
        if (!rules.problems.isEmpty()) {
            throw new StrategyException(rules.problems);
        }
        return rules;
    }

    Map<Field<?>, Object> values() {
        return values;
    }

    List<Change> changes() {
        return changes;
    }

    private void singleWorker() {
        if (world.size() != 1) {
            return;
        }
        change(StrategySchema.NCCL_COMM_NUM, 1, "a single worker has nobody to allreduce with, so one communicator is enough");
        change(StrategySchema.FUSE_ALL_REDUCE_OPS, false, "a single worker runs no allreduce, so there is nothing to fuse");
    }

    private void syncBatchNorm() {
        if (!get(StrategySchema.SYNC_BATCH_NORM)) {
            return;
        }
        change(StrategySchema.NCCL_COMM_NUM, 1,
                "sync_batch_norm needs every rank to issue its allreduces in the same order, on one communicator");
        change(StrategySchema.EXEC_NUM_THREADS, 1,
                "sync_batch_norm hangs when several executor threads order its allreduces differently on each rank");
        change(StrategySchema.USE_HIERARCHICAL_ALLREDUCE, false,
                "sync_batch_norm allreduces its statistics on one flat communicator");
        change(StrategySchema.BUILD_FUSE_BN_ACT_OPS, false,
                "sync_batch_norm synchronises batch_norm ops, and a fused_bn_activation would normalise over its own"
                        + " rank's batch only");
    }

    private void hierarchicalAllreduce() {
        if (!get(StrategySchema.USE_HIERARCHICAL_ALLREDUCE)) {
            return;
        }
        int interNranks = get(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS);
        if (world.nodes() == 1) {
            change(StrategySchema.USE_HIERARCHICAL_ALLREDUCE, false,
                    "all ranks are on one node, so there is no inter-node stage");
        } else if (world.ranksPerNode() == 1) {
            change(StrategySchema.USE_HIERARCHICAL_ALLREDUCE, false,
                    "one rank per node leaves the intra-node stage nothing to reduce");
        } else if (interNranks == 1) {
            change(StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS, world.ranksPerNode(),
                    "1 stands for the ranks per node, " + world.ranksPerNode());
        } else if (world.size() % interNranks != 0) {
            problems.add(ConsistencyRules.at(requested, StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS)
                    + "hierarchical_allreduce_inter_nranks: " + interNranks + " does not divide the world size "
                    + world.size() + " (" + world.nodes() + " nodes x " + world.ranksPerNode()
                    + " ranks), so the inner groups cannot tile the ranks; use a divisor of " + world.size()
                    + " such as " + world.ranksPerNode() + " (the ranks per node)");
        }
    }

    /**
     * Paddle's rule for NCCL: a synchronous allreduce holds an executor thread per communicator while its stream
     * drains. On cpu the collective runs on the group's own thread and collectives keep program order, so extra
     * executor threads only compete with it (measured: 1.07x the step time of mlp_perf on 2 ranks); cpu keeps the
     * user's thread count.
     */
    private void syncAllreduceThreads() {
        if (get(StrategySchema.SYNC_BATCH_NORM) || !get(StrategySchema.SYNC_NCCL_ALLREDUCE) || world.size() == 1
                || !world.device().equals("gpu")) {
            return;
        }
        int communicators = get(StrategySchema.NCCL_COMM_NUM);
        int threads = get(StrategySchema.EXEC_NUM_THREADS);
        if (threads < communicators + 1) {
            change(StrategySchema.EXEC_NUM_THREADS, communicators + 1,
                    "sync_nccl_allreduce blocks one thread per communicator while it waits, so the executor needs"
                            + " nccl_comm_num + 1 = " + (communicators + 1) + " threads");
        }
    }

    @SuppressWarnings("unchecked")
    private <T> T get(Field<T> field) {
        return (T) values.get(field);
    }

    private <T> void change(Field<T> field, T to, String reason) {
        Object from = values.get(field);
        if (!from.equals(to)) {
            values.put(field, to);
            changes.add(new Change(field.key(), from, to, reason));
        }
    }
}
