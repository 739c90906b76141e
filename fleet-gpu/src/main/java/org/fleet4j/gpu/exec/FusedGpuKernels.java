package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.fused.BucketOps;
import org.fleet4j.core.ops.fused.FusedElewiseAddActOp;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.GpuBuffer;
import org.fleet4j.gpu.GpuDevice;

/**
 * GPU kernels of the compiler's fused ops where the unfused kernels exist: {@code fused_elemwise_add_activation}
 * (relu, sigmoid, tanh) and its gradient as two launches each, and {@code gather_bucket}, which makes gradients
 * views into one contiguous device buffer so that one collective reduces them all.
 */
@AutoService(KernelLibrary.class)
public final class FusedGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        r.kernel(FusedElewiseAddActOp.TYPE, op -> {
            String act = activation(op);
            return a -> {
                DeviceTensor x = a.inF32("X");
                DeviceTensor y = a.inF32("Y");
                long ny = DenseGpuKernels.rowBroadcast(a, x, y);
                DeviceTensor out = a.out("Out", DType.F32, DenseGpuKernels.broadcastShape(x, y));
                a.launchElements("elementwise_add_f32", x.numel(), x.buffer(), y.buffer(), out.buffer(), x.numel(), ny);
                a.launchElements(act + "_f32", x.numel(), out.buffer(), out.buffer(), x.numel());
            };
        });
        r.kernel(OpSpec.gradType(FusedElewiseAddActOp.TYPE), op -> new AddActivationGrad(activation(op)));
        r.kernel(BucketOps.GATHER, op -> new GatherBucket());
    }

    /** The activation kernel's name for the op's functor. */
    private static String activation(Op op) {
        String f = op.stringAttr("functor");
        return switch (f) {
            case "relu", "sigmoid", "tanh" -> f;
            default -> throw new IllegalArgumentException("op " + op.type() + " with functor '" + f
                    + "' has no GPU kernel (relu, sigmoid and tanh have)");
        };
    }

    /** dX = act'(Out) * dOut, dY = dX summed over rows; d(X + Y) goes to scratch memory when X@GRAD is not wanted. */
    static final class AddActivationGrad implements GpuOpKernel {
        private final String act;
        private GpuBuffer scratch;

        AddActivationGrad(String act) {
            this.act = act;
        }

        @Override
        public void run(GpuOpArgs a) {
            DeviceTensor x = a.inF32("X");
            DeviceTensor y = a.inF32("Y");
            DeviceTensor out = a.inF32("Out");
            long ny = DenseGpuKernels.rowBroadcast(a, x, y);
            DeviceTensor dsum = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : scratch(a, x);
            a.launchElements(act + "_grad_f32", x.numel(), out.buffer(), out.buffer(), a.inF32("Out@GRAD").buffer(),
                    dsum.buffer(), x.numel());
            if (a.hasOut("Y@GRAD")) {
                DenseGpuKernels.columnSum(a, dsum, a.outLike("Y@GRAD", y), x.numel() / ny, ny);
            }
        }

        @Override
        public void release(GpuDevice device) {
            if (scratch != null) {
                device.free(scratch);
                scratch = null;
            }
        }

        /** Kernels run in stream order, so one scratch buffer per op serves every step. */
        private DeviceTensor scratch(GpuOpArgs a, DeviceTensor like) {
            if (scratch == null || scratch.byteSize() < like.byteSize()) {
                if (scratch != null) {
                    a.device().free(scratch);
                }
                scratch = a.device().allocate(like.byteSize());
            }
            return new DeviceTensor(scratch, like.dtype(), like.shape(), false);
        }
    }

    /** gather_bucket on the device: X vars become views of one bucket; a gradient not yet in its view is copied in. */
    static final class GatherBucket implements GpuOpKernel {
        private DeviceTensor bucket;
        private DeviceTensor[] views;

        @Override
        public void run(GpuOpArgs a) {
            int n = a.inCount("X");
            if (!fits(a, n)) {
                allocate(a, n);
            }
            for (int j = 0; j < n; j++) {
                DeviceTensor g = a.in("X", j);
                if (g.buffer().address() != views[j].buffer().address()) {
                    a.device().copy(g.buffer(), views[j].buffer(), g.byteSize());
                    a.setOut("Out", j, views[j]);
                }
            }
            a.setOut("Bucket", bucket);
        }

        private boolean fits(GpuOpArgs a, int n) {
            if (views == null || views.length != n) {
                return false;
            }
            for (int j = 0; j < n; j++) {
                DeviceTensor g = a.in("X", j);
                if (g.dtype() != bucket.dtype() || !views[j].hasShape(g.shape())) {
                    return false;
                }
            }
            return true;
        }

        private void allocate(GpuOpArgs a, int n) {
            DType dtype = a.in("X", 0).dtype();
            long total = 0;
            for (int j = 0; j < n; j++) {
                DeviceTensor g = a.in("X", j);
                if (g.dtype() != dtype) {
                    throw a.unsupported("gradient " + a.op().input("X").get(j) + " is " + g.describe()
                            + ", the bucket is " + dtype.displayName());
                }
                total += g.numel();
            }
            bucket = a.out("Bucket", dtype, total);
            views = new DeviceTensor[n];
            long off = 0;
            for (int j = 0; j < n; j++) {
                DeviceTensor g = a.in("X", j);
                GpuBuffer slice = bucket.buffer().slice(off * dtype.byteSize(), g.byteSize());
                views[j] = new DeviceTensor(slice, dtype, g.shape().clone(), false);
                off += g.numel();
            }
        }
    }
}
