package org.fleet4j.core.exec;

import java.util.Arrays;
import org.fleet4j.core.ops.SelectedRows;
import org.fleet4j.core.tensor.Tensor;

/**
 * Which vars of a frame share memory. Two var names can be one buffer: an in-place kernel's output, a reshape's view,
 * the gradients that fuse_all_reduce_ops made views of one bucket. Vars whose bytes overlap (transitively) form one
 * class; the dependency graph orders reads and writes per class, so a write through one name is ordered against a
 * read through another. Read from the values in the frame: sharing is decided by the kernels (views, reuse of an
 * output's buffer), so what a run shows holds for the next.
 */
final class StorageClasses {
    private StorageClasses() {
    }

    /** The class of every slot: the smallest slot index of its class (a slot without memory is its own class). */
    static int[] of(Object[] frame) {
        int n = frame.length;
        long[][] ranges = new long[n][];
        int count = 0;
        for (int s = 0; s < n; s++) {
            Tensor t = storageOf(frame[s]);
            if (t != null && t.byteSize() > 0) {
                long start = t.segment().address();
                ranges[count++] = new long[]{start, start + t.byteSize(), s};
            }
        }
        long[][] sorted = Arrays.copyOf(ranges, count);
        Arrays.sort(sorted, (a, b) -> Long.compare(a[0], b[0]));
        int[] parent = new int[n];
        for (int s = 0; s < n; s++) {
            parent[s] = s;
        }
        long end = Long.MIN_VALUE;
        int open = -1;
        for (long[] r : sorted) {
            int slot = (int) r[2];
            if (r[0] < end) {
                union(parent, open, slot);
            } else {
                open = slot;
            }
            end = Math.max(end, r[1]);
        }
        int[] classOf = new int[n];
        for (int s = 0; s < n; s++) {
            classOf[s] = find(parent, s);
        }
        return classOf;
    }

    /** The coarsest classes of both: slots that share memory in either share a class in the result. */
    static int[] merge(int[] a, int[] b) {
        int[] parent = new int[a.length];
        for (int s = 0; s < a.length; s++) {
            parent[s] = s;
        }
        for (int s = 0; s < a.length; s++) {
            union(parent, s, a[s]);
            union(parent, s, b[s]);
        }
        int[] classOf = new int[a.length];
        for (int s = 0; s < a.length; s++) {
            classOf[s] = find(parent, s);
        }
        return classOf;
    }

    /** The tensor whose bytes a value occupies; the values of a sparse gradient stand for it. */
    private static Tensor storageOf(Object value) {
        return switch (value) {
            case Tensor t -> t;
            case SelectedRows rows -> rows.values();
            case null, default -> null;
        };
    }

    private static int find(int[] parent, int s) {
        while (parent[s] != s) {
            parent[s] = parent[parent[s]];
            s = parent[s];
        }
        return s;
    }

    private static void union(int[] parent, int a, int b) {
        int ra = find(parent, a);
        int rb = find(parent, b);
        if (ra != rb) {
            parent[Math.max(ra, rb)] = Math.min(ra, rb);
        }
    }
}
