package org.fleet4j.fleet.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.tensor.OffHeapMemory;
import org.fleet4j.core.tensor.Tensor;
import org.fleet4j.launch.ExitCodes;
import org.fleet4j.launch.LogLevel;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * A program that cannot get its memory ends in one line and exit code 2, on the heap and off it; a bad --log_level is
 * a bad flag; an op whose collective timed out is a failed peer (3), not bad input; a bug is 1 and says so.
 */
class ProgramMainTest {
    @Command(name = "heap")
    static final class HeapHog implements Callable<Integer> {
        @Override
        public Integer call() {
            long[] tooLarge = new long[Integer.MAX_VALUE - 8]; // 16 GiB, beyond the test JVM's heap
            return tooLarge.length;
        }
    }

    @Command(name = "tensor")
    static final class TensorHog implements Callable<Integer> {
        @Override
        public Integer call() {
            return (int) Tensor.zeros(OffHeapMemory.limit() / 4 + 1).numel();
        }
    }

    @Command(name = "quiet")
    static final class Quiet implements Callable<Integer> {
        @Mixin
        LogLevelOption log;

        @Override
        public Integer call() {
            return log.level() == LogLevel.WARN ? 0 : 1;
        }
    }

    @Command(name = "failing")
    static final class Failing implements Callable<Integer> {
        private final RuntimeException failure;

        Failing(RuntimeException failure) {
            this.failure = failure;
        }

        @Override
        public Integer call() {
            throw failure;
        }
    }

    private record Result(int code, String err) {
    }

    private static Result run(Callable<Integer> program, String... args) {
        PrintStream saved = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return new Result(ProgramMain.run("prog", program, args), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(saved);
        }
    }

    @Test
    void theLogLevelIsOneOfThreeAndAnyOtherIsABadFlag() {
        assertEquals(0, run(new Quiet(), "--log_level", "Warn").code(), "warn, in any case, is taken");
        Result r = run(new Quiet(), "--log_level", "loud");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("prog: Invalid value for option '--log_level'"), r.err());
        assertTrue(r.err().contains("DEBUG, INFO, WARN") && r.err().contains("'loud'"), r.err());
    }

    @Test
    void aFullHeapIsOneLineNamingTheLimitAndTheFlag() {
        Result r = run(new HeapHog());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("prog: out of memory: the Java heap (limit "), r.err());
        assertTrue(r.err().contains("raise it with -Xmx (bin/fleetrun --jvm_args"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }

    @Test
    void aTensorBeyondTheOffHeapLimitIsOneLineAndExitCode2() {
        Result r = run(new TensorHog());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("prog: cannot allocate "), r.err());
        assertTrue(r.err().contains("the off-heap limit is"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertFalse(r.err().contains("\tat "), r.err());
    }

    @Test
    void anOpWhoseCollectiveTimedOutIsAFailedPeer() {
        Result r = run(new Failing(new ExecutionException("op #7 c_allreduce failed: allreduce #3 timed out",
                new CollectiveException("allreduce #3 on group 'default' timed out after 6000 ms: ranks [1] did not"
                        + " take part"))));
        assertEquals(ExitCodes.PEER_FAILED, r.code(), r.err());
        assertEquals("prog: op #7 c_allreduce failed: allreduce #3 timed out\n", r.err());
    }

    @Test
    void aBadFeedIsBadInputAndABugIsAnInternalError() {
        assertEquals(ExitCodes.BAD_INPUT, run(new Failing(new ExecutionException("feed 'x' has shape [2]"))).code());
        Result bug = run(new Failing(new ExecutionException("op #2 relu failed: null", new NullPointerException("x"))));
        assertEquals(ExitCodes.INTERNAL_ERROR, bug.code(), bug.err());
        assertEquals("prog: internal error: org.fleet4j.core.exec.ExecutionException: op #2 relu failed: null (a bug;"
                + " --log_level debug shows its stack trace)\n", bug.err());
    }
}
