package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * batch_norm over every dimension but the channel (dimension 1 for NCHW and [N, C], the last for NHWC):
 * Y = Scale * (X - mean) / sqrt(var + epsilon) + Bias.
 * <p>Training uses the batch's mean and biased variance, and updates the running statistics in place (MeanOut
 * and VarianceOut are the Mean and Variance vars) as Paddle does: running = momentum * running +
 * (1 - momentum) * batch, with the biased batch variance. Test mode uses the running statistics and changes
 * nothing. SavedMean and SavedVariance hold the mean and the inverse standard deviation that were used, for
 * the gradient. The loops are {@link ChannelLayout}'s, the arithmetic {@link BatchNormalisation}'s (shared with the sync
 * batch norm ops).
 */
@AutoService(OpLibrary.class)
public final class BatchNormOp implements OpLibrary {
    public static final String BATCH_NORM = "batch_norm";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(BATCH_NORM)
                .in("X", "Scale", "Bias", "Mean", "Variance")
                .out("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance")
                .noGrad("Mean", "Variance")
                .attr("momentum", AttrType.FLOAT, 0.9f)
                .attr("epsilon", AttrType.FLOAT, 1e-5f)
                .attr("is_test", AttrType.BOOL, false)
                .attr("data_layout", AttrType.STRING, "NCHW")
                .shape(BatchNormOp::inferShape)
                .kernel(op -> new Forward(op.floatAttr("momentum"), op.floatAttr("epsilon"), op.boolAttr("is_test"),
                        channelsLast(op.stringAttr("data_layout"))))
                .gradKernel(op -> new Grad(op.boolAttr("is_test"), channelsLast(op.stringAttr("data_layout"))))
                .build());
        return specs;
    }

    private static boolean channelsLast(String layout) {
        return layout.equals("NHWC");
    }

    private static void inferShape(InferContext ctx) {
        if (ctx.dtype("X") != DType.F32) {
            throw ctx.fail("X must be float32 (the CPU kernel is float32; AMP keeps batch_norm in float32), is "
                    + ctx.dtype("X").displayName());
        }
        long[] x = ctx.shape("X");
        String layout = ctx.op().stringAttr("data_layout");
        if (!layout.equals("NCHW") && !layout.equals("NHWC")) {
            throw ctx.fail("data_layout '" + layout + "' is not NCHW or NHWC");
        }
        if (x.length != 2 && x.length != 4) {
            throw ctx.fail("X must be [N, C] or 4-D (" + layout + "), is " + Shapes.str(x));
        }
        float momentum = ctx.op().floatAttr("momentum");
        if (!(momentum >= 0f && momentum <= 1f)) {
            throw ctx.fail("momentum must be in [0, 1], is " + momentum);
        }
        if (!(ctx.op().floatAttr("epsilon") >= 0f)) {
            throw ctx.fail("epsilon must be >= 0");
        }
        long c = channelsLast(layout) ? x[x.length - 1] : x[1];
        for (String slot : new String[]{"Scale", "Bias", "Mean", "Variance"}) {
            long[] s = ctx.shape(slot);
            if (s.length != 1 || (c >= 0 && s[0] >= 0 && s[0] != c)) {
                throw ctx.fail(slot + " must be [" + c + "] (one value per channel of X), is " + Shapes.str(s));
            }
            if (ctx.dtype(slot) != ctx.dtype("X")) {
                throw ctx.fail(slot + " must have X's dtype " + ctx.dtype("X").displayName());
            }
        }
        ctx.set("Y", ctx.dtype("X"), x);
        for (String out : new String[]{"MeanOut", "VarianceOut", "SavedMean", "SavedVariance"}) {
            ctx.set(out, ctx.dtype("X"), c);
        }
    }

    record Forward(float momentum, float epsilon, boolean isTest, boolean channelsLast) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor scale = a.in("Scale");
            Tensor runningMean = a.in("Mean");
            Tensor runningVar = a.in("Variance");
            ChannelLayout l = ChannelLayout.of(x, channelsLast);
            if (scale.numel() != l.channels()) {
                throw new IllegalArgumentException("Scale has " + scale.numel() + " values for " + l.channels()
                        + " channels of X " + x.describe());
            }
            int c = (int) l.channels();
            double[] mean = new double[c];
            double[] var = new double[c];
            if (isTest) {
                for (int k = 0; k < c; k++) {
                    mean[k] = runningMean.getFloat(k);
                    var[k] = runningVar.getFloat(k);
                }
            } else {
                l.sums(x.segment(), mean);
                for (int k = 0; k < c; k++) {
                    mean[k] /= l.perChannel();
                }
                l.centredSquares(x.segment(), mean, var);
                for (int k = 0; k < c; k++) {
                    var[k] /= l.perChannel();
                }
                BatchNormalisation.updateRunning(runningMean, runningVar, mean, var, momentum);
            }
            BatchNormalisation.normalise(l, x, scale, a.in("Bias"), mean, var, epsilon, a.outLike("Y", x),
                    a.out("SavedMean", x.dtype(), l.channels()), a.out("SavedVariance", x.dtype(), l.channels()));
            a.setOut("MeanOut", runningMean);
            a.setOut("VarianceOut", runningVar);
        }
    }

    /**
     * With xhat = (x - mean) * invStd over the m elements of a channel: dBias = sum(dY), dScale = sum(dY xhat),
     * and in training dX as {@link BatchNormalisation#inputGradient} gives it, since mean and var depend on X;
     * in test mode the statistics are constants and dX = Scale invStd dY.
     */
    record Grad(boolean isTest, boolean channelsLast) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor scale = a.in("Scale");
            Tensor mean = a.in("SavedMean");
            Tensor invStd = a.in("SavedVariance");
            Tensor dy = a.in("Y@GRAD");
            ChannelLayout l = ChannelLayout.of(x, channelsLast);
            int c = (int) l.channels();
            double[] mu = new double[c];
            for (int k = 0; k < c; k++) {
                mu[k] = mean.getFloat(k);
            }
            double[] sumDy = new double[c];
            double[] sumDyCentred = new double[c];
            l.sums(dy.segment(), sumDy);
            l.centredProducts(dy.segment(), x.segment(), mu, sumDyCentred);
            if (a.hasOut("Bias@GRAD")) {
                Tensor dBias = a.outLike("Bias@GRAD", scale);
                for (int k = 0; k < c; k++) {
                    dBias.setFloat(k, (float) sumDy[k]);
                }
            }
            if (a.hasOut("Scale@GRAD")) {
                Tensor dScale = a.outLike("Scale@GRAD", scale);
                for (int k = 0; k < c; k++) {
                    dScale.setFloat(k, (float) (sumDyCentred[k] * invStd.getFloat(k)));
                }
            }
            if (a.hasOut("X@GRAD")) {
                BatchNormalisation.inputGradient(l, x, dy, scale, mean, invStd, isTest ? null : sumDy, sumDyCentred,
                        l.perChannel(), a.outLike("X@GRAD", x));
            }
        }
    }
}
