package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.tensor.Tensor;

/**
 * tril_triu (Paddle's op): X with every element of its last two dims [i, j] off the kept triangle set to zero; lower
 * keeps j - i <= diagonal (tril), otherwise j - i >= diagonal (triu). Causal masks are made of it. The gradient keeps
 * the same triangle of Out's gradient.
 */
@AutoService(OpLibrary.class)
public final class TrilTriuOp implements OpLibrary {
    public static final String TRIL_TRIU = "tril_triu";

    @Override
    public List<OpSpec> specs() {
        return List.of(OpSpec.builder(TRIL_TRIU)
                .in("X").out("Out")
                .attr("diagonal", AttrType.INT, 0)
                .attr("lower", AttrType.BOOL, true)
                .shape(ctx -> {
                    if (ctx.shape("X").length < 2) {
                        throw ctx.fail("X must have rank >= 2: the triangle is over its last two dims");
                    }
                    ctx.set("Out", ctx.dtype("X"), ctx.shape("X"));
                })
                .kernel(op -> {
                    int diagonal = op.intAttr("diagonal");
                    boolean lower = op.boolAttr("lower");
                    return a -> {
                        Tensor x = a.in("X");
                        keepTriangle(x, a.outLike("Out", x), diagonal, lower);
                    };
                })
                .gradKernel(op -> {
                    int diagonal = op.intAttr("diagonal");
                    boolean lower = op.boolAttr("lower");
                    return a -> {
                        Tensor g = a.in("Out@GRAD");
                        keepTriangle(g, a.outLike("X@GRAD", g), diagonal, lower);
                    };
                })
                .build());
    }

    /** out = x on the kept triangle of each matrix of the last two dims, 0 elsewhere; row by row. */
    static void keepTriangle(Tensor x, Tensor out, int diagonal, boolean lower) {
        long rows = x.dim(-2);
        long cols = x.dim(-1);
        long matrices = x.numel() / Math.max(1, rows * cols);
        int bytes = x.dtype().byteSize();
        MemorySegment src = x.segment();
        MemorySegment dst = out.segment();
        for (long m = 0; m < matrices; m++) {
            for (long i = 0; i < rows; i++) {
                long row = (m * rows + i) * cols * bytes;
                // kept columns: [0, i + diagonal] when lower, [i + diagonal, cols) otherwise
                long from = lower ? 0 : Math.max(0, Math.min(cols, i + diagonal));
                long to = lower ? Math.max(0, Math.min(cols, i + diagonal + 1)) : cols;
                MemorySegment.copy(src, row + from * bytes, dst, row + from * bytes, (to - from) * bytes);
                dst.asSlice(row, from * bytes).fill((byte) 0);
                dst.asSlice(row + to * bytes, (cols - to) * bytes).fill((byte) 0);
            }
        }
    }
}
