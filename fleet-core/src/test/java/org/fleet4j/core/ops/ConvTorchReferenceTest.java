package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import org.fleet4j.core.autodiff.GradientChecker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The convolution, pooling and normalisation ops, forward and backward, against PyTorch on random inputs (float64 the
 * yardstick), all cases in one Python run.
 */
class ConvTorchReferenceTest {
    @TempDir
    Path dir;

    private static GradientChecker conv(long seed, long[] x, long[] w) {
        return GradientChecker.forOp(ConvOps.CONV2D).input("Input", uniform(seed, x)).input("Filter", uniform(seed + 1, w));
    }

    private static long[] s(long... dims) {
        return dims;
    }

    @Test
    void opsMatchPyTorch() {
        TorchOpCheck.cases()
                .add("conv_plain", conv(1, s(4, 3, 9, 8), s(5, 3, 3, 3)), "F.conv2d(Input, Filter)")
                .add("conv_stride_pad", conv(3, s(4, 3, 9, 8), s(5, 3, 3, 3)).attr("strides", new int[]{2, 1})
                        .attr("paddings", new int[]{1, 2}), "F.conv2d(Input, Filter, stride=(2, 1), padding=(1, 2))")
                .add("conv_asymmetric", conv(5, s(3, 2, 8, 7), s(4, 2, 3, 3)).attr("paddings", new int[]{2, 0, 1, 3}),
                        "F.conv2d(F.pad(Input, (1, 3, 2, 0)), Filter)")
                .add("conv_same_stride2", conv(7, s(2, 3, 9, 8), s(4, 3, 3, 3)).attr("strides", new int[]{2, 2})
                        .attr("padding_algorithm", "SAME"), "F.conv2d(F.pad(Input, (0, 1, 1, 1)), Filter, stride=2)")
                .add("conv_valid", conv(9, s(2, 3, 8, 8), s(4, 3, 3, 3)).attr("paddings", new int[]{5, 5})
                        .attr("padding_algorithm", "VALID"), "F.conv2d(Input, Filter)")
                .add("conv_dilated", conv(11, s(2, 3, 11, 10), s(4, 3, 3, 2)).attr("dilations", new int[]{2, 3})
                        .attr("paddings", new int[]{1, 2}), "F.conv2d(Input, Filter, padding=(1, 2), dilation=(2, 3))")
                .add("conv_groups", conv(13, s(3, 4, 7, 7), s(6, 2, 3, 3)).attr("groups", 2)
                        .attr("paddings", new int[]{1, 1}), "F.conv2d(Input, Filter, padding=1, groups=2)")
                .add("conv_pointwise", conv(15, s(5, 8, 6, 6), s(16, 8, 1, 1)), "F.conv2d(Input, Filter)")
                .add("conv_resnet_block", conv(17, s(16, 16, 14, 14), s(32, 16, 3, 3)).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 1}), "F.conv2d(Input, Filter, stride=2, padding=1)")
                .check(dir);
    }

    @Test
    void aPaddingOffByOneIsCaught() {
        var m = TorchOpCheck.cases()
                .add("conv_pad_off_by_one", conv(3, s(4, 3, 9, 8), s(5, 3, 3, 3)).attr("paddings", new int[]{1, 1})
                        .attr("padding_algorithm", "EXPLICIT"), "F.conv2d(F.pad(Input, (1, 1, 2, 0)), Filter)")
                .measure(dir);
        assertFalse(m.stream().allMatch(TorchOpCheck.Measurement::passed), "one row of padding moved: " + m);
    }
}
