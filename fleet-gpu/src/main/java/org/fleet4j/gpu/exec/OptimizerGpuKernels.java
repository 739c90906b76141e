package org.fleet4j.gpu.exec;

import com.google.auto.service.AutoService;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.kernel.KernelLibrary;
import org.fleet4j.core.kernel.KernelRegistrar;
import org.fleet4j.core.ops.OptimizerOps;
import org.fleet4j.core.ops.ScheduleOps;
import org.fleet4j.core.ops.fused.FusedOptimizerOps;
import org.fleet4j.core.tensor.DType;

/**
 * GPU kernels of the parameter updates (sgd, momentum, adam, adamw and the compiler's fused forms, which update many
 * parameters in one op) and of the step counter and constant learning rate that precede them. Updates work in place
 * on the device copies of the parameters and read the learning rate from device memory, so a step copies no scalar
 * through the host.
 */
@AutoService(KernelLibrary.class)
public final class OptimizerGpuKernels extends GpuKernelLibrary {
    @Override
    public void register(KernelRegistrar<GpuKernelFactory> r) {
        r.kernel(OptimizerOps.SGD, OptimizerGpuKernels::sgd);
        r.kernel(FusedOptimizerOps.SGD, OptimizerGpuKernels::sgd);
        r.kernel(OptimizerOps.MOMENTUM, OptimizerGpuKernels::withoutWeightDecay, "weight_decay 0", OptimizerGpuKernels::momentum);
        r.kernel(FusedOptimizerOps.MOMENTUM, OptimizerGpuKernels::withoutWeightDecay, "weight_decay 0",
                OptimizerGpuKernels::momentum);
        r.hostFallback(OptimizerOps.MOMENTUM, "with weight_decay != 0: the parameter, gradient and velocity each way per step");
        r.hostFallback(FusedOptimizerOps.MOMENTUM, "with weight_decay != 0: the parameters, gradients and velocities each way per"
                + " step");
        r.kernel(OptimizerOps.ADAM, op -> adam(op, 0f));
        r.kernel(OptimizerOps.ADAMW, op -> adam(op, op.floatAttr("coeff")));
        r.kernel(FusedOptimizerOps.ADAM, op -> adam(op, op.floatAttr("coeff")));
        r.kernel(ScheduleOps.INCREMENT, op -> {
            float step = op.floatAttr("step");
            return a -> {
                DeviceTensor x = a.in("X");
                DeviceTensor out = inPlace(a, "X", 0, "Out");
                switch (x.dtype()) {
                    case F32 -> a.launchElements("increment_f32", x.numel(), out.buffer(), step, x.numel());
                    case I64 -> a.launchElements("increment_i64", x.numel(), out.buffer(), (long) step, x.numel());
                    default -> throw a.unsupported("X is " + x.describe() + "; the GPU kernel counts in float32 or int64");
                }
            };
        });
        r.kernel(ScheduleOps.LR_SCHEDULE, op -> op.stringAttr("decay").equals("constant") && op.intAttr("warmup_steps") == 0,
                "a constant rate without warm-up", op -> {
            float lr = op.floatAttr("base_lr");
            return a -> a.launchElements("fill_f32", 1, a.out("LearningRate", DType.F32, 1).buffer(), lr, 1L);
        });
        r.hostFallback(ScheduleOps.LR_SCHEDULE, "for schedules other than a constant rate without warm-up: one scalar each way"
                + " per step");
    }

    /**
     * Output {@code j} of {@code outSlot} holding input {@code j} of {@code inSlot}: the input itself when both name
     * the same var (the usual in-place update), else a copy of it.
     */
    static DeviceTensor inPlace(GpuOpArgs a, String inSlot, int j, String outSlot) {
        DeviceTensor x = a.in(inSlot, j);
        if (a.sameVar(inSlot, j, outSlot)) {
            a.setOut(outSlot, j, x);
            return x;
        }
        DeviceTensor out = a.out(outSlot, j, x.dtype(), x.shape());
        a.device().copy(x.buffer(), out.buffer(), x.byteSize());
        return out;
    }

    private static GpuOpKernel sgd(Op op) {
        float wd = op.floatAttr("weight_decay");
        return a -> {
            DeviceTensor lr = a.inF32("LearningRate");
            for (int j = 0; j < a.inCount("Param"); j++) {
                DeviceTensor g = a.inF32("Grad", j);
                DeviceTensor p = inPlace(a, "Param", j, "ParamOut");
                a.launchElements("sgd_f32", p.numel(), p.buffer(), g.buffer(), lr.buffer(), wd, p.numel());
            }
        };
    }

    /** The momentum kernel has no weight decay: with one the op takes the host fallback. */
    private static boolean withoutWeightDecay(Op op) {
        return op.floatAttr("weight_decay") == 0f;
    }

    private static GpuOpKernel momentum(Op op) {
        float mu = op.floatAttr("mu");
        int nesterov = op.boolAttr("use_nesterov") ? 1 : 0;
        return a -> {
            DeviceTensor lr = a.inF32("LearningRate");
            for (int j = 0; j < a.inCount("Param"); j++) {
                DeviceTensor g = a.inF32("Grad", j);
                DeviceTensor p = inPlace(a, "Param", j, "ParamOut");
                DeviceTensor v = inPlace(a, "Velocity", j, "VelocityOut");
                a.launchElements("momentum_f32", p.numel(), p.buffer(), g.buffer(), v.buffer(), lr.buffer(), mu,
                        nesterov, p.numel());
            }
        };
    }

    /** Adam as the CPU computes it; the beta powers advance on the device after each parameter's update. */
    private static GpuOpKernel adam(Op op, float coeff) {
        float beta1 = op.floatAttr("beta1");
        float beta2 = op.floatAttr("beta2");
        float eps = op.floatAttr("epsilon");
        return a -> {
            DeviceTensor lr = a.inF32("LearningRate");
            for (int j = 0; j < a.inCount("Param"); j++) {
                DeviceTensor g = a.inF32("Grad", j);
                DeviceTensor p = inPlace(a, "Param", j, "ParamOut");
                DeviceTensor m1 = inPlace(a, "Moment1", j, "Moment1Out");
                DeviceTensor m2 = inPlace(a, "Moment2", j, "Moment2Out");
                DeviceTensor b1 = inPlace(a, "Beta1Pow", j, "Beta1PowOut");
                DeviceTensor b2 = inPlace(a, "Beta2Pow", j, "Beta2PowOut");
                a.launchElements("adam_f32", p.numel(), p.buffer(), g.buffer(), m1.buffer(), m2.buffer(), lr.buffer(),
                        b1.buffer(), b2.buffer(), beta1, beta2, eps, coeff, p.numel());
                a.launchElements("scale_inplace_f32", b1.numel(), b1.buffer(), beta1, b1.numel());
                a.launchElements("scale_inplace_f32", b2.numel(), b2.buffer(), beta2, b2.numel());
            }
        };
    }
}
