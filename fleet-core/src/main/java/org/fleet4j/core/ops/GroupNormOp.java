package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * Paddle's {@code group_norm}: X [N, C, ...] (NCHW) split into {@code groups} groups of C / groups channels, each
 * (sample, group) normalised over its channels and pixels, then scaled and shifted per channel:
 * Y = Scale[c] (X - mean) / sqrt(var + epsilon) + Bias[c]. Mean and Variance [N, groups] are the statistics used
 * (the biased variance). Scale and Bias are optional, as in Paddle (then 1 and 0).
 */
@AutoService(OpLibrary.class)
public final class GroupNormOp implements OpLibrary {
    public static final String GROUP_NORM = "group_norm";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(GROUP_NORM)
                .in("X").optionalIn("Scale", "Bias")
                .out("Y", "Mean", "Variance")
                .attr("epsilon", AttrType.FLOAT, 1e-5f)
                .attr("groups", AttrType.INT, null)
                .attr("data_layout", AttrType.STRING, "NCHW")
                .shape(GroupNormOp::inferShape)
                .kernel(op -> new Forward(op.intAttr("groups"), op.floatAttr("epsilon")))
                .gradKernel(op -> new Grad(op.intAttr("groups")))
                .build());
    }

    private static void inferShape(InferContext ctx) {
        long[] x = ctx.shape("X");
        if (ctx.dtype("X") != DType.F32) {
            throw ctx.fail("X must be float32 (the CPU kernel is float32), is " + ctx.dtype("X").displayName());
        }
        if (!ctx.op().stringAttr("data_layout").equals("NCHW")) {
            throw ctx.fail("data_layout '" + ctx.op().stringAttr("data_layout") + "' is not supported; the CPU kernel "
                    + "takes NCHW");
        }
        if (x.length < 2 || x[1] < 1) {
            throw ctx.fail("X must be [N, C, ...] with known channels, is " + Shapes.str(x));
        }
        int groups = ctx.op().intAttr("groups");
        if (groups < 1 || x[1] % groups != 0) {
            throw ctx.fail("groups " + groups + " does not divide X's " + x[1] + " channels; pick a divisor of " + x[1]);
        }
        for (String slot : new String[]{"Scale", "Bias"}) {
            if (ctx.has(slot) && (ctx.shape(slot).length != 1 || ctx.shape(slot)[0] != x[1]
                    || ctx.dtype(slot) != DType.F32)) {
                throw ctx.fail(slot + " must be float32 [" + x[1] + "] (one value per channel of X), is "
                        + ctx.dtype(slot).displayName() + Shapes.str(ctx.shape(slot)));
            }
        }
        ctx.set("Y", DType.F32, x);
        ctx.set("Mean", DType.F32, x[0], groups);
        ctx.set("Variance", DType.F32, x[0], groups);
    }

    /** X's sizes: samples, channels, pixels per channel. */
    private record Sizes(int n, int c, long pixels, int groups) {
        static Sizes of(Tensor x, int groups) {
            long[] s = x.shape();
            return new Sizes((int) s[0], (int) s[1], x.numel() / (s[0] * s[1]), groups);
        }

        int perGroup() {
            return c / groups;
        }

        /** One row per (sample, group), each group's elements contiguous. */
        ChannelLayout byGroup() {
            return new ChannelLayout(1, (long) n * groups, perGroup() * pixels);
        }

        /** One row per (sample, channel). */
        ChannelLayout byChannel() {
            return new ChannelLayout(1, (long) n * c, pixels);
        }

        long count() {
            return perGroup() * pixels;
        }
    }

    private static float scale(Tensor scale, int c) {
        return scale == null ? 1f : scale.getFloat(c);
    }

    private record Forward(int groups, float epsilon) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Sizes s = Sizes.of(x, groups);
            Tensor scale = a.hasIn("Scale") ? a.in("Scale") : null;
            Tensor bias = a.hasIn("Bias") ? a.in("Bias") : null;
            int rows = s.n() * groups;
            double[] mean = new double[rows];
            double[] var = new double[rows];
            ChannelLayout byGroup = s.byGroup();
            byGroup.sums(x.segment(), mean);
            for (int r = 0; r < rows; r++) {
                mean[r] /= s.count();
            }
            byGroup.centredSquares(x.segment(), mean, var);
            Tensor meanOut = a.out("Mean", DType.F32, s.n(), groups);
            Tensor varOut = a.out("Variance", DType.F32, s.n(), groups);
            float[] mul = new float[s.n() * s.c()];
            float[] add = new float[mul.length];
            for (int r = 0; r < rows; r++) {
                var[r] /= s.count();
                meanOut.setFloat(r, (float) mean[r]);
                varOut.setFloat(r, (float) var[r]);
                double invStd = 1.0 / Math.sqrt(var[r] + epsilon);
                int n = r / groups;
                for (int c = (r % groups) * s.perGroup(); c < (r % groups + 1) * s.perGroup(); c++) {
                    double k = scale(scale, c) * invStd;
                    mul[n * s.c() + c] = (float) k;
                    add[n * s.c() + c] = (float) ((bias == null ? 0 : bias.getFloat(c)) - mean[r] * k);
                }
            }
            s.byChannel().affine(x.segment(), mul, add, a.outLike("Y", x).segment());
        }
    }

    /**
     * With xhat = (X - mean) invStd and dxhat = Scale dY over the m elements of a (sample, group):
     * dX = invStd (dxhat - sum(dxhat) / m - xhat sum(dxhat xhat) / m); dScale[c] = sum(dY xhat), dBias[c] = sum(dY)
     * over samples and pixels. Both come from per-(sample, channel) sums of dY and of dY (X - mean).
     */
    private record Grad(int groups) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor dy = a.in("Y@GRAD");
            Sizes s = Sizes.of(x, groups);
            Tensor scale = a.hasIn("Scale") ? a.in("Scale") : null;
            Tensor mean = a.in("Mean");
            Tensor var = a.in("Variance");
            float epsilon = a.op().floatAttr("epsilon");
            int planes = s.n() * s.c();
            double[] centre = new double[planes];
            double[] invStd = new double[s.n() * groups];
            for (int r = 0; r < invStd.length; r++) {
                invStd[r] = 1.0 / Math.sqrt(var.getFloat(r) + epsilon);
            }
            for (int p = 0; p < planes; p++) {
                centre[p] = mean.getFloat(row(s, p));
            }
            double[] sumDy = new double[planes];
            double[] sumDyCentred = new double[planes];
            ChannelLayout byChannel = s.byChannel();
            byChannel.sums(dy.segment(), sumDy);
            byChannel.centredProducts(dy.segment(), x.segment(), centre, sumDyCentred);
            if (a.hasOut("Scale@GRAD")) {
                Tensor dScale = a.outLike("Scale@GRAD", scale);
                for (int c = 0; c < s.c(); c++) {
                    double sum = 0;
                    for (int n = 0; n < s.n(); n++) {
                        int p = n * s.c() + c;
                        sum += sumDyCentred[p] * invStd[row(s, p)];
                    }
                    dScale.setFloat(c, (float) sum);
                }
            }
            if (a.hasOut("Bias@GRAD")) {
                Tensor dBias = a.outLike("Bias@GRAD", a.in("Bias"));
                for (int c = 0; c < s.c(); c++) {
                    double sum = 0;
                    for (int n = 0; n < s.n(); n++) {
                        sum += sumDy[n * s.c() + c];
                    }
                    dBias.setFloat(c, (float) sum);
                }
            }
            if (!a.hasOut("X@GRAD")) {
                return;
            }
            // per (sample, group): sum(dxhat) and sum(dxhat (X - mean)) from the channels' sums
            double[] groupDy = new double[invStd.length];
            double[] groupDyCentred = new double[invStd.length];
            for (int p = 0; p < planes; p++) {
                float gamma = scale(scale, p % s.c());
                groupDy[row(s, p)] += gamma * sumDy[p];
                groupDyCentred[row(s, p)] += gamma * sumDyCentred[p];
            }
            float[] mulDy = new float[planes];
            float[] mulX = new float[planes];
            float[] add = new float[planes];
            double m = s.count();
            for (int p = 0; p < planes; p++) {
                int r = row(s, p);
                double is = invStd[r];
                double slope = -is * is * is * groupDyCentred[r] / m;
                mulDy[p] = (float) (is * scale(scale, p % s.c()));
                mulX[p] = (float) slope;
                add[p] = (float) (-is * groupDy[r] / m - slope * centre[p]);
            }
            byChannel.combine(dy.segment(), mulDy, x.segment(), mulX, add, a.outLike("X@GRAD", x).segment());
        }

        /** The (sample, group) row of a (sample, channel) plane. */
        private static int row(Sizes s, int plane) {
            return plane / s.c() * s.groups() + plane % s.c() / s.perGroup();
        }
    }
}
