package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Shapes;
import org.fleet4j.core.tensor.Tensor;

/**
 * fused_gemm_epilogue (Paddle's op): Out = act(X op(Y) + Bias) for X [..., K] (its leading dims flattened into rows),
 * Y [K, N] or, with trans_y, [N, K] (nn.Linear's layout), Bias [N], activation none or gelu (exact); ReserveSpace keeps
 * X op(Y) + Bias for gelu's gradient. The rows go through in blocks small enough for the block's output to stay in
 * the core's cache between its GEMM and its epilogue (the bias, the activation; in the gradient, the activation's
 * derivative and the bias's sum), so the epilogue costs no pass over memory of its own.
 */
@AutoService(OpLibrary.class)
public final class FusedGemmEpilogueOp implements OpLibrary {
    public static final String FUSED_GEMM_EPILOGUE = "fused_gemm_epilogue";
    /**
     * Output elements per block: half of a 2 MB L2 cache. Smaller blocks cost OpenBLAS more than the cache saves
     * (4,096 x 128 x 384 in blocks of 336 rows took 4 % longer than in blocks of 512 or more).
     */
    private static final long BLOCK_FLOATS = 256 * 1024;

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(FUSED_GEMM_EPILOGUE)
                .in("X", "Y", "Bias").out("Out").optionalOut("ReserveSpace")
                .attr("trans_x", AttrType.BOOL, false)
                .attr("trans_y", AttrType.BOOL, false)
                .attr("activation", AttrType.STRING, "none")
                .shape(FusedGemmEpilogueOp::inferShape)
                .kernel(op -> new Forward(op.boolAttr("trans_y"), gelu(op), Blas.get()))
                .gradKernel(op -> new Backward(op.boolAttr("trans_y"), gelu(op), Blas.get()))
                .build());
    }

    private static boolean gelu(org.fleet4j.core.ir.Op op) {
        return op.stringAttr("activation").equals("gelu");
    }

    private static void inferShape(InferContext ctx) {
        long[] x = ctx.shape("X");
        long[] y = ctx.shape("Y");
        long[] bias = ctx.shape("Bias");
        boolean ty = ctx.op().boolAttr("trans_y");
        String act = ctx.op().stringAttr("activation");
        if (ctx.dtype("X") != DType.F32 || ctx.dtype("Y") != DType.F32 || ctx.dtype("Bias") != DType.F32) {
            throw ctx.fail("fused_gemm_epilogue on CPU takes float32 X, Y and Bias");
        }
        if (ctx.op().boolAttr("trans_x")) {
            throw ctx.fail("trans_x is not supported on CPU: transpose X first or use matmul and elementwise_add");
        }
        if (!act.equals("none") && !act.equals("gelu")) {
            throw ctx.fail("activation '" + act + "' is not none or gelu");
        }
        if (x.length < 2 || y.length != 2) {
            throw ctx.fail("X must be [..., K] with rank >= 2 and Y a matrix");
        }
        long k = ty ? y[1] : y[0];
        long n = ty ? y[0] : y[1];
        if (x[x.length - 1] != k) {
            throw ctx.fail("X's last dim " + x[x.length - 1] + " differs from Y's inner dim " + k
                    + (ty ? " (Y is [N, K] with trans_y)" : " (Y is [K, N])"));
        }
        if (bias.length != 1 || bias[0] != n) {
            throw ctx.fail("Bias must be [" + n + "], one per output column, not " + Shapes.str(bias));
        }
        long[] out = x.clone();
        out[out.length - 1] = n;
        ctx.set("Out", DType.F32, out);
        ctx.set("ReserveSpace", DType.F32, out);
    }

    /** Rows per block for rows of n outputs: a multiple of 16 (or all of them), at least 16. */
    private static int blockRows(long rows, long n) {
        long r = Math.max(16, (BLOCK_FLOATS / Math.max(1, n)) / 16 * 16);
        return (int) Math.min(rows, r);
    }

    /** Out = act(X op(Y) + Bias), block of rows by block of rows. */
    record Forward(boolean ty, boolean gelu, Gemm gemm) implements Kernel {
        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            int k = (int) x.dim(-1);
            int n = (int) (ty ? y.dim(0) : y.dim(1));
            long rows = x.numel() / k;
            long[] os = x.shape();
            os[os.length - 1] = n;
            Tensor out = a.out("Out", DType.F32, os);
            MemorySegment pre = gelu ? a.out("ReserveSpace", DType.F32, os).segment() : out.segment();
            MemorySegment o = out.segment();
            MemorySegment bias = a.in("Bias").segment();
            int block = blockRows(rows, n);
            for (long r0 = 0; r0 < rows; r0 += block) {
                int m = (int) Math.min(block, rows - r0);
                long at = r0 * n;
                gemm.sgemm(false, ty, m, n, k, 1f, x.segment(), r0 * k, k, y.segment(), 0, ty ? k : n, 0f, pre, at, n);
                MemorySegment blockPre = pre.asSlice(at * Float.BYTES, (long) m * n * Float.BYTES);
                F32.addRows(blockPre, bias, blockPre, m, n);
                if (gelu) {
                    Activations.forward(Activations.Fn.GELU, Activations.Params.NONE, blockPre,
                            o.asSlice(at * Float.BYTES, (long) m * n * Float.BYTES), (long) m * n);
                }
            }
        }
    }

    /**
     * With dPre = act'(pre) dOut: dBias = the column sums of dPre and dX = dPre op(Y)^T block of rows by block of rows
     * (each block of dPre still in cache), then dY from all of dPre and X in one GEMM (its reduction over every row
     * runs best unsplit).
     */
    static final class Backward implements Kernel {
        private final boolean ty;
        private final boolean gelu;
        private final Gemm gemm;
        private Tensor activationGrad;
        private Tensor columnSums;

        Backward(boolean ty, boolean gelu, Gemm gemm) {
            this.ty = ty;
            this.gelu = gelu;
            this.gemm = gemm;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor x = a.in("X");
            Tensor y = a.in("Y");
            Tensor g = a.in("Out@GRAD");
            int k = (int) x.dim(-1);
            int n = (int) (ty ? y.dim(0) : y.dim(1));
            long rows = x.numel() / k;
            int block = blockRows(rows, n);
            MemorySegment gx = a.hasOut("X@GRAD") ? a.outLike("X@GRAD", x).segment() : null;
            MemorySegment gy = a.hasOut("Y@GRAD") ? a.outLike("Y@GRAD", y).segment() : null;
            Tensor gb = a.hasOut("Bias@GRAD") ? a.outLike("Bias@GRAD", a.in("Bias")) : null;
            if (gelu && (activationGrad == null || activationGrad.numel() != g.numel())) {
                activationGrad = Tensor.zeros(DType.F32, g.numel());
            }
            if (columnSums == null || columnSums.numel() != n) {
                columnSums = Tensor.zeros(DType.F32, n);
            }
            if (gb != null) {
                gb.fill(0);
            }
            MemorySegment dPre = gelu ? activationGrad.segment() : g.segment();
            MemorySegment ys = y.segment();
            for (long r0 = 0; r0 < rows; r0 += block) {
                int m = (int) Math.min(block, rows - r0);
                long at = r0 * n;
                long bytes = (long) m * n * Float.BYTES;
                MemorySegment blockGrad = dPre.asSlice(at * Float.BYTES, bytes);
                if (gelu) {
                    Activations.backward(Activations.Fn.GELU, Activations.Params.NONE,
                            a.in("ReserveSpace").segment().asSlice(at * Float.BYTES, bytes),
                            g.segment().asSlice(at * Float.BYTES, bytes), blockGrad, (long) m * n);
                }
                if (gb != null) {
                    F32.sumRows(blockGrad, columnSums.segment(), m, n);
                    F32.accumulate(gb.segment(), columnSums.segment(), n);
                }
                if (gx != null) {
                    // Out = X Y (dX = dPre Y^T) or X Y^T (dX = dPre Y)
                    gemm.sgemm(false, !ty, m, k, n, 1f, dPre, at, n, ys, 0, ty ? k : n, 0f, gx, r0 * k, k);
                }
            }
            if (gy != null) {
                if (rows == 0) {
                    gy.fill((byte) 0);
                } else if (ty) {    // dY [N, K] = dPre^T X
                    gemm.sgemm(true, false, n, k, (int) rows, 1f, dPre, 0, n, x.segment(), 0, k, 0f, gy, 0, k);
                } else {            // dY [K, N] = X^T dPre
                    gemm.sgemm(true, false, k, n, (int) rows, 1f, x.segment(), 0, k, dPre, 0, n, 0f, gy, 0, n);
                }
            }
        }
    }
}
