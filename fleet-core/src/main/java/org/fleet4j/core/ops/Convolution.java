package org.fleet4j.core.ops;

import java.lang.foreign.MemorySegment;
import org.fleet4j.core.blas.Gemm;
import org.fleet4j.core.tensor.OffHeapMemory;

/**
 * The two directions of a convolution as im2col + GEMM, with the scratch memory of one kernel (allocated on its first
 * step and kept while the shapes fit). {@link #fromImage} slides the window over the image side (conv2d forward,
 * conv2d_transpose's input gradient) and {@link #toImage} scatters the column side back onto it (conv2d's input
 * gradient, conv2d_transpose forward); either also accumulates the filter gradient from the same im2col matrix.
 * <p>Images are taken in chunks whose im2col matrix has about {@link #CHUNK_COLUMNS} columns and stays within
 * {@link #CHUNK_BYTES}, so that one GEMM per group and chunk is wide enough to run near the BLAS's peak while its
 * operands stay in the core's L2 cache. A chunk of more than one image multiplies a [filters, images x positions]
 * copy of the column side, gathered from (or scattered to) the NCHW tensor. A 1x1 window of stride 1 without
 * padding needs no im2col: each image is its own matrix.
 */
final class Convolution {
    static final int CHUNK_COLUMNS = 1024;
    static final long CHUNK_BYTES = 1536 * 1024;

    private final Gemm gemm;
    private final String owner;
    private MemorySegment col = MemorySegment.NULL;
    private MemorySegment columnsChunk = MemorySegment.NULL;
    private MemorySegment filterGradT = MemorySegment.NULL;

    /** {@code owner} names the op in an out-of-memory error. */
    Convolution(Gemm gemm, String owner) {
        this.gemm = gemm;
        this.owner = owner;
    }

    /** Images per chunk. */
    static int chunk(ConvGeometry g) {
        if (g.pointwise()) {
            return 1;
        }
        long perImage = (long) g.c() * g.kh() * g.kw() * g.positions();
        long byColumns = CHUNK_COLUMNS / g.positions();
        long byBytes = CHUNK_BYTES / (perImage * Float.BYTES);
        return (int) Math.max(1, Math.min(g.n(), Math.min(byColumns, byBytes)));
    }

    private MemorySegment colFor(ConvGeometry g, int images) {
        long floats = (long) g.c() * g.kh() * g.kw() * g.positions() * images;
        if (col.byteSize() < floats * Float.BYTES) {
            col = OffHeapMemory.allocate(floats * Float.BYTES, 64, () -> owner + "'s im2col buffer");
        }
        return col;
    }

    private MemorySegment columnsFor(ConvGeometry g, int images) {
        long floats = g.f() * g.positions() * images;
        if (columnsChunk.byteSize() < floats * Float.BYTES) {
            columnsChunk = OffHeapMemory.allocate(floats * Float.BYTES, 64, () -> owner + "'s output chunk buffer");
        }
        return columnsChunk;
    }

    /**
     * For each chunk of images: the im2col matrix of {@code image}; then {@code columnsOut} = W col (when not null) and
     * {@code dw} = the sum over chunks of {@code columnsIn} colᵀ (when not null).
     */
    void fromImage(ConvGeometry g, MemorySegment image, MemorySegment w, MemorySegment columnsOut,
                   MemorySegment columnsIn, MemorySegment dw) {
        int chunk = chunk(g);
        int p = g.positions();
        for (int b0 = 0; b0 < g.n(); b0 += chunk) {
            int count = (int) Math.min(chunk, g.n() - b0);
            Matrix colM = im2col(g, image, b0, count);
            if (dw != null) {
                Matrix in = columns(g, columnsIn, b0, count, true);
                filterGradTFor(g);
                for (int gi = 0; gi < g.groups(); gi++) {
                    filterGradTransposed(g, gi, count * p, in, colM, b0 == 0 ? 0f : 1f);
                }
            }
            if (columnsOut != null) {
                Matrix out = columns(g, columnsOut, b0, count, false);
                int kg = g.groupRows();
                int fg = g.groupFilters();
                for (int gi = 0; gi < g.groups(); gi++) {
                    gemm.sgemm(false, false, fg, count * p, kg, 1f, w, (long) gi * fg * kg, kg,
                            colM.data, colM.offset + (long) gi * kg * colM.ld, colM.ld,
                            0f, out.data, out.offset + (long) gi * fg * out.ld, out.ld);
                }
                if (out.data != columnsOut) {
                    scatterColumns(g, out.data, columnsOut, b0, count);
                }
            }
        }
        if (dw != null) {
            storeFilterGrad(g, dw);
        }
    }

