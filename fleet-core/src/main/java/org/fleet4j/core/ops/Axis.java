package org.fleet4j.core.ops;

/** Axis arithmetic the shape ops share: negative axes, and a shape seen as [outer, n, inner] around one axis. */
final class Axis {
    private Axis() {
    }

    /** A possibly negative axis (counting from the end) as an index into a shape of this rank. */
    static int normalise(int axis, int rank) {
        return axis < 0 ? axis + rank : axis;
    }

    /** {product of the dims before axis, the axis's dim, product of the dims after it}. */
    static long[] split(long[] shape, int axis) {
        int ax = normalise(axis, shape.length);
        long outer = 1;
        for (int d = 0; d < ax; d++) {
            outer *= shape[d];
        }
        long inner = 1;
        for (int d = ax + 1; d < shape.length; d++) {
            inner *= shape[d];
        }
        return new long[]{outer, shape[ax], inner};
    }
}
