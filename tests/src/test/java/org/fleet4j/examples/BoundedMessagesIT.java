package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Messages that quote input quote a bounded, escaped prefix: a 10 MB data field, a 1 MB strategy value and a binary
 * data file each give one short line, exit 2, and put no control byte on the terminal or in the logs.
 */
class BoundedMessagesIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);
    /**
     * A line that quotes input stays below this, however long the input: the message's own words, the file's path
     * and a quote of at most 80 characters with the input's length.
     */
    private static final int LINE_LIMIT = 300;

    @TempDir
    Path work;

    /** A well-formed Criteo line: label, 13 integers, 26 hexadecimal ids. */
    private static String criteoLine(int i) {
        StringBuilder s = new StringBuilder().append(i % 2);
        for (int j = 0; j < 13; j++) {
            s.append('\t').append(i + j);
        }
        for (int j = 0; j < 26; j++) {
            s.append('\t').append(Integer.toHexString(1000 + i * 26 + j));
        }
        return s.toString();
    }

    /** A data folder whose training file has {@code badField} as I1 of its fourth line. */
    private Path data(String name, byte[] badField) throws IOException {
        Path dir = Files.createDirectories(work.resolve(name));
        List<String> good = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            good.add(criteoLine(i));
        }
        Files.writeString(dir.resolve("test.txt"), String.join("\n", good) + "\n");
        String[] fields = criteoLine(3).split("\t", -1);
        try (var out = Files.newOutputStream(dir.resolve("train.txt"))) {
            for (int i = 0; i < 8; i++) {
                if (i == 3) {
                    out.write(fields[0].getBytes(StandardCharsets.US_ASCII));
                    out.write('\t');
                    out.write(badField);
                    for (int j = 2; j < fields.length; j++) {
                        out.write(('\t' + fields[j]).getBytes(StandardCharsets.US_ASCII));
                    }
                    out.write('\n');
                } else {
                    out.write((good.get(i) + "\n").getBytes(StandardCharsets.US_ASCII));
                }
            }
        }
        return dir;
    }

    /** Everything the job wrote: the launcher's output and the rank's log. */
    private static String output(FleetRunJob job) throws IOException {
        return job.describe();
    }

    /** The one line that contains {@code marker}, checked to be short. */
    private static String lineWith(String all, String marker) {
        String found = null;
        for (String line : all.split("\n")) {
            if (line.contains(marker)) {
                assertTrue(line.length() < LINE_LIMIT, line.length() + " characters: " + line.substring(0, Math.min(line.length(), 300)));
                found = line;
            }
        }
        assertTrue(found != null, "no line says " + marker + ":\n" + all.substring(0, Math.min(all.length(), 4000)));
        return found;
    }

    @Test
    void aTenMegabyteFieldGivesOneShortLineAndTheFailureTailShowsIt() throws Exception {
        byte[] field = "x".repeat(10 * 1024 * 1024).getBytes(StandardCharsets.US_ASCII);
        Path data = data("big", field);
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 1, "ctr", "--data_dir", data.toString());
        assertEquals(2, job.await(JOB_TIMEOUT), job.stderr().substring(0, Math.min(job.stderr().length(), 2000)));
        String all = output(job);
        assertTrue(all.length() < 64 * 1024, "the job wrote " + all.length() + " characters");
        String line = lineWith(all, "integer feature I1");
        assertTrue(line.contains("'" + "x".repeat(77) + "...' (10485760 characters) is not a decimal integer"), line);
        // the launcher's failure tail holds the line too
        String stderr = job.stderr();
        int tail = stderr.indexOf("last ");
        assertTrue(tail >= 0 && stderr.indexOf("integer feature I1", tail) > 0, stderr);
    }

    @Test
    void aMegabyteStrategyValueGivesOneShortLine() throws Exception {
        Path strategy = Files.writeString(work.resolve("ps.yaml"), "mode: ps\nprotocol: " + "a".repeat(1 << 20) + "\n");
        Path data = data("data", "7".getBytes(StandardCharsets.US_ASCII));
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 1, List.of("--server_num", "1", "--worker_num", "1",
                "--strategy", strategy.toString()), "ctr", "--data_dir", data.toString());
        assertEquals(2, job.await(JOB_TIMEOUT));
        String all = output(job);
        assertTrue(all.length() < 16 * 1024, "the job wrote " + all.length() + " characters");
        String line = lineWith(all, "protocol");
        assertTrue(line.contains("(1048576 characters)"), line);
    }

    @Test
    void aBinaryDataFilePutsNoControlByteOnTheTerminalOrInTheLog() throws Exception {
        // no \n or \r: a reader of lines ends the line there
        byte[] field = {0x1b, '[', '3', '1', 'm', 0x07, 0x08, 0x7f, (byte) 0x9b, '2', 'J', 0x00, 0x1b, ']', '0', ';'};
        Path data = data("binary", field);
        FleetRunJob job = FleetRunJob.start(work.resolve("run"), 1, "ctr", "--data_dir", data.toString());
        assertEquals(2, job.await(JOB_TIMEOUT));
        String all = output(job);
        for (int i = 0; i < all.length(); i++) {
            char c = all.charAt(i);
            assertTrue(c == '\n' || (c >= 0x20 && c != 0x7f && !(c >= 0x80 && c < 0xa0)),
                    "control character 0x" + Integer.toHexString(c) + " at " + i + " in:\n" + all);
        }
        String line = lineWith(all, "integer feature I1");
        assertTrue(line.contains("'\\x1b[31m\\x07\\x08\\x7f\\x9b2J\\0\\x1b]0;' is not a decimal integer"), line);
    }
}
