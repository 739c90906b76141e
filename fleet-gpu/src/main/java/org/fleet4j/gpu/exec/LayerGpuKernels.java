package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.BatchNormOp;
import org.fleet4j.core.ops.DropoutOp;
import org.fleet4j.core.ops.LookupTableOp;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.GpuDevice;
import org.fleet4j.gpu.LaunchShape;

/**
 * GPU kernels of the layers beyond a plain MLP, matching fleet-core's CPU kernels: {@code lookup_table} (embedding)
 * with its dense gradient, {@code batch_norm} in training and test mode with its gradient, and {@code dropout} with
 * its gradient. Differences from the CPU, by design: an id outside the vocabulary gives a row of nan instead of an
 * exception (the device cannot throw), and dropout's masks come from a counter-based generator (same law, other
 * draws).
 */
@AutoService(KernelLibrary.class)
public final class LayerGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        r.kernel(LookupTableOp.LOOKUP_TABLE, op -> {
            long pad = op.<Long>attr("padding_idx");
            return a -> {
                DeviceTensor w = table(a);
                DeviceTensor ids = ids(a);
                DeviceTensor out = a.out("Out", DType.F32, ids.numel(), w.shape()[1]);
                if (out.numel() > 0) {
                    a.launchElements("lookup_table_f32", out.numel(), w.buffer(), ids.buffer(), out.buffer(), ids.numel(),
                            w.shape()[1], w.shape()[0], pad);
                }
            };
        });
        r.kernel(OpSpec.gradType(LookupTableOp.LOOKUP_TABLE), op -> {
            if (op.boolAttr("is_sparse")) {
                throw new ExecutionException("op lookup_table_grad of " + op.in("W") + " has is_sparse=true: its gradient"
                        + " is a SelectedRows, and the GPU executor holds dense tensors only. Build the embedding with"
                        + " is_sparse=false to train it on the GPU, or run this program on the CPU (FLEET_DEVICE=cpu)");
            }
            long pad = op.<Long>attr("padding_idx");
            return a -> {
                DeviceTensor w = table(a);
                DeviceTensor ids = ids(a);
                DeviceTensor g = a.inF32("Out@GRAD");
                DeviceTensor gw = a.outLike("W@GRAD", w);
                a.device().zero(gw.buffer());
                if (g.numel() > 0) {
                    a.launchElements("lookup_table_grad_f32", g.numel(), ids.buffer(), g.buffer(), gw.buffer(),
                            ids.numel(), w.shape()[1], w.shape()[0], pad);
                }
            };
        });
        r.kernel(BatchNormOp.BATCH_NORM, BatchNorm::new);
        r.kernel(OpSpec.gradType(BatchNormOp.BATCH_NORM), BatchNormGrad::new);
        r.kernel(DropoutOp.DROPOUT, Dropout::new);
        r.kernel(OpSpec.gradType(DropoutOp.DROPOUT), op -> a -> {
            DeviceTensor g = a.inF32("Out@GRAD");
            DeviceTensor mask = a.inF32("Mask");
            DeviceTensor gx = a.outLike("X@GRAD", g);
            a.launchElements("elementwise_mul_f32", g.numel(), g.buffer(), mask.buffer(), gx.buffer(), g.numel(),
                    Math.max(1, mask.numel()));
        });
    }

    private static DeviceTensor table(GpuOpArgs a) {
        DeviceTensor w = a.inF32("W");
        if (w.rank() != 2) {
            throw a.unsupported("W " + w.describe() + " (" + a.op().in("W") + ") is no [vocab, width] table");
        }
        return w;
    }

    private static DeviceTensor ids(GpuOpArgs a) {
        DeviceTensor ids = a.in("Ids");
        if (ids.dtype() != DType.I64) {
            throw a.unsupported("Ids " + ids.describe() + " (" + a.op().in("Ids") + "): the GPU kernel takes int64 ids");
        }
        return ids;
    }

    /** X viewed as [outer, C, inner], as fleet-core's batch norm: [N, C] and NHWC have inner 1. */
    private record Layout(long outer, long channels, long inner) {
        static Layout of(GpuOpArgs a, DeviceTensor x) {
            long[] s = x.shape();
            if (s.length != 2 && s.length != 4) {
                throw a.unsupported("X " + x.describe() + ": batch norm takes [N, C] or 4-D X");
            }
            if (a.op().stringAttr("data_layout").equals("NHWC") || s.length == 2) {
                long c = s[s.length - 1];
                return new Layout(x.numel() / c, c, 1);
            }
            return new Layout(s[0], s[1], x.numel() / (s[0] * s[1]));
        }
    }

    /** Running statistics are updated in place in Mean and Variance, which MeanOut and VarianceOut then name. */
    private static final class BatchNorm implements GpuOpKernel {
        private final float momentum;
        private final float epsilon;
        private final boolean isTest;

        BatchNorm(Op op) {
            momentum = op.floatAttr("momentum");
            epsilon = op.floatAttr("epsilon");
            isTest = op.boolAttr("is_test");
        }

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor x = a.inF32("X");
            Layout l = Layout.of(a, x);
            DeviceTensor mean = a.inF32("Mean");
            DeviceTensor var = a.inF32("Variance");
            DeviceTensor y = a.outLike("Y", x);
            DeviceTensor savedMean = a.out("SavedMean", DType.F32, l.channels());
            DeviceTensor savedInvStd = a.out("SavedVariance", DType.F32, l.channels());
            a.kernels().launch("batch_norm_f32", LaunchShape.rows(l.channels()), x.buffer(), a.inF32("Scale").buffer(),
                    a.inF32("Bias").buffer(), mean.buffer(), var.buffer(), y.buffer(), savedMean.buffer(),
                    savedInvStd.buffer(), l.outer(), l.channels(), l.inner(), momentum, epsilon, isTest ? 1 : 0);
            a.setOut("MeanOut", mean);
            a.setOut("VarianceOut", var);
        }
    }

    /** The kernel writes all three gradients; those the op does not name go to scratch memory. */
    private static final class BatchNormGrad implements GpuOpKernel {
        private final boolean isTest;
        private final Scratch unnamed = new Scratch();

        BatchNormGrad(Op op) {
            isTest = op.boolAttr("is_test");
        }

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor x = a.inF32("X");
            DeviceTensor scale = a.inF32("Scale");
            Layout l = Layout.of(a, x);
            long c = l.channels();
            boolean dx = a.hasOut("X@GRAD");
            boolean ds = a.hasOut("Scale@GRAD");
            boolean db = a.hasOut("Bias@GRAD");
            DeviceTensor spare = dx && ds && db ? null : unnamed.of(a, DType.F32, x.numel() + 2 * c);
            a.kernels().launch("batch_norm_grad_f32", LaunchShape.rows(c), x.buffer(), scale.buffer(),
                    a.inF32("SavedMean").buffer(), a.inF32("SavedVariance").buffer(), a.inF32("Y@GRAD").buffer(),
                    dx ? a.outLike("X@GRAD", x).buffer() : spare.buffer().slice(0, x.byteSize()),
                    ds ? a.outLike("Scale@GRAD", scale).buffer() : spare.buffer().slice(x.byteSize(), c * 4),
                    db ? a.outLike("Bias@GRAD", scale).buffer() : spare.buffer().slice(x.byteSize() + c * 4, c * 4),
                    l.outer(), c, l.inner(), isTest ? 1 : 0);
        }

        @Override
        public void release(GpuDevice device) {
            unnamed.release(device);
        }
    }

    /**
     * Mask holds each element's factor (0, or 1/(1-p) for upscale_in_train and 1 for downgrade_in_infer in training;
     * 1 or 1-p at test time), so the gradient is Out@GRAD * Mask. The step counter advances every training run, as the
     * CPU kernel's generator does.
     */
    private static final class Dropout implements GpuOpKernel {
        private final float p;
        private final boolean isTest;
        private final boolean upscale;
        private final long seed;
        private long step;

        Dropout(Op op) {
            p = op.floatAttr("dropout_prob");
            isTest = op.boolAttr("is_test");
            upscale = op.stringAttr("dropout_implementation").equals("upscale_in_train");
            seed = op.<Long>attr("seed");
        }

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor x = a.inF32("X");
            DeviceTensor out = a.outLike("Out", x);
            DeviceTensor mask = a.out("Mask", DType.F32, x.shape());
            long n = x.numel();
            if (n == 0) {
                return;
            }
            if (isTest) {
                a.launchElements("fill_f32", n, mask.buffer(), upscale ? 1f : 1f - p, n);
                a.launchElements("elementwise_mul_f32", n, x.buffer(), mask.buffer(), out.buffer(), n, n);
                return;
            }
            float kept = upscale ? (p < 1f ? 1f / (1f - p) : 0f) : 1f;
            a.launchElements("dropout_f32", n, x.buffer(), out.buffer(), mask.buffer(), n, p, kept, seed, step++);
        }
    }
}
