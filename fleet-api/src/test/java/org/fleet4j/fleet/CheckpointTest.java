package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.fleet4j.cluster.Role;
import org.fleet4j.collective.GroupOptions;
import org.fleet4j.core.data.TensorDataset;
import org.fleet4j.core.drift.TrainingDrift;
import org.fleet4j.core.drift.TrainingRecord;
import org.fleet4j.core.exec.Executor;
import org.fleet4j.core.exec.Scope;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.ir.Op;
import org.fleet4j.core.ir.Program;
import org.fleet4j.core.ir.Var;
import org.fleet4j.core.layers.Layers;
import org.fleet4j.core.optim.Adam;
import org.fleet4j.core.tensor.DType;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.strategy.DistributedStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Fleet's checkpoints and inference models: resume equivalence over real rank processes, corrupt files, round trips. */
class CheckpointTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);
    private static final GroupOptions QUICK = GroupOptions.defaults().withTimeout(Duration.ofSeconds(5));

    @TempDir
    Path work;

    private Properties[] launch(String name, int nproc, int first, int steps, String load, String save) throws Exception {
        return launch(name, nproc, Map.of(), first, steps, load, save);
    }

    private Properties[] launch(String name, int nproc, Map<String, String> env, int first, int steps, String load,
                                String save) throws Exception {
        Path out = Files.createDirectories(work.resolve(name + "-out"));
        LaunchedJob job = LaunchedJob.run(work.resolve(name), nproc, env, JOB_TIMEOUT, CheckpointProbe.class.getName(),
                out.toString(), "16", "" + first, "" + steps, load, save);
        assertEquals(0, job.exitCode(), job.describe());
        Properties[] ranks = new Properties[nproc];
        for (int r = 0; r < nproc; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        return ranks;
    }

    /** Every float persistable a probe recorded, by name. */
    private static TrainingRecord record(Properties p) {
        Map<String, float[]> values = new TreeMap<>();
        for (String name : p.stringPropertyNames()) {
            values.put(name, floats(p.getProperty(name)));
        }
        return new TrainingRecord(values, new double[0]);
    }

    private static float[] floats(String s) {
        String[] parts = s.substring(1, s.length() - 1).split(", ");
        float[] f = new float[parts.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = Float.parseFloat(parts[i]);
        }
        return f;
    }

    @Test
    void aTwoRankCheckpointResumedOnOneRankEndsWhereAnUninterruptedRunEnds() throws Exception {
        Path checkpoint = work.resolve("ck.safetensors");
        Properties[] saved = launch("save", 2, 0, 5, "-", checkpoint.toString());
        assertTrue(Files.size(checkpoint) > 0);
        assertEquals(saved[0], saved[1], "data-parallel ranks hold the same state");
        Properties resumed = launch("resume", 1, 5, 5, checkpoint.toString(), "-")[0];
        Properties straight = launch("straight", 1, 0, 10, "-", "-")[0];

        assertTrue(straight.stringPropertyNames().stream().anyMatch(n -> n.contains("moment")), straight.keySet().toString());
        assertTrue(straight.stringPropertyNames().stream().anyMatch(n -> n.contains("pow")), straight.keySet().toString());
        assertEquals(straight.stringPropertyNames(), resumed.stringPropertyNames());
        // two ranks average two half-batch gradients where one rank takes the whole batch's: rounding differs, so every
        // persistable is judged against the drift of the uninterrupted run started one ulp away
        Properties oneUlpAway = launch("straight-noise", 1, Map.of("PROBE_NOISE_ULPS", "1"), 0, 10, "-", "-")[0];
        TrainingRecord want = record(straight);
        TrainingDrift noise = TrainingDrift.between(want, record(oneUlpAway));
        TrainingDrift drift = TrainingDrift.between(want, record(resumed));
        assertEquals(List.of(), drift.beyond(noise, TrainingDrift.NOISE_FACTOR), "resumed against uninterrupted: "
                + drift.summaryAgainst(noise));
        for (String name : straight.stringPropertyNames()) {
            if (!name.contains("pow") && !name.contains("step") && !name.contains("lr")) {
                // the five steps after the checkpoint moved every learned tensor
                assertNotEquals(saved[0].getProperty(name), resumed.getProperty(name), name);
            }
        }
    }

    /** A classifier whose test program is the forward before the optimizer, trained two steps in a world of one. */
    private record Trained(Program main, Program test, Var logits, Scope scope, Map<String, Tensor> feed) {
    }

    private static Trained train(Fleet fleet) {
        Program main = new Program().setRandomSeed(5);
        Program startup = new Program().setRandomSeed(5);
        Layers nn = new Layers(main, startup);
        Var x = nn.data("x", DType.F32, -1, 4);
        Var y = nn.data("label", DType.I64, -1, 1);
        Var logits = nn.fc(nn.fc(x, 6, "relu"), 3, null);
        Var loss = nn.mean(nn.softmaxWithCrossEntropy(logits, y));
        Program test = main.copy();
        fleet.distributedOptimizer(new Adam(0.05)).minimize(loss);
        Executor exe = new Executor();
        Scope scope = new Scope();
        exe.run(startup, scope);
        TensorDataset data = TensorDataset.randomClassification(7, 8, 4, 3);
        Map<String, Tensor> feed = Map.of("x", data.fields().get(0), "label", data.fields().get(1));
        exe.run(main, scope, feed, List.of(loss.name()));
        exe.run(main, scope, feed, List.of(loss.name()));
        return new Trained(main, test, logits, scope, feed);
    }

    private Fleet single() {
        return Fleet.init(Role::single, new DistributedStrategy(), QUICK, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8));
    }

    @Test
    void aCheckpointRoundTripsAndACorruptOneFailsNamingTheFileAndLoadsNothing() throws Exception {
        try (Fleet fleet = single()) {
            Trained t = train(fleet);
            Path file = work.resolve("ck.safetensors");
            fleet.saveCheckpoint(file, t.scope(), t.main());
            Map<String, float[]> before = values(t.scope());
            Scope fresh = new Scope();
            t.scope().names().forEach(n -> fresh.put(n, Tensor.zeros(t.scope().get(n).dtype(), t.scope().get(n).shape())));
            fleet.loadCheckpoint(file, fresh, t.main());
            assertEquals(keys(before), keys(values(fresh)));
            before.forEach((n, v) -> assertArrayEquals(v, values(fresh).get(n), n));

            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(ch.size() - 12);
            }
            Scope zeros = new Scope();
            t.scope().names().forEach(n -> zeros.put(n, Tensor.zeros(t.scope().get(n).dtype(), t.scope().get(n).shape())));
            CheckpointException e = assertThrows(CheckpointException.class, () -> fleet.loadCheckpoint(file, zeros, t.main()));
            assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
            values(zeros).forEach((n, v) -> assertTrue(allZero(v), n + " was written by a failed load"));
        }
    }

    @Test
    void anInferenceModelIsPrunedToItsFetchesAndGivesTheTrainedOutputs() throws Exception {
        try (Fleet fleet = single()) {
            Trained t = train(fleet);
            Path dir = work.resolve("model");
            fleet.saveInferenceModel(dir, t.test(), List.of("x"), List.of(t.logits().name()), t.scope());
            Tensor expected = new Executor().run(t.test(), t.scope(), t.feed(), List.of(t.logits().name()))
                    .get(t.logits().name());

            InferenceModel model = Fleet.loadInferenceModel(dir);
            assertEquals(List.of("x"), model.feeds());
            assertEquals(List.of(t.logits().name()), model.fetches());
            String ops = model.program().globalBlock().ops().stream().map(Op::type).collect(Collectors.joining(","));
            assertFalse(ops.contains("softmax_with_cross_entropy") || ops.contains("mean") || ops.contains("adam"), ops);
            assertFalse(model.program().globalBlock().hasVar("label"), "the label is not needed for the logits");
            Tensor got = model.run(new Executor(), Map.of("x", t.feed().get("x"))).get(t.logits().name());
            assertArrayEquals(expected.shape(), got.shape());
            assertArrayEquals(expected.toFloatArray(), got.toFloatArray());

            Files.delete(dir.resolve(InferenceModel.PARAMS_FILE));
            CheckpointException e = assertThrows(CheckpointException.class, () -> Fleet.loadInferenceModel(dir));
            assertTrue(e.getMessage().contains(InferenceModel.PARAMS_FILE), e.getMessage());
        }
    }

    @Test
    void anInferenceModelThatNeedsAnUnfedVarIsRefusedNamingIt() throws Exception {
        try (Fleet fleet = single()) {
            Trained t = train(fleet);
            Var loss = t.test().globalBlock().vars().stream().filter(v -> v.name().startsWith("mean")).findFirst()
                    .orElseThrow();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fleet.saveInferenceModel(
                    work.resolve("bad"), t.test(), List.of("x"), List.of(loss.name()), t.scope()));
            assertTrue(e.getMessage().contains("'label'"), e.getMessage());
        }
    }

    private static Map<String, float[]> values(Scope scope) {
        return scope.names().stream().collect(Collectors.toMap(n -> n, n -> scope.get(n).toFloatArray()));
    }

    private static List<String> keys(Map<String, float[]> m) {
        return m.keySet().stream().sorted().toList();
    }

    private static boolean allZero(float[] v) {
        for (float f : v) {
            if (f != 0) {
                return false;
            }
        }
        return true;
    }
}
