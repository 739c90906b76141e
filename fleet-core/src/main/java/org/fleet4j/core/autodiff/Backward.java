package org.fleet4j.core.autodiff;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.InitOps;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Shapes;

/**
 * Reverse-mode autodiff on the program (Paddle's append_backward): for every op between the parameters and the
 * loss, in reverse order, appends its {@code <type>_grad} op. A var used by several ops gets one gradient per
 * use ({@code x@GRAD@RENAME@k}), summed by a {@code sum} op before its own producer's grad op reads it.
 */
public final class Backward {
    public static final String GRAD_SUFFIX = "@GRAD";

    private Backward() {
    }

    public static String gradName(String var) {
        return var + GRAD_SUFFIX;
    }

    /** Appends backward ops for a scalar loss; returns every trainable parameter with its gradient var. */
    public static List<ParamGrad> appendBackward(Var loss) {
        return appendBackward(loss, null);
    }

    /** As {@link #appendBackward(Var)}, restricted to the named parameters when {@code only} is not null. */
    public static List<ParamGrad> appendBackward(Var loss, Set<String> only) {
        Block block = loss.block();
        if (Shapes.numel(positive(loss.shape())) != 1 || hasUnknown(loss.shape())) {
            throw new IrException("the loss '" + loss.name() + "' must be a scalar, has shape " + Shapes.str(loss.shape())
                    + " (reduce it with mean or sum first)");
        }
        if (!loss.dtype().isFloating()) {
            throw new IrException("the loss '" + loss.name() + "' must be floating point, is " + loss.dtype().displayName());
        }
        List<Op> forward = new ArrayList<>(block.ops());
        Set<String> requiresGrad = requiresGrad(block, forward, only);
        Set<Integer> onPath = opsLeadingTo(forward, loss.name());

        Map<String, List<String>> contributions = new HashMap<>();
        String lossGrad = gradName(loss.name());
        block.appendOp("fill_constant", Map.of(), Map.of("Out", List.of(lossGrad)),
                Map.of("shape", loss.shape(), "dtype", loss.dtype().displayName(), "value", 1.0f));
        contributions.put(loss.name(), new ArrayList<>(List.of(lossGrad)));

        for (int i = forward.size() - 1; i >= 0; i--) {
            if (!onPath.contains(i)) {
                continue;
            }
            Op op = forward.get(i);
            OpSpec spec = OpRegistry.get(op.type());
            // per output slot, the gradient of each of its vars (null: the loss does not depend on it)
            Map<String, List<String>> outGrads = new LinkedHashMap<>();
            for (var e : op.outputs().entrySet()) {
                List<String> grads = new ArrayList<>();
                for (String out : e.getValue()) {
                    grads.add(finalGrad(block, out, contributions));
                }
                if (grads.stream().anyMatch(g -> g != null)) {
                    outGrads.put(OpSpec.gradSlot(e.getKey()), grads);
                }
            }
            boolean inputNeedsGrad = op.inputs().entrySet().stream().anyMatch(e -> !spec.isNoGradInput(e.getKey())
                    && e.getValue().stream().anyMatch(requiresGrad::contains));
            if (outGrads.isEmpty() || !inputNeedsGrad) {
                continue;
            }
            if (!spec.differentiable()) {
                throw new IrException("op #" + i + " " + op.type() + " has no gradient, but the loss depends on it "
                        + "through " + op.allInputs().stream().filter(requiresGrad::contains).toList());
            }
            Map<String, List<String>> gradOuts = new LinkedHashMap<>();
            for (var e : op.inputs().entrySet()) {
                if (spec.isNoGradInput(e.getKey()) || e.getValue().stream().noneMatch(requiresGrad::contains)) {
                    continue;
                }
                List<String> names = new ArrayList<>();
                for (String in : e.getValue()) {
                    names.add(requiresGrad.contains(in) ? newContribution(in, contributions) : unusedGrad(block, in));
                }
                gradOuts.put(OpSpec.gradSlot(e.getKey()), names);
            }
            fillMissingGrads(block, op, outGrads);
            Map<String, List<String>> gradIns = new LinkedHashMap<>(op.inputs());
            gradIns.putAll(op.outputs());
            gradIns.putAll(outGrads);
            block.appendOp(op.type() + "_grad", gradIns, gradOuts, op.attrs());
        }

        List<ParamGrad> result = new ArrayList<>();
        // a copy: summing a parameter's several gradient contributions creates vars
        for (Var v : new ArrayList<>(block.vars())) {
            if (v.isParameter() && requiresGrad.contains(v.name())) {
                String g = finalGrad(block, v.name(), contributions);
                if (g != null) {
                    result.add(new ParamGrad(v.name(), g));
                }
            }
        }
        return result;
    }

