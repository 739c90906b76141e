package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.ToDoubleFunction;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * Ops that create values: fill_constant, fill_zeros_like, assign_value (given values), arange (evenly spaced values:
 * position ids), uniform_random, gaussian_random (seeded, reproducible).
 */
@AutoService(OpLibrary.class)
public final class InitOps implements OpLibrary {
    public static final String FILL_CONSTANT = "fill_constant";
    public static final String ASSIGN_VALUE = "assign_value";
    public static final String UNIFORM_RANDOM = "uniform_random";
    public static final String GAUSSIAN_RANDOM = "gaussian_random";
    public static final String FILL_ZEROS_LIKE = "fill_zeros_like";
    public static final String ARANGE = "arange";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(FILL_CONSTANT)
                .out("Out")
                .attr("shape", AttrType.LONGS, new long[0])
                .attr("dtype", AttrType.STRING, "float32")
                .attr("value", AttrType.FLOAT, 0f)
                .shape(ctx -> ctx.set("Out", dtype(ctx), ctx.op().longsAttr("shape")))
                .kernel(op -> {
                    DType dt = DType.parse(op.stringAttr("dtype"));
                    long[] shape = op.longsAttr("shape");
                    float v = op.floatAttr("value");
                    return a -> a.out("Out", dt, shape).fill(v);
                })
                .build());
        specs.add(OpSpec.builder(FILL_ZEROS_LIKE)
                .in("X").out("Out")
                .shape(ctx -> ctx.set("Out", ctx.dtype("X"), ctx.shape("X")))
                .kernel(op -> a -> a.outLike("Out", a.in("X")).fill(0))
                .build());
        specs.add(OpSpec.builder(ARANGE)
                .out("Out")
                .attr("start", AttrType.FLOAT, 0f)
                .attr("end", AttrType.FLOAT, null)
                .attr("step", AttrType.FLOAT, 1f)
                .attr("dtype", AttrType.STRING, "int64")
                .shape(ctx -> {
                    float step = ctx.op().floatAttr("step");
                    if (step == 0f || !Float.isFinite(step)) {
                        throw ctx.fail("step must be a nonzero finite number, is " + step);
                    }
                    ctx.set("Out", dtype(ctx), arangeLength(ctx.op()));
                })
                .kernel(op -> {
                    DType dt = DType.parse(op.stringAttr("dtype"));
                    long n = arangeLength(op);
                    double start = op.floatAttr("start");
                    double step = op.floatAttr("step");
                    return a -> {
                        Tensor out = a.out("Out", dt, n);
                        for (long i = 0; i < n; i++) {
                            out.setDouble(i, start + i * step);
                        }
                    };
                })
                .build());
        specs.add(OpSpec.builder(ASSIGN_VALUE)
                .out("Out")
                .attr("shape", AttrType.LONGS, null)
                .attr("dtype", AttrType.STRING, "float32")
                .attr("fp32_values", AttrType.FLOATS, null)
                .shape(ctx -> {
                    long[] shape = ctx.op().longsAttr("shape");
                    float[] values = ctx.op().attr("fp32_values");
                    if (Shapes.numel(shape) != values.length) {
                        throw ctx.fail("fp32_values has " + values.length + " values, shape " + Shapes.str(shape)
                                + " needs " + Shapes.numel(shape));
                    }
                    ctx.set("Out", dtype(ctx), shape);
                })
                .kernel(op -> {
                    DType dt = DType.parse(op.stringAttr("dtype"));
                    long[] shape = op.longsAttr("shape");
                    float[] values = op.attr("fp32_values");
                    return a -> {
                        Tensor out = a.out("Out", dt, shape);
                        for (int i = 0; i < values.length; i++) {
                            out.setFloat(i, values[i]);
                        }
                    };
                })
                .build());
        specs.add(OpSpec.builder(UNIFORM_RANDOM)
                .out("Out")
                .attr("shape", AttrType.LONGS, null)
                .attr("dtype", AttrType.STRING, "float32")
                .attr("min", AttrType.FLOAT, -1f)
                .attr("max", AttrType.FLOAT, 1f)
                .attr("seed", AttrType.LONG, 0L)
                .shape(ctx -> {
                    if (ctx.op().floatAttr("min") > ctx.op().floatAttr("max")) {
                        throw ctx.fail("min must not exceed max");
                    }
                    ctx.set("Out", dtype(ctx), ctx.op().longsAttr("shape"));
                })
                .kernel(op -> {
                    float lo = op.floatAttr("min");
                    float hi = op.floatAttr("max");
                    return randomFill(op, r -> lo + (hi - lo) * r.nextDouble());
                })
                .build());
        specs.add(OpSpec.builder(GAUSSIAN_RANDOM)
                .out("Out")
                .attr("shape", AttrType.LONGS, null)
                .attr("dtype", AttrType.STRING, "float32")
                .attr("mean", AttrType.FLOAT, 0f)
                .attr("std", AttrType.FLOAT, 1f)
                .attr("seed", AttrType.LONG, 0L)
                .shape(ctx -> {
                    if (ctx.op().floatAttr("std") < 0) {
                        throw ctx.fail("std must be >= 0");
                    }
                    ctx.set("Out", dtype(ctx), ctx.op().longsAttr("shape"));
                })
                .kernel(op -> {
                    float mean = op.floatAttr("mean");
                    float std = op.floatAttr("std");
                    return randomFill(op, r -> mean + std * gaussian(r));
                })
                .build());
        return specs;
    }

    /** A kernel filling Out (shape and dtype from the attributes) with samples drawn from the op's own seed. */
    private static Kernel randomFill(Op op, ToDoubleFunction<SplittableRandom> sample) {
        DType dt = DType.parse(op.stringAttr("dtype"));
        long[] shape = op.longsAttr("shape");
        long seed = op.<Long>attr("seed");
        return a -> {
            Tensor t = a.out("Out", dt, shape);
            SplittableRandom r = new SplittableRandom(seed);
            for (long i = 0; i < t.numel(); i++) {
                t.setDouble(i, sample.applyAsDouble(r));
            }
        };
    }

    /** ceil((end - start) / step) values, none when the range is empty (as numpy's and PyTorch's arange). */
    private static long arangeLength(Op op) {
        double span = ((double) op.floatAttr("end") - op.floatAttr("start")) / op.floatAttr("step");
        return Math.max(0, (long) Math.ceil(span));
    }

    private static DType dtype(InferContext ctx) {
        try {
            return DType.parse(ctx.op().stringAttr("dtype"));
        } catch (IllegalArgumentException e) {
            throw ctx.fail(e.getMessage());
        }
    }

    /** A standard normal sample (Box-Muller); SplittableRandom has no nextGaussian of its own on every JDK. */
    static double gaussian(SplittableRandom r) {
        double u1 = r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2.0 * Math.log(1.0 - u1)) * Math.cos(2.0 * Math.PI * u2);
    }
}
