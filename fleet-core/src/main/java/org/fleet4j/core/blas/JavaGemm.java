package org.fleet4j.core.blas;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Pure-Java sgemm on the Vector API, organised like GotoBLAS/BLIS: panels of op(B) ({@code KC x NC}) and
 * op(A) ({@code MC x KC}) are packed into contiguous arrays so that the register-blocked micro-kernel
 * ({@code MR x NR} = 2 rows x 4 vectors, 8 accumulators) streams both with unit stride out of L1/L2.
 * Packing also absorbs every transpose, so one micro-kernel serves all four combinations.
 */
public final class JavaGemm implements Gemm {

    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    private static final int L = SPECIES.length();
    static final int MR = 2;
    static final int NR = 4 * L;
    /** Depth of one packed panel: a KC x NR sliver of B (16 KiB with 256-bit vectors) stays in L1. */
    private static final int KC = 128;
    /** Rows of A packed at once: MC x KC floats (128 KiB) stay in L2. */
    private static final int MC = 128 * MR;
    /** Columns of B packed at once: KC x NC floats (2 MiB with 256-bit vectors) live in L3. */
    private static final int NC = 128 * NR;
    private static final ByteOrder ORDER = ByteOrder.nativeOrder();
    private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** Never started: it only stands for "a thread other than the caller" when asking who may access a segment. */
    private static final Thread ANY_OTHER_THREAD = Thread.ofVirtual().unstarted(() -> { });
    private static final ThreadLocal<Workspace> WORKSPACE = ThreadLocal.withInitial(Workspace::new);

    private volatile int threads = 1;
    private volatile ExecutorService pool;

    @Override
    public String name() {
        return "pure-Java vectorised";
    }

    @Override
    public String description() {
        int t = threads;
        return "BLAS: " + name() + " (FloatVector " + SPECIES.vectorBitSize() + "-bit, " + t
                + (t == 1 ? " thread)" : " threads)");
    }

