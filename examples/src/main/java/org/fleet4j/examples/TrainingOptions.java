package org.fleet4j.examples;

import picocli.CommandLine.Option;

/**
 * The options of every built-in training program ({@code @Mixin}): passes, batch, optimizer and learning rate, one
 * declaration for all, each program with its own defaults (given to the constructor, shown by {@code --help}).
 */
final class TrainingOptions {
    @Option(names = "--epochs", description = "passes over the training data (default ${DEFAULT-VALUE})")
    private int epochs;
    @Option(names = "--batch_size", description = "examples per rank per step (default ${DEFAULT-VALUE})")
    private int batchSize;
    @Option(names = "--optimizer", description = "sgd, momentum, adam or adagrad; mnist, lenet and resnet also adamw (default ${DEFAULT-VALUE})")
    private String optimizer;
    @Option(names = "--lr", description = "learning rate (default ${DEFAULT-VALUE})")
    private double lr;

    TrainingOptions(int epochs, int batchSize, String optimizer, double lr) {
        this.epochs = epochs;
        this.batchSize = batchSize;
        this.optimizer = optimizer;
        this.lr = lr;
    }

    int epochs() {
        return epochs;
    }

    int batchSize() {
        return batchSize;
    }

    String optimizer() {
        return optimizer;
    }

    double lr() {
        return lr;
    }
}