    /**
     * For each chunk of images: {@code imageOut} = col2im(Wᵀ {@code columns}) (when not null) and {@code dw} = the
     * sum over chunks of {@code columns} im2col({@code imageIn})ᵀ (when not null).
     */
    void toImage(ConvGeometry g, MemorySegment columns, MemorySegment w, MemorySegment imageOut,
                 MemorySegment imageIn, MemorySegment dw) {
        int chunk = chunk(g);
        int p = g.positions();
        for (int b0 = 0; b0 < g.n(); b0 += chunk) {
            int count = (int) Math.min(chunk, g.n() - b0);
            Matrix in = columns(g, columns, b0, count, true);
            if (dw != null) {
                Matrix colM = im2col(g, imageIn, b0, count);
                filterGradTFor(g);
                for (int gi = 0; gi < g.groups(); gi++) {
                    filterGradTransposed(g, gi, count * p, in, colM, b0 == 0 ? 0f : 1f);
                }
            }
            if (imageOut != null) {
                int kg = g.groupRows();
                int fg = g.groupFilters();
                Matrix target = g.pointwise() ? imageMatrix(g, imageOut, b0) : new Matrix(colFor(g, count), 0, count * p);
                for (int gi = 0; gi < g.groups(); gi++) {
                    gemm.sgemm(true, false, kg, count * p, fg, 1f, w, (long) gi * fg * kg, kg,
                            in.data, in.offset + (long) gi * fg * in.ld, in.ld,
                            0f, target.data, target.offset + (long) gi * kg * target.ld, target.ld);
                }
                if (!g.pointwise()) {
                    Im2Col.col2im(g, target.data, b0, count, imageOut);
                }
            }
        }
        if (dw != null) {
            storeFilterGrad(g, dw);
        }
    }

    /**
     * dWᵀ of group gi (+)= col columnsᵀ over the chunk's {@code width} columns, into the [groups kg, fg] scratch:
     * OpenBLAS runs this product 1.5-3x faster than dW = columns colᵀ when there are few filters (it is
     * transposed into dW once, after the last chunk).
     */
    private void filterGradTransposed(ConvGeometry g, int gi, int width, Matrix columns, Matrix colM, float beta) {
        int kg = g.groupRows();
        int fg = g.groupFilters();
        gemm.sgemm(false, true, kg, fg, width, 1f,
                colM.data, colM.offset + (long) gi * kg * colM.ld, colM.ld,
                columns.data, columns.offset + (long) gi * fg * columns.ld, columns.ld,
                beta, filterGradT, (long) gi * kg * fg, fg);
    }

    private MemorySegment filterGradTFor(ConvGeometry g) {
        long floats = g.f() * g.groupRows();
        if (filterGradT.byteSize() < floats * Float.BYTES) {
            filterGradT = OffHeapMemory.allocate(floats * Float.BYTES, 64, () -> owner + "'s filter gradient buffer");
        }
        return filterGradT;
    }

    /** dw [f, kg] = the transpose of each group's [kg, fg] block of the scratch. */
    private void storeFilterGrad(ConvGeometry g, MemorySegment dw) {
        int kg = g.groupRows();
        int fg = g.groupFilters();
        for (int gi = 0; gi < g.groups(); gi++) {
            long block = (long) gi * kg * fg;
            for (int fi = 0; fi < fg; fi++) {
                long row = (long) (gi * fg + fi) * kg;
                for (int r = 0; r < kg; r++) {
                    dw.setAtIndex(F32.F, row + r, filterGradT.getAtIndex(F32.F, block + (long) r * fg + fi));
                }
            }
        }
    }

    /** A row-major matrix in a segment: element (r, c) at float offset + r ld + c. */
    private record Matrix(MemorySegment data, long offset, int ld) {
    }

    private Matrix im2col(ConvGeometry g, MemorySegment image, int b0, int count) {
        if (g.pointwise()) {
            return imageMatrix(g, image, b0);
        }
        MemorySegment c = colFor(g, count);
        Im2Col.im2col(g, image, b0, count, c);
        return new Matrix(c, 0, count * g.positions());
    }

    /** Image b0 of a pointwise convolution as its own [c, h w] im2col matrix. */
    private static Matrix imageMatrix(ConvGeometry g, MemorySegment image, int b0) {
        return new Matrix(image, (long) b0 * g.c() * g.pixels(), g.pixels());
    }

    /**
     * The column side of images b0 .. b0 + count - 1 as one [f, count positions] matrix: the tensor itself for one
     * image, else the chunk buffer (filled from the tensor when {@code read}).
     */
    private Matrix columns(ConvGeometry g, MemorySegment t, int b0, int count, boolean read) {
        int p = g.positions();
        if (count == 1) {
            return new Matrix(t, (long) b0 * g.f() * p, p);
        }
        MemorySegment buf = columnsFor(g, count);
        if (read) {
            for (int b = 0; b < count; b++) {
                for (int fi = 0; fi < g.f(); fi++) {
                    Im2Col.copy(t, ((b0 + b) * g.f() + fi) * p, buf, (fi * count + b) * (long) p, p);
                }
            }
        }
        return new Matrix(buf, 0, count * p);
    }

    private static void scatterColumns(ConvGeometry g, MemorySegment buf, MemorySegment t, int b0, int count) {
        int p = g.positions();
        for (int b = 0; b < count; b++) {
            for (int fi = 0; fi < g.f(); fi++) {
                Im2Col.copy(buf, (fi * count + b) * (long) p, t, ((b0 + b) * g.f() + fi) * p, p);
            }
        }
    }
}