    @Override
    public synchronized void setThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("BLAS threads must be >= 1, got " + threads);
        }
        if (threads == this.threads) {
            return;
        }
        ExecutorService old = pool;
        pool = threads == 1 ? null : Executors.newFixedThreadPool(threads - 1, r -> {
            Thread t = new Thread(r, "fleet-javagemm");
            t.setDaemon(true);
            return t;
        });
        this.threads = threads;
        if (old != null) {
            old.shutdown();
        }
    }

    @Override
    public int threads() {
        return threads;
    }

    @Override
    public void sgemm(boolean transA, boolean transB, int m, int n, int k,
                      float alpha, MemorySegment a, long aOffsetElems, int lda,
                      MemorySegment b, long bOffsetElems, int ldb,
                      float beta, MemorySegment c, long cOffsetElems, int ldc) {
        GemmArguments.check(transA, transB, m, n, k, a, aOffsetElems, lda, b, bOffsetElems, ldb, c, cOffsetElems, ldc);
        if (m == 0 || n == 0) {
            return;
        }
        if (k == 0 || alpha == 0f) {
            scale(m, n, beta, c, cOffsetElems, ldc);
            return;
        }
        Problem whole = transposedFits(m, n)
                ? new Problem(!transB, !transA, n, m, k, alpha, b, bOffsetElems, ldb,
                        a, aOffsetElems, lda, beta, c, cOffsetElems, 1, ldc)
                : new Problem(transA, transB, m, n, k, alpha, a, aOffsetElems, lda,
                        b, bOffsetElems, ldb, beta, c, cOffsetElems, ldc, 1);
        int t = threads;
        ExecutorService workers = pool;
        if (t == 1 || workers == null || (long) m * n * k < 64L * 64 * 64 || !shareable(a, b, c)) {
            whole.run();
            return;
        }
        runParallel(whole.split(t), workers);
    }

    /**
     * Whether computing C^T = op(B)^T op(A)^T wastes clearly less of the MR x NR micro-tile than C = op(A) op(B):
     * true for narrow outputs such as a 10-class layer (n = 10 fills 10/32 of a tile row; as the 2-row side it
     * fills all of it).
     */
    static boolean transposedFits(int m, int n) {
        double direct = fill(m, MR) * fill(n, NR);
        double transposed = fill(n, MR) * fill(m, NR);
        return transposed > 1.15 * direct;
    }

    private static double fill(int extent, int unit) {
        return extent / (double) roundUp(extent, unit);
    }

    /** Confined segments belong to the calling thread alone, so only shared memory is split among workers. */
    private static boolean shareable(MemorySegment a, MemorySegment b, MemorySegment c) {
        return a.isAccessibleBy(ANY_OTHER_THREAD) && b.isAccessibleBy(ANY_OTHER_THREAD) && c.isAccessibleBy(ANY_OTHER_THREAD);
    }

    private static void runParallel(List<Problem> parts, ExecutorService workers) {
        List<Future<?>> pending = new ArrayList<>();
        for (int i = 1; i < parts.size(); i++) {
            pending.add(workers.submit(parts.get(i)::run));
        }
        parts.get(0).run();
        for (Future<?> f : pending) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for sgemm worker threads", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("sgemm worker thread failed: " + e.getCause(), e.getCause());
            }
        }
    }

    private static void scale(int m, int n, float beta, MemorySegment c, long cOff, int ldc) {
        for (int i = 0; i < m; i++) {
            long row = (cOff + (long) i * ldc) * Float.BYTES;
            for (int j = 0; j < n; j++) {
                long at = row + (long) j * Float.BYTES;
                c.set(FLOAT, at, beta == 0f ? 0f : beta * c.get(FLOAT, at));
            }
        }
    }

    /**
     * One independent sgemm: the whole call, or one stripe of C when several threads share it. C's element
     * (i, j) is at {@code cOff + i * cRowStride + j * cColStride}, so a problem can also fill C transposed.
     */
    private record Problem(boolean transA, boolean transB, int m, int n, int k,
                           float alpha, MemorySegment a, long aOff, int lda,
                           MemorySegment b, long bOff, int ldb,
                           float beta, MemorySegment c, long cOff, long cRowStride, long cColStride) {

        /** Stripes of C's columns (rows when C is too narrow), each a multiple of the micro-tile. */
        List<Problem> split(int parts) {
            List<Problem> out = new ArrayList<>();
            boolean byColumns = n >= parts * NR || n >= m;
            int extent = byColumns ? n : m;
            int unit = byColumns ? NR : MR;
            int units = (extent + unit - 1) / unit;
            int perPart = (units + parts - 1) / parts;
            for (int start = 0; start < extent; start += perPart * unit) {
                int size = Math.min(perPart * unit, extent - start);
                if (byColumns) {
                    long bShift = transB ? (long) start * ldb : start;
                    out.add(new Problem(transA, transB, m, size, k, alpha, a, aOff, lda,
                            b, bOff + bShift, ldb, beta, c, cOff + start * cColStride, cRowStride, cColStride));
                } else {
                    long aShift = transA ? start : (long) start * lda;
                    out.add(new Problem(transA, transB, size, n, k, alpha, a, aOff + aShift, lda,
                            b, bOff, ldb, beta, c, cOff + start * cRowStride, cRowStride, cColStride));
                }
            }
            return out;
        }

        void run() {
            Workspace ws = WORKSPACE.get();
            for (int jc = 0; jc < n; jc += NC) {
                int nc = Math.min(NC, n - jc);
                for (int pc = 0; pc < k; pc += KC) {
                    int kc = Math.min(KC, k - pc);
                    float betaHere = pc == 0 ? beta : 1f;
                    float[] bp = ws.packedB(roundUp(nc, NR) * kc);
                    packB(ws, bp, pc, jc, kc, nc);
                    for (int ic = 0; ic < m; ic += MC) {
                        int mc = Math.min(MC, m - ic);
                        float[] ap = ws.packedA(roundUp(mc, MR) * kc);
                        packA(ws, ap, ic, pc, mc, kc);
                        for (int jr = 0; jr < nc; jr += NR) {
                            int cols = Math.min(NR, nc - jr);
                            int bBase = jr * kc;
                            for (int ir = 0; ir < mc; ir += MR) {
                                int rows = Math.min(MR, mc - ir);
                                long cIdx = cOff + (ic + ir) * cRowStride + (jc + jr) * cColStride;
                                microKernel(kc, ap, ir * kc, bp, bBase, ws.tile);
                                updateC(ws.tile, alpha, betaHere, c, cIdx, cRowStride, cColStride, rows, cols);
                            }
                        }
                    }
                }
            }
        }

        /** Packs op(B)[pc:pc+kc, jc:jc+nc] into slivers of NR columns, each kc x NR row-major, zero-padded. */
        private void packB(Workspace ws, float[] bp, int pc, int jc, int kc, int nc) {
            for (int jr = 0; jr < nc; jr += NR) {
                int cols = Math.min(NR, nc - jr);
                int base = jr * kc;
                if (!transB) {
                    long first = bOff + (long) pc * ldb + jc + jr;
                    if (cols == NR) {
                        for (int p = 0; p < kc; p++) {
                            long byteOff = (first + (long) p * ldb) * Float.BYTES;
                            int at = base + p * NR;
                            for (int v = 0; v < NR; v += L) {
                                FloatVector.fromMemorySegment(SPECIES, b, byteOff + (long) v * Float.BYTES, ORDER)
                                        .intoArray(bp, at + v);
                            }
                        }
                    } else {
                        for (int p = 0; p < kc; p++) {
                            int at = base + p * NR;
                            MemorySegment.copy(b, FLOAT, (first + (long) p * ldb) * Float.BYTES, bp, at, cols);
                            Arrays.fill(bp, at + cols, at + NR, 0f);
                        }
                    }
                } else {
                    // op(B) column j is stored row j of B: copy each row contiguously, then interleave.
                    float[] rowsBuf = ws.scratch(NR * kc);
                    for (int jj = 0; jj < cols; jj++) {
                        long src = (bOff + (long) (jc + jr + jj) * ldb + pc) * Float.BYTES;
                        MemorySegment.copy(b, FLOAT, src, rowsBuf, jj * kc, kc);
                    }
                    interleave(rowsBuf, cols, NR, kc, bp, base);
                }
            }
        }

        /** Packs op(A)[ic:ic+mc, pc:pc+kc] into slivers of MR rows, each kc x MR row-major, zero-padded. */
        private void packA(Workspace ws, float[] ap, int ic, int pc, int mc, int kc) {
            if (!transA) {
                float[] rowsBuf = ws.scratch(MR * kc);
                for (int ir = 0; ir < mc; ir += MR) {
                    int rows = Math.min(MR, mc - ir);
                    for (int ii = 0; ii < rows; ii++) {
                        long src = (aOff + (long) (ic + ir + ii) * lda + pc) * Float.BYTES;
                        MemorySegment.copy(a, FLOAT, src, rowsBuf, ii * kc, kc);
                    }
                    interleave(rowsBuf, rows, MR, kc, ap, ir * kc);
                }
            } else {
                // op(A) row i is stored column i of A: each stored row gives one k-step of every sliver.
                float[] rowBuf = ws.scratch(roundUp(mc, MR));
                Arrays.fill(rowBuf, mc, roundUp(mc, MR), 0f);
                for (int p = 0; p < kc; p++) {
                    long src = (aOff + (long) (pc + p) * lda + ic) * Float.BYTES;
                    MemorySegment.copy(a, FLOAT, src, rowBuf, 0, mc);
                    for (int ir = 0; ir < mc; ir += MR) {
                        System.arraycopy(rowBuf, ir, ap, ir * kc + p * MR, MR);
                    }
                }
            }
        }
    }

    /**
     * dst[base + p*width + w] = src[w*kc + p]: rows of kc floats become kc groups of width (zero-padded past
     * count). Reading along rows keeps the inner loop long and unit-stride.
     */
    private static void interleave(float[] src, int count, int width, int kc, float[] dst, int base) {
        int first = 0;
        if (count == width && width % 8 == 0 && Transpose8.AVAILABLE) {
            first = Transpose8.transpose(src, count, kc, dst, base, width);
        }
        for (int w = 0; w < count; w++) {
            int from = w * kc;
            int to = base + w;
            for (int p = first; p < kc; p++) {
                dst[to + p * width] = src[from + p];
            }
        }
        for (int w = count; w < width; w++) {
            for (int p = 0; p < kc; p++) {
                dst[base + w + p * width] = 0f;
            }
        }
    }

    private static int roundUp(int x, int unit) {
        return (x + unit - 1) / unit * unit;
    }

    /**
     * tile[MR x NR] = A sliver x B sliver, with 8 accumulators in registers. The tile is 2 x 4 vectors rather than
     * the classic 6 x 2: C2 hoists the broadcasts, and with 6 rows the 12 accumulators, 2 B vectors and the
     * broadcasts in flight need more than x86's 16 vector registers, so an accumulator spills and its
     * store-to-load round trip halves the speed. No vector crosses a call boundary either: a
     * call that is not inlined would box it.
     */
    private static void microKernel(int kc, float[] ap, int aBase, float[] bp, int bBase, float[] tile) {
        FloatVector c00 = FloatVector.zero(SPECIES), c01 = c00, c02 = c00, c03 = c00;
        FloatVector c10 = c00, c11 = c00, c12 = c00, c13 = c00;
        for (int p = 0; p < kc; p++) {
            int ai = aBase + p * MR;
            int bi = bBase + p * NR;
            FloatVector b0 = FloatVector.fromArray(SPECIES, bp, bi);
            FloatVector b1 = FloatVector.fromArray(SPECIES, bp, bi + L);
            FloatVector b2 = FloatVector.fromArray(SPECIES, bp, bi + 2 * L);
            FloatVector b3 = FloatVector.fromArray(SPECIES, bp, bi + 3 * L);
            FloatVector x = FloatVector.broadcast(SPECIES, ap[ai]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            c02 = x.fma(b2, c02);
            c03 = x.fma(b3, c03);
            x = FloatVector.broadcast(SPECIES, ap[ai + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            c12 = x.fma(b2, c12);
            c13 = x.fma(b3, c13);
        }
        c00.intoArray(tile, 0);
        c01.intoArray(tile, L);
        c02.intoArray(tile, 2 * L);
        c03.intoArray(tile, 3 * L);
        c10.intoArray(tile, NR);
        c11.intoArray(tile, NR + L);
        c12.intoArray(tile, NR + 2 * L);
        c13.intoArray(tile, NR + 3 * L);
    }

    /**
     * C[rows x cols] = alpha * tile + beta * C: vectors for whole tiles of row-major C, element by element at
     * edges and when C is filled transposed.
     */
    private static void updateC(float[] tile, float alpha, float beta, MemorySegment c, long cIdx,
                                long rowStride, long colStride, int rows, int cols) {
        if (rows == MR && cols == NR && colStride == 1) {
            for (int i = 0; i < MR; i++) {
                long off = (cIdx + i * rowStride) * Float.BYTES;
                for (int v = 0; v < NR; v += L) {
                    long at = off + (long) v * Float.BYTES;
                    FloatVector x = FloatVector.fromArray(SPECIES, tile, i * NR + v).mul(alpha);
                    if (beta != 0f) {
                        x = FloatVector.fromMemorySegment(SPECIES, c, at, ORDER).mul(beta).add(x);
                    }
                    x.intoMemorySegment(c, at, ORDER);
                }
            }
            return;
        }
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                long at = cIdx + i * rowStride + j * colStride;
                float v = alpha * tile[i * NR + j];
                c.setAtIndex(FLOAT, at, beta == 0f ? v : v + beta * c.getAtIndex(FLOAT, at));
            }
        }
    }

    /** Per-thread packing buffers, grown on demand and reused across calls. */
    private static final class Workspace {
        final float[] tile = new float[MR * NR];
        private float[] a = new float[0];
        private float[] b = new float[0];
        private float[] scratch = new float[0];

        float[] packedA(int size) {
            if (a.length < size) {
                a = new float[size];
            }
            return a;
        }

        float[] packedB(int size) {
            if (b.length < size) {
                b = new float[size];
            }
            return b;
        }

        float[] scratch(int size) {
            if (scratch.length < size) {
                scratch = new float[size];
            }
            return scratch;
        }
    }
}
