package org.fleet4j.fleet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.fleet4j.cluster.JobToken;
import org.fleet4j.cluster.Role;
import org.junit.jupiter.api.Test;

/** The token of a parameter-server job: the exported one, else one derived from Paddle's variables, said aloud. */
class ParameterServerTokenTest {
    private static final List<String> SERVERS = List.of("10.0.0.1:6000", "10.0.0.2:6000");
    private static final byte[] NONCE = JobToken.nonce();

    @Test
    void withoutATokenEveryProcessOfTheJobDerivesTheSameAndSaysTheJobIsOpen() {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        JobToken server = ParameterServerToken.of(Map.of(), Role.server(1, SERVERS, 2, "job", "Paddle launcher"),
                new PrintStream(log, true, StandardCharsets.UTF_8));
        JobToken trainer = ParameterServerToken.of(Map.of(), Role.single().withServerEndpoints(SERVERS),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        JobToken otherJob = ParameterServerToken.of(Map.of(), Role.server(0, List.of("10.0.0.3:6000"), 2, "job", "Paddle"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertArrayEquals(server.proof("p", NONCE), ParameterServerToken.derived(Role.server(0, SERVERS, 2, "job", "x"))
                .proof("p", NONCE), "every server of the job");
        assertFalse(Arrays.equals(server.proof("p", NONCE), otherJob.proof("p", NONCE)), "another job's servers");
        assertFalse(Arrays.equals(server.proof("p", NONCE), trainer.proof("p", NONCE)),
                "a trainer of a job with 1 trainer is not of this job of 2");
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("fleet: no FLEET_JOB_TOKEN: this parameter-server job is"
                + " not protected"), log.toString(StandardCharsets.UTF_8));
    }

    @Test
    void anExportedTokenIsUsedAndAWorldOfManyWithoutServersStillNeedsOne() {
        String secret = JobToken.random().text();
        JobToken token = ParameterServerToken.of(Map.of(JobToken.ENV, secret), Role.server(0, SERVERS, 2, "job", "x"),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertEquals(secret, token.text());
        Role twoTrainers = Role.trainer(0, 2, 0, 2, 0, 1, "127.0.0.1:6170", "127.0.0.1", "job", "x");
        assertThrows(IllegalArgumentException.class, () -> ParameterServerToken.of(Map.of(), twoTrainers,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)));
    }
}
