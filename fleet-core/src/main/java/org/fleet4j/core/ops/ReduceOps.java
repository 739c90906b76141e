package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/** mean (of all elements, to a scalar) and sum (of several same-shaped tensors), with gradients. */
@AutoService(OpLibrary.class)
public final class ReduceOps implements OpLibrary {
    public static final String MEAN = "mean";
    public static final String SUM = "sum";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(MEAN)
                .in("X").out("Out")
                .shape(ctx -> {
                    ctx.requireFloat("X");
                    ctx.set("Out", ctx.dtype("X"));
                })
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor out = a.out("Out", x.dtype());
                    double s = 0;
                    if (x.dtype() == DType.F32) {
                        s = F32.sum(x.segment(), x.numel());
                    } else {
                        for (long i = 0; i < x.numel(); i++) {
                            s += x.getDouble(i);
                        }
                    }
                    out.setDouble(0, x.numel() == 0 ? Double.NaN : s / x.numel());
                })
                .gradKernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor gx = a.outLike("X@GRAD", x);
                    gx.fill(a.in("Out@GRAD").getDouble(0) / x.numel());
                })
                .build());

        specs.add(OpSpec.builder(SUM)
                .variadicIn("X").out("Out")
                .shape(ctx -> {
                    long[] s = ctx.shape("X", 0);
                    for (int j = 1; j < ctx.count("X"); j++) {
                        if (!java.util.Arrays.equals(ctx.shape("X", j), s) || ctx.input("X", j).dtype() != ctx.dtype("X")) {
                            throw ctx.fail("every X must have the same dtype and shape");
                        }
                    }
                    ctx.set("Out", ctx.dtype("X"), s);
                })
                .kernel(op -> a -> {
                    int n = a.inCount("X");
                    Object first = a.inValue("X", 0);
                    Tensor like = first instanceof SelectedRows sr ? sr.toDense() : (Tensor) first;
                    Tensor out = a.outLike("Out", like);
                    out.copyFrom(like);
                    for (int j = 1; j < n; j++) {
                        Object v = a.inValue("X", j);
                        Tensor t = v instanceof SelectedRows sr ? sr.toDense() : (Tensor) v;
                        if (t.dtype() == DType.F32) {
                            F32.accumulate(out.segment(), t.segment(), out.numel());
                        } else {
                            for (long i = 0; i < out.numel(); i++) {
                                out.setDouble(i, out.getDouble(i) + t.getDouble(i));
                            }
                        }
                    }
                })
                .gradKernel(op -> a -> {
                    Tensor g = a.in("Out@GRAD");
                    for (int j = 0; j < a.outCount("X@GRAD"); j++) {
                        a.out("X@GRAD", j, g.dtype(), g.shape()).copyFrom(g);
                    }
                })
                .build());
        return specs;
    }
}
