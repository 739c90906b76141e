package org.fleet4j.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Float comparisons of two training runs. */
final class Same {
    private Same() {
    }

    static void runs(Nets.Trained expected, Nets.Trained actual, float tol) {
        assertEquals(expected.losses().size(), actual.losses().size());
        for (int i = 0; i < expected.losses().size(); i++) {
            assertEquals(expected.losses().get(i), actual.losses().get(i), tol, "loss of step " + i);
        }
        assertEquals(expected.params().keySet(), actual.params().keySet());
        for (var e : expected.params().entrySet()) {
            float[] a = e.getValue();
            float[] b = actual.params().get(e.getKey());
            assertEquals(a.length, b.length, e.getKey());
            for (int i = 0; i < a.length; i++) {
                assertEquals(a[i], b[i], tol * Math.max(1f, Math.abs(a[i])), e.getKey() + "[" + i + "]");
            }
        }
        assertTrue(expected.losses().getLast() < expected.losses().getFirst(), "the net should learn: "
                + expected.losses());
    }
}
