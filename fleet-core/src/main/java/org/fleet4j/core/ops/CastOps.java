package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.amp.LossScaleRule;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * The ops mixed precision needs, with Paddle's names: {@code cast} between float dtypes (its gradient casts the
 * gradient back), {@code check_finite_and_unscale} (divides gradients by the loss scale and flags inf/nan),
 * {@code update_loss_scaling} (moves the scale as {@link LossScaleRule} says) and {@code logical_not} (turns the flag
 * into the condition that lets the updates run). Flags and step counters are int64 tensors of shape [1]. Sparse
 * gradients ({@link SelectedRows}) are unscaled and checked too.
 */
@AutoService(OpLibrary.class)
public final class CastOps implements OpLibrary {
    public static final String CAST = "cast";
    public static final String CHECK_FINITE_AND_UNSCALE = "check_finite_and_unscale";
    public static final String UPDATE_LOSS_SCALING = "update_loss_scaling";
    public static final String LOGICAL_NOT = "logical_not";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(CAST).in("X").out("Out")
                .attr("out_dtype", AttrType.STRING, null)
                .shape(ctx -> {
                    ctx.requireFloat("X");
                    DType to = floatDtype(ctx.op().stringAttr("out_dtype"));
                    ctx.set("Out", to, ctx.shape("X"));
                })
                .kernel(op -> {
                    DType to = floatDtype(op.stringAttr("out_dtype"));
                    return a -> {
                        Tensor x = a.in("X");
                        Casts.convert(x, a.out("Out", to, x.shape()));
                    };
                })
                .gradKernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor g = a.in("Out@GRAD");
                    Casts.convert(g, a.out("X@GRAD", x.dtype(), x.shape()));
                })
                .build());

        specs.add(OpSpec.builder(CHECK_FINITE_AND_UNSCALE).variadicIn("X").in("Scale")
                .out("Out", "FoundInfinite")
                .shape(ctx -> {
                    if (ctx.op().output("Out").size() != ctx.count("X")) {
                        throw ctx.fail("Out must name one var per X (" + ctx.count("X") + "), names "
                                + ctx.op().output("Out").size());
                    }
                    for (int j = 0; j < ctx.count("X"); j++) {
                        if (ctx.input("X", j).dtype() != DType.F32) {
                            throw ctx.fail("X " + ctx.input("X", j).name() + " must be float32 (gradients of fp32 master"
                                    + " weights), is " + ctx.input("X", j).dtype().displayName());
                        }
                        ctx.set("Out", j, DType.F32, ctx.shape("X", j));
                    }
                    requireScalar(ctx, "Scale", DType.F32);
                    ctx.set("FoundInfinite", DType.I64, 1);
                })
                .kernel(op -> a -> {
                    float inverse = 1f / a.in("Scale").getFloat(0);
                    boolean nonFinite = false;
                    for (int j = 0, n = a.inCount("X"); j < n; j++) {
                        if (a.inValue("X", j) instanceof SelectedRows sparse) {
                            // a sparse gradient (is_sparse embedding): only its rows' values are scaled
                            Tensor v = sparse.values();
                            Tensor values = Tensor.zeros(DType.F32, v.shape());
                            nonFinite |= unscale(v.segment(), values.segment(), Math.toIntExact(v.numel()), inverse);
                            a.setOut("Out", j, new SelectedRows(sparse.rows(), values, sparse.height()));
                            continue;
                        }
                        Tensor x = a.in("X", j);
                        Tensor out = a.out("Out", j, DType.F32, x.shape());
                        nonFinite |= unscale(x.segment(), out.segment(), Math.toIntExact(x.numel()), inverse);
                    }
                    a.out("FoundInfinite", DType.I64, 1).setLong(0, nonFinite ? 1 : 0);
                })
                .build());

        specs.add(OpSpec.builder(UPDATE_LOSS_SCALING)
                .in("FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps")
                .out("LossScaling", "OutGoodSteps", "OutBadSteps")
                .attr("incr_every_n_steps", AttrType.INT, 1000)
                .attr("decr_every_n_nan_or_inf", AttrType.INT, 2)
                .attr("incr_ratio", AttrType.FLOAT, 2.0f)
                .attr("decr_ratio", AttrType.FLOAT, 0.8f)
                .shape(ctx -> {
                    requireScalar(ctx, "FoundInfinite", DType.I64);
                    requireScalar(ctx, "PrevLossScaling", DType.F32);
                    requireScalar(ctx, "InGoodSteps", DType.I64);
                    requireScalar(ctx, "InBadSteps", DType.I64);
                    rule(ctx.op());
                    ctx.set("LossScaling", DType.F32, 1);
                    ctx.set("OutGoodSteps", DType.I64, 1);
                    ctx.set("OutBadSteps", DType.I64, 1);
                })
                .kernel(op -> {
                    LossScaleRule rule = rule(op);
                    return a -> {
                        LossScaleRule.State next = rule.next(new LossScaleRule.State(a.in("PrevLossScaling").getFloat(0),
                                a.in("InGoodSteps").getLong(0), a.in("InBadSteps").getLong(0)),
                                a.in("FoundInfinite").getLong(0) != 0);
                        a.out("LossScaling", DType.F32, 1).setFloat(0, (float) next.scale());
                        a.out("OutGoodSteps", DType.I64, 1).setLong(0, next.goodSteps());
                        a.out("OutBadSteps", DType.I64, 1).setLong(0, next.badSteps());
                    };
                })
                .build());

        specs.add(OpSpec.builder(LOGICAL_NOT).in("X").out("Out")
                .shape(ctx -> {
                    if (ctx.dtype("X") != DType.I64) {
                        throw ctx.fail("X must be int64 (0 is false), is " + ctx.dtype("X").displayName());
                    }
                    ctx.set("Out", DType.I64, ctx.shape("X"));
                })
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.out("Out", DType.I64, x.shape());
                    for (long i = 0; i < x.numel(); i++) {
                        out.setLong(i, x.getLong(i) == 0 ? 1 : 0);
                    }
                })
                .build());
        return specs;
    }

    private static LossScaleRule rule(Op op) {
        int incrEvery = op.intAttr("incr_every_n_steps");
        int decrEvery = op.intAttr("decr_every_n_nan_or_inf");
        float incr = op.floatAttr("incr_ratio");
        float decr = op.floatAttr("decr_ratio");
        if (incrEvery < 1 || decrEvery < 1 || !(incr > 1) || !(decr > 0 && decr < 1)) {
            throw new IrException(UPDATE_LOSS_SCALING + ": expected incr_every_n_steps >= 1 (is " + incrEvery
                    + "), decr_every_n_nan_or_inf >= 1 (is " + decrEvery + "), incr_ratio > 1 (is " + incr
                    + ") and decr_ratio in (0, 1) (is " + decr + ")");
        }
        return new LossScaleRule(incrEvery, decrEvery, incr, decr);
    }

    private static void requireScalar(InferContext ctx, String slot, DType dtype) {
        if (ctx.dtype(slot) != dtype || Shapes.numel(ctx.shape(slot)) != 1) {
            throw ctx.fail(slot + " must be a " + dtype.displayName() + " tensor of one element");
        }
    }

    private static DType floatDtype(String name) {
        DType d;
        try {
            d = DType.parse(name);
        } catch (IllegalArgumentException e) {
            throw new IrException(CAST + ": out_dtype '" + name + "': " + e.getMessage()
                    + (name.trim().toLowerCase(java.util.Locale.ROOT).matches("float16|fp16|half")
                    ? "; float16 exists only in GPU kernels, on CPU cast to bfloat16" : ""));
        }
        if (!d.isFloating()) {
            throw new IrException(CAST + ": out_dtype '" + name + "' is not a float dtype (float32, float64, bfloat16)");
        }
        return d;
    }

    /** out = inverse * x, element by element; whether any result is inf or nan. */
    private static boolean unscale(MemorySegment x, MemorySegment out, int n, float inverse) {
        boolean nonFinite = false;
        for (int i = 0; i < n; i++) {
            float v = F32.get(x, i) * inverse;
            nonFinite |= !Float.isFinite(v);
            F32.set(out, i, v);
        }
        return nonFinite;
    }
}
