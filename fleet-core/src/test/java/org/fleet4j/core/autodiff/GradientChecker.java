package org.fleet4j.core.autodiff;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.Tensor;

/**
 * Checks an op's gradient kernel against central finite differences.
 * <p>It builds a one-op program whose inputs are persistable vars (the checked ones are parameters), and a
 * loss L = sum over the chosen outputs of sum(w * out) with fixed random weights w (so that errors of opposite
 * sign in different elements cannot cancel), appends backward with {@link Backward}, and runs it once for the
 * analytic gradients. Then, for every element of every checked input, it runs the forward program at x + eps
 * and x - eps and takes (L+ - L-) / (2 eps), with L summed in double and eps the perturbation actually stored
 * in the tensor. Every evaluation uses a fresh executor, so random ops (dropout) draw the same numbers each time.
 * <pre>
 * GradientChecker.forOp("matmul").input("X", x).input("Y", y).attr("transpose_Y", true).check();
 * </pre>
 * The error of an element is |analytic - numeric| / max(1, |analytic|, |numeric|): absolute for small
 * gradients, relative for large ones.
 */
public final class GradientChecker {
    private final String type;
    private final OpSpec spec;
    private final Map<String, List<Tensor>> inputs = new LinkedHashMap<>();
    private final Map<String, Object> attrs = new LinkedHashMap<>();
    private final Set<String> skipped = new LinkedHashSet<>();
    private final Map<String, Integer> outputCounts = new LinkedHashMap<>();
    private List<String> lossOutputs;
    private double epsilon = 1e-3;
    private double tolerance = 5e-3;
    private long seed = 1;

    private GradientChecker(String type) {
        this.type = type;
        this.spec = OpRegistry.get(type);
    }

    public static GradientChecker forOp(String type) {
        return new GradientChecker(type);
    }

    /** The value(s) of an input slot; a variadic slot takes several. The tensors are not modified. */
    public GradientChecker input(String slot, Tensor... values) {
        if (!spec.inputs().contains(slot)) {
            throw new IllegalArgumentException("op " + type + " has no input slot '" + slot + "' (inputs: "
                    + spec.inputs() + ")");
        }
        inputs.put(slot, List.of(values));
        return this;
    }

    /** The inputs given, by slot. */
    public Map<String, List<Tensor>> inputs() {
        return java.util.Collections.unmodifiableMap(inputs);
    }

    /** The op type checked. */
    public String type() {
        return type;
    }

    public GradientChecker attr(String name, Object value) {
        attrs.put(name, value);
        return this;
    }

    /** The output slots the loss is built from; by default the op's first output. */
    public GradientChecker lossFrom(String... outputSlots) {
        for (String s : outputSlots) {
            if (!spec.outputs().contains(s)) {
                throw new IllegalArgumentException("op " + type + " has no output slot '" + s + "' (outputs: "
                        + spec.outputs() + ")");
            }
        }
        lossOutputs = List.of(outputSlots);
        return this;
    }

    /**
     * How many vars an output slot of several (split's Out) gets; the loss is built from each of them, which
     * {@link #analytic()} names {@code slot.j}.
     */
    public GradientChecker outputs(String slot, int count) {
        if (!spec.outputs().contains(slot) || count < 1) {
            throw new IllegalArgumentException("op " + type + ": output slot '" + slot + "' (outputs: " + spec.outputs()
                    + ") cannot have " + count + " vars");
        }
        outputCounts.put(slot, count);
        return this;
    }

    /** Input slots whose gradient is not checked (inputs that are not floating point are never checked). */
    public GradientChecker skip(String... slots) {
        skipped.addAll(List.of(slots));
        return this;
    }

    /** The finite-difference step (default 1e-3, right for float32 values of order 1). */
    public GradientChecker epsilon(double eps) {
        this.epsilon = eps;
        return this;
    }

    /** The largest error {@link #check()} accepts (default 5e-3). */
    public GradientChecker tolerance(double tol) {
        this.tolerance = tol;
        return this;
    }

