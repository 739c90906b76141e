package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.fleet.cli.ProgramMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gpt_perf program run through its command line in this JVM (one rank) on a tiny model: a few steps and the
 * summary they write, whose figures must agree with each other; bad input refused with one line and exit code 2.
 */
class GptPerfTest {
    /** One block of 16 channels, contexts of 8, 4 sequences: 32 tokens a step. */
    private static final List<String> TINY = List.of("--n_layer", "1", "--n_head", "2", "--n_embd", "16",
            "--block_size", "8", "--vocab_size", "10", "--batch_size", "4");

    @TempDir
    Path dir;

    record Run(int code, String out, String err) {
    }

    /** Runs gpt_perf with TINY's options, {@code args} replacing those it names (every option here takes a value). */
    private Run gptPerf(String name, String... args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (List<String> pairs : List.of(TINY, List.of("--log_dir", dir.resolve(name).toString()), List.of(args))) {
            for (int i = 0; i < pairs.size(); i += 2) {
                options.put(pairs.get(i), pairs.get(i + 1));
            }
        }
        List<String> all = new ArrayList<>();
        options.forEach((k, v) -> all.addAll(List.of(k, v)));
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int code = ProgramMain.run("gpt_perf", new GptPerf(), all.toArray(String[]::new));
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
    }

    @Test
    void aFewStepsWriteASummaryWhoseFiguresAgree() throws Exception {
        Run r = gptPerf("ok", "--steps", "5", "--warmup", "2");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("gpt_perf: 1 layers, 2 heads, n_embd 16, block_size 8, batch 4 x 1 rank(s) = 32"
                + " tokens a step"), r.out());
        JsonNode s = new ObjectMapper().readTree(dir.resolve("ok/summary.json").toFile());
        assertEquals("gpt_perf", s.get("program").asText());
        assertEquals(1, s.get("world_size").asInt());
        assertEquals(32, s.get("tokens_per_step").asLong(), "batch_size x block_size x ranks");
        assertEquals(5, s.get("steps").asInt());
        assertEquals(2, s.get("warmup").asInt());
        double ms = s.get("step_ms").asDouble();
        assertTrue(ms > 0 && s.get("step_ms_p10").asDouble() <= ms && ms <= s.get("step_ms_p90").asDouble(),
                s.toString());
        assertEquals(32 / (ms / 1e3), s.get("tokens_per_sec").asDouble(), 1e-9 * s.get("tokens_per_sec").asDouble(),
                "tokens/s from the median step");
        assertTrue(s.get("cpu_ms").asDouble() > 0, s.toString());
        assertTrue(s.get("peak_offheap_bytes").asLong() > 0, s.toString());
    }

    @Test
    void badInputIsRefusedWithOneLineNamingTheValuesAndExitCode2() {
        assertRefusedWith(gptPerf("steps", "--steps", "0"), "gpt_perf: --batch_size (4) and --steps (0) must be at"
                + " least 1, --warmup (100) at least 0 and --vocab_size (10) at least 2");
        assertRefusedWith(gptPerf("vocab", "--vocab_size", "1"), "gpt_perf: --batch_size (4) and --steps (50) must be"
                + " at least 1, --warmup (100) at least 0 and --vocab_size (1) at least 2");
        assertRefusedWith(gptPerf("layers", "--n_layer", "0"), "gpt_perf: n_layer must be at least 1, got 0");
    }

    private static void assertRefusedWith(Run r, String line) {
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(line, r.err().strip(), r.out());
        assertFalse(r.out().contains("tokens a step"), "it measured before refusing: " + r.out());
    }
}
