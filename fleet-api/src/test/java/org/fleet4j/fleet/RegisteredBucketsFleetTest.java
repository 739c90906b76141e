package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Gradient buckets in memory registered with the ring (the shm allreduce then works on every rank's bucket directly)
 * train exactly as buckets in ordinary memory: two real ranks under the launcher, with and without.
 */
class RegisteredBucketsFleetTest {
    @TempDir
    Path work;

    private Properties[] launch(String name, Map<String, String> env) throws Exception {
        return FleetProbe.launch(work, name, 2, env, 16, 10);
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
