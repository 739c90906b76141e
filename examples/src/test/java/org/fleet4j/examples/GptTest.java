package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.fleet4j.core.io.Checkpoint;
import org.fleet4j.core.io.SafeTensors;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.fleet.cli.ProgramMain;
import org.fleet4j.fleet.metrics.LossCurve;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gpt program run through its command line in this JVM (one rank): exact resume, what it writes, and bad input
 * refused with one line and exit code 2.
 */
class GptTest {
    /** A model small enough for a test: one block of 16 channels, contexts of 8. */
    private static final List<String> TINY = List.of("--n_layer", "1", "--n_head", "2", "--n_embd", "16",
            "--block_size", "8", "--batch_size", "4", "--eval_windows", "8", "--sample", "2", "--sample_length", "6");
    /** AdamW with clipping and a warm-up cosine schedule over ten steps, whatever step a run stops at. */
    private static final List<String> RECIPE = List.of("--optimizer", "adamw", "--lr", "0.01", "--grad_clip", "0.5",
            "--lr_schedule", "warmup_cosine", "--warmup_steps", "3", "--lr_decay_steps", "10", "--eval_steps", "4");

    @TempDir
    Path dir;

    /** Exit code, standard output and standard error of one gpt command line. */
    record Run(int code, String out, String err) {
    }

    /** Runs gpt with TINY's options, {@code args} replacing those it names (every option here takes a value). */
    private Run gpt(String name, List<String> args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (List<String> pairs : List.of(TINY, List.of("--log_dir", dir.resolve(name).toString()), args)) {
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
            int code = ProgramMain.run("gpt", new Gpt(), all.toArray(String[]::new));
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
        }
    }

    private Run trained(String name, String... args) {
        List<String> all = new ArrayList<>(RECIPE);
        all.addAll(List.of(args));
        Run r = gpt(name, all);
        assertEquals(0, r.code(), r.out() + r.err());
        return r;
    }

    @Test
    void aCheckpointAfterStepSixResumedToTenEqualsAnUninterruptedRunBitForBit() throws Exception {
        Path six = dir.resolve("six.safetensors");
        trained("six", "--steps", "6", "--save_checkpoint", six.toString());
        Path resumed = dir.resolve("resumed.safetensors");
        Run resume = trained("resumed", "--steps", "10", "--load_checkpoint", six.toString(), "--save_checkpoint",
                resumed.toString());
        assertTrue(resume.out().contains("gpt: loaded the training state from " + six + " after step 6"), resume.out());
        Path whole = dir.resolve("whole.safetensors");
        trained("whole", "--steps", "10", "--save_checkpoint", whole.toString());

        Map<String, Tensor> a = SafeTensors.read(resumed);
        Map<String, Tensor> b = SafeTensors.read(whole);
        assertEquals(b.keySet(), a.keySet());
        assertTrue(a.keySet().containsAll(List.of("@LR_STEP@", WindowPosition.VAR,
                "transformer.h.0.attn.c_attn.w_0_moment2_0")), a.keySet().toString());
        for (String name : a.keySet()) {
            assertArrayEquals(b.get(name).toDoubleArray(), a.get(name).toDoubleArray(), name + " differs");
        }
        assertArrayEquals(new long[]{1, 10}, a.get(WindowPosition.VAR).toLongArray(), "seed 1, ten batches drawn");
        double[] wholeLosses = LossCurve.readCsv(dir.resolve("whole/loss_curve.csv"));
        double[] resumedLosses = LossCurve.readCsv(dir.resolve("resumed/loss_curve.csv"));
        assertArrayEquals(Arrays.copyOfRange(wholeLosses, 6, 10), resumedLosses, "steps 7-10 had the same losses");
        assertEquals(Files.readString(dir.resolve("resumed/loss_curve.csv")).lines().skip(1).findFirst().orElseThrow(),
                "7," + resumedLosses[0], "the resumed curve numbers its steps on from the checkpoint's");

        // the comparison sees a resume that starts the batches over: the checkpoint's position set back to 0
        Checkpoint saved = SafeTensors.readCheckpoint(six);
        saved.tensors().get(WindowPosition.VAR).setLong(1, 0);
        Path restarted = dir.resolve("restarted-data.safetensors");
        SafeTensors.write(restarted, saved.tensors(), saved.metadata());
        Path wrong = dir.resolve("wrong.safetensors");
        trained("wrong", "--steps", "10", "--load_checkpoint", restarted.toString(), "--save_checkpoint", wrong.toString());
        Map<String, Tensor> c = SafeTensors.read(wrong);
        assertFalse(Arrays.equals(b.get("transformer.wte.w_0").toDoubleArray(), c.get("transformer.wte.w_0").toDoubleArray()),
                "batches drawn from the start again train other parameters");

        Run otherSeed = gpt("seed", List.of("--steps", "10", "--seed", "2", "--load_checkpoint", six.toString()));
        assertRefusedWith(otherSeed, "gpt: checkpoint " + six + " drew its training windows with --seed 1; resume it"
                + " with --seed 1 to continue the same batches");
    }

