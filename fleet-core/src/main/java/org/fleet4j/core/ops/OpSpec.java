package org.fleet4j.core.ops;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.tensor.DType;

/**
 * Everything Fleet4J knows about one op type: its input and output slots, attributes with types and defaults,
 * shape inference, CPU kernel, and (when differentiable) the kernel of its gradient op {@code <type>_grad}.
 */
public final class OpSpec {
    private final String type;
    private final List<String> inputs;
    private final Set<String> optionalInputs;
    private final Set<String> variadicInputs;
    private final List<String> outputs;
    private final Set<String> optionalOutputs;
    private final Map<String, AttrDef> attrs;
    private final Set<String> noGradInputs;
    private final ShapeFn shapeFn;
    private final KernelFactory kernel;
    private final KernelFactory gradKernel;
    private final ShapeFn gradShapeFn;
    private final boolean keepsOutputs;

    private OpSpec(Builder b) {
        this.type = b.type;
        this.inputs = List.copyOf(b.inputs);
        this.optionalInputs = Set.copyOf(b.optionalInputs);
        this.variadicInputs = Set.copyOf(b.variadicInputs);
        this.outputs = List.copyOf(b.outputs);
        this.optionalOutputs = Set.copyOf(b.optionalOutputs);
        this.attrs = new LinkedHashMap<>(b.attrs);
        this.noGradInputs = Set.copyOf(b.noGradInputs);
        this.shapeFn = b.shapeFn;
        this.kernel = b.kernel;
        this.gradKernel = b.gradKernel;
        this.gradShapeFn = b.gradShapeFn;
        this.keepsOutputs = b.keepsOutputs;
    }

    public static Builder builder(String type) {
        return new Builder(type);
    }

    public String type() {
        return type;
    }

    public List<String> inputs() {
        return inputs;
    }

    public List<String> outputs() {
        return outputs;
    }

    public Map<String, AttrDef> attrs() {
        return attrs;
    }

    /**
     * Whether the kernel owns its outputs' memory for as long as it lives (gather_bucket's bucket and the gradient
     * views into it): num_iteration_per_drop_scope leaves such outputs bound, because dropping them would free
     * nothing and the ops that write them would allocate anew (page faults) and be copied in.
     */
    public boolean keepsOutputs() {
        return keepsOutputs;
    }

    /** Whether backward can pass through this op. */
    public boolean differentiable() {
        return gradKernel != null;
    }

    /** Inputs that never get a gradient (labels, ids, indices). */
    public boolean isNoGradInput(String slot) {
        return noGradInputs.contains(slot);
    }

    public KernelFactory kernelFactory() {
        return kernel;
    }

    /** The name of the gradient of a slot, as grad ops name their slots: "X@GRAD". */
    public static String gradSlot(String slot) {
        return slot + "@GRAD";
    }

    /** The type of the gradient op of {@code type}: "matmul_grad". */
    public static String gradType(String type) {
        return type + "_grad";
    }

    /** The spec of {@code <type>_grad}: inputs are the forward inputs, outputs and output grads; outputs are input grads. */
    OpSpec gradSpec() {
        Builder g = new Builder(gradType(type));
        for (String s : inputs) {
            g.inputs.add(s);
            g.optionalInputs.add(s);
            if (variadicInputs.contains(s)) {
                g.variadicInputs.add(s);
            }
        }
        // an output slot may hold several vars (split's Out), and so may its gradient
        for (String s : outputs) {
            g.inputs.add(s);
            g.optionalInputs.add(s);
            g.variadicInputs.add(s);
        }
        for (String s : outputs) {
            g.inputs.add(gradSlot(s));
            g.optionalInputs.add(gradSlot(s));
            g.variadicInputs.add(gradSlot(s));
        }
        for (String s : inputs) {
            g.outputs.add(gradSlot(s));
            g.optionalOutputs.add(gradSlot(s));
        }
        g.attrs.putAll(attrs);
        g.kernel = gradKernel;
        g.shapeFn = ctx -> {
            for (String s : inputs) {
                for (int j = 0; j < ctx.count(s); j++) {
                    Var x = ctx.input(s, j);
                    ctx.set(gradSlot(s), j, x.dtype(), x.shape());
                }
            }
            if (gradShapeFn != null) {
                gradShapeFn.infer(ctx);
            }
        };
        return new OpSpec(g);
    }

