package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.F32;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code fused_sgd}, {@code fused_momentum} and {@code fused_adam}: one op updates every parameter of one optimizer
 * type. Parameters and moments live in one contiguous buffer per slot; the op binds each parameter var to its view
 * of that buffer, so the scope holds the views and later steps update the buffers in place. The arithmetic is that
 * of the single-parameter ops, element for element, at SIMD width ({@link VectorLoops}).
 */
@AutoService(OpLibrary.class)
public final class FusedOptimizerOps implements OpLibrary {
    public static final String SGD = "fused_sgd";
    public static final String MOMENTUM = "fused_momentum";
    public static final String ADAM = "fused_adam";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(SGD)
                .variadicIn("Param").variadicIn("Grad").in("LearningRate").out("ParamOut")
                .attr("weight_decay", AttrType.FLOAT, 0f)
                .shape(ctx -> sameCounts(ctx.op(), "Param", "Grad"))
                .kernel(op -> new Sgd(op.floatAttr("weight_decay")))
                .build());
        specs.add(OpSpec.builder(MOMENTUM)
                .variadicIn("Param").variadicIn("Grad").variadicIn("Velocity").in("LearningRate")
                .out("ParamOut", "VelocityOut")
                .attr("mu", AttrType.FLOAT, 0.9f)
                .attr("use_nesterov", AttrType.BOOL, false)
                .attr("weight_decay", AttrType.FLOAT, 0f)
                .shape(ctx -> sameCounts(ctx.op(), "Param", "Grad", "Velocity"))
                .kernel(op -> new Momentum(op.floatAttr("mu"), op.boolAttr("use_nesterov"), op.floatAttr("weight_decay")))
                .build());
        specs.add(OpSpec.builder(ADAM)
                .variadicIn("Param").variadicIn("Grad").in("LearningRate").variadicIn("Moment1").variadicIn("Moment2")
                .variadicIn("Beta1Pow").variadicIn("Beta2Pow")
                .out("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut")
                .attr("beta1", AttrType.FLOAT, 0.9f)
                .attr("beta2", AttrType.FLOAT, 0.999f)
                .attr("epsilon", AttrType.FLOAT, 1e-8f)
                .attr("coeff", AttrType.FLOAT, 0f)
                .shape(ctx -> sameCounts(ctx.op(), "Param", "Grad", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"))
                .kernel(op -> new Adam(op.floatAttr("beta1"), op.floatAttr("beta2"), op.floatAttr("epsilon"),
                        op.floatAttr("coeff")))
                .build());
        return specs;
    }

    private static void sameCounts(org.fleet4j.core.ir.Op op, String... slots) {
        int n = op.input(slots[0]).size();
        for (String s : slots) {
            if (op.input(s).size() != n) {
                throw new IrException(op.type() + ": slot " + s + " has " + op.input(s).size() + " vars, " + slots[0]
                        + " has " + n + "; every slot needs one var per parameter");
            }
        }
    }

    /**
     * The contiguous buffers of the state slots (Param and the moments). Rebuilt, copying the current values in,
     * whenever a slot's tensor is not the view it handed out (first step, or after a checkpoint was loaded).
     */
    static final class Layout {
        private final String[] inSlots;
        private final String[] outSlots;
        private Tensor[][] views;
        long[] offsets;

        Layout(String[] inSlots, String[] outSlots) {
            this.inSlots = inSlots;
            this.outSlots = outSlots;
        }

        void bind(KernelArgs a) {
            int n = a.inCount(inSlots[0]);
            if (!current(a, n)) {
                rebuild(a, n);
            }
            for (int s = 0; s < inSlots.length; s++) {
                for (int j = 0; j < n; j++) {
                    a.setOut(outSlots[s], j, views[s][j]);
                }
            }
        }

        MemorySegment segment(int slot, int j) {
            return views[slot][j].segment();
        }

        private boolean current(KernelArgs a, int n) {
            if (views == null || views[0].length != n) {
                return false;
            }
            for (int s = 0; s < inSlots.length; s++) {
                for (int j = 0; j < n; j++) {
                    if (a.in(inSlots[s], j) != views[s][j]) {
                        return false;
                    }
                }
            }
            return true;
        }

        private void rebuild(KernelArgs a, int n) {
            offsets = new long[n + 1];
            for (int j = 0; j < n; j++) {
                Tensor p = a.in(inSlots[0], j);
                if (p.dtype() != DType.F32) {
                    throw new IrException(a.op().type() + ": parameter " + a.op().input(inSlots[0]).get(j) + " is "
                            + p.dtype().displayName() + "; the fused optimizer updates float32 only");
                }
                offsets[j + 1] = offsets[j] + p.numel();
            }
            views = new Tensor[inSlots.length][n];
            for (int s = 0; s < inSlots.length; s++) {
                Tensor buffer = Tensor.zeros(DType.F32, offsets[n]);
                for (int j = 0; j < n; j++) {
                    Tensor old = a.in(inSlots[s], j);
                    Tensor view = buffer.rows(offsets[j], offsets[j + 1]).reshape(old.shape());
                    view.copyFrom(old);
                    views[s][j] = view;
                }
            }
        }
    }

    private static MemorySegment grad(KernelArgs a, int j) {
        if (!(a.inValue("Grad", j) instanceof Tensor g)) {
            throw new IrException(a.op().type() + ": gradient " + a.op().input("Grad").get(j)
                    + " is sparse; the fuse_all_optimizer_ops pass leaves sparse updates unfused");
        }
        return g.segment();
    }

    /** p -= lr (g + wd p), over every parameter. */
    static final class Sgd implements Kernel {
        private final float wd;
        private final Layout layout = new Layout(new String[]{"Param"}, new String[]{"ParamOut"});

        Sgd(float wd) {
            this.wd = wd;
        }

        @Override
        public void run(KernelArgs a) {
            layout.bind(a);
            float lr = a.in("LearningRate").getFloat(0);
            for (int j = 0; j < layout.offsets.length - 1; j++) {
                MemorySegment ps = layout.segment(0, j);
                MemorySegment gs = grad(a, j);
                F32.sgd(ps, gs, lr, wd, layout.offsets[j + 1] - layout.offsets[j]);
            }
        }
    }

    /** v = mu v + g; p -= lr v (or lr (g + mu v), Nesterov), over every parameter. */
    static final class Momentum implements Kernel {
        private final float mu;
        private final boolean nesterov;
        private final float wd;
        private final Layout layout = new Layout(new String[]{"Param", "Velocity"}, new String[]{"ParamOut", "VelocityOut"});

        Momentum(float mu, boolean nesterov, float wd) {
            this.mu = mu;
            this.nesterov = nesterov;
            this.wd = wd;
        }

        @Override
        public void run(KernelArgs a) {
            layout.bind(a);
            float lr = a.in("LearningRate").getFloat(0);
            for (int j = 0; j < layout.offsets.length - 1; j++) {
                MemorySegment ps = layout.segment(0, j);
                MemorySegment vs = layout.segment(1, j);
                MemorySegment gs = grad(a, j);
                VectorLoops.momentum(ps, vs, gs, layout.offsets[j + 1] - layout.offsets[j], lr, mu, nesterov, wd);
            }
        }
    }

    /** Adam as the single-parameter op computes it (bias correction folded into the step); coeff > 0 is AdamW. */
    static final class Adam implements Kernel {
        private final float beta1;
        private final float beta2;
        private final float eps;
        private final float coeff;
        private final Layout layout = new Layout(new String[]{"Param", "Moment1", "Moment2"},
                new String[]{"ParamOut", "Moment1Out", "Moment2Out"});

        Adam(float beta1, float beta2, float eps, float coeff) {
            this.beta1 = beta1;
            this.beta2 = beta2;
            this.eps = eps;
            this.coeff = coeff;
        }

        @Override
        public void run(KernelArgs a) {
            layout.bind(a);
            float lr = a.in("LearningRate").getFloat(0);
            float decay = 1f - lr * coeff;
            for (int j = 0; j < layout.offsets.length - 1; j++) {
                Tensor b1p = a.in("Beta1Pow", j);
                Tensor b2p = a.in("Beta2Pow", j);
                float b1pow = b1p.getFloat(0);
                float b2pow = b2p.getFloat(0);
                float lrT = (float) (lr * Math.sqrt(1 - b2pow) / (1 - b1pow));
                float epsT = (float) (eps * Math.sqrt(1 - b2pow));
                MemorySegment ps = layout.segment(0, j);
                MemorySegment m1 = layout.segment(1, j);
                MemorySegment m2 = layout.segment(2, j);
                MemorySegment gs = grad(a, j);
                VectorLoops.adam(ps, m1, m2, gs, layout.offsets[j + 1] - layout.offsets[j], beta1, beta2, lrT, epsT, decay);
                b1p.setFloat(0, b1pow * beta1);
                b2p.setFloat(0, b2pow * beta2);
                a.setOut("Beta1PowOut", j, b1p);
                a.setOut("Beta2PowOut", j, b2p);
            }
        }
    }
}
