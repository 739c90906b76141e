package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gradient buckets in memory registered with the ring (the shm allreduce then works on every rank's bucket directly)
 * train exactly as buckets in ordinary memory: two real ranks under the launcher, with and without.
 */
class RegisteredBucketsFleetTest {
    private static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path work;

    private Properties[] launch(String name, Map<String, String> env) throws Exception {
        Path out = Files.createDirectories(work.resolve(name + "-out"));
        LaunchedJob job = LaunchedJob.run(work.resolve(name), 2, env, JOB_TIMEOUT, FleetProbe.class.getName(),
                out.toString(), "16", "10");
        assertEquals(0, job.exitCode(), job.describe());
        Properties[] ranks = new Properties[2];
        for (int r = 0; r < 2; r++) {
            ranks[r] = new Properties();
            ranks[r].load(new StringReader(Files.readString(out.resolve("rank-" + r + ".properties"))));
        }
        return ranks;
    }

    @Test
    void registeredBucketsTrainExactlyLikeOrdinaryOnes() throws Exception {
        Properties[] registered = launch("registered", Map.of());
        Properties[] ordinary = launch("ordinary", Map.of(RegisteredBucketMemory.ENV, "0"));
        for (int r = 0; r < 2; r++) {
            assertTrue(registered[r].getProperty("main_ops").contains("gather_bucket"), registered[r].getProperty("main_ops"));
            assertNotEquals("0", registered[r].getProperty("registered_bucket_bytes"), "rank " + r + " placed its buckets");
            assertEquals("0", ordinary[r].getProperty("registered_bucket_bytes"), "rank " + r + " with " + RegisteredBucketMemory.ENV + "=0");
            // two ranks add the same two numbers either way, so the results agree to the last bit
            assertEquals(ordinary[r].getProperty("trained"), registered[r].getProperty("trained"), "rank " + r);
        }
        assertNotEquals(registered[0].getProperty("initial"), registered[0].getProperty("trained"));
    }

    @Test
    void aBadSettingIsRejectedNamingTheVariable() {
        String msg = assertThrows(IllegalArgumentException.class, () -> RegisteredBucketMemory.enabled("yes")).getMessage();
        assertTrue(msg.contains("FLEET_REGISTERED_BUCKETS='yes'") && msg.contains("must be 1"), msg);
        assertTrue(RegisteredBucketMemory.enabled(null));
        assertTrue(!RegisteredBucketMemory.enabled("0"));
    }
}
