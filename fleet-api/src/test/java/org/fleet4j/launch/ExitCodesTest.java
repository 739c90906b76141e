package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.core.data.DataFormatException;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.pserver.transport.PsException;
import org.junit.jupiter.api.Test;

/** Which exit code a failure gets: what the failure that wrappers carry is. */
class ExitCodesTest {
    @Test
    void aFailedPeerIsThreeThroughWrappers() {
        assertEquals(ExitCodes.PEER_FAILED, ExitCodes.of(new CollectiveException("rank 1 (pid 9) exited or was killed")));
        assertEquals(ExitCodes.PEER_FAILED, ExitCodes.of(new ExecutionException("op #3 pull_sparse failed",
                new PsException("parameter server 127.0.0.1:6000: no answer within 180000 ms"))));
        assertEquals(ExitCodes.PEER_FAILED, ExitCodes.of(new RuntimeException(
                new CompletionException(new CollectiveException("stalled")))));
    }

    @Test
    void aBadFlagThatNamesThePeerSideErrorItCausedIsBadInput() {
        assertEquals(ExitCodes.BAD_INPUT, ExitCodes.of(new IllegalArgumentException("--protocol x: no transport",
                new PsException("no transport for protocol 'x'"))));
    }

    @Test
    void badInputIsTwoThroughWrappers() {
        assertEquals(ExitCodes.BAD_INPUT, ExitCodes.of(new IllegalArgumentException("--steps must be at least 1")));
        assertEquals(ExitCodes.BAD_INPUT, ExitCodes.of(new DataFormatException(Path.of("train.txt"), "line 7 ...")));
        assertEquals(ExitCodes.BAD_INPUT, ExitCodes.of(new UncheckedIOException(new AccessDeniedException("/sys/x"))));
        assertEquals(ExitCodes.BAD_INPUT, ExitCodes.of(new ExecutionException("op #1 mul failed: shapes [2] and [3]",
                new IllegalArgumentException("shapes [2] and [3]"))));
    }

    @Test
    void anythingElseIsABug() {
        assertEquals(ExitCodes.INTERNAL_ERROR, ExitCodes.of(new NullPointerException()));
        assertEquals(ExitCodes.INTERNAL_ERROR, ExitCodes.of(new ExecutionException("op #2 relu failed",
                new IllegalStateException("no kernel state"))));
        assertEquals(ExitCodes.INTERNAL_ERROR, ExitCodes.of(new StackOverflowError()));
    }

    @Test
    void aProcessKilledByASignalIsAFailedPeerForTheLauncher() {
        assertEquals(ExitCodes.PEER_FAILED, ExitStatus.launcherCode(128 + 9));
        assertEquals(ExitCodes.PEER_FAILED, ExitStatus.launcherCode(0), "a server that ended too early");
        assertEquals(ExitCodes.BAD_INPUT, ExitStatus.launcherCode(2));
        assertEquals(7, ExitStatus.launcherCode(7), "a program's own code passes");
        assertEquals("exited with code 3 (a peer died or stalled)", ExitStatus.describe(3));
    }
}
