package org.fleet4j.compiler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ops.Kernel;
import org.fleet4j.core.ops.KernelArgs;
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
final class FusedElewiseAddActOp {
    static final String TYPE = "fused_elemwise_add_activation";
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

    private FusedElewiseAddActOp() {
    }

    static void register() {
        OpRegistry.register(OpSpec.builder(TYPE)
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
    }

    /** Whether Y is X's shape (a -1 batch in both counts as equal) or X's trailing dims, all known. */
    static boolean rowBroadcastable(long[] x, long[] y) {
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
            for (long r = 0; r < rows; r++) {
                long base = r * cols;
                switch (act) {
                    case RELU -> {
                        for (long c = 0; c < cols; c++) {
                            os.setAtIndex(F, base + c, Math.max(xs.getAtIndex(F, base + c) + ys.getAtIndex(F, c), 0f));
                        }
                    }
                    case SIGMOID -> {
                        for (long c = 0; c < cols; c++) {
                            float v = xs.getAtIndex(F, base + c) + ys.getAtIndex(F, c);
                            os.setAtIndex(F, base + c, (float) (1.0 / (1.0 + Math.exp(-v))));
                        }
                    }
                    case TANH -> {
                        for (long c = 0; c < cols; c++) {
                            os.setAtIndex(F, base + c, (float) Math.tanh(xs.getAtIndex(F, base + c) + ys.getAtIndex(F, c)));
                        }
                    }
                    case SCALE -> {
                        for (long c = 0; c < cols; c++) {
                            os.setAtIndex(F, base + c, scale * (xs.getAtIndex(F, base + c) + ys.getAtIndex(F, c)) + bias);
                        }
                    }
                }
            }
        }
    }

    /** dX = act'(Out) * dOut; dY = dX summed over rows. Either output may be absent. */
    record Backward(Act act, float scale) implements Kernel {
        static Backward of(Op op) {
            return new Backward(Act.of(op.stringAttr("functor")), op.floatAttr("scale"));
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            long cols = cols(a, x, y);
            MemorySegment os = a.in("Out").segment();
            MemorySegment gs = a.in("Out@GRAD").segment();
            boolean wantX = a.hasOut("X@GRAD");
            boolean wantY = a.hasOut("Y@GRAD");
            MemorySegment gx = wantX ? a.outLike("X@GRAD", x).segment() : null;
            MemorySegment gy = wantY ? a.outLike("Y@GRAD", y).segment() : null;
            if (wantY) {
                gy.fill((byte) 0);
            }
            long rows = x.numel() / cols;
            for (long r = 0; r < rows; r++) {
                long base = r * cols;
                for (long c = 0; c < cols; c++) {
                    float d = grad(os.getAtIndex(F, base + c), gs.getAtIndex(F, base + c));
                    if (wantX) {
                        gx.setAtIndex(F, base + c, d);
                    }
                    if (wantY) {
                        gy.setAtIndex(F, c, gy.getAtIndex(F, c) + d);
                    }
                }
            }
        }

        private float grad(float o, float g) {
            return switch (act) {
                case RELU -> o > 0f ? g : 0f;
                case SIGMOID -> g * o * (1f - o);
                case TANH -> g * (1f - o * o);
                case SCALE -> g * scale;
            };
        }
    }
}
