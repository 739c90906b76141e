package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.ActivationOps;
import org.fleet4j.core.ops.ElementwiseOps;
import org.fleet4j.core.ops.InitOps;
import org.fleet4j.core.ops.LossOps;
import org.fleet4j.core.ops.MatmulOps;
import org.fleet4j.core.ops.MetricOps;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.ReduceOps;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.Cublas;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.gpu.LaunchShape;

/**
 * GPU kernels of the dense ops of a feed-forward network, matching fleet-core's CPU kernels: matmul through cuBLAS
 * (both transposes, forward and gradient), elementwise ops with a trailing-dims broadcast of Y, activations,
 * softmax with cross entropy, mean, accuracy and float32 constants.
 */
@AutoService(KernelLibrary.class)
public final class DenseGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        r.hostFallback(InitOps.UNIFORM_RANDOM, "an initialiser: runs once in the startup program; its random stream matches"
                + " the CPU's");
        r.hostFallback(InitOps.GAUSSIAN_RANDOM, "an initialiser: runs once in the startup program; its random stream matches"
                + " the CPU's");
        r.hostFallback(InitOps.ASSIGN_VALUE, "an initialiser with given values (Initializer.values): runs once in the"
                + " startup program");
        r.hostFallback(InitOps.FILL_CONSTANT, "for dtypes other than float32: runs once in the startup program");
        r.kernel(MatmulOps.MATMUL, DenseGpuKernels::matmul);
        r.kernel(OpSpec.gradType(MatmulOps.MATMUL), DenseGpuKernels::matmulGrad);
        for (String type : new String[]{ElementwiseOps.ADD, ElementwiseOps.SUB, ElementwiseOps.MUL, ElementwiseOps.DIV}) {
            String kernel = type + "_f32";
            r.kernel(type, op -> a -> {
                DeviceTensor x = a.inF32("X");
                DeviceTensor y = a.inF32("Y");
                long ny = rowBroadcast(a, x, y);
                DeviceTensor out = a.out("Out", DType.F32, broadcastShape(x, y));
                a.launchElements(kernel, x.numel(), x.buffer(), y.buffer(), out.buffer(), x.numel(), ny);
            });
        }
        r.kernel(OpSpec.gradType(ElementwiseOps.ADD), op -> DenseGpuKernels::elementwiseAddGrad);
        r.kernel(OpSpec.gradType(ElementwiseOps.MUL), op -> new ElementwiseMulGrad());
        r.hostFallback(ActivationOps.GELU, "with approximate (the tanh form; the GPU kernel computes the exact one)");
        r.hostFallback(OpSpec.gradType(ActivationOps.GELU), "with approximate (the tanh form; the GPU kernel computes the"
                + " exact one)");
        for (String act : new String[]{ActivationOps.RELU, ActivationOps.SIGMOID, ActivationOps.TANH, ActivationOps.GELU}) {
            GpuKernelFactory forward = op -> a -> {
                DeviceTensor x = a.inF32("X");
                DeviceTensor out = a.outLike("Out", x);
                a.launchElements(act + "_f32", x.numel(), x.buffer(), out.buffer(), x.numel());
            };
            GpuKernelFactory backward = op -> a -> {
                DeviceTensor x = a.inF32("X");
                DeviceTensor gx = a.outLike("X@GRAD", x);
                a.launchElements(act + "_grad_f32", x.numel(), x.buffer(), a.inF32("Out").buffer(),
                        a.inF32("Out@GRAD").buffer(), gx.buffer(), x.numel());
            };
            if (act.equals(ActivationOps.GELU)) {
                r.kernel(act, op -> !tanhForm(op), "the exact form", forward);
                r.kernel(OpSpec.gradType(act), op -> !tanhForm(op), "the exact form", backward);
            } else {
                r.kernel(act, forward);
                r.kernel(OpSpec.gradType(act), backward);
            }
        }
        r.kernel(ActivationOps.SCALE, op -> {
            float s = op.floatAttr("scale");
            float b = op.boolAttr("bias_after_scale") ? op.floatAttr("bias") : op.floatAttr("bias") * s;
            return a -> {
                DeviceTensor x = a.inF32("X");
                DeviceTensor out = a.outLike("Out", x);
                a.launchElements("scale_f32", x.numel(), x.buffer(), out.buffer(), s, b, x.numel());
            };
        });
        r.kernel(OpSpec.gradType(ActivationOps.SCALE), op -> {
            float s = op.floatAttr("scale");
            return a -> {
                DeviceTensor g = a.inF32("Out@GRAD");
                DeviceTensor gx = a.outLike("X@GRAD", g);
                a.launchElements("scale_f32", g.numel(), g.buffer(), gx.buffer(), s, 0f, g.numel());
            };
        });
        r.kernel(LossOps.SOFTMAX_WITH_CROSS_ENTROPY, DenseGpuKernels::withoutSmoothing, "label_smoothing 0",
                DenseGpuKernels::softmaxXent);
        r.kernel(OpSpec.gradType(LossOps.SOFTMAX_WITH_CROSS_ENTROPY), DenseGpuKernels::withoutSmoothing,
                "label_smoothing 0", DenseGpuKernels::softmaxXentGrad);
        for (String type : new String[]{LossOps.SOFTMAX_WITH_CROSS_ENTROPY,
                OpSpec.gradType(LossOps.SOFTMAX_WITH_CROSS_ENTROPY)}) {
            r.hostFallback(type, "with label_smoothing != 0 (the GPU kernel has none): the logits each way per step");
        }
        r.kernel(ReduceOps.MEAN, op -> a -> {
            DeviceTensor x = a.inF32("X");
            DeviceTensor out = a.out("Out", DType.F32);
            a.device().zero(out.buffer());
            a.launchElements("sum_f32", x.numel(), x.buffer(), out.buffer(), x.numel(), 1f / x.numel());
        });
        r.kernel(OpSpec.gradType(ReduceOps.MEAN), op -> a -> {
            DeviceTensor x = a.in("X");
            DeviceTensor gx = a.out("X@GRAD", DType.F32, x.shape());
            a.launchElements("fill_scaled_f32", x.numel(), a.inF32("Out@GRAD").buffer(), gx.buffer(), 1f / x.numel(),
                    x.numel());
        });
        r.kernel(MetricOps.ACCURACY, op -> new Accuracy());
        r.kernel(InitOps.FILL_CONSTANT, op -> DType.parse(op.stringAttr("dtype")) == DType.F32, "float32", op -> {
            long[] shape = op.longsAttr("shape");
            float value = op.floatAttr("value");
            return a -> {
                DeviceTensor out = a.out("Out", DType.F32, shape);
                a.launchElements("fill_f32", out.numel(), out.buffer(), value, out.numel());
            };
        });
    }

    /**
     * Y's element count when Y equals X's shape or X's trailing dims, or Y holds one element (a scalar over any X, as
     * AMP's loss scaling of the rank-0 loss): the only broadcasts the kernels do.
     */
    static long rowBroadcast(GpuOpArgs a, DeviceTensor x, DeviceTensor y) {
        if (y.numel() == 1) {
            return 1;
        }
        int off = x.rank() - y.rank();
        boolean trailing = off >= 0;
        for (int k = 0; trailing && k < y.rank(); k++) {
            trailing = y.shape()[k] == x.shape()[k + off];
        }
        int axis = a.op().hasAttr("axis") ? a.op().intAttr("axis") : -1;
        if (!trailing || (axis != -1 && axis != off) || y.numel() == 0) {
            throw a.unsupported("X " + x.describe() + " (" + a.op().in("X") + ") and Y " + y.describe() + " ("
                    + a.op().in("Y") + ") with axis " + axis + ": the GPU kernel broadcasts Y only over X's trailing"
                    + " dimensions");
        }
        return y.numel();
    }

    /**
     * Out's shape for a Y that {@link #rowBroadcast} took: X's, with leading ones where a one-element Y has the higher
     * rank (X [] times Y [1] is [1], as on the CPU).
     */
    static long[] broadcastShape(DeviceTensor x, DeviceTensor y) {
        if (y.rank() <= x.rank()) {
            return x.shape();
        }
        long[] shape = new long[y.rank()];
        java.util.Arrays.fill(shape, 1);
        System.arraycopy(x.shape(), 0, shape, y.rank() - x.rank(), x.rank());
        return shape;
    }

    /** Rows and columns of a matmul operand, flattened to 2-D as the CPU kernel does for a 2-D Y. */
    private record Dims(int m, int k, int n) {
        static Dims of(GpuOpArgs a, DeviceTensor x, DeviceTensor y, boolean tx, boolean ty) {
            if (y.rank() != 2 || x.rank() < 2) {
                throw a.unsupported("X " + x.describe() + " and Y " + y.describe() + ": the GPU kernel takes X of rank"
                        + " >= 2 and a 2-D Y (batched matmul runs on the CPU)");
            }
            long xCols = x.shape()[x.rank() - 1];
            long xRows = x.numel() / Math.max(1, xCols);
            long yRows = y.shape()[0];
            long yCols = y.shape()[1];
            if ((tx ? xRows : xCols) != (ty ? yCols : yRows)) {
                throw new IllegalArgumentException("matmul: inner dimensions of X " + x.describe() + " and Y "
                        + y.describe() + " differ");
            }
            return new Dims(Math.toIntExact(tx ? xCols : xRows), Math.toIntExact(tx ? xRows : xCols),
                    Math.toIntExact(ty ? yRows : yCols));
        }
    }

    /** X and Y of a matmul: both float32, or both bfloat16 (AMP's white op). */
    private static DType gemmDtype(GpuOpArgs a, DeviceTensor x, DeviceTensor y) {
        if ((x.dtype() != DType.F32 && x.dtype() != DType.BF16) || y.dtype() != x.dtype()) {
            throw a.unsupported("X " + x.describe() + " (" + a.op().in("X") + ") and Y " + y.describe() + " ("
                    + a.op().in("Y") + "): the GPU kernel takes two float32 or two bfloat16 operands");
        }
        return x.dtype();
    }

    /**
     * C = alpha op(A) op(B) in the operands' dtype: cublasSgemm for float32; for bfloat16 a tensor-core GEMM
     * accumulating in float32 into scratch memory, then rounded to bfloat16, as the CPU's widening kernel does.
     */
    private static final class Gemm implements GpuOpKernel {
        private final Scratch wide = new Scratch();
        private final GpuOpKernel body;

        Gemm(java.util.function.BiConsumer<Gemm, GpuOpArgs> body) {
            this.body = a -> body.accept(this, a);
        }

        void run(GpuOpArgs a, DType dtype, boolean ta, boolean tb, int m, int n, int k, float alpha, DeviceTensor x,
                 DeviceTensor y, DeviceTensor c) {
            if (dtype == DType.F32) {
                a.cublas().sgemm(ta, tb, m, n, k, alpha, x.buffer(), y.buffer(), 0f, c.buffer());
                return;
            }
            long count = (long) m * n;
            DeviceTensor f32 = wide.of(a, DType.F32, count);
            a.cublas().gemm(Cublas.InputType.BF16, ta, tb, m, n, k, alpha, x.buffer(), y.buffer(), 0f, f32.buffer());
            a.launchElements("cast_f32_to_bf16", count, f32.buffer(), c.buffer(), count);
        }

        @Override
        public void run(GpuOpArgs a) {
            body.run(a);
        }

        @Override
        public void release(GpuDevice device) {
            wide.release(device);
        }
    }

    private static GpuOpKernel matmul(Op op) {
        boolean tx = op.boolAttr("transpose_X");
        boolean ty = op.boolAttr("transpose_Y");
        float alpha = op.floatAttr("alpha");
        return new Gemm((gemm, a) -> {
            DeviceTensor x = a.in("X");
            DeviceTensor y = a.in("Y");
            DType dtype = gemmDtype(a, x, y);
            Dims d = Dims.of(a, x, y, tx, ty);
            long[] os = x.shape().clone();
            os[os.length - 2] = tx ? x.shape()[os.length - 1] : x.shape()[os.length - 2];
            os[os.length - 1] = d.n();
            DeviceTensor out = a.out("Out", dtype, os);
            gemm.run(a, dtype, tx, ty, d.m(), d.n(), d.k(), alpha, x, y, out);
        });
    }

    /** dX and dY of Out = alpha op(X) op(Y), each a product of dOut with the other operand. */
    private static GpuOpKernel matmulGrad(Op op) {
        boolean tx = op.boolAttr("transpose_X");
        boolean ty = op.boolAttr("transpose_Y");
        float alpha = op.floatAttr("alpha");
        return new Gemm((gemm, a) -> {
            DeviceTensor x = a.in("X");
            DeviceTensor y = a.in("Y");
            DType dtype = gemmDtype(a, x, y);
            DeviceTensor g = a.in("Out@GRAD");
            if (g.dtype() != dtype) {
                throw a.unsupported("Out@GRAD " + g.describe() + " for operands of " + dtype.displayName());
            }
            Dims d = Dims.of(a, x, y, tx, ty);
            int m = d.m();
            int n = d.n();
            int k = d.k();
            if (a.hasOut("X@GRAD")) {
                DeviceTensor gx = a.outLike("X@GRAD", x);
                if (!tx && !ty) {
                    gemm.run(a, dtype, false, true, m, k, n, alpha, g, y, gx);
                } else if (!tx) {
                    gemm.run(a, dtype, false, false, m, k, n, alpha, g, y, gx);
                } else if (!ty) {
                    gemm.run(a, dtype, false, true, k, m, n, alpha, y, g, gx);
                } else {
                    gemm.run(a, dtype, true, true, k, m, n, alpha, y, g, gx);
                }
            }
            if (a.hasOut("Y@GRAD")) {
                DeviceTensor gy = a.outLike("Y@GRAD", y);
                if (!tx && !ty) {
                    gemm.run(a, dtype, true, false, k, n, m, alpha, x, g, gy);
                } else if (!tx) {
                    gemm.run(a, dtype, true, false, n, k, m, alpha, g, x, gy);
                } else if (!ty) {
                    gemm.run(a, dtype, false, false, k, n, m, alpha, x, g, gy);
                } else {
                    gemm.run(a, dtype, true, true, n, k, m, alpha, g, x, gy);
                }
            }
        });
    }

    /** dX = dOut; dY = dOut summed over the rows Y was broadcast to. */
    private static void elementwiseAddGrad(GpuOpArgs a) {
        DeviceTensor x = a.in("X");
        DeviceTensor y = a.in("Y");
        DeviceTensor g = a.inF32("Out@GRAD");
        long ny = rowBroadcast(a, x, y);
        if (a.hasOut("X@GRAD")) {
            DeviceTensor gx = a.outLike("X@GRAD", x);
            a.device().copy(g.buffer(), gx.buffer(), g.byteSize());
        }
        if (a.hasOut("Y@GRAD")) {
            DeviceTensor gy = a.outLike("Y@GRAD", y);
            columnSum(a, g, gy, g.numel() / ny, ny);
        }
    }

    /** dX = dOut * Y (Y broadcast over X's rows); dY = dOut * X, summed over the rows Y was broadcast to. */
    private static final class ElementwiseMulGrad implements GpuOpKernel {
        private final Scratch product = new Scratch();

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor x = a.inF32("X");
            DeviceTensor y = a.inF32("Y");
            DeviceTensor g = a.inF32("Out@GRAD");
            long n = x.numel();
            long ny = rowBroadcast(a, x, y);
            if (a.hasOut("X@GRAD")) {
                DeviceTensor gx = a.outLike("X@GRAD", x);
                a.launchElements("elementwise_mul_f32", n, g.buffer(), y.buffer(), gx.buffer(), n, ny);
            }
            if (a.hasOut("Y@GRAD")) {
                DeviceTensor gy = a.outLike("Y@GRAD", y);
                DeviceTensor gxy = ny == n ? gy : product.of(a, DType.F32, x.shape());
                a.launchElements("elementwise_mul_f32", n, g.buffer(), x.buffer(), gxy.buffer(), n, n);
                if (gxy != gy) {
                    columnSum(a, gxy, gy, n / ny, ny);
                }
            }
        }

        @Override
        public void release(GpuDevice device) {
            product.release(device);
        }
    }

    /** out[c] = sum over rows of x[r, c]; a plain copy when there is one row. */
    static void columnSum(GpuOpArgs a, DeviceTensor x, DeviceTensor out, long rows, long cols) {
        if (rows == 1) {
            a.device().copy(x.buffer(), out.buffer(), out.byteSize());
            return;
        }
        int blocks = Math.toIntExact((cols + LaunchShape.BLOCK - 1) / LaunchShape.BLOCK);
        a.kernels().launch("column_sum_f32", new LaunchShape(Math.max(1, blocks), 1, LaunchShape.BLOCK, 0),
                x.buffer(), out.buffer(), rows, cols);
    }

    /** gelu's tanh form: the GPU kernel computes the exact one, so the op takes the host fallback. */
    private static boolean tanhForm(Op op) {
        return op.hasAttr("approximate") && op.boolAttr("approximate");
    }

    /** The GPU kernel has no label smoothing: with it the op takes the host fallback. */
    private static boolean withoutSmoothing(Op op) {
        return op.floatAttr("label_smoothing") == 0f;
    }

    private static GpuOpKernel softmaxXent(Op op) {
        long ignore = op.intAttr("ignore_index");
        return a -> {
            DeviceTensor logits = a.inF32("Logits");
            DeviceTensor label = labels(a, logits);
            long c = logits.shape()[logits.rank() - 1];
            long rows = logits.numel() / c;
            DeviceTensor sm = a.outLike("Softmax", logits);
            long[] ls = logits.shape().clone();
            ls[ls.length - 1] = 1;
            DeviceTensor loss = a.out("Loss", DType.F32, ls);
            a.kernels().launch("softmax_xent_f32", LaunchShape.rows(rows), logits.buffer(), label.buffer(), sm.buffer(),
                    loss.buffer(), c, ignore);
        };
    }

    private static GpuOpKernel softmaxXentGrad(Op op) {
        long ignore = op.intAttr("ignore_index");
        return a -> {
            DeviceTensor sm = a.inF32("Softmax");
            DeviceTensor label = labels(a, sm);
            DeviceTensor g = a.inF32("Loss@GRAD");
            long c = sm.shape()[sm.rank() - 1];
            long rows = sm.numel() / c;
            DeviceTensor gx = a.outLike("Logits@GRAD", sm);
            a.launchElements("softmax_xent_grad_f32", rows * c, sm.buffer(), label.buffer(), g.buffer(), gx.buffer(),
                    rows, c, ignore);
        };
    }

    /** The int64 hard labels, one per row of {@code logits}. Out-of-range labels give a nan loss on the GPU. */
    private static DeviceTensor labels(GpuOpArgs a, DeviceTensor logits) {
        DeviceTensor label = a.in("Label");
        long rows = logits.numel() / logits.shape()[logits.rank() - 1];
        if (label.dtype() != DType.I64 || label.numel() != rows) {
            throw a.unsupported("Label " + label.describe() + " (" + a.op().in("Label") + ") for logits "
                    + logits.describe() + ": the GPU kernel takes int64 hard labels, one per row");
        }
        return label;
    }

    /** accuracy: rows whose first highest score is at the label, counted on the device; Correct and Total optional. */
    static final class Accuracy implements GpuOpKernel {
        /** The count when the op has no Correct output; kernels run in stream order, so one word serves every step. */
        private DeviceTensor scratch;

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor scores = a.inF32("Out");
            if (scores.rank() != 2) {
                throw a.unsupported("Out is " + scores.describe() + "; accuracy takes scores [rows, classes]");
            }
            long rows = scores.shape()[0];
            long classes = scores.shape()[1];
            DeviceTensor label = a.in("Label");
            if (label.dtype() != DType.I64 || label.numel() != rows) {
                throw a.unsupported("Label " + label.describe() + " (" + a.op().in("Label") + ") for scores "
                        + scores.describe() + ": the GPU kernel takes int64 labels, one per row");
            }
            DeviceTensor correct = a.hasOut("Correct") ? a.out("Correct", DType.I64) : scratch(a);
            DeviceTensor accuracy = a.out("Accuracy", DType.F32);
            a.device().zero(correct.buffer());
            if (rows > 0 && classes > 0) {
                a.launchElements("accuracy_count_f32", rows, scores.buffer(), label.buffer(), correct.buffer(), rows,
                        classes);
            }
            boolean total = a.hasOut("Total");
            DeviceTensor totalOut = total ? a.out("Total", DType.I64) : correct;
            a.kernels().launch("accuracy_finish", new LaunchShape(1, 1, 1, 0), correct.buffer(), accuracy.buffer(),
                    totalOut.buffer(), rows, total ? 1 : 0);
        }

        @Override
        public void release(GpuDevice device) {
            if (scratch != null) {
                device.free(scratch.buffer());
                scratch = null;
            }
        }

        private DeviceTensor scratch(GpuOpArgs a) {
            if (scratch == null) {
                scratch = new DeviceTensor(a.device().allocate(8), DType.I64, new long[0], false);
            }
            return scratch;
        }
    }
}
