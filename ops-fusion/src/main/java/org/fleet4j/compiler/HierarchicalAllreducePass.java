package org.fleet4j.compiler;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLGATHER;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.BROADCAST;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.LEADERS_ALLREDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.REDUCE_SCATTER;
import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.HIERARCHICAL_ALLREDUCE_INTER_NRANKS;
import static org.fleet4j.strategy.schema.StrategySchema.NCCL_COMM_NUM;
import static org.fleet4j.strategy.schema.StrategySchema.SYNC_NCCL_ALLREDUCE;
import static org.fleet4j.strategy.schema.StrategySchema.USE_HIERARCHICAL_ALLREDUCE;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * {@code use_hierarchical_allreduce}: every in-place {@code c_allreduce} on a flat ring c (a bucket, a cast bucket or
 * a lone gradient) becomes stages on the rings of {@link RingLayout}, in the {@link HierarchicalForm} the layout's
 * form gives the bucket's size. Reduce form: {@code c_reduce} to the first rank of each inner group (ring
 * {@code inner(c)}), {@code c_leaders_allreduce} among those first ranks (ring {@code leaders(c)}; the other ranks
 * skip it) and {@code c_broadcast} from the first rank back to its inner group, so only one rank per node sends a
 * tensor across nodes. Reduce-scatter/allgather form: {@code c_reducescatter} inside the inner group into a shard var
 * of ceil(n / L) elements (the op pads a bucket whose n does not divide by L), {@code c_allreduce} of the shard on
 * the cross ring {@code cross(c)} (the ranks with the same local index; the L shards cross the link side by side),
 * {@code c_allgather} of the shards back into the bucket. "avg" averages at both reducing stages: inner groups are of
 * equal size, so the average of the averages is the average of all ranks.
 * <p>With {@code overlap} ({@code sync_nccl_allreduce: false}) the stages of consecutive buckets are pipelined: a
 * reduce-scatter bucket's {@code c_allgather} moves down to right after the next bucket's second stage (or right
 * before an op in between that touches the bucket's memory, or a conditional region's edge; fp16_allreduce's cast of
 * the bfloat16 bucket back into the gradients moves with it), so the overlap pass
 * that runs later turns its cross {@code c_allreduce} into {@code c_allreduce_start} / {@code c_wait} around the
 * backward ops and the next bucket's intra-node stage: bucket k crosses the link while bucket k + 1 is reduced inside
 * the node. Reduce-form buckets stay synchronous.
 */
public final class HierarchicalAllreducePass implements Pass {
    public static final String NAME = "use_hierarchical_allreduce";

    private final RingLayout layout;
    private final boolean overlap;

    public HierarchicalAllreducePass(RingLayout layout) {
        this(layout, false);
    }

    /** {@code overlap}: pipeline the buckets' stages for the overlap pass (see the class comment). */
    public HierarchicalAllreducePass(RingLayout layout, boolean overlap) {
        this.layout = layout;
        this.overlap = overlap;
    }

    /** The pass on the context's rings, pipelined when the strategy's sync_nccl_allreduce is off. */
    public static HierarchicalAllreducePass of(PassContext c) {
        return new HierarchicalAllreducePass(c.rings(), !c.knob(StrategySchema.SYNC_NCCL_ALLREDUCE));
    }

