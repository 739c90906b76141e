package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * {@code fused_elemwise_add_activation}: Out = act(X + Y) in one pass over memory, where Y has X's shape or is
 * a row added to every row of X (a bias). Its gradient computes dX and dY from Out and dOut in one pass, without
 * the intermediate X + Y or its gradient ever being stored.
 */
@AutoService(OpLibrary.class)
public final class FusedElewiseAddActOp implements OpLibrary {
    public static final String TYPE = "fused_elemwise_add_activation";
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** The activations that may follow the add; their gradients need only Out. */
    enum Act {
        RELU, SIGMOID, TANH, SCALE;

        static Act of(String name) {
            return switch (name) {
                case "relu" -> RELU;
                case "sigmoid" -> SIGMOID;
                case "tanh" -> TANH;
                case "scale" -> SCALE;
                default -> throw new IrException(TYPE + ": functor '" + name + "' is not one of relu, sigmoid, tanh, scale");
            };
        }
    }

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(TYPE)
                .in("X", "Y").out("Out")
                .attr("functor", AttrType.STRING, null)
                .attr("scale", AttrType.FLOAT, 1.0f)
                .attr("bias", AttrType.FLOAT, 0.0f)
                .attr("bias_after_scale", AttrType.BOOL, true)
                .shape(ctx -> {
                    Act.of(ctx.op().stringAttr("functor"));
                    if (ctx.dtype("X") != DType.F32 || ctx.dtype("Y") != DType.F32) {
                        throw ctx.fail("X and Y must be float32");
                    }
                    if (!rowBroadcastable(ctx.shape("X"), ctx.shape("Y"))) {
                        throw ctx.fail("Y must have X's shape or equal X's trailing dimensions");
                    }
                    ctx.set("Out", DType.F32, ctx.shape("X"));
                })
                .kernel(Forward::of)
                .gradKernel(Backward::of)
                .build());
        return specs;
    }

    /** Whether Y is X's shape (a -1 batch in both counts as equal) or X's trailing dims, all known. */
    public static boolean rowBroadcastable(long[] x, long[] y) {
        if (java.util.Arrays.equals(x, y)) {
            return true;
        }
        if (y.length > x.length) {
            return false;
        }
        int off = x.length - y.length;
        for (int k = 0; k < y.length; k++) {
            if (y[k] < 0 || y[k] != x[k + off]) {
                return false;
            }
        }
        return true;
    }

    /** Columns per row: the numel of Y, checked against X at run time. */
    private static long cols(KernelArgs a, Tensor x, Tensor y) {
        long cols = y.numel();
        if (cols == 0 || x.numel() % cols != 0 || !rowBroadcastable(x.shape(), y.shape()) && cols != x.numel()) {
            throw new IrException(TYPE + ": X " + Shapes.str(x.shape()) + " (" + a.op().in("X") + ") and Y "
                    + Shapes.str(y.shape()) + " (" + a.op().in("Y") + ") do not broadcast as rows");
        }
        if (cols > Integer.MAX_VALUE) {
            throw new IrException(TYPE + ": Y (" + a.op().in("Y") + ") has more than 2^31 - 1 elements");
        }
        return cols;
    }

    /** Out = act(X + Y). */
    record Forward(Act act, float scale, float bias) implements Kernel {
        static Forward of(Op op) {
            float s = op.floatAttr("scale");
            float b = op.boolAttr("bias_after_scale") ? op.floatAttr("bias") : op.floatAttr("bias") * s;
            return new Forward(Act.of(op.stringAttr("functor")), s, b);
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            long cols = cols(a, x, y);
            Tensor out = a.out("Out", DType.F32, x.shape());
            MemorySegment xs = x.segment();
            MemorySegment ys = y.segment();
            MemorySegment os = out.segment();
            long rows = x.numel() / cols;
            switch (act) {
                case RELU -> VectorLoops.addRelu(xs, ys, os, rows, (int) cols);
                case SCALE -> VectorLoops.addScale(xs, ys, os, rows, (int) cols, scale, bias);
                case SIGMOID -> {
                    for (long i = 0; i < rows * cols; i++) {
                        float v = xs.getAtIndex(F, i) + ys.getAtIndex(F, i % cols);
                        os.setAtIndex(F, i, (float) (1.0 / (1.0 + Math.exp(-v))));
                    }
                }
                case TANH -> {
                    for (long i = 0; i < rows * cols; i++) {
                        os.setAtIndex(F, i, (float) Math.tanh(xs.getAtIndex(F, i) + ys.getAtIndex(F, i % cols)));
                    }
                }
            }
        }
    }

    /** dX = act'(Out) * dOut; dY = dX summed over rows. Either output may be absent. */
    static final class Backward implements Kernel {
        private final VectorLoops.ActGrad act;
        private final float scale;
        private float[] rowSums = new float[0];

        Backward(VectorLoops.ActGrad act, float scale) {
            this.act = act;
            this.scale = scale;
        }

        static Backward of(Op op) {
            return new Backward(VectorLoops.ActGrad.valueOf(Act.of(op.stringAttr("functor")).name()), op.floatAttr("scale"));
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            long cols = cols(a, x, y);
            MemorySegment gx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x).segment() : null;
            float[] gy = null;
            if (a.hasOut("Y@GRAD")) {
                if (rowSums.length != cols) {
                    rowSums = new float[(int) cols];
                }
                gy = rowSums;
                java.util.Arrays.fill(gy, 0f);
            }
            VectorLoops.addActGrad(act, scale, a.in("Out").segment(), a.in("Out@GRAD").segment(), gx, gy,
                    x.numel() / cols, (int) cols);
            if (gy != null) {
                MemorySegment.copy(gy, 0, a.outLike("Y@GRAD", y).segment(), F, 0, gy.length);
            }
        }
    }
}
