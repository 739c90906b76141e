package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.SplittableRandom;
import org.fleet4j.core.blas.Blas;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * self_attention: multi-head scaled dot-product self-attention on the fused projection QKV [B, T, 3E] (queries, keys and
 * values side by side on the last dim, nanoGPT's c_attn output), num_heads heads of D = E / num_heads:
 * Out[b, t, h D..] = softmax(scale q k^T + masks) v per head, with dropout of the attention weights. It is what the
 * composed ops (split, reshape, transpose, matmul, a tril_triu mask, softmax, dropout, matmul, transpose) compute, in
 * one kernel: each head's matrices are read and written in place through the GEMMs' leading dimensions, so nothing is
 * split or transposed, and with {@code causal} the products skip the blocks above the diagonal (a quarter of them at
 * T = 64). KeyPadding [B, T] (1 for a token, 0 for padding) adds -1e9 to the scores of padded keys, as the layer's
 * additive mask does. Softmax keeps the weights before dropout, Mask the dropout factors (0 or 1 / (1 - p)), for the
 * gradient.
 */
@AutoService(OpLibrary.class)
public final class SelfAttentionOp implements OpLibrary {
    public static final String SELF_ATTENTION = "self_attention";
    /** The score added at a masked position: exp of it is 0, as of -inf, and the program stays printable. */
    public static final float MASKED = -1e9f;
    /** Rows of the score matrix per GEMM when causal: blocks of this many rows skip the columns past their end. */
    private static final int CAUSAL_BLOCK = 32;

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(SELF_ATTENTION)
                .in("QKV").optionalIn("KeyPadding").out("Out", "Softmax").optionalOut("Mask")
                .noGrad("KeyPadding")
                .attr("num_heads", AttrType.INT, null)
                .attr("scale", AttrType.FLOAT, null)
                .attr("causal", AttrType.BOOL, false)
                .attr("dropout_prob", AttrType.FLOAT, 0f)
                .attr("is_test", AttrType.BOOL, false)
                .attr("seed", AttrType.LONG, 0L)
                .shape(SelfAttentionOp::inferShape)
                .kernel(op -> new Forward(Attrs.of(op.intAttr("num_heads"), op.floatAttr("scale"), op.boolAttr("causal"),
                        op.floatAttr("dropout_prob"), op.boolAttr("is_test")), op.<Long>attr("seed"), Blas.get()))
                .gradKernel(op -> new Backward(Attrs.of(op.intAttr("num_heads"), op.floatAttr("scale"),
                        op.boolAttr("causal"), op.floatAttr("dropout_prob"), op.boolAttr("is_test")), Blas.get()))
                .build());
    }

    private static void inferShape(InferContext ctx) {
        long[] qkv = ctx.shape("QKV");
        int heads = ctx.op().intAttr("num_heads");
        if (ctx.dtype("QKV") != DType.F32 || qkv.length != 3 || qkv[1] < 0 || qkv[2] < 0) {
            throw ctx.fail("QKV must be float32 [batch, seq, 3 * width] with seq and width known when built");
        }
        if (heads < 1 || qkv[2] % (3L * heads) != 0) {
            throw ctx.fail("the last dim of QKV, " + qkv[2] + ", must be 3 * width with width divisible by num_heads "
                    + heads + "; choose n_head dividing n_embd");
        }
        float p = ctx.op().floatAttr("dropout_prob");
        if (!(p >= 0f && p < 1f)) {
            throw ctx.fail("dropout_prob must be in [0, 1), is " + p);
        }
        if (ctx.has("KeyPadding")) {
            long[] k = ctx.shape("KeyPadding");
            if (k.length != 2 || k[1] != qkv[1] || !ctx.dtype("KeyPadding").isFloating()) {
                throw ctx.fail("KeyPadding must be float [batch, " + qkv[1] + "] (1 for a token, 0 for padding)");
            }
        }
        long[] out = {qkv[0], qkv[1], qkv[2] / 3};
        long[] weights = {qkv[0], heads, qkv[1], qkv[1]};
        ctx.set("Out", DType.F32, out);
        ctx.set("Softmax", DType.F32, weights);
        ctx.set("Mask", DType.F32, weights);
    }

    /** The op's attributes; dropout is on when p > 0 outside tests. */
    record Attrs(int heads, float scale, boolean causal, float p, boolean dropout) {
        static Attrs of(int heads, float scale, boolean causal, float p, boolean isTest) {
            return new Attrs(heads, scale, causal, p, p > 0 && !isTest);
        }
    }

    /** The shapes of one call: batch, seq, width, head width, and the causal row blocks. */
    record Dims(int b, int t, int e, int d, int block) {
        static Dims of(Tensor qkv, int heads) {
            int t = (int) qkv.dim(1);
            int e = (int) (qkv.dim(2) / 3);
            return new Dims((int) qkv.dim(0), t, e, e / heads, Math.min(t, CAUSAL_BLOCK));
        }

        /** The first column past what rows [.., rowEnd) of a causal product need; t otherwise. */
        int colsFor(int rowEnd, boolean causal) {
            return causal ? rowEnd : t;
        }
    }

    /** Softmax rows of one head: scores at {@code base} ([t, t]), the columns past the diagonal zeroed when causal. */
    private static void softmaxRows(MemorySegment s, long base, Dims d, boolean causal, Tensor padding, int batch) {
        for (int i = 0; i < d.t(); i++) {
            long row = base + (long) i * d.t();
            int valid = causal ? i + 1 : d.t();
            if (padding != null) {
                for (int j = 0; j < valid; j++) {
                    float keep = padding.getFloat((long) batch * d.t() + j);
                    F32.set(s, row + j, F32.get(s, row + j) + (1f - keep) * MASKED);
                }
            }
            Softmax.row(s, s, row, valid, false);
            s.asSlice((row + valid) * Float.BYTES, (long) (d.t() - valid) * Float.BYTES).fill((byte) 0);
        }
    }

    /** Out = softmax(scale Q K^T + masks) V per head, with dropout of the weights. */
    static final class Forward implements Kernel {
        private final Attrs attrs;
        private final SplittableRandom random;
        private final Gemm gemm;
        private MemorySegment dropped;

        Forward(Attrs attrs, long seed, Gemm gemm) {
            this.attrs = attrs;
            this.random = new SplittableRandom(seed);
            this.gemm = gemm;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor qkv = a.in("QKV");
            Dims d = Dims.of(qkv, attrs.heads());
            Tensor padding = a.hasIn("KeyPadding") ? a.in("KeyPadding") : null;
            Tensor out = a.out("Out", DType.F32, d.b(), d.t(), d.e());
            Tensor weights = a.out("Softmax", DType.F32, d.b(), attrs.heads(), d.t(), d.t());
            Tensor mask = attrs.dropout() ? a.out("Mask", DType.F32, weights.shape()) : null;
            MemorySegment x = qkv.segment();
            MemorySegment p = weights.segment();
            MemorySegment o = out.segment();
            int ld = 3 * d.e();
            long tt = (long) d.t() * d.t();
            for (int b = 0; b < d.b(); b++) {
                for (int h = 0; h < attrs.heads(); h++) {
                    long q = (long) b * d.t() * ld + (long) h * d.d();
                    long pb = ((long) b * attrs.heads() + h) * tt;
                    for (int r0 = 0; r0 < d.t(); r0 += d.block()) {
                        int rows = Math.min(d.block(), d.t() - r0);
                        gemm.sgemm(false, true, rows, d.colsFor(r0 + rows, attrs.causal()), d.d(), attrs.scale(),
                                x, q + (long) r0 * ld, ld, x, q + d.e(), ld, 0f, p, pb + (long) r0 * d.t(), d.t());
                    }
                    softmaxRows(p, pb, d, attrs.causal(), padding, b);
                    MemorySegment used = p;
                    if (mask != null) {
                        used = dropout(p, pb, mask.segment(), tt);
                    }
                    for (int r0 = 0; r0 < d.t(); r0 += d.block()) {
                        int rows = Math.min(d.block(), d.t() - r0);
                        gemm.sgemm(false, false, rows, d.d(), d.colsFor(r0 + rows, attrs.causal()), 1f,
                                used, mask != null ? (long) r0 * d.t() : pb + (long) r0 * d.t(), d.t(),
                                x, q + 2L * d.e(), ld, 0f, o, ((long) b * d.t() + r0) * d.e() + (long) h * d.d(), d.e());
                    }
                }
            }
        }

        /** The weights of one head times fresh dropout factors (kept in Mask), in scratch of the kernel's own. */
        private MemorySegment dropout(MemorySegment p, long pb, MemorySegment mask, long tt) {
            if (dropped == null || dropped.byteSize() != tt * Float.BYTES) {
                dropped = Tensor.zeros(DType.F32, tt).segment();
            }
            float kept = 1f / (1f - attrs.p());
            for (long i = 0; i < tt; i++) {
                float f = random.nextDouble() < attrs.p() ? 0f : kept;
                F32.set(mask, pb + i, f);
                F32.set(dropped, i, F32.get(p, pb + i) * f);
            }
            return dropped;
        }
    }

    /**
     * With P the weights (P' after dropout) and dY Out's gradient, per head: dV = P'^T dY, dP = (dY V^T) * mask,
     * dS = P * (dP - rowsum(P * dP)), dQ = scale dS K and dK = scale dS^T Q, each written into its third of QKV's
     * gradient; the causal products skip the blocks that are zero.
     */
    static final class Backward implements Kernel {
        private final Attrs attrs;
        private final Gemm gemm;
        private Tensor dScores;
        private Tensor dropped;

        Backward(Attrs attrs, Gemm gemm) {
            this.attrs = attrs;
            this.gemm = gemm;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor qkv = a.in("QKV");
            Dims d = Dims.of(qkv, attrs.heads());
            Tensor weights = a.in("Softmax");
            Tensor mask = attrs.dropout() ? a.in("Mask") : null;
            Tensor dOut = a.in("Out@GRAD");
            Tensor dQkv = a.outLike("QKV@GRAD", qkv);
            long tt = (long) d.t() * d.t();
            if (dScores == null || dScores.numel() != tt) {
                dScores = Tensor.zeros(DType.F32, tt);
                dropped = Tensor.zeros(DType.F32, tt);
            }
            MemorySegment x = qkv.segment();
            MemorySegment p = weights.segment();
            MemorySegment dy = dOut.segment();
            MemorySegment dx = dQkv.segment();
            MemorySegment ds = dScores.segment();
            int ld = 3 * d.e();
            boolean causal = attrs.causal();
            for (int b = 0; b < d.b(); b++) {
                for (int h = 0; h < attrs.heads(); h++) {
                    long q = (long) b * d.t() * ld + (long) h * d.d();
                    long y = (long) b * d.t() * d.e() + (long) h * d.d();
                    long pb = ((long) b * attrs.heads() + h) * tt;
                    MemorySegment used = p;
                    long usedBase = pb;
                    if (mask != null) {
                        MemorySegment m = mask.segment();
                        used = dropped.segment();
                        usedBase = 0;
                        for (long i = 0; i < tt; i++) {
                            F32.set(used, i, F32.get(p, pb + i) * F32.get(m, pb + i));
                        }
                    }
                    for (int r0 = 0; r0 < d.t(); r0 += d.block()) {
                        int rows = Math.min(d.block(), d.t() - r0);
                        int cols = d.colsFor(r0 + rows, causal);
                        // dP' rows [r0, r0 + rows) = dY V^T
                        gemm.sgemm(false, true, rows, cols, d.d(), 1f, dy, y + (long) r0 * d.e(), d.e(),
                                x, q + 2L * d.e(), ld, 0f, ds, (long) r0 * d.t(), d.t());
                        // dV rows [r0, r0 + rows) = P'[i >= r0 when causal, r0..]^T dY[i..]
                        int from = causal ? r0 : 0;
                        gemm.sgemm(true, false, rows, d.d(), d.t() - from, 1f, used, usedBase + (long) from * d.t() + r0,
                                d.t(), dy, y + (long) from * d.e(), d.e(), 0f, dx, q + (long) r0 * ld + 2L * d.e(), ld);
                    }
                    softmaxBackward(p, pb, mask == null ? null : mask.segment(), ds, d, causal);
                    for (int r0 = 0; r0 < d.t(); r0 += d.block()) {
                        int rows = Math.min(d.block(), d.t() - r0);
                        int from = causal ? r0 : 0;
                        // dQ rows = scale dS K
                        gemm.sgemm(false, false, rows, d.d(), d.colsFor(r0 + rows, causal), attrs.scale(),
                                ds, (long) r0 * d.t(), d.t(), x, q + d.e(), ld, 0f, dx, q + (long) r0 * ld, ld);
                        // dK rows = scale dS[i.., r0..]^T Q[i..]
                        gemm.sgemm(true, false, rows, d.d(), d.t() - from, attrs.scale(), ds, (long) from * d.t() + r0,
                                d.t(), x, q + (long) from * ld, ld, 0f, dx, q + (long) r0 * ld + d.e(), ld);
                    }
                }
            }
        }

        /** dS = P (dP - rowsum(P dP)) in place of dP, row by row, zero past each causal row's diagonal. */
        private static void softmaxBackward(MemorySegment p, long pb, MemorySegment mask, MemorySegment ds, Dims d,
                                            boolean causal) {
            for (int i = 0; i < d.t(); i++) {
                long row = (long) i * d.t();
                int valid = causal ? i + 1 : d.t();
                if (mask != null) {
                    for (int j = 0; j < valid; j++) {
                        F32.set(ds, row + j, F32.get(ds, row + j) * F32.get(mask, pb + row + j));
                    }
                }
                Softmax.rowBackward(p, pb + row, ds, row, ds, row, valid, false);
                ds.asSlice((row + valid) * Float.BYTES, (long) (d.t() - valid) * Float.BYTES).fill((byte) 0);
            }
        }
    }
}
