package org.fleet4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job that asks for more off-heap memory than its limit ends, under the real launcher, in one line naming what was
 * being allocated, the bytes, the limit and the flag that raises it, with exit code 2 and no stack trace.
 */
class OutOfMemoryExitIT {
    private static final Duration JOB_TIMEOUT = Duration.ofMinutes(2);

    @TempDir
    Path work;

    @Test
    void aBatchTooLargeForTheMachineNamesTheInputAndTheLimit() throws Exception {
        FleetRunJob job = FleetRunJob.start(work.resolve("huge"), 1, "mlp_perf", "--batch_size", "10000000",
                "--steps", "1", "--warmup", "0");
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        String line = onlyErrorLine(job);
        assertTrue(line.startsWith("mlp_perf: the input batch of --batch_size 10000000: cannot allocate 29.21 GiB"
                + " (31360000000 bytes) for a tensor float32[10000000, 784]: the off-heap limit is "), line);
        assertTrue(line.contains("-XX:MaxDirectMemorySize"), line);
    }

    @Test
    void anOpOutputBeyondASmallLimitNamesTheOpTheVarAndTheFlagToRaiseIt() throws Exception {
        FleetRunJob job = FleetRunJob.startWithJvmArgs(work.resolve("op"), 1, "-XX:MaxDirectMemorySize=64m", "mlp_perf",
                "--batch_size", "10000", "--steps", "1", "--warmup", "0");
        assertEquals(2, job.await(JOB_TIMEOUT), job.describe());
        String line = onlyErrorLine(job);
        assertTrue(Pattern.matches("mlp_perf: op #\\d+ \\w+, output '[\\w.]+': cannot allocate [\\d.]+ MiB \\(\\d+ bytes\\)"
                + " for a tensor float32\\[10000, \\d+\\]: the off-heap limit is 64\\.00 MiB \\(67108864 bytes\\), [\\d.]+ MiB in use;"
                + " raise the limit with -XX:MaxDirectMemorySize=1g \\(bin/fleetrun --jvm_args \"-XX:MaxDirectMemorySize=1g\"\\)"
                + " or ask for less", line), line);
    }

    /** The rank's log ends in the one error line, with no stack trace; fleetrun shows the same line. */
    private static String onlyErrorLine(FleetRunJob job) throws Exception {
        List<String> log = Files.readAllLines(job.logDir().resolve("workerlog.0"));
        String all = String.join("\n", log);
        assertFalse(all.contains("\tat ") || all.contains("Exception in thread") || all.contains("OutOfMemoryError"), all);
        String line = log.getLast();
        assertTrue(job.stderr().contains(line), job.describe());
        return line;
    }
}