    /** Seed of the loss weights. */
    public GradientChecker seed(long s) {
        this.seed = s;
        return this;
    }

    /** The worst disagreement for one checked input. {@code element} is the multi-dimensional index. */
    public record InputError(String slot, int position, long[] element, double analytic, double numeric,
                             double absError, double error) {
        @Override
        public String toString() {
            return String.format("%s[%d] at %s: analytic %.6g, numeric %.6g (abs error %.3g, error %.3g)", slot,
                    position, Arrays.toString(element), analytic, numeric, absError, error);
        }
    }

    /** The outcome: the worst error of every checked input, and the tolerance it was held to. */
    public record Result(String op, List<InputError> inputs, double tolerance) {
        public boolean passed() {
            return worst().error() <= tolerance;
        }

        public InputError worst() {
            InputError w = inputs.get(0);
            for (InputError e : inputs) {
                if (e.error() > w.error() || Double.isNaN(e.error())) {
                    w = e;
                }
            }
            return w;
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("gradient check of ").append(op)
                    .append(passed() ? " passed" : " FAILED").append(" (tolerance ").append(tolerance).append(")");
            for (InputError e : inputs) {
                sb.append("\n  ").append(e);
            }
            return sb.toString();
        }
    }

    /** Thrown by {@link #check()} when a gradient disagrees with finite differences. */
    public static final class GradientMismatchException extends RuntimeException {
        private final transient Result result;

        GradientMismatchException(Result result) {
            super(result.toString());
            this.result = result;
        }

        public Result result() {
            return result;
        }
    }

    /** Runs the check and throws {@link GradientMismatchException}, naming the op, slot and element, on failure. */
    public Result check() {
        Result r = run();
        if (!r.passed()) {
            throw new GradientMismatchException(r);
        }
        return r;
    }

    /** One checked input: its slot, position in the slot and var name. */
    private record Checked(String slot, int position, String var) {
    }

    /**
     * The op's outputs and the analytic gradients of its checked inputs, as {@link #analytic()} returns them; outputs
     * and loss weights by slot, or by {@code slot.j} for a slot of several vars.
     */
    public record Analytic(Map<String, Tensor> outputs, Map<String, Tensor> lossWeights,
                           Map<String, List<Tensor>> gradients) {
    }

    /** The one-op program with its loss and backward, and what it needs to run. */
    private record Built(Program main, Program forward, Map<String, Tensor> values, List<Checked> checked,
                         List<String> lossSlots, List<String> fetched, List<Tensor> weights, Map<String, String> gradOf) {
    }

    /**
     * Runs the op and its backward once: the outputs the loss is built from (by slot), the loss weights w of
     * L = sum(w * out) (by slot), and the gradient dL/dx of every checked input (by slot, one per position). For
     * comparing an op with another framework's on the same inputs and weights.
     */
    public Analytic analytic() {
        Built b = build();
        List<String> fetch = new ArrayList<>(b.fetched());
        b.checked().forEach(c -> fetch.add(gradOrFail(b.gradOf(), c)));
        Map<String, Tensor> got = new Executor().run(b.main(), scopeOf(b.values()), Map.of(), fetch);
        Map<String, Tensor> outputs = new LinkedHashMap<>();
        Map<String, Tensor> lossWeights = new LinkedHashMap<>();
        for (int k = 0; k < b.lossSlots().size(); k++) {
            outputs.put(b.lossSlots().get(k), got.get(b.fetched().get(k)));
            lossWeights.put(b.lossSlots().get(k), b.weights().get(k));
        }
        Map<String, List<Tensor>> gradients = new LinkedHashMap<>();
        for (Checked c : b.checked()) {
            gradients.computeIfAbsent(c.slot(), k -> new ArrayList<>()).add(got.get(b.gradOf().get(c.var())));
        }
        return new Analytic(outputs, lossWeights, gradients);
    }

