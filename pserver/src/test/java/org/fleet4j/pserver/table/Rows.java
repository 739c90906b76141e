package org.fleet4j.pserver.table;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.fleet4j.core.tensor.Tensor;

/** Off-heap ids and float rows for requests, as a transport would hand them over. */
final class Rows {
    private Rows() {
    }

    static MemorySegment ids(long... ids) {
        return Tensor.ofLongs(ids, ids.length).segment();
    }

    static MemorySegment floats(float... values) {
        return Tensor.of(values, values.length).segment();
    }

    static MemorySegment zeros(long floats) {
        return Tensor.zeros(floats).segment();
    }

    static float[] toArray(MemorySegment s) {
        return s.toArray(ValueLayout.JAVA_FLOAT);
    }
}
