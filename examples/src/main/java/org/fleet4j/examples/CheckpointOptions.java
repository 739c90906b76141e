package org.fleet4j.examples;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --save_checkpoint} and {@code --load_checkpoint} of the built-in training programs ({@code @Mixin}). The
 * target of a save is checked before the first step; the folder it goes in must exist.
 */
final class CheckpointOptions {
    @Option(names = "--save_checkpoint", paramLabel = "<path>", description = "write the trained state (weights, embedding tables, optimizer"
            + " moments, step counters) to this safetensors file, in a folder that exists; ctr in parameter-server mode:"
            + " a folder of the servers' tables, saved after every epoch")
    private Path save;
    @Option(names = "--load_checkpoint", paramLabel = "<path>", description = "start from the state that --save_checkpoint wrote; ctr in"
            + " parameter-server mode resumes after the last epoch saved")
    private Path load;

    /** Where to save, or null. */
    Path save() {
        return save;
    }

    /** What to load, or null. */
    Path load() {
        return load;
    }
}
