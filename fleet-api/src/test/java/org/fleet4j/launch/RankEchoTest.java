package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** How rank 0's output reaches the console (prefixed) and its log (as written). */
class RankEchoTest {
    private static String[] echo(String output) {
        return echo(new ByteArrayInputStream(output.getBytes(StandardCharsets.UTF_8)));
    }

    private static String[] echo(InputStream rankOutput) {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        RankProcess.copy(rankOutput, log,
                new PrintStream(console, true, StandardCharsets.UTF_8), "[rank 0] ");
        return new String[] {console.toString(StandardCharsets.UTF_8), log.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void everyLineIsPrefixedOnTheConsoleAndLoggedAsWritten() {
        String output = "one\ntwo ünï\n\nlast without newline";

        String[] echoed = echo(output);

        assertEquals("[rank 0] one\n[rank 0] two ünï\n\n[rank 0] last without newline", echoed[0]);
        assertEquals(output, echoed[1]);
    }

    @Test
    void carriageReturnRedrawsKeepThePrefixAndCrLfAddsNoEmptyPrefix() {
        String[] echoed = echo("step 1\rstep 2\rdone\r\nnext\n");

        assertEquals("[rank 0] step 1\r[rank 0] step 2\r[rank 0] done\r\n[rank 0] next\n", echoed[0]);
    }

    /** Every rank JVM prints this warning (the launcher adds the Vector API); the console is spared it, the log keeps it. */
    @Test
    void incubatorWarningIsLeftOffTheConsoleAndKeptInTheLog() {
        String warning = "WARNING: Using incubator modules: jdk.incubator.vector";
        String output = warning + "\nstep 1\n" + warning + ", jdk.incubator.other\nWARNING: Using x\n\nWARNING";

        // Three bytes per read, so the warning arrives in pieces as it can from a pipe.
        String[] echoed = echo(new ByteArrayInputStream(output.getBytes(StandardCharsets.UTF_8)) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 3));
            }
        });

        assertEquals("[rank 0] step 1\n[rank 0] " + warning + ", jdk.incubator.other\n[rank 0] WARNING: Using x\n\n[rank 0] WARNING",
                echoed[0]);
        assertEquals(output, echoed[1]);
    }
}
