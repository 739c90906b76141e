package org.fleet4j.core.ops;

import com.google.auto.service.AutoService;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ir.VarKind;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;

/**
 * lookup_table (embedding): Out[i] = W[Ids[i]] for a [vocab, dim] table and ids [N] or [N, 1]. The row of
 * padding_idx (-1: none) reads as zeros and gets no gradient. The gradient of W is a dense [vocab, dim]
 * scatter-add, or with is_sparse a {@link SelectedRows} holding only the looked-up rows.
 */
@AutoService(OpLibrary.class)
public final class LookupTableOp implements OpLibrary {
    public static final String LOOKUP_TABLE = "lookup_table";

    @Override
    public List<OpSpec> specs() {
        List<OpSpec> specs = new ArrayList<>();
        specs.add(OpSpec.builder(LOOKUP_TABLE)
                .in("W", "Ids").out("Out")
                .noGrad("Ids")
                .attr("is_sparse", AttrType.BOOL, false)
                .attr("padding_idx", AttrType.LONG, -1L)
                .shape(ctx -> {
                    ctx.requireFloat("W");
                    ctx.requireRank("W", 2);
                    ctx.requireInteger("Ids");
                    long[] w = ctx.shape("W");
                    long[] ids = ctx.shape("Ids");
                    if (ids.length != 1 && !(ids.length == 2 && ids[1] == 1)) {
                        throw ctx.fail("Ids must be [N] or [N, 1]");
                    }
                    long pad = ctx.op().<Long>attr("padding_idx");
                    if (pad < -1 || (w[0] >= 0 && pad >= w[0])) {
                        throw ctx.fail("padding_idx " + pad + " is not -1 (none) or a row of W [0, " + w[0] + ")");
                    }
                    ctx.set("Out", ctx.dtype("W"), ids[0], w[1]);
                })
                .kernel(op -> {
                    long pad = op.<Long>attr("padding_idx");
                    return a -> {
                        Tensor w = a.in("W");
                        Tensor ids = a.in("Ids");
                        long n = ids.numel();
                        long vocab = w.dim(0);
                        long rowBytes = w.dim(1) * w.dtype().byteSize();
                        Tensor out = a.out("Out", w.dtype(), n, w.dim(1));
                        MemorySegment os = out.segment();
                        for (long i = 0; i < n; i++) {
                            long id = ids.getLong(i);
                            if (id == pad) {
                                os.asSlice(i * rowBytes, rowBytes).fill((byte) 0);
                                continue;
                            }
                            checkId(id, i, vocab);
                            MemorySegment.copy(w.segment(), id * rowBytes, os, i * rowBytes, rowBytes);
                        }
                    };
                })
                .gradKernel(op -> op.boolAttr("is_sparse") ? new SparseGrad(op.<Long>attr("padding_idx"))
                        : denseGrad(op.<Long>attr("padding_idx")))
                .gradShape(ctx -> {
                    if (ctx.op().boolAttr("is_sparse")) {
                        ctx.setKind("W@GRAD", VarKind.SELECTED_ROWS);
                    }
                })
                .build());
        return specs;
    }

    static void checkId(long id, long position, long vocab) {
        if (id < 0 || id >= vocab) {
            throw new IllegalArgumentException("id " + id + " at position " + position
                    + " is outside the vocabulary of size " + vocab + " (ids must be in [0, " + vocab + "))");
        }
    }

    private static Kernel denseGrad(long pad) {
        return a -> {
            Tensor w = a.in("W");
            Tensor ids = a.in("Ids");
            Tensor g = a.in("Out@GRAD");
            Tensor gw = a.outLike("W@GRAD", w);
            gw.fill(0);
            long dim = w.dim(1);
            for (long i = 0; i < ids.numel(); i++) {
                long id = ids.getLong(i);
                if (id == pad) {
                    continue;
                }
                checkId(id, i, w.dim(0));
                if (w.dtype() == DType.F32) {
                    F32.accumulate(gw.segment().asSlice(id * dim * 4, dim * 4), g.segment().asSlice(i * dim * 4, dim * 4), dim);
                } else {
                    for (long j = 0; j < dim; j++) {
                        gw.setDouble(id * dim + j, gw.getDouble(id * dim + j) + g.getDouble(i * dim + j));
                    }
                }
            }
        };
    }

    /**
     * Rows = the ids (padding ids left out), values = the matching rows of Out's gradient; without padding the
     * values are Out's gradient itself, otherwise a buffer kept and reused while its size stays the same.
     */
    static final class SparseGrad implements Kernel {
        private final long pad;
        private Tensor rows;
        private Tensor values;

        SparseGrad(long pad) {
            this.pad = pad;
        }

        @Override
        public void run(KernelArgs a) {
            Tensor w = a.in("W");
            Tensor ids = a.in("Ids");
            Tensor g = a.in("Out@GRAD");
            long n = ids.numel();
            long dim = w.dim(1);
            long kept = 0;
            for (long i = 0; i < n; i++) {
                long id = ids.getLong(i);
                if (id != pad) {
                    checkId(id, i, w.dim(0));
                    kept++;
                }
            }
            if (rows == null || rows.numel() != kept) {
                rows = Tensor.zeros(DType.I64, kept);
            }
            Tensor v = g;
            if (kept != n) {
                if (values == null || !values.hasShape(kept, dim) || values.dtype() != g.dtype()) {
                    values = Tensor.zeros(g.dtype(), kept, dim);
                }
                v = values;
            }
            long rowBytes = dim * g.dtype().byteSize();
            long k = 0;
            for (long i = 0; i < n; i++) {
                long id = ids.getLong(i);
                if (id == pad) {
                    continue;
                }
                rows.setLong(k, id);
                if (v != g) {
                    MemorySegment.copy(g.segment(), i * rowBytes, v.segment(), k * rowBytes, rowBytes);
                }
                k++;
            }
            a.setOut("W@GRAD", new SelectedRows(rows, v, w.dim(0)));
        }
    }
}