    /**
     * Checks an op against this spec — slots, var existence, attribute names and types — fills in default
     * attributes, creates missing output vars and infers their shapes. Returns the normalised op.
     */
    public Op check(Op op, Block block, int index) {
        String where = "op #" + index + " " + type;
        for (var e : op.inputs().entrySet()) {
            String slot = e.getKey();
            if (!inputs.contains(slot)) {
                throw new IrException(where + " has no input slot '" + slot + "' (inputs: " + inputs + ")");
            }
            if (e.getValue().size() > 1 && !variadicInputs.contains(slot)) {
                throw new IrException(where + ": input slot '" + slot + "' takes one var, got " + e.getValue());
            }
            for (String n : e.getValue()) {
                if (!block.hasVar(n)) {
                    block.var(n); // throws naming the var, with a suggestion
                }
            }
        }
        for (String slot : inputs) {
            if (!optionalInputs.contains(slot) && op.input(slot).isEmpty()) {
                throw new IrException(where + " needs input '" + slot + "'");
            }
        }
        for (var e : op.outputs().entrySet()) {
            if (!outputs.contains(e.getKey())) {
                throw new IrException(where + " has no output slot '" + e.getKey() + "' (outputs: " + outputs + ")");
            }
            for (String n : e.getValue()) {
                if (!block.hasVar(n)) {
                    block.createVar(n, DType.F32);
                }
            }
        }
        for (String slot : outputs) {
            if (!optionalOutputs.contains(slot) && op.output(slot).isEmpty()) {
                throw new IrException(where + " needs output '" + slot + "'");
            }
        }
        for (var e : op.attrs().entrySet()) {
            if (!attrs.containsKey(e.getKey())) {
                throw new IrException(where + " has no attribute '" + e.getKey() + "'"
                        + (attrs.isEmpty() ? " (it takes none)" : " (attributes: " + attrs.keySet() + ")"));
            }
        }
        // slots and attributes in the spec's order, whatever the caller's map order, so programs print the same every run
        Map<String, Object> normalised = new LinkedHashMap<>();
        for (AttrDef def : attrs.values()) {
            Object value = op.attrs().get(def.name());
            if (value == null) {
                if (def.defaultValue() == null) {
                    throw new IrException(where + " needs attribute '" + def.name() + "' ("
                            + def.type().name().toLowerCase() + ")");
                }
                value = def.defaultValue();
            }
            try {
                normalised.put(def.name(), def.type().coerce(value));
            } catch (IllegalArgumentException ex) {
                throw new IrException(where + ": attribute '" + def.name() + "': " + ex.getMessage());
            }
        }
        Op checked = new Op(type, inSpecOrder(op.inputs(), inputs), inSpecOrder(op.outputs(), outputs), normalised);
        if (shapeFn != null) {
            shapeFn.infer(new InferContext(checked, block, index));
        }
        return checked;
    }

    private static Map<String, List<String>> inSpecOrder(Map<String, List<String>> slots, List<String> order) {
        Map<String, List<String>> ordered = new LinkedHashMap<>();
        for (String s : order) {
            if (slots.containsKey(s)) {
                ordered.put(s, slots.get(s));
            }
        }
        return ordered;
    }

    /** Fluent construction of a spec. */
    public static final class Builder {
        private final String type;
        private final List<String> inputs = new ArrayList<>();
        private final Set<String> optionalInputs = new LinkedHashSet<>();
        private final Set<String> variadicInputs = new LinkedHashSet<>();
        private final List<String> outputs = new ArrayList<>();
        private final Set<String> optionalOutputs = new LinkedHashSet<>();
        private final Map<String, AttrDef> attrs = new LinkedHashMap<>();
        private final Set<String> noGradInputs = new LinkedHashSet<>();
        private ShapeFn shapeFn;
        private KernelFactory kernel;
        private KernelFactory gradKernel;
        private ShapeFn gradShapeFn;
        private boolean keepsOutputs;

        private Builder(String type) {
            this.type = type;
        }

        public Builder in(String... slots) {
            inputs.addAll(List.of(slots));
            return this;
        }

        public Builder optionalIn(String... slots) {
            in(slots);
            optionalInputs.addAll(List.of(slots));
            return this;
        }

        public Builder variadicIn(String slot) {
            inputs.add(slot);
            variadicInputs.add(slot);
            return this;
        }

        /** A slot of any number of vars, none included. */
        public Builder optionalVariadicIn(String slot) {
            variadicIn(slot);
            optionalInputs.add(slot);
            return this;
        }

        public Builder noGrad(String... slots) {
            noGradInputs.addAll(List.of(slots));
            return this;
        }

        public Builder out(String... slots) {
            outputs.addAll(List.of(slots));
            return this;
        }

        public Builder optionalOut(String... slots) {
            out(slots);
            optionalOutputs.addAll(List.of(slots));
            return this;
        }

        public Builder attr(String name, AttrType type, Object defaultValue) {
            attrs.put(name, new AttrDef(name, type, defaultValue));
            return this;
        }

        public Builder shape(ShapeFn fn) {
            this.shapeFn = fn;
            return this;
        }

        public Builder kernel(KernelFactory k) {
            this.kernel = k;
            return this;
        }

        /** A kernel that needs nothing from the job's {@link ExecContext}. */
        public Builder kernel(Function<Op, Kernel> k) {
            return kernel((op, context) -> k.apply(op));
        }

        public Builder gradKernel(KernelFactory k) {
            this.gradKernel = k;
            return this;
        }

        /** A gradient kernel that needs nothing from the job's {@link ExecContext}. */
        public Builder gradKernel(Function<Op, Kernel> k) {
            return gradKernel((op, context) -> k.apply(op));
        }

        /** Extra inference for the grad op beyond "an input's grad has the input's shape" (e.g. sparse grads). */
        public Builder gradShape(ShapeFn fn) {
            this.gradShapeFn = fn;
            return this;
        }

        /** The kernel owns its outputs' memory; see {@link OpSpec#keepsOutputs()}. */
        public Builder keepsOutputs() {
            this.keepsOutputs = true;
            return this;
        }

        public OpSpec build() {
            return new OpSpec(this);
        }
    }
}
