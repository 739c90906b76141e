package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.BatchNormalisation;
import org.fleet4j.core.ops.ChannelLayout;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * The pieces of a batch norm whose statistics span every rank; a {@code c_allreduce} (sum) of the float64 partial
 * sums runs between each pair:
 * <ul>
 * <li>{@code sync_bn_stats}: X -> Stats [3 C] = per channel sum, sum of squares, count (this rank);</li>
 * <li>{@code sync_bn_apply}: normalises X with the global mean and biased variance from the reduced Stats, updates the
 * running statistics as batch_norm does; SavedMean and SavedVariance hold the mean and 1 / std;</li>
 * <li>{@code sync_bn_grad_stats}: X, dY -> GradStats [2 C] = per channel sum of dY and of dY xhat (this rank);</li>
 * <li>{@code sync_bn_grad_apply}: dX = Scale invStd (dY - sum(dY) / N - xhat sum(dY xhat) / N) over the global sums
 * and count; dScale and dBias are this rank's sums, which the gradient allreduce then combines like every other.</li>
 * </ul>
 * X is [N, C] or NCHW (channel at dimension 1, statistics over N, H and W), as batch_norm's default layout; the loops
 * and the arithmetic are batch_norm's ({@link ChannelLayout}, {@link BatchNormalisation}).
 */
@AutoService(OpLibrary.class)
public final class SyncBatchNormOps implements OpLibrary {
    public static final String STATS = "sync_bn_stats";
    public static final String APPLY = "sync_bn_apply";
    public static final String GRAD_STATS = "sync_bn_grad_stats";
    public static final String GRAD_APPLY = "sync_bn_grad_apply";

    /** X as the sync ops see it: [N, C] or NCHW, channels at dimension 1. */
    private static ChannelLayout layout(Tensor x) {
        if (x.rank() != 2 && x.rank() != 4) {
            throw new IrException("sync batch norm: X must be [N, C] or NCHW, is " + x.describe());
        }
        return ChannelLayout.of(x, false);
    }

