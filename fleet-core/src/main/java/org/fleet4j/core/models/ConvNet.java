package org.fleet4j.core.models;

import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;

/** A convolutional classifier of NCHW images, as {@link LeNet} and {@link ResNet} build it. */
public record ConvNet(Program main, Program startup, Program test, Var image, Var label, Var logits, Var loss,
                      Var accuracy) implements Classifier {

    /** A network's layers from the image to the logits; {@code isTest} puts batch norm on its running statistics. */
    @FunctionalInterface
    interface Layout {
        Var logits(Layers nn, Var image, boolean isTest);
    }

    /**
     * The training program (image [-1, channels, height, width] and label [-1, 1] in; mean cross entropy and top-1
     * accuracy out) with its startup program, and the test program laid out again in test mode: the same calls in a
     * fresh program give the same names, so the two share their parameters in a scope.
     */
    static ConvNet build(long seed, long channels, long height, long width, Layout layout) {
        Program main = new Program().setRandomSeed(seed);
        Program startup = new Program().setRandomSeed(seed);
        Var[] train = heads(new Layers(main, startup), channels, height, width, layout, false);
        Program test = new Program().setRandomSeed(seed);
        Var[] forTest = heads(new Layers(test, new Program().setRandomSeed(seed)), channels, height, width, layout, true);
        for (int i = 0; i < train.length; i++) {
            if (!train[i].name().equals(forTest[i].name())) {
                throw new IllegalStateException("the test program's " + forTest[i].name() + " should be named "
                        + train[i].name() + " as in the training program; lay both out with the same calls");
            }
        }
        return new ConvNet(main, startup, test, train[0], train[1], train[2], train[3], train[4]);
    }

    /** image, label, logits, loss, accuracy. */
    private static Var[] heads(Layers nn, long channels, long height, long width, Layout layout, boolean isTest) {
        Var image = nn.data("image", DType.F32, -1, channels, height, width);
        Var label = nn.data("label", DType.I64, -1, 1);
        Var logits = layout.logits(nn, image, isTest);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, label));
        Var accuracy = nn.accuracy(logits, label);
        return new Var[]{image, label, logits, loss, accuracy};
    }
}
