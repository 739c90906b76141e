package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.models.LeNet;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;

/**
 * The built-in {@code lenet} program: LeNet-5 ({@link LeNet}) on MNIST digits as [N, 1, 28, 28] images, trained and
 * tested with the loop and options of {@link ClassifierProgram}.
 */
@AutoService(NamedProgram.class)
@Command(name = "lenet", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Trains LeNet-5 (two 5x5 conv + max-pool layers, three fc layers) on MNIST and reports test accuracy.")
public final class Lenet extends ClassifierProgram {
    public Lenet() {
        super(new TrainingOptions(2, 64, "momentum", 0.02));
    }

    @Override
    public String programName() {
        return "lenet";
    }

    public static void main(String[] args) {
        System.exit(ProgramMain.run("lenet", new Lenet(), args));
    }

    @Override
    Classifier model(long channels, long rows, long cols, long seed) {
        return LeNet.build(channels, rows, cols, 10, seed);
    }

    @Override
    String describeModel() {
        return "LeNet-5";
    }

    @Override
    boolean readsNchw() {
        return true;
    }
}
