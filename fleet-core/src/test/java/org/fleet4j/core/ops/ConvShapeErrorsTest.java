package org.fleet4j.core.ops;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.fleet4j.core.ir.Block;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.tensor.DType;
import org.junit.jupiter.api.Test;

/**
 * Shape inference of the convolution, pooling and normalisation ops: output shapes (batch unknown until run time), and
 * errors that name the op, its inputs with their shapes, and what to change.
 */
class ConvShapeErrorsTest {
    private final Program p = new Program();
    private final Block b = p.globalBlock();

    private void var(String name, long... shape) {
        b.createVar(name, DType.F32, shape).setData(true);
    }

    private long[] conv(String type, Map<String, Object> attrs) {
        b.appendOp(type, Map.of("Input", List.of("x"), "Filter", List.of("w")), Map.of("Output", List.of("y")), attrs);
        return b.var("y").shape();
    }

    private String error(Runnable r) {
        return assertThrows(IrException.class, r::run).getMessage();
    }

    private static void contains(String expected, String actual) {
        assertTrue(actual.contains(expected), "expected \"" + expected + "\" in: " + actual);
    }

    @Test
    void convOutputShapes() {
        var("x", -1, 3, 28, 28);
        var("w", 8, 3, 3, 3);
        assertArrayEquals(new long[]{-1, 8, 14, 14}, conv(ConvOps.CONV2D, Map.of("strides", new int[]{2, 2},
                "paddings", new int[]{1, 1})));
        var("t", -1, 8, 14, 14);
        var("tw", 8, 3, 3, 3);
        b.appendOp(ConvOps.CONV2D_TRANSPOSE, Map.of("Input", List.of("t"), "Filter", List.of("tw")),
                Map.of("Output", List.of("u")), Map.of("strides", new int[]{2, 2}, "paddings", new int[]{1, 1},
                        "output_padding", new int[]{1, 1}));
        assertArrayEquals(new long[]{-1, 3, 28, 28}, b.var("u").shape(), "the transpose inverts the shape");
    }

    @Test
    void aKernelLargerThanItsPaddedInput() {
        var("x", 2, 3, 4, 4);
        var("w", 8, 3, 7, 3);
        String m = error(() -> conv(ConvOps.CONV2D, Map.of("paddings", new int[]{1, 1})));
        assertEquals("op #0 conv2d(Input=x float32[2, 3, 4, 4], Filter=w float32[8, 3, 7, 3]): the kernel's height 7 is"
                + " larger than the padded input's 6 (4 + paddings 1 and 1); use a smaller kernel or dilation, or more"
                + " padding", m);
    }

    @Test
    void groupsThatDoNotDivideTheChannels() {
        var("x", 2, 6, 8, 8);
        var("w", 8, 2, 3, 3);
        contains("groups 4 does not divide Input's 6 channels", error(() -> conv(ConvOps.CONV2D, Map.of("groups", 4))));
    }

    @Test
    void aFilterOfTheWrongChannels() {
        var("x", 2, 6, 8, 8);
        var("w", 8, 6, 3, 3);
        contains("Filter dimension 1 is 6 but Input has 6 channels in 2 group(s): it must be 3 (channels / groups)",
                error(() -> conv(ConvOps.CONV2D, Map.of("groups", 2))));
    }

    @Test
    void anInputThatIsNot4d() {
        var("x", -1, 784);
        var("w", 6, 1, 5, 5);
        contains("Input must be 4-D (NCHW), is [-1, 784]; reshape [N, C*H*W] data to [N, C, H, W] first",
                error(() -> conv(ConvOps.CONV2D, Map.of())));
    }

    @Test
    void depthwiseNeedsGroupsEqualToChannels() {
        var("x", 2, 4, 8, 8);
        var("w", 8, 2, 3, 3);
        contains("depthwise_conv2d needs groups equal to Input's 4 channels (groups is 2)",
                error(() -> conv(ConvOps.DEPTHWISE_CONV2D, Map.of("groups", 2))));
    }

    @Test
    void badPaddingAlgorithmAndOutputPadding() {
        var("x", 2, 4, 8, 8);
        var("w", 4, 4, 3, 3);
        contains("padding_algorithm 'SAMe' is not EXPLICIT, SAME or VALID",
                error(() -> conv(ConvOps.CONV2D, Map.of("padding_algorithm", "SAMe"))));
        contains("output_padding [2, 2] must be >= 0 and smaller than the stride or the dilation",
                error(() -> conv(ConvOps.CONV2D_TRANSPOSE, Map.of("strides", new int[]{2, 2},
                        "output_padding", new int[]{2, 2}))));
    }

    @Test
    void poolShapesAndAWindowTooLarge() {
        var("x", -1, 3, 7, 7);
        b.appendOp(PoolOps.POOL2D, Map.of("X", List.of("x")), Map.of("Out", List.of("o")),
                Map.of("ksize", new int[]{2, 2}, "strides", new int[]{2, 2}, "ceil_mode", true));
        assertArrayEquals(new long[]{-1, 3, 4, 4}, b.var("o").shape());
        b.appendOp(PoolOps.POOL2D, Map.of("X", List.of("x")), Map.of("Out", List.of("g")),
                Map.of("ksize", new int[]{1, 1}, "global_pooling", true));
        assertArrayEquals(new long[]{-1, 3, 1, 1}, b.var("g").shape());
        String m = error(() -> b.appendOp(PoolOps.POOL2D, Map.of("X", List.of("x")), Map.of("Out", List.of("bad")),
                Map.of("ksize", new int[]{9, 2})));
        contains("op #2 pool2d(X=x float32[-1, 3, 7, 7]): the pooling window's height 9 is larger than the padded"
                + " input's 7", m);
        contains("pooling_type 'mean' is not max or avg", error(() -> b.appendOp(PoolOps.POOL2D,
                Map.of("X", List.of("x")), Map.of("Out", List.of("bad")),
                Map.of("ksize", new int[]{2, 2}, "pooling_type", "mean"))));
    }

    @Test
    void groupNormGroupsMustDivideTheChannels() {
        var("x", 2, 6, 4, 4);
        contains("groups 4 does not divide X's 6 channels; pick a divisor of 6", error(() -> b.appendOp(
                GroupNormOp.GROUP_NORM, Map.of("X", List.of("x")), Map.of("Y", List.of("y"), "Mean", List.of("m"),
                        "Variance", List.of("v")), Map.of("groups", 4))));
    }
}
