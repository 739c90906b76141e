package org.fleet4j.examples;

import picocli.CommandLine.Option;

/** The {@code --seed} of every built-in program that draws at random ({@code @Mixin}): the same seed, the same run. */
final class SeedOption {
    @Option(names = "--seed", description = "seed of every random draw: initial weights, shuffling, generated data"
            + " (default ${DEFAULT-VALUE})")
    private long seed = 1;

    long seed() {
        return seed;
    }
}
