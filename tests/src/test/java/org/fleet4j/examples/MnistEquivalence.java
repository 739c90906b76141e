package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.fleet.metrics.LossCurve;

/**
 * mnist trainings (and lenet's and resnet's) for equivalence tests: each run saves its checkpoint, and its record is
 * every float tensor of that checkpoint with the loss of every step (loss_curve.csv). Two runs are "the same training" when every parameter
 * (max abs) and every step's loss differ by at most {@link TrainingDrift#NOISE_FACTOR} times the float32 noise of the
 * training, measured as the drift of the one-rank run started one ulp away ({@code --perturb_init_ulps 1}); that
 * factor was measured on these very runs.
 */
final class MnistEquivalence {
    static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

    private MnistEquivalence() {
    }

    /** One rank's training and its float32 noise, by mnist arguments: the integration tests share one JVM and these runs. */
    private static final Map<List<String>, Reference> REFERENCES = new ConcurrentHashMap<>();

    /** The one-rank run of {@code mnist ARGS} and the drift of the same run started one ulp away (the noise). */
    record Reference(TrainingRecord oneRank, TrainingDrift noise) {
    }

    /** {@link Reference} of {@code programArgs}, trained once per test JVM (in a temporary folder removed at exit). */
    static Reference reference(String... programArgs) {
        return REFERENCES.computeIfAbsent(List.of(programArgs), args -> {
            try {
                Path dir = Files.createTempDirectory("fleet4j-mnist-reference");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteQuietly(dir)));
                TrainingRecord one = train(dir, "one", 1, List.of(), programArgs);
                List<String> away = new ArrayList<>(args);
                away.addAll(List.of("--perturb_init_ulps", "1"));
                return new Reference(one, TrainingDrift.between(one, train(dir, "noise", 1, List.of(),
                        away.toArray(String[]::new))));
            } catch (Exception e) {
                throw new IllegalStateException("the one-rank reference run of mnist " + args + " failed: " + e.getMessage(), e);
            }
        });
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a temporary folder left behind
        }
    }

    /** Runs {@code mnist ARGS --save_checkpoint DIR/NAME.safetensors} on {@code nproc} ranks; returns its record. */
    static TrainingRecord train(Path dir, String name, int nproc, List<String> launcherArgs, String... programArgs)
            throws Exception {
        return trainProgram("mnist", dir, name, nproc, launcherArgs, programArgs);
    }

    /** As {@link #train}, for another of the classifier programs (lenet, resnet), which save and log as mnist does. */
    static TrainingRecord trainProgram(String program, Path dir, String name, int nproc, List<String> launcherArgs,
                                       String... programArgs) throws Exception {
        Path checkpoint = dir.resolve(name + ".safetensors");
        List<String> args = new ArrayList<>(List.of(programArgs));
        args.addAll(List.of("--save_checkpoint", checkpoint.toString()));
        FleetRunJob job = FleetRunJob.start(dir.resolve(name), nproc, launcherArgs, program, args.toArray(String[]::new));
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        for (int r = 1; r < nproc; r++) {
            assertTrue(Files.readString(job.logDir().resolve("workerlog." + r)).contains("rank 0 evaluates and writes the summary"),
                    job.describe());
        }
        assertEquals(nproc, new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile()).get("world_size").asInt());
        return record(job.logDir(), checkpoint);
    }

    /** The record of a finished mnist run: its checkpoint's float tensors and LOG_DIR/loss_curve.csv. */
    static TrainingRecord record(Path logDir, Path checkpoint) throws IOException {
        return TrainingRecord.of(SafeTensors.read(checkpoint), LossCurve.readCsv(logDir.resolve("loss_curve.csv")));
    }
}
