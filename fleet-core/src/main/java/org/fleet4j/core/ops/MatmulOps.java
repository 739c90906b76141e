package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * matmul: Out = alpha * op(X) op(Y) through the chosen BLAS, op(.) the matrix or its transpose (transpose_X,
 * transpose_Y) over the last two dims. The dims before them are batch dims, broadcast numpy-style ([B, H, T, D] x
 * [B, H, D, T], [B, T, D] x [D, E], [H, T, D] x [B, H, D, T]); the gradient of an operand that was broadcast sums over
 * the batches that shared it. X with batch dims times a matrix Y, untransposed, is one GEMM with X's batches as rows
 * (the fc case). bfloat16 X and Y (AMP) are widened to float32 for the GEMM and Out is bfloat16 ({@link Bf16Widening}).
 */
@AutoService(OpLibrary.class)
public final class MatmulOps implements OpLibrary {
    public static final String MATMUL = "matmul";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(MATMUL)
                .in("X", "Y").out("Out")
                .attr("transpose_X", AttrType.BOOL, false)
                .attr("transpose_Y", AttrType.BOOL, false)
                .attr("alpha", AttrType.FLOAT, 1.0f)
                .shape(ctx -> {
                    long[] x = ctx.shape("X");
                    long[] y = ctx.shape("Y");
                    boolean tx = ctx.op().boolAttr("transpose_X");
                    boolean ty = ctx.op().boolAttr("transpose_Y");
                    DType dtype = ctx.dtype("X");
                    if ((dtype != DType.F32 && dtype != DType.BF16) || ctx.dtype("Y") != dtype) {
                        throw ctx.fail("matmul on CPU takes float32 X and Y, or bfloat16 X and Y (under AMP)");
                    }
                    if (x.length < 2 || y.length < 2) {
                        throw ctx.fail("X and Y must have rank >= 2 (a vector is a [1, n] or [n, 1] matrix: unsqueeze it)");
                    }
                    long k1 = tx ? x[x.length - 2] : x[x.length - 1];
                    long k2 = ty ? y[y.length - 1] : y[y.length - 2];
                    if (k1 >= 0 && k2 >= 0 && k1 != k2) {
                        throw ctx.fail("inner dimensions differ: " + k1 + " (X" + (tx ? "^T" : "") + ") vs " + k2
                                + " (Y" + (ty ? "^T" : "") + "); transpose one operand or fix its shape");
                    }
                    long[] xb = Arrays.copyOf(x, x.length - 2);
                    long[] yb = Arrays.copyOf(y, y.length - 2);
                    long[] batch = Shapes.broadcast(xb, yb);
                    if (batch == null) {
                        throw ctx.fail("batch dimensions " + Shapes.str(xb) + " of X and " + Shapes.str(yb) + " of Y do"
                                + " not broadcast (each pair of trailing batch dims must be equal or 1)");
                    }
                    long[] out = Arrays.copyOf(batch, batch.length + 2);
                    out[batch.length] = tx ? x[x.length - 1] : x[x.length - 2];
                    out[batch.length + 1] = ty ? y[y.length - 2] : y[y.length - 1];
                    ctx.set("Out", dtype, out);
                })
                .kernel(Bf16Widening.of(op -> new Forward(op.boolAttr("transpose_X"), op.boolAttr("transpose_Y"),
                        op.floatAttr("alpha"), Blas.get(), new Layout())))
                .gradKernel(Bf16Widening.of(op -> new Backward(op.boolAttr("transpose_X"), op.boolAttr("transpose_Y"),
                        op.floatAttr("alpha"), Blas.get(), new Layout())))
                .build());
    }

    /**
     * The GEMMs of one pair of shapes, cached while they stay the same: per output batch, the offsets of its X and Y
     * matrices (a broadcast operand's offset repeats), and whether that batch is the first to use them (where a
     * gradient is written rather than added to).
     */
    static final class Layout {
        private long[] xShape;
        private long[] yShape;
        long[] outShape;
        /** Y is a matrix and X is not transposed: X's batch dims are flattened into the rows of one GEMM. */
        boolean flat;
        int m;
        int k;
        int n;
        int xRows;
        int xCols;
        int yRows;
        int yCols;
        long[] xOffset;
        long[] yOffset;
        boolean[] xFirst;
        boolean[] yFirst;

        void update(long[] x, long[] y, boolean tx, boolean ty) {
            if (Arrays.equals(x, xShape) && Arrays.equals(y, yShape)) {
                return;
            }
            xCols = (int) x[x.length - 1];
            yRows = (int) y[y.length - 2];
            yCols = (int) y[y.length - 1];
            flat = y.length == 2 && !tx;
            xRows = (int) (flat ? Shapes.numel(x) / xCols : x[x.length - 2]);
            m = tx ? xCols : xRows;
            k = tx ? xRows : xCols;
            n = ty ? yRows : yCols;
            if (k != (ty ? yCols : yRows)) {
                throw new IllegalArgumentException("matmul: inner dimensions of X " + Shapes.str(x) + " and Y "
                        + Shapes.str(y) + " differ");
            }
            long[] xb = flat ? new long[0] : Arrays.copyOf(x, x.length - 2);
            long[] yb = Arrays.copyOf(y, y.length - 2);
            long[] batch = Shapes.broadcast(xb, yb);
            if (batch == null) {
                throw new IllegalArgumentException("matmul: batch dimensions of X " + Shapes.str(x) + " and Y "
                        + Shapes.str(y) + " do not broadcast");
            }
            long[] out = flat ? x.clone() : Arrays.copyOf(batch, batch.length + 2);
            out[out.length - 2] = flat ? x[x.length - 2] : m;
            out[out.length - 1] = n;
            int batches = (int) Shapes.numel(batch);
            int[] xMap = batchMap(batch, xb);
            int[] yMap = batchMap(batch, yb);
            xOffset = new long[batches];
            yOffset = new long[batches];
            xFirst = new boolean[batches];
            yFirst = new boolean[batches];
            boolean[] xSeen = new boolean[(int) Shapes.numel(xb)];
            boolean[] ySeen = new boolean[(int) Shapes.numel(yb)];
            for (int b = 0; b < batches; b++) {
                xOffset[b] = (long) xMap[b] * xRows * xCols;
                yOffset[b] = (long) yMap[b] * yRows * yCols;
                xFirst[b] = !xSeen[xMap[b]];
                yFirst[b] = !ySeen[yMap[b]];
                xSeen[xMap[b]] = true;
                ySeen[yMap[b]] = true;
            }
            outShape = out;
            xShape = x;
            yShape = y;
        }

        /** For every batch of the broadcast batch shape, the index of the operand's batch it reads. */
        private static int[] batchMap(long[] batch, long[] own) {
            if (batch.length == 0) {
                return new int[]{0};
            }
            return Broadcast.indexMap(batch, Broadcast.strides(own, batch));
        }
    }

    /** Out = alpha op(X) op(Y), one GEMM per output batch. */
    record Forward(boolean tx, boolean ty, float alpha, Gemm gemm, Layout layout) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            Layout d = layout;
            d.update(x.shape(), y.shape(), tx, ty);
            Tensor out = a.out("Out", DType.F32, d.outShape);
            MemorySegment xm = x.segment();
            MemorySegment ym = y.segment();
            MemorySegment om = out.segment();
            long outStride = (long) d.m * d.n;
            for (int b = 0; b < d.xOffset.length; b++) {
                gemm.sgemm(tx, ty, d.m, d.n, d.k, alpha, xm, d.xOffset[b], d.xCols, ym, d.yOffset[b], d.yCols,
                        0f, om, b * outStride, d.n);
            }
        }
    }

    /**
     * dX and dY of Out = alpha op(X) op(Y), each the product of dOut with the other operand, batch by batch; a batch
     * of an operand shared by several output batches (broadcast) gets the sum of their products.
     */
    record Backward(boolean tx, boolean ty, float alpha, Gemm gemm, Layout layout) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            Tensor g = a.in("Out@GRAD");
            Layout d = layout;
            d.update(x.shape(), y.shape(), tx, ty);
            int m = d.m;
            int n = d.n;
            int k = d.k;
            MemorySegment xm = x.segment();
            MemorySegment ym = y.segment();
            MemorySegment gm = g.segment();
            Tensor gx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : null;
            Tensor gy = a.hasOut("Y@GRAD") ? a.outLike("Y@GRAD", y) : null;
            int xc = d.xCols;
            int yc = d.yCols;
            for (int b = 0; b < d.xOffset.length; b++) {
                long xo = d.xOffset[b];
                long yo = d.yOffset[b];
                long go = (long) b * m * n;
                if (gx != null) {
                    MemorySegment gxm = gx.segment();
                    float beta = d.xFirst[b] ? 0f : 1f;
                    // X stored [xRows, xCols]; C = op(X) op(Y), dC is [m, n].
                    if (!tx && !ty) {        // dX = dC Y^T          [m,k] = [m,n][n,k]
                        gemm.sgemm(false, true, m, k, n, alpha, gm, go, n, ym, yo, yc, beta, gxm, xo, xc);
                    } else if (!tx) {        // C = X Y^T: dX = dC Y   [m,k] = [m,n][n,k]
                        gemm.sgemm(false, false, m, k, n, alpha, gm, go, n, ym, yo, yc, beta, gxm, xo, xc);
                    } else if (!ty) {        // C = X^T Y: dX = Y dC^T [k,m] = [k,n][n,m]
                        gemm.sgemm(false, true, k, m, n, alpha, ym, yo, yc, gm, go, n, beta, gxm, xo, xc);
                    } else {                 // C = X^T Y^T: dX = Y^T dC^T [k,m] = [k,n][n,m]
                        gemm.sgemm(true, true, k, m, n, alpha, ym, yo, yc, gm, go, n, beta, gxm, xo, xc);
                    }
                }
                if (gy != null) {
                    MemorySegment gym = gy.segment();
                    float beta = d.yFirst[b] ? 0f : 1f;
                    if (!tx && !ty) {        // dY = X^T dC          [k,n] = [k,m][m,n]
                        gemm.sgemm(true, false, k, n, m, alpha, xm, xo, xc, gm, go, n, beta, gym, yo, yc);
                    } else if (!tx) {        // C = X Y^T: dY = dC^T X [n,k] = [n,m][m,k]
                        gemm.sgemm(true, false, n, k, m, alpha, gm, go, n, xm, xo, xc, beta, gym, yo, yc);
                    } else if (!ty) {        // C = X^T Y: dY = X dC   [k,n] = [k,m][m,n]
                        gemm.sgemm(false, false, k, n, m, alpha, xm, xo, xc, gm, go, n, beta, gym, yo, yc);
                    } else {                 // C = X^T Y^T: dY = dC^T X^T [n,k] = [n,m][m,k]
                        gemm.sgemm(true, true, n, k, m, alpha, gm, go, n, xm, xo, xc, beta, gym, yo, yc);
                    }
                }
            }
        }
    }
}
