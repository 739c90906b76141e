package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.fleet4j.core.data.CriteoReader;
import org.fleet4j.core.data.CriteoRow;
import org.fleet4j.fleet.cli.ProgramMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ctr_data, run through the same entry point as its main: seeded files the Criteo reader takes, and planted.json. */
class CtrDataTest {
    @TempDir
    Path dir;

    /** Exit code and standard error of one ctr_data command line. */
    record Run(int code, String err) {
    }

    static Run ctrData(String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return new Run(ProgramMain.run("ctr_data", new CtrData(), args), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(saved);
        }
    }

    private static JsonNode planted(Path out) throws IOException {
        return new ObjectMapper().readTree(out.resolve(CtrData.PLANTED).toFile());
    }

    private static List<String> lines(Path file) throws IOException {
        try (InputStream in = new GZIPInputStream(Files.newInputStream(file))) {
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII).lines().toList();
        }
    }

    @Test
    void theSameSeedWritesTheSameFilesAndAnotherSeedOthers() throws IOException {
        for (String run : List.of("a", "b", "c")) {
            String seed = run.equals("c") ? "2" : "1";
            assertEquals(0, ctrData("--rows", "3000", "--train_files", "3", "--seed", seed, "--out", dir.resolve(run).toString()).code());
        }
        for (String f : List.of("train-00000.txt", "train-00001.txt", "train-00002.txt", "test.txt", CtrData.PLANTED)) {
            assertArrayEquals(Files.readAllBytes(dir.resolve("a").resolve(f)), Files.readAllBytes(dir.resolve("b").resolve(f)), f);
            assertFalse(Files.readString(dir.resolve("a").resolve(f)).equals(Files.readString(dir.resolve("c").resolve(f))), f);
        }
    }

    @Test
    void theFilesAreCriteoRowsAndThePlantedModelScoresWellAboveChance() throws IOException {
        Path out = dir.resolve("data");
        assertEquals(0, ctrData("--rows", "20000", "--train_files", "2", "--gzip", "--out", out.toString()).code());
        JsonNode p = planted(out);
        assertEquals(18000, p.get("train_rows").asLong());
        assertEquals(2000, p.get("test_rows").asLong());
        double auc = p.get("planted_auc").asDouble();
        double logloss = p.get("planted_logloss").asDouble();
        double rate = p.get("positive_rate").asDouble();
        assertTrue(auc > 0.75 && auc < 0.95, "planted AUC " + auc);
        // better than the best constant guess, the entropy of the positive rate
        double constant = -(rate * Math.log(rate) + (1 - rate) * Math.log(1 - rate));
        assertTrue(logloss < constant - 0.05, "planted logloss " + logloss + " against a constant's " + constant);
        assertTrue(rate > 0.05 && rate < 0.5, "positive rate " + rate);

        List<Path> train = List.of(out.resolve("train-00000.txt.gz"), out.resolve("train-00001.txt.gz"));
        try (CriteoReader r = CriteoReader.open(train, false)) {
            CriteoRow row = new CriteoRow();
            int missing = 0;
            int negative = 0;
            while (r.next(row)) {
                missing += row.sparseMissing(3) ? 1 : 0;
                negative += row.dense(1) < 0 ? 1 : 0;
            }
            assertEquals(18000, r.rows());
            assertTrue(missing > 18000 * 0.03 && missing < 18000 * 0.07, missing + " missing C4 values");
            assertTrue(negative > 0, "I2 goes negative as in Criteo");
        }
        // Zipf ids: the commonest id of a 1536-id field covers a large share of its rows
        List<String> test = lines(out.resolve("test.txt.gz"));
        assertEquals(2000, test.size());
        java.util.Map<String, Integer> counts = new java.util.HashMap<>();
        for (String line : test) {
            counts.merge(line.split("\t", -1)[1 + CriteoRow.DENSE + 9], 1, Integer::sum);
        }
        counts.remove("");
        int top = counts.values().stream().max(Integer::compare).orElseThrow();
        assertTrue(top > 2000 / 10 && counts.size() > 100, "top id " + top + " of " + counts.size() + " ids");
    }

    @Test
    void badFlagsExitWithCode2AndOneLineNamingTheFlag() throws IOException {
        Run r = ctrData("--rows", "1", "--out", dir.resolve("x").toString());
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("ctr_data: --rows 1 leaves no training or no test rows"), r.err());
        r = ctrData("--rows", "100", "--test_fraction", "1.5", "--out", dir.resolve("x").toString());
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("ctr_data: --test_fraction must be between 0 and 1"), r.err());
        r = ctrData("--rows", "100", "--train_files", "0", "--out", dir.resolve("x").toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--train_files must be between 1 and the 90 training rows, got 0"), r.err());
        r = ctrData("--out", dir.resolve("x").toString());
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--rows"), r.err());

        assertEquals(0, ctrData("--rows", "100", "--out", dir.resolve("once").toString()).code());
        r = ctrData("--rows", "100", "--out", dir.resolve("once").toString());
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("ctr_data: --out " + dir.resolve("once") + " already holds "), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }
}
