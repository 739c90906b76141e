package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * Parameter updates: sgd, momentum (with Nesterov), adagrad, adam and adamw, in place on the parameter and its moments.
 * A sparse gradient ({@link SelectedRows}) updates only its rows in sgd and lazy adam; the others densify it. The
 * arithmetic is that of {@link UpdateRules}, which the parameter servers share.
 */
@AutoService(OpLibrary.class)
public final class OptimizerOps implements OpLibrary {
    public static final String SGD = "sgd";
    public static final String MOMENTUM = "momentum";
    public static final String ADAGRAD = "adagrad";
    public static final String ADAM = "adam";
    public static final String ADAMW = "adamw";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(SGD)
                .in("Param", "Grad", "LearningRate").out("ParamOut")
                .attr("weight_decay", AttrType.FLOAT, 0f)
                .shape(ctx -> sameAsParam(ctx, "ParamOut"))
                .kernel(op -> {
                    float wd = op.floatAttr("weight_decay");
                    return a -> {
                        Tensor p = a.in("Param");
                        float lr = a.in("LearningRate").getFloat(0);
                        Object g = a.inValue("Grad", 0);
                        if (g instanceof SelectedRows sr && wd == 0f) {
                            long w = sr.width();
                            for (long i = 0; i < sr.rows().numel(); i++) {
                                long row = sr.rows().getLong(i);
                                MemorySegment pr = p.segment().asSlice(row * w * 4, w * 4);
                                F32.axpy(-lr, sr.values().segment().asSlice(i * w * 4, w * 4), pr, w);
                            }
                        } else {
                            UpdateRules.sgd(p.segment(), dense(g).segment(), lr, wd, p.numel());
                        }
                        a.setOut("ParamOut", p);
                    };
                })
                .build());

        specs.add(OpSpec.builder(MOMENTUM)
                .in("Param", "Grad", "Velocity", "LearningRate").out("ParamOut", "VelocityOut")
                .attr("mu", AttrType.FLOAT, 0.9f)
                .attr("use_nesterov", AttrType.BOOL, false)
                .attr("weight_decay", AttrType.FLOAT, 0f)
                .shape(ctx -> {
                    sameAsParam(ctx, "ParamOut");
                    sameAsParam(ctx, "VelocityOut");
                })
                .kernel(op -> {
                    float mu = op.floatAttr("mu");
                    boolean nesterov = op.boolAttr("use_nesterov");
                    float wd = op.floatAttr("weight_decay");
                    return a -> {
                        Tensor p = a.in("Param");
                        Tensor v = a.in("Velocity");
                        Tensor g = dense(a.inValue("Grad", 0));
                        float lr = a.in("LearningRate").getFloat(0);
                        UpdateRules.momentum(p.segment(), v.segment(), g.segment(), p.numel(), lr, mu, nesterov, wd);
                        a.setOut("ParamOut", p);
                        a.setOut("VelocityOut", v);
                    };
                })
                .build());

        specs.add(OpSpec.builder(ADAGRAD)
                .in("Param", "Grad", "Moment", "LearningRate").out("ParamOut", "MomentOut")
                .attr("epsilon", AttrType.FLOAT, 1e-6f)
                // what the startup program filled Moment with; the kernel does not read it, a parameter server does
                .attr("initial_accumulator_value", AttrType.FLOAT, 0f)
                .shape(ctx -> {
                    sameAsParam(ctx, "ParamOut");
                    sameAsParam(ctx, "MomentOut");
                })
                .kernel(op -> {
                    float eps = op.floatAttr("epsilon");
                    return a -> {
                        Tensor p = a.in("Param");
                        Tensor m = a.in("Moment");
                        Tensor g = dense(a.inValue("Grad", 0));
                        float lr = a.in("LearningRate").getFloat(0);
                        UpdateRules.adagrad(p.segment(), m.segment(), g.segment(), p.numel(), lr, eps);
                        a.setOut("ParamOut", p);
                        a.setOut("MomentOut", m);
                    };
                })
                .build());

        for (String type : new String[]{"adam", "adamw"}) {
            boolean decoupled = type.equals("adamw");
            OpSpec.Builder b = OpSpec.builder(type)
                    .in("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow")
                    .out("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut")
                    .attr("beta1", AttrType.FLOAT, 0.9f)
                    .attr("beta2", AttrType.FLOAT, 0.999f)
                    .attr("epsilon", AttrType.FLOAT, 1e-8f)
                    .attr("lazy_mode", AttrType.BOOL, false);
            if (decoupled) {
                b.attr("coeff", AttrType.FLOAT, 0.01f);
            }
            specs.add(b
                    .shape(ctx -> {
                        sameAsParam(ctx, "ParamOut");
                        sameAsParam(ctx, "Moment1Out");
                        sameAsParam(ctx, "Moment2Out");
                        ctx.set("Beta1PowOut", DType.F32, ctx.shape("Beta1Pow"));
                        ctx.set("Beta2PowOut", DType.F32, ctx.shape("Beta2Pow"));
                    })
                    .kernel(op -> new Adam(op.floatAttr("beta1"), op.floatAttr("beta2"), op.floatAttr("epsilon"),
                            op.boolAttr("lazy_mode"), decoupled ? op.floatAttr("coeff") : 0f))
                    .build());
        }
        return specs;
    }

    private static void sameAsParam(InferContext ctx, String out) {
        ctx.requireFloat("Param");
        ctx.set(out, ctx.dtype("Param"), ctx.shape("Param"));
    }

    private static Tensor dense(Object g) {
        return g instanceof SelectedRows sr ? sr.toDense() : (Tensor) g;
    }

    /** Adam as Paddle computes it (bias correction folded into the step size); coeff > 0 makes it AdamW. */
    static final class Adam implements Kernel {
        private final float beta1;
        private final float beta2;
        private final float eps;
        private final boolean lazy;
        private final float coeff;

        Adam(float beta1, float beta2, float eps, boolean lazy, float coeff) {
            this.beta1 = beta1;
            this.beta2 = beta2;
            this.eps = eps;
            this.lazy = lazy;
            this.coeff = coeff;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor p = a.in("Param");
            Tensor m1 = a.in("Moment1");
            Tensor m2 = a.in("Moment2");
            Tensor b1p = a.in("Beta1Pow");
            Tensor b2p = a.in("Beta2Pow");
            float lr = a.in("LearningRate").getFloat(0);
            float b1pow = b1p.getFloat(0);
            float b2pow = b2p.getFloat(0);
            float lrT = UpdateRules.adamStep(lr, b1pow, b2pow);
            float epsT = UpdateRules.adamEpsilon(eps, b2pow);
            Object g = a.inValue("Grad", 0);
            if (g instanceof SelectedRows sr && lazy) {
                long w = sr.width();
                Tensor merged = sr.toDense();
                java.util.BitSet seen = new java.util.BitSet();
                for (long i = 0; i < sr.rows().numel(); i++) {
                    int row = (int) sr.rows().getLong(i);
                    if (!seen.get(row)) {
                        seen.set(row);
                        update(p.segment(), m1.segment(), m2.segment(), merged.segment(), row * w, w, lr, lrT, epsT);
                    }
                }
            } else {
                update(p.segment(), m1.segment(), m2.segment(), dense(g).segment(), 0, p.numel(), lr, lrT, epsT);
            }
            b1p.setFloat(0, b1pow * beta1);
            b2p.setFloat(0, b2pow * beta2);
            a.setOut("ParamOut", p);
            a.setOut("Moment1Out", m1);
            a.setOut("Moment2Out", m2);
            a.setOut("Beta1PowOut", b1p);
            a.setOut("Beta2PowOut", b2p);
        }

        private void update(MemorySegment p, MemorySegment m1, MemorySegment m2, MemorySegment g,
                            long from, long n, float lr, float lrT, float epsT) {
            UpdateRules.adam(p, m1, m2, g, from, n, lr, lrT, epsT, beta1, beta2, coeff);
        }
    }
}
