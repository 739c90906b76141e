package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.fleet4j.core.data.MnistDataset;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.proto.OnnxProto.GraphProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mnist --export_onnx: the model ONNX Runtime runs scores the test digits as the trained Fleet4J model did. */
class MnistOnnxExportIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);

    @TempDir
    Path work;

    @Test
    void theExportedModelGivesOnnxRuntimeTheTestAccuracyThatMnistReports() throws Exception {
        Path file = work.resolve("mnist.onnx");
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, "mnist", "--steps", "5", "--global_batch", "64",
                "--export_onnx", file.toString());
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(Files.readString(job.logDir().resolve("workerlog.0")).contains("mnist: wrote the ONNX model " + file),
                job.describe());
        double reported = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile())
                .get("test_accuracy").asDouble();

        GraphProto graph = ModelProto.parseFrom(Files.readAllBytes(file)).getGraph();
        assertEquals("image", graph.getInput(0).getName());
        String probabilities = graph.getOutput(1).getName();
        MnistDataset test = MnistDataset.bundled(MnistDataset.Split.TEST);
        Tensor images = test.images();
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        float[] p;
        try (OrtSession session = env.createSession(file.toString());
             OnnxTensor in = OnnxTensor.createTensor(env, FloatBuffer.wrap(images.toFloatArray()), images.shape());
             OrtSession.Result r = session.run(Map.of("image", in))) {
            FloatBuffer out = ((OnnxTensor) r.get(probabilities).orElseThrow()).getFloatBuffer();
            p = new float[out.remaining()];
            out.get(p);
        }
        int correct = 0;
        for (int row = 0; row < test.size(); row++) {
            int best = 0;
            double sum = 0;
            for (int c = 0; c < 10; c++) {
                sum += p[row * 10 + c];
                best = p[row * 10 + c] > p[row * 10 + best] ? c : best;
            }
            assertEquals(1.0, sum, 1e-5, "probabilities of digit " + row);
            correct += best == test.labels().getLong(row) ? 1 : 0;
        }
        assertEquals(reported, (double) correct / test.size(), 1e-12, "ONNX Runtime's accuracy against mnist's");
    }

    @Test
    void anExportPathThatIsAFolderFailsBeforeTrainingWithExitCode2() throws Exception {
        Path folder = Files.createDirectories(work.resolve("a-folder"));
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 1, "mnist", "--steps", "5", "--export_onnx",
                folder.toString());
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(job.stderr().contains("mnist: --export_onnx: ONNX model " + folder + " is a folder; name a file in it,"
                + " e.g. " + folder.resolve("model.onnx") + "\n"), job.describe());
        String log = Files.readString(job.logDir().resolve("workerlog.0"));
        assertFalse(log.contains(" training and ") || log.contains("\tat "), "trained or printed a stack trace:\n" + log);
    }
}
