package org.fleet4j.core.models;

import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;

/**
 * LeNet-5 as PyTorch's tutorials write it: conv1 (6 filters 5x5, padding 2) - ReLU - max pool 2x2, conv2 (16 filters
 * 5x5) - ReLU - max pool 2x2, then fc1 (120) - ReLU - fc2 (84) - ReLU - fc3 (classes). The layers are named as that
 * {@code nn.Module}'s attributes (conv1.w_0, conv1.b_0, ..., fc3.b_0), so its state_dict loads by name
 * ({@code TorchStateDict.byLayerNames}). On 28x28 images the flattened features are 16 x 5 x 5 = 400.
 */
public final class LeNet {
    private LeNet() {
    }

    /** LeNet-5 over images [N, channels, height, width] into {@code classes} logits. */
    public static ConvNet build(long channels, long height, long width, int classes, long seed) {
        return ConvNet.build(seed, channels, height, width, (nn, image, isTest) -> logits(nn, image, classes));
    }

    private static Var logits(Layers nn, Var image, int classes) {
        Var h = conv(nn, image, 6, 2, "conv1");
        h = nn.pool2d(h, 2, "max", 2, 0);
        h = conv(nn, h, 16, 0, "conv2");
        h = nn.pool2d(h, 2, "max", 2, 0);
        h = nn.fc(h, 120, "relu", "fc1");
        h = nn.fc(h, 84, "relu", "fc2");
        return nn.fc(h, classes, null, "fc3");
    }

    /** A 5x5 convolution of stride 1 with a bias, then ReLU. */
    private static Var conv(Layers nn, Var x, int filters, int padding, String name) {
        return nn.conv2d(x, filters, new int[]{5, 5}, new int[]{1, 1}, new int[]{padding, padding}, "EXPLICIT",
                new int[]{1, 1}, 1, "relu", name, ParamAttr.DEFAULT, ParamAttr.DEFAULT);
    }
}
