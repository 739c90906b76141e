package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.autodiff.GradientChecker.Result;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The gradients of the convolution, pooling and normalisation ops against finite differences, over their attributes. */
class ConvGradientCheckTest {
    private static Result check(GradientChecker c) {
        return c.check();
    }

    private static int[] ints(String s) {
        if (s.isBlank()) {
            return new int[0];
        }
        String[] parts = s.trim().split(" ");
        int[] v = new int[parts.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = Integer.parseInt(parts[i]);
        }
        return v;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // case | n c h w | f kh kw | strides | paddings | algorithm | dilations | groups
            "plain 3x3            | 2 3 5 6 | 4 3 3 | 1 1 | 0 0     | EXPLICIT | 1 1 | 1",
            "padded, strided      | 2 2 6 5 | 3 3 3 | 2 2 | 1 1     | EXPLICIT | 1 1 | 1",
            "asymmetric padding   | 1 2 5 5 | 2 3 2 | 1 2 | 1 0 2 1 | EXPLICIT | 1 1 | 1",
            "SAME, stride 2       | 2 2 5 6 | 3 3 3 | 2 2 | 0 0     | SAME     | 1 1 | 1",
            "SAME ignores dilation| 1 2 5 5 | 2 2 3 | 1 1 | 0 0     | SAME     | 2 2 | 1",
            "VALID drops paddings | 1 2 6 6 | 2 3 3 | 2 1 | 3 3     | VALID    | 1 1 | 1",
            "dilated              | 2 2 7 6 | 3 3 2 | 1 1 | 2 1     | EXPLICIT | 2 3 | 1",
            "groups               | 2 4 5 5 | 6 3 3 | 1 1 | 1 1     | EXPLICIT | 1 1 | 2",
            "groups = channels    | 2 3 5 5 | 6 3 3 | 2 1 | 1 1     | EXPLICIT | 1 1 | 3",
            "pointwise            | 3 4 3 4 | 5 1 1 | 1 1 | 0 0     | EXPLICIT | 1 1 | 1",
            "pointwise, strided   | 2 3 5 5 | 4 1 1 | 2 2 | 0 0     | EXPLICIT | 1 1 | 1",
            "many images a chunk  | 9 2 3 3 | 3 2 2 | 1 1 | 0 0     | EXPLICIT | 1 1 | 1",
    })
    void conv2d(String name, String x, String filter, String strides, String paddings, String algorithm,
                String dilations, int groups) {
        int[] xs = ints(x);
        int[] fs = ints(filter);
        Result r = check(GradientChecker.forOp(ConvOps.CONV2D)
                .input("Input", uniform(1, xs[0], xs[1], xs[2], xs[3]))
                .input("Filter", uniform(2, fs[0], xs[1] / groups, fs[1], fs[2]))
                .attr("strides", ints(strides)).attr("paddings", ints(paddings)).attr("padding_algorithm", algorithm)
                .attr("dilations", ints(dilations)).attr("groups", groups));
        assertEquals(2, r.inputs().size(), "Input and Filter are checked");
    }
}