    public RingLayout layout() {
        return layout;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        if (!layout.hierarchical()) {
            return PassResult.unchanged(program, "nothing to do: one rank per inner group");
        }
        Program result = ProgramEdits.copyOf(program);
        Block block = result.globalBlock();
        List<Op> ops = program.globalBlock().ops();
        List<String> notes = new ArrayList<>();
        List<Op> rebuilt = new ArrayList<>();
        int reduced = 0;
        int scattered = 0;
        Map<String, String> storage = OverlapAllreducePass.sharedStorage(ops);
        Deferred pending = null;
        Set<Integer> moved = new HashSet<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (moved.contains(i)) {
                continue;
            }
            if (pending != null && (OverlapAllreducePass.isControl(op)
                    || OverlapAllreducePass.touches(op, pending.roots(), storage))) {
                rebuilt.addAll(pending.ops());
                notes.add(pending.what() + " waits until op #" + i + " " + op.type() + ", which needs the bucket");
                pending = null;
            }
            if (!op.type().equals(ALLREDUCE)) {
                rebuilt.add(op);
                continue;
            }
            int ring = op.intAttr("ring_id");
            String x = op.in("X");
            Var var = program.globalBlock().var(x);
            if (!x.equals(op.out("Out"))) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": it does not reduce in place");
                rebuilt.add(op);
                continue;
            } else if (var.kind() != VarKind.DENSE) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": a sparse gradient is gathered from every"
                        + " rank on its flat ring");
                rebuilt.add(op);
                continue;
            } else if (ring < 0 || ring >= layout.commNum()) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": ring " + ring + " is not one of the "
                        + layout.commNum() + " flat communicator(s)");
                rebuilt.add(op);
                continue;
            }
            String reduce = op.stringAttr("reduce");
            long numel = Shapes.knownNumel(var.shape());
            String size = numel < 0 ? "size known at run time" : String.format(Locale.ROOT, "%.2f MB",
                    numel * var.dtype().byteSize() / (1024.0 * 1024.0));
            HierarchicalForm form = numel < 0 ? HierarchicalForm.REDUCE
                    : layout.form().forBucket(numel * var.dtype().byteSize());
            String head = "op #" + i + " c_allreduce of " + x + " (ring " + ring + ", " + size + ") -> ";
            if (form == HierarchicalForm.RSAG) {
                int l = layout.innerRanks();
                long shardSize = (numel + l - 1) / l;
                String shard = result.uniqueName(x + "@SHARD");
                block.createVar(shard, var.dtype(), shardSize).setStopGradient(true);
                rebuilt.add(new Op(REDUCE_SCATTER, Map.of("X", List.of(x)), Map.of("Out", List.of(shard)),
                        attrs(Map.of("ring_id", layout.inner(ring), "nranks", l, "reduce", reduce))));
                rebuilt.add(new Op(ALLREDUCE, Map.of("X", List.of(shard)), Map.of("Out", List.of(shard)),
                        attrs(Map.of("ring_id", layout.cross(ring), "reduce", reduce))));
                pending = flush(pending, rebuilt, notes, i);
                Op gather = new Op(ALLGATHER, Map.of("X", List.of(x), "Shard", List.of(shard)), Map.of("Out", List.of(x)),
                        attrs(Map.of("ring_id", layout.inner(ring), "nranks", l)));
                if (overlap) {
                    int castBack = OverlapAllreducePass.castBackOf(ops, i, x);
                    Set<String> roots = new HashSet<>(Set.of(OverlapAllreducePass.rootOf(storage, x)));
                    List<Op> held = new ArrayList<>(List.of(gather));
                    if (castBack >= 0) {
                        roots.add(OverlapAllreducePass.rootOf(storage, ops.get(castBack).out("Out")));
                        held.add(ops.get(castBack));
                        moved.add(castBack);
                    }
                    pending = new Deferred(held, roots, "the c_allgather of " + x + " (op #" + i + ")"
                            + (castBack >= 0 ? " and its cast back" : ""));
                } else {
                    rebuilt.add(gather);
                }
                notes.add(head + "rsag: c_reducescatter on ring " + layout.inner(ring) + " into " + shard + " ("
                        + shardSize + " of " + numel + " elements" + (numel % l == 0 ? "" : ", padded") + "), c_allreduce"
                        + " of it on cross ring " + layout.cross(ring) + ", c_allgather on ring " + layout.inner(ring));
                scattered++;
            } else {
                rebuilt.add(stage(REDUCE, x, Map.of("ring_id", layout.inner(ring), "root", 0, "reduce", reduce)));
                rebuilt.add(stage(LEADERS_ALLREDUCE, x, Map.of("ring_id", layout.leaders(ring), "reduce", reduce)));
                pending = flush(pending, rebuilt, notes, i);
                rebuilt.add(stage(BROADCAST, x, Map.of("ring_id", layout.inner(ring), "root", 0)));
                notes.add(head + "reduce: c_reduce on ring " + layout.inner(ring) + ", c_leaders_allreduce on ring "
                        + layout.leaders(ring) + ", c_broadcast on ring " + layout.inner(ring)
                        + (layout.form() == HierarchicalForm.RSAG ? " (its size is known only at run time)" : ""));
                reduced++;
            }
        }
        if (pending != null) {
            rebuilt.addAll(pending.ops());
            notes.add(pending.what() + " stays right after it: no bucket follows");
        }
        if (reduced + scattered == 0) {
            notes.addFirst("nothing rewritten: no in-place c_allreduce on a flat ring (a world of one has none)");
            return new PassResult(program, notes);
        }
        ProgramEdits.replaceOps(block, rebuilt);
        notes.addFirst((reduced + scattered) + " c_allreduce ops over inner groups of " + layout.innerRanks()
                + " ranks, form " + layout.form().key() + (layout.form() == HierarchicalForm.AUTO ? " (rsag from "
                + HierarchicalForm.RSAG_MIN_BYTES / 1024 + " KB)" : "") + ": " + reduced + " reduce / leaders allreduce"
                + " / broadcast, " + scattered + " reduce-scatter / cross allreduce / allgather");
        return new PassResult(result, notes);
    }

    /**
     * A reduce-scatter bucket's c_allgather (and the cast back into the gradients that follows it) held back while
     * later ops run; {@code roots}: the memory they write.
     */
    private record Deferred(List<Op> ops, Set<String> roots, String what) {
    }

    /** Emits the held-back gather of the previous bucket after the second stage of the bucket at op #i. */
    private static Deferred flush(Deferred pending, List<Op> rebuilt, List<String> notes, int i) {
        if (pending != null) {
            rebuilt.addAll(pending.ops());
            notes.add(pending.what() + " follows the second stage of op #" + i + "'s bucket: its cross allreduce overlaps"
                    + " what runs in between");
        }
        return null;
    }

    private static Map<String, Object> attrs(Map<String, Object> attrs) {
        return new LinkedHashMap<>(attrs);
    }

    private static Op stage(String type, String var, Map<String, Object> attrs) {
        return new Op(type, Map.of("X", List.of(var)), Map.of("Out", List.of(var)), new LinkedHashMap<>(attrs));
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 520, List.of(any(USE_HIERARCHICAL_ALLREDUCE),
                    any(HIERARCHICAL_ALLREDUCE_INTER_NRANKS), any(NCCL_COMM_NUM), any(SYNC_NCCL_ALLREDUCE)),
                    c -> c.knob(USE_HIERARCHICAL_ALLREDUCE), HierarchicalAllreducePass::of);
        }
    }
}
