package org.fleet4j.core.models;

import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.layers.ParamAttr;

/**
 * A small ResNet of basic blocks for small images, as He et al. built for CIFAR-10: a 3x3 stem convolution (conv1,
 * bn1, ReLU) to {@code width} channels, three stages (layer1, layer2, layer3) of n basic blocks each with width, 2
 * width and 4 width channels, the last two starting with stride 2, then global average pooling and fc; depth 6n + 2
 * layers. A basic block is conv1 - bn1 - ReLU - conv2 - bn2, plus its input (identity), or a projection of it
 * (downsample.0, a 1x1 convolution of the block's stride, and downsample.1, batch norm) where the stride or the channels
 * change, then ReLU. Convolutions before batch norm have no bias. With {@code depthwise} each 3x3 convolution of the
 * blocks is a depthwise 3x3 (convK.0) followed by a pointwise 1x1 (convK.1), MobileNet's separable form.
 * <p>Layers are named as torchvision's ResNet names its modules (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0,
 * fc, ...), so a PyTorch model with those attributes loads by name ({@code TorchStateDict.byLayerNames}). Batch norm
 * has Paddle's momentum 0.9 (PyTorch's 0.1) and epsilon 1e-5.
 */
public final class ResNet {
    private static final float BN_MOMENTUM = 0.9f;
    private static final float BN_EPSILON = 1e-5f;

    /** depth 6n + 2 (8, 14, 20, ...), the stem's channels, and whether the blocks' 3x3 convolutions are separable. */
    public record Shape(int depth, int width, boolean depthwise) {
        public Shape {
            if (depth < 8 || (depth - 2) % 6 != 0) {
                throw new IllegalArgumentException("ResNet depth " + depth + " is not 6n + 2 for a whole n >= 1: a"
                        + " ResNet of basic blocks has 2 layers per block, 3 stages and a stem and an fc layer; use"
                        + " 8, 14, 20, 32, ...");
            }
            if (width < 1) {
                throw new IllegalArgumentException("ResNet width " + width + " must be at least 1 (channels of the"
                        + " stem; the stages have 1, 2 and 4 times as many)");
            }
        }

        /** Basic blocks per stage. */
        public int blocksPerStage() {
            return (depth - 2) / 6;
        }
    }

    private ResNet() {
    }

    /** The network over images [N, channels, height, width] into {@code classes} logits. */
    public static ConvNet build(long channels, long height, long width, int classes, Shape shape, long seed) {
        return ConvNet.build(seed, channels, height, width, (nn, image, isTest) -> new Builder(nn, isTest, shape.depthwise())
                .logits(image, shape, classes));
    }

    /** Lays the network out in one program, in train or test mode. */
    private record Builder(Layers nn, boolean isTest, boolean depthwise) {
        Var logits(Var image, Shape shape, int classes) {
            Var h = nn.relu(bn(conv(image, shape.width(), 3, 1, "conv1"), "bn1"));
            int channels = shape.width();
            for (int stage = 1; stage <= 3; stage++) {
                for (int block = 0; block < shape.blocksPerStage(); block++) {
                    int stride = stage > 1 && block == 0 ? 2 : 1;
                    h = basicBlock(h, channels, stride, "layer" + stage + "." + block);
                }
                channels *= 2;
            }
            h = nn.adaptivePool2d(h, new int[]{1, 1}, "avg");
            return nn.fc(h, classes, null, "fc");
        }

        private Var basicBlock(Var x, int channels, int stride, String name) {
            Var h = nn.relu(bn(conv3x3(x, channels, stride, name + ".conv1"), name + ".bn1"));
            h = bn(conv3x3(h, channels, 1, name + ".conv2"), name + ".bn2");
            Var shortcut = x;
            if (stride != 1 || x.shape()[1] != channels) {
                shortcut = bn(conv(x, channels, 1, stride, name + ".downsample.0"), name + ".downsample.1");
            }
            return nn.relu(nn.add(h, shortcut));
        }

        /** A 3x3 convolution of the blocks, padding 1; separable (depthwise then pointwise) when asked. */
        private Var conv3x3(Var x, int channels, int stride, String name) {
            if (!depthwise) {
                return conv(x, channels, 3, stride, name);
            }
            int in = (int) x.shape()[1];
            Var spatial = nn.conv2d(x, in, new int[]{3, 3}, new int[]{stride, stride}, new int[]{1, 1}, "EXPLICIT",
                    new int[]{1, 1}, in, null, name + ".0", ParamAttr.DEFAULT, null);
            return conv(spatial, channels, 1, 1, name + ".1");
        }

        /** A k x k convolution without bias, padding k / 2. */
        private Var conv(Var x, int filters, int k, int stride, String name) {
            return nn.conv2d(x, filters, new int[]{k, k}, new int[]{stride, stride}, new int[]{k / 2, k / 2},
                    "EXPLICIT", new int[]{1, 1}, 1, null, name, ParamAttr.DEFAULT, null);
        }

        private Var bn(Var x, String name) {
            return nn.batchNorm(x, isTest, BN_MOMENTUM, BN_EPSILON, name);
        }
    }
}
