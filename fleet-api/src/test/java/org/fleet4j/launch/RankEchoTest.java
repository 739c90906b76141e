package org.fleet4j.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** How rank 0's output reaches the console (prefixed) and its log (as written). */
class RankEchoTest {
    private static String[] echo(String output) {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        RankProcess.copy(new ByteArrayInputStream(output.getBytes(StandardCharsets.UTF_8)), log,
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
}
