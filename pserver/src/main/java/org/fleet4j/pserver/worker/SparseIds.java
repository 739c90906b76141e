package org.fleet4j.pserver.worker;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.pserver.table.LongIndex;

/**
 * A batch's ids reduced to the distinct ones, in order of first appearance: {@code unique} (int64), and for each
 * position of the batch the index of its id in {@code unique} (-1 for the padding id, which reads as zeros and gets
 * no gradient). A pull asks the servers for each distinct id once and {@link #gather gathers} rows back to the
 * batch's positions; a push {@link #merge merges} the gradients of duplicate ids, so each id crosses the wire once.
 */
public record SparseIds(Tensor unique, int[] index) {
    private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;

    /** The distinct ids of {@code ids} ([N] or [N, 1], int64), leaving out {@code paddingIdx} (-1: none). */
    public static SparseIds of(Tensor ids, long paddingIdx) {
        int n = Math.toIntExact(ids.numel());
        int[] index = new int[n];
        long[] seen = new long[n];
        LongIndex positions = new LongIndex(n);
        int count = 0;
        for (int i = 0; i < n; i++) {
            long id = ids.getLong(i);
            if (id == paddingIdx) {
                index[i] = -1;
                continue;
            }
            int at = positions.putIfAbsent(id, count);
            if (at < 0) {
                seen[count] = id;
                at = count++;
            }
            index[i] = at;
        }
        Tensor unique = Tensor.zeros(DType.I64, count);
        MemorySegment.copy(MemorySegment.ofArray(seen), 0, unique.segment(), 0, (long) count * Long.BYTES);
        return new SparseIds(unique, index);
    }

    public int count() {
        return Math.toIntExact(unique.numel());
    }

    /** out[i] = rows[index[i]] (zeros for padding); rows and out hold {@code dim} floats per row. */
    public void gather(MemorySegment rows, MemorySegment out, long dim) {
        long rowBytes = dim * Float.BYTES;
        for (int i = 0; i < index.length; i++) {
            if (index[i] < 0) {
                out.asSlice(i * rowBytes, rowBytes).fill((byte) 0);
            } else {
                MemorySegment.copy(rows, index[i] * rowBytes, out, i * rowBytes, rowBytes);
            }
        }
    }

    /**
     * The gradients of the batch's positions ({@code grads}: N rows of {@code dim} floats) summed per distinct id,
     * in batch order, into a new [count, dim] tensor.
     */
    public Tensor merge(MemorySegment grads, long dim) {
        Tensor sums = Tensor.zeros(DType.F32, count(), dim);
        MemorySegment s = sums.segment();
        for (int i = 0; i < index.length; i++) {
            if (index[i] < 0) {
                continue;
            }
            long dst = index[i] * dim;
            long src = i * dim;
            for (long j = 0; j < dim; j++) {
                s.setAtIndex(F, dst + j, s.getAtIndex(F, dst + j) + grads.getAtIndex(F, src + j));
            }
        }
        return sums;
    }
}
