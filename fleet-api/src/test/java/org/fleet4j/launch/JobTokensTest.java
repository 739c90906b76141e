package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which token fleetrun gives its ranks: its own on one host, the user's on several, or none and a refusal. */
class JobTokensTest {
    private static final String SECRET = "bXktam9iLXRva2VuLXNoYXJlZC1ieS1ldmVyeS1ub2Rl";
    private static final ClusterLayout ONE_HOST = ClusterLayout.plan(null, null, null, null, 7000, 2);
    private static final ClusterLayout TWO_HOSTS = ClusterLayout.plan(List.of("10.0.0.1", "10.0.0.2"), null, 0, null, 7000, 2);
    private static final Consumer<String> NO_WARNING = warning -> {
        throw new AssertionError("no warning expected: " + warning);
    };

    @TempDir
    Path dir;

    @Test
    void oneHostGetsAFreshTokenPerJobEvenWhenOneIsExported() {
        Map<String, String> env = Map.of(JobToken.ENV, SECRET);
        JobToken first = JobTokens.forJob(null, env, ONE_HOST, NO_WARNING);
        assertNotEquals(SECRET, first.text(), "an exported token would let two jobs of one user join each other");
        assertNotEquals(first.text(), JobTokens.forJob(null, env, ONE_HOST, NO_WARNING).text());
    }

    @Test
    void severalHostsTakeTheFlagThenTheEnvironment() throws IOException {
        Path file = Files.writeString(dir.resolve("job.token"), "from-the-file-of-the-user\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertEquals("from-the-file-of-the-user", JobTokens.forJob(file.toString(), Map.of(JobToken.ENV, SECRET), TWO_HOSTS, NO_WARNING).text());
        assertEquals(SECRET, JobTokens.forJob(null, Map.of(JobToken.ENV, SECRET), TWO_HOSTS, NO_WARNING).text());
        assertEquals("from-the-file-of-the-user", JobTokens.forJob(null, Map.of(JobToken.FILE_ENV, file.toString()), TWO_HOSTS, NO_WARNING).text());
    }

    @Test
    void severalHostsWithoutATokenOrWithAFileOthersCanReadAreRefused() throws IOException {
        LaunchException none = assertThrows(LaunchException.class, () -> JobTokens.forJob(null, Map.of(), TWO_HOSTS, NO_WARNING));
        assertEquals("a job on 2 nodes needs a job token that every node shares: pass --job_token_file FILE (the same file on"
                + " each node) or export FLEET_JOB_TOKEN; generate one with: head -c 32 /dev/urandom | base64 > job.token;"
                + " chmod 600 job.token (or set FLEET_INSECURE=1 to run the job unprotected)", none.getMessage());
        Path open = Files.writeString(dir.resolve("open.token"), SECRET);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-rw----"));
        LaunchException shared = assertThrows(LaunchException.class, () -> JobTokens.forJob(open.toString(), Map.of(), TWO_HOSTS, NO_WARNING));
        assertTrue(shared.getMessage().startsWith("--job_token_file " + open + " can be read or written by others (mode 0660)"),
                shared.getMessage());
    }

    @Test
    void severalHostsWithoutATokenRunUnprotectedWhenTheUserOptsOut() {
        List<String> warnings = new ArrayList<>();
        assertNull(JobTokens.forJob(null, Map.of(JobToken.INSECURE_ENV, "1"), TWO_HOSTS, warnings::add),
                "no token for the ranks: each derives the job's own and warns");
        assertEquals(List.of("FLEET_INSECURE=1: this job on 2 nodes runs without a job token; every process of it says"
                + " so"), warnings);
    }
}
