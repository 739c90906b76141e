package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * layer_norm (Paddle's op): X seen as [left, right] with right the product of the dims from begin_norm_axis on; each row
 * is normalised by its own mean and (biased) variance, then scaled and shifted elementwise by Scale and Bias (each of
 * right elements, optional). Mean and Variance ([left]) are kept for the gradient.
 */
@AutoService(OpLibrary.class)
public final class LayerNormOp implements OpLibrary {
    public static final String LAYER_NORM = "layer_norm";

    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;
    private static final int L = S.length();
    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(LAYER_NORM)
                .in("X").optionalIn("Scale", "Bias").out("Y", "Mean", "Variance")
                .attr("begin_norm_axis", AttrType.INT, 1)
                .attr("epsilon", AttrType.FLOAT, 1e-5f)
                .shape(LayerNormOp::inferShape)
                .kernel(op -> new Forward(op.intAttr("begin_norm_axis"), op.floatAttr("epsilon")))
                .gradKernel(op -> new Backward(op.intAttr("begin_norm_axis"), op.floatAttr("epsilon")))
                .build());
    }

    private static void inferShape(InferContext ctx) {
        long[] x = ctx.shape("X");
        int axis = ctx.op().intAttr("begin_norm_axis");
        if (ctx.dtype("X") != DType.F32) {
            throw ctx.fail("layer_norm on CPU takes float32 X, not " + ctx.dtype("X").displayName());
        }
        if (axis < 1 || axis >= x.length) {
            throw ctx.fail("begin_norm_axis " + axis + " must be in [1, " + (x.length - 1) + "] for X of rank " + x.length
                    + " (it is the first normalised dimension: rank - 1 normalises the last one)");
        }
        long[] normalised = Arrays.copyOfRange(x, axis, x.length);
        if (Shapes.knownNumel(normalised) < 0) {
            throw ctx.fail("the normalised dimensions " + Shapes.str(normalised) + " of X must be known when the"
                    + " program is built");
        }
        long right = Shapes.numel(normalised);
        for (String slot : List.of("Scale", "Bias")) {
            if (ctx.has(slot)) {
                long[] s = ctx.shape(slot);
                if (Shapes.knownNumel(s) != right || (s.length != 1 && !Arrays.equals(s, normalised))) {
                    throw ctx.fail(slot + " " + Shapes.str(s) + " must be [" + right + "] or " + Shapes.str(normalised)
                            + ", the normalised dimensions of X from begin_norm_axis " + axis);
                }
                if (ctx.dtype(slot) != DType.F32) {
                    throw ctx.fail(slot + " must be float32 like X, is " + ctx.dtype(slot).displayName());
                }
            }
        }
        long left = Shapes.knownNumel(Arrays.copyOfRange(x, 0, axis));
        ctx.set("Y", DType.F32, x);
        ctx.set("Mean", DType.F32, left);
        ctx.set("Variance", DType.F32, left);
    }

    private static FloatVector load(MemorySegment s, long i) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE);
    }

    private static FloatVector load(MemorySegment s, long i, VectorMask<Float> m) {
        return FloatVector.fromMemorySegment(S, s, i * Float.BYTES, NATIVE, m);
    }

    /** Rows and row length of X for begin_norm_axis. */
    private static long[] rowsAndWidth(Tensor x, int axis) {
        long right = Shapes.numel(Arrays.copyOfRange(x.shape(), axis, x.rank()));
        return new long[]{x.numel() / right, right};
    }

    /**
     * Y = (X - mean) / sqrt(var + eps) * Scale + Bias, row by row. Full vectors in the loops and one masked vector
     * for a row's tail (a mask made per step would cost more than the arithmetic).
     */
    record Forward(int axis, float epsilon) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            long[] rw = rowsAndWidth(x, axis);
            long rows = rw[0];
            int n = (int) rw[1];
            Tensor y = a.outLike("Y", x);
            MemorySegment mean = a.out("Mean", DType.F32, rows).segment();
            MemorySegment variance = a.out("Variance", DType.F32, rows).segment();
            MemorySegment scale = a.hasIn("Scale") ? a.in("Scale").segment() : null;
            MemorySegment bias = a.hasIn("Bias") ? a.in("Bias").segment() : null;
            MemorySegment xs = x.segment();
            MemorySegment ys = y.segment();
            int bound = S.loopBound(n);
            VectorMask<Float> tail = S.indexInRange(bound, n);
            for (long r = 0; r < rows; r++) {
                long base = r * n;
                FloatVector sum = FloatVector.zero(S);
                for (int j = 0; j < bound; j += L) {
                    sum = sum.add(load(xs, base + j));
                }
                if (bound < n) {
                    sum = sum.add(load(xs, base + bound, tail));
                }
                float mu = sum.reduceLanes(VectorOperators.ADD) / n;
                FloatVector sq = FloatVector.zero(S);
                for (int j = 0; j < bound; j += L) {
                    FloatVector d = load(xs, base + j).sub(mu);
                    sq = sq.add(d.mul(d));
                }
                if (bound < n) {
                    FloatVector dt = load(xs, base + bound, tail).sub(mu);
                    sq = sq.add(dt.mul(dt), tail);
                }
                float var = sq.reduceLanes(VectorOperators.ADD) / n;
                float rstd = (float) (1 / Math.sqrt(var + epsilon));
                F32.set(mean, r, mu);
                F32.set(variance, r, var);
                for (int j = 0; j < bound; j += L) {
                    affine(load(xs, base + j), mu, rstd, scale, bias, j, null)
                            .intoMemorySegment(ys, (base + j) * Float.BYTES, NATIVE);
                }
                if (bound < n) {
                    affine(load(xs, base + bound, tail), mu, rstd, scale, bias, bound, tail)
                            .intoMemorySegment(ys, (base + bound) * Float.BYTES, NATIVE, tail);
                }
            }
        }

        private static FloatVector affine(FloatVector x, float mu, float rstd, MemorySegment scale, MemorySegment bias,
                                          int j, VectorMask<Float> m) {
            FloatVector v = x.sub(mu).mul(rstd);
            if (scale != null) {
                v = v.mul(m == null ? load(scale, j) : load(scale, j, m));
            }
            if (bias != null) {
                v = v.add(m == null ? load(bias, j) : load(bias, j, m));
            }
            return v;
        }
    }

    /**
     * With xhat = (x - mean) rstd and dxhat = dy Scale, per row: dX = rstd (dxhat - mean(dxhat) - xhat
     * mean(dxhat xhat)); dScale sums dy xhat and dBias sums dy over the rows, in scratch rows of whole vectors that
     * live with the kernel.
     */
    static final class Backward implements Kernel {
        private final int axis;
        private final float epsilon;
        private float[] sumScale = new float[0];
        private float[] sumBias = new float[0];

        Backward(int axis, float epsilon) {
            this.axis = axis;
            this.epsilon = epsilon;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            long[] rw = rowsAndWidth(x, axis);
            long rows = rw[0];
            int n = (int) rw[1];
            MemorySegment xs = x.segment();
            MemorySegment dy = a.in("Y@GRAD").segment();
            MemorySegment mean = a.in("Mean").segment();
            MemorySegment variance = a.in("Variance").segment();
            MemorySegment scale = a.hasIn("Scale") ? a.in("Scale").segment() : null;
            MemorySegment dx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x).segment() : null;
            Tensor dScale = a.hasOut("Scale@GRAD") ? a.outLike("Scale@GRAD", a.in("Scale")) : null;
            Tensor dBias = a.hasOut("Bias@GRAD") ? a.outLike("Bias@GRAD", a.in("Bias")) : null;
            int padded = S.loopBound(n + L - 1);
            if (sumScale.length != padded) {
                sumScale = new float[padded];
                sumBias = new float[padded];
            }
            java.util.Arrays.fill(sumScale, 0f);
            java.util.Arrays.fill(sumBias, 0f);
            int bound = S.loopBound(n);
            VectorMask<Float> tail = S.indexInRange(bound, n);
            for (long r = 0; r < rows; r++) {
                long base = r * n;
                float mu = F32.get(mean, r);
                float rstd = (float) (1 / Math.sqrt(F32.get(variance, r) + epsilon));
                FloatVector sumD = FloatVector.zero(S);
                FloatVector sumDX = FloatVector.zero(S);
                for (int j = 0; j < padded; j += L) {
                    VectorMask<Float> m = j < bound ? null : tail;
                    FloatVector g = m == null ? load(dy, base + j) : load(dy, base + j, m);
                    FloatVector xhat = (m == null ? load(xs, base + j) : load(xs, base + j, m)).sub(mu).mul(rstd);
                    if (m != null) {
                        xhat = FloatVector.zero(S).blend(xhat, m);
                    }
                    FloatVector.fromArray(S, sumScale, j).add(g.mul(xhat)).intoArray(sumScale, j);
                    FloatVector.fromArray(S, sumBias, j).add(g).intoArray(sumBias, j);
                    FloatVector d = scale == null ? g : g.mul(m == null ? load(scale, j) : load(scale, j, m));
                    sumD = sumD.add(d);
                    sumDX = sumDX.add(d.mul(xhat));
                }
                if (dx == null) {
                    continue;
                }
                float meanD = sumD.reduceLanes(VectorOperators.ADD) / n;
                float meanDX = sumDX.reduceLanes(VectorOperators.ADD) / n;
                for (int j = 0; j < bound; j += L) {
                    FloatVector g = load(dy, base + j);
                    FloatVector xhat = load(xs, base + j).sub(mu).mul(rstd);
                    FloatVector d = scale == null ? g : g.mul(load(scale, j));
                    d.sub(meanD).sub(xhat.mul(meanDX)).mul(rstd).intoMemorySegment(dx, (base + j) * Float.BYTES, NATIVE);
                }
                if (bound < n) {
                    FloatVector g = load(dy, base + bound, tail);
                    FloatVector xhat = load(xs, base + bound, tail).sub(mu).mul(rstd);
                    FloatVector d = scale == null ? g : g.mul(load(scale, bound, tail));
                    d.sub(meanD).sub(xhat.mul(meanDX)).mul(rstd)
                            .intoMemorySegment(dx, (base + bound) * Float.BYTES, NATIVE, tail);
                }
            }
            for (int j = 0; j < n; j++) {
                if (dScale != null) {
                    dScale.setFloat(j, sumScale[j]);
                }
                if (dBias != null) {
                    dBias.setFloat(j, sumBias[j]);
                }
            }
        }
    }
}