    /** Computes analytic and numeric gradients and returns the worst errors; does not judge them. */
    public Result run() {
        Built b = build();
        Map<String, Tensor> analytic = new Executor().run(b.main(), scopeOf(b.values()), Map.of(),
                b.checked().stream().map(c -> gradOrFail(b.gradOf(), c)).toList());

        List<InputError> errors = new ArrayList<>();
        for (Checked c : b.checked()) {
            Tensor x = b.values().get(c.var());
            Tensor g = analytic.get(b.gradOf().get(c.var()));
            if (!Arrays.equals(g.shape(), x.shape())) {
                throw new IrException("op " + type + ": the gradient of " + c.slot() + " has shape "
                        + Arrays.toString(g.shape()) + ", the input " + Arrays.toString(x.shape()));
            }
            InputError worst = null;
            for (long i = 0; i < x.numel(); i++) {
                double numeric = numericGradient(b.forward(), b.values(), c.var(), i, b.fetched(), b.weights());
                double a = g.getDouble(i);
                double abs = Math.abs(a - numeric);
                double err = abs / Math.max(1.0, Math.max(Math.abs(a), Math.abs(numeric)));
                if (worst == null || err > worst.error() || Double.isNaN(err)) {
                    worst = new InputError(c.slot(), c.position(), unflatten(i, x.shape()), a, numeric, abs, err);
                }
            }
            errors.add(worst);
        }
        return new Result(type, errors, tolerance);
    }

