package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.distinct;
import static org.fleet4j.core.ops.TestTensors.range;
import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.fleet4j.core.autodiff.GradientChecker;
import org.fleet4j.core.autodiff.GradientChecker.Result;
import org.fleet4j.core.ops.fused.FusedReluDepthwiseConvOp;
import org.fleet4j.core.tensor.Tensor;
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

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // case | n c h w | multiplier kh kw | strides | paddings | dilations
            "3x3 same size    | 2 3 5 6 | 1 3 3 | 1 1 | 1 1     | 1 1",
            "multiplier 2     | 2 2 5 5 | 2 3 3 | 2 2 | 1 0 2 1 | 1 1",
            "dilated, strided | 1 3 7 7 | 1 3 2 | 2 1 | 2 1     | 2 2",
    })
    void depthwiseConv2d(String name, String x, String filter, String strides, String paddings, String dilations) {
        int[] xs = ints(x);
        int[] fs = ints(filter);
        check(GradientChecker.forOp(ConvOps.DEPTHWISE_CONV2D)
                .input("Input", uniform(3, xs[0], xs[1], xs[2], xs[3]))
                .input("Filter", uniform(4, (long) xs[1] * fs[0], 1, fs[1], fs[2]))
                .attr("strides", ints(strides)).attr("paddings", ints(paddings)).attr("dilations", ints(dilations))
                .attr("groups", xs[1]));
    }

    /**
     * relu fused into the depthwise convolution: Input away from relu's kink (|x| >= 0.1, both signs), so that finite
     * differences of step 1e-3 never cross it; over the same attributes as depthwise_conv2d's own check.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // case | n c h w | multiplier kh kw | strides | paddings | dilations
            "3x3 same size    | 2 3 5 6 | 1 3 3 | 1 1 | 1 1     | 1 1",
            "multiplier 2     | 2 2 5 5 | 2 3 3 | 2 2 | 1 0 2 1 | 1 1",
            "dilated, strided | 1 3 7 7 | 1 3 2 | 2 1 | 2 1     | 2 2",
    })
    void fusedReluDepthwiseConv(String name, String x, String filter, String strides, String paddings, String dilations) {
        int[] xs = ints(x);
        int[] fs = ints(filter);
        Result r = check(GradientChecker.forOp(FusedReluDepthwiseConvOp.TYPE)
                .input("Input", TestTensors.awayFromZero(5, xs[0], xs[1], xs[2], xs[3]))
                .input("Filter", uniform(6, (long) xs[1] * fs[0], 1, fs[1], fs[2]))
                .attr("strides", ints(strides)).attr("paddings", ints(paddings)).attr("dilations", ints(dilations))
                .attr("groups", xs[1]));
        assertEquals(2, r.inputs().size(), "Input and Filter are checked");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // case | n c h w | out kh kw | strides | paddings | algorithm | dilations | groups | output_padding
            "stride 2             | 2 3 3 4 | 2 3 3 | 2 2 | 0 0     | EXPLICIT | 1 1 | 1 | ",
            "padded, out padding  | 2 2 3 3 | 3 3 3 | 2 2 | 1 1     | EXPLICIT | 1 1 | 1 | 1 0",
            "asymmetric, dilated  | 1 2 4 3 | 2 2 3 | 1 2 | 1 0 0 1 | EXPLICIT | 2 1 | 1 | ",
            "groups               | 2 4 3 3 | 6 3 3 | 1 1 | 1 1     | EXPLICIT | 1 1 | 2 | ",
            "SAME                 | 1 2 3 4 | 3 3 3 | 2 2 | 0 0     | SAME     | 1 1 | 1 | ",
            "VALID, many images   | 7 2 2 2 | 2 2 2 | 1 1 | 1 1     | VALID    | 1 1 | 1 | ",
    })
    void conv2dTranspose(String name, String x, String filter, String strides, String paddings, String algorithm,
                         String dilations, int groups, String outputPadding) {
        int[] xs = ints(x);
        int[] fs = ints(filter);
        check(GradientChecker.forOp(ConvOps.CONV2D_TRANSPOSE)
                .input("Input", uniform(5, xs[0], xs[1], xs[2], xs[3]))
                .input("Filter", uniform(6, xs[1], fs[0] / groups, fs[1], fs[2]))
                .attr("strides", ints(strides)).attr("paddings", ints(paddings)).attr("padding_algorithm", algorithm)
                .attr("dilations", ints(dilations)).attr("groups", groups)
                .attr("output_padding", ints(outputPadding == null ? "" : outputPadding)));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            // case | type | n c h w | ksize | strides | paddings | algorithm | ceil | exclusive | global | adaptive
            "max 2x2 stride 2         | max | 2 2 4 6 | 2 2 | 2 2 | 0 0     | EXPLICIT | false | true  | false | false",
            "max overlapping, padded  | max | 1 2 5 5 | 3 3 | 2 2 | 1 1     | EXPLICIT | false | true  | false | false",
            "max ceil mode            | max | 2 1 5 7 | 2 3 | 2 2 | 0 0     | EXPLICIT | true  | true  | false | false",
            "avg exclusive, asymmetric| avg | 1 2 5 6 | 3 2 | 2 2 | 1 0 1 1 | EXPLICIT | false | true  | false | false",
            "avg inclusive            | avg | 1 2 5 5 | 3 3 | 2 2 | 1 1     | EXPLICIT | false | false | false | false",
            "avg ceil mode            | avg | 1 2 5 5 | 2 2 | 2 2 | 0 0     | EXPLICIT | true  | true  | false | false",
            "avg SAME                 | avg | 1 2 5 6 | 3 3 | 2 2 | 0 0     | SAME     | false | true  | false | false",
            "max VALID                | max | 1 2 5 6 | 2 2 | 2 2 | 1 1     | VALID    | false | true  | false | false",
            "avg global               | avg | 2 3 4 5 | 1 1 | 1 1 | 0 0     | EXPLICIT | false | true  | true  | false",
            "max global               | max | 2 3 4 5 | 1 1 | 1 1 | 0 0     | EXPLICIT | false | true  | true  | false",
            "avg adaptive             | avg | 2 2 7 5 | 3 2 | 1 1 | 0 0     | EXPLICIT | false | true  | false | true",
            "max adaptive             | max | 1 2 7 5 | 3 2 | 1 1 | 0 0     | EXPLICIT | false | true  | false | true",
    })
    void pool2d(String name, String type, String x, String ksize, String strides, String paddings, String algorithm,
                boolean ceil, boolean exclusive, boolean global, boolean adaptive) {
        int[] xs = ints(x);
        check(GradientChecker.forOp(PoolOps.POOL2D).input("X", distinct(7, xs[0], xs[1], xs[2], xs[3]))
                .attr("pooling_type", type).attr("ksize", ints(ksize)).attr("strides", ints(strides))
                .attr("paddings", ints(paddings)).attr("padding_algorithm", algorithm).attr("ceil_mode", ceil)
                .attr("exclusive", exclusive).attr("global_pooling", global).attr("adaptive", adaptive));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "NCHW train | 3 4 3 2 | false",
            "NCHW test  | 2 3 2 3 | true",
            "NCHW train, runs longer than a vector | 2 3 5 5 | false",
    })
    void batchNormNchw(String name, String x, boolean isTest) {
        int[] xs = ints(x);
        int c = xs[1];
        check(GradientChecker.forOp("batch_norm").input("X", uniform(8, xs[0], c, xs[2], xs[3]))
                .input("Scale", range(9, 0.5, 1.5, c)).input("Bias", uniform(10, c))
                .input("Mean", uniform(11, c)).input("Variance", range(12, 0.5, 1.5, c)).attr("is_test", isTest));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "2 groups of 2    | 2 4 3 2 | 2",
            "one per channel  | 2 3 2 2 | 3",
            "one group, [N,C] | 3 6 1 1 | 1",
            "runs longer than a vector | 2 2 5 4 | 1",
    })
    void groupNorm(String name, String x, int groups) {
        int[] xs = ints(x);
        int c = xs[1];
        Tensor input = xs[2] == 1 ? uniform(13, xs[0], c) : uniform(13, xs[0], c, xs[2], xs[3]);
        Result r = check(GradientChecker.forOp(GroupNormOp.GROUP_NORM).input("X", input)
                .input("Scale", range(14, 0.5, 1.5, c)).input("Bias", uniform(15, c)).attr("groups", groups)
                .attr("epsilon", 1e-4f));
        assertEquals(3, r.inputs().size(), "X, Scale and Bias are checked");
    }
}
