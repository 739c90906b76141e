package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpRegistry;
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
 * X is [N, C] or NCHW (channel at dimension 1), as batch_norm's default layout.
 */
@AutoService(OpLibrary.class)
public final class SyncBatchNormOps implements OpLibrary {
    public static final String STATS = "sync_bn_stats";
    public static final String APPLY = "sync_bn_apply";
    public static final String GRAD_STATS = "sync_bn_grad_stats";
    public static final String GRAD_APPLY = "sync_bn_grad_apply";

    /** X viewed as [outer, C, inner]. */
    private record Layout(long outer, long channels, long inner) {
        static Layout of(Tensor x) {
            long[] s = x.shape();
            if (s.length != 2 && s.length != 4) {
                throw new IrException("sync batch norm: X must be [N, C] or NCHW, is " + x.describe());
            }
            return new Layout(s[0], s[1], x.numel() / (s[0] * s[1]));
        }

        long index(long o, long c, long i) {
            return (o * channels + c) * inner + i;
        }
    }
    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(STATS).in("X").out("Stats")
                .shape(ctx -> ctx.set("Stats", DType.F64, 3 * channels(ctx.shape("X"))))
                .kernel(op -> a -> {
                    Tensor x = a.in("X");
                    Layout l = Layout.of(x);
                    Tensor st = a.out("Stats", DType.F64, 3 * l.channels());
                    for (long c = 0; c < l.channels(); c++) {
                        double sum = 0;
                        double sq = 0;
                        for (long o = 0; o < l.outer(); o++) {
                            for (long i = 0; i < l.inner(); i++) {
                                double v = x.getDouble(l.index(o, c, i));
                                sum += v;
                                sq += v * v;
                            }
                        }
                        st.setDouble(c, sum);
                        st.setDouble(l.channels() + c, sq);
                        st.setDouble(2 * l.channels() + c, l.outer() * l.inner());
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
                        Tensor runningMean = a.in("Mean");
                        Tensor runningVar = a.in("Variance");
                        Layout l = Layout.of(x);
                        Tensor y = a.outLike("Y", x);
                        Tensor savedMean = a.out("SavedMean", x.dtype(), l.channels());
                        Tensor savedInvStd = a.out("SavedVariance", x.dtype(), l.channels());
                        for (long c = 0; c < l.channels(); c++) {
                            double n = st.getDouble(2 * l.channels() + c);
                            double mean = st.getDouble(c) / n;
                            double var = Math.max(st.getDouble(l.channels() + c) / n - mean * mean, 0);
                            runningMean.setDouble(c, momentum * runningMean.getDouble(c) + (1 - momentum) * mean);
                            runningVar.setDouble(c, momentum * runningVar.getDouble(c) + (1 - momentum) * var);
                            double invStd = 1.0 / Math.sqrt(var + eps);
                            savedMean.setDouble(c, mean);
                            savedInvStd.setDouble(c, invStd);
                            double s = a.in("Scale").getDouble(c) * invStd;
                            double b = a.in("Bias").getDouble(c) - mean * s;
                            for (long o = 0; o < l.outer(); o++) {
                                for (long i = 0; i < l.inner(); i++) {
                                    long k = l.index(o, c, i);
                                    y.setDouble(k, x.getDouble(k) * s + b);
                                }
                            }
                        }
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
                    Layout l = Layout.of(x);
                    Tensor gs = a.out("GradStats", DType.F64, 2 * l.channels());
                    for (long c = 0; c < l.channels(); c++) {
                        double mu = a.in("SavedMean").getDouble(c);
                        double is = a.in("SavedVariance").getDouble(c);
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
                        gs.setDouble(c, sumDy);
                        gs.setDouble(l.channels() + c, sumDyXhat);
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
                    Layout l = Layout.of(x);
                    Tensor dx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : null;
                    Tensor dScale = a.hasOut("Scale@GRAD") ? a.outLike("Scale@GRAD", scale) : null;
                    Tensor dBias = a.hasOut("Bias@GRAD") ? a.outLike("Bias@GRAD", scale) : null;
                    for (long c = 0; c < l.channels(); c++) {
                        double mu = a.in("SavedMean").getDouble(c);
                        double is = a.in("SavedVariance").getDouble(c);
                        double n = st.getDouble(2 * l.channels() + c);
                        double meanDy = gs.getDouble(c) / n;
                        double meanDyXhat = gs.getDouble(l.channels() + c) / n;
                        double localDy = 0;
                        double localDyXhat = 0;
                        double k0 = scale.getDouble(c) * is;
                        for (long o = 0; o < l.outer(); o++) {
                            for (long i = 0; i < l.inner(); i++) {
                                long k = l.index(o, c, i);
                                double g = dy.getDouble(k);
                                double xhat = (x.getDouble(k) - mu) * is;
                                localDy += g;
                                localDyXhat += g * xhat;
                                if (dx != null) {
                                    dx.setDouble(k, k0 * (g - meanDy - xhat * meanDyXhat));
                                }
                            }
                        }
                        if (dScale != null) {
                            dScale.setDouble(c, localDyXhat);
                        }
                        if (dBias != null) {
                            dBias.setDouble(c, localDy);
                        }
                    }
                }).build());
        return specs;
    }

    private static long channels(long[] x) {
        if (x.length != 2 && x.length != 4 || x[1] < 0) {
            throw new IrException("sync batch norm: X must be [N, C] or NCHW with a known C, is " + java.util.Arrays.toString(x));
        }
        return x[1];
    }
}
