package org.fleet4j.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
        JobToken fromEnv = JobToken.fromEnvironment(Map.of(JobToken.ENV, SECRET, JobToken.FILE_ENV, file.toString()), 2);
        assertEquals(SECRET, fromEnv.text());
        assertEquals("other-secret-of-the-job", JobToken.fromEnvironment(Map.of(JobToken.FILE_ENV, file.toString()), 2).text());
        assertNotEquals(JobToken.fromEnvironment(Map.of(), 1).text(), JobToken.fromEnvironment(Map.of(), 1).text());
        assertFalse(fromEnv.toString().contains(SECRET), "a token must never be printed");
    }

    @Test
    void aLargerWorldWithoutATokenIsRefusedSayingHowToGiveOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> JobToken.fromEnvironment(Map.of(), 2));
        assertTrue(e.getMessage().contains("FLEET_JOB_TOKEN") && e.getMessage().contains("FLEET_JOB_TOKEN_FILE")
                && e.getMessage().contains("head -c 32 /dev/urandom | base64"), e.getMessage());
    }

    @Test
    void aShortTokenOrAFileOthersCanReadIsRefused() throws IOException {
        IllegalArgumentException shortOne = assertThrows(IllegalArgumentException.class,
                () -> JobToken.fromEnvironment(Map.of(JobToken.ENV, "guessable"), 2));
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
