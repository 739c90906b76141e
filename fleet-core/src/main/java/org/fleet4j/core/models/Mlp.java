package org.fleet4j.core.models;

import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.text.Quoted;

/**
 * A multi-layer perceptron classifier (ReLU between layers) with its loss and accuracy: the model of the mnist and
 * mlp_perf programs, and of the tests (CPU and GPU) that need a real training program.
 */
public record Mlp(Program main, Program startup, Program test, Var image, Var label, Var logits, Var loss, Var accuracy)
        implements Classifier {

    /** Builds the network for layer widths such as [784, 512, 512, 10]; {@code test} is the forward-only copy. */
    public static Mlp build(int[] layers, long seed) {
        if (layers.length < 2) {
            throw new IllegalArgumentException("--layers needs at least an input and an output width, got "
                    + layers.length + " value(s)");
        }
        for (int w : layers) {
            if (w < 1) {
                throw new IllegalArgumentException("--layers widths must be positive, got " + w);
            }
        }
        Program main = new Program().setRandomSeed(seed);
        Program startup = new Program().setRandomSeed(seed);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("image", DType.F32, -1, layers[0]);
        Var y = nn.data("label", DType.I64, -1, 1);
        Var h = x;
        for (int i = 1; i < layers.length - 1; i++) {
            h = nn.fc(h, layers[i], "relu");
        }
        Var logits = nn.fc(h, layers[layers.length - 1], null);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        Var acc = nn.accuracy(logits, y);
        Program test = main.copy();
        return new Mlp(main, startup, test, x, y, logits, loss, acc);
    }

    public static int[] parseLayers(String spec) {
        try {
            return java.util.Arrays.stream(spec.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--layers must be comma-separated widths like 784,512,512,10, got "
                    + Quoted.of(spec));
        }
    }
}