    private Built build() {
        Map<String, Tensor> values = new LinkedHashMap<>();
        List<Checked> checked = new ArrayList<>();
        Program main = new Program();
        Block block = main.globalBlock();
        Map<String, List<String>> ins = new LinkedHashMap<>();
        for (var e : inputs.entrySet()) {
            List<String> names = new ArrayList<>();
            for (int j = 0; j < e.getValue().size(); j++) {
                Tensor t = e.getValue().get(j);
                String name = e.getKey().toLowerCase() + (e.getValue().size() > 1 ? "_" + j : "");
                Var v = block.createVar(name, t.dtype(), t.shape());
                boolean check = t.dtype().isFloating() && !spec.isNoGradInput(e.getKey())
                        && !skipped.contains(e.getKey());
                if (check) {
                    v.setParameter(true);
                    checked.add(new Checked(e.getKey(), j, name));
                } else {
                    v.setPersistable(true).setStopGradient(true);
                }
                values.put(name, t);
                names.add(name);
            }
            ins.put(e.getKey(), names);
        }
        if (checked.isEmpty()) {
            throw new IllegalArgumentException("op " + type + ": no floating-point input to check (inputs given: "
                    + inputs.keySet() + ", skipped: " + skipped + ")");
        }
        Map<String, List<String>> outs = new LinkedHashMap<>();
        for (String slot : spec.outputs()) {
            int count = outputCounts.getOrDefault(slot, 1);
            List<String> names = new ArrayList<>();
            for (int j = 0; j < count; j++) {
                names.add("out_" + slot.toLowerCase() + (count > 1 ? "_" + j : ""));
            }
            outs.put(slot, names);
        }
        block.appendOp(type, ins, outs, attrs);

        List<String> lossSlots = new ArrayList<>();
        List<String> lossVars = new ArrayList<>();
        for (String slot : lossOutputs != null ? lossOutputs : List.of(spec.outputs().get(0))) {
            List<String> names = outs.get(slot);
            for (int j = 0; j < names.size(); j++) {
                lossSlots.add(names.size() > 1 ? slot + "." + j : slot);
                lossVars.add(names.get(j));
            }
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<String> fetched = new ArrayList<>();
        List<Tensor> weights = new ArrayList<>();
        List<String> terms = new ArrayList<>();
        for (String varName : lossVars) {
            Var out = block.var(varName);
            Tensor w = Tensor.zeros(out.dtype(), out.shape());
            for (long i = 0; i < w.numel(); i++) {
                w.setDouble(i, (0.5 + random.nextDouble()) * (random.nextBoolean() ? 1 : -1));
            }
            String wName = "loss_weight_" + varName.substring("out_".length());
            block.createVar(wName, w.dtype(), w.shape()).setPersistable(true).setStopGradient(true);
            values.put(wName, w);
            fetched.add(out.name());
            weights.add(w);
            String product = main.uniqueName("weighted");
            String mean = main.uniqueName("mean");
            String sum = main.uniqueName("sum");
            block.appendOp("elementwise_mul", Map.of("X", List.of(out.name()), "Y", List.of(wName)),
                    Map.of("Out", List.of(product)), Map.of());
            block.appendOp("mean", Map.of("X", List.of(product)), Map.of("Out", List.of(mean)), Map.of());
            block.appendOp("scale", Map.of("X", List.of(mean)), Map.of("Out", List.of(sum)),
                    Map.of("scale", (float) w.numel()));
            terms.add(sum);
        }
        String loss = terms.get(0);
        if (terms.size() > 1) {
            loss = "loss";
            block.appendOp("sum", Map.of("X", terms), Map.of("Out", List.of(loss)), Map.of());
        }
        Program forward = main.copy();
        List<ParamGrad> grads = Backward.appendBackward(block.var(loss));
        Map<String, String> gradOf = new LinkedHashMap<>();
        grads.forEach(pg -> gradOf.put(pg.param(), pg.grad()));
        return new Built(main, forward, values, checked, lossSlots, fetched, weights, gradOf);
    }

    private String gradOrFail(Map<String, String> gradOf, Checked c) {
        String g = gradOf.get(c.var());
        if (g == null) {
            throw new IrException("op " + type + ": backward produced no gradient for input " + c.slot());
        }
        return g;
    }

    /** (L(x + d+) - L(x - d-)) / (d+ + d-), with d± the perturbations as stored in x's dtype. */
    private double numericGradient(Program forward, Map<String, Tensor> values, String var, long i,
                                   List<String> fetched, List<Tensor> weights) {
        double x0 = values.get(var).getDouble(i);
        Map<String, Tensor> perturbed = copies(values);
        Tensor t = perturbed.get(var);
        t.setDouble(i, x0 + epsilon);
        double up = t.getDouble(i) - x0;
        double lossUp = loss(forward, perturbed, fetched, weights);
        perturbed = copies(values);
        t = perturbed.get(var);
        t.setDouble(i, x0 - epsilon);
        double down = x0 - t.getDouble(i);
        double lossDown = loss(forward, perturbed, fetched, weights);
        return (lossUp - lossDown) / (up + down);
    }

    private static double loss(Program forward, Map<String, Tensor> values, List<String> fetched, List<Tensor> weights) {
        Scope scope = new Scope();
        values.forEach(scope::put);
        Map<String, Tensor> outs = new Executor().run(forward, scope, Map.of(), fetched);
        double l = 0;
        for (int k = 0; k < fetched.size(); k++) {
            Tensor out = outs.get(fetched.get(k));
            Tensor w = weights.get(k);
            for (long i = 0; i < out.numel(); i++) {
                l += out.getDouble(i) * w.getDouble(i);
            }
        }
        return l;
    }

    private static Scope scopeOf(Map<String, Tensor> values) {
        Scope scope = new Scope();
        copies(values).forEach(scope::put);
        return scope;
    }

    /** Fresh copies, since ops such as batch_norm update some inputs in place. */
    private static Map<String, Tensor> copies(Map<String, Tensor> values) {
        Map<String, Tensor> c = new LinkedHashMap<>();
        values.forEach((k, v) -> c.put(k, v.copy()));
        return c;
    }

    private static long[] unflatten(long flat, long[] shape) {
        long[] idx = new long[shape.length];
        for (int d = shape.length - 1; d >= 0; d--) {
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
        return idx;
    }
}
