package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Tensor;

/** softmax and log_softmax along any axis (negative counts from the end; Paddle's default -1), with gradients. */
@AutoService(OpLibrary.class)
public final class SoftmaxOps implements OpLibrary {
    public static final String SOFTMAX = "softmax";
    public static final String LOG_SOFTMAX = "log_softmax";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        for (String type : List.of(SOFTMAX, LOG_SOFTMAX)) {
            boolean log = type.equals(LOG_SOFTMAX);
            specs.add(OpSpec.builder(type)
                    .in("X").out("Out")
                    .attr("axis", AttrType.INT, -1)
                    .shape(ctx -> {
                        ctx.requireFloat("X");
                        long[] x = ctx.shape("X");
                        int axis = ctx.op().intAttr("axis");
                        if (x.length < 1 || axis < -x.length || axis >= x.length) {
                            throw ctx.fail("axis " + axis + " is outside [" + -x.length + ", " + x.length + ") for X of rank "
                                    + x.length + "; pass an axis of X (-1 for the last)");
                        }
                        ctx.set("Out", ctx.dtype("X"), x);
                    })
                    .kernel(op -> {
                        int axis = op.intAttr("axis");
                        return a -> {
                            Tensor x = a.in("X");
                            Tensor out = a.outLike("Out", x);
                            long[] d = Axis.split(x.shape(), axis);
                            Softmax.forward(x.segment(), out.segment(), d[0], d[1], d[2], log);
                        };
                    })
                    .gradKernel(op -> {
                        int axis = op.intAttr("axis");
                        return a -> {
                            Tensor out = a.in("Out");
                            Tensor gx = a.outLike("X@GRAD", out);
                            long[] d = Axis.split(out.shape(), axis);
                            Softmax.backward(out.segment(), a.in("Out@GRAD").segment(), gx.segment(), d[0], d[1], d[2], log);
                        };
                    })
                    .build());
        }
        return specs;
    }
}
