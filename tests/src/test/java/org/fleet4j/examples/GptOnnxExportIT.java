package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.fleet4j.core.data.TextCorpus;
import org.fleet4j.core.data.TextWindows;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.onnx.proto.OnnxProto.GraphProto;
import org.fleet4j.fleet.onnx.proto.OnnxProto.ModelProto;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * gpt --export_onnx on 2 ranks: ONNX Runtime's probabilities of the exported model give the validation loss that gpt
 * reports, over the same windows; and bad input under the launcher (heads that do not divide the width) ends the job
 * with one line and exit code 2 before training.
 */
class GptOnnxExportIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(3);
    /**
     * The mean of 256 float32 losses near 2.5 computed by two runtimes: measured 1e-7 apart; 1e-5 leaves room for
     * another CPU while one wrong probability in a hundred moves the mean by 1e-3 and more.
     */
    private static final double TOLERANCE = 1e-5;

    @TempDir
    Path work;

    @Test
    void onnxRuntimesProbabilitiesGiveTheValidationLossThatGptReports() throws Exception {
        Path file = work.resolve("gpt.onnx");
        FleetRunJob job = FleetRunJob.start(work.resolve("job"), 2, "gpt", "--n_layer", "2", "--n_head", "2",
                "--n_embd", "32", "--block_size", "16", "--global_batch", "16", "--steps", "30", "--eval_steps", "0",
                "--eval_windows", "16", "--sample", "2", "--export_onnx", file.toString());
        assertEquals(0, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(Files.readString(job.logDir().resolve("workerlog.0")).contains("gpt: wrote the ONNX model " + file),
                job.describe());
        double reported = new ObjectMapper().readTree(job.logDir().resolve("summary.json").toFile()).get("val_loss")
                .asDouble();

        GraphProto graph = ModelProto.parseFrom(Files.readAllBytes(file)).getGraph();
        assertEquals("ids", graph.getInput(0).getName());
        String probabilities = graph.getOutput(1).getName();
        TextCorpus names = TextCorpus.names();
        TextWindows validation = new TextWindows(names.validation(), 16, "the validation names");
        Tensor[] windows = validation.batch(validation.sweepStarts(16));
        int vocab = names.vocabulary().size();
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        float[] p;
        try (OrtSession session = env.createSession(file.toString());
             OnnxTensor in = OnnxTensor.createTensor(env, LongBuffer.wrap(windows[0].toLongArray()), windows[0].shape());
             OrtSession.Result r = session.run(Map.of("ids", in))) {
            FloatBuffer out = ((OnnxTensor) r.get(probabilities).orElseThrow()).getFloatBuffer();
            p = new float[out.remaining()];
            out.get(p);
        }
        assertEquals(16 * 16 * vocab, p.length);
        double loss = 0;
        for (int position = 0; position < 16 * 16; position++) {
            double sum = 0;
            for (int c = 0; c < vocab; c++) {
                sum += p[position * vocab + c];
            }
            assertEquals(1.0, sum, 1e-5, "probabilities at position " + position);
            loss -= Math.log(p[position * vocab + (int) windows[1].getLong(position)]);
        }
        loss /= 16 * 16;
        System.out.printf(Locale.ROOT, "GptOnnxExportIT: validation loss from ONNX Runtime %.7f, gpt's %.7f%n", loss,
                reported);
        assertEquals(reported, loss, TOLERANCE, "ONNX Runtime's validation loss against gpt's");
    }

    @Test
    void headsThatDoNotDivideTheWidthEndTheJobWithOneLineAndExitCode2() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("heads"), 2, "gpt", "--n_head", "3", "--n_embd", "32",
                "--steps", "5");
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        assertTrue(job.stderr().contains("gpt: multiHeadAttention transformer.h.0.attn: 3 heads do not divide the"
                + " width 32; choose n_head dividing n_embd\n"), job.describe());
        for (int r = 0; r < 2; r++) {
            Path log = job.logDir().resolve("workerlog." + r);
            String text = Files.exists(log) ? Files.readString(log) : "";
            assertFalse(text.contains("steps 1..") || text.contains("\tat "), "rank " + r + " trained or printed a"
                    + " stack trace:\n" + text);
        }
    }
}
