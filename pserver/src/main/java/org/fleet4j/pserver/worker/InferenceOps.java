package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.fleet4j.core.ir.AttrType;
import org.fleet4j.core.ops.OpSpec;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.compile.PsInference;
import org.fleet4j.pserver.compile.PsOpTypes;
import org.fleet4j.pserver.table.RowInitializer;

/** {@code lookup_sparse_table}: the sparse lookup of an inference model saved in parameter-server mode ({@link PsInference}). */
final class InferenceOps {
    private InferenceOps() {
    }

    static List<OpSpec> specs() {
        return List.of(OpSpec.builder(PsOpTypes.LOOKUP_SPARSE_TABLE)
                .in("Ids", "Keys", "W")
                .out("Out")
                .attr("dim", AttrType.LONG, 0L)
                .attr("padding_idx", AttrType.LONG, -1L)
                .attr("init", AttrType.STRING, "constant")
                .attr("init_a", AttrType.FLOAT, 0f)
                .attr("init_b", AttrType.FLOAT, 0f)
                .attr("init_seed", AttrType.LONG, 0L)
                .shape(ctx -> {
                    ctx.requireInteger("Ids");
                    ctx.set("Out", DType.F32, ctx.shape("Ids")[0], ctx.op().<Long>attr("dim"));
                })
                .kernel((op, context) -> {
                    long dim = op.<Long>attr("dim");
                    long pad = op.<Long>attr("padding_idx");
                    RowInitializer init = PsInference.initializer(op);
                    return a -> {
                        Tensor ids = a.in("Ids");
                        Tensor keys = a.in("Keys");
                        MemorySegment w = a.in("W").segment();
                        MemorySegment out = a.out("Out", DType.F32, ids.numel(), dim).segment();
                        long rowBytes = dim * Float.BYTES;
                        for (long i = 0; i < ids.numel(); i++) {
                            long id = ids.getLong(i);
                            MemorySegment dst = out.asSlice(i * rowBytes, rowBytes);
                            if (id == pad) {
                                dst.fill((byte) 0);
                                continue;
                            }
                            long row = find(keys, id);
                            if (row >= 0) {
                                MemorySegment.copy(w, row * rowBytes, dst, 0, rowBytes);
                            } else {
                                init.fill(id, dst, dim);
                            }
                        }
                    };
                })
                .build());
    }

    /** The position of {@code id} in the ascending {@code keys}, or -1. */
    private static long find(Tensor keys, long id) {
        long lo = 0;
        long hi = keys.numel() - 1;
        while (lo <= hi) {
            long mid = (lo + hi) >>> 1;
            long k = keys.segment().getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, mid);
            if (k < id) {
                lo = mid + 1;
            } else if (k > id) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -1;
    }
}
