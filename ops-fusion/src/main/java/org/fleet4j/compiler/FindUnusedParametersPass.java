package org.fleet4j.compiler;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE;
import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.FIND_UNUSED_PARAMETERS;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.tensor.Shapes;

/**
 * {@code find_unused_parameters}: in a static program a parameter gets no gradient on a step when every op that writes
 * its gradient sits in a conditional region that did not run (or when nothing writes it). Its allreduce, and so its
 * bucket, would then send a stale gradient, or fail on the first step for want of one. This pass zero-fills each such
 * gradient every step, just before the region that may produce it: the allreduce still runs in the same order on every
 * rank, with zeros from the ranks that skipped the region, and the update sees the average of what the ranks produced
 * (all zeros when none did, so SGD leaves the parameter as it was; momentum and Adam still decay their moments).
 * Runs before gradient merge and bucketing, so both see a gradient that exists on every step.
 */
public final class FindUnusedParametersPass implements Pass {
    public static final String NAME = "find_unused_parameters";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        ConditionalRegions regions = ConditionalRegions.of(ops);
        Map<Integer, List<Op>> insertBefore = new HashMap<>();
        List<String> notes = new ArrayList<>();
        int checked = 0;
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!op.type().equals(ALLREDUCE) || !op.in("X").equals(op.out("Out"))) {
                continue;
            }
            Var g = block.var(op.in("X"));
            if (g.kind() == VarKind.SELECTED_ROWS || !g.dtype().isFloating() || Shapes.knownNumel(g.shape()) < 0) {
                continue;
            }
            checked++;
            List<Integer> writers = ProgramEdits.writers(ops.subList(0, i), g.name());
            int reader = i;
            if (writers.stream().anyMatch(w -> regions.runsWhenever(w, reader))) {
                continue;
            }
            int at = writers.isEmpty() ? i : regions.beforeRegionOf(writers.getFirst(), i);
            insertBefore.computeIfAbsent(at, k -> new ArrayList<>()).add(zeros(g));
            notes.add(g.name() + (writers.isEmpty() ? ": no op writes it" : ": written only inside the conditional"
                    + " region of op #" + at + " (by op #" + writers.getFirst() + " " + ops.get(writers.getFirst()).type()
                    + ")") + "; zero-filled before op #" + at + " so its allreduce sends zeros when it is not produced");
        }
        if (insertBefore.isEmpty()) {
            return PassResult.unchanged(program, checked == 0
                    ? "nothing to do: no dense in-place c_allreduce (a world of one has none)"
                    : "every one of the " + checked + " allreduced gradients is produced on every step");
        }
        List<Op> rebuilt = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            rebuilt.addAll(insertBefore.getOrDefault(i, List.of()));
            rebuilt.add(ops.get(i));
        }
        Program result = ProgramEdits.copyOf(program);
        ProgramEdits.replaceOps(result.globalBlock(), rebuilt);
        notes.addFirst(notes.size() + " of " + checked + " allreduced gradients may be missing on a step");
        return new PassResult(result, notes);
    }

    private static Op zeros(Var g) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("shape", g.shape());
        attrs.put("dtype", g.dtype().displayName());
        attrs.put("value", 0f);
        return new Op("fill_constant", Map.of(), Map.of("Out", List.of(g.name())), attrs);
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 300, List.of(any(FIND_UNUSED_PARAMETERS)),
                    c -> c.knob(FIND_UNUSED_PARAMETERS), c -> new FindUnusedParametersPass());
        }
    }
}
