package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * batch_norm over every dimension but the channel (dimension 1 for NCHW and [N, C], the last for NHWC):
 * Y = Scale * (X - mean) / sqrt(var + epsilon) + Bias.
 * <p>Training uses the batch's mean and biased variance, and updates the running statistics in place (MeanOut
 * and VarianceOut are the Mean and Variance vars) as Paddle does: running = momentum * running +
 * (1 - momentum) * batch, with the biased batch variance. Test mode uses the running statistics and changes
 * nothing. SavedMean and SavedVariance hold the mean and the inverse standard deviation that were used, for
 * the gradient.
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
        ctx.requireFloat("X");
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

    /** X viewed as [outer, C, inner]: element (o, c, i) is at (o * C + c) * inner + i. */
    record Layout(long outer, long channels, long inner) {
        static Layout of(Tensor x, boolean channelsLast) {
            long[] s = x.shape();
            if (channelsLast || s.length == 2) {
                long c = s[s.length - 1];
                return new Layout(x.numel() / c, c, 1);
            }
            return new Layout(s[0], s[1], x.numel() / (s[0] * s[1]));
        }

        long perChannel() {
            return outer * inner;
        }

        long index(long o, long c, long i) {
            return (o * channels + c) * inner + i;
        }
    }

    record Forward(float momentum, float epsilon, boolean isTest, boolean channelsLast) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor scale = a.in("Scale");
            Tensor bias = a.in("Bias");
            Tensor runningMean = a.in("Mean");
            Tensor runningVar = a.in("Variance");
            Layout l = Layout.of(x, channelsLast);
            if (scale.numel() != l.channels()) {
                throw new IllegalArgumentException("Scale has " + scale.numel() + " values for " + l.channels()
                        + " channels of X " + x.describe());
            }
            Tensor y = a.outLike("Y", x);
            Tensor savedMean = a.out("SavedMean", x.dtype(), l.channels());
            Tensor savedInvStd = a.out("SavedVariance", x.dtype(), l.channels());
            long m = l.perChannel();
            for (long c = 0; c < l.channels(); c++) {
                double mean;
                double var;
                if (isTest) {
                    mean = runningMean.getDouble(c);
                    var = runningVar.getDouble(c);
                } else {
                    double sum = 0;
                    for (long o = 0; o < l.outer(); o++) {
                        for (long i = 0; i < l.inner(); i++) {
                            sum += x.getDouble(l.index(o, c, i));
                        }
                    }
                    mean = sum / m;
                    double sq = 0;
                    for (long o = 0; o < l.outer(); o++) {
                        for (long i = 0; i < l.inner(); i++) {
                            double d = x.getDouble(l.index(o, c, i)) - mean;
                            sq += d * d;
                        }
                    }
                    var = sq / m;
                    runningMean.setDouble(c, momentum * runningMean.getDouble(c) + (1 - momentum) * mean);
                    runningVar.setDouble(c, momentum * runningVar.getDouble(c) + (1 - momentum) * var);
                }
                double invStd = 1.0 / Math.sqrt(var + epsilon);
                savedMean.setDouble(c, mean);
                savedInvStd.setDouble(c, invStd);
                double s = scale.getDouble(c) * invStd;
                double b = bias.getDouble(c) - mean * s;
                for (long o = 0; o < l.outer(); o++) {
                    for (long i = 0; i < l.inner(); i++) {
                        long k = l.index(o, c, i);
                        y.setDouble(k, x.getDouble(k) * s + b);
                    }
                }
            }
            a.setOut("MeanOut", runningMean);
            a.setOut("VarianceOut", runningVar);
        }
    }

    /**
     * With xhat = (x - mean) * invStd over the m elements of a channel: dBias = sum(dY), dScale = sum(dY xhat),
     * and in training dX = Scale invStd / m * (m dY - dBias - xhat dScale) since mean and var depend on X;
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
            Layout l = Layout.of(x, channelsLast);
            Tensor dx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : null;
            Tensor dScale = a.hasOut("Scale@GRAD") ? a.outLike("Scale@GRAD", scale) : null;
            Tensor dBias = a.hasOut("Bias@GRAD") ? a.outLike("Bias@GRAD", scale) : null;
            long m = l.perChannel();
            for (long c = 0; c < l.channels(); c++) {
                double mu = mean.getDouble(c);
                double is = invStd.getDouble(c);
                double sumDy = 0;
                double sumDyXhat = 0;
                for (long o = 0; o < l.outer(); o++) {
                    for (long i = 0; i < l.inner(); i++) {
                        long k = l.index(o, c, i);
                        double g = dy.getDouble(k);
                        sumDy += g;
                        sumDyXhat += g * (x.getDouble(k) - mu) * is;
                    }
                }
                if (dBias != null) {
                    dBias.setDouble(c, sumDy);
                }
                if (dScale != null) {
                    dScale.setDouble(c, sumDyXhat);
                }
                if (dx == null) {
                    continue;
                }
                double k0 = scale.getDouble(c) * is;
                for (long o = 0; o < l.outer(); o++) {
                    for (long i = 0; i < l.inner(); i++) {
                        long k = l.index(o, c, i);
                        double g = dy.getDouble(k);
                        double v = isTest ? k0 * g
                                : k0 / m * (m * g - sumDy - (x.getDouble(k) - mu) * is * sumDyXhat);
                        dx.setDouble(k, v);
                    }
                }
            }
        }
    }
}
