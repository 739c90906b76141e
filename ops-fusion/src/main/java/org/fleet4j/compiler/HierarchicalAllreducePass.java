package org.fleet4j.compiler;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.strategy.EffectiveStrategy;

/**
 * {@code use_hierarchical_allreduce}: every in-place {@code c_allreduce} on a flat ring c (a bucket, a cast bucket or
 * a lone gradient) becomes its three stages on the rings of {@link RingLayout}: {@code c_reduce} to the first rank
 * of each inner group (ring {@code inner(c)}), {@code c_leaders_allreduce} among those first ranks (ring
 * {@code leaders(c)}; the other ranks skip it) and {@code c_broadcast} from the first rank back to its inner group.
 * So only one rank per node sends a tensor across nodes. "avg" averages at both reducing stages: inner groups are of
 * equal size, so the average of the averages is the average of all ranks.
 */
public final class HierarchicalAllreducePass implements Pass {
    public static final String NAME = "use_hierarchical_allreduce";
    public static final String REDUCE = "c_reduce";
    public static final String LEADERS_ALLREDUCE = "c_leaders_allreduce";
    static final String BROADCAST = "c_broadcast";

    private final RingLayout layout;

    public HierarchicalAllreducePass(RingLayout layout) {
        this.layout = layout;
    }

    public static HierarchicalAllreducePass fromStrategy(EffectiveStrategy s) {
        return new HierarchicalAllreducePass(RingLayout.of(s));
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
        List<Op> ops = program.globalBlock().ops();
        List<String> notes = new ArrayList<>();
        List<Op> rebuilt = new ArrayList<>();
        int rewritten = 0;
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!op.type().equals(FuseAllReducePass.ALLREDUCE)) {
                rebuilt.add(op);
                continue;
            }
            int ring = op.intAttr("ring_id");
            String x = op.in("X");
            if (!x.equals(op.out("Out"))) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": it does not reduce in place");
                rebuilt.add(op);
            } else if (program.globalBlock().var(x).kind() != org.fleet4j.core.ir.VarKind.DENSE) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": a sparse gradient is gathered from every"
                        + " rank on its flat ring");
                rebuilt.add(op);
            } else if (ring < 0 || ring >= layout.commNum()) {
                notes.add("left alone op #" + i + " c_allreduce of " + x + ": ring " + ring + " is not one of the "
                        + layout.commNum() + " flat communicator(s)");
                rebuilt.add(op);
            } else {
                String reduce = op.stringAttr("reduce");
                rebuilt.add(stage(REDUCE, x, Map.of("ring_id", layout.inner(ring), "root", 0, "reduce", reduce)));
                rebuilt.add(stage(LEADERS_ALLREDUCE, x, Map.of("ring_id", layout.leaders(ring), "reduce", reduce)));
                rebuilt.add(stage(BROADCAST, x, Map.of("ring_id", layout.inner(ring), "root", 0)));
                notes.add("op #" + i + " c_allreduce of " + x + " (ring " + ring + ") -> c_reduce on ring "
                        + layout.inner(ring) + ", c_leaders_allreduce on ring " + layout.leaders(ring)
                        + ", c_broadcast on ring " + layout.inner(ring));
                rewritten++;
            }
        }
        if (rewritten == 0) {
            notes.addFirst("nothing rewritten: no in-place c_allreduce on a flat ring (a world of one has none)");
            return new PassResult(program, notes);
        }
        Program result = ProgramEdits.copyOf(program);
        ProgramEdits.replaceOps(result.globalBlock(), rebuilt);
        notes.addFirst(rewritten + " c_allreduce ops -> reduce inside groups of " + layout.innerRanks()
                + " ranks, allreduce among their first ranks, broadcast inside the groups");
        return new PassResult(result, notes);
    }

    private static Op stage(String type, String var, Map<String, Object> attrs) {
        return new Op(type, Map.of("X", List.of(var)), Map.of("Out", List.of(var)), new LinkedHashMap<>(attrs));
    }
}
