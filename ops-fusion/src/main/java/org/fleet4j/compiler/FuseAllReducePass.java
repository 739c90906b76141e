package org.fleet4j.compiler;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE;
import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_ALL_REDUCE_OPS;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_GRAD_SIZE_IN_MB;
import static org.fleet4j.strategy.schema.StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS;
import static org.fleet4j.strategy.schema.StrategySchema.LAST_COMM_GROUP_SIZE_MB;
import static org.fleet4j.strategy.schema.StrategySchema.NCCL_COMM_NUM;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.fused.BucketOps;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.strategy.schema.StrategySchema;

/**
 * {@code fuse_all_reduce_ops}: the per-gradient {@code c_allreduce} ops become one per bucket. Dense gradients are
 * grouped in the order backward produces them ({@link GradientBucketer}); each bucket gets a {@code gather_bucket}
 * (its gradients become views into one buffer, written in place by their producers) and one {@code c_allreduce} of
 * the buffer, placed right after the bucket's last gradient is produced so it can overlap the rest of backward.
 * Buckets go round-robin to the bucketer's rings, the same on every rank. Sparse gradients keep their own op.
 * Each bucket is placed at {@code ring:<id>} ({@link #placement}), so that Fleet can give it memory registered with
 * the ring's process group.
 */
public final class FuseAllReducePass implements Pass {
    public static final String NAME = "fuse_all_reduce_ops";
    private static final long MB = 1024L * 1024L;

    private final GradientBucketer bucketer;

    public FuseAllReducePass(GradientBucketer bucketer) {
        this.bucketer = bucketer;
    }

    /** The pass with the strategy's bucket limits, its buckets spread round-robin over the nccl_comm_num rings. */
    public static FuseAllReducePass of(PassContext s) {
        return new FuseAllReducePass(new GradientBucketer(s.knob(StrategySchema.FUSE_GRAD_SIZE_IN_MB) * MB,
                (int) Math.round(s.knob(StrategySchema.FUSE_GRAD_SIZE_IN_TFLOPS)),
                Math.max(1, Math.round(s.knob(StrategySchema.LAST_COMM_GROUP_SIZE_MB) * MB)),
                s.knob(StrategySchema.NCCL_COMM_NUM)));
    }

    /** The buffer placement of the buckets reduced on ring {@code ringId}. */
    public static String placement(int ringId) {
        return "ring:" + ringId;
    }

