package org.fleet4j.examples;

import java.nio.file.Path;
import org.fleet4j.text.Quoted;
import picocli.CommandLine.Option;

/**
 * The options of the image classifiers mnist, lenet and resnet beyond every program's ({@code @Mixin}): how long and
 * on how large a batch, the learning-rate schedule, weight decay and clipping, the data and its order, where the
 * weights start, and what to write besides the summary.
 */
final class ClassifierOptions {
    @Option(names = "--steps", description = "total training steps; overrides --epochs")
    Integer steps;
    @Option(names = "--global_batch", description = "samples per step over all ranks, split between them")
    Integer globalBatch;
    @Option(names = "--lr_schedule", description = "constant, or warmup_cosine: a linear ramp from 0 over"
            + " --warmup_steps, then half a cosine down to 0 at the last step (default ${DEFAULT-VALUE})")
    String lrSchedule = "constant";
    @Option(names = "--warmup_steps", description = "steps of warmup_cosine's ramp (default ${DEFAULT-VALUE})")
    int warmupSteps = 0;
    @Option(names = "--weight_decay", description = "sgd and momentum: L2 decay of every parameter (PyTorch's SGD"
            + " weight_decay); adamw: decoupled decay of the weights, not of biases and batch-norm scales and shifts"
            + " (default ${DEFAULT-VALUE})")
    double weightDecay = 0;
    @Option(names = "--clip_grad_norm", description = "scale the gradients down to this global norm when they exceed"
            + " it, after the ranks' allreduce (Paddle's ClipGradByGlobalNorm); 0 for no clipping (default ${DEFAULT-VALUE})")
    double clipGradNorm = 0;
    @Option(names = "--data_dir", description = "folder with the four MNIST IDX files (default: the bundled digits)")
    Path dataDir;
    @Option(names = "--sample_order", paramLabel = "<file>", description = "train on the training samples in the order"
            + " this file lists them (indices from 0, separated by white space), one global batch after another,"
            + " instead of shuffling: e.g. to replay another framework's batches")
    Path sampleOrder;
    @Option(names = "--init_torch", paramLabel = "<file>", description = "start from the weights of a PyTorch"
            + " state_dict saved as safetensors, paired with the layers by name (conv1.weight to conv1.w_0, ...)")
    Path initTorch;
    @Option(names = "--freeze", description = "parameters whose names match this regular expression keep their initial"
            + " values (e.g. 'fc_0\\..*' keeps the first layer)")
    String freeze;
    @Option(names = "--perturb_init_ulps", description = "move every initial weight this many float32 ulps up or down"
            + " (seeded), to measure how far rounding alone carries a training (default ${DEFAULT-VALUE})")
    int perturbInitUlps = 0;
    @Option(names = "--allow_nonfinite_checkpoint", description = "load a --load_checkpoint that holds NaN or infinite"
            + " values (refused by default), to inspect a training that diverged")
    boolean allowNonfiniteCheckpoint;
    @Option(names = "--export_onnx", description = "after training, write the inference model (image in; logits and"
            + " probabilities out) as an ONNX file for ONNX Runtime")
    Path exportOnnx;
    @Option(names = "--timeline", description = "write a Chrome trace of the training steps; rank N writes FILE with"
            + " .rankN before the extension")
    Path timelineFile;

    /** Refuses values out of range, naming the flag; {@code epochs} is the program's --epochs. */
    void validate(int epochs, int batchSize) {
        if (batchSize < 1 || (globalBatch != null && globalBatch < 1)) {
            throw new IllegalArgumentException("--batch_size and --global_batch must be at least 1");
        }
        if (epochs < 1 && steps == null) {
            throw new IllegalArgumentException("--epochs must be at least 1, got " + epochs);
        }
        if (steps != null && steps < 1) {
            throw new IllegalArgumentException("--steps must be at least 1, got " + steps);
        }
        if (perturbInitUlps < 0) {
            throw new IllegalArgumentException("--perturb_init_ulps must be 0 or more, got " + perturbInitUlps);
        }
        if (!lrSchedule.equals("constant") && !lrSchedule.equals("warmup_cosine")) {
            throw new IllegalArgumentException("--lr_schedule must be constant or warmup_cosine, got "
                    + Quoted.of(lrSchedule));
        }
        if (warmupSteps < 0) {
            throw new IllegalArgumentException("--warmup_steps must be 0 or more, got " + warmupSteps);
        }
        if (!(weightDecay >= 0) || !Double.isFinite(weightDecay)) {
            throw new IllegalArgumentException("--weight_decay must be 0 or a positive number, got " + weightDecay);
        }
        if (!(clipGradNorm >= 0) || !Double.isFinite(clipGradNorm)) {
            throw new IllegalArgumentException("--clip_grad_norm must be 0 (off) or a positive number, got " + clipGradNorm);
        }
    }
}
