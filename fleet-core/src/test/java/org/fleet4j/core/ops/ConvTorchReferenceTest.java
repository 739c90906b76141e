package org.fleet4j.core.ops;

import static org.fleet4j.core.ops.TestTensors.distinct;
import static org.fleet4j.core.ops.TestTensors.range;
import static org.fleet4j.core.ops.TestTensors.uniform;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import org.fleet4j.core.autodiff.GradientChecker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The convolution, pooling and normalisation ops, forward and backward, against PyTorch on random inputs (float64 the
 * yardstick), every case in one Python run. Paddle's attributes that PyTorch has no argument for are spelled out in
 * the reference: asymmetric and SAME paddings as an explicit F.pad, exclusive averages as a sum over a count.
 */
class ConvTorchReferenceTest {
    @TempDir
    Path dir;

    private static long[] s(long... dims) {
        return dims;
    }

    private static GradientChecker conv(String type, long seed, long[] x, long[] w) {
        return GradientChecker.forOp(type).input("Input", uniform(seed, x)).input("Filter", uniform(seed + 1, w));
    }

    private static GradientChecker conv(long seed, long[] x, long[] w) {
        return conv(ConvOps.CONV2D, seed, x, w);
    }

    private static GradientChecker pool(String type, long seed, long[] x, int... ksize) {
        return GradientChecker.forOp(PoolOps.POOL2D).input("X", distinct(seed, x)).attr("pooling_type", type)
                .attr("ksize", ksize);
    }

    private static GradientChecker batchNorm(long seed, long[] x, boolean isTest) {
        long c = x[1];
        return GradientChecker.forOp("batch_norm").input("X", uniform(seed, x)).input("Scale", range(seed + 1, 0.5, 1.5, c))
                .input("Bias", uniform(seed + 2, c)).input("Mean", uniform(seed + 3, c))
                .input("Variance", range(seed + 4, 0.5, 1.5, c)).attr("is_test", isTest);
    }

