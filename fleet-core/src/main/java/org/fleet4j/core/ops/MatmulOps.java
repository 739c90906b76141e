package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * matmul: Out = alpha * op(X) op(Y) through the chosen BLAS. X may have leading batch dims that are flattened
 * into rows when Y is a matrix (the fc case); X and Y of equal rank 3 multiply batch by batch. bfloat16 X and Y
 * (AMP) are widened to float32 for the GEMM and Out is bfloat16 ({@link Bf16Widening}).
 */
@AutoService(OpLibrary.class)
public final class MatmulOps implements OpLibrary {
    public static final String MATMUL = "matmul";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(MATMUL)
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
                    if (x.length < 2 || (y.length != 2 && y.length != x.length) || y.length > 3) {
                        throw ctx.fail("X must have rank >= 2 and Y rank 2 (or X's rank, at most 3)");
                    }
                    if (tx && x.length > 2 && y.length == 2) {
                        throw ctx.fail("transpose_X needs X of rank 2 when Y is a matrix");
                    }
                    long k1 = tx ? x[x.length - 2] : x[x.length - 1];
                    long k2 = ty ? y[y.length - 1] : y[y.length - 2];
                    if (k1 >= 0 && k2 >= 0 && k1 != k2) {
                        throw ctx.fail("inner dimensions differ: " + k1 + " (X" + (tx ? "^T" : "") + ") vs " + k2
                                + " (Y" + (ty ? "^T" : "") + ")");
                    }
                    if (y.length == 3 && x[0] >= 0 && y[0] >= 0 && x[0] != y[0]) {
                        throw ctx.fail("batch sizes differ: " + x[0] + " vs " + y[0]);
                    }
                    long[] out = x.clone();
                    out[x.length - 2] = tx ? x[x.length - 1] : x[x.length - 2];
                    out[x.length - 1] = ty ? y[y.length - 2] : y[y.length - 1];
                    ctx.set("Out", dtype, out);
                })
                .kernel(Bf16Widening.of(op -> new Forward(op.boolAttr("transpose_X"), op.boolAttr("transpose_Y"), op.floatAttr("alpha"), Blas.get())))
                .gradKernel(Bf16Widening.of(op -> new Backward(op.boolAttr("transpose_X"), op.boolAttr("transpose_Y"), op.floatAttr("alpha"), Blas.get())))
                .build());
        return specs;
    }

    /** Rows, inner and columns of one (possibly transposed) product, and the batch count. */
    record Dims(int batch, int m, int k, int n, int xRows, int xCols, int yRows, int yCols) {
        static Dims of(long[] x, long[] y, boolean tx, boolean ty) {
            int batch = y.length == 3 ? (int) x[0] : 1;
            int xCols = (int) x[x.length - 1];
            int xRows = (int) (y.length == 3 ? x[1] : Shapes.numel(x) / xCols);
            int yRows = (int) y[y.length - 2];
            int yCols = (int) y[y.length - 1];
            int m = tx ? xCols : xRows;
            int k = tx ? xRows : xCols;
            int n = ty ? yRows : yCols;
            return new Dims(batch, m, k, n, xRows, xCols, yRows, yCols);
        }
    }

    /** Out = alpha op(X) op(Y). */
    record Forward(boolean tx, boolean ty, float alpha, Gemm gemm) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            long[] xs = x.shape();
            long[] ys = y.shape();
            Dims d = Dims.of(xs, ys, tx, ty);
            if ((tx ? d.xRows() : d.xCols()) != (ty ? d.yCols() : d.yRows())) {
                throw new IllegalArgumentException("matmul: inner dimensions of X " + Shapes.str(xs) + " and Y "
                        + Shapes.str(ys) + " differ");
            }
            long[] os = xs.clone();
            os[xs.length - 2] = tx ? xs[xs.length - 1] : xs[xs.length - 2];
            os[xs.length - 1] = d.n();
            Tensor out = a.out("Out", DType.F32, os);
            MemorySegment xm = x.segment();
            MemorySegment ym = y.segment();
            MemorySegment om = out.segment();
            for (int b = 0; b < d.batch(); b++) {
                gemm.sgemm(tx, ty, d.m(), d.n(), d.k(), alpha,
                        xm, (long) b * d.xRows() * d.xCols(), d.xCols(),
                        ym, (long) b * d.yRows() * d.yCols(), d.yCols(),
                        0f, om, (long) b * d.m() * d.n(), d.n());
            }
        }
    }

    /** dX and dY of Out = alpha op(X) op(Y), each the product of dOut with the other operand. */
    record Backward(boolean tx, boolean ty, float alpha, Gemm gemm) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            Tensor g = a.in("Out@GRAD");
            Dims d = Dims.of(x.shape(), y.shape(), tx, ty);
            int m = d.m();
            int n = d.n();
            int k = d.k();
            MemorySegment xm = x.segment();
            MemorySegment ym = y.segment();
            MemorySegment gm = g.segment();
            Tensor gx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x) : null;
            Tensor gy = a.hasOut("Y@GRAD") ? a.outLike("Y@GRAD", y) : null;
            for (int b = 0; b < d.batch(); b++) {
                long xo = (long) b * d.xRows() * d.xCols();
                long yo = (long) b * d.yRows() * d.yCols();
                long go = (long) b * m * n;
                if (gx != null) {
                    MemorySegment gxm = gx.segment();
                    // X stored [xRows, xCols]; C = op(X) op(Y), dC is [m, n].
                    if (!tx && !ty) {        // dX = dC Y^T          [m,k] = [m,n][n,k]
                        gemm.sgemm(false, true, m, k, n, alpha, gm, go, n, ym, yo, d.yCols(), 0f, gxm, xo, d.xCols());
                    } else if (!tx) {        // C = X Y^T: dX = dC Y   [m,k] = [m,n][n,k]
                        gemm.sgemm(false, false, m, k, n, alpha, gm, go, n, ym, yo, d.yCols(), 0f, gxm, xo, d.xCols());
                    } else if (!ty) {        // C = X^T Y: dX = Y dC^T [k,m] = [k,n][n,m]
                        gemm.sgemm(false, true, k, m, n, alpha, ym, yo, d.yCols(), gm, go, n, 0f, gxm, xo, d.xCols());
                    } else {                 // C = X^T Y^T: dX = Y^T dC^T [k,m] = [k,n][n,m]
                        gemm.sgemm(true, true, k, m, n, alpha, ym, yo, d.yCols(), gm, go, n, 0f, gxm, xo, d.xCols());
                    }
                }
                if (gy != null) {
                    MemorySegment gym = gy.segment();
                    if (!tx && !ty) {        // dY = X^T dC          [k,n] = [k,m][m,n]
                        gemm.sgemm(true, false, k, n, m, alpha, xm, xo, d.xCols(), gm, go, n, 0f, gym, yo, d.yCols());
                    } else if (!tx) {        // C = X Y^T: dY = dC^T X [n,k] = [n,m][m,k]
                        gemm.sgemm(true, false, n, k, m, alpha, gm, go, n, xm, xo, d.xCols(), 0f, gym, yo, d.yCols());
                    } else if (!ty) {        // C = X^T Y: dY = X dC   [k,n] = [k,m][m,n]
                        gemm.sgemm(false, false, k, n, m, alpha, xm, xo, d.xCols(), gm, go, n, 0f, gym, yo, d.yCols());
                    } else {                 // C = X^T Y^T: dY = dC^T X^T [n,k] = [n,m][m,k]
                        gemm.sgemm(true, true, n, k, m, alpha, gm, go, n, xm, xo, d.xCols(), 0f, gym, yo, d.yCols());
                    }
                }
            }
        }
    }
}
