package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * num_iteration_per_run on two real ranks under the launcher: with the strategy's N = 3, each executor call of
 * {@link IterationsPerRunProbe} runs three synchronised training iterations, so 4 calls end with the parameters and
 * losses of 12 single-iteration calls (each batch fed three times), on both ranks alike, and not with those of 4.
 */
class IterationsPerRunTest {
    private static final int CALLS = 4;

    @TempDir
    Path work;

    @Test
    void threeIterationsPerRunEqualThreeSingleRunsOnTwoRanks() throws Exception {
        Path out = Files.createDirectories(work.resolve("out"));
        Path strategy = Files.writeString(work.resolve("strategy.yaml"), "execution_strategy:\n  num_iteration_per_run: 3\n");
        LaunchedJob job = LaunchedJob.run(work.resolve("job"), 2, Duration.ofSeconds(120),
                IterationsPerRunProbe.class.getName(), out.toString(), strategy.toString(), "" + CALLS);
        assertEquals(0, job.exitCode(), job.describe());
        Properties[] ranks = new Properties[2];
        for (int r = 0; r < 2; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        for (int r = 0; r < 2; r++) {
            Properties p = ranks[r];
            String where = "rank " + r;
            assertEquals("3", p.getProperty("iterations_per_run"), where + ": the strategy's N reaches the executor");
            assertEquals(p.getProperty("single.params"), p.getProperty("per_run.params"),
                    where + ": 4 calls of 3 iterations against 12 calls of 1");
            assertEquals(p.getProperty("single.losses"), p.getProperty("per_run.losses"), where + ": losses");
            assertNotEquals(p.getProperty("once.params"), p.getProperty("per_run.params"),
                    where + ": 4 calls of 1 iteration must end elsewhere, or N was not in effect");
            assertEquals(4, Arrays.stream(p.getProperty("per_run.losses").replaceAll("[\\[\\] ]", "").split(",")).count());
        }
        assertEquals(ranks[0].getProperty("per_run.params"), ranks[1].getProperty("per_run.params"),
                "both ranks end with the same parameters: every iteration allreduced its gradients");
    }
}
