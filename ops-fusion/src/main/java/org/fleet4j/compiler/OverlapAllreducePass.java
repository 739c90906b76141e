package org.fleet4j.compiler;

import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.ALLREDUCE_START;
import static org.fleet4j.core.ops.collective.CollectiveOpTypes.WAIT;
import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.SYNC_NCCL_ALLREDUCE;

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
import org.fleet4j.core.ops.ControlOps;
import org.fleet4j.core.ops.fused.AllreduceCastOp;
import org.fleet4j.core.ops.fused.BucketOps;
import org.fleet4j.core.tensor.DType;

/**
 * Overlap of gradient allreduces with the rest of backward ({@code sync_nccl_allreduce: false}): each in-place
 * {@code c_allreduce} becomes {@code c_allreduce_start}, which issues the collective on its process group and
 * returns at once with a handle in a {@code @WORK} var, placed right after the last op before it that touches the
 * tensor, and {@code c_wait}, which waits for the handle, placed right before the next op that touches the tensor
 * (or a conditional region's edge, or the end of the program). The ops in between run while the group's own thread
 * reduces the tensor, even on one executor thread. "Touches" counts every var that shares the tensor's memory by
 * name: the gradients a {@code gather_bucket} made views of its bucket, and both sides of a {@code reshape}. The
 * {@code allreduce_cast} that fp16_allreduce puts right after its allreduce (bfloat16 copy back into the gradient)
 * moves with the wait. An allreduce with nothing to overlap is left as it is. Runs last: it needs every reader of
 * every gradient.
 */
public final class OverlapAllreducePass implements Pass {
    public static final String NAME = "overlap_allreduce";

    @Override
    public String name() {
        return NAME;
    }