    /**
     * A slot of several outputs (split's Out) whose gradients the loss gives only some of gets zeros for the others
     * (fill_zeros_like), so the grad op sees one gradient per output, in order.
     */
    private static void fillMissingGrads(Block block, Op op, Map<String, List<String>> outGrads) {
        for (var e : op.outputs().entrySet()) {
            List<String> grads = outGrads.get(OpSpec.gradSlot(e.getKey()));
            if (grads == null) {
                continue;
            }
            for (int j = 0; j < grads.size(); j++) {
                if (grads.get(j) == null) {
                    String out = e.getValue().get(j);
                    String zero = block.program().uniqueName(gradName(out) + "@ZERO");
                    block.appendOp(InitOps.FILL_ZEROS_LIKE, Map.of("X", List.of(out)), Map.of("Out", List.of(zero)),
                            Map.of());
                    grads.set(j, zero);
                }
            }
        }
    }

    private static long[] positive(long[] s) {
        long[] p = s.clone();
        for (int i = 0; i < p.length; i++) {
            p[i] = Math.abs(p[i]);
        }
        return p;
    }

    private static boolean hasUnknown(long[] s) {
        for (long d : s) {
            if (d < 0) {
                return true;
            }
        }
        return false;
    }

    /** Vars whose value depends on a trainable parameter (and so need a gradient). */
    private static Set<String> requiresGrad(Block block, List<Op> ops, Set<String> only) {
        Set<String> rg = new HashSet<>();
        for (Var v : block.vars()) {
            if (v.isParameter() && !v.stopGradient() && (only == null || only.contains(v.name()))) {
                rg.add(v.name());
            }
        }
        for (Op op : ops) {
            OpSpec spec = OpRegistry.get(op.type());
            boolean any = op.inputs().entrySet().stream().anyMatch(e -> !spec.isNoGradInput(e.getKey())
                    && e.getValue().stream().anyMatch(rg::contains));
            if (!any) {
                continue;
            }
            for (String out : op.allOutputs()) {
                Var v = block.var(out);
                if (!v.persistable() && !v.stopGradient() && v.dtype().isFloating()) {
                    rg.add(out);
                }
            }
        }
        return rg;
    }

    /** Indices of ops whose outputs the loss depends on. */
    private static Set<Integer> opsLeadingTo(List<Op> ops, String loss) {
        Set<String> needed = new HashSet<>(List.of(loss));
        Set<Integer> path = new HashSet<>();
        for (int i = ops.size() - 1; i >= 0; i--) {
            Op op = ops.get(i);
            if (op.allOutputs().stream().anyMatch(needed::contains)) {
                path.add(i);
                needed.addAll(op.allInputs());
            }
        }
        return path;
    }

    private static String newContribution(String var, Map<String, List<String>> contributions) {
        List<String> list = contributions.computeIfAbsent(var, k -> new ArrayList<>());
        String name = list.isEmpty() ? gradName(var) : gradName(var) + "@RENAME@" + list.size();
        list.add(name);
        return name;
    }

    private static String unusedGrad(Block block, String var) {
        return block.program().uniqueName(gradName(var) + "@UNUSED");
    }

    /** The single gradient var of {@code var}, summing several contributions first; null when none exist. */
    private static String finalGrad(Block block, String var, Map<String, List<String>> contributions) {
        List<String> list = contributions.get(var);
        if (list == null || list.isEmpty()) {
            return null;
        }
        if (list.size() == 1) {
            return list.get(0);
        }
        String first = list.get(0);
        String renamed = gradName(var) + "@RENAME@0";
        // the first contribution was named x@GRAD; give the sum that name so x@GRAD is always the full gradient
        block.createVar(renamed, block.var(first).dtype(), block.var(first).shape());
        renameOutput(block, first, renamed);
        List<String> parts = new ArrayList<>(list);
        parts.set(0, renamed);
        block.appendOp("sum", Map.of("X", parts), Map.of("Out", List.of(first)), Map.of());
        contributions.put(var, new ArrayList<>(List.of(first)));
        return first;
    }

    private static void renameOutput(Block block, String from, String to) {
        for (Op op : block.ops()) {
            if (op.allOutputs().contains(from) || op.allInputs().contains(from)) {
                op.renameVar(from, to);
            }
        }
    }
}
