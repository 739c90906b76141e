package org.fleet4j.launch;

import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.FileSystemException;
import java.util.concurrent.CompletionException;
import org.fleet4j.collective.CollectiveException;
import org.fleet4j.core.data.DataFormatException;
import org.fleet4j.core.device.DeviceUnavailableException;
import org.fleet4j.core.exec.ExecutionException;
import org.fleet4j.core.io.CheckpointException;
import org.fleet4j.core.ir.IrException;
import org.fleet4j.core.tensor.OffHeapMemoryException;
import org.fleet4j.pserver.compile.PsCompileException;
import org.fleet4j.pserver.transport.PsException;
import org.fleet4j.strategy.schema.StrategyException;

/**
 * What the exit code of fleetrun, and of every process it starts, means (docs/LAUNCHER.md, "Exit codes"), and which
 * code a program that failed with an exception exits with. Scripts and schedulers retry on {@link #PEER_FAILED}, fix
 * the command on {@link #BAD_INPUT}, and report {@link #INTERNAL_ERROR}.
 */
public final class ExitCodes {
    public static final int SUCCESS = 0;
    /** A bug, in Fleet4J or in the program: an exception nobody expected. */
    public static final int INTERNAL_ERROR = 1;
    /** Bad input or configuration: a flag, a file, a strategy, data, a token, ports, a folder. */
    public static final int BAD_INPUT = 2;
    /** Another process of the job died, stalled or could not be reached. */
    public static final int PEER_FAILED = 3;
    /** The launcher got SIGINT (Ctrl-C), and stopped the job: 128 + 2. */
    public static final int SIGINT = 130;
    /** The launcher got SIGTERM, and stopped the job: 128 + 15. */
    public static final int SIGTERM = 143;

    private ExitCodes() {
    }

    /**
     * The exit code for a program that ends with {@code failure}: what the innermost failure that wrappers (an op's
     * kernel, unchecked I/O, a future, a reflective call, a bare RuntimeException) carry says. An op whose collective
     * timed out is a failed peer, not a bad op; a bad flag that names the peer-side error it caused stays bad input.
     */
    public static int of(Throwable failure) {
        Throwable t = failure;
        while (isWrapper(t)) {
            t = t.getCause();
        }
        if (t instanceof CollectiveException || t instanceof PsException) {
            return PEER_FAILED;
        }
        return isBadInput(t) ? BAD_INPUT : INTERNAL_ERROR;
    }

    /** Words for a code of this table, for messages: "a peer died or stalled"; empty for other codes. */
    static String meaning(int code) {
        return switch (code) {
            case INTERNAL_ERROR -> "an internal error";
            case BAD_INPUT -> "bad input or configuration";
            case PEER_FAILED -> "a peer died or stalled";
            default -> "";
        };
    }

    /** Exceptions that only carry another one: an op's kernel that failed, I/O, a future, a reflective call. */
    private static boolean isWrapper(Throwable t) {
        return t.getCause() != null && t.getCause() != t && (t instanceof ExecutionException
                || t instanceof UncheckedIOException || t instanceof CompletionException
                || t instanceof java.util.concurrent.ExecutionException || t instanceof InvocationTargetException
                || t.getClass() == RuntimeException.class);
    }

    /** The user's input is wrong: a bad value, a path that does not work, data or a file that does not parse. */
    private static boolean isBadInput(Throwable t) {
        return t instanceof IllegalArgumentException || t instanceof FileSystemException || t instanceof ExecutionException
                || t instanceof DataFormatException || t instanceof CheckpointException
                || t instanceof OffHeapMemoryException || t instanceof IrException || t instanceof StrategyException
                || t instanceof DeviceUnavailableException || t instanceof PsCompileException;
    }
}
