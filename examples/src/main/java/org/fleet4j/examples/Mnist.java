package org.fleet4j.examples;

import com.google.auto.service.AutoService;
import org.fleet4j.core.models.Classifier;
import org.fleet4j.core.models.Mlp;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.launch.NamedProgram;
import picocli.CommandLine.Command;

/**
 * The built-in {@code mnist} program: an MLP 784-512-512-10 trained on MNIST digits, then tested (the loop and options
 * of {@link ClassifierProgram}).
 */
@AutoService(NamedProgram.class)
@Command(name = "mnist", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Trains an MLP (784-512-512-10, ReLU) on MNIST and reports test accuracy.")
public final class Mnist extends ClassifierProgram {
    private int pixels = 784;

    public Mnist() {
        super(new TrainingOptions(2, 64, "momentum", 0.05));
    }

    @Override
    public String programName() {
        return "mnist";
    }

    public static void main(String[] args) {
        System.exit(ProgramMain.run("mnist", new Mnist(), args));
    }

    @Override
    Classifier model(long channels, long rows, long cols, long seed) {
        pixels = (int) (channels * rows * cols);
        return Mlp.build(new int[]{pixels, 512, 512, 10}, seed);
    }

    @Override
    String describeModel() {
        return "MLP " + pixels + "-512-512-10";
    }

    @Override
    boolean readsNchw() {
        return false;
    }

    @Override
    boolean reportsTrainAccuracy() {
        return true;
    }
}