    /** Paddle's exclusive average over a padded input: the sum of each window over its count of unpadded pixels. */
    private static String exclusiveAvg(String pad, String k, String stride) {
        return "F.avg_pool2d(F.pad(X, " + pad + "), " + k + ", " + stride + ", divisor_override=1) / "
                + "F.avg_pool2d(F.pad(torch.ones_like(X), " + pad + "), " + k + ", " + stride + ", divisor_override=1)";
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
                .add("conv_groups_are_channels", conv(14, s(2, 4, 6, 6), s(8, 1, 3, 3)).attr("groups", 4)
                        .attr("strides", new int[]{2, 2}), "F.conv2d(Input, Filter, stride=2, groups=4)")
                .add("conv_pointwise", conv(15, s(5, 8, 6, 6), s(16, 8, 1, 1)), "F.conv2d(Input, Filter)")
                .add("conv_pointwise_stride2", conv(16, s(4, 8, 7, 7), s(16, 8, 1, 1)).attr("strides", new int[]{2, 2}),
                        "F.conv2d(Input, Filter, stride=2)")
                .add("conv_lenet_c1", conv(17, s(4, 1, 28, 28), s(6, 1, 5, 5)).attr("paddings", new int[]{2, 2}),
                        "F.conv2d(Input, Filter, padding=2)")
                .add("conv_resnet_down", conv(19, s(4, 16, 14, 14), s(32, 16, 3, 3)).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 1}), "F.conv2d(Input, Filter, stride=2, padding=1)")
                .add("depthwise", conv(ConvOps.DEPTHWISE_CONV2D, 21, s(3, 4, 8, 7), s(8, 1, 3, 3)).attr("groups", 4)
                        .attr("paddings", new int[]{1, 1}), "F.conv2d(Input, Filter, padding=1, groups=4)")
                .add("depthwise_strided_dilated", conv(ConvOps.DEPTHWISE_CONV2D, 23, s(2, 3, 9, 9), s(3, 1, 3, 3))
                        .attr("groups", 3).attr("strides", new int[]{2, 2}).attr("dilations", new int[]{2, 2})
                        .attr("paddings", new int[]{2, 2}), "F.conv2d(Input, Filter, stride=2, padding=2, dilation=2, groups=3)")
                .add("transpose_stride2", conv(ConvOps.CONV2D_TRANSPOSE, 25, s(3, 4, 5, 6), s(4, 3, 3, 3))
                        .attr("strides", new int[]{2, 2}).attr("paddings", new int[]{1, 1}).attr("output_padding", new int[]{1, 0}),
                        "F.conv_transpose2d(Input, Filter, stride=2, padding=1, output_padding=(1, 0))")
                .add("transpose_groups_dilated", conv(ConvOps.CONV2D_TRANSPOSE, 27, s(2, 4, 5, 5), s(4, 3, 3, 2))
                        .attr("groups", 2).attr("dilations", new int[]{2, 1}),
                        "F.conv_transpose2d(Input, Filter, groups=2, dilation=(2, 1))")
                .add("transpose_asymmetric", conv(ConvOps.CONV2D_TRANSPOSE, 29, s(2, 3, 4, 5), s(3, 2, 3, 3))
                        .attr("strides", new int[]{2, 1}).attr("paddings", new int[]{1, 0, 0, 2}),
                        "F.conv_transpose2d(Input, Filter, stride=(2, 1))[:, :, 1:, :-2]")
                .add("max_2x2", pool("max", 31, s(4, 3, 8, 8), 2, 2).attr("strides", new int[]{2, 2}),
                        "F.max_pool2d(X, 2, 2)")
                .add("max_3x3_padded", pool("max", 33, s(2, 3, 7, 8), 3, 3).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 1}), "F.max_pool2d(X, 3, 2, 1)")
                .add("max_ceil", pool("max", 35, s(2, 2, 5, 7), 2, 3).attr("strides", new int[]{2, 2})
                        .attr("ceil_mode", true), "F.max_pool2d(X, (2, 3), 2, ceil_mode=True)")
                .add("avg_exclusive_asymmetric", pool("avg", 37, s(2, 2, 5, 6), 3, 2).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 0, 1, 1}), exclusiveAvg("(1, 1, 1, 0)", "(3, 2)", "2"))
                .add("avg_inclusive", pool("avg", 39, s(2, 2, 5, 5), 3, 3).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 1}).attr("exclusive", false),
                        "F.avg_pool2d(X, 3, 2, 1, count_include_pad=True)")
                .add("avg_ceil", pool("avg", 41, s(2, 2, 5, 5), 2, 2).attr("strides", new int[]{2, 2})
                        .attr("ceil_mode", true), "F.avg_pool2d(X, 2, 2, ceil_mode=True)")
                .add("avg_same", pool("avg", 43, s(2, 2, 5, 6), 3, 3).attr("strides", new int[]{2, 2})
                        .attr("padding_algorithm", "SAME"), exclusiveAvg("(0, 1, 1, 1)", "3", "2"))
                .add("max_valid", pool("max", 45, s(2, 2, 5, 6), 2, 2).attr("strides", new int[]{2, 2})
                        .attr("paddings", new int[]{1, 1}).attr("padding_algorithm", "VALID"), "F.max_pool2d(X, 2, 2)")
                .add("avg_global", pool("avg", 47, s(3, 4, 5, 6), 1, 1).attr("global_pooling", true),
                        "X.mean((2, 3), keepdim=True)")
                .add("max_global", pool("max", 49, s(3, 4, 5, 6), 1, 1).attr("global_pooling", true),
                        "X.amax((2, 3), keepdim=True)")
                .add("avg_adaptive", pool("avg", 51, s(2, 3, 7, 5), 3, 2).attr("adaptive", true),
                        "F.adaptive_avg_pool2d(X, (3, 2))")
                .add("max_adaptive", pool("max", 53, s(2, 3, 7, 5), 3, 2).attr("adaptive", true),
                        "F.adaptive_max_pool2d(X, (3, 2))")
                .add("batch_norm_nchw_train", batchNorm(55, s(8, 4, 5, 5), false).lossFrom("Y", "MeanOut"),
                        "rm = Mean.clone()\nrv = Variance.clone()\n"
                                + "out = (F.batch_norm(X, rm, rv, Scale, Bias, True, 0.1, 1e-5), rm)")
                .add("batch_norm_nchw_test", batchNorm(57, s(4, 4, 3, 5), true),
                        "F.batch_norm(X, Mean, Variance, Scale, Bias, False, 0.1, 1e-5)")
                .add("batch_norm_nc_train", batchNorm(59, s(16, 5), false),
                        "F.batch_norm(X, Mean.clone(), Variance.clone(), Scale, Bias, True, 0.1, 1e-5)")
                .add("group_norm", GradientChecker.forOp(GroupNormOp.GROUP_NORM).input("X", uniform(61, 4, 6, 5, 5))
                        .input("Scale", range(62, 0.5, 1.5, 6)).input("Bias", uniform(63, 6)).attr("groups", 3),
                        "F.group_norm(X, 3, Scale, Bias, 1e-5)")
                .add("group_norm_per_channel", GradientChecker.forOp(GroupNormOp.GROUP_NORM).input("X", uniform(64, 3, 4, 6, 2))
                        .input("Scale", range(65, 0.5, 1.5, 4)).input("Bias", uniform(66, 4)).attr("groups", 4)
                        .attr("epsilon", 1e-3f), "F.group_norm(X, 4, Scale, Bias, 1e-3)")
                .check(dir);
    }

    @Test
    void aPaddingOffByOneIsCaught() {
        var m = TorchOpCheck.cases()
                .add("conv_pad_off_by_one", conv(3, s(4, 3, 9, 8), s(5, 3, 3, 3)).attr("paddings", new int[]{1, 1}),
                        "F.conv2d(F.pad(Input, (1, 1, 2, 0)), Filter)")
                .measure(dir);
        assertFalse(m.stream().allMatch(TorchOpCheck.Measurement::passed), "one row of padding moved: " + m);
    }
}
