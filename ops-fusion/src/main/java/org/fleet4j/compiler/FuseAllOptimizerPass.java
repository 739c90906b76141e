package org.fleet4j.compiler;

import static org.fleet4j.strategy.schema.KnobUse.any;
import static org.fleet4j.strategy.schema.StrategySchema.BUILD_FUSE_ALL_OPTIMIZER_OPS;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.ops.fused.FusedOptimizerOps;
import org.fleet4j.core.tensor.DType;

/**
 * {@code fuse_all_optimizer_ops}: every dense float32 {@code sgd}, {@code momentum}, {@code adam} or {@code adamw}
 * update that shares its type, attributes and learning rate with others becomes one fused op over contiguous
 * buffers of parameters and moments, placed where the last of them was. Sparse gradients stay unfused.
 */
public final class FuseAllOptimizerPass implements Pass {
    public static final String NAME = "fuse_all_optimizer_ops";

    /** Per optimizer type: the fused op, and its variadic input slots (the same slots the single op has). */
    private record Kind(String fusedType, List<String> slots, List<String> outSlots) {
    }

    private static final Map<String, Kind> KINDS = Map.of(
            "sgd", new Kind(FusedOptimizerOps.SGD, List.of("Param", "Grad"), List.of("ParamOut")),
            "momentum", new Kind(FusedOptimizerOps.MOMENTUM, List.of("Param", "Grad", "Velocity"),
                    List.of("ParamOut", "VelocityOut")),
            "adam", new Kind(FusedOptimizerOps.ADAM, List.of("Param", "Grad", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
                    List.of("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut")),
            "adamw", new Kind(FusedOptimizerOps.ADAM, List.of("Param", "Grad", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
                    List.of("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut")));

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public PassResult apply(Program program) {
        Block block = program.globalBlock();
        List<Op> ops = block.ops();
        List<String> notes = new ArrayList<>();
        Map<String, List<Integer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!KINDS.containsKey(op.type())) {
                continue;
            }
            Var p = block.var(op.in("Param"));
            Var g = block.var(op.in("Grad"));
            if (g.kind() == VarKind.SELECTED_ROWS || p.dtype() != DType.F32 || g.dtype() != DType.F32) {
                notes.add("left alone " + op.type() + " of " + p.name() + ": " + (g.kind() == VarKind.SELECTED_ROWS
                        ? "its gradient is sparse" : "it is " + p.dtype().displayName()));
                continue;
            }
            groups.computeIfAbsent(groupKey(op), k -> new ArrayList<>()).add(i);
        }
        Op[] replaced = ops.toArray(Op[]::new);
        int fused = 0;
        for (List<Integer> group : groups.values()) {
            Op first = ops.get(group.getFirst());
            if (group.size() < 2) {
                notes.add("left alone the only " + first.type() + " op with its settings (" + first.in("Param") + ")");
                continue;
            }
            String conflict = interleavedUse(ops, group);
            if (conflict != null) {
                notes.add("left alone " + group.size() + " " + first.type() + " ops: " + conflict);
                continue;
            }
            Kind kind = KINDS.get(first.type());
            Map<String, List<String>> in = new LinkedHashMap<>();
            Map<String, List<String>> out = new LinkedHashMap<>();
            for (String s : kind.slots()) {
                in.put(s, group.stream().map(i -> ops.get(i).in(s)).toList());
            }
            in.put("LearningRate", first.input("LearningRate"));
            for (String s : kind.outSlots()) {
                out.put(s, group.stream().map(i -> ops.get(i).out(s)).toList());
            }
            Map<String, Object> attrs = new LinkedHashMap<>(first.attrs());
            attrs.remove("lazy_mode");
            if (first.type().equals("adam")) {
                attrs.put("coeff", 0f);
            }
            for (int i : group) {
                replaced[i] = null;
            }
            replaced[group.getLast()] = new Op(kind.fusedType(), in, out, attrs);
            long floats = group.stream().mapToLong(i -> numel(block.var(ops.get(i).in("Param")))).sum();
            notes.add("fused " + group.size() + " " + first.type() + " ops into " + kind.fusedType() + " over "
                    + floats + " contiguous float32 parameters (" + mb(floats * 4) + ")");
            fused++;
        }
        if (fused == 0) {
            notes.addFirst("nothing fused: fewer than two updates of one optimizer type with the same settings");
            return new PassResult(program, notes);
        }
        Program result = ProgramEdits.copyWithOps(program, replaced);
        return new PassResult(result, notes);
    }

    /** Updates fuse only when type, attributes and learning-rate var agree. */
    private static String groupKey(Op op) {
        Map<String, Object> attrs = new LinkedHashMap<>(op.attrs());
        attrs.remove("lazy_mode");
        StringBuilder key = new StringBuilder(op.type()).append(' ').append(op.in("LearningRate"));
        attrs.forEach((k, v) -> key.append(' ').append(k).append('=').append(AttrType.format(v)));
        return key.toString();
    }

    /** Why the group cannot move to its last op's place: another op between them touches its state; null if none. */
    private static String interleavedUse(List<Op> ops, List<Integer> group) {
        Set<String> state = new HashSet<>();
        Set<Integer> members = new HashSet<>(group);
        for (int i : group) {
            state.addAll(ops.get(i).allInputs());
            state.addAll(ops.get(i).allOutputs());
        }
        state.remove(ops.get(group.getFirst()).in("LearningRate"));
        for (int i = group.getFirst(); i < group.getLast(); i++) {
            if (members.contains(i)) {
                continue;
            }
            for (String v : ops.get(i).allInputs()) {
                if (state.contains(v)) {
                    return "op #" + i + " " + ops.get(i).type() + " reads " + v + " between them";
                }
            }
            for (String v : ops.get(i).allOutputs()) {
                if (state.contains(v)) {
                    return "op #" + i + " " + ops.get(i).type() + " writes " + v + " between them";
                }
            }
        }
        return null;
    }

    private static long numel(Var v) {
        long n = 1;
        for (long d : v.shape()) {
            n *= Math.max(d, 1);
        }
        return n;
    }

    static String mb(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.2f MB", bytes / (1024.0 * 1024.0));
    }

    /** The pass's registration: its knobs (the switch first), when it runs and its place in the order. */
    @AutoService(PassDescription.class)
    public static final class Registration extends PassDescription {
        public Registration() {
            super(NAME, 700, List.of(any(BUILD_FUSE_ALL_OPTIMIZER_OPS)),
                    c -> c.knob(BUILD_FUSE_ALL_OPTIMIZER_OPS), c -> new FuseAllOptimizerPass());
        }
    }
}