    @Test
    void aRunWritesItsSummaryCurvesAndSamples() throws Exception {
        Run r = trained("summary", "--steps", "8", "--sample", "3", "--prompt", "Ma");
        JsonNode s = new ObjectMapper().readTree(dir.resolve("summary/summary.json").toFile());
        for (String key : List.of("train_loss", "val_loss", "tokens_per_sec", "final_loss")) {
            assertTrue(s.get(key).asDouble() > 0, key + " in " + s);
        }
        assertEquals(8, s.get("steps").asInt());
        assertEquals(54, s.get("vocab_size").asInt());
        assertEquals(3, s.get("samples").size());
        for (JsonNode sample : s.get("samples")) {
            assertTrue(sample.asText().startsWith("Ma") && !sample.asText().contains("\n"), sample.asText());
            assertTrue(r.out().contains("gpt: sample ") && r.out().contains(": " + sample.asText() + "\n"), r.out());
        }
        assertEquals(List.of("4", "8"), Files.readAllLines(dir.resolve("summary/val_loss_curve.csv")).stream().skip(1)
                .map(l -> l.split(",")[0]).toList(), "validation every --eval_steps and at the end");
        assertEquals(8, LossCurve.readCsv(dir.resolve("summary/loss_curve.csv")).length);
        assertTrue(Files.size(dir.resolve("summary/loss_curve.png")) > 0);
        assertTrue(r.out().contains("gpt: step 4: train loss "), r.out());
    }

    @Test
    void badInputIsRefusedWithOneLineNamingTheValuesAndTheFixAndExitCode2() throws Exception {
        assertRefusedWith(gpt("heads", List.of("--n_head", "3")), "gpt: multiHeadAttention transformer.h.0.attn: 3 heads"
                + " do not divide the width 16; choose n_head dividing n_embd");
        assertRefusedWith(gpt("prompt", List.of("--prompt", "Maximiliana")), "gpt: --prompt of 11 characters does not"
                + " fit --block_size 8: a sample's context is a newline and the prompt; give at most 7 characters, or a"
                + " larger --block_size");
        assertRefusedWith(gpt("prompt-char", List.of("--prompt", "M3")), "gpt: --prompt 'M3': character '3' is not in the"
                + " training text's 54 characters; use only characters of '\\n-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'");
        Path binary = Files.write(dir.resolve("model.bin"), new byte[]{'G', 'P', 'T', 0, 7, 7});
        assertRefusedWith(gpt("binary", List.of("--data", binary.toString())), "gpt: " + binary
                + ": is not text: it holds a NUL byte at offset 3 (a binary file?); give a UTF-8 text file");
        Path latin1 = Files.write(dir.resolve("latin1.txt"), "Ren\u00e9e\nZo\u00eb\n".getBytes(StandardCharsets.ISO_8859_1));
        assertRefusedWith(gpt("latin1", List.of("--data", latin1.toString())), "gpt: " + latin1 + ": is not UTF-8 text:"
                + " byte 0xE9 at offset 3 does not begin or continue a UTF-8 character (a binary file, or another encoding"
                + " such as Latin-1: convert it with iconv -t UTF-8)");
        Path empty = Files.write(dir.resolve("empty.txt"), new byte[0]);
        assertRefusedWith(gpt("empty", List.of("--data", empty.toString())), "gpt: " + empty
                + ": is empty; give a UTF-8 text file of at least a few lines");
        Path one = Files.writeString(dir.resolve("one.txt"), "aaaa\n".repeat(50));
        assertRefusedWith(gpt("one", List.of("--data", one.toString())), "gpt: " + one + ": holds one distinct character,"
                + " 'a' U+0061, besides line breaks: there is nothing to learn; give a text of at least two different"
                + " characters");
        Path shortText = Files.writeString(dir.resolve("short.txt"), "abcdefghij\n".repeat(5));
        assertRefusedWith(gpt("short", List.of("--data", shortText.toString())), "gpt: the validation text of " + shortText
                + " (55 characters) has 6 characters, fewer than block_size + 1 = 9 that one window needs; give a longer"
                + " text or a smaller block_size");
        assertRefusedWith(gpt("topk", List.of("--top_k", "60")), "gpt: --top_k must be 0 (every character) or 1..54 (the"
                + " vocabulary), got 60");
        assertRefusedWith(gpt("decay", List.of("--weight_decay", "0.1", "--optimizer", "sgd")), "gpt: --weight_decay is"
                + " adamw's; --optimizer 'sgd' decays nothing");
        assertRefusedWith(gpt("schedule", List.of("--warmup_steps", "5")), "gpt: --warmup_steps, --min_lr and"
                + " --lr_decay_steps shape the warmup_cosine schedule; add --lr_schedule warmup_cosine, or drop them");
        Path windows = Files.writeString(dir.resolve("windows.txt"), "0 1 2 3\n");
        assertRefusedWith(gpt("windows", List.of("--windows", windows.toString(), "--steps", "2")), "gpt: --windows "
                + windows + " has 1 batches, fewer than the 2 steps asked; give a line for every step or fewer --steps");
    }

    private static void assertRefusedWith(Run r, String line) {
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(line, r.err().strip(), r.out());
        assertFalse(r.out().contains("steps 1.."), "it trained before refusing: " + r.out());
    }
}