    /**
     * Where one allreduce's start and wait go: after op {@code startAfter} (-1: first), or where the allreduce was
     * when {@code startAfter == index - 1}; the wait before op {@code waitBefore}, followed by op {@code castBack}
     * (fp16_allreduce's cast of the reduced copy back into the gradient) when that is not -1.
     */
    private record Split(int index, int startAfter, int waitBefore, String work, int castBack) {
        boolean inPlace() {
            return startAfter == index - 1;
        }
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<Integer> allreduces = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            // a sparse gradient's allreduce is a gather of its rows, run where it stands
            if (op.type().equals(ALLREDUCE) && op.in("X").equals(op.out("Out"))
                    && block.var(op.in("X")).kind() == org.fleet4j.core.ir.VarKind.DENSE) {
                allreduces.add(i);
            }
        }
        if (allreduces.isEmpty()) {
            return PassResult.unchanged(program, "nothing overlapped: no in-place c_allreduce (a world of one has none)");
        }
        Map<String, String> storage = sharedStorage(ops);
        Set<Integer> converted = Set.copyOf(allreduces);
        Program result = ProgramEdits.copyOf(program);
        Block out = result.globalBlock();
        List<String> notes = new ArrayList<>();
        Map<Integer, Split> splits = new LinkedHashMap<>();
        for (int i : allreduces) {
            String x = ops.get(i).in("X");
            Set<String> roots = new HashSet<>(Set.of(rootOf(storage, x)));
            int before = i - 1;
            while (before >= 0 && !touches(ops.get(before), roots, storage) && !isControl(ops.get(before))) {
                before--;
            }
            // after another allreduce of the same memory, start where this one was: that one's wait comes first
            int startAfter = before >= 0 && converted.contains(before) && splits.containsKey(before) ? i - 1 : before;
            // fp16_allreduce casts the reduced copy back right away: that cast moves with the wait
            int castBack = castBackOf(ops, i, x);
            if (castBack >= 0) {
                roots.add(rootOf(storage, ops.get(castBack).out("Out")));
            }
            int after = castBack >= 0 ? castBack + 1 : i + 1;
            while (after < ops.size() && !touches(ops.get(after), roots, storage) && !isControl(ops.get(after))) {
                after++;
            }
            int overlapped = (i - 1 - startAfter) + (after - i - 1) - (castBack >= 0 ? 1 : 0);
            if (overlapped == 0) {
                notes.add("left op #" + i + " c_allreduce of " + x + " as it is: op #" + after + " "
                        + (after < ops.size() ? ops.get(after).type() : "(end)") + " needs it right away");
                continue;
            }
            String work = result.uniqueName(x + "@WORK");
            out.createVar(work, DType.I64, 1).setStopGradient(true);
            splits.put(i, new Split(i, startAfter, after, work, castBack));
            notes.add("op #" + i + " c_allreduce of " + x + ": starts after op #" + startAfter
                    + (startAfter >= 0 ? " " + ops.get(startAfter).type() : "") + ", waited for before op #" + after
                    + (after < ops.size() ? " " + ops.get(after).type() : " (end)") + ": " + overlapped
                    + " ops run while it is in flight" + (castBack >= 0 ? " (its cast back follows the wait)" : ""));
        }
        if (splits.isEmpty()) {
            notes.addFirst("nothing overlapped: every c_allreduce's result is needed by the next op");
            return new PassResult(program, notes);
        }
        Map<Integer, List<Op>> startsAfter = new HashMap<>();
        Map<Integer, Op> startsInPlace = new HashMap<>();
        Map<Integer, List<Op>> waitsBefore = new HashMap<>();
        Set<Integer> moved = new HashSet<>();
        for (Split s : splits.values()) {
            Op op = ops.get(s.index());
            String x = op.in("X");
            Op start = new Op(ALLREDUCE_START, Map.of("X", List.of(x)), Map.of("Out", List.of(x), "Work", List.of(s.work())), op.attrs());
            Op wait = new Op(WAIT, Map.of("X", List.of(x), "Work", List.of(s.work())), Map.of("Out", List.of(x)),
                    Map.of("ring_id", op.intAttr("ring_id")));
            if (s.inPlace()) {
                startsInPlace.put(s.index(), start);
            } else {
                startsAfter.computeIfAbsent(s.startAfter(), k -> new ArrayList<>()).add(start);
            }
            waitsBefore.computeIfAbsent(s.waitBefore(), k -> new ArrayList<>()).add(wait);
            if (s.castBack() >= 0) {
                waitsBefore.get(s.waitBefore()).add(ops.get(s.castBack()));
                moved.add(s.castBack());
            }
        }
        List<Op> rebuilt = new ArrayList<>(startsAfter.getOrDefault(-1, List.of()));
        for (int p = 0; p <= ops.size(); p++) {
            rebuilt.addAll(waitsBefore.getOrDefault(p, List.of()));
            if (p == ops.size()) {
                break;
            }
            if (startsInPlace.containsKey(p)) {
                // after the waits before its position (those of earlier allreduces of the same memory)
                rebuilt.add(startsInPlace.get(p));
            } else if (!splits.containsKey(p) && !moved.contains(p)) {
                rebuilt.add(ops.get(p));
            }
            rebuilt.addAll(startsAfter.getOrDefault(p, List.of()));
        }
        ProgramEdits.replaceOps(out, rebuilt);
        notes.addFirst(splits.size() + " of " + allreduces.size() + " c_allreduce ops overlap the ops around them ("
                + ALLREDUCE_START + " / " + WAIT + ")");
        return new PassResult(result, notes);
    }

    static boolean isControl(Op op) {
        return op.type().equals(ControlOps.BEGIN) || op.type().equals(ControlOps.END);
    }

    /**
     * The index of the {@code allreduce_cast} right after the allreduce at {@code i} that casts its tensor back (into
     * the float32 gradient) when nothing else reads or writes the tensor afterwards; -1 otherwise.
     */
    static int castBackOf(List<Op> ops, int i, String x) {
        if (i + 1 >= ops.size() || !ops.get(i + 1).type().equals(AllreduceCastOp.TYPE) || !ops.get(i + 1).in("X").equals(x)) {
            return -1;
        }
        for (int j = i + 2; j < ops.size(); j++) {
            if (ops.get(j).allInputs().contains(x) || ops.get(j).allOutputs().contains(x)) {
                return -1;
            }
        }
        return i + 1;
    }

    static boolean touches(Op op, Set<String> roots, Map<String, String> storage) {
        for (String v : op.allInputs()) {
            if (roots.contains(rootOf(storage, v))) {
                return true;
            }
        }
        for (String v : op.allOutputs()) {
            if (roots.contains(rootOf(storage, v))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Vars that share memory by construction, as a union-find forest over names: a bucket and the gradients that
     * {@code gather_bucket} made its views, a reshape's input and output (and its gradient's).
     */
    static Map<String, String> sharedStorage(List<Op> ops) {
        Map<String, String> parent = new HashMap<>();
        for (Op op : ops) {
            switch (op.type()) {
                case BucketOps.GATHER -> {
                    String bucket = op.out("Bucket");
                    op.output("Out").forEach(g -> union(parent, bucket, g));
                }
                case "reshape" -> union(parent, op.in("X"), op.out("Out"));
                case "reshape_grad" -> union(parent, op.in("Out@GRAD"), op.out("X@GRAD"));
                default -> { }
            }
        }
        return parent;
    }

    static String rootOf(Map<String, String> parent, String v) {
        String r = v;
        while (parent.containsKey(r)) {
            r = parent.get(r);
        }
        return r;
    }

    private static void union(Map<String, String> parent, String a, String b) {
        String ra = rootOf(parent, a);
        String rb = rootOf(parent, b);
        if (!ra.equals(rb)) {
            parent.put(rb, ra);
        }
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 900, List.of(any(SYNC_NCCL_ALLREDUCE)),
                    c -> !c.knob(SYNC_NCCL_ALLREDUCE), c -> new OverlapAllreducePass());
        }
    }
}
