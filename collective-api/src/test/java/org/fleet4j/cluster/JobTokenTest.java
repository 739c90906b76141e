package org.fleet4j.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where a rank's job token comes from, what is refused, and that proofs bind the token and every part. */
class JobTokenTest {
    private static final String SECRET = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0";

    @TempDir
    Path dir;

    @Test
    void theEnvironmentVariableWinsOverTheFileAndAWorldOfOneMayGoWithout() throws IOException {
        Path file = privateFile("other-secret-of-the-job\n");
        JobToken fromEnv = fromEnvironment(Map.of(JobToken.ENV, SECRET, JobToken.FILE_ENV, file.toString()), 2);
        assertEquals(SECRET, fromEnv.text());
        assertEquals("other-secret-of-the-job", fromEnvironment(Map.of(JobToken.FILE_ENV, file.toString()), 2).text());
        assertNotEquals(fromEnvironment(Map.of(), 1).text(), fromEnvironment(Map.of(), 1).text());
        assertFalse(fromEnv.toString().contains(SECRET), "a token must never be printed");
    }

    @Test
    void aLargerWorldWithoutATokenIsRefusedSayingHowToGiveOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> fromEnvironment(Map.of(), 2));
        assertTrue(e.getMessage().startsWith("no job token: a job of 2 processes needs the same secret in every process"),
                e.getMessage());
        assertTrue(e.getMessage().contains("FLEET_JOB_TOKEN") && e.getMessage().contains("FLEET_JOB_TOKEN_FILE")
                && e.getMessage().contains("head -c 32 /dev/urandom | base64")
                && e.getMessage().endsWith("or set FLEET_INSECURE=1 to run the job unprotected"), e.getMessage());
    }

    @Test
    void insecureJobsDeriveOneTokenFromWhatTheirProcessesShareAndWarn() {
        List<String> servers = List.of("10.0.0.1:6000", "10.0.0.2:6000");
        Role server = Role.server(1, servers, 2, "job", "Paddle launcher");
        Role trainer = Role.trainer(0, 2, 0, 2, 0, 1, "10.0.0.1:6170", "10.0.0.1", "job", "Paddle launcher")
                .withServerEndpoints(servers);
        Role otherServers = Role.server(0, List.of("10.0.0.3:6000"), 2, "job", "Paddle launcher");
        assertEquals(server.publicJobFacts(), trainer.publicJobFacts(), "a server and a trainer of one job");
        List<String> warnings = new ArrayList<>();
        Map<String, String> insecure = Map.of(JobToken.INSECURE_ENV, "1");
        JobToken ofServer = JobToken.fromEnvironment(insecure, 4, server.publicJobFacts(), warnings::add);
        JobToken ofTrainer = JobToken.fromEnvironment(insecure, 4, trainer.publicJobFacts(), warnings::add);
        JobToken ofOtherJob = JobToken.fromEnvironment(insecure, 3, otherServers.publicJobFacts(), warnings::add);
        byte[] nonce = JobToken.nonce();
        assertArrayEquals(ofServer.proof("p", nonce), ofTrainer.proof("p", nonce), "one token for the whole job");
        assertFalse(Arrays.equals(ofServer.proof("p", nonce), ofOtherJob.proof("p", nonce)), "another job's");
        assertEquals(3, warnings.size(), "every process warns");
        assertTrue(warnings.get(0).startsWith("FLEET_INSECURE=1: this job of 4 processes runs without a job token"),
                warnings.get(0));
        assertEquals(SECRET, JobToken.fromEnvironment(Map.of(JobToken.INSECURE_ENV, "1", JobToken.ENV, SECRET), 4,
                server.publicJobFacts(), warnings::add).text(), "a token given wins");
        assertEquals(3, warnings.size(), "and nothing is said");
        assertThrows(IllegalArgumentException.class, () -> JobToken.fromEnvironment(Map.of(JobToken.INSECURE_ENV, "yes"),
                4, server.publicJobFacts(), warnings::add), "only 1 opts out");
    }

    private static JobToken fromEnvironment(Map<String, String> env, int processes) {
        return JobToken.fromEnvironment(env, processes, "job facts", warning -> {
            throw new AssertionError("no warning expected: " + warning);
        });
    }

    @Test
    void aShortTokenOrAFileOthersCanReadIsRefused() throws IOException {
        IllegalArgumentException shortOne = assertThrows(IllegalArgumentException.class,
                () -> fromEnvironment(Map.of(JobToken.ENV, "guessable"), 2));
        assertTrue(shortOne.getMessage().contains("9 characters; at least 16"), shortOne.getMessage());
        Path shared = privateFile(SECRET);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-r--r--"));
        IllegalArgumentException open = assertThrows(IllegalArgumentException.class, () -> JobToken.fromFile(shared, "--job_token_file"));
        assertTrue(open.getMessage().contains("(mode 0644)") && open.getMessage().contains("chmod 600 " + shared), open.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> JobToken.fromFile(dir.resolve("nope"), "--job_token_file"));
        assertTrue(missing.getMessage().contains("no such file"), missing.getMessage());
    }

    @Test
    void aProofChecksOnlyWithTheSameTokenPurposeAndParts() {
        JobToken token = JobToken.of(SECRET, "test");
        byte[] nonce = JobToken.nonce();
        byte[] proof = token.proof("purpose", nonce, new byte[] {1});
        assertTrue(JobToken.of(SECRET, "test").verifies(proof, "purpose", nonce, new byte[] {1}));
        assertFalse(JobToken.random().verifies(proof, "purpose", nonce, new byte[] {1}), "another token");
        assertFalse(token.verifies(proof, "other purpose", nonce, new byte[] {1}), "another purpose");
        assertFalse(token.verifies(proof, "purpose", JobToken.nonce(), new byte[] {1}), "another nonce");
        assertFalse(token.verifies(proof, "purpose", nonce, new byte[] {}, new byte[] {1}), "parts split differently");
    }

    private Path privateFile(String text) throws IOException {
        Path file = Files.writeString(dir.resolve("token-" + System.nanoTime()), text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }
}
