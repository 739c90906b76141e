package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.models.ResNet;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.Summary;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The built-in {@code resnet} program: a small ResNet of basic blocks ({@link ResNet}) on MNIST digits as
 * [N, 1, 28, 28] images, trained and tested with the loop and options of {@link ClassifierProgram}. Its batch norms
 * are where the strategy's fuse_bn_act_ops and sync_batch_norm act, and its --depthwise variant where
 * fuse_relu_depthwise_conv does.
 */
@AutoService(NamedProgram.class)
@Command(name = "resnet", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Trains a small ResNet of basic blocks (3x3 conv - batch norm - ReLU, identity and 1x1 projection"
                + " shortcuts) on MNIST and reports test accuracy.")
public final class Resnet extends ClassifierProgram {
    @Option(names = "--depth", description = "layers, 6n + 2 for n basic blocks per stage: 8, 14, 20, ... (default ${DEFAULT-VALUE})")
    int depth = 8;
    @Option(names = "--width", description = "channels of the stem and the first stage; the second and third have 2"
            + " and 4 times as many (default ${DEFAULT-VALUE})")
    int width = 16;
    @Option(names = "--depthwise", description = "separable blocks: each 3x3 convolution a depthwise 3x3 then a"
            + " pointwise 1x1 (MobileNet's form)")
    boolean depthwise;

    public Resnet() {
        super(new TrainingOptions(2, 64, "momentum", 0.05));
    }

    @Override
    public String programName() {
        return "resnet";
    }

    public static void main(String[] args) {
        System.exit(ProgramMain.run("resnet", new Resnet(), args));
    }

    @Override
    Classifier model(long channels, long rows, long cols, long seed) {
        return ResNet.build(channels, rows, cols, 10, shape(), seed);
    }

    private ResNet.Shape shape() {
        try {
            return new ResNet.Shape(depth, width, depthwise);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--depth " + depth + " --width " + width + ": " + e.getMessage(), e);
        }
    }

    @Override
    String describeModel() {
        return "ResNet-" + depth + " of width " + width + (depthwise ? ", separable blocks" : "");
    }

    @Override
    boolean readsNchw() {
        return true;
    }

    @Override
    void summarize(Summary summary) {
        summary.put("depth", depth).put("width", width).put("depthwise", depthwise);
    }
}