    public GradientBucketer bucketer() {
        return bucketer;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<String> notes = new ArrayList<>();
        // gradients grouped per (reduce, dtype): one collective can only reduce one dtype one way
        Map<String, List<Integer>> byKind = new LinkedHashMap<>();
        ConditionalRegions regions = ConditionalRegions.of(ops);
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!op.type().equals(ALLREDUCE)) {
                continue;
            }
            Var g = block.var(op.in("X"));
            if (!op.in("X").equals(op.out("Out"))) {
                notes.add("left alone op #" + i + " c_allreduce of " + g.name() + ": it does not reduce in place");
            } else if (g.kind() == VarKind.SELECTED_ROWS) {
                notes.add("left alone op #" + i + " c_allreduce of " + g.name() + ": sparse gradients are never fused");
            } else if (Shapes.knownNumel(g.shape()) < 0) {
                notes.add("left alone op #" + i + " c_allreduce of " + g.name() + ": its shape is not fixed");
            } else if (producedOnlySometimes(ops, regions, g.name(), i)) {
                notes.add("left alone op #" + i + " c_allreduce of " + g.name() + ": it is written only inside a"
                        + " conditional region, so on some steps its bucket would hold a stale value;"
                        + " find_unused_parameters: true zero-fills it and lets it join a bucket");
            } else {
                byKind.computeIfAbsent(op.stringAttr("reduce") + " " + g.dtype(), k -> new ArrayList<>()).add(i);
            }
        }
        if (byKind.isEmpty()) {
            notes.addFirst("nothing fused: no dense in-place c_allreduce (a world of one has none)");
            return new PassResult(program, notes);
        }
        Set<Integer> removed = new HashSet<>();
        Map<Integer, List<Op>> insertAfter = new HashMap<>();
        Program result = ProgramEdits.copyOf(program);
        Block out = result.globalBlock();
        int bucketIndex = 0;
        for (List<Integer> group : byKind.values()) {
            List<Integer> order = new ArrayList<>(group);
            Map<Integer, Integer> producedAt = new HashMap<>();
            for (int i : order) {
                producedAt.put(i, lastWriterBefore(ops, ops.get(i).in("X"), i));
            }
            order.sort((x, y) -> Integer.compare(producedAt.get(x), producedAt.get(y)));
            int lastProduced = producedAt.get(order.getLast());
            int firstReduced = group.stream().mapToInt(Integer::intValue).min().orElseThrow();
            if (lastProduced > firstReduced) {
                // an allreduce of this kind runs before another tensor of the kind exists: no bucket can hold both
                notes.add("left alone " + group.size() + " c_allreduce ops of " + ops.get(firstReduced).stringAttr("reduce")
                        + " " + block.var(ops.get(firstReduced).in("X")).dtype().displayName()
                        + ": op #" + firstReduced + " reduces before op #" + lastProduced + " produces another of them");
                continue;
            }
            List<String> grads = order.stream().map(i -> ops.get(i).in("X")).toList();
            List<Long> bytes = grads.stream().map(g -> Shapes.knownNumel(block.var(g).shape()) * block.var(g).dtype().byteSize()).toList();
            Op first = ops.get(order.getFirst());
            for (GradientBucket b0 : bucketer.split(grads, bytes)) {
                GradientBucket b = new GradientBucket(bucketIndex, b0.grads(), b0.bytes(), bucketIndex % bucketer.rings());
                bucketIndex++;
                List<Integer> members = order.stream().filter(i -> b.grads().contains(ops.get(i).in("X"))).toList();
                removed.addAll(members);
                int after = members.stream().mapToInt(producedAt::get).max().orElseThrow();
                int firstAllreduce = members.stream().mapToInt(Integer::intValue).min().orElseThrow();
                if (after < 0 || readBetween(ops, b.grads(), after, firstAllreduce)) {
                    after = firstAllreduce - 1;
                }
                String buffer = result.uniqueName("fused_grad_bucket");
                Var g0 = block.var(b.grads().getFirst());
                out.createVar(buffer, g0.dtype(), b.bytes() / g0.dtype().byteSize());
                List<Op> inserted = insertAfter.computeIfAbsent(after, k -> new ArrayList<>());
                inserted.add(new Op(BucketOps.GATHER, Map.of("X", b.grads()),
                        Map.of("Out", b.grads(), "Bucket", List.of(buffer)), Map.of(BucketOps.PLACEMENT, placement(b.ringId()))));
                Map<String, Object> attrs = new LinkedHashMap<>(first.attrs());
                attrs.put("ring_id", b.ringId());
                inserted.add(new Op(ALLREDUCE, Map.of("X", List.of(buffer)), Map.of("Out", List.of(buffer)), attrs));
                notes.add("bucket " + b.index() + ": " + b.grads().size() + " gradients, " + FuseAllOptimizerPass.mb(b.bytes())
                        + ", ring " + b.ringId() + ", allreduce after op #" + after + (after >= 0 ? " " + ops.get(after).type() : "") + ": "
                        + b.grads());
            }
        }
        List<Op> rebuilt = new ArrayList<>(insertAfter.getOrDefault(-1, List.of()));
        for (int i = 0; i < ops.size(); i++) {
            if (!removed.contains(i)) {
                rebuilt.add(ops.get(i));
            }
            rebuilt.addAll(insertAfter.getOrDefault(i, List.of()));
        }
        ProgramEdits.replaceOps(out, rebuilt);
        notes.addFirst(removed.size() + " c_allreduce ops -> " + bucketIndex + " bucket(s) on " + bucketer.rings()
                + " ring(s) (caps: " + FuseAllOptimizerPass.mb(bucketer.maxBytes()) + " or " + bucketer.maxCount()
                + " gradients per bucket, last bucket " + FuseAllOptimizerPass.mb(bucketer.lastBytes()) + ")");
        return new PassResult(result, notes);
    }

    /** Whether ops before {@code reader} write {@code var}, but none of them on every step that the reader runs. */
    private static boolean producedOnlySometimes(List<Op> ops, ConditionalRegions regions, String var, int reader) {
        List<Integer> writers = ProgramEdits.writers(ops.subList(0, reader), var);
        return !writers.isEmpty() && writers.stream().noneMatch(w -> regions.runsWhenever(w, reader));
    }

    /** The index of the last op before {@code before} that writes {@code var}, or -1 when none does. */
    private static int lastWriterBefore(List<Op> ops, String var, int before) {
        for (int i = before - 1; i >= 0; i--) {
            if (ops.get(i).allOutputs().contains(var)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether the bucket may not move up to just after its producers: an op other than an allreduce reads one of the
     * gradients in (from, to), or a conditional region begins or ends there (gradient merge).
     */
    private static boolean readBetween(List<Op> ops, List<String> grads, int from, int to) {
        for (int i = from + 1; i < to; i++) {
            Op op = ops.get(i);
            boolean control = op.type().equals(ControlOps.BEGIN) || op.type().equals(ControlOps.END);
            if (control || !op.type().equals(ALLREDUCE) && op.allInputs().stream().anyMatch(grads::contains)) {
                return true;
            }
        }
        return false;
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 500, List.of(any(FUSE_ALL_REDUCE_OPS), any(FUSE_GRAD_SIZE_IN_MB),
                    any(FUSE_GRAD_SIZE_IN_TFLOPS), any(LAST_COMM_GROUP_SIZE_MB), any(NCCL_COMM_NUM)),
                    c -> c.knob(FUSE_ALL_REDUCE_OPS), FuseAllReducePass::of);
        }
    }
}
