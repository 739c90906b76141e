package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which token fleetrun gives its ranks: its own on one host, the user's on several, or none and a refusal. */
class JobTokensTest {
    private static final String SECRET = "bXktam9iLXRva2VuLXNoYXJlZC1ieS1ldmVyeS1ub2Rl";
    private static final ClusterLayout ONE_HOST = ClusterLayout.plan(null, null, null, null, 7000, 2);
    private static final ClusterLayout TWO_HOSTS = ClusterLayout.plan(List.of("10.0.0.1", "10.0.0.2"), null, 0, null, 7000, 2);

    @TempDir
    Path dir;

    @Test
    void oneHostGetsAFreshTokenPerJobEvenWhenOneIsExported() {
        Map<String, String> env = Map.of(JobToken.ENV, SECRET);
        JobToken first = JobTokens.forJob(null, env, ONE_HOST);
        assertNotEquals(SECRET, first.text(), "an exported token would let two jobs of one user join each other");
        assertNotEquals(first.text(), JobTokens.forJob(null, env, ONE_HOST).text());
    }

    @Test
    void severalHostsTakeTheFlagThenTheEnvironment() throws IOException {
        Path file = Files.writeString(dir.resolve("job.token"), "from-the-file-of-the-user\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertEquals("from-the-file-of-the-user", JobTokens.forJob(file.toString(), Map.of(JobToken.ENV, SECRET), TWO_HOSTS).text());
        assertEquals(SECRET, JobTokens.forJob(null, Map.of(JobToken.ENV, SECRET), TWO_HOSTS).text());
        assertEquals("from-the-file-of-the-user", JobTokens.forJob(null, Map.of(JobToken.FILE_ENV, file.toString()), TWO_HOSTS).text());
    }

    @Test
    void severalHostsWithoutATokenOrWithAFileOthersCanReadAreRefused() throws IOException {
        LaunchException none = assertThrows(LaunchException.class, () -> JobTokens.forJob(null, Map.of(), TWO_HOSTS));
        assertEquals("a job on 2 nodes needs a job token that every node shares: pass --job_token_file FILE (the same file on"
                + " each node) or export FLEET_JOB_TOKEN; generate one with: head -c 32 /dev/urandom | base64 > job.token;"
                + " chmod 600 job.token", none.getMessage());
        Path open = Files.writeString(dir.resolve("open.token"), SECRET);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-rw----"));
        LaunchException shared = assertThrows(LaunchException.class, () -> JobTokens.forJob(open.toString(), Map.of(), TWO_HOSTS));
        assertTrue(shared.getMessage().startsWith("--job_token_file " + open + " can be read or written by others (mode 0660)"),
                shared.getMessage());
    }
}
