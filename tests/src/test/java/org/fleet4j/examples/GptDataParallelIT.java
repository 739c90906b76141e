package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.metrics.LossCurve;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gpt under the real launcher on N ranks that split each global batch (AdamW, clipping, warm-up cosine): 2 ranks, and 4
 * ranks with the collective knobs that keep the arithmetic (6 buckets on two communicators, overlapped with backward,
 * fused optimizers, two executor threads; fused add + activation and in-place reuse are on and find nothing to do in
 * this model), train what one rank trains, every parameter, moment and
 * step's loss within {@link TrainingDrift#NOISE_FACTOR} times the float32 noise measured at run time (one rank
 * started one ulp away); summed instead of averaged gradients are caught by the same comparison; and a 2-rank
 * checkpoint resumed on 2 ranks ends bit for bit where the uninterrupted 2-rank run does.
 */
class GptDataParallelIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(4);
    private static final int STEPS = 30;
    private static final List<String> GPT = List.of("--n_layer", "2", "--n_head", "2", "--n_embd", "16",
            "--block_size", "8", "--global_batch", "8", "--optimizer", "adamw", "--lr", "0.01", "--grad_clip", "0.5",
            "--lr_schedule", "warmup_cosine", "--warmup_steps", "5", "--lr_decay_steps", "" + STEPS, "--eval_steps", "0",
            "--eval_windows", "8", "--sample", "2", "--sample_length", "8");
    private static final String KNOBS = String.join("\n", "nccl_comm_num: 2", "sync_nccl_allreduce: false",
            "fuse_grad_size_in_MB: 1", "fuse_grad_size_in_TFLOPS: 5", "last_comm_group_size_MB: 0.01",
            "build_strategy:", "  fuse_all_optimizer_ops: true", "  fuse_elewise_add_act_ops: true",
            "  enable_inplace: true", "execution_strategy:", "  num_threads: 2", "");

    @TempDir
    static Path shared;
    private static TrainingRecord oneRank;
    private static TrainingDrift noise;
    private static TrainingRecord twoRanks;

    @TempDir
    Path work;

    @BeforeAll
    static void trainOneRankAndMeasureItsFloat32Noise() throws Exception {
        oneRank = train(shared, "one", 1, List.of(), "--steps", "" + STEPS);
        noise = TrainingDrift.between(oneRank, train(shared, "noise", 1, List.of(), "--steps", "" + STEPS,
                "--perturb_init_ulps", "1"));
    }

    /** gpt GPT ARGS on {@code nproc} ranks, saving its checkpoint as DIR/NAME.safetensors; its record. */
    private static TrainingRecord train(Path dir, String name, int nproc, List<String> launcherArgs, String... args)
            throws Exception {
        Path checkpoint = dir.resolve(name + ".safetensors");
        List<String> all = new ArrayList<>(GPT);
        all.addAll(List.of(args));
        all.addAll(List.of("--save_checkpoint", checkpoint.toString()));
        FleetRunJob job = FleetRunJob.start(dir.resolve(name), nproc, launcherArgs, "gpt", all.toArray(String[]::new));
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        JsonNode summary = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile());
        assertEquals(nproc, summary.get("world_size").asInt());
        assertEquals(8 / nproc, summary.get("batch_size").asInt());
        return TrainingRecord.of(SafeTensors.read(checkpoint), LossCurve.readCsv(job.logDir().resolve("loss_curve.csv")));
    }

    @Test
    void twoRanksAndFourWithTheCollectiveKnobsTrainWhatOneRankTrainsWithinTheFloat32Noise() throws Exception {
        double[] losses = oneRank.losses();
        assertEquals(STEPS, losses.length);
        assertTrue(losses[STEPS - 1] < losses[0] - 0.5, "the loss falls: " + losses[0] + " -> " + losses[STEPS - 1]);
        assertTrue(oneRank.parameters().size() > 3 * 28, "parameters and AdamW's moments: " + oneRank.parameters().size());
        Path knobs = Files.writeString(work.resolve("knobs.yaml"), KNOBS);
        for (int nproc : new int[]{2, 4}) {
            TrainingDrift drift = TrainingDrift.between(oneRank, nproc == 2 ? twoRanks()
                    : train(work, "ranks4", 4, List.of("--strategy", knobs.toString()), "--steps", "" + STEPS));
            System.out.println("GptDataParallelIT: " + nproc + " ranks against one: " + drift.summaryAgainst(noise));
            if (nproc == 4) {
                String log = Files.readString(work.resolve("ranks4/log/workerlog.0"));
                assertTrue(log.contains("28 c_allreduce ops -> 6 bucket(s) on 2 ring(s)") && log.contains("into fused_adam")
                        && log.contains("6 of 6 c_allreduce ops overlap"), "the knobs acted:\n" + log);
            }
            assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), nproc + " ranks against one: "
                    + drift.summaryAgainst(noise));
        }
    }

    /** The uninterrupted 2-rank run, trained once for both tests that need it. */
    private static TrainingRecord twoRanks() throws Exception {
        if (twoRanks == null) {
            twoRanks = train(shared, "ranks2", 2, List.of(), "--steps", "" + STEPS);
        }
        return twoRanks;
    }

    @Test
    void summedInsteadOfAveragedGradientsAreCaught() throws Exception {
        Path sum = Files.writeString(work.resolve("sum.yaml"), "gradient_scale_configs:\n  scale_strategy: sum\n");
        TrainingDrift drift = TrainingDrift.between(oneRank, train(work, "summed", 2, List.of("--strategy",
                sum.toString()), "--steps", "" + STEPS));
        assertFalse(drift.beyond(noise, TrainingDrift.NOISE_FACTOR).isEmpty(), "summed gradients passed for"
                + " equivalent: " + drift.summaryAgainst(noise));
    }

    @Test
    void aTwoRankCheckpointResumedOnTwoRanksEndsBitForBitWhereTheUninterruptedRunDoes() throws Exception {
        twoRanks();
        train(work, "first", 2, List.of(), "--steps", "12");
        train(work, "resumed", 2, List.of(), "--steps", "" + STEPS, "--load_checkpoint",
                work.resolve("first.safetensors").toString());
        Map<String, Tensor> whole = SafeTensors.read(shared.resolve("ranks2.safetensors"));
        Map<String, Tensor> resumed = SafeTensors.read(work.resolve("resumed.safetensors"));
        assertEquals(whole.keySet(), resumed.keySet());
        for (String name : whole.keySet()) {
            assertArrayEquals(whole.get(name).toDoubleArray(), resumed.get(name).toDoubleArray(), name);
        }
    }
}
