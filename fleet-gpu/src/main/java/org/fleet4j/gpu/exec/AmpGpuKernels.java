package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.CastOps;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.ops.fused.AllreduceCastOp;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.gpu.LaunchShape;

/**
 * GPU kernels of the ops the compiler's {@code amp} and bfloat16-allreduce passes write into a program, matching
 * fleet-core's CPU kernels: {@code cast} (and its gradient) and {@code allreduce_cast} between float32 and bfloat16,
 * {@code check_finite_and_unscale}, {@code update_loss_scaling} and {@code logical_not}. The loss scale and its step
 * counters stay on the device: a step copies nothing through the host for them.
 */
@AutoService(KernelLibrary.class)
public final class AmpGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        r.kernel(CastOps.CAST, op -> a -> {
            DeviceTensor x = a.in("X");
            convert(a, x, a.out("Out", DType.parse(op.stringAttr("out_dtype")), x.shape()));
        });
        r.kernel(OpSpec.gradType(CastOps.CAST), op -> a -> {
            DeviceTensor x = a.in("X");
            convert(a, a.in("Out@GRAD"), a.out("X@GRAD", x.dtype(), x.shape()));
        });
        // into Out's existing buffer when it has the shape, so a gradient restored from bfloat16 lands in its bucket view
        r.kernel(AllreduceCastOp.TYPE, op -> a -> {
            DeviceTensor x = a.in("X");
            convert(a, x, a.out("Out", DType.parse(op.stringAttr("out_dtype")), x.shape()));
        });
        r.kernel(CastOps.CHECK_FINITE_AND_UNSCALE, op -> a -> {
            DeviceTensor scale = a.inF32("Scale");
            DeviceTensor found = a.out("FoundInfinite", DType.I64, 1);
            a.device().zero(found.buffer());
            for (int j = 0, n = a.inCount("X"); j < n; j++) {
                DeviceTensor x = a.inF32("X", j);
                DeviceTensor out = a.sameVar("X", j, "Out") ? x : a.out("Out", j, DType.F32, x.shape());
                if (out == x) {
                    a.setOut("Out", j, x);
                }
                if (x.numel() > 0) {
                    a.launchElements("check_finite_and_unscale_f32", x.numel(), x.buffer(), out.buffer(),
                            scale.buffer(), found.buffer(), x.numel());
                }
            }
        });
        r.kernel(CastOps.UPDATE_LOSS_SCALING, op -> {
            int incrEvery = op.intAttr("incr_every_n_steps");
            int decrEvery = op.intAttr("decr_every_n_nan_or_inf");
            float incr = op.floatAttr("incr_ratio");
            float decr = op.floatAttr("decr_ratio");
            return a -> {
                DeviceTensor found = scalar(a, "FoundInfinite", DType.I64);
                DeviceTensor prev = scalar(a, "PrevLossScaling", DType.F32);
                DeviceTensor good = scalar(a, "InGoodSteps", DType.I64);
                DeviceTensor bad = scalar(a, "InBadSteps", DType.I64);
                DeviceTensor scale = inPlaceOr(a, "PrevLossScaling", prev, "LossScaling");
                DeviceTensor goodOut = inPlaceOr(a, "InGoodSteps", good, "OutGoodSteps");
                DeviceTensor badOut = inPlaceOr(a, "InBadSteps", bad, "OutBadSteps");
                a.kernels().launch("update_loss_scaling_f32", new LaunchShape(1, 1, 1, 0),
                        found.buffer(), prev.buffer(), good.buffer(), bad.buffer(), scale.buffer(), goodOut.buffer(),
                        badOut.buffer(), incrEvery, decrEvery, incr, decr);
            };
        });
        r.kernel(CastOps.LOGICAL_NOT, op -> a -> {
            DeviceTensor x = a.in("X");
            if (x.dtype() != DType.I64) {
                throw a.unsupported("X " + x.describe() + " (" + op.in("X") + "): the GPU kernel takes int64 flags");
            }
            DeviceTensor out = a.out("Out", DType.I64, x.shape());
            a.launchElements("logical_not_i64", Math.max(1, x.numel()), x.buffer(), out.buffer(), x.numel());
        });
    }

    /** dst = src converted between float32 and bfloat16 (round to nearest even), or copied when the dtypes agree. */
    static void convert(GpuOpArgs a, DeviceTensor src, DeviceTensor dst) {
        if (src.numel() == 0) {
            return;
        }
        if (src.dtype() == dst.dtype()) {
            if (src.buffer().address() != dst.buffer().address()) {
                a.device().copy(src.buffer(), dst.buffer(), src.byteSize());
            }
            return;
        }
        String kernel = src.dtype() == DType.F32 && dst.dtype() == DType.BF16 ? "cast_f32_to_bf16"
                : src.dtype() == DType.BF16 && dst.dtype() == DType.F32 ? "cast_bf16_to_f32" : null;
        if (kernel == null) {
            throw a.unsupported("a cast from " + src.dtype().displayName() + " to " + dst.dtype().displayName()
                    + ": the GPU casts between float32 and bfloat16 only");
        }
        a.launchElements(kernel, src.numel(), src.buffer(), dst.buffer(), src.numel());
    }

    private static DeviceTensor scalar(GpuOpArgs a, String slot, DType dtype) {
        DeviceTensor t = a.in(slot);
        if (t.dtype() != dtype || t.numel() != 1) {
            throw a.unsupported(slot + " " + t.describe() + " (" + a.op().in(slot) + "): expected one "
                    + dtype.displayName() + " value");
        }
        return t;
    }

    /** The output var's buffer: the input's own when the op updates it in place, else a new one of its shape. */
    private static DeviceTensor inPlaceOr(GpuOpArgs a, String inSlot, DeviceTensor in, String outSlot) {
        if (a.sameVar(inSlot, 0, outSlot)) {
            a.setOut(outSlot, in);
            return in;
        }
        return a.outLike(outSlot, in);
    }
}