    private static double[] values(Tensor t, long from, int n) {
        double[] v = new double[n];
        for (int k = 0; k < n; k++) {
            v[k] = t.getDouble(from + k);
        }
        return v;
    }
    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(STATS).in("X").out("Stats")
                .shape(ctx -> ctx.set("Stats", DType.F64, 3 * channels(ctx.shape("X"))))
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    ChannelLayout l = layout(x);
                    int c = (int) l.channels();
                    Tensor st = a.out("Stats", DType.F64, 3L * c);
                    double[] sum = new double[c];
                    double[] sq = new double[c];
                    l.sums(x.segment(), sum);
                    l.centredSquares(x.segment(), new double[c], sq);
                    for (int k = 0; k < c; k++) {
                        st.setDouble(k, sum[k]);
                        st.setDouble(c + k, sq[k]);
                        st.setDouble(2L * c + k, l.perChannel());
                    }
                }).build());
        specs.add(OpSpec.builder(APPLY)
                .in("X", "Scale", "Bias", "Mean", "Variance", "Stats")
                .out("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance")
                .attr("momentum", AttrType.FLOAT, 0.9f)
                .attr("epsilon", AttrType.FLOAT, 1e-5f)
                .shape(ctx -> {
                    ctx.set("Y", ctx.dtype("X"), ctx.shape("X"));
                    for (String s : new String[]{"MeanOut", "VarianceOut", "SavedMean", "SavedVariance"}) {
                        ctx.set(s, ctx.dtype("Mean"), ctx.shape("Mean"));
                    }
                })
                .kernel(op -> {
                    float momentum = op.floatAttr("momentum");
                    float eps = op.floatAttr("epsilon");
                    return a -> {
                        Tensor x = a.in("X");
                        Tensor st = a.in("Stats");
                        ChannelLayout l = layout(x);
                        int c = (int) l.channels();
                        double[] mean = new double[c];
                        double[] var = new double[c];
                        for (int k = 0; k < c; k++) {
                            double n = st.getDouble(2L * c + k);
                            mean[k] = st.getDouble(k) / n;
                            var[k] = Math.max(st.getDouble(c + k) / n - mean[k] * mean[k], 0);
                        }
                        Tensor runningMean = a.in("Mean");
                        Tensor runningVar = a.in("Variance");
                        BatchNormalisation.updateRunning(runningMean, runningVar, mean, var, momentum);
                        BatchNormalisation.normalise(l, x, a.in("Scale"), a.in("Bias"), mean, var, eps, a.outLike("Y", x),
                                a.out("SavedMean", x.dtype(), c), a.out("SavedVariance", x.dtype(), c));
                        a.setOut("MeanOut", runningMean);
                        a.setOut("VarianceOut", runningVar);
                    };
                }).build());
        specs.add(OpSpec.builder(GRAD_STATS)
                .in("X", "SavedMean", "SavedVariance", "Y@GRAD").out("GradStats")
                .shape(ctx -> ctx.set("GradStats", DType.F64, 2 * channels(ctx.shape("X"))))
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor dy = a.in("Y@GRAD");
                    ChannelLayout l = layout(x);
                    int c = (int) l.channels();
                    Tensor gs = a.out("GradStats", DType.F64, 2L * c);
                    double[][] local = localGradSums(l, x, dy, a.in("SavedMean"), a.in("SavedVariance"));
                    for (int k = 0; k < c; k++) {
                        gs.setDouble(k, local[0][k]);
                        gs.setDouble(c + k, local[1][k]);
                    }
                }).build());
        specs.add(OpSpec.builder(GRAD_APPLY)
                .in("X", "Scale", "SavedMean", "SavedVariance", "Y@GRAD", "Stats", "GradStats")
                .optionalOut("X@GRAD", "Scale@GRAD", "Bias@GRAD")
                .shape(ctx -> {
                    ctx.set("X@GRAD", ctx.dtype("X"), ctx.shape("X"));
                    ctx.set("Scale@GRAD", ctx.dtype("Scale"), ctx.shape("Scale"));
                    ctx.set("Bias@GRAD", ctx.dtype("Scale"), ctx.shape("Scale"));
                })
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Tensor scale = a.in("Scale");
                    Tensor dy = a.in("Y@GRAD");
                    Tensor st = a.in("Stats");
                    Tensor gs = a.in("GradStats");
                    Tensor mean = a.in("SavedMean");
                    Tensor invStd = a.in("SavedVariance");
                    ChannelLayout l = layout(x);
                    int c = (int) l.channels();
                    if (a.hasOut("X@GRAD")) {
                        double[] sumDyCentred = values(gs, c, c);
                        for (int k = 0; k < c; k++) {
                            sumDyCentred[k] /= invStd.getFloat(k);
                        }
                        BatchNormalisation.inputGradient(l, x, dy, scale, mean, invStd, values(gs, 0, c), sumDyCentred,
                                st.getDouble(2L * c), a.outLike("X@GRAD", x));
                    }
                    if (a.hasOut("Scale@GRAD") || a.hasOut("Bias@GRAD")) {
                        double[][] local = localGradSums(l, x, dy, mean, invStd);
                        if (a.hasOut("Scale@GRAD")) {
                            Tensor dScale = a.outLike("Scale@GRAD", scale);
                            for (int k = 0; k < c; k++) {
                                dScale.setDouble(k, local[1][k]);
                            }
                        }
                        if (a.hasOut("Bias@GRAD")) {
                            Tensor dBias = a.outLike("Bias@GRAD", scale);
                            for (int k = 0; k < c; k++) {
                                dBias.setDouble(k, local[0][k]);
                            }
                        }
                    }
                }).build());
        return specs;
    }

    /** This rank's per-channel sums of dY and of dY xhat. */
    private static double[][] localGradSums(ChannelLayout l, Tensor x, Tensor dy, Tensor mean, Tensor invStd) {
        int c = (int) l.channels();
        double[] sumDy = new double[c];
        double[] sumDyXhat = new double[c];
        l.sums(dy.segment(), sumDy);
        l.centredProducts(dy.segment(), x.segment(), values(mean, 0, c), sumDyXhat);
        for (int k = 0; k < c; k++) {
            sumDyXhat[k] *= invStd.getFloat(k);
        }
        return new double[][]{sumDy, sumDyXhat};
    }

    private static long channels(long[] x) {
        if (x.length != 2 && x.length != 4 || x[1] < 0) {
            throw new IrException("sync batch norm: X must be [N, C] or NCHW with a known C, is " + java.util.Arrays.toString(x));
        }
        return x[1];
    }
}
