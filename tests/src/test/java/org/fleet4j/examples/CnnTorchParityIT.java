package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.models.LeNet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * lenet under the real launcher follows PyTorch step by step: from PyTorch's initial weights (its state_dict, loaded by
 * name) on the batches PyTorch took (their sample indices), the loss of every step and every final weight are within
 * {@link #NOISE_FACTOR} times PyTorch's own float32 noise of PyTorch's float64 training, with momentum SGD and with
 * AdamW + clipping by the global norm + warm-up cosine, on 1 rank and on 2 ranks that split the global batch. The same
 * comparison fails for PyTorch trainings with a planted mistake: padding off by one, clipping before the allreduce.
 * resnet (depth 8, width 4, 6 steps) is not compared here: its float32 trainings branch apart (see
 * {@link TorchCnnReference#PERTURBED_RUNS}) so often that PyTorch's training normalising with the unbiased variance
 * came within 1.9 times the noise (seed 2), and Fleet4J's AdamW training, on 1 rank fused and on 2 ranks with
 * sync_batch_norm alike, 2600 times the noise from PyTorch's (seed 7, from the loss of the last step on), a difference
 * not yet explained: on 1 rank it falls to 8.5, 2.0 and 2.1 times the noise without the clip, the weight decay or the
 * warm-up respectively, and to 0.7 under momentum at the same learning rate.
 */
class CnnTorchParityIT {
    /**
     * How many times PyTorch's float32 distance from its float64 training Fleet4J's float32 training may be. Measured
     * with scripts/equivalence/cnn_parity_noise.sh 7 1 2 3 (2026-12-02, build bbf23c1 and this test): Fleet4J came
     * within 0.50 times it under momentum and 6.0 times it under AdamW (seed 7, 2 ranks, conv1.weight); the planted
     * mistakes reached 1.7e5 to 4.1e5 times it.
     */
    static final double NOISE_FACTOR = 20;
    /** FLEET_PARITY_MEASURE set: print every figure and assert none (scripts/equivalence/cnn_parity_noise.sh). */
    private static final boolean MEASURING = System.getenv("FLEET_PARITY_MEASURE") != null;
    private static TorchCnnReference.Case lenetMomentum;
    private static TorchCnnReference.Case lenetAdamw;

    @TempDir
    static Path torch;
    @TempDir
    Path work;

    /** The seed of the digits' noise, PyTorch's initialisation and the sample order: FLEET_PARITY_SEED, else 7. */
    private static int seed() {
        String s = System.getenv("FLEET_PARITY_SEED");
        return s == null ? 7 : Integer.parseInt(s);
    }

    /** 512 noisy training digits (see {@link NoisyDigits}) and 100 test digits; then PyTorch's side of every case. */
    @BeforeAll
    static void trainInPyTorch() throws Exception {
        int seed = seed();
        Path digits = NoisyDigits.write(torch.resolve("digits"), 512, 100, seed);
        lenetMomentum = new TorchCnnReference.Case("lenet-momentum", "lenet", 0, 0, 10, 32, "momentum", 0.1, 5e-4, 0, 0,
                seed, List.of("padding"), digits);
        lenetAdamw = new TorchCnnReference.Case("lenet-adamw", "lenet", 0, 0, 10, 32, "adamw", 0.003, 0.05, 0.05, 3, seed,
                List.of("clip_before_allreduce"), digits);
        TorchCnnReference.run(List.of(lenetMomentum, lenetAdamw), torch);
    }

    /** Fleet4J's run of the case on {@code nproc} ranks, under PyTorch's names. */
    private TrainingRecord fleet(TorchCnnReference.Case c, int nproc) throws Exception {
        String name = c.name() + "-" + nproc;
        TrainingRecord run = MnistEquivalence.trainProgram(c.model(), work, name, nproc, List.of(),
                c.programArgs(torch).toArray(String[]::new));
        return TorchCnnReference.fleetUnderTorchNames(LeNet.build(1, 28, 28, 10, 1), work.resolve(name + ".safetensors"),
                run.losses(), work);
    }

    /** Fleet4J's run against PyTorch's float64 one, in units of PyTorch's float32 noise; returns the drift. */
    private static TrainingDrift assertFollowsPyTorch(TorchCnnReference.Case c, TrainingRecord fleet, String what) {
        TrainingRecord exact = TorchCnnReference.reference(torch, c.name(), "f64");
        TrainingDrift noise = TrainingDrift.between(exact, TorchCnnReference.furthestFloat32(torch, c.name()));
        TrainingDrift drift = TrainingDrift.between(exact, fleet);
        System.out.printf("CnnTorchParityIT %s %s: %s; worst %.2f x PyTorch's float32 noise%n", c.name(), what,
                drift.summaryAgainst(noise), drift.worstRatioTo(noise));
        if (!MEASURING) {
            assertEquals(List.of(), drift.beyond(noise, NOISE_FACTOR), c.name() + " " + what + ": "
                    + drift.summaryAgainst(noise));
        }
        // a few steps on noisy digits barely move the loss (lenet's still rises); the weights must move all the same
        double moved = TrainingDrift.between(TorchCnnReference.initial(torch, c.name(), exact.losses()), exact)
                .worstRatioTo(noise);
        assertTrue(moved > 100 * NOISE_FACTOR, c.name() + ": the training moved its weights by only " + moved
                + " times the noise");
        return noise;
    }

    /** The same comparison against PyTorch's training with {@code mistake} must fail. */
    private static void assertCaught(TorchCnnReference.Case c, TrainingRecord fleet, String mistake, TrainingDrift noise) {
        TrainingDrift drift = TrainingDrift.between(TorchCnnReference.reference(torch, c.name(), mistake), fleet);
        System.out.printf("CnnTorchParityIT %s against the mistake %s: worst %.3g x the noise%n", c.name(), mistake,
                drift.worstRatioTo(noise));
        if (!MEASURING) {
            assertFalse(drift.beyond(noise, NOISE_FACTOR).isEmpty(), c.name() + ": the mistake " + mistake
                    + " passed for PyTorch's training: " + drift.summaryAgainst(noise));
        }
    }

    @Test
    void lenetWithMomentumFollowsPyTorchOnOneAndTwoRanksAndPaddingOffByOneIsCaught() throws Exception {
        TrainingRecord one = fleet(lenetMomentum, 1);
        TrainingDrift noise = assertFollowsPyTorch(lenetMomentum, one, "1 rank");
        assertFollowsPyTorch(lenetMomentum, fleet(lenetMomentum, 2), "2 ranks");
        assertCaught(lenetMomentum, one, "padding", noise);
    }

    @Test
    void lenetWithAdamwClippingAndWarmupCosineFollowsPyTorchAndClippingBeforeTheAllreduceIsCaught() throws Exception {
        assertFollowsPyTorch(lenetAdamw, fleet(lenetAdamw, 1), "1 rank");
        TrainingRecord two = fleet(lenetAdamw, 2);
        TrainingDrift noise = assertFollowsPyTorch(lenetAdamw, two, "2 ranks");
        assertCaught(lenetAdamw, two, "clip_before_allreduce", noise);
    }
}
