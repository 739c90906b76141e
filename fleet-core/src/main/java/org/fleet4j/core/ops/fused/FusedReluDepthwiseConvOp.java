package org.fleet4j.core.ops.fused;

import com.google.auto.service.AutoService;
import java.util.List;
import org.fleet4j.core.ops.ConvOps;
import org.fleet4j.core.ops.OpLibrary;
import org.fleet4j.core.ops.OpSpec;

/**
 * {@code fused_relu_depthwise_conv}: Output = depthwise_conv2d(relu(Input), Filter), with depthwise_conv2d's slots and
 * attributes (Paddle's fusion of relu into the depthwise convolution that reads it, its
 * {@code fuse_relu_before_depthwise_conv}). The kernel applies the relu as it reads Input, so relu(Input) is never
 * stored, nor its gradient: the grad op masks the input gradient to where Input is positive. Both do the float
 * operations of relu + depthwise_conv2d in the same order, so fused and unfused programs agree bit for bit.
 */
@AutoService(OpLibrary.class)
public final class FusedReluDepthwiseConvOp implements OpLibrary {
    public static final String TYPE = "fused_relu_depthwise_conv";

    @Override
    public List<OpSpec> specs() {
        return List.of(ConvOps.withConvAttributes(OpSpec.builder(TYPE))
                .shape(ConvOps::inferDepthwiseShape)
                .kernel(ConvOps::reluInputDepthwiseKernel)
                .gradKernel(ConvOps::reluInputDepthwiseGradKernel)
                .build());
    }
}
